//! The Streamable HTTP endpoint driven with hand-built requests: every status rule, JSON and
//! SSE replies, stream routing, resumption, expiry and stateless mode.
#![cfg(feature = "http")]

#[path = "common/endpoint.rs"]
mod endpoint;

use endpoint::EndpointExt;
use http::request::Parts;
use http::{Response, StatusCode};
use mcp_proto::codec::sse::{SseDecoder, SseEvent};
use mcp_proto::http::{
    AllowList, Body, Endpoint, EndpointConfig, EventStore, MemoryEventStore, ResponseMode,
    SessionEvent, SessionId, StreamId, StreamPoll,
};
use mcp_proto::session::{Config, Event, RequestOptions};
use mcp_proto::{Duration, ErrorKind, Instant, ProtocolVersion, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn server_config() -> Config {
    Config::new("http-test-server", "1.0").capabilities(raw(r#"{"tools":{},"logging":{}}"#))
}

fn config() -> EndpointConfig {
    EndpointConfig::new(server_config())
}

const V: &str = "2025-11-25";

fn init_body(version: &str) -> String {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,
        "capabilities":{"roots":{},"sampling":{},"elicitation":{}},
        "clientInfo":{"name":"hand-built","version":"0"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

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
            rng: 0x0123_4567_89ab_cdef_0000_0000_0000_0000,
            events: Vec::new(),
        }
    }

    fn request(&mut self, parts: Parts, body: &str) -> Response<Body> {
        self.rng += 1;
        let r = self
            .ep
            .handle_request(self.now, &parts, body.as_bytes(), Some(self.rng));
        self.collect_events();
        r
    }

    fn post(&mut self, sid: Option<&str>, body: &str) -> Response<Body> {
        let mut b = post_builder();
        if let Some(sid) = sid {
            b = b
                .header("mcp-session-id", sid)
                .header("mcp-protocol-version", V);
        }
        self.request(parts(b), body)
    }

    fn get(&mut self, sid: &str, last_event_id: Option<&str>) -> Response<Body> {
        let mut b = http::Request::get("/mcp")
            .header("host", "localhost:8080")
            .header("accept", "text/event-stream")
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", V);
        if let Some(id) = last_event_id {
            b = b.header("last-event-id", id);
        }
        self.request(parts(b), "")
    }

    fn collect_events(&mut self) {
        while let Some(e) = self.ep.poll_event() {
            self.events.push(e);
        }
    }

    /// Opens a session (initialize + initialized) and returns its id.
    fn open(&mut self) -> String {
        let r = self.post(None, &init_body(V));
        assert_eq!(r.status(), 200);
        let sid = header(&r, "mcp-session-id").expect("a session id");
        let r = self.post(Some(&sid), INITIALIZED);
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        self.events.clear();
        sid
    }

    /// The inbound requests the application was handed since the last call.
    fn take_requests(&mut self) -> Vec<(SessionId, RequestId, String, Option<Box<RawValue>>)> {
        self.collect_events();
        let mut out = Vec::new();
        for e in std::mem::take(&mut self.events) {
            if let Event::Request(r) = e.event {
                out.push((e.session, r.id, r.method.to_string(), r.params));
            }
        }
        out
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

    fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        self.ep.handle_timeout(self.now);
        self.collect_events();
    }
}

fn post_builder() -> http::request::Builder {
    http::Request::post("/mcp")
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
}

fn parts(b: http::request::Builder) -> Parts {
    b.body(()).unwrap().into_parts().0
}

fn header(r: &Response<Body>, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

fn full(r: &Response<Body>) -> &[u8] {
    match r.body() {
        Body::Full(b) => b,
        other => panic!("expected a complete body, got {other:?}"),
    }
}

fn json_body(r: &Response<Body>) -> Value {
    assert_eq!(
        header(r, "content-type").as_deref(),
        Some("application/json")
    );
    serde_json::from_slice(full(r)).unwrap()
}

fn stream(r: &Response<Body>) -> StreamId {
    r.body().stream().expect("a streamed body")
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

/// The JSON messages of SSE events (the priming event has empty data and is skipped).
fn messages(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

fn ids(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.id.as_str()).collect()
}

fn tools_list(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}).to_string()
}

fn assert_rpc_error(r: &Response<Body>, status: StatusCode, code: i64) {
    assert_eq!(r.status(), status);
    let v = json_body(r);
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(v["jsonrpc"], "2.0");
}

// ---------------------------------------------------------------- happy paths

#[test]
fn initialize_in_json_mode_then_tools_list() {
    let mut h = H::new(config().response_mode(ResponseMode::Json));
    let r = h.post(None, &init_body(V));
    assert_eq!(r.status(), 200);
    let sid = header(&r, "mcp-session-id").unwrap();
    assert_eq!(sid.len(), 32);
    assert_eq!(
        sid,
        format!("{:032x}", h.rng),
        "the id is the hex of the random value"
    );
    let v = json_body(&r);
    assert_eq!(v["id"], 0);
    assert_eq!(v["result"]["protocolVersion"], V);
    assert_eq!(v["result"]["serverInfo"]["name"], "http-test-server");

    let r = h.post(Some(&sid), INITIALIZED);
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(r.body(), &Body::Empty);
    assert!(
        header(&r, "mcp-session-id").is_none(),
        "ids only on the initialize reply"
    );
    assert!(matches!(h.events[0].event, Event::Ready { .. }));
    assert_eq!(h.events[0].session, SessionId::parse(&sid).unwrap());

    let r = h.post(Some(&sid), &tools_list(1));
    assert_eq!(r.status(), 200);
    assert_eq!(
        header(&r, "content-type").as_deref(),
        Some("application/json")
    );
    let s = stream(&r);
    assert_eq!(h.pull(s), (Vec::new(), false), "waits for the response");
    let reqs = h.take_requests();
    assert_eq!(reqs.len(), 1);
    let (session, id, method, _) = &reqs[0];
    assert_eq!(method, "tools/list");
    h.ep.respond(h.now, *session, id, raw(r#"{"tools":[]}"#))
        .unwrap();
    assert_eq!(h.ep.poll_stream_ready(), Some(s));
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v, json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}}));
    assert_eq!(h.ep.stats().open_streams, 0);
}

#[test]
fn initialize_in_sse_mode_then_tools_list() {
    let mut h = H::new(config());
    let r = h.post(None, &init_body(V));
    assert_eq!(r.status(), 200);
    assert_eq!(
        header(&r, "content-type").as_deref(),
        Some("text/event-stream")
    );
    assert_eq!(header(&r, "cache-control").as_deref(), Some("no-cache"));
    let sid = header(&r, "mcp-session-id").unwrap();
    let events = sse(full(&r));
    assert_eq!(ids(&events), ["1-0", "1-1"]);
    assert_eq!(events[0].data, "", "priming event");
    assert_eq!(events[0].retry, Some(1000));
    let init = &messages(&events)[0];
    assert_eq!(init["result"]["protocolVersion"], V);

    assert_eq!(h.post(Some(&sid), INITIALIZED).status(), 202);
    let r = h.post(Some(&sid), &tools_list(7));
    assert_eq!(r.status(), 200);
    let s = stream(&r);
    let (bytes, closed) = h.pull(s);
    assert!(!closed);
    assert_eq!(ids(&sse(&bytes)), ["2-0"], "a new stream is primed at once");
    let (session, id, ..) = h.take_requests().remove(0);
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[{"name":"t"}]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed, "the POST stream ends after its response");
    let events = sse(&bytes);
    assert_eq!(ids(&events), ["2-1"]);
    assert_eq!(events[0].event, "message");
    assert_eq!(messages(&events)[0]["result"]["tools"][0]["name"], "t");
}

#[test]
fn older_versions_get_event_ids_but_no_priming() {
    let mut h = H::new(config());
    let r = h.post(None, &init_body("2025-03-26"));
    let events = sse(full(&r));
    assert_eq!(ids(&events), ["1-1"]);
    assert_eq!(
        messages(&events)[0]["result"]["protocolVersion"],
        "2025-03-26"
    );
}

