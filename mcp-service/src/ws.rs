//! MCP over WebSocket (feature `ws`): the runtime-neutral half of the transport the drivers
//! (`mcp-tokio`, `mcp-async-std`) serve and connect with.
//!
//! **This transport is not part of the MCP specification**, which defines stdio and Streamable
//! HTTP only. It is offered for hosts that want one long-lived, bidirectional connection through
//! infrastructure that speaks WebSocket. The wire rules:
//!
//! - one JSON-RPC message per WebSocket **text** frame (fed to the session whole, so raw CR/LF
//!   inside a frame are just JSON whitespace); binary frames are refused with close code 1003;
//! - the subprotocol `mcp` (`Sec-WebSocket-Protocol`) is offered by clients and selected by
//!   servers; a client offering no subprotocol is accepted too, one offering only others is
//!   refused (400);
//! - the server listens at one path (default [`DEFAULT_PATH`], `/ws`; other paths get 404 during
//!   the handshake) and checks `Host` and `Origin` against allow-lists with the semantics of
//!   [`AllowList`] (403 when refused; loopback names only when bound to a loopback address);
//! - a message larger than the limit (the smaller of the session's maximum message size and
//!   4 MiB by default, [`WsConfig::max_message_size`]) closes the connection with code 1009;
//!   invalid UTF-8 with 1007; a protocol violation with 1002;
//! - on a server, a message (or any frame) begun and not finished within
//!   [`WsConfig::unfinished_message_timeout`] (30 s) closes the connection with code 1008,
//!   whatever control frames arrive meanwhile; a peer silent for
//!   [`WsConfig::idle_timeout`] (60 s: a ping is sent half way, and its pong is enough) is
//!   closed with 1001; the HTTP handshake's headers must arrive within
//!   [`WsConfig::header_read_timeout`] (10 s); and the accept loop serves at most
//!   [`WsConfig::connections`] at once (more are answered 503);
//! - ping/pong is answered by the library; closing a session runs the close handshake (code
//!   1000), waiting up to a bounded time ([`DEFAULT_CLOSE_TIMEOUT`]) for the peer's reply.
//!
//! What lives here: the handshake policy ([`handshake`], answering an HTTP upgrade request with
//! 101 or a clear refusal), [`WsConfig`], the client's request ([`client_request`]), and
//! [`transport`], which turns a tungstenite message stream into the message
//! [`Transport`] the connection engine runs on (each frame one message for the session, with
//! no re-framing), plus [`serve_connection`] (hyper answers the upgrade of one accepted
//! connection, `async-tungstenite` runs the session) and [`connect_over`] (the client handshake
//! over a connected socket), so both drivers share all of it. It never opens sockets.

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use futures_io::{AsyncRead, AsyncWrite};
use futures_sink::Sink;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode, Version};
use mcp_proto::http::AllowList;
use mcp_proto::{Error, ErrorKind};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Message, Utf8Bytes};

use crate::connection::{MessageTransport, Transport};
use crate::driver::{WriteStall, sleep_for};
use crate::runtime::{BoxFuture, Runtime};

pub use tungstenite;

/// The WebSocket subprotocol of MCP over WebSocket.
pub const SUBPROTOCOL: &str = "mcp";
/// The default path of a WebSocket MCP endpoint.
pub const DEFAULT_PATH: &str = "/ws";
/// How long closing a connection waits for the peer's close frame by default.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest message a server accepts by default (unless the session's limit is smaller):
/// 4 MiB, the Streamable HTTP endpoint's body limit.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;
/// How long a server waits by default for a message (or frame) it has begun to receive.
pub const DEFAULT_UNFINISHED_MESSAGE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server lets a peer stay silent by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`WsConfig::write_timeout`].
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server waits by default for the headers of the HTTP handshake.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings of a WebSocket MCP server endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WsConfig {
    /// The request path upgrades are accepted at (default `/ws`); other paths → 404.
    pub path: String,
    /// Accepted `Host` values; others → 403.
    pub allowed_hosts: AllowList,
    /// Accepted `Origin` values; others → 403. A request without `Origin` (not from a browser)
    /// is accepted.
    pub allowed_origins: AllowList,
    /// The largest accepted message (and frame) in bytes; `None` uses the smaller of the
    /// server's session limit (`Config::max_message_size`) and [`DEFAULT_MAX_MESSAGE_SIZE`]
    /// (4 MiB). A message is buffered whole before it is handled, so this is also what one
    /// connection's unfinished message may hold: 4 MiB matches what the HTTP endpoint reads
    /// of one body.
    pub max_message_size: Option<usize>,
    /// How long closing waits for the peer's close frame before dropping the connection.
    pub close_timeout: Duration,
    /// How long a message (or a single frame, control frames included) may take from its
    /// first byte to its last (default 30 s; `None`: no limit). Past it the connection is
    /// closed with code 1008 (policy violation) and what was buffered of the message is
    /// dropped: a peer cannot hold a buffer by never finishing a fragmented message, and
    /// control frames in between do not extend the deadline.
    pub unfinished_message_timeout: Option<Duration>,
    /// How long the peer may send nothing at all (default 60 s; `None`: no limit). Half way a
    /// ping is sent, which a live peer's WebSocket library answers on its own; a peer that
    /// sent nothing, not even that pong, by the end is closed with code 1001 (going away).
    /// A silent peer is closed between this and one and a half times this after its last
    /// byte.
    pub idle_timeout: Option<Duration>,
    /// How long the HTTP handshake's request headers may take (default 10 s; `None`: no
    /// limit), and how long a connection may stay idle before its first request.
    pub header_read_timeout: Option<Duration>,
    /// Caps on concurrent connections, enforced by the accept loop of `serve_ws_with`
    /// (default 4096, 256 per IP; see [`ConnectionLimits`](crate::driver::ConnectionLimits)).
    pub connections: crate::driver::ConnectionLimits,
    /// How long a message may wait for a peer that reads nothing (default 60 s; `None`: no
    /// limit): a peer that takes not one byte for this long is closed (its connection is not
    /// held, with everything queued for it, for as long as it cares to stall).
    pub write_timeout: Option<Duration>,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig::new()
    }
}

