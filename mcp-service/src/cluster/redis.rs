//! The stores on Redis (feature `redis`), with the `redis` crate.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::ConnectionManager;
use redis::streams::StreamRangeReply;
use redis::{AsyncCommands, Client, Script, Value};

use super::{
    Bus, BusMessage, BusStream, EventLog, EventRead, KeyStore, LogEntry, SessionRecord,
    SessionStore, StoreFuture, StoreLimits, record_too_large, too_many_subscriptions,
};
use crate::{Error, ErrorKind};

/// The id of a stream's end marker: the largest a Redis stream entry can have, so that
/// nothing can follow it.
const END_ID: &str = "0-18446744073709551615";

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
///   largest id. A wait blocks (`XREAD BLOCK`) on a connection of its own.
/// - The bus is the channel `<prefix>bus`; a message carries its sender's random origin, so
///   that no member hears itself. A listener that falls too far behind is disconnected by
///   Redis (`client-output-buffer-limit pubsub`): its stream ends, and it listens again.
/// - A shared secret is `<prefix>k:<name>`, set once (`SET NX`).
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
}

struct Inner {
    client: Client,
    conn: ConnectionManager,
    prefix: String,
    limits: StoreLimits,
    lagged: AtomicU64,
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
        let conn = client
            .get_connection_manager()
            .await
            .map_err(redis_error("connect"))?;
        Ok(RedisStores {
            inner: Arc::new(Inner {
                client,
                conn,
                prefix: prefix.to_owned(),
                limits,
                lagged: AtomicU64::new(0),
                subscribe: Script::new(SUBSCRIBE),
                unsubscribe: Script::new(UNSUBSCRIBE),
                set_level: Script::new(SET_LEVEL),
            }),
            origin: random_u64()?,
        })
    }

    /// Another member on the same connection, with a bus identity of its own (as another
    /// instance would have).
    pub fn member(&self) -> Result<Self, Error> {
        Ok(RedisStores {
            inner: self.inner.clone(),
            origin: random_u64()?,
        })
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
            let mut n = 0usize;
            for entry in entries {
                match entry {
                    LogEntry::Event {
                        session,
                        stream,
                        seq,
                        data,
                    } => {
                        let key = self.stream_key(session, *stream);
                        if data.len() <= limits.max_event_bytes && *seq > 0 {
                            // An id not above the stream's last (or past its end) is refused
                            // by Redis: that event is not kept, as in memory.
                            pipe.cmd("XADD")
                                .arg(&key)
                                .arg("MAXLEN")
                                .arg(limits.max_events_per_stream.max(1))
                                .arg(format!("0-{seq}"))
                                .arg("d")
                                .arg(&data[..]);
                            n += 1;
                        }
                        pipe.pexpire(&key, ttl);
                        n += 1;
                    }
                    LogEntry::End { session, stream } => {
                        let key = self.stream_key(session, *stream);
                        pipe.cmd("XADD")
                            .arg(&key)
                            .arg("MAXLEN")
                            .arg(limits.max_events_per_stream.saturating_add(1))
                            .arg(END_ID)
                            .arg("end")
                            .arg(1)
                            .pexpire(&key, ttl);
                        n += 2;
                    }
                }
            }
            if n == 0 {
                return Ok(());
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
            // A blocking read holds its connection: never the shared one.
            let config = redis::AsyncConnectionConfig::new()
                .set_response_timeout(Some(timeout + Duration::from_secs(2)));
            let mut blocking = self
                .inner
                .client
                .get_multiplexed_async_connection_with_config(&config)
                .await
                .map_err(redis_error("connect for a blocking read"))?;
            let _: Value = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(1)
                .arg("BLOCK")
                .arg(millis(timeout))
                .arg("STREAMS")
                .arg(self.stream_key(session, stream))
                .arg(format!("0-{after}"))
                .query_async(&mut blocking)
                .await
                .map_err(redis_error("XREAD"))?;
            self.read_now(session, stream, after, max).await
        })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let pattern = format!("{}e:{}:*", self.inner.prefix, escape_glob(session));
            let mut conn = self.conn();
            let keys: Vec<String> = {
                let mut iter = conn
                    .scan_match::<_, String>(&pattern)
                    .await
                    .map_err(redis_error("SCAN"))?;
                let mut keys = Vec::new();
                while let Some(k) = iter.next().await {
                    keys.push(k.map_err(redis_error("SCAN"))?);
                }
                keys
            };
            for chunk in keys.chunks(256) {
                let _: i64 = conn.del(chunk).await.map_err(redis_error("DEL"))?;
            }
            Ok(())
        })
    }
}

/// `s` with Redis glob metacharacters escaped.
fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Envelope {
    o: u64,
    m: BusMessage,
}

impl Bus for RedisStores {
    fn publish<'a>(&'a self, msg: &'a BusMessage) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let body = serde_json::to_vec(&Envelope {
                o: self.origin,
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
            let mut pubsub = self
                .inner
                .client
                .get_async_pubsub()
                .await
                .map_err(redis_error("connect for the bus"))?;
            pubsub
                .subscribe(self.bus_channel())
                .await
                .map_err(redis_error("SUBSCRIBE"))?;
            let origin = self.origin;
            let inner = self.inner.clone();
            let stream = pubsub.into_on_message().filter_map(move |msg| {
                let got = match serde_json::from_slice::<Envelope>(msg.get_payload_bytes()) {
                    Ok(e) if e.o != origin => Some(e.m),
                    Ok(_) => None,
                    Err(_) => {
                        inner.lagged.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                };
                std::future::ready(got)
            });
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
