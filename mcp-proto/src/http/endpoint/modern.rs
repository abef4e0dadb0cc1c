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
//! is cut and the session ends). A stream silent for
//! [`EndpointConfig::listen_keep_alive`](super::EndpointConfig::listen_keep_alive) (20 s by
//! default) gets an SSE comment (`: keep-alive`), so that proxies do not cut it as idle; a
//! message pushes the next one a whole interval away. [`Endpoint::shut_down`] ends every
//! stream gracefully: its session closes, which answers the listen request with its result.

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
        if let Err(message) = check_headers(parts, &method, params)
            .and_then(|()| self.check_param_headers(parts, &method, params))
        {
            let e = Error::new(ErrorKind::HeaderMismatch, message);
            return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
        }
        let Some(p) = params else {
            let e = Error::invalid_params("missing `params` with the request's `_meta`");
            return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
        };
        // The header and the body disagree: -32020, before the body's version is judged.
        if let Some(said) = body_version(p)
            && said != version_text(&version)
        {
            let e = Error::new(
                ErrorKind::HeaderMismatch,
                format!(
                    "Header mismatch: MCP-Protocol-Version is {}, the request's `_meta` says {said}",
                    version_text(&version)
                ),
            );
            return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
        }
        let version = match version {
            Ok(v) => v,
            Err(raw) => {
                let e = unsupported_version(&self.config.session, &raw);
                return error_reply(StatusCode::BAD_REQUEST, Some(&id), e);
            }
        };
        match check_request(&self.config.session, &self.own_caps, &method, p) {
            Ok((era, _)) if era.version != version => {
                let e = Error::new(
                    ErrorKind::HeaderMismatch,
                    format!(
                        "Header mismatch: MCP-Protocol-Version is {version}, the request's `_meta` says {}",
                        era.version
                    ),
                );
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
        if !self.make_room(now) {
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
            // A listen stream is an SSE reply held open, whatever the reply mode: its head is
            // known at once.
            entry.listen = true;
            entry.keep_alive = self.config.listen_keep_alive.map(|d| now + d);
            self.listening += 1;
            let (l, conn) = self.open_post_as(&mut entry, sid, c, false, false);
            entry.session.handle_message(now, body);
            self.settle(now, sid, entry, Some(l));
            return self.post_reply(conn, false, None);
        }
        // JSON, unless the request's progress or log messages go out before its answer (then
        // SSE); with `ResponseMode::Json*`, always JSON (those messages are dropped).
        let lazy = self.config.response_mode == ResponseMode::Sse;
        let (l, conn) = self.open_post_as(&mut entry, sid, c, true, lazy);
        entry.session.handle_message(now, body);
        self.settle(now, sid, entry, Some(l));
        let mut reply = self.post_reply(conn, true, None);
        match reply.body() {
            // Answered at once: the status follows the answer now.
            Body::Full(b) => *reply.status_mut() = reply_status(b),
            // The head waits (see [`DeferredHead`]).
            _ => {
                reply.extensions_mut().insert(DeferredHead);
            }
        }
        reply
    }
}

/// Marks a reply to a POST of the 2026-07-28 transport whose head is not settled yet: it is
/// one JSON body whose status depends on the answer (400 for the revision's -32020, -32021 and
/// -32022, 404 for -32601), unless the request's progress or log messages go out before the
/// answer, which makes it an SSE stream (200, `text/event-stream`). Whoever writes the reply
/// holds its head until the body's first [`StreamPoll::Data`], then asks
/// [`Endpoint::stream_is_sse`]: SSE as it comes, or the complete JSON body (that first chunk)
/// with the status [`reply_status`] gives and `Content-Type: application/json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeferredHead;