impl WsConfig {
    /// Path `/ws`, loopback-only `Host` and `Origin` (the safe default; see
    /// [`bound_to`](Self::bound_to)), messages up to the session's limit or 4 MiB, a 5 s
    /// close timeout, 30 s for an unfinished message, 60 s of silence, 10 s for the
    /// handshake's headers, the default [`ConnectionLimits`](crate::driver::ConnectionLimits).
    pub fn new() -> Self {
        WsConfig {
            path: DEFAULT_PATH.to_owned(),
            allowed_hosts: AllowList::Loopback,
            allowed_origins: AllowList::Loopback,
            max_message_size: None,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            unfinished_message_timeout: Some(DEFAULT_UNFINISHED_MESSAGE_TIMEOUT),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            connections: crate::driver::ConnectionLimits::default(),
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
        }
    }

    /// Sets how long a message may wait for a peer that reads nothing (`None`: no limit).
    pub fn write_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Sets how long a begun message may take to finish (`None`: no limit).
    pub fn unfinished_message_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.unfinished_message_timeout = timeout;
        self
    }

    /// Sets how long the peer may stay silent (`None`: no limit).
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets how long the handshake's request headers may take (`None`: no limit).
    pub fn header_read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets the caps on concurrent connections.
    pub fn connections(mut self, limits: crate::driver::ConnectionLimits) -> Self {
        self.connections = limits;
        self
    }

    /// Sets the path upgrades are accepted at.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets the accepted `Host` values.
    pub fn allowed_hosts(mut self, hosts: AllowList) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Sets the accepted `Origin` values.
    pub fn allowed_origins(mut self, origins: AllowList) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// Picks the `Host`/`Origin` defaults for the address the server listens on: loopback
    /// names only for a loopback address; anything otherwise (configure explicit lists, and
    /// authentication, for a public server).
    pub fn bound_to(mut self, addr: IpAddr) -> Self {
        let list = AllowList::for_address(addr);
        self.allowed_hosts = list.clone();
        self.allowed_origins = list;
        self
    }

    /// Sets the largest accepted message in bytes (instead of the smaller of the session's
    /// limit and 4 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = Some(bytes);
        self
    }

    /// Sets how long closing waits for the peer's close frame.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }
}

/// The tungstenite configuration for a connection whose messages are at most `max_message_size`
/// bytes: the same bound for whole messages and for single frames.
pub fn websocket_config(max_message_size: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
}

// ---------------------------------------------------------------------------------------------
// Server handshake policy
// ---------------------------------------------------------------------------------------------

