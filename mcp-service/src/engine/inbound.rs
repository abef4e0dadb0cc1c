//! Requests from the peer being handled: their state, their spans, and where their handler
//! futures run.
//!
//! A handler runs on a task of its own where the runtime spawns ([`Runtime::spawn`]), so a
//! handler that is slow to yield delays only itself: the engine keeps reading, writing,
//! cancelling and serving every other request and session. A finished handler's answer waits
//! in a queue the engine takes it from; the engine first carries out every command already
//! queued (what the handler sent before it finished: progress, log messages), so the order on
//! the wire is the order the handler wrote. A runtime that cannot run tasks in the background
//! ([`Runtime::spawns_handlers`] is false: a host with one thread and no executor, a
//! deterministic test) has its handlers polled on the engine's own task instead.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::stream::FuturesUnordered;
use futures_util::task::AtomicWaker;
use mcp_proto::{Error, Instant, RequestId};
use serde_json::value::RawValue;

use crate::cancel::CancellationToken;
use crate::runtime::{BoxFuture, Runtime};
use crate::telemetry::{Direction, Outcome, Telemetry};

/// What a finished (or cancelled: `None`) handler yields, with the tag it was pushed with.
pub(crate) type HandlerOutput<T> = (T, RequestId, Option<Result<Box<RawValue>, Error>>);

/// A request in flight, either way: what its outcome is reported with.
pub(crate) struct Tracked {
    direction: Direction,
    method: Cow<'static, str>,
    started: Instant,
    pub(crate) span: tracing::Span,
}

impl Tracked {
    /// Starts tracking request `id`, with its `mcp.request` span.
    pub(crate) fn new(
        method: Cow<'static, str>,
        direction: Direction,
        id: &RequestId,
        now: Instant,
    ) -> Self {
        Tracked {
            span: request_span(&method, direction, id),
            direction,
            method,
            started: now,
        }
    }

    /// Records the outcome on the request's span and reports it to `telemetry`.
    pub(crate) fn complete(
        &self,
        telemetry: &Telemetry,
        connection: u64,
        id: &RequestId,
        outcome: Outcome,
        now: Instant,
    ) {
        let duration = now - self.started;
        self.span.record("outcome", outcome.as_str());
        self.span
            .record("duration_ms", duration.as_micros() as f64 / 1000.0);
        telemetry.request_completed(
            connection,
            self.direction,
            id,
            &self.method,
            outcome,
            duration,
        );
    }
}

/// A request from the peer being handled.
pub(crate) struct InboundState {
    pub(crate) cancel: CancellationToken,
    pub(crate) tracked: Tracked,
}

/// The `mcp.request` span of a request; `outcome` and `duration_ms` are recorded when it
/// completes, `session` for an HTTP session.
fn request_span(method: &str, direction: Direction, id: &RequestId) -> tracing::Span {
    tracing::debug_span!(
        target: "mcp",
        "mcp.request",
        method = %method,
        direction = direction.as_str(),
        id = %id,
        session = tracing::field::Empty,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
        traceparent = tracing::field::Empty,
        tracestate = tracing::field::Empty,
    )
}

