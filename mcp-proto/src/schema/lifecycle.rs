//! Lifecycle: implementations, capabilities, `initialize` (2024-11-05 … 2025-11-25),
//! `server/discover` (2026-07-28), `ping`, cancellation and progress, the empty result, and
//! the `data` of the version-negotiation errors.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::id::{ProgressToken, RequestId};
use crate::version::ProtocolVersion;

use super::meta::{CacheScope, Icon, JsonObject, Meta, RequestParams, ResultType};
use super::tasks::{ClientTasksCapability, ServerTasksCapability};

/// Name and version of an MCP client or server (`Implementation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// What the implementation does (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Website URL (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Implementation::default()
        }
    }
}

/// Client `roots` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed` (not in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Client `sampling` capability (an empty object before 2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Supports `includeContext` other than `"none"` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Supports `tools` / `toolChoice` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// Client `elicitation` capability (2025-06-18+; an empty object means form mode only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Supports form mode (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Supports URL mode (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

impl ElicitationCapability {
    /// Whether form mode is supported (an empty capability means form only).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// What a client supports. Open-ended: unknown capabilities go in `experimental` or, from
/// 2026-07-28, `extensions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from an LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client can elicit input from the user (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Task-augmented requests the client accepts (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
    /// Extensions, keyed by identifier (2026-07-28+), e.g. `io.modelcontextprotocol/tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ClientCapabilities {
    /// Whether the extension `id` is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// Server `prompts` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Server `resources` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether clients may subscribe to resource updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Server `tools` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What a server supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Task-augmented requests the server accepts (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
    /// Extensions, keyed by identifier (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ServerCapabilities {
    /// Whether the extension `id` is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// Params of `initialize` (2024-11-05 … 2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The latest version the client supports (kept as a string: it may be unknown to us).
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InitializeRequestParams {
    /// Params for `version` with the given capabilities and identity.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            protocol_version: version.as_str().into(),
            capabilities,
            client_info,
            meta: None,
        }
    }

    /// The requested version, if it is one this crate knows.
    pub fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Result of `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server wants to use (the client disconnects if it cannot).
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    pub server_info: Implementation,
    /// How to use the server (a hint for the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InitializeResult {
    /// A result choosing `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: version.as_str().into(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
        }
    }

    /// The chosen version, if it is one this crate knows.
    pub fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Params of `notifications/initialized`.
pub type InitializedNotificationParams = super::meta::NotificationParams;

/// Params of `ping` (legacy only).
pub type PingRequestParams = RequestParams;

/// Params of `server/discover` (2026-07-28): only the request `_meta`.
pub type DiscoverRequestParams = RequestParams;

/// Result of `server/discover` (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Versions the server supports.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// How to use the server (a hint for the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this result, in milliseconds (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache this result (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata (`io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl DiscoverResult {
    /// A complete result listing `versions`, with the given cache hints.
    pub fn new(
        versions: impl IntoIterator<Item = ProtocolVersion>,
        capabilities: ServerCapabilities,
        ttl_ms: u64,
        cache_scope: CacheScope,
    ) -> Self {
        DiscoverResult {
            supported_versions: versions.into_iter().map(|v| v.as_str().into()).collect(),
            capabilities,
            instructions: None,
            ttl_ms: Some(ttl_ms),
            cache_scope: Some(cache_scope),
            result_type: Some(ResultType::Complete),
            meta: None,
        }
    }

    /// The supported versions this crate knows, in the order given.
    pub fn versions(&self) -> Vec<ProtocolVersion> {
        self.supported_versions
            .iter()
            .filter_map(|s| ProtocolVersion::parse(s))
            .collect()
    }
}

/// Params of `notifications/cancelled`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel (required except in 2025-11-25, where tasks use `tasks/cancel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs or users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelledNotificationParams {
            request_id: Some(request_id.into()),
            reason: None,
            meta: None,
        }
    }

    /// Adds a reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// Params of `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ProgressNotificationParams {
    /// Progress `progress` (of `total`, if known) for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        ProgressNotificationParams {
            progress_token: token,
            progress,
            total,
            message: None,
            meta: None,
        }
    }

    /// Adds a message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// A result with no data (`ping`, `logging/setLevel`, `resources/subscribe`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmptyResult {
    /// The empty result for a 2026-07-28 peer (`{"resultType":"complete"}`).
    pub fn complete() -> Self {
        EmptyResult {
            result_type: Some(ResultType::Complete),
            meta: None,
        }
    }
}

