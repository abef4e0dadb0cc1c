//! One seeded simulation: a client and a server conversing over a hostile link.

use alloc::format;
use alloc::vec::Vec;

use super::{CLIENT, Counters, LinkOptions, Pair, SERVER, raw};
use crate::schema::LoggingLevel;
use crate::session::{Config, Discovery, RequestOptions};
use crate::{Duration, ErrorKind, Instant, ProtocolVersion, RequestId};

/// How many steps a simulation may take before it counts as a livelock.
pub const STEP_CAP: u64 = 20_000;

/// What one simulation went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Event counters of both sides.
    pub counters: Counters,
    /// Steps until both sides closed and the link drained.
    pub steps: u64,
    /// The version the client became ready at, if it did.
    pub version: Option<ProtocolVersion>,
}

/// Which protocol versions a side of a simulation is configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Versions {
    /// The handshake versions only ([`ProtocolVersion::HANDSHAKE`]).
    Handshake,
    /// The stateless era only (2026-07-28).
    Stateless,
    /// Every version ([`ProtocolVersion::ALL`]).
    Both,
}

impl Versions {
    /// The versions.
    pub fn list(self) -> &'static [ProtocolVersion] {
        const STATELESS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];
        match self {
            Versions::Handshake => &ProtocolVersion::HANDSHAKE,
            Versions::Stateless => &STATELESS,
            Versions::Both => &ProtocolVersion::ALL,
        }
    }
}

/// The eras of a simulation: how the client starts and which versions each side has.
///
/// ```
/// use mcp_proto::ProtocolVersion;
/// use mcp_proto::session::Discovery;
/// use mcp_proto::testing::{Eras, Versions};
///
/// // Auto against a server of the handshake era falls back to the handshake.
/// let eras = Eras::new(Discovery::Auto, Versions::Both, Versions::Handshake);
/// assert_eq!(eras.expected(), Some(ProtocolVersion::LATEST_HANDSHAKE));
/// // Discover only: no common era, the client's start fails.
/// let eras = Eras::new(Discovery::Discover, Versions::Both, Versions::Handshake);
/// assert_eq!(eras.expected(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eras {
    /// How the client starts ([`Config::discovery`]).
    pub client: Discovery,
    /// The client's versions.
    pub client_versions: Versions,
    /// The server's versions.
    pub server_versions: Versions,
}

impl Eras {
    /// The handshake era on both sides, the client starting with `initialize`: what
    /// [`simulate`] runs.
    pub const HANDSHAKE: Eras = Eras::new(
        Discovery::Initialize,
        Versions::Handshake,
        Versions::Handshake,
    );

    /// Every setup the simulation knows: five clients (the handshake; `server/discover`
    /// only; `Auto`, with every version or the stateless one only) against three servers (the
    /// handshake era, the stateless era, both).
    pub const ALL: [Eras; 15] = {
        const CLIENTS: [(Discovery, Versions); 5] = [
            (Discovery::Initialize, Versions::Handshake),
            (Discovery::Discover, Versions::Both),
            (Discovery::Discover, Versions::Stateless),
            (Discovery::Auto, Versions::Both),
            (Discovery::Auto, Versions::Stateless),
        ];
        const SERVERS: [Versions; 3] = [Versions::Handshake, Versions::Stateless, Versions::Both];
        let mut all = [Eras::HANDSHAKE; 15];
        let mut i = 0;
        while i < 15 {
            let (client, client_versions) = CLIENTS[i / 3];
            all[i] = Eras::new(client, client_versions, SERVERS[i % 3]);
            i += 1;
        }
        all
    };

    /// A setup.
    pub const fn new(
        client: Discovery,
        client_versions: Versions,
        server_versions: Versions,
    ) -> Self {
        Eras {
            client,
            client_versions,
            server_versions,
        }
    }

    /// One of [`Eras::ALL`], chosen by `seed`.
    pub fn from_seed(seed: u64) -> Self {
        let all = Eras::ALL;
        all[(super::Rng::new(seed ^ 0xE4A5).next_u64() % all.len() as u64) as usize]
    }

