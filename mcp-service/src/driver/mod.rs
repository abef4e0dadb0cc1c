//! What a driver crate needs beyond a [`Runtime`], and everything built on it once for every
//! runtime: the TCP accept loop, in-memory pairs, the process's stdio, child processes, and the
//! HTTP and WebSocket accept glue.
//!
//! A driver (`mcp-tokio`, `mcp-async-std`) implements [`Driver`] — how its runtime accepts on a
//! TCP listener and opens a TCP connection — and, behind the features of the same names,
//! `StdioDriver` (the process's own stdin/stdout, feature `stdio`) and `ProcessDriver`
//! (spawning a child with piped stdio, feature `child`). The functions here are the drivers' public API, re-exported as they are:
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
#[cfg(all(feature = "http-server", feature = "tls"))]
pub use http::serve_http_tls;
#[cfg(feature = "http-client")]
pub use http::{TcpConnector, connect_http, connect_http_auto, connect_sse};
#[cfg(feature = "http-server")]
pub use http::{serve_http, serve_http_with};
#[cfg(feature = "stdio")]
pub use stdio::{StdioDriver, serve_stdio, stdio_stream};
#[cfg(feature = "ws")]
pub use ws::{connect_ws, serve_ws, serve_ws_with};
#[cfg(all(feature = "ws", feature = "tls"))]
pub use ws::{connect_ws_tls, serve_ws_tls};

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
    ///
    /// # Errors
    /// The operating system's, as the runtime's listener reports it.
    fn local_addr(&self, listener: &Self::TcpListener) -> io::Result<SocketAddr>;

    /// The connections accepted on `listener`, with `TCP_NODELAY` set. Each item is one
    /// `accept`: an error ends nothing, the caller decides (see [`serve_tcp`]).
    ///
    /// # Errors
    /// When the listener cannot be registered with the runtime's reactor.
    fn incoming(&self, listener: Self::TcpListener) -> io::Result<Incoming<Self::TcpStream>>;

    /// Connects to `host` (a name or an IP address, without brackets) on `port`, with
    /// `TCP_NODELAY` set; a name is resolved without blocking the runtime's threads.
    ///
    /// The future fails with the resolver's or the connection's `io::Error` (a name that does
    /// not resolve, a refused or unreachable address).
    fn connect_tcp(&self, host: &str, port: u16) -> BoxFuture<io::Result<Self::TcpStream>>;

    /// The addresses `host` (a name or an IP address, without brackets) resolves to, with
    /// `port`, resolved without blocking the runtime's threads. The default takes IP
    /// addresses only (a name fails with `Unsupported`); the drivers of this workspace
    /// resolve names.
    ///
    /// # Errors
    /// The resolver's `io::Error` (a name that does not resolve).
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<io::Result<Vec<SocketAddr>>> {
        let parsed = host.parse::<std::net::IpAddr>();
        let host = host.to_owned();
        Box::pin(async move {
            match parsed {
                Ok(ip) => Ok(vec![SocketAddr::new(ip, port)]),
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("this driver does not resolve host names ({host})"),
                )),
            }
        })
    }

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

/// `fut` within `timeout` (none: unbounded); `TimedOut` past it.
#[cfg(all(feature = "tls", any(feature = "http-server", feature = "ws")))]
pub(crate) async fn timed_io<R: Runtime, T>(
    rt: &R,
    timeout: Option<Duration>,
    fut: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    let Some(timeout) = timeout else {
        return fut.await;
    };
    let fut = std::pin::pin!(fut);
    match futures_util::future::select(fut, sleep_for(rt, timeout)).await {
        futures_util::future::Either::Left((r, _)) => r,
        futures_util::future::Either::Right(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the TLS handshake took longer than the header timeout",
        )),
    }
}

/// Fails a write that waited `timeout` for a peer that takes nothing (the HTTP server's and
/// the WebSocket server's write timeout): each pending poll of the write arms one timer, any
/// progress disarms it.
#[cfg(any(feature = "http-server", feature = "ws"))]
pub(crate) struct WriteStall {
    timeout: Duration,
    sleep: std::sync::Arc<dyn Fn(Duration) -> BoxFuture<()> + Send + Sync>,
    /// What the error says went wrong.
    what: &'static str,
    /// Armed while a write waits.
    pending: Option<BoxFuture<()>>,
}

#[cfg(any(feature = "http-server", feature = "ws"))]
impl WriteStall {
    /// A write timeout of `timeout` on `rt`'s clock, whose error says `what`.
    pub(crate) fn new<R: Runtime>(rt: &R, timeout: Duration, what: &'static str) -> Self {
        let rt = rt.clone();
        WriteStall {
            timeout,
            sleep: std::sync::Arc::new(move |d| sleep_for(&rt, d)),
            what,
            pending: None,
        }
    }

