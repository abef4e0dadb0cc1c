//! The full method walk used by the `demo` binary and the integration tests: a client walks
//! every feature of the `everything` server and checks what comes back. Runtime-neutral (its
//! timeouts use `async-io` timers), so it runs under tokio, async-std and smol alike.

use std::collections::BTreeMap;
use std::future::{Future, IntoFuture};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_service::client::ToolStreamItem;
use mcp_service::schema::{
    CallToolResult, Content, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, LoggingLevel, ResourceContents, Root,
};
use mcp_service::{Client, ClientOptions, Error, ErrorKind, RequestContext};
use serde_json::json;

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Prints each step (the demo) or stays quiet (tests).
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

fn fail(msg: String) -> Error {
    Error::new(ErrorKind::Internal, format!("walk check failed: {msg}"))
}

fn expect(ok: bool, what: &str) -> Result<(), Error> {
    if ok {
        Ok(())
    } else {
        Err(fail(what.to_owned()))
    }
}

/// `Some(output)`, or `None` if `d` passed first (the future is dropped).
async fn timeout<T>(d: Duration, fut: impl Future<Output = T>) -> Option<T> {
    futures_lite::future::or(async { Some(fut.await) }, async {
        async_io::Timer::after(d).await;
        None
    })
    .await
}

/// Whether output gets terminal styles: only when it goes to a terminal that is not `dumb` and
/// `NO_COLOR` is unset or empty (<https://no-color.org>).
pub fn use_colour(stdout_is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    stdout_is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
}

/// [`use_colour`] for this process's stdout and environment (decided once).
fn colour() -> bool {
    static COLOUR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *COLOUR.get_or_init(|| {
        use std::io::IsTerminal;
        let var = |name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        use_colour(
            std::io::stdout().is_terminal(),
            var("NO_COLOR").as_deref(),
            var("TERM").as_deref(),
        )
    })
}

