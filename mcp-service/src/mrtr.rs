//! Multi round-trip requests (MRTR, 2026-07-28): how a handler's `cx.elicit(..)`,
//! `cx.create_message(..)` and `cx.list_roots()` reach a client of the stateless era, which
//! takes no server-to-client requests.
//!
//! For such a client, a `tools/call`, `prompts/get` or `resources/read` whose handler asks for
//! input the request did not bring is answered with an `input_required` result: the input
//! requests the handler asked for (each under a key), and a sealed `requestState`. The client
//! fulfils them and retries the request (new id, same method and params) with the answers in
//! `inputResponses` and the `requestState` echoed. The handler then runs again from the start;
//! each ask finds its answer (under the same key) and returns at once, so the handler goes
//! further, until it completes or asks for more. A handler must therefore ask in the same order
//! on every run for the same request (the keys are numbered in the order of the asks), and do
//! its side effects after the asks, or make them idempotent.
//!
//! The `requestState` carries the answers of earlier rounds, so a retry needs only the new
//! ones and any server holding the keys can go on with it. It is sealed with HMAC-SHA-256
//! under a [`RequestStateKeys`] key ring and bound to the server (its audience), the method,
//! the tool, prompt or resource, and the arguments; it expires. A state that fails any of
//! these checks is refused with -32602 and the handler does not run.
//!
//! A handshake-era client gets real `elicitation/create`, `sampling/createMessage` and
//! `roots/list` requests instead, and the handler runs once.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use mcp_proto::schema::tools::{InputRequest, InputRequests, InputRequiredResult};
use mcp_proto::{Error, ErrorKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

/// The shortest key [`RequestStateKeys`] accepts, in bytes.
pub const MIN_KEY_LEN: usize = 32;

/// How long a `requestState` stays valid by default: 30 minutes (a round may wait for a person).
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(30 * 60);

/// How many input rounds one request may take before the server refuses to go on.
pub const MAX_ROUNDS: u32 = 16;

/// The key ring that seals and opens `requestState` (HMAC-SHA-256).
///
/// The first key seals; every key opens, so keys rotate by putting the new key first and
/// keeping the old one until the states it sealed have expired. Every server that may receive
/// a retry (every replica behind a load balancer) must hold the same keys and audience. A
/// server without configured keys draws one random key at start: its states open only in
/// that process.
///
/// ```
/// use mcp_service::mrtr::RequestStateKeys;
/// use std::time::Duration;
///
/// let keys = RequestStateKeys::new("notes-server", [("2026-12", vec![7u8; 32])])?
///     .ttl(Duration::from_secs(600));
/// assert_eq!(keys.audience(), "notes-server");
/// // Keys shorter than 32 bytes, or ids with a `.`, are refused.
/// assert!(RequestStateKeys::new("a", [("k", vec![0u8; 16])]).is_err());
/// # Ok::<(), mcp_service::Error>(())
/// ```
#[derive(Clone)]
pub struct RequestStateKeys {
    audience: String,
    /// `(id, key)`, the sealing key first.
    keys: Vec<(String, Vec<u8>)>,
    ttl: Duration,
}

impl std::fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStateKeys")
            .field("audience", &self.audience)
            .field("ids", &self.keys.iter().map(|k| &k.0).collect::<Vec<_>>())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl RequestStateKeys {
    /// A key ring for `audience` (a name only this server, or this fleet of replicas, uses):
    /// `(id, key)` pairs, the sealing key first; each key at least [`MIN_KEY_LEN`] bytes, each
    /// id non-empty, without `.`, and unique. States expire after [`DEFAULT_STATE_TTL`].
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for an empty ring, a short key, or a bad or repeated id.
    pub fn new<I, S>(audience: &str, keys: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (S, Vec<u8>)>,
        S: Into<String>,
    {
        let keys: Vec<(String, Vec<u8>)> = keys.into_iter().map(|(i, k)| (i.into(), k)).collect();
        if keys.is_empty() {
            return Err(Error::invalid_params("a requestState key ring needs a key"));
        }
        for (i, (id, key)) in keys.iter().enumerate() {
            if id.is_empty() || id.contains('.') || keys[..i].iter().any(|(o, _)| o == id) {
                return Err(Error::invalid_params(format!(
                    "requestState key id {id:?} must be non-empty, unique and without `.`"
                )));
            }
            if key.len() < MIN_KEY_LEN {
                return Err(Error::invalid_params(format!(
                    "requestState key {id:?} has {} bytes; at least {MIN_KEY_LEN} are required",
                    key.len()
                )));
            }
        }
        Ok(RequestStateKeys {
            audience: audience.to_owned(),
            keys,
            ttl: DEFAULT_STATE_TTL,
        })
    }

    /// One random 32-byte key from the operating system for `audience`: states open only in
    /// this process.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the operating system has no random bytes to give.
    pub fn random(audience: &str) -> Result<Self, Error> {
        let mut key = vec![0u8; MIN_KEY_LEN];
        getrandom::fill(&mut key)
            .map_err(|e| Error::internal(format!("no random key for requestState: {e}")))?;
        Self::new(audience, [("r", key)])
    }

    /// How long a sealed state stays valid.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The audience states are bound to.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    fn mac(key: &[u8], id: &str, payload: &str) -> HmacSha256 {
        // A key of any length is accepted by HMAC; ours are at least 32 bytes.
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(b"mcp-request-state/v1\n");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(payload.as_bytes());
        mac
    }

    /// Seals `state`: `v1.<key id>.<payload>.<mac>`, base64url.
    fn seal(&self, state: &Sealed) -> Result<String, Error> {
        let (id, key) = &self.keys[0];
        let json = serde_json::to_vec(state).map_err(|e| Error::internal(e.to_string()))?;
        let payload = URL_SAFE_NO_PAD.encode(json);
        let tag = Self::mac(key, id, &payload).finalize().into_bytes();
        Ok(format!("v1.{id}.{payload}.{}", URL_SAFE_NO_PAD.encode(tag)))
    }

    /// Opens a sealed state, checking its MAC, audience and expiry (not yet what it is bound to).
    fn open(&self, text: &str, now: u64) -> Result<Sealed, Error> {
        let bad = |why: &str| Error::invalid_params(format!("invalid requestState: {why}"));
        let mut parts = text.split('.');
        let (Some("v1"), Some(id), Some(payload), Some(tag), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(bad("not a state this server issued"));
        };
        let Some((_, key)) = self.keys.iter().find(|(k, _)| k == id) else {
            return Err(bad("sealed with a key this server does not hold"));
        };
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| bad("its seal is not base64url"))?;
        Self::mac(key, id, payload)
            .verify_slice(&tag)
            .map_err(|_| bad("its seal does not match (tampered with)"))?;
        let json = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| bad("not base64url"))?;
        let state: Sealed = serde_json::from_slice(&json).map_err(|_| bad("malformed"))?;
        if state.aud != self.audience {
            return Err(bad("issued for another server"));
        }
        if state.exp < now {
            return Err(bad("expired"));
        }
        Ok(state)
    }
}

