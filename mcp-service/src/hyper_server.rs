//! Streamable HTTP on hyper, runtime-neutral: the glue between an HTTP server (hyper, or any
//! tower stack on top of it) and an [`HttpEngine`].
//!
//! - [`respond`] turns one `http::Request` (any [`http_body::Body`]) into the engine's reply:
//!   it reads the body up to the endpoint's limit (one byte more makes the endpoint answer
//!   413), submits it through an [`HttpHandle`] and returns a [`ReplyBody`] that streams SSE
//!   chunks as the engine produces them;
//! - [`HyperService`] is that function as a cloneable hyper [`Service`](hyper::service::Service);
//! - [`serve_connection`] / [`serve_connection_with`] serve one HTTP/1.1 connection (any IO
//!   implementing hyper's `rt::Read + rt::Write`: [`FuturesIo`](crate::hyper_io::FuturesIo),
//!   hyper-util's `TokioIo`, a TLS stream) with the time limits of [`HttpServerOptions`] on a
//!   [`Runtime`], each request carrying the peer's [`RemoteAddr`].
//!
//! # Time limits on the wire
//!
//! A client that opens connections and then sends slowly, or not at all, must not hold the
//! server's memory and descriptors: [`HttpServerOptions`] bounds every phase of a connection
//! (defaults in parentheses):
//!
//! | phase | limit | what happens |
//! | --- | --- | --- |
//! | headers of a request (from the connection's start, or from the first byte of a later request) | `header_read_timeout` (10 s) | the connection is closed |
//! | between requests of a keep-alive connection | `keep_alive_timeout` (60 s) | the connection is closed |
//! | request body, whole | `body.deadline` (30 s) | `408 Request Timeout`, `Connection: close` |
//! | request body, rate | `body.min_bytes_per_sec` (8 KiB/s) after `body.rate_grace` (5 s) | `408`, `Connection: close` |
//! | connections at once | `connections` ([`ConnectionLimits`](crate::driver::ConnectionLimits): 4096, 256 per IP) | `503`, `Retry-After: 1`, closed |
//!
//! A reply (an SSE stream that stays open for minutes) is never timed: only what the client
//! owes the server is.
//!
//! The [`Endpoint`](mcp_proto::http::Endpoint) routes by path itself (`EndpointConfig::path`,
//! other paths get 404), so every request is passed through. This module owns no sockets and
//! no accept loop: those are the drivers'.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use futures_core::Stream;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::server::conn::http1;

use crate::driver::WriteStall;
use crate::http_engine::{HttpBody, HttpEngine, HttpHandle, SseStream};
use crate::hyper_io::RuntimeTimer;
use crate::runtime::{BoxFuture, Runtime};
use crate::server::Server;

#[cfg(feature = "http2")]
mod h2;

/// The address of the peer an HTTP request came from, in the request's extensions: the
/// servers of this crate ([`serve_connection`], and so `serve_http`) insert it into every
/// request they read, and [`respond`] hands its IP to the endpoint as
/// [`PeerAddr`](mcp_proto::http::PeerAddr) (what the per-peer session share,
/// [`EndpointConfig::max_sessions_per_peer`](mcp_proto::http::EndpointConfig::max_sessions_per_peer),
/// counts by).
///
/// ```
/// use mcp_service::hyper_server::RemoteAddr;
///
/// let mut req = http::Request::new(());
/// req.extensions_mut().insert(RemoteAddr("127.0.0.1:5000".parse().unwrap()));
/// assert_eq!(req.extensions().get::<RemoteAddr>().unwrap().0.port(), 5000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RemoteAddr(pub std::net::SocketAddr);

/// The default [`HttpServerOptions::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`HttpServerOptions::keep_alive_timeout`].
pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`BodyLimits::deadline`].
pub const DEFAULT_BODY_DEADLINE: Duration = Duration::from_secs(30);
/// The default [`BodyLimits::min_bytes_per_sec`].
pub const DEFAULT_BODY_MIN_RATE: u64 = 8 * 1024;
/// The default [`BodyLimits::rate_grace`].
pub const DEFAULT_BODY_RATE_GRACE: Duration = Duration::from_secs(5);

/// How long a request body may take to arrive: a whole-body deadline and a minimum rate.
/// A body over either is answered `408 Request Timeout` with `Connection: close` (what was
/// read of it is dropped, and the connection closes).
///
/// The defaults — 30 s for the whole body, and at least 8 KiB/s on average once 5 s have
/// passed — let the endpoint's largest body (4 MiB by default) arrive at about 140 KB/s,
/// far below any working link, while a client sending one byte now and then is cut off after
/// 5 s instead of holding the buffer of a body for good.
///
/// ```
/// use std::time::Duration;
/// use mcp_service::hyper_server::BodyLimits;
///
/// let limits = BodyLimits::default()
///     .deadline(Some(Duration::from_secs(60)))
///     .min_bytes_per_sec(1024);
/// assert_eq!(limits.rate_grace, Duration::from_secs(5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BodyLimits {
    /// The most time from the start of reading a body to its end (`None`: no deadline).
    pub deadline: Option<Duration>,
    /// The least average rate in bytes per second, checked once `rate_grace` has passed
    /// (0: no minimum).
    pub min_bytes_per_sec: u64,
    /// How long a body may arrive at any rate before `min_bytes_per_sec` applies.
    pub rate_grace: Duration,
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits {
            deadline: Some(DEFAULT_BODY_DEADLINE),
            min_bytes_per_sec: DEFAULT_BODY_MIN_RATE,
            rate_grace: DEFAULT_BODY_RATE_GRACE,
        }
    }
}

impl BodyLimits {
    /// No time limits on bodies.
    pub fn unlimited() -> Self {
        BodyLimits {
            deadline: None,
            min_bytes_per_sec: 0,
            rate_grace: Duration::ZERO,
        }
    }

    /// Sets the whole-body deadline.
    pub fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets the least average rate (0: none).
    pub fn min_bytes_per_sec(mut self, rate: u64) -> Self {
        self.min_bytes_per_sec = rate;
        self
    }

    /// Sets how long a body may arrive at any rate.
    pub fn rate_grace(mut self, grace: Duration) -> Self {
        self.rate_grace = grace;
        self
    }

