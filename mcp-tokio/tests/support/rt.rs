//! Runtimes and loopback listeners for the driver suites run on tokio (`tests/driver.rs`,
//! `tests/busy_handler.rs`, `tests/unread.rs`, `tests/tls.rs`, `tests/resource_server.rs`).

#![allow(dead_code)]

use std::future::Future;

use mcp_tokio::TokioRuntime;

/// Runs `scenario` on a current-thread runtime.
pub fn current_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

/// Runs `scenario` on a multi-threaded runtime of `workers` threads.
pub fn multi_thread_of<F: Future<Output = ()>>(
    workers: usize,
    scenario: impl FnOnce(TokioRuntime) -> F,
) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

/// Runs `scenario` on a multi-threaded runtime of two threads.
pub fn multi_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    multi_thread_of(2, scenario)
}

/// `listener` registered with `rt`'s reactor.
pub fn tokio_listener(
    rt: &TokioRuntime,
    listener: std::net::TcpListener,
) -> tokio::net::TcpListener {
    let _guard = rt.handle().enter();
    listener.set_nonblocking(true).unwrap();
    tokio::net::TcpListener::from_std(listener).unwrap()
}

/// A listener on a free loopback port, and the port.
pub fn bind_loopback(rt: &TokioRuntime) -> (tokio::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (tokio_listener(rt, listener), port)
}
