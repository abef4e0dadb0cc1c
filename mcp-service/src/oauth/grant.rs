//! The grants an [`OAuthClient`](super::OAuthClient) can run besides the authorization code:
//! client credentials (SEP-1046), a JWT bearer assertion (RFC 7523 §2.1: workload identity
//! federation, SEP-1933) and enterprise-managed authorization (SEP-990: an RFC 8693 token
//! exchange at the enterprise identity provider for an ID-JAG, then the JWT bearer grant at
//! the authorization server). Form builders and reply parsers; the flow sends them.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use url::Url;

use super::error::OAuthError;

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of the token exchange (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The Identity Assertion JWT Authorization Grant token type (SEP-990).
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The OpenID Connect ID token type (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How the client obtains its tokens.
///
/// Every grant but [`AuthorizationCode`](Grant::AuthorizationCode) runs without a user and
/// needs a client registered out of band ([`OAuthConfig::pre_registered`] or, with feature
/// `oauth-jwt`, `OAuthConfig::private_key_jwt`); when its token expires the grant simply runs again.
///
/// ```
/// use mcp_service::oauth::{AssertionSource, EnterpriseIdp, Grant, OAuthConfig};
///
/// // A service account: client_credentials with a client secret (Basic or post, as the
/// // authorization server lists them).
/// let machine = OAuthConfig::new("reporter", "http://localhost/unused")
///     .grant(Grant::ClientCredentials)
///     .pre_registered("reporter-client", Some("s3cret".to_owned()));
///
/// // Workload identity federation: the platform's JWT (here a Kubernetes projected token)
/// // is the assertion, read afresh for every grant.
/// let workload = OAuthConfig::new("job", "http://localhost/unused")
///     .grant(Grant::JwtBearer(AssertionSource::file("/var/run/secrets/tokens/mcp")))
///     .pre_registered("job-client", None);
///
/// // Enterprise-managed: the user's ID token from the company IdP becomes an ID-JAG.
/// let idp = EnterpriseIdp::new(
///     "https://idp.example.com/token",
///     "idp-client",
///     AssertionSource::env("MCP_ID_TOKEN"),
/// );
/// let enterprise = OAuthConfig::new("desktop", "http://localhost/unused")
///     .grant(Grant::EnterpriseManaged(idp))
///     .pre_registered("mcp-client", Some("mcp-secret".to_owned()));
/// # let _ = (machine, workload, enterprise);
/// ```
///
/// [`OAuthConfig::pre_registered`]: super::OAuthConfig::pre_registered
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE (the default): a user approves in a browser.
    #[default]
    AuthorizationCode,
    /// `client_credentials` (RFC 6749 §4.4, SEP-1046): the client acts on its own behalf,
    /// authenticated with its secret (`client_secret_basic` / `client_secret_post`) or its
    /// private key (`private_key_jwt`).
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with an assertion from this source: workload
    /// identity federation (SEP-1933), where the platform (Kubernetes, a cloud, CI) issues
    /// the workload a JWT the authorization server trusts. Errors of the grant are reported,
    /// never retried with another grant.
    JwtBearer(AssertionSource),
    /// Enterprise-managed authorization (SEP-990, "cross-app access"): the user's ID token from
    /// the enterprise identity provider is exchanged there (RFC 8693) for an ID-JAG naming
    /// this authorization server and MCP server, which the JWT bearer grant turns into an
    /// access token.
    EnterpriseManaged(EnterpriseIdp),
}

impl Grant {
    /// Whether the grant needs a user (only the authorization code does).
    pub fn is_interactive(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }
}

type Loader = dyn Fn() -> Result<String, String> + Send + Sync;

/// Where a JWT assertion comes from (a workload identity token, an ID token). Read each time
/// a grant runs, so a rotated token file is picked up.
#[derive(Clone)]
pub struct AssertionSource {
    label: String,
    load: Arc<Loader>,
}

impl fmt::Debug for AssertionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AssertionSource").field(&self.label).finish()
    }
}

impl AssertionSource {
    /// This JWT.
    pub fn value(jwt: impl Into<String>) -> AssertionSource {
        let jwt = jwt.into();
        AssertionSource {
            label: "a configured value".to_owned(),
            load: Arc::new(move || Ok(jwt.clone())),
        }
    }

