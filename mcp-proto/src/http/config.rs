//! Settings of an [`Endpoint`](super::Endpoint): reply mode, statefulness, allow-lists, bounds
//! and timers.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::net::IpAddr;

use super::event_store::{EventStore, MemoryEventStore};
use crate::session::{Config, Framing};
use crate::time::Duration;

/// How a POST that holds requests is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseMode {
    /// An SSE stream (`text/event-stream`): a priming event (2025-11-25), then every request,
    /// notification and response related to the POST's requests, closed after the last
    /// response. The default.
    Sse,
    /// One JSON body (`application/json`) sent once every request of the POST is answered.
    /// Server→client messages related to those requests travel on the standalone GET stream.
    Json,
    /// Like [`Json`](ResponseMode::Json), without any SSE: GET is refused with 405, POSTs need
    /// only `Accept: application/json`, the application cannot send server→client requests and
    /// unrelated notifications are dropped (counted in [`Stats`](super::Stats)).
    JsonOnly,
}

/// Which `Host` or `Origin` values are accepted; anything else gets 403.
///
/// A host entry is `name` (any port) or `name:port`; IPv6 addresses are written in brackets
/// (`[::1]`). An origin entry is either a full origin (`https://app.example.com:8443`,
/// compared exactly, case-insensitively) or a host entry matched against the origin's host and
/// port whatever its scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllowList {
    /// Anything (and, for `Host`, nothing: a request without a host is accepted).
    Any,
    /// `localhost`, `127.0.0.1` and `[::1]`, with any port.
    Loopback,
    /// Exactly these entries.
    Only(Vec<String>),
}

impl AllowList {
    /// The default for a server listening on `addr`: loopback names only for a loopback
    /// address (DNS-rebinding protection), anything otherwise.
    pub fn for_address(addr: IpAddr) -> AllowList {
        if addr.is_loopback() {
            AllowList::Loopback
        } else {
            AllowList::Any
        }
    }

    /// Whether a `Host` value (`host[:port]`; `None` when the request had none) is allowed.
    pub fn allows_host(&self, host: Option<&str>) -> bool {
        super::headers::host_allowed(self, host)
    }

    /// Whether an `Origin` value is allowed (`null` and unparseable origins never are, except
    /// under [`AllowList::Any`]).
    pub fn allows_origin(&self, origin: &str) -> bool {
        super::headers::origin_allowed(self, origin)
    }
}

/// The two paths of the legacy HTTP+SSE transport (protocol version 2024-11-05), served
/// beside Streamable HTTP when set with [`EndpointConfig::legacy_sse`].
///
/// `GET <sse_path>` opens a session and its one SSE stream, whose first event (`endpoint`)
/// announces `<messages_path>?sessionId=<id>`; the client POSTs its messages there and gets
/// every reply on the stream. Both paths must differ from [`EndpointConfig::path`] (which
/// takes precedence); they may equal each other (GET opens, POST sends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacySse {
    /// The path a GET opens a session's SSE stream at (e.g. `/sse`).
    pub sse_path: String,
    /// The path messages are POSTed to (e.g. `/messages`), with `?sessionId=<id>`.
    pub messages_path: String,
}

impl LegacySse {
    /// The legacy transport at `sse_path` (GET) and `messages_path` (POST).
    pub fn new(sse_path: impl Into<String>, messages_path: impl Into<String>) -> Self {
        LegacySse {
            sse_path: sse_path.into(),
            messages_path: messages_path.into(),
        }
    }
}

impl Default for LegacySse {
    /// `/sse` and `/messages`, the paths of the TypeScript and Python SDKs' examples.
    fn default() -> Self {
        LegacySse::new("/sse", "/messages")
    }
}

