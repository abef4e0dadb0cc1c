//! The unread-output suite (`mcp-service/tests/driver_suite/unread.rs`) on async-std and smol:
//! a peer that stops reading pauses the streaming handler; an HTTP client that reads nothing
//! delays no other.

use std::future::Future;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

#[path = "../../mcp-service/tests/driver_suite/unread.rs"]
mod unread;

#[cfg(all(feature = "http-server", feature = "http-client"))]
macro_rules! listen {
    ($rt:ty) => {
        impl unread::HttpListen for $rt {
            fn bind_loopback(&self) -> (std::net::TcpListener, u16) {
                let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                let port = listener.local_addr().unwrap().port();
                (listener, port)
            }
        }
    };
}
#[cfg(all(feature = "http-server", feature = "http-client"))]
listen!(AsyncStdRuntime);
#[cfg(all(feature = "http-server", feature = "http-client"))]
listen!(SmolRuntime);

fn async_std<F: Future<Output = ()>>(scenario: impl FnOnce(AsyncStdRuntime) -> F) {
    async_std::task::block_on(scenario(AsyncStdRuntime::new()))
}

fn smol<F: Future<Output = ()>>(scenario: impl FnOnce(SmolRuntime) -> F) {
    smol::block_on(scenario(SmolRuntime::new()))
}

unread_suite!(on_async_std, async_std; an_unread_connection_pauses_its_handler);
unread_suite!(on_smol, smol; an_unread_connection_pauses_its_handler);
#[cfg(all(feature = "http-server", feature = "http-client"))]
unread_suite!(http_on_async_std, async_std; an_unread_http_stream_does_not_stall_the_others);
#[cfg(all(feature = "http-server", feature = "http-client"))]
unread_suite!(http_on_smol, smol; an_unread_http_stream_does_not_stall_the_others);
