//! The driver test suite: every scenario of `mcp_service::driver` (in-memory, TCP and Unix
//! socket pairs, child processes through `spawn` and through raw pipes, the stdio server's
//! inherited descriptors) written once, generic over the runtime.
//!
//! Each driver's `tests/driver.rs` includes this file, implements [`Env`] for its runtime and
//! instantiates every scenario with [`driver_suite!`]: mcp-tokio on a current-thread and a
//! multi-threaded runtime, mcp-async-std on async-std and on smol. (It is not a test target of
//! mcp-service itself: the test servers are the drivers' binaries.)

use std::future::Future;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::process::{Command, ExitStatus};
use std::time::Duration;

use futures_util::future::{Either, join, select};
use futures_util::{AsyncReadExt, AsyncWriteExt};
use mcp_service::driver::{
    self, ChildStdio, Driver, Process, ProcessDriver, StderrMode, StdioDriver,
};
use mcp_service::{BoxFuture, Client, ClientOptions, Error, ErrorKind, Server};
use serde_json::Value;

/// What a driver's test file supplies besides the runtime itself.
pub trait Env: Driver + StdioDriver + ProcessDriver {
    /// The driver's test server, on the runtime this one stands for.
    fn test_server(&self) -> Command;
    /// `listener` as the driver's listener type.
    fn listener(&self, listener: TcpListener) -> Self::TcpListener;
    /// Serves `server` over `stream` through the driver's own `serve_stream`.
    fn serve_unix(&self, server: Server, stream: UnixStream) -> BoxFuture<Result<(), Error>>;
    /// Connects over `stream` through the driver's own `connect_stream`.
    fn connect_unix(
        &self,
        stream: UnixStream,
        options: ClientOptions,
    ) -> BoxFuture<Result<Client, Error>>;
}

/// Instantiates every scenario of this suite as `#[test]`s in a module `$module`, each run by
/// `$run(scenario)` (`$run` a function at the crate's root): a function that builds the runtime, hands it to the scenario and blocks on
/// the future.
#[macro_export]
macro_rules! driver_suite {
    ($module:ident, $run:ident) => {
        $crate::driver_suite!(@tests $module, $run;
            memory_pair_handshake_and_ping,
            memory_pair_unknown_method_is_an_error,
            tcp_loopback_handshake_and_ping,
            unix_socket_pair_handshake_and_ping,
            unix_socket_pair_listens_in_the_stateless_era,
            child_ping_then_graceful_shutdown,
            child_ignoring_eof_gets_sigterm,
            child_ignoring_sigterm_gets_killed,
            dropped_child_is_killed_and_reaped,
            a_dead_child_ends_its_client,
            child_stderr_is_captured,
            child_stderr_null_and_inherit,
            spawn_failure_is_an_error,
            child_that_is_not_a_server_fails_the_handshake,
            stdio_answers_every_pipelined_request_before_exiting,
            stdio_survives_bad_input,
            pipes_the_server_inherited_stay_blocking,
            a_socket_the_server_inherited_stays_blocking,
        );
    };
    (@tests $module:ident, $run:ident; $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$run(super::suite::$name)
                }
            )*
        }
    };
}

fn server() -> Server {
    Server::builder("t", "1").build()
}

fn options() -> ClientOptions {
    ClientOptions::new("test-client", "0.1")
}

/// The session was set up and the server answers `ping`. Our client (`Discovery::Auto`, the
/// default) and our server (both eras, the default) settle on the 2026-07-28 era, where
/// [`Client::ping`] is `server/discover` (the era has no `ping` request).
async fn assert_handshake_and_ping(client: &Client) {
    let info = client.server_info();
    assert_eq!(info.version, mcp_proto::ProtocolVersion::V2026_07_28);
    let implementation: Value = serde_json::from_str(info.info.get()).unwrap();
    assert_eq!(implementation["name"], "t");
    assert_eq!(implementation["version"], "1");
    client.ping().await.expect("ping");
}

/// A future that completes after `d` on `rt`'s clock.
fn sleep<E: Env>(rt: &E, d: Duration) -> BoxFuture<()> {
    let micros = u64::try_from(d.as_micros()).unwrap();
    rt.sleep_until(mcp_proto::Instant::from_micros(
        rt.now().as_micros() + micros,
    ))
}

