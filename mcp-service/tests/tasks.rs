//! The tasks extension (SEP-2663) on the server: a task-supporting tool called by a 2026-07-28
//! client that declared the extension becomes a task, followed with `tasks/get`, answered with
//! `tasks/update`, stopped with `tasks/cancel`; gating by the extension; a required-task tool
//! refused without it. Raw JSON lines over a byte stream on the deterministic [`Sim`] runtime.

use futures_util::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use mcp_proto::{Duration, ProtocolVersion};
use mcp_service::memory::duplex;
use mcp_service::schema::{CallToolResult, TaskSupport, Tool, ToolExecution};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::tasks::TaskOptions;
use mcp_service::{Runtime, Server};
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn task_tool(name: &str, support: TaskSupport) -> Tool {
    let mut t = Tool::new(name, schema_of(json!({"type": "object"})));
    t.execution = Some(ToolExecution {
        task_support: Some(support),
    });
    t
}

fn server(rt: mcp_service::sim::SimRuntime) -> Server {
    server_with(rt, TaskOptions::default())
}

fn server_with(rt: mcp_service::sim::SimRuntime, options: TaskOptions) -> Server {
    let sleeper = rt.clone();
    let asker = rt.clone();
    Server::builder("tasks", "1")
        .versions(&ProtocolVersion::ALL)
        .tasks(options)
        .tool(
            Tool::new("quick", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async { Ok("quick") },
        )
        .tool(
            task_tool("slow", TaskSupport::Optional),
            move |args: Value, _cx: ToolContext| {
                let rt = sleeper.clone();
                async move {
                    let secs = args["seconds"].as_u64().unwrap_or(0);
                    if secs > 0 {
                        rt.sleep_until(rt.now() + Duration::from_secs(secs)).await;
                    }
                    Ok(CallToolResult::text(format!("slept {secs}s")))
                }
            },
        )
        .tool(
            task_tool("must", TaskSupport::Required),
            |_: Value, _cx: ToolContext| async { Ok("done") },
        )
        .tool(
            task_tool("ask", TaskSupport::Optional),
            move |_: Value, cx: ToolContext| {
                let _rt = asker.clone();
                async move {
                    cx.as_task().await;
                    let form = |m: &str| {
                        serde_json::from_value(json!({"message": m, "requestedSchema":
                            {"type": "object", "properties": {"v": {"type": "string"}}}}))
                        .unwrap()
                    };
                    let (a, b) = futures_util::future::join(
                        cx.elicit_as("a", form("first?")),
                        cx.elicit_as("b", form("second?")),
                    )
                    .await;
                    let v = |r: mcp_service::schema::ElicitResult| {
                        serde_json::to_value(r.content.unwrap_or_default()).unwrap()["v"].clone()
                    };
                    Ok(CallToolResult::text(format!("{}+{}", v(a?), v(b?))))
                }
            },
        )
        .tool(task_tool("nap_then_ask", TaskSupport::Optional), {
            let rt = rt.clone();
            move |args: Value, cx: ToolContext| {
                let rt = rt.clone();
                async move {
                    let secs = args["seconds"].as_u64().unwrap_or(0);
                    rt.sleep_until(rt.now() + Duration::from_secs(secs)).await;
                    let form =
                        serde_json::from_value(json!({"message": "well?", "requestedSchema":
                        {"type": "object", "properties": {"v": {"type": "string"}}}}))
                        .unwrap();
                    let r = cx.elicit_as("q", form).await?;
                    let v = serde_json::to_value(r.content.unwrap_or_default()).unwrap();
                    Ok(CallToolResult::text(
                        v["v"].as_str().unwrap_or("").to_owned(),
                    ))
                }
            }
        })
        .tool(
            task_tool("crash", TaskSupport::Optional),
            |_: Value, cx: ToolContext| async move {
                cx.as_task().await;
                if cx.task_id().is_some() {
                    panic!("crash on purpose");
                }
                Ok("not a task")
            },
        )
        .build()
}

fn line(id: u64, method: &str, params: Value, ext: bool) -> String {
    let mut caps = json!({"elicitation": {}});
    if ext {
        caps["extensions"] = json!({ EXT: {} });
    }
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

/// Runs `script` against a fresh server on the Sim runtime: it gets a `call` function that
/// sends one line and returns its answer, and the runtime (to let time pass).
fn run<F, Fut>(script: F)
where
    F: FnOnce(
        Box<dyn FnMut(String) -> futures_util::future::BoxFuture<'static, Value>>,
        mcp_service::sim::SimRuntime,
    ) -> Fut,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(256 * 1024);
    let srv = server(rt.clone());
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let (reader, writer) = client_end.into_parts();
    let io = std::sync::Arc::new(futures_util::lock::Mutex::new((
        BufReader::new(reader),
        writer,
    )));
    let call = move |text: String| -> futures_util::future::BoxFuture<'static, Value> {
        let io = io.clone();
        Box::pin(async move {
            let mut io = io.lock().await;
            io.1.write_all(text.as_bytes()).await.unwrap();
            io.1.flush().await.unwrap();
            loop {
                let mut got = String::new();
                io.0.read_line(&mut got).await.unwrap();
                let v: Value = serde_json::from_str(&got).unwrap();
                if v.get("id").is_some() {
                    return v;
                }
            }
        })
    };
    sim.block_on(script(Box::new(call), rt))
        .expect("the script finished");
}

