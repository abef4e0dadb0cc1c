//! The OAuth flow against a real local HTTP server (hyper, loopback TCP) playing a protected MCP
//! resource and its authorization server: Protected Resource Metadata, RFC 8414 metadata,
//! Dynamic Client Registration, an authorization endpoint that approves without a user, and a
//! token endpoint that checks PKCE S256, the `resource` parameter and client authentication
//! independently of the client's code. The client side is a hyper client driving
//! `mcp_service::oauth`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_service::oauth::{Challenge, Entropy, OAuthClient, OAuthConfig, OAuthError, Step};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

const REDIRECT: &str = "http://localhost:3000/callback";

#[derive(Default)]
struct AsState {
    base: String,
    /// `client_id` → `client_secret` of registered clients.
    clients: HashMap<String, String>,
    /// Authorization code → (code_challenge, resource, scope).
    codes: HashMap<String, (String, String, Option<String>)>,
    /// Valid access tokens → scope.
    tokens: HashMap<String, Option<String>>,
    refresh_tokens: HashMap<String, Option<String>>,
    counter: u32,
    /// Every request, `METHOD path`.
    log: Vec<String>,
}

type Shared = Arc<Mutex<AsState>>;

fn json_reply(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(v.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    r
}

fn oauth_error(status: StatusCode, error: &str) -> Response<Full<Bytes>> {
    json_reply(status, json!({"error": error}))
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

async fn handle(state: Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut s = state.lock().unwrap();
    let base = s.base.clone();
    let path = parts.uri.path().to_owned();
    s.log.push(format!("{} {}", parts.method, path));
    match (parts.method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_reply(
            StatusCode::OK,
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [format!("{base}/as")], "scopes_supported": ["mcp:read"]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as") => json_reply(
            StatusCode::OK,
            json!({
                "issuer": format!("{base}/as"),
                "authorization_endpoint": format!("{base}/as/authorize"),
                "token_endpoint": format!("{base}/as/token"),
                "registration_endpoint": format!("{base}/as/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
            }),
        ),
        ("POST", "/as/register") => {
            let Ok(meta) = serde_json::from_slice::<Value>(&body) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_client_metadata");
            };
            if meta["redirect_uris"] != json!([REDIRECT]) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri");
            }
            s.counter += 1;
            let id = format!("client-{}", s.counter);
            let secret = format!("secret-{}", s.counter);
            s.clients.insert(id.clone(), secret.clone());
            json_reply(
                StatusCode::CREATED,
                json!({"client_id": id, "client_secret": secret, "token_endpoint_auth_method": "client_secret_basic"}),
            )
        }
        ("GET", "/as/authorize") => {
            let q = form(parts.uri.query().unwrap_or_default().as_bytes());
            let ok = q.get("response_type").map(String::as_str) == Some("code")
                && q.get("code_challenge_method").map(String::as_str) == Some("S256")
                && q.get("redirect_uri").map(String::as_str) == Some(REDIRECT)
                && q.get("client_id")
                    .is_some_and(|c| s.clients.contains_key(c));
            let (Some(challenge), Some(resource), Some(state_param), true) = (
                q.get("code_challenge"),
                q.get("resource"),
                q.get("state"),
                ok,
            ) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
            };
            s.counter += 1;
            let code = format!("code-{}", s.counter);
            s.codes.insert(
                code.clone(),
                (challenge.clone(), resource.clone(), q.get("scope").cloned()),
            );
            let mut location = url::Url::parse(REDIRECT).unwrap();
            location
                .query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", state_param);
            let mut r = Response::new(Full::new(Bytes::new()));
            *r.status_mut() = StatusCode::FOUND;
            r.headers_mut()
                .insert(header::LOCATION, location.as_str().parse().unwrap());
            r
        }
        ("POST", "/as/token") => {
            // client_secret_basic, checked from the header.
            let authed = parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Basic "))
                .and_then(|b| STANDARD.decode(b).ok())
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|pair| {
                    let (id, secret) = pair.split_once(':')?;
                    Some(s.clients.get(id).is_some_and(|s| s == secret))
                })
                .unwrap_or(false);
            if !authed {
                return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client");
            }
            let f = form(&body);
            let scope = match f.get("grant_type").map(String::as_str) {
                Some("authorization_code") => {
                    let Some((challenge, resource, scope)) =
                        f.get("code").and_then(|c| s.codes.remove(c))
                    else {
                        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                    };
                    let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                    if computed != challenge
                        || f.get("resource") != Some(&resource)
                        || f.get("redirect_uri").map(String::as_str) != Some(REDIRECT)
                    {
                        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                    }
                    scope
                }
                Some("refresh_token") => {
                    match f
                        .get("refresh_token")
                        .and_then(|r| s.refresh_tokens.remove(r))
                    {
                        Some(scope) => scope,
                        None => return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant"),
                    }
                }
                _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
            };
            s.counter += 1;
            let access = format!("access-{}", s.counter);
            let refresh = format!("refresh-{}", s.counter);
            s.tokens.insert(access.clone(), scope.clone());
            s.refresh_tokens.insert(refresh.clone(), scope.clone());
            json_reply(
                StatusCode::OK,
                json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh, "scope": scope}),
            )
        }
        ("POST", "/mcp") => {
            let token = parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            match token {
                Some(t) if s.tokens.contains_key(t) => json_reply(
                    StatusCode::OK,
                    json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
                ),
                _ => {
                    let mut r =
                        json_reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_token"}));
                    r.headers_mut().insert(
                        header::WWW_AUTHENTICATE,
                        format!(
                            "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        )
                        .parse()
                        .unwrap(),
                    );
                    r
                }
            }
        }
        _ => oauth_error(StatusCode::NOT_FOUND, "not_found"),
    }
}

