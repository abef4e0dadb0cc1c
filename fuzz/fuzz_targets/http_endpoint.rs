//! The sans-IO HTTP endpoint (Streamable HTTP and legacy HTTP+SSE) under arbitrary sequences of
//! requests — methods, paths, headers, session ids, bodies — interleaved with stream pulls,
//! dropped streams, application answers and time jumps. It never panics, answers every request
//! with a status the transports define, keeps its stream handles consistent (a polled handle
//! is either alive or reported closed once), and frees every session once time passes their
//! expiry.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_proto::http::{
    Body, Endpoint, EndpointConfig, LegacySse, ResponseMode, SessionId, StreamId, StreamPoll,
};
use mcp_proto::session::{Config, Event};
use mcp_proto::{Duration, Instant, RequestId};
use serde_json::value::RawValue;

#[derive(Arbitrary, Debug)]
struct Setup {
    json: bool,
    stateless: bool,
    legacy: bool,
    small_limits: bool,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Request(Req),
    Pull(u8),
    Drop(u8),
    Answer(u8),
    Notify(u8),
    Advance(u16),
}

#[derive(Arbitrary, Debug)]
struct Req {
    method: u8,
    path: u8,
    session: u8,
    accept: u8,
    content_type: u8,
    version: u8,
    origin: u8,
    host: u8,
    last_event_id: Option<u8>,
    body: BodyChoice,
}

#[derive(Arbitrary, Debug)]
enum BodyChoice {
    Initialize(u8),
    Initialized,
    Ping(u8),
    Call(u8, bool),
    Batch,
    Response(u8),
    Raw(Vec<u8>),
}

const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "1999-01-01",
];

fn body_bytes(b: &BodyChoice) -> Vec<u8> {
    match b {
        BodyChoice::Initialize(v) => format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{"sampling":{{}}}},"clientInfo":{{"name":"f","version":"1"}}}}}}"#,
            VERSIONS[usize::from(*v) % VERSIONS.len()]
        )
        .into_bytes(),
        BodyChoice::Initialized => {
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
        }
        BodyChoice::Ping(id) => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes(),
        BodyChoice::Call(id, progress) => {
            let meta = if *progress { r#","_meta":{"progressToken":"p"}"# } else { "" };
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}{meta}}}}}"#
            )
            .into_bytes()
        }
        BodyChoice::Batch => {
            br#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]"#.to_vec()
        }
        BodyChoice::Response(id) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
        }
        BodyChoice::Raw(b) => b.clone(),
    }
}

struct World {
    ep: Endpoint,
    now: Instant,
    rng: u128,
    sessions: Vec<SessionId>,
    streams: Vec<StreamId>,
    pending: Vec<(SessionId, RequestId)>,
    buf: Vec<u8>,
}

impl World {
    fn request(&mut self, r: &Req) {
        let method = ["GET", "POST", "DELETE", "PUT"][usize::from(r.method) % 4];
        let known = self
            .sessions
            .get(usize::from(r.session) % self.sessions.len().max(1))
            .map(|s| format!("{s}"));
        let sid = match r.session % 3 {
            0 => None,
            1 => known,
            _ => Some("0123456789abcdef0123456789abcdef".to_owned()),
        };
        let path = match r.path % 5 {
            0 | 1 => "/mcp".to_owned(),
            2 => "/sse".to_owned(),
            3 => match &sid {
                Some(s) => format!("/messages?sessionId={s}"),
                None => "/messages".to_owned(),
            },
            _ => "/other?x=%zz".to_owned(),
        };
        let mut b = http::Request::builder().method(method).uri(path.as_str());
        b = match r.host % 4 {
            0 => b.header("host", "127.0.0.1:8080"),
            1 => b.header("host", "localhost"),
            2 => b.header("host", "evil.example"),
            _ => b,
        };
        b = match r.origin % 4 {
            0 => b,
            1 => b.header("origin", "http://localhost:3000"),
            2 => b.header("origin", "null"),
            _ => b.header("origin", "http://evil.example"),
        };
        b = match r.accept % 5 {
            0 => b.header("accept", "application/json, text/event-stream"),
            1 => b.header("accept", "text/event-stream"),
            2 => b.header("accept", "application/json"),
            3 => b.header("accept", "*/*;q=0.1, text/html"),
            _ => b,
        };
        b = match r.content_type % 4 {
            0 => b.header("content-type", "application/json"),
            1 => b.header("content-type", "application/json; charset=utf-8"),
            2 => b.header("content-type", "text/plain"),
            _ => b,
        };
        if r.version % 3 != 0 {
            b = b.header(
                "mcp-protocol-version",
                VERSIONS[usize::from(r.version) % VERSIONS.len()],
            );
        }
        if let Some(s) = &sid {
            b = b.header("mcp-session-id", s.as_str());
        }
        if let Some(e) = r.last_event_id {
            b = b.header("last-event-id", format!("{}-{}", e % 4, e / 4));
        }
        let Ok(req) = b.body(()) else { return };
        let (parts, ()) = req.into_parts();
        let body = body_bytes(&r.body);
        self.rng = self
            .rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let resp = self.ep.handle_request(self.now, &parts, &body, Some(self.rng));
        let status = resp.status().as_u16();
        assert!(
            matches!(
                status,
                200 | 202 | 204 | 400 | 403 | 404 | 405 | 406 | 409 | 413 | 415 | 503
            ),
            "unexpected status {status}"
        );
        if let Some(sid) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .and_then(SessionId::parse)
        {
            self.sessions.push(sid);
        }
        match resp.into_body() {
            Body::Stream(id) => self.streams.push(id),
            Body::Full(_) | Body::Empty => {}
            _ => {}
        }
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(e) = self.ep.poll_event() {
            match e.event {
                Event::Request(req) => self.pending.push((e.session, req.id)),
                Event::Ready { .. } if !self.sessions.contains(&e.session) => {
                    self.sessions.push(e.session)
                }
                _ => {}
            }
        }
    }