    /// `r`, the outcome of a write, unless it has waited the timeout: then `TimedOut` (the
    /// only way a pending `r` becomes ready).
    pub(crate) fn check<T>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        r: std::task::Poll<io::Result<T>>,
    ) -> std::task::Poll<io::Result<T>> {
        use std::task::Poll;
        if r.is_ready() {
            self.pending = None;
            return r;
        }
        let sleep = self
            .pending
            .get_or_insert_with(|| (self.sleep)(self.timeout));
        if sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.pending = None;
        tracing::debug!(target: "mcp", timeout = ?self.timeout, "{}; closing", self.what);
        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, self.what)))
    }
}

/// Serves `server` over one byte stream until the connection closes.
///
/// # Errors
/// [`ErrorKind::TransportError`](crate::ErrorKind::TransportError) (local) when reading,
/// writing or flushing the stream failed. The peer closing its end (end of stream, a broken
/// pipe, a reset) is the normal end, `Ok(())`.
pub async fn serve_stream<R, S>(rt: R, server: &Server, stream: S) -> Result<(), Error>
where
    R: Runtime,
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    server.serve(rt, byte_stream(stream)).await
}

/// Connects a client over one byte stream: the connection task is spawned on `rt` and the
/// client is returned once the handshake completed.
///
/// # Errors
/// Those of [`Client::connect`].
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
/// own task on `rt`, with the default [`ConnectionLimits`] (a connection over them is closed
/// at once; see [`serve_tcp_with`]).
///
/// Errors of a single connection attempt (reset, aborted) are skipped; running out of file
/// descriptors or memory pauses accepting for 100 ms. Any other accept error is returned.
/// A connection's own errors end that connection only (they are logged at `debug`).
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(rt: D, listener: D::TcpListener) -> std::io::Result<()> {
/// // With mcp-tokio: `let rt = mcp_tokio::TokioRuntime::current();` and
/// // `let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;`.
/// let server = mcp_service::Server::builder("tcp-server", "1.0").build();
/// mcp_service::driver::serve_tcp(rt, server, listener).await // runs until accepting fails
/// # }
/// ```
///
/// # Errors
/// Never returns but with an error: the `io::Error` of `accept` when it is neither one
/// connection's failure nor a shortage of descriptors or memory (or when the listener
/// stopped accepting), and the driver's error when `listener` cannot be polled.
pub async fn serve_tcp<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
) -> io::Result<()> {
    serve_tcp_with(rt, server, listener, ConnectionLimits::default()).await
}

