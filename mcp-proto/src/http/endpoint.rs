//! The Streamable HTTP endpoint: HTTP request parts in, reply parts and SSE bytes out, routed
//! to one [`Session`] per MCP session id (the quinn Endpoint → Connection split).
//!
//! It owns every HTTP rule of the transport: status codes, the `MCP-Session-Id` and
//! `MCP-Protocol-Version` headers, `Accept`/`Content-Type`/`Host`/`Origin` checks, the choice
//! between JSON and SSE replies, which stream each server message travels on, SSE event ids,
//! the event store and `Last-Event-ID` replay, and idle expiry. It never performs IO, reads a
//! clock or draws random numbers: the driver passes `now` and, with each request, a fresh
//! 128-bit random value from which a new session's id is made.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use core::net::IpAddr;

use ::http::header::{self, HeaderValue};
use ::http::request::Parts;
use ::http::{Method, Response, StatusCode};

use super::config::{EndpointConfig, ResponseMode};
use super::event_store::EventStore;
use super::headers::{
    self, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, STANDALONE_STREAM, accepts,
    host_allowed, is_json, origin_allowed, parse_event_id, single,
};
use super::reply::{Body, StreamId, StreamPoll};
use super::session_id::SessionId;
use crate::codec::sse;
use crate::error::{Error, ErrorKind};
use crate::id::RequestId;
use crate::jsonrpc::{self, Envelope, Parsed};
use crate::session::{Event, MessageKind, Session, State, Transmit};
use crate::time::{Duration, Instant};
use crate::version::ProtocolVersion;

mod legacy;

impl SessionId {
    /// The session `parts` names: its `MCP-Session-Id` header (Streamable HTTP), else its
    /// `sessionId` query parameter (a legacy HTTP+SSE POST). `None` for a request that names
    /// none (an `initialize`, a stateless request, a legacy `GET`) or one the endpoint would
    /// refuse as malformed. For a driver that spreads sessions over several endpoints: the
    /// endpoint that opened a session is the one to route its requests to.
    ///
    /// ```
    /// use mcp_proto::http::SessionId;
    ///
    /// let (parts, ()) = http::Request::post("/mcp")
    ///     .header("mcp-session-id", "000000000000000000000000000000ab")
    ///     .body(())
    ///     .unwrap()
    ///     .into_parts();
    /// assert_eq!(SessionId::of_request(&parts), Some(SessionId::from_u128(0xab)));
    /// let (legacy, ()) = http::Request::post("/messages?sessionId=000000000000000000000000000000cd")
    ///     .body(())
    ///     .unwrap()
    ///     .into_parts();
    /// assert_eq!(SessionId::of_request(&legacy), Some(SessionId::from_u128(0xcd)));
    /// ```
    pub fn of_request(parts: &Parts) -> Option<SessionId> {
        match parts.headers.get(&MCP_SESSION_ID) {
            Some(raw) => SessionId::parse(raw.to_str().ok()?.trim()),
            None => SessionId::parse(legacy::session_param(parts.uri.query())?),
        }
    }
}
mod modern;
pub use modern::{DeferredHead, reply_status};

/// JSON-RPC code of transport-level HTTP errors (implementation-defined server error range).
const TRANSPORT_ERROR: i64 = -32000;

/// The address of the client a request comes from, when the driver knows it: a driver puts
/// it in the request's extensions (`parts.extensions.insert(PeerAddr(ip))`) and the endpoint
/// counts each peer's sessions under it, for
/// [`EndpointConfig::max_sessions_per_peer`](super::EndpointConfig::max_sessions_per_peer).
/// A request without it belongs to no peer (no share applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerAddr(pub IpAddr);

/// Who a request acts for, when an authentication layer in front of the endpoint checked it
/// (a validated OAuth access token's issuer, subject and client): the layer puts it in the
/// request's extensions (`parts.extensions.insert(SessionOwner(key))`) and a session is
/// bound to the owner of the request that opened it. A later request naming that session
/// with another owner (or none) is answered as if the session did not exist (404
/// `Session not found`): a session id alone never lets another principal in, and the session's
/// existence is not revealed. A session opened without an owner takes only requests without
/// one. Streamable HTTP and the legacy HTTP+SSE transport alike.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionOwner(pub String);

/// The notification that completes a handshake, for a session whose client sent it to another
/// instance.
const INITIALIZED_NOTIFICATION: &[u8] =
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// What an instance needs to serve a handshake-era session another instance opened
/// ([`Endpoint::session_snapshot`], [`Endpoint::adopt_session`]).
#[derive(Debug, Clone)]
pub struct SessionSnapshot {
    /// The negotiated protocol version.
    pub version: ProtocolVersion,
    /// The client's `Implementation` object.
    pub client_info: Box<serde_json::value::RawValue>,
    /// The client's capabilities object.
    pub client_capabilities: Box<serde_json::value::RawValue>,
    /// Who opened it ([`SessionOwner`]), when an authentication layer named one.
    pub owner: Option<String>,
}

/// A [`session::Event`](Event) of one session.
#[derive(Debug, Clone)]
pub struct SessionEvent {
    /// The session it belongs to.
    pub session: SessionId,
    /// The event.
    pub event: Event,
}

/// Counters and gauges of an endpoint, for tests and metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Sessions alive.
    pub sessions: usize,
    /// Reply bodies the driver is still pulling.
    pub open_streams: usize,
    /// Streams known to the sessions (attached or waiting for a resumption).
    pub logical_streams: usize,
    /// Events retained by the sessions' event stores.
    pub stored_events: usize,
    /// Bytes retained by the sessions' event stores.
    pub stored_bytes: usize,
    /// Bytes encoded and waiting to be pulled.
    pub queued_bytes: usize,
    /// Inbound requests in flight, routed to a stream.
    pub routed_requests: usize,
    /// Sessions created.
    pub sessions_created: u64,
    /// Sessions that expired.
    pub sessions_expired: u64,
    /// Sessions another instance opened, taken over ([`Endpoint::adopt_session`]).
    pub sessions_adopted: u64,
    /// Sessions ended by DELETE.
    pub sessions_deleted: u64,
    /// Idle sessions ended to make room for a new one (at
    /// [`max_sessions`](super::EndpointConfig::max_sessions) or a peer's share).
    pub sessions_evicted: u64,
    /// Stored events dropped to keep all sessions' event stores within their totals.
    pub stored_events_evicted: u64,
    /// Sessions ended otherwise (closed by the application, stateless POSTs done, legacy SSE
    /// streams closed).
    pub sessions_closed: u64,
    /// Server messages that had no stream to travel on (and no event store to wait in).
    pub messages_dropped: u64,
    /// Resumptions that could not replay everything (events already evicted).
    pub replay_gaps: u64,
    /// SSE connections cut because their client did not pull fast enough.
    pub slow_streams_cut: u64,
    /// `subscriptions/listen` streams (2026-07-28) open.
    pub listen_streams: usize,
    /// Keep-alive comments written on silent listen streams
    /// ([`listen_keep_alive`](super::EndpointConfig::listen_keep_alive)).
    pub keep_alives_sent: u64,
    /// Idle sessions keeping the room of their tables for their next request: at most 1024,
    /// each for about a second of idleness, after which it gives the room back.
    pub warm_sessions: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Closed,
    Deleted,
    Expired,
    Evicted,
}

#[derive(Debug)]
enum Kind {
    /// The stream of one POST: its requests, and whether it is answered as one JSON body.
    Post {
        json: bool,
        /// A 2026-07-28 POST whose reply is JSON unless something related to its request
        /// goes out before the answer: then it becomes an SSE stream (see [`DeferredHead`]).
        lazy: bool,
        /// How many of its requests are unanswered (their ids are the session's `routes`
        /// to this stream: a count here costs no allocation per POST).
        unanswered: usize,
        /// JSON mode: the messages of the body.
        parts: Vec<Vec<u8>>,
    },
    /// The standalone GET stream.
    Standalone,
}

/// A stream of a session: the event-id namespace `<id>-<seq>` and the connection (if any)
/// currently pulling it.
#[derive(Debug)]
struct Logical {
    kind: Kind,
    next_seq: u64,
    conn: Option<StreamId>,
}

impl Logical {
    fn is_json(&self) -> bool {
        matches!(self.kind, Kind::Post { json: true, .. })
    }

    /// Takes messages related to its requests: an SSE stream, or a lazy one (which becomes
    /// SSE on the first).
    fn takes_related(&self) -> bool {
        !matches!(
            self.kind,
            Kind::Post {
                json: true,
                lazy: false,
                ..
            }
        )
    }
}

/// One reply body being pulled by the driver.
#[derive(Debug)]
struct Conn {
    session: SessionId,
    /// The stream it is attached to; `None` once finished or detached.
    logical: Option<u64>,
    queue: Vec<u8>,
    finished: bool,
    /// Returned `Pending` since it last got something: wake it on the next change.
    waiting: bool,
    /// Its body is SSE (else one JSON body).
    sse: bool,
    /// The POST stream it carried to its end (its answer included): once the driver has
    /// pulled everything, the event store is told to forget it ([`EventStore::forget`]).
    delivered: Option<u64>,
    /// The answer that ends its stream, kept out of the event store while it waits in
    /// `queue` (see [`EventStore::forgets_delivered`]): its stream, sequence number and where
    /// its event starts in `queue`. Stored ([`Endpoint::stash`]) if the driver does not pull it.
    unstored: Option<(u64, u64, usize)>,
}

struct Entry {
    session: Session,
    /// A stateless session, ended with its POST.
    transient: bool,
    /// A stateless session holding a `subscriptions/listen` stream (counted in
    /// [`Endpoint::listening`]).
    listen: bool,
    /// A listen stream's next keep-alive comment, when it stays silent until then.
    keep_alive: Option<Instant>,
    /// A legacy HTTP+SSE session: one stream (its `standalone`) carries everything, and the
    /// session ends when that stream does.
    legacy: bool,
    store: Option<Box<dyn EventStore>>,
    /// The endpoint-wide order (a counter) of each event the store may still hold, oldest
    /// first, with its stream and sequence number: what the totals across sessions evict by.
    stored: VecDeque<(u64, u64, u64)>,
    /// This session's key in [`Endpoint::store_order`] (the order of its oldest event).
    store_key: Option<u64>,
    /// The client's address, when the driver named it.
    peer: Option<IpAddr>,
    /// Who opened it ([`SessionOwner`]): every later request must be of the same owner.
    owner: Option<String>,
    /// Its key (its expiry) in [`Endpoint::idle`] while it may be evicted.
    idle_key: Option<Instant>,
    streams: BTreeMap<u64, Logical>,
    next_logical: u64,
    standalone: Option<u64>,
    /// The stream each in-flight inbound request was posted on.
    routes: BTreeMap<RequestId, u64>,
    /// It is in [`Endpoint::warm`] (idle and not yet shed, or gone busy since).
    warm: bool,
    /// The server-to-client requests of a stateless session still unanswered (its keys in
    /// [`Endpoint::awaiting`]).
    asked: Vec<i64>,
    last_activity: Instant,
    timer: Option<Instant>,
    ending: Ending,
}

