//! The table of MCP methods: which side sends each one, in which versions, behind which
//! capability.
//!
//! The session consults it to answer `-32601` for methods that do not exist in the negotiated
//! version or direction, or whose capability was not negotiated, and to intern method names
//! (no allocation for known methods).

use crate::version::ProtocolVersion;
use crate::version::ProtocolVersion::{
    V2024_11_05 as V1, V2025_06_18 as V3, V2025_11_25 as V4, V2026_07_28 as V5,
};

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// Sent by the client, handled by the server.
    ClientToServer,
    /// Sent by the server, handled by the client.
    ServerToClient,
    /// Either side.
    Both,
}

/// The capability the receiving side must have declared for a request to be valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gate {
    /// No capability needed.
    None,
    /// Server `tools`.
    Tools,
    /// Server `resources`.
    Resources,
    /// Server `resources.subscribe`.
    ResourcesSubscribe,
    /// Server `prompts`.
    Prompts,
    /// Server `logging`.
    Logging,
    /// Server `completions` (from 2025-03-26; ungated in 2024-11-05).
    Completions,
    /// Client `sampling`.
    Sampling,
    /// Client `roots`.
    Roots,
    /// Client `elicitation`.
    Elicitation,
    /// `tasks` of the receiver.
    Tasks,
    /// Server `extensions["io.modelcontextprotocol/skills"]` (the skills extension).
    Skills,
    /// Server `extensions["io.modelcontextprotocol/skills"].directoryRead: true`.
    SkillsDirectoryRead,
}

/// One row of the method table.
#[derive(Clone, Copy, Debug)]
pub struct MethodSpec {
    /// Wire name.
    pub name: &'static str,
    /// A request (true) or a notification (false).
    pub request: bool,
    /// Who sends it.
    pub direction: Direction,
    /// First version that has it.
    pub first: ProtocolVersion,
    /// Last version that has it.
    pub last: ProtocolVersion,
    /// Capability the receiver must have declared.
    pub gate: Gate,
}

impl MethodSpec {
    /// Whether the method exists in `v`.
    pub fn in_version(&self, v: ProtocolVersion) -> bool {
        self.first <= v && v <= self.last
    }

    /// Whether `from_client` may send it.
    pub fn sent_by(&self, from_client: bool) -> bool {
        match self.direction {
            Direction::Both => true,
            Direction::ClientToServer => from_client,
            Direction::ServerToClient => !from_client,
        }
    }
}

const fn req(
    name: &'static str,
    direction: Direction,
    first: ProtocolVersion,
    last: ProtocolVersion,
    gate: Gate,
) -> MethodSpec {
    MethodSpec {
        name,
        request: true,
        direction,
        first,
        last,
        gate,
    }
}

const fn note(
    name: &'static str,
    direction: Direction,
    first: ProtocolVersion,
    last: ProtocolVersion,
) -> MethodSpec {
    MethodSpec {
        name,
        request: false,
        direction,
        first,
        last,
        gate: Gate::None,
    }
}

use Direction::{Both, ClientToServer as C2S, ServerToClient as S2C};

