//! The HTTP client's bytes: hyper exchanges carried out for the core's
//! [`ClientTransport`](mcp_proto::http::client::ClientTransport) policy.
//!
//! The policy lives on the connection's own task, beside the session it serves: what the
//! session transmits goes to [`ClientTransport::send`], every [`Action`] becomes a spawned
//! exchange (a pooled or new connection, the OAuth retry, the response timeout), and what the
//! exchanges report (head, body, SSE chunks, end, failure) comes back through one bounded
//! channel to be handed to the policy, whose deliveries go straight into the session. Nothing
//! here decides what to send or how to read a reply; nothing here parses JSON-RPC.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
#[cfg(feature = "oauth")]
use std::time::SystemTime;

use bytes::Bytes;
use futures_channel::mpsc;
use futures_channel::oneshot;
use futures_core::Stream;
use futures_util::FutureExt;
use futures_util::future::{Either, select};
use http::header::{AUTHORIZATION, HOST};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::{TrySendError, http1};
use mcp_proto::http::client::{Action, ClientTransport, ExchangeId, HttpRequest, Outgoing, ReadAs};
use mcp_proto::session::{Session, Transmit};
use mcp_proto::{Duration, Error, ErrorKind, Instant};

#[cfg(feature = "oauth")]
use super::auth::unauthorized;
use super::target::{HostPort, Target};
use super::{Connector, Destination, HttpClientOptions};
use crate::cancel::CancellationToken;
use crate::connection::SessionWire;
#[cfg(feature = "oauth")]
use crate::oauth::{AuthFlow, Challenge, DPOP, DPOP_NONCE, Step};
use crate::runtime::{BoxFuture, DeadlineTimer, Runtime};

/// Bound of the DELETE sent when the client closes.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// Exchange reports buffered between the exchanges and the connection (backpressure beyond).
const EVENTS: usize = 64;
/// Exchange reports handled per poll before the connection does other work.
const BUDGET: usize = 32;
/// Authorizations one MCP request may run (e.g. a first authorization, then a step-up); the
/// flow itself refuses a step-up that would ask for nothing new.
#[cfg(feature = "oauth")]
const MAX_AUTHORIZATIONS: u32 = 2;
/// Times one MCP request is sent again with a resource server's fresh DPoP nonce.
#[cfg(feature = "oauth")]
const MAX_NONCE_RETRIES: u32 = 1;
/// Bound of each exchange with an authorization server when no response timeout is set.
#[cfg(feature = "oauth")]
const AUTH_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest reply of an authorization server (metadata, registration, tokens).
#[cfg(feature = "oauth")]
const MAX_AUTH_REPLY: usize = 1024 * 1024;
/// Largest body read only to be dropped (a 202's, an acknowledgement's); beyond it the
/// connection is not reused.
const MAX_DISCARD: usize = 64 * 1024;

type Body = Full<Bytes>;

/// One client connection's request sender: HTTP/1.1 (one exchange at a time) or HTTP/2
/// (multiplexed: clones share the connection).
enum SendRequest {
    H1(http1::SendRequest<Body>),
    #[cfg(feature = "http2")]
    H2(hyper::client::conn::http2::SendRequest<Body>),
}

impl SendRequest {
    fn is_closed(&self) -> bool {
        match self {
            SendRequest::H1(s) => s.is_closed(),
            #[cfg(feature = "http2")]
            SendRequest::H2(s) => s.is_closed(),
        }
    }

    fn is_h2(&self) -> bool {
        !matches!(self, SendRequest::H1(_))
    }

    /// Whether a request can go now (an idle HTTP/1.1 connection, an open HTTP/2 one).
    fn ready_now(&mut self) -> bool {
        match self {
            SendRequest::H1(s) => matches!(s.ready().now_or_never(), Some(Ok(()))),
            #[cfg(feature = "http2")]
            SendRequest::H2(s) => !s.is_closed(),
        }
    }

    async fn try_send_request(
        &mut self,
        req: Request<Body>,
    ) -> Result<Response<Incoming>, TrySendError<Request<Body>>> {
        match self {
            SendRequest::H1(s) => s.try_send_request(req).await,
            #[cfg(feature = "http2")]
            SendRequest::H2(s) => {
                // HTTP/2 is ready once the connection is; wait for it here (a stream slot).
                if let Err(e) = s.ready().await {
                    tracing::debug!(target: "mcp", error = %e, "HTTP/2 connection not ready");
                }
                s.try_send_request(req).await
            }
        }
    }
}

fn transport_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TransportError, message.into())
}

