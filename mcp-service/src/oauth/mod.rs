//! OAuth 2.1 authorization for MCP clients over HTTP (MCP "Authorization", 2025-11-25, with the
//! 2025-03-26 fallbacks), as a sans-IO flow that plugs into any HTTP transport.
//!
//! On a 401 (or a 403 `insufficient_scope`) from an MCP server, the transport reads the
//! [`Challenge`] from the reply, asks [`OAuthClient::authorize`] for an [`AuthFlow`], performs
//! the HTTP requests the flow yields with its own sender, and retries the MCP request with
//! `Authorization: Bearer <token>`:
//!
//! ```no_run
//! # use mcp_service::oauth::*;
//! # async fn send(_: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> { unimplemented!() }
//! # async fn run(oauth: OAuthClient, reply: http::Response<Vec<u8>>, random: [u8; 48]) -> Result<(), OAuthError> {
//! let challenge = Challenge::from_response(reply.status(), reply.headers());
//! let mut flow = oauth.authorize("https://mcp.example.com/mcp", &challenge, &Entropy::from_bytes(random))?;
//! let token = loop {
//!     match flow.step(std::time::SystemTime::now())? {
//!         Step::Send(req) | Step::Authorize(req) => {
//!             let reply = send(req).await; // no redirect following
//!             flow.handle_response(std::time::SystemTime::now(), reply)?;
//!         }
//!         Step::Done(token) => break token,
//!         _ => unreachable!(),
//!     }
//! };
//! # let _ = token; Ok(()) }
//! ```
//!
//! What it covers: Protected Resource Metadata discovery (RFC 9728: the `resource_metadata` of
//! the challenge, then the path-aware and root well-known URIs), authorization server metadata
//! discovery (RFC 8414 and OpenID Connect, path insertion and appending, in the spec's order;
//! without Protected Resource Metadata the server's origin with default `/authorize`, `/token`,
//! `/register` endpoints), the client identity (pre-registered, Client ID Metadata Document when
//! the server supports it, Dynamic Client Registration RFC 7591, kept per authorization server),
//! authorization code with PKCE S256 and `state`, the `resource` parameter (RFC 8707), scope
//! selection (challenge `scope`, else `scopes_supported`, else none), token endpoint
//! authentication (`client_secret_basic`, `client_secret_post`, `none`, and `private_key_jwt`
//! with feature `oauth-jwt`), step-up on `insufficient_scope` (stopping when it would ask for
//! nothing new), refresh tokens, and every authorization server the Protected Resource
//! Metadata lists (the next when one fails discovery).
//!
//! Besides the authorization code, the [`Grant`]s without a user: `client_credentials`
//! (SEP-1046), the JWT bearer grant with a workload identity token (SEP-1933), and
//! enterprise-managed authorization (SEP-990, an ID-JAG from the identity provider). With
//! feature `oauth-jwt`, DPoP-bound tokens (RFC 9449, `DpopKey`): every token request and
//! every MCP request carries a fresh proof, and a server's nonce is honoured.
//!
//! Tokens are kept by a [`TokenStore`]: [`MemoryTokenStore`], or [`FileTokenStore`] (a JSON
//! file readable by its owner alone) to keep them across runs. A token is renewed shortly
//! before it expires ([`TokenSet::needs_renewal`], [`OAuthClient::renew`]).
//!
//! What it never does: network IO, reading a clock, drawing random numbers — those are the
//! caller's. (The one exception: an [`AssertionSource`] reads its file or environment variable
//! when a grant needs the assertion.)

mod challenge;
mod discovery;
mod error;
mod file_store;
mod flow;
mod grant;
#[cfg(feature = "oauth-jwt")]
mod jwt;
mod pkce;
mod ssrf;
pub(crate) use ssrf::address_check as ssrf_address_check;
mod store;

use std::sync::Arc;
use std::time::SystemTime;

use url::Url;

pub use challenge::Challenge;
pub use discovery::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    canonical_resource, protected_resource_metadata_urls,
};
pub use error::OAuthError;
pub use file_store::FileTokenStore;
pub use flow::{AuthFlow, DPOP, DPOP_NONCE, Step, choose_auth_method, parse_token_response};
pub use grant::{
    AssertionSource, EnterpriseIdp, Grant, ID_JAG_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_BEARER_GRANT,
    JWT_CLIENT_ASSERTION, TOKEN_EXCHANGE_GRANT, parse_id_jag_response,
};
#[cfg(feature = "oauth-jwt")]
pub use jwt::{DpopKey, SigningAlgorithm, SigningKey};
pub use pkce::{Pkce, s256};
pub use store::{
    Authorization, ClientCredentials, MemoryTokenStore, RENEWAL_MARGIN, TokenEndpointAuth,
    TokenSet, TokenStore, TokenType,
};