#[test]
fn related_messages_ride_the_post_stream_and_unrelated_ones_the_get_stream() {
    let mut h = H::new(config());
    let sid = h.open();
    let g = h.get(&sid, None);
    assert_eq!(g.status(), 200);
    assert_eq!(
        header(&g, "content-type").as_deref(),
        Some("text/event-stream")
    );
    let gs = stream(&g);
    assert_eq!(ids(&sse(&h.pull(gs).0)), ["2-0"]);

    let call = json!({"jsonrpc":"2.0","id":"c1","method":"tools/call",
        "params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}});
    let r = h.post(Some(&sid), &call.to_string());
    let ps = stream(&r);
    let _ = h.pull(ps);
    let (session, id, ..) = h.take_requests().remove(0);
    let now = h.now;
    h.ep.report_progress(now, session, &id, 1.0, Some(2.0), None)
        .unwrap();
    let roots =
        h.ep.send_request(
            now,
            session,
            "roots/list",
            None,
            RequestOptions {
                related_to: Some(id.clone()),
                ..Default::default()
            },
        )
        .unwrap();
    h.ep.notify(now, session, "notifications/tools/list_changed", None)
        .unwrap();

    let post_msgs = messages(&sse(&h.pull(ps).0));
    assert_eq!(post_msgs.len(), 2, "{post_msgs:?}");
    assert_eq!(post_msgs[0]["method"], "notifications/progress");
    assert_eq!(post_msgs[1]["method"], "roots/list");
    let get_msgs = messages(&sse(&h.pull(gs).0));
    assert_eq!(
        get_msgs,
        [json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})]
    );

    // The client answers the server's request with a POST of its own: 202.
    let answer = json!({"jsonrpc":"2.0","id":post_msgs[1]["id"],"result":{"roots":[]}});
    assert_eq!(h.post(Some(&sid), &answer.to_string()).status(), 202);
    assert!(h.events.iter().any(|e| matches!(&e.event,
        Event::Response { id, result: Ok(_) } if *id == roots)));

    h.ep.respond(h.now, session, &id, raw(r#"{"content":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(ps);
    assert!(closed);
    assert_eq!(messages(&sse(&bytes))[0]["id"], "c1");
    assert!(!h.pull(gs).1, "the GET stream stays open");
}

#[test]
fn json_mode_sends_related_messages_to_the_get_stream() {
    let mut h = H::new(config().response_mode(ResponseMode::Json));
    let sid = h.open();
    let gs = stream(&h.get(&sid, None));
    let _ = h.pull(gs);
    let r = h.post(Some(&sid), &tools_list(3));
    let s = stream(&r);
    let (session, id, ..) = h.take_requests().remove(0);
    notify_working(&mut h, session, &id);
    let got = messages(&sse(&h.pull(gs).0));
    assert_eq!(got[0]["method"], "notifications/message");
    assert_eq!(h.pull(s), (Vec::new(), false));
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap()["id"], 3);
}

#[test]
fn batches_in_2025_03_26_and_not_later() {
    let mut h = H::new(config().response_mode(ResponseMode::Json));
    let r = h.post(None, &init_body("2025-03-26"));
    let sid = header(&r, "mcp-session-id").unwrap();
    let mut b = post_builder()
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-03-26");
    assert_eq!(h.request(parts(b), INITIALIZED).status(), 202);
    b = post_builder()
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-03-26");
    let batch = format!(
        "[{},{}]",
        tools_list(1),
        json!({"jsonrpc":"2.0","id":2,"method":"ping"})
    );
    let r = h.request(parts(b), &batch);
    let s = stream(&r);
    for (session, id, ..) in h.take_requests() {
        h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
            .unwrap();
    }
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert!(
        arr.iter()
            .any(|m| m["id"] == 1 && m["result"]["tools"].is_array())
    );
    assert!(arr.iter().any(|m| m["id"] == 2 && m["result"] == json!({})));

    let mut h = H::new(config());
    let sid = h.open();
    let r = h.post(Some(&sid), &batch);
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32600);
}

#[test]
fn cancelled_request_ends_its_stream_without_a_response() {
    let mut h = H::new(config());
    let sid = h.open();
    let s = stream(&h.post(Some(&sid), &tools_list(5)));
    let _ = h.pull(s);
    let (session, id, ..) = h.take_requests().remove(0);
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}});
    assert_eq!(h.post(Some(&sid), &cancel.to_string()).status(), 202);
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    assert!(messages(&sse(&bytes)).is_empty());
    assert!(
        h.ep.respond(h.now, session, &id, raw("{}"))
            .is_err_and(|e| e.kind() == ErrorKind::RequestCancelled)
    );
    assert_eq!(h.ep.stats().routed_requests, 0);
}

// ------------------------------------------------------------------ status rules

#[test]
fn foreign_origin_and_host_get_403() {
    let mut h = H::new(config());
    let r = h.request(
        parts(post_builder().header("origin", "https://evil.example")),
        &init_body(V),
    );
    assert_rpc_error(&r, StatusCode::FORBIDDEN, -32000);
    let r = h.request(
        parts(post_builder().header("origin", "null")),
        &init_body(V),
    );
    assert_eq!(r.status(), 403);
    let foreign_host = http::Request::post("/mcp")
        .header("host", "attacker.example:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    assert_eq!(h.request(parts(foreign_host), &init_body(V)).status(), 403);
    // Loopback names with any port pass, and so does a request without Origin.
    let ok = post_builder().header("origin", "http://127.0.0.1:5173");
    assert_eq!(h.request(parts(ok), &init_body(V)).status(), 200);
    let v6 = http::Request::post("/mcp")
        .header("host", "[::1]:9")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    assert_eq!(h.request(parts(v6), &init_body(V)).status(), 200);
    assert_eq!(h.ep.stats().sessions, 2);

    // An explicit allow-list for a public server.
    let mut h = H::new(
        config()
            .allowed_hosts(AllowList::Only(vec!["mcp.example.com".into()]))
            .allowed_origins(AllowList::Only(vec!["https://app.example.com".into()])),
    );
    let public = |origin: &str| {
        http::Request::post("/mcp")
            .header("host", "mcp.example.com")
            .header("origin", origin)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
    };
    assert_eq!(
        h.request(parts(public("https://app.example.com")), &init_body(V))
            .status(),
        200
    );
    assert_eq!(
        h.request(parts(public("http://localhost")), &init_body(V))
            .status(),
        403
    );
    assert_eq!(
        h.request(parts(post_builder()), &init_body(V)).status(),
        403,
        "localhost is not listed"
    );
}

#[test]
fn unknown_session_gets_404_and_missing_session_id_400() {
    let mut h = H::new(config());
    let _ = h.open();
    let r = h.post(Some("00000000000000000000000000000001"), &tools_list(1));
    assert_rpc_error(&r, StatusCode::NOT_FOUND, -32000);
    assert_eq!(
        h.post(Some("not-a-session-id"), &tools_list(1)).status(),
        404
    );
    let r = h.post(None, &tools_list(1));
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32000);
    assert!(
        json_body(&r)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    let get = http::Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream");
    assert_eq!(h.request(parts(get), "").status(), 400);
    assert_eq!(
        h.get("ffffffffffffffffffffffffffffffff", None).status(),
        404
    );
}

#[test]
fn bad_protocol_version_gets_400_and_absent_is_accepted() {
    let mut h = H::new(config());
    let sid = h.open();
    let with = |v: &str| {
        post_builder()
            .header("mcp-session-id", sid.as_str())
            .header("mcp-protocol-version", v)
    };
    let r = h.request(parts(with("1999-01-01")), &tools_list(1));
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32000);
    assert_eq!(
        h.request(parts(with("2026-07-28")), &tools_list(1))
            .status(),
        400,
        "modern era is another transport"
    );
    let absent = post_builder().header("mcp-session-id", sid.as_str());
    assert_eq!(
        h.request(parts(absent), &tools_list(2)).status(),
        200,
        "absent: assume 2025-03-26"
    );
    // A configuration without 2025-03-26 refuses it when named.
    let mut h = H::new(EndpointConfig::new(
        server_config().versions(&[ProtocolVersion::V2025_11_25]),
    ));
    let sid = h.open();
    let b = post_builder()
        .header("mcp-session-id", sid.as_str())
        .header("mcp-protocol-version", "2025-03-26");
    assert_eq!(h.request(parts(b), &tools_list(1)).status(), 400);
}

