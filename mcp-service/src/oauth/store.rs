//! What authorization leaves behind: client credentials per authorization server, tokens per
//! MCP server, and the [`TokenStore`] trait that keeps them (in memory by default).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// How the client authenticates at the token endpoint (RFC 7591 §2, RFC 8414 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// `none`: a public client; only `client_id` in the form body.
    None,
    /// `private_key_jwt`: a JWT signed with the client's private key as `client_assertion`
    /// (RFC 7523 §2.2, OpenID Connect Core §9); the key is the configuration's
    /// (`OAuthConfig::private_key_jwt`, feature `oauth-jwt`), never kept in a store.
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The registered name of the method.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuth::ClientSecretPost => "client_secret_post",
            TokenEndpointAuth::None => "none",
            TokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method of a registered name, `None` for methods this client does not implement
    /// (e.g. `client_secret_jwt`).
    pub fn from_name(name: &str) -> Option<TokenEndpointAuth> {
        match name {
            "client_secret_basic" => Some(TokenEndpointAuth::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuth::ClientSecretPost),
            "none" => Some(TokenEndpointAuth::None),
            "private_key_jwt" => Some(TokenEndpointAuth::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client identity at one authorization server: pre-registered, a Client ID Metadata Document
/// URL, or the result of Dynamic Client Registration.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret` of a confidential client.
    pub client_secret: Option<String>,
    /// The token endpoint authentication method.
    pub auth_method: TokenEndpointAuth,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// How an access token is presented to the resource server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenType {
    /// `Authorization: Bearer <token>` (RFC 6750).
    #[default]
    Bearer,
    /// A DPoP-bound token (RFC 9449): `Authorization: DPoP <token>` with a fresh `DPoP` proof
    /// signed by the key the token is bound to, on every request.
    DPoP,
}

impl TokenType {
    /// The `token_type` value and `Authorization` scheme: `Bearer` or `DPoP`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenType::Bearer => "Bearer",
            TokenType::DPoP => "DPoP",
        }
    }

    /// The type of a `token_type` value (case-insensitive), `None` for other types.
    pub fn from_name(name: &str) -> Option<TokenType> {
        if name.eq_ignore_ascii_case("bearer") {
            Some(TokenType::Bearer)
        } else if name.eq_ignore_ascii_case("dpop") {
            Some(TokenType::DPoP)
        } else {
            None
        }
    }
}

/// How long before its expiry a token is renewed at most (see [`TokenSet::needs_renewal`]).
pub const RENEWAL_MARGIN: Duration = Duration::from_secs(60);

/// Tokens from a token endpoint response (RFC 6749 §5.1).
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSet {
    /// The access token, sent as `Authorization: <token_type> <access_token>`.
    pub access_token: String,
    /// How the access token is presented (`Bearer`, or `DPoP` for a DPoP-bound token).
    pub token_type: TokenType,
    /// When the token response arrived (the start of the token's lifetime), when known.
    pub issued_at: Option<SystemTime>,
    /// The refresh token, when one was issued (or kept from an earlier response).
    pub refresh_token: Option<String>,
    /// When the access token expires (`expires_in` added to the time the response arrived).
    pub expires_at: Option<SystemTime>,
    /// The granted scope when the server said (space-separated).
    pub scope: Option<String>,
}

impl TokenSet {
    /// Whether the access token has expired at `now`. A token without `expires_in` never does
    /// (the server's 401 says when it stops working).
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// Whether the access token should be renewed before it is used at `now`: it has expired,
    /// or expires within [`RENEWAL_MARGIN`] (60 s) or a tenth of its lifetime, whichever is
    /// shorter (a token issued for 30 s is renewed in its last 3 s, one for an hour in its last
    /// minute). A token without an expiry never needs it.
    pub fn needs_renewal(&self, now: SystemTime) -> bool {
        let Some(at) = self.expires_at else {
            return false;
        };
        let lifetime = self
            .issued_at
            .and_then(|issued| at.duration_since(issued).ok());
        let margin = match lifetime {
            Some(l) => RENEWAL_MARGIN.min(l / 10),
            None => RENEWAL_MARGIN,
        };
        match at.duration_since(now) {
            Ok(left) => left <= margin,
            Err(_) => true,
        }
    }
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

/// Everything needed to use and renew access to one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// The tokens.
    pub tokens: TokenSet,
    /// The client identity the tokens were issued to.
    pub client: ClientCredentials,
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// The token endpoint, for refreshing.
    pub token_endpoint: String,
    /// The `resource` parameter (RFC 8707) the tokens are bound to.
    pub resource: String,
    /// The scope that was requested (space-separated), the base of any step-up.
    pub requested_scope: Option<String>,
}

