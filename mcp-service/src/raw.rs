//! Serialising params and results into raw JSON without large transient buffers.
//!
//! `serde_json::value::to_raw_value` serialises into a fresh `Vec` that grows by doubling: a
//! 64 KiB value costs a chain of reallocs ending in a transient 128 KiB buffer, which glibc's
//! allocator maps and trims again on every call (page faults and, in a multi-threaded process,
//! TLB shootdowns for each one). A thread whose last value was large therefore serialises into
//! a per-thread scratch buffer that keeps its capacity, and copies the text once into an
//! allocation of exactly its size; small values, where the copy and its check cost more than
//! the growth, take the direct path. (This lives here, not in the sans-IO core, which keeps no
//! per-thread state.)

use std::cell::{Cell, RefCell};

mod writer;

use mcp_proto::{Error, ErrorKind};
use serde_json::value::RawValue;

/// A scratch buffer that grew past this is released after use, not kept.
const KEEP: usize = 1024 * 1024;
/// A value this large switches the thread to the scratch buffer (growing a fresh buffer for it
/// would pass through one of twice its size)...
const LARGE: usize = 32 * 1024;
/// ...and one this small switches it back.
const SMALL: usize = 8 * 1024;

std::thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static LARGE_MODE: Cell<bool> = const { Cell::new(false) };
}

fn serialise_error(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Internal, format!("serialise: {e}"))
}

/// The settings of extension `id` in raw capabilities (`capabilities.extensions[id]`), if
/// declared.
pub(crate) fn extension(capabilities: &RawValue, id: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(capabilities.get())
        .ok()
        .and_then(|c| c.get("extensions").and_then(|e| e.get(id)).cloned())
}

/// Serialises `value` into a boxed [`RawValue`] (see the module docs).
pub(crate) fn to_raw<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, Error> {
    if !LARGE_MODE.try_with(Cell::get).unwrap_or(false) {
        let raw = serde_json::value::to_raw_value(value).map_err(serialise_error)?;
        if raw.get().len() >= LARGE {
            let _ = LARGE_MODE.try_with(|m| m.set(true));
        }
        return Ok(raw);
    }
    SCRATCH
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => Some(serialise(&mut buf, value)),
            // Re-entered from a `Serialize` impl: use a fresh buffer.
            Err(_) => None,
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| serde_json::value::to_raw_value(value).map_err(serialise_error))
}

fn serialise<T: serde::Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    value: &T,
) -> Result<Box<RawValue>, Error> {
    buf.clear();
    // The fast writer, and `serde_json` for what it leaves (the same text either way).
    let written = writer::write(buf, value).or_else(|_| {
        buf.clear();
        serde_json::to_writer(&mut *buf, value).map_err(serialise_error)
    });
    // The text is copied once into an allocation of its exact size, without checking it again.
    let out = written.and_then(|()| {
        debug_assert!(core::str::from_utf8(buf).is_ok());
        // SAFETY: both writers write UTF-8 only: the text of `&str`s, copied whole or cut at
        // ASCII bytes (the escaped ones), and ASCII punctuation, digits and escapes (as
        // `serde_json::to_string` relies on for its own output).
        let text = unsafe { core::str::from_utf8_unchecked(buf) };
        serde_json::value::to_raw_value(&Verbatim(text)).map_err(serialise_error)
    });
    if buf.len() <= SMALL {
        let _ = LARGE_MODE.try_with(|m| m.set(false));
    }
    if buf.capacity() > KEEP {
        *buf = Vec::new();
    }
    out
}

/// JSON text that serialises as itself, as serde_json serialises a [`RawValue`]: serde_json's
/// serializer writes the field of a struct under this name verbatim. This copies a value the
/// writer produced into its boxed `RawValue` without the full JSON re-scan that
/// [`RawValue::from_string`] makes (the writer's output is valid JSON by construction; the tests
/// below check the round trip against serde_json's own output, so a change of the name in a
/// later serde_json fails them rather than the wire).
struct Verbatim<'a>(&'a str);

impl serde::Serialize for Verbatim<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct(writer::RAW_TOKEN, 1)?;
        s.serialize_field(writer::RAW_TOKEN, self.0)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_serde_json_at_every_size() {
        // Small, large (switches to the scratch path), huge (not kept), small again.
        for size in [
            0usize, 1, 100, 5_000, 70_000, 300_000, 2_000_000, 10, 40_000, 7,
        ] {
            let text: String = (0..size).map(|i| ['a', '"', 'é', '\n'][i % 4]).collect();
            let value = serde_json::json!({"name": "echo", "arguments": {"text": text}});
            let raw = to_raw(&value).unwrap();
            assert_eq!(raw.get(), serde_json::to_string(&value).unwrap());
        }
    }

    #[test]
    fn verbatim_is_written_as_is() {
        let text = r#"{"a":[1,2.5,"x\"y"],"b":null}"#;
        let raw = serde_json::value::to_raw_value(&Verbatim(text)).unwrap();
        assert_eq!(raw.get(), text);
        // Inside another value too, as a `RawValue` is.
        let outer = serde_json::to_string(&[Verbatim(text)]).unwrap();
        assert_eq!(outer, format!("[{text}]"));
    }

    #[test]
    fn reentered_from_serialize_and_failing() {
        /// Serialises by calling `to_raw` on its inner value first.
        struct Nested(serde_json::Value);
        impl serde::Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let inner = to_raw(&self.0).map_err(serde::ser::Error::custom)?;
                inner.serialize(s)
            }
        }
        let value = serde_json::json!({"k": "x".repeat(40_000)});
        for _ in 0..2 {
            // The first round runs in direct mode, the second in scratch mode.
            let raw = to_raw(&[Nested(value.clone()), Nested(value.clone())]).unwrap();
            assert_eq!(raw.get(), serde_json::to_string(&[&value, &value]).unwrap());
        }

        // A map with non-string keys cannot be JSON: an error, and the next call still works.
        let mut bad = std::collections::BTreeMap::new();
        bad.insert(vec![1u8], 1u8);
        assert_eq!(to_raw(&bad).unwrap_err().kind(), ErrorKind::Internal);
        assert_eq!(to_raw(&1).unwrap().get(), "1");
    }
}