/// What a `requestState` holds.
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    /// Audience.
    aud: String,
    /// Expiry, seconds since the Unix epoch.
    exp: u64,
    /// The method.
    m: String,
    /// The tool or prompt name, or the resource URI.
    n: String,
    /// SHA-256 of the arguments in canonical form (base64url).
    a: String,
    /// Rounds so far.
    r: u32,
    /// The answers so far, by key.
    ans: BTreeMap<String, Box<RawValue>>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// SHA-256 of a JSON value with object keys sorted (so that the client's key order does not
/// matter), base64url.
fn digest(arguments: Option<&RawValue>) -> String {
    fn feed(h: &mut Sha256, v: &Value) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                h.update(b"{");
                for k in keys {
                    feed(h, &Value::String(k.clone()));
                    h.update(b":");
                    if let Some(v) = m.get(k) {
                        feed(h, v);
                    }
                    h.update(b",");
                }
                h.update(b"}");
            }
            Value::Array(a) => {
                h.update(b"[");
                for v in a {
                    feed(h, v);
                    h.update(b",");
                }
                h.update(b"]");
            }
            other => h.update(other.to_string().as_bytes()),
        }
    }
    let mut h = Sha256::new();
    match arguments.map(|a| serde_json::from_str::<Value>(a.get())) {
        Some(Ok(v)) if !v.is_null() => feed(&mut h, &v),
        Some(Err(_)) => h.update(arguments.map_or("", |a| a.get()).as_bytes()),
        _ => feed(&mut h, &Value::Object(serde_json::Map::new())),
    }
    URL_SAFE_NO_PAD.encode(h.finalize())
}

/// The MRTR fields of a request's params (`inputResponses`, `requestState`).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetryFields {
    #[serde(default)]
    pub(crate) input_responses: Option<Value>,
    #[serde(default)]
    pub(crate) request_state: Option<Value>,
}

