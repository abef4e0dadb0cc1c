//! The connection engine: one task that drives one core `Session` over a byte stream.
//!
//! It reads the transport, feeds the session, dispatches events (inbound requests to the
//! [`Service`], outcomes to waiting callers), runs request handlers concurrently on its own task
//! (no spawn, no channel hop for the answer), arms one timer for the session's next deadline and
//! writes what the session transmits — batching writes and flushing once per wake-up. The
//! session is owned here alone: no lock on the hot path.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use futures_channel::mpsc::{self, UnboundedReceiver};
use futures_channel::oneshot;
use futures_core::Stream;
use futures_io::{AsyncRead, AsyncWrite};
use futures_util::stream::FuturesUnordered;
use mcp_proto::session::{Event, InboundRequest, Session};
use mcp_proto::{Error, ErrorKind, Instant, RequestId};
use serde_json::value::RawValue;

use crate::cancel::CancellationToken;
use crate::peer::{Command, Peer, PeerInfo, Progress, ProgressFn};
use crate::runtime::{BoxFuture, DeadlineTimer, Runtime};
use crate::service::{IncomingRequest, RequestContext, Service};
use crate::telemetry::{Direction, Outcome, Telemetry, TelemetryEvent};

/// A bidirectional byte stream (stdio, a child's pipes, TCP, a Unix socket, an in-memory pipe).
pub struct ByteStream {
    pub(crate) reader: Pin<Box<dyn AsyncRead + Send>>,
    pub(crate) writer: Pin<Box<dyn AsyncWrite + Send>>,
}

impl ByteStream {
    /// A stream from a read half and a write half.
    pub fn new(
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> Self {
        ByteStream {
            reader: Box::pin(reader),
            writer: Box::pin(writer),
        }
    }
}

impl std::fmt::Debug for ByteStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ByteStream")
    }
}

const READ_CHUNK: usize = 64 * 1024;
/// Stop reading while this much output waits to be written (backpressure against a peer that
/// does not read; a peer that reads never reaches it, since what it asked for is bounded by the
/// session's in-flight limits).
const WRITE_HIGH_WATER: usize = 16 * 1024 * 1024;
/// Iterations of the loop before yielding to the executor.
const BUDGET: usize = 64;

/// What a finished (or cancelled: `None`) handler yields, with the tag it was pushed with.
pub(crate) type HandlerOutput<T> = (T, RequestId, Option<Result<Box<RawValue>, Error>>);

/// A map keyed by ids this side assigned (outbound request ids, caller keys): a multiply-rotate
/// hash instead of SipHash. The peer cannot choose what goes in, so there is no flooding to
/// defend against, and a lookup with a peer-chosen id only misses.
pub(crate) type OwnIdMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<OwnIdHasher>>;

/// The hasher of [`OwnIdMap`] (the FxHash step: rotate, xor, multiply).
#[derive(Default, Clone, Copy)]
pub(crate) struct OwnIdHasher(u64);

impl OwnIdHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for OwnIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word.get_mut(..chunk.len())
                .unwrap_or_default()
                .copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }
    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Requests sent to the peer and waiting for their outcome, by wire id and by caller key
/// (shared with the HTTP engine).
#[derive(Default)]
pub(crate) struct Outbound {
    waiters: OwnIdMap<RequestId, Waiter>,
    keys: OwnIdMap<u64, RequestId>,
}

