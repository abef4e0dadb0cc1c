//! One seeded simulation: a client and a server conversing over a hostile link.

use alloc::format;
use alloc::vec::Vec;

use super::{CLIENT, Counters, LinkOptions, Pair, SERVER, raw};
use crate::session::{Config, RequestOptions};
use crate::{Duration, ErrorKind, Instant, RequestId};

/// How many steps a simulation may take before it counts as a livelock.
pub const STEP_CAP: u64 = 20_000;

/// What one simulation went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Event counters of both sides.
    pub counters: Counters,
    /// Steps until both sides closed and the link drained.
    pub steps: u64,
}

/// Runs the simulation for `seed`: a client and a server [`Pair`] over a link that splits
/// bytes at random points, delays them (keeping stream order), sometimes injects garbage
/// lines between messages, and may drop the connection. Virtual time jumps to the next
/// deadline when nothing else is due. Both applications issue, answer, cancel and report
/// progress at random for a while; then the client closes gracefully, the applications
/// finish their work, and the run must settle (both sides closed, the link empty, every
/// request with exactly one outcome) within [`STEP_CAP`] steps. Every invariant of
/// [`Pair`] is checked after every step.
///
/// # Panics
///
/// When an invariant breaks or the run does not settle; the message names the seed.
pub fn simulate(seed: u64) -> Stats {
    let mut rng = super::Rng::new(seed);
    let client_cfg = Config::new("sim-client", "1")
        .capabilities(raw("{\"roots\":{\"listChanged\":true},\"sampling\":{}}"));
    let mut server_cfg = Config::new("sim-server", "1")
        .capabilities(raw("{\"tools\":{\"listChanged\":true},\"resources\":{}}"));
    server_cfg.max_inbound_in_flight = 16 + rng.index(32);
    let garbage = if rng.chance(300) { rng.below(50) } else { 0 };
    let drop_at = rng.chance(200).then(|| rng.below(400));
    let work_steps = 50 + rng.below(300);
    let options = LinkOptions {
        split: 1000,
        max_delay: Duration::from_micros(3_000),
        garbage,
        ..LinkOptions::PERFECT
    };
    let mut p = Pair::seeded(client_cfg, server_cfg, seed, options);
    p.rng = rng;
    p.record = false;
    p.now = Instant::from_micros(p.rng.below(1 << 40));
    p.initialize(CLIENT)
        .unwrap_or_else(|e| panic!("[seed {seed}] initialize failed: {e}"));
    let mut closing = false;

    for step in 0..STEP_CAP {
        // Application actions while the workload runs; then a graceful close by the client.
        if step < work_steps {
            act(&mut p, CLIENT);
            act(&mut p, SERVER);
        } else {
            if !closing {
                closing = true;
                p.close(CLIENT);
            }
            // Finish outstanding work so that the server can drain.
            act(&mut p, SERVER);
            for side in [SERVER, CLIENT] {
                let open: Vec<RequestId> = p.models[side]
                    .open
                    .iter()
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in open {
                    p.respond_marked(side, &id, None);
                }
            }
        }
        if drop_at == Some(step) {
            p.drop_connection(true);
        }
        p.drain();
        // A side that closed and flushed ends its output (EOF for its peer).
        for side in [CLIENT, SERVER] {
            if p.sessions[side].is_closed() && !p.sessions[side].has_transmit() {
                p.end_output(side);
            }
        }

        // Deliver what is due, else jump to the next deadline.
        let app_busy = step < work_steps || !p.models[SERVER].open.is_empty();
        let now = p.now;
        let next = match p.next_due() {
            Some(t) if !app_busy || t <= now + Duration::from_micros(1_000) => t.max(now),
            _ => now + Duration::from_micros(p.rng.below(1_000)),
        };
        p.now = next;
        p.deliver_due();
        p.advance_to(next);
        p.drain();

        if p.models[CLIENT].closed && p.models[SERVER].closed && p.link_idle() {
            p.check_settled();
            return Stats {
                counters: p.counters(),
                steps: step,
            };
        }
    }
    panic!(
        "[seed {seed}] did not settle within {STEP_CAP} steps (client {:?}, server {:?})",
        p.sessions[CLIENT].state(),
        p.sessions[SERVER].state()
    );
}

