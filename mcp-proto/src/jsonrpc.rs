//! The JSON-RPC 2.0 envelope: parsed in one pass, written without intermediate trees.
//!
//! [`parse`] reads one input (a line, an HTTP body, an SSE `data`) into borrowed
//! [`Envelope`]s whose `params`/`result` stay raw JSON ([`RawValue`]) until a typed view is asked
//! for. The `write_*` functions append a message straight into a caller-owned buffer.
//!
//! This module knows JSON-RPC only: it never looks at MCP method names, versions or state.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{Error, ErrorKind};
use crate::id::RequestId;

/// A JSON-RPC message borrowed from its input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Envelope<'a> {
    /// A request: has an id and a method.
    Request {
        /// The request id.
        id: RequestId,
        /// The method name.
        method: Cow<'a, str>,
        /// The raw `params`, if present (`null` counts as absent).
        params: Option<&'a RawValue>,
    },
    /// A notification: a method without an id.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The raw `params`, if present.
        params: Option<&'a RawValue>,
    },
    /// A successful response.
    Response {
        /// The id of the request answered.
        id: RequestId,
        /// The raw `result`.
        result: &'a RawValue,
    },
    /// An error response.
    Error {
        /// The id of the request answered; `None` when the peer could not read it (`null`).
        id: Option<RequestId>,
        /// The error code.
        code: i64,
        /// The error message.
        message: Cow<'a, str>,
        /// The raw `data`, if present.
        data: Option<&'a RawValue>,
    },
}

/// A message that could not be accepted, with what is needed to answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The id to answer with, when it could be read (`None` → `"id": null`).
    pub id: Option<RequestId>,
    /// Whether the rejected message was a request (and therefore deserves an error response).
    /// Invalid responses and notifications are never answered; unreadable input is (-32700).
    pub answer: bool,
    /// The error (-32700 or -32600).
    pub error: Error,
}

/// What one input parsed into.
#[derive(Debug)]
#[non_exhaustive]
pub enum Parsed<'a> {
    /// One message (or the reason it was rejected).
    Single(Result<Envelope<'a>, Rejected>),
    /// A JSON array of messages (a batch); each element parsed on its own.
    Batch(Vec<Result<Envelope<'a>, Rejected>>),
}

/// Parses one JSON-RPC input (a single message or a batch).
///
/// Unparseable JSON yields a [`Rejected`] with kind [`ErrorKind::Parse`] and no id; JSON that is
/// not a valid JSON-RPC message yields [`ErrorKind::ProtocolInvalid`], with the id when it could
/// be read. An empty batch is rejected as a whole.
pub fn parse(input: &[u8]) -> Parsed<'_> {
    let text = match utf8(input) {
        Ok(text) => text,
        Err(r) => return Parsed::Single(Err(r)),
    };
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    if first == Some(b'[') {
        return match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(items) if items.is_empty() => Parsed::Single(Err(Rejected {
                id: None,
                answer: true,
                error: Error::invalid_request("empty batch"),
            })),
            Ok(items) => Parsed::Batch(
                items
                    .into_iter()
                    .map(|raw| parse_one_str(raw.get()))
                    .collect(),
            ),
            Err(e) => Parsed::Single(Err(classify(e))),
        };
    }
    Parsed::Single(parse_one_str(text))
}

/// Parses exactly one JSON-RPC message (no batches).
///
/// ```
/// use mcp_proto::jsonrpc::parse_one;
/// assert!(parse_one(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).is_ok());
/// let rejected = parse_one(br#"{"jsonrpc":"1.0","method":"ping","id":7}"#).unwrap_err();
/// assert_eq!(rejected.error.code(), -32600);
/// assert!(rejected.answer, "a request: it gets an error response, with its id");
/// assert_eq!(parse_one(b"{oops").unwrap_err().error.code(), -32700);
/// ```
///
/// # Errors
/// A [`Rejected`]: -32700 [`ErrorKind::Parse`] for input that is not UTF-8 or not JSON;
/// -32600 [`ErrorKind::ProtocolInvalid`] for JSON that is not one JSON-RPC 2.0 message (an
/// array, a wrong or missing `jsonrpc`, a bad `id`, neither method nor result nor error).
/// Its `id` and `answer` say whether and how to answer it.
pub fn parse_one(input: &[u8]) -> Result<Envelope<'_>, Rejected> {
    parse_one_str(utf8(input)?)
}

