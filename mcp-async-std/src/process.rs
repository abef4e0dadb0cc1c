//! Child processes on `async-process` (the `ProcessDriver` of both runtimes): killed when
//! dropped and reaped in the background by `async-process`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{Command, ExitStatus, Stdio};

use futures_lite::{AsyncRead, AsyncWrite};
use mcp_service::driver::{ChildStdio, Process, StderrMode};

/// A child process of `async-process`'s.
#[derive(Debug)]
pub struct AsyncChild(async_process::Child);

impl Process for AsyncChild {
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(self.0.status())
    }

    fn start_kill(&mut self) -> io::Result<()> {
        self.0.kill()
    }
}

/// Spawns `cmd` (see `ProcessDriver::spawn_process`).
pub(crate) fn spawn(cmd: Command, stderr: StderrMode) -> io::Result<ChildStdio<AsyncChild>> {
    let mut cmd = async_process::Command::from(cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr.stdio())
        .kill_on_drop(true)
        .reap_on_drop(true);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("stdin and stdout are piped")
    };
    let stderr = child
        .stderr
        .take()
        .map(|pipe| Box::new(pipe) as Box<dyn AsyncRead + Send + Unpin>);
    let (stdin, stdout) = pipes(stdin, stdout);
    Ok(ChildStdio {
        process: AsyncChild(child),
        pid,
        stdin,
        stdout,
        stderr,
    })
}

type Pipes = (
    Box<dyn AsyncWrite + Send + Unpin>,
    Box<dyn AsyncRead + Send + Unpin>,
);

/// The child's pipes, grown and (on Unix) as reactor-driven ends of our own: duplicates (the
/// originals close here) that skip the `EAGAIN` read after each drained pipe.
fn pipes(stdin: async_process::ChildStdin, stdout: async_process::ChildStdout) -> Pipes {
    #[cfg(unix)]
    {
        use mcp_service::driver::fd::{PollFd, grow_child_pipe};
        use std::os::fd::AsFd;
        grow_child_pipe(stdin.as_fd());
        grow_child_pipe(stdout.as_fd());
        let own = |fd| PollFd::own(fd).and_then(crate::stdio::PollIo::new);
        if let (Some(inp), Some(out)) = (own(stdin.as_fd()), own(stdout.as_fd())) {
            return (Box::new(inp), Box::new(out));
        }
    }
    (Box::new(stdin), Box::new(stdout))
}
