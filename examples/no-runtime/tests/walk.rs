//! Our client walks the no-runtime server as a child process, in both eras: the echo tool
//! (checked, with progress), a countdown on the server's timer (its progress, and its
//! cancellation when the call is dropped), the resource (and a missing one, with the era's code), the prompt
//! (and a missing argument), then a clean exit when its stdin closes.
//!
//! `NO_RUNTIME_SERVER` names another command to walk instead of the native binary, split at
//! spaces: CI walks the module built for `wasm32-wasip1` under a WASI runtime that way
//! (`NO_RUNTIME_SERVER="node wasi-run.mjs no-runtime-server.wasm"`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_proto::session::Discovery;
use mcp_proto::{ErrorKind, ProtocolVersion};
use mcp_tokio::{ClientOptions, TokioRuntime};
use serde_json::json;

async fn walk(discovery: Discovery) -> ProtocolVersion {
    let cmd = match std::env::var("NO_RUNTIME_SERVER") {
        Ok(line) => {
            let mut words = line.split_whitespace();
            let mut cmd = std::process::Command::new(words.next().expect("a command"));
            cmd.args(words);
            cmd
        }
        Err(_) => std::process::Command::new(env!("CARGO_BIN_EXE_no-runtime-server")),
    };
    let child = mcp_tokio::spawn(
        TokioRuntime::current(),
        cmd,
        ClientOptions::default().discovery(discovery),
    )
    .await
    .expect("the server starts");
    let client = child.client();
    let version = client.protocol_version();

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "countdown", "jobs"]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let text = format!("héllo {version}");
    let r = client
        .call_tool("echo", json!({ "text": text }))
        .progress(move |p| s2.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some(text.as_str()));
    assert_eq!(*seen.lock().unwrap(), vec![1.0]);
    let bad = client
        .call_tool("echo", json!({ "text": 5 }))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    let e = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);

    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "memo://hello");
    let r = client.read_resource("memo://hello").await.unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(
        r["contents"][0]["text"],
        "Hello from a server with no runtime."
    );
    let e = client.read_resource("memo://nope").await.unwrap_err();
    assert_eq!(e.code(), version.resource_not_found_code());

    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let p = client.get_prompt("greet", args).await.unwrap();
    let p = serde_json::to_value(&p).unwrap();
    assert_eq!(p["messages"][0]["content"]["text"], "Say hello to Ada.");
    let e = client
        .get_prompt("greet", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);

    // Work on the loop's timer: progress at each step, then the answer.
    let steps = Arc::new(Mutex::new(Vec::new()));
    let s2 = steps.clone();
    let r = client
        .call_tool("countdown", json!({ "steps": 3, "interval_ms": 10 }))
        .progress(move |p| s2.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("counted 3 steps"));
    assert_eq!(*steps.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    // A call dropped after its first step is cancelled: the server stops counting.
    let (first_tx, first_rx) = tokio::sync::oneshot::channel();
    let first_tx = Mutex::new(Some(first_tx));
    let long = client
        .call_tool("countdown", json!({ "steps": 10000, "interval_ms": 20 }))
        .progress(move |_| {
            if let Some(tx) = first_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
        });
    tokio::select! {
        _ = long.into_future() => panic!("a 200 s countdown finished"),
        _ = first_rx => {}
    }
    let running =
        |r: mcp_service::schema::CallToolResult| r.content[0].as_text().map(str::to_owned);
    let mut left = None;
    for _ in 0..100 {
        left = running(client.call_tool("jobs", json!({})).await.unwrap());
        if left.as_deref() == Some("0") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        left.as_deref(),
        Some("0"),
        "the cancelled countdown stopped"
    );

    // Closing its stdin ends it, successfully.
    let status = child
        .shutdown_within(std::time::Duration::from_secs(10))
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
    version
}

#[tokio::test]
async fn our_client_walks_it_in_both_eras() {
    assert_eq!(
        walk(Discovery::Initialize).await,
        ProtocolVersion::LATEST_HANDSHAKE
    );
    assert_eq!(
        walk(Discovery::Discover).await,
        ProtocolVersion::V2026_07_28
    );
    assert_eq!(walk(Discovery::Auto).await, ProtocolVersion::V2026_07_28);
}
