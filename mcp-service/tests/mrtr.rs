//! Multi round-trip requests (2026-07-28): a handler's `cx.elicit(..)`, `cx.create_message(..)`
//! and `cx.list_roots()` become `input_required` rounds for a stateless-era client (sealed
//! `requestState`, answers under keys, the handler run again) and real requests for a
//! handshake-era client, with the same handler. Driven by raw JSON lines over a byte stream on
//! the deterministic [`Sim`] runtime.

use futures_util::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use mcp_proto::ProtocolVersion;
use mcp_service::memory::duplex;
use mcp_service::mrtr::RequestStateKeys;
use mcp_service::schema::{
    CallToolResult, CreateMessageRequestParams, ElicitRequestParams, ElicitResult, SamplingMessage,
    Tool,
};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

fn form(message: &str, field: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field]
        }
    }))
    .unwrap()
}

fn field(r: &ElicitResult, name: &str) -> String {
    r.content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(|v| serde_json::to_value(v).ok())
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn keys(id: &str, byte: u8) -> RequestStateKeys {
    RequestStateKeys::new("notes", [(id, vec![byte; 32])]).unwrap()
}

fn server(keys: RequestStateKeys) -> Server {
    Server::builder("notes", "1")
        .versions(&ProtocolVersion::ALL)
        .request_state_keys(keys)
        .tool(
            Tool::new("greet", schema_of(json!({"type": "object"}))),
            |args: Value, cx: ToolContext| async move {
                let name = cx.elicit(form("Your name?", "name")).await?;
                let color = cx.elicit(form("Your colour?", "color")).await?;
                Ok(CallToolResult::text(format!(
                    "{} likes {} (round {}, args {})",
                    field(&name, "name"),
                    field(&color, "color"),
                    cx.input_round(),
                    args
                )))
            },
        )
        .tool(
            Tool::new("together", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let question =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user("2+2?")], 5);
                let (name, (answer, roots)) = futures_util::future::join(
                    cx.elicit_as("name", form("Your name?", "name")),
                    futures_util::future::join(
                        cx.create_message_as("sum", question),
                        cx.list_roots_as("roots"),
                    ),
                )
                .await;
                let (name, answer, roots) = (name?, answer?, roots?);
                let said = answer
                    .content
                    .blocks()
                    .iter()
                    .find_map(|b| b.as_text())
                    .unwrap_or("")
                    .to_owned();
                Ok(CallToolResult::text(format!(
                    "{}: {said}, {} roots",
                    field(&name, "name"),
                    roots.roots.len()
                )))
            },
        )
        .completion(|_, cx| async move {
            // Only tools/call, prompts/get and resources/read may ask for input.
            cx.elicit(form("?", "x")).await?;
            Ok(Default::default())
        })
        .build()
}

