//! `McpService` mounted in an axum router next to an ordinary route, served by `axum::serve`,
//! spoken to over real HTTP: both the MCP endpoint and the plain route answer.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_tokio::http::McpService;
use mcp_tokio::proto::http::{EndpointConfig, ResponseMode};
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use mcp_tokio::{Server, TokioRuntime};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn server() -> Server {
    Server::builder("axum-test", "1.0")
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

struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One request on a fresh connection with hyper's HTTP/1.1 client; the whole body read.
async fn call(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    let req = req
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a valid request");
    let exchange = async {
        let resp = sender.send_request(req).await.expect("a reply");
        let (head, body) = resp.into_parts();
        let body = body.collect().await.expect("the reply body").to_bytes();
        (head, body)
    };
    let (head, body) = tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
        .await
        .expect("reply in time");
    Reply {
        status: head.status.as_u16(),
        headers: head.headers,
        body: String::from_utf8(body.to_vec()).expect("UTF-8 body"),
    }
}

/// The JSON messages in the `data:` fields of an SSE body.
fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).expect("JSON in an SSE data field"))
        .collect()
}

/// Starts `axum::serve` with `/health` and `McpService` at `/mcp`; returns the port.
async fn start(config: impl FnOnce(EndpointConfig) -> EndpointConfig) -> (Server, u16) {
    let server = server();
    let config = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "healthy" }))
        .route_service(
            "/mcp",
            McpService::new(TokioRuntime::current(), &server, config),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (server, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounted_next_to_an_ordinary_route() {
    let (server, port) = start(|c| c).await;

    let health = call(port, "GET", "/health", &[], "").await;
    assert_eq!(health.status, 200);
    assert_eq!(health.body, "healthy");

    let init = call(
        port,
        "POST",
        "/mcp",
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert!(
        init.header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream")),
        "{:?}",
        init.headers
    );
    let msgs = sse_messages(&init.body);
    assert_eq!(msgs.len(), 1, "{}", init.body);
    assert_eq!(msgs[0]["result"]["serverInfo"]["name"], "axum-test");
    let sid = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();

    let session = [
        ("MCP-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = call(
        port,
        "POST",
        "/mcp",
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(initialized.status, 202);

    let echo = call(
        port,
        "POST",
        "/mcp",
        &session,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"through axum"}}}"#,
    )
    .await;
    assert_eq!(echo.status, 200, "{}", echo.body);
    let msgs = sse_messages(&echo.body);
    assert_eq!(msgs.len(), 1, "{}", echo.body);
    assert_eq!(
        msgs[0]["result"]["content"],
        json!([{"type": "text", "text": "through axum"}])
    );
    assert_eq!(server.connection_count(), 1);

    // The plain route still works, and unknown paths are axum's 404.
    let health = call(port, "GET", "/health", &[], "").await;
    assert_eq!(health.status, 200);
    assert_eq!(health.body, "healthy");
    let missing = call(port, "GET", "/nowhere", &[], "").await;
    assert_eq!(missing.status, 404);

    let delete = call(port, "DELETE", "/mcp", &session, "").await;
    assert!((200..300).contains(&delete.status), "{}", delete.status);
    let gone = call(
        port,
        "POST",
        "/mcp",
        &session,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    )
    .await;
    assert_eq!(gone.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_replies_through_axum() {
    let (_server, port) = start(|c| c.response_mode(ResponseMode::Json)).await;
    let init = call(
        port,
        "POST",
        "/mcp",
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert!(
        init.header("content-type")
            .is_some_and(|v| v.starts_with("application/json")),
        "{:?}",
        init.headers
    );
    let reply: Value = serde_json::from_str(&init.body).expect("a JSON body");
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
}
