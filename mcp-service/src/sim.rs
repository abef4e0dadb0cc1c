//! A deterministic [`Runtime`] with virtual time, for tests of servers, clients and the engine.
//!
//! [`Sim`] is a single-threaded executor and a clock that only moves when nothing can run:
//! [`Sim::block_on`] polls the future and every spawned task until all of them wait, then jumps
//! the clock to the earliest timer and fires it. A test of a 60-second timeout takes no time,
//! no sleep makes it flaky, and the same test runs the same way every time. Pair it with
//! [`memory::duplex`](crate::memory::duplex) for the transport.
//!
//! ```
//! use mcp_service::sim::Sim;
//! use mcp_service::Runtime;
//! use mcp_proto::Duration;
//!
//! let sim = Sim::new();
//! let rt = sim.runtime();
//! let waited = sim.block_on(async move {
//!     let start = rt.now();
//!     rt.sleep_until(start + Duration::from_secs(3600)).await;
//!     rt.now() - start
//! });
//! assert_eq!(waited, Some(Duration::from_secs(3600)));
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use mcp_proto::Instant;

use crate::runtime::{BoxFuture, Runtime};

/// The executor's state, shared by its runtime handles and wakers.
#[derive(Default)]
struct State {
    /// Virtual time, in microseconds.
    now: u64,
    /// Armed timers by (deadline, sequence number).
    timers: BTreeMap<(u64, u64), Waker>,
    next_timer: u64,
    /// Tasks spawned and not yet taken by the executor.
    spawned: Vec<BoxFuture<()>>,
    /// Tasks woken since they were last polled, by slot.
    ready: VecDeque<usize>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A deterministic executor with virtual time (see the module doc).
#[derive(Default)]
pub struct Sim {
    shared: Arc<Shared>,
    /// Spawned tasks between two `block_on` calls, by slot.
    tasks: Mutex<Vec<Option<Task>>>,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim").field("now", &self.now()).finish()
    }
}

/// The [`Runtime`] of a [`Sim`]: its clock, its timers, and tasks spawned onto it. Cheap to
/// clone.
#[derive(Clone)]
pub struct SimRuntime {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SimRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimRuntime").finish_non_exhaustive()
    }
}

impl Runtime for SimRuntime {
    fn now(&self) -> Instant {
        Instant::from_micros(self.shared.lock().now)
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
        Box::pin(Sleep {
            shared: self.shared.clone(),
            deadline: deadline.as_micros(),
            key: None,
        })
    }

    fn spawn(&self, fut: BoxFuture<()>) {
        self.shared.lock().spawned.push(fut);
    }
}

struct Sleep {
    shared: Arc<Shared>,
    deadline: u64,
    key: Option<(u64, u64)>,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let mut st = self.shared.lock();
        if st.now >= deadline {
            if let Some(key) = self.key {
                st.timers.remove(&key);
            }
            drop(st);
            self.key = None;
            return Poll::Ready(());
        }
        let key = match self.key {
            Some(key) => key,
            None => {
                st.next_timer += 1;
                (deadline, st.next_timer)
            }
        };
        st.timers.insert(key, cx.waker().clone());
        drop(st);
        self.key = Some(key);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.shared.lock().timers.remove(&key);
        }
    }
}

/// Wakes one task: queues its slot once until it is polled again.
struct TaskWaker {
    shared: Arc<Shared>,
    slot: usize,
    queued: AtomicBool,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.shared.lock().ready.push_back(self.slot);
        }
    }
}

struct Task {
    fut: BoxFuture<()>,
    waker: Arc<TaskWaker>,
}

/// The slot of the future given to [`Sim::block_on`].
const MAIN: usize = usize::MAX;

impl Sim {
    /// A new executor; its clock starts at zero.
    pub fn new() -> Self {
        Sim::default()
    }

    /// A runtime handle for the servers and clients under test.
    pub fn runtime(&self) -> SimRuntime {
        SimRuntime {
            shared: self.shared.clone(),
        }
    }

    /// The virtual time.
    pub fn now(&self) -> Instant {
        Instant::from_micros(self.shared.lock().now)
    }

    /// Runs `fut` and every spawned task until `fut` completes, jumping the clock to the next
    /// timer whenever nothing can run. `None` when everything waits and no timer is armed
    /// (a deadlock: nothing could ever wake `fut`). Tasks still running when `fut` completes
    /// are kept and go on at the next `block_on`.
    pub fn block_on<F: Future>(&self, fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let main = Arc::new(TaskWaker {
            shared: self.shared.clone(),
            slot: MAIN,
            queued: AtomicBool::new(false),
        });
        let main_waker = Waker::from(main.clone());
        let mut tasks: Vec<Option<Task>> = std::mem::take(&mut *self.parked());
        let out = 'run: {
            let mut poll_main = true;
            loop {
                if poll_main {
                    poll_main = false;
                    main.queued.store(false, Ordering::Release);
                    if let Poll::Ready(out) =
                        fut.as_mut().poll(&mut Context::from_waker(&main_waker))
                    {
                        break 'run Some(out);
                    }
                }
                // New tasks: give each a slot and poll it once.
                let spawned = std::mem::take(&mut self.shared.lock().spawned);
                for fut in spawned {
                    let slot = tasks
                        .iter()
                        .position(Option::is_none)
                        .unwrap_or(tasks.len());
                    let waker = Arc::new(TaskWaker {
                        shared: self.shared.clone(),
                        slot,
                        queued: AtomicBool::new(true),
                    });
                    let task = Task { fut, waker };
                    if slot == tasks.len() {
                        tasks.push(Some(task));
                    } else if let Some(s) = tasks.get_mut(slot) {
                        *s = Some(task);
                    }
                    self.shared.lock().ready.push_back(slot);
                }
                let next = self.shared.lock().ready.pop_front();
                match next {
                    Some(MAIN) => poll_main = true,
                    Some(slot) => {
                        let Some(entry) = tasks.get_mut(slot) else {
                            continue;
                        };
                        let Some(task) = entry.as_mut() else { continue };
                        task.waker.queued.store(false, Ordering::Release);
                        let waker = Waker::from(task.waker.clone());
                        if task
                            .fut
                            .as_mut()
                            .poll(&mut Context::from_waker(&waker))
                            .is_ready()
                        {
                            *entry = None;
                        }
                    }
                    None => {
                        if !self.shared.lock().spawned.is_empty() {
                            continue;
                        }
                        // Nothing can run: jump to the earliest timer and fire it.
                        let mut st = self.shared.lock();
                        let Some((&(at, seq), _)) = st.timers.iter().next() else {
                            break 'run None;
                        };
                        st.now = st.now.max(at);
                        let waker = st.timers.remove(&(at, seq));
                        drop(st);
                        if let Some(w) = waker {
                            w.wake();
                        }
                    }
                }
            }
        };
        *self.parked() = tasks;
        out
    }

    fn parked(&self) -> MutexGuard<'_, Vec<Option<Task>>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}
