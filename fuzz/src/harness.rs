//! A client and a server [`Session`] wired through inspectable queues, with a model of what
//! each side's application saw and the invariants checked after every step:
//!
//! - every outbound request id gets at most one `Event::Response`, only for ids this side
//!   allocated, and by `Event::Closed` every one of them has had its outcome;
//! - progress seen for one outbound request strictly increases (and only while it is pending);
//! - after `Event::Cancelled` for an inbound id, `respond`/`respond_error` to it fail and no
//!   response for that id is ever transmitted (until the peer sends a new message with that id);
//! - after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`;
//! - `Event::Ready` and `Event::Closed` at most once per side, no event after `Closed`;
//! - every transmit is exactly one well-formed JSON-RPC message (or batch) of the announced
//!   kind and length, NDJSON-framed with a single trailing newline;
//! - request ids on the wire are unique; `inbound_in_flight`/`outbound_in_flight` agree with
//!   what the application was told; a closed session reports no deadline.

#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use arbitrary::Arbitrary;
use mcp_proto::codec::ndjson::NdjsonDecoder;
use mcp_proto::jsonrpc::{self, Envelope, Parsed};
use mcp_proto::session::{Config, Event, Framing, MessageKind, RequestOptions, Session};
use mcp_proto::{Duration, Error, ErrorKind, Instant, ProtocolVersion, RequestId};
use serde_json::value::RawValue;

pub const CLIENT: usize = 0;
pub const SERVER: usize = 1;
const NAMES: [&str; 2] = ["client", "server"];

/// Application answers carry this marker (results `{"fuzz-app":N,…}`, error messages
/// `fuzz-app …`) so their transmits can be told from the session's own answers.
pub const APP_MARK: &str = "fuzz-app";

/// Method names used by requests, notifications and templates (valid, misdirected,
/// version-specific, refused, custom and empty).
pub const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "sampling/createMessage",
    "roots/list",
    "elicitation/create",
    "tasks/get",
    "server/discover",
    "initialize",
    "custom/thing",
    "",
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/roots/list_changed",
    "notifications/resources/updated",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/initialized",
    "notifications/custom",
];

/// `MCP_FUZZ_STRICT=1` also checks two known gaps (see the README): app-provided raw JSON
/// with literal newlines must not break NDJSON framing, and a closed session transmits nothing.
pub fn strict() -> bool {
    static STRICT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("MCP_FUZZ_STRICT").is_some())
}

pub fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).expect("valid JSON")
}

/// Which kind of `params` to attach.
#[derive(Arbitrary, Debug, Clone)]
pub enum Params {
    None,
    Empty,
    /// A tools/call-like object carrying this text.
    Text(String),
    WithProgressToken,
    WithMeta,
    MetaNotObject,
    Array,
    Escaped,
    Nested(u8),
    /// Pretty-printed (literal newlines): only in strict mode, `{}` otherwise.
    Pretty,
}

impl Params {
    /// The params as compact JSON (`None` for absent).
    pub fn json(&self) -> Option<String> {
        Some(match self {
            Params::None => return None,
            Params::Empty => "{}".into(),
            Params::Text(t) => {
                serde_json::json!({"name": "echo", "arguments": {"text": t}}).to_string()
            }
            Params::WithProgressToken => r#"{"_meta":{"progressToken":"tok"},"name":"x"}"#.into(),
            Params::WithMeta => r#"{"name":"x","_meta":{"a":[1,{"b":null}]}}"#.into(),
            Params::MetaNotObject => r#"{"_meta":3}"#.into(),
            Params::Array => "[1,2]".into(),
            Params::Escaped => r#"{"a\"b":"\u00e9\n","_meta":{"progressToken":7}}"#.into(),
            Params::Nested(d) => {
                let d = usize::from(*d % 160);
                format!("{{\"n\":{}0{}}}", "[".repeat(d), "]".repeat(d))
            }
            Params::Pretty if strict() => "{\n  \"a\": [\n    1\n  ]\n}".into(),
            Params::Pretty => "{}".into(),
        })
    }

