//! Opaque (or any) access tokens checked with the authorization server's RFC 7662
//! introspection endpoint.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::Digest as _;

use super::fetch::HttpFetch;
use super::{Identity, TokenError};
use crate::runtime::BoxFuture;

/// How the resource server authenticates to the introspection endpoint (RFC 7662 §2.1: the
/// endpoint requires it).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// No authentication (an endpoint protected otherwise, e.g. on a private network).
    None,
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    Basic {
        /// The resource server's client id at the authorization server.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// `client_secret_post`: the id and secret in the form body.
    Post {
        /// The resource server's client id at the authorization server.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// A bearer token of the resource server's own.
    Bearer(String),
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientAuth::None => f.write_str("None"),
            ClientAuth::Basic { client_id, .. } => write!(f, "Basic({client_id}, ..)"),
            ClientAuth::Post { client_id, .. } => write!(f, "Post({client_id}, ..)"),
            ClientAuth::Bearer(_) => f.write_str("Bearer(..)"),
        }
    }
}

/// Validates tokens by asking the authorization server (RFC 7662): `POST token=…` to its
/// introspection endpoint with the resource server's [`ClientAuth`]; an `active` answer is
/// the identity, once its `exp`/`nbf`, `iss` (when [`issuer`](Self::issuer)s are set) and
/// `aud` pass.
///
/// - **Audience**: the answer's `aud` must name one of the [`audience`](Self::audience)s (the
///   MCP server's canonical URL); an answer without `aud` is refused unless
///   [`allow_missing_audience`](Self::allow_missing_audience). Without any audience
///   configured every token is refused.
/// - **Cache**: answers (active or not) are kept [`cache_ttl`](Self::cache_ttl) (60 s; an
///   active one never past its `exp`), keyed by the token's SHA-256, at most
///   [`max_cached`](Self::max_cached) (1024; expired then oldest evicted). A failed exchange
///   is not cached.
#[derive(Clone)]
pub struct IntrospectionValidator {
    inner: Arc<Inner>,
}

/// A cached answer: when it was cached, until when it holds, what it was.
type Cached = (Instant, Instant, Result<Identity, TokenError>);

struct Inner {
    endpoint: String,
    fetch: Box<dyn HttpFetch>,
    auth: ClientAuth,
    audiences: Vec<String>,
    issuers: Vec<String>,
    allow_missing_audience: bool,
    leeway: u64,
    cache_ttl: Duration,
    max_cached: usize,
    cache: Mutex<HashMap<[u8; 32], Cached>>,
}

impl std::fmt::Debug for IntrospectionValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionValidator")
            .field("endpoint", &self.inner.endpoint)
            .field("auth", &self.inner.auth)
            .field("audiences", &self.inner.audiences)
            .finish_non_exhaustive()
    }
}

