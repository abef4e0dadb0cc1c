//! `mcp --oauth` against a local server that is both a protected MCP resource (the real HTTP
//! engine behind a bearer check) and its authorization server (metadata, Dynamic Client
//! Registration, authorization with PKCE, token). The browser login: `mcp` prints the
//! authorization address, this test plays the browser (GETs it, follows the redirect to the
//! loopback listener of `mcp`), and the listing arrives. Also the headless login, and a refusal.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_proto::http::EndpointConfig;
use mcp_service::oauth::s256;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_tokio::http::McpService;
use mcp_tokio::{Server, TokioRuntime};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

type Body = Either<Full<Bytes>, mcp_service::hyper_server::ReplyBody>;

#[derive(Default)]
struct State {
    base: String,
    counter: u32,
    /// client id → its redirect URI.
    clients: HashMap<String, String>,
    /// code → PKCE challenge.
    codes: HashMap<String, String>,
    tokens: Vec<String>,
    deny: bool,
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

fn redirect(to: &str, params: &[(&str, &str)]) -> Response<Body> {
    let mut location = url::Url::parse(to).unwrap();
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
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
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
                // The CLI's redirect is its loopback listener.
                let Some(uri) = meta["redirect_uris"][0]
                    .as_str()
                    .filter(|u| u.starts_with("http://127.0.0.1:") && u.ends_with("/callback"))
                else {
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_redirect_uri"}),
                    );
                };
                s.counter += 1;
                let id = format!("client-{}", s.counter);
                s.clients.insert(id.clone(), uri.to_owned());
                json_reply(
                    StatusCode::CREATED,
                    json!({"client_id": id, "token_endpoint_auth_method": "none", "redirect_uris": [uri]}),
                )
            }
            ("GET", "/authorize") => {
                let q = query(parts.uri.query().unwrap_or_default());
                let state = q.get("state").cloned().unwrap_or_default();
                let Some(to) = q
                    .get("client_id")
                    .and_then(|c| s.clients.get(c))
                    .filter(|r| q.get("redirect_uri") == Some(r))
                    .cloned()
                else {
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_request"}),
                    );
                };
                if s.deny {
                    return redirect(&to, &[("error", "access_denied"), ("state", &state)]);
                }
                let Some(challenge) = q.get("code_challenge").cloned() else {
                    return json_reply(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_request"}),
                    );
                };
                s.counter += 1;
                let code = format!("code-{}", s.counter);
                s.codes.insert(code.clone(), challenge);
                redirect(&to, &[("code", &code), ("state", &state)])
            }
            ("POST", "/token") => {
                let f = query(std::str::from_utf8(&body).unwrap_or_default());
                let ok = f
                    .get("code")
                    .and_then(|c| s.codes.remove(c))
                    .is_some_and(|challenge| {
                        f.get("code_verifier").map(|v| s256(v)) == Some(challenge)
                    });
                if !ok {
                    return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
                }
                s.counter += 1;
                let access = format!("access-{}", s.counter);
                s.tokens.push(access.clone());
                json_reply(
                    StatusCode::OK,
                    json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600}),
                )
            }
            _ => json_reply(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
        }
    }

    /// The protected resource: a known bearer token, or 401 with the metadata's address.
    async fn mcp(&self, parts: http::request::Parts, body: Bytes) -> Response<Body> {
        {
            let s = self.state.lock().unwrap();
            let presented = parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if !presented.is_some_and(|t| s.tokens.iter().any(|k| k == t)) {
                let prm = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
                let mut r = json_reply(StatusCode::UNAUTHORIZED, json!({"error": "unauthorized"}));
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    format!("Bearer error=\"invalid_token\", resource_metadata=\"{prm}\"")
                        .parse()
                        .unwrap(),
                );
                return r;
            }
        }
        let req = Request::from_parts(parts, Full::new(body));
        let reply = tower_service::Service::call(&mut self.mcp.clone(), req)
            .await
            .unwrap();
        reply.map(Either::Right)
    }
}

