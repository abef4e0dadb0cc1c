//! The session state machine: one MCP session, client or server side, whatever the transport.
//!
//! A [`Session`] owns the protocol: the `initialize` handshake and version negotiation, request
//! ids and the pending-request table, timeouts, cancellation and progress both ways, the method
//! table check (version, direction, capability), bounds on message size and requests in flight,
//! and graceful or abrupt close. It never performs IO, reads a clock or allocates per byte.
//!
//! Driving it follows one rule: **mutate, then drain until idle**.
//!
//! - inputs: [`handle_bytes`](Session::handle_bytes) (stream transports, any chunking),
//!   [`handle_message`](Session::handle_message) (one complete body),
//!   [`handle_timeout`](Session::handle_timeout), [`handle_input_closed`](Session::handle_input_closed),
//!   [`handle_closed`](Session::handle_closed);
//! - commands: [`initialize`](Session::initialize), [`send_request`](Session::send_request),
//!   [`notify`](Session::notify), [`respond`](Session::respond),
//!   [`respond_error`](Session::respond_error), [`report_progress`](Session::report_progress),
//!   [`cancel`](Session::cancel), [`close`](Session::close);
//! - outputs: [`poll_transmit`](Session::poll_transmit), [`poll_event`](Session::poll_event),
//!   [`poll_timeout`](Session::poll_timeout).
//!
//! The 2026-07-28 stateless era (no handshake, version and capabilities in each request's
//! `_meta`, `server/discover`, `input_required` results) fits this shape: a request carrying the
//! modern `_meta` is validated per request instead of against the handshake state; the method
//! table already knows the modern methods. Its behaviour arrives with a later change.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::codec::ndjson::{NdjsonDecoder, NdjsonError};
use crate::error::{Error, ErrorKind};
use crate::id::{ProgressToken, RequestId};
use crate::jsonrpc::{self, Envelope, Parsed, Rejected};
use crate::method::{self, Gate};
use crate::time::{Duration, Instant};
use crate::version::ProtocolVersion;

/// How outgoing messages are framed by [`Session::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Newline-delimited JSON (stdio, sockets): each message is followed by `\n`.
    Ndjson,
    /// Bare JSON (HTTP bodies, SSE `data`, WebSocket frames).
    Raw,
}

/// Settings of a session.
#[derive(Clone, Debug)]
pub struct Config {
    /// Output framing.
    pub framing: Framing,
    /// Protocol versions this side supports.
    pub versions: Vec<ProtocolVersion>,
    /// This side's `Implementation` object (`clientInfo` / `serverInfo`) as raw JSON.
    pub info: Box<RawValue>,
    /// This side's capabilities object as raw JSON.
    pub capabilities: Box<RawValue>,
    /// Server instructions sent in the `initialize` result.
    pub instructions: Option<String>,
    /// Largest accepted inbound message in bytes; larger ones get a `LimitExceeded` error.
    pub max_message_size: usize,
    /// Most inbound requests in flight at once; more get a `LimitExceeded` error.
    pub max_inbound_in_flight: usize,
    /// Most outbound requests in flight at once; more are refused by `send_request`.
    pub max_outbound_in_flight: usize,
    /// Default timeout of outbound requests (`None`: no timeout unless a request sets one).
    pub request_timeout: Option<Duration>,
    /// Accept inbound requests for methods outside the MCP method table (extensions).
    pub allow_custom_methods: bool,
}

impl Config {
    /// A configuration named `name` at `version`, supporting every handshake version, with
    /// empty capabilities, NDJSON framing, 16 MiB messages, 1024 requests in flight each way and
    /// a 60 s default timeout.
    pub fn new(name: &str, version: &str) -> Self {
        let mut info = Vec::new();
        info.extend_from_slice(b"{\"name\":");
        jsonrpc::write_json_str(&mut info, name);
        info.extend_from_slice(b",\"version\":");
        jsonrpc::write_json_str(&mut info, version);
        info.push(b'}');
        Config {
            framing: Framing::Ndjson,
            versions: ProtocolVersion::HANDSHAKE.to_vec(),
            info: raw_from_vec(info),
            capabilities: jsonrpc::empty_object(),
            instructions: None,
            max_message_size: 16 * 1024 * 1024,
            max_inbound_in_flight: 1024,
            max_outbound_in_flight: 1024,
            request_timeout: Some(Duration::from_secs(60)),
            allow_custom_methods: false,
        }
    }

    /// Sets the capabilities (raw JSON object).
    pub fn capabilities(mut self, caps: Box<RawValue>) -> Self {
        self.capabilities = caps;
        self
    }

    /// Sets the framing.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Sets the supported versions.
    pub fn versions(mut self, versions: &[ProtocolVersion]) -> Self {
        self.versions = versions.to_vec();
        self
    }

    pub(crate) fn latest_handshake(&self) -> Option<ProtocolVersion> {
        self.versions
            .iter()
            .copied()
            .filter(|v| !v.is_stateless())
            .max()
    }
}

fn raw_from_vec(bytes: Vec<u8>) -> Box<RawValue> {
    String::from_utf8(bytes)
        .ok()
        .and_then(|s| RawValue::from_string(s).ok())
        .unwrap_or_else(jsonrpc::empty_object)
}

/// Options of one outbound request.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// Timeout; `None` uses [`Config::request_timeout`].
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever progress arrives.
    pub reset_timeout_on_progress: bool,
    /// Hard limit on the total time, whatever the progress.
    pub max_total_timeout: Option<Duration>,
    /// Ask for progress: a `progressToken` is added to `params._meta`.
    pub progress: bool,
    /// The inbound request this one is made on behalf of (routing hint for HTTP streams).
    pub related_to: Option<RequestId>,
}

/// Where the session is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Nothing exchanged yet.
    AwaitingInit,
    /// `initialize` sent (client) or answered (server); waiting for the other half.
    Initializing,
    /// Normal operation.
    Ready,
    /// Closing gracefully: in-flight inbound requests are still answered.
    Closing,
    /// Done.
    Closed,
}

/// An inbound request for the application to answer with [`Session::respond`].
#[derive(Debug, Clone)]
pub struct InboundRequest {
    /// The peer's id.
    pub id: RequestId,
    /// The method.
    pub method: Cow<'static, str>,
    /// Raw params.
    pub params: Option<Box<RawValue>>,
    /// The peer's progress token, when it asked for progress.
    pub progress_token: Option<ProgressToken>,
}

/// Something the application must know about.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed.
    Ready {
        /// The negotiated version.
        version: ProtocolVersion,
        /// The peer's `Implementation` object.
        peer_info: Box<RawValue>,
        /// The peer's capabilities object.
        peer_capabilities: Box<RawValue>,
        /// Server instructions (client side only).
        instructions: Option<String>,
    },
    /// The peer sent a request.
    Request(InboundRequest),
    /// The peer sent a notification (cancellation and progress arrive as their own events).
    Notification {
        /// The method.
        method: Cow<'static, str>,
        /// Raw params.
        params: Option<Box<RawValue>>,
    },
    /// The one outcome of an outbound request: result, error, timeout, cancellation or close.
    Response {
        /// The request's id.
        id: RequestId,
        /// The raw result or the error.
        result: Result<Box<RawValue>, Error>,
    },
    /// Progress on an outbound request.
    Progress {
        /// The request's id.
        id: RequestId,
        /// Progress so far (strictly increasing).
        progress: f64,
        /// Total, if known.
        total: Option<f64>,
        /// Message, if any.
        message: Option<String>,
        /// The notification's `_meta`, if any (e.g. partial results).
        meta: Option<Box<RawValue>>,
    },
    /// The peer cancelled one of its requests; do not answer it.
    Cancelled {
        /// The cancelled request's id.
        id: RequestId,
        /// The reason given.
        reason: Option<String>,
    },
    /// A response arrived for an id this side never used.
    UnknownResponse {
        /// The id.
        id: RequestId,
    },
    /// The peer reported an error it could not tie to a request (`"id": null`).
    PeerError(Error),
    /// The peer sent something invalid (answered with an error where JSON-RPC allows).
    InvalidMessage(Error),
    /// The session ended (`None`: gracefully). Emitted exactly once.
    Closed(Option<Error>),
}

