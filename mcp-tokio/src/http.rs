//! Streamable HTTP on tokio as a tower service: [`McpService`], the endpoint
//! [`serve_http`](crate::serve_http) serves, to mount in axum or any other tower stack.
//!
//! It is thin: the request/reply conversion is [`mcp_service::hyper_server`]'s.

use std::convert::Infallible;
use std::task::{Context, Poll};

use mcp_proto::http::EndpointConfig;
use mcp_service::Server;
use mcp_service::hyper_server::{BoxError, HyperService, ReplyFuture};

pub use mcp_service::hyper_server::ReplyBody;

use crate::TokioRuntime;

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
/// Request bodies are read within the default [`BodyLimits`](mcp_service::hyper_server::BodyLimits)
/// (30 s, and at least 8 KiB/s after 5 s; else `408` with `Connection: close`). The other time
/// limits and connection caps of [`serve_http_with`](crate::serve_http_with) belong to the
/// server the service is mounted in (axum's, hyper's): configure them there.
///
/// ```
/// use axum::Router;
/// use axum::routing::get;
/// use mcp_tokio::http::McpService;
/// use mcp_tokio::{Server, TokioRuntime};
/// use mcp_tokio::proto::http::EndpointConfig;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder("my-server", "1.0").build();
/// let config = EndpointConfig::new(server.config().clone());
/// let app: Router = Router::new()
///     .route("/health", get(|| async { "ok" }))
///     .route_service("/mcp", McpService::new(TokioRuntime::current(), &server, config));
/// // axum::serve(tokio::net::TcpListener::bind("127.0.0.1:8080").await?, app).await?;
/// # drop(app);
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct McpService {
    inner: HyperService,
}

impl McpService {
    /// Spawns `server`'s HTTP engines for `config` on `rt` (one per core, each owning its
    /// share of the sessions: [`HyperService::spawn`]) and returns the service in front of
    /// them.
    pub fn new(rt: TokioRuntime, server: &Server, config: EndpointConfig) -> Self {
        McpService {
            inner: HyperService::spawn(&rt, server, config),
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