impl Entry {
    fn new(
        session: Session,
        store: Option<Box<dyn EventStore>>,
        transient: bool,
        now: Instant,
    ) -> Box<Self> {
        Box::new(Entry {
            session,
            transient,
            listen: false,
            keep_alive: None,
            legacy: false,
            store,
            stored: VecDeque::new(),
            store_key: None,
            peer: None,
            owner: None,
            idle_key: None,
            streams: BTreeMap::new(),
            next_logical: 1,
            standalone: None,
            routes: BTreeMap::new(),
            warm: false,
            asked: Vec::new(),
            last_activity: now,
            timer: None,
            ending: Ending::Closed,
        })
    }

    /// Forgets the route of `id` and marks it answered on its stream.
    fn take_route(&mut self, id: &RequestId) -> Option<u64> {
        let l = self.routes.remove(id)?;
        if let Some(Logical {
            kind: Kind::Post { unanswered, .. },
            ..
        }) = self.streams.get_mut(&l)
        {
            *unanswered = unanswered.saturating_sub(1);
        }
        Some(l)
    }

    fn attached(&self) -> bool {
        self.streams.values().any(|l| l.conn.is_some())
    }

    /// Whether the session may be evicted to make room: stateful, no request in flight either
    /// way, no open stream.
    fn evictable(&self) -> bool {
        !self.transient
            && !self.listen
            && !self.session.is_closed()
            && self.routes.is_empty()
            && self.session.inbound_in_flight() == 0
            && self.session.outbound_in_flight() == 0
            && !self.attached()
    }

    /// Gives back the room of its empty tables and queues, its session's included: it is idle,
    /// and may stay so (10 000 idle sessions cost their entries, not the room of their first
    /// requests). See [`WARM_MAX`] for when.
    fn shed(&mut self) {
        self.session.shed();
        if self.streams.is_empty() {
            self.streams = BTreeMap::new();
        }
        if self.routes.is_empty() {
            self.routes = BTreeMap::new();
        }
        if self.stored.is_empty() {
            self.stored = VecDeque::new();
        }
        if let Some(store) = self.store.as_mut() {
            store.shed();
        }
        if self.asked.is_empty() {
            self.asked = Vec::new();
        }
    }

    /// Whether new SSE streams start with a priming event (resumable, 2025-11-25 and later).
    fn primes(&self) -> bool {
        self.store.is_some()
            && self
                .session
                .version()
                .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }
}

/// What a POST body holds.
#[derive(Default)]
struct Classified {
    requests: Ids,
    initialize: bool,
    batch: bool,
    /// Something in it gets a JSON-RPC answer (a request, or an invalid request in a batch).
    answerable: bool,
}

/// The ids of a POST's requests: one is held without an allocation (the common case).
#[derive(Default)]
enum Ids {
    #[default]
    None,
    One(RequestId),
    Many(Vec<RequestId>),
}

impl Ids {
    fn push(&mut self, id: RequestId) {
        *self = match core::mem::take(self) {
            Ids::None => Ids::One(id),
            Ids::One(first) => Ids::Many(alloc::vec![first, id]),
            Ids::Many(mut v) => {
                v.push(id);
                Ids::Many(v)
            }
        };
    }
}

impl core::ops::Deref for Ids {
    type Target = [RequestId];

    fn deref(&self) -> &[RequestId] {
        match self {
            Ids::None => &[],
            Ids::One(id) => core::slice::from_ref(id),
            Ids::Many(v) => v,
        }
    }
}

/// The Streamable HTTP endpoint (legacy form: 2025-03-26, 2025-06-18, 2025-11-25).
/// With [`EndpointConfig::legacy_sse`] set it also serves the HTTP+SSE transport of 2024-11-05
/// (see the [module documentation](super)).
///
/// Drive it like every state machine of this crate — mutate, then drain until idle:
///
/// 1. for each HTTP request call [`handle_request`](Self::handle_request) and send the reply
///    head it returns; a [`Body::Stream`] is pulled with [`poll_stream`](Self::poll_stream)
///    until [`StreamPoll::Closed`], re-polling the handles that
///    [`poll_stream_ready`](Self::poll_stream_ready) names; report a client that went away with
///    [`stream_closed`](Self::stream_closed);
/// 2. hand [`poll_event`](Self::poll_event)s to the application, which answers (responds,
///    notifies, reports progress, sends requests) through the session itself:
///    [`with_session`](Self::with_session);
/// 3. call [`handle_timeout`](Self::handle_timeout) at [`poll_timeout`](Self::poll_timeout).
pub struct Endpoint {
    config: EndpointConfig,
    /// The capabilities the sessions declare, parsed once (the 2026-07-28 checks use them).
    own_caps: crate::session::CapSet,
    /// Boxed: a session is taken out and put back on every request, and a B-tree moves its
    /// neighbours' values when it does (a pointer each, not a whole session).
    sessions: BTreeMap<SessionId, Box<Entry>>,
    conns: BTreeMap<StreamId, Conn>,
    next_conn: u64,
    next_transient: u128,
    events: VecDeque<SessionEvent>,
    ready: VecDeque<StreamId>,
    timers: BTreeSet<(Instant, SessionId)>,
    stats: Stats,
    scratch: Vec<u8>,
    /// Sessions holding a `subscriptions/listen` stream.
    listening: usize,
    /// [`shut_down`](Self::shut_down) was called: every request is refused.
    shutting_down: bool,
    /// Stateful sessions per peer address (those whose driver named it).
    peers: BTreeMap<IpAddr, usize>,
    /// The sessions that may be evicted, by expiry (the first is the one to evict), and the
    /// same per peer address: finding the victim costs `log n`, whatever the table holds.
    idle: BTreeSet<(Instant, SessionId)>,
    idle_by_peer: BTreeMap<IpAddr, BTreeSet<(Instant, SessionId)>>,
    /// Sessions with stored events, by the order of their oldest one: the first holds the
    /// oldest event of the endpoint.
    store_order: BTreeSet<(u64, SessionId)>,
    /// The order the next stored event gets.
    next_stored: u64,
    /// Events and bytes retained by all sessions' stores.
    stored_events: usize,
    stored_bytes: usize,
    /// The server-to-client requests of stateless sessions still unanswered, by id: where the
    /// client's answer, which comes on a POST of its own, is taken.
    awaiting: BTreeMap<i64, SessionId>,
    /// Idle sessions keeping the room of their tables for their next request, oldest first,
    /// with the time from which they may be shed (see [`WARM_MAX`]).
    warm: VecDeque<(Instant, SessionId)>,
}

/// How many idle sessions keep the room of their tables (a few hundred bytes to a few KiB
/// each) for their next request, and for how long at least: a session that became idle is
/// shed ([`Entry::shed`]) once it stayed idle for [`WARM_FOR`] or when more than this many
/// are warm, the longest idle first. A busy session's next request then allocates nothing
/// for its tables (five allocations a request were a session's going empty and back), and
/// 10 000 idle sessions still cost their entries alone.
const WARM_MAX: usize = 1024;

