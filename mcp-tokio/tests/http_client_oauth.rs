//! OAuth 2.1 in the HTTP client (`HttpClientOptions::oauth`) against a local server that is
//! both the protected MCP resource (our real HTTP engine behind a bearer check) and its
//! authorization server (metadata, Dynamic Client Registration, authorization with PKCE, token):
//! a 401 runs the flow and the request is retried with the new token, the token is reused on
//! later requests, a 403 `insufficient_scope` steps up, a token expiring under the GET stream
//! or the closing DELETE is renewed there too, an application-supplied authorization handler
//! replaces the headless approval, and refusals fail the connect as `Unauthorized`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_proto::http::EndpointConfig;
use mcp_service::http_client::{self, HttpClientOptions, HttpTransport};
use mcp_service::oauth::{Entropy, OAuthClient, OAuthConfig, s256};
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_tokio::http::McpService;
use mcp_tokio::{Client, ClientOptions, ErrorKind, Server, TcpConnector, TokioRuntime};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use url::Url;

const REDIRECT: &str = "http://localhost:3000/callback";
const READ: &str = "mcp:read";
const WRITE: &str = "mcp:write";

type Body = Either<Full<Bytes>, mcp_service::hyper_server::ReplyBody>;

#[derive(Default)]
struct State {
    base: String,
    counter: u32,
    clients: Vec<String>,
    /// code → (PKCE challenge, scope)
    codes: HashMap<String, (String, Option<String>)>,
    /// access token → granted scope
    tokens: HashMap<String, String>,
    /// The `scope` of each authorization request.
    authorizations: Vec<Option<String>>,
    /// The bearer token of each MCP request (None: none or unknown).
    mcp_tokens: Vec<(String, Option<String>)>,
    /// Refuse authorization requests (redirect with `error=access_denied`).
    deny: bool,
    /// The next MCP request of this method (`GET`, `DELETE`) finds its token expired.
    expire_on: Option<&'static str>,
}

