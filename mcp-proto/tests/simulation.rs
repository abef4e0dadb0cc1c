//! Deterministic simulation: a client and a server session over a seeded, hostile link, run
//! by [`mcp_proto::testing::simulate`] (see there for the link, the workload and the
//! invariants checked after every step; they are the ones of [`mcp_proto::testing::Pair`]).
//!
//! `SIM_SEEDS=N` sets how many seeds run (default 10,000); a failing seed is printed and is
//! replayed alone with `SIM_SEED=<seed> cargo test -p mcp-proto --features testing --test
//! simulation`.

use mcp_proto::testing::{Counters, simulate};

fn run_seed(seed: u64) -> Result<Counters, String> {
    std::panic::catch_unwind(|| simulate(seed).counters).map_err(|e| {
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
