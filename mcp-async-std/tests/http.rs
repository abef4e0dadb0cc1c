//! `serve_http` end to end under async-std and smol, spoken to by a real HTTP client (hyper's,
//! over `FuturesIo`): the session lifecycle in SSE and JSON reply modes, the standalone GET
//! stream, DELETE, and the endpoint's refusals (404, 403, 413).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use async_io::{Async, Timer};
use bytes::Bytes;
use futures_lite::FutureExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcp_async_std::Server;
use mcp_async_std::proto::http::{EndpointConfig, ResponseMode};
use mcp_async_std::service::hyper_io::FuturesIo;
use mcp_async_std::service::schema::Tool;
use mcp_async_std::service::server::{ToolContext, schema_of};
use serde::Deserialize;
use serde_json::{Value, json};

/// Runs scenario `$name(rt)` as two tests: `$name::async_std` and `$name::smol`.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn async_std() {
                async_std::task::block_on(super::$name(mcp_async_std::AsyncStdRuntime::new()));
            }

            #[test]
            fn smol() {
                smol::block_on(super::$name(mcp_async_std::SmolRuntime::new()));
            }
        }
    )*};
}

on_both!(
    sse_session_lifecycle,
    json_reply_mode,
    refusals_by_path_host_and_size,
);

const VERSION: &str = "2025-11-25";

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn server() -> Server {
    Server::builder("http-test", "1.0")
        .tool(
            Tool::new(
                "echo",
                schema_of(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            ),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(args.text) },
        )
        .build()
}

/// `fut`, failing the test after `secs` seconds (a guard against hangs, not a timing check).
async fn deadline<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    fut.or(async {
        Timer::after(Duration::from_secs(secs)).await;
        panic!("timed out after {secs} s")
    })
    .await
}

/// Starts `serve_http` for `server` on 127.0.0.1:0 with `config` and returns its address.
fn start<R: AsyncIoDriver>(rt: &R, server: &Server, config: EndpointConfig) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local address");
    let (serve_rt, server) = (rt.clone(), server.clone());
    rt.spawn(Box::pin(async move {
        if let Err(e) = mcp_async_std::serve_http(serve_rt, server, listener, config).await {
            eprintln!("serve_http failed: {e}");
        }
    }));
    addr
}

fn config(server: &Server) -> EndpointConfig {
    EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into())
}

/// A request to `path` on `addr` with the usual MCP headers plus `headers`.
fn request(
    method: Method,
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (n, v) in headers {
        b = b.header(*n, *v);
    }
    b.body(Full::new(body.into())).expect("a valid request")
}

/// Sends `req` on a fresh connection to `addr` with hyper's HTTP/1.1 client.
async fn send<R: AsyncIoDriver>(
    rt: &R,
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
) -> Response<Incoming> {
    let stream = Async::<TcpStream>::connect(addr).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
        .await
        .expect("HTTP handshake");
    rt.spawn(Box::pin(async move {
        let _ = conn.await;
    }));
    deadline(10, sender.send_request(req))
        .await
        .expect("a reply")
}

/// Sends `req` and reads the whole reply body as text.
async fn exchange<R: AsyncIoDriver>(
    rt: &R,
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
) -> (http::response::Parts, String) {
    let (head, body) = send(rt, addr, req).await.into_parts();
    let bytes = deadline(10, body.collect())
        .await
        .expect("the reply body")
        .to_bytes();
    (head, String::from_utf8(bytes.to_vec()).expect("UTF-8 body"))
}

fn content_type(head: &http::response::Parts) -> &str {
    head.headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The JSON messages in the `data:` fields of an SSE body (the priming event has empty data).
fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).expect("JSON in an SSE data field"))
        .collect()
}

