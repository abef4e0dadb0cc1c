//! Deterministic simulation: a client and a server session over a seeded, hostile link.
//!
//! The link splits bytes at random points, delays them (keeping stream order), injects garbage
//! lines between messages and may drop the connection. Virtual time jumps to the next deadline
//! when nothing else is due. Applications on both sides issue, answer, cancel and report
//! progress at random. After every step the invariants are checked:
//!
//! - every outbound request gets at most one outcome, and exactly one by the end;
//! - a request the peer cancelled is never answered (a `result` on the wire always comes from
//!   a successful `respond`, and `respond` after the cancellation fails);
//! - progress values seen for a request strictly increase;
//! - after `handle_timeout(now)`, the next deadline is later than `now`;
//! - `Event::Closed` at most once per side; the run settles within a step cap; no panic.
//!
//! `SIM_SEEDS=N` sets how many seeds run (default 10,000); a failing seed is printed and is
//! replayed alone with `SIM_SEED=<seed> cargo test -p mcp-proto --test simulation`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Coverage counters across all seeds, so the run proves it exercised every path it checks.
static RESULTS: AtomicU64 = AtomicU64::new(0);
static TIMEOUTS: AtomicU64 = AtomicU64::new(0);
static CANCELS: AtomicU64 = AtomicU64::new(0);
static PROGRESS: AtomicU64 = AtomicU64::new(0);
static INVALID: AtomicU64 = AtomicU64::new(0);
static CLOSED_FAILURES: AtomicU64 = AtomicU64::new(0);

use mcp_proto::session::{Config, Event, InboundRequest, RequestOptions, Session};
use mcp_proto::{Duration, Error, ErrorKind, Instant, RequestId};
use serde_json::value::RawValue;

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    /// True with probability `per_mille`/1000.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

fn raw(s: String) -> Box<RawValue> {
    RawValue::from_string(s).unwrap()
}

/// One direction of a stream transport: chunks delivered in order, each at its time.
#[derive(Default)]
struct Link {
    queue: VecDeque<(Instant, Vec<u8>)>,
    last: Instant,
    /// The sender finished: once the queue drains, the receiver sees EOF.
    eof: bool,
    eof_delivered: bool,
}

impl Link {
    fn send(&mut self, rng: &mut Rng, now: Instant, bytes: &[u8], garbage_per_mille: u64) {
        if rng.chance(garbage_per_mille) {
            let garbage: &[&[u8]] = &[
                b"{not json\n",
                b"\x00\xff\xfe garbage\n",
                b"[]\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":3}\n",
                b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"nope\",\"progress\":1}}\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{}}\n",
                b"\r\n\r\n",
            ];
            let g = garbage[rng.below(garbage.len() as u64) as usize];
            self.push(rng, now, g);
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let take = if rng.chance(500) {
                rest.len()
            } else {
                1 + rng.below(rest.len() as u64) as usize
            };
            let (chunk, tail) = rest.split_at(take);
            self.push(rng, now, chunk);
            rest = tail;
        }
    }

    fn push(&mut self, rng: &mut Rng, now: Instant, chunk: &[u8]) {
        let at = (now + Duration::from_micros(rng.below(3_000))).max(self.last);
        self.last = at;
        self.queue.push_back((at, chunk.to_vec()));
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.front().map(|(t, _)| *t)
    }
}

/// What one side's application and the checker know.
struct Side {
    name: &'static str,
    session: Session,
    /// Outcomes per outbound id.
    outcomes: BTreeMap<RequestId, u32>,
    issued: Vec<RequestId>,
    pings: BTreeSet<RequestId>,
    progress_seen: BTreeMap<RequestId, f64>,
    closed_events: u32,
    /// Inbound requests the application is working on.
    work: Vec<InboundRequest>,
    progress_sent: BTreeMap<RequestId, f64>,
    /// Inbound ids whose cancellation the application saw.
    cancelled: BTreeSet<RequestId>,
    /// Inbound ids answered successfully by the application.
    answered: BTreeSet<RequestId>,
    ready: bool,
    buf: Vec<u8>,
}

impl Side {
    fn new(name: &'static str, session: Session) -> Self {
        Side {
            name,
            session,
            outcomes: BTreeMap::new(),
            issued: Vec::new(),
            pings: BTreeSet::new(),
            progress_seen: BTreeMap::new(),
            closed_events: 0,
            work: Vec::new(),
            progress_sent: BTreeMap::new(),
            cancelled: BTreeSet::new(),
            answered: BTreeSet::new(),
            ready: false,
            buf: Vec::new(),
        }
    }

