//! OAuth 2.1 in the HTTP client: what the application configures (the [`OAuthClient`], a
//! source of random bytes, how the user approves) and the error mapping of failed flows. The
//! transport sends the kept access token with every MCP request and runs an [`AuthFlow`]
//! (`crate::oauth`) when a reply asks for authorization.
//!
//! [`AuthFlow`]: crate::oauth::AuthFlow

use std::future::Future;
use std::sync::Arc;

use mcp_proto::{Error, ErrorKind};

use crate::oauth::{Entropy, OAuthClient, OAuthError};
use crate::runtime::BoxFuture;

/// How the user approves an authorization request: the application shows `url` (the
/// authorization endpoint with every parameter; typically opened in a browser) and resolves to
/// the URL its redirect URI was called with once the user approved or refused.
///
/// Without a handler the transport approves headlessly: it GETs `url` without following
/// redirects and reads the redirect `Location` — what authorization servers that approve
/// without a user (test and machine-to-machine setups) answer with.
///
/// Implemented by closures `Fn(String) -> impl Future<Output = Result<String, Error>>`.
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// Has the user approve at `url`; resolves to the callback URL (with `code` and `state`,
    /// or `error`). An `Err` fails the authorization with that error.
    fn authorize(&self, url: String) -> BoxFuture<Result<String, Error>>;
}

impl<F, Fut> AuthorizationHandler for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, Error>> + Send + 'static,
{
    fn authorize(&self, url: String) -> BoxFuture<Result<String, Error>> {
        Box::pin(self(url))
    }
}

/// A source of random bytes for PKCE verifiers and `state` values: one call per flow.
pub(crate) type EntropySource = dyn Fn() -> Result<Entropy, Error> + Send + Sync;

/// The OAuth part of [`HttpClientOptions`](super::HttpClientOptions).
#[derive(Clone)]
pub(crate) struct OAuthOptions {
    pub(crate) client: OAuthClient,
    pub(crate) entropy: Arc<EntropySource>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// The application's [`AuthorizationHandler`].
#[derive(Clone)]
pub(crate) struct Handler(pub(crate) Arc<dyn AuthorizationHandler>);

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthorizationHandler")
    }
}

/// The error of a failed authorization of `what` (the MCP request that asked for it).
pub(super) fn unauthorized(what: &str, e: &OAuthError) -> Error {
    Error::new(
        ErrorKind::Unauthorized,
        format!("{what}: authorization failed: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::OAuthConfig;

    #[test]
    fn closures_are_handlers_and_errors_say_what_failed() {
        let handler: Arc<dyn AuthorizationHandler> =
            Arc::new(|url: String| async move { Ok(format!("{url}?code=1")) });
        let got = futures_executor::block_on(handler.authorize("http://a/cb".into()));
        assert_eq!(got.unwrap(), "http://a/cb?code=1");
        let e = unauthorized("POST http://x/mcp", &OAuthError::StateMismatch);
        assert_eq!(e.kind(), ErrorKind::Unauthorized);
        assert!(
            e.message()
                .starts_with("POST http://x/mcp: authorization failed:")
        );
        let opts = OAuthOptions {
            client: OAuthClient::new(OAuthConfig::new("c", "http://localhost/cb")),
            entropy: Arc::new(|| Ok(Entropy::from_bytes([7; 48]))),
        };
        assert!(format!("{opts:?}").contains("OAuthOptions"));
        assert_eq!(format!("{:?}", Handler(handler)), "AuthorizationHandler");
    }
}
