//! Servers built with the macros, served in memory through `Server::test_client`: what
//! `tools/list` and `prompts/list` declare, and what calls answer.

use std::collections::BTreeMap;
use std::sync::Mutex;

use mcp_tokio::service::schema::{CallToolResult, PromptMessage};
use mcp_tokio::service::schemars::JsonSchema;
use mcp_tokio::service::server::{HandlerContext, Json, ToolContext};
use mcp_tokio::{Client, Error, ErrorKind, Server, TokioRuntime, prompt, router, tool};
use serde_json::{Value, json};

// ------------------------------------------------------------------------------ free fns

/// Echoes the text back.
#[tool]
async fn echo(
    /// The text to echo.
    text: String,
    /// How many times (once by default).
    times: Option<usize>,
) -> String {
    text.repeat(times.unwrap_or(1))
}

/// Reads a file that is not there.
#[tool(
    name = "read-file",
    title = "Read a file",
    read_only,
    open_world = false
)]
async fn read_file(path: String) -> Result<String, std::io::Error> {
    std::fs::read_to_string(format!("/nonexistent-dir-for-this-test/{path}"))
}

#[derive(Debug)]
struct Exploded;
impl std::fmt::Display for Exploded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the widget exploded")
    }
}
impl std::error::Error for Exploded {}

/// Fails with a boxed error of its own type.
#[tool(destructive)]
async fn explode(_cx: ToolContext) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err(Box::new(Exploded))
}

/// Fails with an `anyhow::Error`.
#[tool(description = "Always fails, with context")]
async fn anyhow_fails(depth: u32) -> anyhow::Result<CallToolResult> {
    Err(anyhow::anyhow!("gave up at depth {depth}"))
}

/// What `add` takes.
#[derive(serde::Deserialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct AddArgs {
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
}

/// A sum.
#[derive(serde::Serialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Sum {
    total: i64,
}

/// Adds two numbers.
#[tool(idempotent)]
async fn add(cx: &ToolContext, #[args] args: AddArgs) -> Result<Json<Sum>, Error> {
    assert!(!cx.is_cancelled());
    Ok(Json(Sum {
        total: args.a + args.b,
    }))
}

/// Greets someone.
#[prompt(title = "Greeting")]
async fn greet(
    /// Who to greet.
    name: String,
    /// How many exclamation marks.
    excitement: Option<u8>,
) -> String {
    format!(
        "Hello, {name}{}",
        "!".repeat(excitement.unwrap_or(0).into())
    )
}

// ------------------------------------------------------------------------- a generic router

/// Where the notes are kept: the only bounds are those the server needs.
trait Store: Send + Sync + 'static {
    fn put(&self, text: String) -> u32;
    fn get(&self, id: u32) -> Option<String>;
}

#[derive(Default)]
struct Memory(Mutex<Vec<String>>);

impl Store for Memory {
    fn put(&self, text: String) -> u32 {
        let mut notes = self.0.lock().unwrap();
        notes.push(text);
        notes.len() as u32
    }
    fn get(&self, id: u32) -> Option<String> {
        let notes = self.0.lock().unwrap();
        notes.get(id.checked_sub(1)? as usize).cloned()
    }
}

struct Notes<S> {
    store: S,
}

#[derive(serde::Serialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Note {
    id: u32,
    text: String,
}

#[derive(serde::Deserialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct ReviewArgs {
    /// The note to review.
    id: String,
    /// The reviewer's focus.
    focus: Option<String>,
}

#[router]
impl<S: Store> Notes<S> {
    /// Keeps a note.
    #[tool]
    async fn add_note(&self, text: String) -> Json<Note> {
        let id = self.store.put(text.clone());
        Json(Note { id, text })
    }

    /// Reads a note.
    #[tool(read_only)]
    async fn note(&self, id: u32) -> Result<Json<Note>, Error> {
        match self.store.get(id) {
            Some(text) => Ok(Json(Note { id, text })),
            None => Err(Error::new(ErrorKind::NotFound, format!("no note {id}"))),
        }
    }

    /// Not a handler: stays an ordinary method.
    fn count(&self) -> usize {
        (1..).take_while(|id| self.store.get(*id).is_some()).count()
    }

    /// Counts the notes.
    #[tool]
    async fn count_notes(&self) -> String {
        self.count().to_string()
    }

