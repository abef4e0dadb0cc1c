//! # mcp-tokio
//!
//! The tokio driver of the MCP workspace. The protocol lives in `mcp-proto`, the typed layer
//! and everything a driver shares whatever its runtime in `mcp-service`; this crate is the
//! tokio adapter: [`TokioRuntime`] implements [`Runtime`] (clock, timers, spawning) and
//! [`Driver`] (TCP), [`StdioDriver`](mcp_service::driver::StdioDriver) (stdin/stdout) and
//! [`ProcessDriver`](mcp_service::driver::ProcessDriver) (child processes), and the functions
//! below are `mcp_service::driver`'s on it.
//!
//! # Five-minute guide
//!
//! Add `mcp-tokio`, `tokio` (features `macros` and `rt-multi-thread` for `#[tokio::main]`),
//! `serde` (feature `derive`) and `serde_json` to your dependencies. A **server** is a
//! [`Server`] built from tools, resources and prompts, served on a transport; here one tool
//! whose arguments deserialise into a struct, and one resource, on stdio:
//!
//! ```no_run
//! use mcp_tokio::service::schema::{CallToolResult, Resource, ResourceContents, Tool};
//! use mcp_tokio::service::server::schema_of;
//! use mcp_tokio::{Server, TokioRuntime};
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
//! # #[cfg(feature = "stdio")]
//! #[tokio::main]
//! async fn main() -> Result<(), mcp_tokio::Error> {
//!     // Serves until stdin closes; `serve_tcp`, `serve_http`, `McpService` (axum) serve the
//!     // same `Server` elsewhere.
//!     mcp_tokio::serve_stdio(TokioRuntime::current(), calculator()).await
//! }
//! # #[cfg(not(feature = "stdio"))]
//! # fn main() {}
//! ```
//!
//! A **client** connects to a server (here: starts it as a child process and speaks to it
//! over its stdin/stdout) and calls it; the [`Client`] it gets has a method for every MCP
//! request:
//!
//! ```no_run
//! # #[cfg(feature = "child")]
//! # async fn run() -> Result<(), mcp_tokio::Error> {
//! use mcp_tokio::{ClientOptions, TokioRuntime};
//! use serde_json::json;
//!
//! let server = std::process::Command::new("calculator");
//! let client = mcp_tokio::spawn(TokioRuntime::current(), server, ClientOptions::default()).await?;
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
//! # use mcp_tokio::service::schema::{object_schema, CallToolResult, Resource, ResourceContents, Tool};
//! # use mcp_tokio::Server;
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
//! use mcp_tokio::service::schema::Content;
//! use mcp_tokio::{ClientOptions, TokioRuntime};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), mcp_tokio::Error> {
//!     let rt = TokioRuntime::current();
//!     let client = mcp_tokio::memory_pair(rt, calculator(), ClientOptions::default()).await?;
//!     let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//!     assert_eq!(sum.content, vec![Content::text("5")]);
//!     let about = client.read_resource("calc://about").await?;
//!     assert_eq!(about.contents, vec![ResourceContents::text("calc://about", "integers only")]);
//!     Ok(())
//! }
//! ```
//!
//! ## Where to go next
//!
//! - **HTTP.** With the feature `http-server`, [`serve_http`] serves the same `Server` over
//!   Streamable HTTP (at `/mcp`), and [`McpService`] mounts it in an axum or tower
//!   application (behind its own middleware); with `http-client`, [`connect_http`] is the
//!   client. The README's "Remote" section has both, and the `axum-server` example an
//!   endpoint behind an application's own authentication:
//!
//!   ```no_run
//!   # #[cfg(feature = "http-server")]
//!   # async fn run(server: mcp_tokio::Server) -> Result<(), Box<dyn std::error::Error>> {
//!   use mcp_tokio::proto::http::EndpointConfig;
//!
//!   let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//!   let config = EndpointConfig::new(server.config().clone());
//!   mcp_tokio::serve_http(mcp_tokio::TokioRuntime::current(), server, listener, config).await?;
//!   # Ok(()) }
//!   ```
//! - **Schemas from types.** With the feature `schemars`, `ServerBuilder::typed_tool` derives
//!   a tool's `inputSchema` from its handler's argument type and its `outputSchema` from a
//!   `Json<T>` result (the README's "Schemas from types, and a test client", compiled as a
//!   doc test of this crate), instead of the hand-written `schema_of` above.
//! - **Tests of your server.** [`Server::test_client`] connects a client in memory in one
//!   line (`server.test_client(TokioRuntime::current()).await?` in a `#[tokio::test]`), as
//!   [`memory_pair`] does above; `mcp_service::sim::Sim` runs the same tests in virtual time.
//! - **Errors.** What a handler's `Err` becomes (an `isError` tool result or a JSON-RPC
//!   error) is in `ServerBuilder::tool`; what a client's calls return, in
//!   [`mcp_service::client`](mcp_service::client#errors-of-every-request) and each method's
//!   `# Errors`.
//! - **Examples to copy**, in the repository's `examples/`: `notes-server` (typed tools, a
//!   resource template, a prompt), `notes-client`, `axum-server`, and `everything`, a server
//!   with every feature of the protocol.
//!
//! # Transports
//!
//! Every function that needs a runtime takes it as its first argument, as in `mcp-async-std`
//! (same names, same signatures):
//!
//! - servers: [`serve_stdio`] (the process's own stdin/stdout), [`serve_stream`] (any tokio
//!   byte stream: TCP, Unix sockets, pipes), [`serve_tcp`] / [`serve_tcp_with`] (an accept loop, its caps in [`ConnectionLimits`]), [`serve_http`]
//!   (Streamable HTTP on hyper) and [`McpService`] (the HTTP endpoint as a tower service, to
//!   mount in axum);
//! - clients: [`connect_stream`], [`memory_pair`] (an in-process client/server pair) and
//!   [`spawn`] / [`spawn_with`] (a child process spoken to over its stdin/stdout, see
//!   [`ChildClient`]); over HTTP: [`connect_http`] (Streamable HTTP), [`connect_sse`] (the
//!   legacy HTTP+SSE transport) and [`connect_http_auto`] (the backwards-compatible probe);
//! - WebSocket (outside the MCP specification, see `mcp_service::ws`): [`serve_ws`] /
//!   [`serve_ws_with`] and [`connect_ws`].
//!
//! tokio reads a terminal or a file on stdin on a blocking thread: if [`serve_stdio`] returns
//! before EOF (a write error), that thread stays blocked in `read`, and dropping the runtime
//! waits for it — end such a process with `std::process::exit` or use
//! `Runtime::shutdown_timeout`. (Pipes and sockets are read on the reactor.)
//!
//! # Features
//!
//! | feature       | default | what it adds |
//! |---------------|---------|--------------|
//! | `stdio`       | yes     | `serve_stdio`, `stdio_stream` |
//! | `child`       | yes     | `spawn`, `spawn_with`, `ChildClient` (servers in child processes) |
//! | `http-server` | no      | `serve_http`, `serve_http_with` (`HttpServerOptions`: time limits, connection caps), the `http` module with `McpService` (tower/axum); hyper |
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
        feature = "stdio",
        feature = "child",
        feature = "http-server",
        feature = "http-client",
        feature = "ws"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "http-server")]
