//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on async-std and on smol, with real time; then
//! what only Redis does (its server killed and restarted).

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

#[test]
fn redis_remove_session_drops_only_the_sessions_streams_on_smol() {
    smol::block_on(cluster::redis_remove_session(SmolRuntime::new()));
}

#[test]
fn redis_waits_reuse_a_bounded_pool_of_connections_on_async_std() {
    async_std::task::block_on(cluster::redis_wait_pool(AsyncStdRuntime::new()));
}

#[test]
fn redis_down_fails_operations_and_recovers_on_smol() {
    smol::block_on(cluster::redis_down(SmolRuntime::new()));
}

#[test]
fn redis_bus_listener_reconnects_and_counts_the_gap_on_async_std() {
    async_std::task::block_on(cluster::redis_bus_reconnects(AsyncStdRuntime::new()));
}
