//! `serve_http` over real sockets, through a real HTTP client (hyper): every refusal of bad
//! input has the spec's status and the server keeps serving; a client that drops an SSE stream
//! mid-call resumes it with `Last-Event-ID` without losing or repeating a message; HTTP
//! sessions report telemetry like byte-stream connections.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use mcp_proto::codec::sse::SseDecoder;
use mcp_proto::http::EndpointConfig;
use mcp_tokio::Server;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use mcp_tokio::service::telemetry::{Direction, Outcome, Telemetry, TelemetryEvent};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

#[path = "support/http.rs"]
mod http_support;
use http_support::{body_text, send};

const V: &str = "2025-11-25";

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

/// A server with `echo` and `staged`: `staged` reports progress 1 and 2, waits until the test
/// releases it, then reports 3 and 4 and returns.
fn server(release: std::sync::Arc<Notify>, telemetry: Telemetry) -> Server {
    Server::builder("http-bad-input", "1.0")
        .telemetry(telemetry)
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
        .tool(
            Tool::new("staged", schema_of(json!({"type": "object"}))),
            move |_args: Value, cx: ToolContext| {
                let release = release.clone();
                async move {
                    cx.progress(1.0, Some(4.0), None).await?;
                    cx.progress(2.0, Some(4.0), None).await?;
                    release.notified().await;
                    cx.progress(3.0, Some(4.0), None).await?;
                    cx.progress(4.0, Some(4.0), None).await?;
                    Ok("staged done".to_owned())
                }
            },
        )
        .build()
}

async fn start(
    config: impl FnOnce(EndpointConfig) -> EndpointConfig,
) -> (u16, std::sync::Arc<Notify>) {
    start_with(config, Telemetry::default()).await
}

async fn start_with(
    config: impl FnOnce(EndpointConfig) -> EndpointConfig,
    telemetry: Telemetry,
) -> (u16, std::sync::Arc<Notify>) {
    let release = std::sync::Arc::new(Notify::new());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = server(release.clone(), telemetry);
    let cfg = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server,
        listener,
        cfg,
    ));
    (port, release)
}

fn post(port: u16, sid: Option<&str>) -> hyper::http::request::Builder {
    let mut b = Request::post("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", V);
    }
    b
}

fn init_body() -> String {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": V, "capabilities": {},
        "clientInfo": {"name": "bad-input", "version": "1"}}})
    .to_string()
}