/// Cross-origin resource sharing (CORS), so that a web page served from another origin can
/// call the endpoint with `fetch` (see [`EndpointConfig::cors`]).
///
/// The origins are those of [`EndpointConfig::allowed_origins`]: a request whose `Origin` is
/// refused gets 403 and no CORS header, so the browser reports a CORS failure to the page. With
/// CORS on:
///
/// - an `OPTIONS` preflight to the endpoint's path (or a legacy path) is answered 204 with
///   `Access-Control-Allow-Origin` (the request's origin, echoed), `Vary: Origin`,
///   `Access-Control-Allow-Methods` (the methods the endpoint serves: `GET, POST, DELETE` for
///   the default stateful endpoint), `Access-Control-Allow-Headers` (the requested headers
///   among `Content-Type`, `Accept`, `Authorization`, `Mcp-Session-Id`,
///   `Mcp-Protocol-Version`, `Last-Event-ID`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`;
///   all of them but `Mcp-Param-*` when the preflight names none) and
///   `Access-Control-Max-Age` ([`max_age`](Cors::max_age));
/// - every other reply to a request with an allowed `Origin` carries
///   `Access-Control-Allow-Origin` (echoed), `Access-Control-Expose-Headers: Mcp-Session-Id,
///   Mcp-Protocol-Version, WWW-Authenticate` (so that the page's client can read its session
///   id) and, when [`allow_credentials`](Cors::allow_credentials) is set,
///   `Access-Control-Allow-Credentials: true`;
/// - every reply carries `Vary: Origin` (caches must not hand one origin's answer to another).
///
/// Without CORS an `OPTIONS` request gets 405 like any other method the endpoint does not
/// serve.
///
/// ```
/// use mcp_proto::http::{AllowList, Cors, EndpointConfig};
/// use mcp_proto::session::Config;
///
/// // A page at https://app.example.com (and only it) may call the endpoint from a browser.
/// let config = EndpointConfig::new(Config::new("demo", "1.0"))
///     .allowed_origins(AllowList::Only(vec!["https://app.example.com".into()]))
///     .cors(Some(Cors::new()));
/// # let _ = config;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cors {
    /// Whether replies say `Access-Control-Allow-Credentials: true`, letting pages send
    /// cookies and HTTP authentication along (default off; a bearer token set by the page's
    /// script in `Authorization` needs no credentials mode). Never sent while
    /// [`allowed_origins`](EndpointConfig::allowed_origins) is [`AllowList::Any`]: any site
    /// could then act with the user's cookies.
    pub allow_credentials: bool,
    /// How long a browser may cache a preflight answer (`Access-Control-Max-Age`, in whole
    /// seconds); `None` sends none (the browser's default, a few seconds). Default 2 hours,
    /// Chromium's upper bound.
    pub max_age: Option<Duration>,
}

impl Cors {
    /// CORS without credentials and with preflights cached for 2 hours.
    pub fn new() -> Self {
        Cors {
            allow_credentials: false,
            max_age: Some(Duration::from_secs(2 * 60 * 60)),
        }
    }

    /// Sets whether `Access-Control-Allow-Credentials: true` is sent.
    pub fn allow_credentials(mut self, allow: bool) -> Self {
        self.allow_credentials = allow;
        self
    }

    /// Sets how long a preflight answer may be cached (`None`: no `Access-Control-Max-Age`).
    pub fn max_age(mut self, age: Option<Duration>) -> Self {
        self.max_age = age;
        self
    }

    /// Adds the headers of this policy to a reply made outside the [`Endpoint`](super::Endpoint)
    /// (a driver's own 400 for a broken body, 408 for a slow one, 503 when the engine is
    /// gone), so that a page sees its status rather than a CORS failure: `Vary: Origin`, and
    /// for a request whose `Origin` `origins` allows, the origin echoed and the exposed
    /// headers. A request from an origin `origins` refuses gets only `Vary`.
    ///
    /// ```
    /// use mcp_proto::http::{AllowList, Cors};
    /// let mut request = http::HeaderMap::new();
    /// request.insert("origin", "http://localhost:5173".parse().unwrap());
    /// let mut reply = http::HeaderMap::new();
    /// Cors::new().decorate_reply(&AllowList::Loopback, &request, &mut reply);
    /// assert_eq!(reply["access-control-allow-origin"], "http://localhost:5173");
    /// ```
    pub fn decorate_reply(
        &self,
        origins: &AllowList,
        request: &http::HeaderMap,
        reply: &mut http::HeaderMap,
    ) {
        let origin = request
            .get(http::header::ORIGIN)
            .filter(|o| o.to_str().is_ok_and(|o| origins.allows_origin(o)));
        super::cors::decorate(self, origins, origin, reply);
    }
}

