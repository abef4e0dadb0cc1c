//! Requests and notifications the peer sends: the method table check, the in-flight table and its
//! bound, answers, progress reports, and the peer's cancellations.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use super::caps::gate_name;
use super::encode::Outgoing;
use super::event::{Event, InboundRequest};
use super::lifecycle::State;
use crate::error::{Error, ErrorKind, ErrorObject};
use crate::id::{ProgressToken, RequestId};
use crate::jsonrpc;
use crate::method;
use crate::time::Instant;
use crate::version::ProtocolVersion;
#[derive(Debug)]
pub(super) struct Inbound {
    pub(super) progress_token: Option<ProgressToken>,
    pub(super) last_progress: Option<f64>,
    pub(super) batch: Option<u64>,
    /// A request of the stateless era: its result carries `resultType`.
    pub(super) stateless: bool,
}

/// How many recently cancelled inbound ids are remembered, so that a late `respond` to one of
/// them is reported as [`ErrorKind::RequestCancelled`] rather than [`ErrorKind::NotFound`].
const CANCELLED_MEMORY: usize = 128;

impl Session {
    // ---------------------------------------------------------------- commands

    /// A stateless-era result: its `resultType` (`complete` unless it says otherwise) and,
    /// in `_meta`, this server's `io.modelcontextprotocol/serverInfo`.
    fn stamp_stateless_result(&self, result: Box<RawValue>) -> Box<RawValue> {
        let result = super::stateless::with_result_type(result);
        let mut entry = Vec::with_capacity(40 + self.config.info.get().len());
        jsonrpc::write_json_str(&mut entry, crate::schema::meta::SERVER_INFO_KEY);
        entry.push(b':');
        entry.extend_from_slice(self.config.info.get().as_bytes());
        super::outbound::with_meta_entries_or_same(result, &entry)
    }

    /// Answers an inbound request. A request the peer cancelled is never answered
    /// ([`ErrorKind::RequestCancelled`] is returned and nothing is sent).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] when `result` is not a JSON object;
    /// [`ErrorKind::TransportClosed`] when the session is closed;
    /// [`ErrorKind::RequestCancelled`] for a request the peer cancelled;
    /// [`ErrorKind::NotFound`] for an id that is not in flight (never received, or already
    /// answered). Nothing is sent in any of these cases.
    pub fn respond(&mut self, id: &RequestId, result: Box<RawValue>) -> Result<(), Error> {
        if !result.get().starts_with('{') {
            return Err(Error::invalid_params("a result must be a JSON object"));
        }
        let entry = self.take_inbound(id)?;
        // A listen stream ends with its own result, whatever the application passed.
        let result = if let Some(ended) = self.take_listener_result(id) {
            ended
        } else if entry.stateless {
            self.stamp_stateless_result(result)
        } else {
            result
        };
        self.answer_inbound(
            entry.batch,
            Outgoing::Response {
                id: id.clone(),
                result,
            },
        );
        Ok(())
    }

    /// Answers an inbound request with an error.
    /// A local kind ([`ErrorKind::is_local`]) is sent as `-32603` internal error.
    ///
    /// # Errors
    /// [`ErrorKind::TransportClosed`], [`ErrorKind::RequestCancelled`] and
    /// [`ErrorKind::NotFound`] as for [`respond`](Self::respond).
    pub fn respond_error(&mut self, id: &RequestId, error: Error) -> Result<(), Error> {
        let entry = self.take_inbound(id)?;
        self.drop_listener(id);
        // A local kind (a timeout, a closed transport, a failed handler) is no answer the peer
        // knows: it goes out as an internal error, with its message.
        let ErrorObject {
            code,
            message,
            data,
        } = error.into_object();
        self.answer(
            entry.batch,
            Outgoing::Error {
                id: Some(id.clone()),
                code,
                message,
                data,
            },
        );
        Ok(())
    }

