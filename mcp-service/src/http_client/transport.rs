//! The HTTP transport behind the byte stream: the dispatcher of the engine's messages (one
//! POST each; the handshake in order, everything else concurrently), reply reading (JSON,
//! SSE), the standalone GET stream, SSE resumption, session re-initialisation, the legacy SSE
//! stream, the probe, DELETE on close, and the connection pool.
//!
//! What arrives goes to the engine through an unbounded channel: the engine reads it as fast
//! as it parses, and each message is bounded by `HttpClientOptions::max_message_size`.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
#[cfg(feature = "oauth")]
use std::time::SystemTime;

use bytes::Bytes;
use futures_channel::mpsc::{self, UnboundedReceiver, UnboundedSender};
use futures_channel::oneshot;
use futures_util::FutureExt;
use futures_util::future::{Either, select};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use mcp_proto::codec::sse::SseDecoder;
use mcp_proto::{Duration, Error, ErrorKind};
use serde_json::Value;

#[cfg(feature = "oauth")]
use super::auth::unauthorized;
use super::message::{
    Kind, cancelled_id, classify, error_line, ndjson_line, negotiated_version, response_id,
};
use super::pipe::{Inbound, InboundReader, OutboundWriter, Outgoing};
use super::target::{HostPort, Target, legacy_endpoint};
use super::{Connector, HttpClientOptions, HttpTransport, TransportFinished, status_kind};
use crate::cancel::CancellationToken;
use crate::connection::ByteStream;
use crate::memory::ReadChunk;
#[cfg(feature = "oauth")]
use crate::oauth::{Challenge, Step};
use crate::runtime::Runtime;

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
/// How much of an error body is quoted in an error message.
const ERROR_BODY_QUOTE: usize = 512;
/// How long requests wait for the standalone stream to open after the handshake.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(5);
/// Bound of the DELETE sent when the client closes.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// Authorizations one MCP request may run (e.g. a first authorization, then a step-up); the
/// flow itself refuses a step-up that would ask for nothing new.
#[cfg(feature = "oauth")]
const MAX_AUTHORIZATIONS: u32 = 2;
/// Bound of each exchange with an authorization server when no response timeout is set.
#[cfg(feature = "oauth")]
const AUTH_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest reply of an authorization server (metadata, registration, tokens).
#[cfg(feature = "oauth")]
const MAX_AUTH_REPLY: usize = 1024 * 1024;

type Body = Full<Bytes>;

fn is_event_stream(resp: &Response<Incoming>) -> bool {
    content_type(resp).is_some_and(|c| c.starts_with(EVENT_STREAM))
}

fn content_type(resp: &Response<Incoming>) -> Option<String> {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_ascii_lowercase())
}

fn transport_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TransportError, message.into())
}

/// The error of an unexpected HTTP status, quoting the start of the body.
async fn status_error(what: &str, resp: Response<Incoming>) -> Error {
    let status = resp.status();
    let body = match Limited::new(resp.into_body(), 64 * 1024).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let text = String::from_utf8_lossy(&body);
    let text = text.trim();
    let quoted: String = text.chars().take(ERROR_BODY_QUOTE).collect();
    let message = if quoted.is_empty() {
        format!("{what}: HTTP {status}")
    } else {
        format!("{what}: HTTP {status}: {quoted}")
    };
    Error::new(status_kind(status), message)
}

/// Transport state shared by the dispatcher and the tasks it spawns.
#[derive(Default)]
struct State {
    /// Where messages are POSTed once known (the legacy endpoint or the Streamable URL).
    post: Option<Target>,
    legacy: bool,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    init: Option<Bytes>,
    init_id: Option<Value>,
    initialized: Option<Bytes>,
    /// Bumped by each (re-)initialisation: older standalone streams stop.
    generation: u64,
    /// Cancellation of in-flight tasks, by task number (the request id, if any).
    tasks: HashMap<u64, (Option<Value>, CancellationToken)>,
}

struct Shared<R, C> {
    rt: R,
    connector: C,
    url: Target,
    kind: HttpTransport,
    options: HttpClientOptions,
    headers: HeaderMap,
    state: Mutex<State>,
    pool: Mutex<Vec<(HostPort, SendRequest<Body>)>>,
    inbound: UnboundedSender<Inbound>,
    shutdown: CancellationToken,
    reinit: futures_util::lock::Mutex<()>,
    /// One authorization flow at a time.
    #[cfg(feature = "oauth")]
    auth: futures_util::lock::Mutex<()>,
    next_task: AtomicU64,
}

/// A connection taken from the pool for one exchange; given back once the body was read.
struct Lease {
    key: HostPort,
    sender: SendRequest<Body>,
}

/// How reading one reply ended.
enum Outcome {
    /// Read to its end; the response to the expected request (if one was seen).
    Done(Option<Vec<u8>>),
    /// An SSE stream ended or broke before the expected response.
    Broken {
        last_id: Option<String>,
        retry: Option<u64>,
        progressed: bool,
    },
    /// The request was cancelled or the transport shut down.
    Cancelled,
}

