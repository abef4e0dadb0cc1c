//! The connection keeps one timer armed no later than the session's next deadline and does not
//! re-arm it for every request: a timer armed for an earlier (finished) request fires early,
//! finds nothing due, and the next deadline is armed then. These tests pin the outcomes.

use mcp_proto::Instant;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{
    BoxFuture, ByteStream, Client, ClientOptions, Clock, ErrorKind, Runtime, Server,
};
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(Clone)]
struct Tokio {
    clock: Clock,
}

impl Runtime for Tokio {
    fn now(&self) -> Instant {
        self.clock.now()
    }
    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        let at = tokio::time::Instant::from_std(self.clock.to_std(deadline));
        Box::pin(tokio::time::sleep_until(at))
    }
    fn spawn(&self, fut: BoxFuture<()>) {
        tokio::spawn(fut);
    }
}

fn server() -> Server {
    let obj = || schema_of(json!({"type": "object"}));
    Server::builder("timers", "1")
        .tool(
            Tool::new("quick", obj()),
            |_: serde_json::Value, _cx: ToolContext| async move { Ok(CallToolResult::text("ok")) },
        )
        .tool(
            Tool::new("hang", obj()),
            |_: serde_json::Value, _cx: ToolContext| async move {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("late"))
            },
        )
        .build()
}

async fn pair() -> Client {
    let rt = Tokio {
        clock: Clock::new(),
    };
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let srt = rt.clone();
    tokio::spawn(async move {
        let _ = server()
            .serve(srt, ByteStream::new(ar.compat(), aw.compat_write()))
            .await;
    });
    Client::connect(
        rt,
        ByteStream::new(br.compat(), bw.compat_write()),
        ClientOptions::new("timers-client", "1"),
    )
    .await
    .expect("handshake")
}

fn text(r: &CallToolResult) -> Option<&str> {
    r.content.first().and_then(|c| c.as_text())
}

/// A later deadline behind a kept, earlier timer still fires.
#[tokio::test]
async fn later_deadline_behind_an_early_timer_times_out() {
    let client = pair().await;
    // Arms the timer for a short deadline; the answer comes first, the timer stays armed.
    let r = client
        .call_tool("quick", json!({}))
        .timeout(mcp_proto::Duration::from_millis(20))
        .await
        .expect("quick answers");
    assert_eq!(text(&r), Some("ok"));
    // A longer deadline: the early timer fires with nothing due, then this one is armed.
    // (The outer bound only turns a missed deadline into a failure instead of a hang.)
    let e = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        client
            .call_tool("hang", json!({}))
            .timeout(mcp_proto::Duration::from_millis(150))
            .into_future(),
    )
    .await
    .expect("the request deadline fired")
    .expect_err("hang never answers");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    // The connection carries on.
    let r = client
        .call_tool("quick", json!({}))
        .await
        .expect("still up");
    assert_eq!(text(&r), Some("ok"));
}

/// An earlier deadline than the armed one re-arms the timer.
#[tokio::test]
async fn earlier_deadline_rearms() {
    let client = pair().await;
    // The default 60 s timeout arms the timer far out.
    let r = client.call_tool("quick", json!({})).await.expect("quick");
    assert_eq!(text(&r), Some("ok"));
    let e = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        client
            .call_tool("hang", json!({}))
            .timeout(mcp_proto::Duration::from_millis(50))
            .into_future(),
    )
    .await
    .expect("the request deadline fired")
    .expect_err("hang never answers");
    assert_eq!(e.kind(), ErrorKind::Timeout);
}

/// Many requests in a row with their own timeouts: every one answered, none timed out early.
#[tokio::test]
async fn back_to_back_requests_keep_their_timeouts() {
    let client = pair().await;
    for i in 0..200u64 {
        let r = client
            .call_tool("quick", json!({}))
            .timeout(mcp_proto::Duration::from_millis(10_000 + i))
            .await
            .expect("quick answers");
        assert_eq!(text(&r), Some("ok"));
    }
}
