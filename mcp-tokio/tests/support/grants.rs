//! A protected MCP server with its authorization server and an enterprise identity provider,
//! on one loopback port (hyper on tokio), for the grant tests of the HTTP client on every
//! runtime (`tests/http_client_grants.rs` here and in `mcp-async-std`).
//!
//! It checks, with its own JWT verification (`jsonwebtoken`), what the client's code must do:
//! `client_credentials` with `client_secret_basic`, `client_secret_post` or a
//! `private_key_jwt` assertion (signature, `iss`/`sub`, `aud` the issuer); the JWT bearer
//! grant with a workload token or an ID-JAG (signature by the platform / identity provider,
//! `aud`); the token exchange at the identity provider; DPoP proofs at the token endpoint and
//! on every MCP request (signature by the header's key, `typ`, `htm`, `htu`, `iat`, a fresh
//! `jti`, `ath`, the key bound to the token) with nonces on demand; refresh tokens. Keys are
//! made when a test runs.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_proto::http::EndpointConfig;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{Server, ToolContext, schema_of};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

pub const CLIENT_ID: &str = "grant-client";
pub const CLIENT_SECRET: &str = "grant-secret";
pub const IDP_CLIENT_ID: &str = "idp-client";
pub const AS_NONCE: &str = "as-nonce-1";
pub const RS_NONCE: &str = "rs-nonce-1";

type Body = Either<Full<Bytes>, mcp_service::hyper_server::ReplyBody>;

/// A P-256 key made from fresh random bytes: signs like a client, a platform or an IdP would.
#[derive(Clone)]
pub struct EcKey {
    pub pem: String,
    pub encoding: EncodingKey,
    pub decoding: DecodingKey,
}

impl EcKey {
    pub fn generate() -> EcKey {
        loop {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).unwrap();
            // PKCS#8 PrivateKeyInfo for a P-256 key, the scalar last.
            let mut der = vec![
                0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d,
                0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27,
                0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
            ];
            der.extend_from_slice(&secret);
            let encoding = EncodingKey::from_ec_der(&der);
            let Ok(jwk) = Jwk::from_encoding_key(&encoding, Algorithm::ES256) else {
                continue;
            };
            let decoding = DecodingKey::from_jwk(&jwk).unwrap();
            let b64 = STANDARD.encode(&der);
            let lines: Vec<&str> = b64
                .as_bytes()
                .chunks(64)
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect();
            let pem = format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                lines.join("\n")
            );
            return EcKey {
                pem,
                encoding,
                decoding,
            };
        }
    }

    pub fn sign(&self, typ: &str, claims: &Value) -> String {
        let mut h = Header::new(Algorithm::ES256);
        h.typ = Some(typ.to_owned());
        jsonwebtoken::encode(&h, claims, &self.encoding).unwrap()
    }
}

pub fn unix(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()
}

/// What the authorization server expects and how it behaves.
#[derive(Clone, Default)]
pub struct Setup {
    /// `token_endpoint_auth_methods_supported`.
    pub auth_methods: Vec<&'static str>,
    /// The client's public key for `private_key_jwt`.
    pub client_key: Option<EcKey>,
    /// The key workload tokens and ID-JAGs are signed with (the platform / the IdP).
    pub platform_key: Option<EcKey>,
    /// Issue DPoP-bound tokens (and require proofs on the MCP requests).
    pub dpop: bool,
    pub as_nonce: bool,
    pub rs_nonce: bool,
    /// The PRM lists this unreachable authorization server first.
    pub dead_server_first: Option<String>,
    /// Every token grant is refused with this OAuth error.
    pub refuse_grant: Option<&'static str>,
    /// `expires_in` of the issued tokens.
    pub expires_in: u64,
    /// Issue refresh tokens.
    pub refresh: bool,
}

