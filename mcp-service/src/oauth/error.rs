//! Why an authorization flow stopped.

use http::StatusCode;

/// An authorization flow's failure. Each says which step failed and what the peer said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL (server URL, metadata value, redirect) did not parse or is not usable.
    #[error("invalid {what} URL {url:?}: {reason}")]
    InvalidUrl {
        /// Which URL.
        what: &'static str,
        /// The text that was given.
        url: String,
        /// Why it is not usable.
        reason: String,
    },
    /// A metadata document or endpoint reply was not what its specification requires.
    #[error("invalid {what} from {url}: {reason}")]
    InvalidResponse {
        /// Which document or reply.
        what: &'static str,
        /// Where it came from.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A request got a status the step cannot continue from.
    #[error("{what} at {url} answered HTTP {status}{}", detail(error, description))]
    Http {
        /// Which request.
        what: &'static str,
        /// Where it went.
        url: String,
        /// The reply's status.
        status: StatusCode,
        /// The OAuth `error` code of the reply body, when it has one.
        error: Option<String>,
        /// The OAuth `error_description`, when it has one.
        description: Option<String>,
    },
    /// The Protected Resource Metadata names a different resource than the MCP server.
    #[error("protected resource metadata is for {found:?}, not for the MCP server {expected:?}")]
    ResourceMismatch {
        /// The MCP server URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The authorization server metadata names a different issuer than it was fetched for.
    #[error("authorization server metadata names issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// The authorization server says it names itself in authorization responses (RFC 9207
    /// `authorization_response_iss_parameter_supported`), but the response had no `iss`.
    #[error("the authorization response has no `iss` although {issuer} says it sends one")]
    MissingIssuer {
        /// The issuer that should have been named.
        issuer: String,
    },
    /// No authorization server metadata was found at any of the well-known locations.
    #[error("no authorization server metadata for {issuer} (tried {tried})")]
    NoAuthorizationServerMetadata {
        /// The issuer.
        issuer: String,
        /// The URLs tried, comma-separated.
        tried: String,
    },
    /// The authorization server does not advertise PKCE `S256`; MCP clients must not proceed.
    #[error("authorization server {issuer} does not advertise PKCE S256")]
    PkceNotSupported {
        /// The issuer.
        issuer: String,
    },
    /// There is no way to get a client id: no pre-registration, no Client ID Metadata Document
    /// support, no registration endpoint.
    #[error(
        "no client registration for {issuer}: not pre-registered, no client ID metadata document support, no registration endpoint"
    )]
    NoClientRegistration {
        /// The issuer.
        issuer: String,
    },
    /// The authorization endpoint redirected back with an error (RFC 6749 §4.1.2.1).
    #[error("authorization refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The `error` code.
        error: String,
        /// The `error_description`.
        description: Option<String>,
    },
    /// The redirect back from the authorization endpoint is not one this flow can accept.
    #[error("invalid authorization redirect: {0}")]
    InvalidRedirect(String),
    /// The redirect's `state` is not the one this flow sent (possible CSRF).
    #[error("authorization redirect state does not match the request")]
    StateMismatch,
    /// A step-up was asked for scopes that were already requested: another authorization would
    /// not help, so the flow stops instead of looping.
    #[error("the server still requires scope {scope:?} after it was granted; not retrying")]
    StepUpExhausted {
        /// The scope the server asked for.
        scope: String,
    },
    /// A JWT assertion (workload identity token, ID token) could not be read.
    #[error("no assertion from {from}: {reason}")]
    Assertion {
        /// Where it was to come from.
        from: String,
        /// Why it is not there.
        reason: String,
    },
    /// A key could not be used: a PEM that does not hold a key of the algorithm, a failed
    /// signature.
    #[error("{what}: {reason}")]
    Key {
        /// Which key or signature.
        what: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The grant needs something the configuration does not have (e.g. `client_credentials`
    /// without a pre-registered client, a DPoP-bound token without a DPoP key).
    #[error("{0}")]
    Configuration(String),
    /// A request of the flow could not be carried out (the connection failed or timed out),
    /// reported by the caller with [`AuthFlow::handle_error`](super::AuthFlow::handle_error).
    #[error("{what} at {url} failed: {reason}")]
    Transport {
        /// Which request.
        what: &'static str,
        /// Where it went.
        url: String,
        /// What the caller saw.
        reason: String,
    },
    /// A reply was handed to a flow that is not waiting for one.
    #[error("the authorization flow is not waiting for a reply")]
    NotWaiting,
}

fn detail(error: &Option<String>, description: &Option<String>) -> String {
    match (error, description) {
        (Some(e), Some(d)) => format!(": {e} ({d})"),
        (Some(e), None) => format!(": {e}"),
        (None, Some(d)) => format!(": {d}"),
        (None, None) => String::new(),
    }
}
