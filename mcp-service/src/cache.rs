//! The client's response cache (2026-07-28): list results (`tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list`) and `resources/read` results carry `ttlMs`
//! and `cacheScope`, and so do the skills extension's `skills/list` and `skills/get`; a client
//! keeps them for `ttlMs` and answers the same request from the cache meanwhile. A list-changed
//! notification drops that list's pages (`notifications/resources/list_changed` the skills'
//! results too: skill files are resources, and a server whose skills change says so with it),
//! and `notifications/resources/updated` drops the resource's contents.
//!
//! Each result is kept for its own hints: a server may give one result other hints than the
//! rest of its list or resources (a resource handler's
//! [`ToolContext::cache_hints`](crate::server::HandlerContext::cache_hints)), and a
//! result with `ttlMs: 0` or without hints is not kept.
//!
//! The cache is on by default, in memory and bounded ([`MemoryResponseStore`]);
//! [`ClientOptions::response_cache`](crate::ClientOptions::response_cache) replaces the store
//! (one shared by several clients sees only `public` entries under shared keys: `private`
//! ones are keyed by client) and `ClientOptions::no_response_cache` turns it off.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use mcp_proto::Instant;
use mcp_proto::schema::CacheScope;
use serde_json::value::RawValue;

/// Where a client keeps cached results. Keys are opaque strings the client builds (the
/// method, the cursor or URI, and for `private` entries an id of the client).
pub trait ResponseStore: Send + Sync + 'static {
    /// The entry under `key`, if it has not expired at `now`.
    fn get(&self, key: &str, now: Instant) -> Option<Box<RawValue>>;
    /// Keeps `value` under `key` until `expires`.
    fn put(&self, key: String, value: Box<RawValue>, expires: Instant, scope: CacheScope);
    /// Drops every entry whose key starts with `prefix` (every entry for `""`).
    fn invalidate(&self, prefix: &str);
}

/// The in-memory [`ResponseStore`]: at most `max_entries` entries and `max_bytes` bytes of
/// results; the oldest go first.
#[derive(Debug)]
pub struct MemoryResponseStore {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, (Box<RawValue>, Instant)>,
    order: VecDeque<String>,
    bytes: usize,
}

impl MemoryResponseStore {
    /// A store of at most `max_entries` results and `max_bytes` bytes.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        MemoryResponseStore {
            max_entries,
            max_bytes,
            inner: Mutex::new(Entries::default()),
        }
    }
}

impl Default for MemoryResponseStore {
    /// 256 results, 8 MiB.
    fn default() -> Self {
        MemoryResponseStore::new(256, 8 << 20)
    }
}

impl Entries {
    fn remove(&mut self, key: &str) {
        if let Some((v, _)) = self.map.remove(key) {
            self.bytes -= v.get().len();
            self.order.retain(|k| k != key);
        }
    }
}

impl ResponseStore for MemoryResponseStore {
    fn get(&self, key: &str, now: Instant) -> Option<Box<RawValue>> {
        let mut e = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match e.map.get(key) {
            Some((v, expires)) if *expires > now => Some(v.clone()),
            Some(_) => {
                e.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&self, key: String, value: Box<RawValue>, expires: Instant, _scope: CacheScope) {
        let size = value.get().len();
        if size > self.max_bytes || self.max_entries == 0 {
            return;
        }
        let mut e = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        e.remove(&key);
        while e.map.len() >= self.max_entries || e.bytes + size > self.max_bytes {
            let Some(old) = e.order.pop_front() else {
                break;
            };
            if let Some((v, _)) = e.map.remove(&old) {
                e.bytes -= v.get().len();
            }
        }
        e.bytes += size;
        e.order.push_back(key.clone());
        e.map.insert(key, (value, expires));
    }

    fn invalidate(&self, prefix: &str) {
        let mut e = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let gone: Vec<String> = e
            .map
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for k in gone {
            e.remove(&k);
        }
    }
}

/// The cache hints of a result.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hints {
    ttl_ms: Option<u64>,
    cache_scope: Option<CacheScope>,
}

/// A client's use of a [`ResponseStore`].
#[derive(Clone)]
pub(crate) struct ResponseCache {
    pub(crate) store: std::sync::Arc<dyn ResponseStore>,
    /// Namespaces this client's `private` entries.
    pub(crate) client_id: String,
}

impl ResponseCache {
    /// The key of `method` with `param` (a cursor or URI); `private` keys carry the client.
    fn key(&self, method: &str, param: &str, scope: CacheScope) -> String {
        match scope {
            CacheScope::Public => format!("{method}\n{param}\n"),
            _ => format!("{method}\n{param}\n{}", self.client_id),
        }
    }

    /// A cached result of `method` with `param`, private or public.
    pub(crate) fn get(&self, method: &str, param: &str, now: Instant) -> Option<Box<RawValue>> {
        self.store
            .get(&self.key(method, param, CacheScope::Private), now)
            .or_else(|| {
                self.store
                    .get(&self.key(method, param, CacheScope::Public), now)
            })
    }

    /// Keeps `result` as its hints say (nothing without a positive `ttlMs`).
    pub(crate) fn put(&self, method: &str, param: &str, result: &RawValue, now: Instant) {
        let Ok(h) = serde_json::from_str::<Hints>(result.get()) else {
            return;
        };
        let Some(ttl) = h.ttl_ms.filter(|t| *t > 0) else {
            return;
        };
        let scope = h.cache_scope.unwrap_or(CacheScope::Private);
        let expires = now + mcp_proto::Duration::from_millis(ttl);
        self.store.put(
            self.key(method, param, scope),
            result.to_owned(),
            expires,
            scope,
        );
    }

