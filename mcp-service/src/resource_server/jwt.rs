//! JWT access tokens (RFC 9068) checked against the authorization server's JWKS.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::fetch::HttpFetch;
use super::{Identity, TokenError};
use crate::runtime::BoxFuture;

/// The asymmetric algorithms accepted by default (a JWKS holds public keys: `HS*` and `none`
/// are never accepted from one).
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Validates JWT access tokens: the signature with a key of the authorization server's JWKS
/// (fetched on first use and cached), then `exp` (required), `nbf`, `iss` and `aud`.
///
/// - **Audience** (RFC 8707, RFC 9068 §4): the token's `aud` must name one of the
///   [`audience`](Self::audience)s — the MCP server's canonical URL, typically. Without any
///   audience configured every token is refused: a token issued for another resource must
///   never be accepted.
/// - **Issuer**: with [`issuer`](Self::issuer)s, `iss` must be one of them (and present).
/// - **Keys**: the token's `kid` picks the key (without a `kid`, each key of the algorithm's
///   family is tried). An unknown `kid` refetches the JWKS (key rotation), at most once per
///   [`refresh_interval`](Self::refresh_interval) (30 s), so that tokens with made-up `kid`s
///   cannot make the server hammer the authorization server; the set is also refetched when
///   older than [`max_age`](Self::max_age) (10 min; the cached keys are kept when that fetch
///   fails). At most [`max_keys`](Self::max_keys) keys (32) are kept, keys marked for
///   encryption (`"use": "enc"`) and of unknown types are skipped.
/// - **Algorithms**: the asymmetric ones (RS*, PS*, ES256, ES384, EdDSA) by default; the
///   header's `alg` must be one of them and match the key's `alg` when the key has one.
/// - **Verified tokens** are remembered (by their SHA-256) for
///   [`verified_cache`](Self::verified_cache) (30 s, never past their `exp`; at most 1024):
///   a client sends the same token with every request, and a signature check costs
///   100–400 µs. A key removed from the JWKS stops its remembered tokens within that time.
///
/// Cheap to clone (the cache is shared).
#[derive(Clone)]
pub struct JwtValidator {
    inner: Arc<Inner>,
}

struct Inner {
    jwks_url: String,
    fetch: Box<dyn HttpFetch>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    refresh_interval: Duration,
    max_age: Duration,
    max_keys: usize,
    cache: Mutex<Cache>,
    verified_ttl: Duration,
    verified_max: usize,
    /// Tokens that verified: SHA-256 → (valid until, identity).
    verified: Mutex<std::collections::HashMap<[u8; 32], (Instant, Identity)>>,
    /// One JWKS fetch at a time: the others wait for its keys.
    fetching: futures_util::lock::Mutex<()>,
}

#[derive(Default)]
struct Cache {
    keys: Vec<Arc<CachedKey>>,
    /// When the set in `keys` was fetched.
    fetched: Option<Instant>,
    /// The last fetch attempt (successful or not).
    attempted: Option<Instant>,
}

