//! The typed server: register tools, resources, resource templates, prompts and a completion
//! handler; serve any number of connections.
//!
//! ```no_run
//! use mcp_service::server::{Server, ToolContext};
//! use mcp_service::schema::{CallToolResult, Tool};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct EchoArgs { text: String }
//!
//! let server = Server::builder("demo", "1.0")
//!     .tool(
//!         Tool::new("echo", mcp_service::server::schema_of(serde_json::json!({
//!             "type": "object",
//!             "properties": {"text": {"type": "string"}},
//!             "required": ["text"]
//!         }))),
//!         |args: EchoArgs, _cx: ToolContext| async move { Ok(CallToolResult::text(args.text)) },
//!     )
//!     .build();
//! ```
//!
//! With the feature `schemars`, `ServerBuilder::typed_tool` derives a tool's `inputSchema`
//! from the handler's argument type and its `outputSchema` from a [`Json<T>`](Json) result;
//! hand-written schemas go through [`ServerBuilder::tool`], and either way an `inputSchema`
//! must have `"type": "object"` at its root or registration fails.
//!
//! The server declares the capabilities of what it has: `tools`, `resources` and `prompts`
//! when some are registered (or [`ServerBuilder::dynamic_tools`] and the like ask for them, to
//! add items at runtime), `completions` with a completion handler, `logging` and
//! `resources.subscribe` when asked ([`ServerBuilder::logging`],
//! [`ServerBuilder::resource_subscriptions`]); [`ServerBuilder::capability`] overrides.
//! [`Server::test_client`] connects a client in memory, for tests.
//!
//! Handlers are plain async closures. They run concurrently on their connection's task and are
//! dropped when the caller cancels; spawn CPU-heavy work elsewhere. Registries can change at
//! runtime ([`Server::add_tool`], [`Server::remove_tool`], …): connected clients get the
//! matching `list_changed` notification. [`Server::resource_updated`] notifies only the
//! connections subscribed to that URI.
//!
//! Clients of the 2026-07-28 era hear of these changes only on the `subscriptions/listen`
//! streams they open, and only of what each stream's filter asks for. The core session owns
//! those streams (the acknowledgement, the subscription ids, the filter, the bounds: see
//! [`mcp_proto::session::Subscription`]); the server keeps, per connection, which streams are
//! open and what they want, to tell only the connections concerned
//! ([`Session::publish`](mcp_proto::session::Session::publish) through the connection).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};

use mcp_proto::schema::{
    CacheScope, CallToolResult, ClientCapabilities, CompleteRequestParams, CompleteResult,
    Completion, Content, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, GetPromptRequestParams, GetPromptResult, Implementation, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListRootsResult,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParams, PaginatedRequestParams,
    Prompt, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, ResourceUpdatedNotificationParams, SetLevelRequestParams,
    SubscribeRequestParams, Tool, tools::InputRequest,
};
use mcp_proto::session::{Change, Config, Session, Subscription};
use mcp_proto::{Duration, Error, ErrorKind, ProtocolVersion, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::connection::{Transport, connection};
use crate::mrtr::{RequestStateKeys, Rounds};
use crate::peer::Peer;
use crate::runtime::{BoxFuture, Runtime};
use crate::service::{IncomingRequest, RequestContext, Service};
use crate::telemetry::Telemetry;

pub mod local;
mod output;
#[cfg(feature = "skills")]
mod skills;
mod typed;

pub use local::{FnLocalPrompt, FnLocalTool, LocalHandlers, LocalRouter, LocalRoutes, LocalRunner};
#[doc(hidden)]
pub use output::__private as __macros;
#[cfg(feature = "schemars")]
pub use output::ToolReturn;
pub use output::{
    FnPrompt, FnTool, IntoHandlerError, IntoPromptResult, IntoResourceContents, PromptReturn,
    Router,
};
pub use typed::Json;
#[cfg(feature = "schemars")]
pub use typed::ToolOutput;

/// Inserts `entry()` under `key` unless the key is taken (then the key comes back as the error).
fn insert_unique<V>(
    map: &mut BTreeMap<String, Arc<V>>,
    key: String,
    entry: impl FnOnce() -> V,
) -> Result<(), String> {
    match map.entry(key) {
        Entry::Occupied(e) => Err(e.key().clone()),
        Entry::Vacant(v) => {
            v.insert(Arc::new(entry()));
            Ok(())
        }
    }
}

const TOOLS_CHANGED: Change = Change::ToolsListChanged;
const RESOURCES_CHANGED: Change = Change::ResourcesListChanged;
const PROMPTS_CHANGED: Change = Change::PromptsListChanged;

/// The `_meta` key under which streamed tool content travels in progress notifications.
///
/// Wire form of a streaming tool call (only when the caller sent a `progressToken`): each item
/// the tool streams goes out at once as an ordinary progress notification carrying the item(s)
/// in `_meta`:
///
/// ```json
/// {"jsonrpc":"2.0","method":"notifications/progress","params":{
///   "_meta":{"rs.mcp/partialContent":[{"type":"text","text":"part 1"}]},
///   "progressToken":7,"progress":1,"message":"partial result 1"}}
/// ```
///
/// and the final `CallToolResult` contains every streamed item followed by the content the
/// handler returned. A standard client therefore sees plain progress and one complete result;
/// this crate's `Client::call_tool_stream` yields the items as they arrive.
pub const PARTIAL_CONTENT_META: &str = "rs.mcp/partialContent";

/// Turns a `serde_json::Value` object into a JSON Schema object, for a hand-written
/// `inputSchema` or `outputSchema`. Anything but an object gives an empty schema, which
/// registration refuses as an `inputSchema` (it must have `"type": "object"` at its root).
///
/// ```
/// use mcp_service::schema::Tool;
/// use mcp_service::server::{Server, schema_of};
///
/// let add = Tool::new("add", schema_of(serde_json::json!({
///     "type": "object",
///     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
///     "required": ["a", "b"]
/// })));
/// assert!(Server::builder("s", "1").tool(add, |_: serde_json::Value, _| async { Ok("") }).try_build().is_ok());
///
/// let bad = Tool::new("bad", schema_of(serde_json::json!({"type": "string"})));
/// let refused = Server::builder("s", "1").tool(bad, |_: String, _| async { Ok("") }).try_build();
/// assert_eq!(refused.unwrap_err().kind(), mcp_service::ErrorKind::InvalidParams);
/// ```
pub fn schema_of(value: Value) -> JsonObject {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

// ---------------------------------------------------------------------------------- contexts

/// How many bytes of streamed content ([`ToolContext::stream`]) a call keeps for its final
/// result by default.
pub const DEFAULT_STREAM_RETENTION: usize = 8 * 1024 * 1024;

/// What a call streamed: the items kept for its result and what was left out.
#[derive(Default)]
struct Streamed {
    count: u64,
    kept: Vec<Content>,
    bytes: usize,
    left_out: u64,
    left_out_bytes: usize,
}

impl Streamed {
    /// The content of the final result: the kept items, a note of what was left out, then
    /// `rest`.
    fn into_content(self, rest: Vec<Content>, bound: usize) -> Vec<Content> {
        let mut content = self.kept;
        if self.left_out > 0 {
            content.push(Content::text(format!(
                "[{} more streamed items ({} bytes) are not repeated here: the server keeps at \
                 most {bound} bytes of streamed content for the result]",
                self.left_out, self.left_out_bytes
            )));
        }
        content.extend(rest);
        content
    }
}

/// What every server handler gets: the request, the client, and the server-side helpers
/// (progress, logging, cancellation, asking the client, cache hints). Each kind of handler
/// gets its own context type that dereferences to this one: [`ToolContext`],
/// [`ResourceContext`], [`PromptContext`], [`CompleteContext`]; a custom method
/// ([`ServerBuilder::method`]) gets this one.
#[derive(Clone)]
pub struct HandlerContext {
    request: RequestContext,
    server: Arc<Inner>,
    conn: Arc<ConnState>,
    /// Items streamed so far (their count numbers the next one).
    streamed: Arc<Mutex<Streamed>>,
    /// A stateless-era request that may answer `input_required`: its answers and asks.
    rounds: Option<Arc<Rounds>>,
    /// A call that may become a task (tasks extension).
    task: Option<Arc<crate::tasks::TaskSlot>>,
    /// The cache hints the handler chose for its result ([`ToolContext::cache_hints`]); only
    /// a request whose result takes them has the slot (no allocation for the others).
    cache_hints: Option<HintSlot>,
}

/// Where a handler's [`ToolContext::cache_hints`] are kept for its result.
type HintSlot = Arc<Mutex<Option<(u64, CacheScope)>>>;

impl std::fmt::Debug for HandlerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerContext")
            .field("id", self.request.id())
            .finish_non_exhaustive()
    }
}

/// What a tool handler gets: everything of [`HandlerContext`] (through `Deref`), plus what
/// only a tool call can do: stream content ([`stream`](Self::stream)) and continue as a task
/// ([`as_task`](Self::as_task)).
#[derive(Clone, Debug)]
pub struct ToolContext(HandlerContext);

/// What a resource or resource template handler gets (`resources/read`): everything of
/// [`HandlerContext`] through `Deref`; its [`cache_hints`](HandlerContext::cache_hints)
/// choose the result's.
#[derive(Clone, Debug)]
pub struct ResourceContext(HandlerContext);

/// What a prompt handler gets (`prompts/get`): everything of [`HandlerContext`] through
/// `Deref`.
#[derive(Clone, Debug)]
pub struct PromptContext(HandlerContext);

/// What the completion handler gets (`completion/complete`): everything of
/// [`HandlerContext`] through `Deref`.
#[derive(Clone, Debug)]
pub struct CompleteContext(HandlerContext);

macro_rules! handler_context {
    ($($t:ident),*) => {$(
        impl std::ops::Deref for $t {
            type Target = HandlerContext;
            fn deref(&self) -> &HandlerContext {
                &self.0
            }
        }

        impl From<$t> for HandlerContext {
            fn from(cx: $t) -> HandlerContext {
                cx.0
            }
        }

        impl $t {
            /// The context shared by every kind of handler.
            pub fn handler_context(&self) -> &HandlerContext {
                &self.0
            }
        }
    )*};
}
handler_context!(ToolContext, ResourceContext, PromptContext, CompleteContext);

impl ToolContext {
    /// Streams one content item to the caller now; it is also part of the final result.
    /// Clients of this crate see it at once through `call_tool_stream`; other clients see an
    /// ordinary progress notification and the complete result at the end. Waits while the
    /// output budget is full, like [`progress`](HandlerContext::progress).
    ///
    /// The final result repeats the streamed items up to
    /// [`ServerBuilder::stream_retention`] bytes of them (default
    /// [`DEFAULT_STREAM_RETENTION`]); items past that are streamed but not kept, and the result
    /// says, in a text item after the kept ones, how many were left out.
    ///
    /// ```no_run
    /// # use mcp_service::server::ToolContext;
    /// # use mcp_proto::schema::Content;
    /// # async fn tool(cx: ToolContext) -> Result<(), mcp_service::Error> {
    /// for i in 0..10 {
    ///     cx.stream(Content::text(format!("part {i}"))).await?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// An item that does not serialise; `TransportClosed` when the connection has ended.
    pub async fn stream(&self, item: Content) -> Result<(), Error> {
        let json = serde_json::to_string(&item).map_err(|e| Error::internal(e.to_string()))?;
        let streaming = self.request.progress_token().is_some();
        if streaming {
            self.peer().writable().await;
        }
        // Held while the notification is queued: concurrent streams number and send in order.
        let mut streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        streamed.count += 1;
        let seq = streamed.count;
        if streaming {
            let meta = format!("{{\"{PARTIAL_CONTENT_META}\":[{json}]}}");
            let meta = RawValue::from_string(meta).map_err(|e| Error::internal(e.to_string()))?;
            self.request
                .peer()
                .send_now(crate::peer::Command::Progress {
                    id: self.request.id().clone(),
                    progress: seq as f64,
                    total: None,
                    message: Some(format!("partial result {seq}")),
                    meta: Some(meta),
                })?;
        }
        if streamed.bytes + json.len() <= self.server.stream_retention {
            streamed.bytes += json.len();
            streamed.kept.push(item);
        } else {
            streamed.left_out += 1;
            streamed.left_out_bytes += json.len();
        }
        Ok(())
    }

    /// Continues as a task (tasks extension): when this call may become one (a tool with task
    /// support called by a client that declared the extension), it is answered with a task
    /// now and the handler goes on in the background (asks then wait in the task, and
    /// `tasks/cancel` stops it); otherwise this returns at once and the call goes on as usual.
    /// A call that may become a task becomes one anyway as soon as its handler waits on
    /// anything but an input request.
    pub async fn as_task(&self) {
        if let Some(slot) = &self.task {
            slot.become_task().await;
        }
    }

    /// The task this call became, if it did.
    pub fn task_id(&self) -> Option<String> {
        self.task.as_ref().and_then(|s| s.task_id())
    }
}

impl HandlerContext {
    /// The request's id.
    pub fn request_id(&self) -> &RequestId {
        self.request.id()
    }

    /// The underlying request context.
    pub fn request(&self) -> &RequestContext {
        &self.request
    }

    /// The server handling the call (to notify subscribers, change registries, log to all).
    pub fn server(&self) -> Server {
        Server {
            inner: self.server.clone(),
        }
    }

    /// The caller's progress token, when it asked for progress.
    pub fn progress_token(&self) -> Option<&mcp_proto::ProgressToken> {
        self.request.progress_token()
    }

    /// The client.
    pub fn peer(&self) -> &Peer {
        self.request.peer()
    }