#[test]
fn wrong_content_type_gets_415() {
    let mut h = H::new(config());
    for ct in [Some("text/plain"), Some("application/jsonl"), None] {
        let mut b = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream");
        if let Some(ct) = ct {
            b = b.header("content-type", ct);
        }
        assert_rpc_error(
            &h.request(parts(b), &init_body(V)),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32000,
        );
    }
    let b = post_builder().header("content-type", "Application/JSON; charset=utf-8");
    assert_eq!(h.request(parts(b), &init_body(V)).status(), 200);
}

#[test]
fn accept_rules_give_406() {
    let mut h = H::new(config());
    let sid = h.open();
    for accept in [
        None,
        Some("application/json"),
        Some("text/event-stream"),
        Some("text/html"),
    ] {
        let mut b = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json");
        if let Some(a) = accept {
            b = b.header("accept", a);
        }
        assert_rpc_error(
            &h.request(parts(b), &init_body(V)),
            StatusCode::NOT_ACCEPTABLE,
            -32000,
        );
    }
    let b = http::Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(b), "").status(), StatusCode::NOT_ACCEPTABLE);
    let b = http::Request::get("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(b), "").status(), StatusCode::NOT_ACCEPTABLE);
    // JSON-only mode needs only application/json.
    let mut h = H::new(config().response_mode(ResponseMode::JsonOnly));
    let b = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json")
        .header("content-type", "application/json");
    assert_eq!(h.request(parts(b), &init_body(V)).status(), 200);
}

#[test]
fn oversize_body_gets_413() {
    let mut h = H::new(config().max_body_size(256));
    let big = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":V,"capabilities":{},"clientInfo":{"name":"x".repeat(300),"version":"0"}}});
    let r = h.post(None, &big.to_string());
    assert_rpc_error(&r, StatusCode::PAYLOAD_TOO_LARGE, -32000);
    assert_eq!(h.ep.stats().sessions, 0);
    assert_eq!(h.ep.max_body_size(), 256);
}

#[test]
fn malformed_body_gets_400_with_parse_error() {
    let mut h = H::new(config());
    let sid = h.open();
    for body in ["{not json", "", "[1,"] {
        let r = h.post(Some(&sid), body);
        assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32700);
        assert_eq!(json_body(&r)["id"], Value::Null);
    }
    // Valid JSON that is not JSON-RPC: -32600.
    assert_rpc_error(
        &h.post(Some(&sid), r#"{"hello":1}"#),
        StatusCode::BAD_REQUEST,
        -32600,
    );
    assert_rpc_error(&h.post(None, "{oops"), StatusCode::BAD_REQUEST, -32700);
    assert_rpc_error(&h.post(Some(&sid), "[]"), StatusCode::BAD_REQUEST, -32600);
}

#[test]
fn get_gets_405_where_disabled() {
    let mut h = H::new(config().standalone_stream(false).without_event_store());
    let sid = h.open();
    let r = h.get(&sid, None);
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow").as_deref(), Some("POST, DELETE"));
    let mut h = H::new(config().response_mode(ResponseMode::JsonOnly));
    let sid = h.open();
    assert_eq!(h.get(&sid, None).status(), 405);
    assert!(
        h.ep.send_request(
            h.now,
            SessionId::parse(&sid).unwrap(),
            "roots/list",
            None,
            RequestOptions::default()
        )
        .is_err()
    );
    // Without the standalone stream, GET still serves resumption (of the initialize POST's
    // stream here, which went out whole, so the store has forgotten it: an empty replay).
    let mut h = H::new(config().standalone_stream(false));
    let sid = h.open();
    assert_eq!(h.get(&sid, None).status(), 405);
    let r = h.get(&sid, Some("1-0"));
    assert_eq!(r.status(), 200);
    assert!(messages(&sse(full(&r))).is_empty());
    // Other methods.
    let put = http::Request::put("/mcp").header("host", "localhost");
    let r = h.request(parts(put), "");
    assert_eq!(r.status(), 405);
    assert_eq!(header(&r, "allow").as_deref(), Some("GET, POST, DELETE"));
}

#[test]
fn notifications_and_responses_get_202() {
    let mut h = H::new(config());
    let sid = h.open();
    let log = json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"}).to_string();
    let r = h.post(Some(&sid), &log);
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(r.body(), &Body::Empty);
    assert!(h.events.iter().any(|e| matches!(&e.event,
        Event::Notification { method, .. } if method == "notifications/roots/list_changed")));
    let stray = json!({"jsonrpc":"2.0","id":99,"result":{}}).to_string();
    assert_eq!(h.post(Some(&sid), &stray).status(), 202);
}

#[test]
fn second_standalone_stream_gets_409_and_duplicate_ids_400() {
    let mut h = H::new(config());
    let sid = h.open();
    let g = h.get(&sid, None);
    assert_eq!(g.status(), 200);
    assert_eq!(h.get(&sid, None).status(), StatusCode::CONFLICT);
    h.ep.stream_closed(h.now, stream(&g));
    assert_eq!(
        h.get(&sid, None).status(),
        200,
        "free again after a disconnect"
    );

    assert_eq!(h.post(Some(&sid), &tools_list(1)).status(), 200);
    let r = h.post(Some(&sid), &tools_list(1));
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32600);
    assert_eq!(json_body(&r)["id"], 1);
}

#[test]
fn a_deleted_session_answers_its_unanswered_json_requests_with_an_error() {
    let mut h = H::new(config().response_mode(ResponseMode::Json));
    let r = h.post(None, &init_body("2025-03-26"));
    let sid = header(&r, "mcp-session-id").unwrap();
    let b = || {
        post_builder()
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-03-26")
    };
    assert_eq!(h.request(parts(b()), INITIALIZED).status(), 202);
    let batch = format!("[{},{},{}]", tools_list(3), tools_list(1), tools_list(2));
    let batched = stream(&h.request(parts(b()), &batch));
    let single = stream(&h.request(parts(b()), &tools_list(4)));
    // (The session holds a batch's answers until the batch is answered whole: the one answer
    // given goes with the session.)
    for (session, id, ..) in h.take_requests() {
        if id == RequestId::Number(1) {
            h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
                .unwrap();
        }
    }
    assert_eq!(h.pull(batched), (Vec::new(), false), "two are unanswered");
    assert_eq!(h.pull(single), (Vec::new(), false));
    let del = http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(del), "").status(), StatusCode::NO_CONTENT);

    let (bytes, closed) = h.pull(batched);
    assert!(closed);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 3, "{v}");
    for (m, id) in arr.iter().zip([1, 2, 3]) {
        assert_eq!(m["id"], id, "the unanswered in the order of their ids: {v}");
        assert_eq!(m["error"]["message"], "the session ended before answering");
    }
    let (bytes, closed) = h.pull(single);
    assert!(closed);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["id"], 4);
    assert_eq!(v["error"]["message"], "the session ended before answering");
    assert_eq!(h.ep.stats().open_streams, 0);
}

#[test]
fn delete_ends_the_session() {
    let mut h = H::new(config());
    let sid = h.open();
    let s = stream(&h.post(Some(&sid), &tools_list(1)));
    let _ = h.pull(s);
    let del = http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    let r = h.request(parts(del), "");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e.event, Event::Closed(None)))
    );
    assert!(h.pull(s).1, "open streams of the session end");
    assert_eq!(h.post(Some(&sid), &tools_list(2)).status(), 404);
    let del = http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(del), "").status(), 404);
    let st = h.ep.stats();
    assert_eq!(
        (st.sessions, st.sessions_deleted, st.open_streams),
        (0, 1, 0)
    );

    let mut h = H::new(config().allow_delete(false));
    let sid = h.open();
    let del = http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(del), "").status(), 405);
}

#[test]
fn failed_initialize_opens_no_session() {
    let mut h = H::new(config());
    let bad = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":V}});
    let r = h.post(None, &bad.to_string());
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32602);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_eq!(h.ep.stats().sessions, 0);
    let batch = format!("[{}]", init_body(V));
    assert_rpc_error(&h.post(None, &batch), StatusCode::BAD_REQUEST, -32600);
}

// ------------------------------------------------------------------ resumability