    /// When reading a body that started at `start` and holds `read` bytes becomes too slow.
    fn deadline_at(&self, start: mcp_proto::Instant, read: usize) -> Option<mcp_proto::Instant> {
        let whole = self.deadline.map(|d| start + micros(d));
        let rate = (self.min_bytes_per_sec > 0).then(|| {
            let earned = u64::try_from(read)
                .unwrap_or(u64::MAX)
                .saturating_mul(1_000_000)
                / self.min_bytes_per_sec;
            start
                + mcp_proto::Duration::from_micros(earned.max(micros(self.rate_grace).as_micros()))
        });
        match (whole, rate) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

fn micros(d: Duration) -> mcp_proto::Duration {
    mcp_proto::Duration::from_micros(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The time limits of an HTTP server's connections ([`serve_connection_with`], and the
/// drivers' `serve_http_with`); see the [module documentation](self#time-limits-on-the-wire)
/// for what each bounds.
///
/// ```
/// use std::time::Duration;
/// use mcp_service::driver::ConnectionLimits;
/// use mcp_service::hyper_server::{BodyLimits, HttpServerOptions};
///
/// let options = HttpServerOptions::default()
///     .header_read_timeout(Some(Duration::from_secs(5)))
///     .keep_alive_timeout(Some(Duration::from_secs(30)))
///     .body(BodyLimits::default().deadline(Some(Duration::from_secs(10))))
///     .connections(ConnectionLimits::default().max_per_ip(64));
/// assert_eq!(options.connections.max_per_ip, 64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpServerOptions {
    /// How long a request's headers may take (default 10 s): from the connection's start for
    /// its first request, from the first byte of a later one. `None`: no limit.
    ///
    /// 10 s is ample for a client's few hundred bytes of headers and short enough that a
    /// client holding connections open without finishing a request gives them back soon.
    pub header_read_timeout: Option<Duration>,
    /// How long a keep-alive connection may stay idle, no request in progress, before it is
    /// closed (default 60 s; `None`: no limit). Long enough for an MCP client's pooled
    /// connection between calls a user makes by hand, short enough that idle connections do
    /// not pile up. (An open reply stream is a request in progress: never idle.)
    pub keep_alive_timeout: Option<Duration>,
    /// How long request bodies may take ([`BodyLimits`]).
    pub body: BodyLimits,
    /// Caps on concurrent connections, enforced by the accept loop of `serve_http`.
    pub connections: crate::driver::ConnectionLimits,
    /// How long a write may wait for a client that reads nothing (default 60 s; `None`: no
    /// limit): a reply or SSE stream whose client takes not one byte for this long closes
    /// the connection, giving back its place under the connection caps. (The client resumes
    /// a closed SSE stream from the event store.)
    pub write_timeout: Option<Duration>,
    /// How many engines serve the endpoint (default: [`default_shards`], one per core), each
    /// owning its share of the sessions: see
    /// [`HttpEngine::sharded`](crate::http_engine::HttpEngine::sharded).
    pub shards: usize,
    /// Whether HTTP/2 is served beside HTTP/1.1 (feature `http2`; default on with it): each
    /// plain connection starting with the HTTP/2 preface (prior-knowledge h2c) is served as
    /// HTTP/2, and TLS offers `h2` by ALPN. On HTTP/2 the header and keep-alive timeouts
    /// apply up to the preface only; streams are bounded by hyper's HTTP/2 defaults.
    pub http2: bool,
    /// The most an HTTP/1.1 connection's read buffer grows to (default
    /// [`DEFAULT_READ_BUFFER`], 72 KiB; at least 8 KiB), which is also the largest request
    /// head accepted (a larger one is answered 431).
    ///
    /// hyper grows a connection's buffer while reads fill it, and keeps it, at that size, as
    /// long as the connection lives (it reads into it while the connection waits for its next
    /// request). The default holds a 64 KiB message and its head in one read (such a body
    /// reaches the endpoint without a copy) and bounds what each busy connection keeps: with
    /// hyper's own cap (about 400 KiB), a thousand connections making 64 KiB calls held
    /// 290 MiB of buffers at their peak, with this one 220 MiB. Larger bodies are read in
    /// pieces of this size.
    pub read_buffer: usize,
}

/// The default [`HttpServerOptions::read_buffer`]: a 64 KiB message and its head.
pub const DEFAULT_READ_BUFFER: usize = 72 * 1024;

/// The least [`HttpServerOptions::read_buffer`] hyper takes.
const MIN_READ_BUFFER: usize = 8 * 1024;

/// The default number of engines of an HTTP endpoint ([`HttpServerOptions::shards`]): one per
/// core the process may use (`std::thread::available_parallelism`), at most
/// [`MAX_SHARDS`](crate::http_engine::MAX_SHARDS).
pub fn default_shards() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(crate::http_engine::MAX_SHARDS)
}

/// The default [`HttpServerOptions::write_timeout`].
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for HttpServerOptions {
    fn default() -> Self {
        HttpServerOptions {
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            keep_alive_timeout: Some(DEFAULT_KEEP_ALIVE_TIMEOUT),
            body: BodyLimits::default(),
            connections: crate::driver::ConnectionLimits::default(),
            shards: default_shards(),
            http2: cfg!(feature = "http2"),
            read_buffer: DEFAULT_READ_BUFFER,
        }
    }
}

impl HttpServerOptions {
    /// Sets how many engines serve the endpoint (at least 1).
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = shards.max(1);
        self
    }

    /// Sets how long a request's headers may take.
    pub fn header_read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets how long a write may wait for a client that reads nothing.
    pub fn write_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Sets how long a keep-alive connection may stay idle.
    pub fn keep_alive_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.keep_alive_timeout = timeout;
        self
    }

    /// Sets the limits on request bodies.
    pub fn body(mut self, body: BodyLimits) -> Self {
        self.body = body;
        self
    }

    /// Sets the caps on concurrent connections.
    pub fn connections(mut self, limits: crate::driver::ConnectionLimits) -> Self {
        self.connections = limits;
        self
    }

    /// Sets the most a connection's read buffer grows to (at least 8 KiB), also the largest
    /// request head accepted.
    pub fn read_buffer(mut self, bytes: usize) -> Self {
        self.read_buffer = bytes.max(MIN_READ_BUFFER);
        self
    }

    /// Sets whether HTTP/2 is served beside HTTP/1.1 (without the feature `http2`, never).
    pub fn http2(mut self, enabled: bool) -> Self {
        self.http2 = enabled && cfg!(feature = "http2");
        self
    }
}

/// A runtime's clock and timers behind a pointer, for what is not generic over the runtime.
trait Clocked: Send + Sync {
    fn now(&self) -> mcp_proto::Instant;
    fn sleep_until(&self, at: mcp_proto::Instant) -> BoxFuture<()>;
}

