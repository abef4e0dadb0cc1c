use super::*;
use alloc::vec;

const URL: &str = "http://localhost:8080/mcp";

fn t0() -> Instant {
    Instant::ZERO
}

fn ms(n: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(n)
}

fn id(n: i64) -> RequestId {
    RequestId::Number(n)
}

fn transport(config: impl FnOnce(ClientConfig) -> ClientConfig) -> ClientTransport {
    ClientTransport::new(config(ClientConfig::new(URL.parse().unwrap())))
}

/// The next action, which must be a Send.
fn sent(t: &mut ClientTransport) -> (ExchangeId, HttpRequest) {
    match t.poll_action() {
        Some(Action::Send { exchange, request }) => (exchange, *request),
        other => panic!("expected a request, got {other:?}"),
    }
}

fn no_action(t: &mut ClientTransport) {
    if let Some(a) = t.poll_action() {
        panic!("unexpected action {a:?}");
    }
}

fn head(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(
            ::http::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    h
}

fn sse_head() -> HeaderMap {
    head(&[("content-type", "text/event-stream")])
}

fn json_head() -> HeaderMap {
    head(&[("content-type", "application/json")])
}

fn messages(t: &mut ClientTransport) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(d) = t.poll_delivery() {
        match d {
            Delivery::Message(m) => out.push(String::from_utf8(m).unwrap()),
            other => panic!("expected a message, got {other:?}"),
        }
    }
    out
}