/// One side's application does something, maybe.
fn act(p: &mut Pair, side: usize) {
    let who = p.who(side);
    if p.models[side].closed {
        return;
    }
    // Work on an inbound request.
    if !p.models[side].open.is_empty() && p.rng.chance(400) {
        let (id, has_token) = p.models[side].open[p.rng.index(p.models[side].open.len())].clone();
        match p.rng.below(10) {
            0..=4 => {
                let text = format!("{id}");
                let payload = format!(
                    "{{\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}",
                    serde_json::to_string(&text).unwrap_or_default()
                );
                p.respond_marked(side, &id, Some(&payload));
            }
            5 => p.respond_error_marked(side, &id, -32603, "nope", None),
            _ if has_token => {
                let last = p.models[side].reported.get(&id).copied().unwrap_or(0.0);
                let next = if p.rng.chance(100) {
                    last
                } else {
                    last + 1.0 + p.rng.below(3) as f64
                };
                let _ = p.report_progress(side, &id, next, Some(100.0), None);
            }
            _ => {}
        }
    }
    // A cancelled request is never answered: the application may still try.
    if let Some(id) = p.models[side].cancelled.iter().next().cloned()
        && p.rng.chance(50)
    {
        let r = p.respond(side, &id, raw("{}"));
        assert!(r.is_err(), "{who}: respond after cancel of {id} succeeded");
    }
    if !p.models[side].ready {
        return;
    }
    // Issue a request.
    if p.rng.chance(150) && p.sessions[side].outbound_in_flight() < 40 {
        let (method, params) = if side == CLIENT {
            match p.rng.below(4) {
                0 => ("tools/list", None),
                1 => ("ping", None),
                2 => ("resources/read", Some(raw("{\"uri\":\"test://x\"}"))),
                _ => (
                    "tools/call",
                    Some(raw(
                        "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\\ny\"}}",
                    )),
                ),
            }
        } else {
            match p.rng.below(2) {
                0 => ("roots/list", None),
                _ => (
                    "sampling/createMessage",
                    Some(raw("{\"messages\":[],\"maxTokens\":1}")),
                ),
            }
        };
        let opts = RequestOptions {
            timeout: p
                .rng
                .chance(300)
                .then(|| Duration::from_micros(1 + p.rng.below(20_000))),
            progress: p.rng.chance(500),
            reset_timeout_on_progress: p.rng.chance(500),
            max_total_timeout: p
                .rng
                .chance(200)
                .then(|| Duration::from_micros(p.rng.below(50_000))),
            related_to: None,
        };
        if let Err(e) = p.send_request(side, method, params, opts) {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::TransportClosed | ErrorKind::LimitExceeded
                ),
                "{who}: send_request({method}) failed: {e}"
            );
        }
    }
    // Cancel one of ours.
    if p.rng.chance(40) {
        let open: Vec<i64> = p.models[side].unresolved().collect();
        if !open.is_empty() {
            let id = RequestId::Number(*p.rng.pick(&open));
            let _ = p.cancel(side, &id, Some("sim"));
        }
    }
    // A notification now and then.
    if p.rng.chance(30) {
        let method = if side == CLIENT {
            "notifications/roots/list_changed"
        } else {
            "notifications/tools/list_changed"
        };
        let r = p.notify(side, method, None, None);
        assert!(
            r.as_ref()
                .err()
                .is_none_or(|e| e.kind() == ErrorKind::TransportClosed),
            "{who}: notify({method}) gave {r:?}"
        );
    }
}