    /// The protocol version of this request: its own in the stateless era, else the
    /// negotiated one.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.request.protocol_version()
    }

    /// Whether the client cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled()
    }

    /// Completes when the client cancels the call.
    pub fn cancelled(&self) -> crate::cancel::Cancelled {
        self.request.cancelled()
    }

    /// Reports progress (only sent when the client asked for it). Waits while the
    /// connection's output budget is full ([`Peer::writable`]): a client that does not read
    /// pauses the handler instead of making the server buffer without bound.
    ///
    /// # Errors
    /// `TransportClosed` when the connection has ended.
    ///
    /// ```
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::schema::Tool;
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("steps", "1.0")
    ///     .tool(
    ///         Tool::new("count", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             for step in 1..=3 {
    ///                 cx.progress(step as f64, Some(3.0), Some("counting")).await?;
    ///             }
    ///             Ok("done")
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let seen = sim.block_on(async {
    ///     let client = server.test_client(sim.runtime()).await?;
    ///     let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    ///     let log = seen.clone();
    ///     client
    ///         .call_tool("count", serde_json::json!({}))
    ///         .progress(move |p| log.lock().unwrap().push(p.progress))
    ///         .await?;
    ///     let seen = seen.lock().unwrap().clone();
    ///     Ok::<_, mcp_service::Error>(seen)
    /// });
    /// assert_eq!(seen.expect("nothing deadlocked")?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        self.request.progress(progress, total, message).await
    }

    /// Sends a log message (`notifications/message`) if the client's level admits it and the
    /// server declares `logging` ([`ServerBuilder::logging`]; nothing is sent otherwise).
    /// Waits while the output budget is full, like [`progress`](Self::progress).
    ///
    /// # Errors
    /// `data` that does not serialise; `TransportClosed` when the connection has ended.
    ///
    /// ```no_run
    /// # use mcp_service::server::ToolContext;
    /// # use mcp_service::schema::LoggingLevel;
    /// # async fn handler(cx: ToolContext) -> Result<(), mcp_service::Error> {
    /// cx.log(LoggingLevel::Info, Some("indexer"), serde_json::json!({"files": 42})).await?;
    /// # Ok(()) }
    /// ```
    pub async fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: impl Serialize,
    ) -> Result<(), Error> {
        if !self.server.declared.logging {
            return Ok(());
        }
        let admitted = match self.request.era() {
            // Stateless era: only at or above the level the request asked for, none without.
            Some(era) => era.log_level.is_some_and(|min| level >= min),
            None => self.conn.admits(level),
        };
        if !admitted {
            return Ok(());
        }
        let params = LoggingMessageNotificationParams {
            level,
            logger: logger.map(String::from),
            data: serde_json::to_value(data).map_err(|e| Error::internal(e.to_string()))?,
            meta: None,
        };
        self.request.notify("notifications/message", &params).await
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// For a handshake-era client this is a request to the client. For a 2026-07-28 client the
    /// call is answered `input_required` with this ask, and the retry brings the answer (see
    /// [`crate::mrtr`]): the handler runs again and this returns it at once. Asks are keyed
    /// `sampling-1`, `sampling-2`, … in the order they are made; [`create_message_as`]
    /// names the key instead.
    ///
    /// # Errors
    /// The client's error; -32021 (`MissingClientCapability`) for a 2026-07-28 client that did
    /// not declare `sampling`; -32602 when its answer is not a `CreateMessageResult`.
    ///
    /// [`create_message_as`]: Self::create_message_as
    ///
    /// ```
    /// use mcp_service::schema::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage, Tool};
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::{ClientOptions, sim::Sim};
    ///
    /// let server = Server::builder("poet", "1.0")
    ///     .tool(
    ///         Tool::new("haiku", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let ask = CreateMessageRequestParams::new(
    ///                 vec![SamplingMessage::user("A haiku about Rust")],
    ///                 100,
    ///             );
    ///             let answer = cx.create_message(ask).await?;
    ///             let text = answer.content.blocks().first().and_then(|b| b.as_text());
    ///             Ok(text.unwrap_or_default().to_string())
    ///         },
    ///     )
    ///     .build();
    /// // The client's model, here a stand-in that always answers the same.
    /// let options = ClientOptions::new("host", "1.0").sampling(|_params, _cx| async {
    ///     Ok(CreateMessageResult::text("stand-in", "borrowed, not owned"))
    /// });
    /// let sim = Sim::new();
    /// let result = sim.block_on(async {
    ///     let client = server.test_client_with(sim.runtime(), options).await?;
    ///     client.call_tool("haiku", serde_json::json!({})).await
    /// });
    /// let result = result.expect("nothing deadlocked")?;
    /// assert_eq!(result.content[0].as_text(), Some("borrowed, not owned"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        self.ask(None, "sampling", InputRequest::CreateMessage(params))
            .await
    }

    /// [`create_message`](Self::create_message) under the input key `key` (2026-07-28).
    ///
    /// # Errors
    /// As [`create_message`](Self::create_message).
    pub async fn create_message_as(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        self.ask(Some(key), "sampling", InputRequest::CreateMessage(params))
            .await
    }

    /// Asks the user for input (`elicitation/create`); for a 2026-07-28 client through an
    /// `input_required` round, as [`create_message`](Self::create_message) describes (keys
    /// `elicitation-1`, …).
    ///
    /// # Errors
    /// The client's error; -32021 for a 2026-07-28 client that did not declare `elicitation`;
    /// -32602 when its answer is not an `ElicitResult`.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, Error> {
        self.ask(None, "elicitation", InputRequest::Elicit(params))
            .await
    }

    /// [`elicit`](Self::elicit) under the input key `key` (2026-07-28).
    ///
    /// # Errors
    /// As [`elicit`](Self::elicit).
    pub async fn elicit_as(
        &self,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, Error> {
        self.ask(Some(key), "elicitation", InputRequest::Elicit(params))
            .await
    }

    /// Asks the client for its roots (`roots/list`); for a 2026-07-28 client through an
    /// `input_required` round, as [`create_message`](Self::create_message) describes (keys
    /// `roots-1`, …).
    ///
    /// # Errors
    /// The client's error; -32021 for a 2026-07-28 client that did not declare `roots`;
    /// -32602 when its answer is not a `ListRootsResult`.
    pub async fn list_roots(&self) -> Result<ListRootsResult, Error> {
        self.ask(None, "roots", InputRequest::ListRoots(None)).await
    }

    /// [`list_roots`](Self::list_roots) under the input key `key` (2026-07-28).
    ///
    /// # Errors
    /// As [`list_roots`](Self::list_roots).
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, Error> {
        self.ask(Some(key), "roots", InputRequest::ListRoots(None))
            .await
    }

    /// Chooses the cache hints of this one result: its `ttlMs` (how long a client may keep
    /// it) and `cacheScope` (`Private`: only for this client's authorization; `Public`: for
    /// anyone), instead of the server's ([`ServerBuilder::cache_hints`]) or the ones
    /// registered for its URI ([`ServerBuilder::cache_hints_for`]). The last call before the
    /// handler returns wins.
    ///
    /// Only the cacheable results a handler makes take them: a `resources/read` answered by a
    /// resource or resource template handler, to a 2026-07-28 request. A handshake-era result
    /// carries no cache hints (its schema has none), and neither do `tools/call` and
    /// `prompts/get` results (not cacheable in any version): there this does nothing.
    ///
    /// ```
    /// use mcp_service::Server;
    /// use mcp_service::schema::{CacheScope, ResourceContents, ResourceTemplate};
    /// use mcp_service::server::ResourceContext;
    /// use std::collections::HashMap;
    ///
    /// let server = Server::builder("quotes", "1.0")
    ///     // Everything else: kept a minute.
    ///     .cache_hints(60_000, CacheScope::Public)
    ///     .resource_template(
    ///         ResourceTemplate::new("quote://{symbol}", "quote"),
    ///         |uri: String, vars: HashMap<String, String>, cx: ResourceContext| async move {
    ///             if vars.get("symbol").is_some_and(|s| s == "live") {
    ///                 // This one changes all the time: ask again every time.
    ///                 cx.cache_hints(0, CacheScope::Private);
    ///             }
    ///             Ok(vec![ResourceContents::text(uri, "42")])
    ///         },
    ///     )
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn cache_hints(&self, ttl_ms: u64, scope: CacheScope) {
        if let Some(slot) = &self.cache_hints {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some((ttl_ms, scope));
        }
    }

    /// How many `input_required` rounds this request went through before this run of its
    /// handler (0 on the first; always 0 for a handshake-era client). A non-zero count comes
    /// from a `requestState` this server sealed and checked.
    pub fn input_round(&self) -> u32 {
        self.rounds.as_ref().map_or(0, |r| r.round())
    }

    /// The settings of the extension `id` the client declared (in the request's `_meta` for a
    /// 2026-07-28 client, at the handshake otherwise), or `None` when it did not declare it.
    pub fn client_extension(&self, id: &str) -> Option<Value> {
        match self.request.era() {
            Some(era) => crate::raw::extension(&era.client_capabilities, id),
            None => self
                .peer()
                .info()
                .and_then(|i| crate::raw::extension(&i.capabilities, id)),
        }
    }

    /// Whether the client declared the capability `name` (`"sampling"`, `"elicitation"`,
    /// `"roots"`, …): in the request's `_meta` for a 2026-07-28 client, at the handshake
    /// otherwise.
    pub fn client_has_capability(&self, name: &str) -> bool {
        let has = |caps: &RawValue| {
            serde_json::from_str::<Map<String, Value>>(caps.get())
                .is_ok_and(|m| m.contains_key(name))
        };
        match self.request.era() {
            Some(era) => has(&era.client_capabilities),
            None => self.peer().info().is_some_and(|i| has(&i.capabilities)),
        }
    }

    /// The client's `Implementation` (its name, version, title…): from the request's `_meta`
    /// for a 2026-07-28 client (`None` when it sent none), from its `initialize` otherwise.
    pub fn client_info(&self) -> Option<Implementation> {
        let raw = match self.request.era() {
            Some(era) => era.client_info.as_deref().map(|r| r.get().to_owned()),
            None => self.peer().info().map(|i| i.info.get().to_owned()),
        }?;
        serde_json::from_str(&raw).ok()
    }

    /// The client's capabilities: in the request's `_meta` for a 2026-07-28 client, as
    /// declared at the handshake otherwise (empty when neither is known).
    pub fn client_capabilities(&self) -> ClientCapabilities {
        let parsed = match self.request.era() {
            Some(era) => serde_json::from_str(era.client_capabilities.get()).ok(),
            None => self
                .peer()
                .info()
                .and_then(|i| serde_json::from_str(i.capabilities.get()).ok()),
        };
        parsed.unwrap_or_default()
    }

    /// The head of the HTTP request that carried this call (method, URI, headers,
    /// extensions), when the transport is HTTP; over WebSocket, the upgrade request's; `None`
    /// on stdio and in memory. See [`RequestContext::http_request`].
    ///
    /// ```
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::schema::Tool;
    ///
    /// let server = Server::builder("echo-agent", "1.0")
    ///     .tool(
    ///         Tool::new("user_agent", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let agent = cx
    ///                 .http_request()
    ///                 .and_then(|head| head.headers.get("user-agent"))
    ///                 .and_then(|v| v.to_str().ok())
    ///                 .unwrap_or("not over HTTP");
    ///             Ok(agent.to_string())
    ///         },
    ///     )
    ///     .build();
    /// # let _ = server;
    /// ```
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub fn http_request(&self) -> Option<&http::request::Parts> {
        self.request.http_request()
    }

    /// A value that middleware in front of the MCP endpoint put into the HTTP request's
    /// extensions: typically the caller's identity once an authentication layer checked it
    /// (an axum or tower layer inserting `Extension(User { .. })`). `None` when the request
    /// did not come over HTTP or carries no such value. The identity is the request's own:
    /// each request of a session carries the one its HTTP request had.
    ///
    /// ```
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::schema::Tool;
    ///
    /// /// Put into the request's extensions by the application's auth middleware.
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// let server = Server::builder("whoami", "1.0")
    ///     .tool(
    ///         Tool::new("whoami", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             match cx.extension::<User>() {
    ///                 Some(User(name)) => Ok(format!("you are {name}")),
    ///                 None => Err(mcp_service::Error::new(mcp_service::ErrorKind::Unauthorized, "who are you?")),
    ///             }
    ///         },
    ///     )
    ///     .build();
    /// # let _ = server;
    /// ```
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.http_request()?.extensions.get::<T>()
    }

    /// The identity of the request's validated bearer token (feature `resource-server`):
    /// `Some` for a request that came over HTTP through a
    /// [`ResourceServer`](crate::resource_server::ResourceServer) (subject, client, scopes,
    /// every claim), `None` otherwise. See [`ServerBuilder::tool_scopes`] for an example.
    #[cfg(feature = "resource-server")]
    pub fn identity(&self) -> Option<&crate::resource_server::Identity> {
        self.extension::<crate::resource_server::Identity>()
    }

    /// For a 2026-07-28 request of an MRTR method: reads its answers and `requestState`
    /// (`fields`, read only in that era).
    fn start_rounds(
        &mut self,
        method: &'static str,
        name: &str,
        arguments: Option<&RawValue>,
        fields: impl FnOnce() -> Result<crate::mrtr::RetryFields, Error>,
    ) -> Result<(), Error> {
        if let Some(era) = self.request.era() {
            let rounds = Rounds::start(
                &self.server.state_keys,
                method,
                name,
                arguments,
                fields()?,
                &era.client_capabilities,
            )?;
            self.rounds = Some(Arc::new(rounds));
        }
        Ok(())
    }

    /// A `tools/call` of a tool with task support from a client of the extension: the call
    /// may become a task. A required-task tool without the extension is -32021.
    fn start_task(&mut self, tool: &Tool) -> Result<(), Error> {
        use mcp_proto::schema::TaskSupport;
        let Some(era) = self.request.era() else {
            return Ok(());
        };
        let support = tool
            .execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or_default();
        if support == TaskSupport::Forbidden {
            return Ok(());
        }
        let tasks = self
            .server
            .tasks
            .as_ref()
            .filter(|t| t.spawner.get().is_some());
        match tasks {
            Some(tasks) if crate::tasks::declared(&era.client_capabilities) => {
                let slot = Arc::new(crate::tasks::TaskSlot::default());
                if let Some(rounds) = &self.rounds {
                    rounds.attach_task(tasks.clone(), slot.clone());
                }
                self.task = Some(slot);
                Ok(())
            }
            _ if support == TaskSupport::Required => Err(crate::tasks::extension_required(
                &format!("the tool `{}`", tool.name),
            )),
            _ => Ok(()),
        }
    }

    /// The handler's future, answered `input_required` when it waits on an ask without an
    /// answer (2026-07-28), or with a task when it may become one and waits on anything else,
    /// as it is otherwise.
    fn rounds_of<F>(self, fut: F) -> BoxFuture<Result<Box<RawValue>, Error>>
    where
        F: Future<Output = Result<Box<RawValue>, Error>> + Send + 'static,
    {
        match (self.task, self.server.tasks.clone()) {
            (Some(slot), Some(tasks)) => crate::tasks::run(
                Box::pin(fut),
                self.rounds,
                self.server.state_keys.clone(),
                tasks,
                slot,
            ),
            _ => match self.rounds {
                Some(rounds) => Box::pin(crate::mrtr::run(
                    fut,
                    rounds,
                    self.server.state_keys.clone(),
                )),
                None => Box::pin(fut),
            },
        }
    }

    /// One ask, by era: a request to a handshake-era client, a round for a 2026-07-28 one.
    async fn ask<T: DeserializeOwned>(
        &self,
        key: Option<&str>,
        capability: &str,
        request: InputRequest,
    ) -> Result<T, Error> {
        if self.request.era().is_some() {
            return match &self.rounds {
                Some(rounds) => rounds.ask(key, capability, request).await,
                None => Err(Error::internal(format!(
                    "`{}` cannot be asked here: with a 2026-07-28 client only tools/call, \
                     prompts/get and resources/read may ask for input",
                    request.method()
                ))),
            };
        }
        use mcp_proto::schema::methods::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};
        let request = match &request {
            InputRequest::CreateMessage(p) => self.request.request(SAMPLING_CREATE_MESSAGE, p),
            InputRequest::Elicit(p) => self.request.request(ELICITATION_CREATE, p),
            _ => self.request.request(ROOTS_LIST, &serde_json::json!({})),
        };
        request.typed().await
    }
}

// ---------------------------------------------------------------------------------- handlers

/// Something a tool handler may return.
pub trait IntoToolResult {
    /// Converts into a `CallToolResult`.
    fn into_tool_result(self) -> Result<CallToolResult, Error>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::with_content(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::with_content(self))
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::structured(self))
    }
}

/// A tool handler: the call's arguments and its context.
type ToolFn =
    dyn Fn(ToolArgs<'_>, ToolContext) -> BoxFuture<Result<CallToolResult, Error>> + Send + Sync;

/// Where a tool handler reads its arguments from.
enum ToolArgs<'a> {
    /// The raw `arguments` object (`None` when absent or `null`).
    Raw(Option<&'a RawValue>),
    /// The whole `tools/call` params, whose `arguments` member is an object, `null` or absent
    /// (checked): the handler reads it in its own parse, so that a large argument is scanned
    /// once, by that parse, and not first to find its end. That parse runs in the handler's
    /// task, not in the caller's (for HTTP, the engine every request of its shard goes
    /// through).
    Params(Box<RawValue>),
}
type ResourceFn = dyn Fn(
        String,
        HashMap<String, String>,
        ResourceContext,
    ) -> BoxFuture<Result<Vec<ResourceContents>, Error>>
    + Send
    + Sync;
type PromptFn = dyn Fn(BTreeMap<String, String>, PromptContext) -> BoxFuture<Result<GetPromptResult, Error>>
    + Send
    + Sync;
type CompleteFn = dyn Fn(CompleteRequestParams, CompleteContext) -> BoxFuture<Result<Completion, Error>>
    + Send
    + Sync;
type CustomFn = dyn Fn(Option<Box<RawValue>>, HandlerContext) -> BoxFuture<Result<Box<RawValue>, Error>>
    + Send
    + Sync;

/// What an authorizer sees.
#[derive(Debug)]
pub struct AuthRequest<'a> {
    /// The method called.
    pub method: &'a str,
    /// Its raw params.
    pub params: Option<&'a RawValue>,
    /// The connection number.
    pub connection: u64,
    /// The client's `Implementation` (after the handshake).
    pub client_info: Option<&'a RawValue>,
    /// The head of the HTTP request that carried the call, when it came over HTTP (see
    /// [`HandlerContext::extension`] for what auth middleware leaves there).
    #[cfg(any(feature = "http-server", feature = "ws"))]
    pub http: Option<&'a http::request::Parts>,
}

type AuthorizerFn = dyn Fn(&AuthRequest<'_>) -> Result<(), Error> + Send + Sync;

/// The scopes tools, resources and prompts require ([`ServerBuilder::tool_scopes`] and
/// friends), by name, URI or URI template.
#[cfg(feature = "resource-server")]
#[derive(Default)]
struct ScopeRules {
    tools: HashMap<String, Vec<String>>,
    resources: HashMap<String, Vec<String>>,
    prompts: HashMap<String, Vec<String>>,
}

#[cfg(feature = "resource-server")]
impl ScopeRules {
    fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.resources.is_empty() && self.prompts.is_empty()
    }
}

struct ToolEntry {
    tool: Tool,
    handler: Arc<ToolFn>,
    /// Its `x-mcp-header` annotations, when it has any (checked at registration).
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    param_headers: Option<Arc<[mcp_proto::schema::tools::ParamHeader]>>,
}

/// A tool's annotations, or why they are invalid (a registration error).
fn annotations(tool: &Tool) -> Result<Option<Arc<[mcp_proto::schema::tools::ParamHeader]>>, Error> {
    match tool.param_headers() {
        Ok(h) if h.is_empty() => Ok(None),
        Ok(h) => Ok(Some(h.into())),
        Err(why) => Err(Error::invalid_params(format!(
            "tool `{}` has an invalid `x-mcp-header`: {why}",
            tool.name
        ))),
    }
}

struct ResourceEntry {
    resource: Resource,
    handler: Arc<ResourceFn>,
}

struct TemplateEntry {
    template: ResourceTemplate,
    matcher: UriTemplate,
    handler: Arc<ResourceFn>,
}

struct PromptEntry {
    prompt: Prompt,
    handler: Arc<PromptFn>,
}

#[derive(Default)]
struct Registry {
    tools: BTreeMap<String, Arc<ToolEntry>>,
    resources: BTreeMap<String, Arc<ResourceEntry>>,
    templates: BTreeMap<String, Arc<TemplateEntry>>,
    prompts: BTreeMap<String, Arc<PromptEntry>>,
    /// The skills served (skills extension), when it is declared.
    #[cfg(feature = "skills")]
    skills: Option<skills::SkillSet>,
}

/// A connection's entry in [`Inner::connections`], removed when this is dropped: when the
/// connection ends, and as well when its serve future is dropped before that.
struct Registered {
    inner: Arc<Inner>,
    id: u64,
}

