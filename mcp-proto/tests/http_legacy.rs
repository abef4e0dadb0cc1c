//! The legacy HTTP+SSE transport (2024-11-05) of the endpoint, driven with hand-built requests:
//! the `endpoint` event, POSTs answered on the stream, server→client requests, every error
//! status, the session's end with its stream, expiry, and the transport switched off.
#![cfg(feature = "http")]

#[path = "common/endpoint.rs"]
mod endpoint;

use endpoint::EndpointExt;
use http::request::Parts;
use http::{Response, StatusCode};
use mcp_proto::codec::sse::{SseDecoder, SseEvent};
use mcp_proto::http::{
    Body, Endpoint, EndpointConfig, LegacySse, ResponseMode, SessionEvent, SessionId, StreamId,
    StreamPoll,
};
use mcp_proto::session::{Config, Event, RequestOptions};
use mcp_proto::{Duration, Instant, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn config() -> EndpointConfig {
    EndpointConfig::new(
        Config::new("legacy-test-server", "1.0").capabilities(raw(r#"{"tools":{},"logging":{}}"#)),
    )
    .legacy_sse(Some(LegacySse::default()))
}

const V: &str = "2024-11-05";

fn init_body(version: &str) -> String {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,
        "capabilities":{"roots":{"listChanged":true},"sampling":{}},
        "clientInfo":{"name":"hand-built","version":"0"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A legacy session as the client sees it: its id, its stream, and the URL to POST to.
struct Legacy {
    sid: SessionId,
    stream: StreamId,
    post_url: String,
}

/// An endpoint with a clock, a fake random source and a tiny application.
struct H {
    ep: Endpoint,
    now: Instant,
    rng: u128,
    events: Vec<SessionEvent>,
}

impl H {
    fn new(config: EndpointConfig) -> Self {
        H {
            ep: Endpoint::new(config),
            now: Instant::from_micros(1_000_000),
            rng: 0xfedc_ba98_7654_3210_0000_0000_0000_0000,
            events: Vec::new(),
        }
    }

    fn request(&mut self, parts: Parts, body: &str) -> Response<Body> {
        self.rng += 1;
        let r = self
            .ep
            .handle_request(self.now, &parts, body.as_bytes(), Some(self.rng));
        while let Some(e) = self.ep.poll_event() {
            self.events.push(e);
        }
        r
    }

    fn get_sse(&mut self, path: &str) -> Response<Body> {
        let b = http::Request::get(path)
            .header("host", "localhost:8080")
            .header("accept", "text/event-stream");
        self.request(parts(b), "")
    }

    fn post_to(&mut self, url: &str, body: &str) -> Response<Body> {
        let b = http::Request::post(url)
            .header("host", "localhost:8080")
            .header("content-type", "application/json");
        self.request(parts(b), body)
    }

    /// GET /sse, checking the reply and the `endpoint` event.
    fn connect(&mut self) -> Legacy {
        let r = self.get_sse("/sse");
        assert_eq!(r.status(), 200);
        assert_eq!(
            header(&r, "content-type").as_deref(),
            Some("text/event-stream")
        );
        assert!(
            header(&r, "mcp-session-id").is_none(),
            "no Streamable HTTP headers"
        );
        let stream = r.body().stream().expect("a streamed body");
        let (bytes, closed) = self.pull(stream);
        assert!(!closed);
        let events = sse(&bytes);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].event, "endpoint");
        let sid = SessionId::from_u128(self.rng);
        assert_eq!(
            events[0].data,
            format!("/messages?sessionId={:032x}", self.rng)
        );
        assert!(
            !String::from_utf8_lossy(&bytes).contains("id:"),
            "no event ids"
        );
        Legacy {
            sid,
            stream,
            post_url: events[0].data.clone(),
        }
    }

    /// Connects and completes the handshake at `version`.
    fn open(&mut self, version: &str) -> Legacy {
        let s = self.connect();
        let r = self.post_to(&s.post_url, &init_body(version));
        assert_accepted(&r);
        let msgs = self.messages(s.stream);
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0]["id"], 0);
        assert_eq!(msgs[0]["result"]["protocolVersion"], version);
        assert_accepted(&self.post_to(&s.post_url, INITIALIZED));
        assert!(
            self.events
                .iter()
                .any(|e| e.session == s.sid && matches!(e.event, Event::Ready { .. }))
        );
        self.events.clear();
        s
    }

    /// Pulls what a stream has now: (bytes, closed).
    fn pull(&mut self, stream: StreamId) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        loop {
            match self.ep.poll_stream(stream, &mut out) {
                StreamPoll::Data(n) => assert!(n > 0),
                StreamPoll::Pending => return (out, false),
                StreamPoll::Closed => return (out, true),
                other => panic!("{other:?}"),
            }
        }
    }

    /// The messages a live stream has now, each checked to be an `event: message`.
    fn messages(&mut self, stream: StreamId) -> Vec<Value> {
        let (bytes, closed) = self.pull(stream);
        assert!(!closed, "the stream is still open");
        sse(&bytes)
            .into_iter()
            .map(|e| {
                assert_eq!(e.event, "message");
                assert_eq!(e.id, "", "no event ids");
                serde_json::from_str(&e.data).unwrap()
            })
            .collect()
    }

    /// The inbound requests the application was handed since the last call.
    fn take_requests(&mut self) -> Vec<(SessionId, RequestId, String)> {
        let mut out = Vec::new();
        for e in std::mem::take(&mut self.events) {
            if let Event::Request(r) = e.event {
                out.push((e.session, r.id, r.method.to_string()));
            }
        }
        out
    }

    fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        self.ep.handle_timeout(self.now);
        while let Some(e) = self.ep.poll_event() {
            self.events.push(e);
        }
    }
}

