//! Framing codecs, each usable alone: newline-delimited JSON ([`ndjson`]) for stdio and byte
//! streams, and Server-Sent Events ([`sse`]) for HTTP.

pub mod ndjson;
pub mod sse;