fn failed(t: &mut ClientTransport) -> (RequestId, Error) {
    match t.poll_delivery() {
        Some(Delivery::Failed { id, error }) => (id, error),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn header<'a>(r: &'a HttpRequest, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

/// Runs the Streamable HTTP handshake up to the standalone stream attached (session `s1`).
fn ready(t: &mut ClientTransport) {
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (ex, req) = sent(t);
    assert_eq!(req.method(), Method::POST);
    assert_eq!(req.uri(), URL);
    assert_eq!(header(&req, "accept"), Some(ACCEPT_BOTH));
    assert_eq!(header(&req, "content-type"), Some("application/json"));
    assert_eq!(header(&req, "mcp-session-id"), None);
    assert_eq!(req.body().as_ref(), b"{init}");
    let h = head(&[
        ("content-type", "text/event-stream"),
        ("mcp-session-id", "s1"),
    ]);
    assert_eq!(t.handle_head(t0(), ex, StatusCode::OK, &h), ReadAs::Sse);
    t.handle_data(t0(), ex, b"id: 0-1\ndata: {\"id\":0,\"result\":{}}\n\n");
    assert_eq!(messages(t), vec!["{\"id\":0,\"result\":{}}"]);
    t.handle_end(t0(), ex, true, |_| false);
    t.set_protocol_version("2025-11-25");
    t.send(
        t0(),
        Outgoing::Initialized,
        Bytes::from_static(b"{initialized}"),
    );
    let (ex, req) = sent(t);
    assert_eq!(header(&req, "mcp-session-id"), Some("s1"));
    assert_eq!(header(&req, "mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::ACCEPTED, &head(&[])),
        ReadAs::Discard
    );
    let (get, req) = sent(t);
    assert_eq!(req.method(), Method::GET);
    assert_eq!(header(&req, "accept"), Some(EVENT_STREAM));
    assert_eq!(header(&req, "mcp-session-id"), Some("s1"));
    assert_eq!(
        t.handle_head(t0(), get, StatusCode::OK, &sse_head()),
        ReadAs::Sse
    );
    no_action(t);
}

#[test]
fn handshake_then_requests_with_the_session_headers() {
    let mut t = transport(|c| c);
    ready(&mut t);
    assert_eq!(t.session_id(), Some("s1"));
    t.send(ms(1), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, req) = sent(&mut t);
    assert_eq!(header(&req, "mcp-session-id"), Some("s1"));
    assert_eq!(header(&req, "mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(
        t.handle_head(ms(1), ex, StatusCode::OK, &json_head()),
        ReadAs::Whole
    );
    assert_eq!(t.body_limit(ex), 16 * 1024 * 1024);
    t.handle_body(ms(1), ex, b"{\"id\":1,\"result\":{}}");
    assert_eq!(messages(&mut t), vec!["{\"id\":1,\"result\":{}}"]);
    t.handle_end(ms(1), ex, true, |_| false);
    assert!(t.poll_delivery().is_none());
    // A body the session found no response in fails the request.
    t.send(ms(1), Outgoing::Request(id(2)), Bytes::from_static(b"{r2}"));
    let (ex, _) = sent(&mut t);
    t.handle_head(ms(1), ex, StatusCode::OK, &json_head());
    t.handle_body(ms(1), ex, b"{\"jsonrpc\": \"2.0\", \"id\": ");
    assert_eq!(messages(&mut t).len(), 1);
    t.handle_end(ms(1), ex, true, |i| *i == id(2));
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(2));
    assert!(e.message().contains("carried no response"), "{e}");
    // A notification's 202 is read and dropped.
    t.send(ms(2), Outgoing::Other, Bytes::from_static(b"{n}"));
    let (ex, _) = sent(&mut t);
    assert_eq!(
        t.handle_head(ms(2), ex, StatusCode::ACCEPTED, &head(&[])),
        ReadAs::Discard
    );
    assert!(t.poll_delivery().is_none());
}

#[test]
fn requests_wait_for_the_standalone_stream_boundedly() {
    let mut t = transport(|c| c.standalone_wait(Duration::from_millis(100)));
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (ex, _) = sent(&mut t);
    let h = head(&[
        ("content-type", "application/json"),
        ("mcp-session-id", "s1"),
    ]);
    assert_eq!(t.handle_head(t0(), ex, StatusCode::OK, &h), ReadAs::Whole);
    t.handle_body(t0(), ex, b"{\"id\":0,\"result\":{}}");
    let _ = messages(&mut t);
    t.send(
        t0(),
        Outgoing::Initialized,
        Bytes::from_static(b"{initialized}"),
    );
    let (n, _) = sent(&mut t); // the notification: the GET waits for its acknowledgement
    no_action(&mut t);
    t.handle_head(t0(), n, StatusCode::ACCEPTED, &head(&[]));
    let (_get, _) = sent(&mut t); // the GET, which never answers
    t.send(ms(1), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    no_action(&mut t);
    assert_eq!(t.poll_timeout(), Some(ms(100)));
    t.handle_timeout(ms(100));
    let (_, req) = sent(&mut t);
    assert_eq!(req.body().as_ref(), b"{r1}");
}

#[test]
fn a_refused_standalone_stream_releases_requests_and_is_not_retried() {
    let mut t = transport(|c| c);
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::OK, &json_head());
    t.handle_body(t0(), ex, b"{\"id\":0,\"result\":{}}");
    t.send(t0(), Outgoing::Initialized, Bytes::from_static(b"{}"));
    let (n, _) = sent(&mut t);
    t.handle_failed(t0(), n, transport_error("reset")); // the stream opens anyway
    let (get, _) = sent(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    no_action(&mut t);
    let read = t.handle_head(t0(), get, StatusCode::METHOD_NOT_ALLOWED, &head(&[]));
    assert_eq!(read, ReadAs::Discard);
    let (_, req) = sent(&mut t);
    assert_eq!(req.body().as_ref(), b"{r1}");
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn a_202_or_an_error_status_fails_the_request_with_the_body_quoted() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::ACCEPTED, &head(&[])),
        ReadAs::Discard
    );
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(1));
    assert!(e.message().contains("no response"), "{e}");

    t.send(t0(), Outgoing::Request(id(2)), Bytes::from_static(b"{r2}"));
    let (ex, _) = sent(&mut t);
    let status = StatusCode::UNAUTHORIZED;
    assert_eq!(t.handle_head(t0(), ex, status, &head(&[])), ReadAs::Whole);
    assert_eq!(t.body_limit(ex), MAX_ERROR_BODY);
    t.handle_body(t0(), ex, b"  go away  ");
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(2));
    assert_eq!(e.kind(), ErrorKind::Unauthorized);
    assert_eq!(
        e.message(),
        "POST http://localhost:8080/mcp: HTTP 401 Unauthorized: go away"
    );

    t.send(t0(), Outgoing::Request(id(3)), Bytes::from_static(b"{r3}"));
    let (ex, _) = sent(&mut t);
    t.handle_failed(t0(), ex, transport_error("connection refused"));
    let (i, e) = failed(&mut t);
    assert_eq!((i, e.message()), (id(3), "connection refused"));
}

