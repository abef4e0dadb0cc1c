//! Handlers that are not `Send`: their state (an `Rc`, a `RefCell`, a handle of a
//! single-threaded library) and their futures (holding such a value across an `.await`, or
//! awaiting a future of a local executor) stay on one thread.
//!
//! A [`ServerBuilder`] needs `Send` handlers, because the server runs each request on whatever
//! task the runtime picks. [`LocalHandlers`] registers the same kinds of handlers without that
//! bound, and splits into two parts:
//! - [`LocalRoutes`], which is `Send`: given to [`ServerBuilder::local`], it registers each
//!   tool, resource, template, prompt and completion with the server, as a stand-in that hands
//!   the call over to the runner and waits for its outcome;
//! - [`LocalRunner`], which is not: its [`run`](LocalRunner::run) future, polled by a local
//!   executor on the thread that owns the state (tokio's `LocalSet`, smol's `LocalExecutor`,
//!   `wasm_bindgen_futures::spawn_local`, any `block_on`), runs the handlers, several at once.
//!
//! What crosses between the two is `Send`: the arguments once decoded (a tool's argument type,
//! a resource's URI and variables), the handler's context (so progress, logging, sampling and
//! cancellation work from a local handler as from any other), and the handler's result. The
//! rules for what a result or an error becomes are those of the `ServerBuilder` method of the
//! same name.
//!
//! A call whose request is cancelled (or whose connection ends) drops the local handler's
//! future too. At most [`with_concurrency`](LocalHandlers::with_concurrency) handlers run at once; further
//! calls wait their turn, and the hand-over queue is bounded by the same number. A call made
//! while no runner is being polled waits for one; a call made after the runner was dropped
//! fails with [`ErrorKind::Internal`] (for a tool: an `isError`
//! result). The runner's future completes once the server (every copy of it) is dropped and
//! the last local handler has finished.
//!
//! ```
//! use std::cell::RefCell;
//! use std::rc::Rc;
//! use mcp_service::server::{LocalHandlers, Server, ToolContext, schema_of};
//! use mcp_service::schema::Tool;
//! use mcp_service::sim::Sim;
//!
//! #[derive(serde::Deserialize)]
//! struct Note { text: String }
//!
//! // State that is not `Send`, and a handler whose future holds it across an await.
//! let notes = Rc::new(RefCell::new(Vec::<String>::new()));
//! let (routes, runner) = LocalHandlers::new()
//!     .tool(Tool::new("add", schema_of(serde_json::json!({"type": "object"}))), {
//!         let notes = notes.clone();
//!         move |note: Note, cx: ToolContext| {
//!             let notes = notes.clone();
//!             async move {
//!                 cx.progress(0.5, None, None).await?;
//!                 notes.borrow_mut().push(note.text);
//!                 Ok(format!("{} notes", notes.borrow().len()))
//!             }
//!         }
//!     })
//!     .split();
//! let server = Server::builder("notes", "1.0").local(routes).try_build()?;
//!
//! let sim = Sim::new();
//! let said = sim.block_on(async {
//!     let client = async {
//!         let client = server.test_client(sim.runtime()).await?;
//!         client.call_tool("add", serde_json::json!({"text": "milk"})).await
//!     };
//!     // The runner and the client side by side on this one thread.
//!     let client = std::pin::pin!(client);
//!     let runner = std::pin::pin!(runner.run());
//!     match futures_util::future::select(client, runner).await {
//!         futures_util::future::Either::Left((said, _)) => said,
//!         futures_util::future::Either::Right(_) => unreachable!("the server is still up"),
//!     }
//! });
//! let said = said.expect("nothing deadlocked")?;
//! assert_eq!(said.content[0].as_text(), Some("1 notes"));
//! assert_eq!(notes.borrow().as_slice(), ["milk"]);
//! # Ok::<(), mcp_service::Error>(())
//! ```

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use futures_channel::{mpsc, oneshot};
use futures_util::future::{Either, select};
use futures_util::stream::{FuturesUnordered, StreamExt};
use mcp_proto::schema::{
    CompleteRequestParams, Completion, Prompt, Resource, ResourceTemplate, Tool,
};
use mcp_proto::{Error, ErrorKind};
use serde::de::DeserializeOwned;