fn parts(b: http::request::Builder) -> Parts {
    b.body(()).unwrap().into_parts().0
}

fn header(r: &Response<Body>, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

fn assert_accepted(r: &Response<Body>) {
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(r.body(), &Body::Full(b"Accepted".to_vec()));
}

fn assert_rpc_error(r: &Response<Body>, status: StatusCode, code: i64) {
    assert_eq!(r.status(), status);
    assert_eq!(
        header(r, "content-type").as_deref(),
        Some("application/json")
    );
    let Body::Full(b) = r.body() else {
        panic!("expected a complete body, got {:?}", r.body());
    };
    let v: Value = serde_json::from_slice(b).unwrap();
    assert_eq!(v["error"]["code"], code, "{v}");
}

fn sse(bytes: &[u8]) -> Vec<SseEvent> {
    let mut d = SseDecoder::new(1 << 20);
    d.push(bytes);
    let mut out = Vec::new();
    while let Some(e) = d.next_event() {
        out.push(e.unwrap());
    }
    out
}

// ---------------------------------------------------------------- happy paths

#[test]
fn initialize_over_post_is_answered_on_the_stream() {
    let mut h = H::new(config());
    let s = h.connect();
    assert_eq!(h.ep.stats().sessions, 1);
    assert_eq!(h.pull(s.stream), (Vec::new(), false), "nothing else yet");

    let r = h.post_to(&s.post_url, &init_body(V));
    assert_accepted(&r);
    assert_eq!(
        header(&r, "content-type").as_deref(),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        h.ep.poll_stream_ready(),
        Some(s.stream),
        "the stream is woken"
    );
    let msgs = h.messages(s.stream);
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["id"], 0);
    assert_eq!(msgs[0]["result"]["protocolVersion"], V);
    assert_eq!(
        msgs[0]["result"]["serverInfo"]["name"],
        "legacy-test-server"
    );

    assert_accepted(&h.post_to(&s.post_url, INITIALIZED));
    let ready = h
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::Ready { version, .. } => Some((e.session, *version)),
            _ => None,
        })
        .expect("a Ready event");
    assert_eq!(ready.0, s.sid);
    assert_eq!(ready.1.as_str(), V);
    assert_eq!(h.ep.session(s.sid).unwrap().version().unwrap().as_str(), V);
    h.events.clear();

    // A request goes to the application; its answer travels on the stream.
    assert_accepted(&h.post_to(
        &s.post_url,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ));
    let reqs = h.take_requests();
    assert_eq!(reqs.len(), 1);
    let (session, id, method) = &reqs[0];
    assert_eq!((session, method.as_str()), (&s.sid, "tools/list"));
    assert_eq!(
        h.pull(s.stream),
        (Vec::new(), false),
        "waits for the answer"
    );
    h.ep.respond(h.now, *session, id, raw(r#"{"tools":[]}"#))
        .unwrap();
    assert_eq!(
        h.messages(s.stream),
        [json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})]
    );
    // The session answers ping itself, on the stream too.
    assert_accepted(&h.post_to(&s.post_url, r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#));
    assert_eq!(
        h.messages(s.stream),
        [json!({"jsonrpc":"2.0","id":"p","result":{}})]
    );
    let st = h.ep.stats();
    assert_eq!(
        (st.sessions, st.open_streams, st.routed_requests),
        (1, 1, 0)
    );
}

#[test]
fn a_newer_version_is_negotiated_when_the_client_asks_for_it() {
    let mut h = H::new(config());
    let s = h.open("2025-11-25");
    // No priming event, no event ids even for 2025-11-25: the legacy stream is not resumable.
    h.ep.notify(h.now, s.sid, "notifications/tools/list_changed", None)
        .unwrap();
    let (bytes, _) = h.pull(s.stream);
    let events = sse(&bytes);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].id, "");
    assert!(events[0].data.contains("list_changed"));
}

