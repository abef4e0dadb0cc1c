//! The inbound side of a connection: a [`Service`] answers the peer's requests and observes its
//! notifications. The typed server and client are services; so can be anything else.

use std::borrow::Cow;

use mcp_proto::session::RequestEra;
use mcp_proto::{Error, ProgressToken, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::cancel::CancellationToken;
use crate::peer::{Command, Peer, Request};
use crate::runtime::BoxFuture;

/// One inbound request, as handed to a [`Service`].
#[derive(Debug)]
pub struct IncomingRequest {
    /// The method.
    pub method: Cow<'static, str>,
    /// Raw params.
    pub params: Option<Box<RawValue>>,
}

/// The context of one inbound request: report progress, log, ask the peer, observe
/// cancellation.
#[derive(Clone, Debug)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) peer: Peer,
    pub(crate) cancel: CancellationToken,
    pub(crate) era: Option<std::sync::Arc<RequestEra>>,
    /// The head of the HTTP request that carried this one (Streamable HTTP, legacy SSE), or
    /// that opened its WebSocket.
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub(crate) http: Option<std::sync::Arc<http::request::Parts>>,
}

impl RequestContext {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The peer's progress token, when it asked for progress.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// For a request of the stateless era (2026-07-28), what it said about itself: its
    /// protocol version, the client's capabilities and info, its log level. `None` for a
    /// request of a session that ran the handshake.
    pub fn era(&self) -> Option<&RequestEra> {
        self.era.as_deref()
    }

    /// The protocol version this request is served at: its own (stateless era), else the
    /// session's negotiated one.
    pub fn protocol_version(&self) -> Option<mcp_proto::ProtocolVersion> {
        match &self.era {
            Some(era) => Some(era.version),
            None => self.peer.protocol_version(),
        }
    }

    /// The peer.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The head of the HTTP request that carried this request (its method, URI, headers and
    /// extensions), when it came over HTTP; over WebSocket, the head of the upgrade request
    /// that opened the connection (shared by all its requests); `None` on stdio and in memory.
    /// In a batch, every request of it sees the batch's head. What middleware in front of the MCP
    /// endpoint put into the request's extensions (an authenticated identity, say) is in
    /// [`http::request::Parts::extensions`].
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub fn http_request(&self) -> Option<&http::request::Parts> {
        self.http.as_deref()
    }

    /// Whether the peer cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the peer cancels the request. (The handler's future is also dropped on
    /// cancellation; this is for work that outlives it, e.g. spawned tasks.)
    pub fn cancelled(&self) -> crate::cancel::Cancelled {
        self.cancel.cancelled()
    }

    /// The cancellation token of this request.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Reports progress (sent only if the peer asked for it; values must strictly increase).
    /// Waits while the connection's output budget is full ([`Peer::writable`]).
    ///
    /// # Errors
    /// `TransportClosed` when the connection has ended.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        if self.progress_token.is_none() {
            return Ok(());
        }
        let cmd = Command::Progress {
            id: self.id.clone(),
            progress,
            total,
            message: message.map(String::from),
            meta: None,
        };
        self.peer.send_paced(cmd).await
    }

    /// Reports progress carrying extra `_meta` (used for streamed tool content). Waits while
    /// the output budget is full, like [`progress`](Self::progress).
    ///
    /// # Errors
    /// `TransportClosed` when the connection has ended.
    pub async fn progress_with_meta(
        &self,
        progress: f64,
        message: Option<&str>,
        meta: Box<RawValue>,
    ) -> Result<(), Error> {
        if self.progress_token.is_none() {
            return Ok(());
        }
        let cmd = Command::Progress {
            id: self.id.clone(),
            progress,
            total: None,
            message: message.map(String::from),
            meta: Some(meta),
        };
        self.peer.send_paced(cmd).await
    }

    /// Sends a notification tied to this request (it travels on this request's stream over
    /// HTTP). Waits while the output budget is full ([`Peer::writable`]).
    ///
    /// # Errors
    /// [`ErrorKind::Internal`](mcp_proto::ErrorKind::Internal) when `params` do not serialise;
    /// [`ErrorKind::TransportClosed`](mcp_proto::ErrorKind::TransportClosed) when the
    /// connection has ended.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: &P,
    ) -> Result<(), Error> {
        let params = crate::raw::to_raw(params)?;
        let cmd = Command::Notify {
            method: method.into(),
            params: Some(params),
            related: Some(self.id.clone()),
        };
        self.peer.send_paced(cmd).await
    }

    /// Sends a request to the peer on behalf of this request (sampling, elicitation, roots);
    /// over HTTP it travels on this request's stream. Awaiting it fails as a
    /// [client's request](crate::client#errors-of-every-request) does.
    pub fn request<P: Serialize + ?Sized>(&self, method: &'static str, params: &P) -> Request {
        self.peer
            .request_with(method, params)
            .related_to(self.id.clone())
    }
}

/// Answers inbound requests and observes notifications for one side of a connection.
pub trait Service: Send + Sync + 'static {
    /// The handshake completed; `peer` is ready for use.
    fn on_ready(&self, _peer: &Peer) {}

    /// Answers one request. The future is dropped if the peer cancels the request.
    ///
    /// # Errors
    /// The `Err` is the answer to the peer: a JSON-RPC error with the error's code, message
    /// and `data`; a kind that only describes this side
    /// ([`ErrorKind::is_local`](mcp_proto::ErrorKind::is_local): `HandlerFailed`, `Timeout`,
    /// `TransportClosed`, …) goes out as -32603 internal error with the same message.
    fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> BoxFuture<Result<Box<RawValue>, Error>>;

    /// Observes one notification (cancellation and progress are handled by the connection).
    fn handle_notification(&self, _method: &str, _params: Option<&RawValue>, _peer: &Peer) {}

    /// The connection ended.
    fn on_closed(&self, _peer: &Peer) {}
}

/// A service that refuses every request with `-32601`.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoService;

impl Service for NoService {
    fn handle_request(
        &self,
        request: IncomingRequest,
        _cx: RequestContext,
    ) -> BoxFuture<Result<Box<RawValue>, Error>> {
        let e = Error::method_not_found(&request.method);
        Box::pin(async move { Err(e) })
    }
}
