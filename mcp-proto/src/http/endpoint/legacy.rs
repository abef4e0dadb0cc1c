//! The legacy HTTP+SSE transport (protocol version 2024-11-05), served by the same endpoint
//! as Streamable HTTP when [`EndpointConfig::legacy_sse`](super::EndpointConfig::legacy_sse)
//! is set.
//!
//! `GET <sse_path>` opens a session and its one SSE stream, whose first event is
//! `event: endpoint` with `data: <messages_path>?sessionId=<id>`. The client POSTs each
//! message there and gets `202 Accepted`; everything the server sends in that session —
//! responses, notifications, requests — is an `event: message` on the stream. The session ends
//! when the stream does. There are no event ids and no resumption (2024-11-05 has none), no
//! `MCP-Session-Id` or `MCP-Protocol-Version` headers, and the version is whatever the
//! client's `initialize` negotiates.
//!
//! Status precedence: 403 (`Host`, `Origin`, checked by the caller), 405 (method); GET 406
//! (`Accept`), 503 (sessions); POST 400 (no `sessionId`), 404 (unknown or ended session), 415
//! (`Content-Type`), 413 (size), 400 + -32700/-32600 (body), 400 (batch not allowed by the
//! version, request id in flight), then 202.

use alloc::format;

use super::*;

impl Endpoint {
    /// Whether `path` is one of the legacy transport's paths (when it is enabled).
    pub(super) fn is_legacy_path(&self, path: &str) -> bool {
        self.config
            .legacy_sse
            .as_ref()
            .is_some_and(|l| path == l.sse_path || path == l.messages_path)
    }

    /// The methods a legacy path serves (its `Allow` header).
    pub(super) fn legacy_methods(&self, path: &str) -> &'static str {
        let (sse, messages) = match &self.config.legacy_sse {
            Some(l) => (path == l.sse_path, path == l.messages_path),
            None => (false, false),
        };
        match (sse, messages) {
            (true, true) => "GET, POST",
            (true, false) => "GET",
            _ => "POST",
        }
    }

    /// A request to a legacy path: GET opens a session, POST delivers a message.
    pub(super) fn legacy_request(
        &mut self,
        now: Instant,
        parts: &Parts,
        body: &[u8],
        random: Option<u128>,
    ) -> Response<Body> {
        let path = parts.uri.path();
        let (sse, messages) = match &self.config.legacy_sse {
            Some(l) => (path == l.sse_path, path == l.messages_path),
            None => (false, false),
        };
        match parts.method {
            Method::GET if sse => self.legacy_open(now, parts, random),
            Method::POST if messages => self.legacy_post(now, parts, body),
            _ if !(sse || messages) => plain(StatusCode::NOT_FOUND, Body::Empty),
            _ => {
                let mut r = rpc_error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    TRANSPORT_ERROR,
                    "Method Not Allowed",
                    None,
                );
                let allow = self.legacy_methods(path);
                r.headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static(allow));
                r
            }
        }
    }

    /// `GET <sse_path>`: a new session whose id is `random`, and its stream, which starts with
    /// the `endpoint` event.
    fn legacy_open(&mut self, now: Instant, parts: &Parts, random: Option<u128>) -> Response<Body> {
        if !accepts(&parts.headers, "text", "event-stream") {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                "Not Acceptable: the client must accept text/event-stream",
                None,
            );
        }
        let peer = peer_of(parts);
        let sid = match self.fresh_session_id(now, random, peer) {
            Ok(sid) => sid,
            Err(refused) => return refused.reply(),
        };
        let Some(messages) = self.config.legacy_sse.as_ref().map(|l| &l.messages_path) else {
            return plain(StatusCode::NOT_FOUND, Body::Empty);
        };
        let endpoint = format!("{messages}?sessionId={sid}");
        let session = Session::server(self.config.session.clone());
        let mut entry = Entry::new(session, None, false, now);
        entry.legacy = true;
        self.set_peer(&mut entry, peer);
        entry.owner = owner_of(parts).map(String::from);
        self.stats.sessions_created += 1;
        let (_, conn) = self.new_standalone(&mut entry, sid);
        if let Some(c) = self.conns.get_mut(&conn) {
            sse::encode_event(&mut c.queue, Some("endpoint"), None, &endpoint);
        }
        self.settle(now, sid, entry, None);
        sse_reply(Body::Stream(conn))
    }

    /// `POST <messages_path>?sessionId=<id>`: one message or batch into the session; what it
    /// leads to travels on the session's stream.
    fn legacy_post(&mut self, now: Instant, parts: &Parts, body: &[u8]) -> Response<Body> {
        let Some(raw) = session_param(parts.uri.query()) else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                TRANSPORT_ERROR,
                "Bad Request: the sessionId query parameter is required",
                None,
            );
        };
        let owner = owner_of(parts);
        let Some(sid) = SessionId::parse(raw).filter(|sid| {
            self.sessions
                .get(sid)
                .is_some_and(|e| e.legacy && e.owner.as_deref() == owner)
        }) else {
            return rpc_error(
                StatusCode::NOT_FOUND,
                TRANSPORT_ERROR,
                "Session not found",
                None,
            );
        };
        let c = match self.check_body(parts, body) {
            Ok(c) => c,
            Err(r) => return r.reply(),
        };
        let Some(mut entry) = self.sessions.remove(&sid) else {
            return rpc_error(
                StatusCode::NOT_FOUND,
                TRANSPORT_ERROR,
                "Session not found",
                None,
            );
        };
        if let Err(r) = admit(&entry, &c, entry.session.version()) {
            self.sessions.insert(sid, entry);
            return r.reply();
        }
        entry.last_activity = now;
        let stream = entry.standalone;
        if let Some(l) = stream {
            for id in c.requests.iter() {
                entry.routes.insert(id.clone(), l);
            }
        }
        entry.session.handle_message(now, body);
        self.settle(now, sid, entry, stream);
        let mut r = plain(StatusCode::ACCEPTED, Body::Full(b"Accepted".to_vec()));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        r
    }
}

/// The value of the `sessionId` query parameter. The client sends back the URL of the
/// `endpoint` event verbatim, so the value is the id as announced (hex digits, nothing to
/// percent-decode); a mangled one simply names no session.
pub(in crate::http) fn session_param(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "sessionId")
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::session_param;

    #[test]
    fn session_param_is_found_among_others() {
        assert_eq!(session_param(Some("sessionId=ab")), Some("ab"));
        assert_eq!(session_param(Some("x=1&sessionId=ab&y")), Some("ab"));
        assert_eq!(session_param(Some("sessionId=")), Some(""));
        assert_eq!(session_param(Some("sessionid=ab")), None);
        assert_eq!(session_param(Some("sessionId")), None);
        assert_eq!(session_param(None), None);
    }
}
