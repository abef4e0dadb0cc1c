//! Handlers that are not `Send` (`LocalHandlers`), run by tokio's `LocalSet`: state in `Rc`s,
//! futures that hold them across awaits, several calls at once, cancellation, progress, the
//! runner gone, and a `#[router(local)]` block.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::Duration;

use futures_util::FutureExt;
use mcp_tokio::service::schema::{
    CompleteRequestParams, Completion, GetPromptResult, Prompt, PromptMessage, ResourceContents,
    ResourceTemplate, Tool,
};
use mcp_tokio::service::server::{
    LocalHandlers, LocalRoutes, LocalRunner, PromptContext, ResourceContext, ToolContext, schema_of,
};
use mcp_tokio::service::{ErrorKind, Progress};
use mcp_tokio::{Server, TokioRuntime, prompt, router, tool};
use serde_json::json;

#[derive(serde::Deserialize)]
struct Text {
    text: String,
}

/// A value that is not `Send`, kept across an await by every handler below.
type Notes = Rc<RefCell<Vec<String>>>;

fn tool(name: &str) -> Tool {
    Tool::new(name, schema_of(json!({"type": "object"})))
}

/// The notes server's local handlers: a tool, a template, a prompt and completion, each
/// holding an `Rc` across a yield.
fn notes_handlers(notes: &Notes) -> (LocalRoutes, LocalRunner) {
    LocalHandlers::new()
        .tool(tool("add"), {
            let notes = notes.clone();
            move |t: Text, cx: ToolContext| {
                let notes = notes.clone();
                async move {
                    tokio::task::yield_now().await;
                    cx.progress(1.0, Some(2.0), Some("storing")).await?;
                    notes.borrow_mut().push(t.text);
                    tokio::task::yield_now().await;
                    Ok(format!("{} notes", notes.borrow().len()))
                }
            }
        })
        .resource_template(ResourceTemplate::new("note://{n}", "note"), {
            let notes = notes.clone();
            move |uri: String, vars: HashMap<String, String>, _cx: ResourceContext| {
                let notes = notes.clone();
                async move {
                    tokio::task::yield_now().await;
                    let n: usize = vars["n"]
                        .parse()
                        .map_err(|_| mcp_tokio::Error::not_found("bad"))?;
                    match notes.borrow().get(n) {
                        Some(text) => Ok(vec![ResourceContents::text(uri, text.clone())]),
                        None => Err(mcp_tokio::Error::not_found("no such note")),
                    }
                }
            }
        })
        .prompt(Prompt::new("recap"), {
            let notes = notes.clone();
            move |_args: BTreeMap<String, String>, _cx: PromptContext| {
                let notes = notes.clone();
                async move {
                    tokio::task::yield_now().await;
                    let all = notes.borrow().join(", ");
                    Ok(GetPromptResult::new(vec![PromptMessage::user(format!(
                        "Recap: {all}"
                    ))]))
                }
            }
        })
        .completion({
            let notes = notes.clone();
            move |params: CompleteRequestParams, _cx| {
                let notes = notes.clone();
                async move {
                    tokio::task::yield_now().await;
                    let values: Vec<String> = notes
                        .borrow()
                        .iter()
                        .filter(|n| n.starts_with(&params.argument.value))
                        .cloned()
                        .collect();
                    Ok(Completion {
                        total: Some(values.len() as u64),
                        values,
                        has_more: Some(false),
                    })
                }
            }
        })
        .split()
}

