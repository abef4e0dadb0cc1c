//! Streamable HTTP in its 2026-07-28 form on an endpoint that serves both eras: one request per
//! POST with no session, the transport's header checks, the revision's errors with the
//! request's own id and status, and the legacy form beside it.
#![cfg(feature = "http")]

#[path = "common/endpoint.rs"]
mod endpoint;

use endpoint::EndpointExt;
use http::request::Parts;
use http::{Response, StatusCode};
use mcp_proto::codec::sse::SseDecoder;
use mcp_proto::http::{
    Body, DeferredHead, Endpoint, EndpointConfig, ResponseMode, StreamPoll, reply_status,
};
use mcp_proto::session::{Config, Event};
use mcp_proto::{Instant, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn config(mode: ResponseMode) -> EndpointConfig {
    let session = Config::new("both-eras", "1.0")
        .capabilities(raw(r#"{"tools":{},"logging":{}}"#))
        .versions(&ProtocolVersion::ALL);
    let mut c = EndpointConfig::new(session);
    c.response_mode = mode;
    c
}

const NOW: Instant = Instant::ZERO;

fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn body(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta("2026-07-28");
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn parts(headers: &[(&str, &str)]) -> Parts {
    let mut b = http::Request::post("/mcp")
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(()).unwrap().into_parts().0
}

fn modern(method: &str) -> Parts {
    parts(&[
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ])
}

fn json_of(r: &Response<Body>) -> Value {
    match r.body() {
        Body::Full(b) => serde_json::from_slice(b).unwrap(),
        other => panic!("expected a complete body, got {other:?}"),
    }
}

/// Answers every request the endpoint handed out with `result`.
fn answer_all(ep: &mut Endpoint, result: &str) -> Vec<String> {
    let mut methods = Vec::new();
    while let Some(e) = ep.poll_event() {
        if let Event::Request(r) = e.event {
            assert!(r.era.is_some(), "a stateless request");
            methods.push(r.method.to_string());
            ep.respond(NOW, e.session, &r.id, raw(result)).unwrap();
        }
    }
    methods
}

/// Everything a streamed body holds once it closed.
fn drain(ep: &mut Endpoint, r: &Response<Body>) -> Vec<u8> {
    let id = r.body().stream().expect("a streamed body");
    let mut out = Vec::new();
    loop {
        match ep.poll_stream(id, &mut out) {
            StreamPoll::Data(_) => {}
            StreamPoll::Closed => return out,
            _ => panic!("the reply did not end"),
        }
    }
}

#[test]
fn a_request_is_served_without_a_session() {
    let mut ep = Endpoint::new(config(ResponseMode::Json));
    let r = ep.handle_request(
        NOW,
        &modern("tools/list"),
        body(1, "tools/list", json!({})).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers().get("mcp-session-id").is_none(),
        "no session is minted"
    );
    assert_eq!(answer_all(&mut ep, "{\"tools\":[]}"), ["tools/list"]);
    let reply: Value = serde_json::from_slice(&drain(&mut ep, &r)).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(ep.stats().sessions, 0, "nothing is kept");

    // server/discover is answered at once.
    let r = ep.handle_request(
        NOW,
        &modern("server/discover"),
        body(2, "server/discover", json!({})).as_bytes(),
        None,
    );
    let reply: Value = match r.body() {
        Body::Full(b) => serde_json::from_slice(b).unwrap(),
        _ => serde_json::from_slice(&drain(&mut ep, &r)).unwrap(),
    };
    assert_eq!(reply["result"]["supportedVersions"][4], "2026-07-28");
}

#[test]
fn an_sse_reply_carries_the_requests_log_messages_then_its_response() {
    let mut ep = Endpoint::new(config(ResponseMode::Sse));
    let mut params = json!({"name": "echo", "arguments": {}});
    params["_meta"] = meta("2026-07-28");
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let b =
        json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": params}).to_string();
    let p = parts(&[
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ]);
    let r = ep.handle_request(NOW, &p, b.as_bytes(), None);
    // The head waits: JSON with the answer's status, unless something goes out first.
    assert!(r.extensions().get::<DeferredHead>().is_some());
    let stream = r.body().stream().unwrap();
    assert!(!ep.stream_is_sse(stream));
    let e = ep.poll_event().unwrap();
    let Event::Request(req) = e.event else {
        panic!()
    };
    ep.notify_related(
        NOW,
        e.session,
        "notifications/message",
        Some(raw(r#"{"level":"info","data":"working"}"#)),
        req.id.clone(),
    )
    .unwrap();
    // A log message before the answer: the reply is an SSE stream.
    assert!(ep.stream_is_sse(stream));
    ep.respond(NOW, e.session, &req.id, raw(r#"{"content":[]}"#))
        .unwrap();
    let mut d = SseDecoder::new(1 << 20);
    d.push(&drain(&mut ep, &r));
    let mut msgs = Vec::new();
    while let Some(ev) = d.next_event() {
        let ev = ev.unwrap();
        if !ev.data.is_empty() {
            msgs.push(serde_json::from_str::<Value>(&ev.data).unwrap());
        }
    }
    assert_eq!(msgs[0]["method"], "notifications/message");
    assert_eq!(msgs[1]["id"], "a");
    assert_eq!(msgs[1]["result"]["resultType"], "complete");
}

#[test]
fn the_transport_checks_its_headers_against_the_body() {
    let mut ep = Endpoint::new(config(ResponseMode::Json));
    let call = |ep: &mut Endpoint, headers: &[(&str, &str)], b: &str| {
        let r = ep.handle_request(NOW, &parts(headers), b.as_bytes(), None);
        (r.status(), json_of(&r))
    };
    let list = body(5, "tools/list", json!({}));
    // No Mcp-Method: -32020.
    let (s, v) = call(&mut ep, &[("mcp-protocol-version", "2026-07-28")], &list);
    assert_eq!(
        (s, v["error"]["code"].clone(), v["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020), json!(5))
    );
    // A different Mcp-Method: -32020.
    let (s, v) = call(
        &mut ep,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "prompts/list"),
        ],
        &list,
    );
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    // Mcp-Name must name the tool; base64 values are decoded.
    let tool = body(6, "tools/call", json!({"name": "été", "arguments": {}}));
    let (s, v) = call(
        &mut ep,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "other"),
        ],
        &tool,
    );
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    let p = parts(&[
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "=?base64?w6l0w6k=?="),
    ]);
    assert_eq!(
        ep.handle_request(NOW, &p, tool.as_bytes(), None).status(),
        StatusCode::OK
    );
    let _ = answer_all(&mut ep, "{\"content\":[]}");
    // A header version other than the body's: -32020.
    let mut m = meta("2026-07-28");
    m["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let b = json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta": m}}).to_string();
    let (s, v) = call(
        &mut ep,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &b,
    );
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020)),
        "{v}"
    );
    // The same for a version the server does not know: the mismatch is reported first.
    m["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let b = json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta": m}}).to_string();
    let (s, v) = call(
        &mut ep,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &b,
    );
    assert_eq!(
        (s, v["error"]["code"].clone(), v["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020), json!(8)),
        "{v}"
    );
}

#[test]
fn the_revisions_errors_have_their_status_and_the_requests_id() {
    let mut ep = Endpoint::new(config(ResponseMode::Json));
    // An unknown version: 400 + -32022 with what is supported.
    let p = parts(&[
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "tools/list"),
    ]);
    let mut m = meta("2026-07-28");
    m["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let b = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta": m}}).to_string();
    let r = ep.handle_request(NOW, &p, b.as_bytes(), None);
    let v = json_of(&r);
    assert_eq!(
        (r.status(), v["error"]["code"].clone(), v["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32022), json!(1))
    );
    assert_eq!(v["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(v["error"]["data"]["supported"][0], "2024-11-05");
    // A method the revision removed: 404 + -32601.
    let r = ep.handle_request(
        NOW,
        &modern("ping"),
        body(2, "ping", json!({})).as_bytes(),
        None,
    );
    let v = json_of(&r);
    assert_eq!(
        (r.status(), v["error"]["code"].clone(), v["id"].clone()),
        (StatusCode::NOT_FOUND, json!(-32601), json!(2))
    );
    // Missing client capabilities: 400 + -32602.
    let b = json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})
    .to_string();
    let r = ep.handle_request(NOW, &modern("tools/list"), b.as_bytes(), None);
    assert_eq!(
        (r.status(), json_of(&r)["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32602))
    );
    // A batch, a response: 400. A notification: 202.
    let r = ep.handle_request(
        NOW,
        &modern("tools/list"),
        format!("[{}]", body(4, "tools/list", json!({}))).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = ep.handle_request(
        NOW,
        &modern("x"),
        br#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
        None,
    );
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = ep.handle_request(
        NOW,
        &modern("notifications/cancelled"),
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        None,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    // GET and DELETE of the revision: 405.
    for m in ["GET", "DELETE"] {
        let p = http::Request::builder()
            .method(m)
            .uri("/mcp")
            .header("host", "localhost:8080")
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        assert_eq!(
            ep.handle_request(NOW, &p, b"", None).status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{m}"
        );
    }
    assert!(ep.poll_event().is_none());
}

#[test]
fn the_legacy_form_is_served_beside_it() {
    let mut ep = Endpoint::new(config(ResponseMode::Json));
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"0"}}});
    let r = ep.handle_request(NOW, &parts(&[]), init.to_string().as_bytes(), Some(7));
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(json_of(&r)["result"]["protocolVersion"], "2025-11-25");
    let p = parts(&[
        ("mcp-session-id", &sid),
        ("mcp-protocol-version", "2025-11-25"),
    ]);
    let r = ep.handle_request(
        NOW,
        &p,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        None,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    // And a handshake-only endpoint answers a 2026-07-28 POST as before (no session id: 400).
    let mut old = Endpoint::new(EndpointConfig::new(Config::new("old", "1")));
    let r = old.handle_request(
        NOW,
        &modern("tools/list"),
        body(1, "tools/list", json!({})).as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn a_reply_answered_later_is_json_with_the_answers_status_unless_something_went_first() {
    for mode in [ResponseMode::Sse, ResponseMode::Json] {
        let mut ep = Endpoint::new(config(mode));
        let mut params = json!({"name": "echo", "arguments": {}});
        params["_meta"] = meta("2026-07-28");
        let b = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
            .to_string();
        let p = parts(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ]);
        let r = ep.handle_request(NOW, &p, b.as_bytes(), None);
        assert!(r.extensions().get::<DeferredHead>().is_some(), "{mode:?}");
        let stream = r.body().stream().unwrap();
        let e = ep.poll_event().unwrap();
        let Event::Request(req) = e.event else {
            panic!()
        };
        // The handler needs a capability the client did not declare: -32021, HTTP 400.
        let err = mcp_proto::Error::new(
            mcp_proto::ErrorKind::MissingClientCapability,
            "needs sampling",
        );
        ep.respond_error(NOW, e.session, &req.id, err).unwrap();
        let mut out = Vec::new();
        assert!(matches!(
            ep.poll_stream(stream, &mut out),
            StreamPoll::Data(_)
        ));
        assert!(!ep.stream_is_sse(stream), "{mode:?}");
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(9), json!(-32021))
        );
        assert_eq!(reply_status(&out), StatusCode::BAD_REQUEST);
        assert!(matches!(
            ep.poll_stream(stream, &mut out),
            StreamPoll::Closed
        ));
    }
    assert_eq!(
        reply_status(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        reply_status(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#),
        StatusCode::OK
    );
    assert_eq!(reply_status(b"not json"), StatusCode::OK);
}
