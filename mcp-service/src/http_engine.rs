//! The Streamable HTTP engine: one task that owns an [`Endpoint`] and runs the sessions behind
//! it, for HTTP drivers (hyper, …).
//!
//! HTTP handlers hand each request to the engine through an [`HttpHandle`] and get back the
//! reply head plus an [`HttpBody`]: complete bytes, or an [`SseStream`] of chunks the engine
//! pulls from the endpoint. Each MCP session gets its own [`Peer`], its own [`Service`] and the
//! engine's per-session dispatcher (the same as a byte-stream
//! [`Connection`](crate::Connection)'s); request handlers run on tasks of their own where the
//! runtime spawns, and what they send through their `Peer` (progress, log
//! messages, sampling requests) becomes `Endpoint` calls for their session. One timer follows
//! [`Endpoint::poll_timeout`]. A dropped [`SseStream`] is reported with
//! [`Endpoint::stream_closed`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_channel::mpsc::{self, UnboundedReceiver, UnboundedSender};
use futures_channel::oneshot;
use futures_core::Stream;
use futures_util::stream::{SelectAll, StreamExt};
use mcp_proto::http::{Body, Endpoint, EndpointConfig, SessionEvent, SessionId, StreamId};
use mcp_proto::session::{Event, RequestOptions};
use mcp_proto::{Error, ErrorKind, Instant, RequestId};

use crate::engine::{Core, Dispatcher, HandlerOutput, Handlers, ProgressReport};
use crate::peer::{Command, Peer};
use crate::runtime::{DeadlineTimer, Runtime};
use crate::service::Service;
use crate::telemetry::Telemetry;

/// Iterations of the loop before yielding to the executor.
const BUDGET: usize = 64;
/// Commands of the sessions' handles carried out per turn of the engine's loop.
const COMMANDS_PER_TURN: usize = 256;
/// A reply chunk shorter than this joins the one before it (see `flush_deferred`).
const JOIN_MAX: usize = 4096;

/// SSE chunks buffered per reply body beyond what the driver has taken (the endpoint bounds
/// what waits behind them).
const STREAM_CHANNEL: usize = 4;
/// HTTP requests waiting for the engine at most; beyond, a request is refused at once (the
/// driver answers 503) rather than queued: an engine that far behind is overloaded.
const REQUEST_QUEUE: usize = 4096;

/// Builds the service of a new session around its peer; called once per session. The returned
/// closure runs when the session ends.
pub type SessionFactory =
    Arc<dyn Fn(&Peer) -> (Arc<dyn Service>, Box<dyn FnOnce() + Send>) + Send + Sync>;

/// The body of a reply produced by the engine.
pub enum HttpBody {
    /// No body.
    Empty,
    /// The complete body.
    Full(Vec<u8>),
    /// The complete body in pieces, sent one after the other (chunks a reply gathered, a
    /// large one not copied to join a small one).
    Parts(Vec<Vec<u8>>),
    /// A body produced over time (SSE, or a JSON body that waits for responses).
    Stream(SseStream),
}

impl std::fmt::Debug for HttpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpBody::Empty => f.write_str("Empty"),
            HttpBody::Full(b) => write!(f, "Full({} bytes)", b.len()),
            HttpBody::Parts(p) => write!(
                f,
                "Parts({} bytes in {})",
                p.iter().map(Vec::len).sum::<usize>(),
                p.len()
            ),
            HttpBody::Stream(s) => write!(f, "Stream({:?})", s.id),
        }
    }
}

/// The chunks of a streamed reply body. Dropping it before it ends tells the engine the client
/// went away (not a cancellation: the session keeps going).
pub struct SseStream {
    /// The endpoint's stream; `None` for a body fed from the cluster's event log.
    id: Option<StreamId>,
    /// `None` while the reply is in the engine: its channel is made when it leaves as a
    /// stream (a reply that ends first leaves as a complete body, with none).
    rx: Option<mpsc::Receiver<Vec<u8>>>,
    engine: Option<UnboundedSender<StreamId>>,
    done: bool,
}

impl SseStream {
    /// A body fed by a task of its own (a stream another instance answers, followed in the
    /// cluster's event log).
    fn detached(rx: mpsc::Receiver<Vec<u8>>) -> Self {
        SseStream {
            id: None,
            rx: Some(rx),
            engine: None,
            done: false,
        }
    }
}

impl std::fmt::Debug for SseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseStream").field("id", &self.id).finish()
    }
}

impl Stream for SseStream {
    type Item = Vec<u8>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        let r = match self.rx.as_mut() {
            Some(rx) => Pin::new(rx).poll_next(cx),
            None => Poll::Ready(None),
        };
        if let Poll::Ready(None) = r {
            self.done = true;
        }
        r
    }
}

impl Drop for SseStream {
    fn drop(&mut self) {
        if !self.done
            && let (Some(engine), Some(id)) = (&self.engine, self.id)
        {
            let _ = engine.unbounded_send(id);
        }
    }
}

// Nearly every message is a request; boxing its parts would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Msg {
    Request {
        parts: http::request::Parts,
        body: Bytes,
        reply: oneshot::Sender<http::Response<HttpBody>>,
    },
    /// [`HttpHandle::shut_down`].
    ShutDown,
}

/// The way into one engine (one shard of a sharded endpoint).
#[derive(Clone)]
struct Shard {
    tx: UnboundedSender<Msg>,
    /// Requests sent and not yet taken by the engine (bounded by [`REQUEST_QUEUE`]).
    queued: Arc<std::sync::atomic::AtomicUsize>,
}

/// The most engines one endpoint is sharded into (a session id carries its shard in its low
/// byte).
pub use mcp_proto::http::MAX_SHARDS;

/// A cloneable handle that submits HTTP requests to an [`HttpEngine`], or to the shards of
/// one endpoint ([`HttpEngine::sharded`]): a request naming a session goes to the shard that
/// opened it (the session id says which), any other to the next shard in turn.
#[derive(Clone)]
pub struct HttpHandle {
    shards: Arc<[Shard]>,
    /// The shard of the next request that names no session.
    turn: Arc<std::sync::atomic::AtomicUsize>,
    max_body_size: usize,
    /// The endpoint's CORS policy and allowed origins, for replies made outside it.
    cors: Option<Arc<(mcp_proto::http::Cors, mcp_proto::http::AllowList)>>,
    /// The server's resource server, checking each request before it reaches the engine.
    #[cfg(feature = "resource-server")]
    guard: Option<Arc<crate::resource_server::Guard>>,
}

impl std::fmt::Debug for HttpHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpHandle").finish_non_exhaustive()
    }
}

impl HttpHandle {
    /// The largest body the endpoint accepts: a driver may stop reading after this many bytes
    /// plus one and pass what it read (the reply is 413).
    pub fn max_body_size(&self) -> usize {
        self.max_body_size
    }

    /// Checks every request with `guard` before it reaches an engine.
    #[cfg(feature = "resource-server")]
    pub(crate) fn with_guard(mut self, guard: Option<Arc<crate::resource_server::Guard>>) -> Self {
        self.guard = guard;
        self
    }

    /// The resource server's check of the requests, when the server has one.
    #[cfg(feature = "resource-server")]
    pub(crate) fn guard(&self) -> Option<&crate::resource_server::Guard> {
        self.guard.as_deref()
    }

    /// Whether the endpoint has a CORS policy (its replies carry CORS headers).
    pub fn has_cors(&self) -> bool {
        self.cors.is_some()
    }

