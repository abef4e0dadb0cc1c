//! # mcp-macros
//!
//! Attribute macros for MCP servers: `#[tool]` and `#[prompt]` make an `async fn` a tool or a
//! prompt, with its name, description, argument schema and annotations read from the fn;
//! `#[router]` on an impl block registers its `#[tool]` and `#[prompt]` methods together, on
//! one shared state.
//!
//! Use them through the driver of your runtime with the feature `macros`
//! (`mcp-tokio = { version = "0.1", features = ["macros"] }`, the same on `mcp-async-std`, or
//! `mcp-service`): `mcp_tokio::{tool, prompt, router}`. The feature implies `schemars`: a
//! tool's `inputSchema` is derived from its parameters, its `outputSchema` from a `Json<T>`
//! result.
//!
//! A whole stdio server with one tool:
//!
//! ```no_run
//! use mcp_tokio::{Server, TokioRuntime, tool};
//!
//! /// Echoes the text back.
//! #[tool]
//! async fn echo(text: String) -> String {
//!     text
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), mcp_tokio::Error> {
//!     let server = Server::builder("echo", "1.0").tool_fn::<echo>().build();
//!     mcp_tokio::serve_stdio(TokioRuntime::current(), server).await
//! }
//! ```
//!
//! # `#[tool]`
//!
//! - **Name**: the fn's (`name = ".."` overrides). **Description**: its doc comment
//!   (`description = ".."` overrides). `title = ".."` sets the display title, and the flags
//!   `read_only`, `destructive`, `idempotent` and `open_world` (or `read_only = false`, …) the
//!   [annotations](https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
//! - **Arguments**: each parameter is one, named by the parameter, its type deserialised from
//!   the call's arguments and described in the `inputSchema` (with its doc comment as its
//!   `description`; `#[serde(..)]` and `#[schemars(..)]` attributes on a parameter apply too).
//!   An `Option<T>` parameter is optional, the others are required. Or one parameter marked
//!   `#[args]` takes the whole arguments object as a type of yours
//!   (`Deserialize + JsonSchema`).
//! - **Context**: a parameter of type `ToolContext` (or `&ToolContext`; any other type marked
//!   `#[context]`), anywhere in the list, gets the call's context (progress, logging,
//!   cancellation, the peer, …).
//! - **Result**: anything the server takes as a tool result (`String`, `Json<T>`,
//!   `CallToolResult`, content, …), or a `Result` of one with **any error type** that converts
//!   into `Box<dyn std::error::Error + Send + Sync>` (`std::io::Error`, your `thiserror` type,
//!   `anyhow::Error`, …). An error that is the crate's `Error` keeps its kind (a
//!   `Error::new(ErrorKind::NotFound, ..)` is a JSON-RPC error); any other is the tool's own
//!   failure, an `isError` result with its message (the rule of `ServerBuilder::tool`; the
//!   conversion is `mcp_service::server::IntoHandlerError`, usable in closures too).
//!
//! On a free fn, `#[tool]` also defines a type of the fn's name (an empty enum: the fn stays
//! callable as it is) that `ServerBuilder::tool_fn::<name>()` registers. `#[tool(local)]`
//! (and `#[prompt(local)]`) is for a fn whose future is not `Send`: `LocalHandlers::tool_fn`
//! registers it instead.
//!
//! # `#[router]`
//!
//! On an impl block, `#[router]` collects the methods marked `#[tool]` or `#[prompt]` and
//! implements `Router` for the type: `ServerBuilder::router(state)` registers them all, each
//! calling its method on one `Arc` of the state (no clone per handler;
//! `ServerBuilder::router_arc` takes an `Arc` you keep). Methods take `&self` (or no
//! receiver). The block may be generic; the only bound added is what the server needs of the
//! state, `Self: Send + Sync + 'static` (and, as for every handler, the method's future is
//! `Send`).
//!
//! `#[router(local)]` is for state or futures that are not `Send` (an `Rc`, a `RefCell`, a
//! single-threaded library's handle, a local executor's future): it implements `LocalRouter`
//! instead, with only `Self: 'static` added, and `LocalHandlers::router(state)` registers the
//! methods on one `Rc` of the state (see `mcp_service::server::local` for running them).
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Mutex;
//!
//! use mcp_tokio::service::server::{Json, ToolContext};
//! use mcp_tokio::service::{ErrorKind, schemars::JsonSchema};
//! use mcp_tokio::{Error, Server, TokioRuntime, prompt, router, tool};
//!
//! /// Where notes are kept.
//! pub trait Store: Send + Sync + 'static {
//!     fn put(&self, id: u32, text: String);
//!     fn get(&self, id: u32) -> Option<String>;
//! }
//!
//! #[derive(Default)]
//! struct Memory(Mutex<BTreeMap<u32, String>>);
//! impl Store for Memory {
//!     fn put(&self, id: u32, text: String) {
//!         self.0.lock().unwrap().insert(id, text);
//!     }
//!     fn get(&self, id: u32) -> Option<String> {
//!         self.0.lock().unwrap().get(&id).cloned()
//!     }
//! }
//!
//! struct Notes<S> {
//!     store: S,
//! }
//!
//! #[derive(serde::Serialize, JsonSchema)]
//! #[schemars(crate = "mcp_tokio::service::schemars")]
//! struct Note {
//!     id: u32,
//!     text: String,
//! }
//!
//! #[router]
//! impl<S: Store> Notes<S> {
//!     /// Keeps a note.
//!     #[tool(idempotent)]
//!     async fn put(
//!         &self,
//!         /// The note's number.
//!         id: u32,
//!         /// What it says.
//!         text: String,
//!     ) -> String {
//!         self.store.put(id, text);
//!         format!("kept note {id}")
//!     }
//!
//!     /// Reads a note.
//!     #[tool(read_only)]
//!     async fn get(&self, id: u32, _cx: ToolContext) -> Result<Json<Note>, Error> {
//!         match self.store.get(id) {
//!             Some(text) => Ok(Json(Note { id, text })),
//!             None => Err(Error::new(ErrorKind::NotFound, format!("no note {id}"))),
//!         }
//!     }
//!
//!     /// Asks for a summary of a note.
//!     #[prompt]
//!     async fn summarize(
//!         &self,
//!         /// The note's number.
//!         id: u32,
//!         /// How many words at most.
//!         words: Option<u32>,
//!     ) -> Result<String, std::io::Error> {
//!         let text = self.store.get(id).ok_or_else(|| std::io::Error::other("no such note"))?;
//!         Ok(format!("Summarize in {} words: {text}", words.unwrap_or(50)))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Error> {
//! let notes = Notes { store: Memory::default() };
//! let server = Server::builder("notes", "1.0").router(notes).try_build()?;
//! let client = server.test_client(TokioRuntime::current()).await?;
//! client.call_tool("put", serde_json::json!({"id": 1, "text": "milk"})).await?;
//! let note = client.call_tool("get", serde_json::json!({"id": 1})).await?;
//! assert_eq!(note.structured_content, Some(serde_json::json!({"id": 1, "text": "milk"})));
//! let missing = client.call_tool("get", serde_json::json!({"id": 2})).await.unwrap_err();
//! assert_eq!(missing.kind(), ErrorKind::NotFound);
//! # Ok(()) }
//! ```
//!
//! # `#[prompt]`
//!
//! The same for prompts: name, description and `title` as for tools; each parameter is a
//! prompt argument (its doc comment its description; required unless it is an `Option`),
//! parsed from the argument's string with `FromStr` (so `String`, numbers, `bool`, … work),
//! or one `#[args]` parameter of a `Deserialize + JsonSchema` type of string fields. A
//! missing required argument is refused before the handler runs (`-32602`). It returns a
//! `GetPromptResult`, its messages (`PromptMessage`, `Vec<PromptMessage>`), a `String` (one
//! user message), or a `Result` of one with any error type. On a free fn,
//! `ServerBuilder::prompt_fn::<name>()` registers it.
//!
//! # Which crate the generated code names
//!
//! The generated code names the service crate through the crate your package depends on, as
//! its `Cargo.toml` says (under the name it gives it, renamed or not): the package itself if
//! it is `mcp-tokio`, `mcp-async-std` or `mcp-service`, else the first of these among its
//! dependencies, else among its dev-dependencies. `crate = path` on `#[tool]`, `#[prompt]` or
//! `#[router]` names it instead (`#[router(crate = my_reexport::service)]`).
//!
//! # Compile errors
//!
//! Mistakes are reported at the code that has them: a handler that is not an `async fn`, a
//! parameter pattern that is not a plain name, `self` by value or `&mut self`, two context
//! parameters, an unknown option, a method `#[tool]` outside a `#[router]` block; a result
//! type the server cannot send is reported at the return type.

mod handler;
mod manifest;
mod router;

use proc_macro::TokenStream;
use quote::{ToTokens, quote};

use handler::{Handler, Kind, Options};

/// Makes an `async fn` an MCP tool (see the [crate docs](crate)).
///
/// Options: `name = ".."`, `description = ".."`, `title = ".."`, `read_only`, `destructive`,
/// `idempotent`, `open_world` (each `= true` or `= false` too), `crate = path`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler(Kind::Tool, attr, item)
}

