//! A busy handler delays only itself: while one tool spins (yielding, or holding its thread with
//! CPU work), other requests on the same connection, other connections and other HTTP sessions
//! are answered, and cancelling the spinner stops it.
//!
//! Nothing here is timed: a handler run on the engine's task would keep the other answers from
//! ever arriving, and the generous timeouts only turn that hang into a failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mcp_proto::http::EndpointConfig;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use mcp_tokio::{ClientOptions, Server, memory_pair};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(20);

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

/// What the busy tools share with the test.
#[derive(Default)]
struct Busy {
    /// Rounds the spinner made.
    spins: AtomicU64,
    /// The spinner's future was dropped (its request was cancelled).
    spinner_dropped: AtomicBool,
    /// The blocker holds its thread until this is set.
    release: AtomicBool,
    /// The blocker started.
    blocking: AtomicBool,
}

struct DropFlag(Arc<Busy>);

/// Releases the blocker when the test ends, passed or failed (a failed test must not leave a
/// runtime thread spinning).
struct Release(Arc<Busy>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release.store(true, Ordering::SeqCst);
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.spinner_dropped.store(true, Ordering::SeqCst);
    }
}

/// `echo`; `spin`, a loop around a yield that never ends; `block`, CPU work that holds its
/// thread without yielding until released.
fn server(busy: Arc<Busy>) -> Server {
    let spin = busy.clone();
    let block = busy;
    Server::builder("busy", "1.0")
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(args.text) },
        )
        .tool(
            Tool::new("spin", schema_of(json!({"type": "object"}))),
            move |_: Value, _cx: ToolContext| {
                let busy = spin.clone();
                async move {
                    let _flag = DropFlag(busy.clone());
                    loop {
                        busy.spins.fetch_add(1, Ordering::Relaxed);
                        YieldNow(false).await;
                    }
                    #[allow(unreachable_code)]
                    Ok(String::new())
                }
            },
        )
        .tool(
            Tool::new("block", schema_of(json!({"type": "object"}))),
            move |_: Value, _cx: ToolContext| {
                let busy = block.clone();
                async move {
                    busy.blocking.store(true, Ordering::SeqCst);
                    while !busy.release.load(Ordering::SeqCst) {
                        std::hint::spin_loop();
                    }
                    Ok("released".to_owned())
                }
            },
        )
        .build()
}

/// Yields once, waking itself at once. (tokio's `yield_now` defers its wake-up until the
/// worker runs out of work, so a spinner that used it would stall behind the blocker on the
/// same worker: a property of tokio's scheduler, not of the engine under test.)
struct YieldNow(bool);

impl std::future::Future for YieldNow {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

async fn wait_for(flag: impl Fn() -> bool) {
    while !flag() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn echo(client: &mcp_tokio::Client, text: &str) {
    let out = timeout(LIMIT, client.call_tool("echo", json!({ "text": text })))
        .await
        .expect("echo answered while another handler is busy")
        .expect("echo succeeds");
    assert_eq!(
        serde_json::to_value(&out).unwrap()["content"][0]["text"],
        text
    );
}

/// On one thread, a spinning handler shares it with the engine: the connection keeps
/// answering, and cancelling the spinner (dropping its call) drops its future.
#[tokio::test(flavor = "current_thread")]
async fn a_spinning_handler_does_not_stall_its_connection() {
    let busy = Arc::new(Busy::default());
    let client = memory_pair(server(busy.clone()), ClientOptions::default())
        .await
        .unwrap();
    let other = memory_pair(server(busy.clone()), ClientOptions::default())
        .await
        .unwrap();
    let spinning = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("spin", json!({})).await })
    };
    timeout(LIMIT, wait_for(|| busy.spins.load(Ordering::Relaxed) > 100))
        .await
        .expect("the spinner runs");
    for i in 0..50 {
        echo(&client, &format!("same connection {i}")).await;
        echo(&other, &format!("other connection {i}")).await;
    }
    assert!(!busy.spinner_dropped.load(Ordering::SeqCst));
    spinning.abort();
    timeout(
        LIMIT,
        wait_for(|| busy.spinner_dropped.load(Ordering::SeqCst)),
    )
    .await
    .expect("cancelling the call drops the spinning handler");
    let after = busy.spins.load(Ordering::Relaxed);
    echo(&client, "after").await;
    assert!(busy.spins.load(Ordering::Relaxed) <= after + 1);
}

/// A handler that holds its thread (CPU work, no yield) delays only itself on a runtime with
/// other threads: its own connection and another one keep being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn a_blocking_handler_delays_only_itself() {
    let busy = Arc::new(Busy::default());
    let _release = Release(busy.clone());
    let client = memory_pair(server(busy.clone()), ClientOptions::default())
        .await
        .unwrap();
    let other = memory_pair(server(busy.clone()), ClientOptions::default())
        .await
        .unwrap();
    let blocked = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("block", json!({})).await })
    };
    timeout(LIMIT, wait_for(|| busy.blocking.load(Ordering::SeqCst)))
        .await
        .expect("the blocker runs");
    for i in 0..20 {
        echo(&client, &format!("same connection {i}")).await;
        echo(&other, &format!("other connection {i}")).await;
    }
    busy.release.store(true, Ordering::SeqCst);
    let out = timeout(LIMIT, blocked).await.unwrap().unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&out).unwrap()["content"][0]["text"],
        "released"
    );
}

/// Over Streamable HTTP every session shares one engine: a session whose handler spins or
/// blocks leaves the others (and its own further requests) answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn a_busy_http_session_does_not_stall_the_others() {
    let busy = Arc::new(Busy::default());
    let _release = Release(busy.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = server(busy.clone());
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    tokio::spawn(mcp_tokio::serve_http(server, listener, config));
    let connect = || {
        mcp_tokio::connect_http(
            &url,
            ClientOptions::default(),
            mcp_tokio::HttpClientOptions::default(),
        )
    };
    let first = timeout(LIMIT, connect()).await.unwrap().unwrap();
    let spinning = {
        let first = first.clone();
        tokio::spawn(async move { first.call_tool("spin", json!({})).await })
    };
    let blocked = {
        let first = first.clone();
        tokio::spawn(async move { first.call_tool("block", json!({})).await })
    };
    timeout(
        LIMIT,
        wait_for(|| {
            busy.blocking.load(Ordering::SeqCst) && busy.spins.load(Ordering::Relaxed) > 100
        }),
    )
    .await
    .expect("both busy handlers run");
    let second = timeout(LIMIT, connect())
        .await
        .expect("a new session is opened while another one is busy")
        .unwrap();
    for i in 0..20 {
        echo(&second, &format!("other session {i}")).await;
        echo(&first, &format!("same session {i}")).await;
    }
    busy.release.store(true, Ordering::SeqCst);
    timeout(LIMIT, blocked).await.unwrap().unwrap().unwrap();
    spinning.abort();
    timeout(
        LIMIT,
        wait_for(|| busy.spinner_dropped.load(Ordering::SeqCst)),
    )
    .await
    .expect("cancelling the call drops the spinning handler");
}
