//! [`Peer`]: a cloneable handle to the other side of one connection.
//!
//! Requests, notifications, progress and cancellation travel as commands to the connection's
//! task, which owns the core session; outcomes come back on one-shot channels. Dropping a
//! request future before it completes cancels the request on the wire.

use std::borrow::Cow;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll, Waker};

use futures_channel::mpsc::UnboundedSender;
use futures_channel::oneshot;
use mcp_proto::session::RequestOptions;
use mcp_proto::{Duration, Error, ErrorKind, ProtocolVersion, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// Progress reported on an outbound request.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Progress so far (strictly increasing).
    pub progress: f64,
    /// Total, if known.
    pub total: Option<f64>,
    /// Message, if any.
    pub message: Option<String>,
    /// The notification's `_meta` (e.g. streamed tool content).
    pub meta: Option<Box<RawValue>>,
}

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(Progress) + Send + 'static>;

pub(crate) enum Command {
    Request {
        key: u64,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
        reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
        progress: Option<ProgressFn>,
    },
    Cancel {
        key: u64,
        reason: Option<String>,
    },
    Notify {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    },
    Progress {
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Box<RawValue>>,
    },
    /// A change for the session's `subscriptions/listen` streams ([`Session::publish`]).
    ///
    /// [`Session::publish`]: mcp_proto::session::Session::publish
    Publish(mcp_proto::session::Change),
    /// A stateless-era client's log level for its requests ([`Session::set_log_level`]).
    ///
    /// [`Session::set_log_level`]: mcp_proto::session::Session::set_log_level
    SetLogLevel(Option<mcp_proto::schema::LoggingLevel>),
    Close,
}

impl Command {
    /// What a command counts against the output budget: the size of the message it becomes
    /// (about), or 0 for control commands, which are never held back.
    pub(crate) fn cost(&self) -> usize {
        const OVERHEAD: usize = 64;
        let raw = |p: &Option<Box<RawValue>>| p.as_ref().map_or(0, |p| p.get().len());
        match self {
            Command::Request { method, params, .. } | Command::Notify { method, params, .. } => {
                OVERHEAD + method.len() + raw(params)
            }
            Command::Progress { message, meta, .. } => {
                OVERHEAD + message.as_ref().map_or(0, String::len) + raw(meta)
            }
            _ => 0,
        }
    }
}

/// The future of [`Peer::writable`].
#[must_use = "futures do nothing unless awaited"]
pub struct Writable<'a> {
    peer: &'a Peer,
}

impl std::fmt::Debug for Writable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writable")
    }
}

impl Future for Writable<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let peer = self.peer;
        peer.shared.flow.poll_room(cx, || peer.is_closed())
    }
}

/// What is known about the peer once the handshake completed.
#[derive(Debug, Clone)]
pub struct PeerInfo {
    /// The negotiated protocol version.
    pub version: ProtocolVersion,
    /// The peer's `Implementation` object.
    pub info: Box<RawValue>,
    /// The peer's capabilities.
    pub capabilities: Box<RawValue>,
    /// Server instructions (seen by clients).
    pub instructions: Option<String>,
}

impl PeerInfo {
    /// The peer's `Implementation` (its name, version, title…), parsed from
    /// [`info`](Self::info); `None` when it does not parse as one.
    pub fn implementation(&self) -> Option<mcp_proto::schema::Implementation> {
        serde_json::from_str(self.info.get()).ok()
    }
}

pub(crate) struct Shared {
    next_key: AtomicU64,
    pub(crate) info: RwLock<Option<PeerInfo>>,
    pub(crate) closed: AtomicBool,
    pub(crate) id: u64,
    pub(crate) flow: Flow,
}

/// The most bytes of output one connection (or HTTP session) lets wait for its peer by
/// default: messages its handles sent that the connection has not taken yet, plus what the
/// connection encoded and the transport has not accepted. See [`Peer::writable`].
pub const DEFAULT_OUTPUT_BUDGET: usize = 4 * 1024 * 1024;