    /// Adds the endpoint's CORS headers (when it has a policy) to a reply a driver made
    /// itself to a request with `request` headers: see
    /// [`Cors::decorate_reply`](mcp_proto::http::Cors::decorate_reply).
    pub fn decorate_reply(&self, request: &http::HeaderMap, reply: &mut http::HeaderMap) {
        if let Some(c) = &self.cors {
            c.0.decorate_reply(&c.1, request, reply);
        }
    }

    /// Shuts the engine down gracefully ([`Endpoint::shut_down`]): every session is closed as
    /// its application would close it, so each open `subscriptions/listen` stream is answered
    /// with its final result (the revision's graceful end of a subscription: the client
    /// knows the server ended it, rather than seeing its reply cut) and requests in flight
    /// are answered within the sessions'
    /// [`close_timeout`](mcp_proto::session::Config::close_timeout); requests from then on
    /// are refused with 503. The engine's future completes once every session has ended and
    /// every reply body was pulled to its end (or dropped), even while handles remain.
    ///
    /// ```no_run
    /// # async fn run<R: mcp_service::Runtime>(rt: R, server: mcp_service::Server) {
    /// let engine = server.http_service(rt.clone(), mcp_proto::http::EndpointConfig::new(server.config().clone()));
    /// let handle = engine.handle();
    /// // … serve HTTP requests with `handle`, run `engine` …
    /// handle.shut_down(); // the listen streams get their results; `engine` then completes
    /// # }
    /// ```
    pub fn shut_down(&self) {
        for shard in self.shards.iter() {
            let _ = shard.tx.unbounded_send(Msg::ShutDown);
        }
    }

    /// How many engines the endpoint is sharded into (1 when it is not).
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The shard for a request: the one whose session it names or whose stateless session
    /// it answers ([`Shard::route`](mcp_proto::http::Shard::route)), else the next in turn.
    /// (An id no shard made names no session on the shard it picks either: 404 there.)
    fn shard_of(&self, parts: &http::request::Parts, body: &[u8]) -> Option<&Shard> {
        use std::sync::atomic::Ordering;
        let n = self.shards.len();
        if n <= 1 {
            return self.shards.first();
        }
        let index = mcp_proto::http::Shard::route(parts, body, n)
            .unwrap_or_else(|| self.turn.fetch_add(1, Ordering::Relaxed) % n);
        self.shards.get(index)
    }

    /// Handles one request to the MCP endpoint: the complete body in (a `Vec<u8>` or the
    /// `Bytes` a server read, taken without a copy), the reply out.
    pub async fn request(
        &self,
        parts: http::request::Parts,
        body: impl Into<Bytes>,
    ) -> Result<http::Response<HttpBody>, Error> {
        use std::sync::atomic::Ordering;
        let body = body.into();
        let stopped = || Error::new(ErrorKind::TransportClosed, "the HTTP engine stopped");
        let shard = self.shard_of(&parts, &body).ok_or_else(stopped)?;
        if shard.queued.fetch_add(1, Ordering::Relaxed) >= REQUEST_QUEUE {
            shard.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("the HTTP engine is overloaded ({REQUEST_QUEUE} requests waiting)"),
            ));
        }
        let (reply, rx) = oneshot::channel();
        shard
            .tx
            .unbounded_send(Msg::Request { parts, body, reply })
            .map_err(|_| Error::new(ErrorKind::TransportClosed, "the HTTP engine stopped"))?;
        rx.await
            .map_err(|_| Error::new(ErrorKind::TransportClosed, "the HTTP engine stopped"))
    }
}

/// Session ids from the operating system's CSPRNG (`getrandom`), drawn 32 at a time. When it
/// fails there is no id, and the endpoint opens no session (503): a guessable id is never made.
struct SessionIds {
    pool: [u8; 512],
    /// How much of `pool` was handed out (all of it: draw again).
    used: usize,
}

impl Default for SessionIds {
    fn default() -> Self {
        SessionIds {
            pool: [0; 512],
            used: 512,
        }
    }
}

impl SessionIds {
    fn next(&mut self) -> Option<u128> {
        if self.used >= self.pool.len() {
            if let Err(e) = getrandom::fill(&mut self.pool) {
                tracing::error!(target: "mcp", error = %e, "no randomness for session ids");
                return None;
            }
            self.used = 0;
        }
        let slot = self.pool.get_mut(self.used..self.used + 16)?;
        let bytes: [u8; 16] = (&*slot).try_into().ok()?;
        slot.fill(0); // an id handed out is not kept
        self.used += 16;
        Some(u128::from_le_bytes(bytes))
    }
}

/// One MCP session's application side.
struct SessionCtx {
    dispatcher: Dispatcher,
    on_end: Option<Box<dyn FnOnce() + Send>>,
}

impl Drop for SessionCtx {
    /// The session's end hook runs when it ends, and as well when the engine is dropped.
    fn drop(&mut self) {
        if let Some(f) = self.on_end.take() {
            f();
        }
    }
}

/// One session of the endpoint, as the dispatcher drives it.
struct EndpointSession<'a> {
    endpoint: &'a mut Endpoint,
    sid: SessionId,
}

impl EndpointSession<'_> {
    /// Runs `f` on the session; a session already gone is an error like any other.
    fn run<T>(
        &mut self,
        now: Instant,
        f: impl FnOnce(&mut mcp_proto::session::Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.endpoint.with_session(now, self.sid, f)?
    }
}

/// Each command is the session's own ([`Core`] for `Session`), run through the endpoint so
/// that what it produced is routed.
impl Core for EndpointSession<'_> {
    fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<serde_json::value::RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        self.run(now, |s| Core::send_request(s, now, method, params, opts))
    }
    fn cancel(&mut self, now: Instant, id: &RequestId, reason: Option<&str>) {
        let _ = self.run(now, |s| {
            Core::cancel(s, now, id, reason);
            Ok(())
        });
    }
    fn notify(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<serde_json::value::RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error> {
        self.run(now, |s| Core::notify(s, now, method, params, related))
    }
    fn progress(&mut self, now: Instant, report: ProgressReport) -> Result<(), Error> {
        self.run(now, |s| Core::progress(s, now, report))
    }
    fn respond(
        &mut self,
        now: Instant,
        id: &RequestId,
        result: Result<Box<serde_json::value::RawValue>, Error>,
    ) -> Result<(), Error> {
        self.run(now, |s| Core::respond(s, now, id, result))
    }
    fn publish(&mut self, now: Instant, change: &mcp_proto::session::Change) -> usize {
        self.run(now, |s| Ok(Core::publish(s, now, change)))
            .unwrap_or(0)
    }
    fn close(&mut self, now: Instant) {
        let _ = self.run(now, |s| {
            Core::close(s, now);
            Ok(())
        });
    }
}

struct StreamSlot {
    /// The channel to its reply's body; `None` while the reply is in the engine (until the end
    /// of its turn, or longer when its head waits or it is JSON): chunks then wait in `early`,
    /// and a reply that ends before it leaves becomes a complete body without a channel ever
    /// made (four allocations a request).
    tx: Option<mpsc::Sender<Vec<u8>>>,
    /// At most [`STREAM_CHANNEL`] chunks pulled before the channel exists.
    early: Vec<Vec<u8>>,
    /// The endpoint may have data for it: pull when the channel has room.
    want: bool,
    /// Its reply's head waits for the first data ([`mcp_proto::http::DeferredHead`]).
    held: bool,
}

