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
