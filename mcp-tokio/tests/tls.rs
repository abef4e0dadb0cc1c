//! The TLS and HTTP/2 suite (`mcp-service/tests/driver_suite/tls.rs`) on tokio, every
//! scenario on a multi-threaded and a current-thread runtime.

use std::future::Future;

use mcp_tokio::{Driver, TokioRuntime};

#[path = "../../mcp-service/tests/driver_suite/tls.rs"]
mod tls;

impl tls::Listen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as Driver>::TcpListener, u16) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let _guard = self.handle().enter();
        (tokio::net::TcpListener::from_std(listener).unwrap(), port)
    }
}

fn multi_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

fn current_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

tls_suite!(on_multi_thread, multi_thread);
tls_suite!(on_current_thread, current_thread);
