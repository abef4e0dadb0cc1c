//! # mcp-proto
//!
//! A sans-IO implementation of the [Model Context Protocol](https://modelcontextprotocol.io):
//! a pure, deterministic state machine. Bytes, parsed messages, application commands and the
//! current time go in; framed bytes to send, the next deadline and events come out. It never
//! reads a clock, spawns, sleeps or touches a socket, so it runs unchanged under any async
//! runtime, in WASM and on embedded targets (`#![no_std]` + `alloc`; `std` is a default feature).
//!
//! Most applications use it through `mcp-service` and a driver (`mcp-tokio`, `mcp-async-std`),
//! which run the sessions over real transports and add typed servers and clients. Use this
//! crate directly to embed MCP in your own event loop, another runtime, WASM or firmware.
//!
//! # Five-minute guide
//!
//! A [`Session`](session::Session) is one side of one connection. Drive it with one rule,
//! **mutate, then drain until idle**: after every input (bytes read, the time reaching its
//! [`poll_timeout`](session::Session::poll_timeout)) or command (send a request, answer one),
//! write out what [`poll_transmit`](session::Session::poll_transmit) gives and handle what
//! [`poll_event`](session::Session::poll_event) gives. Here a **client** and a **server**
//! are wired to each other in memory, where a driver would read and write a socket or stdio:
//!
//! ```
//! use mcp_proto::session::{Config, Event, RequestOptions, Session};
//! use mcp_proto::Instant;
//! use serde_json::value::RawValue;
//!
//! fn raw(json: &str) -> Box<RawValue> {
//!     RawValue::from_string(json.to_owned()).unwrap()
//! }
//!
//! /// Moves what `from` has to send into `to`, as a transport would.
//! fn pump(from: &mut Session, to: &mut Session, now: Instant) {
//!     let mut bytes = Vec::new();
//!     while from.poll_transmit(&mut bytes).is_some() {}
//!     to.handle_bytes(now, &bytes);
//! }
//!
//! let now = Instant::ZERO;
//! let tools = raw(r#"{"tools":{}}"#);
//! let mut server = Session::server(Config::new("calculator", "1.0").capabilities(tools));
//! let mut client = Session::client(Config::new("my-client", "1.0"));
//!
//! // The client starts the handshake; each side sees `Event::Ready` when it is done.
//! client.initialize(now).unwrap();
//! for _ in 0..2 {
//!     pump(&mut client, &mut server, now);
//!     pump(&mut server, &mut client, now);
//! }
//! assert!(matches!(client.poll_event(), Some(Event::Ready { .. })));
//! assert!(matches!(server.poll_event(), Some(Event::Ready { .. })));
//!
//! // The client sends a request; the server application answers it.
//! let id = client.send_request(now, "tools/list", None, RequestOptions::default()).unwrap();
//! pump(&mut client, &mut server, now);
//! let Some(Event::Request(request)) = server.poll_event() else { panic!("no request") };
//! assert_eq!(request.method, "tools/list");
//! server.respond(&request.id, raw(r#"{"tools":[]}"#)).unwrap();
//! pump(&mut server, &mut client, now);
//!
//! // Exactly one outcome per request: its result, an error, a timeout or the close.
//! let Some(Event::Response { id: answered, result }) = client.poll_event() else {
//!     panic!("no response")
//! };
//! assert_eq!(answered, id);
//! assert_eq!(result.unwrap().get(), r#"{"tools":[]}"#);
//! ```
//!
//! Layout:
//! - [`codec`] — framing: newline-delimited JSON and Server-Sent Events, each usable alone.
//! - [`jsonrpc`] — the JSON-RPC 2.0 envelope, parsed in one pass, `params`/`result` kept raw.
//! - [`schema`] — typed wire types of every published MCP version, organised by area.
//! - [`method`] — the table of methods by version, direction and capability.
//! - [`session`] — the client and server [`Session`](session::Session) state machines.
//! - [`error`] — the one error type, with a stable [`ErrorKind`].
//! - `http` — the Streamable HTTP endpoint policy, without IO (feature `http`).
//!
//! Features:
//!
//! | feature | default | what it adds |
//! |---------|---------|--------------|
//! | `std`   | yes     | `std` error and time conversions; without it the crate is `no_std` + `alloc` |
//! | `http`  | yes     | the `http` module (Streamable HTTP endpoint policy); implies `std`, pulls the `http` crate |
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

extern crate alloc;

pub mod codec;
pub mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod id;
pub mod jsonrpc;
pub mod method;
pub mod schema;
pub mod session;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
pub mod version;

pub use error::{Error, ErrorKind, ErrorObject};
pub use id::{ProgressToken, RequestId};
pub use time::{Duration, Instant};
pub use version::ProtocolVersion;
