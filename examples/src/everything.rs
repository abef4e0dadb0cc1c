//! The `everything` server: every fixture of the MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16, server scenarios), plus a few tools that show
//! off this crate's extras (`echo`, cancellable `slow`, streaming `stream`, `touch_watched`).
//!
//! The fixtures follow the suite's scenario descriptions word for word (texts, URIs, MIME
//! types, schemas) and, where the suite leaves a detail open, the suite's own TypeScript
//! reference server (`examples/servers/typescript/everything-server.ts` of the conformance
//! repository at tag `v0.1.16`). Deviations from that reference are deliberate and noted on
//! the item: a WAV file that is actually well formed, `username`/`email` fields for
//! `test_elicitation` (as the suite's description asks), and tool errors (`isError`) rather
//! than plain text when the client lacks sampling or elicitation.
//!
//! # Runtime neutrality
//!
//! Handlers that wait (`test_tool_with_logging`, `test_tool_with_progress`, `slow`, `stream`,
//! `test_reconnection`) sleep on [`async_io::Timer`]. `async-io` drives its timers from its
//! own reactor thread when nobody else does, so the same server runs unchanged under tokio,
//! async-std, smol or a bare executor, and `server()` needs no runtime parameter. (The
//! alternative, passing a `sleep` function in, would make every caller write an adapter for
//! something each runtime already agrees on: wall-clock time.)
//!
//! ```no_run
//! let server = mcp_examples::everything::server();
//! // Hand it to a driver, e.g. `server.serve(runtime, byte_stream).await`.
//! # let _ = server;
//! ```

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_service::schema::{
    BlobResourceContents, CallToolResult, CompleteRequestParams, Completion, Content,
    CreateMessageRequestParams, ElicitRequestParams, GetPromptResult, LoggingLevel, Prompt,
    PromptArgument, PromptMessage, Reference, Resource, ResourceContents, ResourceTemplate, Role,
    SamplingMessage, TextResourceContents, Tool,
};
use mcp_service::server::{
    CompleteContext, PromptContext, ResourceContext, ToolContext, schema_of,
};
use mcp_service::{Error, ErrorKind, Server, ServerBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

/// The server's name in `initialize`.
pub const SERVER_NAME: &str = "mcp-everything";

/// A 1×1 red RGBA PNG (70 bytes), base64. The conformance reference server's image.
pub const TEST_IMAGE_PNG_BASE64: &str = concat!(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8Dw",
    "HwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
);

/// A well-formed WAV file (60 bytes), base64: PCM, mono, 16-bit, 8 kHz, eight silent frames.
/// (The reference server's 44-byte WAV announces a 2-byte `data` chunk it does not contain.)
pub const TEST_AUDIO_WAV_BASE64: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// URI of the static text resource.
pub const STATIC_TEXT_URI: &str = "test://static-text";
/// Text of the static text resource.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";
/// URI of the static binary (PNG) resource.
pub const STATIC_BINARY_URI: &str = "test://static-binary";
/// The resource template whose `{id}` the contents echo.
pub const TEMPLATE_URI: &str = "test://template/{id}/data";
/// URI of the subscribable resource; `touch_watched` changes it and notifies subscribers.
pub const WATCHED_URI: &str = "test://watched-resource";
/// The watched resource's text before any `touch_watched`.
pub const WATCHED_TEXT: &str = "Watched resource content";
/// The tool `test_trigger_tool_change` adds, or removes when present.
pub const DYNAMIC_TOOL: &str = "test_dynamic_tool";
/// The prompt `test_trigger_prompt_change` adds, or removes when present.
pub const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";
/// The `SKILL.md` of the skill the server serves (skills extension, SEP-2640).
pub const SKILL_URI: &str = "skill://everything-tour/SKILL.md";

/// The error result of the sampling tool when the client cannot sample.
const NO_SAMPLING: &str = "Sampling not supported: the client has no sampling capability";
/// The error result of the elicitation tools when the client cannot elicit.
const NO_ELICITATION: &str = "Elicitation not supported: the client has no elicitation capability";

/// The error text of `test_error_handling`.
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// The JSON Schema 2020-12 `inputSchema` of `json_schema_2020_12_tool` (SEP-1613, SEP-2106):
/// the suite checks that `$schema`, `$defs` (with an `$anchor`), `additionalProperties`, the
/// composition keywords (`allOf`/`anyOf`) and the conditional ones (`if`/`then`/`else`)
/// survive `tools/list`.
pub fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"]
        },
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

// ------------------------------------------------------------------------------------ helpers

/// A tool with a description (the suite's `tools-list` requires one on every tool).
fn tool(name: &str, description: &str, input_schema: Value) -> Tool {
    Tool::new(name, schema_of(input_schema)).with_description(description)
}

/// A tool without arguments: `{"type":"object","properties":{}}`.
fn no_args(name: &str, description: &str) -> Tool {
    tool(
        name,
        description,
        json!({"type": "object", "properties": {}}),
    )
}

fn text_contents(
    uri: impl Into<String>,
    mime_type: &str,
    text: impl Into<String>,
) -> ResourceContents {
    ResourceContents::Text(TextResourceContents {
        uri: uri.into(),
        mime_type: Some(mime_type.to_owned()),
        text: text.into(),
        meta: None,
    })
}

fn blob_contents(
    uri: impl Into<String>,
    mime_type: &str,
    blob: impl Into<String>,
) -> ResourceContents {
    ResourceContents::Blob(BlobResourceContents {
        uri: uri.into(),
        mime_type: Some(mime_type.to_owned()),
        blob: blob.into(),
        meta: None,
    })
}