impl Default for Cors {
    fn default() -> Self {
        Cors::new()
    }
}

/// Makes the event store of each new session (called once per session).
pub type EventStoreFactory = Arc<dyn Fn(super::SessionId) -> Box<dyn EventStore> + Send + Sync>;

/// The `x-mcp-header` annotations of the server's tools, by tool name (see
/// [`EndpointConfig::tool_headers`]).
pub type ToolHeaders =
    Arc<dyn Fn(&str) -> Option<Arc<[crate::schema::tools::ParamHeader]>> + Send + Sync>;

/// Settings of an [`Endpoint`](super::Endpoint).
#[derive(Clone)]
pub struct EndpointConfig {
    /// The request path of the endpoint (default `/mcp`); requests to other paths → 404.
    pub path: String,
    /// The template of every session (its framing is forced to [`Framing::Raw`]).
    pub session: Config,
    /// How POSTs holding requests are answered.
    pub response_mode: ResponseMode,
    /// Stateless mode: no session ids; each POST is served by a fresh session pre-initialized
    /// for the request's `MCP-Protocol-Version` and ended with the POST; GET and DELETE → 405.
    ///
    /// With SSE replies ([`ResponseMode::Sse`]) a handshake-era handler may still ask its
    /// client (sampling, elicitation, roots): the request goes on the SSE reply of the POST it
    /// serves, with an unpredictable id (drawn from the POST's randomness, below 2^53), and
    /// the client's answer, POSTed on its own, reaches the session that asked while that POST
    /// is open. Since no POST says what its client declared at `initialize`, such a session
    /// assumes every client capability a server asks of; a client that lacks one answers with
    /// its error. A request not made on behalf of the POST's own request fails at once.
    /// With JSON replies the session assumes no client capability and sends no request.
    /// 2026-07-28 requests need none of this: they ask through `input_required` results.
    pub stateless: bool,
    /// Whether GET opens a standalone SSE stream (otherwise 405). A session has at most one
    /// open at a time: another GET gets 409 until it closes (a GET with `Last-Event-ID` takes
    /// over the stream it names instead of adding one).
    pub standalone_stream: bool,
    /// Whether DELETE ends a session (otherwise 405).
    pub allow_delete: bool,
    /// Accepted `Host` values (from the `Host` header, else the request URI's authority).
    pub allowed_hosts: AllowList,
    /// Accepted `Origin` values; a request without `Origin` (not from a browser) is accepted.
    /// With [`cors`](Self::cors) set, these are also the origins that get CORS headers.
    pub allowed_origins: AllowList,
    /// Cross-origin resource sharing for pages served from another origin (see [`Cors`]);
    /// `None` (the default) for none: `OPTIONS` gets 405 and replies carry no CORS header.
    pub cors: Option<Cors>,
    /// Largest accepted POST body in bytes; larger → 413.
    pub max_body_size: usize,
    /// Most sessions alive at once (stateless ones included). A request that needs one more
    /// session at the cap ends the least recently used *idle* session (no request in flight
    /// either way, no open stream), nearest its expiry first: an abandoned handshake (which
    /// expires after [`handshake_timeout`](Self::handshake_timeout)) before an established
    /// session idle for less than [`idle_timeout`](Self::idle_timeout). The evicted
    /// session's id gets 404 from then on, so its client initializes again. Only when no
    /// session is idle is the request refused (503).
    pub max_sessions: usize,
    /// Most stateful sessions one peer address may hold (see [`PeerAddr`](super::PeerAddr):
    /// the driver names the client's address in the request's extensions); `None` (the
    /// default) for no share. At its share a peer's new session evicts that peer's own least
    /// recently used idle session, else is refused with 429. Clients behind one proxy or NAT
    /// share an address: set it with that in mind.
    pub max_sessions_per_peer: Option<usize>,
    /// Most `subscriptions/listen` streams (2026-07-28) open at once, each a POST held open;
    /// more → 503. Kept below [`max_sessions`](Self::max_sessions) so that listeners cannot
    /// crowd out ordinary requests.
    pub max_listen_streams: usize,
    /// How long a `subscriptions/listen` stream may stay silent before the endpoint writes an
    /// SSE comment (`: keep-alive`, which clients ignore) on it, so that proxies and load
    /// balancers that cut idle connections (commonly after 60 s) leave it open; `None` for
    /// none. Default [`DEFAULT_LISTEN_KEEP_ALIVE`] (20 s). Only listen streams get it: every
    /// other reply ends as soon as it is answered.
    pub listen_keep_alive: Option<Duration>,
    /// Most bytes encoded for one SSE connection and not yet pulled by the driver; a message
    /// arriving beyond this cuts the connection (the client resumes from the event store).
    pub max_stream_buffer: usize,
    /// A session with no open stream and no request for this long expires.
    pub idle_timeout: Duration,
    /// A session that has not completed its handshake (no `notifications/initialized`) and has
    /// no open stream expires after this long (a legacy SSE session even with its stream open).
    pub handshake_timeout: Duration,
    /// The reconnection time sent with the priming event of new SSE streams (2025-11-25).
    pub sse_retry: Option<Duration>,
    /// Makes each session's event store; `None` disables resumability (no event ids, no
    /// priming, `Last-Event-ID` ignored). Each store bounds its own session's events (the
    /// default: [`DEFAULT_STORE_EVENTS`] events, [`DEFAULT_STORE_BYTES`] bytes); the totals
    /// below bound them across sessions.
    pub event_store: Option<EventStoreFactory>,
    /// Most events retained by the event stores of all sessions together (default
    /// [`DEFAULT_STORE_TOTAL_EVENTS`]); beyond it the oldest event of any session is dropped
    /// first (a later resumption that misses it counts as a replay gap).
    pub max_stored_events_total: usize,
    /// Most bytes of message data retained by the event stores of all sessions together
    /// (default [`DEFAULT_STORE_TOTAL_BYTES`]); beyond it the oldest event of any session is
    /// dropped first.
    pub max_stored_bytes_total: usize,
    /// The legacy HTTP+SSE transport (2024-11-05), off by default. Its sessions are always
    /// stateful (whatever [`stateless`](Self::stateless) says), never resumable, and subject to
    /// the same `Host`/`Origin` checks, body limit and session bound.
    pub legacy_sse: Option<LegacySse>,
    /// The `x-mcp-header` annotations of the server's tools: a 2026-07-28 `tools/call` must
    /// carry each annotated argument in its `Mcp-Param-*` header, equal to the body's value
    /// (else 400 with -32020). `None`: no tool is annotated.
    pub tool_headers: Option<ToolHeaders>,
    /// Which shard this endpoint is, when several serve one endpoint together (see
    /// [`Shard`](super::Shard)): the session ids it makes and the ids of its stateless
    /// sessions' requests name it, so that a router can send each request to its shard.
    /// `None` (the default): the endpoint is alone.
    pub shard: Option<super::Shard>,
    /// This endpoint's number among several instances (processes, machines) that serve one
    /// MCP endpoint together and share their sessions' events (default 0: alone). The SSE
    /// streams of its sessions are numbered from `instance << 32`, so the event ids of two
    /// instances never collide and a `Last-Event-ID` says which instance's stream it names
    /// ([`stream_instance`](super::stream_instance)). A numbered instance (1 or more) also
    /// numbers its sessions' requests to their clients in its own range
    /// ([`request_instance`](super::request_instance)), marks its standalone streams
    /// ([`stream_is_standalone`](super::stream_is_standalone)), and takes a request in a
    /// session whose `notifications/initialized` it did not see as the end of the handshake
    /// (the client sent it to another instance).
    pub instance: u32,
}

