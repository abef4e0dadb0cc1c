//! The session's life: the `initialize` handshake and version negotiation, a session that starts
//! ready, and graceful or abrupt close.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use super::caps::CapSet;
use super::config::{Config, raw_from_vec};
use super::encode::Outgoing;
use super::event::Event;
use super::outbound::Pending;
use crate::codec::ndjson::{NdjsonDecoder, NdjsonError};
use crate::error::{Error, ErrorKind};
use crate::id::RequestId;
use crate::jsonrpc;
use crate::time::{Duration, Instant};
use crate::version::ProtocolVersion;
/// Where the session is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Nothing exchanged yet.
    AwaitingInit,
    /// `initialize` sent (client) or answered (server); waiting for the other half.
    Initializing,
    /// Normal operation.
    Ready,
    /// Closing gracefully: in-flight inbound requests are still answered.
    Closing,
    /// Done.
    Closed,
}

pub(super) struct PeerInfo {
    pub(super) info: Box<RawValue>,
    pub(super) capabilities: Box<RawValue>,
    pub(super) caps: CapSet,
    pub(super) instructions: Option<String>,
}

/// How long [`Discovery::Auto`](super::Discovery::Auto) waits for `server/discover` before it
/// runs the handshake instead (a server that does not answer it at all).
pub const DISCOVER_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

impl Session {
    // --------------------------------------------------------------- handshake

    /// A server session that starts ready, at `version`, for a peer that describes itself with
    /// `peer_info` and `peer_capabilities` (JSON objects): no handshake is run or expected, as
    /// when each request carries what a handshake would have agreed (stateless Streamable
    /// HTTP; the 2026-07-28 era). Its `Event::Ready` is the first event.
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolVersionMismatch`] when `version` is not one of the configured
    /// versions, and [`ErrorKind::InvalidParams`] when the peer's info or capabilities are
    /// not JSON objects.
    ///
    /// ```
    /// use mcp_proto::session::{Config, Event, Session, State};
    /// use mcp_proto::{Instant, ProtocolVersion};
    /// use serde_json::value::RawValue;
    ///
    /// let obj = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
    /// let mut s = Session::server_ready(
    ///     Config::new("srv", "1").capabilities(obj(r#"{"tools":{}}"#)),
    ///     ProtocolVersion::V2025_06_18,
    ///     obj(r#"{"name":"c","version":"0"}"#),
    ///     obj("{}"),
    /// )
    /// .unwrap();
    /// assert_eq!(s.state(), State::Ready);
    /// assert!(matches!(s.poll_event(), Some(Event::Ready { .. })));
    /// s.handle_message(Instant::ZERO, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    /// assert!(matches!(s.poll_event(), Some(Event::Request(_))));
    /// ```
    pub fn server_ready(
        config: Config,
        version: ProtocolVersion,
        peer_info: Box<RawValue>,
        peer_capabilities: Box<RawValue>,
    ) -> Result<Self, Error> {
        if !config.versions.contains(&version) {
            return Err(Error::new(
                ErrorKind::ProtocolVersionMismatch,
                alloc::format!("protocol version {} is not configured", version.as_str()),
            ));
        }
        if !peer_info.get().starts_with('{') || !peer_capabilities.get().starts_with('{') {
            return Err(Error::invalid_params(
                "the peer's info and capabilities must be JSON objects",
            ));
        }
        let mut s = Session::new(false, config);
        s.peer = Some(PeerInfo {
            caps: CapSet::parse(&peer_capabilities),
            info: peer_info.clone(),
            capabilities: peer_capabilities.clone(),
            instructions: None,
        });
        s.version = Some(version);
        s.state = State::Ready;
        s.events.push_back(Event::Ready {
            version,
            peer_info,
            peer_capabilities,
            instructions: None,
        });
        Ok(s)
    }

