//! The in-process stores: one shared state behind every clone.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_channel::{mpsc, oneshot};
use mcp_proto::Instant;

use super::{
    Bus, BusMessage, BusStream, EventLog, EventRead, KeyStore, LogEntry, SessionRecord,
    SessionStore, StoreFuture, StoreLimits, record_too_large, too_many_subscriptions,
};
use crate::{BoxFuture, Error, ErrorKind, Runtime};

/// How many messages a bus listener holds before it loses the newest.
const BUS_BACKLOG: usize = 1024;

type Sleep = Arc<dyn Fn(Instant) -> BoxFuture<()> + Send + Sync>;
type Now = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Every store in one process's memory ([`SessionStore`], [`EventLog`], [`Bus`],
/// [`KeyStore`]). Its clones share what they hold, and each clone is a bus member of its
/// own: what one publishes reaches the others' listeners. Two servers given clones of one
/// `MemoryStores` behave as two instances sharing a backend.
///
/// ```
/// use mcp_service::cluster::{MemoryStores, SessionRecord, SessionStore, StoreLimits};
/// use std::time::Duration;
///
/// let sim = mcp_service::sim::Sim::new();
/// let a = MemoryStores::new(StoreLimits::default(), sim.runtime());
/// let b = a.clone();
/// let record = SessionRecord { version: "2025-11-25".into(), ..Default::default() };
/// sim.block_on(async {
///     a.put("s1", &record, Duration::from_secs(60)).await.unwrap();
///     assert_eq!(b.get("s1").await.unwrap(), Some(record));
/// });
/// ```
pub struct MemoryStores {
    shared: Arc<Shared>,
    origin: u64,
}

struct Shared {
    limits: StoreLimits,
    now: Now,
    sleep: Sleep,
    state: Mutex<State>,
    lagged: AtomicU64,
    next_origin: AtomicU64,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, (SessionRecord, Instant)>,
    /// Session records by expiry, to evict the soonest first.
    expiries: BTreeMap<(Instant, String), ()>,
    streams: HashMap<(String, u64), Stream>,
    waiters: HashMap<(String, u64), Vec<oneshot::Sender<()>>>,
    listeners: Vec<(u64, mpsc::Sender<BusMessage>)>,
    secrets: HashMap<String, Vec<u8>>,
}

#[derive(Default)]
struct Stream {
    events: VecDeque<(u64, bytes::Bytes)>,
    ended: bool,
    expires: Instant,
}

impl MemoryStores {
    /// Empty stores keeping `limits`, on `rt`'s clock.
    pub fn new<R: Runtime>(limits: StoreLimits, rt: R) -> Self {
        let clock = rt.clone();
        MemoryStores {
            shared: Arc::new(Shared {
                limits,
                now: Arc::new(move || clock.now()),
                sleep: Arc::new(move |at| rt.sleep_until(at)),
                state: Mutex::new(State::default()),
                lagged: AtomicU64::new(0),
                next_origin: AtomicU64::new(1),
            }),
            origin: 0,
        }
    }