/// The input as text: UTF-8 is checked once, up front, so that the JSON parser reads a `str`
/// and checks no string again (from bytes, it validates each string and raw value it meets).
fn utf8(input: &[u8]) -> Result<&str, Rejected> {
    core::str::from_utf8(input).map_err(|e| Rejected {
        id: None,
        answer: true,
        error: Error::parse(alloc::format!("invalid JSON: not UTF-8 ({e})")),
    })
}

fn parse_one_str(text: &str) -> Result<Envelope<'_>, Rejected> {
    let raw: RawFields<'_> = serde_json::from_str(text).map_err(classify)?;
    raw.into_envelope()
}

fn classify(e: serde_json::Error) -> Rejected {
    use serde_json::error::Category;
    let error = match e.classify() {
        Category::Data => Error::invalid_request("not a JSON-RPC message object"),
        _ => Error::parse(alloc::format!("invalid JSON: {e}")),
    };
    Rejected {
        id: None,
        answer: true,
        error,
    }
}

#[derive(Default)]
struct RawFields<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    duplicate: bool,
}

impl<'de> de::Deserialize<'de> for RawFields<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = RawFields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = RawFields::default();
        while let Some(key) = map.next_key::<KeyName<'de>>()? {
            let slot = match &*key.0 {
                "jsonrpc" => &mut out.jsonrpc,
                "id" => &mut out.id,
                "method" => &mut out.method,
                "params" => &mut out.params,
                "result" => &mut out.result,
                "error" => &mut out.error,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let v = map.next_value::<&'de RawValue>()?;
            if slot.replace(v).is_some() {
                out.duplicate = true;
            }
        }
        Ok(out)
    }
}

/// A map key, borrowed when it has no escapes.
struct KeyName<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for KeyName<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyName<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyName(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyName(Cow::Owned(v.into())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads a raw JSON string value, borrowing when it has no escapes.
fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let s = raw.get();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(s).ok().map(Cow::Owned)
}

enum IdRead {
    Absent,
    Null,
    Valid(RequestId),
    Invalid,
}

fn read_id(raw: Option<&RawValue>) -> IdRead {
    let Some(raw) = raw else {
        return IdRead::Absent;
    };
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'n') => IdRead::Null,
        Some(b'"') => match raw_str(raw) {
            Some(v) => IdRead::Valid(RequestId::String(v.into_owned().into_boxed_str())),
            None => IdRead::Invalid,
        },
        Some(b'-' | b'0'..=b'9') => match s.parse::<i64>() {
            Ok(n) => IdRead::Valid(RequestId::Number(n)),
            Err(_) => IdRead::Invalid,
        },
        _ => IdRead::Invalid,
    }
}

fn is_structured(raw: &RawValue) -> bool {
    matches!(raw.get().as_bytes().first(), Some(b'{' | b'['))
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

impl<'a> RawFields<'a> {
    fn into_envelope(self) -> Result<Envelope<'a>, Rejected> {
        let id = read_id(self.id);
        let id_for_error = match &id {
            IdRead::Valid(id) => Some(id.clone()),
            _ => None,
        };
        let is_request = self.method.is_some() && !matches!(id, IdRead::Absent);
        let reject = |msg: &'static str| Rejected {
            id: id_for_error.clone(),
            answer: is_request
                || self.method.is_none() && self.result.is_none() && self.error.is_none(),
            error: Error::invalid_request(msg),
        };
        if self.duplicate {
            return Err(reject("duplicate member in JSON-RPC message"));
        }
        match self.jsonrpc.and_then(raw_str) {
            Some(v) if v == "2.0" => {}
            Some(_) => return Err(reject("`jsonrpc` must be \"2.0\"")),
            None => return Err(reject("missing `jsonrpc: \"2.0\"`")),
        }
        if let Some(method) = self.method {
            let Some(method) = raw_str(method) else {
                return Err(reject("`method` must be a string"));
            };
            if self.result.is_some() || self.error.is_some() {
                return Err(reject("a request must not carry `result` or `error`"));
            }
            let params = match self.params {
                Some(p) if is_null(p) => None,
                Some(p) if !is_structured(p) => {
                    return Err(reject("`params` must be an object or an array"));
                }
                p => p,
            };
            return match id {
                IdRead::Absent => Ok(Envelope::Notification { method, params }),
                IdRead::Valid(id) => Ok(Envelope::Request { id, method, params }),
                IdRead::Null => Err(reject("request `id` must not be null")),
                IdRead::Invalid => Err(reject("request `id` must be a string or an integer")),
            };
        }
        match (self.result, self.error) {
            (Some(result), None) => match id {
                IdRead::Valid(id) => Ok(Envelope::Response { id, result }),
                _ => Err(Rejected {
                    answer: false,
                    ..reject("response `id` must be a string or an integer")
                }),
            },
            (None, Some(error)) => {
                let id = match id {
                    IdRead::Valid(id) => Some(id),
                    IdRead::Null | IdRead::Absent => None,
                    IdRead::Invalid => {
                        return Err(Rejected {
                            answer: false,
                            ..reject("error `id` must be a string, an integer or null")
                        });
                    }
                };
                let Ok(obj) = serde_json::from_str::<ErrorObject<'a>>(error.get()) else {
                    return Err(Rejected {
                        answer: false,
                        ..reject(
                            "`error` must be an object with integer `code` and string `message`",
                        )
                    });
                };
                Ok(Envelope::Error {
                    id,
                    code: obj.code,
                    message: obj.message.0,
                    data: obj.data,
                })
            }
            (Some(_), Some(_)) => Err(Rejected {
                answer: false,
                ..reject("a response must not carry both `result` and `error`")
            }),
            (None, None) => Err(reject("neither a request, a notification nor a response")),
        }
    }
}

