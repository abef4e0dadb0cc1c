//! The connection engine: one task that drives one core `Session` over a byte stream.
//!
//! It reads the transport, feeds the session, dispatches events (inbound requests to the
//! [`Service`], outcomes to waiting callers) through the engine's per-session dispatcher (the
//! same one every HTTP session has), runs request handlers (on tasks of their own where the runtime
//! spawns), arms one timer for the session's next deadline and writes what the session
//! transmits — batching writes and flushing once per wake-up. The session is owned here alone:
//! no lock on the hot path.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_channel::mpsc::{self, UnboundedReceiver};
use futures_channel::oneshot;
use futures_core::Stream;
use futures_io::{AsyncRead, AsyncWrite};
use mcp_proto::session::{Config, Framing, Session, Transmit};
use mcp_proto::{Error, ErrorKind, Instant};

use crate::engine::{Dispatcher, HandlerOutput, Handlers};
use crate::peer::{Command, Peer, PeerInfo};
use crate::runtime::{DeadlineTimer, Runtime};
use crate::service::Service;
use crate::telemetry::Telemetry;

/// A bidirectional byte stream (stdio, a child's pipes, TCP, a Unix socket, an in-memory pipe).
pub struct ByteStream {
    pub(crate) reader: Pin<Box<dyn AsyncRead + Send>>,
    pub(crate) writer: Pin<Box<dyn AsyncWrite + Send>>,
}

/// The read half of a [`ByteStream`].
pub type ReadHalf = Pin<Box<dyn AsyncRead + Send>>;
/// The write half of a [`ByteStream`].
pub type WriteHalf = Pin<Box<dyn AsyncWrite + Send>>;

impl ByteStream {
    /// The stream's read and write halves.
    pub fn into_parts(self) -> (ReadHalf, WriteHalf) {
        (self.reader, self.writer)
    }

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

/// A transport of whole messages: one JSON-RPC message (or batch) per frame, as WebSocket
/// carries them, or any framed channel a host plugs in. The connection feeds each received
/// frame to the session as one message ([`Session::handle_message`]) and sends each message
/// the session transmits as one frame (the session's framing is [`Framing::Raw`]: no newline).
///
/// The methods follow `futures`' `Stream` and `Sink`: [`poll_recv`](Self::poll_recv) is the
/// stream, [`poll_ready`](Self::poll_ready) / [`start_send`](Self::start_send) /
/// [`poll_flush`](Self::poll_flush) / [`poll_close`](Self::poll_close) the sink. While the
/// sink is not ready the connection reads no more frames (backpressure on a peer that does not
/// read).
pub trait MessageTransport: Send + 'static {
    /// The next received frame; `None` at the end of input.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<std::io::Result<Vec<u8>>>>;
    /// Ready to take one frame with [`start_send`](Self::start_send).
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>>;
    /// Queues one frame (after `poll_ready` said ready).
    fn start_send(&mut self, message: Vec<u8>) -> std::io::Result<()>;
    /// Sends what was queued.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>>;
    /// Flushes and closes the sending side (a WebSocket runs its close handshake here).
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>>;
}

/// A transport that works with the session itself (the HTTP client): it hears what each
/// outgoing message is, and hands what arrives (messages, transport failures of requests, a
/// restart of the handshake) to the session directly.
pub(crate) trait SessionWire: Send + 'static {
    /// One message `session` wrote, as `transmit` describes it.
    fn send(&mut self, now: Instant, session: &Session, transmit: &Transmit, message: Vec<u8>);
    /// Moves what arrived into `session`; whether anything happened. Registers for a wake-up
    /// when nothing did.
    fn poll_recv(&mut self, cx: &mut Context<'_>, session: &mut Session, now: Instant) -> bool;
    /// Ends the transport (an HTTP session is deleted).
    fn poll_close(&mut self, cx: &mut Context<'_>, now: Instant) -> Poll<()>;
}

/// What a connection runs over: a byte stream (NDJSON), a message transport, or an HTTP
/// client transport.
pub enum Transport {
    /// A byte stream: messages are newline-delimited JSON.
    Bytes(ByteStream),
    /// One message per frame.
    Messages(Box<dyn MessageTransport>),
    /// Streamable HTTP or legacy HTTP+SSE from the client side
    /// ([`http_transport`](crate::http_client::http_transport)).
    #[cfg(feature = "http-client")]
    Http(crate::http_client::HttpStream),
}

impl Transport {
    /// A message transport.
    pub fn messages(transport: impl MessageTransport) -> Self {
        Transport::Messages(Box::new(transport))
    }

    /// `config` with the framing this transport needs.
    pub(crate) fn adapt(&self, mut config: Config) -> Config {
        config.framing = match self {
            Transport::Bytes(_) => Framing::Ndjson,
            Transport::Messages(_) => Framing::Raw,
            #[cfg(feature = "http-client")]
            Transport::Http(_) => Framing::Raw,
        };
        config
    }
}

impl From<ByteStream> for Transport {
    fn from(stream: ByteStream) -> Self {
        Transport::Bytes(stream)
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Bytes(_) => f.write_str("Transport::Bytes"),
            Transport::Messages(_) => f.write_str("Transport::Messages"),
            #[cfg(feature = "http-client")]
            Transport::Http(_) => f.write_str("Transport::Http"),
        }
    }
}

