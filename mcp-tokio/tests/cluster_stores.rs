//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on tokio with real time, on the multi-thread and
//! the current-thread runtime.

#[path = "../../mcp-service/tests/support/redis_server.rs"]
mod redis_server;

use mcp_tokio::TokioRuntime;
use mcp_tokio::service::cluster::{MemoryStores, RedisStores, contract};

async fn memory(rt: TokioRuntime) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    let b = a.clone();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

async fn redis(rt: TokioRuntime) {
    let Some(server) = redis_server::redis_server() else {
        return;
    };
    let a = RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits())
        .await
        .unwrap();
    // Another instance: a connection of its own.
    let b = RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits())
        .await
        .unwrap();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::bus(&a, &a.member().unwrap(), &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_keep_the_contract_multi_thread() {
    memory(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn memory_stores_keep_the_contract_current_thread() {
    memory(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_keep_the_contract_multi_thread() {
    redis(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn redis_stores_keep_the_contract_current_thread() {
    redis(TokioRuntime::current()).await;
}