    /// The version the client must become ready at over a clean link, computed from the
    /// revision's rules (`None`: its start fails): `server/discover` (for `Discover`, and for
    /// `Auto` with a stateless version) finds the server's stateless version; failing that,
    /// `Auto` (and `Initialize`) run the handshake, where the server takes the client's newest
    /// handshake version when it has it, else offers its own newest, which the client
    /// accepts only when it has it too.
    pub fn expected(self) -> Option<ProtocolVersion> {
        let client = self.client_versions.list();
        let server = self.server_versions.list();
        let stateless = client.iter().copied().filter(|v| v.is_stateless()).max();
        let discover = match self.client {
            Discovery::Initialize => false,
            Discovery::Discover => true,
            _ => stateless.is_some(),
        };
        if discover {
            if let Some(v) = stateless.filter(|v| server.contains(v)) {
                return Some(v);
            }
            if self.client == Discovery::Discover {
                return None;
            }
        }
        let asked = client.iter().copied().filter(|v| !v.is_stateless()).max()?;
        let chosen = if server.contains(&asked) {
            asked
        } else {
            server.iter().copied().filter(|v| !v.is_stateless()).max()?
        };
        client.contains(&chosen).then_some(chosen)
    }

    fn serves_stateless(self) -> bool {
        self.server_versions.list().iter().any(|v| v.is_stateless())
    }
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
/// This is [`simulate_eras`] with [`Eras::HANDSHAKE`].
///
/// # Panics
///
/// When an invariant breaks or the run does not settle; the message names the seed.
pub fn simulate(seed: u64) -> Stats {
    simulate_eras(seed, Eras::HANDSHAKE)
}

/// Runs the simulation for `seed` (see [`simulate`]) with the client and the server speaking
/// the versions `eras` names, the client starting as it says ([`Pair::start`]). Besides the
/// invariants of [`Pair`] (the era's among them), the run checks its outcome against
/// [`Eras::expected`]: over a link without garbage, a client that settled its start before
/// the graceful close is ready at exactly that version, or, when it is `None`, closed with an
/// error; with garbage (which may break the start) a ready client is at a version both sides
/// have. Against a server serving the stateless era, a second client sharing the stream now
/// and then sends it a request of that era (at its version, at one it does not serve, or at
/// a handshake version), and a stateless-era client tries methods its era lacks and sets
/// its log level.
///
/// # Panics
///
/// When an invariant breaks or the run does not settle; the message names the seed.
pub fn simulate_eras(seed: u64, eras: Eras) -> Stats {
    let mut rng = super::Rng::new(seed);
    let client_cfg = Config::new("sim-client", "1")
        .capabilities(raw("{\"roots\":{\"listChanged\":true},\"sampling\":{}}"))
        .versions(eras.client_versions.list())
        .discovery(eras.client);
    let mut server_cfg = Config::new("sim-server", "1")
        .capabilities(raw("{\"tools\":{\"listChanged\":true},\"resources\":{}}"))
        .versions(eras.server_versions.list());
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
    p.start(CLIENT)
        .unwrap_or_else(|e| panic!("[seed {seed}] the start failed: {e}"));
    let mut closing = false;
    // Whether the client closed, or the connection dropped, before its start settled (ready
    // or closed).
    let mut unsettled = false;
    let mut foreign = 0u64;

    for step in 0..STEP_CAP {
        // Application actions while the workload runs; then a graceful close by the client.
        if step < work_steps {
            act(&mut p, CLIENT);
            act(&mut p, SERVER);
            if eras != Eras::HANDSHAKE {
                act_era(&mut p, eras, &mut foreign);
            }
        } else {
            if !closing {
                closing = true;
                let m = &p.models[CLIENT];
                unsettled |= !(m.ready || m.closed);
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
            let m = &p.models[CLIENT];
            unsettled |= !(m.ready || m.closed);
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
            let clean = garbage == 0;
            check_era_outcome(&p, eras, clean && !unsettled);
            return Stats {
                counters: p.counters(),
                steps: step,
                version: p.models[CLIENT].version,
            };
        }
    }
    panic!(
        "[seed {seed}] did not settle within {STEP_CAP} steps (client {:?}, server {:?})",
        p.sessions[CLIENT].state(),
        p.sessions[SERVER].state()
    );
}

/// The client's era against what `eras` says; `decided`: the link was clean and the start
/// settled before the client closed or the connection dropped.
fn check_era_outcome(p: &Pair, eras: Eras, decided: bool) {
    let who = p.who(CLIENT);
    let m = &p.models[CLIENT];
    let expected = eras.expected();
    match m.version {
        Some(v) => {
            assert!(
                eras.server_versions.list().contains(&v)
                    && eras.client_versions.list().contains(&v),
                "{who}: ready at {v}, which the server ({:?}) or the client ({:?}) lacks",
                eras.server_versions,
                eras.client_versions
            );
            assert!(
                expected.is_some(),
                "{who}: ready at {v}, where {eras:?} has no common era"
            );
            if decided {
                assert_eq!(Some(v), expected, "{who}: {eras:?} became ready at {v}");
            }
        }
        None if decided => {
            assert!(
                expected.is_none(),
                "{who}: {eras:?} never became ready (expected {expected:?})"
            );
            assert!(
                m.close_error.is_some(),
                "{who}: {eras:?} has no common era, yet the client closed without an error"
            );
        }
        None => {}
    }
}

/// The era-specific workload: a second client of the stateless era on the same stream, and a
/// stateless-era client's methods of the handshake era and log levels.
fn act_era(p: &mut Pair, eras: Eras, foreign: &mut u64) {
    let who = p.who(CLIENT);
    if eras.serves_stateless() && !p.models[SERVER].closed && p.rng.chance(30) {
        *foreign += 1;
        let version = *p
            .rng
            .pick(&["2026-07-28", "2099-01-01", "2025-06-18", "2026-07-28"]);
        let method = *p
            .rng
            .pick(&["tools/list", "server/discover", "ping", "tools/call"]);
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"foreign-{foreign}\",\"method\":\"{method}\",\"params\":{{\"name\":\"echo\",\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"{version}\",\"io.modelcontextprotocol/clientCapabilities\":{{}}}}}}}}"
        );
        p.feed_message(SERVER, line.as_bytes());
    }
    if !p.models[CLIENT].stateless() || p.models[CLIENT].closed {
        return;
    }
    if p.rng.chance(20) {
        let method = *p.rng.pick(&[
            "ping",
            "logging/setLevel",
            "resources/subscribe",
            "server/discover",
        ]);
        let params = (method == "logging/setLevel").then(|| raw("{\"level\":\"info\"}"));
        let r = p.send_request(CLIENT, method, params, RequestOptions::default());
        if method == "server/discover" {
            // A method of the era, asked again by the application: an ordinary request.
            assert!(
                r.as_ref()
                    .err()
                    .is_none_or(|e| e.kind() == ErrorKind::TransportClosed),
                "{who}: `server/discover` in the stateless era gave {r:?}"
            );
        }
    }
    if p.rng.chance(10) {
        let level = *p
            .rng
            .pick(&[None, Some(LoggingLevel::Debug), Some(LoggingLevel::Warning)]);
        p.set_log_level(CLIENT, level);
    }
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
        let lacking = p.models[side].stateless() && method == "ping";
        if let Err(e) = p.send_request(side, method, params, opts) {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::TransportClosed | ErrorKind::LimitExceeded
                ) || lacking,
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
        // The stateless era has no `notifications/roots/list_changed` (the model checks the
        // refusal).
        let lacking = p.models[side].stateless();
        let r = p.notify(side, method, None, None);
        assert!(
            r.as_ref()
                .err()
                .is_none_or(|e| e.kind() == ErrorKind::TransportClosed || lacking),
            "{who}: notify({method}) gave {r:?}"
        );
    }
}