    /// The limits it keeps.
    pub fn limits(&self) -> &StoreLimits {
        &self.shared.limits
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> Instant {
        (self.shared.now)()
    }
}

impl Clone for MemoryStores {
    /// Another member sharing the same state, with a bus identity of its own.
    fn clone(&self) -> Self {
        MemoryStores {
            shared: self.shared.clone(),
            origin: self.shared.next_origin.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for MemoryStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStores")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

fn later(now: Instant, d: Duration) -> Instant {
    now + mcp_proto::Duration::from(d)
}

fn ready<'a, T: Send + 'a>(v: Result<T, Error>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(v))
}

impl State {
    /// The live record of `id` (an expired one is dropped).
    fn live(&mut self, id: &str, now: Instant) -> Option<&mut (SessionRecord, Instant)> {
        if self.sessions.get(id).is_some_and(|(_, exp)| *exp <= now) {
            self.drop_session(id);
        }
        self.sessions.get_mut(id)
    }

    fn drop_session(&mut self, id: &str) -> bool {
        match self.sessions.remove(id) {
            Some((_, exp)) => {
                self.expiries.remove(&(exp, id.to_owned()));
                true
            }
            None => false,
        }
    }

    fn set_expiry(&mut self, id: &str, exp: Instant) {
        if let Some((_, old)) = self.sessions.get_mut(id) {
            let was = std::mem::replace(old, exp);
            self.expiries.remove(&(was, id.to_owned()));
            self.expiries.insert((exp, id.to_owned()), ());
        }
    }

    fn stream(&mut self, key: &(String, u64), now: Instant) -> Option<&Stream> {
        if self.streams.get(key).is_some_and(|s| s.expires <= now) {
            self.streams.remove(key);
        }
        self.streams.get(key)
    }

    fn read(&mut self, key: &(String, u64), after: u64, max: usize, now: Instant) -> EventRead {
        let Some(s) = self.stream(key, now) else {
            return EventRead::default();
        };
        let events: Vec<(u64, bytes::Bytes)> = s
            .events
            .iter()
            .filter(|(seq, _)| *seq > after)
            .take(max)
            .cloned()
            .collect();
        let last_retained = s.events.back().map_or(0, |(seq, _)| *seq);
        let through = events.last().map_or(after, |(seq, _)| *seq);
        EventRead {
            ended: s.ended && through >= last_retained,
            exists: true,
            events,
        }
    }
}

impl SessionStore for MemoryStores {
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let limits = &self.shared.limits;
        if record.size() > limits.max_record_bytes {
            return ready(Err(record_too_large(
                record.size(),
                limits.max_record_bytes,
            )));
        }
        let now = self.now();
        let mut st = self.state();
        st.drop_session(id);
        while st.sessions.len() >= limits.max_sessions.max(1) {
            let Some(((_, victim), ())) = st.expiries.pop_first() else {
                break;
            };
            st.sessions.remove(&victim);
        }
        let exp = later(now, ttl);
        st.sessions.insert(id.to_owned(), (record.clone(), exp));
        st.expiries.insert((exp, id.to_owned()), ());
        ready(Ok(()))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        let now = self.now();
        let found = self.state().live(id, now).map(|(r, _)| r.clone());
        ready(Ok(found))
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        let now = self.now();
        let mut st = self.state();
        let alive = st.live(id, now).is_some();
        if alive {
            st.set_expiry(id, later(now, ttl));
        }
        ready(Ok(alive))
    }

    fn subscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool> {
        let now = self.now();
        let limits = &self.shared.limits;
        let mut st = self.state();
        let Some((record, _)) = st.live(id, now) else {
            return ready(Ok(false));
        };
        if !record.subscriptions.contains(uri) {
            if record.subscriptions.len() >= limits.max_subscriptions {
                return ready(Err(too_many_subscriptions(limits.max_subscriptions)));
            }
            record.subscriptions.insert(uri.to_owned());
        }
        ready(Ok(true))
    }

    fn unsubscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool> {
        let now = self.now();
        let mut st = self.state();
        let found = st.live(id, now).map(|(r, _)| {
            r.subscriptions.remove(uri);
        });
        ready(Ok(found.is_some()))
    }

    fn set_log_level<'a>(&'a self, id: &'a str, level: &'a str) -> StoreFuture<'a, bool> {
        let now = self.now();
        let mut st = self.state();
        let found = st.live(id, now).map(|(r, _)| {
            r.log_level = Some(level.to_owned());
        });
        ready(Ok(found.is_some()))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let now = self.now();
        let mut st = self.state();
        let alive = st.live(id, now).is_some();
        st.drop_session(id);
        ready(Ok(alive))
    }
}