/// The output budget of one connection, shared by its handles and its engine.
///
/// Handles count what they send (`queued`, by [`Command::cost`]) and the engine takes it off
/// when it carries the command out; the engine publishes what it holds unwritten (`backlog`).
/// While the sum is at the limit, notifications and requests from the application wait
/// ([`Peer::writable`]) or, sent without waiting, are refused and counted: a peer that does
/// not read cannot make this side buffer without bound.
pub(crate) struct Flow {
    queued: AtomicUsize,
    backlog: AtomicUsize,
    limit: AtomicUsize,
    /// Some handle waits for room (the engine wakes `wakers` when there is).
    waiting: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
    dropped: AtomicU64,
}

impl Flow {
    fn new() -> Self {
        Flow {
            queued: AtomicUsize::new(0),
            backlog: AtomicUsize::new(0),
            limit: AtomicUsize::new(DEFAULT_OUTPUT_BUDGET),
            waiting: AtomicBool::new(false),
            wakers: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
        }
    }

    fn has_room(&self) -> bool {
        self.queued.load(Ordering::Acquire) + self.backlog.load(Ordering::Acquire)
            < self.limit.load(Ordering::Relaxed)
    }

    /// The engine carried out a command of `cost` bytes.
    pub(crate) fn taken(&self, cost: usize) {
        if cost > 0 {
            self.queued.fetch_sub(cost, Ordering::AcqRel);
            self.wake_if_room();
        }
    }

    /// The engine holds `bytes` of encoded output its transport has not accepted yet.
    pub(crate) fn set_backlog(&self, bytes: usize) {
        if self.backlog.swap(bytes, Ordering::AcqRel) > bytes {
            self.wake_if_room();
        }
    }

    /// Wakes every waiting handle (room was made, or the connection ended).
    pub(crate) fn wake_all(&self) {
        if self.waiting.swap(false, Ordering::AcqRel) {
            let wakers =
                std::mem::take(&mut *self.wakers.lock().unwrap_or_else(|e| e.into_inner()));
            for w in wakers {
                w.wake();
            }
        }
    }

    fn wake_if_room(&self) {
        if self.waiting.load(Ordering::Acquire) && self.has_room() {
            self.wake_all();
        }
    }

    /// Ready when there is room (or `closed`); registers `cx` otherwise.
    fn poll_room(&self, cx: &mut Context<'_>, closed: impl Fn() -> bool) -> Poll<()> {
        if self.has_room() || closed() {
            return Poll::Ready(());
        }
        {
            let mut wakers = self.wakers.lock().unwrap_or_else(|e| e.into_inner());
            if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
            self.waiting.store(true, Ordering::Release);
        }
        // Room made between the check and the registration is seen here.
        if self.has_room() || closed() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// A handle to the other side of one connection. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(crate) tx: UnboundedSender<Command>,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("connection", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl Peer {
    pub(crate) fn new(tx: UnboundedSender<Command>) -> Self {
        Peer {
            tx,
            shared: Arc::new(Shared {
                next_key: AtomicU64::new(1),
                info: RwLock::new(None),
                closed: AtomicBool::new(false),
                id: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
                flow: Flow::new(),
            }),
        }
    }

    /// A process-unique number identifying this connection.
    pub fn connection_id(&self) -> u64 {
        self.shared.id
    }

    /// What is known about the peer (after the handshake).
    pub fn info(&self) -> Option<PeerInfo> {
        self.shared.info.read().ok().and_then(|g| g.clone())
    }

    /// The negotiated protocol version (after the handshake).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared
            .info
            .read()
            .ok()
            .and_then(|g| g.as_ref().map(|i| i.version))
    }

