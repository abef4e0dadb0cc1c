//! Cancellation tokens: set when the peer cancels a request (or the connection ends).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

/// A cloneable cancellation flag that can be awaited.
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancellationToken {
    /// A fresh, uncancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the token was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Cancels the token and wakes every waiter.
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::AcqRel) {
            let wakers =
                std::mem::take(&mut *self.inner.wakers.lock().unwrap_or_else(|e| e.into_inner()));
            for w in wakers {
                w.wake();
            }
        }
    }

    /// A future that completes once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            token: self.clone(),
        }
    }

    pub(crate) fn register(&self, waker: &Waker) {
        let mut wakers = self.inner.wakers.lock().unwrap_or_else(|e| e.into_inner());
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }
}

/// Completes when its token is cancelled.
#[derive(Debug)]
pub struct Cancelled {
    token: CancellationToken,
}

impl Future for Cancelled {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        self.token.register(cx.waker());
        if self.token.is_cancelled() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_wakes_waiters() {
        let t = CancellationToken::new();
        let t2 = t.clone();
        let h = std::thread::spawn(move || futures_executor::block_on(t2.cancelled()));
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(!t.is_cancelled());
        t.cancel();
        h.join().unwrap();
        assert!(t.is_cancelled());
        futures_executor::block_on(t.cancelled());
    }
}
