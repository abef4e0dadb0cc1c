//! A tiny MCP server on stdio, on a current-thread tokio runtime, for this crate's integration
//! tests (see `mcp_service::driver::test_server` for its flags).

use mcp_tokio::TokioRuntime;

fn main() {
    mcp_tokio::service::driver::test_server::run(&[], |_, server| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        rt.block_on(async { mcp_tokio::serve_stdio(TokioRuntime::current(), server).await })
    });
}
