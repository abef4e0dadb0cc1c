//! MCP clients over HTTP: Streamable HTTP (2025-03-26 and later), the legacy HTTP+SSE
//! transport (2024-11-05), and the backwards-compatible probe that picks one of them.
//!
//! The rules of both transports are the core's
//! ([`mcp_proto::http::client::ClientTransport`]): which request to make for each message, the
//! session headers, how to read each reply, the standalone GET stream, resumption, the 404
//! re-initialisation (run by the session itself), DELETE on close, the legacy endpoint and the
//! probe. This module only carries its exchanges out on hyper, on the connection's own task,
//! beside the client's session: each message the session writes becomes one POST, and each
//! JSON body or SSE `message` event goes to the session whole, parsed once there. HTTP
//! failures of one request fail that request (its caller gets a clear [`Error`]); failures of
//! the handshake fail [`Client`] creation; a lost session either re-initialises transparently
//! or fails what is pending.
//!
//! With `HttpClientOptions::oauth` (feature `oauth`) the transport authorizes itself (MCP
//! Authorization, OAuth 2.1): every request carries the kept access token, and a 401 (or a 403
//! asking for more scope) runs the `oauth` flow over the same connections before the request
//! is sent again.
//!
//! HTTP/1.1 runs on hyper's client connection API over connections from a driver-supplied
//! [`Connector`]; connections are pooled and as many are opened as there are concurrent
//! requests. With the feature `tls`, `https://` URLs are spoken over TLS (the policy in
//! [`HttpClientOptions::tls`]; default: the `webpki-roots` bundle), OAuth's requests to
//! authorization servers included; with the feature `http2`, HTTP/2 is used where the server
//! chooses it by ALPN (one multiplexed connection per server), or on plain TCP with
//! [`HttpClientOptions::http2_prior_knowledge`].
//!
//! It never parses HTTP itself (hyper does), never frames SSE itself (`mcp_proto::codec::sse`
//! does) and never interprets MCP beyond what the transport needs: the kind and id of each
//! message, the `initialize` request and the negotiated protocol version.

#[cfg(feature = "oauth")]
mod auth;
mod target;
mod wire;

use std::io;
#[cfg(feature = "oauth")]
use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_proto::http::client::{ClientConfig, ClientMode, ClientTransport};
use mcp_proto::{Duration, Error};

use crate::client::{Client, ClientOptions};
use crate::connection::{SessionWire, Transport};
#[cfg(feature = "oauth")]
use crate::oauth::{Entropy, OAuthClient};
use crate::runtime::{BoxFuture, Runtime};

#[cfg(feature = "oauth")]
pub use auth::AuthorizationHandler;

/// Opens connections for the HTTP client: supplied by each driver (tokio, async-std, smol) as
/// `TcpConnector`, which speaks TLS to [`Destination::secure`] ones (feature `tls`).
pub trait Connector: Send + Sync + 'static {
    /// The connection type, seen through hyper's IO traits.
    type Io: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static;

    /// Connects to `to`: a TCP connection to its host and port, then, when it is
    /// [`secure`](Destination::secure), a TLS handshake with the host's name checked. The
    /// future's `io::Error` (a name that does not resolve, a refused connection, a failed
    /// handshake) fails the exchange that needed the connection with
    /// [`ErrorKind::TransportError`](mcp_proto::ErrorKind::TransportError), its message
    /// quoted.
    fn connect(&self, to: &Destination) -> BoxFuture<io::Result<Connected<Self::Io>>>;
}

/// Where the HTTP client wants a connection, for [`Connector::connect`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Destination {
    /// The host: a name or an IP address, without brackets.
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// An `https://` URL: the connection must be TLS, the certificate valid for `host`.
    pub secure: bool,
    /// Whether to offer HTTP/2 by ALPN on a TLS connection (feature `http2`, and not turned
    /// off with [`HttpClientOptions::http2`]).
    pub offer_h2: bool,
    /// The TLS policy ([`HttpClientOptions::tls`]); `None`: the default (the `webpki-roots`
    /// bundle, no client certificate).
    #[cfg(feature = "tls")]
    pub tls: Option<crate::tls::TlsClientConfig>,
    /// Which of the addresses the host resolves to may be connected to, for a URL the client
    /// fetches on a server's say-so (OAuth's metadata and endpoints): see [`AddressCheck`].
    /// `None`: any. A connector that resolves names itself must apply it to every address
    /// before connecting to it ([`TcpConnector`](crate::driver::TcpConnector) does).
    pub check: Option<AddressCheck>,
}

/// Which addresses a connection may reach: the rule a connector applies to each address a
/// host name resolves to before connecting (so that a server-chosen name that resolves into
/// the client's own network is refused as its address literal would be). It judges an
/// address against the addresses of a reference host (the MCP server's).
#[derive(Clone)]
pub struct AddressCheck {
    server: (String, u16),
    check: std::sync::Arc<AddressRule>,
}