/// Serves the fixture on a loopback port; it and the MCP endpoint's URL.
async fn start(deny: bool) -> (Arc<Fixture>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = Server::builder("oauth-test", "1.0")
        .tool(
            Tool::new("write", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("written")) },
        )
        .build();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    let fixture = Arc::new(Fixture {
        state: Mutex::new(State {
            base: base.clone(),
            deny,
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

/// A browser's GET of `url` (no redirects followed): the status line and the `Location`.
fn browse(url: &str) -> (String, Option<String>) {
    let u = url::Url::parse(url).unwrap();
    let mut s = std::net::TcpStream::connect((u.host_str().unwrap(), u.port().unwrap())).unwrap();
    let target = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_owned(),
    };
    write!(
        s,
        "GET {target} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        u.authority()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let status = reply.lines().next().unwrap_or_default().to_owned();
    let location = reply.lines().find_map(|l| {
        l.split_once(':')
            .filter(|(k, _)| k.eq_ignore_ascii_case("location"))
            .map(|(_, v)| v.trim().to_owned())
    });
    (status, location)
}

/// A store file of this test's own (never the user's).
fn store(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("mcp-cli-oauth-{}-{name}.json", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// `mcp ARGS` (tokens kept in `store`), with this test as the browser: reads the
/// authorization address from its stderr and visits it; the output.
fn with_browser(store: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(MCP)
        .args(args)
        .env("MCP_OAUTH_STORE", store)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if let Some(url) = line
            .trim()
            .strip_prefix("http://")
            .map(|u| format!("http://{u}"))
        {
            let (status, location) = browse(&url);
            assert!(status.contains("302"), "{status}");
            let (status, _) = browse(&location.expect("a redirect to the callback"));
            assert!(status.contains("200"), "the callback page: {status}");
            break;
        }
        line.clear();
    }
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    seen.push_str(&rest);
    let mut out = child.wait_with_output().unwrap();
    out.stderr = seen.into_bytes();
    out
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

fn tokens(fixture: &Fixture) -> usize {
    fixture.state.lock().unwrap().tokens.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_login_runs_and_is_kept_for_the_next_run() {
    let (fixture, url) = start(false).await;
    let kept = store("browser");
    let (k, u) = (kept.clone(), url.clone());
    let out = blocking(move || {
        with_browser(
            &k,
            &["call", "write", "--oauth", "--no-browser", "--url", &u],
        )
    })
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "written\n");
    assert!(
        stderr
            .starts_with("mcp: to authorize, open this address in a browser:\n  http://127.0.0.1:"),
        "{stderr}"
    );
    assert_eq!(tokens(&fixture), 1);
    // The next run uses the kept login: no new authorization.
    let (k, u) = (kept.clone(), url.clone());
    let out =
        blocking(move || with_browser(&k, &["tools", "--oauth", "--no-browser", "--url", &u]))
            .await;
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "no login asked");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "write\n");
    assert_eq!(tokens(&fixture), 1);
    // --oauth-no-store neither reads nor keeps it: a new login.
    let (k, u) = (kept.clone(), url.clone());
    let out = blocking(move || {
        with_browser(
            &k,
            &[
                "tools",
                "--oauth",
                "--oauth-no-store",
                "--no-browser",
                "--url",
                &u,
            ],
        )
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tokens(&fixture), 2);
    let _ = std::fs::remove_file(kept);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_headless_login_needs_no_browser() {
    let (fixture, url) = start(false).await;
    let out = blocking(move || {
        Command::new(MCP)
            .args([
                "tools",
                "--oauth",
                "--oauth-headless",
                "--oauth-no-store",
                "--url",
                &url,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "write\n");
    assert_eq!(tokens(&fixture), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_login_and_no_login_are_one_line_errors() {
    let (_fixture, url) = start(true).await;
    let kept = store("refused");
    let (k, u) = (kept.clone(), url.clone());
    let out =
        blocking(move || with_browser(&k, &["tools", "--oauth", "--no-browser", "--url", &u]))
            .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("mcp: ") && last.contains("access_denied") && !last.contains("within"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(kept);
    // Without --oauth the 401 is said as such.
    let out = blocking(move || {
        Command::new(MCP)
            .args(["tools", "--url", &url])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("mcp: ") && stderr.contains("401"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
