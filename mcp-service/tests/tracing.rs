//! `tracing`: one `mcp.request` span per request, each direction, with method, id, outcome and
//! duration; events for connection open/close.

use std::sync::{Arc, Mutex};

use mcp_proto::Instant;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{BoxFuture, ByteStream, Client, ClientOptions, Clock, Runtime, Server};
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

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

#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(u64, String, String)>>>);

struct Fields<'a>(&'a Seen, u64);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .0
            .lock()
            .unwrap()
            .push((self.1, field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .0
            .lock()
            .unwrap()
            .push((self.1, field.name().to_owned(), value.to_owned()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() == "mcp.request" {
            attrs.record(&mut Fields(self, id.into_u64()));
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        values.record(&mut Fields(self, id.into_u64()));
    }
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        event.record(&mut Fields(self, 0));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn request_spans_carry_method_direction_outcome_and_duration() {
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry().with(seen.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = Server::builder("t", "1")
        .tool(
            Tool::new("echo", schema_of(json!({"type":"object"}))),
            |_: serde_json::Value, _cx: ToolContext| async { Ok(CallToolResult::text("x")) },
        )
        .build();
    let rt = Tokio(Clock::new());
    let (a, b) = tokio::io::duplex(4096);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let srt = rt.clone();
    let serving = tokio::spawn(async move {
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
    client.call_tool("echo", json!({})).await.unwrap();
    // A W3C trace context in `_meta` is recorded on the server's span of the request.
    let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    client
        .peer()
        .request_with(
            "tools/call",
            &json!({"name": "echo", "arguments": {}, "_meta": {"traceparent": tp}}),
        )
        .await
        .unwrap();
    client.close();
    drop(client);
    let _ = serving.await;

    let seen = seen.0.lock().unwrap().clone();
    let span_with = |key: &str, value: &str| -> Vec<u64> {
        seen.iter()
            .filter(|(id, k, v)| *id != 0 && k == key && v == value)
            .map(|(id, _, _)| *id)
            .collect()
    };
    let traced = span_with(
        "traceparent",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    );
    assert_eq!(
        traced.len(),
        1,
        "the server's span of the traced call: {seen:?}"
    );
    let calls = span_with("method", "tools/call");
    assert_eq!(calls.len(), 4, "one span per side and call: {seen:?}");
    for id in calls {
        let fields: Vec<&(u64, String, String)> =
            seen.iter().filter(|(i, _, _)| *i == id).collect();
        assert!(
            fields.iter().any(|(_, k, v)| k == "outcome" && v == "ok"),
            "{fields:?}"
        );
        assert!(fields.iter().any(|(_, k, _)| k == "duration_ms"));
        assert!(fields.iter().any(|(_, k, _)| k == "id"));
    }
    assert_eq!(span_with("direction", "inbound").len(), 2);
    assert_eq!(span_with("direction", "outbound").len(), 2);
    assert!(
        seen.iter()
            .any(|(_, k, v)| k == "message" && v.contains("connection opened"))
    );
    assert!(
        seen.iter()
            .any(|(_, k, v)| k == "message" && v.contains("connection closed"))
    );
}
