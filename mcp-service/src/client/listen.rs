//! The client side of `subscriptions/listen` (2026-07-28): the one listen stream behind
//! [`Client::subscribe`](super::Client::subscribe) and
//! [`Client::notifications`](super::Client::notifications) for a client of the stateless era.
//!
//! One stream carries everything the application asked for: the three list changes (once it
//! reads [`notifications`](super::Client::notifications) or subscribes to anything) and every
//! subscribed URI. Changing the set of URIs reopens it: a new stream with the new filter goes
//! out, and once the server acknowledged it the old one is cancelled. Until that
//! acknowledgement the old stream delivers; from it on only the new one does (what the old
//! stream still carries is dropped by its subscription id), so the switch neither loses nor
//! repeats a notification. A stream the server ends (its result at shutdown, falling behind, a
//! broken HTTP reply) is reopened after [`REOPEN_DELAY`], and the client's cached lists are
//! forgotten: what changed while nobody listened is unknown.
//!
//! A call that became a task (tasks extension) adds the task to the stream's `taskIds` while
//! it follows it ([`TaskWatch`]): each `notifications/tasks` for it wakes the follower's next
//! `tasks/get` early. The task leaves the set when its follower ends, without a reopen of its
//! own (the next one leaves it out).

use std::collections::{BTreeSet, HashMap};
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};

use futures_channel::oneshot;
use futures_util::future::{Either, select};
use mcp_proto::schema::{SubscriptionFilter, SubscriptionsListenRequestParams};
use mcp_proto::{Duration, Error, ErrorKind, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::mrtr::TaskWatch;
use crate::peer::{Peer, ResponseFuture};
use crate::runtime::{BoxFuture, Runtime};

/// How long a new stream may take to be acknowledged.
const ACK_WAIT: Duration = Duration::from_secs(30);
/// The pause before a stream the server ended is opened again.
const REOPEN_DELAY: Duration = Duration::from_millis(500);
/// The acknowledgement that opens a stream.
pub(super) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// What the listen streams need of the runtime.
pub(super) trait Tasks: Send + Sync + 'static {
    fn spawn(&self, fut: BoxFuture<()>);
    fn sleep(&self, d: Duration) -> BoxFuture<()>;
}

impl<R: Runtime> Tasks for R {
    fn spawn(&self, fut: BoxFuture<()>) {
        Runtime::spawn(self, fut);
    }
    fn sleep(&self, d: Duration) -> BoxFuture<()> {
        self.sleep_until(self.now() + d)
    }
}

/// A stream being opened.
struct Opening {
    /// Told when the stream is acknowledged, or ends first.
    acked: oneshot::Sender<Result<(), Error>>,
    /// The task holding the stream (its stopper dropped: the request is cancelled on the wire).
    held: Held,
}

/// A stream's task: its generation, its stopper, and its end (the request dropped, its
/// cancellation queued).
struct Held {
    generation: u64,
    stop: oneshot::Sender<()>,
    done: oneshot::Receiver<()>,
}

#[derive(Default)]
struct State {
    /// Someone wants the stream (notifications or a subscription).
    active: bool,
    uris: BTreeSet<String>,
    /// The tasks being followed, each with its follower's wake-up.
    tasks: HashMap<String, futures_channel::mpsc::Sender<()>>,
    /// The stream whose messages are delivered: the last one acknowledged.
    delivering: Option<RequestId>,
    /// The task holding that stream.
    current: Option<Held>,
    /// The stream it replaced, until the opener retires it.
    retiring: Option<Held>,
    opening: Option<Opening>,
    next_generation: u64,
}

/// The listen stream of one client connection (see the module doc).
pub(super) struct Listen {
    peer: Peer,
    tasks: Arc<dyn Tasks>,
    state: Mutex<State>,
    /// One stream is opened at a time.
    reopening: futures_util::lock::Mutex<()>,
    /// Forgets the client's cached lists.
    on_gap: Box<dyn Fn() + Send + Sync>,
}

