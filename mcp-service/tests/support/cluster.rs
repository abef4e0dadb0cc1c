//! The store contract run by each driver crate on its runtimes: the in-memory stores, and
//! the Redis stores on a real `redis-server` (the one `MCP_TEST_REDIS_URL` names, or a child
//! process on a free loopback port, killed when the guard drops). Without either server the
//! Redis half is skipped with a notice, unless `MCP_REQUIRE_REDIS=1` (as in CI), where it
//! fails. Beyond the contract: what only Redis can do (its server killed and restarted, a
//! subscriber dropped), and the figures of both stores.

#![allow(dead_code)]

#[path = "redis_server.rs"]
mod redis_server;

use std::time::Duration;

use futures_util::StreamExt;
use mcp_service::Runtime;
use mcp_service::cluster::{
    Bus, BusMessage, EventLog, KeyStore, LogEntry, MemoryStores, RedisStores, SessionRecord,
    SessionStore, StoreLimits, contract,
};

pub use redis_server::redis_server;

/// Every contract suite against `a`, with `b` as the other instance (bus and keys).
pub async fn contract_suite<S, R>(a: &S, b: &S, rt: &R)
where
    S: SessionStore + EventLog + Bus + KeyStore,
    R: Runtime,
{
    contract::session_store(a, rt).await.unwrap();
    contract::event_log(a, rt).await.unwrap();
    contract::bus(a, b, rt).await.unwrap();
    contract::key_store(a, b).await.unwrap();
    contract::limits(a, b, rt).await.unwrap();
}

/// The contract against the in-memory stores: two clones are two instances.
pub async fn memory<R: Runtime>(rt: R) {
    let a = MemoryStores::new(contract::contract_limits(), rt.clone());
    contract_suite(&a, &a.clone(), &rt).await;
}

/// The contract against the Redis stores: two connections are two instances, and two
/// members of one connection are too.
pub async fn redis<R: Runtime>(rt: R) {
    let Some(server) = redis_server() else {
        return;
    };
    let connect = || RedisStores::connect(&server.url, "mcp-test:", contract::contract_limits());
    let a = connect().await.unwrap();
    let b = connect().await.unwrap();
    contract_suite(&a, &b, &rt).await;
    contract::bus(&a, &a.member().unwrap(), &rt).await.unwrap();
}

async fn sleep<R: Runtime>(rt: &R, d: Duration) {
    rt.sleep_until(rt.now() + mcp_proto::Duration::from(d))
        .await;
}

/// `fut`, or a panic naming `what` if it has not finished after a minute: an operation that
/// should fail or succeed must not hang.
async fn within<R: Runtime, T>(rt: &R, what: &str, fut: impl std::future::Future<Output = T>) -> T {
    let timer = sleep(rt, Duration::from_secs(60));
    futures_util::pin_mut!(fut);
    futures_util::pin_mut!(timer);
    match futures_util::future::select(fut, timer).await {
        futures_util::future::Either::Left((v, _)) => v,
        futures_util::future::Either::Right(_) => panic!("{what} hung"),
    }
}

fn event(session: &str, stream: u64, seq: u64, data: &[u8]) -> LogEntry {
    LogEntry::Event {
        session: session.to_owned(),
        stream,
        seq,
        data: bytes::Bytes::copy_from_slice(data),
    }
}

fn record() -> SessionRecord {
    SessionRecord {
        version: "2025-11-25".into(),
        client_info: r#"{"name":"figures","version":"1"}"#.into(),
        client_capabilities: r#"{"roots":{}}"#.into(),
        owner: Some("iss|sub|client".into()),
        subscriptions: ["file:///a".to_owned(), "file:///b".to_owned()].into(),
        log_level: Some("info".into()),
    }
}

fn random_name(prefix: &str) -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    format!("{prefix}{:016x}", u64::from_le_bytes(b))
}

