//! The little of each JSON-RPC message the transport reads (its kind and id, the negotiated
//! version of an `initialize` result, the request a `notifications/cancelled` names) and the
//! lines it writes for the engine (received messages as single NDJSON lines, error responses
//! standing for failed HTTP exchanges).

use mcp_proto::Error;
use serde::Deserialize;
use serde_json::Value;

/// What a message the engine wrote is, as far as the transport cares.
#[derive(Debug)]
pub(super) enum Kind {
    Request {
        id: Value,
        method: String,
    },
    Notification {
        method: String,
    },
    /// A response, or anything else (a batch).
    Other,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

pub(super) fn classify(line: &[u8]) -> Kind {
    match serde_json::from_slice::<Head>(line) {
        Ok(Head {
            id: Some(id),
            method: Some(method),
        }) => Kind::Request { id, method },
        Ok(Head {
            id: None,
            method: Some(method),
        }) => Kind::Notification { method },
        _ => Kind::Other,
    }
}

/// The id of a response message (no `method`, an `id`).
pub(super) fn response_id(msg: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Head>(msg) {
        Ok(Head {
            id: Some(id),
            method: None,
        }) => Some(id),
        _ => None,
    }
}

/// The `protocolVersion` of an `initialize` result.
pub(super) fn negotiated_version(msg: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Init {
        result: InitResult,
    }
    #[derive(Deserialize)]
    struct InitResult {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    serde_json::from_slice::<Init>(msg)
        .ok()
        .map(|i| i.result.protocol_version)
}

/// The `requestId` of a `notifications/cancelled`.
pub(super) fn cancelled_id(msg: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct Cancelled {
        params: CancelledParams,
    }
    #[derive(Deserialize)]
    struct CancelledParams {
        #[serde(rename = "requestId")]
        request_id: Option<Value>,
    }
    serde_json::from_slice::<Cancelled>(msg)
        .ok()
        .and_then(|c| c.params.request_id)
}

/// One JSON text as one NDJSON line (servers may pretty-print; NDJSON needs one line).
pub(super) fn ndjson_line(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut line = if data.iter().any(|&b| b == b'\n' || b == b'\r') {
        let v: Value = serde_json::from_slice(data).map_err(|e| e.to_string())?;
        serde_json::to_vec(&v).map_err(|e| e.to_string())?
    } else {
        serde_json::from_slice::<serde::de::IgnoredAny>(data).map_err(|e| e.to_string())?;
        data.to_vec()
    };
    line.push(b'\n');
    Ok(line)
}

/// A JSON-RPC error response to `id`, as one NDJSON line.
pub(super) fn error_line(id: &Value, error: &Error) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": error.code(), "message": error.message()},
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::ErrorKind;

    #[test]
    fn classifies_messages() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
            Kind::Request { id, method } if id == 3 && method == "tools/list"
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Kind::Notification { method } if method == "notifications/initialized"
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Kind::Other
        ));
        assert!(matches!(classify(b"not json"), Kind::Other));
    }

    #[test]
    fn response_ids_and_versions() {
        let msg = br#"{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(response_id(msg), Some(Value::from("a")));
        assert_eq!(negotiated_version(msg).as_deref(), Some("2025-06-18"));
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            None
        );
        assert_eq!(
            cancelled_id(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#
            ),
            Some(Value::from(7))
        );
    }

    #[test]
    fn ndjson_lines_are_single_lines() {
        assert_eq!(ndjson_line(b"{\"a\":1}").unwrap(), b"{\"a\":1}\n");
        assert_eq!(ndjson_line(b"{\n  \"a\": 1\r\n}").unwrap(), b"{\"a\":1}\n");
        assert!(ndjson_line(b"{\"a\":").is_err());
    }

    #[test]
    fn error_lines_carry_the_code() {
        let line = error_line(
            &Value::from(4),
            &Error::new(ErrorKind::Unauthorized, "POST x: HTTP 401"),
        );
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], 4);
        assert_eq!(v["error"]["code"], ErrorKind::Unauthorized.code());
        assert_eq!(line.last(), Some(&b'\n'));
    }
}