    fn drain_events(&mut self) {
        while let Some(e) = self.session.poll_event() {
            match e {
                Event::Ready { .. } => self.ready = true,
                Event::Request(r) => self.work.push(r),
                Event::Response { id, result } => {
                    match &result {
                        Ok(_) => RESULTS.fetch_add(1, Relaxed),
                        Err(e) if e.kind() == ErrorKind::Timeout => TIMEOUTS.fetch_add(1, Relaxed),
                        Err(e) if e.kind() == ErrorKind::TransportClosed => {
                            CLOSED_FAILURES.fetch_add(1, Relaxed)
                        }
                        Err(_) => 0,
                    };
                    let n = self.outcomes.entry(id.clone()).or_default();
                    *n += 1;
                    assert!(*n == 1, "{}: request {id} got {n} outcomes", self.name);
                    assert!(
                        self.issued.contains(&id),
                        "{}: outcome for unknown id {id}",
                        self.name
                    );
                }
                Event::Progress { id, progress, .. } => {
                    PROGRESS.fetch_add(1, Relaxed);
                    if let Some(last) = self.progress_seen.get(&id) {
                        assert!(
                            progress > *last,
                            "{}: progress for {id} went {last} -> {progress}",
                            self.name
                        );
                    }
                    assert!(
                        !self.outcomes.contains_key(&id),
                        "{}: progress after outcome for {id}",
                        self.name
                    );
                    self.progress_seen.insert(id, progress);
                }
                Event::Cancelled { id, .. } => {
                    CANCELS.fetch_add(1, Relaxed);
                    assert!(
                        !self.answered.contains(&id),
                        "{}: cancel event for answered {id}",
                        self.name
                    );
                    self.cancelled.insert(id.clone());
                    self.work.retain(|r| r.id != id);
                }
                Event::Closed(_) => {
                    self.closed_events += 1;
                    assert_eq!(self.closed_events, 1, "{}: closed twice", self.name);
                    self.work.clear();
                }
                Event::InvalidMessage(_) => {
                    INVALID.fetch_add(1, Relaxed);
                }
                _ => {}
            }
        }
    }