#[test]
fn resume_after_disconnect_replays_exactly_the_missed_events() {
    let mut h = H::new(config());
    let sid = h.open();
    let session = SessionId::parse(&sid).unwrap();
    let g = h.get(&sid, None);
    let gs = stream(&g);
    let notify = |h: &mut H, n: u32| {
        let now = h.now;
        h.ep.notify(
            now,
            session,
            "notifications/message",
            Some(raw(&format!(r#"{{"level":"info","data":{n}}}"#))),
        )
        .unwrap();
    };
    for n in 1..=3 {
        notify(&mut h, n);
    }
    // The driver pulled everything, but the connection broke after the client had read the
    // priming event and messages 1 and 2 only.
    let (bytes, _) = h.pull(gs);
    let all = sse(&bytes);
    assert_eq!(ids(&all), ["2-0", "2-1", "2-2", "2-3"]);
    let mut client = SseDecoder::new(1 << 20);
    let cut = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .nth(2)
        .unwrap()
        .0
        + 2;
    client.push(&bytes[..cut]);
    let mut seen: Vec<Value> = Vec::new();
    while let Some(e) = client.next_event() {
        let e = e.unwrap();
        if !e.data.is_empty() {
            seen.push(serde_json::from_str(&e.data).unwrap());
        }
    }
    assert_eq!(client.last_event_id(), "2-2");
    h.ep.stream_closed(h.now, gs);
    assert_eq!(h.ep.poll_stream(gs, &mut Vec::new()), StreamPoll::Closed);

    // Two more while nobody listens: they wait in the event store.
    for n in 4..=5 {
        notify(&mut h, n);
    }
    assert_eq!(h.ep.stats().messages_dropped, 0);

    let r = h.get(&sid, Some(client.last_event_id()));
    assert_eq!(r.status(), 200);
    let rs = stream(&r);
    let (bytes, closed) = h.pull(rs);
    assert!(!closed, "a live stream goes on after the replay");
    let replayed = sse(&bytes);
    assert_eq!(
        ids(&replayed),
        ["2-3", "2-4", "2-5"],
        "no priming on a resumption"
    );
    seen.extend(messages(&replayed));
    notify(&mut h, 6);
    let live = sse(&h.pull(rs).0);
    assert_eq!(ids(&live), ["2-6"]);
    seen.extend(messages(&live));

    let data: Vec<i64> = seen
        .iter()
        .map(|m| m["params"]["data"].as_i64().unwrap())
        .collect();
    assert_eq!(data, [1, 2, 3, 4, 5, 6], "nothing lost, nothing twice");
    assert_eq!(h.ep.stats().replay_gaps, 0);
}

#[test]
fn a_post_stream_interrupted_before_its_response_is_resumed_with_get() {
    let mut h = H::new(config());
    let sid = h.open();
    let call = json!({"jsonrpc":"2.0","id":"slow","method":"tools/call",
        "params":{"name":"slow","arguments":{},"_meta":{"progressToken":1}}});
    let r = h.post(Some(&sid), &call.to_string());
    let ps = stream(&r);
    let (bytes, _) = h.pull(ps);
    let primed = sse(&bytes);
    assert_eq!(ids(&primed), ["2-0"]);
    h.ep.stream_closed(h.now, ps);

    // A disconnect is not a cancellation: the tool finishes and its output is stored.
    let (session, id, ..) = h.take_requests().remove(0);
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e.event, Event::Cancelled { .. }))
    );
    h.ep.report_progress(h.now, session, &id, 0.5, None, Some("half"))
        .unwrap();
    h.ep.respond(
        h.now,
        session,
        &id,
        raw(r#"{"content":[{"type":"text","text":"done"}]}"#),
    )
    .unwrap();

    let r = h.get(&sid, Some("2-0"));
    assert_eq!(r.status(), 200);
    let events = sse(full(&r));
    assert_eq!(ids(&events), ["2-1", "2-2"]);
    let msgs = messages(&events);
    assert_eq!(msgs[0]["method"], "notifications/progress");
    assert_eq!(msgs[1]["id"], "slow");
    assert_eq!(msgs[1]["result"]["content"][0]["text"], "done");
    // Replaying after the last event yields nothing more.
    assert!(sse(full(&h.get(&sid, Some("2-2")))).is_empty());
    // Unknown or malformed ids.
    assert_eq!(h.get(&sid, Some("99-1")).status(), 400);
    assert_eq!(h.get(&sid, Some("garbage")).status(), 400);
}

#[test]
fn resuming_a_live_post_stream_takes_it_over() {
    let mut h = H::new(config());
    let sid = h.open();
    let s1 = stream(&h.post(Some(&sid), &tools_list(4)));
    let _ = h.pull(s1);
    let s2 = stream(&h.get(&sid, Some("2-0")));
    assert_eq!(
        h.pull(s1),
        (Vec::new(), true),
        "the old connection is closed"
    );
    let (session, id, ..) = h.take_requests().remove(0);
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s2);
    assert!(closed);
    assert_eq!(ids(&sse(&bytes)), ["2-1"]);
}

#[test]
fn an_answer_its_body_did_not_deliver_is_stored_for_a_resumption() {
    let mut h = H::new(config());
    let sid = h.open();
    let answer = |h: &mut H| {
        let (session, id, ..) = h.take_requests().remove(0);
        h.ep.respond(
            h.now,
            session,
            &id,
            raw(r#"{"tools":[{"name":"multi\nline"}]}"#),
        )
        .unwrap();
    };
    let replayed = |h: &mut H, last: &str| {
        let r = h.get(&sid, Some(last));
        assert_eq!(r.status(), 200);
        let events = sse(full(&r));
        (
            ids(&events)
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            messages(&events),
        )
    };
    let expected =
        |id: i64| json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"multi\nline"}]}});

    // The client goes away before its answer is pulled: the answer goes to the store, and a
    // resumption gets it, as it was.
    let ps = stream(&h.post(Some(&sid), &tools_list(4)));
    answer(&mut h);
    assert_eq!(h.ep.stats().stored_events, 0);
    h.ep.stream_closed(h.now, ps);
    assert_eq!(h.ep.stats().stored_events, 1);
    assert_eq!(
        replayed(&mut h, "2-0"),
        (vec!["2-1".to_string()], vec![expected(4)])
    );

    // The client resumes while its first connection still holds the answer unpulled.
    let ps = stream(&h.post(Some(&sid), &tools_list(5)));
    answer(&mut h);
    assert_eq!(
        replayed(&mut h, "3-0"),
        (vec!["3-1".to_string()], vec![expected(5)])
    );
    // (The first connection still ends with what it held.)
    let (bytes, closed) = h.pull(ps);
    assert!(closed);
    assert_eq!(messages(&sse(&bytes)), [expected(5)]);

    // The server ends the connection from its side before it was pulled.
    let ps = stream(&h.post(Some(&sid), &tools_list(6)));
    answer(&mut h);
    h.ep.close_stream(h.now, ps);
    assert_eq!(
        replayed(&mut h, "4-0"),
        (vec!["4-1".to_string()], vec![expected(6)])
    );

    // A message before the answer is stored as it goes; the answer joins it when the client
    // goes away, and a resumption gets both, in order.
    let note = |h: &mut H| {
        let (session, id, ..) = h.take_requests().remove(0);
        notify_working(h, session, &id);
        h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
            .unwrap();
    };
    let ps = stream(&h.post(Some(&sid), &tools_list(7)));
    note(&mut h);
    let before = h.ep.stats().stored_events;
    h.ep.stream_closed(h.now, ps);
    assert_eq!(h.ep.stats().stored_events, before + 1, "the answer joins");
    let (ids, msgs) = replayed(&mut h, "5-0");
    assert_eq!(ids, ["5-1", "5-2"]);
    assert_eq!(msgs[0]["method"], "notifications/message");
    assert_eq!(msgs[1]["id"], 7);

    // Pulled with the last of its body, the answer's stream is delivered then, the message
    // with it: a connection that breaks before the body's end resumes to nothing, not to the
    // message without its answer.
    let ps = stream(&h.post(Some(&sid), &tools_list(8)));
    note(&mut h);
    let before = h.ep.stats().stored_events;
    let mut out = Vec::new();
    assert!(matches!(
        h.ep.poll_stream(ps, &mut out),
        StreamPoll::Data(_)
    ));
    assert_eq!(messages(&sse(&out))[1]["id"], 8);
    assert_eq!(
        h.ep.stats().stored_events,
        before - 1,
        "the message forgotten"
    );
    h.ep.stream_closed(h.now, ps);
    assert_eq!(replayed(&mut h, "6-0"), (Vec::new(), Vec::new()));
}

