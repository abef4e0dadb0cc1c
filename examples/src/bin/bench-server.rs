//! The benchmark server: one tool, `echo`, over stdio.
//!
//! ```text
//! bench-server --runtime tokio|async-std          # MCP server (this crate)
//! bench-server --reference                        # framework-free serde_json line in, line out
//! ```

use std::io::{BufRead, Write};

use mcp_examples::bench;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if args.iter().any(|a| a == "--reference") {
        reference_server();
        return;
    }
    let runtime = flag("--runtime").unwrap_or_else(|| "tokio".into());
    let server = bench::echo_server();
    let result = match runtime.as_str() {
        "tokio" => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime")
            .block_on(async {
                mcp_tokio::serve_stdio(mcp_tokio::TokioRuntime::current(), server).await
            }),
        "async-std" => async_std::task::block_on(mcp_async_std::serve_stdio(
            mcp_async_std::AsyncStdRuntime::new(),
            server,
        )),
        other => {
            eprintln!("unknown runtime {other:?} (tokio | async-std)");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("bench-server: {e}");
        std::process::exit(1);
    }
}

/// The reference: parse each line with serde_json, answer `initialize` and `tools/call echo`,
/// write the reply line. Nothing else.
fn reference_server() {
    use std::os::fd::AsFd;
    let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() else {
        return;
    };
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::from(fd));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(req) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(id) = req.get("id").cloned() else {
            continue;
        };
        let reply = match req["method"].as_str() {
            Some("initialize") => serde_json::json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ref","version":"1"}}}),
            Some("tools/call") => {
                let text = req["params"]["arguments"]["text"]
                    .as_str()
                    .unwrap_or_default();
                serde_json::json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}]}})
            }
            _ => serde_json::json!({"jsonrpc":"2.0","id":id,"result":{}}),
        };
        if serde_json::to_writer(&mut out, &reply).is_err() || out.write_all(b"\n").is_err() {
            break;
        }
        if input.buffer().is_empty() && out.flush().is_err() {
            break;
        }
    }
    let _ = out.flush();
}
