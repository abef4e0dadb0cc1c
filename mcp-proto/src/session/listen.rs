//! `subscriptions/listen` (2026-07-28) on both sides of a session: the long-lived request that
//! carries the notifications a client opted in to, in place of `resources/subscribe` and the
//! HTTP GET stream.
//!
//! The rules, all here:
//!
//! - **Method.** A server whose capabilities promise nothing a stream could carry (no
//!   `tools`/`prompts`/`resources` `listChanged`, no `resources.subscribe`) does not have the
//!   method: `-32601`. The request's `params.notifications` (a [`SubscriptionFilter`]) is
//!   required: `-32602` when missing or malformed. A listen request is never part of a batch
//!   (`-32600`).
//! - **What is honoured.** Each list flag only when the server declares that list's
//!   `listChanged`; `resourceSubscriptions` only with `resources.subscribe`; `taskIds` only
//!   with the tasks extension (`extensions["io.modelcontextprotocol/tasks"]`, SEP-2663), whose
//!   `notifications/tasks` a stream then carries for those tasks. A [`Subscription`] is that
//!   honoured subset.
//! - **Acknowledgement first.** The session answers the request at once with
//!   `notifications/subscriptions/acknowledged`, whose `notifications` is the honoured subset,
//!   before anything else of the stream; the request then stays in flight (it is handed to the
//!   application as an [`Event::Request`], which may hold it or ignore
//!   it) for as long as the stream lives.
//! - **Tagging.** Every message of the stream — the acknowledgement, each change, the final
//!   result — carries `_meta["io.modelcontextprotocol/subscriptionId"]`, the listen request's
//!   own JSON-RPC id, and is related to that request (HTTP puts it on the request's reply).
//! - **Delivery.** The application announces a [`Change`] with
//!   [`Session::publish`]; it reaches exactly the listeners whose subscription
//!   [wants](Subscription::wants) it (a prompts-only stream never hears of tools). A
//!   `resources/updated` goes to listeners subscribed to that exact URI, a task's status to
//!   listeners that named that task.
//! - **End.** The client cancels (`notifications/cancelled` naming the request; over HTTP it
//!   closes the reply): the listener is gone, nothing is answered. The server ends a stream
//!   gracefully by [`respond`](Session::respond)ing to the request (the session writes the
//!   `SubscriptionsListenResult`, whatever result the application passed) or by closing the
//!   session (every stream then gets that result, also when the input ends); by
//!   [`respond_error`](Session::respond_error) with that error (an application that does not
//!   know the method and answers `-32601` ends the stream so, after its acknowledgement).
//! - **Bounds.** At most [`Config::max_listeners`](super::Config::max_listeners) streams per
//!   session (one more is refused with `-32008`); each is also one request in flight
//!   ([`Config::max_inbound_in_flight`](super::Config::max_inbound_in_flight)). A listener may have at most
//!   [`Config::listener_backlog`](super::Config::listener_backlog) messages queued and not yet
//!   transmitted; a change that would exceed it ends the stream instead: the session sends
//!   `notifications/cancelled` naming the listen request (the one use the revision allows a
//!   server; over HTTP the endpoint closes the reply instead) and reports
//!   [`Event::Cancelled`], so the application stops holding it. A
//!   client that sees its stream end re-lists what it cares about and listens again.
//! - **Client side.** A `subscriptions/listen` this side sends has no default timeout (it
//!   lasts as long as the subscription), and a `notifications/cancelled` from the server naming
//!   it ends it with [`ErrorKind::RequestCancelled`].

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::value::RawValue;

use super::Session;
use super::caps::CapSet;
use super::config::raw_from_vec;
use super::encode::Outgoing;
use super::event::Event;
use crate::error::{Error, ErrorKind};
use crate::id::RequestId;
use crate::jsonrpc;
use crate::schema::meta::SUBSCRIPTION_ID_KEY;
use crate::schema::resources::{SubscriptionFilter, SubscriptionsListenRequestParams};

/// The method that opens a listen stream.
pub(super) const LISTEN: &str = crate::schema::methods::SUBSCRIPTIONS_LISTEN;
/// The first message of a listen stream.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// Why a listener that fell behind was ended.
const FELL_BEHIND: &str = "the subscription fell behind: too many notifications not yet sent";

