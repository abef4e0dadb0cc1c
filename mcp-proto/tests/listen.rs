//! `subscriptions/listen` (2026-07-28) without IO: on a server session over a stream
//! (acknowledgement first, the subscription id on every message, the filter honoured and
//! respected, cancellation, the graceful end, the bounds), on a client session (no default
//! timeout, the server's end), and over the 2026-07-28 HTTP endpoint (an SSE reply held open,
//! closed by the client or by the server).

mod common;
#[path = "common/endpoint.rs"]
mod endpoint;

use common::*;
use endpoint::EndpointExt;
use http::StatusCode;
use http::request::Parts;
use mcp_proto::codec::sse::SseDecoder;
use mcp_proto::http::{Body, Endpoint, EndpointConfig, ResponseMode, StreamPoll};
use mcp_proto::session::{Change, Config, Discovery, Event, RequestOptions, Session};
use mcp_proto::{Duration, ErrorKind, ProtocolVersion, RequestId};
use serde_json::{Value, json};

const NOW: mcp_proto::Instant = mcp_proto::Instant::ZERO;
const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const CAPS: &str = r#"{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}}"#;

fn config(caps: &str) -> Config {
    Config::new("listen-server", "1")
        .capabilities(raw(caps))
        .versions(&ProtocolVersion::ALL)
}

fn server() -> Session {
    Session::server(config(CAPS))
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn listen_body(id: Value, filter: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": meta(), "notifications": filter}})
    .to_string()
}

fn listen(s: &mut Session, id: i64, filter: Value) {
    s.handle_bytes(
        NOW,
        format!("{}\n", listen_body(json!(id), filter)).as_bytes(),
    );
}

fn events(s: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

#[test]
fn the_acknowledgement_comes_first_and_states_what_is_honoured() {
    let mut s = Session::server(config(
        r#"{"tools":{"listChanged":true},"prompts":{},"resources":{"subscribe":true}}"#,
    ));
    listen(
        &mut s,
        1_767_225_600_000,
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": ["a://x"]}),
    );
    let out = collect(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        out[0]["params"],
        json!({
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["a://x"]},
            "_meta": {SUB: 1_767_225_600_000_i64}
        })
    );
    // The application sees the request (and may hold it); it stays in flight.
    let ev = events(&mut s);
    let [Event::Request(r)] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert_eq!(r.method, "subscriptions/listen");
    assert!(r.era.is_some());
    assert_eq!(s.inbound_in_flight(), 1);
    let (id, sub) = s.listeners().next().unwrap();
    assert_eq!(*id, RequestId::Number(1_767_225_600_000));
    assert!(sub.tools_list_changed && !sub.prompts_list_changed);
}

#[test]
fn each_listener_gets_what_it_asked_for_tagged_with_its_id() {
    let mut s = server();
    listen(&mut s, 1, json!({"toolsListChanged": true}));
    s.handle_bytes(
        NOW,
        format!(
            "{}\n",
            listen_body(
                json!("p"),
                json!({"promptsListChanged": true, "resourceSubscriptions": ["a://x"]})
            )
        )
        .as_bytes(),
    );
    let acks = collect(&mut s);
    assert_eq!(acks[0]["params"]["_meta"][SUB], 1);
    assert_eq!(acks[1]["params"]["_meta"][SUB], "p");

    assert_eq!(s.publish(&Change::ToolsListChanged), 1);
    assert_eq!(s.publish(&Change::PromptsListChanged), 1);
    assert_eq!(s.publish(&Change::ResourcesListChanged), 0, "nobody asked");
    assert_eq!(s.publish(&Change::ResourceUpdated("a://x".into())), 1);
    assert_eq!(s.publish(&Change::ResourceUpdated("a://y".into())), 0);
    let out = collect(&mut s);
    let seen: Vec<(Value, Value)> = out
        .iter()
        .map(|m| (m["method"].clone(), m["params"]["_meta"][SUB].clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (json!("notifications/tools/list_changed"), json!(1)),
            (json!("notifications/prompts/list_changed"), json!("p")),
            (json!("notifications/resources/updated"), json!("p")),
        ]
    );
    assert_eq!(out[2]["params"]["uri"], "a://x");
}

#[test]
fn a_cancelled_listener_hears_nothing_more_and_is_not_answered() {
    let mut s = server();
    listen(&mut s, 4, json!({"toolsListChanged": true}));
    let _ = collect(&mut s);
    let _ = events(&mut s);
    s.handle_bytes(
        NOW,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":4}}\n",
    );
    assert!(matches!(
        events(&mut s).as_slice(),
        [Event::Cancelled { id, .. }] if *id == RequestId::Number(4)
    ));
    assert_eq!(s.publish(&Change::ToolsListChanged), 0);
    assert_eq!(s.listeners().count(), 0);
    let e = s.respond(&RequestId::Number(4), raw("{}")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RequestCancelled);
    assert!(collect(&mut s).is_empty());
}

#[test]
fn the_server_ends_a_stream_with_its_result() {
    let mut s = server();
    listen(&mut s, 1, json!({"toolsListChanged": true}));
    listen(&mut s, 2, json!({"promptsListChanged": true}));
    let _ = collect(&mut s);
    let _ = events(&mut s);
    // The application ends one (whatever it passes, the result is the listen result).
    s.respond(&RequestId::Number(1), raw(r#"{"ignored":true}"#))
        .unwrap();
    let out = collect(&mut s);
    assert_eq!(
        out[0],
        json!({"jsonrpc": "2.0", "id": 1,
               "result": {"resultType": "complete", "_meta": {SUB: 1}}})
    );
    assert_eq!(s.publish(&Change::ToolsListChanged), 0);
    // Closing the session ends the others the same way, and the application is told.
    s.close(NOW);
    let out = collect(&mut s);
    assert_eq!(out[0]["id"], 2);
    assert_eq!(out[0]["result"]["_meta"][SUB], 2);
    let ev = events(&mut s);
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Cancelled { id, .. } if *id == RequestId::Number(2)))
    );
    assert!(matches!(ev.last(), Some(Event::Closed(None))), "{ev:?}");
}