/// An address judged against the reference host's addresses.
type AddressRule =
    dyn Fn(&[std::net::IpAddr], std::net::IpAddr) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for AddressCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressCheck")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl AddressCheck {
    /// A rule judging each address (second argument) against the addresses `server_host`
    /// resolves to (first argument; empty when it resolves to none): `Err` says why the
    /// address is refused.
    pub fn new(
        server_host: impl Into<String>,
        server_port: u16,
        check: impl Fn(&[std::net::IpAddr], std::net::IpAddr) -> Result<(), String>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        AddressCheck {
            server: (server_host.into(), server_port),
            check: std::sync::Arc::new(check),
        }
    }

    /// The rule of OAuth's fetches for the MCP server at `server_url` (feature `oauth`; see
    /// [`oauth`](crate::oauth)'s SSRF rules): a public address always, a cloud metadata
    /// address never, a loopback, private or link-local one only when the server is on that
    /// same kind of network (by its URL's host or the addresses it resolves to).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`](mcp_proto::ErrorKind::InvalidParams) for a URL that does
    /// not parse or has no host.
    #[cfg(feature = "oauth")]
    pub fn same_network_as(server_url: &str) -> Result<Self, Error> {
        let url = url::Url::parse(server_url)
            .map_err(|e| Error::invalid_params(format!("invalid URL {server_url:?}: {e}")))?;
        crate::oauth::ssrf_address_check(&url)
            .ok_or_else(|| Error::invalid_params(format!("{server_url}: the URL has no host")))
    }

    /// The reference host and port.
    pub fn server(&self) -> (&str, u16) {
        (&self.server.0, self.server.1)
    }

    /// Whether `ip` may be connected to, given the addresses the reference host resolves to.
    ///
    /// # Errors
    /// Why `ip` is refused.
    pub fn allows(
        &self,
        server_addrs: &[std::net::IpAddr],
        ip: std::net::IpAddr,
    ) -> Result<(), String> {
        (self.check)(server_addrs, ip)
    }
}

impl Destination {
    /// A plain (not TLS) destination.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        Destination {
            host: host.into(),
            port,
            secure: false,
            offer_h2: false,
            #[cfg(feature = "tls")]
            tls: None,
            check: None,
        }
    }
}

/// A connection a [`Connector`] opened, and whether HTTP/2 was chosen for it (by ALPN).
#[derive(Debug)]
#[non_exhaustive]
pub struct Connected<I> {
    /// The connection.
    pub io: I,
    /// The server chose `h2` by ALPN: the client speaks HTTP/2 on it.
    pub http2: bool,
}

impl<I> Connected<I> {
    /// A connection speaking HTTP/1.1 (unless the client was told to use prior-knowledge
    /// HTTP/2 on plain connections).
    pub fn new(io: I) -> Self {
        Connected { io, http2: false }
    }

    /// Whether the server chose HTTP/2 by ALPN.
    pub fn http2(mut self, chosen: bool) -> Self {
        self.http2 = chosen;
        self
    }
}

/// Which HTTP transport to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpTransport {
    /// Streamable HTTP (2025-03-26 and later): the URL is the MCP endpoint.
    Streamable,
    /// The legacy HTTP+SSE transport (2024-11-05): the URL is the SSE endpoint, which names the
    /// POST endpoint in its first `endpoint` event.
    LegacySse,
    /// The spec's backwards-compatible probe: `initialize` is POSTed to the URL; if that
    /// succeeds the client speaks Streamable HTTP, if it fails with 400, 404 or 405 the URL is
    /// opened as a legacy SSE endpoint.
    Auto,
}

/// Default bound of one message (a JSON body or one SSE event).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// Options of the HTTP transport (the MCP-level options are [`ClientOptions`]).
#[derive(Clone, Debug)]
pub struct HttpClientOptions {
    pub(crate) headers: HeaderMap,
    pub(crate) bearer: Option<String>,
    /// The core policy's settings (re-initialisation, the standalone stream, reconnection,
    /// message size); its URL is set when a transport opens.
    pub(crate) policy: ClientConfig,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) response_timeout: Option<Duration>,
    pub(crate) max_idle_connections: usize,
    /// Offer HTTP/2 by ALPN (feature `http2`).
    pub(crate) http2: bool,
    /// Speak HTTP/2 on plain TCP without asking (h2c with prior knowledge).
    pub(crate) h2c: bool,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<crate::tls::TlsClientConfig>,
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<auth::OAuthOptions>,
    #[cfg(feature = "oauth")]
    pub(crate) auth_handler: Option<auth::Handler>,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            headers: HeaderMap::new(),
            bearer: None,
            policy: ClientConfig::new(http::Uri::from_static("http://localhost/"))
                .max_message_size(DEFAULT_MAX_MESSAGE_SIZE),
            connect_timeout: Some(Duration::from_secs(10)),
            response_timeout: None,
            max_idle_connections: 16,
            http2: cfg!(feature = "http2"),
            h2c: false,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            #[cfg(feature = "oauth")]
            auth_handler: None,
        }
    }
}

