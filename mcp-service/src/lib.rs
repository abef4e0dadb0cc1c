//! # mcp-service
//!
//! The runtime-neutral typed layer of the MCP workspace: a connection engine that drives one
//! `mcp_proto::session::Session` over any byte stream, the [`Peer`] handle for outbound calls,
//! the [`Service`] trait for inbound ones, and the typed [`Server`] and [`Client`] built on
//! them.
//!
//! It contains no runtime types: drivers (`mcp-tokio`, `mcp-async-std`) implement
//! [`Runtime`] and pass `futures-io` byte streams.
//!
//! Applications usually depend on a driver instead, which re-exports this crate as
//! `service` with functions for each transport on its runtime: `mcp-tokio` or
//! `mcp-async-std` (their crate docs start with the same guide on a real transport).
//!
//! # Five-minute guide
//!
//! A **server** is a [`Server`], built with [`Server::builder`] from tools (typed arguments,
//! a JSON Schema for clients), resources, resource templates and prompts. A **client** is a
//! [`Client`] connected to one, with a method for every MCP request. Both run on any
//! [`Runtime`]; here on [`sim::Sim`], this crate's deterministic one, and connected in memory
//! with [`driver::memory_pair`] (a driver's `serve_stdio`, `serve_tcp`, `serve_http`, `spawn`
//! or `connect_http` serve and reach the same `Server` over real transports):
//!
//! ```
//! use mcp_service::schema::{CallToolResult, Content, Resource, ResourceContents, Tool};
//! use mcp_service::server::schema_of;
//! use mcp_service::sim::Sim;
//! use mcp_service::{ClientOptions, Server};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # fn main() -> Result<(), mcp_service::Error> {
//! let add = Tool::new(
//!     "add",
//!     schema_of(json!({
//!         "type": "object",
//!         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!         "required": ["a", "b"]
//!     })),
//! )
//! .with_description("Adds two integers");
//! let server = Server::builder("calculator", "1.0")
//!     // An `Err` from a handler becomes an `isError` result or a JSON-RPC error (see
//!     // `ServerBuilder::tool`).
//!     .tool(add, |args: Add, _cx| async move {
//!         Ok(CallToolResult::text((args.a + args.b).to_string()))
//!     })
//!     .resource(Resource::new("calc://about", "about"), |uri, _cx| async move {
//!         Ok(vec![ResourceContents::text(uri, "integers only")])
//!     })
//!     .build();
//!
//! let sim = Sim::new();
//! let rt = sim.runtime();
//! let (tools, sum) = sim
//!     .block_on(async move {
//!         let options = ClientOptions::default();
//!         let client = mcp_service::driver::memory_pair(rt, server, options).await?;
//!         let tools = client.list_tools().await?;
//!         let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//!         Ok::<_, mcp_service::Error>((tools, sum))
//!     })
//!     .expect("nothing left waiting")?;
//! assert_eq!(tools[0].description.as_deref(), Some("Adds two integers"));
//! assert_eq!(sum.content, vec![Content::text("5")]);
//! # Ok(()) }
//! ```
//!
//! Every client method that can fail says how in its `# Errors`; what all requests share is
//! in [`client`](client#errors-of-every-request). What a server handler's `Err` becomes (an
//! `isError` tool result or a JSON-RPC error) is in [`ServerBuilder::tool`].
//!
//! # Features
//!
//! The default build is the byte-stream connection engine, [`Server`], [`Client`], [`Peer`],
//! the in-memory pipe ([`memory`]) and [`telemetry`]: no HTTP, WebSocket or OAuth crate.
//!
//! | feature       | default | what it adds |
//! |---------------|---------|--------------|
//! | `http-server` | no      | `http_engine`, `hyper_server` (Streamable HTTP and legacy HTTP+SSE on hyper), `hyper_io`, `Server::http_service` |
//! | `http-client` | no      | `http_client` (Streamable HTTP, legacy SSE and the probe on hyper's client), `hyper_io` |
//! | `oauth`       | no      | `oauth` (MCP Authorization, OAuth 2.1 with PKCE; client credentials, JWT bearer / workload identity, enterprise-managed ID-JAG; file token store) and `HttpClientOptions::oauth`; implies `http-client` |
//! | `oauth-jwt`   | no      | `private_key_jwt` client authentication and DPoP-bound tokens (`jsonwebtoken`, RustCrypto); implies `oauth` |
//! | `ws`          | no      | `ws` (MCP over WebSocket on tungstenite, served on hyper), `hyper_io` |
//! | `resource-server` | no  | `resource_server` (the server as an OAuth resource server: bearer tokens checked by JWT/JWKS or introspection, scopes, challenges, Protected Resource Metadata), `ServerBuilder::resource_server`; implies `http-server` and `http-client` |
//! | `tls`         | no      | `tls` (rustls; the application installs the crypto provider): `https://`/`wss://` clients (`HttpClientOptions::tls`, `driver::connect_ws_tls`), `driver::serve_http_tls`, `driver::serve_ws_tls` |
//! | `http2`       | no      | HTTP/2 on the HTTP server (ALPN `h2`, prior-knowledge h2c, beside HTTP/1.1; `HttpServerOptions::http2`) and client (ALPN `h2`, `HttpClientOptions::http2_prior_knowledge`) |
//! | `metrics`     | no      | telemetry through the `metrics` facade |
//! | `skills`      | no      | `skills` (the skills extension, SEP-2640: `ServerBuilder::skill`, `skills_dir`, `Client::list_skills`, `load_skill`, …; YAML frontmatter through `serde_norway`) |
//! | `schemars`    | no      | `ServerBuilder::typed_tool`, `typed_tool_with`, `Server::add_typed_tool`, `server::ToolOutput`: tool schemas derived from the handler's types (JSON Schema 2020-12); re-exports `schemars` |
//! | `macros`      | no      | `#[tool]`, `#[prompt]`, `#[router]` (the `mcp-macros` crate, re-exported): tools and prompts from async fns and impl blocks, registered with `ServerBuilder::tool_fn`, `prompt_fn`, `router`; implies `schemars` |
//! | `stdio`       | no      | `driver::serve_stdio`, `driver::StdioDriver` (the process's stdin/stdout) |
//! | `child`       | no      | `driver::spawn`, `driver::ChildClient`, `driver::ProcessDriver` (servers in child processes) |
//!
//! [`driver`] holds what the drivers share whatever their runtime: the [`driver::Driver`] trait
//! (a [`Runtime`] with TCP) and the accept loops, in-memory pairs, stdio and child processes
//! built on it.
#![deny(missing_docs)]