const READ_CHUNK: usize = 64 * 1024;
/// How much unwritten output stops the reading of more input: four times the output budget,
/// at least 16 MiB. Well above the budget, which paces the application's own messages: two
/// peers whose applications both send at their budgets still read each other (the answers
/// that fill this are bounded by the in-flight limits), and a peer that sends requests without
/// reading their answers is stopped here.
fn read_stop(budget: usize) -> usize {
    budget.saturating_mul(4).max(16 * 1024 * 1024)
}

/// Input held unprocessed at most while the peer does not read (see
/// `Connection::poll_read_held`).
const HELD_INPUT: usize = 64 * 1024;
/// Iterations of the loop before yielding to the executor.
const BUDGET: usize = 64;
/// Inbound messages handed out before the connection yields once: the tasks they woke (the
/// callers of answered requests, new handlers) run and their output is written while the
/// rest of a read waits, so the peer gets work back before the whole read is dispatched.
const DISPATCH_SLICE: usize = 8;

/// The error of a failed write: the peer closing its end is the transport closing, not a
/// fault of it.
fn write_error(e: std::io::Error) -> Error {
    let kind = match e.kind() {
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset => {
            ErrorKind::TransportClosed
        }
        _ => ErrorKind::TransportError,
    };
    Error::new(kind, format!("write failed: {e}")).with_source(e)
}

/// The future that runs one connection until it closes. Await it or spawn it.
#[must_use = "a connection does nothing unless awaited or spawned"]
pub struct Connection<R: Runtime> {
    rt: R,
    session: Session,
    reader: Option<ReadHalf>,
    /// The message transport, when the connection runs over one (then `reader` is `None` and
    /// `writer` unused).
    messages: Option<Box<dyn MessageTransport>>,
    /// The session-aware transport, when the connection runs over one.
    wire: Option<Box<dyn SessionWire>>,
    /// The message transport's input ended or failed.
    input_done: bool,
    /// The message transport's sink was not ready: read no more until it is.
    send_blocked: bool,
    /// The reader returned `Pending` during the current `poll`: its waker is registered, so
    /// reading again before the next wake-up would only cost a system call (`EAGAIN`).
    read_parked: bool,
    writer: WriteHalf,
    read_buf: Box<[u8]>,
    out: Vec<u8>,
    out_pos: usize,
    needs_flush: bool,
    writer_closed: bool,
    write_failed: bool,
    commands: UnboundedReceiver<Command>,
    commands_open: bool,
    dispatcher: Dispatcher,
    handlers: Handlers<R, ()>,
    completed: Vec<HandlerOutput<()>>,
    timer: DeadlineTimer,
    finished: bool,
    /// The connection's handle: its output budget is published and enforced through it.
    peer: Peer,
    /// The session ended with output still unwritten: when the connection stops waiting for
    /// the peer to read it (the session's close timeout after the end).
    flush_deadline: Option<Instant>,
    /// Inbound messages handed out since the connection last yielded (see [`DISPATCH_SLICE`]).
    dispatched: usize,
    /// Input read while the peer did not read, not yet handed to the session.
    held: Vec<u8>,
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
    transport: impl Into<Transport>,
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
    let connection_id = peer.connection_id();
    tracing::debug!(target: "mcp", connection = connection_id, client = session.is_client(), "connection opened");
    let mut dispatcher = Dispatcher::new(peer.clone(), service, telemetry).with_ready(ready_tx);
    let now = rt.now();
    if session.is_client()
        && session.state() == mcp_proto::session::State::AwaitingInit
        && let Err(e) = session.start(now)
    {
        dispatcher.fail_ready(e);
    }
    let unused = || -> WriteHalf { Box::pin(futures_util::io::sink()) };
    let (reader, writer, messages, wire, buf) = match transport.into() {
        Transport::Bytes(b) => (Some(b.reader), b.writer, None, None, READ_CHUNK),
        Transport::Messages(m) => (None, unused(), Some(m), None, 0),
        #[cfg(feature = "http-client")]
        Transport::Http(h) => (None, unused(), None, Some(h.0), 0),
    };
    let conn = Connection {
        handlers: Handlers::new(&rt),
        rt,
        session,
        reader,
        messages,
        wire,
        input_done: false,
        send_blocked: false,
        read_parked: false,
        writer,
        read_buf: vec![0u8; buf].into_boxed_slice(),
        out: Vec::with_capacity(buf),
        out_pos: 0,
        needs_flush: false,
        writer_closed: false,
        write_failed: false,
        commands: rx,
        commands_open: true,
        dispatcher,
        completed: Vec::new(),
        timer: DeadlineTimer::default(),
        finished: false,
        peer: peer.clone(),
        flush_deadline: None,
        dispatched: 0,
        held: Vec::new(),
    };
    (peer, conn, ready_rx)
}

