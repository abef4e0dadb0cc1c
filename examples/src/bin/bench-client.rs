//! The end-to-end benchmark client.
//!
//! ```text
//! bench-client --runtime tokio|async-std --transport stdio|mem --n N --size S --conc C
//!              [--reference] [-- SERVER_CMD ARGS]
//! ```
//!
//! Initializes, then makes N `tools/call echo` round trips with a text of S bytes from C
//! concurrent callers, checking every reply, and prints one JSON line:
//! `{"rps":…, "client_cpu_s":…, "server_cpu_s":…, "client_rss_kb":…, "server_rss_kb":…}`.
//! Without `-- SERVER_CMD`, the sibling `bench-server` binary is spawned. `--reference` runs the
//! framework-free pair instead: plain serde_json lines in and out on the same pipes (client and
//! server), the limit this implementation is measured against. Mixed pairs measure one side:
//! `--runtime R -- bench-server --reference` (our client), `--reference -- bench-server
//! --runtime R` (our server).

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use futures_util::future::join_all;
use mcp_examples::bench::{proc_stats, self_stats};
use mcp_service::{Client, ClientOptions};
use serde_json::json;

struct Args {
    runtime: String,
    transport: String,
    n: usize,
    size: usize,
    conc: usize,
    reference: bool,
    server_cmd: Vec<String>,
}

fn parse_args() -> Args {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let (opts, server_cmd) = match raw.iter().position(|a| a == "--") {
        Some(i) => (raw[..i].to_vec(), raw[i + 1..].to_vec()),
        None => (raw.clone(), Vec::new()),
    };
    let get = |name: &str| {
        opts.iter()
            .position(|a| a == name)
            .and_then(|i| opts.get(i + 1))
            .cloned()
    };
    let num =
        |name: &str, default: usize| get(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    Args {
        runtime: get("--runtime").unwrap_or_else(|| "tokio".into()),
        transport: get("--transport").unwrap_or_else(|| "stdio".into()),
        n: num("--n", 10_000),
        size: num("--size", 16),
        conc: num("--conc", 1).max(1),
        reference: opts.iter().any(|a| a == "--reference"),
        server_cmd,
    }
}

fn sibling(name: &str) -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(name)))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_owned())
}

fn payload(size: usize) -> String {
    (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect()
}

fn report(rps: f64, server: Option<(f64, u64)>) {
    let (client_cpu, client_rss) = self_stats();
    let (server_cpu, server_rss) = server.unwrap_or((0.0, 0));
    println!(
        "{}",
        json!({
            "rps": (rps * 10.0).round() / 10.0,
            "client_cpu_s": client_cpu,
            "server_cpu_s": server_cpu,
            "client_rss_kb": client_rss,
            "server_rss_kb": server_rss,
        })
    );
}

/// Makes `n` calls from `conc` concurrent callers; returns calls per second.
async fn drive(client: &Client, n: usize, conc: usize, text: &str) -> f64 {
    // Warm up.
    for _ in 0..50.min(n) {
        check(
            client.call_tool("echo", json!({ "text": text })).await,
            text,
        );
    }
    let start = Instant::now();
    let per = n / conc;
    let extra = n % conc;
    let callers = (0..conc).map(|c| {
        let client = client.clone();
        let count = per + usize::from(c < extra);
        async move {
            for _ in 0..count {
                check(
                    client.call_tool("echo", json!({ "text": text })).await,
                    text,
                );
            }
        }
    });
    join_all(callers).await;
    n as f64 / start.elapsed().as_secs_f64()
}

fn check(r: Result<mcp_service::schema::CallToolResult, mcp_service::Error>, text: &str) {
    match r {
        Ok(r) if r.content.first().and_then(|c| c.as_text()) == Some(text) => {}
        Ok(r) => panic!("wrong echo reply: {:?}", r.content.first()),
        Err(e) => panic!("call failed: {e}"),
    }
}

fn main() {
    let args = parse_args();
    if args.reference {
        return reference(&args);
    }
    let text = payload(args.size);
    let cmd = if args.server_cmd.is_empty() {
        vec![
            sibling("bench-server"),
            "--runtime".into(),
            args.runtime.clone(),
        ]
    } else {
        args.server_cmd.clone()
    };
    // The handshake era, as the figures have always measured (the default, `Auto`, would
    // speak 2026-07-28 to our server).
    let options = ClientOptions::new("bench-client", env!("CARGO_PKG_VERSION"))
        .discovery(mcp_proto::session::Discovery::Initialize);
    match args.runtime.as_str() {
        "tokio" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio");
            // Drive the calls from a spawned task: wake-ups between it and the connection task
            // stay in the scheduler's local queue (a `block_on` future is woken through the
            // driver instead).
            let task = rt.spawn(async move {
                match args.transport.as_str() {
                    "mem" => {
                        let client = mcp_tokio::memory_pair(
                            mcp_tokio::TokioRuntime::current(),
                            mcp_examples::bench::echo_server(),
                            options,
                        )
                        .await
                        .expect("memory pair");
                        let rps = drive(&client, args.n, args.conc, &text).await;
                        report(rps, None);
                    }
                    _ => {
                        let mut c = std::process::Command::new(&cmd[0]);
                        c.args(&cmd[1..]);
                        let child =
                            mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), c, options)
                                .await
                                .expect("spawn server");
                        let rps = drive(child.client(), args.n, args.conc, &text).await;
                        let stats = proc_stats(child.pid());
                        let _ = child
                            .shutdown_within(std::time::Duration::from_secs(5))
                            .await;
                        report(rps, stats);
                    }
                }
            });
            rt.block_on(task).expect("benchmark task");
        }
        "async-std" => async_std::task::block_on(async_std::task::spawn(async move {
            match args.transport.as_str() {
                "mem" => {
                    let rt = mcp_async_std::AsyncStdRuntime::new();
                    let client =
                        mcp_async_std::memory_pair(rt, mcp_examples::bench::echo_server(), options)
                            .await
                            .expect("memory pair");
                    let rps = drive(&client, args.n, args.conc, &text).await;
                    report(rps, None);
                }
                _ => {
                    let mut c = std::process::Command::new(&cmd[0]);
                    c.args(&cmd[1..]);
                    let rt = mcp_async_std::AsyncStdRuntime::new();
                    let child = mcp_async_std::spawn(rt, c, options)
                        .await
                        .expect("spawn server");
                    let rps = drive(child.client(), args.n, args.conc, &text).await;
                    let stats = proc_stats(child.pid());
                    let _ = child
                        .shutdown_within(std::time::Duration::from_secs(5))
                        .await;
                    report(rps, stats);
                }
            }
        })),
        other => {
            eprintln!("unknown runtime {other:?} (tokio | async-std)");
            std::process::exit(2);
        }
    }
}

