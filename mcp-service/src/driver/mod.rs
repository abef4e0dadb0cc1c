//! What a driver crate needs beyond a [`Runtime`], and everything built on it once for every
//! runtime: the TCP accept loop, in-memory pairs, the process's stdio, child processes, and the
//! HTTP and WebSocket accept glue.
//!
//! A driver (`mcp-tokio`, `mcp-async-std`) implements [`Driver`] — how its runtime accepts on a
//! TCP listener and opens a TCP connection — and, behind the features of the same names,
//! [`StdioDriver`] (the process's own stdin/stdout) and [`ProcessDriver`] (spawning a child
//! with piped stdio). The functions here are the drivers' public API, re-exported as they are:
//! each takes the runtime value as its first argument, so `mcp_tokio::serve_tcp(rt, ..)` and
//! `mcp_async_std::serve_tcp(rt, ..)` are the same function on another runtime.
//!
//! This module never names a runtime type and never blocks; the plain [`Runtime`] (clock,
//! timers, spawning) stays implementable by a virtual-time executor such as
//! [`sim::SimRuntime`](crate::sim::SimRuntime).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use futures_io::{AsyncRead, AsyncWrite};
use futures_util::StreamExt;

use crate::runtime::{BoxFuture, Runtime};
use crate::{ByteStream, Client, ClientOptions, Error, Server};

#[cfg(feature = "child")]
mod child;
#[cfg(unix)]
pub mod fd;
#[cfg(any(feature = "http-server", feature = "http-client"))]
mod http;
#[cfg(feature = "stdio")]
mod stdio;
#[cfg(feature = "stdio")]
#[doc(hidden)]
pub mod test_server;
#[cfg(feature = "ws")]
mod ws;

#[cfg(feature = "child")]
pub use child::{
    ChildClient, ChildStdio, Process, ProcessDriver, StderrCapture, StderrMode, spawn, spawn_with,
};
#[cfg(feature = "http-server")]
pub use http::serve_http;
#[cfg(feature = "http-client")]
pub use http::{TcpConnector, connect_http, connect_http_auto, connect_sse};
#[cfg(feature = "stdio")]
pub use stdio::{StdioDriver, serve_stdio, stdio_stream};
#[cfg(feature = "ws")]
pub use ws::{connect_ws, serve_ws, serve_ws_with};

/// A stream of accepted TCP connections, with the peer's address.
pub type Incoming<S> = Pin<Box<dyn Stream<Item = io::Result<(S, SocketAddr)>> + Send>>;

/// A runtime with TCP: what the accept loops ([`serve_tcp`], and `serve_http` / `serve_ws`
/// with their features) and the network clients need of a driver.
///
/// Implemented by `mcp_tokio::TokioRuntime`, `mcp_async_std::AsyncStdRuntime` and
/// `mcp_async_std::SmolRuntime`.
pub trait Driver: Runtime {
    /// The listener users bind and hand in (tokio's `TcpListener`; a `std` one on `async-io`).
    type TcpListener: Send + 'static;
    /// A connected TCP stream, seen through `futures-io`.
    type TcpStream: AsyncRead + AsyncWrite + Send + Unpin + 'static;

    /// The address `listener` is bound to.
    fn local_addr(&self, listener: &Self::TcpListener) -> io::Result<SocketAddr>;

    /// The connections accepted on `listener`, with `TCP_NODELAY` set. Each item is one
    /// `accept`: an error ends nothing, the caller decides (see [`serve_tcp`]).
    fn incoming(&self, listener: Self::TcpListener) -> io::Result<Incoming<Self::TcpStream>>;

    /// Connects to `host` (a name or an IP address, without brackets) on `port`, with
    /// `TCP_NODELAY` set; a name is resolved without blocking the runtime's threads.
    fn connect_tcp(&self, host: &str, port: u16) -> BoxFuture<io::Result<Self::TcpStream>>;

    /// How hyper reads and writes one of these streams (HTTP and WebSocket, server and
    /// client). The default goes through the stream's `futures-io` side
    /// ([`FuturesIo`](crate::hyper_io::FuturesIo)), which has to initialise each read buffer
    /// first; a driver whose streams read into uninitialised memory (tokio) does better.
    #[cfg(any(feature = "http-server", feature = "http-client", feature = "ws"))]
    fn hyper_io(stream: Self::TcpStream) -> crate::hyper_io::BoxedIo {
        Box::new(crate::hyper_io::FuturesIo::new(stream))
    }
}