#[test]
fn the_input_ending_ends_the_streams_too() {
    let mut s = server();
    listen(&mut s, 3, json!({"toolsListChanged": true}));
    let _ = collect(&mut s);
    s.handle_input_closed(NOW);
    let out = collect(&mut s);
    assert_eq!(out[0]["result"]["_meta"][SUB], 3);
    let ev = events(&mut s);
    assert!(matches!(ev.last(), Some(Event::Closed(None))), "{ev:?}");
    assert!(s.is_closed());
}

#[test]
fn refusals() {
    // A server with nothing to deliver does not have the method.
    let mut s = Session::server(config(r#"{"tools":{},"prompts":{}}"#));
    listen(&mut s, 1, json!({"toolsListChanged": true}));
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32601);
    // A filter is required and must be one.
    let mut s = server();
    s.handle_bytes(
        NOW,
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                   "params": {"_meta": meta()}})
        )
        .as_bytes(),
    );
    listen(&mut s, 3, json!({"toolsListChanged": 1}));
    let out = collect(&mut s);
    assert_eq!(
        (&out[0]["error"]["code"], &out[1]["error"]["code"]),
        (&json!(-32602), &json!(-32602))
    );
    assert_eq!(s.listeners().count(), 0);
    assert_eq!(s.inbound_in_flight(), 0);
    // A handshake-era session does not have it either.
    let mut s = server();
    s.handle_bytes(
        NOW,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{}}}\n",
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32601);
}

#[test]
fn listeners_are_bounded() {
    let mut c = config(CAPS);
    c.max_listeners = 2;
    let mut s = Session::server(c);
    for id in 1..=3 {
        listen(&mut s, id, json!({"toolsListChanged": true}));
    }
    let out = collect(&mut s);
    assert_eq!(out.len(), 3);
    assert_eq!(out[2]["id"], 3);
    assert_eq!(out[2]["error"]["code"], -32008);
    assert_eq!(s.listeners().count(), 2);
    // Once one ends, there is room again.
    s.respond(&RequestId::Number(1), raw("{}")).unwrap();
    listen(&mut s, 4, json!({"toolsListChanged": true}));
    assert_eq!(s.listeners().count(), 2);
}

