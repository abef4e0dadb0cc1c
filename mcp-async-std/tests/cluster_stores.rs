//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores and
//! the Redis stores (a real `redis-server`), on async-std and on smol, with real time.

#[path = "../../mcp-service/tests/support/redis_server.rs"]
mod redis_server;

use mcp_async_std::service::Runtime;
use mcp_async_std::service::cluster::{MemoryStores, RedisStores, contract};
use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

async fn memory<R: Runtime>(rt: R) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    let b = a.clone();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

async fn redis<R: Runtime>(rt: R) {
    let Some(server) = redis_server::redis_server() else {
        return;
    };
    let a = RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits())
        .await
        .unwrap();
    let b = RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits())
        .await
        .unwrap();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

#[test]
fn memory_stores_keep_the_contract_on_async_std() {
    async_std::task::block_on(memory(AsyncStdRuntime::new()));
}

#[test]
fn memory_stores_keep_the_contract_on_smol() {
    smol::block_on(memory(SmolRuntime::new()));
}

#[test]
fn redis_stores_keep_the_contract_on_async_std() {
    async_std::task::block_on(redis(AsyncStdRuntime::new()));
}

#[test]
fn redis_stores_keep_the_contract_on_smol() {
    smol::block_on(redis(SmolRuntime::new()));
}
