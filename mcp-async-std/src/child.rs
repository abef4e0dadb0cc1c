//! Child processes (through `async-process`, which works under async-std and smol alike): an
//! MCP server spawned as a child and spoken to over its stdin/stdout.

use std::collections::VecDeque;
use std::ops::Deref;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use async_io::Timer;
use async_process::{Child, ChildStderr, Command, Stdio};
use futures_lite::{AsyncReadExt, FutureExt};
use mcp_service::{ByteStream, Client, ClientOptions, Error, ErrorKind, Runtime};

/// Captured stderr keeps at most this many lines (the oldest are dropped first).
const STDERR_KEEP_LINES: usize = 1024;
/// A captured stderr line longer than this is split.
const STDERR_MAX_LINE: usize = 16 * 1024;
/// How long `shutdown` waits for the child's stderr to reach EOF after the child exited.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// Where a child's stderr goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StderrMode {
    /// The child writes to this process's stderr.
    #[default]
    Inherit,
    /// Lines are read by a background task, forwarded to `tracing` (target `mcp::child`, level
    /// debug) and kept for [`ChildClient::stderr`].
    Capture,
    /// Discarded.
    Null,
}

/// A [`Client`] connected to a child process over its stdin and stdout. Derefs to the client.
///
/// End it with [`shutdown`](ChildClient::shutdown). Dropping it instead kills the child
/// (SIGKILL); `async-process` reaps it in the background.
#[derive(Debug)]
pub struct ChildClient {
    client: Client,
    child: Option<Child>,
    pid: u32,
    stderr: Option<Arc<Mutex<Captured>>>,
}

/// Spawns `cmd` with piped stdin and stdout and inherited stderr, and connects a client to it
/// (see [`spawn_with`]).
pub async fn spawn<R: Runtime>(
    rt: R,
    cmd: Command,
    options: ClientOptions,
) -> Result<ChildClient, Error> {
    spawn_with(rt, cmd, options, StderrMode::Inherit).await
}

/// Spawns `cmd` with piped stdin and stdout and stderr per `stderr`, and connects a client to
/// it; the connection (and the stderr reader) run on `rt`. Resolves once the handshake
/// completed. On failure the child is killed and reaped.
pub async fn spawn_with<R: Runtime>(
    rt: R,
    mut cmd: Command,
    options: ClientOptions,
    stderr: StderrMode,
) -> Result<ChildClient, Error> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Null => Stdio::null(),
        })
        .kill_on_drop(true)
        .reap_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        Error::new(
            ErrorKind::TransportError,
            format!("failed to spawn the server process: {e}"),
        )
    })?;
    let pid = child.id();
    let stderr = child.stderr.take().map(|pipe| {
        let captured = Arc::new(Mutex::new(Captured::default()));
        rt.spawn(Box::pin(pump_stderr(pipe, pid, captured.clone())));
        captured
    });
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("stdin and stdout are piped")
    };
    #[cfg(not(unix))]
    let transport = ByteStream::new(stdout, stdin);
    #[cfg(unix)]
    let transport = {
        use std::os::fd::AsFd;
        crate::stdio::grow_pipe(stdin.as_fd(), crate::stdio::CHILD_PIPE_BYTES);
        crate::stdio::grow_pipe(stdout.as_fd(), crate::stdio::CHILD_PIPE_BYTES);
        // Our own reactor-driven pipe ends (duplicates; the originals close when this function
        // returns) skip the `EAGAIN` read after each drained pipe.
        match (
            crate::stdio::PipeFd::new(stdout.as_fd()),
            crate::stdio::PipeFd::new(stdin.as_fd()),
        ) {
            (Some(out), Some(inp)) => ByteStream::new(out, inp),
            _ => ByteStream::new(stdout, stdin),
        }
    };
    match Client::connect(rt, transport, options).await {
        Ok(client) => Ok(ChildClient {
            client,
            child: Some(child),
            pid,
            stderr,
        }),
        Err(e) => {
            let _ = child.kill();
            let status = child.status().await;
            tracing::debug!(target: "mcp::child", pid, ?status, error = %e, "handshake with the child failed");
            Err(e)
        }
    }
}

