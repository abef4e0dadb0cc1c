//! The contract every store implementation must keep, as a test suite to run against it.
//!
//! Each function exercises one trait of a store and returns `Err` naming the first property
//! that failed. Names are drawn at random, so runs against one shared backend do not collide.
//! The [`limits`] suite needs a store built with [`contract_limits`] (small limits and short
//! lifetimes) and waits for real time on runtimes whose clock is real.
//!
//! ```
//! use mcp_service::cluster::{MemoryStores, contract};
//!
//! let sim = mcp_service::sim::Sim::new();
//! let rt = sim.runtime();
//! let store = MemoryStores::new(contract::contract_limits(), rt.clone());
//! sim.block_on(async move {
//!     contract::session_store(&store, &rt).await.unwrap();
//!     contract::event_log(&store, &rt).await.unwrap();
//!     contract::bus(&store, &store.clone(), &rt).await.unwrap();
//!     contract::key_store(&store, &store.clone()).await.unwrap();
//!     contract::limits(&store, &store, &rt).await.unwrap();
//! })
//! .unwrap();
//! ```

use std::time::Duration;

use futures_util::StreamExt;

use super::{
    Bus, BusMessage, EventLog, KeyStore, LogEntry, SessionRecord, SessionStore, StoreLimits,
};
use crate::Runtime;

/// The limits the [`limits`] suite expects the store under test to have been built with.
pub fn contract_limits() -> StoreLimits {
    StoreLimits::default()
        .max_events_per_stream(4)
        .max_event_bytes(1024)
        .event_ttl(Duration::from_millis(1500))
        .max_subscriptions(3)
        .max_record_bytes(4096)
}

type Outcome = Result<(), String>;

fn check(ok: bool, what: &str) -> Outcome {
    if ok { Ok(()) } else { Err(what.to_owned()) }
}