impl<R: Runtime> Clocked for R {
    fn now(&self) -> mcp_proto::Instant {
        Runtime::now(self)
    }
    fn sleep_until(&self, at: mcp_proto::Instant) -> BoxFuture<()> {
        Runtime::sleep_until(self, at)
    }
}

/// Body limits with the clock that times them.
#[derive(Clone)]
struct BodyTimer {
    clock: Arc<dyn Clocked>,
    limits: BodyLimits,
}

impl fmt::Debug for BodyTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BodyTimer").field(&self.limits).finish()
    }
}

/// The error type request bodies may fail with.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The body of a reply from the MCP endpoint: empty, complete bytes, or a stream of SSE chunks
/// (or a JSON body that waits for responses). Dropping a streaming body before its end tells
/// the engine the client went away.
pub struct ReplyBody {
    kind: Kind,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    /// The pieces still to send, and their length.
    Parts(std::vec::IntoIter<Vec<u8>>, u64),
    Stream(SseStream),
}

impl ReplyBody {
    /// An empty body.
    pub fn empty() -> Self {
        ReplyBody { kind: Kind::Empty }
    }
}

impl From<HttpBody> for ReplyBody {
    fn from(body: HttpBody) -> Self {
        let kind = match body {
            HttpBody::Empty => Kind::Empty,
            HttpBody::Full(b) if b.is_empty() => Kind::Empty,
            HttpBody::Full(b) => Kind::Full(Some(Bytes::from(b))),
            HttpBody::Parts(p) => {
                let len = p.iter().map(|p| p.len() as u64).sum();
                Kind::Parts(p.into_iter(), len)
            }
            HttpBody::Stream(s) => Kind::Stream(s),
        };
        ReplyBody { kind }
    }
}

impl fmt::Debug for ReplyBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Empty => f.write_str("ReplyBody::Empty"),
            Kind::Full(b) => write!(
                f,
                "ReplyBody::Full({} bytes)",
                b.as_ref().map_or(0, Bytes::len)
            ),
            Kind::Parts(_, len) => write!(f, "ReplyBody::Parts({len} bytes)"),
            Kind::Stream(s) => f.debug_tuple("ReplyBody::Stream").field(s).finish(),
        }
    }
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Parts(parts, len) => {
                // (An empty piece would read as the end of the body to some consumers.)
                let part = parts.find(|p| !p.is_empty());
                *len -= part.as_ref().map_or(0, |p| p.len() as u64);
                Poll::Ready(part.map(|p| Ok(Frame::data(Bytes::from(p)))))
            }
            Kind::Stream(s) => match Pin::new(s).poll_next(cx) {
                Poll::Ready(Some(chunk)) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk))))),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(
            self.kind,
            Kind::Empty | Kind::Full(None) | Kind::Parts(_, 0)
        )
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Parts(_, len) => SizeHint::with_exact(*len),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

fn plain(status: StatusCode) -> Response<ReplyBody> {
    let mut r = Response::new(ReplyBody::empty());
    *r.status_mut() = status;
    r
}

/// Why a body was not read.
enum ReadError {
    /// The body failed (the connection broke, a malformed chunk).
    Body(BoxError),
    /// The body came too slowly for its [`BodyLimits`].
    TooSlow,
}

/// Reads `body` until its end or until it holds more than `max` bytes, whichever comes first:
/// an oversize body is returned cut at `max + 1` bytes (enough for the endpoint's 413).
#[cfg(test)]
async fn read_bounded<B>(body: B, max: usize) -> Result<Bytes, BoxError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    read_timed(body, max, None).await.map_err(|e| match e {
        ReadError::Body(e) => e,
        ReadError::TooSlow => "too slow".into(),
    })
}

/// [`read_bounded`], failing with [`ReadError::TooSlow`] when `timer`'s limits say so.
async fn read_timed<B>(body: B, max: usize, timer: Option<&BodyTimer>) -> Result<Bytes, ReadError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let cap = max.saturating_add(1);
    let hint = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX);
    // A declared length is taken at its word up to 1 MiB (one allocation of the body's size,
    // no growth and copy as it arrives); a larger one grows as its bytes come. The pages of
    // a reservation no byte reached are never touched, so a length that lies costs address
    // space, not memory.
    let reserve = hint.min(cap).min(1024 * 1024);
    // A body that comes in one frame (most do) is kept as it came, without a copy (for
    // hyper's, a `Bytes` of its read buffer); one in several frames is joined in `out`.
    let mut first: Option<Bytes> = None;
    let mut out = Vec::new();
    let mut body = std::pin::pin!(body);
    let start = timer.map(|t| t.clock.now());
    // The armed timer fires no later than the body becomes too slow; when it fires, the
    // deadline is worked out again from what arrived meanwhile (no re-arming per frame).
    let arm = |read: usize| -> Option<BoxFuture<()>> {
        let t = timer?;
        let at = t.limits.deadline_at(start?, read)?;
        Some(t.clock.sleep_until(at))
    };
    // Armed only once the body makes us wait: one that already arrived whole (most do) costs
    // no timer.
    let mut sleep: Option<BoxFuture<()>> = None;
    // Past the cap, the rest of the body is read and dropped, up to `DRAIN` bytes: a client
    // still writing it then reads the 413 instead of a reset connection.
    let mut dropped = 0usize;
    let held =
        |out: &Vec<u8>, first: &Option<Bytes>| out.len() + first.as_ref().map_or(0, Bytes::len);
    while held(&out, &first) < cap || dropped < DRAIN {
        let read = held(&out, &first) + dropped;
        let next = match sleep.as_mut() {
            None if timer.is_none() => body.frame().await,
            None => {
                if let Some(frame) = futures_util::FutureExt::now_or_never(body.frame()) {
                    frame
                } else {
                    sleep = arm(read);
                    if sleep.is_some() {
                        continue;
                    }
                    body.frame().await // no limit applies
                }
            }
            Some(s) => match futures_util::future::select(body.frame(), s).await {
                futures_util::future::Either::Left((frame, _)) => frame,
                futures_util::future::Either::Right(((), _)) => {
                    if let (Some(t), Some(start)) = (timer, start)
                        && t.limits
                            .deadline_at(start, read)
                            .is_some_and(|at| t.clock.now() >= at)
                    {
                        if held(&out, &first) >= cap {
                            break; // too slow to drain: answered 413 all the same
                        }
                        return Err(ReadError::TooSlow);
                    }
                    sleep = arm(read);
                    continue;
                }
            },
        };
        let Some(frame) = next else {
            break;
        };
        let frame = match frame {
            Ok(frame) => frame,
            Err(_) if held(&out, &first) >= cap => break,
            Err(e) => return Err(ReadError::Body(e.into())),
        };
        if let Ok(mut data) = frame.into_data() {
            let n = data.remaining();
            if n == 0 {
                continue;
            }
            if first.is_none() && out.is_empty() && n < cap {
                first = Some(data.copy_to_bytes(n));
                continue;
            }
            if let Some(f) = first.take() {
                out.reserve(reserve.max(f.len() + n.min(cap)));
                out.extend_from_slice(&f);
            }
            while data.has_remaining() && out.len() < cap {
                let chunk = data.chunk();
                let take = chunk.len().min(cap - out.len());
                out.extend_from_slice(&chunk[..take]);
                data.advance(take);
            }
            dropped = dropped.saturating_add(data.remaining());
        }
    }
    Ok(match first {
        Some(f) => f,
        None => Bytes::from(out),
    })
}

