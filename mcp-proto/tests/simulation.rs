//! Deterministic simulation: a client and a server session over a seeded, hostile link, run
//! by [`mcp_proto::testing::simulate`] (see there for the link, the workload and the
//! invariants checked after every step; they are the ones of [`mcp_proto::testing::Pair`]).
//!
//! `SIM_SEEDS=N` sets how many seeds run (default 10,000); a failing seed is printed and is
//! replayed alone with `SIM_SEED=<seed> cargo test -p mcp-proto --features testing --test
//! simulation simulated_pairs`.
//!
//! The era setups ([`mcp_proto::testing::Eras::ALL`]: clients starting with the handshake,
//! `server/discover` only or `Auto`, against servers of the handshake era, the stateless era
//! or both) run `SIM_ERA_SEEDS` seeds each (default 400); a failing one is replayed with
//! `SIM_ERA=<index> SIM_SEED=<seed> cargo test -p mcp-proto --features testing --test
//! simulation era`.

use mcp_proto::ProtocolVersion;
use mcp_proto::testing::{Counters, Eras, Stats, simulate, simulate_eras};

fn run_seed(seed: u64) -> Result<Counters, String> {
    run_eras(seed, Eras::HANDSHAKE).map(|s| s.counters)
}

/// One run of a setup: its index in `Eras::ALL`, its seed, and what came of it.
type EraRun = (usize, u64, Result<Stats, String>);

