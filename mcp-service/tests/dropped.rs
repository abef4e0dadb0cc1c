//! Dropping a serve or connect future at any point releases what it holds: the server forgets
//! the connection, handlers still running are cancelled, and the other side sees the end.
//! Run on the deterministic [`Sim`] runtime, so each await point is reached the same way every
//! time: the futures are polled `k` times, for every `k` until they finish on their own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use mcp_proto::Duration;
use mcp_service::memory::duplex;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::{Sim, SimRuntime};
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

#[derive(Default)]
struct Seen {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

struct CountDrop(Arc<Seen>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// A server whose `slow` tool waits an hour of virtual time.
fn server(rt: &SimRuntime, seen: &Arc<Seen>) -> Server {
    let rt = rt.clone();
    let seen = seen.clone();
    Server::builder("dropped", "1")
        .tool(
            Tool::new("slow", schema_of(json!({"type": "object"}))),
            move |_: Value, _cx: ToolContext| {
                let rt = rt.clone();
                let seen = seen.clone();
                async move {
                    seen.started.fetch_add(1, Ordering::SeqCst);
                    let _count = CountDrop(seen.clone());
                    let at = rt.now() + Duration::from_secs(3600);
                    rt.sleep_until(at).await;
                    Ok(CallToolResult::text("late"))
                }
            },
        )
        .build()
}

/// Yields to the executor once.
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

/// Polls `fut` `k` times, letting every other task run in between; whether it finished.
async fn poll_times<F: Future>(fut: Pin<&mut F>, k: usize) -> bool {
    let mut fut = fut;
    for _ in 0..k {
        let done = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_ready())).await;
        if done {
            return true;
        }
        for _ in 0..3 {
            YieldNow(false).await;
        }
    }
    false
}

/// Lets every task run until all of them wait (the clock does not move).
fn settle(sim: &Sim) {
    sim.block_on(async {
        for _ in 0..200 {
            YieldNow(false).await;
        }
    });
}

#[test]
fn dropping_a_serve_future_at_any_point_releases_the_connection() {
    let mut reached_call = false;
    for k in 0..200 {
        let sim = Sim::new();
        let rt = sim.runtime();
        let seen = Arc::new(Seen::default());
        let server = server(&rt, &seen);
        let (client_end, server_end) = duplex(64 * 1024);
        let client_done = Arc::new(AtomicBool::new(false));
        {
            let rt2 = rt.clone();
            let client_done = client_done.clone();
            rt.spawn(Box::pin(async move {
                if let Ok(client) = Client::connect(rt2, client_end, ClientOptions::default()).await
                {
                    let _ = client.call_tool("slow", json!({})).await;
                }
                client_done.store(true, Ordering::SeqCst);
            }));
        }
        let mut serve = Box::pin(server.serve(rt.clone(), server_end));
        let finished = sim
            .block_on(poll_times(serve.as_mut(), k))
            .expect("the sim never stalls while polling");
        assert!(
            !finished,
            "the serve future cannot end while its client waits"
        );
        drop(serve);
        assert_eq!(server.connection_count(), 0, "k = {k}");
        settle(&sim);
        let started = seen.started.load(Ordering::SeqCst);
        assert_eq!(
            seen.dropped.load(Ordering::SeqCst),
            started,
            "k = {k}: a running handler is cancelled with its connection"
        );
        assert!(
            client_done.load(Ordering::SeqCst),
            "k = {k}: the client sees the connection end"
        );
        if started > 0 {
            reached_call = true;
            if k > 120 {
                break;
            }
        }
    }
    assert!(reached_call, "the polls reached the running tool call");
}

#[test]
fn dropping_a_connect_future_at_any_point_closes_the_connection() {
    let mut connected_at = None;
    for k in 0..200 {
        let sim = Sim::new();
        let rt = sim.runtime();
        let seen = Arc::new(Seen::default());
        let server = server(&rt, &seen);
        let (client_end, server_end) = duplex(64 * 1024);
        let served = Arc::new(AtomicBool::new(false));
        {
            let server = server.clone();
            let rt2 = rt.clone();
            let served = served.clone();
            rt.spawn(Box::pin(async move {
                let _ = server.serve(rt2, server_end).await;
                served.store(true, Ordering::SeqCst);
            }));
        }
        let mut connect = Box::pin(Client::connect(
            rt.clone(),
            client_end,
            ClientOptions::default(),
        ));
        let finished = sim
            .block_on(poll_times(connect.as_mut(), k))
            .expect("the sim never stalls while polling");
        drop(connect);
        settle(&sim);
        assert!(
            served.load(Ordering::SeqCst),
            "k = {k}: the server's connection ends"
        );
        assert_eq!(server.connection_count(), 0, "k = {k}");
        if finished {
            connected_at = Some(k);
            break;
        }
    }
    assert!(
        connected_at.is_some(),
        "the connect future completes given enough polls"
    );
}

#[test]
fn virtual_time_runs_an_hour_long_tool_instantly_and_exactly() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let seen = Arc::new(Seen::default());
    let server = server(&rt, &seen);
    let (client_end, server_end) = duplex(64 * 1024);
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = server.serve(rt2, server_end).await;
        }));
    }
    let rt2 = rt.clone();
    let out = sim
        .block_on(async move {
            let client = Client::connect(rt2.clone(), client_end, ClientOptions::default())
                .await
                .unwrap();
            let start = rt2.now();
            let r = client
                .call_tool("slow", json!({}))
                .timeout(Duration::from_secs(7200))
                .await
                .unwrap();
            (r, rt2.now() - start)
        })
        .expect("completes");
    assert_eq!(
        serde_json::to_value(&out.0).unwrap()["content"][0]["text"],
        "late"
    );
    assert_eq!(out.1, Duration::from_secs(3600));
    assert_eq!(seen.started.load(Ordering::SeqCst), 1);
}
