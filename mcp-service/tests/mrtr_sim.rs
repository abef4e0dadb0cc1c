//! Seeded simulation of multi round-trip requests (2026-07-28 MRTR) against the handshake era,
//! on the deterministic [`Sim`] runtime over an in-memory stream.
//!
//! For each seed, a plan of concurrent tool calls: each call's handler asks a seed-chosen
//! sequence of rounds (1..=N, now and then more than [`MAX_ROUNDS`]), each round 1..=3 asks
//! joined (elicitation, sampling, roots; under keys of its own or the numbered ones). The
//! client's handlers answer from the seed (accepting with a value, declining, cancelling,
//! sometimes failing; in calls with a deadline, sometimes after a while). Some calls have a
//! timeout, and some are dropped by their caller mid-rounds. The tool echoes every answer it
//! received, in order, and the test checks each call's outcome against a reference computed
//! from the seed alone, for a client of the stateless era (rounds of `input_required`) and one
//! of the handshake era (real server-to-client requests): the two agree except where the
//! revision says they differ (the round limit is the stateless era's). At the end no
//! handler runs on the server and every request either side received or sent has its one
//! outcome (the telemetry of both ends), so neither end keeps pending state.
//!
//! `MRTR_SEEDS=N` sets how many seeds run (default 200); `MRTR_SEED=<seed>` replays one.

use std::collections::BTreeMap;
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::{Either, join_all, select};
use mcp_proto::session::Discovery;
use mcp_proto::{Duration, ErrorKind, ProtocolVersion};
use mcp_service::memory::duplex;
use mcp_service::mrtr::{MAX_ROUNDS, RequestStateKeys};
use mcp_service::schema::{
    CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Root, SamplingMessage, Tool,
};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::telemetry::{Direction, Telemetry, TelemetryEvent};
use mcp_service::{Client, ClientOptions, Error, Runtime, Server};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A small seeded generator (xorshift64*): the same seed gives the same plans everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }

    fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }
}

/// What a handler asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Elicit,
    Sample,
    Roots,
}

/// One ask: its kind, and whether it names its key (else the numbered key is used).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Ask {
    kind: Kind,
    keyed: bool,
}

/// A call's plan, passed to the tool as its arguments.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Plan {
    call: usize,
    /// The call has a deadline: its answers may take time, none fails.
    timed: bool,
    rounds: Vec<Vec<Ask>>,
}

/// How a call's caller waits.
#[derive(Clone, Copy, Debug)]
enum Limit {
    None,
    /// `ToolCall::timeout`.
    Timeout(Duration),
    /// The caller drops the call after this long.
    Drop(Duration),
}

/// A call's outcome as the caller sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Text(String),
    /// A tool-level failure (`isError`).
    ToolError(String),
    Error(ErrorKind, String),
    Timeout,
    Dropped,
}

/// How a client answers one ask (from the seed and the ask's tag alone).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Accept(String),
    Decline,
    Cancel,
    Fail,
    Said(String),
    Roots(usize),
}

fn hash(seed: u64, tag: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for b in tag.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (h >> 29)
}

/// The tag of an ask, carried in its message so the client's handler can answer it.
fn tag(call: usize, round: usize, ask: usize, timed: bool) -> String {
    format!("c{call}r{round}a{ask}{}", if timed { "t" } else { "" })
}

fn tag_in(text: &str) -> Option<&str> {
    let start = text.find("<<")? + 2;
    let end = start + text[start..].find(">>")?;
    Some(&text[start..end])
}

/// The answer to the ask tagged `tag`, and how long (whole seconds) the client takes.
fn answer(seed: u64, kind: Kind, tag: &str, roots: usize) -> (Answer, u64) {
    let h = hash(seed, tag);
    let timed = tag.ends_with('t');
    let delay = if timed { (h >> 40) % 3 } else { 0 };
    let value = format!("v{}", (h >> 8) % 10_000);
    let pick = h % 40;
    let a = match kind {
        Kind::Roots => return (Answer::Roots(roots), 0),
        _ if pick == 0 && !timed => Answer::Fail,
        Kind::Sample => Answer::Said(value),
        Kind::Elicit if pick <= 4 => Answer::Decline,
        Kind::Elicit if pick <= 6 => Answer::Cancel,
        Kind::Elicit => Answer::Accept(value),
    };
    (a, delay)
}

