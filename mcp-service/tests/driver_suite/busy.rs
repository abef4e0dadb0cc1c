//! The busy-handler suite: a busy handler delays only itself. While one tool spins (yielding)
//! or holds its thread with CPU work, other requests on the same connection, other connections
//! and other HTTP sessions are answered, and cancelling the spinner drops it. Written once,
//! generic over the driver; each driver's `tests/busy_handler.rs` includes it and picks the
//! scenarios its runtimes support with [`busy_suite!`] (holding a thread needs a runtime with
//! other threads).
//!
//! Nothing here is timed: a handler run on the engine's task would keep the other answers from
//! ever arriving, and the generous deadlines only turn that hang into a failure.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::{Either, join, select};
use mcp_service::driver::{self, Driver};
use mcp_service::schema::Tool;
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{BoxFuture, Client, ClientOptions, Server};
use serde_json::{Value, json};

/// Instantiates the named scenarios of this suite as `#[test]`s in a module `$module`, each
/// run by `$run(scenario)` (`$run` a function at the crate's root).
#[macro_export]
macro_rules! busy_suite {
    ($module:ident, $run:ident; $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$run(super::busy::$name)
                }
            )*
        }
    };
}

const LIMIT: Duration = Duration::from_secs(20);

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

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.spinner_dropped.store(true, Ordering::SeqCst);
    }
}

/// Releases the blocker when the test ends, passed or failed (a failed test must not leave a
/// runtime thread spinning).
struct Release(Arc<Busy>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release.store(true, Ordering::SeqCst);
    }
}

/// Yields once, waking itself at once. (tokio's `yield_now` defers its wake-up until the
/// worker runs out of work, so a spinner that used it would stall behind the blocker on the
/// same worker: a property of tokio's scheduler, not of the engine under test.)
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `echo`; `spin`, a loop around a yield that never ends; `block`, CPU work that holds its
/// thread without yielding until released.
fn server(busy: &Arc<Busy>) -> Server {
    let spin = busy.clone();
    let block = busy.clone();
    Server::builder("busy", "1.0")
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                Ok(args["text"].as_str().unwrap_or("").to_owned())
            },
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

fn sleep<D: Driver>(rt: &D, d: Duration) -> BoxFuture<()> {
    let micros = u64::try_from(d.as_micros()).unwrap();
    rt.sleep_until(mcp_proto::Instant::from_micros(
        rt.now().as_micros() + micros,
    ))
}

async fn deadline<D: Driver, T>(rt: &D, what: &str, fut: impl Future<Output = T>) -> T {
    match select(std::pin::pin!(fut), sleep(rt, LIMIT)).await {
        Either::Left((out, _)) => out,
        Either::Right(_) => panic!("{what}: nothing within {LIMIT:?}"),
    }
}

/// Waits for a flag the handlers set (they run on other tasks, with nothing to await).
async fn wait_for<D: Driver>(rt: &D, what: &str, flag: impl Fn() -> bool) {
    deadline(rt, what, async {
        while !flag() {
            sleep(rt, Duration::from_millis(5)).await;
        }
    })
    .await
}

async fn echo<D: Driver>(rt: &D, client: &Client, text: &str) {
    let out = deadline(
        rt,
        "echo while another handler is busy",
        client
            .call_tool("echo", json!({ "text": text }))
            .into_future(),
    )
    .await
    .expect("echo succeeds");
    assert_eq!(
        serde_json::to_value(&out).unwrap()["content"][0]["text"],
        text
    );
}

fn released(out: &mcp_service::schema::CallToolResult) {
    assert_eq!(
        serde_json::to_value(out).unwrap()["content"][0]["text"],
        "released"
    );
}

/// A spinning handler shares its thread with the engine on a single-threaded runtime: the
/// connection keeps answering, and cancelling the spinner (dropping its call) drops its future.
pub async fn a_spinning_handler_does_not_stall_its_connection<D: Driver>(rt: D) {
    let busy = Arc::new(Busy::default());
    let client = driver::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let other = driver::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let call = Box::pin(client.call_tool("spin", json!({})).into_future());
    let others = std::pin::pin!(async {
        wait_for(&rt, "the spinner runs", || {
            busy.spins.load(Ordering::Relaxed) > 100
        })
        .await;
        for i in 0..50 {
            echo(&rt, &client, &format!("same connection {i}")).await;
            echo(&rt, &other, &format!("other connection {i}")).await;
        }
    });
    match select(call, others).await {
        // Done: dropping the call cancels the spinner.
        Either::Right(((), call)) => drop(call),
        Either::Left((out, _)) => panic!("the spinner ended: {out:?}"),
    }
    wait_for(
        &rt,
        "cancelling the call drops the spinning handler",
        || busy.spinner_dropped.load(Ordering::SeqCst),
    )
    .await;
    let after = busy.spins.load(Ordering::Relaxed);
    echo(&rt, &client, "after").await;
    assert!(busy.spins.load(Ordering::Relaxed) <= after + 1);
}

