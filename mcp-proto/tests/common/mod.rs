//! Test support: the core's checked pair ([`mcp_proto::testing::Pair`]) with a few
//! conveniences, and helpers for lone sessions.
#![allow(dead_code, unused_imports)]

pub use mcp_proto::testing::{CLIENT, Pair, SERVER, client_config, raw, server_config};

use mcp_proto::Duration;
use mcp_proto::session::Session;

/// Conveniences over [`Pair`] that the session tests use.
pub trait PairExt {
    /// Moves time on by `d`, runs the timers, and delivers until nothing moves.
    fn pass(&mut self, d: Duration);
    /// Every message that crossed, as text, prefixed with "C>" or "S>".
    fn wire_text(&self) -> Vec<String>;
}

impl PairExt for Pair {
    fn pass(&mut self, d: Duration) {
        self.advance(d);
        self.deliver_all();
    }

    fn wire_text(&self) -> Vec<String> {
        self.log
            .iter()
            .map(|(side, text)| format!("{}>{text}", if *side == CLIENT { 'C' } else { 'S' }))
            .collect()
    }
}

/// Drains a session's transmits, parsing each line as JSON.
pub fn collect(s: &mut Session) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while s.poll_transmit(&mut buf).is_some() {
        out.push(serde_json::from_slice(&buf).unwrap());
        buf.clear();
    }
    out
}
