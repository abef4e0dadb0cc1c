//! The async-std / smol driver end to end, every scenario under both runtimes: in-memory, TCP
//! and Unix socket pairs, and child processes (through `spawn` and through raw pipes).
#![cfg(unix)]

use std::net::TcpListener;
use std::process::ExitStatus;
use std::time::Duration;

use async_io::{Async, Timer};
use async_process::{Command, Stdio};
use futures_lite::{AsyncReadExt, AsyncWriteExt, FutureExt};
use mcp_async_std::{Client, ClientOptions, ErrorKind, Runtime, Server, StderrMode};
use serde_json::Value;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_mcp-async-std-test-server");

/// Runs scenario `$name(rt)` as two tests: `$name::async_std` and `$name::smol`.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn async_std() {
                let rt = mcp_async_std::AsyncStdRuntime::new();
                async_std::task::block_on(super::$name(rt, "--async-std"));
            }

            #[test]
            fn smol() {
                smol::block_on(super::$name(mcp_async_std::SmolRuntime::new(), "--smol"));
            }
        }
    )*};
}

on_both!(
    memory_pair_handshake_and_ping,
    memory_pair_unknown_method_is_an_error,
    tcp_loopback_handshake_and_ping,
    unix_socket_pair_handshake_and_ping,
    child_ping_then_graceful_shutdown,
    child_ignoring_eof_gets_sigterm,
    child_ignoring_sigterm_gets_killed,
    dropped_child_is_killed_and_reaped,
    child_stderr_is_captured,
    child_stderr_null_and_inherit,
    spawn_failure_is_an_error,
    child_that_is_not_a_server_fails_the_handshake,
    stdio_answers_every_pipelined_request_before_exiting,
    stdio_survives_bad_input,
);

fn server() -> Server {
    Server::builder("t", "1").build()
}

fn options() -> ClientOptions {
    ClientOptions::new("test-client", "0.1")
}

/// The handshake completed and the server answers `ping` with `{}`.
async fn assert_handshake_and_ping(client: &Client) {
    let info = client.server_info();
    assert_eq!(
        info.version,
        mcp_async_std::proto::ProtocolVersion::LATEST_HANDSHAKE
    );
    let implementation: Value = serde_json::from_str(info.info.get()).unwrap();
    assert_eq!(implementation["name"], "t");
    assert_eq!(implementation["version"], "1");
    let pong = client.peer().request("ping", None).await.expect("ping");
    assert_eq!(pong.get(), "{}");
}

/// `fut`, failing the test after `secs` seconds.
async fn deadline<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    fut.or(async {
        Timer::after(Duration::from_secs(secs)).await;
        panic!("timed out after {secs} s")
    })
    .await
}

async fn memory_pair_handshake_and_ping(rt: impl Runtime, _: &str) {
    let client = mcp_async_std::memory_pair(rt, server(), options())
        .await
        .unwrap();
    assert_handshake_and_ping(&client).await;
    // Many requests at once.
    let pings: Vec<_> = (0..100)
        .map(|_| client.peer().request("ping", None))
        .collect();
    for pong in pings {
        assert_eq!(pong.await.unwrap().get(), "{}");
    }
    client.close();
}

async fn memory_pair_unknown_method_is_an_error(rt: impl Runtime, _: &str) {
    let client = mcp_async_std::memory_pair(rt, server(), options())
        .await
        .unwrap();
    let err = client
        .peer()
        .request("no/such/method", None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MethodNotFound);
    // The connection is still usable.
    assert_eq!(
        client.peer().request("ping", None).await.unwrap().get(),
        "{}"
    );
}

async fn tcp_loopback_handshake_and_ping(rt: impl Runtime, _: &str) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accept = mcp_async_std::serve_tcp(rt.clone(), server(), listener);
    let clients = async {
        // Two clients on the same listener.
        for _ in 0..2 {
            let stream = Async::<std::net::TcpStream>::connect(addr).await.unwrap();
            let client = mcp_async_std::connect_stream(rt.clone(), stream, options())
                .await
                .unwrap();
            assert_handshake_and_ping(&client).await;
            client.close();
        }
        Ok(())
    };
    // The accept loop runs until the clients are done.
    deadline(10, clients.or(accept)).await.unwrap();
}