type CommandStream = Pin<Box<dyn Stream<Item = (SessionId, Command)> + Send>>;

/// The future that runs the endpoint until every [`HttpHandle`] is dropped. Spawn it.
#[must_use = "the HTTP engine does nothing unless awaited or spawned"]
pub struct HttpEngine<R: Runtime> {
    rt: R,
    endpoint: Endpoint,
    factory: SessionFactory,
    msgs: UnboundedReceiver<Msg>,
    queued: Arc<std::sync::atomic::AtomicUsize>,
    drops: UnboundedReceiver<StreamId>,
    drops_tx: UnboundedSender<StreamId>,
    handle: Option<HttpHandle>,
    cors: Option<Arc<(mcp_proto::http::Cors, mcp_proto::http::AllowList)>>,
    #[cfg(feature = "resource-server")]
    guard: Option<Arc<crate::resource_server::Guard>>,
    sessions: IdMap<SessionId, SessionCtx>,
    commands: SelectAll<CommandStream>,
    handlers: Handlers<R, SessionId>,
    /// Handlers that finished, between taking them and answering.
    done: Vec<HandlerOutput<SessionId>>,
    streams: IdMap<StreamId, StreamSlot>,
    timer: DeadlineTimer,
    random: SessionIds,
    buf: Vec<u8>,
    telemetry: Telemetry,
    /// Streamed replies held until the end of the current turn: a reply whose stream the
    /// endpoint completed in the meantime (a fast handler) goes out as one complete body.
    deferred: Vec<(Reply, http::Response<HttpBody>)>,
    /// Replies whose head waits for their first data (2026-07-28: JSON with the answer's
    /// status, or SSE), and whether each turned out SSE once it had data.
    held: Vec<(Reply, http::Response<HttpBody>)>,
    heads: IdMap<StreamId, bool>,
    /// The chunks of replies whose streams ended while the replies were in the engine (taken by
    /// `flush_deferred` the same turn).
    ended: IdMap<StreamId, Vec<Vec<u8>>>,
    /// The streams whose `want` flag is set, each once.
    wanted: Vec<StreamId>,
    /// Sessions whose unsent output changed this turn ([`Self::publish_backlogs`]).
    paced: Vec<SessionId>,
    /// [`HttpHandle::shut_down`] was called.
    stopping: bool,
    /// The stores shared with other instances, when the server has them.
    cluster: Option<EngineCluster>,
}

type Reply = oneshot::Sender<http::Response<HttpBody>>;

/// How far a request got with the cluster's stores.
enum Stage {
    /// Just arrived.
    Fresh,
    /// Its session was looked up in the store (and taken over, if it was there).
    Adopted,
    /// A resumption of another instance's standalone stream: these events, replayed from
    /// the log, go before the session's standalone stream here.
    Chained(Vec<u8>),
}

/// What a cluster task sends back to its engine.
// As `Msg`: nearly every one carries a request.
#[allow(clippy::large_enum_variant)]
enum Back {
    /// The store's record of a session this engine does not hold.
    Loaded {
        sid: SessionId,
        record: Option<crate::cluster::SessionRecord>,
        parts: http::request::Parts,
        body: Bytes,
        reply: Reply,
    },
    /// A client's answers to this instance's requests, POSTed to another instance.
    Deliver { sid: SessionId, body: Vec<u8> },
    /// A GET resuming another instance's standalone stream, its `Last-Event-ID` removed.
    Chain {
        parts: http::request::Parts,
        body: Bytes,
        replay: Vec<u8>,
        reply: Reply,
    },
}

/// What the engines of a server with a cluster ([`ServerBuilder::cluster`](crate::ServerBuilder::cluster)) share.
#[derive(Clone)]
pub(crate) struct ClusterLink {
    pub(crate) shared: Arc<crate::cluster::serve::Shared>,
    /// Session `sid` is served here by the connection of this peer (with the record another
    /// instance wrote, when it was taken over).
    #[allow(clippy::type_complexity)]
    pub(crate) opened:
        Arc<dyn Fn(&Peer, SessionId, Option<&crate::cluster::SessionRecord>) + Send + Sync>,
}

/// One engine's part of the cluster.
struct EngineCluster {
    link: ClusterLink,
    back_tx: UnboundedSender<Back>,
    back: UnboundedReceiver<Back>,
    /// The session being taken over, and its record.
    adopting: Option<(SessionId, crate::cluster::SessionRecord)>,
    /// When each session's record was last written or touched.
    touched: IdMap<SessionId, Instant>,
    /// How long a record lives untouched: the endpoint's idle timeout.
    ttl: std::time::Duration,
    /// Session look-ups in flight.
    loading: Arc<std::sync::atomic::AtomicUsize>,
}

/// Session look-ups in flight at most per engine; beyond, a request for a session held
/// elsewhere is answered 503 at once.
const MAX_LOADING: usize = 1024;

/// The pauses between the tries of a session look-up that found nothing (the last is 0: no
/// pause after the last try).
const LOAD_RETRIES: [std::time::Duration; 4] = [
    std::time::Duration::from_millis(20),
    std::time::Duration::from_millis(60),
    std::time::Duration::from_millis(150),
    std::time::Duration::ZERO,
];

/// A `Last-Event-ID` naming another instance's stream.
struct Resume {
    sid: SessionId,
    stream: u64,
    after: u64,
}

impl EngineCluster {
    /// Looks session `sid` up in the store; the engine then takes it over, or answers 404.
    fn load<R: Runtime>(
        &self,
        rt: &R,
        sid: SessionId,
        parts: http::request::Parts,
        body: Bytes,
        reply: Reply,
    ) {
        use std::sync::atomic::Ordering;
        if self.loading.fetch_add(1, Ordering::Relaxed) >= MAX_LOADING {
            self.loading.fetch_sub(1, Ordering::Relaxed);
            let _ = reply.send(unavailable("too many sessions are being looked up"));
            return;
        }
        let shared = self.link.shared.clone();
        let back = self.back_tx.clone();
        let loading = self.loading.clone();
        let rt = rt.clone();
        rt.clone().spawn(Box::pin(async move {
            let id = sid.to_string();
            let mut record = None;
            // The instance that opened it may still be writing it: a few tries, a few
            // milliseconds apart, before the session counts as unknown.
            for pause in LOAD_RETRIES {
                match shared.sessions.get(&id).await {
                    Ok(Some(r)) => {
                        record = Some(r);
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        loading.fetch_sub(1, Ordering::Relaxed);
                        tracing::warn!(target: "mcp", session = %sid, error = %e, "cluster: cannot read the session store");
                        let _ = reply.send(unavailable("the session store is unavailable"));
                        return;
                    }
                }
                if !pause.is_zero() {
                    rt.sleep_until(rt.now() + pause.into()).await;
                }
            }
            loading.fetch_sub(1, Ordering::Relaxed);
            let _ = back.unbounded_send(Back::Loaded {
                sid,
                record,
                parts,
                body,
                reply,
            });
        }));
    }

