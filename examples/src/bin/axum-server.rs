//! An axum application that mounts an MCP endpoint at `/mcp` behind its own bearer-token
//! middleware, next to an ordinary route. The middleware puts the caller's identity into the
//! request's extensions; the tools read it with `cx.extension::<User>()`. Copy it as the start
//! of an MCP endpoint in a web application of your own.
//!
//! ```toml
//! [dependencies]
//! mcp-tokio = { version = "0.1", features = ["http-server"] }
//! axum = "0.8"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//! ```
//!
//! `cargo run -p mcp-examples --bin axum-server -- 8080` (port 0: any free port), then
//! `mcp call whoami --url http://127.0.0.1:8080/mcp --header "Authorization: Bearer alice-secret"`.
//! The tokens are `alice-secret` and `bob-secret` (a real application checks its own).

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use mcp_tokio::http::McpService;
use mcp_tokio::proto::http::EndpointConfig;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use mcp_tokio::{Error, ErrorKind, Server, TokioRuntime};
use serde::Deserialize;
use serde_json::json;

/// The caller, as the auth middleware found it.
#[derive(Clone, Debug)]
struct User {
    name: &'static str,
}

/// Checks the bearer token; a request without a valid one never reaches MCP.
async fn auth(mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    let name = match token.and_then(|t| t.strip_prefix("Bearer ")) {
        Some("alice-secret") => "alice",
        Some("bob-secret") => "bob",
        _ => {
            let challenge = [("www-authenticate", "Bearer")];
            return (
                StatusCode::UNAUTHORIZED,
                challenge,
                "a valid bearer token is required",
            )
                .into_response();
        }
    };
    req.extensions_mut().insert(User { name });
    next.run(req).await
}

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("8080")
        .parse()?;
    let server = Server::builder("axum-server", "1.0")
        .tool(
            Tool::new("whoami", schema_of(json!({"type": "object"}))).with_description("Who the caller is"),
            |_: serde_json::Value, cx: ToolContext| async move {
                let user = cx.extension::<User>().ok_or_else(|| Error::new(ErrorKind::Unauthorized, "no caller"))?;
                Ok(format!("you are {}", user.name))
            },
        )
        .tool(
            Tool::new("echo", schema_of(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]
            })))
            .with_description("Says the text back"),
            |args: Echo, _cx: ToolContext| async move { Ok(args.text) },
        )
        .try_build()?;

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    let config = EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
    let mcp = McpService::new(TokioRuntime::current(), &server, config);
    let app = axum::Router::new()
        .route_service("/mcp", mcp)
        .route_layer(middleware::from_fn(auth))
        .route("/health", get(|| async { "ok" }));
    println!("serving MCP at http://{addr}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}
