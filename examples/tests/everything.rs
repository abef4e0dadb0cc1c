//! The `everything` server against a typed client over an in-memory pipe on tokio: every
//! fixture, with the checks the MCP conformance suite (`@modelcontextprotocol/conformance`
//! 0.1.16, `src/scenarios/server/*.ts`) makes on it, and a few stricter ones.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use mcp_examples::everything::{self, server};
use mcp_proto::Instant;
use mcp_service::client::ToolStreamItem;
use mcp_service::schema::*;
use mcp_service::{
    BoxFuture, ByteStream, Client, ClientOptions, Clock, ErrorKind, Runtime, Server,
};
use serde_json::{Value, json};
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

async fn pair(server: Server, options: ClientOptions) -> Client {
    let rt = Tokio {
        clock: Clock::new(),
    };
    let (a, b) = tokio::io::duplex(256 * 1024);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let srt = rt.clone();
    tokio::spawn(async move {
        let _ = server
            .serve(srt, ByteStream::new(ar.compat(), aw.compat_write()))
            .await;
    });
    Client::connect(rt, ByteStream::new(br.compat(), bw.compat_write()), options)
        .await
        .unwrap()
}

/// What the client saw the server ask for.
#[derive(Default)]
struct Asked {
    sampling: Mutex<Vec<CreateMessageRequestParams>>,
    elicitation: Mutex<Vec<Value>>,
}

/// A client like the suite's: `sampling` and `elicitation` capabilities, answering as the
/// suite's handlers do.
fn conformance_client(asked: Arc<Asked>) -> ClientOptions {
    let a1 = asked.clone();
    let a2 = asked;
    ClientOptions::new("conformance-test-client", "1.0.0")
        .sampling(move |p: CreateMessageRequestParams, _cx| {
            a1.sampling.lock().unwrap().push(p);
            let text = "This is a test response from the client";
            async move { Ok(CreateMessageResult::text("test-model", text)) }
        })
        .elicitation(move |p: ElicitRequestParams, _cx| {
            let v = serde_json::to_value(&p).unwrap();
            a2.elicitation.lock().unwrap().push(v.clone());
            // The suite's answers, picked by the form's fields.
            let props = &v["requestedSchema"]["properties"];
            let content = if props.get("username").is_some() {
                json!({"username": "testuser", "email": "test@example.com"})
            } else if props.get("verified").is_some() {
                json!({
                    "name": "Jane Smith", "age": 25, "score": 88, "status": "inactive",
                    "verified": false
                })
            } else {
                json!({
                    "untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                    "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]
                })
            };
            let result = json!({"action": "accept", "content": content});
            async move { Ok(serde_json::from_value(result).unwrap()) }
        })
}

fn texts(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(str::to_owned))
        .collect()
}

fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

/// Standard base64 (with padding), enough to check the fixtures' media.
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in bytes {
        acc = (acc << 6) | u32::from(value(c));
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[test]
fn media_fixtures_are_well_formed() {
    let png = base64_decode(everything::TEST_IMAGE_PNG_BASE64);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(&png[16..24], &[0, 0, 0, 1, 0, 0, 0, 1], "1x1");
    assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");

    let wav = base64_decode(everything::TEST_AUDIO_WAV_BASE64);
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(u32_le(&wav[4..8]) as usize, wav.len() - 8, "RIFF size");
    assert_eq!(&wav[8..16], b"WAVEfmt ");
    let (channels, rate, byte_rate, align, bits) = (
        u16::from_le_bytes([wav[22], wav[23]]),
        u32_le(&wav[24..28]),
        u32_le(&wav[28..32]),
        u16::from_le_bytes([wav[32], wav[33]]),
        u16::from_le_bytes([wav[34], wav[35]]),
    );
    assert_eq!((channels, rate, bits), (1, 8000, 16));
    assert_eq!(byte_rate, rate * u32::from(align));
    assert_eq!(&wav[36..40], b"data");
    assert_eq!(u32_le(&wav[40..44]) as usize, wav.len() - 44, "data size");
}

// tools.ts: ToolsListScenario, json-schema-2020-12.ts
#[tokio::test]
async fn tools_list() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    client.ping().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "json_schema_2020_12_tool",
        "test_reconnection",
        "echo",
        "slow",
        "stream",
        "touch_watched",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for t in &tools {
        assert!(
            t.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{} has no description",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
    }

    let tool = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    let schema = Value::Object(tool.input_schema.clone());
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["$defs"].get("address").is_some());
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema, everything::json_schema_2020_12());
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(
        Value::Object(echo.input_schema.clone()),
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})
    );

    let r = client
        .call_tool(
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "address": {"city": "London"}}),
        )
        .await
        .unwrap();
    // Key order depends on serde_json's `preserve_order` (unified across the workspace in
    // tests): compare the echoed arguments as JSON.
    let text = texts(&r).join("");
    let echoed = text
        .strip_prefix("JSON Schema 2020-12 tool called with: ")
        .expect("the fixture's prefix");
    assert_eq!(
        serde_json::from_str::<Value>(echoed).unwrap(),
        json!({"address": {"city": "London"}, "name": "Ada"})
    );
}

