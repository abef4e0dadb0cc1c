//! Sampling: `sampling/createMessage` (server to client; an input request in 2026-07-28),
//! its messages, model preferences and, from 2025-11-25, tools and tool choice.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::content::SamplingContent;
use super::meta::{JsonObject, Meta, Role};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// The content of a sampling message: one block, or (2025-11-25+) several.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingMessageContent {
    /// A single block (the only form before 2025-11-25).
    Single(SamplingContent),
    /// Several blocks (2025-11-25+).
    Multiple(Vec<SamplingContent>),
}

impl SamplingMessageContent {
    /// The blocks, whichever form they came in.
    pub fn blocks(&self) -> &[SamplingContent] {
        match self {
            SamplingMessageContent::Single(b) => core::slice::from_ref(b),
            SamplingMessageContent::Multiple(v) => v,
        }
    }

    /// Converts into a list of blocks.
    pub fn into_blocks(self) -> Vec<SamplingContent> {
        match self {
            SamplingMessageContent::Single(b) => vec![b],
            SamplingMessageContent::Multiple(v) => v,
        }
    }
}

impl From<SamplingContent> for SamplingMessageContent {
    fn from(b: SamplingContent) -> Self {
        SamplingMessageContent::Single(b)
    }
}

impl From<Vec<SamplingContent>> for SamplingMessageContent {
    fn from(v: Vec<SamplingContent>) -> Self {
        SamplingMessageContent::Multiple(v)
    }
}

/// A message to or from an LLM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// Metadata (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: SamplingContent::text(text).into(),
            meta: None,
        }
    }

    /// An assistant message of one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: SamplingContent::text(text).into(),
            meta: None,
        }
    }
}

/// A hint for model selection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A (sub)string of a model name, e.g. `"sonnet"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's model preferences (advisory).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Hints, evaluated in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// Weight of cost, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// Weight of speed, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// Weight of intelligence, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which MCP servers' context to include (`thisServer`/`allServers` soft-deprecated since
/// 2025-11-25).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// No context (the default).
    #[default]
    None,
    /// Context of the requesting server.
    ThisServer,
    /// Context of all connected servers.
    AllServers,
}

/// How the model may use tools (2025-11-25+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Tool selection for sampling (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode (default `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// Params of `sampling/createMessage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may modify or omit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (2025-11-25+; needs client `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Asks for task-augmented execution (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (not in 2026-07-28 input requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Shorter name for [`CreateMessageRequestParams`].
pub type CreateMessageParams = CreateMessageRequestParams;

impl CreateMessageRequestParams {
    /// Samples at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            ..CreateMessageRequestParams::default()
        }
    }
}

/// Why sampling stopped. Open-ended: provider-specific reasons land in
/// [`StopReason::Other`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `endTurn`.
    EndTurn,
    /// `stopSequence`.
    StopSequence,
    /// `maxTokens`.
    MaxTokens,
    /// `toolUse` (2025-11-25+).
    ToolUse,
    /// Any other value.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "endTurn",
            StopReason::StopSequence => "stopSequence",
            StopReason::MaxTokens => "maxTokens",
            StopReason::ToolUse => "toolUse",
            StopReason::Other(s) => s,
        }
    }

    /// Parses a wire string.
    pub fn parse(s: &str) -> Self {
        match s {
            "endTurn" => StopReason::EndTurn,
            "stopSequence" => StopReason::StopSequence,
            "maxTokens" => StopReason::MaxTokens,
            "toolUse" => StopReason::ToolUse,
            other => StopReason::Other(other.into()),
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <alloc::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(StopReason::parse(&s))
    }
}

/// Result of `sampling/createMessage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who says it (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingMessageContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateMessageResult {
    /// An assistant text answer from `model` that ended its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::text(text).into(),
            model: model.into(),
            stop_reason: Some(StopReason::EndTurn),
            meta: None,
        }
    }
}