pub mod http;
#[cfg(any(feature = "http-server", feature = "http-client", feature = "ws"))]
mod hyper_io;
#[cfg(feature = "child")]
mod process;
mod runtime;
#[cfg(feature = "stdio")]
mod stdio;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::compat::TokioAsyncReadCompatExt;

#[cfg(feature = "http-server")]
pub use http::McpService;
pub use mcp_proto as proto;
pub use mcp_service as service;
#[cfg(all(feature = "http-server", feature = "tls"))]
pub use mcp_service::driver::serve_http_tls;
#[cfg(feature = "child")]
pub use mcp_service::driver::{ChildClient, StderrCapture, StderrMode, spawn, spawn_with};
pub use mcp_service::driver::{ConnectionLimits, Driver, memory_pair, serve_tcp, serve_tcp_with};
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
#[cfg(feature = "child")]
pub use process::TokioChild;
pub use runtime::TokioRuntime;

/// The README's code, compiled as doc tests.
#[cfg(all(
    doctest,
    feature = "stdio",
    feature = "child",
    feature = "http-server",
    feature = "http-client",
    feature = "ws",
    feature = "macros"
))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Serves `server` on `rt` over one tokio byte stream (a TCP or Unix socket, a pipe, a duplex)
/// until the connection closes.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_tokio::Error> {
/// use mcp_tokio::{ClientOptions, Server, TokioRuntime};
///
/// let server = Server::builder("piped", "1.0").build();
/// let (client_end, server_end) = tokio::io::duplex(64 * 1024);
/// let rt = TokioRuntime::current();
/// let serving = tokio::spawn({
///     let rt = rt.clone();
///     async move { mcp_tokio::serve_stream(rt, &server, server_end).await }
/// });
/// let client = mcp_tokio::connect_stream(rt, client_end, ClientOptions::default()).await?;
/// client.ping().await?;
/// client.shutdown().await;
/// assert_eq!(serving.await.expect("the server task"), Ok(()), "the client hung up: a clean end");
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`ErrorKind::TransportError`] (local) when reading, writing or flushing the stream
/// failed; the peer closing its end is the normal end, `Ok(())`.
pub async fn serve_stream<S>(rt: TokioRuntime, server: &Server, stream: S) -> Result<(), Error>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    mcp_service::driver::serve_stream(rt, server, compat(stream)).await
}

/// Connects a client over one tokio byte stream (a TCP or Unix socket, a pipe, a duplex): the
/// connection task is spawned on `rt` and the client is returned once the handshake completed.
///
/// # Errors
/// Those of [`Client::connect`].
pub async fn connect_stream<S>(
    rt: TokioRuntime,
    stream: S,
    options: ClientOptions,
) -> Result<Client, Error>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    mcp_service::driver::connect_stream(rt, compat(stream), options).await
}

/// A tokio stream seen through `futures-io` (one `Compat` serves both directions).
fn compat<S: AsyncRead + AsyncWrite>(stream: S) -> tokio_util::compat::Compat<S> {
    stream.compat()
}
