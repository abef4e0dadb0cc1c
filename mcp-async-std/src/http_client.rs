//! MCP clients over HTTP on async-std and smol: the [`Connector`] of `async-io` TCP streams
//! and the `connect_http*` entry points over `mcp_service::http_client`.

use std::net::{TcpStream, ToSocketAddrs};

use async_io::Async;
use mcp_service::http_client::{self, Connector, HttpClientOptions, HttpTransport};
use mcp_service::hyper_io::FuturesIo;
use mcp_service::{BoxFuture, Client, ClientOptions, Error, Runtime};

/// Opens `async-io` TCP connections (with `TCP_NODELAY`) for the HTTP client; names are
/// resolved on `blocking`'s thread pool. Works under async-std and smol alike.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncIoConnector;

impl Connector for AsyncIoConnector {
    type Io = FuturesIo<Async<TcpStream>>;

    fn connect(&self, host: &str, port: u16) -> BoxFuture<std::io::Result<Self::Io>> {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs: Vec<_> = blocking::unblock(move || (host.as_str(), port).to_socket_addrs())
                .await?
                .collect();
            let mut last = None;
            for addr in addrs {
                match Async::<TcpStream>::connect(addr).await {
                    Ok(stream) => {
                        let _ = stream.get_ref().set_nodelay(true);
                        return Ok(FuturesIo::new(stream));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the host name resolved to no address",
                )
            }))
        })
    }
}

/// Connects a client to the Streamable HTTP endpoint at `url` (`http://` only) on `rt`,
/// returning once the handshake completed.
///
/// Connection failures and HTTP errors of the handshake fail the call with a clear [`Error`];
/// later HTTP errors fail the request they belong to. See [`HttpClientOptions`] for headers,
/// bearer tokens, timeouts and session re-initialisation.
pub async fn connect_http<R: Runtime>(
    rt: R,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    http_client::connect(
        rt,
        AsyncIoConnector,
        url,
        HttpTransport::Streamable,
        options,
        http,
    )
    .await
}

/// Connects a client on `rt` to the legacy HTTP+SSE (2024-11-05) server whose SSE endpoint
/// is `url`.
pub async fn connect_sse<R: Runtime>(
    rt: R,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    http_client::connect(
        rt,
        AsyncIoConnector,
        url,
        HttpTransport::LegacySse,
        options,
        http,
    )
    .await
}

/// Connects a client on `rt` to `url` with the spec's backwards-compatible probe: Streamable
/// HTTP if the server accepts `initialize` there, else (400, 404 or 405) the legacy HTTP+SSE
/// transport with `url` as its SSE endpoint.
pub async fn connect_http_auto<R: Runtime>(
    rt: R,
    url: &str,
    options: ClientOptions,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    http_client::connect(
        rt,
        AsyncIoConnector,
        url,
        HttpTransport::Auto,
        options,
        http,
    )
    .await
}
