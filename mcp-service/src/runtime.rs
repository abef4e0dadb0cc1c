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
    /// Whether request handlers run on tasks of their own ([`spawn`](Self::spawn)), so that
    /// a handler slow to yield delays only itself. `false` polls them on their connection's
    /// task instead: for a runtime whose `spawn` does not run tasks concurrently with the
    /// caller, or a deterministic test runtime. The default is `true`.
    fn spawns_handlers(&self) -> bool {
        true
    }
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

/// One timer following a sans-IO deadline (a session's or an endpoint's `poll_timeout`).
///
/// A timer armed earlier than needed is kept (it fires, `handle_timeout` finds nothing due,
/// and the next deadline is armed then) rather than re-armed: requests made one after
/// another each move the deadline a little further out, and re-arming for every request costs
/// a timer registration (on `async-io`, a reactor wake-up) per request.
#[derive(Default)]
pub(crate) struct DeadlineTimer {
    armed: Option<(Instant, BoxFuture<()>)>,
}

impl DeadlineTimer {
    /// Arms for `deadline` unless a timer no later than it is armed, and polls the timer.
    /// Returns the current time when it fired (call `handle_timeout` with it).
    pub(crate) fn poll<R: Runtime>(
        &mut self,
        rt: &R,
        deadline: Option<Instant>,
        cx: &mut std::task::Context<'_>,
    ) -> Option<Instant> {
        if let Some(deadline) = deadline
            && self.armed.as_ref().is_none_or(|(at, _)| *at > deadline)
        {
            self.armed = Some((deadline, rt.sleep_until(deadline)));
        }
        let (_, sleep) = self.armed.as_mut()?;
        if sleep.as_mut().poll(cx).is_ready() {
            self.armed = None;
            return Some(rt.now());
        }
        None
    }
}
