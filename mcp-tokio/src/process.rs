//! Child processes on tokio ([`ProcessDriver`]): `tokio::process`, killed when dropped and
//! reaped by tokio.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{Command, ExitStatus, Stdio};

use mcp_service::driver::{ChildStdio, Process, ProcessDriver, StderrMode};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::TokioRuntime;

/// A child process of tokio's.
#[derive(Debug)]
pub struct TokioChild(tokio::process::Child);

impl Process for TokioChild {
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(self.0.wait())
    }

    fn start_kill(&mut self) -> io::Result<()> {
        self.0.start_kill()
    }
}

impl ProcessDriver for TokioRuntime {
    type Process = TokioChild;

    fn spawn_process(
        &self,
        cmd: Command,
        stderr: StderrMode,
    ) -> io::Result<ChildStdio<TokioChild>> {
        let _guard = self.handle().enter();
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr.stdio())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let pid = child.id().expect("a child not yet waited for has an id");
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("stdin and stdout are piped")
        };
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            mcp_service::driver::fd::grow_child_pipe(stdin.as_fd());
            mcp_service::driver::fd::grow_child_pipe(stdout.as_fd());
        }
        let stderr = child
            .stderr
            .take()
            .map(|pipe| Box::new(pipe.compat()) as Box<dyn futures_io::AsyncRead + Send + Unpin>);
        Ok(ChildStdio {
            process: TokioChild(child),
            pid,
            stdin: Box::new(stdin.compat_write()),
            stdout: Box::new(stdout.compat()),
            stderr,
        })
    }
}
