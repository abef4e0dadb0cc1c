//! The fuzz targets' side of the core's checked pair ([`mcp_proto::testing`]): `Arbitrary`
//! inputs that map onto its plain types, method names, configuration presets and strict mode.
//! The pair, the link and every session invariant live in `mcp_proto::testing`.

use arbitrary::Arbitrary;
use mcp_proto::session::{Config, Framing};
use mcp_proto::testing::{self, Pair};
use mcp_proto::{Duration, ProtocolVersion};
use serde_json::value::RawValue;

pub use mcp_proto::testing::{CLIENT, SERVER, raw};

/// Method names used by requests, notifications and templates (valid, misdirected,
/// version-specific, refused, custom and empty).
pub const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "sampling/createMessage",
    "roots/list",
    "elicitation/create",
    "tasks/get",
    "server/discover",
    "initialize",
    "custom/thing",
    "",
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/roots/list_changed",
    "notifications/resources/updated",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/initialized",
    "notifications/custom",
];

/// `MCP_FUZZ_STRICT=1` also checks two known gaps (see the README): app-provided raw JSON
/// with literal newlines must not break NDJSON framing, and a closed session transmits nothing.
pub fn strict() -> bool {
    static STRICT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("MCP_FUZZ_STRICT").is_some())
}

/// A checked pair over a perfect link, strict when `MCP_FUZZ_STRICT` is set.
pub fn pair(client: Config, server: Config) -> Pair {
    let mut p = Pair::new(client, server);
    p.strict = strict();
    p
}

/// Which kind of `params` to attach.
#[derive(Arbitrary, Debug, Clone)]
pub enum Params {
    None,
    Empty,
    /// A tools/call-like object carrying this text.
    Text(String),
    WithProgressToken,
    WithMeta,
    MetaNotObject,
    Array,
    Escaped,
    Nested(u8),
    /// Pretty-printed (literal newlines): only in strict mode, `{}` otherwise.
    Pretty,
}

impl Params {
    /// The params as compact JSON (`None` for absent).
    pub fn json(&self) -> Option<String> {
        Some(match self {
            Params::None => return None,
            Params::Empty => "{}".into(),
            Params::Text(t) => {
                serde_json::json!({"name": "echo", "arguments": {"text": t}}).to_string()
            }
            Params::WithProgressToken => r#"{"_meta":{"progressToken":"tok"},"name":"x"}"#.into(),
            Params::WithMeta => r#"{"name":"x","_meta":{"a":[1,{"b":null}]}}"#.into(),
            Params::MetaNotObject => r#"{"_meta":3}"#.into(),
            Params::Array => "[1,2]".into(),
            Params::Escaped => r#"{"a\"b":"\u00e9\n","_meta":{"progressToken":7}}"#.into(),
            Params::Nested(d) => {
                let d = usize::from(*d % 160);
                format!("{{\"n\":{}0{}}}", "[".repeat(d), "]".repeat(d))
            }
            Params::Pretty if strict() => "{\n  \"a\": [\n    1\n  ]\n}".into(),
            Params::Pretty => "{}".into(),
        })
    }

    pub fn raw(&self) -> Option<Box<RawValue>> {
        self.json().and_then(|s| RawValue::from_string(s).ok())
    }
}

/// How to choose an id: [`testing::Pick`], arbitrary.
#[derive(Arbitrary, Debug, Clone)]
pub enum Pick {
    Open(u8),
    Cancelled(u8),
    Id(i64),
    Str(String),
}

impl Pick {
    pub fn plain(&self) -> testing::Pick {
        match self {
            Pick::Open(i) => testing::Pick::Open(*i),
            Pick::Cancelled(i) => testing::Pick::Cancelled(*i),
            Pick::Id(n) => testing::Pick::Id(*n),
            Pick::Str(s) => testing::Pick::Str(s.clone()),
        }
    }
}

/// Configuration presets.
#[allow(clippy::too_many_arguments)]
pub fn config(
    client: bool,
    raw_framing: bool,
    versions: u8,
    max_message: Option<u16>,
    limits: u8,
    timeout_ms: Option<u32>,
    custom: bool,
    caps: u8,
) -> Config {
    let mut c = Config::new(if client { "fuzz-client" } else { "fuzz-server" }, "0.1");
    if raw_framing {
        c = c.framing(Framing::Raw);
    }
    let vs: Vec<ProtocolVersion> = ProtocolVersion::ALL
        .into_iter()
        .enumerate()
        .filter(|(i, _)| versions & (1 << i) != 0)
        .map(|(_, v)| v)
        .collect();
    if !vs.is_empty() {
        c = c.versions(&vs);
    }
    if let Some(m) = max_message {
        c.max_message_size = usize::from(m).max(16);
    }
    if limits != 0 {
        c.max_inbound_in_flight = usize::from(limits & 0x0f);
        c.max_outbound_in_flight = usize::from(limits >> 4);
    }
    c.request_timeout = timeout_ms.map(|t| Duration::from_millis(u64::from(t)));
    c.allow_custom_methods = custom;
    let caps = if client {
        [
            r#"{"sampling":{},"roots":{"listChanged":true},"elicitation":{}}"#,
            "{}",
            r#"{"roots":{},"tasks":{}}"#,
        ][usize::from(caps) % 3]
    } else {
        [
            r#"{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":{},"logging":{},"completions":{}}"#,
            "{}",
            r#"{"tools":{},"tasks":{}}"#,
        ][usize::from(caps) % 3]
    };
    c = c.capabilities(raw(caps));
    if caps.len() > 2 && !client {
        c.instructions = Some("fuzz \"instructions\"\n".into());
    }
    c
}