impl IntrospectionValidator {
    /// A validator asking `endpoint` through `fetch`, authenticating with `auth`.
    pub fn new(endpoint: impl Into<String>, fetch: impl HttpFetch, auth: ClientAuth) -> Self {
        IntrospectionValidator {
            inner: Arc::new(Inner {
                endpoint: endpoint.into(),
                fetch: Box::new(fetch),
                auth,
                audiences: Vec::new(),
                issuers: Vec::new(),
                allow_missing_audience: false,
                leeway: 30,
                cache_ttl: Duration::from_secs(60),
                max_cached: 1024,
                cache: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => f(inner),
            None => {
                tracing::warn!(target: "mcp", "IntrospectionValidator settings changed after it was cloned: ignored")
            }
        }
        self
    }

    /// Accepts tokens for `audience`; call again for more. Required.
    pub fn audience(self, audience: impl Into<String>) -> Self {
        let audience = audience.into();
        self.edit(|i| i.audiences.push(audience))
    }

    /// Accepts answers naming `issuer` as `iss`; call again for more. Without any, `iss` is
    /// not checked.
    pub fn issuer(self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self.edit(|i| i.issuers.push(issuer))
    }

    /// Accepts active answers without `aud` (an authorization server that issues tokens for
    /// this resource only, and says so by not naming audiences). Default: refused.
    pub fn allow_missing_audience(self, allow: bool) -> Self {
        self.edit(|i| i.allow_missing_audience = allow)
    }

    /// How long an answer is reused (default 60 s; 0 disables the cache).
    pub fn cache_ttl(self, ttl: Duration) -> Self {
        self.edit(|i| i.cache_ttl = ttl)
    }

    /// The most answers cached (default 1024).
    pub fn max_cached(self, entries: usize) -> Self {
        self.edit(|i| i.max_cached = entries)
    }

    /// The clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub fn leeway(self, seconds: u64) -> Self {
        self.edit(|i| i.leeway = seconds)
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Inner {
    fn cached(&self, key: &[u8; 32]) -> Option<Result<Identity, TokenError>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(key) {
            Some((_, until, r)) if Instant::now() < *until => Some(r.clone()),
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }

    fn remember(&self, key: [u8; 32], result: &Result<Identity, TokenError>) {
        if self.cache_ttl.is_zero() || self.max_cached == 0 {
            return;
        }
        let now = Instant::now();
        let mut until = now + self.cache_ttl;
        if let Ok(id) = result
            && let Some(exp) = id.expires_at
        {
            let left = exp.saturating_sub(unix_now());
            until = until.min(now + Duration::from_secs(left));
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= self.max_cached {
            cache.retain(|_, (_, until, _)| now < *until);
        }
        while cache.len() >= self.max_cached {
            let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, (at, _, _))| *at)
                .map(|(k, _)| *k)
            else {
                break;
            };
            cache.remove(&oldest);
        }
        cache.insert(key, (now, until, result.clone()));
    }

    fn request(&self, token: &str) -> Result<http::Request<Vec<u8>>, TokenError> {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("token", token);
        form.append_pair("token_type_hint", "access_token");
        let mut b = http::Request::post(self.endpoint.as_str())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json");
        match &self.auth {
            ClientAuth::None => {}
            ClientAuth::Basic {
                client_id,
                client_secret,
            } => {
                let enc = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", enc(client_id), enc(client_secret));
                let basic = base64::engine::general_purpose::STANDARD.encode(pair);
                b = b.header(http::header::AUTHORIZATION, format!("Basic {basic}"));
            }
            ClientAuth::Post {
                client_id,
                client_secret,
            } => {
                form.append_pair("client_id", client_id);
                form.append_pair("client_secret", client_secret);
            }
            ClientAuth::Bearer(t) => {
                b = b.header(http::header::AUTHORIZATION, format!("Bearer {t}"));
            }
        }
        b.body(form.finish().into_bytes())
            .map_err(|e| TokenError::Unavailable(format!("introspection request: {e}")))
    }

    /// Checks an active answer's claims.
    fn judge(&self, claims: Map<String, Value>) -> Result<Identity, TokenError> {
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::Invalid("the token is not active".into()));
        }
        let id = Identity::from_claims(claims);
        let now = unix_now();
        if id
            .expires_at
            .is_some_and(|exp| exp.saturating_add(self.leeway) <= now)
        {
            return Err(TokenError::Invalid("the token has expired".into()));
        }
        if id
            .claims
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now.saturating_add(self.leeway))
        {
            return Err(TokenError::Invalid(
                "the token is not valid yet (nbf)".into(),
            ));
        }
        if !self.issuers.is_empty() && !id.issuer.as_ref().is_some_and(|i| self.issuers.contains(i))
        {
            return Err(TokenError::Invalid(
                "the token is from another issuer (iss)".into(),
            ));
        }
        let aud_ok = if id.audience.is_empty() {
            self.allow_missing_audience
        } else {
            id.audience.iter().any(|a| self.audiences.contains(a))
        };
        if !aud_ok {
            return Err(TokenError::Invalid(
                "the token was not issued for this resource (aud)".into(),
            ));
        }
        Ok(id)
    }

    async fn validate(&self, token: &str) -> Result<Identity, TokenError> {
        if self.audiences.is_empty() {
            return Err(TokenError::Invalid(
                "the server accepts no audience (IntrospectionValidator::audience is not set)"
                    .into(),
            ));
        }
        let key: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        if let Some(r) = self.cached(&key) {
            return r;
        }
        let request = self.request(token)?;
        let reply = self.fetch.fetch(request).await.map_err(|e| {
            tracing::warn!(target: "mcp", endpoint = %self.endpoint, error = %e, "token introspection failed");
            TokenError::Unavailable(format!("token introspection failed: {e}"))
        })?;
        if !reply.status().is_success() {
            tracing::warn!(target: "mcp", endpoint = %self.endpoint, status = %reply.status(), "token introspection refused");
            return Err(TokenError::Unavailable(format!(
                "the introspection endpoint answered HTTP {}",
                reply.status()
            )));
        }
        let claims: Map<String, Value> = serde_json::from_slice(reply.body()).map_err(|e| {
            TokenError::Unavailable(format!(
                "the introspection answer is not a JSON object: {e}"
            ))
        })?;
        let result = self.judge(claims);
        self.remember(key, &result);
        result
    }
}

impl super::TokenValidator for IntrospectionValidator {
    fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.validate(&token).await })
    }
}