    /// Moves this side's transmits onto the link, checking responses against the app's answers.
    fn transmit(
        &mut self,
        rng: &mut Rng,
        now: Instant,
        link: &mut Link,
        peer_pings: &BTreeSet<RequestId>,
        garbage: u64,
    ) {
        loop {
            self.buf.clear();
            if self.session.poll_transmit(&mut self.buf).is_none() {
                break;
            }
            let v: serde_json::Value =
                serde_json::from_slice(&self.buf).expect("session wrote invalid JSON");
            for m in v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]) {
                if m.get("result").is_some() {
                    let id: RequestId = serde_json::from_value(m["id"].clone()).unwrap();
                    assert!(
                        self.answered.contains(&id)
                            || peer_pings.contains(&id)
                            || m["result"].get("protocolVersion").is_some(),
                        "{}: result for {id} that the application never gave",
                        self.name
                    );
                }
            }
            if !link.eof {
                let bytes = self.buf.clone();
                link.send(rng, now, &bytes, garbage);
            }
        }
    }

    fn act(&mut self, rng: &mut Rng, now: Instant, client: bool) {
        if self.closed_events > 0 {
            return;
        }
        // Work on an inbound request.
        if !self.work.is_empty() && rng.chance(400) {
            let i = rng.below(self.work.len() as u64) as usize;
            let id = self.work[i].id.clone();
            let has_token = self.work[i].progress_token.is_some();
            match rng.below(10) {
                0..=4 => {
                    let r = self.session.respond(
                        &id,
                        raw(format!(
                            "{{\"content\":[{{\"type\":\"text\",\"text\":\"{id}\"}}]}}"
                        )),
                    );
                    match r {
                        Ok(()) => {
                            self.answered.insert(id.clone());
                        }
                        Err(e) => assert!(
                            matches!(
                                e.kind(),
                                ErrorKind::TransportClosed
                                    | ErrorKind::NotFound
                                    | ErrorKind::RequestCancelled
                            ),
                            "{e}"
                        ),
                    }
                    self.work.remove(i);
                }
                5 => {
                    let _ = self
                        .session
                        .respond_error(&id, Error::handler_failed("nope"));
                    self.work.remove(i);
                }
                _ if has_token => {
                    let last = self.progress_sent.get(&id).copied().unwrap_or(0.0);
                    let next = if rng.chance(100) {
                        last
                    } else {
                        last + 1.0 + rng.below(3) as f64
                    };
                    match self.session.report_progress(&id, next, Some(100.0), None) {
                        Ok(()) => {
                            assert!(next > last || !self.progress_sent.contains_key(&id));
                            self.progress_sent.insert(id, next);
                        }
                        Err(e) => assert!(
                            matches!(
                                e.kind(),
                                ErrorKind::InvalidParams | ErrorKind::TransportClosed
                            ),
                            "{e}"
                        ),
                    }
                }
                _ => {}
            }
        }
        // A cancelled request is never answered: the application may still try.
        if let Some(id) = self.cancelled.iter().next().cloned()
            && rng.chance(50)
        {
            let r = self.session.respond(&id, raw("{}".into()));
            assert!(
                r.is_err(),
                "{}: respond after cancel of {id} succeeded",
                self.name
            );
        }
        if !self.ready {
            return;
        }
        // Issue a request.
        if rng.chance(150) && self.session.outbound_in_flight() < 40 {
            let (method, params) = if client {
                match rng.below(4) {
                    0 => ("tools/list", None),
                    1 => ("ping", None),
                    2 => ("resources/read", Some(raw("{\"uri\":\"test://x\"}".into()))),
                    _ => (
                        "tools/call",
                        Some(raw(
                            "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\\ny\"}}".into(),
                        )),
                    ),
                }
            } else {
                match rng.below(2) {
                    0 => ("roots/list", None),
                    _ => (
                        "sampling/createMessage",
                        Some(raw("{\"messages\":[],\"maxTokens\":1}".into())),
                    ),
                }
            };
            let opts = RequestOptions {
                timeout: if rng.chance(300) {
                    Some(Duration::from_micros(1 + rng.below(20_000)))
                } else {
                    None
                },
                progress: rng.chance(500),
                reset_timeout_on_progress: rng.chance(500),
                max_total_timeout: if rng.chance(200) {
                    Some(Duration::from_micros(rng.below(50_000)))
                } else {
                    None
                },
                related_to: None,
            };
            match self.session.send_request(now, method, params, opts) {
                Ok(id) => {
                    if method == "ping" {
                        self.pings.insert(id.clone());
                    }
                    self.issued.push(id);
                }
                Err(e) => assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::TransportClosed | ErrorKind::LimitExceeded
                    ),
                    "{e}"
                ),
            }
        }
        // Cancel one of ours.
        if rng.chance(40) {
            let open: Vec<RequestId> = self
                .issued
                .iter()
                .filter(|id| !self.outcomes.contains_key(*id))
                .cloned()
                .collect();
            if !open.is_empty() {
                let id = &open[rng.below(open.len() as u64) as usize];
                self.session.cancel(now, id, Some("sim")).unwrap();
            }
        }
        // A notification now and then.
        if rng.chance(30) {
            let r = if client {
                self.session
                    .notify("notifications/roots/list_changed", None)
            } else {
                self.session
                    .notify("notifications/tools/list_changed", None)
            };
            assert!(r.is_ok() || r.is_err_and(|e| e.kind() == ErrorKind::TransportClosed));
        }
    }

    fn check_deadline(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        if let Some(t) = self.session.poll_timeout() {
            assert!(
                t > now,
                "{}: deadline {t:?} not after now {now:?} following handle_timeout",
                self.name
            );
        }
    }
}