fn resource(uri: &str, name: &str, title: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        title: Some(title.to_owned()),
        description: Some(description.to_owned()),
        mime_type: Some(mime_type.to_owned()),
        ..Resource::new(uri, name)
    }
}

fn prompt(name: &str, title: &str, description: &str, arguments: &[(&str, &str)]) -> Prompt {
    let arguments = (!arguments.is_empty()).then(|| {
        arguments
            .iter()
            .map(|(name, description)| PromptArgument {
                description: Some((*description).to_owned()),
                required: Some(true),
                ..PromptArgument::new(*name)
            })
            .collect()
    });
    Prompt {
        title: Some(title.to_owned()),
        description: Some(description.to_owned()),
        arguments,
        ..Prompt::new(name)
    }
}

fn user(content: Content) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

fn messages(messages: Vec<PromptMessage>) -> GetPromptResult {
    GetPromptResult {
        messages,
        ..GetPromptResult::default()
    }
}

/// Sleeps on a runtime-neutral timer.
async fn sleep(ms: u64) {
    async_io::Timer::after(Duration::from_millis(ms)).await;
}

/// Sleeps, or fails with `RequestCancelled` as soon as the client cancels the call. (The
/// server also drops a cancelled handler's future; this makes the handler notice on its own,
/// as work that outlives the future — spawned tasks, blocking threads — would have to.)
async fn sleep_unless_cancelled(cx: &ToolContext, ms: u64) -> Result<(), Error> {
    let cancelled = cx.cancelled();
    futures_lite::future::or(
        async {
            sleep(ms).await;
            Ok(())
        },
        async {
            cancelled.await;
            Err(Error::new(
                ErrorKind::RequestCancelled,
                "cancelled by the client",
            ))
        },
    )
    .await
}

/// Candidates starting with `prefix`.
fn complete_from(candidates: &[&str], prefix: &str) -> Completion {
    let values: Vec<String> = candidates
        .iter()
        .filter(|c| c.starts_with(prefix))
        .map(|c| (*c).to_owned())
        .collect();
    Completion {
        total: Some(values.len() as u64),
        has_more: Some(false),
        values,
    }
}

// -------------------------------------------------------------------------------- arguments

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize)]
struct SamplingArgs {
    prompt: String,
}

#[derive(Deserialize)]
struct ElicitationArgs {
    message: String,
}

fn default_steps() -> u32 {
    10
}

fn default_delay_ms() -> u64 {
    100
}

#[derive(Deserialize)]
struct SlowArgs {
    #[serde(default = "default_steps")]
    steps: u32,
    #[serde(default = "default_delay_ms")]
    delay_ms: u64,
}

fn default_count() -> u32 {
    5
}

fn default_stream_delay_ms() -> u64 {
    20
}

#[derive(Deserialize)]
struct StreamArgs {
    #[serde(default = "default_count")]
    count: u32,
    #[serde(default = "default_stream_delay_ms")]
    delay_ms: u64,
}

/// The watched resource: a revision counter (`touch_watched` bumps it and notifies subscribers
/// through [`ToolContext::server`]).
#[derive(Default)]
struct Watched {
    revision: AtomicU64,
}

impl Watched {
    fn text(&self) -> String {
        match self.revision.load(Ordering::Acquire) {
            0 => WATCHED_TEXT.to_owned(),
            n => format!("{WATCHED_TEXT} (revision {n})"),
        }
    }
}

// --------------------------------------------------------------------------------- the server

/// Builds the `everything` server.
///
/// Tools: `test_simple_text`, `test_image_content`, `test_audio_content`,
/// `test_embedded_resource`, `test_multiple_content_types`, `test_tool_with_logging`,
/// `test_tool_with_progress`, `test_error_handling`, `test_sampling`, `test_elicitation`,
/// `test_elicitation_sep1034_defaults`, `test_elicitation_sep1330_enums`,
/// `json_schema_2020_12_tool`, `test_reconnection`, `test_trigger_tool_change`,
/// `test_trigger_prompt_change` (each toggles [`DYNAMIC_TOOL`] / [`DYNAMIC_PROMPT`]), `echo`,
/// `slow`, `stream`, `touch_watched`.
///
/// Resources: `test://static-text`, `test://static-binary`, `test://watched-resource`
/// (subscribable) and the template `test://template/{id}/data`.
///
/// Prompts: `test_simple_prompt`, `test_prompt_with_arguments`,
/// `test_prompt_with_embedded_resource`, `test_prompt_with_image`.
///
/// Completion: the arguments of `test_prompt_with_arguments` and
/// `test_prompt_with_embedded_resource`, and `{id}` of the template.
///
/// Skills (extension `io.modelcontextprotocol/skills`, with `directoryRead`): [`SKILL_URI`]
/// and its `references/TOOLS.md` and `references/RESOURCES.md`, also listed as resources.
pub fn server() -> Server {
    server_with(|builder| builder)
}