#[test]
fn a_listener_that_falls_behind_is_ended_not_grown() {
    let mut c = config(CAPS);
    c.listener_backlog = 4;
    let mut s = Session::server(c);
    listen(&mut s, 7, json!({"toolsListChanged": true}));
    listen(&mut s, 8, json!({"promptsListChanged": true}));
    let _ = events(&mut s);
    // Nothing is transmitted: the acknowledgement and three changes fill listener 7's backlog.
    for _ in 0..3 {
        assert_eq!(s.publish(&Change::ToolsListChanged), 1);
    }
    assert_eq!(s.publish(&Change::ToolsListChanged), 0, "ended instead");
    assert_eq!(s.publish(&Change::ToolsListChanged), 0);
    // The other listener is untouched.
    assert_eq!(s.publish(&Change::PromptsListChanged), 1);
    let ev = events(&mut s);
    assert!(
        matches!(ev.as_slice(), [Event::Cancelled { id, reason: Some(_) }] if *id == RequestId::Number(7)),
        "{ev:?}"
    );
    let out = collect(&mut s);
    let methods: Vec<&str> = out.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
            "notifications/tools/list_changed",
            "notifications/tools/list_changed",
            "notifications/cancelled",
            "notifications/prompts/list_changed",
        ]
    );
    assert_eq!(out[5]["params"]["requestId"], 7);
    assert!(out[5]["params"].get("_meta").is_none());
    // A listener whose messages leave keeps its room: 100 changes, each transmitted.
    for _ in 0..100 {
        assert_eq!(s.publish(&Change::PromptsListChanged), 1);
        assert_eq!(collect(&mut s).len(), 1);
    }
}

#[test]
fn a_client_listens_without_a_timeout_and_hears_the_server_end_it() {
    let mut c = Session::client(
        client_config()
            .versions(&ProtocolVersion::ALL)
            .discovery(Discovery::Discover),
    );
    c.start(NOW).unwrap();
    // server/discover, answered.
    let out = collect(&mut c);
    assert_eq!(out[0]["method"], "server/discover");
    let discovered = json!({"jsonrpc": "2.0", "id": out[0]["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": serde_json::from_str::<Value>(CAPS).unwrap(),
        "ttlMs": 0, "cacheScope": "public", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}});
    c.handle_message(NOW, discovered.to_string().as_bytes());
    assert!(
        events(&mut c)
            .iter()
            .any(|e| matches!(e, Event::Ready { .. }))
    );
    let id = c
        .send_request(
            NOW,
            "subscriptions/listen",
            Some(raw(r#"{"notifications":{"toolsListChanged":true}}"#)),
            RequestOptions::default(),
        )
        .unwrap();
    let out = collect(&mut c);
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        c.poll_timeout(),
        None,
        "a listen stream has no default timeout"
    );
    c.handle_timeout(NOW + Duration::from_secs(3600));
    assert!(c.is_awaiting(&id));
    // Its notifications reach the application as any other.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                      "params": {"_meta": {SUB: id.to_string().parse::<i64>().unwrap()}}});
    c.handle_message(NOW, note.to_string().as_bytes());
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Notification { method, .. }] if method == "notifications/tools/list_changed"
    ));
    // The server ends it (stdio): the request's outcome is RequestCancelled.
    let cancelled = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id},\"reason\":\"behind\"}}}}"
    );
    c.handle_message(NOW, cancelled.as_bytes());
    let ev = events(&mut c);
    let [
        Event::Response {
            id: got,
            result: Err(e),
        },
    ] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*got, id);
    assert_eq!(e.kind(), ErrorKind::RequestCancelled);
    assert!(e.message().contains("behind"));
    assert!(!c.is_awaiting(&id));
}