use super::{
    CompleteContext, IntoPromptResult, IntoResourceContents, IntoToolResult, PromptContext,
    ResourceContext, ServerBuilder, ToolContext,
};

/// A handler's future on the runner's thread, with its outcome already sent back.
type LocalFuture = Pin<Box<dyn Future<Output = ()>>>;
/// A call handed to the runner: it starts the handler it names in the runner's table.
type Job = Box<dyn FnOnce(&[Box<dyn Any>]) -> LocalFuture + Send>;
/// A stand-in registration, applied to the server's builder.
type Registration = Box<dyn FnOnce(ServerBuilder) -> ServerBuilder + Send>;

/// How many local handlers run at once by default.
const DEFAULT_CONCURRENCY: usize = 64;

/// Tools, resources, templates, prompts and completion whose handlers need not be `Send` (see
/// [the module](self)). Register them as on a [`ServerBuilder`], then [`split`](Self::split).
pub struct LocalHandlers {
    table: Vec<Box<dyn Any>>,
    registrations: Vec<Registration>,
    sender: mpsc::Sender<Job>,
    receiver: mpsc::Receiver<Job>,
    concurrency: usize,
    /// The first registration error (the `#[router(local)]` macro's schemas), for `try_build`.
    pub(super) error: Option<Error>,
}

impl std::fmt::Debug for LocalHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHandlers")
            .field("handlers", &self.table.len())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl Default for LocalHandlers {
    fn default() -> Self {
        LocalHandlers::new()
    }
}

/// The `Send` half of [`LocalHandlers`], for [`ServerBuilder::local`].
#[must_use = "LocalRoutes register nothing until given to ServerBuilder::local"]
pub struct LocalRoutes {
    registrations: Vec<Registration>,
    error: Option<Error>,
}

impl std::fmt::Debug for LocalRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRoutes")
            .field("registrations", &self.registrations.len())
            .finish()
    }
}

/// The half of [`LocalHandlers`] that owns the handlers: [`run`](Self::run) it on their thread.
#[must_use = "local handlers run only while LocalRunner::run is polled"]
pub struct LocalRunner {
    table: Vec<Box<dyn Any>>,
    receiver: mpsc::Receiver<Job>,
    concurrency: usize,
}

impl std::fmt::Debug for LocalRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRunner")
            .field("handlers", &self.table.len())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

/// The error of a call whose runner is gone.
fn runner_gone() -> Error {
    Error::new(
        ErrorKind::Internal,
        "the local handlers' runner has stopped (LocalRunner::run is no longer polled)",
    )
}

/// Hands `call` (which starts the handler at `index`, of type `H`) to the runner and waits for
/// its outcome.
async fn dispatch<H: 'static, O: Send + 'static>(
    mut sender: mpsc::Sender<Job>,
    index: usize,
    call: impl FnOnce(&H) -> Pin<Box<dyn Future<Output = Result<O, Error>>>> + Send + 'static,
) -> Result<O, Error> {
    let (reply, outcome) = oneshot::channel();
    let job: Job = Box::new(move |table: &[Box<dyn Any>]| -> LocalFuture {
        // The index and type were recorded together at registration.
        let Some(handler) = table.get(index).and_then(|h| h.downcast_ref::<H>()) else {
            return Box::pin(async {});
        };
        let run = call(handler);
        Box::pin(async move {
            let mut reply = reply;
            // The caller gone (its request cancelled, its connection closed): so is the call.
            let out = match select(run, reply.cancellation()).await {
                Either::Left((out, _)) => out,
                Either::Right(_) => return,
            };
            let _ = reply.send(out);
        })
    });
    poll_fn(|cx| sender.poll_ready(cx))
        .await
        .map_err(|_| runner_gone())?;
    sender.start_send(job).map_err(|_| runner_gone())?;
    outcome.await.map_err(|_| runner_gone())?
}

impl LocalHandlers {
    /// No handlers yet; at most 64 run at once.
    pub fn new() -> Self {
        LocalHandlers::with_concurrency(DEFAULT_CONCURRENCY)
    }