impl<R: Runtime> Connection<R> {
    /// Gives every request's context `head` as its HTTP request (a connection opened by one).
    #[cfg(feature = "http-server")]
    pub(crate) fn with_http(mut self, head: Option<Arc<http::request::Parts>>) -> Self {
        self.dispatcher.http = head;
        self
    }

    /// Carries out every queued command.
    fn drain_commands(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut any = false;
        if self.send_blocked {
            // The message sink takes nothing: what the application sends waits in the
            // channel, where the output budget counts it (the session's queue is not counted).
            return false;
        }
        while self.commands_open {
            match Pin::new(&mut self.commands).poll_next(cx) {
                Poll::Ready(Some(cmd)) => {
                    self.dispatcher.apply(&mut self.session, cmd, now);
                    any = true;
                }
                Poll::Ready(None) => self.commands_open = false,
                Poll::Pending => break,
            }
        }
        any
    }

    /// Fills the output buffer from the session and writes as much as the transport takes.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        if self.write_failed {
            return false;
        }
        if self.messages.is_some() {
            return self.poll_send_messages(cx);
        }
        if let Some(wire) = self.wire.as_mut() {
            let mut now = None;
            loop {
                let mut message = Vec::new();
                let Some(t) = self.session.poll_transmit(&mut message) else {
                    break;
                };
                let now = *now.get_or_insert_with(|| self.rt.now());
                wire.send(now, &self.session, &t, message);
                progressed = true;
            }
            return progressed;
        }
        loop {
            // Drop what was already written before appending more, so that the buffer holds
            // only unwritten bytes (and the backpressure check counts only those).
            if self.out_pos > 0 && self.out_pos >= self.out.len() / 2 {
                self.out.drain(..self.out_pos);
                self.out_pos = 0;
            }
            // Everything the session has is encoded at once: what the application may add is
            // bounded by the output budget, and what the peer asks for by reading stopping at
            // the budget (see `poll_read`).
            while self.session.poll_transmit(&mut self.out).is_some() {
                progressed = true;
            }
            self.peer
                .shared
                .flow
                .set_backlog(self.out.len() - self.out_pos);
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
                    self.peer
                        .shared
                        .flow
                        .set_backlog(self.out.len() - self.out_pos);
                }
                Poll::Ready(Err(e)) => {
                    self.fail_transport(write_error(e));
                    return true;
                }
                Poll::Pending => return progressed,
            }
        }
        if self.needs_flush {
            match self.writer.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.needs_flush = false,
                Poll::Ready(Err(e)) => {
                    self.fail_transport(
                        Error::new(ErrorKind::TransportError, format!("flush failed: {e}"))
                            .with_source(e),
                    );
                    return true;
                }
                Poll::Pending => {}
            }
        }
        progressed
    }

    /// Sends what the session transmits, one message per frame, as the sink takes them.
    fn poll_send_messages(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(t) = self.messages.as_mut() else {
            return false;
        };
        let mut progressed = false;
        let mut failed = None;
        self.send_blocked = false;
        while self.session.has_transmit() {
            match t.poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => {
                    failed = Some(e);
                    break;
                }
                Poll::Pending => {
                    self.send_blocked = true;
                    break;
                }
            }
            let mut message = Vec::new();
            if self.session.poll_transmit(&mut message).is_none() {
                break;
            }
            if let Err(e) = t.start_send(message) {
                failed = Some(e);
                break;
            }
            self.needs_flush = true;
            progressed = true;
        }
        if failed.is_none() && self.needs_flush {
            match t.poll_flush(cx) {
                Poll::Ready(Ok(())) => self.needs_flush = false,
                Poll::Ready(Err(e)) => failed = Some(e),
                Poll::Pending => {}
            }
        }
        if let Some(e) = failed {
            self.fail_transport(write_error(e));
            return true;
        }
        progressed
    }

    fn fail_transport(&mut self, e: Error) {
        self.write_failed = true;
        // Nothing more can be written or flushed: a flush still owed must not hold the close.
        self.needs_flush = false;
        self.out.clear();
        self.out_pos = 0;
        self.peer.shared.flow.set_backlog(0);
        let now = self.rt.now();
        self.session.handle_closed(now, Some(e));
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if self.read_parked || self.session.events_ready() > 0 {
            // Parked until woken, or what was read is not all handed out yet.
            return false;
        }
        if self.out.len() - self.out_pos >= read_stop(self.peer.output_budget()) {
            // Backpressure: the peer is not reading.
            return self.poll_read_held(cx, now);
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.session.handle_bytes(now, &held);
            return true;
        }
        if let Some(wire) = self.wire.as_mut() {
            return wire.poll_recv(cx, &mut self.session, now);
        }
        let read = match self.messages.as_mut() {
            Some(t) => {
                if self.send_blocked || self.write_failed || self.input_done {
                    return false;
                }
                match t.poll_recv(cx) {
                    Poll::Ready(Some(Ok(message))) => {
                        self.session.handle_message(now, &message);
                        return true;
                    }
                    Poll::Ready(None) => Poll::Ready(Ok(0)),
                    Poll::Ready(Some(Err(e))) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            }
            None => {
                let Some(reader) = self.reader.as_mut() else {
                    return false;
                };
                reader.as_mut().poll_read(cx, &mut self.read_buf)
            }
        };
        match read {
            Poll::Ready(Ok(n)) if n > 0 => {
                self.session
                    .handle_bytes(now, self.read_buf.get(..n).unwrap_or_default());
                true
            }
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => true,
            Poll::Ready(end) => {
                self.input_ended(now, end.map(drop));
                true
            }
            Poll::Pending => {
                self.read_parked = true;
                false
            }
        }
    }

    /// The input ended (`Ok`) or failed: the session closes, gracefully or with the error.
    fn input_ended(&mut self, now: Instant, end: std::io::Result<()>) {
        self.reader = None;
        self.input_done = true;
        match end {
            Ok(()) => self.session.handle_input_closed(now),
            Err(e) => self.session.handle_closed(
                now,
                Some(
                    Error::new(ErrorKind::TransportError, format!("read failed: {e}"))
                        .with_source(e),
                ),
            ),
        }
    }

    /// While the peer does not read, a byte stream's input is still watched, up to
    /// [`HELD_INPUT`] bytes held for later: a host that closes its side (it is gone) ends the
    /// session (within its close timeout) instead of leaving it waiting for a reader.
    fn poll_read_held(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if self.held.len() >= HELD_INPUT {
            return false;
        }
        let Some(reader) = self.reader.as_mut() else {
            return false;
        };
        let room = (HELD_INPUT - self.held.len()).min(self.read_buf.len());
        let buf = self.read_buf.get_mut(..room).unwrap_or_default();
        match reader.as_mut().poll_read(cx, buf) {
            Poll::Ready(Ok(n)) if n > 0 => {
                self.held
                    .extend_from_slice(self.read_buf.get(..n).unwrap_or_default());
                true
            }
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => true,
            Poll::Ready(end) => {
                // What arrived before the end is served first.
                let held = std::mem::take(&mut self.held);
                self.session.handle_bytes(now, &held);
                self.input_ended(now, end.map(drop));
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
        let deadline = self.session.poll_timeout().or(self.flush_deadline);
        let now = self.timer.poll(&self.rt, deadline, cx)?;
        self.session.handle_timeout(now);
        if self.flush_deadline.is_some_and(|d| d <= now) {
            // The peer did not read what was left within the close timeout: drop it.
            tracing::debug!(target: "mcp", unwritten = self.out.len() - self.out_pos, "dropping output the peer did not read after the session ended");
            self.out.clear();
            self.out_pos = 0;
            self.needs_flush = false;
            self.peer.shared.flow.set_backlog(0);
        }
        Some(now)
    }

    /// Hands the session's events out, up to the slice of this turn.
    fn drain_events(&mut self, now: Instant) -> bool {
        let mut any = false;
        while self.dispatched < DISPATCH_SLICE {
            let Some(e) = self.session.poll_event() else {
                break;
            };
            any = true;
            self.dispatched += 1;
            self.dispatcher.on_event(e, now, &mut self.handlers, ());
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
        this.dispatched = 0;
        // One clock read per wake-up, refreshed where time may have passed: after handlers ran
        // (their durations are measured) and every few rounds of a busy loop.
        let mut now = this.rt.now();
        for round in 0..BUDGET {
            if round > 0 && round % 8 == 0 {
                now = this.rt.now();
            }
            let mut progressed = false;
            // Handlers that finished, then the commands from handles and handlers: what a
            // handler sent before finishing (progress, log messages) goes out before its
            // answer.
            this.handlers.poll_done(cx, &mut this.completed);
            progressed |= this.drain_commands(cx, now);
            if !this.completed.is_empty() {
                progressed = true;
                now = this.rt.now();
                let mut completed = std::mem::take(&mut this.completed);
                for ((), id, result) in completed.drain(..) {
                    if let Some(result) = result {
                        this.dispatcher.answer(&mut this.session, id, result, now);
                    }
                }
                this.completed = completed;
            }
            progressed |= this.poll_read(cx, now);
            progressed |= this.drain_events(now);
            if let Some(fired) = this.poll_timer(cx) {
                now = fired;
                progressed = true;
            }
            progressed |= this.drain_events(now);
            progressed |= this.poll_write(cx);
            progressed |= this.drain_events(now);
            // Handlers just spawned run before more input is read: answers go out while
            // requests come in, instead of after a whole budget of reading.
            let spawned = this.handlers.take_spawned() > 0;

            if this.session.is_closed()
                && this.flush_deadline.is_none()
                && (!this.out.is_empty() || this.needs_flush)
            {
                this.flush_deadline = this
                    .session
                    .config()
                    .close_timeout
                    .map(|t| this.rt.now() + t);
                if this.flush_deadline.is_some() {
                    progressed = true; // arm the timer
                }
            }
            if this.session.is_closed() && this.out.is_empty() && !this.needs_flush {
                if !this.writer_closed && !this.write_failed {
                    let closed = match (this.messages.as_mut(), this.wire.as_mut()) {
                        (Some(t), _) => t.poll_close(cx),
                        (None, Some(w)) => w.poll_close(cx, now).map(Ok),
                        (None, None) => this.writer.as_mut().poll_close(cx),
                    };
                    match closed {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(_) => this.writer_closed = true,
                    }
                }
                this.finished = true;
                // Commands queued after the close fail now.
                this.commands.close();
                while let Ok(cmd) = this.commands.try_recv() {
                    Dispatcher::refuse(cmd);
                }
                let error = this.dispatcher.finish(now);
                return Poll::Ready(match error {
                    None => Ok(()),
                    Some(e) if e.kind() == ErrorKind::TransportClosed => Ok(()),
                    Some(e) => Err(e),
                });
            }
            if spawned || this.dispatched >= DISPATCH_SLICE {
                cx.waker().wake_by_ref();
                return Poll::Pending;
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
