//! The one error type of the project.
//!
//! Every failure — a peer's JSON-RPC error, a local timeout, a closed transport, a refused
//! command — is an [`Error`] with a stable [`ErrorKind`] and, where it came from another error
//! (an IO error, a JSON error, an application's own), that error as its
//! [`source`](core::error::Error::source).
//!
//! Each kind has a code ([`ErrorKind::code`]), and a peer's code maps back to the wire kind it
//! stands for ([`ErrorKind::from_code`]; never to a local kind). Kinds that only describe this side's situation
//! ([`ErrorKind::is_local`]: a timeout, a closed or failed transport, a duplicate registration,
//! a failed handler, a cancellation) are never put on the wire with their own code: a session
//! that answers a peer with one (a handler returned it) sends `-32603` internal error with its
//! message ([`ErrorKind::wire_code`]). `-32005`, `-32006` and `-32008` are this implementation's answers to a
//! peer's protocol misuse, in the range JSON-RPC leaves to implementations (-32000…-32019 in
//! the 2026-07-28 partition).
//!
//! | kind | code | meaning |
//! |---|---|---|
//! | `Parse` | -32700 | the peer sent bytes that are not JSON |
//! | `ProtocolInvalid` | -32600 | a structurally wrong JSON-RPC message, a batch where none is allowed |
//! | `MethodNotFound` | -32601 | unknown method, or a capability that was not negotiated |
//! | `InvalidParams` | -32602 | parameters that do not fit the method |
//! | `Internal` | -32603 | an internal error of the peer |
//! | `TransportClosed` | local (-32000) | the connection ended before the outcome was known |
//! | `Unauthorized` | -32001 | the authorizer refused the call |
//! | `NotFound` | -32002 | resource (or other named thing) not found (-32602 in 2026-07-28) |
//! | `Timeout` | local (-32003) | the request timed out |
//! | `TransportError` | local (-32004) | the transport failed (IO error, oversized frame) |
//! | `NotInitialized` | -32005 | a request that needs the handshake arrived before it |
//! | `AlreadyConnected` | -32006 | a second `initialize`, or connecting twice |
//! | `DuplicateRegistration` | local (-32007) | a tool/resource/prompt registered twice |
//! | `LimitExceeded` | -32008 | too many requests in flight, message too large |
//! | `HandlerFailed` | local (-32010) | an application handler returned an error |
//! | `ProtocolVersionMismatch` | -32022 | no common protocol version |
//! | `RequestCancelled` | local (-32800) | the request was cancelled |
//! | `UrlElicitationRequired` | -32042 | 2025-11-25 URL elicitation required |
//! | `Other` | any other code | a code this crate does not know |

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;
use serde_json::value::RawValue;

/// What went wrong, stable across releases (match on this, not on messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// -32700: the input is not valid JSON.
    Parse,
    /// -32600: a structurally invalid JSON-RPC message.
    ProtocolInvalid,
    /// -32601: the method does not exist or is not available.
    MethodNotFound,
    /// -32602: invalid method parameters.
    InvalidParams,
    /// -32603: internal error.
    Internal,
    /// -32000: the transport closed before an outcome was known.
    TransportClosed,
    /// -32001: the caller is not authorized.
    Unauthorized,
    /// -32002: the named resource (or prompt, tool, request) was not found.
    NotFound,
    /// -32003: the request timed out.
    Timeout,
    /// -32004: the transport failed.
    TransportError,
    /// -32005: the session is not initialized yet.
    NotInitialized,
    /// -32006: the session is already initialized / connected.
    AlreadyConnected,
    /// -32007: a name was registered twice.
    DuplicateRegistration,
    /// -32008: a bound (in-flight requests, message size) was exceeded.
    LimitExceeded,
    /// -32010: an application handler failed.
    HandlerFailed,
    /// -32020: an HTTP header disagrees with the body, or a required one is missing
    /// (2026-07-28 `HeaderMismatch`).
    HeaderMismatch,
    /// -32021: the request needs a client capability the client did not declare (2026-07-28
    /// `MissingRequiredClientCapability`; `data.requiredCapabilities` names it).
    MissingClientCapability,
    /// -32022: the peers share no protocol version.
    ProtocolVersionMismatch,
    /// -32800: the request was cancelled.
    RequestCancelled,
    /// -32042: URL-mode elicitation is required first (2025-11-25).
    UrlElicitationRequired,
    /// A code this crate does not know.
    Other,
}

