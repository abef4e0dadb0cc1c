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
