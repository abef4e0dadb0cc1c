//! Session behaviour: lifecycle, requests, cancellation, progress, limits, close.

mod common;

use common::*;
use mcp_proto::session::{Config, Discovery, Event, Framing, RequestOptions, Session, State};
use mcp_proto::{Duration, Error, ErrorKind, ProtocolVersion, RequestId};
use serde_json::json;

fn init_line(version: &str) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}})
    )
}

const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

fn ready_server(version: &str) -> (Session, Vec<serde_json::Value>) {
    let mut s = Session::server(server_config());
    let now = mcp_proto::Instant::ZERO;
    s.handle_bytes(now, init_line(version).as_bytes());
    let out = collect(&mut s);
    s.handle_bytes(now, INITIALIZED.as_bytes());
    while s.poll_event().is_some() {}
    (s, out)
}

#[test]
fn handshake_negotiates_latest_version_and_exchanges_info() {
    let mut p = Pair::default_pair();
    assert_eq!(p.client().state(), State::AwaitingInit);
    p.initialize(CLIENT).unwrap();
    assert_eq!(p.client().state(), State::Initializing);
    p.deliver_all();
    let Event::Ready {
        version, peer_info, ..
    } = &p.events[CLIENT][0]
    else {
        panic!("{:?}", p.events[CLIENT])
    };
    assert_eq!(*version, ProtocolVersion::V2025_11_25);
    assert!(peer_info.get().contains("test-server"));
    let Event::Ready {
        peer_info,
        peer_capabilities,
        ..
    } = &p.events[SERVER][0]
    else {
        panic!()
    };
    assert!(peer_info.get().contains("test-client"));
    assert!(peer_capabilities.get().contains("sampling"));
    assert_eq!(p.client().state(), State::Ready);
    assert_eq!(p.server().state(), State::Ready);
    assert!(
        p.wire_text()[0].starts_with("C>{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"")
    );
    assert!(p.wire_text()[2].contains("notifications/initialized"));
    assert!(
        p.initialize(CLIENT)
            .is_err_and(|e| e.kind() == ErrorKind::AlreadyConnected)
    );
}

#[test]
fn server_echoes_supported_version_and_answers_latest_otherwise() {
    let (_, out) = ready_server("2024-11-05");
    assert_eq!(out[0]["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(out[0]["result"]["serverInfo"]["name"], "test-server");
    let (_, out) = ready_server("2099-01-01");
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    let (_, out) = ready_server("2026-07-28");
    assert_eq!(
        out[0]["result"]["protocolVersion"], "2025-11-25",
        "the modern era has no handshake"
    );
}

#[test]
fn client_with_old_versions_gets_its_version() {
    let mut p = Pair::new(
        client_config().versions(&[ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26]),
        server_config(),
    );
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    assert_eq!(p.client().version(), Some(ProtocolVersion::V2025_03_26));
    assert_eq!(p.server().version(), Some(ProtocolVersion::V2025_03_26));
}

#[test]
fn client_fails_connection_on_unsupported_version() {
    let mut p = Pair::new(
        client_config().versions(&[ProtocolVersion::V2025_11_25]),
        server_config().versions(&[ProtocolVersion::V2024_11_05]),
    );
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    let closed = p.events[CLIENT].iter().find_map(|e| match e {
        Event::Closed(Some(e)) => Some(e.clone()),
        _ => None,
    });
    assert_eq!(closed.unwrap().kind(), ErrorKind::ProtocolVersionMismatch);
    assert!(p.client().is_closed());
    assert!(
        !p.wire_text()
            .iter()
            .any(|w| w.contains("notifications/initialized"))
    );
}

#[test]
fn modern_only_server_rejects_initialize_with_supported_list() {
    let mut s = Session::server(server_config().versions(&[ProtocolVersion::V2026_07_28]));
    s.handle_bytes(mcp_proto::Instant::ZERO, init_line("2025-06-18").as_bytes());
    let out = collect(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602);
    assert_eq!(out[0]["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(out[0]["error"]["data"]["requested"], "2025-06-18");
}

#[test]
fn only_ping_before_initialization() {
    let mut p = Pair::default_pair();
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\n",
    );
    assert_eq!(out[0]["id"], 5);
    assert_eq!(out[0]["error"]["code"], ErrorKind::NotInitialized.code());
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n",
    );
    assert_eq!(out[0], json!({"jsonrpc":"2.0","id":6,"result":{}}));
    // After initialize but before initialized, still refused.
    let out = p.roundtrip(SERVER, &init_line("2025-06-18"));
    assert!(out[0]["result"].is_object());
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], ErrorKind::NotInitialized.code());
    // A second initialize is refused.
    let out = p.roundtrip(SERVER, &init_line("2025-06-18"));
    assert_eq!(out[0]["error"]["code"], ErrorKind::AlreadyConnected.code());
    p.roundtrip(SERVER, INITIALIZED);
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}\n",
    );
    assert!(out.is_empty(), "handed to the application");
    let ev = p.take_events(SERVER);
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Request(r) if r.method == "tools/list"))
    );
    // Client side: nothing but ping before the handshake.
    let mut c = Session::client(client_config());
    let e = c
        .send_request(p.now, "tools/list", None, RequestOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotInitialized);
    assert!(
        c.send_request(p.now, "ping", None, RequestOptions::default())
            .is_ok()
    );
    assert_eq!(
        c.notify("notifications/roots/list_changed", None)
            .unwrap_err()
            .kind(),
        ErrorKind::NotInitialized
    );
}