impl RetryFields {
    /// Read from raw params (none: no fields).
    ///
    /// # Errors
    /// -32602 for params that are not an object.
    pub(crate) fn of(params: Option<&RawValue>) -> Result<RetryFields, Error> {
        match params {
            Some(p) => serde_json::from_str(p.get())
                .map_err(|e| Error::invalid_params(format!("invalid params: {e}"))),
            None => Ok(RetryFields::default()),
        }
    }
}

/// The digest of a request's arguments that its sealed state carries: computed when a state
/// arrives (to compare), otherwise only when one is sealed (most requests never need it).
enum ArgsDigest {
    Known(String),
    Later(Option<Box<RawValue>>),
}

/// One stateless-era request that may answer `input_required`: the answers it has, and the
/// asks its handler made that it has no answer for.
pub(crate) struct Rounds {
    method: &'static str,
    name: String,
    args: ArgsDigest,
    round: u32,
    answers: BTreeMap<String, Box<RawValue>>,
    /// Keys of the capabilities the client declared.
    capabilities: Vec<String>,
    state: Mutex<AskState>,
    /// A call that may become a task: once it is one, asks wait in the task.
    task: std::sync::OnceLock<(
        std::sync::Arc<crate::tasks::Tasks>,
        std::sync::Arc<crate::tasks::TaskSlot>,
    )>,
}

#[derive(Default)]
struct AskState {
    /// Asks made so far in this run, for numbering keys.
    asked: u32,
    missing: InputRequests,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("method", &self.method)
            .field("round", &self.round)
            .finish_non_exhaustive()
    }
}

impl Rounds {
    /// The rounds of a request of `method` on `name` with `arguments`, from its raw params
    /// (`inputResponses`, `requestState`) and the client's declared capabilities.
    ///
    /// # Errors
    /// -32602 for malformed `inputResponses`, or a `requestState` that does not open or was
    /// issued for another request.
    pub(crate) fn start(
        keys: &RequestStateKeys,
        method: &'static str,
        name: &str,
        arguments: Option<&RawValue>,
        fields: RetryFields,
        client_capabilities: &RawValue,
    ) -> Result<Rounds, Error> {
        let (round, mut answers, args) = match fields.request_state {
            None | Some(Value::Null) => (
                0,
                BTreeMap::new(),
                ArgsDigest::Later(arguments.map(ToOwned::to_owned)),
            ),
            Some(Value::String(text)) => {
                let state = keys.open(&text, now_secs())?;
                let args = digest(arguments);
                if state.m != method || state.n != name || state.a != args {
                    return Err(Error::invalid_params(
                        "invalid requestState: issued for another request",
                    ));
                }
                (state.r, state.ans, ArgsDigest::Known(args))
            }
            Some(_) => {
                return Err(Error::invalid_params(
                    "invalid params: `requestState` must be a string",
                ));
            }
        };
        match fields.input_responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    if !value.is_object() {
                        return Err(Error::invalid_params(format!(
                            "invalid params: `inputResponses[{key:?}]` must be a result object"
                        )));
                    }
                    let raw = crate::raw::to_raw(&value)?;
                    answers.insert(key, raw);
                }
            }
            Some(_) => {
                return Err(Error::invalid_params(
                    "invalid params: `inputResponses` must be an object",
                ));
            }
        }
        let capabilities =
            serde_json::from_str::<serde_json::Map<String, Value>>(client_capabilities.get())
                .map(|m| m.into_iter().map(|(k, _)| k).collect())
                .unwrap_or_default();
        Ok(Rounds {
            method,
            name: name.to_owned(),
            args,
            round,
            answers,
            capabilities,
            state: Mutex::new(AskState::default()),
            task: std::sync::OnceLock::new(),
        })
    }

    /// Makes asks wait in the task the call becomes, once it is one.
    pub(crate) fn attach_task(
        &self,
        tasks: std::sync::Arc<crate::tasks::Tasks>,
        slot: std::sync::Arc<crate::tasks::TaskSlot>,
    ) {
        let _ = self.task.set((tasks, slot));
    }

    /// How many `input_required` rounds came before this run.
    pub(crate) fn round(&self) -> u32 {
        self.round
    }

    /// Asks for `request` under `key` (or the next numbered key): its answer when the request
    /// brought one, else the ask is recorded and the returned future never completes (the
    /// request is answered `input_required`).
    pub(crate) async fn ask<T: DeserializeOwned>(
        &self,
        key: Option<&str>,
        capability: &str,
        request: InputRequest,
    ) -> Result<T, Error> {
        if !self.capabilities.iter().any(|c| c == capability) {
            return Err(missing_capability(capability));
        }
        let key = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.asked += 1;
            match key {
                Some(k) => k.to_owned(),
                None => format!("{}-{}", capability, st.asked),
            }
        };
        if let Some(answer) = self.answers.get(&key) {
            return serde_json::from_str(answer.get()).map_err(|e| {
                Error::invalid_params(format!(
                    "invalid params: `inputResponses[{key:?}]` is not a {} result: {e}",
                    request.method()
                ))
            });
        }
        // A task: the ask waits in it until `tasks/update` answers.
        if let Some((tasks, slot)) = self.task.get()
            && let Some(task_id) = slot.task_id()
        {
            let method = request.method().to_owned();
            let value = tasks.ask(&task_id, key.clone(), request).await?;
            return serde_json::from_value(value).map_err(|e| {
                Error::invalid_params(format!(
                    "the answer to `{key}` is not a {method} result: {e}"
                ))
            });
        }
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .missing
            .insert(key, request);
        std::future::pending().await
    }

    /// Whether the handler asked for something the request did not bring.
    pub(crate) fn needs_input(&self) -> bool {
        !self
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .missing
            .is_empty()
    }

    /// The `input_required` result for what the handler asked: its asks and the sealed state
    /// with every answer so far.
    pub(crate) fn input_required(&self, keys: &RequestStateKeys) -> Result<Box<RawValue>, Error> {
        if self.round + 1 > MAX_ROUNDS {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("the request needed more than {MAX_ROUNDS} rounds of input"),
            ));
        }
        let missing =
            std::mem::take(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()).missing);
        let state = keys.seal(&Sealed {
            aud: keys.audience.clone(),
            exp: now_secs().saturating_add(keys.ttl.as_secs()),
            m: self.method.to_owned(),
            n: self.name.clone(),
            a: match &self.args {
                ArgsDigest::Known(a) => a.clone(),
                ArgsDigest::Later(arguments) => digest(arguments.as_deref()),
            },
            r: self.round + 1,
            ans: self.answers.clone(),
        })?;
        crate::raw::to_raw(&InputRequiredResult::new(missing).with_state(state))
    }
}