#[derive(Default)]
pub struct Log {
    /// `grant_type` of every token request, with the client authentication seen
    /// (`basic`, `post`, `private_key_jwt`, `none`).
    pub token_requests: Vec<(String, String)>,
    /// Token exchanges at the IdP.
    pub exchanges: usize,
    /// The `Authorization` scheme and token of every MCP request (`-` without one).
    pub mcp: Vec<(String, String)>,
    /// MCP requests refused for a missing or wrong DPoP nonce.
    pub rs_nonce_challenges: usize,
    pub as_nonce_challenges: usize,
    /// Every request, `METHOD path`.
    pub requests: Vec<String>,
    /// Why a DPoP proof or an assertion was refused (the test fails on any).
    pub refusals: Vec<String>,
}

struct Inner {
    base: String,
    setup: Setup,
    log: Log,
    counter: u32,
    /// access token → DPoP key thumbprint it is bound to (None: Bearer).
    tokens: HashMap<String, Option<String>>,
    refresh_tokens: HashSet<String>,
    jtis: HashSet<String>,
}

pub struct Fixture {
    inner: Mutex<Inner>,
    mcp: mcp_service::hyper_server::HyperService,
    pub base: String,
}

fn json_reply(status: StatusCode, v: Value) -> Response<Body> {
    let mut r = Response::new(Either::Left(Full::new(Bytes::from(v.to_string()))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn server() -> Server {
    Server::builder("grants-test", "1.0")
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("echoed")) },
        )
        .build()
}