/// Answers one HTTP request made to a WebSocket MCP server: `101 Switching Protocols` with the
/// handshake headers when it is a valid upgrade to `config.path` that passes the `Host` and
/// `Origin` checks, otherwise a refusal with a short `text/plain` reason:
///
/// | refusal | status |
/// | --- | --- |
/// | `Host` or `Origin` not allowed | 403 |
/// | another path | 404 |
/// | not `GET` | 405 (`Allow: GET`) |
/// | not HTTP/1.1 | 505 |
/// | no `Upgrade: websocket` / `Connection: upgrade` | 426 (`Upgrade: websocket`) |
/// | `Sec-WebSocket-Version` not 13 | 426 (`Sec-WebSocket-Version: 13`) |
/// | missing or malformed `Sec-WebSocket-Key` | 400 |
/// | subprotocols offered, none of them `mcp` | 400 |
///
/// The driver switches the connection to WebSocket only when the status is 101.
pub fn handshake<B>(config: &WsConfig, request: &http::Request<B>) -> http::Response<String> {
    let headers = request.headers();
    let host =
        single(headers, &header::HOST).or_else(|| request.uri().authority().map(|a| a.as_str()));
    if !config.allowed_hosts.allows_host(host) {
        return refuse(StatusCode::FORBIDDEN, "Forbidden: Host not allowed");
    }
    if !matches!(config.allowed_origins, AllowList::Any)
        && let Some(origin) = headers.get(header::ORIGIN)
        && !origin
            .to_str()
            .is_ok_and(|o| config.allowed_origins.allows_origin(o.trim()))
    {
        return refuse(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed");
    }
    if request.uri().path() != config.path {
        return refuse(
            StatusCode::NOT_FOUND,
            &format!("Not Found: the MCP WebSocket endpoint is {}", config.path),
        );
    }
    if request.method() != Method::GET {
        let mut r = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: a WebSocket handshake is a GET",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return r;
    }
    if request.version() != Version::HTTP_11 {
        return refuse(
            StatusCode::HTTP_VERSION_NOT_SUPPORTED,
            "HTTP Version Not Supported: the WebSocket handshake needs HTTP/1.1",
        );
    }
    if !has_token(headers, &header::CONNECTION, "upgrade")
        || !has_token(headers, &header::UPGRADE, "websocket")
    {
        let mut r = refuse(
            StatusCode::UPGRADE_REQUIRED,
            "Upgrade Required: this endpoint speaks MCP over WebSocket only",
        );
        r.headers_mut()
            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        // `Upgrade` is hop-by-hop, so `Connection` names it (RFC 9110 §7.8).
        r.headers_mut().insert(
            header::CONNECTION,
            HeaderValue::from_static("upgrade, close"),
        );
        return r;
    }
    if single(headers, &header::SEC_WEBSOCKET_VERSION).map(str::trim) != Some("13") {
        let mut r = refuse(
            StatusCode::UPGRADE_REQUIRED,
            "Upgrade Required: unsupported Sec-WebSocket-Version (13 is supported)",
        );
        r.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return r;
    }
    let key = match single(headers, &header::SEC_WEBSOCKET_KEY).map(str::trim) {
        Some(k) if valid_key(k) => k,
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Bad Request: missing or malformed Sec-WebSocket-Key",
            );
        }
    };
    let offered: Vec<&str> = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let select = offered.contains(&SUBPROTOCOL);
    if !offered.is_empty() && !select {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: unsupported WebSocket subprotocol (this server speaks \"mcp\")",
        );
    }
    let mut r = http::Response::new(String::new());
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) =
        HeaderValue::from_str(&tungstenite::handshake::derive_accept_key(key.as_bytes()))
    {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if select {
        h.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    r
}

fn refuse(status: StatusCode, reason: &str) -> http::Response<String> {
    let mut r = http::Response::new(format!("{reason}\n"));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The value of a header present exactly once, as text.
fn single<'a>(headers: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    let mut all = headers.get_all(name).iter();
    let first = all.next()?;
    if all.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

/// Whether a comma-separated header holds `token` (case-insensitively), in any of its lines.
fn has_token(headers: &HeaderMap, name: &header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// A `Sec-WebSocket-Key`: 16 bytes in base64, i.e. 22 base64 characters and `==`.
fn valid_key(key: &str) -> bool {
    let b = key.as_bytes();
    b.len() == 24
        && b[22..] == *b"=="
        && b[..22]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

// ---------------------------------------------------------------------------------------------
// Client request
// ---------------------------------------------------------------------------------------------

/// A client's handshake request and the address to open the TCP connection to.
#[derive(Debug)]
#[non_exhaustive]
pub struct ClientRequest {
    /// The upgrade request (offering the `mcp` subprotocol).
    pub request: tungstenite::handshake::client::Request,
    /// The host to connect to (an IPv6 address without brackets).
    pub host: String,
    /// The port to connect to (80 when the URL has none, 443 for `wss://`).
    pub port: u16,
    /// A `wss://` URL: the connection is TLS, the certificate valid for `host`.
    pub secure: bool,
}

/// Builds the handshake request for `url` (`ws://host[:port]/path`, or `wss://` with the
/// feature `tls`), offering the `mcp` subprotocol. Any other scheme, or a URL without a
/// host, is refused with a clear error (`wss://` too without the feature `tls`).
///
/// ```
/// let target = mcp_service::ws::client_request("ws://[::1]:9000/ws")?;
/// assert_eq!((target.host.as_str(), target.port), ("::1", 9000));
/// let refused = mcp_service::ws::client_request("http://example.com/ws").unwrap_err();
/// assert_eq!(refused.kind(), mcp_service::ErrorKind::InvalidParams);
/// # Ok::<(), mcp_service::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidParams`] (-32602) for a URL that does not parse, whose scheme is not
/// `ws` or `wss` (`wss` without the feature `tls`) or that has no host.
pub fn client_request(url: &str) -> Result<ClientRequest, Error> {
    use tungstenite::client::IntoClientRequest;
    let bad = |msg: String| Error::new(ErrorKind::InvalidParams, msg);
    let uri: http::Uri = url
        .parse()
        .map_err(|e| bad(format!("invalid WebSocket URL {url:?}: {e}")))?;
    let secure = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("ws") => false,
        Some(s) if s.eq_ignore_ascii_case("wss") => {
            if !cfg!(feature = "tls") {
                return Err(bad(format!(
                    "{url:?}: wss:// (WebSocket over TLS) needs TLS (the feature `tls`); \
                     use ws:// (behind a TLS-terminating proxy if needed)"
                )));
            }
            true
        }
        _ => return Err(bad(format!("{url:?} is not a ws:// URL (nor wss://)"))),
    };
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad(format!("{url:?} has no host")))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .to_owned();
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let mut request = uri
        .into_client_request()
        .map_err(|e| bad(format!("invalid WebSocket URL {url:?}: {e}")))?;
    request.headers_mut().insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(SUBPROTOCOL),
    );
    Ok(ClientRequest {
        request,
        host,
        port,
        secure,
    })
}

/// The error of a failed client handshake with `url`: the server's refusal (status and
/// reason) when it answered, otherwise what went wrong.
pub fn client_handshake_error(url: &str, e: tungstenite::Error) -> Error {
    match e {
        tungstenite::Error::Http(response) => {
            let reason = response
                .body()
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).trim().to_owned())
                .filter(|b| !b.is_empty())
                .map(|b| format!(": {b}"))
                .unwrap_or_default();
            Error::new(
                ErrorKind::TransportError,
                format!(
                    "the server at {url} refused the WebSocket upgrade with {}{reason}",
                    response.status()
                ),
            )
        }
        other => Error::new(
            ErrorKind::TransportError,
            format!("WebSocket handshake with {url} failed: {other}"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The message transport
// ---------------------------------------------------------------------------------------------

/// Runs MCP over an established WebSocket: `ws` is a tungstenite message stream and sink
/// (`tokio_tungstenite::WebSocketStream` or `async_tungstenite::WebSocketStream`), the result a
/// [`Transport`] for [`Server::serve`](crate::Server::serve) or
/// [`Client::connect`](crate::Client::connect): each text frame is one message for the
/// session, each message the session sends one text frame.
///
/// A binary frame is refused: the connection closes with code 1003. A read error closes with
/// 1009 (message too big), 1007 (invalid UTF-8) or 1002 (protocol violation). Closing runs the
/// close handshake: a close frame (1000 unless a refusal chose another code), then, unless the
/// peer already closed, reading until the peer's close frame or `close_timeout` on `rt`.
pub fn transport<R, S>(rt: R, ws: S, close_timeout: Duration) -> Transport
where
    R: Runtime,
    S: Stream<Item = Result<Message, tungstenite::Error>>
        + Sink<Message, Error = tungstenite::Error>
        + Send
        + Unpin
        + 'static,
{
    Transport::messages(WsTransport::new(rt, ws, close_timeout))
}
/// [`transport`] for a server connection whose incoming bytes `track` follows: also times
/// unfinished messages and silence as `config` says.
fn watched_transport<R, S>(rt: R, ws: S, config: &WsConfig, track: Arc<FrameTrack>) -> Transport
where
    R: Runtime,
    S: Stream<Item = Result<Message, tungstenite::Error>>
        + Sink<Message, Error = tungstenite::Error>
        + Send
        + Unpin
        + 'static,
{
    let mut t = WsTransport::new(rt, ws, config.close_timeout);
    t.watch = Some(Watch {
        track,
        unfinished_timeout: config.unfinished_message_timeout,
        idle_timeout: config.idle_timeout,
        unfinished: None,
        idle: None,
        idle_seen: 0,
        pinged: false,
    });
    t.write_stall = config.write_timeout.map(|timeout| {
        WriteStall::new(
            &t.rt,
            timeout,
            "the WebSocket peer read nothing for the write timeout",
        )
    });
    Transport::messages(t)
}

// ---------------------------------------------------------------------------------------------
// Following the peer's frames (server side)
// ---------------------------------------------------------------------------------------------

/// What a server has received of its peer's frames, as the bytes pass through on their way to
/// tungstenite: whether a message or a frame is begun and not finished, and how many bytes
/// arrived. Only frame headers are parsed (RFC 6455 §5.2); tungstenite checks the rest.
#[derive(Debug, Default)]
struct FrameTrack {
    state: std::sync::Mutex<FrameParser>,
}

#[derive(Debug, Default)]
struct FrameParser {
    /// The header of the frame being received, as far as it arrived.
    head: [u8; 14],
    head_len: usize,
    /// Payload bytes of the current frame still to come.
    payload_left: u64,
    /// The current frame is a data frame (text, binary, continuation) with FIN set.
    final_data: bool,
    /// A data message is begun: a data frame without FIN arrived and its final one has not.
    in_message: bool,
    /// How many times something began that is not yet finished (see [`Self::unfinished`]).
    begun: u64,
    /// Bytes received in all.
    read: u64,
}

impl FrameParser {
    /// A message or a frame is begun and not finished.
    fn unfinished(&self) -> bool {
        self.in_message || self.head_len > 0 || self.payload_left > 0
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        self.read += bytes.len() as u64;
        while !bytes.is_empty() {
            if self.payload_left > 0 {
                let take = usize::try_from(self.payload_left)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                bytes = &bytes[take..];
                self.payload_left -= take as u64;
                if self.payload_left == 0 {
                    self.frame_done();
                }
                continue;
            }
            if !self.unfinished() {
                self.begun += 1;
            }
            self.head[self.head_len] = bytes[0];
            self.head_len += 1;
            bytes = &bytes[1..];
            if self.head_len < 2 {
                continue;
            }
            let len7 = self.head[1] & 0x7f;
            let ext = match len7 {
                126 => 2,
                127 => 8,
                _ => 0,
            };
            let mask = if self.head[1] & 0x80 != 0 { 4 } else { 0 };
            if self.head_len < 2 + ext + mask {
                continue;
            }
            let len = match ext {
                0 => u64::from(len7),
                2 => u64::from(u16::from_be_bytes([self.head[2], self.head[3]])),
                _ => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&self.head[2..10]);
                    u64::from_be_bytes(b)
                }
            };
            let fin = self.head[0] & 0x80 != 0;
            let data = self.head[0] & 0x08 == 0;
            self.head_len = 0;
            self.final_data = data && fin;
            if data && !fin {
                self.in_message = true;
            }
            self.payload_left = len;
            if len == 0 {
                self.frame_done();
            }
        }
    }

    fn frame_done(&mut self) {
        if self.final_data {
            self.in_message = false;
            self.final_data = false;
        }
    }
}

/// A server's upgraded connection, its incoming bytes followed by a [`FrameTrack`].
struct TrackedIo<T> {
    inner: T,
    track: Arc<FrameTrack>,
}

impl<T: AsyncRead + Unpin> AsyncRead for TrackedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let n = ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let mut p = self
            .track
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.feed(&buf[..n.min(buf.len())]);
        Poll::Ready(Ok(n))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TrackedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// A server transport's timers over what its [`FrameTrack`] saw.
struct Watch {
    track: Arc<FrameTrack>,
    unfinished_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    /// The deadline of the unfinished message (or frame) numbered by `FrameParser::begun`.
    unfinished: Option<(u64, BoxFuture<()>)>,
    /// The next look at whether the peer sent anything.
    idle: Option<BoxFuture<()>>,
    /// The byte count at the last look.
    idle_seen: u64,
    /// A ping went out at the last look, the peer having been silent.
    pinged: bool,
}

/// What [`Watch`] decided.
enum Verdict {
    Fine,
    Ping,
    Unfinished,
    Idle,
}

impl Watch {
    fn poll<R: Runtime>(&mut self, rt: &R, cx: &mut Context<'_>) -> Verdict {
        let (unfinished, begun, read) = {
            let p = self
                .track
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (p.unfinished(), p.begun, p.read)
        };
        if let Some(t) = self.unfinished_timeout {
            if unfinished {
                if self.unfinished.as_ref().is_none_or(|(n, _)| *n != begun) {
                    self.unfinished = Some((begun, sleep_for(rt, t)));
                }
                if let Some((_, sleep)) = self.unfinished.as_mut()
                    && sleep.as_mut().poll(cx).is_ready()
                {
                    return Verdict::Unfinished;
                }
            } else {
                self.unfinished = None;
            }
        }
        let Some(idle) = self.idle_timeout else {
            return Verdict::Fine;
        };
        let half = idle / 2;
        let mut verdict = Verdict::Fine;
        loop {
            let Some(sleep) = self.idle.as_mut() else {
                self.idle_seen = read;
                self.idle = Some(sleep_for(rt, half));
                continue;
            };
            if sleep.as_mut().poll(cx).is_pending() {
                return verdict;
            }
            if read != self.idle_seen {
                self.pinged = false;
            } else if !self.pinged {
                self.pinged = true;
                verdict = Verdict::Ping;
            } else {
                return Verdict::Idle;
            }
            self.idle = None;
        }
    }
}

/// A WebSocket as a [`MessageTransport`].
struct WsTransport<R, S> {
    ws: S,
    rt: R,
    /// The close frame to send on close, when a refusal chose one.
    close: Option<CloseFrame>,
    /// The peer sent its close frame, or the stream ended.
    peer_closed: bool,
    /// Nothing more is read.
    done: bool,
    close_timeout: Duration,
    state: CloseState,
    /// A server's limits on unfinished messages and silence.
    watch: Option<Watch>,
    /// Closed for stalling (an unfinished message, silence): the close is not waited for.
    stalled: bool,
    /// How long a send may wait for the peer to read ([`WsConfig::write_timeout`]).
    write_stall: Option<WriteStall>,
}

impl<R, S> WsTransport<R, S> {
    /// An open transport over `ws`, with no server limits.
    fn new(rt: R, ws: S, close_timeout: Duration) -> Self {
        WsTransport {
            ws,
            rt,
            close: None,
            peer_closed: false,
            done: false,
            close_timeout,
            state: CloseState::Open,
            watch: None,
            stalled: false,
            write_stall: None,
        }
    }

    fn refuse(&mut self, code: CloseCode, reason: &'static str) {
        if self.close.is_none() {
            self.close = Some(CloseFrame {
                code,
                reason: Utf8Bytes::from_static(reason),
            });
        }
    }

    /// Picks the close code for a read error and turns the error into an `io::Error`.
    fn read_error(&mut self, e: tungstenite::Error) -> io::Error {
        use tungstenite::Error as E;
        use tungstenite::error::ProtocolError as P;
        match e {
            E::Capacity(c) => {
                self.refuse(CloseCode::Size, "message too big");
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("WebSocket message too big: {c}"),
                )
            }
            E::Utf8(m) => {
                self.refuse(CloseCode::Invalid, "text frame is not valid UTF-8");
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("WebSocket text frame is not valid UTF-8: {m}"),
                )
            }
            E::Protocol(P::ResetWithoutClosingHandshake) => {
                self.peer_closed = true;
                io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "the WebSocket peer closed the connection without a close handshake",
                )
            }
            E::Protocol(p) => {
                self.refuse(CloseCode::Protocol, "WebSocket protocol violation");
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("WebSocket protocol violation: {p}"),
                )
            }
            E::Io(e) => {
                self.peer_closed = true;
                e
            }
            other => {
                self.peer_closed = true;
                io::Error::other(format!("WebSocket: {other}"))
            }
        }
    }
}

