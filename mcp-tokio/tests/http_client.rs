//! The typed client over Streamable HTTP against our own server: tools, progress, a
//! server→client request during a call, both reply modes, headers, re-initialisation after the
//! server forgot the session, DELETE on close, resumption of a cut SSE stream, and errors.
//!
//! The server is the real HTTP engine behind a small hyper front (a copy of `serve_http`'s
//! request handling) that records every request, can be "restarted" (a fresh engine: every
//! session id becomes unknown), can require a bearer token and can cut one SSE reply short.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcp_proto::http::{EndpointConfig, ResponseMode};
use mcp_service::http_engine::{HttpBody, HttpHandle};
use mcp_service::schema::{CallToolResult, CreateMessageRequestParams, CreateMessageResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_tokio::{
    ClientOptions, ErrorKind, HttpClientOptions, RequestContext, Server, TokioRuntime,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;

type Reply = Response<UnsyncBoxBody<Bytes, Infallible>>;

/// One request the front saw.
#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    headers: HeaderMap,
    body: String,
}

struct Front {
    server: Server,
    config: EndpointConfig,
    handle: Mutex<HttpHandle>,
    seen: Mutex<Vec<Seen>>,
    /// Cut the next SSE reply of a POST holding this JSON-RPC method after this many chunks.
    cut: Mutex<Option<(String, usize)>>,
    require_bearer: Option<String>,
    cuts: AtomicUsize,
    /// Answer the next POST holding this JSON-RPC method with this status, content type and
    /// body instead of passing it on.
    inject: Mutex<Option<(String, StatusCode, &'static str, &'static str)>>,
}

impl Front {
    fn restart(&self) {
        let engine = self
            .server
            .http_service(TokioRuntime::current(), self.config.clone());
        *self.handle.lock().unwrap() = engine.handle();
        tokio::spawn(engine);
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn methods(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| {
                let rpc = serde_json::from_str::<Value>(&s.body)
                    .ok()
                    .and_then(|v| v["method"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("{} {rpc}", s.method).trim().to_owned()
            })
            .collect()
    }

    async fn serve(self: Arc<Self>, req: Request<Incoming>) -> Reply {
        let (parts, body) = req.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes().to_vec();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        self.seen.lock().unwrap().push(Seen {
            method: parts.method.clone(),
            headers: parts.headers.clone(),
            body: text.clone(),
        });
        if let Some(token) = &self.require_bearer {
            let expected = format!("Bearer {token}");
            if parts
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                != Some(expected.as_str())
            {
                let mut r = Response::new(Full::new(Bytes::from("missing token")).boxed_unsync());
                *r.status_mut() = StatusCode::UNAUTHORIZED;
                return r;
            }
        }
        let injected = {
            let mut inject = self.inject.lock().unwrap();
            match inject.as_ref() {
                Some((method, ..)) if text.contains(&format!("\"method\":\"{method}\"")) => {
                    inject.take()
                }
                _ => None,
            }
        };
        if let Some((_, status, content_type, body)) = injected {
            let mut r = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
            *r.status_mut() = status;
            r.headers_mut()
                .insert("content-type", HeaderValue::from_static(content_type));
            return r;
        }
        let cut_after = {
            let mut cut = self.cut.lock().unwrap();
            match cut.as_ref() {
                Some((method, n)) if text.contains(&format!("\"method\":\"{method}\"")) => {
                    let n = *n;
                    *cut = None;
                    Some(n)
                }
                _ => None,
            }
        };
        let handle = self.handle.lock().unwrap().clone();
        let resp = match handle.request(parts, bytes).await {
            Ok(r) => r,
            Err(_) => {
                let mut r = Response::new(Full::new(Bytes::new()).boxed_unsync());
                *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                return r;
            }
        };
        let (head, body) = resp.into_parts();
        let body = match body {
            HttpBody::Empty => Full::new(Bytes::new()).boxed_unsync(),
            HttpBody::Full(b) => Full::new(Bytes::from(b)).boxed_unsync(),
            HttpBody::Parts(p) => Full::new(Bytes::from(p.concat())).boxed_unsync(),
            HttpBody::Stream(s) => {
                let s = match cut_after {
                    Some(n) => {
                        self.cuts.fetch_add(1, Ordering::SeqCst);
                        s.take(n).boxed()
                    }
                    None => s.boxed(),
                };
                StreamBody::new(s.map(|c| Ok::<_, Infallible>(Frame::data(Bytes::from(c)))))
                    .boxed_unsync()
            }
        };
        Response::from_parts(head, body)
    }
}

fn server() -> Server {
    Server::builder("http-client-test", "1.0")
        .tool(
            Tool::new("add", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(CallToolResult::text(sum.to_string()))
            },
        )
        .tool(
            Tool::new("count", schema_of(json!({"type": "object"}))),
            |args: Value, cx: ToolContext| async move {
                let n = args["n"].as_u64().unwrap_or(3);
                for i in 1..=n {
                    cx.progress(i as f64, Some(n as f64), None).await?;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Ok(CallToolResult::text(format!("counted to {n}")))
            },
        )
        .tool(
            Tool::new("ask", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "capital of France?"}}],
                    "maxTokens": 10
                }))
                .unwrap();
                let answer = cx.create_message(params).await?;
                Ok(CallToolResult::text(format!(
                    "model said: {}",
                    serde_json::to_value(&answer.content).unwrap()["text"]
                        .as_str()
                        .unwrap_or("")
                )))
            },
        )
        .build()
}