struct Fixture {
    state: Mutex<State>,
    mcp: McpService,
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

fn query(q: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(q.as_bytes())
        .into_owned()
        .collect()
}

fn redirect(params: &[(&str, &str)]) -> Response<Body> {
    let mut location = Url::parse(REDIRECT).unwrap();
    for (k, v) in params {
        location.query_pairs_mut().append_pair(k, v);
    }
    let mut r = Response::new(Either::Left(Full::new(Bytes::new())));
    *r.status_mut() = StatusCode::FOUND;
    r.headers_mut()
        .insert(header::LOCATION, location.as_str().parse().unwrap());
    r
}

impl Fixture {
    async fn serve(&self, req: Request<Incoming>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        let path = parts.uri.path().to_owned();
        if path == "/mcp" {
            return self.mcp(parts, body).await;
        }
        let mut s = self.state.lock().unwrap();
        let base = s.base.clone();
        match (parts.method.as_str(), path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_reply(
                StatusCode::OK,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base], "scopes_supported": [READ, WRITE]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json_reply(
                StatusCode::OK,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "response_types_supported": ["code"],
                }),
            ),
            ("POST", "/register") => {
                let meta: Value = serde_json::from_slice(&body).unwrap_or_default();
                if meta["redirect_uris"] != json!([REDIRECT]) {
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_redirect_uri"}),
                    );
                }
                s.counter += 1;
                let id = format!("client-{}", s.counter);
                s.clients.push(id.clone());
                json_reply(
                    StatusCode::CREATED,
                    json!({"client_id": id, "token_endpoint_auth_method": "none", "redirect_uris": [REDIRECT]}),
                )
            }
            ("GET", "/authorize") => {
                let q = query(parts.uri.query().unwrap_or_default());
                s.authorizations.push(q.get("scope").cloned());
                let state = q.get("state").cloned().unwrap_or_default();
                if s.deny {
                    return redirect(&[("error", "access_denied"), ("state", &state)]);
                }
                let valid = q.get("response_type").map(String::as_str) == Some("code")
                    && q.get("code_challenge_method").map(String::as_str) == Some("S256")
                    && q.get("redirect_uri").map(String::as_str) == Some(REDIRECT)
                    && q.get("resource") == Some(&format!("{base}/mcp"))
                    && q.get("client_id").is_some_and(|c| s.clients.contains(c));
                let Some(challenge) = q.get("code_challenge").filter(|_| valid) else {
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_request"}),
                    );
                };
                s.counter += 1;
                let code = format!("code-{}", s.counter);
                let entry = (challenge.clone(), q.get("scope").cloned());
                s.codes.insert(code.clone(), entry);
                redirect(&[("code", &code), ("state", &state)])
            }
            ("POST", "/token") => {
                let f = query(std::str::from_utf8(&body).unwrap_or_default());
                let grant =
                    f.get("code")
                        .and_then(|c| s.codes.remove(c))
                        .filter(|(challenge, _)| {
                            f.get("grant_type").map(String::as_str) == Some("authorization_code")
                                && f.get("code_verifier").map(|v| s256(v)).as_ref()
                                    == Some(challenge)
                                && f.get("resource") == Some(&format!("{base}/mcp"))
                        });
                let Some((_, scope)) = grant else {
                    return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
                };
                s.counter += 1;
                let access = format!("access-{}", s.counter);
                let scope = scope.unwrap_or_default();
                s.tokens.insert(access.clone(), scope.clone());
                json_reply(
                    StatusCode::OK,
                    json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": scope}),
                )
            }
            _ => json_reply(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
        }
    }

    /// The protected resource: any valid token for everything but `tools/call`, which needs
    /// `mcp:write` too.
    async fn mcp(&self, parts: http::request::Parts, body: Bytes) -> Response<Body> {
        let challenge = {
            let mut s = self.state.lock().unwrap();
            let prm = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
            let method = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|m| m["method"].as_str().map(str::to_owned))
                .unwrap_or_else(|| parts.method.to_string());
            let presented = parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::to_owned);
            if let Some(t) = &presented
                && s.expire_on == Some(parts.method.as_str())
            {
                s.expire_on = None;
                s.tokens.remove(t);
            }
            let token = presented.filter(|t| s.tokens.contains_key(t));
            s.mcp_tokens.push((method.clone(), token.clone()));
            match token {
                None => Some((
                    StatusCode::UNAUTHORIZED,
                    format!(
                        "Bearer error=\"invalid_token\", scope=\"{READ}\", resource_metadata=\"{prm}\""
                    ),
                )),
                Some(t)
                    if method == "tools/call" && !s.tokens[&t].split(' ').any(|x| x == WRITE) =>
                {
                    Some((
                        StatusCode::FORBIDDEN,
                        format!(
                            "Bearer error=\"insufficient_scope\", scope=\"{READ} {WRITE}\", resource_metadata=\"{prm}\""
                        ),
                    ))
                }
                Some(_) => None,
            }
        };
        if let Some((status, www)) = challenge {
            let mut r = json_reply(status, json!({"error": "unauthorized"}));
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, www.parse().unwrap());
            return r;
        }
        let req = Request::from_parts(parts, Full::new(body));
        let reply = tower_service::Service::call(&mut self.mcp.clone(), req)
            .await
            .unwrap();
        reply.map(Either::Right)
    }

    fn tokens_seen(&self, method: &str) -> Vec<Option<String>> {
        let s = self.state.lock().unwrap();
        s.mcp_tokens
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, t)| t.clone())
            .collect()
    }
}

fn server() -> Server {
    Server::builder("oauth-test", "1.0")
        .tool(
            Tool::new("write", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("written")) },
        )
        .build()
}

async fn start() -> (Arc<Fixture>, String) {
    start_on(None).await
}

/// The protected resource and its authorization server on one listener: plain HTTP, or
/// HTTPS with `tls` (feature `tls`).
async fn start_on(tls: Option<Tls>) -> (Arc<Fixture>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let base = format!(
        "{scheme}://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    let server = server();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    let fixture = Arc::new(Fixture {
        state: Mutex::new(State {
            base: base.clone(),
            ..State::default()
        }),
        mcp: McpService::new(TokioRuntime::current(), &server, config),
    });
    let f = fixture.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let f = f.clone();
            #[cfg_attr(not(feature = "tls"), allow(clippy::clone_on_copy))]
            let tls = tls.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let f = f.clone();
                    async move { Ok::<_, Infallible>(f.serve(req).await) }
                });
                let builder = hyper::server::conn::http1::Builder::new();
                #[cfg(feature = "tls")]
                if let Some(tls) = tls {
                    use tokio_util::compat::TokioAsyncReadCompatExt;
                    let Ok((stream, _)) =
                        mcp_service::tls::accept(&tls, stream.compat(), false).await
                    else {
                        return;
                    };
                    let io = mcp_service::hyper_io::FuturesIo::new(stream);
                    let _ = builder.serve_connection(io, svc).await;
                    return;
                }
                let _ = tls;
                let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
            });
        }
    });
    (fixture, format!("{base}/mcp"))
}