fn run(seed: u64) {
    let mut rng = Rng::new(seed);
    let client_cfg = Config::new("sim-client", "1").capabilities(raw(
        "{\"roots\":{\"listChanged\":true},\"sampling\":{}}".into(),
    ));
    let mut server_cfg = Config::new("sim-server", "1").capabilities(raw(
        "{\"tools\":{\"listChanged\":true},\"resources\":{}}".into(),
    ));
    server_cfg.max_inbound_in_flight = 16 + rng.below(32) as usize;
    let mut client = Side::new("client", Session::client(client_cfg));
    let mut server = Side::new("server", Session::server(server_cfg));
    let mut c2s = Link::default();
    let mut s2c = Link::default();
    let garbage = if rng.chance(300) { rng.below(50) } else { 0 };
    let drop_at = if rng.chance(200) {
        Some(rng.below(400))
    } else {
        None
    };
    let work_steps = 50 + rng.below(300);
    let mut now = Instant::from_micros(rng.below(1 << 40));
    client.session.initialize(now).unwrap();
    let mut closing = false;

    for step in 0..20_000u64 {
        // Application actions while the workload runs; then a graceful close by the client.
        if step < work_steps {
            client.act(&mut rng, now, true);
            server.act(&mut rng, now, false);
        } else {
            if !closing {
                closing = true;
                client.session.close(now);
            }
            // Finish outstanding work so that the server can drain.
            server.act(&mut rng, now, false);
            for r in std::mem::take(&mut server.work) {
                if server.session.respond(&r.id, raw("{}".into())).is_ok() {
                    server.answered.insert(r.id);
                }
            }
            for r in std::mem::take(&mut client.work) {
                if client.session.respond(&r.id, raw("{}".into())).is_ok() {
                    client.answered.insert(r.id);
                }
            }
        }
        if drop_at == Some(step) {
            client.session.handle_closed(
                now,
                Some(Error::new(ErrorKind::TransportError, "link dropped")),
            );
            server.session.handle_closed(now, None);
            c2s.queue.clear();
            s2c.queue.clear();
        }
        client.drain_events();
        server.drain_events();
        let client_pings = client.pings.clone();
        let server_pings = server.pings.clone();
        client.transmit(&mut rng, now, &mut c2s, &server_pings, garbage);
        server.transmit(&mut rng, now, &mut s2c, &client_pings, garbage);
        // The client closed: once it flushed, its output ends (EOF for the server).
        if client.session.is_closed() && !client.session.has_transmit() {
            c2s.eof = true;
        }
        if server.session.is_closed() && !server.session.has_transmit() {
            s2c.eof = true;
        }

        // Deliver what is due, else jump to the next deadline.
        let due = [
            c2s.next_due(),
            s2c.next_due(),
            client.session.poll_timeout(),
            server.session.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let app_busy = step < work_steps || !server.work.is_empty();
        now = match due {
            Some(t) if !app_busy || t <= now + Duration::from_micros(1_000) => t.max(now),
            _ => now + Duration::from_micros(rng.below(1_000)),
        };
        for (link, side) in [(&mut c2s, &mut server), (&mut s2c, &mut client)] {
            while let Some((t, _)) = link.queue.front() {
                if *t > now {
                    break;
                }
                let (_, bytes) = link.queue.pop_front().unwrap();
                side.session.handle_bytes(now, &bytes);
            }
            if link.eof && link.queue.is_empty() && !link.eof_delivered {
                link.eof_delivered = true;
                side.session.handle_input_closed(now);
            }
        }
        client.check_deadline(now);
        server.check_deadline(now);
        client.drain_events();
        server.drain_events();

        if client.closed_events == 1
            && server.closed_events == 1
            && c2s.queue.is_empty()
            && s2c.queue.is_empty()
        {
            // Settled: every request issued on either side has exactly one outcome.
            for side in [&client, &server] {
                for id in &side.issued {
                    assert_eq!(
                        side.outcomes.get(id),
                        Some(&1),
                        "{}: request {id} has no outcome",
                        side.name
                    );
                }
                assert_eq!(side.session.poll_timeout(), None);
            }
            return;
        }
    }
    panic!(
        "did not settle within the step cap (client {:?}, server {:?})",
        client.session.state(),
        server.session.state()
    );
}

fn run_seed(seed: u64) -> Result<(), String> {
    std::panic::catch_unwind(|| run(seed)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn simulated_pairs_keep_their_invariants() {
    if let Ok(seed) = std::env::var("SIM_SEED") {
        let seed: u64 = seed.parse().expect("SIM_SEED must be an integer");
        run(seed);
        return;
    }
    let seeds: u64 = std::env::var("SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    std::panic::set_hook(Box::new(|_| {}));
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8) as u64;
    let failures: Vec<(u64, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut failed = Vec::new();
                    let mut seed = t;
                    while seed < seeds {
                        if let Err(msg) = run_seed(seed) {
                            failed.push((seed, msg));
                        }
                        seed += threads;
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (seed, msg) in &failures {
        eprintln!(
            "seed {seed} failed: {msg}\n  replay: SIM_SEED={seed} cargo test -p mcp-proto --test simulation"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {seeds} seeds failed (first: {:?})",
        failures.len(),
        failures.first()
    );
    let counters = [
        ("results", &RESULTS),
        ("timeouts", &TIMEOUTS),
        ("cancellations", &CANCELS),
        ("progress", &PROGRESS),
        ("invalid messages", &INVALID),
        ("failed by close", &CLOSED_FAILURES),
    ];
    for (name, c) in counters {
        let n = c.load(Relaxed);
        eprintln!("simulation: {name}: {n}");
        if seeds >= 1_000 {
            assert!(
                n > seeds / 100,
                "the simulation exercised too few {name} ({n})"
            );
        }
    }
}
