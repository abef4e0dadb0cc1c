//! Completion: `completion/complete` for prompt arguments and resource template variables.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::meta::{Meta, ResultType};

/// Identifies a prompt (`type: "ref/prompt"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Identifies a resource or resource template (`type: "ref/resource"`;
/// `ResourceReference` in 2024-11-05 and 2025-03-26).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// The 2024-11-05 / 2025-03-26 name of [`ResourceTemplateReference`].
pub type ResourceReference = ResourceTemplateReference;

/// What is being completed, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `"ref/prompt"`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"ref/resource"`.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

impl Reference {
    /// A reference to the prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Reference::Prompt(PromptReference {
            name: name.into(),
            title: None,
        })
    }

    /// A reference to the resource (template) `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Reference::Resource(ResourceTemplateReference { uri: uri.into() })
    }
}

/// The argument being completed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// The partial value to complete.
    pub value: String,
}

/// Extra context for a completion (2025-06-18+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Already-resolved arguments (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CompleteRequestParams {
    /// Completes `argument` = `value` of `reference`.
    pub fn new(
        reference: Reference,
        argument: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams {
            reference,
            argument: CompletionArgument {
                name: argument.into(),
                value: value.into(),
            },
            context: None,
            meta: None,
        }
    }
}

/// The completion values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many values exist in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist beyond these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// Result of `completion/complete`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CompleteResult {
    /// The maximum number of values in one result.
    pub const MAX_VALUES: usize = 100;

    /// A result with `values` (truncated to 100, with `hasMore` set if that happened).
    pub fn new(mut values: Vec<String>) -> Self {
        let total = values.len();
        let more = total > Self::MAX_VALUES;
        values.truncate(Self::MAX_VALUES);
        CompleteResult {
            completion: Completion {
                values,
                total: if more {
                    u64::try_from(total).ok()
                } else {
                    None
                },
                has_more: if more { Some(true) } else { None },
            },
            result_type: None,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn reference_tags() {
        assert_eq!(
            serde_json::to_value(Reference::prompt("code_review")).unwrap(),
            json!({"type": "ref/prompt", "name": "code_review"})
        );
        assert_eq!(
            serde_json::to_value(Reference::resource("file:///{path}")).unwrap(),
            json!({"type": "ref/resource", "uri": "file:///{path}"})
        );

        let r: Reference =
            serde_json::from_value(json!({"type": "ref/prompt", "name": "p", "title": "P"}))
                .unwrap();
        assert_eq!(
            r,
            Reference::Prompt(PromptReference {
                name: "p".into(),
                title: Some("P".into()),
            })
        );
        let r: Reference =
            serde_json::from_value(json!({"type": "ref/resource", "uri": "db://{t}"})).unwrap();
        assert_eq!(r, Reference::resource("db://{t}"));
    }

    #[test]
    fn malformed_references_are_rejected() {
        for bad in [
            json!({"type": "ref/tool", "name": "x"}),
            json!({"name": "x"}),
            json!({"type": "ref/prompt"}),
            json!({"type": "ref/resource", "name": "x"}),
            json!({"type": "prompt", "name": "x"}),
        ] {
            assert!(
                serde_json::from_value::<Reference>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn complete_request_params_new_and_ref_key() {
        let p = CompleteRequestParams::new(Reference::prompt("greet"), "language", "py");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "language", "value": "py"}
            })
        );
    }

    #[test]
    fn complete_request_params_context_and_meta_round_trip() {
        let wire = json!({
            "ref": {"type": "ref/resource", "uri": "github://{owner}/{repo}"},
            "argument": {"name": "repo", "value": "mc"},
            "context": {"arguments": {"owner": "modelcontextprotocol"}},
            "_meta": {"progressToken": "p"}
        });
        let p: CompleteRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.reference, Reference::resource("github://{owner}/{repo}"));
        assert_eq!(
            p.context.as_ref().unwrap().arguments.as_ref().unwrap()["owner"],
            "modelcontextprotocol"
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);

        let empty_ctx = CompleteRequestParams {
            context: Some(CompletionContext::default()),
            ..CompleteRequestParams::new(Reference::prompt("p"), "a", "")
        };
        assert_eq!(
            serde_json::to_value(&empty_ctx).unwrap()["context"],
            json!({})
        );

        assert!(
            serde_json::from_value::<CompleteRequestParams>(
                json!({"argument": {"name": "a", "value": "b"}})
            )
            .is_err()
        );
        assert!(
            serde_json::from_value::<CompleteRequestParams>(
                json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a"}})
            )
            .is_err()
        );
    }

    #[test]
    fn complete_result_new_small() {
        let r = CompleteResult::new(vec!["python".into(), "pytorch".into()]);
        assert_eq!(r.completion.total, None);
        assert_eq!(r.completion.has_more, None);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"completion": {"values": ["python", "pytorch"]}})
        );
    }

    #[test]
    fn complete_result_new_truncates_to_max_values() {
        let exact: Vec<String> = (0..CompleteResult::MAX_VALUES)
            .map(|i| format!("v{i}"))
            .collect();
        let r = CompleteResult::new(exact.clone());
        assert_eq!(r.completion.values, exact);
        assert_eq!(r.completion.total, None);
        assert_eq!(r.completion.has_more, None);

        let many: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
        let r = CompleteResult::new(many.clone());
        assert_eq!(r.completion.values.len(), CompleteResult::MAX_VALUES);
        assert_eq!(r.completion.values[..], many[..CompleteResult::MAX_VALUES]);
        assert_eq!(r.completion.total, Some(250));
        assert_eq!(r.completion.has_more, Some(true));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["completion"]["total"], json!(250));
        assert_eq!(v["completion"]["hasMore"], json!(true));
    }

    #[test]
    fn complete_result_round_trip() {
        let wire = json!({
            "completion": {"values": ["a"], "total": 10, "hasMore": true},
            "resultType": "complete",
            "_meta": {"x": 1}
        });
        let r: CompleteResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(r.completion.total, Some(10));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(serde_json::from_value::<CompleteResult>(json!({"completion": {}})).is_err());
        assert!(serde_json::from_value::<CompleteResult>(json!({})).is_err());
    }
}
