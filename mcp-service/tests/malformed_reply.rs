//! A client that answers the server's own request with a malformed error (`"error":"oops"`,
//! an error without a code) fails the waiting handler at once, with a clear error, instead of
//! leaving it blocked until the request's timeout (60 s by default).

use std::time::Duration;

use mcp_proto::Instant;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{BoxFuture, ByteStream, Clock, Runtime, Server};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
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
    Server::builder("malformed", "1")
        .tool(
            Tool::new("roots", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                Ok(CallToolResult::text(match cx.list_roots().await {
                    Ok(_) => String::from("answered"),
                    Err(e) => format!("failed ({:?}): {e}", e.kind()),
                }))
            },
        )
        .build()
}

async fn scenario(reply: &str) -> String {
    let rt = Tokio {
        clock: Clock::new(),
    };
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (ar, aw) = tokio::io::split(a);
    tokio::spawn(async move {
        let _ = server()
            .serve(rt, ByteStream::new(ar.compat(), aw.compat_write()))
            .await;
    });
    let (br, mut bw) = tokio::io::split(b);
    let mut lines = BufReader::new(br).lines();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"roots":{}},
        "clientInfo":{"name":"raw","version":"0"}}});
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"roots","arguments":{}}});
    let script = format!(
        "{init}\n{}\n{call}\n",
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    );
    bw.write_all(script.as_bytes()).await.unwrap();
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server is alive");
        let msg: Value = serde_json::from_str(&line).unwrap();
        if msg["method"] == "roots/list" {
            let answer = reply.replace("ID", &msg["id"].to_string());
            bw.write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
        } else if msg["id"] == 2 {
            return msg["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned();
        }
    }
}

#[tokio::test]
async fn a_malformed_error_reply_fails_the_waiting_handler_at_once() {
    for reply in [
        r#"{"jsonrpc":"2.0","id":ID,"error":"oops"}"#,
        r#"{"jsonrpc":"2.0","id":ID,"error":{"message":"no code"}}"#,
    ] {
        // Far below the 60 s request timeout: a bound against hangs, not a timing check.
        let text = tokio::time::timeout(Duration::from_secs(10), scenario(reply))
            .await
            .expect("the handler is not left waiting for its timeout");
        assert!(
            text.starts_with("failed (ProtocolInvalid)"),
            "{reply}: {text}"
        );
        assert!(text.contains("malformed reply"), "{text}");
    }
}