// tools.ts: simple text, image, audio, embedded resource, mixed content, error
#[tokio::test]
async fn content_tools() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;

    let r = client
        .call_tool("test_simple_text", Value::Null)
        .await
        .unwrap();
    assert_eq!(
        json_of(&r.content),
        json!([{"type":"text","text":"This is a simple text response for testing."}])
    );

    let r = client
        .call_tool("test_image_content", json!({}))
        .await
        .unwrap();
    assert_eq!(
        json_of(&r.content),
        json!([{"type":"image","data":everything::TEST_IMAGE_PNG_BASE64,"mimeType":"image/png"}])
    );

    let r = client
        .call_tool("test_audio_content", json!({}))
        .await
        .unwrap();
    assert_eq!(
        json_of(&r.content),
        json!([{"type":"audio","data":everything::TEST_AUDIO_WAV_BASE64,"mimeType":"audio/wav"}])
    );

    let r = client
        .call_tool("test_embedded_resource", json!({}))
        .await
        .unwrap();
    assert_eq!(
        json_of(&r.content),
        json!([{"type":"resource","resource":{
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content."
        }}])
    );

    let r = client
        .call_tool("test_multiple_content_types", json!({}))
        .await
        .unwrap();
    assert_eq!(
        json_of(&r.content),
        json!([
            {"type":"text","text":"Multiple content types test:"},
            {"type":"image","data":everything::TEST_IMAGE_PNG_BASE64,"mimeType":"image/png"},
            {"type":"resource","resource":{
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": "{\"test\":\"data\",\"value\":123}"
            }}
        ])
    );

    let r = client
        .call_tool("test_error_handling", json!({}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(texts(&r), [everything::ERROR_TEXT]);

    let r = client
        .call_tool("test_reconnection", json!({}))
        .await
        .unwrap();
    assert!(texts(&r)[0].starts_with("Reconnection test completed successfully."));

    let r = client
        .call_tool("echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(json_of(&r.content), json!([{"type":"text","text":"hello"}]));
    let r = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true), "missing `text`");
}

// tools.ts: ToolsCallWithLoggingScenario (level `debug`, at least 3 messages)
#[tokio::test]
async fn logging_tool() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    let mut logs = client.log_messages();
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let started = std::time::Instant::now();
    let r = client
        .call_tool("test_tool_with_logging", json!({}))
        .await
        .unwrap();
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(100),
        "two ~50 ms pauses"
    );
    assert_eq!(texts(&r), ["Tool with logging executed successfully"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let m = logs.next().await.unwrap();
        assert_eq!(m.level, LoggingLevel::Info);
        seen.push(m.data);
    }
    assert_eq!(
        seen,
        [
            json!("Tool execution started"),
            json!("Tool processing data"),
            json!("Tool execution completed")
        ]
    );

    // The level filters: nothing at `error`.
    client.set_logging_level(LoggingLevel::Error).await.unwrap();
    client
        .call_tool("test_tool_with_logging", json!({}))
        .await
        .unwrap();
    assert!(logs.try_next().is_none(), "no log message above the level");
}

