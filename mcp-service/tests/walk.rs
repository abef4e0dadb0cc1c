//! The whole method surface, typed server against typed client, over an in-memory byte pipe on
//! tokio (the drivers run the same walk over every transport and runtime).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use mcp_proto::Instant;
use mcp_service::client::{ServerNotification, ToolStreamItem};
use mcp_service::schema::*;
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{
    BoxFuture, ByteStream, Client, ClientOptions, Clock, Error, ErrorKind, Runtime, Server,
};
use serde::Deserialize;
use serde_json::json;
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

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize)]
struct SlowArgs {
    steps: u32,
    #[serde(default)]
    delay_ms: u64,
}

fn server() -> Server {
    let obj = |v| schema_of(v);
    Server::builder("walk-server", "1.0")
        .instructions("a test server")
        .logging()
        .resource_subscriptions()
        .page_size(2)
        .tool(
            Tool::new("echo", obj(json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}))),
            |a: EchoArgs, _cx: ToolContext| async move { Ok(CallToolResult::text(a.text)) },
        )
        .tool(
            Tool::new("slow", obj(json!({"type":"object"}))),
            |a: SlowArgs, cx: ToolContext| async move {
                for i in 1..=a.steps {
                    tokio::time::sleep(std::time::Duration::from_millis(a.delay_ms)).await;
                    cx.progress(f64::from(i), Some(f64::from(a.steps)), Some("working")).await?;
                }
                Ok(CallToolResult::text("slow done"))
            },
        )
        .tool(Tool::new("stream", obj(json!({"type":"object"}))), |_: serde_json::Value, cx: ToolContext| async move {
            for i in 0..3 {
                cx.stream(Content::text(format!("part {i}"))).await?;
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            Ok(CallToolResult::text("end"))
        })
        .tool(Tool::new("fail", obj(json!({"type":"object"}))), |_: serde_json::Value, _cx: ToolContext| async move {
            Err::<CallToolResult, _>(Error::handler_failed("it broke"))
        })
        .tool(Tool::new("sample", obj(json!({"type":"object"}))), |_: serde_json::Value, cx: ToolContext| async move {
            let r = cx
                .create_message(serde_json::from_value(json!({
                    "messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10
                })).unwrap())
                .await?;
            Ok(CallToolResult::text(format!("model said {}", serde_json::to_string(&r.content).unwrap())))
        })
        .tool(Tool::new("elicit", obj(json!({"type":"object"}))), |_: serde_json::Value, cx: ToolContext| async move {
            let r = cx
                .elicit(serde_json::from_value(json!({
                    "message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}
                })).unwrap())
                .await?;
            Ok(CallToolResult::text(serde_json::to_string(&r).unwrap()))
        })
        .tool(Tool::new("roots", obj(json!({"type":"object"}))), |_: serde_json::Value, cx: ToolContext| async move {
            let r = cx.list_roots().await?;
            Ok(CallToolResult::text(r.roots.iter().map(|r| r.uri.clone()).collect::<Vec<_>>().join(",")))
        })
        .tool(Tool::new("log", obj(json!({"type":"object"}))), |_: serde_json::Value, cx: ToolContext| async move {
            cx.log(LoggingLevel::Debug, Some("t"), "debug line").await?;
            cx.log(LoggingLevel::Error, Some("t"), "error line").await?;
            Ok(CallToolResult::text("logged"))
        })
        .resource(
            serde_json::from_value(json!({"uri":"test://static","name":"static","mimeType":"text/plain"})).unwrap(),
            |uri: String, _cx| async move { Ok(vec![ResourceContents::text(uri, "static text")]) },
        )
        .resource_template(
            serde_json::from_value(json!({"uriTemplate":"test://item/{id}","name":"item"})).unwrap(),
            |uri: String, vars: HashMap<String, String>, _cx| async move {
                Ok(vec![ResourceContents::text(uri, format!("item {}", vars["id"]))])
            },
        )
        .prompt(
            serde_json::from_value(json!({"name":"greet","arguments":[{"name":"who","required":true}]})).unwrap(),
            |args: BTreeMap<String, String>, _cx| async move {
                Ok(serde_json::from_value::<GetPromptResult>(json!({
                    "messages":[{"role":"user","content":{"type":"text","text":format!("hello {}", args["who"])}}]
                })).unwrap())
            },
        )
        .completion(|p: CompleteRequestParams, _cx| async move {
            let all = ["alpha", "beta", "alps"];
            Ok(Completion {
                values: all.iter().filter(|v| v.starts_with(&p.argument.value)).map(|v| v.to_string()).collect(),
                total: None,
                has_more: Some(false),
            })
        })
        .build()
}

