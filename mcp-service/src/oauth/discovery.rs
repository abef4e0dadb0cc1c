//! Where metadata lives and what it says: Protected Resource Metadata (RFC 9728) and
//! authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0), with the candidate
//! URLs in the order the MCP authorization spec (2025-11-25) lists them.
//!
//! Pure functions and serde types; never fetches anything.

use serde::Deserialize;
use url::Url;

/// Protected Resource Metadata (RFC 9728 §2), the fields MCP authorization uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The protected resource's identifier (its canonical URI).
    pub resource: String,
    /// Issuer identifiers of the authorization servers that protect it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource understands.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2 / OpenID Connect Discovery §3), the fields an
/// authorization-code client uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// The authorization endpoint (empty when the metadata names none: a server that only
    /// offers grants without one, such as `client_credentials`).
    #[serde(default)]
    pub authorization_endpoint: String,
    /// The token endpoint.
    pub token_endpoint: String,
    /// The Dynamic Client Registration endpoint (RFC 7591), when offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server supports.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Response types; `code` is the one used here.
    #[serde(default)]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types; RFC 8414 default is `authorization_code` and `implicit`.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods; RFC 8414 default is `client_secret_basic`.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods (RFC 7636); MCP clients refuse to proceed unless `S256` is listed.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents are accepted as `client_id` (SEP-991).
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// The server names itself (`iss`) in every authorization response (RFC 9207): a response
    /// without it is refused.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// The JWS algorithms the server accepts in DPoP proofs (RFC 9449 §5.1): it issues
    /// DPoP-bound tokens.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// The metadata a 2025-03-26 client assumes when the server publishes none: the default
    /// endpoints `/authorize`, `/token` and `/register` at the root of `base`'s origin.
    pub fn legacy_defaults(base: &Url) -> AuthorizationServerMetadata {
        let at = |path: &str| origin_join(base, path);
        AuthorizationServerMetadata {
            issuer: at(""),
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            scopes_supported: None,
            response_types_supported: None,
            grant_types_supported: None,
            token_endpoint_auth_methods_supported: None,
            code_challenge_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
            dpop_signing_alg_values_supported: None,
        }
    }

    /// Whether PKCE with `S256` is advertised.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }
}

/// `scheme://host[:port]` of `url` followed by `path` (which starts with `/` or is empty).
fn origin_join(url: &Url, path: &str) -> String {
    format!("{}{}", url.origin().ascii_serialization(), path)
}

/// The path of `url` without its trailing `/` (`""` for the root).
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

/// RFC 9728 §3.1 well-known locations for the resource at `server_url`, in the order to try:
/// the path-aware `/.well-known/oauth-protected-resource{path}` first (when the URL has a path),
/// then the root `/.well-known/oauth-protected-resource`.
pub fn protected_resource_metadata_urls(server_url: &Url) -> Vec<Url> {
    let path = trimmed_path(server_url);
    let mut out = Vec::with_capacity(2);
    if !path.is_empty() {
        out.push(format!("/.well-known/oauth-protected-resource{path}"));
    }
    out.push("/.well-known/oauth-protected-resource".to_owned());
    out.into_iter()
        .filter_map(|p| Url::parse(&origin_join(server_url, &p)).ok())
        .collect()
}

