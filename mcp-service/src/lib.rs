//! # mcp-service
//!
//! The runtime-neutral typed layer of the MCP workspace: a connection engine that drives one
//! `mcp_proto::session::Session` over any byte stream, the [`Peer`] handle for outbound calls,
//! the [`Service`] trait for inbound ones, and the typed [`Server`] and [`Client`] built on
//! them.
//!
//! It contains no runtime types: drivers (`mcp-tokio`, `mcp-async-std`) implement
//! [`Runtime`] and pass `futures-io` byte streams.
#![deny(missing_docs)]

pub mod cancel;
pub mod peer;
pub mod runtime;
pub mod service;

pub use cancel::CancellationToken;
pub use mcp_proto::schema;
pub use mcp_proto::{Error, ErrorKind};
pub use peer::{Peer, PeerInfo, Progress};
pub use runtime::{BoxFuture, Clock, Runtime};
pub use service::{IncomingRequest, NoService, RequestContext, Service};
pub mod connection;
mod engine;
pub mod http_client;
pub mod http_engine;
pub mod hyper_io;
pub mod hyper_server;
pub mod memory;
mod raw;
pub mod sim;
pub mod telemetry;
#[cfg(feature = "ws")]
pub mod ws;

pub use connection::{ByteStream, Connection, connection};
pub use telemetry::{Telemetry, TelemetryEvent};
pub mod client;
pub mod elicitation;
pub mod oauth;
pub mod server;

pub use client::{Client, ClientOptions};
pub use http_client::{Connector, HttpClientOptions, HttpTransport, TransportFinished};
pub use server::{Server, ServerBuilder};