async fn start(mode: ResponseMode, require_bearer: Option<&str>) -> (Arc<Front>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = server();
    let config = EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .response_mode(mode)
        .sse_retry(Some(mcp_proto::Duration::from_millis(10)));
    let engine = server.http_service(TokioRuntime::current(), config.clone());
    let front = Arc::new(Front {
        server,
        config,
        handle: Mutex::new(engine.handle()),
        seen: Mutex::new(Vec::new()),
        cut: Mutex::new(None),
        require_bearer: require_bearer.map(str::to_owned),
        cuts: AtomicUsize::new(0),
        inject: Mutex::new(None),
    });
    tokio::spawn(engine);
    let f = front.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let f = f.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let f = f.clone();
                    async move { Ok::<_, Infallible>(f.serve(req).await) }
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (front, format!("http://127.0.0.1:{port}/mcp"))
}

/// The handshake era: these tests are of its sessions (re-initialisation, DELETE, a resumed
/// SSE stream, server→client requests during a call); the default (`Auto`) would speak
/// 2026-07-28 to this server.
fn options() -> ClientOptions {
    ClientOptions::new("http-client-test", "1.0")
        .discovery(mcp_tokio::proto::session::Discovery::Initialize)
        .sampling(
            |_p: CreateMessageRequestParams, _cx: RequestContext| async move {
                Ok::<CreateMessageResult, mcp_tokio::Error>(
                    serde_json::from_value(json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "Paris"},
                        "model": "test-model"
                    }))
                    .unwrap(),
                )
            },
        )
}

/// The typed client of [`options`] connected to `url`.
async fn connect(url: &str, http: HttpClientOptions) -> mcp_tokio::Client {
    mcp_tokio::connect_http(mcp_tokio::TokioRuntime::current(), url, options(), http)
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits (bounded) until `f` holds.
async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never happened: {what}");
}