/// `fut`, failing the test after `secs` seconds.
async fn deadline<E: Env, T>(rt: &E, secs: u64, fut: impl Future<Output = T>) -> T {
    match select(std::pin::pin!(fut), sleep(rt, Duration::from_secs(secs))).await {
        Either::Left((out, _)) => out,
        Either::Right(_) => panic!("timed out after {secs} s"),
    }
}

pub async fn memory_pair_handshake_and_ping<E: Env>(rt: E) {
    let client = driver::memory_pair(rt, server(), options()).await.unwrap();
    assert_handshake_and_ping(&client).await;
    // Many requests at once.
    let pings = futures_util::future::join_all((0..100).map(|_| client.ping())).await;
    for pong in pings {
        pong.unwrap();
    }
    client.close();
}

pub async fn memory_pair_unknown_method_is_an_error<E: Env>(rt: E) {
    let client = driver::memory_pair(rt, server(), options()).await.unwrap();
    let err = client
        .peer()
        .request("no/such/method", None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MethodNotFound);
    // The connection is still usable.
    client.ping().await.unwrap();
}

pub async fn tcp_loopback_handshake_and_ping<E: Env>(rt: E) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let listener = rt.listener(listener);
    assert_eq!(rt.local_addr(&listener).unwrap().port(), port);
    let accept = driver::serve_tcp(rt.clone(), server(), listener);
    let clients = async {
        // Two clients on the same listener, through the driver's own TCP connect.
        for _ in 0..2 {
            let stream = rt.connect_tcp("127.0.0.1", port).await.unwrap();
            let client = driver::connect_stream(rt.clone(), stream, options())
                .await
                .unwrap();
            assert_handshake_and_ping(&client).await;
            client.close();
        }
    };
    // The accept loop runs until the clients are done.
    match deadline(
        &rt,
        10,
        select(std::pin::pin!(clients), std::pin::pin!(accept)),
    )
    .await
    {
        Either::Left(((), _)) => {}
        Either::Right((ended, _)) => panic!("the accept loop ended: {ended:?}"),
    }
}

pub async fn unix_socket_pair_handshake_and_ping<E: Env>(rt: E) {
    let (a, b) = UnixStream::pair().unwrap();
    let served = rt.serve_unix(server(), b);
    let client_side = async {
        let client = rt.connect_unix(a, options()).await.unwrap();
        assert_handshake_and_ping(&client).await;
        client.close();
    };
    // The client's close reaches the server as EOF: it ends cleanly.
    let (served, ()) = deadline(&rt, 10, join(served, client_side)).await;
    served.unwrap();
}