/// `remove_session` drops exactly the session's streams, through the session's index: a
/// session whose id is another's with glob characters, or a prefix of it, keeps its own; the
/// index itself goes too.
pub async fn redis_remove_session<R: Runtime>(rt: R) {
    let _ = rt;
    let Some(server) = redis_server() else {
        return;
    };
    let prefix = random_name("mcp-rm:");
    let stores = RedisStores::connect(&server.url, &prefix, StoreLimits::default())
        .await
        .unwrap();
    let sessions = ["s*", "s[1]", "s", "s:1", "s?x"];
    for (n, s) in sessions.iter().enumerate() {
        let entries: Vec<LogEntry> = (1..=3u64)
            .flat_map(|stream| {
                [
                    event(s, stream, 1, s.as_bytes()),
                    LogEntry::End {
                        session: (*s).to_owned(),
                        stream,
                    },
                ]
            })
            .chain([event(s, 100 + n as u64, 7, b"x")])
            .collect();
        stores.append(&entries).await.unwrap();
    }
    let mut raw = server.raw();
    let index = format!("{prefix}ei:s*");
    assert_eq!(
        raw.int(&[b"SCARD", index.as_bytes()]),
        4,
        "the index lists each stream once"
    );
    let ttl = raw.int(&[b"PTTL", index.as_bytes()]);
    assert!(
        ttl > 0 && ttl <= 300_000,
        "the index expires with its streams ({ttl} ms)"
    );
    for victim in sessions {
        stores.remove_session(victim).await.unwrap();
        for s in sessions {
            let gone = victim == s;
            for stream in [1, 2, 3] {
                let read = stores.read(s, stream, 0, 10).await.unwrap();
                let kept = read.exists && read.ended && read.events.len() == 1;
                if gone {
                    assert!(!read.exists, "{victim:?}: its stream {stream} is gone");
                } else if sessions.iter().position(|x| *x == s)
                    > sessions.iter().position(|x| *x == victim)
                {
                    assert!(kept, "removing {victim:?} leaves {s:?} alone");
                }
            }
        }
        let idx = format!("{prefix}ei:{victim}");
        assert_eq!(
            raw.int(&[b"EXISTS", idx.as_bytes()]),
            0,
            "the index is gone too"
        );
    }
    // A session never written: nothing to do, no error.
    stores.remove_session("never").await.unwrap();
}

/// Blocking reads reuse their connections: sequential waits keep one, concurrent ones
/// above the pool's bound open temporary connections that are not kept, and a cancelled
/// wait's connection is not reused.
pub async fn redis_wait_pool<R: Runtime>(rt: R) {
    let Some(server) = redis_server() else {
        return;
    };
    let stores = RedisStores::connect(
        &server.url,
        &random_name("mcp-pool:"),
        StoreLimits::default(),
    )
    .await
    .unwrap();
    let mut raw = server.raw();
    let clients = |raw: &mut redis_server::Raw| match raw.cmd(&[b"CLIENT", b"LIST"]) {
        redis_server::Reply::Bulk(Some(b)) => String::from_utf8_lossy(&b).lines().count(),
        other => panic!("CLIENT LIST: {other:?}"),
    };
    assert_eq!(stores.idle_wait_connections(), 0);
    let short = Duration::from_millis(100);
    stores.wait("p", 1, 0, 10, short).await.unwrap();
    assert_eq!(
        stores.idle_wait_connections(),
        1,
        "a wait keeps its connection"
    );
    let before = clients(&mut raw);
    for _ in 0..5 {
        let r = stores.wait("p", 1, 0, 10, short).await.unwrap();
        assert!(r.events.is_empty() && !r.exists);
    }
    assert_eq!(
        stores.idle_wait_connections(),
        1,
        "sequential waits reuse one connection"
    );
    assert_eq!(
        clients(&mut raw),
        before,
        "no connection opened by sequential waits"
    );

    // 24 at once: 16 kept, the rest closed.
    let waits: Vec<_> = (0..24)
        .map(|n| stores.wait("p", n, 0, 10, Duration::from_millis(300)))
        .collect();
    for r in futures_util::future::join_all(waits).await {
        r.unwrap();
    }
    assert_eq!(
        stores.idle_wait_connections(),
        16,
        "the pool keeps at most 16"
    );

    // A wait woken by an append on its pooled connection returns the event.
    let waiter = stores.wait("p", 99, 0, 10, Duration::from_secs(10));
    let writer = async {
        sleep(&rt, Duration::from_millis(50)).await;
        stores.append(&[event("p", 99, 1, b"woke")]).await.unwrap();
    };
    let (got, ()) = futures_util::future::join(waiter, writer).await;
    assert_eq!(got.unwrap().events.len(), 1);
    assert_eq!(stores.idle_wait_connections(), 16);

    // A wait cancelled mid-block: its connection is not kept (16 - 1 idle), and the next
    // wait is not stuck behind its BLOCK.
    {
        let cancelled = stores.wait("p", 98, 0, 10, Duration::from_secs(30));
        let timer = sleep(&rt, Duration::from_millis(100));
        futures_util::pin_mut!(cancelled);
        futures_util::pin_mut!(timer);
        assert!(matches!(
            futures_util::future::select(cancelled, timer).await,
            futures_util::future::Either::Right(_)
        ));
    }
    assert_eq!(
        stores.idle_wait_connections(),
        15,
        "a cancelled wait's connection is dropped"
    );
    let waiter = within(&rt, "a wait after a cancelled one", async {
        let w = stores.wait("p", 98, 0, 10, Duration::from_secs(30));
        let writer = async {
            sleep(&rt, Duration::from_millis(50)).await;
            stores.append(&[event("p", 98, 1, b"woke")]).await.unwrap();
        };
        futures_util::future::join(w, writer).await.0
    })
    .await;
    assert_eq!(waiter.unwrap().events.len(), 1);
}

