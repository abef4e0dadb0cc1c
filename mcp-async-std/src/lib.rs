//! # mcp-async-std
//!
//! The async-std and smol driver of the MCP workspace. Both runtimes sit on `async-io` and
//! `futures-io`, so one adapter serves both: [`AsyncStdRuntime`] and [`SmolRuntime`] (features
//! `async-std` and `smol`, both on by default) implement [`Runtime`] and [`Driver`] (TCP),
//! [`StdioDriver`](mcp_service::driver::StdioDriver) (stdin/stdout) and
//! [`ProcessDriver`](mcp_service::driver::ProcessDriver) (child processes through
//! `async-process`). The protocol lives in `mcp-proto`, the typed layer and everything a driver
//! shares whatever its runtime in `mcp-service`; the functions below are `mcp_service::driver`'s.
//!
//! # Five-minute guide
//!
//! Add `mcp-async-std`, `serde` (feature `derive`) and `serde_json` to your dependencies (and
//! `smol` or `async-std` for `block_on`). A **server** is a [`Server`] built from tools,
//! resources and prompts, served on a transport; here one tool whose arguments deserialise
//! into a struct, and one resource, on stdio under smol:
//!
//! ```no_run
//! use mcp_async_std::service::schema::{CallToolResult, Resource, ResourceContents, Tool};
//! use mcp_async_std::service::server::schema_of;
//! use mcp_async_std::{Server, SmolRuntime};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! fn calculator() -> Server {
//!     let add = Tool::new(
//!         "add",
//!         schema_of(json!({
//!             "type": "object",
//!             "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!             "required": ["a", "b"]
//!         })),
//!     )
//!     .with_description("Adds two integers");
//!     Server::builder("calculator", "1.0")
//!         // An `Err` from a handler becomes an `isError` result or a JSON-RPC error
//!         // (see `ServerBuilder::tool`).
//!         .tool(add, |args: Add, _cx| async move {
//!             Ok(CallToolResult::text((args.a + args.b).to_string()))
//!         })
//!         .resource(Resource::new("calc://about", "about"), |uri, _cx| async move {
//!             Ok(vec![ResourceContents::text(uri, "integers only")])
//!         })
//!         .build()
//! }
//!
//! # #[cfg(all(feature = "smol", feature = "stdio"))]
//! fn main() -> Result<(), mcp_async_std::Error> {
//!     // Serves until stdin closes (`AsyncStdRuntime` and `async_std::task::block_on` on
//!     // async-std); `serve_tcp` and `serve_http` serve the same `Server` elsewhere.
//!     smol::block_on(mcp_async_std::serve_stdio(SmolRuntime::new(), calculator()))
//! }
//! # #[cfg(not(all(feature = "smol", feature = "stdio")))]
//! # fn main() {}
//! ```
//!
//! A **client** connects to a server (here: starts it as a child process and speaks to it
//! over its stdin/stdout) and calls it; the [`Client`] it gets has a method for every MCP
//! request:
//!
//! ```no_run
//! # #[cfg(all(feature = "smol", feature = "child"))]
//! # async fn run() -> Result<(), mcp_async_std::Error> {
//! use mcp_async_std::{ClientOptions, SmolRuntime};
//! use serde_json::json;
//!
//! let server = std::process::Command::new("calculator");
//! let client = mcp_async_std::spawn(SmolRuntime::new(), server, ClientOptions::default()).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}: {:?}", tool.name, tool.description);
//! }
//! let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//! println!("{:?}", sum.content);
//! // Closes its stdin, waits, then sends SIGTERM and SIGKILL.
//! let _status = client.shutdown_within(std::time::Duration::from_secs(2)).await;
//! # Ok(()) }
//! ```
//!
//! Both in one process, as in a test of your server: [`memory_pair`] connects a client to a
//! server over an in-memory pipe.
//!
//! ```
//! # use mcp_async_std::service::schema::{object_schema, CallToolResult, Resource, ResourceContents, Tool};
//! # use mcp_async_std::Server;
//! # use serde_json::json;
//! # #[derive(serde::Deserialize)]
//! # struct Add { a: i64, b: i64 }
//! # fn calculator() -> Server {
//! #     Server::builder("calculator", "1.0")
//! #         .tool(Tool::new("add", object_schema()), |args: Add, _cx| async move {
//! #             Ok(CallToolResult::text((args.a + args.b).to_string()))
//! #         })
//! #         .resource(Resource::new("calc://about", "about"), |uri, _cx| async move {
//! #             Ok(vec![ResourceContents::text(uri, "integers only")])
//! #         })
//! #         .build()
//! # }
//! # #[cfg(feature = "smol")]
//! # fn main() -> Result<(), mcp_async_std::Error> {
//! use mcp_async_std::service::schema::Content;
//! use mcp_async_std::{ClientOptions, SmolRuntime};
//!
//! smol::block_on(async {
//!     let rt = SmolRuntime::new();
//!     let client = mcp_async_std::memory_pair(rt, calculator(), ClientOptions::default()).await?;
//!     let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//!     assert_eq!(sum.content, vec![Content::text("5")]);
//!     let about = client.read_resource("calc://about").await?;
//!     assert_eq!(about.contents, vec![ResourceContents::text("calc://about", "integers only")]);
//!     Ok(())
//! })
//! # }
//! # #[cfg(not(feature = "smol"))]
//! # fn main() {}
//! ```
//!
//! ## Where to go next
//!
//! - **HTTP.** With the feature `http-server`, [`serve_http`] serves the same `Server` over
//!   Streamable HTTP (at `/mcp`) on a `std::net::TcpListener`; with `http-client`,
//!   [`connect_http`] is the client. The repository's `smol-server` example serves one:
//!
//!   ```no_run
//!   # #[cfg(all(feature = "smol", feature = "http-server"))]
//!   # fn run(server: mcp_async_std::Server) -> Result<(), Box<dyn std::error::Error>> {
//!   use mcp_async_std::proto::http::EndpointConfig;
//!   use mcp_async_std::SmolRuntime;
//!
//!   let listener = std::net::TcpListener::bind("127.0.0.1:8080")?;
//!   let config = EndpointConfig::new(server.config().clone());
//!   smol::block_on(mcp_async_std::serve_http(SmolRuntime::new(), server, listener, config))?;
//!   # Ok(()) }
//!   ```
//! - **Schemas from types.** With the feature `schemars`, `ServerBuilder::typed_tool` derives
//!   a tool's `inputSchema` from its handler's argument type and its `outputSchema` from a
//!   `Json<T>` result, instead of the hand-written `schema_of` above (the README's "Schemas
//!   from types, and a test client").
//! - **Tests of your server.** [`Server::test_client`] connects a client in memory in one
//!   line (`server.test_client(SmolRuntime::new()).await?`), as [`memory_pair`] does above;
//!   `mcp_service::sim::Sim` runs the same tests in virtual time.
//! - **Errors.** What a handler's `Err` becomes (an `isError` tool result or a JSON-RPC
//!   error) is in `ServerBuilder::tool`; what a client's calls return, in
//!   [`mcp_service::client`](mcp_service::client#errors-of-every-request) and each method's
//!   `# Errors`.
//!
//! # Transports
//!
//! Every function that needs a runtime takes it as its first argument, as in `mcp-tokio` (same
//! names, same signatures):
//!
//! - servers: [`serve_stdio`] (the process's own stdin/stdout), [`serve_stream`] (any
//!   `futures-io` byte stream: async-std or smol sockets, `async_io::Async<UnixStream>`),
//!   [`serve_tcp`] / [`serve_tcp_with`] (an accept loop, its caps in [`ConnectionLimits`]), [`serve_http`] (Streamable HTTP on hyper);
//! - clients: [`connect_stream`], [`memory_pair`] (an in-process client/server pair) and
//!   [`spawn`] / [`spawn_with`] (a child process spoken to over its stdin/stdout, see
//!   [`ChildClient`]); over HTTP: [`connect_http`] (Streamable HTTP), [`connect_sse`] (the
//!   legacy HTTP+SSE transport) and [`connect_http_auto`] (the backwards-compatible probe);
//! - WebSocket (outside the MCP specification, see `mcp_service::ws`): [`serve_ws`] /
//!   [`serve_ws_with`] and [`connect_ws`].
//!
//! The listeners are `std::net::TcpListener`s (bind them with `std::net::TcpListener::bind`),
//! which work under either runtime.
//!
//! async-std is no longer maintained upstream; its support here is a thin runtime adapter, and
//! new code may prefer smol.
//!
//! # Features
//!
//! | feature       | default | what it adds |
//! |---------------|---------|--------------|
//! | `async-std`   | yes     | `AsyncStdRuntime` |
//! | `smol`        | yes     | `SmolRuntime` |
//! | `stdio`       | yes     | `serve_stdio`, `stdio_stream` |
//! | `child`       | yes     | `spawn`, `spawn_with`, `ChildClient` (servers in child processes) |
//! | `http-server` | no      | `serve_http`, `serve_http_with` (`HttpServerOptions`: time limits, connection caps) (Streamable HTTP on hyper) |
//! | `http-client` | no      | `connect_http`, `connect_sse`, `connect_http_auto`, `TcpConnector`; hyper's client, `url` |
//! | `oauth`       | no      | OAuth 2.1 for the HTTP client (`HttpClientOptions::oauth`); implies `http-client` |
//! | `oauth-jwt`   | no      | `private_key_jwt` and DPoP-bound tokens for the HTTP client's OAuth; implies `oauth` |
//! | `ws`          | no      | `serve_ws`, `serve_ws_with`, `connect_ws`, `WsConfig`; tungstenite, hyper |
//! | `resource-server` | no  | the server as an OAuth resource server (`ServerBuilder::resource_server`, `service::resource_server`: bearer tokens by JWT/JWKS or introspection, scopes, challenges, Protected Resource Metadata); implies `http-server` and `http-client` |
//! | `tls`         | no      | TLS on rustls (`ring`): `https://` and `wss://` clients (`HttpClientOptions::tls`, `connect_ws_tls`), `serve_http_tls`, `serve_ws_tls`, `TlsClientConfig`, `TlsServerConfig` (`mcp-service/tls`) |
//! | `http2`       | no      | HTTP/2 on the HTTP server (ALPN `h2` over TLS, prior-knowledge h2c, beside HTTP/1.1) and client (ALPN `h2`, `HttpClientOptions::http2_prior_knowledge`) (`mcp-service/http2`) |
//! | `metrics`     | no      | telemetry through the `metrics` facade (`mcp-service/metrics`) |
//! | `schemars`    | no      | tool schemas derived from the argument and result types (`ServerBuilder::typed_tool`; `mcp-service/schemars`) |
//! | `macros`      | no      | `#[tool]`, `#[prompt]`, `#[router]` (the `mcp-macros` crate): tools and prompts from async fns and impl blocks; implies `schemars` |
//!
//! [`serve_stream`], [`serve_tcp`], [`connect_stream`] and [`memory_pair`] are always there.
//! The defaults make a stdio server or a child-process client without any HTTP, WebSocket or
//! OAuth crate.
#![deny(missing_docs)]
// The overview above links to every transport; a build without some of them documents it
// without those links (CI checks every link in the all-features workspace build).
#![cfg_attr(
    not(all(
        feature = "async-std",
        feature = "smol",
        feature = "stdio",
        feature = "child",
        feature = "http-server",
        feature = "http-client",
        feature = "ws"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

// The adapters serve the runtimes: without one of them there is nothing to adapt.
#[cfg(all(feature = "child", any(feature = "async-std", feature = "smol")))]
mod process;
#[cfg(any(feature = "async-std", feature = "smol"))]
mod runtime;
#[cfg(all(
    any(feature = "stdio", feature = "child"),
    any(feature = "async-std", feature = "smol")
))]
mod stdio;