/// See [`WARM_MAX`].
const WARM_FOR: Duration = Duration::from_secs(1);

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("sessions", &self.sessions.len())
            .field("streams", &self.conns.len())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint with no sessions.
    pub fn new(mut config: EndpointConfig) -> Self {
        config.session.framing = crate::session::Framing::Raw;
        Endpoint {
            own_caps: crate::session::CapSet::parse(&config.session.capabilities),
            config,
            sessions: BTreeMap::new(),
            conns: BTreeMap::new(),
            next_conn: 1,
            next_transient: 1,
            events: VecDeque::new(),
            ready: VecDeque::new(),
            timers: BTreeSet::new(),
            stats: Stats::default(),
            scratch: Vec::new(),
            listening: 0,
            shutting_down: false,
            peers: BTreeMap::new(),
            idle: BTreeSet::new(),
            idle_by_peer: BTreeMap::new(),
            store_order: BTreeSet::new(),
            next_stored: 0,
            stored_events: 0,
            stored_bytes: 0,
            awaiting: BTreeMap::new(),
            warm: VecDeque::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// The largest accepted body. A driver may stop reading a body after this many bytes plus
    /// one and pass what it read: the reply is 413.
    pub fn max_body_size(&self) -> usize {
        self.config.max_body_size
    }

    // ------------------------------------------------------------------ requests

    /// Handles one HTTP request to the MCP endpoint: `parts` and the complete `body`.
    /// `random` must be a fresh, unpredictable 128-bit value (from the operating system's
    /// CSPRNG); it becomes the session id when the request opens a session (an `initialize`
    /// POST, a legacy SSE GET) and is ignored otherwise. `None` (no randomness could be had)
    /// refuses to open a session with 503: a guessable session id is never made.
    ///
    /// A [`PeerAddr`] in `parts.extensions` names the client's address (for
    /// [`EndpointConfig::max_sessions_per_peer`](super::EndpointConfig::max_sessions_per_peer)).
    pub fn handle_request(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        random: Option<u128>,
    ) -> Response<Body> {
        if !host_allowed(&self.config.allowed_hosts, headers::host(parts)) {
            return rpc_error(
                StatusCode::FORBIDDEN,
                TRANSPORT_ERROR,
                "Forbidden: Host not allowed",
                None,
            );
        }
        if !matches!(self.config.allowed_origins, super::config::AllowList::Any)
            && let Some(origin) = parts.headers.get(header::ORIGIN)
            && !origin
                .to_str()
                .is_ok_and(|o| origin_allowed(&self.config.allowed_origins, o.trim()))
        {
            return rpc_error(
                StatusCode::FORBIDDEN,
                TRANSPORT_ERROR,
                "Forbidden: Origin not allowed",
                None,
            );
        }
        let mut reply = self.dispatch(now, parts, body, random);
        if let Some(cors) = &self.config.cors {
            // The origin, when there is one, passed the check above.
            let origin = parts.headers.get(header::ORIGIN);
            super::cors::decorate(
                cors,
                &self.config.allowed_origins,
                origin,
                reply.headers_mut(),
            );
        }
        reply
    }

    /// [`handle_request`](Self::handle_request) once `Host` and `Origin` passed.
    fn dispatch(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        random: Option<u128>,
    ) -> Response<Body> {
        if self.shutting_down {
            let mut reply = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: the server is shutting down",
                None,
            );
            reply
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return reply;
        }
        let legacy = parts.uri.path() != self.config.path;
        if legacy && !self.is_legacy_path(parts.uri.path()) {
            return plain(StatusCode::NOT_FOUND, Body::Empty);
        }
        if parts.method == Method::OPTIONS
            && let Some(cors) = &self.config.cors
        {
            let allow = if legacy {
                self.legacy_methods(parts.uri.path())
            } else {
                self.methods()
            };
            let mut r = plain(StatusCode::NO_CONTENT, Body::Empty);
            let h = r.headers_mut();
            h.insert(header::ALLOW, HeaderValue::from_static(allow));
            super::cors::preflight(cors, &parts.headers, allow, h);
            return r;
        }
        if legacy {
            return self.legacy_request(now, parts, body, random);
        }
        match parts.method {
            Method::POST => self.post(now, parts, body, random),
            Method::GET => self.get(now, parts),
            Method::DELETE => self.delete(now, parts),
            _ => self.method_not_allowed(),
        }
    }

    fn get_allowed(&self) -> bool {
        !self.config.stateless
            && self.config.response_mode != ResponseMode::JsonOnly
            && (self.config.standalone_stream || self.config.event_store.is_some())
    }

    fn delete_allowed(&self) -> bool {
        !self.config.stateless && self.config.allow_delete
    }

    fn method_not_allowed(&self) -> Response<Body> {
        let mut r = rpc_error(
            StatusCode::METHOD_NOT_ALLOWED,
            TRANSPORT_ERROR,
            "Method Not Allowed",
            None,
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(self.methods()));
        r
    }

    /// The methods the endpoint's path serves (its `Allow` header).
    fn methods(&self) -> &'static str {
        match (self.get_allowed(), self.delete_allowed()) {
            (true, true) => "GET, POST, DELETE",
            (true, false) => "GET, POST",
            (false, true) => "POST, DELETE",
            (false, false) => "POST",
        }
    }

    /// The id of a session about to open (from `random`), after making room for it (evicting
    /// an idle session of `peer` at its share, an idle session at the cap), or the refusal:
    /// 429 when the peer's sessions are all busy, 503 when the table is full of busy sessions,
    /// the id is taken or the driver had no randomness to give (Streamable HTTP and legacy SSE
    /// alike).
    fn fresh_session_id(
        &mut self,
        now: Instant,
        random: Option<u128>,
        peer: Option<IpAddr>,
    ) -> Result<SessionId, Refusal> {
        let Some(random) = random else {
            return Err(Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: no randomness for a session id",
                None,
            ));
        };
        // A shard's session ids name it (in their low byte), for the router in front.
        let sid = SessionId::from_u128(match self.config.shard {
            Some(shard) => shard.mark(random),
            None => random,
        });
        if let (Some(p), Some(share)) = (peer, self.config.max_sessions_per_peer) {
            while self.peers.get(&p).copied().unwrap_or(0) >= share {
                if !self.evict_one(now, Some(p)) {
                    return Err(Refusal::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        TRANSPORT_ERROR,
                        "Too Many Requests: this client has too many sessions open",
                        None,
                    ));
                }
            }
        }
        if !self.make_room(now) || self.sessions.contains_key(&sid) {
            return Err(Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: cannot open another session",
                None,
            ));
        }
        Ok(sid)
    }

    /// Whether there is room for one more session, once the least recently used idle ones
    /// are evicted if the table is full.
    fn make_room(&mut self, now: Instant) -> bool {
        while self.sessions.len() >= self.config.max_sessions {
            if !self.evict_one(now, None) {
                return false;
            }
        }
        true
    }

    /// Ends the idle session nearest its expiry (of `peer` only, when given) to make room:
    /// an idle session's expiry is its last activity plus its idle (or, handshake
    /// unfinished, handshake) timeout. `false` when no session is evictable.
    fn evict_one(&mut self, now: Instant, peer: Option<IpAddr>) -> bool {
        let first = match peer {
            None => self.idle.first(),
            Some(p) => self.idle_by_peer.get(&p).and_then(BTreeSet::first),
        };
        let Some(&(key, sid)) = first else {
            return false;
        };
        let Some(mut entry) = self.sessions.remove(&sid) else {
            // Never expected (the tables follow the sessions): drop the stale key.
            self.forget_idle(sid, key);
            return false;
        };
        entry.ending = Ending::Evicted;
        entry.session.handle_closed(
            now,
            Some(Error::new(
                ErrorKind::LimitExceeded,
                "the idle HTTP session was evicted to make room for another",
            )),
        );
        self.settle(now, sid, entry, None);
        true
    }

    /// The session a request names, taken out of the table (the caller puts it back or
    /// settles it): its id must be known (400 without, 404 unknown), and, when
    /// `check_version`, its `MCP-Protocol-Version` supported.
    fn take_session(
        &mut self,
        parts: &Parts,
        check_version: bool,
    ) -> Result<(SessionId, Box<Entry>), Refusal> {
        let sid = self.lookup(parts)?;
        if check_version {
            self.protocol_version(parts)?;
        }
        match self.sessions.remove(&sid) {
            Some(entry) => Ok((sid, entry)),
            None => Err(Refusal::new(
                StatusCode::NOT_FOUND,
                TRANSPORT_ERROR,
                "Session not found",
                None,
            )),
        }
    }

    fn lookup(&self, parts: &Parts) -> Result<SessionId, Refusal> {
        let Some(raw) = parts.headers.get(&MCP_SESSION_ID) else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                TRANSPORT_ERROR,
                "Bad Request: Mcp-Session-Id header is required",
                None,
            ));
        };
        match raw.to_str().ok().and_then(|s| SessionId::parse(s.trim())) {
            Some(sid)
                if self.sessions.get(&sid).is_some_and(|e| {
                    !e.transient && !e.legacy && e.owner.as_deref() == owner_of(parts)
                }) =>
            {
                Ok(sid)
            }
            _ => Err(Refusal::new(
                StatusCode::NOT_FOUND,
                TRANSPORT_ERROR,
                "Session not found",
                None,
            )),
        }
    }

    /// The `MCP-Protocol-Version` header: `None` when absent, 400 when unsupported.
    fn protocol_version(&self, parts: &Parts) -> Result<Option<ProtocolVersion>, Refusal> {
        let Some(raw) = parts.headers.get(&MCP_PROTOCOL_VERSION) else {
            return Ok(None);
        };
        match raw
            .to_str()
            .ok()
            .and_then(|s| ProtocolVersion::parse(s.trim()))
        {
            Some(v) if !v.is_stateless() && self.config.session.versions.contains(&v) => {
                Ok(Some(v))
            }
            _ => {
                let mut msg = String::from("Bad Request: Unsupported protocol version (supported:");
                for v in self
                    .config
                    .session
                    .versions
                    .iter()
                    .filter(|v| !v.is_stateless())
                {
                    let _ = write!(msg, " {v}");
                }
                msg.push(')');
                Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    TRANSPORT_ERROR,
                    &msg,
                    None,
                ))
            }
        }
    }

    /// The checks every POST body passes, on either transport: JSON content type (415), size
    /// (413), well-formed JSON-RPC (400 with -32700 / -32600).
    fn check_body(&self, parts: &Parts, body: &[u8]) -> Result<Classified, Refusal> {
        self.check_body_parsed(parts, body).map(|(c, _)| c)
    }

    /// [`check_body`](Self::check_body), with the parsed body for the session to take (a
    /// large body is not parsed again there).
    fn check_body_parsed<'a>(
        &self,
        parts: &Parts,
        body: &'a [u8],
    ) -> Result<(Classified, Parsed<'a>), Refusal> {
        if !is_json(&parts.headers) {
            return Err(Refusal::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                TRANSPORT_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
                None,
            ));
        }
        if body.len() > self.config.max_body_size {
            return Err(Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                TRANSPORT_ERROR,
                "Payload Too Large",
                None,
            ));
        }
        let parsed = jsonrpc::parse(body);
        classify(&parsed).map(|c| (c, parsed))
    }

    fn post(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        random: Option<u128>,
    ) -> Response<Body> {
        let json_only = self.config.response_mode == ResponseMode::JsonOnly;
        if !accepts(&parts.headers, "application", "json")
            || (!json_only && !accepts(&parts.headers, "text", "event-stream"))
        {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                if json_only {
                    "Not Acceptable: the client must accept application/json"
                } else {
                    "Not Acceptable: the client must accept both application/json and text/event-stream"
                },
                None,
            );
        }
        let (c, parsed) = match self.check_body_parsed(parts, body) {
            Ok(found) => found,
            Err(r) => return r.reply(),
        };
        if let Some(version) = self.modern_version(parts) {
            return self.post_modern(now, parts, body, &c, version);
        }
        if self.config.stateless {
            return self.post_stateless(now, parts, (body, parsed), &c, random);
        }
        if c.initialize && !parts.headers.contains_key(&MCP_SESSION_ID) {
            return self.initialize(now, parts, body, &c, random);
        }
        let (sid, mut entry) = match self.take_session(parts, !c.initialize) {
            Ok(found) => found,
            Err(r) => return r.reply(),
        };
        if let Err(r) = admit(&entry, &c, entry.session.version()) {
            self.sessions.insert(sid, entry);
            return r.reply();
        }
        entry.last_activity = now;
        if !c.answerable {
            entry.session.handle_parsed(now, body.len(), parsed);
            self.settle(now, sid, entry, None);
            return plain(StatusCode::ACCEPTED, Body::Empty);
        }
        if self.config.instance != 0
            && !c.initialize
            && entry.session.state() == State::Initializing
        {
            // Among instances, the client's `notifications/initialized` may have gone to
            // another one: a request after it says the handshake completed.
            entry.session.handle_message(now, INITIALIZED_NOTIFICATION);
        }
        let json = self.config.response_mode != ResponseMode::Sse;
        let (l, conn) = self.open_post(&mut entry, sid, &c, json);
        entry.session.handle_parsed(now, body.len(), parsed);
        self.settle(now, sid, entry, Some(l));
        self.post_reply(conn, json, None)
    }

    /// An `initialize` POST without a session id: a new session, whose id is `random`.
    fn initialize(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        c: &Classified,
        random: Option<u128>,
    ) -> Response<Body> {
        let mut session = Session::server(self.config.session.clone());
        if self.config.response_mode == ResponseMode::JsonOnly {
            session.requests_refused = Some(REQUESTS_NEED_SSE);
        }
        session.handle_message(now, body);
        if session.state() != State::Initializing {
            // Refused (bad params, no common version): no session, the JSON-RPC error as body.
            let mut out = Vec::new();
            while session.poll_transmit(&mut out).is_some() {}
            return json_reply(StatusCode::BAD_REQUEST, Body::Full(out));
        }
        // Only an acceptable `initialize` makes room (evicts an idle session) for itself.
        let peer = peer_of(parts);
        let sid = match self.fresh_session_id(now, random, peer) {
            Ok(sid) => sid,
            Err(refused) => return refused.reply(),
        };
        let mut entry = self.stateful_entry(session, sid, now);
        self.set_peer(&mut entry, peer);
        entry.owner = owner_of(parts).map(String::from);
        self.stats.sessions_created += 1;
        let json = self.config.response_mode != ResponseMode::Sse;
        let (l, conn) = self.open_post(&mut entry, sid, c, json);
        self.settle(now, sid, entry, Some(l));
        self.post_reply(conn, json, Some(sid))
    }

    /// A POST in stateless mode: served by a fresh session, pre-initialized unless the POST is
    /// itself an `initialize`, and ended with the POST. A POST of answers goes to the sessions
    /// whose requests they answer.
    fn post_stateless(
        &mut self,
        now: Instant,
        parts: &Parts,
        (body, parsed): (&[u8], Parsed<'_>),
        c: &Classified,
        random: Option<u128>,
    ) -> Response<Body> {
        let header_version = if c.initialize {
            None
        } else {
            match self.protocol_version(parts) {
                Ok(v) => v,
                Err(r) => return r.reply(),
            }
        };
        if !c.answerable {
            // Responses reach the session that asked; notifications cannot reach any state.
            self.stateless_answers(now, body);
            return plain(StatusCode::ACCEPTED, Body::Empty);
        }
        let version = header_version.unwrap_or(ProtocolVersion::V2025_03_26);
        if c.batch && !version.allows_batches() {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: JSON-RPC batches are not allowed in this protocol version",
                None,
            );
        }
        if !self.make_room(now) {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: too many requests in progress",
                None,
            );
        }
        let sid = self.transient_id();
        let session = if c.initialize {
            let mut s = Session::server(self.config.session.clone());
            s.requests_refused = Some(REQUESTS_NEED_SSE);
            s
        } else {
            // Requests need the POST's SSE reply to reach the client.
            let base = match self.config.response_mode {
                ResponseMode::Sse => self.request_id_base(random),
                ResponseMode::Json | ResponseMode::JsonOnly => None,
            };
            match stateless_session(&self.config.session, version, base) {
                Ok(s) => s,
                Err(e) => return rpc_error(StatusCode::BAD_REQUEST, -32600, &e.to_string(), None),
            }
        };
        let mut entry = Entry::new(session, None, true, now);
        self.stats.sessions_created += 1;
        let json = self.config.response_mode != ResponseMode::Sse;
        let (l, conn) = self.open_post(&mut entry, sid, c, json);
        entry.session.handle_parsed(now, body.len(), parsed);
        self.settle(now, sid, entry, Some(l));
        self.post_reply(conn, json, None)
    }

    /// The first id of the requests a stateless session may send: unpredictable (drawn from
    /// the POST's `random`), since whoever names it in a POST answers the request, and far
    /// from the ids other stateless sessions are waiting on. `None` (the session sends no
    /// request) without randomness or, very unlikely, when both draws land near ids in use.
    /// The ids stay below 2^53, which JavaScript clients read exactly.
    fn request_id_base(&self, random: Option<u128>) -> Option<i64> {
        const SPAN: u64 = super::shard::REQUEST_ID_BLOCK;
        let random = random?;
        // In a block of the endpoint's shard (any block when it is not sharded), so that the
        // client's answers can be routed back to it.
        let shard = self.config.shard.or_else(|| super::Shard::new(0, 1))?;
        [random as u64, (random >> 64) as u64]
            .into_iter()
            .map(|word| shard.request_id_base(word))
            .find(|base| {
                let (lo, hi) = ((base - SPAN) as i64, (base + SPAN) as i64);
                self.awaiting.range(lo..hi).next().is_none()
            })
            .map(|base| base as i64)
    }

    /// A stateless POST of responses: each goes to the session whose request it answers
    /// (dropped when none waits for it, e.g. after that request's POST ended).
    fn stateless_answers(&mut self, now: Instant, body: &[u8]) {
        let items = match jsonrpc::parse(body) {
            Parsed::Single(item) => alloc::vec![item],
            Parsed::Batch(items) => items,
            #[allow(unreachable_patterns)]
            _ => Vec::new(),
        };
        let single = items.len() == 1;
        let mut buf = Vec::new();
        for item in items {
            let id = match &item {
                Ok(Envelope::Response {
                    id: RequestId::Number(n),
                    ..
                })
                | Ok(Envelope::Error {
                    id: Some(RequestId::Number(n)),
                    ..
                }) => *n,
                _ => {
                    self.stats.messages_dropped += 1;
                    continue;
                }
            };
            let Some(sid) = self.awaiting.remove(&id) else {
                self.stats.messages_dropped += 1;
                continue;
            };
            let Some(mut entry) = self.sessions.remove(&sid) else {
                continue;
            };
            entry.asked.retain(|n| *n != id);
            entry.last_activity = now;
            let message = if single {
                body
            } else {
                buf.clear();
                if let Ok(env) = item {
                    env.to_owned().write(&mut buf);
                }
                &buf
            };
            entry.session.handle_message(now, message);
            self.settle(now, sid, entry, None);
        }
    }

    /// The id of a session that lives as long as one POST (never sent to the client).
    fn transient_id(&mut self) -> SessionId {
        let mut sid = SessionId::from_u128(self.next_transient);
        while self.sessions.contains_key(&sid) {
            self.next_transient = self.next_transient.wrapping_add(1);
            sid = SessionId::from_u128(self.next_transient);
        }
        self.next_transient = self.next_transient.wrapping_add(1);
        sid
    }

    /// Opens the stream of a POST holding requests, attached to a new reply body.
    fn open_post(
        &mut self,
        entry: &mut Entry,
        sid: SessionId,
        c: &Classified,
        json: bool,
    ) -> (u64, StreamId) {
        self.open_post_as(entry, sid, c, json, false)
    }

    /// [`open_post`](Self::open_post), `lazy`: JSON unless something goes out before the
    /// answer (the 2026-07-28 transport's replies; see [`DeferredHead`]).
    fn open_post_as(
        &mut self,
        entry: &mut Entry,
        sid: SessionId,
        c: &Classified,
        json: bool,
        lazy: bool,
    ) -> (u64, StreamId) {
        let l = entry.next_logical;
        entry.next_logical += 1;
        for id in c.requests.iter() {
            entry.routes.insert(id.clone(), l);
        }
        let conn = self.new_conn(sid, l, !json);
        if !json && entry.primes() {
            self.prime(conn, l);
        }
        entry.streams.insert(
            l,
            Logical {
                kind: Kind::Post {
                    json,
                    lazy,
                    unanswered: c.requests.len(),
                    parts: Vec::new(),
                },
                next_seq: 1,
                conn: Some(conn),
            },
        );
        (l, conn)
    }

    fn new_conn(&mut self, sid: SessionId, l: u64, sse: bool) -> StreamId {
        let id = StreamId(self.next_conn);
        self.next_conn += 1;
        self.conns.insert(
            id,
            Conn {
                session: sid,
                logical: Some(l),
                queue: Vec::new(),
                finished: false,
                waiting: false,
                sse,
                delivered: None,
                unstored: None,
            },
        );
        id
    }

    /// Queues the priming event `<l>-0` (and `retry`) on a new SSE stream.
    fn prime(&mut self, conn: StreamId, l: u64) {
        let retry = self.config.sse_retry.map(Duration::as_millis);
        if let Some(c) = self.conns.get_mut(&conn) {
            // Room for a small answer after the priming event: the queue grows once.
            c.queue.reserve(256);
            sse::encode_priming_pair(&mut c.queue, (l, 0), retry);
        }
    }

    /// The reply to a POST holding requests: complete when everything was answered at once.
    fn post_reply(
        &mut self,
        conn: StreamId,
        json: bool,
        new_session: Option<SessionId>,
    ) -> Response<Body> {
        let body = if self.conns.get(&conn).is_some_and(|c| c.finished) {
            match self.conns.remove(&conn) {
                Some(c) => {
                    if let Some(l) = c.delivered {
                        self.forget_delivered(c.session, l);
                    }
                    Body::Full(c.queue)
                }
                None => Body::Empty,
            }
        } else {
            Body::Stream(conn)
        };
        let mut r = if json {
            json_reply(StatusCode::OK, body)
        } else {
            sse_reply(body)
        };
        if let Some(sid) = new_session
            && let Ok(v) = HeaderValue::try_from(alloc::format!("{sid}"))
        {
            r.headers_mut().insert(MCP_SESSION_ID, v);
        }
        r
    }

    fn get(&mut self, now: Instant, parts: &Parts) -> Response<Body> {
        if self.modern_version(parts).is_some() {
            return self.method_not_allowed(); // no GET stream in 2026-07-28
        }
        let resume = match parts.headers.get(&LAST_EVENT_ID) {
            Some(_) if self.config.event_store.is_some() => {
                Some(single(&parts.headers, &LAST_EVENT_ID))
            }
            _ => None,
        };
        if !self.get_allowed() || (!self.config.standalone_stream && resume.is_none()) {
            return self.method_not_allowed();
        }
        if !accepts(&parts.headers, "text", "event-stream") {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                "Not Acceptable: the client must accept text/event-stream",
                None,
            );
        }
        let (sid, mut entry) = match self.take_session(parts, true) {
            Ok(found) => found,
            Err(r) => return r.reply(),
        };
        entry.last_activity = now;
        let reply = match resume {
            Some(last) => self.resume(&mut entry, sid, last),
            None => self.open_standalone(&mut entry, sid),
        };
        self.settle(now, sid, entry, None);
        reply
    }

    fn open_standalone(&mut self, entry: &mut Entry, sid: SessionId) -> Response<Body> {
        if let Some(l) = entry.standalone
            && entry.streams.get(&l).is_some_and(|s| s.conn.is_some())
        {
            return rpc_error(
                StatusCode::CONFLICT,
                TRANSPORT_ERROR,
                "Conflict: only one standalone SSE stream is allowed per session",
                None,
            );
        }
        // A detached earlier standalone stream stays resumable from the event store only.
        if let Some(old) = entry.standalone.take() {
            entry.streams.remove(&old);
        }
        let (l, conn) = self.new_standalone(entry, sid);
        if entry.primes() {
            self.prime(conn, l);
        }
        sse_reply(Body::Stream(conn))
    }

    /// Opens the session's standalone stream (a new logical stream on a new connection) and
    /// returns both; the caller writes its first event.
    fn new_standalone(&mut self, entry: &mut Entry, sid: SessionId) -> (u64, StreamId) {
        let mut l = entry.next_logical;
        entry.next_logical += 1;
        if self.config.instance != 0 {
            // A numbered instance marks its standalone streams, so that another instance
            // resuming one knows it goes on after its events (see `stream_is_standalone`).
            l |= STANDALONE_STREAM;
        }
        let conn = self.new_conn(sid, l, true);
        entry.streams.insert(
            l,
            Logical {
                kind: Kind::Standalone,
                next_seq: 1,
                conn: Some(conn),
            },
        );
        entry.standalone = Some(l);
        (l, conn)
    }

    /// A GET with `Last-Event-ID: <l>-<seq>`: replays stream `l` after `seq`, then goes on with
    /// it if it is still live (closing the connection that pulled it before, if any).
    fn resume(&mut self, entry: &mut Entry, sid: SessionId, last: Option<&str>) -> Response<Body> {
        let Some((l, after)) = last.and_then(parse_event_id).filter(|(l, _)| {
            *l >= self.first_stream() && (*l & !STANDALONE_STREAM) < entry.next_logical
        }) else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                TRANSPORT_ERROR,
                "Bad Request: Last-Event-ID does not name an event of this session",
                None,
            );
        };
        // The answer of a finished stream `l` may wait unpulled on the connection that carried
        // it: the store gets it first (that connection's client is not reading it).
        let waiting: Vec<StreamId> = if entry.streams.contains_key(&l) {
            Vec::new()
        } else {
            self.conns
                .iter()
                .filter(|(_, c)| c.session == sid && c.unstored.is_some_and(|(s, ..)| s == l))
                .map(|(id, _)| *id)
                .collect()
        };
        for id in waiting {
            if let Some(mut c) = self.conns.remove(&id) {
                self.stash(sid, entry, &mut c);
                self.conns.insert(id, c);
            }
        }
        let mut replay = Vec::new();
        let mut first = None;
        if let Some(store) = &entry.store {
            store.replay(l, after, &mut |seq, data| {
                first.get_or_insert(seq);
                encode_message(&mut replay, Some((l, seq)), data);
            });
        }
        let live = entry.streams.get(&l).filter(|s| !s.is_json());
        let gap = match first {
            Some(f) => f > after.saturating_add(1),
            None => live.is_some_and(|s| s.next_seq.saturating_sub(1) > after),
        };
        if gap {
            self.stats.replay_gaps += 1;
        }
        if live.is_none() {
            return sse_reply(Body::Full(replay));
        }
        let old = entry.streams.get(&l).and_then(|s| s.conn);
        if let Some(old) = old {
            self.finish_conn(old);
        }
        let conn = self.new_conn(sid, l, true);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.queue = replay;
        }
        if let Some(s) = entry.streams.get_mut(&l) {
            s.conn = Some(conn);
        }
        sse_reply(Body::Stream(conn))
    }

    fn delete(&mut self, now: Instant, parts: &Parts) -> Response<Body> {
        if !self.delete_allowed() || self.modern_version(parts).is_some() {
            return self.method_not_allowed();
        }
        let (sid, mut entry) = match self.take_session(parts, true) {
            Ok(found) => found,
            Err(r) => return r.reply(),
        };
        entry.ending = Ending::Deleted;
        entry.session.handle_closed(now, None);
        self.settle(now, sid, entry, None);
        plain(StatusCode::NO_CONTENT, Body::Empty)
    }

    // ------------------------------------------------------------------- streams

    /// Whether the body of `stream` is SSE (`text/event-stream`), else one JSON body. Settled
    /// once the stream has data: for a reply marked [`DeferredHead`], ask on its first
    /// [`StreamPoll::Data`].
    pub fn stream_is_sse(&self, stream: StreamId) -> bool {
        self.conns.get(&stream).is_some_and(|c| c.sse)
    }

    /// The session whose reply body `stream` is.
    pub fn stream_session(&self, stream: StreamId) -> Option<SessionId> {
        self.conns.get(&stream).map(|c| c.session)
    }

    /// Bytes of session `sid`'s output that its open reply bodies hold and the driver has not
    /// pulled: what a client that does not read leaves waiting (a driver paces the session's
    /// application by it). Output for a stream with no connection goes to the event store
    /// and is not counted.
    pub fn unsent(&self, sid: SessionId) -> usize {
        let Some(entry) = self.sessions.get(&sid) else {
            return 0;
        };
        entry
            .streams
            .values()
            .filter_map(|l| l.conn.and_then(|c| self.conns.get(&c)))
            .map(|c| c.queue.len())
            .fold(0, usize::saturating_add)
    }

    /// Appends what stream `stream` has to send to `out`.
    #[must_use]
    pub fn poll_stream(&mut self, stream: StreamId, out: &mut Vec<u8>) -> StreamPoll {
        let Some(c) = self.conns.get_mut(&stream) else {
            return StreamPoll::Closed;
        };
        if c.unstored.is_some() && !(c.finished && c.delivered.is_some()) {
            // (Not the end of its stream after all: the answer goes to the store. Stashing
            // always clears `unstored`: this comes back here once at most.)
            self.stash_stream(stream);
            return self.poll_stream(stream, out);
        }
        if !c.queue.is_empty() {
            // An answer kept out of the store leaves with the last of its body: its stream is
            // delivered now, as it would be at the body's end (the store forgets what it holds
            // of it: a resumption gets all of the stream or nothing of it).
            let delivered = c.unstored.take().and(c.delivered.take());
            let sid = c.session;
            let n = c.queue.len();
            if out.is_empty() {
                // Moved, not copied (a large reply is not copied once more here).
                core::mem::swap(out, &mut c.queue);
                c.queue.clear();
            } else {
                out.append(&mut c.queue);
            }
            if let Some(l) = delivered {
                self.forget_delivered(sid, l);
            }
            return StreamPoll::Data(n);
        }
        if c.finished {
            let delivered = c.delivered.map(|l| (c.session, l));
            self.conns.remove(&stream);
            if let Some((sid, l)) = delivered {
                self.forget_delivered(sid, l);
            }
            return StreamPoll::Closed;
        }
        c.waiting = true;
        StreamPoll::Pending
    }

    /// A stream that returned [`StreamPoll::Pending`] and has something now: poll it again.
    /// (A new [`Body::Stream`] is polled once right away, without waiting to be named here; a
    /// stream named here may have been closed since, which its poll reports.)
    #[must_use]
    pub fn poll_stream_ready(&mut self) -> Option<StreamId> {
        self.ready.pop_front()
    }

    /// The client went away from `stream` (connection closed or reset). This is not a
    /// cancellation: the session keeps going, and on an SSE stream what follows waits in the
    /// event store for a resumption. A stateless session ends here.
    pub fn stream_closed(&mut self, now: Instant, stream: StreamId) {
        let Some(mut c) = self.conns.remove(&stream) else {
            return;
        };
        self.stash_conn(c.session, &mut c);
        if let Some(l) = c.logical {
            self.detach(now, c.session, l);
        }
    }

    /// Ends `stream` from the server side once what is queued has been pulled (e.g. to make
    /// clients poll, after the `retry` of the priming event). Its messages keep flowing into the
    /// event store; the client resumes with `Last-Event-ID`.
    pub fn close_stream(&mut self, now: Instant, stream: StreamId) {
        self.stash_stream(stream);
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        let logical = c.logical.take();
        let sid = c.session;
        self.finish_conn(stream);
        if let Some(l) = logical {
            self.detach(now, sid, l);
        }
    }

    /// Stream `l` of session `sid` lost its connection.
    fn detach(&mut self, now: Instant, sid: SessionId, l: u64) {
        let Some(mut entry) = self.sessions.remove(&sid) else {
            return;
        };
        entry.last_activity = now;
        let resumable = entry.store.is_some();
        if let Some(s) = entry.streams.get_mut(&l) {
            s.conn = None;
            // Nothing can resume a JSON body, nor anything without an event store: what follows
            // goes elsewhere (related requests and notifications to the standalone stream).
            if s.is_json() || !resumable {
                entry.streams.remove(&l);
                if entry.standalone == Some(l) {
                    entry.standalone = None;
                }
            }
        }
        if entry.transient {
            entry.session.handle_closed(now, None);
        }
        self.settle(now, sid, entry, None);
    }

    /// POST stream `l` of session `sid` went out whole (its reply body was pulled to its end):
    /// its events need not stay in the store.
    fn forget_delivered(&mut self, sid: SessionId, l: u64) {
        let Some(mut entry) = self.sessions.remove(&sid) else {
            return;
        };
        if let Some(store) = entry.store.as_mut()
            && !entry.streams.contains_key(&l)
        {
            let before = (store.len(), store.bytes());
            store.forget(l);
            if (store.len(), store.bytes()) != before {
                entry.stored.retain(|&(_, stream, _)| stream != l);
                self.stored_changed(sid, &mut entry, before);
            }
        }
        self.sessions.insert(sid, entry);
    }

    fn finish_conn(&mut self, id: StreamId) {
        if let Some(c) = self.conns.get_mut(&id) {
            c.logical = None;
            c.finished = true;
            wake(&mut self.ready, id, c);
        }
    }

    // -------------------------------------------------------------- application

    /// The next event of any session.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    /// The session `sid`, if alive.
    pub fn session(&self, sid: SessionId) -> Option<&Session> {
        self.sessions.get(&sid).map(|e| &e.session)
    }

    /// The ids of the sessions alive.
    pub fn sessions(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.sessions.keys().copied()
    }

    /// The first stream number of this endpoint's sessions: 1, or past its
    /// [`instance`](super::EndpointConfig::instance)'s prefix.
    fn first_stream(&self) -> u64 {
        (u64::from(self.config.instance) << 32).max(1)
    }

    /// The entry of stateful session `sid` (opened here or adopted): its event store, and
    /// its streams numbered in this instance's range.
    fn stateful_entry(&self, mut session: Session, sid: SessionId, now: Instant) -> Box<Entry> {
        if self.config.instance != 0 {
            // Its requests to the client are numbered in this instance's range, so that an
            // answer reaching another instance says where to take it (`request_instance`).
            session.next_id = headers::request_id_base(self.config.instance);
        }
        let store = self.config.event_store.as_ref().map(|f| f(sid));
        let mut entry = Entry::new(session, store, false, now);
        entry.next_logical = self.first_stream();
        entry
    }

    /// What another instance needs to serve session `sid` (see
    /// [`adopt_session`](Self::adopt_session)): `None` unless it is a handshake-era
    /// stateful session whose `initialize` was answered (its client may send its
    /// `notifications/initialized` to another instance already).
    pub fn session_snapshot(&self, sid: SessionId) -> Option<SessionSnapshot> {
        let e = self.sessions.get(&sid)?;
        let state = e.session.state();
        if e.transient || e.legacy || !matches!(state, State::Initializing | State::Ready) {
            return None;
        }
        Some(SessionSnapshot {
            version: e.session.version()?,
            client_info: e.session.peer_info()?.to_owned(),
            client_capabilities: e.session.peer_capabilities()?.to_owned(),
            owner: e.owner.clone(),
        })
    }

    /// The session a request names that this endpoint does not hold: a handshake-era
    /// request whose `MCP-Session-Id` is well formed but unknown here. An endpoint sharing
    /// its sessions with other instances looks it up in the shared store and, found,
    /// [adopts](Self::adopt_session) it before it handles the request. `None` for every
    /// other request (no id, a session held here, a 2026-07-28 or stateless-mode request).
    pub fn missing_session(&self, parts: &Parts) -> Option<SessionId> {
        if self.config.stateless
            || self.shutting_down
            || self.modern_version(parts).is_some()
            || !parts.uri.path().eq(self.config.path.as_str())
        {
            return None;
        }
        let raw = parts.headers.get(&MCP_SESSION_ID)?;
        let sid = SessionId::parse(raw.to_str().ok()?.trim())?;
        (!self.sessions.contains_key(&sid)).then_some(sid)
    }

    /// Takes over session `sid`, which another instance opened and described in `snapshot`:
    /// a session past its handshake, at its negotiated version, with its client's info and
    /// capabilities and its owner. Its first [`poll_event`](Self::poll_event) is the
    /// session's [`Event::Ready`], so that the application sets the session up as after a
    /// handshake. Requests in flight elsewhere stay there; this one serves what comes here.
    ///
    /// # Errors
    /// [`ErrorKind::AlreadyConnected`] when the endpoint holds `sid` already;
    /// [`ErrorKind::LimitExceeded`] when there is no room for another session (every slot
    /// busy); [`ErrorKind::ProtocolVersionMismatch`] or [`ErrorKind::InvalidParams`] when
    /// the snapshot names a version this endpoint does not serve or info that is not JSON
    /// objects.
    ///
    /// ```
    /// use mcp_proto::http::{Endpoint, EndpointConfig, SessionId, SessionSnapshot};
    /// use mcp_proto::{Instant, ProtocolVersion, session::Config};
    /// use serde_json::value::RawValue;
    ///
    /// let mut ep = Endpoint::new(EndpointConfig::new(Config::new("s", "1")));
    /// let obj = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
    /// let snapshot = SessionSnapshot {
    ///     version: ProtocolVersion::V2025_06_18,
    ///     client_info: obj(r#"{"name":"c","version":"1"}"#),
    ///     client_capabilities: obj("{}"),
    ///     owner: None,
    /// };
    /// let sid = SessionId::from_u128(42);
    /// ep.adopt_session(Instant::ZERO, sid, snapshot).unwrap();
    /// assert!(ep.session(sid).is_some());
    /// assert_eq!(ep.session_snapshot(sid).unwrap().version, ProtocolVersion::V2025_06_18);
    /// ```
    pub fn adopt_session(
        &mut self,
        now: Instant,
        sid: SessionId,
        snapshot: SessionSnapshot,
    ) -> Result<(), Error> {
        if self.sessions.contains_key(&sid) {
            return Err(Error::new(
                ErrorKind::AlreadyConnected,
                "the endpoint holds this session already",
            ));
        }
        let mut session = Session::server_ready(
            self.config.session.clone(),
            snapshot.version,
            snapshot.client_info,
            snapshot.client_capabilities,
        )?;
        if self.config.response_mode == ResponseMode::JsonOnly {
            session.requests_refused = Some(REQUESTS_NEED_SSE);
        }
        if !self.make_room(now) {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                "no room for another session",
            ));
        }
        let mut entry = self.stateful_entry(session, sid, now);
        entry.owner = snapshot.owner;
        self.stats.sessions_adopted += 1;
        self.settle(now, sid, entry, None);
        Ok(())
    }

    /// Runs `f` on session `sid`, then routes what it produced: the one way to reach a
    /// session's commands (respond, notify, report progress, send a request, cancel, close).
    /// A notification goes on the stream of the POST carrying the request it names
    /// (`notify_related`), else on the standalone GET stream; a request likewise, by
    /// `opts.related_to`. In stateless and JSON-only modes a session refuses to send requests
    /// (the client's answer could never reach it).
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] (-32002) when there is no session `sid` (never created, ended,
    /// or expired); `f` is not called then.
    ///
    /// ```
    /// # use mcp_proto::http::{Endpoint, EndpointConfig, SessionId};
    /// # use mcp_proto::session::Config;
    /// # use mcp_proto::{Instant, RequestId};
    /// # let mut ep = Endpoint::new(EndpointConfig::new(Config::new("s", "1")));
    /// # let sid = SessionId::from_u128(1);
    /// let result = serde_json::value::RawValue::from_string("{}".into()).unwrap();
    /// let sent = ep.with_session(Instant::ZERO, sid, |s| s.respond(&RequestId::Number(1), result));
    /// assert!(sent.is_err(), "no such session");
    /// ```
    pub fn with_session<R>(
        &mut self,
        now: Instant,
        sid: SessionId,
        f: impl FnOnce(&mut Session) -> R,
    ) -> Result<R, Error> {
        let Some(mut entry) = self.sessions.remove(&sid) else {
            return Err(Error::new(ErrorKind::NotFound, "no such session"));
        };
        let r = f(&mut entry.session);
        self.settle(now, sid, entry, None);
        Ok(r)
    }

    /// Shuts the endpoint down: every session is closed gracefully, as its application would
    /// ([`Session::close`]: requests in flight are answered within the session's
    /// [`close_timeout`](crate::session::Config::close_timeout), and every
    /// `subscriptions/listen` stream is answered with its final result, the revision's
    /// graceful end of a subscription, rather than cut), and every request from now on is
    /// refused with 503 (`Connection: close`). Drive the endpoint as usual until
    /// [`is_shut_down`](Self::is_shut_down) (the replies hold their last messages until the
    /// driver pulled them). Calling it again does nothing more.
    pub fn shut_down(&mut self, now: Instant) {
        self.shutting_down = true;
        let sids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for sid in sids {
            let Some(mut entry) = self.sessions.remove(&sid) else {
                continue;
            };
            if !matches!(entry.session.state(), State::Closing | State::Closed) {
                entry.session.close(now);
            }
            self.settle(now, sid, entry, None);
        }
    }

    /// Whether [`shut_down`](Self::shut_down) was called and nothing is left: no session, no
    /// reply body the driver has not pulled to its end.
    pub fn is_shut_down(&self) -> bool {
        self.shutting_down && self.sessions.is_empty() && self.conns.is_empty()
    }

    // ------------------------------------------------------------------- timers

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// Times out outbound requests and expires idle sessions (their memory is freed and their
    /// ids get 404 from now on). Safe to call at any time.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<SessionId> = self
            .timers
            .iter()
            .take_while(|(t, _)| *t <= now)
            .map(|(_, sid)| *sid)
            .collect();
        for sid in due {
            let Some(mut entry) = self.sessions.remove(&sid) else {
                continue;
            };
            entry.session.handle_timeout(now);
            if entry.keep_alive.is_some_and(|t| t <= now) {
                self.keep_alive(&mut entry, now);
            }
            if self.expiry(&entry).is_some_and(|t| t <= now) {
                entry.ending = Ending::Expired;
                entry.session.handle_closed(
                    now,
                    Some(Error::new(ErrorKind::Timeout, "the HTTP session expired")),
                );
            }
            self.settle(now, sid, entry, None);
        }
    }

    /// Writes a keep-alive comment on the listen stream of `entry`, silent since its last
    /// message, and arms the next one.
    fn keep_alive(&mut self, entry: &mut Entry, now: Instant) {
        entry.keep_alive = self.config.listen_keep_alive.map(|d| now + d);
        for c in entry.streams.values().filter_map(|l| l.conn) {
            if let Some(conn) = self.conns.get_mut(&c)
                && conn.sse
                && !conn.finished
                && conn.queue.is_empty()
            {
                conn.queue.extend_from_slice(KEEP_ALIVE);
                wake(&mut self.ready, c, conn);
                self.stats.keep_alives_sent += 1;
            }
        }
    }

    fn expiry(&self, entry: &Entry) -> Option<Instant> {
        if entry.transient {
            return None;
        }
        let handshaking = matches!(
            entry.session.state(),
            State::AwaitingInit | State::Initializing
        );
        // A legacy session is opened by a bare GET, before any handshake: it gets the
        // handshake's time even while its stream is open.
        if entry.attached() && !(entry.legacy && handshaking) {
            return None;
        }
        let after = if handshaking {
            self.config.handshake_timeout
        } else {
            self.config.idle_timeout
        };
        Some(entry.last_activity + after)
    }

    /// Counters and memory gauges.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.sessions = self.sessions.len();
        s.listen_streams = self.listening;
        s.open_streams = self.conns.len();
        s.queued_bytes = self.conns.values().map(|c| c.queue.len()).sum();
        for e in self.sessions.values() {
            s.warm_sessions += usize::from(e.warm && e.idle_key.is_some());
            s.logical_streams += e.streams.len();
            s.routed_requests += e.routes.len();
            if let Some(store) = &e.store {
                s.stored_events += store.len();
                s.stored_bytes += store.bytes();
            }
        }
        s
    }

    // ----------------------------------------------------------------- routing

    /// Drains session `sid` (taken out of the map) after a mutation: routes its messages to
    /// streams, forwards its events, completes answered POSTs, ends it when closed, re-arms its
    /// timer and puts it back. `post` is the POST being handled, if any: it receives answers
    /// that name no request (errors about unreadable messages).
    fn settle(&mut self, now: Instant, sid: SessionId, mut entry: Box<Entry>, post: Option<u64>) {
        let mut buf = core::mem::take(&mut self.scratch);
        loop {
            let mut moved = false;
            loop {
                buf.clear();
                let Some(t) = entry.session.poll_transmit(&mut buf) else {
                    break;
                };
                moved = true;
                if entry.listen {
                    // The stream spoke: its keep-alive waits a whole interval again.
                    entry.keep_alive = self.config.listen_keep_alive.map(|d| now + d);
                }
                self.route(now, sid, &mut entry, t, &mut buf, post);
            }
            while let Some(event) = entry.session.poll_event() {
                moved = true;
                if let Event::Cancelled { id, .. } = &event {
                    entry.take_route(id);
                }
                self.events.push_back(SessionEvent {
                    session: sid,
                    event,
                });
            }
            // Each answered POST's stream ends (found one at a time: collecting them would
            // allocate on every answer).
            while let Some(l) = entry
                .streams
                .iter()
                .find(|(_, s)| matches!(s.kind, Kind::Post { unanswered: 0, .. }))
                .map(|(l, _)| *l)
            {
                self.finish_logical(&mut entry, l, now, false);
            }
            if entry.transient
                && entry.streams.is_empty()
                && !matches!(entry.session.state(), State::Closing | State::Closed)
            {
                // The stateless POST is answered: its session ends.
                entry.session.close(now);
                moved = true;
            }
            if entry.transient
                && !entry.streams.is_empty()
                && !entry.attached()
                && !entry.session.is_closed()
            {
                // The reply of a stateless POST was cut (its client did not keep up, e.g. on a
                // listen stream): nothing can reach the client any more.
                entry.session.handle_closed(now, None);
                moved = true;
            }
            if entry.legacy && !entry.attached() && !entry.session.is_closed() {
                // The legacy stream is gone (client away, or cut for being slow): nothing can
                // reach the client any more, so the session ends.
                entry.session.handle_closed(now, None);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        self.scratch = buf;
        if entry.session.is_closed() {
            self.end(now, sid, entry);
            return;
        }
        let deadline = earliest(
            earliest(entry.session.poll_timeout(), self.expiry(&entry)),
            entry.keep_alive,
        );
        if entry.timer != deadline {
            if let Some(t) = entry.timer {
                self.timers.remove(&(t, sid));
            }
            if let Some(t) = deadline {
                self.timers.insert((t, sid));
            }
            entry.timer = deadline;
        }
        let idle = if entry.evictable() {
            self.expiry(&entry)
        } else {
            None
        };
        if entry.idle_key != idle {
            self.move_idle(sid, &mut entry, idle);
            if idle.is_some() && !entry.warm {
                entry.warm = true;
                self.warm.push_back((now + WARM_FOR, sid));
            }
        }
        self.sessions.insert(sid, entry);
        self.cool(now);
    }

    /// Sheds the warm sessions idle for [`WARM_FOR`], and the longest idle beyond
    /// [`WARM_MAX`].
    fn cool(&mut self, now: Instant) {
        while let Some(&(at, sid)) = self.warm.front() {
            let over = self.warm.len() > WARM_MAX;
            if at > now && !over {
                break;
            }
            self.warm.pop_front();
            let Some(entry) = self.sessions.get_mut(&sid) else {
                continue; // ended
            };
            entry.warm = false;
            if entry.idle_key.is_none() {
                continue; // busy: warm again when it is next idle
            }
            let until = entry.last_activity + WARM_FOR;
            if until > now && !over {
                // Busy and idle again since it was queued: its time starts again.
                entry.warm = true;
                self.warm.push_back((until, sid));
                continue;
            }
            entry.shed();
        }
    }

    /// Files `entry` (session `sid`) under `key` in the tables of evictable sessions (none:
    /// not evictable).
    fn move_idle(&mut self, sid: SessionId, entry: &mut Entry, key: Option<Instant>) {
        if let Some(old) = entry.idle_key.take() {
            self.idle.remove(&(old, sid));
            if let Some(p) = entry.peer
                && let Some(set) = self.idle_by_peer.get_mut(&p)
            {
                set.remove(&(old, sid));
                if set.is_empty() {
                    self.idle_by_peer.remove(&p);
                }
            }
        }
        if let Some(k) = key {
            self.idle.insert((k, sid));
            if let Some(p) = entry.peer {
                self.idle_by_peer.entry(p).or_default().insert((k, sid));
            }
        }
        entry.idle_key = key;
    }

    /// Drops a stale `(key, sid)` from the tables of evictable sessions.
    fn forget_idle(&mut self, sid: SessionId, key: Instant) {
        self.idle.remove(&(key, sid));
        self.idle_by_peer.retain(|_, set| {
            set.remove(&(key, sid));
            !set.is_empty()
        });
    }

    /// Picks the stream of one outgoing message and delivers it.
    fn route(
        &mut self,
        now: Instant,
        sid: SessionId,
        entry: &mut Entry,
        t: Transmit,
        bytes: &mut Vec<u8>,
        post: Option<u64>,
    ) {
        if t.kind == MessageKind::Notification
            && t.method == Some("notifications/cancelled")
            && let Some(id) = &t.related
            && entry.routes.contains_key(id)
        {
            // The server ends the request (a `subscriptions/listen` stream) with this
            // notification on stdio; over HTTP it closes the request's reply instead.
            entry.take_route(id);
            return;
        }
        let target = match t.kind {
            MessageKind::Response => match &t.related {
                Some(id) => entry.take_route(id),
                None => post,
            },
            MessageKind::Batch => {
                let mut target = None;
                for id in batch_ids(bytes) {
                    if let Some(l) = entry.take_route(&id) {
                        target.get_or_insert(l);
                    }
                }
                target.or(post)
            }
            // Requests and notifications: on the SSE stream of the POST they belong to, else
            // on the standalone stream.
            _ => t
                .related
                .as_ref()
                .and_then(|id| entry.routes.get(id).copied())
                .filter(|l| entry.streams.get(l).is_some_and(Logical::takes_related))
                .or(entry.standalone),
        };
        // A legacy session has one stream for everything (answers whose route is gone too).
        let target = if entry.legacy {
            target.or(entry.standalone)
        } else {
            target
        };
        if entry.transient
            && t.kind == MessageKind::Request
            && let Some(id) = t.id
        {
            match (target, &id) {
                (Some(_), RequestId::Number(n)) => {
                    // Its answer comes on another POST: remember who asked.
                    self.awaiting.insert(*n, sid);
                    entry.asked.push(*n);
                }
                _ => {
                    // Only the stream of the POST it serves reaches a stateless session's client.
                    let why = "a stateless session's request must belong to the request it serves";
                    let error = Error::new(ErrorKind::TransportError, why);
                    entry.session.fail_request(now, &id, error);
                    self.stats.messages_dropped += 1;
                    return;
                }
            }
        }
        let answer = matches!(t.kind, MessageKind::Response | MessageKind::Batch);
        self.deliver(sid, entry, target, bytes, answer);
    }

    fn deliver(
        &mut self,
        sid: SessionId,
        entry: &mut Entry,
        target: Option<u64>,
        bytes: &mut Vec<u8>,
        answer: bool,
    ) {
        let Some(s) = target.and_then(|l| entry.streams.get_mut(&l).map(|s| (l, s))) else {
            self.stats.messages_dropped += 1;
            return;
        };
        let (l, s) = s;
        if let Kind::Post {
            json: json @ true,
            lazy,
            parts,
            ..
        } = &mut s.kind
        {
            if answer || !*lazy {
                // A large message's buffer is handed over whole (the next message grows a new
                // one, in one step: the writers reserve a large value's size); a small one is
                // copied, and the buffer kept for the next.
                parts.push(if bytes.len() >= HAND_OVER {
                    core::mem::take(bytes)
                } else {
                    bytes.to_vec()
                });
                return;
            }
            // Something before the answer: the lazy reply becomes an SSE stream.
            *json = false;
            *lazy = false;
            if let Some(conn) = s.conn.and_then(|c| self.conns.get_mut(&c)) {
                conn.sse = true;
            }
        }
        let seq = s.next_seq;
        s.next_seq += 1;
        let attached = s.conn;
        // The answer that ends a POST's stream: on a connection, the store gets it only if the
        // body does not reach its end (a store that forgets delivered streams would drop it
        // then).
        let keep_out = answer
            && matches!(s.kind, Kind::Post { unanswered: 0, .. })
            && entry
                .store
                .as_ref()
                .is_some_and(|st| st.forgets_delivered());
        let resumable = entry.store.is_some();
        let mut unstored = false;
        match attached.and_then(|c| self.conns.get_mut(&c).map(|conn| (c, conn))) {
            Some((id, conn)) if conn.queue.len() >= self.config.max_stream_buffer => {
                // The client does not keep up: cut it off; it resumes from the event store.
                conn.queue.clear();
                conn.logical = None;
                conn.finished = true;
                wake(&mut self.ready, id, conn);
                if let Some(s) = entry.streams.get_mut(&l) {
                    s.conn = None;
                }
                self.stats.slow_streams_cut += 1;
                if !resumable {
                    self.stats.messages_dropped += 1;
                }
            }
            Some((id, conn)) => {
                if keep_out {
                    conn.unstored = Some((l, seq, conn.queue.len()));
                    unstored = true;
                }
                encode_message(&mut conn.queue, resumable.then_some((l, seq)), bytes);
                wake(&mut self.ready, id, conn);
            }
            None if !resumable => self.stats.messages_dropped += 1,
            None => {}
        }
        if !unstored {
            self.store_event(sid, entry, l, seq, bytes);
        }
    }

    /// Stores event `seq` of stream `l` in `entry`'s event store, if it has one.
    fn store_event(&mut self, sid: SessionId, entry: &mut Entry, l: u64, seq: u64, data: &[u8]) {
        let Some(store) = entry.store.as_mut() else {
            return;
        };
        let before = (store.len(), store.bytes());
        store.store(l, seq, data);
        entry.stored.push_back((self.next_stored, l, seq));
        self.next_stored += 1;
        self.stored_changed(sid, entry, before);
        self.enforce_store_totals(sid, entry);
    }

    /// Stores the answer `c` kept out of the event store, read back from its queue: the
    /// driver will not pull it (the client went away, or resumes the stream elsewhere).
    fn stash(&mut self, sid: SessionId, entry: &mut Entry, c: &mut Conn) {
        let Some((l, seq, start)) = c.unstored.take() else {
            return;
        };
        let mut decoder = sse::SseDecoder::new(usize::MAX);
        // (The event ends the queue, with its blank line.)
        decoder.push(c.queue.get(start..).unwrap_or_default());
        if let Some(Ok(event)) = decoder.next_event() {
            self.store_event(sid, entry, l, seq, event.data.as_bytes());
        }
    }

    /// [`stash_conn`](Self::stash_conn) for connection `stream`, left in the table.
    fn stash_stream(&mut self, stream: StreamId) {
        if let Some(mut c) = self.conns.remove(&stream) {
            self.stash_conn(c.session, &mut c);
            self.conns.insert(stream, c);
        }
    }

    /// [`stash`](Self::stash) for `c`, a connection of session `sid` taken out of the table.
    fn stash_conn(&mut self, sid: SessionId, c: &mut Conn) {
        if c.unstored.is_none() {
            return;
        }
        match self.sessions.remove(&sid) {
            Some(mut entry) => {
                self.stash(sid, &mut entry, c);
                self.sessions.insert(sid, entry);
            }
            // Its session ended, its store with it.
            None => c.unstored = None,
        }
    }

    /// Accounts for a change of `entry`'s store (which held `before` events and bytes): the
    /// totals, the orders of the events it still holds, its place in
    /// [`store_order`](Self::store_order).
    fn stored_changed(&mut self, sid: SessionId, entry: &mut Entry, before: (usize, usize)) {
        let Some(store) = &entry.store else {
            return;
        };
        self.stored_events = (self.stored_events + store.len()).saturating_sub(before.0);
        self.stored_bytes = (self.stored_bytes + store.bytes()).saturating_sub(before.1);
        // A store evicts oldest first: whatever precedes its oldest event is gone (and an
        // event it did not keep at all is dropped once the ones before it are).
        match store.oldest() {
            None => entry.stored.clear(),
            Some(oldest) => {
                while let Some(&(_, l, seq)) = entry.stored.front() {
                    if (l, seq) == oldest {
                        break;
                    }
                    entry.stored.pop_front();
                }
            }
        }
        let key = entry.stored.front().map(|&(k, _, _)| k);
        if entry.store_key != key {
            if let Some(k) = entry.store_key {
                self.store_order.remove(&(k, sid));
            }
            if let Some(k) = key {
                self.store_order.insert((k, sid));
            }
            entry.store_key = key;
        }
    }

    /// Drops the oldest stored events of the endpoint, whichever session holds them, until
    /// the totals are within their bounds (`entry` is session `sid`, out of the table).
    fn enforce_store_totals(&mut self, sid: SessionId, entry: &mut Entry) {
        while self.stored_events > self.config.max_stored_events_total
            || self.stored_bytes > self.config.max_stored_bytes_total
        {
            let Some(&(k, victim)) = self.store_order.first() else {
                break;
            };
            if victim == sid {
                self.evict_stored(sid, entry, k);
                continue;
            }
            match self.sessions.remove(&victim) {
                Some(mut other) => {
                    self.evict_stored(victim, &mut other, k);
                    self.sessions.insert(victim, other);
                }
                None => {
                    self.store_order.remove(&(k, victim));
                }
            }
        }
    }

    /// Drops the oldest event of `entry`'s store (whose key in the order is `k`).
    fn evict_stored(&mut self, sid: SessionId, entry: &mut Entry, k: u64) {
        let Some(store) = entry.store.as_mut() else {
            self.store_order.remove(&(k, sid));
            return;
        };
        let before = (store.len(), store.bytes());
        if !store.evict_oldest() {
            // A store that cannot evict from outside stays out of the totals' order.
            self.store_order.remove(&(k, sid));
            entry.store_key = None;
            entry.stored.clear();
            return;
        }
        self.stats.stored_events_evicted += 1;
        self.stored_changed(sid, entry, before);
    }

    /// Records `peer` as the client of `entry`, a new stateful session.
    fn set_peer(&mut self, entry: &mut Entry, peer: Option<IpAddr>) {
        entry.peer = peer;
        if let Some(p) = peer {
            *self.peers.entry(p).or_insert(0) += 1;
        }
    }

    /// Stream `l` is complete (or its session ends): its reply body ends after what is queued;
    /// a JSON body is written now. An SSE stream stays resumable from the event store.
    fn finish_logical(&mut self, entry: &mut Entry, l: u64, now: Instant, ending: bool) {
        let Some(s) = entry.streams.remove(&l) else {
            return;
        };
        if entry.standalone == Some(l) {
            entry.standalone = None;
        }
        if matches!(s.kind, Kind::Post { json: false, .. })
            && let Some(store) = entry.store.as_mut()
        {
            store.end(l);
        }
        let Some(id) = s.conn else {
            return;
        };
        entry.last_activity = now;
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if matches!(s.kind, Kind::Post { json: false, .. }) && !ending {
            // Answered: once this body is pulled to its end, the stream was delivered whole.
            conn.delivered = Some(l);
        }
        if let Kind::Post {
            json: true,
            mut parts,
            ..
        } = s.kind
        {
            if ending {
                // (In the order of their ids, the routes' order.)
                for rid in entry
                    .routes
                    .iter()
                    .filter(|(_, r)| **r == l)
                    .map(|(id, _)| id)
                {
                    let mut e = Vec::new();
                    jsonrpc::write_error(
                        &mut e,
                        Some(rid),
                        TRANSPORT_ERROR,
                        "the session ended before answering",
                        None,
                    );
                    parts.push(e);
                }
            }
            join_json(&mut conn.queue, parts);
        }
        conn.logical = None;
        conn.finished = true;
        wake(&mut self.ready, id, conn);
    }

    /// Session `sid` is closed: its streams end, its memory is freed.
    fn end(&mut self, now: Instant, sid: SessionId, mut entry: Box<Entry>) {
        let streams: Vec<u64> = entry.streams.keys().copied().collect();
        for l in streams {
            self.finish_logical(&mut entry, l, now, true);
        }
        if let Some(t) = entry.timer {
            self.timers.remove(&(t, sid));
        }
        if entry.listen {
            self.listening = self.listening.saturating_sub(1);
        }
        if let Some(p) = entry.peer
            && let Some(n) = self.peers.get_mut(&p)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.peers.remove(&p);
            }
        }
        if let Some(k) = entry.store_key.take() {
            self.store_order.remove(&(k, sid));
        }
        for n in entry.asked.drain(..) {
            self.awaiting.remove(&n);
        }
        self.move_idle(sid, &mut entry, None);
        if let Some(store) = &entry.store {
            self.stored_events = self.stored_events.saturating_sub(store.len());
            self.stored_bytes = self.stored_bytes.saturating_sub(store.bytes());
        }
        match entry.ending {
            Ending::Closed => self.stats.sessions_closed += 1,
            Ending::Deleted => self.stats.sessions_deleted += 1,
            Ending::Expired => self.stats.sessions_expired += 1,
            Ending::Evicted => self.stats.sessions_evicted += 1,
        }
    }
}

