//! Streamable HTTP on any [`Driver`]: the accept loop of [`serve_http`] and the clients
//! ([`connect_http`], [`connect_sse`], [`connect_http_auto`]) over the driver's TCP.

#[cfg(feature = "http-server")]
use std::io;

#[cfg(feature = "http-server")]
use mcp_proto::http::EndpointConfig;

#[cfg(feature = "http-server")]
use crate::hyper_server::HttpServerOptions;

use super::Driver;
#[cfg(feature = "http-server")]
use crate::Server;
#[cfg(feature = "http-client")]
use crate::http_client::{
    self, Connected, Connector, Destination, HttpClientOptions, HttpTransport,
};
#[cfg(feature = "http-client")]
use crate::runtime::BoxFuture;
#[cfg(feature = "http-client")]
use crate::{Client, ClientOptions, Error};

/// Serves `server` over Streamable HTTP on `listener` (HTTP/1.1), forever, at the path of
/// `config` (default `/mcp`; other paths get 404), with the default time limits and
/// connection caps ([`HttpServerOptions`]: headers 10 s, keep-alive idle 60 s, bodies 30 s
/// and 8 KiB/s after 5 s, 4096 connections and 256 per IP; see [`serve_http_with`]). The
/// engine owning the sessions and every connection run as tasks on `rt`.
///
/// Errors of a single connection attempt are skipped; running out of file descriptors or
/// memory pauses accepting for 100 ms. Any other accept error is returned.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(rt: D, listener: D::TcpListener) -> std::io::Result<()> {
/// use mcp_proto::http::EndpointConfig;
///
/// // With mcp-tokio: `mcp_tokio::serve_http(mcp_tokio::TokioRuntime::current(), ..)` and
/// // `let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;`.
/// let server = mcp_service::Server::builder("http-server", "1.0").build();
/// let config = EndpointConfig::new(server.config().clone()); // serves `/mcp`
/// mcp_service::driver::serve_http(rt, server, listener, config).await
/// # }
/// ```
///
/// # Errors
/// Never returns but with an error: the `io::Error` of `accept` when it is neither one
/// connection's failure nor a shortage of descriptors or memory, and the driver's error when
/// `listener` cannot be polled. An HTTP request's failure is answered on its connection
/// (4xx/5xx) and ends nothing.
#[cfg(feature = "http-server")]
pub async fn serve_http<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: EndpointConfig,
) -> io::Result<()> {
    serve_http_with(rt, server, listener, config, HttpServerOptions::default()).await
}

/// [`serve_http`] with explicit time limits and connection caps. A connection over the caps
/// is answered `503 Service Unavailable` (`Retry-After: 1`, `Connection: close`) and closed
/// before any of its bytes are read.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(
/// #     rt: D, server: mcp_service::Server, listener: D::TcpListener,
/// # ) -> std::io::Result<()> {
/// use std::time::Duration;
/// use mcp_service::hyper_server::HttpServerOptions;
/// use mcp_proto::http::EndpointConfig;
///
/// let config = EndpointConfig::new(server.config().clone());
/// let options = HttpServerOptions::default().header_read_timeout(Some(Duration::from_secs(5)));
/// mcp_service::driver::serve_http_with(rt, server, listener, config, options).await
/// # }
/// ```
///
/// # Errors
/// As [`serve_http`].
#[cfg(feature = "http-server")]
pub async fn serve_http_with<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: EndpointConfig,
    options: HttpServerOptions,
) -> io::Result<()> {
    serve_http_inner(rt, server, listener, config, options, None).await
}

/// [`serve_http_with`] over TLS (feature `tls`): each accepted connection's TLS handshake
/// (within the options' header timeout) with `tls`'s certificate, then HTTP/1.1, or HTTP/2
/// when ALPN chose `h2` ([`HttpServerOptions::http2`], feature `http2`). A failed handshake
/// (a client speaking plain HTTP, refusing the certificate, or without the client certificate
/// `tls` requires) ends that connection only.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(
/// #     rt: D, server: mcp_service::Server, listener: D::TcpListener,
/// # ) -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_proto::http::EndpointConfig;
/// use mcp_service::hyper_server::HttpServerOptions;
/// use mcp_service::tls::TlsServerConfig;
///
/// let tls = TlsServerConfig::from_pem(&std::fs::read("cert.pem")?, &std::fs::read("key.pem")?)?;
/// let config = EndpointConfig::new(server.config().clone());
/// mcp_service::driver::serve_http_tls(rt, server, listener, config, HttpServerOptions::default(), tls)
///     .await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`serve_http`].
#[cfg(all(feature = "http-server", feature = "tls"))]
pub async fn serve_http_tls<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: EndpointConfig,
    options: HttpServerOptions,
    tls: crate::tls::TlsServerConfig,
) -> io::Result<()> {
    serve_http_inner(rt, server, listener, config, options, Some(tls)).await
}