/// What [`Session::poll_transmit`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The kind of message.
    pub kind: MessageKind,
    /// The inbound request this message belongs to (its response, its progress, or a request
    /// made on its behalf), for transports that route by request (HTTP streams).
    pub related: Option<RequestId>,
    /// Bytes appended to the buffer.
    pub len: usize,
}

/// Kind of an outgoing message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response or error response.
    Response,
    /// A batch of responses.
    Batch,
}

#[derive(Debug, Default, Clone, Copy)]
struct CapSet {
    tools: bool,
    resources: bool,
    resources_subscribe: bool,
    prompts: bool,
    logging: bool,
    completions: bool,
    sampling: bool,
    roots: bool,
    elicitation: bool,
    tasks: bool,
}

impl CapSet {
    fn parse(raw: &RawValue) -> CapSet {
        #[derive(Deserialize)]
        struct Sub {
            subscribe: Option<bool>,
        }
        #[derive(Deserialize)]
        struct Caps {
            tools: Option<serde::de::IgnoredAny>,
            resources: Option<Sub>,
            prompts: Option<serde::de::IgnoredAny>,
            logging: Option<serde::de::IgnoredAny>,
            completions: Option<serde::de::IgnoredAny>,
            sampling: Option<serde::de::IgnoredAny>,
            roots: Option<serde::de::IgnoredAny>,
            elicitation: Option<serde::de::IgnoredAny>,
            tasks: Option<serde::de::IgnoredAny>,
        }
        match serde_json::from_str::<Caps>(raw.get()) {
            Ok(c) => CapSet {
                tools: c.tools.is_some(),
                resources_subscribe: c
                    .resources
                    .as_ref()
                    .and_then(|r| r.subscribe)
                    .unwrap_or(false),
                resources: c.resources.is_some(),
                prompts: c.prompts.is_some(),
                logging: c.logging.is_some(),
                completions: c.completions.is_some(),
                sampling: c.sampling.is_some(),
                roots: c.roots.is_some(),
                elicitation: c.elicitation.is_some(),
                tasks: c.tasks.is_some(),
            },
            Err(_) => CapSet::default(),
        }
    }

    fn allows(&self, gate: Gate, version: ProtocolVersion) -> bool {
        match gate {
            Gate::None => true,
            Gate::Tools => self.tools,
            Gate::Resources => self.resources,
            Gate::ResourcesSubscribe => self.resources_subscribe,
            Gate::Prompts => self.prompts,
            Gate::Logging => self.logging,
            Gate::Completions => self.completions || !version.has_completions_capability(),
            Gate::Sampling => self.sampling,
            Gate::Roots => self.roots,
            Gate::Elicitation => self.elicitation,
            Gate::Tasks => self.tasks,
        }
    }
}

fn gate_name(gate: Gate) -> &'static str {
    match gate {
        Gate::None => "none",
        Gate::Tools => "tools",
        Gate::Resources => "resources",
        Gate::ResourcesSubscribe => "resources.subscribe",
        Gate::Prompts => "prompts",
        Gate::Logging => "logging",
        Gate::Completions => "completions",
        Gate::Sampling => "sampling",
        Gate::Roots => "roots",
        Gate::Elicitation => "elicitation",
        Gate::Tasks => "tasks",
    }
}

#[derive(Debug)]
struct Pending {
    is_initialize: bool,
    timeout: Option<Duration>,
    hard_deadline: Option<Instant>,
    deadline: Option<Instant>,
    reset_on_progress: bool,
    progress: bool,
    last_progress: Option<f64>,
}

#[derive(Debug)]
struct Inbound {
    progress_token: Option<ProgressToken>,
    last_progress: Option<f64>,
    batch: Option<u64>,
}

#[derive(Debug, Default)]
struct Batch {
    remaining: usize,
    sealed: bool,
    items: Vec<Outgoing>,
}

#[derive(Debug)]
enum Outgoing {
    Request {
        id: i64,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    },
    Notification {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    },
    Response {
        id: RequestId,
        result: Box<RawValue>,
    },
    Error {
        id: Option<RequestId>,
        code: i64,
        message: Cow<'static, str>,
        data: Option<Box<RawValue>>,
    },
    Cancelled {
        id: RequestId,
        reason: Option<Cow<'static, str>>,
    },
    Progress {
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Box<RawValue>>,
        related: RequestId,
    },
    Batch(Vec<Outgoing>),
}

struct PeerInfo {
    info: Box<RawValue>,
    capabilities: Box<RawValue>,
    caps: CapSet,
    instructions: Option<String>,
}

/// How many recently cancelled inbound ids are remembered, so that a late `respond` to one of
/// them is reported as [`ErrorKind::RequestCancelled`] rather than [`ErrorKind::NotFound`].
const CANCELLED_MEMORY: usize = 128;

/// One MCP session, client or server side.
pub struct Session {
    client: bool,
    config: Config,
    own_caps: CapSet,
    state: State,
    version: Option<ProtocolVersion>,
    peer: Option<PeerInfo>,
    next_id: i64,
    pending: BTreeMap<i64, Pending>,
    inbound: BTreeMap<RequestId, Inbound>,
    recently_cancelled: VecDeque<RequestId>,
    batches: BTreeMap<u64, Batch>,
    next_batch: u64,
    out: VecDeque<Outgoing>,
    events: VecDeque<Event>,
    decoder: NdjsonDecoder,
    closed_emitted: bool,
    /// Why this side may not send requests (an HTTP session whose transport cannot carry the
    /// peer's answer back), if it may not.
    pub(crate) requests_refused: Option<&'static str>,
}