/// How much of an unauthenticated POST is read to put its request's id in the refusal.
#[cfg(feature = "resource-server")]
const REFUSED_BODY: usize = 64 * 1024;

/// How much of an oversize body is read past the limit (and dropped) before the 413.
const DRAIN: usize = 1 << 20;

/// Answers one request to the MCP endpoint through `handle`: reads the body (at most the
/// endpoint's limit plus one byte), hands it to the engine and returns its reply.
///
/// A body that fails to arrive is answered 400; a stopped engine 503. A [`RemoteAddr`] in
/// the request's extensions names the client to the endpoint. The body is not timed:
/// [`respond_with`] (what [`HyperService`] uses) also bounds how long it may take.
pub async fn respond<B>(handle: &HttpHandle, req: Request<B>) -> Response<ReplyBody>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    respond_timed(handle, req, None).await
}

/// [`respond`] with the body read within `limits` on `rt`'s clock: a body over them is
/// answered `408 Request Timeout` with `Connection: close`.
pub async fn respond_with<R, B>(
    rt: &R,
    handle: &HttpHandle,
    req: Request<B>,
    limits: BodyLimits,
) -> Response<ReplyBody>
where
    R: Runtime,
    B: Body,
    B::Error: Into<BoxError>,
{
    let timer = BodyTimer {
        clock: Arc::new(rt.clone()),
        limits,
    };
    respond_timed(handle, req, Some(&timer)).await
}

async fn respond_timed<B>(
    handle: &HttpHandle,
    req: Request<B>,
    timer: Option<&BodyTimer>,
) -> Response<ReplyBody>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    if let Some(RemoteAddr(addr)) = parts.extensions.get::<RemoteAddr>().copied() {
        parts
            .extensions
            .insert(mcp_proto::http::PeerAddr(addr.ip()));
    }
    // The server's resource server: its metadata document, then the token, before the body.
    #[cfg(feature = "resource-server")]
    if let Some(guard) = handle.guard() {
        if let Some(r) = guard.metadata(&parts) {
            return r.map(|b| ReplyBody::from(HttpBody::Full(b)));
        }
        if let Err(r) = guard.authenticate(&mut parts).await {
            let mut r = *r;
            if parts.method == http::Method::POST
                && let Ok(bytes) =
                    read_timed(body, handle.max_body_size().min(REFUSED_BODY), timer).await
            {
                // The request's id in the refusal (a JSON-RPC error beside the challenge);
                // an unauthenticated client gets little of the server's reading.
                r = guard.with_rpc_error(r, &bytes);
            }
            let mut r = r.map(|b| ReplyBody::from(HttpBody::Full(b)));
            handle.decorate_reply(&parts.headers, r.headers_mut());
            return r;
        }
    }
    let bytes = match read_timed(body, handle.max_body_size(), timer).await {
        Ok(b) => b,
        Err(ReadError::Body(e)) => {
            tracing::debug!(target: "mcp", error = %e, "HTTP request body failed");
            let mut r = plain(StatusCode::BAD_REQUEST);
            handle.decorate_reply(&parts.headers, r.headers_mut());
            return r;
        }
        Err(ReadError::TooSlow) => {
            let peer = parts.extensions.get::<RemoteAddr>().map(|a| a.0);
            tracing::debug!(target: "mcp", ?peer, "HTTP request body too slow; closing");
            let mut r = Response::new(ReplyBody {
                kind: Kind::Full(Some(Bytes::from_static(b"request body too slow\n"))),
            });
            *r.status_mut() = StatusCode::REQUEST_TIMEOUT;
            let h = r.headers_mut();
            h.insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
            h.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain"),
            );
            handle.decorate_reply(&parts.headers, h);
            return r;
        }
    };
    // The scopes of the calls the body carries (the step-up 403 comes before any session
    // sees them).
    #[cfg(feature = "resource-server")]
    if let Some(guard) = handle.guard()
        && let Err(r) = guard.authorize_body(&parts, &bytes)
    {
        let r = guard.with_rpc_error(*r, &bytes);
        let mut r = r.map(|b| ReplyBody::from(HttpBody::Full(b)));
        handle.decorate_reply(&parts.headers, r.headers_mut());
        return r;
    }
    // For the 503 below, whose request is gone by then: its origin (a cheap clone).
    let origin = handle
        .has_cors()
        .then(|| parts.headers.get(http::header::ORIGIN).cloned())
        .flatten();
    match handle.request(parts, bytes).await {
        Ok(resp) => resp.map(ReplyBody::from),
        Err(e) => {
            tracing::debug!(target: "mcp", error = %e, "HTTP request not served");
            let mut r = plain(StatusCode::SERVICE_UNAVAILABLE);
            if let Some(origin) = origin {
                let mut request = http::HeaderMap::new();
                request.insert(http::header::ORIGIN, origin);
                handle.decorate_reply(&request, r.headers_mut());
            }
            r
        }
    }
}

/// The MCP endpoint as a hyper [`Service`](hyper::service::Service): every request goes to
/// [`respond`]. Cheap to clone; the engine stops once every clone (and every other
/// [`HttpHandle`]) is dropped.
///
/// Request bodies are timed by the service's [`BodyLimits`]: the defaults for a service made
/// by [`spawn`](Self::spawn), none for one made by [`new`](Self::new) (which has no clock),
/// others set with [`body_limits`](Self::body_limits).
#[derive(Clone, Debug)]
pub struct HyperService {
    handle: HttpHandle,
    body: Option<BodyTimer>,
}

impl HyperService {
    /// A service submitting requests through `handle` (bodies not timed).
    pub fn new(handle: HttpHandle) -> Self {
        HyperService { handle, body: None }
    }

