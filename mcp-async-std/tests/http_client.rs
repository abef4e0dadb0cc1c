//! The typed client over Streamable HTTP on async-std and smol, against the tokio server
//! (`mcp_tokio::serve_http`) running on a background thread: tools, progress, a sampling
//! request answered during a call, concurrent calls, DELETE on close, and a refused connection.

use std::sync::{Arc, Mutex};

use mcp_async_std::{ClientOptions, ErrorKind, HttpClientOptions, RequestContext, Server};
use mcp_proto::http::{EndpointConfig, ResponseMode};
use mcp_service::schema::{CallToolResult, CreateMessageRequestParams, CreateMessageResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("http-client-test", "1.0")
        .tool(
            Tool::new("add", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(CallToolResult::text(sum.to_string()))
            },
        )
        .tool(
            Tool::new("count", schema_of(json!({"type": "object"}))),
            |args: Value, cx: ToolContext| async move {
                let n = args["n"].as_u64().unwrap_or(3);
                for i in 1..=n {
                    cx.progress(i as f64, Some(n as f64), None).await?;
                }
                Ok(CallToolResult::text(format!("counted to {n}")))
            },
        )
        .tool(
            Tool::new("ask", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "capital of France?"}}],
                    "maxTokens": 10
                }))
                .unwrap();
                let answer = cx.create_message(params).await?;
                let text = serde_json::to_value(&answer.content).unwrap()["text"].clone();
                Ok(CallToolResult::text(format!("model said: {}", text.as_str().unwrap_or(""))))
            },
        )
        .build()
}

/// The tokio server on its own runtime; returns it (keep it alive), the server and the URL.
fn tokio_server(mode: ResponseMode) -> (tokio::runtime::Runtime, Server, String) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = server();
    let s = server.clone();
    let url = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = EndpointConfig::new(s.config().clone())
            .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
            .response_mode(mode);
        tokio::spawn(mcp_tokio::serve_http(
            mcp_tokio::TokioRuntime::current(),
            s,
            listener,
            config,
        ));
        format!("http://127.0.0.1:{port}/mcp")
    });
    (rt, server, url)
}

/// The handshake era: the walk checks its session (one connection, ended by DELETE).
fn options() -> ClientOptions {
    ClientOptions::new("http-client-test", "1.0")
        .discovery(mcp_async_std::proto::session::Discovery::Initialize)
        .sampling(
            |_p: CreateMessageRequestParams, _cx: RequestContext| async move {
                Ok::<CreateMessageResult, mcp_async_std::Error>(
                    serde_json::from_value(json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "Paris"},
                        "model": "test-model"
                    }))
                    .unwrap(),
                )
            },
        )
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn walk<R: AsyncIoDriver>(rt: R, mode: ResponseMode) {
    let (_tokio, server, url) = tokio_server(mode);
    let client = mcp_async_std::connect_http(rt.clone(), &url, options(), HttpClientOptions::new())
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = client
        .call_tool("count", json!({"n": 5}))
        .progress(move |p| s.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "counted to 5");
    let progress = seen.lock().unwrap().clone();
    if mode == ResponseMode::Sse {
        assert_eq!(progress, [1.0, 2.0, 3.0, 4.0, 5.0]);
    } else {
        // JSON replies: progress comes on the GET stream and may be overtaken by the result
        // (another connection), but never twice nor out of order.
        assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
        assert!(
            progress.iter().all(|p| (1.0..=5.0).contains(p)),
            "{progress:?}"
        );
    }
    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(text(&r), "model said: Paris");
    let calls = (0..16).map(|i| {
        let client = client.clone();
        async move {
            let r = client
                .call_tool("add", json!({"a": i, "b": 1}))
                .await
                .unwrap();
            assert_eq!(text(&r), (i + 1).to_string());
        }
    });
    futures_util::future::join_all(calls).await;
    assert_eq!(server.connection_count(), 1);
    client.close();
    // DELETE ends the server's session.
    let mut left = 500;
    while server.connection_count() != 0 {
        left -= 1;
        assert!(left > 0, "the session did not end after close");
        rt.sleep_until(rt.now() + mcp_proto::Duration::from_millis(10))
            .await;
    }

    // A refused connection fails the connect with a clear error.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e = mcp_async_std::connect_http(
        rt,
        &format!("http://127.0.0.1:{port}/mcp"),
        options(),
        HttpClientOptions::new().connect_timeout(Some(mcp_proto::Duration::from_secs(5))),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    assert!(e.message().contains(&port.to_string()), "{e}");
}

#[test]
fn async_std_sse_replies() {
    async_std::task::block_on(walk(
        mcp_async_std::AsyncStdRuntime::new(),
        ResponseMode::Sse,
    ));
}

#[test]
fn smol_json_replies() {
    smol::block_on(walk(mcp_async_std::SmolRuntime::new(), ResponseMode::Json));
}

/// The drivers of `mcp-async-std` (their listeners are `std`'s).
trait AsyncIoDriver: mcp_async_std::Driver<TcpListener = std::net::TcpListener> {}
impl<R: mcp_async_std::Driver<TcpListener = std::net::TcpListener>> AsyncIoDriver for R {}

/// A URL a server chose (an OAuth fetch) whose host name resolves into the client's own
/// network is refused before any connection is made, unless the MCP server is on that network
/// too: on async-std and smol.
#[cfg(feature = "oauth")]
#[test]
fn server_chosen_names_that_resolve_into_the_clients_network_are_refused() {
    use mcp_service::driver::Driver;
    use mcp_service::http_client::{AddressCheck, Connector, Destination};
    async fn walk<D: Driver>(rt: D) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connector = mcp_service::driver::TcpConnector(rt);
        let mut to = Destination::new("localhost", port);
        to.check = Some(AddressCheck::same_network_as("https://93.184.216.34/mcp").unwrap());
        match connector.connect(&to).await {
            Ok(_) => panic!("a public server sent the client to localhost"),
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
                assert!(e.to_string().contains("loopback"), "{e}");
            }
        }
        assert!(listener.accept().is_err());
        let local = format!("http://127.0.0.1:{port}/mcp");
        to.check = Some(AddressCheck::same_network_as(&local).unwrap());
        assert!(connector.connect(&to).await.is_ok());
    }
    async_std::task::block_on(walk(mcp_async_std::AsyncStdRuntime::new()));
    smol::block_on(walk(mcp_async_std::SmolRuntime::new()));
}