/// What an exchange reports to the connection.
enum Report {
    Head {
        exchange: ExchangeId,
        status: StatusCode,
        headers: HeaderMap,
        read: oneshot::Sender<(ReadAs, usize)>,
    },
    Data(ExchangeId, Bytes),
    Body(ExchangeId, Bytes),
    End(ExchangeId, bool),
    Failed(ExchangeId, Error),
}

/// What exchanges share: the connector, the pool, the options, the OAuth lock.
pub(super) struct Io<R, C> {
    rt: R,
    connector: C,
    /// The MCP endpoint (the resource OAuth tokens are kept for).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    url: Target,
    options: HttpClientOptions,
    headers: HeaderMap,
    pool: Mutex<Vec<(HostPort, SendRequest, CancellationToken)>>,
    shutdown: CancellationToken,
    /// One authorization flow at a time.
    #[cfg(feature = "oauth")]
    auth: futures_util::lock::Mutex<()>,
    /// The access token whose renewal failed (not tried again).
    #[cfg(feature = "oauth")]
    renew_failed: Mutex<Option<String>>,
    /// The refusal of a grant without a user (not run again).
    #[cfg(feature = "oauth")]
    grant_refused: Mutex<Option<crate::oauth::OAuthError>>,
}

/// A connection taken from the pool for one exchange; given back once the body was read.
struct Lease {
    key: HostPort,
    sender: SendRequest,
    kill: Kill,
}

/// Ends its connection when dropped armed: an exchange given up before its reply was read
/// (a cancelled stateless-era request, whose cancellation is the closing of its stream)
/// closes the TCP connection instead of leaving hyper to read the reply to its end.
struct Kill(Option<CancellationToken>);

impl Kill {
    fn disarm(mut self) -> Option<CancellationToken> {
        self.0.take()
    }
}

impl Drop for Kill {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// How a client connection ended: set by its task when hyper's connection future fails.
#[derive(Clone, Default)]
struct ConnEnd {
    ended: CancellationToken,
    reason: Arc<Mutex<Option<String>>>,
}

impl ConnEnd {
    fn record(&self, e: &hyper::Error) {
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            reason = format!("{reason}: {s}");
            source = s.source();
        }
        self.record_text(reason);
    }

    /// The first IO error of the connection (what hyper may report only as "canceled").
    fn record_io(&self, e: &std::io::Error) {
        self.record_text(e.to_string());
    }

