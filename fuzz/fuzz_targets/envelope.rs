//! `jsonrpc::parse` on arbitrary bytes never panics; every accepted envelope, made owned and
//! written back with `Message::write`, parses again to an equivalent envelope (same kind, id,
//! method, error code/message, and the very same raw params/result/data text); rejections
//! carry only the documented kinds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_proto::ErrorKind;
use mcp_proto::jsonrpc::{self, Envelope, Parsed, Rejected};

fn check_rejected(r: &Rejected) {
    let kind = r.error.kind();
    assert!(
        matches!(kind, ErrorKind::Parse | ErrorKind::ProtocolInvalid),
        "rejected with kind {kind:?}"
    );
    assert_eq!(r.error.code(), kind.code());
    if kind == ErrorKind::Parse {
        assert!(
            r.id.is_none() && r.answer,
            "a parse error is answered with id null"
        );
    }
}

fn same(a: &Envelope<'_>, b: &Envelope<'_>) {
    match (a, b) {
        (
            Envelope::Request { id, method, params },
            Envelope::Request {
                id: id2,
                method: method2,
                params: params2,
            },
        ) => {
            assert_eq!(id, id2);
            assert_eq!(method, method2);
            assert_eq!(params.map(|p| p.get()), params2.map(|p| p.get()));
        }
        (
            Envelope::Notification { method, params },
            Envelope::Notification {
                method: method2,
                params: params2,
            },
        ) => {
            assert_eq!(method, method2);
            assert_eq!(params.map(|p| p.get()), params2.map(|p| p.get()));
        }
        (
            Envelope::Response { id, result },
            Envelope::Response {
                id: id2,
                result: result2,
            },
        ) => {
            assert_eq!(id, id2);
            assert_eq!(result.get(), result2.get());
        }
        (
            Envelope::Error {
                id,
                code,
                message,
                data,
            },
            Envelope::Error {
                id: id2,
                code: code2,
                message: message2,
                data: data2,
            },
        ) => {
            assert_eq!(id, id2);
            assert_eq!(code, code2);
            assert_eq!(message, message2);
            assert_eq!(data.map(|d| d.get()), data2.map(|d| d.get()));
        }
        _ => panic!("kind changed: {a:?} became {b:?}"),
    }
}

fn roundtrip(env: &Envelope<'_>, input_is_value: bool) {
    if let Some(m) = env.method() {
        assert!(matches!(
            env,
            Envelope::Request { .. } | Envelope::Notification { .. }
        ));
        let _ = m;
    }
    if let Envelope::Request {
        params: Some(p), ..
    }
    | Envelope::Notification {
        params: Some(p), ..
    } = env
    {
        assert!(
            p.get().starts_with(['{', '[']),
            "params {:?} accepted",
            p.get()
        );
    }
    let owned = env.to_owned();
    let mut out = Vec::new();
    owned.write(&mut out);
    assert!(std::str::from_utf8(&out).is_ok());
    match jsonrpc::parse(&out) {
        Parsed::Single(Ok(again)) => same(env, &again),
        other => panic!(
            "written message does not parse back: {:?} from {env:?}",
            match other {
                Parsed::Single(Err(r)) => format!("{r:?}"),
                Parsed::Batch(_) => "a batch".into(),
                _ => "?".into(),
            }
        ),
    }
    // The single-message parser agrees.
    match jsonrpc::parse_one(&out) {
        Ok(again) => same(env, &again),
        Err(r) => panic!("parse_one rejects written message: {r:?}"),
    }
    // Also valid JSON for a general parser, when the input was (numbers out of f64 range and
    // deep nesting pass the raw parser but not `serde_json::Value`).
    if input_is_value {
        serde_json::from_slice::<serde_json::Value>(&out).expect("written message is JSON");
    }
}

fuzz_target!(|data: &[u8]| {
    let input_is_value = serde_json::from_slice::<serde_json::Value>(data).is_ok();
    match jsonrpc::parse(data) {
        Parsed::Single(Ok(env)) => roundtrip(&env, input_is_value),
        Parsed::Single(Err(r)) => check_rejected(&r),
        Parsed::Batch(items) => {
            assert!(!items.is_empty());
            for item in &items {
                match item {
                    Ok(env) => roundtrip(env, input_is_value),
                    Err(r) => check_rejected(r),
                }
            }
        }
        _ => {}
    }
    // parse_one never yields a batch and agrees with parse on non-arrays.
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        match (jsonrpc::parse(data), jsonrpc::parse_one(data)) {
            (Parsed::Single(Ok(a)), Ok(b)) => same(&a, &b),
            (Parsed::Single(Err(a)), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("parse and parse_one disagree: {a:?} vs {b:?}"),
        }
    }
});
