//! # mcp-async-std
//!
//! The async-std and smol driver of the MCP workspace. Both runtimes sit on `async-io` and
//! `futures-io`, so one set of functions serves both, generic over the [`Runtime`]:
//! [`AsyncStdRuntime`] or [`SmolRuntime`] (features `async-std` and `smol`, both on by default).
//! The protocol lives in `mcp-proto` and the typed layer in `mcp-service`; this crate only
//! supplies IO and timers:
//!
//! - servers: [`serve_stdio`] (the process's own stdin/stdout), [`serve_stream`] (any
//!   `futures-io` byte stream: async-std or smol sockets, `async_io::Async<UnixStream>`),
//!   [`serve_tcp`] (an accept loop), [`serve_http`] (Streamable HTTP on hyper);
//! - clients: [`connect_stream`], [`memory_pair`] (an in-process client/server pair) and
//!   [`spawn`] / [`spawn_with`] (a child process spoken to over its stdin/stdout, see
//!   [`ChildClient`]); over HTTP: [`connect_http`] (Streamable HTTP), [`connect_sse`] (the
//!   legacy HTTP+SSE transport) and [`connect_http_auto`] (the backwards-compatible probe);
//! - WebSocket (outside the MCP specification, see `mcp_service::ws`): [`serve_ws`] /
//!   [`serve_ws_with`] and [`connect_ws`].
//!
//! async-std is no longer maintained upstream; its support here is a thin runtime adapter, and
//! new code may prefer smol.
//!
//! ```no_run
//! # #[cfg(all(feature = "smol", feature = "stdio"))]
//! # fn main() -> Result<(), mcp_async_std::Error> {
//! use mcp_async_std::{Server, SmolRuntime};
//!
//! let server = Server::builder("my-server", "1.0").build();
//! smol::block_on(mcp_async_std::serve_stdio(SmolRuntime::new(), server))
//! # }
//! # #[cfg(not(all(feature = "smol", feature = "stdio")))]
//! # fn main() {}
//! ```
//!
//! # Features
//!
//! | feature       | default | what it adds |
//! |---------------|---------|--------------|
//! | `async-std`   | yes     | `AsyncStdRuntime` |
//! | `smol`        | yes     | `SmolRuntime` |
//! | `stdio`       | yes     | `serve_stdio`, `stdio_stream` |
//! | `child`       | yes     | `spawn`, `spawn_with`, `ChildClient` (servers in child processes) |
//! | `http-server` | no      | `serve_http` (Streamable HTTP on hyper) |
//! | `http-client` | no      | `connect_http`, `connect_sse`, `connect_http_auto`, `AsyncIoConnector`; hyper's client, `url` |
//! | `oauth`       | no      | OAuth 2.1 for the HTTP client (`HttpClientOptions::oauth`); implies `http-client` |
//! | `ws`          | no      | `serve_ws`, `serve_ws_with`, `connect_ws`, `WsConfig`; tungstenite, hyper |
//! | `metrics`     | no      | telemetry through the `metrics` facade (`mcp-service/metrics`) |
//!
//! [`serve_stream`], [`serve_tcp`], [`connect_stream`] and [`memory_pair`] are always there.
//! The defaults make a stdio server or a child-process client without any HTTP, WebSocket or
//! OAuth crate.
#![deny(missing_docs)]
// The overview above links to every transport; a build without some of them documents it
// without those links (CI checks every link in the all-features workspace build).
#![cfg_attr(
    not(all(
        feature = "async-std",
        feature = "smol",
        feature = "stdio",
        feature = "child",
        feature = "http-server",
        feature = "http-client",
        feature = "ws"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "child")]
mod child;
#[cfg(feature = "http-server")]
mod http;
#[cfg(feature = "http-client")]
mod http_client;
#[cfg(any(feature = "async-std", feature = "smol"))]
mod runtime;
#[cfg(all(unix, any(feature = "stdio", feature = "child")))]
mod stdio;
#[cfg(feature = "ws")]
mod ws;

use std::net::TcpListener;

use async_io::Async;
use futures_lite::io::{AsyncRead, AsyncWrite};

#[cfg(feature = "child")]
pub use child::{ChildClient, StderrCapture, StderrMode, spawn, spawn_with};
#[cfg(feature = "http-server")]
pub use http::serve_http;
#[cfg(feature = "http-client")]
pub use http_client::{AsyncIoConnector, connect_http, connect_http_auto, connect_sse};
pub use mcp_proto as proto;
pub use mcp_service as service;
#[cfg(feature = "http-client")]
pub use mcp_service::http_client::{HttpClientOptions, HttpTransport};
#[cfg(feature = "ws")]
pub use mcp_service::ws::WsConfig;
pub use mcp_service::{
    BoxFuture, ByteStream, CancellationToken, Client, ClientOptions, Clock, Error, ErrorKind,
    IncomingRequest, NoService, Peer, PeerInfo, Progress, RequestContext, Runtime, Server,
    ServerBuilder, Service, Telemetry, TelemetryEvent,
};
#[cfg(feature = "async-std")]
pub use runtime::AsyncStdRuntime;
#[cfg(feature = "smol")]
pub use runtime::SmolRuntime;
#[cfg(feature = "ws")]
pub use ws::{connect_ws, serve_ws, serve_ws_with};

/// A [`ByteStream`] over a `futures-io` stream, split into its read and write halves.
fn byte_stream<S>(stream: S) -> ByteStream
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (reader, writer) = futures_lite::io::split(Box::pin(stream));
    ByteStream::new(reader, writer)
}

