//! The full method walk over every local transport and runtime: in-memory, stdio (a spawned
//! `everything` process) and WebSocket, with the client on tokio, async-std and smol.

use std::time::Duration;

use mcp_examples::everything;
use mcp_examples::walk::{options, walk};

const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_in_memory() {
    let client = mcp_tokio::memory_pair(
        mcp_tokio::TokioRuntime::current(),
        everything::server(),
        options(),
    )
    .await
    .unwrap();
    walk(&client).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_stdio() {
    let mut cmd = std::process::Command::new(EVERYTHING);
    cmd.args(["--runtime", "tokio"]);
    let child = mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), cmd, options())
        .await
        .unwrap();
    walk(child.client()).await.unwrap();
    assert!(
        child
            .shutdown_within(Duration::from_secs(5))
            .await
            .unwrap()
            .success()
    );
}

#[test]
fn async_std_in_memory() {
    async_std::task::block_on(async {
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let client = mcp_async_std::memory_pair(rt, everything::server(), options())
            .await
            .unwrap();
        walk(&client).await.unwrap();
    });
}

#[test]
fn async_std_stdio() {
    async_std::task::block_on(async {
        let mut cmd = std::process::Command::new(EVERYTHING);
        cmd.args(["--runtime", "async-std"]);
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
        walk(child.client()).await.unwrap();
        assert!(
            child
                .shutdown_within(Duration::from_secs(5))
                .await
                .unwrap()
                .success()
        );
    });
}

#[test]
fn smol_in_memory() {
    smol::block_on(async {
        let rt = mcp_async_std::SmolRuntime::new();
        let client = mcp_async_std::memory_pair(rt, everything::server(), options())
            .await
            .unwrap();
        walk(&client).await.unwrap();
    });
}

#[test]
fn smol_stdio() {
    smol::block_on(async {
        let mut cmd = std::process::Command::new(EVERYTHING);
        cmd.args(["--runtime", "smol"]);
        let rt = mcp_async_std::SmolRuntime::new();
        let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
        walk(child.client()).await.unwrap();
        assert!(
            child
                .shutdown_within(Duration::from_secs(5))
                .await
                .unwrap()
                .success()
        );
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_ws() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(mcp_tokio::serve_ws(
        mcp_tokio::TokioRuntime::current(),
        everything::server(),
        listener,
    ));
    let client = mcp_tokio::connect_ws(
        mcp_tokio::TokioRuntime::current(),
        &format!("ws://{addr}/ws"),
        options(),
    )
    .await
    .unwrap();
    walk(&client).await.unwrap();
    server.abort();
}

#[test]
fn async_std_ws() {
    async_std::task::block_on(async {
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server =
            async_std::task::spawn(mcp_async_std::serve_ws(rt, everything::server(), listener));
        let client = mcp_async_std::connect_ws(rt, &format!("ws://{addr}/ws"), options())
            .await
            .unwrap();
        walk(&client).await.unwrap();
        drop(server.cancel());
    });
}

#[test]
fn smol_ws() {
    smol::block_on(async {
        let rt = mcp_async_std::SmolRuntime::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = smol::spawn(mcp_async_std::serve_ws(rt, everything::server(), listener));
        let client = mcp_async_std::connect_ws(rt, &format!("ws://{addr}/ws"), options())
            .await
            .unwrap();
        walk(&client).await.unwrap();
        drop(server);
    });
}

/// The `everything` binary serving WebSocket on each runtime (`--transport ws --port 0`), walked
/// by a tokio client at the address it prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_client_ws_process() {
    use tokio::io::AsyncBufReadExt;
    for runtime in ["tokio", "async-std", "smol"] {
        let mut child = tokio::process::Command::new(EVERYTHING)
            .args(["--transport", "ws", "--port", "0", "--runtime", runtime])
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("no address printed")
            .unwrap()
            .unwrap();
        let url = line
            .strip_prefix("everything: serving ")
            .unwrap_or_else(|| panic!("unexpected output {line:?}"));
        assert!(
            url.starts_with("ws://127.0.0.1:") && url.ends_with("/ws"),
            "{url}"
        );
        let client = mcp_tokio::connect_ws(mcp_tokio::TokioRuntime::current(), url, options())
            .await
            .unwrap();
        walk(&client)
            .await
            .unwrap_or_else(|e| panic!("{runtime}: {e}"));
        child.kill().await.unwrap();
    }
}

/// Serves the everything server over Streamable HTTP on a loopback port of the current tokio
/// runtime; returns its `/mcp` URL.
async fn http_server(mode: mcp_proto::http::ResponseMode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = everything::server();
    let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .response_mode(mode);
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server,
        listener,
        config,
    ));
    format!("http://127.0.0.1:{port}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_streamable_http_sse_replies() {
    let url = http_server(mcp_proto::http::ResponseMode::Sse).await;
    let client = mcp_tokio::connect_http(
        mcp_tokio::TokioRuntime::current(),
        &url,
        options(),
        Default::default(),
    )
    .await
    .unwrap();
    walk(&client).await.unwrap();
}

