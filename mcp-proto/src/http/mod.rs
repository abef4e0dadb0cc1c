//! Streamable HTTP (and the legacy HTTP+SSE transport) without IO (feature `http`): the
//! [`Endpoint`] that turns HTTP requests into session input and session output into HTTP
//! replies and SSE streams.
//!
//! This module owns the policy of the MCP Streamable HTTP transport in its legacy form
//! (2025-03-26, 2025-06-18, 2025-11-25): which status for which request, the `MCP-Session-Id`
//! and `MCP-Protocol-Version` headers, JSON versus SSE replies, which stream each server
//! message travels on, SSE event ids, resumption after `Last-Event-ID`, `Host`/`Origin`
//! checks, body limits and session expiry. It never touches a socket, a clock or a random
//! number generator: a driver (hyper, …) moves bytes, passes the time and a random value per
//! request, and pulls reply bodies.
//!
//! ```
//! use mcp_proto::http::{Body, Endpoint, EndpointConfig};
//! use mcp_proto::session::Config;
//! use mcp_proto::Instant;
//!
//! let mut ep = Endpoint::new(EndpointConfig::new(Config::new("demo", "1.0")));
//! let (parts, ()) = http::Request::post("/mcp")
//!     .header("host", "localhost:8080")
//!     .header("accept", "application/json, text/event-stream")
//!     .header("content-type", "application/json")
//!     .body(())
//!     .unwrap()
//!     .into_parts();
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{
//!     "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
//! let reply = ep.handle_request(Instant::ZERO, &parts, body, Some(0x1234_5678_9abc_def0_1234_5678_9abc_def0));
//! assert_eq!(reply.status(), 200);
//! assert_eq!(reply.headers()["mcp-session-id"], "123456789abcdef0123456789abcdef0");
//! assert_eq!(reply.headers()["content-type"], "text/event-stream");
//! let Body::Full(sse) = reply.body() else { unreachable!() };
//! assert!(sse.starts_with(b"id: 1-0\nretry: 1000\ndata:\n\n")); // the priming event
//! ```
//!
//! Decisions worth knowing:
//! - **Streams.** Each POST holding requests gets its own stream; server→client requests and
//!   notifications tied to one of its requests ([`Transmit::related`](crate::session::Transmit))
//!   travel on it, and it ends after the last response. Everything else goes to the standalone
//!   GET stream (at most one per session; a second GET gets 409), or, when none was ever
//!   opened, is dropped (counted in [`Stats::messages_dropped`]). In [`ResponseMode::Json`]
//!   related messages use the standalone stream, since a JSON body carries only responses.
//! - **Event ids** are `<stream>-<seq>`: stream numbers are unique within the session and never
//!   reused, sequence numbers start at 1 (`<stream>-0` is the priming event). Every message put
//!   on an SSE stream is stored in the session's [`EventStore`] whether or not a connection is
//!   attached; a GET with `Last-Event-ID` replays that stream only, then continues it if it is
//!   still live. A client disconnect is never a cancellation.
//! - **Priming** (an id with empty data, plus `retry`) starts new SSE streams of sessions that
//!   negotiated 2025-11-25 or later and have an event store; older clients would try to parse
//!   the empty data as JSON.
//! - **Stateless mode** follows the TypeScript and Python SDKs: no session ids, GET and DELETE
//!   get 405, and each POST holding requests is served by a fresh session that is
//!   *pre-initialized* for the request's `MCP-Protocol-Version` (absent: 2025-03-26) as if a
//!   client without capabilities had completed the handshake, and that ends with the POST. An
//!   `initialize` POST is answered normally (no session id). POSTs of only notifications or
//!   responses get 202 and reach no session, since nothing could tie them to one. Requiring
//!   `initialize` inside every POST instead would make stateless mode unusable for every
//!   existing client, which sends it once.
//! - **Bounds:** body size (413), sessions alive (at the cap the least recently used idle
//!   session is evicted, its id gets 404; 503 only when every session is busy), sessions per
//!   peer address (optional, [`PeerAddr`]; 429), events and bytes per session's event store
//!   and across all of them (oldest evicted first; a resumption that misses evicted events
//!   counts in [`Stats::replay_gaps`]), unpulled bytes per SSE connection (a client that does
//!   not keep up is cut off and resumes from the store), one standalone GET stream per
//!   session (409), idle and handshake expiry (the session and its store are freed; its id
//!   gets 404). Every check of a body (batches, duplicate ids, `_meta`) is linear (or
//!   `n log n`) in its size.
//! - **Status precedence:** 403 (`Host`, then `Origin`), 404 (path), 204 for an `OPTIONS`
//!   preflight when [CORS](Cors) is on, 405 (method), then per method: POST
//!   406 (`Accept`), 415 (`Content-Type`), 413 (size), 400 + -32700/-32600 (body), 400 (no
//!   session id on a non-`initialize`), 404 (unknown or ended session), 400
//!   (`MCP-Protocol-Version`); GET 405 when disabled, 406, 400/404, 400, 409; DELETE 405 when
//!   disabled, 400/404, 400, then 204.
//! - **Legacy HTTP+SSE** (2024-11-05), opt-in with
//!   [`EndpointConfig::legacy_sse`]: `GET /sse` opens a session and its one SSE stream, which
//!   starts with `event: endpoint` / `data: /messages?sessionId=<id>`; the client POSTs each
//!   message there (202) and every server message of the session is an `event: message` on
//!   that stream. No event ids, no resumption, no `MCP-*` headers; the session ends with its
//!   stream, and one that has not completed its handshake expires after
//!   [`handshake_timeout`](EndpointConfig::handshake_timeout) even with its stream open. The
//!   `Host`/`Origin` checks, body limit and session bound are shared with Streamable HTTP, and
//!   the application sees the same [`SessionEvent`]s.

pub mod client;
mod config;
mod cors;
mod endpoint;
mod event_store;
mod headers;
mod reply;
mod session_id;
mod shard;

pub use config::{
    AllowList, Cors, DEFAULT_LISTEN_KEEP_ALIVE, DEFAULT_STORE_BYTES, DEFAULT_STORE_EVENTS,
    DEFAULT_STORE_TOTAL_BYTES, DEFAULT_STORE_TOTAL_EVENTS, EndpointConfig, EventStoreFactory,
    LegacySse, ResponseMode, ToolHeaders,
};
pub use endpoint::{
    DeferredHead, Endpoint, PeerAddr, SessionEvent, SessionOwner, SessionSnapshot, Stats,
    reply_status,
};
pub use event_store::{EventStore, MemoryEventStore};
pub use headers::{
    LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, is_json, last_event_id, request_instance,
    stream_instance, stream_is_standalone,
};
pub use reply::{Body, StreamId, StreamPoll};
pub use session_id::SessionId;
pub use shard::{MAX_SHARDS, Shard};