impl Registered {
    fn new(inner: &Arc<Inner>, id: u64, state: Arc<ConnState>) -> Self {
        inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, state);
        Registered {
            inner: inner.clone(),
            id,
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let _state = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        #[cfg(feature = "http-server")]
        if let Some(sid) = _state.as_ref().and_then(|s| s.session.get()) {
            self.inner
                .by_session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(sid);
        }
    }
}

/// The listen limits a [`ServerBuilder`] set explicitly.
#[derive(Debug, Default, Clone, Copy)]
struct ListenLimits {
    max_listeners: Option<usize>,
    backlog: Option<usize>,
    streams: Option<usize>,
    keep_alive: Option<Option<Duration>>,
}

/// Per-connection state.
struct ConnState {
    peer: Peer,
    level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<HashSet<String>>,
    ready: std::sync::atomic::AtomicBool,
    /// The connection's open `subscriptions/listen` streams: what each wants, and its request's
    /// cancellation (a stream cancelled is no longer counted, even before its handler ends).
    /// The session holds the streams; this says which connections a change concerns.
    listens: Mutex<BTreeMap<RequestId, (Subscription, crate::CancellationToken)>>,
    /// The HTTP session this connection is, when the server shares its sessions with other
    /// instances ([`ServerBuilder::cluster`]): its subscriptions and log level are written
    /// to the shared store.
    #[cfg(feature = "http-server")]
    session: std::sync::OnceLock<String>,
}

impl ConnState {
    fn new(peer: Peer, ready: bool) -> Self {
        ConnState {
            peer,
            level: Mutex::new(None),
            subscriptions: Mutex::new(HashSet::new()),
            ready: std::sync::atomic::AtomicBool::new(ready),
            listens: Mutex::new(BTreeMap::new()),
            #[cfg(feature = "http-server")]
            session: std::sync::OnceLock::new(),
        }
    }

    /// Writes `op` of this connection's session to the cluster's store, if it is shared;
    /// the receiver hears when it is written (and published to the other instances).
    #[cfg(feature = "http-server")]
    fn share(
        &self,
        inner: &Inner,
        op: impl FnOnce(String) -> crate::cluster::Op,
    ) -> Option<futures_channel::oneshot::Receiver<()>> {
        let (Some(c), Some(sid)) = (&inner.cluster, self.session.get()) else {
            return None;
        };
        let (done, written) = futures_channel::oneshot::channel();
        c.shared
            .op(crate::cluster::Op::Then(Box::new(op(sid.clone())), done));
        Some(written)
    }

    /// How many of the connection's listen streams want `change`.
    fn listening(&self, change: &Change) -> usize {
        self.listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|(s, cancel)| !cancel.is_cancelled() && s.wants(change))
            .count()
    }

    fn admits(&self, level: LoggingLevel) -> bool {
        match *self.level.lock().unwrap_or_else(|e| e.into_inner()) {
            None => true,
            Some(min) => level_rank(level) >= level_rank(min),
        }
    }
}

/// An empty result once `shared` (a write to the cluster's store) is done, so that the
/// client's next request, wherever it goes, sees it.
#[cfg(feature = "http-server")]
fn shared_then_empty(
    shared: Option<futures_channel::oneshot::Receiver<()>>,
) -> BoxFuture<Result<Box<RawValue>, Error>> {
    Box::pin(async move {
        if let Some(written) = shared {
            let _ = written.await;
        }
        Ok(mcp_proto::jsonrpc::empty_object())
    })
}

/// A log level from its name (`"warning"`).
#[cfg(feature = "http-server")]
fn parse_level(name: &str) -> Option<LoggingLevel> {
    serde_json::from_value(Value::String(name.to_owned())).ok()
}

fn level_rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
        #[allow(unreachable_patterns)]
        _ => 1,
    }
}

struct Inner {
    config: Config,
    registry: RwLock<Registry>,
    completion: Option<Arc<CompleteFn>>,
    custom: HashMap<String, Arc<CustomFn>>,
    authorizer: Option<Arc<AuthorizerFn>>,
    #[cfg(feature = "resource-server")]
    scopes: ScopeRules,
    #[cfg(feature = "resource-server")]
    resource_server: Option<Arc<crate::resource_server::ResourceServer>>,
    page_size: usize,
    /// Bytes of streamed content a call keeps for its result.
    stream_retention: usize,
    /// Each connection's output budget ([`Peer::set_output_budget`]).
    output_budget: usize,
    cache: (u64, CacheScope),
    /// Cache hints of one list method or resource URI, over `cache`.
    cache_for: HashMap<String, (u64, CacheScope)>,
    state_keys: Arc<RequestStateKeys>,
    /// The listen limits set on the builder (applied to the HTTP endpoint's config too).
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    listen: ListenLimits,
    /// The tasks extension, when enabled.
    tasks: Option<Arc<crate::tasks::Tasks>>,
    connections: Mutex<HashMap<u64, Arc<ConnState>>>,
    /// The stores shared with other instances ([`ServerBuilder::cluster`]).
    #[cfg(feature = "http-server")]
    cluster: Option<crate::cluster::Cluster>,
    /// The HTTP sessions served here, by id, when the server has a cluster.
    #[cfg(feature = "http-server")]
    by_session: Mutex<HashMap<String, Arc<ConnState>>>,
    /// What the capabilities declare.
    declared: Declared,
    telemetry: Telemetry,
}

/// An MCP server. Cheap to clone; serves any number of connections.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").finish_non_exhaustive()
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    config: Config,
    registry: Registry,
    completion: Option<Arc<CompleteFn>>,
    custom: HashMap<String, Arc<CustomFn>>,
    authorizer: Option<Arc<AuthorizerFn>>,
    #[cfg(feature = "resource-server")]
    scopes: ScopeRules,
    #[cfg(feature = "resource-server")]
    resource_server: Option<Arc<crate::resource_server::ResourceServer>>,
    page_size: usize,
    stream_retention: usize,
    output_budget: usize,
    cache: (u64, CacheScope),
    cache_for: HashMap<String, (u64, CacheScope)>,
    state_keys: Option<RequestStateKeys>,
    listen: ListenLimits,
    tasks: Option<(
        crate::tasks::TaskOptions,
        Option<Arc<dyn crate::tasks::TaskStore>>,
    )>,
    /// The skills to serve (skills extension).
    #[cfg(feature = "skills")]
    skills: skills::Setup,
    /// Extensions declared by the application (`capabilities.extensions`).
    extensions: Map<String, Value>,
    /// What the application asked to advertise beyond what is registered.
    advertise: Advertise,
    telemetry: Telemetry,
    #[cfg(feature = "http-server")]
    cluster: Option<crate::cluster::Cluster>,
    error: Option<Error>,
}

/// What a [`ServerBuilder`] was asked to advertise beyond what it has registered.
#[derive(Default)]
struct Advertise {
    dynamic_tools: bool,
    dynamic_resources: bool,
    dynamic_prompts: bool,
    subscribe: bool,
    logging: bool,
    /// [`ServerBuilder::capability`]: set (`Some`) or removed (`None`) last.
    overrides: Vec<(String, Option<Value>)>,
}

/// What the server's final capabilities declare, as the server's own behaviour follows it.
#[derive(Debug, Default, Clone, Copy)]
struct Declared {
    tools: bool,
    resources: bool,
    prompts: bool,
    logging: bool,
    tools_list_changed: bool,
    resources_list_changed: bool,
    prompts_list_changed: bool,
}

impl Declared {
    fn of(caps: &Value) -> Self {
        let listed = |k: &str| caps[k]["listChanged"] == Value::Bool(true);
        Declared {
            tools: caps.get("tools").is_some(),
            resources: caps.get("resources").is_some(),
            prompts: caps.get("prompts").is_some(),
            logging: caps.get("logging").is_some(),
            tools_list_changed: listed("tools"),
            resources_list_changed: listed("resources"),
            prompts_list_changed: listed("prompts"),
        }
    }

    /// Whether `change` (a list change) may be announced.
    fn announces(&self, change: &Change) -> bool {
        match change {
            Change::ToolsListChanged => self.tools_list_changed,
            Change::ResourcesListChanged => self.resources_list_changed,
            Change::PromptsListChanged => self.prompts_list_changed,
            _ => true,
        }
    }

    /// Why an item of `what` cannot be added at runtime, if it cannot.
    fn refuses(&self, what: &str) -> Option<Error> {
        let (declared, capability, method) = match what {
            "tool" => (self.tools, "tools", "dynamic_tools"),
            "prompt" => (self.prompts, "prompts", "dynamic_prompts"),
            _ => (self.resources, "resources", "dynamic_resources"),
        };
        (!declared).then(|| {
            Error::new(
                ErrorKind::Other,
                format!(
                    "cannot add a {what}: the server does not declare the `{capability}` \
                     capability (it had none at build; `ServerBuilder::{method}` declares it)"
                ),
            )
        })
    }
}

/// A JSON string, borrowed from the input when it has no escapes (serde's `std::borrow::Cow<str>` always
/// copies).
struct BorrowedStr;
impl<'de> serde::de::DeserializeSeed<'de> for BorrowedStr {
    type Value = std::borrow::Cow<'de, str>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> Result<std::borrow::Cow<'de, str>, D::Error> {
        struct N;
        impl<'de> serde::de::Visitor<'de> for N {
            type Value = std::borrow::Cow<'de, str>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(std::borrow::Cow::Borrowed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(std::borrow::Cow::Owned(v.to_owned()))
            }
        }
        d.deserialize_str(N)
    }
}

/// A tool's arguments of type `T` read out of whole `tools/call` params: the `arguments`
/// member (absent or `null`: `T` from `{}`), every other member skipped.
struct ArgumentsOf<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ArgumentsOf<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = ArgumentsOf<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("tools/call params")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut args = None;
                let mut named = false;
                while let Some(key) = map.next_key_seed(BorrowedStr)? {
                    if key == "arguments" {
                        if args.is_some() {
                            return Err(serde::de::Error::duplicate_field("arguments"));
                        }
                        args = Some(map.next_value::<Option<T>>()?);
                    } else if key == "name" {
                        if std::mem::replace(&mut named, true) {
                            return Err(serde::de::Error::duplicate_field("name"));
                        }
                        map.next_value::<serde::de::IgnoredAny>()?;
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                match args.flatten() {
                    Some(t) => Ok(ArgumentsOf(t)),
                    None => T::deserialize(serde::de::value::MapDeserializer::<
                        'de,
                        std::iter::Empty<((), ())>,
                        A::Error,
                    >::new(std::iter::empty()))
                    .map(ArgumentsOf),
                }
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The size from which `tools/call` params are first looked at ([`peek_call`]) rather than
/// read whole.
const PEEK_FROM: usize = 2048;

/// What a first look at `tools/call` params found, reading no further than `arguments`.
#[derive(Debug, PartialEq)]
struct CallPeek<'a> {
    name: std::borrow::Cow<'a, str>,
    /// `arguments` is an object (or absent or `null`): the handler may read it from the params.
    arguments_ok: bool,
}

/// Reads `name` and the kind of `arguments` from `tools/call` params (valid JSON: the raw
/// params of a parsed message) without scanning the arguments: the look stops where
/// `arguments` begins. `None` when it cannot tell cheaply (an escaped key, a `name` that is no
/// string or comes twice, `arguments` before a `name` that is not the last member): the full
/// parse then reads them, and reports what is wrong.
///
/// This is a scan of the object's members, not a serde parse: stopping a serde parse early
/// takes an error, and serde_json's errors allocate (five of them for one stop).
fn peek_call(params: &str) -> Option<CallPeek<'_>> {
    use std::borrow::Cow;

    let b = params.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut name = None;
    // Whether `arguments` is an object or `null`, once seen.
    let mut fine = None;
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            // The whole object read, with no `arguments`: it must end there.
            b'}' if skip_ws(b, i + 1) == b.len() => break,
            b'}' => return None,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let end = string_end(b, i)?;
        let key = b.get(i + 1..end - 1)?;
        if key.contains(&b'\\') {
            // `"n\u0061me"` is `name` too: the full parse decodes it.
            return None;
        }
        i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        match key {
            b"name" if name.is_none() && b.get(i) == Some(&b'"') => {
                let end = string_end(b, i)?;
                let text = params.get(i + 1..end - 1)?;
                name = Some(if text.contains('\\') {
                    Cow::Owned(serde_json::from_str(params.get(i..end)?).ok()?)
                } else {
                    Cow::Borrowed(text)
                });
                i = end;
            }
            // A second `name`, or one that is no string: the full parse reports it.
            b"name" => return None,
            b"arguments" => {
                // Valid JSON starting with `n` is `null`.
                fine = Some(matches!(b.get(i)?, b'{' | b'n'));
                break;
            }
            _ => i = skip_value(b, i)?,
        }
    }
    // `arguments` before `name` (as a client that sorts its keys sends them): the name is
    // read from the end when it is the last member.
    let name = match name {
        Some(name) => name,
        None => trailing_name(params)?,
    };
    Some(CallPeek {
        name,
        arguments_ok: fine.unwrap_or(true),
    })
}

/// JSON's whitespace.
fn is_ws(c: &u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(is_ws) {
        i += 1;
    }
    i
}

/// The index just past the string (valid JSON) whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + b.get(j..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
        if b.get(k) == Some(&b'"') {
            return Some(k + 1);
        }
        // An escape: the next byte is escaped (`\"`, `\\`, `\u`, ...).
        j = k + 2;
    }
}

/// The index just past the value (valid JSON) that starts at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !is_ws(c) && !matches!(c, b',' | b'}' | b']'))
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The value of the member `"name"` of `params` (valid JSON) when it is the last member of
/// the object and a string, read backwards from the closing brace.
///
/// The last value of an object ends just before its closing brace; a string value's opening
/// quote is the first quote before its end not escaped (preceded by an even run of
/// backslashes), since a quote inside a JSON string is always escaped; its key is the string
/// before the colon before it.
fn trailing_name(params: &str) -> Option<std::borrow::Cow<'_, str>> {
    let b = params.as_bytes();
    let before = |mut end: usize| {
        while end > 0 && b.get(end - 1).is_some_and(is_ws) {
            end -= 1;
        }
        end
    };
    let end = before(b.len());
    if end == 0 || b.get(end - 1) != Some(&b'}') {
        return None;
    }
    let close = before(end - 1).checked_sub(1)?;
    if b.get(close) != Some(&b'"') {
        return None;
    }
    let mut open = close;
    loop {
        open = b.get(..open)?.iter().rposition(|&c| c == b'"')?;
        let slashes = b
            .get(..open)?
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        if slashes % 2 == 0 {
            break;
        }
    }
    let colon = before(open).checked_sub(1)?;
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let key_end = before(colon);
    let key_start = key_end.checked_sub(6)?;
    // The key's opening quote must not be an escaped quote ending a longer key (`"a\"name"`).
    let escaped = b
        .get(..key_start)?
        .iter()
        .rev()
        .take_while(|&&c| c == b'\\')
        .count()
        % 2;
    if b.get(key_start..key_end) != Some(b"\"name\"".as_slice()) || escaped == 1 {
        return None;
    }
    let literal = params.get(open..=close)?;
    let inner = params.get(open + 1..close)?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(literal)
            .ok()
            .map(std::borrow::Cow::Owned)
    } else {
        Some(std::borrow::Cow::Borrowed(inner))
    }
}

/// The error of a `tools/call` whose `arguments` is not an object.
fn arguments_not_object() -> Error {
    Error::invalid_params("invalid params: `arguments` must be an object")
}

/// The error of a `tools/call` of a tool the server does not have.
fn unknown_tool(name: &str) -> Error {
    Error::invalid_params(format!("Unknown tool: {name}"))
}

fn boxed_tool<T, F, Fut, R>(handler: F) -> Arc<ToolFn>
where
    T: DeserializeOwned + Send + 'static,
    F: Fn(T, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, Error>> + Send + 'static,
    R: IntoToolResult + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(
        move |args: ToolArgs<'_>, cx: ToolContext| -> BoxFuture<Result<CallToolResult, Error>> {
            let version = cx.protocol_version();
            // 2025-11-25 and later report input validation failures as tool results.
            let invalid = move |e: serde_json::Error| {
                let msg = format!("invalid arguments: {e}");
                if version.is_none_or(|v| v >= ProtocolVersion::V2025_11_25) {
                    Ok(CallToolResult::error(msg))
                } else {
                    Err(Error::invalid_params(msg))
                }
            };
            // Straight from the raw arguments into `T`: no intermediate `Value` tree.
            match args {
                ToolArgs::Raw(a) => {
                    match serde_json::from_str::<T>(a.map_or("{}", RawValue::get)) {
                        Ok(args) => {
                            let fut = handler(args, cx);
                            Box::pin(
                                async move { fut.await.and_then(IntoToolResult::into_tool_result) },
                            )
                        }
                        Err(e) => {
                            let r = invalid(e);
                            Box::pin(async move { r })
                        }
                    }
                }
                ToolArgs::Params(p) => {
                    let handler = handler.clone();
                    Box::pin(async move {
                        match serde_json::from_str::<ArgumentsOf<T>>(p.get()) {
                            Ok(a) => {
                                // The params' text goes before the handler runs.
                                drop(p);
                                handler(a.0, cx)
                                    .await
                                    .and_then(IntoToolResult::into_tool_result)
                            }
                            Err(e) => invalid(e),
                        }
                    })
                }
            }
        },
    )
}

