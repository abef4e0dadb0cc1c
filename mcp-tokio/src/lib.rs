//! # mcp-tokio
//!
//! The tokio driver of the MCP workspace. The protocol lives in `mcp-proto` and the typed layer
//! in `mcp-service`; this crate only supplies IO and timers:
//!
//! - [`TokioRuntime`], the [`Runtime`] of a tokio runtime (clock, timers, spawning);
//! - servers: [`serve_stdio`] (the process's own stdin/stdout), [`serve_stream`] (any tokio
//!   byte stream: TCP, Unix sockets, pipes), [`serve_tcp`] (an accept loop), [`serve_http`]
//!   (Streamable HTTP on hyper) and [`McpService`] (the HTTP endpoint as a tower service, to
//!   mount in axum);
//! - clients: [`connect_stream`], [`memory_pair`] (an in-process client/server pair) and
//!   [`spawn`] / [`spawn_with`] (a child process spoken to over its stdin/stdout, see
//!   [`ChildClient`]); over HTTP: [`connect_http`] (Streamable HTTP), [`connect_sse`] (the
//!   legacy HTTP+SSE transport) and [`connect_http_auto`] (the backwards-compatible probe);
//! - WebSocket (outside the MCP specification, see `mcp_service::ws`): [`serve_ws`] /
//!   [`serve_ws_with`] and [`connect_ws`].
//!
//! ```no_run
//! # #[cfg(feature = "stdio")]
//! # async fn run() -> Result<(), mcp_tokio::Error> {
//! let server = mcp_tokio::Server::builder("my-server", "1.0").build();
//! mcp_tokio::serve_stdio(server).await
//! # }
//! ```
//!
//! # Features
//!
//! | feature       | default | what it adds |
//! |---------------|---------|--------------|
//! | `stdio`       | yes     | `serve_stdio`, `stdio_stream` |
//! | `child`       | yes     | `spawn`, `spawn_with`, `ChildClient` (servers in child processes) |
//! | `http-server` | no      | `serve_http`, the `http` module with `McpService` (tower/axum); hyper |
//! | `http-client` | no      | `connect_http`, `connect_sse`, `connect_http_auto`, `TokioConnector`; hyper's client, `url` |
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
pub mod http;
#[cfg(feature = "http-server")]
pub use http::{McpService, serve_http};
#[cfg(feature = "http-client")]
mod http_client;
#[cfg(feature = "http-client")]
pub use http_client::{TokioConnector, connect_http, connect_http_auto, connect_sse};
#[cfg(feature = "http-client")]
pub use mcp_service::http_client::{HttpClientOptions, HttpTransport};
mod runtime;
#[cfg(all(unix, any(feature = "stdio", feature = "child")))]
mod stdio;
#[cfg(feature = "ws")]
mod ws;
#[cfg(feature = "ws")]
pub use mcp_service::ws::WsConfig;
#[cfg(feature = "ws")]
pub use ws::{connect_ws, serve_ws, serve_ws_with};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[cfg(feature = "child")]
pub use child::{ChildClient, StderrCapture, StderrMode, spawn, spawn_with};
pub use mcp_proto as proto;
pub use mcp_service as service;
pub use mcp_service::{
    BoxFuture, ByteStream, CancellationToken, Client, ClientOptions, Clock, Error, ErrorKind,
    IncomingRequest, NoService, Peer, PeerInfo, Progress, RequestContext, Runtime, Server,
    ServerBuilder, Service, Telemetry, TelemetryEvent,
};
pub use runtime::TokioRuntime;

/// The README's code, compiled as doc tests.
#[cfg(all(
    doctest,
    feature = "stdio",
    feature = "child",
    feature = "http-server",
    feature = "http-client",
    feature = "ws"
))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Size of each direction's buffer in [`memory_pair`].
const MEMORY_PIPE_CAPACITY: usize = 256 * 1024;

/// A [`ByteStream`] over a tokio stream, split into its read and write halves.
fn byte_stream<S>(stream: S) -> ByteStream
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (reader, writer) = tokio::io::split(stream);
    ByteStream::new(reader.compat(), writer.compat_write())
}

