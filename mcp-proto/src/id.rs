//! JSON-RPC request ids and MCP progress tokens.
//!
//! Both are a string or an integer on the wire, never `null`.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON-RPC request id: a string or an integer, never `null`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestId {
    /// An integer id (the core's own outbound ids are always integers from a counter).
    Number(i64),
    /// A string id.
    String(Box<str>),
}

impl RequestId {
    /// Writes the id as JSON into `out`.
    pub fn write_json(&self, out: &mut alloc::vec::Vec<u8>) {
        match self {
            RequestId::Number(n) => {
                let mut buf = itoa_buf(*n);
                out.extend_from_slice(buf.as_bytes_mut());
            }
            RequestId::String(s) => crate::jsonrpc::write_json_str(out, s),
        }
    }
}

/// A tiny stack formatter for `i64` (avoids a dependency and any allocation).
struct ItoaBuf {
    buf: [u8; 20],
    start: usize,
}

impl ItoaBuf {
    fn as_bytes_mut(&mut self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or(&[])
    }
}

fn itoa_buf(n: i64) -> ItoaBuf {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let neg = n < 0;
    let mut v = n.unsigned_abs();
    loop {
        pos -= 1;
        if let Some(b) = buf.get_mut(pos) {
            *b = b'0' + (v % 10) as u8;
        }
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        pos -= 1;
        if let Some(b) = buf.get_mut(pos) {
            *b = b'-';
        }
    }
    ItoaBuf { buf, start: pos }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s.into_boxed_str())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

struct IdVisitor;

impl<'de> serde::de::Visitor<'de> for IdVisitor {
    type Value = RequestId;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer")
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v)
            .map(RequestId::Number)
            .map_err(|_| E::custom("integer id out of range"))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(v.into()))
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

/// A progress token (`params._meta.progressToken`): a string or an integer.
pub type ProgressToken = RequestId;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    #[test]
    fn writes_numbers() {
        for n in [0i64, 1, -1, 42, i64::MAX, i64::MIN, 1_000_000] {
            let mut out = Vec::new();
            RequestId::Number(n).write_json(&mut out);
            assert_eq!(core::str::from_utf8(&out).unwrap(), n.to_string());
        }
    }

    #[test]
    fn writes_strings_escaped() {
        let mut out = Vec::new();
        RequestId::from("a\"b\n").write_json(&mut out);
        assert_eq!(out, br#""a\"b\n""#);
    }

    #[test]
    fn serde_roundtrip_rejects_null_and_floats() {
        let id: RequestId = serde_json::from_str("7").unwrap();
        assert_eq!(id, RequestId::Number(7));
        let id: RequestId = serde_json::from_str("\"x\"").unwrap();
        assert_eq!(id, RequestId::from("x"));
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
        assert!(serde_json::from_str::<RequestId>("18446744073709551615").is_err());
        assert_eq!(
            serde_json::to_string(&RequestId::from("q")).unwrap(),
            "\"q\""
        );
    }
}
