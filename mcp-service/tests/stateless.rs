//! A server that serves both eras, driven by a raw 2026-07-28 client over a byte stream:
//! `server/discover`, cacheable lists with the server's cache hints, a tool whose log messages
//! follow the request's own log level, `resultType`, and a handshake-era client on the same
//! server. Deterministic, on the [`Sim`] runtime.

use futures_util::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use mcp_proto::ProtocolVersion;
use mcp_service::memory::duplex;
use mcp_service::schema::{CacheScope, CallToolResult, LoggingLevel, Tool};
use mcp_service::server::{ResourceContext, ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("both", "1")
        .versions(&ProtocolVersion::ALL)
        .logging()
        // No resource, but `resources/read` is served (and answers "not found").
        .dynamic_resources()
        .cache_hints(60_000, CacheScope::Public)
        .tool(
            Tool::new("chatty", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                cx.log(LoggingLevel::Debug, None, "debug").await?;
                cx.log(LoggingLevel::Warning, None, "warning").await?;
                Ok(CallToolResult::text(format!(
                    "served at {}",
                    cx.protocol_version().map(|v| v.as_str()).unwrap_or("?")
                )))
            },
        )
        .build()
}

fn request(id: u64, method: &str, params: Value, log_level: Option<&str>) -> String {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    });
    if let Some(l) = log_level {
        meta["io.modelcontextprotocol/logLevel"] = json!(l);
    }
    let mut params = params;
    params["_meta"] = meta;
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

#[test]
fn a_stateless_client_is_served_without_a_handshake() {
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server();
    {
        let rt2 = rt.clone();
        let srv = srv.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let (reader, mut writer) = client_end.into_parts();
    let lines = sim
        .block_on(async move {
            let mut reader = BufReader::new(reader);
            let mut out = Vec::new();
            for line in [
                request(1, "server/discover", json!({}), None),
                request(2, "tools/list", json!({}), None),
                request(
                    3,
                    "tools/call",
                    json!({"name": "chatty", "arguments": {}}),
                    Some("info"),
                ),
                request(
                    4,
                    "tools/call",
                    json!({"name": "chatty", "arguments": {}}),
                    None,
                ),
                request(5, "resources/read", json!({"uri": "file:///nope"}), None),
            ] {
                writer.write_all(line.as_bytes()).await.unwrap();
                // Read up to and including this request's response.
                loop {
                    let mut l = String::new();
                    reader.read_line(&mut l).await.unwrap();
                    let v: Value = serde_json::from_str(&l).unwrap();
                    let done = v.get("id").is_some();
                    out.push(v);
                    if done {
                        break;
                    }
                }
            }
            out
        })
        .expect("completes");
    let discover = &lines[0]["result"];
    assert_eq!(discover["supportedVersions"][4], "2026-07-28");
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "both"
    );
    let list = &lines[1]["result"];
    assert_eq!(list["tools"][0]["name"], "chatty");
    assert_eq!(
        (&list["resultType"], &list["ttlMs"], &list["cacheScope"]),
        (&json!("complete"), &json!(60_000), &json!("public"))
    );
    // logLevel "info": the warning only, then the result.
    assert_eq!(lines[2]["method"], "notifications/message");
    assert_eq!(lines[2]["params"]["data"], "warning");
    assert_eq!(lines[3]["id"], 3);
    assert_eq!(
        lines[3]["result"]["content"][0]["text"],
        "served at 2026-07-28"
    );
    assert_eq!(lines[3]["result"]["resultType"], "complete");
    assert!(
        lines[3]["result"].get("ttlMs").is_none(),
        "a tool result is not cacheable"
    );
    // No logLevel: no log messages at all.
    assert_eq!(lines[4]["id"], 4);
    // A missing resource in 2026-07-28 is -32602 with the uri.
    assert_eq!(lines[5]["error"]["code"], -32602);
    assert_eq!(lines[5]["error"]["data"]["uri"], "file:///nope");

    // A handshake-era client on the same server is served as before.
    let (client_end, server_end) = duplex(64 * 1024);
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let rt2 = rt.clone();
    let tools = sim
        .block_on(async move {
            let options =
                ClientOptions::default().discovery(mcp_proto::session::Discovery::Initialize);
            let client = Client::connect(rt2, client_end, options).await.unwrap();
            assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
            let r = client.call_tool("chatty", json!({})).await.unwrap();
            (client.list_tools().await.unwrap(), r)
        })
        .expect("completes");
    assert_eq!(tools.0.len(), 1);
    assert_eq!(
        serde_json::to_value(&tools.1).unwrap()["content"][0]["text"],
        "served at 2025-11-25"
    );
}

