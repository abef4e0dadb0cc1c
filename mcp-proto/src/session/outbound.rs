//! Requests and notifications this side sends: ids, the capability and version checks, timeouts,
//! cancellation, progress tokens, and the one outcome of each request.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use super::caps::gate_name;
use super::config::{RequestOptions, raw_from_vec};
use super::encode::Outgoing;
use super::event::Event;
use super::inbound::mentions_meta;
use super::lifecycle::State;
use crate::error::{Error, ErrorKind};
use crate::id::{ProgressToken, RequestId};
use crate::jsonrpc;
use crate::method;
use crate::time::{Duration, Instant};
use crate::version::ProtocolVersion;
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) is_initialize: bool,
    /// `server/discover` of a client that starts in the stateless era.
    pub(super) is_discover: bool,
    pub(super) timeout: Option<Duration>,
    pub(super) hard_deadline: Option<Instant>,
    pub(super) deadline: Option<Instant>,
    pub(super) reset_on_progress: bool,
    pub(super) progress: bool,
    pub(super) last_progress: Option<f64>,
    /// A `subscriptions/listen`: no default timeout, and the server may end it.
    pub(super) listen: bool,
    /// A stateless-era `tools/list`: its tools' `x-mcp-header` annotations are learned.
    pub(super) lists_tools: bool,
}

impl Session {
    // ---------------------------------------------------------------- commands