// tools.ts: ToolsCallWithProgressScenario (at least 3, non-decreasing)
#[tokio::test]
async fn progress_tool() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let r = client
        .call_tool("test_tool_with_progress", json!({}))
        .progress(move |p| s2.lock().unwrap().push((p.progress, p.total)))
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (0.0, Some(100.0)),
            (50.0, Some(100.0)),
            (100.0, Some(100.0))
        ]
    );
    assert!(texts(&r)[0].starts_with("Tool with progress executed successfully (progress token "));

    // Without a token: no notifications, same pauses, still a result.
    let r = client
        .call_tool("test_tool_with_progress", json!({}))
        .await
        .unwrap();
    assert_eq!(
        texts(&r),
        ["Tool with progress executed successfully (no progress token)"]
    );
}

// tools.ts: sampling and elicitation; elicitation-defaults.ts; elicitation-enums.ts
#[tokio::test]
async fn sampling_and_elicitation() {
    let asked = Arc::new(Asked::default());
    let client = pair(server(), conformance_client(asked.clone())).await;

    let r = client
        .call_tool(
            "test_sampling",
            json!({"prompt": "Test prompt for sampling"}),
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&r),
        ["LLM response: This is a test response from the client"]
    );
    {
        let sampling = asked.sampling.lock().unwrap();
        assert_eq!(sampling.len(), 1, "the server asked the client");
        assert_eq!(
            json_of(&sampling[0]),
            json!({
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "Test prompt for sampling"}
                    }
                ],
                "maxTokens": 100
            })
        );
    }

    let r = client
        .call_tool(
            "test_elicitation",
            json!({"message": "Please provide your information"}),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, None);
    assert_eq!(
        texts(&r),
        [concat!(
            "User response: action=accept, ",
            r#"content={"email":"test@example.com","username":"testuser"}"#
        )]
    );
    {
        let e = asked.elicitation.lock().unwrap();
        assert_eq!(e[0]["message"], "Please provide your information");
        assert_eq!(
            e[0]["requestedSchema"]["required"],
            json!(["username", "email"])
        );
    }

    // SEP-1034: defaults of every primitive type.
    let r = client
        .call_tool("test_elicitation_sep1034_defaults", json!({}))
        .await
        .unwrap();
    assert!(
        texts(&r)[0].starts_with("Elicitation completed: action=accept, content={"),
        "{:?}",
        texts(&r)
    );
    let p = asked.elicitation.lock().unwrap()[1]["requestedSchema"]["properties"].clone();
    assert_eq!(
        (p["name"]["type"].clone(), p["name"]["default"].clone()),
        (json!("string"), json!("John Doe"))
    );
    assert_eq!(p["age"]["type"], "integer");
    assert_eq!(p["age"]["default"].as_f64(), Some(30.0));
    assert_eq!(p["score"]["type"], "number");
    assert_eq!(p["score"]["default"].as_f64(), Some(95.5));
    assert_eq!(p["status"]["type"], "string");
    assert_eq!(
        p["status"]["enum"],
        json!(["active", "inactive", "pending"])
    );
    assert_eq!(p["status"]["default"], "active");
    assert_eq!(
        (
            p["verified"]["type"].clone(),
            p["verified"]["default"].clone()
        ),
        (json!("boolean"), json!(true))
    );

    // SEP-1330: the five enum shapes.
    let r = client
        .call_tool("test_elicitation_sep1330_enums", json!({}))
        .await
        .unwrap();
    assert!(texts(&r)[0].starts_with("Elicitation completed: action=accept, content={"));
    let p = asked.elicitation.lock().unwrap()[2]["requestedSchema"]["properties"].clone();
    let s = &p["untitledSingle"];
    assert_eq!(
        (s["type"].as_str(), s["enum"].is_array()),
        (Some("string"), true)
    );
    assert!(s.get("oneOf").is_none() && s.get("enumNames").is_none());
    let s = &p["titledSingle"];
    assert_eq!(s["type"], "string");
    assert!(s.get("enum").is_none());
    for o in s["oneOf"].as_array().unwrap() {
        assert!(o["const"].is_string() && o["title"].is_string());
    }
    let s = &p["legacyEnum"];
    assert_eq!(s["type"], "string");
    assert_eq!(
        s["enum"].as_array().unwrap().len(),
        s["enumNames"].as_array().unwrap().len()
    );
    let s = &p["untitledMulti"];
    assert_eq!(
        (s["type"].as_str(), s["items"]["type"].as_str()),
        (Some("array"), Some("string"))
    );
    assert!(s["items"]["enum"].is_array() && s["items"].get("anyOf").is_none());
    let s = &p["titledMulti"];
    assert_eq!(s["type"], "array");
    assert!(s["items"].get("enum").is_none());
    for o in s["items"]["anyOf"].as_array().unwrap() {
        assert!(o["const"].is_string() && o["title"].is_string());
    }
}

