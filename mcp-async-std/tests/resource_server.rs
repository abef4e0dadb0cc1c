//! The resource-server suite (`mcp-service/tests/driver_suite/resource_server.rs`) on
//! async-std and on smol.

use std::future::Future;
use std::net::TcpListener;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};

#[path = "../../mcp-service/tests/driver_suite/resource_server.rs"]
mod suite;

impl suite::Env for AsyncStdRuntime {
    fn listener(&self, listener: TcpListener) -> TcpListener {
        listener
    }
}

impl suite::Env for SmolRuntime {
    fn listener(&self, listener: TcpListener) -> TcpListener {
        listener
    }
}

fn async_std<F: Future<Output = ()>>(scenario: impl FnOnce(AsyncStdRuntime) -> F) {
    async_std::task::block_on(scenario(AsyncStdRuntime::new()))
}

fn smol<F: Future<Output = ()>>(scenario: impl FnOnce(SmolRuntime) -> F) {
    smol::block_on(scenario(SmolRuntime::new()))
}

resource_server_suite!(on_async_std, async_std);
resource_server_suite!(on_smol, smol);