fn write_error(e: tungstenite::Error) -> io::Error {
    use tungstenite::Error as E;
    match e {
        E::ConnectionClosed | E::AlreadyClosed => io::Error::new(
            io::ErrorKind::BrokenPipe,
            "the WebSocket connection is closed",
        ),
        E::Io(e) => e,
        other => io::Error::other(format!("WebSocket: {other}")),
    }
}

enum CloseState {
    Open,
    /// The close frame is queued; flushing it (for at most the close timeout). Then wait for
    /// the peer's (`true`) or not.
    Flushing(bool, BoxFuture<()>),
    /// Reading until the peer's close frame, or the timer.
    AwaitingPeer(BoxFuture<()>),
    Done,
}

impl<R, S> WsTransport<R, S>
where
    R: Runtime,
    S: Sink<Message, Error = tungstenite::Error> + Unpin,
{
    fn stalled(&self) -> bool {
        self.stalled
    }

    /// A send that waits (`r` pending) fails once it waited the write timeout: the peer
    /// reads nothing.
    fn write_stall(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        let Some(stall) = self.write_stall.as_mut() else {
            return r;
        };
        let waited = r.is_pending();
        let r = stall.check(cx, r);
        if waited && r.is_ready() {
            self.stalled = true;
            self.done = true;
            self.state = CloseState::Done;
        }
        r
    }

    /// With nothing to read: whether a limit of the [`Watch`] ends the connection (or a ping
    /// is due).
    fn poll_watch(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Vec<u8>>>> {
        let Some(watch) = self.watch.as_mut() else {
            return Poll::Pending;
        };
        let (code, reason, what) = match watch.poll(&self.rt, cx) {
            Verdict::Fine => return Poll::Pending,
            Verdict::Ping => {
                if let Poll::Ready(Ok(())) = Pin::new(&mut self.ws).poll_ready(cx)
                    && Pin::new(&mut self.ws)
                        .start_send(Message::Ping(Default::default()))
                        .is_ok()
                {
                    let _ = Pin::new(&mut self.ws).poll_flush(cx);
                }
                return Poll::Pending;
            }
            Verdict::Unfinished => (
                CloseCode::Policy,
                "message not completed in time",
                "the WebSocket peer did not finish a message in time",
            ),
            Verdict::Idle => (
                CloseCode::Away,
                "idle timeout",
                "the WebSocket peer sent nothing for the idle timeout",
            ),
        };
        tracing::debug!(target: "mcp", "{what}; closing");
        self.refuse(code, reason);
        self.stalled = true;
        self.done = true;
        Poll::Ready(Some(Err(io::Error::new(io::ErrorKind::TimedOut, what))))
    }
}

impl<R, S> MessageTransport for WsTransport<R, S>
where
    R: Runtime,
    S: Stream<Item = Result<Message, tungstenite::Error>>
        + Sink<Message, Error = tungstenite::Error>
        + Send
        + Unpin
        + 'static,
{
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Vec<u8>>>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            let next = match Pin::new(&mut self.ws).poll_next(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => return self.poll_watch(cx),
            };
            match next {
                Some(Ok(Message::Text(text))) => {
                    return Poll::Ready(Some(Ok(Vec::from(text.as_str()))));
                }
                Some(Ok(Message::Binary(_))) => {
                    self.done = true;
                    self.refuse(
                        CloseCode::Unsupported,
                        "binary frames are not supported: send one JSON-RPC message per text frame",
                    );
                    return Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "the peer sent a binary WebSocket frame (MCP messages are text frames)",
                    ))));
                }
                // Pongs are answered by tungstenite itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Close(frame))) => {
                    tracing::debug!(target: "mcp", close = ?frame, "WebSocket peer closed");
                    self.peer_closed = true;
                    self.done = true;
                }
                None => {
                    self.peer_closed = true;
                    self.done = true;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(self.read_error(e))));
                }
            }
        }
    }

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !matches!(self.state, CloseState::Open) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the WebSocket connection is closing",
            )));
        }
        let r = Pin::new(&mut self.ws).poll_ready(cx).map_err(write_error);
        self.write_stall(cx, r)
    }

    fn start_send(&mut self, message: Vec<u8>) -> io::Result<()> {
        let text = String::from_utf8(message).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "an outgoing message is not UTF-8",
            )
        })?;
        Pin::new(&mut self.ws)
            .start_send(Message::Text(text.into()))
            .map_err(write_error)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !matches!(self.state, CloseState::Open) {
            return Poll::Ready(Ok(()));
        }
        let r = Pin::new(&mut self.ws).poll_flush(cx).map_err(write_error);
        self.write_stall(cx, r)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match &mut self.state {
                CloseState::Open => {
                    let send = !self.peer_closed;
                    // A peer closed for stalling is not waited for: it answers nothing.
                    let wait = send && !self.stalled();
                    if send {
                        if let Err(e) = ready!(Pin::new(&mut self.ws).poll_ready(cx)) {
                            tracing::debug!(target: "mcp", error = %e, "WebSocket already closed");
                            self.state = CloseState::Done;
                            continue;
                        }
                        let frame = self.close.take().unwrap_or(CloseFrame {
                            code: CloseCode::Normal,
                            reason: Utf8Bytes::from_static(""),
                        });
                        if let Err(e) =
                            Pin::new(&mut self.ws).start_send(Message::Close(Some(frame)))
                        {
                            tracing::debug!(target: "mcp", error = %e, "WebSocket close frame not sent");
                        }
                    }
                    // When the peer closed first, tungstenite queued the reply already: the
                    // flush sends it.
                    self.state =
                        CloseState::Flushing(wait, sleep_for(&self.rt, self.close_timeout));
                }
                CloseState::Flushing(wait, timer) => {
                    let wait = *wait;
                    if timer.as_mut().poll(cx).is_ready() {
                        tracing::debug!(target: "mcp", "the WebSocket close frame could not be sent in time");
                        self.state = CloseState::Done;
                        continue;
                    }
                    let flushed = ready!(Pin::new(&mut self.ws).poll_flush(cx));
                    self.state = if flushed.is_ok() && wait {
                        let at = self.rt.now()
                            + mcp_proto::Duration::from_micros(
                                u64::try_from(self.close_timeout.as_micros()).unwrap_or(u64::MAX),
                            );
                        CloseState::AwaitingPeer(self.rt.sleep_until(at))
                    } else {
                        CloseState::Done
                    };
                }
                CloseState::AwaitingPeer(timer) => {
                    if timer.as_mut().poll(cx).is_ready() {
                        tracing::debug!(target: "mcp", "the WebSocket peer did not answer the close in time");
                        self.state = CloseState::Done;
                        continue;
                    }
                    // The reply, or data still in flight: read to the end (a server's stream
                    // ends right after the reply, a client's when the server closes the TCP
                    // connection).
                    while let Some(Ok(_)) = ready!(Pin::new(&mut self.ws).poll_next(cx)) {}
                    self.peer_closed = true;
                    self.state = CloseState::Done;
                }
                CloseState::Done => return Poll::Ready(Ok(())),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// hyper's upgraded connection as futures-io
// ---------------------------------------------------------------------------------------------

/// A hyper IO object (such as `hyper::upgrade::Upgraded`) seen through `futures-io`: what
/// `async-tungstenite` runs a server WebSocket on after hyper answered the upgrade.
#[derive(Debug)]
pub struct UpgradedIo<T> {
    inner: T,
}

impl<T> UpgradedIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        UpgradedIo { inner }
    }

    /// The wrapped connection.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: hyper::rt::Read + Unpin> AsyncRead for UpgradedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut read = hyper::rt::ReadBuf::new(buf);
        ready!(Pin::new(&mut self.inner).poll_read(cx, read.unfilled()))?;
        Poll::Ready(Ok(read.filled().len()))
    }
}