async fn pair(server: Server, options: ClientOptions) -> Client {
    let rt = Tokio {
        clock: Clock::new(),
    };
    let (a, b) = tokio::io::duplex(64 * 1024);
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

fn client_options() -> ClientOptions {
    ClientOptions::new("walk-client", "1.0")
        .sampling(|p: CreateMessageRequestParams, _cx| async move {
            assert_eq!(p.max_tokens, 10);
            Ok(serde_json::from_value(json!({
                "role":"assistant","content":{"type":"text","text":"hello human"},"model":"test-model"
            })).unwrap())
        })
        .elicitation(|_p, _cx| async move { Ok(serde_json::from_value(json!({"action":"accept","content":{"name":"Ada"}})).unwrap()) })
        .roots(vec![serde_json::from_value(json!({"uri":"file:///tmp","name":"tmp"})).unwrap()])
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("|")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_walk() {
    let server = server();
    // The handshake era's walk (2025-11-25, -32002, server requests during a call): with the
    // default (`Auto`) this server would be spoken to in 2026-07-28 (see `stateless.rs`).
    let options = client_options().discovery(mcp_proto::session::Discovery::Initialize);
    let client = pair(server.clone(), options).await;
    assert_eq!(
        client.protocol_version(),
        mcp_proto::ProtocolVersion::V2025_11_25
    );
    assert_eq!(client.instructions(), Some("a test server"));
    client.ping().await.unwrap();

    // Tools, across pages (page size 2).
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 8);
    assert_eq!(client.tools().await.unwrap().len(), 8);
    let r = client
        .call_tool("echo", json!({"text":"hi"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    // Invalid arguments: a tool error result (2025-11-25).
    let r = client.call_tool("echo", json!({"nope":1})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    let e = client.call_tool("missing", json!({})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    let r = client.call_tool("fail", json!({})).await.unwrap();
    assert_eq!((r.is_error, text(&r).as_str()), (Some(true), "it broke"));

    // Progress.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let r = client
        .call_tool("slow", json!({"steps":3}))
        .progress(move |p| s2.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "slow done");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);

    // Cancellation by dropping the future; and by timeout.
    let slow = client.call_tool("slow", json!({"steps":100, "delay_ms": 50}));
    let outcome =
        tokio::time::timeout(std::time::Duration::from_millis(30), slow.into_future()).await;
    assert!(outcome.is_err(), "dropped after 30 ms");
    let e = client
        .call_tool("slow", json!({"steps":100, "delay_ms": 50}))
        .timeout(mcp_proto::Duration::from_millis(40))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);

    // Streaming.
    let mut stream = client.call_tool_stream("stream", json!({}));
    let mut partial = Vec::new();
    let mut done = None;
    while let Some(item) = stream.next().await {
        match item {
            ToolStreamItem::Partial(c) => partial.push(c.as_text().unwrap().to_owned()),
            ToolStreamItem::Done(r) => done = Some(r.unwrap()),
            _ => {}
        }
    }
    assert_eq!(partial, vec!["part 0", "part 1", "part 2"]);
    assert_eq!(text(&done.unwrap()), "part 0|part 1|part 2|end");

    // Resources.
    let res = client.list_resources().await.unwrap();
    assert_eq!(res.len(), 1);
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://item/{id}");
    let r = client.read_resource("test://item/7").await.unwrap();
    assert!(matches!(&r.contents[0], ResourceContents::Text(t) if t.text == "item 7"));
    let e = client.read_resource("test://nothing").await.unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::NotFound, -32002));
    let mut updates = client.subscribe("test://static").await.unwrap();
    let mut notes = client.notifications();
    assert_eq!(server.resource_updated("test://static"), 1);
    assert_eq!(server.resource_updated("test://other"), 0);
    assert_eq!(updates.next().await.unwrap().uri, "test://static");
    client.unsubscribe("test://static").await.unwrap();
    assert_eq!(server.resource_updated("test://static"), 0);

    // list_changed invalidates the cache.
    server
        .add_tool(
            Tool::new("late", schema_of(json!({"type":"object"}))),
            |_: serde_json::Value, _cx: ToolContext| async { Ok("late") },
        )
        .unwrap();
    loop {
        if let Some(ServerNotification::ToolsListChanged) = notes.next().await {
            break;
        }
    }
    assert_eq!(client.tools().await.unwrap().len(), 9);
    let dup = server.add_tool(
        Tool::new("late", schema_of(json!({"type":"object"}))),
        |_: serde_json::Value, _cx: ToolContext| async { Ok("x") },
    );
    assert_eq!(dup.unwrap_err().kind(), ErrorKind::DuplicateRegistration);
    assert!(server.remove_tool("late"));

    // Prompts.
    assert_eq!(client.list_prompts().await.unwrap().len(), 1);
    let mut args = BTreeMap::new();
    args.insert("who".to_owned(), "world".to_owned());
    let p = client.get_prompt("greet", args).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("hello world"));
    assert_eq!(
        client
            .get_prompt("greet", BTreeMap::new())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidParams
    );

    // Completion.
    let c = client
        .complete(serde_json::from_value(json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"al"}})).unwrap())
        .await
        .unwrap();
    assert_eq!(c.completion.values, vec!["alpha", "alps"]);

    // Sampling, elicitation, roots: the server asks during a call.
    let r = client.call_tool("sample", json!({})).await.unwrap();
    assert!(text(&r).contains("hello human"), "{}", text(&r));
    let r = client.call_tool("elicit", json!({})).await.unwrap();
    assert!(text(&r).contains("Ada"));
    let r = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&r), "file:///tmp");
    client.set_roots(vec![]).unwrap();
    let r = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&r), "");

    // Logging: the level filters.
    let mut logs = client.log_messages();
    client
        .set_logging_level(LoggingLevel::Warning)
        .await
        .unwrap();
    client.call_tool("log", json!({})).await.unwrap();
    let m = logs.next().await.unwrap();
    assert_eq!(
        (m.level, m.data.clone()),
        (LoggingLevel::Error, json!("error line"))
    );

    client.close();
    for _ in 0..100 {
        if server.connection_count() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.connection_count(), 0);
}

