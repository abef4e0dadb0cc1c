//! Sessions shared by several instances: an instance takes over (adopts) a handshake-era
//! session another opened, its streams are numbered apart from every other instance's, and
//! a shared event store learns where each POST stream ends.
#![cfg(feature = "http")]

#[path = "common/endpoint.rs"]
mod endpoint;

use std::sync::{Arc, Mutex};

use endpoint::EndpointExt;
use http::request::Parts;
use http::{Response, StatusCode};
use mcp_proto::codec::sse::SseDecoder;
use mcp_proto::http::{
    Body, Endpoint, EndpointConfig, EventStore, MemoryEventStore, SessionId, SessionOwner,
    SessionSnapshot, StreamId, StreamPoll, last_event_id, request_instance, stream_instance,
    stream_is_standalone,
};
use mcp_proto::session::{Config, Event};
use mcp_proto::{ErrorKind, Instant, ProtocolVersion, RequestId};
use serde_json::json;
use serde_json::value::RawValue;

const V: &str = "2025-11-25";
const NOW: Instant = Instant::ZERO;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn config(instance: u32) -> EndpointConfig {
    EndpointConfig::new(
        Config::new("shared", "1.0").capabilities(raw(r#"{"tools":{},"logging":{}}"#)),
    )
    .instance(instance)
}

fn request(method: &str, sid: Option<&str>, owner: Option<&str>) -> Parts {
    let mut b = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", V);
    }
    let (mut parts, ()) = b.body(()).unwrap().into_parts();
    if let Some(o) = owner {
        parts.extensions.insert(SessionOwner(o.to_owned()));
    }
    parts
}

fn init() -> String {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":V,"capabilities":{"roots":{}},
        "clientInfo":{"name":"roaming","version":"3"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Opens a session on `ep` (as `owner`) and returns its id.
fn open(ep: &mut Endpoint, owner: Option<&str>) -> String {
    let r = ep.handle_request(
        NOW,
        &request("POST", None, owner),
        init().as_bytes(),
        Some(0xabcd_0001),
    );
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let r = ep.handle_request(
        NOW,
        &request("POST", Some(&sid), owner),
        INITIALIZED.as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    while ep.poll_event().is_some() {}
    sid
}

fn pull(ep: &mut Endpoint, stream: StreamId) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    loop {
        match ep.poll_stream(stream, &mut out) {
            StreamPoll::Data(_) => {}
            StreamPoll::Pending => return (out, false),
            StreamPoll::Closed => return (out, true),
            other => panic!("{other:?}"),
        }
    }
}

fn event_ids(bytes: &[u8]) -> Vec<String> {
    let mut d = SseDecoder::new(1 << 20);
    d.push(bytes);
    let mut out = Vec::new();
    while let Some(e) = d.next_event() {
        out.push(e.unwrap().id);
    }
    out
}

/// Answers the one request the application was handed with an empty tool list.
fn answer(ep: &mut Endpoint) -> (SessionId, RequestId) {
    let mut got = None;
    while let Some(e) = ep.poll_event() {
        if let Event::Request(r) = e.event {
            got = Some((e.session, r.id));
        }
    }
    let (sid, id) = got.expect("a request reached the application");
    ep.respond(NOW, sid, &id, raw(r#"{"tools":[]}"#)).unwrap();
    (sid, id)
}

fn stream_of(r: &Response<Body>) -> StreamId {
    r.body().stream().expect("a streamed body")
}

#[test]
fn another_instance_adopts_a_session_and_serves_it() {
    let mut a = Endpoint::new(config(1));
    let mut b = Endpoint::new(config(2));
    let sid = open(&mut a, None);
    let id = SessionId::parse(&sid).unwrap();
    let snapshot = a
        .session_snapshot(id)
        .expect("a ready session has a snapshot");
    assert_eq!(snapshot.version, ProtocolVersion::V2025_11_25);
    assert!(snapshot.client_info.get().contains("roaming"));
    assert!(snapshot.client_capabilities.get().contains("roots"));

    let list = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let parts = request("POST", Some(&sid), None);
    assert_eq!(a.missing_session(&parts), None, "A holds it");
    assert_eq!(b.missing_session(&parts), Some(id), "B does not");
    // Without adopting it, B answers 404 like for any unknown session.
    assert_eq!(
        b.handle_request(NOW, &parts, list.as_bytes(), None)
            .status(),
        404
    );

    b.adopt_session(NOW, id, snapshot.clone()).unwrap();
    assert_eq!(b.missing_session(&parts), None);
    match b.poll_event().map(|e| e.event) {
        Some(Event::Ready {
            version, peer_info, ..
        }) => {
            assert_eq!(version, ProtocolVersion::V2025_11_25);
            assert!(peer_info.get().contains("roaming"));
        }
        other => panic!("expected Ready first, got {other:?}"),
    }
    assert_eq!(b.stats().sessions_adopted, 1);
    let err = b.adopt_session(NOW, id, snapshot).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyConnected);

    // B serves the session: its stream is numbered in B's range.
    let r = b.handle_request(NOW, &parts, list.as_bytes(), None);
    assert_eq!(r.status(), 200);
    let s = stream_of(&r);
    let (sid_b, _) = answer(&mut b);
    assert_eq!(sid_b, id);
    let (bytes, closed) = pull(&mut b, s);
    assert!(closed);
    let ids = event_ids(&bytes);
    assert!(!ids.is_empty());
    for e in &ids {
        let (stream, _) = e
            .split_once('-')
            .map(|(l, q)| (l.parse::<u64>().unwrap(), q))
            .unwrap();
        assert_eq!(stream_instance(stream), 2, "event id {e}");
    }
    // A's own streams are in A's range.
    let r = a.handle_request(NOW, &parts, list.as_bytes(), None);
    let s = stream_of(&r);
    answer(&mut a);
    let (bytes, _) = pull(&mut a, s);
    let first = event_ids(&bytes).remove(0);
    let (l, _) = first.split_once('-').unwrap();
    assert_eq!(stream_instance(l.parse().unwrap()), 1);
}

#[test]
fn the_owner_travels_with_the_snapshot() {
    let mut a = Endpoint::new(config(1));
    let mut b = Endpoint::new(config(2));
    let sid = open(&mut a, Some("iss|alice|app"));
    let id = SessionId::parse(&sid).unwrap();
    let snapshot = a.session_snapshot(id).unwrap();
    assert_eq!(snapshot.owner.as_deref(), Some("iss|alice|app"));
    b.adopt_session(NOW, id, snapshot).unwrap();
    let ping = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let bob = request("POST", Some(&sid), Some("iss|bob|app"));
    assert_eq!(
        b.handle_request(NOW, &bob, ping.as_bytes(), None).status(),
        404
    );
    let alice = request("POST", Some(&sid), Some("iss|alice|app"));
    assert_eq!(
        b.handle_request(NOW, &alice, ping.as_bytes(), None)
            .status(),
        202
    );
}

#[test]
fn what_is_not_adoptable_is_refused() {
    let mut ep = Endpoint::new(config(1).max_sessions(1));
    let obj = |s: &str| raw(s);
    let bad_version = SessionSnapshot {
        version: ProtocolVersion::V2025_11_25,
        client_info: obj("[]"),
        client_capabilities: obj("{}"),
        owner: None,
    };
    let e = ep
        .adopt_session(NOW, SessionId::from_u128(7), bad_version)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    // A full table of busy sessions has no room.
    let sid = open(&mut ep, None);
    let get = {
        let mut p = request("GET", Some(&sid), None);
        p.headers.insert(
            "accept",
            http::HeaderValue::from_static("text/event-stream"),
        );
        p
    };
    assert_eq!(
        ep.handle_request(NOW, &get, b"", None).status(),
        200,
        "attached: not evictable"
    );
    let ok = SessionSnapshot {
        version: ProtocolVersion::V2025_11_25,
        client_info: obj(r#"{"name":"x","version":"1"}"#),
        client_capabilities: obj("{}"),
        owner: None,
    };
    let e = ep
        .adopt_session(NOW, SessionId::from_u128(8), ok)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    // A session whose `initialize` was answered has a snapshot already (its client may send
    // `notifications/initialized` to another instance); an unknown one has none.
    let mut fresh = Endpoint::new(config(1));
    let r = fresh.handle_request(
        NOW,
        &request("POST", None, None),
        init().as_bytes(),
        Some(9),
    );
    let sid = SessionId::parse(r.headers()["mcp-session-id"].to_str().unwrap()).unwrap();
    assert_eq!(fresh.session_snapshot(sid).unwrap().version.as_str(), V);
    assert!(fresh.session_snapshot(SessionId::from_u128(1)).is_none());
    // Requests that name no session, or belong to the stateless era, are not missing ones.
    assert_eq!(fresh.missing_session(&request("POST", None, None)), None);
    let all = Config::new("shared", "1.0").versions(&ProtocolVersion::ALL);
    let fresh = Endpoint::new(EndpointConfig::new(all));
    let mut modern = request("POST", Some("00112233445566778899aabbccddeeff"), None);
    modern.headers.insert(
        "mcp-protocol-version",
        http::HeaderValue::from_static("2026-07-28"),
    );
    assert_eq!(fresh.missing_session(&modern), None);
}

/// An event store that records what the endpoint tells it, beside a memory store.
struct Recording {
    inner: MemoryEventStore,
    ends: Arc<Mutex<Vec<u64>>>,
}

impl EventStore for Recording {
    fn store(&mut self, stream: u64, seq: u64, data: &[u8]) {
        self.inner.store(stream, seq, data);
    }
    fn replay(&self, stream: u64, after: u64, each: &mut dyn FnMut(u64, &[u8])) {
        self.inner.replay(stream, after, each);
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn bytes(&self) -> usize {
        self.inner.bytes()
    }
    fn end(&mut self, stream: u64) {
        self.ends.lock().unwrap().push(stream);
    }
}

#[test]
fn the_store_learns_where_post_streams_end_and_which_session_it_serves() {
    let ends = Arc::new(Mutex::new(Vec::new()));
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let (e, s) = (ends.clone(), sessions.clone());
    let mut ep = Endpoint::new(config(3).event_store(Arc::new(move |sid| {
        s.lock().unwrap().push(sid);
        Box::new(Recording {
            inner: MemoryEventStore::new(100, 1 << 20),
            ends: e.clone(),
        })
    })));
    let sid = open(&mut ep, None);
    let id = SessionId::parse(&sid).unwrap();
    assert_eq!(
        *sessions.lock().unwrap(),
        [id],
        "the factory is told the session"
    );
    let init_stream = ends.lock().unwrap().clone();
    assert_eq!(init_stream.len(), 1, "the initialize POST's stream ended");
    assert_eq!(stream_instance(init_stream[0]), 3);

    // A standalone GET stream does not end with a request.
    let mut get = request("GET", Some(&sid), None);
    get.headers.insert(
        "accept",
        http::HeaderValue::from_static("text/event-stream"),
    );
    assert_eq!(ep.handle_request(NOW, &get, b"", None).status(), 200);
    let list = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let r = ep.handle_request(
        NOW,
        &request("POST", Some(&sid), None),
        list.as_bytes(),
        None,
    );
    let s = stream_of(&r);
    answer(&mut ep);
    let (bytes, closed) = pull(&mut ep, s);
    assert!(closed);
    let last = event_ids(&bytes).pop().unwrap();
    let mut parts = request("GET", None, None);
    parts.headers.insert("last-event-id", last.parse().unwrap());
    let (stream, _) = last_event_id(&parts).unwrap();
    assert_eq!(*ends.lock().unwrap(), [init_stream[0], stream]);
}

#[test]
fn a_numbered_instance_marks_its_standalone_streams_and_resumes_them() {
    let mut ep = Endpoint::new(config(2));
    let sid = open(&mut ep, None);
    let id = SessionId::parse(&sid).unwrap();
    let mut get = request("GET", Some(&sid), None);
    get.headers.insert(
        "accept",
        http::HeaderValue::from_static("text/event-stream"),
    );
    let r = ep.handle_request(NOW, &get, b"", None);
    assert_eq!(r.status(), 200);
    let standalone = stream_of(&r);
    ep.with_session(NOW, id, |s| {
        s.notify("notifications/tools/list_changed", None).unwrap();
    })
    .unwrap();
    let (bytes, closed) = pull(&mut ep, standalone);
    assert!(!closed);
    let ids = event_ids(&bytes);
    let last = ids
        .iter()
        .rev()
        .find(|i| !i.is_empty())
        .expect("an event id");
    let mut parts = request("GET", None, None);
    parts.headers.insert("last-event-id", last.parse().unwrap());
    let (stream, seq) = last_event_id(&parts).unwrap();
    assert_eq!(stream_instance(stream), 2);
    assert!(
        stream_is_standalone(stream),
        "{last} marks a standalone stream"
    );

    // A POST's stream is not marked.
    let list = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let r = ep.handle_request(
        NOW,
        &request("POST", Some(&sid), None),
        list.as_bytes(),
        None,
    );
    let s = stream_of(&r);
    answer(&mut ep);
    let (bytes, _) = pull(&mut ep, s);
    let post_last = event_ids(&bytes).pop().unwrap();
    let mut parts = request("GET", None, None);
    parts
        .headers
        .insert("last-event-id", post_last.parse().unwrap());
    let (post_stream, _) = last_event_id(&parts).unwrap();
    assert_eq!(stream_instance(post_stream), 2);
    assert!(!stream_is_standalone(post_stream));

    // The standalone stream drops, a notification goes to the store, and resuming the
    // marked stream here replays it and goes on.
    ep.stream_closed(NOW, standalone);
    ep.with_session(NOW, id, |s| {
        s.notify("notifications/prompts/list_changed", None)
            .unwrap();
    })
    .unwrap();
    let mut resume = get.clone();
    resume
        .headers
        .insert("last-event-id", last.parse().unwrap());
    let r = ep.handle_request(NOW, &resume, b"", None);
    assert_eq!(r.status(), 200);
    let (bytes, closed) = pull(&mut ep, stream_of(&r));
    assert!(!closed, "the resumed standalone stream goes on");
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains("prompts/list_changed"), "{text}");
    assert!(
        text.contains(&format!("id: {stream}-{}", seq + 1)),
        "{text}"
    );
}

#[test]
fn a_numbered_instance_numbers_its_requests_to_the_client_in_its_range() {
    for instance in [1, 5] {
        let mut ep = Endpoint::new(config(instance));
        let sid = open(&mut ep, None);
        let id = SessionId::parse(&sid).unwrap();
        // The client declared roots: the server may ask for them.
        let sent = ep
            .with_session(NOW, id, |s| {
                s.send_request(NOW, "roots/list", None, Default::default())
            })
            .unwrap()
            .unwrap();
        assert_eq!(request_instance(&sent), Some(instance), "{sent:?}");
        // The answer, back on this instance, reaches the session as usual.
        let answer = json!({"jsonrpc":"2.0","id":sent,"result":{"roots":[]}}).to_string();
        let r = ep.handle_request(
            NOW,
            &request("POST", Some(&sid), None),
            answer.as_bytes(),
            None,
        );
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        let mut answered = false;
        while let Some(e) = ep.poll_event() {
            answered |= matches!(e.event, Event::Response { ref id, .. } if *id == sent);
        }
        assert!(answered);
    }
    // Instance 0 numbers them as ever.
    let mut ep = Endpoint::new(config(0));
    let sid = open(&mut ep, None);
    let id = SessionId::parse(&sid).unwrap();
    let sent = ep
        .with_session(NOW, id, |s| {
            s.send_request(NOW, "roots/list", None, Default::default())
        })
        .unwrap()
        .unwrap();
    assert_eq!(sent, RequestId::Number(1));
    assert_eq!(request_instance(&sent), None);
}

#[test]
fn a_numbered_instance_takes_a_request_as_the_end_of_a_handshake_finished_elsewhere() {
    for (instance, answered) in [(2, true), (0, false)] {
        let mut ep = Endpoint::new(config(instance));
        let r = ep.handle_request(
            NOW,
            &request("POST", None, None),
            init().as_bytes(),
            Some(0xabcd_0002),
        );
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        while ep.poll_event().is_some() {}
        // `notifications/initialized` went to another instance; `tools/list` comes here.
        let list = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
        let r = ep.handle_request(
            NOW,
            &request("POST", Some(&sid), None),
            list.as_bytes(),
            None,
        );
        let (_, body) = r.into_parts();
        let mut reached = false;
        while let Some(e) = ep.poll_event() {
            if let Event::Request(req) = e.event {
                reached = true;
                ep.respond(NOW, e.session, &req.id, raw(r#"{"tools":[]}"#))
                    .unwrap();
            }
        }
        let bytes = match body {
            Body::Stream(s) => pull(&mut ep, s).0,
            Body::Full(b) => b,
            other => panic!("{other:?}"),
        };
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(reached, answered, "instance {instance}: {text}");
        assert_eq!(
            text.contains("-32005") || text.contains("handshake"),
            !answered,
            "{text}"
        );
    }
}