    /// The value of the environment variable `name`.
    pub fn env(name: impl Into<String>) -> AssertionSource {
        let name = name.into();
        AssertionSource {
            label: format!("environment variable {name}"),
            load: Arc::new(move || std::env::var(&name).map_err(|e| e.to_string())),
        }
    }

    /// The contents of the file at `path` (surrounding whitespace removed), e.g. a Kubernetes
    /// projected service account token or the file `AZURE_FEDERATED_TOKEN_FILE` names.
    pub fn file(path: impl Into<PathBuf>) -> AssertionSource {
        let path = path.into();
        AssertionSource {
            label: format!("file {}", path.display()),
            load: Arc::new(move || std::fs::read_to_string(&path).map_err(|e| e.to_string())),
        }
    }

    /// What `load` returns (`Err` with the reason), described as `label` in errors.
    pub fn from_fn(
        label: impl Into<String>,
        load: impl Fn() -> Result<String, String> + Send + Sync + 'static,
    ) -> AssertionSource {
        AssertionSource {
            label: label.into(),
            load: Arc::new(load),
        }
    }

    /// Reads the assertion.
    ///
    /// # Errors
    /// [`OAuthError::Assertion`] when the source cannot be read or is empty.
    pub fn load(&self) -> Result<String, OAuthError> {
        let fail = |reason: String| OAuthError::Assertion {
            from: self.label.clone(),
            reason,
        };
        let value = (self.load)().map_err(fail)?;
        let value = value.trim();
        if value.is_empty() {
            return Err(fail("empty".to_owned()));
        }
        Ok(value.to_owned())
    }
}

/// The enterprise identity provider of [`Grant::EnterpriseManaged`]: its token endpoint, the
/// client this application is there, and where the user's ID token comes from.
#[derive(Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) id_token: AssertionSource,
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("id_token", &self.id_token)
            .finish_non_exhaustive()
    }
}

impl EnterpriseIdp {
    /// The identity provider whose token endpoint is `token_endpoint`, where this application
    /// is the client `client_id` (a public client unless [`client_secret`](Self::client_secret)
    /// is set), exchanging the ID token `id_token` yields.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: AssertionSource,
    ) -> EnterpriseIdp {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token,
        }
    }

    /// The client secret at the identity provider (sent with HTTP Basic).
    pub fn client_secret(mut self, secret: impl Into<String>) -> EnterpriseIdp {
        self.client_secret = Some(secret.into());
        self
    }
}

/// Form pairs of a token request.
pub(crate) type Form = Vec<(&'static str, String)>;

/// The `client_credentials` token request's grant parameters (RFC 6749 §4.4.2).
pub(crate) fn client_credentials_form(scope: Option<&str>, resource: &str) -> Form {
    let mut form = vec![("grant_type", "client_credentials".to_owned())];
    push_scope_resource(&mut form, scope, resource);
    form
}

/// The JWT bearer token request's grant parameters (RFC 7523 §2.1).
pub(crate) fn jwt_bearer_form(assertion: String, scope: Option<&str>, resource: &str) -> Form {
    let mut form = vec![
        ("grant_type", JWT_BEARER_GRANT.to_owned()),
        ("assertion", assertion),
    ];
    push_scope_resource(&mut form, scope, resource);
    form
}

/// The token exchange at the identity provider (RFC 8693 §2.1, SEP-990): the ID token for an
/// ID-JAG naming the authorization server (`audience`, its issuer) and the MCP server
/// (`resource`).
pub(crate) fn id_jag_exchange_form(
    id_token: String,
    audience: &str,
    resource: &str,
    scope: Option<&str>,
) -> Form {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE_GRANT.to_owned()),
        ("requested_token_type", ID_JAG_TOKEN_TYPE.to_owned()),
        ("audience", audience.to_owned()),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
    ];
    push_scope_resource(&mut form, scope, resource);
    form
}

fn push_scope_resource(form: &mut Form, scope: Option<&str>, resource: &str) {
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    form.push(("resource", resource.to_owned()));
}