impl ErrorKind {
    /// Whether this kind only describes this side's situation (see the module doc): a session
    /// never answers a peer with its code, but with `-32603` internal error.
    pub const fn is_local(self) -> bool {
        matches!(
            self,
            ErrorKind::TransportClosed
                | ErrorKind::Timeout
                | ErrorKind::TransportError
                | ErrorKind::DuplicateRegistration
                | ErrorKind::HandlerFailed
                | ErrorKind::RequestCancelled
        )
    }

    /// The code of this kind: the JSON-RPC code it travels as, or, for a local kind, a code
    /// that never leaves this process (a session answering a peer sends a local kind as
    /// `-32603`, [`wire_code`](Self::wire_code), and [`from_code`](Self::from_code) never
    /// gives a local kind but [`RequestCancelled`](Self::RequestCancelled)).
    pub const fn code(self) -> i64 {
        match self {
            ErrorKind::Parse => -32700,
            ErrorKind::ProtocolInvalid => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::Internal => -32603,
            ErrorKind::TransportClosed => -32000,
            ErrorKind::Unauthorized => -32001,
            ErrorKind::NotFound => -32002,
            ErrorKind::Timeout => -32003,
            ErrorKind::TransportError => -32004,
            ErrorKind::NotInitialized => -32005,
            ErrorKind::AlreadyConnected => -32006,
            ErrorKind::DuplicateRegistration => -32007,
            ErrorKind::LimitExceeded => -32008,
            ErrorKind::HandlerFailed => -32010,
            ErrorKind::HeaderMismatch => -32020,
            ErrorKind::MissingClientCapability => -32021,
            ErrorKind::ProtocolVersionMismatch => -32022,
            ErrorKind::RequestCancelled => -32800,
            ErrorKind::UrlElicitationRequired => -32042,
            ErrorKind::Other => -32603,
        }
    }

    /// The code an answer of this kind carries to the peer: [`code`](Self::code), or `-32603`
    /// internal error for a local kind.
    pub const fn wire_code(self) -> i64 {
        if self.is_local() { -32603 } else { self.code() }
    }

    /// The kind a wire code stands for. A peer's code is never taken for one of this side's
    /// local outcomes (a timeout, a failed transport, a failed handler): servers use `-32000`
    /// and its neighbours for errors of their own, so those are [`Other`](Self::Other) with
    /// their code kept. `-32800` is the peer reporting a cancellation.
    pub const fn from_code(code: i64) -> ErrorKind {
        match code {
            -32700 => ErrorKind::Parse,
            -32600 => ErrorKind::ProtocolInvalid,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidParams,
            -32603 => ErrorKind::Internal,
            -32001 => ErrorKind::Unauthorized,
            -32002 => ErrorKind::NotFound,
            -32005 => ErrorKind::NotInitialized,
            -32006 => ErrorKind::AlreadyConnected,
            -32008 => ErrorKind::LimitExceeded,
            -32020 => ErrorKind::HeaderMismatch,
            -32021 => ErrorKind::MissingClientCapability,
            -32022 => ErrorKind::ProtocolVersionMismatch,
            -32800 => ErrorKind::RequestCancelled,
            -32042 => ErrorKind::UrlElicitationRequired,
            _ => ErrorKind::Other,
        }
    }