#[tokio::test]
async fn local_handlers_serve_every_kind_on_a_local_set() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let notes: Notes = Rc::default();
            let (routes, runner) = notes_handlers(&notes);
            let server = Server::builder("notes", "1.0")
                .local(routes)
                .try_build()
                .unwrap();
            let runner = tokio::task::spawn_local(runner.run());
            let client = server.test_client(TokioRuntime::current()).await.unwrap();

            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let progress = seen.clone();
            let added = client
                .call_tool("add", json!({"text": "milk"}))
                .progress(move |p: Progress| progress.lock().unwrap().push(p.progress))
                .await
                .unwrap();
            assert_eq!(added.content[0].as_text(), Some("1 notes"));
            assert_eq!(*seen.lock().unwrap(), vec![1.0]);
            client
                .call_tool("add", json!({"text": "eggs"}))
                .await
                .unwrap();
            assert_eq!(notes.borrow().as_slice(), ["milk", "eggs"]);

            // Arguments that do not decode are refused before the hand-over, as on any tool.
            let bad = client.call_tool("add", json!({"txt": 1})).await.unwrap();
            assert_eq!(bad.is_error, Some(true));

            let read = client.read_resource("note://1").await.unwrap();
            assert_eq!(read.contents[0].as_text(), Some("eggs"));
            let missing = client.read_resource("note://7").await.unwrap_err();
            assert_eq!(missing.kind(), ErrorKind::NotFound);

            let recap = client.get_prompt("recap", BTreeMap::new()).await.unwrap();
            assert_eq!(
                recap.messages[0].content.as_text(),
                Some("Recap: milk, eggs")
            );

            let peer = client.peer();
            assert!(
                ["tools", "resources", "prompts", "completions"]
                    .iter()
                    .all(|c| peer.has_capability(c))
            );

            // The server gone, the runner finishes on its own.
            drop(client);
            drop(server);
            tokio::time::timeout(Duration::from_secs(10), runner)
                .await
                .expect("the runner ends once the server is dropped")
                .unwrap();
        })
        .await;
}

/// Says it is dropped.
struct Dropped(Rc<Cell<bool>>);
impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[tokio::test]
async fn local_handlers_run_side_by_side_and_are_dropped_on_cancel() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            // `wait` parks until `release` fires the local channel it left behind.
            let gate: Rc<RefCell<Option<futures_channel::oneshot::Sender<()>>>> = Rc::default();
            let dropped = Rc::new(Cell::new(false));
            let (routes, runner) = LocalHandlers::with_concurrency(4)
                .tool(tool("wait"), {
                    let gate = gate.clone();
                    move |_: serde_json::Value, _cx: ToolContext| {
                        let (tx, rx) = futures_channel::oneshot::channel();
                        *gate.borrow_mut() = Some(tx);
                        async move {
                            rx.await.ok();
                            Ok("released".to_string())
                        }
                    }
                })
                .tool(tool("release"), {
                    let gate = gate.clone();
                    move |_: serde_json::Value, _cx: ToolContext| {
                        let tx = gate.borrow_mut().take();
                        async move { Ok(tx.map(|tx| tx.send(())).is_some().to_string()) }
                    }
                })
                .tool(tool("forever"), {
                    let dropped = dropped.clone();
                    move |_: serde_json::Value, cx: ToolContext| {
                        let guard = Dropped(dropped.clone());
                        async move {
                            let _guard = guard;
                            cx.cancelled().await;
                            // Never reached: the future is dropped first.
                            std::future::pending::<()>().await;
                            Ok(String::new())
                        }
                    }
                })
                .split();
            let server = Server::builder("gates", "1.0")
                .local(routes)
                .try_build()
                .unwrap();
            tokio::task::spawn_local(runner.run());
            let client = server.test_client(TokioRuntime::current()).await.unwrap();

            // `wait` is still running on the local thread when `release` runs there.
            let waiting = client.call_tool("wait", json!({})).into_future();
            let mut waiting = Box::pin(waiting);
            while gate.borrow().is_none() {
                assert!((&mut waiting).now_or_never().is_none());
                tokio::task::yield_now().await;
            }
            let released = client.call_tool("release", json!({})).await.unwrap();
            assert_eq!(released.content[0].as_text(), Some("true"));
            let waited = waiting.await.unwrap();
            assert_eq!(waited.content[0].as_text(), Some("released"));

            // A call that times out is cancelled: the local handler's future is dropped.
            let timed_out = client
                .call_tool("forever", json!({}))
                .timeout(Duration::from_millis(200))
                .await
                .unwrap_err();
            assert_eq!(timed_out.kind(), ErrorKind::Timeout);
            tokio::time::timeout(Duration::from_secs(10), async {
                while !dropped.get() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await
            .expect("the cancelled handler's future is dropped");
        })
        .await;
}

