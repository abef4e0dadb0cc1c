//! Cross-origin resource sharing for browser clients ([`Cors`](super::Cors)): the preflight
//! answer and the headers of every reply to an allowed cross-origin request. Pure functions;
//! whether the `Origin` is allowed was decided before (a refused one gets 403 and none of
//! these headers).

use alloc::string::String;
use core::fmt::Write as _;

use ::http::header::{self, HeaderMap, HeaderValue};

use super::config::{AllowList, Cors};

/// The request headers a browser client of MCP may send beyond the safelisted ones; a
/// preflight's `Access-Control-Request-Headers` is answered with those of its names found here
/// (or starting with `mcp-param-`).
const ALLOWED_HEADERS: [&str; 8] = [
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];

/// What a preflight without `Access-Control-Request-Headers` is told.
const DEFAULT_ALLOW_HEADERS: &str = "Content-Type, Accept, Authorization, Mcp-Session-Id, \
     Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name";

/// The reply headers a page's script may read.
const EXPOSE_HEADERS: &str = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate";

/// Most header names of one `Access-Control-Request-Headers` looked at.
const MAX_REQUESTED: usize = 64;

fn allowed_header(name: &str) -> bool {
    let param = name.len() > 10
        && name
            .get(..10)
            .is_some_and(|p| p.eq_ignore_ascii_case("mcp-param-"));
    param || ALLOWED_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// Adds what every reply gets while CORS is on: `Vary: Origin` always, and for a request
/// from an allowed `origin` the origin echoed, the exposed headers and (when configured and
/// the list is not [`AllowList::Any`]) `Access-Control-Allow-Credentials`.
pub(crate) fn decorate(
    cors: &Cors,
    origins: &AllowList,
    origin: Option<&HeaderValue>,
    h: &mut HeaderMap,
) {
    h.append(header::VARY, HeaderValue::from_static("Origin"));
    let Some(origin) = origin else {
        return;
    };
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    if cors.allow_credentials && !matches!(origins, AllowList::Any) {
        h.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
    }
}

/// The headers of a preflight answer (beside [`decorate`]'s): the methods `allow`, the
/// requested headers that are allowed, and the cache time.
pub(crate) fn preflight(cors: &Cors, request: &HeaderMap, allow: &'static str, h: &mut HeaderMap) {
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(allow),
    );
    let requested = request
        .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let mut echoed = String::new();
    let mut any = false;
    for name in requested.take(MAX_REQUESTED) {
        any = true;
        if allowed_header(name) {
            if !echoed.is_empty() {
                echoed.push_str(", ");
            }
            echoed.push_str(name);
        }
    }
    let value = if any {
        HeaderValue::try_from(echoed).ok()
    } else {
        Some(HeaderValue::from_static(DEFAULT_ALLOW_HEADERS))
    };
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, v);
    }
    if let Some(age) = cors.max_age {
        let mut s = String::new();
        let _ = write!(s, "{}", age.as_millis() / 1000);
        if let Ok(v) = HeaderValue::try_from(s) {
            h.insert(header::ACCESS_CONTROL_MAX_AGE, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names() {
        for ok in [
            "content-type",
            "Mcp-Session-Id",
            "MCP-PARAM-region",
            "last-event-id",
        ] {
            assert!(allowed_header(ok), "{ok}");
        }
        for bad in ["mcp-param-", "x-api-key", "cookie", "mcp-para", ""] {
            assert!(!allowed_header(bad), "{bad}");
        }
    }
}