    /// A short human-readable name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse error",
            ErrorKind::ProtocolInvalid => "invalid request",
            ErrorKind::MethodNotFound => "method not found",
            ErrorKind::InvalidParams => "invalid params",
            ErrorKind::Internal => "internal error",
            ErrorKind::TransportClosed => "transport closed",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::NotFound => "not found",
            ErrorKind::Timeout => "request timed out",
            ErrorKind::TransportError => "transport error",
            ErrorKind::NotInitialized => "not initialized",
            ErrorKind::AlreadyConnected => "already connected",
            ErrorKind::DuplicateRegistration => "duplicate registration",
            ErrorKind::LimitExceeded => "limit exceeded",
            ErrorKind::HandlerFailed => "handler failed",
            ErrorKind::HeaderMismatch => "header mismatch",
            ErrorKind::MissingClientCapability => "missing required client capability",
            ErrorKind::ProtocolVersionMismatch => "protocol version mismatch",
            ErrorKind::RequestCancelled => "request cancelled",
            ErrorKind::UrlElicitationRequired => "URL elicitation required",
            ErrorKind::Other => "error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An MCP error: a kind, the wire code, a message, optional JSON `data`, and the error it
/// came from, if any ([`source`](core::error::Error::source); never sent to the peer).
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    code: i64,
    message: Cow<'static, str>,
    data: Option<Box<RawValue>>,
    source: Option<Arc<dyn core::error::Error + Send + Sync + 'static>>,
}

/// A JSON-RPC error object as it travels: what a peer sent, or what it will receive.
///
/// An [`Error`] is this side's view of a failure (a stable [`kind`](Error::kind), a message,
/// the error it came from); an `ErrorObject` is only the wire form. Going to the wire,
/// [`Error::to_object`] applies the one rule: a local kind (a timeout, a failed transport or
/// handler, [`ErrorKind::is_local`]) has no code a peer knows and goes as `-32603` internal
/// error with its message. Coming from the wire, [`Error::from`] takes the kind the code
/// stands for ([`ErrorKind::from_code`], never a local one).
///
/// ```
/// use mcp_proto::{Error, ErrorKind, ErrorObject};
///
/// let timeout = Error::new(ErrorKind::Timeout, "the database did not answer");
/// let wire = timeout.to_object();
/// assert_eq!((wire.code, wire.message.as_ref()), (-32603, "the database did not answer"));
///
/// let from_peer = Error::from(ErrorObject::new(-32602, "missing `uri`"));
/// assert_eq!(from_peer.kind(), ErrorKind::InvalidParams);
/// let theirs = Error::from(ErrorObject::new(-32003, "the server's own error"));
/// assert_eq!((theirs.kind(), theirs.code()), (ErrorKind::Other, -32003));
/// ```
#[derive(Debug, Clone)]
pub struct ErrorObject {
    /// The JSON-RPC code.
    pub code: i64,
    /// The message.
    pub message: Cow<'static, str>,
    /// The JSON `data`, if any.
    pub data: Option<Box<RawValue>>,
}

impl ErrorObject {
    /// An error object without data.
    pub fn new(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl From<ErrorObject> for Error {
    /// The error a peer reported: the kind its code stands for.
    fn from(o: ErrorObject) -> Self {
        Error::from_wire(o.code, o.message, o.data)
    }
}

impl fmt::Display for Error {
    /// `kind (code): message`; a local kind shows no code (it has none of its own).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_local_only() {
            write!(f, "{}: {}", self.kind, self.message)
        } else {
            write!(f, "{} ({}): {}", self.kind, self.code, self.message)
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn core::error::Error + 'static))
    }
}

/// An IO error in a handler (`?` on it) is the handler's failure; the IO error is its source.
#[cfg(feature = "std")]
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::handler(e)
    }
}