    /// Drops every cached result.
    pub(crate) fn clear(&self) {
        self.store.invalidate("");
    }

    /// Drops every cached result of `method` (with `param`, when given).
    pub(crate) fn invalidate(&self, method: &str, param: Option<&str>) {
        // Both the public and the private key of an entry start with `method\nparam\n`.
        match param {
            Some(p) => self.store.invalidate(&format!("{method}\n{p}\n")),
            None => self.store.invalidate(&format!("{method}\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.into()).unwrap()
    }

    #[test]
    fn entries_expire_and_the_store_is_bounded() {
        let store = MemoryResponseStore::new(2, 1 << 20);
        let t0 = Instant::from_micros(0);
        let later = Instant::from_micros(10_000_000);
        store.put("a".into(), raw("1"), later, CacheScope::Private);
        assert!(store.get("a", t0).is_some());
        assert!(store.get("a", later).is_none(), "expired");
        store.put("a".into(), raw("1"), later, CacheScope::Private);
        store.put("b".into(), raw("2"), later, CacheScope::Private);
        store.put("c".into(), raw("3"), later, CacheScope::Private);
        assert!(store.get("a", t0).is_none(), "the oldest went");
        assert!(store.get("c", t0).is_some());
        let small = MemoryResponseStore::new(10, 4);
        small.put("x".into(), raw("12345"), later, CacheScope::Private);
        assert!(small.get("x", t0).is_none(), "bigger than the store");
    }

    #[test]
    fn each_result_is_kept_for_its_own_hints() {
        let cache = ResponseCache {
            store: std::sync::Arc::new(MemoryResponseStore::default()),
            client_id: "c1".into(),
        };
        let other = ResponseCache {
            store: cache.store.clone(),
            client_id: "c2".into(),
        };
        let t0 = Instant::from_micros(0);
        let at = |ms: u64| t0 + mcp_proto::Duration::from_millis(ms);
        // Two reads of one method, each with the hints its handler chose.
        cache.put(
            "resources/read",
            "a",
            &raw(r#"{"contents":[],"ttlMs":1000,"cacheScope":"private"}"#),
            t0,
        );
        cache.put(
            "resources/read",
            "b",
            &raw(r#"{"contents":[],"ttlMs":60000,"cacheScope":"public"}"#),
            t0,
        );
        cache.put(
            "resources/read",
            "c",
            &raw(r#"{"contents":[],"ttlMs":0,"cacheScope":"public"}"#),
            t0,
        );
        assert!(cache.get("resources/read", "a", at(999)).is_some());
        assert!(cache.get("resources/read", "a", at(1000)).is_none());
        assert!(cache.get("resources/read", "b", at(1000)).is_some());
        assert!(cache.get("resources/read", "b", at(60_000)).is_none());
        assert!(cache.get("resources/read", "c", t0).is_none());
        // The scope is the result's own too: only the public one is shared.
        cache.put(
            "resources/read",
            "a",
            &raw(r#"{"contents":[],"ttlMs":1000,"cacheScope":"private"}"#),
            t0,
        );
        cache.put(
            "resources/read",
            "b",
            &raw(r#"{"contents":[],"ttlMs":1000,"cacheScope":"public"}"#),
            t0,
        );
        assert!(other.get("resources/read", "a", t0).is_none());
        assert!(other.get("resources/read", "b", t0).is_some());
    }

    #[test]
    fn hints_decide_and_invalidation_drops() {
        let cache = ResponseCache {
            store: std::sync::Arc::new(MemoryResponseStore::default()),
            client_id: "c1".into(),
        };
        let t0 = Instant::from_micros(0);
        cache.put(
            "tools/list",
            "",
            &raw(r#"{"tools":[],"ttlMs":1000,"cacheScope":"public"}"#),
            t0,
        );
        cache.put(
            "resources/read",
            "u",
            &raw(r#"{"contents":[],"ttlMs":1000}"#),
            t0,
        );
        cache.put("prompts/list", "", &raw(r#"{"prompts":[],"ttlMs":0}"#), t0);
        assert!(cache.get("tools/list", "", t0).is_some());
        assert!(cache.get("resources/read", "u", t0).is_some());
        assert!(cache.get("prompts/list", "", t0).is_none(), "ttlMs 0");
        // Another client sharing the store sees the public entry only.
        let other = ResponseCache {
            store: cache.store.clone(),
            client_id: "c2".into(),
        };
        assert!(other.get("tools/list", "", t0).is_some());
        assert!(other.get("resources/read", "u", t0).is_none());
        cache.invalidate("tools/list", None);
        assert!(cache.get("tools/list", "", t0).is_none());
        cache.put(
            "resources/read",
            "u2",
            &raw(r#"{"contents":[],"ttlMs":1000}"#),
            t0,
        );
        cache.invalidate("resources/read", Some("u"));
        assert!(cache.get("resources/read", "u", t0).is_none());
        assert!(
            cache.get("resources/read", "u2", t0).is_some(),
            "only that resource"
        );
        // A gap in the client's listen stream forgets everything.
        cache.clear();
        assert!(cache.get("resources/read", "u2", t0).is_none());
    }
}
