//! The MCP server as an OAuth 2.1 resource server (feature `resource-server`): the server side
//! of the specification's authorization section.
//!
//! Every HTTP request to a protected endpoint must carry `Authorization: Bearer <token>` (never
//! a query parameter). A [`TokenValidator`] turns the token into an [`Identity`]; the two
//! shipped ones check JWT access tokens against the authorization server's JWKS
//! ([`JwtValidator`]) or ask its RFC 7662 introspection endpoint
//! ([`IntrospectionValidator`]). A [`ResourceServer`] puts it together for the HTTP server:
//!
//! - no token, or one the validator refuses: `401` with
//!   `WWW-Authenticate: Bearer resource_metadata="<PRM URL>"` (plus `scope` when the server
//!   requires scopes, and `error="invalid_token"` when a token was given);
//! - a valid token without a scope the server ([`ResourceServer::required_scopes`]) or the
//!   called tool, resource or prompt ([`ServerBuilder::tool_scopes`] and friends) requires:
//!   `403` with `error="insufficient_scope"`, `scope="<what the call needs>"` — the step-up
//!   challenge. The check is made before the request reaches its session, from the JSON-RPC
//!   message(s) in the POST: a batch is refused whole when any of its calls lacks a scope;
//!   2026-07-28 (stateless) requests are checked alike;
//! - the RFC 9728 Protected Resource Metadata document at
//!   `/.well-known/oauth-protected-resource` and at its path-suffixed form
//!   (`/.well-known/oauth-protected-resource/mcp` for a resource `https://host/mcp`);
//! - the [`Identity`] in every handler's context ([`HandlerContext::identity`], or
//!   `extension::<Identity>()`), with the HTTP request head ([`HandlerContext::http_request`]);
//! - each session bound to the identity (issuer, subject, client) that created it: a request
//!   with another valid token on that session id is answered `404 Session not found`, never
//!   served (see [`SessionOwner`](mcp_proto::http::SessionOwner)).
//!
//! The validator's fetches (JWKS, introspection) go through an [`HttpFetch`]; [`ConnectorFetch`]
//! is one over the HTTP client's [`Connector`](crate::Connector) (each driver has one).
//!
//! ```no_run
//! # async fn run<D: mcp_service::driver::Driver>(rt: D, listener: D::TcpListener) -> std::io::Result<()> {
//! use mcp_service::driver::TcpConnector;
//! use mcp_service::resource_server::{ConnectorFetch, JwtValidator, ResourceServer};
//!
//! let fetch = ConnectorFetch::new(rt.clone(), TcpConnector(rt.clone()));
//! let validator = JwtValidator::new("http://auth.example/jwks.json", fetch)
//!     .issuer("http://auth.example")
//!     .audience("http://127.0.0.1:8080/mcp");
//! let auth = ResourceServer::new("http://127.0.0.1:8080/mcp", validator)
//!     .expect("an absolute URL")
//!     .authorization_server("http://auth.example")
//!     .required_scopes(["mcp"]);
//! let server = mcp_service::Server::builder("notes", "1.0")
//!     .resource_server(auth)
//!     .tool_scopes("write_note", ["notes:write"])
//!     .build();
//! let config = mcp_proto::http::EndpointConfig::new(server.config().clone());
//! mcp_service::driver::serve_http(rt, server, listener, config).await
//! # }
//! ```
//!
//! [`ServerBuilder::tool_scopes`]: crate::ServerBuilder::tool_scopes
//! [`HandlerContext::identity`]: crate::server::HandlerContext::identity
//! [`HandlerContext::http_request`]: crate::server::HandlerContext::http_request

mod challenge;
mod fetch;
mod guard;
mod identity;
mod introspection;
mod jwt;
mod metadata;

use std::sync::Arc;

pub use challenge::{bearer_challenge, bearer_token};
pub use fetch::{ConnectorFetch, HttpFetch};
pub use identity::Identity;
pub use introspection::{ClientAuth, IntrospectionValidator};
pub use jwt::JwtValidator;
pub use metadata::{ProtectedResourceMetadata, metadata_path};

pub(crate) use guard::Guard;

use crate::runtime::BoxFuture;

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid for this server: malformed, badly signed, expired, not yet
    /// valid, for another audience or issuer, inactive. Answered `401` with
    /// `error="invalid_token"`; the text is the challenge's `error_description` (keep it free
    /// of secrets).
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The validator could not decide (the JWKS or the introspection endpoint unreachable or
    /// answering nonsense). Answered `503`: the client may retry, its token is not blamed.
    #[error("token validation unavailable: {0}")]
    Unavailable(String),
}

/// Checks bearer tokens: a token in, the identity it stands for out. Implemented by
/// [`JwtValidator`], [`IntrospectionValidator`], and any
/// `Fn(String) -> impl Future<Output = Result<Identity, TokenError>>` (a fixed table of tokens
/// in a test, a database lookup).
///
/// Runtime-neutral: the future is boxed and `Send`; it may be polled on any executor.
///
/// ```
/// use mcp_service::resource_server::{Identity, TokenError, TokenValidator};
///
/// let validator = |token: String| async move {
///     match token.as_str() {
///         "let-me-in" => Ok(Identity::new("alice").with_scopes(["mcp"])),
///         _ => Err(TokenError::Invalid("unknown token".into())),
///     }
/// };
/// # fn check(_: &impl TokenValidator) {}
/// check(&validator);
/// ```
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates `token` (the bearer credential, without the `Bearer ` prefix).
    fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>>;
}