/// Builds the `everything` server, letting `configure` adjust the builder first (telemetry,
/// page size, limits, an authorizer, title, more tools…) before the fixtures are registered.
///
/// # Panics
/// If `configure` registers something under a fixture's name (a duplicate registration).
pub fn server_with(configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    let watched = Arc::new(Watched::default());
    let defaults = Server::builder(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .title("MCP everything server")
        .tasks(mcp_service::tasks::TaskOptions::default())
        // It sends log messages and tells subscribers when `test://watched-resource` changes
        // (`touch_watched`); its tools, resources, prompts and completions declare themselves.
        .logging()
        .resource_subscriptions()
        .instructions(
            "Conformance fixtures for MCP servers: every test_* tool, resource and prompt the \
             MCP conformance suite calls, plus echo, slow (cancellable, with progress), stream \
             (streamed content) and touch_watched (updates test://watched-resource).",
        );
    let mut builder = configure(defaults);
    builder = content_tools(builder);
    builder = behaviour_tools(builder);
    builder = client_request_tools(builder);
    builder = input_required_fixtures(builder);
    builder = task_fixtures(builder);
    builder = extra_tools(builder, &watched);
    builder = list_change_tools(builder);
    builder = resources(builder, &watched);
    builder = prompts(builder);
    builder = completion(builder);
    builder = skills(builder);
    builder.build()
}

/// Tools returning each kind of content (tools.ts: simple text, image, audio, embedded
/// resource, mixed content).
fn content_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            no_args("test_simple_text", "Tests simple text content response"),
            |_: Value, _cx: ToolContext| async {
                Ok(CallToolResult::text(
                    "This is a simple text response for testing.",
                ))
            },
        )
        .tool(
            no_args("test_image_content", "Tests image content response"),
            |_: Value, _cx: ToolContext| async {
                Ok(Content::image(TEST_IMAGE_PNG_BASE64, "image/png"))
            },
        )
        .tool(
            no_args("test_audio_content", "Tests audio content response"),
            |_: Value, _cx: ToolContext| async {
                Ok(Content::audio(TEST_AUDIO_WAV_BASE64, "audio/wav"))
            },
        )
        .tool(
            no_args(
                "test_embedded_resource",
                "Tests embedded resource content response",
            ),
            |_: Value, _cx: ToolContext| async {
                Ok(Content::embedded(text_contents(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )))
            },
        )
        .tool(
            no_args(
                "test_multiple_content_types",
                "Tests response with multiple content types (text, image, resource)",
            ),
            |_: Value, _cx: ToolContext| async {
                Ok(vec![
                    Content::text("Multiple content types test:"),
                    Content::image(TEST_IMAGE_PNG_BASE64, "image/png"),
                    Content::embedded(text_contents(
                        "test://mixed-content-resource",
                        "application/json",
                        json!({"test": "data", "value": 123}).to_string(),
                    )),
                ])
            },
        )
}

/// Tools that log, report progress, fail or wait (tools.ts: logging, progress, error;
/// sse-polling.ts: `test_reconnection`), and the SEP-1613 schema tool.
fn behaviour_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            no_args(
                "test_tool_with_logging",
                "Tests tool that emits log messages during execution",
            ),
            |_: Value, cx: ToolContext| async move {
                cx.log(LoggingLevel::Info, None, "Tool execution started")
                    .await?;
                sleep(50).await;
                cx.log(LoggingLevel::Info, None, "Tool processing data")
                    .await?;
                sleep(50).await;
                cx.log(LoggingLevel::Info, None, "Tool execution completed")
                    .await?;
                Ok(CallToolResult::text(
                    "Tool with logging executed successfully",
                ))
            },
        )
        .tool(
            no_args(
                "test_tool_with_progress",
                "Tests tool that reports progress notifications",
            ),
            |_: Value, cx: ToolContext| async move {
                for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        sleep(50).await;
                    }
                    cx.progress(
                        step,
                        Some(100.0),
                        Some(&format!("Completed step {step} of 100")),
                    )
                    .await?;
                }
                let token = cx.request().progress_token().map(ToString::to_string);
                Ok(CallToolResult::text(match token {
                    Some(t) => {
                        format!("Tool with progress executed successfully (progress token {t})")
                    }
                    None => {
                        "Tool with progress executed successfully (no progress token)".to_owned()
                    }
                }))
            },
        )
        .tool(
            no_args("test_error_handling", "Tests error response handling"),
            // A handler failure becomes a `CallToolResult` with `isError: true` and the message
            // as its only text content.
            |_: Value, _cx: ToolContext| async {
                Err::<CallToolResult, _>(Error::handler_failed(ERROR_TEXT))
            },
        )
        .tool(
            no_args(
                "test_reconnection",
                "Tests SSE stream disconnection and client reconnection (SEP-1699). Over HTTP the \
                 transport decides when to close the stream; this handler only waits briefly.",
            ),
            |_: Value, _cx: ToolContext| async {
                sleep(100).await;
                Ok(CallToolResult::text(
                    "Reconnection test completed successfully. If you received this, the client \
                     properly reconnected after stream closure.",
                ))
            },
        )
        .tool(
            tool(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
                json_schema_2020_12(),
            ),
            |args: Value, _cx: ToolContext| async move {
                Ok(CallToolResult::text(format!(
                    "JSON Schema 2020-12 tool called with: {args}"
                )))
            },
        )
}