/// A JSON error in a handler (`?` on it) is the handler's failure; the JSON error is its
/// source.
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::handler(e)
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl Error {
    /// A new error of `kind` with its standard code.
    pub fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Error {
            kind,
            code: kind.code(),
            message: message.into(),
            data: None,
            source: None,
        }
    }

    /// An error as received from the wire: the kind is derived from the code.
    pub fn from_wire(
        code: i64,
        message: impl Into<Cow<'static, str>>,
        data: Option<Box<RawValue>>,
    ) -> Self {
        Error {
            kind: ErrorKind::from_code(code),
            code,
            message: message.into(),
            data,
            source: None,
        }
    }

    /// An error of `kind` caused by `source`: its message is the source's, and the source stays
    /// reachable through [`source`](core::error::Error::source).
    ///
    /// ```
    /// use mcp_proto::{Error, ErrorKind};
    /// use core::error::Error as _;
    ///
    /// #[derive(Debug)]
    /// struct NoSuchNote(u32);
    /// impl core::fmt::Display for NoSuchNote {
    ///     fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
    ///         write!(f, "no note {}", self.0)
    ///     }
    /// }
    /// impl core::error::Error for NoSuchNote {}
    ///
    /// let e = Error::caused_by(ErrorKind::HandlerFailed, NoSuchNote(7));
    /// assert_eq!(e.message(), "no note 7");
    /// assert_eq!(e.kind().wire_code(), -32603, "a peer gets it as an internal error");
    /// assert!(e.source().unwrap().downcast_ref::<NoSuchNote>().is_some());
    /// ```
    pub fn caused_by(
        kind: ErrorKind,
        source: impl core::error::Error + Send + Sync + 'static,
    ) -> Self {
        let message = alloc::string::ToString::to_string(&source);
        Error {
            kind,
            code: kind.code(),
            message: message.into(),
            data: None,
            source: Some(Arc::new(source)),
        }
    }

    /// A handler's failure caused by `source` (any error type: `.map_err(Error::handler)?`).
    pub fn handler(source: impl core::error::Error + Send + Sync + 'static) -> Self {
        Error::caused_by(ErrorKind::HandlerFailed, source)
    }

    /// Attaches the error this one came from.
    pub fn with_source(mut self, source: impl core::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// Attaches JSON `data`.
    pub fn with_data(mut self, data: Box<RawValue>) -> Self {
        self.data = Some(data);
        self
    }

    /// Overrides the wire code (e.g. a version-specific code for the same kind).
    pub fn with_code(mut self, code: i64) -> Self {
        self.code = code;
        self
    }

    /// The stable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The JSON-RPC code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON `data`, if any.
    pub fn data(&self) -> Option<&RawValue> {
        self.data.as_deref()
    }

    /// -32700 parse error.
    pub fn parse(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::Parse, message)
    }
    /// -32600 invalid request.
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::ProtocolInvalid, message)
    }
    /// -32601 method not found.
    pub fn method_not_found(method: &str) -> Self {
        Error::new(
            ErrorKind::MethodNotFound,
            alloc::format!("method not found: {method}"),
        )
    }
    /// -32602 invalid params.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::InvalidParams, message)
    }
    /// Something the request names does not exist (a note, a record, a file): kind
    /// [`ErrorKind::NotFound`], -32002. A server's handler returns it as a JSON-RPC error (not
    /// a tool's `isError` result); from a resource handler it becomes
    /// [`resource_not_found`](Self::resource_not_found) for the URI read, with the code the
    /// request's version uses.
    ///
    /// ```
    /// use mcp_proto::{Error, ErrorKind};
    /// let e = Error::not_found("no note 7");
    /// assert_eq!((e.kind(), e.code()), (ErrorKind::NotFound, -32002));
    /// ```
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::NotFound, message)
    }
    /// A `resources/read` of a URI the server does not serve, as `version` answers it: -32002
    /// before 2026-07-28, -32602 since, with `data.uri` either way.
    ///
    /// ```
    /// use mcp_proto::{Error, ProtocolVersion};
    /// let e = Error::resource_not_found("memo://x", ProtocolVersion::V2026_07_28);
    /// assert_eq!(e.code(), -32602);
    /// assert_eq!(e.data().unwrap().get(), r#"{"uri":"memo://x"}"#);
    /// ```
    pub fn resource_not_found(uri: &str, version: crate::ProtocolVersion) -> Self {
        let mut data = alloc::vec::Vec::with_capacity(uri.len() + 10);
        data.extend_from_slice(b"{\"uri\":");
        crate::jsonrpc::write_json_str(&mut data, uri);
        data.push(b'}');
        let error = Error::new(
            ErrorKind::NotFound,
            alloc::format!("Resource not found: {uri}"),
        )
        .with_code(version.resource_not_found_code());
        match alloc::string::String::from_utf8(data)
            .ok()
            .and_then(|d| RawValue::from_string(d).ok())
        {
            Some(data) => error.with_data(data),
            None => error,
        }
    }
    /// -32603 internal error.
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }
    /// A handler's failure.
    pub fn handler_failed(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::HandlerFailed, message)
    }

    /// Splits into its parts (code, message, data), as they are: for the wire form use
    /// [`into_object`](Self::into_object).
    pub fn into_parts(self) -> (i64, Cow<'static, str>, Option<Box<RawValue>>) {
        (self.code, self.message, self.data)
    }

    /// Whether this is a local outcome with no code of its own for a peer (a local kind whose
    /// code was not overridden).
    fn is_local_only(&self) -> bool {
        self.kind.is_local() && self.code == self.kind.code()
    }

    /// What a peer receives for this error (see [`ErrorObject`]).
    pub fn to_object(&self) -> ErrorObject {
        self.clone().into_object()
    }

    /// What a peer receives for this error, consuming it (see [`ErrorObject`]).
    pub fn into_object(self) -> ErrorObject {
        let code = if self.is_local_only() {
            ErrorKind::Internal.code()
        } else {
            self.code
        };
        ErrorObject {
            code,
            message: self.message,
            data: self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorKind; 18] = [
        ErrorKind::Parse,
        ErrorKind::ProtocolInvalid,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::TransportClosed,
        ErrorKind::Unauthorized,
        ErrorKind::NotFound,
        ErrorKind::Timeout,
        ErrorKind::TransportError,
        ErrorKind::NotInitialized,
        ErrorKind::AlreadyConnected,
        ErrorKind::DuplicateRegistration,
        ErrorKind::LimitExceeded,
        ErrorKind::HandlerFailed,
        ErrorKind::ProtocolVersionMismatch,
        ErrorKind::RequestCancelled,
        ErrorKind::UrlElicitationRequired,
    ];

    #[test]
    fn every_wire_kind_roundtrips_through_its_code() {
        for k in ALL {
            assert!(!k.as_str().is_empty());
            if k.is_local() && k != ErrorKind::RequestCancelled {
                // A peer's -32000, -32003, ... is an error of its own, not this side's timeout.
                assert_eq!(ErrorKind::from_code(k.code()), ErrorKind::Other, "{k:?}");
            } else {
                assert_eq!(ErrorKind::from_code(k.code()), k, "{k:?}");
            }
            if k.is_local() {
                assert_eq!(
                    k.wire_code(),
                    -32603,
                    "{k:?} goes to a peer as an internal error"
                );
            } else {
                assert_eq!(k.wire_code(), k.code());
            }
        }
        assert_eq!(ErrorKind::from_code(-31999), ErrorKind::Other);
        assert_eq!(ErrorKind::Unauthorized.code(), -32001);
    }

    #[test]
    fn a_source_stays_reachable_and_local_kinds_show_no_code() {
        use core::error::Error as _;
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let e = Error::from(json);
        assert_eq!(e.kind(), ErrorKind::HandlerFailed);
        assert_eq!(e.kind().wire_code(), -32603);
        assert!(e.source().unwrap().is::<serde_json::Error>());
        let shown = alloc::string::ToString::to_string(&e);
        assert!(
            shown.starts_with("handler failed: expected value"),
            "{shown}"
        );
        #[cfg(feature = "std")]
        {
            let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such note");
            let e = Error::from(io);
            assert_eq!(e.message(), "no such note");
            assert!(e.source().unwrap().is::<std::io::Error>());
        }
        let e = Error::new(ErrorKind::Timeout, "late").with_source(Error::internal("inner"));
        assert_eq!(
            alloc::string::ToString::to_string(&e),
            "request timed out: late"
        );
        assert!(e.source().unwrap().is::<Error>());
        assert!(Error::internal("x").source().is_none());
    }

    #[test]
    fn display_and_parts() {
        let e = Error::invalid_params("bad cursor");
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        assert_eq!(e.code(), -32602);
        assert_eq!(
            alloc::string::ToString::to_string(&e),
            "invalid params (-32602): bad cursor"
        );
        let data = RawValue::from_string("{\"a\":1}".into()).unwrap();
        let e = Error::from_wire(-32002, "nope", Some(data));
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(e.data().unwrap().get(), "{\"a\":1}");
        let e = e.with_code(-32602);
        assert_eq!(e.code(), -32602);
        let (c, m, d) = e.into_parts();
        assert_eq!((c, &*m, d.is_some()), (-32602, "nope", true));
    }
}