impl fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("path", &self.path)
            .field("session", &self.session)
            .field("response_mode", &self.response_mode)
            .field("stateless", &self.stateless)
            .field("standalone_stream", &self.standalone_stream)
            .field("allow_delete", &self.allow_delete)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("cors", &self.cors)
            .field("max_body_size", &self.max_body_size)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_peer", &self.max_sessions_per_peer)
            .field("max_listen_streams", &self.max_listen_streams)
            .field("listen_keep_alive", &self.listen_keep_alive)
            .field("max_stream_buffer", &self.max_stream_buffer)
            .field("idle_timeout", &self.idle_timeout)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("sse_retry", &self.sse_retry)
            .field("event_store", &self.event_store.is_some())
            .field("max_stored_events_total", &self.max_stored_events_total)
            .field("max_stored_bytes_total", &self.max_stored_bytes_total)
            .field("legacy_sse", &self.legacy_sse)
            .field("tool_headers", &self.tool_headers.is_some())
            .field("shard", &self.shard)
            .field("instance", &self.instance)
            .finish()
    }
}

/// The default [`EndpointConfig::listen_keep_alive`]: an idle listen stream gets an SSE
/// comment every 20 s, well inside the 60 s idle timeout of common proxies (nginx
/// `proxy_read_timeout`, cloud load balancers).
pub const DEFAULT_LISTEN_KEEP_ALIVE: Duration = Duration::from_secs(20);