impl core::fmt::Debug for Session {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Session")
            .field("client", &self.client)
            .field("state", &self.state)
            .field("version", &self.version)
            .field("pending", &self.pending.len())
            .field("inbound", &self.inbound.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A client session. Call [`initialize`](Session::initialize) to start the handshake.
    pub fn client(config: Config) -> Self {
        Session::new(true, config)
    }

    /// A server session. It answers `initialize` itself from its [`Config`].
    pub fn server(config: Config) -> Self {
        Session::new(false, config)
    }

    /// A server session that starts ready, at `version`, for a peer that describes itself with
    /// `peer_info` and `peer_capabilities` (JSON objects): no handshake is run or expected, as
    /// when each request carries what a handshake would have agreed (stateless Streamable
    /// HTTP; the 2026-07-28 era). Its `Event::Ready` is the first event.
    ///
    /// Fails with [`ErrorKind::ProtocolVersionMismatch`] when `version` is not one of the
    /// configured versions, and [`ErrorKind::InvalidParams`] when the peer's info or
    /// capabilities are not JSON objects.
    ///
    /// ```
    /// use mcp_proto::session::{Config, Event, Session, State};
    /// use mcp_proto::{Instant, ProtocolVersion};
    /// use serde_json::value::RawValue;
    ///
    /// let obj = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
    /// let mut s = Session::server_ready(
    ///     Config::new("srv", "1").capabilities(obj(r#"{"tools":{}}"#)),
    ///     ProtocolVersion::V2025_06_18,
    ///     obj(r#"{"name":"c","version":"0"}"#),
    ///     obj("{}"),
    /// )
    /// .unwrap();
    /// assert_eq!(s.state(), State::Ready);
    /// assert!(matches!(s.poll_event(), Some(Event::Ready { .. })));
    /// s.handle_message(Instant::ZERO, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    /// assert!(matches!(s.poll_event(), Some(Event::Request(_))));
    /// ```
    pub fn server_ready(
        config: Config,
        version: ProtocolVersion,
        peer_info: Box<RawValue>,
        peer_capabilities: Box<RawValue>,
    ) -> Result<Self, Error> {
        if !config.versions.contains(&version) {
            return Err(Error::new(
                ErrorKind::ProtocolVersionMismatch,
                alloc::format!("protocol version {} is not configured", version.as_str()),
            ));
        }
        if !peer_info.get().starts_with('{') || !peer_capabilities.get().starts_with('{') {
            return Err(Error::invalid_params(
                "the peer's info and capabilities must be JSON objects",
            ));
        }
        let mut s = Session::new(false, config);
        s.peer = Some(PeerInfo {
            caps: CapSet::parse(&peer_capabilities),
            info: peer_info.clone(),
            capabilities: peer_capabilities.clone(),
            instructions: None,
        });
        s.version = Some(version);
        s.state = State::Ready;
        s.events.push_back(Event::Ready {
            version,
            peer_info,
            peer_capabilities,
            instructions: None,
        });
        Ok(s)
    }

    fn new(client: bool, config: Config) -> Self {
        Session {
            client,
            own_caps: CapSet::parse(&config.capabilities),
            decoder: NdjsonDecoder::new(config.max_message_size),
            config,
            state: State::AwaitingInit,
            version: None,
            peer: None,
            next_id: 1,
            pending: BTreeMap::new(),
            inbound: BTreeMap::new(),
            recently_cancelled: VecDeque::new(),
            batches: BTreeMap::new(),
            next_batch: 0,
            out: VecDeque::new(),
            events: VecDeque::new(),
            closed_emitted: false,
            requests_refused: None,
        }
    }

    /// Whether this is the client side.
    pub fn is_client(&self) -> bool {
        self.client
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// The negotiated version, once known.
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// The peer's `Implementation` object, once known.
    pub fn peer_info(&self) -> Option<&RawValue> {
        self.peer.as_ref().map(|p| &*p.info)
    }

    /// The peer's capabilities object, once known.
    pub fn peer_capabilities(&self) -> Option<&RawValue> {
        self.peer.as_ref().map(|p| &*p.capabilities)
    }

    /// The server's instructions (client side), once known.
    pub fn instructions(&self) -> Option<&str> {
        self.peer.as_ref().and_then(|p| p.instructions.as_deref())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Outbound requests awaiting their outcome.
    pub fn outbound_in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Inbound requests not answered yet.
    pub fn inbound_in_flight(&self) -> usize {
        self.inbound.len()
    }

    // ------------------------------------------------------------------ inputs

    /// Feeds bytes of a newline-delimited stream (any chunking).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if self.state == State::Closed {
            return;
        }
        let mut decoder = core::mem::replace(&mut self.decoder, NdjsonDecoder::new(0));
        // Complete lines are parsed where they lie in `bytes`; only a partial line is copied.
        decoder.feed(bytes, |item| match item {
            Ok(line) => self.handle_message(now, line),
            Err(NdjsonError::LineTooLong { len, max }) => self.reject_oversized(len, max),
            #[allow(unreachable_patterns)]
            Err(_) => {}
        });
        self.decoder = decoder;
    }

    /// Feeds one complete message (an HTTP body, an SSE `data`, a WebSocket frame, a line).
    pub fn handle_message(&mut self, now: Instant, bytes: &[u8]) {
        if self.state == State::Closed {
            return;
        }
        if bytes.len() > self.config.max_message_size {
            self.reject_oversized(bytes.len(), self.config.max_message_size);
            return;
        }
        match jsonrpc::parse(bytes) {
            Parsed::Single(Ok(env)) => self.on_envelope(now, env, None),
            Parsed::Single(Err(rej)) => self.on_rejected(rej, None),
            Parsed::Batch(items) => self.on_batch(now, items),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    /// Tells the session that time has passed; expired requests time out. Safe to call at any
    /// time, however often.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        let mut expired: Vec<i64> = Vec::new();
        for (id, p) in &self.pending {
            if p.deadline.is_some_and(|d| d <= now) {
                expired.push(*id);
            }
        }
        for id in expired {
            let Some(p) = self.pending.remove(&id) else {
                continue;
            };
            if p.is_initialize {
                self.fail_connection(Error::new(ErrorKind::Timeout, "`initialize` timed out"));
                return;
            }
            self.out.push_back(Outgoing::Cancelled {
                id: RequestId::Number(id),
                reason: Some(Cow::Borrowed("request timed out")),
            });
            self.events.push_back(Event::Response {
                id: RequestId::Number(id),
                result: Err(Error::new(ErrorKind::Timeout, "request timed out")),
            });
        }
    }

    /// The peer will send nothing more (EOF on stdin): a final unterminated line is processed,
    /// pending outbound requests fail, in-flight inbound requests may still be answered; the
    /// session closes once they are and everything is flushed.
    pub fn handle_input_closed(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        let mut decoder = core::mem::replace(&mut self.decoder, NdjsonDecoder::new(0));
        loop {
            match decoder.finish() {
                None => break,
                Some(Ok(line)) => {
                    let line = line.to_vec();
                    self.handle_message(now, &line);
                }
                Some(Err(NdjsonError::LineTooLong { len, max })) => self.reject_oversized(len, max),
                #[allow(unreachable_patterns)]
                Some(Err(_)) => {}
            }
        }
        self.decoder = decoder;
        self.begin_close("the peer closed its side of the connection");
    }

    /// The transport is gone: every pending outbound request fails exactly once, in-flight
    /// inbound requests are dropped, and the session ends now.
    pub fn handle_closed(&mut self, _now: Instant, error: Option<Error>) {
        if self.state == State::Closed {
            return;
        }
        self.fail_pending(ErrorKind::TransportClosed, "the connection closed");
        self.inbound.clear();
        self.batches.clear();
        self.out.clear();
        self.state = State::Closed;
        self.emit_closed(error);
    }

    // ---------------------------------------------------------------- commands

    /// Client: starts the handshake by queueing `initialize` with the latest supported version.
    pub fn initialize(&mut self, now: Instant) -> Result<RequestId, Error> {
        if !self.client {
            return Err(Error::invalid_request("only a client sends `initialize`"));
        }
        if self.state != State::AwaitingInit {
            return Err(Error::new(
                ErrorKind::AlreadyConnected,
                "`initialize` was already sent",
            ));
        }
        let Some(version) = self.config.latest_handshake() else {
            return Err(Error::new(
                ErrorKind::ProtocolVersionMismatch,
                "no handshake protocol version configured",
            ));
        };
        let mut p = Vec::with_capacity(
            64 + self.config.info.get().len() + self.config.capabilities.get().len(),
        );
        p.extend_from_slice(b"{\"protocolVersion\":");
        jsonrpc::write_json_str(&mut p, version.as_str());
        p.extend_from_slice(b",\"capabilities\":");
        p.extend_from_slice(self.config.capabilities.get().as_bytes());
        p.extend_from_slice(b",\"clientInfo\":");
        p.extend_from_slice(self.config.info.get().as_bytes());
        p.push(b'}');
        let id = self.alloc_id();
        let timeout = self.config.request_timeout;
        self.pending.insert(
            id,
            Pending {
                is_initialize: true,
                timeout,
                hard_deadline: None,
                deadline: timeout.map(|t| now + t),
                reset_on_progress: false,
                progress: false,
                last_progress: None,
            },
        );
        self.out.push_back(Outgoing::Request {
            id,
            method: Cow::Borrowed("initialize"),
            params: Some(raw_from_vec(p)),
            related: None,
        });
        self.state = State::Initializing;
        Ok(RequestId::Number(id))
    }

    /// Sends a request; its one outcome arrives as [`Event::Response`].
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        if let Some(why) = self.requests_refused {
            return Err(Error::new(ErrorKind::TransportError, why));
        }
        let name = self.check_outbound(method, true)?;
        if let Some(p) = &params
            && !p.get().starts_with('{')
        {
            return Err(Error::invalid_params(
                "request params must be a JSON object",
            ));
        }
        if self.pending.len() >= self.config.max_outbound_in_flight {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                alloc::format!("{} requests already in flight", self.pending.len()),
            ));
        }
        let id = self.alloc_id();
        let params = if opts.progress {
            Some(with_progress_token(params, id)?)
        } else {
            params
        };
        let timeout = opts.timeout.or(self.config.request_timeout);
        let hard_deadline = opts.max_total_timeout.map(|m| now + m);
        let deadline = earliest(timeout.map(|t| now + t), hard_deadline);
        self.pending.insert(
            id,
            Pending {
                is_initialize: false,
                timeout,
                hard_deadline,
                deadline,
                reset_on_progress: opts.reset_timeout_on_progress,
                progress: opts.progress,
                last_progress: None,
            },
        );
        self.out.push_back(Outgoing::Request {
            id,
            method: name,
            params,
            related: opts.related_to,
        });
        Ok(RequestId::Number(id))
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Option<Box<RawValue>>) -> Result<(), Error> {
        self.notify_related(method, params, None)
    }

    /// Sends a notification that belongs to an inbound request (e.g. a log message during a
    /// tool call), so HTTP transports can put it on that request's stream.
    pub fn notify_related(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error> {
        if matches!(
            method,
            "notifications/cancelled" | "notifications/progress" | "notifications/initialized"
        ) {
            return Err(Error::invalid_request(alloc::format!(
                "`{method}` is sent by the session itself (use cancel / report_progress)"
            )));
        }
        let name = self.check_outbound(method, false)?;
        if let Some(p) = &params
            && !p.get().starts_with('{')
        {
            return Err(Error::invalid_params(
                "notification params must be a JSON object",
            ));
        }
        self.out.push_back(Outgoing::Notification {
            method: name,
            params,
            related,
        });
        Ok(())
    }

    /// Answers an inbound request. A request the peer cancelled is never answered
    /// ([`ErrorKind::RequestCancelled`] is returned and nothing is sent).
    pub fn respond(&mut self, id: &RequestId, result: Box<RawValue>) -> Result<(), Error> {
        if !result.get().starts_with('{') {
            return Err(Error::invalid_params("a result must be a JSON object"));
        }
        let entry = self.take_inbound(id)?;
        self.answer_inbound(
            entry.batch,
            Outgoing::Response {
                id: id.clone(),
                result,
            },
        );
        Ok(())
    }

    /// Answers an inbound request with an error.
    /// A local kind ([`ErrorKind::is_local`]) is sent as `-32603` internal error.
    pub fn respond_error(&mut self, id: &RequestId, error: Error) -> Result<(), Error> {
        let entry = self.take_inbound(id)?;
        // A local kind (a timeout, a closed transport, a failed handler) is no answer the peer
        // knows: it goes out as an internal error, with its message.
        let local = error.kind().is_local() && error.code() == error.kind().code();
        let (mut code, message, data) = error.into_parts();
        if local {
            code = ErrorKind::Internal.code();
        }
        self.answer(
            entry.batch,
            Outgoing::Error {
                id: Some(id.clone()),
                code,
                message,
                data,
            },
        );
        Ok(())
    }

    /// Reports progress on an inbound request that asked for it. Values must strictly increase.
    pub fn report_progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        self.report_progress_with_meta(id, progress, total, message, None)
    }

    /// Like [`report_progress`](Session::report_progress), with a `_meta` object added to the
    /// notification's params (e.g. partial results for clients that understand them).
    pub fn report_progress_with_meta(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        meta: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        if meta.as_ref().is_some_and(|m| !m.get().starts_with('{')) {
            return Err(Error::invalid_params("`_meta` must be a JSON object"));
        }
        if self.state == State::Closed {
            return Err(Error::new(
                ErrorKind::TransportClosed,
                "the session is closed",
            ));
        }
        let Some(entry) = self.inbound.get_mut(id) else {
            return Err(self.missing_inbound(id));
        };
        let Some(token) = entry.progress_token.clone() else {
            return Err(Error::invalid_params(
                "the request did not ask for progress",
            ));
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(Error::invalid_params("progress values must be finite"));
        }
        if entry.last_progress.is_some_and(|last| progress <= last) {
            return Err(Error::invalid_params("progress must strictly increase"));
        }
        entry.last_progress = Some(progress);
        self.out.push_back(Outgoing::Progress {
            token,
            progress,
            total,
            message: message.map(String::from),
            meta,
            related: id.clone(),
        });
        Ok(())
    }

    /// Cancels an outbound request: `notifications/cancelled` goes to the peer and the request's
    /// outcome is [`ErrorKind::RequestCancelled`]. A late response is dropped quietly.
    pub fn cancel(
        &mut self,
        _now: Instant,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        let RequestId::Number(n) = id else {
            return Err(Error::new(ErrorKind::NotFound, "no such outbound request"));
        };
        match self.pending.get(n) {
            None => Err(Error::new(ErrorKind::NotFound, "no such outbound request")),
            Some(p) if p.is_initialize => {
                Err(Error::invalid_request("`initialize` must not be cancelled"))
            }
            Some(_) => {
                self.pending.remove(n);
                self.out.push_back(Outgoing::Cancelled {
                    id: id.clone(),
                    reason: reason.map(|r| Cow::Owned(String::from(r))),
                });
                self.events.push_back(Event::Response {
                    id: id.clone(),
                    result: Err(Error::new(ErrorKind::RequestCancelled, "request cancelled")),
                });
                Ok(())
            }
        }
    }

    /// Closes gracefully: pending outbound requests fail with `TransportClosed`, new inbound
    /// requests are refused, in-flight inbound requests may still be answered; the session ends
    /// ([`Event::Closed`]) once they are and everything is flushed.
    pub fn close(&mut self, _now: Instant) {
        if self.state == State::Closed {
            return;
        }
        self.begin_close("the session was closed");
    }

    // ----------------------------------------------------------------- outputs

    /// Appends the next outgoing message, framed, to `buf`.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let o = self.out.pop_front();
        let Some(o) = o else {
            self.maybe_finish_close();
            return None;
        };
        let start = buf.len();
        let (kind, related) = write_outgoing(buf, o);
        if self.config.framing == Framing::Ndjson {
            // Raw JSON handed in by the application (params, results, info) may be
            // pretty-printed. In valid JSON a raw CR or LF can only be whitespace between
            // tokens, so turning it into a space keeps the message identical and on one line.
            if let Some(written) = buf.get_mut(start..) {
                let mut at = 0;
                while let Some(i) =
                    memchr::memchr2(b'\n', b'\r', written.get(at..).unwrap_or_default())
                {
                    if let Some(b) = written.get_mut(at + i) {
                        *b = b' ';
                    }
                    at += i + 1;
                }
            }
            buf.push(b'\n');
        }
        Some(Transmit {
            kind,
            related,
            len: buf.len() - start,
        })
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        self.maybe_finish_close();
        self.events.pop_front()
    }

    /// The next deadline at which [`handle_timeout`](Session::handle_timeout) must be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    /// Whether there is something to transmit.
    pub fn has_transmit(&self) -> bool {
        !self.out.is_empty()
    }

    // --------------------------------------------------------------- internals

    fn alloc_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        id
    }

    fn check_outbound(&self, method: &str, request: bool) -> Result<Cow<'static, str>, Error> {
        match self.state {
            State::Closed | State::Closing => {
                return Err(Error::new(
                    ErrorKind::TransportClosed,
                    "the session is closed",
                ));
            }
            State::Ready => {}
            State::AwaitingInit | State::Initializing => {
                let allowed = if request {
                    method == "ping"
                } else {
                    // A server may log before `initialized`.
                    !self.client
                        && self.state == State::Initializing
                        && method == "notifications/message"
                };
                if !allowed {
                    return Err(Error::new(
                        ErrorKind::NotInitialized,
                        alloc::format!("cannot send `{method}` before the handshake completes"),
                    ));
                }
            }
        }
        if method == "initialize" {
            return Err(Error::invalid_request(
                "use `initialize()` to start the handshake",
            ));
        }
        let Some(spec) = method::lookup(method) else {
            return Ok(Cow::Owned(String::from(method)));
        };
        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        if spec.request != request || !spec.sent_by(self.client) || !spec.in_version(version) {
            return Err(Error::new(
                ErrorKind::MethodNotFound,
                alloc::format!("`{method}` is not sent by this side in protocol {version}"),
            ));
        }
        if request
            && let Some(peer) = &self.peer
            && !peer.caps.allows(spec.gate, version)
        {
            return Err(Error::new(
                ErrorKind::MethodNotFound,
                alloc::format!(
                    "the peer did not declare the `{}` capability needed for `{method}`",
                    gate_name(spec.gate)
                ),
            ));
        }
        Ok(Cow::Borrowed(spec.name))
    }

    fn take_inbound(&mut self, id: &RequestId) -> Result<Inbound, Error> {
        if self.state == State::Closed {
            return Err(Error::new(
                ErrorKind::TransportClosed,
                "the session is closed",
            ));
        }
        match self.inbound.remove(id) {
            Some(e) => Ok(e),
            None => Err(self.missing_inbound(id)),
        }
    }

    fn missing_inbound(&self, id: &RequestId) -> Error {
        if self.recently_cancelled.contains(id) {
            Error::new(
                ErrorKind::RequestCancelled,
                "the peer cancelled this request",
            )
        } else {
            Error::new(
                ErrorKind::NotFound,
                alloc::format!("no inbound request {id} in flight"),
            )
        }
    }

    fn answer(&mut self, batch: Option<u64>, o: Outgoing) {
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.items.push(o);
            self.flush_batch_if_done(b);
            return;
        }
        self.out.push_back(o);
    }

    /// Answers a request that was handed to the application (counts down its batch).
    fn answer_inbound(&mut self, batch: Option<u64>, o: Outgoing) {
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.remaining = entry.remaining.saturating_sub(1);
        }
        self.answer(batch, o);
    }

    fn batch_request_done(&mut self, batch: Option<u64>) {
        if let Some(b) = batch {
            if let Some(entry) = self.batches.get_mut(&b) {
                entry.remaining = entry.remaining.saturating_sub(1);
            }
            self.flush_batch_if_done(b);
        }
    }

    fn flush_batch_if_done(&mut self, b: u64) {
        let done = self
            .batches
            .get(&b)
            .is_some_and(|e| e.sealed && e.remaining == 0);
        if done
            && let Some(entry) = self.batches.remove(&b)
            && !entry.items.is_empty()
        {
            self.out.push_back(Outgoing::Batch(entry.items));
        }
    }

    fn reject_oversized(&mut self, len: usize, max: usize) {
        let e = Error::new(
            ErrorKind::LimitExceeded,
            alloc::format!("message of {len}+ bytes exceeds the limit of {max} bytes"),
        );
        self.queue_error(None, None, &e);
        self.events.push_back(Event::InvalidMessage(e));
    }

    fn queue_error(&mut self, batch: Option<u64>, id: Option<RequestId>, e: &Error) {
        let o = Outgoing::Error {
            id,
            code: e.code(),
            message: Cow::Owned(String::from(e.message())),
            data: e.data().map(ToOwned::to_owned),
        };
        self.answer(batch, o);
    }

    fn on_rejected(&mut self, rej: Rejected, batch: Option<u64>) {
        if rej.answer && self.state != State::Closed {
            self.queue_error(batch, rej.id, &rej.error);
        }
        self.events.push_back(Event::InvalidMessage(rej.error));
    }

    fn on_batch(&mut self, now: Instant, items: Vec<Result<Envelope<'_>, Rejected>>) {
        let allowed = self.version.is_some_and(|v| v.allows_batches());
        if !allowed {
            let e =
                Error::invalid_request("JSON-RPC batches are not allowed in this protocol version");
            self.queue_error(None, None, &e);
            self.events.push_back(Event::InvalidMessage(e));
            return;
        }
        let b = self.next_batch;
        self.next_batch = self.next_batch.wrapping_add(1);
        self.batches.insert(b, Batch::default());
        for item in items {
            match item {
                Ok(Envelope::Request { id, method, .. }) if method == "initialize" => {
                    let e = Error::invalid_request("`initialize` must not be part of a batch");
                    self.queue_error(Some(b), Some(id), &e);
                    self.events.push_back(Event::InvalidMessage(e));
                }
                Ok(env) => self.on_envelope(now, env, Some(b)),
                Err(rej) => self.on_rejected(rej, Some(b)),
            }
        }
        if let Some(entry) = self.batches.get_mut(&b) {
            entry.sealed = true;
        }
        self.flush_batch_if_done(b);
    }

    fn on_envelope(&mut self, now: Instant, env: Envelope<'_>, batch: Option<u64>) {
        match env {
            Envelope::Request { id, method, params } => self.on_request(id, &method, params, batch),
            Envelope::Notification { method, params } => self.on_notification(now, &method, params),
            Envelope::Response { id, result } => self.on_response(now, id, Ok(result)),
            Envelope::Error {
                id,
                code,
                message,
                data,
            } => {
                let e = Error::from_wire(
                    code,
                    String::from(message.as_ref()),
                    data.map(ToOwned::to_owned),
                );
                match id {
                    Some(id) => self.on_response(now, id, Err(e)),
                    None => self.events.push_back(Event::PeerError(e)),
                }
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn on_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        batch: Option<u64>,
    ) {
        if self.inbound.contains_key(&id) {
            let e = Error::invalid_request(alloc::format!("request id {id} is already in flight"));
            self.queue_error(batch, Some(id), &e);
            self.events.push_back(Event::InvalidMessage(e));
            return;
        }
        let refuse = |kind: ErrorKind, msg: String| Error::new(kind, msg);
        let error = match (self.state, method) {
            (State::Closed, _) => return,
            (State::Closing, _) => Some(refuse(
                ErrorKind::TransportClosed,
                String::from("the session is closing"),
            )),
            (_, "ping") => {
                self.answer(
                    batch,
                    Outgoing::Response {
                        id,
                        result: jsonrpc::empty_object(),
                    },
                );
                return;
            }
            (State::AwaitingInit, "initialize") if !self.client => {
                self.on_initialize(id, params, batch);
                return;
            }
            (_, "initialize") if !self.client => Some(refuse(
                ErrorKind::AlreadyConnected,
                String::from("the session is already initialized"),
            )),
            // Methods of the stateless era only (`server/discover`, `subscriptions/listen`): a
            // handshake-era session does not have them. -32601 is what era probes recognise.
            (State::AwaitingInit | State::Initializing, m)
                if method::lookup(m).is_some_and(|s| s.first.is_stateless()) =>
            {
                Some(Error::method_not_found(m))
            }
            (State::AwaitingInit | State::Initializing, _) => Some(refuse(
                ErrorKind::NotInitialized,
                alloc::format!(
                    "`{method}` arrived before the handshake completed{}",
                    if self.client {
                        ""
                    } else {
                        " (send `initialize`, then `notifications/initialized`)"
                    }
                ),
            )),
            (State::Ready, _) => self.validate_inbound(method, params),
        };
        if let Some(e) = error {
            self.queue_error(batch, Some(id), &e);
            return;
        }
        if self.inbound.len() >= self.config.max_inbound_in_flight {
            let e = Error::new(
                ErrorKind::LimitExceeded,
                alloc::format!(
                    "too many requests in flight (limit {})",
                    self.config.max_inbound_in_flight
                ),
            );
            self.queue_error(batch, Some(id), &e);
            return;
        }
        let name = match method::lookup(method) {
            Some(spec) => Cow::Borrowed(spec.name),
            None => Cow::Owned(String::from(method)),
        };
        let progress_token = params.and_then(progress_token_of);
        self.inbound.insert(
            id.clone(),
            Inbound {
                progress_token: progress_token.clone(),
                last_progress: None,
                batch,
            },
        );
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.remaining += 1;
        }
        self.events.push_back(Event::Request(InboundRequest {
            id,
            method: name,
            params: params.map(ToOwned::to_owned),
            progress_token,
        }));
    }

    fn validate_inbound(&self, method: &str, params: Option<&RawValue>) -> Option<Error> {
        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        match method::lookup(method) {
            Some(spec) => {
                if !spec.request || !spec.sent_by(!self.client) || !spec.in_version(version) {
                    return Some(Error::method_not_found(method));
                }
                if !self.own_caps.allows(spec.gate, version) {
                    return Some(Error::new(
                        ErrorKind::MethodNotFound,
                        alloc::format!(
                            "method not found: `{method}` needs the `{}` capability, which this side did not declare",
                            gate_name(spec.gate)
                        ),
                    ));
                }
            }
            None if !self.config.allow_custom_methods => {
                return Some(Error::method_not_found(method));
            }
            None => {}
        }
        if let Some(p) = params
            && !p.get().starts_with('{')
        {
            return Some(Error::invalid_params("`params` must be a JSON object"));
        }
        None
    }

    fn on_initialize(&mut self, id: RequestId, params: Option<&RawValue>, batch: Option<u64>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitParams<'a> {
            #[serde(borrow)]
            protocol_version: Cow<'a, str>,
            #[serde(borrow)]
            capabilities: &'a RawValue,
            #[serde(borrow)]
            client_info: &'a RawValue,
        }
        let parsed = match params {
            None => Err(String::from("missing params")),
            Some(p) => {
                serde_json::from_str::<InitParams<'_>>(p.get()).map_err(|e| alloc::format!("{e}"))
            }
        };
        let p = match parsed {
            Ok(p)
                if p.capabilities.get().starts_with('{')
                    && p.client_info.get().starts_with('{') =>
            {
                p
            }
            Ok(_) => {
                let e = Error::invalid_params(
                    "invalid `initialize` params: `capabilities` and `clientInfo` must be objects",
                );
                self.queue_error(batch, Some(id), &e);
                return;
            }
            Err(msg) => {
                let e = Error::invalid_params(alloc::format!("invalid `initialize` params: {msg}"));
                self.queue_error(batch, Some(id), &e);
                return;
            }
        };
        let requested = ProtocolVersion::parse(&p.protocol_version);
        let chosen = match requested {
            Some(v) if !v.is_stateless() && self.config.versions.contains(&v) => Some(v),
            _ => self.config.latest_handshake(),
        };
        let Some(version) = chosen else {
            let mut data = Vec::new();
            data.extend_from_slice(b"{\"supported\":[");
            for (i, v) in self.config.versions.iter().enumerate() {
                if i > 0 {
                    data.push(b',');
                }
                jsonrpc::write_json_str(&mut data, v.as_str());
            }
            data.extend_from_slice(b"],\"requested\":");
            jsonrpc::write_json_str(&mut data, &p.protocol_version);
            data.push(b'}');
            let e = Error::new(
                ErrorKind::ProtocolVersionMismatch,
                "Unsupported protocol version",
            )
            .with_code(-32602)
            .with_data(raw_from_vec(data));
            self.queue_error(batch, Some(id), &e);
            return;
        };
        let mut r = Vec::with_capacity(
            96 + self.config.info.get().len() + self.config.capabilities.get().len(),
        );
        r.extend_from_slice(b"{\"protocolVersion\":");
        jsonrpc::write_json_str(&mut r, version.as_str());
        r.extend_from_slice(b",\"capabilities\":");
        r.extend_from_slice(self.config.capabilities.get().as_bytes());
        r.extend_from_slice(b",\"serverInfo\":");
        r.extend_from_slice(self.config.info.get().as_bytes());
        if let Some(instr) = &self.config.instructions {
            r.extend_from_slice(b",\"instructions\":");
            jsonrpc::write_json_str(&mut r, instr);
        }
        r.push(b'}');
        self.peer = Some(PeerInfo {
            info: p.client_info.to_owned(),
            capabilities: p.capabilities.to_owned(),
            caps: CapSet::parse(p.capabilities),
            instructions: None,
        });
        self.version = Some(version);
        self.state = State::Initializing;
        self.answer(
            batch,
            Outgoing::Response {
                id,
                result: raw_from_vec(r),
            },
        );
    }

    fn on_initialize_result(&mut self, result: Result<&RawValue, Error>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitResult<'a> {
            #[serde(borrow)]
            protocol_version: Cow<'a, str>,
            #[serde(borrow)]
            capabilities: &'a RawValue,
            #[serde(borrow)]
            server_info: &'a RawValue,
            instructions: Option<String>,
        }
        let raw = match result {
            Ok(raw) => raw,
            Err(e) => {
                self.fail_connection(e);
                return;
            }
        };
        let r = match serde_json::from_str::<InitResult<'_>>(raw.get()) {
            Ok(r) => r,
            Err(err) => {
                self.fail_connection(Error::invalid_request(alloc::format!(
                    "invalid `initialize` result: {err}"
                )));
                return;
            }
        };
        let version = match ProtocolVersion::parse(&r.protocol_version) {
            Some(v) if self.config.versions.contains(&v) && !v.is_stateless() => v,
            _ => {
                self.fail_connection(Error::new(
                    ErrorKind::ProtocolVersionMismatch,
                    alloc::format!("the server chose protocol version {:?}, which this client does not support", r.protocol_version),
                ));
                return;
            }
        };
        self.version = Some(version);
        let peer_info = r.server_info.to_owned();
        let peer_capabilities = r.capabilities.to_owned();
        self.peer = Some(PeerInfo {
            info: peer_info.clone(),
            capabilities: peer_capabilities.clone(),
            caps: CapSet::parse(r.capabilities),
            instructions: r.instructions.clone(),
        });
        self.state = State::Ready;
        self.out.push_back(Outgoing::Notification {
            method: Cow::Borrowed("notifications/initialized"),
            params: None,
            related: None,
        });
        self.events.push_back(Event::Ready {
            version,
            peer_info,
            peer_capabilities,
            instructions: r.instructions,
        });
    }

    fn on_notification(&mut self, now: Instant, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => {
                if !self.client && self.state == State::Initializing {
                    self.state = State::Ready;
                    if let (Some(version), Some(peer)) = (self.version, &self.peer) {
                        self.events.push_back(Event::Ready {
                            version,
                            peer_info: peer.info.clone(),
                            peer_capabilities: peer.capabilities.clone(),
                            instructions: None,
                        });
                    }
                } else {
                    self.events
                        .push_back(Event::InvalidMessage(Error::invalid_request(
                            "unexpected `notifications/initialized`",
                        )));
                }
            }
            "notifications/cancelled" => self.on_cancelled(params),
            "notifications/progress" => self.on_progress(now, params),
            _ => {
                if self.state == State::AwaitingInit {
                    self.events.push_back(Event::InvalidMessage(Error::new(
                        ErrorKind::NotInitialized,
                        alloc::format!("`{method}` arrived before the handshake"),
                    )));
                    return;
                }
                let name = match method::lookup(method) {
                    Some(spec) => {
                        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
                        if spec.request || !spec.sent_by(!self.client) || !spec.in_version(version)
                        {
                            self.events
                                .push_back(Event::InvalidMessage(Error::method_not_found(method)));
                            return;
                        }
                        Cow::Borrowed(spec.name)
                    }
                    None => Cow::Owned(String::from(method)),
                };
                self.events.push_back(Event::Notification {
                    method: name,
                    params: params.map(ToOwned::to_owned),
                });
            }
        }
    }

    fn on_cancelled(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            request_id: Option<RequestId>,
            reason: Option<String>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P>(p.get()).ok()) else {
            // Malformed cancellations are ignored (a notification is never answered).
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "malformed `notifications/cancelled`",
                )));
            return;
        };
        let Some(id) = p.request_id else { return };
        if let Some(entry) = self.inbound.remove(&id) {
            if self.recently_cancelled.len() >= CANCELLED_MEMORY {
                self.recently_cancelled.pop_front();
            }
            self.recently_cancelled.push_back(id.clone());
            self.batch_request_done(entry.batch);
            self.events.push_back(Event::Cancelled {
                id,
                reason: p.reason,
            });
        }
    }

    fn on_progress(&mut self, now: Instant, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            progress_token: ProgressToken,
            progress: f64,
            total: Option<f64>,
            message: Option<String>,
            #[serde(rename = "_meta")]
            meta: Option<Box<RawValue>>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P>(p.get()).ok()) else {
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "malformed `notifications/progress`",
                )));
            return;
        };
        let RequestId::Number(n) = p.progress_token else {
            return;
        };
        let Some(pending) = self.pending.get_mut(&n) else {
            return;
        };
        if !pending.progress {
            return;
        }
        if pending.last_progress.is_some_and(|last| p.progress <= last) {
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "progress did not increase; notification dropped",
                )));
            return;
        }
        pending.last_progress = Some(p.progress);
        if pending.reset_on_progress {
            pending.deadline = earliest(pending.timeout.map(|t| now + t), pending.hard_deadline);
        }
        self.events.push_back(Event::Progress {
            id: RequestId::Number(n),
            progress: p.progress,
            total: p.total,
            message: p.message,
            meta: p.meta,
        });
    }

    fn on_response(&mut self, _now: Instant, id: RequestId, result: Result<&RawValue, Error>) {
        let RequestId::Number(n) = id else {
            self.events.push_back(Event::UnknownResponse { id });
            return;
        };
        match self.pending.remove(&n) {
            Some(p) if p.is_initialize => self.on_initialize_result(result),
            Some(_) => self.events.push_back(Event::Response {
                id,
                result: result.map(ToOwned::to_owned),
            }),
            // One of ours that already has its outcome (timed out, cancelled): dropped quietly.
            None if n >= 1 && n < self.next_id => {}
            None => self.events.push_back(Event::UnknownResponse { id }),
        }
    }

    fn fail_pending(&mut self, kind: ErrorKind, message: &'static str) {
        let pending = core::mem::take(&mut self.pending);
        for (id, p) in pending {
            if p.is_initialize {
                // The handshake's outcome is `Event::Ready` or `Event::Closed`.
                continue;
            }
            self.events.push_back(Event::Response {
                id: RequestId::Number(id),
                result: Err(Error::new(kind, message)),
            });
        }
    }

    fn fail_connection(&mut self, error: Error) {
        self.fail_pending(ErrorKind::TransportClosed, "the connection failed");
        self.inbound.clear();
        self.batches.clear();
        self.out.clear();
        self.state = State::Closed;
        self.emit_closed(Some(error));
    }

    fn begin_close(&mut self, why: &'static str) {
        if matches!(self.state, State::Closing | State::Closed) {
            return;
        }
        self.fail_pending(ErrorKind::TransportClosed, why);
        self.state = State::Closing;
        self.maybe_finish_close();
    }

    fn maybe_finish_close(&mut self) {
        if self.state == State::Closing
            && self.inbound.is_empty()
            && self.batches.is_empty()
            && self.out.is_empty()
        {
            self.state = State::Closed;
            self.emit_closed(None);
        }
    }

    fn emit_closed(&mut self, error: Option<Error>) {
        if !self.closed_emitted {
            self.closed_emitted = true;
            self.events.push_back(Event::Closed(error));
        }
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Reads `params._meta.progressToken` without building a tree (skipped entirely when the params
/// contain no `_meta` key).
fn progress_token_of(params: &RawValue) -> Option<ProgressToken> {
    // A cheap pre-check spares the second parse for the common request without `_meta`; a
    // large argument is then scanned once more, not parsed.
    if !mentions_meta(params.get()) {
        return None;
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken")]
        token: Option<ProgressToken>,
    }
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    serde_json::from_str::<P>(params.get()).ok()?.meta?.token
}

/// Whether `json` contains the text `"_meta"` (a key, or the same text inside a string).
///
/// `memchr` for `_` then a compare: no searcher to build per call (as `memmem::find` does,
/// which costs more than the whole search on the short params most requests carry), and
/// SIMD speed over a large argument.
fn mentions_meta(json: &str) -> bool {
    let bytes = json.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes
        .get(from..)
        .and_then(|rest| memchr::memchr(b'_', rest))
    {
        let at = from + i;
        if at > 0
            && bytes.get(at - 1) == Some(&b'"')
            && bytes.get(at + 1..at + 6) == Some(b"meta\"".as_slice())
        {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Adds `_meta.progressToken = token` to request params.
fn with_progress_token(params: Option<Box<RawValue>>, token: i64) -> Result<Box<RawValue>, Error> {
    let mut head = Vec::with_capacity(48);
    head.extend_from_slice(b"{\"_meta\":{\"progressToken\":");
    RequestId::Number(token).write_json(&mut head);
    head.push(b'}');
    let Some(params) = params else {
        head.push(b'}');
        return Ok(raw_from_vec(head));
    };
    let s = params.get();
    if !mentions_meta(s) {
        let rest = s.trim_start().strip_prefix('{').unwrap_or("}");
        if !rest.trim_start().starts_with('}') {
            head.push(b',');
        }
        head.extend_from_slice(rest.as_bytes());
        return Ok(raw_from_vec(head));
    }
    let mut map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(s)
        .map_err(|e| Error::invalid_params(alloc::format!("params: {e}")))?;
    let meta = map
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    match meta {
        serde_json::Value::Object(m) => {
            m.insert(
                String::from("progressToken"),
                serde_json::Value::from(token),
            );
        }
        _ => return Err(Error::invalid_params("`_meta` must be an object")),
    }
    jsonrpc::to_raw(&map)
}

/// Writes `f` as a JSON number (`f` is finite).
fn write_f64(out: &mut Vec<u8>, f: f64) {
    struct W<'a>(&'a mut Vec<u8>);
    impl core::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let _ = write!(W(out), "{f}");
}

fn write_outgoing(buf: &mut Vec<u8>, o: Outgoing) -> (MessageKind, Option<RequestId>) {
    match o {
        Outgoing::Request {
            id,
            method,
            params,
            related,
        } => {
            jsonrpc::write_request(buf, &RequestId::Number(id), &method, params.as_deref());
            (MessageKind::Request, related)
        }
        Outgoing::Notification {
            method,
            params,
            related,
        } => {
            jsonrpc::write_notification(buf, &method, params.as_deref());
            (MessageKind::Notification, related)
        }
        Outgoing::Response { id, result } => {
            jsonrpc::write_response(buf, &id, &result);
            (MessageKind::Response, Some(id))
        }
        Outgoing::Error {
            id,
            code,
            message,
            data,
        } => {
            jsonrpc::write_error(buf, id.as_ref(), code, &message, data.as_deref());
            (MessageKind::Response, id)
        }
        Outgoing::Cancelled { id, reason } => {
            buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":");
            id.write_json(buf);
            if let Some(r) = reason {
                buf.extend_from_slice(b",\"reason\":");
                jsonrpc::write_json_str(buf, &r);
            }
            buf.extend_from_slice(b"}}");
            (MessageKind::Notification, None)
        }
        Outgoing::Progress {
            token,
            progress,
            total,
            message,
            meta,
            related,
        } => {
            buf.extend_from_slice(
                b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{",
            );
            if let Some(m) = meta {
                buf.extend_from_slice(b"\"_meta\":");
                buf.extend_from_slice(m.get().as_bytes());
                buf.push(b',');
            }
            buf.extend_from_slice(b"\"progressToken\":");
            token.write_json(buf);
            buf.extend_from_slice(b",\"progress\":");
            write_f64(buf, progress);
            if let Some(t) = total {
                buf.extend_from_slice(b",\"total\":");
                write_f64(buf, t);
            }
            if let Some(m) = message {
                buf.extend_from_slice(b",\"message\":");
                jsonrpc::write_json_str(buf, &m);
            }
            buf.extend_from_slice(b"}}");
            (MessageKind::Notification, Some(related))
        }
        Outgoing::Batch(items) => {
            buf.push(b'[');
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                let _ = write_outgoing(buf, item);
            }
            buf.push(b']');
            (MessageKind::Batch, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.into()).unwrap()
    }

    #[test]
    fn progress_token_injection() {
        assert_eq!(
            with_progress_token(None, 3).unwrap().get(),
            r#"{"_meta":{"progressToken":3}}"#
        );
        assert_eq!(
            with_progress_token(Some(raw("{}")), 3).unwrap().get(),
            r#"{"_meta":{"progressToken":3}}"#
        );
        assert_eq!(
            with_progress_token(Some(raw(r#"{"name":"x"}"#)), 4)
                .unwrap()
                .get(),
            r#"{"_meta":{"progressToken":4},"name":"x"}"#
        );
        let v: serde_json::Value = serde_json::from_str(
            with_progress_token(Some(raw(r#"{"name":"x","_meta":{"a":1}}"#)), 5)
                .unwrap()
                .get(),
        )
        .unwrap();
        assert_eq!(v["_meta"]["progressToken"], 5);
        assert_eq!(v["_meta"]["a"], 1);
        assert!(with_progress_token(Some(raw(r#"{"_meta":3}"#)), 5).is_err());
    }

    #[test]
    fn progress_token_extraction() {
        for (json, yes) in [
            (r#"{"_meta":1}"#, true),
            (r#"{"a":"_meta","b":"x_meta\""}"#, true),
            (r#"{"a_meta":1,"_met":2,"_metax":3}"#, false),
            (r#"_meta""#, false),
            (r#"{"__meta":1,"_":"_"}"#, false),
            ("", false),
        ] {
            assert_eq!(mentions_meta(json), yes, "{json}");
        }
        assert_eq!(progress_token_of(&raw(r#"{"a":1}"#)), None);
        assert_eq!(
            progress_token_of(&raw(r#"{"a":1,"_meta":{"progressToken":"t"}}"#)),
            Some(RequestId::from("t"))
        );
        assert_eq!(progress_token_of(&raw(r#"{"_meta":{"other":1}}"#)), None);
        assert_eq!(
            progress_token_of(&raw(r#"{"_meta":{"progressToken":null}}"#)),
            None
        );
    }

    #[test]
    fn f64_formatting_is_json() {
        for f in [
            0.0,
            1.0,
            0.5,
            -3.25,
            1e21,
            123456789.0,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let mut out = Vec::new();
            write_f64(&mut out, f);
            let back: f64 = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, f);
        }
    }

    #[test]
    fn capability_gates() {
        let c = CapSet::parse(&raw(
            r#"{"tools":{},"resources":{"subscribe":true},"logging":{}}"#,
        ));
        assert!(c.allows(Gate::Tools, ProtocolVersion::V2025_06_18));
        assert!(c.allows(Gate::ResourcesSubscribe, ProtocolVersion::V2025_06_18));
        assert!(!c.allows(Gate::Prompts, ProtocolVersion::V2025_06_18));
        assert!(!c.allows(Gate::Completions, ProtocolVersion::V2025_06_18));
        assert!(c.allows(Gate::Completions, ProtocolVersion::V2024_11_05));
        let c = CapSet::parse(&raw(r#"{"resources":{}}"#));
        assert!(c.resources && !c.resources_subscribe);
        let c = CapSet::parse(&raw("[]"));
        assert!(!c.tools);
    }
}
