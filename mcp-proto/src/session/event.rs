//! What the session tells the application: [`Event`]s, among them inbound requests.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use serde_json::value::RawValue;

#[cfg(doc)]
use super::Session;
use crate::error::Error;
use crate::id::{ProgressToken, RequestId};
use crate::version::ProtocolVersion;
/// An inbound request for the application to answer with [`Session::respond`].
#[derive(Debug, Clone)]
pub struct InboundRequest {
    /// The peer's id.
    pub id: RequestId,
    /// The method.
    pub method: Cow<'static, str>,
    /// Raw params.
    pub params: Option<Box<RawValue>>,
    /// The peer's progress token, when it asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// For a request of the stateless era (2026-07-28), what its `_meta` said: its version
    /// and the client's capabilities. `None` for a request of the handshake era.
    pub era: Option<super::RequestEra>,
}

/// Something the application must know about.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed.
    Ready {
        /// The negotiated version.
        version: ProtocolVersion,
        /// The peer's `Implementation` object.
        peer_info: Box<RawValue>,
        /// The peer's capabilities object.
        peer_capabilities: Box<RawValue>,
        /// Server instructions (client side only).
        instructions: Option<String>,
    },
    /// The peer sent a request.
    Request(InboundRequest),
    /// The peer sent a notification (cancellation and progress arrive as their own events).
    Notification {
        /// The method.
        method: Cow<'static, str>,
        /// Raw params.
        params: Option<Box<RawValue>>,
    },
    /// The one outcome of an outbound request: result, error, timeout, cancellation or close.
    Response {
        /// The request's id.
        id: RequestId,
        /// The raw result or the error.
        result: Result<Box<RawValue>, Error>,
    },
    /// Progress on an outbound request.
    Progress {
        /// The request's id.
        id: RequestId,
        /// Progress so far (strictly increasing).
        progress: f64,
        /// Total, if known.
        total: Option<f64>,
        /// Message, if any.
        message: Option<String>,
        /// The notification's `_meta`, if any (e.g. partial results).
        meta: Option<Box<RawValue>>,
    },
    /// The peer cancelled one of its requests, or (a server's `subscriptions/listen`) the
    /// session ended the stream itself: do not answer it, stop working on it.
    Cancelled {
        /// The cancelled request's id.
        id: RequestId,
        /// The reason given.
        reason: Option<String>,
    },
    /// A response arrived for an id this side never used.
    UnknownResponse {
        /// The id.
        id: RequestId,
    },
    /// The peer reported an error it could not tie to a request (`"id": null`).
    PeerError(Error),
    /// The peer sent something invalid (answered with an error where JSON-RPC allows).
    InvalidMessage(Error),
    /// The session ended (`None`: gracefully). Emitted exactly once.
    Closed(Option<Error>),
}
