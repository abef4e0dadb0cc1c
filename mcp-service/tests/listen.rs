//! `subscriptions/listen` (2026-07-28) end to end over byte streams, on the [`Sim`] runtime:
//! a raw client's streams (acknowledgement first, subscription ids, each stream only what it
//! asked for, `resource_updated` reaching both eras, cancellation, the bound on streams), and
//! our own client in the stateless era (`subscribe` and `notifications` on one listen stream,
//! reopened when the subscriptions change).

use futures_util::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use mcp_proto::ProtocolVersion;
use mcp_proto::session::Discovery;
use mcp_service::client::ServerNotification;
use mcp_service::memory::duplex;
use mcp_service::schema::{
    CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents, TextResourceContents, Tool,
};
use mcp_service::server::{PromptContext, ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const URI: &str = "test://watched";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn server() -> Server {
    Server::builder("listen", "1")
        .versions(&ProtocolVersion::ALL)
        .dynamic_prompts()
        .resource_subscriptions()
        .tool(
            Tool::new("noop", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("ok")) },
        )
        .resource(
            Resource::new(URI, "watched"),
            |uri: String, _cx| async move {
                Ok(vec![ResourceContents::Text(TextResourceContents {
                    uri,
                    mime_type: None,
                    text: "w".into(),
                    meta: None,
                })])
            },
        )
        .build()
}

fn tool(name: &str) -> Tool {
    Tool::new(name, schema_of(json!({"type": "object"})))
}

fn add_tool(srv: &Server, name: &str) {
    srv.add_tool(tool(name), |_: Value, _cx: ToolContext| async move {
        Ok(CallToolResult::text("dyn"))
    })
    .unwrap();
}

fn add_prompt(srv: &Server, name: &str) {
    srv.add_prompt(
        Prompt::new(name),
        |_: BTreeMap<String, String>, _cx: PromptContext| async move {
            Ok(GetPromptResult::default())
        },
    )
    .unwrap();
}

fn line(id: Value, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

fn serve(sim: &Sim, srv: &Server) -> mcp_service::ByteStream {
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = srv.clone();
    let rt2 = rt.clone();
    rt.spawn(Box::pin(async move {
        let _ = srv.serve(rt2, server_end).await;
    }));
    client_end
}

#[test]
fn raw_listen_streams_over_a_byte_stream() {
    let sim = Sim::new();
    let srv = server();
    let (reader, mut writer) = serve(&sim, &srv).into_parts();
    let legacy = serve(&sim, &srv);
    let rt = sim.runtime();
    let srv2 = srv.clone();
    sim.block_on(async move {
        let mut reader = BufReader::new(reader);
        let mut next = async || {
            let mut l = String::new();
            reader.read_line(&mut l).await.unwrap();
            serde_json::from_str::<Value>(&l).unwrap()
        };
        // A tools-only stream and a prompts + resource stream, each acknowledged first with
        // what the server honours, tagged with its own id.
        writer
            .write_all(
                line(
                    json!(10),
                    "subscriptions/listen",
                    json!({"notifications": {"toolsListChanged": true}}),
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let ack = next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true})
        );
        assert_eq!(ack["params"]["_meta"][SUB], 10);
        writer
            .write_all(
                line(
                    json!("p"),
                    "subscriptions/listen",
                    json!({"notifications": {"promptsListChanged": true, "resourceSubscriptions": [URI]}}),
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let ack = next().await;
        assert_eq!(ack["params"]["_meta"][SUB], "p");
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"],
            json!([URI])
        );

        // A handshake-era client on another connection subscribes to the same resource.
        let old = Client::connect(
            rt.clone(),
            legacy,
            ClientOptions::default().discovery(Discovery::Initialize),
        )
        .await
        .unwrap();
        assert_eq!(old.protocol_version(), ProtocolVersion::V2025_11_25);
        let mut old_updates = old.subscribe(URI).await.unwrap();

        // Changes go only to the streams that asked for them.
        add_tool(&srv2, "t1");
        let n = next().await;
        assert_eq!(
            (&n["method"], &n["params"]["_meta"][SUB]),
            (&json!("notifications/tools/list_changed"), &json!(10))
        );
        add_prompt(&srv2, "p1");
        let n = next().await;
        assert_eq!(
            (&n["method"], &n["params"]["_meta"][SUB]),
            (&json!("notifications/prompts/list_changed"), &json!("p"))
        );
        // resource_updated reaches both eras: the handshake subscriber and the listen stream.
        assert_eq!(srv2.resource_updated(URI), 2);
        let n = next().await;
        assert_eq!(n["method"], "notifications/resources/updated");
        assert_eq!(n["params"]["uri"], URI);
        assert_eq!(n["params"]["_meta"][SUB], "p");
        assert_eq!(old_updates.recv().await.unwrap().uri, URI);
        assert_eq!(srv2.resource_updated("test://other"), 0);

        // Cancelled: stream 10 hears nothing more, and is not answered.
        writer
            .write_all(
                b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":10}}\n",
            )
            .await
            .unwrap();
        // A request after the cancellation: its answer comes after it was applied.
        writer
            .write_all(line(json!(20), "tools/list", json!({})).as_bytes())
            .await
            .unwrap();
        assert_eq!(next().await["id"], 20);
        add_tool(&srv2, "t2");
        add_prompt(&srv2, "p2");
        let n = next().await;
        assert_eq!(
            n["method"], "notifications/prompts/list_changed",
            "no tools change on the cancelled stream: {n}"
        );
        old.shutdown().await;
    })
    .expect("completes");
}

#[test]
fn listen_streams_are_bounded_per_connection() {
    let sim = Sim::new();
    let srv = server();
    let mut config = srv.config().clone();
    config.max_listeners = 1;
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    {
        let srv = srv.clone();
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve_with(rt2, server_end, config).await;
        }));
    }
    let (reader, mut writer) = client_end.into_parts();
    sim.block_on(async move {
        let mut reader = BufReader::new(reader);
        for id in [1, 2] {
            writer
                .write_all(
                    line(
                        json!(id),
                        "subscriptions/listen",
                        json!({"notifications": {"toolsListChanged": true}}),
                    )
                    .as_bytes(),
                )
                .await
                .unwrap();
        }
        let mut l = String::new();
        reader.read_line(&mut l).await.unwrap();
        let ack: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(ack["params"]["_meta"][SUB], 1);
        l.clear();
        reader.read_line(&mut l).await.unwrap();
        let refused: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(refused["id"], 2);
        assert_eq!(refused["error"]["code"], -32008);
        // Closing the input ends the open stream gracefully, with its result.
        drop(writer);
        l.clear();
        reader.read_line(&mut l).await.unwrap();
        let end: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(end["id"], 1);
        assert_eq!(end["result"]["_meta"][SUB], 1);
    })
    .expect("completes");
}

