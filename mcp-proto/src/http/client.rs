//! The client half of Streamable HTTP and of the legacy HTTP+SSE transport, without IO.
//!
//! A [`ClientTransport`] turns what a client [`Session`](crate::session::Session) sends into
//! HTTP requests to make, and what the server answers into messages for the session. It
//! decides, and a driver (hyper, `fetch`, …) only moves bytes:
//!
//! - one POST per outgoing message (`Accept: application/json, text/event-stream`), with
//!   `Mcp-Session-Id` and `MCP-Protocol-Version` once known; the handshake in order, everything
//!   else concurrently; the requests that follow `notifications/initialized` wait (boundedly)
//!   for the standalone GET stream to attach, so that what the server sends on it about them
//!   is not lost;
//! - how to read each reply ([`ReadAs`]): a JSON body, an SSE stream, or nothing (202, the
//!   legacy transport's acknowledgements);
//! - the standalone GET stream, kept open across breaks;
//! - resumption of a broken (or server-closed) SSE stream with `Last-Event-ID`, after the
//!   server's `retry` or a doubling backoff, until the request's response arrived;
//! - re-initialisation after a 404 to a request carrying the session id: the transport asks the
//!   session to run its handshake again ([`Delivery::Reinitialize`]) and re-sends the messages
//!   the server refused once the new session is up;
//! - DELETE on close;
//! - the legacy transport (GET the SSE endpoint, wait for its `endpoint` event, POST there) and
//!   the backwards-compatible probe ([`ClientMode::Auto`]: a 400, 404 or 405 to the first
//!   `initialize` POST opens the URL as a legacy SSE endpoint).
//!
//! It parses no JSON-RPC: each JSON body or SSE `message` event is handed to the session
//! whole ([`Delivery::Message`]), where it is parsed once. Where it must know whether a request
//! still awaits its response (an SSE stream ended), the driver asks the session
//! ([`Session::is_awaiting`](crate::session::Session::is_awaiting)) and passes the answer in.
//!
//! ```
//! use mcp_proto::http::client::{Action, ClientConfig, ClientTransport, Outgoing, ReadAs};
//! use mcp_proto::{Instant, RequestId};
//!
//! let mut t = ClientTransport::new(ClientConfig::new("http://localhost:8080/mcp".parse().unwrap()));
//! let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
//! t.send(Instant::ZERO, Outgoing::Initialize(RequestId::Number(1)), init.to_vec().into());
//! let Some(Action::Send { exchange, request }) = t.poll_action() else { unreachable!() };
//! assert_eq!(request.method(), "POST");
//! assert_eq!(request.headers()["accept"], "application/json, text/event-stream");
//! let reply = http::Response::builder()
//!     .header("content-type", "text/event-stream")
//!     .header("mcp-session-id", "abc")
//!     .body(())
//!     .unwrap();
//! assert_eq!(t.handle_head(Instant::ZERO, exchange, reply.status(), reply.headers()), ReadAs::Sse);
//! assert_eq!(t.session_id(), Some("abc"));
//! ```

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use ::http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use ::http::{Method, Request, StatusCode, Uri};
use bytes::Bytes;

use super::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, single};
use crate::codec::sse::SseDecoder;
use crate::schema::tools::ParamHeader;
use crate::{Duration, Error, ErrorKind, Instant, RequestId};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
/// How much of an error body is quoted in an error message.
pub const ERROR_BODY_QUOTE: usize = 512;
/// Largest error body worth reading (only its start is quoted).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Which HTTP transport to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientMode {
    /// Streamable HTTP (2025-03-26 and later): the URL is the MCP endpoint.
    Streamable,
    /// The legacy HTTP+SSE transport (2024-11-05): the URL is the SSE endpoint, which names the
    /// POST endpoint in its first `endpoint` event.
    LegacySse,
    /// The backwards-compatible probe: `initialize` is POSTed to the URL; a 400, 404 or 405
    /// opens the URL as a legacy SSE endpoint instead.
    Auto,
}

/// Settings of a [`ClientTransport`].
#[derive(Clone, Debug)]
pub struct ClientConfig {
    url: Uri,
    mode: ClientMode,
    reinitialize: bool,
    standalone_stream: bool,
    standalone_wait: Duration,
    max_reconnects: u32,
    reconnect_delay: Duration,
    max_reconnect_delay: Duration,
    max_message_size: usize,
}

impl ClientConfig {
    /// Streamable HTTP to `url` (absolute), with re-initialisation on 404, the standalone GET
    /// stream (requests wait up to 5 s for it to attach), 5 reconnection attempts per broken
    /// SSE stream from 1 s (or the server's `retry`) doubling up to 30 s, and 16 MiB messages.
    pub fn new(url: Uri) -> Self {
        ClientConfig {
            url,
            mode: ClientMode::Streamable,
            reinitialize: true,
            standalone_stream: true,
            standalone_wait: Duration::from_secs(5),
            max_reconnects: 5,
            reconnect_delay: Duration::from_millis(1000),
            max_reconnect_delay: Duration::from_secs(30),
            max_message_size: 16 * 1024 * 1024,
        }
    }

    /// The same settings for another URL.
    pub fn with_url(mut self, url: Uri) -> Self {
        self.url = url;
        self
    }

    /// The transport to speak (default [`ClientMode::Streamable`]).
    pub fn mode(mut self, mode: ClientMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether a 404 to a request carrying the session id starts a new session (default) or
    /// fails the transport.
    pub fn reinitialize(mut self, enabled: bool) -> Self {
        self.reinitialize = enabled;
        self
    }

    /// Whether the standalone GET stream is opened after the handshake (default on).
    pub fn standalone_stream(mut self, enabled: bool) -> Self {
        self.standalone_stream = enabled;
        self
    }

    /// How long messages after the handshake wait for the standalone stream's answer.
    pub fn standalone_wait(mut self, wait: Duration) -> Self {
        self.standalone_wait = wait;
        self
    }

    /// Reconnection attempts of one broken SSE stream (the count restarts whenever a
    /// reconnection delivers events).
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// The first reconnection delay without a server `retry`, and the cap of the doubling.
    pub fn reconnect_delay(mut self, first: Duration, max: Duration) -> Self {
        self.reconnect_delay = first;
        self.max_reconnect_delay = max;
        self
    }

    /// Largest message: a JSON body or one SSE event.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// The largest message accepted.
    pub fn message_limit(&self) -> usize {
        self.max_message_size
    }

    /// The endpoint (Streamable HTTP) or SSE (legacy) URL.
    pub fn url(&self) -> &Uri {
        &self.url
    }
}

/// What an outgoing message is, as far as the transport cares (from the session's
/// [`Transmit`](crate::session::Transmit)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outgoing {
    /// The `initialize` request.
    Initialize(RequestId),
    /// `notifications/initialized`.
    Initialized,
    /// Any other request.
    Request(RequestId),
    /// `notifications/cancelled` for one of our requests.
    Cancelled(RequestId),
    /// Any other notification, a response or a batch of responses.
    Other,
}

