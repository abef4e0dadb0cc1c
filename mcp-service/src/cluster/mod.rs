//! The stores that let several instances (processes, machines) of one MCP server serve the
//! same HTTP endpoint without sticky routing (feature `http-server`).
//!
//! Each kind of shared state has a trait, with an in-process implementation here
//! ([`MemoryStores`], shared by its clones: two servers in one process, or a test) and one
//! on Redis (`RedisStores`, feature `redis`):
//!
//! - [`SessionStore`]: what another instance needs to serve a handshake-era session it did
//!   not open ([`SessionRecord`]: the negotiated version, the client's info and
//!   capabilities, the owner, the resource subscriptions and the log level);
//! - [`EventLog`]: every instance's SSE events, so that a client resuming with
//!   `Last-Event-ID` on any instance gets what it missed, nothing lost and nothing twice;
//! - [`Bus`]: messages between instances ([`BusMessage`]: a resource updated, a list
//!   changed, a session's subscription or log level changed, a session ended);
//! - [`KeyStore`]: secrets every instance must share, such as the key ring that seals the
//!   MRTR `requestState`.
//!
//! [`contract`] is the test suite every implementation must pass: a store written for
//! another engine runs it too. Every store keeps the [`StoreLimits`]: expiry and sizes hold
//! the same in every implementation.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::Error;

pub mod contract;
mod memory;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod serve;

#[cfg(feature = "redis")]
pub use self::redis::RedisStores;
pub use memory::MemoryStores;
pub use serve::{Cluster, ClusterStats};
pub(crate) use serve::{Op, record_of, snapshot_of};

/// The future a store's operation returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// What another instance needs to serve a handshake-era HTTP session it did not open.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionRecord {
    /// The negotiated protocol version, e.g. `"2025-11-25"`.
    pub version: String,
    /// The client's `Implementation` object, as JSON text.
    pub client_info: String,
    /// The client's capabilities object, as JSON text.
    pub client_capabilities: String,
    /// The principal a resource server bound the session to, if any.
    pub owner: Option<String>,
    /// The URIs the client subscribed to with `resources/subscribe`.
    pub subscriptions: BTreeSet<String>,
    /// The level the client set with `logging/setLevel`, if it did.
    pub log_level: Option<String>,
}

impl SessionRecord {
    /// The bytes the record takes, as [`StoreLimits::max_record_bytes`] counts them.
    pub fn size(&self) -> usize {
        self.version.len()
            + self.client_info.len()
            + self.client_capabilities.len()
            + self.owner.as_ref().map_or(0, String::len)
            + self.subscriptions.iter().map(String::len).sum::<usize>()
            + self.log_level.as_ref().map_or(0, String::len)
    }
}

/// The sessions every instance can serve.
pub trait SessionStore: Send + Sync + 'static {
    /// Creates or replaces the record of session `id`; it expires `ttl` after its last
    /// `put` or [`touch`](Self::touch).
    ///
    /// # Errors
    /// [`ErrorKind::LimitExceeded`](crate::ErrorKind::LimitExceeded) for a record larger
    /// than [`StoreLimits::max_record_bytes`]; the backend's failure otherwise.
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;

    /// The record of session `id`, unless there is none or it expired.
    ///
    /// # Errors
    /// The backend's failure.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>>;

    /// Extends the life of session `id` to `ttl` from now; `false` when it is gone.
    ///
    /// # Errors
    /// The backend's failure.
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool>;

    /// Adds `uri` to the session's subscriptions; `false` when the session is gone.
    ///
    /// # Errors
    /// [`ErrorKind::LimitExceeded`](crate::ErrorKind::LimitExceeded) past
    /// [`StoreLimits::max_subscriptions`]; the backend's failure otherwise.
    fn subscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool>;

    /// Removes `uri` from the session's subscriptions; `false` when the session is gone.
    ///
    /// # Errors
    /// The backend's failure.
    fn unsubscribe<'a>(&'a self, id: &'a str, uri: &'a str) -> StoreFuture<'a, bool>;

    /// Records the session's log level; `false` when the session is gone.
    ///
    /// # Errors
    /// The backend's failure.
    fn set_log_level<'a>(&'a self, id: &'a str, level: &'a str) -> StoreFuture<'a, bool>;

    /// Forgets session `id`; `true` when it existed.
    ///
    /// # Errors
    /// The backend's failure.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;
}

/// One entry written to an [`EventLog`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogEntry {
    /// Event `seq` of stream `stream` of `session`: one JSON-RPC message. Sequence numbers
    /// increase along a stream (1, 2, 3, …; there may be gaps).
    Event {
        /// The session's id.
        session: String,
        /// The stream (its number, which names the instance that made it).
        stream: u64,
        /// The event's sequence number in its stream.
        seq: u64,
        /// The message.
        data: bytes::Bytes,
    },
    /// The stream is complete: nothing follows its last event.
    End {
        /// The session's id.
        session: String,
        /// The stream.
        stream: u64,
    },
}

/// What [`EventLog::read`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventRead {
    /// `(seq, message)`, ascending.
    pub events: Vec<(u64, bytes::Bytes)>,
    /// The stream is complete, and nothing of it follows the last event returned.
    pub ended: bool,
    /// Anything of the stream is retained.
    pub exists: bool,
}