    fn pull(&mut self, i: u8) {
        if self.streams.is_empty() {
            return;
        }
        let idx = usize::from(i) % self.streams.len();
        let id = self.streams[idx];
        for _ in 0..8 {
            self.buf.clear();
            match self.ep.poll_stream(id, &mut self.buf) {
                StreamPoll::Data(n) => assert_eq!(n, self.buf.len()),
                StreamPoll::Pending => break,
                _ => {
                    self.streams.swap_remove(idx);
                    break;
                }
            }
        }
        self.drain();
    }
}

fuzz_target!(|input: (Setup, Vec<Op>)| {
    let (setup, ops) = input;
    let session = Config::new("fuzz-server", "1").capabilities(
        RawValue::from_string(r#"{"tools":{},"logging":{}}"#.into())
            .unwrap_or_else(|_| unreachable!()),
    );
    let mut config = EndpointConfig::new(session).stateless(setup.stateless);
    if setup.json {
        config = config.response_mode(ResponseMode::Json);
    }
    if setup.legacy {
        config = config.legacy_sse(Some(LegacySse::default()));
    }
    if setup.small_limits {
        config = config
            .max_body_size(256)
            .max_sessions(3)
            .max_stream_buffer(512)
            .memory_event_store(4, 1024);
    }
    let idle = config.idle_timeout;
    let mut w = World {
        ep: Endpoint::new(config),
        now: Instant::from_micros(1_000_000),
        rng: 0x9e37_79b9_7f4a_7c15,
        sessions: Vec::new(),
        streams: Vec::new(),
        pending: Vec::new(),
        buf: Vec::new(),
    };
    for op in ops.iter().take(200) {
        match op {
            Op::Request(r) => w.request(r),
            Op::Pull(i) => w.pull(*i),
            Op::Drop(i) => {
                if !w.streams.is_empty() {
                    let id = w.streams.swap_remove(usize::from(*i) % w.streams.len());
                    w.ep.stream_closed(w.now, id);
                    w.drain();
                }
            }
            Op::Answer(i) => {
                if !w.pending.is_empty() {
                    let (sid, id) = w.pending.swap_remove(usize::from(*i) % w.pending.len());
                    let result = RawValue::from_string(r#"{"content":[]}"#.into())
                        .unwrap_or_else(|_| unreachable!());
                    let _ = w.ep.with_session(w.now, sid, |s| s.respond(&id, result));
                    w.drain();
                }
            }
            Op::Notify(i) => {
                if !w.sessions.is_empty() {
                    let sid = w.sessions[usize::from(*i) % w.sessions.len()];
                    let _ =
                        w.ep.with_session(w.now, sid, |s| s.notify("notifications/tools/list_changed", None));
                    w.drain();
                }
            }
            Op::Advance(ms) => {
                w.now = w.now + Duration::from_millis(u64::from(*ms) * 50);
                if w.ep.poll_timeout().is_some_and(|t| t <= w.now) {
                    w.ep.handle_timeout(w.now);
                }
                w.drain();
            }
        }
    }
    // Every stream handle can be pulled to its end or stays pending; dropping them all and
    // letting every expiry pass frees every session.
    for id in std::mem::take(&mut w.streams) {
        w.ep.stream_closed(w.now, id);
    }
    w.drain();
    w.now = w.now + idle + idle;
    let mut rounds = 0;
    while let Some(t) = w.ep.poll_timeout() {
        rounds += 1;
        if rounds > 10_000 {
            break;
        }
        if t > w.now {
            w.now = t;
        }
        w.ep.handle_timeout(w.now);
        w.drain();
        if w.ep.sessions().next().is_none() {
            break;
        }
        w.now = w.now + Duration::from_millis(1);
    }
    assert!(
        w.ep.sessions().next().is_none(),
        "sessions left after every expiry passed"
    );
});
