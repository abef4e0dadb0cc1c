//! Streamable HTTP in its 2026-07-28 form, beside the legacy form on the same endpoint: a POST
//! whose `MCP-Protocol-Version` names a version of the stateless era, when the server serves
//! one.
//!
//! Such a POST carries one request (or notification); no session id is read or minted, nothing
//! is stored: the request is served by a session that lives as long as the POST, and its reply
//! (JSON, or SSE carrying the request's own progress and log messages before its response)
//! ends with it. Closing the reply is the request's cancellation. GET and DELETE with such a
//! version get 405.
//!
//! The transport's checks, before a session exists, each a 4xx with a JSON-RPC error body
//! carrying the request's id: `Mcp-Method` present and equal to the body's method, `Mcp-Name`
//! equal to the named tool, prompt or resource (values may be `=?base64?…?=`), the header
//! version equal to the body's `_meta` version (-32020 `HeaderMismatch`, 400); the request's
//! own `_meta` as a server session checks it (-32022 with `data.supported` and
//! `data.requested`, -32602, 400); a method the revision does not have (-32601, 404).
//!
//! A `subscriptions/listen` POST is the one reply held open: always SSE (406 for a client that
//! does not accept it), its filter checked first (-32602, 400), at most
//! [`EndpointConfig::max_listen_streams`](super::EndpointConfig::max_listen_streams) at once
//! (503). Its session acknowledges it and then carries what the application
//! [publishes](crate::session::Session::publish) until the client closes the reply, the
//! application ends it (its result, then the end of the reply), the session ends it for
//! falling behind (the reply just ends: the `notifications/cancelled` the session writes is
//! for stdio), or the client does not pull what is sent fast enough
//! ([`EndpointConfig::max_stream_buffer`](super::EndpointConfig::max_stream_buffer): the reply
//! is cut and the session ends).

use alloc::borrow::Cow;
use alloc::format;

use super::*;
use crate::schema::methods::SUBSCRIPTIONS_LISTEN;
use crate::session::Subscription;
use crate::session::stateless::{check_request, unsupported_version};

/// `Mcp-Method`.
const MCP_METHOD: header::HeaderName = header::HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
const MCP_NAME: header::HeaderName = header::HeaderName::from_static("mcp-name");
/// -32020 `HeaderMismatch`.
const HEADER_MISMATCH: i64 = -32020;

impl Endpoint {
    /// Whether this endpoint serves the stateless era.
    fn serves_modern(&self) -> bool {
        self.config
            .session
            .versions
            .iter()
            .any(|v| v.is_stateless())
    }

    /// The version of the stateless era a request's `MCP-Protocol-Version` names, when this
    /// endpoint serves that era: `Some(Ok)` for one it serves, `Some(Err)` (answered -32022) for
    /// a version it does not know at all. `None`: a request of the legacy form.
    pub(super) fn modern_version(&self, parts: &Parts) -> Option<Result<ProtocolVersion, String>> {
        if !self.serves_modern() {
            return None;
        }
        let raw = single(&parts.headers, &MCP_PROTOCOL_VERSION)?;
        match ProtocolVersion::parse(raw) {
            Some(v) if v.is_stateless() && self.config.session.versions.contains(&v) => Some(Ok(v)),
            Some(_) => None,
            None => Some(Err(String::from(raw))),
        }
    }

    /// A POST of the stateless era (see the module doc).
    pub(super) fn post_modern(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        c: &Classified,
        version: Result<ProtocolVersion, String>,
    ) -> Response<Body> {
        if c.batch {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: a POST of the 2026-07-28 transport carries one message",
                None,
            );
        }
        let (id, method, params) = match jsonrpc::parse(body) {
            Parsed::Single(Ok(Envelope::Request { id, method, params })) => (id, method, params),
            Parsed::Single(Ok(Envelope::Notification { .. })) => {
                // No notification from client to server is used over HTTP in this revision.
                self.stats.messages_dropped += 1;
                return plain(StatusCode::ACCEPTED, Body::Empty);
            }
            _ => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Invalid Request: a client sends no responses in 2026-07-28",
                    None,
                );
            }
        };
        let version = match version {
            Ok(v) => v,
            Err(raw) => {
                let e = unsupported_version(&self.config.session, &raw);
                return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
            }
        };
        if let Err(message) = check_headers(parts, &method, params) {
            let e = Error::new(ErrorKind::Other, message).with_code(HEADER_MISMATCH);
            return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
        }
        let Some(p) = params else {
            let e = Error::invalid_params("missing `params` with the request's `_meta`");
            return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
        };
        match check_request(&self.config.session, &self.own_caps, &method, p) {
            Ok((era, _)) if era.version != version => {
                let e = Error::new(
                    ErrorKind::Other,
                    format!(
                        "Header mismatch: MCP-Protocol-Version is {version}, the request's `_meta` says {}",
                        era.version
                    ),
                )
                .with_code(HEADER_MISMATCH);
                return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
            }
            Ok(_) => {}
            Err(e) => {
                let status = if e.kind() == ErrorKind::MethodNotFound {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::BAD_REQUEST
                };
                return error_reply(status, Some(&id), e);
            }
        }
        let listen = method == SUBSCRIPTIONS_LISTEN;
        if listen && let Some(refused) = self.listen_refusal(parts, p, &id) {
            return refused;
        }
        if self.sessions.len() >= self.config.max_sessions {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: too many requests in progress",
                Some(&id),
            );
        }
        let sid = self.transient_id();
        let mut session = Session::server(self.config.session.clone());
        session.requests_refused = Some(NO_SERVER_REQUESTS);
        let mut entry = Entry::new(session, None, true, now);
        self.stats.sessions_created += 1;
        if listen {
            entry.listen = true;
            self.listening += 1;
        }
        // A listen stream is an SSE reply held open, whatever the reply mode.
        let json = self.config.response_mode != ResponseMode::Sse && !listen;
        let (l, conn) = self.open_post(&mut entry, sid, c, json);
        entry.session.handle_message(now, body);
        self.settle(now, sid, entry, Some(l));
        self.post_reply(conn, json, None)
    }
}

