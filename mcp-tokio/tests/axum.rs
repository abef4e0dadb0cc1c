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

/// Who the application's auth middleware says the caller is.
#[derive(Clone, Debug)]
struct User(&'static str);

/// The application's own auth: a bearer token names a user (put into the request's
/// extensions for the handlers), anything else is 401 before MCP sees it.
async fn auth(
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let user = match req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
    {
        Some("Bearer alice-token") => User("alice"),
        Some("Bearer bob-token") => User("bob"),
        _ => {
            return axum::response::IntoResponse::into_response((
                http::StatusCode::UNAUTHORIZED,
                "no valid token",
            ));
        }
    };
    req.extensions_mut().insert(user);
    next.run(req).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_middleware_identity_and_the_http_request_reach_the_handler() {
    let server = Server::builder("axum-auth", "1.0")
        .tool(
            Tool::new("whoami", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let user = cx.extension::<User>().map_or("nobody", |u| u.0);
                let head = cx.http_request().expect("the call came over HTTP");
                let tag = head
                    .headers
                    .get("x-tag")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                Ok(format!("{user} {} {} {tag}", head.method, head.uri.path()))
            },
        )
        .build();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    let app = axum::Router::new()
        .route_service(
            "/mcp",
            McpService::new(TokioRuntime::current(), &server, config),
        )
        .layer(axum::middleware::from_fn(auth));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let init_body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let refused = call(port, "POST", "/mcp", &[], init_body).await;
    assert_eq!(refused.status, 401, "{}", refused.body);

    let alice = [("authorization", "Bearer alice-token")];
    let init = call(port, "POST", "/mcp", &alice, init_body).await;
    assert_eq!(init.status, 200, "{}", init.body);
    let sid = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let with = |token: &'static str, tag: &'static str| {
        [
            ("authorization", token),
            ("MCP-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("x-tag", tag),
        ]
    };
    let initialized = call(
        port,
        "POST",
        "/mcp",
        &with("Bearer alice-token", "n"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(initialized.status, 202);

    let call_body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;
    let text = |reply: &Reply| {
        let msgs = sse_messages(&reply.body);
        assert_eq!(msgs.len(), 1, "{}", reply.body);
        msgs[0]["result"]["content"][0]["text"]
            .as_str()
            .expect("a text result")
            .to_owned()
    };
    let first = call(
        port,
        "POST",
        "/mcp",
        &with("Bearer alice-token", "one"),
        call_body,
    )
    .await;
    assert_eq!(text(&first), "alice POST /mcp one");
    // Each request carries its own HTTP request's identity and head.
    let second = call(
        port,
        "POST",
        "/mcp",
        &with("Bearer bob-token", "two"),
        call_body,
    )
    .await;
    assert_eq!(text(&second), "bob POST /mcp two");
    // A batch-free 2025-11-25 session: the next call again sees only its own head.
    let third = call(
        port,
        "POST",
        "/mcp",
        &with("Bearer alice-token", "three"),
        call_body,
    )
    .await;
    assert_eq!(text(&third), "alice POST /mcp three");
}

#[tokio::test]
async fn no_http_request_in_memory() {
    let server = Server::builder("mem", "1.0")
        .tool(
            Tool::new("head", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                Ok(format!(
                    "{} {}",
                    cx.http_request().is_some(),
                    cx.extension::<User>().is_some()
                ))
            },
        )
        .build();
    let client = server
        .test_client(TokioRuntime::current())
        .await
        .expect("an in-memory client");
    let result = client.call_tool("head", json!({})).await.expect("the call");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "false false"}])
    );
}