pub use mcp_proto as proto;
pub use mcp_service as service;
#[cfg(all(feature = "http-server", feature = "tls"))]
pub use mcp_service::driver::serve_http_tls;
#[cfg(feature = "child")]
pub use mcp_service::driver::{ChildClient, StderrCapture, StderrMode, spawn, spawn_with};
pub use mcp_service::driver::{
    ConnectionLimits, Driver, connect_stream, memory_pair, serve_stream, serve_tcp, serve_tcp_with,
};
#[cfg(feature = "http-client")]
pub use mcp_service::driver::{TcpConnector, connect_http, connect_http_auto, connect_sse};
#[cfg(feature = "ws")]
pub use mcp_service::driver::{connect_ws, serve_ws, serve_ws_with};
#[cfg(all(feature = "ws", feature = "tls"))]
pub use mcp_service::driver::{connect_ws_tls, serve_ws_tls};
#[cfg(feature = "http-server")]
pub use mcp_service::driver::{serve_http, serve_http_with};
#[cfg(feature = "stdio")]
pub use mcp_service::driver::{serve_stdio, stdio_stream};
#[cfg(feature = "http-client")]
pub use mcp_service::http_client::{HttpClientOptions, HttpTransport};
#[cfg(feature = "http-server")]
pub use mcp_service::hyper_server::{BodyLimits, HttpServerOptions};
#[cfg(feature = "tls")]
pub use mcp_service::tls::{TlsClientConfig, TlsServerConfig};
#[cfg(feature = "ws")]
pub use mcp_service::ws::WsConfig;
pub use mcp_service::{
    BoxFuture, ByteStream, CancellationToken, Client, ClientOptions, Clock, Error, ErrorKind,
    IncomingRequest, NoService, Peer, PeerInfo, Progress, RequestContext, Runtime, Server,
    ServerBuilder, Service, Telemetry, TelemetryEvent,
};
/// `#[tool]`, `#[prompt]` and `#[router]` (feature `macros`): see the `mcp-macros` crate.
#[cfg(feature = "macros")]
pub use mcp_service::{prompt, router, tool};
#[cfg(all(feature = "child", any(feature = "async-std", feature = "smol")))]
pub use process::AsyncChild;
#[cfg(feature = "async-std")]
pub use runtime::AsyncStdRuntime;
#[cfg(feature = "smol")]
pub use runtime::SmolRuntime;