async fn start_server() -> (String, Shared) {
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state: Shared = Arc::new(Mutex::new(AsState {
        base: base.clone(),
        ..AsState::default()
    }));
    let shared = state.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let state = shared.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(state, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (base, state)
}

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

async fn send(http: &HttpClient, req: Request<Vec<u8>>) -> Response<Vec<u8>> {
    let (parts, body) = req.into_parts();
    let reply = http
        .request(Request::from_parts(parts, Full::new(Bytes::from(body))))
        .await
        .unwrap();
    let (parts, body) = reply.into_parts();
    let body = body.collect().await.unwrap().to_bytes().to_vec();
    Response::from_parts(parts, body)
}

/// Runs a flow to completion with real HTTP.
async fn run_flow(
    http: &HttpClient,
    oauth: &OAuthClient,
    url: &str,
    challenge: &Challenge,
    now: SystemTime,
) -> Result<String, OAuthError> {
    let mut flow = oauth.authorize(url, challenge, &Entropy::from_bytes([42; 48]))?;
    loop {
        match flow.step(SystemTime::now())? {
            Step::Send(req) | Step::Authorize(req) => {
                let reply = send(http, req).await;
                flow.handle_response(now, reply)?;
            }
            Step::Done(token) => return Ok(token),
            other => panic!("unexpected step {other:?}"),
        }
    }
}

async fn post_mcp(http: &HttpClient, url: &str, token: Option<&str>) -> Response<Vec<u8>> {
    let mut req = Request::post(url).header(header::CONTENT_TYPE, "application/json");
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    send(
        http,
        req.body(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec())
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn authorizes_against_a_real_server_then_refreshes() {
    let (base, state) = start_server().await;
    let url = format!("{base}/mcp");
    let http: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let oauth = OAuthClient::new(OAuthConfig::new("oauth-test", REDIRECT));
    let now = SystemTime::now();

    // Unauthorized first: the challenge points at the metadata.
    let reply = post_mcp(&http, &url, None).await;
    assert_eq!(reply.status(), StatusCode::UNAUTHORIZED);
    let challenge = Challenge::from_response(reply.status(), reply.headers());
    assert!(challenge.resource_metadata.is_some());

    let token = run_flow(&http, &oauth, &url, &challenge, now)
        .await
        .unwrap();
    assert_eq!(
        oauth.access_token(&url, now).as_deref(),
        Some(token.as_str())
    );
    let reply = post_mcp(&http, &url, Some(&token)).await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        state.lock().unwrap().log,
        [
            "POST /mcp",
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server/as",
            "POST /as/register",
            "GET /as/authorize",
            "POST /as/token",
            "POST /mcp",
        ]
    );
    // The scope came from scopes_supported and was granted.
    let auth = oauth.authorization(&url).unwrap();
    assert_eq!(auth.requested_scope.as_deref(), Some("mcp:read"));
    assert_eq!(auth.tokens.scope.as_deref(), Some("mcp:read"));

    // An hour later the token has expired: the kept refresh token renews it, one request.
    let later = now + Duration::from_secs(3600);
    assert_eq!(oauth.access_token(&url, later), None);
    state.lock().unwrap().log.clear();
    let renewed = run_flow(&http, &oauth, &url, &Challenge::default(), later)
        .await
        .unwrap();
    assert_ne!(renewed, token);
    assert_eq!(state.lock().unwrap().log, ["POST /as/token"]);
    assert_eq!(
        post_mcp(&http, &url, Some(&renewed)).await.status(),
        StatusCode::OK
    );

    // A revoked refresh token: the flow starts over, reusing the registration.
    state.lock().unwrap().refresh_tokens.clear();
    state.lock().unwrap().log.clear();
    let again = run_flow(&http, &oauth, &url, &Challenge::default(), later)
        .await
        .unwrap();
    assert_eq!(
        post_mcp(&http, &url, Some(&again)).await.status(),
        StatusCode::OK
    );
    let log = state.lock().unwrap().log.clone();
    assert_eq!(log.first().map(String::as_str), Some("POST /as/token"));
    assert!(!log.iter().any(|l| l == "POST /as/register"), "{log:?}");
    assert_eq!(log.last().map(String::as_str), Some("POST /mcp"));
}

#[tokio::test]
async fn wrong_pre_registered_secret_is_a_clear_token_error() {
    let (base, _state) = start_server().await;
    let url = format!("{base}/mcp");
    let http: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let oauth = OAuthClient::new(
        OAuthConfig::new("oauth-test", REDIRECT).pre_registered("nobody", Some("wrong".into())),
    );
    let err = run_flow(
        &http,
        &oauth,
        &url,
        &Challenge::default(),
        SystemTime::now(),
    )
    .await
    .unwrap_err();
    // The authorization endpoint rejects the unknown client before any code is issued.
    match err {
        OAuthError::Http {
            what,
            status,
            error,
            ..
        } => {
            assert_eq!(what, "authorization request");
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_eq!(error.as_deref(), Some("invalid_request"));
        }
        other => panic!("unexpected error {other}"),
    }
}
