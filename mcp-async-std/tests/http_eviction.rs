//! Abandoned sessions never lock clients out, over real HTTP on loopback under async-std and
//! smol: 10 000+ `initialize` requests that are never followed up fill the session cap, yet a
//! legitimate client is served (the least recently used idle session is evicted instead of
//! answering 503); a client whose idle session was evicted gets 404 and initializes again.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use async_io::{Async, Timer};
use bytes::Bytes;
use futures_lite::FutureExt;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_async_std::proto::http::{EndpointConfig, ResponseMode};
use mcp_async_std::proto::session::Discovery;
use mcp_async_std::service::hyper_io::FuturesIo;
use mcp_async_std::service::schema::{CallToolResult, Tool};
use mcp_async_std::service::server::{ToolContext, schema_of};
use mcp_async_std::{ClientOptions, HttpClientOptions, Server};
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
    abandoned_initializes_do_not_lock_a_client_out,
    an_evicted_client_gets_404_and_initializes_again,
);

/// The drivers of `mcp-async-std` (their listeners are `std`'s).
trait AsyncIoDriver: mcp_async_std::Driver<TcpListener = std::net::TcpListener> {}
impl<R: mcp_async_std::Driver<TcpListener = std::net::TcpListener>> AsyncIoDriver for R {}

/// `fut`, failing the test after `secs` seconds (a guard against hangs, not a timing check).
async fn deadline<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    fut.or(async {
        Timer::after(Duration::from_secs(secs)).await;
        panic!("timed out after {secs} s")
    })
    .await
}

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

fn start<R: AsyncIoDriver>(
    rt: &R,
    config: impl FnOnce(EndpointConfig) -> EndpointConfig,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local address");
    let server = server();
    let config = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    let serve_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) = mcp_async_std::serve_http(serve_rt, server, listener, config).await {
            eprintln!("serve_http failed: {e}");
        }
    }));
    addr
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"abandoned","version":"0"}}}"#;

fn post(addr: SocketAddr, sid: Option<&str>, body: &'static str) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", addr.to_string())
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

async fn connect<R: AsyncIoDriver>(
    rt: &R,
    addr: SocketAddr,
) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let stream = Async::<TcpStream>::connect(addr).await.expect("connect");
    let (send, conn) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
        .await
        .expect("HTTP handshake");
    rt.spawn(Box::pin(async move {
        let _ = conn.await;
    }));
    send
}

/// `count` `initialize` requests over `conns` keep-alive connections, never followed up;
/// returns the session ids.
async fn abandon<R: AsyncIoDriver>(
    rt: &R,
    addr: SocketAddr,
    count: usize,
    conns: usize,
) -> Vec<String> {
    let mut lanes = Vec::new();
    for c in 0..conns {
        let n = count / conns + usize::from(c < count % conns);
        let mut send = connect(rt, addr).await;
        lanes.push(async move {
            let mut sids = Vec::with_capacity(n);
            for _ in 0..n {
                send.ready().await.unwrap();
                let r = send.send_request(post(addr, None, INIT)).await.unwrap();
                assert_eq!(r.status(), StatusCode::OK, "an initialize was refused");
                sids.push(r.headers()["mcp-session-id"].to_str().unwrap().to_owned());
                r.into_body().collect().await.unwrap();
            }
            sids
        });
    }
    let mut out = Vec::new();
    for sids in futures_util::future::join_all(lanes).await {
        out.extend(sids);
    }
    out
}

async fn status_of<R: AsyncIoDriver>(rt: &R, addr: SocketAddr, sid: &str) -> StatusCode {
    let mut send = connect(rt, addr).await;
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    send.send_request(post(addr, Some(sid), body))
        .await
        .unwrap()
        .status()
}

async fn whoami(client: &mcp_async_std::Client) -> String {
    let r = client.call_tool("whoami", json!({})).await.unwrap();
    serde_json::to_value(&r).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn abandoned_initializes_do_not_lock_a_client_out<R: AsyncIoDriver>(rt: R) {
    deadline(120, async {
        // The default cap (10 000 sessions), overrun by 10 050 abandoned handshakes.
        let addr = start(&rt, |c| c.response_mode(ResponseMode::Json));
        let sids = abandon(&rt, addr, 10_050, 4).await;
        assert_eq!(sids.len(), 10_050);
        let client = mcp_async_std::connect_http(
            rt.clone(),
            &format!("http://{addr}/mcp"),
            // Sessions are of the handshake era.
            ClientOptions::new("legit", "1.0").discovery(Discovery::Initialize),
            HttpClientOptions::new(),
        )
        .await
        .expect("a legitimate client is served at the cap");
        whoami(&client).await;
        // The oldest abandoned ones went first; the newest are alive.
        assert_eq!(status_of(&rt, addr, &sids[0]).await, StatusCode::NOT_FOUND);
        assert_eq!(
            status_of(&rt, addr, sids.last().unwrap()).await,
            StatusCode::ACCEPTED
        );
    })
    .await
}

async fn an_evicted_client_gets_404_and_initializes_again<R: AsyncIoDriver>(rt: R) {
    deadline(60, async {
        // Handshake and idle expiry alike: eviction goes by last use alone.
        let addr = start(&rt, |c| {
            c.max_sessions(100)
                .handshake_timeout(mcp_async_std::proto::Duration::from_secs(1800))
        });
        let client = mcp_async_std::connect_http(
            rt.clone(),
            &format!("http://{addr}/mcp"),
            ClientOptions::new("legit", "1.0").discovery(Discovery::Initialize),
            HttpClientOptions::new().standalone_stream(false),
        )
        .await
        .unwrap();
        let first = whoami(&client).await;
        // 150 newer sessions: the client's, idle and least recently used, is evicted.
        let sids = abandon(&rt, addr, 150, 2).await;
        assert_eq!(status_of(&rt, addr, &sids[0]).await, StatusCode::NOT_FOUND);
        let second = whoami(&client).await;
        assert_ne!(first, second, "the client runs a new session");
        assert_eq!(whoami(&client).await, second);
    })
    .await
}