// "If the client doesn't support sampling / elicitation, return an error."
#[tokio::test]
async fn sampling_and_elicitation_need_the_capability() {
    let client = pair(server(), ClientOptions::new("bare", "1")).await;
    let r = client
        .call_tool("test_sampling", json!({"prompt": "x"}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    for (name, args) in [
        ("test_elicitation", json!({"message": "x"})),
        ("test_elicitation_sep1034_defaults", json!({})),
        ("test_elicitation_sep1330_enums", json!({})),
    ] {
        let r = client.call_tool(name, args).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{name}");
        assert!(
            texts(&r)[0].starts_with("Elicitation not supported"),
            "{name}"
        );
    }
}

// resources.ts
#[tokio::test]
async fn resources() {
    let server = server();
    let client = pair(server.clone(), ClientOptions::new("t", "1")).await;

    let list = client.list_resources().await.unwrap();
    let uris: Vec<&str> = list.iter().map(|r| r.uri.as_str()).collect();
    for uri in [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ] {
        assert!(uris.contains(&uri), "{uri}");
    }
    for r in &list {
        assert!(
            !r.name.is_empty() && r.description.is_some() && r.mime_type.is_some(),
            "{}",
            r.uri
        );
    }
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].uri_template, "test://template/{id}/data");

    let r = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(
        json_of(&r.contents),
        json!([{
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }])
    );
    let r = client.read_resource("test://static-binary").await.unwrap();
    assert_eq!(
        json_of(&r.contents),
        json!([{
            "uri": "test://static-binary",
            "mimeType": "image/png",
            "blob": everything::TEST_IMAGE_PNG_BASE64
        }])
    );
    let r = client
        .read_resource("test://template/123/data")
        .await
        .unwrap();
    let c = json_of(&r.contents);
    assert_eq!(
        (c[0]["uri"].as_str(), c[0]["mimeType"].as_str()),
        (Some("test://template/123/data"), Some("application/json"))
    );
    let body: Value = serde_json::from_str(c[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"id":"123","templateTest":true,"data":"Data for ID: 123"})
    );
    let e = client
        .read_resource("test://template//data")
        .await
        .unwrap_err();
    // "Resource not found" is -32002 in the handshake era and -32602 with `data.uri` in
    // 2026-07-28 (the default's era with this server); the client reports both as NotFound.
    let code = if client.protocol_version().is_stateless() {
        -32602
    } else {
        -32002
    };
    assert_eq!((e.kind(), e.code()), (ErrorKind::NotFound, code));

    // Subscribe, change, get told, read the change; unsubscribe, change, not told.
    let r = client.read_resource(everything::WATCHED_URI).await.unwrap();
    assert_eq!(json_of(&r.contents)[0]["text"], everything::WATCHED_TEXT);
    let mut updates = client.subscribe(everything::WATCHED_URI).await.unwrap();
    let r = client.call_tool("touch_watched", json!({})).await.unwrap();
    assert_eq!(
        texts(&r),
        ["test://watched-resource is now at revision 1; 1 subscribed connection(s) notified"]
    );
    assert_eq!(updates.next().await.unwrap().uri, everything::WATCHED_URI);
    let r = client.read_resource(everything::WATCHED_URI).await.unwrap();
    assert_eq!(
        json_of(&r.contents)[0]["text"],
        "Watched resource content (revision 1)"
    );
    client.unsubscribe(everything::WATCHED_URI).await.unwrap();
    let r = client.call_tool("touch_watched", json!({})).await.unwrap();
    assert!(texts(&r)[0].ends_with("; 0 subscribed connection(s) notified"));
    assert_eq!(server.resource_updated(everything::WATCHED_URI), 0);
}

