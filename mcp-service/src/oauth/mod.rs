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
//!     match flow.step()? {
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
//! authentication (`client_secret_basic`, `client_secret_post`, `none`), step-up on
//! `insufficient_scope` (stopping when it would ask for nothing new), and refresh tokens.
//!
//! What it never does: IO, reading a clock, drawing random numbers — those are the caller's.

mod challenge;
mod discovery;
mod error;
mod flow;
mod pkce;
mod ssrf;
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
pub use flow::{AuthFlow, Step, choose_auth_method, parse_token_response};
pub use pkce::{Pkce, s256};
pub use store::{
    Authorization, ClientCredentials, MemoryTokenStore, TokenEndpointAuth, TokenSet, TokenStore,
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
        }
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
    /// expired at `now`. Send it as `Authorization: Bearer <token>`.
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
        AuthFlow::new(
            self.config.clone(),
            self.store.clone(),
            url,
            challenge.clone(),
            entropy,
        )
    }
}