/// `text` in bold (SGR 1) when [`colour`] says so.
fn bold(text: &str) -> String {
    if colour() {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// `text` dimmed (SGR 2) when [`colour`] says so.
fn dim(text: &str) -> String {
    if colour() {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// Prints a step's heading (bold on a terminal), when verbose.
pub fn step(title: &str) {
    if verbose() {
        println!("\n{}", bold(&format!("▶ {title}")));
    }
}

/// Prints a labelled value of a step, when verbose.
pub fn show(label: &str, value: impl std::fmt::Display) {
    if verbose() {
        println!("  {label:<22} {value}");
    }
}

fn summary(r: &CallToolResult) -> String {
    let parts: Vec<String> = r
        .content
        .iter()
        .map(|c| match c {
            Content::Text(t) => format!("text {:?}", t.text),
            Content::Image(i) => format!("image {} ({} base64 chars)", i.mime_type, i.data.len()),
            Content::Audio(a) => format!("audio {} ({} base64 chars)", a.mime_type, a.data.len()),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect();
    format!(
        "{}{}",
        if r.is_error == Some(true) {
            "ERROR "
        } else {
            ""
        },
        parts.join(", ")
    )
}

/// The client options of the walk: sampling, elicitation and roots handled by the "demo".
pub fn options() -> ClientOptions {
    ClientOptions::new("mcp-demo", env!("CARGO_PKG_VERSION"))
        .sampling(
            |p: CreateMessageRequestParams, _cx: RequestContext| async move {
                let prompt = serde_json::to_string(&p.messages).unwrap_or_default();
                if verbose() {
                    println!(
                        "  {}",
                        dim(&format!(
                            "(demo answers sampling/createMessage for {prompt})"
                        ))
                    );
                }
                Ok::<CreateMessageResult, Error>(
                    serde_json::from_value(json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "The capital of France is Paris."},
                        "model": "demo-model",
                        "stopReason": "endTurn"
                    }))
                    .expect("valid sampling result"),
                )
            },
        )
        .elicitation(|p: ElicitRequestParams, _cx: RequestContext| async move {
            if verbose() {
                println!(
                    "  {}",
                    dim(&format!(
                        "(demo answers elicitation/create: {})",
                        serde_json::to_string(&p).unwrap_or_default()
                    ))
                );
            }
            Ok::<ElicitResult, Error>(
                serde_json::from_value(json!({
                    "action": "accept",
                    "content": {"username": "ada", "email": "ada@example.com"}
                }))
                .expect("valid elicitation result"),
            )
        })
        .roots(vec![
            serde_json::from_value::<Root>(
                json!({"uri": "file:///workspace", "name": "workspace"}),
            )
            .expect("root"),
        ])
}

/// Walks the whole surface; an error names the first check that failed.
pub async fn walk(client: &Client) -> Result<(), Error> {
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
        println!(
            "    - {:<36} {}",
            t.name,
            t.description.as_deref().unwrap_or("")
        );
    }

    step("tools/call echo");
    let r = client
        .call_tool("echo", json!({"text": "hello from the demo"}))
        .await?;
    show("echo", summary(&r));
    expect(
        summary(&r) == "text \"hello from the demo\"",
        "echo returns its text",
    )?;

    step("tools/call slow, with progress");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let r = client
        .call_tool("slow", json!({"steps": 4, "delay_ms": 50}))
        .progress(move |p| {
            println!(
                "    progress {}/{} {}",
                p.progress,
                p.total.unwrap_or(0.0),
                p.message.unwrap_or_default()
            );
            s2.lock().expect("lock").push(p.progress);
        })
        .await?;
    show("slow", summary(&r));
    expect(
        *seen.lock().expect("lock") == vec![1.0, 2.0, 3.0, 4.0],
        "progress 1..4",
    )?;

    step(
        "tools/call slow, cancelled after 150 ms (dropping the call sends notifications/cancelled)",
    );
    let call = client
        .call_tool("slow", json!({"steps": 100, "delay_ms": 50}))
        .into_future();
    match timeout(Duration::from_millis(150), call).await {
        None => show("slow", "cancelled by the demo"),
        Some(r) => {
            return Err(fail(format!(
                "slow finished despite the cancel: {:?}",
                r.map(|r| summary(&r))
            )));
        }
    }
    let r = client
        .call_tool("slow", json!({"steps": 100, "delay_ms": 50}))
        .timeout(mcp_proto::Duration::from_millis(120))
        .await;
    show(
        "slow with a 120 ms timeout",
        format!("{:?}", r.as_ref().err().map(|e| e.kind())),
    );
    expect(
        r.is_err_and(|e| e.kind() == mcp_service::ErrorKind::Timeout),
        "the timed-out call fails with Timeout",
    )?;

    step("streaming tool");
    let mut partials = 0;
    let mut stream = client.call_tool_stream("stream", json!({"count": 3, "delay_ms": 30}));
    while let Some(item) = stream.next().await {
        match item {
            ToolStreamItem::Partial(c) => {
                partials += 1;
                show("partial", c.as_text().unwrap_or("(non-text)"))
            }
            ToolStreamItem::Done(r) => show("final result", summary(&r?)),
            _ => {}
        }
    }

    expect(partials == 3, "three streamed items")?;

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
    match timeout(Duration::from_secs(5), updates.next()).await {
        Some(Some(u)) => show("update observed", u.uri),
        _ => return Err(fail("no resources/updated notification arrived".into())),
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
    let p = client
        .get_prompt("test_prompt_with_arguments", args)
        .await?;
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
    expect(!c.completion.values.is_empty(), "completion values")?;

    step("sampling (the server asks the demo's model)");
    let r = client
        .call_tool(
            "test_sampling",
            json!({"prompt": "What is the capital of France?"}),
        )
        .await?;
    show("test_sampling", summary(&r));
    expect(
        summary(&r).contains("Paris"),
        "the sampling answer reaches the tool",
    )?;

    step("elicitation (the server asks the demo's user)");
    let r = client
        .call_tool("test_elicitation", json!({"message": "Who are you?"}))
        .await?;
    show("test_elicitation", summary(&r));
    expect(
        summary(&r).contains("ada@example.com"),
        "the elicitation answer reaches the tool",
    )?;

    step("roots");
    let r = client.call_tool("list_roots", json!({})).await?;
    show("server sees roots", summary(&r));
    client.set_roots(vec![
        serde_json::from_value(json!({"uri": "file:///other", "name": "other"})).expect("root"),
    ])?;
    let r = client.call_tool("list_roots", json!({})).await?;
    show("after set_roots", summary(&r));
    expect(
        summary(&r).contains("file:///other"),
        "roots/list_changed and the new roots",
    )?;

    step("logging/setLevel and log messages");
    let mut logs = client.log_messages();
    client.set_logging_level(LoggingLevel::Info).await?;
    let r = client
        .call_tool("test_tool_with_logging", json!({}))
        .await?;
    show("test_tool_with_logging", summary(&r));
    let mut count = 0;
    while let Some(Some(m)) = timeout(Duration::from_millis(200), logs.next()).await {
        show("log", format!("[{:?}] {}", m.level, m.data));
        count += 1;
        if count == 3 {
            break;
        }
    }
    expect(count == 3, "three log messages at level info")?;
    Ok(())
}
