//! MCP clients over HTTP on tokio: the [`Connector`] of tokio TCP streams and the
//! `connect_http*` entry points over `mcp_service::http_client`.

use mcp_service::http_client::{self, Connector, HttpClientOptions, HttpTransport};
use mcp_service::{BoxFuture, Client, ClientOptions, Error};

use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::TokioRuntime;

/// Opens tokio TCP connections (with `TCP_NODELAY`) for the HTTP client.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioConnector;

impl Connector for TokioConnector {
    type Io = TokioIo<TcpStream>;

    fn connect(&self, host: &str, port: u16) -> BoxFuture<std::io::Result<Self::Io>> {
        let host = host.to_owned();
        Box::pin(async move {
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            let _ = stream.set_nodelay(true);
            Ok(TokioIo::new(stream))
        })
    }
}

/// Connects a client to the Streamable HTTP endpoint at `url` (`http://` only), returning
/// once the handshake completed. Must run inside a tokio runtime.
///
/// Connection failures and HTTP errors of the handshake fail the call with a clear [`Error`];
/// later HTTP errors fail the request they belong to. See [`HttpClientOptions`] for headers,
/// bearer tokens, OAuth 2.1 authorization, timeouts and session re-initialisation.
pub async fn connect_http(
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(url, HttpTransport::Streamable, options, http).await
}

/// Connects a client to the legacy HTTP+SSE (2024-11-05) server whose SSE endpoint is `url`.
/// Must run inside a tokio runtime.
pub async fn connect_sse(
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(url, HttpTransport::LegacySse, options, http).await
}

/// Connects a client to `url` with the spec's backwards-compatible probe: Streamable HTTP if
/// the server accepts `initialize` there, else (400, 404 or 405) the legacy HTTP+SSE
/// transport with `url` as its SSE endpoint. Must run inside a tokio runtime.
pub async fn connect_http_auto(
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    connect(url, HttpTransport::Auto, options, http).await
}

async fn connect(
    url: &str,
    kind: HttpTransport,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    http_client::connect(
        TokioRuntime::current(),
        TokioConnector,
        url,
        kind,
        options,
        http,
    )
    .await
}