/// Starts the fixture on the current tokio runtime; returns it and the MCP URL.
pub async fn start(setup: Setup) -> (Arc<Fixture>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = server();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    let rt = mcp_tokio::TokioRuntime::current();
    let fixture = Arc::new(Fixture {
        inner: Mutex::new(Inner {
            base: base.clone(),
            setup,
            log: Log::default(),
            counter: 0,
            tokens: HashMap::new(),
            refresh_tokens: HashSet::new(),
            jtis: HashSet::new(),
        }),
        mcp: mcp_service::hyper_server::HyperService::spawn(&rt, &server, config),
        base: base.clone(),
    });
    let f = fixture.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let f = f.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let f = f.clone();
                    async move { Ok::<_, Infallible>(f.serve(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (fixture, format!("{base}/mcp"))
}

/// The fixture's own tokio runtime: keep it alive; dropping it (anywhere, also in a task)
/// stops the fixture.
pub struct FixtureRuntime(Option<tokio::runtime::Runtime>);

impl Drop for FixtureRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// Starts the fixture on a tokio runtime of its own, made on a thread of its own (so that
/// the client under test may run on any runtime, tokio included).
pub fn start_on_own_runtime(setup: Setup) -> (FixtureRuntime, Arc<Fixture>, String) {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (f, url) = rt.block_on(start(setup));
        (FixtureRuntime(Some(rt)), f, url)
    })
    .join()
    .unwrap()
}

impl Fixture {
    pub fn log<R>(&self, f: impl FnOnce(&Log) -> R) -> R {
        f(&self.inner.lock().unwrap().log)
    }

    /// A valid token as the server would have issued it (for a store filled beforehand).
    pub fn issue(&self, token: &str, refresh: Option<&str>) {
        let mut s = self.inner.lock().unwrap();
        s.tokens.insert(token.to_owned(), None);
        if let Some(r) = refresh {
            s.refresh_tokens.insert(r.to_owned());
        }
    }

    async fn serve(&self, req: Request<Incoming>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        let path = parts.uri.path().to_owned();
        self.inner
            .lock()
            .unwrap()
            .log
            .requests
            .push(format!("{} {path}", parts.method));
        if path == "/mcp" {
            return self.mcp(parts, body).await;
        }
        let mut s = self.inner.lock().unwrap();
        let base = s.base.clone();
        match (parts.method.as_str(), path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => {
                let mut servers = Vec::new();
                if let Some(dead) = &s.setup.dead_server_first {
                    servers.push(dead.clone());
                }
                servers.push(format!("{base}/as"));
                json_reply(
                    StatusCode::OK,
                    json!({"resource": format!("{base}/mcp"), "authorization_servers": servers}),
                )
            }
            ("GET", "/.well-known/oauth-authorization-server/as") => {
                let mut m = json!({
                    "issuer": format!("{base}/as"),
                    "token_endpoint": format!("{base}/as/token"),
                    "grant_types_supported": ["client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer", "refresh_token"],
                    "token_endpoint_auth_methods_supported": s.setup.auth_methods,
                    "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
                });
                if s.setup.dpop {
                    m["dpop_signing_alg_values_supported"] = json!(["ES256"]);
                }
                json_reply(StatusCode::OK, m)
            }
            ("POST", "/as/token") => s.token(&parts, &body),
            ("POST", "/idp/token") => s.exchange(&body),
            _ => json_reply(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
        }
    }

    async fn mcp(&self, parts: http::request::Parts, body: Bytes) -> Response<Body> {
        let refusal = self.inner.lock().unwrap().check_mcp(&parts);
        if let Some(r) = refusal {
            return r;
        }
        let req = Request::from_parts(parts, Full::new(body));
        let reply = hyper::service::Service::call(&self.mcp, req).await.unwrap();
        reply.map(Either::Right)
    }
}

impl Inner {
    fn issuer(&self) -> String {
        format!("{}/as", self.base)
    }

    fn refuse(&mut self, why: String) {
        self.log.refusals.push(why);
    }

    /// Verifies a DPoP proof for `method url` (RFC 9449 §4.3); its key's thumbprint.
    fn verify_proof(
        &mut self,
        headers: &http::HeaderMap,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let proof = headers
            .get("dpop")
            .and_then(|v| v.to_str().ok())
            .ok_or("no DPoP header")?;
        let header = jsonwebtoken::decode_header(proof).map_err(|e| e.to_string())?;
        if header.typ.as_deref() != Some("dpop+jwt") {
            return Err("typ is not dpop+jwt".into());
        }
        let jwk = header.jwk.ok_or("no jwk")?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())?;
        let mut v = Validation::new(Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &v)
            .map_err(|e| e.to_string())?
            .claims;
        if claims["htm"] != method || claims["htu"] != url {
            return Err(format!(
                "htm/htu {} {} for {method} {url}",
                claims["htm"], claims["htu"]
            ));
        }
        let iat = claims["iat"].as_u64().ok_or("no iat")?;
        if iat.abs_diff(unix(SystemTime::now())) > 60 {
            return Err("iat out of window".into());
        }
        let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
        if !self.jtis.insert(jti) {
            return Err("jti replayed".into());
        }
        if let Some(t) = token {
            let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(t.as_bytes()));
            if claims["ath"] != ath.as_str() {
                return Err("ath does not match".into());
            }
        }
        if let Some(n) = nonce
            && claims["nonce"] != n
        {
            return Err("use_dpop_nonce".into());
        }
        jwk.thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| e.to_string())
    }

    fn check_mcp(&mut self, parts: &http::request::Parts) -> Option<Response<Body>> {
        let prm = format!("{}/.well-known/oauth-protected-resource/mcp", self.base);
        let auth = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("- -");
        let (scheme, token) = auth.split_once(' ').unwrap_or((auth, ""));
        self.log.mcp.push((scheme.to_owned(), token.to_owned()));
        let scheme_name = if self.setup.dpop { "DPoP" } else { "Bearer" };
        let unauthorized = |extra: &str| {
            let mut r = json_reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_token"}));
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                format!("{scheme_name} {extra}resource_metadata=\"{prm}\"")
                    .parse()
                    .unwrap(),
            );
            r
        };
        let Some(bound) = self.tokens.get(token).cloned() else {
            return Some(unauthorized(""));
        };
        if !scheme.eq_ignore_ascii_case(scheme_name) {
            self.refuse(format!("MCP request with scheme {scheme}"));
            return Some(unauthorized(""));
        }
        if let Some(jkt) = bound {
            let url = format!("{}/mcp", self.base);
            let nonce = self.setup.rs_nonce.then_some(RS_NONCE);
            match self.verify_proof(
                &parts.headers,
                parts.method.as_str(),
                &url,
                Some(token),
                nonce,
            ) {
                Ok(t) if t == jkt => {}
                Ok(_) => {
                    self.refuse("proof key is not the token's".into());
                    return Some(unauthorized(""));
                }
                Err(e) if e == "use_dpop_nonce" => {
                    self.log.rs_nonce_challenges += 1;
                    let mut r = unauthorized("error=\"use_dpop_nonce\", ");
                    r.headers_mut()
                        .insert("dpop-nonce", HeaderValue::from_static(RS_NONCE));
                    return Some(r);
                }
                Err(e) => {
                    self.refuse(format!("MCP DPoP proof: {e}"));
                    return Some(unauthorized(""));
                }
            }
        }
        None
    }

    /// The client authentication of a token request: `basic`, `post`, `private_key_jwt` or
    /// `none`, checked.
    fn client_auth(
        &mut self,
        parts: &http::request::Parts,
        f: &HashMap<String, String>,
    ) -> Result<String, String> {
        if let Some(basic) = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
        {
            let pair = String::from_utf8(STANDARD.decode(basic).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            return if pair == format!("{CLIENT_ID}:{CLIENT_SECRET}") {
                Ok("basic".into())
            } else {
                Err(format!("wrong Basic credentials {pair}"))
            };
        }
        if let Some(assertion) = f.get("client_assertion") {
            if f.get("client_assertion_type").map(String::as_str)
                != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            {
                return Err("wrong client_assertion_type".into());
            }
            let key = self.setup.client_key.clone().ok_or("no client key")?;
            let mut v = Validation::new(Algorithm::ES256);
            v.set_audience(&[self.issuer()]);
            let claims = jsonwebtoken::decode::<Value>(assertion, &key.decoding, &v)
                .map_err(|e| format!("client assertion: {e}"))?
                .claims;
            if claims["iss"] != CLIENT_ID || claims["sub"] != CLIENT_ID {
                return Err("client assertion iss/sub".into());
            }
            return Ok("private_key_jwt".into());
        }
        match (f.get("client_id"), f.get("client_secret")) {
            (Some(id), Some(secret)) if id == CLIENT_ID && secret == CLIENT_SECRET => {
                Ok("post".into())
            }
            (Some(_), Some(_)) => Err("wrong post credentials".into()),
            (Some(id), None) if id == CLIENT_ID => Ok("none".into()),
            _ => Err("no client authentication".into()),
        }
    }

    fn token(&mut self, parts: &http::request::Parts, body: &[u8]) -> Response<Body> {
        let f = form(body);
        let grant = f.get("grant_type").cloned().unwrap_or_default();
        let auth = match self.client_auth(parts, &f) {
            Ok(a) => a,
            Err(e) => {
                self.refuse(e);
                return json_reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
            }
        };
        self.log.token_requests.push((grant.clone(), auth));
        let mut jkt = None;
        if self.setup.dpop {
            let url = format!("{}/as/token", self.base);
            let nonce = self.setup.as_nonce.then_some(AS_NONCE);
            match self.verify_proof(&parts.headers, "POST", &url, None, nonce) {
                Ok(t) => jkt = Some(t),
                Err(e) if e == "use_dpop_nonce" => {
                    self.log.as_nonce_challenges += 1;
                    let mut r = json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "use_dpop_nonce", "error_description": "a nonce is required"}),
                    );
                    r.headers_mut()
                        .insert("dpop-nonce", HeaderValue::from_static(AS_NONCE));
                    return r;
                }
                Err(e) => {
                    self.refuse(format!("token request DPoP proof: {e}"));
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_dpop_proof"}),
                    );
                }
            }
        }
        if let Some(e) = self.setup.refuse_grant {
            return json_reply(StatusCode::BAD_REQUEST, json!({"error": e}));
        }
        let resource = format!("{}/mcp", self.base);
        if f.get("resource") != Some(&resource) {
            self.refuse(format!("resource {:?}", f.get("resource")));
            return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_target"}));
        }
        let ok = match grant.as_str() {
            "client_credentials" => Ok(()),
            "refresh_token" => f
                .get("refresh_token")
                .filter(|r| self.refresh_tokens.contains(*r))
                .map(|_| ())
                .ok_or_else(|| "unknown refresh token".to_owned()),
            "urn:ietf:params:oauth:grant-type:jwt-bearer" => self.verify_grant_assertion(&f),
            other => Err(format!("grant {other}")),
        };
        if let Err(e) = ok {
            self.refuse(e);
            return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
        }
        self.counter += 1;
        let access = format!("access-{}", self.counter);
        self.tokens.insert(access.clone(), jkt.clone());
        let mut reply = json!({
            "access_token": access,
            "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
            "expires_in": self.setup.expires_in.max(1),
        });
        if self.setup.refresh {
            let r = format!("refresh-{}", self.counter);
            self.refresh_tokens.insert(r.clone());
            reply["refresh_token"] = r.into();
        }
        json_reply(StatusCode::OK, reply)
    }

    /// A workload token or an ID-JAG: signed by the platform / the IdP, for this issuer.
    fn verify_grant_assertion(&mut self, f: &HashMap<String, String>) -> Result<(), String> {
        let assertion = f.get("assertion").ok_or("no assertion")?;
        let key = self.setup.platform_key.clone().ok_or("no platform key")?;
        let mut v = Validation::new(Algorithm::ES256);
        v.set_audience(&[self.issuer()]);
        v.required_spec_claims.clear();
        jsonwebtoken::decode::<Value>(assertion, &key.decoding, &v)
            .map(|_| ())
            .map_err(|e| format!("grant assertion: {e}"))
    }

    /// The IdP's token exchange: an ID token (signed by the IdP) for an ID-JAG.
    fn exchange(&mut self, body: &[u8]) -> Response<Body> {
        let f = form(body);
        let key = self.setup.platform_key.clone();
        let want = [
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag",
            ),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token",
            ),
            ("client_id", IDP_CLIENT_ID),
        ];
        let issuer = self.issuer();
        let resource = format!("{}/mcp", self.base);
        let ok = want
            .iter()
            .all(|(k, v)| f.get(*k).map(String::as_str) == Some(*v))
            && f.get("audience") == Some(&issuer)
            && f.get("resource") == Some(&resource);
        let (Some(key), true, Some(id_token)) = (key, ok, f.get("subject_token")) else {
            self.refuse(format!("token exchange {f:?}"));
            return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_request"}));
        };
        let mut v = Validation::new(Algorithm::ES256);
        v.set_audience(&[IDP_CLIENT_ID]);
        v.required_spec_claims.clear();
        let Ok(id) = jsonwebtoken::decode::<Value>(id_token, &key.decoding, &v) else {
            self.refuse("ID token does not verify".into());
            return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
        };
        self.log.exchanges += 1;
        let now = unix(SystemTime::now());
        let jag = key.sign(
            "oauth-id-jag+jwt",
            &json!({"iss": "idp", "sub": id.claims["sub"], "aud": issuer, "resource": resource, "client_id": CLIENT_ID, "iat": now, "exp": now + 300}),
        );
        json_reply(
            StatusCode::OK,
            json!({"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
        )
    }
}