    /// Reports progress on an inbound request that asked for it. Values must strictly increase.
    ///
    /// # Errors
    /// As [`report_progress_with_meta`](Self::report_progress_with_meta).
    pub fn report_progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        self.report_progress_with_meta(id, progress, total, message, None)
    }

    /// Like [`report_progress`](Session::report_progress), with a `_meta` object added to the
    /// notification's params (e.g. partial results for clients that understand them).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] when `meta` is not a JSON object, the request did not ask
    /// for progress (no progress token), a value is not finite, or `progress` does not
    /// exceed the last one reported; [`ErrorKind::TransportClosed`] when the session is
    /// closed; [`ErrorKind::RequestCancelled`] / [`ErrorKind::NotFound`] for a request that
    /// was cancelled or is not in flight.
    pub fn report_progress_with_meta(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        meta: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        if meta.as_ref().is_some_and(|m| !m.get().starts_with('{')) {
            return Err(Error::invalid_params("`_meta` must be a JSON object"));
        }
        if self.state == State::Closed {
            return Err(Error::new(
                ErrorKind::TransportClosed,
                "the session is closed",
            ));
        }
        let Some(entry) = self.inbound.get_mut(id) else {
            return Err(self.missing_inbound(id));
        };
        let Some(token) = entry.progress_token.clone() else {
            return Err(Error::invalid_params(
                "the request did not ask for progress",
            ));
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(Error::invalid_params("progress values must be finite"));
        }
        if entry.last_progress.is_some_and(|last| progress <= last) {
            return Err(Error::invalid_params("progress must strictly increase"));
        }
        entry.last_progress = Some(progress);
        self.out.push_back(Outgoing::Progress {
            token,
            progress,
            total,
            message: message.map(String::from),
            meta,
            related: id.clone(),
        });
        Ok(())
    }

    // --------------------------------------------------------------- internals

    fn take_inbound(&mut self, id: &RequestId) -> Result<Inbound, Error> {
        if self.state == State::Closed {
            return Err(Error::new(
                ErrorKind::TransportClosed,
                "the session is closed",
            ));
        }
        match self.inbound.remove(id) {
            Some(e) => Ok(e),
            None => Err(self.missing_inbound(id)),
        }
    }

    fn missing_inbound(&self, id: &RequestId) -> Error {
        if self.recently_cancelled.contains(id) {
            Error::new(
                ErrorKind::RequestCancelled,
                "the peer cancelled this request",
            )
        } else {
            Error::new(
                ErrorKind::NotFound,
                alloc::format!("no inbound request {id} in flight"),
            )
        }
    }

    pub(super) fn on_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        batch: Option<u64>,
    ) {
        if self.inbound.contains_key(&id) {
            let e = Error::invalid_request(alloc::format!("request id {id} is already in flight"));
            self.queue_error(batch, Some(id), &e);
            self.events.push_back(Event::InvalidMessage(e));
            return;
        }
        if self.state == State::Closed {
            return;
        }
        if self.state != State::Closing
            && let Some(p) = params
            && self.serves_stateless()
            && super::stateless::is_stateless(p)
        {
            self.on_stateless_request(id, method, p, batch);
            return;
        }
        let refuse = |kind: ErrorKind, msg: String| Error::new(kind, msg);
        let error = match (self.state, method) {
            (State::Closed, _) => return,
            (State::Closing, _) => Some(refuse(
                ErrorKind::TransportClosed,
                String::from("the session is closing"),
            )),
            (_, "ping") => {
                self.answer(
                    batch,
                    Outgoing::Response {
                        id,
                        result: jsonrpc::empty_object(),
                    },
                );
                return;
            }
            (State::AwaitingInit, "initialize") if !self.client => {
                self.on_initialize(id, params, batch);
                return;
            }
            (_, "initialize") if !self.client => Some(refuse(
                ErrorKind::AlreadyConnected,
                String::from("the session is already initialized"),
            )),
            // Methods of the stateless era only (`server/discover`, `subscriptions/listen`): a
            // handshake-era session does not have them. -32601 is what era probes recognise.
            (State::AwaitingInit | State::Initializing, m)
                if method::lookup(m).is_some_and(|s| s.first.is_stateless()) =>
            {
                Some(Error::method_not_found(m))
            }
            (State::AwaitingInit | State::Initializing, _) => Some(refuse(
                ErrorKind::NotInitialized,
                alloc::format!(
                    "`{method}` arrived before the handshake completed{}",
                    if self.client {
                        ""
                    } else {
                        " (send `initialize`, then `notifications/initialized`)"
                    }
                ),
            )),
            (State::Ready, _) => self.validate_inbound(method, params),
        };
        if let Some(e) = error {
            self.queue_error(batch, Some(id), &e);
            return;
        }
        let progress_token = match params.map_or(Ok(None), progress_token_of) {
            Ok(token) => token,
            Err(e) => {
                self.queue_error(batch, Some(id), &e);
                return;
            }
        };
        self.admit(
            id,
            method,
            params.map(ToOwned::to_owned),
            progress_token,
            batch,
            None,
        );
    }

    /// A checked request enters the in-flight table (bounded) and goes to the application; a
    /// request of the stateless era carries its `era` (its result gets `resultType`).
    pub(super) fn admit(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<Box<RawValue>>,
        progress_token: Option<ProgressToken>,
        batch: Option<u64>,
        era: Option<super::RequestEra>,
    ) {
        if self.inbound.len() >= self.config.max_inbound_in_flight {
            let e = Error::new(
                ErrorKind::LimitExceeded,
                alloc::format!(
                    "too many requests in flight (limit {})",
                    self.config.max_inbound_in_flight
                ),
            );
            self.queue_error(batch, Some(id), &e);
            return;
        }
        let name = match method::lookup(method) {
            Some(spec) => Cow::Borrowed(spec.name),
            None => Cow::Owned(String::from(method)),
        };
        self.inbound.insert(
            id.clone(),
            Inbound {
                progress_token: progress_token.clone(),
                last_progress: None,
                batch,
                stateless: era.is_some(),
            },
        );
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.remaining += 1;
        }
        self.events.push_back(Event::Request(InboundRequest {
            id,
            method: name,
            params,
            progress_token,
            era,
        }));
    }

    fn validate_inbound(&self, method: &str, params: Option<&RawValue>) -> Option<Error> {
        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        match method::lookup(method) {
            Some(spec) => {
                if !spec.request || !spec.sent_by(!self.client) || !spec.in_version(version) {
                    return Some(Error::method_not_found(method));
                }
                if !self.own_caps.allows(spec.gate, version) {
                    return Some(Error::new(
                        ErrorKind::MethodNotFound,
                        alloc::format!(
                            "method not found: `{method}` needs the `{}` capability, which this side did not declare",
                            gate_name(spec.gate)
                        ),
                    ));
                }
            }
            None if !self.config.allow_custom_methods => {
                return Some(Error::method_not_found(method));
            }
            None => {}
        }
        if let Some(p) = params
            && !p.get().starts_with('{')
        {
            return Some(Error::invalid_params("`params` must be a JSON object"));
        }
        None
    }

    pub(super) fn on_notification(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&RawValue>,
    ) {
        match method {
            "notifications/initialized" => {
                if !self.client && self.state == State::Initializing {
                    self.state = State::Ready;
                    if let (Some(version), Some(peer)) = (self.version, &self.peer) {
                        self.events.push_back(Event::Ready {
                            version,
                            peer_info: peer.info.clone(),
                            peer_capabilities: peer.capabilities.clone(),
                            instructions: None,
                        });
                    }
                } else {
                    self.events
                        .push_back(Event::InvalidMessage(Error::invalid_request(
                            "unexpected `notifications/initialized`",
                        )));
                }
            }
            "notifications/cancelled" => self.on_cancelled(params),
            "notifications/progress" => self.on_progress(now, params),
            _ => {
                if self.state == State::AwaitingInit {
                    self.events.push_back(Event::InvalidMessage(Error::new(
                        ErrorKind::NotInitialized,
                        alloc::format!("`{method}` arrived before the handshake"),
                    )));
                    return;
                }
                let name = match method::lookup(method) {
                    Some(spec) => {
                        let version = self.version.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
                        if spec.request || !spec.sent_by(!self.client) || !spec.in_version(version)
                        {
                            self.events
                                .push_back(Event::InvalidMessage(Error::method_not_found(method)));
                            return;
                        }
                        Cow::Borrowed(spec.name)
                    }
                    None => Cow::Owned(String::from(method)),
                };
                self.events.push_back(Event::Notification {
                    method: name,
                    params: params.map(ToOwned::to_owned),
                });
            }
        }
    }

    fn on_cancelled(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            request_id: Option<RequestId>,
            reason: Option<String>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P>(p.get()).ok()) else {
            // Malformed cancellations are ignored (a notification is never answered).
            self.events
                .push_back(Event::InvalidMessage(Error::invalid_params(
                    "malformed `notifications/cancelled`",
                )));
            return;
        };
        let Some(id) = p.request_id else { return };
        if self.client && self.listen_ended_by_peer(&id, p.reason.as_deref()) {
            return;
        }
        self.drop_listener(&id);
        if let Some(entry) = self.inbound.remove(&id) {
            self.remember_cancelled(id.clone());
            self.batch_request_done(entry.batch);
            self.events.push_back(Event::Cancelled {
                id,
                reason: p.reason,
            });
        }
    }
}

