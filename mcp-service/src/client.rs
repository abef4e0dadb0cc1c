//! The typed client: connect, list and call, subscribe, and answer the server's sampling,
//! elicitation and roots requests.
//!
//! Dropping a call's future cancels it on the wire (`notifications/cancelled`). The client
//! closes its connection when the last clone is dropped (or on [`Client::close`]).
//!
//! In the 2026-07-28 era the server announces changes only on a `subscriptions/listen`
//! stream: [`Client::subscribe`] and [`Client::notifications`] open one (module `listen`) and
//! work as in the handshake era.
//!
//! # Errors of every request
//!
//! A method that sends a request fails with an [`Error`] whose [`kind`](Error::kind) says
//! why (a kind marked local, [`ErrorKind::is_local`], describes this side's situation: the
//! server did not send it); besides what each method's `# Errors` names:
//!
//! - [`ErrorKind::MethodNotFound`] (-32601), before anything is sent, when the server did
//!   not declare the capability the method needs (`tools` for `tools/*`, `resources` for
//!   `resources/*`, `prompts`, `completions`, `logging`) or the negotiated protocol version
//!   has no such method; and when the server answers -32601 itself;
//! - [`ErrorKind::Timeout`] (local) when no answer came within the call's timeout (the
//!   session's, [`ClientOptions::request_timeout`], 60 s by default): the request is
//!   cancelled on the wire;
//! - [`ErrorKind::TransportClosed`] (local) when the connection closed (or was closed with
//!   [`Client::close`]) before the answer; [`ErrorKind::TransportError`] (local) when the
//!   transport failed (an HTTP exchange refused or broken);
//! - [`ErrorKind::LimitExceeded`] (-32008, raised here) when the session's
//!   [`max_outbound_in_flight`](mcp_proto::session::Config::max_outbound_in_flight)
//!   requests are already waiting for their answers;
//! - [`ErrorKind::ProtocolInvalid`] (-32600) when the server's result does not have the
//!   shape of the method's result type;
//! - the server's JSON-RPC error as it sent it: its [`code`](Error::code), message and
//!   `data`, and the kind of that code ([`ErrorKind::from_code`]): -32602
//!   [`InvalidParams`](ErrorKind::InvalidParams) for an unknown tool or prompt or bad
//!   arguments, -32002 [`NotFound`](ErrorKind::NotFound), -32001
//!   [`Unauthorized`](ErrorKind::Unauthorized), -32603 [`Internal`](ErrorKind::Internal)
//!   for a server handler that failed (a server of this crate sends every failure of its own
//!   as -32603), [`Other`](ErrorKind::Other) for a code this crate does not know.
//!
//! In the 2026-07-28 era a call the server answers `input_required` is retried after the
//! client's handlers answered the asks: the error of a handler (or
//! [`ErrorKind::MethodNotFound`] when the client has no handler for what was asked) is the
//! call's error; more than the allowed rounds of asks is [`ErrorKind::LimitExceeded`], and
//! the timeout covers every round.
//!
//! ```
//! use mcp_service::ErrorKind;
//! use mcp_service::server::Server;
//! use mcp_service::sim::Sim;
//!
//! let server = Server::builder("empty", "1.0").build(); // no tool registered
//! let sim = Sim::new();
//! let error = sim
//!     .block_on(async {
//!         let client = server.test_client(sim.runtime()).await?;
//!         client.list_tools().await
//!     })
//!     .expect("nothing left waiting")
//!     .unwrap_err();
//! assert_eq!((error.kind(), error.code()), (ErrorKind::MethodNotFound, -32601));
//! ```

mod listen;

use std::collections::{BTreeMap, HashMap};
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};

use futures_channel::mpsc::{self, Receiver};

use crate::notifications::{self, Notifications};
use futures_channel::oneshot;
use futures_core::Stream;
use mcp_proto::schema::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, Content,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    GetPromptRequestParams, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListRootsResult, ListToolsResult,
    LoggingLevel, LoggingMessageNotificationParams, PaginatedRequestParams, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
    ResourceUpdatedNotificationParams, Root, SetLevelRequestParams, SubscribeRequestParams, Tool,
};
use mcp_proto::session::{Config, Session};
use mcp_proto::{Duration, Error, ErrorKind, ProtocolVersion};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::connection::{Transport, connection};
use crate::peer::{Peer, PeerInfo, Progress, Request, ResponseFuture, parse_result};
use crate::runtime::{BoxFuture, Runtime};
use crate::server::PARTIAL_CONTENT_META;
use crate::service::{IncomingRequest, RequestContext, Service};
use crate::telemetry::Telemetry;

type SamplingFn = dyn Fn(CreateMessageRequestParams, RequestContext) -> BoxFuture<Result<CreateMessageResult, Error>>
    + Send
    + Sync;
type ElicitFn = dyn Fn(ElicitRequestParams, RequestContext) -> BoxFuture<Result<ElicitResult, Error>>
    + Send
    + Sync;

/// Options of a client connection: identity, handlers for server requests, limits.
#[derive(Clone)]
pub struct ClientOptions {
    info: Implementation,
    config: Config,
    sampling: Option<Arc<SamplingFn>>,
    elicitation: Option<Arc<ElicitFn>>,
    roots: Option<Arc<RwLock<Vec<Root>>>>,
    /// Extensions declared by the application (`capabilities.extensions`), the tasks
    /// extension among them after [`tasks`](Self::tasks).
    extensions: Map<String, Value>,
    /// The response cache's store; `None`: no cache.
    response_store: Option<Arc<dyn crate::cache::ResponseStore>>,
    telemetry: Telemetry,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl ClientOptions {
    /// A client named `name` at `version`.
    pub fn new(name: &str, version: &str) -> Self {
        ClientOptions {
            info: Implementation {
                name: name.to_owned(),
                version: version.to_owned(),
                ..Default::default()
            },
            config: Config::new(name, version)
                .versions(&ProtocolVersion::ALL)
                .discovery(mcp_proto::session::Discovery::Auto),
            sampling: None,
            elicitation: None,
            roots: None,
            extensions: Map::new(),
            response_store: Some(Arc::new(crate::cache::MemoryResponseStore::default())),
            telemetry: Telemetry::default(),
        }
    }

    /// Answers the server's `sampling/createMessage` requests (declares `sampling`). In the
    /// 2026-07-28 era the same handler answers a call's `input_required` asks for sampling.
    /// An `Err` from the handler reaches the server as a JSON-RPC error: its code, or -32603
    /// for a local kind such as [`ErrorKind::HandlerFailed`].
    ///
    /// ```
    /// use mcp_service::schema::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage, Tool};
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::ClientOptions;
    ///
    /// // A tool that asks the client's model.
    /// let server = Server::builder("asker", "1.0")
    ///     .tool(
    ///         Tool::new("ask", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let ask = CreateMessageRequestParams::new(vec![SamplingMessage::user("2+2?")], 10);
    ///             let answer = cx.create_message(ask).await?;
    ///             Ok(format!("the model said {:?}", answer.content))
    ///         },
    ///     )
    ///     .build();
    /// let options = ClientOptions::default().sampling(|params, _cx| async move {
    ///     assert_eq!(params.messages.len(), 1);
    ///     Ok(CreateMessageResult::text("test-model", "4"))
    /// });
    /// let sim = Sim::new();
    /// let result = sim
    ///     .block_on(async {
    ///         let client = server.test_client_with(sim.runtime(), options).await?;
    ///         client.call_tool("ask", serde_json::json!({})).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert!(result.content[0].as_text().unwrap().contains('4'));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, Error>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |p, cx| Box::pin(f(p, cx))));
        self
    }

