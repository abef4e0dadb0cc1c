//! The TLS and HTTP/2 suite (`mcp-service/tests/driver_suite/tls.rs`) on async-std and smol.

use std::future::Future;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

#[path = "../../mcp-service/tests/driver_suite/tls.rs"]
mod tls;

macro_rules! listen {
    ($rt:ty) => {
        impl tls::Listen for $rt {
            fn bind_loopback(&self) -> (std::net::TcpListener, u16) {
                let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                let port = listener.local_addr().unwrap().port();
                (listener, port)
            }
        }
    };
}
listen!(AsyncStdRuntime);
listen!(SmolRuntime);

fn async_std<F: Future<Output = ()>>(scenario: impl FnOnce(AsyncStdRuntime) -> F) {
    async_std::task::block_on(scenario(AsyncStdRuntime::new()))
}

fn smol<F: Future<Output = ()>>(scenario: impl FnOnce(SmolRuntime) -> F) {
    smol::block_on(scenario(SmolRuntime::new()))
}

tls_suite!(on_async_std, async_std);
tls_suite!(on_smol, smol);