/// An ID token of the IdP for `IDP_CLIENT_ID` (the user's login).
pub fn id_token(key: &EcKey) -> String {
    let now = unix(SystemTime::now());
    key.sign(
        "JWT",
        &json!({"iss": "idp", "sub": "user@example.com", "aud": IDP_CLIENT_ID, "iat": now, "exp": now + 3600}),
    )
}

/// A workload token of the platform for the authorization server at `issuer`.
pub fn workload_token(key: &EcKey, issuer: &str) -> String {
    let now = unix(SystemTime::now());
    key.sign(
        "JWT",
        &json!({"iss": "https://platform.example", "sub": "system:serviceaccount:jobs:reporter", "aud": issuer, "iat": now, "exp": now + 600}),
    )
}

/// How long the tests wait for anything (a hung client fails instead of hanging).
pub const PATIENCE: Duration = Duration::from_secs(30);

// ------------------------------------------------------------------ the cases, per runtime

use mcp_service::driver::Driver;
use mcp_service::http_client::HttpClientOptions;
use mcp_service::oauth::{
    AssertionSource, Authorization, ClientCredentials, DpopKey, EnterpriseIdp, Entropy,
    FileTokenStore, Grant, MemoryTokenStore, OAuthClient, OAuthConfig, SigningAlgorithm,
    SigningKey, TokenEndpointAuth, TokenSet, TokenStore, TokenType,
};
use mcp_service::{Client, ClientOptions, ErrorKind};

