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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::content::{TextContent, ToolUseContent};
    use alloc::string::ToString;
    use serde_json::json;

    #[test]
    fn message_content_single_or_multiple() {
        let single: SamplingMessageContent =
            serde_json::from_value(json!({"type": "text", "text": "a"})).unwrap();
        assert!(matches!(single, SamplingMessageContent::Single(_)));
        assert_eq!(single.blocks().len(), 1);
        assert_eq!(single.blocks()[0].as_text(), Some("a"));

        let multi: SamplingMessageContent = serde_json::from_value(json!([
            {"type": "text", "text": "a"},
            {"type": "tool_use", "id": "1", "name": "t", "input": {}}
        ]))
        .unwrap();
        assert!(matches!(multi, SamplingMessageContent::Multiple(_)));
        assert_eq!(multi.blocks().len(), 2);
        let blocks = multi.clone().into_blocks();
        assert!(matches!(blocks[1], SamplingContent::ToolUse(_)));
        assert_eq!(
            single.clone().into_blocks(),
            vec![SamplingContent::text("a")]
        );

        let empty: SamplingMessageContent = serde_json::from_value(json!([])).unwrap();
        assert_eq!(empty, SamplingMessageContent::Multiple(Vec::new()));
        assert!(empty.blocks().is_empty());
    }

    #[test]
    fn message_content_serialises_in_its_own_form() {
        let single = SamplingMessageContent::from(SamplingContent::text("x"));
        assert_eq!(
            serde_json::to_value(&single).unwrap(),
            json!({"type": "text", "text": "x"})
        );
        let multi = SamplingMessageContent::from(vec![SamplingContent::text("x")]);
        assert_eq!(
            serde_json::to_value(&multi).unwrap(),
            json!([{"type": "text", "text": "x"}])
        );
        assert!(serde_json::from_value::<SamplingMessageContent>(json!("x")).is_err());
        assert!(
            serde_json::from_value::<SamplingMessageContent>(json!({"type": "video"})).is_err()
        );
        assert!(
            serde_json::from_value::<SamplingMessageContent>(json!([{"type": "video"}])).is_err()
        );
    }

    #[test]
    fn sampling_message_constructors_and_meta() {
        let u = SamplingMessage::user("q");
        assert_eq!(u.role, Role::User);
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"role": "user", "content": {"type": "text", "text": "q"}})
        );
        let a = SamplingMessage::assistant("r");
        assert_eq!(a.role, Role::Assistant);
        assert_eq!(a.content.blocks()[0].as_text(), Some("r"));

        let wire = json!({
            "role": "assistant",
            "content": [{"type": "text", "text": "r"}],
            "_meta": {"k": 1}
        });
        let m: SamplingMessage = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&m).unwrap(), wire);
        assert!(serde_json::from_value::<SamplingMessage>(json!({"role": "user"})).is_err());
    }

    #[test]
    fn model_preferences_names() {
        assert_eq!(
            serde_json::to_value(ModelPreferences::default()).unwrap(),
            json!({})
        );
        let wire = json!({
            "hints": [{"name": "claude-3-sonnet"}, {}],
            "costPriority": 0.3,
            "speedPriority": 0.8,
            "intelligencePriority": 0.5
        });
        let p: ModelPreferences = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.hints.as_ref().unwrap()[1], ModelHint::default());
        assert_eq!(p.speed_priority, Some(0.8));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn include_context_and_tool_choice_names() {
        assert_eq!(IncludeContext::default(), IncludeContext::None);
        for (c, s) in [
            (IncludeContext::None, "none"),
            (IncludeContext::ThisServer, "thisServer"),
            (IncludeContext::AllServers, "allServers"),
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), json!(s));
            assert_eq!(
                serde_json::from_value::<IncludeContext>(json!(s)).unwrap(),
                c
            );
        }
        assert!(serde_json::from_value::<IncludeContext>(json!("this_server")).is_err());

        assert_eq!(ToolChoiceMode::default(), ToolChoiceMode::Auto);
        for (m, s) in [
            (ToolChoiceMode::Auto, "auto"),
            (ToolChoiceMode::Required, "required"),
            (ToolChoiceMode::None, "none"),
        ] {
            assert_eq!(serde_json::to_value(m).unwrap(), json!(s));
            assert_eq!(
                serde_json::from_value::<ToolChoiceMode>(json!(s)).unwrap(),
                m
            );
        }
        assert_eq!(
            serde_json::to_value(ToolChoice::default()).unwrap(),
            json!({})
        );
        assert!(serde_json::from_value::<ToolChoice>(json!({"mode": "any"})).is_err());
    }

    #[test]
    fn create_message_params_new_and_names() {
        let p = CreateMessageRequestParams::new(vec![SamplingMessage::user("hi")], 100);
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 100
            })
        );

        let wire = json!({
            "messages": [],
            "modelPreferences": {"hints": [{"name": "sonnet"}]},
            "systemPrompt": "be brief",
            "includeContext": "thisServer",
            "temperature": 0.7,
            "maxTokens": 5,
            "stopSequences": ["\n\n"],
            "metadata": {"provider": "x"},
            "tools": [{"name": "calc", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"},
            "task": {"ttl": 1000},
            "_meta": {"progressToken": 3}
        });
        let p: CreateMessageRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
        assert_eq!(p.tools.as_ref().unwrap()[0].name, "calc");
        assert_eq!(p.task.as_ref().unwrap().ttl, Some(1000));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);

        assert!(
            serde_json::from_value::<CreateMessageRequestParams>(json!({"messages": []})).is_err()
        );
        assert!(
            serde_json::from_value::<CreateMessageRequestParams>(
                json!({"messages": [], "maxTokens": -1})
            )
            .is_err()
        );
    }

    #[test]
    fn stop_reason_known_and_unknown() {
        for (r, s) in [
            (StopReason::EndTurn, "endTurn"),
            (StopReason::StopSequence, "stopSequence"),
            (StopReason::MaxTokens, "maxTokens"),
            (StopReason::ToolUse, "toolUse"),
        ] {
            assert_eq!(r.as_str(), s);
            assert_eq!(r.to_string(), s);
            assert_eq!(StopReason::parse(s), r);
            assert_eq!(serde_json::to_value(&r).unwrap(), json!(s));
            assert_eq!(serde_json::from_value::<StopReason>(json!(s)).unwrap(), r);
        }
        let other: StopReason = serde_json::from_value(json!("content_filter")).unwrap();
        assert_eq!(other, StopReason::Other("content_filter".into()));
        assert_eq!(
            serde_json::to_value(&other).unwrap(),
            json!("content_filter")
        );
        assert_eq!(
            StopReason::parse("end_turn"),
            StopReason::Other("end_turn".into())
        );
        assert!(serde_json::from_value::<StopReason>(json!(null)).is_err());
        assert!(serde_json::from_value::<StopReason>(json!(1)).is_err());
    }

    #[test]
    fn create_message_result_text() {
        let r = CreateMessageResult::text("claude", "Paris");
        assert_eq!(r.role, Role::Assistant);
        assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": "Paris"},
                "model": "claude",
                "stopReason": "endTurn"
            })
        );
    }

    #[test]
    fn create_message_result_with_tool_use_round_trip() {
        let wire = json!({
            "role": "assistant",
            "content": [
                {"type": "text", "text": "let me check"},
                {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}}
            ],
            "model": "m",
            "stopReason": "toolUse",
            "_meta": {"k": "v"}
        });
        let r: CreateMessageResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        let blocks = r.content.blocks();
        assert_eq!(
            blocks[0],
            SamplingContent::Text(TextContent {
                text: "let me check".to_string(),
                ..TextContent::default()
            })
        );
        assert!(
            matches!(&blocks[1], SamplingContent::ToolUse(ToolUseContent { name, .. }) if name == "weather")
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);

        let no_reason: CreateMessageResult = serde_json::from_value(
            json!({"role": "assistant", "content": {"type": "text", "text": ""}, "model": "m"}),
        )
        .unwrap();
        assert_eq!(no_reason.stop_reason, None);
        assert!(
            serde_json::from_value::<CreateMessageResult>(
                json!({"role": "assistant", "content": {"type": "text", "text": ""}})
            )
            .is_err()
        );
    }
}
