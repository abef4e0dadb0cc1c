//! Streamable HTTP on hyper, runtime-neutral: the glue between an HTTP server (hyper, or any
//! tower stack on top of it) and an [`HttpEngine`].
//!
//! - [`respond`] turns one `http::Request` (any [`http_body::Body`]) into the engine's reply:
//!   it reads the body up to the endpoint's limit (one byte more makes the endpoint answer
//!   413), submits it through an [`HttpHandle`] and returns a [`ReplyBody`] that streams SSE
//!   chunks as the engine produces them;
//! - [`HyperService`] is that function as a cloneable hyper [`Service`](hyper::service::Service);
//! - [`serve_connection`] serves one HTTP/1.1 connection (any IO implementing hyper's
//!   `rt::Read + rt::Write`: [`FuturesIo`](crate::hyper_io::FuturesIo), hyper-util's `TokioIo`,
//!   a TLS stream) with hyper's timers on a [`Runtime`].
//!
//! The [`Endpoint`](mcp_proto::http::Endpoint) routes by path itself (`EndpointConfig::path`,
//! other paths get 404), so every request is passed through. This module owns no sockets and
//! no accept loop: those are the drivers'.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use futures_core::Stream;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::server::conn::http1;

use crate::http_engine::{HttpBody, HttpEngine, HttpHandle, SseStream};
use crate::hyper_io::RuntimeTimer;
use crate::runtime::Runtime;
use crate::server::Server;

/// The address of the peer of the connection a request arrived on: the accept loop inserts
/// it into the extensions of each request of the connection, and [`respond`] hands its IP to
/// the endpoint as [`PeerAddr`](mcp_proto::http::PeerAddr) (what the per-peer session share,
/// [`EndpointConfig::max_sessions_per_peer`](mcp_proto::http::EndpointConfig::max_sessions_per_peer),
/// counts by).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RemoteAddr(pub std::net::SocketAddr);

/// The error type request bodies may fail with.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The body of a reply from the MCP endpoint: empty, complete bytes, or a stream of SSE chunks
/// (or a JSON body that waits for responses). Dropping a streaming body before its end tells
/// the engine the client went away.
pub struct ReplyBody {
    kind: Kind,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    Stream(SseStream),
}

impl ReplyBody {
    /// An empty body.
    pub fn empty() -> Self {
        ReplyBody { kind: Kind::Empty }
    }
}

impl From<HttpBody> for ReplyBody {
    fn from(body: HttpBody) -> Self {
        let kind = match body {
            HttpBody::Empty => Kind::Empty,
            HttpBody::Full(b) if b.is_empty() => Kind::Empty,
            HttpBody::Full(b) => Kind::Full(Some(Bytes::from(b))),
            HttpBody::Stream(s) => Kind::Stream(s),
        };
        ReplyBody { kind }
    }
}

impl fmt::Debug for ReplyBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Empty => f.write_str("ReplyBody::Empty"),
            Kind::Full(b) => write!(
                f,
                "ReplyBody::Full({} bytes)",
                b.as_ref().map_or(0, Bytes::len)
            ),
            Kind::Stream(s) => f.debug_tuple("ReplyBody::Stream").field(s).finish(),
        }
    }
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(s) => match Pin::new(s).poll_next(cx) {
                Poll::Ready(Some(chunk)) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk))))),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Empty | Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

fn plain(status: StatusCode) -> Response<ReplyBody> {
    let mut r = Response::new(ReplyBody::empty());
    *r.status_mut() = status;
    r
}

/// Reads `body` until its end or until it holds more than `max` bytes, whichever comes first:
/// an oversize body is returned cut at `max + 1` bytes (enough for the endpoint's 413).
async fn read_bounded<B>(body: B, max: usize) -> Result<Vec<u8>, BoxError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let cap = max.saturating_add(1);
    let hint = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(hint.min(cap).min(64 * 1024));
    let mut body = std::pin::pin!(body);
    while out.len() < cap {
        let Some(frame) = body.frame().await else {
            break;
        };
        let frame = frame.map_err(Into::into)?;
        if let Ok(mut data) = frame.into_data() {
            while data.has_remaining() && out.len() < cap {
                let chunk = data.chunk();
                let take = chunk.len().min(cap - out.len());
                out.extend_from_slice(&chunk[..take]);
                data.advance(take);
            }
        }
    }
    Ok(out)
}

/// Answers one request to the MCP endpoint through `handle`: reads the body (at most the
/// endpoint's limit plus one byte), hands it to the engine and returns its reply.
///
/// A body that fails to arrive is answered 400; a stopped engine 503. A [`RemoteAddr`] in
/// the request's extensions names the client to the endpoint.
pub async fn respond<B>(handle: &HttpHandle, req: Request<B>) -> Response<ReplyBody>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    if let Some(RemoteAddr(addr)) = parts.extensions.get::<RemoteAddr>().copied() {
        parts
            .extensions
            .insert(mcp_proto::http::PeerAddr(addr.ip()));
    }
    let bytes = match read_bounded(body, handle.max_body_size()).await {
        Ok(b) => b,
        Err(e) => {
            tracing::debug!(target: "mcp", error = %e, "HTTP request body failed");
            return plain(StatusCode::BAD_REQUEST);
        }
    };
    match handle.request(parts, bytes).await {
        Ok(resp) => resp.map(ReplyBody::from),
        Err(e) => {
            tracing::debug!(target: "mcp", error = %e, "HTTP request not served");
            plain(StatusCode::SERVICE_UNAVAILABLE)
        }
    }
}

