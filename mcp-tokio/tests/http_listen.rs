//! `subscriptions/listen` (2026-07-28) over Streamable HTTP: raw listen POSTs (an SSE reply held
//! open, acknowledgement first, subscription ids, each stream only what it asked for,
//! `resource_updated` reaching a handshake-era HTTP client too, closing the reply as the
//! cancellation, the bound on streams), and our client of the stateless era subscribing over
//! HTTP.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::http::EndpointConfig;
use mcp_proto::session::Discovery;
use mcp_service::client::ServerNotification;
use mcp_service::schema::{
    CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents, TextResourceContents, Tool,
};
use mcp_service::server::{PromptContext, ToolContext, schema_of};
use mcp_tokio::{ClientOptions, HttpClientOptions, Server, TokioRuntime};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const URI: &str = "test://watched";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn server() -> Server {
    Server::builder("listen-http", "1")
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

fn add_tool(srv: &Server, name: &str) {
    srv.add_tool(
        Tool::new(name, schema_of(json!({"type": "object"}))),
        |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("dyn")) },
    )
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

async fn serve(server: Server, config: impl FnOnce(EndpointConfig) -> EndpointConfig) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    // One engine: the stream caps below are the endpoint's exactly (sharded, each engine
    // has its part of them, rounded up).
    let options = mcp_service::hyper_server::HttpServerOptions::default().shards(1);
    tokio::spawn(mcp_tokio::serve_http_with(
        TokioRuntime::current(),
        server,
        listener,
        config,
        options,
    ));
    port
}

/// A raw listen POST, read as its SSE reply arrives.
struct Listen {
    stream: TcpStream,
    status: u16,
    buf: String,
}

impl Listen {
    async fn open(port: u16, id: Value, filter: Value) -> Listen {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"notifications": filter, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(req.as_bytes()).await.unwrap();
        let mut l = Listen {
            stream,
            status: 0,
            buf: String::new(),
        };
        while !l.buf.contains("\r\n\r\n") {
            l.read().await;
        }
        let (head, rest) = l.buf.split_once("\r\n\r\n").unwrap();
        l.status = head.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(
            l.status != 200 || head.to_ascii_lowercase().contains("text/event-stream"),
            "{head}"
        );
        l.buf = rest.to_owned();
        l
    }

    async fn read(&mut self) -> usize {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut chunk))
            .await
            .expect("data in time")
            .unwrap();
        self.buf.push_str(std::str::from_utf8(&chunk[..n]).unwrap());
        n
    }

    /// The next message of the stream.
    async fn next(&mut self) -> Value {
        loop {
            if let Some(at) = self.buf.find("data: ")
                && let Some(end) = self.buf[at..].find('\n')
            {
                let data = self.buf[at + 6..at + end].trim().to_owned();
                self.buf.drain(..at + end);
                return serde_json::from_str(&data).unwrap();
            }
            assert!(self.read().await > 0, "the stream ended");
        }
    }
}