#[test]
fn notifications_related_or_not_travel_on_the_stream() {
    let mut h = H::new(config());
    let s = h.open(V);
    h.ep.notify(
        h.now,
        s.sid,
        "notifications/message",
        Some(raw(r#"{"level":"info","data":"unrelated"}"#)),
    )
    .unwrap();
    assert_accepted(&h.post_to(
        &s.post_url,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"tok"}}}"#,
    ));
    let (session, id, _) = h.take_requests().remove(0);
    h.ep.notify_related(
        h.now,
        session,
        "notifications/message",
        Some(raw(r#"{"level":"info","data":"related"}"#)),
        id.clone(),
    )
    .unwrap();
    h.ep.report_progress(h.now, session, &id, 1.0, Some(2.0), None)
        .unwrap();
    h.ep.respond(h.now, session, &id, raw(r#"{"content":[]}"#))
        .unwrap();
    let msgs = h.messages(s.stream);
    assert_eq!(msgs.len(), 4, "{msgs:?}");
    assert_eq!(msgs[0]["params"]["data"], "unrelated");
    assert_eq!(msgs[1]["params"]["data"], "related");
    assert_eq!(msgs[2]["method"], "notifications/progress");
    assert_eq!(msgs[2]["params"]["progressToken"], "tok");
    assert_eq!(msgs[3]["id"], 5);
    assert_eq!(h.ep.stats().messages_dropped, 0);
}

#[test]
fn a_server_request_goes_out_on_the_stream_and_its_answer_comes_by_post() {
    // JSON-only Streamable HTTP refuses server→client requests; legacy sessions have a stream.
    let mut h = H::new(config().response_mode(ResponseMode::JsonOnly));
    let s = h.open(V);
    let id =
        h.ep.send_request(h.now, s.sid, "roots/list", None, RequestOptions::default())
            .unwrap();
    let msgs = h.messages(s.stream);
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["method"], "roots/list");
    let wire_id = msgs[0]["id"].clone();
    let answer = json!({"jsonrpc":"2.0","id":wire_id,"result":{"roots":[{"uri":"file:///r"}]}});
    assert_accepted(&h.post_to(&s.post_url, &answer.to_string()));
    let (rid, result) = h
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::Response { id, result } => Some((id.clone(), result.clone())),
            _ => None,
        })
        .expect("the answer reaches the application");
    assert_eq!(rid, id);
    let v: Value = serde_json::from_str(result.unwrap().get()).unwrap();
    assert_eq!(v["roots"][0]["uri"], "file:///r");
    assert_eq!(
        h.pull(s.stream),
        (Vec::new(), false),
        "a response gets no answer"
    );
}