/// Redis down: connecting to nothing fails with a clear error; when the server dies, every
/// operation fails (none hangs or panics); once it is back, they succeed again.
pub async fn redis_down<R: Runtime>(rt: R) {
    let dead = redis_server::free_port();
    let err = within(
        &rt,
        "connect to a dead port",
        RedisStores::connect(
            &format!("redis://127.0.0.1:{dead}/"),
            "x:",
            StoreLimits::default(),
        ),
    )
    .await
    .expect_err("nothing listens there");
    let text = err.to_string();
    assert!(
        text.contains("Redis connect to 127.0.0.1:") && text.contains(&dead.to_string()),
        "the error names what failed and where: {text}"
    );

    let Some(mut server) = redis_server() else {
        return;
    };
    if !server.owned() {
        eprintln!("MCP_TEST_REDIS_URL names a server this test cannot kill: skipped");
        return;
    }
    let limits = StoreLimits::default();
    let stores = RedisStores::connect(&server.url, "mcp-down:", limits.clone())
        .await
        .unwrap();
    let other = RedisStores::connect(&server.url, "mcp-down:", limits)
        .await
        .unwrap();
    let ttl = Duration::from_secs(60);
    stores.put("s1", &record(), ttl).await.unwrap();
    stores.append(&[event("s1", 1, 1, b"one")]).await.unwrap();
    stores
        .wait("s1", 1, 1, 10, Duration::from_millis(50))
        .await
        .unwrap();
    let mut bus = other.listen().await.unwrap();

    server.kill();
    let msg = BusMessage::ListChanged {
        method: "notifications/tools/list_changed".into(),
    };
    // Twice each: the first meets the broken connection, the second the reconnection.
    for _ in 0..2 {
        assert!(within(&rt, "get", stores.get("s1")).await.is_err());
        assert!(
            within(&rt, "put", stores.put("s2", &record(), ttl))
                .await
                .is_err()
        );
        assert!(within(&rt, "touch", stores.touch("s1", ttl)).await.is_err());
        assert!(
            within(&rt, "subscribe", stores.subscribe("s1", "file:///c"))
                .await
                .is_err()
        );
        assert!(
            within(&rt, "append", stores.append(&[event("s1", 1, 2, b"two")]))
                .await
                .is_err()
        );
        assert!(
            within(&rt, "read", stores.read("s1", 1, 0, 10))
                .await
                .is_err()
        );
        assert!(
            within(
                &rt,
                "wait",
                stores.wait("s1", 1, 1, 10, Duration::from_secs(1))
            )
            .await
            .is_err()
        );
        assert!(
            within(&rt, "remove_session", stores.remove_session("s1"))
                .await
                .is_err()
        );
        assert!(within(&rt, "publish", stores.publish(&msg)).await.is_err());
        assert!(within(&rt, "listen", stores.listen()).await.is_err());
        assert!(
            within(&rt, "shared_secret", stores.shared_secret("k", 32))
                .await
                .is_err()
        );
    }

    server.restart();
    // The shared connection comes back by itself: within a few attempts.
    let mut back = false;
    for _ in 0..100 {
        if within(&rt, "get after restart", stores.get("s1"))
            .await
            .is_ok()
        {
            back = true;
            break;
        }
        sleep(&rt, Duration::from_millis(50)).await;
    }
    assert!(back, "the stores reconnect once Redis is back");
    // The restarted server is empty: nothing survived, everything works.
    assert_eq!(stores.get("s1").await.unwrap(), None);
    stores.put("s1", &record(), ttl).await.unwrap();
    assert_eq!(stores.get("s1").await.unwrap(), Some(record()));
    stores.append(&[event("s1", 1, 1, b"one")]).await.unwrap();
    let read = stores.read("s1", 1, 0, 10).await.unwrap();
    assert_eq!(read.events.len(), 1);
    let waited = within(
        &rt,
        "wait after restart",
        stores.wait("s1", 1, 0, 10, Duration::from_secs(1)),
    )
    .await
    .unwrap();
    assert_eq!(waited.events.len(), 1);
    let idle = within(
        &rt,
        "wait after restart",
        stores.wait("s1", 1, 1, 10, Duration::from_millis(100)),
    )
    .await
    .unwrap();
    assert!(idle.events.is_empty());
    assert_eq!(stores.shared_secret("k", 32).await.unwrap().len(), 32);
    stores.remove_session("s1").await.unwrap();
    // The listener opened before the crash is still alive and hears what follows (it
    // subscribes again as it is polled).
    let mut raw = server.raw();
    let mark = BusMessage::ResourceUpdated {
        uri: "file:///after".into(),
    };
    let publish = async {
        while raw.numsub("mcp-down:bus") == 0 {
            sleep(&rt, Duration::from_millis(20)).await;
        }
        stores.publish(&mark).await.unwrap();
    };
    let (got, ()) =
        futures_util::future::join(within(&rt, "the bus after restart", bus.next()), publish).await;
    assert_eq!(got, Some(mark));
    assert_eq!(other.bus_reconnects(), 1);
}

