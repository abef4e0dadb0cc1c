//! The validators' HTTP exchanges (JWKS, introspection): a small trait, and an implementation
//! over the HTTP client's [`Connector`].

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::{Either, select};
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1;

use crate::cancel::CancellationToken;
use crate::http_client::Connector;
use crate::runtime::{BoxFuture, Runtime};
use crate::{Error, ErrorKind};

/// One HTTP exchange of a validator: a request with an absolute URI in, the reply (its body
/// complete) out. [`ConnectorFetch`] does it over a driver's [`Connector`]; implement it for
/// another HTTP client (one with TLS, a proxy, a mesh).
pub trait HttpFetch: Send + Sync + 'static {
    /// Sends `request` (absolute URI) and returns the reply.
    ///
    /// # Errors
    /// [`ErrorKind::TransportError`] when the exchange fails (refused, reset, too slow, a
    /// body over the fetcher's limit).
    fn fetch(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<Result<http::Response<Vec<u8>>, Error>>;
}

impl<T: HttpFetch + ?Sized> HttpFetch for Arc<T> {
    fn fetch(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<Result<http::Response<Vec<u8>>, Error>> {
        (**self).fetch(request)
    }
}

/// [`HttpFetch`] over a [`Connector`] on a [`Runtime`]: one HTTP/1.1 connection per
/// exchange, bounded in time (10 s by default) and reply size (1 MiB by default). `https://`
/// URLs are fetched over TLS (the connector's, with the [`tls_config`](Self::tls_config)
/// policy; feature `tls` for [`TcpConnector`](crate::driver::TcpConnector)), `http://` ones
/// in the clear unless [`tls`](Self::tls) refuses them.
pub struct ConnectorFetch<R, C> {
    rt: R,
    connector: Arc<C>,
    timeout: Duration,
    max_body: usize,
    tls: bool,
    #[cfg(feature = "tls")]
    tls_config: Option<crate::tls::TlsClientConfig>,
}

impl<R, C> std::fmt::Debug for ConnectorFetch<R, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorFetch")
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime, C: Connector> ConnectorFetch<R, C> {
    /// Exchanges over `connector`'s connections, timed on `rt`.
    pub fn new(rt: R, connector: C) -> Self {
        ConnectorFetch {
            rt,
            connector: Arc::new(connector),
            timeout: Duration::from_secs(10),
            max_body: 1 << 20,
            tls: false,
            #[cfg(feature = "tls")]
            tls_config: None,
        }
    }

    /// How long one exchange may take, connection included.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest reply body read.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// `https://` URLs only: `http://` ones are refused.
    pub fn tls(mut self, tls: bool) -> Self {
        self.tls = tls;
        self
    }

    /// The TLS policy of `https://` fetches (roots, client certificate); default: the
    /// `webpki-roots` bundle (feature `tls`).
    #[cfg(feature = "tls")]
    pub fn tls_config(mut self, config: crate::tls::TlsClientConfig) -> Self {
        self.tls_config = Some(config);
        self
    }
}

fn transport(msg: String) -> Error {
    Error::new(ErrorKind::TransportError, msg)
}

impl<R: Runtime, C: Connector> HttpFetch for ConnectorFetch<R, C> {
    fn fetch(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<Result<http::Response<Vec<u8>>, Error>> {
        let rt = self.rt.clone();
        let connector = self.connector.clone();
        let max = self.max_body;
        let https_only = self.tls;
        #[cfg(feature = "tls")]
        let tls_config = self.tls_config.clone();
        let deadline = rt.now()
            + mcp_proto::Duration::from_micros(
                u64::try_from(self.timeout.as_micros()).unwrap_or(u64::MAX),
            );
        Box::pin(async move {
            let url = request.uri().to_string();
            let exchange = async {
                let (mut parts, body) = request.into_parts();
                let (secure, default_port) = match parts.uri.scheme_str() {
                    Some("https") => (true, 443),
                    Some("http") if !https_only => (false, 80),
                    _ => {
                        let schemes = if https_only {
                            "https://"
                        } else {
                            "http:// and https://"
                        };
                        return Err(Error::invalid_params(format!(
                            "{url}: this fetcher takes {schemes} URLs only"
                        )));
                    }
                };
                let authority = parts
                    .uri
                    .authority()
                    .cloned()
                    .ok_or_else(|| Error::invalid_params(format!("{url}: no host")))?;
                let host = authority
                    .host()
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let port = authority.port_u16().unwrap_or(default_port);
                let mut to = crate::http_client::Destination::new(host, port);
                to.secure = secure;
                #[cfg(feature = "tls")]
                {
                    to.tls = tls_config;
                }
                let io = connector
                    .connect(&to)
                    .await
                    .map_err(|e| transport(format!("connecting to {url}: {e}")))?
                    .io;
                let (mut sender, conn) = http1::handshake::<_, Full<Bytes>>(io)
                    .await
                    .map_err(|e| transport(format!("{url}: {e}")))?;
                let done = CancellationToken::new();
                let stop = done.clone();
                rt.spawn(Box::pin(async move {
                    let _ = select(Box::pin(conn), stop.cancelled()).await;
                }));
                let _guard = DropCancels(done);
                let path = parts
                    .uri
                    .path_and_query()
                    .map_or("/", |p| p.as_str())
                    .to_owned();
                parts.uri = path
                    .parse()
                    .map_err(|_| Error::invalid_params(format!("{url}: invalid path")))?;
                if let Ok(v) = http::HeaderValue::from_str(authority.as_str()) {
                    parts.headers.insert(http::header::HOST, v);
                }
                let req = http::Request::from_parts(parts, Full::new(Bytes::from(body)));
                let resp = sender
                    .send_request(req)
                    .await
                    .map_err(|e| transport(format!("{url}: {e}")))?;
                let (head, body) = resp.into_parts();
                let bytes = Limited::new(body, max)
                    .collect()
                    .await
                    .map_err(|e| transport(format!("{url}: reply body: {e}")))?
                    .to_bytes();
                Ok(http::Response::from_parts(head, bytes.to_vec()))
            };
            match select(Box::pin(exchange), rt.sleep_until(deadline)).await {
                Either::Left((r, _)) => r,
                Either::Right(_) => Err(transport(format!("{url}: no reply in time"))),
            }
        })
    }
}

/// Closes the exchange's connection when the exchange ends (or is dropped).
struct DropCancels(CancellationToken);

impl Drop for DropCancels {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
