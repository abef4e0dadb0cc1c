//! The client side of the stateless era (2026-07-28): `server/discover` instead of the
//! handshake, then every request carries the era's `_meta` (the protocol version, this
//! client's capabilities and info).
//!
//! [`Discovery::Discover`] speaks only the stateless era; [`Discovery::Auto`] asks
//! `server/discover` first and runs the `initialize` handshake instead when the server does not
//! answer it with the stateless version (any error, a timeout, or a list without it), as the
//! revision's era detection says (the default; with no stateless version configured it is the
//! handshake at once); [`Discovery::Initialize`] is the handshake.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use super::caps::CapSet;
use super::config::raw_from_vec;
use super::event::Event;
use super::lifecycle::{PeerInfo, State};
use crate::error::{Error, ErrorKind};
use crate::id::RequestId;
use crate::jsonrpc;
use crate::schema::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY};
use crate::time::Instant;
use crate::version::ProtocolVersion;

/// How many tools' `x-mcp-header` annotations a client session keeps.
pub const MAX_ANNOTATED_TOOLS: usize = 4096;

/// How a client session starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Discovery {
    /// The `initialize` handshake (the handshake era).
    Initialize,
    /// `server/discover`, then the stateless era only.
    Discover,
    /// `server/discover`; the handshake when the server does not speak the stateless era
    /// (the default). With no stateless version among the configured versions there is
    /// nothing to ask: the handshake at once.
    #[default]
    Auto,
}

/// The `_meta` entries of every request in the stateless era, as JSON object members.
pub(super) fn era_entries(version: ProtocolVersion, caps: &RawValue, info: &RawValue) -> Vec<u8> {
    let mut m = Vec::with_capacity(160 + caps.get().len() + info.get().len());
    jsonrpc::write_json_str(&mut m, PROTOCOL_VERSION_KEY);
    m.push(b':');
    jsonrpc::write_json_str(&mut m, version.as_str());
    m.push(b',');
    jsonrpc::write_json_str(&mut m, CLIENT_CAPABILITIES_KEY);
    m.push(b':');
    m.extend_from_slice(caps.get().as_bytes());
    m.push(b',');
    jsonrpc::write_json_str(&mut m, CLIENT_INFO_KEY);
    m.push(b':');
    m.extend_from_slice(info.get().as_bytes());
    m
}

impl Session {
    /// Client: starts as [`Config::discovery`](super::Config::discovery) says — the
    /// handshake ([`initialize`](Self::initialize)) or `server/discover`
    /// ([`discover`](Self::discover)); [`Discovery::Auto`] with no stateless version among
    /// the configured versions is the handshake.
    ///
    /// # Errors
    /// Those of [`initialize`](Self::initialize) or [`discover`](Self::discover), whichever it
    /// runs.
    pub fn start(&mut self, now: Instant) -> Result<RequestId, Error> {
        let stateless = self.config.versions.iter().any(|v| v.is_stateless());
        match self.config.discovery {
            Discovery::Initialize => self.initialize(now),
            Discovery::Auto if !stateless => self.initialize(now),
            Discovery::Discover => self.discover(now, false),
            Discovery::Auto => self.discover(now, true),
        }
    }

    /// Client: asks `server/discover` with the era's `_meta`; with `fallback`, a server that
    /// does not answer it with the stateless version gets the `initialize` handshake instead.
    /// [`Event::Ready`] follows once the era is settled.
    ///
    /// # Errors
    /// [`ErrorKind::ProtocolInvalid`] (-32600) on a server session;
    /// [`ErrorKind::AlreadyConnected`] when the session has already started;
    /// [`ErrorKind::ProtocolVersionMismatch`] when no stateless version is configured.
    pub fn discover(&mut self, now: Instant, fallback: bool) -> Result<RequestId, Error> {
        if !self.client {
            return Err(Error::invalid_request(
                "only a client sends `server/discover`",
            ));
        }
        if self.state != State::AwaitingInit {
            return Err(Error::new(
                ErrorKind::AlreadyConnected,
                "the session has already started",
            ));
        }
        let Some(version) = self
            .config
            .versions
            .iter()
            .copied()
            .filter(|v| v.is_stateless())
            .max()
        else {
            return Err(Error::new(
                ErrorKind::ProtocolVersionMismatch,
                "no stateless protocol version configured",
            ));
        };
        Ok(self.send_discover(now, version, fallback))
    }