/// The SSE comment written on a silent listen stream (clients ignore comment lines).
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

fn wake(ready: &mut VecDeque<StreamId>, id: StreamId, conn: &mut Conn) {
    if conn.waiting {
        conn.waiting = false;
        ready.push_back(id);
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The peer address the driver named for a request.
fn peer_of(parts: &Parts) -> Option<IpAddr> {
    parts.extensions.get::<PeerAddr>().map(|p| p.0)
}

/// The owner an authentication layer named for a request ([`SessionOwner`]).
fn owner_of(parts: &Parts) -> Option<&str> {
    parts.extensions.get::<SessionOwner>().map(|o| o.0.as_str())
}

/// Checks a POST against the session's state: batches only where the version allows them,
/// no request id already in flight.
fn admit(entry: &Entry, c: &Classified, version: Option<ProtocolVersion>) -> Result<(), Refusal> {
    if c.batch && !version.is_some_and(ProtocolVersion::allows_batches) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            -32600,
            "Invalid Request: JSON-RPC batches are not allowed in this protocol version",
            None,
        ));
    }
    if let Some(id) = c.requests.iter().find(|id| entry.routes.contains_key(id)) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            -32600,
            "Invalid Request: a request with this id is already in flight",
            Some(id),
        ));
    }
    Ok(())
}