fn entropy() -> Result<Entropy, mcp_service::Error> {
    let mut b = [0u8; 48];
    getrandom::fill(&mut b).unwrap();
    Ok(Entropy::from_bytes(b))
}

fn config() -> OAuthConfig {
    OAuthConfig::new("grants-test", "http://localhost:3000/callback")
}

async fn connect<D: Driver>(
    rt: D,
    url: &str,
    oauth: OAuthClient,
) -> Result<Client, mcp_service::Error> {
    mcp_service::driver::connect_http(
        rt,
        url,
        ClientOptions::new("grants-test", "1.0"),
        HttpClientOptions::new().oauth(oauth, entropy),
    )
    .await
}

/// Lists the tools and calls one, twice (the token is reused), then closes.
async fn use_server(client: Client) {
    for _ in 0..2 {
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        let r = client.call_tool("echo", json!({})).await.unwrap();
        assert_ne!(r.is_error, Some(true));
    }
    client.shutdown().await;
}

fn no_refusals(f: &Fixture) {
    f.log(|l| assert!(l.refusals.is_empty(), "{:?}", l.refusals));
}

fn grants(f: &Fixture) -> Vec<(String, String)> {
    f.log(|l| l.token_requests.clone())
}

fn pair(grant: &str, auth: &str) -> (String, String) {
    (grant.to_owned(), auth.to_owned())
}