/// A bus listener survives its connection's loss, Redis restarted on the same port or its
/// subscription killed, and counts in `lagged` exactly the messages it missed.
pub async fn redis_bus_reconnects<R: Runtime>(rt: R) {
    let Some(mut server) = redis_server() else {
        return;
    };
    if !server.owned() {
        eprintln!("MCP_TEST_REDIS_URL names a server this test cannot restart: skipped");
        return;
    }
    let prefix = "mcp-bus:";
    let channel = format!("{prefix}bus");
    let a = RedisStores::connect(&server.url, prefix, StoreLimits::default())
        .await
        .unwrap();
    let b = RedisStores::connect(&server.url, prefix, StoreLimits::default())
        .await
        .unwrap();
    let mut at_b = b.listen().await.unwrap();
    let msg = |n: u32| BusMessage::ResourceUpdated {
        uri: format!("file:///{n}"),
    };
    a.publish(&msg(1)).await.unwrap();
    assert_eq!(
        within(&rt, "first message", at_b.next()).await,
        Some(msg(1))
    );
    assert_eq!((b.lagged(), b.bus_reconnects()), (0, 0));

    // 1. The server killed and restarted on the same port. The listener subscribes again
    // as it is polled; meanwhile `a`'s shared connection learns of the restart on its first
    // use: the publishes that fail are messages `b` never gets, and counts.
    server.restart();
    let mut raw = server.raw();
    let mut failed = 0u64;
    let publish = async {
        while raw.numsub(&channel) == 0 {
            sleep(&rt, Duration::from_millis(20)).await;
        }
        loop {
            match a.publish(&msg(2)).await {
                Ok(()) => break,
                Err(_) => failed += 1,
            }
            assert!(failed < 100, "publish works again after the restart");
            sleep(&rt, Duration::from_millis(20)).await;
        }
    };
    let (got, ()) =
        futures_util::future::join(within(&rt, "after the restart", at_b.next()), publish).await;
    assert_eq!(got, Some(msg(2)));
    assert_eq!(b.bus_reconnects(), 1, "the listener subscribed again");
    assert_eq!(
        b.lagged(),
        failed,
        "the failed publishes are counted as missed"
    );

    // 2. The subscriber's connection killed, and two messages published before it can
    // subscribe again (in one transaction): both missed, both counted. The raw messages come
    // from a sender of their own (the envelope is the stores' JSON: origin, sequence,
    // message).
    let envelope = |q: u64, n: u32| {
        serde_json::to_vec(&serde_json::json!({"o": 7, "q": q, "m": msg(n)})).unwrap()
    };
    assert_eq!(
        raw.int(&[b"PUBLISH", channel.as_bytes(), &envelope(1, 10)]),
        1
    );
    assert_eq!(
        within(&rt, "a raw message", at_b.next()).await,
        Some(msg(10))
    );
    let lagged = b.lagged();
    raw.cmd(&[b"MULTI"]);
    raw.cmd(&[b"CLIENT", b"KILL", b"TYPE", b"pubsub"]);
    raw.cmd(&[b"PUBLISH", channel.as_bytes(), &envelope(2, 11)]);
    raw.cmd(&[b"PUBLISH", channel.as_bytes(), &envelope(3, 12)]);
    let exec = raw.cmd(&[b"EXEC"]);
    assert_eq!(
        exec,
        redis_server::Reply::Array(vec![
            redis_server::Reply::Int(1),
            redis_server::Reply::Int(0),
            redis_server::Reply::Int(0),
        ]),
        "the subscriber was killed before the two messages"
    );
    let publish = async {
        while raw.numsub(&channel) == 0 {
            sleep(&rt, Duration::from_millis(20)).await;
        }
        raw.int(&[b"PUBLISH", channel.as_bytes(), &envelope(4, 13)])
    };
    let (got, receivers) =
        futures_util::future::join(within(&rt, "after the kill", at_b.next()), publish).await;
    assert_eq!((got, receivers), (Some(msg(13)), 1));
    assert_eq!(b.bus_reconnects(), 2);
    assert_eq!(
        b.lagged(),
        lagged + 2,
        "the two missed messages are counted"
    );

    // And `a`'s own messages still flow, with nothing counted.
    a.publish(&msg(3)).await.unwrap();
    assert_eq!(within(&rt, "a again", at_b.next()).await, Some(msg(3)));
    assert_eq!(b.lagged(), lagged + 2);
}