/// The MCP endpoint as a hyper [`Service`](hyper::service::Service): every request goes to
/// [`respond`]. Cheap to clone; the engine stops once every clone (and every other
/// [`HttpHandle`]) is dropped.
#[derive(Clone, Debug)]
pub struct HyperService {
    handle: HttpHandle,
}

impl HyperService {
    /// A service submitting requests through `handle`.
    pub fn new(handle: HttpHandle) -> Self {
        HyperService { handle }
    }

    /// Spawns `server`'s HTTP engine for `config` on `rt` and returns the service in front of it.
    pub fn spawn<R: Runtime>(
        rt: &R,
        server: &Server,
        config: mcp_proto::http::EndpointConfig,
    ) -> Self {
        let engine: HttpEngine<R> = server.http_service(rt.clone(), config);
        let handle = engine.handle();
        rt.spawn(Box::pin(engine));
        HyperService { handle }
    }

    /// The handle requests are submitted through.
    pub fn handle(&self) -> &HttpHandle {
        &self.handle
    }
}

/// The future of [`HyperService`]'s `call`.
pub type ReplyFuture =
    Pin<Box<dyn Future<Output = Result<Response<ReplyBody>, Infallible>> + Send>>;

impl<B> hyper::service::Service<Request<B>> for HyperService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ReplyBody>;
    type Error = Infallible;
    type Future = ReplyFuture;

    fn call(&self, req: Request<B>) -> ReplyFuture {
        let handle = self.handle.clone();
        Box::pin(async move { Ok(respond(&handle, req).await) })
    }
}

/// Serves one HTTP/1.1 connection on `io` with `service`, hyper's timers (the 30 s header read
/// timeout) running on `rt`, until the peer closes it. Errors are the connection's (a peer
/// that vanished mid-request, malformed HTTP); they concern only this connection.
pub async fn serve_connection<R, I>(rt: R, service: HyperService, io: I) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    http1::Builder::new()
        .timer(RuntimeTimer::new(rt))
        .serve_connection(io, service)
        .await
}

#[cfg(test)]
mod tests {
    use std::io;

    use futures_util::stream;
    use http_body_util::{BodyExt, StreamBody};
    use mcp_proto::Instant;
    use mcp_proto::http::{EndpointConfig, ResponseMode};

    use super::*;
    use crate::runtime::{BoxFuture, Clock};

    #[derive(Clone)]
    struct Tokio {
        clock: Clock,
    }

    impl Runtime for Tokio {
        fn now(&self) -> Instant {
            self.clock.now()
        }
        fn sleep_until(&self, deadline: Instant) -> BoxFuture<()> {
            let at = tokio::time::Instant::from_std(self.clock.to_std(deadline));
            Box::pin(tokio::time::sleep_until(at))
        }
        fn spawn(&self, fut: BoxFuture<()>) {
            tokio::spawn(fut);
        }
    }

    type Chunks = StreamBody<stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, io::Error>>>>;

    /// A body delivered in the given pieces; `Err` pieces fail the body there.
    fn chunked(pieces: Vec<Result<&'static [u8], io::ErrorKind>>) -> Chunks {
        let frames: Vec<_> = pieces
            .into_iter()
            .map(|p| match p {
                Ok(b) => Ok(Frame::data(Bytes::from_static(b))),
                Err(kind) => Err(io::Error::from(kind)),
            })
            .collect();
        StreamBody::new(stream::iter(frames))
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        futures_executor::block_on(f)
    }

    #[test]
    fn bounded_read_keeps_a_body_within_the_limit_whole() {
        let body = chunked(vec![Ok(b"{\"a\":"), Ok(b""), Ok(b"1}")]);
        assert_eq!(block_on(read_bounded(body, 7)).unwrap(), b"{\"a\":1}");
    }

    #[test]
    fn bounded_read_stops_one_byte_past_the_limit() {
        let body = chunked(vec![Ok(b"abc"), Ok(b"defgh"), Err(io::ErrorKind::Other)]);
        // The failure after the limit is never reached.
        assert_eq!(block_on(read_bounded(body, 4)).unwrap(), b"abcde");
        let body = chunked(vec![Ok(b"abcdefgh")]);
        assert_eq!(block_on(read_bounded(body, 0)).unwrap(), b"a");
    }

