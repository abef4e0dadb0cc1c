//! The stores on Redis (feature `redis`), with the `redis` crate.

use std::collections::{BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::streams::StreamRangeReply;
use redis::{AsyncCommands, AsyncConnectionConfig, Client, Script, Value};

use super::{
    Bus, BusMessage, BusStream, EventLog, EventRead, KeyStore, LogEntry, SessionRecord,
    SessionStore, StoreFuture, StoreLimits, record_too_large, too_many_subscriptions,
};
use crate::{Error, ErrorKind};

/// The id of a stream's end marker: the largest a Redis stream entry can have, so that
/// nothing can follow it.
const END_ID: &str = "0-18446744073709551615";

/// The most connections kept for blocking reads ([`EventLog::wait`]).
const WAIT_POOL: usize = 16;

/// How long one attempt to open a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the shared connection waits for a reply before the operation fails.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The extra time a blocking read's reply may take beyond its `BLOCK` timeout.
const BLOCK_GRACE: Duration = Duration::from_secs(2);

/// The bus listener's first delay before it reconnects, doubled after each failed attempt.
const BUS_BACKOFF_MIN: Duration = Duration::from_millis(50);

/// The longest delay between two of the bus listener's attempts.
const BUS_BACKOFF_MAX: Duration = Duration::from_secs(2);

/// The failed attempts in a row after which a bus listener gives up (and its stream ends):
/// about two minutes with the delays above.
const BUS_ATTEMPTS: u32 = 64;

/// The senders a bus listener remembers the last sequence number of, to count what it
/// missed while disconnected; past it, it forgets them all and starts over.
const BUS_ORIGINS: usize = 4096;

/// The bus messages a listener may fall behind by before it loses the newest.
const BUS_BUFFER: usize = 4096;

/// Every store on one Redis server ([`SessionStore`], [`EventLog`], [`Bus`], [`KeyStore`]),
/// each key and channel under a prefix, so that several servers (or tests) share one Redis.
///
/// - A session is a hash `<prefix>s:<id>` (version, client info, capabilities, owner, log
///   level) and a set `<prefix>s:<id>:subs` of its subscriptions, expiring together; the
///   changes are Lua scripts, atomic, and never bring back a session that expired.
/// - Each SSE stream is a Redis stream `<prefix>e:<session>:<stream>` whose entry ids are the
///   events' sequence numbers (`0-<seq>`), trimmed to the newest
///   [`max_events_per_stream`](StoreLimits::max_events_per_stream) and expiring
///   [`event_ttl`](StoreLimits::event_ttl) after its last write; its end is an entry with the
///   largest id. The set `<prefix>ei:<session>` lists the session's streams (written with
///   them, expiring with the last of them), so that
///   [`remove_session`](EventLog::remove_session) drops them in one atomic step, whatever
///   the rest of the database holds.
/// - A wait blocks (`XREAD BLOCK`) on a connection of its own, from a pool of at most 16
///   kept between waits; a wait finding none idle opens one, dropped afterwards when 16 are
///   idle already. No wait queues behind another, and the connections kept stay bounded.
/// - The bus is the channel `<prefix>bus`; a message carries its sender's random origin, so
///   that no member hears itself, and the sender's sequence number. A listener reads its
///   own RESP3 connection (Redis 6 or later) into a queue of 4096 messages: one further
///   behind loses the newest, counted in [`lagged`](Bus::lagged). A listener whose
///   connection drops (Redis restarted, say) subscribes again by itself, after a delay doubling from 50 ms to at most 2 s, giving up
///   (its stream ends) after 64 failed attempts in a row. What it missed meanwhile is counted
///   in [`lagged`](Bus::lagged) when the next message of the same sender arrives, from the
///   gap in that sender's sequence numbers (a publish that failed counts too).
/// - A shared secret is `<prefix>k:<name>`, set once (`SET NX`).
///
/// The shared connection reconnects by itself: while Redis is unreachable, operations fail
/// (after at most a few attempts, about 2 s, each reply awaited at most 5 s), and succeed
/// again once it is back.
///
/// The runtime is the driver's: `mcp-tokio`'s feature `redis` runs it on tokio, anything
/// else on `async-io` (async-std, smol, or any executor).
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_service::Error> {
/// use mcp_service::cluster::{RedisStores, StoreLimits};
///
/// let stores = RedisStores::connect("redis://127.0.0.1:6379/", "mcp:", StoreLimits::default()).await?;
/// # let _ = stores; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStores {
    inner: Arc<Inner>,
    origin: u64,
    /// The sequence number of this member's last bus message.
    sent: Arc<AtomicU64>,
}

struct Inner {
    client: Client,
    /// The same server, in RESP3 whatever the URL asked: the bus's connections.
    bus_client: Client,
    conn: ConnectionManager,
    /// Idle connections for blocking reads, at most [`WAIT_POOL`].
    waiters: Mutex<Vec<MultiplexedConnection>>,
    prefix: String,
    limits: StoreLimits,
    lagged: AtomicU64,
    reconnects: AtomicU64,
    remove_streams: Script,
    subscribe: Script,
    unsubscribe: Script,
    set_level: Script,
}

impl std::fmt::Debug for RedisStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStores")
            .field("prefix", &self.inner.prefix)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

fn redis_error(op: &str) -> impl FnOnce(redis::RedisError) -> Error + '_ {
    move |e| Error::new(ErrorKind::TransportError, format!("Redis {op}: {e}"))
}