impl Outbound {
    /// Tracks a request the session accepted (`sent` is its id) for caller `key`, and returns
    /// its span; a refusal goes straight back to the caller.
    pub(crate) fn sent(
        &mut self,
        sent: Result<RequestId, Error>,
        key: u64,
        method: Cow<'static, str>,
        reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
        progress: Option<ProgressFn>,
        now: Instant,
    ) -> Option<&tracing::Span> {
        let id = match sent {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Err(e));
                return None;
            }
        };
        let span = request_span(&method, Direction::Outbound, &id);
        self.keys.insert(key, id.clone());
        let waiter = Waiter {
            key,
            method,
            started: now,
            span,
            reply,
            progress,
        };
        Some(&self.waiters.entry(id).insert_entry(waiter).into_mut().span)
    }

    /// Caller `key` gave up: its request's id, and its waiter if still waiting.
    pub(crate) fn cancel(&mut self, key: u64) -> Option<(RequestId, Option<Waiter>)> {
        let id = self.keys.remove(&key)?;
        let waiter = self.waiters.remove(&id);
        Some((id, waiter))
    }

    /// The outcome of `id` arrived: its waiter.
    pub(crate) fn finish(&mut self, id: &RequestId) -> Option<Waiter> {
        let waiter = self.waiters.remove(id)?;
        self.keys.remove(&waiter.key);
        Some(waiter)
    }

    /// Progress on `id`, to its callback.
    pub(crate) fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Box<RawValue>>,
    ) {
        if let Some(f) = self.waiters.get_mut(id).and_then(|w| w.progress.as_mut()) {
            f(Progress {
                progress,
                total,
                message,
                meta,
            });
        }
    }

    /// Every request still waiting (the session ended).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (RequestId, Waiter)> + '_ {
        self.keys.clear();
        self.waiters.drain()
    }
}

/// A request sent to the peer, waiting for its outcome (shared with the HTTP engine).
pub(crate) struct Waiter {
    pub(crate) key: u64,
    pub(crate) method: Cow<'static, str>,
    pub(crate) started: Instant,
    pub(crate) span: tracing::Span,
    pub(crate) reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
    pub(crate) progress: Option<ProgressFn>,
}

impl Waiter {
    /// Records the outcome on the request's span and reports it to `telemetry`.
    pub(crate) fn complete(
        &self,
        telemetry: &Telemetry,
        connection: u64,
        id: &RequestId,
        outcome: Outcome,
        now: Instant,
    ) {
        complete(
            telemetry,
            connection,
            Direction::Outbound,
            id,
            &self.method,
            &self.span,
            outcome,
            now - self.started,
        );
    }
}

/// A request from the peer being handled (shared with the HTTP engine).
pub(crate) struct InboundState {
    pub(crate) cancel: CancellationToken,
    pub(crate) method: Cow<'static, str>,
    pub(crate) started: Instant,
    pub(crate) span: tracing::Span,
}

impl InboundState {
    /// Records the outcome on the request's span and reports it to `telemetry`.
    pub(crate) fn complete(
        &self,
        telemetry: &Telemetry,
        connection: u64,
        id: &RequestId,
        outcome: Outcome,
        now: Instant,
    ) {
        complete(
            telemetry,
            connection,
            Direction::Inbound,
            id,
            &self.method,
            &self.span,
            outcome,
            now - self.started,
        );
    }
}

/// Starts handling a request from the peer (shared with the HTTP engine): reports it, calls
/// `service` inside the request's span (first given to `decorate`), records it in `inbound`,
/// and returns the handler future for the engine to run, tagged with `tag`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_inbound<T>(
    req: InboundRequest,
    service: &dyn Service,
    peer: &Peer,
    telemetry: &Telemetry,
    inbound: &mut HashMap<RequestId, InboundState>,
    now: Instant,
    tag: T,
    decorate: impl FnOnce(&tracing::Span),
) -> Guarded<T> {
    let cancel = CancellationToken::new();
    let span = request_span(&req.method, Direction::Inbound, &req.id);
    decorate(&span);
    telemetry.emit(|| TelemetryEvent::RequestReceived {
        connection: peer.connection_id(),
        id: req.id.clone(),
        method: req.method.to_string(),
    });
    let cx = RequestContext {
        id: req.id.clone(),
        progress_token: req.progress_token,
        peer: peer.clone(),
        cancel: cancel.clone(),
    };
    let fut = {
        let _e = span.enter();
        service.handle_request(
            IncomingRequest {
                method: req.method.clone(),
                params: req.params,
            },
            cx,
        )
    };
    inbound.insert(
        req.id.clone(),
        InboundState {
            cancel: cancel.clone(),
            method: req.method,
            started: now,
            span: span.clone(),
        },
    );
    Guarded {
        tag,
        id: Some(req.id),
        cancel,
        inner: fut,
        span,
    }
}

/// The `mcp.request` span of a request; `outcome` and `duration_ms` are recorded when it
/// completes, `session` by the HTTP engine.
pub(crate) fn request_span(method: &str, direction: Direction, id: &RequestId) -> tracing::Span {
    tracing::debug_span!(
        target: "mcp",
        "mcp.request",
        method = %method,
        direction = direction.as_str(),
        id = %id,
        session = tracing::field::Empty,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    )
}