/// A client of the 2026-07-28 era over a socket: `subscribe` and `notifications` ride one
/// `subscriptions/listen` stream, which hears list changes and `resource_updated`.
pub async fn unix_socket_pair_listens_in_the_stateless_era<E: Env>(rt: E) {
    use mcp_service::client::ServerNotification;
    use mcp_service::schema::{CallToolResult, Tool};
    let tool = |name: &str| {
        Tool::new(
            name,
            mcp_service::server::schema_of(serde_json::json!({"type": "object"})),
        )
    };
    let srv = Server::builder("t", "1")
        .versions(&mcp_proto::ProtocolVersion::ALL)
        .dynamic_tools()
        .resource_subscriptions()
        .build();
    let (a, b) = UnixStream::pair().unwrap();
    let served = rt.serve_unix(srv.clone(), b);
    let client_side = async {
        let options = options().discovery(mcp_proto::session::Discovery::Discover);
        let client = rt.connect_unix(a, options).await.unwrap();
        assert!(client.protocol_version().is_stateless());
        let mut notes = client.notifications();
        let mut updates = client.subscribe("test://watched").await.unwrap();
        srv.add_tool(tool("t1"), |_: Value, _cx| async {
            Ok(CallToolResult::text("t1"))
        })
        .unwrap();
        assert!(matches!(
            notes.recv().await,
            Some(ServerNotification::ToolsListChanged)
        ));
        assert_eq!(srv.resource_updated("test://watched"), 1);
        assert_eq!(updates.recv().await.unwrap().uri, "test://watched");
        client.unsubscribe("test://watched").await.unwrap();
        client.list_tools().await.unwrap();
        assert_eq!(srv.resource_updated("test://watched"), 0);
        client.close();
    };
    let (served, ()) = deadline(&rt, 10, join(served, client_side)).await;
    served.unwrap();
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

fn test_server<E: Env>(rt: &E, args: &[&str]) -> Command {
    let mut cmd = rt.test_server();
    cmd.args(args);
    cmd
}

pub async fn child_ping_then_graceful_shutdown<E: Env>(rt: E) {
    let cmd = test_server(&rt, &[]);
    let child = driver::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown_within(Duration::from_secs(5)).await.unwrap();
    assert!(status.success(), "{status:?}");
    assert_reaped(pid);
}

pub async fn child_ignoring_eof_gets_sigterm<E: Env>(rt: E) {
    use std::os::unix::process::ExitStatusExt;
    let cmd = test_server(&rt, &["--linger"]);
    let child = driver::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child
        .shutdown_within(Duration::from_millis(200))
        .await
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_reaped(pid);
}

pub async fn child_ignoring_sigterm_gets_killed<E: Env>(rt: E) {
    use std::os::unix::process::ExitStatusExt;
    let cmd = test_server(&rt, &["--ignore-sigterm", "--linger"]);
    let child = driver::spawn(rt, cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    let status = child
        .shutdown_within(Duration::from_millis(200))
        .await
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_reaped(pid);
}

/// A server child that dies (killed, so it says nothing) ends its client's connection at
/// once: the client learns it is closed and a call fails with `TransportClosed` instead of
/// waiting for its timeout.
pub async fn a_dead_child_ends_its_client<E: Env>(rt: E) {
    let cmd = test_server(&rt, &["--linger"]);
    let child = driver::spawn(rt.clone(), cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    // SAFETY: signalling our own child, whose pid is not reused before it is reaped.
    let killed = unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    assert_eq!(killed, 0);
    deadline(&rt, 5, child.closed()).await;
    let e = deadline(&rt, 5, child.ping())
        .await
        .expect_err("a call to a dead server fails");
    assert_eq!(e.kind(), ErrorKind::TransportClosed, "{e}");
}

pub async fn dropped_child_is_killed_and_reaped<E: Env>(rt: E) {
    let cmd = test_server(&rt, &["--linger"]);
    let child = driver::spawn(rt.clone(), cmd, options()).await.unwrap();
    let pid = child.pid();
    assert_handshake_and_ping(&child).await;
    drop(child);
    // The reaper runs in the background; nothing here can be told when it is done.
    deadline(&rt, 5, async {
        // SAFETY: signal 0 only checks for existence.
        while unsafe { libc::kill(pid as libc::pid_t, 0) } == 0 {
            sleep(&rt, Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_reaped(pid);
}

pub async fn child_stderr_is_captured<E: Env>(rt: E) {
    let cmd = test_server(&rt, &["--stderr", "hello from the child"]);
    let child = driver::spawn_with(rt, cmd, options(), StderrMode::Capture)
        .await
        .unwrap();
    let stderr = child.stderr().expect("captured");
    assert_handshake_and_ping(&child).await;
    let status = child.shutdown_within(Duration::from_secs(5)).await.unwrap();
    assert!(status.success());
    // `shutdown_within` reads stderr to its end.
    assert_eq!(stderr.lines(), ["hello from the child", "second line"]);
}

pub async fn child_stderr_null_and_inherit<E: Env>(rt: E) {
    for mode in [StderrMode::Null, StderrMode::Inherit] {
        let cmd = test_server(&rt, &["--stderr", "(expected test output on stderr)"]);
        let child = driver::spawn_with(rt.clone(), cmd, options(), mode)
            .await
            .unwrap();
        assert_handshake_and_ping(&child).await;
        assert!(child.stderr().is_none());
        let status = child.shutdown_within(Duration::from_secs(5)).await.unwrap();
        assert!(status.success());
    }
}

pub async fn spawn_failure_is_an_error<E: Env>(rt: E) {
    let cmd = Command::new("/nonexistent/mcp-server");
    let err = driver::spawn(rt, cmd, options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportError);
}

pub async fn child_that_is_not_a_server_fails_the_handshake<E: Env>(rt: E) {
    // `true` exits at once: the handshake fails with the transport closed.
    let err = driver::spawn(rt, Command::new("true"), options())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TransportClosed);
}

// ------------------------------------------------------------------ raw stdio

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs the test server with `input` on its stdin (then EOF), through the driver's own
/// process spawning; returns its exit status and the JSON lines it wrote.
async fn run_raw<E: Env>(rt: &E, args: &[&str], input: Vec<u8>) -> (ExitStatus, Vec<Value>) {
    let ChildStdio {
        mut process,
        mut stdin,
        mut stdout,
        ..
    } = rt
        .spawn_process(test_server(rt, args), StderrMode::Null)
        .unwrap();
    // Write and read concurrently: the output may exceed the pipe's buffer.
    let write = async move {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.close().await;
        drop(stdin);
    };
    let mut output = Vec::new();
    let read = stdout.read_to_end(&mut output);
    let ((), read) = deadline(rt, 30, join(write, read)).await;
    read.unwrap();
    let status = process.wait().await.unwrap();
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

pub async fn stdio_answers_every_pipelined_request_before_exiting<E: Env>(rt: E) {
    const N: u64 = 500;
    let mut input = format!("{INITIALIZE}\n{INITIALIZED}\n");
    for id in 1..=N {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    let (status, lines) = run_raw(&rt, &[], input.into_bytes()).await;
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

pub async fn stdio_survives_bad_input<E: Env>(rt: E) {
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
    let (status, lines) = run_raw(&rt, &["--max-message-size", "4096"], input.into_bytes()).await;
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

// ------------------------------------------------------------------ inherited descriptors

// A server on stdio leaves the file descriptions it inherited as it found them: stdin and
// stdout are pipes or a socket shared with the host, and a non-blocking flag set on them would
// be seen by every other holder. The host here keeps a duplicate of the server's ends and
// checks their flags while the server answers. (Plain blocking IO on the test's side: the host
// is not under test.)

const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

fn nonblocking(fd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a valid descriptor.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills two descriptors we then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    for fd in fds {
        // Close-on-exec: the server must not inherit the host's ends.
        // SAFETY: fcntl on a descriptor just created.
        assert_eq!(
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) },
            0
        );
    }
    // SAFETY: both were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Runs the server with `stdin` / `stdout` as given; the host writes to `to_server` and reads
/// `from_server`; `shared` are duplicates of the server's own ends, checked while it serves.
fn check_inherited(
    mut cmd: Command,
    stdin: std::os::fd::OwnedFd,
    stdout: std::os::fd::OwnedFd,
    mut to_server: impl std::io::Write,
    from_server: impl std::io::Read,
    shared: &[std::os::fd::OwnedFd],
    end_input: impl FnOnce(),
) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(from_server).lines();
    writeln!(to_server, "{}", INITIALIZE.replace("\"id\":0", "\"id\":1")).unwrap();
    let init = lines.next().unwrap().unwrap();
    assert!(init.contains("\"id\":1"), "{init}");
    writeln!(to_server, "{PING}").unwrap();
    let pong = lines.next().unwrap().unwrap();
    assert!(pong.contains("\"id\":2"), "{pong}");
    for fd in shared {
        assert!(
            !nonblocking(fd),
            "the server made a shared description non-blocking"
        );
    }
    drop(to_server);
    end_input();
    assert!(child.wait().unwrap().success());
}

pub async fn pipes_the_server_inherited_stay_blocking<E: Env>(rt: E) {
    let (stdin_r, stdin_w) = pipe();
    let (stdout_r, stdout_w) = pipe();
    let shared = [stdin_r.try_clone().unwrap(), stdout_w.try_clone().unwrap()];
    check_inherited(
        rt.test_server(),
        stdin_r,
        stdout_w,
        std::fs::File::from(stdin_w),
        std::fs::File::from(stdout_r),
        &shared,
        || {},
    );
}

pub async fn a_socket_the_server_inherited_stays_blocking<E: Env>(rt: E) {
    let (host, server) = UnixStream::pair().unwrap();
    let server = std::os::fd::OwnedFd::from(server);
    let shared = [server.try_clone().unwrap()];
    let reader = host.try_clone().unwrap();
    let writer = host.try_clone().unwrap();
    check_inherited(
        rt.test_server(),
        server.try_clone().unwrap(),
        server,
        writer,
        reader,
        &shared,
        move || host.shutdown(std::net::Shutdown::Write).unwrap(),
    );
}