/// Which scopes to request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopePolicy {
    /// The MCP spec's strategy: the challenge's `scope`, else every scope of the Protected
    /// Resource Metadata's `scopes_supported`, else no `scope` parameter.
    #[default]
    Discover,
    /// Always these scopes (space-separated).
    Fixed(String),
}

/// A client registered with the authorization server out of band.
#[derive(Clone, PartialEq, Eq)]
struct PreRegistered {
    client_id: String,
    client_secret: Option<String>,
    auth_method: Option<TokenEndpointAuth>,
}

/// How this client presents itself to authorization servers.
#[derive(Clone)]
pub struct OAuthConfig {
    client_name: String,
    redirect_uri: String,
    pre_registered: Option<PreRegistered>,
    client_metadata_url: Option<String>,
    registration_auth_method: Option<TokenEndpointAuth>,
    scope_policy: ScopePolicy,
    allow_private_addresses: bool,
    grant: Grant,
    #[cfg(feature = "oauth-jwt")]
    client_key: Option<SigningKey>,
    #[cfg(feature = "oauth-jwt")]
    dpop: Option<DpopKey>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field(
                "pre_registered_client_id",
                &self.pre_registered.as_ref().map(|p| &p.client_id),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scope_policy", &self.scope_policy)
            .field("grant", &self.grant)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// A client called `client_name` (shown to users, sent at registration) whose authorization
    /// redirects come back to `redirect_uri`.
    pub fn new(client_name: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        OAuthConfig {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            pre_registered: None,
            client_metadata_url: None,
            registration_auth_method: None,
            scope_policy: ScopePolicy::Discover,
            allow_private_addresses: false,
            grant: Grant::AuthorizationCode,
            #[cfg(feature = "oauth-jwt")]
            client_key: None,
            #[cfg(feature = "oauth-jwt")]
            dpop: None,
        }
    }

    /// How tokens are obtained (default [`Grant::AuthorizationCode`]); see [`Grant`] for the
    /// others and what they need.
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// The configured grant.
    pub fn grant_type(&self) -> &Grant {
        &self.grant
    }

    /// A client registered out of band that authenticates with `private_key_jwt` (RFC 7523
    /// §2.2): a JWT signed with `key` (`iss` and `sub` the client id, `aud` the authorization
    /// server's issuer) in each token request. Feature `oauth-jwt`.
    ///
    /// ```
    /// use mcp_service::oauth::{Grant, OAuthConfig, SigningAlgorithm, SigningKey};
    /// # fn pem() -> Vec<u8> { std::fs::read("client-key.pem").unwrap_or_default() }
    /// # fn run() -> Result<(), mcp_service::oauth::OAuthError> {
    /// let key = SigningKey::from_pem(&pem(), SigningAlgorithm::RS256)?;
    /// let config = OAuthConfig::new("reporter", "http://localhost/unused")
    ///     .grant(Grant::ClientCredentials)
    ///     .private_key_jwt("reporter-client", key);
    /// # let _ = config; Ok(()) }
    /// ```
    #[cfg(feature = "oauth-jwt")]
    pub fn private_key_jwt(mut self, client_id: impl Into<String>, key: SigningKey) -> Self {
        self.pre_registered = Some(PreRegistered {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: Some(TokenEndpointAuth::PrivateKeyJwt),
        });
        self.client_key = Some(key);
        self
    }

    /// Asks for DPoP-bound tokens (RFC 9449) with `key`: token requests carry a proof (unless
    /// the authorization server lists DPoP algorithms without ES256), and when the server
    /// issues a `DPoP` token every MCP request presents it as `Authorization: DPoP <token>`
    /// with a fresh proof in the `DPoP` header. A server's `use_dpop_nonce` is answered by
    /// sending the request again with its nonce. A server that issues `Bearer` tokens gets
    /// them used as such. Feature `oauth-jwt`.
    ///
    /// ```
    /// use mcp_service::oauth::{DpopKey, OAuthConfig};
    /// # fn run() -> Result<(), mcp_service::oauth::OAuthError> {
    /// let config = OAuthConfig::new("desktop", "http://localhost:3000/callback")
    ///     .dpop(DpopKey::generate()?);
    /// # let _ = config; Ok(()) }
    /// ```
    #[cfg(feature = "oauth-jwt")]
    pub fn dpop(mut self, key: DpopKey) -> Self {
        self.dpop = Some(key);
        self
    }

    /// The DPoP key, when DPoP is on.
    #[cfg(feature = "oauth-jwt")]
    pub fn dpop_key(&self) -> Option<&DpopKey> {
        self.dpop.as_ref()
    }

    /// Lets the flow fetch URLs that a server names on loopback, private, link-local and
    /// cloud metadata addresses whatever the MCP server's own address (default: only in the
    /// server's own kind of network, and never a metadata service; see the rules below).
    ///
    /// Every URL the flow fetches comes from the server: its challenge's `resource_metadata`,
    /// the authorization servers its metadata lists, their endpoints. By default:
    /// - a URL on a loopback, private, link-local or unspecified address (or `localhost`) is
    ///   fetched only when the MCP server's URL is on that same kind of address (a server on
    ///   `127.0.0.1` may use an authorization server on `localhost`, one on `10.0.0.5` one on
    ///   `10.1.2.3`; a public server may use neither);
    /// - a cloud metadata address (`169.254.169.254`, `fd00:ec2::254`, `100.100.100.200`,
    ///   `metadata.google.internal`) is never fetched;
    /// - a challenge's `resource_metadata` is used only on the MCP server's own origin;
    /// - no request of the flow follows a redirect, and none carries the MCP requests'
    ///   headers.
    ///
    /// Host names are not resolved for these rules (a name that resolves to a private address
    /// is not caught). A refused URL fails the flow with [`OAuthError::InvalidUrl`] saying
    /// why.
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private_addresses = allow;
        self
    }