    /// Answers the server's `elicitation/create` requests (declares `elicitation`), and in the
    /// 2026-07-28 era a call's `input_required` asks for elicitation. An `Err` reaches the
    /// server as [`sampling`](Self::sampling)'s does; a user who says no is
    /// [`ElicitResult::decline`](mcp_proto::schema::ElicitResult::decline), not an error.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mcp_service::schema::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, ElicitationSchema, Tool};
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::ClientOptions;
    ///
    /// let server = Server::builder("greeter", "1.0")
    ///     .tool(
    ///         Tool::new("greet", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let ask = ElicitRequestParams::form("Your name?", ElicitationSchema::new());
    ///             let answer = cx.elicit(ask).await?;
    ///             Ok(match answer.action {
    ///                 ElicitAction::Accept => "hello".to_owned(),
    ///                 _ => "goodbye".to_owned(),
    ///             })
    ///         },
    ///     )
    ///     .build();
    /// let options = ClientOptions::default().elicitation(|_params, _cx| async move {
    ///     let mut content = BTreeMap::new();
    ///     content.insert("name".to_owned(), ElicitValue::from("Ada"));
    ///     Ok(ElicitResult::accept(content))
    /// });
    /// let sim = Sim::new();
    /// let result = sim
    ///     .block_on(async {
    ///         let client = server.test_client_with(sim.runtime(), options).await?;
    ///         client.call_tool("greet", serde_json::json!({})).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(result.content[0].as_text(), Some("hello"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, Error>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |p, cx| Box::pin(f(p, cx))));
        self
    }

    /// Declares the tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): a server
    /// may then answer a tool call with a task, which [`Client::call_tool`] follows to its end
    /// (polling `tasks/get`, answering its input requests through the sampling, elicitation
    /// and roots handlers with `tasks/update`, cancelling it when the call is dropped or its
    /// own timeout passes; the session's default timeout does not apply to a task). See also
    /// [`Client::get_task`], [`Client::cancel_task`].
    pub fn tasks(self) -> Self {
        self.extension(
            mcp_proto::schema::tasks::extension::EXTENSION_ID,
            serde_json::json!({}),
        )
    }

    /// Keeps cacheable results (2026-07-28 list and `resources/read` results, for their
    /// `ttlMs`) in `store` instead of the default in-memory one (256 results, 8 MiB). See
    /// [`crate::cache`].
    pub fn response_cache(mut self, store: Arc<dyn crate::cache::ResponseStore>) -> Self {
        self.response_store = Some(store);
        self
    }

    /// Caches no results: every list and read goes to the server.
    pub fn no_response_cache(mut self) -> Self {
        self.response_store = None;
        self
    }

    /// Declares the extension `id` with its `settings` (an object, `{}` for none) under the
    /// client's `capabilities.extensions` (in the handshake, or in every 2026-07-28
    /// request's `_meta`). [`Client::server_extension`] reads what the server declared.
    pub fn extension(mut self, id: &str, settings: Value) -> Self {
        self.extensions.insert(id.to_owned(), settings);
        self
    }

    /// Exposes roots: declares `roots` (with `listChanged`) and answers the server's
    /// `roots/list` (or, in the 2026-07-28 era, its asks for roots) with `roots`; change them
    /// with [`Client::set_roots`].
    ///
    /// ```
    /// use mcp_service::schema::{Root, Tool};
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::ClientOptions;
    ///
    /// let server = Server::builder("files", "1.0")
    ///     .tool(
    ///         Tool::new("where", schema_of(serde_json::json!({"type": "object"}))),
    ///         |_: serde_json::Value, cx: ToolContext| async move {
    ///             let roots = cx.list_roots().await?;
    ///             Ok(roots.roots.iter().map(|r| r.uri.clone()).collect::<Vec<_>>().join(" "))
    ///         },
    ///     )
    ///     .build();
    /// let options = ClientOptions::default().roots(vec![Root::new("file:///work").with_name("work")]);
    /// let sim = Sim::new();
    /// let result = sim
    ///     .block_on(async {
    ///         let client = server.test_client_with(sim.runtime(), options).await?;
    ///         client.call_tool("where", serde_json::json!({})).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(result.content[0].as_text(), Some("file:///work"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(Arc::new(RwLock::new(roots)));
        self
    }

    /// Default timeout of requests (default 60 s; `None` for none).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// Restricts the protocol versions the client speaks (it asks for the latest; default
    /// `ProtocolVersion::ALL`). Without a stateless version among them,
    /// [`Discovery::Auto`](mcp_proto::session::Discovery::Auto) is the handshake at once.
    pub fn versions(mut self, versions: &[ProtocolVersion]) -> Self {
        self.config.versions = versions.to_vec();
        self
    }

    /// How the client starts: `server/discover` with the handshake as fallback when the
    /// server does not speak the stateless era (`Discovery::Auto`, the default; a server that
    /// does not answer the probe at all is given [`DISCOVER_PROBE_TIMEOUT`]; with no stateless
    /// version among [`versions`](Self::versions), the handshake at once), `server/discover`
    /// and the stateless era only (`Discovery::Discover`), or the `initialize` handshake only
    /// (`Discovery::Initialize`, the handshake era: what 2026-07-28 removed, such as a session
    /// of its own or a raw `ping`). Unless it is the handshake, every request of a
    /// stateless session carries the era's `_meta` (version, capabilities, client info), and
    /// [`Client::protocol_version`] says which era was settled. Over Streamable HTTP a request
    /// of the stateless era is one POST with `MCP-Protocol-Version`, `Mcp-Method` and
    /// `Mcp-Name`, and no session.
    ///
    /// [`DISCOVER_PROBE_TIMEOUT`]: mcp_proto::session::DISCOVER_PROBE_TIMEOUT
    pub fn discovery(mut self, discovery: mcp_proto::session::Discovery) -> Self {
        if !self.config.versions.iter().any(|v| v.is_stateless())
            && discovery != mcp_proto::session::Discovery::Initialize
        {
            self.config.versions.push(ProtocolVersion::V2026_07_28);
        }
        self.config.discovery = discovery;
        self
    }

    /// Sets the telemetry hub.
    pub fn telemetry(mut self, telemetry: Telemetry) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// Sets the largest accepted message.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.config.max_message_size = bytes;
        self
    }

    /// The session configuration (bounds, versions, timeouts) this client connects with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn session_config(&self) -> Result<Config, Error> {
        let mut caps = Map::new();
        if self.sampling.is_some() {
            caps.insert("sampling".into(), Value::Object(Map::new()));
        }
        if self.elicitation.is_some() {
            caps.insert("elicitation".into(), Value::Object(Map::new()));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), serde_json::json!({"listChanged": true}));
        }
        if !self.extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(self.extensions.clone()));
        }
        let mut config = self.config.clone();
        config.capabilities = crate::raw::to_raw(&caps)?;
        config.info = crate::raw::to_raw(&self.info)?;
        Ok(config)
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions::new("mcp-rs-client", env!("CARGO_PKG_VERSION"))
    }
}