fn random_u64() -> Result<u64, Error> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("no randomness: {e}")))?;
    Ok(u64::from_le_bytes(b))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStores {
    /// Connects to the Redis server at `url` (`redis://host:port/db`, `rediss://` for TLS
    /// when the `redis` crate's TLS is on), keeping `limits`, every key under `prefix`.
    ///
    /// # Errors
    /// [`ErrorKind::TransportError`] when the URL is invalid or the server does not answer.
    pub async fn connect(url: &str, prefix: &str, limits: StoreLimits) -> Result<Self, Error> {
        let client = Client::open(url).map_err(redis_error("URL"))?;
        let info = client.get_connection_info().clone();
        let resp3 = info
            .redis_settings()
            .clone()
            .set_protocol(redis::ProtocolVersion::RESP3);
        let bus_client =
            Client::open(info.set_redis_settings(resp3)).map_err(redis_error("URL"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_secs(1))
            .set_number_of_retries(5);
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| {
                let addr = client.get_connection_info().addr();
                Error::new(
                    ErrorKind::TransportError,
                    format!("Redis connect to {addr}: {e}"),
                )
            })?;
        Ok(RedisStores {
            inner: Arc::new(Inner {
                client,
                bus_client,
                conn,
                waiters: Mutex::new(Vec::new()),
                prefix: prefix.to_owned(),
                limits,
                lagged: AtomicU64::new(0),
                reconnects: AtomicU64::new(0),
                remove_streams: Script::new(REMOVE_STREAMS),
                subscribe: Script::new(SUBSCRIBE),
                unsubscribe: Script::new(UNSUBSCRIBE),
                set_level: Script::new(SET_LEVEL),
            }),
            origin: random_u64()?,
            sent: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Another member on the same connection, with a bus identity of its own (as another
    /// instance would have).
    pub fn member(&self) -> Result<Self, Error> {
        Ok(RedisStores {
            inner: self.inner.clone(),
            origin: random_u64()?,
            sent: Arc::new(AtomicU64::new(0)),
        })
    }

    /// How many times its bus listeners subscribed again after their connection dropped.
    pub fn bus_reconnects(&self) -> u64 {
        self.inner.reconnects.load(Ordering::Relaxed)
    }

    /// The limits it keeps.
    pub fn limits(&self) -> &StoreLimits {
        &self.inner.limits
    }

    fn conn(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    fn session_key(&self, id: &str) -> String {
        format!("{}s:{id}", self.inner.prefix)
    }

    fn subs_key(&self, id: &str) -> String {
        format!("{}s:{id}:subs", self.inner.prefix)
    }

    fn stream_key(&self, session: &str, stream: u64) -> String {
        format!("{}e:{session}:{stream}", self.inner.prefix)
    }

    fn index_key(&self, session: &str) -> String {
        format!("{}ei:{session}", self.inner.prefix)
    }

    fn bus_channel(&self) -> String {
        format!("{}bus", self.inner.prefix)
    }

    async fn read_now(
        &self,
        session: &str,
        stream: u64,
        after: u64,
        max: usize,
    ) -> Result<EventRead, Error> {
        let key = self.stream_key(session, stream);
        let (range, exists): (StreamRangeReply, bool) = redis::pipe()
            .cmd("XRANGE")
            .arg(&key)
            .arg(format!("(0-{after}"))
            .arg("+")
            .arg("COUNT")
            .arg(max.saturating_add(1))
            .exists(&key)
            .query_async(&mut self.conn())
            .await
            .map_err(redis_error("XRANGE"))?;
        let mut out = EventRead {
            exists,
            ..EventRead::default()
        };
        for entry in range.ids {
            if entry.id == END_ID {
                out.ended = out.events.len() <= max;
                break;
            }
            if out.events.len() == max {
                break;
            }
            let seq = entry
                .id
                .strip_prefix("0-")
                .and_then(|s| s.parse::<u64>().ok());
            let data = match entry.map.get("d") {
                Some(Value::BulkString(b)) => Some(bytes::Bytes::copy_from_slice(b)),
                _ => None,
            };
            if let (Some(seq), Some(data)) = (seq, data) {
                out.events.push((seq, data));
            }
        }
        Ok(out)
    }
}

/// KEYS: a session's stream index. Drops the streams it lists, and itself.
const REMOVE_STREAMS: &str = r"
local keys = redis.call('SMEMBERS', KEYS[1])
for i = 1, #keys, 256 do
  redis.call('DEL', unpack(keys, i, math.min(i + 255, #keys)))
end
redis.call('DEL', KEYS[1])
return #keys
";

/// KEYS: the session hash, its subscription set. ARGV: the URI, the most subscriptions.
/// Returns 0 when the session is gone, -1 past the limit, 1 when done.
const SUBSCRIBE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return -1 end
redis.call('SADD', KEYS[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
";

/// KEYS: the session hash, its subscription set. ARGV: the URI.
const UNSUBSCRIBE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SREM', KEYS[2], ARGV[1])
return 1
";

/// KEYS: the session hash. ARGV: the level.
const SET_LEVEL: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'level', ARGV[1])
return 1
";

impl SessionStore for RedisStores {
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let max = self.inner.limits.max_record_bytes;
            if record.size() > max {
                return Err(record_too_large(record.size(), max));
            }
            let (key, subs) = (self.session_key(id), self.subs_key(id));
            let ms = millis(ttl);
            let mut fields = vec![
                ("version", record.version.as_str()),
                ("info", record.client_info.as_str()),
                ("caps", record.client_capabilities.as_str()),
            ];
            if let Some(o) = &record.owner {
                fields.push(("owner", o));
            }
            if let Some(l) = &record.log_level {
                fields.push(("level", l));
            }
            let mut pipe = redis::pipe();
            pipe.atomic()
                .del(&key)
                .ignore()
                .del(&subs)
                .ignore()
                .hset_multiple(&key, &fields)
                .ignore()
                .pexpire(&key, ms as i64)
                .ignore();
            if !record.subscriptions.is_empty() {
                let uris: Vec<&str> = record.subscriptions.iter().map(String::as_str).collect();
                pipe.sadd(&subs, uris)
                    .ignore()
                    .pexpire(&subs, ms as i64)
                    .ignore();
            }
            pipe.query_async::<()>(&mut self.conn())
                .await
                .map_err(redis_error("put session"))
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let (mut fields, subs): (HashMap<String, String>, Vec<String>) = redis::pipe()
                .hgetall(self.session_key(id))
                .smembers(self.subs_key(id))
                .query_async(&mut self.conn())
                .await
                .map_err(redis_error("get session"))?;
            let Some(version) = fields.remove("version") else {
                return Ok(None);
            };
            Ok(Some(SessionRecord {
                version,
                client_info: fields.remove("info").unwrap_or_default(),
                client_capabilities: fields.remove("caps").unwrap_or_default(),
                owner: fields.remove("owner"),
                subscriptions: subs.into_iter().collect(),
                log_level: fields.remove("level"),
            }))
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let ms = millis(ttl) as i64;
            let (alive, _): (bool, bool) = redis::pipe()
                .pexpire(self.session_key(id), ms)
                .pexpire(self.subs_key(id), ms)
                .query_async(&mut self.conn())
                .await
                .map_err(redis_error("touch session"))?;
            Ok(alive)
        })
    }

    fn subscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let max = self.inner.limits.max_subscriptions;
            let done: i64 = self
                .inner
                .subscribe
                .key(self.session_key(id))
                .key(self.subs_key(id))
                .arg(uri)
                .arg(max)
                .invoke_async(&mut self.conn())
                .await
                .map_err(redis_error("subscribe"))?;
            match done {
                -1 => Err(too_many_subscriptions(max)),
                n => Ok(n == 1),
            }
        })
    }

    fn unsubscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let done: i64 = self
                .inner
                .unsubscribe
                .key(self.session_key(id))
                .key(self.subs_key(id))
                .arg(uri)
                .invoke_async(&mut self.conn())
                .await
                .map_err(redis_error("unsubscribe"))?;
            Ok(done == 1)
        })
    }

    fn set_log_level<'a>(&'a self, id: &'a str, level: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let done: i64 = self
                .inner
                .set_level
                .key(self.session_key(id))
                .arg(level)
                .invoke_async(&mut self.conn())
                .await
                .map_err(redis_error("set log level"))?;
            Ok(done == 1)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (n, _): (i64, i64) = redis::pipe()
                .del(self.session_key(id))
                .del(self.subs_key(id))
                .query_async(&mut self.conn())
                .await
                .map_err(redis_error("remove session"))?;
            Ok(n > 0)
        })
    }
}