fn boxed_resource<F, Fut, R>(handler: F) -> Arc<ResourceFn>
where
    F: Fn(String, HashMap<String, String>, ResourceContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, Error>> + Send + 'static,
    R: IntoResourceContents + 'static,
{
    Arc::new(move |uri: String, vars, cx: ResourceContext| {
        let version = cx
            .protocol_version()
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let fut = handler(uri.clone(), vars, cx);
        Box::pin(async move {
            match fut.await {
                Ok(r) => Ok(r.into_resource_contents(uri)),
                // A handler's "not found" is the read URI's, with its version's code.
                Err(e) if e.kind() == ErrorKind::NotFound && e.data().is_none() => {
                    Err(Error::resource_not_found(&uri, version))
                }
                Err(e) => Err(e),
            }
        })
    })
}

fn boxed_prompt<F, Fut, R>(handler: F) -> Arc<PromptFn>
where
    F: Fn(BTreeMap<String, String>, PromptContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, Error>> + Send + 'static,
    R: IntoPromptResult + 'static,
{
    Arc::new(move |args, cx| {
        let fut = handler(args, cx);
        Box::pin(async move { fut.await.map(IntoPromptResult::into_prompt_result) })
    })
}

impl ServerBuilder {
    fn duplicate(&mut self, what: &str, name: &str) {
        if self.error.is_none() {
            self.error = Some(Error::new(
                ErrorKind::DuplicateRegistration,
                format!("{what} `{name}` is registered twice"),
            ));
        }
    }

    /// Sets the human-readable title of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the instructions sent to clients at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.config.instructions = Some(instructions.into());
        self
    }

    /// How long, and by whom, results of the stateless era's cacheable requests (`tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list`, `resources/read`) may be
    /// cached: `ttlMs` and `cacheScope` (default 0 ms, private: every list is asked again).
    pub fn cache_hints(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.cache = (ttl_ms, scope);
        self
    }

    /// The cache hints of one list (`key` a list method: `"tools/list"`, `"prompts/list"`,
    /// `"resources/list"`, `"resources/templates/list"`) or of one resource's `resources/read`
    /// results (`key` its URI), instead of the [`cache_hints`](Self::cache_hints) of the rest.
    ///
    /// ```
    /// use mcp_service::schema::CacheScope;
    /// let builder = mcp_service::server::Server::builder("s", "1")
    ///     .cache_hints(0, CacheScope::Private)
    ///     .cache_hints_for("tools/list", 3_600_000, CacheScope::Public)
    ///     .cache_hints_for("file:///etc/motd", 60_000, CacheScope::Public);
    /// # let _ = builder;
    /// ```
    pub fn cache_hints_for(mut self, key: &str, ttl_ms: u64, scope: CacheScope) -> Self {
        self.cache_for.insert(key.to_owned(), (ttl_ms, scope));
        self
    }

    /// Sets the page size of list results (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Sets how many bytes of streamed content ([`ToolContext::stream`]) one call keeps for
    /// its final result (default [`DEFAULT_STREAM_RETENTION`], 8 MiB); past it, items are
    /// streamed but not repeated in the result, which says how many were left out.
    pub fn stream_retention(mut self, bytes: usize) -> Self {
        self.stream_retention = bytes;
        self
    }

    /// Sets each connection's (and each HTTP session's) output budget in bytes (default
    /// [`DEFAULT_OUTPUT_BUDGET`](crate::DEFAULT_OUTPUT_BUDGET), 4 MiB): while this much
    /// output waits for a client that does not read, handlers sending progress, log messages
    /// or streamed content wait (see [`Peer::writable`]); a byte-stream connection reads no
    /// more requests once four times this (at least 16 MiB) waits. Answers of requests
    /// already running still go out; a single message larger than the budget is sent whole.
    pub fn max_unsent_bytes(mut self, bytes: usize) -> Self {
        self.output_budget = bytes.max(1);
        self
    }

    /// Sets the largest accepted message (default 16 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.config.max_message_size = bytes;
        self
    }

    /// Sets the most requests a client may have in flight (default 1024).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.config.max_inbound_in_flight = n;
        self
    }

    /// Sets the most `subscriptions/listen` streams (2026-07-28) one connection may hold open
    /// at once (default 16): over a byte stream (stdio, TCP, WebSocket) the client's streams
    /// share the connection; over HTTP each stream is a session of its own, so this bounds
    /// nothing there but is applied all the same. One more is refused with a JSON-RPC error
    /// (`-32008`, [`ErrorKind::LimitExceeded`], "too many subscriptions/listen streams open")
    /// and the streams already open go on.
    pub fn max_listeners(mut self, n: usize) -> Self {
        self.config.max_listeners = n;
        self.listen.max_listeners = Some(n);
        self
    }

    /// Sets how many messages one `subscriptions/listen` stream may have queued and not yet
    /// written (default 64). A change that would exceed it ends that stream instead of
    /// growing the queue: over a byte stream the client gets `notifications/cancelled`
    /// naming its listen request (reason "the subscription fell behind…"), over HTTP the
    /// stream's reply ends; either way the client knows it missed changes, and lists again
    /// before it listens again (our [`Client`](crate::Client) does both).
    pub fn listener_backlog(mut self, n: usize) -> Self {
        self.config.listener_backlog = n;
        self.listen.backlog = Some(n);
        self
    }

    /// Sets the most `subscriptions/listen` streams the HTTP endpoint holds open at once, for
    /// all clients together (default 1000, `mcp_proto::http::EndpointConfig::max_listen_streams`;
    /// it wins over the config passed to `Server::http_service`). One more is answered
    /// `503 Service Unavailable` with a JSON-RPC error body ("too many subscriptions/listen
    /// streams open"); our client tries again later.
    pub fn max_listen_streams(mut self, n: usize) -> Self {
        self.listen.streams = Some(n);
        self
    }

    /// Sets how long a `subscriptions/listen` stream over HTTP may stay silent before it gets
    /// an SSE keep-alive comment (default 20 s; `None` for none), so that proxies that cut idle
    /// connections leave it open (`mcp_proto::http::EndpointConfig::listen_keep_alive`; it wins
    /// over the config passed to `Server::http_service`). Byte streams need none.
    pub fn listen_keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.listen.keep_alive = Some(interval);
        self
    }

    /// Sets the timeout of requests the server sends (sampling, elicitation, roots).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// Restricts the protocol versions the server speaks. The default is every version of
    /// both eras (`ProtocolVersion::ALL`: 2024-11-05 … 2025-11-25 with the handshake, and
    /// 2026-07-28); `ProtocolVersion::HANDSHAKE` serves only the handshake era,
    /// `&[ProtocolVersion::V2026_07_28]` only the stateless one. With a version of the
    /// stateless era among them, a request that names its version in `_meta` is served
    /// without a handshake, `server/discover` is answered, and list and read results carry
    /// the [`cache_hints`](Self::cache_hints).
    pub fn versions(mut self, versions: &[ProtocolVersion]) -> Self {
        self.config.versions = versions.to_vec();
        self
    }

    /// Registers a tool whose arguments deserialise into `T`.
    ///
    /// What the handler's `Err` becomes is decided by its [`ErrorKind`]:
    /// - a failure of the tool itself — [`ErrorKind::HandlerFailed`], [`ErrorKind::Internal`]
    ///   or [`ErrorKind::Other`] — is a `CallToolResult` with `isError: true` and the error's
    ///   message as its text, so the model sees it (`?` on an `io::Error` or a
    ///   `serde_json::Error`, and [`Error::handler`] around an error type of your own, give
    ///   `HandlerFailed`);
    /// - any other kind ([`ErrorKind::InvalidParams`], [`ErrorKind::NotFound`],
    ///   [`ErrorKind::Unauthorized`], …) is a JSON-RPC error with that kind's code: the request
    ///   itself was wrong.
    ///
    /// Arguments that do not deserialise into `T` are a tool failure too (`isError`, as the
    /// 2025-11-25 revision asks for input validation; `-32602` for a client at an earlier
    /// version); an unknown tool is `-32602`.
    ///
    /// The tool's `inputSchema` is written by hand here (see [`schema_of`]); with the feature
    /// `schemars`, `typed_tool` derives it from `T` instead. It must have
    /// `"type": "object"` at its root: one that does not is a registration error
    /// ([`ErrorKind::InvalidParams`], returned by [`try_build`](Self::try_build)), as is an
    /// invalid `x-mcp-header` annotation or a second tool of the same name.
    pub fn tool<T, F, Fut, R>(mut self, tool: Tool, handler: F) -> Self
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let name = tool.name.clone();
        let param_headers = match typed::check_input_schema(&name, &tool.input_schema)
            .and_then(|()| annotations(&tool))
        {
            Ok(h) => h,
            Err(e) => {
                self.error.get_or_insert(e);
                return self;
            }
        };
        if let Err(taken) = insert_unique(&mut self.registry.tools, name, || ToolEntry {
            tool,
            handler: boxed_tool(handler),
            param_headers,
        }) {
            self.duplicate("tool", &taken);
        }
        self
    }

    /// Registers a resource with a fixed URI; the handler gets the URI and returns its
    /// contents: anything [`IntoResourceContents`] (a `Vec<ResourceContents>`, one of them, or a
    /// `String`: the URI's text).
    ///
    /// A handler's `Err` is the request's JSON-RPC error; [`Error::not_found`] becomes the
    /// version's "resource not found" for the URI read (`-32002`, or `-32602` with
    /// `data.uri` in 2026-07-28).
    ///
    /// ```
    /// use mcp_service::schema::{Resource, ResourceContents};
    /// use mcp_service::server::{ResourceContext, Server};
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("docs", "1.0")
    ///     .resource(
    ///         Resource::new("docs://readme", "readme").with_mime_type("text/markdown"),
    ///         |uri: String, _cx: ResourceContext| async move {
    ///             Ok(vec![ResourceContents::text(uri, "# Read me")])
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let read = sim.block_on(async {
    ///     let client = server.test_client(sim.runtime()).await?;
    ///     client.read_resource("docs://readme").await
    /// });
    /// let read = read.expect("nothing deadlocked")?;
    /// assert_eq!(read.contents[0].as_text(), Some("# Read me"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn resource<F, Fut, R>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String, ResourceContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        let uri = resource.uri.clone();
        if let Err(taken) = insert_unique(&mut self.registry.resources, uri, || {
            let handler = boxed_resource(move |uri, _vars, cx| handler(uri, cx));
            ResourceEntry { resource, handler }
        }) {
            self.duplicate("resource", &taken);
        }
        self
    }

    /// Registers a resource template (RFC 6570 `{var}` expressions); the handler gets the URI
    /// and the variables.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use mcp_service::schema::{ResourceContents, ResourceTemplate};
    /// use mcp_service::server::{ResourceContext, Server};
    /// use mcp_service::{Error, ErrorKind, sim::Sim};
    ///
    /// let server = Server::builder("users", "1.0")
    ///     .resource_template(
    ///         ResourceTemplate::new("user://{id}", "user"),
    ///         |uri: String, vars: HashMap<String, String>, _cx: ResourceContext| async move {
    ///             match vars.get("id").map(String::as_str) {
    ///                 Some("1") => Ok(vec![ResourceContents::text(uri, "Ada")]),
    ///                 _ => Err(Error::not_found("no such user")),
    ///             }
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let reads = sim.block_on(async {
    ///     let client = server.test_client(sim.runtime()).await?;
    ///     Ok::<_, Error>((client.read_resource("user://1").await?, client.read_resource("user://2").await))
    /// });
    /// let (found, missing) = reads.expect("nothing deadlocked")?;
    /// assert_eq!(found.contents[0].as_text(), Some("Ada"));
    /// assert_eq!(missing.unwrap_err().kind(), ErrorKind::NotFound);
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn resource_template<F, Fut, R>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, HashMap<String, String>, ResourceContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        let key = template.uri_template.clone();
        if let Err(taken) = insert_unique(&mut self.registry.templates, key, || TemplateEntry {
            matcher: UriTemplate::parse(&template.uri_template),
            template,
            handler: boxed_resource(handler),
        }) {
            self.duplicate("resource template", &taken);
        }
        self
    }

    /// Registers a prompt; the handler gets the arguments (required ones are checked first) and
    /// returns anything [`IntoPromptResult`] (a `GetPromptResult`, its messages, or a `String`:
    /// one user message).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mcp_service::schema::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
    /// use mcp_service::server::{PromptContext, Server};
    /// use mcp_service::{ErrorKind, sim::Sim};
    ///
    /// let server = Server::builder("review", "1.0")
    ///     .prompt(
    ///         Prompt::new("review").with_argument(PromptArgument::new("code").required()),
    ///         |args: BTreeMap<String, String>, _cx: PromptContext| async move {
    ///             let code = &args["code"]; // required: checked before the handler runs
    ///             Ok(GetPromptResult::new(vec![PromptMessage::user(format!("Review:\n{code}"))]))
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let got = sim.block_on(async {
    ///     let client = server.test_client(sim.runtime()).await?;
    ///     let args = BTreeMap::from([("code".to_string(), "fn main() {}".to_string())]);
    ///     Ok::<_, mcp_service::Error>((
    ///         client.get_prompt("review", args).await?,
    ///         client.get_prompt("review", BTreeMap::new()).await,
    ///     ))
    /// });
    /// let (prompt, without) = got.expect("nothing deadlocked")?;
    /// assert_eq!(prompt.messages[0].content.as_text(), Some("Review:\nfn main() {}"));
    /// assert_eq!(without.unwrap_err().kind(), ErrorKind::InvalidParams);
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn prompt<F, Fut, R>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(BTreeMap<String, String>, PromptContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        let name = prompt.name.clone();
        if let Err(taken) = insert_unique(&mut self.registry.prompts, name, || PromptEntry {
            prompt,
            handler: boxed_prompt(handler),
        }) {
            self.duplicate("prompt", &taken);
        }
        self
    }

    /// Sets the completion handler (`completion/complete`).
    ///
    /// ```
    /// use mcp_service::schema::{CompleteRequestParams, Completion};
    /// use mcp_service::server::{CompleteContext, Server};
    ///
    /// const LANGUAGES: [&str; 3] = ["python", "rust", "ruby"];
    /// let server = Server::builder("langs", "1.0")
    ///     .completion(|params: CompleteRequestParams, _cx: CompleteContext| async move {
    ///         let typed = params.argument.value;
    ///         let values: Vec<String> = LANGUAGES
    ///             .iter()
    ///             .filter(|l| l.starts_with(&typed))
    ///             .map(|l| l.to_string())
    ///             .collect();
    ///         Ok(Completion { total: Some(values.len() as u64), values, has_more: Some(false) })
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompleteRequestParams, CompleteContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, Error>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |p, cx| Box::pin(handler(p, cx))));
        self
    }

    /// Handles a custom (extension) method with raw params and result.
    ///
    /// ```
    /// use mcp_service::server::{HandlerContext, Server};
    ///
    /// let server = Server::builder("ext", "1.0")
    ///     .method("example/echo", |params, _cx: HandlerContext| async move {
    ///         // The params as they came (`None` when absent), answered as they are.
    ///         let raw = params.map_or_else(|| "{}".to_string(), |p| p.get().to_string());
    ///         Ok(serde_json::value::RawValue::from_string(raw)?)
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn method<F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        F: Fn(Option<Box<RawValue>>, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Box<RawValue>, Error>> + Send + 'static,
    {
        if mcp_proto::method::lookup(method).is_some() || self.custom.contains_key(method) {
            self.duplicate("method", method);
        } else {
            self.config.allow_custom_methods = true;
            self.custom.insert(
                method.to_owned(),
                Arc::new(move |p, cx| Box::pin(handler(p, cx))),
            );
        }
        self
    }

    /// Sets the authorizer, consulted before every routed request (refusal: the error is sent,
    /// typically -32001, and the handler does not run).
    pub fn authorizer(
        mut self,
        f: impl Fn(&AuthRequest<'_>) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Self {
        self.authorizer = Some(Arc::new(f));
        self
    }

    /// Protects the server's HTTP endpoints with `rs` (feature `resource-server`): every
    /// request to the Streamable HTTP endpoint (and the legacy HTTP+SSE one), and every
    /// WebSocket upgrade, needs a bearer token `rs` accepts, else `401` with its challenge;
    /// the Protected Resource Metadata is served beside the endpoint; sessions are bound to
    /// their identity. Whatever serves the server over HTTP ([`Server::http_service`], the
    /// drivers' `serve_http`, [`HyperService`](crate::hyper_server::HyperService), the
    /// `respond` functions, `serve_ws`) applies it: there is no way to serve it unprotected
    /// by mistake. Other transports (stdio, in-memory) are not concerned. See
    /// [`crate::resource_server`].
    #[cfg(feature = "resource-server")]
    pub fn resource_server(
        mut self,
        rs: impl Into<Arc<crate::resource_server::ResourceServer>>,
    ) -> Self {
        self.resource_server = Some(rs.into());
        self
    }

    /// The OAuth scopes a call of the tool `name` needs (feature `resource-server`): over
    /// HTTP with a [`ResourceServer`](crate::resource_server::ResourceServer), a
    /// `tools/call` whose token lacks one is answered `403` with the step-up challenge
    /// (`error="insufficient_scope"`, `scope="…"`) before it reaches its session; the handler
    /// also refuses (-32001) any HTTP request without an identity holding them (a server
    /// served over HTTP with no resource server in front). Requests over other transports
    /// (stdio, in-memory, WebSocket: authenticated, if at all, per connection) are not
    /// checked. The tool may be registered before or after, or added later.
    ///
    /// ```
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::schema::Tool;
    ///
    /// let server = Server::builder("notes", "1.0")
    ///     .tool(
    ///         Tool::new("write_note", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let who = cx.identity().and_then(|id| id.subject.clone());
    ///             Ok(format!("written by {}", who.unwrap_or_default()))
    ///         },
    ///     )
    ///     .tool_scopes("write_note", ["notes:write"])
    ///     .build();
    /// # let _ = server;
    /// ```
    #[cfg(feature = "resource-server")]
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        name: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.tools.insert(name.to_owned(), scopes);
        self
    }

    /// The OAuth scopes reading (or subscribing to) a resource needs: `uri` is a resource's
    /// URI or a resource template's `uriTemplate` (then every URI it serves, unless the URI
    /// is a resource of its own). See [`tool_scopes`](Self::tool_scopes).
    #[cfg(feature = "resource-server")]
    pub fn resource_scopes<S: Into<String>>(
        mut self,
        uri: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.resources.insert(uri.to_owned(), scopes);
        self
    }

    /// The OAuth scopes getting the prompt `name` (or completing its arguments) needs. See
    /// [`tool_scopes`](Self::tool_scopes).
    #[cfg(feature = "resource-server")]
    pub fn prompt_scopes<S: Into<String>>(
        mut self,
        name: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.prompts.insert(name.to_owned(), scopes);
        self
    }

    /// The key ring that seals the `requestState` of multi round-trip requests (see
    /// [`crate::mrtr`]). Every replica that may receive a retry needs the same keys. Default:
    /// one random key drawn at [`build`](Self::build), with the server's name as audience
    /// (states then open only in this process).
    ///
    /// ```
    /// use mcp_service::mrtr::RequestStateKeys;
    /// use mcp_service::server::Server;
    ///
    /// let keys = RequestStateKeys::new("notes", [("k1", b"0123456789abcdef0123456789abcdef".to_vec())])?;
    /// let server = Server::builder("notes", "1.0").request_state_keys(keys).build();
    /// # let _ = server;
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn request_state_keys(mut self, keys: RequestStateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Shares this server's HTTP sessions with its other instances (processes, machines)
    /// through `cluster`'s stores, so that any instance serves any request, with no sticky
    /// routing (feature `http-server`):
    ///
    /// - a handshake-era session opened on one instance is served by any other (it looks the
    ///   session up in the store and takes it over: its version, client info, capabilities,
    ///   owner, subscriptions and log level); requests in flight stay where they are;
    /// - a client resuming an SSE stream with `Last-Event-ID` on another instance gets every
    ///   event it missed, from the shared log; the session's standalone stream then goes on
    ///   there;
    /// - [`Server::resource_updated`] and the list changes reach the clients of every
    ///   instance, in both eras (`resources/subscribe` and `subscriptions/listen`);
    /// - a session deleted by its client ends on every instance.
    ///
    /// Give every instance the same MRTR keys as well:
    /// [`Cluster::request_state_keys`](crate::cluster::Cluster::request_state_keys).
    /// [`Server::log`] stays with the instance's own clients.
    ///
    /// ```
    /// use mcp_service::cluster::{Cluster, MemoryStores, StoreLimits};
    /// use mcp_service::Server;
    ///
    /// # let sim = mcp_service::sim::Sim::new();
    /// let stores = MemoryStores::new(StoreLimits::default(), sim.runtime());
    /// let server = Server::builder("notes", "1.0").cluster(Cluster::new(stores, 1)).build();
    /// ```
    #[cfg(feature = "http-server")]
    pub fn cluster(mut self, cluster: crate::cluster::Cluster) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Serves the tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28; see
    /// [`crate::tasks`]): tools whose `execution.taskSupport` is optional or required may run
    /// as tasks for clients that declare the extension. Task records go to an in-memory store
    /// unless [`task_store`](Self::task_store) names another.
    ///
    /// ```
    /// use mcp_service::schema::{TaskSupport, Tool, ToolExecution};
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::tasks::TaskOptions;
    ///
    /// let mut report = Tool::new("report", schema_of(serde_json::json!({"type": "object"})));
    /// report.execution = Some(ToolExecution { task_support: Some(TaskSupport::Optional) });
    /// let server = Server::builder("reports", "1.0")
    ///     .tasks(TaskOptions::default())
    ///     .tool(report, |_: serde_json::Value, cx: ToolContext| async move {
    ///         cx.as_task().await; // answered with a task from here on
    ///         Ok("the report")
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn tasks(mut self, options: crate::tasks::TaskOptions) -> Self {
        let store = self.tasks.take().and_then(|(_, s)| s);
        self.tasks = Some((options, store));
        self
    }

    /// Where task records are kept (implies [`tasks`](Self::tasks) with default options when
    /// not enabled yet).
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        let options = self.tasks.take().map(|(o, _)| o).unwrap_or_default();
        self.tasks = Some((options, Some(store)));
        self
    }

    /// Declares the extension `id` with its `settings` (an object, `{}` for none) under
    /// `capabilities.extensions`, as clients see it in the handshake or `server/discover`
    /// (2026-07-28 extension negotiation). Handlers read what the client declared with
    /// [`HandlerContext::client_extension`]. The tasks and skills extensions declare themselves.
    ///
    /// ```
    /// let server = mcp_service::server::Server::builder("s", "1")
    ///     .extension("com.example/audit", serde_json::json!({"level": 2}))
    ///     .build();
    /// let caps: serde_json::Value =
    ///     serde_json::from_str(server.config().capabilities.get()).unwrap();
    /// assert_eq!(caps["extensions"]["com.example/audit"]["level"], 2);
    /// ```
    pub fn extension(mut self, id: &str, settings: Value) -> Self {
        self.extensions.insert(id.to_owned(), settings);
        self
    }

    /// Declares the `tools` capability (with `listChanged`) even with no tool registered at
    /// build, so that tools added at runtime ([`Server::add_tool`]) are seen. Without it, a
    /// server that had no tool at build declares no `tools` and refuses `add_tool`.
    ///
    /// What a server declares follows what it has: `tools` when it has tools, `resources` when
    /// it has resources or resource templates (or serves skills, whose files it reports
    /// changed itself, so with `subscribe`), `prompts` when it has
    /// prompts, each with `listChanged: true` (items can be added and removed at runtime, and
    /// connected clients are told); `completions` when a [`completion`](Self::completion)
    /// handler is set; `logging` and `resources.subscribe` only when asked for
    /// ([`logging`](Self::logging), [`resource_subscriptions`](Self::resource_subscriptions)).
    /// [`capability`](Self::capability) overrides any of it.
    ///
    /// ```
    /// let server = mcp_service::server::Server::builder("s", "1").dynamic_tools().build();
    /// let caps: serde_json::Value =
    ///     serde_json::from_str(server.config().capabilities.get()).unwrap();
    /// assert_eq!(caps, serde_json::json!({"tools": {"listChanged": true}}));
    /// ```
    pub fn dynamic_tools(mut self) -> Self {
        self.advertise.dynamic_tools = true;
        self
    }

    /// Declares the `resources` capability (with `listChanged`) even with no resource or
    /// template registered at build, for [`Server::add_resource`] and
    /// [`Server::add_resource_template`] (see [`dynamic_tools`](Self::dynamic_tools)).
    pub fn dynamic_resources(mut self) -> Self {
        self.advertise.dynamic_resources = true;
        self
    }

    /// Declares the `prompts` capability (with `listChanged`) even with no prompt registered
    /// at build, for [`Server::add_prompt`] (see [`dynamic_tools`](Self::dynamic_tools)).
    pub fn dynamic_prompts(mut self) -> Self {
        self.advertise.dynamic_prompts = true;
        self
    }

    /// Declares `resources.subscribe` (and so `resources`): clients may subscribe to a
    /// resource's URI (`resources/subscribe`, or a 2026-07-28 `subscriptions/listen` stream's
    /// `resourceSubscriptions`), and the application promises to tell them when it changes,
    /// by calling [`Server::resource_updated`]. The server cannot know on its own when a
    /// resource changes, so it does not declare this unless asked: without it,
    /// `resources/subscribe` is answered `-32601` (method not found).
    pub fn resource_subscriptions(mut self) -> Self {
        self.advertise.subscribe = true;
        self
    }

    /// Declares `logging`: the server sends log messages ([`HandlerContext::log`],
    /// [`Server::log`]) and clients may set their level (`logging/setLevel`). Without it
    /// those messages are not sent (the specification asks a server that sends them to
    /// declare it) and `logging/setLevel` is answered `-32601`.
    ///
    /// ```
    /// let server = mcp_service::server::Server::builder("s", "1").logging().build();
    /// let caps: serde_json::Value =
    ///     serde_json::from_str(server.config().capabilities.get()).unwrap();
    /// assert_eq!(caps["logging"], serde_json::json!({}));
    /// ```
    pub fn logging(mut self) -> Self {
        self.advertise.logging = true;
        self
    }

    /// Overrides one top-level capability after the rest are derived: `Some(value)` declares
    /// `name` as `value` (replacing what was derived), `None` removes it. The server follows
    /// the result: the core answers `-32601` for the methods of a capability not declared,
    /// [`Server::add_tool`] (and the others) refuse items of an undeclared kind, list changes
    /// are announced only where `listChanged` is `true`, and log messages are sent only with
    /// `logging`. Later calls for the same `name` win.
    ///
    /// ```
    /// use mcp_service::schema::Tool;
    /// use mcp_service::server::{Server, schema_of};
    /// use serde_json::json;
    ///
    /// let server = Server::builder("s", "1")
    ///     .tool(Tool::new("t", schema_of(json!({"type": "object"}))), |_: serde_json::Value, _| async { Ok("") })
    ///     .capability("tools", Some(json!({})))       // no `listChanged` promised
    ///     .capability("experimental", Some(json!({"com.example/x": {}})))
    ///     .build();
    /// let caps: serde_json::Value =
    ///     serde_json::from_str(server.config().capabilities.get()).unwrap();
    /// assert_eq!(caps["tools"], json!({}));
    /// assert!(caps["experimental"]["com.example/x"].is_object());
    /// ```
    pub fn capability(mut self, name: &str, value: Option<Value>) -> Self {
        self.advertise.overrides.push((name.to_owned(), value));
        self
    }

    /// The telemetry hub (observers and subscriptions).
    pub fn telemetry(mut self, telemetry: Telemetry) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// Finishes the server, or reports the first registration error.
    ///
    /// # Errors
    /// The first registration that failed: [`ErrorKind::DuplicateRegistration`] for a name,
    /// URI or method registered twice; [`ErrorKind::InvalidParams`] for a tool whose
    /// `inputSchema` has no `"type": "object"` at its root, whose typed argument or result
    /// type has no object schema, or whose `x-mcp-header` annotations are invalid; and the
    /// skills' errors (feature `skills`).
    pub fn try_build(mut self) -> Result<Server, Error> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut caps = serde_json::json!({});
        let reg = &self.registry;
        let want = &self.advertise;
        let mut declare = |name: &str, value: Value| {
            if let Some(obj) = caps.as_object_mut() {
                obj.insert(name.into(), value);
            }
        };
        if !reg.tools.is_empty() || want.dynamic_tools {
            declare("tools", serde_json::json!({"listChanged": true}));
        }
        #[cfg(feature = "skills")]
        let skills = self.skills.declared;
        #[cfg(not(feature = "skills"))]
        let skills = false;
        if !reg.resources.is_empty()
            || !reg.templates.is_empty()
            || want.dynamic_resources
            || want.subscribe
            || skills
        {
            let mut resources = serde_json::json!({"listChanged": true});
            // Skills' files are resources the server itself reports changed when it reloads.
            if want.subscribe || skills {
                resources["subscribe"] = Value::Bool(true);
            }
            declare("resources", resources);
        }
        if !reg.prompts.is_empty() || want.dynamic_prompts {
            declare("prompts", serde_json::json!({"listChanged": true}));
        }
        if want.logging {
            declare("logging", serde_json::json!({}));
        }
        if self.completion.is_some() {
            declare("completions", serde_json::json!({}));
        }
        if self.custom.is_empty() {
            // nothing to add
        } else if let Some(obj) = caps.as_object_mut() {
            obj.insert("experimental".into(), serde_json::json!({}));
        }
        let mut extensions = std::mem::take(&mut self.extensions);
        if self.tasks.is_some() {
            extensions.insert(
                mcp_proto::schema::tasks::extension::EXTENSION_ID.into(),
                serde_json::json!({}),
            );
        }
        if !extensions.is_empty()
            && let Some(obj) = caps.as_object_mut()
        {
            obj.insert("extensions".into(), Value::Object(extensions));
        }
        #[cfg(feature = "skills")]
        skills::install(&mut self, &mut caps)?;
        for (name, value) in std::mem::take(&mut self.advertise.overrides) {
            if let Some(obj) = caps.as_object_mut() {
                match value {
                    Some(v) => obj.insert(name, v),
                    None => obj.remove(&name),
                };
            }
        }
        let declared = Declared::of(&caps);
        self.config.capabilities = crate::raw::to_raw(&caps)?;
        self.config.info = crate::raw::to_raw(&self.info)?;
        let state_keys = match self.state_keys {
            Some(k) => k,
            None => RequestStateKeys::random(&self.info.name)?,
        };
        let server = Server {
            inner: Arc::new(Inner {
                config: self.config,
                registry: RwLock::new(self.registry),
                completion: self.completion,
                custom: self.custom,
                authorizer: self.authorizer,
                #[cfg(feature = "resource-server")]
                scopes: self.scopes,
                #[cfg(feature = "resource-server")]
                resource_server: self.resource_server,
                page_size: self.page_size,
                stream_retention: self.stream_retention,
                output_budget: self.output_budget,
                cache: self.cache,
                cache_for: self.cache_for,
                state_keys: Arc::new(state_keys),
                listen: self.listen,
                tasks: self
                    .tasks
                    .map(|(options, store)| Arc::new(crate::tasks::Tasks::new(options, store))),
                connections: Mutex::new(HashMap::new()),
                #[cfg(feature = "http-server")]
                cluster: self.cluster,
                #[cfg(feature = "http-server")]
                by_session: Mutex::new(HashMap::new()),
                declared,
                telemetry: self.telemetry,
            }),
        };
        if let Some(tasks) = &server.inner.tasks {
            // Status changes go to the listen streams following the task (held weakly: the
            // tasks live as long as the server).
            let inner = Arc::downgrade(&server.inner);
            let _ = tasks.announcer.set(Box::new(move |task| {
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                let mut task = task.clone();
                task.result_type = None;
                task.meta = None;
                if let Ok(text) = serde_json::to_string(&task) {
                    Server { inner }.publish(&Change::TaskStatus {
                        task_id: task.task_id,
                        task: text,
                    });
                }
            }));
        }
        Ok(server)
    }

    /// Finishes the server.
    ///
    /// # Panics
    /// On a registration error, e.g. a duplicate name or a tool schema that is not an object
    /// (a programming error; use [`try_build`](Self::try_build) to handle it).
    pub fn build(self) -> Server {
        match self.try_build() {
            Ok(s) => s,
            Err(e) => panic!("invalid server definition: {e}"),
        }
    }
}

