//! A real `redis-server` for a test: the one `MCP_TEST_REDIS_URL` names, or a child process
//! on a free loopback port, killed when the guard drops. Without either, the test is
//! skipped with a notice, unless `MCP_REQUIRE_REDIS=1` (as in CI), where it fails.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