#[cfg(feature = "http-server")]
async fn serve_http_inner<D: Driver>(
    rt: D,
    server: Server,
    listener: D::TcpListener,
    config: EndpointConfig,
    options: HttpServerOptions,
    #[cfg(feature = "tls")] tls: Option<crate::tls::TlsServerConfig>,
    #[cfg(not(feature = "tls"))] _tls: Option<std::convert::Infallible>,
) -> io::Result<()> {
    use crate::hyper_server::{HyperService, serve_connection_with};
    let service = HyperService::spawn_shards(&rt, &server, config, options.shards)
        .body_limits(&rt, options.body);
    let options = std::sync::Arc::new(options);
    super::accept_loop(
        &rt,
        listener,
        options.connections,
        super::Refusal::Http503,
        |stream, addr| {
            let service = service.clone();
            let conn_rt = rt.clone();
            let options = options.clone();
            #[cfg(feature = "tls")]
            let tls = tls.clone();
            async move {
                #[cfg(feature = "tls")]
                if let Some(tls) = tls {
                    let accepted = super::timed_io(
                        &conn_rt,
                        options.header_read_timeout,
                        crate::tls::accept(&tls, stream, options.http2),
                    )
                    .await;
                    let (stream, h2) = match accepted {
                        Ok(s) => s,
                        Err(e) => {
                            tracing::debug!(target: "mcp", %addr, error = %e, "TLS handshake failed");
                            return;
                        }
                    };
                    let io = Box::new(crate::hyper_io::FuturesIo::new(stream));
                    if let Err(e) = crate::hyper_server::serve_negotiated(
                        conn_rt, service, io, addr, &options, h2,
                    )
                    .await
                    {
                        tracing::debug!(target: "mcp", %addr, error = %e, "HTTPS connection ended with an error");
                    }
                    return;
                }
                if let Err(e) =
                    serve_connection_with(conn_rt, service, D::hyper_io(stream), addr, &options)
                        .await
                {
                    tracing::debug!(target: "mcp", %addr, error = %e, "HTTP connection ended with an error");
                }
            }
        },
    )
    .await
}

/// Opens the HTTP client's TCP connections (with `TCP_NODELAY`) through a [`Driver`], and
/// with the feature `tls` runs the TLS handshake of `https://` ones over them (the policy of
/// [`Destination::tls`], the host's name checked; `h2` offered by ALPN per
/// [`Destination::offer_h2`]).
#[cfg(feature = "http-client")]
#[derive(Clone, Debug)]
pub struct TcpConnector<D>(pub D);

#[cfg(feature = "http-client")]
impl<D: Driver> Connector for TcpConnector<D> {
    type Io = crate::hyper_io::BoxedIo;

    fn connect(&self, to: &Destination) -> BoxFuture<std::io::Result<Connected<Self::Io>>> {
        let connect = match &to.check {
            None => self.0.connect_tcp(&to.host, to.port),
            Some(check) => vetted_tcp(self.0.clone(), to.host.clone(), to.port, check.clone()),
        };
        if !to.secure {
            return Box::pin(async move { Ok(Connected::new(D::hyper_io(connect.await?))) });
        }
        #[cfg(feature = "tls")]
        {
            let tls = to.tls.clone().unwrap_or_default();
            let (host, offer_h2) = (to.host.clone(), to.offer_h2);
            Box::pin(async move {
                let tcp = connect.await?;
                let (stream, h2) = crate::tls::connect(&tls, &host, tcp, offer_h2).await?;
                let io: Self::Io = Box::new(crate::hyper_io::FuturesIo::new(stream));
                Ok(Connected::new(io).http2(h2))
            })
        }
        #[cfg(not(feature = "tls"))]
        {
            drop(connect);
            Box::pin(async {
                Err(std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "https needs TLS (the feature `tls`)",
                ))
            })
        }
    }
}

