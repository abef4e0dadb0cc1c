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