/// An empty acknowledgement: `resultType: "complete"` and nothing else but the server's `_meta`.
fn assert_ack(reply: &Value) {
    let mut r = reply["result"].clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("_meta");
    }
    assert_eq!(r, json!({"resultType": "complete"}), "{reply}");
}

async fn pause(rt: &mcp_service::sim::SimRuntime, ms: u64) {
    rt.sleep_until(rt.now() + Duration::from_millis(ms)).await;
}

#[test]
fn a_slow_call_becomes_a_task_that_completes() {
    run(|mut call, rt| async move {
        let r = call(line(
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {"seconds": 2}}),
            true,
        ))
        .await;
        let t = &r["result"];
        assert_eq!(t["resultType"], "task", "{r}");
        assert_eq!(t["status"], "working");
        assert!(t.get("task").is_none(), "flat, no wrapper");
        assert!(t["ttlMs"].as_u64().unwrap() > 0);
        assert!(t["pollIntervalMs"].is_u64());
        assert!(t["createdAt"].as_str().unwrap().ends_with('Z'));
        assert!(t.get("requestState").is_none());
        let id = t["taskId"].as_str().unwrap().to_owned();
        // Readable at once, working, no result yet.
        let g = call(line(2, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["resultType"], "complete", "{g}");
        assert_eq!(g["result"]["status"], "working");
        assert!(g["result"].get("result").is_none());
        pause(&rt, 2500).await;
        let g = call(line(3, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "completed", "{g}");
        assert_eq!(g["result"]["result"]["content"][0]["text"], "slept 2s");
        // Cancelling a terminal task is an idempotent ack.
        let c = call(line(4, "tasks/cancel", json!({"taskId": id}), true)).await;
        assert_ack(&c);
        let g = call(line(5, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "completed");
        // A call that completes at once is answered as usual.
        let r = call(line(
            6,
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
            true,
        ))
        .await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        assert_eq!(r["result"]["content"][0]["text"], "slept 0s");
    });
}

#[test]
fn cancel_stops_a_running_task() {
    run(|mut call, rt| async move {
        let r = call(line(
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {"seconds": 60}}),
            true,
        ))
        .await;
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        let c = call(line(2, "tasks/cancel", json!({"taskId": id}), true)).await;
        assert_ack(&c);
        let g = call(line(3, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "cancelled", "{g}");
        pause(&rt, 61_000).await;
        let g = call(line(4, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "cancelled", "stays cancelled: {g}");
        // Unknown tasks: -32602.
        for (n, m) in [(5, "tasks/get"), (6, "tasks/cancel"), (7, "tasks/update")] {
            let e = call(line(
                n,
                m,
                json!({"taskId": "nope", "inputResponses": {}}),
                true,
            ))
            .await;
            assert_eq!(e["error"]["code"], -32602, "{m}: {e}");
        }
    });
}

#[test]
fn asks_wait_in_the_task_and_updates_answer_them_one_by_one() {
    run(|mut call, rt| async move {
        let r = call(line(
            1,
            "tools/call",
            json!({"name": "ask", "arguments": {}}),
            true,
        ))
        .await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        pause(&rt, 10).await;
        let g = call(line(2, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "input_required", "{g}");
        let keys: Vec<String> = g["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(
            g["result"]["inputRequests"]["a"]["method"],
            "elicitation/create"
        );
        // One answer: still input_required, only the other key left.
        let answer = |v: &str| json!({"action": "accept", "content": {"v": v}});
        let u = call(line(
            3,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"a": answer("x")}}),
            true,
        ))
        .await;
        assert_ack(&u);
        pause(&rt, 10).await;
        let g = call(line(4, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "input_required");
        let keys: Vec<&String> = g["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["b"]);
        call(line(
            5,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"b": answer("y")}}),
            true,
        ))
        .await;
        pause(&rt, 10).await;
        let g = call(line(6, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "completed", "{g}");
        assert_eq!(g["result"]["result"]["content"][0]["text"], "\"x\"+\"y\"");
    });
}