    /// The instance whose requests a POST answers, when it is another one (every message of
    /// the body an answer to it) and the POST names a handshake-era session.
    fn foreign_answers(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
    ) -> Option<(u32, SessionId)> {
        if parts.method != http::Method::POST {
            return None;
        }
        let sid = header_session(parts)?;
        if !mcp_proto::jsonrpc::mentions_answer(body) {
            return None;
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            id: Option<mcp_proto::RequestId>,
            method: Option<serde::de::IgnoredAny>,
        }
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Body {
            One(Answer),
            Many(Vec<Answer>),
        }
        let answers = match serde_json::from_slice::<Body>(body).ok()? {
            Body::One(a) => vec![a],
            Body::Many(v) => v,
        };
        let mut instance = None;
        for a in &answers {
            if a.method.is_some() {
                return None;
            }
            let i = mcp_proto::http::request_instance(a.id.as_ref()?)?;
            if instance.is_some_and(|j| j != i) {
                return None;
            }
            instance = Some(i);
        }
        instance
            .filter(|i| *i != self.link.shared.instance)
            .map(|i| (i, sid))
    }

    /// The resumption a GET asks for, when it names another instance's stream of a session.
    fn foreign_resume(&self, parts: &http::request::Parts) -> Option<Resume> {
        if parts.method != http::Method::GET {
            return None;
        }
        let (stream, after) = mcp_proto::http::last_event_id(parts)?;
        let instance = mcp_proto::http::stream_instance(stream);
        if instance == 0 || instance == self.link.shared.instance {
            return None;
        }
        let sid = header_session(parts)?;
        Some(Resume { sid, stream, after })
    }

    /// Serves a resumption of another instance's stream from the log: a stream that ended
    /// is replayed whole; a standalone stream is replayed, then goes on as this instance's
    /// standalone stream of the session; a stream still being answered there is followed.
    fn resume<R: Runtime>(
        &self,
        rt: &R,
        resume: Resume,
        mut parts: http::request::Parts,
        body: Bytes,
        reply: Reply,
    ) {
        let shared = self.link.shared.clone();
        let back = self.back_tx.clone();
        let rt2 = rt.clone();
        rt.spawn(Box::pin(async move {
            let Resume { sid, stream, after } = resume;
            let session = sid.to_string();
            let r = match shared.replay(&session, stream, after).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(target: "mcp", session = %sid, error = %e, "cluster: cannot read the event log");
                    let _ = reply.send(unavailable("the event log is unavailable"));
                    return;
                }
            };
            shared.resumed();
            if r.ended {
                let _ = reply.send(sse(HttpBody::Full(r.bytes)));
            } else if mcp_proto::http::stream_is_standalone(stream) {
                parts.headers.remove(mcp_proto::http::LAST_EVENT_ID);
                let _ = back.unbounded_send(Back::Chain {
                    parts,
                    body,
                    replay: r.bytes,
                    reply,
                });
            } else if !shared
                .alive(mcp_proto::http::stream_instance(stream))
                .await
            {
                // The instance answering it is gone: what the log has, and the end (the
                // client's resumption fails in its own time with its own error).
                let _ = reply.send(sse(HttpBody::Full(r.bytes)));
            } else {
                let (mut tx, rx) = mpsc::channel(STREAM_CHANNEL);
                if !r.bytes.is_empty() {
                    let _ = tx.try_send(r.bytes);
                }
                if reply
                    .send(sse(HttpBody::Stream(SseStream::detached(rx))))
                    .is_ok()
                {
                    shared.follow(rt2, session, stream, r.last, tx).await;
                }
            }
        }));
    }
}

/// The engine's tables: keyed by ids the server makes itself (random session ids, counted
/// stream handles), never by keys a peer chooses, so they hash as the connection engine's own
/// ids do, without SipHash's defence against chosen collisions.
type IdMap<K, V> = crate::engine::outbound::OwnIdMap<K, V>;

/// The session a request's `MCP-Session-Id` names.
fn header_session(parts: &http::request::Parts) -> Option<SessionId> {
    let sid = parts.headers.get(mcp_proto::http::MCP_SESSION_ID)?;
    SessionId::parse(sid.to_str().ok()?.trim())
}

/// The headers of an SSE reply.
fn sse_headers(headers: &mut http::HeaderMap) {
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
}

/// A 200 SSE reply.
fn sse(body: HttpBody) -> http::Response<HttpBody> {
    let mut r = http::Response::new(body);
    sse_headers(r.headers_mut());
    r
}

/// The complete body of a reply from the chunks it gathered, moved, not copied: most such
/// bodies are one chunk, or a small one (an SSE stream's priming event) and the answer. A
/// small chunk joins the one before it where that costs no growth of a large one; `one`
/// joins them all.
fn whole_body(chunks: Vec<Vec<u8>>, one: bool) -> HttpBody {
    let mut all: Vec<Vec<u8>> = Vec::with_capacity(chunks.len().min(2));
    for chunk in chunks {
        match all.last_mut() {
            Some(last)
                if one
                    || (chunk.len() < JOIN_MAX
                        && (last.len() < JOIN_MAX
                            || last.capacity() - last.len() >= chunk.len())) =>
            {
                last.extend_from_slice(&chunk)
            }
            _ => all.push(chunk),
        }
    }
    match all.len() {
        0 => HttpBody::Empty,
        1 => HttpBody::Full(all.pop().unwrap_or_default()),
        _ => HttpBody::Parts(all),
    }
}

/// A 503 with a JSON-RPC error body: the shared stores failed.
fn unavailable(why: &str) -> http::Response<HttpBody> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32603, "message": format!("Service Unavailable: {why}")},
    });
    let mut r = http::Response::new(HttpBody::Full(body.to_string().into_bytes()));
    *r.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