/// -32021 for a request that needs the client's `capability`.
pub(crate) fn missing_capability(capability: &str) -> Error {
    missing_capabilities(
        serde_json::json!({ capability: {} }),
        format!(
            "this request needs the client capability `{capability}`, which it did not declare"
        ),
    )
}

/// -32021 with `data.requiredCapabilities` = `required` (a `ClientCapabilities` object).
pub(crate) fn missing_capabilities(required: Value, message: String) -> Error {
    let data = serde_json::json!({ "requiredCapabilities": required });
    Error::new(ErrorKind::MissingClientCapability, message)
        .with_data(crate::raw::to_raw(&data).unwrap_or_else(|_| mcp_proto::jsonrpc::empty_object()))
}

/// Runs a handler's future for a request that may answer `input_required`: when the handler
/// waits on an ask the request had no answer for, it is dropped and the request is answered
/// with the asks made so far (asks made together, e.g. joined futures, are all collected,
/// since they register in the same poll).
pub(crate) async fn run<F>(
    fut: F,
    rounds: std::sync::Arc<Rounds>,
    keys: std::sync::Arc<RequestStateKeys>,
) -> Result<Box<RawValue>, Error>
where
    F: std::future::Future<Output = Result<Box<RawValue>, Error>>,
{
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        std::task::Poll::Ready(r) => std::task::Poll::Ready(r),
        std::task::Poll::Pending if rounds.needs_input() => {
            std::task::Poll::Ready(rounds.input_required(&keys))
        }
        std::task::Poll::Pending => std::task::Poll::Pending,
    })
    .await
}

// ---------------------------------------------------------------------------------- client

/// A clock of the client's runtime.
pub(crate) type Clock = std::sync::Arc<dyn Fn() -> mcp_proto::Instant + Send + Sync>;

/// How a client answers a server's input requests: the service that answers the same requests
/// when they come as server-to-client requests (handshake era).
pub(crate) type Answerer = std::sync::Arc<dyn crate::service::Service>;

/// What a client call needs to go through `input_required` rounds.
#[derive(Clone)]
pub(crate) struct ClientRounds {
    pub(crate) answerer: Answerer,
    pub(crate) clock: Clock,
    /// Sleeps until an instant of the runtime (between polls of a task).
    pub(crate) sleep:
        std::sync::Arc<dyn Fn(mcp_proto::Instant) -> crate::runtime::BoxFuture<()> + Send + Sync>,
    /// Spawns on the runtime (a dropped call's `tasks/cancel`).
    pub(crate) spawn: crate::tasks::Spawner,
    /// The session's default request timeout.
    pub(crate) default_timeout: Option<mcp_proto::Duration>,
    /// Early word of a followed task's changes (the listen stream's `notifications/tasks`).
    pub(crate) watch: Option<std::sync::Arc<dyn TaskWatch>>,
}

