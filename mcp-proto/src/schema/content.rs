//! Content: the blocks of tool results and prompt messages (text, image, audio, resource
//! link, embedded resource), the sampling-only tool-use and tool-result blocks, and the
//! contents of a resource (text or blob).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::{Annotations, JsonObject, Meta};
use super::resources::Resource;

/// Text for or from a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// An image for or from a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Audio for or from a model (2025-03-26+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The contents of a resource that is text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The contents of a resource that is binary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded data.
    pub blob: String,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The contents of a resource: text or blob (told apart by the `text` / `blob` field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents of `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            text: text.into(),
            ..TextResourceContents::default()
        })
    }

    /// Binary contents of `uri` (`blob` is base64).
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            blob: blob.into(),
            ..BlobResourceContents::default()
        })
    }

    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

/// A resource's contents embedded in a prompt or tool result (`type: "resource"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A content block (`ContentBlock`) of a tool result or prompt message, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Content {
    /// `"text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"` (2025-03-26+).
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"resource_link"`: a link to a resource (2025-06-18+).
    #[serde(rename = "resource_link")]
    ResourceLink(Resource),
    /// `"resource"`: an embedded resource.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

/// The schema's name for [`Content`].
pub type ContentBlock = Content;

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// An image block (`data` is base64).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..ImageContent::default()
        })
    }

    /// An audio block (`data` is base64).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio(AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..AudioContent::default()
        })
    }

    /// A resource link block.
    pub fn resource_link(resource: Resource) -> Self {
        Content::ResourceLink(resource)
    }

    /// An embedded resource block.
    pub fn embedded(resource: ResourceContents) -> Self {
        Content::Resource(EmbeddedResource {
            resource,
            annotations: None,
            meta: None,
        })
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The annotations, if any.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            Content::Text(c) => c.annotations.as_ref(),
            Content::Image(c) => c.annotations.as_ref(),
            Content::Audio(c) => c.annotations.as_ref(),
            Content::ResourceLink(c) => c.annotations.as_ref(),
            Content::Resource(c) => c.annotations.as_ref(),
        }
    }
}

impl From<TextContent> for Content {
    fn from(c: TextContent) -> Self {
        Content::Text(c)
    }
}

impl From<ImageContent> for Content {
    fn from(c: ImageContent) -> Self {
        Content::Image(c)
    }
}

impl From<AudioContent> for Content {
    fn from(c: AudioContent) -> Self {
        Content::Audio(c)
    }
}

impl From<EmbeddedResource> for Content {
    fn from(c: EmbeddedResource) -> Self {
        Content::Resource(c)
    }
}

/// A model's request to call a tool, in sampling (2025-11-25+, `type: "tool_use"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Id matching the later tool result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata (clients should preserve it in later requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, in sampling (2025-11-25+, `type: "tool_result"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The id of the [`ToolUseContent`] answered.
    pub tool_use_id: String,
    /// Unstructured result, as in a tool call result.
    pub content: Vec<Content>,
    /// Structured result (an object in 2025-11-25; any JSON value in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata (clients should preserve it in later requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A content block of a sampling message (`SamplingMessageContentBlock`), tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContent {
    /// `"text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"` (2025-03-26+).
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"tool_use"` (2025-11-25+).
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `"tool_result"` (2025-11-25+).
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContent::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for SamplingContent {
    fn from(c: TextContent) -> Self {
        SamplingContent::Text(c)
    }
}

impl From<ToolUseContent> for SamplingContent {
    fn from(c: ToolUseContent) -> Self {
        SamplingContent::ToolUse(c)
    }
}

impl From<ToolResultContent> for SamplingContent {
    fn from(c: ToolResultContent) -> Self {
        SamplingContent::ToolResult(c)
    }
}