fn initialize(id: u64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "http-test-client", "version": "1"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn echo_call(id: u64, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":text}}})
    .to_string()
}

/// Initialize (SSE reply), initialized → 202, tools/call, the standalone GET stream carrying a
/// list-changed notification, DELETE ending the stream and the session, then 404 for it.
async fn sse_session_lifecycle<R: AsyncIoDriver>(rt: R) {
    let server = server();
    let addr = start(&rt, &server, config(&server));

    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &[], initialize(1)),
    )
    .await;
    assert_eq!(head.status, StatusCode::OK, "{body}");
    assert!(
        content_type(&head).starts_with("text/event-stream"),
        "{head:?}"
    );
    let sid = head
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("an Mcp-Session-Id header")
        .to_owned();
    let msgs = sse_messages(&body);
    assert_eq!(msgs.len(), 1, "{body}");
    assert_eq!(msgs[0]["id"], 1);
    assert_eq!(msgs[0]["result"]["protocolVersion"], VERSION);
    assert_eq!(msgs[0]["result"]["serverInfo"]["name"], "http-test");

    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", VERSION),
    ];
    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &session, INITIALIZED),
    )
    .await;
    assert_eq!(head.status, StatusCode::ACCEPTED, "{body}");
    assert!(body.is_empty(), "{body}");

    let (head, body) = exchange(
        &rt,
        addr,
        request(
            Method::POST,
            addr,
            "/mcp",
            &session,
            echo_call(2, "over sse"),
        ),
    )
    .await;
    assert_eq!(head.status, StatusCode::OK, "{body}");
    let msgs = sse_messages(&body);
    assert_eq!(msgs.len(), 1, "{body}");
    assert_eq!(msgs[0]["id"], 2);
    assert_eq!(
        msgs[0]["result"]["content"],
        json!([{"type": "text", "text": "over sse"}])
    );
    assert_eq!(server.connection_count(), 1);

    // The standalone stream: open, then a registry change reaches it.
    let get = send(
        &rt,
        addr,
        request(Method::GET, addr, "/mcp", &session, Bytes::new()),
    )
    .await;
    assert_eq!(get.status(), StatusCode::OK);
    assert!(
        get.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream")),
        "{:?}",
        get.headers()
    );
    let mut stream = get.into_body();
    server
        .add_tool(
            Tool::new("later", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok("later") },
        )
        .expect("a new tool");
    let mut seen = String::new();
    while !seen.contains("notifications/tools/list_changed") {
        let frame = deadline(10, stream.frame())
            .await
            .expect("the GET stream stays open until the notification")
            .expect("a frame");
        if let Ok(data) = frame.into_data() {
            seen.push_str(std::str::from_utf8(&data).expect("UTF-8 SSE"));
        }
    }
    assert!(
        sse_messages(&seen)
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "{seen}"
    );

    // DELETE ends the session: the GET stream ends, the session is gone.
    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::DELETE, addr, "/mcp", &session, Bytes::new()),
    )
    .await;
    assert!(head.status.is_success(), "{:?} {body}", head.status);
    loop {
        match deadline(10, stream.frame()).await {
            None => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => panic!("the GET stream failed instead of ending: {e}"),
        }
    }
    let (head, body) = exchange(
        &rt,
        addr,
        request(
            Method::POST,
            addr,
            "/mcp",
            &session,
            echo_call(3, "too late"),
        ),
    )
    .await;
    assert_eq!(head.status, StatusCode::NOT_FOUND, "{body}");
    for _ in 0..200 {
        if server.connection_count() == 0 {
            break;
        }
        Timer::after(Duration::from_millis(10)).await;
    }
    assert_eq!(server.connection_count(), 0, "the session's service ended");
}

/// `ResponseMode::Json`: initialize and tools/call are answered with one JSON body each.
async fn json_reply_mode<R: AsyncIoDriver>(rt: R) {
    let server = server();
    let addr = start(
        &rt,
        &server,
        config(&server).response_mode(ResponseMode::Json),
    );

    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &[], initialize(1)),
    )
    .await;
    assert_eq!(head.status, StatusCode::OK, "{body}");
    assert!(
        content_type(&head).starts_with("application/json"),
        "{head:?}"
    );
    let reply: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], VERSION);
    let sid = head
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("an Mcp-Session-Id header")
        .to_owned();

    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", VERSION),
    ];
    let (head, _) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &session, INITIALIZED),
    )
    .await;
    assert_eq!(head.status, StatusCode::ACCEPTED);

    let (head, body) = exchange(
        &rt,
        addr,
        request(
            Method::POST,
            addr,
            "/mcp",
            &session,
            echo_call(2, "over json"),
        ),
    )
    .await;
    assert_eq!(head.status, StatusCode::OK, "{body}");
    assert!(
        content_type(&head).starts_with("application/json"),
        "{head:?}"
    );
    let reply: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(reply["id"], 2);
    assert_eq!(
        reply["result"]["content"],
        json!([{"type": "text", "text": "over json"}])
    );
}

/// Another path → 404, a foreign `Host` → 403, a body over the limit → 413; the server keeps
/// serving afterwards.
async fn refusals_by_path_host_and_size<R: AsyncIoDriver>(rt: R) {
    let server = server();
    let addr = start(&rt, &server, config(&server).max_body_size(1024));

    let (head, _) = exchange(
        &rt,
        addr,
        request(Method::GET, addr, "/other", &[], Bytes::new()),
    )
    .await;
    assert_eq!(head.status, StatusCode::NOT_FOUND);
    let (head, _) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp/extra", &[], initialize(1)),
    )
    .await;
    assert_eq!(head.status, StatusCode::NOT_FOUND);

    let mut foreign = request(Method::POST, addr, "/mcp", &[], initialize(1));
    foreign
        .headers_mut()
        .insert("host", http::HeaderValue::from_static("evil.example:80"));
    let (head, body) = exchange(&rt, addr, foreign).await;
    assert_eq!(head.status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("Host not allowed"), "{body}");

    let padding = "x".repeat(4096);
    let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":padding}}});
    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &[], big.to_string()),
    )
    .await;
    assert_eq!(head.status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    // Still serving: a fresh initialize succeeds.
    let (head, body) = exchange(
        &rt,
        addr,
        request(Method::POST, addr, "/mcp", &[], initialize(2)),
    )
    .await;
    assert_eq!(head.status, StatusCode::OK, "{body}");
    assert_eq!(sse_messages(&body)[0]["result"]["protocolVersion"], VERSION);
}

/// The drivers of `mcp-async-std` (their listeners are `std`'s).
trait AsyncIoDriver: mcp_async_std::Driver<TcpListener = std::net::TcpListener> {}
impl<R: mcp_async_std::Driver<TcpListener = std::net::TcpListener>> AsyncIoDriver for R {}