    /// Use a client registered out of band (no registration step). The token endpoint
    /// authentication method is picked from the server's metadata unless
    /// [`token_endpoint_auth`](Self::token_endpoint_auth) sets it.
    pub fn pre_registered(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        let auth_method = self.pre_registered.as_ref().and_then(|p| p.auth_method);
        self.pre_registered = Some(PreRegistered {
            client_id: client_id.into(),
            client_secret,
            auth_method,
        });
        self
    }

    /// The token endpoint authentication method: of the pre-registered client if there is one,
    /// else the one asked for at Dynamic Client Registration (by default the first the server
    /// lists that this client implements).
    pub fn token_endpoint_auth(mut self, method: TokenEndpointAuth) -> Self {
        match &mut self.pre_registered {
            Some(p) => p.auth_method = Some(method),
            None => self.registration_auth_method = Some(method),
        }
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document (SEP-991), used as `client_id`
    /// with servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Which scopes to request (default [`ScopePolicy::Discover`]).
    pub fn scope_policy(mut self, policy: ScopePolicy) -> Self {
        self.scope_policy = policy;
        self
    }
}

/// Random bytes for one flow, from a cryptographically secure source of the caller's choice.
#[derive(Clone)]
pub struct Entropy {
    /// Seeds the PKCE code verifier.
    pub pkce: [u8; 32],
    /// Becomes the `state` parameter.
    pub state: [u8; 16],
}

impl Entropy {
    /// Splits 48 random bytes into the PKCE seed and the `state`.
    pub fn from_bytes(bytes: [u8; 48]) -> Entropy {
        let mut pkce = [0; 32];
        let mut state = [0; 16];
        let (a, b) = bytes.split_at(32);
        pkce.copy_from_slice(a);
        state.copy_from_slice(b);
        Entropy { pkce, state }
    }
}

impl std::fmt::Debug for Entropy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Entropy(<redacted>)")
    }
}

/// The authorization side of an MCP HTTP client: configuration plus a [`TokenStore`].
/// Cheap to clone; clones share the store.
#[derive(Clone)]
pub struct OAuthClient {
    config: Arc<OAuthConfig>,
    store: Arc<dyn TokenStore>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client keeping its credentials in memory.
    pub fn new(config: OAuthConfig) -> Self {
        Self::with_store(config, Arc::new(MemoryTokenStore::new()))
    }