    pub fn raw(&self) -> Option<Box<RawValue>> {
        self.json().and_then(|s| RawValue::from_string(s).ok())
    }
}

/// What one side's application has seen, and what it did.
#[derive(Debug, Default)]
pub struct Model {
    /// Ids returned by `send_request`.
    pub sent: BTreeSet<i64>,
    /// The id returned by `initialize`.
    pub init_id: Option<i64>,
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
    /// App answers not transmitted yet: marker number → id.
    pub app_answers: BTreeMap<u64, RequestId>,
    pub ready: bool,
    pub closed: bool,
    pub events: u64,
}

impl Model {
    fn unresolved(&self) -> impl Iterator<Item = i64> + '_ {
        self.sent
            .iter()
            .copied()
            .filter(|id| !self.outcomes.contains(id))
    }

    fn init_pending(&self) -> bool {
        self.init_id.is_some_and(|id| !self.outcomes.contains(&id)) && !self.ready && !self.closed
    }

    fn is_open(&self, id: &RequestId) -> Option<usize> {
        self.open.iter().position(|(o, _)| o == id)
    }
}

/// Two sessions, the messages in flight between them, and their models.
pub struct Harness {
    pub now: Instant,
    pub s: [Session; 2],
    pub m: [Model; 2],
    pub framing: [Framing; 2],
    /// Messages sent by side `i`, not delivered yet.
    pub wire: [VecDeque<Vec<u8>>; 2],
    /// Mirrors of each side's NDJSON input, to know which ids arrive in which message.
    mirror: [NdjsonDecoder; 2],
    max_message: [usize; 2],
    next_mark: u64,
    buf: Vec<u8>,
}

impl Harness {
    pub fn new(client: Config, server: Config) -> Self {
        let framing = [client.framing, server.framing];
        let max_message = [client.max_message_size, server.max_message_size];
        Harness {
            now: Instant::from_micros(1_000_000),
            s: [Session::client(client), Session::server(server)],
            m: [Model::default(), Model::default()],
            framing,
            wire: [VecDeque::new(), VecDeque::new()],
            mirror: [
                NdjsonDecoder::new(max_message[0]),
                NdjsonDecoder::new(max_message[1]),
            ],
            max_message,
            next_mark: 0,
            buf: Vec::new(),
        }
    }

    // ------------------------------------------------------------------ draining