/// Reads what a POST body holds; 400 with a JSON-RPC error body when it is not JSON-RPC.
fn classify(parsed: &Parsed<'_>) -> Result<Classified, Refusal> {
    let mut c = Classified::default();
    match parsed {
        Parsed::Single(Ok(env)) => {
            if let Envelope::Request { id, method, .. } = env {
                c.initialize = method == "initialize";
                c.requests.push(id.clone());
                c.answerable = true;
            }
        }
        Parsed::Single(Err(rej)) => {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                rej.error.code(),
                rej.error.message(),
                rej.id.as_ref(),
            ));
        }
        Parsed::Batch(items) => {
            c.batch = true;
            for item in items {
                match item {
                    Ok(Envelope::Request { id, method, .. }) => {
                        if method == "initialize" {
                            return Err(Refusal::new(
                                StatusCode::BAD_REQUEST,
                                -32600,
                                "Invalid Request: `initialize` must not be part of a batch",
                                Some(id),
                            ));
                        }
                        c.requests.push(id.clone());
                        c.answerable = true;
                    }
                    Ok(_) => {}
                    Err(rej) => c.answerable |= rej.answer,
                }
            }
            // One pass over an ordered set, not each id against every earlier one: a batch
            // of n ids costs n log n, whatever it holds.
            if let Some(id) = crate::id::first_repeated(c.requests.iter()) {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Invalid Request: duplicate request id in batch",
                    Some(id),
                ));
            }
        }
        #[allow(unreachable_patterns)]
        _ => {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request",
                None,
            ));
        }
    }
    Ok(c)
}