/// The framework-free reference client: serde_json lines over the same pipes, `conc` requests
/// kept in flight.
fn reference(args: &Args) {
    let cmd = if args.server_cmd.is_empty() {
        vec![sibling("bench-server"), "--reference".into()]
    } else {
        args.server_cmd.clone()
    };
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn reference server");
    let pid = child.id();
    let mut w = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("stdin"));
    let mut r = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("stdout"));
    let text = payload(args.size);
    let mut line = String::new();
    let send = |w: &mut BufWriter<_>, id: usize, method: &str, params: serde_json::Value| {
        let msg = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        serde_json::to_writer(&mut *w, &msg).expect("write");
        w.write_all(b"\n").expect("write");
    };
    let recv = |r: &mut BufReader<_>, line: &mut String| -> serde_json::Value {
        line.clear();
        r.read_line(line).expect("read");
        serde_json::from_str(line).expect("reply is JSON")
    };
    send(
        &mut w,
        0,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ref","version":"1"}}),
    );
    w.flush().expect("flush");
    let _ = recv(&mut r, &mut line);
    // Complete the handshake, so that the reference client can also drive an MCP server
    // (`--reference -- SERVER_CMD`: one side of ours measured against the reference client).
    serde_json::to_writer(
        &mut w,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .expect("write");
    w.write_all(b"\n").expect("write");
    let call = |text: &str| json!({"name":"echo","arguments":{"text":text}});
    let warm = 50.min(args.n);
    for i in 0..warm {
        send(&mut w, i + 1, "tools/call", call(&text));
        w.flush().expect("flush");
        let v = recv(&mut r, &mut line);
        assert_eq!(
            v["result"]["content"][0]["text"].as_str(),
            Some(text.as_str())
        );
    }
    // A reader thread keeps `conc` requests in flight: with large payloads a single thread
    // that writes a window before reading would deadlock against a server blocked on a full
    // output pipe.
    let (permits_tx, permits_rx) = std::sync::mpsc::sync_channel::<()>(args.conc);
    for _ in 0..args.conc {
        let _ = permits_tx.send(());
    }
    let n = args.n;
    let expected = text.clone();
    let start = Instant::now();
    if args.conc == 1 {
        // One request at a time: the plain loop, no thread hand-off.
        for i in 0..n {
            send(&mut w, 1000 + i, "tools/call", call(&text));
            w.flush().expect("flush");
            let v = recv(&mut r, &mut line);
            assert_eq!(
                v["result"]["content"][0]["text"].as_str(),
                Some(text.as_str())
            );
        }
        let rps = n as f64 / start.elapsed().as_secs_f64();
        let stats = proc_stats(pid);
        drop(w);
        let _ = child.wait();
        report(rps, stats);
        return;
    }
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        for _ in 0..n {
            let v = recv(&mut r, &mut line);
            assert_eq!(
                v["result"]["content"][0]["text"].as_str(),
                Some(expected.as_str())
            );
            let _ = permits_tx.send(());
        }
    });
    for sent in 0..args.n {
        permits_rx.recv().expect("reader alive");
        send(&mut w, 1000 + sent, "tools/call", call(&text));
        w.flush().expect("flush");
    }
    reader.join().expect("reader");
    let rps = args.n as f64 / start.elapsed().as_secs_f64();
    let stats = proc_stats(pid);
    drop(w);
    let _ = child.wait();
    report(rps, stats);
}
