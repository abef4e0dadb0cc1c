//! A simulated client/server pair over a bad link, driven by a xorshift PRNG seeded from the
//! first 8 input bytes (the next bytes tune the link): messages are lost, duplicated,
//! corrupted, split at any byte, delayed, and garbage lines are injected; the applications
//! send requests, answer, report progress, cancel and close at random while time moves.
//! A seventh knob picks the eras: the client starts with `initialize`, or with `start` in
//! `Discover` or `Auto` (`server/discover` first, the stateless era's `_meta` on every
//! request), and the server serves the client's versions, the handshake era only, the
//! stateless era only, or every version.
//! The link is `mcp_proto::testing`'s, and so are the session invariants (the stateless
//! era's among them), checked after every step (see `mcp_proto::testing::Pair`); at the end
//! the link is made perfect, every held request is answered, time moves past every
//! deadline, and every request must have had exactly one outcome.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::harness::{CLIENT, METHODS, Params, SERVER, config, pair};
use mcp_fuzz::{Cursor, Rng};
use mcp_proto::session::{Discovery, RequestOptions};
use mcp_proto::testing::LinkOptions;
use mcp_proto::{Duration, RequestId};

const STEPS: usize = 1000;

const CLIENT_METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];
const SERVER_METHODS: &[&str] = &[
    "ping",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
];

