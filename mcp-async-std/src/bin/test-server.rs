//! A tiny MCP server on stdio, for this crate's integration tests.
//!
//! Flags: `--smol` serves under smol (default: async-std); `--stderr TEXT` writes TEXT and a
//! second line to stderr first; `--linger` keeps the process alive after stdin's EOF (to
//! exercise SIGTERM); `--ignore-sigterm` also ignores SIGTERM (to exercise the final kill);
//! `--max-message-size BYTES` lowers the inbound message limit.

use mcp_async_std::{AsyncStdRuntime, Server, SmolRuntime};

fn main() {
    let mut linger = false;
    let mut server = Server::builder("t", "1");
    let mut smol = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--smol" => smol = true,
            "--stderr" => {
                let text = args.next().unwrap_or_default();
                eprintln!("{text}");
                eprintln!("second line");
            }
            "--linger" => linger = true,
            "--max-message-size" => {
                let bytes = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a size in bytes");
                server = server.max_message_size(bytes);
            }
            "--ignore-sigterm" => {
                #[cfg(unix)]
                // SAFETY: installing SIG_IGN for SIGTERM before any other thread cares.
                unsafe {
                    libc::signal(libc::SIGTERM, libc::SIG_IGN);
                }
            }
            other => {
                eprintln!("unknown flag {other}");
                std::process::exit(2);
            }
        }
    }
    let server = server.build();
    let result = if smol {
        smol::block_on(mcp_async_std::serve_stdio(SmolRuntime::new(), server))
    } else {
        async_std::task::block_on(mcp_async_std::serve_stdio(AsyncStdRuntime::new(), server))
    };
    if linger {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if let Err(e) = result {
        eprintln!("serve_stdio: {e}");
        std::process::exit(1);
    }
}
