//! Floods in each direction stay bounded: an application that never drains its notification
//! streams holds a fixed number of them (the oldest dropped and counted), and a peer that
//! sends requests without ever reading the answers is stopped from sending at a bounded amount
//! of buffered output. Deterministic, on the [`Sim`] runtime.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_io::AsyncWrite;
use mcp_service::memory::duplex;
use mcp_service::notifications::DEFAULT_CAPACITY;
use mcp_service::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

const FLOOD: usize = 100_000;

#[test]
fn notifications_the_application_never_reads_stay_bounded() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let server = Server::builder("flood", "1")
        .logging()
        .tool(
            Tool::new("shout", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                for i in 0..FLOOD {
                    cx.log(LoggingLevel::Info, None, i).await?;
                }
                Ok(CallToolResult::text("done"))
            },
        )
        .build();
    let (client_end, server_end) = duplex(64 * 1024);
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = server.serve(rt2, server_end).await;
        }));
    }
    let rt2 = rt.clone();
    let (notes, logs) = sim
        .block_on(async move {
            let client = Client::connect(rt2, client_end, ClientOptions::default())
                .await
                .unwrap();
            let notes = client.notifications();
            let logs = client.log_messages();
            // A 2026-07-28 server (the default's era here) logs only at a level the request
            // asks for.
            client.set_logging_level(LoggingLevel::Info).await.unwrap();
            client.call_tool("shout", json!({})).await.unwrap();
            (notes, logs)
        })
        .expect("completes");
    for (len, dropped) in [(notes.len(), notes.dropped()), (logs.len(), logs.dropped())] {
        assert_eq!(len, DEFAULT_CAPACITY);
        assert_eq!(dropped as usize, FLOOD - DEFAULT_CAPACITY);
    }
    let mut logs = logs;
    let first = logs.try_next().unwrap();
    assert_eq!(
        first.data,
        json!(FLOOD - DEFAULT_CAPACITY),
        "the oldest are dropped"
    );
}

/// Writes pings for as long as the server takes them, counting how many went in.
struct Pinger {
    writer: Pin<Box<dyn AsyncWrite + Send>>,
    line: Vec<u8>,
    pos: usize,
    sent: Arc<AtomicUsize>,
}

impl Future for Pinger {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            if this.pos == this.line.len() {
                let n = this.sent.fetch_add(1, Ordering::SeqCst);
                if n >= 10 * FLOOD {
                    return Poll::Ready(());
                }
                this.line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"ping\"}}\n")
                    .into_bytes();
                this.pos = 0;
            }
            match this.writer.as_mut().poll_write(cx, &this.line[this.pos..]) {
                Poll::Ready(Ok(n)) if n > 0 => this.pos += n,
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[test]
fn a_peer_that_never_reads_is_stopped_at_bounded_output() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let server = Server::builder("flood", "1").build();
    let (peer_end, server_end) = duplex(64 * 1024);
    let (_reader, writer) = peer_end.into_parts();
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = server.serve(rt2, server_end).await;
        }));
    }
    // `ping` is answered before the handshake; the peer never reads a single answer.
    let sent = Arc::new(AtomicUsize::new(0));
    rt.spawn(Box::pin(Pinger {
        writer,
        line: Vec::new(),
        pos: 0,
        sent: sent.clone(),
    }));
    // Everything runs until it waits: the pinger waits for the server to read, the server
    // waits for its answers to be read.
    assert!(sim.block_on(std::future::pending::<()>()).is_none());
    let taken = sent.load(Ordering::SeqCst);
    assert!(
        taken < 10 * FLOOD,
        "the server stops reading from a peer that does not read ({taken} pings taken)"
    );
    // Each answer is about 40 bytes: what is buffered stays near the engine's 16 MiB bound.
    assert!(taken > 100_000 && taken < 600_000, "{taken} pings taken");
}