#[test]
fn a_broken_stream_resumes_with_last_event_id_after_retry() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::OK, &sse_head()),
        ReadAs::Sse
    );
    // The priming event (empty data) and a progress notification, then the server closes.
    t.handle_data(
        t0(),
        ex,
        b"id: 7-0\nretry: 50\ndata:\n\nid: 7-1\ndata: {\"p\":1}\n\n",
    );
    assert_eq!(messages(&mut t), vec!["{\"p\":1}"]);
    t.handle_end(t0(), ex, true, |i| *i == id(1));
    no_action(&mut t);
    assert_eq!(t.poll_timeout(), Some(ms(50)));
    t.handle_timeout(ms(49));
    no_action(&mut t);
    t.handle_timeout(ms(50));
    let (ex, req) = sent(&mut t);
    assert_eq!(req.method(), Method::GET);
    assert_eq!(header(&req, "last-event-id"), Some("7-1"));
    assert_eq!(header(&req, "mcp-session-id"), Some("s1"));
    assert_eq!(
        t.handle_head(ms(50), ex, StatusCode::OK, &sse_head()),
        ReadAs::Sse
    );
    t.handle_data(ms(50), ex, b"id: 7-2\ndata: {\"id\":1,\"result\":{}}\n\n");
    assert_eq!(messages(&mut t), vec!["{\"id\":1,\"result\":{}}"]);
    t.handle_end(ms(50), ex, true, |_| false);
    assert!(t.poll_delivery().is_none());
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn resumption_gives_up_after_max_reconnects_with_backoff() {
    let mut t = transport(|c| {
        c.max_reconnects(2)
            .reconnect_delay(Duration::from_millis(10), Duration::from_millis(15))
    });
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::OK, &sse_head());
    t.handle_data(t0(), ex, b"id: a\ndata: {\"p\":1}\n\n");
    let _ = messages(&mut t);
    t.handle_failed(t0(), ex, transport_error("reset"));
    assert_eq!(t.poll_timeout(), Some(ms(10)));
    t.handle_timeout(ms(10));
    let (ex, req) = sent(&mut t);
    assert_eq!(header(&req, "last-event-id"), Some("a"));
    t.handle_head(ms(10), ex, StatusCode::INTERNAL_SERVER_ERROR, &head(&[]));
    // Second attempt: doubled, capped at 15 ms.
    assert_eq!(t.poll_timeout(), Some(ms(25)));
    t.handle_timeout(ms(25));
    let (ex, _) = sent(&mut t);
    t.handle_failed(ms(25), ex, transport_error("refused"));
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(1));
    assert!(
        e.message().contains("2 reconnection attempts failed"),
        "{e}"
    );
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn a_stream_without_event_ids_cannot_be_resumed() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::OK, &sse_head());
    t.handle_end(t0(), ex, true, |_| true);
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(1));
    assert!(e.message().contains("no event id"), "{e}");
}

