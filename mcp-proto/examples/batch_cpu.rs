//! Measures the CPU a session-less batch POST of N requests costs, and the same batch with a
//! duplicate id in a ready byte-stream session (run with `--release`).
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
}
