//! A checked client/server pair for tests, simulations and fuzzing (feature `testing`).
//!
//! [`Pair`] holds a client and a server [`Session`], the link between them (queues of byte
//! chunks you can inspect, deliver, split or drop by hand, or hand to a seeded hostile link
//! with [`LinkOptions`]), virtual time, and a [`Model`] of what each side's application was
//! told and did. The application acts through the pair's methods ([`Pair::send_request`],
//! [`Pair::respond`], …), which check each call's outcome against the model; every transmit
//! and every event is checked as it comes out of a session. A broken invariant panics with a
//! message naming the side (and the seed, when the pair has one, to replay the run).
//!
//! The invariants:
//!
//! - every transmit is exactly one well-formed JSON-RPC message (or batch) of the announced
//!   [`MessageKind`] and length; NDJSON-framed transmits end in a single newline and have
//!   none inside;
//! - request ids on the wire are unique per side and were allocated by that side
//!   (`initialize`/`start`/`send_request`, or by the client session itself for the start
//!   requests that follow the first: Auto's fallback `initialize`, a second
//!   `server/discover`);
//! - every application answer goes out once, with its request's id; a `result` the
//!   application never gave goes out only for an inbound `ping`, `initialize` or
//!   `server/discover`;
//! - the client's first exchange is the one its start asks for: `server/discover` for
//!   [`Discovery::Discover`] and for [`Discovery::Auto`] with a stateless version configured,
//!   `initialize` otherwise; `initialize` follows `server/discover` only in `Auto`, and never
//!   with `Discover`; `Event::Ready` names a version of the client's configuration, of the
//!   stateless era only when it asked `server/discover`, and [`Session::version`] agrees
//!   with it on both sides;
//! - every `server/discover`, and every request a client in the stateless era (2026-07-28)
//!   transmits, carries in `_meta` the protocol version (the negotiated one once ready) and
//!   the client's configured capabilities and info; in that era the client transmits no
//!   method its version lacks (`ping`, `logging/setLevel`, `resources/subscribe`,
//!   `notifications/initialized`, `notifications/roots/list_changed`, …); and on either side,
//!   once ready at a version, `send_request` / `notify` (unrelated to an inbound request) of a
//!   method that version lacks fail with [`ErrorKind::MethodNotFound`] (or a transport
//!   error: `TransportClosed`, `TransportError`);
//! - on a server serving the stateless era, a request naming a protocol version in its
//!   `_meta` (read as the session reads it) is of that era: when the version is one the
//!   server serves, its `Event::Request` carries that version in `era` and its result carries
//!   a string `resultType`; otherwise it is never handed out and is answered -32022 with
//!   `data.supported` (the server's versions, in order) and `data.requested` (the version
//!   asked); a request without one is handed out with no `era`;
//! - after `Event::Cancelled` for an inbound id, `respond`/`respond_error` to it fail and no
//!   response for that id is ever transmitted (until the peer uses the id again);
//! - every outbound request id gets at most one `Event::Response`, only for ids this side
//!   allocated, and by `Event::Closed` every one of them has had its outcome;
//! - progress seen for an outbound request is finite, strictly increases, and comes only
//!   for requests this side sent, before their outcome;
//! - `Event::Ready` and `Event::Closed` at most once per side, no event after `Closed`;
//!   `Event::Request` never for an id already open, `Event::Cancelled` only for an open one;
//! - after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`;
//! - `is_closed()` agrees with `Event::Closed`; a closed session has no deadline and nothing
//!   in flight; `inbound_in_flight`/`outbound_in_flight` agree with what the application was
//!   told;
//! - the application's calls succeed exactly when the model says they must: `initialize`
//!   / `start` only on a client and once, fresh ids from `send_request`, answers and progress only for
//!   open inbound requests (progress only with a token, finite and increasing), a non-object
//!   result refused without effect, `cancel` only for an unresolved own request and its
//!   outcome at once; failures carry the expected error kinds;
//! - at the end ([`Pair::settle_and_check`], [`Pair::check_settled`]) every request has had
//!   exactly one outcome, the client's handshake settled and every application answer was
//!   transmitted (unless the side closed); a simulation settles within its step cap;
//! - with [`Pair::strict`], a closed session transmits nothing.
//!
//! [`simulate`] runs one seeded simulation of a whole conversation over a hostile link in the
//! handshake era; [`simulate_eras`] runs it with the client and server speaking the eras an
//! [`Eras`] names (the stateless era, the handshake, or both), and also checks the negotiated
//! version against [`Eras::expected`].

#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::too_many_arguments
)]

mod rng;
mod sim;

pub use rng::Rng;
pub use sim::{Eras, STEP_CAP, Stats, Versions, simulate, simulate_eras};

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde_json::value::RawValue;

use crate::codec::ndjson::NdjsonDecoder;
use crate::jsonrpc::{self, Envelope, Parsed};
use crate::schema::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY};
use crate::session::{
    Config, Discovery, Event, Framing, MessageKind, RequestOptions, Session, State,
};
use crate::{Duration, Error, ErrorKind, Instant, ProtocolVersion, RequestId};

/// Index of the client in a [`Pair`]'s arrays.
pub const CLIENT: usize = 0;
/// Index of the server in a [`Pair`]'s arrays.
pub const SERVER: usize = 1;
const NAMES: [&str; 2] = ["client", "server"];

/// Marked application answers carry this key (results `{"harness-app":N,…}`, error messages
/// `harness-app N …`), so their transmits can be told from the session's own answers.
pub const APP_MARK: &str = "harness-app";

/// Raw JSON from a string.
///
/// # Panics
///
/// When `s` is not valid JSON.
pub fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).expect("valid JSON")
}

/// A client configuration with sampling, roots and elicitation.
pub fn client_config() -> Config {
    Config::new("test-client", "1.0").capabilities(raw(
        r#"{"sampling":{},"roots":{"listChanged":true},"elicitation":{}}"#,
    ))
}

/// A server configuration with tools, resources, prompts, logging and completions.
pub fn server_config() -> Config {
    Config::new("test-server", "1.0").capabilities(raw(
        r#"{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":{},"logging":{},"completions":{}}"#,
    ))
}

/// What the link does to the messages it carries, in per-mille chances per message. The
/// default is a perfect link: every transmit is one chunk, due at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// Chance a message is split into several chunks at random points (NDJSON only).
    pub split: u64,
    /// Each chunk is delayed by up to this much (stream order is kept).
    pub max_delay: Duration,
    /// Chance a garbage line (or fragment) goes out before a message.
    pub garbage: u64,
    /// Chance a message is lost.
    pub loss: u64,
    /// Chance a message is duplicated.
    pub dup: u64,
    /// Chance one bit of a message is flipped.
    pub corrupt: u64,
}

impl LinkOptions {
    /// A perfect link.
    pub const PERFECT: LinkOptions = LinkOptions {
        split: 0,
        max_delay: Duration::from_micros(0),
        garbage: 0,
        loss: 0,
        dup: 0,
        corrupt: 0,
    };
}

/// Bytes on the link, due at the receiver at `due`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// When the chunk may be delivered (see [`Pair::deliver_due`]).
    pub due: Instant,
    /// The bytes (with NDJSON a piece of the stream, otherwise one whole message).
    pub bytes: Vec<u8>,
}

/// Counters of what a run went through, so a test can prove it exercised the paths it checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// `Event::Response` with a result.
    pub results: u64,
    /// `Event::Response` failed with [`ErrorKind::Timeout`].
    pub timeouts: u64,
    /// `Event::Response` failed with [`ErrorKind::TransportClosed`].
    pub failed_by_close: u64,
    /// `Event::Cancelled`.
    pub cancellations: u64,
    /// `Event::Progress`.
    pub progress: u64,
    /// `Event::InvalidMessage`.
    pub invalid: u64,
    /// Events of any kind.
    pub events: u64,
    /// Results a server transmitted for requests of the stateless era (each with its
    /// `resultType`).
    pub stateless_results: u64,
    /// -32022 answers a server transmitted for requests naming a version it does not serve.
    pub version_refusals: u64,
}

impl Counters {
    /// Adds `other` to these counters.
    pub fn add(&mut self, other: &Counters) {
        self.results += other.results;
        self.timeouts += other.timeouts;
        self.failed_by_close += other.failed_by_close;
        self.cancellations += other.cancellations;
        self.progress += other.progress;
        self.invalid += other.invalid;
        self.events += other.events;
        self.stateless_results += other.stateless_results;
        self.version_refusals += other.version_refusals;
    }
}