#[allow(clippy::too_many_arguments)]
fn complete(
    telemetry: &Telemetry,
    connection: u64,
    direction: Direction,
    id: &RequestId,
    method: &str,
    span: &tracing::Span,
    outcome: Outcome,
    duration: mcp_proto::Duration,
) {
    span.record("outcome", outcome.as_str());
    span.record("duration_ms", duration.as_micros() as f64 / 1000.0);
    telemetry.request_completed(connection, direction, id, method, outcome, duration);
}

/// A handler future wrapped so that cancellation drops it at once; `tag` says where it
/// belongs (nothing for a connection, the session for the HTTP engine).
pub(crate) struct Guarded<T> {
    pub(crate) tag: T,
    pub(crate) id: Option<RequestId>,
    pub(crate) cancel: CancellationToken,
    pub(crate) inner: BoxFuture<Result<Box<RawValue>, Error>>,
    pub(crate) span: tracing::Span,
}

impl<T: Copy + Unpin> Future for Guarded<T> {
    type Output = HandlerOutput<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<HandlerOutput<T>> {
        let this = &mut *self;
        if this.cancel.is_cancelled() {
            let id = this.id.take().unwrap_or(RequestId::Number(-1));
            return Poll::Ready((this.tag, id, None));
        }
        let _enter = this.span.enter();
        match this.inner.as_mut().poll(cx) {
            Poll::Ready(r) => Poll::Ready((
                this.tag,
                this.id.take().unwrap_or(RequestId::Number(-1)),
                Some(r),
            )),
            Poll::Pending => {
                this.cancel.register(cx.waker());
                Poll::Pending
            }
        }
    }
}

/// The future that runs one connection until it closes. Await it or spawn it.
#[must_use = "a connection does nothing unless awaited or spawned"]
pub struct Connection<R: Runtime> {
    rt: R,
    session: Session,
    reader: Option<Pin<Box<dyn AsyncRead + Send>>>,
    /// The reader returned `Pending` during the current `poll`: its waker is registered, so
    /// reading again before the next wake-up would only cost a system call (`EAGAIN`).
    read_parked: bool,
    writer: Pin<Box<dyn AsyncWrite + Send>>,
    read_buf: Box<[u8]>,
    out: Vec<u8>,
    out_pos: usize,
    needs_flush: bool,
    writer_closed: bool,
    write_failed: bool,
    commands: UnboundedReceiver<Command>,
    commands_open: bool,
    handlers: FuturesUnordered<Guarded<()>>,
    completed: Vec<HandlerOutput<()>>,
    inbound: HashMap<RequestId, InboundState>,
    outbound: Outbound,
    timer: DeadlineTimer,
    service: Arc<dyn Service>,
    peer: Peer,
    ready: Option<oneshot::Sender<Result<PeerInfo, Error>>>,
    telemetry: Telemetry,
    closed_error: Option<Error>,
    finished: bool,
}

impl<R: Runtime> std::fmt::Debug for Connection<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// Builds a connection around `session`. For a client session the handshake starts at once and
/// the returned receiver resolves with the server's info (or the failure).
pub fn connection<R: Runtime>(
    rt: R,
    mut session: Session,
    transport: ByteStream,
    service: Arc<dyn Service>,
    telemetry: Telemetry,
) -> (
    Peer,
    Connection<R>,
    oneshot::Receiver<Result<PeerInfo, Error>>,
) {
    let (tx, rx) = mpsc::unbounded();
    let peer = Peer::new(tx);
    let (ready_tx, ready_rx) = oneshot::channel();
    let mut ready = Some(ready_tx);
    let now = rt.now();
    if session.is_client()
        && session.state() == mcp_proto::session::State::AwaitingInit
        && let Err(e) = session.initialize(now)
        && let Some(tx) = ready.take()
    {
        let _ = tx.send(Err(e));
    }
    let connection_id = peer.connection_id();
    tracing::debug!(target: "mcp", connection = connection_id, client = session.is_client(), "connection opened");
    telemetry.emit(|| TelemetryEvent::ConnectionOpened {
        connection: connection_id,
    });
    let conn = Connection {
        rt,
        session,
        reader: Some(transport.reader),
        read_parked: false,
        writer: transport.writer,
        read_buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
        out: Vec::with_capacity(READ_CHUNK),
        out_pos: 0,
        needs_flush: false,
        writer_closed: false,
        write_failed: false,
        commands: rx,
        commands_open: true,
        handlers: FuturesUnordered::new(),
        completed: Vec::new(),
        inbound: HashMap::new(),
        outbound: Outbound::default(),
        timer: DeadlineTimer::default(),
        service,
        peer: peer.clone(),
        ready,
        telemetry,
        closed_error: None,
        finished: false,
    };
    (peer, conn, ready_rx)
}