/// Every method and notification of every version.
pub const METHODS: &[MethodSpec] = &[
    req("initialize", C2S, V1, V4, Gate::None),
    req("ping", Both, V1, V4, Gate::None),
    req("tools/list", C2S, V1, V5, Gate::Tools),
    req("tools/call", C2S, V1, V5, Gate::Tools),
    req("resources/list", C2S, V1, V5, Gate::Resources),
    req("resources/templates/list", C2S, V1, V5, Gate::Resources),
    req("resources/read", C2S, V1, V5, Gate::Resources),
    req("resources/subscribe", C2S, V1, V4, Gate::ResourcesSubscribe),
    req(
        "resources/unsubscribe",
        C2S,
        V1,
        V4,
        Gate::ResourcesSubscribe,
    ),
    req("prompts/list", C2S, V1, V5, Gate::Prompts),
    req("prompts/get", C2S, V1, V5, Gate::Prompts),
    req("completion/complete", C2S, V1, V5, Gate::Completions),
    req("logging/setLevel", C2S, V1, V4, Gate::Logging),
    req("sampling/createMessage", S2C, V1, V4, Gate::Sampling),
    req("roots/list", S2C, V1, V4, Gate::Roots),
    req("elicitation/create", S2C, V3, V4, Gate::Elicitation),
    // 2025-11-25's tasks, and from 2026-07-28 the tasks extension (SEP-2663), which keeps
    // `tasks/get` and `tasks/cancel`, adds `tasks/update` and drops `tasks/result` and
    // `tasks/list` (its gate is the extension: `Gate::Tasks` reads it in that era).
    req("tasks/get", Both, V4, V5, Gate::Tasks),
    req("tasks/result", Both, V4, V4, Gate::Tasks),
    req("tasks/list", Both, V4, V4, Gate::Tasks),
    req("tasks/cancel", Both, V4, V5, Gate::Tasks),
    req("tasks/update", C2S, V5, V5, Gate::Tasks),
    // The skills extension (SEP-2640): an extension, negotiated by the server's capabilities
    // (`initialize` or `server/discover`), so in every version where the server declares it.
    req("skills/list", C2S, V1, V5, Gate::Skills),
    req("skills/get", C2S, V1, V5, Gate::Skills),
    req(
        "resources/directory/read",
        C2S,
        V1,
        V5,
        Gate::SkillsDirectoryRead,
    ),
    req("server/discover", C2S, V5, V5, Gate::None),
    req("subscriptions/listen", C2S, V5, V5, Gate::None),
    note("notifications/initialized", C2S, V1, V4),
    note("notifications/cancelled", Both, V1, V5),
    note("notifications/progress", Both, V1, V5),
    note("notifications/message", S2C, V1, V5),
    note("notifications/resources/updated", S2C, V1, V5),
    note("notifications/resources/list_changed", S2C, V1, V5),
    note("notifications/tools/list_changed", S2C, V1, V5),
    note("notifications/prompts/list_changed", S2C, V1, V5),
    note("notifications/roots/list_changed", C2S, V1, V4),
    note("notifications/elicitation/complete", S2C, V4, V4),
    note("notifications/tasks/status", Both, V4, V4),
    note("notifications/subscriptions/acknowledged", S2C, V5, V5),
    note("notifications/tasks", S2C, V5, V5),
];

/// Looks a method up by name.
pub fn lookup(name: &str) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, m) in METHODS.iter().enumerate() {
            assert!(m.first <= m.last, "{}", m.name);
            assert!(
                METHODS.iter().skip(i + 1).all(|o| o.name != m.name),
                "duplicate {}",
                m.name
            );
            assert_eq!(
                m.request,
                !m.name.starts_with("notifications/"),
                "{}",
                m.name
            );
        }
        let e = lookup("elicitation/create").unwrap();
        assert!(!e.in_version(ProtocolVersion::V2025_03_26));
        assert!(e.in_version(ProtocolVersion::V2025_06_18));
        assert!(e.sent_by(false) && !e.sent_by(true));
        assert!(lookup("ping").unwrap().sent_by(true));
        assert!(lookup("nope").is_none());
        let s = lookup("skills/list").unwrap();
        assert_eq!(s.gate, Gate::Skills);
        assert!(
            s.in_version(ProtocolVersion::V2025_11_25)
                && s.in_version(ProtocolVersion::V2026_07_28)
        );
        assert!(s.sent_by(true) && !s.sent_by(false));
        assert_eq!(
            lookup("resources/directory/read").unwrap().gate,
            Gate::SkillsDirectoryRead
        );
        assert!(
            !lookup("initialize")
                .unwrap()
                .in_version(ProtocolVersion::V2026_07_28)
        );
    }
}