fn run_eras(seed: u64, eras: Eras) -> Result<Stats, String> {
    std::panic::catch_unwind(|| simulate_eras(seed, eras)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn each_era_setup_keeps_its_invariants_and_negotiates_the_expected_version() {
    if let Ok(seed) = std::env::var("SIM_SEED") {
        let seed: u64 = seed.parse().expect("SIM_SEED must be an integer");
        let index: usize = std::env::var("SIM_ERA")
            .expect("SIM_ERA names the setup")
            .parse()
            .expect("SIM_ERA must be an index into Eras::ALL");
        simulate_eras(seed, Eras::ALL[index]);
        return;
    }
    let seeds: u64 = std::env::var("SIM_ERA_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let jobs: Vec<(usize, u64)> = (0..Eras::ALL.len())
        .flat_map(|i| (0..seeds).map(move |s| (i, s)))
        .collect();
    std::panic::set_hook(Box::new(|_| {}));
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let results: Vec<Vec<EraRun>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let jobs = &jobs;
                s.spawn(move || {
                    jobs.iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|&(i, seed)| (i, seed, run_eras(seed, Eras::ALL[i])))
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let _ = std::panic::take_hook();
    let mut failures = Vec::new();
    // Per setup: the counters, and how many seeds became ready at the expected version.
    let mut per: Vec<(Counters, u64)> = vec![(Counters::default(), 0); Eras::ALL.len()];
    for (i, seed, r) in results.into_iter().flatten() {
        match r {
            Ok(stats) => {
                per[i].0.add(&stats.counters);
                if stats.version.is_some() && stats.version == Eras::ALL[i].expected() {
                    per[i].1 += 1;
                }
            }
            Err(msg) => failures.push((i, seed, msg)),
        }
    }
    for (i, seed, msg) in &failures {
        eprintln!(
            "{:?} seed {seed} failed: {msg}\n  replay: SIM_ERA={i} SIM_SEED={seed} cargo test -p mcp-proto --features testing --test simulation era",
            Eras::ALL[*i]
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed (first: {:?})",
        failures.len(),
        jobs.len(),
        failures.first()
    );
    for (i, (c, at_expected)) in per.iter().enumerate() {
        let eras = Eras::ALL[i];
        let expected = eras.expected();
        eprintln!(
            "{eras:?}: expected {expected:?}, ready at it {at_expected}/{seeds}, results {}, stateless results {}, -32022 {}, timeouts {}, cancellations {}, progress {}",
            c.results,
            c.stateless_results,
            c.version_refusals,
            c.timeouts,
            c.cancellations,
            c.progress
        );
        if seeds < 200 {
            continue;
        }
        match expected {
            // Most runs negotiate (garbage on the link, a drop or an early close stop some).
            Some(v) => {
                assert!(
                    *at_expected > seeds / 2,
                    "{eras:?}: only {at_expected} of {seeds} runs became ready at {v}"
                );
                assert!(
                    c.results > seeds,
                    "{eras:?}: too few results ({})",
                    c.results
                );
                assert!(
                    c.timeouts > 0 && c.cancellations > 0 && c.progress > 0,
                    "{eras:?}: {c:?}"
                );
                if v == ProtocolVersion::V2026_07_28 {
                    assert!(
                        c.stateless_results > seeds,
                        "{eras:?}: too few stateless-era results ({})",
                        c.stateless_results
                    );
                }
            }
            None => assert_eq!(*at_expected, 0, "{eras:?}"),
        }
        if eras.server_versions.list().iter().any(|v| v.is_stateless()) {
            assert!(
                c.version_refusals > seeds / 10,
                "{eras:?}: too few -32022 refusals ({})",
                c.version_refusals
            );
        } else {
            assert_eq!(c.version_refusals + c.stateless_results, 0, "{eras:?}");
        }
    }
}

#[test]
fn the_expected_versions_follow_the_revision() {
    use mcp_proto::session::Discovery::{Auto, Discover, Initialize};
    use mcp_proto::testing::Versions::{Both, Handshake, Stateless};
    let latest = Some(ProtocolVersion::LATEST_HANDSHAKE);
    let modern = Some(ProtocolVersion::V2026_07_28);
    for (client, versions, server, expected) in [
        (Initialize, Handshake, Handshake, latest),
        (Initialize, Handshake, Both, latest),
        (Initialize, Handshake, Stateless, None),
        (Discover, Both, Both, modern),
        (Discover, Both, Stateless, modern),
        (Discover, Both, Handshake, None),
        (Auto, Both, Both, modern),
        (Auto, Both, Stateless, modern),
        (Auto, Both, Handshake, latest),
        (Auto, Stateless, Handshake, None),
        (Auto, Handshake, Both, latest),
    ] {
        let eras = Eras::new(client, versions, server);
        assert_eq!(eras.expected(), expected, "{eras:?}");
    }
    assert_eq!(Eras::ALL.len(), 15);
    assert!(Eras::ALL.contains(&Eras::HANDSHAKE));
    assert!(Eras::ALL.contains(&Eras::from_seed(7)));
}

#[test]
fn simulated_pairs_keep_their_invariants() {
    if let Ok(seed) = std::env::var("SIM_SEED") {
        let seed: u64 = seed.parse().expect("SIM_SEED must be an integer");
        simulate(seed);
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
    let results: Vec<(Counters, Vec<(u64, String)>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut total = Counters::default();
                    let mut failed = Vec::new();
                    let mut seed = t;
                    while seed < seeds {
                        match run_seed(seed) {
                            Ok(c) => total.add(&c),
                            Err(msg) => failed.push((seed, msg)),
                        }
                        seed += threads;
                    }
                    (total, failed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let _ = std::panic::take_hook();
    let mut total = Counters::default();
    let mut failures = Vec::new();
    for (c, f) in results {
        total.add(&c);
        failures.extend(f);
    }
    for (seed, msg) in &failures {
        eprintln!(
            "seed {seed} failed: {msg}\n  replay: SIM_SEED={seed} cargo test -p mcp-proto --features testing --test simulation"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {seeds} seeds failed (first: {:?})",
        failures.len(),
        failures.first()
    );
    let counters = [
        ("results", total.results),
        ("timeouts", total.timeouts),
        ("cancellations", total.cancellations),
        ("progress", total.progress),
        ("invalid messages", total.invalid),
        ("failed by close", total.failed_by_close),
    ];
    for (name, n) in counters {
        eprintln!("simulation: {name}: {n}");
        if seeds >= 1_000 {
            assert!(
                n > seeds / 100,
                "the simulation exercised too few {name} ({n})"
            );
        }
    }
}