#[cfg(feature = "tls")]
type Tls = mcp_service::tls::TlsServerConfig;
#[cfg(not(feature = "tls"))]
type Tls = std::convert::Infallible;

/// Deterministic flow randomness: a different 48-byte pattern per flow.
fn entropy() -> impl Fn() -> Result<Entropy, mcp_tokio::Error> + Send + Sync + 'static {
    let n = AtomicU8::new(1);
    move || Ok(Entropy::from_bytes([n.fetch_add(1, Ordering::Relaxed); 48]))
}

fn oauth() -> OAuthClient {
    OAuthClient::new(OAuthConfig::new("oauth-test-client", REDIRECT))
}

async fn connect(url: &str, http: HttpClientOptions) -> Result<Client, mcp_tokio::Error> {
    connect_with(url, http, ClientOptions::new("oauth-test", "1.0")).await
}

/// `connect` in the handshake era, for what only it has: `initialize` and
/// `notifications/initialized`, the session's standalone GET stream and its closing DELETE
/// (the default, `Auto`, speaks 2026-07-28 to this server).
async fn connect_handshake(url: &str, http: HttpClientOptions) -> Result<Client, mcp_tokio::Error> {
    let options = ClientOptions::new("oauth-test", "1.0")
        .discovery(mcp_tokio::proto::session::Discovery::Initialize);
    connect_with(url, http, options).await
}

