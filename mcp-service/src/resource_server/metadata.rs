//! The RFC 9728 Protected Resource Metadata document and where it is served.

use serde::{Deserialize, Serialize};

use crate::{Error, ErrorKind};

/// The well-known path of the metadata document (RFC 9728 §3).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The Protected Resource Metadata document (RFC 9728 §2) an MCP server publishes: which
/// resource it is, where its tokens come from, which scopes exist, how tokens are sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource's identifier: the canonical URL of the MCP endpoint.
    pub resource: String,
    /// The issuers of the authorization servers that issue tokens for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes its requests may need.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes_supported: Vec<String>,
    /// How bearer tokens are sent: `["header"]` (the only way MCP allows).
    #[serde(default)]
    pub bearer_methods_supported: Vec<String>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// A URL of documentation for developers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
}

impl ProtectedResourceMetadata {
    /// The document of `resource`, tokens sent in the header only, nothing else yet.
    pub fn new(resource: impl Into<String>) -> Self {
        ProtectedResourceMetadata {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: None,
            resource_documentation: None,
        }
    }
}

/// The path the metadata document of `resource` is served at (RFC 9728 §3.1): the well-known
/// path, followed by the resource's path when it has one (its trailing slash dropped).
///
/// ```
/// use mcp_service::resource_server::metadata_path;
///
/// assert_eq!(
///     metadata_path("https://mcp.example.com/mcp")?,
///     "/.well-known/oauth-protected-resource/mcp",
/// );
/// assert_eq!(metadata_path("https://mcp.example.com/")?, "/.well-known/oauth-protected-resource");
/// # Ok::<(), mcp_service::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidParams`] when `resource` is not an absolute `http`/`https` URL with a
/// host, or has a query or fragment.
pub fn metadata_path(resource: &str) -> Result<String, Error> {
    metadata_location(resource).map(|(_, path)| path)
}

/// The absolute URL of the metadata document of `resource` and its path.
pub(super) fn metadata_location(resource: &str) -> Result<(String, String), Error> {
    let invalid = |why: &str| {
        Error::new(
            ErrorKind::InvalidParams,
            format!("invalid resource URL {resource:?}: {why}"),
        )
    };
    let url = url::Url::parse(resource).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("not http or https"));
    }
    if url.host_str().is_none() {
        return Err(invalid("no host"));
    }
    if url.fragment().is_some() || url.query().is_some() {
        return Err(invalid("a resource has no query or fragment"));
    }
    let path = url.path().trim_end_matches('/');
    let suffixed = format!("{WELL_KNOWN}{path}");
    let mut absolute = url.clone();
    absolute.set_path(&suffixed);
    Ok((absolute.to_string(), suffixed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(
            metadata_location("http://127.0.0.1:8080/mcp").unwrap(),
            (
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp".to_owned(),
                "/.well-known/oauth-protected-resource/mcp".to_owned()
            )
        );
        assert_eq!(
            metadata_path("https://a.example/x/y/").unwrap(),
            "/.well-known/oauth-protected-resource/x/y"
        );
        assert_eq!(
            metadata_path("https://a.example").unwrap(),
            "/.well-known/oauth-protected-resource"
        );
        for bad in [
            "/mcp",
            "ftp://a/b",
            "https://a/b#f",
            "https://a/b?q=1",
            "nonsense",
        ] {
            assert!(metadata_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_document_serializes_as_rfc_9728_says() {
        let mut m = ProtectedResourceMetadata::new("https://a.example/mcp");
        m.authorization_servers.push("https://as.example".into());
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "resource": "https://a.example/mcp",
                "authorization_servers": ["https://as.example"],
                "bearer_methods_supported": ["header"],
            })
        );
    }
}