impl EventLog for RedisStores {
    fn append<'a>(&'a self, entries: &'a [LogEntry]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let limits = &self.inner.limits;
            let ttl = millis(limits.event_ttl) as i64;
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            // Each stream written, and each session's: their expiry is set once, after the
            // stream's last entry, and the session's index lists its streams.
            let mut streams: BTreeSet<(&str, u64)> = BTreeSet::new();
            for entry in entries {
                match entry {
                    LogEntry::Event {
                        session,
                        stream,
                        seq,
                        data,
                    } => {
                        streams.insert((session, *stream));
                        if data.len() <= limits.max_event_bytes && *seq > 0 {
                            // An id not above the stream's last (or past its end) is refused
                            // by Redis: that event is not kept, as in memory.
                            pipe.cmd("XADD")
                                .arg(self.stream_key(session, *stream))
                                .arg("MAXLEN")
                                .arg(limits.max_events_per_stream.max(1))
                                .arg(format!("0-{seq}"))
                                .arg("d")
                                .arg(&data[..]);
                        }
                    }
                    LogEntry::End { session, stream } => {
                        streams.insert((session, *stream));
                        pipe.cmd("XADD")
                            .arg(self.stream_key(session, *stream))
                            .arg("MAXLEN")
                            .arg(limits.max_events_per_stream.saturating_add(1))
                            .arg(END_ID)
                            .arg("end")
                            .arg(1);
                    }
                }
            }
            if streams.is_empty() {
                return Ok(());
            }
            let mut sessions: Vec<(&str, Vec<String>)> = Vec::new();
            for &(session, stream) in &streams {
                let key = self.stream_key(session, stream);
                pipe.pexpire(&key, ttl);
                match sessions.last_mut() {
                    Some((s, keys)) if *s == session => keys.push(key),
                    _ => sessions.push((session, vec![key])),
                }
            }
            // The index expires with its newest stream: every write of a stream rewrites it.
            for (session, keys) in sessions {
                let index = self.index_key(session);
                pipe.sadd(&index, keys).pexpire(&index, ttl);
            }
            let _: Vec<redis::RedisResult<Value>> = pipe
                .query_async(&mut self.conn())
                .await
                .map_err(redis_error("append events"))?;
            Ok(())
        })
    }

    fn read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
    ) -> StoreFuture<'a, EventRead> {
        Box::pin(self.read_now(session, stream, after, max))
    }

    fn wait<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
        timeout: Duration,
    ) -> StoreFuture<'a, EventRead> {
        Box::pin(async move {
            let found = self.read_now(session, stream, after, max).await?;
            if !found.events.is_empty() || found.ended {
                return Ok(found);
            }
            self.block(&self.stream_key(session, stream), after, timeout)
                .await?;
            self.read_now(session, stream, after, max).await
        })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _: i64 = self
                .inner
                .remove_streams
                .key(self.index_key(session))
                .invoke_async(&mut self.conn())
                .await
                .map_err(redis_error("remove session events"))?;
            Ok(())
        })
    }
}