pub(super) fn open<R: Runtime, C: Connector>(
    rt: R,
    connector: C,
    url: &str,
    kind: HttpTransport,
    options: HttpClientOptions,
) -> Result<(ByteStream, TransportFinished), Error> {
    let target = Target::parse(url)?;
    let mut headers = options.headers.clone();
    if let Some(token) = &options.bearer {
        let v = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
            Error::invalid_params("the bearer token is not a valid HTTP header value")
        })?;
        headers.insert(AUTHORIZATION, v);
    }
    let (in_tx, in_rx) = mpsc::unbounded();
    let (out_tx, out_rx) = mpsc::unbounded();
    let shared = Arc::new(Shared {
        rt: rt.clone(),
        connector,
        url: target,
        kind,
        options,
        headers,
        state: Mutex::new(State::default()),
        pool: Mutex::new(Vec::new()),
        inbound: in_tx,
        shutdown: CancellationToken::new(),
        reinit: futures_util::lock::Mutex::new(()),
        #[cfg(feature = "oauth")]
        auth: futures_util::lock::Mutex::new(()),
        next_task: AtomicU64::new(1),
    });
    let (finished_tx, finished_rx) = oneshot::channel();
    rt.spawn(Box::pin(async move {
        dispatch(shared, out_rx).await;
        let _ = finished_tx.send(());
    }));
    let stream = ByteStream::new(
        InboundReader {
            rx: in_rx,
            current: ReadChunk::default(),
        },
        OutboundWriter {
            buf: Vec::new(),
            tx: out_tx,
            closing: None,
        },
    );
    Ok((stream, TransportFinished(finished_rx)))
}

// ------------------------------------------------------------------- the dispatcher

async fn dispatch<R: Runtime, C: Connector>(
    shared: Arc<Shared<R, C>>,
    mut rx: UnboundedReceiver<Outgoing>,
) {
    use futures_util::StreamExt;
    let mut done: Option<oneshot::Sender<()>> = None;
    while let Some(out) = rx.next().await {
        let line = match out {
            Outgoing::Message(line) => line,
            Outgoing::Close(tx) => {
                done = Some(tx);
                break;
            }
        };
        if shared.shutdown.is_cancelled() {
            continue;
        }
        match classify(&line) {
            Kind::Request { id, method } if method == "initialize" => {
                {
                    let mut st = shared.lock();
                    st.init = Some(line.clone());
                    st.init_id = Some(id.clone());
                }
                if let Err(e) = shared.initialize(line, &id).await {
                    shared.deliver_raw(error_line(&id, &e));
                    shared.stop();
                }
            }
            Kind::Notification { method } if method == "notifications/initialized" => {
                shared.lock().initialized = Some(line.clone());
                // Sent before anything else goes out: the server must see it first.
                shared.clone().post_message(line, None).await;
                // Requests go out once the standalone stream is attached (or refused), so that
                // what the server sends on it about them is not dropped for want of a stream.
                shared.clone().start_standalone().await;
            }
            Kind::Notification { method } => {
                if method == "notifications/cancelled"
                    && let Some(id) = cancelled_id(&line)
                {
                    shared.cancel_request(&id);
                }
                let s = shared.clone();
                shared.rt.spawn(Box::pin(s.post_message(line, None)));
            }
            Kind::Request { id, .. } => {
                let s = shared.clone();
                shared.rt.spawn(Box::pin(s.post_message(line, Some(id))));
            }
            Kind::Other => {
                let s = shared.clone();
                shared.rt.spawn(Box::pin(s.post_message(line, None)));
            }
        }
    }
    shared.close().await;
    if let Some(tx) = done {
        let _ = tx.send(());
    }
}

