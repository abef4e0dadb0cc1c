//! Cache hints a handler chooses for one result (`HandlerContext::cache_hints`): on the wire
//! of a 2026-07-28 `resources/read`, over the server's and the URI's registered hints, absent
//! for a handshake-era client; and our client's response cache keeps each result for its own
//! `ttlMs`. Deterministic, on the [`Sim`] runtime (its clock moves only when asked).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_proto::session::Discovery;
use mcp_proto::{Duration, ProtocolVersion};
use mcp_service::memory::duplex;
use mcp_service::schema::{CacheScope, CallToolResult, ResourceContents, ResourceTemplate, Tool};
use mcp_service::server::{ResourceContext, ToolContext, schema_of};
use mcp_service::sim::{Sim, SimRuntime};
use mcp_service::{Client, ClientOptions, Runtime, Server};
use serde_json::{Value, json};

/// `item://{id}`: `item://fresh` asks to be read again every time, `item://hour` to be kept
/// an hour by anyone, `item://plain` takes what is registered. Each read is counted by id.
fn server(reads: Arc<HashMap<&'static str, AtomicUsize>>) -> Server {
    Server::builder("hints", "1")
        .versions(&ProtocolVersion::ALL)
        .cache_hints(60_000, CacheScope::Private)
        // Registered for the URI, and still overridden by the handler.
        .cache_hints_for("item://fresh", 30_000, CacheScope::Public)
        .resource_template(
            ResourceTemplate::new("item://{id}", "item"),
            move |uri: String, vars: HashMap<String, String>, cx: ResourceContext| {
                let reads = reads.clone();
                async move {
                    let id = vars.get("id").map(String::as_str).unwrap_or("");
                    let n = reads
                        .get(id)
                        .map_or(0, |c| c.fetch_add(1, Ordering::SeqCst) + 1);
                    match id {
                        "fresh" => cx.cache_hints(0, CacheScope::Private),
                        "hour" => {
                            // The last choice wins.
                            cx.cache_hints(1, CacheScope::Private);
                            cx.cache_hints(3_600_000, CacheScope::Public);
                        }
                        _ => {}
                    }
                    Ok(vec![ResourceContents::text(uri, format!("read {n}"))])
                }
            },
        )
        .tool(
            Tool::new("t", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                // Tool results are not cacheable: this changes nothing.
                cx.cache_hints(5, CacheScope::Public);
                Ok(CallToolResult::text("done"))
            },
        )
        .build()
}

fn counters() -> Arc<HashMap<&'static str, AtomicUsize>> {
    Arc::new(
        ["fresh", "hour", "plain"]
            .into_iter()
            .map(|k| (k, AtomicUsize::new(0)))
            .collect(),
    )
}

fn run<F, Fut>(srv: &Server, options: ClientOptions, f: F)
where
    F: FnOnce(Client, SimRuntime) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
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
    sim.block_on(async move {
        let client = Client::connect(rt.clone(), client_end, options)
            .await
            .unwrap();
        f(client.clone(), rt).await;
        client.shutdown().await;
    })
    .expect("the exchange finished");
}

fn stateless() -> ClientOptions {
    ClientOptions::default()
        .versions(&ProtocolVersion::ALL)
        .discovery(Discovery::Discover)
}

/// The raw result of `resources/read` for `uri` (past the client's cache).
async fn raw_read(client: &Client, uri: &str) -> Value {
    let raw = client
        .request("resources/read", &json!({ "uri": uri }))
        .await
        .unwrap();
    serde_json::from_str(raw.get()).unwrap()
}

#[test]
fn a_handler_chooses_the_cache_hints_of_its_result() {
    let srv = server(counters());
    run(&srv, stateless(), |client, _rt| async move {
        assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
        let hints = |v: &Value| (v["ttlMs"].clone(), v["cacheScope"].clone());
        let fresh = raw_read(&client, "item://fresh").await;
        assert_eq!(hints(&fresh), (json!(0), json!("private")), "{fresh}");
        let hour = raw_read(&client, "item://hour").await;
        assert_eq!(hints(&hour), (json!(3_600_000), json!("public")), "{hour}");
        let plain = raw_read(&client, "item://plain").await;
        assert_eq!(hints(&plain), (json!(60_000), json!("private")), "{plain}");
        // A tool result has no cache hints, whatever its handler said.
        let call = client
            .request("tools/call", &json!({"name": "t", "arguments": {}}))
            .await
            .unwrap();
        let call: Value = serde_json::from_str(call.get()).unwrap();
        assert!(
            call.get("ttlMs").is_none() && call.get("cacheScope").is_none(),
            "{call}"
        );
    });
}

#[test]
fn a_handshake_era_result_has_no_cache_hints() {
    let srv = server(counters());
    run(
        &srv,
        ClientOptions::default().discovery(Discovery::Initialize),
        |client, _rt| async move {
            assert!(!client.protocol_version().is_stateless());
            for uri in ["item://fresh", "item://hour", "item://plain"] {
                let r = raw_read(&client, uri).await;
                assert_eq!(r["contents"][0]["uri"], uri);
                assert!(
                    r.get("ttlMs").is_none() && r.get("cacheScope").is_none(),
                    "{r}"
                );
            }
        },
    );
}

#[test]
fn our_client_keeps_each_result_for_its_own_ttl() {
    let reads = counters();
    let srv = server(reads.clone());
    let count = move |id: &str| reads[id].load(Ordering::SeqCst);
    run(&srv, stateless(), |client, rt| async move {
        let text = |r: mcp_service::schema::ReadResourceResult| match &r.contents[0] {
            ResourceContents::Text(t) => t.text.clone(),
            other => panic!("not text: {other:?}"),
        };
        for _ in 0..3 {
            client.read_resource("item://fresh").await.unwrap();
            client.read_resource("item://hour").await.unwrap();
            client.read_resource("item://plain").await.unwrap();
        }
        // `ttlMs: 0` is asked every time; the others once.
        assert_eq!(count("fresh"), 3);
        assert_eq!(count("hour"), 1);
        assert_eq!(count("plain"), 1);

        // Past the minute, before the hour: only the hour's result is still kept.
        rt.sleep_until(rt.now() + Duration::from_secs(61)).await;
        assert_eq!(
            text(client.read_resource("item://plain").await.unwrap()),
            "read 2"
        );
        assert_eq!(
            text(client.read_resource("item://hour").await.unwrap()),
            "read 1"
        );
        assert_eq!(count("hour"), 1);
        rt.sleep_until(rt.now() + Duration::from_secs(3_600)).await;
        assert_eq!(
            text(client.read_resource("item://hour").await.unwrap()),
            "read 2"
        );
    });
}
