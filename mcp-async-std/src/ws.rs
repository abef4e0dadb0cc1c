//! MCP over WebSocket on async-std and smol — **outside the MCP specification**; the wire rules
//! are in [`mcp_service::ws`]. hyper answers the HTTP upgrade (so every non-upgrade request gets
//! a proper HTTP reply), `async-tungstenite` runs the WebSocket over `futures-io`, and each
//! connection is one session of the server on the usual connection engine.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;

use async_io::Async;
use async_tungstenite::WebSocketStream;
use async_tungstenite::tungstenite::protocol::Role;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use mcp_service::hyper_io::{FuturesIo, RuntimeTimer};
use mcp_service::ws::{self, UpgradedIo, WsConfig};
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
                rt.spawn(Box::pin(serve_connection(
                    rt.clone(),
                    server.clone(),
                    config.clone(),
                    stream,
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

/// One TCP connection: HTTP/1.1 until a request upgrades it.
async fn serve_connection<R: Runtime>(
    rt: R,
    server: Server,
    config: Arc<WsConfig>,
    stream: Async<TcpStream>,
    addr: SocketAddr,
) {
    let upgrade_rt = rt.clone();
    let svc = service_fn(move |req| {
        let reply = upgrade(&upgrade_rt, &server, &config, addr, req);
        async move { Ok::<_, Infallible>(reply) }
    });
    if let Err(e) = http1::Builder::new()
        .timer(RuntimeTimer::new(rt))
        .serve_connection(FuturesIo::new(stream), svc)
        .with_upgrades()
        .await
    {
        tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket HTTP connection ended with an error");
    }
}

/// Answers one request; on 101, runs the session once hyper hands over the connection.
fn upgrade<R: Runtime>(
    rt: &R,
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
        let session_rt = rt.clone();
        rt.spawn(Box::pin(async move {
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
                UpgradedIo::new(upgraded),
                Role::Server,
                Some(ws::websocket_config(max)),
            )
            .await;
            tracing::debug!(target: "mcp", %addr, "accepted a WebSocket connection");
            let stream = ws::byte_stream(session_rt.clone(), socket, config.close_timeout);
            if let Err(e) = server.serve(session_rt, stream).await {
                tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket connection ended with an error");
            }
        }));
    } else {
        tracing::debug!(target: "mcp", %addr, status = %reply.status(), path = req.uri().path(), "WebSocket upgrade refused");
    }
    reply.map(|body| Full::new(Bytes::from(body)))
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
    let config = ws::websocket_config(options.config().max_message_size);
    let (socket, _) =
        async_tungstenite::client_async_with_config(target.request, tcp, Some(config))
            .await
            .map_err(|e| ws::client_handshake_error(url, e))?;
    let stream = ws::byte_stream(rt.clone(), socket, ws::DEFAULT_CLOSE_TIMEOUT);
    Client::connect(rt, stream, options).await
}