/// Default bound of the in-memory event store: events per session.
pub const DEFAULT_STORE_EVENTS: usize = 1024;
/// Default bound of the in-memory event store: bytes per session.
pub const DEFAULT_STORE_BYTES: usize = 4 * 1024 * 1024;
/// Default bound of the events retained by all sessions' event stores together: events.
pub const DEFAULT_STORE_TOTAL_EVENTS: usize = 65_536;
/// Default bound of the events retained by all sessions' event stores together: bytes
/// (64 MiB, where 10 000 sessions at their own bound could keep 40 GiB).
pub const DEFAULT_STORE_TOTAL_BYTES: usize = 64 * 1024 * 1024;

impl EndpointConfig {
    /// A stateful endpoint serving sessions made from `session`: SSE replies, standalone GET
    /// stream and DELETE enabled, loopback-only `Host` and `Origin` (the safe default for a
    /// server bound to 127.0.0.1; see [`bound_to`](Self::bound_to)), 4 MiB bodies, 10 000
    /// sessions (idle ones evicted at the cap, no per-peer share; 1 000 of them
    /// `subscriptions/listen` streams, each kept alive by an SSE comment after 20 s of
    /// silence), 4 MiB of unpulled SSE per connection, 30 min idle and
    /// 1 min handshake expiry, `retry: 1000`, and an in-memory event store of
    /// [`DEFAULT_STORE_EVENTS`] events / [`DEFAULT_STORE_BYTES`] bytes per session and
    /// [`DEFAULT_STORE_TOTAL_EVENTS`] / [`DEFAULT_STORE_TOTAL_BYTES`] across sessions.
    pub fn new(session: Config) -> Self {
        EndpointConfig {
            path: "/mcp".into(),
            session: session.framing(Framing::Raw),
            response_mode: ResponseMode::Sse,
            stateless: false,
            standalone_stream: true,
            allow_delete: true,
            allowed_hosts: AllowList::Loopback,
            allowed_origins: AllowList::Loopback,
            cors: None,
            max_body_size: 4 * 1024 * 1024,
            max_sessions: 10_000,
            max_sessions_per_peer: None,
            max_listen_streams: 1_000,
            listen_keep_alive: Some(DEFAULT_LISTEN_KEEP_ALIVE),
            max_stream_buffer: 4 * 1024 * 1024,
            idle_timeout: Duration::from_secs(30 * 60),
            handshake_timeout: Duration::from_secs(60),
            sse_retry: Some(Duration::from_millis(1000)),
            event_store: Some(memory_store_factory(
                DEFAULT_STORE_EVENTS,
                DEFAULT_STORE_BYTES,
            )),
            max_stored_events_total: DEFAULT_STORE_TOTAL_EVENTS,
            max_stored_bytes_total: DEFAULT_STORE_TOTAL_BYTES,
            legacy_sse: None,
            tool_headers: None,
            shard: None,
            instance: 0,
        }
    }

    /// Sets [`instance`](Self::instance): this endpoint's number among the instances that
    /// share one endpoint's sessions.
    pub fn instance(mut self, instance: u32) -> Self {
        self.instance = instance;
        self
    }

