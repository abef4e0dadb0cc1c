//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, 2026-07-28) on the server.
//!
//! A tool registered with task support ([`TaskSupport::Optional`] or
//! [`TaskSupport::Required`] in its `execution`) and called by a client that declared the
//! extension (in the request's `_meta` client capabilities) may run as a task: the call is
//! answered at once with a `CreateTaskResult` (`resultType: "task"`), the handler goes on in
//! the background, and the client follows it with `tasks/get` (the result or error inlined
//! once it is terminal), answers its input requests with `tasks/update` and stops it with
//! `tasks/cancel`.
//!
//! The server decides, not the client: a handler that completes without waiting is answered
//! as an ordinary result; one that waits on something else than an input request becomes a
//! task the moment it does; [`ToolContext::as_task`](crate::server::ToolContext::as_task)
//! makes it one at a point of its choosing (for instance before asking the user, so that the
//! question waits in the task rather than in an `input_required` round). A required-task tool
//! called without the extension is refused with -32021; an optional one then runs as usual.
//!
//! Each change of a task's status (`working` → `input_required` and back, the terminal
//! `completed`/`failed`/`cancelled`) is announced as `notifications/tasks` (the task as
//! `tasks/get` shows it, result or error inlined) on the `subscriptions/listen` streams that
//! named the task in their `taskIds`, on every connection of the server: a client may follow
//! a task by listening instead of polling, or poll less eagerly. Handshake-era connections get
//! nothing (the extension belongs to the stateless era).
//!
//! Task records live in a [`TaskStore`] (in memory by default: bounded, each record kept for
//! its `ttlMs`); the running handlers, their cancellation and their waiting input requests live
//! in this process.
//!
//! [`TaskSupport::Optional`]: mcp_proto::schema::TaskSupport::Optional
//! [`TaskSupport::Required`]: mcp_proto::schema::TaskSupport::Required

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_channel::oneshot;
use mcp_proto::schema::TaskStatus;
use mcp_proto::schema::tasks::extension::{EXTENSION_ID, Task};
use mcp_proto::schema::tools::{InputRequest, InputRequests};
use mcp_proto::schema::{JsonObject, ResultType};
use mcp_proto::{Error, ErrorKind};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::cancel::CancellationToken;
use crate::runtime::BoxFuture;

/// How tasks are kept.
#[derive(Clone, Debug)]
pub struct TaskOptions {
    /// How long a task's record stays readable after its creation (`ttlMs`). Default 1 hour.
    pub ttl: Duration,
    /// The polling interval suggested to clients (`pollIntervalMs`). Default 500 ms.
    pub poll_interval: Duration,
    /// The most tasks kept at once (expired ones do not count). Default 10,000.
    pub max_tasks: usize,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
            max_tasks: 10_000,
        }
    }
}

/// One task's record: its wire form and when it may be forgotten.
#[derive(Clone, Debug)]
pub struct TaskRecord {
    /// The task as `tasks/get` shows it (without `resultType`).
    pub task: Task,
    /// Milliseconds since the Unix epoch after which the record may be dropped.
    pub expires_at_ms: u64,
}

/// Where task records are kept. The in-memory [`MemoryTaskStore`] is the default; a store
/// shared by several servers (a database, Redis) makes `tasks/get` answerable by any of them.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new record.
    ///
    /// # Errors
    /// [`ErrorKind::LimitExceeded`] when the store is full.
    fn insert(&self, record: TaskRecord) -> Result<(), Error>;
    /// The record of `task_id`, if it exists and has not expired at `now_ms`.
    fn get(&self, task_id: &str, now_ms: u64) -> Option<TaskRecord>;
    /// Changes the record of `task_id` with `change`; whether it existed.
    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> bool;
}

/// The in-memory [`TaskStore`]: at most `max` live records; expired ones are dropped when room
/// is needed.
#[derive(Debug)]
pub struct MemoryTaskStore {
    max: usize,
    records: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// A store of at most `max` records.
    pub fn new(max: usize) -> Self {
        MemoryTaskStore {
            max,
            records: Mutex::new(HashMap::new()),
        }
    }
}