// sep-2640 (skills extension)
#[tokio::test]
async fn skills() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    let caps: Value = serde_json::from_str(client.server_info().capabilities.get()).unwrap();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    let entry = &skills[0];
    assert_eq!(entry.uri, everything::SKILL_URI);
    assert_eq!(entry.name(), Some("everything-tour"));
    assert_eq!(entry.resources.listed().len(), 3);
    assert_eq!(
        &client.get_skill(everything::SKILL_URI).await.unwrap(),
        entry
    );
    let listed = client.list_resources().await.unwrap();
    let md = listed
        .iter()
        .find(|r| r.uri == everything::SKILL_URI)
        .unwrap();
    assert_eq!(
        (md.name.as_str(), md.mime_type.as_deref()),
        ("everything-tour", Some("text/markdown"))
    );
    // A subdirectory to descend into.
    let root = client
        .read_directory("skill://everything-tour")
        .await
        .unwrap();
    let sub = root
        .iter()
        .find(|r| r.mime_type.as_deref() == Some("inode/directory"))
        .unwrap();
    assert_eq!(sub.uri, "skill://everything-tour/references");
    assert_eq!(client.read_directory(&sub.uri).await.unwrap().len(), 2);
    let skill = client.load_skill(entry).await.unwrap();
    assert!(skill.body().contains("references/TOOLS.md"));
    let tools = client
        .read_skill_file(&skill, "references/TOOLS.md")
        .await
        .unwrap();
    assert!(tools.verified && tools.text().unwrap().contains("`echo`"));
}

// prompts.ts
#[tokio::test]
async fn prompts() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    let list = client.list_prompts().await.unwrap();
    let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_input_required_result_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt"
        ]
    );
    for p in &list {
        assert!(p.description.is_some(), "{}", p.name);
    }
    let with_args = list
        .iter()
        .find(|p| p.name == "test_prompt_with_arguments")
        .unwrap();
    assert_eq!(
        json_of(&with_args.arguments),
        json!([
            {"name":"arg1","description":"First test argument","required":true},
            {"name":"arg2","description":"Second test argument","required":true}
        ])
    );

    let p = client
        .get_prompt("test_simple_prompt", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(
        json_of(&p.messages),
        json!([{
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."}
        }])
    );

    let args = BTreeMap::from([
        ("arg1".to_owned(), "testValue1".to_owned()),
        ("arg2".to_owned(), "testValue2".to_owned()),
    ]);
    let p = client
        .get_prompt("test_prompt_with_arguments", args)
        .await
        .unwrap();
    assert_eq!(
        p.messages[0].content.as_text(),
        Some("Prompt with arguments: arg1='testValue1', arg2='testValue2'")
    );
    let e = client
        .get_prompt(
            "test_prompt_with_arguments",
            BTreeMap::from([("arg1".to_owned(), "x".to_owned())]),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "arg2 is required");

    let args = BTreeMap::from([(
        "resourceUri".to_owned(),
        "test://example-resource".to_owned(),
    )]);
    let p = client
        .get_prompt("test_prompt_with_embedded_resource", args)
        .await
        .unwrap();
    assert_eq!(
        json_of(&p.messages),
        json!([
            {"role":"user","content":{"type":"resource","resource":{
                "uri": "test://example-resource",
                "mimeType": "text/plain",
                "text": "Embedded resource content for testing."
            }}},
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."}
            }
        ])
    );

    let p = client
        .get_prompt("test_prompt_with_image", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(
        json_of(&p.messages),
        json!([
            {"role": "user", "content": {
                "type": "image",
                "data": everything::TEST_IMAGE_PNG_BASE64,
                "mimeType": "image/png"
            }},
            {"role":"user","content":{"type":"text","text":"Please analyze the image above."}}
        ])
    );
}

// lifecycle.ts: CompletionCompleteScenario (a `values` array), and the suggestions themselves
#[tokio::test]
async fn completion() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;
    let complete = |reference: Reference, arg: &str, value: &str| {
        client.complete(CompleteRequestParams::new(reference, arg, value))
    };
    let r = complete(
        Reference::prompt("test_prompt_with_arguments"),
        "arg1",
        "test",
    )
    .await
    .unwrap();
    assert_eq!(r.completion.values, ["testValue1"]);
    let r = complete(
        Reference::prompt("test_prompt_with_arguments"),
        "arg1",
        "par",
    )
    .await
    .unwrap();
    assert_eq!(
        json_of(&r.completion),
        json!({"values":["paris","park","party"],"total":3,"hasMore":false})
    );
    let r = complete(
        Reference::prompt("test_prompt_with_embedded_resource"),
        "resourceUri",
        "test://s",
    )
    .await
    .unwrap();
    assert_eq!(
        r.completion.values,
        ["test://static-text", "test://static-binary"]
    );
    let r = complete(Reference::resource("test://template/{id}/data"), "id", "1")
        .await
        .unwrap();
    assert_eq!(r.completion.values, ["1", "123"]);
    let r = complete(Reference::prompt("nope"), "x", "").await.unwrap();
    assert!(r.completion.values.is_empty());
}

