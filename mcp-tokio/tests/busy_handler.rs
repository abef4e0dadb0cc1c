//! The busy-handler suite (`mcp-service/tests/driver_suite/busy.rs`) on tokio: spinning on
//! both runtime flavours; blocking and the busy HTTP session on a multi-threaded runtime.

use std::future::Future;

use mcp_tokio::{Driver, TokioRuntime};

#[path = "support/rt.rs"]
mod rt;
use rt::current_thread;

fn multi_thread<F: Future<Output = ()>>(scenario: impl FnOnce(TokioRuntime) -> F) {
    rt::multi_thread_of(3, scenario)
}

#[path = "../../mcp-service/tests/driver_suite/busy.rs"]
mod busy;

impl busy::HttpListen for TokioRuntime {
    fn bind_loopback(&self) -> (<Self as Driver>::TcpListener, u16) {
        rt::bind_loopback(self)
    }
}

busy_suite!(on_current_thread, current_thread; a_spinning_handler_does_not_stall_its_connection);
busy_suite!(on_multi_thread, multi_thread;
    a_spinning_handler_does_not_stall_its_connection,
    a_blocking_handler_delays_only_itself,
    a_busy_http_session_does_not_stall_the_others,
    a_dropped_stateless_http_call_cancels_its_handler,
);
