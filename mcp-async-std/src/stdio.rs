//! The process's own stdin/stdout as an async byte stream, without a thread hop.
//!
//! `blocking::Unblock` moves every read and write to a thread pool. When stdin/stdout are
//! pipes or sockets (the normal case for an MCP server spawned by a host), they can be made
//! non-blocking and driven by `async-io`'s reactor directly — under async-std and smol alike.
//! Terminals and regular files fall back to `blocking::Unblock`. The original file status flags
//! are restored when the stream is dropped. A spawned child's pipes use the same [`PipeFd`].

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_io::Async;
use futures_lite::{AsyncRead, AsyncWrite};

/// One end of stdio, non-blocking and registered with the `async-io` reactor.
pub(crate) struct PipeFd {
    io: Async<File>,
    original_flags: libc::c_int,
    /// The last read was short, so the pipe was empty after it: the next read waits for
    /// readiness first instead of spending a system call on `EAGAIN`.
    drained: bool,
}

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
        // `Async::new` makes the descriptor non-blocking and registers it.
        let io = Async::new(File::from(owned)).ok()?;
        Some(PipeFd {
            io,
            original_flags: flags,
            drained: false,
        })
    }
}

impl Drop for PipeFd {
    fn drop(&mut self) {
        // The file description is shared with whoever else holds stdio: put it back as it was.
        // SAFETY: fcntl on a valid descriptor owned by `self.io`.
        unsafe {
            libc::fcntl(
                self.io.get_ref().as_fd().as_raw_fd(),
                libc::F_SETFL,
                self.original_flags,
            );
        }
    }
}

impl AsyncRead for PipeFd {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if self.drained && !buf.is_empty() {
            // Level-triggered readiness: data that arrived after the short read is reported at
            // once, so nothing is missed.
            std::task::ready!(self.io.poll_readable(cx))?;
            self.drained = false;
        }
        let n = std::task::ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        self.drained = n > 0 && n < buf.len();
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for PipeFd {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}