// The extras: `slow` (progress, cancellation) and `stream`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_stream() {
    let client = pair(server(), ClientOptions::new("t", "1")).await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let r = client
        .call_tool("slow", json!({"steps": 3, "delay_ms": 5}))
        .progress(move |p| s2.lock().unwrap().push((p.progress, p.total, p.message)))
        .await
        .unwrap();
    assert_eq!(texts(&r), ["slow: done after 3 steps"]);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (1.0, Some(3.0), Some("step 1 of 3".to_owned())),
            (2.0, Some(3.0), Some("step 2 of 3".to_owned())),
            (3.0, Some(3.0), Some("step 3 of 3".to_owned())),
        ]
    );
    // Defaults: 10 steps of 100 ms.
    let count = Arc::new(Mutex::new(0));
    let c2 = count.clone();
    let started = std::time::Instant::now();
    let r = client
        .call_tool("slow", json!({}))
        .progress(move |_| *c2.lock().unwrap() += 1)
        .await
        .unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(1000));
    assert_eq!(
        (texts(&r)[0].as_str(), *count.lock().unwrap()),
        ("slow: done after 10 steps", 10)
    );

    // Cancellation: a timeout cancels the call; the connection goes on.
    let e = client
        .call_tool("slow", json!({"steps": 100, "delay_ms": 50}))
        .timeout(mcp_proto::Duration::from_millis(120))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let slow = client.call_tool("slow", json!({"steps": 100, "delay_ms": 50}));
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(60), slow.into_future())
            .await
            .is_err()
    );
    client.ping().await.unwrap();

    // Streaming: each item arrives on its own, then the result repeating them.
    let mut stream = client.call_tool_stream("stream", json!({"count": 3, "delay_ms": 5}));
    let (mut partial, mut done) = (Vec::new(), None);
    while let Some(item) = stream.next().await {
        match item {
            ToolStreamItem::Partial(c) => partial.push(c.as_text().unwrap().to_owned()),
            ToolStreamItem::Done(r) => done = Some(r.unwrap()),
            _ => {}
        }
    }
    assert_eq!(partial, ["item 1 of 3", "item 2 of 3", "item 3 of 3"]);
    assert_eq!(
        texts(&done.unwrap()),
        [
            "item 1 of 3",
            "item 2 of 3",
            "item 3 of 3",
            "stream: 3 items sent"
        ]
    );
    // A plain call gets the same content at the end.
    let r = client
        .call_tool("stream", json!({"count": 2, "delay_ms": 1}))
        .await
        .unwrap();
    assert_eq!(
        texts(&r),
        ["item 1 of 2", "item 2 of 2", "stream: 2 items sent"]
    );
}

// The server notices the cancellation (telemetry records the inbound call as cancelled).
#[tokio::test]
async fn cancellation_is_observed() {
    let mut telemetry = mcp_service::Telemetry::default();
    let mut events = telemetry.subscribe();
    let client = pair(
        everything::server_with(|b| b.telemetry(telemetry)),
        ClientOptions::new("t", "1"),
    )
    .await;
    let e = client
        .call_tool("slow", json!({"steps": 100, "delay_ms": 20}))
        .timeout(mcp_proto::Duration::from_millis(50))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while let Some(e) = events.next().await {
            if let mcp_service::TelemetryEvent::RequestCompleted {
                direction: mcp_service::telemetry::Direction::Inbound,
                method,
                outcome,
                ..
            } = e
                && method == "tools/call"
            {
                return outcome;
            }
        }
        panic!("telemetry ended");
    })
    .await
    .unwrap();
    assert_eq!(outcome, mcp_service::telemetry::Outcome::Cancelled);
}

/// A runtime with no async runtime behind it: a thread per task, `async-io` timers.
#[derive(Clone)]
struct Threads {
    clock: Clock,
}

