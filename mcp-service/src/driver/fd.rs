//! Unix descriptors made ready for a reactor without touching what the process inherited.
//!
//! A server's stdin and stdout are shared with its host: the file description behind them
//! (and its `O_NONBLOCK` flag) is seen by every other holder, so a driver must not make it
//! non-blocking. [`PollFd::stdio`] picks a way that leaves it as found:
//!
//! - a socket is read and written with `MSG_DONTWAIT`, per call, its flags left as they are;
//! - a pipe (Linux) is opened again through `/proc/self/fd`, which gives this process a file
//!   description of its own, and that one is made non-blocking;
//! - anything else (a terminal, a regular file, a pipe elsewhere) is refused (`None`): the
//!   driver reads it on a blocking thread pool instead.
//!
//! A driver registers the [`PollFd`] with its reactor (it is `AsFd` and `AsRawFd`), waits for
//! readiness there and calls [`PollFd::read`] / [`PollFd::write`], which never block. Only
//! the reactor registration is the driver's; the policy is here, once.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

/// A descriptor of this process's own that never blocks on `read` / `write` (see the module
/// documentation).
#[derive(Debug)]
pub struct PollFd {
    fd: OwnedFd,
    /// A socket whose (shared) flags were left alone: every call passes `MSG_DONTWAIT`.
    socket: bool,
    /// The flags to put back on drop (a description this side made non-blocking).
    restore_flags: Option<libc::c_int>,
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

/// A file description of this process's own for the pipe behind `fd` (Linux: opening
/// `/proc/self/fd/N` opens the pipe again), non-blocking, for reading or writing.
#[cfg(target_os = "linux")]
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

#[cfg(not(target_os = "linux"))]
fn reopen_pipe(_fd: BorrowedFd<'_>, _write: bool) -> Option<OwnedFd> {
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
#[cfg(target_os = "linux")]
const CHILD_PIPE_BYTES: libc::c_int = 128 * 1024;

/// Grows the kernel buffer of a child's pipe behind `fd` to 128 KiB (Linux, best effort: a
/// pipe already as large, a size above the system limit or a user over the pipe-memory quota
/// keeps its size). Elsewhere a no-op.
pub fn grow_child_pipe(fd: BorrowedFd<'_>) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: fcntl on a descriptor valid for the borrow; F_GETPIPE_SZ / F_SETPIPE_SZ take
        // and return plain integers.
        let current = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
        if (0..CHILD_PIPE_BYTES).contains(&current) {
            // SAFETY: as above.
            let _ = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, CHILD_PIPE_BYTES) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

impl PollFd {
    /// Stdin (`write` false) or stdout, if it is a socket or (on Linux) a pipe; `None`
    /// otherwise. The inherited file description is never changed.
    pub fn stdio(fd: BorrowedFd<'_>, write: bool) -> Option<PollFd> {
        let (fd, socket) = match file_kind(fd)? {
            libc::S_IFSOCK => (fd.try_clone_to_owned().ok()?, true),
            libc::S_IFIFO => (reopen_pipe(fd, write)?, false),
            _ => return None,
        };
        Some(PollFd {
            fd,
            socket,
            restore_flags: None,
        })
    }

    /// A duplicate of `fd`, a pipe or socket this process created (a child's pipe), made
    /// non-blocking; its flags are put back when this is dropped. `None` for other files.
    pub fn own(fd: BorrowedFd<'_>) -> Option<PollFd> {
        if !matches!(file_kind(fd), Some(libc::S_IFIFO | libc::S_IFSOCK)) {
            return None;
        }
        let fd = fd.try_clone_to_owned().ok()?;
        // SAFETY: fcntl on a valid, owned descriptor.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0
            || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
        {
            return None;
        }
        Some(PollFd {
            fd,
            socket: false,
            restore_flags: Some(flags),
        })
    }

    /// Reads without blocking (`WouldBlock` when nothing is there).
    ///
    /// # Errors
    /// `io::ErrorKind::WouldBlock` when nothing is there yet; otherwise the operating
    /// system's error of `read`/`recv` (`Interrupted` among them).
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let raw = self.fd.as_raw_fd();
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

    /// Writes without blocking (`WouldBlock` when the buffer is full).
    ///
    /// # Errors
    /// `io::ErrorKind::WouldBlock` when the buffer is full; `BrokenPipe` when the reader is
    /// gone; otherwise the operating system's error of `write`/`send`.
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let raw = self.fd.as_raw_fd();
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

impl Drop for PollFd {
    fn drop(&mut self) {
        if let Some(flags) = self.restore_flags {
            // Put the description back as it was.
            // SAFETY: fcntl on a valid descriptor owned by `self`.
            unsafe {
                libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, flags);
            }
        }
    }
}

impl AsFd for PollFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for PollFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
