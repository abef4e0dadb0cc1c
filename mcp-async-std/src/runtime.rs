//! The `mcp_service::Runtime`s of async-std and smol. Both time with `async-io` timers, so a
//! connection's timers work whichever executor polls it.

use mcp_proto::Instant;
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

/// The async-std runtime: tasks on async-std's global executor, `async-io` timers, a
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

#[cfg(feature = "async-std")]
impl mcp_service::Runtime for AsyncStdRuntime {
    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        sleep_until(&self.clock, deadline)
    }

    fn spawn(&self, fut: BoxFuture<()>) {
        // Dropping an async-std `JoinHandle` detaches the task.
        drop(async_std::task::spawn(fut));
    }
}

/// The smol runtime: detached tasks on smol's global executor (`smol::spawn`), `async-io`
/// timers, a [`Clock`] for `now`. Cheap to clone.
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
impl mcp_service::Runtime for SmolRuntime {
    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        sleep_until(&self.clock, deadline)
    }

    fn spawn(&self, fut: BoxFuture<()>) {
        smol::spawn(fut).detach();
    }
}
