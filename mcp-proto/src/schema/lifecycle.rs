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
