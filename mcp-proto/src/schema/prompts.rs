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

/// Params of `notifications/prompts/list_changed`.
pub type PromptListChangedNotificationParams = super::meta::NotificationParams;