/// What one side's application has seen, and what it did.
#[derive(Debug, Default)]
pub struct Model {
    /// Ids returned by `send_request`.
    pub sent: BTreeSet<i64>,
    /// The id returned by `initialize` or `start`: the request that starts the session
    /// (`initialize` or `server/discover`).
    pub init_id: Option<i64>,
    /// How the client started ([`Pair::initialize`] is [`Discovery::Initialize`]; for
    /// [`Pair::start`], `Auto` without a stateless version configured is too).
    pub start: Option<Discovery>,
    /// Start requests the client session sent on its own after the first (Auto's fallback
    /// `initialize`, `server/discover` asked again), as seen on the wire.
    pub start_ids: BTreeSet<i64>,
    /// A `server/discover` went on the wire from this side.
    pub discover_sent: bool,
    /// The version `Event::Ready` named.
    pub version: Option<ProtocolVersion>,
    /// The error `Event::Closed` carried (its kind), if it carried one.
    pub close_error: Option<ErrorKind>,
    /// A server's inbound requests not answered yet, by id, as their `_meta` made them
    /// (stateless era or not).
    pub arrivals: BTreeMap<RequestId, Arrival>,
    /// Ids that had their `Event::Response`.
    pub outcomes: BTreeSet<i64>,
    /// Last progress seen per outbound id.
    pub progress: BTreeMap<i64, f64>,
    /// Request ids seen on the wire from this side.
    pub transmitted_requests: BTreeSet<i64>,
    /// Inbound requests handed to the application and not answered: (id, has a progress token).
    pub open: Vec<(RequestId, bool)>,
    /// Last progress the application reported per open inbound id.
    pub reported: BTreeMap<RequestId, f64>,
    /// Inbound ids the peer cancelled (and did not use again since).
    pub cancelled: BTreeSet<RequestId>,
    /// Marked app answers not transmitted yet: mark → id.
    pub app_answers: BTreeMap<u64, RequestId>,
    /// Unmarked app answers not transmitted yet: id → (results, errors).
    pub raw_answers: BTreeMap<RequestId, (u32, u32)>,
    /// Inbound `ping`/`initialize` requests per id, which the session answers itself.
    pub session_answerable: BTreeMap<RequestId, u32>,
    /// `Event::Ready` seen.
    pub ready: bool,
    /// `Event::Closed` seen.
    pub closed: bool,
    /// What the run went through.
    pub counters: Counters,
}

impl Model {
    /// Outbound requests (not `initialize`) without their outcome yet.
    pub fn unresolved(&self) -> impl Iterator<Item = i64> + '_ {
        self.sent
            .iter()
            .copied()
            .filter(|id| !self.outcomes.contains(id))
    }

    /// Whether this side is in the stateless era (ready at a stateless version).
    pub fn stateless(&self) -> bool {
        self.version.is_some_and(ProtocolVersion::is_stateless)
    }

    /// The client's start (`initialize`, `server/discover`, the handshake that follows) is
    /// still pending.
    pub fn init_pending(&self) -> bool {
        self.init_id.is_some_and(|id| !self.outcomes.contains(&id)) && !self.ready && !self.closed
    }

    /// Where `id` is in [`open`](Model::open).
    pub fn open_index(&self, id: &RequestId) -> Option<usize> {
        self.open.iter().position(|(o, _)| o == id)
    }

    fn answers_pending(&self) -> bool {
        !self.app_answers.is_empty() || !self.raw_answers.is_empty()
    }
}

/// What a request reaching a server said about its era, as the session reads its `_meta`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// No protocol version in `_meta` (or a server without the stateless era): handshake era.
    Plain,
    /// A request of the stateless era naming this version.
    Stateless {
        /// The version named.
        requested: String,
        /// The version, when the server serves it.
        served: Option<ProtocolVersion>,
    },
    /// A `_meta` the session refuses before reading the version, a request arriving while
    /// the session closes, or an id that arrived again before its answer: not checked.
    Other,
}

/// How to choose an id for answering, cancelling, or addressing a hand-made message.
#[derive(Clone, Debug, PartialEq)]
pub enum Pick {
    /// The n-th (modulo) open request: inbound ones handed to the application, or outbound
    /// ones without their outcome.
    Open(u8),
    /// The n-th (modulo) inbound id the peer cancelled, or outbound id ever sent.
    Cancelled(u8),
    /// This number.
    Id(i64),
    /// This string.
    Str(String),
}

/// One step a driver (a fuzz target, a test) asks of a [`Pair`]; see [`Pair::apply`].
#[derive(Clone, Debug)]
pub enum Op {
    /// [`Pair::initialize`].
    Initialize(usize),
    /// [`Pair::start`].
    Start(usize),
    /// [`Pair::send_request`].
    Request {
        /// The side.
        side: usize,
        /// The method.
        method: String,
        /// Raw params (JSON text; invalid JSON is sent as absent).
        params: Option<String>,
        /// The options; `related_to` is taken from `related` instead.
        opts: RequestOptions,
        /// The inbound request this one is related to.
        related: Option<Pick>,
    },
    /// [`Pair::notify`].
    Notify {
        /// The side.
        side: usize,
        /// The method.
        method: String,
        /// Raw params (JSON text; invalid JSON is sent as absent).
        params: Option<String>,
        /// The inbound request this one is related to.
        related: Option<Pick>,
    },
    /// [`Pair::respond_marked`] to an inbound id.
    Respond {
        /// The side.
        side: usize,
        /// Which inbound id.
        pick: Pick,
        /// An extra JSON value in the result.
        payload: Option<String>,
    },
    /// [`Pair::respond_not_object`] to an inbound id.
    RespondNotObject {
        /// The side.
        side: usize,
        /// Which inbound id.
        pick: Pick,
    },
    /// [`Pair::respond_error_marked`] to an inbound id.
    RespondError {
        /// The side.
        side: usize,
        /// Which inbound id.
        pick: Pick,
        /// The error code.
        code: i64,
        /// The message.
        message: String,
        /// Raw `data` (JSON text).
        data: Option<String>,
    },
    /// [`Pair::report_progress`] on an inbound id.
    Progress {
        /// The side.
        side: usize,
        /// Which inbound id.
        pick: Pick,
        /// The progress.
        progress: f64,
        /// The total.
        total: Option<f64>,
        /// The message.
        message: Option<String>,
    },
    /// [`Pair::cancel`] an outbound id.
    Cancel {
        /// The side.
        side: usize,
        /// Which outbound id.
        pick: Pick,
        /// The reason.
        reason: Option<String>,
    },
    /// [`Pair::advance`].
    Advance(Duration),
    /// [`Pair::deliver`].
    Deliver {
        /// The sending side.
        from: usize,
        /// How many chunks.
        count: usize,
        /// Cut the last one after this many bytes.
        split: Option<usize>,
    },
    /// [`Pair::deliver_all`].
    DeliverAll,
    /// [`Pair::drop_chunks`].
    Drop {
        /// The sending side.
        from: usize,
        /// How many chunks.
        count: usize,
    },
    /// [`Pair::feed_message`] or [`Pair::feed_bytes`].
    Inject {
        /// The receiving side.
        side: usize,
        /// The bytes.
        bytes: Vec<u8>,
        /// As one message rather than stream bytes.
        as_message: bool,
    },
    /// [`Pair::close`].
    Close(usize),
    /// [`Pair::input_closed`].
    InputClosed(usize),
    /// [`Pair::closed`].
    Closed {
        /// The side.
        side: usize,
        /// With a transport error.
        error: bool,
    },
}

