//! One authorization, as a state machine: it yields the HTTP requests to perform and consumes
//! their replies until it holds an access token or an error.
//!
//! Order of business: refresh (when a refresh token is kept and this is not a step-up) →
//! Protected Resource Metadata → authorization server metadata (each server the metadata lists,
//! in order, until one has usable metadata) → client identity (configured, kept, Client ID
//! Metadata Document, or Dynamic Client Registration) → the grant: the authorization request
//! (PKCE S256, `state`, `resource`, `scope`) and the code's token request, or at once the
//! token request of `client_credentials` or the JWT bearer grant (after the token exchange at
//! the identity provider for enterprise-managed authorization). Token requests carry a DPoP
//! proof when a DPoP key is configured, and are sent again once with the server's nonce when
//! it asks for one. No IO, no clock, no randomness: the caller sends the requests, passes the
//! time, and supplies the random bytes.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use url::Url;
use url::form_urlencoded;

use super::challenge::Challenge;
use super::discovery::{
    self, AuthorizationServerMetadata, ProtectedResourceMetadata, canonical_resource,
    issuer_matches, resource_matches,
};
use super::error::OAuthError;
use super::grant::{self, Grant, JWT_CLIENT_ASSERTION, parse_id_jag_response};
use super::pkce::{Pkce, b64url};
use super::store::{
    Authorization, ClientCredentials, TokenEndpointAuth, TokenSet, TokenStore, TokenType,
};
use super::{Entropy, OAuthConfig, ScopePolicy};

/// The `DPoP` request header (RFC 9449 §4.1).
pub const DPOP: header::HeaderName = header::HeaderName::from_static("dpop");
/// The `DPoP-Nonce` reply header (RFC 9449 §8).
pub const DPOP_NONCE: header::HeaderName = header::HeaderName::from_static("dpop-nonce");
/// Token requests sent again with a server's fresh DPoP nonce, per request.
const NONCE_RETRIES: u8 = 1;

/// What an [`AuthFlow`] wants done next.
#[derive(Debug)]
#[non_exhaustive]
pub enum Step {
    /// Send this request (do not follow redirects) and pass the reply to
    /// [`AuthFlow::handle_response`] (or a failure to send it to
    /// [`AuthFlow::handle_error`]).
    Send(Request<Vec<u8>>),
    /// The authorization request (a `GET` of the authorization URL, [`Request::uri`]). A host
    /// with a user opens the URL in a browser and passes the URL its redirect URI was called
    /// with to [`AuthFlow::handle_callback`]; a headless host (an authorization server that
    /// approves without a user, as in tests) sends it without following redirects and passes
    /// the reply to [`AuthFlow::handle_response`].
    Authorize(Request<Vec<u8>>),
    /// Authorized: the access token. [`AuthFlow::authorization`] has the full record (with
    /// the token type: `Bearer`, or `DPoP` for a DPoP-bound token), already saved in the
    /// token store.
    Done(String),
}

#[derive(Debug)]
enum State {
    Refresh,
    ResourceMetadata {
        candidates: Vec<Url>,
        next: usize,
    },
    ServerMetadata {
        candidates: Vec<Url>,
        next: usize,
    },
    Register,
    Authorize {
        url: Url,
    },
    /// The token exchange at the enterprise identity provider (ID-JAG).
    TokenExchange,
    Token,
    Done(Box<Authorization>),
    Failed(OAuthError),
}

/// What is added to a request when it is sent, dated then ([`AuthFlow::step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    /// A DPoP proof for the token endpoint, with this `jti`.
    Dpop([u8; 16]),
    /// The `private_key_jwt` client assertion, with this `jti`, for the audience of the
    /// flow's authorization server.
    ClientAssertion([u8; 16]),
}

/// A request to be made, kept as parts so that [`AuthFlow::step`] can be asked again.
#[derive(Debug, Clone)]
struct Pending {
    method: Method,
    url: Url,
    headers: Vec<(header::HeaderName, String)>,
    body: Vec<u8>,
    sign: Vec<Sign>,
    /// Times the request was sent again with a DPoP nonce.
    nonce_retries: u8,
}

impl Pending {
    fn get(url: Url) -> Pending {
        Pending {
            method: Method::GET,
            url,
            headers: vec![(header::ACCEPT, "application/json".to_owned())],
            body: Vec::new(),
            sign: Vec::new(),
            nonce_retries: 0,
        }
    }
}

/// One authorization of one MCP server. Made by [`OAuthClient::authorize`](super::OAuthClient::authorize).
///
/// Drive it with [`step`](Self::step) and [`handle_response`](Self::handle_response) until
/// [`Step::Done`]; any error ends the flow (and [`step`](Self::step) repeats it).
pub struct AuthFlow {
    config: Arc<OAuthConfig>,
    store: Arc<dyn TokenStore>,
    server_url: Url,
    server_key: String,
    challenge: Challenge,
    pkce: Pkce,
    state_param: String,
    /// Seeds the `jti`s of the flow's signed JWTs.
    jti_seed: [u8; 32],
    jtis: u32,
    prior: Option<Authorization>,
    /// Renewing a token that still works: a refused refresh of an authorization code grant
    /// fails instead of starting over (which would need the user).
    renew: bool,
    /// The `resource` parameter (RFC 8707).
    resource: String,
    prm: Option<ProtectedResourceMetadata>,
    /// The authorization servers the Protected Resource Metadata lists, and the next to try.
    servers: Vec<Url>,
    next_server: usize,
    /// Why the servers tried so far failed discovery.
    server_errors: Vec<OAuthError>,
    issuer: Option<Url>,
    /// No Protected Resource Metadata: the 2025-03-26 rules (the MCP server's origin is the
    /// authorization server, default endpoints when it has no metadata).
    legacy: bool,
    metadata: Option<AuthorizationServerMetadata>,
    client: Option<ClientCredentials>,
    scope: Option<String>,
    tried: Vec<String>,
    state: State,
    pending: Option<Pending>,
}