impl Endpoint {
    /// The transport's view of a `subscriptions/listen` POST, its refusal if any: its filter
    /// (400 with -32602 when it has none), an SSE reply the client accepts (406), room for
    /// another stream (503,
    /// [`EndpointConfig::max_listen_streams`](super::EndpointConfig::max_listen_streams)).
    fn listen_refusal(
        &self,
        parts: &Parts,
        params: &serde_json::value::RawValue,
        id: &RequestId,
    ) -> Option<Response<Body>> {
        if let Err(e) = Subscription::parse(params, &self.own_caps) {
            return Some(error_reply(StatusCode::BAD_REQUEST, Some(id), e));
        }
        if !accepts(&parts.headers, "text", "event-stream") {
            return Some(rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                "Not Acceptable: a subscriptions/listen stream is text/event-stream",
                Some(id),
            ));
        }
        if self.listening >= self.config.max_listen_streams {
            return Some(rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                "Service Unavailable: too many subscriptions/listen streams open",
                Some(id),
            ));
        }
        None
    }
}

/// Why a session of the stateless era sends no request.
const NO_SERVER_REQUESTS: &str =
    "a server sends no requests in 2026-07-28 (ask for input with an `input_required` result)";

/// The JSON-RPC error `e` for request `id`, with `status`.
fn error_reply(status: StatusCode, id: Option<&RequestId>, e: Error) -> Response<Body> {
    let (code, message, data) = e.into_parts();
    let mut body = Vec::with_capacity(96 + message.len());
    jsonrpc::write_error(&mut body, id, code, &message, data.as_deref());
    json_reply(status, Body::Full(body))
}

/// `Mcp-Method` and `Mcp-Name` against the body.
fn check_headers(
    parts: &Parts,
    method: &str,
    params: Option<&serde_json::value::RawValue>,
) -> Result<(), String> {
    let Some(raw) = parts.headers.get(&MCP_METHOD) else {
        return Err(String::from(
            "Header mismatch: the Mcp-Method header is required",
        ));
    };
    let named = header_value(raw).ok_or("Header mismatch: Mcp-Method is not a valid value")?;
    if named != method {
        return Err(format!(
            "Header mismatch: Mcp-Method is {named:?}, the body's method is {method:?}"
        ));
    }
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow)]
        uri: Option<Cow<'a, str>>,
    }
    let body_name = params
        .and_then(|p| serde_json::from_str::<Named<'_>>(p.get()).ok())
        .and_then(|n| if field == "name" { n.name } else { n.uri });
    let Some(raw) = parts.headers.get(&MCP_NAME) else {
        return Err(String::from(
            "Header mismatch: the Mcp-Name header is required for this method",
        ));
    };
    let header_name = header_value(raw).ok_or("Header mismatch: Mcp-Name is not a valid value")?;
    match body_name {
        Some(n) if n == header_name => Ok(()),
        other => Err(format!(
            "Header mismatch: Mcp-Name is {header_name:?}, the body's `{field}` is {:?}",
            other.as_deref().unwrap_or("")
        )),
    }
}

/// A header's text: visible ASCII as it is, or the UTF-8 inside `=?base64?…?=`.
fn header_value(v: &HeaderValue) -> Option<String> {
    let s = v.to_str().ok()?.trim();
    match s
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(base64_decode(b64)?).ok(),
        None => Some(String::from(s)),
    }
}

/// Standard base64 (with or without padding).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(bytes.get(1..4)?),
            3 => out.extend_from_slice(bytes.get(1..3)?),
            2 => out.extend_from_slice(bytes.get(1..2)?),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_values() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("w6l0w6k=").unwrap(), "été".as_bytes());
        assert_eq!(base64_decode("").unwrap(), b"");
        assert!(base64_decode("a").is_none());
        assert!(base64_decode("a*==").is_none());
        let v = HeaderValue::from_static("=?base64?w6l0w6k=?=");
        assert_eq!(header_value(&v).unwrap(), "été");
        assert_eq!(
            header_value(&HeaderValue::from_static("echo")).unwrap(),
            "echo"
        );
    }
}
