//! Measures the CPU a session-less batch POST of N requests costs, and the same batch with a
//! duplicate id in a ready byte-stream session (run with `--release`); then the bytes kept for
//! resumption by 100 sessions that each sent four 1 MiB messages, with and without the totals.
use mcp_proto::Instant;
use mcp_proto::http::{Endpoint, EndpointConfig};
use mcp_proto::session::Config;

fn main() {
    for n in [22_500usize, 45_000, 90_000] {
        let mut body = String::from("[");
        for i in 0..n {
            if i > 0 {
                body.push(',');
            }
            body.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#));
        }
        body.push(']');
        let mut ep =
            Endpoint::new(EndpointConfig::new(Config::new("s", "1")).max_body_size(64 << 20));
        let (parts, ()) = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(())
            .unwrap()
            .into_parts();
        let t = std::time::Instant::now();
        let r = ep.handle_request(Instant::ZERO, &parts, body.as_bytes(), Some(1));
        let el = t.elapsed();
        println!(
            "{n} ids ({} bytes): {} in {:.3} s",
            body.len(),
            r.status(),
            el.as_secs_f64()
        );
        // The same batch (plus a duplicate at the end) into a ready 2025-03-26 byte-stream session.
        let mut cfg = Config::new("s", "1");
        cfg.max_message_size = 64 << 20;
        let mut s = mcp_proto::session::Session::server(cfg);
        let init = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;
        s.handle_bytes(Instant::ZERO, init.as_bytes());
        let mut buf = Vec::new();
        while s.poll_transmit(&mut buf).is_some() {}
        while s.poll_event().is_some() {}
        let mut line = body.clone();
        line.pop();
        line.push_str(r#",{"jsonrpc":"2.0","id":0,"method":"ping"}]"#);
        line.push('\n');
        let t = std::time::Instant::now();
        s.handle_bytes(Instant::ZERO, line.as_bytes());
        buf.clear();
        while s.poll_transmit(&mut buf).is_some() {}
        println!(
            "  session: {} bytes out in {:.3} s",
            buf.len(),
            t.elapsed().as_secs_f64()
        );
    }
    for totals in [false, true] {
        let caps = serde_json::value::RawValue::from_string(r#"{"logging":{}}"#.into()).unwrap();
        let mut config = EndpointConfig::new(Config::new("s", "1").capabilities(caps));
        if !totals {
            config = config
                .max_stored_bytes_total(usize::MAX)
                .max_stored_events_total(usize::MAX);
        }
        let mut ep = Endpoint::new(config);
        let big = "x".repeat(1 << 20);
        let params = serde_json::value::RawValue::from_string(format!(
            r#"{{"level":"info","data":"{big}"}}"#
        ))
        .unwrap();
        for n in 0..100u128 {
            let sid = open(&mut ep, n + 1);
            for _ in 0..4 {
                ep.with_session(Instant::ZERO, sid, |s| {
                    s.notify("notifications/message", Some(params.clone()))
                })
                .unwrap()
                .unwrap();
            }
        }
        let st = ep.stats();
        println!(
            "retention, totals {}: {} sessions keep {} events, {} bytes",
            if totals {
                "on (default)"
            } else {
                "off (as before)"
            },
            st.sessions,
            st.stored_events,
            st.stored_bytes
        );
    }
}

/// Opens a session (initialize, initialized, a standalone stream that the client left).
fn open(ep: &mut Endpoint, random: u128) -> mcp_proto::http::SessionId {
    let req = |sid: Option<&str>| {
        let mut b = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(sid) = sid {
            b = b.header("mcp-session-id", sid);
        }
        b.body(()).unwrap().into_parts().0
    };
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let r = ep.handle_request(Instant::ZERO, &req(None), init, Some(random));
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    ep.handle_request(Instant::ZERO, &req(Some(&sid)), initialized, None);
    let get = http::Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let r = ep.handle_request(Instant::ZERO, &get, b"", None);
    if let mcp_proto::http::Body::Stream(s) = r.body() {
        ep.stream_closed(Instant::ZERO, *s);
    }
    mcp_proto::http::SessionId::parse(&sid).unwrap()
}