/// Our client in each discovery mode (and by default, `Auto`) against a server of both eras
/// and a handshake-only one.
#[test]
fn our_client_discovers_the_era() {
    use mcp_proto::session::Discovery;
    let defaults = ClientOptions::default();
    assert_eq!(defaults.config().discovery, Discovery::Auto);
    assert!(
        defaults
            .config()
            .versions
            .contains(&ProtocolVersion::V2026_07_28)
    );
    let sim = Sim::new();
    let rt = sim.runtime();
    let old = Server::builder("old", "1")
        .versions(&ProtocolVersion::HANDSHAKE)
        .tool(
            Tool::new("chatty", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("old")) },
        )
        .build();
    for (srv, discovery, expect) in [
        (
            server(),
            Some(Discovery::Discover),
            Some(ProtocolVersion::V2026_07_28),
        ),
        (
            server(),
            Some(Discovery::Auto),
            Some(ProtocolVersion::V2026_07_28),
        ),
        (server(), None, Some(ProtocolVersion::V2026_07_28)),
        (
            server(),
            Some(Discovery::Initialize),
            Some(ProtocolVersion::V2025_11_25),
        ),
        (
            old.clone(),
            Some(Discovery::Auto),
            Some(ProtocolVersion::V2025_11_25),
        ),
        (old.clone(), None, Some(ProtocolVersion::V2025_11_25)),
        (old.clone(), Some(Discovery::Discover), None),
    ] {
        let handshake_only = !srv.config().versions.iter().any(|v| v.is_stateless());
        let (client_end, server_end) = duplex(64 * 1024);
        {
            let rt2 = rt.clone();
            rt.spawn(Box::pin(async move {
                let _ = srv.serve(rt2, server_end).await;
            }));
        }
        let rt2 = rt.clone();
        let got = sim
            .block_on(async move {
                let options = match discovery {
                    Some(d) => ClientOptions::default().discovery(d),
                    None => ClientOptions::default(),
                };
                let client = match Client::connect(rt2, client_end, options).await {
                    Ok(c) => c,
                    Err(e) => return Err(e),
                };
                let version = client.protocol_version();
                let tools = client.list_tools().await.unwrap();
                let r = client.call_tool("chatty", json!({})).await.unwrap();
                let text = serde_json::to_value(&r).unwrap()["content"][0]["text"].clone();
                Ok((version, tools.len(), text))
            })
            .expect("completes");
        match (expect, got) {
            (Some(v), Ok((version, tools, text))) => {
                assert_eq!(version, v, "{discovery:?}");
                assert_eq!(tools, 1);
                if v == ProtocolVersion::V2026_07_28 {
                    assert_eq!(text, "served at 2026-07-28");
                } else if handshake_only {
                    assert_eq!(text, "old");
                } else {
                    assert_eq!(text, "served at 2025-11-25");
                }
            }
            (None, Err(e)) => assert_eq!(e.kind(), mcp_proto::ErrorKind::MethodNotFound, "{e}"),
            (expect, got) => panic!("{discovery:?}: expected {expect:?}, got {got:?}"),
        }
    }
}

#[test]
fn our_client_caches_results_as_their_hints_say() {
    use mcp_proto::session::Discovery;
    use mcp_service::schema::{Resource, ResourceContents};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = reads.clone();
    let srv = Server::builder("cached", "1")
        .versions(&ProtocolVersion::ALL)
        .resource_subscriptions()
        .cache_hints(60_000, CacheScope::Private)
        .resource(
            Resource::new("test://r", "r"),
            move |uri: String, _cx: ResourceContext| {
                let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
                async move { Ok(vec![ResourceContents::text(uri, format!("read {n}"))]) }
            },
        )
        .build();
    for cache in [true, false] {
        let sim = Sim::new();
        let rt = sim.runtime();
        let (client_end, server_end) = duplex(64 * 1024);
        {
            let rt2 = rt.clone();
            let srv = srv.clone();
            rt.spawn(Box::pin(async move {
                let _ = srv.serve(rt2, server_end).await;
            }));
        }
        let before = reads.load(Ordering::Relaxed);
        let srv2 = srv.clone();
        let texts = sim
            .block_on(async move {
                let mut options = ClientOptions::default().discovery(Discovery::Discover);
                if !cache {
                    options = options.no_response_cache();
                }
                let client = Client::connect(rt.clone(), client_end, options)
                    .await
                    .unwrap();
                let text = |r: mcp_service::schema::ReadResourceResult| {
                    serde_json::to_value(&r).unwrap()["contents"][0]["text"].clone()
                };
                let mut out = Vec::new();
                out.push(text(client.read_resource("test://r").await.unwrap()));
                out.push(text(client.read_resource("test://r").await.unwrap()));
                // An update of the resource drops it from the cache.
                let _updates = client.subscribe("test://r").await.unwrap();
                srv2.resource_updated("test://r");
                rt.sleep_until(rt.now() + mcp_proto::Duration::from_millis(50))
                    .await;
                out.push(text(client.read_resource("test://r").await.unwrap()));
                out
            })
            .expect("done");
        let served = reads.load(Ordering::Relaxed) - before;
        if cache {
            // Two reads, one answered from the cache; the third after the update.
            assert_eq!(served, 2, "{texts:?}");
            assert_eq!(texts[0], texts[1]);
            assert_ne!(texts[1], texts[2]);
        } else {
            assert_eq!(served, 3, "{texts:?}");
        }
    }
}