struct ErrorObject<'a> {
    code: i64,
    message: KeyName<'a>,
    data: Option<&'a RawValue>,
}

impl<'de> de::Deserialize<'de> for ErrorObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ErrorObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC error object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut code = None;
                let mut message = None;
                let mut data = None;
                while let Some(key) = map.next_key::<KeyName<'de>>()? {
                    match &*key.0 {
                        "code" => code = Some(map.next_value::<i64>()?),
                        "message" => message = Some(map.next_value::<KeyName<'de>>()?),
                        "data" => data = Some(map.next_value::<&'de RawValue>()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ErrorObject {
                    code: code.ok_or_else(|| de::Error::missing_field("code"))?,
                    message: message.ok_or_else(|| de::Error::missing_field("message"))?,
                    data,
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl Envelope<'_> {
    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Envelope::Request { method, .. } | Envelope::Notification { method, .. } => {
                Some(method)
            }
            _ => None,
        }
    }

    /// Converts into an owned [`Message`].
    pub fn to_owned(&self) -> Message {
        match self {
            Envelope::Request { id, method, params } => Message::Request {
                id: id.clone(),
                method: method.as_ref().into(),
                params: params.map(ToOwned::to_owned),
            },
            Envelope::Notification { method, params } => Message::Notification {
                method: method.as_ref().into(),
                params: params.map(ToOwned::to_owned),
            },
            Envelope::Response { id, result } => Message::Response {
                id: id.clone(),
                result: (*result).to_owned(),
            },
            Envelope::Error {
                id,
                code,
                message,
                data,
            } => Message::Error {
                id: id.clone(),
                error: Error::from_wire(
                    *code,
                    String::from(message.as_ref()),
                    data.map(ToOwned::to_owned),
                ),
            },
        }
    }
}

use alloc::borrow::ToOwned;

/// An owned JSON-RPC message.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// A request.
    Request {
        /// Id.
        id: RequestId,
        /// Method.
        method: Box<str>,
        /// Raw params.
        params: Option<Box<RawValue>>,
    },
    /// A notification.
    Notification {
        /// Method.
        method: Box<str>,
        /// Raw params.
        params: Option<Box<RawValue>>,
    },
    /// A successful response.
    Response {
        /// Id.
        id: RequestId,
        /// Raw result.
        result: Box<RawValue>,
    },
    /// An error response.
    Error {
        /// Id (`None` = null).
        id: Option<RequestId>,
        /// The error.
        error: Error,
    },
}

impl Message {
    /// Appends the message as compact JSON (no framing) to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Message::Request { id, method, params } => {
                write_request(out, id, method, params.as_deref())
            }
            Message::Notification { method, params } => {
                write_notification(out, method, params.as_deref())
            }
            Message::Response { id, result } => write_response(out, id, result),
            Message::Error { id, error } => {
                write_error(
                    out,
                    id.as_ref(),
                    error.code(),
                    error.message(),
                    error.data(),
                );
            }
        }
    }
}

