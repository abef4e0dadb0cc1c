//! The resource-server suite (`mcp-service/tests/driver_suite/resource_server.rs`) on tokio:
//! every scenario on a current-thread and on a multi-threaded runtime.

use std::future::Future;
use std::net::TcpListener;

use mcp_tokio::TokioRuntime;

#[path = "../../mcp-service/tests/driver_suite/resource_server.rs"]
mod suite;

impl suite::Env for TokioRuntime {
    fn listener(&self, listener: TcpListener) -> tokio::net::TcpListener {
        let _guard = self.handle().enter();
        listener.set_nonblocking(true).unwrap();
        tokio::net::TcpListener::from_std(listener).unwrap()
    }
}

fn current_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

fn multi_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

resource_server_suite!(on_current_thread, current_thread);
resource_server_suite!(on_multi_thread, multi_thread);