// SSE replies only: with JSON replies, progress and streamed items travel on the standalone
// GET stream while the result comes in the POST's body, on another connection, so the walk's
// "every progress before the result" checks would race (covered in mcp-tokio's tests instead).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_streamable_http_probe() {
    let url = http_server(mcp_proto::http::ResponseMode::Sse).await;
    let client = mcp_tokio::connect_http_auto(
        mcp_tokio::TokioRuntime::current(),
        &url,
        options(),
        Default::default(),
    )
    .await
    .unwrap();
    walk(&client).await.unwrap();
}

/// A tokio runtime on a background thread serving the everything server over Streamable
/// HTTP, for the futures-io clients.
fn background_http_server() -> (tokio::runtime::Runtime, String) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let url = rt.block_on(http_server(mcp_proto::http::ResponseMode::Sse));
    (rt, url)
}

#[test]
fn async_std_streamable_http() {
    let (_server, url) = background_http_server();
    async_std::task::block_on(async {
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let client = mcp_async_std::connect_http(rt, &url, options(), Default::default())
            .await
            .unwrap();
        walk(&client).await.unwrap();
    });
}

#[test]
fn smol_streamable_http() {
    let (_server, url) = background_http_server();
    smol::block_on(async {
        let rt = mcp_async_std::SmolRuntime::new();
        let client = mcp_async_std::connect_http(rt, &url, options(), Default::default())
            .await
            .unwrap();
        walk(&client).await.unwrap();
    });
}

/// Serves the everything server over Streamable HTTP at `/mcp` and legacy HTTP+SSE at `/sse`
/// on the current tokio runtime; returns the base URL.
async fn tokio_legacy_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = everything::server();
    let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .legacy_sse(Some(mcp_proto::http::LegacySse::default()));
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server,
        listener,
        config,
    ));
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_legacy_sse() {
    let base = tokio_legacy_server().await;
    let client = mcp_tokio::connect_sse(
        mcp_tokio::TokioRuntime::current(),
        &format!("{base}/sse"),
        options(),
        Default::default(),
    )
    .await
    .unwrap();
    walk(&client).await.unwrap();
}

/// A futures-io server (async-std or smol runtime) on a loopback port: Streamable HTTP at
/// `/mcp`, legacy SSE at `/sse`. Returns the base URL; the server runs until the test ends.
fn futures_io_server<R: AsyncIoDriver>(rt: R) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = everything::server();
    let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .legacy_sse(Some(mcp_proto::http::LegacySse::default()));
    let on = rt.clone();
    rt.spawn(Box::pin(async move {
        let _ = mcp_async_std::serve_http(on, server, listener, config).await;
    }));
    format!("http://127.0.0.1:{port}")
}

#[test]
fn async_std_server_and_client_over_streamable_http_and_legacy_sse() {
    async_std::task::block_on(async {
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let base = futures_io_server(rt);
        let client =
            mcp_async_std::connect_http(rt, &format!("{base}/mcp"), options(), Default::default())
                .await
                .unwrap();
        walk(&client).await.unwrap();
        let client =
            mcp_async_std::connect_sse(rt, &format!("{base}/sse"), options(), Default::default())
                .await
                .unwrap();
        walk(&client).await.unwrap();
    });
}

#[test]
fn smol_server_and_client_over_streamable_http_and_legacy_sse() {
    smol::block_on(async {
        let rt = mcp_async_std::SmolRuntime::new();
        let base = futures_io_server(rt);
        let client = mcp_async_std::connect_http_auto(
            rt,
            &format!("{base}/mcp"),
            options(),
            Default::default(),
        )
        .await
        .unwrap();
        walk(&client).await.unwrap();
        let client =
            mcp_async_std::connect_sse(rt, &format!("{base}/sse"), options(), Default::default())
                .await
                .unwrap();
        walk(&client).await.unwrap();
    });
}

/// The drivers of `mcp-async-std` (their listeners are `std`'s).
trait AsyncIoDriver: mcp_async_std::Driver<TcpListener = std::net::TcpListener> {}
impl<R: mcp_async_std::Driver<TcpListener = std::net::TcpListener>> AsyncIoDriver for R {}
