//! One Streamable HTTP endpoint served by several engines (`HttpServerOptions::shards`): new
//! sessions go to the engines in turn, and every request of a session reaches the engine that
//! opened it (its id says which); ids it did not make are 404; the handshake era, the
//! stateless era and legacy HTTP+SSE all work across them, and a resource update reaches the
//! subscribers of every engine.

#[path = "support/http.rs"]
mod support_http;

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use http_body_util::Full;
use hyper::Request;
use mcp_proto::ProtocolVersion;
use mcp_proto::http::{EndpointConfig, LegacySse};
use mcp_proto::session::Discovery;
use mcp_service::hyper_server::HttpServerOptions;
use mcp_service::schema::{CallToolResult, Resource, ResourceContents, Tool};
use mcp_service::server::{ResourceContext, ToolContext, schema_of};
use mcp_tokio::{ClientOptions, HttpClientOptions, Server, TokioRuntime};
use serde_json::{Value, json};
use support_http::{body_text, send};
use tokio::net::TcpListener;

const SHARDS: usize = 4;
const V: &str = "2025-11-25";

fn server() -> Server {
    Server::builder("shards", "1")
        .versions(&ProtocolVersion::ALL)
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or("")))
            },
        )
        .resource(
            Resource::new("note://1", "note"),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![ResourceContents::text(uri, "one")])
            },
        )
        .resource_subscriptions()
        .build()
}

/// Serves `server` with [`SHARDS`] engines (legacy SSE on too); returns the port.
async fn serve(server: Server) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .legacy_sse(Some(LegacySse::default()));
    let options = HttpServerOptions::default().shards(SHARDS);
    tokio::spawn(mcp_tokio::serve_http_with(
        TokioRuntime::current(),
        server,
        listener,
        config,
        options,
    ));
    port
}

fn post(port: u16, sid: Option<&str>, body: String) -> Request<Full<bytes::Bytes>> {
    support_http::post_mcp(port, sid, V, body)
}

/// Opens a session by hand; returns its id.
async fn open(port: u16) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let resp = send(port, post(port, None, init.to_string())).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    body_text(resp).await;
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let resp = send(port, post(port, Some(&sid), note.to_string())).await;
    assert_eq!(resp.status(), 202);
    sid
}

async fn echo(port: u16, sid: &str, text: &str) -> (u16, String) {
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text": text}}});
    let resp = send(port, post(port, Some(sid), call.to_string())).await;
    let status = resp.status().as_u16();
    (status, body_text(resp).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_spread_and_each_is_served_by_its_engine() {
    let port = serve(server()).await;
    let mut sids = Vec::new();
    for _ in 0..2 * SHARDS {
        sids.push(open(port).await);
    }
    // One engine after another: every engine opened sessions, its index in their low byte.
    let shards: BTreeSet<u128> = sids
        .iter()
        .map(|s| u128::from_str_radix(s, 16).unwrap() & 0xff)
        .collect();
    assert_eq!(shards, (0..SHARDS as u128).collect());
    for (i, sid) in sids.iter().enumerate() {
        let (status, text) = echo(port, sid, &format!("call {i}")).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(&format!("call {i}")), "{text}");
    }
    // An id no engine made, whatever engine it names, is no session.
    for shard in 0..SHARDS as u128 {
        let made_up = format!("{:032x}", (0x5eed_u128 << 64) | shard);
        assert_eq!(echo(port, &made_up, "x").await.0, 404);
    }
    // A session ended on its engine is gone there.
    let gone = sids.pop().unwrap();
    let delete = Request::delete("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("mcp-session-id", &gone)
        .header("mcp-protocol-version", V)
        .body(Full::default())
        .unwrap();
    assert_eq!(send(port, delete).await.status(), 204);
    assert_eq!(echo(port, &gone, "x").await.0, 404);
    for sid in &sids {
        assert_eq!(echo(port, sid, "still").await.0, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_of_every_transport_and_era_are_served_and_updated() {
    let server = server();
    let port = serve(server.clone()).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut clients = Vec::new();
    for discovery in [Discovery::Initialize, Discovery::Discover] {
        for _ in 0..SHARDS {
            let options = ClientOptions::default().discovery(discovery);
            let client = mcp_tokio::connect_http(
                TokioRuntime::current(),
                &url,
                options,
                HttpClientOptions::new(),
            )
            .await
            .unwrap();
            clients.push(client);
        }
    }
    for _ in 0..SHARDS {
        let sse = format!("http://127.0.0.1:{port}/sse");
        let client = mcp_tokio::connect_sse(
            TokioRuntime::current(),
            &sse,
            Default::default(),
            HttpClientOptions::new(),
        )
        .await
        .unwrap();
        clients.push(client);
    }
    let mut updates = Vec::new();
    for (i, client) in clients.iter().enumerate() {
        let text = format!("client {i}");
        let r = client
            .call_tool("echo", json!({"text": text}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some(text.as_str()));
        let read = client.read_resource("note://1").await.unwrap();
        assert_eq!(read.contents[0].as_text(), Some("one"));
        updates.push(client.subscribe("note://1").await.unwrap());
    }
    assert_eq!(clients[0].protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(
        clients[SHARDS].protocol_version(),
        ProtocolVersion::V2026_07_28
    );
    // (Legacy HTTP+SSE carries the handshake era.)
    assert_ne!(
        clients[2 * SHARDS].protocol_version(),
        ProtocolVersion::V2026_07_28
    );
    // One update reaches the subscribers on every engine, in every era.
    server.resource_updated("note://1");
    for (i, update) in updates.iter_mut().enumerate() {
        let got = tokio::time::timeout(Duration::from_secs(10), update.next())
            .await
            .unwrap_or_else(|_| panic!("client {i} got no update"))
            .unwrap();
        assert_eq!(got.uri, "note://1");
    }
    for client in clients {
        client.shutdown().await;
    }
}