/// One HTTP exchange of the transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExchangeId(pub u64);

/// An HTTP request to make.
pub type HttpRequest = Request<Bytes>;

/// What the driver must do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Action {
    /// Send `request` (an absolute URI; add `Host` and any headers of your own) and report its
    /// answer with [`ClientTransport::handle_head`], then its body as [`ReadAs`] says.
    Send {
        /// The exchange, for the calls that report on it.
        exchange: ExchangeId,
        /// The request (boxed: a request head is large beside an exchange id).
        request: alloc::boxed::Box<HttpRequest>,
    },
    /// Stop the exchange (a cancelled request, a superseded stream, the transport closing);
    /// report nothing more about it.
    Abort(ExchangeId),
}

/// How to read the body of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadAs {
    /// Read it whole (at most [`ClientTransport::body_limit`] bytes) and pass it to
    /// [`ClientTransport::handle_body`].
    Whole,
    /// Pass its chunks to [`ClientTransport::handle_data`] as they come, then call
    /// [`ClientTransport::handle_end`].
    Sse,
    /// Read and drop it (so the connection can be reused); report nothing more.
    Discard,
}

/// What the session must be told.
#[derive(Debug)]
#[non_exhaustive]
pub enum Delivery {
    /// A message (a JSON body or an SSE event's data) for `Session::handle_message`.
    Message(Vec<u8>),
    /// One of our requests failed at the HTTP level: `Session::fail_request`.
    Failed {
        /// The request.
        id: RequestId,
        /// Why.
        error: Error,
    },
    /// The server lost the session: run the handshake again (`Session::reinitialize`).
    Reinitialize,
    /// The transport failed for good: `Session::handle_closed` with the error.
    Closed(Error),
}

impl Delivery {
    /// Tells `session` what this delivery says, as each variant describes (a failed
    /// `reinitialize` closes the session with its error): the one way a driver applies the
    /// transport's deliveries.
    pub fn apply(self, session: &mut crate::session::Session, now: Instant) {
        match self {
            Delivery::Message(m) => session.handle_message(now, &m),
            Delivery::Failed { id, error } => session.fail_request(now, &id, error),
            Delivery::Reinitialize => {
                if let Err(e) = session.reinitialize(now) {
                    session.handle_closed(now, Some(e));
                }
            }
            Delivery::Closed(e) => session.handle_closed(now, Some(e)),
        }
    }
}

#[derive(Debug)]
enum Purpose {
    /// The `initialize` POST (to the URL, or to the legacy endpoint).
    Initialize { id: RequestId, legacy: bool },
    /// A message POST; `id` when it is a request, whose response is awaited.
    Post {
        id: Option<RequestId>,
        kind: Outgoing,
        body: Bytes,
        session: Option<String>,
        /// A request of the stateless era: an error reply's JSON-RPC body goes to the session.
        stateless: bool,
    },
    /// A GET resuming the stream of request `id`.
    Resume { id: RequestId },
    /// The standalone GET stream of session generation `generation`.
    Standalone { generation: u64 },
    /// The legacy transport's SSE stream.
    LegacyStream,
    /// The DELETE of the session.
    Delete,
}

#[derive(Debug)]
struct Exchange {
    purpose: Purpose,
    /// Set when the answer was not a success: the body is read for the error message.
    refused: Option<StatusCode>,
    decoder: Option<SseDecoder>,
    /// Events seen on this SSE body.
    progressed: bool,
}

/// Resumption state of a request's SSE stream (or the standalone stream).
#[derive(Debug, Clone, Default)]
struct Resumption {
    last_event_id: Option<String>,
    retry: Option<u64>,
    attempts: u32,
}

#[derive(Debug)]
enum Timer {
    Resume(RequestId),
    Standalone(u64),
    /// The wait for the standalone stream is over.
    StandaloneWait(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Nothing sent yet.
    Idle,
    /// Legacy: waiting for the `endpoint` event (`initialize` is held).
    AwaitingEndpoint,
    /// `initialize` sent.
    Initializing,
    /// Held messages wait for the standalone stream (or for the wait to end).
    AwaitingStandalone,
    /// Normal operation.
    Ready,
    /// The server lost the session; the session runs its handshake again.
    Reinitializing,
    /// Closing: the DELETE (if any) is on its way.
    Closing,
    /// Done.
    Closed,
}

/// The client side of the HTTP transports, without IO.
#[derive(Debug)]
pub struct ClientTransport {
    config: ClientConfig,
    phase: Phase,
    legacy: bool,
    /// Where messages are POSTed (the URL, or the legacy endpoint).
    post: Uri,
    session_id: Option<String>,
    protocol_version: Option<String>,
    /// The `initialize` message, for the legacy endpoint once known.
    init: Option<(RequestId, Bytes)>,
    /// Bumped by each new session: older standalone streams stop.
    generation: u64,
    next_exchange: u64,
    exchanges: BTreeMap<ExchangeId, Exchange>,
    /// Requests whose SSE stream may need resuming, by request id.
    resumptions: BTreeMap<RequestId, Resumption>,
    standalone: Resumption,
    timers: Vec<(Instant, Timer)>,
    /// Messages waiting for the standalone stream or for re-initialisation.
    held: VecDeque<(Outgoing, Bytes)>,
    actions: VecDeque<Action>,
    deliveries: VecDeque<Delivery>,
}

impl ClientTransport {
    /// A transport with nothing sent yet.
    pub fn new(config: ClientConfig) -> Self {
        let post = config.url.clone();
        let legacy = config.mode == ClientMode::LegacySse;
        ClientTransport {
            config,
            phase: Phase::Idle,
            legacy,
            post,
            session_id: None,
            protocol_version: None,
            init: None,
            generation: 0,
            next_exchange: 1,
            exchanges: BTreeMap::new(),
            resumptions: BTreeMap::new(),
            standalone: Resumption::default(),
            timers: Vec::new(),
            held: VecDeque::new(),
            actions: VecDeque::new(),
            deliveries: VecDeque::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The session id the server assigned, once it did.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Whether the legacy HTTP+SSE transport is in use (chosen, or found by the probe).
    pub fn is_legacy(&self) -> bool {
        self.legacy
    }

    /// The bound of a body read with [`ReadAs::Whole`] for `exchange`.
    pub fn body_limit(&self, exchange: ExchangeId) -> usize {
        match self.exchanges.get(&exchange) {
            Some(ex) if ex.refused.is_some() => MAX_ERROR_BODY,
            _ => self.config.max_message_size,
        }
    }

    /// The negotiated protocol version, sent as `MCP-Protocol-Version` from now on (call it
    /// when the session reports the handshake done).
    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_owned());
    }