/// Serves `server` on the process's own stdin and stdout until stdin reaches EOF; requests
/// still in flight at EOF are answered and flushed before it returns.
///
/// Pipes and sockets are driven by the `async-io` reactor directly (no thread hop); terminals
/// and files go through `blocking`'s thread pool. Works under async-std and smol alike.
#[cfg(feature = "stdio")]
pub async fn serve_stdio<R: Runtime>(rt: R, server: Server) -> Result<(), Error> {
    server.serve(rt, stdio_stream()).await
}

/// The process's stdin and stdout as a [`ByteStream`] (see [`serve_stdio`]).
#[cfg(all(feature = "stdio", unix))]
pub fn stdio_stream() -> ByteStream {
    use std::os::fd::AsFd;
    let reader: Box<dyn AsyncRead + Send + Unpin> =
        match stdio::PipeFd::stdio(std::io::stdin().as_fd(), false) {
            Some(fd) => Box::new(fd),
            None => Box::new(blocking::Unblock::new(std::io::stdin())),
        };
    let writer: Box<dyn AsyncWrite + Send + Unpin> =
        match stdio::PipeFd::stdio(std::io::stdout().as_fd(), true) {
            Some(fd) => Box::new(fd),
            None => Box::new(blocking::Unblock::new(std::io::stdout())),
        };
    ByteStream::new(reader, writer)
}

/// The process's stdin and stdout as a [`ByteStream`], through `blocking`'s thread pool (off
/// Unix).
#[cfg(all(feature = "stdio", not(unix)))]
pub fn stdio_stream() -> ByteStream {
    ByteStream::new(
        blocking::Unblock::new(std::io::stdin()),
        blocking::Unblock::new(std::io::stdout()),
    )
}

/// Serves `server` over one byte stream (an async-std or smol socket,
/// `async_io::Async<UnixStream>`, a pipe) until the connection closes.
pub async fn serve_stream<R, S>(rt: R, server: &Server, stream: S) -> Result<(), Error>
where
    R: Runtime,
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    server.serve(rt, byte_stream(stream)).await
}

/// Connects a client over one byte stream: the connection task is spawned on `rt` and the
/// client is returned once the handshake completed.
pub async fn connect_stream<R, S>(rt: R, stream: S, options: ClientOptions) -> Result<Client, Error>
where
    R: Runtime,
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    Client::connect(rt, byte_stream(stream), options).await
}

/// Accepts connections on `listener` forever, serving each on its own task on `rt`.
///
/// Takes a `std` listener (bind it with `std::net::TcpListener::bind`), which works under
/// either runtime. Errors of a single connection attempt (reset, aborted) are skipped; running
/// out of file descriptors or memory pauses accepting for 100 ms. Any other accept error is
/// returned.
pub async fn serve_tcp<R: Runtime>(
    rt: R,
    server: Server,
    listener: TcpListener,
) -> std::io::Result<()> {
    let listener = Async::new(listener)?;
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.get_ref().set_nodelay(true);
                let server = server.clone();
                let conn_rt = rt.clone();
                rt.spawn(Box::pin(async move {
                    tracing::debug!(target: "mcp", %addr, "accepted a TCP connection");
                    if let Err(e) = serve_stream(conn_rt, &server, stream).await {
                        tracing::debug!(target: "mcp", %addr, error = %e, "TCP connection ended with an error");
                    }
                }));
            }
            Err(e) => match accept_error(&e) {
                AcceptError::Skip => {}
                AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    async_io::Timer::after(std::time::Duration::from_millis(100)).await;
                }
                AcceptError::Fatal => return Err(e),
            },
        }
    }
}

enum AcceptError {
    Skip,
    Pause,
    Fatal,
}

fn accept_error(e: &std::io::Error) -> AcceptError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionAborted
        | K::ConnectionReset
        | K::Interrupted
        | K::WouldBlock
        | K::TimedOut => AcceptError::Skip,
        _ => match e.raw_os_error() {
            #[cfg(unix)]
            Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => AcceptError::Pause,
            #[cfg(unix)]
            Some(libc::EPROTO | libc::EPERM | libc::ENETDOWN | libc::EHOSTUNREACH) => {
                AcceptError::Skip
            }
            // WSAEMFILE, WSAENOBUFS: out of sockets or buffers for now.
            #[cfg(windows)]
            Some(10024 | 10055) => AcceptError::Pause,
            // WSAENETDOWN, WSAEHOSTUNREACH: that one connection attempt failed.
            #[cfg(windows)]
            Some(10050 | 10065) => AcceptError::Skip,
            _ => AcceptError::Fatal,
        },
    }
}

/// Size of each direction's buffer in [`memory_pair`].
const MEMORY_PIPE_CAPACITY: usize = 256 * 1024;

/// An in-process client/server pair over an in-memory pipe (`mcp_service::memory::duplex`: no
/// socket, no system call): the server side is spawned on `rt`, and this resolves with the
/// connected client. The server side ends when the client closes.
pub async fn memory_pair<R: Runtime>(
    rt: R,
    server: Server,
    options: ClientOptions,
) -> Result<Client, Error> {
    let (client_end, server_end) = mcp_service::memory::duplex(MEMORY_PIPE_CAPACITY);
    let server_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) = server.serve(server_rt, server_end).await {
            tracing::debug!(target: "mcp", error = %e, "in-memory server ended with an error");
        }
    }));
    Client::connect(rt, client_end, options).await
}