impl Session {
    /// Remembers `id` as cancelled (a late answer to it is refused as such), forgetting the
    /// oldest beyond [`CANCELLED_MEMORY`].
    pub(super) fn remember_cancelled(&mut self, id: RequestId) {
        if self.recently_cancelled.len() >= CANCELLED_MEMORY {
            self.recently_cancelled.pop_front();
        }
        self.recently_cancelled.push_back(id);
    }
}

/// Reads `params._meta.progressToken` without building a tree (skipped entirely when the params
/// contain no `_meta` key). A token that is neither a string nor an integer (an object, a
/// float, a boolean) is an invalid request parameter (-32602), as the schema of every version
/// has it; `null` counts as absent.
fn progress_token_of(params: &RawValue) -> Result<Option<ProgressToken>, Error> {
    // A cheap pre-check spares the second parse for the common request without `_meta`; a
    // large argument is then scanned once more, not parsed.
    if !params.get().starts_with('{') || !mentions_meta(params.get()) {
        return Ok(None);
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "progressToken", borrow)]
        token: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct P<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    // A `_meta` that is not an object is the method's own checks' business.
    let token = serde_json::from_str::<P<'_>>(params.get())
        .ok()
        .and_then(|p| p.meta)
        .and_then(|m| serde_json::from_str::<Meta<'_>>(m.get()).ok())
        .and_then(|m| m.token);
    let Some(token) = token else {
        return Ok(None);
    };
    serde_json::from_str::<ProgressToken>(token.get())
        .map(Some)
        .map_err(|_| Error::invalid_params("`_meta.progressToken` must be a string or an integer"))
}

