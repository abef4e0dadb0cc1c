//! MCP protocol versions and what each one allows.

use core::fmt;
use core::str::FromStr;

/// A published MCP protocol version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: the first release (stdio, HTTP+SSE).
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, batches, audio, tool annotations.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, no batches.
    V2025_06_18,
    /// `2025-11-25`: tasks, icons, URL elicitation, sampling with tools.
    V2025_11_25,
    /// `2026-07-28`: the stateless ("modern") era.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The versions that use the `initialize` handshake, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest version with an `initialize` handshake.
    pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version string; `None` for unknown versions.
    pub fn parse(s: &str) -> Option<Self> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this version is stateless (no `initialize`, per-request `_meta`).
    pub const fn is_stateless(self) -> bool {
        matches!(self, ProtocolVersion::V2026_07_28)
    }

    /// Whether JSON-RPC batches are allowed (only 2025-03-26).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Whether `elicitation/create` exists as a JSON-RPC request.
    pub const fn has_elicitation(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25
        )
    }

    /// Whether `tasks/*` exist in the core protocol (2025-11-25 only).
    pub const fn has_tasks(self) -> bool {
        matches!(self, ProtocolVersion::V2025_11_25)
    }

    /// Whether the server `completions` capability gates `completion/complete`.
    pub const fn has_completions_capability(self) -> bool {
        !matches!(self, ProtocolVersion::V2024_11_05)
    }

    /// The JSON-RPC error code for "resource not found" in this version.
    pub const fn resource_not_found_code(self) -> i64 {
        if self.is_stateless() { -32602 } else { -32002 }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown version string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion;

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown MCP protocol version")
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::parse(s).ok_or(UnknownVersion)
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <alloc::borrow::Cow<'de, str>>::deserialize(d)?;
        ProtocolVersion::parse(&s)
            .ok_or_else(|| serde::de::Error::custom("unknown MCP protocol version"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_order() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::LATEST);
        assert_eq!(ProtocolVersion::parse("1999-01-01"), None);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(ProtocolVersion::LATEST.is_stateless());
        assert_eq!(
            ProtocolVersion::V2025_11_25.resource_not_found_code(),
            -32002
        );
        assert_eq!(
            ProtocolVersion::V2026_07_28.resource_not_found_code(),
            -32602
        );
    }
}