#[test]
fn a_lost_session_is_reinitialised_through_the_session() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::NOT_FOUND, &head(&[])),
        ReadAs::Discard
    );
    // The old standalone stream stops; the session is asked to run its handshake again.
    assert!(matches!(t.poll_action(), Some(Action::Abort(_))));
    assert!(matches!(t.poll_delivery(), Some(Delivery::Reinitialize)));
    assert_eq!(t.session_id(), None);
    // Meanwhile requests wait.
    t.send(t0(), Outgoing::Request(id(2)), Bytes::from_static(b"{r2}"));
    no_action(&mut t);
    t.send(
        t0(),
        Outgoing::Initialize(id(3)),
        Bytes::from_static(b"{init2}"),
    );
    let (ex, req) = sent(&mut t);
    assert_eq!(header(&req, "mcp-session-id"), None);
    let h = head(&[
        ("content-type", "application/json"),
        ("mcp-session-id", "s2"),
    ]);
    t.handle_head(t0(), ex, StatusCode::OK, &h);
    t.handle_body(t0(), ex, b"{\"id\":3,\"result\":{}}");
    assert_eq!(messages(&mut t).len(), 1);
    t.send(
        t0(),
        Outgoing::Initialized,
        Bytes::from_static(b"{initialized}"),
    );
    let (n, req) = sent(&mut t);
    assert_eq!(header(&req, "mcp-session-id"), Some("s2"));
    t.handle_head(t0(), n, StatusCode::ACCEPTED, &head(&[]));
    let (get, _) = sent(&mut t);
    t.handle_head(t0(), get, StatusCode::OK, &sse_head());
    let (_, r1) = sent(&mut t);
    let (_, r2) = sent(&mut t);
    assert_eq!(r1.body().as_ref(), b"{r1}");
    assert_eq!(r2.body().as_ref(), b"{r2}");
    assert_eq!(header(&r1, "mcp-session-id"), Some("s2"));
}

#[test]
fn a_lost_session_without_reinitialisation_fails_everything() {
    let mut t = transport(|c| c.reinitialize(false));
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex1, _) = sent(&mut t);
    t.send(t0(), Outgoing::Request(id(2)), Bytes::from_static(b"{r2}"));
    let _ = sent(&mut t);
    t.handle_head(t0(), ex1, StatusCode::NOT_FOUND, &head(&[]));
    let (a, e) = failed(&mut t);
    assert_eq!(a, id(1));
    assert!(e.message().contains("re-initialisation is disabled"), "{e}");
    let (b, _) = failed(&mut t);
    assert_eq!(b, id(2));
    assert!(matches!(t.poll_delivery(), Some(Delivery::Closed(_))));
}

#[test]
fn a_failed_reinitialisation_fails_everything() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::NOT_FOUND, &head(&[]));
    let _ = t.poll_action();
    let _ = t.poll_delivery();
    t.send(
        t0(),
        Outgoing::Initialize(id(3)),
        Bytes::from_static(b"{init2}"),
    );
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::SERVICE_UNAVAILABLE, &head(&[]));
    t.handle_body(t0(), ex, b"");
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(1));
    assert!(
        e.message().starts_with("the server lost the HTTP session"),
        "{e}"
    );
    assert!(matches!(t.poll_delivery(), Some(Delivery::Closed(_))));
}

#[test]
fn cancelling_stops_the_requests_exchange() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, _) = sent(&mut t);
    t.handle_head(t0(), ex, StatusCode::OK, &sse_head());
    t.send(
        t0(),
        Outgoing::Cancelled(id(1)),
        Bytes::from_static(b"{cancel}"),
    );
    assert!(matches!(t.poll_action(), Some(Action::Abort(e)) if e == ex));
    let (_, req) = sent(&mut t);
    assert_eq!(req.body().as_ref(), b"{cancel}");
    // What the driver still reports about the aborted exchange is ignored.
    t.handle_data(t0(), ex, b"data: {\"late\":1}\n\n");
    t.handle_end(t0(), ex, false, |_| true);
    assert!(t.poll_delivery().is_none());
}

#[test]
fn closing_deletes_the_session() {
    let mut t = transport(|c| c);
    ready(&mut t);
    t.close(t0());
    assert!(matches!(t.poll_action(), Some(Action::Abort(_)))); // the standalone stream
    let (ex, req) = sent(&mut t);
    assert_eq!(req.method(), Method::DELETE);
    assert_eq!(header(&req, "mcp-session-id"), Some("s1"));
    assert!(!t.is_closed());
    t.send(
        t0(),
        Outgoing::Request(id(9)),
        Bytes::from_static(b"{late}"),
    );
    no_action(&mut t);
    t.handle_head(t0(), ex, StatusCode::NO_CONTENT, &head(&[]));
    assert!(t.is_closed());

    let mut t = transport(|c| c);
    t.close(t0());
    assert!(t.is_closed());
    no_action(&mut t);
}