fn entry(a: &Answer) -> String {
    match a {
        Answer::Accept(v) => format!("e:{v}"),
        Answer::Decline => "e:decline".into(),
        Answer::Cancel => "e:cancel".into(),
        Answer::Said(v) => format!("s:{v}"),
        Answer::Roots(n) => format!("r:{n}"),
        Answer::Fail => unreachable!("a failed ask has no entry"),
    }
}

fn refusal(call: usize) -> String {
    format!("sim-refused c{call}")
}

/// The reference: what the caller of `plan` under `limit` must see, in the stateless era or
/// the handshake era.
fn expected(seed: u64, plan: &Plan, limit: Limit, roots: usize, stateless: bool) -> Outcome {
    let mut log = Vec::new();
    let mut elapsed = 0u64;
    let mut outcome = None;
    for (r, round) in plan.rounds.iter().enumerate() {
        // The stateless era refuses a request that would need more rounds than the limit.
        if stateless && r >= MAX_ROUNDS as usize {
            outcome = Some(Outcome::Error(ErrorKind::LimitExceeded, String::new()));
            break;
        }
        let answers: Vec<(Answer, u64)> = round
            .iter()
            .enumerate()
            .map(|(i, a)| answer(seed, a.kind, &tag(plan.call, r, i, plan.timed), roots))
            .collect();
        // The asks of a round run together.
        elapsed += answers.iter().map(|(_, d)| *d).max().unwrap_or(0);
        if answers.iter().any(|(a, _)| *a == Answer::Fail) {
            outcome = Some(Outcome::Error(ErrorKind::InvalidParams, refusal(plan.call)));
            break;
        }
        log.extend(answers.iter().map(|(a, _)| entry(a)));
    }
    let outcome =
        outcome.unwrap_or_else(|| Outcome::Text(format!("c{}:{}", plan.call, log.join("|"))));
    // Deadlines fall on half seconds, answers on whole ones: never a tie.
    match limit {
        Limit::Timeout(t) if elapsed * 1_000_000 > t.as_micros() => Outcome::Timeout,
        Limit::Drop(t) if elapsed * 1_000_000 > t.as_micros() => Outcome::Dropped,
        _ => outcome,
    }
}

/// How many `tools/call` requests a client of the stateless era sends for `plan` when no
/// deadline cuts it short: one per round of input, and the one that completes or fails.
fn requests(seed: u64, plan: &Plan, roots: usize) -> usize {
    for (r, round) in plan.rounds.iter().enumerate() {
        if r >= MAX_ROUNDS as usize {
            return r + 1;
        }
        let fails = round.iter().enumerate().any(|(i, a)| {
            answer(seed, a.kind, &tag(plan.call, r, i, plan.timed), roots).0 == Answer::Fail
        });
        if fails {
            // The client's handler failed: the call ends on the client, no retry.
            return r + 1;
        }
    }
    plan.rounds.len() + 1
}

/// The calls of a seed.
fn plans(seed: u64) -> Vec<(Plan, Limit)> {
    let mut rng = Rng::new(seed);
    let calls = 1 + rng.index(5);
    (0..calls)
        .map(|call| {
            let n = if rng.chance(80) {
                MAX_ROUNDS as usize + 1 + rng.index(2)
            } else {
                1 + rng.index(6)
            };
            let limit = match rng.below(10) {
                0 | 1 => Limit::Timeout(Duration::from_millis(500 + 1_000 * rng.below(6))),
                2 => Limit::Drop(Duration::from_millis(500 + 1_000 * rng.below(5))),
                _ => Limit::None,
            };
            let rounds = (0..n)
                .map(|_| {
                    (0..1 + rng.index(3))
                        .map(|_| Ask {
                            kind: rng.pick(&[
                                Kind::Elicit,
                                Kind::Elicit,
                                Kind::Sample,
                                Kind::Roots,
                            ]),
                            keyed: rng.chance(500),
                        })
                        .collect()
                })
                .collect();
            let timed = !matches!(limit, Limit::None);
            (
                Plan {
                    call,
                    timed,
                    rounds,
                },
                limit,
            )
        })
        .collect()
}