/// A server notification, as delivered by [`Client::notifications`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// `notifications/message`.
    Log(LoggingMessageNotificationParams),
    /// Anything else.
    Other {
        /// Method.
        method: String,
        /// Raw params.
        params: Option<Box<RawValue>>,
    },
}

#[derive(Default)]
struct Caches {
    tools: Option<Vec<Tool>>,
    resources: Option<Vec<Resource>>,
    prompts: Option<Vec<Prompt>>,
}

#[derive(Default)]
struct Fanout {
    notifications: Vec<notifications::Sender<ServerNotification>>,
    logs: Vec<notifications::Sender<LoggingMessageNotificationParams>>,
    updates: HashMap<String, Vec<notifications::Sender<ResourceUpdatedNotificationParams>>>,
}

struct ClientState {
    caches: Mutex<Caches>,
    fanout: Mutex<Fanout>,
    /// The listen stream of a client of the stateless era.
    listen: std::sync::OnceLock<Arc<listen::Listen>>,
    /// A client of the stateless era: its response cache and the runtime's clock.
    responses: std::sync::OnceLock<(crate::cache::ResponseCache, crate::mrtr::Clock)>,
}

struct ClientService {
    state: Arc<ClientState>,
    sampling: Option<Arc<SamplingFn>>,
    elicitation: Option<Arc<ElicitFn>>,
    roots: Option<Arc<RwLock<Vec<Root>>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ClientService {
    /// Drops cached results of `method` (stateless era).
    fn invalidate(&self, method: &str, param: Option<&str>) {
        if let Some((cache, _)) = self.state.responses.get() {
            cache.invalidate(method, param);
        }
    }
}

impl Service for ClientService {
    fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> BoxFuture<Result<Box<RawValue>, Error>> {
        let params = request.params;
        let parse_err =
            |e: serde_json::Error| Error::invalid_params(format!("invalid params: {e}"));
        match &*request.method {
            "sampling/createMessage" => match (&self.sampling, params) {
                (Some(f), Some(p)) => match serde_json::from_str(p.get()) {
                    Ok(p) => {
                        let fut = f(p, cx);
                        Box::pin(async move { crate::raw::to_raw(&fut.await?) })
                    }
                    Err(e) => {
                        let e = parse_err(e);
                        Box::pin(async move { Err(e) })
                    }
                },
                (Some(_), None) => Box::pin(async { Err(Error::invalid_params("missing params")) }),
                (None, _) => {
                    Box::pin(async { Err(Error::method_not_found("sampling/createMessage")) })
                }
            },
            "elicitation/create" => match (&self.elicitation, params) {
                (Some(f), Some(p)) => match serde_json::from_str(p.get()) {
                    Ok(p) => {
                        let fut = f(p, cx);
                        Box::pin(async move { crate::raw::to_raw(&fut.await?) })
                    }
                    Err(e) => {
                        let e = parse_err(e);
                        Box::pin(async move { Err(e) })
                    }
                },
                (Some(_), None) => Box::pin(async { Err(Error::invalid_params("missing params")) }),
                (None, _) => Box::pin(async { Err(Error::method_not_found("elicitation/create")) }),
            },
            "roots/list" => {
                let r = match &self.roots {
                    Some(roots) => {
                        let roots = roots.read().unwrap_or_else(|e| e.into_inner()).clone();
                        crate::raw::to_raw(&ListRootsResult { roots, meta: None })
                    }
                    None => Err(Error::method_not_found("roots/list")),
                };
                Box::pin(async move { r })
            }
            other => {
                let e = Error::method_not_found(other);
                Box::pin(async move { Err(e) })
            }
        }
    }

    fn handle_notification(&self, method: &str, params: Option<&RawValue>, _peer: &Peer) {
        if let Some(l) = self.state.listen.get() {
            let id = listen::subscription_id(params);
            match (method, id) {
                (listen::ACKNOWLEDGED, Some(id)) => return l.on_ack(id),
                (listen::ACKNOWLEDGED, None) => return,
                // A stream that was replaced: the one after it says the same from now on.
                (_, Some(id)) if !l.delivers(&id) => return,
                // A followed task changed: its follower polls at once.
                (mcp_proto::schema::tasks::extension::NOTIFICATION_TASKS, Some(_)) => {
                    if let Some(task_id) = listen::task_id(params) {
                        l.on_task(&task_id);
                    }
                }
                _ => {}
            }
        }
        let note = match method {
            "notifications/tools/list_changed" => {
                self.invalidate("tools/list", None);
                lock(&self.state.caches).tools = None;
                ServerNotification::ToolsListChanged
            }
            "notifications/resources/list_changed" => {
                self.invalidate("resources/list", None);
                self.invalidate("resources/templates/list", None);
                // Skill files are resources: a skill added, removed or changed says so here.
                self.invalidate("skills/list", None);
                self.invalidate("skills/get", None);
                lock(&self.state.caches).resources = None;
                ServerNotification::ResourcesListChanged
            }
            "notifications/prompts/list_changed" => {
                self.invalidate("prompts/list", None);
                lock(&self.state.caches).prompts = None;
                ServerNotification::PromptsListChanged
            }
            "notifications/resources/updated" => {
                match params.and_then(|p| {
                    serde_json::from_str::<ResourceUpdatedNotificationParams>(p.get()).ok()
                }) {
                    Some(u) => {
                        self.invalidate("resources/read", Some(&u.uri));
                        let mut f = lock(&self.state.fanout);
                        if let Some(subs) = f.updates.get_mut(&u.uri) {
                            subs.retain(|s| s.send(u.clone()));
                        }
                        ServerNotification::ResourceUpdated(u)
                    }
                    None => return,
                }
            }
            "notifications/message" => {
                match params.and_then(|p| {
                    serde_json::from_str::<LoggingMessageNotificationParams>(p.get()).ok()
                }) {
                    Some(m) => {
                        lock(&self.state.fanout).logs.retain(|s| s.send(m.clone()));
                        ServerNotification::Log(m)
                    }
                    None => return,
                }
            }
            other => ServerNotification::Other {
                method: other.to_owned(),
                params: params.map(ToOwned::to_owned),
            },
        };
        lock(&self.state.fanout)
            .notifications
            .retain(|s| s.send(note.clone()));
    }
}

struct Guard {
    peer: Peer,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.peer.close();
    }
}