#[test]
fn the_probe_falls_back_to_the_legacy_transport() {
    let mut t = transport(|c| c.mode(ClientMode::Auto));
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (ex, _) = sent(&mut t);
    let read = t.handle_head(t0(), ex, StatusCode::METHOD_NOT_ALLOWED, &head(&[]));
    assert_eq!(read, ReadAs::Discard);
    assert!(t.is_legacy());
    let (sse, req) = sent(&mut t);
    assert_eq!(
        (req.method(), req.uri().to_string().as_str()),
        (&Method::GET, URL)
    );
    assert_eq!(
        t.handle_head(t0(), sse, StatusCode::OK, &sse_head()),
        ReadAs::Sse
    );
    t.handle_data(
        t0(),
        sse,
        b"event: endpoint\ndata: /messages?sessionId=x1\n\n",
    );
    let (ex, req) = sent(&mut t);
    assert_eq!(req.uri(), "http://localhost:8080/messages?sessionId=x1");
    assert_eq!(req.body().as_ref(), b"{init}");
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::ACCEPTED, &head(&[])),
        ReadAs::Discard
    );
    t.handle_data(
        t0(),
        sse,
        b"event: message\ndata: {\"id\":0,\"result\":{}}\n\n",
    );
    assert_eq!(messages(&mut t), vec!["{\"id\":0,\"result\":{}}"]);
    // No standalone stream, no MCP headers, acknowledgements only.
    t.send(
        t0(),
        Outgoing::Initialized,
        Bytes::from_static(b"{initialized}"),
    );
    let (n, req) = sent(&mut t);
    t.handle_head(t0(), n, StatusCode::ACCEPTED, &head(&[]));
    assert_eq!(header(&req, "mcp-session-id"), None);
    t.send(t0(), Outgoing::Request(id(1)), Bytes::from_static(b"{r1}"));
    let (ex, req) = sent(&mut t);
    assert_eq!(req.uri(), "http://localhost:8080/messages?sessionId=x1");
    assert_eq!(
        t.handle_head(t0(), ex, StatusCode::ACCEPTED, &head(&[])),
        ReadAs::Discard
    );
    no_action(&mut t);
    // The server ending the stream ends the transport.
    t.handle_end(t0(), sse, true, |_| true);
    assert!(
        matches!(t.poll_delivery(), Some(Delivery::Closed(e)) if e.kind() == ErrorKind::TransportClosed)
    );
    t.close(t0());
    assert!(t.is_closed());
}

#[test]
fn legacy_failures_fail_the_handshake() {
    let mut t = transport(|c| c.mode(ClientMode::LegacySse));
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (sse, _) = sent(&mut t);
    t.handle_head(t0(), sse, StatusCode::OK, &sse_head());
    t.handle_end(t0(), sse, true, |_| true);
    let (i, e) = failed(&mut t);
    assert_eq!(i, id(0));
    assert!(e.message().contains("before its endpoint event"), "{e}");

    let mut t = transport(|c| c.mode(ClientMode::LegacySse));
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (sse, _) = sent(&mut t);
    t.handle_head(t0(), sse, StatusCode::OK, &sse_head());
    t.handle_data(
        t0(),
        sse,
        b"event: endpoint\ndata: http://evil.example/x\n\n",
    );
    let (_, e) = failed(&mut t);
    assert_eq!(e.kind(), ErrorKind::ProtocolInvalid);

    let mut t = transport(|c| c.mode(ClientMode::LegacySse));
    t.send(
        t0(),
        Outgoing::Initialize(id(0)),
        Bytes::from_static(b"{init}"),
    );
    let (sse, _) = sent(&mut t);
    t.handle_head(t0(), sse, StatusCode::OK, &json_head());
    let (_, e) = failed(&mut t);
    assert!(e.message().contains("expected an SSE stream"), "{e}");
}