#[cfg(feature = "resource-server")]
impl Inner {
    /// The scopes `method` with `params` needs by its tool, resource or prompt (empty: none;
    /// params that do not parse need none here: the request is refused on its own later).
    fn required_scopes(&self, method: &str, params: Option<&RawValue>) -> Vec<String> {
        #[derive(serde::Deserialize)]
        struct Target<'a> {
            #[serde(borrow, default)]
            name: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default)]
            uri: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default, rename = "ref")]
            reference: Option<Box<Target<'a>>>,
        }
        if self.scopes.is_empty() {
            return Vec::new();
        }
        let Some(t) = params.and_then(|p| serde_json::from_str::<Target<'_>>(p.get()).ok()) else {
            return Vec::new();
        };
        let resource = |uri: &str| -> Vec<String> {
            if let Some(s) = self.scopes.resources.get(uri) {
                return s.clone();
            }
            let reg = self.registry.read().unwrap_or_else(|e| e.into_inner());
            if reg.resources.contains_key(uri) {
                return Vec::new();
            }
            reg.templates
                .values()
                .find(|t| t.matcher.matches(uri).is_some())
                .and_then(|t| self.scopes.resources.get(&t.template.uri_template))
                .cloned()
                .unwrap_or_default()
        };
        let of = |map: &HashMap<String, Vec<String>>, key: Option<&str>| {
            key.and_then(|k| map.get(k)).cloned().unwrap_or_default()
        };
        match method {
            "tools/call" => of(&self.scopes.tools, t.name.as_deref()),
            "prompts/get" => of(&self.scopes.prompts, t.name.as_deref()),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                t.uri.as_deref().map(resource).unwrap_or_default()
            }
            "completion/complete" => match t.reference.as_deref() {
                Some(Target { name: Some(n), .. }) => of(&self.scopes.prompts, Some(n)),
                Some(Target { uri: Some(u), .. }) => resource(u),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}

impl Server {
    /// The OAuth scopes a request of `method` with `params` needs by what it calls (feature
    /// `resource-server`): those set with [`ServerBuilder::tool_scopes`],
    /// [`resource_scopes`](ServerBuilder::resource_scopes) (a resource's URI, else the
    /// template serving it) and [`prompt_scopes`](ServerBuilder::prompt_scopes) for
    /// `tools/call`, `resources/read` / `subscribe` / `unsubscribe`, `prompts/get` and
    /// `completion/complete`; empty for anything else.
    #[cfg(feature = "resource-server")]
    pub fn required_scopes(&self, method: &str, params: Option<&RawValue>) -> Vec<String> {
        self.inner.required_scopes(method, params)
    }

