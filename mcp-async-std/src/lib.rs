//! async-std / smol driver for the `mcp-proto` core (transports arrive with the typed-API issue).
#![deny(missing_docs)]

pub use mcp_proto as proto;
