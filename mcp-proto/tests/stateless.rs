//! The stateless era (2026-07-28) on a server session: requests that name their version in
//! `_meta`, `server/discover`, the revision's errors, `resultType`, and both eras on one
//! session.

mod common;

use common::*;
use mcp_proto::session::{Config, Event, Session};
use mcp_proto::{ErrorKind, ProtocolVersion, RequestId};
use serde_json::{Value, json};

const NOW: mcp_proto::Instant = mcp_proto::Instant::ZERO;

fn both_eras() -> Session {
    Session::server(server_config().versions(&ProtocolVersion::ALL))
}

fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}
    })
}

fn request(id: i64, method: &str, params: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

fn modern(id: i64, method: &str) -> String {
    request(id, method, json!({"_meta": meta("2026-07-28")}))
}

fn requests(s: &mut Session) -> Vec<mcp_proto::session::InboundRequest> {
    let mut out = Vec::new();
    while let Some(e) = s.poll_event() {
        if let Event::Request(r) = e {
            out.push(r);
        }
    }
    out
}

#[test]
fn a_request_naming_its_version_needs_no_handshake() {
    let mut s = both_eras();
    s.handle_bytes(NOW, modern(7, "tools/list").as_bytes());
    let reqs = requests(&mut s);
    assert_eq!(reqs.len(), 1);
    let era = reqs[0].era.as_ref().expect("a stateless request");
    assert_eq!(era.version, ProtocolVersion::V2026_07_28);
    assert_eq!(era.client_capabilities.get(), "{\"sampling\":{}}");
    assert!(era.client_info.as_ref().unwrap().get().contains("\"c\""));
    assert_eq!(era.log_level, None);
    s.respond(&RequestId::Number(7), raw("{\"tools\":[]}"))
        .unwrap();
    let out = collect(&mut s);
    assert_eq!(out[0]["id"], 7);
    // With `resultType`, and the server naming itself in `_meta`.
    assert_eq!(
        out[0]["result"],
        json!({"resultType": "complete", "tools": [],
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "1.0"}}})
    );
    // The application's own result type stays.
    s.handle_bytes(NOW, modern(8, "tools/call").as_bytes());
    let _ = requests(&mut s);
    s.respond(
        &RequestId::Number(8),
        raw("{\"resultType\":\"input_required\",\"requestState\":\"s\"}"),
    )
    .unwrap();
    assert_eq!(collect(&mut s)[0]["result"]["resultType"], "input_required");
    // The application's own `_meta` keeps its entries beside the server's info.
    s.handle_bytes(NOW, modern(9, "tools/call").as_bytes());
    let _ = requests(&mut s);
    s.respond(
        &RequestId::Number(9),
        raw(r#"{"content":[],"_meta":{"mine":1}}"#),
    )
    .unwrap();
    let meta = collect(&mut s)[0]["result"]["_meta"].clone();
    assert_eq!(meta["mine"], 1);
    assert_eq!(
        meta["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
}

#[test]
fn server_discover_is_answered_by_the_session() {
    let mut config = server_config().versions(&ProtocolVersion::ALL);
    config.instructions = Some("use the tools".into());
    let mut s = Session::server(config);
    s.handle_bytes(NOW, modern(1, "server/discover").as_bytes());
    assert!(requests(&mut s).is_empty());
    let out = collect(&mut s);
    let r = &out[0]["result"];
    assert_eq!(out[0]["id"], 1);
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["supportedVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
    assert_eq!(r["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(r["instructions"], "use the tools");
    assert_eq!(r["ttlMs"], 0);
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    // It validates against the revision's schema type.
    let parsed: mcp_proto::schema::lifecycle::DiscoverResult =
        serde_json::from_value(r.clone()).unwrap();
    assert_eq!(parsed.versions().len(), 5);
}

#[test]
fn the_revisions_errors_carry_the_requests_id() {
    let mut s = both_eras();
    // An unsupported version: -32022 naming what is supported and what was asked.
    s.handle_bytes(
        NOW,
        request(3, "tools/list", json!({"_meta": meta("2099-01-01")})).as_bytes(),
    );
    let out = collect(&mut s);
    assert_eq!(out[0]["id"], 3);
    assert_eq!(out[0]["error"]["code"], -32022);
    assert_eq!(out[0]["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(out[0]["error"]["data"]["supported"][4], "2026-07-28");
    // A handshake version in `_meta` is no stateless request either.
    s.handle_bytes(
        NOW,
        request(4, "tools/list", json!({"_meta": meta("2025-11-25")})).as_bytes(),
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32022);
    // Missing client capabilities: -32602.
    let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    s.handle_bytes(NOW, request(5, "tools/list", no_caps).as_bytes());
    let out = collect(&mut s);
    assert_eq!(
        (out[0]["id"].clone(), out[0]["error"]["code"].clone()),
        (json!(5), json!(-32602))
    );
    assert!(
        out[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    // Methods the revision removed: -32601.
    for (id, m) in [
        (6, "ping"),
        (7, "logging/setLevel"),
        (8, "resources/subscribe"),
        (9, "initialize"),
    ] {
        s.handle_bytes(NOW, modern(id, m).as_bytes());
        let out = collect(&mut s);
        assert_eq!(out[0]["id"], id, "{m}");
        assert_eq!(out[0]["error"]["code"], -32601, "{m}");
    }
    // A bad log level: -32602.
    let mut m = meta("2026-07-28");
    m["io.modelcontextprotocol/logLevel"] = json!("loud");
    s.handle_bytes(
        NOW,
        request(10, "tools/list", json!({"_meta": m})).as_bytes(),
    );
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32602);
    assert!(requests(&mut s).is_empty());
}

#[test]
fn both_eras_share_one_session() {
    let mut s = both_eras();
    // A stateless request first, then a handshake, then both kinds again.
    s.handle_bytes(NOW, modern(1, "prompts/list").as_bytes());
    assert_eq!(requests(&mut s).len(), 1);
    s.respond(&RequestId::Number(1), raw("{\"prompts\":[]}"))
        .unwrap();
    let _ = collect(&mut s);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}});
    s.handle_bytes(NOW, request(2, "initialize", init).as_bytes());
    assert_eq!(
        collect(&mut s)[0]["result"]["protocolVersion"],
        "2025-11-25"
    );
    s.handle_bytes(
        NOW,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
    );
    s.handle_bytes(NOW, request(3, "tools/list", json!({})).as_bytes());
    s.handle_bytes(NOW, modern(4, "tools/list").as_bytes());
    let reqs = requests(&mut s);
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].era.is_none() && reqs[1].era.is_some());
    s.respond(&RequestId::Number(3), raw("{\"tools\":[]}"))
        .unwrap();
    s.respond(&RequestId::Number(4), raw("{\"tools\":[]}"))
        .unwrap();
    let out = collect(&mut s);
    assert!(
        out[0]["result"].get("resultType").is_none(),
        "a handshake-era result as before"
    );
    assert_eq!(out[1]["result"]["resultType"], "complete");
    // `ping` is still a request of the handshake era.
    s.handle_bytes(NOW, request(5, "ping", json!({})).as_bytes());
    assert_eq!(collect(&mut s)[0]["result"], json!({}));
}

#[test]
fn a_handshake_only_server_treats_the_meta_as_before() {
    let mut s = Session::server(server_config());
    s.handle_bytes(NOW, modern(1, "tools/list").as_bytes());
    assert_eq!(
        collect(&mut s)[0]["error"]["code"],
        ErrorKind::NotInitialized.code()
    );
    s.handle_bytes(NOW, modern(2, "server/discover").as_bytes());
    assert_eq!(collect(&mut s)[0]["error"]["code"], -32601);
    // A client session never takes a request for a stateless one.
    let mut c = Session::client(Config::new("c", "1").versions(&ProtocolVersion::ALL));
    c.handle_bytes(NOW, modern(1, "tools/list").as_bytes());
    assert!(requests(&mut c).is_empty());
}

#[test]
fn a_stateless_request_can_be_cancelled_and_report_progress() {
    let mut s = both_eras();
    let mut m = meta("2026-07-28");
    m["progressToken"] = json!("p1");
    s.handle_bytes(
        NOW,
        request(1, "tools/call", json!({"name": "x", "_meta": m})).as_bytes(),
    );
    let reqs = requests(&mut s);
    assert_eq!(
        reqs[0].progress_token,
        Some(mcp_proto::ProgressToken::String("p1".into()))
    );
    s.report_progress(&RequestId::Number(1), 0.5, None, None)
        .unwrap();
    assert_eq!(collect(&mut s)[0]["params"]["progressToken"], "p1");
    s.handle_bytes(
        NOW,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n",
    );
    assert!(matches!(s.poll_event(), Some(Event::Cancelled { .. })));
    assert!(
        s.respond(&RequestId::Number(1), raw("{}"))
            .is_err_and(|e| e.kind() == ErrorKind::RequestCancelled)
    );
}

/// Moves every message each way until neither side has anything to send (raw framing).
fn pump(c: &mut Session, s: &mut Session) {
    loop {
        let mut moved = false;
        let mut buf = Vec::new();
        while c.poll_transmit(&mut buf).is_some() {
            s.handle_message(NOW, &buf);
            buf.clear();
            moved = true;
        }
        while s.poll_transmit(&mut buf).is_some() {
            c.handle_message(NOW, &buf);
            buf.clear();
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

fn client(discovery: mcp_proto::session::Discovery) -> Session {
    Session::client(
        Config::new("c", "1")
            .framing(mcp_proto::session::Framing::Raw)
            .versions(&ProtocolVersion::ALL)
            .discovery(discovery),
    )
}

fn server(versions: &[ProtocolVersion]) -> Session {
    Session::server(
        server_config()
            .framing(mcp_proto::session::Framing::Raw)
            .versions(versions),
    )
}

fn ready_version(c: &mut Session) -> Option<ProtocolVersion> {
    let mut v = None;
    while let Some(e) = c.poll_event() {
        match e {
            Event::Ready { version, .. } => v = Some(version),
            Event::Closed(e) => panic!("closed: {e:?}"),
            _ => {}
        }
    }
    v
}

#[test]
fn a_discovering_client_speaks_the_stateless_era() {
    use mcp_proto::session::{Discovery, RequestOptions};
    for discovery in [Discovery::Discover, Discovery::Auto] {
        let mut c = client(discovery);
        let mut s = server(&ProtocolVersion::ALL);
        c.start(NOW).unwrap();
        pump(&mut c, &mut s);
        assert_eq!(ready_version(&mut c), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(c.version(), Some(ProtocolVersion::V2026_07_28));
        assert!(c.peer_info().unwrap().get().contains("test-server"));
        assert_eq!(
            s.state(),
            mcp_proto::session::State::AwaitingInit,
            "no handshake"
        );
        // Every request carries the era's `_meta`, with the progress token beside it.
        let opts = RequestOptions {
            progress: true,
            ..RequestOptions::default()
        };
        let id = c
            .send_request(
                NOW,
                "tools/call",
                Some(raw(r#"{"name":"x","_meta":{"k":1}}"#)),
                opts,
            )
            .unwrap();
        pump(&mut c, &mut s);
        let reqs = requests(&mut s);
        let era = reqs[0].era.as_ref().expect("a stateless request");
        assert_eq!(era.version, ProtocolVersion::V2026_07_28);
        assert!(era.client_info.as_ref().unwrap().get().contains("\"c\""));
        assert!(reqs[0].progress_token.is_some());
        assert!(
            reqs[0].params.as_ref().unwrap().get().contains("\"k\":1"),
            "the caller's _meta is kept"
        );
        s.respond(&reqs[0].id, raw("{\"content\":[]}")).unwrap();
        pump(&mut c, &mut s);
        let mut got = None;
        while let Some(e) = c.poll_event() {
            if let Event::Response { id: rid, result } = e {
                assert_eq!(rid, id);
                got = Some(result.unwrap());
            }
        }
        assert!(got.unwrap().get().contains("\"resultType\":\"complete\""));
        // `ping` is not a request of the era.
        assert!(
            c.send_request(NOW, "ping", None, RequestOptions::default())
                .is_err()
        );
    }
}

#[test]
fn auto_falls_back_to_the_handshake_and_discover_alone_fails() {
    use mcp_proto::session::Discovery;
    let mut c = client(Discovery::Auto);
    let mut s = server(&ProtocolVersion::HANDSHAKE);
    c.start(NOW).unwrap();
    pump(&mut c, &mut s);
    assert_eq!(ready_version(&mut c), Some(ProtocolVersion::V2025_11_25));
    assert_eq!(s.state(), mcp_proto::session::State::Ready);

    let mut c = client(Discovery::Discover);
    let mut s = server(&ProtocolVersion::HANDSHAKE);
    c.start(NOW).unwrap();
    pump(&mut c, &mut s);
    let mut closed = None;
    while let Some(e) = c.poll_event() {
        if let Event::Closed(e) = e {
            closed = e;
        }
    }
    assert_eq!(closed.unwrap().kind(), ErrorKind::MethodNotFound);

    // A server that never answers: Auto falls back once `server/discover` times out.
    let mut c = Session::client(
        Config::new("c", "1")
            .framing(mcp_proto::session::Framing::Raw)
            .versions(&ProtocolVersion::ALL)
            .discovery(Discovery::Auto),
    );
    c.start(NOW).unwrap();
    let _ = c.poll_transmit(&mut Vec::new());
    let deadline = c.poll_timeout().unwrap();
    c.handle_timeout(deadline);
    let mut buf = Vec::new();
    let t = c.poll_transmit(&mut buf).unwrap();
    assert_eq!(t.method, Some("initialize"));
}

#[test]
fn auto_is_the_default_and_without_a_stateless_version_is_the_handshake() {
    use mcp_proto::session::Discovery;
    assert_eq!(Discovery::default(), Discovery::Auto);
    let config = Config::new("c", "1");
    assert_eq!(config.discovery, Discovery::Auto);
    // `Config::new`'s versions are of the handshake era: nothing to ask `server/discover`
    // for, so the handshake at once (no probe, no probe timeout).
    let mut c = Session::client(config.framing(mcp_proto::session::Framing::Raw));
    c.start(NOW).unwrap();
    let t = c.poll_transmit(&mut Vec::new()).unwrap();
    assert_eq!(t.method, Some("initialize"));
    // With a stateless version among them, the probe first; `Discover` still refuses to
    // start without one.
    let mut c = client(Discovery::Auto);
    c.start(NOW).unwrap();
    let t = c.poll_transmit(&mut Vec::new()).unwrap();
    assert_eq!(t.method, Some("server/discover"));
    let mut c = Session::client(Config::new("c", "1").discovery(Discovery::Discover));
    assert_eq!(
        c.start(NOW).unwrap_err().kind(),
        ErrorKind::ProtocolVersionMismatch
    );
}

/// A client that sent `server/discover` gets `reply` (a JSON-RPC error object) to it; returns
/// the method it sends next, or the error it closed with.
fn discover_refused(
    discovery: mcp_proto::session::Discovery,
    error: Value,
) -> Result<Option<&'static str>, ErrorKind> {
    let mut c = client(discovery);
    c.start(NOW).unwrap();
    let mut buf = Vec::new();
    let t = c.poll_transmit(&mut buf).unwrap();
    assert_eq!(t.method, Some("server/discover"));
    let sent: Value = serde_json::from_slice(&buf).unwrap();
    let reply = json!({"jsonrpc": "2.0", "id": sent["id"], "error": error});
    c.handle_message(NOW, reply.to_string().as_bytes());
    while let Some(e) = c.poll_event() {
        if let Event::Closed(Some(e)) = e {
            return Err(e.kind());
        }
    }
    buf.clear();
    Ok(c.poll_transmit(&mut buf).and_then(|t| t.method))
}

#[test]
fn a_refused_discover_is_asked_again_or_reported_never_hidden() {
    use mcp_proto::session::Discovery;
    let unsupported = |supported: Value| {
        json!({"code": -32022, "message": "Unsupported protocol version",
               "data": {"supported": supported, "requested": "2026-07-28"}})
    };
    for d in [Discovery::Auto, Discovery::Discover] {
        // -32022 naming a stateless version this client speaks: asked again at it.
        assert_eq!(
            discover_refused(d, unsupported(json!(["2026-07-28"]))),
            Ok(Some("server/discover"))
        );
        // Naming only versions this client does not speak: the real error, not a handshake.
        assert_eq!(
            discover_refused(d, unsupported(json!(["2025-03-26"]))).map_err(|_| ()),
            if d == Discovery::Auto {
                Ok(Some("initialize"))
            } else {
                Err(())
            }
        );
        assert_eq!(
            discover_refused(d, unsupported(json!(["2099-01-01"]))),
            Err(ErrorKind::ProtocolVersionMismatch)
        );
        // -32020 and -32021 come only from servers of the stateless era.
        assert_eq!(
            discover_refused(d, json!({"code": -32020, "message": "Header mismatch"})),
            Err(ErrorKind::HeaderMismatch)
        );
    }
    // Naming a handshake version: Auto runs the handshake, Discover reports the error.
    assert_eq!(
        discover_refused(Discovery::Auto, unsupported(json!(["2025-11-25"]))),
        Ok(Some("initialize"))
    );
    assert_eq!(
        discover_refused(Discovery::Discover, unsupported(json!(["2025-11-25"]))),
        Err(ErrorKind::ProtocolVersionMismatch)
    );
    // Anything else (a handshake-era server's answer): Auto runs the handshake.
    assert_eq!(
        discover_refused(
            Discovery::Auto,
            json!({"code": -32601, "message": "Method not found"})
        ),
        Ok(Some("initialize"))
    );
}
