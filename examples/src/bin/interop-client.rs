//! `interop-client` — our typed client walking the official reference server
//! `@modelcontextprotocol/server-everything` over stdio (`mcp_tokio::spawn`), Streamable HTTP,
//! legacy HTTP+SSE or the probe between them, with checked outputs.
//!
//! ```text
//! interop-client [-- SERVER_CMD ARGS...]
//! interop-client --url URL        # Streamable HTTP (server-everything `streamableHttp`, /mcp)
//! interop-client --sse-url URL    # legacy HTTP+SSE (server-everything `sse`, /sse)
//! interop-client --auto-url URL   # the backwards-compatible probe, then either
//! ```
//!
//! With `--fixtures NAME` it walks instead the small fixture servers of `interop/`
//! (`ts2-server.mjs` on the TypeScript SDK v2, `py-server.py` on the Python SDK; `NAME` is the
//! server's expected `serverInfo.name`) in the stateless era (2026-07-28): `echo`, the
//! multi round-trip tools `greet` (elicitation), `two_step` (two rounds, a requestState) and
//! `ask_model` (sampling) answered by this client's handlers, `fixture://greeting`, a
//! `subscriptions/listen` stream (`subscribe`) told of its update by the `touch` tool,
//! `greeting_prompt` and its completion:
//!
//! ```text
//! interop-client --fixtures NAME [--discovery discover|auto] [--handshake-refused] -- CMD ARGS...
//! interop-client --fixtures NAME [--discovery discover|auto] [--handshake-refused] --url URL
//! ```
//!
//! `--discovery` picks `Discovery::Discover` (the default with `--fixtures`) or
//! `Discovery::Auto`; `--handshake-refused` adds a check that a second connection with
//! `Discovery::Initialize` (the handshake) is refused by the server.
//!
//! Without a command it runs `node` on
//! `interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio` (under the
//! workspace root; `npm ci` in `interop/` installs it). Prints one line per
//! check (`ok` / `FAIL`), then `N passed, M failed`; exits 1 on any failure.
//!
//! Needs `mcp-service`, `mcp-tokio`, `tokio` (`rt-multi-thread`, `macros`, `process`, `time`)
//! and `serde_json`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::session::Discovery;
use mcp_service::schema::{
    CompleteRequestParams, CompletionContext, CreateMessageResult, ElicitResult, LoggingLevel,
    LoggingMessageNotificationParams, Reference, Root,
};
use mcp_service::{ClientOptions, Error};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(20);
const ROOT_URI: &str = "file:///tmp/mcp-rs-interop-root";
const SAMPLING_MODEL: &str = "interop-rs-model";

type Outcome = Result<String, String>;

/// Turns an MCP error into a check failure, naming the step.
trait Ctx<T> {
    fn ctx(self, what: &str) -> Result<T, String>;
}

impl<T> Ctx<T> for Result<T, Error> {
    fn ctx(self, what: &str) -> Result<T, String> {
        self.map_err(|e| format!("{what}: {e} ({:?})", e.kind()))
    }
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

fn ensure_eq(actual: &Value, expected: &Value, what: &str) -> Result<(), String> {
    if actual == expected {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected}, got {actual}"))
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(|e| json!({ "serialization error": e.to_string() }))
}

/// The text of each text item of a result's `content`.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|c| c["type"] == "text")
                .filter_map(|c| c["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

struct Walk {
    passed: usize,
    failed: usize,
}

impl Walk {
    async fn check(&mut self, name: &str, f: impl Future<Output = Outcome>) -> bool {
        let outcome = match tokio::time::timeout(TIMEOUT, f).await {
            Ok(o) => o,
            Err(_) => Err(format!("timed out after {} s", TIMEOUT.as_secs())),
        };
        match outcome {
            Ok(detail) => {
                self.passed += 1;
                if detail.is_empty() {
                    println!("ok   {name}");
                } else {
                    println!("ok   {name} ({detail})");
                }
                true
            }
            Err(e) => {
                self.failed += 1;
                println!("FAIL {name}: {e}");
                false
            }
        }
    }
}

/// Waits until `pred` holds on the collected items, or `wait` elapses.
async fn wait_for<T: Clone>(
    items: &Mutex<Vec<T>>,
    wait: Duration,
    pred: impl Fn(&[T]) -> bool,
) -> Vec<T> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let now = items.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if pred(&now) || tokio::time::Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let fixtures = parse_fixture_flags(&mut args);
    let target = match args.first().map(String::as_str) {
        Some(flag @ ("--url" | "--sse-url" | "--auto-url")) => match args.get(1) {
            Some(url) if args.len() == 2 => match flag {
                "--url" => Target::Http(url.clone()),
                "--sse-url" => Target::Sse(url.clone()),
                _ => Target::Auto(url.clone()),
            },
            _ => usage(),
        },
        _ => match args.iter().position(|a| a == "--") {
            Some(i) if i + 1 < args.len() => Target::Command(args[i + 1..].to_vec()),
            None if args.is_empty() => {
                let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
                Target::Command(vec![
                    "node".into(),
                    format!(
                        "{root}/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
                    ),
                    "stdio".into(),
                ])
            }
            _ => usage(),
        },
    };
    let mut w = Walk {
        passed: 0,
        failed: 0,
    };
    let walk = async {
        match &fixtures {
            Some(f) => run_fixtures(&target, f, &mut w).await,
            None => run(&target, &mut w).await,
        }
    };
    if tokio::time::timeout(Duration::from_secs(120), walk)
        .await
        .is_err()
    {
        w.failed += 1;
        println!("FAIL walk did not finish within 120 s");
    }
    println!("{} passed, {} failed", w.passed, w.failed);
    std::process::exit(if w.failed == 0 { 0 } else { 1 });
}

fn usage() -> ! {
    eprintln!(
        "usage: interop-client [-- SERVER_CMD ARGS...] | --url URL | --sse-url URL | --auto-url URL\n       \
         interop-client --fixtures NAME [--discovery discover|auto] [--handshake-refused] \
         (-- SERVER_CMD ARGS... | --url URL)"
    );
    std::process::exit(2);
}

/// Where the walk's server is.
enum Target {
    /// A child process spoken to over stdio.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A legacy HTTP+SSE endpoint (2024-11-05).
    Sse(String),
    /// A URL behind the backwards-compatible probe.
    Auto(String),
}

/// The walk's connection: a child process or an HTTP client.
enum Conn {
    Child(Box<mcp_tokio::ChildClient>),
    Http(mcp_service::Client),
}

impl std::ops::Deref for Conn {
    type Target = mcp_service::Client;
    fn deref(&self) -> &mcp_service::Client {
        match self {
            Conn::Child(c) => c,
            Conn::Http(c) => c,
        }
    }
}

async fn connect(target: &Target, options: ClientOptions) -> Result<Conn, String> {
    let http = mcp_tokio::HttpClientOptions::new;
    match target {
        Target::Command(server) => {
            let mut cmd = std::process::Command::new(&server[0]);
            cmd.args(&server[1..]);
            let child = mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), cmd, options)
                .await
                .ctx("spawn")?;
            Ok(Conn::Child(Box::new(child)))
        }
        Target::Http(url) => Ok(Conn::Http(
            mcp_tokio::connect_http(mcp_tokio::TokioRuntime::current(), url, options, http())
                .await
                .ctx("connect (Streamable HTTP)")?,
        )),
        Target::Sse(url) => Ok(Conn::Http(
            mcp_tokio::connect_sse(mcp_tokio::TokioRuntime::current(), url, options, http())
                .await
                .ctx("connect (legacy SSE)")?,
        )),
        Target::Auto(url) => Ok(Conn::Http(
            mcp_tokio::connect_http_auto(mcp_tokio::TokioRuntime::current(), url, options, http())
                .await
                .ctx("connect (probe)")?,
        )),
    }
}

