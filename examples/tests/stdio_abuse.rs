//! A host that stops reading, and a host that dies, against the `everything` server over stdio,
//! on every runtime: the server's memory stays within its output budget while nobody reads, a
//! `ping` is answered as soon as the host reads again, and a dead host (stdout closed, stdin
//! closed) makes the server exit within a bounded time.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const RUNTIMES: [&str; 3] = ["tokio", "async-std", "smol"];

/// The server process, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(runtime: &str) -> (Server, ChildStdin, ChildStdout) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_everything"))
        .args(["--runtime", runtime])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    for l in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ] {
        writeln!(stdin, "{l}").unwrap();
    }
    (Server(child), stdin, stdout)
}

/// A tool call that streams items without pause for as long as it is not cancelled.
fn endless_stream(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"stream","arguments":{"count":1_000_000_000u64,"delay_ms":0},
        "_meta":{"progressToken":id}}})
}

/// The resident memory of process `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn wait_exit(child: &mut Server, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if child.0.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn unread_output_stays_within_the_budget_and_ping_is_answered_on_reading() {
    for runtime in RUNTIMES {
        let (mut child, mut stdin, stdout) = spawn(runtime);
        writeln!(stdin, "{}", endless_stream(2)).unwrap();
        // Nobody reads for two seconds while the tool streams as fast as it can.
        let mut peak = 0;
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(100));
            peak = peak.max(rss_kib(child.0.id()));
        }
        assert!(
            peak < 96 * 1024,
            "{runtime}: the server grew to {peak} KiB while its output was not read"
        );
        // The host reads again and pings: the answer comes within a bound.
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc":"2.0","id":"ping","method":"ping"})
        )
        .unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line.contains("\"id\":\"ping\"") {
                    let _ = tx.send(Instant::now());
                }
            }
        });
        let asked = Instant::now();
        let answered = rx.recv_timeout(Duration::from_secs(10));
        assert!(
            answered.is_ok(),
            "{runtime}: ping not answered within 10 s of reading again"
        );
        eprintln!(
            "{runtime}: peak RSS {peak} KiB unread; ping answered {:?} after reading resumed",
            answered.unwrap() - asked
        );
        // Cancel the stream and end the session.
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})
        )
        .unwrap();
        drop(stdin);
        assert!(
            wait_exit(&mut child, Duration::from_secs(10)),
            "{runtime}: exit at EOF"
        );
        reader.join().unwrap();
    }
}

#[test]
fn a_dead_host_makes_the_server_exit() {
    for runtime in RUNTIMES {
        // The host reads part of a large output, then closes stdout and stdin (it crashed).
        let (mut child, mut stdin, mut stdout) = spawn(runtime);
        writeln!(stdin, "{}", endless_stream(2)).unwrap();
        let mut some = vec![0u8; 64 * 1024];
        stdout.read_exact(&mut some).unwrap();
        drop(stdout);
        drop(stdin);
        assert!(
            wait_exit(&mut child, Duration::from_secs(2)),
            "{runtime}: still running 2 s after its host closed stdout and stdin"
        );
        // Output queued, stdout closed, stdin still open: the failed write ends it too.
        let (mut child, mut stdin, stdout) = spawn(runtime);
        writeln!(stdin, "{}", endless_stream(2)).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        drop(stdout);
        assert!(
            wait_exit(&mut child, Duration::from_secs(2)),
            "{runtime}: still running 2 s after its stdout closed"
        );
        drop(stdin);
        // The host closes stdin and keeps reading, but a handler never ends: the close
        // timeout (2 s) cancels it.
        let (mut child, mut stdin, mut stdout) = spawn(runtime);
        writeln!(stdin, "{}", endless_stream(2)).unwrap();
        let reader = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        std::thread::sleep(Duration::from_millis(200));
        drop(stdin);
        assert!(
            wait_exit(&mut child, Duration::from_secs(6)),
            "{runtime}: a handler that never ends kept the server alive after stdin closed"
        );
        let _ = reader.join();
        // The host closes stdin and reads nothing more (it hangs): the input is still
        // watched, and the output it left unread is given up after the close timeout.
        let (mut child, mut stdin, stdout) = spawn(runtime);
        writeln!(stdin, "{}", endless_stream(2)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        drop(stdin);
        assert!(
            wait_exit(&mut child, Duration::from_secs(8)),
            "{runtime}: unread output kept the server alive after stdin closed"
        );
        drop(stdout);
    }
}
