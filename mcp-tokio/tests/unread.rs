//! The unread-output suite (`mcp-service/tests/driver_suite/unread.rs`) on tokio: a peer that
//! stops reading pauses the streaming handler (both runtime flavours); an HTTP client that
//! reads nothing delays no other (multi-threaded runtime).

use mcp_tokio::TokioRuntime;

#[path = "support/rt.rs"]
mod rt;
use rt::{current_thread, multi_thread};

#[path = "../../mcp-service/tests/driver_suite/unread.rs"]
mod unread;

#[cfg(all(feature = "http-server", feature = "http-client"))]
impl unread::HttpListen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as mcp_tokio::Driver>::TcpListener, u16) {
        rt::bind_loopback(self)
    }
}

unread_suite!(on_current_thread, current_thread; an_unread_connection_pauses_its_handler);
unread_suite!(on_multi_thread, multi_thread; an_unread_connection_pauses_its_handler);
#[cfg(all(feature = "http-server", feature = "http-client"))]
unread_suite!(http_on_multi_thread, multi_thread; an_unread_http_stream_does_not_stall_the_others);