    /// Whether the transport has finished (closed, the DELETE answered or given up).
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    // ------------------------------------------------------------------ outgoing

    /// An outgoing message of the session (`body` is the whole JSON-RPC message).
    pub fn send(&mut self, _now: Instant, kind: Outgoing, body: Bytes) {
        match self.phase {
            Phase::Closing | Phase::Closed => return,
            Phase::AwaitingStandalone | Phase::Reinitializing
                if !matches!(kind, Outgoing::Initialize(_) | Outgoing::Initialized) =>
            {
                if let Outgoing::Cancelled(id) = &kind {
                    self.stop_request(id);
                }
                self.held.push_back((kind, body));
                return;
            }
            _ => {}
        }
        match kind {
            Outgoing::Initialize(id) => {
                self.init = Some((id.clone(), body.clone()));
                if self.legacy {
                    if self.phase == Phase::Idle {
                        self.phase = Phase::AwaitingEndpoint;
                        let uri = self.config.url.clone();
                        self.start(Purpose::LegacyStream, Method::GET, uri, Bytes::new());
                    }
                } else {
                    if self.phase != Phase::Reinitializing {
                        self.phase = Phase::Initializing;
                    }
                    let uri = self.post.clone();
                    self.start(
                        Purpose::Initialize { id, legacy: false },
                        Method::POST,
                        uri,
                        body,
                    );
                }
            }
            Outgoing::Initialized => {
                // Nothing else goes out before the server acknowledged it (it must see it
                // first), then the standalone stream opens (see `open_standalone`).
                self.post_message(Outgoing::Initialized, body);
                self.phase = Phase::AwaitingStandalone;
            }
            kind => {
                if let Outgoing::Cancelled(id) = &kind {
                    self.stop_request(id);
                }
                self.post_message(kind, body);
            }
        }
    }

    /// Closes: in-flight exchanges stop and the session is DELETEd (Streamable HTTP, when the
    /// server gave a session id). [`is_closed`](Self::is_closed) once that is answered.
    pub fn close(&mut self, _now: Instant) {
        if matches!(self.phase, Phase::Closing | Phase::Closed) {
            return;
        }
        self.abort_all();
        self.held.clear();
        self.timers.clear();
        self.resumptions.clear();
        match (&self.session_id, self.legacy) {
            (Some(_), false) => {
                self.phase = Phase::Closing;
                let uri = self.config.url.clone();
                self.start(Purpose::Delete, Method::DELETE, uri, Bytes::new());
            }
            _ => self.phase = Phase::Closed,
        }
    }

    // ------------------------------------------------------------------ incoming

    /// The head of the answer to `exchange` arrived. Says how to read its body.
    pub fn handle_head(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> ReadAs {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return ReadAs::Discard;
        };
        let sse = single(headers, &CONTENT_TYPE)
            .is_some_and(|c| c.to_ascii_lowercase().starts_with(EVENT_STREAM));
        let max = self.config.max_message_size;
        let refuse = |ex: &mut Exchange| {
            ex.refused = Some(status);
            ReadAs::Whole
        };
        match &ex.purpose {
            Purpose::Initialize { id, legacy } => {
                if !status.is_success() {
                    if self.config.mode == ClientMode::Auto
                        && !*legacy
                        && matches!(status.as_u16(), 400 | 404 | 405)
                    {
                        self.exchanges.remove(&exchange);
                        self.start_legacy();
                        return ReadAs::Discard;
                    }
                    return refuse(ex);
                }
                if *legacy {
                    self.exchanges.remove(&exchange);
                    return ReadAs::Discard;
                }
                if let Some(sid) = single(headers, &MCP_SESSION_ID) {
                    self.session_id = Some(sid.to_owned());
                }
                let id = id.clone();
                self.expect_reply(exchange, id, status, sse, max)
            }
            Purpose::Post {
                kind: Outgoing::Initialized,
                ..
            } => {
                self.exchanges.remove(&exchange);
                self.open_standalone(now);
                ReadAs::Discard
            }
            Purpose::Post {
                id: Some(_),
                stateless: true,
                ..
            } if !status.is_success() => {
                let json = single(headers, &CONTENT_TYPE)
                    .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
                if json {
                    // The revision's errors (-32022, -32020, …) come as a JSON-RPC error body.
                    return ReadAs::Whole;
                }
                refuse(ex)
            }
            Purpose::Post { id, session, .. } => {
                if status == StatusCode::NOT_FOUND && !self.legacy && session.is_some() {
                    let Some(Exchange {
                        purpose:
                            Purpose::Post {
                                kind,
                                body,
                                session,
                                ..
                            },
                        ..
                    }) = self.exchanges.remove(&exchange)
                    else {
                        return ReadAs::Discard;
                    };
                    self.session_lost(now, session, kind, body);
                    return ReadAs::Discard;
                }
                if !status.is_success() {
                    return if id.is_some() {
                        refuse(ex)
                    } else {
                        self.exchanges.remove(&exchange);
                        ReadAs::Discard
                    };
                }
                match id.clone() {
                    Some(id) if !self.legacy => self.expect_reply(exchange, id, status, sse, max),
                    _ => {
                        // Legacy servers answer on the SSE stream; notifications get 202.
                        self.exchanges.remove(&exchange);
                        ReadAs::Discard
                    }
                }
            }
            Purpose::Resume { id } => {
                if status.is_success() && sse {
                    ex.decoder = Some(SseDecoder::new(max));
                    return ReadAs::Sse;
                }
                let id = id.clone();
                self.exchanges.remove(&exchange);
                self.resume_failed(now, id);
                ReadAs::Discard
            }
            Purpose::Standalone { generation } => {
                let generation = *generation;
                self.standalone_answered(generation);
                if status.is_success() && sse {
                    ex_decoder(&mut self.exchanges, exchange, max);
                    return ReadAs::Sse;
                }
                // 405: the server offers no stream; 404: the session is gone (the next POST
                // finds out and starts a new one); anything else: not worth retrying.
                self.exchanges.remove(&exchange);
                ReadAs::Discard
            }
            Purpose::LegacyStream => {
                if status.is_success() && sse {
                    ex.decoder = Some(SseDecoder::new(max));
                    return ReadAs::Sse;
                }
                if status.is_success() {
                    let found = single(headers, &CONTENT_TYPE).unwrap_or("no content type");
                    let e = transport_error(format!(
                        "GET {}: expected an SSE stream (text/event-stream), got {found}",
                        self.config.url
                    ));
                    self.exchanges.remove(&exchange);
                    self.fail_init(e);
                    return ReadAs::Discard;
                }
                refuse(ex)
            }
            Purpose::Delete => {
                self.exchanges.remove(&exchange);
                self.maybe_closed();
                ReadAs::Discard
            }
        }
    }