impl<F, Fut> TokenValidator for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Identity, TokenError>> + Send + 'static,
{
    fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>> {
        Box::pin(self(token))
    }
}

impl<T: TokenValidator + ?Sized> TokenValidator for Arc<T> {
    fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>> {
        (**self).validate(token)
    }
}

/// The resource server in front of an MCP server's HTTP endpoints: who may call, and what the
/// server tells a client that may not. Give it to the server with
/// [`ServerBuilder::resource_server`](crate::ServerBuilder::resource_server): whatever serves
/// that server over HTTP (the drivers' `serve_http`, `HyperService`, `serve_ws`) applies it.
pub struct ResourceServer {
    validator: Arc<dyn TokenValidator>,
    metadata: ProtectedResourceMetadata,
    /// The absolute URL of the metadata document (the challenges' `resource_metadata`).
    metadata_url: String,
    /// The paths the metadata document is served at.
    metadata_paths: Vec<String>,
    required: Vec<String>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.metadata.resource)
            .field("metadata_url", &self.metadata_url)
            .field("required_scopes", &self.required)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// A resource server for the MCP endpoint at `resource` (its canonical URL, e.g.
    /// `https://mcp.example.com/mcp`: what clients name as the RFC 8707 `resource` and tokens
    /// must be issued for), checking tokens with `validator`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) when `resource` is not an
    /// absolute `http`/`https` URL with a host and without a fragment (RFC 8707 §2).
    pub fn new(resource: &str, validator: impl TokenValidator) -> Result<Self, crate::Error> {
        let (metadata_url, suffixed) = metadata::metadata_location(resource)?;
        let mut metadata_paths = vec![metadata::WELL_KNOWN.to_owned()];
        if suffixed != metadata::WELL_KNOWN {
            metadata_paths.push(suffixed);
        }
        Ok(ResourceServer {
            validator: Arc::new(validator),
            metadata: ProtectedResourceMetadata::new(resource),
            metadata_url,
            metadata_paths,
            required: Vec::new(),
        })
    }

    /// Adds an authorization server (its issuer URL) to the metadata's
    /// `authorization_servers`: where clients get tokens.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.metadata.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes every request needs (checked on every request; named in the 401 challenge's
    /// `scope`, and part of `scopes_supported`). Default: none.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required = scopes.into_iter().map(Into::into).collect();
        for s in &self.required {
            if !self.metadata.scopes_supported.contains(s) {
                self.metadata.scopes_supported.push(s.clone());
            }
        }
        self
    }

    /// Adds scopes to the metadata's `scopes_supported` (those of tools, resources and
    /// prompts, typically).
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        for s in scopes {
            let s = s.into();
            if !self.metadata.scopes_supported.contains(&s) {
                self.metadata.scopes_supported.push(s);
            }
        }
        self
    }

    /// Sets the metadata's `resource_name` (a human-readable name).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.metadata.resource_name = Some(name.into());
        self
    }

    /// Sets the metadata's `resource_documentation` (a URL for developers).
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.metadata.resource_documentation = Some(url.into());
        self
    }

    /// The Protected Resource Metadata document served.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.metadata
    }

    /// The absolute URL of the metadata document: the challenges' `resource_metadata`.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The paths the metadata document is served at (`/.well-known/oauth-protected-resource`
    /// and, for a resource with a path, its path-suffixed form).
    pub fn metadata_paths(&self) -> &[String] {
        &self.metadata_paths
    }

    /// The scopes every request needs.
    pub fn scopes(&self) -> &[String] {
        &self.required
    }

    /// Validates a token with the server's validator.
    ///
    /// # Errors
    /// The validator's [`TokenError`].
    pub fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>> {
        self.validator.validate(token)
    }

    /// The `401` for a request without a usable token: `error` is `None` when it had none
    /// (the challenge then names only `resource_metadata` and `scope`), else the
    /// `invalid_token` description.
    pub fn unauthorized(&self, error: Option<&str>) -> http::Response<Vec<u8>> {
        let scope = self.required.join(" ");
        let mut params: Vec<(&str, &str)> = Vec::new();
        if let Some(e) = error {
            params.push(("error", "invalid_token"));
            params.push(("error_description", e));
        }
        if !scope.is_empty() {
            params.push(("scope", &scope));
        }
        params.push(("resource_metadata", &self.metadata_url));
        let body = match error {
            Some(e) => serde_json::json!({"error": "invalid_token", "error_description": e}),
            None => serde_json::json!({
                "error": "invalid_token",
                "error_description": "Missing Authorization header (Bearer token)"
            }),
        };
        challenge::reply(http::StatusCode::UNAUTHORIZED, &params, &body)
    }

    /// The `403` step-up challenge for a request whose token lacks scopes: `needed` are the
    /// scopes the request needs (the server's and its call's), all named in `scope`.
    pub fn insufficient_scope(&self, needed: &[String]) -> http::Response<Vec<u8>> {
        let mut all: Vec<&str> = self.required.iter().map(String::as_str).collect();
        for s in needed {
            if !all.contains(&s.as_str()) {
                all.push(s);
            }
        }
        let scope = all.join(" ");
        let description = format!("the request needs the scope(s): {scope}");
        let params = [
            ("error", "insufficient_scope"),
            ("error_description", description.as_str()),
            ("scope", scope.as_str()),
            ("resource_metadata", self.metadata_url.as_str()),
        ];
        let body = serde_json::json!({
            "error": "insufficient_scope",
            "error_description": description,
        });
        challenge::reply(http::StatusCode::FORBIDDEN, &params, &body)
    }
}
