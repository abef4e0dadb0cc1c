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
    /// Sets its `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets its `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets its `mimeType`.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
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
    /// Sets its `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets its `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets its `mimeType`.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::RequestId;
    use crate::schema::meta::{Role, subscription_id, subscription_meta};
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn resource_new_and_full_round_trip() {
        assert_eq!(
            serde_json::to_value(Resource::new("file:///r.md", "r.md")).unwrap(),
            json!({"uri": "file:///r.md", "name": "r.md"})
        );
        let wire = json!({
            "uri": "file:///r.md",
            "name": "r.md",
            "title": "Readme",
            "description": "The readme",
            "mimeType": "text/markdown",
            "annotations": {"audience": ["user"], "priority": 0.9},
            "size": 1024,
            "icons": [{"src": "https://x/i.png"}],
            "_meta": {"k": 1}
        });
        let r: Resource = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.size, Some(1024));
        assert_eq!(r.mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(
            r.annotations.as_ref().unwrap().audience,
            Some(vec![Role::User])
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(serde_json::from_value::<Resource>(json!({"uri": "u"})).is_err());
        assert!(
            serde_json::from_value::<Resource>(json!({"uri": "u", "name": "n", "size": -1}))
                .is_err()
        );
    }

    #[test]
    fn resource_template_uses_uri_template() {
        let t = ResourceTemplate::new("file:///{path}", "files");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"uriTemplate": "file:///{path}", "name": "files"})
        );
        assert!(
            serde_json::from_value::<ResourceTemplate>(json!({"uri": "file:///{p}", "name": "f"}))
                .is_err()
        );
    }

    #[test]
    fn list_results_names() {
        assert_eq!(
            serde_json::to_value(ListResourcesResult::default()).unwrap(),
            json!({"resources": []})
        );
        assert_eq!(
            serde_json::to_value(ListResourceTemplatesResult::default()).unwrap(),
            json!({"resourceTemplates": []})
        );
        let wire = json!({
            "resourceTemplates": [{"uriTemplate": "db://{t}", "name": "tables", "mimeType": "application/json"}],
            "nextCursor": "c",
            "ttlMs": 0,
            "cacheScope": "public",
            "resultType": "complete"
        });
        let r: ListResourceTemplatesResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.resource_templates[0].uri_template, "db://{t}");
        assert_eq!(r.cache_scope, Some(CacheScope::Public));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);

        let wire =
            json!({"resources": [{"uri": "a", "name": "b"}], "nextCursor": "c2", "_meta": {}});
        let r: ListResourcesResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.resources[0], Resource::new("a", "b"));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn read_params_new_and_retry_fields() {
        let p = ReadResourceRequestParams::new("file:///x");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"uri": "file:///x"})
        );
        let wire = json!({
            "uri": "file:///x",
            "inputResponses": {"roots": {"roots": []}},
            "requestState": "s",
            "_meta": {"progressToken": 1}
        });
        let p: ReadResourceRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.request_state.as_deref(), Some("s"));
        assert!(p.input_responses.as_ref().unwrap().contains_key("roots"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(serde_json::from_value::<ReadResourceRequestParams>(json!({})).is_err());
    }

    #[test]
    fn read_result_with_mixed_contents() {
        let r = ReadResourceResult {
            contents: vec![
                ResourceContents::text("file:///d/a.txt", "A"),
                ResourceContents::blob("file:///d/b.bin", "Qg=="),
            ],
            ttl_ms: Some(5000),
            cache_scope: Some(CacheScope::Private),
            result_type: Some(ResultType::Complete),
            meta: None,
        };
        let wire = json!({
            "contents": [
                {"uri": "file:///d/a.txt", "text": "A"},
                {"uri": "file:///d/b.bin", "blob": "Qg=="}
            ],
            "ttlMs": 5000,
            "cacheScope": "private",
            "resultType": "complete"
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<ReadResourceResult>(wire).unwrap(),
            r
        );
        assert!(
            serde_json::from_value::<ReadResourceResult>(json!({"contents": [{"uri": "u"}]}))
                .is_err()
        );
    }

    #[test]
    fn subscribe_and_updated_params() {
        assert_eq!(
            serde_json::to_value(SubscribeRequestParams::new("file:///w")).unwrap(),
            json!({"uri": "file:///w"})
        );
        let mut n = ResourceUpdatedNotificationParams::new("file:///w/sub");
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"uri": "file:///w/sub"})
        );
        n.meta = Some(subscription_meta(&RequestId::Number(12)));
        let wire = serde_json::to_value(&n).unwrap();
        assert_eq!(
            wire,
            json!({"uri": "file:///w/sub", "_meta": {"io.modelcontextprotocol/subscriptionId": 12}})
        );
        let back: ResourceUpdatedNotificationParams = serde_json::from_value(wire).unwrap();
        assert_eq!(
            subscription_id(back.meta.as_ref()),
            Some(RequestId::Number(12))
        );
        assert_eq!(
            serde_json::to_value(ResourceListChangedNotificationParams::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn subscription_filter_names() {
        assert_eq!(
            serde_json::to_value(SubscriptionFilter::default()).unwrap(),
            json!({})
        );
        let f = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(false),
            resources_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///a".into()]),
            task_ids: Some(vec!["t1".into()]),
        };
        let wire = json!({
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourcesListChanged": true,
            "resourceSubscriptions": ["file:///a"],
            "taskIds": ["t1"]
        });
        assert_eq!(serde_json::to_value(&f).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<SubscriptionFilter>(wire).unwrap(),
            f
        );
    }

    #[test]
    fn listen_params_result_and_acknowledgement() {
        let wire = json!({
            "notifications": {"toolsListChanged": true},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        });
        let p: SubscriptionsListenRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.notifications.tools_list_changed, Some(true));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(serde_json::from_value::<SubscriptionsListenRequestParams>(json!({})).is_err());

        assert_eq!(
            serde_json::to_value(SubscriptionsListenResult::default()).unwrap(),
            json!({})
        );
        let r = SubscriptionsListenResult {
            result_type: Some(ResultType::Complete),
            meta: Some(subscription_meta(&RequestId::from("L1"))),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}})
        );

        let ack = SubscriptionsAcknowledgedNotificationParams {
            notifications: SubscriptionFilter {
                resources_list_changed: Some(true),
                ..SubscriptionFilter::default()
            },
            meta: Some(subscription_meta(&RequestId::Number(1))),
        };
        let wire = serde_json::to_value(&ack).unwrap();
        assert_eq!(
            wire,
            json!({
                "notifications": {"resourcesListChanged": true},
                "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
            })
        );
        assert_eq!(
            serde_json::from_value::<SubscriptionsAcknowledgedNotificationParams>(wire).unwrap(),
            ack
        );
    }
}