    /// No handlers yet; at most `n` (at least 1) run at once, and as many calls wait in the
    /// hand-over queue (further ones wait in their requests' tasks).
    pub fn with_concurrency(n: usize) -> Self {
        let n = n.max(1);
        let (sender, receiver) = mpsc::channel(n);
        LocalHandlers {
            table: Vec::new(),
            registrations: Vec::new(),
            sender,
            receiver,
            concurrency: n,
            error: None,
        }
    }

    /// Splits into the routes (give them to [`ServerBuilder::local`]) and the runner (poll
    /// [`LocalRunner::run`] on this thread).
    pub fn split(self) -> (LocalRoutes, LocalRunner) {
        let LocalHandlers {
            table,
            registrations,
            sender,
            receiver,
            concurrency,
            error,
        } = self;
        // Only the stand-ins hold the queue now: the runner ends when they are all dropped.
        drop(sender);
        (
            LocalRoutes {
                registrations,
                error,
            },
            LocalRunner {
                table,
                receiver,
                concurrency,
            },
        )
    }

    /// Stores `handler`, returning its index, and the queue for its stand-in.
    fn store<H: 'static>(&mut self, handler: H) -> (usize, mpsc::Sender<Job>) {
        self.table.push(Box::new(handler));
        (self.table.len() - 1, self.sender.clone())
    }

    /// [`ServerBuilder::tool`] for a handler that need not be `Send`; its result must be.
    pub fn tool<T, F, Fut, R>(mut self, tool: Tool, handler: F) -> Self
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: IntoToolResult + Send + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.tool(tool, move |args: T, cx: ToolContext| {
                    dispatch(sender.clone(), index, move |f: &F| {
                        Box::pin(f(args, cx)) as _
                    })
                })
            }));
        self
    }

    /// [`ServerBuilder::resource`] for a handler that need not be `Send`.
    pub fn resource<F, Fut, R>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String, ResourceContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: IntoResourceContents + Send + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.resource(resource, move |uri: String, cx: ResourceContext| {
                    dispatch(sender.clone(), index, move |f: &F| {
                        Box::pin(f(uri, cx)) as _
                    })
                })
            }));
        self
    }

    /// [`ServerBuilder::resource_template`] for a handler that need not be `Send`.
    pub fn resource_template<F, Fut, R>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, HashMap<String, String>, ResourceContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: IntoResourceContents + Send + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.resource_template(
                    template,
                    move |uri: String, vars: HashMap<String, String>, cx: ResourceContext| {
                        dispatch(sender.clone(), index, move |f: &F| {
                            Box::pin(f(uri, vars, cx)) as _
                        })
                    },
                )
            }));
        self
    }

    /// [`ServerBuilder::prompt`] for a handler that need not be `Send`.
    pub fn prompt<F, Fut, R>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(BTreeMap<String, String>, PromptContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: IntoPromptResult + Send + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.prompt(
                    prompt,
                    move |args: BTreeMap<String, String>, cx: PromptContext| {
                        dispatch(sender.clone(), index, move |f: &F| {
                            Box::pin(f(args, cx)) as _
                        })
                    },
                )
            }));
        self
    }

    /// [`ServerBuilder::completion`] for a handler that need not be `Send`.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompleteRequestParams, CompleteContext) -> Fut + 'static,
        Fut: Future<Output = Result<Completion, Error>> + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.completion(move |params: CompleteRequestParams, cx: CompleteContext| {
                    dispatch(sender.clone(), index, move |f: &F| {
                        Box::pin(f(params, cx)) as _
                    })
                })
            }));
        self
    }
}

#[cfg(feature = "schemars")]
impl LocalHandlers {
    /// [`ServerBuilder::typed_tool`] for a handler that need not be `Send` (feature
    /// `schemars`).
    pub fn typed_tool<T, F, Fut, R>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: super::ToolOutput + Send + 'static,
    {
        self.typed_tool_with(
            super::typed::named(name.into(), description.into()),
            handler,
        )
    }

