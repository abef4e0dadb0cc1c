//! MCP over WebSocket on tokio — **outside the MCP specification**; the wire rules are in
//! [`mcp_service::ws`]. hyper answers the HTTP upgrade (so every non-upgrade request gets a
//! proper HTTP reply), `async-tungstenite` runs the WebSocket (through `mcp_service::ws`, which
//! both drivers share), and each connection is one session of the server on the usual
//! connection engine.

use std::io;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use mcp_service::ws::{self, WsConfig};
use mcp_service::{Client, ClientOptions, Error, ErrorKind, Server};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::compat::TokioAsyncReadCompatExt;

use crate::TokioRuntime;

/// Serves `server` over WebSocket on `listener`, forever: upgrades at `/ws` (other paths get
/// 404), each connection a session of `server`. `Host` and `Origin` are limited to loopback
/// names when the listener is bound to a loopback address (others get 403); messages are
/// bounded by the server's maximum message size. Use [`serve_ws_with`] for other settings.
///
/// Errors of a single connection attempt are skipped; running out of file descriptors pauses
/// accepting for 100 ms. Any other accept error is returned. Must run inside a tokio runtime.
pub async fn serve_ws(server: Server, listener: TcpListener) -> io::Result<()> {
    let config = WsConfig::new().bound_to(listener.local_addr()?.ip());
    serve_ws_with(server, listener, config).await
}

/// [`serve_ws`] with explicit settings (path, allow-lists, message limit, close timeout).
pub async fn serve_ws_with(
    server: Server,
    listener: TcpListener,
    config: WsConfig,
) -> io::Result<()> {
    let config = Arc::new(config);
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(ws::serve_connection(
                    TokioRuntime::current(),
                    server.clone(),
                    config.clone(),
                    TokioIo::new(stream),
                    addr,
                ));
            }
            Err(e) => match crate::accept_error(&e) {
                crate::AcceptError::Skip => {}
                crate::AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                crate::AcceptError::Fatal => return Err(e),
            },
        }
    }
}

/// Connects a client to the WebSocket MCP server at `url` (`ws://host[:port]/path`, offering
/// the `mcp` subprotocol): the connection task is spawned on the current runtime and the
/// client is returned once the MCP handshake completed. Incoming messages are bounded by the
/// options' maximum message size. `wss://` is not supported (no bundled TLS).
///
/// Must run inside a tokio runtime.
pub async fn connect_ws(url: &str, options: ClientOptions) -> Result<Client, Error> {
    let target = ws::client_request(url)?;
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::TransportError,
                format!("cannot connect to {url}: {e}"),
            )
        })?;
    let _ = tcp.set_nodelay(true);
    ws::connect_over(TokioRuntime::current(), tcp.compat(), url, target, options).await
}