impl RedisStores {
    /// Blocks until the stream has an entry after `0-<after>`, or `timeout`, on a connection
    /// of the wait pool.
    async fn block(&self, key: &str, after: u64, timeout: Duration) -> Result<(), Error> {
        let mut xread = redis::cmd("XREAD");
        xread
            .arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(millis(timeout))
            .arg("STREAMS")
            .arg(key)
            .arg(format!("0-{after}"));
        // An idle connection may have been broken meanwhile (Redis restarted): on its
        // failure, once more on a fresh one.
        if let Some(mut conn) = self.idle_waiter() {
            conn.set_response_timeout(timeout + BLOCK_GRACE);
            if xread.query_async::<Value>(&mut conn).await.is_ok() {
                self.keep_waiter(conn);
                return Ok(());
            }
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(timeout + BLOCK_GRACE));
        let mut conn = self
            .inner
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(redis_error("connect for a blocking read"))?;
        let _: Value = xread
            .query_async(&mut conn)
            .await
            .map_err(redis_error("XREAD"))?;
        // Only a connection whose read completed goes back: one dropped mid-read (the wait
        // cancelled) closes, and no later command queues behind its `BLOCK`.
        self.keep_waiter(conn);
        Ok(())
    }

    fn idle_waiter(&self) -> Option<MultiplexedConnection> {
        let mut idle = self
            .inner
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        idle.pop()
    }