/// A handler that holds its thread (CPU work, no yield) delays only itself on a runtime with
/// other threads: its own connection and another one keep being served.
pub async fn a_blocking_handler_delays_only_itself<D: Driver>(rt: D) {
    let busy = Arc::new(Busy::default());
    let _release = Release(busy.clone());
    let client = driver::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let other = driver::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let blocked = client.call_tool("block", json!({})).into_future();
    let others = async {
        wait_for(&rt, "the blocker runs", || {
            busy.blocking.load(Ordering::SeqCst)
        })
        .await;
        for i in 0..20 {
            echo(&rt, &client, &format!("same connection {i}")).await;
            echo(&rt, &other, &format!("other connection {i}")).await;
        }
        busy.release.store(true, Ordering::SeqCst);
    };
    let (out, ()) = deadline(&rt, "the blocker", join(blocked, others)).await;
    released(&out.unwrap());
}

/// Over Streamable HTTP every session shares one engine: a session whose handler spins or
/// blocks leaves the others (and its own further requests) answered.
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub async fn a_busy_http_session_does_not_stall_the_others<D: HttpListen>(rt: D) {
    let busy = Arc::new(Busy::default());
    let _release = Release(busy.clone());
    let url = serve_http(&rt, server(&busy));
    // Sessions are of the handshake era (the default, `Auto`, would speak 2026-07-28).
    let connect = || {
        driver::connect_http(
            rt.clone(),
            &url,
            ClientOptions::default().discovery(mcp_proto::session::Discovery::Initialize),
            mcp_service::HttpClientOptions::default(),
        )
    };
    let first = deadline(&rt, "connect", connect()).await.unwrap();
    let spinning = Box::pin(first.call_tool("spin", json!({})).into_future());
    let blocked = first.call_tool("block", json!({})).into_future();
    let others = async {
        wait_for(&rt, "both busy handlers run", || {
            busy.blocking.load(Ordering::SeqCst) && busy.spins.load(Ordering::Relaxed) > 100
        })
        .await;
        let second = deadline(&rt, "a new session while another is busy", connect())
            .await
            .unwrap();
        for i in 0..20 {
            echo(&rt, &second, &format!("other session {i}")).await;
            echo(&rt, &first, &format!("same session {i}")).await;
        }
        busy.release.store(true, Ordering::SeqCst);
    };
    let both = std::pin::pin!(join(blocked, others));
    match deadline(&rt, "the blocker", select(spinning, both)).await {
        Either::Right(((out, ()), spinning)) => {
            released(&out.unwrap());
            // Dropping the call cancels the spinner.
            drop(spinning);
        }
        Either::Left((out, _)) => panic!("the spinner ended: {out:?}"),
    }
    wait_for(
        &rt,
        "cancelling the call drops the spinning handler",
        || busy.spinner_dropped.load(Ordering::SeqCst),
    )
    .await;
}

/// Over Streamable HTTP in the 2026-07-28 era a request's cancellation is the closing of its
/// reply stream: dropping the call closes its connection, and the server drops the handler.
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub async fn a_dropped_stateless_http_call_cancels_its_handler<D: HttpListen>(rt: D) {
    let busy = Arc::new(Busy::default());
    let url = serve_http(&rt, server(&busy));
    let client = deadline(
        &rt,
        "connect",
        driver::connect_http(
            rt.clone(),
            &url,
            ClientOptions::default().discovery(mcp_proto::session::Discovery::Discover),
            mcp_service::HttpClientOptions::default(),
        ),
    )
    .await
    .unwrap();
    let spinning = Box::pin(client.call_tool("spin", json!({})).into_future());
    let started = async {
        wait_for(&rt, "the spinner runs", || {
            busy.spins.load(Ordering::Relaxed) > 100
        })
        .await;
    };
    match select(spinning, std::pin::pin!(started)).await {
        Either::Right(((), spinning)) => drop(spinning),
        Either::Left((out, _)) => panic!("the spinner ended: {out:?}"),
    }
    wait_for(
        &rt,
        "dropping the stateless call drops the spinning handler",
        || busy.spinner_dropped.load(Ordering::SeqCst),
    )
    .await;
    echo(&rt, &client, "after").await;
}

/// Serves `server` over Streamable HTTP on a loopback port; its endpoint's URL.
#[cfg(all(feature = "http-server", feature = "http-client"))]
fn serve_http<D: HttpListen>(rt: &D, server: Server) -> String {
    let (listener, port) = rt.bind_loopback();
    let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    rt.spawn(Box::pin({
        let rt = rt.clone();
        async move {
            let _ = driver::serve_http(rt, server, listener, config).await;
        }
    }));
    format!("http://127.0.0.1:{port}/mcp")
}

/// A driver whose listener the HTTP scenario can bind.
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub trait HttpListen: Driver {
    /// A listener on 127.0.0.1 and its port.
    fn bind_loopback(&self) -> (Self::TcpListener, u16);
}
