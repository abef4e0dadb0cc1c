//! The skills extension (SEP-2640) on the sessions, without IO: `skills/list`, `skills/get` and
//! `resources/directory/read` reach a server only when it declared the extension (and
//! `directoryRead` for the last), in the handshake era as in the stateless one; a client
//! session refuses to send them to a server that did not declare them.

mod common;

use common::*;
use mcp_proto::session::{Config, Event, RequestOptions, Session};
use mcp_proto::{ErrorKind, ProtocolVersion};
use serde_json::{Value, json};

const NOW: mcp_proto::Instant = mcp_proto::Instant::ZERO;

fn config(skills: Option<Value>) -> Config {
    let mut caps = json!({"resources": {}, "tools": {}});
    if let Some(settings) = skills {
        caps["extensions"] = json!({ "io.modelcontextprotocol/skills": settings });
    }
    Config::new("skills-server", "1.0")
        .capabilities(raw(&caps.to_string()))
        .versions(&ProtocolVersion::ALL)
}

fn line(id: i64, method: &str, params: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

fn modern(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    line(id, method, params)
}

/// A server session after the handshake (2025-11-25).
fn handshaken(config: Config) -> Session {
    let mut s = Session::server(config);
    s.handle_bytes(
        NOW,
        line(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        )
        .as_bytes(),
    );
    let _ = collect(&mut s);
    s.handle_bytes(
        NOW,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
    );
    while s.poll_event().is_some() {}
    s
}

/// Feeds `input`; returns the methods that reached the application and the errors answered.
fn feed(s: &mut Session, input: &str) -> (Vec<String>, Vec<Value>) {
    s.handle_bytes(NOW, input.as_bytes());
    let mut routed = Vec::new();
    while let Some(e) = s.poll_event() {
        if let Event::Request(r) = e {
            routed.push(r.method.to_string());
        }
    }
    let errors = collect(s)
        .into_iter()
        .filter_map(|m| m.get("error").cloned())
        .collect();
    (routed, errors)
}

const URI: &str = "skill://a/SKILL.md";

#[test]
fn undeclared_extension_is_method_not_found_in_both_eras() {
    let mut s = handshaken(config(None));
    for (i, m) in ["skills/list", "skills/get", "resources/directory/read"]
        .into_iter()
        .enumerate()
    {
        let (routed, errors) = feed(&mut s, &line(i as i64 + 1, m, json!({"uri": URI})));
        assert!(routed.is_empty(), "{m}");
        assert_eq!(errors[0]["code"], -32601, "{m}");
        let (routed, errors) = feed(&mut s, &modern(i as i64 + 10, m, json!({"uri": URI})));
        assert!(routed.is_empty(), "{m}");
        assert_eq!(errors[0]["code"], -32601, "{m}");
    }
}

#[test]
fn declared_extension_routes_its_methods_and_gates_directory_read() {
    // `{}`: skills/list and skills/get, not resources/directory/read.
    let mut s = handshaken(config(Some(json!({}))));
    let (routed, _) = feed(&mut s, &line(1, "skills/list", json!({})));
    assert_eq!(routed, ["skills/list"]);
    let (routed, _) = feed(&mut s, &modern(2, "skills/get", json!({"uri": URI})));
    assert_eq!(routed, ["skills/get"]);
    let (routed, errors) = feed(
        &mut s,
        &modern(3, "resources/directory/read", json!({"uri": "skill://a"})),
    );
    assert!(routed.is_empty());
    assert_eq!(errors[0]["code"], -32601);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("directoryRead")
    );

    // `directoryRead: true`: all three, in both eras.
    let mut s = handshaken(config(Some(json!({"directoryRead": true}))));
    let (routed, _) = feed(
        &mut s,
        &line(1, "resources/directory/read", json!({"uri": "skill://a"})),
    );
    assert_eq!(routed, ["resources/directory/read"]);
    let (routed, _) = feed(
        &mut s,
        &modern(2, "resources/directory/read", json!({"uri": "skill://a"})),
    );
    assert_eq!(routed, ["resources/directory/read"]);
    // Only clients send them.
    let (routed, _) = feed(&mut s, &modern(3, "skills/list", json!({})));
    assert_eq!(routed, ["skills/list"]);
}

#[test]
fn stateless_results_get_their_result_type() {
    let mut s = Session::server(config(Some(json!({}))));
    let (routed, _) = feed(&mut s, &modern(5, "skills/list", json!({})));
    assert_eq!(routed, ["skills/list"]);
    s.respond(
        &mcp_proto::RequestId::Number(5),
        raw(r#"{"skills":[],"ttlMs":0,"cacheScope":"private"}"#),
    )
    .unwrap();
    let out = collect(&mut s);
    assert_eq!(out[0]["result"]["resultType"], "complete");
    let parsed: mcp_proto::schema::ListSkillsResult =
        serde_json::from_value(out[0]["result"].clone()).unwrap();
    assert!(parsed.skills.is_empty() && parsed.ttl_ms == Some(0));
}

#[test]
fn a_client_sends_them_only_to_a_server_that_declared_them() {
    let server = |skills| config(skills).versions(&[ProtocolVersion::V2025_11_25]);
    let ready = |skills| {
        let mut p = Pair::new(client_config(), server(skills));
        p.initialize(CLIENT).unwrap();
        p.deliver_all();
        p
    };
    let send = |p: &mut Pair, method: &str| {
        let now = p.now;
        p.session_mut(CLIENT).send_request(
            now,
            method,
            Some(raw(r#"{"uri":"skill://a/SKILL.md"}"#)),
            RequestOptions::default(),
        )
    };

    let mut p = ready(None);
    for m in ["skills/list", "skills/get", "resources/directory/read"] {
        let e = send(&mut p, m).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MethodNotFound, "{m}");
        assert!(
            e.message().contains("io.modelcontextprotocol/skills"),
            "{e}"
        );
    }

    let mut p = ready(Some(json!({})));
    send(&mut p, "skills/list").unwrap();
    send(&mut p, "skills/get").unwrap();
    assert_eq!(
        send(&mut p, "resources/directory/read").unwrap_err().kind(),
        ErrorKind::MethodNotFound
    );

    let mut p = ready(Some(json!({"directoryRead": true})));
    send(&mut p, "resources/directory/read").unwrap();
    p.deliver_all();
    let methods: Vec<String> = p
        .take_events(SERVER)
        .into_iter()
        .filter_map(|e| match e {
            Event::Request(r) => Some(r.method.to_string()),
            _ => None,
        })
        .collect();
    assert!(
        methods.contains(&"resources/directory/read".to_owned()),
        "{methods:?}"
    );
}