/// The ID-JAG from a successful token exchange reply (RFC 8693 §2.2.1): `access_token` with
/// `issued_token_type` the ID-JAG type.
///
/// # Errors
/// [`OAuthError::InvalidResponse`] for a body that is not such a reply.
pub fn parse_id_jag_response(url: &Url, body: &[u8]) -> Result<String, OAuthError> {
    #[derive(Deserialize)]
    struct Reply {
        access_token: String,
        issued_token_type: String,
    }
    let invalid = |reason: String| OAuthError::InvalidResponse {
        what: "token exchange response",
        url: url.to_string(),
        reason,
    };
    let r: Reply = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
    if r.issued_token_type != ID_JAG_TOKEN_TYPE {
        return Err(invalid(format!(
            "issued_token_type {:?} is not {ID_JAG_TOKEN_TYPE}",
            r.issued_token_type
        )));
    }
    if r.access_token.is_empty() {
        return Err(invalid("empty access_token".to_owned()));
    }
    Ok(r.access_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(form: &'a Form, name: &str) -> Option<&'a str> {
        form.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn grant_forms() {
        let cc = client_credentials_form(Some("a b"), "https://r/mcp");
        assert_eq!(get(&cc, "grant_type"), Some("client_credentials"));
        assert_eq!(get(&cc, "scope"), Some("a b"));
        assert_eq!(get(&cc, "resource"), Some("https://r/mcp"));
        let jb = jwt_bearer_form("x.y.z".into(), None, "https://r/mcp");
        assert_eq!(get(&jb, "grant_type"), Some(JWT_BEARER_GRANT));
        assert_eq!(get(&jb, "assertion"), Some("x.y.z"));
        assert_eq!(get(&jb, "scope"), None);
        let te = id_jag_exchange_form("id.tok.en".into(), "https://as", "https://r/mcp", None);
        assert_eq!(get(&te, "grant_type"), Some(TOKEN_EXCHANGE_GRANT));
        assert_eq!(get(&te, "requested_token_type"), Some(ID_JAG_TOKEN_TYPE));
        assert_eq!(get(&te, "subject_token_type"), Some(ID_TOKEN_TYPE));
        assert_eq!(get(&te, "subject_token"), Some("id.tok.en"));
        assert_eq!(get(&te, "audience"), Some("https://as"));
        assert_eq!(get(&te, "resource"), Some("https://r/mcp"));
    }

    #[test]
    fn id_jag_reply_validation() {
        let url = Url::parse("https://idp/token").unwrap();
        let ok = format!(
            r#"{{"access_token":"jag","issued_token_type":"{ID_JAG_TOKEN_TYPE}","token_type":"N_A"}}"#
        );
        assert_eq!(parse_id_jag_response(&url, ok.as_bytes()).unwrap(), "jag");
        for bad in [
            r#"{"access_token":"jag","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}"#.to_owned(),
            format!(r#"{{"access_token":"","issued_token_type":"{ID_JAG_TOKEN_TYPE}"}}"#),
            r#"{"access_token":"jag"}"#.to_owned(),
            "not json".to_owned(),
        ] {
            match parse_id_jag_response(&url, bad.as_bytes()) {
                Err(OAuthError::InvalidResponse { what, .. }) => {
                    assert_eq!(what, "token exchange response")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn assertion_sources() {
        assert_eq!(AssertionSource::value(" a.b.c\n").load().unwrap(), "a.b.c");
        let dir = std::env::temp_dir().join(format!("mcp-grant-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "f.i.le\n").unwrap();
        let file = AssertionSource::file(&path);
        assert_eq!(file.load().unwrap(), "f.i.le");
        // Read afresh each time (rotation).
        std::fs::write(&path, "ro.ta.ted").unwrap();
        assert_eq!(file.load().unwrap(), "ro.ta.ted");
        std::fs::remove_file(&path).unwrap();
        match file.load() {
            Err(OAuthError::Assertion { from, .. }) => assert!(from.contains("token")),
            other => panic!("{other:?}"),
        }
        let missing = AssertionSource::env("MCP_GRANT_TEST_SURELY_UNSET_VARIABLE");
        assert!(matches!(missing.load(), Err(OAuthError::Assertion { .. })));
        let empty = AssertionSource::from_fn("nothing", || Ok("  ".to_owned()));
        match empty.load() {
            Err(OAuthError::Assertion { from, reason }) => {
                assert_eq!(from, "nothing");
                assert_eq!(reason, "empty");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            format!("{:?}", AssertionSource::value("secret")),
            "AssertionSource(\"a configured value\")"
        );
        let _ = std::fs::remove_dir(&dir);
    }
}