impl<T: hyper::rt::Write + Unpin> AsyncWrite for UpgradedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

// ---------------------------------------------------------------------------------------------
// Serving and connecting over a socket the driver opened
// ---------------------------------------------------------------------------------------------

/// Serves one accepted connection: HTTP/1.1 (hyper, timed by `rt`, the headers within
/// `config.header_read_timeout`) until a request upgrades it, then the WebSocket
/// (`async-tungstenite`) as one session of `server` on `rt`, with `config`'s limits on
/// unfinished messages and silence; the future completes when the session ends. Refused
/// requests get their HTTP answer from [`handshake`]. Any IO hyper can run on works (a tokio
/// socket through `hyper_util::rt::TokioIo`, a `futures-io` one through
/// [`FuturesIo`](crate::hyper_io::FuturesIo)).
pub async fn serve_connection<R, I>(
    rt: R,
    server: crate::Server,
    config: Arc<WsConfig>,
    io: I,
    addr: std::net::SocketAddr,
) where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    // The session, once a request upgraded: run here, so that the connection is one future
    // from accept to close (the accept loop counts it as long as it runs).
    let session: Arc<std::sync::Mutex<Option<BoxFuture<()>>>> = Arc::default();
    let upgrade_rt = rt.clone();
    let slot = session.clone();
    let handshake_timeout = config.header_read_timeout;
    #[cfg(feature = "resource-server")]
    let guard = crate::resource_server::Guard::of(&server);
    let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
        #[cfg(feature = "resource-server")]
        {
            // A protected server: the metadata document, then the upgrade's bearer token,
            // before the handshake (its identity then stands for the whole connection).
            let (rt, server, config, slot) = (
                upgrade_rt.clone(),
                server.clone(),
                config.clone(),
                slot.clone(),
            );
            let guard = guard.clone();
            let fut: BoxFuture<Result<_, std::convert::Infallible>> = Box::pin(async move {
                let mut req = req;
                if let Some(guard) = guard {
                    let (mut parts, body) = req.into_parts();
                    if let Some(r) = guard.metadata(&parts) {
                        return Ok(r.map(|b| http_body_util::Full::new(bytes::Bytes::from(b))));
                    }
                    if let Err(r) = guard.authenticate(&mut parts).await {
                        let r = *r;
                        tracing::debug!(target: "mcp", %addr, status = %r.status(), "WebSocket upgrade refused: bearer token");
                        return Ok(r.map(|b| http_body_util::Full::new(bytes::Bytes::from(b))));
                    }
                    req = http::Request::from_parts(parts, body);
                }
                Ok(upgrade(&rt, &server, &config, addr, req, &slot))
            });
            fut
        }
        #[cfg(not(feature = "resource-server"))]
        {
            let reply = upgrade(&upgrade_rt, &server, &config, addr, req, &slot);
            async move { Ok::<_, std::convert::Infallible>(reply) }
        }
    });
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .timer(crate::hyper_io::RuntimeTimer::new(rt))
        .header_read_timeout(handshake_timeout)
        .serve_connection(io, svc)
        .with_upgrades()
        .await
    {
        tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket HTTP connection ended with an error");
    }
    let upgraded = session
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(session) = upgraded {
        session.await;
    }
}

