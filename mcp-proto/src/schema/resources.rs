//! Resources: `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe` / `unsubscribe` (legacy), the `updated` and `list_changed`
//! notifications, and the 2026-07-28 `subscriptions/listen` stream.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::content::ResourceContents;
use super::meta::{Annotations, CacheScope, Cursor, Icon, Meta, ResultType};
use super::tools::InputResponses;

/// A resource the server can read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is (a hint for the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            ..Resource::default()
        }
    }
}

/// A template (RFC 6570) for resources the server can read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..ResourceTemplate::default()
        }
    }
}

/// Result of `resources/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// This page of resources.
    pub resources: Vec<Resource>,
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

/// Result of `resources/templates/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// This page of templates.
    pub resource_templates: Vec<ResourceTemplate>,
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

/// Params of `resources/read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// The resource URI.
    pub uri: String,
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

impl ReadResourceRequestParams {
    /// Reads `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceRequestParams {
            uri: uri.into(),
            ..ReadResourceRequestParams::default()
        }
    }
}

/// Result of `resources/read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents (one resource may have several, e.g. a directory).
    pub contents: Vec<ResourceContents>,
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

/// Params of `resources/subscribe` and `resources/unsubscribe` (legacy only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeRequestParams {
    /// The resource URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SubscribeRequestParams {
    /// (Un)subscribes `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        SubscribeRequestParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

/// Params of `resources/unsubscribe` (legacy only).
pub type UnsubscribeRequestParams = SubscribeRequestParams;

/// Params of `notifications/resources/updated`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdatedNotificationParams {
    /// The URI that changed (may be a sub-resource of the one subscribed to).
    pub uri: String,
    /// Notification metadata (2026-07-28: `io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceUpdatedNotificationParams {
    /// `uri` changed.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUpdatedNotificationParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

/// Params of `notifications/resources/list_changed`.
pub type ResourceListChangedNotificationParams = super::meta::NotificationParams;

/// The notifications a client opts in to on a `subscriptions/listen` stream (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of `subscriptions/listen` (2026-07-28).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenRequestParams {
    /// The notifications wanted on this stream.
    pub notifications: SubscriptionFilter,
    /// Request metadata (required: version and capabilities).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `subscriptions/listen`: sent only when the server ends the stream gracefully.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// `"complete"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Required: carries `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/subscriptions/acknowledged` (2026-07-28): the first message of a
/// listen stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The subset of the requested notifications the server will send.
    pub notifications: SubscriptionFilter,
    /// Notification metadata (`io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
