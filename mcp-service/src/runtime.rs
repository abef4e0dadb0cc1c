//! What a driver supplies: a clock, timers and a way to spawn tasks.
//!
//! The typed layer contains no runtime types; `mcp-tokio` and `mcp-async-std` implement
//! [`Runtime`] and hand it in.

use std::future::Future;
use std::pin::Pin;

use mcp_proto::Instant;

/// A boxed, `Send` future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A runtime: a monotonic clock, timers and task spawning.
pub trait Runtime: Clone + Send + Sync + Unpin + 'static {
    /// The current time, in microseconds since an epoch of the runtime's choosing.
    fn now(&self) -> Instant;
    /// A future that completes at `deadline`.
    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()>;
    /// Runs `fut` to completion in the background.
    fn spawn(&self, fut: BoxFuture<()>);
}

/// A monotonic clock whose epoch is its creation, for [`Runtime::now`] implementations.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Self {
        Clock {
            epoch: std::time::Instant::now(),
        }
    }

    /// Microseconds since the clock's creation.
    pub fn now(&self) -> Instant {
        Instant::from_micros(u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// The `std` instant of a core [`Instant`] on this clock.
    pub fn to_std(&self, at: Instant) -> std::time::Instant {
        self.epoch + std::time::Duration::from_micros(at.as_micros())
    }
}
