//! Reading the request headers the transport cares about: `Accept`, `Content-Type`, `Host`,
//! `Origin`, `MCP-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`. Pure functions; the
//! statuses they lead to are chosen by the endpoint.

use ::http::header::{self, HeaderMap, HeaderName};
use ::http::request::Parts;

use super::config::AllowList;

/// `MCP-Session-Id`.
pub const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Last-Event-ID`.
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The one value of a header, as text; `None` when absent or not visible ASCII.
pub(crate) fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Whether `Accept` allows `ty/sub` (through `ty/sub`, `ty/*` or `*/*` with a non-zero `q`).
/// An absent `Accept` allows nothing: MCP clients must list both types.
pub(crate) fn accepts(headers: &HeaderMap, ty: &str, sub: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| media_range_allows(range, ty, sub))
}

fn media_range_allows(range: &str, ty: &str, sub: &str) -> bool {
    let mut parts = range.split(';');
    let media = parts.next().unwrap_or_default().trim();
    let Some((rt, rs)) = media.split_once('/') else {
        return false;
    };
    let (rt, rs) = (rt.trim(), rs.trim());
    let type_ok = rt == "*" || rt.eq_ignore_ascii_case(ty);
    let sub_ok = rs == "*" || rs.eq_ignore_ascii_case(sub);
    if !(type_ok && sub_ok) || (rt == "*" && rs != "*") {
        return false;
    }
    for param in parts {
        if let Some((k, v)) = param.split_once('=')
            && k.trim().eq_ignore_ascii_case("q")
        {
            // q=0 (with any number of zero decimals) means "not acceptable".
            let v = v.trim();
            let zero = v.strip_prefix('0').is_some_and(|rest| {
                rest.is_empty() || rest.trim_start_matches(['.', '0']).is_empty()
            });
            return !zero;
        }
    }
    true
}

/// Whether `Content-Type` is `application/json` (parameters such as `charset` allowed).
///
/// ```
/// let mut h = http::HeaderMap::new();
/// h.insert(http::header::CONTENT_TYPE, "application/json; charset=utf-8".parse().unwrap());
/// assert!(mcp_proto::http::is_json(&h));
/// h.insert(http::header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
/// assert!(!mcp_proto::http::is_json(&h));
/// ```
pub fn is_json(headers: &HeaderMap) -> bool {
    single(headers, &header::CONTENT_TYPE).is_some_and(|v| {
        v.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case("application/json")
    })
}

/// The request's host: the `Host` header, else the URI's authority (HTTP/2).
pub(crate) fn host(parts: &Parts) -> Option<&str> {
    single(&parts.headers, &header::HOST).or_else(|| parts.uri.authority().map(|a| a.as_str()))
}

/// Splits `host[:port]` (IPv6 in brackets). `None` for anything else (user info, junk).
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.is_empty() || authority.contains(['@', '/', ' ']) {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty()
        || port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some((host, port))
}

fn is_loopback_name(host: &str) -> bool {
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|n| n.eq_ignore_ascii_case(host))
}

/// Whether `authority` (`host[:port]`) matches the host entry `entry` (`name` or `name:port`).
fn host_entry_matches(entry: &str, authority: &str) -> bool {
    let (Some((eh, ep)), Some((h, p))) = (split_host_port(entry), split_host_port(authority))
    else {
        return false;
    };
    eh.eq_ignore_ascii_case(h) && (ep.is_none() || ep == p)
}

/// Whether the `Host` is allowed.
pub(crate) fn host_allowed(list: &AllowList, host: Option<&str>) -> bool {
    match list {
        AllowList::Any => true,
        AllowList::Loopback => host
            .and_then(split_host_port)
            .is_some_and(|(h, _)| is_loopback_name(h)),
        AllowList::Only(entries) => {
            host.is_some_and(|h| entries.iter().any(|e| host_entry_matches(e, h)))
        }
    }
}