    /// A chunk of an SSE body ([`ReadAs::Sse`]).
    pub fn handle_data(&mut self, now: Instant, exchange: ExchangeId, data: &[u8]) {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        let Some(decoder) = ex.decoder.as_mut() else {
            return;
        };
        decoder.push(data);
        let mut endpoint = None;
        while let Some(event) = decoder.next_event() {
            let Ok(event) = event else {
                continue; // too large or not UTF-8: that event is dropped, the stream goes on
            };
            ex.progressed = true;
            match event.event.as_str() {
                "message" if !event.data.trim().is_empty() => self
                    .deliveries
                    .push_back(Delivery::Message(event.data.into_bytes())),
                "endpoint" if matches!(ex.purpose, Purpose::LegacyStream) => {
                    endpoint = Some(event.data);
                }
                _ => {}
            }
        }
        if let Some(data) = endpoint
            && self.phase == Phase::AwaitingEndpoint
        {
            self.legacy_endpoint(now, data.trim());
        }
    }

    /// The whole body of an answer read with [`ReadAs::Whole`]. Then call
    /// [`handle_end`](Self::handle_end) once the session has the message, so that a body that
    /// did not carry the awaited response fails its request.
    pub fn handle_body(&mut self, _now: Instant, exchange: ExchangeId, body: &[u8]) {
        let Some(ex) = self.exchanges.get(&exchange) else {
            return;
        };
        if let Some(status) = ex.refused {
            let Some(ex) = self.exchanges.remove(&exchange) else {
                return;
            };
            let error = status_error(&what(&ex.purpose, &self.post), status, body);
            match ex.purpose {
                Purpose::Initialize { .. } | Purpose::LegacyStream => self.fail_init(error),
                Purpose::Post { id: Some(id), .. } => {
                    self.deliveries.push_back(Delivery::Failed { id, error })
                }
                _ => {}
            }
            return;
        }
        if !body.iter().all(u8::is_ascii_whitespace) {
            self.deliveries.push_back(Delivery::Message(body.to_vec()));
        }
    }

    /// A body ended: `clean` when it ended normally rather than with an error.
    /// `awaiting` says whether a request still awaits its response
    /// ([`Session::is_awaiting`](crate::session::Session::is_awaiting)); call it after every
    /// message delivered so far reached the session.
    pub fn handle_end(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        clean: bool,
        awaiting: impl Fn(&RequestId) -> bool,
    ) {
        let Some(mut ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let (last, retry) = match &ex.decoder {
            Some(d) => (
                (!d.last_event_id().is_empty()).then(|| d.last_event_id().to_owned()),
                d.retry(),
            ),
            None => (None, None),
        };
        match core::mem::replace(&mut ex.purpose, Purpose::Delete) {
            purpose @ (Purpose::Initialize { .. } | Purpose::Post { id: Some(_), .. }) => {
                let (Purpose::Initialize { id, .. } | Purpose::Post { id: Some(id), .. }) =
                    &purpose
                else {
                    return;
                };
                if !awaiting(id) {
                    return;
                }
                if ex.decoder.is_none() {
                    // A whole body without the response: nothing to resume.
                    let error = transport_error(format!(
                        "{}: the reply carried no response to the request (a body that is not valid JSON, or not its response)",
                        what(&purpose, &self.post)
                    ));
                    self.fail_awaited(id.clone(), error);
                    return;
                }
                self.stream_broke(now, id.clone(), last, retry, ex.progressed, true);
            }
            Purpose::Resume { id } => {
                if !awaiting(&id) {
                    self.resumptions.remove(&id);
                    return;
                }
                self.stream_broke(now, id, last, retry, ex.progressed, false);
            }
            Purpose::Standalone { generation } => {
                let s = &mut self.standalone;
                if last.is_some() {
                    s.last_event_id = last;
                }
                s.retry = retry.or(s.retry);
                if ex.progressed || clean {
                    s.attempts = 0;
                }
                self.standalone_again(now, generation);
            }
            Purpose::LegacyStream => {
                if !matches!(self.phase, Phase::Closing | Phase::Closed) {
                    let e = Error::new(
                        ErrorKind::TransportClosed,
                        format!("the server closed the SSE stream {}", self.config.url),
                    );
                    if self.phase == Phase::AwaitingEndpoint {
                        self.fail_init(transport_error(format!(
                            "GET {}: the SSE stream ended before its endpoint event",
                            self.config.url
                        )));
                    } else {
                        self.deliveries.push_back(Delivery::Closed(e));
                        self.phase = Phase::Closed;
                    }
                }
            }
            Purpose::Post { id: None, .. } => {}
            Purpose::Delete => self.maybe_closed(),
        }
    }

    /// The exchange failed before or while reading its answer (no connection, a timeout, a
    /// broken body, a refused authorization): `error` says why.
    pub fn handle_failed(&mut self, now: Instant, exchange: ExchangeId, error: Error) {
        let Some(mut ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        match core::mem::replace(&mut ex.purpose, Purpose::Delete) {
            Purpose::Initialize { .. } => self.fail_init(error),
            Purpose::LegacyStream => {
                if self.phase == Phase::AwaitingEndpoint {
                    self.fail_init(error);
                } else if !matches!(self.phase, Phase::Closing | Phase::Closed) {
                    self.deliveries.push_back(Delivery::Closed(error));
                    self.phase = Phase::Closed;
                }
            }
            Purpose::Post { id: Some(id), .. } => {
                if ex.decoder.is_some() {
                    // The SSE stream broke: resume it if it can be.
                    let last = ex
                        .decoder
                        .as_ref()
                        .map(|d| d.last_event_id().to_owned())
                        .filter(|l| !l.is_empty());
                    let retry = ex.decoder.as_ref().and_then(SseDecoder::retry);
                    self.stream_broke(now, id, last, retry, ex.progressed, true);
                } else {
                    self.deliveries.push_back(Delivery::Failed { id, error });
                }
            }
            Purpose::Resume { id } => self.resume_failed(now, id),
            Purpose::Standalone { generation } => {
                self.standalone_answered(generation);
                self.standalone_again(now, generation);
            }
            Purpose::Post {
                kind: Outgoing::Initialized,
                ..
            } => self.open_standalone(now),
            Purpose::Post { id: None, .. } => {}
            Purpose::Delete => self.maybe_closed(),
        }
    }

    /// The next deadline at which [`handle_timeout`](Self::handle_timeout) must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().map(|(at, _)| *at).min()
    }

    /// Time has passed: due reconnections start.
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = Vec::new();
        self.timers.retain_mut(|(at, timer)| {
            if *at <= now {
                due.push(core::mem::replace(timer, Timer::Standalone(u64::MAX)));
                false
            } else {
                true
            }
        });
        for timer in due {
            match timer {
                Timer::Resume(id) => {
                    let Some(r) = self.resumptions.get(&id) else {
                        continue;
                    };
                    let mut request = self.request(Method::GET, self.post.clone(), Bytes::new());
                    if let Some(v) = r
                        .last_event_id
                        .as_deref()
                        .and_then(|l| HeaderValue::try_from(l).ok())
                    {
                        request.headers_mut().insert(LAST_EVENT_ID, v);
                    }
                    self.start_request(Purpose::Resume { id }, request);
                }
                Timer::Standalone(generation) => {
                    if generation == self.generation && self.phase_open() {
                        self.start_standalone();
                    }
                }
                Timer::StandaloneWait(generation) => self.standalone_answered(generation),
            }
        }
    }

