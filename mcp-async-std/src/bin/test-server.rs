//! A tiny MCP server on stdio, for this crate's integration tests (see
//! `mcp_service::driver::test_server` for its flags); `--smol` serves under smol (default:
//! async-std).

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

fn main() {
    mcp_async_std::service::driver::test_server::run(&["--smol"], |flavour, server| {
        if flavour.is_some() {
            smol::block_on(mcp_async_std::serve_stdio(SmolRuntime::new(), server))
        } else {
            async_std::task::block_on(mcp_async_std::serve_stdio(AsyncStdRuntime::new(), server))
        }
    });
}