/// A change a server announces to the listen streams that want it ([`Session::publish`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
    /// `notifications/tasks` (tasks extension, SEP-2663): task `task_id` changed; `task` is
    /// its state as one JSON object (the `DetailedTask` of `tasks/get`: `taskId`, `status`,
    /// the timestamps, inlined `result`/`error`/`inputRequests` as its status has them),
    /// without `resultType` and `_meta` (the stream adds its subscription id). Text that is not
    /// a JSON object is sent as `{"taskId": task_id}` alone.
    TaskStatus {
        /// The task.
        task_id: String,
        /// Its state, a JSON object.
        task: String,
    },
}

impl Change {
    /// The notification's method.
    pub fn method(&self) -> &'static str {
        match self {
            Change::ToolsListChanged => "notifications/tools/list_changed",
            Change::PromptsListChanged => "notifications/prompts/list_changed",
            Change::ResourcesListChanged => "notifications/resources/list_changed",
            Change::ResourceUpdated(_) => "notifications/resources/updated",
            Change::TaskStatus { .. } => crate::schema::tasks::extension::NOTIFICATION_TASKS,
        }
    }

    /// The notification's params on the stream of listen request `id`: the change's own
    /// fields and the subscription id in `_meta`.
    pub fn params(&self, id: &RequestId) -> Box<RawValue> {
        let mut b = Vec::with_capacity(80);
        b.push(b'{');
        match self {
            Change::ResourceUpdated(uri) => {
                b.extend_from_slice(b"\"uri\":");
                jsonrpc::write_json_str(&mut b, uri);
                b.push(b',');
            }
            Change::TaskStatus { task_id, task } => match object_fields(task) {
                Some("") => {}
                Some(fields) => {
                    b.extend_from_slice(fields.as_bytes());
                    b.push(b',');
                }
                None => {
                    b.extend_from_slice(b"\"taskId\":");
                    jsonrpc::write_json_str(&mut b, task_id);
                    b.push(b',');
                }
            },
            _ => {}
        }
        write_meta(&mut b, id);
        b.push(b'}');
        raw_from_vec(b)
    }
}

/// The members of the JSON object `text` (what lies between its braces, trimmed), if it is
/// one.
fn object_fields(text: &str) -> Option<&str> {
    let t = text.trim();
    if serde_json::from_str::<serde::de::IgnoredAny>(t).is_err() {
        return None;
    }
    Some(t.strip_prefix('{')?.strip_suffix('}')?.trim())
}

/// What one listen stream carries: the notifications its client asked for, less those the
/// server does not offer (the subset its acknowledgement states; see the [module](self)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscription {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    pub resources: BTreeSet<String>,
    /// `notifications/tasks` for these task ids (tasks extension).
    pub tasks: BTreeSet<String>,
}

impl Subscription {
    /// The subscription a `subscriptions/listen` request with `params` gets from a server
    /// declaring `server_capabilities`: what it asked for that the server offers (a URI to
    /// watch only with `resources.subscribe`, a list change only with its `listChanged`).
    ///
    /// # Errors
    /// -32602 [`ErrorKind::InvalidParams`] when the params
    /// hold no valid `notifications` filter.
    pub fn of_request(params: &RawValue, server_capabilities: &RawValue) -> Result<Self, Error> {
        Subscription::parse(params, &CapSet::parse(server_capabilities))
    }

    pub(crate) fn parse(params: &RawValue, caps: &CapSet) -> Result<Self, Error> {
        let p: SubscriptionsListenRequestParams = serde_json::from_str(params.get())
            .map_err(|e| Error::invalid_params(alloc::format!("invalid `notifications`: {e}")))?;
        Ok(Subscription::honoured(&p.notifications, caps))
    }

    fn honoured(asked: &SubscriptionFilter, caps: &CapSet) -> Self {
        let on = |flag: Option<bool>, offered: bool| flag == Some(true) && offered;
        Subscription {
            tools_list_changed: on(asked.tools_list_changed, caps.tools_list_changed),
            prompts_list_changed: on(asked.prompts_list_changed, caps.prompts_list_changed),
            resources_list_changed: on(asked.resources_list_changed, caps.resources_list_changed),
            resources: match &asked.resource_subscriptions {
                Some(uris) if caps.resources_subscribe => uris.iter().cloned().collect(),
                _ => BTreeSet::new(),
            },
            tasks: match &asked.task_ids {
                Some(ids) if caps.tasks_extension => ids.iter().cloned().collect(),
                _ => BTreeSet::new(),
            },
        }
    }