    fn record_text(&self, reason: String) {
        // rustls reports an alert after the handshake (a refused client certificate, in
        // TLS 1.3) as text: say what it means.
        #[cfg(feature = "tls")]
        let reason = match crate::tls::alert_meaning(&reason) {
            Some(meaning) => format!("{reason} ({meaning})"),
            None => reason,
        };
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(reason);
        }
    }

    /// The reason, once the connection's task ended (waiting for it a little: the request
    /// learns of the end first).
    async fn reason<R: Runtime, C>(&self, io: &Io<R, C>) -> Option<String> {
        let wait = io.rt.sleep_until(io.rt.now() + Duration::from_secs(1));
        let _ = select(Box::pin(self.ended.cancelled()), wait).await;
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A client connection's IO, recording its first error in its [`ConnEnd`].
struct Recording<I> {
    inner: I,
    end: ConnEnd,
}

impl<I> Recording<I> {
    fn seen<T>(&self, r: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        if let Poll::Ready(Err(e)) = &r {
            self.end.record_io(e);
        }
        r
    }
}

impl<I: hyper::rt::Read + Unpin> hyper::rt::Read for Recording<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.seen(r)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for Recording<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.seen(r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.seen(r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.seen(r)
    }
}

/// The HTTP client under a connection: the policy and the exchanges it asked for.
pub(super) struct HttpWire<R: Runtime, C: Connector> {
    io: Arc<Io<R, C>>,
    policy: ClientTransport,
    reports_tx: mpsc::Sender<Report>,
    reports: mpsc::Receiver<Report>,
    running: HashMap<ExchangeId, CancellationToken>,
    timer: DeadlineTimer,
    version_set: bool,
    close_started: bool,
    finished: Option<oneshot::Sender<()>>,
}

impl<R: Runtime, C: Connector> HttpWire<R, C> {
    pub(super) fn new(
        rt: R,
        connector: C,
        url: Target,
        options: HttpClientOptions,
        headers: HeaderMap,
        policy: ClientTransport,
        finished: oneshot::Sender<()>,
    ) -> Self {
        let (reports_tx, reports) = mpsc::channel(EVENTS);
        HttpWire {
            io: Arc::new(Io {
                rt,
                connector,
                url,
                options,
                headers,
                pool: Mutex::new(Vec::new()),
                shutdown: CancellationToken::new(),
                #[cfg(feature = "oauth")]
                auth: futures_util::lock::Mutex::new(()),
                #[cfg(feature = "oauth")]
                renew_failed: Mutex::new(None),
                #[cfg(feature = "oauth")]
                grant_refused: Mutex::new(None),
            }),
            policy,
            reports_tx,
            reports,
            running: HashMap::new(),
            timer: DeadlineTimer::default(),
            version_set: false,
            close_started: false,
            finished: Some(finished),
        }
    }

    /// Carries out what the policy asked for.
    fn run_actions(&mut self) {
        while let Some(action) = self.policy.poll_action() {
            match action {
                Action::Send { exchange, request } => {
                    let token = CancellationToken::new();
                    self.running.insert(exchange, token.clone());
                    let io = self.io.clone();
                    let reports = self.reports_tx.clone();
                    let limit = (request.method() == Method::DELETE).then_some(DELETE_TIMEOUT);
                    self.io.rt.spawn(Box::pin(async move {
                        io.exchange(exchange, *request, reports, token, limit).await;
                    }));
                }
                Action::Abort(exchange) => {
                    if let Some(token) = self.running.remove(&exchange) {
                        token.cancel();
                    }
                }
                _ => {}
            }
        }
    }

    /// Hands what the policy has for the session to it.
    fn deliver(&mut self, session: Option<&mut Session>, now: Instant) {
        let Some(session) = session else {
            while self.policy.poll_delivery().is_some() {}
            return;
        };
        while let Some(d) = self.policy.poll_delivery() {
            d.apply(session, now);
        }
        if !self.version_set
            && let Some(v) = session.version()
        {
            self.policy.set_protocol_version(v.as_str());
            self.version_set = true;
        }
    }

    /// Handles reports and timers; returns whether anything happened.
    fn pump(
        &mut self,
        cx: &mut Context<'_>,
        mut session: Option<&mut Session>,
        now: Instant,
    ) -> bool {
        let mut progressed = false;
        if let Some(fired) = self.timer.poll(&self.io.rt, self.policy.poll_timeout(), cx) {
            self.policy.handle_timeout(fired);
            progressed = true;
        }
        for _ in 0..BUDGET {
            let report = match Pin::new(&mut self.reports).poll_next(cx) {
                Poll::Ready(Some(r)) => r,
                _ => break,
            };
            progressed = true;
            match report {
                Report::Head {
                    exchange,
                    status,
                    headers,
                    read,
                } => {
                    let how = self.policy.handle_head(now, exchange, status, &headers);
                    let _ = read.send((how, self.policy.body_limit(exchange)));
                }
                Report::Data(exchange, data) => self.policy.handle_data(now, exchange, &data),
                Report::Body(exchange, body) => {
                    self.policy.handle_body(now, exchange, &body);
                    self.end(session.as_deref_mut(), now, exchange, true);
                }
                Report::End(exchange, clean) => {
                    self.end(session.as_deref_mut(), now, exchange, clean)
                }
                Report::Failed(exchange, error) => {
                    self.running.remove(&exchange);
                    self.deliver(session.as_deref_mut(), now);
                    self.policy.handle_failed(now, exchange, error);
                }
            }
            self.deliver(session.as_deref_mut(), now);
            self.run_actions();
        }
        self.deliver(session, now);
        self.run_actions();
        progressed
    }

    /// A body ended: everything that arrived before reaches the session first, then the
    /// policy learns whether the exchange's request still awaits its response.
    fn end(
        &mut self,
        mut session: Option<&mut Session>,
        now: Instant,
        exchange: ExchangeId,
        clean: bool,
    ) {
        self.running.remove(&exchange);
        self.deliver(session.as_deref_mut(), now);
        let s = session.as_deref();
        self.policy.handle_end(now, exchange, clean, |id| {
            s.is_some_and(|s| s.is_awaiting(id))
        });
    }

    fn finish(&mut self) {
        self.io.shutdown.cancel();
        for (_, token) in self.running.drain() {
            token.cancel();
        }
        self.io
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        if let Some(tx) = self.finished.take() {
            let _ = tx.send(());
        }
    }
}

impl<R: Runtime, C: Connector> Drop for HttpWire<R, C> {
    fn drop(&mut self) {
        self.finish();
    }
}

impl<R: Runtime, C: Connector> SessionWire for HttpWire<R, C> {
    fn send(&mut self, now: Instant, session: &Session, transmit: &Transmit, message: Vec<u8>) {
        let kind = Outgoing::of(transmit);
        match session.stateless_version() {
            // The stateless era: its own headers, no session.
            Some(version) => {
                let method = match transmit.method {
                    Some(m) => std::borrow::Cow::Borrowed(m),
                    None => std::borrow::Cow::Owned(method_of(&message).unwrap_or_default()),
                };
                self.policy.send_stateless(
                    now,
                    kind,
                    version.as_str(),
                    &method,
                    Bytes::from(message),
                    |tool| session.param_headers(tool),
                )
            }
            None => self.policy.send(now, kind, Bytes::from(message)),
        }
        self.run_actions();
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>, session: &mut Session, now: Instant) -> bool {
        self.pump(cx, Some(session), now)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>, now: Instant) -> Poll<()> {
        if !self.close_started {
            self.close_started = true;
            self.policy.close(now);
            self.run_actions();
        }
        while !self.policy.is_closed() {
            if !self.pump(cx, None, now) {
                return Poll::Pending;
            }
        }
        self.finish();
        Poll::Ready(())
    }
}

// ------------------------------------------------------------------- exchanges

impl<R: Runtime, C: Connector> Io<R, C> {
    /// Carries out one exchange, reporting its head, then its body as the policy says.
    async fn exchange(
        self: Arc<Self>,
        exchange: ExchangeId,
        request: HttpRequest,
        mut reports: mpsc::Sender<Report>,
        token: CancellationToken,
        limit: Option<Duration>,
    ) {
        let run = self.run_exchange(exchange, request, reports.clone());
        let run = async {
            match limit {
                Some(limit) => self.timed(Some(limit), "DELETE", run).await,
                None => run.await,
            }
        };
        let outcome = match select(Box::pin(run), token.cancelled()).await {
            Either::Left((outcome, _)) => outcome,
            Either::Right(_) => return,
        };
        if let Err(e) = outcome
            && !token.is_cancelled()
        {
            let _ = report(&mut reports, Report::Failed(exchange, e)).await;
        }
    }

    async fn run_exchange(
        &self,
        exchange: ExchangeId,
        request: HttpRequest,
        mut reports: mpsc::Sender<Report>,
    ) -> Result<(), Error> {
        let target = Target::from_uri(request.uri())?;
        let (parts, body) = request.into_parts();
        let (resp, lease) = self
            .send_authorized(&target, parts.method, body, parts.headers)
            .await?;
        let (tx, rx) = oneshot::channel();
        let (head, body) = resp.into_parts();
        let sent = report(
            &mut reports,
            Report::Head {
                exchange,
                status: head.status,
                headers: head.headers,
                read: tx,
            },
        )
        .await;
        if sent.is_err() {
            return Ok(());
        }
        let Ok((how, limit)) = rx.await else {
            return Ok(());
        };
        match how {
            ReadAs::Whole => {
                let body = Limited::new(body, limit)
                    .collect()
                    .await
                    .map_err(|e| {
                        transport_error(format!("{}: reading the reply failed: {e}", target.url))
                    })?
                    .to_bytes();
                self.release(lease);
                let _ = report(&mut reports, Report::Body(exchange, body)).await;
            }
            ReadAs::Sse => {
                let mut body = body;
                let clean = loop {
                    match body.frame().await {
                        None => break true,
                        Some(Err(e)) => {
                            tracing::debug!(target: "mcp", error = %e, "SSE stream broke");
                            break false;
                        }
                        Some(Ok(frame)) => {
                            if let Ok(data) = frame.into_data()
                                && !data.is_empty()
                                && report(&mut reports, Report::Data(exchange, data))
                                    .await
                                    .is_err()
                            {
                                return Ok(());
                            }
                        }
                    }
                };
                if clean {
                    self.release(lease);
                }
                let _ = report(&mut reports, Report::End(exchange, clean)).await;
            }
            _ => {
                if Limited::new(body, MAX_DISCARD).collect().await.is_ok() {
                    self.release(lease);
                }
            }
        }
        Ok(())
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

    async fn connect(&self, target: &Target) -> Result<(SendRequest, Kill, ConnEnd), Error> {
        let what = format!("connecting to {}", target.url);
        self.timed(self.options.connect_timeout, &what, async {
            let mut to = Destination::new(target.host.clone(), target.port);
            to.secure = target.secure;
            to.offer_h2 = self.options.http2;
            to.check = target.check.clone();
            #[cfg(feature = "tls")]
            {
                to.tls = self.options.tls.clone();
            }
            let connected = self
                .connector
                .connect(&to)
                .await
                .map_err(|e| transport_error(format!("{what}: {e}")).with_source(e))?;
            let h2 = connected.http2 || (!target.secure && self.options.h2c);
            let end = ConnEnd::default();
            let io = Recording {
                inner: connected.io,
                end: end.clone(),
            };
            let kill = CancellationToken::new();
            let killed = kill.clone();
            let handshake_failed = |e: hyper::Error| transport_error(format!("{what}: {e}"));
            let (sender, conn): (SendRequest, BoxFuture<Result<(), hyper::Error>>) = if h2 {
                #[cfg(feature = "http2")]
                {
                    let (sender, conn) = hyper::client::conn::http2::Builder::new(
                        crate::hyper_io::RuntimeExecutor(self.rt.clone()),
                    )
                    .timer(crate::hyper_io::RuntimeTimer::new(self.rt.clone()))
                    .handshake::<_, Body>(io)
                    .await
                    .map_err(handshake_failed)?;
                    (SendRequest::H2(sender), Box::pin(conn))
                }
                #[cfg(not(feature = "http2"))]
                {
                    return Err(transport_error(format!(
                        "{what}: the server chose HTTP/2, which needs the feature `http2`"
                    )));
                }
            } else {
                let (sender, conn) = http1::handshake::<_, Body>(io)
                    .await
                    .map_err(handshake_failed)?;
                (SendRequest::H1(sender), Box::pin(conn))
            };
            let ended = end.clone();
            self.rt.spawn(Box::pin(async move {
                match select(conn, killed.cancelled()).await {
                    Either::Left((Err(e), _)) => {
                        tracing::debug!(target: "mcp", error = %e, "HTTP client connection ended with an error");
                        ended.record(&e);
                    }
                    Either::Left((Ok(()), _)) => {}
                    Either::Right(_) => {
                        tracing::debug!(target: "mcp", "HTTP client connection closed: its exchange was given up");
                    }
                }
                ended.ended.cancel();
            }));
            Ok((sender, Kill(Some(kill)), end))
        })
        .await
    }

    /// An idle HTTP/1.1 connection to `key` (taken out of the pool), or the HTTP/2 one (a
    /// clone of its sender: it stays in the pool for every exchange, which cannot end it).
    fn pooled(&self, key: &HostPort) -> Option<(SendRequest, Kill)> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(pos) = pool.iter().rposition(|(k, _, _)| k == key) {
            #[cfg(feature = "http2")]
            if let Some((_, SendRequest::H2(sender), _)) = pool.get(pos) {
                if !sender.is_closed() {
                    return Some((SendRequest::H2(sender.clone()), Kill(None)));
                }
                pool.swap_remove(pos);
                continue;
            }
            let (_, mut sender, kill) = pool.swap_remove(pos);
            let kill = Kill(Some(kill));
            if sender.ready_now() {
                return Some((sender, kill));
            }
        }
        None
    }

    /// Keeps a new HTTP/2 connection in the pool from its start (every exchange shares it);
    /// the returned sender is the exchange's, with no kill switch of its own.
    #[cfg(feature = "http2")]
    fn share_h2(&self, key: &HostPort, sender: SendRequest, kill: Kill) -> (SendRequest, Kill) {
        let SendRequest::H2(h2) = sender else {
            return (sender, kill);
        };
        if let Some(token) = kill.disarm() {
            let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
            pool.push((key.clone(), SendRequest::H2(h2.clone()), token));
        }
        (SendRequest::H2(h2), Kill(None))
    }

    fn release(&self, lease: Lease) {
        let Lease { key, sender, kill } = lease;
        // An HTTP/2 connection never left the pool.
        if sender.is_h2() || sender.is_closed() || self.shutdown.is_cancelled() {
            return;
        }
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < self.options.max_idle_connections
            && let Some(kill) = kill.disarm()
        {
            pool.push((key, sender, kill));
        }
    }

    /// The request for hyper: origin-form path, `Host`, the policy's headers, then the
    /// application's (which cannot replace the transport's own).
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
        if !headers.contains_key(AUTHORIZATION) {
            for (name, value) in self.oauth_headers(&method, target) {
                headers.insert(name, value);
            }
        }
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
        // retry it on a fresh connection. One the server closed just after the request went
        // out (its idle timeout crossing the request on the wire) fails with nothing read: the
        // request is sent again on a fresh connection only when doing it twice is harmless
        // (see `replayable`, decided only then); a tool call is never sent twice.
        let mut replayed = false;
        let mut fresh = None;
        loop {
            let (mut sender, kill) = match self.pooled(&key) {
                Some(s) => s,
                None => {
                    let (sender, kill, end) = self.connect(target).await?;
                    fresh = Some(end);
                    #[cfg(feature = "http2")]
                    let (sender, kill) = self.share_h2(&key, sender, kill);
                    (sender, kill)
                }
            };
            if sender.is_h2() {
                // HTTP/2 requests carry `:scheme` and `:authority`: the absolute form.
                if let Ok(uri) = target.absolute().parse() {
                    *req.uri_mut() = uri;
                }
            }
            // What a pooled connection may need to send again (its body shares the bytes).
            let copy = (fresh.is_none() && !replayed).then(|| copy_request(&req));
            let sent = self
                .timed(timeout, what, async {
                    Ok(sender.try_send_request(req).await)
                })
                .await?;
            match sent {
                Ok(resp) => return Ok((resp, Lease { key, sender, kill })),
                Err(mut e) => match e.take_message() {
                    Some(r) if fresh.is_none() => req = r,
                    None if fresh.is_none() && closed_unanswered(e.error()) => {
                        let Some(copy) = copy.filter(replayable) else {
                            return Err(transport_error(format!(
                                "{what}: the connection closed before the response (the \
                                 request may have been received; not sent again): {}",
                                e.into_error()
                            )));
                        };
                        tracing::debug!(
                            "{what}: a pooled connection closed unanswered; sent again"
                        );
                        replayed = true;
                        req = copy;
                    }
                    _ => {
                        let mut msg = format!("{what}: {}", e.into_error());
                        // A new connection that failed its first request: what ended it (a
                        // TLS alert after the handshake, such as a refused client
                        // certificate) says more than hyper's "canceled".
                        if let Some(end) = &fresh
                            && let Some(reason) = end.reason(self).await
                        {
                            msg = format!("{what}: the connection failed: {reason}");
                        }
                        if !target.secure && msg.contains("invalid HTTP version") {
                            msg.push_str(" (does the server speak TLS? an https:// URL)");
                        }
                        return Err(transport_error(msg));
                    }
                },
            }
        }
    }

    // --------------------------------------------------------------- authorization

    /// Without OAuth (feature `oauth`) no request carries a kept token.
    #[cfg(not(feature = "oauth"))]
    fn oauth_headers(&self, _method: &Method, _target: &Target) -> Vec<(HeaderName, HeaderValue)> {
        Vec::new()
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

    /// The headers presenting the access token OAuth keeps for the server on a `method`
    /// request to `target`: `Authorization` (`Bearer` or `DPoP`), and a fresh `DPoP` proof
    /// for a DPoP-bound token. None without a token (or when no proof can be made: the
    /// server's 401 then starts an authorization).
    #[cfg(feature = "oauth")]
    fn oauth_headers(&self, method: &Method, target: &Target) -> Vec<(HeaderName, HeaderValue)> {
        let Some(oauth) = self.options.oauth.as_ref() else {
            return Vec::new();
        };
        let mut jti = [0u8; 16];
        if oauth.client.uses_dpop() {
            match (oauth.entropy)() {
                Ok(e) => jti = e.state,
                Err(e) => {
                    tracing::warn!(target: "mcp", error = %e, "no random bytes for a DPoP proof");
                    return Vec::new();
                }
            }
        }
        let built = oauth.client.request_headers(
            self.url.url.as_str(),
            method.as_str(),
            target.url.as_str(),
            SystemTime::now(),
            &jti,
        );
        let headers = match built {
            Ok(Some(h)) => h,
            Ok(None) => return Vec::new(),
            Err(e) => {
                tracing::warn!(target: "mcp", error = %e, "the access token cannot be presented");
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(2);
        if let Ok(v) = HeaderValue::try_from(headers.authorization) {
            out.push((AUTHORIZATION, v));
        }
        if let Some(proof) = headers.dpop
            && let Ok(v) = HeaderValue::try_from(proof)
        {
            out.push((DPOP, v));
        }
        out
    }

    /// The `Authorization` value of the kept token (to tell whether another request renewed
    /// it meanwhile).
    #[cfg(feature = "oauth")]
    fn oauth_authorization(&self) -> Option<String> {
        let oauth = self.options.oauth.as_ref()?;
        let a = oauth.client.authorization(self.url.url.as_str())?;
        (!a.tokens.is_expired(SystemTime::now()))
            .then(|| format!("{} {}", a.tokens.token_type.as_str(), a.tokens.access_token))
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

    /// Sends an MCP request with the current access token (renewed first when it is about to
    /// expire); when the server asks for a DPoP nonce, sends it again once with the nonce;
    /// when it asks for authorization, authorizes and sends it again (at most
    /// [`MAX_AUTHORIZATIONS`] times). A refusal after that is returned as it is, for the
    /// policy's status error.
    #[cfg(feature = "oauth")]
    async fn send_authorized(
        &self,
        target: &Target,
        method: Method,
        body: Bytes,
        headers: HeaderMap,
    ) -> Result<(Response<Incoming>, Lease), Error> {
        let mut rounds = 0;
        let mut nonce_rounds = 0;
        loop {
            self.renew_if_needed(&format!("{method} {}", target.url))
                .await;
            let mut h = headers.clone();
            let used = self.oauth_authorization();
            for (name, value) in self.oauth_headers(&method, target) {
                h.insert(name, value);
            }
            let (resp, lease) = self.send(target, method.clone(), body.clone(), h).await?;
            let nonce = resp
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let (Some(oauth), Some(nonce)) = (self.options.oauth.as_ref(), &nonce) {
                oauth.client.dpop_nonce(target.url.as_str(), nonce);
            }
            let challenge = match self.auth_challenge(&resp) {
                Some(c) => c,
                None => return Ok((resp, lease)),
            };
            // RFC 9449 §9: the resource wants a proof with its nonce (now kept).
            let wants_nonce = resp.status() == StatusCode::UNAUTHORIZED
                && challenge.error.as_deref() == Some("use_dpop_nonce")
                && nonce.is_some()
                && self
                    .options
                    .oauth
                    .as_ref()
                    .is_some_and(|o| o.client.uses_dpop());
            if wants_nonce && nonce_rounds < MAX_NONCE_RETRIES {
                nonce_rounds += 1;
                let _ = resp.into_body().collect().await;
                self.release(lease);
                continue;
            }
            if rounds >= MAX_AUTHORIZATIONS {
                return Ok((resp, lease));
            }
            rounds += 1;
            let what = format!("{method} {}: HTTP {}", target.url, resp.status());
            let _ = resp.into_body().collect().await;
            self.release(lease);
            self.authorize(&what, &challenge, used).await?;
        }
    }

    /// Renews the kept token before a request when it is about to expire and can be renewed
    /// without a user ([`OAuthClient::needs_renewal`](crate::oauth::OAuthClient::needs_renewal)).
    /// A failed renewal is not an error (the token still works until it expires; a 401 then
    /// authorizes anew) and is not tried again for the same token.
    #[cfg(feature = "oauth")]
    async fn renew_if_needed(&self, what: &str) {
        let Some(oauth) = self.options.oauth.as_ref() else {
            return;
        };
        let url = self.url.url.as_str();
        let kept = || {
            oauth
                .client
                .authorization(url)
                .map(|a| a.tokens.access_token)
        };
        let due = || {
            oauth.client.needs_renewal(url, SystemTime::now())
                && *self.renew_failed.lock().unwrap_or_else(|e| e.into_inner()) != kept()
        };
        if !due() {
            return;
        }
        let _guard = self.auth.lock().await;
        if !due() {
            return; // another request renewed it meanwhile
        }
        let before = kept();
        let outcome = match (oauth.entropy)() {
            Ok(entropy) => match oauth.client.renew(url, &entropy) {
                Ok(flow) => self
                    .run_flow(what, flow)
                    .await
                    .map_err(|e| e.into_error(what)),
                Err(e) => Err(unauthorized(what, &e)),
            },
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => tracing::debug!(target: "mcp", "renewed the access token before it expired"),
            Err(e) => {
                tracing::debug!(target: "mcp", error = %e, "renewing the access token failed");
                *self.renew_failed.lock().unwrap_or_else(|e| e.into_inner()) = before;
            }
        }
    }

    /// Runs one authorization flow after `challenge` (unless another request renewed the token
    /// since `used` was sent), its requests over this transport's connections.
    #[cfg(feature = "oauth")]
    async fn authorize(
        &self,
        what: &str,
        challenge: &Challenge,
        used: Option<String>,
    ) -> Result<(), Error> {
        let Some(oauth) = self.options.oauth.as_ref() else {
            return Err(Error::new(ErrorKind::Unauthorized, what.to_owned()));
        };
        let _guard = self.auth.lock().await;
        if self.oauth_authorization() != used {
            return Ok(()); // another request authorized meanwhile: try its token
        }
        if let Some(e) = self
            .grant_refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Err(unauthorized(what, &e));
        }
        tracing::debug!(target: "mcp", %what, ?challenge, "authorizing");
        let entropy = (oauth.entropy)()?;
        let flow = oauth
            .client
            .authorize(self.url.url.as_str(), challenge, &entropy)
            .map_err(|e| unauthorized(what, &e))?;
        self.run_flow(what, flow).await.map_err(|e| {
            // A grant without a user that the authorization server refused is not run
            // again on this transport (SEP-1933: errors are surfaced, not retried).
            if let FlowError::OAuth(
                e @ crate::oauth::OAuthError::Http {
                    what: "token request",
                    ..
                },
            ) = &e
                && !oauth.client.config().grant_type().is_interactive()
            {
                *self.grant_refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.clone());
            }
            e.into_error(what)
        })
    }

    /// Carries out `flow`'s requests until it is done.
    #[cfg(feature = "oauth")]
    async fn run_flow(&self, what: &str, mut flow: AuthFlow) -> Result<(), FlowError> {
        loop {
            let step = flow.step(SystemTime::now())?;
            let req = match step {
                Step::Send(req) => req,
                Step::Authorize(req) => match &self.options.auth_handler {
                    Some(handler) => {
                        let callback = handler
                            .0
                            .authorize(req.uri().to_string())
                            .await
                            .map_err(FlowError::Other)?;
                        flow.handle_callback(&callback)?;
                        continue;
                    }
                    None => req,
                },
                Step::Done(_) => {
                    tracing::debug!(target: "mcp", "authorized");
                    return Ok(());
                }
            };
            let check = flow.address_check();
            match self.auth_exchange(what, req, check).await {
                Ok(reply) => flow.handle_response(SystemTime::now(), reply)?,
                Err(e) => flow.handle_error(e.message())?,
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
        check: Option<super::AddressCheck>,
    ) -> Result<Response<Vec<u8>>, Error> {
        let fail = |msg: String| Error::new(ErrorKind::Unauthorized, format!("{what}: {msg}"));
        let (parts, body) = req.into_parts();
        let step = format!("authorization: {} {}", parts.method, parts.uri);
        let mut target =
            Target::parse(&parts.uri.to_string()).map_err(|e| fail(format!("{step}: {e}")))?;
        target.check = check;
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
}

/// Why an authorization flow failed: the flow's error, or the application's (its
/// authorization handler's).
#[cfg(feature = "oauth")]
enum FlowError {
    OAuth(crate::oauth::OAuthError),
    Other(Error),
}

#[cfg(feature = "oauth")]
impl From<crate::oauth::OAuthError> for FlowError {
    fn from(e: crate::oauth::OAuthError) -> Self {
        FlowError::OAuth(e)
    }
}

#[cfg(feature = "oauth")]
impl FlowError {
    fn into_error(self, what: &str) -> Error {
        match self {
            FlowError::OAuth(e) => unauthorized(what, &e),
            FlowError::Other(e) => e,
        }
    }
}

/// The method of a message whose method is not one the session names statically.
fn method_of(message: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct M {
        method: Option<String>,
    }
    serde_json::from_slice::<M>(message).ok()?.method
}

/// Hands `r` to the connection, waiting while its reports are full; `Err` once it is gone.
async fn report(reports: &mut mpsc::Sender<Report>, r: Report) -> Result<(), ()> {
    futures_util::future::poll_fn(|cx| reports.poll_ready(cx))
        .await
        .map_err(|_| ())?;
    reports.start_send(r).map_err(|_| ())
}

/// Whether sending `req` twice does no harm: a `GET` (a stream opened again), a `DELETE` (a
/// session ended again), or a `POST` whose JSON-RPC messages are all notifications or
/// responses (the server takes a repeated response to one of its requests as late, and the
/// notifications MCP defines are idempotent). A `POST` carrying a request is not: the server
/// may have run it.
fn replayable(req: &Request<Body>) -> bool {
    match *req.method() {
        Method::GET | Method::DELETE | Method::HEAD => true,
        Method::POST => {
            // A `Full` body is one frame, read without waiting.
            let Some(bytes) = full_bytes(req.body()) else {
                return false;
            };
            !mcp_proto::jsonrpc::carries_request(&bytes)
        }
        _ => false,
    }
}

/// The bytes of a `Full` body.
fn full_bytes(body: &Body) -> Option<Bytes> {
    use hyper::body::Body as _;
    let mut body = body.clone();
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    match Pin::new(&mut body).poll_frame(&mut cx) {
        Poll::Ready(Some(Ok(frame))) => frame.into_data().ok(),
        Poll::Ready(None) => Some(Bytes::new()),
        _ => None,
    }
}

/// A copy of `req` (its body shares its bytes).
fn copy_request(req: &Request<Body>) -> Request<Body> {
    let mut copy = Request::new(req.body().clone());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.version_mut() = req.version();
    *copy.headers_mut() = req.headers().clone();
    copy
}

/// Whether a request failed because its connection closed before any of the response came:
/// hyper's incomplete message, or a reset.
fn closed_unanswered(e: &hyper::Error) -> bool {
    if e.is_incomplete_message() {
        return true;
    }
    let mut source = std::error::Error::source(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            );
        }
        source = err.source();
    }
    false
}