async fn unix_socket_pair_handshake_and_ping(rt: impl Runtime, _: &str) {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let (a, b) = (Async::new(a).unwrap(), Async::new(b).unwrap());
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let server_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        let result = mcp_async_std::serve_stream(server_rt, &server(), b).await;
        done_tx.send(result).unwrap();
    }));
    let client = mcp_async_std::connect_stream(rt, a, options())
        .await
        .unwrap();
    assert_handshake_and_ping(&client).await;
    client.close();
    // The client's close reaches the server as EOF: it ends cleanly.
    deadline(5, async {
        loop {
            if let Ok(result) = done_rx.try_recv() {
                return result;
            }
            Timer::after(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
}

// ------------------------------------------------------------------ child processes

/// The process is gone and was reaped: not our child any more, and no such process.
fn assert_reaped(pid: u32) {
    let pid = pid as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain syscalls on a pid.
    let waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!(
        (waited, errno),
        (-1, Some(libc::ECHILD)),
        "pid {pid} is still our child"
    );
    // SAFETY: as above; signal 0 only checks for existence.
    let alive = unsafe { libc::kill(pid, 0) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!(
        (alive, errno),
        (-1, Some(libc::ESRCH)),
        "pid {pid} still exists (zombie?)"
    );
}

/// The test server under the runtime named by `flavour` (`--smol` or `--async-std`).
fn test_server(flavour: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(TEST_SERVER);
    if flavour == "--smol" {
        cmd.arg("--smol");
    }
    cmd.args(args);
    cmd
}

async fn child_ping_then_graceful_shutdown(rt: impl Runtime, flavour: &str) {
    let cmd = test_server(flavour, &[]);
    let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(status.success(), "{status:?}");
    assert_reaped(pid);
}

async fn child_ignoring_eof_gets_sigterm(rt: impl Runtime, flavour: &str) {
    use std::os::unix::process::ExitStatusExt;
    let cmd = test_server(flavour, &["--linger"]);
    let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_millis(200)).await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_reaped(pid);
}

async fn child_ignoring_sigterm_gets_killed(rt: impl Runtime, flavour: &str) {
    use std::os::unix::process::ExitStatusExt;
    let cmd = test_server(flavour, &["--ignore-sigterm", "--linger"]);
    let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_millis(200)).await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_reaped(pid);
}

async fn dropped_child_is_killed_and_reaped(rt: impl Runtime, flavour: &str) {
    let cmd = test_server(flavour, &["--linger"]);
    let child = mcp_async_std::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    drop(child);
    deadline(5, async {
        // SAFETY: signal 0 only checks for existence.
        while unsafe { libc::kill(pid as libc::pid_t, 0) } == 0 {
            Timer::after(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_reaped(pid);
}

async fn child_stderr_is_captured(rt: impl Runtime, flavour: &str) {
    let cmd = test_server(flavour, &["--stderr", "hello from the child"]);
    let child = mcp_async_std::spawn_with(rt, cmd, options(), StderrMode::Capture)
        .await
        .unwrap();
    let stderr = child.stderr().expect("captured");
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(status.success());
    // `shutdown` reads stderr to its end.
    assert_eq!(stderr.lines(), ["hello from the child", "second line"]);
}

async fn child_stderr_null_and_inherit(rt: impl Runtime, flavour: &str) {
    for mode in [StderrMode::Null, StderrMode::Inherit] {
        let cmd = test_server(flavour, &["--stderr", "(expected test output on stderr)"]);
        let child = mcp_async_std::spawn_with(rt.clone(), cmd, options(), mode)
            .await
            .unwrap();
        assert_handshake_and_ping(&child).await;
        assert!(child.stderr().is_none());
        assert!(
            child
                .shutdown(Duration::from_secs(5))
                .await
                .unwrap()
                .success()
        );
    }
}

async fn spawn_failure_is_an_error(rt: impl Runtime, _: &str) {
    let cmd = Command::new("/nonexistent/mcp-server");
    let err = mcp_async_std::spawn(rt, cmd, options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportError);
}

async fn child_that_is_not_a_server_fails_the_handshake(rt: impl Runtime, _: &str) {
    // `true` exits at once: the handshake fails with the transport closed.
    let err = mcp_async_std::spawn(rt, Command::new("true"), options())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportClosed);
}

// ------------------------------------------------------------------ raw stdio

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs the test server with `input` on its stdin (then EOF); returns its exit status and the
/// JSON lines it wrote.
async fn run_raw(flavour: &str, args: &[&str], input: Vec<u8>) -> (ExitStatus, Vec<Value>) {
    let mut child = test_server(flavour, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Write and read concurrently: the output may exceed the pipe's buffer.
    let write = async move {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.close().await;
        drop(stdin);
    };
    let mut output = Vec::new();
    let read = stdout.read_to_end(&mut output);
    let ((), read) = deadline(30, futures_lite::future::zip(write, read)).await;
    read.unwrap();
    let status = child.status().await.unwrap();
    let text = String::from_utf8(output).expect("UTF-8 output");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "unterminated output"
    );
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad output line {l:?}: {e}")))
        .collect();
    (status, lines)
}

fn response<'a>(lines: &'a [Value], id: &Value) -> Vec<&'a Value> {
    lines.iter().filter(|l| &l["id"] == id).collect()
}

async fn stdio_answers_every_pipelined_request_before_exiting(_: impl Runtime, flavour: &str) {
    const N: u64 = 500;
    let mut input = format!("{INITIALIZE}\n{INITIALIZED}\n");
    for id in 1..=N {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    let (status, lines) = run_raw(flavour, &[], input.into_bytes()).await;
    assert!(status.success(), "{status:?}");
    assert_eq!(lines.len() as u64, N + 1, "{lines:?}");
    assert_eq!(lines[0]["id"], 0);
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "t");
    for id in 1..=N {
        let r = response(&lines, &Value::from(id));
        assert_eq!(r.len(), 1, "id {id}");
        assert_eq!(r[0]["result"], serde_json::json!({}));
    }
}

async fn stdio_survives_bad_input(_: impl Runtime, flavour: &str) {
    let ping = |id: &str| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
    let mut input = String::new();
    input.push_str("this is not json\n");
    input.push_str(r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#);
    input.push('\n');
    input.push_str(&format!("{INITIALIZE}\n{INITIALIZED}\n"));
    input.push_str(&ping("1"));
    input.push_str(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    input.push('\n');
    input.push_str(&ping("3"));
    input.push_str(&ping("3")); // a duplicate id
    input.push_str("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"pad\":\"");
    input.push_str(&"x".repeat(8 * 1024)); // past the server's 4 KiB limit
    input.push_str("\"}}\n");
    input.push_str(&ping("5"));
    input.push_str(r#"{"jsonrpc":"2.0","id":6,"met"#); // EOF in the middle of a line
    let (status, lines) =
        run_raw(flavour, &["--max-message-size", "4096"], input.into_bytes()).await;
    assert!(status.success(), "{status:?}");
    let code = |l: &Value| l["error"]["code"].as_i64();
    let null_id: Vec<_> = lines.iter().filter(|l| l["id"].is_null()).collect();
    let null_codes: Vec<_> = null_id.iter().map(|l| code(l)).collect();
    // Garbage, the oversize line and the truncated last line: parse, limit, parse.
    assert_eq!(
        null_codes,
        [Some(-32700), Some(-32008), Some(-32700)],
        "{lines:#?}"
    );
    assert_eq!(code(response(&lines, &"early".into())[0]), Some(-32005));
    assert_eq!(
        response(&lines, &0.into())[0]["result"]["serverInfo"]["name"],
        "t"
    );
    assert_eq!(
        response(&lines, &1.into())[0]["result"],
        serde_json::json!({})
    );
    assert_eq!(code(response(&lines, &2.into())[0]), Some(-32601));
    // The duplicate: `ping` is answered by the core at once, so both may succeed; a duplicate
    // of a request still in flight gets -32600.
    let dup = response(&lines, &3.into());
    assert!(!dup.is_empty() && dup.len() <= 2, "{dup:?}");
    assert_eq!(lines.len(), 8 + dup.len(), "{lines:#?}");
    for r in dup {
        assert!(
            r["result"] == serde_json::json!({}) || code(r) == Some(-32600),
            "{r}"
        );
    }
    assert!(response(&lines, &4.into()).is_empty());
    assert_eq!(
        response(&lines, &5.into())[0]["result"],
        serde_json::json!({})
    );
}