/// Opens a session: initialize + initialized. Returns the session id.
async fn open(port: u16) -> String {
    let body = init_body();
    let resp = send(
        port,
        post(port, None).body(Full::from(body.clone())).unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let text = body_text(resp).await;
    assert!(text.contains(r#""protocolVersion":"2025-11-25""#), "{text}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let resp = send(port, post(port, Some(&sid)).body(Full::from(note)).unwrap()).await;
    assert_eq!(resp.status(), 202);
    sid
}

/// The server still answers a valid call in the session.
async fn still_serves(port: u16, sid: &str) {
    let call = r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#;
    let resp = send(port, post(port, Some(sid)).body(Full::from(call)).unwrap()).await;
    assert_eq!(resp.status(), 200);
    let text = body_text(resp).await;
    assert!(text.contains("still here"), "{text}");
}

fn rpc_error(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_has_its_status_and_the_server_keeps_serving() {
    let (port, _release) = start(|c| c.max_body_size(4096)).await;
    let sid = open(port).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    // Foreign Origin and foreign Host: 403 (DNS-rebinding protection).
    let resp = send(
        port,
        post(port, Some(&sid))
            .header("origin", "http://evil.example")
            .body(Full::from(ping))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 403);
    let resp = send(
        port,
        Request::post("/mcp")
            .header("host", "evil.example")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &sid)
            .body(Full::from(ping))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 403);

    // Unknown session: 404.
    let resp = send(
        port,
        post(port, Some("0123456789abcdef0123456789abcdef"))
            .body(Full::from(ping))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 404);

    // No session id on a non-initialize request: 400.
    let resp = send(port, post(port, None).body(Full::from(ping)).unwrap()).await;
    assert_eq!(resp.status(), 400);

    // Unsupported protocol version: 400.
    let resp = send(
        port,
        Request::post("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "1999-01-01")
            .body(Full::from(ping))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 400);

    // Wrong content type: 415.
    let resp = send(
        port,
        Request::post("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("content-type", "text/plain")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", V)
            .body(Full::from(ping))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 415);

    // GET without text/event-stream in Accept: 406.
    let resp = send(
        port,
        Request::get("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("accept", "application/json")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", V)
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 406);

    // Oversize body: 413, whatever its real length.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(1 << 20)
    );
    let resp = send(
        port,
        post(port, Some(&sid))
            .body(Full::from(big.clone()))
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 413);

    // Malformed JSON: 400 carrying a JSON-RPC parse error.
    let garbage = r#"{"jsonrpc":"2.0","id":3,"method":"#;
    let resp = send(
        port,
        post(port, Some(&sid)).body(Full::from(garbage)).unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 400);
    let err = rpc_error(&body_text(resp).await);
    assert_eq!(err["error"]["code"], -32700, "{err}");

    // An unknown method in a valid session: a JSON-RPC -32601 answer, not an HTTP error.
    let unknown = r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#;
    let resp = send(
        port,
        post(port, Some(&sid)).body(Full::from(unknown)).unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let text = body_text(resp).await;
    assert!(text.contains("-32601"), "{text}");

    still_serves(port, &sid).await;
}

/// Reads SSE events from `body` until `stop` says so; returns (event id, JSON message) pairs,
/// skipping priming events (empty data).
async fn read_events(
    body: &mut Incoming,
    decoder: &mut SseDecoder,
    mut stop: impl FnMut(&Value) -> bool,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    loop {
        while let Some(ev) = decoder.next_event() {
            let ev = ev.expect("a well-formed SSE event");
            if ev.data.is_empty() {
                continue;
            }
            let msg: Value = serde_json::from_str(&ev.data).unwrap();
            let done = stop(&msg);
            out.push((ev.id.clone(), msg));
            if done {
                return out;
            }
        }
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("an event in time")
            .expect("the stream to stay open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            decoder.push(&data);
        }
    }
}

fn progress_of(msg: &Value) -> Option<f64> {
    (msg["method"] == "notifications/progress").then(|| msg["params"]["progress"].as_f64())?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumes_with_last_event_id_nothing_lost_nothing_twice() {
    let (port, release) = start(|c| c).await;
    let sid = open(port).await;
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"staged","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let resp = send(port, post(port, Some(&sid)).body(Full::from(call)).unwrap()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let mut body = resp.into_body();
    let mut decoder = SseDecoder::new(1 << 20);
    let first = read_events(&mut body, &mut decoder, |m| progress_of(m) == Some(2.0)).await;
    let last_id = first.last().unwrap().0.clone();
    assert!(!last_id.is_empty(), "events carry ids");
    // The client goes away mid-call; the tool then goes on.
    drop(body);
    tokio::time::sleep(Duration::from_millis(50)).await;
    release.notify_one();

    let resp = send(
        port,
        Request::get("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", V)
            .header("last-event-id", &last_id)
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let mut decoder = SseDecoder::new(1 << 20);
    let rest = read_events(&mut body, &mut decoder, |m| m["id"] == 7).await;

    let progress: Vec<f64> = first
        .iter()
        .chain(rest.iter())
        .filter_map(|(_, m)| progress_of(m))
        .collect();
    assert_eq!(
        progress,
        vec![1.0, 2.0, 3.0, 4.0],
        "each progress exactly once"
    );
    let results: Vec<&Value> = rest
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m["id"] == 7)
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["result"]["content"][0]["text"], "staged done");
    let ids: Vec<&String> = first.iter().chain(rest.iter()).map(|(id, _)| id).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "no event id twice: {ids:?}");

    still_serves(port, &sid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_report_telemetry_like_connections() {
    let mut telemetry = Telemetry::default();
    let mut events = telemetry.subscribe();
    let (port, _release) = start_with(|c| c, telemetry).await;
    let sid = open(port).await;
    still_serves(port, &sid).await;
    let resp = send(
        port,
        Request::delete("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", V)
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(resp.status(), 204);

    use futures_util::StreamExt;
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(TelemetryEvent::ConnectionClosed { .. })) {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("telemetry in time")
            .expect("the stream stays open");
        seen.push(ev);
    }
    let connection = match &seen[0] {
        TelemetryEvent::ConnectionOpened { connection } => *connection,
        other => panic!("first event {other:?}"),
    };
    assert!(seen.iter().any(|e| matches!(e,
        TelemetryEvent::RequestReceived { connection: c, method, .. }
            if *c == connection && method == "tools/call")));
    assert!(seen.iter().any(|e| matches!(e,
        TelemetryEvent::RequestCompleted {
            connection: c, direction: Direction::Inbound, method, outcome: Outcome::Ok, ..
        } if *c == connection && method == "tools/call")));
    assert!(matches!(seen.last(),
        Some(TelemetryEvent::ConnectionClosed { connection: c, .. }) if *c == connection));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_shutdown_waits_for_the_session_delete() {
    let mut telemetry = Telemetry::default();
    let mut events = telemetry.subscribe();
    let (port, _release) = start_with(|c| c, telemetry).await;
    let client = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &format!("http://127.0.0.1:{port}/mcp"),
        mcp_tokio::ClientOptions::default(),
        mcp_tokio::HttpClientOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 2);
    tokio::time::timeout(Duration::from_secs(10), client.shutdown())
        .await
        .expect("shutdown completes");
    assert!(client.is_closed());
    // The session was ended by the client's DELETE, not by expiry.
    use futures_util::StreamExt;
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .expect("the session closes")
            .unwrap();
        if let TelemetryEvent::ConnectionClosed { error, .. } = ev {
            assert!(error.is_none(), "{error:?}");
            break;
        }
    }
    // `closed` stays complete.
    client.closed().await;
}
