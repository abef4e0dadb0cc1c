//! # mcp-proto
//!
//! A sans-IO implementation of the [Model Context Protocol](https://modelcontextprotocol.io):
//! a pure, deterministic state machine. Bytes, parsed messages, application commands and the
//! current time go in; framed bytes to send, the next deadline and events come out. It never
//! reads a clock, spawns, sleeps or touches a socket, so it runs unchanged under any async
//! runtime, in WASM and on embedded targets (`#![no_std]` + `alloc`; `std` is a default feature).
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