/// Median and 99th percentile of `samples`, in microseconds.
fn quantiles(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e6
    };
    (at(0.5), at(0.99))
}

/// Times `n` runs of `op` after `n / 10` unmeasured ones.
async fn time<F, Fut>(n: usize, mut op: F) -> (f64, f64)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for i in 0..n / 10 {
        op(i).await;
    }
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let start = std::time::Instant::now();
        op(n / 10 + i).await;
        samples.push(start.elapsed());
    }
    quantiles(&mut samples)
}

/// Median and p99 latency of each operation on `a` (bus: `a` publishes, `b` receives).
pub async fn figures_of<S>(name: &str, a: &S, b: &S, n: usize)
where
    S: SessionStore + EventLog + Bus,
{
    let payload = vec![b'x'; 1024];
    let session = random_name("fig-");
    let row = |op: &str, (p50, p99): (f64, f64)| {
        println!("{name:<7} {op:<34} p50 {p50:>9.1} µs   p99 {p99:>9.1} µs");
    };
    row(
        "append 64 x 1 KiB events",
        time(n, |i| {
            let entries: Vec<LogEntry> = (1..=64u64)
                .map(|k| event(&session, 1, i as u64 * 64 + k, &payload))
                .collect();
            async move { a.append(&entries).await.unwrap() }
        })
        .await,
    );
    let last = (n + n / 10) as u64 * 64;
    row(
        "read 64 events",
        time(n, |_| async {
            let r = a.read(&session, 1, last - 64, 64).await.unwrap();
            assert_eq!(r.events.len(), 64);
        })
        .await,
    );
    let rec = record();
    a.put(&session, &rec, Duration::from_secs(300))
        .await
        .unwrap();
    row(
        "session get",
        time(n, |_| async {
            assert!(a.get(&session).await.unwrap().is_some());
        })
        .await,
    );
    row(
        "session put",
        time(n, |_| async {
            a.put(&session, &rec, Duration::from_secs(300))
                .await
                .unwrap();
        })
        .await,
    );
    let mut at_b = b.listen().await.unwrap();
    let msg = BusMessage::ResourceUpdated {
        uri: "file:///figures".into(),
    };
    let at_b = &mut at_b;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let start = std::time::Instant::now();
        a.publish(&msg).await.unwrap();
        assert_eq!(at_b.next().await.as_ref(), Some(&msg));
        if i >= n / 10 {
            samples.push(start.elapsed());
        }
    }
    row("bus publish -> receive", quantiles(&mut samples));
    a.remove_session(&session).await.unwrap();
}

/// The figures of the memory stores and the Redis stores, side by side.
pub async fn figures<R: Runtime>(rt: R) {
    let n = 2000;
    let memory = MemoryStores::new(StoreLimits::default(), rt.clone());
    figures_of("memory", &memory, &memory.clone(), n).await;
    let Some(server) = redis_server() else {
        return;
    };
    let prefix = random_name("mcp-fig:");
    let a = RedisStores::connect(&server.url, &prefix, StoreLimits::default())
        .await
        .unwrap();
    let b = RedisStores::connect(&server.url, &prefix, StoreLimits::default())
        .await
        .unwrap();
    figures_of("redis", &a, &b, n).await;
}
