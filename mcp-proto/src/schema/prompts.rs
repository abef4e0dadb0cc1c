//! Prompts: definitions and arguments, `prompts/list`, `prompts/get` (which may answer
//! `input_required` in 2026-07-28) and `notifications/prompts/list_changed`.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::content::Content;
use super::meta::{CacheScope, Cursor, Icon, Meta, ResultType, Role};
use super::tools::InputResponses;

/// An argument a prompt template accepts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// An argument named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            ..PromptArgument::default()
        }
    }
    /// Sets its `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets its `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Marks it required: `prompts/get` without it is refused before the handler runs.
    pub fn required(mut self) -> Self {
        self.required = Some(true);
        self
    }
}

/// A prompt or prompt template the server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Template arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Prompt {
    /// A prompt named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            ..Prompt::default()
        }
    }
    /// Sets its `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets its `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Adds an argument.
    ///
    /// ```
    /// use mcp_proto::schema::{Prompt, PromptArgument};
    /// let p = Prompt::new("summarize")
    ///     .with_description("Summarizes a note")
    ///     .with_argument(PromptArgument::new("id").with_description("The note's id").required());
    /// assert_eq!(p.arguments.unwrap()[0].required, Some(true));
    /// ```
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }
}

/// Result of `prompts/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// This page of prompts.
    pub prompts: Vec<Prompt>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Cache lifetime in milliseconds (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `prompts/get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// The prompt's name.
    pub name: String,
    /// Template arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Answers to the server's input requests (2026-07-28 retry after `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The opaque state from the `input_required` result, echoed verbatim (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl GetPromptRequestParams {
    /// Gets the prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GetPromptRequestParams {
            name: name.into(),
            ..GetPromptRequestParams::default()
        }
    }

    /// Adds an argument.
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
    }
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: Content::text(text),
        }
    }

    /// An assistant message of one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: Content::text(text),
        }
    }
}

/// Result of `prompts/get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// What the prompt is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl GetPromptResult {
    /// A result of these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            description: None,
            messages,
            result_type: None,
            meta: None,
        }
    }

    /// Sets its `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Params of `notifications/prompts/list_changed`.
pub type PromptListChangedNotificationParams = super::meta::NotificationParams;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::elicitation::ElicitResult;
    use crate::schema::tools::InputResponse;
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn prompt_and_argument_constructors_omit_none() {
        assert_eq!(
            serde_json::to_value(Prompt::new("review")).unwrap(),
            json!({"name": "review"})
        );
        assert_eq!(
            serde_json::to_value(PromptArgument::new("code")).unwrap(),
            json!({"name": "code"})
        );
    }

    #[test]
    fn prompt_full_round_trip() {
        let wire = json!({
            "name": "code_review",
            "title": "Request Code Review",
            "description": "Asks the LLM to review code",
            "arguments": [
                {"name": "code", "title": "Code", "description": "The code", "required": true},
                {"name": "style"}
            ],
            "icons": [{"src": "https://x/i.svg", "mimeType": "image/svg+xml"}],
            "_meta": {"k": 1}
        });
        let p: Prompt = serde_json::from_value(wire.clone()).unwrap();
        let args = p.arguments.as_ref().unwrap();
        assert_eq!(args[0].required, Some(true));
        assert_eq!(args[1], PromptArgument::new("style"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(serde_json::from_value::<Prompt>(json!({"title": "no name"})).is_err());
        assert!(
            serde_json::from_value::<PromptArgument>(json!({"name": "a", "required": "yes"}))
                .is_err()
        );
    }

    #[test]
    fn list_prompts_result_names() {
        assert_eq!(
            serde_json::to_value(ListPromptsResult::default()).unwrap(),
            json!({"prompts": []})
        );
        let wire = json!({
            "prompts": [{"name": "a"}],
            "nextCursor": "n1",
            "ttlMs": 60000,
            "cacheScope": "private",
            "resultType": "complete",
            "_meta": {"m": 0}
        });
        let r: ListPromptsResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.next_cursor.as_deref(), Some("n1"));
        assert_eq!(r.ttl_ms, Some(60000));
        assert_eq!(r.cache_scope, Some(CacheScope::Private));
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(serde_json::from_value::<ListPromptsResult>(json!({"nextCursor": "x"})).is_err());
    }

    #[test]
    fn get_prompt_params_with_argument() {
        let p = GetPromptRequestParams::new("greet");
        assert_eq!(p.arguments, None);
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"name": "greet"}));

        let p = GetPromptRequestParams::new("greet")
            .with_argument("name", "Ada")
            .with_argument("lang", "en")
            .with_argument("name", "Grace");
        let args = p.arguments.as_ref().unwrap();
        assert_eq!(args.len(), 2);
        assert_eq!(args["name"], "Grace");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "greet", "arguments": {"lang": "en", "name": "Grace"}})
        );
        assert!(
            serde_json::from_value::<GetPromptRequestParams>(
                json!({"name": "g", "arguments": {"n": 1}})
            )
            .is_err()
        );
    }

    #[test]
    fn get_prompt_params_retry_fields() {
        let wire = json!({
            "name": "greet",
            "inputResponses": {"confirm": {"action": "decline"}},
            "requestState": "opaque-state",
            "_meta": {"progressToken": 2}
        });
        let p: GetPromptRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            p.input_responses.as_ref().unwrap()["confirm"],
            InputResponse::Elicit(ElicitResult::decline())
        );
        assert_eq!(p.request_state.as_deref(), Some("opaque-state"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn prompt_message_constructors() {
        let u = PromptMessage::user("hi");
        assert_eq!(u.role, Role::User);
        assert_eq!(u.content.as_text(), Some("hi"));
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"role": "user", "content": {"type": "text", "text": "hi"}})
        );
        let a = PromptMessage::assistant("hello");
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "hello"}})
        );
        assert!(
            serde_json::from_value::<PromptMessage>(
                json!({"role": "system", "content": {"type": "text", "text": "x"}})
            )
            .is_err()
        );
        // One block, not an array.
        assert!(
            serde_json::from_value::<PromptMessage>(
                json!({"role": "user", "content": [{"type": "text", "text": "x"}]})
            )
            .is_err()
        );
    }

    #[test]
    fn get_prompt_result_round_trip() {
        let r = GetPromptResult {
            description: Some("Greeting".into()),
            messages: vec![
                PromptMessage::user("hi"),
                PromptMessage {
                    role: Role::Assistant,
                    content: Content::image("AA==", "image/png"),
                },
            ],
            result_type: Some(ResultType::Complete),
            meta: None,
        };
        let wire = json!({
            "description": "Greeting",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}
            ],
            "resultType": "complete"
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(serde_json::from_value::<GetPromptResult>(wire).unwrap(), r);
        assert_eq!(
            serde_json::to_value(GetPromptResult::default()).unwrap(),
            json!({"messages": []})
        );
    }
}