    /// The next thing for the driver to do.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next thing for the session.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    // --------------------------------------------------------------- internals

    fn phase_open(&self) -> bool {
        !matches!(self.phase, Phase::Closing | Phase::Closed)
    }

    fn alloc(&mut self) -> ExchangeId {
        let id = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        id
    }

    /// A request with the transport's headers for the current session.
    fn request(&self, method: Method, uri: Uri, body: Bytes) -> HttpRequest {
        let mut request = Request::new(body);
        let headers = request.headers_mut();
        match method {
            Method::POST => {
                headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            Method::GET => {
                headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
            }
            _ => {}
        }
        if !self.legacy {
            if let Some(v) = self
                .session_id
                .as_deref()
                .and_then(|s| HeaderValue::try_from(s).ok())
            {
                headers.insert(MCP_SESSION_ID, v);
            }
            if let Some(v) = self
                .protocol_version
                .as_deref()
                .and_then(|s| HeaderValue::try_from(s).ok())
            {
                headers.insert(MCP_PROTOCOL_VERSION, v);
            }
        }
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        request
    }

    fn start(&mut self, purpose: Purpose, method: Method, uri: Uri, body: Bytes) {
        let request = self.request(method, uri, body);
        self.start_request(purpose, request);
    }

    fn start_request(&mut self, purpose: Purpose, request: HttpRequest) {
        let exchange = self.alloc();
        self.exchanges.insert(
            exchange,
            Exchange {
                purpose,
                refused: None,
                decoder: None,
                progressed: false,
            },
        );
        self.actions.push_back(Action::Send {
            exchange,
            request: alloc::boxed::Box::new(request),
        });
    }

    fn post_message(&mut self, kind: Outgoing, body: Bytes) {
        let id = match &kind {
            Outgoing::Request(id) => Some(id.clone()),
            _ => None,
        };
        let session = if self.legacy {
            None
        } else {
            self.session_id.clone()
        };
        let request = self.request(Method::POST, self.post.clone(), body.clone());
        self.start_request(
            Purpose::Post {
                id,
                kind,
                body,
                session,
                stateless: false,
            },
            request,
        );
    }

    /// A message of the stateless era (2026-07-28): one POST with `MCP-Protocol-Version`,
    /// `Mcp-Method` and, for `tools/call`, `prompts/get` and `resources/read`, `Mcp-Name`; no
    /// session. A request's error reply carries a JSON-RPC error, which goes to the session. A
    /// cancellation closes the request's reply instead of being sent; other notifications are
    /// not sent (none is used from client to server over HTTP in this revision).
    ///
    /// `annotations` gives a tool's `x-mcp-header` annotations
    /// ([`Session::param_headers`](crate::session::Session::param_headers)): a `tools/call`
    /// mirrors each annotated argument that is present and not `null` into `Mcp-Param-{name}`
    /// (SEP-2243), encoded as `Mcp-Name` is.
    pub fn send_stateless<'a>(
        &mut self,
        _now: Instant,
        kind: Outgoing,
        version: &str,
        method: &str,
        body: Bytes,
        annotations: impl Fn(&str) -> Option<&'a [ParamHeader]>,
    ) {
        if matches!(self.phase, Phase::Closing | Phase::Closed) {
            return;
        }
        let id = match kind {
            Outgoing::Request(ref id) => id.clone(),
            Outgoing::Cancelled(id) => {
                self.stop_request(&id);
                return;
            }
            _ => return,
        };
        let mut request = Request::new(body.clone());
        let headers = request.headers_mut();
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Ok(v) = HeaderValue::try_from(version) {
            headers.insert(MCP_PROTOCOL_VERSION, v);
        }
        headers.insert(MCP_METHOD, header_safe(method));
        if let Some(name) = named(method, &body) {
            headers.insert(MCP_NAME, header_safe(&name));
            if method == "tools/call"
                && let Some(annotated) = annotations(&name)
            {
                for (header, value) in param_values(annotated, &body) {
                    headers.insert(header, value);
                }
            }
        }
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.config.url.clone();
        self.start_request(
            Purpose::Post {
                id: Some(id),
                kind,
                body,
                session: None,
                stateless: true,
            },
            request,
        );
    }

