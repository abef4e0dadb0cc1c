//! CORS through the real hyper server: a browser's preflight, then its calls from an allowed
//! origin in both eras (the handshake era's SSE replies and the 2026-07-28 era's replies whose
//! head waits for the answer), each carrying the CORS headers; a refused origin gets 403 and
//! none.

use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use mcp_proto::http::{AllowList, Cors, EndpointConfig};
use mcp_tokio::Server;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use serde::Deserialize;
use serde_json::json;
use tokio::net::TcpListener;

#[path = "support/http.rs"]
mod http_support;
use http_support::{body_text, send};

const PAGE: &str = "http://localhost:5173";

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

async fn start() -> u16 {
    let server = Server::builder("http-cors", "1.0")
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
        .build();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .allowed_origins(AllowList::Only(vec![PAGE.into()]))
        .cors(Some(Cors::new()));
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server,
        listener,
        config,
    ));
    port
}

fn header<'a>(r: &'a Response<Incoming>, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

fn post(port: u16, origin: &str) -> hyper::http::request::Builder {
    Request::post("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("origin", origin)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

/// The headers every reply to the page carries.
fn assert_cors(r: &Response<Incoming>, what: &str) {
    assert_eq!(
        header(r, "access-control-allow-origin"),
        Some(PAGE),
        "{what}"
    );
    assert_eq!(
        header(r, "access-control-expose-headers"),
        Some("Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"),
        "{what}"
    );
    assert_eq!(header(r, "vary"), Some("Origin"), "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_from_an_allowed_origin_preflights_and_calls_in_both_eras() {
    let port = start().await;

    let preflight = Request::options("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("origin", PAGE)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,mcp-method,mcp-name,mcp-protocol-version,mcp-session-id",
        )
        .body(Full::default())
        .unwrap();
    let r = send(port, preflight).await;
    assert_eq!(r.status(), 204);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(PAGE));
    assert_eq!(
        header(&r, "access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    assert_eq!(
        header(&r, "access-control-allow-headers"),
        Some("content-type, mcp-method, mcp-name, mcp-protocol-version, mcp-session-id")
    );
    assert_eq!(header(&r, "access-control-max-age"), Some("7200"));
    assert_eq!(header(&r, "vary"), Some("Origin"));

    // The handshake era: initialize (an SSE reply), then a call in the session.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"page","version":"1"}}});
    let r = send(
        port,
        post(port, PAGE).body(Full::from(init.to_string())).unwrap(),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_cors(&r, "initialize");
    let sid = header(&r, "mcp-session-id").unwrap().to_owned();
    assert!(body_text(r).await.contains("2025-11-25"));
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = send(
        port,
        post(port, PAGE)
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::from(note))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status(), 202);
    assert_cors(&r, "initialized");
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"across origins"}}});
    let r = send(
        port,
        post(port, PAGE)
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::from(call.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_cors(&r, "tools/call");
    assert!(body_text(r).await.contains("across origins"));

    // The 2026-07-28 era: no session, the reply's head waits for the answer.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"echo","arguments":{"text":"stateless across origins"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{}}}});
    let r = send(
        port,
        post(port, PAGE)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(Full::from(call.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_cors(&r, "a 2026-07-28 tools/call");
    assert!(body_text(r).await.contains("stateless across origins"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_from_another_origin_gets_403_without_cors_headers() {
    let port = start().await;
    for origin in ["http://127.0.0.1:5173", "http://localhost:5174"] {
        let preflight = Request::options("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .body(Full::default())
            .unwrap();
        let r = send(port, preflight).await;
        assert_eq!(r.status(), 403, "{origin}");
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let r2 = send(port, post(port, origin).body(Full::from(ping)).unwrap()).await;
        assert_eq!(r2.status(), 403, "{origin}");
        for r in [&r, &r2] {
            let cors: Vec<_> = r
                .headers()
                .keys()
                .filter(|k| k.as_str().starts_with("access-control-"))
                .collect();
            assert!(cors.is_empty(), "{origin}: {cors:?}");
        }
    }
}
