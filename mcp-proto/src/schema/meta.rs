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
    ///
    /// # Errors
    /// The `serde_json::Error` of serialising a value in `other` that does not serialise.
    pub fn to_meta(&self) -> Result<Meta, serde_json::Error> {
        match serde_json::to_value(self)? {
            Value::Object(map) => Ok(map),
            _ => Ok(Meta::new()),
        }
    }

    /// Reads the typed keys out of a `_meta` object (other keys land in `other`).
    ///
    /// # Errors
    /// The `serde_json::Error` when a known key has the wrong type (a `protocolVersion` that
    /// is not a string, say).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::lifecycle::RootsCapability;
    use crate::version::ProtocolVersion;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::json;

    fn obj(v: Value) -> Meta {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn request_and_notification_params_carry_only_meta() {
        assert_eq!(
            serde_json::to_value(RequestParams::default()).unwrap(),
            json!({})
        );
        assert_eq!(
            serde_json::to_value(NotificationParams::default()).unwrap(),
            json!({})
        );

        let meta = obj(json!({"progressToken": 1, "custom": {"x": [1, 2]}}));
        let p = RequestParams::with_meta(meta.clone());
        let wire = json!({"_meta": {"progressToken": 1, "custom": {"x": [1, 2]}}});
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<RequestParams>(wire.clone()).unwrap(),
            p
        );

        let n = NotificationParams::with_meta(meta);
        assert_eq!(serde_json::to_value(&n).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<NotificationParams>(wire).unwrap(),
            n
        );

        // Unknown members are ignored, a non-object `_meta` is rejected.
        let p: RequestParams = serde_json::from_value(json!({"other": 1})).unwrap();
        assert_eq!(p.meta, None);
        assert!(serde_json::from_value::<RequestParams>(json!({"_meta": 5})).is_err());
    }

    #[test]
    fn paginated_params_after_sets_only_cursor() {
        let p = PaginatedRequestParams::after("page-2");
        assert_eq!(p.cursor.as_deref(), Some("page-2"));
        assert_eq!(p.meta, None);
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"cursor": "page-2"})
        );
        assert_eq!(
            serde_json::to_value(PaginatedRequestParams::default()).unwrap(),
            json!({})
        );
        let back: PaginatedRequestParams =
            serde_json::from_value(json!({"cursor": "c", "_meta": {"k": true}})).unwrap();
        assert_eq!(back.cursor.as_deref(), Some("c"));
        assert_eq!(back.meta, Some(obj(json!({"k": true}))));
    }

    #[test]
    fn role_is_lowercase() {
        assert_eq!(serde_json::to_value(Role::User).unwrap(), json!("user"));
        assert_eq!(
            serde_json::to_value(Role::Assistant).unwrap(),
            json!("assistant")
        );
        assert_eq!(
            serde_json::from_value::<Role>(json!("assistant")).unwrap(),
            Role::Assistant
        );
        assert!(serde_json::from_value::<Role>(json!("User")).is_err());
        assert!(serde_json::from_value::<Role>(json!("system")).is_err());
    }

    #[test]
    fn annotations_use_camel_case_and_omit_none() {
        assert_eq!(
            serde_json::to_value(Annotations::default()).unwrap(),
            json!({})
        );
        let a = Annotations {
            audience: Some(vec![Role::User, Role::Assistant]),
            priority: Some(0.5),
            last_modified: Some("2025-01-12T15:00:58Z".into()),
        };
        let wire = json!({
            "audience": ["user", "assistant"],
            "priority": 0.5,
            "lastModified": "2025-01-12T15:00:58Z"
        });
        assert_eq!(serde_json::to_value(&a).unwrap(), wire);
        assert_eq!(serde_json::from_value::<Annotations>(wire).unwrap(), a);
    }

    #[test]
    fn icon_new_and_full_round_trip() {
        let i = Icon::new("https://example.com/i.png");
        assert_eq!(
            serde_json::to_value(&i).unwrap(),
            json!({"src": "https://example.com/i.png"})
        );

        let wire = json!({
            "src": "data:image/png;base64,AAAA",
            "mimeType": "image/png",
            "sizes": ["48x48", "any"],
            "theme": "dark"
        });
        let i: Icon = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(i.mime_type.as_deref(), Some("image/png"));
        assert_eq!(i.theme, Some(IconTheme::Dark));
        assert_eq!(serde_json::to_value(&i).unwrap(), wire);

        assert!(serde_json::from_value::<Icon>(json!({"mimeType": "image/png"})).is_err());
        assert!(serde_json::from_value::<Icon>(json!({"src": "x", "theme": "Dark"})).is_err());
        assert_eq!(
            serde_json::to_value(IconTheme::Light).unwrap(),
            json!("light")
        );
    }

    #[test]
    fn result_type_known_values() {
        assert_eq!(ResultType::default(), ResultType::Complete);
        for (wire, t) in [
            ("complete", ResultType::Complete),
            ("input_required", ResultType::InputRequired),
            ("task", ResultType::Task),
        ] {
            assert_eq!(ResultType::parse(wire), t);
            assert_eq!(t.as_str(), wire);
            assert_eq!(t.to_string(), wire);
            assert_eq!(serde_json::to_value(&t).unwrap(), json!(wire));
            assert_eq!(
                serde_json::from_value::<ResultType>(json!(wire)).unwrap(),
                t
            );
        }
    }

    #[test]
    fn result_type_keeps_unknown_values() {
        let t: ResultType = serde_json::from_str(r#""streaming""#).unwrap();
        assert_eq!(t, ResultType::Other("streaming".into()));
        assert_eq!(t.as_str(), "streaming");
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""streaming""#);
        // Case matters: "Complete" is not "complete".
        assert_eq!(
            ResultType::parse("Complete"),
            ResultType::Other("Complete".into())
        );
        // Escaped strings (not borrowable) still parse.
        assert_eq!(
            serde_json::from_str::<ResultType>(r#""inp\u0075t_required""#).unwrap(),
            ResultType::InputRequired
        );
        assert!(serde_json::from_value::<ResultType>(json!(1)).is_err());
        assert!(serde_json::from_value::<ResultType>(json!(null)).is_err());
    }

    #[test]
    fn cache_scope_is_lowercase() {
        assert_eq!(
            serde_json::to_value(CacheScope::Public).unwrap(),
            json!("public")
        );
        assert_eq!(
            serde_json::from_value::<CacheScope>(json!("private")).unwrap(),
            CacheScope::Private
        );
        assert!(serde_json::from_value::<CacheScope>(json!("shared")).is_err());
    }

    #[test]
    fn request_meta_to_meta_uses_reserved_keys() {
        let caps = ClientCapabilities {
            roots: Some(RootsCapability::default()),
            ..ClientCapabilities::default()
        };
        let rm = RequestMeta::new("2026-07-28", caps)
            .with_client_info(Implementation::new("client", "1.0"))
            .with_progress_token(7)
            .with_log_level(LoggingLevel::Warning);
        let m = rm.to_meta().unwrap();
        assert_eq!(
            Value::Object(m.clone()),
            json!({
                "progressToken": 7,
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "client", "version": "1.0"},
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
                "io.modelcontextprotocol/logLevel": "warning"
            })
        );
        assert!(m.contains_key(PROGRESS_TOKEN_KEY));
        assert!(m.contains_key(PROTOCOL_VERSION_KEY));
        assert!(m.contains_key(CLIENT_INFO_KEY));
        assert!(m.contains_key(CLIENT_CAPABILITIES_KEY));
        assert!(m.contains_key(LOG_LEVEL_KEY));

        let back = RequestMeta::from_meta(&m).unwrap();
        assert_eq!(back, rm);
        assert!(back.other.is_empty());
        assert_eq!(back.version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(progress_token(Some(&m)), Some(RequestId::Number(7)));
    }

    #[test]
    fn request_meta_keeps_other_keys() {
        let m = obj(json!({
            "io.modelcontextprotocol/protocolVersion": "2025-11-25",
            "progressToken": "tok",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "com.example/custom": {"x": 1}
        }));
        let rm = RequestMeta::from_meta(&m).unwrap();
        assert_eq!(rm.protocol_version.as_deref(), Some("2025-11-25"));
        assert_eq!(rm.progress_token, Some(RequestId::from("tok")));
        assert_eq!(rm.client_capabilities, None);
        assert_eq!(rm.client_info, None);
        assert_eq!(rm.log_level, None);
        assert_eq!(rm.other.len(), 2);
        assert!(rm.other.contains_key(TRACEPARENT_KEY));
        assert_eq!(rm.other["com.example/custom"], json!({"x": 1}));
        assert_eq!(rm.version(), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(rm.to_meta().unwrap(), m);

        let empty = RequestMeta::from_meta(&Meta::new()).unwrap();
        assert_eq!(empty, RequestMeta::default());
        assert!(empty.to_meta().unwrap().is_empty());
        assert_eq!(empty.version(), None);
    }

    #[test]
    fn request_meta_unknown_version_is_none() {
        let rm = RequestMeta::new("1999-01-01", ClientCapabilities::default());
        assert_eq!(rm.protocol_version.as_deref(), Some("1999-01-01"));
        assert_eq!(rm.version(), None);
    }

    #[test]
    fn request_meta_rejects_malformed_typed_keys() {
        for bad in [
            json!({"progressToken": true}),
            json!({"progressToken": 1.5}),
            json!({"io.modelcontextprotocol/protocolVersion": 20260728}),
            json!({"io.modelcontextprotocol/logLevel": "verbose"}),
            json!({"io.modelcontextprotocol/clientInfo": {"name": "no version"}}),
            json!({"io.modelcontextprotocol/clientCapabilities": "all"}),
        ] {
            assert!(RequestMeta::from_meta(&obj(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn progress_token_helper() {
        assert_eq!(progress_token(None), None);
        assert_eq!(progress_token(Some(&Meta::new())), None);
        let read = |v: Value| progress_token(Some(&obj(json!({"progressToken": v}))));
        assert_eq!(read(json!("abc")), Some(RequestId::from("abc")));
        assert_eq!(read(json!(42)), Some(RequestId::Number(42)));
        assert_eq!(read(json!(-3)), Some(RequestId::Number(-3)));
        assert_eq!(read(json!(1.5)), None);
        assert_eq!(read(json!(u64::MAX)), None);
        assert_eq!(read(json!(true)), None);
        assert_eq!(read(json!(null)), None);
        // The subscription id key is not a progress token.
        assert_eq!(
            progress_token(Some(&subscription_meta(&RequestId::Number(1)))),
            None
        );
    }

    #[test]
    fn progress_and_subscription_meta_round_trip() {
        for id in [RequestId::Number(9), RequestId::from("s-1")] {
            let pm = progress_meta(&id);
            assert_eq!(pm.len(), 1);
            assert_eq!(progress_token(Some(&pm)), Some(id.clone()));

            let sm = subscription_meta(&id);
            assert_eq!(sm.len(), 1);
            assert!(sm.contains_key(SUBSCRIPTION_ID_KEY));
            assert_eq!(subscription_id(Some(&sm)), Some(id.clone()));
            assert_eq!(subscription_id(Some(&pm)), None);
        }
        assert_eq!(
            Value::Object(progress_meta(&RequestId::from("t"))),
            json!({"progressToken": "t"})
        );
        assert_eq!(
            Value::Object(subscription_meta(&RequestId::Number(3))),
            json!({"io.modelcontextprotocol/subscriptionId": 3})
        );
        assert_eq!(subscription_id(None), None);
        assert_eq!(
            subscription_id(Some(&obj(
                json!({"io.modelcontextprotocol/subscriptionId": [1]})
            ))),
            None
        );
    }
}