/// Tells a task's follower of its status notifications, so that it polls at once instead of
/// at the end of its interval.
pub(crate) trait TaskWatch: Send + Sync {
    /// Starts listening for `task_id`'s notifications: the receiver yields on each (several
    /// at once count as one). `None` when nothing can tell.
    fn watch(&self, task_id: &str) -> Option<futures_channel::mpsc::Receiver<()>>;
    /// Stops listening for `task_id`.
    fn unwatch(&self, task_id: &str);
}

/// Stops watching a task when its follower ends.
struct Unwatch {
    watch: std::sync::Arc<dyn TaskWatch>,
    task_id: String,
}

impl Drop for Unwatch {
    fn drop(&mut self) {
        self.watch.unwatch(&self.task_id);
    }
}

impl std::fmt::Debug for ClientRounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRounds").finish_non_exhaustive()
    }
}

/// The parts of an `input_required` result a client reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Required {
    #[serde(default)]
    input_requests: Option<BTreeMap<String, Asked>>,
    #[serde(default)]
    request_state: Option<String>,
}

#[derive(Deserialize)]
struct Asked {
    method: String,
    #[serde(default)]
    params: Option<Box<RawValue>>,
}

/// Cancels a followed task when the call is dropped (or times out) before it ended.
struct CancelOnDrop {
    peer: crate::peer::Peer,
    spawn: crate::tasks::Spawner,
    task_id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.task_id.take() {
            let request = self
                .peer
                .request_with("tasks/cancel", &serde_json::json!({"taskId": id}));
            (self.spawn)(Box::pin(async move {
                let _ = request.await;
            }));
        }
    }
}

/// Whether a raw result is a task (`resultType: "task"`).
/// A raw result's `resultType` when it is `"input_required"` or `"task"` (the text is looked at
/// first, so that a plain result is not parsed again).
fn result_type(raw: &RawValue) -> Option<mcp_proto::schema::ResultType> {
    use mcp_proto::schema::ResultType;
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<std::borrow::Cow<'a, str>>,
    }
    let text = raw.get();
    if !text.contains("\"input_required\"") && !text.contains("\"task\"") {
        return None;
    }
    let peek = serde_json::from_str::<Peek<'_>>(text).ok()?;
    match ResultType::parse(peek.result_type.as_deref()?) {
        t @ (ResultType::InputRequired | ResultType::Task) => Some(t),
        _ => None,
    }
}