#[test]
fn batches_follow_the_negotiated_version() {
    let mut h = H::new(config());
    let s = h.open(V);
    let batch =
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    assert_rpc_error(
        &h.post_to(&s.post_url, batch),
        StatusCode::BAD_REQUEST,
        -32600,
    );

    let s = h.open("2025-03-26");
    assert_accepted(&h.post_to(&s.post_url, batch));
    let msgs = h.messages(s.stream);
    assert_eq!(msgs.len(), 1, "one batch of answers: {msgs:?}");
    let ids: Vec<&Value> = msgs[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(ids, [&json!(1), &json!(2)]);
}

#[test]
fn an_unreadable_message_in_a_batch_is_answered_on_the_stream() {
    let mut h = H::new(config());
    let s = h.open("2025-03-26");
    assert_accepted(&h.post_to(
        &s.post_url,
        r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"id":4}]"#,
    ));
    let msgs = h.messages(s.stream);
    let all: Vec<Value> = msgs
        .iter()
        .flat_map(|m| m.as_array().cloned().unwrap_or_else(|| vec![m.clone()]))
        .collect();
    assert!(
        all.iter().any(|m| m["id"] == 3 && m["result"].is_object()),
        "{all:?}"
    );
    assert!(all.iter().any(|m| m["error"]["code"] == -32600), "{all:?}");
}

// ---------------------------------------------------------------- errors

#[test]
fn post_errors() {
    let mut h = H::new(config().max_body_size(400));
    let s = h.connect();
    // No sessionId → 400; unknown or malformed → 404.
    assert_rpc_error(
        &h.post_to("/messages", "{}"),
        StatusCode::BAD_REQUEST,
        -32000,
    );
    assert_rpc_error(
        &h.post_to("/messages?other=1", "{}"),
        StatusCode::BAD_REQUEST,
        -32000,
    );
    let unknown = format!("/messages?sessionId={:032x}", 7);
    assert_rpc_error(&h.post_to(&unknown, "{}"), StatusCode::NOT_FOUND, -32000);
    assert_rpc_error(
        &h.post_to("/messages?sessionId=xyz", "{}"),
        StatusCode::NOT_FOUND,
        -32000,
    );
    // Content type → 415.
    let b = http::Request::post(&s.post_url)
        .header("host", "localhost:8080")
        .header("content-type", "text/plain");
    let r = h.request(parts(b), &init_body(V));
    assert_rpc_error(&r, StatusCode::UNSUPPORTED_MEDIA_TYPE, -32000);
    // Size → 413.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(400)
    );
    assert_rpc_error(
        &h.post_to(&s.post_url, &big),
        StatusCode::PAYLOAD_TOO_LARGE,
        -32000,
    );
    // Malformed JSON → 400 with a parse error; not JSON-RPC → 400 with invalid request.
    assert_rpc_error(
        &h.post_to(&s.post_url, "{not json"),
        StatusCode::BAD_REQUEST,
        -32700,
    );
    assert_rpc_error(
        &h.post_to(&s.post_url, r#"{"id":1}"#),
        StatusCode::BAD_REQUEST,
        -32600,
    );
    // None of it reached the session or the stream.
    assert_eq!(h.pull(s.stream), (Vec::new(), false));
    assert!(h.events.is_empty(), "{:?}", h.events);
    // The session still works; the MCP-Protocol-Version header is not checked here.
    let b = http::Request::post(&s.post_url)
        .header("host", "localhost:8080")
        .header("content-type", "application/json; charset=utf-8")
        .header("mcp-protocol-version", "1999-01-01");
    assert_accepted(&h.request(parts(b), &init_body(V)));
    assert_eq!(h.messages(s.stream)[0]["result"]["protocolVersion"], V);
}

#[test]
fn a_request_id_already_in_flight_gets_400() {
    let mut h = H::new(config());
    let s = h.open(V);
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
    assert_accepted(&h.post_to(&s.post_url, call));
    assert_rpc_error(
        &h.post_to(&s.post_url, call),
        StatusCode::BAD_REQUEST,
        -32600,
    );
    assert_eq!(h.take_requests().len(), 1);
}

