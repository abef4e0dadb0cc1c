//! Test support: a client and a server session wired back to back in memory.
#![allow(dead_code)]

use mcp_proto::session::{Config, Event, Session};
use mcp_proto::{Duration, Instant};
use serde_json::value::RawValue;

pub fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

pub fn client_config() -> Config {
    Config::new("test-client", "1.0").capabilities(raw(
        r#"{"sampling":{},"roots":{"listChanged":true},"elicitation":{}}"#,
    ))
}

pub fn server_config() -> Config {
    Config::new("test-server", "1.0").capabilities(raw(
        r#"{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":{},"logging":{},"completions":{}}"#,
    ))
}

/// Two sessions connected by perfect pipes.
pub struct Pair {
    pub client: Session,
    pub server: Session,
    pub now: Instant,
    pub client_events: Vec<Event>,
    pub server_events: Vec<Event>,
    /// Every message that crossed, as text, prefixed with "C>" or "S>".
    pub wire: Vec<String>,
}

impl Pair {
    pub fn new(client: Config, server: Config) -> Self {
        Pair {
            client: Session::client(client),
            server: Session::server(server),
            now: Instant::from_micros(1_000_000),
            client_events: Vec::new(),
            server_events: Vec::new(),
            wire: Vec::new(),
        }
    }

    pub fn default_pair() -> Self {
        Pair::new(client_config(), server_config())
    }

    /// A pair that completed the handshake.
    pub fn ready() -> Self {
        let mut p = Pair::default_pair();
        p.client.initialize(p.now).unwrap();
        p.drive();
        assert!(matches!(p.client_events.remove(0), Event::Ready { .. }));
        assert!(matches!(p.server_events.remove(0), Event::Ready { .. }));
        p
    }

    /// Moves bytes both ways and collects events until nothing moves.
    pub fn drive(&mut self) {
        let mut buf = Vec::new();
        for _ in 0..10_000 {
            let mut moved = false;
            while self.client.poll_transmit(&mut buf).is_some() {
                moved = true;
                self.wire
                    .push(format!("C>{}", String::from_utf8_lossy(&buf).trim_end()));
                self.server.handle_bytes(self.now, &buf);
                buf.clear();
            }
            while self.server.poll_transmit(&mut buf).is_some() {
                moved = true;
                self.wire
                    .push(format!("S>{}", String::from_utf8_lossy(&buf).trim_end()));
                self.client.handle_bytes(self.now, &buf);
                buf.clear();
            }
            while let Some(e) = self.client.poll_event() {
                moved = true;
                self.client_events.push(e);
            }
            while let Some(e) = self.server.poll_event() {
                moved = true;
                self.server_events.push(e);
            }
            if !moved {
                return;
            }
        }
        panic!("pair did not settle");
    }

    pub fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.drive();
    }

    /// Sends raw bytes to the server and returns what it transmits back (parsed).
    pub fn server_roundtrip(&mut self, bytes: &str) -> Vec<serde_json::Value> {
        self.server.handle_bytes(self.now, bytes.as_bytes());
        collect(&mut self.server)
    }

    pub fn client_input(&mut self, bytes: &str) -> Vec<serde_json::Value> {
        self.client.handle_bytes(self.now, bytes.as_bytes());
        collect(&mut self.client)
    }

    pub fn take_server_events(&mut self) -> Vec<Event> {
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
        std::mem::take(&mut self.server_events)
    }

    pub fn take_client_events(&mut self) -> Vec<Event> {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        std::mem::take(&mut self.client_events)
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
