//! A server on stdio leaves the file descriptions it inherited as it found them: stdin and
//! stdout are pipes or a socket shared with the host, and a non-blocking flag set on them would
//! be seen by every other holder. The host here keeps a duplicate of the server's ends and
//! checks their flags while the server answers.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_mcp-async-std-test-server");
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

fn nonblocking(fd: &OwnedFd) -> bool {
    // SAFETY: fcntl on a valid descriptor.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `pipe2` fills two descriptors we then own (close-on-exec: the server must not
    // inherit the host's ends).
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Runs the server with `stdin` / `stdout` as given; the host writes to `to_server` and reads
/// `from_server`; `shared` are duplicates of the server's own ends, checked while it serves.
fn check(
    flavour: &str,
    stdin: OwnedFd,
    stdout: OwnedFd,
    mut to_server: impl Write,
    from_server: impl std::io::Read,
    shared: &[OwnedFd],
    end_input: impl FnOnce(),
) {
    let mut child = Command::new(TEST_SERVER)
        .args(if flavour.is_empty() {
            None
        } else {
            Some(flavour)
        })
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(from_server).lines();
    writeln!(to_server, "{INITIALIZE}").unwrap();
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

fn pipes(flavour: &str) {
    let (stdin_r, stdin_w) = pipe();
    let (stdout_r, stdout_w) = pipe();
    let shared = [stdin_r.try_clone().unwrap(), stdout_w.try_clone().unwrap()];
    check(
        flavour,
        stdin_r,
        stdout_w,
        std::fs::File::from(stdin_w),
        std::fs::File::from(stdout_r),
        &shared,
        || {},
    );
}

fn socket(flavour: &str) {
    let (host, server) = UnixStream::pair().unwrap();
    let server = OwnedFd::from(server);
    let shared = [server.try_clone().unwrap()];
    let reader = host.try_clone().unwrap();
    let writer = host.try_clone().unwrap();
    check(
        flavour,
        server.try_clone().unwrap(),
        server,
        writer,
        reader,
        &shared,
        move || host.shutdown(std::net::Shutdown::Write).unwrap(),
    );
}

#[test]
fn pipes_the_server_inherited_stay_blocking_async_std() {
    pipes(""); // async-std is the test server's default
}

#[test]
fn pipes_the_server_inherited_stay_blocking_smol() {
    pipes("--smol");
}

#[test]
fn a_socket_the_server_inherited_stays_blocking_async_std() {
    socket("");
}

#[test]
fn a_socket_the_server_inherited_stays_blocking_smol() {
    socket("--smol");
}