    #[test]
    fn bounded_read_reports_a_failing_body() {
        let body = chunked(vec![Ok(b"ab"), Err(io::ErrorKind::ConnectionReset)]);
        let err = block_on(read_bounded(body, 100)).unwrap_err();
        let io = err
            .downcast_ref::<io::Error>()
            .expect("the body's own error");
        assert_eq!(io.kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn reply_body_shapes() {
        let empty = ReplyBody::from(HttpBody::Empty);
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        let also_empty = ReplyBody::from(HttpBody::Full(Vec::new()));
        assert!(also_empty.is_end_stream());
        let full = ReplyBody::from(HttpBody::Full(b"{}".to_vec()));
        assert!(!full.is_end_stream());
        assert_eq!(full.size_hint().exact(), Some(2));
        let bytes = block_on(full.collect()).unwrap().to_bytes();
        assert_eq!(&bytes[..], b"{}");
    }

    fn post(
        body: impl Body<Data = Bytes, Error = io::Error>,
    ) -> Request<impl Body<Data = Bytes, Error = io::Error>> {
        Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .unwrap()
    }

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn respond_passes_a_chunked_body_to_the_engine() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).response_mode(ResponseMode::Json);
        let service = HyperService::spawn(&rt, &server, config);
        let (a, b) = INIT.split_at(INIT.len() / 2);
        let req = post(chunked(vec![Ok(a), Ok(b)]));
        let resp = respond(service.handle(), req).await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(resp.headers().contains_key("mcp-session-id"));
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
    }

    #[tokio::test]
    async fn respond_refuses_oversize_and_failed_bodies() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone()).max_body_size(16);
        let service = HyperService::spawn(&rt, &server, config);
        let resp = respond(service.handle(), post(chunked(vec![Ok(INIT)]))).await;
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let req = post(chunked(vec![Ok(b"{"), Err(io::ErrorKind::UnexpectedEof)]));
        let resp = respond(service.handle(), req).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    }

    /// The connection's [`RemoteAddr`] reaches the endpoint: one address at its share of
    /// sessions evicts its own idle one (whose id then gets 404), another address is not
    /// counted with it.
    #[tokio::test]
    async fn respond_names_the_remote_address_to_the_endpoint() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone())
            .response_mode(ResponseMode::Json)
            .max_sessions_per_peer(Some(1));
        let service = HyperService::spawn(&rt, &server, config);
        let mut sids = Vec::new();
        for (ip, port) in [
            ([10, 0, 0, 1], 1000),
            ([10, 0, 0, 2], 1000),
            ([10, 0, 0, 1], 1001),
        ] {
            let mut req = post(chunked(vec![Ok(INIT)]));
            req.extensions_mut()
                .insert(RemoteAddr(std::net::SocketAddr::from((ip, port))));
            let resp = respond(service.handle(), req).await;
            assert_eq!(resp.status(), StatusCode::OK);
            sids.push(resp.headers()["mcp-session-id"].clone());
        }
        const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        for (sid, status) in sids.iter().zip([404, 202, 202]) {
            let mut req = post(chunked(vec![Ok(INITIALIZED)]));
            req.headers_mut().insert("mcp-session-id", sid.clone());
            let resp = respond(service.handle(), req).await;
            assert_eq!(resp.status().as_u16(), status, "{sid:?}");
        }
    }

    /// A legacy SSE POST that reaches the engine together with (just after) the drop of its
    /// session's stream is refused with 404, not accepted with 202 into a stream nobody
    /// reads: the engine learns of dropped streams before it takes the next request.
    #[tokio::test(flavor = "current_thread")]
    async fn a_legacy_post_after_its_stream_dropped_is_refused() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let config = EndpointConfig::new(server.config().clone())
            .legacy_sse(Some(mcp_proto::http::LegacySse::default()));
        let service = HyperService::spawn(&rt, &server, config);
        let get = Request::get("/sse")
            .header("host", "127.0.0.1")
            .header("accept", "text/event-stream")
            .body(http_body_util::Empty::<Bytes>::new().map_err(|never| match never {}))
            .unwrap();
        let mut sse = respond(service.handle(), get).await.into_body();
        async fn next(body: &mut ReplyBody) -> String {
            let frame = body.frame().await.unwrap().unwrap();
            String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
        }
        let endpoint = next(&mut sse).await;
        let url = endpoint
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap()
            .to_owned();
        let to = |body: &'static [u8]| {
            Request::post(url.as_str())
                .header("host", "127.0.0.1")
                .header("content-type", "application/json")
                .body(chunked(vec![Ok(body)]))
                .unwrap()
        };
        let resp = respond(service.handle(), to(INIT)).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert!(next(&mut sse).await.contains("protocolVersion"));
        // The client goes away, and its next POST is on its way at the same moment.
        drop(sse);
        let resp = respond(
            service.handle(),
            to(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
        )
        .await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn respond_without_an_engine_is_unavailable() {
        let rt = Tokio {
            clock: Clock::new(),
        };
        let server = Server::builder("s", "1").build();
        let engine = server.http_service(rt, EndpointConfig::new(server.config().clone()));
        let service = HyperService::new(engine.handle());
        drop(engine);
        let resp = respond(service.handle(), post(chunked(vec![Ok(INIT)]))).await;
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