impl TaskStore for MemoryTaskStore {
    fn insert(&self, record: TaskRecord) -> Result<(), Error> {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        if records.len() >= self.max {
            let now = now_ms();
            records.retain(|_, r| r.expires_at_ms >= now);
        }
        if records.len() >= self.max {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("{} tasks are kept already", self.max),
            ));
        }
        records.insert(record.task.task_id.clone(), record);
        Ok(())
    }

    fn get(&self, task_id: &str, now_ms: u64) -> Option<TaskRecord> {
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records
            .get(task_id)
            .filter(|r| r.expires_at_ms >= now_ms)
            .cloned()
    }

    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> bool {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        match records.get_mut(task_id) {
            Some(r) => {
                change(r);
                true
            }
            None => false,
        }
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` since the Unix epoch as an RFC 3339 UTC time (`2026-12-01T15:04:05.123Z`).
fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A task's live part in this process: its cancellation and the asks waiting for answers.
#[derive(Default)]
struct Live {
    cancel: CancellationToken,
    waiting: HashMap<String, oneshot::Sender<Value>>,
}

/// Spawns futures on the runtime the server runs on.
pub(crate) type Spawner = Arc<dyn Fn(BoxFuture<()>) + Send + Sync>;

/// Announces a task's new state (to the listen streams that follow it).
pub(crate) type Announcer = Box<dyn Fn(&Task) + Send + Sync>;

/// The server's tasks: options, store and the live part.
pub(crate) struct Tasks {
    pub(crate) options: TaskOptions,
    store: Arc<dyn TaskStore>,
    live: Mutex<HashMap<String, Live>>,
    pub(crate) spawner: std::sync::OnceLock<Spawner>,
    /// Told of each status change.
    pub(crate) announcer: std::sync::OnceLock<Announcer>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Whether the client capabilities `caps` (raw JSON) declare the tasks extension.
pub(crate) fn declared(caps: &RawValue) -> bool {
    crate::raw::extension(caps, EXTENSION_ID).is_some()
}

/// -32021 naming the tasks extension.
pub(crate) fn extension_required(what: &str) -> Error {
    crate::mrtr::missing_capabilities(
        serde_json::json!({"extensions": {EXTENSION_ID: {}}}),
        format!("{what} needs the client to declare the `{EXTENSION_ID}` extension"),
    )
}

fn unknown(task_id: &str) -> Error {
    Error::invalid_params(format!("unknown task {task_id:?}"))
}

impl Tasks {
    pub(crate) fn new(options: TaskOptions, store: Option<Arc<dyn TaskStore>>) -> Self {
        let store = store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new(options.max_tasks)));
        Tasks {
            options,
            store,
            live: Mutex::new(HashMap::new()),
            spawner: std::sync::OnceLock::new(),
            announcer: std::sync::OnceLock::new(),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates a working task and returns its `CreateTaskResult` and cancellation.
    fn create(&self) -> Result<(Task, CancellationToken), Error> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| Error::internal(format!("no task id: {e}")))?;
        let task_id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let now = now_ms();
        let stamp = rfc3339(now);
        let ttl_ms = u64::try_from(self.options.ttl.as_millis()).unwrap_or(u64::MAX);
        let task = Task {
            result_type: None,
            task_id: task_id.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: stamp.clone(),
            last_updated_at: stamp,
            ttl_ms: Some(ttl_ms),
            poll_interval_ms: Some(
                u64::try_from(self.options.poll_interval.as_millis()).unwrap_or(u64::MAX),
            ),
            input_requests: None,
            result: None,
            error: None,
            meta: None,
        };
        self.store.insert(TaskRecord {
            task: task.clone(),
            expires_at_ms: now.saturating_add(ttl_ms),
        })?;
        let live = Live::default();
        let cancel = live.cancel.clone();
        self.live().insert(task_id, live);
        Ok((task, cancel))
    }

    /// Changes a task's record (and its `lastUpdatedAt`), unless it is already terminal; a
    /// change of status is announced.
    fn change(&self, task_id: &str, mut f: impl FnMut(&mut Task)) {
        let mut changed = None;
        self.store.update(task_id, &mut |r| {
            if !r.task.status.is_terminal() {
                let before = r.task.status;
                f(&mut r.task);
                r.task.last_updated_at = rfc3339(now_ms());
                if r.task.status != before {
                    changed = Some(r.task.clone());
                }
            }
        });
        if let (Some(task), Some(announce)) = (changed, self.announcer.get()) {
            announce(&task);
        }
    }

    /// The handler of a task ended with `outcome` (a tool result, a protocol error, or
    /// `None` for a panic).
    fn finish(&self, task_id: &str, outcome: Option<Result<Box<RawValue>, Error>>) {
        self.live().remove(task_id);
        self.change(task_id, |t| {
            t.input_requests = None;
            match &outcome {
                Some(Ok(raw)) => {
                    t.status = TaskStatus::Completed;
                    t.result = serde_json::from_str::<JsonObject>(raw.get()).ok();
                }
                Some(Err(e)) => {
                    t.status = TaskStatus::Failed;
                    t.error = Some(error_object(e));
                }
                None => {
                    t.status = TaskStatus::Failed;
                    t.error = Some(error_object(&Error::internal("the tool panicked")));
                }
            }
        });
    }

    /// An ask of a running task: recorded as an input request (status `input_required`) until
    /// `tasks/update` answers it.
    pub(crate) async fn ask(
        &self,
        task_id: &str,
        key: String,
        request: InputRequest,
    ) -> Result<Value, Error> {
        let (tx, rx) = oneshot::channel();
        {
            let mut live = self.live();
            let Some(l) = live.get_mut(task_id) else {
                return Err(Error::new(ErrorKind::RequestCancelled, "the task ended"));
            };
            l.waiting.insert(key.clone(), tx);
        }
        let mut request = Some(request);
        self.change(task_id, |t| {
            t.status = TaskStatus::InputRequired;
            if let Some(r) = request.take() {
                t.input_requests
                    .get_or_insert_with(InputRequests::new)
                    .insert(key.clone(), r);
            }
        });
        rx.await
            .map_err(|_| Error::new(ErrorKind::RequestCancelled, "the task ended"))
    }

    /// `tasks/get`: the task as it is now.
    pub(crate) fn get(&self, task_id: &str) -> Result<Box<RawValue>, Error> {
        let record = self
            .store
            .get(task_id, now_ms())
            .ok_or_else(|| unknown(task_id))?;
        crate::raw::to_raw(&record.task)
    }

    /// `tasks/update`: answers the task's waiting asks (unknown keys are ignored); the task is
    /// `working` again once none waits.
    pub(crate) fn update(
        &self,
        task_id: &str,
        responses: serde_json::Map<String, Value>,
    ) -> Result<Box<RawValue>, Error> {
        if self.store.get(task_id, now_ms()).is_none() {
            return Err(unknown(task_id));
        }
        let mut answered = Vec::new();
        {
            let mut live = self.live();
            if let Some(l) = live.get_mut(task_id) {
                for (key, value) in responses {
                    if let Some(tx) = l.waiting.remove(&key) {
                        let _ = tx.send(value);
                        answered.push(key);
                    }
                }
            }
        }
        self.change(task_id, |t| {
            if let Some(reqs) = t.input_requests.as_mut() {
                for k in &answered {
                    reqs.remove(k);
                }
                if reqs.is_empty() {
                    t.input_requests = None;
                }
            }
            if t.input_requests.is_none() && t.status == TaskStatus::InputRequired {
                t.status = TaskStatus::Working;
            }
        });
        Ok(mcp_proto::jsonrpc::empty_object())
    }

    /// `tasks/cancel`: a running task is `cancelled` at once and its handler stopped; a
    /// terminal one is left as it is.
    pub(crate) fn cancel(&self, task_id: &str) -> Result<Box<RawValue>, Error> {
        if self.store.get(task_id, now_ms()).is_none() {
            return Err(unknown(task_id));
        }
        if let Some(l) = self.live().remove(task_id) {
            l.cancel.cancel();
        }
        self.change(task_id, |t| {
            t.status = TaskStatus::Cancelled;
            t.input_requests = None;
        });
        Ok(mcp_proto::jsonrpc::empty_object())
    }
}

/// A JSON-RPC error object (`code`, `message`, `data`).
fn error_object(e: &Error) -> JsonObject {
    let wire = e.to_object();
    let mut m = JsonObject::new();
    m.insert("code".into(), wire.code.into());
    m.insert("message".into(), wire.message.as_ref().into());
    if let Some(d) = wire
        .data
        .and_then(|d| serde_json::from_str::<Value>(d.get()).ok())
    {
        m.insert("data".into(), d);
    }
    m
}

/// A call that may become a task: where it stands.
#[derive(Default)]
pub(crate) struct TaskSlot {
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    /// The task it became.
    task_id: Option<String>,
}

impl std::fmt::Debug for TaskSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSlot").finish_non_exhaustive()
    }
}

impl TaskSlot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The task this call became, if it did.
    pub(crate) fn task_id(&self) -> Option<String> {
        self.state().task_id.clone()
    }

    /// The handler asks to become a task: resolves once it is one.
    pub(crate) fn become_task(self: &Arc<Self>) -> impl Future<Output = ()> + Send + 'static {
        let slot = self.clone();
        std::future::poll_fn(move |cx| {
            if slot.state().task_id.is_some() {
                return Poll::Ready(());
            }
            // Pending once: the call becomes a task, then this runs on in the background.
            cx.waker().wake_by_ref();
            Poll::Pending
        })
    }
}

/// Runs a call that may become a task: answered as `rounds::run` does while the handler
/// completes at once or waits on an `input_required` ask; as a task (`CreateTaskResult`) as
/// soon as it waits on anything else, or asks to become one. The task's handler goes on in
/// the background; its outcome goes to the record.
pub(crate) fn run(
    fut: BoxFuture<Result<Box<RawValue>, Error>>,
    rounds: Option<Arc<crate::mrtr::Rounds>>,
    keys: Arc<crate::mrtr::RequestStateKeys>,
    tasks: Arc<Tasks>,
    slot: Arc<TaskSlot>,
) -> BoxFuture<Result<Box<RawValue>, Error>> {
    let mut fut = Some(fut);
    Box::pin(std::future::poll_fn(move |cx: &mut Context<'_>| {
        let Some(f) = fut.as_mut() else {
            return Poll::Ready(Err(Error::internal("polled after completion")));
        };
        match Pin::new(f).poll(cx) {
            Poll::Ready(r) => return Poll::Ready(r),
            Poll::Pending => {}
        }
        if let Some(rounds) = &rounds
            && rounds.needs_input()
        {
            return Poll::Ready(rounds.input_required(&keys));
        }
        // Waiting on something else (or asked to): the call becomes a task. (A slot is only
        // made once the server has a runtime to spawn on.)
        let Some(spawn) = tasks.spawner.get().cloned() else {
            return Poll::Pending;
        };
        let (task, cancel) = match tasks.create() {
            Ok(t) => t,
            Err(e) => return Poll::Ready(Err(e)),
        };
        let task_id = task.task_id.clone();
        slot.state().task_id = Some(task_id.clone());
        let Some(handler) = fut.take() else {
            return Poll::Ready(Err(Error::internal("no handler")));
        };
        let tasks2 = tasks.clone();
        spawn(Box::pin(async move {
            use futures_util::FutureExt;
            let cancelled = cancel.cancelled();
            let work = std::panic::AssertUnwindSafe(handler).catch_unwind();
            match futures_util::future::select(Box::pin(work), Box::pin(cancelled)).await {
                futures_util::future::Either::Left((Ok(outcome), _)) => {
                    tasks2.finish(&task_id, Some(outcome));
                }
                futures_util::future::Either::Left((Err(_panic), _)) => {
                    tasks2.finish(&task_id, None);
                }
                // `tasks/cancel` already recorded the cancellation.
                futures_util::future::Either::Right(_) => {}
            }
        }));
        let mut created = task;
        created.result_type = Some(ResultType::Task);
        Poll::Ready(crate::raw::to_raw(&created))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_796_139_200_000), "2026-12-01T15:33:20.000Z");
    }

    #[test]
    fn the_memory_store_is_bounded_and_forgets_expired_records() {
        let store = MemoryTaskStore::new(2);
        let record = |id: &str, expires_at_ms: u64| TaskRecord {
            task: Task {
                result_type: None,
                task_id: id.into(),
                status: TaskStatus::Working,
                status_message: None,
                created_at: String::new(),
                last_updated_at: String::new(),
                ttl_ms: Some(1),
                poll_interval_ms: None,
                input_requests: None,
                result: None,
                error: None,
                meta: None,
            },
            expires_at_ms,
        };
        store.insert(record("a", 0)).unwrap();
        store.insert(record("b", u64::MAX)).unwrap();
        assert!(store.get("a", 1).is_none(), "expired");
        assert!(store.get("b", 1).is_some());
        // Full: the expired one makes room.
        store.insert(record("c", u64::MAX)).unwrap();
        let e = store.insert(record("d", u64::MAX)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    }

    #[test]
    fn declared_reads_the_extension() {
        let raw = |s: &str| RawValue::from_string(s.into()).unwrap();
        assert!(declared(&raw(
            r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#
        )));
        assert!(!declared(&raw(r#"{"extensions":{}}"#)));
        assert!(!declared(&raw(r#"{"tasks":{}}"#)));
    }
}