fn form(tag: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "message": format!("value for <<{tag}>>?"),
        "requestedSchema": {
            "type": "object",
            "properties": {"v": {"type": "string"}},
            "required": ["v"]
        }
    }))
    .unwrap()
}

/// One ask of the tool, as the entry it logs.
async fn ask(cx: &ToolContext, plan: &Plan, r: usize, i: usize, a: Ask) -> Result<String, Error> {
    let tag = tag(plan.call, r, i, plan.timed);
    let key = format!("k{r}-{i}");
    match a.kind {
        Kind::Elicit => {
            let res = match a.keyed {
                true => cx.elicit_as(&key, form(&tag)).await?,
                false => cx.elicit(form(&tag)).await?,
            };
            let v = serde_json::to_value(&res).unwrap();
            Ok(match v["action"].as_str() {
                Some("accept") => format!("e:{}", v["content"]["v"].as_str().unwrap_or("?")),
                Some(other) => format!("e:{other}"),
                None => "e:?".into(),
            })
        }
        Kind::Sample => {
            let p = CreateMessageRequestParams::new(
                vec![SamplingMessage::user(format!("say <<{tag}>>"))],
                16,
            );
            let res = match a.keyed {
                true => cx.create_message_as(&key, p).await?,
                false => cx.create_message(p).await?,
            };
            let said = res
                .content
                .blocks()
                .iter()
                .find_map(|b| b.as_text())
                .unwrap_or("?")
                .to_owned();
            Ok(format!("s:{said}"))
        }
        Kind::Roots => {
            let res = match a.keyed {
                true => cx.list_roots_as(&key).await?,
                false => cx.list_roots().await?,
            };
            Ok(format!("r:{}", res.roots.len()))
        }
    }
}

/// Counts the runs of the tool's handler in progress.
struct Live(Arc<AtomicUsize>);

