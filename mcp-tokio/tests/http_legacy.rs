//! `serve_http` with the legacy HTTP+SSE transport on: the official client's walk over real
//! sockets with hyper's client — GET /sse, the `endpoint` event, POSTs to it answered 202, the
//! results on the stream — and the session's end when the stream is dropped.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_proto::codec::sse::{SseDecoder, SseEvent};
use mcp_proto::http::{EndpointConfig, LegacySse};
use mcp_tokio::Server;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn server() -> Server {
    Server::builder("legacy-test", "1.0")
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

/// A fresh HTTP/1.1 connection to the server.
async fn connect(port: u16) -> http1::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (send, conn) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    send
}

/// The SSE events of a streamed reply body, read as they arrive.
struct Events {
    body: Incoming,
    decoder: SseDecoder,
}

impl Events {
    async fn next(&mut self) -> SseEvent {
        loop {
            if let Some(e) = self.decoder.next_event() {
                return e.unwrap();
            }
            let frame = tokio::time::timeout(std::time::Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event in time")
                .expect("the stream is open")
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.decoder.push(&data);
            }
        }
    }

    async fn message(&mut self) -> Value {
        let e = self.next().await;
        assert_eq!(e.event, "message");
        serde_json::from_str(&e.data).unwrap()
    }
}

/// One POST on its own connection: the status and the body.
async fn post(port: u16, url: &str, body: &str) -> (StatusCode, String) {
    let mut send = connect(port).await;
    let req = Request::post(url)
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let r = send.send_request(req).await.unwrap();
    let status = r.status();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn open_sse(port: u16) -> (Response<Incoming>, http1::SendRequest<Full<Bytes>>) {
    let mut send = connect(port).await;
    let req = Request::get("/sse")
        .header("host", format!("127.0.0.1:{port}"))
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = send.send_request(req).await.unwrap();
    (r, send)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walk_over_legacy_sse_and_end_with_the_stream() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = server();
    let config = EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .legacy_sse(Some(LegacySse::default()));
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server.clone(),
        listener,
        config,
    ));

    let (reply, conn) = open_sse(port).await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    let mut events = Events {
        body: reply.into_body(),
        decoder: SseDecoder::new(1 << 20),
    };
    let endpoint = events.next().await;
    assert_eq!(endpoint.event, "endpoint");
    let url = endpoint.data;
    assert!(url.starts_with("/messages?sessionId="), "{url}");

    let (status, body) = post(
        port,
        &url,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, "Accepted"));
    let init = events.message().await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(init["result"]["serverInfo"]["name"], "legacy-test");

    let (status, _) = post(
        port,
        &url,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = post(
        port,
        &url,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello over legacy sse"}}}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let call = events.message().await;
    assert_eq!(
        call,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello over legacy sse"}]}})
    );
    let (status, _) = post(
        port,
        &url,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let list = events.message().await;
    assert_eq!(list["result"]["tools"][0]["name"], "echo");
    assert_eq!(server.connection_count(), 1);

    // Errors come back on the POST itself.
    let (status, body) = post(port, &url, "{oops").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32700
    );
    let (status, _) = post(port, "/messages", "{}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Streamable HTTP is served beside it.
    let mut send = connect(port).await;
    let req = Request::get("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = send.send_request(req).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST, "no MCP-Session-Id");

    // The client goes away: its session ends and its URL is gone.
    drop(events);
    drop(conn);
    let mut gone = false;
    for _ in 0..500 {
        if server.connection_count() == 0 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone, "the session ended with its stream");
    let (status, _) = post(port, &url, r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
