//! A Streamable HTTP server on smol (the same code runs on async-std with `AsyncStdRuntime`
//! and `async_std::task::block_on`): two typed tools at `http://127.0.0.1:PORT/mcp`. Copy it
//! as the start of a server that does not run on tokio.
//!
//! ```toml
//! [dependencies]
//! mcp-async-std = { version = "0.1", default-features = false, features = ["smol", "http-server", "schemars"] }
//! smol = "2"
//! serde = { version = "1", features = ["derive"] }
//! ```
//!
//! `cargo run -p mcp-examples --bin smol-server -- 8000` (port 0: any free port; the address
//! is printed), then `mcp tools --url http://127.0.0.1:8000/mcp`.

use mcp_async_std::proto::http::EndpointConfig;
use mcp_async_std::service::schemars::JsonSchema;
use mcp_async_std::service::server::{Json, ToolContext};
use mcp_async_std::{Server, SmolRuntime};
use serde::{Deserialize, Serialize};

/// Says the text back.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_async_std::service::schemars")]
struct Echo {
    /// What to say back.
    text: String,
}

/// Adds two numbers.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_async_std::service::schemars")]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "mcp_async_std::service::schemars")]
struct Sum {
    sum: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("8000")
        .parse()?;
    let server = Server::builder("smol-server", "1.0")
        .typed_tool("echo", "", |args: Echo, _cx: ToolContext| async move {
            Ok(args.text)
        })
        .typed_tool("add", "", |args: Add, _cx: ToolContext| async move {
            Ok(Json(Sum {
                sum: args.a + args.b,
            }))
        })
        .try_build()?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    let addr = listener.local_addr()?;
    // Host and Origin are checked against the address served (DNS rebinding protection).
    let config = EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
    println!("serving MCP at http://{addr}/mcp");
    smol::block_on(mcp_async_std::serve_http(
        SmolRuntime::new(),
        server,
        listener,
        config,
    ))?;
    Ok(())
}