struct CachedKey {
    kid: Option<String>,
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    key: DecodingKey,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("jwks_url", &self.inner.jwks_url)
            .field("issuers", &self.inner.issuers)
            .field("audiences", &self.inner.audiences)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// A validator with the keys of the JWKS at `jwks_url`, fetched with `fetch`.
    pub fn new(jwks_url: impl Into<String>, fetch: impl HttpFetch) -> Self {
        JwtValidator {
            inner: Arc::new(Inner {
                jwks_url: jwks_url.into(),
                fetch: Box::new(fetch),
                issuers: Vec::new(),
                audiences: Vec::new(),
                algorithms: DEFAULT_ALGORITHMS.to_vec(),
                leeway: 30,
                refresh_interval: Duration::from_secs(30),
                max_age: Duration::from_secs(600),
                max_keys: 32,
                cache: Mutex::new(Cache::default()),
                verified_ttl: Duration::from_secs(30),
                verified_max: 1024,
                verified: Mutex::new(std::collections::HashMap::new()),
                fetching: futures_util::lock::Mutex::new(()),
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => f(inner),
            None => {
                tracing::warn!(target: "mcp", "JwtValidator settings changed after it was cloned: ignored")
            }
        }
        self
    }

    /// Accepts tokens of `issuer` (`iss`); call again for more. Without any, `iss` is not
    /// checked.
    pub fn issuer(self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self.edit(|i| i.issuers.push(issuer))
    }

    /// Accepts tokens for `audience` (`aud`), typically the MCP server's canonical URL; call
    /// again for more. Required: without one, every token is refused.
    pub fn audience(self, audience: impl Into<String>) -> Self {
        let audience = audience.into();
        self.edit(|i| i.audiences.push(audience))
    }

    /// The algorithms accepted (replacing the default asymmetric ones); `HS*` are ignored.
    pub fn algorithms(self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        let algs: Vec<Algorithm> = algorithms
            .into_iter()
            .filter(|a| a.family() != AlgorithmFamily::Hmac)
            .collect();
        self.edit(|i| i.algorithms = algs)
    }

    /// The clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub fn leeway(self, seconds: u64) -> Self {
        self.edit(|i| i.leeway = seconds)
    }

    /// The least time between two JWKS fetches caused by unknown `kid`s (default 30 s).
    pub fn refresh_interval(self, interval: Duration) -> Self {
        self.edit(|i| i.refresh_interval = interval)
    }

    /// How long a fetched JWKS is used before it is fetched again (default 10 min).
    pub fn max_age(self, age: Duration) -> Self {
        self.edit(|i| i.max_age = age)
    }

    /// The most keys kept from a JWKS (default 32).
    pub fn max_keys(self, keys: usize) -> Self {
        self.edit(|i| i.max_keys = keys)
    }

    /// How long a verified token is remembered (never past its `exp`) and how many at most
    /// (default 30 s, 1024; a zero disables it).
    pub fn verified_cache(self, ttl: Duration, max: usize) -> Self {
        self.edit(|i| {
            i.verified_ttl = ttl;
            i.verified_max = max;
        })
    }

    /// Fetches the JWKS now (at start-up, so that the first request does not wait for it).
    ///
    /// # Errors
    /// [`TokenError::Unavailable`] when the JWKS cannot be fetched or parsed.
    pub async fn refresh(&self) -> Result<usize, TokenError> {
        let _one = self.inner.fetching.lock().await;
        self.inner.fetch_keys().await
    }
}

impl Inner {
    /// The keys that may have signed a token of `alg` with `kid`.
    fn candidates(&self, kid: Option<&str>, alg: Algorithm) -> Vec<Arc<CachedKey>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .keys
            .iter()
            .filter(|k| k.family == alg.family() && k.alg.is_none_or(|a| a == alg))
            .filter(|k| match kid {
                Some(kid) => k.kid.as_deref() == Some(kid),
                None => true,
            })
            .cloned()
            .collect()
    }

    /// Whether the cached set is older than `max_age` (or there is none).
    fn stale(&self) -> bool {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.fetched.is_none_or(|t| t.elapsed() >= self.max_age)
    }

    /// Whether no JWKS was ever fetched.
    fn never_fetched(&self) -> bool {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.fetched.is_none()
    }

    /// Whether an unknown `kid` may refetch now.
    fn may_refresh(&self) -> bool {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .attempted
            .is_none_or(|t| t.elapsed() >= self.refresh_interval)
    }