#[test]
fn the_standalone_stream_reconnects_from_its_last_event() {
    let mut t = transport(|c| c.reconnect_delay(Duration::from_millis(10), Duration::from_secs(1)));
    ready(&mut t);
    // `ready` attached the GET as exchange 3.
    let get = ExchangeId(3);
    t.handle_data(t0(), get, b"id: 1-4\ndata: {\"method\":\"n\"}\n\n");
    assert_eq!(messages(&mut t).len(), 1);
    t.handle_end(t0(), get, false, |_| false);
    assert_eq!(t.poll_timeout(), Some(ms(10)));
    t.handle_timeout(ms(10));
    let (_, req) = sent(&mut t);
    assert_eq!(req.method(), Method::GET);
    assert_eq!(header(&req, "last-event-id"), Some("1-4"));
}

#[test]
fn endpoints_resolve_on_the_sse_origin() {
    let sse: Uri = "http://localhost:3001/a/sse".parse().unwrap();
    let r = |d| resolve_endpoint(&sse, d).map(|u| u.to_string());
    assert_eq!(
        r("/message?sessionId=abc").unwrap(),
        "http://localhost:3001/message?sessionId=abc"
    );
    assert_eq!(
        r("messages?s=1").unwrap(),
        "http://localhost:3001/a/messages?s=1"
    );
    assert_eq!(
        r("http://localhost:3001/x").unwrap(),
        "http://localhost:3001/x"
    );
    assert!(r("http://evil.example/x").is_err());
    assert!(r("https://localhost:3001/x").is_err());
    assert!(r("//evil.example/x").is_err());
    assert!(r("/bad path").is_err());
}

#[test]
fn outgoing_messages_are_described_from_the_session() {
    use crate::session::MessageKind;
    assert_eq!(
        Outgoing::describe(MessageKind::Request, Some(&id(0)), Some("initialize")),
        Outgoing::Initialize(id(0))
    );
    assert_eq!(
        Outgoing::describe(MessageKind::Request, Some(&id(4)), Some("tools/call")),
        Outgoing::Request(id(4))
    );
    assert_eq!(
        Outgoing::describe(
            MessageKind::Notification,
            None,
            Some("notifications/initialized")
        ),
        Outgoing::Initialized
    );
    assert_eq!(
        Outgoing::describe(
            MessageKind::Notification,
            Some(&id(4)),
            Some("notifications/cancelled")
        ),
        Outgoing::Cancelled(id(4))
    );
    assert_eq!(
        Outgoing::describe(MessageKind::Response, Some(&id(4)), None),
        Outgoing::Other
    );
}