/// Whether an `Origin` value is allowed (`null` and unparseable origins never are, except
/// under [`AllowList::Any`]).
pub(crate) fn origin_allowed(list: &AllowList, origin: &str) -> bool {
    let authority = origin
        .split_once("://")
        .map(|(_, rest)| rest.strip_suffix('/').unwrap_or(rest));
    match list {
        AllowList::Any => true,
        AllowList::Loopback => authority
            .and_then(split_host_port)
            .is_some_and(|(h, _)| is_loopback_name(h)),
        AllowList::Only(entries) => entries.iter().any(|e| {
            if e.contains("://") {
                e.trim_end_matches('/')
                    .eq_ignore_ascii_case(origin.trim_end_matches('/'))
            } else {
                authority.is_some_and(|a| host_entry_matches(e, a))
            }
        }),
    }
}

/// The request's `Last-Event-ID`, parsed as an event id of this crate's endpoints:
/// `(stream, seq)` from `<stream>-<seq>`. `None` when it is absent, repeated or not of that form.
///
/// ```
/// use mcp_proto::http::{last_event_id, stream_instance};
///
/// let req = http::Request::get("/mcp").header("last-event-id", "4294967298-7").body(()).unwrap();
/// let (stream, seq) = last_event_id(&req.into_parts().0).unwrap();
/// assert_eq!((stream_instance(stream), seq), (1, 7)); // stream 2 of instance 1
/// ```
pub fn last_event_id(parts: &::http::request::Parts) -> Option<(u64, u64)> {
    let mut all = parts.headers.get_all(&LAST_EVENT_ID).iter();
    let first = all.next()?;
    if all.next().is_some() {
        return None;
    }
    parse_event_id(first.to_str().ok()?.trim())
}

/// Which instance ([`EndpointConfig::instance`](super::EndpointConfig::instance)) numbered
/// SSE stream `stream`.
pub fn stream_instance(stream: u64) -> u32 {
    (stream >> 32) as u32
}

/// The bit of a stream number that marks the standalone GET stream of a numbered instance
/// (one whose [`instance`](super::EndpointConfig::instance) is not 0).
pub(crate) const STANDALONE_STREAM: u64 = 1 << 31;

/// Whether SSE stream `stream` is the standalone GET stream of a session on a numbered
/// instance ([`EndpointConfig::instance`](super::EndpointConfig::instance) ≥ 1): a stream that
/// goes on after its last event, where a POST's stream ends with its answer. Another instance
/// resuming it replays its events and then serves the session's notifications itself. Always
/// `false` for instance 0, whose streams are numbered 1, 2, 3, … as they always were.
///
/// ```
/// use mcp_proto::http::stream_is_standalone;
///
/// assert!(stream_is_standalone((1 << 32) | (1 << 31) | 2));
/// assert!(!stream_is_standalone((1 << 32) | 2)); // a POST's stream on instance 1
/// assert!(!stream_is_standalone(2)); // instance 0
/// ```
pub fn stream_is_standalone(stream: u64) -> bool {
    stream_instance(stream) != 0 && stream & STANDALONE_STREAM != 0
}

/// Where the ids of a numbered instance's requests to its clients start: instance `n`
/// numbers them from `n << 40` (1 099 511 627 776 per instance; JavaScript clients keep
/// integers exact up to `2^53`, instance 8191).
pub(crate) fn request_id_base(instance: u32) -> i64 {
    (i64::from(instance.min(REQUEST_INSTANCE_MAX)) << 40) | 1
}

/// The largest instance number whose request ids stay exact in JavaScript.
const REQUEST_INSTANCE_MAX: u32 = (1 << 13) - 1;