impl Listen {
    pub(super) fn new(
        peer: Peer,
        tasks: Arc<dyn Tasks>,
        on_gap: Box<dyn Fn() + Send + Sync>,
    ) -> Arc<Self> {
        Arc::new(Listen {
            peer,
            tasks,
            state: Mutex::new(State::default()),
            reopening: futures_util::lock::Mutex::new(()),
            on_gap,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends every stream (each cancelled on the wire), then runs `then` (closing the
    /// connection): a server sees the cancellations before the connection ends.
    pub(super) fn stop_then(&self, then: impl FnOnce() + Send + 'static) {
        let done: Vec<oneshot::Receiver<()>> = {
            let mut st = self.lock();
            st.active = false;
            let opening = st.opening.take().map(|o| o.held);
            [st.current.take(), st.retiring.take(), opening]
                .into_iter()
                .flatten()
                .map(|held| {
                    drop(held.stop);
                    held.done
                })
                .collect()
        };
        if done.is_empty() {
            then();
            return;
        }
        self.tasks.spawn(Box::pin(async move {
            for d in done {
                let _ = d.await;
            }
            then();
        }));
    }

    /// Opens the stream in the background unless it is wanted already.
    pub(super) fn start(self: &Arc<Self>) {
        let mut st = self.lock();
        if st.active {
            return;
        }
        st.active = true;
        drop(st);
        let me = self.clone();
        self.tasks.spawn(Box::pin(async move {
            if let Err(e) = me.reopen(true).await {
                tracing::debug!(target: "mcp", error = %e, "subscriptions/listen not opened");
            }
        }));
    }

    /// Changes the subscribed URIs with `change` (whether it changed them) and, if the stream
    /// must change, reopens it and waits for the new one's acknowledgement.
    pub(super) async fn update(
        self: &Arc<Self>,
        change: impl FnOnce(&mut BTreeSet<String>) -> bool,
    ) -> Result<(), Error> {
        let reopen = {
            let mut st = self.lock();
            st.active = true;
            change(&mut st.uris) || st.current.is_none()
        };
        if !reopen {
            return Ok(());
        }
        self.reopen(false).await
    }

    /// Forgets `uri` without reopening (its subscription failed).
    pub(super) fn forget(&self, uri: &str) {
        self.lock().uris.remove(uri);
    }

    /// Opens a stream with the current filter and waits for its acknowledgement, which
    /// retires the stream before it. With `only_if_missing`, nothing is done while a stream
    /// is open.
    async fn reopen(self: &Arc<Self>, only_if_missing: bool) -> Result<(), Error> {
        let _one = self.reopening.lock().await;
        if self.peer.is_closed() {
            return Err(Error::new(
                ErrorKind::TransportClosed,
                "the connection is closed",
            ));
        }
        let (acked, stop_rx, generation, params) = {
            let mut st = self.lock();
            if !st.active || (only_if_missing && st.current.is_some()) {
                return Ok(());
            }
            let generation = st.next_generation;
            st.next_generation += 1;
            let (acked_tx, acked) = oneshot::channel();
            let (stop, stop_rx) = oneshot::channel();
            let (done_tx, done) = oneshot::channel();
            st.opening = Some(Opening {
                acked: acked_tx,
                held: Held {
                    generation,
                    stop,
                    done,
                },
            });
            let tasks: BTreeSet<&String> = st.tasks.keys().collect();
            (
                acked,
                (stop_rx, done_tx),
                generation,
                params(&st.uris, &tasks),
            )
        };
        let request = self
            .peer
            .request_with(mcp_proto::schema::methods::SUBSCRIPTIONS_LISTEN, &params)
            .into_future();
        let (stop_rx, done_tx) = stop_rx;
        self.tasks.spawn(Box::pin(
            self.clone().hold(generation, request, stop_rx, done_tx),
        ));
        let outcome = match select(acked, self.tasks.sleep(ACK_WAIT)).await {
            Either::Left((Ok(outcome), _)) => outcome,
            Either::Left((Err(_), _)) => Err(Error::new(
                ErrorKind::TransportClosed,
                "the connection closed",
            )),
            Either::Right(_) => Err(Error::new(
                ErrorKind::Timeout,
                "the server did not acknowledge subscriptions/listen",
            )),
        };
        // Not acknowledged: the stream is given up. Acknowledged: the one it replaced is
        // retired. Either way, once the task of that stream dropped its request (so its
        // cancellation goes out before anything this side sends next).
        let retired = {
            let mut st = self.lock();
            match &st.opening {
                Some(o) if o.held.generation == generation => st.opening.take().map(|o| o.held),
                _ => st.retiring.take(),
            }
        };
        if let Some(Held { stop, done, .. }) = retired {
            drop(stop);
            let _ = done.await;
        }
        outcome
    }

    /// The task holding stream `generation` until it is stopped or ends.
    async fn hold(
        self: Arc<Self>,
        generation: u64,
        request: ResponseFuture,
        stop: oneshot::Receiver<()>,
        done: oneshot::Sender<()>,
    ) {
        match select(request, stop).await {
            Either::Left((outcome, _)) => self.ended(generation, outcome),
            // Stopped: dropping the request cancels it on the wire.
            Either::Right((_, request)) => drop(request),
        }
        drop(done);
    }

    /// Stream `generation` ended on the server's side (or the connection's).
    fn ended(self: &Arc<Self>, generation: u64, outcome: Result<Box<RawValue>, Error>) {
        let mut st = self.lock();
        if st
            .opening
            .as_ref()
            .is_some_and(|o| o.held.generation == generation)
        {
            if let Some(o) = st.opening.take() {
                let e = outcome.err().unwrap_or_else(|| {
                    Error::new(
                        ErrorKind::ProtocolInvalid,
                        "the server ended subscriptions/listen before acknowledging it",
                    )
                });
                let _ = o.acked.send(Err(e));
            }
            return;
        }
        if st
            .current
            .as_ref()
            .is_none_or(|h| h.generation != generation)
        {
            return; // a stream already retired
        }
        st.current = None;
        st.delivering = None;
        let again = st.active && !self.peer.is_closed();
        drop(st);
        tracing::debug!(target: "mcp", outcome = ?outcome.as_ref().map(|_| ()), "the server ended subscriptions/listen");
        (self.on_gap)();
        if again {
            let me = self.clone();
            self.tasks.spawn(Box::pin(async move {
                me.tasks.sleep(REOPEN_DELAY).await;
                if let Err(e) = me.reopen(true).await {
                    tracing::debug!(target: "mcp", error = %e, "subscriptions/listen not reopened");
                }
            }));
        }
    }

    /// The server acknowledged stream `id`: it is the one delivering from now on, and the
    /// stream before it is retired.
    pub(super) fn on_ack(&self, id: RequestId) {
        let mut st = self.lock();
        let Some(o) = st.opening.take() else {
            return; // an acknowledgement nobody waits for (a stream given up)
        };
        st.delivering = Some(id);
        let replaced = st.current.replace(o.held);
        // Retired by the opener (a stream still retiring from before is stopped now).
        let stale = std::mem::replace(&mut st.retiring, replaced);
        drop(st);
        drop(stale);
        let _ = o.acked.send(Ok(()));
    }

    /// Whether a message of stream `id` is delivered (not one of a retired stream).
    pub(super) fn delivers(&self, id: &RequestId) -> bool {
        self.lock().delivering.as_ref() == Some(id)
    }

    /// A status notification of task `task_id` arrived: its follower wakes.
    pub(super) fn on_task(&self, task_id: &str) {
        if let Some(tx) = self.lock().tasks.get_mut(task_id) {
            // Full: a wake-up is pending already.
            let _ = tx.try_send(());
        }
    }
}

impl TaskWatch for Arc<Listen> {
    fn watch(&self, task_id: &str) -> Option<futures_channel::mpsc::Receiver<()>> {
        if self.peer.is_closed() {
            return None;
        }
        let (tx, rx) = futures_channel::mpsc::channel(0);
        {
            let mut st = self.lock();
            st.active = true;
            st.tasks.insert(task_id.to_owned(), tx);
        }
        // The stream is reopened with the task in its filter, in the background (the
        // follower polls meanwhile).
        let me = self.clone();
        self.tasks.spawn(Box::pin(async move {
            if let Err(e) = me.reopen(false).await {
                tracing::debug!(target: "mcp", error = %e, "subscriptions/listen not reopened for a task");
            }
        }));
        Some(rx)
    }

    fn unwatch(&self, task_id: &str) {
        self.lock().tasks.remove(task_id);
    }
}

/// The params of a stream for `uris` and `tasks`: every list change, those URIs, those tasks.
fn params(uris: &BTreeSet<String>, tasks: &BTreeSet<&String>) -> SubscriptionsListenRequestParams {
    SubscriptionsListenRequestParams {
        notifications: SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(true),
            resource_subscriptions: (!uris.is_empty()).then(|| uris.iter().cloned().collect()),
            task_ids: (!tasks.is_empty()).then(|| tasks.iter().map(|t| (*t).clone()).collect()),
        },
        meta: None,
    }
}

/// The task a `notifications/tasks` names.
pub(super) fn task_id(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Named {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    serde_json::from_str::<Named>(params?.get())
        .ok()
        .map(|n| n.task_id)
}

/// The listen stream a notification's params name, if any.
pub(super) fn subscription_id(params: Option<&RawValue>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Tag {
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        id: Option<RequestId>,
    }
    #[derive(Deserialize)]
    struct Tagged {
        #[serde(rename = "_meta")]
        meta: Option<Tag>,
    }
    let p = params?.get();
    if !p.contains("subscriptionId") {
        return None;
    }
    serde_json::from_str::<Tagged>(p).ok()?.meta?.id
}
