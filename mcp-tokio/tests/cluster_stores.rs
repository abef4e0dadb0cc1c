//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on tokio with real time, on the multi-thread and
//! the current-thread runtime.

#[path = "../../mcp-service/tests/support/cluster.rs"]
mod cluster;

use mcp_tokio::TokioRuntime;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_keep_the_contract_multi_thread() {
    cluster::memory(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn memory_stores_keep_the_contract_current_thread() {
    cluster::memory(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_keep_the_contract_multi_thread() {
    cluster::redis(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn redis_stores_keep_the_contract_current_thread() {
    cluster::redis(TokioRuntime::current()).await;
}
