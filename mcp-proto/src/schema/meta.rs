//! Common pieces shared by every area: `_meta`, cursors and pagination, icons, annotations,
//! roles, result types, cache hints and the reserved `_meta` keys.
//!
//! `_meta` is kept as an open JSON object ([`Meta`]) everywhere the schema allows it, so
//! unknown keys survive a round trip. The keys MCP itself defines are listed as constants
//! (e.g. [`PROTOCOL_VERSION_KEY`]) and the per-request keys of 2026-07-28 can be read and
//! written in typed form through [`RequestMeta`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::id::{ProgressToken, RequestId};

use super::lifecycle::{ClientCapabilities, Implementation};
use super::logging::LoggingLevel;

/// The contents of a `_meta` field: an open JSON object.
pub type Meta = Map<String, Value>;

/// An open JSON object (`{ [key: string]: unknown }` / `JSONObject` in the schema).
pub type JsonObject = Map<String, Value>;

/// An opaque pagination cursor.
pub type Cursor = String;

/// `_meta` key: the progress token of a request (`params._meta.progressToken`).
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";
/// `_meta` key (2026-07-28, request, required): the protocol version of this request.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key (2026-07-28, request, should): the client's [`Implementation`].
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key (2026-07-28, request, required): the client's [`ClientCapabilities`].
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key (2026-07-28, request, optional): the [`LoggingLevel`] wanted for this request.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key (2026-07-28, result, should): the server's [`Implementation`].
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key (2026-07-28, notification / listen result): the id of the
/// `subscriptions/listen` request whose stream carries the message.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key (2025-11-25): the task a message relates to
/// ([`RelatedTaskMetadata`](super::tasks::RelatedTaskMetadata)).
pub const RELATED_TASK_KEY: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key (2026-07-28): W3C trace context `traceparent` (OpenTelemetry).
pub const TRACEPARENT_KEY: &str = "traceparent";
/// `_meta` key (2026-07-28): W3C trace context `tracestate` (OpenTelemetry).
pub const TRACESTATE_KEY: &str = "tracestate";
/// `_meta` key (2026-07-28): W3C `baggage` (OpenTelemetry).
pub const BAGGAGE_KEY: &str = "baggage";

/// Params of requests that carry nothing but `_meta` (`ping`, `roots/list`,
/// `server/discover`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata (progress token; in 2026-07-28 also version and capabilities).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl RequestParams {
    /// Params with the given `_meta`.
    pub fn with_meta(meta: Meta) -> Self {
        RequestParams { meta: Some(meta) }
    }
}

/// Params of notifications that carry nothing but `_meta` (the `list_changed` family,
/// `notifications/initialized`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata (2026-07-28: `io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl NotificationParams {
    /// Params with the given `_meta`.
    pub fn with_meta(meta: Meta) -> Self {
        NotificationParams { meta: Some(meta) }
    }
}

/// Params of paginated list requests (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `tasks/list`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Where to continue from (the `nextCursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl PaginatedRequestParams {
    /// Params asking for the page after `cursor`.
    pub fn after(cursor: impl Into<Cursor>) -> Self {
        PaginatedRequestParams {
            cursor: Some(cursor.into()),
            meta: None,
        }
    }
}

/// Params of `tools/list`.
pub type ListToolsRequestParams = PaginatedRequestParams;
/// Params of `prompts/list`.
pub type ListPromptsRequestParams = PaginatedRequestParams;
/// Params of `resources/list`.
pub type ListResourcesRequestParams = PaginatedRequestParams;
/// Params of `resources/templates/list`.
pub type ListResourceTemplatesRequestParams = PaginatedRequestParams;

/// The sender or recipient of messages and data in a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (model).
    Assistant,
}

/// Hints for the client about how to use or display an object (2025-03-26+; in 2024-11-05
/// only `audience` and `priority`, as `Annotated.annotations`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the data is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The theme an [`Icon`] is designed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An optionally sized icon for a user interface (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// `https:` or `data:` URI of the image.
    pub src: String,
    /// MIME type override, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src` with no further hints.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            ..Icon::default()
        }
    }
}

