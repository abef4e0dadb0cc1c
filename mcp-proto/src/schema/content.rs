//! Content: the blocks of tool results and prompt messages (text, image, audio, resource
//! link, embedded resource), the sampling-only tool-use and tool-result blocks, and the
//! contents of a resource (text or blob).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize, de};
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

    /// The text, if these are text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            _ => None,
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
///
/// Deserialising reads the block straight into its variant when `type` is its first key (as
/// every SDK writes it), with no intermediate buffer; otherwise the block is gathered first.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

const CONTENT_TYPES: &[&str] = &["text", "image", "audio", "resource_link", "resource"];

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ContentVisitor)
    }
}

struct ContentVisitor;

/// A map key: `type`, or another (kept for the slow path).
enum Key {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(if v == "type" {
                    Key::Type
                } else {
                    Key::Other(v.into())
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The `type` tag, read without allocating.
struct Tag(usize);

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Tag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content type")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag, E> {
                CONTENT_TYPES
                    .iter()
                    .position(|t| *t == v)
                    .map(Tag)
                    .ok_or_else(|| E::unknown_variant(v, CONTENT_TYPES))
            }
        }
        d.deserialize_str(V)
    }
}

fn content_variant<'de, D: serde::Deserializer<'de>>(tag: Tag, d: D) -> Result<Content, D::Error> {
    match tag.0 {
        0 => TextContent::deserialize(d).map(Content::Text),
        1 => ImageContent::deserialize(d).map(Content::Image),
        2 => AudioContent::deserialize(d).map(Content::Audio),
        3 => Resource::deserialize(d).map(Content::ResourceLink),
        _ => EmbeddedResource::deserialize(d).map(Content::Resource),
    }
}

