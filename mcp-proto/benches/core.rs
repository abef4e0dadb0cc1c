//! Micro-benchmarks of the sans-IO core against plain `serde_json` doing the same work.
//!
//! - `core/server_roundtrip/{16B,64KiB}`: a ready server session gets a `tools/call` request
//!   line (`handle_bytes`), hands it out (`poll_event`), the application reads the text from
//!   the raw params into a borrowed struct and answers with a result serialised by serde
//!   (`respond`), and the response is framed into a reused buffer (`poll_transmit`).
//! - `core/client_roundtrip/{16B,64KiB}`: a ready client session builds and sends the request
//!   (`send_request` + `poll_transmit`), receives the response line (`handle_bytes`, split in
//!   two reads) and hands out the `Response` event, whose text the application reads.
//! - `serde_json/roundtrip/{16B,64KiB}` and `serde_json/client_roundtrip/{16B,64KiB}`: the
//!   same work with `serde_json::Value` trees and `to_writer` into a reused buffer.
//!
//! Run: `cargo bench -p mcp-proto --bench core`.

use std::borrow::Cow;
use std::hint::black_box;
use std::time::Duration as StdDuration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcp_proto::Instant;
use mcp_proto::session::{Config, Event, RequestOptions, Session};
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::value::RawValue;

const SIZES: [(&str, usize); 2] = [("16B", 16), ("64KiB", 64 * 1024)];

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

/// Printable ASCII without characters that JSON escapes.
fn text(len: usize) -> String {
    let words = b"lorem ipsum dolor sit amet, consectetur adipiscing elit ";
    (0..len)
        .map(|i| char::from(words[i % words.len()]))
        .collect()
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[allow(dead_code)]
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: EchoArgs<'a>,
}

#[derive(Serialize)]
struct CallParamsOut<'a> {
    name: &'a str,
    arguments: EchoArgsOut<'a>,
}

#[derive(Serialize)]
struct EchoArgsOut<'a> {
    text: &'a str,
}

#[derive(Serialize, Deserialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    text: Cow<'a, str>,
}

#[derive(Serialize, Deserialize)]
struct CallResult<'a> {
    #[serde(borrow)]
    content: Vec<TextContent<'a>>,
}

/// A client and a server that completed the handshake over a perfect in-memory pipe.
fn ready_pair(now: Instant) -> (Session, Session) {
    let mut client = Session::client(Config::new("bench-client", "1.0"));
    let mut server =
        Session::server(Config::new("bench-server", "1.0").capabilities(raw(r#"{"tools":{}}"#)));
    client.initialize(now).unwrap();
    let mut buf = Vec::new();
    for _ in 0..16 {
        while client.poll_transmit(&mut buf).is_some() {
            server.handle_bytes(now, &buf);
            buf.clear();
        }
        while server.poll_transmit(&mut buf).is_some() {
            client.handle_bytes(now, &buf);
            buf.clear();
        }
        while client.poll_event().is_some() {}
        while server.poll_event().is_some() {}
    }
    assert_eq!(client.state(), mcp_proto::session::State::Ready);
    assert_eq!(server.state(), mcp_proto::session::State::Ready);
    (client, server)
}

fn request_line(id: u64, text: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}
    }))
    .unwrap();
    line.push(b'\n');
    line
}

/// A response line without its id: `{"jsonrpc":"2.0","result":{…}` — the id and the closing
/// brace arrive in a second read.
fn response_head(text: &str) -> Vec<u8> {
    let result =
        serde_json::to_string(&json!({"content": [{"type": "text", "text": text}]})).unwrap();
    format!("{{\"jsonrpc\":\"2.0\",\"result\":{result}").into_bytes()
}