/// `error.data` of `-32022` UnsupportedProtocolVersion (2026-07-28; also the shape of the
/// legacy `-32602` "Unsupported protocol version" example).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `error.data` of `-32021` MissingRequiredClientCapability (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> JsonObject {
        match v {
            serde_json::Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn implementation_new_and_full_round_trip() {
        assert_eq!(
            serde_json::to_value(Implementation::new("srv", "1.2.3")).unwrap(),
            json!({"name": "srv", "version": "1.2.3"})
        );
        let wire = json!({
            "name": "srv",
            "title": "Server",
            "version": "1.0",
            "icons": [{"src": "https://x/i.png", "sizes": ["any"]}],
            "description": "does things",
            "websiteUrl": "https://example.com"
        });
        let i: Implementation = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(i.website_url.as_deref(), Some("https://example.com"));
        assert_eq!(serde_json::to_value(&i).unwrap(), wire);
        assert!(serde_json::from_value::<Implementation>(json!({"name": "srv"})).is_err());
        assert!(serde_json::from_value::<Implementation>(json!({"version": "1"})).is_err());
    }

    #[test]
    fn elicitation_capability_modes() {
        let empty = ElicitationCapability::default();
        assert!(empty.supports_form());
        assert!(!empty.supports_url());

        let url_only: ElicitationCapability = serde_json::from_value(json!({"url": {}})).unwrap();
        assert!(!url_only.supports_form());
        assert!(url_only.supports_url());

        let both: ElicitationCapability =
            serde_json::from_value(json!({"form": {}, "url": {}})).unwrap();
        assert!(both.supports_form());
        assert!(both.supports_url());

        let form: ElicitationCapability = serde_json::from_value(json!({"form": {}})).unwrap();
        assert!(form.supports_form());
        assert!(!form.supports_url());
        assert_eq!(serde_json::to_value(&form).unwrap(), json!({"form": {}}));
    }

    #[test]
    fn client_capabilities_round_trip_and_extensions() {
        assert_eq!(
            serde_json::to_value(ClientCapabilities::default()).unwrap(),
            json!({})
        );
        let wire = json!({
            "experimental": {"x": {}},
            "roots": {"listChanged": true},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"list": {}, "requests": {"elicitation": {"create": {}}}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        });
        let c: ClientCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(c.roots.as_ref().unwrap().list_changed, Some(true));
        assert!(c.sampling.as_ref().unwrap().tools.is_some());
        assert!(c.has_extension("io.modelcontextprotocol/tasks"));
        assert!(!c.has_extension("io.modelcontextprotocol/other"));
        assert!(!ClientCapabilities::default().has_extension("io.modelcontextprotocol/tasks"));
        assert_eq!(serde_json::to_value(&c).unwrap(), wire);
        assert!(
            serde_json::from_value::<ClientCapabilities>(json!({"roots": {"listChanged": "yes"}}))
                .is_err()
        );
    }

    #[test]
    fn server_capabilities_round_trip_and_extensions() {
        let wire = json!({
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": false},
            "tools": {"listChanged": true},
            "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
            "extensions": {"com.example/ext": {"v": 1}}
        });
        let s: ServerCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(s.resources.as_ref().unwrap().subscribe, Some(true));
        assert_eq!(s.resources.as_ref().unwrap().list_changed, Some(false));
        assert!(s.has_extension("com.example/ext"));
        assert!(!s.has_extension("io.modelcontextprotocol/tasks"));
        assert_eq!(serde_json::to_value(&s).unwrap(), wire);
        assert_eq!(
            serde_json::to_value(ServerCapabilities::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn initialize_request_params() {
        let p = InitializeRequestParams::new(
            ProtocolVersion::V2025_06_18,
            ClientCapabilities::default(),
            Implementation::new("c", "0.1"),
        );
        assert_eq!(p.version(), Some(ProtocolVersion::V2025_06_18));
        let wire = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "0.1"}
        });
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<InitializeRequestParams>(wire).unwrap(),
            p
        );

        let future: InitializeRequestParams = serde_json::from_value(json!({
            "protocolVersion": "2099-01-01",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "0.1"},
            "_meta": {"progressToken": 1}
        }))
        .unwrap();
        assert_eq!(future.protocol_version, "2099-01-01");
        assert_eq!(future.version(), None);
        assert!(future.meta.is_some());

        assert!(
            serde_json::from_value::<InitializeRequestParams>(
                json!({"protocolVersion": "2025-06-18", "capabilities": {}})
            )
            .is_err()
        );
    }

    #[test]
    fn initialize_result() {
        let mut r = InitializeResult::new(
            ProtocolVersion::V2024_11_05,
            ServerCapabilities {
                tools: Some(ToolsCapability::default()),
                ..ServerCapabilities::default()
            },
            Implementation::new("s", "2"),
        );
        r.instructions = Some("use tools".into());
        assert_eq!(r.version(), Some(ProtocolVersion::V2024_11_05));
        let wire = json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "2"},
            "instructions": "use tools"
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(serde_json::from_value::<InitializeResult>(wire).unwrap(), r);
    }

    #[test]
    fn discover_result_new_and_versions() {
        let r = DiscoverResult::new(
            [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25],
            ServerCapabilities::default(),
            3_600_000,
            CacheScope::Public,
        );
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "supportedVersions": ["2026-07-28", "2025-11-25"],
                "capabilities": {},
                "ttlMs": 3600000,
                "cacheScope": "public",
                "resultType": "complete"
            })
        );
        let r: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": ["2099-01-01", "2025-06-18", "2026-07-28"],
            "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        assert_eq!(
            r.versions(),
            vec![ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28]
        );
        assert_eq!(r.result_type, None);
        assert!(
            r.meta
                .as_ref()
                .unwrap()
                .contains_key(crate::schema::meta::SERVER_INFO_KEY)
        );
    }

    #[test]
    fn cancelled_notification_params() {
        let p = CancelledNotificationParams::new(5).with_reason("user aborted");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"requestId": 5, "reason": "user aborted"})
        );
        let p = CancelledNotificationParams::new("req-a");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"requestId": "req-a"})
        );
        let p: CancelledNotificationParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(p, CancelledNotificationParams::default());
        assert!(
            serde_json::from_value::<CancelledNotificationParams>(json!({"requestId": 1.5}))
                .is_err()
        );
    }

    #[test]
    fn progress_notification_params() {
        let p = ProgressNotificationParams::new(RequestId::from("tok"), 50.0, Some(100.0))
            .with_message("halfway");
        let wire = json!({
            "progressToken": "tok",
            "progress": 50.0,
            "total": 100.0,
            "message": "halfway"
        });
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<ProgressNotificationParams>(wire).unwrap(),
            p
        );
        let p = ProgressNotificationParams::new(RequestId::Number(1), 0.25, None);
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"progressToken": 1, "progress": 0.25})
        );
        for bad in [
            json!({"progressToken": 1}),
            json!({"progress": 1}),
            json!({"progressToken": null, "progress": 1}),
            json!({"progressToken": true, "progress": 1}),
        ] {
            assert!(
                serde_json::from_value::<ProgressNotificationParams>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn empty_result() {
        assert_eq!(
            serde_json::to_value(EmptyResult::default()).unwrap(),
            json!({})
        );
        assert_eq!(
            serde_json::to_value(EmptyResult::complete()).unwrap(),
            json!({"resultType": "complete"})
        );
        let r: EmptyResult = serde_json::from_value(json!({"_meta": {"k": 1}})).unwrap();
        assert_eq!(r.meta, Some(obj(json!({"k": 1}))));
        assert_eq!(r.result_type, None);
        let r: EmptyResult = serde_json::from_value(json!({"resultType": "weird"})).unwrap();
        assert_eq!(r.result_type, Some(ResultType::Other("weird".into())));
    }

    #[test]
    fn error_data_shapes() {
        let d = UnsupportedProtocolVersionData {
            supported: vec!["2026-07-28".into(), "2025-11-25".into()],
            requested: "1.0".into(),
        };
        let wire = json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "1.0"});
        assert_eq!(serde_json::to_value(&d).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<UnsupportedProtocolVersionData>(wire).unwrap(),
            d
        );

        let d = MissingRequiredClientCapabilityData {
            required_capabilities: ClientCapabilities {
                sampling: Some(SamplingCapability::default()),
                ..ClientCapabilities::default()
            },
        };
        let wire = json!({"requiredCapabilities": {"sampling": {}}});
        assert_eq!(serde_json::to_value(&d).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<MissingRequiredClientCapabilityData>(wire).unwrap(),
            d
        );
        assert!(serde_json::from_value::<MissingRequiredClientCapabilityData>(json!({})).is_err());
    }
}