/// One 2026-07-28 request line.
fn request(id: u64, method: &str, params: Value, caps: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// Sends each line to a fresh connection of `srv` and returns the answers, in order.
fn exchange(srv: &Server, lines: Vec<String>) -> Vec<Value> {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(256 * 1024);
    {
        let rt2 = rt.clone();
        let srv = srv.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let (reader, mut writer) = client_end.into_parts();
    sim.block_on(async move {
        let mut reader = BufReader::new(reader);
        let mut out = Vec::new();
        for line in lines {
            writer.write_all(line.as_bytes()).await.unwrap();
            writer.flush().await.unwrap();
            loop {
                let mut text = String::new();
                reader.read_line(&mut text).await.unwrap();
                let v: Value = serde_json::from_str(&text).unwrap();
                if v.get("id").is_some() {
                    out.push(v);
                    break;
                }
            }
        }
        out
    })
    .expect("the exchange finished")
}

fn one(srv: &Server, line: String) -> Value {
    exchange(srv, vec![line]).remove(0)
}

fn call(id: u64, name: &str, args: Value, retry: Value) -> String {
    let mut params = json!({"name": name, "arguments": args});
    if let Value::Object(extra) = retry {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    request(id, "tools/call", params, all_caps())
}

fn accept(field: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {field: value}})
}

#[test]
fn each_ask_is_a_round_and_the_state_carries_earlier_answers() {
    let srv = server(keys("k1", 1));
    let args = json!({"b": 1, "a": [true]});
    // Round 1: the first ask, keyed by its order.
    let r1 = one(&srv, call(1, "greet", args.clone(), json!(null)));
    let res = &r1["result"];
    assert_eq!(res["resultType"], "input_required", "{r1}");
    let asks = res["inputRequests"].as_object().unwrap();
    assert_eq!(asks.keys().collect::<Vec<_>>(), ["elicitation-1"]);
    assert_eq!(asks["elicitation-1"]["method"], "elicitation/create");
    assert_eq!(asks["elicitation-1"]["params"]["message"], "Your name?");
    let s1 = res["requestState"].as_str().unwrap().to_owned();
    // Round 2: the first answer; the handler runs again and asks the second question. The
    // arguments may come back in another key order.
    let r2 = one(
        &srv,
        call(
            2,
            "greet",
            json!({"a": [true], "b": 1}),
            json!({"inputResponses": {"elicitation-1": accept("name", "Ada")}, "requestState": s1}),
        ),
    );
    let res = &r2["result"];
    assert_eq!(res["resultType"], "input_required", "{r2}");
    assert!(res["inputRequests"]["elicitation-2"].is_object(), "{r2}");
    let s2 = res["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);
    // Round 3: only the new answer; the first comes from the state.
    let r3 = one(
        &srv,
        call(
            3,
            "greet",
            args.clone(),
            json!({"inputResponses": {"elicitation-2": accept("color", "green")}, "requestState": s2}),
        ),
    );
    assert_eq!(r3["id"], 3);
    assert_eq!(r3["result"]["resultType"], "complete", "{r3}");
    let text = r3["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Ada likes green (round 2"), "{text}");
    // A missing answer is asked again (not an error); extra keys are ignored.
    let again = one(
        &srv,
        call(
            4,
            "greet",
            args,
            json!({"inputResponses": {"unrelated": accept("x", "y")}}),
        ),
    );
    assert!(
        again["result"]["inputRequests"]["elicitation-1"].is_object(),
        "{again}"
    );
}

#[test]
fn asks_made_together_are_one_round() {
    let srv = server(keys("k1", 1));
    let r1 = one(&srv, call(1, "together", json!({}), json!(null)));
    let asks = r1["result"]["inputRequests"].as_object().unwrap();
    let mut keys: Vec<&String> = asks.keys().collect();
    keys.sort();
    assert_eq!(keys, ["name", "roots", "sum"], "{r1}");
    assert_eq!(asks["sum"]["method"], "sampling/createMessage");
    assert_eq!(asks["roots"]["method"], "roots/list");
    let state = r1["result"]["requestState"].clone();
    let r2 = one(
        &srv,
        call(
            2,
            "together",
            json!({}),
            json!({
                "inputResponses": {
                    "name": accept("name", "Bo"),
                    "sum": {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"},
                    "roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
                },
                "requestState": state
            }),
        ),
    );
    assert_eq!(r2["result"]["content"][0]["text"], "Bo: 4, 2 roots", "{r2}");
    // An answer of the wrong shape is refused.
    let bad = one(
        &srv,
        call(
            3,
            "together",
            json!({}),
            json!({"inputResponses": {"name": accept("name", "Bo"), "sum": {"role": 5}, "roots": {"roots": []}}}),
        ),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[test]
fn the_state_is_sealed_bound_and_opens_on_any_replica_with_the_keys() {
    let srv = server(keys("k1", 1));
    let r1 = one(&srv, call(1, "greet", json!({"n": 1}), json!(null)));
    let state = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"elicitation-1": accept("name", "Ada")});
    let retry = |id: u64, name: &str, args: Value, state: &str| {
        call(
            id,
            name,
            args,
            json!({"inputResponses": answer, "requestState": state}),
        )
    };
    // Tampered with: refused before the handler runs.
    let tampered = format!("{state}-TAMPERED");
    let e = one(&srv, retry(2, "greet", json!({"n": 1}), &tampered));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState")
    );
    // Replayed on other arguments or another tool: refused.
    let e = one(&srv, retry(3, "greet", json!({"n": 2}), &state));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    let e = one(&srv, retry(4, "together", json!({"n": 1}), &state));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    // Another replica with the same keys goes on with it.
    let replica = server(keys("k1", 1));
    let ok = one(&replica, retry(5, "greet", json!({"n": 1}), &state));
    assert!(
        ok["result"]["inputRequests"]["elicitation-2"].is_object(),
        "{ok}"
    );
    // One with other keys cannot open it.
    let stranger = server(keys("k1", 2));
    let e = one(&stranger, retry(6, "greet", json!({"n": 1}), &state));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    // Rotation: the new key seals, the old one still opens.
    let rotated = server(
        RequestStateKeys::new("notes", [("k2", vec![9u8; 32]), ("k1", vec![1u8; 32])]).unwrap(),
    );
    let ok = one(&rotated, retry(7, "greet", json!({"n": 1}), &state));
    let next = ok["result"]["requestState"].as_str().unwrap();
    assert!(next.starts_with("v1.k2."), "{next}");
    // Another audience with the same key refuses it.
    let other = server(RequestStateKeys::new("elsewhere", [("k1", vec![1u8; 32])]).unwrap());
    let e = one(&other, retry(8, "greet", json!({"n": 1}), &state));
    assert_eq!(e["error"]["code"], -32602, "{e}");
}

#[test]
fn undeclared_capabilities_and_other_methods() {
    let srv = server(keys("k1", 1));
    // No elicitation declared: -32021 naming it.
    let line = request(
        1,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        json!({"sampling": {}}),
    );
    let e = one(&srv, line);
    assert_eq!(e["error"]["code"], -32021, "{e}");
    assert_eq!(
        e["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
    // completion/complete cannot ask for input in this era.
    let line = request(
        2,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        all_caps(),
    );
    let e = one(&srv, line);
    assert_eq!(e["error"]["code"], -32603, "{e}");
}

#[test]
fn a_handshake_era_client_gets_real_requests_from_the_same_handler() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server(keys("k1", 1));
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let text = sim
        .block_on(async move {
            let options = ClientOptions::new("old", "1")
                .discovery(mcp_proto::session::Discovery::Initialize)
                .elicitation(|p: ElicitRequestParams, _| async move {
                    let ElicitRequestParams::Form(f) = p else {
                        panic!("a form")
                    };
                    let (field, value) = if f.message.contains("name") {
                        ("name", "Ada")
                    } else {
                        ("color", "red")
                    };
                    Ok(serde_json::from_value(accept(field, value)).unwrap())
                });
            let client = Client::connect(rt, client_end, options).await.unwrap();
            assert_ne!(client.protocol_version(), ProtocolVersion::V2026_07_28);
            let r = client.call_tool("greet", json!({})).await.unwrap();
            r.content[0].as_text().unwrap().to_owned()
        })
        .expect("the call finished");
    assert!(text.starts_with("Ada likes red (round 0"), "{text}");
}

#[test]
fn our_stateless_client_answers_the_rounds_through_its_handlers() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server(keys("k1", 1));
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let out = sim.block_on(async move {
        let options = ClientOptions::new("new", "1")
            .versions(&ProtocolVersion::ALL)
            .discovery(mcp_proto::session::Discovery::Discover)
            .elicitation(move |p: ElicitRequestParams, _| {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                async move {
                    let ElicitRequestParams::Form(f) = p else {
                        panic!("a form")
                    };
                    let (field, value) = if f.message.contains("name") {
                        ("name", "Ada")
                    } else {
                        ("color", "blue")
                    };
                    Ok(serde_json::from_value(accept(field, value)).unwrap())
                }
            })
            .sampling(|_, _| async { Ok(mcp_service::schema::CreateMessageResult::text("m", "4")) })
            .roots(vec![mcp_service::schema::Root::new("file:///r")]);
        let client = Client::connect(rt, client_end, options).await.unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
        let greet = client.call_tool("greet", json!({"k": 1})).await.unwrap();
        let together = client.call_tool("together", json!({})).await.unwrap();
        (
            greet.content[0].as_text().unwrap().to_owned(),
            together.content[0].as_text().unwrap().to_owned(),
        )
    });
    let (greet, together) = out.expect("the calls finished");
    // Two rounds, each answered by the elicitation handler, invisible to the caller.
    assert!(greet.starts_with("Ada likes blue (round 2"), "{greet}");
    assert_eq!(together, "Ada: 4, 1 roots");
    assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 3);
}

#[test]
fn the_timeout_covers_every_round() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server(keys("k1", 1));
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let sleeper = rt.clone();
    let err = sim.block_on(async move {
        let options = ClientOptions::new("slow", "1")
            .versions(&ProtocolVersion::ALL)
            .discovery(mcp_proto::session::Discovery::Discover)
            .elicitation(move |_p: ElicitRequestParams, _| {
                // Each answer takes 3 s: the second round starts after the 5 s budget's end
                // is near, and the third never starts.
                let deadline = sleeper.now() + mcp_proto::Duration::from_secs(3);
                let sleep = sleeper.sleep_until(deadline);
                async move {
                    sleep.await;
                    Ok(serde_json::from_value(accept("name", "x")).unwrap())
                }
            });
        let client = Client::connect(rt, client_end, options).await.unwrap();
        client
            .call_tool("greet", json!({}))
            .timeout(mcp_proto::Duration::from_secs(5))
            .await
            .unwrap_err()
    });
    let err = err.expect("the call ended");
    assert_eq!(err.kind(), mcp_proto::ErrorKind::Timeout, "{err}");
}