pub(super) use crate::jsonrpc::mentions_meta;

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.into()).unwrap()
    }

    #[test]
    fn progress_token_extraction() {
        for (json, yes) in [
            (r#"{"_meta":1}"#, true),
            (r#"{"a":"_meta","b":"x_meta\""}"#, true),
            (r#"{"a_meta":1,"_met":2,"_metax":3}"#, false),
            (r#"_meta""#, false),
            (r#"{"__meta":1,"_":"_"}"#, false),
            ("", false),
        ] {
            assert_eq!(mentions_meta(json), yes, "{json}");
        }
        let token = |json: &str| progress_token_of(&raw(json)).map_err(|e| e.code());
        assert_eq!(token(r#"{"a":1}"#), Ok(None));
        assert_eq!(
            token(r#"{"a":1,"_meta":{"progressToken":"t"}}"#),
            Ok(Some(RequestId::from("t")))
        );
        assert_eq!(
            token(r#"{"_meta":{"progressToken":-7}}"#),
            Ok(Some(RequestId::Number(-7)))
        );
        assert_eq!(token(r#"{"_meta":{"other":1}}"#), Ok(None));
        assert_eq!(token(r#"{"_meta":{"progressToken":null}}"#), Ok(None));
        assert_eq!(token(r#"{"_meta":7}"#), Ok(None));
        for bad in [r#"{"a":1}"#, "1.5", "true", "[1]"] {
            let json = format!(r#"{{"_meta":{{"progressToken":{bad}}}}}"#);
            assert_eq!(token(&json), Err(-32602), "{json}");
        }
    }
}