/// Tools that ask the client: sampling and elicitation (tools.ts, elicitation-defaults.ts,
/// elicitation-enums.ts).
fn client_request_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool(
                "test_sampling",
                "Tests server-initiated sampling (LLM completion request)",
                json!({
                    "type": "object",
                    "properties": {
                        "prompt": {"type": "string", "description": "The prompt to send to the LLM"}
                    },
                    "required": ["prompt"]
                }),
            ),
            |args: SamplingArgs, cx: ToolContext| async move {
                if !cx.client_has_capability("sampling") {
                    return Ok(CallToolResult::error(NO_SAMPLING));
                }
                let messages = vec![SamplingMessage::user(args.prompt)];
                let request = CreateMessageRequestParams::new(messages, 100);
                match cx.create_message(request).await {
                    Ok(result) => {
                        let text = result
                            .content
                            .blocks()
                            .iter()
                            .find_map(|b| b.as_text())
                            .unwrap_or("No response")
                            .to_owned();
                        Ok(CallToolResult::text(format!("LLM response: {text}")))
                    }
                    Err(e) => Ok(CallToolResult::error(format!("Sampling failed: {e}"))),
                }
            },
        )
        .tool(
            tool(
                "test_elicitation",
                "Tests server-initiated elicitation (user input request)",
                json!({
                    "type": "object",
                    "properties": {
                        "message": {"type": "string", "description": "The message to show the user"}
                    },
                    "required": ["message"]
                }),
            ),
            |args: ElicitationArgs, cx: ToolContext| async move {
                let request = elicit_params(json!({
                    "message": args.message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        },
                        "required": ["username", "email"]
                    }
                }))?;
                elicit(&cx, request, "User response").await
            },
        )
        .tool(
            no_args(
                "test_elicitation_sep1034_defaults",
                "Tests elicitation with default values per SEP-1034",
            ),
            |_: Value, cx: ToolContext| async move {
                let request = elicit_params(json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": {
                                "type": "string",
                                "description": "User name",
                                "default": "John Doe"
                            },
                            "age": {"type": "integer", "description": "User age", "default": 30},
                            "score": {
                                "type": "number",
                                "description": "User score",
                                "default": 95.5
                            },
                            "status": {
                                "type": "string",
                                "description": "User status",
                                "enum": ["active", "inactive", "pending"],
                                "default": "active"
                            },
                            "verified": {
                                "type": "boolean",
                                "description": "Verification status",
                                "default": true
                            }
                        },
                        "required": []
                    }
                }))?;
                elicit(&cx, request, "Elicitation completed").await
            },
        )
        .tool(
            no_args(
                "test_elicitation_sep1330_enums",
                "Tests elicitation with enum schema improvements per SEP-1330",
            ),
            |_: Value, cx: ToolContext| async move {
                let request = elicit_params(json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "untitledSingle": {
                                "type": "string",
                                "description": "Select one option",
                                "enum": ["option1", "option2", "option3"]
                            },
                            "titledSingle": {
                                "type": "string",
                                "description": "Select one option with titles",
                                "oneOf": [
                                    {"const": "value1", "title": "First Option"},
                                    {"const": "value2", "title": "Second Option"},
                                    {"const": "value3", "title": "Third Option"}
                                ]
                            },
                            "legacyEnum": {
                                "type": "string",
                                "description": "Select one option (legacy)",
                                "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"]
                            },
                            "untitledMulti": {
                                "type": "array",
                                "description": "Select multiple options",
                                "minItems": 1,
                                "maxItems": 3,
                                "items": {
                                    "type": "string",
                                    "enum": ["option1", "option2", "option3"]
                                }
                            },
                            "titledMulti": {
                                "type": "array",
                                "description": "Select multiple options with titles",
                                "minItems": 1,
                                "maxItems": 3,
                                "items": {
                                    "anyOf": [
                                        {"const": "value1", "title": "First Choice"},
                                        {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}
                                    ]
                                }
                            }
                        },
                        "required": []
                    }
                }))?;
                elicit(&cx, request, "Elicitation completed").await
            },
        )
}

/// A tool that may (`Optional`) or must (`Required`) run as a task.
fn task_tool(
    name: &str,
    description: &str,
    schema: Value,
    support: mcp_service::schema::TaskSupport,
) -> Tool {
    let mut t = tool(name, description, schema);
    t.execution = Some(mcp_service::schema::ToolExecution {
        task_support: Some(support),
    });
    t
}

#[derive(Deserialize)]
struct ComputeArgs {
    #[serde(default)]
    seconds: f64,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize)]
struct GreetArgs {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct FileArgs {
    #[serde(default)]
    filename: Option<String>,
}

/// The fixtures of the tasks extension's scenarios (SEP-2663): `greet` (never a task),
/// `slow_compute`, `failing_job` (task required), `protocol_error_job`, `confirm_delete`,
/// `multi_input` and `test_tool_with_task` (an `input_required` round, then a task).
fn task_fixtures(builder: ServerBuilder) -> ServerBuilder {
    use mcp_service::schema::TaskSupport::{Optional, Required};
    builder
        .tool(
            tool(
                "greet",
                "Says hello (never runs as a task)",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            ),
            |args: GreetArgs, _cx: ToolContext| async move {
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    args.name.as_deref().unwrap_or("World")
                )))
            },
        )
        .tool(
            task_tool(
                "slow_compute",
                "Sleeps `seconds` seconds, then answers; a task for clients of the tasks extension",
                json!({"type": "object", "properties": {
                    "seconds": {"type": "number"}, "label": {"type": "string"}
                }}),
                Optional,
            ),
            |args: ComputeArgs, _cx: ToolContext| async move {
                let ms = (args.seconds.max(0.0) * 1000.0) as u64;
                if ms > 0 {
                    sleep(ms).await;
                }
                Ok(CallToolResult::text(format!(
                    "computed {} after {}s",
                    args.label.as_deref().unwrap_or("result"),
                    args.seconds
                )))
            },
        )
        .tool(
            task_tool(
                "failing_job",
                "Fails as a tool after about a second (task required)",
                json!({"type": "object"}),
                Required,
            ),
            |_: Value, _cx: ToolContext| async move {
                sleep(1000).await;
                Ok(CallToolResult::error("the job failed"))
            },
        )
        .tool(
            task_tool(
                "protocol_error_job",
                "Crashes: its task fails with a JSON-RPC error",
                json!({"type": "object"}),
                Optional,
            ),
            |_: Value, cx: ToolContext| async move {
                cx.as_task().await;
                sleep(100).await;
                if cx.task_id().is_some() {
                    panic!("protocol_error_job crashed on purpose");
                }
                // Not a task (a client without the extension): the crash is an error.
                Err::<CallToolResult, _>(Error::new(
                    ErrorKind::InvalidParams,
                    "protocol_error_job crashed on purpose",
                ))
            },
        )
        .tool(
            task_tool(
                "confirm_delete",
                "Asks the user to confirm deleting `filename` (the question waits in the task)",
                json!({"type": "object", "properties": {"filename": {"type": "string"}}}),
                Optional,
            ),
            |args: FileArgs, cx: ToolContext| async move {
                cx.as_task().await;
                let file = args.filename.unwrap_or_else(|| "the file".into());
                let r = cx
                    .elicit(ask_one(&format!("Delete {file}?"), "confirm", "boolean")?)
                    .await?;
                Ok(CallToolResult::text(format!(
                    "{file}: confirm={}",
                    answer(&r, "confirm")
                )))
            },
        )
        .tool(
            task_tool(
                "multi_input",
                "Asks two questions at once (both wait in the task)",
                json!({"type": "object"}),
                Optional,
            ),
            |_: Value, cx: ToolContext| async move {
                use futures_lite::future::zip;
                cx.as_task().await;
                let (a, b) = zip(
                    cx.elicit(ask_one("First name?", "first", "string")?),
                    cx.elicit(ask_one("Last name?", "last", "string")?),
                )
                .await;
                let (a, b) = (a?, b?);
                Ok(CallToolResult::text(format!(
                    "{} {}",
                    answer(&a, "first"),
                    answer(&b, "last")
                )))
            },
        )
        .tool(
            task_tool(
                "test_tool_with_task",
                "Asks the user's name in an input_required round, then works on as a task",
                json!({"type": "object"}),
                Required,
            ),
            |_: Value, cx: ToolContext| async move {
                let r = cx
                    .elicit_as(
                        "user_name",
                        ask_one("What is your name?", "name", "string")?,
                    )
                    .await?;
                cx.as_task().await;
                sleep(200).await;
                Ok(CallToolResult::text(format!(
                    "Task finished for {}",
                    answer(&r, "name")
                )))
            },
        )
}

