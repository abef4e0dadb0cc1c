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
//! table already knows the modern methods. Its `subscriptions/listen` streams follow the
//! rules of [`listen`].

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::value::RawValue;

use crate::codec::ndjson::{NdjsonDecoder, NdjsonError};
use crate::error::{Error, ErrorKind};
use crate::id::RequestId;
use crate::jsonrpc::{self, Envelope, Parsed, Rejected};
use crate::time::Instant;
use crate::version::ProtocolVersion;

mod caps;
mod config;
mod discover;
mod encode;
mod event;
mod inbound;
mod lifecycle;
pub mod listen;
mod outbound;
pub(crate) mod stateless;

pub use config::{Config, Framing, RequestOptions};
pub use discover::{Discovery, MAX_ANNOTATED_TOOLS};
pub use encode::{MessageKind, Transmit};
pub use event::{Event, InboundRequest};
pub use lifecycle::{DISCOVER_PROBE_TIMEOUT, State};
pub use listen::{Change, Subscription};
pub use stateless::RequestEra;

pub(crate) use caps::CapSet;
use encode::{Batch, Outgoing};
use inbound::Inbound;
use lifecycle::PeerInfo;
use listen::Listener;
use outbound::Pending;

/// One MCP session, client or server side.
pub struct Session {
    client: bool,
    config: Config,
    own_caps: CapSet,
    state: State,
    version: Option<ProtocolVersion>,
    peer: Option<PeerInfo>,
    pub(crate) next_id: i64,
    pending: BTreeMap<i64, Pending>,
    inbound: BTreeMap<RequestId, Inbound>,
    recently_cancelled: VecDeque<RequestId>,
    batches: BTreeMap<u64, Batch>,
    next_batch: u64,
    out: VecDeque<Outgoing>,
    events: VecDeque<Event>,
    decoder: NdjsonDecoder,
    closed_emitted: bool,
    /// When a graceful close gives up on what is still in flight ([`Config::close_timeout`]).
    close_deadline: Option<Instant>,
    /// Why this side may not send requests (an HTTP session whose transport cannot carry the
    /// peer's answer back), if it may not.
    pub(crate) requests_refused: Option<&'static str>,
    /// The handshake is running again ([`Session::reinitialize`]).
    reinitializing: bool,
    /// `server/discover` is out: the stateless version asked for, whether the handshake
    /// follows a refusal, and the era's `_meta` entries.
    discovery: Option<(ProtocolVersion, bool, Vec<u8>)>,
    /// `server/discover` was asked again at a version the server named (once).
    discover_retried: bool,
    /// A client in the stateless era: the `_meta` entries every request carries.
    era_meta: Option<Box<[u8]>>,
    /// A server's open `subscriptions/listen` streams, by request id (bounded by
    /// [`Config::max_listeners`]).
    listeners: BTreeMap<RequestId, Listener>,
    /// A client in the stateless era: the `x-mcp-header` annotations of the tools listed so
    /// far, by tool (bounded by [`MAX_ANNOTATED_TOOLS`]).
    param_headers: alloc::collections::BTreeMap<String, Box<[crate::schema::tools::ParamHeader]>>,
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
            close_deadline: None,
            requests_refused: None,
            reinitializing: false,
            discovery: None,
            discover_retried: false,
            param_headers: alloc::collections::BTreeMap::new(),
            era_meta: None,
            listeners: BTreeMap::new(),
        }
    }

    /// Frees the room its queues and tables keep once empty (an idle session, kept by the
    /// thousands, holds only what it needs).
    #[cfg(feature = "http")]
    pub(crate) fn shed(&mut self) {
        if self.events.is_empty() {
            self.events = VecDeque::new();
        }
        if self.out.is_empty() {
            self.out = VecDeque::new();
        }
        if self.recently_cancelled.is_empty() {
            self.recently_cancelled = VecDeque::new();
        }
        if self.pending.is_empty() {
            self.pending = BTreeMap::new();
        }
        if self.inbound.is_empty() {
            self.inbound = BTreeMap::new();
        }
        if self.batches.is_empty() {
            self.batches = BTreeMap::new();
        }
        if self.listeners.is_empty() {
            self.listeners = BTreeMap::new();
        }
    }

    // --------------------------------------------------------------- accessors

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

    /// Whether our request `id` still awaits its outcome.
    pub fn is_awaiting(&self, id: &RequestId) -> bool {
        matches!(id, RequestId::Number(n) if self.pending.contains_key(n))
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
        self.handle_parsed(now, bytes.len(), jsonrpc::parse(bytes));
    }

    /// [`handle_message`](Self::handle_message) of a message of `len` bytes that the caller
    /// has parsed already (the HTTP endpoint, which reads every POST body to classify it):
    /// a large message is parsed once, not twice.
    pub(crate) fn handle_parsed(&mut self, now: Instant, len: usize, parsed: Parsed<'_>) {
        if self.state == State::Closed {
            return;
        }
        if len > self.config.max_message_size {
            self.reject_oversized(len, self.config.max_message_size);
            return;
        }
        match parsed {
            Parsed::Single(Ok(env)) => self.on_envelope(now, env, None),
            Parsed::Single(Err(rej)) => self.on_rejected(now, rej, None),
            Parsed::Batch(items) => self.on_batch(now, items),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    // ----------------------------------------------------------------- outputs

    /// How many events [`poll_event`](Self::poll_event) has ready now. A driver that hands
    /// events out in slices (to let the work they start overlap with the rest) reads no more
    /// input while some are waiting, so the queue stays bounded by one read.
    pub fn events_ready(&self) -> usize {
        self.events.len()
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

    // --------------------------------------------------------------- receiving

    fn reject_oversized(&mut self, len: usize, max: usize) {
        let e = Error::new(
            ErrorKind::LimitExceeded,
            alloc::format!("message of {len}+ bytes exceeds the limit of {max} bytes"),
        );
        self.queue_error(None, None, &e);
        self.events.push_back(Event::InvalidMessage(e));
    }

    fn on_rejected(&mut self, now: Instant, rej: Rejected, batch: Option<u64>) {
        if rej.answer {
            if self.state != State::Closed {
                self.queue_error(batch, rej.id, &rej.error);
            }
            self.events.push_back(Event::InvalidMessage(rej.error));
            return;
        }
        // An unreadable answer (a response or error response whose id could be read, e.g.
        // `"error":"oops"`) to one of our requests: its waiter learns at once, instead of
        // waiting for its timeout.
        if let Some(RequestId::Number(n)) = rej.id
            && self.pending.contains_key(&n)
        {
            let e = Error::new(
                ErrorKind::ProtocolInvalid,
                alloc::format!("malformed reply from the peer: {}", rej.error.message()),
            );
            self.on_response(now, RequestId::Number(n), Err(e));
        }
        // A reply that failed the request starting the session ended it: `Event::Closed`
        // stays the last event.
        if !self.closed_emitted {
            self.events.push_back(Event::InvalidMessage(rej.error));
        }
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
        // Two requests with one id cannot both be answered (the answers would be
        // indistinguishable): the batch is refused as a whole, with the id named, as the HTTP
        // endpoint refuses such a POST. One pass over an ordered set: n log n for n ids.
        let ids = items.iter().filter_map(|item| match item {
            Ok(Envelope::Request { id, .. }) => Some(id),
            _ => None,
        });
        if let Some(id) = crate::id::first_repeated(ids) {
            let e = Error::invalid_request(alloc::format!("duplicate request id {id} in batch"));
            self.queue_error(None, Some(id.clone()), &e);
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
                Err(rej) => self.on_rejected(now, rej, Some(b)),
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
}