#[test]
fn stateless_requests_carry_the_eras_headers_and_no_session() {
    let mut t = transport(|c| c);
    let msg =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"été","arguments":{}}}"#;
    t.send_stateless(
        t0(),
        Outgoing::Request(id(1)),
        "2026-07-28",
        "tools/call",
        Bytes::from(msg.as_bytes().to_vec()),
        |_| None,
    );
    let (ex, req) = sent(&mut t);
    assert_eq!(req.method(), Method::POST);
    assert_eq!(header(&req, "mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(header(&req, "mcp-method"), Some("tools/call"));
    assert_eq!(header(&req, "mcp-name"), Some("=?base64?w6l0w6k=?="));
    assert_eq!(header(&req, "mcp-session-id"), None);
    // An error reply's JSON-RPC body goes to the session.
    let read = t.handle_head(t0(), ex, StatusCode::BAD_REQUEST, &json_head());
    assert_eq!(read, ReadAs::Whole);
    t.handle_body(
        t0(),
        ex,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no"}}"#,
    );
    assert_eq!(messages(&mut t).len(), 1);
    t.handle_end(t0(), ex, true, |_| false);
    assert!(t.poll_delivery().is_none());
    // A plain name goes as it is; a cancellation closes the reply instead of being sent.
    let msg = br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a"}}"#;
    t.send_stateless(
        t0(),
        Outgoing::Request(id(2)),
        "2026-07-28",
        "resources/read",
        Bytes::from_static(msg),
        |_| None,
    );
    let (ex, req) = sent(&mut t);
    assert_eq!(header(&req, "mcp-name"), Some("file:///a"));
    t.send_stateless(
        t0(),
        Outgoing::Cancelled(id(2)),
        "2026-07-28",
        "notifications/cancelled",
        Bytes::new(),
        |_| None,
    );
    assert!(matches!(t.poll_action(), Some(Action::Abort(e)) if e == ex));
    no_action(&mut t);
    // Closing sends no DELETE.
    t.close(t0());
    assert!(t.is_closed());
}

#[test]
fn annotated_arguments_are_mirrored_into_mcp_param_headers() {
    use crate::schema::tools::{ParamHeader, param_headers};
    let schema = serde_json::json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "name": {"type": "string", "x-mcp-header": "Who"},
        "method_val": {"type": "string", "x-mcp-header": "Method"},
        "float_val": {"type": "number"},
        "query": {"type": "string"}
    }});
    let annotated: Vec<ParamHeader> = param_headers(schema.as_object().unwrap()).unwrap();
    let mut t = transport(|c| c);
    let msg = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":
        {"region":"us-west1","priority":42,"verbose":null,"name":"Hello, 世界","method_val":"m",
         "float_val":3.5,"query":"SELECT 1"}}}"#;
    t.send_stateless(
        t0(),
        Outgoing::Request(id(1)),
        "2026-07-28",
        "tools/call",
        Bytes::from(msg.as_bytes().to_vec()),
        |tool| (tool == "t").then_some(annotated.as_slice()),
    );
    let (_, req) = sent(&mut t);
    assert_eq!(header(&req, "mcp-param-region"), Some("us-west1"));
    assert_eq!(header(&req, "mcp-param-priority"), Some("42"));
    assert_eq!(header(&req, "mcp-param-verbose"), None, "null is left out");
    assert_eq!(
        header(&req, "mcp-param-who"),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    // `Method` names Mcp-Param-Method, not Mcp-Method.
    assert_eq!(header(&req, "mcp-param-method"), Some("m"));
    assert_eq!(header(&req, "mcp-method"), Some("tools/call"));
    assert_eq!(header(&req, "mcp-param-floatval"), None);
    assert_eq!(header(&req, "mcp-param-query"), None);
}

#[test]
fn invalid_annotations_make_the_tool_invalid() {
    use crate::schema::tools::param_headers;
    for props in [
        serde_json::json!({"v": {"type": "string", "x-mcp-header": ""}}),
        serde_json::json!({"v": {"type": "object", "x-mcp-header": "Data"}}),
        serde_json::json!({"v": {"type": "array", "x-mcp-header": "Items"}}),
        serde_json::json!({"v": {"type": "null", "x-mcp-header": "Nil"}}),
        serde_json::json!({"v": {"type": "number", "x-mcp-header": "N"}}),
        serde_json::json!({"a": {"type": "string", "x-mcp-header": "Region"},
                           "b": {"type": "string", "x-mcp-header": "region"}}),
        serde_json::json!({"v": {"type": "string", "x-mcp-header": "My Field"}}),
        serde_json::json!({"v": {"type": "string", "x-mcp-header": "My:Field"}}),
        serde_json::json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
        serde_json::json!({"v": {"type": "string", "x-mcp-header": "A\u{1}"}}),
        serde_json::json!({"v": {"type": "string", "x-mcp-header": 5}}),
    ] {
        let schema = serde_json::json!({"type": "object", "properties": props});
        assert!(
            param_headers(schema.as_object().unwrap()).is_err(),
            "{props}"
        );
    }
}

#[test]
fn header_values_are_encoded_when_they_must_be() {
    assert_eq!(header_safe("echo"), "echo");
    assert_eq!(header_safe(" padded"), "=?base64?IHBhZGRlZA==?=");
    assert_eq!(header_safe("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    let mut s = String::new();
    base64_encode(b"ab", &mut s);
    assert_eq!(s, "YWI=");
}