impl std::fmt::Debug for AuthFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthFlow")
            .field("server_url", &self.server_url.as_str())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl AuthFlow {
    pub(super) fn new(
        config: Arc<OAuthConfig>,
        store: Arc<dyn TokenStore>,
        server_url: Url,
        challenge: Challenge,
        entropy: &Entropy,
        renew: bool,
    ) -> Result<AuthFlow, OAuthError> {
        let server_key = canonical_resource(&server_url);
        let prior = store.load(&server_key);
        let mut seed = Sha256::new();
        seed.update(b"mcp-oauth-jti");
        seed.update(entropy.pkce);
        seed.update(entropy.state);
        let mut flow = AuthFlow {
            config,
            store,
            resource: server_key.clone(),
            server_key,
            server_url,
            pkce: Pkce::from_random(&entropy.pkce),
            state_param: b64url(&entropy.state),
            jti_seed: seed.finalize().into(),
            jtis: 0,
            prior,
            renew,
            prm: None,
            servers: Vec::new(),
            next_server: 0,
            server_errors: Vec::new(),
            issuer: None,
            legacy: false,
            metadata: None,
            client: None,
            scope: None,
            tried: Vec::new(),
            state: State::Refresh,
            pending: None,
            challenge,
        };
        let refresh = flow
            .prior
            .clone()
            .filter(|p| p.tokens.refresh_token.is_some());
        if flow.challenge.insufficient_scope {
            flow.check_step_up()?;
            flow.start_discovery()?;
        } else if let Some(prior) = refresh {
            let pending = flow.refresh_request(&prior)?;
            flow.pending = Some(pending);
            flow.state = State::Refresh;
        } else if renew && flow.config.grant.is_interactive() {
            return Err(OAuthError::Configuration(
                "no refresh token to renew the authorization with".to_owned(),
            ));
        } else {
            flow.start_discovery()?;
        }
        flow.check_pending()?;
        Ok(flow)
    }

    /// What to do next: a request to send at `now` (which dates the DPoP proof and client
    /// assertion it may carry), or the access token. After an error, that error.
    ///
    /// # Errors
    /// The error that ended the flow (from [`handle_response`](Self::handle_response) or
    /// [`handle_callback`](Self::handle_callback)), again; [`OAuthError::NotWaiting`] when
    /// there is no request to make (a reply is being handled); [`OAuthError::Key`] when a
    /// proof or assertion cannot be signed (the flow goes on).
    pub fn step(&self, now: SystemTime) -> Result<Step, OAuthError> {
        match &self.state {
            State::Done(a) => Ok(Step::Done(a.tokens.access_token.clone())),
            State::Failed(e) => Err(e.clone()),
            State::Authorize { .. } => self
                .pending
                .as_ref()
                .map(|p| self.to_request(p, now).map(Step::Authorize))
                .unwrap_or(Err(OAuthError::NotWaiting)),
            _ => self
                .pending
                .as_ref()
                .map(|p| self.to_request(p, now).map(Step::Send))
                .unwrap_or(Err(OAuthError::NotWaiting)),
        }
    }

    /// The authorization once the flow is done.
    pub fn authorization(&self) -> Option<&Authorization> {
        match &self.state {
            State::Done(a) => Some(a),
            _ => None,
        }
    }

    /// The reply to the request of the last [`step`](Self::step), received at `now` (used for
    /// the token's expiry). The body should be complete; its size is the sender's to bound.
    ///
    /// # Errors
    /// Each ends the flow ([`step`](Self::step) returns it from then on), by the step the
    /// reply belongs to: [`OAuthError::Http`] for a status the step cannot continue from (a
    /// refused registration or token request, with the OAuth `error` of the body);
    /// [`OAuthError::InvalidResponse`] for a metadata document or reply that is not what its
    /// specification requires; [`OAuthError::ResourceMismatch`] /
    /// [`OAuthError::IssuerMismatch`] for metadata about another resource or issuer (when no
    /// other authorization server is listed); [`OAuthError::NoAuthorizationServerMetadata`]
    /// when no well-known location had any; [`OAuthError::PkceNotSupported`] for a server
    /// without PKCE `S256`; [`OAuthError::NoClientRegistration`] when there is no way to get
    /// a client id; [`OAuthError::Configuration`] for a grant the configuration cannot run;
    /// [`OAuthError::Assertion`] for an assertion that cannot be read;
    /// [`OAuthError::InvalidUrl`] for an unusable URL in metadata; and
    /// [`OAuthError::NotWaiting`] when the flow waits for no reply.
    pub fn handle_response(
        &mut self,
        now: SystemTime,
        response: Response<Vec<u8>>,
    ) -> Result<(), OAuthError> {
        let result = self.on_response(now, response);
        self.settle(result)
    }

    /// The request of the last [`step`](Self::step) could not be carried out (`reason`: a
    /// refused connection, a timeout). During authorization server discovery the flow goes on
    /// with the next server the Protected Resource Metadata lists; otherwise it ends.
    ///
    /// # Errors
    /// [`OAuthError::Transport`] with `reason` when the flow ends (or the error of the last
    /// server when none is left); [`OAuthError::NotWaiting`] when it waits for no reply.
    pub fn handle_error(&mut self, reason: &str) -> Result<(), OAuthError> {
        let result = self.on_error(reason);
        self.settle(result)
    }

    /// The URL the redirect URI was called with after the user approved (or refused) in a
    /// browser. Only valid while the flow waits at [`Step::Authorize`].
    ///
    /// # Errors
    /// [`OAuthError::NotWaiting`] (the flow goes on) when it does not wait at
    /// [`Step::Authorize`]; otherwise each ends the flow: [`OAuthError::InvalidUrl`] for a
    /// redirect that does not parse, [`OAuthError::InvalidRedirect`] for one to another
    /// address than the redirect URI or without a code, [`OAuthError::StateMismatch`] for
    /// another `state` (possible CSRF), [`OAuthError::AuthorizationDenied`] for the
    /// authorization server's refusal, [`OAuthError::IssuerMismatch`] /
    /// [`OAuthError::MissingIssuer`] for a wrong or missing `iss` (RFC 9207).
    pub fn handle_callback(&mut self, redirect: &str) -> Result<(), OAuthError> {
        if !matches!(self.state, State::Authorize { .. }) {
            return Err(OAuthError::NotWaiting);
        }
        let result = Url::parse(redirect)
            .map_err(|e| OAuthError::InvalidUrl {
                what: "redirect",
                url: redirect.to_owned(),
                reason: e.to_string(),
            })
            .and_then(|url| self.on_callback(&url));
        self.settle(result)
    }

    fn settle(&mut self, result: Result<(), OAuthError>) -> Result<(), OAuthError> {
        let result = result.and_then(|()| self.check_pending());
        if let Err(e) = &result {
            self.pending = None;
            self.state = State::Failed(e.clone());
        }
        result
    }

    /// A fresh `jti` for a signed JWT of this flow.
    fn next_jti(&mut self) -> [u8; 16] {
        self.jtis += 1;
        let mut h = Sha256::new();
        h.update(self.jti_seed);
        h.update(self.jtis.to_be_bytes());
        let digest: [u8; 32] = h.finalize().into();
        let mut jti = [0; 16];
        jti.copy_from_slice(&digest[..16]);
        jti
    }

    /// `pending` as a request sent at `now`: its proof and assertion signed.
    fn to_request(&self, p: &Pending, now: SystemTime) -> Result<Request<Vec<u8>>, OAuthError> {
        let mut body = p.body.clone();
        let mut extra = Vec::new();
        for sign in &p.sign {
            match sign {
                Sign::Dpop(jti) => {
                    if let Some(proof) = super::dpop_proof(
                        &self.config,
                        p.method.as_str(),
                        p.url.as_str(),
                        None,
                        now,
                        jti,
                    )? {
                        extra.push((DPOP, proof));
                    }
                }
                Sign::ClientAssertion(jti) => {
                    let client = self
                        .client
                        .as_ref()
                        .or(self.prior.as_ref().map(|a| &a.client));
                    let audience = self
                        .metadata
                        .as_ref()
                        .map(|m| m.issuer.clone())
                        .or_else(|| self.prior.as_ref().map(|a| a.issuer.clone()))
                        .unwrap_or_default();
                    let client_id = client.map(|c| c.client_id.as_str()).unwrap_or_default();
                    let assertion =
                        super::client_assertion(&self.config, client_id, &audience, now, jti)?;
                    let mut form = form_urlencoded::Serializer::new(String::new());
                    form.append_pair("client_assertion_type", JWT_CLIENT_ASSERTION)
                        .append_pair("client_assertion", &assertion);
                    if !body.is_empty() {
                        body.push(b'&');
                    }
                    body.extend_from_slice(form.finish().as_bytes());
                }
            }
        }
        let mut req = Request::new(body);
        *req.method_mut() = p.method.clone();
        // A `url::Url` is always a valid URI; a failure here would leave the default `/`,
        // which the peer answers with an error the flow reports.
        if let Ok(uri) = p.url.as_str().parse() {
            *req.uri_mut() = uri;
        }
        for (name, value) in p.headers.iter().chain(extra.iter()) {
            if let Ok(v) = HeaderValue::from_str(value) {
                req.headers_mut().append(name.clone(), v);
            }
        }
        Ok(req)
    }

    /// The rule for the addresses the request the flow just gave ([`step`](Self::step))
    /// may connect to, for the connector to apply to each address its host resolves to (the
    /// SSRF rules of [`crate::oauth`]); `None` for no rule (private addresses allowed, or
    /// the identity provider's token endpoint, which the application chose).
    pub fn address_check(&self) -> Option<crate::http_client::AddressCheck> {
        if self.config.allow_private_addresses || matches!(self.state, State::TokenExchange) {
            return None;
        }
        super::ssrf::address_check(&self.server_url)
    }

    /// The request about to be made may go where it points ([`super::ssrf`]): the user's
    /// browser opens the authorization URL, but a headless approval fetches it too. The
    /// identity provider's token endpoint is the application's choice, not the server's, and
    /// is not checked.
    fn check_pending(&self) -> Result<(), OAuthError> {
        let Some(pending) = &self.pending else {
            return Ok(());
        };
        if matches!(self.state, State::TokenExchange) {
            return Ok(());
        }
        let allow = self.config.allow_private_addresses;
        super::ssrf::check(&self.server_url, &pending.url, allow).map_err(|reason| {
            OAuthError::InvalidUrl {
                what: match self.state {
                    State::ResourceMetadata { .. } => "protected resource metadata",
                    State::ServerMetadata { .. } => "authorization server metadata",
                    State::Register => "registration endpoint",
                    State::Authorize { .. } => "authorization endpoint",
                    _ => "token endpoint",
                },
                url: pending.url.to_string(),
                reason,
            }
        })
    }

    fn on_error(&mut self, reason: &str) -> Result<(), OAuthError> {
        let Some(pending) = self.pending.take() else {
            return Err(OAuthError::NotWaiting);
        };
        let state = std::mem::replace(&mut self.state, State::Failed(OAuthError::NotWaiting));
        let error = |what| OAuthError::Transport {
            what,
            url: pending.url.to_string(),
            reason: reason.to_owned(),
        };
        match state {
            State::ServerMetadata { .. } if !self.legacy => {
                self.next_authorization_server(error("authorization server metadata request"))
            }
            State::ResourceMetadata { .. } => Err(error("protected resource metadata request")),
            State::ServerMetadata { .. } => Err(error("authorization server metadata request")),
            State::Register => Err(error("client registration")),
            State::Authorize { .. } => Err(error("authorization request")),
            State::TokenExchange => Err(error("token exchange")),
            State::Refresh | State::Token => Err(error("token request")),
            State::Done(a) => {
                self.state = State::Done(a);
                Err(OAuthError::NotWaiting)
            }
            State::Failed(e) => Err(e),
        }
    }

    /// A token endpoint's `use_dpop_nonce` (RFC 9449 §8): the request goes again with the
    /// nonce (now kept), at most [`NONCE_RETRIES`] times. Every `DPoP-Nonce` is kept.
    fn dpop_nonce_retry(&mut self, pending: &Pending, resp: &Response<Vec<u8>>) -> bool {
        let Some(nonce) = resp.headers().get(DPOP_NONCE).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        if !super::dpop_enabled(&self.config) {
            return false;
        }
        super::dpop_set_nonce(&self.config, pending.url.as_str(), nonce);
        let asks = resp.status() == StatusCode::BAD_REQUEST
            && oauth_error_code(resp.body()).as_deref() == Some("use_dpop_nonce");
        if !asks || pending.nonce_retries >= NONCE_RETRIES {
            return false;
        }
        let mut again = pending.clone();
        again.nonce_retries += 1;
        for sign in &mut again.sign {
            let jti = self.next_jti();
            match sign {
                Sign::Dpop(j) | Sign::ClientAssertion(j) => *j = jti,
            }
        }
        tracing::debug!(target: "mcp::oauth", url = %pending.url, "token request again with the server's DPoP nonce");
        self.pending = Some(again);
        true
    }

    fn on_response(&mut self, now: SystemTime, resp: Response<Vec<u8>>) -> Result<(), OAuthError> {
        let Some(pending) = self.pending.take() else {
            return Err(OAuthError::NotWaiting);
        };
        let status = resp.status();
        let state = std::mem::replace(&mut self.state, State::Failed(OAuthError::NotWaiting));
        if matches!(state, State::Refresh | State::Token) && self.dpop_nonce_retry(&pending, &resp)
        {
            self.state = state;
            return Ok(());
        }
        match state {
            State::Refresh => {
                if status.is_success() {
                    let prior = self.prior.clone().ok_or(OAuthError::NotWaiting)?;
                    let mut tokens = self.token_response(&pending.url, resp.body(), now)?;
                    if tokens.refresh_token.is_none() {
                        tokens.refresh_token = prior.tokens.refresh_token.clone();
                    }
                    if tokens.scope.is_none() {
                        tokens.scope = prior.tokens.scope.clone();
                    }
                    let auth = Authorization { tokens, ..prior };
                    self.finish(auth);
                } else if self.renew && self.config.grant.is_interactive() {
                    // Only the user could renew it: the kept token stays until it expires.
                    return Err(http_error(
                        "refresh request",
                        &pending.url,
                        status,
                        resp.body(),
                    ));
                } else {
                    // Refused (expired or revoked refresh token, changed client): start over.
                    tracing::debug!(target: "mcp::oauth", %status, "refresh refused; authorizing anew");
                    self.store.remove(&self.server_key);
                    self.prior = None;
                    self.start_discovery()?;
                }
                Ok(())
            }
            State::ResourceMetadata { candidates, next } => {
                if status.is_success() {
                    self.on_resource_metadata(&pending.url, resp.body())
                } else if status.is_client_error() {
                    self.tried.push(pending.url.to_string());
                    self.next_resource_metadata(candidates, next)
                } else {
                    Err(http_error(
                        "protected resource metadata request",
                        &pending.url,
                        status,
                        resp.body(),
                    ))
                }
            }
            State::ServerMetadata { candidates, next } => {
                if status.is_success() {
                    match self.on_server_metadata(&pending.url, resp.body()) {
                        Err(e) if !self.legacy && discovery_failure(&e) => {
                            self.next_authorization_server(e)
                        }
                        other => other,
                    }
                } else if status.is_client_error() {
                    self.tried.push(pending.url.to_string());
                    self.next_server_metadata(candidates, next)
                } else {
                    let e = http_error(
                        "authorization server metadata request",
                        &pending.url,
                        status,
                        resp.body(),
                    );
                    if self.legacy {
                        Err(e)
                    } else {
                        self.next_authorization_server(e)
                    }
                }
            }
            State::Register => {
                if status.is_success() {
                    self.on_registration(&pending.url, resp.body())
                } else {
                    Err(http_error(
                        "client registration",
                        &pending.url,
                        status,
                        resp.body(),
                    ))
                }
            }
            State::Authorize { url } => {
                self.state = State::Authorize { url: url.clone() };
                if status.is_redirection() {
                    let location = resp
                        .headers()
                        .get(header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .ok_or_else(|| {
                            OAuthError::InvalidRedirect("redirect without a Location".to_owned())
                        })?;
                    let target = url.join(location).map_err(|e| OAuthError::InvalidUrl {
                        what: "redirect",
                        url: location.to_owned(),
                        reason: e.to_string(),
                    })?;
                    self.on_callback(&target)
                } else if status.is_success() {
                    Err(OAuthError::InvalidRedirect(format!(
                        "the authorization endpoint answered HTTP {status} instead of redirecting: it needs a user (open the authorization URL in a browser and use handle_callback)"
                    )))
                } else {
                    Err(http_error(
                        "authorization request",
                        &url,
                        status,
                        resp.body(),
                    ))
                }
            }
            State::TokenExchange => {
                if !status.is_success() {
                    return Err(http_error(
                        "token exchange",
                        &pending.url,
                        status,
                        resp.body(),
                    ));
                }
                let id_jag = parse_id_jag_response(&pending.url, resp.body())?;
                let form = grant::jwt_bearer_form(id_jag, self.scope.as_deref(), &self.resource);
                self.grant_token_request(form)
            }
            State::Token => {
                if !status.is_success() {
                    return Err(http_error(
                        "token request",
                        &pending.url,
                        status,
                        resp.body(),
                    ));
                }
                let tokens = self.token_response(&pending.url, resp.body(), now)?;
                let (Some(client), Some(metadata)) = (self.client.clone(), self.metadata.as_ref())
                else {
                    return Err(OAuthError::NotWaiting);
                };
                let auth = Authorization {
                    tokens,
                    client,
                    issuer: metadata.issuer.clone(),
                    token_endpoint: metadata.token_endpoint.clone(),
                    resource: self.resource.clone(),
                    requested_scope: self.scope.clone(),
                };
                self.finish(auth);
                Ok(())
            }
            State::Done(a) => {
                self.state = State::Done(a);
                Err(OAuthError::NotWaiting)
            }
            State::Failed(e) => Err(e),
        }
    }

    /// A token reply: a DPoP-bound token needs the DPoP key.
    fn token_response(
        &self,
        url: &Url,
        body: &[u8],
        now: SystemTime,
    ) -> Result<TokenSet, OAuthError> {
        let tokens = parse_token_response(url, body, now)?;
        if tokens.token_type == TokenType::DPoP && !super::dpop_enabled(&self.config) {
            return Err(OAuthError::InvalidResponse {
                what: "token response",
                url: url.to_string(),
                reason: "a DPoP-bound token, but this client has no DPoP key".to_owned(),
            });
        }
        Ok(tokens)
    }

    fn finish(&mut self, auth: Authorization) {
        self.store.save(&self.server_key, auth.clone());
        self.pending = None;
        self.state = State::Done(Box::new(auth));
    }

    /// A 403 `insufficient_scope`: the scope to ask for is everything asked before plus what the
    /// challenge names; when that adds nothing, another authorization cannot help.
    fn check_step_up(&mut self) -> Result<(), OAuthError> {
        let wanted = split_scope(self.challenge.scope.as_deref());
        if let Some(prior) = &self.prior {
            let mut had = split_scope(prior.requested_scope.as_deref());
            had.extend(split_scope(prior.tokens.scope.as_deref()));
            if !wanted.is_empty() && wanted.iter().all(|s| had.contains(s)) {
                return Err(OAuthError::StepUpExhausted {
                    scope: wanted.join(" "),
                });
            }
        }
        Ok(())
    }

    fn start_discovery(&mut self) -> Result<(), OAuthError> {
        let mut candidates = Vec::new();
        if let Some(u) = self.challenge.resource_metadata.as_deref() {
            match Url::parse(u) {
                // Only on the server's own origin: a challenge must not send the client
                // anywhere else (the well-known URLs of the origin are tried instead).
                Ok(u)
                    if matches!(u.scheme(), "http" | "https")
                        && u.origin() == self.server_url.origin() =>
                {
                    candidates.push(u)
                }
                _ => {
                    tracing::debug!(target: "mcp::oauth", url = u, "ignoring a resource_metadata that is not on the server's origin")
                }
            }
        }
        for u in discovery::protected_resource_metadata_urls(&self.server_url) {
            if !candidates.contains(&u) {
                candidates.push(u);
            }
        }
        self.next_resource_metadata(candidates, 0)
    }

    fn next_resource_metadata(
        &mut self,
        candidates: Vec<Url>,
        next: usize,
    ) -> Result<(), OAuthError> {
        match candidates.get(next).cloned() {
            Some(url) => {
                self.pending = Some(Pending::get(url));
                self.state = State::ResourceMetadata {
                    candidates,
                    next: next + 1,
                };
                Ok(())
            }
            None => {
                // No Protected Resource Metadata: a 2025-03-26 server, its own authorization
                // server at the origin.
                tracing::debug!(target: "mcp::oauth", "no protected resource metadata; using the server's origin as authorization server");
                self.legacy = true;
                let mut origin = self.server_url.clone();
                origin.set_path("/");
                origin.set_query(None);
                origin.set_fragment(None);
                let candidates = discovery::authorization_server_metadata_urls(&origin);
                self.issuer = Some(origin);
                self.resource = canonical_resource(&self.server_url);
                // Only the authorization-server metadata document was defined in 2025-03-26;
                // trying OpenID discovery too costs one request and finds more servers.
                self.tried.clear();
                self.next_server_metadata(candidates, 0)
            }
        }
    }

    fn on_resource_metadata(&mut self, url: &Url, body: &[u8]) -> Result<(), OAuthError> {
        let invalid = |reason: String| OAuthError::InvalidResponse {
            what: "protected resource metadata",
            url: url.to_string(),
            reason,
        };
        let prm: ProtectedResourceMetadata =
            serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
        let resource = Url::parse(&prm.resource).map_err(|e| OAuthError::InvalidUrl {
            what: "protected resource",
            url: prm.resource.clone(),
            reason: e.to_string(),
        })?;
        if !resource_matches(&self.server_url, &resource) {
            return Err(OAuthError::ResourceMismatch {
                expected: self.server_url.to_string(),
                found: prm.resource.clone(),
            });
        }
        if prm.authorization_servers.is_empty() {
            return Err(invalid("authorization_servers is empty".to_owned()));
        }
        let mut servers = Vec::new();
        for s in &prm.authorization_servers {
            let issuer = Url::parse(s).map_err(|e| OAuthError::InvalidUrl {
                what: "authorization server",
                url: s.clone(),
                reason: e.to_string(),
            })?;
            if !matches!(issuer.scheme(), "http" | "https") {
                return Err(OAuthError::InvalidUrl {
                    what: "authorization server",
                    url: s.clone(),
                    reason: "not an http(s) URL".to_owned(),
                });
            }
            servers.push(issuer);
        }
        self.resource = prm.resource.clone();
        self.prm = Some(prm);
        self.servers = servers;
        self.next_server = 0;
        self.start_server_discovery()
    }

    /// Discovery of the next authorization server the Protected Resource Metadata lists.
    fn start_server_discovery(&mut self) -> Result<(), OAuthError> {
        let issuer = self
            .servers
            .get(self.next_server)
            .cloned()
            .ok_or(OAuthError::NotWaiting)?;
        self.next_server += 1;
        let candidates = discovery::authorization_server_metadata_urls(&issuer);
        self.issuer = Some(issuer);
        self.tried.clear();
        self.next_server_metadata(candidates, 0)
    }

    /// The current authorization server failed discovery with `error`: the next one, if the
    /// metadata lists more; else `error` (the first server's, when several failed).
    fn next_authorization_server(&mut self, error: OAuthError) -> Result<(), OAuthError> {
        if self.next_server < self.servers.len() {
            tracing::debug!(target: "mcp::oauth", %error, "authorization server discovery failed; trying the next one");
            self.server_errors.push(error);
            return self.start_server_discovery();
        }
        match self.server_errors.first() {
            Some(first) => Err(first.clone()),
            None => Err(error),
        }
    }

    fn next_server_metadata(
        &mut self,
        candidates: Vec<Url>,
        next: usize,
    ) -> Result<(), OAuthError> {
        if let Some(url) = candidates.get(next).cloned() {
            self.pending = Some(Pending::get(url));
            self.state = State::ServerMetadata {
                candidates,
                next: next + 1,
            };
            return Ok(());
        }
        if self.legacy {
            tracing::debug!(target: "mcp::oauth", "no authorization server metadata; using the default endpoints");
            self.metadata = Some(AuthorizationServerMetadata::legacy_defaults(
                &self.server_url,
            ));
            return self.choose_client();
        }
        let error = OAuthError::NoAuthorizationServerMetadata {
            issuer: self.issuer.as_ref().map(Url::to_string).unwrap_or_default(),
            tried: self.tried.join(", "),
        };
        self.next_authorization_server(error)
    }

    fn on_server_metadata(&mut self, url: &Url, body: &[u8]) -> Result<(), OAuthError> {
        let metadata: AuthorizationServerMetadata =
            serde_json::from_slice(body).map_err(|e| OAuthError::InvalidResponse {
                what: "authorization server metadata",
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        let issuer = self.issuer.clone().ok_or(OAuthError::NotWaiting)?;
        if !self.legacy && !issuer_matches(&issuer, &metadata.issuer) {
            return Err(OAuthError::IssuerMismatch {
                expected: issuer.to_string(),
                found: metadata.issuer,
            });
        }
        let code = self.config.grant.is_interactive();
        if code && !self.legacy && !metadata.supports_s256() {
            return Err(OAuthError::PkceNotSupported {
                issuer: metadata.issuer,
            });
        }
        let mut endpoints = vec![("token endpoint", &metadata.token_endpoint)];
        if code {
            endpoints.push(("authorization endpoint", &metadata.authorization_endpoint));
        }
        for (what, u) in endpoints {
            Url::parse(u).map_err(|e| OAuthError::InvalidUrl {
                what,
                url: u.clone(),
                reason: e.to_string(),
            })?;
        }
        self.metadata = Some(metadata);
        self.choose_client()
    }

    fn choose_client(&mut self) -> Result<(), OAuthError> {
        let metadata = self.metadata.clone().ok_or(OAuthError::NotWaiting)?;
        let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
        let client = if let Some(pre) = &self.config.pre_registered {
            Some(ClientCredentials {
                client_id: pre.client_id.clone(),
                client_secret: pre.client_secret.clone(),
                auth_method: pre
                    .auth_method
                    .unwrap_or_else(|| choose_auth_method(pre.client_secret.is_some(), supported)),
            })
        } else if !self.config.grant.is_interactive() {
            return Err(OAuthError::Configuration(format!(
                "the {} grant needs a client registered with {} (OAuthConfig::pre_registered or private_key_jwt)",
                grant_name(&self.config.grant),
                metadata.issuer
            )));
        } else if let Some(kept) = self.store.load_client(&metadata.issuer) {
            Some(kept)
        } else {
            // Client ID Metadata Document: the URL is the client id of a public client.
            self.config
                .client_metadata_url
                .as_ref()
                .filter(|_| metadata.client_id_metadata_document_supported)
                .map(|cimd| ClientCredentials {
                    client_id: cimd.clone(),
                    client_secret: None,
                    auth_method: TokenEndpointAuth::None,
                })
        };
        self.metadata = Some(metadata);
        match client {
            Some(c) => {
                self.client = Some(c);
                self.start_grant()
            }
            None => self.start_registration(),
        }
    }

    /// With metadata and a client: the configured grant's first request.
    fn start_grant(&mut self) -> Result<(), OAuthError> {
        match self.config.grant.clone() {
            Grant::AuthorizationCode => self.start_authorization(),
            Grant::ClientCredentials => {
                self.scope = self.select_scope();
                let form = grant::client_credentials_form(self.scope.as_deref(), &self.resource);
                self.grant_token_request(form)
            }
            Grant::JwtBearer(source) => {
                self.scope = self.select_scope();
                let assertion = source.load()?;
                let form = grant::jwt_bearer_form(assertion, self.scope.as_deref(), &self.resource);
                self.grant_token_request(form)
            }
            Grant::EnterpriseManaged(idp) => {
                self.scope = self.select_scope();
                let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
                let id_token = idp.id_token.load()?;
                let form = grant::id_jag_exchange_form(
                    id_token,
                    &metadata.issuer,
                    &self.resource,
                    self.scope.as_deref(),
                );
                let idp_client = ClientCredentials {
                    client_id: idp.client_id.clone(),
                    client_secret: idp.client_secret.clone(),
                    auth_method: if idp.client_secret.is_some() {
                        TokenEndpointAuth::ClientSecretBasic
                    } else {
                        TokenEndpointAuth::None
                    },
                };
                let mut pending = token_request(&idp.token_endpoint, &idp_client, form)?;
                pending.sign.clear();
                self.pending = Some(pending);
                self.state = State::TokenExchange;
                Ok(())
            }
        }
    }

    /// A token request of a grant without a user at the authorization server's token
    /// endpoint, authenticated as the client's method says, with a DPoP proof if configured.
    fn grant_token_request(&mut self, form: grant::Form) -> Result<(), OAuthError> {
        let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
        let client = self.client.as_ref().ok_or(OAuthError::NotWaiting)?;
        let pending = token_request(&metadata.token_endpoint, client, form)?;
        self.pending = Some(self.signed(pending));
        self.state = State::Token;
        Ok(())
    }

    /// `pending` (a token request) with the `jti`s of its assertion and proof: a DPoP proof
    /// when a DPoP key is configured and the server does not rule ES256 out.
    fn signed(&mut self, mut pending: Pending) -> Pending {
        for s in &mut pending.sign {
            let jti = self.next_jti();
            if let Sign::ClientAssertion(j) = s {
                *j = jti;
            }
        }
        let algs = self
            .metadata
            .as_ref()
            .and_then(|m| m.dpop_signing_alg_values_supported.as_ref());
        let allowed = algs.is_none_or(|a| a.iter().any(|a| a == "ES256"));
        if super::dpop_enabled(&self.config) && allowed {
            let jti = self.next_jti();
            pending.sign.push(Sign::Dpop(jti));
        }
        pending
    }

    fn start_registration(&mut self) -> Result<(), OAuthError> {
        let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
        let Some(endpoint) = metadata.registration_endpoint.as_deref() else {
            return Err(OAuthError::NoClientRegistration {
                issuer: metadata.issuer.clone(),
            });
        };
        let url = Url::parse(endpoint).map_err(|e| OAuthError::InvalidUrl {
            what: "registration endpoint",
            url: endpoint.to_owned(),
            reason: e.to_string(),
        })?;
        let mut body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "application_type": application_type(&self.config.redirect_uri),
        });
        let method = self.config.registration_auth_method.or_else(|| {
            metadata
                .token_endpoint_auth_methods_supported
                .as_ref()
                .and_then(|m| {
                    m.iter()
                        .filter_map(|n| TokenEndpointAuth::from_name(n))
                        .find(|m| *m != TokenEndpointAuth::PrivateKeyJwt)
                })
        });
        if let (Some(m), Some(obj)) = (method, body.as_object_mut()) {
            obj.insert("token_endpoint_auth_method".to_owned(), m.as_str().into());
        }
        self.pending = Some(Pending {
            method: Method::POST,
            url,
            headers: vec![
                (header::CONTENT_TYPE, "application/json".to_owned()),
                (header::ACCEPT, "application/json".to_owned()),
            ],
            body: body.to_string().into_bytes(),
            sign: Vec::new(),
            nonce_retries: 0,
        });
        self.state = State::Register;
        Ok(())
    }

    fn on_registration(&mut self, url: &Url, body: &[u8]) -> Result<(), OAuthError> {
        #[derive(Deserialize)]
        struct Registered {
            client_id: String,
            #[serde(default)]
            client_secret: Option<String>,
            #[serde(default)]
            token_endpoint_auth_method: Option<String>,
        }
        let invalid = |reason: String| OAuthError::InvalidResponse {
            what: "client registration response",
            url: url.to_string(),
            reason,
        };
        let r: Registered = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
        if r.client_id.is_empty() {
            return Err(invalid("empty client_id".to_owned()));
        }
        let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
        let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
        let auth_method = match r.token_endpoint_auth_method.as_deref() {
            Some(name) => TokenEndpointAuth::from_name(name)
                .filter(|m| *m != TokenEndpointAuth::PrivateKeyJwt)
                .ok_or_else(|| {
                    invalid(format!("unsupported token_endpoint_auth_method {name:?}"))
                })?,
            None => choose_auth_method(r.client_secret.is_some(), supported),
        };
        if auth_method != TokenEndpointAuth::None && r.client_secret.is_none() {
            return Err(invalid(format!(
                "token_endpoint_auth_method {} without a client_secret",
                auth_method.as_str()
            )));
        }
        let client = ClientCredentials {
            client_id: r.client_id,
            client_secret: r.client_secret,
            auth_method,
        };
        self.store.save_client(&metadata.issuer, client.clone());
        self.client = Some(client);
        self.start_grant()
    }

    fn select_scope(&self) -> Option<String> {
        let scope = match &self.config.scope_policy {
            ScopePolicy::Fixed(s) => Some(s.clone()),
            ScopePolicy::Discover => {
                if let Some(s) = self
                    .challenge
                    .scope
                    .as_deref()
                    .filter(|s| !s.trim().is_empty())
                {
                    Some(s.to_owned())
                } else {
                    self.prm
                        .as_ref()
                        .and_then(|p| p.scopes_supported.as_ref())
                        .filter(|s| !s.is_empty())
                        .map(|s| s.join(" "))
                }
            }
        };
        // A step-up keeps what was asked before.
        let mut all = if self.challenge.insufficient_scope {
            self.prior
                .as_ref()
                .map(|p| split_scope(p.requested_scope.as_deref()))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        for s in split_scope(scope.as_deref()) {
            if !all.contains(&s) {
                all.push(s);
            }
        }
        (!all.is_empty()).then(|| all.join(" "))
    }

    fn start_authorization(&mut self) -> Result<(), OAuthError> {
        self.scope = self.select_scope();
        let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
        let client = self.client.as_ref().ok_or(OAuthError::NotWaiting)?;
        let mut url =
            Url::parse(&metadata.authorization_endpoint).map_err(|e| OAuthError::InvalidUrl {
                what: "authorization endpoint",
                url: metadata.authorization_endpoint.clone(),
                reason: e.to_string(),
            })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("code_challenge", self.pkce.challenge())
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &self.state_param)
                .append_pair("resource", &self.resource);
            if let Some(scope) = &self.scope {
                q.append_pair("scope", scope);
            }
        }
        let mut pending = Pending::get(url.clone());
        pending.headers.clear();
        self.pending = Some(pending);
        self.state = State::Authorize { url };
        Ok(())
    }

    fn on_callback(&mut self, url: &Url) -> Result<(), OAuthError> {
        let expected =
            Url::parse(&self.config.redirect_uri).map_err(|e| OAuthError::InvalidUrl {
                what: "redirect URI",
                url: self.config.redirect_uri.clone(),
                reason: e.to_string(),
            })?;
        if url.scheme() != expected.scheme()
            || url.host_str() != expected.host_str()
            || url.port_or_known_default() != expected.port_or_known_default()
            || url.path() != expected.path()
        {
            return Err(OAuthError::InvalidRedirect(format!(
                "redirected to {url}, not to the redirect URI {expected}"
            )));
        }
        let get = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if get("state").as_deref() != Some(self.state_param.as_str()) {
            return Err(OAuthError::StateMismatch);
        }
        if let Some(error) = get("error") {
            return Err(OAuthError::AuthorizationDenied {
                error,
                description: get("error_description"),
            });
        }
        // RFC 9207: when the server names itself, it must be the server we asked; a server
        // that says it always does must have.
        if let Some(metadata) = self.metadata.as_ref()
            && !self.legacy
        {
            match get("iss") {
                Some(iss) if iss != metadata.issuer => {
                    return Err(OAuthError::IssuerMismatch {
                        expected: metadata.issuer.clone(),
                        found: iss,
                    });
                }
                None if metadata.authorization_response_iss_parameter_supported => {
                    return Err(OAuthError::MissingIssuer {
                        issuer: metadata.issuer.clone(),
                    });
                }
                _ => {}
            }
        }
        let code = get("code")
            .filter(|c| !c.is_empty())
            .ok_or_else(|| OAuthError::InvalidRedirect("no authorization code".to_owned()))?;
        let metadata = self.metadata.as_ref().ok_or(OAuthError::NotWaiting)?;
        let client = self.client.as_ref().ok_or(OAuthError::NotWaiting)?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", self.pkce.verifier().to_owned()),
            ("resource", self.resource.clone()),
        ];
        let pending = token_request(&metadata.token_endpoint, client, form)?;
        self.pending = Some(self.signed(pending));
        self.state = State::Token;
        Ok(())
    }

    fn refresh_request(&mut self, prior: &Authorization) -> Result<Pending, OAuthError> {
        let refresh = prior.tokens.refresh_token.clone().unwrap_or_default();
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh),
            ("resource", prior.resource.clone()),
        ];
        let pending = token_request(&prior.token_endpoint, &prior.client, form)?;
        Ok(self.signed(pending))
    }
}