/// A TCP connection to `host` at an address of it that `check` allows: every address the
/// name resolves to is judged before any is connected to, so a refused one is never reached.
#[cfg(feature = "http-client")]
fn vetted_tcp<D: Driver>(
    rt: D,
    host: String,
    port: u16,
    check: crate::http_client::AddressCheck,
) -> BoxFuture<std::io::Result<D::TcpStream>> {
    Box::pin(async move {
        let (server_host, server_port) = check.server();
        // The server's own addresses say which network it is on (none: judged by its URL).
        let server_addrs: Vec<std::net::IpAddr> = rt
            .resolve(server_host, server_port)
            .await
            .map(|addrs| addrs.iter().map(std::net::SocketAddr::ip).collect())
            .unwrap_or_default();
        let addrs = rt.resolve(&host, port).await?;
        let mut refused = None;
        let mut last = None;
        for addr in addrs {
            if let Err(why) = check.allows(&server_addrs, addr.ip()) {
                refused.get_or_insert(why);
                continue;
            }
            match rt.connect_tcp(&addr.ip().to_string(), port).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(match (last, refused) {
            (Some(e), _) => e,
            (None, Some(why)) => std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("refused to connect to {host}: {why}"),
            ),
            (None, None) => std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host} resolved to no address"),
            ),
        })
    })
}

/// Connects a client on `rt` to the Streamable HTTP endpoint at `url` (`http://`, or
/// `https://` with the feature `tls`: the TLS policy is [`HttpClientOptions::tls`]),
/// returning once the handshake completed.
///
/// Connection failures and HTTP errors of the handshake fail the call with a clear [`Error`];
/// later HTTP errors fail the request they belong to. See [`HttpClientOptions`] for headers,
/// bearer tokens, OAuth 2.1 authorization, timeouts and session re-initialisation.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::Driver>(rt: D) -> Result<(), mcp_service::Error> {
/// use mcp_service::{ClientOptions, HttpClientOptions};
///
/// // With mcp-tokio: `mcp_tokio::connect_http(mcp_tokio::TokioRuntime::current(), ..)`.
/// let http = HttpClientOptions::new().bearer("secret-token");
/// let client =
///     mcp_service::driver::connect_http(rt, "http://127.0.0.1:8080/mcp", ClientOptions::default(), http)
///         .await?;
/// println!("{} tools", client.list_tools().await?.len());
/// client.shutdown().await; // ends the HTTP session (DELETE) and waits for it
/// # Ok(()) }
/// ```
///
/// # Errors
/// - [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) (-32602, before anything
///   is sent) for a URL that is not an absolute `http://` or `https://` URL with a host
///   (`https://` needs the feature `tls`) or a bearer token that is not a valid header value;
/// - [`ErrorKind::TransportError`](crate::ErrorKind::TransportError) (local) when the
///   connection is refused or breaks, or the server answers the handshake with an HTTP status
///   this transport does not expect (the message quotes the status and the body's start);
///   [`ErrorKind::Unauthorized`](crate::ErrorKind::Unauthorized) for 401 or 403 (after
///   the OAuth flow failed, with [`HttpClientOptions::oauth`](crate::HttpClientOptions::oauth)),
///   [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) for 404,
///   [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) for 408 and 504 and for a connection
///   or answer slower than the options' timeouts,
///   [`ErrorKind::LimitExceeded`](crate::ErrorKind::LimitExceeded) for 413;
/// - and those of [`Client::connect`] (a version mismatch, a JSON-RPC error to the
///   handshake).
#[cfg(feature = "http-client")]
pub async fn connect_http<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(rt, url, HttpTransport::Streamable, options, http).await
}

/// Connects a client on `rt` to the legacy HTTP+SSE (2024-11-05) server whose SSE endpoint
/// is `url`.
///
/// # Errors
/// As [`connect_http`], for the SSE stream's `GET` and the first `POST` to the endpoint it
/// names.
#[cfg(feature = "http-client")]
pub async fn connect_sse<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(rt, url, HttpTransport::LegacySse, options, http).await
}

/// Connects a client on `rt` to `url` with the spec's backwards-compatible probe: Streamable
/// HTTP if the server accepts `initialize` there, else (400, 404 or 405) the legacy HTTP+SSE
/// transport with `url` as its SSE endpoint.
///
/// # Errors
/// As [`connect_http`]; after a 400, 404 or 405 to the Streamable HTTP `initialize`, those of
/// [`connect_sse`].
#[cfg(feature = "http-client")]
pub async fn connect_http_auto<D: Driver>(
    rt: D,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(rt, url, HttpTransport::Auto, options, http).await
}

#[cfg(feature = "http-client")]
async fn connect<D: Driver>(
    rt: D,
    url: &str,
    kind: HttpTransport,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    let connector = TcpConnector(rt.clone());
    http_client::connect(rt, connector, url, kind, options, http).await
}
