//! The process's own stdin/stdout as an async byte stream, without a thread hop.
//!
//! `blocking::Unblock` moves every read and write to a thread pool. When stdin/stdout are
//! pipes or sockets (the normal case for an MCP server spawned by a host), they are driven by
//! `async-io`'s reactor directly instead — under async-std and smol alike — without touching
//! the file description the process inherited (its flags are shared with the host):
//!
//! - a socket is read and written with `MSG_DONTWAIT`, per call, its flags left as they are;
//! - a pipe (Linux) is opened again through `/proc/self/fd`, which gives this process a file
//!   description of its own, and that one is made non-blocking;
//! - anything else (a terminal, a regular file, a pipe elsewhere) goes through
//!   `blocking::Unblock`.
//!
//! A spawned child's pipes (this process's own) use the same [`PipeFd`], made non-blocking
//! (their original flags are restored on drop).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_io::Async;
use futures_lite::{AsyncRead, AsyncWrite};

/// One end of stdio, registered with the `async-io` reactor.
pub(crate) struct PipeFd {
    io: Async<File>,
    /// The flags to put back on drop (a description this side made non-blocking).
    original_flags: Option<libc::c_int>,
    /// A socket whose (shared) flags were left alone: every call passes `MSG_DONTWAIT`.
    socket: bool,
    /// The last read was short, so the pipe was empty after it: the next read waits for
    /// readiness first instead of spending a system call on `EAGAIN`.
    drained: bool,
}

/// What kind of file `fd` is (`S_IFIFO`, `S_IFSOCK`, …), if `fstat` says.
fn file_kind(fd: BorrowedFd<'_>) -> Option<libc::mode_t> {
    // SAFETY: `fstat` writes into the provided struct; the fd is valid for the borrow.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    Some(st.st_mode & libc::S_IFMT)
}

#[cfg(feature = "child")]
fn is_pollable(fd: BorrowedFd<'_>) -> bool {
    matches!(file_kind(fd), Some(libc::S_IFIFO | libc::S_IFSOCK))
}

/// A file description of this process's own for the pipe behind `fd` (Linux: opening
/// `/proc/self/fd/N` opens the pipe again), non-blocking, for reading or writing.
#[cfg(all(feature = "stdio", target_os = "linux"))]
fn reopen_pipe(fd: BorrowedFd<'_>, write: bool) -> Option<std::os::fd::OwnedFd> {
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
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) })
}

#[cfg(all(feature = "stdio", not(target_os = "linux")))]
fn reopen_pipe(_fd: BorrowedFd<'_>, _write: bool) -> Option<std::os::fd::OwnedFd> {
    None
}

/// `send` flags: never block, and (where there is such a flag) report a closed peer as
/// `EPIPE` rather than raising `SIGPIPE`.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SEND_FLAGS: libc::c_int = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SEND_FLAGS: libc::c_int = libc::MSG_DONTWAIT;

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
    #[cfg(feature = "child")]
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
            original_flags: Some(flags),
            socket: false,
            drained: false,
        })
    }

    /// Stdin (`write` false) or stdout driven by the reactor, if it is a socket or (on Linux)
    /// a pipe; `None` otherwise. The inherited file description is never changed.
    #[cfg(feature = "stdio")]
    pub(crate) fn stdio(fd: BorrowedFd<'_>, write: bool) -> Option<PipeFd> {
        let (io, socket) = match file_kind(fd)? {
            // Registered as it is: its flags stay blocking, each call passes MSG_DONTWAIT.
            libc::S_IFSOCK => (
                Async::new_nonblocking(File::from(fd.try_clone_to_owned().ok()?)).ok()?,
                true,
            ),
            // Our own description, already non-blocking.
            libc::S_IFIFO => (
                Async::new_nonblocking(File::from(reopen_pipe(fd, write)?)).ok()?,
                false,
            ),
            _ => return None,
        };
        Some(PipeFd {
            io,
            original_flags: None,
            socket,
            drained: false,
        })
    }

    fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: reading into a valid, exclusively borrowed buffer.
        let n = unsafe {
            libc::recv(
                self.io.get_ref().as_fd().as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: writing from a valid buffer.
        let n = unsafe {
            libc::send(
                self.io.get_ref().as_fd().as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                SEND_FLAGS,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl Drop for PipeFd {
    fn drop(&mut self) {
        let Some(flags) = self.original_flags else {
            return;
        };
        // Put the description back as it was.
        // SAFETY: fcntl on a valid descriptor owned by `self.io`.
        unsafe {
            libc::fcntl(self.io.get_ref().as_fd().as_raw_fd(), libc::F_SETFL, flags);
        }
    }
}

impl AsyncRead for PipeFd {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if self.socket {
            loop {
                match self.recv(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::task::ready!(self.io.poll_readable(cx))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return Poll::Ready(r),
                }
            }
        }
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
        if self.socket {
            loop {
                match self.send(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::task::ready!(self.io.poll_writable(cx))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return Poll::Ready(r),
                }
            }
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}