const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\"";

/// Appends raw JSON and makes room for the `tail` bytes that close the message after it (and a
/// line end, for newline-delimited framing): a large value then grows `out` once, to its exact
/// size, instead of filling it to the brim and doubling it (copying the whole message) for the
/// closing brace.
fn append_raw(out: &mut Vec<u8>, raw: &RawValue, tail: usize) {
    let raw = raw.get().as_bytes();
    out.reserve(raw.len() + tail + 1);
    out.extend_from_slice(raw);
}

/// Makes room in `out` for a message of about `text` bytes of ids, names and values and
/// `punctuation` bytes of the rest: written into an empty buffer (a large reply's, handed over
/// by the last message), the message grows it once, not step by step from nothing.
fn room(out: &mut Vec<u8>, text: usize, punctuation: usize) {
    out.reserve(text + punctuation);
}

fn id_len(id: &RequestId) -> usize {
    match id {
        RequestId::Number(_) => 20,
        RequestId::String(s) => s.len() + 2,
    }
}

fn raw_len(raw: Option<&RawValue>) -> usize {
    raw.map_or(0, |r| r.get().len())
}

/// Appends a request.
pub fn write_request(out: &mut Vec<u8>, id: &RequestId, method: &str, params: Option<&RawValue>) {
    room(out, id_len(id) + method.len() + raw_len(params), 48);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(b",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"method\":");
    write_json_str(out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        append_raw(out, p, 1);
    }
    out.push(b'}');
}

/// Appends a notification.
pub fn write_notification(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    room(out, method.len() + raw_len(params), 48);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(b",\"method\":");
    write_json_str(out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        append_raw(out, p, 1);
    }
    out.push(b'}');
}

/// Appends a successful response.
pub fn write_response(out: &mut Vec<u8>, id: &RequestId, result: &RawValue) {
    room(out, id_len(id) + result.get().len(), 48);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(b",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"result\":");
    append_raw(out, result, 1);
    out.push(b'}');
}

/// Appends an error response (`id: None` writes `"id":null`).
pub fn write_error(
    out: &mut Vec<u8>,
    id: Option<&RequestId>,
    code: i64,
    message: &str,
    data: Option<&RawValue>,
) {
    room(
        out,
        id.map_or(4, id_len) + message.len() + raw_len(data),
        96,
    );
    out.extend_from_slice(HEAD);
    out.extend_from_slice(b",\"id\":");
    match id {
        Some(id) => id.write_json(out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"error\":{\"code\":");
    RequestId::Number(code).write_json(out);
    out.extend_from_slice(b",\"message\":");
    write_json_str(out, message);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        append_raw(out, d, 2);
    }
    out.extend_from_slice(b"}}");
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether one of the eight bytes of `w` may need escaping (`"`, `\` or below 0x20). It has
/// no false negatives; a false positive only sends the bytes through the exact check.
fn may_need_escape(w: u64) -> bool {
    escape_bits(w) != 0
}

/// The high bit of each byte of `w` that may need escaping (see [`may_need_escape`]).
fn escape_bits(w: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | control
}

/// Whether one of the 32 bytes of `chunk` may need escaping: four words tested with one
/// branch.
fn block_may_need_escape(chunk: &[u8; 32]) -> bool {
    let mut bits = 0;
    for word in chunk.chunks_exact(8) {
        bits |= escape_bits(u64::from_le_bytes(
            <[u8; 8]>::try_from(word).unwrap_or([0; 8]),
        ));
    }
    bits != 0
}

/// Appends `s` to `out` as a JSON string literal, quoted and escaped exactly as `serde_json`
/// escapes it (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00XX`), so that the text is the same whichever writes it. Runs of eight bytes that need no
/// escape are skipped a word at a time.
///
/// ```
/// let mut out = Vec::new();
/// mcp_proto::jsonrpc::write_json_str(&mut out, "a \"quoted\"\tline\u{1}");
/// assert_eq!(out, br#""a \"quoted\"\tline\u0001""#);
/// ```
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    loop {
        while let Some(block) = bytes
            .get(i..i + 32)
            .and_then(|b| <&[u8; 32]>::try_from(b).ok())
        {
            if block_may_need_escape(block) {
                break;
            }
            i += 32;
        }
        while let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]));
            if may_need_escape(word) {
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
            out.push(HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0'));
        } else {
            out.extend_from_slice(escape);
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
    out.push(b'"');
}

/// Whether `needle` occurs in `haystack`: a plain comparison on short input, a SIMD search
/// (`memchr::memmem`) on long input, where building its searcher pays for itself.
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    if haystack.len() < 512 {
        return needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle);
    }
    memchr::memmem::find(haystack, needle).is_some()
}