/// Answers one request; on 101, leaves the session to run in `slot` once hyper hands the
/// connection over.
fn upgrade<R: Runtime>(
    rt: &R,
    server: &crate::Server,
    config: &Arc<WsConfig>,
    addr: std::net::SocketAddr,
    mut req: http::Request<hyper::body::Incoming>,
    slot: &std::sync::Mutex<Option<BoxFuture<()>>>,
) -> http::Response<http_body_util::Full<bytes::Bytes>> {
    let reply = handshake(config, &req);
    if reply.status() == StatusCode::SWITCHING_PROTOCOLS {
        let on_upgrade = hyper::upgrade::on(&mut req);
        // Every request of the connection sees the upgrade request's head.
        let head = Arc::new(req.into_parts().0);
        let server = server.clone();
        let config = config.clone();
        let session_rt = rt.clone();
        let session: BoxFuture<()> = Box::pin(async move {
            let upgraded = match on_upgrade.await {
                Ok(u) => u,
                Err(e) => {
                    tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket upgrade failed");
                    return;
                }
            };
            let max = config.max_message_size.unwrap_or_else(|| {
                server
                    .config()
                    .max_message_size
                    .min(DEFAULT_MAX_MESSAGE_SIZE)
            });
            let track = Arc::new(FrameTrack::default());
            let io = TrackedIo {
                inner: UpgradedIo::new(upgraded),
                track: track.clone(),
            };
            let socket = async_tungstenite::WebSocketStream::from_raw_socket(
                io,
                tungstenite::protocol::Role::Server,
                Some(websocket_config(max)),
            )
            .await;
            tracing::debug!(target: "mcp", %addr, "accepted a WebSocket connection");
            let stream = watched_transport(session_rt.clone(), socket, &config, track);
            if let Err(e) = server.serve_upgraded(session_rt, stream, head).await {
                tracing::debug!(target: "mcp", %addr, error = %e, "WebSocket connection ended with an error");
            }
        });
        *slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(session);
    } else {
        tracing::debug!(target: "mcp", %addr, status = %reply.status(), path = req.uri().path(), "WebSocket upgrade refused");
    }
    reply.map(|body| http_body_util::Full::new(bytes::Bytes::from(body)))
}