// ------------------------------------------------------------------------------ over HTTP

fn endpoint(mode: ResponseMode) -> Endpoint {
    let mut c = EndpointConfig::new(config(CAPS));
    c.response_mode = mode;
    c.max_listen_streams = 2;
    c.max_stream_buffer = 4096;
    Endpoint::new(c)
}

fn post(accept: &str) -> Parts {
    http::Request::post("/mcp")
        .header("host", "localhost:8080")
        .header("accept", accept)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(())
        .unwrap()
        .into_parts()
        .0
}

const BOTH: &str = "application/json, text/event-stream";

/// The messages a stream has for now, and whether it ended.
fn pull(ep: &mut Endpoint, body: &Body) -> (Vec<Value>, bool) {
    let bytes = match body {
        Body::Full(b) => return (messages(b), true),
        Body::Stream(id) => {
            let mut out = Vec::new();
            let closed = loop {
                match ep.poll_stream(*id, &mut out) {
                    StreamPoll::Data(_) => {}
                    StreamPoll::Pending => break false,
                    _ => break true,
                }
            };
            return (messages(&out), closed);
        }
        Body::Empty => Vec::new(),
        _ => panic!(),
    };
    (messages(&bytes), true)
}

fn messages(b: &[u8]) -> Vec<Value> {
    let mut d = SseDecoder::new(1 << 20);
    d.push(b);
    let mut out = Vec::new();
    while let Some(ev) = d.next_event() {
        let ev = ev.unwrap();
        if !ev.data.is_empty() {
            out.push(serde_json::from_str(&ev.data).unwrap());
        }
    }
    out
}

/// Publishes `change` to every session of the endpoint (what the service does).
fn publish(ep: &mut Endpoint, change: &Change) -> usize {
    let sids: Vec<_> = ep.sessions().collect();
    sids.into_iter()
        .map(|sid| ep.with_session(NOW, sid, |s| s.publish(change)).unwrap())
        .sum()
}

#[test]
fn over_http_a_listen_is_an_sse_reply_held_open_whatever_the_reply_mode() {
    for mode in [ResponseMode::Json, ResponseMode::Sse] {
        let mut ep = endpoint(mode);
        let tools = ep.handle_request(
            NOW,
            &post(BOTH),
            listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
            None,
        );
        let prompts = ep.handle_request(
            NOW,
            &post(BOTH),
            listen_body(json!(2), json!({"promptsListChanged": true})).as_bytes(),
            None,
        );
        for r in [&tools, &prompts] {
            assert_eq!(r.status(), StatusCode::OK);
            assert_eq!(r.headers()["content-type"], "text/event-stream");
        }
        assert!(matches!(ep.poll_event().unwrap().event, Event::Request(_)));
        assert_eq!(ep.stats().listen_streams, 2);
        let (first, closed) = pull(&mut ep, tools.body());
        assert!(!closed);
        assert_eq!(
            first[0]["method"],
            "notifications/subscriptions/acknowledged"
        );
        assert_eq!(first[0]["params"]["_meta"][SUB], 1);
        let _ = pull(&mut ep, prompts.body());

        assert_eq!(publish(&mut ep, &Change::ToolsListChanged), 1);
        let (t, _) = pull(&mut ep, tools.body());
        let (p, _) = pull(&mut ep, prompts.body());
        assert_eq!(t[0]["method"], "notifications/tools/list_changed");
        assert_eq!(t[0]["params"]["_meta"][SUB], 1);
        assert!(p.is_empty(), "a prompts-only stream hears nothing of tools");

        // A third is one too many.
        let third = ep.handle_request(
            NOW,
            &post(BOTH),
            listen_body(json!(3), json!({"toolsListChanged": true})).as_bytes(),
            None,
        );
        assert_eq!(third.status(), StatusCode::SERVICE_UNAVAILABLE);

        // The client closing a reply ends its session: nothing is kept.
        ep.stream_closed(NOW, tools.body().stream().unwrap());
        assert_eq!(ep.stats().listen_streams, 1);
        assert_eq!(publish(&mut ep, &Change::ToolsListChanged), 0);
        ep.stream_closed(NOW, prompts.body().stream().unwrap());
        let s = ep.stats();
        assert_eq!((s.sessions, s.listen_streams), (0, 0));
    }
}