/// A `notifications/message` related to request `id`.
fn notify_working(h: &mut H, session: SessionId, id: &RequestId) {
    h.ep.notify_related(
        h.now,
        session,
        "notifications/message",
        Some(raw(r#"{"level":"info","data":"working"}"#)),
        id.clone(),
    )
    .unwrap();
}

/// A store implementing only the required methods: the memory store, keeping what it is told
/// to forget (the default).
struct Keeping(MemoryEventStore);

impl EventStore for Keeping {
    fn store(&mut self, stream: u64, seq: u64, data: &[u8]) {
        self.0.store(stream, seq, data)
    }
    fn replay(&self, stream: u64, after: u64, each: &mut dyn FnMut(u64, &[u8])) {
        self.0.replay(stream, after, each)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn bytes(&self) -> usize {
        self.0.bytes()
    }
}

#[test]
fn the_default_forget_keeps_everything() {
    let mut s = Keeping(MemoryEventStore::new(10, 100));
    s.store(1, 1, b"aa");
    s.forget(1);
    s.shed();
    assert_eq!((s.len(), s.bytes()), (1, 2));
    assert!(!s.forgets_delivered());
    assert!(MemoryEventStore::new(10, 100).forgets_delivered());
}

#[test]
fn a_store_that_keeps_delivered_streams_gets_every_answer_at_once() {
    let mut h = H::new(config().event_store(std::sync::Arc::new(|_| {
        Box::new(Keeping(MemoryEventStore::new(100, 1 << 20))) as Box<dyn EventStore>
    })));
    let sid = h.open();
    let before = h.ep.stats().stored_events; // (the initialize answer, kept)
    let ps = stream(&h.post(Some(&sid), &tools_list(4)));
    let (session, id, ..) = h.take_requests().remove(0);
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    assert_eq!(
        h.ep.stats().stored_events,
        before + 1,
        "stored as it went out"
    );
    let (_, closed) = h.pull(ps);
    assert!(closed);
    assert_eq!(h.ep.stats().stored_events, before + 1, "and kept");
    let r = h.get(&sid, Some("2-0"));
    assert_eq!(ids(&sse(full(&r))), ["2-1"]);
}

#[test]
fn a_post_stream_pulled_to_its_end_is_forgotten_by_the_store() {
    let mut h = H::new(config());
    let sid = h.open();
    assert_eq!(
        h.ep.stats().stored_events,
        0,
        "the initialize answer went out whole"
    );
    let ps = stream(&h.post(Some(&sid), &tools_list(4)));
    let (session, id, ..) = h.take_requests().remove(0);
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    // Answered but not yet pulled: the answer that ends the stream waits in its body, not in
    // the store (see the next test for when it does not get pulled).
    assert_eq!(h.ep.stats().stored_events, 0, "the answer");
    let mut out = Vec::new();
    assert!(matches!(
        h.ep.poll_stream(ps, &mut out),
        StreamPoll::Data(_)
    ));
    assert_eq!(ids(&sse(&out)), ["2-0", "2-1"]);
    assert_eq!(h.ep.stats().stored_events, 0);
    assert_eq!(h.ep.poll_stream(ps, &mut out), StreamPoll::Closed);
    let st = h.ep.stats();
    assert_eq!((st.stored_events, st.stored_bytes), (0, 0), "{st:?}");
    // A late resumption gets an empty stream, not an error.
    let r = h.get(&sid, Some("2-0"));
    assert_eq!(r.status(), 200);
    assert!(sse(full(&r)).is_empty());
    // The standalone stream's events are not the POST's: kept.
    let gs = stream(&h.get(&sid, None));
    let _ = h.pull(gs);
    h.ep.stream_closed(h.now, gs);
    h.ep.notify(h.now, session, "notifications/tools/list_changed", None)
        .unwrap();
    assert_eq!(h.ep.stats().stored_events, 1);
}

#[test]
fn eviction_is_reported_as_a_replay_gap() {
    let mut h = H::new(config().memory_event_store(2, 1 << 20));
    let sid = h.open();
    let session = SessionId::parse(&sid).unwrap();
    let gs = stream(&h.get(&sid, None));
    let _ = h.pull(gs);
    h.ep.stream_closed(h.now, gs);
    for _ in 0..4 {
        h.ep.notify(h.now, session, "notifications/tools/list_changed", None)
            .unwrap();
    }
    assert_eq!(h.ep.stats().stored_events, 2);
    let r = h.get(&sid, Some("2-0"));
    assert_eq!(ids(&sse(&h.pull(stream(&r)).0)), ["2-3", "2-4"]);
    assert_eq!(h.ep.stats().replay_gaps, 1);
}

// ------------------------------------------------------------------ expiry

#[test]
fn idle_sessions_keep_their_room_for_a_second_and_at_most_1024_of_them() {
    let mut h = H::new(config());
    let a = h.open();
    assert_eq!(h.ep.stats().warm_sessions, 1, "idle after its handshake");
    // A call makes it busy, then idle again: still one warm session.
    let s = stream(&h.post(Some(&a), &tools_list(1)));
    assert_eq!(h.ep.stats().warm_sessions, 0, "busy");
    for (session, id, ..) in h.take_requests() {
        h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
            .unwrap();
    }
    let _ = h.pull(s);
    assert_eq!(h.ep.stats().warm_sessions, 1);
    // Idle for a second: shed when the endpoint next settles a session.
    h.advance(Duration::from_millis(1500));
    let b = h.open();
    assert_eq!(h.ep.stats().warm_sessions, 1, "only the new one");
    // Never more than 1024, however fast sessions come.
    for _ in 0..1100 {
        h.open();
    }
    let st = h.ep.stats();
    assert_eq!((st.sessions, st.warm_sessions), (1102, 1024), "{st:?}");
    // A shed session serves its next request as before.
    for sid in [&a, &b] {
        let s = stream(&h.post(Some(sid), &tools_list(2)));
        for (session, id, ..) in h.take_requests() {
            h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
                .unwrap();
        }
        let (bytes, closed) = h.pull(s);
        assert!(closed);
        assert_eq!(
            messages(&sse(&bytes)),
            [json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})]
        );
    }
}

#[test]
fn idle_sessions_expire_and_free_their_memory() {
    let idle = Duration::from_secs(60);
    let mut h = H::new(
        config()
            .idle_timeout(idle)
            .handshake_timeout(Duration::from_secs(10)),
    );
    let a = h.open();
    let b = h.open();
    let c = h.open();
    // Some stored events and a detached stream waiting for a resumption.
    let gs = stream(&h.get(&b, None));
    let _ = h.pull(gs);
    h.ep.stream_closed(h.now, gs);
    h.ep.notify(
        h.now,
        SessionId::parse(&b).unwrap(),
        "notifications/tools/list_changed",
        None,
    )
    .unwrap();
    // Session c keeps a stream open: it is not idle.
    let cs = stream(&h.get(&c, None));
    // An abandoned handshake: initialize, never initialized.
    let r = h.post(None, &init_body(V));
    let abandoned = header(&r, "mcp-session-id").unwrap();

    let st = h.ep.stats();
    assert_eq!(st.sessions, 4);
    // (The initialize answers went out whole: only b's notification is stored.)
    assert!(st.stored_events >= 1 && st.stored_bytes > 0, "{st:?}");

    let deadline = h.ep.poll_timeout().unwrap();
    assert!(deadline <= h.now + Duration::from_secs(10));
    h.advance(Duration::from_secs(11));
    assert_eq!(
        h.post(Some(&abandoned), INITIALIZED).status(),
        404,
        "the abandoned handshake expired"
    );
    assert_eq!(h.ep.stats().sessions, 3);

    h.advance(idle);
    let st = h.ep.stats();
    assert_eq!(st.sessions, 1, "{st:?}");
    assert_eq!(st.sessions_expired, 3);
    assert_eq!(h.post(Some(&a), &tools_list(1)).status(), 404);
    assert_eq!(h.post(Some(&b), &tools_list(1)).status(), 404);
    let expired: Vec<_> = h
        .events
        .iter()
        .filter(
            |e| matches!(&e.event, Event::Closed(Some(err)) if err.kind() == ErrorKind::Timeout),
        )
        .map(|e| e.session)
        .collect();
    assert_eq!(expired.len(), 3);

    // c expires too once its stream is gone and it has been idle long enough.
    h.ep.stream_closed(h.now, cs);
    assert_eq!(h.ep.poll_timeout(), Some(h.now + idle));
    h.advance(idle);
    let st = h.ep.stats();
    assert_eq!(
        (
            st.sessions,
            st.open_streams,
            st.logical_streams,
            st.stored_events,
            st.stored_bytes,
            st.queued_bytes,
            st.routed_requests
        ),
        (0, 0, 0, 0, 0, 0, 0),
        "{st:?}"
    );
    assert_eq!(st.sessions_expired, 4);
    assert_eq!(h.ep.poll_timeout(), None);
}

#[test]
fn activity_postpones_expiry() {
    let idle = Duration::from_secs(60);
    let mut h = H::new(config().idle_timeout(idle));
    let sid = h.open();
    for _ in 0..5 {
        h.advance(Duration::from_secs(50));
        let r = h.post(
            Some(&sid),
            &json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string(),
        );
        assert_eq!(r.status(), 200);
        assert_eq!(messages(&sse(full(&r)))[0]["result"], json!({}));
    }
    h.advance(Duration::from_secs(61));
    assert_eq!(h.ep.stats().sessions, 0);
}

// ------------------------------------------------------------------ stateless

#[test]
fn stateless_mode_serves_each_post_with_a_fresh_ready_session() {
    let mut h = H::new(config().stateless(true).response_mode(ResponseMode::Json));
    let b = post_builder().header("mcp-protocol-version", "2025-06-18");
    let r = h.request(parts(b), &tools_list(1));
    assert_eq!(r.status(), 200);
    assert!(header(&r, "mcp-session-id").is_none());
    let s = stream(&r);
    h.collect_events();
    let Event::Ready { version, .. } = &h.events[0].event else {
        panic!("{:?}", h.events)
    };
    assert_eq!(
        *version,
        ProtocolVersion::V2025_06_18,
        "pre-initialized for the header's version"
    );
    let (session, id, method, _) = h.take_requests().remove(0);
    assert_eq!(method, "tools/list");
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).unwrap()["result"]["tools"],
        json!([])
    );
    h.collect_events();
    assert!(
        h.events
            .iter()
            .any(|e| e.session == session && matches!(e.event, Event::Closed(None)))
    );
    assert_eq!(h.ep.stats().sessions, 0, "the session ended with its POST");

    // Two concurrent POSTs never share a session, and request ids may repeat.
    let r1 = h.request(parts(post_builder()), &tools_list(1));
    let r2 = h.request(parts(post_builder()), &tools_list(1));
    let reqs = h.take_requests();
    assert_eq!(reqs.len(), 2);
    assert_ne!(reqs[0].0, reqs[1].0);
    h.ep.stream_closed(h.now, stream(&r1));
    h.ep.stream_closed(h.now, stream(&r2));
    assert_eq!(
        h.ep.stats().sessions,
        0,
        "a disconnect ends a stateless session"
    );

    // initialize is answered, without a session id; notifications get 202; GET/DELETE 405;
    // a session id header is ignored.
    let r = h.post(None, &init_body(V));
    assert_eq!(json_body(&r)["result"]["protocolVersion"], V);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_eq!(h.post(None, INITIALIZED).status(), 202);
    assert_eq!(
        h.get("00000000000000000000000000000001", None).status(),
        405
    );
    let r = h.post(
        Some("00000000000000000000000000000001"),
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    );
    assert_eq!(json_body(&r)["result"], json!({}));
    let del = http::Request::delete("/mcp").header("host", "localhost");
    assert_eq!(h.request(parts(del), "").status(), 405);
    assert_eq!(h.ep.stats().sessions, 0);
}

