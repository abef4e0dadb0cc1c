//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on tokio with real time, on the multi-thread and
//! the current-thread runtime; then what only Redis does (its server killed and restarted),
//! and the figures of both (`redis_figures`, ignored: run it in release with
//! `-- --ignored --nocapture`).

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_remove_session_drops_only_the_sessions_streams() {
    cluster::redis_remove_session(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_waits_reuse_a_bounded_pool_of_connections() {
    cluster::redis_wait_pool(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn redis_down_fails_operations_and_recovers() {
    cluster::redis_down(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_bus_listener_reconnects_and_counts_the_gap() {
    cluster::redis_bus_reconnects(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "figures, not a check: run in release with --ignored --nocapture"]
async fn redis_figures() {
    cluster::figures(TokioRuntime::current()).await;
}