/// Keeps client credentials and tokens across flows (and, for a persistent store, across runs).
///
/// Keys are strings: the canonical MCP server URL for [`Authorization`]s, the issuer identifier
/// for [`ClientCredentials`] (client ids are per authorization server). Implementations are
/// synchronous; a store that persists should keep the secrets it holds private.
pub trait TokenStore: Send + Sync {
    /// The authorization kept for an MCP server.
    fn load(&self, server: &str) -> Option<Authorization>;
    /// Keeps the authorization for an MCP server, replacing any earlier one.
    fn save(&self, server: &str, authorization: Authorization);
    /// Forgets the authorization for an MCP server (e.g. after a refresh was refused).
    fn remove(&self, server: &str);
    /// The client credentials kept for an authorization server.
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials>;
    /// Keeps the client credentials (from Dynamic Client Registration) for an authorization server.
    fn save_client(&self, issuer: &str, client: ClientCredentials);
}

/// A [`TokenStore`] in memory: nothing outlives the process.
#[derive(Debug, Default, Clone)]
pub struct MemoryTokenStore {
    inner: Arc<Mutex<MemoryInner>>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    authorizations: HashMap<String, Authorization>,
    clients: HashMap<String, ClientCredentials>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut MemoryInner) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Option<Authorization> {
        self.with(|s| s.authorizations.get(server).cloned())
    }

    fn save(&self, server: &str, authorization: Authorization) {
        self.with(|s| s.authorizations.insert(server.to_owned(), authorization));
    }

    fn remove(&self, server: &str) {
        self.with(|s| s.authorizations.remove(server));
    }

    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.with(|s| s.clients.get(issuer).cloned())
    }

    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        self.with(|s| s.clients.insert(issuer.to_owned(), client));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_method_names_round_trip() {
        for m in [
            TokenEndpointAuth::ClientSecretBasic,
            TokenEndpointAuth::ClientSecretPost,
            TokenEndpointAuth::None,
            TokenEndpointAuth::PrivateKeyJwt,
        ] {
            assert_eq!(TokenEndpointAuth::from_name(m.as_str()), Some(m));
        }
        assert_eq!(TokenEndpointAuth::from_name("client_secret_jwt"), None);
        for t in [TokenType::Bearer, TokenType::DPoP] {
            assert_eq!(TokenType::from_name(t.as_str()), Some(t));
        }
        assert_eq!(TokenType::from_name("dpop"), Some(TokenType::DPoP));
        assert_eq!(TokenType::from_name("N_A"), None);
    }

    #[test]
    fn expiry_and_redaction() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let mut t = TokenSet {
            access_token: "sekrit".into(),
            token_type: TokenType::Bearer,
            issued_at: None,
            refresh_token: Some("r-sekrit".into()),
            expires_at: Some(now + Duration::from_secs(1)),
            scope: None,
        };
        assert!(!t.is_expired(now));
        assert!(t.is_expired(now + Duration::from_secs(1)));
        assert!(!format!("{t:?}").contains("sekrit"));
        t.expires_at = None;
        assert!(!t.is_expired(now + Duration::from_secs(1 << 30)));
        let c = ClientCredentials {
            client_id: "id".into(),
            client_secret: Some("sekrit".into()),
            auth_method: TokenEndpointAuth::ClientSecretPost,
        };
        assert!(!format!("{c:?}").contains("sekrit"));
    }

    #[test]
    fn renewal_margin_is_a_minute_or_a_tenth_of_the_lifetime() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let s = |secs| Duration::from_secs(secs);
        let token = |lifetime: u64, issued: bool| TokenSet {
            access_token: "a".into(),
            token_type: TokenType::Bearer,
            issued_at: issued.then_some(t0),
            refresh_token: None,
            expires_at: Some(t0 + s(lifetime)),
            scope: None,
        };
        // An hour: the last minute.
        let hour = token(3600, true);
        assert!(!hour.needs_renewal(t0 + s(3539)));
        assert!(hour.needs_renewal(t0 + s(3540)));
        assert!(hour.needs_renewal(t0 + s(4000)));
        // 30 s: the last 3 s.
        let short = token(30, true);
        assert!(!short.needs_renewal(t0 + s(26)));
        assert!(short.needs_renewal(t0 + s(27)));
        // Unknown issue time: a minute.
        let unknown = token(30, false);
        assert!(unknown.needs_renewal(t0));
        let mut never = token(1, true);
        never.expires_at = None;
        assert!(!never.needs_renewal(t0 + s(1 << 30)));
    }

    #[test]
    fn memory_store_keeps_and_forgets() {
        let s = MemoryTokenStore::new();
        let c = ClientCredentials {
            client_id: "id".into(),
            client_secret: None,
            auth_method: TokenEndpointAuth::None,
        };
        s.save_client("https://as", c.clone());
        assert_eq!(s.load_client("https://as"), Some(c.clone()));
        assert_eq!(s.load_client("https://other"), None);
        let a = Authorization {
            tokens: TokenSet {
                access_token: "a".into(),
                token_type: TokenType::Bearer,
                issued_at: None,
                refresh_token: None,
                expires_at: None,
                scope: None,
            },
            client: c,
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            resource: "https://r/mcp".into(),
            requested_scope: None,
        };
        s.save("https://r/mcp", a.clone());
        assert_eq!(s.clone().load("https://r/mcp"), Some(a));
        s.remove("https://r/mcp");
        assert_eq!(s.load("https://r/mcp"), None);
    }
}
