//! The end-to-end benchmark's pieces: the `echo` server and process statistics.

use mcp_service::Server;
use mcp_service::schema::{CallToolResult, Tool};
use mcp_service::server::{ToolContext, schema_of};
use serde::Deserialize;

/// Arguments of `echo`.
#[derive(Deserialize)]
pub struct EchoArgs {
    /// The text to return.
    pub text: String,
}

/// A server with one tool, `echo`, returning `{"content":[{"type":"text","text":TEXT}]}`.
pub fn echo_server() -> Server {
    echo_server_with(|b| b)
}

/// [`echo_server`], its builder first given to `configure` (a cluster, say).
pub fn echo_server_with(
    configure: impl FnOnce(mcp_service::ServerBuilder) -> mcp_service::ServerBuilder,
) -> Server {
    configure(Server::builder("bench-server", env!("CARGO_PKG_VERSION")))
        .tool(
            Tool::new(
                "echo",
                schema_of(serde_json::json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            ),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(CallToolResult::text(args.text)) },
        )
        .build()
}

/// CPU seconds (user + system) and peak RSS in KiB of a process, from `/proc`.
pub fn proc_stats(pid: u32) -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ')' + state.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let ticks = clock_ticks();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Some(((utime + stime) / ticks, hwm))
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// Statistics of this process.
pub fn self_stats() -> (f64, u64) {
    proc_stats(std::process::id()).unwrap_or((0.0, 0))
}
