//! The busy-handler suite (`mcp-service/tests/driver_suite/busy.rs`) on tokio: spinning on
//! both runtime flavours; blocking and the busy HTTP session on a multi-threaded runtime.

use std::future::Future;

use mcp_tokio::{Driver, TokioRuntime};

#[path = "../../mcp-service/tests/driver_suite/busy.rs"]
mod busy;

impl busy::HttpListen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as Driver>::TcpListener, u16) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let _guard = self.handle().enter();
        (tokio::net::TcpListener::from_std(listener).unwrap(), port)
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
        .worker_threads(3)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

busy_suite!(on_current_thread, current_thread; a_spinning_handler_does_not_stall_its_connection);
busy_suite!(on_multi_thread, multi_thread;
    a_spinning_handler_does_not_stall_its_connection,
    a_blocking_handler_delays_only_itself,
    a_busy_http_session_does_not_stall_the_others,
    a_dropped_stateless_http_call_cancels_its_handler,
);
