//! [`Notifications`]: a bounded stream of what the peer announced, for an application that may
//! not read it.
//!
//! Each subscriber ([`Client::notifications`](crate::Client::notifications),
//! [`Client::log_messages`](crate::Client::log_messages),
//! [`Client::subscribe`](crate::Client::subscribe),
//! [`Telemetry::subscribe`](crate::Telemetry::subscribe)) gets its own queue of at most [`Notifications::capacity`]
//! items. When it is full the oldest item is dropped and counted ([`Notifications::dropped`]):
//! an application that never reads costs a fixed amount of memory, and the connection is never
//! held up by it. The stream ends once its sender is gone (the connection closed) and the queue
//! is drained.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::task::AtomicWaker;

/// The default number of items a [`Notifications`] queue holds.
pub const DEFAULT_CAPACITY: usize = 1024;

struct Queue<T> {
    items: VecDeque<T>,
    dropped: u64,
    closed: bool,
}

struct Shared<T> {
    queue: Mutex<Queue<T>>,
    waker: AtomicWaker,
    capacity: usize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bounded stream of notifications (see the module doc). Drop it to unsubscribe.
pub struct Notifications<T> {
    shared: Arc<Shared<T>>,
}

/// The sending half of a [`Notifications`] queue.
pub(crate) struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A queue of `capacity` items (at least one).
pub(crate) fn channel<T>(capacity: usize) -> (Sender<T>, Notifications<T>) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            items: VecDeque::new(),
            dropped: 0,
            closed: false,
        }),
        waker: AtomicWaker::new(),
        capacity: capacity.max(1),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Notifications { shared },
    )
}

impl<T> Sender<T> {
    /// Queues `item`, dropping the oldest when full. `false` once the receiver is gone (the
    /// subscriber can be forgotten).
    pub(crate) fn send(&self, item: T) -> bool {
        if Arc::strong_count(&self.shared) < 2 {
            return false;
        }
        {
            let mut q = self.shared.lock();
            if q.items.len() >= self.shared.capacity {
                q.items.pop_front();
                q.dropped += 1;
            }
            q.items.push_back(item);
        }
        self.shared.waker.wake();
        true
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.waker.wake();
    }
}

impl<T> Notifications<T> {
    /// How many items were dropped, oldest first, because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.shared.lock().dropped
    }

    /// How many items the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// How many items wait to be read.
    pub fn len(&self) -> usize {
        self.shared.lock().items.len()
    }

    /// Whether no item waits to be read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next item; `None` once the connection closed and every item was read. (The same as
    /// the [`Stream`] impl, with no stream combinators needed.)
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// The next item if one waits, without waiting.
    pub fn try_next(&mut self) -> Option<T> {
        self.shared.lock().items.pop_front()
    }
}

impl<T> Stream for Notifications<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut q = self.shared.lock();
        if let Some(item) = q.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if q.closed {
            return Poll::Ready(None);
        }
        drop(q);
        self.shared.waker.register(cx.waker());
        let mut q = self.shared.lock();
        match q.items.pop_front() {
            Some(item) => Poll::Ready(Some(item)),
            None if q.closed => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

impl<T> Unpin for Notifications<T> {}

impl<T> std::fmt::Debug for Notifications<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = self.shared.lock();
        f.debug_struct("Notifications")
            .field("queued", &q.items.len())
            .field("dropped", &q.dropped)
            .field("capacity", &self.shared.capacity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::channel;
    use futures_util::StreamExt;

    #[test]
    fn a_reader_that_never_reads_costs_the_capacity_and_counts_the_rest() {
        let (tx, mut rx) = channel(8);
        for i in 0..100_000u32 {
            assert!(tx.send(i));
        }
        assert_eq!(rx.len(), 8);
        assert_eq!(rx.dropped(), 100_000 - 8);
        drop(tx);
        let rest: Vec<u32> = futures_executor::block_on(rx.by_ref().collect());
        assert_eq!(rest, (100_000 - 8..100_000).collect::<Vec<_>>());
    }

    #[test]
    fn the_stream_ends_when_the_sender_goes_and_the_sender_sees_a_gone_reader() {
        let (tx, rx) = channel::<u8>(4);
        drop(rx);
        assert!(!tx.send(1));
        let (tx, mut rx) = channel::<u8>(4);
        tx.send(7);
        drop(tx);
        assert_eq!(futures_executor::block_on(rx.next()), Some(7));
        assert_eq!(futures_executor::block_on(rx.next()), None);
    }

    #[test]
    fn a_waiting_reader_is_woken() {
        let (tx, mut rx) = channel::<u8>(4);
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            tx.send(3);
        });
        assert_eq!(futures_executor::block_on(rx.next()), Some(3));
        t.join().unwrap();
    }
}