/// The text of a sampling answer.
fn sampled_text(result: &mcp_service::schema::CreateMessageResult) -> String {
    result
        .content
        .blocks()
        .iter()
        .find_map(|b| b.as_text())
        .unwrap_or("")
        .to_owned()
}

/// A one-field form (`field`: string, required) asking `message`.
fn ask_one(message: &str, field: &str, kind: &str) -> Result<ElicitRequestParams, Error> {
    elicit_params(json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": kind}},
            "required": [field]
        }
    }))
}

/// The accepted content's `field`, as text.
fn answer(result: &mcp_service::schema::ElicitResult, field: &str) -> String {
    match result
        .content
        .as_ref()
        .and_then(|c| c.get(field))
        .and_then(|v| serde_json::to_value(v).ok())
    {
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => String::from("(none)"),
    }
}

/// The multi round-trip (SEP-2322) and stateless-era (SEP-2575) fixtures of the conformance
/// suite's 2026-07-28 scenarios. Each asks through the same `cx.elicit_as(..)`,
/// `cx.create_message_as(..)` and `cx.list_roots_as(..)` a handshake-era handler uses: a
/// 2026-07-28 client gets `input_required` rounds, an older one real requests.
fn input_required_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            no_args(
                "test_input_required_result_elicitation",
                "Asks the user's name through one elicitation input request (SEP-2322)",
            ),
            |_: Value, cx: ToolContext| async move {
                let r = cx
                    .elicit_as(
                        "user_name",
                        ask_one("What is your name?", "name", "string")?,
                    )
                    .await?;
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    answer(&r, "name")
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_sampling",
                "Asks the client's model one question through a sampling input request",
            ),
            |_: Value, cx: ToolContext| async move {
                let question = vec![SamplingMessage::user("What is the capital of France?")];
                let r = cx
                    .create_message_as(
                        "capital_question",
                        CreateMessageRequestParams::new(question, 100),
                    )
                    .await?;
                Ok(CallToolResult::text(format!(
                    "Model answered: {}",
                    sampled_text(&r)
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_list_roots",
                "Asks for the client's roots through a roots/list input request",
            ),
            |_: Value, cx: ToolContext| async move {
                let r = cx.list_roots_as("client_roots").await?;
                let uris: Vec<&str> = r.roots.iter().map(|r| r.uri.as_str()).collect();
                Ok(CallToolResult::text(format!(
                    "Client roots: {}",
                    uris.join(", ")
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_request_state",
                "Asks for a confirmation; the retry's sealed requestState is checked",
            ),
            |_: Value, cx: ToolContext| async move {
                let r = cx
                    .elicit_as("confirm", ask_one("Please confirm", "ok", "boolean")?)
                    .await?;
                // A later round exists only through a requestState this server sealed.
                let state = if cx.input_round() > 0 {
                    "state-ok"
                } else {
                    "no requestState"
                };
                Ok(CallToolResult::text(format!(
                    "{state}: confirmed ok={}",
                    answer(&r, "ok")
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_multiple_inputs",
                "Asks for an elicitation, a sampling and the roots in one round",
            ),
            |_: Value, cx: ToolContext| async move {
                use futures_lite::future::zip;
                let name = cx.elicit_as(
                    "user_name",
                    ask_one("What is your name?", "name", "string")?,
                );
                let greeting = cx.create_message_as(
                    "greeting",
                    CreateMessageRequestParams::new(
                        vec![SamplingMessage::user("Generate a greeting")],
                        50,
                    ),
                );
                let roots = cx.list_roots_as("client_roots");
                let (name, (greeting, roots)) = zip(name, zip(greeting, roots)).await;
                let (name, greeting, roots) = (name?, greeting?, roots?);
                Ok(CallToolResult::text(format!(
                    "name={}, greeting={}, roots={}",
                    answer(&name, "name"),
                    sampled_text(&greeting),
                    roots.roots.len()
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_multi_round",
                "Asks two questions, one round each",
            ),
            |_: Value, cx: ToolContext| async move {
                let name = cx
                    .elicit_as(
                        "step1",
                        ask_one("Step 1: What is your name?", "name", "string")?,
                    )
                    .await?;
                let color = cx
                    .elicit_as(
                        "step2",
                        ask_one("Step 2: What is your favorite color?", "color", "string")?,
                    )
                    .await?;
                Ok(CallToolResult::text(format!(
                    "{} likes {}",
                    answer(&name, "name"),
                    answer(&color, "color")
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_tampered_state",
                "Asks for a confirmation; a tampered requestState is refused",
            ),
            |_: Value, cx: ToolContext| async move {
                let r = cx
                    .elicit_as("confirm", ask_one("Please confirm", "ok", "boolean")?)
                    .await?;
                Ok(CallToolResult::text(format!(
                    "confirmed ok={}",
                    answer(&r, "ok")
                )))
            },
        )
        .tool(
            no_args(
                "test_input_required_result_capabilities",
                "Asks only for the input the client declared it can give",
            ),
            |_: Value, cx: ToolContext| async move {
                use futures_lite::future::zip;
                let sampling = async {
                    if !cx.client_has_capability("sampling") {
                        return Ok(None);
                    }
                    let q = vec![SamplingMessage::user("Say hello")];
                    cx.create_message_as("sample", CreateMessageRequestParams::new(q, 20))
                        .await
                        .map(|r| Some(sampled_text(&r)))
                };
                let elicitation = async {
                    if !cx.client_has_capability("elicitation") {
                        return Ok(None);
                    }
                    cx.elicit_as("ask", ask_one("What is your name?", "name", "string")?)
                        .await
                        .map(|r| Some(answer(&r, "name")))
                };
                let roots = async {
                    if !cx.client_has_capability("roots") {
                        return Ok(None);
                    }
                    cx.list_roots_as("roots").await.map(|r| Some(r.roots.len()))
                };
                let (s, (e, r)) = zip(sampling, zip(elicitation, roots)).await;
                let (s, e, r): (Option<String>, Option<String>, Option<usize>) = (s?, e?, r?);
                Ok(CallToolResult::text(format!(
                    "sampling={s:?}, elicitation={e:?}, roots={r:?}"
                )))
            },
        )
        .tool(
            no_args(
                "test_missing_capability",
                "Needs the client's sampling capability: -32021 for a 2026-07-28 client without it",
            ),
            |_: Value, cx: ToolContext| async move {
                let q = vec![SamplingMessage::user("Say hello")];
                let r = cx
                    .create_message(CreateMessageRequestParams::new(q, 20))
                    .await?;
                Ok(CallToolResult::text(format!(
                    "Model answered: {}",
                    sampled_text(&r)
                )))
            },
        )
        .tool(
            no_args(
                "test_streaming_elicitation",
                "Reports progress, then asks the user through elicitation (never a server request \
                 on a 2026-07-28 stream)",
            ),
            |_: Value, cx: ToolContext| async move {
                cx.progress(1.0, Some(2.0), Some("about to ask")).await?;
                let r = cx
                    .elicit_as(
                        "stream_input",
                        ask_one("What should be streamed?", "text", "string")?,
                    )
                    .await?;
                Ok(CallToolResult::text(format!(
                    "streamed: {}",
                    answer(&r, "text")
                )))
            },
        )
        .tool(
            no_args(
                "test_logging_tool",
                "Logs at info, warning and error; a 2026-07-28 request without _meta logLevel gets \
                 no log messages",
            ),
            |_: Value, cx: ToolContext| async move {
                for (level, text) in [
                    (LoggingLevel::Info, "logging tool: info"),
                    (LoggingLevel::Warning, "logging tool: warning"),
                    (LoggingLevel::Error, "logging tool: error"),
                ] {
                    cx.log(level, Some("test_logging_tool"), text).await?;
                }
                Ok(CallToolResult::text("logged at info, warning and error"))
            },
        )
        .tool(
            tool(
                "test_custom_headers",
                "Arguments mirrored into Mcp-Param-* headers over Streamable HTTP (SEP-2243)",
                json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {"type": "integer", "x-mcp-header": "Priority"},
                        "query": {"type": "string"}
                    },
                    "required": ["region"]
                }),
            ),
            |args: Value, _cx: ToolContext| async move {
                Ok(CallToolResult::text(format!(
                    "region={} priority={} query={}",
                    args["region"], args["priority"], args["query"]
                )))
            },
        )
        .prompt(
            prompt(
                "test_input_required_result_prompt",
                "Prompt Needing Input",
                "A prompt that asks the user for its context first (SEP-2322)",
                &[],
            ),
            |_args: BTreeMap<String, String>, cx: PromptContext| async move {
                let r = cx
                    .elicit_as(
                        "user_context",
                        ask_one("What context should the prompt use?", "context", "string")?,
                    )
                    .await?;
                Ok(messages(vec![PromptMessage::user(format!(
                    "Answer with this context in mind: {}",
                    answer(&r, "context")
                ))]))
            },
        )
}

/// `echo`, `slow`, `stream` and `touch_watched`.
fn extra_tools(builder: ServerBuilder, watched: &Arc<Watched>) -> ServerBuilder {
    builder
        .tool(
            no_args(
                "list_roots",
                "Asks the client for its roots and returns their URIs",
            ),
            |_: Value, cx: ToolContext| async move {
                if !cx.client_has_capability("roots") {
                    return Ok(CallToolResult::error(
                        "the client did not declare the roots capability",
                    ));
                }
                let roots = cx.list_roots().await?;
                let uris: Vec<String> = roots.roots.iter().map(|r| r.uri.clone()).collect();
                Ok(CallToolResult::text(
                    serde_json::to_string(&uris).unwrap_or_default(),
                ))
            },
        )
        .tool(
            tool(
                "echo",
                "Returns its text argument",
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                }),
            ),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(CallToolResult::text(args.text)) },
        )
        .tool(
            tool(
                "slow",
                "Works for `steps` steps of `delay_ms` milliseconds, reporting progress after \
                 each; stops when cancelled",
                json!({
                    "type": "object",
                    "properties": {
                        "steps": {"type": "integer", "minimum": 0, "default": 10},
                        "delay_ms": {"type": "integer", "minimum": 0, "default": 100}
                    }
                }),
            ),
            |args: SlowArgs, cx: ToolContext| async move {
                let total = f64::from(args.steps);
                for step in 1..=args.steps {
                    sleep_unless_cancelled(&cx, args.delay_ms).await?;
                    cx.progress(
                        f64::from(step),
                        Some(total),
                        Some(&format!("step {step} of {}", args.steps)),
                    )
                    .await?;
                }
                Ok(CallToolResult::text(format!(
                    "slow: done after {} steps",
                    args.steps
                )))
            },
        )
        .tool(
            tool(
                "stream",
                "Streams `count` text items, `delay_ms` apart, then a final text",
                json!({
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "minimum": 0, "default": 5},
                        "delay_ms": {"type": "integer", "minimum": 0, "default": 20}
                    }
                }),
            ),
            |args: StreamArgs, cx: ToolContext| async move {
                for i in 1..=args.count {
                    if i > 1 {
                        sleep_unless_cancelled(&cx, args.delay_ms).await?;
                    }
                    cx.stream(Content::text(format!("item {i} of {}", args.count)))
                        .await?;
                }
                Ok(CallToolResult::text(format!(
                    "stream: {} items sent",
                    args.count
                )))
            },
        )
        .tool(
            no_args(
                "touch_watched",
                "Changes test://watched-resource and notifies its subscribers",
            ),
            {
                let watched = watched.clone();
                move |_: Value, cx: ToolContext| {
                    let watched = watched.clone();
                    async move {
                        let revision = watched.revision.fetch_add(1, Ordering::AcqRel) + 1;
                        let notified = cx.server().resource_updated(WATCHED_URI);
                        Ok(CallToolResult::text(format!(
                            "{WATCHED_URI} is now at revision {revision}; \
                             {notified} subscribed connection(s) notified"
                        )))
                    }
                }
            },
        )
}

/// The list-changed hooks of the 2026-07-28 scenario (stateless.ts): `test_trigger_tool_change`
/// and `test_trigger_prompt_change` each toggle a dynamic entry of their list, so the list
/// really changes and the server sends its `list_changed` (to handshake-era clients, and to the
/// `subscriptions/listen` streams that asked for that list).
fn list_change_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            no_args(
                "test_trigger_tool_change",
                "Adds test_dynamic_tool, or removes it when present: the tool list changes",
            ),
            |_: Value, cx: ToolContext| async move {
                let server = cx.server();
                let done = if server.remove_tool(DYNAMIC_TOOL) {
                    "removed"
                } else {
                    // Another call may have added it meanwhile: the list changed either way.
                    let _ = server.add_tool(
                        no_args(DYNAMIC_TOOL, "Comes and goes with test_trigger_tool_change"),
                        |_: Value, _cx: ToolContext| async { Ok("dynamic") },
                    );
                    "added"
                };
                Ok(CallToolResult::text(format!(
                    "{DYNAMIC_TOOL} {done}: the tool list changed"
                )))
            },
        )
        .tool(
            no_args(
                "test_trigger_prompt_change",
                "Adds test_dynamic_prompt, or removes it when present: the prompt list changes",
            ),
            |_: Value, cx: ToolContext| async move {
                let server = cx.server();
                let done = if server.remove_prompt(DYNAMIC_PROMPT) {
                    "removed"
                } else {
                    let _ = server.add_prompt(
                        prompt(
                            DYNAMIC_PROMPT,
                            "Dynamic Prompt",
                            "Comes and goes with test_trigger_prompt_change",
                            &[],
                        ),
                        |_args: BTreeMap<String, String>, _cx: PromptContext| async {
                            Ok(messages(vec![PromptMessage::user(
                                "This prompt comes and goes.",
                            )]))
                        },
                    );
                    "added"
                };
                Ok(CallToolResult::text(format!(
                    "{DYNAMIC_PROMPT} {done}: the prompt list changed"
                )))
            },
        )
}

/// The static resources, the watched resource and the template (resources.ts).
fn resources(builder: ServerBuilder, watched: &Arc<Watched>) -> ServerBuilder {
    builder
        .resource(
            resource(
                STATIC_TEXT_URI,
                "static-text",
                "Static Text Resource",
                "A static text resource for testing",
                "text/plain",
            ),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![text_contents(uri, "text/plain", STATIC_TEXT)])
            },
        )
        .resource(
            resource(
                STATIC_BINARY_URI,
                "static-binary",
                "Static Binary Resource",
                "A static binary resource (image) for testing",
                "image/png",
            ),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![blob_contents(uri, "image/png", TEST_IMAGE_PNG_BASE64)])
            },
        )
        .resource(
            resource(
                WATCHED_URI,
                "watched-resource",
                "Watched Resource",
                "A subscribable resource; the touch_watched tool changes it and notifies \
                 subscribers",
                "text/plain",
            ),
            {
                let watched = watched.clone();
                move |uri: String, _cx: ResourceContext| {
                    let text = watched.text();
                    async move { Ok(vec![text_contents(uri, "text/plain", text)]) }
                }
            },
        )
        .resource_template(
            ResourceTemplate {
                title: Some("Resource Template".to_owned()),
                description: Some("A resource template with parameter substitution".to_owned()),
                mime_type: Some("application/json".to_owned()),
                ..ResourceTemplate::new(TEMPLATE_URI, "template")
            },
            |uri: String, vars: HashMap<String, String>, _cx: ResourceContext| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let data = format!("Data for ID: {id}");
                let body = json!({"id": id, "templateTest": true, "data": data});
                Ok(vec![text_contents(
                    uri,
                    "application/json",
                    body.to_string(),
                )])
            },
        )
}

