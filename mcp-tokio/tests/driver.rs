//! The tokio driver end to end: in-memory, TCP and Unix socket pairs, and child processes
//! (through `spawn` and through raw pipes).

use std::process::Stdio;
use std::time::Duration;

use mcp_tokio::{Client, ClientOptions, Server};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_mcp-tokio-test-server");

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
        mcp_tokio::proto::ProtocolVersion::LATEST_HANDSHAKE
    );
    let implementation: Value = serde_json::from_str(info.info.get()).unwrap();
    assert_eq!(implementation["name"], "t");
    assert_eq!(implementation["version"], "1");
    let pong = client.peer().request("ping", None).await.expect("ping");
    assert_eq!(pong.get(), "{}");
}

#[tokio::test]
async fn memory_pair_handshake_and_ping() {
    let client = mcp_tokio::memory_pair(server(), options()).await.unwrap();
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

#[tokio::test]
async fn memory_pair_unknown_method_is_an_error() {
    let client = mcp_tokio::memory_pair(server(), options()).await.unwrap();
    let err = client
        .peer()
        .request("no/such/method", None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), mcp_tokio::ErrorKind::MethodNotFound);
    // The connection is still usable.
    assert_eq!(
        client.peer().request("ping", None).await.unwrap().get(),
        "{}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_loopback_handshake_and_ping() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accept = tokio::spawn(mcp_tokio::serve_tcp(server(), listener));
    // Two clients on the same listener.
    for _ in 0..2 {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let client = mcp_tokio::connect_stream(stream, options()).await.unwrap();
        assert_handshake_and_ping(&client).await;
        client.close();
    }
    accept.abort();
}

#[cfg(unix)]
#[tokio::test]
async fn unix_socket_pair_handshake_and_ping() {
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let served = tokio::spawn(async move { mcp_tokio::serve_stream(&server(), b).await });
    let client = mcp_tokio::connect_stream(a, options()).await.unwrap();
    assert_handshake_and_ping(&client).await;
    client.close();
    // The client's graceful close reaches the server as EOF: it ends cleanly.
    let result = tokio::time::timeout(Duration::from_secs(5), served).await;
    result.expect("server ended").unwrap().unwrap();
}

// ------------------------------------------------------------------ child processes

/// The process is gone and was reaped: not our child any more, and no such process.
#[cfg(unix)]
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

fn test_server(args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(TEST_SERVER);
    cmd.args(args);
    cmd
}

#[tokio::test]
async fn child_ping_then_graceful_shutdown() {
    let child = mcp_tokio::spawn(test_server(&[]), options()).await.unwrap();
    let pid = child.pid().unwrap();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(status.success(), "{status:?}");
    #[cfg(unix)]
    assert_reaped(pid);
}

#[cfg(unix)]
#[tokio::test]
async fn child_ignoring_eof_gets_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    let child = mcp_tokio::spawn(test_server(&["--linger"]), options())
        .await
        .unwrap();
    let pid = child.pid().unwrap();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_millis(200)).await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_reaped(pid);
}

#[cfg(unix)]
#[tokio::test]
async fn child_ignoring_sigterm_gets_killed() {
    use std::os::unix::process::ExitStatusExt;
    let args = ["--ignore-sigterm", "--linger"];
    let child = mcp_tokio::spawn(test_server(&args), options())
        .await
        .unwrap();
    let pid = child.pid().unwrap();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_millis(200)).await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_reaped(pid);
}

#[cfg(unix)]
#[tokio::test]
async fn dropped_child_is_killed_and_reaped() {
    let child = mcp_tokio::spawn(test_server(&["--linger"]), options())
        .await
        .unwrap();
    let pid = child.pid().unwrap();
    assert_handshake_and_ping(&child).await;
    drop(child);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        // SAFETY: signal 0 only checks for existence.
        if unsafe { libc::kill(pid as libc::pid_t, 0) } == -1 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "pid {pid} still exists"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_reaped(pid);
}

#[tokio::test]
async fn child_stderr_is_captured() {
    let cmd = test_server(&["--stderr", "hello from the child"]);
    let child = mcp_tokio::spawn_with(cmd, options(), mcp_tokio::StderrMode::Capture)
        .await
        .unwrap();
    let stderr = child.stderr().expect("captured");
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(status.success());
    // `shutdown` reads stderr to its end.
    assert_eq!(stderr.lines(), ["hello from the child", "second line"]);
}

#[tokio::test]
async fn child_stderr_null_and_inherit() {
    for mode in [mcp_tokio::StderrMode::Null, mcp_tokio::StderrMode::Inherit] {
        let cmd = test_server(&["--stderr", "(expected test output on stderr)"]);
        let child = mcp_tokio::spawn_with(cmd, options(), mode).await.unwrap();
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

#[tokio::test]
async fn spawn_failure_is_an_error() {
    let cmd = tokio::process::Command::new("/nonexistent/mcp-server");
    let err = mcp_tokio::spawn(cmd, options()).await.unwrap_err();
    assert_eq!(err.kind(), mcp_tokio::ErrorKind::TransportError);
}

#[tokio::test]
async fn child_that_is_not_a_server_fails_the_handshake() {
    // `true` exits at once: the handshake fails with the transport closed, and it is reaped.
    let err = mcp_tokio::spawn(tokio::process::Command::new("true"), options())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), mcp_tokio::ErrorKind::TransportClosed);
}

// ------------------------------------------------------------------ raw stdio

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs the test server with `input` on its stdin (then EOF); returns its exit status and the
/// JSON lines it wrote.
async fn run_raw(args: &[&str], input: Vec<u8>) -> (std::process::ExitStatus, Vec<Value>) {
    let mut child = test_server(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Write and read concurrently: the output may exceed the pipe's buffer.
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
        drop(stdin);
    });
    let mut output = Vec::new();
    let read = stdout.read_to_end(&mut output);
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("the server exits after stdin's EOF")
        .unwrap();
    writer.await.unwrap();
    let status = child.wait().await.unwrap();
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

#[tokio::test]
async fn stdio_answers_every_pipelined_request_before_exiting() {
    const N: u64 = 500;
    let mut input = format!("{INITIALIZE}\n{INITIALIZED}\n");
    for id in 1..=N {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    let (status, lines) = run_raw(&[], input.into_bytes()).await;
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

#[tokio::test]
async fn stdio_survives_bad_input() {
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
    let (status, lines) = run_raw(&["--max-message-size", "4096"], input.into_bytes()).await;
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
