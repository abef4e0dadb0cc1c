//! The process's own stdin/stdout on `async-io` (the `StdioDriver` of both runtimes), and the
//! reactor side of a [`PollFd`] (also a child's pipes).
//!
//! `blocking::Unblock` moves every read and write to a thread pool. On Unix, pipes and sockets
//! (the normal case for a server spawned by a host) are driven by `async-io`'s reactor
//! directly instead — under async-std and smol alike — through [`PollFd`], which leaves the
//! inherited file descriptions as found; terminals and files (and everything off Unix) go
//! through `blocking::Unblock`.

#[cfg(feature = "stdio")]
use mcp_service::ByteStream;
#[cfg(unix)]
pub(crate) use reactor::PollIo;

/// Stdin and stdout (see the module documentation).
#[cfg(feature = "stdio")]
pub(crate) fn stdio() -> ByteStream {
    #[cfg(unix)]
    {
        use mcp_service::driver::fd::PollFd;
        use std::os::fd::AsFd;
        let reader: Box<dyn futures_lite::AsyncRead + Send + Unpin> =
            match PollFd::stdio(std::io::stdin().as_fd(), false).and_then(PollIo::new) {
                Some(fd) => Box::new(fd),
                None => Box::new(blocking::Unblock::new(std::io::stdin())),
            };
        let writer: Box<dyn futures_lite::AsyncWrite + Send + Unpin> =
            match PollFd::stdio(std::io::stdout().as_fd(), true).and_then(PollIo::new) {
                Some(fd) => Box::new(fd),
                None => Box::new(blocking::Unblock::new(std::io::stdout())),
            };
        ByteStream::new(reader, writer)
    }
    #[cfg(not(unix))]
    ByteStream::new(
        blocking::Unblock::new(std::io::stdin()),
        blocking::Unblock::new(std::io::stdout()),
    )
}

#[cfg(unix)]
mod reactor {
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll, ready};

    use async_io::Async;
    use futures_lite::{AsyncRead, AsyncWrite};
    use mcp_service::driver::fd::PollFd;

    /// A [`PollFd`] registered with the `async-io` reactor.
    pub(crate) struct PollIo {
        io: Async<PollFd>,
        /// The last read was short, so the pipe was empty after it: the next read waits for
        /// readiness first instead of spending a system call on `EAGAIN`.
        drained: bool,
    }

    impl PollIo {
        /// Registers `fd` as it is (its reads and writes never block already).
        pub(crate) fn new(fd: PollFd) -> Option<PollIo> {
            Some(PollIo {
                io: Async::new_nonblocking(fd).ok()?,
                drained: false,
            })
        }
    }

    impl AsyncRead for PollIo {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            if self.drained && !buf.is_empty() {
                // Level-triggered readiness: data that arrived after the short read is
                // reported at once, so nothing is missed.
                ready!(self.io.poll_readable(cx))?;
                self.drained = false;
            }
            loop {
                match self.io.get_ref().read(buf) {
                    Ok(n) => {
                        self.drained = n > 0 && n < buf.len();
                        return Poll::Ready(Ok(n));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ready!(self.io.poll_readable(cx))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
    }

    impl AsyncWrite for PollIo {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                match self.io.get_ref().write(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ready!(self.io.poll_writable(cx))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return Poll::Ready(r),
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
