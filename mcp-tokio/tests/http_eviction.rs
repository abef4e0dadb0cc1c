//! Abandoned sessions never lock clients out, over real HTTP on loopback: 10 000+ `initialize`
//! requests that are never followed up fill the session cap, yet a legitimate client is
//! served (the least recently used idle session is evicted instead of answering 503); a
//! client whose idle session was evicted gets 404 and initializes again by itself.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_proto::http::{EndpointConfig, ResponseMode};
use mcp_proto::session::Discovery;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_tokio::{ClientOptions, HttpClientOptions, Server, TokioRuntime};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

fn server() -> Server {
    Server::builder("eviction-test", "1.0")
        .tool(
            Tool::new("whoami", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                Ok(CallToolResult::text(cx.peer().connection_id().to_string()))
            },
        )
        .build()
}

async fn start(config: impl FnOnce(EndpointConfig) -> EndpointConfig) -> (Server, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = server();
    let config = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    tokio::spawn(mcp_tokio::serve_http(
        TokioRuntime::current(),
        server.clone(),
        listener,
        config,
    ));
    (server, port)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"abandoned","version":"0"}}}"#;

fn post(port: u16, sid: Option<&str>, body: &'static str) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25");
    }
    b.body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap()
}

/// `count` `initialize` requests over `conns` keep-alive connections, never followed up;
/// returns the session ids in the order they were made (per connection, interleaved).
async fn abandon(port: u16, count: usize, conns: usize) -> Vec<String> {
    let mut tasks = Vec::new();
    for c in 0..conns {
        let n = count / conns + usize::from(c < count % conns);
        tasks.push(tokio::spawn(async move {
            let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            tokio::spawn(conn);
            let mut sids = Vec::with_capacity(n);
            for _ in 0..n {
                send.ready().await.unwrap();
                let r = send.send_request(post(port, None, INIT)).await.unwrap();
                assert_eq!(r.status(), StatusCode::OK, "an initialize was refused");
                sids.push(r.headers()["mcp-session-id"].to_str().unwrap().to_owned());
                r.into_body().collect().await.unwrap();
            }
            sids
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.extend(t.await.unwrap());
    }
    out
}

async fn status_of(port: u16, sid: &str) -> StatusCode {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    send.send_request(post(port, Some(sid), body))
        .await
        .unwrap()
        .status()
}

async fn whoami(client: &mcp_tokio::Client) -> String {
    let r = client.call_tool("whoami", json!({})).await.unwrap();
    serde_json::to_value(&r).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_initializes_do_not_lock_a_client_out() {
    tokio::time::timeout(Duration::from_secs(120), async {
        // The default cap (10 000 sessions), overrun by 10 050 abandoned handshakes.
        let (_server, port) = start(|c| c.response_mode(ResponseMode::Json)).await;
        let sids = abandon(port, 10_050, 4).await;
        assert_eq!(sids.len(), 10_050);
        let client = mcp_tokio::connect_http(
            TokioRuntime::current(),
            &format!("http://127.0.0.1:{port}/mcp"),
            // Sessions are of the handshake era.
            ClientOptions::new("legit", "1.0").discovery(Discovery::Initialize),
            HttpClientOptions::new(),
        )
        .await
        .expect("a legitimate client is served at the cap");
        whoami(&client).await;
        // The oldest abandoned ones went first; the newest are alive.
        assert_eq!(status_of(port, &sids[0]).await, StatusCode::NOT_FOUND);
        assert_eq!(
            status_of(port, sids.last().unwrap()).await,
            StatusCode::ACCEPTED
        );
    })
    .await
    .expect("bounded in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_client_gets_404_and_initializes_again() {
    tokio::time::timeout(Duration::from_secs(60), async {
        // Handshake and idle expiry alike: eviction goes by last use alone.
        let (_server, port) = start(|c| {
            c.max_sessions(100)
                .handshake_timeout(mcp_proto::Duration::from_secs(1800))
        })
        .await;
        let client = mcp_tokio::connect_http(
            TokioRuntime::current(),
            &format!("http://127.0.0.1:{port}/mcp"),
            // Sessions are of the handshake era.
            ClientOptions::new("legit", "1.0").discovery(Discovery::Initialize),
            HttpClientOptions::new().standalone_stream(false),
        )
        .await
        .unwrap();
        let first = whoami(&client).await;
        // 150 newer sessions: the client's, idle and least recently used, is evicted.
        let sids = abandon(port, 150, 2).await;
        assert_eq!(status_of(port, &sids[0]).await, StatusCode::NOT_FOUND);
        let second = whoami(&client).await;
        assert_ne!(first, second, "the client runs a new session");
        assert_eq!(whoami(&client).await, second);
    })
    .await
    .expect("bounded in time");
}