    /// Queues `server/discover` at `version`.
    fn send_discover(
        &mut self,
        now: Instant,
        version: ProtocolVersion,
        fallback: bool,
    ) -> RequestId {
        let entries = era_entries(version, &self.config.capabilities, &self.config.info);
        let mut p = Vec::with_capacity(12 + entries.len());
        p.extend_from_slice(b"{\"_meta\":{");
        p.extend_from_slice(&entries);
        p.extend_from_slice(b"}}");
        let id = self.queue_start_request(now, "server/discover", raw_from_vec(p), true);
        self.discovery = Some((version, fallback, entries));
        self.state = State::Initializing;
        id
    }

    /// The outcome of `server/discover` (a timeout is an error here).
    pub(super) fn on_discover_result(&mut self, now: Instant, result: Result<&RawValue, Error>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Found<'a> {
            #[serde(borrow)]
            supported_versions: Vec<Cow<'a, str>>,
            #[serde(borrow)]
            capabilities: &'a RawValue,
            instructions: Option<alloc::string::String>,
            #[serde(rename = "_meta", borrow)]
            meta: Option<FoundMeta<'a>>,
        }
        #[derive(Deserialize)]
        struct FoundMeta<'a> {
            #[serde(rename = "io.modelcontextprotocol/serverInfo", borrow)]
            info: Option<&'a RawValue>,
        }
        let Some((version, fallback, entries)) = self.discovery.take() else {
            return;
        };
        let why = match result {
            Err(e) => e,
            Ok(raw) => match serde_json::from_str::<Found<'_>>(raw.get()) {
                Ok(found)
                    if found
                        .supported_versions
                        .iter()
                        .any(|v| v == version.as_str()) =>
                {
                    let info = found
                        .meta
                        .and_then(|m| m.info)
                        .map(ToOwned::to_owned)
                        .unwrap_or_else(jsonrpc::empty_object);
                    let capabilities = found.capabilities.to_owned();
                    self.version = Some(version);
                    self.peer = Some(PeerInfo {
                        info: info.clone(),
                        capabilities: capabilities.clone(),
                        caps: CapSet::parse(found.capabilities),
                        instructions: found.instructions.clone(),
                    });
                    self.era_meta = Some(entries.into_boxed_slice());
                    self.state = State::Ready;
                    self.events.push_back(Event::Ready {
                        version,
                        peer_info: info,
                        peer_capabilities: capabilities,
                        instructions: found.instructions,
                    });
                    return;
                }
                Ok(found) => Error::new(
                    ErrorKind::ProtocolVersionMismatch,
                    alloc::format!(
                        "the server supports {:?}, not {version}",
                        found.supported_versions
                    ),
                ),
                Err(e) => {
                    Error::invalid_request(alloc::format!("invalid `server/discover` result: {e}"))
                }
            },
        };
        // -32022 naming a stateless version this client speaks: asked again at it, once.
        if !self.discover_retried
            && let Some(v) = self.offered_stateless(&why)
        {
            self.discover_retried = true;
            self.send_discover(now, v, fallback);
            return;
        }
        if fallback && !self.modern_refusal(&why) {
            // Not a server of the stateless era: the handshake.
            self.state = State::AwaitingInit;
            if let Err(e) = self.initialize(now) {
                self.fail_connection(e);
            }
            return;
        }
        // A version refusal names what the server offers.
        let offered: Vec<&str> = supported_versions(&why)
            .iter()
            .map(|v| v.as_str())
            .collect();
        let why = if why.code() == -32022 && !offered.is_empty() {
            let message = alloc::format!("{} (the server offers {offered:?})", why.message());
            let mut e = Error::new(ErrorKind::ProtocolVersionMismatch, message);
            if let Some(d) = why.data() {
                e = e.with_data(d.to_owned());
            }
            e
        } else {
            why
        };
        self.fail_connection(why);
    }

    /// The newest stateless version both this client and a -32022's `data.supported` name.
    fn offered_stateless(&self, e: &Error) -> Option<ProtocolVersion> {
        if e.code() != -32022 {
            return None;
        }
        supported_versions(e)
            .into_iter()
            .filter(|v| v.is_stateless() && self.config.versions.contains(v))
            .max()
    }

    /// Whether `server/discover` failed with an error only a server of the stateless era sends
    /// (-32020, -32021, or -32022 offering no handshake version this client speaks): the
    /// server is of that era, so the handshake would only hide the real error.
    fn modern_refusal(&self, e: &Error) -> bool {
        match e.code() {
            -32020 | -32021 => true,
            -32022 => !supported_versions(e)
                .iter()
                .any(|v| !v.is_stateless() && self.config.versions.contains(v)),
            _ => false,
        }
    }

    /// Client, stateless era: the log level every request asks for from now on
    /// (`_meta["io.modelcontextprotocol/logLevel"]`; `None`: no log messages), which replaces
    /// the handshake era's `logging/setLevel`. Does nothing in the handshake era.
    pub fn set_log_level(&mut self, level: Option<crate::schema::LoggingLevel>) {
        let (Some(_), Some(version)) = (&self.era_meta, self.version) else {
            return;
        };
        let mut entries = era_entries(version, &self.config.capabilities, &self.config.info);
        if let Some(level) = level {
            entries.push(b',');
            jsonrpc::write_json_str(&mut entries, crate::schema::meta::LOG_LEVEL_KEY);
            entries.push(b':');
            jsonrpc::write_json_str(&mut entries, level.as_str());
        }
        self.era_meta = Some(entries.into_boxed_slice());
    }

    /// The stateless-era version this client speaks, or is asking `server/discover` about;
    /// `None` in the handshake era (transports use it for the era's own headers).
    pub fn stateless_version(&self) -> Option<ProtocolVersion> {
        match (&self.discovery, &self.era_meta) {
            (Some((version, ..)), _) => Some(*version),
            (None, Some(_)) => self.version,
            (None, None) => None,
        }
    }

    /// The `x-mcp-header` annotations of tool `name`, as the last `tools/list` of the
    /// stateless era described it (`None` when it has none, or was not listed): the HTTP
    /// transport mirrors those arguments into `Mcp-Param-*` headers.
    pub fn param_headers(&self, name: &str) -> Option<&[crate::schema::tools::ParamHeader]> {
        self.param_headers.get(name).map(|h| &**h)
    }

    /// Learns the annotations of the tools in a `tools/list` result (tools with invalid ones
    /// are left out: a client does not call them).
    pub(super) fn learn_param_headers(&mut self, result: &RawValue) {
        #[derive(Deserialize)]
        struct Listed {
            #[serde(default)]
            tools: Vec<ListedTool>,
        }
        #[derive(Deserialize)]
        struct ListedTool {
            name: alloc::string::String,
            #[serde(rename = "inputSchema", default)]
            input_schema: crate::schema::JsonObject,
        }
        if !result.get().contains("x-mcp-header") {
            return;
        }
        let Ok(listed) = serde_json::from_str::<Listed>(result.get()) else {
            return;
        };
        for tool in listed.tools {
            match crate::schema::tools::param_headers(&tool.input_schema) {
                Ok(h) if !h.is_empty() => {
                    if self.param_headers.len() < MAX_ANNOTATED_TOOLS
                        || self.param_headers.contains_key(&tool.name)
                    {
                        self.param_headers.insert(tool.name, h.into_boxed_slice());
                    }
                }
                _ => {
                    self.param_headers.remove(&tool.name);
                }
            }
        }
    }

    /// The era's `_meta` entries (stateless era) and the progress token, if any, added to a
    /// request's params.
    pub(super) fn era_params(
        &self,
        params: Option<Box<RawValue>>,
    ) -> Result<Option<Box<RawValue>>, Error> {
        match &self.era_meta {
            None => Ok(params),
            Some(entries) => super::outbound::with_meta_entries(params, entries).map(Some),
        }
    }
}

/// The versions a -32022's `data.supported` names (those this crate knows).
fn supported_versions(e: &Error) -> Vec<ProtocolVersion> {
    #[derive(Deserialize)]
    struct Data<'a> {
        #[serde(borrow, default)]
        supported: Vec<Cow<'a, str>>,
    }
    e.data()
        .and_then(|d| serde_json::from_str::<Data<'_>>(d.get()).ok())
        .map(|d| {
            d.supported
                .iter()
                .filter_map(|v| ProtocolVersion::parse(v))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn era_entries_are_object_members() {
        let caps = RawValue::from_string("{\"roots\":{}}".into()).unwrap();
        let info = RawValue::from_string("{\"name\":\"c\",\"version\":\"1\"}".into()).unwrap();
        let e = era_entries(ProtocolVersion::V2026_07_28, &caps, &info);
        let mut obj = b"{".to_vec();
        obj.extend_from_slice(&e);
        obj.push(b'}');
        let v: serde_json::Value = serde_json::from_slice(&obj).unwrap();
        assert_eq!(v[PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(v[CLIENT_CAPABILITIES_KEY]["roots"], serde_json::json!({}));
        assert_eq!(v[CLIENT_INFO_KEY]["name"], "c");
    }
}
