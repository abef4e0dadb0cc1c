//! The `mcp_service::Runtime`s of async-std and smol, and their
//! [`Driver`](mcp_service::driver::Driver) (TCP through `async-io`). Both time with `async-io`
//! timers and do IO on its reactor, so they differ only in which executor `spawn` uses.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::task::{Poll, ready};

use async_io::Async;
use mcp_proto::Instant;
use mcp_service::driver::{self, Incoming};
use mcp_service::{BoxFuture, Clock};

/// Timers further out than this are armed at this distance (and re-armed when they fire):
/// keeps far deadlines clear of `Instant` overflow.
const MAX_SLEEP_MICROS: u64 = 24 * 60 * 60 * 1_000_000;

fn sleep_until(clock: &Clock, deadline: Instant) -> BoxFuture<()> {
    let cap = clock.now().as_micros().saturating_add(MAX_SLEEP_MICROS);
    let at = clock.to_std(Instant::from_micros(deadline.as_micros().min(cap)));
    let timer = async_io::Timer::at(at);
    Box::pin(async move {
        timer.await;
    })
}

/// Accepts on `listener` through the `async-io` reactor.
pub(crate) fn incoming(listener: TcpListener) -> io::Result<Incoming<Async<TcpStream>>> {
    let listener = Async::new(listener)?;
    Ok(driver::incoming(move |cx| {
        loop {
            match listener.get_ref().accept() {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return Poll::Ready(Async::new(stream).map(|s| (s, addr)));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(listener.poll_readable(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }))
}

/// Connects to `host:port` (names resolved on `blocking`'s thread pool), trying each address.
/// The addresses of `host`, resolved on the blocking thread pool.
pub(crate) fn resolve(host: &str, port: u16) -> BoxFuture<io::Result<Vec<SocketAddr>>> {
    let host = host.to_owned();
    Box::pin(blocking::unblock(move || {
        (host.as_str(), port).to_socket_addrs().map(Vec::from_iter)
    }))
}

pub(crate) fn connect_tcp(host: &str, port: u16) -> BoxFuture<io::Result<Async<TcpStream>>> {
    let resolved = resolve(host, port);
    Box::pin(async move {
        let addrs: Vec<SocketAddr> = resolved.await?;
        let mut last = io::Error::new(
            io::ErrorKind::NotFound,
            "the host name resolved to no address",
        );
        for addr in addrs {
            match Async::<TcpStream>::connect(addr).await {
                Ok(stream) => {
                    let _ = stream.get_ref().set_nodelay(true);
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    })
}

/// The `Runtime` and `Driver` impls of one `async-io` runtime type, given how it spawns.
macro_rules! async_io_runtime {
    ($name:ident, $spawn:expr) => {
        impl mcp_service::Runtime for $name {
            fn now(&self) -> Instant {
                self.clock.now()
            }

            fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
                sleep_until(&self.clock, deadline)
            }

            fn spawn(&self, fut: BoxFuture<()>) {
                ($spawn)(fut)
            }
        }

        impl driver::Driver for $name {
            type TcpListener = TcpListener;
            type TcpStream = Async<TcpStream>;

            fn local_addr(&self, listener: &TcpListener) -> io::Result<SocketAddr> {
                listener.local_addr()
            }

            fn incoming(&self, listener: TcpListener) -> io::Result<Incoming<Async<TcpStream>>> {
                incoming(listener)
            }

            fn connect_tcp(
                &self,
                host: &str,
                port: u16,
            ) -> BoxFuture<io::Result<Async<TcpStream>>> {
                connect_tcp(host, port)
            }

            fn resolve(&self, host: &str, port: u16) -> BoxFuture<io::Result<Vec<SocketAddr>>> {
                resolve(host, port)
            }
        }

        #[cfg(feature = "stdio")]
        impl driver::StdioDriver for $name {
            fn stdio(&self) -> mcp_service::ByteStream {
                crate::stdio::stdio()
            }
        }

        #[cfg(feature = "child")]
        impl driver::ProcessDriver for $name {
            type Process = crate::process::AsyncChild;

            fn spawn_process(
                &self,
                cmd: std::process::Command,
                stderr: driver::StderrMode,
            ) -> io::Result<driver::ChildStdio<crate::process::AsyncChild>> {
                crate::process::spawn(cmd, stderr)
            }
        }
    };
}

/// The async-std runtime: tasks on async-std's global executor, `async-io` timers and IO, a
/// [`Clock`] for `now`. Cheap to clone.
#[cfg(feature = "async-std")]
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncStdRuntime {
    clock: Clock,
}

#[cfg(feature = "async-std")]
impl AsyncStdRuntime {
    /// A runtime whose clock starts now.
    pub fn new() -> Self {
        AsyncStdRuntime {
            clock: Clock::new(),
        }
    }
}

// Dropping an async-std `JoinHandle` detaches the task.
#[cfg(feature = "async-std")]
async_io_runtime!(AsyncStdRuntime, |fut| drop(async_std::task::spawn(fut)));

/// The smol runtime: detached tasks on smol's global executor (`smol::spawn`), `async-io`
/// timers and IO, a [`Clock`] for `now`. Cheap to clone.
#[cfg(feature = "smol")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolRuntime {
    clock: Clock,
}

#[cfg(feature = "smol")]
impl SmolRuntime {
    /// A runtime whose clock starts now.
    pub fn new() -> Self {
        SmolRuntime {
            clock: Clock::new(),
        }
    }
}

#[cfg(feature = "smol")]
async_io_runtime!(SmolRuntime, |fut| smol::spawn(fut).detach());
