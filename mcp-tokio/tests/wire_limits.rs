//! Time limits and connection caps on the wire, on tokio: the scenarios of
//! `support/wire_limits.rs` (shared with `mcp-async-std`) against `serve_http_with` and
//! `serve_ws_with` running on a tokio runtime.

use std::net::SocketAddr;
use std::sync::OnceLock;

use mcp_tokio::proto::http::EndpointConfig;
use mcp_tokio::service;
use mcp_tokio::{HttpServerOptions, TokioRuntime, WsConfig};

#[path = "support/wire_limits.rs"]
mod wire;

/// The runtime every server of these tests runs on (the scenarios themselves block on
/// `std` sockets on the test threads).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

fn listener() -> (tokio::net::TcpListener, SocketAddr) {
    let std = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    std.set_nonblocking(true).expect("non-blocking");
    let addr = std.local_addr().expect("address");
    let _guard = runtime().enter();
    (
        tokio::net::TcpListener::from_std(std).expect("a tokio listener"),
        addr,
    )
}

fn start_http(options: HttpServerOptions) -> SocketAddr {
    let (listener, addr) = listener();
    let server = wire::server();
    let config = EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
    let rt = TokioRuntime::new(runtime().handle().clone());
    runtime().spawn(mcp_tokio::serve_http_with(
        rt, server, listener, config, options,
    ));
    addr
}

fn start_ws(config: WsConfig) -> SocketAddr {
    let (listener, addr) = listener();
    let server = wire::server();
    let rt = TokioRuntime::new(runtime().handle().clone());
    runtime().spawn(mcp_tokio::serve_ws_with(rt, server, listener, config));
    addr
}

fn start_tcp(limits: mcp_tokio::ConnectionLimits) -> SocketAddr {
    let (listener, addr) = listener();
    let server = wire::server();
    let rt = TokioRuntime::new(runtime().handle().clone());
    runtime().spawn(mcp_tokio::serve_tcp_with(rt, server, listener, limits));
    addr
}

macro_rules! http {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            wire::$name(&start_http);
        }
    )*};
}

macro_rules! ws {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            wire::$name(&start_ws);
        }
    )*};
}

http!(
    http_body_short_of_its_length_is_closed_at_the_deadline,
    http_trickled_chunked_body_is_closed_by_the_minimum_rate,
    http_half_a_head_is_closed_at_the_header_timeout,
    http_read_buffer_bounds_the_head_not_the_body,
    http_idle_keep_alive_is_closed_at_the_keep_alive_timeout,
    http_connection_caps_refuse_with_503,
    http_unread_reply_is_closed_at_the_write_timeout,
);

#[test]
fn tcp_connection_cap_closes() {
    wire::tcp_connection_cap_closes(&start_tcp);
}

ws!(
    ws_handshake_is_closed_at_the_header_timeout,
    ws_unfinished_message_is_closed_at_its_deadline,
    ws_unfinished_message_over_its_budget_is_closed,
    ws_silent_peer_is_closed_at_the_idle_timeout,
    ws_connection_cap_refuses_with_503,
    ws_unread_reply_is_closed_at_the_write_timeout,
);