/// The ids answered by a batch of responses.
fn batch_ids(bytes: &[u8]) -> Vec<RequestId> {
    let mut ids = Vec::new();
    if let Parsed::Batch(items) = jsonrpc::parse(bytes) {
        for item in items.into_iter().flatten() {
            match item {
                Envelope::Response { id, .. } | Envelope::Error { id: Some(id), .. } => {
                    ids.push(id)
                }
                _ => {}
            }
        }
    }
    ids
}

/// The session serving one stateless POST at `version`: ready from the start.
///
/// A stateless POST does not say what its client declared at its `initialize`. With
/// `request_ids` (the first id of its requests: its reply is SSE) the session assumes every
/// client capability a server may ask of, so a handler can sample, elicit or list roots on
/// the POST's stream, and a client that cannot answers with its error. Without, it assumes
/// none and sends no request.
fn stateless_session(
    config: &crate::session::Config,
    version: ProtocolVersion,
    request_ids: Option<i64>,
) -> Result<Session, Error> {
    let raw = |s: &str| serde_json::value::RawValue::from_string(s.into());
    let info = raw("{\"name\":\"stateless-http-client\",\"version\":\"0\"}")
        .map_err(|_| Error::internal("peer info"))?;
    let caps = match request_ids {
        Some(_) => ASSUMED_CLIENT_CAPABILITIES,
        None => "{}",
    };
    let caps = raw(caps).map_err(|_| Error::internal("peer capabilities"))?;
    // No header: the default version, or the latest one configured when it is not.
    let version = if config.versions.contains(&version) {
        version
    } else {
        config
            .latest_handshake()
            .ok_or_else(|| Error::invalid_request("no handshake-era version is configured"))?
    };
    let mut session = Session::server_ready(config.clone(), version, info, caps)?;
    match request_ids {
        Some(first) => session.next_id = first,
        None => session.requests_refused = Some(REQUESTS_NEED_SSE),
    }
    Ok(session)
}