    /// Whether the peer declared capability `name` (a top-level key of its capabilities).
    pub fn has_capability(&self, name: &str) -> bool {
        let Some(info) = self.info() else {
            return false;
        };
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(info.capabilities.get())
            .map(|m| m.contains_key(name))
            .unwrap_or(false)
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire) || self.tx.is_closed()
    }

    /// Starts a request with raw params. Await it (or call builder methods first).
    ///
    /// Awaiting it fails with the [errors of every request](crate::client#errors-of-every-request):
    /// the peer's JSON-RPC error, [`ErrorKind::Timeout`], [`ErrorKind::TransportClosed`],
    /// [`ErrorKind::LimitExceeded`] (too many requests in flight),
    /// [`ErrorKind::MethodNotFound`] for a method the peer's capabilities or the protocol
    /// version rule out, [`ErrorKind::InvalidParams`] for `params` that are not a JSON object,
    /// and [`ErrorKind::RequestCancelled`] when the session cancelled it.
    ///
    /// ```
    /// use mcp_service::server::Server;
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("s", "1.0")
    ///     .method("example/hello", |_params, _cx| async move {
    ///         Ok(serde_json::value::to_raw_value(&serde_json::json!({"hello": "world"}))?)
    ///     })
    ///     .build();
    /// let sim = Sim::new();
    /// let raw = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         client.peer().request("example/hello", None).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// // (In the 2026-07-28 era the result carries the era's `_meta` and `resultType` too.)
    /// let result: serde_json::Value = serde_json::from_str(raw.get())?;
    /// assert_eq!(result["hello"], "world");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<Box<RawValue>>,
    ) -> Request {
        Request {
            peer: self.clone(),
            method: method.into(),
            params: Ok(params),
            opts: RequestOptions::default(),
            progress: None,
        }
    }

    /// Starts a request whose params are serialised from `params`.
    ///
    /// Awaiting it fails as [`request`](Self::request)'s does, and with
    /// [`ErrorKind::Internal`] when `params` do not serialise.
    pub fn request_with<P: Serialize + ?Sized>(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: &P,
    ) -> Request {
        Request {
            peer: self.clone(),
            method: method.into(),
            params: crate::raw::to_raw(params).map(Some),
            opts: RequestOptions::default(),
            progress: None,
        }
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// [`ErrorKind::LimitExceeded`] when the output budget is full (the peer is not reading;
    /// counted in [`dropped_messages`](Self::dropped_messages), see
    /// [`writable`](Self::writable)); [`ErrorKind::TransportClosed`] when the connection has
    /// ended. A method the session does not send (`notifications/cancelled`,
    /// `notifications/progress`, `notifications/initialized`, which it sends itself, or one
    /// the protocol version does not have) is not refused here: the connection drops it
    /// (logged at `debug`).
    pub fn notify(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        self.send(Command::Notify {
            method: method.into(),
            params,
            related: None,
        })
    }

    /// Sends a notification whose params are serialised from `params`.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when `params` do not serialise; then as
    /// [`notify`](Self::notify).
    pub fn notify_with<P: Serialize + ?Sized>(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: &P,
    ) -> Result<(), Error> {
        let params = crate::raw::to_raw(params)?;
        self.notify(method, Some(params))
    }

    /// Announces `change` to the connection's `subscriptions/listen` streams that want it.
    pub(crate) fn publish(&self, change: mcp_proto::session::Change) -> Result<(), Error> {
        self.send(Command::Publish(change))
    }

    /// Closes the connection gracefully.
    pub fn close(&self) {
        let _ = self.tx.unbounded_send(Command::Close);
    }

    /// Sends `cmd`; a message (request, notification, progress) is refused while the output
    /// budget is full (counted in [`dropped_messages`](Self::dropped_messages)).
    pub(crate) fn send(&self, cmd: Command) -> Result<(), Error> {
        let flow = &self.shared.flow;
        if cmd.cost() > 0 && !flow.has_room() && !self.is_closed() {
            flow.dropped.fetch_add(1, Ordering::Relaxed);
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "the peer is not reading: {} bytes of output wait (output budget {})",
                    flow.queued.load(Ordering::Relaxed) + flow.backlog.load(Ordering::Relaxed),
                    flow.limit.load(Ordering::Relaxed)
                ),
            ));
        }
        self.send_now(cmd)
    }

    /// Sends `cmd` whatever the budget says (the caller waited for room).
    pub(crate) fn send_now(&self, cmd: Command) -> Result<(), Error> {
        let cost = cmd.cost();
        let flow = &self.shared.flow;
        flow.queued.fetch_add(cost, Ordering::AcqRel);
        self.tx.unbounded_send(cmd).map_err(|_| {
            flow.queued.fetch_sub(cost, Ordering::AcqRel);
            Error::new(ErrorKind::TransportClosed, "the connection is closed")
        })
    }

    /// Waits for room in the output budget, then sends `cmd`.
    pub(crate) async fn send_paced(&self, cmd: Command) -> Result<(), Error> {
        self.writable().await;
        self.send_now(cmd)
    }

    /// Completes when the connection has room for more output: what this side sent and the
    /// peer has not read yet is below the output budget
    /// ([`set_output_budget`](Self::set_output_budget), [`DEFAULT_OUTPUT_BUDGET`] by
    /// default). Also completes when the connection is closed.
    ///
    /// The sending methods that are `async` (a handler's progress, log messages and streamed
    /// content) wait for this themselves; the synchronous
    /// [`notify`](Self::notify) refuses instead (`LimitExceeded`) while there is no room.
    ///
    /// ```no_run
    /// # async fn f(peer: mcp_service::Peer) -> Result<(), mcp_service::Error> {
    /// for i in 0..1_000_000 {
    ///     peer.writable().await; // a peer that stops reading pauses this loop
    ///     peer.notify_with("notifications/tick", &serde_json::json!({ "i": i }))?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn writable(&self) -> Writable<'_> {
        Writable { peer: self }
    }

    /// Sets the output budget of this connection in bytes (see [`writable`](Self::writable)).
    pub fn set_output_budget(&self, bytes: usize) {
        self.shared
            .flow
            .limit
            .store(bytes.max(1), Ordering::Relaxed);
        self.shared.flow.wake_if_room();
    }

    /// The output budget of this connection in bytes.
    pub fn output_budget(&self) -> usize {
        self.shared.flow.limit.load(Ordering::Relaxed)
    }

    /// Messages refused because the output budget was full (see [`writable`](Self::writable)).
    pub fn dropped_messages(&self) -> u64 {
        self.shared.flow.dropped.load(Ordering::Relaxed)
    }

    fn next_key(&self) -> u64 {
        self.shared.next_key.fetch_add(1, Ordering::Relaxed)
    }
}