    /// A reply to a POST awaiting `id`: JSON, SSE, or (202) nothing, which is an error.
    fn expect_reply(
        &mut self,
        exchange: ExchangeId,
        id: RequestId,
        status: StatusCode,
        sse: bool,
        max: usize,
    ) -> ReadAs {
        if sse {
            ex_decoder(&mut self.exchanges, exchange, max);
            return ReadAs::Sse;
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            let purpose = self.exchanges.remove(&exchange).map(|e| e.purpose);
            let what = purpose
                .as_ref()
                .map(|p| what(p, &self.post))
                .unwrap_or_default();
            self.fail_awaited(
                id,
                transport_error(format!(
                    "{what}: HTTP {status} with no response to the request"
                )),
            );
            return ReadAs::Discard;
        }
        ReadAs::Whole
    }

    /// A request's reply cannot carry its response: fail it (the handshake fails the session).
    fn fail_awaited(&mut self, id: RequestId, error: Error) {
        if self.init.as_ref().is_some_and(|(i, _)| *i == id) && self.phase != Phase::Ready {
            self.fail_init(error);
        } else {
            self.deliveries.push_back(Delivery::Failed { id, error });
        }
    }

    /// The handshake failed: its request fails, and with it the session.
    fn fail_init(&mut self, error: Error) {
        let Some((id, _)) = self.init.clone() else {
            self.deliveries.push_back(Delivery::Closed(error));
            return;
        };
        if self.phase == Phase::Reinitializing {
            let error = Error::new(
                error.kind(),
                format!(
                    "the server lost the HTTP session and re-initialisation failed: {}",
                    error.message()
                ),
            );
            self.fail_everything(error);
            return;
        }
        self.deliveries.push_back(Delivery::Failed { id, error });
    }

    /// Fails every awaited request, then the transport.
    fn fail_everything(&mut self, error: Error) {
        let mut ids: Vec<RequestId> = Vec::new();
        for ex in self.exchanges.values() {
            if let Purpose::Post { id: Some(id), .. } | Purpose::Resume { id } = &ex.purpose {
                ids.push(id.clone());
            }
        }
        for (kind, _) in &self.held {
            if let Outgoing::Request(id) = kind {
                ids.push(id.clone());
            }
        }
        ids.extend(self.resumptions.keys().cloned());
        ids.sort();
        ids.dedup();
        for id in ids {
            self.deliveries.push_back(Delivery::Failed {
                id,
                error: error.clone(),
            });
        }
        self.deliveries.push_back(Delivery::Closed(error));
        self.abort_all();
        self.held.clear();
        self.timers.clear();
        self.resumptions.clear();
        self.phase = Phase::Closed;
    }

    fn abort_all(&mut self) {
        for (exchange, _) in core::mem::take(&mut self.exchanges) {
            self.actions.push_back(Action::Abort(exchange));
        }
    }

