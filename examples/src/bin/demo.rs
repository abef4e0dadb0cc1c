//! `demo` — the main demo: spawns the `everything` server over stdio and walks the whole method
//! surface, printing each step.
//!
//! ```text
//! cargo run -p mcp-examples --bin demo [-- --runtime tokio|async-std]
//! ```
//!
//! The server is this same binary started with `--serve` (so `cargo run --bin demo` needs no
//! other binary), speaking MCP on its stdin/stdout exactly like `everything`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_service::client::ToolStreamItem;
use mcp_service::schema::{
    CallToolResult, Content, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingLevel, ResourceContents, Root,
};
use mcp_service::{Client, ClientOptions, Error, RequestContext};
use serde_json::json;

fn step(title: &str) {
    println!("\n\x1b[1m▶ {title}\x1b[0m");
}

fn show(label: &str, value: impl std::fmt::Display) {
    println!("  {label:<22} {value}");
}

fn summary(r: &CallToolResult) -> String {
    let parts: Vec<String> = r
        .content
        .iter()
        .map(|c| match c {
            Content::Text(t) => format!("text {:?}", t.text),
            Content::Image(i) => format!("image {} ({} base64 chars)", i.mime_type, i.data.len()),
            Content::Audio(a) => format!("audio {} ({} base64 chars)", a.mime_type, a.data.len()),
            other => format!("{}", serde_json::to_string(other).unwrap_or_default()),
        })
        .collect();
    format!("{}{}", if r.is_error == Some(true) { "ERROR " } else { "" }, parts.join(", "))
}

fn options() -> ClientOptions {
    ClientOptions::new("mcp-demo", env!("CARGO_PKG_VERSION"))
        .sampling(|p: CreateMessageRequestParams, _cx: RequestContext| async move {
            let prompt = serde_json::to_string(&p.messages).unwrap_or_default();
            println!("  \x1b[2m(demo answers sampling/createMessage for {prompt})\x1b[0m");
            Ok::<CreateMessageResult, Error>(
                serde_json::from_value(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "The capital of France is Paris."},
                    "model": "demo-model",
                    "stopReason": "endTurn"
                }))
                .expect("valid sampling result"),
            )
        })
        .elicitation(|p: ElicitRequestParams, _cx: RequestContext| async move {
            println!("  \x1b[2m(demo answers elicitation/create: {})\x1b[0m", serde_json::to_string(&p).unwrap_or_default());
            Ok::<ElicitResult, Error>(
                serde_json::from_value(json!({
                    "action": "accept",
                    "content": {"username": "ada", "email": "ada@example.com"}
                }))
                .expect("valid elicitation result"),
            )
        })
        .roots(vec![serde_json::from_value::<Root>(json!({"uri": "file:///workspace", "name": "workspace"})).expect("root")])
}

