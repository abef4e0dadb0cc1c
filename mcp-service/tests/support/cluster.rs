//! The store contract run by each driver crate on its runtimes: the in-memory stores, and
//! the Redis stores on a real `redis-server` (the one `MCP_TEST_REDIS_URL` names, or a child
//! process on a free loopback port, killed when the guard drops). Without either server the
//! Redis half is skipped with a notice, unless `MCP_REQUIRE_REDIS=1` (as in CI), where it
//! fails.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_service::Runtime;
use mcp_service::cluster::{
    Bus, EventLog, KeyStore, MemoryStores, RedisStores, SessionStore, contract,
};

/// Every contract suite against `a`, with `b` as the other instance (bus and keys).
pub async fn contract_suite<S, R>(a: &S, b: &S, rt: &R)
where
    S: SessionStore + EventLog + Bus + KeyStore,
    R: Runtime,
{
    contract::session_store(a, rt).await.unwrap();
    contract::event_log(a, rt).await.unwrap();
    contract::bus(a, b, rt).await.unwrap();
    contract::key_store(a, b).await.unwrap();
    contract::limits(a, b, rt).await.unwrap();
}

/// The contract against the in-memory stores: two clones are two instances.
pub async fn memory<R: Runtime>(rt: R) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    contract_suite(&a, &a.clone(), &rt).await;
}

/// The contract against the Redis stores: two connections are two instances, and two
/// members of one connection are too.
pub async fn redis<R: Runtime>(rt: R) {
    let Some(server) = redis_server() else {
        return;
    };
    let connect = || RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits());
    let a = connect().await.unwrap();
    let b = connect().await.unwrap();
    contract_suite(&a, &b, &rt).await;
    contract::bus(&a, &a.member().unwrap(), &rt).await.unwrap();
}

/// A Redis server for one test.
pub struct RedisServer {
    /// Its URL.
    pub url: String,
    child: Option<Child>,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts (or names) a Redis server; `None`: skip the test.
pub fn redis_server() -> Option<RedisServer> {
    if let Ok(url) = std::env::var("MCP_TEST_REDIS_URL") {
        return Some(RedisServer { url, child: None });
    }
    let required = std::env::var("MCP_REQUIRE_REDIS").is_ok_and(|v| v == "1");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) if !required => {
            eprintln!("redis-server not started ({e}): the Redis half of this test is skipped");
            return None;
        }
        Err(e) => panic!("MCP_REQUIRE_REDIS=1 but redis-server could not start: {e}"),
    };
    let server = RedisServer {
        url: format!("redis://127.0.0.1:{port}/"),
        child: Some(child),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}