#[tokio::test]
async fn a_call_after_the_runner_is_gone_fails_clearly() {
    let (routes, runner) = LocalHandlers::new()
        .tool(
            tool("noop"),
            |_: serde_json::Value, _cx: ToolContext| async { Ok("ran".to_string()) },
        )
        .split();
    drop(runner);
    let server = Server::builder("gone", "1.0")
        .local(routes)
        .try_build()
        .unwrap();
    let client = server.test_client(TokioRuntime::current()).await.unwrap();
    let result = client.call_tool("noop", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().unwrap();
    assert!(text.contains("runner has stopped"), "{text}");
}

/// State that is not `Send`: a counter in a `Cell`, and a log in an `Rc<RefCell<..>>`.
struct Tally {
    count: Cell<u32>,
    log: Rc<RefCell<Vec<String>>>,
}

#[router(local)]
impl Tally {
    /// Adds one and says the total.
    #[tool]
    async fn bump(&self, by: Option<u32>) -> String {
        tokio::task::yield_now().await;
        self.count.set(self.count.get() + by.unwrap_or(1));
        self.log
            .borrow_mut()
            .push(format!("bump {}", self.count.get()));
        self.count.get().to_string()
    }

    /// A summary of what happened.
    #[prompt]
    async fn summary(&self, style: Option<String>) -> String {
        let log = self.log.clone();
        tokio::task::yield_now().await;
        format!("{}: {}", style.unwrap_or_default(), log.borrow().join("; "))
    }
}

/// A free tool, mixed in with the router's.
#[tool]
async fn ping() -> &'static str {
    "pong"
}

#[tokio::test]
async fn a_local_router_registers_methods_on_state_that_is_not_send() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let log = Rc::new(RefCell::new(Vec::new()));
            let (routes, runner) = LocalHandlers::new()
                .router(Tally {
                    count: Cell::new(0),
                    log: log.clone(),
                })
                .split();
            let server = Server::builder("tally", "1.0")
                .local(routes)
                .tool_fn::<ping>()
                .try_build()
                .unwrap();
            tokio::task::spawn_local(runner.run());
            let client = server.test_client(TokioRuntime::current()).await.unwrap();
            let tools = client.list_tools().await.unwrap();
            let bump = tools.iter().find(|t| t.name == "bump").unwrap();
            assert_eq!(
                bump.description.as_deref(),
                Some("Adds one and says the total.")
            );
            assert!(bump.input_schema["properties"]["by"].is_object());
            assert!(tools.iter().any(|t| t.name == "ping"));
            let first = client.call_tool("bump", json!({})).await.unwrap();
            let second = client.call_tool("bump", json!({"by": 5})).await.unwrap();
            assert_eq!(first.content[0].as_text(), Some("1"));
            assert_eq!(second.content[0].as_text(), Some("6"));
            let args = BTreeMap::from([("style".to_string(), "short".to_string())]);
            let summary = client.get_prompt("summary", args).await.unwrap();
            assert_eq!(
                summary.messages[0].content.as_text(),
                Some("short: bump 1; bump 6")
            );
            assert_eq!(log.borrow().len(), 2);
        })
        .await;
}

thread_local! {
    /// State of this thread, which the free local tool below reads.
    static GREETING: RefCell<String> = RefCell::new("hello".into());
}

/// Greets, from this thread's state, holding an `Rc` across an await.
#[tool(local)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    let greeting = Rc::new(GREETING.with(|g| g.borrow().clone()));
    tokio::task::yield_now().await;
    format!("{greeting} {name}")
}

/// A prompt whose future holds an `Rc`.
#[prompt(local)]
async fn welcome(who: String) -> String {
    let who = Rc::new(who);
    tokio::task::yield_now().await;
    format!("welcome, {who}")
}

#[tokio::test]
async fn free_local_tools_and_prompts_register_on_local_handlers() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let (routes, runner) = LocalHandlers::new()
                .tool_fn::<greet>()
                .prompt_fn::<welcome>()
                .split();
            let server = Server::builder("greeter", "1.0")
                .local(routes)
                .try_build()
                .unwrap();
            tokio::task::spawn_local(runner.run());
            let client = server.test_client(TokioRuntime::current()).await.unwrap();
            let tools = client.list_tools().await.unwrap();
            assert_eq!(
                tools[0].description.as_deref(),
                Some("Greets, from this thread's state, holding an `Rc` across an await.")
            );
            let said = client
                .call_tool("greet", json!({"name": "ada"}))
                .await
                .unwrap();
            assert_eq!(said.content[0].as_text(), Some("hello ada"));
            let args = BTreeMap::from([("who".to_string(), "bob".to_string())]);
            let prompt = client.get_prompt("welcome", args).await.unwrap();
            assert_eq!(prompt.messages[0].content.as_text(), Some("welcome, bob"));
        })
        .await;
}