    /// A cancelled request: its POST and any resumption stop.
    fn stop_request(&mut self, id: &RequestId) {
        let stopped: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, ex)| match &ex.purpose {
                Purpose::Post { id: Some(i), .. } | Purpose::Resume { id: i } => i == id,
                _ => false,
            })
            .map(|(e, _)| *e)
            .collect();
        for e in stopped {
            self.exchanges.remove(&e);
            self.actions.push_back(Action::Abort(e));
        }
        self.resumptions.remove(id);
        self.timers
            .retain(|(_, t)| !matches!(t, Timer::Resume(i) if i == id));
        self.held
            .retain(|(kind, _)| !matches!(kind, Outgoing::Request(i) if i == id));
    }

    /// The server answered 404 to a message sent with session id `lost`.
    fn session_lost(&mut self, _now: Instant, lost: Option<String>, kind: Outgoing, body: Bytes) {
        if self.phase == Phase::Reinitializing || self.session_id != lost {
            // Already re-initialising, or already done: send it again once ready / now.
            if self.phase == Phase::Reinitializing {
                self.held.push_back((kind, body));
            } else {
                self.post_message(kind, body);
            }
            return;
        }
        let what = format!("POST {}", self.post);
        if !self.config.reinitialize {
            self.fail_everything_with(
                kind,
                Error::new(
                    ErrorKind::TransportClosed,
                    format!(
                        "{what}: the server no longer knows the HTTP session (404 Not Found) and re-initialisation is disabled"
                    ),
                ),
            );
            return;
        }
        if self.init.is_none() {
            self.fail_everything_with(
                kind,
                transport_error("the session was lost during the handshake"),
            );
            return;
        }
        self.session_id = None;
        self.generation += 1;
        self.phase = Phase::Reinitializing;
        self.held.push_back((kind, body));
        // Streams of the lost session stop; their requests are re-sent or resumed no more.
        let stale: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, ex)| matches!(ex.purpose, Purpose::Standalone { .. }))
            .map(|(e, _)| *e)
            .collect();
        for e in stale {
            self.exchanges.remove(&e);
            self.actions.push_back(Action::Abort(e));
        }
        self.deliveries.push_back(Delivery::Reinitialize);
    }

    fn fail_everything_with(&mut self, kind: Outgoing, error: Error) {
        if let Outgoing::Request(id) = kind {
            self.deliveries.push_back(Delivery::Failed {
                id,
                error: error.clone(),
            });
        }
        self.fail_everything(error);
    }

    /// An SSE stream of request `id` ended before its response: resume from its last event,
    /// or fail the request.
    fn stream_broke(
        &mut self,
        now: Instant,
        id: RequestId,
        last: Option<String>,
        retry: Option<u64>,
        progressed: bool,
        first: bool,
    ) {
        let r = self.resumptions.entry(id.clone()).or_default();
        if last.is_some() {
            r.last_event_id = last;
        }
        r.retry = retry.or(r.retry);
        if progressed {
            r.attempts = 0;
        }
        if r.last_event_id.is_none() {
            self.resumptions.remove(&id);
            let error = transport_error(format!(
                "POST {}: the SSE stream {} before the response, and carried no event id to resume from",
                self.post,
                if first { "ended" } else { "broke" }
            ));
            self.fail_awaited(id, error);
            return;
        }
        self.schedule_resume(now, id);
    }

    fn resume_failed(&mut self, now: Instant, id: RequestId) {
        if self.resumptions.contains_key(&id) {
            self.schedule_resume(now, id);
        }
    }

    fn schedule_resume(&mut self, now: Instant, id: RequestId) {
        let Some(r) = self.resumptions.get_mut(&id) else {
            return;
        };
        r.attempts += 1;
        if r.attempts > self.config.max_reconnects {
            self.resumptions.remove(&id);
            let error = transport_error(format!(
                "POST {}: the SSE stream broke before the response; {} reconnection attempts failed",
                self.post, self.config.max_reconnects
            ));
            self.fail_awaited(id, error);
            return;
        }
        let delay = reconnect_delay(&self.config, r.retry, r.attempts);
        self.timers.push((now + delay, Timer::Resume(id)));
    }

    fn open_standalone(&mut self, now: Instant) {
        if self.legacy || !self.config.standalone_stream {
            self.release_held();
            return;
        }
        self.standalone = Resumption::default();
        self.phase = Phase::AwaitingStandalone;
        self.timers.push((
            now + self.config.standalone_wait,
            Timer::StandaloneWait(self.generation),
        ));
        self.start_standalone();
    }

    fn start_standalone(&mut self) {
        let mut request = self.request(Method::GET, self.config.url.clone(), Bytes::new());
        if let Some(v) = self
            .standalone
            .last_event_id
            .as_deref()
            .and_then(|l| HeaderValue::try_from(l).ok())
        {
            request.headers_mut().insert(LAST_EVENT_ID, v);
        }
        let generation = self.generation;
        self.start_request(Purpose::Standalone { generation }, request);
    }

    /// The standalone stream of `generation` has its first answer (or the wait ended).
    fn standalone_answered(&mut self, generation: u64) {
        if generation == self.generation && self.phase == Phase::AwaitingStandalone {
            self.timers
                .retain(|(_, t)| !matches!(t, Timer::StandaloneWait(_)));
            self.release_held();
        }
    }

    fn standalone_again(&mut self, now: Instant, generation: u64) {
        if generation != self.generation || !self.phase_open() {
            return;
        }
        self.standalone.attempts += 1;
        if self.standalone.attempts > self.config.max_reconnects {
            return;
        }
        let delay = reconnect_delay(
            &self.config,
            self.standalone.retry,
            self.standalone.attempts,
        );
        self.timers
            .push((now + delay, Timer::Standalone(generation)));
    }

    fn release_held(&mut self) {
        self.phase = Phase::Ready;
        let now = Instant::ZERO; // held messages need no clock
        while let Some((kind, body)) = self.held.pop_front() {
            self.send(now, kind, body);
        }
    }

    fn start_legacy(&mut self) {
        self.legacy = true;
        self.phase = Phase::AwaitingEndpoint;
        let uri = self.config.url.clone();
        self.start(Purpose::LegacyStream, Method::GET, uri, Bytes::new());
    }

    fn legacy_endpoint(&mut self, _now: Instant, data: &str) {
        match resolve_endpoint(&self.config.url, data) {
            Ok(uri) => {
                self.post = uri.clone();
                self.phase = Phase::Initializing;
                if let Some((id, body)) = self.init.clone() {
                    self.start(
                        Purpose::Initialize { id, legacy: true },
                        Method::POST,
                        uri,
                        body,
                    );
                }
            }
            Err(e) => self.fail_init(e),
        }
    }

    fn maybe_closed(&mut self) {
        if self.phase == Phase::Closing {
            self.phase = Phase::Closed;
        }
    }
}

fn ex_decoder(exchanges: &mut BTreeMap<ExchangeId, Exchange>, exchange: ExchangeId, max: usize) {
    if let Some(ex) = exchanges.get_mut(&exchange) {
        ex.decoder = Some(SseDecoder::new(max));
    }
}

fn transport_error(message: impl Into<alloc::borrow::Cow<'static, str>>) -> Error {
    Error::new(ErrorKind::TransportError, message)
}

/// What an exchange was, for error messages.
fn what(purpose: &Purpose, post: &Uri) -> String {
    match purpose {
        Purpose::Initialize { .. } | Purpose::Post { .. } => format!("POST {post}"),
        Purpose::Resume { .. } => "resuming the SSE stream".to_string(),
        Purpose::Standalone { .. } => "GET (standalone SSE stream)".to_string(),
        Purpose::LegacyStream => "GET (legacy SSE stream)".to_string(),
        Purpose::Delete => "DELETE".to_string(),
    }
}

/// The error kind an HTTP status stands for.
pub fn status_kind(status: StatusCode) -> ErrorKind {
    match status.as_u16() {
        401 | 403 => ErrorKind::Unauthorized,
        404 => ErrorKind::NotFound,
        408 | 504 => ErrorKind::Timeout,
        413 => ErrorKind::LimitExceeded,
        _ => ErrorKind::TransportError,
    }
}

/// The error of an unexpected status, quoting the start of the body.
pub fn status_error(what: &str, status: StatusCode, body: &[u8]) -> Error {
    let text = String::from_utf8_lossy(body);
    let quoted: String = text.trim().chars().take(ERROR_BODY_QUOTE).collect();
    let message = if quoted.is_empty() {
        format!("{what}: HTTP {status}")
    } else {
        format!("{what}: HTTP {status}: {quoted}")
    };
    Error::new(status_kind(status), message)
}

/// The wait before reconnection `attempt` (1-based): the server's `retry`, else the configured
/// delay, doubled per attempt and capped at the configured maximum (or at the base, when that
/// is longer).
fn reconnect_delay(config: &ClientConfig, retry: Option<u64>, attempt: u32) -> Duration {
    let base = retry
        .map(Duration::from_millis)
        .unwrap_or(config.reconnect_delay);
    let factor = 1u64 << attempt.saturating_sub(1).min(16);
    let cap = config.max_reconnect_delay.as_millis().max(base.as_millis());
    Duration::from_millis(base.as_millis().saturating_mul(factor).min(cap))
}

/// `Mcp-Method`.
const MCP_METHOD: ::http::header::HeaderName =
    ::http::header::HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
const MCP_NAME: ::http::header::HeaderName = ::http::header::HeaderName::from_static("mcp-name");