    /// The version of the notes format (no state needed).
    #[tool]
    async fn format_version() -> &'static str {
        "1"
    }

    /// Summarizes a note.
    #[prompt]
    async fn summarize(&self, id: u32, _cx: &HandlerContext) -> Result<Vec<PromptMessage>, Error> {
        let text = self
            .store
            .get(id)
            .ok_or_else(|| Error::invalid_params(format!("no note {id}")))?;
        Ok(vec![
            PromptMessage::user(format!("Summarize: {text}")),
            PromptMessage::assistant("Sure."),
        ])
    }

    /// Reviews a note.
    #[prompt(name = "review-note")]
    async fn review(&self, #[args] args: ReviewArgs) -> String {
        format!(
            "Review note {} for {}",
            args.id,
            args.focus.as_deref().unwrap_or("anything")
        )
    }
}

fn server() -> Server {
    Server::builder("macros", "1.0")
        .tool_fn::<echo>()
        .tool_fn::<read_file>()
        .tool_fn::<explode>()
        .tool_fn::<anyhow_fails>()
        .tool_fn::<add>()
        .prompt_fn::<greet>()
        .router(Notes {
            store: Memory::default(),
        })
        .try_build()
        .expect("the macros' registrations are valid")
}

async fn client() -> Client {
    server()
        .test_client(TokioRuntime::current())
        .await
        .expect("connects in memory")
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn text(result: &CallToolResult) -> &str {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or("")
}

fn required(schema: &Value) -> Vec<&str> {
    let mut r: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    r.sort();
    r
}

#[tokio::test]
async fn tools_list_declares_names_descriptions_schemas_and_annotations() {
    let client = client().await;
    let tools = client.list_tools().await.unwrap();
    let by_name: BTreeMap<&str, Value> = tools
        .iter()
        .map(|t| (t.name.as_str(), serde_json::to_value(t).unwrap()))
        .collect();
    let names: Vec<&str> = by_name.keys().copied().collect();
    assert_eq!(
        names,
        [
            "add",
            "add_note",
            "anyhow_fails",
            "count_notes",
            "echo",
            "explode",
            "format_version",
            "note",
            "read-file"
        ]
    );

    let echo = &by_name["echo"];
    assert_eq!(echo["description"], "Echoes the text back.");
    let input = &echo["inputSchema"];
    assert_eq!(input["type"], "object");
    assert!(
        input.get("title").is_none(),
        "no generated type name: {input}"
    );
    assert!(input.get("$schema").is_none());
    assert_eq!(input["properties"]["text"]["type"], "string");
    assert_eq!(
        input["properties"]["text"]["description"],
        "The text to echo."
    );
    assert_eq!(
        input["properties"]["times"]["description"],
        "How many times (once by default)."
    );
    assert_eq!(required(input), ["text"]);
    assert!(echo.get("annotations").is_none());
    assert!(echo.get("outputSchema").is_none());

    let read = &by_name["read-file"];
    assert_eq!(read["title"], "Read a file");
    assert_eq!(read["description"], "Reads a file that is not there.");
    assert_eq!(
        read["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        by_name["explode"]["annotations"],
        json!({"destructiveHint": true})
    );
    assert_eq!(
        by_name["explode"]["inputSchema"]["properties"],
        json!({}),
        "the context is no argument"
    );
    assert_eq!(
        by_name["anyhow_fails"]["description"],
        "Always fails, with context"
    );

    // `#[args]`: the struct's own schema, and `Json<T>` gives the outputSchema.
    let add = &by_name["add"];
    assert_eq!(add["annotations"], json!({"idempotentHint": true}));
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "The first term."
    );
    assert_eq!(required(&add["inputSchema"]), ["a", "b"]);
    assert_eq!(add["outputSchema"]["type"], "object");
    assert_eq!(
        add["outputSchema"]["properties"]["total"]["type"],
        "integer"
    );

    let note = &by_name["note"];
    assert_eq!(note["description"], "Reads a note.");
    assert_eq!(note["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(required(&note["inputSchema"]), ["id"]);
    assert_eq!(note["outputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(
        by_name["count_notes"]["inputSchema"]["properties"],
        json!({})
    );
}

#[tokio::test]
async fn tools_call_results_and_errors() {
    let client = client().await;
    let r = client
        .call_tool("echo", json!({"text": "ab", "times": 2}))
        .await
        .unwrap();
    assert_eq!((text(&r), r.is_error), ("abab", None));
    let r = client
        .call_tool("echo", json!({"text": "ab"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "ab");
    // A missing required argument is the tool's failure (2025-11-25 and later).
    let r = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("text"), "{}", text(&r));

    // An io::Error: the tool's own failure, with the error's message.
    let r = client
        .call_tool("read-file", json!({"path": "x"}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("No such file"), "{}", text(&r));

    // A boxed error of a type of the application's, and an anyhow error.
    let r = client.call_tool("explode", json!({})).await.unwrap();
    assert_eq!((text(&r), r.is_error), ("the widget exploded", Some(true)));
    let r = client
        .call_tool("anyhow_fails", json!({"depth": 3}))
        .await
        .unwrap();
    assert_eq!((text(&r), r.is_error), ("gave up at depth 3", Some(true)));

    // A typed result: structuredContent, and its JSON as text.
    let r = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"total": 5})));
    assert_eq!(
        serde_json::from_str::<Value>(text(&r)).unwrap(),
        json!({"total": 5})
    );

    // The router's state is shared by its tools.
    let r = client
        .call_tool("add_note", json!({"text": "milk"}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"id": 1, "text": "milk"})));
    let r = client.call_tool("note", json!({"id": 1})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"id": 1, "text": "milk"})));
    let r = client.call_tool("count_notes", json!({})).await.unwrap();
    assert_eq!(text(&r), "1");
    let r = client
        .call_tool("format_version", json!(null))
        .await
        .unwrap();
    assert_eq!(text(&r), "1");

    // `Error` of kind NotFound stays a JSON-RPC error.
    let e = client
        .call_tool("note", json!({"id": 9}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert_eq!(e.message(), "no note 9");
}

#[tokio::test]
async fn prompts_list_and_get() {
    let client = client().await;
    let prompts = client.list_prompts().await.unwrap();
    let by_name: BTreeMap<&str, Value> = prompts
        .iter()
        .map(|p| (p.name.as_str(), serde_json::to_value(p).unwrap()))
        .collect();
    assert_eq!(
        by_name.keys().copied().collect::<Vec<_>>(),
        ["greet", "review-note", "summarize"]
    );
    assert_eq!(
        by_name["greet"],
        json!({
            "name": "greet",
            "title": "Greeting",
            "description": "Greets someone.",
            "arguments": [
                {"name": "name", "description": "Who to greet.", "required": true},
                {"name": "excitement", "description": "How many exclamation marks.", "required": false}
            ]
        })
    );
    // From an `#[args]` struct the arguments come in the order of its schema's properties
    // (declaration order, or sorted by name, as serde_json's map is built): compared sorted.
    let mut arguments = by_name["review-note"]["arguments"]
        .as_array()
        .expect("arguments")
        .clone();
    arguments.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    assert_eq!(
        Value::Array(arguments),
        json!([
            {"name": "focus", "description": "The reviewer's focus.", "required": false},
            {"name": "id", "description": "The note to review.", "required": true}
        ])
    );
    assert_eq!(
        by_name["summarize"]["arguments"],
        json!([{"name": "id", "required": true}])
    );

    let r = client
        .get_prompt("greet", args(&[("name", "Ada"), ("excitement", "2")]))
        .await
        .unwrap();
    assert_eq!(r.messages, vec![PromptMessage::user("Hello, Ada!!")]);

    // A missing required argument is refused before the handler runs.
    let e = client.get_prompt("greet", args(&[])).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "{e}");
    assert!(e.message().contains("name"), "{}", e.message());
    // An argument that does not parse.
    let e = client
        .get_prompt("greet", args(&[("name", "Ada"), ("excitement", "lots")]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "{e}");
    assert!(e.message().contains("excitement"), "{}", e.message());

    let r = client
        .get_prompt("review-note", args(&[("id", "4")]))
        .await
        .unwrap();
    assert_eq!(
        r.messages,
        vec![PromptMessage::user("Review note 4 for anything")]
    );

    client
        .call_tool("add_note", json!({"text": "eggs"}))
        .await
        .unwrap();
    let r = client
        .get_prompt("summarize", args(&[("id", "1")]))
        .await
        .unwrap();
    assert_eq!(r.messages.len(), 2);
    assert_eq!(r.messages[0], PromptMessage::user("Summarize: eggs"));
    let e = client
        .get_prompt("summarize", args(&[("id", "7")]))
        .await
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (ErrorKind::InvalidParams, "no note 7")
    );
}

#[test]
fn the_fns_stay_callable() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(echo("x".into(), Some(3))), "xxx");
    assert_eq!(rt.block_on(greet("Bo".into(), None)), "Hello, Bo");
}