impl ChildClient {
    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The child's captured stderr, when spawned with [`StderrMode::Capture`]. The handle
    /// stays valid after [`shutdown`](ChildClient::shutdown), which reads stderr to its end.
    pub fn stderr(&self) -> Option<StderrCapture> {
        self.stderr.as_ref().map(|captured| StderrCapture {
            captured: captured.clone(),
        })
    }

    /// Ends the child gracefully: closes the connection (which closes the child's stdin), waits
    /// up to `grace` for it to exit, then sends SIGTERM and waits up to `grace` again, then
    /// kills it. The child is always reaped. Returns its exit status.
    ///
    /// Captured stderr is read to its end (for at most a second after the exit) before this
    /// returns, so a [`StderrCapture`] is complete afterwards.
    pub async fn shutdown(mut self, grace: Duration) -> std::io::Result<ExitStatus> {
        let mut child = self
            .child
            .take()
            .expect("the child is present until shutdown or drop");
        self.client.close();
        let status = match within(grace, child.status()).await {
            Some(status) => status?,
            None => {
                terminate(self.pid);
                match within(grace, child.status()).await {
                    Some(status) => status?,
                    None => {
                        tracing::debug!(target: "mcp::child", pid = self.pid, "child ignored SIGTERM; killing it");
                        child.kill()?;
                        child.status().await?
                    }
                }
            }
        };
        if let Some(captured) = &self.stderr {
            within(STDERR_DRAIN, stderr_eof(captured)).await;
        }
        Ok(status)
    }
}

/// `fut`'s output, or `None` after `limit`.
async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
    async { Some(fut.await) }
        .or(async {
            Timer::after(limit).await;
            None
        })
        .await
}

/// SIGTERM (a no-op where there are no signals; the kill that follows still ends the child).
fn terminate(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: `kill` has no memory-safety preconditions. The child was not reaped yet (only
        // a completed `status()` reaps it), so the pid is still ours.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

impl Deref for ChildClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Drop for ChildClient {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            self.client.close();
            let _ = child.kill();
            // `reap_on_drop`: async-process reaps the dropped child in the background.
        }
    }
}

/// A child's captured stderr (see [`StderrMode::Capture`]). Cheap to clone.
#[derive(Clone, Debug)]
pub struct StderrCapture {
    captured: Arc<Mutex<Captured>>,
}

impl StderrCapture {
    /// The lines captured so far, oldest first (at most the last 1024; a line longer than
    /// 16 KiB is split; invalid UTF-8 is replaced).
    pub fn lines(&self) -> Vec<String> {
        let captured = self.captured.lock().unwrap_or_else(|e| e.into_inner());
        captured.lines.iter().cloned().collect()
    }
}

#[derive(Debug, Default)]
struct Captured {
    lines: VecDeque<String>,
    eof: bool,
    eof_waker: Option<Waker>,
}

impl Captured {
    fn push(&mut self, pid: u32, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = String::from_utf8_lossy(line).into_owned();
        tracing::debug!(target: "mcp::child", pid, "{line}");
        if self.lines.len() == STDERR_KEEP_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }
}

fn lock(captured: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    captured.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes when the stderr reader reached EOF.
async fn stderr_eof(captured: &Mutex<Captured>) {
    futures_lite::future::poll_fn(|cx| {
        let mut g = lock(captured);
        if g.eof {
            Poll::Ready(())
        } else {
            g.eof_waker = Some(cx.waker().clone());
            Poll::Pending
        }
    })
    .await
}

async fn pump_stderr(mut pipe: ChildStderr, pid: u32, captured: Arc<Mutex<Captured>>) {
    let mut buf = vec![0u8; 8 * 1024];
    let mut line = Vec::new();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut g = lock(&captured);
        for chunk in buf[..n].split_inclusive(|b| *b == b'\n') {
            line.extend_from_slice(chunk);
            if line.last() == Some(&b'\n') {
                line.pop();
                g.push(pid, &line);
                line.clear();
            } else if line.len() >= STDERR_MAX_LINE {
                g.push(pid, &line);
                line.clear();
            }
        }
    }
    let mut g = lock(&captured);
    if !line.is_empty() {
        g.push(pid, &line);
    }
    g.eof = true;
    if let Some(w) = g.eof_waker.take() {
        w.wake();
    }
}