async fn connect_with(
    url: &str,
    http: HttpClientOptions,
    options: ClientOptions,
) -> Result<Client, mcp_tokio::Error> {
    http_client::connect(
        TokioRuntime::current(),
        TcpConnector(TokioRuntime::current()),
        url,
        HttpTransport::Streamable,
        options,
        http,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_runs_the_flow_and_the_token_is_reused() {
    let (fixture, url) = start().await;
    let oauth = oauth();
    let client = connect_handshake(
        &url,
        HttpClientOptions::new().oauth(oauth.clone(), entropy()),
    )
    .await
    .expect("connect with authorization");
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "write");
    client.list_tools().await.unwrap();

    // One authorization, for the challenge's scope; the refused initialize was retried with
    // the token, and every later request carried the same token.
    let token = oauth
        .access_token(&url, std::time::SystemTime::now())
        .expect("a kept token");
    {
        let s = fixture.state.lock().unwrap();
        assert_eq!(s.authorizations, vec![Some(READ.to_owned())]);
    }
    assert_eq!(
        fixture.tokens_seen("initialize"),
        vec![None, Some(token.clone())]
    );
    assert_eq!(
        fixture.tokens_seen("tools/list"),
        vec![Some(token.clone()), Some(token.clone())]
    );
    assert_eq!(
        fixture.tokens_seen("notifications/initialized"),
        vec![Some(token.clone())]
    );
    // The standalone GET stream, opened before further requests go out, carries it too.
    assert_eq!(fixture.tokens_seen("GET"), vec![Some(token)]);
    client.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_insufficient_scope_steps_up_and_retries() {
    let (fixture, url) = start().await;
    let oauth = oauth();
    let client = connect(
        &url,
        HttpClientOptions::new().oauth(oauth.clone(), entropy()),
    )
    .await
    .unwrap();
    let result = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "written"
    );
    let s = fixture.state.lock().unwrap();
    assert_eq!(
        s.authorizations,
        vec![Some(READ.to_owned()), Some(format!("{READ} {WRITE}"))],
        "the step-up asks for the scopes of the 403"
    );
    let calls: Vec<_> = s
        .mcp_tokens
        .iter()
        .filter(|(m, _)| m == "tools/call")
        .map(|(_, t)| t.clone().expect("a valid token"))
        .collect();
    assert_eq!(calls.len(), 2, "refused once, then retried");
    assert_ne!(calls[0], calls[1], "retried with the stepped-up token");
    assert_eq!(s.tokens[&calls[1]], format!("{READ} {WRITE}"));
    drop(s);
    client.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_handler_approves_instead_of_the_headless_get() {
    let (fixture, url) = start().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = asked.clone();
    // Stands in for a browser: follows the authorization URL and returns where it redirected.
    let handler = move |authorize: String| {
        seen.fetch_add(1, Ordering::Relaxed);
        async move {
            let u = Url::parse(&authorize).unwrap();
            let stream = tokio::net::TcpStream::connect((u.host_str().unwrap(), u.port().unwrap()))
                .await
                .unwrap();
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            tokio::spawn(conn);
            let req = Request::get(&u[url::Position::BeforePath..])
                .header(header::HOST, u.authority())
                .body(Full::new(Bytes::new()))
                .unwrap();
            let reply = sender.send_request(req).await.unwrap();
            Ok(reply.headers()[header::LOCATION]
                .to_str()
                .unwrap()
                .to_owned())
        }
    };
    let http = HttpClientOptions::new()
        .authorization_handler(handler)
        .oauth(oauth(), entropy());
    let client = connect(&url, http).await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(asked.load(Ordering::Relaxed), 1);
    assert_eq!(fixture.state.lock().unwrap().authorizations.len(), 1);
    client.close();
}

/// A token that expires under the standalone GET stream, or under the closing DELETE, gets the
/// same treatment as under a POST: the flow runs and the request is sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_on_the_get_stream_or_the_delete_runs_the_flow() {
    let (fixture, url) = start().await;
    fixture.state.lock().unwrap().expire_on = Some("GET");
    let oauth = oauth();
    // Requests wait for the GET (and its authorization) however slow the machine is.
    let client = connect_handshake(
        &url,
        HttpClientOptions::new()
            .standalone_wait(mcp_proto::Duration::from_secs(120))
            .oauth(oauth.clone(), entropy()),
    )
    .await
    .unwrap();
    client.list_tools().await.unwrap();
    let second = oauth
        .access_token(&url, std::time::SystemTime::now())
        .unwrap();
    {
        let s = fixture.state.lock().unwrap();
        assert_eq!(
            s.authorizations.len(),
            2,
            "one at initialize, one for the GET"
        );
    }
    // Refused once (its token expired), then opened with the new token, which later
    // requests carry too.
    assert_eq!(fixture.tokens_seen("GET"), vec![None, Some(second.clone())]);
    assert_eq!(
        fixture.tokens_seen("tools/list"),
        vec![Some(second.clone())]
    );

    fixture.state.lock().unwrap().expire_on = Some("DELETE");
    tokio::time::timeout(std::time::Duration::from_secs(20), client.shutdown())
        .await
        .expect("the DELETE finished");
    let third = oauth
        .access_token(&url, std::time::SystemTime::now())
        .unwrap();
    assert_ne!(third, second);
    assert_eq!(fixture.tokens_seen("DELETE"), vec![None, Some(third)]);
    assert_eq!(fixture.state.lock().unwrap().authorizations.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_authorization_fails_the_connect_as_unauthorized() {
    let (fixture, url) = start().await;
    fixture.state.lock().unwrap().deny = true;
    let e = connect(&url, HttpClientOptions::new().oauth(oauth(), entropy()))
        .await
        .expect_err("the authorization server refused");
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
    assert!(e.message().contains("access_denied"), "{e}");
    assert!(e.message().contains("HTTP 401"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_oauth_a_401_is_a_plain_unauthorized_error() {
    let (fixture, url) = start().await;
    let e = connect(&url, HttpClientOptions::new())
        .await
        .expect_err("no token");
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
    assert!(fixture.state.lock().unwrap().authorizations.is_empty());
}

/// Over https the whole flow — the MCP requests, the metadata, registration, authorization
/// and token requests to the authorization server — goes over TLS, with the transport's TLS
/// policy (a CA made for the test).
#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_the_flow_reaches_the_authorization_server_over_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let tls = mcp_service::tls::TlsServerConfig::from_pem(
        cert.pem().as_bytes(),
        key.serialize_pem().as_bytes(),
    )
    .unwrap();
    let (fixture, url) = start_on(Some(tls)).await;
    assert!(url.starts_with("https://"), "{url}");
    let trust = mcp_service::tls::TlsClientConfig::without_default_roots()
        .add_ca_pem(ca_pem.as_bytes())
        .unwrap();
    let oauth = oauth();
    let client = connect(
        &url,
        HttpClientOptions::new()
            .tls(trust.clone())
            .oauth(oauth.clone(), entropy()),
    )
    .await
    .expect("connect with authorization over https");
    assert_eq!(client.list_tools().await.unwrap()[0].name, "write");
    let token = oauth
        .access_token(&url, std::time::SystemTime::now())
        .expect("a kept token");
    assert_eq!(
        fixture.state.lock().unwrap().authorizations,
        vec![Some(READ.to_owned())]
    );
    assert_eq!(fixture.tokens_seen("tools/list"), vec![Some(token)]);
    client.close();
    // Without the CA, the same flow fails in the TLS handshake, saying why.
    let e = connect(
        &url,
        HttpClientOptions::new()
            .oauth(OAuthClient::new(OAuthConfig::new("c", REDIRECT)), entropy()),
    )
    .await
    .unwrap_err();
    assert!(e.message().contains("unknown authority"), "{e}");
}
