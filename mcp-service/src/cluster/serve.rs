//! Serving one endpoint from several instances: what a server built with
//! [`ServerBuilder::cluster`](crate::ServerBuilder::cluster) runs beside its HTTP engines.
//!
//! - Each handshake-era session's [`SessionRecord`] is written when its handshake completes,
//!   touched while it is used, changed by `resources/subscribe`, `resources/unsubscribe` and
//!   `logging/setLevel`, and removed when its client deletes it.
//! - Every SSE event goes to the [`EventLog`] as well as to the session's own store, so that
//!   another instance can replay it.
//! - The [`Bus`] carries `Server::resource_updated`, the list changes and the sessions'
//!   subscription changes to every other instance, and brings theirs here.
//!
//! Writes go through bounded queues to one writer task each (the session writes in order,
//! the events batched into one [`EventLog::append`] per turn), so a request never waits for
//! the backend; what a full queue refuses is counted in [`ClusterStats`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_channel::mpsc;
use futures_util::StreamExt;
use mcp_proto::http::{EventStore, EventStoreFactory, MemoryEventStore, SessionId};

use super::{Bus, BusMessage, EventLog, KeyStore, LogEntry, SessionRecord, SessionStore};
use crate::runtime::Runtime;
use crate::{Error, ErrorKind};

/// Session writes waiting for the writer at most; beyond, a write is dropped and counted.
const OP_QUEUE: usize = 4096;
/// Events waiting for the event writer at most.
const LOG_QUEUE: usize = 16 * 1024;
/// Events written in one [`EventLog::append`] at most.
const LOG_BATCH: usize = 256;
/// Events read from the log per round trip when replaying.
const READ_PAGE: usize = 256;
/// How long one wait for more events of a stream another instance is answering lasts (then
/// the follower checks that instance is alive).
const FOLLOW_WAIT: Duration = Duration::from_secs(2);
/// How often an instance says it is alive, and how long that holds.
const HEARTBEAT: Duration = Duration::from_secs(1);
const ALIVE_TTL: Duration = Duration::from_secs(4);
/// A followed stream with nothing new for this long ends (the client may resume again).
const FOLLOW_IDLE: Duration = Duration::from_secs(120);

/// The stores one server shares with its other instances, and this instance's number.
///
/// ```
/// # fn main() -> Result<(), mcp_service::Error> {
/// use mcp_service::cluster::{Cluster, MemoryStores, StoreLimits};
/// use mcp_service::Server;
///
/// # let sim = mcp_service::sim::Sim::new();
/// # let rt = sim.runtime();
/// // Two instances on one backend (here in memory; `RedisStores` across machines).
/// let stores = MemoryStores::new(StoreLimits::default(), rt);
/// let a = Server::builder("notes", "1.0").cluster(Cluster::new(stores.clone(), 1)).build();
/// let b = Server::builder("notes", "1.0").cluster(Cluster::new(stores, 2)).build();
/// # let _ = (a, b); Ok(()) }
/// ```
#[derive(Clone)]
pub struct Cluster {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("instance", &self.shared.instance)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Shared {
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) events: Arc<dyn EventLog>,
    pub(crate) bus: Arc<dyn Bus>,
    keys: Arc<dyn KeyStore>,
    pub(crate) instance: u32,
    running: OnceLock<Running>,
    counters: Counters,
    /// Each engine's way to take answers another instance passed on ([`BusMessage::Deliver`]).
    deliverers: std::sync::Mutex<Vec<Deliverer>>,
}

/// Takes a client's answers for session `sid` (the engine that holds it feeds them in).
pub(crate) type Deliverer = Box<dyn Fn(SessionId, Vec<u8>) + Send + Sync>;