async fn run(target: &Target, w: &mut Walk) {
    let sampling_seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let elicit_seen: Arc<Mutex<Vec<Value>>> = Arc::default();

    // The reference server-everything walk is of the handshake era (legacy HTTP+SSE, the
    // transport probe, `logging/setLevel`): the handshake, not the default `Auto`.
    let options = ClientOptions::new("interop-rs-client", env!("CARGO_PKG_VERSION"))
        .discovery(Discovery::Initialize)
        .roots(vec![Root {
            uri: ROOT_URI.into(),
            name: Some("interop-root".into()),
            meta: None,
        }])
        .sampling({
            let seen = sampling_seen.clone();
            move |params, _cx| {
                let seen = seen.clone();
                async move {
                    let prompt = params
                        .messages
                        .first()
                        .and_then(|m| m.content.blocks().iter().find_map(|b| b.as_text()))
                        .unwrap_or("")
                        .to_owned();
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(to_json(&params));
                    Ok(CreateMessageResult::text(
                        SAMPLING_MODEL,
                        format!("rs says: {prompt}"),
                    ))
                }
            }
        })
        .elicitation({
            let seen = elicit_seen.clone();
            move |params, _cx| {
                let seen = seen.clone();
                async move {
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(to_json(&params));
                    serde_json::from_value::<ElicitResult>(json!({
                        "action": "accept",
                        "content": {
                            "name": "Ferris Crab",
                            "check": true,
                            "email": "ferris@example.com",
                            "integer": 7,
                            "number": 2.5,
                            "untitledSingleSelectEnum": "Joey",
                            "untitledMultipleSelectEnum": ["Piano", "Drums"],
                            "titledSingleSelectEnum": "hero-3",
                            "legacyTitledEnum": "pet-2"
                        }
                    }))
                    .map_err(|e| Error::internal(format!("building the elicitation result: {e}")))
                }
            }
        });

    let mut child = None;
    w.check("connect + initialize", async {
        let c = connect(target, options).await?;
        let info: Value = serde_json::from_str(c.server_info().info.get()).unwrap_or_default();
        let version = c.protocol_version();
        ensure!(
            info["name"] == "mcp-servers/everything",
            "serverInfo: {info}"
        );
        ensure!(
            c.instructions().is_some_and(|i| !i.is_empty()),
            "no instructions"
        );
        let detail = format!(
            "{} {}, protocol {}",
            info["name"].as_str().unwrap_or("?"),
            info["version"].as_str().unwrap_or("?"),
            version.as_str()
        );
        child = Some(c);
        Ok(detail)
    })
    .await;
    let Some(client) = child else { return };
    let logs = Arc::new(Mutex::new(Vec::<LoggingMessageNotificationParams>::new()));
    {
        // Collect log messages on a task.
        let mut rx = client.log_messages();
        let logs = logs.clone();
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                logs.lock().unwrap_or_else(|e| e.into_inner()).push(m);
            }
        });
    }
    w.check("ping", async {
        client.ping().await.ctx("ping").map(|()| String::new())
    })
    .await;

    // -------------------------------------------------------------------------------- tools
    w.check("tools/list", async {
        let tools = client.list_tools().await.ctx("tools/list")?;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "trigger-long-running-operation",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            // Registered after `initialize` because this client declares the capabilities.
            "get-roots-list",
            "trigger-elicitation-request",
            "trigger-sampling-request",
        ] {
            ensure!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        let echo = tools
            .iter()
            .find(|t| t.name == "echo")
            .map(to_json)
            .unwrap_or_default();
        ensure_eq(
            &echo["inputSchema"]["required"],
            &json!(["message"]),
            "echo inputSchema.required",
        )?;
        ensure_eq(
            &echo["annotations"]["readOnlyHint"],
            &json!(true),
            "echo annotations.readOnlyHint",
        )?;
        let structured = tools
            .iter()
            .find(|t| t.name == "get-structured-content")
            .map(to_json)
            .unwrap_or_default();
        ensure!(
            structured["outputSchema"]["properties"]["temperature"]["type"] == "number",
            "get-structured-content outputSchema: {}",
            structured["outputSchema"]
        );
        Ok(format!("{} tools", tools.len()))
    })
    .await;

    w.check("tools/call echo", async {
        let r = client
            .call_tool("echo", json!({"message": "héllo from Rust ✓"}))
            .await
            .ctx("echo")?;
        let r = to_json(&r);
        ensure_eq(
            &r,
            &json!({"content": [{"type": "text", "text": "Echo: héllo from Rust ✓"}]}),
            "result",
        )?;
        Ok(String::new())
    })
    .await;

    w.check("tools/call get-sum", async {
        let r = client
            .call_tool("get-sum", json!({"a": 2.5, "b": 4}))
            .await
            .ctx("get-sum")?;
        ensure_eq(
            &json!(texts(&to_json(&r))),
            &json!(["The sum of 2.5 and 4 is 6.5."]),
            "texts",
        )?;
        Ok(String::new())
    })
    .await;

    w.check(
        "tools/call get-sum with invalid arguments -> error",
        async {
            match client
                .call_tool("get-sum", json!({"a": "two", "b": 4}))
                .await
            {
                Ok(r) => {
                    ensure!(
                        r.is_error == Some(true),
                        "neither an error response nor isError: {}",
                        to_json(&r)
                    );
                    Ok(format!(
                        "isError result: {}",
                        texts(&to_json(&r))
                            .join(" ")
                            .chars()
                            .take(60)
                            .collect::<String>()
                    ))
                }
                Err(e) => Ok(format!("JSON-RPC error {:?}", e.kind())),
            }
        },
    )
    .await;

    w.check("tools/call unknown tool -> error", async {
        match client.call_tool("no-such-tool", json!({})).await {
            Ok(r) => {
                ensure!(
                    r.is_error == Some(true),
                    "neither an error response nor isError: {}",
                    to_json(&r)
                );
                Ok("isError result".into())
            }
            Err(e) => Ok(format!("JSON-RPC error {:?}: {e}", e.kind())),
        }
    })
    .await;

    w.check("tools/call get-tiny-image", async {
        let r = to_json(
            &client
                .call_tool("get-tiny-image", json!({}))
                .await
                .ctx("get-tiny-image")?,
        );
        let content = r["content"].as_array().cloned().unwrap_or_default();
        let kinds: Vec<&str> = content.iter().filter_map(|c| c["type"].as_str()).collect();
        ensure!(
            kinds == ["text", "image", "text"],
            "content types {kinds:?}"
        );
        ensure_eq(&content[1]["mimeType"], &json!("image/png"), "mimeType")?;
        ensure!(
            content[1]["data"]
                .as_str()
                .is_some_and(|d| d.starts_with("iVBORw0KGgo")),
            "image data is not a base64 PNG"
        );
        Ok(String::new())
    })
    .await;

    w.check("tools/call get-annotated-message (annotations)", async {
        let r = client
            .call_tool(
                "get-annotated-message",
                json!({"messageType": "error", "includeImage": true}),
            )
            .await
            .ctx("get-annotated-message")?;
        let r = to_json(&r);
        ensure_eq(
            &r["content"][0]["text"],
            &json!("Error: Operation failed"),
            "text",
        )?;
        ensure_eq(
            &r["content"][0]["annotations"],
            &json!({"priority": 1.0, "audience": ["user", "assistant"]}),
            "annotations",
        )?;
        ensure_eq(
            &r["content"][1]["annotations"],
            &json!({"priority": 0.5, "audience": ["user"]}),
            "image annotations",
        )?;
        Ok(String::new())
    })
    .await;

    w.check(
        "tools/call get-structured-content (structuredContent)",
        async {
            let r = client
                .call_tool("get-structured-content", json!({"location": "Chicago"}))
                .await
                .ctx("get-structured-content")?;
            let expected =
                json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
            ensure_eq(
                &r.structured_content.clone().unwrap_or_default(),
                &expected,
                "structuredContent",
            )?;
            let text = texts(&to_json(&r)).join("");
            ensure_eq(
                &serde_json::from_str(&text).unwrap_or_default(),
                &expected,
                "text block",
            )?;
            Ok(String::new())
        },
    )
    .await;

    w.check("tools/call get-resource-reference (embedded blob)", async {
        let r = client
            .call_tool(
                "get-resource-reference",
                json!({"resourceType": "Blob", "resourceId": 3}),
            )
            .await
            .ctx("get-resource-reference")?;
        let r = to_json(&r);
        let res = &r["content"][1];
        ensure_eq(&res["type"], &json!("resource"), "type")?;
        ensure_eq(
            &res["resource"]["uri"],
            &json!("demo://resource/dynamic/blob/3"),
            "uri",
        )?;
        let blob = res["resource"]["blob"].as_str().unwrap_or("");
        ensure!(
            blob.starts_with("UmVzb3VyY2UgMzog"),
            "blob is not base64 of 'Resource 3: …': {blob}"
        );
        Ok(String::new())
    })
    .await;

    w.check(
        "tools/call get-resource-links (resource_link items)",
        async {
            let r = client
                .call_tool("get-resource-links", json!({"count": 2}))
                .await
                .ctx("get-resource-links")?;
            let r = to_json(&r);
            let links: Vec<&Value> = r["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["type"] == "resource_link")
                .collect();
            ensure!(links.len() == 2, "expected 2 resource links: {r}");
            ensure!(
                links.iter().all(|l| l["uri"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("demo://resource/dynamic/"))),
                "link uris: {r}"
            );
            Ok(String::new())
        },
    )
    .await;

    w.check(
        "tools/call trigger-long-running-operation with progress",
        async {
            let progress = Arc::new(Mutex::new(Vec::new()));
            let seen = progress.clone();
            let r = client
                .call_tool(
                    "trigger-long-running-operation",
                    json!({"duration": 0.3, "steps": 3}),
                )
                .progress(move |p| {
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((p.progress, p.total))
                })
                .await
                .ctx("trigger-long-running-operation")?;
            ensure_eq(
                &json!(texts(&to_json(&r))),
                &json!(["Long running operation completed. Duration: 0.3 seconds, Steps: 3."]),
                "texts",
            )?;
            let p = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
            ensure!(
                p == [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
                "progress {p:?}"
            );
            Ok(format!("{} progress notifications", p.len()))
        },
    )
    .await;

    w.check(
        "tools/call trigger-long-running-operation cancelled by drop",
        async {
            let call = client.call_tool(
                "trigger-long-running-operation",
                json!({"duration": 30, "steps": 3}),
            );
            let r = tokio::time::timeout(Duration::from_millis(300), call).await;
            ensure!(r.is_err(), "finished early: {r:?}");
            // Dropping the future sent notifications/cancelled; the connection still works.
            client.ping().await.ctx("ping after cancel")?;
            Ok(String::new())
        },
    )
    .await;

    // ------------------------------------------------------------- sampling and elicitation
    w.check(
        "tools/call trigger-sampling-request -> sampling/createMessage",
        async {
            let r = client
                .call_tool(
                    "trigger-sampling-request",
                    json!({"prompt": "Say hi", "maxTokens": 50}),
                )
                .await
                .ctx("trigger-sampling-request")?;
            let text = texts(&to_json(&r)).join("");
            let raw = text
                .strip_prefix("LLM sampling result: \n")
                .ok_or_else(|| format!("unexpected text {text:?}"))?;
            let answer: Value = serde_json::from_str(raw).map_err(|e| format!("{e}: {raw}"))?;
            ensure_eq(&answer["model"], &json!(SAMPLING_MODEL), "model")?;
            ensure_eq(
                &answer["content"],
                &json!({
                    "type": "text",
                    "text": "rs says: Resource trigger-sampling-request context: Say hi"
                }),
                "content",
            )?;
            let seen = sampling_seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            ensure!(seen.len() == 1, "sampling requests seen: {seen:?}");
            ensure_eq(&seen[0]["maxTokens"], &json!(50), "maxTokens")?;
            let system = json!("You are a helpful test server.");
            ensure_eq(&seen[0]["systemPrompt"], &system, "systemPrompt")?;
            ensure_eq(&seen[0]["temperature"], &json!(0.7), "temperature")?;
            Ok(String::new())
        },
    )
    .await;

    w.check(
        "tools/call trigger-elicitation-request -> elicitation/create",
        async {
            let r = client
                .call_tool("trigger-elicitation-request", json!({}))
                .await
                .ctx("trigger-elicitation-request")?;
            let t = texts(&to_json(&r));
            let accepted = "✅ User provided the requested information!";
            ensure!(t.first().is_some_and(|s| s == accepted), "texts {t:?}");
            let expected = "User inputs:\n- Name: Ferris Crab\n- Agreed to terms: true\n\
                        - Email: ferris@example.com\n- Favorite Integer: 7\n- Favorite Number: 2.5";
            ensure!(t.get(1).is_some_and(|s| s == expected), "texts {t:?}");
            let seen = elicit_seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            ensure!(seen.len() == 1, "elicitation requests seen: {seen:?}");
            let props = &seen[0]["requestedSchema"]["properties"];
            // `NumberSchema` keeps numbers as written: an integer default stays an integer.
            let default = &props["integer"]["default"];
            ensure!(
                default.as_i64() == Some(42),
                "integer default: expected 42, got {default}"
            );
            let note = if default.is_i64() || default.is_u64() {
                String::new()
            } else {
                format!("note: integer default re-serialized as {default}")
            };
            let names = json!(["Cats", "Dogs", "Birds", "Fish", "Reptiles"]);
            ensure_eq(&props["legacyTitledEnum"]["enumNames"], &names, "enumNames")?;
            let multi = &props["titledMultipleSelectEnum"]["default"];
            ensure_eq(multi, &json!(["fish-1"]), "multi-select default")?;
            ensure_eq(&props["email"]["format"], &json!("email"), "email format")?;
            Ok(note)
        },
    )
    .await;

    w.check("roots/list answered (get-roots-list)", async {
        let r = client
            .call_tool("get-roots-list", json!({}))
            .await
            .ctx("get-roots-list")?;
        let text = texts(&to_json(&r)).join("");
        ensure!(
            text.starts_with("Current MCP Roots (1 total):")
                && text.contains(ROOT_URI)
                && text.contains("interop-root"),
            "text {text:?}"
        );
        Ok(String::new())
    })
    .await;

    // ------------------------------------------------------------------------ logging
    w.check("notifications/message received (roots sync log)", async {
        let got = wait_for(&logs, Duration::from_secs(3), |l| {
            l.iter().any(|m| {
                m.data
                    .as_str()
                    .is_some_and(|d| d.starts_with("Roots updated: 1 root(s)"))
            })
        })
        .await;
        let m = got
            .iter()
            .find(|m| {
                m.data
                    .as_str()
                    .is_some_and(|d| d.starts_with("Roots updated"))
            })
            .ok_or_else(|| {
                format!(
                    "no roots log among {:?}",
                    got.iter().map(to_json).collect::<Vec<_>>()
                )
            })?;
        ensure_eq(&to_json(&m.level), &json!("info"), "level")?;
        ensure_eq(&json!(m.logger), &json!("everything-server"), "logger")?;
        Ok(String::new())
    })
    .await;

    w.check("logging/setLevel + toggle-simulated-logging", async {
        client
            .set_logging_level(LoggingLevel::Debug)
            .await
            .ctx("logging/setLevel")?;
        let before = logs.lock().unwrap_or_else(|e| e.into_inner()).len();
        let r = client
            .call_tool("toggle-simulated-logging", json!({}))
            .await
            .ctx("toggle on")?;
        ensure!(
            texts(&to_json(&r))
                .join("")
                .starts_with("Started simulated"),
            "toggle on: {}",
            to_json(&r)
        );
        let got = wait_for(&logs, Duration::from_secs(3), |l| l.len() > before).await;
        let r = client
            .call_tool("toggle-simulated-logging", json!({}))
            .await
            .ctx("toggle off")?;
        ensure!(
            texts(&to_json(&r))
                .join("")
                .starts_with("Stopped simulated"),
            "toggle off: {}",
            to_json(&r)
        );
        let m = got.get(before).ok_or("no simulated log message arrived")?;
        ensure!(
            m.data
                .as_str()
                .is_some_and(|d| d.contains("-level message") || d.contains("level-message")),
            "data {}",
            m.data
        );
        Ok(format!("got a {} message", to_json(&m.level)))
    })
    .await;

    // ------------------------------------------------------------------------ resources
    w.check("resources/list", async {
        let resources = client.list_resources().await.ctx("resources/list")?;
        ensure!(!resources.is_empty(), "no resources");
        ensure!(
            resources
                .iter()
                .all(|r| r.uri.starts_with("demo://resource/static/document/")),
            "uris: {:?}",
            resources.iter().map(|r| &r.uri).collect::<Vec<_>>()
        );
        Ok(format!("{} resources", resources.len()))
    })
    .await;

    w.check("resources/read a static document", async {
        let resources = client.list_resources().await.ctx("resources/list")?;
        let doc = resources
            .iter()
            .find(|r| r.uri.ends_with(".md"))
            .ok_or("no markdown document")?;
        let r = to_json(&client.read_resource(&doc.uri).await.ctx("resources/read")?);
        ensure_eq(&r["contents"][0]["uri"], &json!(doc.uri), "uri")?;
        ensure_eq(
            &r["contents"][0]["mimeType"],
            &json!("text/markdown"),
            "mimeType",
        )?;
        let text = r["contents"][0]["text"].as_str().unwrap_or("");
        ensure!(
            !text.is_empty() && !text.starts_with("Error reading file"),
            "text {text:?}"
        );
        Ok(format!("{} ({} bytes)", doc.uri, text.len()))
    })
    .await;

    w.check("resources/templates/list", async {
        let t = client
            .list_resource_templates()
            .await
            .ctx("resources/templates/list")?;
        let uris: Vec<&str> = t.iter().map(|t| t.uri_template.as_str()).collect();
        ensure!(
            uris.contains(&"demo://resource/dynamic/text/{resourceId}")
                && uris.contains(&"demo://resource/dynamic/blob/{resourceId}"),
            "templates {uris:?}"
        );
        Ok(String::new())
    })
    .await;

    w.check("resources/read demo://resource/dynamic/text/7", async {
        let r = to_json(
            &client
                .read_resource("demo://resource/dynamic/text/7")
                .await
                .ctx("resources/read")?,
        );
        ensure_eq(
            &r["contents"][0]["uri"],
            &json!("demo://resource/dynamic/text/7"),
            "uri",
        )?;
        ensure_eq(
            &r["contents"][0]["mimeType"],
            &json!("text/plain"),
            "mimeType",
        )?;
        let text = r["contents"][0]["text"].as_str().unwrap_or("");
        ensure!(
            text.starts_with("Resource 7: This is a plaintext resource created at"),
            "text {text:?}"
        );
        Ok(String::new())
    })
    .await;

    w.check("resources/read demo://resource/dynamic/blob/7", async {
        let r = to_json(
            &client
                .read_resource("demo://resource/dynamic/blob/7")
                .await
                .ctx("resources/read")?,
        );
        ensure_eq(
            &r["contents"][0]["uri"],
            &json!("demo://resource/dynamic/blob/7"),
            "uri",
        )?;
        let blob = r["contents"][0]["blob"].as_str().unwrap_or("");
        // base64("Resource 7: ")
        ensure!(blob.starts_with("UmVzb3VyY2UgNzog"), "blob {blob:?}");
        Ok(String::new())
    })
    .await;

    w.check("resources/read unknown URI -> error", async {
        match client.read_resource("demo://resource/dynamic/text/0").await {
            Ok(r) => Err(format!("no error: {}", to_json(&r))),
            Err(e) => Ok(format!("{:?}", e.kind())),
        }
    })
    .await;

    w.check(
        "resources/subscribe + notifications/resources/updated",
        async {
            let mut rx = client
                .subscribe("demo://resource/dynamic/text/1")
                .await
                .ctx("resources/subscribe")?;
            let r = client
                .call_tool("toggle-subscriber-updates", json!({}))
                .await
                .ctx("toggle on")?;
            ensure!(
                texts(&to_json(&r))
                    .join("")
                    .starts_with("Started simulated"),
                "toggle on: {}",
                to_json(&r)
            );
            let update = tokio::time::timeout(Duration::from_secs(3), rx.recv())
                .await
                .ok()
                .flatten();
            client
                .call_tool("toggle-subscriber-updates", json!({}))
                .await
                .ctx("toggle off")?;
            client
                .unsubscribe("demo://resource/dynamic/text/1")
                .await
                .ctx("resources/unsubscribe")?;
            let update = update.ok_or("no notifications/resources/updated within 3 s")?;
            ensure_eq(
                &json!(update.uri),
                &json!("demo://resource/dynamic/text/1"),
                "uri",
            )?;
            Ok(String::new())
        },
    )
    .await;

    // -------------------------------------------------------------------------- prompts
    w.check("prompts/list", async {
        let prompts = client.list_prompts().await.ctx("prompts/list")?;
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        for expected in [
            "simple-prompt",
            "args-prompt",
            "completable-prompt",
            "resource-prompt",
        ] {
            ensure!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        let args = prompts
            .iter()
            .find(|p| p.name == "args-prompt")
            .map(to_json)
            .unwrap_or_default();
        let a: Vec<(Value, Value)> = args["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| (a["name"].clone(), a["required"].clone()))
            .collect();
        ensure!(
            a == [(json!("city"), json!(true)), (json!("state"), json!(false))],
            "args-prompt arguments {a:?}"
        );
        Ok(String::new())
    })
    .await;

    w.check("prompts/get simple-prompt", async {
        let r = client.get_prompt("simple-prompt", BTreeMap::new()).await;
        let r = to_json(&r.ctx("prompts/get")?);
        ensure_eq(
            &r["messages"],
            &json!([{
                "role": "user",
                "content": {"type": "text", "text": "This is a simple prompt without arguments."}
            }]),
            "messages",
        )?;
        Ok(String::new())
    })
    .await;

    w.check("prompts/get args-prompt", async {
        let args = BTreeMap::from([
            ("city".to_owned(), "Berlin".to_owned()),
            ("state".to_owned(), "Brandenburg".to_owned()),
        ]);
        let r = to_json(
            &client
                .get_prompt("args-prompt", args)
                .await
                .ctx("prompts/get")?,
        );
        ensure_eq(
            &r["messages"],
            &json!([{
                "role": "user",
                "content": {"type": "text", "text": "What's weather in Berlin, Brandenburg?"}
            }]),
            "messages",
        )?;
        Ok(String::new())
    })
    .await;

    w.check(
        "prompts/get args-prompt without the required argument -> error",
        async {
            match client.get_prompt("args-prompt", BTreeMap::new()).await {
                Ok(r) => Err(format!("no error: {}", to_json(&r))),
                Err(e) => Ok(format!("{:?}", e.kind())),
            }
        },
    )
    .await;

    w.check("prompts/get resource-prompt (embedded resource)", async {
        let args = BTreeMap::from([
            ("resourceType".to_owned(), "Text".to_owned()),
            ("resourceId".to_owned(), "2".to_owned()),
        ]);
        let r = to_json(
            &client
                .get_prompt("resource-prompt", args)
                .await
                .ctx("prompts/get")?,
        );
        ensure_eq(
            &r["messages"][1]["content"]["type"],
            &json!("resource"),
            "type",
        )?;
        ensure_eq(
            &r["messages"][1]["content"]["resource"]["uri"],
            &json!("demo://resource/dynamic/text/2"),
            "uri",
        )?;
        let text = r["messages"][1]["content"]["resource"]["text"]
            .as_str()
            .unwrap_or("");
        ensure!(
            text.starts_with("Resource 2: This is a plaintext resource"),
            "text {text:?}"
        );
        Ok(String::new())
    })
    .await;

    // ----------------------------------------------------------------------- completion
    w.check("completion/complete ref/prompt department", async {
        let r = client
            .complete(CompleteRequestParams::new(
                Reference::prompt("completable-prompt"),
                "department",
                "S",
            ))
            .await
            .ctx("completion/complete")?;
        ensure_eq(
            &json!(r.completion.values),
            &json!(["Sales", "Support"]),
            "values",
        )?;
        Ok(String::new())
    })
    .await;

    w.check("completion/complete ref/prompt name with context", async {
        let mut params =
            CompleteRequestParams::new(Reference::prompt("completable-prompt"), "name", "");
        params.context = Some(CompletionContext {
            arguments: Some(BTreeMap::from([(
                "department".to_owned(),
                "Engineering".to_owned(),
            )])),
        });
        let r = client.complete(params).await.ctx("completion/complete")?;
        ensure_eq(
            &json!(r.completion.values),
            &json!(["Alice", "Bob", "Charlie"]),
            "values",
        )?;
        Ok(String::new())
    })
    .await;

    w.check("completion/complete ref/resource template", async {
        let r = client
            .complete(CompleteRequestParams::new(
                Reference::resource("demo://resource/dynamic/text/{resourceId}"),
                "resourceId",
                "17",
            ))
            .await
            .ctx("completion/complete")?;
        ensure_eq(&json!(r.completion.values), &json!(["17"]), "values")?;
        Ok(String::new())
    })
    .await;

    w.check("ping after walk", async {
        client.ping().await.ctx("ping").map(|()| String::new())
    })
    .await;

    w.check("shutdown", async {
        match client {
            Conn::Child(child) => {
                let status = child
                    .shutdown_within(Duration::from_millis(500))
                    .await
                    .map_err(|e| format!("shutdown: {e}"))?;
                Ok(format!("server exited: {status}"))
            }
            Conn::Http(client) => {
                client.close();
                // The connection ends once the session is closed (and DELETEd, over
                // Streamable HTTP); a closed client fails calls at once.
                let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
                while !client.is_closed() && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                ensure!(
                    client.is_closed(),
                    "the client is still open 5 s after close"
                );
                ensure!(client.ping().await.is_err(), "ping succeeded after close");
                Ok("client closed".into())
            }
        }
    })
    .await;
}

// ------------------------------------------------------------------------ the fixture walk

/// What `--fixtures` asks for.
struct Fixtures {
    /// The fixture server's expected `serverInfo.name`.
    name: String,
    /// How the client starts (`Discover` unless `--discovery auto`).
    discovery: Discovery,
    /// Whether to check that the handshake (`Discovery::Initialize`) is refused.
    handshake_refused: bool,
}

/// Takes the leading `--fixtures NAME`, `--discovery discover|auto` and `--handshake-refused`
/// flags off `args`.
fn parse_fixture_flags(args: &mut Vec<String>) -> Option<Fixtures> {
    let mut name = None;
    let mut discovery = None;
    let mut handshake_refused = false;
    loop {
        match args.first().map(String::as_str) {
            Some("--fixtures") if args.len() > 1 => {
                name = Some(args[1].clone());
                args.drain(..2);
            }
            Some("--discovery") if args.len() > 1 => {
                discovery = Some(match args[1].as_str() {
                    "discover" => Discovery::Discover,
                    "auto" => Discovery::Auto,
                    _ => usage(),
                });
                args.drain(..2);
            }
            Some("--handshake-refused") => {
                handshake_refused = true;
                args.remove(0);
            }
            Some("--fixtures" | "--discovery") => usage(),
            _ => break,
        }
    }
    match name {
        Some(name) => Some(Fixtures {
            name,
            discovery: discovery.unwrap_or(Discovery::Discover),
            handshake_refused,
        }),
        None if discovery.is_some() || handshake_refused => usage(),
        None => None,
    }
}

/// The fixture walk's client: every protocol version, `discovery`, and handlers answering the
/// fixtures' input requests (recording what they were asked).
fn fixture_options(
    discovery: Discovery,
    asked: &Arc<Mutex<Vec<Value>>>,
    sampled: &Arc<Mutex<Vec<Value>>>,
) -> ClientOptions {
    ClientOptions::new("interop-rs-client", env!("CARGO_PKG_VERSION"))
        .versions(&mcp_proto::ProtocolVersion::ALL)
        .discovery(discovery)
        .roots(vec![Root {
            uri: ROOT_URI.into(),
            name: Some("interop-root".into()),
            meta: None,
        }])
        .sampling({
            let seen = sampled.clone();
            move |params, _cx| {
                let seen = seen.clone();
                async move {
                    let prompt = params
                        .messages
                        .first()
                        .and_then(|m| m.content.blocks().iter().find_map(|b| b.as_text()))
                        .unwrap_or("")
                        .to_owned();
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(to_json(&params));
                    Ok(CreateMessageResult::text(
                        SAMPLING_MODEL,
                        format!("rs says: {prompt}"),
                    ))
                }
            }
        })
        .elicitation({
            let seen = asked.clone();
            move |params, _cx| {
                let seen = seen.clone();
                async move {
                    let p = to_json(&params);
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(p.clone());
                    // One answer per field the form asks for.
                    let mut content = serde_json::Map::new();
                    for field in p["requestedSchema"]["properties"]
                        .as_object()
                        .into_iter()
                        .flat_map(|o| o.keys())
                    {
                        match field.as_str() {
                            "name" => content.insert(field.clone(), json!("Ferris")),
                            "color" => content.insert(field.clone(), json!("orange")),
                            _ => None,
                        };
                    }
                    serde_json::from_value::<ElicitResult>(
                        json!({"action": "accept", "content": content}),
                    )
                    .map_err(|e| Error::internal(format!("building the elicitation result: {e}")))
                }
            }
        })
}

fn take(items: &Mutex<Vec<Value>>) -> Vec<Value> {
    std::mem::take(&mut *items.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Walks a fixture server (`interop/ts2-server.mjs`, `interop/py-server.py`) in the stateless era.
async fn run_fixtures(target: &Target, f: &Fixtures, w: &mut Walk) {
    if !matches!(target, Target::Command(_) | Target::Http(_)) {
        usage();
    }
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sampled: Arc<Mutex<Vec<Value>>> = Arc::default();
    let options = fixture_options(f.discovery, &asked, &sampled);

    let mut conn = None;
    w.check(&format!("connect (Discovery::{:?})", f.discovery), async {
        let c = connect(target, options).await?;
        let info: Value = serde_json::from_str(c.server_info().info.get()).unwrap_or_default();
        ensure!(info["name"] == f.name.as_str(), "serverInfo: {info}");
        ensure_eq(
            &json!(c.protocol_version().as_str()),
            &json!("2026-07-28"),
            "protocol version",
        )?;
        ensure!(
            c.instructions()
                .is_some_and(|i| i.starts_with("Interop fixtures")),
            "instructions: {:?}",
            c.instructions()
        );
        let detail = format!(
            "{} {}, protocol {}",
            info["name"].as_str().unwrap_or("?"),
            info["version"].as_str().unwrap_or("?"),
            c.protocol_version().as_str()
        );
        conn = Some(c);
        Ok(detail)
    })
    .await;
    let Some(client) = conn else { return };

    w.check("tools/list", async {
        let tools = client.list_tools().await.ctx("tools/list")?;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in ["echo", "greet", "two_step", "ask_model", "touch"] {
            ensure!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        let echo = tools
            .iter()
            .find(|t| t.name == "echo")
            .map(to_json)
            .unwrap_or_default();
        ensure_eq(
            &echo["inputSchema"]["required"],
            &json!(["message"]),
            "echo inputSchema.required",
        )?;
        ensure_eq(
            &echo["inputSchema"]["properties"]["message"]["type"],
            &json!("string"),
            "echo inputSchema message type",
        )?;
        Ok(format!("{} tools", tools.len()))
    })
    .await;

    w.check("tools/call echo", async {
        let r = client
            .call_tool("echo", json!({"message": "héllo from Rust ✓"}))
            .await
            .ctx("echo")?;
        let r = to_json(&r);
        ensure_eq(
            &r["content"],
            &json!([{"type": "text", "text": "Echo: héllo from Rust ✓"}]),
            "content",
        )?;
        ensure!(r["isError"] != json!(true), "isError: {r}");
        Ok(String::new())
    })
    .await;

    w.check("tools/call unknown tool -> error", async {
        match client.call_tool("no_such_tool", json!({})).await {
            Err(e) => Ok(format!("{e}")),
            Ok(r) if to_json(&r)["isError"] == json!(true) => Ok("isError result".into()),
            Ok(r) => Err(format!("no error: {}", to_json(&r))),
        }
    })
    .await;

    w.check("MRTR tools/call greet (elicitation handler)", async {
        take(&asked);
        let r = client.call_tool("greet", json!({})).await.ctx("greet")?;
        ensure_eq(
            &json!(texts(&to_json(&r))),
            &json!(["Hello, Ferris!"]),
            "texts",
        )?;
        let asked = take(&asked);
        ensure!(asked.len() == 1, "elicitation handler calls: {asked:?}");
        ensure_eq(
            &asked[0]["message"],
            &json!("What is your name?"),
            "message",
        )?;
        Ok(String::new())
    })
    .await;

    w.check(
        "MRTR tools/call two_step (two rounds, requestState)",
        async {
            take(&asked);
            let r = client
                .call_tool("two_step", json!({}))
                .await
                .ctx("two_step")?;
            ensure_eq(
                &json!(texts(&to_json(&r))),
                &json!(["Ferris likes orange"]),
                "texts",
            )?;
            let messages: Vec<Value> = take(&asked)
                .into_iter()
                .map(|a| a["message"].clone())
                .collect();
            ensure_eq(
                &json!(messages),
                &json!([
                    "Step 1: What is your name?",
                    "Step 2: What is your favorite color?"
                ]),
                "asked",
            )?;
            Ok(String::new())
        },
    )
    .await;

    w.check("MRTR tools/call ask_model (sampling handler)", async {
        take(&sampled);
        let r = client
            .call_tool("ask_model", json!({}))
            .await
            .ctx("ask_model")?;
        ensure_eq(
            &json!(texts(&to_json(&r))),
            &json!(["Model answered: rs says: What is the capital of France?"]),
            "texts",
        )?;
        let sampled = take(&sampled);
        ensure!(sampled.len() == 1, "sampling handler calls: {sampled:?}");
        ensure_eq(&sampled[0]["maxTokens"], &json!(50), "maxTokens")?;
        Ok(String::new())
    })
    .await;

    let greeting = format!("Hello from the {}.", f.name);
    w.check("resources/list", async {
        let resources = client.list_resources().await.ctx("resources/list")?;
        let r = resources
            .iter()
            .find(|r| r.uri == "fixture://greeting")
            .map(to_json)
            .ok_or_else(|| {
                format!(
                    "fixture://greeting missing from {:?}",
                    resources.iter().map(|r| &r.uri).collect::<Vec<_>>()
                )
            })?;
        ensure_eq(&r["mimeType"], &json!("text/plain"), "mimeType")?;
        Ok(format!("{} resources", resources.len()))
    })
    .await;

    w.check("resources/read fixture://greeting", async {
        let r = to_json(
            &client
                .read_resource("fixture://greeting")
                .await
                .ctx("resources/read")?,
        );
        ensure_eq(
            &r["contents"],
            &json!([{"uri": "fixture://greeting", "mimeType": "text/plain", "text": greeting}]),
            "contents",
        )?;
        Ok(String::new())
    })
    .await;

    w.check("prompts/list", async {
        let prompts = client.list_prompts().await.ctx("prompts/list")?;
        let p = prompts
            .iter()
            .find(|p| p.name == "greeting_prompt")
            .map(to_json)
            .ok_or("greeting_prompt missing")?;
        let args: Vec<(Value, Value)> = p["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| (a["name"].clone(), a["required"].clone()))
            .collect();
        ensure!(
            args == [(json!("name"), json!(true))],
            "greeting_prompt arguments {args:?}"
        );
        Ok(format!("{} prompts", prompts.len()))
    })
    .await;

    w.check("prompts/get greeting_prompt", async {
        let args = BTreeMap::from([("name".to_owned(), "Ferris".to_owned())]);
        let r = to_json(
            &client
                .get_prompt("greeting_prompt", args)
                .await
                .ctx("prompts/get")?,
        );
        ensure_eq(
            &r["messages"],
            &json!([{
                "role": "user",
                "content": {"type": "text", "text": "Please greet Ferris warmly."}
            }]),
            "messages",
        )?;
        Ok(String::new())
    })
    .await;

    w.check(
        "completion/complete ref/prompt greeting_prompt name",
        async {
            let r = client
                .complete(CompleteRequestParams::new(
                    Reference::prompt("greeting_prompt"),
                    "name",
                    "Al",
                ))
                .await
                .ctx("completion/complete")?;
            ensure_eq(
                &json!(r.completion.values),
                &json!(["Alice", "Alan"]),
                "values",
            )?;
            Ok(String::new())
        },
    )
    .await;

    w.check(
        "subscriptions/listen (subscribe) + touch -> notifications/resources/updated",
        async {
            let mut rx = client
                .subscribe("fixture://greeting")
                .await
                .ctx("subscribe (subscriptions/listen)")?;
            let r = client.call_tool("touch", json!({})).await.ctx("touch")?;
            ensure_eq(
                &json!(texts(&to_json(&r))),
                &json!(["touched fixture://greeting"]),
                "touch texts",
            )?;
            let update = tokio::time::timeout(Duration::from_secs(3), rx.recv())
                .await
                .ok()
                .flatten();
            client
                .unsubscribe("fixture://greeting")
                .await
                .ctx("unsubscribe")?;
            let update = update.ok_or("no notifications/resources/updated within 3 s")?;
            ensure_eq(&json!(update.uri), &json!("fixture://greeting"), "uri")?;
            Ok(String::new())
        },
    )
    .await;

    if f.handshake_refused {
        w.check("the handshake (Discovery::Initialize) is refused", async {
            let options = ClientOptions::new("interop-rs-client", env!("CARGO_PKG_VERSION"))
                .discovery(Discovery::Initialize);
            match connect(target, options).await {
                Ok(c) => Err(format!(
                    "the handshake succeeded, protocol {}",
                    c.protocol_version().as_str()
                )),
                Err(e) => {
                    // -32022 UnsupportedProtocolVersion (its data names 2026-07-28).
                    ensure!(
                        e.contains("-32022"),
                        "not an unsupported-version refusal: {e}"
                    );
                    Ok(e)
                }
            }
        })
        .await;
    }

    w.check("shutdown", async {
        match client {
            Conn::Child(child) => {
                let status = child
                    .shutdown_within(Duration::from_millis(2000))
                    .await
                    .map_err(|e| format!("shutdown: {e}"))?;
                Ok(format!("server exited: {status}"))
            }
            Conn::Http(client) => {
                client.close();
                let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
                while !client.is_closed() && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                ensure!(
                    client.is_closed(),
                    "the client is still open 5 s after close"
                );
                ensure!(
                    client
                        .call_tool("echo", json!({"message": "x"}))
                        .await
                        .is_err(),
                    "a call succeeded after close"
                );
                Ok("client closed".into())
            }
        }
    })
    .await;
}