    /// The resource server protecting the server's HTTP endpoints
    /// ([`ServerBuilder::resource_server`]).
    #[cfg(feature = "resource-server")]
    pub fn resource_server(&self) -> Option<&Arc<crate::resource_server::ResourceServer>> {
        self.inner.resource_server.as_ref()
    }

    /// Whether any tool, resource or prompt requires scopes.
    #[cfg(feature = "resource-server")]
    pub(crate) fn has_scoped_items(&self) -> bool {
        !self.inner.scopes.is_empty()
    }

    /// Starts building a server named `name` at `version`.
    ///
    /// ```
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::schema::Tool;
    ///
    /// let server = Server::builder("notes", "1.0")
    ///     .title("Notes")
    ///     .instructions("Keeps short notes.")
    ///     .tool(
    ///         Tool::new("ping", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, _cx: ToolContext| async move { Ok("pong") },
    ///     )
    ///     .try_build()?; // or `.build()`, which panics on a definition error
    /// assert!(server.config().info.get().contains(r#""name":"notes""#));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder {
            info: Implementation {
                name: name.to_owned(),
                version: version.to_owned(),
                ..Default::default()
            },
            // Both eras by default: handshake-era clients as before, and 2026-07-28 requests.
            config: Config::new(name, version).versions(&ProtocolVersion::ALL),
            registry: Registry::default(),
            completion: None,
            custom: HashMap::new(),
            authorizer: None,
            #[cfg(feature = "resource-server")]
            scopes: ScopeRules::default(),
            #[cfg(feature = "resource-server")]
            resource_server: None,
            page_size: 100,
            stream_retention: DEFAULT_STREAM_RETENTION,
            output_budget: crate::peer::DEFAULT_OUTPUT_BUDGET,
            cache: (0, CacheScope::Private),
            cache_for: HashMap::new(),
            state_keys: None,
            listen: ListenLimits::default(),
            tasks: None,
            #[cfg(feature = "skills")]
            skills: skills::Setup::default(),
            extensions: Map::new(),
            advertise: Advertise::default(),
            telemetry: Telemetry::default(),
            #[cfg(feature = "http-server")]
            cluster: None,
            error: None,
        }
    }

    /// The session configuration (framing, bounds, versions, capabilities).
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Serves one connection over `transport` until it closes (at input EOF every in-flight
    /// request is answered and flushed first). `transport` is a
    /// [`ByteStream`](crate::ByteStream) (NDJSON) or a [`Transport::Messages`] (one message per
    /// frame).
    ///
    /// # Errors
    /// [`ErrorKind::TransportError`] when the transport fails (an IO error, a frame over
    /// [`max_message_size`](ServerBuilder::max_message_size)); a clean end of input, or a peer
    /// that closes, is `Ok`.
    pub async fn serve<R: Runtime>(
        &self,
        rt: R,
        transport: impl Into<Transport>,
    ) -> Result<(), Error> {
        self.serve_with(rt, transport, self.inner.config.clone())
            .await
    }

    /// A client connected to this server in memory, for tests: the server side is spawned on
    /// `rt` over an in-memory pipe ([`memory::duplex`](crate::memory::duplex): no socket, no
    /// process), and this resolves once the client is connected (the handshake, or the
    /// stateless era's discovery, is done). Any [`Runtime`] serves: the deterministic
    /// [`Sim`](crate::sim::Sim), or a driver's (`mcp_tokio::TokioRuntime::current()`,
    /// `mcp_async_std::SmolRuntime`, …). The server goes on serving until the client is
    /// closed or dropped. The client is [`ClientOptions::new`](crate::ClientOptions::new)
    /// `("mcp-test-client", …)` with the default options; [`test_client_with`](Self::test_client_with)
    /// takes others (a sampling handler, roots, versions).
    ///
    /// ```
    /// use mcp_service::schema::Tool;
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Echo { text: String }
    ///
    /// let server = Server::builder("echo", "1.0")
    ///     .tool(
    ///         Tool::new("echo", schema_of(serde_json::json!({"type": "object"}))),
    ///         |args: Echo, _cx: ToolContext| async move { Ok(args.text) },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let result = sim.block_on(async {
    ///     let client = server.test_client(sim.runtime()).await?;
    ///     client.call_tool("echo", serde_json::json!({"text": "hi"})).await
    /// });
    /// let result = result.expect("nothing deadlocked")?;
    /// assert_eq!(result.content[0].as_text(), Some("hi"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`Client::connect`](crate::Client::connect): a server that does not serve
    /// any version the client speaks, or one that ended.
    pub async fn test_client<R: Runtime>(&self, rt: R) -> Result<crate::Client, Error> {
        let options = crate::ClientOptions::new("mcp-test-client", env!("CARGO_PKG_VERSION"));
        self.test_client_with(rt, options).await
    }

    /// [`test_client`](Self::test_client) with the client's options.
    ///
    /// # Errors
    /// Those of [`Client::connect`](crate::Client::connect).
    pub async fn test_client_with<R: Runtime>(
        &self,
        rt: R,
        options: crate::ClientOptions,
    ) -> Result<crate::Client, Error> {
        crate::driver::memory_pair(rt, self.clone(), options).await
    }

    /// Serves one connection with a modified session configuration (e.g. another framing).
    ///
    /// # Errors
    /// As [`serve`](Self::serve).
    pub async fn serve_with<R: Runtime>(
        &self,
        rt: R,
        transport: impl Into<Transport>,
        config: Config,
    ) -> Result<(), Error> {
        self.serve_connection(rt, transport.into(), config, |conn| conn)
            .await
    }

    /// Serves a WebSocket connection: every request sees `head`, the upgrade request's, as
    /// its HTTP request.
    #[cfg(feature = "ws")]
    pub(crate) async fn serve_upgraded<R: Runtime>(
        &self,
        rt: R,
        transport: impl Into<Transport>,
        head: Arc<http::request::Parts>,
    ) -> Result<(), Error> {
        let config = self.inner.config.clone();
        self.serve_connection(rt, transport.into(), config, |conn| {
            conn.with_http_request(head)
        })
        .await
    }

    /// Serves one connection, set up by `setup` before it runs.
    async fn serve_connection<R: Runtime>(
        &self,
        rt: R,
        transport: Transport,
        config: Config,
        setup: impl FnOnce(crate::Connection<R>) -> crate::Connection<R>,
    ) -> Result<(), Error> {
        self.give_runtime(&rt);
        let session = Session::server(transport.adapt(config));
        let (service, state_slot) = ServerService::new(self.inner.clone());
        let (peer, conn, _ready) = connection(
            rt,
            session,
            transport,
            Arc::new(service),
            self.inner.telemetry.clone(),
        );
        peer.set_output_budget(self.inner.output_budget);
        let state = Arc::new(ConnState::new(peer.clone(), false));
        let _ = state_slot.set(state.clone());
        let _registered = Registered::new(&self.inner, peer.connection_id(), state);
        setup(conn).await
    }

    /// The engine that serves this server over Streamable HTTP (feature `http-server`): one
    /// task owning the
    /// [`Endpoint`](mcp_proto::http::Endpoint), with a fresh per-session service for each MCP
    /// session (counted in [`connection_count`](Self::connection_count) while alive). Take its
    /// [`handle`](crate::http_engine::HttpEngine::handle), then spawn it.
    #[cfg(feature = "http-server")]
    pub fn http_service<R: Runtime>(
        &self,
        rt: R,
        config: mcp_proto::http::EndpointConfig,
    ) -> crate::http_engine::HttpEngine<R> {
        self.give_runtime(&rt);
        let mut config = self.endpoint_config(config);
        let link = self.clustered(&rt, &mut config);
        let engine = crate::http_engine::HttpEngine::new(rt, config, self.session_factory())
            .with_telemetry(self.inner.telemetry.clone())
            .with_cluster(link);
        #[cfg(feature = "resource-server")]
        let engine = engine.with_guard(crate::resource_server::Guard::of(self));
        engine
    }

    /// [`http_service`](Self::http_service) as `shards` engines serving one endpoint
    /// together (see [`HttpEngine::sharded`](crate::http_engine::HttpEngine::sharded)), and
    /// the handle that spreads requests over them: spawn every engine, and the server's HTTP
    /// work runs on as many cores.
    #[cfg(feature = "http-server")]
    pub fn http_shards<R: Runtime>(
        &self,
        rt: R,
        config: mcp_proto::http::EndpointConfig,
        shards: usize,
    ) -> (
        crate::http_engine::HttpHandle,
        Vec<crate::http_engine::HttpEngine<R>>,
    ) {
        self.give_runtime(&rt);
        let mut config = self.endpoint_config(config);
        let link = self.clustered(&rt, &mut config);
        let (handle, engines) =
            crate::http_engine::HttpEngine::sharded(rt, config, self.session_factory(), shards);
        #[cfg(feature = "resource-server")]
        let guard = crate::resource_server::Guard::of(self);
        #[cfg(feature = "resource-server")]
        let handle = handle.with_guard(guard.clone());
        let telemetry = &self.inner.telemetry;
        let engines = engines
            .into_iter()
            .map(|e| {
                let engine = e
                    .with_telemetry(telemetry.clone())
                    .with_cluster(link.clone());
                #[cfg(feature = "resource-server")]
                let engine = engine.with_guard(guard.clone());
                engine
            })
            .collect();
        (handle, engines)
    }

    /// With a cluster: `config` numbered as this instance and logging its events, the
    /// cluster's tasks started on `rt`, and what the engines need of it.
    #[cfg(feature = "http-server")]
    fn clustered<R: Runtime>(
        &self,
        rt: &R,
        config: &mut mcp_proto::http::EndpointConfig,
    ) -> Option<crate::http_engine::ClusterLink> {
        let c = self.inner.cluster.as_ref()?;
        config.instance = c.instance();
        config.event_store = Some(c.shared.event_store_factory(config.event_store.take()));
        let heard = Arc::downgrade(&self.inner);
        c.shared.start(
            rt,
            Arc::new(move |m| {
                if let Some(inner) = heard.upgrade() {
                    Server { inner }.hear(m);
                }
            }),
        );
        let opened = Arc::downgrade(&self.inner);
        Some(crate::http_engine::ClusterLink {
            shared: c.shared.clone(),
            opened: Arc::new(move |peer, sid, record| {
                if let Some(inner) = opened.upgrade() {
                    Server { inner }.cluster_opened(peer, sid, record);
                }
            }),
        })
    }

    /// The HTTP session `sid` is served here by the connection of `peer`, with the
    /// subscriptions and log level of `record` when another instance opened it.
    #[cfg(feature = "http-server")]
    fn cluster_opened(
        &self,
        peer: &Peer,
        sid: mcp_proto::http::SessionId,
        record: Option<&crate::cluster::SessionRecord>,
    ) {
        let Some(state) = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&peer.connection_id())
            .cloned()
        else {
            return;
        };
        let sid = sid.to_string();
        let _ = state.session.set(sid.clone());
        if let Some(r) = record {
            state
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(r.subscriptions.iter().cloned());
            if let Some(level) = r.log_level.as_ref().and_then(|l| parse_level(l)) {
                *state.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
            }
        }
        self.inner
            .by_session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sid, state);
    }

    /// Carries out what another instance published.
    #[cfg(feature = "http-server")]
    fn hear(&self, msg: crate::cluster::BusMessage) {
        use crate::cluster::BusMessage as M;
        let held = |sid: &str| {
            self.inner
                .by_session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(sid)
                .cloned()
        };
        match msg {
            M::ResourceUpdated { uri } => {
                self.resource_updated_here(&uri);
            }
            M::ListChanged { method } => {
                let change = [TOOLS_CHANGED, RESOURCES_CHANGED, PROMPTS_CHANGED]
                    .into_iter()
                    .find(|c| c.method() == method);
                if let Some(change) = change
                    && self.inner.declared.announces(&change)
                {
                    self.list_changed_here(&change);
                }
            }
            M::Subscribed { session, uri } => {
                if let Some(c) = held(&session) {
                    c.subscriptions
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(uri);
                }
            }
            M::Unsubscribed { session, uri } => {
                if let Some(c) = held(&session) {
                    c.subscriptions
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&uri);
                }
            }
            M::LogLevel { session, level } => {
                if let (Some(c), Some(level)) = (held(&session), parse_level(&level)) {
                    *c.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
                }
            }
            M::SessionEnded { session } => {
                if let Some(c) = held(&session) {
                    c.peer.close();
                }
            }
            M::Deliver {
                instance,
                session,
                body,
            } => {
                if let Some(c) = &self.inner.cluster
                    && c.instance() == instance
                {
                    c.shared.deliver(&session, body);
                }
            }
        }
    }

    /// Each HTTP session's service.
    #[cfg(feature = "http-server")]
    fn session_factory(&self) -> crate::http_engine::SessionFactory {
        let server = self.clone();
        Arc::new(move |peer: &Peer| server.session_service(peer))
    }

    /// `config` with what the server adds: its listen limits and tool header annotations.
    #[cfg(feature = "http-server")]
    fn endpoint_config(
        &self,
        mut config: mcp_proto::http::EndpointConfig,
    ) -> mcp_proto::http::EndpointConfig {
        let limits = &self.inner.listen;
        if let Some(n) = limits.max_listeners {
            config.session.max_listeners = n;
        }
        if let Some(n) = limits.backlog {
            config.session.listener_backlog = n;
        }
        if let Some(n) = limits.streams {
            config.max_listen_streams = n;
        }
        if let Some(k) = limits.keep_alive {
            config.listen_keep_alive = k;
        }
        if config.tool_headers.is_none() {
            // The registry's annotations, read at each 2026-07-28 `tools/call`.
            let inner = Arc::downgrade(&self.inner);
            config.tool_headers = Some(Arc::new(move |tool: &str| {
                let inner = inner.upgrade()?;
                let reg = inner.registry.read().unwrap_or_else(|e| e.into_inner());
                reg.tools.get(tool).and_then(|t| t.param_headers.clone())
            }));
        }
        config
    }

    /// A per-session service around `peer`, registered as a connection until the returned
    /// closure runs.
    #[cfg(feature = "http-server")]
    pub(crate) fn session_service(
        &self,
        peer: &Peer,
    ) -> (Arc<dyn crate::Service>, Box<dyn FnOnce() + Send>) {
        let (service, state_slot) = ServerService::new(self.inner.clone());
        peer.set_output_budget(self.inner.output_budget);
        let state = Arc::new(ConnState::new(peer.clone(), false));
        let _ = state_slot.set(state.clone());
        let registered = Registered::new(&self.inner, peer.connection_id(), state);
        (Arc::new(service), Box::new(move || drop(registered)))
    }

    /// Tasks run on the first runtime this server is served on.
    fn give_runtime<R: Runtime>(&self, rt: &R) {
        if let Some(tasks) = &self.inner.tasks {
            let rt = rt.clone();
            let _ = tasks
                .spawner
                .set(Arc::new(move |f| rt.spawn(f)) as crate::tasks::Spawner);
        }
    }

    /// Closes every connection this server serves, gracefully, as the session's own close
    /// does: requests in flight are answered within the session's
    /// [`close_timeout`](Config::close_timeout), and each open `subscriptions/listen` stream
    /// is answered with its final result (`SubscriptionsListenResult`, the revision's graceful
    /// end: the client knows the server ended it) rather than cut. Over a byte stream the
    /// connection then ends; over HTTP each session does (to refuse new requests as well,
    /// shut the engine down: `HttpHandle::shut_down`, feature `http-server`).
    /// Connections opened afterwards are served as usual.
    pub fn shut_down(&self) {
        for c in self.connections(|_| true) {
            c.peer.close();
        }
    }

    /// The connections served that `keep` accepts, taken out of the lock.
    fn connections(&self, keep: impl Fn(&ConnState) -> bool) -> Vec<Arc<ConnState>> {
        self.inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|c| keep(c))
            .cloned()
            .collect()
    }

    /// How many connections are being served.
    pub fn connection_count(&self) -> usize {
        self.inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    fn broadcast(
        &self,
        method: &'static str,
        params: Option<&Value>,
        only: impl Fn(&ConnState) -> bool,
    ) {
        let conns = self.connections(|c| c.ready.load(Ordering::Acquire) && only(c));
        let raw = params.and_then(|p| crate::raw::to_raw(p).ok());
        for c in conns {
            let _ = c.peer.notify(method, raw.clone());
        }
    }

    /// Tells the listen streams (2026-07-28) that want `change`; how many.
    fn publish(&self, change: &Change) -> usize {
        let conns: Vec<(Arc<ConnState>, usize)> = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|c| (c.clone(), c.listening(change)))
            .filter(|(_, n)| *n > 0)
            .collect();
        conns
            .into_iter()
            .filter(|(c, _)| c.peer.publish(change.clone()).is_ok())
            .map(|(_, n)| n)
            .sum()
    }

    /// Tells connected clients that a list changed: handshake-era connections, and the listen
    /// streams that asked for it.
    fn list_changed(&self, change: Change) {
        if !self.inner.declared.announces(&change) {
            return;
        }
        #[cfg(feature = "http-server")]
        if let Some(c) = &self.inner.cluster {
            c.shared.op(crate::cluster::Op::Publish(
                crate::cluster::BusMessage::ListChanged {
                    method: change.method().to_owned(),
                },
            ));
        }
        self.list_changed_here(&change);
    }

    /// [`list_changed`](Self::list_changed) for this instance's clients only.
    fn list_changed_here(&self, change: &Change) {
        self.broadcast(change.method(), None, |_| true);
        self.publish(change);
    }

    /// Inserts `key` into one registry map unless it is taken, then tells connected clients
    /// (`notification`) that the list changed.
    fn register<V>(
        &self,
        notification: Change,
        what: &str,
        map: impl FnOnce(&mut Registry) -> &mut BTreeMap<String, Arc<V>>,
        key: String,
        entry: impl FnOnce() -> V,
    ) -> Result<(), Error> {
        if let Some(e) = self.inner.declared.refuses(what) {
            return Err(e);
        }
        {
            let mut reg = self
                .inner
                .registry
                .write()
                .unwrap_or_else(|e| e.into_inner());
            if let Err(key) = insert_unique(map(&mut reg), key, entry) {
                return Err(Error::new(
                    ErrorKind::DuplicateRegistration,
                    format!("{what} `{key}` is already registered"),
                ));
            }
        }
        self.list_changed(notification);
        Ok(())
    }

    /// Removes `key` from one registry map; if it was there, tells connected clients.
    fn unregister<V>(
        &self,
        notification: Change,
        map: impl FnOnce(&mut Registry) -> &mut BTreeMap<String, Arc<V>>,
        key: &str,
    ) -> bool {
        let removed = {
            let mut reg = self
                .inner
                .registry
                .write()
                .unwrap_or_else(|e| e.into_inner());
            map(&mut reg).remove(key).is_some()
        };
        if removed {
            self.list_changed(notification);
        }
        removed
    }

    /// Registers a tool at runtime (clients are told the list changed).
    ///
    /// # Errors
    /// [`ErrorKind::DuplicateRegistration`] when one of that name is registered already;
    /// [`ErrorKind::Other`] when the server did not declare the capability at build (it had no
    /// tool then and no `ServerBuilder::dynamic_tools`); [`ErrorKind::InvalidParams`] for an
    /// `inputSchema` without `"type": "object"` at its root or an invalid `x-mcp-header`
    /// annotation.
    pub fn add_tool<T, F, Fut, R>(&self, tool: Tool, handler: F) -> Result<(), Error>
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let key = tool.name.clone();
        typed::check_input_schema(&key, &tool.input_schema)?;
        let param_headers = annotations(&tool)?;
        self.register(
            TOOLS_CHANGED,
            "tool",
            |r| &mut r.tools,
            key,
            || ToolEntry {
                tool,
                handler: boxed_tool(handler),
                param_headers,
            },
        )
    }

    /// Removes a tool; `false` if there was none of that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.unregister(TOOLS_CHANGED, |r| &mut r.tools, name)
    }

    /// Registers a resource at runtime.
    ///
    /// # Errors
    /// [`ErrorKind::DuplicateRegistration`] when one of that URI is registered already;
    /// [`ErrorKind::Other`] when the server did not declare the capability at build (it had no
    /// resource then and no `ServerBuilder::dynamic_resources`).
    pub fn add_resource<F, Fut, R>(&self, resource: Resource, handler: F) -> Result<(), Error>
    where
        F: Fn(String, ResourceContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        let key = resource.uri.clone();
        self.register(
            RESOURCES_CHANGED,
            "resource",
            |r| &mut r.resources,
            key,
            || {
                let handler = boxed_resource(move |uri, _vars, cx| handler(uri, cx));
                ResourceEntry { resource, handler }
            },
        )
    }

    /// Removes a resource; `false` if there was none with that URI.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.unregister(RESOURCES_CHANGED, |r| &mut r.resources, uri)
    }

    /// Registers a resource template at runtime.
    ///
    /// # Errors
    /// [`ErrorKind::DuplicateRegistration`] when one of that URI template is registered already;
    /// [`ErrorKind::Other`] when the server did not declare the capability at build (it had no
    /// resource then and no `ServerBuilder::dynamic_resources`).
    pub fn add_resource_template<F, Fut, R>(
        &self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<(), Error>
    where
        F: Fn(String, HashMap<String, String>, ResourceContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        let key = template.uri_template.clone();
        self.register(
            RESOURCES_CHANGED,
            "resource template",
            |r| &mut r.templates,
            key,
            || TemplateEntry {
                matcher: UriTemplate::parse(&template.uri_template),
                template,
                handler: boxed_resource(handler),
            },
        )
    }

    /// Removes a resource template; `false` if there was none with that URI template.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.unregister(RESOURCES_CHANGED, |r| &mut r.templates, uri_template)
    }

    /// Registers a prompt at runtime.
    ///
    /// # Errors
    /// [`ErrorKind::DuplicateRegistration`] when one of that name is registered already;
    /// [`ErrorKind::Other`] when the server did not declare the capability at build (it had no
    /// prompt then and no `ServerBuilder::dynamic_prompts`).
    pub fn add_prompt<F, Fut, R>(&self, prompt: Prompt, handler: F) -> Result<(), Error>
    where
        F: Fn(BTreeMap<String, String>, PromptContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        let key = prompt.name.clone();
        self.register(
            PROMPTS_CHANGED,
            "prompt",
            |r| &mut r.prompts,
            key,
            || PromptEntry {
                prompt,
                handler: boxed_prompt(handler),
            },
        )
    }

    /// Removes a prompt; `false` if there was none of that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.unregister(PROMPTS_CHANGED, |r| &mut r.prompts, name)
    }

    /// Tells the connections subscribed to `uri` that it changed: handshake-era connections
    /// that subscribed with `resources/subscribe`, and the 2026-07-28 `subscriptions/listen`
    /// streams whose `resourceSubscriptions` name it. Returns how many were told (connections
    /// plus listen streams).
    ///
    /// ```no_run
    /// # fn after_write(server: &mcp_service::Server) {
    /// // After the application changed what `file:///notes.txt` reads:
    /// let told = server.resource_updated("file:///notes.txt");
    /// # let _ = told; }
    /// ```
    ///
    /// A server with a [cluster](ServerBuilder::cluster) tells the other instances too, and
    /// they tell their clients (the count is of this instance's).
    pub fn resource_updated(&self, uri: &str) -> usize {
        #[cfg(feature = "http-server")]
        if let Some(c) = &self.inner.cluster {
            c.shared.op(crate::cluster::Op::Publish(
                crate::cluster::BusMessage::ResourceUpdated {
                    uri: uri.to_owned(),
                },
            ));
        }
        self.resource_updated_here(uri)
    }

    /// [`resource_updated`](Self::resource_updated) for this instance's clients only.
    fn resource_updated_here(&self, uri: &str) -> usize {
        let params = serde_json::to_value(ResourceUpdatedNotificationParams {
            uri: uri.to_owned(),
            meta: None,
        })
        .unwrap_or(Value::Null);
        let count = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|c| {
                c.subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(uri)
            })
            .count();
        self.broadcast("notifications/resources/updated", Some(&params), |c| {
            c.subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(uri)
        });
        count + self.publish(&Change::ResourceUpdated(uri.to_owned()))
    }

    /// Sends a log message to every connected client whose level admits it (nothing unless
    /// the server declares `logging`: [`ServerBuilder::logging`]).
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        if !self.inner.declared.logging {
            return;
        }
        let params = serde_json::to_value(LoggingMessageNotificationParams {
            level,
            logger: logger.map(String::from),
            data,
            meta: None,
        })
        .unwrap_or(Value::Null);
        self.broadcast("notifications/message", Some(&params), |c| c.admits(level));
    }
}

