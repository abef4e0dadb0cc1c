//! `everything` — a server exposing every feature: the official conformance suite's fixtures,
//! plus `echo`, a slow cancellable tool with progress (`slow`) and a streaming tool (`stream`).
//!
//! ```text
//! everything [--runtime tokio|async-std|smol] [--transport stdio]
//! ```

fn usage(msg: &str) -> ! {
    eprintln!(
        "everything: {msg}\nusage: everything [--runtime tokio|async-std|smol] [--transport stdio]"
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runtime = "tokio".to_owned();
    let mut transport = "stdio".to_owned();
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])))
        };
        match args[i].as_str() {
            "--runtime" => runtime = value(),
            "--transport" => transport = value(),
            "-h" | "--help" => usage("help"),
            other => usage(&format!("unknown argument {other:?}")),
        }
        i += 2;
    }
    if transport != "stdio" {
        usage(&format!(
            "transport {transport:?} is not available yet (stdio)"
        ));
    }
    let server = mcp_examples::everything::server();
    let result = match runtime.as_str() {
        "tokio" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(mcp_tokio::serve_stdio(server))
                    .map_err(|e| e.to_string())
            }),
        "async-std" => async_std::task::block_on(mcp_async_std::serve_stdio(
            mcp_async_std::AsyncStdRuntime::new(),
            server,
        ))
        .map_err(|e| e.to_string()),
        "smol" => {
            let rt = mcp_async_std::SmolRuntime::new();
            async_io::block_on(mcp_async_std::serve_stdio(rt, server)).map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    };
    if let Err(e) = result {
        eprintln!("everything: {e}");
        std::process::exit(1);
    }
    // Handlers may have left timers or blocking readers behind: leave promptly.
    std::process::exit(0);
}
