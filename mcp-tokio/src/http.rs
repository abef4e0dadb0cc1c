//! Streamable HTTP on hyper: an accept loop whose connections hand `/mcp` requests to the
//! server's [`HttpEngine`](mcp_service::http_engine::HttpEngine).

use std::convert::Infallible;
use std::io;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcp_proto::http::EndpointConfig;
use mcp_service::Server;
use mcp_service::http_engine::{HttpBody, HttpHandle};
use tokio::net::TcpListener;

use crate::TokioRuntime;

type Reply = Response<UnsyncBoxBody<Bytes, Infallible>>;

/// Serves `server` over Streamable HTTP on `listener` (HTTP/1.1), forever, at the path of
/// `config` (default `/mcp`; other paths get 404). The engine owning the sessions runs on its own task.
///
/// Errors of a single connection attempt are skipped; running out of file descriptors pauses
/// accepting for 100 ms. Any other accept error is returned.
pub async fn serve_http(
    server: Server,
    listener: TcpListener,
    config: EndpointConfig,
) -> io::Result<()> {
    let engine = server.http_service(TokioRuntime::current(), config);
    let handle = engine.handle();
    tokio::spawn(engine);
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                let handle = handle.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| {
                        let handle = handle.clone();
                        async move { Ok::<_, Infallible>(serve_one(&handle, req).await) }
                    });
                    if let Err(e) = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), svc)
                        .await
                    {
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

fn plain(status: StatusCode) -> Reply {
    let mut r = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *r.status_mut() = status;
    r
}

async fn serve_one(handle: &HttpHandle, req: Request<Incoming>) -> Reply {
    let (parts, body) = req.into_parts();
    // Read at most the limit plus one byte: the endpoint answers 413 past the limit.
    let cap = handle.max_body_size().saturating_add(1);
    let bytes = match Limited::new(body, cap).collect().await {
        Ok(c) => c.to_bytes().to_vec(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                vec![0u8; cap]
            } else {
                return plain(StatusCode::BAD_REQUEST);
            }
        }
    };
    let resp = match handle.request(parts, bytes).await {
        Ok(r) => r,
        Err(_) => return plain(StatusCode::SERVICE_UNAVAILABLE),
    };
    let (head, body) = resp.into_parts();
    let body = match body {
        HttpBody::Empty => Full::new(Bytes::new()).boxed_unsync(),
        HttpBody::Full(b) => Full::new(Bytes::from(b)).boxed_unsync(),
        HttpBody::Stream(s) => {
            StreamBody::new(s.map(|chunk| Ok::<_, Infallible>(Frame::data(Bytes::from(chunk)))))
                .boxed_unsync()
        }
    };
    Response::from_parts(head, body)
}