/// What [`Cluster::stats`] counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterStats {
    /// Sessions another instance opened, served here after a look-up in the store.
    pub sessions_adopted: u64,
    /// Requests naming a session the store did not have either (answered 404).
    pub sessions_unknown: u64,
    /// `Last-Event-ID` resumptions of another instance's stream, served from the log.
    pub streams_resumed: u64,
    /// Session writes dropped because the writer was too far behind.
    pub writes_dropped: u64,
    /// Events not written to the log because its writer was too far behind.
    pub events_dropped: u64,
    /// Operations the backend failed (each is logged).
    pub store_errors: u64,
    /// Messages heard from other instances.
    pub bus_received: u64,
    /// Times the bus listener had to listen again (the backend dropped it).
    pub bus_relistens: u64,
    /// POSTs of answers to another instance's requests, passed on to it.
    pub answers_passed_on: u64,
    /// POSTs of answers to this instance's requests that another instance passed on.
    pub answers_delivered: u64,
}

#[derive(Default)]
struct Counters {
    adopted: AtomicU64,
    unknown: AtomicU64,
    resumed: AtomicU64,
    writes_dropped: AtomicU64,
    events_dropped: AtomicU64,
    store_errors: AtomicU64,
    bus_received: AtomicU64,
    relistens: AtomicU64,
    passed_on: AtomicU64,
    delivered: AtomicU64,
}

/// The writer tasks' queues, made when the server is first served.
struct Running {
    ops: Queue<Op>,
    log: Queue<LogEntry>,
    /// Dropped with the cluster: the listener stops.
    _stop: futures_channel::oneshot::Sender<()>,
}

/// A bounded queue to a task (an unbounded channel with a count, so that a sender needs no
/// lock nor `&mut`).
struct Queue<T> {
    tx: mpsc::UnboundedSender<T>,
    queued: Arc<AtomicUsize>,
    max: usize,
}

impl<T> Queue<T> {
    fn new(max: usize) -> (Self, mpsc::UnboundedReceiver<T>, Arc<AtomicUsize>) {
        let (tx, rx) = mpsc::unbounded();
        let queued = Arc::new(AtomicUsize::new(0));
        (
            Queue {
                tx,
                queued: queued.clone(),
                max,
            },
            rx,
            queued,
        )
    }

