//! MCP over WebSocket on any [`Driver`] — **outside the MCP specification**; the wire rules are
//! in [`crate::ws`]. hyper answers the HTTP upgrade (so every non-upgrade request gets a proper
//! HTTP reply), `async-tungstenite` runs the WebSocket, and each connection is one session of
//! the server on the usual connection engine.

use std::io;
use std::sync::Arc;

use super::Driver;
use crate::ws::{self, WsConfig};
use crate::{Client, ClientOptions, Error, ErrorKind, Server};

/// Serves `server` over WebSocket on `listener`, forever, each connection on its own task on
/// `rt`: upgrades at `/ws` (other paths get 404), each connection a session of `server`.
/// `Host` and `Origin` are limited to loopback names when the listener is bound to a loopback
/// address (others get 403); messages are bounded by the server's maximum message size (and
/// 4 MiB), unfinished messages by 30 s, silence by 60 s, connections at once by the default
/// [`ConnectionLimits`](super::ConnectionLimits) (more are answered 503). Use
/// [`serve_ws_with`] for other settings.
///
/// Errors of a single connection attempt are skipped; running out of file descriptors pauses
/// accepting for 100 ms. Any other accept error is returned.
pub async fn serve_ws<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
) -> io::Result<()> {
    let config = WsConfig::new().bound_to(rt.local_addr(&listener)?.ip());
    serve_ws_with(rt, server, listener, config).await
}

/// [`serve_ws`] with explicit settings (path, allow-lists, message limit, close timeout, time
/// limits, connection caps: see [`WsConfig`]).
pub async fn serve_ws_with<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: WsConfig,
) -> io::Result<()> {
    let limits = config.connections;
    let config = Arc::new(config);
    super::accept_loop(
        &rt,
        listener,
        limits,
        super::Refusal::Http503,
        |stream, addr| {
            ws::serve_connection(
                rt.clone(),
                server.clone(),
                config.clone(),
                D::hyper_io(stream),
                addr,
            )
        },
    )
    .await
}

/// Connects a client on `rt` to the WebSocket MCP server at `url` (`ws://host[:port]/path`,
/// offering the `mcp` subprotocol): the connection task is spawned on `rt` and the client is
/// returned once the MCP handshake completed. Incoming messages are bounded by the options'
/// maximum message size. `wss://` is not supported (no bundled TLS).
pub async fn connect_ws<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
) -> Result<Client, Error> {
    let target = ws::client_request(url)?;
    let tcp = rt
        .connect_tcp(&target.host, target.port)
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::TransportError,
                format!("cannot connect to {url}: {e}"),
            )
        })?;
    ws::connect_over(rt, tcp, url, target, options).await
}
