//! Time limits and connection caps on the wire, on async-std and smol: the scenarios of
//! `mcp-tokio/tests/support/wire_limits.rs` (shared with `mcp-tokio`) against
//! `serve_http_with` and `serve_ws_with`. Each scenario runs as `<name>::async_std` and
//! `<name>::smol`.

use std::net::{SocketAddr, TcpListener};

use mcp_async_std::proto::http::EndpointConfig;
use mcp_async_std::service;
use mcp_async_std::{Driver, HttpServerOptions, WsConfig};

#[path = "../../mcp-tokio/tests/support/wire_limits.rs"]
mod wire;

fn start_http<D: Driver<TcpListener = TcpListener>>(
    rt: D,
    options: HttpServerOptions,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = wire::server();
    let config = EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
    let serve_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) =
            mcp_async_std::serve_http_with(serve_rt, server, listener, config, options).await
        {
            eprintln!("serve_http_with failed: {e}");
        }
    }));
    addr
}

fn start_ws<D: Driver<TcpListener = TcpListener>>(rt: D, config: WsConfig) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = wire::server();
    let serve_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) = mcp_async_std::serve_ws_with(serve_rt, server, listener, config).await {
            eprintln!("serve_ws_with failed: {e}");
        }
    }));
    addr
}

fn start_tcp<D: Driver<TcpListener = TcpListener>>(
    rt: D,
    limits: mcp_async_std::ConnectionLimits,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = wire::server();
    let serve_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) = mcp_async_std::serve_tcp_with(serve_rt, server, listener, limits).await {
            eprintln!("serve_tcp_with failed: {e}");
        }
    }));
    addr
}

/// `$name` on both runtimes, each with the servers on its global executor (whose threads
/// run the tasks while the scenario blocks on `std` sockets).
macro_rules! on_both {
    ($start:ident: $($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn async_std() {
                let start = |o| $start(mcp_async_std::AsyncStdRuntime::new(), o);
                wire::$name(&start);
            }

            #[test]
            fn smol() {
                let start = |o| $start(mcp_async_std::SmolRuntime::new(), o);
                wire::$name(&start);
            }
        }
    )*};
}

on_both!(start_http:
    http_body_short_of_its_length_is_closed_at_the_deadline,
    http_trickled_chunked_body_is_closed_by_the_minimum_rate,
    http_half_a_head_is_closed_at_the_header_timeout,
    http_read_buffer_bounds_the_head_not_the_body,
    http_idle_keep_alive_is_closed_at_the_keep_alive_timeout,
    http_connection_caps_refuse_with_503,
    http_unread_reply_is_closed_at_the_write_timeout,
);

on_both!(start_tcp: tcp_connection_cap_closes);

on_both!(start_ws:
    ws_handshake_is_closed_at_the_header_timeout,
    ws_unfinished_message_is_closed_at_its_deadline,
    ws_unfinished_message_over_its_budget_is_closed,
    ws_silent_peer_is_closed_at_the_idle_timeout,
    ws_connection_cap_refuses_with_503,
    ws_unread_reply_is_closed_at_the_write_timeout,
);
