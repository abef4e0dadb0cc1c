//! Drives a client and a server `mcp_proto::Session` against each other in memory and prints
//! every message that crosses, with the events each side sees. No runtime, no IO: this is the
//! sans-IO core on its own.
//!
//! ```text
//! cargo run -p mcp-examples --bin core-pair
//! ```

use mcp_proto::session::{Config, Event, RequestOptions, Session};
use mcp_proto::{Duration, Instant};
use serde::Deserialize;
use serde_json::value::RawValue;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).expect("valid JSON literal")
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(default)]
    arguments: serde_json::Map<String, serde_json::Value>,
}

/// The server application: answers the requests the session hands it.
fn serve(server: &mut Session, events: Vec<Event>) {
    for e in events {
        let Event::Request(req) = e else { continue };
        let result = match &*req.method {
            "tools/list" => raw(
                r#"{"tools":[{"name":"echo","description":"Echo text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#,
            ),
            "tools/call" => {
                let params = req.params.as_deref().map_or("{}", RawValue::get);
                let call: CallParams<'_> = match serde_json::from_str(params) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = server.respond_error(
                            &req.id,
                            mcp_proto::Error::invalid_params(e.to_string()),
                        );
                        continue;
                    }
                };
                if call.name != "echo" {
                    let msg = format!("unknown tool: {}", call.name);
                    let _ = server.respond_error(&req.id, mcp_proto::Error::invalid_params(msg));
                    continue;
                }
                if req.progress_token.is_some() {
                    let _ = server.report_progress(&req.id, 1.0, Some(2.0), Some("halfway"));
                    let _ = server.report_progress(&req.id, 2.0, Some(2.0), Some("done"));
                }
                let text = call
                    .arguments
                    .get("text")
                    .and_then(|t| t.as_str())
                    .unwrap_or_default();
                let body = serde_json::json!({"content": [{"type": "text", "text": text}]});
                mcp_proto::jsonrpc::to_raw(&body).expect("serialisable")
            }
            _ => {
                let _ =
                    server.respond_error(&req.id, mcp_proto::Error::method_not_found(&req.method));
                continue;
            }
        };
        let _ = server.respond(&req.id, result);
    }
}

fn pump(client: &mut Session, server: &mut Session, now: Instant) -> (Vec<Event>, Vec<Event>) {
    let mut buf = Vec::new();
    let (mut client_events, mut server_events) = (Vec::new(), Vec::new());
    loop {
        let mut moved = false;
        while client.poll_transmit(&mut buf).is_some() {
            print!("client → server  {}", String::from_utf8_lossy(&buf));
            server.handle_bytes(now, &buf);
            buf.clear();
            moved = true;
        }
        let mut fresh = Vec::new();
        while let Some(e) = server.poll_event() {
            fresh.push(e.clone());
            server_events.push(e);
            moved = true;
        }
        serve(server, fresh);
        while server.poll_transmit(&mut buf).is_some() {
            print!("server → client  {}", String::from_utf8_lossy(&buf));
            client.handle_bytes(now, &buf);
            buf.clear();
            moved = true;
        }
        while let Some(e) = client.poll_event() {
            client_events.push(e);
            moved = true;
        }
        if !moved {
            return (client_events, server_events);
        }
    }
}

fn show(side: &str, events: &[Event]) {
    for e in events {
        let line = match e {
            Event::Ready {
                version, peer_info, ..
            } => format!("ready: protocol {version}, peer {}", peer_info.get()),
            Event::Request(r) => format!("request {} `{}`", r.id, r.method),
            Event::Response { id, result: Ok(r) } => format!("response to {id}: {}", r.get()),
            Event::Response { id, result: Err(e) } => format!("request {id} failed: {e}"),
            Event::Progress {
                id,
                progress,
                total,
                message,
                ..
            } => {
                format!(
                    "progress on {id}: {progress}/{} {}",
                    total.unwrap_or(f64::NAN),
                    message.as_deref().unwrap_or("")
                )
            }
            Event::Cancelled { id, .. } => format!("peer cancelled {id}"),
            Event::Closed(reason) => format!(
                "closed ({})",
                reason
                    .as_ref()
                    .map_or("gracefully".into(), |e| e.to_string())
            ),
            other => format!("{other:?}"),
        };
        println!("    [{side} event] {line}");
    }
}

fn main() {
    let mut now = Instant::from_micros(0);
    let mut client = Session::client(Config::new("core-pair-client", "0.1.0"));
    let mut server = Session::server(
        Config::new("core-pair-server", "0.1.0")
            .capabilities(raw(r#"{"tools":{"listChanged":true}}"#)),
    );

    println!("== handshake");
    client.initialize(now).expect("fresh client");
    let (c, s) = pump(&mut client, &mut server, now);
    show("client", &c);
    show("server", &s);

    println!("\n== ping, tools/list, tools/call with progress");
    client
        .send_request(now, "ping", None, RequestOptions::default())
        .expect("ready");
    client
        .send_request(now, "tools/list", None, RequestOptions::default())
        .expect("ready");
    client
        .send_request(
            now,
            "tools/call",
            Some(raw(r#"{"name":"echo","arguments":{"text":"hello, MCP"}}"#)),
            RequestOptions {
                progress: true,
                ..Default::default()
            },
        )
        .expect("ready");
    let (c, _) = pump(&mut client, &mut server, now);
    show("client", &c);

    println!("\n== an unknown tool, an unknown method");
    client
        .send_request(
            now,
            "tools/call",
            Some(raw(r#"{"name":"missing"}"#)),
            RequestOptions::default(),
        )
        .expect("ready");
    let _ = pump(&mut client, &mut server, now);
    let mut buf = Vec::new();
    server.handle_bytes(
        now,
        b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"no/such\"}\n",
    );
    while server.poll_transmit(&mut buf).is_some() {
        print!("server → (raw)   {}", String::from_utf8_lossy(&buf));
        buf.clear();
    }

    println!("\n== a request that times out (the server never sees it answered)");
    let id = client
        .send_request(
            now,
            "resources/list",
            None,
            RequestOptions {
                timeout: Some(Duration::from_secs(1)),
                ..Default::default()
            },
        )
        .map_err(|e| println!("    refused locally: {e}"))
        .ok();
    if id.is_none() {
        // The server declared no `resources` capability, so the client refused to send it.
        let slow = client
            .send_request(
                now,
                "tools/call",
                Some(raw(
                    r#"{"name":"echo","arguments":{"text":"never answered"}}"#,
                )),
                RequestOptions {
                    timeout: Some(Duration::from_secs(1)),
                    ..Default::default()
                },
            )
            .expect("ready");
        // Deliver the request but let the server application sit on it.
        client.poll_transmit(&mut buf).expect("queued");
        print!("client → server  {}", String::from_utf8_lossy(&buf));
        server.handle_bytes(now, &buf);
        buf.clear();
        while server.poll_event().is_some() {}
        now = client.poll_timeout().expect("deadline");
        println!("    (virtual time jumps to the deadline: {now:?})");
        client.handle_timeout(now);
        let (c, s) = pump(&mut client, &mut server, now);
        show("client", &c);
        show("server", &s);
        let late = server.respond(&slow, raw("{}"));
        println!("    server answering the cancelled request: {late:?}");
    }

    println!("\n== close");
    client.close(now);
    server.handle_input_closed(now);
    let (c, s) = pump(&mut client, &mut server, now);
    show("client", &c);
    show("server", &s);
}