#[test]
fn our_stateless_client_subscribes_and_hears_list_changes_through_one_listen_stream() {
    let sim = Sim::new();
    let srv = server();
    let transport = serve(&sim, &srv);
    let rt = sim.runtime();
    let srv2 = srv.clone();
    sim.block_on(async move {
        let srv = srv2;
        let client = Client::connect(
            rt,
            transport,
            ClientOptions::default().discovery(Discovery::Discover),
        )
        .await
        .unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
        let mut notes = client.notifications();
        let mut updates = client.subscribe(URI).await.unwrap();
        // The stream is open (acknowledged): changes arrive, once each.
        add_tool(&srv, "t1");
        assert!(matches!(
            notes.recv().await,
            Some(ServerNotification::ToolsListChanged)
        ));
        assert_eq!(srv.resource_updated(URI), 1);
        assert_eq!(updates.recv().await.unwrap().uri, URI);
        assert!(matches!(
            notes.recv().await,
            Some(ServerNotification::ResourceUpdated(u)) if u.uri == URI
        ));
        add_prompt(&srv, "p1");
        assert!(matches!(
            notes.recv().await,
            Some(ServerNotification::PromptsListChanged)
        ));
        assert!(notes.try_next().is_none(), "nothing twice");

        // Unsubscribing reopens the stream without the URI; list changes still come, once.
        client.unsubscribe(URI).await.unwrap();
        // The old stream's cancellation went out before this request: once it is answered,
        // the server has no stream for the URI.
        client.list_tools().await.unwrap();
        assert_eq!(srv.resource_updated(URI), 0);
        add_tool(&srv, "t2");
        assert!(matches!(
            notes.recv().await,
            Some(ServerNotification::ToolsListChanged)
        ));
        // A round trip lets anything still in flight arrive before the check.
        client.list_tools().await.unwrap();
        assert!(notes.try_next().is_none(), "{:?}", notes.try_next());
        assert!(updates.try_next().is_none());
        client.shutdown().await;
    })
    .expect("completes");
    assert_eq!(srv.connection_count(), 0);
}