    async fn fetch_keys(&self) -> Result<usize, TokenError> {
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.attempted = Some(Instant::now());
        }
        let unavailable = |why: String| {
            tracing::warn!(target: "mcp", url = %self.jwks_url, error = %why, "JWKS fetch failed");
            TokenError::Unavailable(format!("the JWKS could not be fetched: {why}"))
        };
        let request = http::Request::get(self.jwks_url.as_str())
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| unavailable(e.to_string()))?;
        let reply = self
            .fetch
            .fetch(request)
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !reply.status().is_success() {
            return Err(unavailable(format!("HTTP {}", reply.status())));
        }
        let set: Map<String, Value> =
            serde_json::from_slice(reply.body()).map_err(|e| unavailable(e.to_string()))?;
        let Some(Value::Array(entries)) = set.get("keys") else {
            return Err(unavailable("no `keys` array".into()));
        };
        let mut keys = Vec::new();
        for entry in entries {
            if keys.len() >= self.max_keys {
                tracing::debug!(target: "mcp", url = %self.jwks_url, max = self.max_keys, "JWKS has more keys than kept");
                break;
            }
            let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
                continue; // a key type this validator does not know
            };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let family = key.family();
            if family == AlgorithmFamily::Hmac {
                continue; // a symmetric key has no place in a published set
            }
            keys.push(Arc::new(CachedKey {
                kid: jwk.common.key_id.clone(),
                alg: jwk
                    .common
                    .key_algorithm
                    .and_then(|a| Algorithm::try_from(a).ok()),
                family,
                key,
            }));
        }
        let n = keys.len();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.keys = keys;
        cache.fetched = Some(Instant::now());
        tracing::debug!(target: "mcp", url = %self.jwks_url, keys = n, "JWKS fetched");
        Ok(n)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut v = Validation::new(alg);
        v.leeway = self.leeway;
        v.validate_nbf = true;
        v.validate_exp = true;
        v.set_audience(&self.audiences);
        v.required_spec_claims.insert("aud".to_owned());
        if !self.issuers.is_empty() {
            v.set_issuer(&self.issuers);
            v.required_spec_claims.insert("iss".to_owned());
        }
        v
    }

    async fn validate(&self, token: &str) -> Result<Identity, TokenError> {
        if self.audiences.is_empty() {
            return Err(TokenError::Invalid(
                "the server accepts no audience (JwtValidator::audience is not set)".into(),
            ));
        }
        let remember = !self.verified_ttl.is_zero() && self.verified_max > 0;
        let key: [u8; 32] = if remember {
            use sha2::Digest as _;
            sha2::Sha256::digest(token.as_bytes()).into()
        } else {
            [0; 32]
        };
        if remember {
            let mut seen = self.verified.lock().unwrap_or_else(|e| e.into_inner());
            match seen.get(&key) {
                Some((until, id)) if Instant::now() < *until => return Ok(id.clone()),
                Some(_) => {
                    seen.remove(&key);
                }
                None => {}
            }
        }
        let id = self.verify(token).await?;
        if remember {
            let now = Instant::now();
            let left = id.expires_at.map_or(Duration::ZERO, |exp| {
                let unix = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                Duration::from_secs(exp.saturating_sub(unix))
            });
            let until = now + self.verified_ttl.min(left);
            let mut seen = self.verified.lock().unwrap_or_else(|e| e.into_inner());
            if seen.len() >= self.verified_max {
                seen.retain(|_, (u, _)| now < *u);
            }
            if seen.len() >= self.verified_max {
                // Still full of live entries: the one nearest its end makes room.
                if let Some(k) = seen.iter().min_by_key(|(_, (u, _))| *u).map(|(k, _)| *k) {
                    seen.remove(&k);
                }
            }
            seen.insert(key, (until, id.clone()));
        }
        Ok(id)
    }

    /// Checks the token's signature and claims.
    async fn verify(&self, token: &str) -> Result<Identity, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenError::Invalid("the token is not a JWT".into()))?;
        let alg = header.alg;
        if !self.algorithms.contains(&alg) {
            return Err(TokenError::Invalid(format!(
                "the token's algorithm {alg:?} is not accepted"
            )));
        }
        let kid = header.kid.as_deref();
        let mut keys = Vec::new();
        if !self.stale() {
            keys = self.candidates(kid, alg);
        }
        if keys.is_empty() {
            // A stale set, or an unknown key (rotation): fetch, one caller at a time;
            // whoever waited finds the keys its predecessor fetched.
            let _one = self.fetching.lock().await;
            keys = self.candidates(kid, alg);
            if (keys.is_empty() || self.stale()) && self.may_refresh() {
                match self.fetch_keys().await {
                    Ok(_) => keys = self.candidates(kid, alg),
                    // Keys already held still serve; the fetch is retried after the
                    // refresh interval.
                    Err(e) if keys.is_empty() => return Err(e),
                    Err(_) => {}
                }
            } else if keys.is_empty() && self.never_fetched() {
                return Err(TokenError::Unavailable(
                    "the JWKS could not be fetched yet".into(),
                ));
            }
        }
        if keys.is_empty() {
            return Err(TokenError::Invalid(match kid {
                Some(kid) => format!("no key {kid:?} in the authorization server's JWKS"),
                None => "no key of the token's algorithm in the JWKS".into(),
            }));
        }
        let validation = self.validation(alg);
        let mut last = None;
        for k in keys {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &k.key, &validation) {
                Ok(data) => return Ok(Identity::from_claims(data.claims)),
                Err(e) => {
                    let signature = matches!(
                        e.kind(),
                        jsonwebtoken::errors::ErrorKind::InvalidSignature
                            | jsonwebtoken::errors::ErrorKind::InvalidEcdsaKey
                            | jsonwebtoken::errors::ErrorKind::InvalidRsaKey(_)
                            | jsonwebtoken::errors::ErrorKind::InvalidEddsaKey
                    );
                    last = Some(e);
                    if !signature {
                        break; // the signature held: the claims are what failed
                    }
                }
            }
        }
        Err(TokenError::Invalid(describe(last)))
    }
}

/// What failed, for the challenge's `error_description`.
fn describe(e: Option<jsonwebtoken::errors::Error>) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    let Some(e) = e else {
        return "invalid token".into();
    };
    match e.kind() {
        K::ExpiredSignature => "the token has expired".into(),
        K::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        K::InvalidAudience => "the token was not issued for this resource (aud)".into(),
        K::InvalidIssuer => "the token is from another issuer (iss)".into(),
        K::MissingRequiredClaim(c) => format!("the token has no `{c}` claim"),
        K::InvalidSignature | K::InvalidEcdsaKey | K::InvalidRsaKey(_) | K::InvalidEddsaKey => {
            "the token's signature does not verify".into()
        }
        _ => "the token is malformed".into(),
    }
}

impl super::TokenValidator for JwtValidator {
    fn validate(&self, token: String) -> BoxFuture<Result<Identity, TokenError>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.validate(&token).await })
    }
}