/// [`serve_tcp`] with explicit caps on concurrent connections. A connection over a cap is
/// closed as soon as it is accepted (a newline-delimited JSON-RPC stream has no way to say
/// why before the session starts).
///
/// # Errors
/// As [`serve_tcp`].
pub async fn serve_tcp_with<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    limits: ConnectionLimits,
) -> io::Result<()> {
    accept_loop(&rt, listener, limits, Refusal::Close, |stream, addr| {
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

/// The accept loop of every server: each accepted connection within `limits` is handed to
/// `serve` and the future it returns runs on its own task (counted against the limits until
/// it completes); one over them is refused as `refusal` says. See [`serve_tcp`] for the error
/// rules.
pub(crate) async fn accept_loop<D, F, Fut>(
    rt: &D,
    listener: D::TcpListener,
    limits: ConnectionLimits,
    refusal: Refusal,
    mut serve: F,
) -> io::Result<()>
where
    D: Driver,
    F: FnMut(D::TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let counts = std::sync::Arc::new(std::sync::Mutex::new(Counts::default()));
    let lingering = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut incoming = rt.incoming(listener)?;
    while let Some(accepted) = incoming.next().await {
        match accepted {
            Ok((stream, addr)) => match admit(&counts, &limits, addr.ip()) {
                Some(permit) => {
                    let conn = serve(stream, addr);
                    rt.spawn(Box::pin(async move {
                        conn.await;
                        drop(permit);
                    }));
                }
                None => {
                    tracing::debug!(target: "mcp", %addr, "connection refused: at the connection limit");
                    refuse(rt, stream, refusal, &lingering);
                }
            },
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

/// Caps on the connections one accept loop serves at once ([`serve_tcp_with`], and the HTTP
/// and WebSocket servers' options): in total and per peer IP address.
///
/// A connection over either cap is refused as soon as it is accepted, before any of its bytes
/// are read: the HTTP and WebSocket servers write a minimal
/// `HTTP/1.1 503 Service Unavailable` with `Retry-After: 1` and `Connection: close` (one
/// non-blocking write; a peer that cannot take it just sees the close), a raw TCP server
/// ([`serve_tcp`]) closes the connection (its byte stream has no way to say why).
///
/// The defaults:
///
/// - `max_connections`: 4096, and never more than three quarters of the process's limit on
///   open descriptors (`RLIMIT_NOFILE`, Unix) so that a flood of connections leaves the rest
///   of the server (its files, the listener, outgoing connections) descriptors to work with:
///   with the common soft limit of 1024 that is 768;
/// - `max_per_ip`: 256, so that one host cannot take all of them. Behind a reverse proxy every
///   connection comes from the proxy's address: raise `max_per_ip` to `max_connections`
///   there and let the proxy limit its clients.
///
/// ```
/// use mcp_service::driver::ConnectionLimits;
///
/// let limits = ConnectionLimits::default().max_connections(1000).max_per_ip(50);
/// assert_eq!((limits.max_connections, limits.max_per_ip), (1000, 50));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// The most connections served at once (default 4096, capped by the descriptor limit).
    pub max_connections: usize,
    /// The most connections served at once from one peer IP address (default 256): an IPv4
    /// address, or an IPv6 /64 prefix (what one host is commonly given).
    pub max_per_ip: usize,
}

/// The default [`ConnectionLimits::max_connections`] before the descriptor limit applies.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// The default [`ConnectionLimits::max_per_ip`].
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

impl Default for ConnectionLimits {
    fn default() -> Self {
        let max = descriptor_limit().map_or(DEFAULT_MAX_CONNECTIONS, |n| {
            DEFAULT_MAX_CONNECTIONS.min(n / 4 * 3).max(1)
        });
        ConnectionLimits {
            max_connections: max,
            max_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP.min(max),
        }
    }
}

impl ConnectionLimits {
    /// No caps (`usize::MAX` both): what the accept loops did before they had limits.
    pub fn unlimited() -> Self {
        ConnectionLimits {
            max_connections: usize::MAX,
            max_per_ip: usize::MAX,
        }
    }

    /// Sets the most connections served at once.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n;
        self
    }

    /// Sets the most connections served at once from one peer IP address.
    pub fn max_per_ip(mut self, n: usize) -> Self {
        self.max_per_ip = n;
        self
    }
}

/// The soft limit on open descriptors, when the system has one and says it.
fn descriptor_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: `getrlimit` only writes the struct it is given.
        let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            return Some(usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX));
        }
        None
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// How an accept loop refuses a connection over its [`ConnectionLimits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Close it.
    Close,
    /// Write a minimal HTTP 503, then close it.
    #[cfg_attr(not(any(feature = "http-server", feature = "ws")), allow(dead_code))]
    Http503,
}

/// The reply of [`Refusal::Http503`].
const BUSY_503: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 31\r\n\r\nserver at its connection limit\n";

/// How many refused connections may linger at once (reading what the peer sent so that the
/// close is a FIN, not a reset that could discard the 503 before the peer reads it).
const MAX_LINGERING: usize = 64;
/// How long a refused connection lingers at most.
const LINGER: Duration = Duration::from_millis(500);

/// The connections an accept loop is serving, in total and per peer address.
#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_ip: std::collections::HashMap<std::net::IpAddr, usize>,
}