pub mod cancel;
#[cfg(feature = "http-server")]
pub mod cluster;
pub mod peer;
pub mod runtime;
pub mod service;

pub use cancel::CancellationToken;
pub use mcp_proto::schema;
pub use mcp_proto::{Error, ErrorKind};
pub use peer::{DEFAULT_OUTPUT_BUDGET, Peer, PeerInfo, Progress, Writable};
pub use runtime::{BoxFuture, Clock, Runtime};
pub use service::{IncomingRequest, NoService, RequestContext, Service};
pub mod connection;
pub mod driver;
mod engine;
#[cfg(feature = "http-client")]
pub mod http_client;
#[cfg(feature = "http-server")]
pub mod http_engine;
#[cfg(any(feature = "http-server", feature = "http-client", feature = "ws"))]
pub mod hyper_io;
#[cfg(feature = "http-server")]
pub mod hyper_server;
pub mod memory;
pub mod notifications;
mod raw;
pub mod sim;
pub mod telemetry;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(feature = "ws")]
pub mod ws;

pub use connection::{ByteStream, Connection, MessageTransport, Transport, connection};
pub use notifications::Notifications;
pub use telemetry::{Telemetry, TelemetryEvent};
pub mod cache;
pub mod client;
pub mod elicitation;
pub mod mrtr;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(feature = "resource-server")]
pub mod resource_server;
pub mod server;
#[cfg(feature = "skills")]
pub mod skills;
pub mod tasks;

pub use client::{Client, ClientOptions};
#[cfg(feature = "http-client")]
pub use http_client::{Connector, HttpClientOptions, HttpTransport, TransportFinished};
/// `#[tool]`, `#[prompt]` and `#[router]` (feature `macros`): see the `mcp-macros` crate.
#[cfg(feature = "macros")]
pub use mcp_macros::{prompt, router, tool};
/// The `schemars` crate (feature `schemars`), for `#[derive(JsonSchema)]` on tool argument and
/// result types without a dependency of your own (`#[schemars(crate = "mcp_service::schemars")]`).
#[cfg(feature = "schemars")]
pub use schemars;
pub use server::{Server, ServerBuilder};
