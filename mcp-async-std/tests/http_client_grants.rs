//! The HTTP client's grants without a user on async-std and smol, against the local MCP
//! server with its authorization server and identity provider of
//! `mcp-tokio/tests/support/grants.rs` (on a tokio runtime of its own): the same cases as
//! `mcp-tokio`'s `http_client_grants`.

#[path = "../../mcp-tokio/tests/support/grants.rs"]
mod grants;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

#[test]
fn client_credentials_with_a_secret() {
    async_std::task::block_on(grants::client_credentials_with_a_secret(
        AsyncStdRuntime::new(),
    ));
    smol::block_on(grants::client_credentials_with_a_secret(SmolRuntime::new()));
}

#[test]
fn private_key_jwt_with_dpop_nonces() {
    async_std::task::block_on(grants::private_key_jwt_with_dpop_nonces(
        AsyncStdRuntime::new(),
    ));
    smol::block_on(grants::private_key_jwt_with_dpop_nonces(SmolRuntime::new()));
}

#[test]
fn enterprise_managed() {
    async_std::task::block_on(grants::enterprise_managed(AsyncStdRuntime::new()));
}

#[test]
fn workload_identity() {
    async_std::task::block_on(grants::workload_identity(AsyncStdRuntime::new()));
}

#[test]
fn renews_before_expiry() {
    async_std::task::block_on(grants::renews_before_expiry(AsyncStdRuntime::new()));
    smol::block_on(grants::renews_before_expiry(SmolRuntime::new()));
}

#[test]
fn next_authorization_server() {
    async_std::task::block_on(grants::next_authorization_server(AsyncStdRuntime::new()));
}

#[test]
fn file_store_across_runs() {
    async_std::task::block_on(grants::file_store_across_runs(AsyncStdRuntime::new()));
}