async fn tools_progress_and_sampling(mode: ResponseMode) {
    let (front, url) = start(mode, Some("s3cret")).await;
    let http = HttpClientOptions::new().bearer("s3cret").header(
        HeaderName::from_static("x-test"),
        HeaderValue::from_static("yes"),
    );
    let client = mcp_tokio::connect_http(mcp_tokio::TokioRuntime::current(), &url, options(), http)
        .await
        .unwrap();
    assert!(client.server_info().info.get().contains("http-client-test"));

    let tools = client.list_tools().await.unwrap();
    let mut names: Vec<_> = tools.iter().map(|t| t.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["add", "ask", "count"]);

    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(text(&r), "42");

    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = client
        .call_tool("count", json!({"n": 4}))
        .progress(move |p| s.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "counted to 4");
    let progress = seen.lock().unwrap().clone();
    if mode == ResponseMode::Sse {
        // One stream: every notification before the result.
        assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
    } else {
        // Progress comes on the GET stream, the result in the POST's body: the result may
        // overtake the last notifications, but none comes twice or out of order.
        assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
        assert!(
            progress.iter().all(|p| (1.0..=4.0).contains(p)),
            "{progress:?}"
        );
    }

    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(text(&r), "model said: Paris");

    // Many concurrent calls.
    let calls = (0..32).map(|i| {
        let client = client.clone();
        async move {
            let r = client
                .call_tool("add", json!({"a": i, "b": 1}))
                .await
                .unwrap();
            assert_eq!(text(&r), (i + 1).to_string());
        }
    });
    futures_util::future::join_all(calls).await;

    // Every request carried the custom header and the token; everything after initialize
    // carried the session id and the negotiated version.
    let version = client.protocol_version().as_str().to_owned();
    let all = front.seen();
    assert!(all.len() > 36, "{:?}", front.methods());
    let sid = all
        .iter()
        .find_map(|s| s.headers.get("mcp-session-id"))
        .cloned();
    assert!(sid.is_some(), "no request carried a session id");
    for (i, s) in all.iter().enumerate() {
        assert_eq!(s.headers["x-test"], "yes");
        assert_eq!(s.headers["authorization"], "Bearer s3cret");
        if s.method == Method::POST {
            assert_eq!(s.headers["accept"], "application/json, text/event-stream");
            assert_eq!(s.headers["content-type"], "application/json");
        }
        if i == 0 {
            assert!(s.body.contains("\"initialize\""), "{}", s.body);
            assert!(s.headers.get("mcp-session-id").is_none());
        } else {
            assert_eq!(s.headers.get("mcp-session-id"), sid.as_ref(), "{:?}", s);
            assert_eq!(s.headers["mcp-protocol-version"], version.as_str());
        }
    }
    // The sampling answer was POSTed back.
    assert!(
        all.iter().any(|s| s.body.contains("\"Paris\"")),
        "{:?}",
        front.methods()
    );
    // The standalone stream was opened (SSE mode) or refused.
    assert!(all.iter().any(|s| s.method == Method::GET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_replies() {
    tools_progress_and_sampling(ResponseMode::Sse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_replies() {
    tools_progress_and_sampling(ResponseMode::Json).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_close() {
    let (front, url) = start(ResponseMode::Sse, None).await;
    let client = connect(&url, HttpClientOptions::new()).await;
    client.ping().await.unwrap();
    eventually("one live session", || front.server.connection_count() == 1).await;
    client.close();
    eventually("a DELETE", || {
        front.seen().iter().any(|s| s.method == Method::DELETE)
    })
    .await;
    let delete = front
        .seen()
        .into_iter()
        .find(|s| s.method == Method::DELETE)
        .unwrap();
    assert!(delete.headers.get("mcp-session-id").is_some());
    eventually("the session ended", || front.server.connection_count() == 0).await;
    let e = client.ping().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportClosed, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reinitializes_when_the_server_forgot_the_session() {
    let (front, url) = start(ResponseMode::Sse, None).await;
    let client = connect(&url, HttpClientOptions::new()).await;
    let r = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(text(&r), "2");
    front.restart();
    let r = client
        .call_tool("add", json!({"a": 2, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&r), "4");
    let r = client.call_tool("count", json!({"n": 2})).await.unwrap();
    assert_eq!(text(&r), "counted to 2");
    let methods = front.methods();
    let inits = methods.iter().filter(|m| *m == "POST initialize").count();
    let initialized = methods
        .iter()
        .filter(|m| *m == "POST notifications/initialized")
        .count();
    assert_eq!((inits, initialized), (2, 2), "{methods:?}");
    // The new session's id is used from then on.
    let seen = front.seen();
    let last = seen.last().unwrap();
    let first_sid = seen[1].headers["mcp-session-id"].clone();
    assert_ne!(last.headers["mcp-session-id"], first_sid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_session_fails_clearly_without_reinitialization() {
    let (front, url) = start(ResponseMode::Sse, None).await;
    let client = connect(&url, HttpClientOptions::new().reinitialize(false)).await;
    client.ping().await.unwrap();
    front.restart();
    let e = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap_err();
    assert!(
        e.message().contains("no longer knows the HTTP session"),
        "{e}"
    );
    eventually("the client closed", || client.is_closed()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_a_cut_sse_stream() {
    let (front, url) = start(ResponseMode::Sse, None).await;
    let client = connect(&url, HttpClientOptions::new()).await;
    // The reply of the next tools/call ends after two chunks (the priming event and the
    // first progress notification at most): the rest must come through resumption.
    *front.cut.lock().unwrap() = Some(("tools/call".into(), 2));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = client
        .call_tool("count", json!({"n": 6}))
        .progress(move |p| s.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "counted to 6");
    assert_eq!(front.cuts.load(Ordering::SeqCst), 1);
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let resumed = front
        .seen()
        .into_iter()
        .filter(|s| s.method == Method::GET && s.headers.contains_key("last-event-id"))
        .count();
    assert!(resumed >= 1, "{:?}", front.methods());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_clear() {
    // Nothing listens on the port.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &url,
        options(),
        HttpClientOptions::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(e.message().contains(&url), "{e}");

    // No TLS.
    let e = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        "https://127.0.0.1/mcp",
        options(),
        HttpClientOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(e.message().contains("https"), "{e}");

    // A missing token: 401, with the body quoted.
    let (_front, url) = start(ResponseMode::Sse, Some("s3cret")).await;
    let e = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &url,
        options(),
        HttpClientOptions::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
    assert!(
        e.message().contains("401") && e.message().contains("missing token"),
        "{e}"
    );

    // A wrong path: 404 from the endpoint.
    let (_front, url) = start(ResponseMode::Sse, None).await;
    let e = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &url.replace("/mcp", "/nope"),
        options(),
        HttpClientOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(e.message().contains("404"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_fail_only_their_request() {
    let (front, url) = start(ResponseMode::Sse, None).await;
    let client = connect(&url, HttpClientOptions::new()).await;

    // A 500 with a body.
    *front.inject.lock().unwrap() = Some((
        "tools/call".into(),
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/plain",
        "database on fire",
    ));
    let e = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(
        e.message().contains("500") && e.message().contains("database on fire"),
        "{e}"
    );

    // Malformed JSON in a JSON reply.
    *front.inject.lock().unwrap() = Some((
        "tools/list".into(),
        StatusCode::OK,
        "application/json",
        "{\"jsonrpc\": \"2.0\", \"id\": ",
    ));
    let e = client.list_tools().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(e.message().contains("carried no response"), "{e}");

    // An SSE reply that ends without the response and without event ids to resume from.
    *front.inject.lock().unwrap() = Some((
        "ping".into(),
        StatusCode::OK,
        "text/event-stream",
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n",
    ));
    let e = client.ping().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(e.message().contains("no event id to resume from"), "{e}");

    // The client is still fine.
    let r = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&r), "3");
    client.ping().await.unwrap();
}

/// A URL a server chose (an OAuth fetch) whose host name resolves into the client's own
/// network is refused before any connection is made, unless the MCP server is on that network
/// too.
#[cfg(feature = "oauth")]
#[tokio::test]
async fn server_chosen_names_that_resolve_into_the_clients_network_are_refused() {
    use mcp_service::http_client::{AddressCheck, Connector, Destination};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connector = mcp_tokio::TcpConnector(mcp_tokio::TokioRuntime::current());
    let mut to = Destination::new("localhost", port);
    to.check = Some(AddressCheck::same_network_as("https://93.184.216.34/mcp").unwrap());
    match connector.connect(&to).await {
        Ok(_) => panic!("a public server sent the client to localhost"),
        Err(e) => {
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
            let msg = e.to_string();
            assert!(msg.contains("refused to connect to localhost"), "{msg}");
            assert!(msg.contains("loopback"), "{msg}");
        }
    }
    // Nothing reached the listener.
    assert!(listener.accept().is_err());
    // A server on loopback may send the client to another loopback name.
    let local = format!("http://127.0.0.1:{port}/mcp");
    to.check = Some(AddressCheck::same_network_as(&local).unwrap());
    assert!(connector.connect(&to).await.is_ok());
}

/// A server that reads a request and closes the connection without answering it (its idle
/// timeout crossing the request on the wire): the client sends a notification again on a
/// fresh connection, and never a request, which fails with a clear error, sent once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_unanswered_replays_only_what_is_harmless_twice() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[derive(Default)]
    struct Script {
        initialized: AtomicUsize,
        calls: AtomicUsize,
        connections: AtomicUsize,
    }
    let script = Arc::new(Script::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let s = script.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            s.connections.fetch_add(1, Ordering::SeqCst);
            let s = s.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    // One request: the head, then a body of its Content-Length.
                    let head_end = loop {
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break i + 4;
                        }
                        let mut chunk = [0u8; 4096];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                    while buf.len() < head_end + len {
                        let mut chunk = [0u8; 4096];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body: Vec<u8> = buf.drain(..head_end + len).skip(head_end).collect();
                    let reply = if head.starts_with("post") {
                        let msg: Value = serde_json::from_slice(&body).unwrap();
                        match msg["method"].as_str() {
                            Some("initialize") => {
                                let result = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                                    "protocolVersion": msg["params"]["protocolVersion"],
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "closer", "version": "1"}}})
                                .to_string();
                                format!(
                                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                     mcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{result}",
                                    result.len()
                                )
                            }
                            Some("notifications/initialized") => {
                                if s.initialized.fetch_add(1, Ordering::SeqCst) == 0 {
                                    return; // read, then closed unanswered
                                }
                                "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into()
                            }
                            Some("tools/call") => {
                                s.calls.fetch_add(1, Ordering::SeqCst);
                                return;
                            }
                            _ => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into(),
                        }
                    } else if head.starts_with("get") {
                        "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n".into()
                    } else {
                        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".into()
                    };
                    if sock.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });

    let client = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &url,
        ClientOptions::new("http-client-test", "1.0")
            .discovery(mcp_tokio::proto::session::Discovery::Initialize),
        HttpClientOptions::new(),
    )
    .await
    .expect("the notification closed unanswered was sent again");
    // (The notification may still be on its way when `connect_http` returns.)
    eventually("the notification sent again", || {
        script.initialized.load(Ordering::SeqCst) == 2
    })
    .await;
    assert!(script.connections.load(Ordering::SeqCst) >= 2);

    let e = client.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(e.message().contains("not sent again"), "{e}");
    assert_eq!(
        script.calls.load(Ordering::SeqCst),
        1,
        "a request is never sent twice"
    );
}