    /// Spawns `server`'s HTTP engine for `config` on `rt` and returns the service in front of
    /// it, request bodies timed with the default [`BodyLimits`] on `rt`.
    ///
    /// The endpoint is served by one engine per core ([`default_shards`]): see
    /// [`spawn_shards`](Self::spawn_shards).
    pub fn spawn<R: Runtime>(
        rt: &R,
        server: &Server,
        config: mcp_proto::http::EndpointConfig,
    ) -> Self {
        Self::spawn_shards(rt, server, config, default_shards())
    }

    /// [`spawn`](Self::spawn) with `shards` engines (at least 1) sharing the endpoint's
    /// sessions ([`Server::http_shards`]), each spawned on `rt`.
    pub fn spawn_shards<R: Runtime>(
        rt: &R,
        server: &Server,
        config: mcp_proto::http::EndpointConfig,
        shards: usize,
    ) -> Self {
        let (handle, engines) = server.http_shards(rt.clone(), config, shards);
        for engine in engines {
            let engine: HttpEngine<R> = engine;
            rt.spawn(Box::pin(engine));
        }
        HyperService::new(handle).body_limits(rt, BodyLimits::default())
    }

    /// Times request bodies with `limits` on `rt`'s clock (see [`respond_with`]).
    pub fn body_limits<R: Runtime>(mut self, rt: &R, limits: BodyLimits) -> Self {
        self.body = Some(BodyTimer {
            clock: Arc::new(rt.clone()),
            limits,
        });
        self
    }

    /// The handle requests are submitted through.
    pub fn handle(&self) -> &HttpHandle {
        &self.handle
    }
}

/// The future of [`HyperService`]'s `call`.
pub type ReplyFuture =
    Pin<Box<dyn Future<Output = Result<Response<ReplyBody>, Infallible>> + Send>>;

impl<B> hyper::service::Service<Request<B>> for HyperService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ReplyBody>;
    type Error = Infallible;
    type Future = ReplyFuture;

    fn call(&self, req: Request<B>) -> ReplyFuture {
        let handle = self.handle.clone();
        let body = self.body.clone();
        Box::pin(async move { Ok(respond_timed(&handle, req, body.as_ref()).await) })
    }
}

/// A service for one connection (a [`HyperService`]): every request gets the peer's
/// [`RemoteAddr`].
#[derive(Clone, Debug)]
struct ConnService<S> {
    inner: S,
    addr: std::net::SocketAddr,
}

impl<S, B> hyper::service::Service<Request<B>> for ConnService<S>
where
    S: hyper::service::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, mut req: Request<B>) -> S::Future {
        req.extensions_mut().insert(RemoteAddr(self.addr));
        self.inner.call(req)
    }
}

/// Serves one HTTP/1.1 connection from the peer at `addr` on `io` with `service`, with the
/// default [`HttpServerOptions`] timed on `rt`, until the peer closes it or a limit closes it.
/// Errors are the connection's (a peer that vanished mid-request, malformed HTTP, a header
/// timeout); they concern only this connection.
///
/// # Errors
/// hyper's error for this connection: the peer closed it in the middle of a request or
/// reply, sent malformed HTTP, sent no complete head within the header timeout (10 s), or
/// read nothing of a reply for the write timeout; or an I/O error of `io`.
pub async fn serve_connection<R, I>(
    rt: R,
    service: HyperService,
    io: I,
    addr: std::net::SocketAddr,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    serve_connection_with(rt, service, io, addr, &HttpServerOptions::default()).await
}

/// [`serve_connection`] with `options`' header and keep-alive timeouts (its body limits are
/// the service's, see [`HyperService::body_limits`]; its connection caps the accept loop's).
/// With [`HttpServerOptions::http2`] (feature `http2`), a connection opening with the HTTP/2
/// preface is served as HTTP/2 (prior-knowledge h2c).
///
/// # Errors
/// As [`serve_connection`], with `options`' timeouts.
pub async fn serve_connection_with<R, I>(
    rt: R,
    service: HyperService,
    io: I,
    addr: std::net::SocketAddr,
    options: &HttpServerOptions,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    #[cfg(feature = "http2")]
    if options.http2 {
        return h2::serve_detected(rt, service, io, addr, options).await;
    }
    serve_http1(rt, service, io, addr, options).await
}

/// Serves a connection whose protocol TLS negotiated: HTTP/2 when ALPN chose `h2`, else as
/// [`serve_connection_with`].
#[cfg(feature = "tls")]
pub(crate) async fn serve_negotiated<R, I>(
    rt: R,
    service: HyperService,
    io: I,
    addr: std::net::SocketAddr,
    options: &HttpServerOptions,
    h2: bool,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    #[cfg(feature = "http2")]
    if h2 {
        return h2::serve_h2(rt, service, io, addr, options).await;
    }
    let _ = h2;
    serve_connection_with(rt, service, io, addr, options).await
}

/// One HTTP/1.1 connection.
async fn serve_http1<R, I>(
    rt: R,
    service: HyperService,
    io: I,
    addr: std::net::SocketAddr,
    options: &HttpServerOptions,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = ConnService {
        inner: service,
        addr,
    };
    let mut builder = http1::Builder::new();
    builder.max_buf_size(options.read_buffer.max(MIN_READ_BUFFER));
    let stall = options.write_timeout.map(|timeout| {
        WriteStall::new(
            &rt,
            timeout,
            "the HTTP client read nothing of the reply for the write timeout",
        )
    });
    if options.header_read_timeout.is_none() && options.keep_alive_timeout.is_none() {
        builder
            .timer(RuntimeTimer::new(rt))
            .header_read_timeout(None);
        let io = CountingIo {
            inner: io,
            read: Arc::new(AtomicU64::new(0)),
            stall,
        };
        return builder.serve_connection(io, service).await;
    }
    let read = Arc::new(AtomicU64::new(0));
    let timer = HeadTimer {
        rt,
        read: read.clone(),
        started: Arc::new(AtomicBool::new(false)),
        header: options.header_read_timeout,
        idle: options.keep_alive_timeout,
    };
    // hyper arms its header-read timer when the connection is ready for a request (at its
    // start, and again as soon as a response is complete: hyper 1.x has no separate idle
    // timer), with the duration given here; `HeadTimer` ignores that duration and works out
    // the deadline itself, telling idle time from a request's headers by the bytes read.
    builder
        .timer(timer)
        .header_read_timeout(Some(Duration::from_secs(1)));
    builder
        .serve_connection(
            CountingIo {
                inner: io,
                read,
                stall,
            },
            service,
        )
        .await
}