/// The four prompts (prompts.ts).
fn prompts(builder: ServerBuilder) -> ServerBuilder {
    builder
        .prompt(
            prompt(
                "test_simple_prompt",
                "Simple Test Prompt",
                "A simple prompt without arguments",
                &[],
            ),
            |_args: BTreeMap<String, String>, _cx: PromptContext| async {
                Ok(messages(vec![PromptMessage::user(
                    "This is a simple prompt for testing.",
                )]))
            },
        )
        .prompt(
            prompt(
                "test_prompt_with_arguments",
                "Prompt With Arguments",
                "A prompt with required arguments",
                &[
                    ("arg1", "First test argument"),
                    ("arg2", "Second test argument"),
                ],
            ),
            |args: BTreeMap<String, String>, _cx: PromptContext| async move {
                // Both are required: the server checked that before calling.
                let (arg1, arg2) = (&args["arg1"], &args["arg2"]);
                Ok(messages(vec![PromptMessage::user(format!(
                    "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
                ))]))
            },
        )
        .prompt(
            prompt(
                "test_prompt_with_embedded_resource",
                "Prompt With Embedded Resource",
                "A prompt that includes an embedded resource",
                &[("resourceUri", "URI of the resource to embed")],
            ),
            |args: BTreeMap<String, String>, _cx: PromptContext| async move {
                let uri = args["resourceUri"].clone();
                Ok(messages(vec![
                    user(Content::embedded(text_contents(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    ))),
                    PromptMessage::user("Please process the embedded resource above."),
                ]))
            },
        )
        .prompt(
            prompt(
                "test_prompt_with_image",
                "Prompt With Image",
                "A prompt that includes image content",
                &[],
            ),
            |_args: BTreeMap<String, String>, _cx: PromptContext| async {
                Ok(messages(vec![
                    user(Content::image(TEST_IMAGE_PNG_BASE64, "image/png")),
                    PromptMessage::user("Please analyze the image above."),
                ]))
            },
        )
}