async fn walk(client: &Client) -> Result<(), Error> {
    step("initialize");
    let info = client.server_info();
    show("protocol version", info.version);
    show("server", info.info.get());
    show("capabilities", info.capabilities.get());

    step("ping");
    client.ping().await?;
    show("ping", "ok");

    step("tools/list");
    let tools = client.list_tools().await?;
    show("tools", format!("{} tools", tools.len()));
    for t in &tools {
        println!("    - {:<36} {}", t.name, t.description.as_deref().unwrap_or(""));
    }

    step("tools/call echo");
    let r = client.call_tool("echo", json!({"text": "hello from the demo"})).await?;
    show("echo", summary(&r));

    step("tools/call slow, with progress");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let r = client
        .call_tool("slow", json!({"steps": 4, "delay_ms": 50}))
        .progress(move |p| {
            println!("    progress {}/{} {}", p.progress, p.total.unwrap_or(0.0), p.message.unwrap_or_default());
            s2.lock().expect("lock").push(p.progress);
        })
        .await?;
    show("slow", summary(&r));

    step("tools/call slow, cancelled after 150 ms (dropping the call sends notifications/cancelled)");
    let call = client.call_tool("slow", json!({"steps": 100, "delay_ms": 50})).into_future();
    match tokio::time::timeout(Duration::from_millis(150), call).await {
        Err(_) => show("slow", "cancelled by the demo"),
        Ok(r) => show("slow", format!("finished anyway: {:?}", r.map(|r| summary(&r)))),
    }
    let r = client
        .call_tool("slow", json!({"steps": 100, "delay_ms": 50}))
        .timeout(mcp_proto::Duration::from_millis(120))
        .await;
    show("slow with a 120 ms timeout", format!("{:?}", r.err().map(|e| e.kind())));

    step("streaming tool");
    let mut stream = client.call_tool_stream("stream", json!({"count": 3, "delay_ms": 30}));
    while let Some(item) = stream.next().await {
        match item {
            ToolStreamItem::Partial(c) => show("partial", c.as_text().unwrap_or("(non-text)")),
            ToolStreamItem::Done(r) => show("final result", summary(&r?)),
            _ => {}
        }
    }

    step("resources");
    for r in client.list_resources().await? {
        println!("    - {:<28} {}", r.uri, r.mime_type.unwrap_or_default());
    }
    for t in client.list_resource_templates().await? {
        println!("    - template {}", t.uri_template);
    }
    for uri in ["test://static-text", "test://template/42/data"] {
        let r = client.read_resource(uri).await?;
        for c in &r.contents {
            match c {
                ResourceContents::Text(t) => show(uri, format!("{:?}", t.text)),
                ResourceContents::Blob(b) => show(uri, format!("{} base64 chars", b.blob.len())),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    step("resources/subscribe, an update, resources/unsubscribe");
    let mut updates = client.subscribe("test://watched-resource").await?;
    show("subscribed", "test://watched-resource");
    let r = client.call_tool("touch_watched", json!({})).await?;
    show("touch_watched", summary(&r));
    match tokio::time::timeout(Duration::from_secs(2), updates.next()).await {
        Ok(Some(u)) => show("update observed", u.uri),
        _ => show("update observed", "NONE (unexpected)"),
    }
    client.unsubscribe("test://watched-resource").await?;
    show("unsubscribed", "test://watched-resource");

    step("prompts");
    for p in client.list_prompts().await? {
        println!("    - {}", p.name);
    }
    let mut args = BTreeMap::new();
    args.insert("arg1".to_owned(), "first".to_owned());
    args.insert("arg2".to_owned(), "second".to_owned());
    let p = client.get_prompt("test_prompt_with_arguments", args).await?;
    for m in &p.messages {
        show("message", m.content.as_text().unwrap_or("(non-text)"));
    }

    step("completion/complete");
    let c = client
        .complete(
            serde_json::from_value(json!({
                "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg1", "value": ""}
            }))
            .map_err(|e| Error::invalid_params(e.to_string()))?,
        )
        .await?;
    show("values", format!("{:?}", c.completion.values));

    step("sampling (the server asks the demo's model)");
    let r = client.call_tool("test_sampling", json!({"prompt": "What is the capital of France?"})).await?;
    show("test_sampling", summary(&r));

    step("elicitation (the server asks the demo's user)");
    let r = client.call_tool("test_elicitation", json!({"message": "Who are you?"})).await?;
    show("test_elicitation", summary(&r));

    step("roots");
    let r = client.call_tool("list_roots", json!({})).await?;
    show("server sees roots", summary(&r));
    client.set_roots(vec![serde_json::from_value(json!({"uri": "file:///other", "name": "other"})).expect("root")])?;
    let r = client.call_tool("list_roots", json!({})).await?;
    show("after set_roots", summary(&r));

    step("logging/setLevel and log messages");
    let mut logs = client.log_messages();
    client.set_logging_level(LoggingLevel::Info).await?;
    let r = client.call_tool("test_tool_with_logging", json!({})).await?;
    show("test_tool_with_logging", summary(&r));
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(100), logs.next()).await {
        show("log", format!("[{:?}] {}", m.level, m.data));
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--serve") {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
        let r = rt.block_on(mcp_tokio::serve_stdio(mcp_examples::everything::server()));
        std::process::exit(i32::from(r.is_err()));
    }
    let runtime = args
        .iter()
        .position(|a| a == "--runtime")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "tokio".into());
    let exe = std::env::current_exe().expect("current exe");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let outcome = rt.block_on(async {
        println!("spawning the `everything` server ({} --serve) over stdio; client on {runtime}", exe.display());
        let result = if runtime == "async-std" {
            // The client on async-std; the demo's own timers still come from tokio.
            let mut cmd = async_process::Command::new(&exe);
            cmd.arg("--serve");
            let child = mcp_async_std::spawn(mcp_async_std::AsyncStdRuntime::new(), cmd, options()).await?;
            let r = walk(child.client()).await;
            step("close");
            let status = child.shutdown(Duration::from_secs(5)).await;
            show("server exited", format!("{status:?}"));
            r
        } else {
            let mut cmd = tokio::process::Command::new(&exe);
            cmd.arg("--serve");
            let child = mcp_tokio::spawn(cmd, options()).await?;
            let r = walk(child.client()).await;
            step("close");
            let status = child.shutdown(Duration::from_secs(5)).await;
            show("server exited", format!("{status:?}"));
            r
        };
        result
    });
    match outcome {
        Ok(()) => println!("\ndone: every step succeeded"),
        Err(e) => {
            eprintln!("\ndemo failed: {e}");
            std::process::exit(1);
        }
    }
}
