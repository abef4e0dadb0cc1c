//! The busy-handler suite (`mcp-service/tests/driver_suite/busy.rs`) on async-std and smol:
//! spinning on both; blocking on async-std's thread pool; a dropped stateless-era HTTP call
//! cancelling its handler on both. (Not the busy HTTP session: its
//! blocker would hold a second thread of async-std's one global pool, which every test of this
//! process shares and which has as many threads as the machine has cores.)

use std::future::Future;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

// The busy HTTP session scenario stays unused here (see above).
#[allow(dead_code)]
#[path = "../../mcp-service/tests/driver_suite/busy.rs"]
mod busy;

#[cfg(all(feature = "http-server", feature = "http-client"))]
macro_rules! listen {
    ($rt:ty) => {
        impl busy::HttpListen for $rt {
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

busy_suite!(on_smol, smol; a_spinning_handler_does_not_stall_its_connection);
busy_suite!(on_async_std, async_std;
    a_spinning_handler_does_not_stall_its_connection,
    a_blocking_handler_delays_only_itself,
);
#[cfg(all(feature = "http-server", feature = "http-client"))]
busy_suite!(http_on_async_std, async_std; a_dropped_stateless_http_call_cancels_its_handler);
#[cfg(all(feature = "http-server", feature = "http-client"))]
busy_suite!(http_on_smol, smol; a_dropped_stateless_http_call_cancels_its_handler);