    fn push(&self, item: T) -> bool {
        if self.queued.fetch_add(1, Ordering::Relaxed) >= self.max {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        if self.tx.unbounded_send(item).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// A write of session state, in the order the instance made them.
pub(crate) enum Op {
    Put(String, SessionRecord, Duration),
    Touch(String, Duration),
    Subscribe(String, String),
    Unsubscribe(String, String),
    SetLevel(String, String),
    /// The client deleted the session: its record and its events go, and the other
    /// instances end their copies.
    Remove(String),
    Publish(BusMessage),
    /// The op, then a word to whoever waits for it (written, or failed: it goes on).
    Then(Box<Op>, futures_channel::oneshot::Sender<()>),
}

impl Cluster {
    /// One instance's view of `stores`, a backend that holds every kind of shared state
    /// ([`MemoryStores`](super::MemoryStores), `RedisStores`). `instance` numbers this
    /// instance's SSE streams (their event ids say where to resume them); give each instance
    /// its own number, 1 or more (0 is taken as 1).
    pub fn new<S>(stores: S, instance: u32) -> Self
    where
        S: SessionStore + EventLog + Bus + KeyStore + Clone,
    {
        Cluster::from_parts(
            Arc::new(stores.clone()),
            Arc::new(stores.clone()),
            Arc::new(stores.clone()),
            Arc::new(stores),
            instance,
        )
    }

    /// One instance's view of four stores, each possibly on a backend of its own.
    pub fn from_parts(
        sessions: Arc<dyn SessionStore>,
        events: Arc<dyn EventLog>,
        bus: Arc<dyn Bus>,
        keys: Arc<dyn KeyStore>,
        instance: u32,
    ) -> Self {
        Cluster {
            shared: Arc::new(Shared {
                sessions,
                events,
                bus,
                keys,
                instance: instance.max(1),
                running: OnceLock::new(),
                counters: Counters::default(),
                deliverers: std::sync::Mutex::new(Vec::new()),
            }),
        }
    }

    /// This instance's number.
    pub fn instance(&self) -> u32 {
        self.shared.instance
    }

    /// The key ring that seals the MRTR `requestState` of a server named `audience`, the same
    /// on every instance (its secret comes from the [`KeyStore`], made by the first instance
    /// to ask): give it to
    /// [`ServerBuilder::request_state_keys`](crate::ServerBuilder::request_state_keys), so that
    /// a round's state sealed here opens on any instance.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn request_state_keys(
        &self,
        audience: &str,
    ) -> Result<crate::mrtr::RequestStateKeys, Error> {
        let secret = self
            .shared
            .keys
            .shared_secret("mrtr-request-state", 32)
            .await?;
        crate::mrtr::RequestStateKeys::new(audience, [("cluster", secret)])
    }

    /// The counters of this instance's use of the stores.
    pub fn stats(&self) -> ClusterStats {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ClusterStats {
            sessions_adopted: get(&c.adopted),
            sessions_unknown: get(&c.unknown),
            streams_resumed: get(&c.resumed),
            writes_dropped: get(&c.writes_dropped),
            events_dropped: get(&c.events_dropped),
            store_errors: get(&c.store_errors),
            bus_received: get(&c.bus_received),
            bus_relistens: get(&c.relistens),
            answers_passed_on: get(&c.passed_on),
            answers_delivered: get(&c.delivered),
        }
    }
}

impl Shared {
    /// Starts the writers and the bus listener on `rt` (once: later calls do nothing).
    /// `apply` carries out what another instance published.
    pub(crate) fn start<R: Runtime>(
        self: &Arc<Self>,
        rt: &R,
        apply: Arc<dyn Fn(BusMessage) + Send + Sync>,
    ) {
        let mut fresh = None;
        self.running.get_or_init(|| {
            let (ops, ops_rx, ops_n) = Queue::new(OP_QUEUE);
            let (log, log_rx, log_n) = Queue::new(LOG_QUEUE);
            let (stop, stopped) = futures_channel::oneshot::channel();
            fresh = Some((ops_rx, ops_n, log_rx, log_n, stopped));
            Running {
                ops,
                log,
                _stop: stop,
            }
        });
        let Some((ops_rx, ops_n, log_rx, log_n, stopped)) = fresh else {
            return;
        };
        let me = Arc::downgrade(self);
        let (sessions, events, bus) =
            (self.sessions.clone(), self.events.clone(), self.bus.clone());
        let counters = Arc::downgrade(self);
        rt.spawn(Box::pin(write_ops(
            ops_rx,
            ops_n,
            sessions,
            events.clone(),
            bus.clone(),
            counters.clone(),
        )));
        rt.spawn(Box::pin(write_events(log_rx, log_n, events, counters)));
        rt.spawn(Box::pin(heartbeat(rt.clone(), Arc::downgrade(self))));
        rt.spawn(Box::pin(listen(rt.clone(), bus, me, apply, stopped)));
    }

    pub(crate) fn op(&self, op: Op) {
        let Some(r) = self.running.get() else { return };
        if !r.ops.push(op) {
            self.counters.writes_dropped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(target: "mcp", "cluster: the session writer is behind; a write was dropped");
        }
    }

    fn log(&self, entry: LogEntry) {
        let Some(r) = self.running.get() else { return };
        if !r.log.push(entry) {
            self.counters.events_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn adopted(&self) {
        self.counters.adopted.fetch_add(1, Ordering::Relaxed);
    }

    /// Engine `f` takes answers passed on from other instances.
    pub(crate) fn on_deliver(&self, f: Deliverer) {
        self.deliverers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(f);
    }

    /// Answers another instance passed on: to every engine (the one holding the session
    /// takes them).
    pub(crate) fn deliver(&self, session: &str, body: String) {
        let Some(sid) = SessionId::parse(session) else {
            return;
        };
        self.counters.delivered.fetch_add(1, Ordering::Relaxed);
        let body = body.into_bytes();
        for f in self
            .deliverers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            f(sid, body.clone());
        }
    }

    /// Answers that reached this instance for requests another one sent, passed on to it.
    pub(crate) fn passed_on(&self) {
        self.counters.passed_on.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn resumed(&self) {
        self.counters.resumed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn unknown(&self) {
        self.counters.unknown.fetch_add(1, Ordering::Relaxed);
    }

    fn failed(&self, what: &str, e: &Error) {
        self.counters.store_errors.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(target: "mcp", error = %e, "cluster: {what} failed");
    }

    /// The event store of each session: `local`'s (the endpoint's own, for replay here), with
    /// every event and stream end also written to the log.
    pub(crate) fn event_store_factory(
        self: &Arc<Self>,
        local: Option<EventStoreFactory>,
    ) -> EventStoreFactory {
        let me = Arc::downgrade(self);
        Arc::new(move |sid: SessionId| {
            let inner: Box<dyn EventStore> = match &local {
                Some(f) => f(sid),
                None => Box::new(MemoryEventStore::new(1024, 4 << 20)),
            };
            Box::new(LoggedStore {
                inner,
                session: sid.to_string(),
                shared: me.clone(),
            })
        })
    }

    /// Whether instance `instance` said it is alive within the last few seconds (it writes a
    /// record under a name no session id takes, `~instance-N`, every second).
    pub(crate) async fn alive(&self, instance: u32) -> bool {
        !matches!(self.sessions.get(&alive_key(instance)).await, Ok(None))
    }

    /// Stream `stream` of `session` after `after`, from the log, as SSE events: the bytes,
    /// the last sequence number, whether the stream ended and whether the log has it at all.
    pub(crate) async fn replay(
        &self,
        session: &str,
        stream: u64,
        mut after: u64,
    ) -> Result<Replay, Error> {
        let mut out = Replay {
            bytes: Vec::new(),
            last: after,
            ended: false,
            exists: false,
        };
        loop {
            let r = self.events.read(session, stream, after, READ_PAGE).await?;
            out.exists |= r.exists;
            let n = r.events.len();
            for (seq, data) in &r.events {
                encode(&mut out.bytes, stream, *seq, data);
                after = *seq;
            }
            out.last = after;
            if r.ended {
                out.ended = true;
                return Ok(out);
            }
            if n < READ_PAGE {
                return Ok(out);
            }
        }
    }

    /// Follows stream `stream` of `session` after `after` in the log, sending each event
    /// to `tx` as SSE, until it ends, the body is dropped, or it stays silent for
    /// [`FOLLOW_IDLE`].
    pub(crate) async fn follow<R: Runtime>(
        self: Arc<Self>,
        rt: R,
        session: String,
        stream: u64,
        mut after: u64,
        mut tx: mpsc::Sender<Vec<u8>>,
    ) {
        let mut idle_since = rt.now();
        loop {
            let r = match self
                .events
                .wait(&session, stream, after, READ_PAGE, FOLLOW_WAIT)
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    self.failed("following a stream", &e);
                    return;
                }
            };
            let mut chunk = Vec::new();
            for (seq, data) in &r.events {
                encode(&mut chunk, stream, *seq, data);
                after = *seq;
            }
            if chunk.is_empty() {
                if r.ended
                    || !r.exists
                    || !self.alive(mcp_proto::http::stream_instance(stream)).await
                {
                    // Ended, expired, or its instance is gone: the client's resumption of a
                    // stream that cannot go on fails in its own time, with its own error.
                    return;
                }
                if rt.now().saturating_duration_since(idle_since) >= FOLLOW_IDLE.into() {
                    return;
                }
                mcp_proto::codec::sse::encode_comment(&mut chunk, "");
            } else {
                idle_since = rt.now();
            }
            let room = futures_util::future::poll_fn(|cx| tx.poll_ready(cx)).await;
            if room.is_err() || tx.try_send(chunk).is_err() || r.ended {
                return;
            }
        }
    }
}

/// The store's name for instance `n`'s heartbeat (session ids are 32 hex digits).
fn alive_key(instance: u32) -> String {
    format!("~instance-{instance}")
}

/// Says this instance is alive, every [`HEARTBEAT`], until the cluster is dropped.
async fn heartbeat<R: Runtime>(rt: R, shared: std::sync::Weak<Shared>) {
    let record = SessionRecord {
        version: "alive".to_owned(),
        ..SessionRecord::default()
    };
    loop {
        let Some(s) = shared.upgrade() else { return };
        let (sessions, key) = (s.sessions.clone(), alive_key(s.instance));
        drop(s);
        if let Err(e) = sessions.put(&key, &record, ALIVE_TTL).await {
            tracing::warn!(target: "mcp", error = %e, "cluster: the heartbeat failed");
        }
        rt.sleep_until(rt.now() + HEARTBEAT.into()).await;
    }
}

/// What [`Shared::replay`] read.
pub(crate) struct Replay {
    pub(crate) bytes: Vec<u8>,
    pub(crate) last: u64,
    pub(crate) ended: bool,
    pub(crate) exists: bool,
}

fn encode(out: &mut Vec<u8>, stream: u64, seq: u64, data: &[u8]) {
    let id = format!("{stream}-{seq}");
    let text = String::from_utf8_lossy(data);
    mcp_proto::codec::sse::encode_event(out, None, Some(&id), &text);
}

/// A session's event store that writes to the log as well.
struct LoggedStore {
    inner: Box<dyn EventStore>,
    session: String,
    shared: std::sync::Weak<Shared>,
}

impl EventStore for LoggedStore {
    fn store(&mut self, stream: u64, seq: u64, data: &[u8]) {
        self.inner.store(stream, seq, data);
        if let Some(s) = self.shared.upgrade() {
            s.log(LogEntry::Event {
                session: self.session.clone(),
                stream,
                seq,
                data: bytes::Bytes::copy_from_slice(data),
            });
        }
    }
    fn replay(&self, stream: u64, after: u64, each: &mut dyn FnMut(u64, &[u8])) {
        self.inner.replay(stream, after, each);
    }
    fn end(&mut self, stream: u64) {
        self.inner.end(stream);
        if let Some(s) = self.shared.upgrade() {
            s.log(LogEntry::End {
                session: self.session.clone(),
                stream,
            });
        }
    }
    fn forget(&mut self, stream: u64) {
        // Here only: the log keeps the stream for a resumption elsewhere, within its limits.
        self.inner.forget(stream);
    }
    fn shed(&mut self) {
        self.inner.shed();
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn bytes(&self) -> usize {
        self.inner.bytes()
    }
    fn oldest(&self) -> Option<(u64, u64)> {
        self.inner.oldest()
    }
    fn evict_oldest(&mut self) -> bool {
        self.inner.evict_oldest()
    }
}

async fn write_ops(
    mut rx: mpsc::UnboundedReceiver<Op>,
    queued: Arc<AtomicUsize>,
    sessions: Arc<dyn SessionStore>,
    events: Arc<dyn EventLog>,
    bus: Arc<dyn Bus>,
    shared: std::sync::Weak<Shared>,
) {
    while let Some(op) = rx.next().await {
        queued.fetch_sub(1, Ordering::Relaxed);
        let (op, done) = match op {
            Op::Then(op, done) => (*op, Some(done)),
            op => (op, None),
        };
        let (what, r): (&str, Result<(), Error>) = match op {
            Op::Put(id, record, ttl) => {
                ("storing a session", sessions.put(&id, &record, ttl).await)
            }
            Op::Touch(id, ttl) => (
                "touching a session",
                sessions.touch(&id, ttl).await.map(drop),
            ),
            Op::Subscribe(id, uri) => {
                let r = sessions.subscribe(&id, &uri).await.map(drop);
                let m = BusMessage::Subscribed { session: id, uri };
                ("a subscription", r.and(bus.publish(&m).await))
            }
            Op::Unsubscribe(id, uri) => {
                let r = sessions.unsubscribe(&id, &uri).await.map(drop);
                let m = BusMessage::Unsubscribed { session: id, uri };
                ("an unsubscription", r.and(bus.publish(&m).await))
            }
            Op::SetLevel(id, level) => {
                let r = sessions.set_log_level(&id, &level).await.map(drop);
                let m = BusMessage::LogLevel { session: id, level };
                ("a log level", r.and(bus.publish(&m).await))
            }
            Op::Remove(id) => {
                let r = sessions.remove(&id).await.map(drop);
                let r = r.and(events.remove_session(&id).await);
                let m = BusMessage::SessionEnded { session: id };
                ("removing a session", r.and(bus.publish(&m).await))
            }
            Op::Publish(m) => ("publishing", bus.publish(&m).await),
            Op::Then(..) => ("a nested write", Ok(())),
        };
        if let Some(done) = done {
            let _ = done.send(());
        }
        if let Err(e) = r {
            match shared.upgrade() {
                Some(s) => s.failed(what, &e),
                None => tracing::warn!(target: "mcp", error = %e, "cluster: {what} failed"),
            }
        }
    }
}

async fn write_events(
    mut rx: mpsc::UnboundedReceiver<LogEntry>,
    queued: Arc<AtomicUsize>,
    events: Arc<dyn EventLog>,
    shared: std::sync::Weak<Shared>,
) {
    let mut batch = Vec::with_capacity(LOG_BATCH);
    while let Some(first) = rx.next().await {
        batch.push(first);
        while batch.len() < LOG_BATCH {
            match rx.try_recv() {
                Ok(e) => batch.push(e),
                _ => break,
            }
        }
        queued.fetch_sub(batch.len(), Ordering::Relaxed);
        if let Err(e) = events.append(&batch).await
            && let Some(s) = shared.upgrade()
        {
            s.failed("writing events", &e);
        }
        batch.clear();
    }
}

/// Hears the other instances until the cluster is dropped, listening again (after a pause
/// that grows to a few seconds) whenever the backend drops the listener.
async fn listen<R: Runtime>(
    rt: R,
    bus: Arc<dyn Bus>,
    shared: std::sync::Weak<Shared>,
    apply: Arc<dyn Fn(BusMessage) + Send + Sync>,
    stopped: futures_channel::oneshot::Receiver<()>,
) {
    use futures_util::future::{Either, select};
    let mut stopped = stopped;
    let mut pause = Duration::from_millis(50);
    loop {
        let listening = select(bus.listen(), &mut stopped).await;
        let mut stream = match listening {
            Either::Left((Ok(s), _)) => {
                pause = Duration::from_millis(50);
                s
            }
            Either::Left((Err(e), _)) => {
                tracing::warn!(target: "mcp", error = %e, "cluster: cannot listen to the bus");
                Box::pin(futures_util::stream::empty()) as super::BusStream
            }
            Either::Right(_) => return,
        };
        loop {
            match select(stream.next(), &mut stopped).await {
                Either::Left((Some(m), _)) => {
                    if let Some(s) = shared.upgrade() {
                        s.counters.bus_received.fetch_add(1, Ordering::Relaxed);
                    }
                    apply(m);
                }
                Either::Left((None, _)) => break,
                Either::Right(_) => return,
            }
        }
        match shared.upgrade() {
            Some(s) => s.counters.relistens.fetch_add(1, Ordering::Relaxed),
            None => return,
        };
        let wake = rt.now() + pause.into();
        if let Either::Right(_) = select(rt.sleep_until(wake), &mut stopped).await {
            return;
        }
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// The record of a session from what the endpoint knows of it.
pub(crate) fn record_of(s: &mcp_proto::http::SessionSnapshot) -> SessionRecord {
    SessionRecord {
        version: s.version.as_str().to_owned(),
        client_info: s.client_info.get().to_owned(),
        client_capabilities: s.client_capabilities.get().to_owned(),
        owner: s.owner.clone(),
        ..SessionRecord::default()
    }
}

/// The endpoint's snapshot of a stored session.
pub(crate) fn snapshot_of(r: &SessionRecord) -> Result<mcp_proto::http::SessionSnapshot, Error> {
    let version = mcp_proto::ProtocolVersion::parse(&r.version).ok_or_else(|| {
        Error::new(
            ErrorKind::ProtocolVersionMismatch,
            format!("the stored session has version {}", r.version),
        )
    })?;
    let raw = |s: &str| {
        serde_json::value::RawValue::from_string(s.to_owned())
            .map_err(|e| Error::invalid_params(format!("a stored session's info: {e}")))
    };
    Ok(mcp_proto::http::SessionSnapshot {
        version,
        client_info: raw(&r.client_info)?,
        client_capabilities: raw(&r.client_capabilities)?,
        owner: r.owner.clone(),
    })
}