/// A request being prepared; await it for the raw result.
#[must_use = "a request does nothing until awaited"]
pub struct Request {
    peer: Peer,
    method: Cow<'static, str>,
    params: Result<Option<Box<RawValue>>, Error>,
    opts: RequestOptions,
    progress: Option<ProgressFn>,
}

impl Request {
    /// Sets the timeout (the core sends `notifications/cancelled` when it expires).
    pub fn timeout(mut self, timeout: impl Into<Duration>) -> Self {
        self.opts.timeout = Some(timeout.into());
        self
    }

    /// Restarts the timeout whenever progress arrives, up to `max_total`.
    pub fn reset_timeout_on_progress(mut self, max_total: Option<Duration>) -> Self {
        self.opts.reset_timeout_on_progress = true;
        self.opts.max_total_timeout = max_total;
        self
    }

    /// Asks for progress and calls `f` with each report.
    pub fn progress(mut self, f: impl FnMut(Progress) + Send + 'static) -> Self {
        self.opts.progress = true;
        self.progress = Some(Box::new(f));
        self
    }

    /// Marks the request as made on behalf of an inbound request (HTTP stream routing).
    pub fn related_to(mut self, id: RequestId) -> Self {
        self.opts.related_to = Some(id);
        self
    }

    /// What the request is made of.
    pub(crate) fn parts(self) -> RequestParts {
        RequestParts {
            peer: self.peer,
            method: self.method,
            params: self.params,
            opts: self.opts,
            progress: self.progress,
        }
    }

