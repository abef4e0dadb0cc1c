//! The `macros` example (a one-tool stdio server written with `#[tool]`), spawned and called
//! over stdio like any server.

use std::process::Command;
use std::time::Duration;

use mcp_tokio::{ClientOptions, TokioRuntime};

#[tokio::test]
async fn the_macros_example_serves_its_tool() {
    let cmd = Command::new(env!("CARGO_BIN_EXE_macros"));
    let rt = TokioRuntime::current();
    let client = mcp_tokio::spawn(rt, cmd, ClientOptions::default())
        .await
        .expect("the example starts and answers");
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
    assert_eq!(
        tools[0].description.as_deref(),
        Some("Echoes the text back.")
    );
    let schema = serde_json::Value::Object(tools[0].input_schema.clone());
    assert_eq!(schema["required"], serde_json::json!(["text"]));
    let result = client
        .call_tool("echo", serde_json::json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("hi"));
    let status = client.shutdown_within(Duration::from_secs(5)).await;
    assert!(status.is_ok(), "{status:?}");
}