/// The W3C trace context a request carries in `_meta` (`traceparent`, and `tracestate` with
/// it), when its `traceparent` is well formed (`00-<32 hex>-<16 hex>-<2 hex>`, ids not all
/// zero). Requests without it cost one substring search.
pub(crate) fn trace_context(params: Option<&RawValue>) -> Option<(String, Option<String>)> {
    let p = params?.get();
    // `traceparent` lives in `_meta`: a large argument without `_meta` is searched once, by
    // the cheaper scan.
    if !mcp_proto::jsonrpc::mentions_meta(p) || !p.contains("\"traceparent\"") {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        traceparent: Option<String>,
        tracestate: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    let meta = serde_json::from_str::<Params>(p).ok()?.meta?;
    let tp = meta.traceparent?;
    let parts: Vec<&str> = tp.split('-').collect();
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    let valid = matches!(parts.as_slice(), [v, t, s, f]
        if hex(v, 2) && *v != "ff" && hex(t, 32) && hex(s, 16) && hex(f, 2)
            && t.bytes().any(|b| b != b'0') && s.bytes().any(|b| b != b'0'));
    valid.then_some((tp, meta.tracestate))
}

/// A handler future wrapped so that cancellation drops it at once; `tag` says where it
/// belongs (nothing for a connection, the session for the HTTP engine).
pub(crate) struct Guarded<T> {
    pub(crate) tag: T,
    pub(crate) id: Option<RequestId>,
    pub(crate) cancel: CancellationToken,
    pub(crate) inner: BoxFuture<Result<Box<RawValue>, Error>>,
    pub(crate) span: tracing::Span,
}

impl<T: Copy + Unpin> Future for Guarded<T> {
    type Output = HandlerOutput<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<HandlerOutput<T>> {
        let this = &mut *self;
        if this.cancel.is_cancelled() {
            let id = this.id.take().unwrap_or(RequestId::Number(-1));
            return Poll::Ready((this.tag, id, None));
        }
        let _enter = this.span.enter();
        match this.inner.as_mut().poll(cx) {
            Poll::Ready(r) => Poll::Ready((
                this.tag,
                this.id.take().unwrap_or(RequestId::Number(-1)),
                Some(r),
            )),
            Poll::Pending => {
                this.cancel.register(cx.waker());
                Poll::Pending
            }
        }
    }
}

/// Where an engine's handler futures run: each on a spawned task of the runtime, or (a
/// runtime that does not spawn handlers) together on the engine's task. Either way the engine
/// takes finished handlers from [`poll_next`](Self::poll_next).
pub(crate) struct Handlers<R, T> {
    rt: Option<R>,
    local: FuturesUnordered<Guarded<T>>,
    done: Arc<Done<T>>,
    /// Handlers spawned since [`take_spawned`](Self::take_spawned).
    spawned: usize,
}

/// Spawned handlers that finished, for the engine; it is woken when one is added.
struct Done<T> {
    queue: Mutex<Vec<HandlerOutput<T>>>,
    waker: AtomicWaker,
}

impl<R: Runtime, T: Copy + Unpin + Send + 'static> Handlers<R, T> {
    /// Handlers of `rt`, spawned where it spawns handlers.
    pub(crate) fn new(rt: &R) -> Self {
        Handlers {
            rt: rt.spawns_handlers().then(|| rt.clone()),
            local: FuturesUnordered::new(),
            done: Arc::new(Done {
                queue: Mutex::new(Vec::new()),
                waker: AtomicWaker::new(),
            }),
            spawned: 0,
        }
    }

    /// Runs `handler`.
    pub(crate) fn run(&mut self, handler: Guarded<T>) {
        match &self.rt {
            Some(rt) => {
                let done = self.done.clone();
                self.spawned += 1;
                rt.spawn(Box::pin(async move {
                    let out = handler.await;
                    if out.2.is_none() {
                        return; // cancelled: never answered
                    }
                    done.queue
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(out);
                    done.waker.wake();
                }));
            }
            None => self.local.push(handler),
        }
    }

    /// How many handlers were spawned since the last call: the engine lets them run before
    /// it reads more, so that answers go out as requests come in.
    pub(crate) fn take_spawned(&mut self) -> usize {
        std::mem::take(&mut self.spawned)
    }

    /// Moves every handler that finished into `out`. Whatever a handler sent before it
    /// finished is in the session's command queue by then: drain that queue after this, and
    /// before answering, so the answer goes out last.
    pub(crate) fn poll_done(&mut self, cx: &mut Context<'_>, out: &mut Vec<HandlerOutput<T>>) {
        if self.rt.is_some() {
            self.done.waker.register(cx.waker());
            out.append(&mut self.done.queue.lock().unwrap_or_else(|e| e.into_inner()));
        }
        if !self.local.is_empty() {
            while let Poll::Ready(Some(done)) = Pin::new(&mut self.local).poll_next(cx) {
                out.push(done);
            }
        }
    }
}

#[cfg(test)]
mod trace_tests {
    use super::trace_context;
    use serde_json::value::RawValue;

    fn ctx(json: &str) -> Option<(String, Option<String>)> {
        let raw = RawValue::from_string(json.to_owned()).unwrap();
        trace_context(Some(&raw))
    }

    #[test]
    fn w3c_trace_context_from_meta() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        assert_eq!(
            ctx(&format!(
                r#"{{"_meta":{{"traceparent":"{tp}","tracestate":"a=1"}}}}"#
            )),
            Some((tp.to_owned(), Some("a=1".to_owned())))
        );
        assert_eq!(
            ctx(&format!(r#"{{"_meta":{{"traceparent":"{tp}"}}}}"#))
                .unwrap()
                .1,
            None
        );
        for bad in [
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        ] {
            assert_eq!(
                ctx(&format!(r#"{{"_meta":{{"traceparent":"{bad}"}}}}"#)),
                None,
                "{bad}"
            );
        }
        assert_eq!(ctx(r#"{"name":"traceparent"}"#), None);
        assert_eq!(trace_context(None), None);
    }
}