/// Completion of prompt arguments and the template's `{id}` (lifecycle.ts: completion).
fn completion(builder: ServerBuilder) -> ServerBuilder {
    builder.completion(
        |params: CompleteRequestParams, _cx: CompleteContext| async move {
            let value = params.argument.value.as_str();
            let candidates: &[&str] = match (&params.reference, params.argument.name.as_str()) {
                (Reference::Prompt(p), "arg1") if p.name == "test_prompt_with_arguments" => {
                    &["paris", "park", "party", "testValue1"]
                }
                (Reference::Prompt(p), "arg2") if p.name == "test_prompt_with_arguments" => {
                    &["hello", "world", "testValue2"]
                }
                (Reference::Prompt(p), "resourceUri")
                    if p.name == "test_prompt_with_embedded_resource" =>
                {
                    &[
                        STATIC_TEXT_URI,
                        STATIC_BINARY_URI,
                        WATCHED_URI,
                        "test://template/123/data",
                    ]
                }
                (Reference::Resource(r), "id") if r.uri == TEMPLATE_URI => {
                    &["1", "2", "3", "42", "123"]
                }
                _ => &[],
            };
            Ok(complete_from(candidates, value))
        },
    )
}

/// Parses elicitation params written as JSON (the wire form reads best for these fixtures).
fn elicit_params(value: Value) -> Result<ElicitRequestParams, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::internal(format!("bad elicitation fixture: {e}")))
}

