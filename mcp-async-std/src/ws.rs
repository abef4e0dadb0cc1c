//! MCP over WebSocket on async-std and smol — **outside the MCP specification**; the wire rules
//! are in [`mcp_service::ws`]. hyper answers the HTTP upgrade (so every non-upgrade request gets
//! a proper HTTP reply), `async-tungstenite` runs the WebSocket over `futures-io`, and each
//! connection is one session of the server on the usual connection engine.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;

use async_io::Async;
use mcp_service::hyper_io::FuturesIo;
use mcp_service::ws::{self, WsConfig};
use mcp_service::{Client, ClientOptions, Error, ErrorKind, Runtime, Server};

/// Serves `server` over WebSocket on `listener`, forever, each connection on its own task on
/// `rt`: upgrades at `/ws` (other paths get 404), each connection a session of `server`.
/// `Host` and `Origin` are limited to loopback names when the listener is bound to a loopback
/// address (others get 403); messages are bounded by the server's maximum message size. Use
/// [`serve_ws_with`] for other settings.
///
/// Takes a `std` listener (bind it with `std::net::TcpListener::bind`), which works under
/// either runtime. Errors of a single connection attempt are skipped; running out of file
/// descriptors pauses accepting for 100 ms. Any other accept error is returned.
pub async fn serve_ws<R: Runtime>(rt: R, server: Server, listener: TcpListener) -> io::Result<()> {
    let config = WsConfig::new().bound_to(listener.local_addr()?.ip());
    serve_ws_with(rt, server, listener, config).await
}

/// [`serve_ws`] with explicit settings (path, allow-lists, message limit, close timeout).
pub async fn serve_ws_with<R: Runtime>(
    rt: R,
    server: Server,
    listener: TcpListener,
    config: WsConfig,
) -> io::Result<()> {
    let listener = Async::new(listener)?;
    let config = Arc::new(config);
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.get_ref().set_nodelay(true);
                rt.spawn(Box::pin(ws::serve_connection(
                    rt.clone(),
                    server.clone(),
                    config.clone(),
                    FuturesIo::new(stream),
                    addr,
                )));
            }
            Err(e) => match crate::accept_error(&e) {
                crate::AcceptError::Skip => {}
                crate::AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    async_io::Timer::after(std::time::Duration::from_millis(100)).await;
                }
                crate::AcceptError::Fatal => return Err(e),
            },
        }
    }
}

/// Connects a client to the WebSocket MCP server at `url` (`ws://host[:port]/path`, offering
/// the `mcp` subprotocol): the connection task is spawned on `rt` and the client is returned
/// once the MCP handshake completed. Incoming messages are bounded by the options' maximum
/// message size. `wss://` is not supported (no bundled TLS).
pub async fn connect_ws<R: Runtime>(
    rt: R,
    url: &str,
    options: ClientOptions,
) -> Result<Client, Error> {
    let target = ws::client_request(url)?;
    let connect_error = |e: io::Error| {
        Error::new(
            ErrorKind::TransportError,
            format!("cannot connect to {url}: {e}"),
        )
    };
    let (host, port) = (target.host.clone(), target.port);
    let addrs: Vec<SocketAddr> =
        blocking::unblock(move || (host.as_str(), port).to_socket_addrs().map(Vec::from_iter))
            .await
            .map_err(connect_error)?;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host has no address");
    let mut tcp = None;
    for addr in addrs {
        match Async::<TcpStream>::connect(addr).await {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = e,
        }
    }
    let tcp = tcp.ok_or_else(|| connect_error(last))?;
    let _ = tcp.get_ref().set_nodelay(true);
    ws::connect_over(rt, tcp, url, target, options).await
}