/// The client capabilities a stateless session that may send requests assumes (see
/// [`stateless_session`]).
const ASSUMED_CLIENT_CAPABILITIES: &str =
    "{\"roots\":{},\"sampling\":{},\"elicitation\":{\"form\":{},\"url\":{}}}";

/// Why a stateless or JSON-only session sends no request.
const REQUESTS_NEED_SSE: &str =
    "a server-to-client request needs an SSE stream to reach the client";

/// A JSON reply's message this large moves out of the endpoint's scratch buffer instead of
/// being copied from it.
const HAND_OVER: usize = 16 * 1024;

/// Appends one message as an SSE event, with the id `<l>-<seq>` when resumable.
fn encode_message(out: &mut Vec<u8>, id: Option<(u64, u64)>, data: &[u8]) {
    // A message is serialised JSON (UTF-8): encoded from its bytes, with no text conversion.
    out.reserve(data.len() + 64);
    // The id comes first, as `encode_event_bytes` would write it.
    if let Some((l, seq)) = id {
        sse::write_pair_id(out, l, seq);
    }
    sse::encode_event_bytes(out, Some("message"), None, data);
}

/// The JSON body of a POST: nothing, one message, or an array of them.
fn join_json(out: &mut Vec<u8>, parts: Vec<Vec<u8>>) {
    match parts.len() {
        0 => {}
        1 => {
            for p in parts {
                if out.is_empty() {
                    // Moved, not copied: the one message is the body.
                    *out = p;
                } else {
                    out.extend_from_slice(&p);
                }
            }
        }
        _ => {
            out.push(b'[');
            for (i, p) in parts.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&p);
            }
            out.push(b']');
        }
    }
}