/// The tool or prompt name, or the resource URI, a request names (what `Mcp-Name` carries).
fn named(method: &str, message: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<alloc::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        uri: Option<alloc::borrow::Cow<'a, str>>,
        #[serde(rename = "taskId", borrow)]
        task_id: Option<alloc::borrow::Cow<'a, str>>,
    }
    let field = match method {
        "tools/call" | "prompts/get" => 0,
        "resources/read" => 1,
        "tasks/get" | "tasks/update" | "tasks/cancel" => 2,
        _ => return None,
    };
    let p = serde_json::from_slice::<Message<'_>>(message)
        .ok()?
        .params?;
    let v = match field {
        0 => p.name,
        1 => p.uri,
        _ => p.task_id,
    }?;
    Some(String::from(v.as_ref()))
}

/// The `Mcp-Param-*` headers of a `tools/call` body for its tool's annotations: each
/// annotated argument that is a string, boolean or integer (`null` and absent ones are left
/// out).
fn param_values(annotated: &[ParamHeader], message: &[u8]) -> Vec<(HeaderName, HeaderValue)> {
    #[derive(serde::Deserialize)]
    struct Message {
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    }
    let Some(args) = serde_json::from_slice::<Message>(message)
        .ok()
        .and_then(|m| m.params)
        .and_then(|p| p.arguments)
    else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(annotated.len());
    for a in annotated {
        let value = match args.get(&a.property) {
            Some(serde_json::Value::String(s)) => header_safe(s),
            Some(serde_json::Value::Bool(b)) => {
                HeaderValue::from_static(if *b { "true" } else { "false" })
            }
            Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => {
                match HeaderValue::try_from(alloc::format!("{n}")) {
                    Ok(v) => v,
                    Err(_) => continue,
                }
            }
            _ => continue,
        };
        if let Ok(name) = HeaderName::try_from(alloc::format!("mcp-param-{}", a.header)) {
            out.push((name, value));
        }
    }
    out
}

/// `value` as a header value: itself when it is visible ASCII without surrounding spaces, else
/// the `=?base64?…?=` form of its UTF-8 (also for a value that looks like that form).
fn header_safe(value: &str) -> HeaderValue {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?") && value.ends_with("?="));
    if plain && let Ok(v) = HeaderValue::try_from(value) {
        return v;
    }
    let mut out = String::from("=?base64?");
    base64_encode(value.as_bytes(), &mut out);
    out.push_str("?=");
    HeaderValue::try_from(out).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Standard base64 with padding.
fn base64_encode(data: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sym = |n: u32| char::from(*ALPHABET.get((n & 63) as usize).unwrap_or(&b'A'));
    for chunk in data.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(sym(n >> 18));
        out.push(sym(n >> 12));
        out.push(if chunk.len() > 1 { sym(n >> 6) } else { '=' });
        out.push(if chunk.len() > 2 { sym(n) } else { '=' });
    }
}

/// The POST endpoint named by a legacy `endpoint` event: resolved against the SSE URL, and on
/// its origin.
///
/// ```
/// use mcp_proto::http::client::resolve_endpoint;
/// let sse: http::Uri = "http://127.0.0.1:3000/mcp/sse".parse().unwrap();
/// let post = resolve_endpoint(&sse, "messages?session=1")?;
/// assert_eq!(post, "http://127.0.0.1:3000/mcp/messages?session=1");
/// assert!(resolve_endpoint(&sse, "http://elsewhere.example/messages").is_err());
/// # Ok::<(), mcp_proto::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::ProtocolInvalid`] (-32600) when `sse` is not absolute, `data` is not a URL or
/// is a network-path reference (`//host/…`), or names another origin than the SSE URL's.
pub fn resolve_endpoint(sse: &Uri, data: &str) -> Result<Uri, Error> {
    let invalid = |why: &str| {
        Error::new(
            ErrorKind::ProtocolInvalid,
            format!("the SSE endpoint event names an invalid URL {data:?}: {why}"),
        )
    };
    let (Some(scheme), Some(authority)) = (sse.scheme(), sse.authority()) else {
        return Err(invalid("the SSE URL is not absolute"));
    };
    if data.contains("://") {
        let uri: Uri = data.parse().map_err(|_| invalid("not a URL"))?;
        let same = uri.scheme() == Some(scheme)
            && uri
                .authority()
                .is_some_and(|a| a.as_str().eq_ignore_ascii_case(authority.as_str()));
        if !same {
            return Err(Error::new(
                ErrorKind::ProtocolInvalid,
                format!("the SSE endpoint event names {data}, not on the origin of {sse}"),
            ));
        }
        return Ok(uri);
    }
    if data.starts_with("//") {
        return Err(invalid("a network-path reference"));
    }
    let path = if data.starts_with('/') {
        data.to_owned()
    } else {
        // Relative to the SSE URL's directory.
        let base = sse.path();
        let dir = base.rfind('/').and_then(|i| base.get(..=i)).unwrap_or("/");
        format!("{dir}{data}")
    };
    Uri::builder()
        .scheme(scheme.clone())
        .authority(authority.clone())
        .path_and_query(path.as_str())
        .build()
        .map_err(|_| invalid("not a valid path"))
}

impl Outgoing {
    /// The transport's view of what [`Session::poll_transmit`](crate::session::Session::poll_transmit)
    /// wrote.
    pub fn of(transmit: &crate::session::Transmit) -> Outgoing {
        Outgoing::describe(transmit.kind, transmit.id.as_ref(), transmit.method)
    }

    /// The transport's view of a message the session wrote (`method` and `id` from the
    /// session's own description of it).
    pub fn describe(
        kind: crate::session::MessageKind,
        id: Option<&RequestId>,
        method: Option<&str>,
    ) -> Outgoing {
        use crate::session::MessageKind;
        match (kind, method, id) {
            (MessageKind::Request, Some("initialize"), Some(id)) => {
                Outgoing::Initialize(id.clone())
            }
            (MessageKind::Request, _, Some(id)) => Outgoing::Request(id.clone()),
            (MessageKind::Notification, Some("notifications/initialized"), _) => {
                Outgoing::Initialized
            }
            (MessageKind::Notification, Some("notifications/cancelled"), Some(id)) => {
                Outgoing::Cancelled(id.clone())
            }
            _ => Outgoing::Other,
        }
    }
}

#[cfg(test)]
mod tests;
