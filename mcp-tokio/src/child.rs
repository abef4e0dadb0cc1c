//! Child processes: an MCP server spawned as a child and spoken to over its stdin/stdout.

use std::collections::VecDeque;
use std::ops::Deref;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_service::{ByteStream, Client, ClientOptions, Error, ErrorKind};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, Command};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::TokioRuntime;

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
/// (SIGKILL) and reaps it on a background task.
#[derive(Debug)]
pub struct ChildClient {
    client: Client,
    child: Option<Child>,
    pid: Option<u32>,
    rt: TokioRuntime,
    stderr: Option<(Arc<Mutex<Captured>>, JoinHandle<()>)>,
}

/// Spawns `cmd` with piped stdin and stdout and inherited stderr, and connects a client to it
/// (see [`spawn_with`]).
pub async fn spawn(cmd: Command, options: ClientOptions) -> Result<ChildClient, Error> {
    spawn_with(cmd, options, StderrMode::Inherit).await
}

/// Spawns `cmd` with piped stdin and stdout and stderr per `stderr`, and connects a client to
/// it: resolves once the handshake completed. On failure the child is killed and reaped.
/// Must run inside a tokio runtime with IO and time enabled.
pub async fn spawn_with(
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
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        Error::new(
            ErrorKind::TransportError,
            format!("failed to spawn the server process: {e}"),
        )
    })?;
    let pid = child.id();
    let rt = TokioRuntime::current();
    let stderr = child.stderr.take().map(|pipe| {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let task = rt
            .handle()
            .spawn(pump_stderr(pipe, pid.unwrap_or(0), captured.clone()));
        (captured, task)
    });
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("stdin and stdout are piped")
    };
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        crate::stdio::grow_pipe(stdin.as_fd(), crate::stdio::CHILD_PIPE_BYTES);
        crate::stdio::grow_pipe(stdout.as_fd(), crate::stdio::CHILD_PIPE_BYTES);
    }
    let transport = ByteStream::new(stdout.compat(), stdin.compat_write());
    match Client::connect(rt.clone(), transport, options).await {
        Ok(client) => Ok(ChildClient {
            client,
            child: Some(child),
            pid,
            rt,
            stderr,
        }),
        Err(e) => {
            let _ = child.start_kill();
            let status = child.wait().await;
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

    /// The child's process id (`None` only if tokio reaped it before it could be read).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The child's captured stderr, when spawned with [`StderrMode::Capture`]. The handle
    /// stays valid after [`shutdown`](ChildClient::shutdown), which reads stderr to its end.
    pub fn stderr(&self) -> Option<StderrCapture> {
        self.stderr.as_ref().map(|(captured, _)| StderrCapture {
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
        let status = match tokio::time::timeout(grace, child.wait()).await {
            Ok(status) => status?,
            Err(_) => {
                terminate(&child);
                match tokio::time::timeout(grace, child.wait()).await {
                    Ok(status) => status?,
                    Err(_) => {
                        tracing::debug!(target: "mcp::child", pid = self.pid, "child ignored SIGTERM; killing it");
                        child.kill().await?;
                        child.wait().await?
                    }
                }
            }
        };
        if let Some((_, task)) = self.stderr.as_mut() {
            let _ = tokio::time::timeout(STDERR_DRAIN, task).await;
        }
        Ok(status)
    }
}

/// SIGTERM (a no-op where there are no signals; the kill that follows still ends the child).
fn terminate(child: &Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| libc::pid_t::try_from(p).ok()) {
        // SAFETY: `kill` has no memory-safety preconditions; the pid is our unreaped child.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
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
            let _ = child.start_kill();
            // If the runtime is gone the task is dropped at once, and so is the child:
            // `kill_on_drop` and tokio's orphan reaping take over.
            drop(self.rt.handle().spawn(async move {
                let _ = child.wait().await;
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
        let captured = self.captured.lock().unwrap_or_else(|e| e.into_inner());
        captured.lines.iter().cloned().collect()
    }
}

#[derive(Debug, Default)]
struct Captured {
    lines: VecDeque<String>,
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
        let mut g = captured.lock().unwrap_or_else(|e| e.into_inner());
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
    if !line.is_empty() {
        captured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pid, &line);
    }
}
