//! # mcp-examples
//!
//! Example servers and programs for the MCP workspace.
//!
//! - [`everything`]: a server with every fixture of the MCP conformance suite
//!   (`@modelcontextprotocol/conformance`), built on the typed `mcp_service::Server` API and
//!   independent of the async runtime that serves it.
//! - [`bench`](mod@bench): the end-to-end benchmark's `echo` server and process statistics.
//! - `src/bin/core-pair.rs`: the sans-IO `mcp_proto::Session` core on its own, client and
//!   server driven against each other in memory.
#![deny(missing_docs)]

pub mod bench;
pub mod everything;
pub mod walk;