impl<R: Runtime> Connection<R> {
    fn apply(&mut self, cmd: Command, now: Instant) {
        match cmd {
            Command::Request {
                key,
                method,
                params,
                opts,
                reply,
                progress,
            } => {
                let sent = self.session.send_request(now, &method, params, opts);
                self.outbound.sent(sent, key, method, reply, progress, now);
            }
            Command::Cancel { key, reason } => {
                if let Some((id, waiter)) = self.outbound.cancel(key) {
                    if let Some(w) = waiter {
                        self.complete_outbound(&id, &w, Outcome::Cancelled, now);
                    }
                    let _ = self.session.cancel(now, &id, reason.as_deref());
                }
            }
            Command::Notify {
                method,
                params,
                related,
            } => match self.session.notify_related(&method, params, related) {
                Ok(()) => self.telemetry.notification(
                    self.peer.connection_id(),
                    Direction::Outbound,
                    &method,
                ),
                Err(e) => {
                    tracing::debug!(target: "mcp", %method, error = %e, "notification not sent")
                }
            },
            Command::Progress {
                id,
                progress,
                total,
                message,
                meta,
            } => {
                if let Err(e) = self.session.report_progress_with_meta(
                    &id,
                    progress,
                    total,
                    message.as_deref(),
                    meta,
                ) {
                    tracing::debug!(target: "mcp", %id, error = %e, "progress not sent");
                }
            }
            Command::Close => self.session.close(now),
        }
    }

    fn complete_outbound(&self, id: &RequestId, w: &Waiter, outcome: Outcome, now: Instant) {
        w.complete(&self.telemetry, self.peer.connection_id(), id, outcome, now);
    }

    fn on_event(&mut self, event: Event, now: Instant) {
        match event {
            Event::Ready {
                version,
                peer_info,
                peer_capabilities,
                instructions,
            } => {
                let info = PeerInfo {
                    version,
                    info: peer_info,
                    capabilities: peer_capabilities,
                    instructions,
                };
                if let Ok(mut g) = self.peer.shared.info.write() {
                    *g = Some(info.clone());
                }
                tracing::debug!(target: "mcp", connection = self.peer.connection_id(), %version, "handshake complete");
                if let Some(tx) = self.ready.take() {
                    let _ = tx.send(Ok(info));
                }
                self.service.on_ready(&self.peer);
            }
            Event::Request(req) => {
                let handler = start_inbound(
                    req,
                    self.service.as_ref(),
                    &self.peer,
                    &self.telemetry,
                    &mut self.inbound,
                    now,
                    (),
                    |_| {},
                );
                self.handlers.push(handler);
            }
            Event::Notification { method, params } => {
                self.telemetry
                    .notification(self.peer.connection_id(), Direction::Inbound, &method);
                self.service
                    .handle_notification(&method, params.as_deref(), &self.peer);
            }
            Event::Response { id, result } => {
                if let Some(w) = self.outbound.finish(&id) {
                    self.complete_outbound(&id, &w, Outcome::of(&result), now);
                    let _ = w.reply.send(result);
                }
            }
            Event::Progress {
                id,
                progress,
                total,
                message,
                meta,
            } => self.outbound.progress(&id, progress, total, message, meta),
            Event::Cancelled { id, reason } => {
                tracing::debug!(target: "mcp", %id, reason = reason.as_deref().unwrap_or(""), "peer cancelled request");
                if let Some(st) = self.inbound.remove(&id) {
                    st.cancel.cancel();
                    st.complete(
                        &self.telemetry,
                        self.peer.connection_id(),
                        &id,
                        Outcome::Cancelled,
                        now,
                    );
                }
            }
            Event::UnknownResponse { id } => {
                tracing::debug!(target: "mcp", %id, "response for an unknown request id");
            }
            Event::PeerError(e) => {
                tracing::warn!(target: "mcp", error = %e, "the peer reported an error")
            }
            Event::InvalidMessage(e) => {
                tracing::warn!(target: "mcp", error = %e, "invalid message from the peer")
            }
            Event::Closed(error) => {
                tracing::debug!(target: "mcp", connection = self.peer.connection_id(), error = ?error, "connection closed");
                self.peer.shared.closed.store(true, Ordering::Release);
                if let Some(tx) = self.ready.take() {
                    let e = error.clone().unwrap_or_else(|| {
                        Error::new(
                            ErrorKind::TransportClosed,
                            "the connection closed during the handshake",
                        )
                    });
                    let _ = tx.send(Err(e));
                }
                for (_, st) in self.inbound.drain() {
                    st.cancel.cancel();
                }
                self.closed_error = error;
            }
            _ => {}
        }
    }

