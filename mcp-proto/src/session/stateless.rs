//! Requests of the stateless era (2026-07-28) on a server session: no handshake; each request
//! names its protocol version and the client's capabilities in `params._meta`. A request that
//! carries `io.modelcontextprotocol/protocolVersion` is of that era, whatever the session's own
//! state, so that clients of both eras can share one stdio stream or HTTP endpoint.
//!
//! The session checks what the revision makes its business: the version (-32022
//! `UnsupportedProtocolVersion` with `data.supported` and `data.requested`), the required
//! `clientCapabilities` (-32602), methods the revision removed (`ping`, `logging/setLevel`,
//! `resources/subscribe`, … -32601), its own capabilities; it answers `server/discover`
//! itself; and every result of such a request carries `resultType` (`"complete"` unless the
//! application wrote one, e.g. `"input_required"`).

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use super::caps::CapSet;
use super::caps::gate_name;
use super::config::Config;
use super::config::raw_from_vec;
use super::encode::Outgoing;

use super::inbound::mentions_meta;
use crate::error::{Error, ErrorKind};
use crate::id::{ProgressToken, RequestId};
use crate::jsonrpc;
use crate::method;
use crate::schema::logging::LoggingLevel;
use crate::schema::meta::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
};
use crate::version::ProtocolVersion;

/// What a stateless-era request said about itself in its `_meta`.
#[derive(Debug, Clone)]
pub struct RequestEra {
    /// The request's protocol version (one this side serves).
    pub version: ProtocolVersion,
    /// The client's capabilities, as sent (an object).
    pub client_capabilities: Box<RawValue>,
    /// The client's `Implementation`, when sent.
    pub client_info: Option<Box<RawValue>>,
    /// The log level the client asked for (`notifications/message` only at or above it; none
    /// when absent).
    pub log_level: Option<LoggingLevel>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
    capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow)]
    info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow)]
    log_level: Option<Cow<'a, str>>,
    #[serde(rename = "progressToken")]
    progress_token: Option<ProgressToken>,
}

/// Whether `params` is a stateless-era request's (names a protocol version in `_meta`). A
/// cheap scan: requests of the handshake era are not parsed for it.
pub(super) fn is_stateless(params: &RawValue) -> bool {
    let json = params.get();
    mentions_meta(json)
        && memchr::memmem::find(json.as_bytes(), PROTOCOL_VERSION_KEY.as_bytes()).is_some()
}

/// `result` with `"resultType":"complete"` first unless it names a `resultType` of its own.
pub(super) fn with_result_type(result: Box<RawValue>) -> Box<RawValue> {
    #[derive(Deserialize)]
    struct Typed {
        #[serde(rename = "resultType")]
        result_type: Option<serde::de::IgnoredAny>,
    }
    let json = result.get();
    if memchr::memmem::find(json.as_bytes(), b"\"resultType\"").is_some()
        && serde_json::from_str::<Typed>(json).is_ok_and(|t| t.result_type.is_some())
    {
        return result;
    }
    let rest = json
        .trim_start()
        .strip_prefix('{')
        .unwrap_or("}")
        .trim_start();
    let mut out = Vec::with_capacity(json.len() + 26);
    out.extend_from_slice(b"{\"resultType\":\"complete\"");
    if !rest.starts_with('}') {
        out.push(b',');
    }
    out.extend_from_slice(rest.as_bytes());
    raw_from_vec(out)
}

impl Session {
    /// Whether this server serves the stateless era (a 2026-07-28 version is configured).
    pub(super) fn serves_stateless(&self) -> bool {
        !self.client && self.config.versions.iter().any(|v| v.is_stateless())
    }

    /// A request of the stateless era (see the module doc).
    pub(super) fn on_stateless_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: &RawValue,
        batch: Option<u64>,
    ) {
        let era = match check_request(&self.config, &self.own_caps, method, params) {
            Ok(era) => era,
            Err(e) => {
                self.queue_error(batch, Some(id), &e);
                return;
            }
        };
        let (era, progress_token) = era;
        if method == "server/discover" {
            let result = self.discover_result();
            self.answer(batch, Outgoing::Response { id, result });
            return;
        }
        if method == super::listen::LISTEN {
            self.open_listener(id, params, batch, era);
            return;
        }
        self.admit(
            id,
            method,
            Some(params.to_owned()),
            progress_token,
            batch,
            Some(era),
        );
    }

    /// The `server/discover` result: every version served, the capabilities, the instructions,
    /// the server's `Implementation` in `_meta`, cacheable by anyone for no time (the
    /// capabilities of a server change when it is redeployed).
    fn discover_result(&self) -> Box<RawValue> {
        let mut r = Vec::with_capacity(
            160 + self.config.info.get().len() + self.config.capabilities.get().len(),
        );
        r.extend_from_slice(b"{\"resultType\":\"complete\",\"supportedVersions\":[");
        for (i, v) in self.config.versions.iter().enumerate() {
            if i > 0 {
                r.push(b',');
            }
            jsonrpc::write_json_str(&mut r, v.as_str());
        }
        r.extend_from_slice(b"],\"capabilities\":");
        r.extend_from_slice(self.config.capabilities.get().as_bytes());
        if let Some(instructions) = &self.config.instructions {
            r.extend_from_slice(b",\"instructions\":");
            jsonrpc::write_json_str(&mut r, instructions);
        }
        r.extend_from_slice(b",\"ttlMs\":0,\"cacheScope\":\"public\",\"_meta\":{");
        jsonrpc::write_json_str(&mut r, SERVER_INFO_KEY);
        r.push(b':');
        r.extend_from_slice(self.config.info.get().as_bytes());
        r.extend_from_slice(b"}}");
        raw_from_vec(r)
    }
}

