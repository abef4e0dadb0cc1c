//! Our HTTP client and server in the stateless era (2026-07-28): `Discovery::Auto` and
//! `Discover` over Streamable HTTP against a server of both eras (one POST per request with the
//! era's headers, no session), and `Auto` falling back to the handshake against a
//! handshake-only server.

use mcp_proto::ProtocolVersion;
use mcp_proto::http::EndpointConfig;
use mcp_proto::session::Discovery;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_tokio::{ClientOptions, HttpClientOptions, Server, TokioRuntime};
use serde_json::{Value, json};
use tokio::net::TcpListener;

fn server(versions: &[ProtocolVersion]) -> Server {
    Server::builder("eras", "1")
        .versions(versions)
        .tool(
            Tool::new("where", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                Ok(CallToolResult::text(
                    cx.protocol_version().map(|v| v.as_str()).unwrap_or("?"),
                ))
            },
        )
        .build()
}

async fn serve(server: Server) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config =
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    tokio::spawn(mcp_tokio::serve_http(
        TokioRuntime::current(),
        server,
        listener,
        config,
    ));
    format!("http://127.0.0.1:{port}/mcp")
}

async fn walk(
    url: &str,
    discovery: Discovery,
) -> Result<(ProtocolVersion, String), mcp_tokio::Error> {
    let client = mcp_tokio::connect_http(
        TokioRuntime::current(),
        url,
        ClientOptions::default().discovery(discovery),
        HttpClientOptions::new(),
    )
    .await?;
    let tools = client.list_tools().await?;
    assert_eq!(tools.len(), 1);
    let r = client.call_tool("where", json!({})).await?;
    let text = serde_json::to_value(&r).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let version = client.protocol_version();
    client.shutdown().await;
    Ok((version, text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_eras_over_streamable_http() {
    let both = serve(server(&ProtocolVersion::ALL)).await;
    for discovery in [Discovery::Auto, Discovery::Discover] {
        let (version, text) = walk(&both, discovery).await.unwrap();
        assert_eq!(version, ProtocolVersion::V2026_07_28, "{discovery:?}");
        assert_eq!(text, "2026-07-28");
    }
    let (version, text) = walk(&both, Discovery::Initialize).await.unwrap();
    assert_eq!(
        (version, text.as_str()),
        (ProtocolVersion::V2025_11_25, "2025-11-25")
    );

    let old = serve(server(&ProtocolVersion::HANDSHAKE)).await;
    let (version, _) = walk(&old, Discovery::Auto).await.unwrap();
    assert_eq!(
        version,
        ProtocolVersion::V2025_11_25,
        "Auto falls back to the handshake"
    );
    let e = walk(&old, Discovery::Discover).await.unwrap_err();
    assert!(!e.message().is_empty());
}

/// One raw HTTP/1.1 POST; the status and the body.
async fn raw_post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out[9..12].parse().unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn annotated_arguments_travel_in_mcp_param_headers() {
    let annotated = Tool::new(
        "zone",
        schema_of(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"}
        }})),
    );
    let server = Server::builder("headers", "1")
        .versions(&ProtocolVersion::ALL)
        .tool(annotated, |args: Value, _cx: ToolContext| async move {
            Ok(CallToolResult::text(format!(
                "{}/{}",
                args["region"], args["n"]
            )))
        })
        .build();
    // A tool whose annotation is invalid is refused at registration.
    let bad = Tool::new(
        "bad",
        schema_of(json!({"type": "object", "properties": {
            "o": {"type": "object", "x-mcp-header": "O"}
        }})),
    );
    assert!(
        Server::builder("bad", "1")
            .tool(bad, |_: Value, _cx: ToolContext| async { Ok("") })
            .try_build()
            .is_err()
    );
    let url = serve(server).await;
    // Our client mirrors the arguments (the server checks them: a missing or different header
    // would be a -32020).
    let client = mcp_tokio::connect_http(
        TokioRuntime::current(),
        &url,
        ClientOptions::default().discovery(Discovery::Discover),
        HttpClientOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    for (args, want) in [
        (json!({"region": "eu-west", "n": 7}), "\"eu-west\"/7"),
        (json!({"region": "Zürich "}), "\"Zürich \"/null"),
        (json!({"n": 1}), "null/1"),
    ] {
        let r = client.call_tool("zone", args).await.unwrap();
        let text = serde_json::to_value(&r).unwrap()["content"][0]["text"].clone();
        assert_eq!(text, want);
    }
    client.shutdown().await;
    // A raw request whose header disagrees with the body, or lacks it: 400 with -32020.
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "zone", "arguments": {"region": "a"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}
    }})
    .to_string();
    let base = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "zone"),
    ];
    for extra in [
        vec![("mcp-param-region", "b")],
        vec![],
        vec![("mcp-param-region", "=?base64?YQ?=")],
    ] {
        let mut h = base.to_vec();
        h.extend(extra.iter().copied());
        let (status, reply) = raw_post(&url, &h, &body).await;
        assert_eq!(status, 400, "{extra:?}: {reply}");
        let v: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(5), json!(-32020))
        );
    }
    // Right, plain or base64: served.
    for value in ["a", "=?base64?YQ==?="] {
        let mut h = base.to_vec();
        h.push(("mcp-param-region", value));
        let (status, reply) = raw_post(&url, &h, &body).await;
        assert_eq!(status, 200, "{value}: {reply}");
    }
}