fn random_params(rng: &mut Rng) -> Params {
    match rng.below(8) {
        0 => Params::None,
        1 => Params::Empty,
        2 => Params::WithProgressToken,
        3 => Params::WithMeta,
        4 => Params::Escaped,
        _ => {
            let len = rng.below(40) as usize;
            Params::Text(
                (0..len)
                    .map(|_| char::from(b' ' + rng.below(95) as u8))
                    .collect(),
            )
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut cur = Cursor::new(data);
    let seed = cur.u64();
    let knobs = [
        cur.byte(),
        cur.byte(),
        cur.byte(),
        cur.byte(),
        cur.byte(),
        cur.byte(),
        cur.byte(),
    ];
    let link = LinkOptions {
        loss: u64::from(knobs[0] % 64),
        dup: u64::from(knobs[1] % 32),
        corrupt: u64::from(knobs[2] % 32),
        garbage: u64::from(knobs[3] % 32),
        split: u64::from(knobs[4]) * 2,
        max_delay: Duration::from_micros(u64::from(knobs[4] & 0x0f) * 1_000),
    };
    let versions = [0u8, 0b0010, 0b0001, 0b0110, 0b1000, 0b11111][usize::from(knobs[5] % 6)];
    // Bit 4 of the mask is 2026-07-28 (the stateless era).
    let server_versions = [versions, 0b01111, 0b10000, 0b11111][usize::from((knobs[6] >> 2) & 3)];
    let start = match knobs[6] & 3 {
        2 => Some(Discovery::Discover),
        3 => Some(Discovery::Auto),
        _ => None,
    };
    let raw_framing = knobs[5] & 0x40 != 0;
    let mut client = config(true, raw_framing, versions, None, 0, Some(30_000), false, 0);
    if let Some(d) = start {
        client = client.discovery(d);
    }
    let server = config(
        false,
        knobs[5] & 0x80 != 0,
        server_versions,
        None,
        0x44,
        Some(45_000),
        knobs[5] & 0x20 != 0,
        0,
    );
    let mut h = pair(client, server);
    h.link = link;
    let mut rng = Rng::new(seed);
    h.rng = Rng::new(seed.rotate_left(17));
    let _ = match start {
        Some(_) => h.start(CLIENT),
        None => h.initialize(CLIENT),
    };
    h.drain();

    for _ in 0..STEPS {
        match rng.below(100) {
            0..=17 => {
                let method = *rng.pick(CLIENT_METHODS);
                let params = random_params(&mut rng).raw();
                let opts = RequestOptions {
                    timeout: rng
                        .chance(300)
                        .then(|| Duration::from_micros(rng.below(120_000_000))),
                    reset_timeout_on_progress: rng.chance(300),
                    max_total_timeout: rng
                        .chance(200)
                        .then(|| Duration::from_micros(rng.below(300_000_000))),
                    progress: rng.chance(500),
                    related_to: None,
                };
                let _ = h.send_request(CLIENT, method, params, opts);
            }
            18..=21 => {
                let method = *rng.pick(SERVER_METHODS);
                let related = h.models[SERVER].open.first().map(|(id, _)| id.clone());
                let opts = RequestOptions {
                    progress: rng.chance(300),
                    related_to: related,
                    ..Default::default()
                };
                let _ = h.send_request(SERVER, method, None, opts);
            }
            22..=37 => {
                let side = if rng.chance(850) { SERVER } else { CLIENT };
                let open = h.models[side].open.clone();
                if open.is_empty() {
                    continue;
                }
                let (id, token) = rng.pick(&open).clone();
                match rng.below(10) {
                    0..=4 => {
                        let payload = random_params(&mut rng).json();
                        h.respond_marked(side, &id, payload.as_deref());
                    }
                    5 => h.respond_error_marked(
                        side,
                        &id,
                        -32000 - rng.below(100) as i64,
                        "nope",
                        None,
                    ),
                    _ => {
                        let last = h.models[side].reported.get(&id).copied().unwrap_or(0.0);
                        let p = if rng.chance(850) {
                            last + rng.below(100) as f64 / 7.0
                        } else {
                            last - 1.0
                        };
                        let _ = token;
                        let _ = h.report_progress(
                            side,
                            &id,
                            p,
                            rng.chance(500).then_some(100.0),
                            Some("working"),
                        );
                    }
                }
            }
            38..=40 => {
                let side = if rng.chance(800) { CLIENT } else { SERVER };
                let pending: Vec<i64> = h.models[side].unresolved().collect();
                let id = if pending.is_empty() || rng.chance(100) {
                    RequestId::Number(rng.below(50) as i64)
                } else {
                    RequestId::Number(*rng.pick(&pending))
                };
                let _ = h.cancel(side, &id, rng.chance(500).then_some("user pressed stop"));
            }
            41..=43 => {
                let (side, method) = if rng.chance(500) {
                    (
                        SERVER,
                        *rng.pick(&[
                            "notifications/message",
                            "notifications/tools/list_changed",
                            "notifications/custom",
                        ]),
                    )
                } else {
                    (
                        CLIENT,
                        *rng.pick(&["notifications/roots/list_changed", "notifications/custom"]),
                    )
                };
                let _ = h.notify(
                    side,
                    method,
                    Some(mcp_fuzz::harness::raw(r#"{"level":"info","data":"x"}"#)),
                    None,
                );
            }
            44..=56 => {
                let d = match rng.below(10) {
                    0 => rng.below(200_000_000),
                    1..=3 => rng.below(5_000_000),
                    _ => rng.below(50_000),
                };
                h.advance(Duration::from_micros(d));
            }
            57..=96 => {
                let from = if rng.chance(500) { CLIENT } else { SERVER };
                // The link already did its damage when the messages went out.
                h.deliver(from, 1 + rng.below(3) as usize, None);
            }
            97 => {
                // An unrelated method name from the shared list, to exercise refusals.
                let m = *rng.pick(METHODS);
                let _ = h.send_request(CLIENT, m, None, RequestOptions::default());
            }
            98 => {
                if rng.chance(300) {
                    let side = if rng.chance(500) { CLIENT } else { SERVER };
                    match rng.below(3) {
                        0 => h.close(side),
                        1 => h.input_closed(side),
                        _ => h.closed(side, rng.chance(500)),
                    }
                }
            }
            _ => {
                let side = if rng.chance(500) { CLIENT } else { SERVER };
                let _ = h.initialize(side);
            }
        }
        h.drain();
        if h.sessions[CLIENT].is_closed() && h.sessions[SERVER].is_closed() {
            break;
        }
    }
    // Ids of the harness models are unaffected by the link: the end state must settle.
    h.settle_and_check(Duration::from_secs(1_000));
});