#[test]
fn the_extension_gates_the_task_surface() {
    run(|mut call, rt| async move {
        // Without the extension: a task-supporting tool runs as a plain call...
        let r = call(line(
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {"seconds": 1}}),
            false,
        ))
        .await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        assert!(r["result"].get("taskId").is_none());
        // ...a required-task tool is -32021 naming the extension...
        let e = call(line(
            2,
            "tools/call",
            json!({"name": "must", "arguments": {}}),
            false,
        ))
        .await;
        assert_eq!(e["error"]["code"], -32021, "{e}");
        assert_eq!(
            e["error"]["data"]["requiredCapabilities"]["extensions"],
            json!({ EXT: {} })
        );
        // ...and so are the task methods.
        let e = call(line(3, "tasks/get", json!({"taskId": "x"}), false)).await;
        assert_eq!(e["error"]["code"], -32021, "{e}");
        // A sync-only tool never becomes a task, even with the extension.
        let r = call(line(
            4,
            "tools/call",
            json!({"name": "quick", "arguments": {}, "task": {"ttl": 1000}}),
            true,
        ))
        .await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        // The methods the extension removed are -32601.
        for (n, m) in [(5, "tasks/result"), (6, "tasks/list")] {
            let e = call(line(n, m, json!({"taskId": "x"}), true)).await;
            assert_eq!(e["error"]["code"], -32601, "{m}: {e}");
        }
        // A task whose handler crashes fails with a JSON-RPC error, no result.
        let r = call(line(
            7,
            "tools/call",
            json!({"name": "crash", "arguments": {}}),
            true,
        ))
        .await;
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        pause(&rt, 10).await;
        let g = call(line(8, "tasks/get", json!({"taskId": id}), true)).await;
        assert_eq!(g["result"]["status"], "failed", "{g}");
        assert_eq!(g["result"]["error"]["code"], -32603);
        assert!(g["result"].get("result").is_none());
    });
}

#[test]
fn our_client_follows_a_task_to_its_end() {
    use mcp_service::schema::ElicitRequestParams;
    use mcp_service::{Client, ClientOptions};
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(256 * 1024);
    let srv = server(rt.clone());
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let rt2 = rt.clone();
    sim.block_on(async move {
        let options = ClientOptions::new("tasks-client", "1")
            .versions(&ProtocolVersion::ALL)
            .discovery(mcp_proto::session::Discovery::Discover)
            .tasks()
            .elicitation(|p: ElicitRequestParams, _| async move {
                let ElicitRequestParams::Form(f) = p else {
                    panic!("a form")
                };
                let v = if f.message.starts_with("first") {
                    "1"
                } else {
                    "2"
                };
                Ok(
                    serde_json::from_value(json!({"action": "accept", "content": {"v": v}}))
                        .unwrap(),
                )
            });
        let client = Client::connect(rt2.clone(), client_end, options)
            .await
            .unwrap();
        // A task, followed transparently: the caller sees the result.
        let r = client
            .call_tool("slow", json!({"seconds": 3}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("slept 3s"));
        // Its input requests are answered through the handlers.
        let r = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("\"1\"+\"2\""));
        // A failed task is the call's error.
        let e = client.call_tool("crash", json!({})).await.unwrap_err();
        assert_eq!(e.code(), -32603, "{e}");
        // The call's own timeout covers the task, which is then cancelled on the server.
        let e = client
            .call_tool("slow", json!({"seconds": 60}))
            .timeout(Duration::from_secs(2))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), mcp_proto::ErrorKind::Timeout, "{e}");
    })
    .expect("the client finished");
}

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

/// One raw connection to `srv`: a line writer and a message reader.
struct Raw {
    reader: BufReader<mcp_service::connection::ReadHalf>,
    writer: mcp_service::connection::WriteHalf,
}

impl Raw {
    fn open(rt: &mcp_service::sim::SimRuntime, srv: &Server) -> Raw {
        let (client_end, server_end) = duplex(256 * 1024);
        let srv = srv.clone();
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
        let (reader, writer) = client_end.into_parts();
        Raw {
            reader: BufReader::new(reader),
            writer,
        }
    }