impl Live {
    fn new(n: &Arc<AtomicUsize>) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Live(n.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Requests received and completed, per direction and method, as one end's telemetry saw
/// them.
#[derive(Default, Debug)]
struct Seen {
    received: BTreeMap<String, usize>,
    completed: BTreeMap<(bool, String), usize>,
}

fn observe(seen: &Arc<Mutex<Seen>>) -> Telemetry {
    let mut t = Telemetry::default();
    let seen = seen.clone();
    t.observe(move |e| {
        let mut s = seen.lock().unwrap();
        match e {
            TelemetryEvent::RequestReceived { method, .. } => {
                *s.received.entry(method.clone()).or_default() += 1;
            }
            TelemetryEvent::RequestCompleted {
                direction, method, ..
            } => {
                let inbound = *direction == Direction::Inbound;
                *s.completed.entry((inbound, method.clone())).or_default() += 1;
            }
            _ => {}
        }
    });
    t
}

fn server(live: Arc<AtomicUsize>, telemetry: Telemetry) -> Server {
    Server::builder("mrtr-sim", "1")
        .versions(&ProtocolVersion::ALL)
        .request_state_keys(RequestStateKeys::new("mrtr-sim", [("k", vec![3u8; 32])]).unwrap())
        .telemetry(telemetry)
        .tool(
            Tool::new("rounds", schema_of(json!({"type": "object"}))),
            move |plan: Plan, cx: ToolContext| {
                let live = live.clone();
                async move {
                    let _live = Live::new(&live);
                    let mut log = Vec::new();
                    for (r, round) in plan.rounds.iter().enumerate() {
                        let asks = round
                            .iter()
                            .enumerate()
                            .map(|(i, a)| ask(&cx, &plan, r, i, *a));
                        for answer in join_all(asks).await {
                            log.push(answer?);
                        }
                    }
                    Ok(CallToolResult::text(format!(
                        "c{}:{}",
                        plan.call,
                        log.join("|")
                    )))
                }
            },
        )
        .build()
}

fn client_options(
    seed: u64,
    rt: &impl Runtime,
    stateless: bool,
    roots: usize,
    telemetry: Telemetry,
) -> ClientOptions {
    let (discovery, versions): (Discovery, &[ProtocolVersion]) = if stateless {
        (Discovery::Discover, &ProtocolVersion::ALL)
    } else {
        (Discovery::Initialize, &ProtocolVersion::HANDSHAKE)
    };
    let (r1, r2) = (rt.clone(), rt.clone());
    ClientOptions::new("mrtr-sim-client", "1")
        .versions(versions)
        .discovery(discovery)
        .telemetry(telemetry)
        .roots(
            (0..roots)
                .map(|i| Root::new(format!("file:///r{i}")))
                .collect(),
        )
        .elicitation(move |p: ElicitRequestParams, _| {
            let text = serde_json::to_string(&p).unwrap();
            let tag = tag_in(&text).unwrap_or("").to_owned();
            let (a, delay) = answer(seed, Kind::Elicit, &tag, roots);
            let sleep = r1.sleep_until(r1.now() + Duration::from_secs(delay));
            async move {
                sleep.await;
                let v = match a {
                    Answer::Accept(v) => json!({"action": "accept", "content": {"v": v}}),
                    Answer::Decline => json!({"action": "decline"}),
                    Answer::Cancel => json!({"action": "cancel"}),
                    _ => return Err(Error::invalid_params(refusal_of(&tag))),
                };
                Ok(serde_json::from_value::<ElicitResult>(v).unwrap())
            }
        })
        .sampling(move |p: CreateMessageRequestParams, _| {
            let text = serde_json::to_string(&p).unwrap();
            let tag = tag_in(&text).unwrap_or("").to_owned();
            let (a, delay) = answer(seed, Kind::Sample, &tag, roots);
            let sleep = r2.sleep_until(r2.now() + Duration::from_secs(delay));
            async move {
                sleep.await;
                match a {
                    Answer::Said(v) => Ok(CreateMessageResult::text("sim-model", v)),
                    _ => Err(Error::invalid_params(refusal_of(&tag))),
                }
            }
        })
}

/// The refusal of the call an ask's tag names.
fn refusal_of(tag: &str) -> String {
    let call = tag
        .strip_prefix('c')
        .and_then(|t| t.split('r').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or(usize::MAX);
    refusal(call)
}

fn outcome_of(r: Result<CallToolResult, Error>) -> Outcome {
    match r {
        Ok(res) => {
            let text = res
                .content
                .first()
                .and_then(|c| c.as_text())
                .unwrap_or("")
                .to_owned();
            if res.is_error == Some(true) {
                Outcome::ToolError(text)
            } else {
                Outcome::Text(text)
            }
        }
        Err(e) if e.kind() == ErrorKind::Timeout => Outcome::Timeout,
        // The round limit's message is the server's own.
        Err(e) if e.kind() == ErrorKind::LimitExceeded => {
            Outcome::Error(ErrorKind::LimitExceeded, String::new())
        }
        Err(e) => Outcome::Error(e.kind(), e.message().to_owned()),
    }
}

/// Runs the calls of `seed` with a client of one era; the outcomes, in call order.
fn run(seed: u64, stateless: bool) -> Vec<Outcome> {
    let sim = Sim::new();
    let rt = sim.runtime();
    let roots = (seed % 4) as usize;
    let live = Arc::new(AtomicUsize::new(0));
    let server_seen = Arc::new(Mutex::new(Seen::default()));
    let client_seen = Arc::new(Mutex::new(Seen::default()));
    let srv = server(live.clone(), observe(&server_seen));
    let (client_end, server_end) = duplex(256 * 1024);
    let served = Arc::new(AtomicUsize::new(0));
    {
        let rt2 = rt.clone();
        let served = served.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
            served.store(1, Ordering::SeqCst);
        }));
    }
    let options = client_options(seed, &rt, stateless, roots, observe(&client_seen));
    let plans = plans(seed);
    let calls = plans.clone();
    let rt2 = rt.clone();
    let outcomes = sim
        .block_on(async move {
            let client = Client::connect(rt2.clone(), client_end, options)
                .await
                .unwrap_or_else(|e| panic!("[seed {seed}] connect: {e}"));
            let version = client.protocol_version();
            assert_eq!(version.is_stateless(), stateless, "[seed {seed}] {version}");
            let start = rt2.now();
            let runs = calls.into_iter().map(|(plan, limit)| {
                let call = client.call_tool("rounds", serde_json::to_value(&plan).unwrap());
                let rt = rt2.clone();
                async move {
                    match limit {
                        Limit::None => outcome_of(call.await),
                        Limit::Timeout(t) => outcome_of(call.timeout(t).await),
                        Limit::Drop(t) => {
                            let sleep = rt.sleep_until(start + t);
                            match select(Box::pin(call.into_future()), sleep).await {
                                Either::Left((r, _)) => outcome_of(r),
                                Either::Right(((), _)) => Outcome::Dropped,
                            }
                        }
                    }
                }
            });
            let outcomes = join_all(runs).await;
            // What dropped and timed-out calls left behind settles (cancellations travel,
            // handlers end); then the client still works and closes.
            rt2.sleep_until(rt2.now() + Duration::from_secs(5)).await;
            let after = client
                .call_tool(
                    "rounds",
                    serde_json::to_value(Plan {
                        call: 99,
                        timed: false,
                        rounds: vec![vec![Ask {
                            kind: Kind::Roots,
                            keyed: true,
                        }]],
                    })
                    .unwrap(),
                )
                .await;
            assert_eq!(
                outcome_of(after),
                Outcome::Text(format!("c99:r:{roots}")),
                "[seed {seed}] a call after the others"
            );
            client.shutdown().await;
            rt2.sleep_until(rt2.now() + Duration::from_secs(5)).await;
            outcomes
        })
        .unwrap_or_else(|| panic!("[seed {seed}] the simulation deadlocked"));
    let era = if stateless { "2026-07-28" } else { "handshake" };
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "[seed {seed} {era}] the server did not end with the connection"
    );
    assert_eq!(
        live.load(Ordering::SeqCst),
        0,
        "[seed {seed} {era}] a handler still runs on the server"
    );
    // Every request either end received has its one outcome there; every call the server
    // received has its outcome at the client; every input request the server sent (handshake
    // era) was received by the client.
    let s = server_seen.lock().unwrap();
    let c = client_seen.lock().unwrap();
    for (end, seen) in [("server", &*s), ("client", &*c)] {
        for (method, n) in &seen.received {
            let done = seen
                .completed
                .get(&(true, method.clone()))
                .copied()
                .unwrap_or(0);
            assert_eq!(
                done, *n,
                "[seed {seed} {era}] the {end} received {n} `{method}` and completed {done}: {seen:?}"
            );
        }
    }
    let received = |seen: &Seen, m: &str| seen.received.get(m).copied().unwrap_or(0);
    let sent = |seen: &Seen, m: &str| {
        seen.completed
            .get(&(false, m.to_owned()))
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(
        sent(&c, "tools/call"),
        received(&s, "tools/call"),
        "[seed {seed} {era}] calls sent and received: {c:?} {s:?}"
    );
    for m in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert_eq!(
            sent(&s, m),
            received(&c, m),
            "[seed {seed} {era}] `{m}` sent and received: {s:?} {c:?}"
        );
        if stateless {
            assert_eq!(
                received(&c, m),
                0,
                "[seed {seed}] a server-to-client `{m}` in 2026-07-28"
            );
        }
    }
    // The stateless era's rounds are retries: one request per round; the handshake era's
    // calls are one request each (the last call, one round, among them).
    let (mut least, mut exact) = (if stateless { 2 } else { 1 }, true);
    for (plan, limit) in &plans {
        match (stateless, limit) {
            (false, _) => least += 1,
            (true, Limit::None) => least += requests(seed, plan, roots),
            (true, _) => {
                least += 1;
                exact = false;
            }
        }
    }
    let calls = received(&s, "tools/call");
    assert!(
        calls >= least && (!exact || calls == least),
        "[seed {seed} {era}] the server received {calls} calls, the plans make {least}{}",
        if exact { "" } else { " or more" }
    );
    outcomes
}

