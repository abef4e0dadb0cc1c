//! The tiny stdio server of the drivers' integration tests (each driver's `test-server`
//! binary is this on its runtime). Not a public API.
//!
//! Flags: `--stderr TEXT` writes TEXT and a second line to stderr first; `--linger` keeps the
//! process alive after stdin's EOF (to exercise SIGTERM); `--ignore-sigterm` also ignores
//! SIGTERM (to exercise the final kill); `--max-message-size BYTES` lowers the inbound message
//! limit. Any flag of `runtimes` picks the runtime and is handed to `serve`.

use crate::{Error, Server};

/// Parses the arguments, then serves through `serve(runtime flag, server)` and exits.
pub fn run(runtimes: &[&str], serve: impl FnOnce(Option<&str>, Server) -> Result<(), Error>) {
    let mut linger = false;
    let mut runtime = None;
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
            other if runtimes.contains(&other) => runtime = Some(arg),
            other => {
                eprintln!("unknown flag {other}");
                std::process::exit(2);
            }
        }
    }
    let result = serve(runtime.as_deref(), server.build());
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