/// `tools/call` arguments as the wire may carry them: the tool's type is read straight from the
/// raw `arguments`; absent and `null` read as `{}`; anything but an object is invalid params.
#[tokio::test]
async fn tool_arguments_every_shape() {
    let client = pair(server(), client_options()).await;
    let call = |params: serde_json::Value| {
        let peer = client.peer().clone();
        async move {
            peer.request_with("tools/call", &params)
                .typed::<CallToolResult>()
                .await
        }
    };
    // Escapes in the raw text are decoded by the tool's own deserialisation.
    let raw = serde_json::value::RawValue::from_string(
        r#"{"name":"echo","arguments":{"text":"hi \u00e9\n\"x\""}}"#.to_owned(),
    )
    .unwrap();
    let ok = client
        .peer()
        .request("tools/call", Some(raw))
        .typed::<CallToolResult>()
        .await
        .unwrap();
    assert_eq!(text(&ok), "hi é\n\"x\"");
    // Fields the tool does not know are ignored, as serde does for its type.
    let ok = call(
        json!({"name":"echo","arguments":{"extra":[1,{"a":null}],"text":"t"},"_meta":{"k":1}}),
    )
    .await
    .unwrap();
    assert_eq!(text(&ok), "t");
    for absent in [
        json!({"name":"stream"}),
        json!({"name":"stream","arguments":null}),
    ] {
        let r = call(absent).await.unwrap();
        assert_eq!(r.is_error, None);
    }
    // A missing required field is a tool error result (2025-11-25 input validation).
    let r = call(json!({"name":"echo","arguments":{}})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("invalid arguments"), "{}", text(&r));
    let r = call(json!({"name":"echo"})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    for bad in [json!([1]), json!("text"), json!(3), json!(true)] {
        let e = call(json!({"name":"echo","arguments":bad}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams, "{bad}: {e}");
    }
    let e = call(json!({"name":"nope","arguments":{}}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    let e = call(json!({"arguments":{}})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    let e = call(json!({"name":7})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);

    // Large params take the first look (the tool found before its arguments are read), in
    // either order of the keys, with the same outcomes.
    let big = "é\"x".repeat(2000);
    let raw_call = |text: String| {
        let peer = client.peer().clone();
        async move {
            let raw = serde_json::value::RawValue::from_string(text).unwrap();
            peer.request("tools/call", Some(raw))
                .typed::<CallToolResult>()
                .await
        }
    };
    let quoted = serde_json::to_string(&big).unwrap();
    for params in [
        format!(r#"{{"name":"echo","arguments":{{"text":{quoted}}}}}"#),
        format!(r#"{{"arguments":{{"text":{quoted}}},"name":"echo"}}"#),
        format!(
            r#"{{"_meta":{{"k":1}}, "arguments" : {{"extra":[{quoted}],"text":{quoted}}} , "name" : "echo" }}"#
        ),
    ] {
        let ok = raw_call(params.clone()).await.unwrap();
        assert_eq!(
            text(&ok),
            big,
            "{}",
            params.chars().take(60).collect::<String>()
        );
    }
    // A missing field: the tool's own error result.
    let r = raw_call(format!(
        r#"{{"arguments":{{"other":{quoted}}},"name":"echo"}}"#
    ))
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("invalid arguments"), "{}", text(&r));
    // Arguments that are no object, an unknown tool, a duplicate name: -32602.
    for params in [
        format!(r#"{{"arguments":[{quoted}],"name":"echo"}}"#),
        format!(r#"{{"name":"echo","arguments":{quoted}}}"#),
        format!(r#"{{"arguments":{{"text":{quoted}}},"name":"nope"}}"#),
        format!(r#"{{"name":"nope","arguments":{{"text":{quoted}}}}}"#),
        format!(r#"{{"name":"echo","name":"echo","arguments":{{"text":{quoted}}}}}"#),
    ] {
        let e = raw_call(params.clone()).await.unwrap_err();
        let head: String = params.chars().take(60).collect();
        assert_eq!(e.kind(), ErrorKind::InvalidParams, "{head}: {e}");
    }
}

#[tokio::test]
async fn authorizer_refuses_with_32001() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let server = Server::builder("auth", "1")
        .tool(
            Tool::new("secret", schema_of(json!({"type":"object"}))),
            move |_: serde_json::Value, _cx: ToolContext| {
                let c = c2.clone();
                async move {
                    c.fetch_add(1, Ordering::SeqCst);
                    Ok("secret")
                }
            },
        )
        .authorizer(|req| {
            if req.method == "tools/call" {
                Err(Error::new(ErrorKind::Unauthorized, "no calls for you"))
            } else {
                Ok(())
            }
        })
        .build();
    let client = pair(server, ClientOptions::default()).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    let e = client.call_tool("secret", json!({})).await.unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::Unauthorized, -32001));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler did not run");
}

#[tokio::test]
async fn telemetry_observes_requests() {
    let mut telemetry = mcp_service::Telemetry::default();
    let mut events = telemetry.subscribe();
    let server = Server::builder("t", "1")
        .tool(
            Tool::new("echo", schema_of(json!({"type":"object"}))),
            |a: EchoArgs, _cx: ToolContext| async move { Ok(a.text) },
        )
        .telemetry(telemetry)
        .build();
    let client = pair(server, ClientOptions::default()).await;
    client.call_tool("echo", json!({"text":"x"})).await.unwrap();
    let mut completed = false;
    while let Some(e) = events.next().await {
        if let mcp_service::TelemetryEvent::RequestCompleted {
            method, outcome, ..
        } = e
        {
            assert_eq!(method, "tools/call");
            assert_eq!(outcome, mcp_service::telemetry::Outcome::Ok);
            completed = true;
            break;
        }
    }
    assert!(completed);
}

/// Regression: both sides writing large messages through a tiny pipe must never stall (the
/// write buffer once counted already-written bytes toward backpressure and stopped reading).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_concurrent_payloads_through_a_tiny_pipe() {
    let server = server();
    let rt = Tokio {
        clock: Clock::new(),
    };
    let (a, b) = tokio::io::duplex(4 * 1024);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let srt = rt.clone();
    tokio::spawn(async move {
        let _ = server
            .serve(srt, ByteStream::new(ar.compat(), aw.compat_write()))
            .await;
    });
    let client = Client::connect(
        rt,
        ByteStream::new(br.compat(), bw.compat_write()),
        ClientOptions::default(),
    )
    .await
    .unwrap();
    let text: String = "x".repeat(64 * 1024);
    let work = futures_util::future::join_all((0..32).map(|_| {
        let client = client.clone();
        let text = text.clone();
        async move {
            for _ in 0..12 {
                let r = client
                    .call_tool("echo", json!({ "text": text }))
                    .await
                    .unwrap();
                assert_eq!(r.content[0].as_text().map(str::len), Some(text.len()));
            }
        }
    }));
    tokio::time::timeout(std::time::Duration::from_secs(60), work)
        .await
        .expect("no stall");
}
