//! Requests this side sent and waits for: the waiter table, by wire id and by caller key.

use std::borrow::Cow;
use std::collections::HashMap;

use futures_channel::oneshot;
use mcp_proto::{Error, Instant, RequestId};
use serde_json::value::RawValue;

use super::inbound::Tracked;
use crate::peer::{Progress, ProgressFn};
use crate::telemetry::Direction;

/// A map keyed by ids this side assigned (outbound request ids, caller keys): a multiply-rotate
/// hash instead of SipHash. The peer cannot choose what goes in, so there is no flooding to
/// defend against, and a lookup with a peer-chosen id only misses.
pub(crate) type OwnIdMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<OwnIdHasher>>;

/// The hasher of [`OwnIdMap`] (the FxHash step: rotate, xor, multiply).
#[derive(Default, Clone, Copy)]
pub(crate) struct OwnIdHasher(u64);

impl OwnIdHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for OwnIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word.get_mut(..chunk.len())
                .unwrap_or_default()
                .copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_u128(&mut self, n: u128) {
        self.add(n as u64);
        self.add((n >> 64) as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }
    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Requests sent to the peer and waiting for their outcome, by wire id and by caller key
/// .
#[derive(Default)]
pub(crate) struct Outbound {
    waiters: OwnIdMap<RequestId, Waiter>,
    keys: OwnIdMap<u64, RequestId>,
}

impl Outbound {
    /// Tracks a request the session accepted (`sent` is its id) for caller `key`, and returns
    /// its span; a refusal goes straight back to the caller.
    pub(crate) fn sent(
        &mut self,
        sent: Result<RequestId, Error>,
        key: u64,
        method: Cow<'static, str>,
        reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
        progress: Option<ProgressFn>,
        now: Instant,
    ) -> Option<&tracing::Span> {
        let id = match sent {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Err(e));
                return None;
            }
        };
        let tracked = Tracked::new(method, Direction::Outbound, &id, now);
        self.keys.insert(key, id.clone());
        let waiter = Waiter {
            key,
            tracked,
            reply,
            progress,
        };
        Some(
            &self
                .waiters
                .entry(id)
                .insert_entry(waiter)
                .into_mut()
                .tracked
                .span,
        )
    }

    /// Caller `key` gave up: its request's id, and its waiter if still waiting.
    pub(crate) fn cancel(&mut self, key: u64) -> Option<(RequestId, Option<Waiter>)> {
        let id = self.keys.remove(&key)?;
        let waiter = self.waiters.remove(&id);
        Some((id, waiter))
    }

    /// The outcome of `id` arrived: its waiter.
    pub(crate) fn finish(&mut self, id: &RequestId) -> Option<Waiter> {
        let waiter = self.waiters.remove(id)?;
        self.keys.remove(&waiter.key);
        Some(waiter)
    }

    /// Progress on `id`, to its callback.
    pub(crate) fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Box<RawValue>>,
    ) {
        if let Some(f) = self.waiters.get_mut(id).and_then(|w| w.progress.as_mut()) {
            f(Progress {
                progress,
                total,
                message,
                meta,
            });
        }
    }

    /// Every request still waiting (the session ended).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (RequestId, Waiter)> + '_ {
        self.keys.clear();
        self.waiters.drain()
    }
}

/// A request sent to the peer, waiting for its outcome .
pub(crate) struct Waiter {
    pub(crate) key: u64,
    pub(crate) tracked: Tracked,
    pub(crate) reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
    pub(crate) progress: Option<ProgressFn>,
}