impl<'de> de::Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let first = match map.next_key::<Key>()? {
            None => return Err(de::Error::missing_field("type")),
            Some(Key::Type) => {
                let tag: Tag = map.next_value()?;
                return content_variant(tag, de::value::MapAccessDeserializer::new(map));
            }
            Some(Key::Other(k)) => k,
        };
        // `type` comes later: gather the block, then read it as its variant.
        let mut block = serde_json::Map::new();
        block.insert(first, map.next_value::<Value>()?);
        let mut tag = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type if tag.is_none() => tag = Some(map.next_value::<Tag>()?),
                Key::Type => return Err(de::Error::duplicate_field("type")),
                Key::Other(k) => {
                    block.insert(k, map.next_value::<Value>()?);
                }
            }
        }
        let tag = tag.ok_or_else(|| de::Error::missing_field("type"))?;
        content_variant(tag, Value::Object(block)).map_err(de::Error::custom)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::meta::Role;
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn content_reads_with_type_anywhere() {
        let blocks = [
            r#"{"type":"text","text":"hi","annotations":{"priority":0.5}}"#,
            r#"{"text":"hi","annotations":{"priority":0.5},"type":"text"}"#,
            r#"{"annotations":{"priority":0.5},"type":"text","text":"hi","extra":[1]}"#,
            r#"{"\u0074ype":"text","te\u0078t":"hi","annotations":{"priority":0.5}}"#,
        ];
        for text in blocks {
            let c: Content = serde_json::from_str(text).unwrap();
            assert_eq!(c.as_text(), Some("hi"), "{text}");
            assert!(c.annotations().is_some(), "{text}");
            // Through a `Value` (keys in its own order) and back.
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::from_value::<Content>(v).unwrap(), c);
            let again: Content = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!(again, c);
        }
        let every = [
            json!({"type":"image","data":"AA==","mimeType":"image/png"}),
            json!({"mimeType":"audio/wav","type":"audio","data":"AA=="}),
            json!({"type":"resource_link","uri":"a://b","name":"b"}),
            json!({"resource":{"uri":"a://b","text":"t"},"type":"resource"}),
        ];
        for v in every {
            let c: Content = serde_json::from_str(&v.to_string()).unwrap();
            assert_eq!(serde_json::to_value(&c).unwrap(), v);
        }
        for bad in [
            r#"{"text":"hi"}"#,
            r#"{}"#,
            r#"{"type":"video","text":"hi"}"#,
            r#"{"text":"hi","type":"video"}"#,
            r#"{"text":"hi","type":"text","type":"text"}"#,
            r#"{"type":7}"#,
            r#"{"type":"text"}"#,
            r#"["text","hi"]"#,
            r#""text""#,
        ] {
            assert!(serde_json::from_str::<Content>(bad).is_err(), "{bad}");
        }
        let e = serde_json::from_str::<Content>(r#"{"type":"video"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `video`"), "{e}");
    }

    #[test]
    fn text_block_constructor_and_accessors() {
        let c = Content::text("hello");
        assert_eq!(c.as_text(), Some("hello"));
        assert_eq!(c.annotations(), None);
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"type": "text", "text": "hello"})
        );
    }

    #[test]
    fn media_block_constructors() {
        let img = Content::image("iVBORw0KGgo=", "image/png");
        assert_eq!(img.as_text(), None);
        assert_eq!(
            serde_json::to_value(&img).unwrap(),
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        );
        let audio = Content::audio("UklGRg==", "audio/wav");
        assert_eq!(audio.as_text(), None);
        assert_eq!(
            serde_json::to_value(&audio).unwrap(),
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
        );
    }

    #[test]
    fn resource_link_and_embedded_blocks() {
        let link = Content::resource_link(Resource::new("file:///a.txt", "a.txt"));
        assert_eq!(
            serde_json::to_value(&link).unwrap(),
            json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"})
        );
        let emb = Content::embedded(ResourceContents::text("file:///a.txt", "body"));
        assert_eq!(
            serde_json::to_value(&emb).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}})
        );
        let emb = Content::embedded(ResourceContents::blob("file:///a.bin", "AAE="));
        assert_eq!(
            serde_json::to_value(&emb).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAE="}})
        );
    }

    #[test]
    fn annotations_accessor_covers_every_variant() {
        let ann = Annotations {
            audience: Some(vec![Role::User]),
            priority: Some(1.0),
            last_modified: None,
        };
        let blocks = [
            Content::Text(TextContent {
                text: "t".into(),
                annotations: Some(ann.clone()),
                meta: None,
            }),
            Content::Image(ImageContent {
                annotations: Some(ann.clone()),
                ..ImageContent::default()
            }),
            Content::Audio(AudioContent {
                annotations: Some(ann.clone()),
                ..AudioContent::default()
            }),
            Content::ResourceLink(Resource {
                annotations: Some(ann.clone()),
                ..Resource::new("u", "n")
            }),
            Content::Resource(EmbeddedResource {
                resource: ResourceContents::text("u", "t"),
                annotations: Some(ann.clone()),
                meta: None,
            }),
        ];
        for b in &blocks {
            assert_eq!(b.annotations(), Some(&ann), "{b:?}");
        }
    }

    #[test]
    fn content_round_trips_with_meta_and_annotations() {
        for wire in [
            json!({
                "type": "text",
                "text": "hi",
                "annotations": {"audience": ["assistant"], "priority": 0.2},
                "_meta": {"k": "v"}
            }),
            json!({"type": "image", "data": "AA==", "mimeType": "image/jpeg", "_meta": {}}),
            json!({"type": "audio", "data": "AA==", "mimeType": "audio/mpeg"}),
            json!({
                "type": "resource_link",
                "uri": "https://x/y",
                "name": "y",
                "mimeType": "text/html",
                "size": 12
            }),
            json!({
                "type": "resource",
                "resource": {"uri": "mem://1", "mimeType": "text/plain", "text": "x", "_meta": {"a": 1}},
                "annotations": {"lastModified": "2025-06-18T00:00:00Z"}
            }),
        ] {
            let c: Content = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(serde_json::to_value(&c).unwrap(), wire);
        }
    }

    #[test]
    fn malformed_content_is_rejected() {
        for bad in [
            json!({"text": "no type"}),
            json!({"type": "video", "data": "AA=="}),
            json!({"type": "Text", "text": "x"}),
            json!({"type": "text"}),
            json!({"type": "image", "data": "AA=="}),
            json!({"type": "resource_link", "uri": "u"}),
            json!({"type": "resource", "resource": {"uri": "u"}}),
            // Sampling-only blocks are not content blocks.
            json!({"type": "tool_use", "id": "1", "name": "t", "input": {}}),
        ] {
            assert!(
                serde_json::from_value::<Content>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn from_impls_pick_the_variant() {
        assert!(matches!(
            Content::from(TextContent::default()),
            Content::Text(_)
        ));
        assert!(matches!(
            Content::from(ImageContent::default()),
            Content::Image(_)
        ));
        assert!(matches!(
            Content::from(AudioContent::default()),
            Content::Audio(_)
        ));
        assert!(matches!(
            Content::from(EmbeddedResource {
                resource: ResourceContents::blob("u", ""),
                annotations: None,
                meta: None,
            }),
            Content::Resource(_)
        ));
    }

    #[test]
    fn resource_contents_constructors_and_accessors() {
        let t = ResourceContents::text("file:///t", "text");
        assert_eq!(t.uri(), "file:///t");
        assert_eq!(t.mime_type(), None);
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"uri": "file:///t", "text": "text"})
        );
        let b = ResourceContents::blob("file:///b", "AQID");
        assert_eq!(b.uri(), "file:///b");
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            json!({"uri": "file:///b", "blob": "AQID"})
        );
        let typed = ResourceContents::Blob(BlobResourceContents {
            mime_type: Some("image/png".into()),
            ..BlobResourceContents::default()
        });
        assert_eq!(typed.mime_type(), Some("image/png"));
    }

    #[test]
    fn resource_contents_told_apart_by_text_or_blob() {
        let t: ResourceContents =
            serde_json::from_value(json!({"uri": "u", "mimeType": "text/plain", "text": ""}))
                .unwrap();
        assert!(matches!(&t, ResourceContents::Text(x) if x.text.is_empty()));
        assert_eq!(t.mime_type(), Some("text/plain"));

        let b: ResourceContents =
            serde_json::from_value(json!({"uri": "u", "blob": "AA=="})).unwrap();
        assert!(matches!(&b, ResourceContents::Blob(x) if x.blob == "AA=="));

        assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u"})).is_err());
        assert!(serde_json::from_value::<ResourceContents>(json!({"text": "no uri"})).is_err());
        assert!(
            serde_json::from_value::<ResourceContents>(json!({"uri": "u", "blob": 1})).is_err()
        );
    }

    #[test]
    fn sampling_content_text_and_accessor() {
        let s = SamplingContent::text("hi");
        assert_eq!(s.as_text(), Some("hi"));
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        assert!(matches!(
            SamplingContent::from(TextContent::default()),
            SamplingContent::Text(_)
        ));
    }

    #[test]
    fn sampling_tool_use_and_tool_result_blocks() {
        let mut input = JsonObject::new();
        input.insert("city".into(), json!("Paris"));
        let use_block = SamplingContent::from(ToolUseContent {
            id: "call-1".into(),
            name: "weather".into(),
            input,
            meta: None,
        });
        assert_eq!(use_block.as_text(), None);
        assert_eq!(
            serde_json::to_value(&use_block).unwrap(),
            json!({"type": "tool_use", "id": "call-1", "name": "weather", "input": {"city": "Paris"}})
        );

        let result_block = SamplingContent::from(ToolResultContent {
            tool_use_id: "call-1".into(),
            content: vec![Content::text("sunny")],
            structured_content: Some(json!({"temp": 21})),
            is_error: Some(false),
            meta: None,
        });
        let wire = json!({
            "type": "tool_result",
            "toolUseId": "call-1",
            "content": [{"type": "text", "text": "sunny"}],
            "structuredContent": {"temp": 21},
            "isError": false
        });
        assert_eq!(serde_json::to_value(&result_block).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<SamplingContent>(wire).unwrap(),
            result_block
        );

        let minimal: SamplingContent =
            serde_json::from_value(json!({"type": "tool_result", "toolUseId": "x", "content": []}))
                .unwrap();
        assert!(matches!(
            minimal,
            SamplingContent::ToolResult(ToolResultContent {
                structured_content: None,
                is_error: None,
                ..
            })
        ));
    }

    #[test]
    fn malformed_sampling_content_is_rejected() {
        for bad in [
            json!({"type": "resource_link", "uri": "u", "name": "n"}),
            json!({"type": "resource", "resource": {"uri": "u", "text": "t"}}),
            json!({"type": "tool_use", "id": "1", "name": "t"}),
            json!({"type": "tool_use", "id": "1", "name": "t", "input": []}),
            json!({"type": "tool_result", "content": []}),
        ] {
            assert!(
                serde_json::from_value::<SamplingContent>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