#[test]
fn ping_and_log_level_work_in_the_stateless_era() {
    use futures_util::StreamExt;
    use mcp_proto::session::Discovery;
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    let srv = server();
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let levels = sim
        .block_on(async move {
            let options = ClientOptions::default().discovery(Discovery::Discover);
            let client = Client::connect(rt.clone(), client_end, options)
                .await
                .unwrap();
            assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
            // No `ping` in this era: the client asks `server/discover` instead.
            client.ping().await.unwrap();
            let mut logs = client.log_messages();
            // No log level asked for yet: the tool's messages are not sent.
            client.call_tool("chatty", json!({})).await.unwrap();
            // From now on every request asks for warnings and above.
            client
                .set_logging_level(LoggingLevel::Warning)
                .await
                .unwrap();
            client.call_tool("chatty", json!({})).await.unwrap();
            rt.sleep_until(rt.now() + mcp_proto::Duration::from_millis(10))
                .await;
            let mut got = Vec::new();
            while let Some(Some(m)) = futures_util::FutureExt::now_or_never(logs.next()) {
                got.push(m.level);
            }
            got
        })
        .expect("done");
    assert_eq!(levels, [LoggingLevel::Warning]);
}

#[test]
fn extensions_are_declared_and_read_on_both_ends_in_both_eras() {
    use mcp_proto::session::Discovery;
    for discovery in [Discovery::Initialize, Discovery::Discover] {
        let sim = Sim::new();
        let rt = sim.runtime();
        let (client_end, server_end) = duplex(64 * 1024);
        let srv = Server::builder("ext", "1")
            .extension("com.example/audit", json!({"level": 2}))
            .tool(
                Tool::new("who", schema_of(json!({"type": "object"}))),
                |_: Value, cx: ToolContext| async move {
                    Ok(CallToolResult::text(
                        cx.client_extension("com.example/trace")
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "none".into()),
                    ))
                },
            )
            .build();
        {
            let rt2 = rt.clone();
            rt.spawn(Box::pin(async move {
                let _ = srv.serve(rt2, server_end).await;
            }));
        }
        let (server_side, client_side) = sim
            .block_on(async move {
                let options = ClientOptions::default()
                    .discovery(discovery)
                    .extension("com.example/trace", json!({"sample": true}));
                let client = Client::connect(rt, client_end, options).await.unwrap();
                let r = client.call_tool("who", json!({})).await.unwrap();
                let seen = serde_json::to_value(&r).unwrap()["content"][0]["text"].clone();
                (client.server_extension("com.example/audit"), seen)
            })
            .expect("done");
        assert_eq!(server_side, Some(json!({"level": 2})), "{discovery:?}");
        assert_eq!(client_side, json!("{\"sample\":true}"), "{discovery:?}");
    }
}

#[test]
fn cache_hints_can_differ_per_list_and_per_resource() {
    use mcp_service::schema::{Resource, ResourceContents};
    let srv = Server::builder("hints", "1")
        // Empty lists, served all the same.
        .dynamic_tools()
        .dynamic_prompts()
        .cache_hints(1_000, CacheScope::Private)
        .cache_hints_for("tools/list", 60_000, CacheScope::Public)
        .cache_hints_for("test://slow", 5_000, CacheScope::Public)
        .resource(
            Resource::new("test://slow", "slow"),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![ResourceContents::text(uri, "s")])
            },
        )
        .resource(
            Resource::new("test://other", "other"),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![ResourceContents::text(uri, "o")])
            },
        )
        .build();
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(64 * 1024);
    {
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    let (reader, mut writer) = client_end.into_parts();
    let got = sim
        .block_on(async move {
            let mut reader = BufReader::new(reader);
            let mut out = Vec::new();
            for line in [
                request(1, "tools/list", json!({}), None),
                request(2, "prompts/list", json!({}), None),
                request(3, "resources/read", json!({"uri": "test://slow"}), None),
                request(4, "resources/read", json!({"uri": "test://other"}), None),
            ] {
                writer.write_all(line.as_bytes()).await.unwrap();
                writer.flush().await.unwrap();
                let mut text = String::new();
                reader.read_line(&mut text).await.unwrap();
                let v: Value = serde_json::from_str(&text).unwrap();
                out.push((
                    v["result"]["ttlMs"].clone(),
                    v["result"]["cacheScope"].clone(),
                ));
            }
            out
        })
        .expect("done");
    assert_eq!(
        got,
        [
            (json!(60_000), json!("public")),
            (json!(1_000), json!("private")),
            (json!(5_000), json!("public")),
            (json!(1_000), json!("private")),
        ]
    );
}