/// `client_credentials` with a client secret, as HTTP Basic and in the form, as the
/// authorization server lists them: one token request, no authorization endpoint.
pub async fn client_credentials_with_a_secret<D: Driver + Clone>(rt: D) {
    for (method, seen) in [
        ("client_secret_basic", "basic"),
        ("client_secret_post", "post"),
    ] {
        let (_rt, f, url) = start_on_own_runtime(Setup {
            auth_methods: vec![method],
            expires_in: 3600,
            ..Setup::default()
        });
        let oauth = OAuthClient::new(
            config()
                .grant(Grant::ClientCredentials)
                .pre_registered(CLIENT_ID, Some(CLIENT_SECRET.to_owned())),
        );
        let client = connect(rt.clone(), &url, oauth.clone()).await.unwrap();
        use_server(client).await;
        no_refusals(&f);
        assert_eq!(grants(&f), [pair("client_credentials", seen)], "{method}");
        let a = oauth.authorization(&url).unwrap();
        assert_eq!(a.tokens.token_type, TokenType::Bearer);
        f.log(|l| {
            assert!(l.mcp.iter().all(|(s, _)| s == "-" || s == "Bearer"));
            assert!(!l.requests.iter().any(|r| r.contains("authorize")));
        });
    }
}

/// `private_key_jwt` (a key made now, ES256) and DPoP-bound tokens with nonces at the
/// authorization server and the MCP server: each is asked for once, then kept; every MCP
/// request presents `DPoP <token>` with a fresh proof.
pub async fn private_key_jwt_with_dpop_nonces<D: Driver + Clone>(rt: D) {
    let key = EcKey::generate();
    let (_rt, f, url) = start_on_own_runtime(Setup {
        auth_methods: vec!["private_key_jwt"],
        client_key: Some(key.clone()),
        dpop: true,
        as_nonce: true,
        rs_nonce: true,
        expires_in: 3600,
        ..Setup::default()
    });
    let signing = SigningKey::from_pem(key.pem.as_bytes(), SigningAlgorithm::ES256).unwrap();
    let dpop = DpopKey::generate().unwrap();
    let oauth = OAuthClient::new(
        config()
            .grant(Grant::ClientCredentials)
            .private_key_jwt(CLIENT_ID, signing)
            .dpop(dpop.clone()),
    );
    let client = connect(rt, &url, oauth.clone()).await.unwrap();
    use_server(client).await;
    no_refusals(&f);
    // The first token request got the nonce challenge, the second one the token.
    assert_eq!(
        grants(&f),
        [
            pair("client_credentials", "private_key_jwt"),
            pair("client_credentials", "private_key_jwt")
        ]
    );
    let a = oauth.authorization(&url).unwrap();
    assert_eq!(a.tokens.token_type, TokenType::DPoP);
    f.log(|l| {
        assert_eq!(l.as_nonce_challenges, 1);
        assert_eq!(l.rs_nonce_challenges, 1, "the nonce is kept once given");
        let with_token: Vec<_> = l.mcp.iter().filter(|(s, _)| s != "-").collect();
        assert!(with_token.len() >= 4, "{:?}", l.mcp);
        assert!(
            with_token
                .iter()
                .all(|(s, t)| s == "DPoP" && *t == a.tokens.access_token)
        );
    });
    assert_eq!(dpop.nonce(&url).as_deref(), Some(RS_NONCE));
}

