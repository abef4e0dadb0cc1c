//! The store contract ([`mcp_service::cluster::contract`]) against the in-memory stores on
//! tokio, with real time, on the multi-thread and the current-thread runtime.

use mcp_tokio::TokioRuntime;
use mcp_tokio::service::cluster::{MemoryStores, contract};

async fn all(rt: TokioRuntime) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    let b = a.clone();
    contract::session_store(&a, &rt).await.unwrap();
    contract::event_log(&a, &rt).await.unwrap();
    contract::bus(&a, &b, &rt).await.unwrap();
    contract::key_store(&a, &b).await.unwrap();
    contract::limits(&a, &b, &rt).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_keep_the_contract_multi_thread() {
    all(TokioRuntime::current()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn memory_stores_keep_the_contract_current_thread() {
    all(TokioRuntime::current()).await;
}
