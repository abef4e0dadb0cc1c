//! Storage of sent SSE events for resumption after `Last-Event-ID`.
//!
//! Each session owns one [`EventStore`]. The endpoint numbers the streams of a session and the
//! events of each stream (`1, 2, 3, …`; the event id on the wire is `<stream>-<seq>`), stores
//! every JSON-RPC message it puts on an SSE stream, and asks the store to replay a stream after
//! a sequence number when a client reconnects. A store keeps memory bounded by evicting its
//! oldest events; the endpoint notices a hole in a replay and counts it.

use alloc::boxed::Box;
use alloc::collections::VecDeque;

/// A bounded store of the events of one session's SSE streams.
pub trait EventStore: Send {
    /// Keeps `data` (one JSON-RPC message) as event `seq` of stream `stream`. Sequence numbers
    /// of a stream arrive in increasing order. The store may evict older events, of any stream,
    /// to stay within its bounds, always oldest first.
    fn store(&mut self, stream: u64, seq: u64, data: &[u8]);

    /// Calls `each(seq, data)` for every retained event of `stream` whose sequence number is
    /// greater than `after`, in increasing order.
    fn replay(&self, stream: u64, after: u64, each: &mut dyn FnMut(u64, &[u8]));

    /// Stream `stream` is complete: the last event stored for it was its last (the answer
    /// of the POST it carried). The memory store ignores it; a store shared with other
    /// instances records it, so that one resuming the stream there knows to end it.
    fn end(&mut self, stream: u64) {
        let _ = stream;
    }

    /// Stream `stream` (a POST's) was delivered whole: it is complete ([`end`](Self::end)
    /// came before) and its reply body, answer included, was pulled to its end by the
    /// driver. Only a client whose connection broke after that could still resume it. The
    /// memory store drops its events, so that a session's memory does not grow with every
    /// answer it ever sent (such a late resumption then gets an empty stream); the default
    /// keeps them.
    fn forget(&mut self, stream: u64) {
        let _ = stream;
    }

    /// Whether [`forget`](Self::forget) drops a delivered stream's events (the memory store
    /// does; the default is `false`). The endpoint then keeps the answer that ends a POST's
    /// SSE stream out of the store while it waits in its reply body: it stores it when the
    /// driver does not pull it (the client went away, resumed the stream first, or the server
    /// closed the stream), and otherwise never copies it only to forget it. The stream is then
    /// delivered (and forgotten) when the driver pulls the answer with the last of its body,
    /// rather than at the body's end just after.
    fn forgets_delivered(&self) -> bool {
        false
    }

    /// Its session has been idle for a while: the store may give back room it keeps for
    /// events it no longer holds (the memory store does). The default does nothing.
    fn shed(&mut self) {}

    /// Number of events retained.
    fn len(&self) -> usize;

    /// Whether nothing is retained.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of message data retained.
    fn bytes(&self) -> usize;

    /// The stream and sequence number of the oldest event retained, if any. The endpoint
    /// uses it, with [`evict_oldest`](Self::evict_oldest), to keep the events of all sessions
    /// within [`EndpointConfig::max_stored_events_total`](super::EndpointConfig::max_stored_events_total)
    /// and [`max_stored_bytes_total`](super::EndpointConfig::max_stored_bytes_total). The
    /// default (`None`) opts the store out of those totals.
    fn oldest(&self) -> Option<(u64, u64)> {
        None
    }

    /// Drops the oldest event retained; `false` when there is none or the store cannot (the
    /// default).
    fn evict_oldest(&mut self) -> bool {
        false
    }
}

#[derive(Debug)]
struct Stored {
    stream: u64,
    seq: u64,
    data: Box<[u8]>,
}

/// The default store: the newest events in memory, at most `max_events` of them and at most
/// `max_bytes` bytes of data (an event larger than `max_bytes` is not kept).
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events: usize,
    max_bytes: usize,
    events: VecDeque<Stored>,
    bytes: usize,
}