    fn keep_waiter(&self, conn: MultiplexedConnection) {
        let mut idle = self
            .inner
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < WAIT_POOL {
            idle.push(conn);
        }
    }

    /// How many connections for blocking reads are idle in the pool (at most 16).
    pub fn idle_wait_connections(&self) -> usize {
        self.inner
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Subscribes to the bus on a connection of its own (RESP3, whatever the URL asked), whose
    /// messages are handed to the listener through a queue of [`BUS_BUFFER`]: a listener that
    /// falls further behind loses the newest messages (counted in [`lagged`](Bus::lagged))
    /// instead of buffering without bound. The stream ends when the connection drops.
    async fn subscribe_bus(&self) -> Result<Subscription, Error> {
        let (tx, rx) = futures_channel::mpsc::channel::<Vec<u8>>(BUS_BUFFER);
        let tx = Mutex::new(Some(tx));
        let inner = Arc::downgrade(&self.inner);
        let push = move |info: redis::PushInfo| -> Result<(), redis::aio::SendError> {
            let mut guard = tx.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(tx) = guard.as_mut() else {
                return Err(redis::aio::SendError);
            };
            match info.kind {
                redis::PushKind::Message => {
                    let payload = match info.data.into_iter().nth(1) {
                        Some(Value::BulkString(b)) => b,
                        _ => return Ok(()),
                    };
                    if let Err(e) = tx.try_send(payload) {
                        if e.is_disconnected() {
                            *guard = None;
                            return Err(redis::aio::SendError);
                        }
                        if let Some(inner) = inner.upgrade() {
                            inner.lagged.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(())
                }
                // The connection is gone: ending the queue ends the stream.
                redis::PushKind::Disconnection => {
                    *guard = None;
                    Ok(())
                }
                _ => Ok(()),
            }
        };
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_push_sender(push);
        let mut conn = self
            .inner
            .bus_client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(redis_error("connect for the bus"))?;
        conn.subscribe(self.bus_channel())
            .await
            .map_err(redis_error("SUBSCRIBE"))?;
        // The stream holds the connection: dropping the listener closes it.
        Ok(Box::pin(rx.map(move |payload| {
            let _ = &conn;
            payload
        })))
    }
}

type Subscription = Pin<Box<dyn futures_core::Stream<Item = Vec<u8>> + Send>>;

#[derive(serde::Serialize, serde::Deserialize)]
struct Envelope {
    /// The sender's origin.
    o: u64,
    /// The sender's sequence number, from 1.
    #[serde(default)]
    q: u64,
    m: BusMessage,
}

/// A bus listener's state: its subscription, and what it knows of each sender.
struct Listener {
    stores: RedisStores,
    sub: Option<Subscription>,
    /// Per sender: the highest sequence number heard, and whether the listener reconnected
    /// since (the next message then tells how many were missed).
    senders: HashMap<u64, (u64, bool)>,
}

impl Listener {
    async fn next(mut self) -> Option<(BusMessage, Self)> {
        loop {
            let Some(sub) = self.sub.as_mut() else {
                self.sub = Some(self.reconnect().await?);
                continue;
            };
            let Some(msg) = sub.next().await else {
                self.sub = None;
                continue;
            };
            let inner = &self.stores.inner;
            let envelope = match serde_json::from_slice::<Envelope>(&msg) {
                Ok(e) => e,
                Err(_) => {
                    inner.lagged.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            if envelope.o == self.stores.origin {
                continue;
            }
            self.heard(envelope.o, envelope.q);
            return Some((envelope.m, self));
        }
    }

    /// Counts what was missed of sender `origin` before its message `seq`.
    fn heard(&mut self, origin: u64, seq: u64) {
        if seq == 0 {
            return;
        }
        match self.senders.get_mut(&origin) {
            Some((last, after_gap)) => {
                if *after_gap && seq > *last + 1 {
                    let missed = seq - *last - 1;
                    self.stores
                        .inner
                        .lagged
                        .fetch_add(missed, Ordering::Relaxed);
                }
                *after_gap = false;
                *last = (*last).max(seq);
            }
            None => {
                if self.senders.len() >= BUS_ORIGINS {
                    self.senders.clear();
                }
                self.senders.insert(origin, (seq, false));
            }
        }
    }

    /// Subscribes again, after a growing delay; `None` after [`BUS_ATTEMPTS`] failures.
    async fn reconnect(&mut self) -> Option<Subscription> {
        let mut delay = BUS_BACKOFF_MIN;
        for attempt in 1..=BUS_ATTEMPTS {
            async_io::Timer::after(delay).await;
            match self.stores.subscribe_bus().await {
                Ok(sub) => {
                    for (_, after_gap) in self.senders.values_mut() {
                        *after_gap = true;
                    }
                    self.stores.inner.reconnects.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(attempt, "Redis bus listener subscribed again");
                    return Some(sub);
                }
                Err(e) => {
                    tracing::warn!(attempt, error = %e, "Redis bus listener not subscribed");
                    delay = (delay * 2).min(BUS_BACKOFF_MAX);
                }
            }
        }
        tracing::error!("Redis bus listener gave up after {BUS_ATTEMPTS} attempts");
        None
    }
}

impl Bus for RedisStores {
    fn publish<'a>(&'a self, msg: &'a BusMessage) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let body = serde_json::to_vec(&Envelope {
                o: self.origin,
                q: self.sent.fetch_add(1, Ordering::Relaxed) + 1,
                m: msg.clone(),
            })
            .map_err(|e| Error::new(ErrorKind::Internal, format!("bus message: {e}")))?;
            let _: i64 = self
                .conn()
                .publish(self.bus_channel(), body)
                .await
                .map_err(redis_error("PUBLISH"))?;
            Ok(())
        })
    }

