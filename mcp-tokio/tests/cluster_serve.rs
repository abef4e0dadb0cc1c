//! Two instances of one server sharing their sessions through the cluster stores
//! (`ServerBuilder::cluster`): a session opened on one is served by the other, a client
//! resumes either instance's SSE stream on the other with nothing lost and nothing twice, a
//! subscription made on one hears an update made on the other, and a session deleted on one
//! ends on both. Run on the in-memory stores, and on a real `redis-server`.

#[path = "../../mcp-service/tests/support/cluster.rs"]
mod cluster_support;
#[path = "support/http.rs"]
mod support_http;

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use mcp_proto::http::EndpointConfig;
use mcp_service::cluster::{Cluster, MemoryStores, StoreLimits};
use mcp_service::hyper_server::HttpServerOptions;
use mcp_service::schema::{CallToolResult, Resource, ResourceContents, Tool};
use mcp_service::server::{ResourceContext, ToolContext, schema_of};
use mcp_tokio::{Server, TokioRuntime};
use serde_json::{Value, json};
use support_http::{body_text, send};
use tokio::net::TcpListener;

const V: &str = "2025-11-25";

fn server(cluster: Cluster) -> Server {
    Server::builder("roaming", "1")
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or("")))
            },
        )
        .tool(
            Tool::new("slow", schema_of(json!({"type": "object"}))),
            |_args: Value, cx: ToolContext| async move {
                for i in 1..=4 {
                    cx.progress(f64::from(i), Some(4.0), None).await?;
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                Ok(CallToolResult::text("slow done"))
            },
        )
        .tool(
            Tool::new("roots", schema_of(json!({"type": "object"}))),
            |_args: Value, cx: ToolContext| async move {
                let roots = cx.list_roots().await?;
                Ok(CallToolResult::text(format!("{} roots", roots.roots.len())))
            },
        )
        .resource(
            Resource::new("note://1", "note"),
            |uri: String, _cx: ResourceContext| async move {
                Ok(vec![ResourceContents::text(uri, "one")])
            },
        )
        .resource_subscriptions()
        .logging()
        .dynamic_tools()
        .cluster(cluster)
        .build()
}

async fn serve(server: Server) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    tokio::spawn(mcp_tokio::serve_http_with(
        TokioRuntime::current(),
        server,
        listener,
        config,
        HttpServerOptions::default(),
    ));
    port
}

fn post(port: u16, sid: Option<&str>, body: Value) -> Request<Full<bytes::Bytes>> {
    support_http::post_mcp(port, sid, V, body.to_string())
}

fn get(port: u16, sid: &str, last: Option<&str>) -> Request<Full<bytes::Bytes>> {
    let mut b = Request::get("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", V);
    if let Some(l) = last {
        b = b.header("last-event-id", l);
    }
    b.body(Full::default()).unwrap()
}

async fn open(port: u16) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": V, "capabilities": {"roots": {}}, "clientInfo": {"name": "raw", "version": "1"}}});
    let resp = send(port, post(port, None, init)).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    body_text(resp).await;
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let resp = send(port, post(port, Some(&sid), note)).await;
    assert_eq!(resp.status(), 202);
    sid
}

async fn call(port: u16, sid: &str, id: u64, method: &str, params: Value) -> (u16, String) {
    let req = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    let resp = send(port, post(port, Some(sid), req)).await;
    let status = resp.status().as_u16();
    (status, body_text(resp).await)
}

/// Reads `body` until its text (from the start) contains `want`; the text so far.
async fn read_until(body: &mut Incoming, text: &mut String, want: &str) {
    read_count(body, text, want, 1).await;
}

/// Reads `body` until its text (from the start) contains `want` `n` times.
async fn read_count(body: &mut Incoming, text: &mut String, want: &str, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while text.matches(want).count() < n {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .unwrap_or_else(|_| panic!("no {want:?} in time; got {text}"))
            .unwrap_or_else(|| panic!("the body ended before {want:?}; got {text}"))
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

/// The ids of the events in `text` whose data contains `what`.
fn ids_of(text: &str, what: &str) -> Vec<String> {
    text.split("\n\n")
        .filter(|e| e.contains(what))
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("id: ")))
        .map(str::to_owned)
        .collect()
}

/// Waits until `cond` holds (a message on the bus takes a moment).
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..200 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: not in time");
}

