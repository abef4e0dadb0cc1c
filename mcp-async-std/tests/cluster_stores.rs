//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on async-std and on smol, with real time.

#[path = "../../mcp-service/tests/support/cluster.rs"]
mod cluster;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

#[test]
fn memory_stores_keep_the_contract_on_async_std() {
    async_std::task::block_on(cluster::memory(AsyncStdRuntime::new()));
}

#[test]
fn memory_stores_keep_the_contract_on_smol() {
    smol::block_on(cluster::memory(SmolRuntime::new()));
}

#[test]
fn redis_stores_keep_the_contract_on_async_std() {
    async_std::task::block_on(cluster::redis(AsyncStdRuntime::new()));
}

#[test]
fn redis_stores_keep_the_contract_on_smol() {
    smol::block_on(cluster::redis(SmolRuntime::new()));
}