/// Whether `body` (one JSON-RPC message or a batch) carries a request, which a peer may act on
/// each time it receives it. Notifications, responses and errors only do not; a body that is
/// not JSON-RPC counts as carrying one (what it is cannot be told). Only a body that mentions
/// `"method"` is parsed.
///
/// ```
/// use mcp_proto::jsonrpc::carries_request;
/// assert!(carries_request(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#));
/// assert!(!carries_request(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
/// assert!(!carries_request(br#"{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}"#));
/// assert!(carries_request(b"[{"));
/// ```
pub fn carries_request(body: &[u8]) -> bool {
    if !contains(body, b"\"method\"") && mentions_answer(body) {
        return false;
    }
    let request = |e: &Result<Envelope<'_>, Rejected>| {
        !matches!(
            e,
            Ok(Envelope::Notification { .. } | Envelope::Response { .. } | Envelope::Error { .. })
        )
    };
    match parse(body) {
        Parsed::Single(e) => request(&e),
        Parsed::Batch(items) => items.iter().any(request),
        #[allow(unreachable_patterns)]
        _ => true,
    }
}

/// Whether `body` may hold a JSON-RPC answer: it mentions `"result"` or `"error"` (as a
/// member name, or the same text inside a string). A body that does not is no response and no
/// error, whatever else it is; one that does is worth parsing to find out.
///
/// ```
/// use mcp_proto::jsonrpc::mentions_answer;
/// assert!(mentions_answer(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
/// assert!(!mentions_answer(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
/// ```
pub fn mentions_answer(body: &[u8]) -> bool {
    contains(body, b"\"result\"") || contains(body, b"\"error\"")
}