/// Serves `server` on the process's own stdin and stdout until stdin reaches EOF; requests
/// still in flight at EOF are answered and flushed before it returns.
///
/// Must run inside a tokio runtime with IO and time enabled. tokio reads stdin on a blocking
/// thread: if this returns before EOF (a write error), that thread stays blocked in `read`, and
/// dropping the runtime waits for it — end such a process with `std::process::exit` or use
/// `Runtime::shutdown_timeout`.
#[cfg(feature = "stdio")]
pub async fn serve_stdio(server: Server) -> Result<(), Error> {
    server.serve(TokioRuntime::current(), stdio_stream()).await
}

/// The process's stdin and stdout as a [`ByteStream`]: sockets and (on Linux) pipes are
/// driven by the reactor directly (no thread hop), without changing the file descriptions the
/// process inherited (sockets with `MSG_DONTWAIT`, pipes reopened through `/proc/self/fd`);
/// terminals and files go through tokio's blocking-pool stdio. Must be called inside a tokio
/// runtime.
#[cfg(all(feature = "stdio", unix))]
pub fn stdio_stream() -> ByteStream {
    use std::os::fd::AsFd;
    let reader: Box<dyn futures_io::AsyncRead + Send + Unpin> =
        match stdio::PipeFd::stdio(std::io::stdin().as_fd(), false) {
            Some(fd) => Box::new(fd),
            None => Box::new(tokio::io::stdin().compat()),
        };
    let writer: Box<dyn futures_io::AsyncWrite + Send + Unpin> =
        match stdio::PipeFd::stdio(std::io::stdout().as_fd(), true) {
            Some(fd) => Box::new(fd),
            None => Box::new(tokio::io::stdout().compat_write()),
        };
    ByteStream::new(reader, writer)
}

/// The process's stdin and stdout as a [`ByteStream`], through tokio's blocking-pool stdio
/// (off Unix). Must be called inside a tokio runtime.
#[cfg(all(feature = "stdio", not(unix)))]
pub fn stdio_stream() -> ByteStream {
    ByteStream::new(
        tokio::io::stdin().compat(),
        tokio::io::stdout().compat_write(),
    )
}

/// Serves `server` over one byte stream (a TCP or Unix socket, a pipe, a duplex) until the
/// connection closes. Must run inside a tokio runtime.
pub async fn serve_stream<S>(server: &Server, stream: S) -> Result<(), Error>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    server
        .serve(TokioRuntime::current(), byte_stream(stream))
        .await
}

/// Connects a client over one byte stream (a TCP or Unix socket, a pipe, a duplex): the
/// connection task is spawned on the current runtime and the client is returned once the
/// handshake completed. Must run inside a tokio runtime.
pub async fn connect_stream<S>(stream: S, options: ClientOptions) -> Result<Client, Error>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    Client::connect(TokioRuntime::current(), byte_stream(stream), options).await
}

/// Accepts connections on `listener` forever, serving each on its own task.
///
/// Errors of a single connection attempt (reset, aborted) are skipped; running out of file
/// descriptors or memory pauses accepting for 100 ms. Any other accept error is returned.
pub async fn serve_tcp(server: Server, listener: TcpListener) -> std::io::Result<()> {
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                let server = server.clone();
                tokio::spawn(async move {
                    tracing::debug!(target: "mcp", %addr, "accepted a TCP connection");
                    if let Err(e) = serve_stream(&server, stream).await {
                        tracing::debug!(target: "mcp", %addr, error = %e, "TCP connection ended with an error");
                    }
                });
            }
            Err(e) => match accept_error(&e) {
                AcceptError::Skip => {}
                AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
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

/// An in-process client/server pair over an in-memory pipe (`mcp_service::memory::duplex`):
/// the server side is spawned on the current runtime, and the returned future resolves with the
/// connected client. The server side ends when the client closes.
pub async fn memory_pair(server: Server, options: ClientOptions) -> Result<Client, Error> {
    let (client_end, server_end) = mcp_service::memory::duplex(MEMORY_PIPE_CAPACITY);
    let rt = TokioRuntime::current();
    let server_rt = rt.clone();
    tokio::spawn(async move {
        if let Err(e) = server.serve(server_rt, server_end).await {
            tracing::debug!(target: "mcp", error = %e, "in-memory server ended with an error");
        }
    });
    Client::connect(rt, client_end, options).await
}
