//! `demo` — the main demo: spawns the `everything` server over stdio and walks the whole method
//! surface, printing each step.
//!
//! ```text
//! cargo run -p mcp-examples --bin demo [-- --runtime tokio|async-std]
//! ```
//!
//! The server is this same binary started with `--serve` (so `cargo run --bin demo` needs no
//! other binary), speaking MCP on its stdin/stdout exactly like `everything`. Headings are bold
//! on a terminal; written to a file or a pipe, or with `NO_COLOR` set, the output has no
//! terminal escape codes.

use std::time::Duration;

use mcp_examples::walk::{options, set_verbose, show, step, walk};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "demo: spawns the `everything` server over stdio and walks the whole MCP surface, printing each step.\n\n\
             usage: demo [--runtime tokio|async-std]\n\n\
             Headings are bold on a terminal (not in a file or a pipe, nor with NO_COLOR set)."
        );
        return;
    }
    if args.iter().any(|a| a == "--serve") {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio");
        let r = rt.block_on(async {
            mcp_tokio::serve_stdio(
                mcp_tokio::TokioRuntime::current(),
                mcp_examples::everything::server(),
            )
            .await
        });
        std::process::exit(i32::from(r.is_err()));
    }
    let runtime = args
        .iter()
        .position(|a| a == "--runtime")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "tokio".into());
    set_verbose(true);
    let exe = std::env::current_exe().expect("current exe");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let outcome = rt.block_on(async {
        println!(
            "spawning the `everything` server ({} --serve) over stdio; client on {runtime}",
            exe.display()
        );
        if runtime == "async-std" {
            // The client on async-std.
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg("--serve");
            let child =
                mcp_async_std::spawn(mcp_async_std::AsyncStdRuntime::new(), cmd, options()).await?;
            let r = walk(child.client()).await;
            step("close");
            let status = child.shutdown_within(Duration::from_secs(5)).await;
            show("server exited", format!("{status:?}"));
            r
        } else {
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg("--serve");
            let child =
                mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), cmd, options()).await?;
            let r = walk(child.client()).await;
            step("close");
            let status = child.shutdown_within(Duration::from_secs(5)).await;
            show("server exited", format!("{status:?}"));
            r
        }
    });
    match outcome {
        Ok(()) => println!("\ndone: every step succeeded"),
        Err(e) => {
            eprintln!("\ndemo failed: {e}");
            std::process::exit(1);
        }
    }
}