/// Asks the client and reports `"{label}: action=…, content={…}"`; a tool error when the
/// client cannot elicit.
async fn elicit(
    cx: &ToolContext,
    request: ElicitRequestParams,
    label: &str,
) -> Result<CallToolResult, Error> {
    if !cx.client_has_capability("elicitation") {
        return Ok(CallToolResult::error(NO_ELICITATION));
    }
    match cx.elicit(request).await {
        Ok(result) => {
            let action = serde_json::to_value(result.action).unwrap_or(Value::Null);
            let action = action.as_str().unwrap_or("unknown");
            let content =
                serde_json::to_string(&result.content.unwrap_or_default()).unwrap_or_default();
            Ok(CallToolResult::text(format!(
                "{label}: action={action}, content={content}"
            )))
        }
        Err(e) => Ok(CallToolResult::error(format!("Elicitation failed: {e}"))),
    }
}

/// The skills extension (SEP-2640): one skill, `everything-tour` (`examples/skills/`), with a
/// `references/` subdirectory, so that `resources/directory/read` has a directory to descend.
fn skills(builder: ServerBuilder) -> ServerBuilder {
    const DIR: &str = "everything-tour";
    let skill = mcp_service::skills::Skill::new(include_str!("../skills/everything-tour/SKILL.md"))
        .and_then(|s| {
            s.file(
                "references/TOOLS.md",
                include_str!("../skills/everything-tour/references/TOOLS.md"),
            )
        })
        .and_then(|s| {
            s.file(
                "references/RESOURCES.md",
                include_str!("../skills/everything-tour/references/RESOURCES.md"),
            )
        });
    match skill {
        Ok(skill) => builder.skill(skill),
        Err(e) => panic!("the {DIR} skill fixture is invalid: {e}"),
    }
}
