//! Roots: `roots/list` (server to client; an input request in 2026-07-28) and
//! `notifications/roots/list_changed` (legacy).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::meta::Meta;

/// A directory or file the server may operate on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// The URI; `file://` for now.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            ..Root::default()
        }
    }

    /// Adds a display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Params of `roots/list`.
pub type ListRootsRequestParams = super::meta::RequestParams;

/// Result of `roots/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Result metadata (legacy versions only).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/roots/list_changed`.
pub type RootsListChangedNotificationParams = super::meta::NotificationParams;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn root_new_and_with_name() {
        let r = Root::new("file:///home/user/project");
        assert_eq!(r.name, None);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"uri": "file:///home/user/project"})
        );
        let r = r.with_name("Project");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"uri": "file:///home/user/project", "name": "Project"})
        );
    }

    #[test]
    fn list_roots_result_round_trip_keeps_meta() {
        let wire = json!({
            "roots": [
                {"uri": "file:///a", "name": "A", "_meta": {"k": 1}},
                {"uri": "file:///b"}
            ],
            "_meta": {"m": true}
        });
        let r: ListRootsResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.roots.len(), 2);
        assert_eq!(r.roots[0].name.as_deref(), Some("A"));
        assert_eq!(r.roots[0].meta.as_ref().unwrap()["k"], json!(1));
        assert_eq!(r.roots[1], Root::new("file:///b"));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);

        let built = ListRootsResult {
            roots: vec![Root::new("file:///x")],
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"roots": [{"uri": "file:///x"}]})
        );
    }

    #[test]
    fn malformed_roots_are_rejected() {
        assert!(serde_json::from_value::<ListRootsResult>(json!({})).is_err());
        assert!(serde_json::from_value::<ListRootsResult>(json!({"roots": {}})).is_err());
        assert!(serde_json::from_value::<Root>(json!({"name": "no uri"})).is_err());
        assert!(serde_json::from_value::<Root>(json!({"uri": 5})).is_err());
    }

    #[test]
    fn request_and_notification_params_are_meta_only() {
        assert_eq!(
            serde_json::to_value(ListRootsRequestParams::default()).unwrap(),
            json!({})
        );
        assert_eq!(
            serde_json::to_value(RootsListChangedNotificationParams::default()).unwrap(),
            json!({})
        );
    }
}