    async fn send(&mut self, text: String) {
        self.writer.write_all(text.as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let mut got = String::new();
        assert!(self.reader.read_line(&mut got).await.unwrap() > 0, "ended");
        serde_json::from_str(&got).unwrap()
    }
}

#[test]
fn status_changes_reach_the_listen_streams_that_name_the_task() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let srv = server(rt.clone());
    let mut calls = Raw::open(&rt, &srv);
    let mut watcher = Raw::open(&rt, &srv);
    sim.block_on(async move {
        let srv = srv.clone();
        calls
            .send(line(
                1,
                "tools/call",
                json!({"name": "nap_then_ask", "arguments": {"seconds": 1}}),
                true,
            ))
            .await;
        let r = calls.next().await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        // Another connection follows the task (the tasks are the server's, not a
        // connection's), and one more task id that does not exist.
        watcher
            .send(line(
                10,
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [id, "other"], "toolsListChanged": true}}),
                true,
            ))
            .await;
        let ack = watcher.next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "taskIds": [id.clone(), "other"]})
        );
        // The task asks: `input_required`, with its input request inlined.
        let n = watcher.next().await;
        assert_eq!(n["method"], "notifications/tasks", "{n}");
        assert_eq!(n["params"]["_meta"][SUB], 10);
        assert_eq!(n["params"]["taskId"], id.as_str());
        assert_eq!(n["params"]["status"], "input_required", "{n}");
        assert!(n["params"].get("resultType").is_none());
        assert_eq!(
            n["params"]["inputRequests"]["q"]["params"]["message"], "well?",
            "{n}"
        );
        // The answer makes it `working`, then it completes, the result inlined.
        calls
            .send(line(
                3,
                "tasks/update",
                json!({"taskId": id, "inputResponses":
                    {"q": {"action": "accept", "content": {"v": "yes"}}}}),
                true,
            ))
            .await;
        assert_ack(&calls.next().await);
        let mut seen = Vec::new();
        loop {
            let n = watcher.next().await;
            assert_eq!(n["method"], "notifications/tasks", "{n}");
            assert_eq!(n["params"]["_meta"][SUB], 10);
            let status = n["params"]["status"].as_str().unwrap().to_owned();
            seen.push(status.clone());
            if status == "completed" {
                assert_eq!(n["params"]["result"]["content"][0]["text"], "yes");
                break;
            }
        }
        assert_eq!(seen, ["working", "completed"]);

        // A cancelled task is announced too; a stream that did not name it hears nothing.
        calls
            .send(line(
                5,
                "tools/call",
                json!({"name": "slow", "arguments": {"seconds": 60}}),
                true,
            ))
            .await;
        let other = calls.next().await["result"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        calls
            .send(line(
                11,
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [other]}}),
                true,
            ))
            .await;
        let ack = calls.next().await;
        assert_eq!(ack["params"]["_meta"][SUB], 11, "{ack}");
        calls
            .send(line(6, "tasks/cancel", json!({"taskId": other}), true))
            .await;
        let mut cancelled = None;
        let mut acked = false;
        while cancelled.is_none() || !acked {
            let m = calls.next().await;
            if m["id"] == 6 {
                acked = true;
            } else {
                assert_eq!(m["method"], "notifications/tasks", "{m}");
                cancelled = Some(m);
            }
        }
        let cancelled = cancelled.unwrap();
        assert_eq!(cancelled["params"]["status"], "cancelled");
        assert_eq!(cancelled["params"]["_meta"][SUB], 11);
        // The first stream still hears what it asked for, and nothing of that task.
        srv.add_tool(
            Tool::new("added", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async { Ok("added") },
        )
        .unwrap();
        let n = watcher.next().await;
        assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    })
    .expect("completes");
}

#[test]
fn our_client_is_woken_by_status_notifications() {
    use mcp_service::{Client, ClientOptions};
    use std::future::IntoFuture;
    let sim = Sim::new();
    let rt = sim.runtime();
    // The server suggests polling once a minute (the client polls at least every 10 s): a
    // follower that only polled would see the end of a 1 s task 10 s late, at its first poll.
    // (Virtual time: deterministic.)
    let options = TaskOptions {
        poll_interval: std::time::Duration::from_secs(60),
        ..TaskOptions::default()
    };
    let srv = server_with(rt.clone(), options);
    let (client_end, server_end) = duplex(256 * 1024);
    {
        let srv = srv.clone();
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let rt2 = rt.clone();
    sim.block_on(async move {
        let options = ClientOptions::new("tasks-client", "1")
            .versions(&ProtocolVersion::ALL)
            .discovery(mcp_proto::session::Discovery::Discover)
            .tasks();
        let client = Client::connect(rt2.clone(), client_end, options)
            .await
            .unwrap();
        let start = rt2.now();
        let r = client
            .call_tool("slow", json!({"seconds": 1}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("slept 1s"));
        let took = rt2.now().saturating_duration_since(start);
        assert!(
            took < Duration::from_secs(10),
            "the completion's notification woke the poll: {took:?}"
        );
        // Several tasks at once, each woken by its own notifications.
        let start = rt2.now();
        let (a, b) = futures_util::future::join(
            client
                .call_tool("slow", json!({"seconds": 2}))
                .into_future(),
            client
                .call_tool("slow", json!({"seconds": 3}))
                .into_future(),
        )
        .await;
        assert_eq!(a.unwrap().content[0].as_text(), Some("slept 2s"));
        assert_eq!(b.unwrap().content[0].as_text(), Some("slept 3s"));
        assert!(rt2.now().saturating_duration_since(start) < Duration::from_secs(10));
        client.close();
    })
    .expect("the client finished");
}