impl HttpClientOptions {
    /// The defaults: re-initialisation on 404, the standalone GET stream, a 10 s connect
    /// timeout, no response timeout, 5 reconnection attempts per broken SSE stream starting at
    /// 1 s (or the server's `retry`) and doubling up to 30 s, 16 MiB messages.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header sent with every HTTP request (after the transport's own headers, which
    /// it cannot replace: `Host`, `Accept`, `Content-Type`, `Mcp-Session-Id`,
    /// `MCP-Protocol-Version`, `Last-Event-ID`).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Whether a 404 to a request carrying the session id (the server forgot the session)
    /// starts a new session transparently — re-sending the original `initialize` and
    /// `notifications/initialized`, then the request (default) — or fails the pending
    /// requests and closes the client.
    pub fn reinitialize(mut self, enabled: bool) -> Self {
        self.policy = self.policy.reinitialize(enabled);
        self
    }

    /// Whether the standalone GET SSE stream is opened after the handshake (default on).
    pub fn standalone_stream(mut self, enabled: bool) -> Self {
        self.policy = self.policy.standalone_stream(enabled);
        self
    }

    /// How long requests after the handshake wait for the standalone stream to attach, so that
    /// what the server sends on it about them is not lost (default 5 s; a server slow to answer
    /// the GET holds them no longer than this).
    pub fn standalone_wait(mut self, wait: Duration) -> Self {
        self.policy = self.policy.standalone_wait(wait);
        self
    }

    /// Bound of opening a TCP connection and its HTTP handshake (default 10 s).
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Bound of waiting for the head of each HTTP response (default none). With servers that
    /// answer requests as one JSON body, the head comes with the result: set this above the
    /// longest call, or rely on the request timeouts of [`ClientOptions`].
    pub fn response_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Reconnection attempts for one broken SSE stream before its request fails (default 5;
    /// the count restarts whenever a reconnection delivers events).
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.policy = self.policy.max_reconnects(attempts);
        self
    }

    /// The first reconnection delay when the server sent no `retry` (default 1 s), and the
    /// largest delay the doubling backoff reaches (default 30 s).
    pub fn reconnect_delay(mut self, first: Duration, max: Duration) -> Self {
        self.policy = self.policy.reconnect_delay(first, max);
        self
    }

    /// Largest accepted message: a JSON body or one SSE event (default 16 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.policy = self.policy.max_message_size(bytes);
        self
    }

    /// Authorizes with OAuth 2.1 (MCP Authorization, feature `oauth`): every MCP request carries the access
    /// token `client` keeps for the server (`Authorization: Bearer`, or `DPoP` with a fresh
    /// proof for a DPoP-bound token, replacing a [`bearer`](Self::bearer) token), renewed
    /// shortly before it expires when that needs no user; a 401, or a 403 with `insufficient_scope`, runs an
    /// authorization flow ([`OAuthClient::authorize`]) — discovery, registration, the
    /// authorization request, the token request, all over this transport's connections — and
    /// the request is sent again with the new token. A failed flow fails the request (or the
    /// connect) with [`ErrorKind::Unauthorized`](mcp_proto::ErrorKind::Unauthorized) saying why; step-up is bounded by the flow,
    /// which refuses to ask again for scopes it already asked for.
    ///
    /// `entropy` supplies the random bytes of each flow (PKCE verifier, `state`): back it with
    /// a cryptographically secure generator (e.g. `getrandom`). The user's approval goes
    /// through [`authorization_handler`](Self::authorization_handler); without one it is
    /// headless (see [`AuthorizationHandler`]). `https://` authorization servers need the
    /// feature `tls` (they are reached with [`tls`](Self::tls)'s policy).
    #[cfg(feature = "oauth")]
    pub fn oauth(
        mut self,
        client: OAuthClient,
        entropy: impl Fn() -> Result<Entropy, Error> + Send + Sync + 'static,
    ) -> Self {
        self.oauth = Some(auth::OAuthOptions {
            client,
            entropy: Arc::new(entropy),
        });
        self
    }

    /// How the user approves authorization requests (with [`oauth`](Self::oauth); default:
    /// headless approval).
    #[cfg(feature = "oauth")]
    pub fn authorization_handler(mut self, handler: impl AuthorizationHandler) -> Self {
        self.auth_handler = Some(auth::Handler(Arc::new(handler)));
        self
    }

    /// The TLS policy of `https://` connections (feature `tls`): trusted roots, extra CAs, a
    /// client certificate. Default: the `webpki-roots` bundle, no client certificate. It
    /// applies to every connection of the transport, the OAuth flow's included.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: crate::tls::TlsClientConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// Whether HTTP/2 is offered by ALPN on TLS connections (default: on with the feature
    /// `http2`; without it, HTTP/1.1 only). A server choosing `h2` gets one multiplexed
    /// connection for every request.
    pub fn http2(mut self, enabled: bool) -> Self {
        self.http2 = enabled && cfg!(feature = "http2");
        self
    }

    /// Speaks HTTP/2 on plain `http://` connections without negotiation (h2c with prior
    /// knowledge, feature `http2`; default off). Only for servers known to serve it, such as
    /// this crate's: an HTTP/1.1-only server closes the connection.
    pub fn http2_prior_knowledge(mut self, enabled: bool) -> Self {
        self.h2c = enabled && cfg!(feature = "http2");
        self
    }

    /// Most idle HTTP connections kept for reuse (default 16).
    pub fn max_idle_connections(mut self, connections: usize) -> Self {
        self.max_idle_connections = connections;
        self
    }
}