    /// Sends a request; its one outcome arrives as [`Event::Response`] (the peer's result or
    /// error, [`ErrorKind::Timeout`] after the request's timeout, [`ErrorKind::TransportClosed`]
    /// when the session ends first, [`ErrorKind::RequestCancelled`] after [`cancel`](Self::cancel)).
    ///
    /// # Errors
    /// Nothing is queued when it fails: [`ErrorKind::TransportError`] when the transport
    /// refuses requests (stateless and JSON-only HTTP sessions);
    /// [`ErrorKind::TransportClosed`] when the session is closing or closed;
    /// [`ErrorKind::NotInitialized`] before the handshake completed (but `ping`);
    /// [`ErrorKind::ProtocolInvalid`] for `initialize` (use [`initialize`](Self::initialize));
    /// [`ErrorKind::MethodNotFound`] for a method this side does not send in the negotiated
    /// version, or one whose capability the peer did not declare;
    /// [`ErrorKind::InvalidParams`] for `params` that are not a JSON object;
    /// [`ErrorKind::LimitExceeded`] when
    /// [`max_outbound_in_flight`](super::Config::max_outbound_in_flight) requests are in
    /// flight.
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        if let Some(why) = self.requests_refused {
            return Err(Error::new(ErrorKind::TransportError, why));
        }
        let name = self.check_outbound(method, true)?;
        if let Some(p) = &params
            && !p.get().starts_with('{')
        {
            return Err(Error::invalid_params(
                "request params must be a JSON object",
            ));
        }
        if self.pending.len() >= self.config.max_outbound_in_flight {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                alloc::format!("{} requests already in flight", self.pending.len()),
            ));
        }
        let id = self.alloc_id();
        let params = match (&self.era_meta, opts.progress) {
            (None, false) => params,
            (None, true) => Some(with_progress_token(params, id)?),
            // Stateless era: the era's `_meta` on every request (and the token with it).
            (Some(_), false) => self.era_params(params)?,
            (Some(entries), true) => {
                let mut m = entries.to_vec();
                m.extend_from_slice(b",\"progressToken\":");
                RequestId::Number(id).write_json(&mut m);
                Some(with_meta_entries(params, &m)?)
            }
        };
        // A listen stream lasts as long as the subscription: no default timeout.
        let listen = name == super::listen::LISTEN;
        let timeout = match listen {
            true => opts.timeout,
            false => opts.timeout.or(self.config.request_timeout),
        };
        let hard_deadline = opts.max_total_timeout.map(|m| now + m);
        let deadline = earliest(timeout.map(|t| now + t), hard_deadline);
        self.pending.insert(
            id,
            Pending {
                is_initialize: false,
                is_discover: false,
                timeout,
                hard_deadline,
                deadline,
                reset_on_progress: opts.reset_timeout_on_progress,
                progress: opts.progress,
                last_progress: None,
                listen,
                lists_tools: self.era_meta.is_some() && name == "tools/list",
            },
        );
        self.out.push_back(Outgoing::Request {
            id,
            method: name,
            params,
            related: opts.related_to,
        });
        Ok(RequestId::Number(id))
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// As [`notify_related`](Self::notify_related).
    pub fn notify(&mut self, method: &str, params: Option<Box<RawValue>>) -> Result<(), Error> {
        self.notify_related(method, params, None)
    }

    /// Sends a notification that belongs to an inbound request (e.g. a log message during a
    /// tool call), so HTTP transports can put it on that request's stream.
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolInvalid`] (-32600) for `notifications/cancelled`,
    /// `notifications/progress` and `notifications/initialized`, which the session sends
    /// itself; [`ErrorKind::TransportClosed`] when the session is closing or closed;
    /// [`ErrorKind::NotInitialized`] before the handshake completed (a server's log messages
    /// excepted, and a notification related to a 2026-07-28 request);
    /// [`ErrorKind::MethodNotFound`] for a notification this side does not send in the
    /// negotiated version; [`ErrorKind::InvalidParams`] for `params` that are not a JSON
    /// object.
    pub fn notify_related(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), Error> {
        if matches!(
            method,
            "notifications/cancelled" | "notifications/progress" | "notifications/initialized"
        ) {
            return Err(Error::invalid_request(alloc::format!(
                "`{method}` is sent by the session itself (use cancel / report_progress)"
            )));
        }
        // A notification about a stateless-era request (a log message, say) needs no
        // handshake: that request carried the era with it.
        let stateless = related
            .as_ref()
            .and_then(|id| self.inbound.get(id))
            .is_some_and(|entry| entry.stateless);
        let name = if stateless && !matches!(self.state, State::Closing | State::Closed) {
            match method::lookup(method) {
                Some(spec) => Cow::Borrowed(spec.name),
                None => Cow::Owned(String::from(method)),
            }
        } else {
            self.check_outbound(method, false)?
        };
        if let Some(p) = &params
            && !p.get().starts_with('{')
        {
            return Err(Error::invalid_params(
                "notification params must be a JSON object",
            ));
        }
        self.out.push_back(Outgoing::Notification {
            method: name,
            params,
            related,
        });
        Ok(())
    }

    /// Our request `id` failed in the transport (its HTTP exchange was refused or broke):
    /// its outcome is `error`, and nothing goes to the peer. A failed `initialize` fails the
    /// session with `error`. A request no longer awaited is left alone.
    pub fn fail_request(&mut self, _now: Instant, id: &RequestId, error: Error) {
        let RequestId::Number(n) = id else {
            return;
        };
        match self.pending.remove(n) {
            None => {}
            Some(p) if p.is_discover => self.on_discover_result(_now, Err(error)),
            Some(p) if p.is_initialize => {
                self.reinitializing = false;
                self.fail_connection(error);
            }
            Some(_) => self.events.push_back(Event::Response {
                id: id.clone(),
                result: Err(error),
            }),
        }
    }

    /// Cancels an outbound request: `notifications/cancelled` goes to the peer and the request's
    /// outcome is [`ErrorKind::RequestCancelled`]. A late response is dropped quietly.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] for an id that is not an outbound request in flight (never
    /// sent, or already answered); [`ErrorKind::ProtocolInvalid`] for the `initialize` or
    /// `server/discover` that starts the session (its outcome is the session's start).
    pub fn cancel(
        &mut self,
        _now: Instant,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        let RequestId::Number(n) = id else {
            return Err(Error::new(ErrorKind::NotFound, "no such outbound request"));
        };
        match self.pending.get(n) {
            None => Err(Error::new(ErrorKind::NotFound, "no such outbound request")),
            Some(p) if p.is_initialize => {
                Err(Error::invalid_request("`initialize` must not be cancelled"))
            }
            // Its outcome is the session's start (`Event::Ready` or `Event::Closed`), not an
            // `Event::Response`: cancelling it would leave the session starting forever.
            Some(p) if p.is_discover => Err(Error::invalid_request(
                "`server/discover` that starts the session must not be cancelled",
            )),
            Some(_) => {
                self.pending.remove(n);
                self.out.push_back(Outgoing::Cancelled {
                    id: id.clone(),
                    reason: reason.map(|r| Cow::Owned(String::from(r))),
                });
                self.events.push_back(Event::Response {
                    id: id.clone(),
                    result: Err(Error::new(ErrorKind::RequestCancelled, "request cancelled")),
                });
                Ok(())
            }
        }
    }

    // ---------------------------------------------------------------- timeouts

    /// Tells the session that time has passed; expired requests time out. Safe to call at any
    /// time, however often.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        if self.state == State::Closing {
            self.close_timed_out(now);
            if self.state == State::Closed {
                return;
            }
        }
        let mut expired: Vec<i64> = Vec::new();
        for (id, p) in &self.pending {
            if p.deadline.is_some_and(|d| d <= now) {
                expired.push(*id);
            }
        }
        for id in expired {
            let Some(p) = self.pending.remove(&id) else {
                continue;
            };
            if p.is_discover {
                self.on_discover_result(
                    now,
                    Err(Error::new(
                        ErrorKind::Timeout,
                        "`server/discover` timed out",
                    )),
                );
                continue;
            }
            if p.is_initialize {
                self.fail_connection(Error::new(ErrorKind::Timeout, "`initialize` timed out"));
                return;
            }
            self.out.push_back(Outgoing::Cancelled {
                id: RequestId::Number(id),
                reason: Some(Cow::Borrowed("request timed out")),
            });
            self.events.push_back(Event::Response {
                id: RequestId::Number(id),
                result: Err(Error::new(ErrorKind::Timeout, "request timed out")),
            });
        }
    }

    /// The next deadline at which [`handle_timeout`](Session::handle_timeout) must be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        let close = match self.state {
            State::Closing => self.close_deadline,
            _ => None,
        };
        earliest(
            self.pending.values().filter_map(|p| p.deadline).min(),
            close,
        )
    }

    // --------------------------------------------------------------- internals

    pub(super) fn alloc_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        id
    }

    fn check_outbound(&self, method: &str, request: bool) -> Result<Cow<'static, str>, Error> {
        match self.state {
            State::Closed | State::Closing => {
                return Err(Error::new(
                    ErrorKind::TransportClosed,
                    "the session is closed",
                ));
            }
            State::Ready => {}
            State::AwaitingInit | State::Initializing => {
                let allowed = if request {
                    method == "ping"
                } else {
                    // A server may log before `initialized`.
                    !self.client
                        && self.state == State::Initializing
                        && method == "notifications/message"
                };
                if !allowed {
                    return Err(Error::new(
                        ErrorKind::NotInitialized,
                        alloc::format!("cannot send `{method}` before the handshake completes"),
                    ));
                }
            }
        }
        if method == "initialize" {
            return Err(Error::invalid_request(
                "use `initialize()` to start the handshake",
            ));
        }
        let Some(spec) = method::lookup(method) else {
            return Ok(Cow::Owned(String::from(method)));
        };
        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        if spec.request != request || !spec.sent_by(self.client) || !spec.in_version(version) {
            return Err(Error::new(
                ErrorKind::MethodNotFound,
                alloc::format!("`{method}` is not sent by this side in protocol {version}"),
            ));
        }
        if request
            && let Some(peer) = &self.peer
            && !peer.caps.allows(spec.gate, version)
        {
            return Err(Error::new(
                ErrorKind::MethodNotFound,
                alloc::format!(
                    "the peer did not declare the `{}` capability needed for `{method}`",
                    gate_name(spec.gate)
                ),
            ));
        }
        Ok(Cow::Borrowed(spec.name))
    }

    pub(super) fn on_response(
        &mut self,
        now: Instant,
        id: RequestId,
        result: Result<&RawValue, Error>,
    ) {
        let RequestId::Number(n) = id else {
            self.events.push_back(Event::UnknownResponse { id });
            return;
        };
        match self.pending.remove(&n) {
            Some(p) if p.is_discover => self.on_discover_result(now, result),
            Some(p) if p.is_initialize => self.on_initialize_result(result),
            Some(p) => {
                if p.lists_tools
                    && let Ok(raw) = result
                {
                    self.learn_param_headers(raw);
                }
                self.events.push_back(Event::Response {
                    id,
                    result: result.map(ToOwned::to_owned),
                })
            }
            // One of ours that already has its outcome (timed out, cancelled): dropped quietly.
            None if n >= 1 && n < self.next_id => {}
            None => self.events.push_back(Event::UnknownResponse { id }),
        }
    }

    pub(super) fn on_progress(&mut self, now: Instant, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            progress_token: ProgressToken,
            progress: f64,
            total: Option<f64>,
            message: Option<String>,
            #[serde(rename = "_meta")]
            meta: Option<Box<RawValue>>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P>(p.get()).ok()) else {
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "malformed `notifications/progress`",
                )));
            return;
        };
        let RequestId::Number(n) = p.progress_token else {
            return;
        };
        let Some(pending) = self.pending.get_mut(&n) else {
            return;
        };
        if !pending.progress {
            return;
        }
        if pending.last_progress.is_some_and(|last| p.progress <= last) {
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "progress did not increase; notification dropped",
                )));
            return;
        }
        pending.last_progress = Some(p.progress);
        if pending.reset_on_progress {
            pending.deadline = earliest(pending.timeout.map(|t| now + t), pending.hard_deadline);
        }
        self.events.push_back(Event::Progress {
            id: RequestId::Number(n),
            progress: p.progress,
            total: p.total,
            message: p.message,
            meta: p.meta,
        });
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Adds `_meta.progressToken = token` to request params.
fn with_progress_token(params: Option<Box<RawValue>>, token: i64) -> Result<Box<RawValue>, Error> {
    let mut entry = Vec::with_capacity(24);
    entry.extend_from_slice(b"\"progressToken\":");
    RequestId::Number(token).write_json(&mut entry);
    with_meta_entries(params, &entry)
}

/// `params` with `entries` (JSON object members) in its `_meta`, which is created if absent.
pub(super) fn with_meta_entries(
    params: Option<Box<RawValue>>,
    entries: &[u8],
) -> Result<Box<RawValue>, Error> {
    let mut head = Vec::with_capacity(12 + entries.len());
    head.extend_from_slice(b"{\"_meta\":{");
    head.extend_from_slice(entries);
    head.push(b'}');
    let Some(params) = params else {
        head.push(b'}');
        return Ok(raw_from_vec(head));
    };
    let s = params.get();
    if !mentions_meta(s) {
        let rest = s.trim_start().strip_prefix('{').unwrap_or("}");
        if !rest.trim_start().starts_with('}') {
            head.push(b',');
        }
        head.extend_from_slice(rest.as_bytes());
        return Ok(raw_from_vec(head));
    }
    let mut map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(s)
        .map_err(|e| Error::invalid_params(alloc::format!("params: {e}")))?;
    let mut members = Vec::with_capacity(entries.len() + 2);
    members.push(b'{');
    members.extend_from_slice(entries);
    members.push(b'}');
    let added: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&members)
        .map_err(|e| Error::internal(alloc::format!("_meta entries: {e}")))?;
    let meta = map
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    match meta {
        serde_json::Value::Object(m) => m.extend(added),
        _ => return Err(Error::invalid_params("`_meta` must be an object")),
    }
    jsonrpc::to_raw(&map)
}

/// [`with_meta_entries`] on an object that is returned as it was when its `_meta` cannot take
/// the entries (not an object).
pub(super) fn with_meta_entries_or_same(value: Box<RawValue>, entries: &[u8]) -> Box<RawValue> {
    if mentions_meta(value.get()) {
        let parsed =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(value.get());
        if !matches!(
            parsed.as_ref().map(|m| m.get("_meta")),
            Ok(None | Some(serde_json::Value::Object(_)))
        ) {
            return value;
        }
    }
    match with_meta_entries(Some(value), entries) {
        Ok(v) => v,
        // Checked above: the merge cannot fail here.
        Err(_) => jsonrpc::empty_object(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.into()).unwrap()
    }

    #[test]
    fn progress_token_injection() {
        assert_eq!(
            with_progress_token(None, 3).unwrap().get(),
            r#"{"_meta":{"progressToken":3}}"#
        );
        assert_eq!(
            with_progress_token(Some(raw("{}")), 3).unwrap().get(),
            r#"{"_meta":{"progressToken":3}}"#
        );
        assert_eq!(
            with_progress_token(Some(raw(r#"{"name":"x"}"#)), 4)
                .unwrap()
                .get(),
            r#"{"_meta":{"progressToken":4},"name":"x"}"#
        );
        let v: serde_json::Value = serde_json::from_str(
            with_progress_token(Some(raw(r#"{"name":"x","_meta":{"a":1}}"#)), 5)
                .unwrap()
                .get(),
        )
        .unwrap();
        assert_eq!(v["_meta"]["progressToken"], 5);
        assert_eq!(v["_meta"]["a"], 1);
        assert!(with_progress_token(Some(raw(r#"{"_meta":3}"#)), 5).is_err());
    }
}