/// Reads one NDJSON message.
async fn read_msg<R: futures_util::io::AsyncBufRead + Unpin>(reader: &mut R) -> Value {
    let mut l = String::new();
    assert!(reader.read_line(&mut l).await.unwrap() > 0, "input ended");
    serde_json::from_str(&l).unwrap()
}

#[test]
fn the_builder_sets_the_listen_limits_and_the_client_hears_when_they_are_exceeded() {
    let sim = Sim::new();
    let srv = Server::builder("limits", "1")
        .versions(&ProtocolVersion::ALL)
        .tool(tool("noop"), |_: Value, _cx: ToolContext| async move {
            Ok(CallToolResult::text("ok"))
        })
        .max_listeners(2)
        .listener_backlog(3)
        .max_listen_streams(7)
        .listen_keep_alive(None)
        .build();
    assert_eq!(srv.config().max_listeners, 2);
    assert_eq!(srv.config().listener_backlog, 3);
    let defaults = server();
    assert_eq!(
        (
            defaults.config().max_listeners,
            defaults.config().listener_backlog
        ),
        (16, 64)
    );
    let (reader, mut writer) = serve(&sim, &srv).into_parts();
    let srv2 = srv.clone();
    sim.block_on(async move {
        let mut reader = BufReader::new(reader);
        for id in 1..=3 {
            writer
                .write_all(
                    line(
                        json!(id),
                        "subscriptions/listen",
                        json!({"notifications": {"toolsListChanged": true}}),
                    )
                    .as_bytes(),
                )
                .await
                .unwrap();
        }
        // Two streams (the limit), the third refused.
        let mut acked = Vec::new();
        let mut refused = None;
        while acked.len() < 2 || refused.is_none() {
            let m = read_msg(&mut reader).await;
            if m["method"] == "notifications/subscriptions/acknowledged" {
                acked.push(m["params"]["_meta"][SUB].clone());
            } else {
                refused = Some(m);
            }
        }
        assert_eq!(acked, [json!(1), json!(2)]);
        let refused = refused.unwrap();
        assert_eq!(refused["id"], 3);
        assert_eq!(refused["error"]["code"], -32008);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("too many subscriptions/listen streams open (limit 2)"),
            "{refused}"
        );
        // The backlog: more changes at once than a stream may queue end the streams with
        // `notifications/cancelled` naming them (the client is told, not silently starved).
        for i in 0..10 {
            add_tool(&srv2, &format!("t{i}"));
        }
        let mut cancelled = Vec::new();
        let mut changes = 0;
        while cancelled.len() < 2 {
            let m = read_msg(&mut reader).await;
            match m["method"].as_str() {
                Some("notifications/tools/list_changed") => changes += 1,
                Some("notifications/cancelled") => {
                    assert!(
                        m["params"]["reason"]
                            .as_str()
                            .unwrap()
                            .contains("fell behind"),
                        "{m}"
                    );
                    cancelled.push(m["params"]["requestId"].clone());
                }
                _ => panic!("{m}"),
            }
        }
        cancelled.sort_by_key(|v| v.as_i64());
        assert_eq!(cancelled, [json!(1), json!(2)]);
        assert!(changes < 20, "bounded by the backlog: {changes}");
    })
    .expect("completes");
}

#[test]
fn shutting_the_server_down_answers_open_listen_streams_over_a_byte_stream() {
    let sim = Sim::new();
    let srv = server();
    let (reader, mut writer) = serve(&sim, &srv).into_parts();
    let srv2 = srv.clone();
    sim.block_on(async move {
        let mut reader = BufReader::new(reader);
        for id in [json!(1), json!("two")] {
            writer
                .write_all(
                    line(
                        id,
                        "subscriptions/listen",
                        json!({"notifications": {"toolsListChanged": true}}),
                    )
                    .as_bytes(),
                )
                .await
                .unwrap();
        }
        for _ in 0..2 {
            let ack = read_msg(&mut reader).await;
            assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        }
        assert_eq!(srv2.connection_count(), 1);
        srv2.shut_down();
        let mut ended = Vec::new();
        for _ in 0..2 {
            let end = read_msg(&mut reader).await;
            assert_eq!(end["result"]["resultType"], "complete", "{end}");
            assert_eq!(end["result"]["_meta"][SUB], end["id"]);
            ended.push(end["id"].to_string());
        }
        ended.sort();
        assert_eq!(ended, ["\"two\"", "1"]);
        // Then the connection ends: the output closes.
        let mut rest = String::new();
        assert_eq!(reader.read_line(&mut rest).await.unwrap(), 0, "{rest}");
        drop(writer);
    })
    .expect("completes");
}