    fn on_handler_done(
        &mut self,
        id: RequestId,
        result: Option<Result<Box<RawValue>, Error>>,
        now: Instant,
    ) {
        let Some(result) = result else { return };
        let Some(st) = self.inbound.remove(&id) else {
            return;
        };
        let outcome = Outcome::of(&result);
        let sent = match result {
            Ok(raw) => self.session.respond(&id, raw),
            Err(e) => self.session.respond_error(&id, e),
        };
        if let Err(e) = sent {
            tracing::debug!(target: "mcp", %id, error = %e, "answer not sent");
        }
        st.complete(
            &self.telemetry,
            self.peer.connection_id(),
            &id,
            outcome,
            now,
        );
    }

    /// Fills the output buffer from the session and writes as much as the transport takes.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        if self.write_failed {
            return false;
        }
        loop {
            // Drop what was already written before appending more, so that the buffer holds
            // only unwritten bytes (and the backpressure check counts only those).
            if self.out_pos > 0 && self.out_pos >= self.out.len() / 2 {
                self.out.drain(..self.out_pos);
                self.out_pos = 0;
            }
            while self.out.len() - self.out_pos < WRITE_HIGH_WATER
                && self.session.poll_transmit(&mut self.out).is_some()
            {
                progressed = true;
            }
            if self.out_pos >= self.out.len() {
                break;
            }
            match self
                .writer
                .as_mut()
                .poll_write(cx, &self.out[self.out_pos..])
            {
                Poll::Ready(Ok(0)) => {
                    self.fail_transport(Error::new(
                        ErrorKind::TransportClosed,
                        "the peer stopped reading",
                    ));
                    return true;
                }
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    self.needs_flush = true;
                    progressed = true;
                    if self.out_pos >= self.out.len() {
                        self.out.clear();
                        self.out_pos = 0;
                    }
                }
                Poll::Ready(Err(e)) => {
                    self.fail_transport(Error::new(
                        ErrorKind::TransportError,
                        format!("write failed: {e}"),
                    ));
                    return true;
                }
                Poll::Pending => return progressed,
            }
        }
        if self.needs_flush {
            match self.writer.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.needs_flush = false,
                Poll::Ready(Err(e)) => {
                    self.fail_transport(Error::new(
                        ErrorKind::TransportError,
                        format!("flush failed: {e}"),
                    ));
                    return true;
                }
                Poll::Pending => {}
            }
        }
        progressed
    }

    fn fail_transport(&mut self, e: Error) {
        self.write_failed = true;
        self.out.clear();
        self.out_pos = 0;
        let now = self.rt.now();
        self.session.handle_closed(now, Some(e));
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if self.read_parked || self.out.len() - self.out_pos >= WRITE_HIGH_WATER {
            return false; // parked until woken, or backpressure: the peer is not reading
        }
        let Some(reader) = self.reader.as_mut() else {
            return false;
        };
        match reader.as_mut().poll_read(cx, &mut self.read_buf) {
            Poll::Ready(Ok(0)) => {
                self.reader = None;
                self.session.handle_input_closed(now);
                true
            }
            Poll::Ready(Ok(n)) => {
                self.session
                    .handle_bytes(now, self.read_buf.get(..n).unwrap_or_default());
                true
            }
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => true,
            Poll::Ready(Err(e)) => {
                self.reader = None;
                self.session.handle_closed(
                    now,
                    Some(Error::new(
                        ErrorKind::TransportError,
                        format!("read failed: {e}"),
                    )),
                );
                true
            }
            Poll::Pending => {
                self.read_parked = true;
                false
            }
        }
    }

    /// Keeps one timer armed no later than the session's next deadline (see
    /// [`DeadlineTimer`]). Returns the time when the timer fired.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> Option<Instant> {
        let deadline = self.session.poll_timeout();
        let now = self.timer.poll(&self.rt, deadline, cx)?;
        self.session.handle_timeout(now);
        Some(now)
    }

    fn drain_events(&mut self, now: Instant) -> bool {
        let mut any = false;
        while let Some(e) = self.session.poll_event() {
            any = true;
            self.on_event(e, now);
        }
        any
    }
}