/// Checks the calls of `seed` in both eras; counts of (completed, timed out or dropped,
/// failed, over the round limit in the stateless era only).
fn check_seed(seed: u64) -> [usize; 4] {
    let plans = plans(seed);
    let roots = (seed % 4) as usize;
    let modern = run(seed, true);
    let old = run(seed, false);
    let mut counts = [0; 4];
    for ((plan, limit), (m, o)) in plans.iter().zip(modern.iter().zip(old.iter())) {
        let want_m = expected(seed, plan, *limit, roots, true);
        let want_o = expected(seed, plan, *limit, roots, false);
        assert_eq!(
            *m,
            want_m,
            "[seed {seed}] 2026-07-28 call {} ({limit:?}, {} rounds)",
            plan.call,
            plan.rounds.len()
        );
        assert_eq!(
            *o,
            want_o,
            "[seed {seed}] handshake-era call {} ({limit:?}, {} rounds)",
            plan.call,
            plan.rounds.len()
        );
        // The eras agree but for the stateless era's round limit.
        if plan.rounds.len() <= MAX_ROUNDS as usize {
            assert_eq!(
                m, o,
                "[seed {seed}] the eras disagree on call {}",
                plan.call
            );
        } else if m != o {
            counts[3] += 1;
        }
        match o {
            Outcome::Text(_) => counts[0] += 1,
            Outcome::Timeout | Outcome::Dropped => counts[1] += 1,
            _ => counts[2] += 1,
        }
    }
    counts
}