async fn walk(ca: Cluster, cb: Cluster) {
    let (a, b) = (server(ca.clone()), server(cb.clone()));
    let (pa, pb) = (serve(a.clone()).await, serve(b.clone()).await);

    // A session opened on A is served by B (taken over from the store).
    let sid = open(pa).await;
    let (status, text) = call(
        pb,
        &sid,
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "via B"}}),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("via B"), "{text}");
    assert_eq!(cb.stats().sessions_adopted, 1);
    // An id no instance made is still no session.
    let made_up = format!("{:032x}", 0x5eed_u128 << 64);
    let (status, _) = call(pb, &made_up, 2, "tools/list", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(cb.stats().sessions_unknown, 1);

    // Subscribed on B, listening on A: an update made on B reaches the client on A.
    let (status, text) = call(
        pb,
        &sid,
        3,
        "resources/subscribe",
        json!({"uri": "note://1"}),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let resp = send(pa, get(pa, &sid, None)).await;
    assert_eq!(resp.status(), 200);
    let mut stream_a = resp.into_body();
    eventually("A hears of the subscription", || {
        ca.stats().bus_received >= 1
    })
    .await;
    b.resource_updated("note://1");
    let mut on_a = String::new();
    read_until(&mut stream_a, &mut on_a, "resources/updated").await;
    let first = ids_of(&on_a, "resources/updated");
    assert_eq!(first.len(), 1, "{on_a}");

    // A's stream drops; an update made meanwhile on A waits in the log; the client resumes
    // on B, gets it, once, and B's stream goes on with the next update.
    drop(stream_a);
    tokio::time::sleep(Duration::from_millis(100)).await;
    a.resource_updated("note://1");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let resp = send(pb, get(pb, &sid, Some(&first[0]))).await;
    assert_eq!(resp.status(), 200);
    let mut stream_b = resp.into_body();
    let mut on_b = String::new();
    read_until(&mut stream_b, &mut on_b, "resources/updated").await;
    assert_eq!(ids_of(&on_b, "resources/updated").len(), 1, "{on_b}");
    assert!(
        !on_b.contains(&format!("id: {}\n", first[0])),
        "nothing twice: {on_b}"
    );
    a.resource_updated("note://1");
    read_count(&mut stream_b, &mut on_b, "resources/updated", 2).await;
    assert_eq!(ids_of(&on_b, "resources/updated").len(), 2, "{on_b}");
    // A tool added on A: the client listening on B hears the list changed.
    a.add_tool(
        Tool::new("late", schema_of(json!({"type": "object"}))),
        |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("late")) },
    )
    .unwrap();
    read_until(&mut stream_b, &mut on_b, "tools/list_changed").await;
    assert_eq!(cb.stats().streams_resumed, 1);

    // A call answered on A, its stream dropped after the first progress: resumed on B, the
    // rest of its progress and its result arrive from A through the log.
    let req = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{
        "name":"slow","arguments":{},"_meta":{"progressToken":"p7"}}});
    let resp = send(pa, post(pa, Some(&sid), req)).await;
    assert_eq!(resp.status(), 200);
    let mut call_a = resp.into_body();
    let mut seen = String::new();
    read_until(&mut call_a, &mut seen, "\"progress\":1").await;
    let last = ids_of(&seen, "\"progress\":1").pop().unwrap();
    drop(call_a);
    let resp = send(pb, get(pb, &sid, Some(&last))).await;
    assert_eq!(resp.status(), 200);
    let rest = body_text(resp).await;
    assert!(rest.contains("slow done"), "{rest}");
    for p in 2..=4 {
        assert!(rest.contains(&format!("\"progress\":{p}")), "{rest}");
    }
    assert!(!rest.contains("\"progress\":1,"), "nothing twice: {rest}");

    // A asks the client for its roots during a call; the answer, POSTed to B, reaches A.
    let req = json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{
        "name":"roots","arguments":{}}});
    let resp = send(pa, post(pa, Some(&sid), req)).await;
    assert_eq!(resp.status(), 200);
    let mut call_a = resp.into_body();
    let mut seen = String::new();
    read_until(&mut call_a, &mut seen, "roots/list").await;
    let asked = seen
        .split("\n\n")
        .find(|e| e.contains("roots/list"))
        .and_then(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .unwrap();
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"roots":[
        {"uri":"file:///a","name":"a"},{"uri":"file:///b","name":"b"}]}});
    let resp = send(pb, post(pb, Some(&sid), answer)).await;
    assert_eq!(resp.status(), 202);
    read_until(&mut call_a, &mut seen, "2 roots").await;
    assert_eq!(cb.stats().answers_passed_on, 1);
    assert_eq!(ca.stats().answers_delivered, 1);

    // Deleted on B: the session ends on A as well.
    let delete = Request::delete("/mcp")
        .header("host", format!("127.0.0.1:{pb}"))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", V)
        .body(Full::default())
        .unwrap();
    assert_eq!(send(pb, delete).await.status(), 204);
    let mut gone = false;
    for i in 0..100 {
        let (status, _) = call(pa, &sid, 100 + i, "tools/list", json!({})).await;
        if status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the session ended on A too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_memory_stores() {
    let stores = MemoryStores::new(StoreLimits::default(), TokioRuntime::current());
    walk(Cluster::new(stores.clone(), 1), Cluster::new(stores, 2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_redis() {
    let Some(redis) = cluster_support::redis_server() else {
        return;
    };
    let prefix = format!("serve-{:x}:", std::process::id());
    let connect =
        || mcp_service::cluster::RedisStores::connect(&redis.url, &prefix, StoreLimits::default());
    let (a, b) = (connect().await.unwrap(), connect().await.unwrap());
    walk(Cluster::new(a, 1), Cluster::new(b, 2)).await;
}