/// Errors of one authorization server's discovery after which the next listed server is
/// tried.
fn discovery_failure(e: &OAuthError) -> bool {
    matches!(
        e,
        OAuthError::InvalidResponse { .. }
            | OAuthError::IssuerMismatch { .. }
            | OAuthError::PkceNotSupported { .. }
            | OAuthError::InvalidUrl { .. }
    )
}

fn grant_name(grant: &Grant) -> &'static str {
    match grant {
        Grant::AuthorizationCode => "authorization_code",
        Grant::ClientCredentials => "client_credentials",
        Grant::JwtBearer(_) => "JWT bearer",
        Grant::EnterpriseManaged(_) => "enterprise-managed (ID-JAG)",
    }
}

/// The token endpoint authentication method for a client without a registered one: a public
/// client uses `none`; a confidential one the first of `client_secret_basic`,
/// `client_secret_post` the server lists (RFC 8414's default list is `client_secret_basic`).
pub fn choose_auth_method(has_secret: bool, supported: Option<&[String]>) -> TokenEndpointAuth {
    if !has_secret {
        return TokenEndpointAuth::None;
    }
    let Some(supported) = supported else {
        return TokenEndpointAuth::ClientSecretBasic;
    };
    let has = |m: TokenEndpointAuth| supported.iter().any(|s| s == m.as_str());
    [
        TokenEndpointAuth::ClientSecretBasic,
        TokenEndpointAuth::ClientSecretPost,
        TokenEndpointAuth::None,
    ]
    .into_iter()
    .find(|m| has(*m))
    .unwrap_or(TokenEndpointAuth::ClientSecretBasic)
}