impl<R: Runtime> Future for Connection<R> {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.finished {
            return Poll::Ready(Ok(()));
        }
        this.read_parked = false;
        // One clock read per wake-up, refreshed where time may have passed: after handlers ran
        // (their durations are measured) and every few rounds of a busy loop.
        let mut now = this.rt.now();
        for round in 0..BUDGET {
            if round > 0 && round % 8 == 0 {
                now = this.rt.now();
            }
            let mut progressed = false;
            // Commands from handles and handlers.
            while this.commands_open {
                match Pin::new(&mut this.commands).poll_next(cx) {
                    Poll::Ready(Some(cmd)) => {
                        this.apply(cmd, now);
                        progressed = true;
                    }
                    Poll::Ready(None) => {
                        this.commands_open = false;
                    }
                    Poll::Pending => break,
                }
            }
            progressed |= this.poll_read(cx, now);
            progressed |= this.drain_events(now);
            // Handlers run here, on the connection's task. What a handler sent before finishing
            // (progress, log messages) must go out before its answer: drain commands first.
            while let Poll::Ready(Some(done)) = Pin::new(&mut this.handlers).poll_next(cx) {
                this.completed.push(done);
            }
            if !this.completed.is_empty() {
                progressed = true;
                now = this.rt.now();
                while this.commands_open {
                    match Pin::new(&mut this.commands).poll_next(cx) {
                        Poll::Ready(Some(cmd)) => this.apply(cmd, now),
                        Poll::Ready(None) => this.commands_open = false,
                        Poll::Pending => break,
                    }
                }
                let mut completed = std::mem::take(&mut this.completed);
                for ((), id, result) in completed.drain(..) {
                    this.on_handler_done(id, result, now);
                }
                this.completed = completed;
            }
            if let Some(fired) = this.poll_timer(cx) {
                now = fired;
                progressed = true;
            }
            progressed |= this.drain_events(now);
            progressed |= this.poll_write(cx);
            progressed |= this.drain_events(now);

            if this.session.is_closed() && this.out.is_empty() && !this.needs_flush {
                if !this.writer_closed && !this.write_failed {
                    match this.writer.as_mut().poll_close(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(_) => this.writer_closed = true,
                    }
                }
                this.finished = true;
                this.service.on_closed(&this.peer);
                // Outstanding callers learn the outcome from the session's close; anything
                // left (commands queued after close) fails now.
                for (_, w) in this.outbound.drain() {
                    let _ = w.reply.send(Err(Error::new(
                        ErrorKind::TransportClosed,
                        "the connection closed",
                    )));
                }
                this.commands.close();
                while let Ok(cmd) = this.commands.try_recv() {
                    if let Command::Request { reply, .. } = cmd {
                        let _ = reply.send(Err(Error::new(
                            ErrorKind::TransportClosed,
                            "the connection closed",
                        )));
                    }
                }
                let connection = this.peer.connection_id();
                let error = this.closed_error.take();
                this.telemetry.emit(|| TelemetryEvent::ConnectionClosed {
                    connection,
                    error: error.clone(),
                });
                return Poll::Ready(match error {
                    None => Ok(()),
                    Some(e) if e.kind() == ErrorKind::TransportClosed => Ok(()),
                    Some(e) => Err(e),
                });
            }
            if !progressed {
                return Poll::Pending;
            }
        }
        // Budget spent: let other tasks run, then continue.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
