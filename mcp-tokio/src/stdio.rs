//! The process's own stdin/stdout as an async byte stream, without a thread hop.
//!
//! tokio's `stdin()`/`stdout()` run every read and write on the blocking thread pool: two
//! thread hand-offs per message. When stdin/stdout are pipes or sockets (the normal case for an
//! MCP server spawned by a host), they are driven by the reactor directly instead, without
//! touching the file description the process inherited (its flags are shared with every other
//! holder of the descriptor, the host among them):
//!
//! - a socket is read and written with `MSG_DONTWAIT`, per call, its flags left as they are;
//! - a pipe (Linux) is opened again through `/proc/self/fd`, which gives this process a file
//!   description of its own, and that one is made non-blocking;
//! - anything else (a terminal, a regular file, a pipe elsewhere) goes through tokio's
//!   blocking-pool stdio.

#[cfg(feature = "stdio")]
use std::io;
#[cfg(any(feature = "stdio", target_os = "linux"))]
use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;
#[cfg(feature = "stdio")]
use std::os::fd::OwnedFd;
#[cfg(feature = "stdio")]
use std::pin::Pin;
#[cfg(feature = "stdio")]
use std::task::{Context, Poll, ready};

#[cfg(feature = "stdio")]
use futures_io::{AsyncRead, AsyncWrite};
#[cfg(feature = "stdio")]
use tokio::io::unix::AsyncFd;

/// One end of stdio, registered with tokio's reactor.
#[cfg(feature = "stdio")]
pub(crate) struct PipeFd {
    fd: AsyncFd<OwnedFd>,
    /// A socket whose (shared) flags were left alone: every call passes `MSG_DONTWAIT`.
    socket: bool,
}

/// What kind of file `fd` is (`S_IFIFO`, `S_IFSOCK`, …), if `fstat` says.
#[cfg(feature = "stdio")]
fn file_kind(fd: BorrowedFd<'_>) -> Option<libc::mode_t> {
    // SAFETY: `fstat` writes into the provided struct; the fd is valid for the borrow.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    Some(st.st_mode & libc::S_IFMT)
}

/// A file description of this process's own for the pipe behind `fd` (Linux: opening
/// `/proc/self/fd/N` opens the pipe again), non-blocking, for reading or writing.
#[cfg(all(feature = "stdio", target_os = "linux"))]
fn reopen_pipe(fd: BorrowedFd<'_>, write: bool) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    let path = format!("/proc/self/fd/{}\0", fd.as_raw_fd());
    let access = if write {
        libc::O_WRONLY
    } else {
        libc::O_RDONLY
    };
    // SAFETY: a NUL-terminated path; the result is a new descriptor or -1.
    let raw = unsafe {
        libc::open(
            path.as_ptr().cast(),
            access | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a descriptor just opened and owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(raw) })
}

#[cfg(all(feature = "stdio", not(target_os = "linux")))]
fn reopen_pipe(_fd: BorrowedFd<'_>, _write: bool) -> Option<OwnedFd> {
    None
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
    /// Stdin (`write` false) or stdout driven by the reactor, if it is a socket or (on Linux)
    /// a pipe; `None` otherwise. The inherited file description is never changed.
    pub(crate) fn stdio(fd: BorrowedFd<'_>, write: bool) -> Option<PipeFd> {
        let (owned, socket) = match file_kind(fd)? {
            libc::S_IFSOCK => (fd.try_clone_to_owned().ok()?, true),
            libc::S_IFIFO => (reopen_pipe(fd, write)?, false),
            _ => return None,
        };
        // SAFETY: `owned` is a valid descriptor owned by the `AsyncFd` for its whole life.
        let fd = unsafe { AsyncFd::register(owned) }.ok()?;
        Some(PipeFd { fd, socket })
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let raw = self.fd.get_ref().as_raw_fd();
        // SAFETY: reading into a valid, exclusively borrowed buffer.
        let n = unsafe {
            if self.socket {
                libc::recv(raw, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT)
            } else {
                libc::read(raw, buf.as_mut_ptr().cast(), buf.len())
            }
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let raw = self.fd.get_ref().as_raw_fd();
        // SAFETY: writing from a valid buffer.
        let n = unsafe {
            if self.socket {
                libc::send(raw, buf.as_ptr().cast(), buf.len(), SEND_FLAGS)
            } else {
                libc::write(raw, buf.as_ptr().cast(), buf.len())
            }
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// `send` flags: never block, and (where there is such a flag) report a closed peer as
/// `EPIPE` rather than raising `SIGPIPE`.
#[cfg(all(feature = "stdio", any(target_os = "linux", target_os = "android")))]
const SEND_FLAGS: libc::c_int = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
#[cfg(all(
    feature = "stdio",
    not(any(target_os = "linux", target_os = "android"))
))]
const SEND_FLAGS: libc::c_int = libc::MSG_DONTWAIT;

#[cfg(feature = "stdio")]
impl AsyncRead for PipeFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let result = guard.try_io(|_| self.read(buf));
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
            let result = guard.try_io(|_| self.write(buf));
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
