//! Sessions bound to the owner (the authenticated principal) of the request that opened them:
//! a request naming the session with another owner, or none, finds no session (404), on
//! Streamable HTTP and on the legacy HTTP+SSE transport.
#![cfg(feature = "http")]

use http::StatusCode;
use http::request::Parts;
use mcp_proto::Instant;
use mcp_proto::http::{Endpoint, EndpointConfig, LegacySse, SessionOwner};
use mcp_proto::session::Config;
use serde_json::json;

const NOW: Instant = Instant::ZERO;

fn endpoint() -> Endpoint {
    Endpoint::new(
        EndpointConfig::new(Config::new("owned", "1.0")).legacy_sse(Some(LegacySse::default())),
    )
}

fn post(path: &str, sid: Option<&str>, owner: Option<&str>) -> Parts {
    let mut b = http::Request::post(path)
        .header("host", "localhost:8080")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let (mut parts, ()) = b.body(()).unwrap().into_parts();
    if let Some(o) = owner {
        parts.extensions.insert(SessionOwner(o.to_owned()));
    }
    parts
}

fn init() -> String {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"c","version":"1"}}})
    .to_string()
}

const PING: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Opens a Streamable HTTP session as `owner` and returns its id.
fn open(ep: &mut Endpoint, owner: Option<&str>, random: u128) -> String {
    let r = ep.handle_request(
        NOW,
        &post("/mcp", None, owner),
        init().as_bytes(),
        Some(random),
    );
    assert_eq!(r.status(), StatusCode::OK);
    r.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

#[test]
fn a_session_takes_only_requests_of_its_owner() {
    let mut ep = endpoint();
    let sid = open(&mut ep, Some("iss|alice|app"), 0x1111);
    let same = post("/mcp", Some(&sid), Some("iss|alice|app"));
    assert_eq!(
        ep.handle_request(NOW, &same, PING.as_bytes(), None)
            .status(),
        StatusCode::ACCEPTED
    );
    for other in [Some("iss|bob|app"), Some("iss|alice|other-app"), None] {
        let r = ep.handle_request(NOW, &post("/mcp", Some(&sid), other), PING.as_bytes(), None);
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "owner {other:?}");
    }
    // GET and DELETE alike.
    let mut get = post("/mcp", Some(&sid), Some("iss|bob|app"));
    get.method = http::Method::GET;
    get.headers.insert(
        "accept",
        http::HeaderValue::from_static("text/event-stream"),
    );
    assert_eq!(
        ep.handle_request(NOW, &get, b"", None).status(),
        StatusCode::NOT_FOUND
    );
    let mut delete = post("/mcp", Some(&sid), Some("iss|bob|app"));
    delete.method = http::Method::DELETE;
    assert_eq!(
        ep.handle_request(NOW, &delete, b"", None).status(),
        StatusCode::NOT_FOUND
    );
    // The owner still has it.
    let mut delete = post("/mcp", Some(&sid), Some("iss|alice|app"));
    delete.method = http::Method::DELETE;
    assert_eq!(
        ep.handle_request(NOW, &delete, b"", None).status(),
        StatusCode::NO_CONTENT
    );
}

#[test]
fn a_session_opened_without_an_owner_refuses_an_owned_request() {
    let mut ep = endpoint();
    let sid = open(&mut ep, None, 0x2222);
    let r = ep.handle_request(
        NOW,
        &post("/mcp", Some(&sid), Some("iss|alice|app")),
        PING.as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = ep.handle_request(NOW, &post("/mcp", Some(&sid), None), PING.as_bytes(), None);
    assert_eq!(r.status(), StatusCode::ACCEPTED);
}

#[test]
fn a_legacy_session_takes_only_posts_of_its_owner() {
    let mut ep = endpoint();
    let (mut get, ()) = http::Request::get("/sse")
        .header("host", "localhost:8080")
        .header("accept", "text/event-stream")
        .body(())
        .unwrap()
        .into_parts();
    get.extensions.insert(SessionOwner("iss|alice|app".into()));
    let r = ep.handle_request(NOW, &get, b"", Some(0x3333));
    assert_eq!(r.status(), StatusCode::OK);
    let url = format!("/messages?sessionId={:032x}", 0x3333);
    let r = ep.handle_request(
        NOW,
        &post(&url, None, Some("iss|bob|app")),
        init().as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = ep.handle_request(NOW, &post(&url, None, None), init().as_bytes(), None);
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = ep.handle_request(
        NOW,
        &post(&url, None, Some("iss|alice|app")),
        init().as_bytes(),
        None,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
}
