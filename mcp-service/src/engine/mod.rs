//! The engine: one per-session dispatcher between a core session and the application, under
//! every transport.
//!
//! A [`Dispatcher`] owns what one MCP session's application side needs whatever carries it:
//! the [`Peer`] and the [`Service`], the requests the peer sent and the handler futures that
//! answer them, the requests this side sent and the callers waiting for them, their spans and
//! telemetry. It turns the core's events into service calls and outcomes, and the
//! application's commands into core calls, through [`Core`]: a byte-stream or message
//! [`Connection`](crate::Connection) drives a [`Session`] directly, the HTTP engine one session
//! of its [`Endpoint`](mcp_proto::http::Endpoint). The transports around it only move bytes.
//!
//! It never does IO, reads no clock (`now` is passed in) and holds no lock.

pub(crate) mod inbound;
pub(crate) mod outbound;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_channel::oneshot;
use mcp_proto::session::{Change, Event, InboundRequest, RequestOptions, Session};
use mcp_proto::{Error, ErrorKind, Instant, RequestId};
use serde_json::value::RawValue;

pub(crate) use inbound::{Guarded, HandlerOutput, Handlers, InboundState};
pub(crate) use outbound::Outbound;

use crate::cancel::CancellationToken;
use crate::peer::{Command, Peer, PeerInfo};
use crate::runtime::Runtime;
use crate::service::{IncomingRequest, RequestContext, Service};
use crate::telemetry::{Direction, Outcome, Telemetry, TelemetryEvent};

/// The core side of one session, as the dispatcher drives it: a [`Session`] itself, or one
/// session of an endpoint.
pub(crate) trait Core {
    /// [`Session::send_request`].
    fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error>;
    /// [`Session::cancel`].
    fn cancel(&mut self, now: Instant, id: &RequestId, reason: Option<&str>);
    /// [`Session::notify_related`].
    fn notify(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error>;
    /// [`Session::report_progress_with_meta`].
    fn progress(&mut self, now: Instant, report: ProgressReport) -> Result<(), Error>;
    /// [`Session::respond`] or [`Session::respond_error`].
    fn respond(
        &mut self,
        now: Instant,
        id: &RequestId,
        result: Result<Box<RawValue>, Error>,
    ) -> Result<(), Error>;
    /// [`Session::publish`]: how many listen streams it was queued on.
    fn publish(&mut self, now: Instant, change: &Change) -> usize;
    /// [`Session::close`].
    fn close(&mut self, now: Instant);
    /// [`Session::set_log_level`] (a client's; nothing for a server's).
    fn set_log_level(&mut self, _level: Option<mcp_proto::schema::LoggingLevel>) {}
}

/// A progress report of an inbound request, as a handler sent it.
pub(crate) struct ProgressReport {
    pub(crate) id: RequestId,
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: Option<String>,
    pub(crate) meta: Option<Box<RawValue>>,
}

impl Core for Session {
    fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        Session::send_request(self, now, method, params, opts)
    }
    fn cancel(&mut self, now: Instant, id: &RequestId, reason: Option<&str>) {
        let _ = Session::cancel(self, now, id, reason);
    }
    fn notify(
        &mut self,
        _now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error> {
        self.notify_related(method, params, related)
    }
    fn progress(&mut self, _now: Instant, r: ProgressReport) -> Result<(), Error> {
        self.report_progress_with_meta(&r.id, r.progress, r.total, r.message.as_deref(), r.meta)
    }
    fn respond(
        &mut self,
        _now: Instant,
        id: &RequestId,
        result: Result<Box<RawValue>, Error>,
    ) -> Result<(), Error> {
        match result {
            Ok(raw) => Session::respond(self, id, raw),
            Err(e) => self.respond_error(id, e),
        }
    }
    fn publish(&mut self, _now: Instant, change: &Change) -> usize {
        Session::publish(self, change)
    }
    fn close(&mut self, now: Instant) {
        Session::close(self, now)
    }
    fn set_log_level(&mut self, level: Option<mcp_proto::schema::LoggingLevel>) {
        Session::set_log_level(self, level)
    }
}

/// The application side of one MCP session (see the module doc).
pub(crate) struct Dispatcher {
    peer: Peer,
    service: Arc<dyn Service>,
    telemetry: Telemetry,
    inbound: HashMap<RequestId, InboundState>,
    outbound: Outbound,
    /// A client's handshake outcome, for whoever waits on it.
    ready: Option<oneshot::Sender<Result<PeerInfo, Error>>>,
    /// Recorded as `session` on every request span (an HTTP session's id).
    label: Option<String>,
    /// How the session ended (`Event::Closed`), until [`finish`](Self::finish).
    closed: Option<Option<Error>>,
    finished: bool,
    /// The head of the HTTP request whose requests are being started (set by the HTTP engine
    /// around them), given to each request's context.
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub(crate) http: Option<Arc<http::request::Parts>>,
}

impl Dispatcher {
    /// The dispatcher of a session whose application is `service`, reached through `peer`.
    pub(crate) fn new(peer: Peer, service: Arc<dyn Service>, telemetry: Telemetry) -> Self {
        let connection = peer.connection_id();
        telemetry.emit(|| TelemetryEvent::ConnectionOpened { connection });
        Dispatcher {
            peer,
            service,
            telemetry,
            inbound: HashMap::new(),
            outbound: Outbound::default(),
            ready: None,
            label: None,
            closed: None,
            finished: false,
            #[cfg(any(feature = "http-server", feature = "ws"))]
            http: None,
        }
    }

