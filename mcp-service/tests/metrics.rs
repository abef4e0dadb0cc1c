//! The `metrics` facade receives request and notification counters and durations.

use mcp_proto::Instant;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{BoxFuture, ByteStream, Client, ClientOptions, Clock, Runtime, Server};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(Clone)]
struct Tokio(Clock);

impl Runtime for Tokio {
    fn now(&self) -> Instant {
        self.0.now()
    }
    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(
            self.0.to_std(deadline),
        )))
    }
    fn spawn(&self, fut: BoxFuture<()>) {
        tokio::spawn(fut);
    }
}

#[tokio::test]
async fn counters_and_histograms() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();

    let server = Server::builder("m", "1")
        .logging()
        .tool(
            Tool::new("t", schema_of(json!({"type":"object"}))),
            |_: serde_json::Value, cx: ToolContext| async move {
                cx.log(mcp_service::schema::LoggingLevel::Info, None, "hello")
                    .await?;
                Ok(CallToolResult::text("ok"))
            },
        )
        .build();
    let rt = Tokio(Clock::new());
    let (a, b) = tokio::io::duplex(4096);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let srt = rt.clone();
    tokio::spawn(async move {
        server
            .serve(srt, ByteStream::new(ar.compat(), aw.compat_write()))
            .await
    });
    let client = Client::connect(
        rt,
        ByteStream::new(br.compat(), bw.compat_write()),
        ClientOptions::default(),
    )
    .await
    .unwrap();
    // A 2026-07-28 server (the default's era here) logs only at a level the request asks for.
    client
        .set_logging_level(mcp_service::schema::LoggingLevel::Info)
        .await
        .unwrap();
    client.call_tool("t", json!({})).await.unwrap();

    let snapshot = snapshotter.snapshot().into_vec();
    let find = |name: &str, labels: &[(&str, &str)]| {
        snapshot.iter().find(|(key, _, _, _)| {
            key.key().name() == name
                && labels
                    .iter()
                    .all(|(k, v)| key.key().labels().any(|l| l.key() == *k && l.value() == *v))
        })
    };
    let inbound = find(
        "mcp_request_total",
        &[
            ("direction", "inbound"),
            ("method", "tools/call"),
            ("status", "ok"),
        ],
    );
    assert!(
        matches!(inbound, Some((_, _, _, DebugValue::Counter(n))) if *n >= 1),
        "{snapshot:?}"
    );
    let outbound = find(
        "mcp_request_total",
        &[
            ("direction", "outbound"),
            ("method", "tools/call"),
            ("status", "ok"),
        ],
    );
    assert!(matches!(outbound, Some((_, _, _, DebugValue::Counter(n))) if *n >= 1));
    let hist = find(
        "mcp_request_duration_ms",
        &[("direction", "inbound"), ("method", "tools/call")],
    );
    assert!(matches!(hist, Some((_, _, _, DebugValue::Histogram(v))) if !v.is_empty()));
    let notes = find(
        "mcp_notification_total",
        &[("method", "notifications/message")],
    );
    assert!(notes.is_some(), "{snapshot:?}");
}