/// Enterprise-managed authorization: the ID token exchanged at the IdP for an ID-JAG, the
/// ID-JAG for an access token (the client authenticated with Basic).
pub async fn enterprise_managed<D: Driver>(rt: D) {
    let idp_key = EcKey::generate();
    let (_rt, f, url) = start_on_own_runtime(Setup {
        auth_methods: vec!["client_secret_basic"],
        platform_key: Some(idp_key.clone()),
        expires_in: 3600,
        ..Setup::default()
    });
    let idp = EnterpriseIdp::new(
        format!("{}/idp/token", f.base),
        IDP_CLIENT_ID,
        AssertionSource::value(id_token(&idp_key)),
    );
    let oauth = OAuthClient::new(
        config()
            .grant(Grant::EnterpriseManaged(idp))
            .pre_registered(CLIENT_ID, Some(CLIENT_SECRET.to_owned())),
    );
    let client = connect(rt, &url, oauth).await.unwrap();
    use_server(client).await;
    no_refusals(&f);
    assert_eq!(f.log(|l| l.exchanges), 1);
    assert_eq!(
        grants(&f),
        [pair("urn:ietf:params:oauth:grant-type:jwt-bearer", "basic")]
    );
}

/// Workload identity federation: the platform's token from a file is the assertion; a
/// refused grant fails the connect as `Unauthorized` after one token request (no retry, no
/// other grant).
pub async fn workload_identity<D: Driver + Clone>(rt: D) {
    let platform = EcKey::generate();
    for refuse in [None, Some("invalid_grant")] {
        let (_rt, f, url) = start_on_own_runtime(Setup {
            auth_methods: vec!["none"],
            platform_key: Some(platform.clone()),
            refuse_grant: refuse,
            expires_in: 3600,
            ..Setup::default()
        });
        let dir = std::env::temp_dir().join(format!(
            "mcp-wif-{}-{}",
            std::process::id(),
            refuse.is_some()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, workload_token(&platform, &format!("{}/as", f.base))).unwrap();
        let oauth = OAuthClient::new(
            config()
                .grant(Grant::JwtBearer(AssertionSource::file(&file)))
                .pre_registered(CLIENT_ID, None),
        );
        let got = connect(rt.clone(), &url, oauth).await;
        std::fs::remove_dir_all(&dir).unwrap();
        match refuse {
            None => {
                use_server(got.unwrap()).await;
                no_refusals(&f);
            }
            Some(e) => {
                let Err(err) = got else {
                    panic!("a refused grant fails the connect");
                };
                assert_eq!(err.kind(), ErrorKind::Unauthorized);
                assert!(err.message().contains(e), "{}", err.message());
            }
        }
        assert_eq!(
            grants(&f),
            [pair("urn:ietf:params:oauth:grant-type:jwt-bearer", "none")]
        );
    }
}

/// A kept token about to expire is renewed before the first request: by its refresh token,
/// or (without one) by running the grant again. The old token never reaches the server.
pub async fn renews_before_expiry<D: Driver + Clone>(rt: D) {
    for refresh in [true, false] {
        let (_rt, f, url) = start_on_own_runtime(Setup {
            auth_methods: vec!["client_secret_basic"],
            expires_in: 3600,
            refresh,
            ..Setup::default()
        });
        let old = "old-token";
        f.issue(old, refresh.then_some("old-refresh"));
        let now = SystemTime::now();
        let store = Arc::new(MemoryTokenStore::new());
        store.save(
            &url,
            Authorization {
                tokens: TokenSet {
                    access_token: old.to_owned(),
                    token_type: TokenType::Bearer,
                    // Issued an hour ago, 10 s left: within the last minute.
                    issued_at: Some(now - Duration::from_secs(3600)),
                    expires_at: Some(now + Duration::from_secs(10)),
                    refresh_token: refresh.then(|| "old-refresh".to_owned()),
                    scope: None,
                },
                client: ClientCredentials {
                    client_id: CLIENT_ID.to_owned(),
                    client_secret: Some(CLIENT_SECRET.to_owned()),
                    auth_method: TokenEndpointAuth::ClientSecretBasic,
                },
                issuer: format!("{}/as", f.base),
                token_endpoint: format!("{}/as/token", f.base),
                resource: url.clone(),
                requested_scope: None,
            },
        );
        let oauth = OAuthClient::with_store(
            config()
                .grant(Grant::ClientCredentials)
                .pre_registered(CLIENT_ID, Some(CLIENT_SECRET.to_owned())),
            store,
        );
        assert!(oauth.needs_renewal(&url, SystemTime::now()));
        let client = connect(rt.clone(), &url, oauth.clone()).await.unwrap();
        use_server(client).await;
        no_refusals(&f);
        let want = if refresh {
            "refresh_token"
        } else {
            "client_credentials"
        };
        assert_eq!(grants(&f), [pair(want, "basic")]);
        f.log(|l| assert!(l.mcp.iter().all(|(_, t)| t != old), "{:?}", l.mcp));
        assert!(!oauth.needs_renewal(&url, SystemTime::now()));
    }
}

/// The Protected Resource Metadata lists an authorization server that does not answer (its
/// port is closed) first: the client goes on with the next one.
pub async fn next_authorization_server<D: Driver>(rt: D) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!(
        "http://127.0.0.1:{}/as",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let (_rt, f, url) = start_on_own_runtime(Setup {
        auth_methods: vec!["client_secret_post"],
        dead_server_first: Some(dead),
        expires_in: 3600,
        ..Setup::default()
    });
    let oauth = OAuthClient::new(
        config()
            .grant(Grant::ClientCredentials)
            .pre_registered(CLIENT_ID, Some(CLIENT_SECRET.to_owned())),
    );
    let client = connect(rt, &url, oauth.clone()).await.unwrap();
    use_server(client).await;
    no_refusals(&f);
    assert_eq!(grants(&f), [pair("client_credentials", "post")]);
    assert_eq!(
        oauth.authorization(&url).unwrap().issuer,
        format!("{}/as", f.base)
    );
}

/// A file token store: a second client (a later run) uses the kept token without asking the
/// authorization server again; the file is private.
pub async fn file_store_across_runs<D: Driver + Clone>(rt: D) {
    let (_rt, f, url) = start_on_own_runtime(Setup {
        auth_methods: vec!["client_secret_basic"],
        expires_in: 3600,
        ..Setup::default()
    });
    let dir = std::env::temp_dir().join(format!("mcp-file-store-it-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("oauth.json");
    let cfg = || {
        config()
            .grant(Grant::ClientCredentials)
            .pre_registered(CLIENT_ID, Some(CLIENT_SECRET.to_owned()))
    };
    for _run in 0..2 {
        let store = Arc::new(FileTokenStore::open(&path).unwrap());
        let client = connect(rt.clone(), &url, OAuthClient::with_store(cfg(), store))
            .await
            .unwrap();
        use_server(client).await;
    }
    no_refusals(&f);
    assert_eq!(grants(&f).len(), 1, "the second run used the kept token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