    /// Client: starts the handshake by queueing `initialize` with the latest supported version.
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolInvalid`] (-32600) on a server session;
    /// [`ErrorKind::AlreadyConnected`] when the session has already started;
    /// [`ErrorKind::ProtocolVersionMismatch`] when no handshake-era version is configured.
    pub fn initialize(&mut self, now: Instant) -> Result<RequestId, Error> {
        if !self.client {
            return Err(Error::invalid_request("only a client sends `initialize`"));
        }
        if self.state != State::AwaitingInit {
            return Err(Error::new(
                ErrorKind::AlreadyConnected,
                "`initialize` was already sent",
            ));
        }
        let Some(version) = self.config.latest_handshake() else {
            return Err(Error::new(
                ErrorKind::ProtocolVersionMismatch,
                "no handshake protocol version configured",
            ));
        };
        let id = self.queue_initialize(now, version);
        self.state = State::Initializing;
        Ok(id)
    }

    /// Client: runs the handshake again on a transport whose server forgot the session (a
    /// Streamable HTTP 404): `initialize` goes out with the negotiated version, and its result
    /// must keep that version. No second [`Event::Ready`] follows; `notifications/initialized`
    /// is sent as in the first handshake. Requests may be made meanwhile (the transport holds
    /// them until the new session is up).
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolInvalid`] (-32600) on a server session or before the first
    /// handshake completed; [`ErrorKind::AlreadyConnected`] while a re-initialisation is
    /// already running.
    pub fn reinitialize(&mut self, now: Instant) -> Result<RequestId, Error> {
        let (true, State::Ready, Some(version)) = (self.client, self.state, self.version) else {
            return Err(Error::invalid_request(
                "only a client whose handshake completed can run it again",
            ));
        };
        if self.reinitializing {
            return Err(Error::new(
                ErrorKind::AlreadyConnected,
                "the handshake is already running again",
            ));
        }
        self.reinitializing = true;
        Ok(self.queue_initialize(now, version))
    }

    /// Queues `initialize` for `version`, awaited like any request.
    fn queue_initialize(&mut self, now: Instant, version: ProtocolVersion) -> RequestId {
        let mut p = Vec::with_capacity(
            64 + self.config.info.get().len() + self.config.capabilities.get().len(),
        );
        p.extend_from_slice(b"{\"protocolVersion\":");
        jsonrpc::write_json_str(&mut p, version.as_str());
        p.extend_from_slice(b",\"capabilities\":");
        p.extend_from_slice(self.config.capabilities.get().as_bytes());
        p.extend_from_slice(b",\"clientInfo\":");
        p.extend_from_slice(self.config.info.get().as_bytes());
        p.push(b'}');
        self.queue_start_request(now, "initialize", raw_from_vec(p), false)
    }

    /// Queues the request that starts a client session (`initialize` or `server/discover`),
    /// awaited under the default timeout; its outcome settles the session, not an
    /// [`Event::Response`].
    pub(super) fn queue_start_request(
        &mut self,
        now: Instant,
        method: &'static str,
        params: Box<RawValue>,
        is_discover: bool,
    ) -> RequestId {
        let id = self.alloc_id();
        // A probe with the handshake to fall back on waits at most `DISCOVER_PROBE_TIMEOUT`: a
        // server of the handshake era that ignores `server/discover` costs little.
        let probing = is_discover && self.config.discovery == super::Discovery::Auto;
        let timeout = match self.config.request_timeout {
            Some(t) if probing => Some(t.min(DISCOVER_PROBE_TIMEOUT)),
            None if probing => Some(DISCOVER_PROBE_TIMEOUT),
            t => t,
        };
        self.pending.insert(
            id,
            Pending {
                is_initialize: !is_discover,
                is_discover,
                timeout,
                hard_deadline: None,
                deadline: timeout.map(|t| now + t),
                reset_on_progress: false,
                progress: false,
                last_progress: None,
                listen: false,
                lists_tools: false,
            },
        );
        self.out.push_back(Outgoing::Request {
            id,
            method: Cow::Borrowed(method),
            params: Some(params),
            related: None,
        });
        RequestId::Number(id)
    }

    pub(super) fn on_initialize(
        &mut self,
        id: RequestId,
        params: Option<&RawValue>,
        batch: Option<u64>,
    ) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitParams<'a> {
            #[serde(borrow)]
            protocol_version: Cow<'a, str>,
            #[serde(borrow)]
            capabilities: &'a RawValue,
            #[serde(borrow)]
            client_info: &'a RawValue,
        }
        let parsed = match params {
            None => Err(String::from("missing params")),
            Some(p) => {
                serde_json::from_str::<InitParams<'_>>(p.get()).map_err(|e| alloc::format!("{e}"))
            }
        };
        let p = match parsed {
            Ok(p)
                if p.capabilities.get().starts_with('{')
                    && p.client_info.get().starts_with('{') =>
            {
                p
            }
            Ok(_) => {
                let e = Error::invalid_params(
                    "invalid `initialize` params: `capabilities` and `clientInfo` must be objects",
                );
                self.queue_error(batch, Some(id), &e);
                return;
            }
            Err(msg) => {
                let e = Error::invalid_params(alloc::format!("invalid `initialize` params: {msg}"));
                self.queue_error(batch, Some(id), &e);
                return;
            }
        };
        let requested = ProtocolVersion::parse(&p.protocol_version);
        let chosen = match requested {
            Some(v) if !v.is_stateless() && self.config.versions.contains(&v) => Some(v),
            _ => self.config.latest_handshake(),
        };
        let Some(version) = chosen else {
            let mut data = Vec::new();
            data.extend_from_slice(b"{\"supported\":[");
            for (i, v) in self.config.versions.iter().enumerate() {
                if i > 0 {
                    data.push(b',');
                }
                jsonrpc::write_json_str(&mut data, v.as_str());
            }
            data.extend_from_slice(b"],\"requested\":");
            jsonrpc::write_json_str(&mut data, &p.protocol_version);
            data.push(b'}');
            let e = Error::new(
                ErrorKind::ProtocolVersionMismatch,
                "Unsupported protocol version",
            )
            .with_code(-32602)
            .with_data(raw_from_vec(data));
            self.queue_error(batch, Some(id), &e);
            return;
        };
        let mut r = Vec::with_capacity(
            96 + self.config.info.get().len() + self.config.capabilities.get().len(),
        );
        r.extend_from_slice(b"{\"protocolVersion\":");
        jsonrpc::write_json_str(&mut r, version.as_str());
        r.extend_from_slice(b",\"capabilities\":");
        r.extend_from_slice(self.config.capabilities.get().as_bytes());
        r.extend_from_slice(b",\"serverInfo\":");
        r.extend_from_slice(self.config.info.get().as_bytes());
        if let Some(instr) = &self.config.instructions {
            r.extend_from_slice(b",\"instructions\":");
            jsonrpc::write_json_str(&mut r, instr);
        }
        r.push(b'}');
        self.peer = Some(PeerInfo {
            info: p.client_info.to_owned(),
            capabilities: p.capabilities.to_owned(),
            caps: CapSet::parse(p.capabilities),
            instructions: None,
        });
        self.version = Some(version);
        self.state = State::Initializing;
        self.answer(
            batch,
            Outgoing::Response {
                id,
                result: raw_from_vec(r),
            },
        );
    }

    pub(super) fn on_initialize_result(&mut self, result: Result<&RawValue, Error>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitResult<'a> {
            #[serde(borrow)]
            protocol_version: Cow<'a, str>,
            #[serde(borrow)]
            capabilities: &'a RawValue,
            #[serde(borrow)]
            server_info: &'a RawValue,
            instructions: Option<String>,
        }
        let again = core::mem::take(&mut self.reinitializing);
        let raw = match result {
            Ok(raw) => raw,
            Err(e) => {
                self.fail_connection(e);
                return;
            }
        };
        let r = match serde_json::from_str::<InitResult<'_>>(raw.get()) {
            Ok(r) => r,
            Err(err) => {
                self.fail_connection(Error::invalid_request(alloc::format!(
                    "invalid `initialize` result: {err}"
                )));
                return;
            }
        };
        let version = match ProtocolVersion::parse(&r.protocol_version) {
            Some(v) if self.config.versions.contains(&v) && !v.is_stateless() => v,
            _ => {
                self.fail_connection(Error::new(
                    ErrorKind::ProtocolVersionMismatch,
                    alloc::format!("the server chose protocol version {:?}, which this client does not support", r.protocol_version),
                ));
                return;
            }
        };
        if again {
            if self.version != Some(version) {
                self.fail_connection(Error::new(
                    ErrorKind::ProtocolVersionMismatch,
                    alloc::format!(
                        "the server chose protocol version {:?} for the new session, not the negotiated one",
                        r.protocol_version
                    ),
                ));
                return;
            }
            self.out.push_back(Outgoing::Notification {
                method: Cow::Borrowed("notifications/initialized"),
                params: None,
                related: None,
            });
            return;
        }
        self.version = Some(version);
        let peer_info = r.server_info.to_owned();
        let peer_capabilities = r.capabilities.to_owned();
        self.peer = Some(PeerInfo {
            info: peer_info.clone(),
            capabilities: peer_capabilities.clone(),
            caps: CapSet::parse(r.capabilities),
            instructions: r.instructions.clone(),
        });
        self.state = State::Ready;
        self.out.push_back(Outgoing::Notification {
            method: Cow::Borrowed("notifications/initialized"),
            params: None,
            related: None,
        });
        self.events.push_back(Event::Ready {
            version,
            peer_info,
            peer_capabilities,
            instructions: r.instructions,
        });
    }

    // ----------------------------------------------------------------- closing

    /// The peer will send nothing more (EOF on stdin): a final unterminated line is processed,
    /// pending outbound requests fail, in-flight inbound requests may still be answered; the
    /// session closes once they are and everything is flushed.
    pub fn handle_input_closed(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        let mut decoder = core::mem::replace(&mut self.decoder, NdjsonDecoder::new(0));
        loop {
            match decoder.finish() {
                None => break,
                Some(Ok(line)) => {
                    let line = line.to_vec();
                    self.handle_message(now, &line);
                }
                Some(Err(NdjsonError::LineTooLong { len, max })) => self.reject_oversized(len, max),
                #[allow(unreachable_patterns)]
                Some(Err(_)) => {}
            }
        }
        self.decoder = decoder;
        self.begin_close(now, "the peer closed its side of the connection");
    }

    /// The transport is gone: every pending outbound request fails exactly once, in-flight
    /// inbound requests are dropped, and the session ends now.
    pub fn handle_closed(&mut self, _now: Instant, error: Option<Error>) {
        if self.state == State::Closed {
            return;
        }
        self.fail_pending(ErrorKind::TransportClosed, "the connection closed");
        self.inbound.clear();
        self.listeners.clear();
        self.batches.clear();
        self.out.clear();
        self.state = State::Closed;
        self.emit_closed(error);
    }

    /// Closes gracefully: pending outbound requests fail with `TransportClosed`, new inbound
    /// requests are refused, in-flight inbound requests may still be answered; the session ends
    /// ([`Event::Closed`]) once they are and everything is flushed.
    pub fn close(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        self.begin_close(now, "the session was closed");
    }

    fn fail_pending(&mut self, kind: ErrorKind, message: &'static str) {
        let pending = core::mem::take(&mut self.pending);
        for (id, p) in pending {
            if p.is_initialize || p.is_discover {
                // The handshake's outcome is `Event::Ready` or `Event::Closed`.
                continue;
            }
            self.events.push_back(Event::Response {
                id: RequestId::Number(id),
                result: Err(Error::new(kind, message)),
            });
        }
    }

    pub(super) fn fail_connection(&mut self, error: Error) {
        self.fail_pending(ErrorKind::TransportClosed, "the connection failed");
        self.inbound.clear();
        self.listeners.clear();
        self.batches.clear();
        self.out.clear();
        self.state = State::Closed;
        self.emit_closed(Some(error));
    }

    fn begin_close(&mut self, now: Instant, why: &'static str) {
        if matches!(self.state, State::Closing | State::Closed) {
            return;
        }
        self.fail_pending(ErrorKind::TransportClosed, why);
        self.state = State::Closing;
        self.close_deadline = self.config.close_timeout.map(|t| now + t);
        // Listen streams last until the session ends: end them now, each with its result.
        self.end_listeners();
        self.maybe_finish_close();
    }

    pub(super) fn maybe_finish_close(&mut self) {
        if self.state == State::Closing
            && self.inbound.is_empty()
            && self.batches.is_empty()
            && self.out.is_empty()
        {
            self.state = State::Closed;
            self.emit_closed(None);
        }
    }

    /// The graceful close ran out of time ([`Config::close_timeout`]): the requests still in
    /// flight and what was not transmitted are dropped, and the session ends.
    ///
    /// [`Config::close_timeout`]: super::Config::close_timeout
    pub(super) fn close_timed_out(&mut self, now: Instant) {
        if self.state != State::Closing || self.close_deadline.is_none_or(|d| d > now) {
            return;
        }
        self.inbound.clear();
        self.listeners.clear();
        self.batches.clear();
        self.out.clear();
        self.state = State::Closed;
        self.emit_closed(None);
    }

    fn emit_closed(&mut self, error: Option<Error>) {
        if !self.closed_emitted {
            self.closed_emitted = true;
            self.events.push_back(Event::Closed(error));
        }
    }
}
