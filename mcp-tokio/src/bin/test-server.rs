//! A tiny MCP server on stdio, for this crate's integration tests.
//!
//! Flags: `--stderr TEXT` writes TEXT and a second line to stderr first; `--linger` keeps the
//! process alive after stdin's EOF (to exercise SIGTERM); `--ignore-sigterm` also ignores
//! SIGTERM (to exercise the final kill); `--max-message-size BYTES` lowers the inbound message
//! limit.

use mcp_tokio::Server;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut linger = false;
    let mut server = Server::builder("t", "1");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
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
    let result = mcp_tokio::serve_stdio(server.build()).await;
    if linger {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    }
    if let Err(e) = result {
        eprintln!("serve_stdio: {e}");
        std::process::exit(1);
    }
}