/// A side's name (and the seed of the run), for failure messages.
#[derive(Clone, Copy, Debug)]
pub struct Who {
    name: &'static str,
    seed: Option<u64>,
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seed {
            Some(seed) => write!(f, "{} [seed {seed}]", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// Two sessions, the link between them, virtual time, and the models of both applications.
pub struct Pair {
    /// Virtual time.
    pub now: Instant,
    /// The sessions, indexed by [`CLIENT`] and [`SERVER`]. Calling them directly bypasses
    /// the model: use the pair's methods, or [`Pair::session_mut`] for what they lack.
    pub sessions: [Session; 2],
    /// What each application saw and did.
    pub models: [Model; 2],
    /// Every event each side emitted (after it was checked), for tests to look at.
    pub events: [Vec<Event>; 2],
    /// Every message each side transmitted, as text without the trailing newline.
    pub log: Vec<(usize, String)>,
    /// Chunks sent by side `i`, not delivered yet.
    pub wire: [VecDeque<Chunk>; 2],
    /// What the link does to new transmits.
    pub link: LinkOptions,
    /// The generator the link (and a driver, if it likes) draws from.
    pub rng: Rng,
    /// The seed named in failure messages.
    pub seed: Option<u64>,
    /// Also check that a closed session transmits nothing.
    pub strict: bool,
    /// Keep [`events`](Pair::events) and [`log`](Pair::log) (on by default; long runs that
    /// never look at them may turn it off).
    pub record: bool,
    framing: [Framing; 2],
    /// Mirrors of each side's NDJSON input, to know which ids arrive in which message.
    mirror: [NdjsonDecoder; 2],
    max_message: [usize; 2],
    /// Side `i`'s output ended (no more transmits go on the link; see [`Pair::end_output`]).
    output_ended: [bool; 2],
    /// The peer of side `i` was told its input closed.
    eof_delivered: [bool; 2],
    /// Side `i`'s model no longer follows its session ([`Pair::session_mut`]).
    untracked: [bool; 2],
    last_due: [Instant; 2],
    next_mark: u64,
    buf: Vec<u8>,
}

impl Pair {
    /// A client and a server over a perfect link, at time 1 s.
    pub fn new(client: Config, server: Config) -> Self {
        let framing = [client.framing, server.framing];
        let max_message = [client.max_message_size, server.max_message_size];
        let now = Instant::from_micros(1_000_000);
        Pair {
            now,
            sessions: [Session::client(client), Session::server(server)],
            models: [Model::default(), Model::default()],
            events: [Vec::new(), Vec::new()],
            log: Vec::new(),
            wire: [VecDeque::new(), VecDeque::new()],
            link: LinkOptions::PERFECT,
            rng: Rng::new(0),
            seed: None,
            strict: false,
            record: true,
            framing,
            mirror: [
                NdjsonDecoder::new(max_message[0]),
                NdjsonDecoder::new(max_message[1]),
            ],
            max_message,
            output_ended: [false; 2],
            eof_delivered: [false; 2],
            untracked: [false; 2],
            last_due: [now; 2],
            next_mark: 0,
            buf: Vec::new(),
        }
    }

    /// A pair over a link with `options`, drawing from a generator seeded with `seed` (which
    /// failure messages name).
    pub fn seeded(client: Config, server: Config, seed: u64, options: LinkOptions) -> Self {
        let mut p = Pair::new(client, server);
        p.rng = Rng::new(seed);
        p.seed = Some(seed);
        p.link = options;
        p
    }

    /// [`client_config`] and [`server_config`] over a perfect link.
    pub fn default_pair() -> Self {
        Pair::new(client_config(), server_config())
    }

    /// The default pair after the handshake, with both `Event::Ready` taken off the logs.
    pub fn ready() -> Self {
        let mut p = Pair::default_pair();
        p.initialize(CLIENT).expect("initialize");
        p.deliver_all();
        for side in [CLIENT, SERVER] {
            assert!(
                matches!(p.events[side].first(), Some(Event::Ready { .. })),
                "{}: no Event::Ready after the handshake: {:?}",
                p.who(side),
                p.events[side]
            );
            p.events[side].remove(0);
        }
        p
    }

    /// The name of `side` for failure messages.
    pub fn who(&self, side: usize) -> Who {
        Who {
            name: NAMES[side],
            seed: self.seed,
        }
    }

    /// The client session.
    pub fn client(&self) -> &Session {
        &self.sessions[CLIENT]
    }

    /// The server session.
    pub fn server(&self) -> &Session {
        &self.sessions[SERVER]
    }

    /// Direct access to a session, for calls the pair does not wrap. The model of that side
    /// stops following what the application does: the checks that depend on it (allocated
    /// ids, answers, in-flight counts, settling) are off for that side from then on; the
    /// checks of transmits and events stay on.
    pub fn session_mut(&mut self, side: usize) -> &mut Session {
        self.untracked[side] = true;
        &mut self.sessions[side]
    }

    /// Takes the events `side` emitted so far (draining it first).
    pub fn take_events(&mut self, side: usize) -> Vec<Event> {
        self.drain();
        core::mem::take(&mut self.events[side])
    }

    /// Takes what `side` transmitted and is still on the link (draining it first), each
    /// message parsed as JSON. Those messages are not delivered.
    ///
    /// # Panics
    ///
    /// When a chunk is not one whole JSON message (a link that splits or injects garbage).
    pub fn take_sent(&mut self, side: usize) -> Vec<serde_json::Value> {
        self.drain();
        self.wire[side]
            .drain(..)
            .map(|c| serde_json::from_slice(&c.bytes).expect("a whole JSON message"))
            .collect()
    }

    /// Counters of both sides together.
    pub fn counters(&self) -> Counters {
        let mut c = self.models[CLIENT].counters;
        c.add(&self.models[SERVER].counters);
        c
    }

    // ------------------------------------------------------------------ draining

    /// Collects every transmit and event of both sides, checking each (transmits go on the
    /// link), then the consistency of each session with its model.
    pub fn drain(&mut self) {
        loop {
            let mut moved = false;
            for side in 0..2 {
                loop {
                    self.buf.clear();
                    let was_closed = self.sessions[side].is_closed();
                    let Some(t) = self.sessions[side].poll_transmit(&mut self.buf) else {
                        break;
                    };
                    if self.strict {
                        assert!(
                            !was_closed,
                            "{}: transmit after the session closed: {:?}",
                            self.who(side),
                            String::from_utf8_lossy(&self.buf)
                        );
                    }
                    moved = true;
                    assert_eq!(
                        t.len,
                        self.buf.len(),
                        "{}: Transmit.len is wrong",
                        self.who(side)
                    );
                    let bytes = core::mem::take(&mut self.buf);
                    self.check_transmit(side, &bytes, t.kind);
                    if self.record {
                        let text = String::from_utf8_lossy(&bytes);
                        self.log.push((side, text.trim_end().to_string()));
                    }
                    self.send(side, bytes);
                }
                while let Some(e) = self.sessions[side].poll_event() {
                    moved = true;
                    self.on_event(side, &e);
                    if self.record {
                        self.events[side].push(e);
                    }
                }
            }
            if !moved {
                break;
            }
        }
        for side in 0..2 {
            self.check_consistency(side);
        }
    }

    /// Puts one transmit of `from` on the link, as the link options say.
    fn send(&mut self, from: usize, mut msg: Vec<u8>) {
        if self.output_ended[from] {
            return;
        }
        let o = self.link;
        let ndjson = self.framing[from] == Framing::Ndjson;
        if self.rng.chance(o.garbage) {
            let g = garbage(&mut self.rng, ndjson);
            self.push_chunk(from, g);
        }
        if self.rng.chance(o.loss) {
            return;
        }
        if self.rng.chance(o.corrupt) && !msg.is_empty() {
            let i = self.rng.index(msg.len());
            msg[i] ^= 1 << self.rng.below(8);
        }
        let copies = if self.rng.chance(o.dup) { 2 } else { 1 };
        for _ in 0..copies {
            if ndjson && msg.len() > 1 && self.rng.chance(o.split) {
                let mut rest = &msg[..];
                while !rest.is_empty() {
                    let take = if self.rng.chance(500) {
                        rest.len()
                    } else {
                        1 + self.rng.index(rest.len())
                    };
                    let (chunk, tail) = rest.split_at(take);
                    self.push_chunk(from, chunk.to_vec());
                    rest = tail;
                }
            } else {
                self.push_chunk(from, msg.clone());
            }
        }
    }

    fn push_chunk(&mut self, from: usize, bytes: Vec<u8>) {
        let delay = self.rng.below(self.link.max_delay.as_micros());
        let due = (self.now + Duration::from_micros(delay)).max(self.last_due[from]);
        self.last_due[from] = due;
        self.wire[from].push_back(Chunk { due, bytes });
    }

    fn check_transmit(&mut self, side: usize, bytes: &[u8], kind: MessageKind) {
        let name = self.who(side);
        let body = match self.framing[side] {
            Framing::Ndjson => {
                let Some(body) = bytes.strip_suffix(b"\n") else {
                    panic!(
                        "{name}: NDJSON transmit without trailing newline: {:?}",
                        String::from_utf8_lossy(bytes)
                    )
                };
                assert!(
                    !body.contains(&b'\n'),
                    "{name}: NDJSON transmit with a raw newline inside: {:?}",
                    String::from_utf8_lossy(bytes)
                );
                body
            }
            _ => bytes,
        };
        let text = String::from_utf8_lossy(body);
        let items = match jsonrpc::parse(body) {
            Parsed::Single(Ok(env)) => {
                assert!(
                    kind != MessageKind::Batch,
                    "{name}: single message announced as batch: {text}"
                );
                alloc::vec![env]
            }
            Parsed::Batch(items) => {
                assert_eq!(
                    kind,
                    MessageKind::Batch,
                    "{name}: batch announced as {kind:?}: {text}"
                );
                items
                    .into_iter()
                    .map(|i| {
                        i.unwrap_or_else(|r| {
                            panic!("{name}: transmitted batch item invalid: {r:?} in {text}")
                        })
                    })
                    .collect()
            }
            Parsed::Single(Err(r)) => {
                panic!("{name}: transmitted an invalid message ({r:?}): {text}")
            }
        };
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(body) {
            // Params nested up to serde_json's limit legitimately exceed it inside the envelope.
            assert!(
                e.to_string().contains("recursion limit"),
                "{name}: not JSON ({e}): {text}"
            );
        }
        let tracked = !self.untracked[side];
        for env in items {
            match &env {
                Envelope::Request { id, method, params } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Request, "{name}: {text}");
                    }
                    let RequestId::Number(n) = id else {
                        panic!("{name}: non-numeric own request id: {text}")
                    };
                    if side == CLIENT && (method == "initialize" || method == "server/discover") {
                        self.note_start_request(side, *n, method, &text);
                    }
                    let m = &mut self.models[side];
                    assert!(
                        !tracked
                            || m.sent.contains(n)
                            || m.init_id == Some(*n)
                            || m.start_ids.contains(n),
                        "{name}: transmitted request id {n} it never allocated: {text}"
                    );
                    assert!(
                        m.transmitted_requests.insert(*n),
                        "{name}: request id {n} transmitted twice: {text}"
                    );
                    if side == CLIENT {
                        self.check_client_request(*n, method, *params, &text);
                    }
                }
                Envelope::Notification { method, .. } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Notification, "{name}: {text}");
                    }
                    if side == CLIENT
                        && let Some(v) = self.models[side].version.filter(|v| v.is_stateless())
                        && let Some(spec) = crate::method::lookup(method)
                    {
                        assert!(
                            spec.in_version(v),
                            "{name}: transmitted `{method}`, which {v} does not have: {text}"
                        );
                    }
                }
                Envelope::Response { id, result } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Response, "{name}: {text}");
                    }
                    let mark = app_mark_of_result(result.get());
                    self.check_answer(side, id, mark, true, &text);
                    self.check_era_answer(side, id, Ok(result), &text);
                }
                Envelope::Error {
                    id,
                    code,
                    message,
                    data,
                } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Response, "{name}: {text}");
                    }
                    if let Some(id) = id {
                        let mark = app_mark_of_message(message);
                        self.check_answer(side, id, mark, false, &text);
                        self.check_era_answer(side, id, Err((*code, *data)), &text);
                    }
                }
            }
        }
    }

    /// A response (`result` or not) for inbound `id` goes out.
    fn check_answer(
        &mut self,
        side: usize,
        id: &RequestId,
        mark: Option<u64>,
        result: bool,
        text: &str,
    ) {
        let name = self.who(side);
        let tracked = !self.untracked[side];
        let m = &mut self.models[side];
        if let Some(mark) = mark {
            let Some(answered) = m.app_answers.remove(&mark) else {
                panic!("{name}: app answer #{mark} transmitted twice or never made: {text}")
            };
            assert_eq!(
                &answered, id,
                "{name}: app answer #{mark} went out with another id: {text}"
            );
        } else if let Some((results, errors)) = m.raw_answers.get_mut(id)
            && (if result { *results > 0 } else { *errors > 0 })
        {
            if result {
                *results -= 1;
            } else {
                *errors -= 1;
            }
            if (*results, *errors) == (0, 0) {
                m.raw_answers.remove(id);
            }
        } else if result {
            let auto = m.session_answerable.get_mut(id);
            assert!(
                !tracked || auto.as_ref().is_some_and(|n| **n > 0),
                "{name}: transmitted a result for {id:?} that the application never gave: {text}"
            );
            if let Some(n) = auto {
                *n = n.saturating_sub(1);
            }
        }
        assert!(
            !m.cancelled.contains(id) || text.contains("already in flight"),
            "{name}: transmitted a response for inbound id {id:?} after Event::Cancelled for it: {text}"
        );
    }

    /// A start request (`initialize`, `server/discover`) goes out from the client.
    fn note_start_request(&mut self, side: usize, n: i64, method: &str, text: &str) {
        let name = self.who(side);
        let tracked = !self.untracked[side];
        let m = &mut self.models[side];
        let discover = method == "server/discover";
        if m.sent.contains(&n) {
            // An application's own request of that name (`server/discover` in the stateless
            // era): not a start.
            return;
        }
        if !tracked {
            m.discover_sent |= discover;
            return;
        }
        let mode = m.start;
        if discover {
            assert!(
                matches!(mode, Some(Discovery::Discover | Discovery::Auto)),
                "{name}: transmitted `server/discover` but started with {mode:?}: {text}"
            );
        } else {
            assert!(
                matches!(mode, Some(Discovery::Initialize | Discovery::Auto)),
                "{name}: transmitted `initialize` but started with {mode:?}: {text}"
            );
            assert!(
                mode != Some(Discovery::Auto) || m.discover_sent,
                "{name}: Auto transmitted `initialize` before `server/discover`: {text}"
            );
        }
        if let Some(first) = m.init_id
            && !m.transmitted_requests.contains(&first)
        {
            assert_eq!(
                n, first,
                "{name}: the first start request on the wire is not the one start() returned: {text}"
            );
            let expected = if mode == Some(Discovery::Initialize) {
                "initialize"
            } else {
                "server/discover"
            };
            assert_eq!(
                method, expected,
                "{name}: started with {mode:?}, the first exchange is `{method}`: {text}"
            );
        } else if m.init_id != Some(n) {
            // One the session made itself: Auto's fallback, or `server/discover` again.
            assert!(
                m.init_pending(),
                "{name}: start request {n} (`{method}`) after the start settled: {text}"
            );
            let newest = m
                .sent
                .iter()
                .chain(m.init_id.iter())
                .chain(m.start_ids.iter())
                .copied()
                .max()
                .unwrap_or(0);
            assert!(
                n > newest,
                "{name}: start request {n} (`{method}`) reuses an id: {text}"
            );
            m.start_ids.insert(n);
        }
        m.discover_sent |= discover;
    }

    /// A client request on the wire: in the stateless era (and for `server/discover`) it
    /// carries the era's `_meta`, and its method is one of the era.
    fn check_client_request(&self, n: i64, method: &str, params: Option<&RawValue>, text: &str) {
        let name = self.who(CLIENT);
        let m = &self.models[CLIENT];
        let config = self.sessions[CLIENT].config();
        let start = method == "server/discover" && !m.sent.contains(&n);
        let version = match m.version {
            Some(v) if v.is_stateless() => {
                if let Some(spec) = crate::method::lookup(method) {
                    assert!(
                        spec.in_version(v),
                        "{name}: transmitted `{method}`, which {v} does not have: {text}"
                    );
                }
                Some(v)
            }
            _ if start => None,
            _ => return,
        };
        let meta = params.map(|p| serde_json::from_str::<serde_json::Value>(p.get()));
        let meta = match meta {
            Some(Ok(v)) => v.get("_meta").cloned(),
            Some(Err(e)) if e.to_string().contains("recursion limit") => return,
            Some(Err(e)) => panic!("{name}: params are not JSON ({e}): {text}"),
            None => None,
        };
        let Some(serde_json::Value::Object(meta)) = meta else {
            panic!("{name}: a request of the stateless era without a `_meta` object: {text}")
        };
        let named = meta
            .get(PROTOCOL_VERSION_KEY)
            .and_then(serde_json::Value::as_str)
            .and_then(ProtocolVersion::parse);
        match version {
            Some(v) => assert_eq!(
                named,
                Some(v),
                "{name}: a request of the {v} era names another version: {text}"
            ),
            None => assert!(
                named.is_some_and(|v| v.is_stateless() && config.versions.contains(&v)),
                "{name}: `server/discover` names no stateless version of its own: {text}"
            ),
        }
        let own = |raw: &RawValue| serde_json::from_str::<serde_json::Value>(raw.get()).ok();
        assert_eq!(
            meta.get(CLIENT_CAPABILITIES_KEY).cloned(),
            own(&config.capabilities),
            "{name}: a request of the stateless era without the configured capabilities: {text}"
        );
        assert_eq!(
            meta.get(CLIENT_INFO_KEY).cloned(),
            own(&config.info),
            "{name}: a request of the stateless era without the configured info: {text}"
        );
    }

    /// A server's answer to a request whose era it noted on arrival.
    fn check_era_answer(
        &mut self,
        side: usize,
        id: &RequestId,
        answer: Result<&RawValue, (i64, Option<&RawValue>)>,
        text: &str,
    ) {
        let Some(arrival) = self.models[side].arrivals.remove(id) else {
            return;
        };
        let name = self.who(side);
        match (arrival, answer) {
            (
                Arrival::Stateless {
                    served: Some(v), ..
                },
                Ok(result),
            ) => {
                #[derive(serde::Deserialize)]
                struct Typed<'a> {
                    #[serde(rename = "resultType", borrow)]
                    result_type: Option<&'a RawValue>,
                }
                match serde_json::from_str::<Typed<'_>>(result.get()) {
                    Ok(t) => assert!(
                        t.result_type.is_some_and(|r| r.get().starts_with('"')),
                        "{name}: the result of a {v} request has no string `resultType`: {text}"
                    ),
                    Err(e) => assert!(
                        e.to_string().contains("recursion limit"),
                        "{name}: a result that is not an object ({e}): {text}"
                    ),
                }
                self.models[side].counters.stateless_results += 1;
            }
            (
                Arrival::Stateless {
                    requested,
                    served: None,
                },
                Ok(_),
            ) => panic!(
                "{name}: a request naming version {requested:?}, which it does not serve, got a result: {text}"
            ),
            (
                Arrival::Stateless {
                    requested,
                    served: None,
                },
                Err((code, data)),
            ) => {
                assert_eq!(
                    code, -32022,
                    "{name}: a request naming version {requested:?}, which it does not serve, was not refused with -32022: {text}"
                );
                #[derive(serde::Deserialize)]
                struct Data {
                    supported: Vec<String>,
                    requested: String,
                }
                let data = data.and_then(|d| serde_json::from_str::<Data>(d.get()).ok());
                let Some(data) = data else {
                    panic!("{name}: -32022 without `data.supported` and `data.requested`: {text}")
                };
                let served: Vec<&str> = self.sessions[side]
                    .config()
                    .versions
                    .iter()
                    .map(|v| v.as_str())
                    .collect();
                assert_eq!(
                    data.supported, served,
                    "{name}: -32022 names other versions than it serves: {text}"
                );
                assert_eq!(
                    data.requested, requested,
                    "{name}: -32022 names another requested version: {text}"
                );
                self.models[side].counters.version_refusals += 1;
            }
            _ => {}
        }
    }

    fn on_event(&mut self, side: usize, e: &Event) {
        let name = self.who(side);
        let tracked = !self.untracked[side];
        let m = &mut self.models[side];
        m.counters.events += 1;
        assert!(!m.closed, "{name}: event after Event::Closed: {e:?}");
        match e {
            Event::Ready { version, .. } => {
                assert!(!m.ready, "{name}: Event::Ready twice");
                m.ready = true;
                m.version = Some(*version);
                assert!(
                    self.sessions[side].config().versions.contains(version),
                    "{name}: Event::Ready at {version}, which it was not configured with"
                );
                if side == CLIENT && tracked {
                    if version.is_stateless() {
                        assert!(
                            m.discover_sent
                                && matches!(m.start, Some(Discovery::Discover | Discovery::Auto)),
                            "{name}: ready in the stateless era without asking `server/discover` (start {:?})",
                            m.start
                        );
                    } else {
                        assert!(
                            matches!(m.start, Some(Discovery::Initialize | Discovery::Auto)),
                            "{name}: ready at {version} after starting with {:?}",
                            m.start
                        );
                    }
                }
            }
            Event::Request(r) => {
                assert!(
                    m.open_index(&r.id).is_none(),
                    "{name}: Event::Request for id {:?} already open",
                    r.id
                );
                match m.arrivals.get(&r.id) {
                    Some(Arrival::Plain) => assert!(
                        r.era.is_none(),
                        "{name}: a request without a version in `_meta` was handed out with an era: {r:?}"
                    ),
                    Some(Arrival::Stateless {
                        served: Some(v), ..
                    }) => assert_eq!(
                        r.era.as_ref().map(|e| e.version),
                        Some(*v),
                        "{name}: a request of {v} was handed out without its era: {r:?}"
                    ),
                    Some(Arrival::Stateless {
                        requested,
                        served: None,
                    }) => panic!(
                        "{name}: a request naming version {requested:?}, which it does not serve, was handed out: {r:?}"
                    ),
                    _ => {}
                }
                m.cancelled.remove(&r.id);
                m.reported.remove(&r.id);
                m.open.push((r.id.clone(), r.progress_token.is_some()));
            }
            Event::Cancelled { id, .. } => {
                m.counters.cancellations += 1;
                let Some(i) = m.open_index(id) else {
                    panic!(
                        "{name}: Event::Cancelled for id {id:?} that was not an open inbound request"
                    )
                };
                m.open.remove(i);
                m.reported.remove(id);
                m.arrivals.remove(id);
                m.cancelled.insert(id.clone());
            }
            Event::Response { id, result } => {
                match result {
                    Ok(_) => m.counters.results += 1,
                    Err(e) if e.kind() == ErrorKind::Timeout => m.counters.timeouts += 1,
                    Err(e) if e.kind() == ErrorKind::TransportClosed => {
                        m.counters.failed_by_close += 1;
                    }
                    Err(_) => {}
                }
                let RequestId::Number(n) = id else {
                    panic!("{name}: Event::Response with a string id {id:?}")
                };
                assert!(
                    !tracked || m.sent.contains(n) || m.init_id == Some(*n),
                    "{name}: Event::Response for id {n} never sent ({result:?})"
                );
                assert!(
                    m.outcomes.insert(*n),
                    "{name}: second Event::Response for request {n}: {result:?}"
                );
                m.progress.remove(n);
            }
            Event::Progress {
                id,
                progress,
                total,
                ..
            } => {
                m.counters.progress += 1;
                let RequestId::Number(n) = id else {
                    panic!("{name}: Event::Progress with a string id {id:?}")
                };
                assert!(
                    !tracked || m.sent.contains(n),
                    "{name}: progress for id {n} never sent"
                );
                assert!(
                    !m.outcomes.contains(n),
                    "{name}: progress for request {n} after its outcome"
                );
                assert!(
                    progress.is_finite(),
                    "{name}: non-finite progress {progress}"
                );
                assert!(
                    total.is_none_or(f64::is_finite),
                    "{name}: non-finite total {total:?}"
                );
                if let Some(&last) = m.progress.get(n) {
                    assert!(
                        *progress > last,
                        "{name}: progress for {n} went from {last} to {progress}"
                    );
                }
                m.progress.insert(*n, *progress);
            }
            Event::InvalidMessage(_) => m.counters.invalid += 1,
            Event::Closed(error) => {
                m.closed = true;
                m.close_error = error.as_ref().map(Error::kind);
                m.open.clear();
                m.reported.clear();
                m.arrivals.clear();
                let missing: Vec<i64> = m.unresolved().collect();
                assert!(
                    !tracked || missing.is_empty(),
                    "{name}: closed with requests {missing:?} lacking an outcome"
                );
            }
            _ => {}
        }
    }

    fn check_consistency(&self, side: usize) {
        let name = self.who(side);
        let (s, m) = (&self.sessions[side], &self.models[side]);
        assert_eq!(
            s.is_closed(),
            m.closed,
            "{name}: is_closed() disagrees with Event::Closed"
        );
        if m.closed {
            assert_eq!(
                s.poll_timeout(),
                None,
                "{name}: a closed session has a deadline"
            );
            assert_eq!(
                s.inbound_in_flight(),
                0,
                "{name}: closed, inbound in flight"
            );
            assert_eq!(
                s.outbound_in_flight(),
                0,
                "{name}: closed, outbound in flight"
            );
        }
        if m.ready {
            assert_eq!(
                s.version(),
                m.version,
                "{name}: version() disagrees with Event::Ready"
            );
        }
        if self.untracked[side] {
            return;
        }
        assert_eq!(
            s.inbound_in_flight(),
            m.open.len(),
            "{name}: inbound_in_flight disagrees with the requests handed out ({:?})",
            m.open
        );
        let expected = m.unresolved().count() + usize::from(m.init_pending());
        assert_eq!(
            s.outbound_in_flight(),
            expected,
            "{name}: outbound_in_flight disagrees with the outcomes seen"
        );
    }

    // ------------------------------------------------------------------ inputs

    /// Notes the ids of the messages in `bytes` about to reach `side` as a byte stream.
    fn note_stream(&mut self, side: usize, bytes: &[u8], eof: bool) {
        let mut lines = Vec::new();
        self.mirror[side].push(bytes);
        loop {
            let item = if eof {
                self.mirror[side].finish()
            } else {
                self.mirror[side].next_line()
            };
            match item {
                Some(Ok(line)) => lines.push(line.to_vec()),
                Some(Err(_)) => {}
                None => break,
            }
        }
        for line in lines {
            self.note_message(side, &line);
        }
    }

    /// A message carrying id X reaching `side` makes X a fresh inbound id; a `ping`,
    /// `initialize` or `server/discover` with id X may be answered by the session itself; a
    /// request reaching a server has its era noted ([`Arrival`]).
    fn note_message(&mut self, side: usize, body: &[u8]) {
        if body.len() > self.max_message[side] {
            return;
        }
        let session = &self.sessions[side];
        let server = !session.is_client();
        let serves = server && session.config().versions.iter().any(|v| v.is_stateless());
        let closing = matches!(session.state(), State::Closing | State::Closed);
        let versions = &session.config().versions;
        let mut ids = Vec::new();
        let mut auto = Vec::new();
        let mut arrivals = Vec::new();
        let mut one = |r: &Result<Envelope<'_>, jsonrpc::Rejected>| match r {
            Ok(Envelope::Request { id, method, params }) => {
                ids.push(id.clone());
                if method == "ping" || method == "initialize" || method == "server/discover" {
                    auto.push(id.clone());
                }
                if server {
                    arrivals.push((id.clone(), arrival_of(*params, versions, serves, closing)));
                }
            }
            Err(rej) => ids.extend(rej.id.clone()),
            _ => {}
        };
        match jsonrpc::parse(body) {
            Parsed::Single(r) => one(&r),
            Parsed::Batch(items) => items.iter().for_each(&mut one),
        }
        let m = &mut self.models[side];
        for id in ids {
            m.cancelled.remove(&id);
        }
        for id in auto {
            *m.session_answerable.entry(id).or_default() += 1;
        }
        for (id, arrival) in arrivals {
            // The same id again before its answer: which answer is whose is not followed.
            match m.arrivals.entry(id) {
                alloc::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(arrival);
                }
                alloc::collections::btree_map::Entry::Occupied(mut o) => {
                    o.insert(Arrival::Other);
                }
            }
        }
    }

    /// Feeds stream bytes to `side`.
    pub fn feed_bytes(&mut self, side: usize, bytes: &[u8]) {
        if !self.sessions[side].is_closed() {
            self.note_stream(side, bytes, false);
        }
        self.sessions[side].handle_bytes(self.now, bytes);
    }

    /// Feeds one complete message to `side`.
    pub fn feed_message(&mut self, side: usize, body: &[u8]) {
        self.note_message(side, body);
        self.sessions[side].handle_message(self.now, body);
    }

    /// Feeds `text` to `side` as stream bytes, drains, and returns what `side` transmitted
    /// in reply (parsed, not delivered).
    pub fn roundtrip(&mut self, side: usize, text: &str) -> Vec<serde_json::Value> {
        self.drain();
        self.feed_bytes(side, text.as_bytes());
        self.take_sent(side)
    }

    fn deliver_chunk(&mut self, from: usize, chunk: &[u8]) {
        let to = 1 - from;
        match self.framing[from] {
            Framing::Ndjson => self.feed_bytes(to, chunk),
            _ => self.feed_message(to, chunk),
        }
    }

    /// Delivers up to `count` chunks sent by `from`, due or not; with `split`, the last one
    /// delivered is cut after `split` bytes (NDJSON only) and its rest stays on the link.
    pub fn deliver(&mut self, from: usize, count: usize, split: Option<usize>) {
        for i in 0..count {
            let Some(chunk) = self.wire[from].pop_front() else {
                break;
            };
            match (self.framing[from], split) {
                (Framing::Ndjson, Some(k)) if i + 1 == count && k < chunk.bytes.len() => {
                    self.deliver_chunk(from, &chunk.bytes[..k]);
                    self.wire[from].push_front(Chunk {
                        due: chunk.due,
                        bytes: chunk.bytes[k..].to_vec(),
                    });
                }
                _ => self.deliver_chunk(from, &chunk.bytes),
            }
        }
    }

    /// Drops up to `count` chunks sent by `from`.
    pub fn drop_chunks(&mut self, from: usize, count: usize) {
        for _ in 0..count {
            self.wire[from].pop_front();
        }
    }

    /// Delivers the chunks due by now, both ways; then, when a side's output ended and its
    /// chunks are all delivered, tells the peer its input closed (once).
    pub fn deliver_due(&mut self) {
        for from in 0..2 {
            while self.wire[from].front().is_some_and(|c| c.due <= self.now) {
                self.deliver(from, 1, None);
            }
            if self.output_ended[from] && self.wire[from].is_empty() && !self.eof_delivered[from] {
                self.eof_delivered[from] = true;
                self.input_closed(1 - from);
            }
        }
    }

    /// Delivers everything both ways, due or not, until nothing moves (bounded).
    pub fn deliver_all(&mut self) {
        for _ in 0..64 {
            self.drain();
            if self.wire.iter().all(VecDeque::is_empty) {
                return;
            }
            for from in 0..2 {
                let n = self.wire[from].len();
                self.deliver(from, n, None);
            }
        }
        self.drain();
    }

    /// Side `from` stops writing: what it transmits from now on is discarded, and once its
    /// chunks are delivered ([`Pair::deliver_due`]) the peer sees its input close.
    pub fn end_output(&mut self, from: usize) {
        self.output_ended[from] = true;
    }

    /// The connection drops: the client sees a transport error (with `error`) or a plain
    /// close, the server a plain close, and whatever was on the link is lost.
    pub fn drop_connection(&mut self, error: bool) {
        self.closed(CLIENT, error);
        self.closed(SERVER, false);
        for side in 0..2 {
            self.wire[side].clear();
            self.output_ended[side] = true;
            self.eof_delivered[side] = true;
        }
    }

    /// Nothing is on the link either way.
    pub fn link_idle(&self) -> bool {
        self.wire.iter().all(VecDeque::is_empty)
    }

    /// The earliest chunk due or session deadline.
    pub fn next_due(&self) -> Option<Instant> {
        let chunks = self.wire.iter().filter_map(|w| w.front().map(|c| c.due));
        let timers = self.sessions.iter().filter_map(Session::poll_timeout);
        chunks.chain(timers).min()
    }

    /// The input of `side` ends (EOF).
    pub fn input_closed(&mut self, side: usize) {
        if !self.sessions[side].is_closed() {
            self.note_stream(side, b"", true);
        }
        self.sessions[side].handle_input_closed(self.now);
    }

    /// The transport of `side` closed, with a transport error or without.
    pub fn closed(&mut self, side: usize, error: bool) {
        let e = error.then(|| Error::new(ErrorKind::TransportError, "harness: link failed"));
        self.sessions[side].handle_closed(self.now, e);
    }

    /// `side` closes gracefully.
    pub fn close(&mut self, side: usize) {
        self.sessions[side].close(self.now);
    }

    /// Moves time forward by `d` and runs both timers; checks each next deadline is later.
    pub fn advance(&mut self, d: Duration) {
        self.advance_to(self.now + d);
    }

    /// Moves time to `t` (if later) and runs both timers; checks each next deadline is later.
    pub fn advance_to(&mut self, t: Instant) {
        self.now = self.now.max(t);
        for side in 0..2 {
            self.sessions[side].handle_timeout(self.now);
            if let Some(t) = self.sessions[side].poll_timeout() {
                assert!(
                    t > self.now,
                    "{}: poll_timeout() = {t:?} not after handle_timeout({:?})",
                    self.who(side),
                    self.now
                );
            }
        }
    }

    /// Runs the timers and delivers until both sessions and the link are idle, jumping
    /// virtual time to each next deadline, for at most `max_steps` jumps.
    ///
    /// # Panics
    ///
    /// When the pair is still busy after `max_steps` (a livelock).
    pub fn run_until_idle(&mut self, max_steps: usize) {
        for _ in 0..max_steps {
            self.drain();
            self.deliver_due();
            self.drain();
            let Some(t) = self.next_due() else {
                return;
            };
            self.advance_to(t);
        }
        panic!(
            "the pair did not go idle within {max_steps} steps (seed {:?}, client {:?}, server {:?})",
            self.seed,
            self.sessions[CLIENT].state(),
            self.sessions[SERVER].state()
        );
    }

    // ------------------------------------------------------------------ commands

    /// The client application starts the handshake (on a server it must fail).
    pub fn initialize(&mut self, side: usize) -> Result<RequestId, Error> {
        let r = self.sessions[side].initialize(self.now);
        self.started(side, &r, Discovery::Initialize);
        r
    }

    /// The client application starts the session as its [`Config::discovery`] says
    /// ([`Session::start`]): the handshake, or `server/discover` first (on a server it must
    /// fail).
    pub fn start(&mut self, side: usize) -> Result<RequestId, Error> {
        let config = self.sessions[side].config();
        let mode = match config.discovery {
            Discovery::Auto if !config.versions.iter().any(|v| v.is_stateless()) => {
                Discovery::Initialize
            }
            d => d,
        };
        let r = self.sessions[side].start(self.now);
        self.started(side, &r, mode);
        r
    }

    fn started(&mut self, side: usize, r: &Result<RequestId, Error>, mode: Discovery) {
        let name = self.who(side);
        if let Ok(id) = r {
            let RequestId::Number(n) = id else {
                panic!("{name}: the start returned a non-numeric id {id:?}")
            };
            assert_eq!(side, CLIENT, "{name}: a server accepted a start");
            let m = &mut self.models[side];
            assert!(m.init_id.is_none(), "{name}: the session started twice");
            assert!(!m.sent.contains(n), "{name}: the start reused id {n}");
            m.init_id = Some(*n);
            m.start = Some(mode);
        }
    }

    /// The client application sets the log level its stateless-era requests ask for
    /// ([`Session::set_log_level`]).
    pub fn set_log_level(&mut self, side: usize, level: Option<crate::schema::LoggingLevel>) {
        self.sessions[side].set_log_level(level);
    }

    /// A known method this side's negotiated version lacks must be refused.
    fn expect_era_refusal(&self, side: usize, method: &str, request: bool, r: &Result<(), Error>) {
        let Some(version) = self.models[side].version else {
            return;
        };
        let Some(spec) = crate::method::lookup(method) else {
            return;
        };
        if spec.request != request || spec.in_version(version) || method == "initialize" {
            return;
        }
        assert!(
            r.as_ref().err().is_some_and(|e| matches!(
                e.kind(),
                ErrorKind::MethodNotFound | ErrorKind::TransportClosed | ErrorKind::TransportError
            )),
            "{}: `{method}`, which {version} does not have, gave {r:?}",
            self.who(side)
        );
    }

    /// The application sends a request.
    pub fn send_request(
        &mut self,
        side: usize,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        let r = self.sessions[side].send_request(self.now, method, params, opts);
        let name = self.who(side);
        self.expect_era_refusal(
            side,
            method,
            true,
            &r.as_ref().map(|_| ()).map_err(Clone::clone),
        );
        if let Ok(id) = &r {
            let RequestId::Number(n) = id else {
                panic!("{name}: send_request returned a non-numeric id {id:?}")
            };
            let m = &mut self.models[side];
            assert!(
                !m.sent.contains(n) && m.init_id != Some(*n) && !m.start_ids.contains(n),
                "{name}: send_request reused id {n}"
            );
            m.sent.insert(*n);
        }
        r
    }

    /// The application sends a notification (related to an inbound request or not).
    pub fn notify(
        &mut self,
        side: usize,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error> {
        // A notification about a stateless-era request is of that request's era.
        let unrelated = related.is_none();
        let r = self.sessions[side].notify_related(method, params, related);
        if unrelated && method != "notifications/initialized" {
            self.expect_era_refusal(side, method, false, &r);
        }
        r
    }

    /// An open inbound id (by index), a cancelled one, or the id itself.
    pub fn pick_inbound(&self, side: usize, pick: &Pick) -> RequestId {
        let m = &self.models[side];
        match pick {
            Pick::Open(i) if !m.open.is_empty() => m.open[usize::from(*i) % m.open.len()].0.clone(),
            Pick::Cancelled(i) if !m.cancelled.is_empty() => m
                .cancelled
                .iter()
                .nth(usize::from(*i) % m.cancelled.len())
                .cloned()
                .unwrap_or(RequestId::Number(0)),
            Pick::Id(n) => RequestId::Number(*n),
            Pick::Str(s) => RequestId::from(s.as_str()),
            _ => RequestId::Number(1),
        }
    }

    /// An unresolved outbound id (by index), one ever sent, the initialize id, or the id
    /// itself.
    pub fn pick_outbound(&self, side: usize, pick: &Pick) -> RequestId {
        let m = &self.models[side];
        let unresolved: Vec<i64> = m.unresolved().collect();
        match pick {
            Pick::Open(i) if !unresolved.is_empty() => {
                RequestId::Number(unresolved[usize::from(*i) % unresolved.len()])
            }
            Pick::Cancelled(i) if !m.sent.is_empty() => RequestId::Number(
                *m.sent
                    .iter()
                    .nth(usize::from(*i) % m.sent.len())
                    .unwrap_or(&0),
            ),
            Pick::Id(n) => RequestId::Number(*n),
            Pick::Str(s) => RequestId::from(s.as_str()),
            _ => RequestId::Number(m.init_id.unwrap_or(1)),
        }
    }

    fn expect_answer_result(&mut self, side: usize, id: &RequestId, r: &Result<(), Error>) {
        let name = self.who(side);
        if self.untracked[side] {
            return;
        }
        let m = &mut self.models[side];
        match (m.open_index(id), r) {
            (Some(i), Ok(())) => {
                m.open.remove(i);
                m.reported.remove(id);
            }
            (Some(_), Err(e)) => {
                panic!("{name}: answering open inbound request {id:?} failed: {e:?}")
            }
            (None, Ok(())) if m.cancelled.contains(id) => {
                panic!(
                    "{name}: answering inbound request {id:?} succeeded after Event::Cancelled for it"
                )
            }
            (None, Ok(())) => panic!(
                "{name}: answering inbound request {id:?} that was never handed out succeeded"
            ),
            (None, Err(e)) => {
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::NotFound
                            | ErrorKind::RequestCancelled
                            | ErrorKind::TransportClosed
                    ),
                    "{name}: answering unknown id {id:?}: unexpected error {e:?}"
                );
            }
        }
    }

    /// The application answers an inbound request with `result` as is.
    pub fn respond(
        &mut self,
        side: usize,
        id: &RequestId,
        result: Box<RawValue>,
    ) -> Result<(), Error> {
        let object = result.get().starts_with('{');
        let r = self.sessions[side].respond(id, result);
        if !object {
            assert!(
                r.is_err(),
                "{}: a non-object result was accepted",
                self.who(side)
            );
            return r;
        }
        if r.is_ok() {
            self.models[side]
                .raw_answers
                .entry(id.clone())
                .or_default()
                .0 += 1;
        }
        self.expect_answer_result(side, id, &r);
        r
    }

    /// The application answers an inbound request with `error` as is.
    pub fn respond_error(
        &mut self,
        side: usize,
        id: &RequestId,
        error: Error,
    ) -> Result<(), Error> {
        let r = self.sessions[side].respond_error(id, error);
        if r.is_ok() {
            self.models[side]
                .raw_answers
                .entry(id.clone())
                .or_default()
                .1 += 1;
        }
        self.expect_answer_result(side, id, &r);
        r
    }

    /// The application answers an inbound request with a marked result (`payload`, JSON
    /// text, goes in it as `"v"`), which the checks follow to the wire.
    pub fn respond_marked(&mut self, side: usize, id: &RequestId, payload: Option<&str>) {
        let mark = self.next_mark;
        self.next_mark += 1;
        let result = match payload {
            Some(p) => format!("{{\"{APP_MARK}\":{mark},\"v\":{p}}}"),
            None => format!("{{\"{APP_MARK}\":{mark}}}"),
        };
        // Not JSON, or too deep for serde_json's recursion limit: the application could not
        // build it.
        let Ok(result) = RawValue::from_string(result) else {
            return;
        };
        let r = self.sessions[side].respond(id, result);
        if r.is_ok() {
            self.models[side].app_answers.insert(mark, id.clone());
        }
        self.expect_answer_result(side, id, &r);
    }

    /// The application answers with a marked error.
    pub fn respond_error_marked(
        &mut self,
        side: usize,
        id: &RequestId,
        code: i64,
        message: &str,
        data: Option<Box<RawValue>>,
    ) {
        let mark = self.next_mark;
        self.next_mark += 1;
        let mut e = Error::from_wire(code, format!("{APP_MARK} {mark} {message}"), None);
        if let Some(d) = data {
            e = e.with_data(d);
        }
        let r = self.sessions[side].respond_error(id, e);
        if r.is_ok() {
            self.models[side].app_answers.insert(mark, id.clone());
        }
        self.expect_answer_result(side, id, &r);
    }

    /// A result that is not an object is refused and changes nothing.
    pub fn respond_not_object(&mut self, side: usize, id: &RequestId) {
        let before = self.sessions[side].inbound_in_flight();
        let r = self.sessions[side].respond(id, raw("[1]"));
        assert!(
            r.is_err(),
            "{}: a non-object result was accepted",
            self.who(side)
        );
        assert_eq!(
            self.sessions[side].inbound_in_flight(),
            before,
            "{}: a refused result changed what is in flight",
            self.who(side)
        );
    }

    /// The application reports progress on an inbound request; it must succeed exactly when
    /// the request is open with a progress token and the values are finite and increasing.
    pub fn report_progress(
        &mut self,
        side: usize,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        let name = self.who(side);
        let m = &self.models[side];
        let open = m.open_index(id).map(|i| m.open[i].1);
        let expected = open == Some(true)
            && progress.is_finite()
            && total.is_none_or(f64::is_finite)
            && m.reported.get(id).is_none_or(|&last| progress > last);
        let r = self.sessions[side].report_progress(id, progress, total, message);
        if self.untracked[side] {
            return r;
        }
        assert_eq!(
            r.is_ok(),
            expected,
            "{name}: report_progress({id:?}, {progress}, {total:?}) gave {r:?}, open={open:?}, last={:?}",
            self.models[side].reported.get(id)
        );
        match &r {
            Ok(()) => {
                self.models[side].reported.insert(id.clone(), progress);
            }
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    ErrorKind::InvalidParams
                        | ErrorKind::NotFound
                        | ErrorKind::RequestCancelled
                        | ErrorKind::TransportClosed
                ),
                "{name}: report_progress({id:?}): unexpected error {e:?}"
            ),
        }
        r
    }

    /// The application cancels an outbound request; it must succeed exactly for an
    /// unresolved one of its own, and the outcome must come at once.
    pub fn cancel(
        &mut self,
        side: usize,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        let name = self.who(side);
        let m = &self.models[side];
        let expected = match id {
            RequestId::Number(n) => m.sent.contains(n) && !m.outcomes.contains(n),
            _ => false,
        };
        let r = self.sessions[side].cancel(self.now, id, reason);
        if self.untracked[side] {
            return r;
        }
        assert_eq!(r.is_ok(), expected, "{name}: cancel({id:?}) gave {r:?}");
        if r.is_ok() {
            self.drain();
            let RequestId::Number(n) = id else {
                unreachable!()
            };
            assert!(
                self.models[side].outcomes.contains(n),
                "{name}: cancel({n}) gave no Event::Response"
            );
        }
        r
    }

    /// Performs one [`Op`] (without draining).
    pub fn apply(&mut self, op: &Op) {
        let json = |s: &Option<String>| {
            s.as_ref()
                .and_then(|s| RawValue::from_string(s.clone()).ok())
        };
        match op {
            Op::Initialize(side) => {
                let _ = self.initialize(*side);
            }
            Op::Start(side) => {
                let _ = self.start(*side);
            }
            Op::Request {
                side,
                method,
                params,
                opts,
                related,
            } => {
                let mut opts = opts.clone();
                opts.related_to = related.as_ref().map(|p| self.pick_inbound(*side, p));
                let _ = self.send_request(*side, method, json(params), opts);
            }
            Op::Notify {
                side,
                method,
                params,
                related,
            } => {
                let related = related.as_ref().map(|p| self.pick_inbound(*side, p));
                let _ = self.notify(*side, method, json(params), related);
            }
            Op::Respond {
                side,
                pick,
                payload,
            } => {
                let id = self.pick_inbound(*side, pick);
                self.respond_marked(*side, &id, payload.as_deref());
            }
            Op::RespondNotObject { side, pick } => {
                let id = self.pick_inbound(*side, pick);
                self.respond_not_object(*side, &id);
            }
            Op::RespondError {
                side,
                pick,
                code,
                message,
                data,
            } => {
                let id = self.pick_inbound(*side, pick);
                self.respond_error_marked(*side, &id, *code, message, json(data));
            }
            Op::Progress {
                side,
                pick,
                progress,
                total,
                message,
            } => {
                let id = self.pick_inbound(*side, pick);
                let _ = self.report_progress(*side, &id, *progress, *total, message.as_deref());
            }
            Op::Cancel { side, pick, reason } => {
                let id = self.pick_outbound(*side, pick);
                let _ = self.cancel(*side, &id, reason.as_deref());
            }
            Op::Advance(d) => self.advance(*d),
            Op::Deliver { from, count, split } => self.deliver(*from, *count, *split),
            Op::DeliverAll => self.deliver_all(),
            Op::Drop { from, count } => self.drop_chunks(*from, *count),
            Op::Inject {
                side,
                bytes,
                as_message,
            } => {
                if *as_message {
                    self.feed_message(*side, bytes);
                } else {
                    self.feed_bytes(*side, bytes);
                }
            }
            Op::Close(side) => self.close(*side),
            Op::InputClosed(side) => self.input_closed(*side),
            Op::Closed { side, error } => self.closed(*side, *error),
        }
    }

    // ------------------------------------------------------------------ end state

    /// Every request has had its outcome, the client's handshake settled, and every
    /// application answer was transmitted (unless the side closed).
    pub fn check_settled(&self) {
        for side in 0..2 {
            if self.untracked[side] {
                continue;
            }
            let name = self.who(side);
            let m = &self.models[side];
            let missing: Vec<i64> = m.unresolved().collect();
            assert!(
                missing.is_empty(),
                "{name}: requests {missing:?} never got an outcome"
            );
            assert!(!m.init_pending(), "{name}: the handshake never settled");
            assert!(
                !m.answers_pending() || m.closed,
                "{name}: app answers never transmitted: {:?} {:?}",
                m.app_answers,
                m.raw_answers
            );
        }
    }

    /// Makes the link perfect, answers whatever the applications still hold, moves time past
    /// every deadline (`past_every_deadline`, three times) delivering everything, and then
    /// [checks](Pair::check_settled) the end state.
    pub fn settle_and_check(&mut self, past_every_deadline: Duration) {
        self.link = LinkOptions::PERFECT;
        for side in 0..2 {
            for c in &mut self.wire[side] {
                c.due = self.now;
            }
        }
        self.deliver_all();
        // The application answers whatever it still holds (so batches complete).
        for side in 0..2 {
            while let Some((id, _)) = self.models[side].open.first().cloned() {
                self.respond_marked(side, &id, None);
            }
        }
        self.deliver_all();
        for _ in 0..3 {
            self.advance(past_every_deadline);
            self.deliver_all();
        }
        self.check_settled();
    }
}