/// An HTTP transport to `url`, for [`Client::connect`], and a future that resolves once the
/// transport has finished after the client closed it (the session DELETEd, exchanges ended;
/// [`Client::shutdown`] waits for that too). Exchanges are spawned on `rt`, connections come
/// from `connector`.
///
/// Fails at once on a URL that is not absolute `http://` or `https://` (`https://` needs the
/// feature `tls`) or on a bearer token that is not a valid header value; everything else (refused
/// connections, HTTP errors) surfaces through the stream once the client speaks.
///
/// # Errors
/// [`ErrorKind::InvalidParams`](mcp_proto::ErrorKind::InvalidParams) (-32602) for such a URL
/// or token, before anything is sent.
pub fn http_transport<R: Runtime, C: Connector>(
    rt: R,
    connector: C,
    url: &str,
    kind: HttpTransport,
    options: HttpClientOptions,
) -> Result<(HttpStream, TransportFinished), Error> {
    let target = target::Target::parse(url)?;
    let uri: http::Uri = target
        .url
        .as_str()
        .parse()
        .map_err(|e| Error::invalid_params(format!("invalid URL {url:?}: {e}")))?;
    let mut headers = options.headers.clone();
    if let Some(token) = &options.bearer {
        let v = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
            Error::invalid_params("the bearer token is not a valid HTTP header value")
        })?;
        headers.insert(http::header::AUTHORIZATION, v);
    }
    let mode = match kind {
        HttpTransport::Streamable => ClientMode::Streamable,
        HttpTransport::LegacySse => ClientMode::LegacySse,
        HttpTransport::Auto => ClientMode::Auto,
    };
    let policy = ClientTransport::new(options.policy.clone().with_url(uri).mode(mode));
    let (finished_tx, finished_rx) = futures_channel::oneshot::channel();
    let wire = wire::HttpWire::new(rt, connector, target, options, headers, policy, finished_tx);
    Ok((HttpStream(Box::new(wire)), TransportFinished(finished_rx)))
}

/// An HTTP client transport (see [`http_transport`]), for [`Client::connect`].
pub struct HttpStream(pub(crate) Box<dyn SessionWire>);

impl std::fmt::Debug for HttpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpStream")
    }
}

impl From<HttpStream> for Transport {
    fn from(stream: HttpStream) -> Self {
        Transport::Http(stream)
    }
}

/// Resolves once an HTTP transport has finished (see [`http_transport`]).
#[derive(Debug)]
#[must_use = "a future does nothing unless awaited"]
pub struct TransportFinished(pub(crate) futures_channel::oneshot::Receiver<()>);

impl std::future::Future for TransportFinished {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// Connects a typed [`Client`] to `url` over `kind`: the transport and the connection task
/// run on `rt`, and the client is returned once the handshake completed.
///
/// # Errors
/// Those of [`driver::connect_http`](crate::driver::connect_http) (the same function over
/// the driver's TCP): [`ErrorKind::InvalidParams`](mcp_proto::ErrorKind::InvalidParams) for
/// a URL or token [`http_transport`] refuses, the HTTP and connection errors of the handshake
/// by their kind, and those of [`Client::connect`].
pub async fn connect<R: Runtime, C: Connector>(
    rt: R,
    connector: C,
    url: &str,
    kind: HttpTransport,
    client: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    let (stream, _finished) = http_transport(rt.clone(), connector, url, kind, http)?;
    Client::connect(rt, stream, client).await
}