impl Runtime for Threads {
    fn now(&self) -> Instant {
        self.clock.now()
    }
    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        let at = self.clock.to_std(deadline);
        Box::pin(async move {
            async_io::Timer::at(at).await;
        })
    }
    fn spawn(&self, fut: BoxFuture<()>) {
        std::thread::spawn(move || futures_lite::future::block_on(fut));
    }
}

// Runtime neutrality: the handlers that wait work without tokio (a Unix socket pair driven by
// async-io, plain threads, `block_on`).
#[test]
fn runs_without_tokio() {
    use async_io::Async;
    use std::os::unix::net::UnixStream;

    futures_lite::future::block_on(async {
        let rt = Threads {
            clock: Clock::new(),
        };
        let (a, b) = Async::<UnixStream>::pair().unwrap();
        let (ar, aw) = futures_lite::io::split(a);
        let (br, bw) = futures_lite::io::split(b);
        let server = server();
        let srt = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = server.serve(srt, ByteStream::new(ar, aw)).await;
        }));
        let client = Client::connect(rt, ByteStream::new(br, bw), ClientOptions::new("t", "1"))
            .await
            .unwrap();

        let mut logs = client.log_messages();
        // In 2026-07-28 (the default's era here) a server logs only at a level the request
        // asks for; in the handshake era this changes nothing.
        client.set_logging_level(LoggingLevel::Debug).await.unwrap();
        let r = client
            .call_tool("test_tool_with_logging", json!({}))
            .await
            .unwrap();
        assert_eq!(texts(&r), ["Tool with logging executed successfully"]);
        for expected in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ] {
            assert_eq!(logs.next().await.unwrap().data, json!(expected));
        }
        let progress = Arc::new(Mutex::new(Vec::new()));
        let p2 = progress.clone();
        let r = client
            .call_tool("slow", json!({"steps": 3, "delay_ms": 10}))
            .progress(move |p| p2.lock().unwrap().push(p.progress))
            .await
            .unwrap();
        assert_eq!(texts(&r), ["slow: done after 3 steps"]);
        assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);
        let r = client
            .call_tool("stream", json!({"count": 2, "delay_ms": 5}))
            .await
            .unwrap();
        assert_eq!(
            texts(&r),
            ["item 1 of 2", "item 2 of 2", "stream: 2 items sent"]
        );
        client.close();
    });
}

// stateless.ts: the list-changed hooks, heard by a handshake-era client and, on its listen
// stream, by a 2026-07-28 one.
#[tokio::test]
async fn list_change_hooks() {
    use mcp_service::client::ServerNotification;
    let srv = everything::server_with(|b| b.versions(&mcp_proto::ProtocolVersion::ALL));
    let old = pair(
        srv.clone(),
        ClientOptions::new("t", "1").discovery(mcp_proto::session::Discovery::Initialize),
    )
    .await;
    let new = pair(
        srv.clone(),
        ClientOptions::new("t", "1").discovery(mcp_proto::session::Discovery::Discover),
    )
    .await;
    assert!(new.protocol_version().is_stateless());
    let mut old_notes = old.notifications();
    let mut new_notes = new.notifications();
    // The listen stream is opened in the background: wait until it is acknowledged.
    let _ = new.subscribe(everything::WATCHED_URI).await.unwrap();

    let r = new
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    assert_eq!(
        texts(&r),
        ["test_dynamic_tool added: the tool list changed"]
    );
    let names = |tools: Vec<Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert!(names(old.list_tools().await.unwrap()).contains(&everything::DYNAMIC_TOOL.into()));
    for notes in [&mut old_notes, &mut new_notes] {
        assert!(matches!(
            notes.next().await,
            Some(ServerNotification::ToolsListChanged)
        ));
    }
    let r = old
        .call_tool("test_trigger_prompt_change", json!({}))
        .await
        .unwrap();
    assert_eq!(
        texts(&r),
        ["test_dynamic_prompt added: the prompt list changed"]
    );
    for notes in [&mut old_notes, &mut new_notes] {
        assert!(matches!(
            notes.next().await,
            Some(ServerNotification::PromptsListChanged)
        ));
    }
    // Toggled back: the dynamic tool is gone again.
    old.call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    assert!(!names(new.list_tools().await.unwrap()).contains(&everything::DYNAMIC_TOOL.into()));
    old.close();
    new.close();
}
