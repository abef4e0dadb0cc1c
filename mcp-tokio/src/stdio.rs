//! The process's own stdin/stdout as an async byte stream, without a thread hop.
//!
//! tokio's `stdin()`/`stdout()` run every read and write on the blocking thread pool: two
//! thread hand-offs per message. When stdin/stdout are pipes or sockets (the normal case for an
//! MCP server spawned by a host), they can be made non-blocking and driven by the reactor
//! directly, which is what this module does. For anything else (a terminal, a regular file)
//! it falls back to tokio's blocking-pool stdio. The original file status flags are restored
//! when the stream is dropped.

#[cfg(feature = "stdio")]
use std::io;
#[cfg(any(feature = "stdio", target_os = "linux"))]
use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;
#[cfg(feature = "stdio")]
use std::os::fd::{AsFd, OwnedFd};
#[cfg(feature = "stdio")]
use std::pin::Pin;
#[cfg(feature = "stdio")]
use std::task::{Context, Poll, ready};

#[cfg(feature = "stdio")]
use futures_io::{AsyncRead, AsyncWrite};
#[cfg(feature = "stdio")]
use tokio::io::unix::AsyncFd;

/// One end of stdio, non-blocking and registered with tokio's reactor.
#[cfg(feature = "stdio")]
pub(crate) struct PipeFd {
    fd: AsyncFd<OwnedFd>,
    original_flags: libc::c_int,
}

#[cfg(feature = "stdio")]
fn is_pollable(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: `fstat` writes into the provided struct; the fd is valid for the borrow.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    kind == libc::S_IFIFO || kind == libc::S_IFSOCK
}

/// Kernel buffer given to the pipes of a spawned child (Linux): room for a 64 KiB message with
/// its envelope, so it is written in one system call instead of in pieces with a reader
/// wake-up between each. Pipe buffers count against the user's pipe quota
/// (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default): 256 KiB per child stays well
/// clear of it for hundreds of children, and growing simply stops working past it.
#[cfg(feature = "child")]
pub(crate) const CHILD_PIPE_BYTES: libc::c_int = 128 * 1024;

/// Grows the kernel buffer of the pipe behind `fd` to at least `bytes` (Linux, best effort:
/// a pipe already as large, a size above the system limit or a user over the pipe-memory quota
/// keeps its size). Elsewhere a no-op.
#[cfg(feature = "child")]
pub(crate) fn grow_pipe(fd: BorrowedFd<'_>, bytes: libc::c_int) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: fcntl on a descriptor valid for the borrow; F_GETPIPE_SZ / F_SETPIPE_SZ take
        // and return plain integers.
        let current = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
        if current >= 0 && current < bytes {
            // SAFETY: as above.
            let _ = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, bytes);
}

#[cfg(feature = "stdio")]
impl PipeFd {
    /// Wraps a duplicate of `fd` if it is a pipe or a socket; `None` otherwise.
    pub(crate) fn new(fd: BorrowedFd<'_>) -> Option<PipeFd> {
        if !is_pollable(fd) {
            return None;
        }
        let owned = fd.try_clone_to_owned().ok()?;
        // SAFETY: fcntl on a valid, owned descriptor.
        let flags = unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        // SAFETY: `owned` is a valid descriptor owned by the `AsyncFd` for its whole life.
        match unsafe { AsyncFd::register(owned) } {
            Ok(fd) => Some(PipeFd {
                fd,
                original_flags: flags,
            }),
            Err(_) => None,
        }
    }
}

#[cfg(feature = "stdio")]
impl Drop for PipeFd {
    fn drop(&mut self) {
        // The file description is shared with whoever else holds stdio: put it back as it was.
        // SAFETY: fcntl on a valid, owned descriptor.
        unsafe {
            libc::fcntl(
                self.fd.get_ref().as_raw_fd(),
                libc::F_SETFL,
                self.original_flags,
            );
        }
    }
}

#[cfg(feature = "stdio")]
impl AsyncRead for PipeFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let result = guard.try_io(|inner| {
                // SAFETY: reading into a valid, exclusively borrowed buffer.
                let n = unsafe {
                    libc::read(
                        inner.as_fd().as_raw_fd(),
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                    )
                };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match result {
                Ok(Ok(n)) => {
                    // A short read drained the pipe: skip the `EAGAIN` round trip next time
                    // (the reactor reports new data as a new edge).
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

#[cfg(feature = "stdio")]
impl AsyncWrite for PipeFd {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            let result = guard.try_io(|inner| {
                // SAFETY: writing from a valid buffer.
                let n = unsafe {
                    libc::write(inner.as_fd().as_raw_fd(), buf.as_ptr().cast(), buf.len())
                };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match result {
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