impl ClientRounds {
    /// Sends `request` and, while the server answers `input_required`, answers its input
    /// requests through the client's handlers (all of a round at once) and retries with a new
    /// id, the answers and the `requestState`. The timeout (the request's, else the session's)
    /// covers every round together; dropping the future cancels the round in flight.
    pub(crate) async fn run(self, request: crate::peer::Request) -> Result<Box<RawValue>, Error> {
        let mut parts = request.parts();
        let mut params: serde_json::Map<String, Value> = match &parts.params {
            Ok(Some(p)) => serde_json::from_str(p.get())
                .map_err(|e| Error::invalid_params(format!("invalid params: {e}")))?,
            Ok(None) => serde_json::Map::new(),
            Err(e) => return Err(e.clone()),
        };
        // One progress callback for every round.
        let shared = parts
            .progress
            .take()
            .map(|f| std::sync::Arc::new(Mutex::new(f)));
        let start = (self.clock)();
        let budget = parts.opts.timeout.or(self.default_timeout);
        for _ in 0..=MAX_ROUNDS {
            let mut opts = parts.opts.clone();
            if let Some(budget) = budget {
                let spent = (self.clock)().saturating_duration_since(start);
                let left = budget.as_micros().saturating_sub(spent.as_micros());
                if left == 0 {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        "the request timed out between rounds of input",
                    ));
                }
                opts.timeout = Some(mcp_proto::Duration::from_micros(left));
            }
            let progress = shared.clone().map(|f| -> crate::peer::ProgressFn {
                Box::new(move |p| (f.lock().unwrap_or_else(|e| e.into_inner()))(p))
            });
            let raw = parts
                .request(crate::raw::to_raw(&params)?, opts, progress)
                .await?;
            match result_type(&raw) {
                Some(mcp_proto::schema::ResultType::InputRequired) => {}
                // A task (tasks extension): followed to its end, within the call's own timeout.
                Some(_) => {
                    let deadline = parts.opts.timeout.map(|t| start + t);
                    return self.follow_task(&parts.peer, &raw, deadline).await;
                }
                None => return Ok(raw),
            }
            let required: Required = serde_json::from_str(raw.get()).map_err(|e| {
                Error::new(
                    ErrorKind::ProtocolInvalid,
                    format!("invalid `input_required` result: {e}"),
                )
            })?;
            let asks = required.input_requests.unwrap_or_default();
            let answers = futures_util::future::try_join_all(
                asks.into_iter()
                    .map(|(key, asked)| self.answer(&parts.peer, key, asked)),
            )
            .await?;
            let answers: serde_json::Map<String, Value> = answers.into_iter().collect();
            params.insert("inputResponses".into(), Value::Object(answers));
            match required.request_state {
                Some(state) => params.insert("requestState".into(), Value::String(state)),
                None => params.remove("requestState"),
            };
        }
        Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("the server asked for input more than {MAX_ROUNDS} times"),
        ))
    }

    /// Polls a task (`tasks/get`, at the interval it suggests) until it ends, answering its
    /// input requests with `tasks/update` through the client's handlers: its result when it
    /// completes, its error when it fails, `RequestCancelled` when it was cancelled. Past
    /// `deadline`, or when the future is dropped, the task is cancelled (`tasks/cancel`).
    /// A status notification for the task (on the listen stream, when the server sends them)
    /// makes the next poll come at once; `tasks/get` stays the word on the task's state, and
    /// the interval the fallback when no notification comes.
    async fn follow_task(
        &self,
        peer: &crate::peer::Peer,
        created: &RawValue,
        deadline: Option<mcp_proto::Instant>,
    ) -> Result<Box<RawValue>, Error> {
        use mcp_proto::schema::TaskStatus;
        use mcp_proto::schema::tasks::extension::Task;
        let task: Task = serde_json::from_str(created.get())
            .map_err(|e| Error::new(ErrorKind::ProtocolInvalid, format!("invalid task: {e}")))?;
        let id = task.task_id.clone();
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            spawn: self.spawn.clone(),
            task_id: Some(id.clone()),
        };
        let mut interval = task.poll_interval_ms.unwrap_or(500).clamp(20, 10_000);
        let mut answered: std::collections::BTreeSet<String> = Default::default();
        let mut early = self.watch.as_ref().and_then(|w| w.watch(&id));
        let _unwatch = self.watch.as_ref().map(|w| Unwatch {
            watch: w.clone(),
            task_id: id.clone(),
        });
        loop {
            let now = (self.clock)();
            let mut wake = now + mcp_proto::Duration::from_millis(interval);
            if let Some(d) = deadline {
                if now >= d {
                    return Err(Error::new(ErrorKind::Timeout, "the task timed out"));
                }
                wake = wake.min(d);
            }
            let sleep = (self.sleep)(wake);
            match early.as_mut() {
                Some(rx) => {
                    use futures_util::StreamExt;
                    match futures_util::future::select(sleep, rx.next()).await {
                        futures_util::future::Either::Left(_)
                        | futures_util::future::Either::Right((Some(()), _)) => {}
                        // Nothing will tell any more: the interval alone, from now on.
                        futures_util::future::Either::Right((None, _)) => {
                            early = None;
                            continue;
                        }
                    }
                }
                None => sleep.await,
            }
            let raw = peer
                .request_with("tasks/get", &serde_json::json!({"taskId": id}))
                .await?;
            let task: Task = serde_json::from_str(raw.get()).map_err(|e| {
                Error::new(ErrorKind::ProtocolInvalid, format!("invalid task: {e}"))
            })?;
            interval = task.poll_interval_ms.unwrap_or(interval).clamp(20, 10_000);
            match task.status {
                TaskStatus::Completed => {
                    guard.task_id = None;
                    return crate::raw::to_raw(&task.result.unwrap_or_default());
                }
                TaskStatus::Failed => {
                    guard.task_id = None;
                    let e = task.error.unwrap_or_default();
                    let code = e.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                    let message = e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the task failed")
                        .to_owned();
                    let mut wire = mcp_proto::ErrorObject::new(code, message);
                    wire.data = e.get("data").and_then(|d| crate::raw::to_raw(d).ok());
                    return Err(Error::from(wire));
                }
                TaskStatus::Cancelled => {
                    guard.task_id = None;
                    return Err(Error::new(
                        ErrorKind::RequestCancelled,
                        "the task was cancelled",
                    ));
                }
                TaskStatus::InputRequired => {
                    let asks: Vec<(String, Asked)> = task
                        .input_requests
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .filter_map(|(k, r)| {
                            let v = serde_json::to_value(&r).ok()?;
                            serde_json::from_value::<Asked>(v).ok().map(|a| (k, a))
                        })
                        .collect();
                    if asks.is_empty() {
                        continue;
                    }
                    let answers = futures_util::future::try_join_all(
                        asks.into_iter().map(|(k, a)| self.answer(peer, k, a)),
                    )
                    .await?;
                    answered.extend(answers.iter().map(|(k, _)| k.clone()));
                    let answers: serde_json::Map<String, Value> = answers.into_iter().collect();
                    peer.request_with(
                        "tasks/update",
                        &serde_json::json!({"taskId": id, "inputResponses": answers}),
                    )
                    .await?;
                }
                _ => {}
            }
        }
    }

    /// One input request, answered by the handler a server-to-client request would reach.
    async fn answer(
        &self,
        peer: &crate::peer::Peer,
        key: String,
        asked: Asked,
    ) -> Result<(String, Value), Error> {
        if !matches!(
            asked.method.as_str(),
            "elicitation/create" | "sampling/createMessage" | "roots/list"
        ) {
            return Err(Error::new(
                ErrorKind::ProtocolInvalid,
                format!("the server asked for input with `{}`", asked.method),
            ));
        }
        let cx = crate::service::RequestContext {
            id: mcp_proto::RequestId::String(format!("input:{key}").into()),
            progress_token: None,
            peer: peer.clone(),
            cancel: crate::cancel::CancellationToken::new(),
            era: None,
            #[cfg(any(feature = "http-server", feature = "ws"))]
            http: None,
        };
        let request = crate::service::IncomingRequest {
            method: asked.method.into(),
            params: asked.params,
        };
        let raw = self.answerer.handle_request(request, cx).await?;
        let value = serde_json::from_str(raw.get()).map_err(|e| Error::internal(e.to_string()))?;
        Ok((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(params: &RawValue) -> RetryFields {
        RetryFields::of(Some(params)).unwrap()
    }

    fn keys() -> RequestStateKeys {
        RequestStateKeys::new("srv", [("k1", vec![1u8; 32])]).unwrap()
    }

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    fn sealed(r: u32) -> Sealed {
        Sealed {
            aud: "srv".into(),
            exp: now_secs() + 60,
            m: "tools/call".into(),
            n: "t".into(),
            a: digest(None),
            r,
            ans: BTreeMap::from([("x".to_owned(), raw("{\"action\":\"accept\"}"))]),
        }
    }

    #[test]
    fn seal_and_open() {
        let k = keys();
        let s = k.seal(&sealed(1)).unwrap();
        assert!(s.starts_with("v1.k1."));
        let back = k.open(&s, now_secs()).unwrap();
        assert_eq!(back.r, 1);
        assert_eq!(back.ans["x"].get(), "{\"action\":\"accept\"}");
    }

    #[test]
    fn tampered_expired_foreign_and_rotated() {
        let k = keys();
        let s = k.seal(&sealed(1)).unwrap();
        // Tampered payload: one character of it changed.
        let mut parts: Vec<String> = s.split('.').map(String::from).collect();
        let p = &mut parts[2];
        let c = if p.ends_with('A') { 'B' } else { 'A' };
        p.pop();
        p.push(c);
        let e = k.open(&parts.join("."), now_secs()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        assert!(e.message().contains("tampered"), "{e}");
        // Garbage.
        assert!(k.open("hello", now_secs()).is_err());
        assert!(k.open("v1.k1.a.b.c", now_secs()).is_err());
        // Expired.
        let e = k.open(&s, now_secs() + 120).unwrap_err();
        assert!(e.message().contains("expired"), "{e}");
        // Another audience with the same key.
        let other = RequestStateKeys::new("other", [("k1", vec![1u8; 32])]).unwrap();
        let e = other.open(&s, now_secs()).unwrap_err();
        assert!(e.message().contains("another server"), "{e}");
        // Another key under the same id.
        let forged = RequestStateKeys::new("srv", [("k1", vec![2u8; 32])]).unwrap();
        assert!(forged.open(&s, now_secs()).is_err());
        // Rotation: a new sealing key first, the old one still opens its states.
        let rotated =
            RequestStateKeys::new("srv", [("k2", vec![3u8; 32]), ("k1", vec![1u8; 32])]).unwrap();
        assert_eq!(rotated.open(&s, now_secs()).unwrap().r, 1);
        let s2 = rotated.seal(&sealed(2)).unwrap();
        assert!(s2.starts_with("v1.k2."));
        // Once the old key is retired, its states no longer open.
        let retired = RequestStateKeys::new("srv", [("k2", vec![3u8; 32])]).unwrap();
        assert!(retired.open(&s, now_secs()).is_err());
        assert_eq!(retired.open(&s2, now_secs()).unwrap().r, 2);
    }

    #[test]
    fn key_ring_rules() {
        assert!(RequestStateKeys::new::<_, String>("a", []).is_err());
        assert!(RequestStateKeys::new("a", [("", vec![0u8; 32])]).is_err());
        assert!(RequestStateKeys::new("a", [("a.b", vec![0u8; 32])]).is_err());
        assert!(RequestStateKeys::new("a", [("k", vec![0u8; 31])]).is_err());
        assert!(RequestStateKeys::new("a", [("k", vec![0u8; 32]), ("k", vec![1u8; 32])]).is_err());
        let r = RequestStateKeys::random("a").unwrap();
        assert_eq!(r.keys[0].1.len(), MIN_KEY_LEN);
    }

    #[test]
    fn digest_ignores_key_order_and_whitespace() {
        let a = raw(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#);
        let b = raw(r#"{ "a" : { "x":"s", "y":[1, 2] }, "b":1 }"#);
        assert_eq!(digest(Some(&a)), digest(Some(&b)));
        assert_ne!(digest(Some(&a)), digest(Some(&raw(r#"{"b":2}"#))));
        assert_eq!(digest(None), digest(Some(&raw("{}"))));
        assert_eq!(digest(None), digest(Some(&raw("null"))));
    }

    #[test]
    fn a_state_is_bound_to_its_request() {
        let k = keys();
        let caps = raw(r#"{"elicitation":{}}"#);
        let state = k.seal(&sealed(1)).unwrap();
        let params = |s: &str| raw(&format!(r#"{{"requestState":{}}}"#, serde_json::json!(s)));
        let p = params(&state);
        let r = Rounds::start(&k, "tools/call", "t", None, fields(&p), &caps).unwrap();
        assert_eq!(r.round(), 1);
        for (m, n, a) in [
            ("prompts/get", "t", None),
            ("tools/call", "u", None),
            ("tools/call", "t", Some(raw(r#"{"x":1}"#))),
        ] {
            let e = Rounds::start(&k, m, n, a.as_deref(), fields(&p), &caps).unwrap_err();
            assert!(e.message().contains("another request"), "{e}");
        }
        // Malformed retry fields.
        for bad in [
            r#"{"inputResponses":[]}"#,
            r#"{"inputResponses":{"k":"text"}}"#,
            r#"{"requestState":5}"#,
        ] {
            let e =
                Rounds::start(&k, "tools/call", "t", None, fields(&raw(bad)), &caps).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidParams, "{bad}");
        }
    }

    #[test]
    fn asks_answers_and_input_required() {
        let k = keys();
        let caps = raw(r#"{"elicitation":{}}"#);
        let params = raw(r#"{"inputResponses":{"name":{"action":"accept","content":{"n":"A"}}}}"#);
        let r = Rounds::start(&k, "tools/call", "t", None, fields(&params), &caps).unwrap();
        let ask = |key: &'static str| {
            let req = InputRequest::Elicit(mcp_proto::schema::ElicitRequestParams::form(
                "q",
                Default::default(),
            ));
            r.ask::<Value>(Some(key), "elicitation", req)
        };
        let got = futures_executor::block_on(ask("name")).unwrap();
        assert_eq!(got["content"]["n"], "A");
        assert!(!r.needs_input());
        // No answer: the ask never completes and is recorded.
        let mut fut = Box::pin(ask("color"));
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert!(r.needs_input());
        let out: Value = serde_json::from_str(r.input_required(&k).unwrap().get()).unwrap();
        assert_eq!(out["resultType"], "input_required");
        assert_eq!(
            out["inputRequests"]["color"]["method"],
            "elicitation/create"
        );
        // The state carries the answer already given.
        let opened = k
            .open(out["requestState"].as_str().unwrap(), now_secs())
            .unwrap();
        assert_eq!(opened.r, 1);
        assert!(opened.ans.contains_key("name"));
        // An undeclared capability is -32021 naming it.
        let req = InputRequest::ListRoots(None);
        let e = futures_executor::block_on(r.ask::<Value>(None, "roots", req)).unwrap_err();
        assert_eq!(e.code(), -32021);
        let data: Value = serde_json::from_str(e.data().unwrap().get()).unwrap();
        assert_eq!(
            data,
            serde_json::json!({"requiredCapabilities": {"roots": {}}})
        );
    }
}
