//! One endpoint served by several [`Endpoint`](super::Endpoint)s (shards), each owning its
//! sessions: what each shard puts in the ids it makes, and which shard a request belongs to.
//!
//! A shard's session ids carry its index in their low byte (the other 120 bits stay random),
//! and the ids of the requests its stateless sessions send the client lie in 2^20-wide blocks
//! whose number is its index modulo the shard count. [`Shard::route`] reads them back: a
//! request naming a session, or a POST answering a stateless session's request, belongs to
//! the shard that made the id; any other request may go to any shard.

use ::http::request::Parts;

use super::session_id::SessionId;
use crate::id::RequestId;
use crate::jsonrpc::{self, Envelope, Parsed};

/// The most shards of one endpoint (the index is a session id's low byte).
pub const MAX_SHARDS: usize = 256;

/// The ids of stateless sessions' requests: `[LOW, 2 * LOW)`, below 2^53 (exact in JavaScript).
pub(super) const REQUEST_ID_LOW: u64 = 1 << 52;
/// The width of a block of request ids; a session's ids stay within the first half of its
/// block past its base.
pub(super) const REQUEST_ID_BLOCK: u64 = 1 << 20;

/// Which of several shards serving one endpoint an [`Endpoint`](super::Endpoint) is
/// ([`EndpointConfig::shard`](super::EndpointConfig::shard)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u16,
    count: u16,
}

impl Shard {
    /// Shard `index` of `count` (at most [`MAX_SHARDS`]); `None` when `index >= count` or
    /// `count` is 0 or too large.
    pub fn new(index: usize, count: usize) -> Option<Shard> {
        if index >= count || count > MAX_SHARDS {
            return None;
        }
        Some(Shard {
            index: u16::try_from(index).ok()?,
            count: u16::try_from(count).ok()?,
        })
    }

    /// This shard's index.
    pub fn index(self) -> usize {
        usize::from(self.index)
    }

    /// How many shards serve the endpoint.
    pub fn count(self) -> usize {
        usize::from(self.count)
    }

    /// `random` made this shard's: its low byte is the index.
    pub(super) fn mark(self, random: u128) -> u128 {
        (random & !0xff) | u128::from(self.index)
    }

    /// The first id of a stateless session's requests, drawn from `word`: in a block this
    /// shard owns, in the first half of it.
    pub(super) fn request_id_base(self, word: u64) -> u64 {
        let blocks = REQUEST_ID_LOW / REQUEST_ID_BLOCK - 1;
        let count = u64::from(self.count);
        let offset = word % (REQUEST_ID_BLOCK / 2);
        let block =
            ((word / (REQUEST_ID_BLOCK / 2)) % (blocks / count)) * count + u64::from(self.index);
        REQUEST_ID_LOW + block * REQUEST_ID_BLOCK + offset
    }

    /// Which of `count` shards must take a request (its head and body): the one whose session
    /// it names (`MCP-Session-Id`, or a legacy POST's `sessionId`), or, for a POST of
    /// responses without a session, the one whose stateless session asked the first of them.
    /// `None`: any shard serves it (an `initialize`, a stateless request, a legacy `GET`).
    ///
    /// Only a body that mentions `"result"` or `"error"` is parsed; anything else is read no
    /// further than its headers.
    ///
    /// ```
    /// use mcp_proto::http::Shard;
    ///
    /// let (parts, ()) = http::Request::post("/mcp")
    ///     .header("mcp-session-id", "0123456789abcdef0123456789abcd02")
    ///     .body(())
    ///     .unwrap()
    ///     .into_parts();
    /// assert_eq!(Shard::route(&parts, b"{}", 4), Some(2));
    /// let (initialize, ()) = http::Request::post("/mcp").body(()).unwrap().into_parts();
    /// let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    /// assert_eq!(Shard::route(&initialize, body, 4), None);
    /// ```
    pub fn route(parts: &Parts, body: &[u8], count: usize) -> Option<usize> {
        if count <= 1 {
            return None;
        }
        if let Some(id) = SessionId::of_request(parts) {
            return Some((id.as_u128() & 0xff) as usize % count);
        }
        if parts.method != ::http::Method::POST || !jsonrpc::mentions_answer(body) {
            return None;
        }
        let first = |item: &Result<Envelope<'_>, _>| match item {
            Ok(Envelope::Response {
                id: RequestId::Number(n),
                ..
            })
            | Ok(Envelope::Error {
                id: Some(RequestId::Number(n)),
                ..
            }) => Some(*n),
            _ => None,
        };
        let id = match jsonrpc::parse(body) {
            Parsed::Single(item) => first(&item),
            Parsed::Batch(items) => items.iter().find_map(first),
            #[allow(unreachable_patterns)]
            _ => None,
        }?;
        let id = u64::try_from(id).ok()?;
        (REQUEST_ID_LOW..2 * REQUEST_ID_LOW)
            .contains(&id)
            .then(|| ((id - REQUEST_ID_LOW) / REQUEST_ID_BLOCK % count as u64) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn post(session: Option<&str>) -> Parts {
        let mut b = ::http::Request::post("/mcp");
        if let Some(s) = session {
            b = b.header("mcp-session-id", s);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn shards_are_checked() {
        assert!(Shard::new(0, 0).is_none());
        assert!(Shard::new(3, 3).is_none());
        assert!(Shard::new(0, MAX_SHARDS + 1).is_none());
        assert_eq!(Shard::new(255, 256).map(Shard::index), Some(255));
    }

    #[test]
    fn request_ids_of_a_shard_route_back_to_it() {
        for count in [2, 3, 7, 256] {
            for index in [0, count - 1, count / 2] {
                let shard = Shard::new(index, count).unwrap();
                for word in [
                    0,
                    1,
                    u64::MAX,
                    0x1234_5678_9abc_def0,
                    1 << 19,
                    (1 << 19) - 1,
                ] {
                    let base = shard.request_id_base(word);
                    // The session's ids run on from its base, within its block's first half.
                    for id in [base, base + (REQUEST_ID_BLOCK / 2) - 1] {
                        assert!((REQUEST_ID_LOW..2 * REQUEST_ID_LOW).contains(&id), "{id}");
                        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
                        assert_eq!(
                            Shard::route(&post(None), body.as_bytes(), count),
                            Some(index),
                            "count {count}, word {word}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn requests_are_routed_by_session_or_go_anywhere() {
        let sid = format!("{:032x}", Shard::new(5, 8).unwrap().mark(u128::MAX));
        assert_eq!(Shard::route(&post(Some(&sid)), b"", 8), Some(5));
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"error":1}}"#;
        assert_eq!(Shard::route(&post(None), request, 8), None);
        // An error answer, a batch of answers, and ids outside the stateless range.
        let error = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":1,"message":"no"}}}}"#,
            REQUEST_ID_LOW + 3 * REQUEST_ID_BLOCK
        );
        assert_eq!(Shard::route(&post(None), error.as_bytes(), 8), Some(3));
        let batch = format!(
            r#"[{{"jsonrpc":"2.0","id":"x","result":1}},{{"jsonrpc":"2.0","id":{},"result":1}}]"#,
            REQUEST_ID_LOW + 9 * REQUEST_ID_BLOCK
        );
        assert_eq!(Shard::route(&post(None), batch.as_bytes(), 8), Some(1));
        let low = br#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        assert_eq!(Shard::route(&post(None), low, 8), None);
        assert_eq!(Shard::route(&post(None), b"not json \"result\"", 8), None);
        assert_eq!(Shard::route(&post(Some(&sid)), b"", 1), None);
    }
}
