//! Typed wire types of every MCP version, organised by area.