/// A token endpoint `POST` with the client authenticated as its method says (a
/// `private_key_jwt` assertion is signed when the request is sent).
fn token_request(
    endpoint: &str,
    client: &ClientCredentials,
    mut form: Vec<(&'static str, String)>,
) -> Result<Pending, OAuthError> {
    let url = Url::parse(endpoint).map_err(|e| OAuthError::InvalidUrl {
        what: "token endpoint",
        url: endpoint.to_owned(),
        reason: e.to_string(),
    })?;
    let mut headers = vec![
        (
            header::CONTENT_TYPE,
            "application/x-www-form-urlencoded".to_owned(),
        ),
        (header::ACCEPT, "application/json".to_owned()),
    ];
    let mut sign = Vec::new();
    let secret = client.client_secret.clone().unwrap_or_default();
    match client.auth_method {
        TokenEndpointAuth::ClientSecretBasic => {
            // RFC 6749 §2.3.1: id and secret form-encoded, then joined and base64-encoded.
            let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&client.client_id), enc(&secret));
            headers.push((
                header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(pair)),
            ));
        }
        TokenEndpointAuth::ClientSecretPost => {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", secret));
        }
        TokenEndpointAuth::None => form.push(("client_id", client.client_id.clone())),
        TokenEndpointAuth::PrivateKeyJwt => {
            form.push(("client_id", client.client_id.clone()));
            sign.push(Sign::ClientAssertion([0; 16]));
        }
    }
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
        .into_bytes();
    Ok(Pending {
        method: Method::POST,
        url,
        headers,
        body,
        sign,
        nonce_retries: 0,
    })
}

/// A successful token endpoint reply (RFC 6749 §5.1) as tokens; `now` dates `expires_in`.
///
/// # Errors
/// [`OAuthError::InvalidResponse`] for a body that is not such a reply (not JSON, an empty
/// or missing `access_token`, a `token_type` other than `Bearer` or `DPoP`, an `expires_in`
/// that is not a non-negative number).
pub fn parse_token_response(
    url: &Url,
    body: &[u8],
    now: SystemTime,
) -> Result<TokenSet, OAuthError> {
    #[derive(Deserialize)]
    struct Reply {
        access_token: String,
        token_type: String,
        #[serde(default)]
        expires_in: Option<serde_json::Value>,
        #[serde(default)]
        refresh_token: Option<String>,
        #[serde(default)]
        scope: Option<String>,
    }
    let invalid = |reason: String| OAuthError::InvalidResponse {
        what: "token response",
        url: url.to_string(),
        reason,
    };
    let r: Reply = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
    if r.access_token.is_empty() {
        return Err(invalid("empty access_token".to_owned()));
    }
    let token_type = TokenType::from_name(&r.token_type).ok_or_else(|| {
        invalid(format!(
            "token_type {:?} is neither Bearer nor DPoP",
            r.token_type
        ))
    })?;
    let expires_in = match r.expires_in {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => Some(
            n.as_u64()
                .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
                .ok_or_else(|| invalid(format!("expires_in {n} is not a non-negative number")))?,
        ),
        // Some servers send the number as a string.
        Some(serde_json::Value::String(s)) => Some(
            s.parse::<u64>()
                .map_err(|_| invalid(format!("expires_in {s:?} is not a number")))?,
        ),
        Some(v) => return Err(invalid(format!("expires_in {v} is not a number"))),
    };
    Ok(TokenSet {
        access_token: r.access_token,
        token_type,
        issued_at: Some(now),
        refresh_token: r.refresh_token.filter(|t| !t.is_empty()),
        expires_at: expires_in.and_then(|s| now.checked_add(Duration::from_secs(s))),
        scope: r.scope,
    })
}