/// Whether `json` contains the text `"_meta"` (a key, or the same text inside a string): a
/// message with none has no `_meta` to read, and its params need no second parse.
///
/// `memchr` for `_` then a compare: no searcher to build per call (as `memmem::find` does,
/// which costs more than the whole search on the short params most requests carry), and
/// SIMD speed over a large argument.
/// ```
/// use mcp_proto::jsonrpc::mentions_meta;
/// assert!(mentions_meta(r#"{"_meta":{"progressToken":1}}"#));
/// assert!(!mentions_meta(r#"{"name":"x_meta"}"#));
/// ```
pub fn mentions_meta(json: &str) -> bool {
    let bytes = json.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes
        .get(from..)
        .and_then(|rest| memchr::memchr(b'_', rest))
    {
        let at = from + i;
        if at > 0
            && bytes.get(at - 1) == Some(&b'"')
            && bytes.get(at + 1..at + 6) == Some(b"meta\"".as_slice())
        {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Serialises `value` into a boxed [`RawValue`].
///
/// # Errors
/// [`ErrorKind::Internal`] (-32603) when `value`'s `Serialize` fails (a map with non-string
/// keys, a custom implementation's error).
pub fn to_raw<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(value)
        .map_err(|e| Error::new(ErrorKind::Internal, alloc::format!("serialise: {e}")))
}

/// The raw JSON `{}`.
pub fn empty_object() -> Box<RawValue> {
    // "{}" is valid JSON; `from_string` cannot fail on it, but stay total.
    RawValue::from_string(String::from("{}")).unwrap_or_else(|_| null_raw())
}

fn null_raw() -> Box<RawValue> {
    serde_json::value::to_raw_value(&()).unwrap_or_else(|_| Box::<RawValue>::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Result<Envelope<'_>, Rejected> {
        match parse(s.as_bytes()) {
            Parsed::Single(r) => r,
            Parsed::Batch(_) => panic!("batch"),
        }
    }

    #[test]
    fn a_large_value_grows_the_message_once_to_its_size() {
        let big = alloc::format!("\"{}\"", "x".repeat(100_000));
        let raw = serde_json::value::RawValue::from_string(big).unwrap();
        let id = RequestId::Number(7);
        type Writer<'a> = &'a dyn Fn(&mut Vec<u8>);
        let writers: [Writer<'_>; 4] = [
            &|out| write_response(out, &id, &raw),
            &|out| write_request(out, &id, "m", Some(&raw)),
            &|out| write_notification(out, "m", Some(&raw)),
            &|out| write_error(out, Some(&id), -1, "e", Some(&raw)),
        ];
        for write in writers {
            let mut out = Vec::new();
            write(&mut out);
            assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
            // Grown once, to about its size: the closing brace did not double the buffer.
            assert!(
                out.capacity() < out.len() + 128,
                "{} {}",
                out.capacity(),
                out.len()
            );
        }
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_anywhere() {
        for input in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"k\":\"\xc3\"}}",
            b"[{\"jsonrpc\":\"2.0\",\"method\":\"\xe2\x82\"}]",
            b"\xff",
        ] {
            let Parsed::Single(Err(r)) = parse(input) else {
                panic!("accepted {input:?}");
            };
            assert_eq!(r.error.kind(), ErrorKind::Parse);
            assert_eq!(r.id, None);
            if input.first() != Some(&b'[') {
                assert_eq!(parse_one(input).unwrap_err(), r);
            }
        }
        // Multi-byte text is fine, in strings and in raw params.
        let env = one("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"é\",\"params\":{\"k\":\"ü€\"}}")
            .unwrap();
        assert!(matches!(env, Envelope::Request { .. }));
    }

    #[test]
    fn request_notification_response_error() {
        let Envelope::Request { id, method, params } =
            one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(id, RequestId::Number(1));
        assert_eq!(method, "tools/call");
        assert!(matches!(method, Cow::Borrowed(_)));
        assert_eq!(params.unwrap().get(), r#"{"name":"x"}"#);

        let Envelope::Notification { method, params } =
            one(r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(method, "notifications/initialized");
        assert!(params.is_none());

        let Envelope::Response { id, result } =
            one(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(id, RequestId::from("a"));
        assert_eq!(result.get(), "{}");

        let Envelope::Error {
            id,
            code,
            message,
            data,
        } = one(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1]}}"#,
        )
        .unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (id, code, &*message, data.unwrap().get()),
            (None, -32700, "bad", "[1]")
        );
    }

    #[test]
    fn escaped_strings_and_unknown_members() {
        let e =
            one(r#"{"jsonrpc":"2.0","id":"a\"b","method":"x\/y","extra":{"deep":[1,2]}}"#).unwrap();
        let Envelope::Request { id, method, .. } = e else {
            panic!()
        };
        assert_eq!(id, RequestId::from("a\"b"));
        assert_eq!(method, "x/y");
    }

    #[test]
    fn parse_errors_are_32700_without_id() {
        for bad in ["", "{", "nope", "{\"jsonrpc\":\"2.0\",", "\u{1}"] {
            let r = one(bad).unwrap_err();
            assert_eq!(r.error.kind(), ErrorKind::Parse, "{bad:?}");
            assert_eq!(r.id, None);
            assert!(r.answer);
        }
    }

    #[test]
    fn invalid_requests_are_32600_with_id_when_readable() {
        let cases: &[(&str, Option<RequestId>, bool)] = &[
            ("1", None, true),
            ("\"x\"", None, true),
            (r#"{"id":3,"method":"m"}"#, Some(RequestId::Number(3)), true),
            (
                r#"{"jsonrpc":"1.0","id":3,"method":"m"}"#,
                Some(RequestId::Number(3)),
                true,
            ),
            (r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, None, true),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, None, true),
            (r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, None, true),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
                Some(RequestId::Number(4)),
                true,
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"m","params":3}"#,
                Some(RequestId::Number(5)),
                true,
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"m","result":{}}"#,
                Some(RequestId::Number(6)),
                true,
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"id":8,"method":"m"}"#,
                Some(RequestId::Number(8)),
                true,
            ),
            (r#"{"jsonrpc":"2.0"}"#, None, true),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
                Some(RequestId::Number(1)),
                false,
            ),
            (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, None, false),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}"#,
                Some(RequestId::Number(1)),
                false,
            ),
        ];
        for (input, id, answer) in cases {
            let r = one(input).unwrap_err();
            assert_eq!(r.error.kind(), ErrorKind::ProtocolInvalid, "{input}");
            assert_eq!(&r.id, id, "{input}");
            assert_eq!(r.answer, *answer, "{input}");
        }
    }

    #[test]
    fn null_params_count_as_absent() {
        let Envelope::Notification { params, .. } =
            one(r#"{"jsonrpc":"2.0","method":"m","params":null}"#).unwrap()
        else {
            panic!()
        };
        assert!(params.is_none());
    }

    #[test]
    fn batches() {
        let Parsed::Batch(items) = parse(
            br#" [{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"b"}]"#,
        ) else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(items[0].is_ok());
        assert_eq!(
            items[1].as_ref().unwrap_err().error.kind(),
            ErrorKind::ProtocolInvalid
        );
        assert!(matches!(items[2], Ok(Envelope::Notification { .. })));
        let Parsed::Single(Err(r)) = parse(b"[]") else {
            panic!()
        };
        assert_eq!(r.error.kind(), ErrorKind::ProtocolInvalid);
        let Parsed::Single(Err(r)) = parse(b"[1,") else {
            panic!()
        };
        assert_eq!(r.error.kind(), ErrorKind::Parse);
    }

    #[test]
    fn writers_produce_parseable_json() {
        let params = RawValue::from_string(r#"{"a":"b"}"#.into()).unwrap();
        let mut out = Vec::new();
        write_request(
            &mut out,
            &RequestId::Number(-9),
            "tools/\"call",
            Some(&params),
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], -9);
        assert_eq!(v["method"], "tools/\"call");
        assert_eq!(v["params"]["a"], "b");
        out.clear();
        write_error(&mut out, None, -32700, "bad\u{1}", Some(&params));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], serde_json::Value::Null);
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["error"]["message"], "bad\u{1}");
        out.clear();
        write_notification(&mut out, "n", None);
        assert_eq!(out, br#"{"jsonrpc":"2.0","method":"n"}"#);
        out.clear();
        write_response(&mut out, &RequestId::from("x"), &empty_object());
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":"x","result":{}}"#);
    }

    #[test]
    fn owned_roundtrip() {
        let input = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"no"}}"#;
        let msg = one(input).unwrap().to_owned();
        let mut out = Vec::new();
        msg.write(&mut out);
        assert_eq!(core::str::from_utf8(&out).unwrap(), input);
        let Message::Error { error, .. } = msg else {
            panic!()
        };
        assert_eq!(error.kind(), ErrorKind::Unauthorized);
    }

    #[test]
    fn json_str_escaping_matches_serde() {
        let s = "a\"b\\c\n\r\t\u{8}\u{c}\u{0}\u{1f}é😀";
        let mut out = Vec::new();
        write_json_str(&mut out, s);
        let back: String = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, s);
        // The same text as serde_json's at every length and alignment of the escapes (the
        // word-at-a-time skip), every character below 0x80 included.
        let chars: Vec<char> = (0u8..0x80).map(char::from).chain(['é', '😀']).collect();
        for len in 0..40 {
            for shift in 0..chars.len() {
                let s: String = (0..len)
                    .map(|i| {
                        if i % 5 == 0 {
                            chars[(i + shift) % chars.len()]
                        } else {
                            'x'
                        }
                    })
                    .collect();
                let mut out = Vec::new();
                write_json_str(&mut out, &s);
                assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
            }
        }
        // One escape anywhere in a long run (the 32-byte blocks, then the words, then bytes).
        for at in 0..100 {
            for c in ['"', '\\', '\u{1f}', '\n', 'é'] {
                let mut s: String = "x".repeat(100);
                s.replace_range(at..at + 1, c.encode_utf8(&mut [0; 4]));
                let mut out = Vec::new();
                write_json_str(&mut out, &s);
                assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
            }
        }
    }

    #[test]
    fn contains_and_mentions_answer() {
        assert!(contains(b"ab\"result\"", b"\"result\""));
        assert!(contains(b"\"\"result\"", b"\"result\""));
        assert!(!contains(b"\"resul", b"\"result\""));
        assert!(!contains(b"", b"x"));
        assert!(contains(b"", b""));
        // Long input takes the SIMD search: found at the very end, or not at all.
        let mut long = alloc::vec![b'x'; 70_000];
        assert!(!mentions_answer(&long));
        long.extend_from_slice(b"\"error\"");
        assert!(mentions_answer(&long));
        let at_start = [b"\"result\"".as_slice(), &[b'y'; 1000]].concat();
        assert!(mentions_answer(&at_start));
        assert!(!mentions_answer(&[b'"'; 1000]));
    }
}