impl<R: Runtime> std::fmt::Debug for HttpEngine<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEngine")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> HttpEngine<R> {
    /// An engine serving `config`, building each session's service with `factory`.
    pub fn new(rt: R, config: EndpointConfig, factory: SessionFactory) -> Self {
        let cors = config
            .cors
            .clone()
            .map(|c| Arc::new((c, config.allowed_origins.clone())));
        let endpoint = Endpoint::new(config);
        let (tx, rx) = mpsc::unbounded();
        let (drops_tx, drops) = mpsc::unbounded();
        let queued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let handle = HttpHandle {
            shards: Arc::new([Shard {
                tx,
                queued: queued.clone(),
            }]),
            turn: Arc::default(),
            max_body_size: endpoint.max_body_size(),
            cors: cors.clone(),
            #[cfg(feature = "resource-server")]
            guard: None,
        };
        HttpEngine {
            handlers: Handlers::new(&rt),
            done: Vec::new(),
            rt,
            endpoint,
            factory,
            msgs: rx,
            queued,
            drops,
            drops_tx,
            handle: Some(handle),
            cors,
            #[cfg(feature = "resource-server")]
            guard: None,
            sessions: IdMap::default(),
            commands: SelectAll::new(),
            streams: IdMap::default(),
            timer: DeadlineTimer::default(),
            random: SessionIds::default(),
            buf: Vec::new(),
            telemetry: Telemetry::default(),
            deferred: Vec::new(),
            held: Vec::new(),
            heads: IdMap::default(),
            ended: IdMap::default(),
            wanted: Vec::new(),
            paced: Vec::new(),
            stopping: false,
            cluster: None,
        }
    }

    /// Serves with the stores of `link` (the server's cluster), when there is one.
    pub(crate) fn with_cluster(mut self, link: Option<ClusterLink>) -> Self {
        self.cluster = link.map(|link| {
            let (back_tx, back) = mpsc::unbounded();
            let deliver = back_tx.clone();
            link.shared.on_deliver(Box::new(move |sid, body| {
                let _ = deliver.unbounded_send(Back::Deliver { sid, body });
            }));
            EngineCluster {
                link,
                back_tx,
                back,
                adopting: None,
                touched: IdMap::default(),
                ttl: self.endpoint.config().idle_timeout.into(),
                loading: Arc::default(),
            }
        });
        self
    }

    /// Checks every request with `guard` before it reaches the engine.
    #[cfg(feature = "resource-server")]
    pub(crate) fn with_guard(mut self, guard: Option<Arc<crate::resource_server::Guard>>) -> Self {
        if let Some(h) = &mut self.handle {
            h.guard = guard.clone();
        }
        self.guard = guard;
        self
    }

    /// Reports to `telemetry`: each HTTP session is a connection (opened, closed), with the
    /// same request spans, events and metrics as a byte-stream connection.
    pub fn with_telemetry(mut self, telemetry: Telemetry) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// A handle to submit requests with; take it before spawning the engine (a handle taken
    /// after the engine was first polled is already closed). The engine ends once every handle
    /// is dropped.
    pub fn handle(&self) -> HttpHandle {
        match &self.handle {
            Some(h) => h.clone(),
            None => HttpHandle {
                shards: Arc::new([Shard {
                    tx: mpsc::unbounded().0,
                    queued: self.queued.clone(),
                }]),
                turn: Arc::default(),
                max_body_size: self.endpoint.max_body_size(),
                cors: self.cors.clone(),
                #[cfg(feature = "resource-server")]
                guard: self.guard.clone(),
            },
        }
    }

    /// `shards` engines (at least 1, at most [`MAX_SHARDS`]) serving one endpoint of
    /// `config` together, and the one handle that spreads requests over them. Spawn each
    /// engine: on a runtime with several worker threads they serve on as many cores.
    ///
    /// Each engine owns its sessions, with no lock and no hop between engines on the way of a
    /// request: a session's id carries the index of the engine that opened it (its low byte;
    /// the other 120 bits stay random), as do the ids of the requests its stateless sessions
    /// send the client ([`Shard`](mcp_proto::http::Shard)), and the handle sends each request
    /// naming a session, and each answer to such a request, there. Requests naming none
    /// (`initialize`, stateless requests of either era, a legacy `GET`) go to the engines in
    /// turn. The bounds of `config` that count sessions
    /// (`max_sessions`, `max_sessions_per_peer`, `max_listen_streams`) are shared out: each
    /// engine has its part, rounded up, so the endpoint as a whole may hold up to
    /// `shards - 1` more than the total (one engine is for caps that must be exact).
    pub fn sharded(
        rt: R,
        config: EndpointConfig,
        factory: SessionFactory,
        shards: usize,
    ) -> (HttpHandle, Vec<HttpEngine<R>>) {
        let n = shards.clamp(1, MAX_SHARDS);
        let mut config = config;
        if n > 1 {
            let part = |total: usize| total.div_ceil(n).max(1);
            config.max_sessions = part(config.max_sessions);
            config.max_sessions_per_peer = config.max_sessions_per_peer.map(part);
            config.max_listen_streams = part(config.max_listen_streams);
            config.max_stored_events_total = part(config.max_stored_events_total);
            config.max_stored_bytes_total = part(config.max_stored_bytes_total);
        }
        let make = |index: usize| {
            let mut config = config.clone();
            config.shard = if n > 1 {
                mcp_proto::http::Shard::new(index, n)
            } else {
                None
            };
            HttpEngine::new(rt.clone(), config, factory.clone())
        };
        let first = make(0);
        let mut handle = first.handle();
        let mut engines = vec![first];
        engines.extend((1..n).map(make));
        handle.shards = engines
            .iter()
            .filter_map(|e| e.handle.as_ref())
            .filter_map(|h| h.shards.first().cloned())
            .collect();
        (handle, engines)
    }

    /// The endpoint's counters.
    pub fn stats(&self) -> mcp_proto::http::Stats {
        self.endpoint.stats()
    }

    fn on_msg(&mut self, msg: Msg, now: Instant) {
        match msg {
            Msg::Request { parts, body, reply } => {
                self.queued
                    .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                self.request(parts, body, reply, now, Stage::Fresh);
            }
            Msg::ShutDown => {
                self.stopping = true;
                self.endpoint.shut_down(now);
            }
        }
    }

    /// What the cluster's tasks sent back.
    fn on_back(&mut self, back: Back, now: Instant) {
        match back {
            Back::Loaded {
                sid,
                record,
                parts,
                body,
                reply,
            } => {
                let snapshot = record.as_ref().map(crate::cluster::snapshot_of);
                match snapshot {
                    Some(Ok(snapshot)) => {
                        // What the endpoint had before is not of the adopted session.
                        self.drain_events(now);
                        match self.endpoint.adopt_session(now, sid, snapshot) {
                            Ok(()) => {
                                if let Some(c) = &mut self.cluster {
                                    c.link.shared.adopted();
                                    c.adopting = record.map(|r| (sid, r));
                                    c.touched.insert(sid, now);
                                }
                                self.drain_events(now);
                                if let Some(c) = &mut self.cluster {
                                    c.adopting = None;
                                }
                            }
                            Err(e) if e.kind() == ErrorKind::AlreadyConnected => {}
                            Err(e) => {
                                tracing::warn!(target: "mcp", session = %sid, error = %e, "cluster: cannot take over a session");
                            }
                        }
                    }
                    Some(Err(e)) => {
                        tracing::warn!(target: "mcp", session = %sid, error = %e, "cluster: a stored session is unusable");
                    }
                    None => {
                        if let Some(c) = &self.cluster {
                            c.link.shared.unknown();
                        }
                    }
                }
                self.request(parts, body, reply, now, Stage::Adopted);
            }
            Back::Chain {
                parts,
                body,
                replay,
                reply,
            } => self.request(parts, body, reply, now, Stage::Chained(replay)),
            Back::Deliver { sid, body } => {
                if self.endpoint.session(sid).is_some() {
                    self.drain_events(now);
                    let _ = self
                        .endpoint
                        .with_session(now, sid, |s| s.handle_message(now, &body));
                }
            }
        }
    }

    /// Handles one request; with a cluster, a request for a session held elsewhere first
    /// goes to the store ([`Stage`]).
    fn request(
        &mut self,
        parts: http::request::Parts,
        body: Bytes,
        reply: Reply,
        now: Instant,
        stage: Stage,
    ) {
        let mut prefix = None;
        match stage {
            Stage::Chained(replay) => prefix = Some(replay),
            stage => {
                if let Some(c) = &self.cluster {
                    if let Some((instance, sid)) = c.foreign_answers(&parts, &body) {
                        // Answers to requests another instance sent: it takes them.
                        c.link.shared.passed_on();
                        let body = String::from_utf8_lossy(&body).into_owned();
                        c.link.shared.op(crate::cluster::Op::Publish(
                            crate::cluster::BusMessage::Deliver {
                                instance,
                                session: sid.to_string(),
                                body,
                            },
                        ));
                        let mut accepted = http::Response::new(HttpBody::Empty);
                        *accepted.status_mut() = http::StatusCode::ACCEPTED;
                        let _ = reply.send(accepted);
                        return;
                    }
                    if matches!(stage, Stage::Fresh)
                        && let Some(sid) = self.endpoint.missing_session(&parts)
                    {
                        c.load(&self.rt, sid, parts, body, reply);
                        return;
                    }
                    if let Some(resume) = c.foreign_resume(&parts) {
                        c.resume(&self.rt, resume, parts, body, reply);
                        return;
                    }
                }
            }
        }
        let random = self.random.next();
        // What the endpoint had before this request is not of it.
        self.drain_events(now);
        let resp = self.endpoint.handle_request(now, &parts, &body, random);
        if let Some(c) = &mut self.cluster
            && !parts.headers.contains_key(mcp_proto::http::MCP_SESSION_ID)
            && let Some(sid) = resp.headers().get(mcp_proto::http::MCP_SESSION_ID)
            && let Some(sid) = sid.to_str().ok().and_then(SessionId::parse)
            && let Some(snapshot) = self.endpoint.session_snapshot(sid)
        {
            // A session just opened: stored before its client hears of it, so that its next
            // request may go to any instance.
            let record = crate::cluster::record_of(&snapshot);
            c.link
                .shared
                .op(crate::cluster::Op::Put(sid.to_string(), record, c.ttl));
            c.touched.insert(sid, now);
        }
        if let Some(c) = &self.cluster
            && parts.method == http::Method::DELETE
            && resp.status() == http::StatusCode::NO_CONTENT
            && let Some(sid) = header_session(&parts)
        {
            // (Named as the store names it: the id as the session's own text.)
            c.link
                .shared
                .op(crate::cluster::Op::Remove(sid.to_string()));
        }
        // The requests this one carried see its head.
        self.drain_events_of(now, parts);
        let (head, body) = resp.into_parts();
        let held = head
            .extensions
            .get::<mcp_proto::http::DeferredHead>()
            .is_some();
        let body = match body {
            Body::Empty => HttpBody::Empty,
            Body::Full(b) => HttpBody::Full(b),
            Body::Stream(id) => {
                // The reply stays in the engine until the end of the turn at least (see
                // `flush_deferred`): its channel is made only if it leaves as a stream, which
                // a reply answered within the turn does not. The replayed events go first.
                let early = prefix
                    .take()
                    .filter(|r| !r.is_empty())
                    .into_iter()
                    .collect();
                self.streams.insert(
                    id,
                    StreamSlot {
                        tx: None,
                        early,
                        want: true,
                        held,
                    },
                );
                self.wanted.push(id);
                HttpBody::Stream(SseStream {
                    id: Some(id),
                    rx: None,
                    engine: Some(self.drops_tx.clone()),
                    done: false,
                })
            }
            _ => HttpBody::Empty,
        };
        let resp = http::Response::from_parts(head, body);
        if matches!(resp.body(), HttpBody::Stream(_)) {
            self.deferred.push((reply, resp));
        } else {
            let _ = reply.send(resp);
        }
    }

    /// Sends the replies held during this turn. A stream the endpoint already ended (its
    /// slot is gone, everything it had is in the channel) becomes a complete body: one
    /// wake-up of the HTTP task instead of one per chunk and one for the end.
    fn flush_deferred(&mut self, cx: &mut Context<'_>, now: Instant) {
        let mut replies = std::mem::take(&mut self.held);
        replies.append(&mut self.deferred);
        for (reply, resp) in replies {
            let held = match resp.body() {
                HttpBody::Stream(s)
                    if resp
                        .extensions()
                        .get::<mcp_proto::http::DeferredHead>()
                        .is_some() =>
                {
                    s.id
                }
                _ => None,
            };
            // A JSON reply (its head settled) leaves when its stream ends, as a complete body
            // (with its length, not chunked), unless the client went away first. (Its stream
            // carries the one body; one that would keep a channel's worth of chunks waiting
            // leaves as it is.)
            if let HttpBody::Stream(SseStream {
                id: Some(id),
                rx: None,
                ..
            }) = resp.body()
                && held.is_none()
                && mcp_proto::http::is_json(resp.headers())
                && self
                    .streams
                    .get(id)
                    .is_some_and(|s| s.early.len() < STREAM_CHANNEL)
            {
                let id = *id;
                self.wait_or_close(cx, now, reply, resp, id);
                continue;
            }
            let mut sse_head = None;
            if let Some(id) = held {
                let finished = !self.streams.contains_key(&id);
                match self.heads.remove(&id) {
                    None if !finished => {
                        // No data yet: the head waits.
                        self.wait_or_close(cx, now, reply, resp, id);
                        continue;
                    }
                    decided => sse_head = Some(decided.unwrap_or(false)),
                }
            }
            let (mut head, body) = resp.into_parts();
            let body = match body {
                HttpBody::Stream(mut s)
                    if s.id.is_some_and(|id| !self.streams.contains_key(&id)) =>
                {
                    // Ended: its chunks wait in `ended` (no channel was made) or in its
                    // channel (the slot held the only sender: closed, so `try_recv` yields
                    // every chunk, then `Closed`).
                    let mut chunks =
                        s.id.and_then(|id| self.ended.remove(&id))
                            .unwrap_or_default();
                    if let Some(rx) = s.rx.as_mut() {
                        while let Ok(chunk) = rx.try_recv() {
                            chunks.push(chunk);
                        }
                    }
                    s.done = true;
                    // (A JSON body's status is read from it whole.)
                    whole_body(chunks, sse_head == Some(false))
                }
                HttpBody::Stream(mut s) if s.rx.is_none() => {
                    // Leaves as a stream: its channel now, with what was pulled so far.
                    let slot = s.id.and_then(|id| self.streams.get_mut(&id));
                    let early = slot.as_ref().map_or(0, |slot| slot.early.len());
                    let (mut tx, rx) = mpsc::channel(STREAM_CHANNEL.max(early));
                    if let Some(slot) = slot {
                        for chunk in slot.early.drain(..) {
                            let _ = tx.try_send(chunk);
                        }
                        slot.tx = Some(tx);
                        if slot.want {
                            // It stopped pulling when `early` was full.
                            cx.waker().wake_by_ref();
                        }
                    }
                    s.rx = Some(rx);
                    HttpBody::Stream(s)
                }
                other => other,
            };
            match (sse_head, &body) {
                (Some(true), _) => {
                    head.status = http::StatusCode::OK;
                    sse_headers(&mut head.headers);
                }
                (Some(false), HttpBody::Full(b)) => head.status = mcp_proto::http::reply_status(b),
                _ => {}
            }
            if let Err(resp) = reply.send(http::Response::from_parts(head, body)) {
                // The HTTP handler went away before the reply: its stream is closed.
                if let HttpBody::Stream(mut s) = resp.into_body()
                    && let Some(id) = s.id
                {
                    s.done = true;
                    self.streams.remove(&id);
                    self.stream_closed(now, id);
                    cx.waker().wake_by_ref();
                }
            }
        }
    }

    /// Keeps `resp`, the reply of stream `id`, waiting in the engine, unless its client went
    /// away: then the stream is closed.
    fn wait_or_close(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        mut reply: Reply,
        resp: http::Response<HttpBody>,
        id: StreamId,
    ) {
        if reply.poll_canceled(cx).is_ready() {
            if let HttpBody::Stream(mut s) = resp.into_body() {
                s.done = true;
            }
            self.streams.remove(&id);
            self.stream_closed(now, id);
            // What the endpoint made of it (a stateless request's session ended: its handler
            // is cancelled) is taken on the next turn.
            cx.waker().wake_by_ref();
        } else {
            self.held.push((reply, resp));
        }
    }

    /// Moves what the endpoint has for each reply body into its channel.
    fn pump_streams(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut progressed = false;
        while let Some(id) = self.endpoint.poll_stream_ready() {
            if let Some(s) = self.streams.get_mut(&id)
                && !s.want
            {
                s.want = true;
                self.wanted.push(id);
            }
        }
        // Only the streams that may have data (not every open stream): the cost of a turn
        // does not grow with the number of idle streams.
        let wanted = std::mem::take(&mut self.wanted);
        for &id in &wanted {
            while let Some(slot) = self.streams.get_mut(&id) {
                match slot.tx.as_mut().map(|tx| tx.poll_ready(cx)) {
                    Some(Poll::Ready(Ok(()))) => {}
                    Some(Poll::Ready(Err(_))) => {
                        self.streams.remove(&id);
                        self.stream_closed(now, id);
                        progressed = true;
                        break;
                    }
                    Some(Poll::Pending) => break,
                    // No channel yet: `early` holds as much as a channel would.
                    None if slot.early.len() >= STREAM_CHANNEL => break,
                    None => {}
                }
                self.buf.clear();
                match self.endpoint.poll_stream(id, &mut self.buf) {
                    mcp_proto::http::StreamPoll::Data(_) => {
                        if let Some(sid) = self.endpoint.stream_session(id) {
                            self.paced.push(sid);
                        }
                        if slot.held {
                            slot.held = false;
                            self.heads.insert(id, self.endpoint.stream_is_sse(id));
                        }
                        let chunk = std::mem::take(&mut self.buf);
                        progressed = true;
                        match slot.tx.as_mut() {
                            Some(tx) => {
                                if tx.start_send(chunk).is_err() {
                                    self.streams.remove(&id);
                                    self.stream_closed(now, id);
                                    break;
                                }
                            }
                            None => slot.early.push(chunk),
                        }
                    }
                    mcp_proto::http::StreamPoll::Pending => {
                        slot.want = false;
                        break;
                    }
                    _ => {
                        // Closed: dropping the sender ends the body; a held reply's chunks
                        // wait for it in `ended`.
                        if let Some(slot) = self.streams.remove(&id)
                            && slot.tx.is_none()
                        {
                            self.ended.insert(id, slot.early);
                        }
                        progressed = true;
                        break;
                    }
                }
            }
        }
        // A stream whose channel was full stays wanted (the channel wakes the engine when it
        // has room).
        for id in wanted {
            if self.streams.get(&id).is_some_and(|s| s.want) {
                self.wanted.push(id);
            }
        }
        progressed
    }

    fn session(&mut self, sid: SessionId) {
        let cluster = &mut self.cluster;
        let factory = &self.factory;
        let commands = &mut self.commands;
        let telemetry = &self.telemetry;
        let max_stream_buffer = self.endpoint.config().max_stream_buffer;
        self.sessions.entry(sid).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded();
            let peer = Peer::new(tx);
            let (service, on_end) = factory(&peer);
            // Paced below the point where the endpoint cuts a slow stream: a handler waits for
            // its client instead of having its stream cut.
            peer.set_output_budget(peer.output_budget().min(max_stream_buffer / 2));
            commands.push(Box::pin(rx.map(move |c| (sid, c))));
            if let Some(c) = cluster {
                let record = c.adopting.as_ref().filter(|(s, _)| *s == sid).map(|(_, r)| r);
                (c.link.opened)(&peer, sid, record);
            }
            tracing::debug!(target: "mcp", connection = peer.connection_id(), session = %sid, "HTTP session opened");
            SessionCtx {
                dispatcher: Dispatcher::new(peer, service, telemetry.clone())
                    .with_label(sid.to_string()),
                on_end: Some(on_end),
            }
        });
    }

    fn on_event(&mut self, ev: SessionEvent, now: Instant) {
        let sid = ev.session;
        if matches!(ev.event, Event::Closed(_)) && !self.sessions.contains_key(&sid) {
            return;
        }
        let closed = matches!(ev.event, Event::Closed(_));
        if self.cluster.is_some() {
            self.share(sid, &ev.event, now);
        }
        self.session(sid);
        if let Some(ctx) = self.sessions.get_mut(&sid) {
            ctx.dispatcher
                .on_event(ev.event, now, &mut self.handlers, sid);
        }
        if closed && let Some(mut ctx) = self.sessions.remove(&sid) {
            ctx.dispatcher.finish(now);
        }
    }

    /// Writes what the store must know of `event` of session `sid`: the record (written when
    /// its `initialize` was answered, or found when it was taken over) is touched at most
    /// every eighth of its life while the session is used.
    fn share(&mut self, sid: SessionId, event: &Event, now: Instant) {
        let Some(c) = &mut self.cluster else { return };
        match event {
            Event::Request(_) => {
                if let Some(t) = c.touched.get_mut(&sid)
                    && now.saturating_duration_since(*t) >= (c.ttl / 8).into()
                {
                    *t = now;
                    c.link
                        .shared
                        .op(crate::cluster::Op::Touch(sid.to_string(), c.ttl));
                }
            }
            Event::Closed(_) => {
                c.touched.remove(&sid);
            }
            _ => {}
        }
    }

    /// Takes what the cluster's tasks sent back.
    fn drain_back(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut any = false;
        while let Some(c) = &mut self.cluster
            && let Poll::Ready(Some(b)) = Pin::new(&mut c.back).poll_next(cx)
        {
            self.on_back(b, now);
            any = true;
        }
        any
    }

    fn apply(&mut self, sid: SessionId, cmd: Command, now: Instant) {
        let Some(ctx) = self.sessions.get_mut(&sid) else {
            Dispatcher::refuse(cmd);
            return;
        };
        let mut core = EndpointSession {
            endpoint: &mut self.endpoint,
            sid,
        };
        ctx.dispatcher.apply(&mut core, cmd, now);
    }

    fn on_handler_done(&mut self, out: HandlerOutput<SessionId>, now: Instant) {
        let (sid, id, result) = out;
        let Some(result) = result else { return };
        let Some(ctx) = self.sessions.get_mut(&sid) else {
            return;
        };
        let mut core = EndpointSession {
            endpoint: &mut self.endpoint,
            sid,
        };
        ctx.dispatcher.answer(&mut core, id, result, now);
    }

    /// Keeps one timer armed no later than the endpoint's next deadline (see
    /// [`DeadlineTimer`]).
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let deadline = self.endpoint.poll_timeout();
        match self.timer.poll(&self.rt, deadline, cx) {
            Some(now) => {
                self.endpoint.handle_timeout(now);
                true
            }
            None => false,
        }
    }

    /// Tells the endpoint of the reply bodies dropped since the last call.
    fn drain_drops(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut any = false;
        while let Poll::Ready(Some(id)) = Pin::new(&mut self.drops).poll_next(cx) {
            self.streams.remove(&id);
            self.stream_closed(now, id);
            any = true;
        }
        any
    }

    /// Takes the events that the HTTP request `parts` caused: each MCP request among them
    /// gets the head in its context (one shared copy, made only when there is a request).
    fn drain_events_of(&mut self, now: Instant, parts: http::request::Parts) {
        let mut parts = Some(parts);
        let mut shared: Option<Arc<http::request::Parts>> = None;
        while let Some(e) = self.endpoint.poll_event() {
            if matches!(e.event, Event::Request(_)) {
                if shared.is_none() {
                    shared = parts.take().map(Arc::new);
                }
                let sid = e.session;
                self.session(sid);
                if let Some(ctx) = self.sessions.get_mut(&sid) {
                    ctx.dispatcher.http = shared.clone();
                    self.on_event(e, now);
                    if let Some(ctx) = self.sessions.get_mut(&sid) {
                        ctx.dispatcher.http = None;
                    }
                    continue;
                }
            }
            self.on_event(e, now);
        }
    }

    fn drain_events(&mut self, now: Instant) -> bool {
        let mut any = false;
        while let Some(e) = self.endpoint.poll_event() {
            any = true;
            self.on_event(e, now);
        }
        any
    }

    /// Carries out the sessions' commands, at most [`COMMANDS_PER_TURN`] (taken from the
    /// sessions in turn): a handler that sends without pause cannot hold the engine, and
    /// with it every other session.
    fn drain_commands(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut any = false;
        for _ in 0..COMMANDS_PER_TURN {
            let Poll::Ready(Some((sid, cmd))) = Pin::new(&mut self.commands).poll_next(cx) else {
                break;
            };
            any = true;
            self.apply(sid, cmd, now);
            if self.paced.last() != Some(&sid) {
                self.paced.push(sid);
            }
        }
        any
    }

    /// Tells the endpoint that the body of `stream` went away; its session's unsent output
    /// is counted again.
    fn stream_closed(&mut self, now: Instant, stream: StreamId) {
        if let Some(sid) = self.endpoint.stream_session(stream) {
            self.paced.push(sid);
        }
        self.endpoint.stream_closed(now, stream);
    }

    /// Tells the sessions whose output changed how much of it waits for their clients (their
    /// handles' output budget counts it: a client that does not read pauses its handlers).
    fn publish_backlogs(&mut self) {
        if self.paced.is_empty() {
            return;
        }
        self.paced.sort_unstable();
        self.paced.dedup();
        for sid in self.paced.drain(..) {
            if let Some(ctx) = self.sessions.get(&sid) {
                ctx.dispatcher
                    .peer()
                    .shared
                    .flow
                    .set_backlog(self.endpoint.unsent(sid));
            }
        }
    }
}

