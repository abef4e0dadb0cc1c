//! A busy handler delays only itself on async-std and smol: while one tool spins (yielding) the
//! same connection and another one keep being answered, and cancelling the spinner drops it; on
//! async-std's thread pool a handler holding its thread with CPU work delays only itself too.
//!
//! Nothing is timed: a handler run on its connection's task would keep the other answers from
//! ever arriving, and the generous deadline only turns that hang into a failure.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use async_io::Timer;
use futures_lite::FutureExt;
use mcp_async_std::service::schema::Tool;
use mcp_async_std::service::server::{ToolContext, schema_of};
use mcp_async_std::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

#[derive(Default)]
struct Busy {
    spins: AtomicU64,
    spinner_dropped: AtomicBool,
    blocking: AtomicBool,
    release: AtomicBool,
}

struct DropFlag(Arc<Busy>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.spinner_dropped.store(true, Ordering::SeqCst);
    }
}

/// Releases the blocker when the test ends, passed or failed.
struct Release(Arc<Busy>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release.store(true, Ordering::SeqCst);
    }
}

/// Yields once, waking itself at once.
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

async fn deadline<T>(what: &str, fut: impl Future<Output = T>) -> T {
    fut.or(async {
        Timer::after(Duration::from_secs(20)).await;
        panic!("{what}: no answer in 20 s")
    })
    .await
}

async fn wait_for(flag: impl Fn() -> bool) {
    while !flag() {
        Timer::after(Duration::from_millis(5)).await;
    }
}

async fn echo(client: &Client, text: &str) {
    let out = deadline(
        "echo",
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

async fn spinning(rt: impl Runtime) {
    let busy = Arc::new(Busy::default());
    let client = mcp_async_std::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let other = mcp_async_std::memory_pair(rt.clone(), server(&busy), ClientOptions::default())
        .await
        .unwrap();
    let call = {
        let client = client.clone();
        async move { client.call_tool("spin", json!({})).await }
    };
    let spinner = call.or(async {
        deadline(
            "spinner start",
            wait_for(|| busy.spins.load(Ordering::Relaxed) > 100),
        )
        .await;
        for i in 0..30 {
            echo(&client, &format!("same {i}")).await;
            echo(&other, &format!("other {i}")).await;
        }
        // Done: dropping the call (this branch wins) cancels the spinner.
        Err(mcp_async_std::Error::new(
            mcp_async_std::ErrorKind::Internal,
            "stop",
        ))
    });
    assert!(spinner.await.is_err());
    deadline(
        "spinner dropped",
        wait_for(|| busy.spinner_dropped.load(Ordering::SeqCst)),
    )
    .await;
}

#[test]
fn a_spinning_handler_does_not_stall_its_connection_async_std() {
    async_std::task::block_on(spinning(mcp_async_std::AsyncStdRuntime::new()));
}

#[test]
fn a_spinning_handler_does_not_stall_its_connection_smol() {
    smol::block_on(spinning(mcp_async_std::SmolRuntime::new()));
}

/// async-std runs tasks on a pool of threads: a handler holding one of them delays only itself.
#[test]
fn a_blocking_handler_delays_only_itself_async_std() {
    async_std::task::block_on(async {
        let rt = mcp_async_std::AsyncStdRuntime::new();
        let busy = Arc::new(Busy::default());
        let _release = Release(busy.clone());
        let client = mcp_async_std::memory_pair(rt, server(&busy), ClientOptions::default())
            .await
            .unwrap();
        let blocked = {
            let client = client.clone();
            async_std::task::spawn(async move { client.call_tool("block", json!({})).await })
        };
        deadline(
            "blocker start",
            wait_for(|| busy.blocking.load(Ordering::SeqCst)),
        )
        .await;
        for i in 0..20 {
            echo(&client, &format!("same {i}")).await;
        }
        busy.release.store(true, Ordering::SeqCst);
        let out = deadline("blocker", blocked).await.unwrap();
        assert_eq!(
            serde_json::to_value(&out).unwrap()["content"][0]["text"],
            "released"
        );
    });
}