#[test]
fn seeded_rounds_end_as_the_reference_says_in_both_eras() {
    if let Ok(seed) = std::env::var("MRTR_SEED") {
        check_seed(seed.parse().expect("MRTR_SEED must be an integer"));
        return;
    }
    let seeds: u64 = std::env::var("MRTR_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut total = [0; 4];
    for seed in 0..seeds {
        for (t, c) in total.iter_mut().zip(check_seed(seed)) {
            *t += c;
        }
    }
    eprintln!(
        "mrtr simulation (handshake era): {} completed, {} timed out or dropped, {} failed; {} over the round limit in 2026-07-28 only",
        total[0], total[1], total[2], total[3]
    );
    if seeds >= 100 {
        assert!(total.iter().all(|&n| n > 0), "{total:?}");
    }
}

#[test]
fn the_reference_sees_the_round_limit_only_in_the_stateless_era() {
    let plan = Plan {
        call: 0,
        timed: true,
        rounds: vec![
            vec![Ask {
                kind: Kind::Roots,
                keyed: false,
            }];
            MAX_ROUNDS as usize + 1
        ],
    };
    let limited = Outcome::Error(ErrorKind::LimitExceeded, String::new());
    assert_eq!(expected(1, &plan, Limit::None, 2, true), limited);
    let all = vec!["r:2"; MAX_ROUNDS as usize + 1].join("|");
    assert_eq!(
        expected(1, &plan, Limit::None, 2, false),
        Outcome::Text(format!("c0:{all}"))
    );
}

/// The plans exercise what the simulation claims: over-limit calls, every ask kind keyed and
/// not, timeouts, drops and failing answers.
#[test]
fn the_plans_cover_limits_kinds_keys_deadlines_and_failures() {
    let mut over = 0;
    let mut kinds = BTreeMap::new();
    let (mut timeouts, mut drops, mut fails) = (0, 0, 0);
    for seed in 0..200 {
        for (plan, limit) in plans(seed) {
            over += usize::from(plan.rounds.len() > MAX_ROUNDS as usize);
            match limit {
                Limit::Timeout(_) => timeouts += 1,
                Limit::Drop(_) => drops += 1,
                Limit::None => {}
            }
            for (r, round) in plan.rounds.iter().enumerate() {
                for (i, a) in round.iter().enumerate() {
                    *kinds.entry((format!("{:?}", a.kind), a.keyed)).or_insert(0) += 1;
                    let (ans, _) = answer(seed, a.kind, &tag(plan.call, r, i, plan.timed), 1);
                    fails += usize::from(ans == Answer::Fail);
                }
            }
        }
    }
    assert!(over > 0 && timeouts > 0 && drops > 0 && fails > 0);
    assert_eq!(kinds.len(), 6, "{kinds:?}");
}