#[test]
fn over_http_the_server_ends_a_listen_with_its_result_or_by_closing_the_reply() {
    let mut ep = endpoint(ResponseMode::Sse);
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!("g"), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let ev = ep.poll_event().unwrap();
    let (sid, Event::Request(req)) = (ev.session, ev.event) else {
        panic!()
    };
    let _ = pull(&mut ep, r.body());
    ep.respond(NOW, sid, &req.id, raw("{}")).unwrap();
    let (end, closed) = pull(&mut ep, r.body());
    assert!(closed);
    assert_eq!(end[0]["id"], "g");
    assert_eq!(end[0]["result"]["_meta"][SUB], "g");
    assert_eq!(ep.stats().listen_streams, 0);

    // Fallen behind: the reply just ends (no notifications/cancelled over HTTP).
    let mut c = EndpointConfig::new(config(CAPS).clone());
    c.session.listener_backlog = 2;
    let mut ep = Endpoint::new(c);
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(5), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let sid = ep.poll_event().unwrap().session;
    // The endpoint takes what the session sends at once, so the session's own backlog does
    // not grow here; the endpoint's bound applies instead (below).
    for _ in 0..10 {
        assert_eq!(
            ep.with_session(NOW, sid, |s| s.publish(&Change::ToolsListChanged))
                .unwrap(),
            1
        );
    }
    let (got, closed) = pull(&mut ep, r.body());
    assert_eq!(got.len(), 11);
    assert!(!closed);

    // A client that does not pull: its reply is cut at max_stream_buffer and the session ends.
    let mut ep = endpoint(ResponseMode::Sse);
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(6), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let _ = ep.poll_event();
    for _ in 0..100 {
        publish(&mut ep, &Change::ToolsListChanged);
    }
    let s = ep.stats();
    assert_eq!(
        (s.sessions, s.listen_streams, s.slow_streams_cut),
        (0, 0, 1)
    );
    let (_, closed) = pull(&mut ep, r.body());
    assert!(closed);
}

