//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores on
//! async-std and on smol, with real time.

use mcp_async_std::service::Runtime;
use mcp_async_std::service::cluster::{MemoryStores, contract};
use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

async fn all<R: Runtime>(rt: R) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    let b = a.clone();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

#[test]
fn memory_stores_keep_the_contract_on_async_std() {
    async_std::task::block_on(all(AsyncStdRuntime::new()));
}

#[test]
fn memory_stores_keep_the_contract_on_smol() {
    smol::block_on(all(SmolRuntime::new()));
}
