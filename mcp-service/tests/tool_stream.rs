//! A streaming tool call whose consumer does not keep up: at most `TOOL_STREAM_BACKLOG` items
//! wait for it, the ones past that are counted as skipped, and the final result still carries
//! everything the server kept. Run on the deterministic [`Sim`] runtime.

use futures_util::StreamExt;
use mcp_proto::Duration;
use mcp_service::client::{TOOL_STREAM_BACKLOG, ToolStreamItem};
use mcp_service::memory::duplex;
use mcp_service::schema::{CallToolResult, Content, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

const ITEMS: usize = TOOL_STREAM_BACKLOG + 200;

fn server() -> Server {
    Server::builder("streams", "1")
        .tool(
            Tool::new("many", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                for i in 0..ITEMS {
                    cx.stream(Content::text(format!("item {i}"))).await?;
                }
                Ok(CallToolResult::text("end"))
            },
        )
        .build()
}

#[test]
fn an_unread_tool_stream_holds_a_bounded_backlog() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server();
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let out = sim.block_on(async move {
        let client = Client::connect(rt.clone(), client_end, ClientOptions::new("c", "1"))
            .await
            .unwrap();
        let mut stream = client.call_tool_stream("many", json!({}));
        // Started, then left unread while the server streams everything.
        let first = stream.next().await;
        assert!(
            matches!(first, Some(ToolStreamItem::Partial(_))),
            "{first:?}"
        );
        rt.sleep_until(rt.now() + Duration::from_secs(5)).await;
        let skipped = stream.skipped();
        let mut partial = vec![first];
        let mut done = None;
        while let Some(item) = stream.next().await {
            match item {
                ToolStreamItem::Done(r) => done = Some(r.unwrap()),
                other => partial.push(Some(other)),
            }
        }
        (partial.len(), skipped, stream.delivered(), done.unwrap())
    });
    let (partial, skipped, delivered, done) = out.expect("the call finished");
    assert_eq!(partial, delivered);
    assert!(
        partial <= TOOL_STREAM_BACKLOG + 2,
        "at most the backlog waited: {partial}"
    );
    assert_eq!(
        partial + skipped,
        ITEMS,
        "every item was delivered or counted"
    );
    assert!(skipped > 0);
    // The result repeats every item (well within the server's retention), then its own.
    assert_eq!(done.content.len(), ITEMS + 1);
    assert_eq!(
        done.content[ITEMS - 1].as_text(),
        Some(&*format!("item {}", ITEMS - 1))
    );
}