#[test]
fn server_may_log_before_initialized_but_nothing_else() {
    let mut s = Session::server(server_config());
    s.handle_bytes(mcp_proto::Instant::ZERO, init_line("2025-06-18").as_bytes());
    let _ = collect(&mut s);
    assert!(
        s.notify(
            "notifications/message",
            Some(raw(r#"{"level":"info","data":"x"}"#))
        )
        .is_ok()
    );
    assert_eq!(
        s.notify("notifications/tools/list_changed", None)
            .unwrap_err()
            .kind(),
        ErrorKind::NotInitialized
    );
    assert_eq!(
        s.send_request(
            mcp_proto::Instant::ZERO,
            "roots/list",
            None,
            RequestOptions::default()
        )
        .unwrap_err()
        .kind(),
        ErrorKind::NotInitialized
    );
}

#[test]
fn request_response_roundtrip_keeps_raw_json() {
    let mut p = Pair::ready();
    let id = p
        .send_request(
            CLIENT,
            "tools/call",
            Some(raw(r#"{"name":"echo","arguments":{"text":"hé\n"}}"#)),
            RequestOptions::default(),
        )
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    assert_eq!(req.method, "tools/call");
    assert_eq!(
        req.params.unwrap().get(),
        r#"{"name":"echo","arguments":{"text":"hé\n"}}"#
    );
    assert!(req.progress_token.is_none());
    p.respond(
        SERVER,
        &req.id,
        raw(r#"{"content":[{"type":"text","text":"hé\n"}]}"#),
    )
    .unwrap();
    p.deliver_all();
    let Event::Response { id: rid, result } = p.events[CLIENT].remove(0) else {
        panic!()
    };
    assert_eq!(rid, id);
    assert_eq!(
        result.unwrap().get(),
        r#"{"content":[{"type":"text","text":"hé\n"}]}"#
    );
    // A second answer to the same request is refused.
    assert_eq!(
        p.respond(SERVER, &req.id, raw("{}")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn progress_flows_and_must_increase() {
    let mut p = Pair::ready();
    let id = p
        .send_request(
            CLIENT,
            "tools/call",
            Some(raw(r#"{"name":"slow"}"#)),
            RequestOptions {
                progress: true,
                ..Default::default()
            },
        )
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    assert_eq!(req.progress_token, Some(id.clone()));
    p.report_progress(SERVER, &req.id, 1.0, Some(3.0), Some("one"))
        .unwrap();
    assert_eq!(
        p.report_progress(SERVER, &req.id, 1.0, None, None)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidParams
    );
    assert_eq!(
        p.report_progress(SERVER, &req.id, f64::NAN, None, None)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidParams
    );
    p.report_progress(SERVER, &req.id, 2.5, Some(3.0), None)
        .unwrap();
    p.deliver_all();
    let progress: Vec<f64> = p.events[CLIENT]
        .iter()
        .filter_map(|e| match e {
            Event::Progress {
                id: pid, progress, ..
            } if *pid == id => Some(*progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, vec![1.0, 2.5]);
    // A peer that sends a non-increasing value is ignored.
    p.events[CLIENT].clear();
    let token = id.to_string();
    p.roundtrip(CLIENT, &format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":2}}}}\n"
    ));
    let ev = p.take_events(CLIENT);
    assert!(!ev.iter().any(|e| matches!(e, Event::Progress { .. })));
    assert!(ev.iter().any(|e| matches!(e, Event::InvalidMessage(_))));
    p.respond(SERVER, &req.id, raw("{}")).unwrap();
    p.deliver_all();
    // After the outcome, progress is refused.
    assert_eq!(
        p.report_progress(SERVER, &req.id, 9.0, None, None)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn progress_without_token_is_refused() {
    let mut p = Pair::ready();
    p.send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    assert_eq!(
        p.report_progress(SERVER, &req.id, 1.0, None, None)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidParams
    );
}

#[test]
fn timeout_cancels_on_the_wire_and_late_response_is_dropped() {
    let mut p = Pair::ready();
    let t0 = p.now;
    let id = p
        .send_request(
            CLIENT,
            "tools/call",
            Some(raw(r#"{"name":"x"}"#)),
            RequestOptions {
                timeout: Some(Duration::from_secs(2)),
                ..Default::default()
            },
        )
        .unwrap();
    p.deliver_all();
    assert_eq!(p.client().poll_timeout(), Some(t0 + Duration::from_secs(2)));
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    p.pass(Duration::from_secs(1));
    assert!(p.events[CLIENT].is_empty());
    p.sessions[CLIENT].handle_timeout(p.now); // spurious calls are harmless
    p.pass(Duration::from_secs(1));
    let Event::Response { id: rid, result } = p.events[CLIENT].remove(0) else {
        panic!()
    };
    assert_eq!(rid, id);
    assert_eq!(result.unwrap_err().kind(), ErrorKind::Timeout);
    assert!(
        p.wire_text()
            .last()
            .unwrap()
            .contains("notifications/cancelled")
    );
    let Event::Cancelled { id: cid, reason } = p.events[SERVER].remove(0) else {
        panic!()
    };
    assert_eq!(cid, req.id);
    assert_eq!(reason.as_deref(), Some("request timed out"));
    // The cancelled request is never answered.
    assert_eq!(
        p.respond(SERVER, &req.id, raw("{}")).unwrap_err().kind(),
        ErrorKind::RequestCancelled
    );
    assert!(!p.server().has_transmit());
    // A late response from a peer that raced the cancellation is dropped quietly.
    p.roundtrip(
        CLIENT,
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n"),
    );
    assert!(p.take_events(CLIENT).is_empty());
    assert_eq!(p.client().poll_timeout(), None);
}

#[test]
fn progress_resets_timeout_up_to_a_maximum() {
    let mut p = Pair::ready();
    let id = p
        .send_request(
            CLIENT,
            "tools/call",
            Some(raw(r#"{"name":"x"}"#)),
            RequestOptions {
                timeout: Some(Duration::from_secs(2)),
                reset_timeout_on_progress: true,
                max_total_timeout: Some(Duration::from_secs(5)),
                progress: true,
                ..Default::default()
            },
        )
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    for i in 1..=3 {
        p.pass(Duration::from_millis(1500));
        p.report_progress(SERVER, &req.id, f64::from(i), None, None)
            .unwrap();
        p.deliver_all();
    }
    // 4.5 s elapsed, still alive thanks to progress; the 5 s maximum then ends it.
    assert!(
        !p.events[CLIENT]
            .iter()
            .any(|e| matches!(e, Event::Response { .. }))
    );
    p.pass(Duration::from_millis(500));
    let outcome = p.events[CLIENT].iter().find_map(|e| match e {
        Event::Response { id: rid, result } if *rid == id => Some(result.clone()),
        _ => None,
    });
    assert_eq!(outcome.unwrap().unwrap_err().kind(), ErrorKind::Timeout);
}

#[test]
fn explicit_cancel_both_ways() {
    let mut p = Pair::ready();
    let id = p
        .send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    p.cancel(CLIENT, &id, Some("user")).unwrap();
    assert_eq!(
        p.cancel(CLIENT, &id, None).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    p.deliver_all();
    let Event::Response { result, .. } = p.events[CLIENT].remove(0) else {
        panic!()
    };
    assert_eq!(result.unwrap_err().kind(), ErrorKind::RequestCancelled);
    assert!(
        matches!(&p.events[SERVER][0], Event::Cancelled { reason: Some(r), .. } if r == "user")
    );
    assert_eq!(
        p.respond_error(SERVER, &req.id, Error::internal("x"))
            .unwrap_err()
            .kind(),
        ErrorKind::RequestCancelled
    );
    // Server to client too.
    let sid = p
        .send_request(SERVER, "roots/list", None, RequestOptions::default())
        .unwrap();
    p.deliver_all();
    let Some(Event::Request(creq)) = p.events[CLIENT].pop() else {
        panic!()
    };
    p.cancel(SERVER, &sid, None).unwrap();
    p.deliver_all();
    assert!(
        p.events[CLIENT]
            .iter()
            .any(|e| matches!(e, Event::Cancelled { id, .. } if *id == creq.id))
    );
    assert!(p.respond(CLIENT, &creq.id, raw("{}")).is_err());
    // Unknown or stale cancellations are ignored silently.
    let out = p.roundtrip(SERVER, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":999}}\n");
    assert!(out.is_empty());
}

#[test]
fn initialize_is_never_cancelled() {
    let mut c = Session::client(client_config());
    let id = c.initialize(mcp_proto::Instant::ZERO).unwrap();
    assert_eq!(
        c.cancel(mcp_proto::Instant::ZERO, &id, None)
            .unwrap_err()
            .kind(),
        ErrorKind::ProtocolInvalid
    );
}

#[test]
fn initialize_timeout_fails_the_connection() {
    let mut c = Session::client(client_config());
    c.initialize(mcp_proto::Instant::ZERO).unwrap();
    let deadline = c.poll_timeout().unwrap();
    c.handle_timeout(deadline);
    let mut buf = Vec::new();
    while c.poll_transmit(&mut buf).is_some() {}
    assert!(!String::from_utf8_lossy(&buf).contains("cancelled"));
    let ev: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(matches!(&ev[..], [Event::Closed(Some(e))] if e.kind() == ErrorKind::Timeout));
}

#[test]
fn duplicate_inbound_id_gets_an_error() {
    let mut p = Pair::ready();
    let msg = "{\"jsonrpc\":\"2.0\",\"id\":\"dup\",\"method\":\"tools/list\"}\n";
    assert!(p.roundtrip(SERVER, msg).is_empty());
    let out = p.roundtrip(SERVER, msg);
    assert_eq!(out[0]["id"], "dup");
    assert_eq!(out[0]["error"]["code"], -32600);
    // The first one is still answerable.
    p.respond(SERVER, &RequestId::from("dup"), raw("{\"tools\":[]}"))
        .unwrap();
}

#[test]
fn unknown_response_ids_are_reported() {
    let mut p = Pair::ready();
    p.roundtrip(CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":4242,\"result\":{}}\n");
    p.roundtrip(
        CLIENT,
        "{\"jsonrpc\":\"2.0\",\"id\":\"zz\",\"error\":{\"code\":-32603,\"message\":\"x\"}}\n",
    );
    let ev = p.take_events(CLIENT);
    assert!(matches!(&ev[0], Event::UnknownResponse { id } if *id == RequestId::Number(4242)));
    assert!(matches!(&ev[1], Event::UnknownResponse { id } if *id == RequestId::from("zz")));
}

#[test]
fn method_not_found_and_capabilities() {
    let mut p = Pair::new(
        client_config(),
        Config::new("bare", "1").capabilities(raw(r#"{"tools":{}}"#)),
    );
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    // Unknown method.
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope/nothing\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], -32601);
    // Known method whose capability the server did not declare.
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], -32601);
    // Wrong direction: a server-to-client method sent to the server.
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":{}}\n",
    );
    assert_eq!(out[0]["error"]["code"], -32601);
    // Outbound: the client refuses to call what the server did not declare.
    let e = p
        .send_request(CLIENT, "resources/list", None, RequestOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MethodNotFound);
    assert!(
        p.send_request(CLIENT, "tools/list", None, RequestOptions::default())
            .is_ok()
    );
    // Server refuses sampling when the client did not declare it.
    let mut p = Pair::new(Config::new("c", "1"), server_config());
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    let e = p
        .send_request(
            SERVER,
            "sampling/createMessage",
            Some(raw("{}")),
            RequestOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MethodNotFound);
    // Custom methods are opt-in.
    let mut cfg = server_config();
    cfg.allow_custom_methods = true;
    let mut p = Pair::new(client_config(), cfg);
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    assert!(
        p.roundtrip(
            SERVER,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/custom\"}\n"
        )
        .is_empty()
    );
}

#[test]
fn methods_follow_the_negotiated_version() {
    let mut p = Pair::new(
        client_config().versions(&[ProtocolVersion::V2025_03_26]),
        server_config(),
    );
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    let e = p
        .send_request(
            SERVER,
            "elicitation/create",
            Some(raw("{}")),
            RequestOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MethodNotFound);
    let mut p = Pair::ready();
    assert!(
        p.send_request(
            SERVER,
            "elicitation/create",
            Some(raw("{}")),
            RequestOptions::default()
        )
        .is_ok()
    );
}

#[test]
fn invalid_params_and_invalid_requests() {
    let mut s = Session::server(server_config());
    let now = mcp_proto::Instant::ZERO;
    s.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
    let out = collect(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602);
    s.handle_bytes(
        now,
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}\n",
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32602);
    let (mut s, _) = ready_server("2025-06-18");
    s.handle_bytes(
        now,
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":[1]}\n",
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32602);
    s.handle_bytes(
        now,
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":5}\n",
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32600);
    s.handle_bytes(now, b"{\"id\":5,\"method\":\"tools/list\"}\n");
    let out = collect(&mut s);
    assert_eq!(
        (out[0]["id"].clone(), out[0]["error"]["code"].clone()),
        (json!(5), json!(-32600))
    );
    s.handle_bytes(now, b"this is not json\n");
    let out = collect(&mut s);
    assert_eq!(
        out[0],
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":out[0]["error"]["message"]}})
    );
    // Invalid notifications and responses are never answered.
    s.handle_bytes(now, b"{\"jsonrpc\":\"1.0\",\"method\":\"x\"}\n{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n");
    assert!(collect(&mut s).is_empty());
    // The session kept serving.
    s.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
    assert_eq!(collect(&mut s)[0]["result"], json!({}));
}

#[test]
fn bounds_on_size_and_in_flight() {
    let mut cfg = server_config();
    cfg.max_message_size = 400;
    cfg.max_inbound_in_flight = 2;
    let mut p = Pair::new(client_config(), cfg);
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "a".repeat(1000)
    );
    let out = p.roundtrip(SERVER, &big);
    assert_eq!(out[0]["error"]["code"], ErrorKind::LimitExceeded.code());
    assert_eq!(out[0]["id"], serde_json::Value::Null);
    // Resynchronised: the next line works.
    assert_eq!(
        p.roundtrip(
            SERVER,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        )[0]["result"],
        json!({})
    );
    // Oversized bodies through handle_message too.
    p.feed_message(SERVER, big.trim_end().as_bytes());
    assert_eq!(
        p.take_sent(SERVER)[0]["error"]["code"],
        ErrorKind::LimitExceeded.code()
    );
    // In-flight limit.
    for id in 10..12 {
        assert!(
            p.roundtrip(
                SERVER,
                &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n")
            )
            .is_empty()
        );
    }
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], ErrorKind::LimitExceeded.code());
    // Outbound limit.
    let mut ccfg = client_config();
    ccfg.max_outbound_in_flight = 1;
    let mut p = Pair::new(ccfg, server_config());
    p.initialize(CLIENT).unwrap();
    p.deliver_all();
    p.send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap();
    let e = p
        .send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
}

#[test]
fn graceful_close_answers_every_pipelined_request() {
    let (mut s, _) = ready_server("2025-06-18");
    let now = mcp_proto::Instant::ZERO;
    let mut input = String::new();
    for i in 0..500 {
        input.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\"}}}}\n"));
    }
    // The last line lacks its newline: still served.
    input.push_str(
        "{\"jsonrpc\":\"2.0\",\"id\":500,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}",
    );
    s.handle_bytes(now, input.as_bytes());
    s.handle_input_closed(now);
    let mut requests = Vec::new();
    while let Some(e) = s.poll_event() {
        match e {
            Event::Request(r) => requests.push(r),
            Event::Closed(_) => panic!("closed before answering"),
            _ => {}
        }
    }
    assert_eq!(requests.len(), 501);
    assert_eq!(s.state(), State::Closing);
    // New requests after the input ended cannot arrive; answer all in flight.
    for r in requests.iter().rev() {
        s.respond(&r.id, raw("{\"content\":[]}")).unwrap();
    }
    let out = collect(&mut s);
    assert_eq!(out.len(), 501);
    let ev: Vec<Event> = std::iter::from_fn(|| s.poll_event()).collect();
    assert!(matches!(&ev[..], [Event::Closed(None)]));
    assert!(s.is_closed());
    assert!(s.poll_event().is_none());
}

#[test]
fn local_close_refuses_new_requests_and_fails_pending() {
    let mut p = Pair::ready();
    let id = p
        .send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    p.close(SERVER);
    assert_eq!(p.server().state(), State::Closing);
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/list\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], ErrorKind::TransportClosed.code());
    p.respond(SERVER, &req.id, raw("{\"tools\":[]}")).unwrap();
    p.deliver_all();
    assert!(p.server().is_closed());
    assert!(
        p.events[CLIENT]
            .iter()
            .any(|e| matches!(e, Event::Response { id: r, result: Ok(_) } if *r == id))
    );
    assert!(matches!(p.events[SERVER].last(), Some(Event::Closed(None))));
    // Client close: pending outbound fail once with TransportClosed.
    let id2 = p
        .send_request(CLIENT, "tools/list", None, RequestOptions::default())
        .unwrap();
    p.close(CLIENT);
    let ev = p.take_events(CLIENT);
    let outcomes: Vec<_> = ev
        .iter()
        .filter(|e| matches!(e, Event::Response { id, .. } if *id == id2))
        .collect();
    assert_eq!(outcomes.len(), 1);
}

#[test]
fn abrupt_close_fails_every_pending_request_exactly_once() {
    let mut p = Pair::ready();
    let mut ids = Vec::new();
    for _ in 0..10 {
        ids.push(
            p.send_request(CLIENT, "tools/list", None, RequestOptions::default())
                .unwrap(),
        );
    }
    p.deliver_all();
    p.sessions[CLIENT].handle_closed(
        p.now,
        Some(Error::new(ErrorKind::TransportError, "broken pipe")),
    );
    p.sessions[CLIENT].handle_closed(p.now, None);
    p.sessions[CLIENT].handle_timeout(p.now + Duration::from_secs(3600));
    let ev = p.take_events(CLIENT);
    for id in &ids {
        let n = ev
            .iter()
            .filter(|e| matches!(e, Event::Response { id: r, result: Err(e) } if r == id && e.kind() == ErrorKind::TransportClosed))
            .count();
        assert_eq!(n, 1);
    }
    assert_eq!(
        ev.iter().filter(|e| matches!(e, Event::Closed(_))).count(),
        1
    );
    assert!(
        matches!(ev.last(), Some(Event::Closed(Some(e))) if e.kind() == ErrorKind::TransportError)
    );
    assert_eq!(
        p.send_request(CLIENT, "tools/list", None, RequestOptions::default())
            .unwrap_err()
            .kind(),
        ErrorKind::TransportClosed
    );
    assert_eq!(p.client().poll_timeout(), None);
}

#[test]
fn batches_only_in_2025_03_26() {
    let (mut s, _) = ready_server("2025-03-26");
    let now = mcp_proto::Instant::ZERO;
    s.handle_bytes(
        now,
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"},7]\n",
    );
    assert!(
        collect(&mut s).is_empty(),
        "held until every request is answered"
    );
    let reqs: Vec<_> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            Event::Request(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(reqs.len(), 2);
    s.respond(&reqs[1].id, raw("{\"prompts\":[]}")).unwrap();
    assert!(collect(&mut s).is_empty());
    s.respond(&reqs[0].id, raw("{\"tools\":[]}")).unwrap();
    let out = collect(&mut s);
    assert_eq!(out.len(), 1);
    let arr = out[0].as_array().unwrap();
    assert_eq!(arr.len(), 4); // ping, invalid element, prompts, tools
    assert!(arr.iter().any(|m| m["id"] == 2 && m["result"] == json!({})));
    assert!(
        arr.iter()
            .any(|m| m["id"] == serde_json::Value::Null && m["error"]["code"] == -32600)
    );
    // initialize inside a batch is refused.
    s.handle_bytes(
        now,
        init_line("2025-03-26")
            .replace('\n', "")
            .replace("{\"jsonrpc", "[{\"jsonrpc")
            .add_close()
            .as_bytes(),
    );
    let out = collect(&mut s);
    assert_eq!(out[0][0]["error"]["code"], -32600);
    // Other versions: -32600 for any batch.
    let (mut s, _) = ready_server("2025-06-18");
    s.handle_bytes(
        now,
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
    );
    let out = collect(&mut s);
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(out[0]["id"], serde_json::Value::Null);
}

/// Two requests with one id in a batch: the batch is refused with one -32600 naming the id
/// (as the HTTP endpoint refuses such a POST), none of its requests reaches the application.
#[test]
fn duplicate_ids_in_a_batch_refuse_the_batch() {
    let (mut s, _) = ready_server("2025-03-26");
    let now = mcp_proto::Instant::ZERO;
    s.handle_bytes(
        now,
        b"[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/list\"},{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]\n",
    );
    let out = collect(&mut s);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 7, "{out:?}");
    assert_eq!(out[0]["error"]["code"], -32600, "{out:?}");
    let requests = std::iter::from_fn(|| s.poll_event())
        .filter(|e| matches!(e, Event::Request(_)))
        .count();
    assert_eq!(requests, 0);
    assert_eq!(s.inbound_in_flight(), 0);
    // Distinct ids in one batch are all served.
    s.handle_bytes(
        now,
        b"[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"ping\"}]\n",
    );
    let out = collect(&mut s);
    assert_eq!(out[0].as_array().map(Vec::len), Some(2), "{out:?}");
}

trait AddClose {
    fn add_close(self) -> String;
}
impl AddClose for String {
    fn add_close(self) -> String {
        self + "]\n"
    }
}

#[test]
fn every_error_kind_crosses_the_wire_with_its_code() {
    let kinds = [
        ErrorKind::Parse,
        ErrorKind::ProtocolInvalid,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::TransportClosed,
        ErrorKind::Unauthorized,
        ErrorKind::NotFound,
        ErrorKind::Timeout,
        ErrorKind::TransportError,
        ErrorKind::NotInitialized,
        ErrorKind::AlreadyConnected,
        ErrorKind::DuplicateRegistration,
        ErrorKind::LimitExceeded,
        ErrorKind::HandlerFailed,
        ErrorKind::ProtocolVersionMismatch,
        ErrorKind::RequestCancelled,
        ErrorKind::UrlElicitationRequired,
    ];
    let mut p = Pair::ready();
    for kind in kinds {
        let id = p
            .send_request(CLIENT, "tools/list", None, RequestOptions::default())
            .unwrap();
        p.deliver_all();
        let Some(Event::Request(req)) = p.events[SERVER].pop() else {
            panic!()
        };
        p.respond_error(
            SERVER,
            &req.id,
            Error::new(kind, "because").with_data(raw("{\"why\":1}")),
        )
        .unwrap();
        p.deliver_all();
        let Some(Event::Response {
            id: rid,
            result: Err(e),
        }) = p.events[CLIENT].pop()
        else {
            panic!()
        };
        assert_eq!(rid, id);
        if kind.is_local() {
            // A local kind has no code of its own: it crosses as an internal error.
            assert_eq!(e.kind(), ErrorKind::Internal, "{kind:?}");
            assert_eq!(e.code(), -32603);
        } else {
            assert_eq!(e.kind(), kind);
            assert_eq!(e.code(), kind.code());
        }
        assert_eq!(e.message(), "because");
        assert_eq!(e.data().unwrap().get(), "{\"why\":1}");
    }
}

#[test]
fn peer_errors_without_id_are_reported() {
    let mut p = Pair::ready();
    p.roundtrip(CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n");
    let ev = p.take_events(CLIENT);
    assert!(matches!(&ev[..], [Event::PeerError(e)] if e.kind() == ErrorKind::Parse));
}

#[test]
fn notifications_pass_through_with_interned_methods() {
    let mut p = Pair::ready();
    p.notify(
        SERVER,
        "notifications/resources/updated",
        Some(raw(r#"{"uri":"test://x"}"#)),
        None,
    )
    .unwrap();
    p.notify(CLIENT, "notifications/roots/list_changed", None, None)
        .unwrap();
    p.deliver_all();
    assert!(
        matches!(&p.events[CLIENT][0], Event::Notification { method, params: Some(pr) }
        if method == "notifications/resources/updated" && pr.get() == r#"{"uri":"test://x"}"#)
    );
    assert!(
        matches!(&p.events[SERVER][0], Event::Notification { method, .. } if method == "notifications/roots/list_changed")
    );
    // A server notification sent by the client is not delivered.
    p.events[SERVER].clear();
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
    );
    assert!(out.is_empty());
    assert!(
        p.take_events(SERVER)
            .iter()
            .all(|e| matches!(e, Event::InvalidMessage(_)))
    );
    // Session-owned notifications cannot be sent by hand.
    assert!(
        p.notify(CLIENT, "notifications/cancelled", None, None)
            .is_err()
    );
}

#[test]
fn raw_framing_for_message_transports() {
    let mut c = Session::client(client_config().framing(Framing::Raw));
    c.initialize(mcp_proto::Instant::ZERO).unwrap();
    let mut buf = Vec::new();
    let t = c.poll_transmit(&mut buf).unwrap();
    assert_eq!(t.len, buf.len());
    assert!(buf.ends_with(b"}"));
    serde_json::from_slice::<serde_json::Value>(&buf).unwrap();
}

#[test]
fn transmit_reports_related_request() {
    let mut p = Pair::ready();
    p.send_request(
        CLIENT,
        "tools/call",
        Some(raw(r#"{"name":"x"}"#)),
        RequestOptions {
            progress: true,
            ..Default::default()
        },
    )
    .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!()
    };
    p.report_progress(SERVER, &req.id, 1.0, None, None).unwrap();
    p.send_request(
        SERVER,
        "sampling/createMessage",
        Some(raw("{}")),
        RequestOptions {
            related_to: Some(req.id.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    p.respond(SERVER, &req.id, raw("{}")).unwrap();
    let mut buf = Vec::new();
    let mut related = Vec::new();
    while let Some(t) = p.sessions[SERVER].poll_transmit(&mut buf) {
        related.push((t.kind, t.related));
    }
    use mcp_proto::session::MessageKind::*;
    assert_eq!(
        related,
        vec![
            (Notification, Some(req.id.clone())),
            (Request, Some(req.id.clone())),
            (Response, Some(req.id.clone()))
        ]
    );
}

#[test]
fn modern_only_methods_get_method_not_found_before_the_handshake() {
    let mut p = Pair::default_pair();
    let out = p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}\n",
    );
    assert_eq!(out[0]["error"]["code"], -32601);
}

#[test]
fn pretty_printed_raw_json_stays_on_one_line() {
    let mut p = Pair::ready();
    let pretty =
        serde_json::to_string_pretty(&json!({"name": "echo", "arguments": {"text": "a\nb"}}))
            .unwrap();
    assert!(pretty.contains('\n'));
    p.send_request(
        CLIENT,
        "tools/call",
        Some(raw(&pretty)),
        RequestOptions::default(),
    )
    .unwrap();
    p.deliver_all();
    let Event::Request(req) = p.events[SERVER].remove(0) else {
        panic!("{:?}", p.events[SERVER])
    };
    let v: serde_json::Value = serde_json::from_str(req.params.unwrap().get()).unwrap();
    assert_eq!(
        v["arguments"]["text"], "a\nb",
        "escaped newlines inside strings are untouched"
    );
    p.respond(SERVER, &req.id, raw("{\n  \"content\": []\n}"))
        .unwrap();
    p.deliver_all();
    assert!(matches!(
        &p.events[CLIENT][0],
        Event::Response { result: Ok(_), .. }
    ));
}

#[test]
fn nothing_is_sent_after_a_failed_handshake() {
    let mut c = Session::client(client_config());
    c.initialize(mcp_proto::Instant::ZERO).unwrap();
    c.send_request(
        mcp_proto::Instant::ZERO,
        "ping",
        None,
        RequestOptions::default(),
    )
    .unwrap();
    let deadline = c.poll_timeout().unwrap();
    c.handle_timeout(deadline);
    let mut buf = Vec::new();
    assert!(
        c.poll_transmit(&mut buf).is_none(),
        "queued messages are dropped once closed"
    );
    assert!(c.is_closed());
}

#[test]
fn a_server_session_can_start_ready_without_a_handshake() {
    let obj = |s: &str| serde_json::value::RawValue::from_string(s.to_owned()).unwrap();
    let now = mcp_proto::Instant::ZERO;
    let err = Session::server_ready(
        server_config().versions(&[ProtocolVersion::V2025_06_18]),
        ProtocolVersion::V2025_11_25,
        obj("{}"),
        obj("{}"),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ProtocolVersionMismatch);
    let err = Session::server_ready(
        server_config(),
        ProtocolVersion::V2025_11_25,
        obj("[]"),
        obj("{}"),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidParams);

    let mut s = Session::server_ready(
        server_config(),
        ProtocolVersion::V2025_11_25,
        obj(r#"{"name":"c","version":"1"}"#),
        obj(r#"{"roots":{}}"#),
    )
    .unwrap();
    assert_eq!(s.state(), State::Ready);
    assert_eq!(s.version(), Some(ProtocolVersion::V2025_11_25));
    match s.poll_event() {
        Some(Event::Ready {
            version, peer_info, ..
        }) => {
            assert_eq!(version, ProtocolVersion::V2025_11_25);
            assert_eq!(peer_info.get(), r#"{"name":"c","version":"1"}"#);
        }
        other => panic!("{other:?}"),
    }
    assert!(collect(&mut s).is_empty(), "nothing of a handshake is sent");
    // Requests are served at once; the peer's declared capabilities count (roots/list may be
    // sent to it).
    s.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n");
    let out = collect(&mut s);
    assert_eq!(out[0]["id"], 7);
    assert!(out[0]["result"].is_object());
    assert!(
        s.send_request(now, "roots/list", None, RequestOptions::default())
            .is_ok()
    );
    // A handshake on a session already ready is refused.
    s.handle_bytes(now, init_line("2025-11-25").as_bytes());
    let out = collect(&mut s);
    let answer = out
        .iter()
        .find(|m| m["id"] == 0)
        .expect("initialize answered");
    assert!(answer["error"].is_object(), "{answer}");
}

/// A client session whose handshake completed at 2025-11-25 (ids from 1).
fn ready_client() -> Session {
    let mut c = Session::client(Config::new("c", "1").framing(Framing::Raw));
    let now = mcp_proto::Instant::ZERO;
    c.initialize(now).unwrap();
    let mut buf = Vec::new();
    let t = c.poll_transmit(&mut buf).unwrap();
    assert_eq!(
        (t.id, t.method),
        (Some(RequestId::Number(1)), Some("initialize"))
    );
    c.handle_message(now, init_result(1, "2025-11-25").as_bytes());
    assert!(matches!(c.poll_event(), Some(Event::Ready { .. })));
    buf.clear();
    let t = c.poll_transmit(&mut buf).unwrap();
    assert_eq!((t.id, t.method), (None, Some("notifications/initialized")));
    c
}

fn init_result(id: i64, version: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":version,"capabilities":{"tools":{}},
        "serverInfo":{"name":"s","version":"1"}}})
    .to_string()
}

#[test]
fn the_handshake_runs_again_for_a_lost_http_session() {
    let now = mcp_proto::Instant::ZERO;
    let mut c = ready_client();
    let again = c.reinitialize(now).unwrap();
    assert!(
        c.reinitialize(now)
            .is_err_and(|e| e.kind() == ErrorKind::AlreadyConnected)
    );
    // Requests may be made meanwhile.
    let r = c
        .send_request(now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let out = collect(&mut c);
    assert_eq!(out[0]["method"], "initialize");
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(out[0]["id"], json!(again));
    assert_eq!(out[1]["id"], json!(r));
    let RequestId::Number(n) = again else {
        panic!()
    };
    c.handle_message(now, init_result(n, "2025-11-25").as_bytes());
    assert!(c.poll_event().is_none(), "no second Ready");
    let out = collect(&mut c);
    assert_eq!(out[0]["method"], "notifications/initialized");
    assert_eq!(c.state(), State::Ready);

    // A new session at another version is refused.
    let RequestId::Number(n) = c.reinitialize(now).unwrap() else {
        panic!()
    };
    c.handle_message(now, init_result(n, "2025-06-18").as_bytes());
    let mut closed = None;
    while let Some(e) = c.poll_event() {
        if let Event::Closed(e) = e {
            closed = e;
        }
    }
    assert_eq!(
        closed.map(|e| e.kind()),
        Some(ErrorKind::ProtocolVersionMismatch)
    );
    // Only a client whose handshake completed runs it again.
    assert!(
        Session::client(Config::new("c", "1"))
            .reinitialize(now)
            .is_err()
    );
    assert!(Session::server(server_config()).reinitialize(now).is_err());
}

#[test]
fn a_request_failed_by_its_transport_ends_once_and_quietly() {
    let now = mcp_proto::Instant::ZERO;
    let mut c = ready_client();
    let r = c
        .send_request(now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let t = c.poll_transmit(&mut Vec::new()).unwrap();
    assert_eq!((t.id.as_ref(), t.method), (Some(&r), Some("tools/list")));
    assert!(c.is_awaiting(&r));
    c.fail_request(
        now,
        &r,
        Error::new(ErrorKind::Unauthorized, "POST: HTTP 401"),
    );
    assert!(!c.is_awaiting(&r));
    match c.poll_event() {
        Some(Event::Response { id, result: Err(e) }) => {
            assert_eq!((id, e.kind()), (r.clone(), ErrorKind::Unauthorized));
        }
        other => panic!("{other:?}"),
    }
    // Nothing goes to the peer, and a second failure (or a late response) changes nothing.
    assert!(collect(&mut c).is_empty());
    c.fail_request(now, &r, Error::new(ErrorKind::TransportError, "again"));
    assert!(c.poll_event().is_none());
    // A cancellation names the request it cancels.
    let r = c
        .send_request(now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let _ = c.poll_transmit(&mut Vec::new());
    c.cancel(now, &r, None).unwrap();
    let t = c.poll_transmit(&mut Vec::new()).unwrap();
    assert_eq!(
        (t.id.as_ref(), t.method),
        (Some(&r), Some("notifications/cancelled"))
    );

    // A failed handshake fails the session with the transport's error.
    let mut c = Session::client(Config::new("c", "1"));
    let init = c.initialize(now).unwrap();
    c.fail_request(
        now,
        &init,
        Error::new(ErrorKind::TransportError, "connection refused"),
    );
    let mut closed = None;
    while let Some(e) = c.poll_event() {
        if let Event::Closed(e) = e {
            closed = e;
        }
    }
    assert_eq!(closed.unwrap().message(), "connection refused");
}

/// A reply to one of our requests that cannot be read as a response (an `error` that is not
/// an error object, an error without a code, both `result` and `error`) ends that request at
/// once with a protocol error, instead of leaving its waiter to the timeout.
#[test]
fn a_malformed_reply_fails_its_request_at_once() {
    for reply in [
        r#"{"jsonrpc":"2.0","id":ID,"error":"oops"}"#,
        r#"{"jsonrpc":"2.0","id":ID,"error":{"message":"no code"}}"#,
        r#"{"jsonrpc":"2.0","id":ID,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"1.0","id":ID,"result":{}}"#,
    ] {
        let mut p = Pair::ready();
        let id = p
            .send_request(SERVER, "ping", None, RequestOptions::default())
            .unwrap();
        p.take_sent(SERVER);
        let RequestId::Number(n) = id else { panic!() };
        let out = p.roundtrip(
            SERVER,
            &format!("{}\n", reply.replace("ID", &n.to_string())),
        );
        assert!(out.is_empty(), "a reply is never answered: {out:?}");
        assert!(!p.server().is_awaiting(&id), "{reply}");
        let events = p.take_events(SERVER);
        assert!(
            events.iter().any(|e| matches!(
                e,
                Event::Response { id: got, result: Err(err) }
                    if *got == id && err.kind() == ErrorKind::ProtocolInvalid
                        && err.message().contains("malformed reply")
            )),
            "{reply}: {events:?}"
        );
        assert_eq!(p.server().poll_timeout(), None, "{reply}");
    }
    // An unreadable reply naming no request of ours changes nothing.
    let mut p = Pair::ready();
    let id = p
        .send_request(SERVER, "ping", None, RequestOptions::default())
        .unwrap();
    p.roundtrip(
        SERVER,
        "{\"jsonrpc\":\"2.0\",\"id\":999,\"error\":\"oops\"}\n",
    );
    assert!(p.server().is_awaiting(&id));
}

/// A malformed reply to the request that starts the session (`initialize`, or
/// `server/discover` with no handshake to fall back on) ends the session with a protocol
/// error, and `Event::Closed` stays its last event: the reply's `InvalidMessage` does not
/// follow it (the pair checks that no event comes after `Closed`).
#[test]
fn a_malformed_reply_to_the_start_leaves_closed_the_last_event() {
    for discovery in [Discovery::Initialize, Discovery::Discover] {
        let client = client_config()
            .versions(&ProtocolVersion::ALL)
            .discovery(discovery);
        let mut p = Pair::new(client, server_config());
        let id = p.start(CLIENT).unwrap();
        p.take_sent(CLIENT);
        let RequestId::Number(n) = id else { panic!() };
        p.feed_bytes(
            CLIENT,
            format!("{{\"jsonrpc\":\"1.0\",\"id\":{n},\"result\":{{}}}}\n").as_bytes(),
        );
        let events = p.take_events(CLIENT);
        assert!(
            matches!(
                events.last(),
                Some(Event::Closed(Some(e))) if e.kind() == ErrorKind::ProtocolInvalid
            ),
            "{discovery:?}: {events:?}"
        );
    }
}

/// The request that starts the session (`initialize`, `server/discover`) is not the
/// application's to cancel: refused, and the start goes on to `Event::Ready`.
#[test]
fn the_start_request_cannot_be_cancelled() {
    for discovery in [Discovery::Initialize, Discovery::Discover, Discovery::Auto] {
        let client = client_config()
            .versions(&ProtocolVersion::ALL)
            .discovery(discovery);
        let server = server_config().versions(&ProtocolVersion::ALL);
        let mut p = Pair::new(client, server);
        let id = p.start(CLIENT).unwrap();
        // The pair checks that it fails (only the application's own requests are its to
        // cancel).
        let r = p.cancel(CLIENT, &id, None);
        assert!(r.is_err(), "{discovery:?}");
        p.deliver_all();
        assert!(
            p.models[CLIENT].ready,
            "{discovery:?}: {:?}",
            p.events[CLIENT]
        );
    }
}

/// `_meta.progressToken` is a string or an integer: anything else is refused with -32602.
#[test]
fn a_progress_token_that_is_not_a_string_or_integer_is_refused() {
    for token in [r#"{"a":1}"#, "[1]", "1.5", "true"] {
        let mut p = Pair::ready();
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{{\"_meta\":{{\"progressToken\":{token}}}}}}}\n"
        );
        let out = p.roundtrip(SERVER, &msg);
        assert_eq!(out.len(), 1, "{token}: {out:?}");
        assert_eq!(out[0]["id"], 5);
        assert_eq!(out[0]["error"]["code"], -32602, "{token}: {out:?}");
        assert!(
            !p.take_events(SERVER)
                .iter()
                .any(|e| matches!(e, Event::Request(_))),
            "{token}"
        );
    }
    let mut p = Pair::ready();
    let msg = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}\n";
    assert!(p.roundtrip(SERVER, msg).is_empty());
    let events = p.take_events(SERVER);
    assert!(
        events.iter().any(
            |e| matches!(e, Event::Request(r) if r.progress_token == Some(RequestId::from("t")))
        )
    );
}