/// The OAuth `error` code of a reply body.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: String,
    }
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|b| b.error)
}

fn http_error(what: &'static str, url: &Url, status: StatusCode, body: &[u8]) -> OAuthError {
    #[derive(Deserialize)]
    struct ErrorBody {
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        error_description: Option<String>,
    }
    let (error, description) = serde_json::from_slice::<ErrorBody>(body)
        .map(|b| (b.error, b.error_description))
        .unwrap_or((None, None));
    OAuthError::Http {
        what,
        url: url.to_string(),
        status,
        error,
        description,
    }
}

fn split_scope(s: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in s.unwrap_or_default().split_ascii_whitespace() {
        if !out.iter().any(|p| p == part) {
            out.push(part.to_owned());
        }
    }
    out
}

/// The OpenID Connect `application_type` of a client redirecting to `redirect_uri` (SEP-837):
/// `native` for a loopback or private-scheme redirect (an app on the user's machine), `web`
/// for an `https` redirect to a host.
fn application_type(redirect_uri: &str) -> &'static str {
    match Url::parse(redirect_uri) {
        Ok(u) if u.scheme() == "https" => match u.host() {
            Some(url::Host::Domain(d)) if d != "localhost" => "web",
            _ => "native",
        },
        _ => "native",
    }
}

#[cfg(test)]
mod tests {
    use super::super::grant::{ID_JAG_TOKEN_TYPE, JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT};
    use super::super::{AssertionSource, EnterpriseIdp, OAuthClient, OAuthConfig, ScopePolicy};
    use super::*;
    use crate::oauth::pkce::s256;
    use crate::oauth::store::MemoryTokenStore;
    use serde_json::{Value, json};

    const MCP: &str = "http://rs.test/mcp";
    const REDIRECT: &str = "http://localhost:3000/callback";

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    fn entropy() -> Entropy {
        Entropy::from_bytes([7; 48])
    }

    fn reply(status: u16, body: Value) -> Response<Vec<u8>> {
        let mut r = Response::new(body.to_string().into_bytes());
        *r.status_mut() = StatusCode::from_u16(status).unwrap();
        r
    }

    fn not_found() -> Response<Vec<u8>> {
        reply(404, json!({"error": "not_found"}))
    }

