//! Child processes: an MCP server spawned as a child and spoken to over its stdin/stdout, on
//! any [`ProcessDriver`].
//!
//! The driver only spawns the process (pipes as asked) and waits for or kills it; the client,
//! the stderr capture and the graceful shutdown (close stdin, wait, SIGTERM, wait, kill) are
//! here, once.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{Command, ExitStatus};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::Duration;

use futures_io::{AsyncRead, AsyncWrite};
use futures_util::AsyncReadExt;

use crate::runtime::{BoxFuture, Runtime};
use crate::{ByteStream, Client, ClientOptions, Error, ErrorKind};

/// Captured stderr keeps at most this many lines (the oldest are dropped first).
const STDERR_KEEP_LINES: usize = 1024;
/// A captured stderr line longer than this is split.
const STDERR_MAX_LINE: usize = 16 * 1024;
/// How long `shutdown_within` waits for the child's stderr to reach EOF after the child exited.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// Where a child's stderr goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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

impl StderrMode {
    /// The child's stderr for this mode (piped for [`Capture`](Self::Capture)).
    pub fn stdio(self) -> std::process::Stdio {
        match self {
            StderrMode::Inherit => std::process::Stdio::inherit(),
            StderrMode::Capture => std::process::Stdio::piped(),
            StderrMode::Null => std::process::Stdio::null(),
        }
    }
}

/// A running child process, as its driver sees it.
pub trait Process: Send + Sync + 'static {
    /// Waits for the child to exit and reaps it; the future fails with the operating
    /// system's error of waiting.
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>>;
    /// Sends the child SIGKILL (`TerminateProcess` on Windows) without waiting for it.
    ///
    /// # Errors
    /// The operating system's error of sending the signal.
    fn start_kill(&mut self) -> io::Result<()>;
}

/// A spawned child and its pipes.
pub struct ChildStdio<P> {
    /// The process.
    pub process: P,
    /// Its process id.
    pub pid: u32,
    /// The write end of its stdin.
    pub stdin: Box<dyn AsyncWrite + Send + Unpin>,
    /// The read end of its stdout.
    pub stdout: Box<dyn AsyncRead + Send + Unpin>,
    /// The read end of its stderr, with [`StderrMode::Capture`].
    pub stderr: Option<Box<dyn AsyncRead + Send + Unpin>>,
}

/// A runtime that can spawn child processes with piped stdio.
pub trait ProcessDriver: Runtime {
    /// The driver's child process.
    type Process: Process;

    /// Spawns `cmd` with piped stdin and stdout and stderr per `stderr`
    /// ([`StderrMode::stdio`]). A child dropped before it was reaped is killed (and reaped by
    /// the runtime, where it does that). On Unix the stdin and stdout pipes are grown with
    /// [`fd::grow_child_pipe`](super::fd::grow_child_pipe).
    ///
    /// # Errors
    /// The operating system's error of spawning `cmd` (no such program, no permission).
    fn spawn_process(
        &self,
        cmd: Command,
        stderr: StderrMode,
    ) -> io::Result<ChildStdio<Self::Process>>;
}

/// The runtime a [`ChildClient`] keeps for its timers and its reaper task.
trait Tasks: Send + Sync {
    fn sleep(&self, d: Duration) -> BoxFuture<()>;
    fn spawn(&self, fut: BoxFuture<()>);
}

impl<R: Runtime> Tasks for R {
    fn sleep(&self, d: Duration) -> BoxFuture<()> {
        super::sleep_for(self, d)
    }
    fn spawn(&self, fut: BoxFuture<()>) {
        Runtime::spawn(self, fut);
    }
}

/// A [`Client`] connected to a child process over its stdin and stdout.
///
/// Derefs to the client (none of its own methods shares a name with one of [`Client`]'s, so
/// `child.shutdown()` is the client's and [`shutdown_within`](Self::shutdown_within) the
/// child's). End it with [`shutdown_within`](Self::shutdown_within). Dropping it instead kills
/// the child (SIGKILL) and reaps it on a background task.
pub struct ChildClient {
    client: Client,
    process: Option<Box<dyn Process>>,
    pid: u32,
    rt: Arc<dyn Tasks>,
    stderr: Option<Arc<Mutex<Captured>>>,
}

impl fmt::Debug for ChildClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildClient")
            .field("client", &self.client)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Spawns `cmd` with piped stdin and stdout and inherited stderr, and connects a client to it