impl EventLog for MemoryStores {
    fn append<'a>(&'a self, entries: &'a [LogEntry]) -> StoreFuture<'a, ()> {
        let limits = &self.shared.limits;
        let now = self.now();
        let expires = later(now, limits.event_ttl);
        let mut st = self.state();
        for entry in entries {
            let (key, event) = match entry {
                LogEntry::Event {
                    session,
                    stream,
                    seq,
                    data,
                } => ((session.clone(), *stream), Some((*seq, data))),
                LogEntry::End { session, stream } => ((session.clone(), *stream), None),
            };
            if st.streams.get(&key).is_some_and(|s| s.expires <= now) {
                st.streams.remove(&key);
            }
            let s = st.streams.entry(key.clone()).or_default();
            s.expires = expires;
            match event {
                Some((seq, data)) => {
                    let newer = s.events.back().is_none_or(|(last, _)| seq > *last);
                    if data.len() <= limits.max_event_bytes && newer && !s.ended {
                        s.events.push_back((seq, data.clone()));
                        while s.events.len() > limits.max_events_per_stream {
                            s.events.pop_front();
                        }
                    }
                }
                None => s.ended = true,
            }
            for w in st.waiters.remove(&key).unwrap_or_default() {
                let _ = w.send(());
            }
        }
        ready(Ok(()))
    }

    fn read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
    ) -> StoreFuture<'a, EventRead> {
        let now = self.now();
        let found = self
            .state()
            .read(&(session.to_owned(), stream), after, max, now);
        ready(Ok(found))
    }

    fn wait<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
        timeout: Duration,
    ) -> StoreFuture<'a, EventRead> {
        let key = (session.to_owned(), stream);
        let deadline = later(self.now(), timeout);
        Box::pin(async move {
            loop {
                let now = self.now();
                let rx = {
                    let mut st = self.state();
                    let found = st.read(&key, after, max, now);
                    if !found.events.is_empty() || found.ended || now >= deadline {
                        return Ok(found);
                    }
                    let (tx, rx) = oneshot::channel();
                    let waiters = st.waiters.entry(key.clone()).or_default();
                    waiters.retain(|w| !w.is_canceled());
                    waiters.push(tx);
                    rx
                };
                let sleep = (self.shared.sleep)(deadline);
                futures_util::future::select(rx, sleep).await;
            }
        })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        let mut st = self.state();
        st.streams.retain(|(s, _), _| s != session);
        st.waiters.retain(|(s, _), _| s != session);
        ready(Ok(()))
    }
}

impl Bus for MemoryStores {
    fn publish<'a>(&'a self, msg: &'a BusMessage) -> StoreFuture<'a, ()> {
        let mut st = self.state();
        st.listeners.retain(|(_, tx)| !tx.is_closed());
        for (origin, tx) in st.listeners.iter_mut() {
            if *origin == self.origin {
                continue;
            }
            if tx.try_send(msg.clone()).is_err() {
                self.shared.lagged.fetch_add(1, Ordering::Relaxed);
            }
        }
        ready(Ok(()))
    }

    fn listen(&self) -> StoreFuture<'_, BusStream> {
        let (tx, rx) = mpsc::channel(BUS_BACKLOG);
        self.state().listeners.push((self.origin, tx));
        ready(Ok(Box::pin(rx) as BusStream))
    }

    fn lagged(&self) -> u64 {
        self.shared.lagged.load(Ordering::Relaxed)
    }
}

impl KeyStore for MemoryStores {
    fn shared_secret<'a>(&'a self, name: &'a str, len: usize) -> StoreFuture<'a, Vec<u8>> {
        let mut st = self.state();
        if let Some(s) = st.secrets.get(name) {
            return ready(Ok(s.clone()));
        }
        let mut secret = vec![0u8; len];
        if let Err(e) = getrandom::fill(&mut secret) {
            return ready(Err(Error::new(
                ErrorKind::Internal,
                format!("no randomness for the shared secret {name:?}: {e}"),
            )));
        }
        st.secrets.insert(name.to_owned(), secret.clone());
        ready(Ok(secret))
    }
}