/// A stateless-era request's era, or the error it is answered with: what a server session
/// checks, and what the HTTP endpoint checks before a session exists.
pub(crate) fn check_request(
    config: &Config,
    own_caps: &CapSet,
    method: &str,
    params: &RawValue,
) -> Result<(RequestEra, Option<ProgressToken>), Error> {
    let meta = serde_json::from_str::<Params<'_>>(params.get())
        .map_err(|e| Error::invalid_params(alloc::format!("invalid `_meta`: {e}")))?
        .meta
        .ok_or_else(|| Error::invalid_params("missing `_meta`"))?;
    let Some(requested) = meta.version else {
        return Err(Error::invalid_params(alloc::format!(
            "missing `_meta[\"{PROTOCOL_VERSION_KEY}\"]`"
        )));
    };
    let version = ProtocolVersion::parse(&requested)
        .filter(|v| v.is_stateless() && config.versions.contains(v))
        .ok_or_else(|| unsupported_version(config, &requested))?;
    let capabilities = meta
        .capabilities
        .filter(|c| c.get().starts_with('{'))
        .ok_or_else(|| {
            Error::invalid_params(alloc::format!(
                "missing `_meta[\"{CLIENT_CAPABILITIES_KEY}\"]` (an object, required in {version})"
            ))
        })?;
    if let Some(info) = meta.info
        && !info.get().starts_with('{')
    {
        return Err(Error::invalid_params(alloc::format!(
            "`_meta[\"{CLIENT_INFO_KEY}\"]` must be an object"
        )));
    }
    match method::lookup(method) {
        Some(spec) => {
            if !spec.request || !spec.sent_by(true) || !spec.in_version(version) {
                return Err(Error::new(
                    ErrorKind::MethodNotFound,
                    alloc::format!("method not found: `{method}` is not a request of {version}"),
                ));
            }
            if !own_caps.allows(spec.gate, version) {
                return Err(Error::new(
                    ErrorKind::MethodNotFound,
                    alloc::format!(
                        "method not found: `{method}` needs the `{}` capability, which this server did not declare",
                        gate_name(spec.gate)
                    ),
                ));
            }
            if spec.name == super::listen::LISTEN && !own_caps.serves_listen() {
                return Err(Error::new(
                    ErrorKind::MethodNotFound,
                    "method not found: `subscriptions/listen` needs a `listChanged` or `resources.subscribe` capability, and this server declares none",
                ));
            }
        }
        None if !config.allow_custom_methods => {
            return Err(Error::method_not_found(method));
        }
        None => {}
    }
    let log_level = match meta.log_level {
        None => None,
        Some(level) => Some(LoggingLevel::parse(&level).ok_or_else(|| {
            Error::invalid_params(alloc::format!(
                "`_meta[\"{LOG_LEVEL_KEY}\"]`: unknown log level {level:?}"
            ))
        })?),
    };
    Ok((
        RequestEra {
            version,
            client_capabilities: capabilities.to_owned(),
            client_info: meta.info.map(ToOwned::to_owned),
            log_level,
        },
        meta.progress_token,
    ))
}

/// -32022 for a version a server does not serve, naming those it does.
pub(crate) fn unsupported_version(config: &Config, requested: &str) -> Error {
    let mut data = Vec::new();
    data.extend_from_slice(b"{\"supported\":[");
    for (i, v) in config.versions.iter().enumerate() {
        if i > 0 {
            data.push(b',');
        }
        jsonrpc::write_json_str(&mut data, v.as_str());
    }
    data.extend_from_slice(b"],\"requested\":");
    jsonrpc::write_json_str(&mut data, requested);
    data.push(b'}');
    Error::new(
        ErrorKind::ProtocolVersionMismatch,
        alloc::format!("Unsupported protocol version {requested:?}"),
    )
    .with_data(raw_from_vec(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(String::from(s)).unwrap()
    }

    #[test]
    fn result_types_are_added_unless_present() {
        assert_eq!(
            with_result_type(raw("{}")).get(),
            "{\"resultType\":\"complete\"}"
        );
        assert_eq!(
            with_result_type(raw("{\"tools\":[]}")).get(),
            "{\"resultType\":\"complete\",\"tools\":[]}"
        );
        assert_eq!(
            with_result_type(raw(" { \"a\" : 1 } ")).get(),
            "{\"resultType\":\"complete\",\"a\" : 1 }"
        );
        let own = "{\"resultType\":\"input_required\",\"requestState\":\"x\"}";
        assert_eq!(with_result_type(raw(own)).get(), own);
        // A nested `resultType` is not the result's own.
        assert_eq!(
            with_result_type(raw("{\"x\":{\"resultType\":1}}")).get(),
            "{\"resultType\":\"complete\",\"x\":{\"resultType\":1}}"
        );
    }

    #[test]
    fn only_requests_naming_a_version_are_stateless() {
        assert!(!is_stateless(&raw("{\"name\":\"echo\"}")));
        assert!(!is_stateless(&raw("{\"_meta\":{\"progressToken\":1}}")));
        assert!(is_stateless(&raw(
            "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}"
        )));
    }
}