// ---------------------------------------------------------------------------------- routing

struct ServerService {
    inner: Arc<Inner>,
    state: Arc<std::sync::OnceLock<Arc<ConnState>>>,
}

impl ServerService {
    fn new(inner: Arc<Inner>) -> (Self, Arc<std::sync::OnceLock<Arc<ConnState>>>) {
        let slot = Arc::new(std::sync::OnceLock::new());
        (
            ServerService {
                inner,
                state: slot.clone(),
            },
            slot,
        )
    }

    fn conn(&self, peer: &Peer) -> Arc<ConnState> {
        self.state
            .get()
            .cloned()
            .unwrap_or_else(|| Arc::new(ConnState::new(peer.clone(), true)))
    }
}

fn parse<T: DeserializeOwned + Default>(params: Option<&RawValue>) -> Result<T, Error> {
    match params {
        None => Ok(T::default()),
        Some(p) => serde_json::from_str(p.get())
            .map_err(|e| Error::invalid_params(format!("invalid params: {e}"))),
    }
}

fn parse_required<'a, T: serde::Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, Error> {
    match params {
        None => Err(Error::invalid_params("missing params")),
        Some(p) => serde_json::from_str(p.get())
            .map_err(|e| Error::invalid_params(format!("invalid params: {e}"))),
    }
}

/// The fields of `tools/call` params the server reads, borrowed from the request: the
/// arguments stay raw JSON until the tool's handler deserialises its own type from them. The
/// multi round-trip fields of the 2026-07-28 era are read in the same pass (a large argument is
/// scanned once here, not once more for them).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallParams<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(default)]
    input_responses: Option<serde_json::Value>,
    #[serde(default)]
    request_state: Option<serde_json::Value>,
}

fn to_raw<T: Serialize>(v: &T) -> Result<Box<RawValue>, Error> {
    crate::raw::to_raw(v)
}

/// Pagination: the cursor is an opaque token naming the next offset.
fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Vec<T>, Option<String>), Error> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| Error::invalid_params("invalid cursor"))?,
    };
    let end = start.saturating_add(page_size).min(items.len());
    let next = (end < items.len()).then(|| format!("o{end}"));
    Ok((
        items.get(start..end).map(<[T]>::to_vec).unwrap_or_default(),
        next,
    ))
}

impl Service for ServerService {
    fn on_ready(&self, peer: &Peer) {
        self.conn(peer).ready.store(true, Ordering::Release);
    }

    fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> BoxFuture<Result<Box<RawValue>, Error>> {
        let inner = self.inner.clone();
        let conn = self.conn(cx.peer());
        let hcx = HandlerContext {
            request: cx,
            server: inner.clone(),
            conn: conn.clone(),
            streamed: Arc::new(Mutex::new(Streamed::default())),
            rounds: None,
            task: None,
            cache_hints: None,
        };
        if let Some(auth) = &inner.authorizer {
            let info = hcx.peer().info();
            let verdict = auth(&AuthRequest {
                method: &request.method,
                params: request.params.as_deref(),
                connection: hcx.peer().connection_id(),
                client_info: info.as_ref().map(|i| &*i.info),
                #[cfg(any(feature = "http-server", feature = "ws"))]
                http: hcx.http_request(),
            });
            if let Err(e) = verdict {
                return Box::pin(async move { Err(e) });
            }
        }
        #[cfg(feature = "resource-server")]
        if let Some(http) = hcx.http_request()
            && !inner.scopes.is_empty()
        {
            let needed = inner.required_scopes(&request.method, request.params.as_deref());
            let identity = http.extensions.get::<crate::resource_server::Identity>();
            if !needed.is_empty()
                && identity.is_none_or(|id| !id.missing_scopes(&needed).is_empty())
            {
                let e = Error::new(
                    ErrorKind::Unauthorized,
                    format!(
                        "insufficient scope: this request needs {}",
                        needed.join(" ")
                    ),
                );
                return Box::pin(async move { Err(e) });
            }
        }
        let params = request.params;
        let p = params.as_deref();
        let version = hcx
            .protocol_version()
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let page_size = inner.page_size;
        // Cache hints, for the stateless era's cacheable results.
        let stateless = hcx.request.era().is_some();
        let hints = |key: &str| {
            if !stateless {
                return (None, None);
            }
            let (ttl, scope) = inner.cache_for.get(key).copied().unwrap_or(inner.cache);
            (Some(ttl), Some(scope))
        };
        let reg = || inner.registry.read().unwrap_or_else(|e| e.into_inner());
        let sync = |r: Result<Box<RawValue>, Error>| -> BoxFuture<Result<Box<RawValue>, Error>> {
            Box::pin(async move { r })
        };
        match &*request.method {
            "tools/list" => sync((|| {
                let (ttl_ms, cache_scope) = hints("tools/list");
                let q: PaginatedRequestParams = parse(p)?;
                let all: Vec<Tool> = reg().tools.values().map(|t| t.tool.clone()).collect();
                let (tools, next_cursor) = page(&all, q.cursor.as_deref(), page_size)?;
                to_raw(&ListToolsResult {
                    tools,
                    next_cursor,
                    ttl_ms,
                    cache_scope,
                    ..Default::default()
                })
            })()),
            "tools/call" => {
                // A handshake-era call has no multi round-trip fields to read: a first look
                // finds its tool (or what is wrong), and the params go whole to its handler,
                // which reads the arguments out of them in its own task. (Small params are read
                // whole here: a second pass over a few hundred bytes costs less than the look.)
                let looked = match (p, hcx.request.era()) {
                    (Some(p), None) if p.get().len() >= PEEK_FROM => {
                        peek_call(p.get()).map(|call| {
                            if !call.arguments_ok {
                                return Err(arguments_not_object());
                            }
                            reg()
                                .tools
                                .get(call.name.as_ref())
                                .cloned()
                                .ok_or_else(|| unknown_tool(&call.name))
                        })
                    }
                    _ => None,
                };
                let mut hcx = hcx;
                let fut = match (looked, params) {
                    (Some(Err(e)), _) => return sync(Err(e)),
                    (Some(Ok(entry)), Some(params)) => {
                        if let Err(e) = hcx.start_task(&entry.tool) {
                            return sync(Err(e));
                        }
                        (entry.handler)(ToolArgs::Params(params), ToolContext(hcx.clone()))
                    }
                    (_, params) => {
                        let p = params.as_deref();
                        let call: CallParams<'_> = match parse_required(p) {
                            Ok(c) => c,
                            Err(e) => return sync(Err(e)),
                        };
                        let arguments = match call.arguments {
                            Some(raw) if raw.get() == "null" => None,
                            Some(raw) if !raw.get().starts_with('{') => {
                                return sync(Err(arguments_not_object()));
                            }
                            other => other,
                        };
                        let Some(entry) = reg().tools.get(call.name.as_ref()).cloned() else {
                            return sync(Err(unknown_tool(&call.name)));
                        };
                        let fields = crate::mrtr::RetryFields {
                            input_responses: call.input_responses,
                            request_state: call.request_state,
                        };
                        if let Err(e) =
                            hcx.start_rounds("tools/call", &call.name, arguments, || Ok(fields))
                        {
                            return sync(Err(e));
                        }
                        if let Err(e) = hcx.start_task(&entry.tool) {
                            return sync(Err(e));
                        }
                        (entry.handler)(ToolArgs::Raw(arguments), ToolContext(hcx.clone()))
                    }
                };
                hcx.clone().rounds_of(async move {
                    let result = match fut.await {
                        Ok(r) => r,
                        Err(e) if tool_failure(&e) => CallToolResult::error(e.message().to_owned()),
                        Err(e) => return Err(e),
                    };
                    let streamed = std::mem::take(
                        &mut *hcx.streamed.lock().unwrap_or_else(|e| e.into_inner()),
                    );
                    let result = if streamed.count == 0 {
                        result
                    } else {
                        let content =
                            streamed.into_content(result.content, hcx.server.stream_retention);
                        CallToolResult { content, ..result }
                    };
                    to_raw(&result)
                })
            }
            "resources/list" => sync((|| {
                let (ttl_ms, cache_scope) = hints("resources/list");
                let q: PaginatedRequestParams = parse(p)?;
                let all: Vec<Resource> = reg()
                    .resources
                    .values()
                    .map(|r| r.resource.clone())
                    .collect();
                let (resources, next_cursor) = page(&all, q.cursor.as_deref(), page_size)?;
                to_raw(&ListResourcesResult {
                    resources,
                    next_cursor,
                    ttl_ms,
                    cache_scope,
                    ..Default::default()
                })
            })()),
            "resources/templates/list" => sync((|| {
                let (ttl_ms, cache_scope) = hints("resources/templates/list");
                let q: PaginatedRequestParams = parse(p)?;
                let all: Vec<ResourceTemplate> = reg()
                    .templates
                    .values()
                    .map(|t| t.template.clone())
                    .collect();
                let (resource_templates, next_cursor) = page(&all, q.cursor.as_deref(), page_size)?;
                to_raw(&ListResourceTemplatesResult {
                    resource_templates,
                    next_cursor,
                    ttl_ms,
                    cache_scope,
                    ..Default::default()
                })
            })()),
            "resources/read" => {
                let q: ReadResourceRequestParams = match parse_required(p) {
                    Ok(q) => q,
                    Err(e) => return sync(Err(e)),
                };
                let found = {
                    let r = reg();
                    if let Some(e) = r.resources.get(&q.uri) {
                        Some((e.handler.clone(), HashMap::new()))
                    } else {
                        r.templates.values().find_map(|t| {
                            t.matcher
                                .matches(&q.uri)
                                .map(|vars| (t.handler.clone(), vars))
                        })
                    }
                };
                let Some((handler, vars)) = found else {
                    return sync(Err(Error::resource_not_found(&q.uri, version)));
                };
                let (ttl_ms, cache_scope) = hints(&q.uri);
                let mut hcx = hcx;
                if let Err(e) = hcx.start_rounds("resources/read", &q.uri, None, || {
                    crate::mrtr::RetryFields::of(p)
                }) {
                    return sync(Err(e));
                }
                let chosen = Arc::new(Mutex::new(None));
                hcx.cache_hints = Some(chosen.clone());
                let fut = handler(q.uri, vars, ResourceContext(hcx.clone()));
                hcx.rounds_of(async move {
                    let contents = fut.await?;
                    // The handler's own hints for this result, over the registered ones.
                    let chosen = *chosen.lock().unwrap_or_else(|e| e.into_inner());
                    let (ttl_ms, cache_scope) = match chosen {
                        Some((ttl, scope)) if stateless => (Some(ttl), Some(scope)),
                        _ => (ttl_ms, cache_scope),
                    };
                    to_raw(&ReadResourceResult {
                        contents,
                        ttl_ms,
                        cache_scope,
                        ..Default::default()
                    })
                })
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let q: SubscribeRequestParams = match parse_required(p) {
                    Ok(q) => q,
                    Err(e) => return sync(Err(e)),
                };
                let subscribe = request.method == "resources/subscribe";
                #[cfg(feature = "http-server")]
                let shared = {
                    use crate::cluster::Op;
                    let uri = q.uri.clone();
                    conn.share(&inner, |sid| {
                        if subscribe {
                            Op::Subscribe(sid, uri)
                        } else {
                            Op::Unsubscribe(sid, uri)
                        }
                    })
                };
                {
                    let mut subs = conn.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
                    if subscribe {
                        subs.insert(q.uri);
                    } else {
                        subs.remove(&q.uri);
                    }
                }
                #[cfg(feature = "http-server")]
                return shared_then_empty(shared);
                #[cfg(not(feature = "http-server"))]
                sync(Ok(mcp_proto::jsonrpc::empty_object()))
            }
            "subscriptions/listen" => {
                // The session acknowledged the stream and carries what is published to it;
                // the handler holds the request (and the connection's record of it) until the
                // stream ends: the client cancels, or the session ends it.
                let subscription =
                    match p.map(|p| Subscription::of_request(p, &inner.config.capabilities)) {
                        Some(Ok(s)) => s,
                        Some(Err(e)) => return sync(Err(e)),
                        None => return sync(Err(Error::invalid_params("missing params"))),
                    };
                let held = Listening::new(
                    conn,
                    hcx.request_id().clone(),
                    subscription,
                    hcx.request().cancellation_token(),
                );
                Box::pin(async move {
                    hcx.cancelled().await;
                    drop(held);
                    Err(Error::new(
                        ErrorKind::RequestCancelled,
                        "the subscription ended",
                    ))
                })
            }
            "prompts/list" => sync((|| {
                let (ttl_ms, cache_scope) = hints("prompts/list");
                let q: PaginatedRequestParams = parse(p)?;
                let all: Vec<Prompt> = reg().prompts.values().map(|e| e.prompt.clone()).collect();
                let (prompts, next_cursor) = page(&all, q.cursor.as_deref(), page_size)?;
                to_raw(&ListPromptsResult {
                    prompts,
                    next_cursor,
                    ttl_ms,
                    cache_scope,
                    ..Default::default()
                })
            })()),
            "prompts/get" => {
                let q: GetPromptRequestParams = match parse_required(p) {
                    Ok(q) => q,
                    Err(e) => return sync(Err(e)),
                };
                let Some(entry) = reg().prompts.get(&q.name).cloned() else {
                    return sync(Err(Error::invalid_params(format!(
                        "Unknown prompt: {}",
                        q.name
                    ))));
                };
                let args = q.arguments.unwrap_or_default();
                for a in entry.prompt.arguments.iter().flatten() {
                    if a.required == Some(true) && !args.contains_key(&a.name) {
                        return sync(Err(Error::invalid_params(format!(
                            "missing required argument `{}` for prompt `{}`",
                            a.name, q.name
                        ))));
                    }
                }
                let mut hcx = hcx;
                let args_raw = match hcx.request.era().map(|_| to_raw(&args)).transpose() {
                    Ok(a) => a,
                    Err(e) => return sync(Err(e)),
                };
                if let Err(e) =
                    hcx.start_rounds("prompts/get", &q.name, args_raw.as_deref(), || {
                        crate::mrtr::RetryFields::of(p)
                    })
                {
                    return sync(Err(e));
                }
                let fut = (entry.handler)(args, PromptContext(hcx.clone()));
                hcx.rounds_of(async move { to_raw(&fut.await?) })
            }
            "completion/complete" => {
                let q: CompleteRequestParams = match parse_required(p) {
                    Ok(q) => q,
                    Err(e) => return sync(Err(e)),
                };
                match &inner.completion {
                    None => sync(to_raw(&CompleteResult {
                        completion: Completion {
                            values: Vec::new(),
                            total: Some(0),
                            has_more: Some(false),
                        },
                        result_type: None,
                        meta: None,
                    })),
                    Some(f) => {
                        let fut = f(q, CompleteContext(hcx));
                        Box::pin(async move {
                            let mut completion = fut.await?;
                            completion.values.truncate(100);
                            to_raw(&CompleteResult {
                                completion,
                                result_type: None,
                                meta: None,
                            })
                        })
                    }
                }
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" if hcx.request.era().is_some() => {
                sync(task_request(&inner, &request.method, p, hcx.request.era()))
            }
            #[cfg(feature = "skills")]
            "skills/list" | "skills/get" | "resources/directory/read" => sync(skills::handle(
                &inner,
                &request.method,
                p,
                hints(&request.method),
            )),
            "logging/setLevel" => {
                let q: SetLevelRequestParams = match parse_required(p) {
                    Ok(q) => q,
                    Err(e) => return sync(Err(e)),
                };
                *conn.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(q.level);
                #[cfg(feature = "http-server")]
                if let Ok(Value::String(level)) = serde_json::to_value(q.level) {
                    let shared = conn.share(&inner, |sid| crate::cluster::Op::SetLevel(sid, level));
                    return shared_then_empty(shared);
                }
                sync(Ok(mcp_proto::jsonrpc::empty_object()))
            }
            other => match inner.custom.get(other) {
                Some(f) => f(params, hcx),
                None => sync(Err(Error::method_not_found(other))),
            },
        }
    }

    fn handle_notification(&self, method: &str, _params: Option<&RawValue>, peer: &Peer) {
        tracing::debug!(target: "mcp", connection = peer.connection_id(), method, "client notification");
    }

    fn on_closed(&self, _peer: &Peer) {
        if let Some(s) = self.state.get() {
            s.ready.store(false, Ordering::Release);
        }
    }
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` (tasks extension, 2026-07-28).
fn task_request(
    inner: &Inner,
    method: &str,
    params: Option<&RawValue>,
    era: Option<&mcp_proto::session::RequestEra>,
) -> Result<Box<RawValue>, Error> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        task_id: String,
        #[serde(default)]
        input_responses: Option<Map<String, Value>>,
    }
    let Some(tasks) = &inner.tasks else {
        return Err(Error::method_not_found(method));
    };
    if !era.is_some_and(|e| crate::tasks::declared(&e.client_capabilities)) {
        return Err(crate::tasks::extension_required(&format!("`{method}`")));
    }
    let q: Params = parse_required(params)?;
    match method {
        "tasks/get" => tasks.get(&q.task_id),
        "tasks/update" => tasks.update(&q.task_id, q.input_responses.unwrap_or_default()),
        _ => tasks.cancel(&q.task_id),
    }
}

/// A connection's record of one open listen stream, kept while its request is held.
struct Listening {
    conn: Arc<ConnState>,
    id: RequestId,
}

impl Listening {
    fn new(
        conn: Arc<ConnState>,
        id: RequestId,
        subscription: Subscription,
        cancel: crate::CancellationToken,
    ) -> Self {
        conn.listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), (subscription, cancel));
        Listening { conn, id }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.conn
            .listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// Errors that are a tool's own failure (reported as `isError` results), as opposed to protocol
/// errors (reported as JSON-RPC errors): the rule documented on [`ServerBuilder::tool`].
fn tool_failure(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::HandlerFailed | ErrorKind::Internal | ErrorKind::Other
    )
}

// ---------------------------------------------------------------------------------- templates

/// A minimal RFC 6570 matcher for `{var}` expressions (level 1), enough for resource templates:
/// a variable matches up to the next literal (never across `/` when the next literal starts
/// with `/` or at the end of the template).
#[derive(Debug, Clone)]
struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Var(String),
}

impl UriTemplate {
    fn parse(template: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) => {
                    let name =
                        after[..close].trim_start_matches(['+', '#', '/', '?', '&', '.', ';']);
                    parts.push(Part::Var(name.to_owned()));
                    rest = &after[close + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest[open..].to_owned()));
                    rest = "";
                }
            }
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        UriTemplate { parts }
    }

    fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        let mut rest = uri;
        let mut i = 0;
        while i < self.parts.len() {
            match &self.parts[i] {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var(name) => {
                    let value = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => {
                            let end = rest.find(next.as_str())?;
                            &rest[..end]
                        }
                        _ => rest,
                    };
                    if value.is_empty() {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[value.len()..];
                }
            }
            i += 1;
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_call_reads_no_further_than_arguments() {
        let peek = |p: &str| peek_call(p).map(|c| (c.name.into_owned(), c.arguments_ok));
        let ok = |n: &str| Some((n.to_owned(), true));
        assert_eq!(
            peek(r#"{"name":"echo","arguments":{"text":"x"}}"#),
            ok("echo")
        );
        assert_eq!(
            peek(r#" { "name" : "e\"cho" , "arguments" : { } } "#),
            ok("e\"cho")
        );
        assert_eq!(peek(r#"{"name":"echo"}"#), ok("echo"));
        assert_eq!(peek(r#"{"name":"echo","arguments":null}"#), ok("echo"));
        assert_eq!(
            peek(r#"{"_meta":{"progressToken":1},"name":"e","arguments":{}}"#),
            ok("e")
        );
        assert_eq!(
            peek(r#"{"name":"e","_meta":{},"arguments":{},"x":1}"#),
            ok("e")
        );
        for wrong in [r#"[1]"#, "1", "true", r#""s""#, "1.5", "-1"] {
            let p = format!(r#"{{"name":"e","arguments":{wrong}}}"#);
            assert_eq!(peek(&p), Some(("e".to_owned(), false)), "{p}");
        }
        // `arguments` first: the name read from the end.
        assert_eq!(
            peek(r#"{"arguments":{"name":"x"},"name":"echo"}"#),
            ok("echo")
        );
        assert_eq!(
            peek(r#"{"_meta":{},"arguments":{"a":"\""},"name" : "e\\\"c" } "#),
            ok("e\\\"c")
        );
        assert_eq!(peek(r#"{"arguments":null,"name":"x\\"}"#), ok("x\\"));
        assert_eq!(
            peek(r#"{"arguments":"s","name":"x"}"#),
            Some(("x".to_owned(), false))
        );
        // Left to the full parse.
        for p in [
            r#"{"arguments":{},"name":"echo","x":1}"#,
            r#"{"arguments":{},"x":"name","y":"echo"}"#,
            r#"{"arguments":{},"a\"name":"echo"}"#,
            r#"{"arguments":{"name":"echo"}}"#,
            r#"{"arguments":{},"name":1}"#,
            r#"{"name":1,"arguments":{}}"#,
            r#"{"name":"a","name":"b","arguments":{}}"#,
            r#"{"arguments":{}}"#,
            r#"{}"#,
            r#"[]"#,
            r#"{"name":"echo"} x"#,
            r#"{"name":"echo","x":[}"#,
        ] {
            assert_eq!(peek(p), None, "{p}");
        }
    }

    #[test]
    fn peek_call_agrees_with_the_full_parse() {
        // Params built from shuffled members with awkward strings; wherever the look answers,
        // it answers what the full parse reads.
        let strings = [
            "echo",
            "name",
            "a\"name",
            "\\",
            "\\\"",
            "x\\\"name\\",
            "}",
            "\"name\":\"x\"",
            "é",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut answered = 0;
        for _ in 0..5000 {
            let text = |i: usize| serde_json::to_string(strings[i]).unwrap();
            let mut members = vec![format!(r#""name":{}"#, text(next(strings.len())))];
            let arguments = [
                format!(r#"{{"text":{}}}"#, text(next(strings.len()))),
                "null".to_owned(),
                text(next(strings.len())),
                "[1,{}]".to_owned(),
                format!(r#"{{"name":{}}}"#, text(next(strings.len()))),
            ];
            if next(5) > 0 {
                members.push(format!(
                    r#""arguments":{}"#,
                    arguments[next(arguments.len())]
                ));
            }
            for _ in 0..next(3) {
                // Other members' values of every kind, nested, with awkward strings inside.
                let t = text(next(strings.len()));
                let values = [
                    t.clone(),
                    format!(r#"{{"a":[{t},{{"b":{t}}}],"c":{{}}}}"#),
                    format!(r#"[ {t} , 1, null, [] ]"#),
                    "-1.5e3".to_owned(),
                    "true".to_owned(),
                ];
                members.push(format!(
                    r#"{}:{}"#,
                    text(next(strings.len())),
                    values[next(values.len())]
                ));
            }
            for i in (1..members.len()).rev() {
                members.swap(i, next(i + 1));
            }
            let ws = [" ", "", "\n "][next(3)];
            let params = format!("{{{ws}{}{ws}}}{ws}", members.join(&format!("{ws},{ws}")));
            let full = serde_json::from_str::<CallParams<'_>>(&params);
            let Some(peek) = peek_call(&params) else {
                continue;
            };
            answered += 1;
            // A second `name` after `arguments` (of any type) is past the look: the handler's
            // read of the arguments reports it.
            if full.as_ref().is_err_and(|e| {
                let e = e.to_string();
                e.contains("duplicate field `name`") || e.contains("expected a string")
            }) {
                assert!(serde_json::from_str::<ArgumentsOf<serde_json::Value>>(&params).is_err());
                continue;
            }
            let full =
                full.unwrap_or_else(|e| panic!("{params}: the look answered, the parse: {e}"));
            assert_eq!(peek.name, full.name, "{params}");
            let fine = full
                .arguments
                .is_none_or(|a| a.get() == "null" || a.get().starts_with('{'));
            assert_eq!(peek.arguments_ok, fine, "{params}");
        }
        assert!(answered > 2500, "{answered}");
    }

    #[test]
    fn arguments_read_from_whole_params() {
        #[derive(serde::Deserialize, Debug, PartialEq, Default)]
        struct Args {
            #[serde(default)]
            text: String,
        }
        let read = |p: &str| serde_json::from_str::<ArgumentsOf<Args>>(p).map(|a| a.0);
        let args = |t: &str| Args { text: t.into() };
        assert_eq!(
            read(r#"{"name":"e","arguments":{"text":"hi"}}"#).unwrap(),
            args("hi")
        );
        assert_eq!(
            read(r#"{"arguments":{"text":"hi"},"name":"e","_meta":{}}"#).unwrap(),
            args("hi")
        );
        assert_eq!(read(r#"{"name":"e"}"#).unwrap(), args(""));
        assert_eq!(read(r#"{"name":"e","arguments":null}"#).unwrap(), args(""));
        assert!(read(r#"{"arguments":{"text":1}}"#).is_err());
        assert!(read(r#"{"arguments":{},"arguments":{}}"#).is_err());
        assert!(read(r#"{"arguments":{},"name":"a","name":"b"}"#).is_err());
        // A type with required fields: missing from absent arguments as from `{}`.
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Required {
            text: String,
        }
        let e = serde_json::from_str::<ArgumentsOf<Required>>(r#"{"name":"e"}"#)
            .err()
            .unwrap();
        assert!(e.to_string().contains("missing field `text`"), "{e}");
        let v = serde_json::from_str::<ArgumentsOf<serde_json::Value>>(r#"{"name":"e"}"#).unwrap();
        assert_eq!(v.0, serde_json::json!({}));
    }

    #[test]
    fn uri_templates() {
        let t = UriTemplate::parse("test://template/{id}/data");
        let m = t.matches("test://template/42/data").unwrap();
        assert_eq!(m["id"], "42");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/42/other").is_none());
        let t = UriTemplate::parse("file:///{path}");
        assert_eq!(t.matches("file:///a/b.txt").unwrap()["path"], "a/b.txt");
        let t = UriTemplate::parse("x://{a}-{b}");
        let m = t.matches("x://1-2").unwrap();
        assert_eq!((m["a"].as_str(), m["b"].as_str()), ("1", "2"));
    }

    #[test]
    fn pagination() {
        let items: Vec<u32> = (0..5).collect();
        let (p1, c1) = page(&items, None, 2).unwrap();
        assert_eq!((p1, c1.as_deref()), (vec![0, 1], Some("o2")));
        let (p2, c2) = page(&items, c1.as_deref(), 2).unwrap();
        assert_eq!(p2, vec![2, 3]);
        let (p3, c3) = page(&items, c2.as_deref(), 2).unwrap();
        assert_eq!((p3, c3), (vec![4], None));
        assert_eq!(
            page(&items, Some("bogus"), 2).unwrap_err().kind(),
            ErrorKind::InvalidParams
        );
        assert_eq!(
            page(&items, Some("o99"), 2).unwrap_err().kind(),
            ErrorKind::InvalidParams
        );
    }

    #[test]
    fn duplicates_are_refused() {
        let t = Tool::new("a", schema_of(serde_json::json!({"type":"object"})));
        let e = Server::builder("s", "1")
            .tool(t.clone(), |_: Value, _| async { Ok("x") })
            .tool(t, |_: Value, _| async { Ok("y") })
            .try_build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DuplicateRegistration);
    }
}
