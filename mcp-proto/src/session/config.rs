//! Settings of a session and of one outbound request.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::value::RawValue;

#[cfg(doc)]
use super::Session;
use crate::id::RequestId;
use crate::jsonrpc;
use crate::time::Duration;
use crate::version::ProtocolVersion;
/// How outgoing messages are framed by [`Session::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Newline-delimited JSON (stdio, sockets): each message is followed by `\n`.
    Ndjson,
    /// Bare JSON (HTTP bodies, SSE `data`, WebSocket frames).
    Raw,
}

/// Settings of a session.
#[derive(Clone, Debug)]
pub struct Config {
    /// Output framing.
    pub framing: Framing,
    /// Protocol versions this side supports.
    pub versions: Vec<ProtocolVersion>,
    /// This side's `Implementation` object (`clientInfo` / `serverInfo`) as raw JSON.
    pub info: Box<RawValue>,
    /// This side's capabilities object as raw JSON.
    pub capabilities: Box<RawValue>,
    /// Server instructions sent in the `initialize` result.
    pub instructions: Option<String>,
    /// Largest accepted inbound message in bytes; larger ones get a `LimitExceeded` error.
    pub max_message_size: usize,
    /// Most inbound requests in flight at once; more get a `LimitExceeded` error.
    pub max_inbound_in_flight: usize,
    /// Most outbound requests in flight at once; more are refused by `send_request`.
    pub max_outbound_in_flight: usize,
    /// Default timeout of outbound requests (`None`: no timeout unless a request sets one).
    pub request_timeout: Option<Duration>,
    /// Accept inbound requests for methods outside the MCP method table (extensions).
    pub allow_custom_methods: bool,
    /// How a client starts ([`Session::start`]): `server/discover` first and the handshake
    /// when the server is of the handshake era ([`Auto`](super::Discovery::Auto), the
    /// default; with no stateless version among [`versions`](Self::versions) it is the
    /// handshake at once), the stateless era only, or the handshake only. A server session
    /// does not read it.
    pub discovery: super::Discovery,
    /// Most `subscriptions/listen` streams a server session holds open at once; one more is
    /// refused with `-32008` (default 16).
    pub max_listeners: usize,
    /// Most messages one listen stream may have queued and not yet transmitted (default 64);
    /// a change that would exceed it ends the stream (`notifications/cancelled` naming it)
    /// rather than growing the queue.
    pub listener_backlog: usize,
    /// How long a graceful close (the peer's input ended, or [`Session::close`]) waits for
    /// in-flight inbound requests to be answered and their answers taken by the transport
    /// (default 2 s); then the session ends without them (`None`: it waits as long as they
    /// run). A host that closes a stdio server's stdin thus sees it exit in bounded time.
    ///
    /// [`Session::close`]: super::Session::close
    pub close_timeout: Option<Duration>,
}

impl Config {
    /// A configuration named `name` at `version`, supporting every handshake version, with
    /// empty capabilities, NDJSON framing, 16 MiB messages, 1024 requests in flight each way and
    /// a 60 s default timeout; a server holds up to 16 listen streams of up to 64 queued
    /// messages each; a graceful close waits at most 2 s for requests in flight. A client
    /// starts in [`Discovery::Auto`](super::Discovery::Auto), which, with these (handshake)
    /// versions alone, is the handshake: add a stateless version (`ProtocolVersion::ALL`)
    /// for it to ask `server/discover` first.
    pub fn new(name: &str, version: &str) -> Self {
        let mut info = Vec::new();
        info.extend_from_slice(b"{\"name\":");
        jsonrpc::write_json_str(&mut info, name);
        info.extend_from_slice(b",\"version\":");
        jsonrpc::write_json_str(&mut info, version);
        info.push(b'}');
        Config {
            framing: Framing::Ndjson,
            versions: ProtocolVersion::HANDSHAKE.to_vec(),
            info: raw_from_vec(info),
            capabilities: jsonrpc::empty_object(),
            instructions: None,
            max_message_size: 16 * 1024 * 1024,
            max_inbound_in_flight: 1024,
            max_outbound_in_flight: 1024,
            request_timeout: Some(Duration::from_secs(60)),
            allow_custom_methods: false,
            discovery: super::Discovery::Auto,
            max_listeners: 16,
            listener_backlog: 64,
            close_timeout: Some(Duration::from_secs(2)),
        }
    }

    /// How a client starts (see [`Discovery`](super::Discovery); default
    /// [`Auto`](super::Discovery::Auto)). A server session does not read it.
    pub fn discovery(mut self, discovery: super::Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// Sets the capabilities (raw JSON object).
    pub fn capabilities(mut self, caps: Box<RawValue>) -> Self {
        self.capabilities = caps;
        self
    }

    /// Sets the framing.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Sets the supported versions.
    pub fn versions(mut self, versions: &[ProtocolVersion]) -> Self {
        self.versions = versions.to_vec();
        self
    }

    pub(crate) fn latest_handshake(&self) -> Option<ProtocolVersion> {
        self.versions
            .iter()
            .copied()
            .filter(|v| !v.is_stateless())
            .max()
    }
}

pub(super) fn raw_from_vec(bytes: Vec<u8>) -> Box<RawValue> {
    String::from_utf8(bytes)
        .ok()
        .and_then(|s| RawValue::from_string(s).ok())
        .unwrap_or_else(jsonrpc::empty_object)
}

/// Options of one outbound request.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// Timeout; `None` uses [`Config::request_timeout`].
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever progress arrives.
    pub reset_timeout_on_progress: bool,
    /// Hard limit on the total time, whatever the progress.
    pub max_total_timeout: Option<Duration>,
    /// Ask for progress: a `progressToken` is added to `params._meta`.
    pub progress: bool,
    /// The inbound request this one is made on behalf of (routing hint for HTTP streams).
    pub related_to: Option<RequestId>,
}