/// Waits until `f` holds (the server sees a closed reply a little after the client closed it).
async fn eventually(mut f: impl FnMut() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the condition never held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_listen_streams_over_http() {
    let srv = server();
    let port = serve(srv.clone(), |c| c).await;
    let mut tools = Listen::open(port, json!(1), json!({"toolsListChanged": true})).await;
    assert_eq!(tools.status, 200);
    let ack = tools.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"],
        json!({"notifications": {"toolsListChanged": true}, "_meta": {SUB: 1}})
    );
    let mut prompts = Listen::open(
        port,
        json!("p"),
        json!({"promptsListChanged": true, "resourceSubscriptions": [URI]}),
    )
    .await;
    assert_eq!(prompts.next().await["params"]["_meta"][SUB], "p");

    // A handshake-era HTTP client subscribes to the same resource (its GET stream carries it).
    let old = mcp_tokio::connect_http(
        TokioRuntime::current(),
        &format!("http://127.0.0.1:{port}/mcp"),
        ClientOptions::default().discovery(Discovery::Initialize),
        HttpClientOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(old.protocol_version(), ProtocolVersion::V2025_11_25);
    let mut old_updates = old.subscribe(URI).await.unwrap();

    add_tool(&srv, "t1");
    add_prompt(&srv, "p1");
    let n = tools.next().await;
    assert_eq!(
        (&n["method"], &n["params"]["_meta"][SUB]),
        (&json!("notifications/tools/list_changed"), &json!(1))
    );
    let n = prompts.next().await;
    assert_eq!(
        (&n["method"], &n["params"]["_meta"][SUB]),
        (&json!("notifications/prompts/list_changed"), &json!("p")),
        "the prompts-only stream hears nothing of tools"
    );
    assert_eq!(srv.resource_updated(URI), 2, "both eras");
    let n = prompts.next().await;
    assert_eq!(
        (
            &n["method"],
            &n["params"]["uri"],
            &n["params"]["_meta"][SUB]
        ),
        (
            &json!("notifications/resources/updated"),
            &json!(URI),
            &json!("p")
        )
    );
    let u = tokio::time::timeout(Duration::from_secs(10), old_updates.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u.uri, URI);

    // Closing a reply is its cancellation: the server forgets the stream.
    let before = srv.connection_count();
    drop(prompts);
    eventually(|| srv.connection_count() < before).await;
    assert_eq!(
        srv.resource_updated(URI),
        1,
        "the handshake-era client only"
    );
    add_tool(&srv, "t2");
    assert_eq!(
        tools.next().await["method"],
        "notifications/tools/list_changed"
    );
    old.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_are_bounded_over_http() {
    let srv = server();
    let port = serve(srv.clone(), |c| c.max_listen_streams(1)).await;
    let mut first = Listen::open(port, json!(1), json!({"toolsListChanged": true})).await;
    assert_eq!(
        first.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let mut second = Listen::open(port, json!(2), json!({"toolsListChanged": true})).await;
    assert_eq!(second.status, 503);
    while !second.buf.contains("too many subscriptions/listen streams") {
        assert!(second.read().await > 0, "{}", second.buf);
    }
    drop(first);
    // Once the first is gone there is room again.
    let mut third = None;
    for _ in 0..200 {
        let l = Listen::open(port, json!(3), json!({"toolsListChanged": true})).await;
        if l.status == 200 {
            third = Some(l);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut third = third.expect("room again");
    assert_eq!(third.next().await["params"]["_meta"][SUB], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_stateless_client_subscribes_over_http() {
    let srv = server();
    let port = serve(srv.clone(), |c| c).await;
    let client = mcp_tokio::connect_http(
        TokioRuntime::current(),
        &format!("http://127.0.0.1:{port}/mcp"),
        ClientOptions::default().discovery(Discovery::Discover),
        HttpClientOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let mut notes = client.notifications();
    let mut updates = client.subscribe(URI).await.unwrap();
    let next = async |notes: &mut mcp_service::Notifications<ServerNotification>| {
        tokio::time::timeout(Duration::from_secs(10), notes.recv())
            .await
            .expect("in time")
            .expect("open")
    };
    add_tool(&srv, "t1");
    assert!(matches!(
        next(&mut notes).await,
        ServerNotification::ToolsListChanged
    ));
    assert_eq!(srv.resource_updated(URI), 1);
    let u = tokio::time::timeout(Duration::from_secs(10), updates.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u.uri, URI);
    assert!(matches!(
        next(&mut notes).await,
        ServerNotification::ResourceUpdated(_)
    ));
    client.unsubscribe(URI).await.unwrap();
    eventually(|| srv.resource_updated(URI) == 0).await;
    add_prompt(&srv, "p1");
    assert!(matches!(
        next(&mut notes).await,
        ServerNotification::PromptsListChanged
    ));
    client.shutdown().await;
    eventually(|| srv.connection_count() == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_sets_the_http_listen_limits_and_keep_alive() {
    let srv = Server::builder("listen-http-limits", "1")
        .versions(&ProtocolVersion::ALL)
        .tool(
            Tool::new("noop", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok(CallToolResult::text("ok")) },
        )
        .max_listen_streams(1)
        .listen_keep_alive(Some(mcp_proto::Duration::from_millis(50)))
        .build();
    // The endpoint's own config says 1000 streams and 20 s: the builder wins.
    let port = serve(srv.clone(), |c| c).await;
    let mut first = Listen::open(port, json!(1), json!({"toolsListChanged": true})).await;
    assert_eq!(
        first.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let mut second = Listen::open(port, json!(2), json!({"toolsListChanged": true})).await;
    assert_eq!(second.status, 503);
    while !second.buf.contains("too many subscriptions/listen streams") {
        assert!(second.read().await > 0, "{}", second.buf);
    }
    // Silent: keep-alive comments arrive, and the stream still carries what it asked for.
    while !first.buf.contains(": keep-alive\n\n") {
        assert!(first.read().await > 0, "the stream ended");
    }
    add_tool(&srv, "t1");
    assert_eq!(
        first.next().await["method"],
        "notifications/tools/list_changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_engine_down_answers_open_listen_streams_over_http() {
    use mcp_service::hyper_server::{HyperService, serve_connection};
    let srv = server();
    let engine = srv.http_service(
        TokioRuntime::current(),
        EndpointConfig::new(srv.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    let handle = engine.handle();
    let stopped = tokio::spawn(engine);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let service = HyperService::new(handle.clone());
    tokio::spawn(async move {
        while let Ok((stream, addr)) = listener.accept().await {
            let io = hyper_util::rt::TokioIo::new(stream);
            tokio::spawn(serve_connection(
                TokioRuntime::current(),
                service.clone(),
                io,
                addr,
            ));
        }
    });
    let mut a = Listen::open(port, json!(1), json!({"toolsListChanged": true})).await;
    let mut b = Listen::open(port, json!("b"), json!({"promptsListChanged": true})).await;
    for l in [&mut a, &mut b] {
        assert_eq!(
            l.next().await["method"],
            "notifications/subscriptions/acknowledged"
        );
    }
    handle.shut_down();
    for (l, id) in [(&mut a, json!(1)), (&mut b, json!("b"))] {
        let end = l.next().await;
        assert_eq!(end["id"], id, "{end}");
        assert_eq!(end["result"]["resultType"], "complete");
        assert_eq!(end["result"]["_meta"][SUB], id);
        // The reply ends (its last chunk), rather than being cut.
        while !l.buf.contains("0\r\n\r\n") {
            assert!(l.read().await > 0, "cut: {}", l.buf);
        }
    }
    // The engine completes although handles remain, and nothing new is taken.
    tokio::time::timeout(Duration::from_secs(10), stopped)
        .await
        .expect("the engine stops")
        .unwrap();
    let late = Listen::open(port, json!(3), json!({"toolsListChanged": true})).await;
    assert_eq!(late.status, 503);
    assert_eq!(srv.connection_count(), 0);
}

/// One raw 2026-07-28 POST on a connection of its own; its reply's JSON-RPC message.
async fn post_raw(port: u16, method: &str, name: &str, body: Value) -> Value {
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut all))
        .await
        .expect("the reply in time")
        .unwrap();
    let text = String::from_utf8(all).unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    let (start, end) = (body.find('{').unwrap(), body.rfind('}').unwrap());
    serde_json::from_str(&body[start..=end]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_status_notifications_travel_on_http_listen_streams() {
    use mcp_service::schema::{TaskSupport, ToolExecution};
    use mcp_service::tasks::TaskOptions;
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    let mut tool = Tool::new("gate", schema_of(json!({"type": "object"})));
    tool.execution = Some(ToolExecution {
        task_support: Some(TaskSupport::Optional),
    });
    let srv = Server::builder("listen-http-tasks", "1")
        .versions(&ProtocolVersion::ALL)
        .tasks(TaskOptions::default())
        .tool(tool, move |_: Value, cx: ToolContext| {
            let opened = opened.clone();
            async move {
                cx.as_task().await;
                opened.notified().await;
                Ok(CallToolResult::text("opened"))
            }
        })
        .build();
    let port = serve(srv.clone(), |c| c).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let created = post_raw(
        port,
        "tools/call",
        "gate",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "gate", "arguments": {}, "_meta": meta}}),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut l = Listen::open(port, json!("w"), json!({"taskIds": [task.clone()]})).await;
    assert_eq!(l.status, 200);
    let ack = l.next().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [task.clone()]})
    );
    gate.notify_one();
    let n = l.next().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], task.as_str());
    assert_eq!(n["params"]["status"], "completed");
    assert_eq!(n["params"]["result"]["content"][0]["text"], "opened");
    assert_eq!(n["params"]["_meta"][SUB], "w");
}