    /// Sets the request path of the endpoint (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets the reply mode.
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.response_mode = mode;
        self
    }

    /// Switches stateless mode on or off.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Enables or disables the standalone GET stream.
    pub fn standalone_stream(mut self, enabled: bool) -> Self {
        self.standalone_stream = enabled;
        self
    }

    /// Enables or disables DELETE.
    pub fn allow_delete(mut self, enabled: bool) -> Self {
        self.allow_delete = enabled;
        self
    }

    /// Sets the accepted `Host` values.
    pub fn allowed_hosts(mut self, hosts: AllowList) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Sets the accepted `Origin` values.
    pub fn allowed_origins(mut self, origins: AllowList) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// Switches CORS on (`Some`, for the [`allowed_origins`](Self::allowed_origins)) or off
    /// (`None`, the default); see [`Cors`].
    pub fn cors(mut self, cors: Option<Cors>) -> Self {
        self.cors = cors;
        self
    }

    /// Picks the `Host`/`Origin` defaults for the address the server listens on: loopback
    /// names only for a loopback address; anything otherwise (configure explicit lists, and
    /// authentication, for a public server).
    pub fn bound_to(mut self, addr: IpAddr) -> Self {
        let list = AllowList::for_address(addr);
        self.allowed_hosts = list.clone();
        self.allowed_origins = list;
        self
    }

    /// Sets the largest accepted body.
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body_size = bytes;
        self
    }

    /// Sets the most sessions alive at once.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Sets (or, with `None`, removes) the most stateful sessions one peer address may hold.
    pub fn max_sessions_per_peer(mut self, sessions: Option<usize>) -> Self {
        self.max_sessions_per_peer = sessions;
        self
    }

    /// Sets the most events retained by all sessions' event stores together.
    pub fn max_stored_events_total(mut self, events: usize) -> Self {
        self.max_stored_events_total = events;
        self
    }

    /// Sets the most bytes retained by all sessions' event stores together.
    pub fn max_stored_bytes_total(mut self, bytes: usize) -> Self {
        self.max_stored_bytes_total = bytes;
        self
    }

    /// Sets the most `subscriptions/listen` streams open at once.
    pub fn max_listen_streams(mut self, streams: usize) -> Self {
        self.max_listen_streams = streams;
        self
    }

    /// Sets how long a listen stream may stay silent before it gets a keep-alive comment
    /// (`None`: never; see [`listen_keep_alive`](Self::listen_keep_alive)).
    pub fn listen_keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.listen_keep_alive = interval;
        self
    }

    /// Sets the most unpulled bytes of one SSE connection.
    pub fn max_stream_buffer(mut self, bytes: usize) -> Self {
        self.max_stream_buffer = bytes;
        self
    }

    /// Sets the idle expiry.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets the expiry of sessions that never completed their handshake.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets the `retry` sent with priming events.
    pub fn sse_retry(mut self, retry: Option<Duration>) -> Self {
        self.sse_retry = retry;
        self
    }

    /// Uses an in-memory event store of at most `max_events` events and `max_bytes` bytes of
    /// message data per session.
    pub fn memory_event_store(mut self, max_events: usize, max_bytes: usize) -> Self {
        self.event_store = Some(memory_store_factory(max_events, max_bytes));
        self
    }

    /// Uses event stores made by `factory` (one per session).
    pub fn event_store(mut self, factory: EventStoreFactory) -> Self {
        self.event_store = Some(factory);
        self
    }

    /// Serves (or, with `None`, stops serving) the legacy HTTP+SSE transport at these paths,
    /// beside Streamable HTTP: `.legacy_sse(Some(LegacySse::default()))` for `/sse` and
    /// `/messages`.
    pub fn legacy_sse(mut self, paths: Option<LegacySse>) -> Self {
        self.legacy_sse = paths;
        self
    }

    /// Disables resumability.
    pub fn without_event_store(mut self) -> Self {
        self.event_store = None;
        self
    }
}

fn memory_store_factory(max_events: usize, max_bytes: usize) -> EventStoreFactory {
    Arc::new(move |_| Box::new(MemoryEventStore::new(max_events, max_bytes)) as Box<dyn EventStore>)
}