/// Runs the client side over `io`, a connected socket to `target`'s host (from
/// [`client_request`] of `url`): the WebSocket handshake (offering `mcp`, messages bounded by
/// the options' maximum size), then the MCP handshake; the connection task runs on `rt`.
///
/// # Errors
/// [`ErrorKind::TransportError`] (local) when the WebSocket handshake fails or the server
/// refuses the upgrade ([`client_handshake_error`]); then those of
/// [`Client::connect`](crate::Client::connect).
pub async fn connect_over<R, I>(
    rt: R,
    io: I,
    url: &str,
    target: ClientRequest,
    options: crate::ClientOptions,
) -> Result<crate::Client, Error>
where
    R: Runtime,
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let config = websocket_config(options.config().max_message_size);
    let (socket, _) = async_tungstenite::client_async_with_config(target.request, io, Some(config))
        .await
        .map_err(|e| client_handshake_error(url, e))?;
    let stream = transport(rt.clone(), socket, DEFAULT_CLOSE_TIMEOUT);
    crate::Client::connect(rt, stream, options).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upgrade_request(path: &str) -> http::request::Builder {
        http::Request::builder()
            .method(Method::GET)
            .uri(path)
            .header(header::HOST, "127.0.0.1:9000")
            .header(header::CONNECTION, "keep-alive, Upgrade")
            .header(header::UPGRADE, "websocket")
            .header(header::SEC_WEBSOCKET_VERSION, "13")
            .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
    }

    fn status(config: &WsConfig, req: http::request::Builder) -> u16 {
        handshake(config, &req.body(()).unwrap()).status().as_u16()
    }

    #[test]
    fn accepts_an_upgrade_with_the_rfc_accept_key() {
        let config = WsConfig::new();
        let r = handshake(&config, &upgrade_request("/ws").body(()).unwrap());
        assert_eq!(r.status(), StatusCode::SWITCHING_PROTOCOLS);
        // RFC 6455 §1.3's example.
        assert_eq!(
            r.headers()[header::SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert!(r.headers().get(header::SEC_WEBSOCKET_PROTOCOL).is_none());
        let r = handshake(
            &config,
            &upgrade_request("/ws?x=1")
                .header(header::SEC_WEBSOCKET_PROTOCOL, "a")
                .header(header::SEC_WEBSOCKET_PROTOCOL, "b, mcp")
                .body(())
                .unwrap(),
        );
        assert_eq!(r.status(), StatusCode::SWITCHING_PROTOCOLS);
        assert_eq!(r.headers()[header::SEC_WEBSOCKET_PROTOCOL], "mcp");
    }

    #[test]
    fn refusals() {
        let config = WsConfig::new();
        assert_eq!(status(&config, upgrade_request("/other")), 404);
        assert_eq!(
            status(&config, upgrade_request("/ws").method(Method::POST)),
            405
        );
        assert_eq!(
            status(&config, upgrade_request("/ws").version(Version::HTTP_10)),
            505
        );
        assert_eq!(
            status(
                &config,
                upgrade_request("/ws").header(header::ORIGIN, "https://evil.example")
            ),
            403
        );
        let mut evil_host = upgrade_request("/ws");
        if let Some(h) = evil_host.headers_mut() {
            h.insert(header::HOST, HeaderValue::from_static("evil.example"));
        }
        assert_eq!(status(&config, evil_host), 403);
        // Without a Host (and no authority in the URI) a loopback-only server refuses.
        let mut no_host = upgrade_request("/ws");
        if let Some(h) = no_host.headers_mut() {
            h.remove(header::HOST);
        }
        assert_eq!(status(&config, no_host), 403);
        let mut no_upgrade = upgrade_request("/ws");
        if let Some(h) = no_upgrade.headers_mut() {
            h.remove(header::UPGRADE);
        }
        let r = handshake(&config, &no_upgrade.body(()).unwrap());
        assert_eq!(r.status(), StatusCode::UPGRADE_REQUIRED);
        assert_eq!(r.headers()[header::UPGRADE], "websocket");
        let mut v8 = upgrade_request("/ws");
        if let Some(h) = v8.headers_mut() {
            h.insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        }
        let r = handshake(&config, &v8.body(()).unwrap());
        assert_eq!(r.status(), StatusCode::UPGRADE_REQUIRED);
        assert_eq!(r.headers()[header::SEC_WEBSOCKET_VERSION], "13");
        for key in [
            "",
            "short",
            "dGhlIHNhbXBsZSBub25jZQ=!",
            "dGhlIHNhbXBsZSBub25jZQ",
        ] {
            let mut bad = upgrade_request("/ws");
            if let Some(h) = bad.headers_mut() {
                h.insert(header::SEC_WEBSOCKET_KEY, HeaderValue::from_static(key));
            }
            assert_eq!(status(&config, bad), 400, "{key:?}");
        }
        assert_eq!(
            status(
                &config,
                upgrade_request("/ws").header(header::SEC_WEBSOCKET_PROTOCOL, "graphql-ws")
            ),
            400
        );
    }

    #[test]
    fn allow_lists_follow_the_configuration() {
        let open = WsConfig::new().bound_to(IpAddr::from([0, 0, 0, 0]));
        let mut foreign = upgrade_request("/ws").header(header::ORIGIN, "https://app.example");
        if let Some(h) = foreign.headers_mut() {
            h.insert(header::HOST, HeaderValue::from_static("mcp.example:443"));
        }
        assert_eq!(status(&open, foreign), 101);
        let only = WsConfig::new()
            .path("/socket")
            .allowed_origins(AllowList::Only(vec!["https://app.example".into()]));
        assert_eq!(
            status(
                &only,
                upgrade_request("/socket").header(header::ORIGIN, "https://APP.example")
            ),
            101
        );
        assert_eq!(
            status(
                &only,
                upgrade_request("/socket").header(header::ORIGIN, "http://app.example")
            ),
            403
        );
        assert_eq!(
            status(
                &WsConfig::new(),
                upgrade_request("/ws").header(header::ORIGIN, "http://[::1]:3000")
            ),
            101
        );
    }

    /// A client frame with a zero mask key.
    fn frame(fin: bool, opcode: u8, len: usize) -> Vec<u8> {
        let mut f = vec![if fin { 0x80 } else { 0 } | opcode];
        match len {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&[0; 4]);
        f.resize(f.len() + len, b'x');
        f
    }

    #[test]
    fn frame_tracking_follows_fragments_and_ignores_control_frames() {
        let mut p = FrameParser::default();
        assert!(!p.unfinished());
        // A whole text frame, fed byte by byte: unfinished until its last byte.
        let whole = frame(true, 0x1, 300);
        for (i, b) in whole.iter().enumerate() {
            p.feed(std::slice::from_ref(b));
            assert_eq!(p.unfinished(), i + 1 < whole.len(), "byte {i}");
        }
        assert_eq!(p.begun, 1);
        // A fragmented message with pings in between stays one unfinished span.
        p.feed(&frame(false, 0x1, 70_000));
        assert!(p.unfinished());
        p.feed(&frame(true, 0x9, 4));
        p.feed(&frame(false, 0x0, 10));
        p.feed(&frame(true, 0xA, 0));
        assert!(p.unfinished());
        assert_eq!(p.begun, 2);
        p.feed(&frame(true, 0x0, 0));
        assert!(!p.unfinished());
        // Several frames in one read; the last one cut short.
        let mut bytes = frame(true, 0x1, 5);
        bytes.extend(frame(true, 0x9, 0));
        bytes.extend(&frame(true, 0x1, 20)[..7]);
        p.feed(&bytes);
        assert!(p.unfinished());
        assert_eq!(p.begun, 5);
        assert_eq!(
            p.read,
            (whole.len() + frame(false, 0x1, 70_000).len() + 16 + 16 + 6 + 11 + 6 + 7) as u64
        );
    }

    #[test]
    fn client_requests() {
        let r = client_request("ws://[::1]:8080/ws").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 8080));
        assert_eq!(r.request.headers()[header::SEC_WEBSOCKET_PROTOCOL], "mcp");
        assert_eq!(r.request.headers()[header::HOST], "[::1]:8080");
        let r = client_request("WS://localhost/ws").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("localhost", 80));
        #[cfg(feature = "tls")]
        {
            let r = client_request("wss://localhost/ws").unwrap();
            assert_eq!((r.port, r.secure), (443, true));
        }
        for bad in [
            #[cfg(not(feature = "tls"))]
            "wss://localhost/ws",
            "http://localhost/ws",
            "ws:///ws",
            "not a url",
        ] {
            let e = client_request(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidParams, "{bad}");
        }
    }
}