#[test]
fn over_http_refusals_keep_their_status() {
    let mut ep = endpoint(ResponseMode::Sse);
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(1), json!("tools")).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let (m, _) = (
        r.body()
            .bytes()
            .map(|b| serde_json::from_slice::<Value>(b).unwrap()),
        (),
    );
    assert_eq!(m.unwrap()["error"]["code"], -32602);
    let r = ep.handle_request(
        NOW,
        &post("application/json"),
        listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE);
    // Nothing to deliver: -32601 with 404.
    let mut ep = Endpoint::new(EndpointConfig::new(config(r#"{"tools":{}}"#)));
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let v: Value = serde_json::from_slice(r.body().bytes().unwrap()).unwrap();
    assert_eq!(v["error"]["code"], -32601);
    assert_eq!(ep.stats().sessions, 0);
}

/// Everything stream `body` has for now, raw (comments included), and whether it ended.
fn pull_raw(ep: &mut Endpoint, body: &Body) -> (Vec<u8>, bool) {
    let id = body.stream().unwrap();
    let mut out = Vec::new();
    let closed = loop {
        match ep.poll_stream(id, &mut out) {
            StreamPoll::Data(_) => {}
            StreamPoll::Pending => break false,
            _ => break true,
        }
    };
    (out, closed)
}

#[test]
fn over_http_a_silent_listen_stream_gets_keep_alive_comments() {
    let every = Duration::from_secs(20);
    assert_eq!(
        EndpointConfig::new(config(CAPS)).listen_keep_alive,
        Some(mcp_proto::http::DEFAULT_LISTEN_KEEP_ALIVE)
    );
    assert_eq!(mcp_proto::http::DEFAULT_LISTEN_KEEP_ALIVE, every);
    let mut ep = Endpoint::new(EndpointConfig::new(config(CAPS)).listen_keep_alive(Some(every)));
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let ev = ep.poll_event().unwrap();
    let (sid, Event::Request(_)) = (ev.session, ev.event) else {
        panic!()
    };
    let (ack, _) = pull_raw(&mut ep, r.body());
    assert!(!ack.starts_with(b":"));
    // The next deadline is the keep-alive: a whole interval after the acknowledgement.
    assert_eq!(ep.poll_timeout(), Some(NOW + every));
    ep.handle_timeout(NOW + Duration::from_millis(19_999));
    assert!(pull_raw(&mut ep, r.body()).0.is_empty(), "not yet");
    ep.handle_timeout(NOW + every);
    assert_eq!(ep.poll_stream_ready(), r.body().stream());
    let (got, closed) = pull_raw(&mut ep, r.body());
    assert_eq!(got, b": keep-alive\n\n");
    assert!(!closed);
    assert!(messages(&got).is_empty(), "a comment is no message");
    assert_eq!(ep.stats().keep_alives_sent, 1);
    // And again one interval later.
    assert_eq!(ep.poll_timeout(), Some(NOW + every + every));
    let t1 = NOW + every + every;
    // A message in between pushes the next comment a whole interval past it.
    let later = NOW + every + Duration::from_secs(5);
    ep.with_session(later, sid, |s| s.publish(&Change::ToolsListChanged))
        .unwrap();
    let (note, _) = pull_raw(&mut ep, r.body());
    assert_eq!(
        messages(&note)[0]["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(ep.poll_timeout(), Some(later + every));
    ep.handle_timeout(t1);
    assert!(pull_raw(&mut ep, r.body()).0.is_empty());
    ep.handle_timeout(later + every);
    assert_eq!(pull_raw(&mut ep, r.body()).0, b": keep-alive\n\n");
    assert_eq!(ep.stats().keep_alives_sent, 2);

    // Switched off: no deadline at all for a listen stream.
    let mut ep = Endpoint::new(EndpointConfig::new(config(CAPS)).listen_keep_alive(None));
    let r = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let _ = pull_raw(&mut ep, r.body());
    assert_eq!(ep.poll_timeout(), None);
    ep.handle_timeout(NOW + Duration::from_secs(3600));
    assert!(pull_raw(&mut ep, r.body()).0.is_empty());
    assert_eq!(ep.stats().keep_alives_sent, 0);
}

#[test]
fn over_http_shutting_down_answers_each_listen_stream_with_its_result() {
    let mut ep = endpoint(ResponseMode::Sse);
    let a = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(1), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    let b = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!("b"), json!({"promptsListChanged": true})).as_bytes(),
        None,
    );
    let _ = pull(&mut ep, a.body());
    let _ = pull(&mut ep, b.body());
    while ep.poll_event().is_some() {}
    assert_eq!(ep.stats().listen_streams, 2);
    ep.shut_down(NOW);
    assert!(!ep.is_shut_down(), "the replies still hold their results");
    for (r, id) in [(&a, json!(1)), (&b, json!("b"))] {
        let (end, closed) = pull(&mut ep, r.body());
        assert!(closed, "the reply ends after the result");
        assert_eq!(end.len(), 1, "{end:?}");
        assert_eq!(end[0]["id"], id);
        assert_eq!(end[0]["result"]["resultType"], "complete");
        assert_eq!(end[0]["result"]["_meta"][SUB], id);
    }
    // The application stops holding the requests.
    let cancelled = std::iter::from_fn(|| ep.poll_event())
        .filter(|e| matches!(e.event, Event::Cancelled { .. }))
        .count();
    assert_eq!(cancelled, 2);
    assert!(ep.is_shut_down());
    assert_eq!(ep.stats().listen_streams, 0);
    // Nothing new is taken.
    let late = ep.handle_request(
        NOW,
        &post(BOTH),
        listen_body(json!(3), json!({"toolsListChanged": true})).as_bytes(),
        None,
    );
    assert_eq!(late.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(late.headers()["connection"], "close");
}