/// The HTTP status of a complete JSON reply of the 2026-07-28 transport: 400 for a JSON-RPC
/// error -32020 (header mismatch), -32021 (missing required client capability) or -32022
/// (unsupported protocol version), 404 for -32601 (method not found), 200 otherwise.
///
/// ```
/// use mcp_proto::http::reply_status;
/// let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"needs sampling"}}"#;
/// assert_eq!(reply_status(body).as_u16(), 400);
/// assert_eq!(reply_status(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).as_u16(), 200);
/// ```
pub fn reply_status(body: &[u8]) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Reply {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    if memchr::memmem::find(body, b"\"error\"").is_none() {
        return StatusCode::OK;
    }
    match serde_json::from_slice::<Reply>(body)
        .ok()
        .and_then(|r| r.error)
    {
        Some(Code {
            code: -32022..=-32020,
        }) => StatusCode::BAD_REQUEST,
        Some(Code { code: -32601 }) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The `io.modelcontextprotocol/protocolVersion` a request's `_meta` names, as written.
fn body_version(params: &serde_json::value::RawValue) -> Option<Cow<'_, str>> {
    #[derive(serde::Deserialize)]
    struct P<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<M<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct M<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<Cow<'a, str>>,
    }
    let p: P<'_> = serde_json::from_str(params.get()).ok()?;
    p.meta?.version
}

/// The header's version as written.
fn version_text(v: &Result<ProtocolVersion, String>) -> &str {
    match v {
        Ok(v) => v.as_str(),
        Err(raw) => raw,
    }
}

impl Endpoint {
    /// A `tools/call` of an annotated tool: each annotated argument present (not `null`) in
    /// the body is in its `Mcp-Param-*` header with the same value, and no such header is sent
    /// for an argument the body does not have (SEP-2243).
    fn check_param_headers(
        &self,
        parts: &Parts,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Result<(), String> {
        if method != "tools/call" {
            return Ok(());
        }
        let Some(lookup) = &self.config.tool_headers else {
            return Ok(());
        };
        #[derive(serde::Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            name: Cow<'a, str>,
            arguments: Option<serde_json::Map<String, serde_json::Value>>,
        }
        let Some(call) = params.and_then(|p| serde_json::from_str::<Call<'_>>(p.get()).ok()) else {
            return Ok(());
        };
        let Some(annotated) = lookup(&call.name) else {
            return Ok(());
        };
        let args = call.arguments.unwrap_or_default();
        for a in annotated.iter() {
            let header = format!("mcp-param-{}", a.header);
            let sent = match parts.headers.get(header.as_str()) {
                None => None,
                Some(v) => Some(header_value(v).ok_or_else(|| {
                    format!(
                        "Header mismatch: Mcp-Param-{} is not a valid value",
                        a.header
                    )
                })?),
            };
            let expected = match args.get(&a.property) {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(other) => Some(other.to_string()),
            };
            let same = match (&sent, &expected) {
                (None, None) => true,
                (Some(h), Some(b)) => h == b || numbers_equal(h, b),
                _ => false,
            };
            if !same {
                return Err(format!(
                    "Header mismatch: Mcp-Param-{} is {:?}, the argument `{}` is {:?}",
                    a.header,
                    sent.as_deref().unwrap_or("(absent)"),
                    a.property,
                    expected.as_deref().unwrap_or("(absent)")
                ));
            }
        }
        Ok(())
    }
}

/// Two decimal integers that are the same number (`042` and `42`).
fn numbers_equal(a: &str, b: &str) -> bool {
    match (a.parse::<i128>(), b.parse::<i128>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
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
        // The tasks extension routes by task (SEP-2663).
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return Ok(()),
    };
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow)]
        uri: Option<Cow<'a, str>>,
        #[serde(rename = "taskId", borrow)]
        task_id: Option<Cow<'a, str>>,
    }
    let body_name = params
        .and_then(|p| serde_json::from_str::<Named<'_>>(p.get()).ok())
        .and_then(|n| match field {
            "name" => n.name,
            "uri" => n.uri,
            _ => n.task_id,
        });
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

/// Standard base64 with its padding (a length that is a multiple of 4, at most two `=` at the
/// end): anything else is refused, as SEP-2243 requires of header values.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let pad = s.len() - s.trim_end_matches('=').len();
    if !s.len().is_multiple_of(4) || pad > 2 {
        return None;
    }
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
        assert!(base64_decode("aGVsbG8").is_none(), "padding is required");
        assert!(base64_decode("SGVs!!!bG8=").is_none());
        assert!(base64_decode("aGVsbG8===").is_none());
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