/// An [`Incoming`] stream from a poll function (a listener's `poll_accept`).
pub fn incoming<S, F>(poll_accept: F) -> Incoming<S>
where
    S: 'static,
    F: FnMut(&mut Context<'_>) -> Poll<io::Result<(S, SocketAddr)>> + Send + 'static,
{
    let mut poll_accept = poll_accept;
    Box::pin(futures_util::stream::poll_fn(move |cx| {
        poll_accept(cx).map(Some)
    }))
}

/// Size of each direction's buffer in [`memory_pair`].
const MEMORY_PIPE_CAPACITY: usize = 256 * 1024;

/// How long an accept loop pauses after running out of descriptors or memory.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// A future that completes `d` after now on `rt`'s clock.
pub(crate) fn sleep_for<R: Runtime>(rt: &R, d: Duration) -> BoxFuture<()> {
    let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    let at = mcp_proto::Instant::from_micros(rt.now().as_micros().saturating_add(micros));
    rt.sleep_until(at)
}

/// Serves `server` over one byte stream until the connection closes.
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

/// A [`ByteStream`] over a `futures-io` stream, split into its read and write halves.
fn byte_stream<S>(stream: S) -> ByteStream
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (reader, writer) = futures_util::AsyncReadExt::split(stream);
    ByteStream::new(reader, writer)
}

/// Accepts connections on `listener` forever, serving each as a session of `server` on its
/// own task on `rt`.
///
/// Errors of a single connection attempt (reset, aborted) are skipped; running out of file
/// descriptors or memory pauses accepting for 100 ms. Any other accept error is returned.
pub async fn serve_tcp<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
) -> io::Result<()> {
    accept_loop(&rt, listener, |stream, addr| {
        let server = server.clone();
        let conn_rt = rt.clone();
        async move {
            tracing::debug!(target: "mcp", %addr, "accepted a TCP connection");
            if let Err(e) = serve_stream(conn_rt, &server, stream).await {
                tracing::debug!(target: "mcp", %addr, error = %e, "TCP connection ended with an error");
            }
        }
    })
    .await
}

/// The accept loop of every server: each accepted connection is handed to `serve` and the
/// future it returns runs on its own task; see [`serve_tcp`] for the error rules.
pub(crate) async fn accept_loop<D, F, Fut>(
    rt: &D,
    listener: D::TcpListener,
    mut serve: F,
) -> io::Result<()>
where
    D: Driver,
    F: FnMut(D::TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut incoming = rt.incoming(listener)?;
    while let Some(accepted) = incoming.next().await {
        match accepted {
            Ok((stream, addr)) => rt.spawn(Box::pin(serve(stream, addr))),
            Err(e) => match accept_error(&e) {
                AcceptError::Skip => {}
                AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    sleep_for(rt, ACCEPT_PAUSE).await;
                }
                AcceptError::Fatal => return Err(e),
            },
        }
    }
    Err(io::Error::other("the listener stopped accepting"))
}

enum AcceptError {
    Skip,
    Pause,
    Fatal,
}

fn accept_error(e: &io::Error) -> AcceptError {
    use io::ErrorKind as K;
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

/// An in-process client/server pair over an in-memory pipe ([`memory::duplex`]: no socket,
/// no system call): the server side is spawned on `rt`, and this resolves with the connected
/// client. The server side ends when the client closes.
///
/// [`memory::duplex`]: crate::memory::duplex
pub async fn memory_pair<R: Runtime>(
    rt: R,
    server: Server,
    options: ClientOptions,
) -> Result<Client, Error> {
    let (client_end, server_end) = crate::memory::duplex(MEMORY_PIPE_CAPACITY);
    let server_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        if let Err(e) = server.serve(server_rt, server_end).await {
            tracing::debug!(target: "mcp", error = %e, "in-memory server ended with an error");
        }
    }));
    Client::connect(rt, client_end, options).await
}