/// A connection's IO, counting the bytes read (for [`HeadTimer`]).
struct CountingIo<I> {
    inner: I,
    read: Arc<AtomicU64>,
    /// The write timeout ([`HttpServerOptions::write_timeout`]).
    stall: Option<WriteStall>,
}

/// `r` through the write timeout, if there is one.
fn stalled<T>(
    stall: &mut Option<WriteStall>,
    cx: &mut Context<'_>,
    r: Poll<std::io::Result<T>>,
) -> Poll<std::io::Result<T>> {
    match stall {
        Some(st) => st.check(cx, r),
        None => r,
    }
}

impl<I: hyper::rt::Read + Unpin> hyper::rt::Read for CountingIo<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        // SAFETY: the inner reader only writes into the slice (through `ReadBuf`), and the
        // cursor is advanced by exactly the number of bytes it filled.
        let n = unsafe {
            let mut inner = hyper::rt::ReadBuf::uninit(buf.as_mut());
            match Pin::new(&mut self.inner).poll_read(cx, inner.unfilled()) {
                Poll::Ready(Ok(())) => inner.filled().len(),
                other => return other,
            }
        };
        // SAFETY: see above.
        unsafe { buf.advance(n) };
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for CountingIo<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        stalled(&mut this.stall, cx, r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_flush(cx);
        stalled(&mut this.stall, cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        stalled(&mut this.stall, cx, r)
    }
}

/// hyper's timer for one connection, whose only use on an HTTP/1.1 server connection is the
/// header-read timeout (armed whenever the connection waits for a request's head): each
/// sleep it makes fires at the connection's own deadline instead of the one hyper asks for.
#[derive(Clone)]
struct HeadTimer<R> {
    rt: R,
    read: Arc<AtomicU64>,
    /// A sleep was made before: the connection served a request already.
    started: Arc<AtomicBool>,
    header: Option<Duration>,
    idle: Option<Duration>,
}

impl<R: Runtime> hyper::rt::Timer for HeadTimer<R> {
    fn sleep(&self, _: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        let first = !self.started.swap(true, Ordering::Relaxed);
        let now = self.rt.now();
        Box::pin(HeadSleep(std::sync::Mutex::new(HeadWait {
            rt: self.rt.clone(),
            read: self.read.clone(),
            seen: self.read.load(Ordering::Relaxed),
            // The first request's headers are timed from the connection's start; a later
            // one's from its first byte, the wait before it being keep-alive idle time.
            head_start: first.then_some(now),
            idle_start: now,
            header: self.header,
            idle: self.idle,
            armed: None,
        })))
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep(deadline.saturating_duration_since(std::time::Instant::now()))
    }
}

/// One wait for a request's head (see [`HeadTimer`]).
struct HeadWait<R> {
    rt: R,
    read: Arc<AtomicU64>,
    /// The byte count when the wait began.
    seen: u64,
    /// When the head began to arrive, once it did.
    head_start: Option<mcp_proto::Instant>,
    idle_start: mcp_proto::Instant,
    header: Option<Duration>,
    idle: Option<Duration>,
    armed: Option<(mcp_proto::Instant, BoxFuture<()>)>,
}

impl<R: Runtime> HeadWait<R> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let now = self.rt.now();
            if self.head_start.is_none() && self.read.load(Ordering::Relaxed) != self.seen {
                self.head_start = Some(now);
            }
            let deadline = match self.head_start {
                Some(at) => self.header.map(|h| at + micros(h)),
                None => self.idle.map(|i| self.idle_start + micros(i)),
            };
            let Some(deadline) = deadline else {
                self.armed = None;
                return Poll::Pending;
            };
            if now >= deadline {
                return Poll::Ready(());
            }
            if self.armed.as_ref().is_none_or(|(at, _)| *at != deadline) {
                self.armed = Some((deadline, self.rt.sleep_until(deadline)));
            }
            let Some((_, sleep)) = self.armed.as_mut() else {
                return Poll::Pending;
            };
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.armed = None;
        }
    }
}

/// hyper wants `Sync` sleeps; the mutex is only ever reached through `&mut` (no locking).
struct HeadSleep<R>(std::sync::Mutex<HeadWait<R>>);

impl<R: Runtime> Future for HeadSleep<R> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.get_mut() {
            Ok(w) => w.poll(cx),
            Err(poisoned) => poisoned.into_inner().poll(cx),
        }
    }
}

impl<R: Runtime> hyper::rt::Sleep for HeadSleep<R> {}

#[cfg(test)]
mod tests {
    use std::io;

    use futures_util::stream;
    use http_body_util::{BodyExt, StreamBody};
    use mcp_proto::Instant;
    use mcp_proto::http::{EndpointConfig, ResponseMode};

    use super::*;
    use crate::runtime::{BoxFuture, Clock};

    #[derive(Clone)]
    struct Tokio {
        clock: Clock,
    }

