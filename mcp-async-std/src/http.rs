//! Streamable HTTP on async-std or smol: [`serve_http`], an accept loop whose connections hand
//! requests to the server's [`HttpEngine`](mcp_service::http_engine::HttpEngine).
//!
//! The request/reply conversion and the hyper connection are
//! [`mcp_service::hyper_server`]'s; sockets reach hyper through
//! [`FuturesIo`](mcp_service::hyper_io::FuturesIo).

use std::io;
use std::net::TcpListener;

use async_io::Async;
use mcp_proto::http::EndpointConfig;
use mcp_service::hyper_io::FuturesIo;
use mcp_service::hyper_server::{HyperService, serve_connection};
use mcp_service::{Runtime, Server};

/// Serves `server` over Streamable HTTP on `listener` (HTTP/1.1), forever, at the path of
/// `config` (default `/mcp`; other paths get 404). The engine owning the sessions and every
/// connection run as tasks on `rt` ([`AsyncStdRuntime`](crate::AsyncStdRuntime) or
/// [`SmolRuntime`](crate::SmolRuntime)).
///
/// Takes a `std` listener (bind it with `std::net::TcpListener::bind`), which works under
/// either runtime. Errors of a single connection attempt are skipped; running out of file
/// descriptors or memory pauses accepting for 100 ms. Any other accept error is returned.
pub async fn serve_http<R: Runtime>(
    rt: R,
    server: Server,
    listener: TcpListener,
    config: EndpointConfig,
) -> io::Result<()> {
    let listener = Async::new(listener)?;
    let service = HyperService::spawn(&rt, &server, config);
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.get_ref().set_nodelay(true);
                let service = service.clone();
                let conn_rt = rt.clone();
                rt.spawn(Box::pin(async move {
                    if let Err(e) = serve_connection(conn_rt, service, FuturesIo::new(stream)).await
                    {
                        tracing::debug!(target: "mcp", %addr, error = %e, "HTTP connection ended with an error");
                    }
                }));
            }
            Err(e) => match crate::accept_error(&e) {
                crate::AcceptError::Skip => {}
                crate::AcceptError::Pause => {
                    tracing::warn!(target: "mcp", error = %e, "accept failed; pausing");
                    async_io::Timer::after(std::time::Duration::from_millis(100)).await;
                }
                crate::AcceptError::Fatal => return Err(e),
            },
        }
    }
}
