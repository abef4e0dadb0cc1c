//! The one error type of the project.
//!
//! Every failure — a peer's JSON-RPC error, a local timeout, a closed transport, a refused
//! command — is an [`Error`] with a stable [`ErrorKind`]. Each kind maps to the JSON-RPC code
//! it travels as on the wire ([`ErrorKind::code`]), and a wire code maps back to a kind
//! ([`ErrorKind::from_code`]).
//!
//! | kind | code | meaning |
//! |---|---|---|
//! | `Parse` | -32700 | the peer sent bytes that are not JSON |
//! | `ProtocolInvalid` | -32600 | a structurally wrong JSON-RPC message, a batch where none is allowed |
//! | `MethodNotFound` | -32601 | unknown method, or a capability that was not negotiated |
//! | `InvalidParams` | -32602 | parameters that do not fit the method |
//! | `Internal` | -32603 | an internal error of the peer |
//! | `TransportClosed` | -32000 | the connection ended before the outcome was known |
//! | `Unauthorized` | -32001 | the authorizer refused the call |
//! | `NotFound` | -32002 | resource (or other named thing) not found (-32602 in 2026-07-28) |
//! | `Timeout` | -32003 | the request timed out |
//! | `TransportError` | -32004 | the transport failed (IO error, oversized frame) |
//! | `NotInitialized` | -32005 | a request that needs the handshake arrived before it |
//! | `AlreadyConnected` | -32006 | a second `initialize`, or connecting twice |
//! | `DuplicateRegistration` | -32007 | a tool/resource/prompt registered twice |
//! | `LimitExceeded` | -32008 | too many requests in flight, message too large |
//! | `HandlerFailed` | -32010 | an application handler returned an error |
//! | `ProtocolVersionMismatch` | -32022 | no common protocol version |
//! | `RequestCancelled` | -32800 | the request was cancelled |
//! | `UrlElicitationRequired` | -32042 | 2025-11-25 URL elicitation required |
//! | `Other` | any other code | a code this crate does not know |

use alloc::borrow::Cow;
use alloc::boxed::Box;
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
    /// The JSON-RPC error code this kind travels as.
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
            ErrorKind::ProtocolVersionMismatch => -32022,
            ErrorKind::RequestCancelled => -32800,
            ErrorKind::UrlElicitationRequired => -32042,
            ErrorKind::Other => -32603,
        }
    }

    /// The kind a wire code stands for.
    pub const fn from_code(code: i64) -> ErrorKind {
        match code {
            -32700 => ErrorKind::Parse,
            -32600 => ErrorKind::ProtocolInvalid,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidParams,
            -32603 => ErrorKind::Internal,
            -32000 => ErrorKind::TransportClosed,
            -32001 => ErrorKind::Unauthorized,
            -32002 => ErrorKind::NotFound,
            -32003 => ErrorKind::Timeout,
            -32004 => ErrorKind::TransportError,
            -32005 => ErrorKind::NotInitialized,
            -32006 => ErrorKind::AlreadyConnected,
            -32007 => ErrorKind::DuplicateRegistration,
            -32008 => ErrorKind::LimitExceeded,
            -32010 => ErrorKind::HandlerFailed,
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

/// An MCP error: a kind, the wire code, a message and optional JSON `data`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind} ({code}): {message}")]
pub struct Error {
    kind: ErrorKind,
    code: i64,
    message: Cow<'static, str>,
    data: Option<Box<RawValue>>,
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
        }
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
    /// -32603 internal error.
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }
    /// A handler's failure.
    pub fn handler_failed(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(ErrorKind::HandlerFailed, message)
    }

    /// Splits into wire parts (code, message, data).
    pub fn into_parts(self) -> (i64, Cow<'static, str>, Option<Box<RawValue>>) {
        (self.code, self.message, self.data)
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
    fn every_kind_roundtrips_through_its_code() {
        for k in ALL {
            assert_eq!(ErrorKind::from_code(k.code()), k, "{k:?}");
            assert!(!k.as_str().is_empty());
        }
        assert_eq!(ErrorKind::from_code(-31999), ErrorKind::Other);
        assert_eq!(ErrorKind::Unauthorized.code(), -32001);
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