#[test]
fn stateless_sse_carries_related_notifications_without_ids() {
    let mut h = H::new(config().stateless(true));
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"t","arguments":{},"_meta":{"progressToken":"p"}}});
    let b = post_builder().header("mcp-protocol-version", V);
    let s = stream(&h.request(parts(b), &call.to_string()));
    let (session, id, ..) = h.take_requests().remove(0);
    h.ep.report_progress(h.now, session, &id, 1.0, None, None)
        .unwrap();
    h.ep.respond(h.now, session, &id, raw(r#"{"content":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    let events = sse(&bytes);
    assert!(
        events.iter().all(|e| e.id.is_empty()),
        "no resumability without sessions"
    );
    let msgs = messages(&events);
    assert_eq!(msgs[0]["method"], "notifications/progress");
    assert_eq!(msgs[1]["id"], 1);
    assert!(
        h.ep.send_request(
            h.now,
            session,
            "roots/list",
            None,
            RequestOptions::default()
        )
        .is_err(),
        "the session ended with its POST"
    );
}

/// A stateless POST's `tools/call`, on the SSE reply of its own POST: (stream, session, id).
fn stateless_call(h: &mut H, id: i64) -> (StreamId, SessionId, RequestId) {
    let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"t","arguments":{}}});
    let b = post_builder().header("mcp-protocol-version", V);
    let s = stream(&h.request(parts(b), &call.to_string()));
    let (session, id, ..) = h.take_requests().remove(0);
    (s, session, id)
}

/// The handler of `id` on `session` asks the client for its roots (a request related to it).
fn ask_roots(h: &mut H, session: SessionId, id: &RequestId) -> RequestId {
    let opts = RequestOptions {
        related_to: Some(id.clone()),
        ..RequestOptions::default()
    };
    h.ep.send_request(h.now, session, "roots/list", None, opts)
        .expect("a stateless session with an SSE reply may ask its client")
}

/// The outcomes of the server's own requests the application was handed since the last call.
fn take_responses(h: &mut H) -> Vec<(SessionId, RequestId, Result<Value, ErrorKind>)> {
    h.collect_events();
    let mut out = Vec::new();
    for e in std::mem::take(&mut h.events) {
        if let Event::Response { id, result } = e.event {
            let result = result
                .map(|r| serde_json::from_str(r.get()).unwrap())
                .map_err(|e| e.kind());
            out.push((e.session, id, result));
        }
    }
    out
}

#[test]
fn a_stateless_handler_asks_its_client_on_the_post_stream_and_gets_the_answer_posted_back() {
    let mut h = H::new(config().stateless(true));
    let (s, session, call) = stateless_call(&mut h, 1);
    let asked = ask_roots(&mut h, session, &call);
    let RequestId::Number(n) = asked else {
        panic!("{asked:?}")
    };
    assert!(
        (1 << 52..1 << 53).contains(&n),
        "an unpredictable id JavaScript reads exactly: {n}"
    );
    let (bytes, closed) = h.pull(s);
    assert!(!closed, "the call is not answered yet");
    let msgs = messages(&sse(&bytes));
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["method"], "roots/list");
    assert_eq!(msgs[0]["id"], n);

    // The client answers on a POST of its own, without a session (none was ever issued).
    let answer = json!({"jsonrpc":"2.0","id":n,"result":{"roots":[{"uri":"file:///a"}]}});
    let b = post_builder().header("mcp-protocol-version", V);
    assert_eq!(h.request(parts(b), &answer.to_string()).status(), 202);
    let got = take_responses(&mut h);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, session);
    assert_eq!(got[0].1, asked);
    assert_eq!(got[0].2.as_ref().unwrap()["roots"][0]["uri"], "file:///a");

    // The same answer again reaches nobody; the call ends the POST and its session.
    let dropped = h.ep.stats().messages_dropped;
    let b = post_builder().header("mcp-protocol-version", V);
    assert_eq!(h.request(parts(b), &answer.to_string()).status(), 202);
    assert!(take_responses(&mut h).is_empty());
    assert_eq!(h.ep.stats().messages_dropped, dropped + 1);
    h.ep.respond(h.now, session, &call, raw(r#"{"content":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    assert_eq!(messages(&sse(&bytes))[0]["id"], 1);
    assert_eq!(h.ep.stats().sessions, 0);
}

#[test]
fn stateless_answers_reach_only_the_session_that_asked() {
    let mut h = H::new(config().stateless(true));
    // Two POSTs with the same client-chosen id: their sessions' requests never share an id.
    let (s1, a, call_a) = stateless_call(&mut h, 7);
    let (s2, b, call_b) = stateless_call(&mut h, 7);
    let ask_a = ask_roots(&mut h, a, &call_a);
    let ask_b = ask_roots(&mut h, b, &call_b);
    assert_ne!(ask_a, ask_b);
    h.pull(s1);
    h.pull(s2);

    // A guessed id reaches nobody; a batch (2025-03-26) is split between the two sessions.
    let b_parts = || parts(post_builder().header("mcp-protocol-version", "2025-03-26"));
    let guess = json!({"jsonrpc":"2.0","id":(1i64 << 52) + 5,"result":{"roots":[]}});
    assert_eq!(h.request(b_parts(), &guess.to_string()).status(), 202);
    assert!(take_responses(&mut h).is_empty());
    let batch = json!([
        {"jsonrpc":"2.0","id":ask_b,"error":{"code":-32601,"message":"no roots here"}},
        {"jsonrpc":"2.0","id":ask_a,"result":{"roots":[]}},
    ]);
    assert_eq!(h.request(b_parts(), &batch.to_string()).status(), 202);
    let mut got = take_responses(&mut h);
    got.sort_by_key(|(s, ..)| *s != a);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0, &got[0].1), (a, &ask_a));
    assert_eq!(got[0].2.as_ref().unwrap()["roots"], json!([]));
    assert_eq!((got[1].0, &got[1].1), (b, &ask_b));
    assert_eq!(got[1].2, Err(ErrorKind::MethodNotFound));

    // A client that goes away ends its session: an answer after that reaches nobody.
    let ask_a2 = ask_roots(&mut h, a, &call_a);
    h.ep.stream_closed(h.now, s1);
    take_responses(&mut h);
    let late = json!({"jsonrpc":"2.0","id":ask_a2,"result":{"roots":[]}});
    assert_eq!(h.request(b_parts(), &late.to_string()).status(), 202);
    assert!(take_responses(&mut h).is_empty());
    assert_eq!(h.ep.stats().sessions, 1);
}

