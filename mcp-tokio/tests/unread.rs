//! The unread-output suite (`mcp-service/tests/driver_suite/unread.rs`) on tokio: a peer that
//! stops reading pauses the streaming handler (both runtime flavours); an HTTP client that
//! reads nothing delays no other (multi-threaded runtime).

use std::future::Future;

use mcp_tokio::TokioRuntime;

#[path = "../../mcp-service/tests/driver_suite/unread.rs"]
mod unread;

#[cfg(all(feature = "http-server", feature = "http-client"))]
impl unread::HttpListen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as mcp_tokio::Driver>::TcpListener, u16) {
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
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { scenario(TokioRuntime::current()).await })
}

unread_suite!(on_current_thread, current_thread; an_unread_connection_pauses_its_handler);
unread_suite!(on_multi_thread, multi_thread; an_unread_connection_pauses_its_handler);
#[cfg(all(feature = "http-server", feature = "http-client"))]
unread_suite!(http_on_multi_thread, multi_thread; an_unread_http_stream_does_not_stall_the_others);