    /// Whether the stream carries `change`.
    pub fn wants(&self, change: &Change) -> bool {
        match change {
            Change::ToolsListChanged => self.tools_list_changed,
            Change::PromptsListChanged => self.prompts_list_changed,
            Change::ResourcesListChanged => self.resources_list_changed,
            Change::ResourceUpdated(uri) => self.resources.contains(uri),
            Change::TaskStatus { task_id, .. } => self.tasks.contains(task_id),
        }
    }

    /// The subscription as a wire filter (what the acknowledgement echoes): only what is on.
    pub fn filter(&self) -> SubscriptionFilter {
        let flag = |on: bool| on.then_some(true);
        SubscriptionFilter {
            tools_list_changed: flag(self.tools_list_changed),
            prompts_list_changed: flag(self.prompts_list_changed),
            resources_list_changed: flag(self.resources_list_changed),
            resource_subscriptions: (!self.resources.is_empty())
                .then(|| self.resources.iter().cloned().collect()),
            task_ids: (!self.tasks.is_empty()).then(|| self.tasks.iter().cloned().collect()),
        }
    }
}

/// One open listen stream of a server session.
#[derive(Debug)]
pub(super) struct Listener {
    subscription: Subscription,
    /// Messages of the stream queued and not yet transmitted.
    backlog: usize,
}

/// `"_meta":{"io.modelcontextprotocol/subscriptionId":<id>}`.
fn write_meta(b: &mut Vec<u8>, id: &RequestId) {
    b.extend_from_slice(b"\"_meta\":{");
    jsonrpc::write_json_str(b, SUBSCRIPTION_ID_KEY);
    b.push(b':');
    id.write_json(b);
    b.push(b'}');
}

/// The `SubscriptionsListenResult` that ends stream `id` gracefully.
fn ended(id: &RequestId) -> Box<RawValue> {
    let mut b = Vec::with_capacity(80);
    b.extend_from_slice(b"{\"resultType\":\"complete\",");
    write_meta(&mut b, id);
    b.push(b'}');
    raw_from_vec(b)
}

impl Session {
    /// Announces `change` to this server session's listen streams that want it (see the
    /// [`listen`](super::listen) rules). Returns how many streams it was queued on; a stream whose
    /// backlog is full is ended instead (and not counted).
    pub fn publish(&mut self, change: &Change) -> usize {
        if self.client || self.listeners.is_empty() || self.is_closed() {
            return 0;
        }
        let max = self.config.listener_backlog;
        let mut told = 0;
        let mut behind = Vec::new();
        for (id, l) in self.listeners.iter_mut() {
            if !l.subscription.wants(change) {
                continue;
            }
            if l.backlog >= max {
                behind.push(id.clone());
                continue;
            }
            l.backlog += 1;
            told += 1;
            self.out.push_back(Outgoing::Notification {
                method: Cow::Borrowed(change.method()),
                params: Some(change.params(id)),
                related: Some(id.clone()),
            });
        }
        for id in behind {
            self.end_listener_behind(&id);
        }
        told
    }