#[test]
fn a_stateless_request_needs_the_sse_stream_of_the_post_it_serves() {
    // Unrelated to the request it serves: failed at once, never sent.
    let mut h = H::new(config().stateless(true));
    let (s, session, _call) = stateless_call(&mut h, 1);
    let id =
        h.ep.send_request(
            h.now,
            session,
            "roots/list",
            None,
            RequestOptions::default(),
        )
        .unwrap();
    let got = take_responses(&mut h);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0, &got[0].1), (session, &id));
    assert_eq!(got[0].2, Err(ErrorKind::TransportError));
    assert!(messages(&sse(&h.pull(s).0)).is_empty());

    // A JSON reply cannot carry a request: the session sends none, and assumes no capability.
    let mut h = H::new(config().stateless(true).response_mode(ResponseMode::Json));
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"t","arguments":{}}});
    h.request(parts(post_builder()), &call.to_string());
    let (session, call, ..) = h.take_requests().remove(0);
    assert_eq!(
        h.ep.session(session)
            .unwrap()
            .peer_capabilities()
            .unwrap()
            .get(),
        "{}"
    );
    let opts = RequestOptions {
        related_to: Some(call),
        ..RequestOptions::default()
    };
    let refused =
        h.ep.send_request(h.now, session, "roots/list", None, opts)
            .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::TransportError);
}

#[test]
fn endpoint_is_send() {
    fn is_send<T: Send>() {}
    is_send::<Endpoint>();
}

#[test]
fn a_slow_client_is_cut_off_and_resumes_without_loss() {
    let mut h = H::new(config().max_stream_buffer(300));
    let sid = h.open();
    let session = SessionId::parse(&sid).unwrap();
    let gs = stream(&h.get(&sid, None));
    let (primed, _) = h.pull(gs);
    let mut client = SseDecoder::new(1 << 20);
    client.push(&primed);
    for n in 0..10 {
        let params = raw(&format!(r#"{{"level":"info","data":{n}}}"#));
        h.ep.notify(h.now, session, "notifications/message", Some(params))
            .unwrap();
    }
    let (bytes, closed) = h.pull(gs);
    assert!(closed, "the unpulled buffer went past its bound");
    assert_eq!(h.ep.stats().slow_streams_cut, 1);
    client.push(&bytes);
    let mut seen = Vec::new();
    while let Some(e) = client.next_event() {
        let e = e.unwrap();
        if !e.data.is_empty() {
            seen.push(serde_json::from_str::<Value>(&e.data).unwrap());
        }
    }
    assert!(seen.len() < 10);
    let r = h.get(&sid, Some(client.last_event_id()));
    seen.extend(messages(&sse(&h.pull(stream(&r)).0)));
    let data: Vec<i64> = seen
        .iter()
        .map(|m| m["params"]["data"].as_i64().unwrap())
        .collect();
    assert_eq!(data, (0..10).collect::<Vec<_>>());
}

#[test]
fn a_json_post_pending_when_the_session_ends_gets_an_error_body() {
    let mut h = H::new(config().response_mode(ResponseMode::Json));
    let sid = h.open();
    let s = stream(&h.post(Some(&sid), &tools_list(8)));
    let del = http::Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str());
    assert_eq!(h.request(parts(del), "").status(), 204);
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["id"], 8);
    assert_eq!(v["error"]["code"], -32000);
}

#[test]
fn the_application_can_close_a_session() {
    let mut h = H::new(config());
    let sid = h.open();
    let session = SessionId::parse(&sid).unwrap();
    let s = stream(&h.post(Some(&sid), &tools_list(1)));
    let _ = h.pull(s);
    let (_, id, ..) = h.take_requests().remove(0);
    h.ep.close_session(h.now, session).unwrap();
    assert_eq!(
        h.ep.stats().sessions,
        1,
        "in-flight requests are still answered"
    );
    h.ep.respond(h.now, session, &id, raw(r#"{"tools":[]}"#))
        .unwrap();
    let (bytes, closed) = h.pull(s);
    assert!(closed);
    assert_eq!(messages(&sse(&bytes))[0]["id"], 1);
    assert_eq!(h.ep.stats().sessions, 0);
    assert_eq!(h.ep.stats().sessions_closed, 1);
    assert_eq!(h.post(Some(&sid), &tools_list(2)).status(), 404);
}

#[test]
fn other_paths_are_not_found_and_the_path_is_configurable() {
    let req = |path: &str| {
        http::Request::post(path)
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let body = init_body(V);
    let now = Instant::from_micros(0);
    let mut ep = Endpoint::new(config().path("/rpc"));
    let r = ep.handle_request(now, &req("/mcp"), body.as_bytes(), Some(1));
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = ep.handle_request(now, &req("/rpc"), body.as_bytes(), Some(1));
    assert_eq!(r.status(), StatusCode::OK);
    let mut ep = Endpoint::new(config());
    let r = ep.handle_request(now, &req("/other"), body.as_bytes(), Some(1));
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[test]
fn no_randomness_opens_no_session() {
    let req = || {
        http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let body = init_body(V);
    let now = Instant::from_micros(0);
    let mut ep = Endpoint::new(config());
    let r = ep.handle_request(now, &req(), body.as_bytes(), None);
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().get("mcp-session-id").is_none());
    assert_eq!(ep.stats().sessions, 0);
    let r = ep.handle_request(now, &req(), body.as_bytes(), Some(7));
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(ep.stats().sessions, 1);
}

// ------------------------------------------------------------ abuse bounds

/// A POST of `n` pings in one batch, the last one repeating id 0.
fn ping_batch_with_duplicate(n: usize) -> String {
    let mut body = String::from("[");
    for i in 0..n {
        body.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}},"#));
    }
    body.push_str(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}]"#);
    body
}

#[test]
fn a_large_batch_with_a_duplicate_id_is_refused_naming_it() {
    let mut h = H::new(config().max_body_size(8 << 20));
    let r = h.post(None, &ping_batch_with_duplicate(50_000));
    assert_rpc_error(&r, StatusCode::BAD_REQUEST, -32600);
    assert_eq!(json_body(&r)["id"], 0);
    assert_eq!(h.ep.stats().sessions, 0);
}

/// A POST from `peer`, with a session or not.
fn post_from(h: &mut H, peer: Option<[u8; 4]>, sid: Option<&str>, body: &str) -> Response<Body> {
    let mut b = post_builder();
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", V);
    }
    let mut p = parts(b);
    if let Some(ip) = peer {
        p.extensions.insert(mcp_proto::http::PeerAddr(
            std::net::Ipv4Addr::from(ip).into(),
        ));
    }
    h.request(p, body)
}

