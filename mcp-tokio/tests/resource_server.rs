//! The resource-server suite (`mcp-service/tests/driver_suite/resource_server.rs`) on tokio:
//! every scenario on a current-thread and on a multi-threaded runtime.

use std::net::TcpListener;

use mcp_tokio::TokioRuntime;

#[path = "support/rt.rs"]
mod rt;
use rt::{current_thread, multi_thread};

#[path = "../../mcp-service/tests/driver_suite/resource_server.rs"]
mod suite;

impl suite::Env for TokioRuntime {
    fn listener(&self, listener: TcpListener) -> tokio::net::TcpListener {
        rt::tokio_listener(self, listener)
    }
}

resource_server_suite!(on_current_thread, current_thread);
resource_server_suite!(on_multi_thread, multi_thread);