/// Which numbered instance sent the client the request `id` answers, in a handshake-era
/// session (one whose [`EndpointConfig::instance`](super::EndpointConfig::instance) is 1 or
/// more): a POST of answers that reaches another instance is taken to that one. `None` for
/// an id no numbered instance made.
///
/// ```
/// use mcp_proto::RequestId;
/// use mcp_proto::http::request_instance;
///
/// assert_eq!(request_instance(&RequestId::Number((3 << 40) | 7)), Some(3));
/// assert_eq!(request_instance(&RequestId::Number(7)), None); // instance 0's
/// assert_eq!(request_instance(&RequestId::String("a".into())), None);
/// ```
pub fn request_instance(id: &crate::RequestId) -> Option<u32> {
    match id {
        crate::RequestId::Number(n) if *n >= 1 << 40 => u32::try_from(*n >> 40)
            .ok()
            .filter(|i| *i <= REQUEST_INSTANCE_MAX),
        _ => None,
    }
}

/// Parses a `Last-Event-ID` of this endpoint: `<stream>-<seq>`, both decimal.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(stream) || !digits(seq) {
        return None;
    }
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::http::HeaderValue;
    use alloc::string::String;
    use alloc::vec;

    fn accept(v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static(v));
        h
    }

    #[test]
    fn accept_ranges() {
        let both = accept("application/json, text/event-stream");
        assert!(accepts(&both, "application", "json") && accepts(&both, "text", "event-stream"));
        assert!(accepts(&accept("*/*"), "text", "event-stream"));
        assert!(accepts(&accept("text/*;q=0.5"), "text", "event-stream"));
        assert!(!accepts(
            &accept("text/event-stream;q=0"),
            "text",
            "event-stream"
        ));
        assert!(!accepts(
            &accept("text/event-stream; q=0.000"),
            "text",
            "event-stream"
        ));
        assert!(accepts(
            &accept("TEXT/Event-Stream;q=0.1"),
            "text",
            "event-stream"
        ));
        assert!(!accepts(
            &accept("application/json"),
            "text",
            "event-stream"
        ));
        assert!(!accepts(&HeaderMap::new(), "application", "json"));
        assert!(!accepts(&accept("*/json"), "application", "json"));
    }

    #[test]
    fn host_and_origin_lists() {
        for ok in [
            "localhost",
            "localhost:3000",
            "127.0.0.1:1",
            "[::1]:8080",
            "LOCALHOST",
        ] {
            assert!(host_allowed(&AllowList::Loopback, Some(ok)), "{ok}");
        }
        for bad in [
            "evil.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::1",
            "a@localhost",
            "",
        ] {
            assert!(!host_allowed(&AllowList::Loopback, Some(bad)), "{bad}");
        }
        assert!(!host_allowed(&AllowList::Loopback, None));
        assert!(host_allowed(&AllowList::Any, None));
        let only = AllowList::Only(vec![
            String::from("api.example.com"),
            String::from("x.io:443"),
        ]);
        assert!(host_allowed(&only, Some("api.example.com:8080")));
        assert!(host_allowed(&only, Some("x.io:443")));
        assert!(!host_allowed(&only, Some("x.io:80")));

        assert!(origin_allowed(
            &AllowList::Loopback,
            "http://localhost:5173"
        ));
        assert!(origin_allowed(&AllowList::Loopback, "https://[::1]"));
        assert!(!origin_allowed(&AllowList::Loopback, "null"));
        assert!(!origin_allowed(
            &AllowList::Loopback,
            "https://evil.example"
        ));
        let only = AllowList::Only(vec![
            String::from("https://app.example.com"),
            String::from("tools.example.com"),
        ]);
        assert!(origin_allowed(&only, "https://APP.example.com"));
        assert!(!origin_allowed(&only, "http://app.example.com"));
        assert!(origin_allowed(&only, "http://tools.example.com:9000"));
    }

    #[test]
    fn event_ids() {
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id("3-"), None);
        assert_eq!(parse_event_id("-1"), None);
        assert_eq!(parse_event_id("a-1"), None);
        assert_eq!(parse_event_id("+3-1"), None);
    }
}
