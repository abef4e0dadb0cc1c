//! Streamable HTTP on tokio: [`serve_http`], an accept loop whose connections hand requests to
//! the server's [`HttpEngine`](mcp_service::http_engine::HttpEngine), and [`McpService`], the
//! same endpoint as a tower service to mount in axum or any other tower stack.
//!
//! Both are thin: the request/reply conversion and the hyper connection are
//! [`mcp_service::hyper_server`]'s.

use std::convert::Infallible;
use std::io;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use mcp_proto::http::EndpointConfig;
use mcp_service::Server;
use mcp_service::hyper_server::{BoxError, HyperService, ReplyFuture, serve_connection};
use tokio::net::TcpListener;

pub use mcp_service::hyper_server::ReplyBody;

use crate::TokioRuntime;

/// Serves `server` over Streamable HTTP on `listener` (HTTP/1.1), forever, at the path of
/// `config` (default `/mcp`; other paths get 404). The engine owning the sessions runs on its
/// own task. Must run inside a tokio runtime.
///
/// Errors of a single connection attempt are skipped; running out of file descriptors pauses
/// accepting for 100 ms. Any other accept error is returned.
pub async fn serve_http(
    server: Server,
    listener: TcpListener,
    config: EndpointConfig,
) -> io::Result<()> {
    let rt = TokioRuntime::current();
    let service = HyperService::spawn(&rt, &server, config);
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                let service = service.clone();
                let conn_rt = rt.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve_connection(conn_rt, service, TokioIo::new(stream)).await {
                        tracing::debug!(target: "mcp", %addr, error = %e, "HTTP connection ended with an error");
                    }
                });
            }
            Err(e) => match crate::accept_error(&e) {
                crate::AcceptError::Skip => {}
                crate::AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                crate::AcceptError::Fatal => return Err(e),
            },
        }
    }
}

/// A [`Server`]'s Streamable HTTP endpoint as a [`tower_service::Service`], for axum and other
/// tower stacks. It accepts any request body (`axum::body::Body`, hyper's `Incoming`, …) and
/// answers with a [`ReplyBody`]; it never fails (errors are HTTP statuses). Cheap to clone:
/// every clone talks to one engine, which stops once the last clone is dropped.
///
/// The endpoint checks the request path itself (`EndpointConfig::path`, default `/mcp`;
/// others get 404), so mount it where the URI the service sees carries that path: with axum's
/// `route_service("/mcp", …)`, the path is kept as is. (`nest_service` strips its prefix: set
/// the config's path to what remains.)
///
/// ```
/// use axum::Router;
/// use axum::routing::get;
/// use mcp_tokio::Server;
/// use mcp_tokio::http::McpService;
/// use mcp_tokio::proto::http::EndpointConfig;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder("my-server", "1.0").build();
/// let config = EndpointConfig::new(server.config().clone());
/// let app: Router = Router::new()
///     .route("/health", get(|| async { "ok" }))
///     .route_service("/mcp", McpService::new(&server, config));
/// // axum::serve(tokio::net::TcpListener::bind("127.0.0.1:8080").await?, app).await?;
/// # drop(app);
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct McpService {
    inner: HyperService,
}

impl McpService {
    /// Spawns `server`'s HTTP engine for `config` on the current tokio runtime and returns the
    /// service in front of it.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (as [`TokioRuntime::current`]).
    pub fn new(server: &Server, config: EndpointConfig) -> Self {
        Self::with_runtime(&TokioRuntime::current(), server, config)
    }

    /// Like [`new`](Self::new), with the engine on `rt`.
    pub fn with_runtime(rt: &TokioRuntime, server: &Server, config: EndpointConfig) -> Self {
        McpService {
            inner: HyperService::spawn(rt, server, config),
        }
    }

    /// The hyper service behind this one (for hyper servers without tower).
    pub fn hyper_service(&self) -> &HyperService {
        &self.inner
    }
}

impl<B> tower_service::Service<http::Request<B>> for McpService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<ReplyBody>;
    type Error = Infallible;
    type Future = ReplyFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The engine queues without bound; a stopped engine is answered with 503 per request.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> ReplyFuture {
        hyper::service::Service::call(&self.inner, req)
    }
}