    /// Collects every transmit and event of both sides, checking each, then the consistency
    /// of each session with its model.
    pub fn drain(&mut self) {
        loop {
            let mut moved = false;
            for side in 0..2 {
                loop {
                    let start = self.buf.len();
                    debug_assert_eq!(start, 0);
                    let was_closed = self.s[side].is_closed();
                    let Some(t) = self.s[side].poll_transmit(&mut self.buf) else {
                        break;
                    };
                    if strict() {
                        assert!(
                            !was_closed,
                            "{}: transmit after the session closed: {:?}",
                            NAMES[side],
                            String::from_utf8_lossy(&self.buf)
                        );
                    }
                    moved = true;
                    assert_eq!(
                        t.len,
                        self.buf.len() - start,
                        "{}: Transmit.len is wrong",
                        NAMES[side]
                    );
                    let bytes = std::mem::take(&mut self.buf);
                    self.check_transmit(side, &bytes, t.kind);
                    self.wire[side].push_back(bytes);
                }
                while let Some(e) = self.s[side].poll_event() {
                    moved = true;
                    self.on_event(side, e);
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

    fn check_transmit(&mut self, side: usize, bytes: &[u8], kind: MessageKind) {
        let name = NAMES[side];
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
                vec![env]
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
            _ => panic!("{name}: unexpected parse result"),
        };
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(body) {
            // Params nested up to serde_json's limit legitimately exceed it inside the envelope.
            assert!(
                e.to_string().contains("recursion limit"),
                "{name}: not JSON ({e}): {text}"
            );
        }
        for env in items {
            match &env {
                Envelope::Request { id, .. } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Request, "{name}: {text}");
                    }
                    let RequestId::Number(n) = id else {
                        panic!("{name}: non-numeric own request id: {text}")
                    };
                    let m = &mut self.m[side];
                    assert!(
                        m.sent.contains(n) || m.init_id == Some(*n),
                        "{name}: transmitted request id {n} it never allocated: {text}"
                    );
                    assert!(
                        m.transmitted_requests.insert(*n),
                        "{name}: request id {n} transmitted twice: {text}"
                    );
                }
                Envelope::Notification { .. } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Notification, "{name}: {text}");
                    }
                }
                Envelope::Response { id, result } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Response, "{name}: {text}");
                    }
                    let mark = app_mark_of_result(result.get());
                    self.check_answer(side, id, mark, &text);
                }
                Envelope::Error { id, message, .. } => {
                    if kind != MessageKind::Batch {
                        assert_eq!(kind, MessageKind::Response, "{name}: {text}");
                    }
                    if let Some(id) = id {
                        let mark = app_mark_of_message(message);
                        self.check_answer(side, id, mark, &text);
                    }
                }
                _ => {}
            }
        }
    }

    /// A response for inbound `id` goes out.
    fn check_answer(&mut self, side: usize, id: &RequestId, mark: Option<u64>, text: &str) {
        let name = NAMES[side];
        let m = &mut self.m[side];
        if let Some(mark) = mark {
            let Some(answered) = m.app_answers.remove(&mark) else {
                panic!("{name}: app answer #{mark} transmitted twice or never made: {text}")
            };
            assert_eq!(
                &answered, id,
                "{name}: app answer #{mark} went out with another id: {text}"
            );
        }
        assert!(
            !m.cancelled.contains(id) || text.contains("already in flight"),
            "{name}: transmitted a response for inbound id {id:?} after Event::Cancelled for it: {text}"
        );
    }

    fn on_event(&mut self, side: usize, e: Event) {
        let name = NAMES[side];
        let m = &mut self.m[side];
        m.events += 1;
        assert!(!m.closed, "{name}: event after Event::Closed: {e:?}");
        match e {
            Event::Ready { .. } => {
                assert!(!m.ready, "{name}: Event::Ready twice");
                m.ready = true;
            }
            Event::Request(r) => {
                assert!(
                    m.is_open(&r.id).is_none(),
                    "{name}: Event::Request for id {:?} already open",
                    r.id
                );
                m.cancelled.remove(&r.id);
                m.reported.remove(&r.id);
                m.open.push((r.id, r.progress_token.is_some()));
            }
            Event::Cancelled { id, .. } => {
                let Some(i) = m.is_open(&id) else {
                    panic!(
                        "{name}: Event::Cancelled for id {id:?} that was not an open inbound request"
                    )
                };
                m.open.remove(i);
                m.reported.remove(&id);
                m.cancelled.insert(id);
            }
            Event::Response { id, result } => {
                let RequestId::Number(n) = id else {
                    panic!("{name}: Event::Response with a string id {id:?}")
                };
                assert!(
                    m.sent.contains(&n) || m.init_id == Some(n),
                    "{name}: Event::Response for id {n} never sent ({result:?})"
                );
                assert!(
                    m.outcomes.insert(n),
                    "{name}: second Event::Response for request {n}: {result:?}"
                );
                m.progress.remove(&n);
            }
            Event::Progress {
                id,
                progress,
                total,
                ..
            } => {
                let RequestId::Number(n) = id else {
                    panic!("{name}: Event::Progress with a string id {id:?}")
                };
                assert!(
                    m.sent.contains(&n),
                    "{name}: progress for id {n} never sent"
                );
                assert!(
                    !m.outcomes.contains(&n),
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
                if let Some(&last) = m.progress.get(&n) {
                    assert!(
                        progress > last,
                        "{name}: progress for {n} went from {last} to {progress}"
                    );
                }
                m.progress.insert(n, progress);
            }
            Event::Closed(_) => {
                m.closed = true;
                m.open.clear();
                m.reported.clear();
                let missing: Vec<i64> = m.unresolved().collect();
                assert!(
                    missing.is_empty(),
                    "{name}: closed with requests {missing:?} lacking an outcome"
                );
            }
            _ => {}
        }
    }

    fn check_consistency(&self, side: usize) {
        let name = NAMES[side];
        let (s, m) = (&self.s[side], &self.m[side]);
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
            assert_eq!(s.inbound_in_flight(), 0);
            assert_eq!(s.outbound_in_flight(), 0);
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

    /// A message carrying id X reaching `side` makes X a fresh inbound id.
    fn note_message(&mut self, side: usize, body: &[u8]) {
        if body.len() > self.max_message[side] {
            return;
        }
        let mut ids = Vec::new();
        let mut one = |r: &Result<Envelope<'_>, jsonrpc::Rejected>| match r {
            Ok(Envelope::Request { id, .. }) => ids.push(id.clone()),
            Err(rej) => ids.extend(rej.id.clone()),
            _ => {}
        };
        match jsonrpc::parse(body) {
            Parsed::Single(r) => one(&r),
            Parsed::Batch(items) => items.iter().for_each(&mut one),
            _ => {}
        }
        for id in ids {
            self.m[side].cancelled.remove(&id);
        }
    }

    /// Feeds stream bytes to `side`.
    pub fn feed_bytes(&mut self, side: usize, bytes: &[u8]) {
        if !self.s[side].is_closed() {
            self.note_stream(side, bytes, false);
        }
        self.s[side].handle_bytes(self.now, bytes);
    }

    /// Feeds one complete message to `side`.
    pub fn feed_message(&mut self, side: usize, body: &[u8]) {
        self.note_message(side, body);
        self.s[side].handle_message(self.now, body);
    }

    /// Delivers up to `count` messages sent by `from`; with `split`, the last one delivered
    /// is cut after `split` bytes (NDJSON only) and its rest stays in flight.
    pub fn deliver(&mut self, from: usize, count: usize, split: Option<usize>) {
        let to = 1 - from;
        for i in 0..count {
            let Some(msg) = self.wire[from].pop_front() else {
                break;
            };
            match self.framing[from] {
                Framing::Ndjson => match split {
                    Some(k) if i + 1 == count && k < msg.len() => {
                        self.feed_bytes(to, &msg[..k]);
                        self.wire[from].push_front(msg[k..].to_vec());
                    }
                    _ => self.feed_bytes(to, &msg),
                },
                _ => self.feed_message(to, &msg),
            }
        }
    }

    /// Delivers everything both ways until nothing moves (bounded).
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

    pub fn input_closed(&mut self, side: usize) {
        if !self.s[side].is_closed() {
            self.note_stream(side, b"", true);
        }
        self.s[side].handle_input_closed(self.now);
    }

    pub fn closed(&mut self, side: usize, error: bool) {
        let e = error.then(|| Error::new(ErrorKind::TransportError, "fuzz: link failed"));
        self.s[side].handle_closed(self.now, e);
    }

    pub fn close(&mut self, side: usize) {
        self.s[side].close(self.now);
    }

    /// Moves time forward and runs both timers; checks the next deadline is in the future.
    pub fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        for side in 0..2 {
            self.s[side].handle_timeout(self.now);
            if let Some(t) = self.s[side].poll_timeout() {
                assert!(
                    t > self.now,
                    "{}: poll_timeout() = {t:?} not after handle_timeout({:?})",
                    NAMES[side],
                    self.now
                );
            }
        }
    }

    // ------------------------------------------------------------------ commands

    pub fn initialize(&mut self, side: usize) {
        let r = self.s[side].initialize(self.now);
        match r {
            Ok(RequestId::Number(n)) => {
                assert_eq!(side, CLIENT, "a server accepted initialize()");
                assert!(
                    self.m[side].init_id.is_none(),
                    "initialize() succeeded twice"
                );
                assert!(!self.m[side].sent.contains(&n));
                self.m[side].init_id = Some(n);
            }
            Ok(id) => panic!("initialize() returned a non-numeric id {id:?}"),
            Err(_) => {}
        }
    }

    pub fn send_request(
        &mut self,
        side: usize,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Option<i64> {
        match self.s[side].send_request(self.now, method, params, opts) {
            Ok(RequestId::Number(n)) => {
                let m = &mut self.m[side];
                assert!(
                    !m.sent.contains(&n) && m.init_id != Some(n),
                    "{}: send_request reused id {n}",
                    NAMES[side]
                );
                m.sent.insert(n);
                Some(n)
            }
            Ok(id) => panic!("send_request returned a non-numeric id {id:?}"),
            Err(_) => None,
        }
    }

    pub fn notify(
        &mut self,
        side: usize,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) {
        let _ = self.s[side].notify_related(method, params, related);
    }

    /// An open inbound id (by index), a cancelled one, or `id` itself.
    pub fn pick_inbound(&self, side: usize, pick: &Pick) -> RequestId {
        let m = &self.m[side];
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

    /// An unresolved outbound id (by index), the initialize id, or `id` itself.
    pub fn pick_outbound(&self, side: usize, pick: &Pick) -> RequestId {
        let m = &self.m[side];
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

    fn expect_answer_result(&mut self, side: usize, id: &RequestId, r: Result<(), Error>) {
        let name = NAMES[side];
        let m = &mut self.m[side];
        match (m.is_open(id), r) {
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

    /// The application answers an inbound request with a marked result.
    pub fn respond(&mut self, side: usize, id: &RequestId, payload: Option<String>) {
        let mark = self.next_mark;
        self.next_mark += 1;
        let result = match &payload {
            Some(p) => format!("{{\"{APP_MARK}\":{mark},\"v\":{p}}}"),
            None => format!("{{\"{APP_MARK}\":{mark}}}"),
        };
        // Too deep for serde_json's recursion limit: the application could not build it.
        let Ok(result) = RawValue::from_string(result) else {
            return;
        };
        let r = self.s[side].respond(id, result);
        if r.is_ok() {
            self.m[side].app_answers.insert(mark, id.clone());
        }
        self.expect_answer_result(side, id, r);
    }

    /// The application answers with a marked error.
    pub fn respond_error(
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
        let r = self.s[side].respond_error(id, e);
        if r.is_ok() {
            self.m[side].app_answers.insert(mark, id.clone());
        }
        self.expect_answer_result(side, id, r);
    }

    /// A result that is not an object is refused and changes nothing.
    pub fn respond_not_object(&mut self, side: usize, id: &RequestId) {
        let before = self.s[side].inbound_in_flight();
        let r = self.s[side].respond(id, raw("[1]"));
        assert!(
            r.is_err(),
            "{}: a non-object result was accepted",
            NAMES[side]
        );
        assert_eq!(self.s[side].inbound_in_flight(), before);
    }

    pub fn report_progress(
        &mut self,
        side: usize,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let name = NAMES[side];
        let m = &self.m[side];
        let open = m.is_open(id).map(|i| m.open[i].1);
        let expected = open == Some(true)
            && progress.is_finite()
            && total.is_none_or(f64::is_finite)
            && m.reported.get(id).is_none_or(|&last| progress > last);
        let r = self.s[side].report_progress(id, progress, total, message);
        assert_eq!(
            r.is_ok(),
            expected,
            "{name}: report_progress({id:?}, {progress}, {total:?}) gave {r:?}, open={open:?}, last={:?}",
            self.m[side].reported.get(id)
        );
        if r.is_ok() {
            self.m[side].reported.insert(id.clone(), progress);
        }
    }

    pub fn cancel(&mut self, side: usize, id: &RequestId, reason: Option<&str>) {
        let name = NAMES[side];
        let m = &self.m[side];
        let expected = match id {
            RequestId::Number(n) => m.sent.contains(n) && !m.outcomes.contains(n),
            _ => false,
        };
        let r = self.s[side].cancel(self.now, id, reason);
        assert_eq!(r.is_ok(), expected, "{name}: cancel({id:?}) gave {r:?}");
        if r.is_ok() {
            self.drain();
            let RequestId::Number(n) = id else {
                unreachable!()
            };
            assert!(
                self.m[side].outcomes.contains(n),
                "{name}: cancel({n}) gave no Event::Response"
            );
        }
    }

    // ------------------------------------------------------------------ end state

    /// With a perfect link and time moved past every deadline, every request has its
    /// outcome and the client's handshake is settled.
    pub fn settle_and_check(&mut self, past_every_deadline: Duration) {
        self.deliver_all();
        // The application answers whatever it still holds (so batches complete).
        for side in 0..2 {
            while let Some((id, _)) = self.m[side].open.first().cloned() {
                self.respond(side, &id, None);
            }
        }
        self.deliver_all();
        for _ in 0..3 {
            self.advance(past_every_deadline);
            self.deliver_all();
        }
        for side in 0..2 {
            let m = &self.m[side];
            let missing: Vec<i64> = m.unresolved().collect();
            assert!(
                missing.is_empty(),
                "{}: requests {missing:?} never got an outcome",
                NAMES[side]
            );
            assert!(
                !m.init_pending(),
                "{}: the handshake never settled",
                NAMES[side]
            );
            assert!(
                m.app_answers.is_empty() || m.closed,
                "{}: app answers never transmitted: {:?}",
                NAMES[side],
                m.app_answers
            );
        }
    }
}

/// How to choose an id for answering, cancelling, or addressing a template.
#[derive(Arbitrary, Debug, Clone)]
pub enum Pick {
    Open(u8),
    Cancelled(u8),
    Id(i64),
    Str(String),
}

fn app_mark_of_result(result: &str) -> Option<u64> {
    let rest = result.strip_prefix(&format!("{{\"{APP_MARK}\":"))?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

fn app_mark_of_message(message: &str) -> Option<u64> {
    let rest = message.strip_prefix(APP_MARK)?.strip_prefix(' ')?;
    let end = rest.find(' ')?;
    rest[..end].parse().ok()
}

/// Configuration presets.
#[allow(clippy::too_many_arguments)]
pub fn config(
    client: bool,
    raw_framing: bool,
    versions: u8,
    max_message: Option<u16>,
    limits: u8,
    timeout_ms: Option<u32>,
    custom: bool,
    caps: u8,
) -> Config {
    let mut c = Config::new(if client { "fuzz-client" } else { "fuzz-server" }, "0.1");
    if raw_framing {
        c = c.framing(Framing::Raw);
    }
    let vs: Vec<ProtocolVersion> = ProtocolVersion::ALL
        .into_iter()
        .enumerate()
        .filter(|(i, _)| versions & (1 << i) != 0)
        .map(|(_, v)| v)
        .collect();
    if !vs.is_empty() {
        c = c.versions(&vs);
    }
    if let Some(m) = max_message {
        c.max_message_size = usize::from(m).max(16);
    }
    if limits != 0 {
        c.max_inbound_in_flight = usize::from(limits & 0x0f);
        c.max_outbound_in_flight = usize::from(limits >> 4);
    }
    c.request_timeout = timeout_ms.map(|t| Duration::from_millis(u64::from(t)));
    c.allow_custom_methods = custom;
    let caps = if client {
        [
            r#"{"sampling":{},"roots":{"listChanged":true},"elicitation":{}}"#,
            "{}",
            r#"{"roots":{},"tasks":{}}"#,
        ][usize::from(caps) % 3]
    } else {
        [
            r#"{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":{},"logging":{},"completions":{}}"#,
            "{}",
            r#"{"tools":{},"tasks":{}}"#,
        ][usize::from(caps) % 3]
    };
    c = c.capabilities(raw(caps));
    if caps.len() > 2 && !client {
        c.instructions = Some("fuzz \"instructions\"\n".into());
    }
    c
}