/// Authorization server metadata locations for `issuer`, in the order of the MCP spec
/// (2025-11-25, "Authorization Server Metadata Discovery"):
///
/// - issuer with a path (`https://as/tenant1`): `/.well-known/oauth-authorization-server/tenant1`
///   (RFC 8414 path insertion), `/.well-known/openid-configuration/tenant1` (OIDC path
///   insertion), `/tenant1/.well-known/openid-configuration` (OIDC path appending);
/// - issuer without a path: `/.well-known/oauth-authorization-server`,
///   `/.well-known/openid-configuration`.
///
/// Query and fragment of the issuer are dropped.
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = trimmed_path(issuer);
    let paths = if path.is_empty() {
        vec![
            "/.well-known/oauth-authorization-server".to_owned(),
            "/.well-known/openid-configuration".to_owned(),
        ]
    } else {
        vec![
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("/.well-known/openid-configuration{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ]
    };
    paths
        .into_iter()
        .filter_map(|p| Url::parse(&origin_join(issuer, &p)).ok())
        .collect()
}

/// The canonical resource identifier of an MCP server URL (RFC 8707 §2, MCP "Canonical Server
/// URI"): scheme and host lower-case (the URL parser does that), no fragment, no trailing `/`
/// unless the path is the root.
pub fn canonical_resource(server_url: &Url) -> String {
    let mut u = server_url.clone();
    u.set_fragment(None);
    let s = u.to_string();
    if u.query().is_none() {
        s.trim_end_matches('/').to_owned()
    } else {
        s
    }
}

/// Whether the Protected Resource Metadata `resource` may stand for `server_url` (RFC 9728 §3.3,
/// MCP "Resource Parameter Implementation"): same origin, and its path is the server URL's path
/// or a parent of it on a segment boundary.
pub fn resource_matches(server_url: &Url, resource: &Url) -> bool {
    if server_url.origin() != resource.origin() {
        return false;
    }
    let want = trimmed_path(server_url);
    let have = trimmed_path(resource);
    have.is_empty() || want == have || want.strip_prefix(have).is_some_and(|r| r.starts_with('/'))
}

/// Whether the metadata's `issuer` is the issuer it was looked up for (RFC 8414 §3.3), comparing
/// parsed URLs so that `https://as` and `https://as/` are the same issuer.
pub fn issuer_matches(expected: &Url, issuer: &str) -> bool {
    match Url::parse(issuer) {
        Ok(found) => {
            found.origin() == expected.origin()
                && trimmed_path(&found) == trimmed_path(expected)
                && found.query() == expected.query()
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn strs(v: Vec<Url>) -> Vec<String> {
        v.into_iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn prm_urls_path_first_then_root() {
        assert_eq!(
            strs(protected_resource_metadata_urls(&u("http://h:1/mcp"))),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            strs(protected_resource_metadata_urls(&u("https://h/a/b/?q=1#f"))),
            [
                "https://h/.well-known/oauth-protected-resource/a/b",
                "https://h/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            strs(protected_resource_metadata_urls(&u("https://h"))),
            ["https://h/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn as_urls_without_path() {
        assert_eq!(
            strs(authorization_server_metadata_urls(&u("https://as.example"))),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            strs(authorization_server_metadata_urls(&u(
                "https://as.example/"
            ))),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn as_urls_with_path_in_spec_order() {
        assert_eq!(
            strs(authorization_server_metadata_urls(&u(
                "http://127.0.0.1:9/tenant1/"
            ))),
            [
                "http://127.0.0.1:9/.well-known/oauth-authorization-server/tenant1",
                "http://127.0.0.1:9/.well-known/openid-configuration/tenant1",
                "http://127.0.0.1:9/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn legacy_defaults_at_origin_root() {
        let m = AuthorizationServerMetadata::legacy_defaults(&u("http://h:5/deep/mcp"));
        assert_eq!(m.authorization_endpoint, "http://h:5/authorize");
        assert_eq!(m.token_endpoint, "http://h:5/token");
        assert_eq!(
            m.registration_endpoint.as_deref(),
            Some("http://h:5/register")
        );
        assert!(!m.supports_s256());
    }

    #[test]
    fn canonical_resource_forms() {
        assert_eq!(
            canonical_resource(&u("HTTPS://Ex.COM/mcp/#x")),
            "https://ex.com/mcp"
        );
        assert_eq!(canonical_resource(&u("https://ex.com/")), "https://ex.com");
        assert_eq!(
            canonical_resource(&u("https://ex.com:8443/a?b=1")),
            "https://ex.com:8443/a?b=1"
        );
    }

    #[test]
    fn resource_matching() {
        let server = u("http://h:1/mcp");
        assert!(resource_matches(&server, &u("http://h:1/mcp")));
        assert!(resource_matches(&server, &u("http://h:1/mcp/")));
        assert!(resource_matches(&server, &u("http://h:1")));
        assert!(!resource_matches(&server, &u("http://h:1/mc")));
        assert!(!resource_matches(&server, &u("http://h:1/other")));
        assert!(!resource_matches(&server, &u("http://h:2/mcp")));
        assert!(!resource_matches(&server, &u("https://h:1/mcp")));
        assert!(resource_matches(&u("http://h/a/b"), &u("http://h/a")));
    }

    #[test]
    fn issuer_matching() {
        assert!(issuer_matches(&u("http://h:1"), "http://h:1/"));
        assert!(issuer_matches(
            &u("http://h:1/tenant1"),
            "http://h:1/tenant1"
        ));
        assert!(!issuer_matches(&u("http://h:1/tenant1"), "http://h:1"));
        assert!(!issuer_matches(&u("http://h:1"), "http://evil:1"));
        assert!(!issuer_matches(&u("http://h:1"), "not a url"));
    }

    #[test]
    fn metadata_parses_with_defaults() {
        let m: AuthorizationServerMetadata = serde_json::from_str(
            r#"{"issuer":"https://as","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t","code_challenge_methods_supported":["plain","S256"],"extra":1}"#,
        )
        .unwrap();
        assert!(m.supports_s256());
        assert!(!m.client_id_metadata_document_supported);
        assert!(m.registration_endpoint.is_none());
        let p: ProtectedResourceMetadata =
            serde_json::from_str(r#"{"resource":"https://r/mcp"}"#).unwrap();
        assert!(p.authorization_servers.is_empty());
        assert!(serde_json::from_str::<AuthorizationServerMetadata>(r#"{"issuer":"x"}"#).is_err());
    }
}