/// A tool that asks its client for a sampled answer, a form and its roots: `"<text>, <name>,
/// <roots>"`.
fn asking_server() -> Server {
    use mcp_service::schema::{CreateMessageRequestParams, ElicitRequestParams, SamplingMessage};
    Server::builder("asks", "1")
        .tool(
            Tool::new("ask", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let sampled = cx
                    .create_message(CreateMessageRequestParams::new(
                        vec![SamplingMessage::user("2+2?")],
                        10,
                    ))
                    .await?;
                let text = sampled.content.blocks()[0]
                    .as_text()
                    .unwrap_or("")
                    .to_owned();
                let form: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form", "message": "name?",
                    "requestedSchema": {"type": "object",
                        "properties": {"name": {"type": "string"}}}
                }))
                .unwrap();
                let content = cx.elicit(form).await?.content.unwrap_or_default();
                let name = serde_json::to_string(&content["name"]).unwrap_or_default();
                let roots = cx.list_roots().await?.roots.len();
                Ok(CallToolResult::text(format!("{text}, {name}, {roots}")))
            },
        )
        .build()
}

/// A handshake-era client of a stateless endpoint is asked on its call's SSE stream and
/// answers on POSTs of its own, which reach the handler that asked; a 2026-07-28 client gets
/// the same through `input_required` rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_asks_its_client_in_both_eras() {
    use mcp_service::schema::{CreateMessageResult, Root};
    let server = asking_server();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into())
        .stateless(true);
    tokio::spawn(mcp_tokio::serve_http(
        TokioRuntime::current(),
        server,
        listener,
        config,
    ));
    let url = format!("http://127.0.0.1:{port}/mcp");
    for discovery in [Discovery::Initialize, Discovery::Discover] {
        let options = ClientOptions::default()
            .discovery(discovery)
            .sampling(|_, _| async { Ok(CreateMessageResult::text("m", "4")) })
            .elicitation(|_, _| async {
                Ok(
                    serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                        .unwrap(),
                )
            })
            .roots(vec![Root::new("file:///a"), Root::new("file:///b")]);
        let client = mcp_tokio::connect_http(
            TokioRuntime::current(),
            &url,
            options,
            HttpClientOptions::new(),
        )
        .await
        .unwrap();
        // Concurrent calls: each answer reaches the handler that asked.
        let (a, b) = tokio::join!(
            client.call_tool("ask", json!({})),
            client.call_tool("ask", json!({}))
        );
        for r in [a, b] {
            let r = serde_json::to_value(r.unwrap()).unwrap();
            assert_eq!(r["content"][0]["text"], "4, \"Ada\", 2", "{discovery:?}");
        }
        client.shutdown().await;
    }
}
