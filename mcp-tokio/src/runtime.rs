//! [`TokioRuntime`]: the `mcp_service::Runtime` of a tokio runtime, and its
//! [`Driver`](mcp_service::driver::Driver) (TCP through tokio's reactor).

use std::io;
use std::net::SocketAddr;

use mcp_proto::Instant;
use mcp_service::driver::{self, Driver, Incoming};
use mcp_service::{BoxFuture, Clock, Runtime};
use tokio::runtime::Handle;
use tokio_util::compat::{Compat, TokioAsyncReadCompatExt};

/// Timers further out than this are armed at this distance (and re-armed when they fire):
/// keeps far deadlines clear of `Instant` overflow and tokio's timer-wheel range.
const MAX_SLEEP_MICROS: u64 = 24 * 60 * 60 * 1_000_000;

/// The runtime of one tokio runtime: a [`Clock`] for `now`, tokio timers, `spawn` on the
/// runtime's [`Handle`], and its TCP, stdio and child processes. Cheap to clone.
///
/// Every function of this crate that needs a runtime takes it as its first argument:
///
/// ```no_run
/// # #[cfg(feature = "stdio")]
/// # async fn run() -> Result<(), mcp_tokio::Error> {
/// use mcp_tokio::{Server, TokioRuntime};
///
/// let server = Server::builder("my-server", "1.0").build();
/// mcp_tokio::serve_stdio(TokioRuntime::current(), server).await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TokioRuntime {
    handle: Handle,
    clock: Clock,
}

impl TokioRuntime {
    /// The runtime of `handle`. Its clock starts now.
    pub fn new(handle: Handle) -> Self {
        TokioRuntime {
            handle,
            clock: Clock::new(),
        }
    }

    /// The runtime of the tokio runtime this is called from.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (as [`Handle::current`]).
    pub fn current() -> Self {
        TokioRuntime::new(Handle::current())
    }

    /// The tokio handle tasks are spawned on.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl From<Handle> for TokioRuntime {
    fn from(handle: Handle) -> Self {
        TokioRuntime::new(handle)
    }
}

impl Runtime for TokioRuntime {
    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        let cap = self
            .clock
            .now()
            .as_micros()
            .saturating_add(MAX_SLEEP_MICROS);
        let at = self
            .clock
            .to_std(Instant::from_micros(deadline.as_micros().min(cap)));
        // Timers register with the runtime's driver on creation: enter it, so that this also
        // works when polled outside the runtime's threads.
        let _guard = self.handle.enter();
        Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(at)))
    }

    fn spawn(&self, fut: BoxFuture<()>) {
        drop(self.handle.spawn(fut));
    }

    /// On a multi-threaded runtime handlers run on tasks of their own, so a busy one delays
    /// only itself. A current-thread runtime runs every task on one thread: a handler would
    /// share it with its connection either way, so it is polled on the connection's task
    /// (no spawn, no hand-over per request), where one that yields still leaves the
    /// connection and every other one served.
    fn spawns_handlers(&self) -> bool {
        !matches!(
            self.handle.runtime_flavor(),
            tokio::runtime::RuntimeFlavor::CurrentThread
        )
    }
}

impl Driver for TokioRuntime {
    type TcpListener = tokio::net::TcpListener;
    type TcpStream = Compat<tokio::net::TcpStream>;

    fn local_addr(&self, listener: &Self::TcpListener) -> io::Result<SocketAddr> {
        listener.local_addr()
    }

    fn incoming(&self, listener: Self::TcpListener) -> io::Result<Incoming<Self::TcpStream>> {
        Ok(driver::incoming(move |cx| {
            listener.poll_accept(cx).map_ok(|(stream, addr)| {
                let _ = stream.set_nodelay(true);
                (stream.compat(), addr)
            })
        }))
    }

    fn resolve(&self, host: &str, port: u16) -> BoxFuture<io::Result<Vec<std::net::SocketAddr>>> {
        let host = host.to_owned();
        let _guard = self.handle.enter();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    }

    fn connect_tcp(&self, host: &str, port: u16) -> BoxFuture<io::Result<Self::TcpStream>> {
        let host = host.to_owned();
        let _guard = self.handle.enter();
        Box::pin(async move {
            let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
            let _ = stream.set_nodelay(true);
            Ok(stream.compat())
        })
    }

    /// hyper reads straight into its own (uninitialised) buffer, through tokio's `ReadBuf`.
    #[cfg(any(feature = "http-server", feature = "http-client", feature = "ws"))]
    fn hyper_io(stream: Self::TcpStream) -> mcp_service::hyper_io::BoxedIo {
        Box::new(crate::hyper_io::TokioHyperIo(stream.into_inner()))
    }
}