    fn as_metadata(issuer: &str) -> Value {
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
        })
    }

    /// Follows the redirect an approving authorization server would send, echoing `state`.
    fn approve(req: &Request<Vec<u8>>) -> Response<Vec<u8>> {
        let url = Url::parse(&req.uri().to_string()).unwrap();
        let state = url.query_pairs().find(|(k, _)| k == "state").unwrap().1;
        let mut r = Response::new(Vec::new());
        *r.status_mut() = StatusCode::FOUND;
        r.headers_mut().insert(
            header::LOCATION,
            format!("{REDIRECT}?code=the-code&state={state}")
                .parse()
                .unwrap(),
        );
        r
    }

    fn query(req: &Request<Vec<u8>>) -> Vec<(String, String)> {
        Url::parse(&req.uri().to_string())
            .unwrap()
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    fn form(req: &Request<Vec<u8>>) -> Vec<(String, String)> {
        form_urlencoded::parse(req.body())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    fn get<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Runs `flow` against `serve` (which sees every request); returns the requests made (method
    /// and URL) and the outcome.
    fn drive(
        flow: &mut AuthFlow,
        mut serve: impl FnMut(&Request<Vec<u8>>) -> Response<Vec<u8>>,
    ) -> (Vec<String>, Result<String, OAuthError>) {
        let mut seen = Vec::new();
        for _ in 0..32 {
            let step = match flow.step(now()) {
                Ok(s) => s,
                Err(e) => return (seen, Err(e)),
            };
            let req = match step {
                Step::Send(r) | Step::Authorize(r) => r,
                Step::Done(t) => return (seen, Ok(t)),
            };
            seen.push(format!("{} {}", req.method(), req.uri()));
            let resp = serve(&req);
            if let Err(e) = flow.handle_response(now(), resp) {
                return (seen, Err(e));
            }
        }
        panic!("flow did not finish: {seen:?}");
    }

    /// A well-behaved resource + authorization server pair on `rs.test` / `as.test`.
    fn good_servers(req: &Request<Vec<u8>>) -> Response<Vec<u8>> {
        let uri = req.uri().to_string();
        let path = req.uri().path();
        match (req.uri().host(), path) {
            (Some("rs.test"), "/.well-known/oauth-protected-resource/mcp") => reply(
                200,
                json!({"resource": MCP, "authorization_servers": ["http://as.test"], "scopes_supported": ["a", "b"]}),
            ),
            (Some("as.test"), "/.well-known/oauth-authorization-server") => {
                reply(200, as_metadata("http://as.test"))
            }
            (Some("as.test"), "/register") => reply(
                201,
                json!({"client_id": "dyn-id", "client_secret": "dyn-secret"}),
            ),
            (Some("as.test"), "/authorize") => approve(req),
            (Some("as.test"), "/token") => reply(
                200,
                json!({"access_token": "at-1", "token_type": "bearer", "expires_in": 60, "refresh_token": "rt-1"}),
            ),
            _ => panic!("unexpected request {uri}"),
        }
    }

    fn client() -> OAuthClient {
        OAuthClient::new(OAuthConfig::new("test", REDIRECT))
    }

    #[test]
    fn full_flow_discovers_registers_and_exchanges_with_pkce() {
        let oauth = client();
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut auth_query = Vec::new();
        let mut token_form = Vec::new();
        let mut registration = Value::Null;
        let (seen, out) = drive(&mut flow, |req| {
            match req.uri().path() {
                "/authorize" => auth_query = query(req),
                "/token" => token_form = form(req),
                "/register" => registration = serde_json::from_slice(req.body()).unwrap(),
                _ => {}
            }
            good_servers(req)
        });
        assert_eq!(out.unwrap(), "at-1");
        assert_eq!(
            seen[..3],
            [
                "GET http://rs.test/.well-known/oauth-protected-resource/mcp",
                "GET http://as.test/.well-known/oauth-authorization-server",
                "POST http://as.test/register",
            ]
        );
        assert_eq!(seen.len(), 5);
        // Registration asks for the server's first implemented method.
        assert_eq!(
            registration["token_endpoint_auth_method"],
            "client_secret_post"
        );
        assert_eq!(registration["redirect_uris"], json!([REDIRECT]));
        assert_eq!(registration["application_type"], "native");
        // Authorization request: PKCE S256, state, resource, scope from scopes_supported.
        assert_eq!(get(&auth_query, "code_challenge_method"), Some("S256"));
        assert_eq!(get(&auth_query, "client_id"), Some("dyn-id"));
        assert_eq!(get(&auth_query, "resource"), Some(MCP));
        assert_eq!(get(&auth_query, "scope"), Some("a b"));
        assert_eq!(get(&auth_query, "state").map(str::len), Some(22));
        // Token request: the verifier matches the challenge; resource repeated; post auth.
        let verifier = get(&token_form, "code_verifier").unwrap();
        assert_eq!(
            Some(s256(verifier).as_str()),
            get(&auth_query, "code_challenge")
        );
        assert_eq!(get(&token_form, "code"), Some("the-code"));
        assert_eq!(get(&token_form, "resource"), Some(MCP));
        assert_eq!(get(&token_form, "client_secret"), Some("dyn-secret"));
        // Kept: tokens with expiry, the client registration.
        let a = oauth.authorization(MCP).unwrap();
        assert_eq!(a.tokens.expires_at, Some(now() + Duration::from_secs(60)));
        assert_eq!(a.client.auth_method, TokenEndpointAuth::ClientSecretPost);
        assert_eq!(oauth.access_token(MCP, now()).as_deref(), Some("at-1"));
        assert_eq!(
            oauth.access_token(MCP, now() + Duration::from_secs(60)),
            None
        );
    }

    #[test]
    fn challenge_resource_metadata_first_then_well_known() {
        let challenge =
            Challenge::parse(r#"Bearer resource_metadata="http://rs.test/custom.json", scope="x""#)
                .unwrap();
        let mut flow = client().authorize(MCP, &challenge, &entropy()).unwrap();
        let mut scope = None;
        let (seen, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/custom.json" {
                return not_found();
            }
            if req.uri().path() == "/authorize" {
                scope = get(&query(req), "scope").map(str::to_owned);
            }
            good_servers(req)
        });
        out.unwrap();
        assert_eq!(seen[0], "GET http://rs.test/custom.json");
        assert_eq!(
            seen[1],
            "GET http://rs.test/.well-known/oauth-protected-resource/mcp"
        );
        // The challenge's scope wins over scopes_supported.
        assert_eq!(scope.as_deref(), Some("x"));
    }

    /// A challenge's `resource_metadata` on another origin (here the cloud metadata service)
    /// is never fetched: the flow goes to the server's own well-known URL instead.
    #[test]
    fn a_foreign_resource_metadata_is_not_fetched() {
        for foreign in [
            "http://169.254.169.254/latest/meta-data/iam",
            "http://other.test/.well-known/oauth-protected-resource",
        ] {
            let challenge =
                Challenge::parse(&format!(r#"Bearer resource_metadata="{foreign}""#)).unwrap();
            let mut flow = client().authorize(MCP, &challenge, &entropy()).unwrap();
            let (seen, out) = drive(&mut flow, good_servers);
            out.unwrap();
            assert_eq!(
                seen[0], "GET http://rs.test/.well-known/oauth-protected-resource/mcp",
                "{foreign}"
            );
            assert!(seen.iter().all(|s| !s.contains(foreign)), "{seen:?}");
        }
    }

    /// A public server's metadata naming an authorization server on loopback, a private
    /// network or the metadata service fails the flow before any request goes there, with
    /// the reason; allowed, or from a server on the same kind of address, it is fetched.
    #[test]
    fn server_chosen_urls_stay_out_of_the_clients_network() {
        let servers = |issuer: &'static str| {
            move |req: &Request<Vec<u8>>| match req.uri().path() {
                "/.well-known/oauth-protected-resource/mcp" => reply(
                    200,
                    json!({"resource": MCP, "authorization_servers": [issuer]}),
                ),
                _ => not_found(),
            }
        };
        for issuer in [
            "http://127.0.0.1:8080",
            "http://10.0.0.1",
            "http://169.254.169.254",
        ] {
            let mut flow = client()
                .authorize(MCP, &Challenge::default(), &entropy())
                .unwrap();
            let (seen, out) = drive(&mut flow, servers(issuer));
            assert_eq!(
                seen.len(),
                1,
                "nothing fetched after the metadata: {seen:?}"
            );
            match out {
                Err(OAuthError::InvalidUrl { what, url, reason }) => {
                    assert_eq!(what, "authorization server metadata");
                    assert!(url.starts_with(issuer), "{url}");
                    assert!(reason.contains("allow_private_addresses"), "{reason}");
                }
                other => panic!("{issuer}: {other:?}"),
            }
        }
        // Allowed: the metadata is fetched (and here not found).
        let allowed =
            OAuthClient::new(OAuthConfig::new("test", REDIRECT).allow_private_addresses(true));
        let mut flow = allowed
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, servers("http://10.0.0.1"));
        assert!(
            seen[1].starts_with("GET http://10.0.0.1/.well-known/"),
            "{seen:?}"
        );
        assert!(
            matches!(out, Err(OAuthError::NoAuthorizationServerMetadata { .. })),
            "{out:?}"
        );
        // A server on loopback may use an authorization server on loopback.
        let local = "http://127.0.0.1:3000/mcp";
        let mut flow = client()
            .authorize(local, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, _) = drive(&mut flow, |req| match req.uri().path() {
            "/.well-known/oauth-protected-resource/mcp" => reply(
                200,
                json!({"resource": local, "authorization_servers": ["http://localhost:9000"]}),
            ),
            _ => not_found(),
        });
        assert!(
            seen[1].starts_with("GET http://localhost:9000/.well-known/"),
            "{seen:?}"
        );
    }

    /// An authorization server's endpoints are held to the same rules: a token endpoint on
    /// the metadata service is refused before the code is sent there.
    #[test]
    fn endpoints_named_by_the_metadata_are_checked_too() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, |req| {
            match (req.uri().host(), req.uri().path()) {
                (Some("as.test"), "/.well-known/oauth-authorization-server") => {
                    let mut m = as_metadata("http://as.test");
                    m["registration_endpoint"] = json!("http://192.168.1.1/register");
                    reply(200, m)
                }
                _ => good_servers(req),
            }
        });
        assert!(seen.iter().all(|s| !s.contains("192.168")), "{seen:?}");
        match out {
            Err(OAuthError::InvalidUrl { what, .. }) => assert_eq!(what, "registration endpoint"),
            other => panic!("{other:?}"),
        }
    }

    /// A token endpoint that redirects is not followed (the code and the client's secret
    /// would go where the redirect says): the flow fails.
    #[test]
    fn a_redirecting_token_endpoint_is_not_followed() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, |req| match req.uri().path() {
            "/token" => {
                let mut r = Response::new(Vec::new());
                *r.status_mut() = StatusCode::TEMPORARY_REDIRECT;
                r.headers_mut().insert(
                    header::LOCATION,
                    "http://elsewhere.test/steal".parse().unwrap(),
                );
                r
            }
            _ => good_servers(req),
        });
        assert!(out.is_err(), "{out:?}");
        assert!(
            seen.last().is_some_and(|s| s.ends_with("as.test/token")),
            "{seen:?}"
        );
        assert!(seen.iter().all(|s| !s.contains("elsewhere")), "{seen:?}");
    }

    #[test]
    fn path_issuer_metadata_order_and_exhaustion() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, |req| match req.uri().path() {
            "/.well-known/oauth-protected-resource/mcp" => reply(
                200,
                json!({"resource": MCP, "authorization_servers": ["http://as.test/tenant1/"]}),
            ),
            _ => not_found(),
        });
        assert_eq!(
            seen[1..],
            [
                "GET http://as.test/.well-known/oauth-authorization-server/tenant1",
                "GET http://as.test/.well-known/openid-configuration/tenant1",
                "GET http://as.test/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(
            matches!(out, Err(OAuthError::NoAuthorizationServerMetadata { .. })),
            "{out:?}"
        );
    }

    #[test]
    fn without_any_metadata_falls_back_to_2025_03_26_defaults() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut auth = Vec::new();
        let (seen, out) = drive(&mut flow, |req| match req.uri().path() {
            "/register" => reply(201, json!({"client_id": "c", "client_secret": "s"})),
            "/authorize" => {
                auth = query(req);
                approve(req)
            }
            "/token" => {
                // No metadata: the default for a secret is client_secret_basic.
                let basic = req.headers().get(header::AUTHORIZATION).unwrap();
                assert_eq!(basic, &format!("Basic {}", STANDARD.encode("c:s")));
                reply(200, json!({"access_token": "t", "token_type": "Bearer"}))
            }
            _ => not_found(),
        });
        assert_eq!(out.unwrap(), "t");
        assert_eq!(
            seen[..7],
            [
                "GET http://rs.test/.well-known/oauth-protected-resource/mcp",
                "GET http://rs.test/.well-known/oauth-protected-resource",
                "GET http://rs.test/.well-known/oauth-authorization-server",
                "GET http://rs.test/.well-known/openid-configuration",
                "POST http://rs.test/register",
                seen[5].as_str(),
                "POST http://rs.test/token",
            ]
        );
        assert!(seen[5].starts_with("GET http://rs.test/authorize?"));
        assert_eq!(get(&auth, "resource"), Some(MCP));
        assert_eq!(get(&auth, "scope"), None);
    }

    #[test]
    fn legacy_metadata_at_origin_root() {
        let mut flow = client()
            .authorize("http://rs.test/deep/mcp", &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, |req| match req.uri().path() {
            "/.well-known/oauth-authorization-server" => {
                // Issuer and endpoints under a prefix: not checked against the origin in legacy mode.
                reply(200, as_metadata("http://rs.test/oauth"))
            }
            "/oauth/register" => reply(201, json!({"client_id": "c"})),
            "/oauth/authorize" => approve(req),
            "/oauth/token" => reply(200, json!({"access_token": "t", "token_type": "Bearer"})),
            _ => not_found(),
        });
        assert_eq!(out.unwrap(), "t");
        assert_eq!(
            seen[2],
            "GET http://rs.test/.well-known/oauth-authorization-server"
        );
    }

    fn metadata_error(prm: Value, asm: Value) -> OAuthError {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |req| match req.uri().path() {
            "/.well-known/oauth-protected-resource/mcp" => reply(200, prm.clone()),
            "/.well-known/oauth-authorization-server" => reply(200, asm.clone()),
            _ => not_found(),
        });
        out.unwrap_err()
    }

    #[test]
    fn metadata_errors_are_specific() {
        let prm = json!({"resource": MCP, "authorization_servers": ["http://as.test"]});
        let mut no_pkce = as_metadata("http://as.test");
        no_pkce["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(matches!(
            metadata_error(prm.clone(), no_pkce),
            OAuthError::PkceNotSupported { .. }
        ));
        assert!(matches!(
            metadata_error(prm.clone(), as_metadata("http://evil.test")),
            OAuthError::IssuerMismatch { .. }
        ));
        assert!(matches!(
            metadata_error(prm.clone(), json!({"issuer": "http://as.test"})),
            OAuthError::InvalidResponse {
                what: "authorization server metadata",
                ..
            }
        ));
        assert!(matches!(
            metadata_error(
                json!({"resource": "http://other.test/mcp", "authorization_servers": ["http://as.test"]}),
                Value::Null
            ),
            OAuthError::ResourceMismatch { .. }
        ));
        assert!(matches!(
            metadata_error(
                json!({"resource": MCP, "authorization_servers": []}),
                Value::Null
            ),
            OAuthError::InvalidResponse {
                what: "protected resource metadata",
                ..
            }
        ));
        assert!(matches!(
            metadata_error(json!([1, 2]), Value::Null),
            OAuthError::InvalidResponse {
                what: "protected resource metadata",
                ..
            }
        ));
        let mut no_reg = as_metadata("http://as.test");
        no_reg
            .as_object_mut()
            .unwrap()
            .remove("registration_endpoint");
        assert!(matches!(
            metadata_error(prm, no_reg),
            OAuthError::NoClientRegistration { .. }
        ));
    }

    #[test]
    fn server_error_on_metadata_stops() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |_| reply(503, json!({})));
        let e = out.unwrap_err();
        assert!(
            matches!(
                e,
                OAuthError::Http {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    ..
                }
            ),
            "{e}"
        );
        // The flow stays failed with the same error.
        assert_eq!(flow.step(now()).unwrap_err(), e);
        assert_eq!(
            flow.handle_response(now(), not_found()).unwrap_err(),
            OAuthError::NotWaiting
        );
    }

    #[test]
    fn cimd_used_when_supported_and_pre_registration_skips_dcr() {
        let cimd = "https://client.example/metadata.json";
        let oauth = OAuthClient::new(OAuthConfig::new("t", REDIRECT).client_metadata_url(cimd));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut client_id = None;
        let mut token_form = Vec::new();
        let (seen, out) = drive(&mut flow, |req| match req.uri().path() {
            "/.well-known/oauth-authorization-server" => {
                let mut m = as_metadata("http://as.test");
                m["client_id_metadata_document_supported"] = json!(true);
                reply(200, m)
            }
            "/authorize" => {
                client_id = get(&query(req), "client_id").map(str::to_owned);
                approve(req)
            }
            "/token" => {
                token_form = form(req);
                good_servers(req)
            }
            _ => good_servers(req),
        });
        out.unwrap();
        assert!(!seen.iter().any(|s| s.contains("/register")));
        assert_eq!(client_id.as_deref(), Some(cimd));
        assert_eq!(get(&token_form, "client_id"), Some(cimd));
        assert_eq!(get(&token_form, "client_secret"), None);

        let oauth = OAuthClient::new(
            OAuthConfig::new("t", REDIRECT).pre_registered("pre", Some("s&cret".into())),
        );
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/token" {
                // The server lists client_secret_post first of what this client implements.
                assert_eq!(get(&form(req), "client_secret"), Some("s&cret"));
                assert!(req.headers().get(header::AUTHORIZATION).is_none());
            }
            good_servers(req)
        });
        out.unwrap();
        assert!(!seen.iter().any(|s| s.contains("/register")));
    }

    #[test]
    fn basic_auth_form_encodes_credentials() {
        let oauth = OAuthClient::new(
            OAuthConfig::new("t", REDIRECT)
                .pre_registered("id:1", Some("p w".into()))
                .token_endpoint_auth(TokenEndpointAuth::ClientSecretBasic),
        );
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/token" {
                let h = req.headers().get(header::AUTHORIZATION).unwrap();
                assert_eq!(h, &format!("Basic {}", STANDARD.encode("id%3A1:p+w")));
                assert_eq!(get(&form(req), "client_id"), None);
            }
            good_servers(req)
        });
        out.unwrap();
    }

    #[test]
    fn registered_client_is_reused_and_refresh_comes_first() {
        let oauth = client();
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        drive(&mut flow, good_servers).1.unwrap();
        // A 401 later: the kept refresh token is used first.
        let challenge = Challenge::parse("Bearer error=\"invalid_token\"").unwrap();
        let mut flow = oauth.authorize(MCP, &challenge, &entropy()).unwrap();
        let (seen, out) = drive(&mut flow, |req| {
            let f = form(req);
            assert_eq!(get(&f, "grant_type"), Some("refresh_token"));
            assert_eq!(get(&f, "refresh_token"), Some("rt-1"));
            assert_eq!(get(&f, "resource"), Some(MCP));
            reply(200, json!({"access_token": "at-2", "token_type": "Bearer"}))
        });
        assert_eq!(out.unwrap(), "at-2");
        assert_eq!(seen, ["POST http://as.test/token"]);
        // The refresh token is kept when the reply has none.
        assert_eq!(
            oauth
                .authorization(MCP)
                .unwrap()
                .tokens
                .refresh_token
                .as_deref(),
            Some("rt-1")
        );
        // A refused refresh starts over with discovery; the registration is reused.
        let mut flow = oauth.authorize(MCP, &challenge, &entropy()).unwrap();
        let (seen, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/token"
                && get(&form(req), "grant_type") == Some("refresh_token")
            {
                return reply(400, json!({"error": "invalid_grant"}));
            }
            good_servers(req)
        });
        assert_eq!(out.unwrap(), "at-1");
        assert_eq!(
            seen[1],
            "GET http://rs.test/.well-known/oauth-protected-resource/mcp"
        );
        assert!(!seen.iter().any(|s| s.contains("/register")));
    }

    #[test]
    fn step_up_unions_scopes_and_stops_when_nothing_new() {
        let oauth = client();
        let first = Challenge::parse("Bearer scope=\"mcp:basic\"").unwrap();
        let mut flow = oauth.authorize(MCP, &first, &entropy()).unwrap();
        drive(&mut flow, good_servers).1.unwrap();
        assert_eq!(
            oauth.authorization(MCP).unwrap().requested_scope.as_deref(),
            Some("mcp:basic")
        );
        let mut h = http::HeaderMap::new();
        h.insert(
            header::WWW_AUTHENTICATE,
            "Bearer error=\"insufficient_scope\", scope=\"mcp:write\""
                .parse()
                .unwrap(),
        );
        let step_up = Challenge::from_response(StatusCode::FORBIDDEN, &h);
        let mut flow = oauth.authorize(MCP, &step_up, &entropy()).unwrap();
        let mut scope = None;
        let (seen, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/authorize" {
                scope = get(&query(req), "scope").map(str::to_owned);
            }
            good_servers(req)
        });
        out.unwrap();
        // No refresh on a step-up: a new authorization with the union of scopes.
        assert!(seen[0].contains("oauth-protected-resource"));
        assert_eq!(scope.as_deref(), Some("mcp:basic mcp:write"));
        // The same demand again cannot be met by authorizing again.
        let e = oauth.authorize(MCP, &step_up, &entropy()).unwrap_err();
        assert!(matches!(e, OAuthError::StepUpExhausted { .. }), "{e}");
    }

    #[test]
    fn fixed_scope_policy_and_omitted_scope() {
        let oauth = OAuthClient::new(
            OAuthConfig::new("t", REDIRECT).scope_policy(ScopePolicy::Fixed("only".into())),
        );
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut scope = None;
        drive(&mut flow, |req| {
            if req.uri().path() == "/authorize" {
                scope = get(&query(req), "scope").map(str::to_owned);
            }
            good_servers(req)
        })
        .1
        .unwrap();
        assert_eq!(scope.as_deref(), Some("only"));
    }

    fn redirect_error(location: impl Fn(&str) -> String) -> OAuthError {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/authorize" {
                let state = get(&query(req), "state").unwrap().to_owned();
                let mut r = Response::new(Vec::new());
                *r.status_mut() = StatusCode::FOUND;
                r.headers_mut()
                    .insert(header::LOCATION, location(&state).parse().unwrap());
                return r;
            }
            good_servers(req)
        });
        out.unwrap_err()
    }

    #[test]
    fn redirect_errors() {
        assert_eq!(
            redirect_error(|_| format!("{REDIRECT}?code=c&state=forged")),
            OAuthError::StateMismatch
        );
        assert_eq!(
            redirect_error(|s| format!(
                "{REDIRECT}?error=access_denied&error_description=no&state={s}"
            )),
            OAuthError::AuthorizationDenied {
                error: "access_denied".into(),
                description: Some("no".into())
            }
        );
        assert!(matches!(
            redirect_error(|s| format!("http://evil.test/callback?code=c&state={s}")),
            OAuthError::InvalidRedirect(_)
        ));
        assert!(matches!(
            redirect_error(|s| format!("{REDIRECT}?state={s}")),
            OAuthError::InvalidRedirect(_)
        ));
        assert!(matches!(
            redirect_error(|s| format!("{REDIRECT}?code=c&state={s}&iss=http://evil.test")),
            OAuthError::IssuerMismatch { .. }
        ));
    }

    #[test]
    fn a_server_that_always_names_itself_must_have() {
        // RFC 9207: with `authorization_response_iss_parameter_supported`, no `iss` is refused
        // and the right one accepted.
        let run = |with_iss: bool| {
            let mut flow = client()
                .authorize(MCP, &Challenge::default(), &entropy())
                .unwrap();
            drive(&mut flow, |req| match req.uri().path() {
                "/.well-known/oauth-authorization-server" => {
                    let mut m = as_metadata("http://as.test");
                    m["authorization_response_iss_parameter_supported"] = json!(true);
                    reply(200, m)
                }
                "/authorize" => {
                    let state = get(&query(req), "state").unwrap().to_owned();
                    let iss = if with_iss { "&iss=http://as.test" } else { "" };
                    let mut r = Response::new(Vec::new());
                    *r.status_mut() = StatusCode::FOUND;
                    let location = format!("{REDIRECT}?code=c&state={state}{iss}");
                    r.headers_mut()
                        .insert(header::LOCATION, location.parse().unwrap());
                    r
                }
                _ => good_servers(req),
            })
            .1
        };
        assert!(matches!(run(false), Err(OAuthError::MissingIssuer { .. })));
        assert!(run(true).is_ok());
    }

    #[test]
    fn registration_names_the_application_type() {
        assert_eq!(application_type("http://localhost:3000/callback"), "native");
        assert_eq!(application_type("http://127.0.0.1/cb"), "native");
        assert_eq!(application_type("com.example.app:/oauth"), "native");
        assert_eq!(application_type("https://localhost/cb"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
    }

    #[test]
    fn interactive_callback_completes_the_flow() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let state = loop {
            match flow.step(now()).unwrap() {
                Step::Authorize(req) => break get(&query(&req), "state").unwrap().to_owned(),
                Step::Send(req) => flow.handle_response(now(), good_servers(&req)).unwrap(),
                Step::Done(_) => panic!("done before authorizing"),
            }
        };
        assert!(matches!(
            flow.handle_callback("not a url"),
            Err(OAuthError::InvalidUrl {
                what: "redirect",
                ..
            })
        ));
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        loop {
            match flow.step(now()).unwrap() {
                Step::Authorize(_) => break,
                Step::Send(req) => flow.handle_response(now(), good_servers(&req)).unwrap(),
                Step::Done(_) => panic!("done before authorizing"),
            }
        }
        flow.handle_callback(&format!("{REDIRECT}?code=c&state={state}"))
            .unwrap();
        match flow.step(now()).unwrap() {
            Step::Send(req) => flow.handle_response(now(), good_servers(&req)).unwrap(),
            other => panic!("{other:?}"),
        }
        assert!(matches!(flow.step(now()).unwrap(), Step::Done(t) if t == "at-1"));
        assert!(flow.authorization().is_some());
        assert_eq!(
            flow.handle_callback(REDIRECT).unwrap_err(),
            OAuthError::NotWaiting
        );
    }

    #[test]
    fn token_response_validation() {
        let url = Url::parse("http://as.test/token").unwrap();
        let parse = |v: Value| parse_token_response(&url, v.to_string().as_bytes(), now());
        assert!(parse(json!({"access_token": "a", "token_type": "N_A"})).is_err());
        let dpop = parse(json!({"access_token": "a", "token_type": "dpop"})).unwrap();
        assert_eq!(dpop.token_type, TokenType::DPoP);
        assert_eq!(dpop.issued_at, Some(now()));
        assert!(parse(json!({"access_token": "", "token_type": "Bearer"})).is_err());
        assert!(parse(json!({"token_type": "Bearer"})).is_err());
        assert!(
            parse(json!({"access_token": "a", "token_type": "Bearer", "expires_in": -1})).is_err()
        );
        assert!(
            parse(json!({"access_token": "a", "token_type": "Bearer", "expires_in": [1]})).is_err()
        );
        let t = parse(json!({"access_token": "a", "token_type": "BEARER", "expires_in": "10", "refresh_token": ""})).unwrap();
        assert_eq!(t.expires_at, Some(now() + Duration::from_secs(10)));
        assert_eq!(t.refresh_token, None);
        assert!(parse_token_response(&url, b"\xff", now()).is_err());
    }

    #[test]
    fn token_endpoint_error_is_reported() {
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |req| {
            if req.uri().path() == "/token" {
                return reply(
                    400,
                    json!({"error": "invalid_grant", "error_description": "expired code"}),
                );
            }
            good_servers(req)
        });
        let e = out.unwrap_err();
        assert_eq!(
            e,
            OAuthError::Http {
                what: "token request",
                url: "http://as.test/token".into(),
                status: StatusCode::BAD_REQUEST,
                error: Some("invalid_grant".into()),
                description: Some("expired code".into()),
            }
        );
        assert!(e.to_string().contains("invalid_grant (expired code)"));
    }

    #[test]
    fn auth_method_choice() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            choose_auth_method(false, Some(&l(&["client_secret_basic"]))),
            TokenEndpointAuth::None
        );
        assert_eq!(
            choose_auth_method(true, None),
            TokenEndpointAuth::ClientSecretBasic
        );
        assert_eq!(
            choose_auth_method(true, Some(&l(&["none", "client_secret_post"]))),
            TokenEndpointAuth::ClientSecretPost
        );
        assert_eq!(
            choose_auth_method(true, Some(&l(&["none"]))),
            TokenEndpointAuth::None
        );
        assert_eq!(
            choose_auth_method(true, Some(&l(&["private_key_jwt"]))),
            TokenEndpointAuth::ClientSecretBasic
        );
        let _ = MemoryTokenStore::new();
    }

    #[test]
    fn bad_server_urls_are_errors() {
        for u in ["not a url", "ftp://x/mcp", "file:///tmp/x"] {
            assert!(matches!(
                client().authorize(u, &Challenge::default(), &entropy()),
                Err(OAuthError::InvalidUrl { .. })
            ));
        }
    }

    /// An authorization server for grants without a user, on `as.test` (no authorization
    /// endpoint, no PKCE): `token` answers the token requests.
    fn machine_servers(
        mut token: impl FnMut(&Request<Vec<u8>>) -> Response<Vec<u8>>,
    ) -> impl FnMut(&Request<Vec<u8>>) -> Response<Vec<u8>> {
        move |req| match (req.uri().host(), req.uri().path()) {
            (Some("rs.test"), "/.well-known/oauth-protected-resource/mcp") => reply(
                200,
                json!({"resource": MCP, "authorization_servers": ["http://as.test"], "scopes_supported": ["jobs"]}),
            ),
            (Some("as.test"), "/.well-known/oauth-authorization-server") => reply(
                200,
                json!({
                    "issuer": "http://as.test",
                    "token_endpoint": "http://as.test/token",
                    "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
                }),
            ),
            _ => token(req),
        }
    }

    fn machine(grant: Grant, secret: Option<&str>) -> OAuthClient {
        OAuthClient::new(
            OAuthConfig::new("machine", REDIRECT)
                .grant(grant)
                .pre_registered("m-id", secret.map(str::to_owned)),
        )
    }

    #[test]
    fn client_credentials_goes_straight_to_the_token_endpoint() {
        let oauth = machine(Grant::ClientCredentials, Some("m-secret"));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut token_req = None;
        let (seen, out) = drive(
            &mut flow,
            machine_servers(|req| {
                token_req = Some((form(req), req.headers().clone()));
                reply(
                    200,
                    json!({"access_token": "cc-1", "token_type": "Bearer", "expires_in": 600}),
                )
            }),
        );
        assert_eq!(out.unwrap(), "cc-1");
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[2], "POST http://as.test/token");
        let (f, headers) = token_req.unwrap();
        assert_eq!(get(&f, "grant_type"), Some("client_credentials"));
        assert_eq!(get(&f, "scope"), Some("jobs"));
        assert_eq!(get(&f, "resource"), Some(MCP));
        assert_eq!(get(&f, "client_secret"), None);
        let basic = format!("Basic {}", STANDARD.encode("m-id:m-secret"));
        assert_eq!(headers[header::AUTHORIZATION], basic.as_str());
        assert!(headers.get(DPOP).is_none(), "no DPoP without a key");
        let a = oauth.authorization(MCP).unwrap();
        assert_eq!(a.tokens.issued_at, Some(now()));
        assert_eq!(a.issuer, "http://as.test");
        // Renewing it runs the grant again (no refresh token).
        assert!(oauth.needs_renewal(MCP, now() + Duration::from_secs(590)));
        assert!(!oauth.needs_renewal(MCP, now() + Duration::from_secs(500)));
        let mut renew = oauth.renew(MCP, &entropy()).unwrap();
        let (seen, out) = drive(
            &mut renew,
            machine_servers(|_| {
                reply(200, json!({"access_token": "cc-2", "token_type": "Bearer"}))
            }),
        );
        assert_eq!(out.unwrap(), "cc-2");
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn a_refused_refresh_of_a_grant_without_a_user_runs_the_grant() {
        let oauth = machine(Grant::ClientCredentials, Some("m-secret"));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(
            &mut flow,
            machine_servers(|_| {
                reply(
                    200,
                    json!({"access_token": "cc-1", "token_type": "Bearer", "refresh_token": "r-1"}),
                )
            }),
        );
        out.unwrap();
        let mut renew = oauth.renew(MCP, &entropy()).unwrap();
        let mut grants = Vec::new();
        let (_, out) = drive(
            &mut renew,
            machine_servers(|req| {
                let g = get(&form(req), "grant_type").unwrap().to_owned();
                grants.push(g.clone());
                if g == "refresh_token" {
                    reply(400, json!({"error": "invalid_grant"}))
                } else {
                    reply(200, json!({"access_token": "cc-2", "token_type": "Bearer"}))
                }
            }),
        );
        assert_eq!(out.unwrap(), "cc-2");
        assert_eq!(grants, ["refresh_token", "client_credentials"]);
    }

    #[test]
    fn a_grant_without_a_user_needs_a_registered_client() {
        let oauth =
            OAuthClient::new(OAuthConfig::new("machine", REDIRECT).grant(Grant::ClientCredentials));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, machine_servers(|_| panic!("no token request")));
        assert_eq!(seen.len(), 2);
        match out {
            Err(OAuthError::Configuration(m)) => assert!(m.contains("client_credentials"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn jwt_bearer_sends_the_assertion_and_reports_an_unreadable_one() {
        let n = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let count = n.clone();
        let source = AssertionSource::from_fn("test source", move || {
            let i = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(format!("workload.jwt.{i}"))
        });
        let oauth = machine(Grant::JwtBearer(source), None);
        for i in 0..2 {
            oauth.forget(MCP);
            let mut flow = oauth
                .authorize(MCP, &Challenge::default(), &entropy())
                .unwrap();
            let mut f = Vec::new();
            let (_, out) = drive(
                &mut flow,
                machine_servers(|req| {
                    f = form(req);
                    reply(200, json!({"access_token": "wif", "token_type": "Bearer"}))
                }),
            );
            out.unwrap();
            assert_eq!(get(&f, "grant_type"), Some(JWT_BEARER_GRANT));
            // Read afresh for every grant.
            assert_eq!(
                get(&f, "assertion"),
                Some(format!("workload.jwt.{i}").as_str())
            );
            assert_eq!(get(&f, "client_id"), Some("m-id"));
        }
        let broken = machine(
            Grant::JwtBearer(AssertionSource::from_fn("the token file", || {
                Err("gone".to_owned())
            })),
            None,
        );
        let mut flow = broken
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, machine_servers(|_| panic!("no token request")));
        assert_eq!(
            out.unwrap_err(),
            OAuthError::Assertion {
                from: "the token file".into(),
                reason: "gone".into()
            }
        );
    }

    #[test]
    fn enterprise_managed_exchanges_the_id_token_then_uses_the_id_jag() {
        let idp = EnterpriseIdp::new(
            "http://idp.test/token",
            "idp-client",
            AssertionSource::value("the.id.token"),
        );
        let oauth = machine(Grant::EnterpriseManaged(idp), Some("m-secret"));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut exchange = Vec::new();
        let mut bearer = (Vec::new(), None);
        let (seen, out) = drive(
            &mut flow,
            machine_servers(|req| match req.uri().host() {
                Some("idp.test") => {
                    exchange = form(req);
                    reply(
                        200,
                        json!({"access_token": "the.id.jag", "issued_token_type": ID_JAG_TOKEN_TYPE, "token_type": "N_A"}),
                    )
                }
                _ => {
                    bearer = (form(req), req.headers().get(header::AUTHORIZATION).cloned());
                    reply(
                        200,
                        json!({"access_token": "at-jag", "token_type": "Bearer"}),
                    )
                }
            }),
        );
        assert_eq!(out.unwrap(), "at-jag");
        assert_eq!(
            seen[2..],
            ["POST http://idp.test/token", "POST http://as.test/token"]
        );
        assert_eq!(get(&exchange, "grant_type"), Some(TOKEN_EXCHANGE_GRANT));
        assert_eq!(get(&exchange, "subject_token"), Some("the.id.token"));
        assert_eq!(get(&exchange, "audience"), Some("http://as.test"));
        assert_eq!(get(&exchange, "resource"), Some(MCP));
        assert_eq!(get(&exchange, "client_id"), Some("idp-client"));
        assert_eq!(get(&bearer.0, "grant_type"), Some(JWT_BEARER_GRANT));
        assert_eq!(get(&bearer.0, "assertion"), Some("the.id.jag"));
        assert!(bearer.1.is_some(), "the client authenticates with Basic");
        // A refused exchange says so.
        oauth.forget(MCP);
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(
            &mut flow,
            machine_servers(|_| reply(400, json!({"error": "invalid_grant"}))),
        );
        match out {
            Err(OAuthError::Http { what, error, .. }) => {
                assert_eq!(what, "token exchange");
                assert_eq!(error.as_deref(), Some("invalid_grant"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// The first authorization server listed has no metadata (404s), or cannot be reached:
    /// the next one is used. When all fail, the first one's error is reported.
    #[test]
    fn every_listed_authorization_server_is_tried() {
        let servers = |req: &Request<Vec<u8>>| match (req.uri().host(), req.uri().path()) {
            (Some("rs.test"), "/.well-known/oauth-protected-resource/mcp") => reply(
                200,
                json!({"resource": MCP, "authorization_servers": ["http://down.test", "http://as.test"]}),
            ),
            (Some("down.test"), _) => not_found(),
            _ => good_servers(req),
        };
        let oauth = client();
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (seen, out) = drive(&mut flow, servers);
        assert_eq!(out.unwrap(), "at-1");
        assert!(seen[1].starts_with("GET http://down.test/"), "{seen:?}");
        assert!(
            seen.iter()
                .any(|s| s == "GET http://as.test/.well-known/oauth-authorization-server")
        );
        assert_eq!(oauth.authorization(MCP).unwrap().issuer, "http://as.test");

        // A transport failure at the first server's metadata.
        let oauth = client();
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let mut down = 0;
        for _ in 0..16 {
            let req = match flow.step(now()).unwrap() {
                Step::Send(r) | Step::Authorize(r) => r,
                Step::Done(_) => break,
            };
            if req.uri().host() == Some("down.test") {
                down += 1;
                flow.handle_error("connection refused").unwrap();
            } else {
                flow.handle_response(now(), servers(&req)).unwrap();
            }
        }
        assert_eq!(down, 1, "one failure moves on to the next server");
        assert!(flow.authorization().is_some());

        // All fail: the first server's error.
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(&mut flow, |req| match req.uri().host() {
            Some("rs.test") => servers(req),
            _ => not_found(),
        });
        match out {
            Err(OAuthError::NoAuthorizationServerMetadata { issuer, .. }) => {
                assert_eq!(issuer, "http://down.test/")
            }
            other => panic!("{other:?}"),
        }
        // A transport failure elsewhere ends the flow.
        let mut flow = client()
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        match flow.handle_error("timed out") {
            Err(OAuthError::Transport { what, reason, .. }) => {
                assert_eq!(what, "protected resource metadata request");
                assert_eq!(reason, "timed out");
            }
            other => panic!("{other:?}"),
        }
        // The flow is over: step repeats why.
        assert!(matches!(
            flow.step(now()),
            Err(OAuthError::Transport { .. })
        ));
        assert_eq!(flow.handle_error("again"), Err(OAuthError::NotWaiting));
    }

    #[test]
    fn renewing_an_authorization_code_grant_only_refreshes() {
        let oauth = client();
        // Nothing kept: nothing to renew with.
        assert!(matches!(
            oauth.renew(MCP, &entropy()),
            Err(OAuthError::Configuration(_))
        ));
        let mut flow = oauth
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        drive(&mut flow, good_servers).1.unwrap();
        assert!(oauth.needs_renewal(MCP, now() + Duration::from_secs(55)));
        // A refused refresh fails the renewal and leaves the token as it was.
        let mut renew = oauth.renew(MCP, &entropy()).unwrap();
        let (seen, out) = drive(&mut renew, |_| {
            reply(400, json!({"error": "invalid_grant"}))
        });
        assert_eq!(seen, ["POST http://as.test/token"]);
        assert!(matches!(
            out,
            Err(OAuthError::Http {
                what: "refresh request",
                ..
            })
        ));
        assert_eq!(oauth.access_token(MCP, now()).as_deref(), Some("at-1"));
        let mut renew = oauth.renew(MCP, &entropy()).unwrap();
        let (_, out) = drive(&mut renew, |_| {
            reply(
                200,
                json!({"access_token": "at-2", "token_type": "Bearer", "expires_in": 60}),
            )
        });
        assert_eq!(out.unwrap(), "at-2");
    }

    #[test]
    fn a_dpop_token_without_a_key_is_refused() {
        let mut flow = machine(Grant::ClientCredentials, Some("s"))
            .authorize(MCP, &Challenge::default(), &entropy())
            .unwrap();
        let (_, out) = drive(
            &mut flow,
            machine_servers(|_| reply(200, json!({"access_token": "d", "token_type": "DPoP"}))),
        );
        match out {
            Err(OAuthError::InvalidResponse { reason, .. }) => {
                assert!(reason.contains("DPoP"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[cfg(feature = "oauth-jwt")]
    fn jwt_part(jwt: &str, i: usize) -> Value {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let seg = jwt.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
    }

    /// `private_key_jwt` and DPoP in one token request: the assertion in the form, the proof
    /// in the header; `use_dpop_nonce` is answered once with the nonce, fresh `jti`s.
    #[cfg(feature = "oauth-jwt")]
    #[test]
    fn private_key_jwt_and_dpop_token_requests_with_a_nonce() {
        use crate::oauth::{DpopKey, SigningAlgorithm, SigningKey};
        let pem = crate::oauth::jwt::tests::EC_PEM;
        let key = SigningKey::from_pem(pem.as_bytes(), SigningAlgorithm::ES256).unwrap();
        let dpop = DpopKey::from_secret_bytes(&[3; 32]).unwrap();
        let oauth = OAuthClient::new(
            OAuthConfig::new("machine", REDIRECT)
                .grant(Grant::ClientCredentials)
                .private_key_jwt("k-id", key)
                .dpop(dpop.clone()),
        );
        for nonce_challenges in [1, 2] {
            oauth.forget(MCP);
            let mut flow = oauth
                .authorize(MCP, &Challenge::default(), &entropy())
                .unwrap();
            let mut proofs = Vec::new();
            let mut asked = 0;
            let (seen, out) = drive(
                &mut flow,
                machine_servers(|req| {
                    let f = form(req);
                    assert_eq!(get(&f, "client_assertion_type"), Some(JWT_CLIENT_ASSERTION));
                    let assertion = jwt_part(get(&f, "client_assertion").unwrap(), 1);
                    assert_eq!(assertion["iss"], "k-id");
                    assert_eq!(assertion["aud"], "http://as.test");
                    let proof = req.headers()[DPOP].to_str().unwrap().to_owned();
                    let claims = jwt_part(&proof, 1);
                    assert_eq!(claims["htm"], "POST");
                    assert_eq!(claims["htu"], "http://as.test/token");
                    proofs.push((claims, assertion["jti"].clone()));
                    if asked < nonce_challenges {
                        asked += 1;
                        let mut r = reply(400, json!({"error": "use_dpop_nonce"}));
                        r.headers_mut()
                            .insert(DPOP_NONCE, format!("n-{asked}").parse().unwrap());
                        return r;
                    }
                    reply(200, json!({"access_token": "bound", "token_type": "DPoP"}))
                }),
            );
            assert_eq!(seen.len(), 4, "{seen:?}");
            assert_eq!(proofs.len(), 2);
            if nonce_challenges == 1 {
                assert!(proofs[0].0.get("nonce").is_none());
            }
            // The retry carries the nonce the challenge gave (later ones reuse it).
            assert_eq!(proofs[1].0["nonce"], "n-1");
            assert_ne!(proofs[0].0["jti"], proofs[1].0["jti"]);
            assert_ne!(proofs[0].1, proofs[1].1);
            if nonce_challenges == 1 {
                assert_eq!(out.unwrap(), "bound");
                assert_eq!(
                    oauth.authorization(MCP).unwrap().tokens.token_type,
                    TokenType::DPoP
                );
                // The resource requests present it with a proof bound to the token.
                let h = oauth
                    .request_headers(MCP, "POST", MCP, now(), &[1; 16])
                    .unwrap()
                    .unwrap();
                assert_eq!(h.authorization, "DPoP bound");
                let claims = jwt_part(h.dpop.as_deref().unwrap(), 1);
                assert_eq!(claims["ath"], s256("bound"));
                assert_eq!(claims["htu"], MCP);
            } else {
                // Asked again after the retry: the flow stops with the server's error.
                match out {
                    Err(OAuthError::Http { error, .. }) => {
                        assert_eq!(error.as_deref(), Some("use_dpop_nonce"))
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}