impl<R: Runtime> Future for HttpEngine<R> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        // The engine's own handle must not keep it alive.
        this.handle = None;
        for _ in 0..BUDGET {
            let now = this.rt.now();
            let mut progressed = false;
            loop {
                // Streams the clients dropped first: a request that follows a dropped stream
                // (a legacy SSE POST right after its stream closed) finds its session gone
                // (404) rather than accepted into a stream nobody reads.
                progressed |= this.drain_drops(cx, now);
                match Pin::new(&mut this.msgs).poll_next(cx) {
                    Poll::Ready(Some(m)) => {
                        this.on_msg(m, now);
                        progressed = true;
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => break,
                }
            }
            progressed |= this.drain_drops(cx, now);
            progressed |= this.drain_back(cx, now);
            // Handlers that finished, then the commands: what a handler sent before
            // finishing goes out before its answer.
            let mut done = std::mem::take(&mut this.done);
            this.handlers.poll_done(cx, &mut done);
            progressed |= this.drain_commands(cx, now);
            if !done.is_empty() {
                progressed = true;
                for d in done.drain(..) {
                    this.on_handler_done(d, now);
                }
            }
            this.done = done;
            progressed |= this.drain_events(now);
            progressed |= this.poll_timer(cx);
            progressed |= this.drain_events(now);
            progressed |= this.pump_streams(cx, now);
            // Once a round, after the commands and the streams moved output along.
            this.publish_backlogs();
            progressed |= this.drain_events(now);
            if this.handlers.take_spawned() > 0 {
                // Handlers just spawned run before more requests are taken; the replies held
                // for this turn wait for them (a fast handler's reply is then one whole body).
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if !progressed {
                this.flush_deferred(cx, now);
                if this.stopping
                    && this.endpoint.is_shut_down()
                    && this.streams.is_empty()
                    && this.held.is_empty()
                    && this.deferred.is_empty()
                {
                    tracing::debug!(target: "mcp", "the HTTP engine shut down");
                    return Poll::Ready(());
                }
                return Poll::Pending;
            }
        }
        this.flush_deferred(cx, this.rt.now());
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::SessionIds;

    #[test]
    fn id_maps_spread_counted_and_random_keys() {
        use std::hash::BuildHasher;
        let build =
            std::hash::BuildHasherDefault::<crate::engine::outbound::OwnIdHasher>::default();
        // Counted keys (stream handles, internal session ids) land in many groups: the top 7
        // bits (hashbrown's tags) and the low bits (its buckets) both vary.
        let hashes: Vec<u64> = (0u64..1024).map(|n| build.hash_one(n)).collect();
        let tags: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        let buckets: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        assert!(tags.len() > 100, "{}", tags.len());
        assert!(buckets.len() > 600, "{}", buckets.len());
        // A table of both kinds of key finds each again.
        let mut map = super::IdMap::default();
        for n in 0u128..5000 {
            let id = mcp_proto::http::SessionId::from_u128(
                n.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834),
            );
            map.insert(id, n);
        }
        for n in 0u128..5000 {
            let id = mcp_proto::http::SessionId::from_u128(
                n.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834),
            );
            assert_eq!(map.get(&id), Some(&n));
        }
        assert_eq!(
            build.hash_one(b"bytes".as_slice()),
            build.hash_one(b"bytes".as_slice())
        );
    }

    #[test]
    fn a_body_is_joined_without_copying_its_large_chunks() {
        use super::{HttpBody, whole_body};
        let mut big = Vec::with_capacity(100_100);
        big.resize(100_000, b'x');
        let at = big.as_ptr();
        let body = whole_body(
            vec![b"id: 1\ndata:\n\n".to_vec(), big, b"\n".to_vec()],
            false,
        );
        let HttpBody::Parts(parts) = body else {
            panic!("{body:?}");
        };
        assert_eq!(parts.len(), 2, "the small chunk after a large one joins it");
        assert_eq!(parts[0], b"id: 1\ndata:\n\n");
        assert_eq!(parts[1].as_ptr(), at, "copied");
        assert_eq!(parts[1].len(), 100_001);
        // Not where the large one would have to grow.
        let body = whole_body(vec![vec![b'x'; 100_000], b"\n".to_vec()], false);
        assert!(
            matches!(&body, HttpBody::Parts(p) if p.len() == 2),
            "{body:?}"
        );
        // Small chunks make one; one chunk is moved; none is nothing; `one` joins all.
        let HttpBody::Full(b) = whole_body(vec![b"ab".to_vec(), b"cd".to_vec()], false) else {
            panic!();
        };
        assert_eq!(b, b"abcd");
        let one = vec![b'y'; 10_000];
        let at = one.as_ptr();
        let HttpBody::Full(b) = whole_body(vec![one], false) else {
            panic!();
        };
        assert_eq!(b.as_ptr(), at);
        assert!(matches!(whole_body(Vec::new(), false), HttpBody::Empty));
        let HttpBody::Full(b) =
            whole_body(vec![b"{".to_vec(), vec![b'z'; 5000], b"}".to_vec()], true)
        else {
            panic!();
        };
        assert_eq!(b.len(), 5002);
    }

    #[test]
    fn session_ids_are_fresh_across_refills() {
        let mut ids = SessionIds::default();
        let drawn: Vec<u128> = (0..100).map(|_| ids.next().unwrap()).collect();
        let distinct: std::collections::HashSet<_> = drawn.iter().collect();
        assert_eq!(
            distinct.len(),
            100,
            "100 ids over four draws, all different"
        );
        assert!(drawn.iter().all(|&id| id != 0));
        assert!(
            ids.pool[..ids.used].iter().all(|&b| b == 0),
            "handed-out ids are wiped"
        );
    }
}
