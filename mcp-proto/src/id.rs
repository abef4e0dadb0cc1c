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

/// The first id of `ids` that repeats an earlier one (the second occurrence), found with an
/// ordered set: `O(n log n)` comparisons for `n` ids, never the `O(n²)` of comparing each id
/// with every earlier one. Every check of a batch for duplicate ids (the HTTP endpoint's and
/// the session's) goes through here.
pub(crate) fn first_repeated<'a, T: Ord + 'a>(
    ids: impl IntoIterator<Item = &'a T>,
) -> Option<&'a T> {
    let mut seen = alloc::collections::BTreeSet::new();
    ids.into_iter().find(|id| !seen.insert(*id))
}

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

    /// An id whose comparisons (equality and order) are counted.
    struct Counted<'c>(u64, &'c core::cell::Cell<u64>);
    impl PartialEq for Counted<'_> {
        fn eq(&self, other: &Self) -> bool {
            self.1.set(self.1.get() + 1);
            self.0 == other.0
        }
    }
    impl Eq for Counted<'_> {}
    impl PartialOrd for Counted<'_> {
        fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Counted<'_> {
        fn cmp(&self, other: &Self) -> core::cmp::Ordering {
            self.1.set(self.1.get() + 1);
            self.0.cmp(&other.0)
        }
    }

    fn comparisons(n: u64) -> u64 {
        let count = core::cell::Cell::new(0);
        // Distinct ids in a scrambled order (1 000 003 is prime), then one repeat of the
        // first at the very end.
        let mut ids: Vec<Counted<'_>> = (0..n)
            .map(|i| Counted(i * 7919 % 1_000_003, &count))
            .collect();
        ids.push(Counted(0, &count));
        let dup = first_repeated(&ids).map(|c| c.0);
        assert_eq!(dup, Some(0));
        count.get()
    }

    /// The work of the duplicate-id check per id stays bounded: doubling the batch at most
    /// about doubles the comparisons (`n log n`: ×2.1 here; comparing each id with every
    /// earlier one would be ×4). No clock involved.
    #[test]
    fn duplicate_search_is_quasi_linear() {
        let small = comparisons(20_000);
        let large = comparisons(40_000);
        assert!(
            large * 10 <= small * 25,
            "doubling the ids multiplied comparisons by {:.2}",
            large as f64 / small as f64
        );
        assert!(small <= 20_000 * 40, "{small} comparisons for 20 000 ids");
    }

    #[test]
    fn first_repeated_names_the_second_occurrence() {
        let ids = [RequestId::from(1), RequestId::from("a"), RequestId::from(2)];
        assert_eq!(first_repeated(&ids), None);
        let ids = [
            RequestId::from(1),
            RequestId::from("a"),
            RequestId::from("1"),
            RequestId::from("a"),
            RequestId::from(1),
        ];
        assert_eq!(first_repeated(&ids), Some(&RequestId::from("a")));
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