fn plain(status: StatusCode, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r
}

fn json_reply(status: StatusCode, body: Body) -> Response<Body> {
    let mut r = plain(status, body);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn sse_reply(body: Body) -> Response<Body> {
    let mut r = plain(StatusCode::OK, body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// An HTTP error whose body is a JSON-RPC error.
/// A refused request: the HTTP status and the JSON-RPC error of its body.
struct Refusal {
    status: StatusCode,
    code: i64,
    message: String,
    id: Option<RequestId>,
}

impl Refusal {
    fn new(status: StatusCode, code: i64, message: &str, id: Option<&RequestId>) -> Self {
        Refusal {
            status,
            code,
            message: String::from(message),
            id: id.cloned(),
        }
    }

    fn reply(self) -> Response<Body> {
        rpc_error(self.status, self.code, &self.message, self.id.as_ref())
    }
}

fn rpc_error(
    status: StatusCode,
    code: i64,
    message: &str,
    id: Option<&RequestId>,
) -> Response<Body> {
    let mut body = Vec::with_capacity(64 + message.len());
    jsonrpc::write_error(&mut body, id, code, message, None);
    json_reply(status, Body::Full(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_are_written_as_their_text_would_be() {
        for (l, seq) in [(0, 0), (12, 345), (u64::MAX, u64::MAX)] {
            let id = format!("{l}-{seq}");
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            encode_message(&mut ours, Some((l, seq)), b"{}");
            sse::encode_event_bytes(&mut theirs, Some("message"), Some(&id), b"{}");
            assert_eq!(ours, theirs, "{id}");
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            sse::encode_priming_pair(&mut ours, (l, seq), Some(3000));
            sse::encode_priming(&mut theirs, &id, Some(3000));
            assert_eq!(ours, theirs, "{id}");
        }
    }
}