/// The SSE events of every instance's sessions, for `Last-Event-ID` resumption on any
/// instance.
pub trait EventLog: Send + Sync + 'static {
    /// Writes `entries`, in order (one round trip to a remote backend). An event larger than
    /// [`StoreLimits::max_event_bytes`] is not kept; a stream keeps its newest
    /// [`StoreLimits::max_events_per_stream`] events, and expires
    /// [`StoreLimits::event_ttl`] after its last write.
    ///
    /// # Errors
    /// The backend's failure.
    fn append<'a>(&'a self, entries: &'a [LogEntry]) -> StoreFuture<'a, ()>;

    /// At most `max` events of the stream with a sequence number above `after`, ascending.
    ///
    /// # Errors
    /// The backend's failure.
    fn read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
    ) -> StoreFuture<'a, EventRead>;

    /// Like [`read`](Self::read), but waits up to `timeout` for an event after `after` or
    /// the stream's end when there is none yet.
    ///
    /// # Errors
    /// The backend's failure.
    fn wait<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max: usize,
        timeout: Duration,
    ) -> StoreFuture<'a, EventRead>;

    /// Drops every stream of the session.
    ///
    /// # Errors
    /// The backend's failure.
    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()>;
}

/// A message between instances.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BusMessage {
    /// `Server::resource_updated(uri)` on some instance.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// A list changed: its notification's method, such as
    /// `notifications/tools/list_changed`.
    ListChanged {
        /// The notification's method.
        method: String,
    },
    /// A session subscribed to a resource.
    Subscribed {
        /// The session.
        session: String,
        /// The resource.
        uri: String,
    },
    /// A session unsubscribed from a resource.
    Unsubscribed {
        /// The session.
        session: String,
        /// The resource.
        uri: String,
    },
    /// A session set its log level.
    LogLevel {
        /// The session.
        session: String,
        /// The level.
        level: String,
    },
    /// A session ended (its client deleted it).
    SessionEnded {
        /// The session.
        session: String,
    },
    /// A client's answers to requests that instance `instance` sent it, POSTed to another
    /// instance: the one that asked takes them.
    Deliver {
        /// The instance that sent the requests.
        instance: u32,
        /// The session.
        session: String,
        /// The POST's body (JSON-RPC responses).
        body: String,
    },
}

/// A stream of bus messages.
pub type BusStream = Pin<Box<dyn futures_core::Stream<Item = BusMessage> + Send + 'static>>;

/// Messages between instances.
pub trait Bus: Send + Sync + 'static {
    /// Sends `msg` to every other instance's listeners.
    ///
    /// # Errors
    /// The backend's failure.
    fn publish<'a>(&'a self, msg: &'a BusMessage) -> StoreFuture<'a, ()>;

    /// Every message published after this returns, by any other `Bus` value (another
    /// instance), in the order each published them; not this value's own. Bounded: a
    /// listener that falls behind loses messages, counted by [`lagged`](Self::lagged).
    ///
    /// # Errors
    /// The backend's failure.
    fn listen(&self) -> StoreFuture<'_, BusStream>;

    /// Messages this value's listeners lost for falling behind.
    fn lagged(&self) -> u64;
}

/// Secrets every instance must share (the MRTR `requestState` key ring).
pub trait KeyStore: Send + Sync + 'static {
    /// The secret named `name`: `len` random bytes, made by the first instance to ask and
    /// the same for every later call on any instance.
    ///
    /// # Errors
    /// The backend's failure, or no randomness.
    fn shared_secret<'a>(&'a self, name: &'a str, len: usize) -> StoreFuture<'a, Vec<u8>>;
}

/// The limits the stores keep, the same in every implementation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLimits {
    /// The newest events a stream keeps (default 256).
    pub max_events_per_stream: usize,
    /// The largest event kept (default 1 MiB); a larger one is not kept.
    pub max_event_bytes: usize,
    /// How long a stream lives after its last write (default 5 minutes).
    pub event_ttl: Duration,
    /// The most subscriptions of one session (default 1024).
    pub max_subscriptions: usize,
    /// The most session records in memory (default 100 000; the soonest to expire goes
    /// first). A remote backend bounds them by their expiry and its own memory policy.
    pub max_sessions: usize,
    /// The largest session record ([`SessionRecord::size`], default 64 KiB).
    pub max_record_bytes: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            max_events_per_stream: 256,
            max_event_bytes: 1 << 20,
            event_ttl: Duration::from_secs(300),
            max_subscriptions: 1024,
            max_sessions: 100_000,
            max_record_bytes: 64 * 1024,
        }
    }
}

impl StoreLimits {
    /// Sets [`max_events_per_stream`](Self::max_events_per_stream).
    pub fn max_events_per_stream(mut self, n: usize) -> Self {
        self.max_events_per_stream = n;
        self
    }

    /// Sets [`max_event_bytes`](Self::max_event_bytes).
    pub fn max_event_bytes(mut self, n: usize) -> Self {
        self.max_event_bytes = n;
        self
    }

    /// Sets [`event_ttl`](Self::event_ttl).
    pub fn event_ttl(mut self, ttl: Duration) -> Self {
        self.event_ttl = ttl;
        self
    }

    /// Sets [`max_subscriptions`](Self::max_subscriptions).
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// Sets [`max_sessions`](Self::max_sessions).
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Sets [`max_record_bytes`](Self::max_record_bytes).
    pub fn max_record_bytes(mut self, n: usize) -> Self {
        self.max_record_bytes = n;
        self
    }
}

/// The error of a record over [`StoreLimits::max_record_bytes`].
pub(crate) fn record_too_large(size: usize, max: usize) -> Error {
    Error::new(
        crate::ErrorKind::LimitExceeded,
        format!("the session record takes {size} bytes, more than the store's limit of {max}"),
    )
}

/// The error of a subscription past [`StoreLimits::max_subscriptions`].
pub(crate) fn too_many_subscriptions(max: usize) -> Error {
    Error::new(
        crate::ErrorKind::LimitExceeded,
        format!("the session has {max} subscriptions, the store's limit"),
    )
}