    /// Also reports the handshake's outcome to `ready`.
    pub(crate) fn with_ready(mut self, ready: oneshot::Sender<Result<PeerInfo, Error>>) -> Self {
        self.ready = Some(ready);
        self
    }

    /// Records `label` as the `session` of every request span.
    #[cfg(feature = "http-server")]
    pub(crate) fn with_label(mut self, label: String) -> Self {
        self.label = Some(label);
        self
    }

    /// The handshake failed before it could start.
    pub(crate) fn fail_ready(&mut self, e: Error) {
        if let Some(tx) = self.ready.take() {
            let _ = tx.send(Err(e));
        }
    }

    /// The handle of the session this dispatcher serves.
    #[cfg(feature = "http-server")]
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Carries out one command of the application (a `Peer` call).
    pub(crate) fn apply(&mut self, core: &mut impl Core, cmd: Command, now: Instant) {
        let connection = self.peer.connection_id();
        self.peer.shared.flow.taken(cmd.cost());
        match cmd {
            Command::Request {
                key,
                method,
                params,
                opts,
                reply,
                progress,
            } => {
                let sent = core.send_request(now, &method, params, opts);
                let span = self.outbound.sent(sent, key, method, reply, progress, now);
                if let (Some(span), Some(label)) = (span, &self.label) {
                    span.record("session", label.as_str());
                }
            }
            Command::Cancel { key, reason } => {
                if let Some((id, waiter)) = self.outbound.cancel(key) {
                    if let Some(w) = waiter {
                        w.tracked.complete(
                            &self.telemetry,
                            connection,
                            &id,
                            Outcome::Cancelled,
                            now,
                        );
                    }
                    core.cancel(now, &id, reason.as_deref());
                }
            }
            Command::Notify {
                method,
                params,
                related,
            } => match core.notify(now, &method, params, related) {
                Ok(()) => self
                    .telemetry
                    .notification(connection, Direction::Outbound, &method),
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
                let report = ProgressReport {
                    id,
                    progress,
                    total,
                    message,
                    meta,
                };
                if let Err(e) = core.progress(now, report) {
                    tracing::debug!(target: "mcp", error = %e, "progress not sent");
                }
            }
            Command::Publish(change) => {
                if core.publish(now, &change) > 0 {
                    self.telemetry.notification(
                        connection,
                        Direction::Outbound,
                        &change.method().into(),
                    );
                }
            }
            Command::SetLogLevel(level) => core.set_log_level(level),
            Command::Close => core.close(now),
        }
    }

    /// A handler finished: its answer goes to the peer, unless the request was cancelled.
    pub(crate) fn answer(
        &mut self,
        core: &mut impl Core,
        id: RequestId,
        result: Result<Box<RawValue>, Error>,
        now: Instant,
    ) {
        let Some(st) = self.inbound.remove(&id) else {
            return; // cancelled, or the session ended: never answered
        };
        let outcome = Outcome::of(&result);
        if let Err(e) = core.respond(now, &id, result) {
            tracing::debug!(target: "mcp", %id, error = %e, "answer not sent");
        }
        st.tracked.complete(
            &self.telemetry,
            self.peer.connection_id(),
            &id,
            outcome,
            now,
        );
    }

