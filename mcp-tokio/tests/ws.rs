//! MCP over WebSocket on tokio, end to end: the typed client against `serve_ws`, and raw
//! WebSocket / HTTP clients probing the handshake policy, frame rules, limits and closing.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mcp_tokio::proto::schema::{CallToolResult, JsonObject, Tool};
use mcp_tokio::service::server::ToolContext;
use mcp_tokio::{ClientOptions, ErrorKind, Server};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

type Raw = WebSocketStream<TcpStream>;

const MAX_MESSAGE: usize = 4096;

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// A server with a small message limit and a tool that closes its own session.
fn server() -> Server {
    Server::builder("ws-test", "1")
        .max_message_size(MAX_MESSAGE)
        .tool(
            Tool::new("bye", obj(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                cx.peer().close();
                Ok(CallToolResult::text("bye"))
            },
        )
        .build()
}

fn options() -> ClientOptions {
    ClientOptions::new("ws-test-client", "0.1")
}

async fn start(server: Server) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(mcp_tokio::serve_ws(
        mcp_tokio::TokioRuntime::current(),
        server,
        listener,
    ));
    addr
}

/// A raw WebSocket connection to `url` with extra request headers.
async fn raw(url: &str, headers: &[(&'static str, &str)]) -> Result<Raw, WsError> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    let addr = request.uri().authority().unwrap().as_str().to_owned();
    let tcp = TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(request, tcp)
        .await
        .map(|(ws, _)| ws)
}

/// The status of a refused raw handshake.
async fn refused(url: &str, headers: &[(&'static str, &str)]) -> u16 {
    match raw(url, headers).await {
        Err(WsError::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("expected an HTTP refusal, the upgrade succeeded"),
    }
}

/// The next frame that is not a ping or pong, within 10 s.
async fn next_message(ws: &mut Raw) -> Option<Result<Message, WsError>> {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("no frame within 10 s")
}

fn close_code(m: Option<Result<Message, WsError>>) -> CloseCode {
    match m {
        Some(Ok(Message::Close(Some(CloseFrame { code, .. })))) => code,
        other => panic!("expected a close frame, got {other:?}"),
    }
}

async fn send_json(ws: &mut Raw, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

async fn recv_json(ws: &mut Raw) -> Value {
    match next_message(ws).await {
        Some(Ok(Message::Text(t))) => serde_json::from_str(t.as_str()).unwrap(),
        other => panic!("expected a text frame, got {other:?}"),
    }
}

/// The MCP handshake by hand.
async fn initialize(ws: &mut Raw) {
    send_json(
        ws,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let init = recv_json(ws).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "ws-test");
    send_json(
        ws,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_client_calls_and_closes() {
    let addr = start(server()).await;
    let client = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        &format!("ws://{addr}/ws"),
        options(),
    )
    .await
    .unwrap();
    // `Client::ping` in either era (`server/discover` in 2026-07-28, the default's here).
    client.ping().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "bye");
    // Many requests at once, each in its own frame.
    let pings = futures_util::future::join_all((0..50).map(|_| client.ping())).await;
    for pong in pings {
        pong.unwrap();
    }
    client.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subprotocol_is_selected_when_offered() {
    let addr = start(server()).await;
    let url = format!("ws://{addr}/ws");
    let mut request = url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", "x-other, mcp".parse().unwrap());
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (_, resp) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    assert_eq!(resp.headers()["sec-websocket-protocol"], "mcp");
    // A client offering none is accepted without one.
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (_, resp) = tokio_tungstenite::client_async(url.as_str(), tcp)
        .await
        .unwrap();
    assert!(resp.headers().get("sec-websocket-protocol").is_none());
    // One offering only others is refused.
    assert_eq!(
        refused(&url, &[("Sec-WebSocket-Protocol", "graphql-ws")]).await,
        400
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_get_404() {
    let addr = start(server()).await;
    assert_eq!(refused(&format!("ws://{addr}/mcp"), &[]).await, 404);
    assert_eq!(refused(&format!("ws://{addr}/"), &[]).await, 404);
    assert_eq!(refused(&format!("ws://{addr}/ws/x"), &[]).await, 404);
}

/// Plain HTTP requests get plain HTTP answers (hyper answers them; no WebSocket involved).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_requests_get_http_answers() {
    let addr = start(server()).await;
    async fn status_of(addr: SocketAddr, request: &str) -> String {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        tcp.read_to_end(&mut reply).await.unwrap();
        let reply = String::from_utf8_lossy(&reply).into_owned();
        reply.lines().next().unwrap_or_default().to_owned()
    }
    let host = "Host: 127.0.0.1\r\n";
    assert_eq!(
        status_of(addr, &format!("GET /nope HTTP/1.1\r\n{host}\r\n")).await,
        "HTTP/1.1 404 Not Found"
    );
    assert_eq!(
        status_of(addr, &format!("GET /ws HTTP/1.1\r\n{host}\r\n")).await,
        "HTTP/1.1 426 Upgrade Required"
    );
    assert_eq!(
        status_of(
            addr,
            &format!("POST /ws HTTP/1.1\r\n{host}Content-Length: 0\r\n\r\n")
        )
        .await,
        "HTTP/1.1 405 Method Not Allowed"
    );
    assert_eq!(
        status_of(
            addr,
            &format!(
                "GET /ws HTTP/1.1\r\n{host}Connection: Upgrade\r\nUpgrade: websocket\r\n\
                 Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            )
        )
        .await,
        "HTTP/1.1 426 Upgrade Required"
    );
    assert_eq!(
        status_of(
            addr,
            &format!(
                "GET /ws HTTP/1.1\r\n{host}Connection: Upgrade\r\nUpgrade: websocket\r\n\
                 Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n"
            )
        )
        .await,
        "HTTP/1.1 400 Bad Request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origin_and_host_get_403() {
    let addr = start(server()).await;
    let url = format!("ws://{addr}/ws");
    assert_eq!(
        refused(&url, &[("Origin", "https://evil.example")]).await,
        403
    );
    assert_eq!(refused(&url, &[("Origin", "null")]).await, 403);
    assert_eq!(refused(&url, &[("Host", "evil.example")]).await, 403);
    // Loopback origins and hosts are fine.
    let port = addr.port();
    let origin = format!("http://localhost:{port}");
    let ws = raw(&url, &[("Origin", &origin)]).await;
    assert!(ws.is_ok(), "{:?}", ws.err());
    let host = format!("localhost:{port}");
    let ws = raw(&url, &[("Host", &host)]).await;
    assert!(ws.is_ok(), "{:?}", ws.err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_frame_is_refused_with_1003() {
    let addr = start(server()).await;
    let mut ws = raw(&format!("ws://{addr}/ws"), &[]).await.unwrap();
    initialize(&mut ws).await;
    ws.send(Message::binary(b"{\"jsonrpc\":\"2.0\"}".to_vec()))
        .await
        .unwrap();
    assert_eq!(
        close_code(next_message(&mut ws).await),
        CloseCode::Unsupported
    );
    // After the close handshake the server ends the connection.
    assert!(next_message(&mut ws).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_large_message_closes_with_1009_and_the_server_keeps_serving() {
    let addr = start(server()).await;
    let url = format!("ws://{addr}/ws");
    let other = mcp_tokio::connect_ws(mcp_tokio::TokioRuntime::current(), &url, options())
        .await
        .unwrap();
    let mut ws = raw(&url, &[]).await.unwrap();
    initialize(&mut ws).await;
    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "ping",
        "params": {"_meta": {"pad": "x".repeat(MAX_MESSAGE)}}});
    send_json(&mut ws, big).await;
    assert_eq!(close_code(next_message(&mut ws).await), CloseCode::Size);
    assert!(next_message(&mut ws).await.is_none());
    // The open connection, and a new one, are still served.
    other.ping().await.unwrap();
    let fresh = mcp_tokio::connect_ws(mcp_tokio::TokioRuntime::current(), &url, options())
        .await
        .unwrap();
    fresh.ping().await.unwrap();
    // A message of exactly the limit is accepted.
    let mut ws = raw(&url, &[]).await.unwrap();
    initialize(&mut ws).await;
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string();
    let padded = format!("{ping}{}", " ".repeat(MAX_MESSAGE - ping.len()));
    assert_eq!(padded.len(), MAX_MESSAGE);
    ws.send(Message::text(padded)).await.unwrap();
    assert_eq!(recv_json(&mut ws).await["id"], 3);
    other.close();
    fresh.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_may_hold_pretty_printed_json_and_pings_are_answered() {
    let addr = start(server()).await;
    let mut ws = raw(&format!("ws://{addr}/ws"), &[]).await.unwrap();
    initialize(&mut ws).await;
    let pretty =
        serde_json::to_string_pretty(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
            .unwrap();
    assert!(pretty.contains('\n'));
    ws.send(Message::text(pretty)).await.unwrap();
    let reply = recv_json(&mut ws).await;
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"], json!({}));
    // A ping frame is answered with a pong carrying the same payload.
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Pong(p))) => return p,
                Some(Ok(_)) => continue,
                other => panic!("expected a pong, got {other:?}"),
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(&pong[..], b"are you there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_close_runs_the_close_handshake() {
    let addr = start(server()).await;
    let mut ws = raw(&format!("ws://{addr}/ws"), &[]).await.unwrap();
    initialize(&mut ws).await;
    ws.close(None).await.unwrap();
    // The server answers our close frame with its own, then ends the connection.
    let m = next_message(&mut ws).await;
    assert!(matches!(m, Some(Ok(Message::Close(_)))), "{m:?}");
    assert!(next_message(&mut ws).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_close_is_a_normal_close_frame() {
    let addr = start(server()).await;
    let mut ws = raw(&format!("ws://{addr}/ws"), &[]).await.unwrap();
    initialize(&mut ws).await;
    send_json(
        &mut ws,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "bye", "arguments": {}}}),
    )
    .await;
    let code = loop {
        match next_message(&mut ws).await {
            Some(Ok(Message::Text(_))) => continue,
            other => break close_code(other),
        }
    };
    assert_eq!(code, CloseCode::Normal);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_client_sees_the_server_close() {
    let addr = start(server()).await;
    let client = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        &format!("ws://{addr}/ws"),
        options(),
    )
    .await
    .unwrap();
    // The answer may or may not beat the close; either way the connection ends.
    let _ = client.call_tool("bye", json!({})).await;
    tokio::time::timeout(Duration::from_secs(10), async {
        while !client.is_closed() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client did not notice the server's close");
    let err = client.ping().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_errors_are_clear() {
    let addr = start(server()).await;
    let err = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        &format!("ws://{addr}/elsewhere"),
        options(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportError);
    assert!(err.message().contains("404"), "{}", err.message());
    let err = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        "wss://127.0.0.1:1/ws",
        options(),
    )
    .await
    .unwrap_err();
    assert!(err.message().contains("wss://"), "{}", err.message());
    let err = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        "http://127.0.0.1:1/ws",
        options(),
    )
    .await
    .unwrap_err();
    assert!(
        err.message().contains("not a ws:// URL"),
        "{}",
        err.message()
    );
    // Nothing listens on the port of a closed listener.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let err = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        &format!("ws://127.0.0.1:{port}/ws"),
        options(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportError);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_see_the_upgrade_request() {
    let server = Server::builder("ws-test", "1")
        .tool(
            Tool::new("whoami", obj(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let head = cx.http_request().expect("the upgrade request's head");
                let token = head
                    .headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("none")
                    .to_owned();
                Ok(CallToolResult::text(format!("{} {token}", head.uri.path())))
            },
        )
        .build();
    let addr = start(server).await;
    let mut ws = raw(
        &format!("ws://{addr}/ws"),
        &[("authorization", "Bearer alice")],
    )
    .await
    .unwrap();
    initialize(&mut ws).await;
    // Every request of the connection sees the same head.
    for id in [2, 3] {
        send_json(
            &mut ws,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "whoami", "arguments": {}}}),
        )
        .await;
        let reply = recv_json(&mut ws).await;
        assert_eq!(reply["id"], id);
        assert_eq!(reply["result"]["content"][0]["text"], "/ws Bearer alice");
    }
}
