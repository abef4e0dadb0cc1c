//! MCP over WebSocket on async-std and smol, end to end: the typed client against `serve_ws`,
//! and a raw `async-tungstenite` client probing the handshake policy, frame rules, limits and
//! closing. Every case runs on both runtimes.

use std::future::Future;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use async_io::Async;
use async_tungstenite::WebSocketStream;
use async_tungstenite::tungstenite::client::IntoClientRequest;
use async_tungstenite::tungstenite::protocol::CloseFrame;
use async_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use async_tungstenite::tungstenite::{Error as WsError, Message};
use futures_util::StreamExt;
use mcp_async_std::proto::schema::{CallToolResult, JsonObject, Tool};
use mcp_async_std::service::server::ToolContext;
use mcp_async_std::{AsyncStdRuntime, ClientOptions, ErrorKind, Server, SmolRuntime};
use serde_json::{Value, json};

type Raw = WebSocketStream<Async<TcpStream>>;

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

/// `fut`'s output, or a panic after 10 s.
async fn within<T>(fut: impl Future<Output = T>) -> T {
    futures_lite::future::or(fut, async {
        async_io::Timer::after(Duration::from_secs(10)).await;
        panic!("nothing happened within 10 s");
    })
    .await
}

fn start<R: AsyncIoDriver>(rt: R) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let serve_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        let _ = mcp_async_std::serve_ws(serve_rt, server(), listener).await;
    }));
    addr
}

async fn raw(url: &str, headers: &[(&'static str, &str)]) -> Result<Raw, WsError> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    let addr: SocketAddr = request.uri().authority().unwrap().as_str().parse().unwrap();
    let tcp = Async::<TcpStream>::connect(addr).await.unwrap();
    async_tungstenite::client_async(request, tcp)
        .await
        .map(|(ws, _)| ws)
}

async fn refused(url: &str, headers: &[(&'static str, &str)]) -> u16 {
    match raw(url, headers).await {
        Err(WsError::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("expected an HTTP refusal, the upgrade succeeded"),
    }
}

/// The next frame that is not a ping or pong.
async fn next_message(ws: &mut Raw) -> Option<Result<Message, WsError>> {
    within(async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => return other,
            }
        }
    })
    .await
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

async fn initialize(ws: &mut Raw) {
    send_json(
        ws,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let init = recv_json(ws).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "ws-test");
    send_json(
        ws,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
}

async fn typed_client<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt.clone());
    let client = mcp_async_std::connect_ws(rt, &format!("ws://{addr}/ws"), options())
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    // `Client::ping` in either era (`server/discover` in 2026-07-28, the default's).
    let pings = futures_util::future::join_all((0..50).map(|_| client.ping())).await;
    for pong in pings {
        pong.unwrap();
    }
    client.close();
}

async fn handshake_refusals<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt);
    assert_eq!(refused(&format!("ws://{addr}/mcp"), &[]).await, 404);
    let url = format!("ws://{addr}/ws");
    assert_eq!(
        refused(&url, &[("Origin", "https://evil.example")]).await,
        403
    );
    assert_eq!(refused(&url, &[("Host", "evil.example")]).await, 403);
    assert_eq!(
        refused(&url, &[("Sec-WebSocket-Protocol", "graphql-ws")]).await,
        400
    );
    let origin = format!("http://127.0.0.1:{}", addr.port());
    assert!(raw(&url, &[("Origin", &origin)]).await.is_ok());
}

async fn binary_frame<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt);
    let mut ws = raw(&format!("ws://{addr}/ws"), &[]).await.unwrap();
    initialize(&mut ws).await;
    ws.send(Message::binary(b"{}".to_vec())).await.unwrap();
    assert_eq!(
        close_code(next_message(&mut ws).await),
        CloseCode::Unsupported
    );
    assert!(next_message(&mut ws).await.is_none());
}

async fn too_large<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt.clone());
    let url = format!("ws://{addr}/ws");
    let other = mcp_async_std::connect_ws(rt.clone(), &url, options())
        .await
        .unwrap();
    let mut ws = raw(&url, &[]).await.unwrap();
    initialize(&mut ws).await;
    send_json(
        &mut ws,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping",
            "params": {"_meta": {"pad": "x".repeat(MAX_MESSAGE)}}}),
    )
    .await;
    assert_eq!(close_code(next_message(&mut ws).await), CloseCode::Size);
    assert!(next_message(&mut ws).await.is_none());
    other.ping().await.unwrap();
    let fresh = mcp_async_std::connect_ws(rt, &url, options())
        .await
        .unwrap();
    fresh.ping().await.unwrap();
    other.close();
    fresh.close();
}

async fn close_handshakes<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt.clone());
    let url = format!("ws://{addr}/ws");
    // The client closes: the server answers with its close frame and ends the connection.
    let mut ws = raw(&url, &[]).await.unwrap();
    initialize(&mut ws).await;
    ws.close(None).await.unwrap();
    let m = next_message(&mut ws).await;
    assert!(matches!(m, Some(Ok(Message::Close(_)))), "{m:?}");
    assert!(next_message(&mut ws).await.is_none());
    // The server closes: a normal close frame.
    let mut ws = raw(&url, &[]).await.unwrap();
    initialize(&mut ws).await;
    send_json(
        &mut ws,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "bye", "arguments": {}}}),
    )
    .await;
    let code = loop {
        match next_message(&mut ws).await {
            Some(Ok(Message::Text(_))) => continue,
            other => break close_code(other),
        }
    };
    assert_eq!(code, CloseCode::Normal);
    // The typed client sees the server close.
    let client = mcp_async_std::connect_ws(rt, &url, options())
        .await
        .unwrap();
    let _ = client.call_tool("bye", json!({})).await;
    within(async {
        while !client.is_closed() {
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
    })
    .await;
    let err = client.peer().request("ping", None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportClosed);
}

async fn connect_errors<R: AsyncIoDriver>(rt: R) {
    let addr = start(rt.clone());
    let err = mcp_async_std::connect_ws(rt.clone(), &format!("ws://{addr}/x"), options())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportError);
    assert!(err.message().contains("404"), "{}", err.message());
    let err = mcp_async_std::connect_ws(rt, "wss://localhost/ws", options())
        .await
        .unwrap_err();
    assert!(err.message().contains("wss://"), "{}", err.message());
}

/// One `#[test]` per runtime for each case.
macro_rules! on_both_runtimes {
    ($($case:ident),* $(,)?) => {
        mod async_std_runtime {
            $(#[test]
            fn $case() {
                async_std::task::block_on(super::$case(super::AsyncStdRuntime::new()));
            })*
        }
        mod smol_runtime {
            $(#[test]
            fn $case() {
                smol::block_on(super::$case(super::SmolRuntime::new()));
            })*
        }
    };
}

on_both_runtimes!(
    typed_client,
    handshake_refusals,
    binary_frame,
    too_large,
    close_handshakes,
    connect_errors,
);

/// The drivers of `mcp-async-std` (their listeners are `std`'s).
trait AsyncIoDriver: mcp_async_std::Driver<TcpListener = std::net::TcpListener> {}
impl<R: mcp_async_std::Driver<TcpListener = std::net::TcpListener>> AsyncIoDriver for R {}
