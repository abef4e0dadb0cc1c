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
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(rt: D, listener: D::TcpListener) -> std::io::Result<()> {
/// // With mcp-tokio: `mcp_tokio::serve_ws(mcp_tokio::TokioRuntime::current(), ..)`.
/// let server = mcp_service::Server::builder("ws-server", "1.0").build();
/// mcp_service::driver::serve_ws(rt, server, listener).await // ws://<address>/ws
/// # }
/// ```
///
/// # Errors
/// The `io::Error` of reading `listener`'s local address (for the `Host` and `Origin`
/// checks); then as [`serve_tcp`](super::serve_tcp): never returns but with an accept error.
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
///
/// # Errors
/// As [`serve_tcp`](super::serve_tcp): never returns but with an accept error.
pub async fn serve_ws_with<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: WsConfig,
) -> io::Result<()> {
    serve_ws_inner(rt, server, listener, config, None).await
}

/// [`serve_ws_with`] over TLS (feature `tls`, `wss://`): each accepted connection's TLS
/// handshake (within the config's header timeout, ALPN `http/1.1`) with `tls`'s certificate,
/// then the WebSocket upgrade. A failed handshake ends that connection only.
///
/// # Errors
/// As [`serve_tcp`](super::serve_tcp): never returns but with an accept error.
#[cfg(feature = "tls")]
pub async fn serve_ws_tls<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: WsConfig,
    tls: crate::tls::TlsServerConfig,
) -> io::Result<()> {
    serve_ws_inner(rt, server, listener, config, Some(tls)).await
}

async fn serve_ws_inner<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: WsConfig,
    #[cfg(feature = "tls")] tls: Option<crate::tls::TlsServerConfig>,
    #[cfg(not(feature = "tls"))] _tls: Option<std::convert::Infallible>,
) -> io::Result<()> {
    let limits = config.connections;
    let config = Arc::new(config);
    super::accept_loop(
        &rt,
        listener,
        limits,
        super::Refusal::Http503,
        |stream, addr| {
            let (rt, server, config) = (rt.clone(), server.clone(), config.clone());
            #[cfg(feature = "tls")]
            let tls = tls.clone();
            async move {
                #[cfg(feature = "tls")]
                if let Some(tls) = tls {
                    let accepted = super::timed_io(
                        &rt,
                        config.header_read_timeout,
                        crate::tls::accept(&tls, stream, false),
                    )
                    .await;
                    match accepted {
                        Ok((stream, _)) => {
                            let io = Box::new(crate::hyper_io::FuturesIo::new(stream));
                            // Boxed: a TLS connection's future is large (debug builds
                            // would copy it across small thread stacks).
                            Box::pin(ws::serve_connection(rt, server, config, io, addr)).await;
                        }
                        Err(e) => {
                            tracing::debug!(target: "mcp", %addr, error = %e, "TLS handshake failed");
                        }
                    }
                    return;
                }
                Box::pin(ws::serve_connection(rt, server, config, D::hyper_io(stream), addr)).await;
            }
        },
    )
    .await
}

/// Connects a client on `rt` to the WebSocket MCP server at `url` (`ws://host[:port]/path`,
/// offering the `mcp` subprotocol): the connection task is spawned on `rt` and the client is
/// returned once the MCP handshake completed. Incoming messages are bounded by the options'
/// maximum message size. `wss://` (feature `tls`) runs the TLS handshake first, with the
/// default [`TlsClientConfig`](crate::tls::TlsClientConfig) (the `webpki-roots` bundle);
/// `connect_ws_tls` takes another.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(rt: D) -> Result<(), mcp_service::Error> {
/// let client =
///     mcp_service::driver::connect_ws(rt, "ws://127.0.0.1:9000/ws", Default::default()).await?;
/// client.ping().await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidParams`] (-32602) for a URL that is not `ws://` or `wss://` with a
/// host (`wss://` without the feature `tls`); [`ErrorKind::TransportError`] (local) when the
/// TCP connection or the TLS handshake fails (the message names the cause: a certificate not
/// valid for the name, expired, from an unknown authority) or the server refuses the
/// WebSocket upgrade (the message has its status and reason); and those of
/// [`Client::connect`].
pub async fn connect_ws<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
) -> Result<Client, Error> {
    #[cfg(feature = "tls")]
    {
        connect_ws_tls(rt, url, options, &crate::tls::TlsClientConfig::default()).await
    }
    #[cfg(not(feature = "tls"))]
    {
        let target = ws::client_request(url)?;
        let tcp = connect_tcp(&rt, url, &target).await?;
        ws::connect_over(rt, tcp, url, target, options).await
    }
}

async fn connect_tcp<D: Driver>(
    rt: &D,
    url: &str,
    target: &ws::ClientRequest,
) -> Result<D::TcpStream, Error> {
    rt.connect_tcp(&target.host, target.port)
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::TransportError,
                format!("cannot connect to {url}: {e}"),
            )
        })
}

/// [`connect_ws`] with the TLS policy `tls` for a `wss://` URL (roots, extra CAs, a client
/// certificate); a `ws://` URL ignores it.
///
/// # Errors
/// As [`connect_ws`].
#[cfg(feature = "tls")]
pub async fn connect_ws_tls<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
    tls: &crate::tls::TlsClientConfig,
) -> Result<Client, Error> {
    let target = ws::client_request(url)?;
    let tcp = connect_tcp(&rt, url, &target).await?;
    if !target.secure {
        return Box::pin(ws::connect_over(rt, tcp, url, target, options)).await;
    }
    // Boxed: the TLS handshake's and the WebSocket client's futures are large.
    let (stream, _) = Box::pin(crate::tls::connect(tls, &target.host, tcp, false))
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::TransportError,
                format!("cannot connect to {url}: {e}"),
            )
        })?;
    Box::pin(ws::connect_over(rt, stream, url, target, options)).await
}