    /// Awaits the result and deserialises it into `T`.
    ///
    /// # Errors
    /// Those of awaiting the request (see [`Peer::request`]), and
    /// [`ErrorKind::ProtocolInvalid`] (-32600) when the result does not deserialise into `T`.
    pub async fn typed<T: DeserializeOwned>(self) -> Result<T, Error> {
        parse_result(&self.await?)
    }
}

/// A raw result as `T` (`ProtocolInvalid` when it has another shape).
pub(crate) fn parse_result<T: DeserializeOwned>(raw: &RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(|e| {
        Error::new(
            ErrorKind::ProtocolInvalid,
            format!("unexpected result shape: {e}"),
        )
    })
}

/// What a [`Request`] is made of (a retried request is rebuilt from them).
pub(crate) struct RequestParts {
    pub(crate) peer: Peer,
    pub(crate) method: Cow<'static, str>,
    pub(crate) params: Result<Option<Box<RawValue>>, Error>,
    pub(crate) opts: RequestOptions,
    pub(crate) progress: Option<ProgressFn>,
}

impl RequestParts {
    /// A request of these parts with `params` and `opts` (and `progress`).
    pub(crate) fn request(
        &self,
        params: Box<RawValue>,
        opts: RequestOptions,
        progress: Option<ProgressFn>,
    ) -> Request {
        Request {
            peer: self.peer.clone(),
            method: self.method.clone(),
            params: Ok(Some(params)),
            opts,
            progress,
        }
    }
}

impl IntoFuture for Request {
    type Output = Result<Box<RawValue>, Error>;
    type IntoFuture = ResponseFuture;
    fn into_future(self) -> ResponseFuture {
        ResponseFuture {
            state: State::Start(Some(self)),
        }
    }
}

enum State {
    Start(Option<Request>),
    Waiting {
        peer: Peer,
        key: u64,
        rx: oneshot::Receiver<Result<Box<RawValue>, Error>>,
    },
    Done,
}

/// The future of a request's outcome. Dropping it before completion cancels the request.
#[must_use = "a request does nothing until awaited"]
pub struct ResponseFuture {
    state: State,
}

impl Future for ResponseFuture {
    type Output = Result<Box<RawValue>, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match &mut self.state {
                State::Start(req) => {
                    let Some(req) = req.take() else {
                        self.state = State::Done;
                        continue;
                    };
                    let params = match req.params {
                        Ok(p) => p,
                        Err(e) => {
                            self.state = State::Done;
                            return Poll::Ready(Err(e));
                        }
                    };
                    // Requests are not held back by the output budget: they are bounded by
                    // the session's outbound limit, and their timeout runs from here.
                    let (tx, rx) = oneshot::channel();
                    let key = req.peer.next_key();
                    let sent = req.peer.send_now(Command::Request {
                        key,
                        method: req.method,
                        params,
                        opts: req.opts,
                        reply: tx,
                        progress: req.progress,
                    });
                    if let Err(e) = sent {
                        self.state = State::Done;
                        return Poll::Ready(Err(e));
                    }
                    self.state = State::Waiting {
                        peer: req.peer,
                        key,
                        rx,
                    };
                }
                State::Waiting { rx, .. } => {
                    let out = match Pin::new(rx).poll(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(r)) => r,
                        Poll::Ready(Err(_)) => Err(Error::new(
                            ErrorKind::TransportClosed,
                            "the connection closed",
                        )),
                    };
                    self.state = State::Done;
                    return Poll::Ready(out);
                }
                State::Done => {
                    return Poll::Ready(Err(Error::new(
                        ErrorKind::Internal,
                        "polled after completion",
                    )));
                }
            }
        }
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        if let State::Waiting { peer, key, .. } = &self.state {
            let _ = peer.tx.unbounded_send(Command::Cancel {
                key: *key,
                reason: Some("the caller dropped the request".into()),
            });
        }
    }
}