    /// A client keeping its credentials in `store`.
    pub fn with_store(config: OAuthConfig, store: Arc<dyn TokenStore>) -> Self {
        OAuthClient {
            config: Arc::new(config),
            store,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The access token kept for the MCP server at `server_url`, if there is one that has not
    /// expired at `now`. Send it as its [`TokenType`] says ([`request_headers`](Self::request_headers)
    /// builds the headers).
    pub fn access_token(&self, server_url: &str, now: SystemTime) -> Option<String> {
        let url = Url::parse(server_url).ok()?;
        self.store
            .load(&canonical_resource(&url))
            .filter(|a| !a.tokens.is_expired(now))
            .map(|a| a.tokens.access_token)
    }

    /// The authorization kept for the MCP server at `server_url`.
    pub fn authorization(&self, server_url: &str) -> Option<Authorization> {
        let url = Url::parse(server_url).ok()?;
        self.store.load(&canonical_resource(&url))
    }

    /// Forgets the tokens for the MCP server at `server_url` (client registrations are kept).
    pub fn forget(&self, server_url: &str) {
        if let Ok(url) = Url::parse(server_url) {
            self.store.remove(&canonical_resource(&url));
        }
    }

    /// Starts authorizing for the MCP server at `server_url` after it answered with
    /// `challenge` ([`Challenge::default`] to authorize before any request, e.g. to renew an
    /// expired token). With a kept refresh token and no step-up, the flow refreshes first and
    /// falls back to a full authorization if the refresh is refused.
    ///
    /// # Errors
    /// Fails at once with [`OAuthError::InvalidUrl`] when `server_url` is not an http(s) URL
    /// with a host, or with [`OAuthError::StepUpExhausted`] when a step-up challenge asks only
    /// for scopes already requested: this is what bounds step-up retries.
    pub fn authorize(
        &self,
        server_url: &str,
        challenge: &Challenge,
        entropy: &Entropy,
    ) -> Result<AuthFlow, OAuthError> {
        let url = Self::server(server_url)?;
        AuthFlow::new(
            self.config.clone(),
            self.store.clone(),
            url,
            challenge.clone(),
            entropy,
            false,
        )
    }

    /// Starts renewing the authorization for the MCP server at `server_url` before its token
    /// expires ([`needs_renewal`](Self::needs_renewal)): with a refresh token, a refresh;
    /// without one (or when the refresh is refused), the configured grant when it needs no
    /// user. A refused refresh of an authorization code grant fails the flow and leaves the
    /// kept token as it is (only the user can renew it).
    ///
    /// # Errors
    /// [`OAuthError::InvalidUrl`] as for [`authorize`](Self::authorize);
    /// [`OAuthError::Configuration`] when there is nothing to renew with (an authorization
    /// code grant without a refresh token: only the user can renew it).
    pub fn renew(&self, server_url: &str, entropy: &Entropy) -> Result<AuthFlow, OAuthError> {
        let url = Self::server(server_url)?;
        AuthFlow::new(
            self.config.clone(),
            self.store.clone(),
            url,
            Challenge::default(),
            entropy,
            true,
        )
    }

    /// Whether the token kept for the MCP server at `server_url` should be renewed at `now`
    /// ([`TokenSet::needs_renewal`]) and can be without a user: there is a refresh token, or
    /// the grant needs no user.
    pub fn needs_renewal(&self, server_url: &str, now: SystemTime) -> bool {
        self.authorization(server_url).is_some_and(|a| {
            a.tokens.needs_renewal(now)
                && (a.tokens.refresh_token.is_some() || !self.config.grant.is_interactive())
        })
    }

    /// The headers that present the access token kept for the MCP server at `server_url` on a
    /// `method` request to `request_url` at `now`: `Authorization: Bearer <token>`, or for a
    /// DPoP-bound token `Authorization: DPoP <token>` and a `DPoP` proof (its `jti` from
    /// `jti`, random bytes fresh for every request). `None` without an unexpired token.
    ///
    /// # Errors
    /// [`OAuthError::Key`] when the proof cannot be signed; [`OAuthError::Configuration`] for
    /// a DPoP-bound token without a DPoP key.
    pub fn request_headers(
        &self,
        server_url: &str,
        method: &str,
        request_url: &str,
        now: SystemTime,
        jti: &[u8; 16],
    ) -> Result<Option<RequestHeaders>, OAuthError> {
        let Some(a) = self
            .authorization(server_url)
            .filter(|a| !a.tokens.is_expired(now))
        else {
            return Ok(None);
        };
        let token = a.tokens.access_token;
        match a.tokens.token_type {
            TokenType::DPoP => {
                let proof = dpop_proof(&self.config, method, request_url, Some(&token), now, jti)?
                    .ok_or_else(|| {
                        OAuthError::Configuration(
                            "a DPoP-bound token, but this client has no DPoP key".to_owned(),
                        )
                    })?;
                Ok(Some(RequestHeaders {
                    authorization: format!("DPoP {token}"),
                    dpop: Some(proof),
                }))
            }
            _ => Ok(Some(RequestHeaders {
                authorization: format!("Bearer {token}"),
                dpop: None,
            })),
        }
    }

    /// Keeps a `DPoP-Nonce` a server sent in reply to a request to `url` (RFC 9449 §8, §9):
    /// the next proofs for that server carry it. Without DPoP, nothing.
    pub fn dpop_nonce(&self, url: &str, nonce: &str) {
        dpop_set_nonce(&self.config, url, nonce);
    }

    /// Whether DPoP is on (a DPoP key is configured).
    pub fn uses_dpop(&self) -> bool {
        dpop_enabled(&self.config)
    }

    fn server(server_url: &str) -> Result<Url, OAuthError> {
        let url = Url::parse(server_url).map_err(|e| OAuthError::InvalidUrl {
            what: "MCP server",
            url: server_url.to_owned(),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(OAuthError::InvalidUrl {
                what: "MCP server",
                url: server_url.to_owned(),
                reason: "not an http(s) URL with a host".to_owned(),
            });
        }
        Ok(url)
    }
}

/// The headers of an MCP request presenting an access token
/// ([`OAuthClient::request_headers`]).
#[derive(Clone, PartialEq, Eq)]
pub struct RequestHeaders {
    /// The `Authorization` value: `Bearer <token>` or `DPoP <token>`.
    pub authorization: String,
    /// The `DPoP` proof, for a DPoP-bound token.
    pub dpop: Option<String>,
}

impl std::fmt::Debug for RequestHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHeaders")
            .field(
                "scheme",
                &self.authorization.split(' ').next().unwrap_or_default(),
            )
            .field("dpop", &self.dpop.is_some())
            .finish()
    }
}

/// Whether `config` has a DPoP key.
fn dpop_enabled(config: &OAuthConfig) -> bool {
    #[cfg(feature = "oauth-jwt")]
    {
        config.dpop.is_some()
    }
    #[cfg(not(feature = "oauth-jwt"))]
    {
        let _ = config;
        false
    }
}

/// A DPoP proof with `config`'s key, `None` without one.
fn dpop_proof(
    config: &OAuthConfig,
    method: &str,
    url: &str,
    access_token: Option<&str>,
    now: SystemTime,
    jti: &[u8; 16],
) -> Result<Option<String>, OAuthError> {
    #[cfg(feature = "oauth-jwt")]
    {
        config
            .dpop
            .as_ref()
            .map(|k| k.proof(method, url, access_token, now, jti))
            .transpose()
    }
    #[cfg(not(feature = "oauth-jwt"))]
    {
        let _ = (config, method, url, access_token, now, jti);
        Ok(None)
    }
}

fn dpop_set_nonce(config: &OAuthConfig, url: &str, nonce: &str) {
    #[cfg(feature = "oauth-jwt")]
    if let Some(k) = &config.dpop {
        k.set_nonce(url, nonce);
    }
    #[cfg(not(feature = "oauth-jwt"))]
    let _ = (config, url, nonce);
}

/// The `private_key_jwt` client assertion with `config`'s key.
fn client_assertion(
    config: &OAuthConfig,
    client_id: &str,
    audience: &str,
    now: SystemTime,
    jti: &[u8; 16],
) -> Result<String, OAuthError> {
    #[cfg(feature = "oauth-jwt")]
    {
        config
            .client_key
            .as_ref()
            .ok_or_else(|| {
                OAuthError::Configuration(
                    "private_key_jwt without a signing key (OAuthConfig::private_key_jwt)"
                        .to_owned(),
                )
            })?
            .client_assertion(client_id, audience, now, jti)
    }
    #[cfg(not(feature = "oauth-jwt"))]
    {
        let _ = (config, client_id, audience, now, jti);
        Err(OAuthError::Configuration(
            "private_key_jwt needs the feature `oauth-jwt`".to_owned(),
        ))
    }
}