/// Makes an `async fn` an MCP prompt (see the [crate docs](crate)).
///
/// Options: `name = ".."`, `description = ".."`, `title = ".."`, `crate = path`.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler(Kind::Prompt, attr, item)
}

/// Registers the `#[tool]` and `#[prompt]` methods of an impl block together, on one shared
/// state (see the [crate docs](crate)).
///
/// Options: `crate = path`, and `local` for state and futures that are not `Send`.
#[proc_macro_attribute]
pub fn router(attr: TokenStream, item: TokenStream) -> TokenStream {
    let out = router::options(attr.into()).and_then(|options| {
        let block = syn::parse::<syn::ItemImpl>(item)?;
        router::expand(options, block)
    });
    out.unwrap_or_else(syn::Error::into_compile_error).into()
}

fn handler(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = match Options::parse(kind, attr.into()) {
        Ok(o) => o,
        Err(e) => {
            let e = e.into_compile_error();
            let item = proc_macro2::TokenStream::from(item);
            return quote!(#e #item).into();
        }
    };
    if options.in_router {
        // A method `#[router]` has read already.
        return item;
    }
    let mut function = match syn::parse::<syn::ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            // A method of an impl block (`ImplItemFn`) is reported by its receiver or its
            // place below; anything else is not a fn.
            match syn::parse::<syn::ImplItemFn>(item) {
                Ok(mut method) => {
                    let e = syn::Error::new_spanned(
                        &method.sig.ident,
                        format!(
                            "a {} method needs `#[router]` on its impl block",
                            kind.attr()
                        ),
                    )
                    .into_compile_error();
                    strip_param_attrs(&mut method.sig);
                    return quote!(#e #method).into();
                }
                Err(e) => {
                    return syn::Error::new(
                        e.span(),
                        format!("{} goes on an `async fn`", kind.attr()),
                    )
                    .into_compile_error()
                    .into();
                }
            }
        }
    };
    let krate = match &options.krate {
        Some(path) => Ok(path.to_token_stream()),
        None => manifest::service_path(),
    };
    let local = options.local.is_some();
    let read = Handler::read(kind, options, &function.attrs, &mut function.sig, false);
    let (handler, krate) = match (read, krate) {
        (Ok(h), Ok(k)) => (h, k),
        (Err(e), _) | (_, Err(e)) => {
            strip_param_attrs(&mut function.sig);
            let e = e.into_compile_error();
            return quote!(#e #function).into();
        }
    };
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let registration = handler.register(&krate, false, local);
    let (what, trait_name, method) = match (kind, local) {
        (Kind::Tool, false) => ("tool", quote!(FnTool), "tool_fn"),
        (Kind::Prompt, false) => ("prompt", quote!(FnPrompt), "prompt_fn"),
        (Kind::Tool, true) => ("tool", quote!(FnLocalTool), "tool_fn"),
        (Kind::Prompt, true) => ("prompt", quote!(FnLocalPrompt), "prompt_fn"),
    };
    let (builder, owner) = if local {
        (quote!(#krate::server::LocalHandlers), "LocalHandlers")
    } else {
        (quote!(#krate::ServerBuilder), "ServerBuilder")
    };
    let doc = format!(
        "The MCP {what} `{ident}`, for `{owner}::{method}::<{ident}>()` (the fn of this \
         name is the handler)."
    );
    quote! {
        #function

        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}

        impl #krate::server::#trait_name for #ident {
            fn register(builder: #builder) -> #builder {
                #registration
            }
        }
    }
    .into()
}

/// Removes the attributes of parameters (doc comments are not allowed there once the macro
/// is done).
fn strip_param_attrs(sig: &mut syn::Signature) {
    for input in sig.inputs.iter_mut() {
        match input {
            syn::FnArg::Typed(pt) => pt.attrs.retain(|a| {
                let p = a.path();
                !(p.is_ident("doc")
                    || p.is_ident("args")
                    || p.is_ident("context")
                    || p.is_ident("serde")
                    || p.is_ident("schemars"))
            }),
            syn::FnArg::Receiver(r) => r.attrs.clear(),
        }
    }
}
