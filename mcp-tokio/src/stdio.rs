//! The process's own stdin/stdout on tokio ([`StdioDriver`]).
//!
//! tokio's `stdin()`/`stdout()` run every read and write on the blocking thread pool: two
//! thread hand-offs per message. On Unix, pipes and sockets (the normal case for a server
//! spawned by a host) are driven by tokio's reactor directly instead, through
//! [`PollFd`](mcp_service::driver::fd::PollFd), which leaves the inherited file descriptions
//! as found; terminals and files (and everything off Unix) go through the blocking pool.

use mcp_service::ByteStream;
use mcp_service::driver::StdioDriver;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::TokioRuntime;

impl StdioDriver for TokioRuntime {
    fn stdio(&self) -> ByteStream {
        let _guard = self.handle().enter();
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let reader: Box<dyn futures_io::AsyncRead + Send + Unpin> =
                match reactor::PollStdio::new(std::io::stdin().as_fd(), false) {
                    Some(fd) => Box::new(fd),
                    None => Box::new(tokio::io::stdin().compat()),
                };
            let writer: Box<dyn futures_io::AsyncWrite + Send + Unpin> =
                match reactor::PollStdio::new(std::io::stdout().as_fd(), true) {
                    Some(fd) => Box::new(fd),
                    None => Box::new(tokio::io::stdout().compat_write()),
                };
            ByteStream::new(reader, writer)
        }
        #[cfg(not(unix))]
        ByteStream::new(
            tokio::io::stdin().compat(),
            tokio::io::stdout().compat_write(),
        )
    }
}

#[cfg(unix)]
mod reactor {
    use std::io;
    use std::os::fd::BorrowedFd;
    use std::pin::Pin;
    use std::task::{Context, Poll, ready};

    use futures_io::{AsyncRead, AsyncWrite};
    use mcp_service::driver::fd::PollFd;
    use tokio::io::unix::AsyncFd;

    /// One end of stdio, registered with tokio's reactor.
    pub(super) struct PollStdio(AsyncFd<PollFd>);

    impl PollStdio {
        /// Stdin (`write` false) or stdout on the reactor, if [`PollFd::stdio`] takes it.
        pub(super) fn new(fd: BorrowedFd<'_>, write: bool) -> Option<PollStdio> {
            let fd = PollFd::stdio(fd, write)?;
            // SAFETY: `fd` is a valid descriptor owned by the `AsyncFd` for its whole life.
            Some(PollStdio(unsafe { AsyncFd::register(fd) }.ok()?))
        }
    }

    impl AsyncRead for PollStdio {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                let mut guard = ready!(self.0.poll_read_ready(cx))?;
                match guard.try_io(|fd| fd.get_ref().read(buf)) {
                    Ok(Ok(n)) => {
                        // A short read drained the pipe: skip the `EAGAIN` round trip next
                        // time (the reactor reports new data as a new edge).
                        if n > 0 && n < buf.len() {
                            guard.clear_ready();
                        }
                        return Poll::Ready(Ok(n));
                    }
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            }
        }
    }

    impl AsyncWrite for PollStdio {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                let mut guard = ready!(self.0.poll_write_ready(cx))?;
                match guard.try_io(|fd| fd.get_ref().write(buf)) {
                    Ok(Ok(n)) => {
                        if n < buf.len() {
                            guard.clear_ready();
                        }
                        return Poll::Ready(Ok(n));
                    }
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
}