    /// [`ServerBuilder::typed_tool_with`] for a handler that need not be `Send` (feature
    /// `schemars`).
    pub fn typed_tool_with<T, F, Fut, R>(mut self, tool: Tool, handler: F) -> Self
    where
        T: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + 'static,
        Fut: Future<Output = Result<R, Error>> + 'static,
        R: super::ToolOutput + Send + 'static,
    {
        let (index, sender) = self.store(handler);
        self.registrations
            .push(Box::new(move |builder: ServerBuilder| {
                builder.typed_tool_with(tool, move |args: T, cx: ToolContext| {
                    dispatch(sender.clone(), index, move |f: &F| {
                        Box::pin(f(args, cx)) as _
                    })
                })
            }));
        self
    }
}

impl ServerBuilder {
    /// Registers the handlers of [`LocalHandlers`], which need not be `Send` (see
    /// [`server::local`](crate::server::local)): each as a stand-in that hands its calls to
    /// the [`LocalRunner`]. Errors are those of the methods of the same name, reported by
    /// [`try_build`](Self::try_build).
    pub fn local(mut self, routes: LocalRoutes) -> Self {
        if let Some(e) = routes.error {
            self.error.get_or_insert(e);
        }
        routes
            .registrations
            .into_iter()
            .fold(self, |builder, register| register(builder))
    }
}

impl LocalRunner {
    /// Runs the local handlers as calls arrive, up to the
    /// [concurrency](LocalHandlers::with_concurrency) at once. Poll it on the thread that owns
    /// their state (spawn it on a local executor, or join it with the server's future). It
    /// completes once every stand-in is dropped (the server and its copies) and the last
    /// handler has finished.
    pub async fn run(self) {
        let LocalRunner {
            table,
            mut receiver,
            concurrency,
        } = self;
        let mut running = FuturesUnordered::<LocalFuture>::new();
        let mut open = true;
        poll_fn(|cx| {
            loop {
                // Finished handlers leave room (their outcomes are already sent).
                while let Poll::Ready(Some(())) = running.poll_next_unpin(cx) {}
                if !open {
                    return if running.is_empty() {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    };
                }
                if running.len() >= concurrency {
                    return Poll::Pending;
                }
                match receiver.poll_next_unpin(cx) {
                    Poll::Ready(Some(job)) => running.push(job(&table)),
                    Poll::Ready(None) => open = false,
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
        .await;
    }
}

/// The `#[tool]` and `#[prompt]` methods of an impl block marked `#[router(local)]` (feature
/// `macros`), registered together on [`LocalHandlers`] by [`LocalHandlers::router`], sharing
/// one `Rc` of the state. Unlike [`Router`](super::Router), neither the state nor the methods'
/// futures need be `Send`.
pub trait LocalRouter: 'static {
    /// Registers every `#[tool]` and `#[prompt]` method of the block on `handlers`.
    fn register(self: Rc<Self>, handlers: LocalHandlers) -> LocalHandlers;
}

/// A free `async fn` marked `#[tool(local)]` (feature `macros`), whose future need not be
/// `Send`, for [`LocalHandlers::tool_fn`]: as [`FnTool`](super::FnTool) for a `ServerBuilder`.
pub trait FnLocalTool {
    /// Registers the tool on `handlers`.
    fn register(handlers: LocalHandlers) -> LocalHandlers;
}

/// A free `async fn` marked `#[prompt(local)]` (feature `macros`), for
/// [`LocalHandlers::prompt_fn`].
pub trait FnLocalPrompt {
    /// Registers the prompt on `handlers`.
    fn register(handlers: LocalHandlers) -> LocalHandlers;
}

impl LocalHandlers {
    /// Registers a free `async fn` marked `#[tool(local)]` (feature `macros`):
    /// `.tool_fn::<echo>()`.
    pub fn tool_fn<T: FnLocalTool>(self) -> Self {
        T::register(self)
    }

    /// Registers a free `async fn` marked `#[prompt(local)]` (feature `macros`).
    pub fn prompt_fn<T: FnLocalPrompt>(self) -> Self {
        T::register(self)
    }

    /// Registers the methods of a `#[router(local)]` impl block (feature `macros`), sharing
    /// `state` in one `Rc`.
    pub fn router<S: LocalRouter>(self, state: S) -> Self {
        self.router_rc(Rc::new(state))
    }

    /// [`router`](Self::router) with state already in an `Rc`.
    pub fn router_rc<S: LocalRouter>(self, state: Rc<S>) -> Self {
        state.register(self)
    }
}
