//! MCP over WebSocket on tokio — **outside the MCP specification**; the wire rules are in
//! [`mcp_service::ws`]. hyper answers the HTTP upgrade (so every non-upgrade request gets a
//! proper HTTP reply), `tokio-tungstenite` runs the WebSocket, and each connection is one
//! session of the server on the usual connection engine.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use mcp_service::ws::{self, WsConfig};
use mcp_service::{Client, ClientOptions, Error, ErrorKind, Server};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

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
                tokio::spawn(serve_connection(
                    server.clone(),
                    config.clone(),
                    stream,
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

/// One TCP connection: HTTP/1.1 until a request upgrades it.
async fn serve_connection(
    server: Server,
    config: Arc<WsConfig>,
    stream: TcpStream,
    addr: SocketAddr,
) {
    let svc = service_fn(move |req| {
        let reply = upgrade(&server, &config, addr, req);
        async move { Ok::<_, Infallible>(reply) }
    });
    if let Err(e) = http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(stream), svc)
        .with_upgrades()
        .await
    {
        tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket HTTP connection ended with an error");
    }
}

/// Answers one request; on 101, runs the session once hyper hands over the connection.
fn upgrade(
    server: &Server,
    config: &Arc<WsConfig>,
    addr: SocketAddr,
    mut req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let reply = ws::handshake(config, &req);
    if reply.status() == StatusCode::SWITCHING_PROTOCOLS {
        let on_upgrade = hyper::upgrade::on(&mut req);
        let server = server.clone();
        let config = config.clone();
        tokio::spawn(async move {
            let upgraded = match on_upgrade.await {
                Ok(u) => u,
                Err(e) => {
                    tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket upgrade failed");
                    return;
                }
            };
            let max = config
                .max_message_size
                .unwrap_or(server.config().max_message_size);
            let socket = WebSocketStream::from_raw_socket(
                TokioIo::new(upgraded),
                Role::Server,
                Some(ws::websocket_config(max)),
            )
            .await;
            tracing::debug!(target: "mcp", %addr, "accepted a WebSocket connection");
            let rt = TokioRuntime::current();
            let stream = ws::byte_stream(rt.clone(), socket, config.close_timeout);
            if let Err(e) = server.serve(rt, stream).await {
                tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket connection ended with an error");
            }
        });
    } else {
        tracing::debug!(target: "mcp", %addr, status = %reply.status(), path = req.uri().path(), "WebSocket upgrade refused");
    }
    reply.map(|body| Full::new(Bytes::from(body)))
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
    let config = ws::websocket_config(options.config().max_message_size);
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(target.request, tcp, Some(config))
            .await
            .map_err(|e| ws::client_handshake_error(url, e))?;
    let rt = TokioRuntime::current();
    let stream = ws::byte_stream(rt.clone(), socket, ws::DEFAULT_CLOSE_TIMEOUT);
    Client::connect(rt, stream, options).await
}