/// Ten times the cap of abandoned `initialize`s (never followed by `initialized`) do not
/// lock anyone out: each new session evicts the least recently used idle one, an evicted
/// session gets 404 (its client initializes again), and a session with a request in
/// flight or an open stream is never evicted.
#[test]
fn at_the_session_cap_idle_sessions_are_evicted_not_new_ones_refused() {
    let mut h = H::new(config().max_sessions(50));
    let busy = h.open();
    let streaming = h.open();
    let idle = h.open();
    // `busy` has a request in flight; `streaming` holds its GET stream open.
    let call = h.post(Some(&busy), &tools_list(1));
    assert_eq!(call.status(), 200);
    assert_eq!(h.take_requests().len(), 1);
    let gs = h.get(&streaming, None);
    assert_eq!(gs.status(), 200);
    h.now = h.now + Duration::from_secs(1);
    for _ in 0..500 {
        let r = h.post(None, &init_body(V));
        assert_eq!(r.status(), 200, "{:?}", full(&r));
        h.now = h.now + Duration::from_millis(1);
    }
    let st = h.ep.stats();
    assert_eq!(st.sessions, 50);
    assert_eq!(st.sessions_evicted, 453, "{st:?}");
    // Evicted sessions were closed for the application, with a clear reason.
    assert!(h.events.iter().any(|e| matches!(
        &e.event,
        Event::Closed(Some(err)) if err.kind() == ErrorKind::LimitExceeded
    )));
    // A legitimate client is served.
    let fresh = h.open();
    assert_eq!(h.post(Some(&fresh), &tools_list(2)).status(), 200);
    // Abandoned handshakes, nearer their (handshake) expiry, went before the idle
    // established session; the busy ones are alive.
    assert_eq!(h.post(Some(&idle), &tools_list(3)).status(), 200);
    assert_eq!(h.post(Some(&busy), &tools_list(4)).status(), 200);
    assert_eq!(h.post(Some(&streaming), &tools_list(5)).status(), 200);

    // An `initialize` that is refused anyway evicts nobody.
    let st = h.ep.stats();
    let bad = init_body("not-a-version").replace("\"capabilities\"", "\"x\"");
    assert_eq!(h.post(None, &bad).status(), 400);
    assert_eq!(h.ep.stats().sessions_evicted, st.sessions_evicted);

    // Among established idle sessions, the least recently used goes first.
    let mut h = H::new(config().max_sessions(3));
    let a = h.open();
    h.now = h.now + Duration::from_secs(1);
    let b = h.open();
    h.now = h.now + Duration::from_secs(1);
    let c = h.open();
    h.now = h.now + Duration::from_secs(1);
    assert_eq!(
        h.post(Some(&a), INITIALIZED).status(),
        202,
        "a is used again"
    );
    let d = h.open();
    assert_eq!(
        h.post(Some(&b), &tools_list(1)).status(),
        404,
        "b was evicted"
    );
    for sid in [&a, &c, &d] {
        assert_eq!(h.post(Some(sid), INITIALIZED).status(), 202);
    }

    // When every session is busy, the new one is refused.
    let mut h = H::new(config().max_sessions(2));
    let a = h.open();
    let b = h.open();
    assert_eq!(h.post(Some(&a), &tools_list(1)).status(), 200);
    assert_eq!(h.get(&b, None).status(), 200);
    let r = h.post(None, &init_body(V));
    assert_rpc_error(&r, StatusCode::SERVICE_UNAVAILABLE, -32000);
    assert_eq!(h.ep.stats().sessions_evicted, 0);
}

/// With a per-peer share, one address's sessions evict only each other (429 when all of
/// them are busy); another address is not touched.
#[test]
fn a_peer_at_its_share_evicts_its_own_idle_sessions() {
    let mut h = H::new(config().max_sessions_per_peer(Some(3)));
    let other = post_from(&mut h, Some([10, 0, 0, 2]), None, &init_body(V));
    let other = header(&other, "mcp-session-id").unwrap();
    let mut mine = Vec::new();
    for _ in 0..10 {
        let r = post_from(&mut h, Some([10, 0, 0, 1]), None, &init_body(V));
        assert_eq!(r.status(), 200);
        mine.push(header(&r, "mcp-session-id").unwrap());
        h.now = h.now + Duration::from_millis(1);
    }
    let st = h.ep.stats();
    assert_eq!((st.sessions, st.sessions_evicted), (4, 7), "{st:?}");
    for (i, sid) in mine.iter().enumerate() {
        let status = post_from(&mut h, Some([10, 0, 0, 1]), Some(sid), INITIALIZED).status();
        assert_eq!(status, if i < 7 { 404 } else { 202 }, "session {i}");
    }
    assert_eq!(h.post(Some(&other), INITIALIZED).status(), 202);
    // All three busy: the peer's next session is refused, others still get theirs.
    for (n, sid) in mine[7..].iter().enumerate() {
        assert_eq!(h.post(Some(sid), &tools_list(n as i64)).status(), 200);
    }
    let r = post_from(&mut h, Some([10, 0, 0, 1]), None, &init_body(V));
    assert_rpc_error(&r, StatusCode::TOO_MANY_REQUESTS, -32000);
    let r = post_from(&mut h, Some([10, 0, 0, 3]), None, &init_body(V));
    assert_eq!(r.status(), 200);
    // Without an address, no share applies.
    let r = post_from(&mut h, None, None, &init_body(V));
    assert_eq!(r.status(), 200);
}

/// The events kept for resumption are bounded across sessions as well, in bytes and in
/// count, the oldest (of whichever session) dropped first.
#[test]
fn stored_events_are_bounded_in_total_oldest_first() {
    let big = "x".repeat(100_000);
    let mut h = H::new(
        config()
            .max_stored_bytes_total(1_000_000)
            .max_stored_events_total(10_000),
    );
    let mut sessions = Vec::new();
    for _ in 0..5 {
        let sid = h.open();
        let session = SessionId::parse(&sid).unwrap();
        let gs = stream(&h.get(&sid, None));
        let _ = h.pull(gs);
        h.ep.stream_closed(h.now, gs);
        sessions.push((sid, session));
    }
    // Four ~100 kB messages per session: 2 MB offered, 1 MB kept.
    for (_, session) in &sessions {
        for _ in 0..4 {
            let params = raw(&format!(r#"{{"level":"info","data":"{big}"}}"#));
            h.ep.notify(h.now, *session, "notifications/message", Some(params))
                .unwrap();
        }
    }
    let st = h.ep.stats();
    assert!(st.stored_bytes <= 1_000_000, "{st:?}");
    assert!(st.stored_bytes > 800_000, "{st:?}");
    // (The `initialize` answers went out whole: forgotten, not evicted.)
    assert_eq!(st.stored_events, 9, "{st:?}");
    assert_eq!(st.stored_events_evicted, 11, "{st:?}");
    // The first sessions lost everything (a gap on resumption), the last kept all.
    let r = h.get(&sessions[0].0, Some("2-0"));
    assert!(messages(&sse(&h.pull(stream(&r)).0)).is_empty());
    assert_eq!(h.ep.stats().replay_gaps, 1);
    let r = h.get(&sessions[4].0, Some("2-0"));
    assert_eq!(
        ids(&sse(&h.pull(stream(&r)).0)),
        ["2-1", "2-2", "2-3", "2-4"]
    );
    // Count bound too.
    let mut h = H::new(config().max_stored_events_total(6));
    for _ in 0..3 {
        let sid = h.open();
        let session = SessionId::parse(&sid).unwrap();
        let gs = stream(&h.get(&sid, None));
        let _ = h.pull(gs);
        h.ep.stream_closed(h.now, gs);
        for _ in 0..4 {
            h.ep.notify(h.now, session, "notifications/tools/list_changed", None)
                .unwrap();
        }
    }
    let st = h.ep.stats();
    assert_eq!(
        (st.stored_events, st.stored_events_evicted),
        (6, 6),
        "{st:?}"
    );
    // Ending sessions frees their share of the totals.
    h.advance(Duration::from_secs(3600));
    let st = h.ep.stats();
    assert_eq!((st.sessions, st.stored_events, st.stored_bytes), (0, 0, 0));
}