/// A garbage line or fragment for the link to inject.
fn garbage(rng: &mut Rng, ndjson: bool) -> Vec<u8> {
    const LINES: &[&[u8]] = &[
        b"{not json\n",
        b"\x00\xff\xfe garbage\n",
        b"[]\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":3}\n",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"nope\",\"progress\":1}}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{}}\n",
        b"\r\n\r\n",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":",
    ];
    let mut g = if rng.chance(800) {
        rng.pick(LINES).to_vec()
    } else {
        let mut g: Vec<u8> = (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect();
        if rng.chance(800) {
            g.push(b'\n');
        }
        g
    };
    if !ndjson && g.last() == Some(&b'\n') {
        g.pop();
    }
    g
}

/// The mark of a marked result: its first `"harness-app":` member (a stateless-era result
/// has members before it: `resultType`, `_meta`).
fn app_mark_of_result(result: &str) -> Option<u64> {
    let key = format!("\"{APP_MARK}\":");
    let at = result.find(&key)?;
    let rest = &result[at + key.len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

fn app_mark_of_message(message: &str) -> Option<u64> {
    let rest = message.strip_prefix(APP_MARK)?.strip_prefix(' ')?;
    let end = rest.find(' ')?;
    rest[..end].parse().ok()
}

/// How a server session reads the era of a request reaching it (see [`Arrival`]).
fn arrival_of(
    params: Option<&RawValue>,
    versions: &[ProtocolVersion],
    serves: bool,
    closing: bool,
) -> Arrival {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<Meta<'a>>,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<alloc::borrow::Cow<'a, str>>,
        #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
        capabilities: Option<&'a RawValue>,
        #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow)]
        info: Option<&'a RawValue>,
        #[serde(rename = "io.modelcontextprotocol/logLevel", borrow)]
        log_level: Option<alloc::borrow::Cow<'a, str>>,
        #[serde(rename = "progressToken")]
        progress_token: Option<crate::id::ProgressToken>,
    }
    let Some(params) = params.filter(|_| serves) else {
        return Arrival::Plain;
    };
    let json = params.get();
    if !json.contains("\"_meta\"") || !json.contains(PROTOCOL_VERSION_KEY) {
        return Arrival::Plain;
    }
    if closing {
        return Arrival::Other;
    }
    match serde_json::from_str::<Params<'_>>(json) {
        Ok(Params {
            meta: Some(Meta {
                version: Some(v), ..
            }),
        }) => Arrival::Stateless {
            served: ProtocolVersion::parse(&v).filter(|p| p.is_stateless() && versions.contains(p)),
            requested: v.into_owned(),
        },
        _ => Arrival::Other,
    }
}
