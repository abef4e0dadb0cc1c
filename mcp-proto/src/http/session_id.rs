//! Session ids: the driver's 128-bit random value, on the wire as 32 lowercase hex digits.

use core::fmt;

/// The id of one session of an [`Endpoint`](super::Endpoint).
///
/// A stateful session's id is the 128-bit random value the driver passed with its `initialize`
/// POST, sent to the client as `MCP-Session-Id: <32 lowercase hex digits>`. Stateless sessions
/// (one per POST) get internal ids that never leave the process.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(u128);

impl SessionId {
    /// The id made of `value`.
    pub const fn from_u128(value: u128) -> Self {
        SessionId(value)
    }

    /// The 128-bit value.
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// Parses the header form: exactly 32 hex digits (either case).
    pub fn parse(s: &str) -> Option<Self> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u128::from_str_radix(s, 16).ok().map(SessionId)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn header_form_roundtrips() {
        let id = SessionId::from_u128(0xabc);
        let s = id.to_string();
        assert_eq!(s, "00000000000000000000000000000abc");
        assert_eq!(SessionId::parse(&s), Some(id));
        assert_eq!(SessionId::parse(&s.to_uppercase()), Some(id));
        assert_eq!(SessionId::parse("abc"), None);
        assert_eq!(SessionId::parse("+0000000000000000000000000000abc"), None);
        assert_eq!(SessionId::parse("g0000000000000000000000000000abc"), None);
    }
}