/// (see [`spawn_with`]).
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::ProcessDriver>(rt: D) -> Result<(), mcp_service::Error> {
/// // With mcp-tokio: `mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), ..)`.
/// let mut cmd = std::process::Command::new("my-server");
/// cmd.arg("--stdio");
/// let client = mcp_service::driver::spawn(rt, cmd, mcp_service::ClientOptions::default()).await?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// println!("{:?}", result.content);
/// // Closes the child's stdin, waits up to 2 s, then SIGTERM, 2 s, SIGKILL.
/// let status = client.shutdown_within(std::time::Duration::from_secs(2)).await;
/// # let _ = status; Ok(()) }
/// ```
///
/// # Errors
/// As [`spawn_with`].
pub async fn spawn<D: ProcessDriver>(
    rt: D,
    cmd: Command,
    options: ClientOptions,
) -> Result<ChildClient, Error> {
    spawn_with(rt, cmd, options, StderrMode::Inherit).await
}

/// Spawns `cmd` with piped stdin and stdout and stderr per `stderr`, and connects a client to
/// it; the connection (and the stderr reader) run on `rt`. Resolves once the handshake
/// completed. On failure the child is killed and reaped.
///
/// # Errors
/// [`ErrorKind::TransportError`] (local) when the process cannot be started (no such
/// program, no permission; the message has the operating system's reason); and those of
/// [`Client::connect`], most often [`ErrorKind::TransportClosed`] "the connection closed
/// during the handshake" for a child that exited (or closed its stdout) before answering —
/// spawn it with [`StderrMode::Capture`] to read what it said — and
/// [`ErrorKind::Timeout`] for one that never answers `initialize`.
pub async fn spawn_with<D: ProcessDriver>(
    rt: D,
    cmd: Command,
    options: ClientOptions,
    stderr: StderrMode,
) -> Result<ChildClient, Error> {
    let child = rt.spawn_process(cmd, stderr).map_err(|e| {
        Error::new(
            ErrorKind::TransportError,
            format!("failed to spawn the server process: {e}"),
        )
    })?;
    let ChildStdio {
        mut process,
        pid,
        stdin,
        stdout,
        stderr,
    } = child;
    let stderr = stderr.map(|pipe| {
        let captured = Arc::new(Mutex::new(Captured::default()));
        rt.spawn(Box::pin(pump_stderr(pipe, pid, captured.clone())));
        captured
    });
    match Client::connect(rt.clone(), ByteStream::new(stdout, stdin), options).await {
        Ok(client) => Ok(ChildClient {
            client,
            process: Some(Box::new(process)),
            pid,
            rt: Arc::new(rt),
            stderr,
        }),
        Err(e) => {
            let _ = process.start_kill();
            let status = process.wait().await;
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
    /// stays valid after [`shutdown_within`](Self::shutdown_within), which reads stderr to its
    /// end.
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
    ///
    /// # Errors
    /// The `io::Error` of waiting for the child or of killing it, as the driver's
    /// [`Process`] reports it (rare: the child was already reaped elsewhere).
    pub async fn shutdown_within(mut self, grace: Duration) -> io::Result<ExitStatus> {
        let mut process = self
            .process
            .take()
            .expect("the child is present until shutdown or drop");
        self.client.close();
        let rt = self.rt.clone();
        let status = match within(&*rt, grace, process.wait()).await {
            Some(status) => status?,
            None => {
                terminate(self.pid);
                match within(&*rt, grace, process.wait()).await {
                    Some(status) => status?,
                    None => {
                        tracing::debug!(target: "mcp::child", pid = self.pid, "child ignored SIGTERM; killing it");
                        process.start_kill()?;
                        process.wait().await?
                    }
                }
            }
        };
        if let Some(captured) = &self.stderr {
            within(&*rt, STDERR_DRAIN, stderr_eof(captured)).await;
        }
        Ok(status)
    }
}

impl std::ops::Deref for ChildClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

/// `fut`'s output, or `None` after `limit`.
async fn within<T>(rt: &dyn Tasks, limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
    let fut = std::pin::pin!(fut);
    match futures_util::future::select(fut, rt.sleep(limit)).await {
        futures_util::future::Either::Left((out, _)) => Some(out),
        futures_util::future::Either::Right(_) => None,
    }
}

/// SIGTERM (a no-op where there are no signals; the kill that follows still ends the child).
fn terminate(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: `kill` has no memory-safety preconditions. The child was not reaped yet (only
        // a completed `wait` reaps it), so the pid is still ours.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

impl Drop for ChildClient {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            self.client.close();
            let _ = process.start_kill();
            // Reaped in the background. If the runtime is gone the task is dropped at once, and
            // so is the child: the driver's kill-on-drop (and its orphan reaping) take over.
            self.rt.spawn(Box::pin(async move {
                let _ = process.wait().await;
            }));
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
        lock(&self.captured).lines.iter().cloned().collect()
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

fn lock(captured: &Mutex<Captured>) -> MutexGuard<'_, Captured> {
    captured.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes when the stderr reader reached EOF.
async fn stderr_eof(captured: &Mutex<Captured>) {
    futures_util::future::poll_fn(|cx| {
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

async fn pump_stderr(
    mut pipe: Box<dyn AsyncRead + Send + Unpin>,
    pid: u32,
    captured: Arc<Mutex<Captured>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    let mut line = Vec::new();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
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