    fn listen(&self) -> StoreFuture<'_, BusStream> {
        Box::pin(async move {
            let listener = Listener {
                stores: self.clone(),
                sub: Some(self.subscribe_bus().await?),
                senders: HashMap::new(),
            };
            let stream = futures_util::stream::unfold(listener, Listener::next);
            Ok(Box::pin(stream) as BusStream)
        })
    }

    fn lagged(&self) -> u64 {
        self.inner.lagged.load(Ordering::Relaxed)
    }
}

impl KeyStore for RedisStores {
    fn shared_secret<'a>(&'a self, name: &'a str, len: usize) -> StoreFuture<'a, Vec<u8>> {
        Box::pin(async move {
            let key = format!("{}k:{name}", self.inner.prefix);
            let mut mine = vec![0u8; len];
            getrandom::fill(&mut mine).map_err(|e| {
                Error::new(
                    ErrorKind::Internal,
                    format!("no randomness for {name:?}: {e}"),
                )
            })?;
            let (_, secret): (Value, Vec<u8>) = redis::pipe()
                .cmd("SET")
                .arg(&key)
                .arg(&mine[..])
                .arg("NX")
                .get(&key)
                .query_async(&mut self.conn())
                .await
                .map_err(redis_error("shared secret"))?;
            Ok(secret)
        })
    }
}