fn server_core(c: &mut Criterion) {
    let mut g = c.benchmark_group("core/server_roundtrip");
    for (name, size) in SIZES {
        let text = text(size);
        let line = request_line(7, &text);
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            let now = Instant::from_micros(1_000_000);
            let (_client, mut server) = ready_pair(now);
            let mut out = Vec::with_capacity(2 * line.len());
            b.iter(|| {
                server.handle_bytes(now, black_box(&line));
                let Some(Event::Request(req)) = server.poll_event() else {
                    panic!("no request")
                };
                let params = req.params.as_deref().unwrap();
                let p: CallParams<'_> = serde_json::from_str(params.get()).unwrap();
                let result = CallResult {
                    content: vec![TextContent {
                        kind: "text",
                        text: p.arguments.text,
                    }],
                };
                // `to_string` into a `RawValue` (no re-validation of serde's own output).
                let result = serde_json::value::to_raw_value(&result).unwrap();
                server.respond(&req.id, result).unwrap();
                out.clear();
                server.poll_transmit(&mut out).unwrap();
                black_box(&out);
            });
        });
    }
    g.finish();
}

fn server_reference(c: &mut Criterion) {
    let mut g = c.benchmark_group("serde_json/roundtrip");
    for (name, size) in SIZES {
        let text = text(size);
        let line = request_line(7, &text);
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            let mut out = Vec::with_capacity(2 * line.len());
            b.iter(|| {
                let req: serde_json::Value = serde_json::from_slice(black_box(&line)).unwrap();
                let text = req["params"]["arguments"]["text"].as_str().unwrap();
                let result = json!({"content": [{"type": "text", "text": text}]});
                let resp = json!({"jsonrpc": "2.0", "id": req["id"], "result": result});
                out.clear();
                serde_json::to_writer(&mut out, &resp).unwrap();
                out.push(b'\n');
                black_box(&out);
            });
        });
    }
    g.finish();
}

fn client_core(c: &mut Criterion) {
    let mut g = c.benchmark_group("core/client_roundtrip");
    for (name, size) in SIZES {
        let text = text(size);
        let head = response_head(&text);
        g.throughput(Throughput::Bytes(head.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            let now = Instant::from_micros(1_000_000);
            let (mut client, _server) = ready_pair(now);
            let mut out = Vec::with_capacity(2 * head.len());
            let mut tail = Vec::with_capacity(32);
            b.iter(|| {
                let params = CallParamsOut {
                    name: "echo",
                    arguments: EchoArgsOut { text: &text },
                };
                let params = serde_json::value::to_raw_value(&params).unwrap();
                let id = client
                    .send_request(now, "tools/call", Some(params), RequestOptions::default())
                    .unwrap();
                out.clear();
                client.poll_transmit(&mut out).unwrap();
                black_box(&out);
                tail.clear();
                tail.extend_from_slice(b",\"id\":");
                id.write_json(&mut tail);
                tail.extend_from_slice(b"}\n");
                client.handle_bytes(now, black_box(&head));
                client.handle_bytes(now, &tail);
                let Some(Event::Response {
                    result: Ok(result), ..
                }) = client.poll_event()
                else {
                    panic!("no response")
                };
                let r: CallResult<'_> = serde_json::from_str(result.get()).unwrap();
                black_box(&r.content[0].text);
            });
        });
    }
    g.finish();
}

fn client_reference(c: &mut Criterion) {
    let mut g = c.benchmark_group("serde_json/client_roundtrip");
    for (name, size) in SIZES {
        let text = text(size);
        let mut line = response_head(&text);
        line.extend_from_slice(b",\"id\":7}\n");
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            let mut out = Vec::with_capacity(2 * line.len());
            let mut id = 0u64;
            b.iter(|| {
                id += 1;
                let req = json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": &text}}
                });
                out.clear();
                serde_json::to_writer(&mut out, &req).unwrap();
                out.push(b'\n');
                black_box(&out);
                let resp: serde_json::Value = serde_json::from_slice(black_box(&line)).unwrap();
                black_box(resp["result"]["content"][0]["text"].as_str().unwrap());
            });
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(StdDuration::from_secs(1))
        .measurement_time(StdDuration::from_secs(3))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = server_core, server_reference, client_core, client_reference
}
criterion_main!(benches);