impl MemoryEventStore {
    /// A store bounded by `max_events` events and `max_bytes` bytes.
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        MemoryEventStore {
            max_events,
            max_bytes,
            events: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl EventStore for MemoryEventStore {
    fn store(&mut self, stream: u64, seq: u64, data: &[u8]) {
        if self.max_events == 0 || data.len() > self.max_bytes {
            return;
        }
        while self.events.len() >= self.max_events
            || self.bytes.saturating_add(data.len()) > self.max_bytes
        {
            let Some(old) = self.events.pop_front() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(old.data.len());
        }
        self.bytes = self.bytes.saturating_add(data.len());
        self.events.push_back(Stored {
            stream,
            seq,
            data: Box::from(data),
        });
    }

    fn replay(&self, stream: u64, after: u64, each: &mut dyn FnMut(u64, &[u8])) {
        for e in &self.events {
            if e.stream == stream && e.seq > after {
                each(e.seq, &e.data);
            }
        }
    }

    fn forget(&mut self, stream: u64) {
        let mut freed = 0;
        self.events.retain(|e| {
            let keep = e.stream != stream;
            if !keep {
                freed += e.data.len();
            }
            keep
        });
        self.bytes = self.bytes.saturating_sub(freed);
    }

    fn forgets_delivered(&self) -> bool {
        true
    }

    fn shed(&mut self) {
        if self.events.is_empty() {
            self.events = VecDeque::new();
        }
    }

    fn len(&self) -> usize {
        self.events.len()
    }

    fn bytes(&self) -> usize {
        self.bytes
    }

    fn oldest(&self) -> Option<(u64, u64)> {
        self.events.front().map(|e| (e.stream, e.seq))
    }

    fn evict_oldest(&mut self) -> bool {
        let Some(old) = self.events.pop_front() else {
            return false;
        };
        self.bytes = self.bytes.saturating_sub(old.data.len());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn replayed(s: &MemoryEventStore, stream: u64, after: u64) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        s.replay(stream, after, &mut |seq, d| out.push((seq, d.to_vec())));
        out
    }

    #[test]
    fn bounded_by_count_and_bytes_oldest_first() {
        let mut s = MemoryEventStore::new(3, 10);
        s.store(1, 1, b"aaa");
        s.store(2, 1, b"bbb");
        s.store(1, 2, b"ccc");
        assert_eq!((s.len(), s.bytes()), (3, 9));
        s.store(1, 3, b"d");
        assert_eq!(
            (s.len(), s.bytes()),
            (3, 7),
            "count bound evicts the oldest"
        );
        assert_eq!(
            replayed(&s, 1, 0),
            [(2, b"ccc".to_vec()), (3, b"d".to_vec())]
        );
        s.store(2, 2, b"eeeeeeee");
        assert_eq!((s.len(), s.bytes()), (2, 9), "byte bound evicts too");
        s.store(3, 1, b"way too large");
        assert_eq!(s.len(), 2, "an event above the byte bound is not kept");
        assert_eq!(replayed(&s, 1, 2), [(3, b"d".to_vec())]);
        assert!(replayed(&s, 9, 0).is_empty());
    }

    #[test]
    fn the_oldest_event_can_be_evicted_from_outside() {
        let mut s = MemoryEventStore::new(10, 100);
        assert_eq!(s.oldest(), None);
        assert!(!s.evict_oldest());
        s.store(1, 1, b"aa");
        s.store(2, 1, b"bbb");
        assert_eq!(s.oldest(), Some((1, 1)));
        assert!(s.evict_oldest());
        assert_eq!((s.oldest(), s.len(), s.bytes()), (Some((2, 1)), 1, 3));
    }

    #[test]
    fn a_forgotten_stream_is_dropped_and_the_others_kept() {
        let mut s = MemoryEventStore::new(10, 100);
        s.store(1, 1, b"aa");
        s.store(2, 1, b"bbb");
        s.store(1, 2, b"cccc");
        s.store(3, 1, b"d");
        s.forget(1);
        assert_eq!((s.len(), s.bytes()), (2, 4));
        assert!(replayed(&s, 1, 0).is_empty());
        assert_eq!(replayed(&s, 2, 0), [(1, b"bbb".to_vec())]);
        assert_eq!(s.oldest(), Some((2, 1)));
        s.forget(9);
        assert_eq!(
            (s.len(), s.bytes()),
            (2, 4),
            "an unknown stream changes nothing"
        );
        s.forget(2);
        s.forget(3);
        assert!(s.is_empty());
        assert_eq!(s.bytes(), 0);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut s = MemoryEventStore::new(0, 100);
        s.store(1, 1, b"x");
        assert!(s.is_empty());
    }
}