/// One connection's place in its accept loop's [`Counts`], given back on drop.
struct Permit {
    counts: std::sync::Arc<std::sync::Mutex<Counts>>,
    ip: std::net::IpAddr,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut c = lock(&self.counts);
        c.total = c.total.saturating_sub(1);
        if let std::collections::hash_map::Entry::Occupied(mut e) = c.per_ip.entry(self.ip) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A permit for a connection from `ip`, unless that goes over `limits`.
fn admit(
    counts: &std::sync::Arc<std::sync::Mutex<Counts>>,
    limits: &ConnectionLimits,
    ip: std::net::IpAddr,
) -> Option<Permit> {
    let ip = peer_key(ip);
    let mut c = lock(counts);
    let from_ip = c.per_ip.get(&ip).copied().unwrap_or(0);
    if c.total >= limits.max_connections || from_ip >= limits.max_per_ip {
        return None;
    }
    c.total += 1;
    *c.per_ip.entry(ip).or_insert(0) += 1;
    Some(Permit {
        counts: counts.clone(),
        ip,
    })
}

/// What [`ConnectionLimits::max_per_ip`] counts by: an IPv4 address (IPv4-mapped IPv6 ones
/// too), or the /64 prefix of an IPv6 address (one host is commonly given a whole /64).
fn peer_key(ip: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv6Addr};
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// Refuses `stream` as `how` says, never blocking the accept loop: the 503 is one
/// non-blocking write (a fresh socket's send buffer takes it), and lingering to read what
/// the peer sent happens on a task only while few refusals linger.
fn refuse<D: Driver>(
    rt: &D,
    mut stream: D::TcpStream,
    how: Refusal,
    lingering: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::Ordering;
    if how == Refusal::Close {
        return;
    }
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let written = matches!(
        Pin::new(&mut stream).poll_write(&mut cx, BUSY_503),
        Poll::Ready(Ok(n)) if n == BUSY_503.len()
    );
    if !written {
        return;
    }
    let _ = Pin::new(&mut stream).poll_flush(&mut cx);
    if lingering.fetch_add(1, Ordering::AcqRel) >= MAX_LINGERING {
        lingering.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let lingering = lingering.clone();
    let timer = sleep_for(rt, LINGER);
    rt.spawn(Box::pin(async move {
        let drain = async {
            let _ = futures_util::AsyncWriteExt::close(&mut stream).await;
            let mut buf = [0u8; 1024];
            while let Ok(n) = futures_util::AsyncReadExt::read(&mut stream, &mut buf).await {
                if n == 0 {
                    break;
                }
            }
        };
        futures_util::future::select(Box::pin(drain), timer).await;
        lingering.fetch_sub(1, Ordering::AcqRel);
    }));
}

/// An in-process client/server pair over an in-memory pipe ([`memory::duplex`]: no socket,
/// no system call): the server side is spawned on `rt`, and this resolves with the connected
/// client. The server side ends when the client closes.
///
/// ```
/// use mcp_service::schema::Tool;
/// use mcp_service::server::{Server, ToolContext, schema_of};
/// use mcp_service::sim::Sim;
/// use mcp_service::ClientOptions;
///
/// let server = Server::builder("echo", "1.0")
///     .tool(
///         Tool::new("echo", schema_of(serde_json::json!({"type": "object"}))),
///         |args: serde_json::Value, _cx: ToolContext| async move { Ok(args["text"].to_string()) },
///     )
///     .build();
/// let sim = Sim::new(); // or `mcp_tokio::TokioRuntime::current()`, …
/// let rt = sim.runtime();
/// let result = sim
///     .block_on(async move {
///         let client = mcp_service::driver::memory_pair(rt, server, ClientOptions::default()).await?;
///         client.call_tool("echo", serde_json::json!({"text": "hi"})).await
///     })
///     .expect("nothing left waiting")?;
/// assert_eq!(result.content[0].as_text(), Some("\"hi\""));
/// # Ok::<(), mcp_service::Error>(())
/// ```
///
/// # Errors
/// Those of [`Client::connect`]: in memory, only a server that shares no protocol version
/// with `options` ([`ErrorKind::ProtocolVersionMismatch`](crate::ErrorKind::ProtocolVersionMismatch),
/// -32022) or one that refused the handshake.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_in_total_and_per_address() {
        let counts = std::sync::Arc::new(std::sync::Mutex::new(Counts::default()));
        let limits = ConnectionLimits::default().max_connections(3).max_per_ip(2);
        let a: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        let b: std::net::IpAddr = "::ffff:10.0.0.2".parse().unwrap();
        let c: std::net::IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let c2: std::net::IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let p1 = admit(&counts, &limits, a).unwrap();
        let _p2 = admit(&counts, &limits, a).unwrap();
        assert!(admit(&counts, &limits, a).is_none(), "per address");
        let _p3 = admit(&counts, &limits, b).unwrap();
        assert!(admit(&counts, &limits, c).is_none(), "in total");
        drop(p1);
        let _p4 = admit(&counts, &limits, c).unwrap();
        assert_eq!(lock(&counts).total, 3);
        // One IPv6 /64 is one peer; an IPv4-mapped address is its IPv4 one.
        assert_eq!(peer_key(c), peer_key(c2));
        assert_eq!(peer_key(b), "10.0.0.2".parse::<std::net::IpAddr>().unwrap());
    }

    #[test]
    fn default_caps_leave_descriptors_over() {
        let limits = ConnectionLimits::default();
        assert!(limits.max_connections <= DEFAULT_MAX_CONNECTIONS);
        assert!(limits.max_per_ip <= limits.max_connections);
        if let Some(n) = descriptor_limit() {
            assert!(limits.max_connections <= (n / 4 * 3).max(1));
        }
    }
}