    /// The listen streams open on this server session, by request id.
    pub fn listeners(&self) -> impl Iterator<Item = (&RequestId, &Subscription)> + '_ {
        self.listeners.iter().map(|(id, l)| (id, &l.subscription))
    }

    /// A `subscriptions/listen` request of the stateless era, its `_meta` checked: the stream
    /// opens (acknowledged, handed to the application) or the request is refused.
    pub(super) fn open_listener(
        &mut self,
        id: RequestId,
        params: &RawValue,
        batch: Option<u64>,
        era: super::RequestEra,
    ) {
        let refused = if batch.is_some() {
            Err(Error::invalid_request(
                "`subscriptions/listen` must not be part of a batch",
            ))
        } else if self.listeners.len() >= self.config.max_listeners {
            Err(Error::new(
                ErrorKind::LimitExceeded,
                alloc::format!(
                    "too many subscriptions/listen streams open (limit {})",
                    self.config.max_listeners
                ),
            ))
        } else {
            Subscription::parse(params, &self.own_caps)
        };
        let subscription = match refused {
            Ok(s) => s,
            Err(e) => {
                self.queue_error(batch, Some(id), &e);
                return;
            }
        };
        self.admit(
            id.clone(),
            LISTEN,
            Some(params.to_owned()),
            None,
            None,
            Some(era),
        );
        if !self.inbound.contains_key(&id) {
            return; // refused by the in-flight bound
        }
        let mut ack = Vec::with_capacity(96);
        ack.extend_from_slice(b"{\"notifications\":");
        match serde_json::to_vec(&subscription.filter()) {
            Ok(filter) => ack.extend_from_slice(&filter),
            Err(_) => ack.extend_from_slice(b"{}"),
        }
        ack.push(b',');
        write_meta(&mut ack, &id);
        ack.push(b'}');
        self.out.push_back(Outgoing::Notification {
            method: Cow::Borrowed(ACKNOWLEDGED),
            params: Some(raw_from_vec(ack)),
            related: Some(id.clone()),
        });
        self.listeners.insert(
            id,
            Listener {
                subscription,
                backlog: 1,
            },
        );
    }

    /// The result that ends listen stream `id`, if `id` is one: the listener is gone.
    pub(super) fn take_listener_result(&mut self, id: &RequestId) -> Option<Box<RawValue>> {
        self.listeners.remove(id).map(|_| ended(id))
    }

    /// Forgets listener `id` (its request was cancelled or answered with an error).
    pub(super) fn drop_listener(&mut self, id: &RequestId) {
        self.listeners.remove(id);
    }

    /// A message left the queue: one less waits on its listen stream.
    pub(super) fn listener_transmitted(&mut self, o: &Outgoing) {
        if let Outgoing::Notification {
            related: Some(id), ..
        } = o
            && let Some(l) = self.listeners.get_mut(id)
        {
            l.backlog = l.backlog.saturating_sub(1);
        }
    }

    /// The session is closing: every stream ends with its result, and the application stops
    /// holding the requests.
    pub(super) fn end_listeners(&mut self) {
        let ids: Vec<RequestId> = self.listeners.keys().cloned().collect();
        for id in ids {
            self.listeners.remove(&id);
            if let Some(entry) = self.inbound.remove(&id) {
                self.answer_inbound(
                    entry.batch,
                    Outgoing::Response {
                        id: id.clone(),
                        result: ended(&id),
                    },
                );
                self.events.push_back(Event::Cancelled {
                    id,
                    reason: Some(String::from("the server ended the subscription")),
                });
            }
        }
    }

    /// Listener `id` fell behind: its stream ends with `notifications/cancelled`.
    fn end_listener_behind(&mut self, id: &RequestId) {
        self.listeners.remove(id);
        let Some(entry) = self.inbound.remove(id) else {
            return;
        };
        self.batch_request_done(entry.batch);
        self.remember_cancelled(id.clone());
        let mut p = Vec::with_capacity(96);
        p.extend_from_slice(b"{\"requestId\":");
        id.write_json(&mut p);
        p.extend_from_slice(b",\"reason\":");
        jsonrpc::write_json_str(&mut p, FELL_BEHIND);
        p.push(b'}');
        self.out.push_back(Outgoing::Notification {
            method: Cow::Borrowed("notifications/cancelled"),
            params: Some(raw_from_vec(p)),
            related: Some(id.clone()),
        });
        self.events.push_back(Event::Cancelled {
            id: id.clone(),
            reason: Some(String::from(FELL_BEHIND)),
        });
    }

    /// Client: the server ended our listen request `id` with `notifications/cancelled`.
    /// Whether `id` was one.
    pub(super) fn listen_ended_by_peer(&mut self, id: &RequestId, reason: Option<&str>) -> bool {
        let RequestId::Number(n) = id else {
            return false;
        };
        if !self.pending.get(n).is_some_and(|p| p.listen) {
            return false;
        }
        self.pending.remove(n);
        let message = match reason {
            Some(r) => alloc::format!("the server ended the subscription: {r}"),
            None => String::from("the server ended the subscription"),
        };
        self.events.push_back(Event::Response {
            id: id.clone(),
            result: Err(Error::new(ErrorKind::RequestCancelled, message)),
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(String::from(s)).unwrap()
    }

    fn caps(s: &str) -> CapSet {
        CapSet::parse(&raw(s))
    }

    #[test]
    fn only_what_the_server_offers_is_honoured() {
        let all = caps(
            r#"{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}}"#,
        );
        let asked = raw(
            r#"{"notifications":{"toolsListChanged":true,"promptsListChanged":false,"resourcesListChanged":true,"resourceSubscriptions":["a://1","a://2","a://1"],"taskIds":["t"]}}"#,
        );
        let s = Subscription::parse(&asked, &all).unwrap();
        assert!(s.tools_list_changed && !s.prompts_list_changed && s.resources_list_changed);
        assert_eq!(s.resources.len(), 2);
        let f = serde_json::to_value(s.filter()).unwrap();
        assert_eq!(
            f,
            serde_json::json!({"toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": ["a://1", "a://2"]})
        );
        let tools_only = caps(r#"{"tools":{"listChanged":true},"resources":{}}"#);
        let s = Subscription::parse(&asked, &tools_only).unwrap();
        assert_eq!(
            serde_json::to_value(s.filter()).unwrap(),
            serde_json::json!({"toolsListChanged": true})
        );
        for bad in [
            "{}",
            r#"{"notifications":3}"#,
            r#"{"notifications":{"toolsListChanged":"yes"}}"#,
        ] {
            let e = Subscription::parse(&raw(bad), &all).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidParams, "{bad}");
        }
        assert_eq!(
            Subscription::of_request(&asked, &raw("{}")).unwrap(),
            Subscription::default()
        );
    }

    #[test]
    fn changes_reach_only_the_streams_that_want_them() {
        let s = Subscription {
            prompts_list_changed: true,
            resources: ["a://x".into()].into_iter().collect(),
            ..Subscription::default()
        };
        assert!(s.wants(&Change::PromptsListChanged));
        assert!(!s.wants(&Change::ToolsListChanged));
        assert!(!s.wants(&Change::ResourcesListChanged));
        assert!(s.wants(&Change::ResourceUpdated("a://x".into())));
        assert!(!s.wants(&Change::ResourceUpdated("a://x/y".into())));
    }

    #[test]
    fn task_statuses_need_the_extension_and_name_their_task() {
        let asked = raw(r#"{"notifications":{"taskIds":["t1","t2"]}}"#);
        let without = Subscription::parse(&asked, &caps(r#"{"tools":{"listChanged":true}}"#));
        assert!(without.unwrap().tasks.is_empty());
        let with = caps(r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#);
        assert!(with.serves_listen());
        let s = Subscription::parse(&asked, &with).unwrap();
        assert_eq!(
            serde_json::to_value(s.filter()).unwrap(),
            serde_json::json!({"taskIds": ["t1", "t2"]})
        );
        let change = |id: &str, task: &str| Change::TaskStatus {
            task_id: id.into(),
            task: task.into(),
        };
        assert!(s.wants(&change("t2", "{}")));
        assert!(!s.wants(&change("t3", "{}")));
        assert!(!s.wants(&Change::ToolsListChanged));
        let id = RequestId::Number(7);
        assert_eq!(change("t1", "{}").method(), "notifications/tasks");
        assert_eq!(
            change(
                "t1",
                r#" {"taskId":"t1","status":"completed","result":{"content":[]}} "#
            )
            .params(&id)
            .get(),
            r#"{"taskId":"t1","status":"completed","result":{"content":[]},"_meta":{"io.modelcontextprotocol/subscriptionId":7}}"#
        );
        for odd in ["", "[1]", "{", "{\"a\":1", "nope"] {
            let p = change("t\"1", odd).params(&id);
            let v: serde_json::Value = serde_json::from_str(p.get()).unwrap();
            assert_eq!(v["taskId"], "t\"1", "{odd}");
        }
        assert_eq!(
            change("t", " { } ").params(&id).get(),
            r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}"#
        );
    }

    #[test]
    fn every_message_names_its_stream() {
        let id = RequestId::Number(1_767_225_600_000);
        assert_eq!(
            Change::ToolsListChanged.params(&id).get(),
            r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":1767225600000}}"#
        );
        assert_eq!(
            Change::ResourceUpdated("a://\"q\"".into())
                .params(&RequestId::from("L"))
                .get(),
            r#"{"uri":"a://\"q\"","_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}"#
        );
        assert_eq!(
            ended(&RequestId::Number(2)).get(),
            r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}"#
        );
    }
}