#[test]
fn get_errors_and_methods() {
    let mut h = H::new(config().max_sessions(1));
    // Accept must allow text/event-stream.
    let b = http::Request::get("/sse")
        .header("host", "localhost:8080")
        .header("accept", "application/json");
    assert_rpc_error(&h.request(parts(b), ""), StatusCode::NOT_ACCEPTABLE, -32000);
    let b = http::Request::get("/sse").header("host", "localhost:8080");
    assert_rpc_error(&h.request(parts(b), ""), StatusCode::NOT_ACCEPTABLE, -32000);
    assert_eq!(h.ep.stats().sessions, 0);
    // The session bound applies.
    let _s = h.connect();
    assert_rpc_error(&h.get_sse("/sse"), StatusCode::SERVICE_UNAVAILABLE, -32000);
    assert_eq!(h.ep.stats().sessions, 1);
    // Other methods → 405 with Allow.
    let r = h.post_to("/sse", "{}");
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow").as_deref(), Some("GET"));
    let r = h.get_sse("/messages");
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow").as_deref(), Some("POST"));
    let b = http::Request::delete("/sse").header("host", "localhost:8080");
    assert_eq!(
        h.request(parts(b), "").status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[test]
fn one_path_for_both_is_told_apart_by_method() {
    let mut h = H::new(config().legacy_sse(Some(LegacySse::new("/legacy", "/legacy"))));
    let r = h.get_sse("/legacy");
    assert_eq!(r.status(), 200);
    let stream = r.body().stream().unwrap();
    let events = sse(&h.pull(stream).0);
    let url = events[0].data.clone();
    assert!(url.starts_with("/legacy?sessionId="), "{url}");
    assert_accepted(&h.post_to(&url, &init_body(V)));
    assert_eq!(h.messages(stream)[0]["id"], 0);
    let b = http::Request::put("/legacy").header("host", "localhost:8080");
    let r = h.request(parts(b), "");
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow").as_deref(), Some("GET, POST"));
}

#[test]
fn host_and_origin_checks_apply() {
    let mut h = H::new(config());
    let b = http::Request::get("/sse")
        .header("host", "evil.example")
        .header("accept", "text/event-stream");
    assert_rpc_error(&h.request(parts(b), ""), StatusCode::FORBIDDEN, -32000);
    let b = http::Request::get("/sse")
        .header("host", "localhost:8080")
        .header("origin", "http://evil.example")
        .header("accept", "text/event-stream");
    assert_rpc_error(&h.request(parts(b), ""), StatusCode::FORBIDDEN, -32000);
    let s = h.connect();
    let b = http::Request::post(&s.post_url)
        .header("host", "localhost:8080")
        .header("origin", "http://evil.example")
        .header("content-type", "application/json");
    assert_rpc_error(
        &h.request(parts(b), &init_body(V)),
        StatusCode::FORBIDDEN,
        -32000,
    );
    let b = http::Request::post(&s.post_url)
        .header("host", "localhost:8080")
        .header("origin", "http://localhost:3000")
        .header("content-type", "application/json");
    assert_accepted(&h.request(parts(b), &init_body(V)));
}

#[test]
fn legacy_and_streamable_sessions_do_not_mix() {
    let mut h = H::new(config());
    let s = h.open(V);
    // The legacy id is no Streamable HTTP session.
    let b = http::Request::post("/mcp")
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", s.sid.to_string());
    let r = h.request(parts(b), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_rpc_error(&r, StatusCode::NOT_FOUND, -32000);
    // And a Streamable HTTP session is not reachable through /messages.
    let b = http::Request::post("/mcp")
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    let r = h.request(parts(b), &init_body("2025-06-18"));
    assert_eq!(r.status(), 200);
    let streamable = header(&r, "mcp-session-id").unwrap();
    let r = h.post_to(
        &format!("/messages?sessionId={streamable}"),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_rpc_error(&r, StatusCode::NOT_FOUND, -32000);
    assert_eq!(h.ep.stats().sessions, 2);
}

// ---------------------------------------------------------------- endings

#[test]
fn closing_the_stream_ends_the_session() {
    let mut h = H::new(config());
    let s = h.open(V);
    let other = h.open(V);
    // A request in flight when the client goes away is cancelled for the application.
    assert_accepted(&h.post_to(
        &s.post_url,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ));
    let (_, id, _) = h.take_requests().remove(0);
    h.ep.stream_closed(h.now, s.stream);
    while let Some(e) = h.ep.poll_event() {
        h.events.push(e);
    }
    assert!(
        h.events
            .iter()
            .any(|e| e.session == s.sid && matches!(e.event, Event::Closed(_))),
        "{:?}",
        h.events
    );
    assert!(h.ep.session(s.sid).is_none());
    assert!(h.ep.respond(h.now, s.sid, &id, raw("{}")).is_err());
    assert_rpc_error(
        &h.post_to(&s.post_url, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
        StatusCode::NOT_FOUND,
        -32000,
    );
    let st = h.ep.stats();
    assert_eq!(
        (st.sessions, st.open_streams, st.routed_requests),
        (1, 1, 0)
    );
    assert_eq!(st.sessions_closed, 1);
    // The other session is untouched.
    assert_accepted(&h.post_to(
        &other.post_url,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ));
    assert_eq!(h.messages(other.stream)[0]["id"], 2);
}

#[test]
fn the_application_closing_the_session_ends_the_stream() {
    let mut h = H::new(config());
    let s = h.open(V);
    h.ep.close_session(h.now, s.sid).unwrap();
    let (_, closed) = h.pull(s.stream);
    assert!(closed);
    assert!(h.ep.session(s.sid).is_none());
    assert_eq!(h.ep.stats().sessions, 0);
}

#[test]
fn a_session_without_a_handshake_expires_even_with_its_stream_open() {
    let mut h = H::new(config().handshake_timeout(Duration::from_secs(10)));
    let s = h.connect();
    let ready = h.open(V);
    assert_eq!(h.ep.poll_timeout(), Some(h.now + Duration::from_secs(10)));
    h.advance(Duration::from_secs(11));
    assert!(h.ep.session(s.sid).is_none());
    assert_eq!(h.pull(s.stream), (Vec::new(), true), "its stream ends");
    assert_eq!(h.ep.stats().sessions_expired, 1);
    // A session past its handshake stays while its stream is open.
    assert!(h.ep.session(ready.sid).is_some());
    h.advance(Duration::from_secs(24 * 3600));
    assert!(h.ep.session(ready.sid).is_some());
    assert_eq!(h.ep.stats().sessions, 1);
}

#[test]
fn a_slow_client_is_cut_off_and_its_session_ends() {
    let mut h = H::new(config().max_stream_buffer(300));
    let s = h.open(V);
    for n in 0..10 {
        let params = raw(&format!(r#"{{"level":"info","data":{n}}}"#));
        // Once the stream is cut, the session is gone and the rest are refused.
        let _ =
            h.ep.notify(h.now, s.sid, "notifications/message", Some(params));
    }
    let (_, closed) = h.pull(s.stream);
    assert!(closed);
    assert_eq!(h.ep.stats().slow_streams_cut, 1);
    assert!(h.ep.session(s.sid).is_none());
    assert_rpc_error(
        &h.post_to(&s.post_url, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
        StatusCode::NOT_FOUND,
        -32000,
    );
}

#[test]
fn legacy_paths_are_not_found_when_the_transport_is_off() {
    let mut h = H::new(config().legacy_sse(None));
    assert_eq!(h.get_sse("/sse").status(), StatusCode::NOT_FOUND);
    let url = format!("/messages?sessionId={:032x}", 1);
    assert_eq!(
        h.post_to(&url, &init_body(V)).status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(h.ep.stats().sessions_created, 0);
    // And with it on, other paths still are.
    let mut h = H::new(config());
    assert_eq!(h.get_sse("/sse/x").status(), StatusCode::NOT_FOUND);
    assert_eq!(h.get_sse("/").status(), StatusCode::NOT_FOUND);
}