/// A connected MCP client. Cheap to clone; the connection closes when the last clone drops.
#[derive(Clone)]
pub struct Client {
    peer: Peer,
    server: PeerInfo,
    state: Arc<ClientState>,
    roots: Option<Arc<RwLock<Vec<Root>>>>,
    /// Stateless era: how calls answer `input_required`.
    rounds: Option<Arc<crate::mrtr::ClientRounds>>,
    /// Resolves when the connection task has ended (its transport closed and flushed).
    ended: futures_util::future::Shared<oneshot::Receiver<()>>,
    _guard: Arc<Guard>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server.info.get())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects over `transport`: the connection task is spawned on `rt`, the handshake runs,
    /// and the client is returned once the server answered.
    ///
    /// Most applications call a driver's function instead (`mcp_tokio::spawn`,
    /// `connect_http`, [`memory_pair`](crate::driver::memory_pair), …), which makes the
    /// transport and calls this; [`Server::test_client`](crate::Server::test_client) does it
    /// in memory for tests. Here by hand, over an in-memory pipe:
    ///
    /// ```
    /// use mcp_service::server::Server;
    /// use mcp_service::sim::Sim;
    /// use mcp_service::{Client, ClientOptions, Runtime};
    ///
    /// let server = Server::builder("hello", "1.0").instructions("Say hello.").build();
    /// let (client_end, server_end) = mcp_service::memory::duplex(64 * 1024);
    /// let sim = Sim::new();
    /// let rt = sim.runtime();
    /// let client = sim
    ///     .block_on(async move {
    ///         let server_rt = rt.clone();
    ///         rt.spawn(Box::pin(async move {
    ///             let _ = server.serve(server_rt, server_end).await;
    ///         }));
    ///         Client::connect(rt, client_end, ClientOptions::new("my-client", "0.1")).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// let info = client.server_info().implementation().expect("the server's name");
    /// assert_eq!(info.name, "hello");
    /// assert_eq!(client.instructions(), Some("Say hello."));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::ProtocolVersionMismatch`] (-32022) when the server and the client share
    ///   no protocol version (the server chose one outside [`ClientOptions::versions`], or its
    ///   `server/discover` offers none of them);
    /// - [`ErrorKind::Timeout`] (local) when `initialize` (or, with
    ///   [`Discovery::Discover`](mcp_proto::session::Discovery::Discover), `server/discover`)
    ///   got no answer within [`ClientOptions::request_timeout`];
    /// - [`ErrorKind::TransportClosed`] (local) when the connection closed before the server
    ///   answered (a child process that exited, a peer that hung up);
    ///   [`ErrorKind::TransportError`] (local) when reading or writing failed;
    /// - [`ErrorKind::ProtocolInvalid`] (-32600) when the server's `initialize` result is
    ///   malformed (and its `server/discover` result, with `Discovery::Discover`; with
    ///   `Discovery::Auto` the client falls back to the handshake instead);
    /// - the server's JSON-RPC error to `initialize`, as it sent it, and its refusal of
    ///   `server/discover` that a handshake would not cure (-32020
    ///   [`ErrorKind::HeaderMismatch`], -32021 [`ErrorKind::MissingClientCapability`]).
    pub async fn connect<R: Runtime>(
        rt: R,
        transport: impl Into<Transport>,
        options: ClientOptions,
    ) -> Result<Client, Error> {
        let transport = transport.into();
        let config = transport.adapt(options.session_config()?);
        let state = Arc::new(ClientState {
            caches: Mutex::new(Caches::default()),
            fanout: Mutex::new(Fanout::default()),
            listen: std::sync::OnceLock::new(),
            responses: std::sync::OnceLock::new(),
        });
        let service = Arc::new(ClientService {
            state: state.clone(),
            sampling: options.sampling,
            elicitation: options.elicitation,
            roots: options.roots.clone(),
        });
        let default_timeout = config.request_timeout;
        let session = Session::client(config);
        let (peer, conn, ready) = connection(
            rt.clone(),
            session,
            transport,
            service.clone(),
            options.telemetry,
        );
        // Closes the connection when the last client drops, and as well when this future is
        // dropped before the handshake completed.
        let guard = Arc::new(Guard { peer: peer.clone() });
        let (ended_tx, ended_rx) = oneshot::channel();
        rt.spawn(Box::pin(async move {
            if let Err(e) = conn.await {
                tracing::debug!(target: "mcp", error = %e, "client connection ended with an error");
            }
            let _ = ended_tx.send(());
        }));
        let server = ready.await.map_err(|_| {
            Error::new(
                ErrorKind::TransportClosed,
                "the connection closed during the handshake",
            )
        })??;
        // 2026-07-28: the response cache; calls through `input_required` rounds, answered by
        // the same handlers as the handshake era's server requests; the listen stream.
        let mut rounds = None;
        if server.version.is_stateless() {
            let clock_rt = rt.clone();
            let clock: crate::mrtr::Clock = Arc::new(move || clock_rt.now());
            if let Some(store) = options.response_store.clone() {
                let mut id = [0u8; 8];
                let _ = getrandom::fill(&mut id);
                let cache = crate::cache::ResponseCache {
                    store,
                    client_id: id.iter().map(|b| format!("{b:02x}")).collect(),
                };
                let _ = state.responses.set((cache, clock.clone()));
            }
            let sleep_rt = rt.clone();
            let spawn_rt = rt.clone();
            rounds = Some(crate::mrtr::ClientRounds {
                answerer: service,
                clock,
                sleep: Arc::new(move |at| sleep_rt.sleep_until(at)),
                spawn: Arc::new(move |f| spawn_rt.spawn(f)),
                default_timeout,
                watch: None,
            });
            let caches = Arc::downgrade(&state);
            let forget = Box::new(move || {
                if let Some(s) = caches.upgrade() {
                    *lock(&s.caches) = Caches::default();
                    // A list change or resource update missed in the gap leaves no stale
                    // result behind.
                    if let Some((cache, _)) = s.responses.get() {
                        cache.clear();
                    }
                }
            });
            let l = listen::Listen::new(peer.clone(), Arc::new(rt.clone()), forget);
            if let Some(r) = rounds.as_mut() {
                r.watch = Some(Arc::new(l.clone()) as Arc<dyn crate::mrtr::TaskWatch>);
            }
            let _ = state.listen.set(l);
        }
        Ok(Client {
            rounds: rounds.map(Arc::new),
            ended: futures_util::FutureExt::shared(ended_rx),
            _guard: guard,
            peer,
            server,
            state,
            roots: options.roots,
        })
    }

    /// The server's info from the handshake.
    pub fn server_info(&self) -> &PeerInfo {
        &self.server
    }

    /// The settings of the extension `id` the server declared, or `None` when it did not.
    pub fn server_extension(&self, id: &str) -> Option<Value> {
        crate::raw::extension(&self.server.capabilities, id)
    }

    /// The server's instructions.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.server.version
    }

    /// The underlying peer handle (raw requests and notifications).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// Closes the connection gracefully.
    pub fn close(&self) {
        match self.state.listen.get() {
            // Open listen streams are cancelled first, so that the server does not answer
            // them into a closed connection.
            Some(l) => {
                let peer = self.peer.clone();
                l.stop_then(move || peer.close());
            }
            None => self.peer.close(),
        }
    }

    /// Completes once the connection has ended: after [`close`](Self::close), when the server
    /// went away, or when the transport failed. The transport has then finished its own
    /// closing (an HTTP session's `DELETE`, a WebSocket close handshake, a flushed pipe).
    pub async fn closed(&self) {
        let _ = self.ended.clone().await;
    }

    /// Closes the connection and waits until it has ended ([`close`](Self::close) then
    /// [`closed`](Self::closed)).
    pub async fn shutdown(&self) {
        self.close();
        self.closed().await;
    }

    /// `ping`; in the 2026-07-28 era, which has no `ping`, `server/discover` (an answer says
    /// the server is there).
    ///
    /// # Errors
    /// The [errors of every request](crate::client#errors-of-every-request): mostly
    /// [`ErrorKind::Timeout`] for a server that does not answer and
    /// [`ErrorKind::TransportClosed`] for one that went away.
    pub async fn ping(&self) -> Result<(), Error> {
        if self.server.version.is_stateless() {
            return self.peer.request("server/discover", None).await.map(|_| ());
        }
        self.peer.request("ping", None).await.map(|_| ())
    }

    async fn page<T: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        cursor: Option<String>,
    ) -> Result<T, Error> {
        let key = cursor.clone().unwrap_or_default();
        let params = PaginatedRequestParams { cursor, meta: None };
        let raw = match self.cached(method, &key) {
            Some(hit) => hit,
            None => {
                let raw = self.peer.request_with(method, &params).await?;
                self.keep(method, &key, &raw);
                raw
            }
        };
        parse_result(&raw)
    }

    /// A cached result of `method` with `param` (stateless era).
    pub(crate) fn cached(&self, method: &str, param: &str) -> Option<Box<RawValue>> {
        let (cache, clock) = self.state.responses.get()?;
        cache.get(method, param, clock())
    }

    /// Keeps a result as its cache hints say (stateless era).
    pub(crate) fn keep(&self, method: &str, param: &str, raw: &RawValue) {
        if let Some((cache, clock)) = self.state.responses.get() {
            cache.put(method, param, raw, clock());
        }
    }

    /// `tools/list`, every page. Tools with invalid `x-mcp-header` annotations are left out.
    /// In the 2026-07-28 era a page the server marked cacheable (`ttlMs`) is answered from
    /// the response cache while it is fresh.
    ///
    /// ```
    /// use mcp_service::schema::Tool;
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("s", "1.0")
    ///     .tool(
    ///         Tool::new("echo", schema_of(serde_json::json!({"type": "object"})))
    ///             .with_description("Says it back"),
    ///         |args: serde_json::Value, _cx: ToolContext| async move { Ok(args.to_string()) },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let tools = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         client.list_tools().await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(tools.len(), 1);
    /// assert_eq!(tools[0].name, "echo");
    /// assert_eq!(tools[0].description.as_deref(), Some("Says it back"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server declared no `tools`;
    /// [`ErrorKind::InvalidParams`] (-32602) when the server refuses a page's cursor; and
    /// the [errors of every request](crate::client#errors-of-every-request) for each page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page: ListToolsResult = self.page("tools/list", cursor).await?;
            // A tool whose `x-mcp-header` annotations are invalid is left out (SEP-2243):
            // its calls could not be sent right.
            all.extend(page.tools.into_iter().filter(|t| match t.param_headers() {
                Ok(_) => true,
                Err(why) => {
                    tracing::warn!(target: "mcp", tool = %t.name, %why, "tool left out");
                    false
                }
            }));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// The tools, cached until the server says the list changed.
    ///
    /// # Errors
    /// Those of [`list_tools`](Self::list_tools), when the cache is empty.
    pub async fn tools(&self) -> Result<Vec<Tool>, Error> {
        if let Some(t) = lock(&self.state.caches).tools.clone() {
            return Ok(t);
        }
        let tools = self.list_tools().await?;
        lock(&self.state.caches).tools = Some(tools.clone());
        Ok(tools)
    }

    /// `tools/call` with JSON arguments. Await it, or add `.progress(..)` / `.timeout(..)`
    /// first. `arguments` is the arguments object; `null` sends none, and any other value is
    /// sent as `{"value": ..}`. Dropping the future cancels the call on the wire.
    ///
    /// A tool that failed is not an `Err`: its result has `is_error: Some(true)` and says
    /// why in its content (the model is meant to read it).
    ///
    /// ```
    /// use mcp_service::schema::Tool;
    /// use mcp_service::server::{Server, ToolContext, schema_of};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::Progress;
    /// use std::sync::{Arc, Mutex};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Count { to: u32 }
    ///
    /// let server = Server::builder("counter", "1.0")
    ///     .tool(
    ///         Tool::new("count", schema_of(serde_json::json!({"type": "object"}))),
    ///         |args: Count, cx: ToolContext| async move {
    ///             for i in 1..=args.to {
    ///                 cx.progress(f64::from(i), Some(f64::from(args.to)), None).await?;
    ///             }
    ///             Ok(format!("counted to {}", args.to))
    ///         },
    ///     )
    ///     .build();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let reports = seen.clone();
    /// let sim = Sim::new();
    /// let (result, failed) = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let result = client
    ///             .call_tool("count", serde_json::json!({"to": 3}))
    ///             .progress(move |p: Progress| reports.lock().unwrap().push(p.progress))
    ///             .timeout(std::time::Duration::from_secs(5))
    ///             .await?;
    ///         // Arguments that do not fit the handler's type: a failed tool, not an `Err`.
    ///         let failed = client.call_tool("count", serde_json::json!({"to": "x"})).await?;
    ///         Ok::<_, mcp_service::Error>((result, failed))
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(result.content[0].as_text(), Some("counted to 3"));
    /// assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    /// assert_eq!(failed.is_error, Some(true));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// Awaiting it fails with -32602 [`ErrorKind::InvalidParams`] for a tool the server does
    /// not have, and for arguments the tool refuses when the negotiated version is older than
    /// 2025-11-25 (since then, a server of this crate answers those with an `isError`
    /// result); [`ErrorKind::Timeout`] when the call's [`timeout`](ToolCall::timeout) (else
    /// the session's) passed, and for a call that became a task (tasks extension) when the
    /// call's own timeout passed while the task ran; a failed task's error, as the task
    /// reported it, and [`ErrorKind::RequestCancelled`] for a task cancelled on the server;
    /// [`ErrorKind::ProtocolInvalid`] (-32600) for a result that is not a `CallToolResult`;
    /// and the [errors of every request](crate::client#errors-of-every-request).
    pub fn call_tool(&self, name: &str, arguments: Value) -> ToolCall {
        let arguments = match arguments {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => {
                let mut m = Map::new();
                m.insert("value".into(), other);
                Some(m)
            }
        };
        let params = CallToolRequestParams {
            name: name.to_owned(),
            arguments,
            task: None,
            input_responses: None,
            request_state: None,
            meta: None,
        };
        ToolCall {
            request: self.peer.request_with("tools/call", &params),
            rounds: self.rounds.as_deref().cloned(),
        }
    }

    /// `tools/call`, yielding streamed content items as they arrive, then the final result.
    ///
    /// Up to [`TOOL_STREAM_BACKLOG`] items wait for a consumer that has not taken them; the
    /// ones streamed past that are not queued (counted in [`ToolStream::skipped`]), so a
    /// stream nobody reads holds bounded memory. The final result still carries the content
    /// the server kept for it.
    ///
    /// The errors of [`call_tool`](Self::call_tool) arrive as the final
    /// [`ToolStreamItem::Done`]`(Err(..))`.
    pub fn call_tool_stream(&self, name: &str, arguments: Value) -> ToolStream {
        let (mut tx, rx) = mpsc::channel(TOOL_STREAM_BACKLOG);
        let skipped = Arc::new(AtomicUsize::new(0));
        let skips = skipped.clone();
        let call = self
            .call_tool(name, arguments)
            .progress(move |p: Progress| {
                if let Some(items) = p.meta.as_ref().and_then(|m| {
                    serde_json::from_str::<BTreeMap<String, Value>>(m.get())
                        .ok()
                        .and_then(|mut m| m.remove(PARTIAL_CONTENT_META))
                        .and_then(|v| serde_json::from_value::<Vec<Content>>(v).ok())
                }) {
                    for item in items {
                        if tx.try_send(item).is_err() {
                            skips.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        ToolStream {
            partial: rx,
            skipped,
            partial_open: true,
            delivered: 0,
            call: Some(Box::pin(call.into_future())),
            result: None,
            done: false,
        }
    }

    /// `resources/list`, every page (cached as [`list_tools`](Self::list_tools) says).
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server declared no `resources`;
    /// [`ErrorKind::InvalidParams`] (-32602) when the server refuses a page's cursor; and
    /// the [errors of every request](crate::client#errors-of-every-request) for each page.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page: ListResourcesResult = self.page("resources/list", cursor).await?;
            all.extend(page.resources);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// The resources, cached until the server says the list changed.
    ///
    /// # Errors
    /// Those of [`list_resources`](Self::list_resources), when the cache is empty.
    pub async fn resources(&self) -> Result<Vec<Resource>, Error> {
        if let Some(r) = lock(&self.state.caches).resources.clone() {
            return Ok(r);
        }
        let r = self.list_resources().await?;
        lock(&self.state.caches).resources = Some(r.clone());
        Ok(r)
    }

    /// `resources/templates/list`, every page.
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page: ListResourceTemplatesResult =
                self.page("resources/templates/list", cursor).await?;
            all.extend(page.resource_templates);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// `resources/read`: the contents of `uri` (a resource's, or one a template of the
    /// server matches). In the 2026-07-28 era a result the server marked cacheable is answered
    /// from the response cache while it is fresh, and `input_required` rounds are answered by
    /// the client's handlers.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use mcp_service::schema::{ResourceContents, ResourceTemplate};
    /// use mcp_service::server::{ResourceContext, Server};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::ErrorKind;
    ///
    /// let server = Server::builder("notes", "1.0")
    ///     .resource_template(
    ///         ResourceTemplate::new("note://{id}", "note"),
    ///         |uri: String, vars: HashMap<String, String>, _cx: ResourceContext| async move {
    ///             match vars.get("id").map(String::as_str) {
    ///                 Some("1") => Ok(vec![ResourceContents::text(uri, "buy milk")]),
    ///                 _ => Err(mcp_service::Error::not_found("no such note")),
    ///             }
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let (note, missing) = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let note = client.read_resource("note://1").await?;
    ///         let missing = client.read_resource("note://2").await.unwrap_err();
    ///         Ok::<_, mcp_service::Error>((note, missing))
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(note.contents, vec![ResourceContents::text("note://1", "buy milk")]);
    /// // The test client speaks 2026-07-28: a missing resource is -32602 with `data.uri`,
    /// // which the client reports as `NotFound` (as -32002 is before that version).
    /// assert_eq!((missing.kind(), missing.code()), (ErrorKind::NotFound, -32602));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// A URI the server does not have: [`ErrorKind::NotFound`] in every version, with the
    /// code the version uses (-32002 before 2026-07-28, -32602 since) and `data.uri`;
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server declared no `resources`; and
    /// the [errors of every request](crate::client#errors-of-every-request).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let params = ReadResourceRequestParams {
            uri: uri.to_owned(),
            input_responses: None,
            request_state: None,
            meta: None,
        };
        if let Some(hit) = self.cached("resources/read", uri) {
            return parse_result(&hit);
        }
        let raw = self
            .with_rounds(self.peer.request_with("resources/read", &params))
            .await
            .map_err(not_found_of_read)?;
        self.keep("resources/read", uri, &raw);
        parse_result(&raw)
    }

    /// `resources/subscribe`; the stream yields each `resources/updated` for `uri`. Dropping it
    /// does not unsubscribe on the server; call [`unsubscribe`](Self::unsubscribe).
    ///
    /// In the 2026-07-28 era `uri` joins the client's `subscriptions/listen` stream instead
    /// (reopened with it, and returned once the server acknowledged the new stream); the same
    /// stream carries the list changes [`notifications`](Self::notifications) yields.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use mcp_service::schema::{Resource, ResourceContents};
    /// use mcp_service::server::{ResourceContext, Server};
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("clock", "1.0")
    ///     .resource(Resource::new("clock://now", "now"), |uri, _cx: ResourceContext| async move {
    ///         Ok(vec![ResourceContents::text(uri, "12:00")])
    ///     })
    ///     .resource_subscriptions() // this server tells subscribers of changes
    ///     .build();
    /// let sim = Sim::new();
    /// let updated = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let mut updates = client.subscribe("clock://now").await?;
    ///         server.resource_updated("clock://now"); // the application says it changed
    ///         Ok::<_, mcp_service::Error>(updates.next().await)
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(updated.map(|u| u.uri).as_deref(), Some("clock://now"));
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// Before 2026-07-28: [`ErrorKind::MethodNotFound`] (-32601) when the server did not
    /// declare `resources.subscribe`, and the
    /// [errors of every request](crate::client#errors-of-every-request). In the 2026-07-28
    /// era, the errors of the new `subscriptions/listen` stream: [`ErrorKind::Timeout`]
    /// when the server did not acknowledge it within 30 s, [`ErrorKind::ProtocolInvalid`]
    /// when it ended the stream without acknowledging it, the server's error to it, and
    /// [`ErrorKind::TransportClosed`] when the connection is closed. On an error the client
    /// is not subscribed to `uri`. (A 2026-07-28 server that did not declare
    /// `resources.subscribe` acknowledges the stream without `uri`: that is no error here, and
    /// no update comes.)
    pub async fn subscribe(
        &self,
        uri: &str,
    ) -> Result<Notifications<ResourceUpdatedNotificationParams>, Error> {
        let (tx, rx) = notifications::channel(notifications::DEFAULT_CAPACITY);
        lock(&self.state.fanout)
            .updates
            .entry(uri.to_owned())
            .or_default()
            .push(tx);
        if let Some(l) = self.state.listen.get() {
            if let Err(e) = l.update(|uris| uris.insert(uri.to_owned())).await {
                l.forget(uri);
                lock(&self.state.fanout).updates.remove(uri);
                return Err(e);
            }
            return Ok(rx);
        }
        let params = SubscribeRequestParams {
            uri: uri.to_owned(),
            meta: None,
        };
        if let Err(e) = self.peer.request_with("resources/subscribe", &params).await {
            lock(&self.state.fanout).updates.remove(uri);
            return Err(e);
        }
        Ok(rx)
    }

    /// `resources/unsubscribe` (ends the update streams of `uri`); in the 2026-07-28 era, the
    /// listen stream is reopened without `uri`.
    ///
    /// # Errors
    /// As [`subscribe`](Self::subscribe); the local update streams of `uri` end either way.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        lock(&self.state.fanout).updates.remove(uri);
        if let Some(l) = self.state.listen.get() {
            return l.update(|uris| uris.remove(uri)).await;
        }
        let params = SubscribeRequestParams {
            uri: uri.to_owned(),
            meta: None,
        };
        self.peer
            .request_with("resources/unsubscribe", &params)
            .await
            .map(|_| ())
    }

    /// `prompts/list`, every page.
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server declared no `prompts`;
    /// [`ErrorKind::InvalidParams`] (-32602) when the server refuses a page's cursor; and
    /// the [errors of every request](crate::client#errors-of-every-request) for each page.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page: ListPromptsResult = self.page("prompts/list", cursor).await?;
            all.extend(page.prompts);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// The prompts, cached until the server says the list changed.
    ///
    /// # Errors
    /// Those of [`list_prompts`](Self::list_prompts), when the cache is empty.
    pub async fn prompts(&self) -> Result<Vec<Prompt>, Error> {
        if let Some(p) = lock(&self.state.caches).prompts.clone() {
            return Ok(p);
        }
        let p = self.list_prompts().await?;
        lock(&self.state.caches).prompts = Some(p.clone());
        Ok(p)
    }

    /// `prompts/get`: the prompt `name` filled with `arguments`.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mcp_service::schema::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
    /// use mcp_service::server::{PromptContext, Server};
    /// use mcp_service::sim::Sim;
    /// use mcp_service::ErrorKind;
    ///
    /// let server = Server::builder("writer", "1.0")
    ///     .prompt(
    ///         Prompt::new("summarise").with_argument(PromptArgument::new("topic").required()),
    ///         |args: BTreeMap<String, String>, _cx: PromptContext| async move {
    ///             let topic = &args["topic"]; // required arguments are checked before
    ///             Ok(GetPromptResult::new(vec![PromptMessage::user(format!("Summarise {topic}."))]))
    ///         },
    ///     )
    ///     .build();
    /// let sim = Sim::new();
    /// let (prompt, missing) = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let args = BTreeMap::from([("topic".to_owned(), "MCP".to_owned())]);
    ///         let prompt = client.get_prompt("summarise", args).await?;
    ///         let missing = client.get_prompt("summarise", BTreeMap::new()).await.unwrap_err();
    ///         Ok::<_, mcp_service::Error>((prompt, missing))
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(prompt.messages, vec![PromptMessage::user("Summarise MCP.")]);
    /// assert_eq!(missing.kind(), ErrorKind::InvalidParams);
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// -32602 [`ErrorKind::InvalidParams`] for a prompt the server does not have or a
    /// required argument missing; [`ErrorKind::MethodNotFound`] (-32601) when the server
    /// declared no `prompts`; the prompt handler's error (-32603 [`ErrorKind::Internal`]
    /// from a server of this crate when the handler failed); and the
    /// [errors of every request](crate::client#errors-of-every-request).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        let params = GetPromptRequestParams {
            name: name.to_owned(),
            arguments: Some(arguments),
            input_responses: None,
            request_state: None,
            meta: None,
        };
        parse_result(
            &self
                .with_rounds(self.peer.request_with("prompts/get", &params))
                .await?,
        )
    }

    /// A request that may answer `input_required` (2026-07-28): its rounds, then the raw
    /// result.
    async fn with_rounds(&self, request: Request) -> Result<Box<RawValue>, Error> {
        match &self.rounds {
            None => request.await,
            Some(rounds) => crate::mrtr::ClientRounds::clone(rounds).run(request).await,
        }
    }

    /// `tasks/get` (tasks extension): a task as the server has it now.
    ///
    /// # Errors
    /// The server's error for a task it does not know (-32602 [`ErrorKind::InvalidParams`]
    /// from a server of this crate); -32021 [`ErrorKind::MissingClientCapability`] when this
    /// client did not declare the extension ([`ClientOptions::tasks`]);
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server did not declare it, or the
    /// negotiated version has no such method; and the
    /// [errors of every request](crate::client#errors-of-every-request).
    pub async fn get_task(
        &self,
        task_id: &str,
    ) -> Result<mcp_proto::schema::tasks::extension::Task, Error> {
        self.peer
            .request_with("tasks/get", &serde_json::json!({"taskId": task_id}))
            .typed()
            .await
    }

    /// `tasks/update` (tasks extension): answers some of a task's input requests, by key.
    ///
    /// # Errors
    /// As [`get_task`](Self::get_task).
    pub async fn update_task(
        &self,
        task_id: &str,
        input_responses: Map<String, Value>,
    ) -> Result<(), Error> {
        self.peer
            .request_with(
                "tasks/update",
                &serde_json::json!({"taskId": task_id, "inputResponses": input_responses}),
            )
            .await
            .map(|_| ())
    }

    /// `tasks/cancel` (tasks extension).
    ///
    /// # Errors
    /// As [`get_task`](Self::get_task).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        self.peer
            .request_with("tasks/cancel", &serde_json::json!({"taskId": task_id}))
            .await
            .map(|_| ())
    }

    /// `completion/complete`: values for an argument of a prompt or resource template (at
    /// most 100; `has_more` says when there are others).
    ///
    /// ```
    /// use mcp_service::schema::{CompleteRequestParams, Completion, Reference};
    /// use mcp_service::server::{CompleteContext, Server};
    /// use mcp_service::sim::Sim;
    ///
    /// let server = Server::builder("langs", "1.0")
    ///     .completion(|params: CompleteRequestParams, _cx: CompleteContext| async move {
    ///         let values = ["rust", "ruby", "python"]
    ///             .into_iter()
    ///             .filter(|v| v.starts_with(params.argument.value.as_str()))
    ///             .map(str::to_owned)
    ///             .collect();
    ///         Ok(Completion { values, ..Completion::default() })
    ///     })
    ///     .build();
    /// let sim = Sim::new();
    /// let result = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let ask = CompleteRequestParams::new(Reference::prompt("code"), "language", "ru");
    ///         client.complete(ask).await
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(result.completion.values, ["rust", "ruby"]);
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server declared no `completions`; the
    /// completion handler's error (-32603 [`ErrorKind::Internal`] from a server of this
    /// crate when the handler failed); and the
    /// [errors of every request](crate::client#errors-of-every-request).
    pub async fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult, Error> {
        self.peer
            .request_with("completion/complete", &params)
            .typed()
            .await
    }

    /// `logging/setLevel`; in the 2026-07-28 era, which sets the level per request, every
    /// request from now on asks for `level` in its `_meta`.
    ///
    /// # Errors
    /// Before 2026-07-28: [`ErrorKind::MethodNotFound`] (-32601) when the server declared no
    /// `logging`, and the [errors of every request](crate::client#errors-of-every-request).
    /// In the 2026-07-28 era nothing is sent, and the only error is
    /// [`ErrorKind::TransportClosed`] when the connection has ended.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.server.version.is_stateless() {
            return self
                .peer
                .send(crate::peer::Command::SetLogLevel(Some(level)));
        }
        let params = SetLevelRequestParams { level, meta: None };
        self.peer
            .request_with("logging/setLevel", &params)
            .await
            .map(|_| ())
    }

    /// A stream of the server's log messages: bounded, the oldest dropped and counted when
    /// it is not read (see [`Notifications`]).
    pub fn log_messages(&self) -> Notifications<LoggingMessageNotificationParams> {
        let (tx, rx) = notifications::channel(notifications::DEFAULT_CAPACITY);
        lock(&self.state.fanout).logs.push(tx);
        rx
    }

    /// A stream of every server notification: bounded, the oldest dropped and counted when
    /// it is not read (see [`Notifications`]). In the 2026-07-28 era this opens the client's
    /// `subscriptions/listen` stream (in the background) for the list changes.
    pub fn notifications(&self) -> Notifications<ServerNotification> {
        let (tx, rx) = notifications::channel(notifications::DEFAULT_CAPACITY);
        lock(&self.state.fanout).notifications.push(tx);
        if let Some(l) = self.state.listen.get() {
            l.start();
        }
        rx
    }

    /// Replaces the roots and tells the server (`notifications/roots/list_changed`).
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolInvalid`] (-32600) when the client was not configured with
    /// [`ClientOptions::roots`]; [`ErrorKind::LimitExceeded`] when the connection's output
    /// budget is full (the server is not reading, see [`Peer::writable`]);
    /// [`ErrorKind::TransportClosed`] when the connection has ended; the roots are replaced
    /// in every case but the first.
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), Error> {
        let Some(r) = &self.roots else {
            return Err(Error::invalid_request(
                "the client was not configured with roots",
            ));
        };
        *r.write().unwrap_or_else(|e| e.into_inner()) = roots;
        self.peer.notify("notifications/roots/list_changed", None)
    }

    /// A raw request with serialisable params; await it for the raw result, or
    /// [`typed`](Request::typed) for a deserialised one.
    ///
    /// Awaiting it fails with the [errors of every request](crate::client#errors-of-every-request),
    /// and with [`ErrorKind::Internal`] when `params` does not serialise or
    /// [`ErrorKind::InvalidParams`] when it is not a JSON object.
    pub fn request<P: Serialize + ?Sized>(&self, method: &'static str, params: &P) -> Request {
        self.peer.request_with(method, params)
    }
}

/// A `tools/call` in preparation.
#[must_use = "a tool call does nothing until awaited"]
pub struct ToolCall {
    request: Request,
    rounds: Option<crate::mrtr::ClientRounds>,
}

impl ToolCall {
    /// Asks for progress and calls `f` with each report (see the example of
    /// [`Client::call_tool`]); in the 2026-07-28 era one callback serves every
    /// `input_required` round of the call.
    pub fn progress(mut self, f: impl FnMut(Progress) + Send + 'static) -> Self {
        self.request = self.request.progress(f);
        self
    }

    /// Sets the timeout of this call (instead of the session's
    /// [`ClientOptions::request_timeout`]); when it passes the call is cancelled on the wire
    /// and fails with [`ErrorKind::Timeout`].
    pub fn timeout(mut self, timeout: impl Into<Duration>) -> Self {
        self.request = self.request.timeout(timeout);
        self
    }

    /// Restarts the timeout whenever progress arrives, up to `max_total` in all (then
    /// [`ErrorKind::Timeout`] whatever the progress).
    pub fn reset_timeout_on_progress(mut self, max_total: Option<Duration>) -> Self {
        self.request = self.request.reset_timeout_on_progress(max_total);
        self
    }
}

/// The future of a tool call.
pub struct ToolCallFuture {
    inner: CallInner,
}

enum CallInner {
    /// One request.
    Once(ResponseFuture),
    /// Through `input_required` rounds (2026-07-28).
    Rounds(BoxFuture<Result<Box<RawValue>, Error>>),
}

impl Future for ToolCallFuture {
    type Output = Result<CallToolResult, Error>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = match &mut self.inner {
            CallInner::Once(f) => Pin::new(f).poll(cx),
            CallInner::Rounds(f) => f.as_mut().poll(cx),
        };
        match polled {
            Poll::Pending => Poll::Pending,
            Poll::Ready(r) => Poll::Ready(r.and_then(|raw| {
                serde_json::from_str(raw.get()).map_err(|e| {
                    Error::new(
                        ErrorKind::ProtocolInvalid,
                        format!("unexpected tool result: {e}"),
                    )
                })
            })),
        }
    }
}

impl IntoFuture for ToolCall {
    type Output = Result<CallToolResult, Error>;
    type IntoFuture = ToolCallFuture;
    fn into_future(self) -> ToolCallFuture {
        let inner = match self.rounds {
            Some(rounds) => CallInner::Rounds(Box::pin(rounds.run(self.request))),
            None => CallInner::Once(self.request.into_future()),
        };
        ToolCallFuture { inner }
    }
}

/// One item of [`Client::call_tool_stream`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolStreamItem {
    /// A content item streamed before the result.
    Partial(Content),
    /// The final result (its content repeats the streamed items, then any further ones).
    Done(Result<CallToolResult, Error>),
}

/// How many streamed items of a [`Client::call_tool_stream`] wait for their consumer at most.
pub const TOOL_STREAM_BACKLOG: usize = 256;

/// The stream of a streaming tool call. Dropping it cancels the call.
pub struct ToolStream {
    partial: Receiver<Content>,
    skipped: Arc<AtomicUsize>,
    partial_open: bool,
    delivered: usize,
    call: Option<Pin<Box<ToolCallFuture>>>,
    result: Option<Result<CallToolResult, Error>>,
    done: bool,
}

impl ToolStream {
    /// How many partial items were delivered so far.
    pub fn delivered(&self) -> usize {
        self.delivered
    }

    /// How many partial items were not queued because [`TOOL_STREAM_BACKLOG`] items already
    /// waited for the consumer.
    pub fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
}

impl Stream for ToolStream {
    type Item = ToolStreamItem;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ToolStreamItem>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.partial_open {
            match Pin::new(&mut self.partial).poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    self.delivered += 1;
                    return Poll::Ready(Some(ToolStreamItem::Partial(item)));
                }
                Poll::Ready(None) => self.partial_open = false,
                Poll::Pending => {}
            }
        }
        if self.result.is_none() {
            let Some(call) = self.call.as_mut() else {
                self.done = true;
                return Poll::Ready(None);
            };
            match call.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(r) => {
                    self.call = None;
                    self.result = Some(r);
                }
            }
        }
        // Progress notifications precede the response on the wire, so every partial item is
        // already queued: deliver those first, then the result.
        if let Ok(item) = self.partial.try_recv() {
            self.delivered += 1;
            return Poll::Ready(Some(ToolStreamItem::Partial(item)));
        }
        self.done = true;
        Poll::Ready(self.result.take().map(ToolStreamItem::Done))
    }
}

/// A `resources/read` refused with -32602 and `data.uri` (how 2026-07-28 says "resource not
/// found") is [`ErrorKind::NotFound`], as -32002 is in the earlier versions.
fn not_found_of_read(e: Error) -> Error {
    let names_uri = e.code() == -32602
        && e.data().is_some_and(|d| {
            serde_json::from_str::<Map<String, Value>>(d.get()).is_ok_and(|m| m.contains_key("uri"))
        });
    if !names_uri {
        return e;
    }
    let (code, message, data) = e.into_parts();
    let e = Error::new(ErrorKind::NotFound, message).with_code(code);
    match data {
        Some(d) => e.with_data(d),
        None => e,
    }
}