    impl Runtime for Tokio {
        fn now(&self) -> Instant {
            self.clock.now()
        }
        fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
            let at = tokio::time::Instant::from_std(self.clock.to_std(deadline));
            Box::pin(tokio::time::sleep_until(at))
        }
        fn spawn(&self, fut: BoxFuture<()>) {
            tokio::spawn(fut);
        }
    }

    type Chunks = StreamBody<stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, io::Error>>>>;

    /// A body delivered in the given pieces; `Err` pieces fail the body there.
    fn chunked(pieces: Vec<Result<&'static [u8], io::ErrorKind>>) -> Chunks {
        let frames: Vec<_> = pieces
            .into_iter()
            .map(|p| match p {
                Ok(b) => Ok(Frame::data(Bytes::from_static(b))),
                Err(kind) => Err(io::Error::from(kind)),
            })
            .collect();
        StreamBody::new(stream::iter(frames))
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        futures_executor::block_on(f)
    }

    #[test]
    fn bounded_read_keeps_a_body_within_the_limit_whole() {
        let body = chunked(vec![Ok(b"{\"a\":"), Ok(b""), Ok(b"1}")]);
        assert_eq!(
            block_on(read_bounded(body, 7)).unwrap().as_ref(),
            b"{\"a\":1}"
        );
    }

    #[test]
    fn a_body_in_one_frame_is_kept_without_a_copy() {
        let frame = Bytes::from(b"{\"jsonrpc\":\"2.0\"}".to_vec());
        let at = frame.as_ptr();
        let body = StreamBody::new(stream::iter([
            Ok::<_, io::Error>(Frame::data(frame)),
            Ok(Frame::data(Bytes::new())),
        ]));
        let out = block_on(read_bounded(body, 100)).unwrap();
        assert_eq!(out.as_ref(), b"{\"jsonrpc\":\"2.0\"}");
        assert_eq!(out.as_ptr(), at, "copied");
        // One frame past the limit is cut as any body is.
        let body = chunked(vec![Ok(b"abcdefgh")]);
        assert_eq!(block_on(read_bounded(body, 3)).unwrap().as_ref(), b"abcd");
    }

    #[test]
    fn bounded_read_stops_one_byte_past_the_limit() {
        let body = chunked(vec![Ok(b"abc"), Ok(b"defgh"), Err(io::ErrorKind::Other)]);
        // The failure after the limit is never reached.
        assert_eq!(block_on(read_bounded(body, 4)).unwrap().as_ref(), b"abcde");
        let body = chunked(vec![Ok(b"abcdefgh")]);
        assert_eq!(block_on(read_bounded(body, 0)).unwrap().as_ref(), b"a");
    }

    #[test]
    fn an_oversize_body_is_drained_a_bounded_way_past_the_limit() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Frames of 64 KiB: the first holds the limit, the rest is read and dropped (the
        // client writing it reads the 413), but never more than a mebibyte of it.
        static PULLED: AtomicUsize = AtomicUsize::new(0);
        static FRAME: [u8; 65536] = [b'x'; 65536];
        let frames = futures_util::StreamExt::map(stream::iter(0..64), |_| {
            PULLED.fetch_add(1, Ordering::Relaxed);
            Ok::<_, io::Error>(Frame::data(Bytes::from_static(&FRAME)))
        });
        let out = block_on(read_bounded(StreamBody::new(frames), 100)).unwrap();
        assert_eq!(out.len(), 101);
        assert_eq!(
            PULLED.load(Ordering::Relaxed),
            17,
            "the first frame and 1 MiB more"
        );
        // A failure while draining still gives the 413.
        let body = chunked(vec![Ok(b"abcdef"), Err(io::ErrorKind::ConnectionReset)]);
        assert_eq!(block_on(read_bounded(body, 4)).unwrap().as_ref(), b"abcde");
    }

    #[test]
    fn bounded_read_reports_a_failing_body() {
        let body = chunked(vec![Ok(b"ab"), Err(io::ErrorKind::ConnectionReset)]);
        let err = block_on(read_bounded(body, 100)).unwrap_err();
        let io = err
            .downcast_ref::<io::Error>()
            .expect("the body's own error");
        assert_eq!(io.kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn each_request_of_a_connection_carries_the_peer_address() {
        use hyper::service::Service;
        /// Answers with the request's `RemoteAddr`.
        struct Seen;
        impl Service<Request<()>> for Seen {
            type Response = Option<RemoteAddr>;
            type Error = Infallible;
            type Future = std::future::Ready<Result<Option<RemoteAddr>, Infallible>>;
            fn call(&self, req: Request<()>) -> Self::Future {
                std::future::ready(Ok(req.extensions().get::<RemoteAddr>().copied()))
            }
        }
        let addr: std::net::SocketAddr = "192.0.2.7:4321".parse().unwrap();
        let svc = ConnService { inner: Seen, addr };
        for _ in 0..2 {
            let seen = block_on(svc.call(Request::new(()))).unwrap();
            assert_eq!(seen, Some(RemoteAddr(addr)));
        }
    }

    #[test]
    fn body_deadlines() {
        let at = |s: u64| Instant::from_micros(s * 1_000_000);
        let start = at(100);
        let limits = BodyLimits::default();
        // Nothing read: the grace period.
        assert_eq!(limits.deadline_at(start, 0), Some(at(105)));
        // 80 KiB at 8 KiB/s earn 10 s.
        assert_eq!(limits.deadline_at(start, 80 * 1024), Some(at(110)));
        // Never later than the whole-body deadline.
        assert_eq!(limits.deadline_at(start, 4 << 20), Some(at(130)));
        assert_eq!(BodyLimits::unlimited().deadline_at(start, 0), None);
        let rate_only = BodyLimits::unlimited().min_bytes_per_sec(1000);
        assert_eq!(rate_only.deadline_at(start, 3000), Some(at(103)));
    }

    #[tokio::test]
    async fn a_stalled_body_is_answered_408_and_a_prompt_one_is_not() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).response_mode(ResponseMode::Json);
        let service = HyperService::spawn(&rt, &server, config);
        let limits = BodyLimits::unlimited().deadline(Some(std::time::Duration::from_millis(200)));
        let (tx, rx) = futures_channel::mpsc::channel::<Result<Frame<Bytes>, io::Error>>(1);
        let stalled = post(StreamBody::new(rx));
        let resp = respond_with(&rt, service.handle(), stalled, limits).await;
        assert_eq!(resp.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(resp.headers()["connection"], "close");
        drop(tx);
        let prompt = post(chunked(vec![Ok(INIT)]));
        let resp = respond_with(&rt, service.handle(), prompt, limits).await;
        assert_eq!(resp.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_body_already_arrived_arms_no_timer_and_a_late_one_does() {
        /// Counts the sleeps it makes.
        #[derive(Clone)]
        struct Counting(Tokio, Arc<std::sync::atomic::AtomicUsize>);
        impl Runtime for Counting {
            fn now(&self) -> Instant {
                Runtime::now(&self.0)
            }
            fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
                self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Runtime::sleep_until(&self.0, deadline)
            }
            fn spawn(&self, fut: BoxFuture<()>) {
                Runtime::spawn(&self.0, fut)
            }
        }
        let tokio_rt = Tokio {
            clock: Clock::new(),
        };
        let counting = Counting(tokio_rt.clone(), Arc::default());
        let sleeps = || counting.1.load(std::sync::atomic::Ordering::Relaxed);
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).response_mode(ResponseMode::Json);
        let service = HyperService::spawn(&tokio_rt, &server, config);
        let limits = BodyLimits::default();

        let here = post(chunked(vec![Ok(INIT)]));
        let resp = respond_with(&counting, service.handle(), here, limits).await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(sleeps(), 0, "a body already there is read without a timer");

        let (mut tx, rx) = futures_channel::mpsc::channel::<Result<Frame<Bytes>, io::Error>>(1);
        let late = post(StreamBody::new(rx));
        let feed = async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            tx.try_send(Ok(Frame::data(Bytes::from_static(INIT))))
                .unwrap();
        };
        let (resp, ()) = futures_util::future::join(
            respond_with(&counting, service.handle(), late, limits),
            feed,
        )
        .await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(sleeps(), 1, "a body that makes the server wait is timed");
    }

    #[test]
    fn reply_body_shapes() {
        let empty = ReplyBody::from(HttpBody::Empty);
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        let also_empty = ReplyBody::from(HttpBody::Full(Vec::new()));
        assert!(also_empty.is_end_stream());
        let full = ReplyBody::from(HttpBody::Full(b"{}".to_vec()));
        assert!(!full.is_end_stream());
        assert_eq!(full.size_hint().exact(), Some(2));
        let bytes = block_on(full.collect()).unwrap().to_bytes();
        assert_eq!(&bytes[..], b"{}");
        let parts = HttpBody::Parts(vec![
            b"data: a\n\n".to_vec(),
            Vec::new(),
            b"data: bc\n\n".to_vec(),
        ]);
        let parts = ReplyBody::from(parts);
        assert!(!parts.is_end_stream());
        assert_eq!(parts.size_hint().exact(), Some(19));
        let bytes = block_on(parts.collect()).unwrap().to_bytes();
        assert_eq!(&bytes[..], b"data: a\n\ndata: bc\n\n");
        let no_parts = ReplyBody::from(HttpBody::Parts(vec![Vec::new()]));
        assert!(no_parts.is_end_stream());
    }

    fn post(
        body: impl Body<Data = Bytes, Error = io::Error>,
    ) -> Request<impl Body<Data = Bytes, Error = io::Error>> {
        Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .unwrap()
    }

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn respond_passes_a_chunked_body_to_the_engine() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).response_mode(ResponseMode::Json);
        let service = HyperService::spawn(&rt, &server, config);
        let (a, b) = INIT.split_at(INIT.len() / 2);
        let req = post(chunked(vec![Ok(a), Ok(b)]));
        let resp = respond(service.handle(), req).await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(resp.headers().contains_key("mcp-session-id"));
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
    }

    #[tokio::test]
    async fn respond_refuses_oversize_and_failed_bodies() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).max_body_size(16);
        let service = HyperService::spawn(&rt, &server, config);
        let resp = respond(service.handle(), post(chunked(vec![Ok(INIT)]))).await;
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let req = post(chunked(vec![Ok(b"{"), Err(io::ErrorKind::UnexpectedEof)]));
        let resp = respond(service.handle(), req).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    }

    /// With CORS on, the driver's own replies carry the CORS headers too (a page sees the
    /// 400, not a CORS failure); to a refused origin they carry none.
    #[tokio::test]
    async fn the_drivers_own_replies_carry_cors_headers() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config =
            EndpointConfig::new(server.config().clone()).cors(Some(mcp_proto::http::Cors::new()));
        let service = HyperService::spawn(&rt, &server, config);
        for (origin, allowed) in [
            ("http://localhost:5173", true),
            ("https://evil.example", false),
        ] {
            let mut req = post(chunked(vec![Ok(b"{"), Err(io::ErrorKind::UnexpectedEof)]));
            req.headers_mut()
                .insert("origin", http::HeaderValue::from_static(origin));
            let resp = respond(service.handle(), req).await;
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
            let h = resp.headers();
            assert_eq!(h["vary"], "Origin");
            assert_eq!(
                h.get("access-control-allow-origin")
                    .map(|v| v.to_str().unwrap()),
                allowed.then_some(origin),
            );
            assert_eq!(h.contains_key("access-control-expose-headers"), allowed);
        }
    }

    /// The connection's [`RemoteAddr`] reaches the endpoint: one address at its share of
    /// sessions evicts its own idle one (whose id then gets 404), another address is not
    /// counted with it.
    #[tokio::test]
    async fn respond_names_the_remote_address_to_the_endpoint() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone())
            .response_mode(ResponseMode::Json)
            .max_sessions_per_peer(Some(1));
        let service = HyperService::spawn(&rt, &server, config);
        let mut sids = Vec::new();
        for (ip, port) in [
            ([10, 0, 0, 1], 1000),
            ([10, 0, 0, 2], 1000),
            ([10, 0, 0, 1], 1001),
        ] {
            let mut req = post(chunked(vec![Ok(INIT)]));
            req.extensions_mut()
                .insert(RemoteAddr(std::net::SocketAddr::from((ip, port))));
            let resp = respond(service.handle(), req).await;
            assert_eq!(resp.status(), StatusCode::OK);
            sids.push(resp.headers()["mcp-session-id"].clone());
        }
        const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        for (sid, status) in sids.iter().zip([404, 202, 202]) {
            let mut req = post(chunked(vec![Ok(INITIALIZED)]));
            req.headers_mut().insert("mcp-session-id", sid.clone());
            let resp = respond(service.handle(), req).await;
            assert_eq!(resp.status().as_u16(), status, "{sid:?}");
        }
    }

    /// A legacy SSE POST that reaches the engine together with (just after) the drop of its
    /// session's stream is refused with 404, not accepted with 202 into a stream nobody
    /// reads: the engine learns of dropped streams before it takes the next request.
    #[tokio::test(flavor = "current_thread")]
    async fn a_legacy_post_after_its_stream_dropped_is_refused() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone())
            .legacy_sse(Some(mcp_proto::http::LegacySse::default()));
        let service = HyperService::spawn(&rt, &server, config);
        let get = Request::get("/sse")
            .header("host", "127.0.0.1")
            .header("accept", "text/event-stream")
            .body(http_body_util::Empty::<Bytes>::new().map_err(|never| match never {}))
            .unwrap();
        let mut sse = respond(service.handle(), get).await.into_body();
        async fn next(body: &mut ReplyBody) -> String {
            let frame = body.frame().await.unwrap().unwrap();
            String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
        }
        let endpoint = next(&mut sse).await;
        let url = endpoint
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap()
            .to_owned();
        let to = |body: &'static [u8]| {
            Request::post(url.as_str())
                .header("host", "127.0.0.1")
                .header("content-type", "application/json")
                .body(chunked(vec![Ok(body)]))
                .unwrap()
        };
        let resp = respond(service.handle(), to(INIT)).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert!(next(&mut sse).await.contains("protocolVersion"));
        // The client goes away, and its next POST is on its way at the same moment.
        drop(sse);
        let resp = respond(
            service.handle(),
            to(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
        )
        .await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn respond_without_an_engine_is_unavailable() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let engine = server.http_service(rt, EndpointConfig::new(server.config().clone()));
        let service = HyperService::new(engine.handle());
        drop(engine);
        let resp = respond(service.handle(), post(chunked(vec![Ok(INIT)]))).await;
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
