//! The TLS and HTTP/2 suite (`mcp-service/tests/driver_suite/tls.rs`) on tokio, every
//! scenario on a multi-threaded and a current-thread runtime.

use mcp_tokio::{Driver, TokioRuntime};

#[path = "support/rt.rs"]
mod rt;
use rt::{current_thread, multi_thread};

#[path = "../../mcp-service/tests/driver_suite/tls.rs"]
mod tls;

impl tls::Listen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as Driver>::TcpListener, u16) {
        rt::bind_loopback(self)
    }
}

tls_suite!(on_multi_thread, multi_thread);
tls_suite!(on_current_thread, current_thread);