/// What kind of result a 2026-07-28 result object is (`resultType`). Open-ended: unknown
/// values are kept in [`ResultType::Other`]. Results from older servers have no
/// `resultType`; treat that as [`ResultType::Complete`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// `"complete"`: the final result.
    #[default]
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`](super::tools::InputRequiredResult).
    InputRequired,
    /// `"task"`: a task handle (tasks extension, `io.modelcontextprotocol/tasks`).
    Task,
    /// Any other value.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Other(s) => s,
        }
    }

    /// Parses a wire string.
    pub fn parse(s: &str) -> Self {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            other => ResultType::Other(other.into()),
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <alloc::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(ResultType::parse(&s))
    }
}

/// Who may cache a cacheable result (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// No user-specific data: any client or shared cache may reuse it.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// The `_meta` keys a 2026-07-28 request carries, in typed form, plus any other keys.
///
/// Convert with [`RequestMeta::to_meta`] / [`RequestMeta::from_meta`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// `progressToken`: asks for `notifications/progress` (all versions).
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// `io.modelcontextprotocol/protocolVersion` (required in 2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientInfo` (should).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/clientCapabilities` (required in 2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/logLevel` (optional; no log notifications without it).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Every other key.
    #[serde(flatten)]
    pub other: Meta,
}

impl RequestMeta {
    /// The metadata a 2026-07-28 client must send: version and capabilities.
    pub fn new(protocol_version: impl Into<String>, capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: Some(protocol_version.into()),
            client_capabilities: Some(capabilities),
            ..RequestMeta::default()
        }
    }

    /// Adds the client's identity.
    pub fn with_client_info(mut self, info: Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// Adds a progress token.
    pub fn with_progress_token(mut self, token: impl Into<ProgressToken>) -> Self {
        self.progress_token = Some(token.into());
        self
    }

    /// Adds a log level.
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// The requested protocol version, if present and known to this crate.
    pub fn version(&self) -> Option<crate::version::ProtocolVersion> {
        crate::version::ProtocolVersion::parse(self.protocol_version.as_deref()?)
    }

    /// Converts into an open `_meta` object.
    pub fn to_meta(&self) -> Result<Meta, serde_json::Error> {
        match serde_json::to_value(self)? {
            Value::Object(map) => Ok(map),
            _ => Ok(Meta::new()),
        }
    }

    /// Reads the typed keys out of a `_meta` object (other keys land in `other`).
    pub fn from_meta(meta: &Meta) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.clone()))
    }
}

/// Reads the progress token out of a request's `_meta`, if there is a valid one.
pub fn progress_token(meta: Option<&Meta>) -> Option<ProgressToken> {
    let v = meta?.get(PROGRESS_TOKEN_KEY)?;
    match v {
        Value::String(s) => Some(RequestId::from(s.as_str())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// Reads `io.modelcontextprotocol/subscriptionId` out of a notification's or result's
/// `_meta`, if there is a valid one.
pub fn subscription_id(meta: Option<&Meta>) -> Option<RequestId> {
    let v = meta?.get(SUBSCRIPTION_ID_KEY)?;
    match v {
        Value::String(s) => Some(RequestId::from(s.as_str())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// A `_meta` object holding just `io.modelcontextprotocol/subscriptionId`.
pub fn subscription_meta(id: &RequestId) -> Meta {
    let mut m = Meta::new();
    let v = match id {
        RequestId::Number(n) => Value::from(*n),
        RequestId::String(s) => Value::from(&**s),
    };
    m.insert(SUBSCRIPTION_ID_KEY.into(), v);
    m
}

/// A `_meta` object holding just a progress token.
pub fn progress_meta(token: &ProgressToken) -> Meta {
    let mut m = Meta::new();
    let v = match token {
        RequestId::Number(n) => Value::from(*n),
        RequestId::String(s) => Value::from(&**s),
    };
    m.insert(PROGRESS_TOKEN_KEY.into(), v);
    m
}