    /// Handles one event of the session. A request's handler starts on `handlers`, tagged
    /// with `tag`.
    pub(crate) fn on_event<R: Runtime, T: Copy + Unpin + Send + 'static>(
        &mut self,
        event: Event,
        now: Instant,
        handlers: &mut Handlers<R, T>,
        tag: T,
    ) {
        let connection = self.peer.connection_id();
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
                tracing::debug!(target: "mcp", connection, %version, "handshake complete");
                if let Some(tx) = self.ready.take() {
                    let _ = tx.send(Ok(info.clone()));
                }
                if let Ok(mut g) = self.peer.shared.info.write() {
                    *g = Some(info);
                }
                self.service.on_ready(&self.peer);
            }
            Event::Request(req) => {
                let handler = self.start(req, now, tag);
                handlers.run(handler);
            }
            Event::Notification { method, params } => {
                self.telemetry
                    .notification(connection, Direction::Inbound, &method);
                self.service
                    .handle_notification(&method, params.as_deref(), &self.peer);
            }
            Event::Response { id, result } => {
                if let Some(w) = self.outbound.finish(&id) {
                    w.tracked
                        .complete(&self.telemetry, connection, &id, Outcome::of(&result), now);
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
                tracing::debug!(target: "mcp", connection, %id, reason = reason.as_deref().unwrap_or(""), "peer cancelled request");
                if let Some(st) = self.inbound.remove(&id) {
                    st.cancel.cancel();
                    st.tracked
                        .complete(&self.telemetry, connection, &id, Outcome::Cancelled, now);
                }
            }
            Event::UnknownResponse { id } => {
                tracing::debug!(target: "mcp", connection, %id, "response for an unknown request id");
            }
            Event::PeerError(e) => {
                tracing::warn!(target: "mcp", connection, error = %e, "the peer reported an error")
            }
            Event::InvalidMessage(e) => {
                tracing::warn!(target: "mcp", connection, error = %e, "invalid message from the peer")
            }
            Event::Closed(error) => self.on_closed(error, now),
            _ => {}
        }
    }

    /// Starts handling a request from the peer: reports it, calls the service inside the
    /// request's span, and records it.
    fn start<T>(&mut self, req: InboundRequest, now: Instant, tag: T) -> Guarded<T> {
        let cancel = CancellationToken::new();
        let tracked = inbound::Tracked::new(req.method.clone(), Direction::Inbound, &req.id, now);
        let span = tracked.span.clone();
        if let Some(label) = &self.label {
            span.record("session", label.as_str());
        }
        // A W3C trace context in `_meta` joins the request's span to the caller's trace.
        if let Some((parent, state)) = inbound::trace_context(req.params.as_deref()) {
            span.record("traceparent", parent.as_str());
            if let Some(state) = &state {
                span.record("tracestate", state.as_str());
            }
        }
        self.telemetry.emit(|| TelemetryEvent::RequestReceived {
            connection: self.peer.connection_id(),
            id: req.id.clone(),
            method: req.method.to_string(),
        });
        let cx = RequestContext {
            id: req.id.clone(),
            progress_token: req.progress_token,
            peer: self.peer.clone(),
            cancel: cancel.clone(),
            era: req.era.map(Arc::new),
            #[cfg(any(feature = "http-server", feature = "ws"))]
            http: self.http.clone(),
        };
        let fut = {
            let _e = span.enter();
            self.service.handle_request(
                IncomingRequest {
                    method: req.method.clone(),
                    params: req.params,
                },
                cx,
            )
        };
        self.inbound.insert(
            req.id.clone(),
            InboundState {
                cancel: cancel.clone(),
                tracked,
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

    /// The session ended: handlers are cancelled, waiting callers and a pending handshake
    /// fail.
    fn on_closed(&mut self, error: Option<Error>, now: Instant) {
        let connection = self.peer.connection_id();
        tracing::debug!(target: "mcp", connection, error = ?error, "connection closed");
        self.peer.shared.closed.store(true, Ordering::Release);
        self.peer.shared.flow.wake_all();
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
        self.fail_outbound(now);
        self.closed = Some(error);
    }

    /// Every caller still waiting learns that the session ended.
    fn fail_outbound(&mut self, now: Instant) {
        let connection = self.peer.connection_id();
        for (id, w) in self.outbound.drain() {
            w.tracked
                .complete(&self.telemetry, connection, &id, Outcome::Closed, now);
            let _ = w.reply.send(Err(Error::new(
                ErrorKind::TransportClosed,
                "the connection closed",
            )));
        }
    }

    /// Refuses a command that arrived after the session ended.
    pub(crate) fn refuse(cmd: Command) {
        if let Command::Request { reply, .. } = cmd {
            let _ = reply.send(Err(Error::new(
                ErrorKind::TransportClosed,
                "the connection closed",
            )));
        }
    }

    /// Ends the application side once the transport is done: the service hears of it and the
    /// connection's close is reported. Returns the error the session ended with.
    pub(crate) fn finish(&mut self, now: Instant) -> Option<Error> {
        if self.finished {
            return None;
        }
        self.finished = true;
        self.peer.shared.closed.store(true, Ordering::Release);
        self.peer.shared.flow.wake_all();
        for (_, st) in self.inbound.drain() {
            st.cancel.cancel();
        }
        self.fail_outbound(now);
        self.service.on_closed(&self.peer);
        let connection = self.peer.connection_id();
        let error = self.closed.take().flatten();
        self.telemetry.emit(|| TelemetryEvent::ConnectionClosed {
            connection,
            error: error.clone(),
        });
        error
    }
}

impl Drop for Dispatcher {
    /// A dispatcher dropped before its session ended (its serve or connect future was
    /// dropped) stops its handlers: no task keeps running for a session nobody drives.
    fn drop(&mut self) {
        self.peer.shared.closed.store(true, Ordering::Release);
        self.peer.shared.flow.wake_all();
        for (_, st) in self.inbound.drain() {
            st.cancel.cancel();
        }
        if let Some(tx) = self.ready.take() {
            let _ = tx.send(Err(Error::new(
                ErrorKind::TransportClosed,
                "the connection was dropped",
            )));
        }
    }
}