impl<R: Runtime, C: Connector> Shared<R, C> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends every task; the engine's read half reaches EOF once they are gone.
    fn stop(&self) {
        self.shutdown.cancel();
        let tasks: Vec<CancellationToken> =
            self.lock().tasks.drain().map(|(_, (_, t))| t).collect();
        for t in tasks {
            t.cancel();
        }
        self.inbound.close_channel();
    }

    /// Fails the engine's stream with `error` (pending requests learn it), then stops.
    fn fail(&self, error: &Error) {
        let _ = self
            .inbound
            .unbounded_send(Err(io::Error::other(error.message().to_owned())));
        self.stop();
    }

    async fn close(&self) {
        self.shutdown.cancel();
        let (sid, legacy, version) = {
            let st = self.lock();
            (
                st.session_id.clone(),
                st.legacy,
                st.protocol_version.clone(),
            )
        };
        let tasks: Vec<CancellationToken> =
            self.lock().tasks.drain().map(|(_, (_, t))| t).collect();
        for t in tasks {
            t.cancel();
        }
        if let (Some(sid), false) = (sid, legacy) {
            let mut headers = HeaderMap::new();
            headers.insert(MCP_SESSION_ID, sid);
            if let Some(v) = version {
                headers.insert(MCP_PROTOCOL_VERSION, v);
            }
            let deleted = self.timed(Some(DELETE_TIMEOUT), "DELETE", async {
                let (resp, lease) = self
                    .send_authorized(&self.url, Method::DELETE, Bytes::new(), headers)
                    .await?;
                let status = resp.status();
                let _ = resp.into_body().collect().await;
                self.release(lease);
                Ok(status)
            });
            match deleted.await {
                Ok(s) if s.is_success() || s == StatusCode::METHOD_NOT_ALLOWED => {}
                Ok(s) => {
                    tracing::debug!(target: "mcp", status = %s, "DELETE of the session refused")
                }
                Err(e) => {
                    tracing::debug!(target: "mcp", error = %e, "DELETE of the session failed")
                }
            }
        }
        self.inbound.close_channel();
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn deliver_raw(&self, line: Vec<u8>) {
        let _ = self.inbound.unbounded_send(Ok(line));
    }

    /// Hands one received message to the engine; returns its id if it is a response.
    fn deliver(&self, data: &[u8]) -> Result<Option<Value>, String> {
        let line = ndjson_line(data)?;
        let id = response_id(data);
        self.deliver_raw(line);
        Ok(id)
    }

    fn register(&self, id: Option<Value>) -> (u64, CancellationToken) {
        let n = self.next_task.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        if self.shutdown.is_cancelled() {
            token.cancel();
        }
        self.lock().tasks.insert(n, (id, token.clone()));
        (n, token)
    }

    fn unregister(&self, n: u64) {
        self.lock().tasks.remove(&n);
    }

    fn cancel_request(&self, id: &Value) {
        let st = self.lock();
        for (rid, token) in st.tasks.values() {
            if rid.as_ref() == Some(id) {
                token.cancel();
            }
        }
    }

    // --------------------------------------------------------------- HTTP plumbing

    async fn timed<T>(
        &self,
        limit: Option<Duration>,
        what: &str,
        fut: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let Some(limit) = limit else {
            return fut.await;
        };
        let sleep = self.rt.sleep_until(self.rt.now() + limit);
        match select(Box::pin(fut), sleep).await {
            Either::Left((r, _)) => r,
            Either::Right(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!("{what}: no answer within {} ms", limit.as_millis()),
            )),
        }
    }

    async fn sleep(&self, d: Duration, token: &CancellationToken) -> bool {
        let sleep = self.rt.sleep_until(self.rt.now() + d);
        matches!(select(sleep, token.cancelled()).await, Either::Left(_))
    }

    async fn connect(&self, target: &Target) -> Result<SendRequest<Body>, Error> {
        let what = format!("connecting to {}", target.url);
        self.timed(self.options.connect_timeout, &what, async {
            let io = self
                .connector
                .connect(&target.host, target.port)
                .await
                .map_err(|e| transport_error(format!("{what}: {e}")))?;
            let (sender, conn) = http1::handshake::<_, Body>(io)
                .await
                .map_err(|e| transport_error(format!("{what}: {e}")))?;
            self.rt.spawn(Box::pin(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(target: "mcp", error = %e, "HTTP client connection ended with an error");
                }
            }));
            Ok(sender)
        })
        .await
    }

    fn pooled(&self, key: &HostPort) -> Option<SendRequest<Body>> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(pos) = pool.iter().rposition(|(k, _)| k == key) {
            let (_, mut sender) = pool.swap_remove(pos);
            if let Some(Ok(())) = sender.ready().now_or_never() {
                return Some(sender);
            }
        }
        None
    }

    fn release(&self, lease: Lease) {
        if lease.sender.is_closed() || self.shutdown.is_cancelled() {
            return;
        }
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < self.options.max_idle_connections {
            pool.push((lease.key, lease.sender));
        }
    }

    fn request(
        &self,
        target: &Target,
        method: Method,
        body: Bytes,
        mut headers: HeaderMap,
    ) -> Result<Request<Body>, Error> {
        let host = HeaderValue::try_from(target.authority.as_str())
            .map_err(|_| Error::invalid_params(format!("{}: invalid host", target.url)))?;
        headers.insert(HOST, host);
        match method {
            Method::POST => {
                headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            Method::GET => {
                headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
            }
            _ => {}
        }
        if !headers.contains_key(AUTHORIZATION)
            && let Some(bearer) = self.oauth_bearer()
        {
            headers.insert(AUTHORIZATION, bearer);
        }
        // The transport's own headers win; every value of the others is sent.
        let own: Vec<HeaderName> = headers.keys().cloned().collect();
        for (name, value) in &self.headers {
            if !own.contains(name) {
                headers.append(name, value.clone());
            }
        }
        let mut req = Request::builder()
            .method(method)
            .uri(target.path.as_str())
            .body(Full::new(body))
            .map_err(|e| Error::invalid_params(format!("{}: {e}", target.url)))?;
        *req.headers_mut() = headers;
        Ok(req)
    }

    /// Sends one request on a pooled or new connection; the response head is bounded by the
    /// response timeout.
    async fn send(
        &self,
        target: &Target,
        method: Method,
        body: Bytes,
        headers: HeaderMap,
    ) -> Result<(Response<Incoming>, Lease), Error> {
        let what = format!("{method} {}", target.url);
        let req = self.request(target, method, body, headers)?;
        self.send_request(target, req, &what, self.options.response_timeout)
            .await
    }

    /// Sends a built request on a pooled or new connection to `target`.
    async fn send_request(
        &self,
        target: &Target,
        mut req: Request<Body>,
        what: &str,
        timeout: Option<Duration>,
    ) -> Result<(Response<Incoming>, Lease), Error> {
        let key = target.key();
        // A pooled connection the server closed meanwhile hands the request back unsent:
        // retry it on a fresh connection.
        let mut fresh = false;
        loop {
            let mut sender = match self.pooled(&key) {
                Some(s) => s,
                None => {
                    fresh = true;
                    self.connect(target).await?
                }
            };
            let sent = self
                .timed(timeout, what, async {
                    Ok(sender.try_send_request(req).await)
                })
                .await?;
            match sent {
                Ok(resp) => return Ok((resp, Lease { key, sender })),
                Err(mut e) => match e.take_message() {
                    Some(r) if !fresh => req = r,
                    _ => {
                        return Err(transport_error(format!("{what}: {}", e.into_error())));
                    }
                },
            }
        }
    }

    /// The transport's headers for the current session.
    /// The wait before SSE reconnection `attempt` (1-based): the server's `retry`, else the
    /// configured delay, doubled per attempt and capped at `max_reconnect_delay` (or at the
    /// base, when that is longer).
    fn reconnect_delay(&self, retry: Option<u64>, attempt: u32) -> Duration {
        let base = retry
            .map(Duration::from_millis)
            .unwrap_or(self.options.reconnect_delay);
        let factor = 1u64 << (attempt.saturating_sub(1)).min(16);
        let delay_ms = base.as_millis().saturating_mul(factor).min(
            self.options
                .max_reconnect_delay
                .as_millis()
                .max(base.as_millis()),
        );
        Duration::from_millis(delay_ms)
    }

    fn session_headers(&self) -> HeaderMap {
        let st = self.lock();
        let mut h = HeaderMap::new();
        if !st.legacy {
            if let Some(sid) = &st.session_id {
                h.insert(MCP_SESSION_ID, sid.clone());
            }
            if let Some(v) = &st.protocol_version {
                h.insert(MCP_PROTOCOL_VERSION, v.clone());
            }
        }
        h
    }

    // --------------------------------------------------------------- authorization

    /// Without OAuth (feature `oauth`) there is no kept token.
    #[cfg(not(feature = "oauth"))]
    fn oauth_bearer(&self) -> Option<HeaderValue> {
        None
    }

    /// Without OAuth (feature `oauth`) an MCP request is sent as it is.
    #[cfg(not(feature = "oauth"))]
    async fn send_authorized(
        &self,
        target: &Target,
        method: Method,
        body: Bytes,
        headers: HeaderMap,
    ) -> Result<(Response<Incoming>, Lease), Error> {
        self.send(target, method, body, headers).await
    }

    /// `Bearer <token>` with the access token OAuth keeps for the server, if any.
    #[cfg(feature = "oauth")]
    fn oauth_bearer(&self) -> Option<HeaderValue> {
        let oauth = self.options.oauth.as_ref()?;
        let token = oauth
            .client
            .access_token(self.url.url.as_str(), SystemTime::now())?;
        HeaderValue::try_from(format!("Bearer {token}")).ok()
    }

    /// The challenge of a reply that asks for an authorization this client can run: a 401,
    /// or a 403 with `insufficient_scope`, with OAuth configured.
    #[cfg(feature = "oauth")]
    fn auth_challenge(&self, resp: &Response<Incoming>) -> Option<Challenge> {
        self.options.oauth.as_ref()?;
        let status = resp.status();
        let challenge = Challenge::from_response(status, resp.headers());
        match status {
            StatusCode::UNAUTHORIZED => Some(challenge),
            StatusCode::FORBIDDEN if challenge.insufficient_scope => Some(challenge),
            _ => None,
        }
    }

    /// Sends an MCP request with the current access token; when the server asks for
    /// authorization, authorizes and sends it again (at most [`MAX_AUTHORIZATIONS`] times).
    /// A refusal after that is returned as it is, for the caller's status error.
    #[cfg(feature = "oauth")]
    async fn send_authorized(
        &self,
        target: &Target,
        method: Method,
        body: Bytes,
        headers: HeaderMap,
    ) -> Result<(Response<Incoming>, Lease), Error> {
        let mut rounds = 0;
        loop {
            let mut h = headers.clone();
            let used = self.oauth_bearer();
            if let Some(v) = &used {
                h.insert(AUTHORIZATION, v.clone());
            }
            let (resp, lease) = self.send(target, method.clone(), body.clone(), h).await?;
            let challenge = match self.auth_challenge(&resp) {
                Some(c) if rounds < MAX_AUTHORIZATIONS => c,
                _ => return Ok((resp, lease)),
            };
            rounds += 1;
            let what = format!("{method} {}: HTTP {}", target.url, resp.status());
            let _ = resp.into_body().collect().await;
            self.release(lease);
            self.authorize(&what, &challenge, used).await?;
        }
    }

    /// Runs one authorization flow after `challenge` (unless another request renewed the token
    /// since `used` was sent), its requests over this transport's connections.
    #[cfg(feature = "oauth")]
    async fn authorize(
        &self,
        what: &str,
        challenge: &Challenge,
        used: Option<HeaderValue>,
    ) -> Result<(), Error> {
        let Some(oauth) = self.options.oauth.as_ref() else {
            return Err(Error::new(ErrorKind::Unauthorized, what.to_owned()));
        };
        let _guard = self.auth.lock().await;
        if self.oauth_bearer() != used {
            return Ok(()); // another request authorized meanwhile: try its token
        }
        tracing::debug!(target: "mcp", %what, ?challenge, "authorizing");
        let entropy = (oauth.entropy)()?;
        let mut flow = oauth
            .client
            .authorize(self.url.url.as_str(), challenge, &entropy)
            .map_err(|e| unauthorized(what, &e))?;
        loop {
            match flow.step().map_err(|e| unauthorized(what, &e))? {
                Step::Send(req) => {
                    let reply = self.auth_exchange(what, req).await?;
                    flow.handle_response(SystemTime::now(), reply)
                        .map_err(|e| unauthorized(what, &e))?;
                }
                Step::Authorize(req) => match &self.options.auth_handler {
                    Some(handler) => {
                        let callback = handler.0.authorize(req.uri().to_string()).await?;
                        flow.handle_callback(&callback)
                            .map_err(|e| unauthorized(what, &e))?;
                    }
                    None => {
                        let reply = self.auth_exchange(what, req).await?;
                        flow.handle_response(SystemTime::now(), reply)
                            .map_err(|e| unauthorized(what, &e))?;
                    }
                },
                Step::Done(_) => {
                    tracing::debug!(target: "mcp", "authorized");
                    return Ok(());
                }
            }
        }
    }

    /// One request of an authorization flow (metadata, registration, authorization, token):
    /// only the flow's own headers (never the MCP request's), no redirect following, the
    /// whole reply read within bounds.
    #[cfg(feature = "oauth")]
    async fn auth_exchange(
        &self,
        what: &str,
        req: Request<Vec<u8>>,
    ) -> Result<Response<Vec<u8>>, Error> {
        let fail = |msg: String| Error::new(ErrorKind::Unauthorized, format!("{what}: {msg}"));
        let (parts, body) = req.into_parts();
        let step = format!("authorization: {} {}", parts.method, parts.uri);
        let target =
            Target::parse(&parts.uri.to_string()).map_err(|e| fail(format!("{step}: {e}")))?;
        let host = HeaderValue::try_from(target.authority.as_str())
            .map_err(|_| fail(format!("{step}: invalid host")))?;
        let mut req = Request::builder()
            .method(parts.method)
            .uri(target.path.as_str())
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| fail(format!("{step}: {e}")))?;
        *req.headers_mut() = parts.headers;
        req.headers_mut().insert(HOST, host);
        let timeout = self
            .options
            .response_timeout
            .or(Some(AUTH_EXCHANGE_TIMEOUT));
        let exchange = async {
            let (resp, lease) = self.send_request(&target, req, &step, timeout).await?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MAX_AUTH_REPLY)
                .collect()
                .await
                .map_err(|e| transport_error(format!("{step}: reading the reply failed: {e}")))?
                .to_bytes();
            self.release(lease);
            Ok(Response::from_parts(parts, body.to_vec()))
        };
        self.timed(timeout, &step, exchange)
            .await
            .map_err(|e| fail(e.message().to_owned()))
    }

    // --------------------------------------------------------------- the handshake

    async fn initialize(self: &Arc<Self>, line: Bytes, id: &Value) -> Result<(), Error> {
        if self.kind == HttpTransport::LegacySse {
            return self.start_legacy(line, self.url.clone()).await;
        }
        let what = format!("POST {}", self.url.url);
        let (resp, lease) = self
            .send_authorized(&self.url, Method::POST, line.clone(), HeaderMap::new())
            .await?;
        let status = resp.status();
        if !status.is_success() {
            if self.kind == HttpTransport::Auto && matches!(status.as_u16(), 400 | 404 | 405) {
                tracing::debug!(target: "mcp", %status, "Streamable HTTP refused; trying the legacy SSE transport");
                let _ = resp.into_body().collect().await;
                self.release(lease);
                return self.start_legacy(line, self.url.clone()).await;
            }
            return Err(status_error(&what, resp).await);
        }
        self.adopt_session(&resp);
        {
            let mut st = self.lock();
            st.post = Some(self.url.clone());
            st.generation += 1;
        }
        let (n, token) = self.register(Some(id.clone()));
        let reply = self.read_reply(resp, lease, Some(id), true, &token).await;
        self.unregister(n);
        match reply? {
            Some(msg) => {
                self.adopt_version(&msg);
                Ok(())
            }
            None => Err(transport_error(format!(
                "{what}: the reply to initialize carried no response"
            ))),
        }
    }

    fn adopt_session(&self, resp: &Response<Incoming>) {
        if let Some(sid) = resp.headers().get(MCP_SESSION_ID) {
            self.lock().session_id = Some(sid.clone());
        }
    }

    fn adopt_version(&self, msg: &[u8]) {
        if let Some(v) = negotiated_version(msg)
            && let Ok(v) = HeaderValue::try_from(v)
        {
            self.lock().protocol_version = Some(v);
        }
    }

    /// A new session after the server forgot `lost`: the original `initialize` (its answer is
    /// not shown to the engine, which already has one) and `notifications/initialized`.
    async fn reinitialize(self: &Arc<Self>, lost: &HeaderValue) -> Result<(), Error> {
        let _guard = self.reinit.lock().await;
        let (init, initialized, id) = {
            let mut st = self.lock();
            if st.session_id.as_ref() != Some(lost) {
                return Ok(()); // another task already started a new session
            }
            st.session_id = None;
            st.protocol_version = None;
            st.generation += 1;
            (st.init.clone(), st.initialized.clone(), st.init_id.clone())
        };
        let (Some(init), Some(id)) = (init, id) else {
            return Err(transport_error("the session was lost during the handshake"));
        };
        tracing::debug!(target: "mcp", "the server forgot the HTTP session; starting a new one");
        let what = format!("POST {} (re-initialisation)", self.url.url);
        let (resp, lease) = self
            .send_authorized(&self.url, Method::POST, init, HeaderMap::new())
            .await?;
        if !resp.status().is_success() {
            return Err(status_error(&what, resp).await);
        }
        self.adopt_session(&resp);
        let (n, token) = self.register(None);
        let reply = self.read_reply(resp, lease, Some(&id), false, &token).await;
        self.unregister(n);
        match reply? {
            Some(msg) => self.adopt_version(&msg),
            None => {
                return Err(transport_error(format!(
                    "{what}: the reply to initialize carried no response"
                )));
            }
        }
        if let Some(initialized) = initialized {
            let (resp, lease) = self
                .send(&self.url, Method::POST, initialized, self.session_headers())
                .await?;
            if !resp.status().is_success() {
                return Err(status_error(&what, resp).await);
            }
            let _ = resp.into_body().collect().await;
            self.release(lease);
            self.clone().start_standalone().await;
        }
        Ok(())
    }

    // --------------------------------------------------------------- POSTing messages

    /// POSTs one message; a request's reply is read until its response arrived.
    async fn post_message(self: Arc<Self>, line: Bytes, id: Option<Value>) {
        let (n, token) = self.register(id.clone());
        let result = self.post_inner(&line, id.as_ref(), &token).await;
        self.unregister(n);
        if let Err(e) = result {
            if token.is_cancelled() {
                return;
            }
            match &id {
                Some(id) => self.deliver_raw(error_line(id, &e)),
                None => tracing::warn!(target: "mcp", error = %e, "message not delivered"),
            }
        }
    }

    async fn post_inner(
        self: &Arc<Self>,
        line: &Bytes,
        id: Option<&Value>,
        token: &CancellationToken,
    ) -> Result<(), Error> {
        let mut reinitialized = false;
        loop {
            let (target, legacy) = {
                let st = self.lock();
                (st.post.clone(), st.legacy)
            };
            let Some(target) = target else {
                return Err(transport_error("the HTTP transport is not connected"));
            };
            let what = format!("POST {}", target.url);
            let headers = self.session_headers();
            let sid = headers.get(MCP_SESSION_ID).cloned();
            let sent = self.send_authorized(&target, Method::POST, line.clone(), headers);
            let (resp, lease) = match select(Box::pin(sent), token.cancelled()).await {
                Either::Left((r, _)) => r?,
                Either::Right(_) => return Ok(()),
            };
            let status = resp.status();
            if status == StatusCode::NOT_FOUND
                && !legacy
                && let Some(sid) = sid
            {
                let _ = resp.into_body().collect().await;
                self.release(lease);
                if !self.options.reinitialize || reinitialized {
                    let e = Error::new(
                        ErrorKind::TransportClosed,
                        format!(
                            "{what}: the server no longer knows the HTTP session (404 Not Found){}",
                            if reinitialized {
                                " even after re-initialisation"
                            } else {
                                " and re-initialisation is disabled"
                            }
                        ),
                    );
                    self.fail_pending(&e);
                    return Err(e);
                }
                if let Err(e) = self.reinitialize(&sid).await {
                    let e = Error::new(
                        e.kind(),
                        format!(
                            "the server lost the HTTP session and re-initialisation failed: {}",
                            e.message()
                        ),
                    );
                    self.fail_pending(&e);
                    return Err(e);
                }
                reinitialized = true;
                continue;
            }
            if !status.is_success() {
                return Err(status_error(&what, resp).await);
            }
            if legacy {
                // Legacy servers answer on the SSE stream; the POST body is only an ack.
                let _ = resp.into_body().collect().await;
                self.release(lease);
                return Ok(());
            }
            return match self.read_reply(resp, lease, id, true, token).await {
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            };
        }
    }

    /// Fails every request in flight with `error`, then the whole transport.
    fn fail_pending(&self, error: &Error) {
        let ids: Vec<Value> = self
            .lock()
            .tasks
            .values()
            .filter_map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            self.deliver_raw(error_line(&id, error));
        }
        self.fail(error);
    }

    // --------------------------------------------------------------- replies

    /// Reads a POST's reply, resuming a broken SSE stream until the response to `expect`
    /// arrived. Returns that response.
    async fn read_reply(
        self: &Arc<Self>,
        resp: Response<Incoming>,
        lease: Lease,
        expect: Option<&Value>,
        deliver: bool,
        token: &CancellationToken,
    ) -> Result<Option<Vec<u8>>, Error> {
        let what = format!("POST {}", self.url.url);
        if is_event_stream(&resp) {
            let mut outcome = self
                .read_sse(resp.into_body(), Some(lease), expect, deliver, token)
                .await;
            let mut attempts = 0u32;
            loop {
                match outcome {
                    Outcome::Done(r) => {
                        if r.is_none()
                            && let Some(id) = expect
                        {
                            return Err(transport_error(format!(
                                "{what}: the SSE stream ended without the response to request {id}"
                            )));
                        }
                        return Ok(r);
                    }
                    Outcome::Cancelled => return Ok(None),
                    Outcome::Broken {
                        last_id,
                        retry,
                        progressed,
                    } => {
                        if expect.is_none() {
                            return Ok(None);
                        }
                        let Some(last_id) = last_id else {
                            return Err(transport_error(format!(
                                "{what}: the SSE stream broke before the response, and carried no event id to resume from"
                            )));
                        };
                        if progressed {
                            attempts = 0;
                        }
                        attempts += 1;
                        if attempts > self.options.max_reconnects {
                            return Err(transport_error(format!(
                                "{what}: the SSE stream broke before the response; {} reconnection attempts failed",
                                self.options.max_reconnects
                            )));
                        }
                        outcome = self
                            .resume(&last_id, retry, attempts, expect, deliver, token)
                            .await;
                    }
                }
            }
        }
        let body = Limited::new(resp.into_body(), self.options.max_message_size)
            .collect()
            .await
            .map_err(|e| transport_error(format!("{what}: reading the reply failed: {e}")))?
            .to_bytes();
        self.release(lease);
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let messages: Vec<Box<serde_json::value::RawValue>> =
            if body.trim_ascii().starts_with(b"[") {
                serde_json::from_slice(&body)
            } else {
                serde_json::from_slice(&body).map(|m| vec![m])
            }
            .map_err(|e| Error::parse(format!("{what}: the reply is not valid JSON: {e}")))?;
        let mut response = None;
        for m in messages {
            let data = m.get().as_bytes();
            let rid = if deliver {
                self.deliver(data)
                    .map_err(|e| Error::parse(format!("{what}: invalid JSON message: {e}")))?
            } else {
                response_id(data)
            };
            if rid.is_some() && rid.as_ref() == expect {
                response = Some(data.to_vec());
            }
        }
        Ok(response)
    }

    /// One reconnection of a broken SSE stream: waits (the server's `retry`, else the
    /// configured delay, doubled per failed attempt), then GETs with `Last-Event-ID`.
    async fn resume(
        self: &Arc<Self>,
        last_id: &str,
        retry: Option<u64>,
        attempt: u32,
        expect: Option<&Value>,
        deliver: bool,
        token: &CancellationToken,
    ) -> Outcome {
        let broken = |progressed| Outcome::Broken {
            last_id: Some(last_id.to_owned()),
            retry,
            progressed,
        };
        if !self
            .sleep(self.reconnect_delay(retry, attempt), token)
            .await
        {
            return Outcome::Cancelled;
        }
        let mut headers = self.session_headers();
        let Ok(v) = HeaderValue::try_from(last_id) else {
            return Outcome::Done(None);
        };
        headers.insert(LAST_EVENT_ID, v);
        let target = self.lock().post.clone().unwrap_or_else(|| self.url.clone());
        let sent = self.send_authorized(&target, Method::GET, Bytes::new(), headers);
        let (resp, lease) = match select(Box::pin(sent), token.cancelled()).await {
            Either::Left((Ok(r), _)) => r,
            Either::Left((Err(e), _)) => {
                tracing::debug!(target: "mcp", error = %e, "SSE reconnection failed");
                return broken(false);
            }
            Either::Right(_) => return Outcome::Cancelled,
        };
        if !resp.status().is_success() || !is_event_stream(&resp) {
            let e = status_error("resuming the SSE stream", resp).await;
            tracing::debug!(target: "mcp", error = %e, "SSE reconnection refused");
            return broken(false);
        }
        match self
            .read_sse(resp.into_body(), Some(lease), expect, deliver, token)
            .await
        {
            Outcome::Broken {
                last_id: new_id,
                retry: new_retry,
                progressed,
            } => Outcome::Broken {
                last_id: new_id.or_else(|| Some(last_id.to_owned())),
                retry: new_retry.or(retry),
                progressed,
            },
            other => other,
        }
    }

    /// Reads one SSE body, delivering its `message` events. Ends `Done` when the body ended
    /// after the expected response (or when none is expected), `Broken` otherwise.
    async fn read_sse(
        self: &Arc<Self>,
        mut body: Incoming,
        lease: Option<Lease>,
        expect: Option<&Value>,
        deliver: bool,
        token: &CancellationToken,
    ) -> Outcome {
        let mut decoder = SseDecoder::new(self.options.max_message_size);
        let mut response = None;
        let mut progressed = false;
        let clean = loop {
            let event = match next_sse_event(&mut body, &mut decoder, token).await {
                SseNext::Event(event) => event,
                SseNext::End { clean } => break clean,
                SseNext::Cancelled => return Outcome::Cancelled,
            };
            progressed = true;
            if event.event != "message" || event.data.trim().is_empty() {
                continue;
            }
            let data = event.data.as_bytes();
            let rid = if deliver {
                match self.deliver(data) {
                    Ok(id) => id,
                    Err(e) => {
                        tracing::warn!(target: "mcp", error = %e, "invalid JSON in an SSE event");
                        continue;
                    }
                }
            } else {
                response_id(data)
            };
            if rid.is_some() && rid.as_ref() == expect {
                response = Some(data.to_vec());
            }
        };
        if clean && let Some(lease) = lease {
            self.release(lease);
        }
        if response.is_some() || expect.is_none() && clean {
            return Outcome::Done(response);
        }
        let last = decoder.last_event_id();
        Outcome::Broken {
            last_id: (!last.is_empty()).then(|| last.to_owned()),
            retry: decoder.retry(),
            progressed,
        }
    }

    // --------------------------------------------------------------- the GET stream

    /// Opens the standalone GET stream of the current session (Streamable HTTP), keeping it
    /// open across breaks until the session changes or the transport closes. Resolves once
    /// the first attempt has its answer.
    async fn start_standalone(self: Arc<Self>) {
        let (legacy, generation) = {
            let st = self.lock();
            (st.legacy, st.generation)
        };
        if legacy || !self.options.standalone_stream || self.shutdown.is_cancelled() {
            return;
        }
        let rt = self.rt.clone();
        let (opened_tx, opened_rx) = oneshot::channel();
        let self_sleep = rt.sleep_until(rt.now() + STANDALONE_OPEN_WAIT);
        rt.spawn(Box::pin(async move {
            let (n, token) = self.register(None);
            self.standalone(generation, &token, opened_tx).await;
            self.unregister(n);
        }));
        // Resolves when the first attempt has its answer or the task ended; a server slow to
        // answer the GET does not hold up requests for longer than this.
        let _ = select(opened_rx, self_sleep).await;
    }

    async fn standalone(
        self: &Arc<Self>,
        generation: u64,
        token: &CancellationToken,
        opened: oneshot::Sender<()>,
    ) {
        let mut opened = Some(opened);
        let mut last_id: Option<String> = None;
        let mut retry: Option<u64> = None;
        let mut attempts = 0u32;
        loop {
            if token.is_cancelled() || self.lock().generation != generation {
                return;
            }
            let mut headers = self.session_headers();
            if let Some(id) = &last_id
                && let Ok(v) = HeaderValue::try_from(id.as_str())
            {
                headers.insert(LAST_EVENT_ID, v);
            }
            let sent = self.send_authorized(&self.url, Method::GET, Bytes::new(), headers);
            let got = match select(Box::pin(sent), token.cancelled()).await {
                Either::Left((r, _)) => r,
                Either::Right(_) => return,
            };
            if let Some(tx) = opened.take() {
                let _ = tx.send(());
            }
            match got {
                Ok((resp, lease)) if resp.status().is_success() && is_event_stream(&resp) => {
                    match self
                        .read_sse(resp.into_body(), Some(lease), None, true, token)
                        .await
                    {
                        Outcome::Cancelled => return,
                        Outcome::Done(_) => attempts = 0,
                        Outcome::Broken {
                            last_id: l,
                            retry: r,
                            progressed,
                        } => {
                            last_id = l.or(last_id);
                            retry = r.or(retry);
                            if progressed {
                                attempts = 0;
                            }
                        }
                    }
                }
                Ok((resp, _)) => {
                    // 405: the server offers no stream; 404: the session is gone (the next
                    // POST starts a new one, which opens its own stream); others: give up.
                    let status = resp.status();
                    if status != StatusCode::METHOD_NOT_ALLOWED {
                        let e = status_error("GET (standalone SSE stream)", resp).await;
                        tracing::debug!(target: "mcp", error = %e, "no standalone SSE stream");
                    }
                    return;
                }
                Err(e) => {
                    tracing::debug!(target: "mcp", error = %e, "standalone SSE stream failed");
                }
            }
            attempts += 1;
            if attempts > self.options.max_reconnects {
                tracing::debug!(target: "mcp", "standalone SSE stream given up");
                return;
            }
            if !self
                .sleep(self.reconnect_delay(retry, attempts), token)
                .await
            {
                return;
            }
        }
    }

    // --------------------------------------------------------------- legacy HTTP+SSE

    /// Opens the legacy SSE stream at `sse`, waits for its `endpoint` event, then POSTs
    /// `init` there. Everything the server sends arrives on the stream.
    async fn start_legacy(self: &Arc<Self>, init: Bytes, sse: Target) -> Result<(), Error> {
        let what = format!("GET {}", sse.url);
        let (resp, lease) = self
            .send_authorized(&sse, Method::GET, Bytes::new(), HeaderMap::new())
            .await?;
        if !resp.status().is_success() {
            return Err(status_error(&what, resp).await);
        }
        if !is_event_stream(&resp) {
            return Err(transport_error(format!(
                "{what}: expected an SSE stream (text/event-stream), got {}",
                content_type(&resp).unwrap_or_else(|| "no content type".into())
            )));
        }
        let (tx, rx) = oneshot::channel();
        let this = self.clone();
        let (n, token) = self.register(None);
        self.rt.spawn(Box::pin(async move {
            this.legacy_stream(resp.into_body(), sse, tx, &token).await;
            this.unregister(n);
            drop(lease);
        }));
        let endpoint = rx.await.map_err(|_| {
            transport_error(format!(
                "{what}: the SSE stream ended before its endpoint event"
            ))
        })??;
        {
            let mut st = self.lock();
            st.legacy = true;
            st.post = Some(endpoint.clone());
        }
        let what = format!("POST {}", endpoint.url);
        let (resp, lease) = self
            .send_authorized(&endpoint, Method::POST, init, HeaderMap::new())
            .await?;
        if !resp.status().is_success() {
            return Err(status_error(&what, resp).await);
        }
        let _ = resp.into_body().collect().await;
        self.release(lease);
        Ok(())
    }

    async fn legacy_stream(
        &self,
        mut body: Incoming,
        sse: Target,
        tx: oneshot::Sender<Result<Target, Error>>,
        token: &CancellationToken,
    ) {
        let mut tx = Some(tx);
        let mut decoder = SseDecoder::new(self.options.max_message_size);
        loop {
            let event = match next_sse_event(&mut body, &mut decoder, token).await {
                SseNext::Event(event) => event,
                SseNext::End { .. } => break,
                SseNext::Cancelled => return,
            };
            match event.event.as_str() {
                "endpoint" => {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(legacy_endpoint(&sse, event.data.trim()));
                    }
                }
                "message" if !event.data.trim().is_empty() => {
                    if let Err(e) = self.deliver(event.data.as_bytes()) {
                        tracing::warn!(target: "mcp", error = %e, "invalid JSON in an SSE event");
                    }
                }
                _ => {}
            }
        }
        if tx.is_none() && !self.shutdown.is_cancelled() {
            self.fail(&Error::new(
                ErrorKind::TransportClosed,
                format!("the server closed the SSE stream {}", sse.url),
            ));
        }
    }
}

/// What reading an SSE body yields next.
enum SseNext {
    /// A well-formed event.
    Event(mcp_proto::codec::sse::SseEvent),
    /// The body ended: `clean` when it ended normally, not with an error.
    End { clean: bool },
    /// `token` was cancelled.
    Cancelled,
}

/// The next well-formed event of an SSE body (malformed ones are logged and skipped),
/// reading frames into `decoder` as needed.
async fn next_sse_event(
    body: &mut Incoming,
    decoder: &mut SseDecoder,
    token: &CancellationToken,
) -> SseNext {
    loop {
        while let Some(event) = decoder.next_event() {
            match event {
                Ok(event) => return SseNext::Event(event),
                Err(e) => tracing::warn!(target: "mcp", error = %e, "SSE event dropped"),
            }
        }
        let frame = match select(body.frame(), token.cancelled()).await {
            Either::Left((f, _)) => f,
            Either::Right(_) => return SseNext::Cancelled,
        };
        match frame {
            None => return SseNext::End { clean: true },
            Some(Err(e)) => {
                tracing::debug!(target: "mcp", error = %e, "SSE stream broke");
                return SseNext::End { clean: false };
            }
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    decoder.push(data);
                }
            }
        }
    }
}