fn fail(what: &str) -> impl FnOnce(crate::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn unique(prefix: &str) -> String {
    let mut b = [0u8; 8];
    let n = match getrandom::fill(&mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => 0,
    };
    format!("{prefix}-{n:016x}")
}

async fn sleep<R: Runtime>(rt: &R, d: Duration) {
    rt.sleep_until(rt.now() + mcp_proto::Duration::from(d))
        .await;
}

fn record(name: &str) -> SessionRecord {
    SessionRecord {
        version: "2025-11-25".into(),
        client_info: format!(r#"{{"name":"{name}","version":"1"}}"#),
        client_capabilities: r#"{"roots":{}}"#.into(),
        owner: Some("iss|sub|client".into()),
        subscriptions: Default::default(),
        log_level: None,
    }
}

fn event(session: &str, stream: u64, seq: u64, data: &str) -> LogEntry {
    LogEntry::Event {
        session: session.to_owned(),
        stream,
        seq,
        data: bytes::Bytes::copy_from_slice(data.as_bytes()),
    }
}

/// [`SessionStore`]: records round-trip, are replaced, touched, changed and removed.
///
/// # Errors
/// The property that failed.
pub async fn session_store<S: SessionStore + ?Sized, R: Runtime>(store: &S, rt: &R) -> Outcome {
    let _ = rt;
    let id = unique("contract-session");
    let ttl = Duration::from_secs(60);
    check(
        store.get(&id).await.map_err(fail("get"))?.is_none(),
        "an unknown session has no record",
    )?;
    let mut r = record("first");
    store.put(&id, &r, ttl).await.map_err(fail("put"))?;
    check(
        store.get(&id).await.map_err(fail("get"))? == Some(r.clone()),
        "put then get returns the record",
    )?;
    r.client_info = r#"{"name":"second","version":"2"}"#.into();
    store.put(&id, &r, ttl).await.map_err(fail("put again"))?;
    check(
        store.get(&id).await.map_err(fail("get"))? == Some(r.clone()),
        "a second put replaces the record",
    )?;
    check(
        store.touch(&id, ttl).await.map_err(fail("touch"))?,
        "touch finds a live session",
    )?;

    check(
        store
            .subscribe(&id, "file:///a")
            .await
            .map_err(fail("subscribe"))?,
        "subscribe finds the session",
    )?;
    check(
        store
            .subscribe(&id, "file:///b")
            .await
            .map_err(fail("subscribe"))?,
        "subscribe finds the session",
    )?;
    check(
        store
            .subscribe(&id, "file:///a")
            .await
            .map_err(fail("subscribe twice"))?,
        "subscribing twice is fine",
    )?;
    check(
        store
            .unsubscribe(&id, "file:///b")
            .await
            .map_err(fail("unsubscribe"))?,
        "unsubscribe finds the session",
    )?;
    check(
        store
            .set_log_level(&id, "warning")
            .await
            .map_err(fail("set_log_level"))?,
        "set_log_level finds the session",
    )?;
    let got = store
        .get(&id)
        .await
        .map_err(fail("get"))?
        .ok_or("the record is still there")?;
    check(
        got.subscriptions
            .iter()
            .map(String::as_str)
            .eq(["file:///a"]),
        "subscriptions hold what was subscribed and not unsubscribed, once each",
    )?;
    check(
        got.log_level.as_deref() == Some("warning"),
        "the log level is recorded",
    )?;
    check(
        got.client_info == r.client_info,
        "changes keep the rest of the record",
    )?;

    check(
        store.remove(&id).await.map_err(fail("remove"))?,
        "remove finds the session",
    )?;
    check(
        !store.remove(&id).await.map_err(fail("remove again"))?,
        "a second remove finds nothing",
    )?;
    check(
        store.get(&id).await.map_err(fail("get"))?.is_none(),
        "a removed session has no record",
    )?;
    check(
        !store.touch(&id, ttl).await.map_err(fail("touch"))?,
        "touch of a removed session is false",
    )?;
    check(
        !store
            .subscribe(&id, "file:///a")
            .await
            .map_err(fail("subscribe"))?,
        "subscribe to a removed session is false",
    )?;
    check(
        !store
            .unsubscribe(&id, "file:///a")
            .await
            .map_err(fail("unsubscribe"))?,
        "unsubscribe of a removed session is false",
    )?;
    check(
        !store
            .set_log_level(&id, "info")
            .await
            .map_err(fail("set_log_level"))?,
        "set_log_level of a removed session is false",
    )?;
    check(
        store.get(&id).await.map_err(fail("get"))?.is_none(),
        "changes do not bring a removed session back",
    )
}

/// [`EventLog`]: events read back in order after any point, in pages, with the stream's end;
/// a waiter woken by an append from another task; a wait that times out; sessions removed.
///
/// # Errors
/// The property that failed.
pub async fn event_log<L: EventLog + ?Sized, R: Runtime>(log: &L, rt: &R) -> Outcome {
    let s = unique("contract-events");
    let (a, b) = (7u64 << 32 | 1, 9u64 << 32 | 1);
    let nothing = log.read(&s, a, 0, 10).await.map_err(fail("read"))?;
    check(
        !nothing.exists && nothing.events.is_empty() && !nothing.ended,
        "an unknown stream reads as nothing",
    )?;
    log.append(&[
        event(&s, a, 1, "one"),
        event(&s, a, 2, "two"),
        event(&s, b, 1, "other"),
        event(&s, a, 4, "four"),
    ])
    .await
    .map_err(fail("append"))?;
    let all = log.read(&s, a, 0, 10).await.map_err(fail("read"))?;
    let seqs: Vec<u64> = all.events.iter().map(|(q, _)| *q).collect();
    check(
        all.exists && seqs == [1, 2, 4],
        "a stream reads back its own events, in order",
    )?;
    check(
        all.events.first().is_some_and(|(_, d)| &d[..] == b"one"),
        "the data reads back as written",
    )?;
    check(!all.ended, "a stream not ended reads as not ended")?;
    let after = log.read(&s, a, 2, 10).await.map_err(fail("read after"))?;
    check(
        after.events.iter().map(|(q, _)| *q).eq([4]),
        "read after n returns only later events",
    )?;
    let page = log.read(&s, a, 0, 2).await.map_err(fail("read a page"))?;
    check(
        page.events.iter().map(|(q, _)| *q).eq([1, 2]),
        "read returns at most max events",
    )?;

    log.append(&[LogEntry::End {
        session: s.clone(),
        stream: a,
    }])
    .await
    .map_err(fail("append end"))?;
    let page = log.read(&s, a, 0, 2).await.map_err(fail("read"))?;
    check(
        !page.ended,
        "a page that stops before the last event is not the end",
    )?;
    let rest = log.read(&s, a, 2, 10).await.map_err(fail("read"))?;
    check(
        rest.ended && rest.events.len() == 1,
        "the last page of an ended stream says so",
    )?;
    let caught_up = log.read(&s, a, 4, 10).await.map_err(fail("read"))?;
    check(
        caught_up.ended && caught_up.events.is_empty(),
        "an ended stream read past its end is ended",
    )?;
    let other = log.read(&s, b, 0, 10).await.map_err(fail("read"))?;
    check(
        !other.ended && other.events.len() == 1,
        "another stream of the session is its own",
    )?;

    // A waiter wakes for an event appended by another task.
    let c = 11u64 << 32 | 2;
    let writer = {
        let s = s.clone();
        let rt2 = rt.clone();
        async move {
            sleep(&rt2, Duration::from_millis(50)).await;
            vec![event(&s, c, 1, "late")]
        }
    };
    let (tx, rx) = futures_channel::oneshot::channel();
    rt.spawn(Box::pin(async move {
        let _ = tx.send(writer.await);
    }));
    let waited = async {
        let got = log.wait(&s, c, 0, 10, Duration::from_secs(10)).await;
        got.map_err(fail("wait"))
    };
    let append = async {
        let entries = rx.await.map_err(|_| "the writer task ran".to_owned())?;
        log.append(&entries).await.map_err(fail("append"))
    };
    let (got, appended) = futures_util::future::join(waited, append).await;
    appended?;
    let got = got?;
    check(
        got.events.iter().map(|(q, _)| *q).eq([1]),
        "wait returns the event appended meanwhile",
    )?;
    let start = rt.now();
    let idle = log
        .wait(&s, c, 1, 10, Duration::from_millis(200))
        .await
        .map_err(fail("wait"))?;
    check(
        idle.events.is_empty() && !idle.ended,
        "a wait with nothing new times out empty",
    )?;
    check(
        rt.now() - start >= mcp_proto::Duration::from_millis(150),
        "a wait lasts until its timeout",
    )?;

    log.remove_session(&s)
        .await
        .map_err(fail("remove_session"))?;
    for stream in [a, b, c] {
        let gone = log.read(&s, stream, 0, 10).await.map_err(fail("read"))?;
        check(
            !gone.exists && gone.events.is_empty(),
            "remove_session drops every stream",
        )?;
    }
    Ok(())
}

/// [`Bus`]: what `a` publishes reaches `b`'s listener in order and not `a`'s own.
///
/// # Errors
/// The property that failed.
pub async fn bus<B: Bus + ?Sized, R: Runtime>(a: &B, b: &B, rt: &R) -> Outcome {
    let mut at_b = b.listen().await.map_err(fail("listen on b"))?;
    let mut at_a = a.listen().await.map_err(fail("listen on a"))?;
    let uri = unique("file:///contract");
    let sent = [
        BusMessage::Subscribed {
            session: "s".into(),
            uri: uri.clone(),
        },
        BusMessage::ResourceUpdated { uri: uri.clone() },
        BusMessage::ListChanged {
            method: "notifications/tools/list_changed".into(),
        },
        BusMessage::LogLevel {
            session: "s".into(),
            level: "debug".into(),
        },
        BusMessage::Unsubscribed {
            session: "s".into(),
            uri: uri.clone(),
        },
        BusMessage::SessionEnded {
            session: "s".into(),
        },
        BusMessage::Deliver {
            instance: 7,
            session: "s".into(),
            body: r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into(),
        },
    ];
    for m in &sent {
        a.publish(m).await.map_err(fail("publish"))?;
    }
    for m in &sent {
        let got = with_timeout(rt, at_b.next(), Duration::from_secs(5)).await;
        check(
            got == Some(Some(m.clone())),
            "b receives a's messages in order",
        )?;
    }
    // `b` publishes one: `a` hears it, and nothing of its own before it.
    let mark = BusMessage::ResourceUpdated {
        uri: unique("file:///mark"),
    };
    b.publish(&mark).await.map_err(fail("publish"))?;
    let got = with_timeout(rt, at_a.next(), Duration::from_secs(5)).await;
    check(
        got == Some(Some(mark)),
        "a hears b, and not its own messages",
    )
}

/// The first of `fut` and a `d` timeout: `None` on the timeout.
async fn with_timeout<R: Runtime, T>(
    rt: &R,
    fut: impl std::future::Future<Output = T>,
    d: Duration,
) -> Option<T> {
    let timer = sleep(rt, d);
    futures_util::pin_mut!(fut);
    futures_util::pin_mut!(timer);
    match futures_util::future::select(fut, timer).await {
        futures_util::future::Either::Left((v, _)) => Some(v),
        futures_util::future::Either::Right(_) => None,
    }
}

/// [`KeyStore`]: the first caller makes the secret, every later one on either value gets it.
///
/// # Errors
/// The property that failed.
pub async fn key_store<K: KeyStore + ?Sized>(a: &K, b: &K) -> Outcome {
    let name = unique("contract-secret");
    let first = a
        .shared_secret(&name, 32)
        .await
        .map_err(fail("shared_secret"))?;
    check(first.len() == 32, "the secret has the length asked for")?;
    check(
        first.iter().any(|&x| x != 0),
        "the secret is random, not zeros",
    )?;
    let again = b
        .shared_secret(&name, 32)
        .await
        .map_err(fail("shared_secret"))?;
    check(again == first, "another instance gets the same secret")?;
    let other = a
        .shared_secret(&unique("contract-secret"), 32)
        .await
        .map_err(fail("shared_secret"))?;
    check(other != first, "another name has another secret")
}

/// The [`StoreLimits`] of [`contract_limits`]: records and streams expire, a stream keeps
/// its newest events, an oversize event or record is not kept, subscriptions are capped.
///
/// # Errors
/// The property that failed.
pub async fn limits<S, L, R>(sessions: &S, log: &L, rt: &R) -> Outcome
where
    S: SessionStore + ?Sized,
    L: EventLog + ?Sized,
    R: Runtime,
{
    let id = unique("contract-limits");
    let short = Duration::from_millis(300);
    sessions
        .put(&id, &record("short"), short)
        .await
        .map_err(fail("put"))?;
    let mut big = record("big");
    big.client_info = format!(r#"{{"name":"{}","version":"1"}}"#, "x".repeat(5000));
    check(
        sessions
            .put(&unique("contract-big"), &big, short)
            .await
            .is_err(),
        "a record over max_record_bytes is refused",
    )?;
    for n in 0..3 {
        sessions
            .subscribe(&id, &format!("file:///{n}"))
            .await
            .map_err(fail("subscribe"))?;
    }
    check(
        sessions.subscribe(&id, "file:///3").await.is_err(),
        "a subscription past max_subscriptions is refused",
    )?;
    check(
        sessions.subscribe(&id, "file:///0").await.is_ok(),
        "an existing subscription is no new one",
    )?;
    // Touch keeps it past its first ttl; then it expires.
    sleep(rt, Duration::from_millis(200)).await;
    check(
        sessions.touch(&id, short).await.map_err(fail("touch"))?,
        "touch before expiry",
    )?;
    sleep(rt, Duration::from_millis(200)).await;
    check(
        sessions.get(&id).await.map_err(fail("get"))?.is_some(),
        "touch extended the life",
    )?;
    sleep(rt, Duration::from_millis(400)).await;
    check(
        sessions.get(&id).await.map_err(fail("get"))?.is_none(),
        "a record expires ttl after its last touch",
    )?;

    let s = unique("contract-limits-events");
    let entries: Vec<LogEntry> = (1..=6).map(|q| event(&s, 1, q, "e")).collect();
    log.append(&entries).await.map_err(fail("append"))?;
    log.append(&[event(&s, 1, 7, &"y".repeat(2000))])
        .await
        .map_err(fail("append oversize"))?;
    let kept = log.read(&s, 1, 0, 100).await.map_err(fail("read"))?;
    check(
        kept.events.iter().map(|(q, _)| *q).eq([3, 4, 5, 6]),
        "a stream keeps its newest max_events_per_stream events and no oversize one",
    )?;
    sleep(rt, Duration::from_millis(2000)).await;
    let gone = log.read(&s, 1, 0, 100).await.map_err(fail("read"))?;
    check(
        !gone.exists && gone.events.is_empty(),
        "a stream expires event_ttl after its last write",
    )
}
