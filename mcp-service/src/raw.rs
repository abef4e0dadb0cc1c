//! Serialising params and results into raw JSON without large transient buffers.
//!
//! `serde_json::value::to_raw_value` serialises into a fresh `Vec` that grows by doubling: a
//! 64 KiB value costs a chain of reallocs ending in a transient 128 KiB buffer, which glibc's
//! allocator maps and trims again on every call (page faults and, in a multi-threaded process,
//! TLB shootdowns for each one), and a final copy into the boxed value. A thread whose last value
//! was large therefore serialises the next one into a buffer with room for a value of that size,
//! and boxes that buffer itself (its spare room given back in place): no growth, no copy. Small
//! values, where a guess of their size costs more than the growth, take the direct path. (This
//! lives here, not in the sans-IO core, which keeps no per-thread state.)

use std::cell::Cell;

mod writer;

use mcp_proto::{Error, ErrorKind};
use serde_json::value::RawValue;

/// A value this large makes the thread's next value start with room for one of its size (growing
/// a fresh buffer for it would pass through one of twice its size)...
const LARGE: usize = 32 * 1024;
/// ...and one this small switches it back to the direct path.
const SMALL: usize = 8 * 1024;
/// The most room made ahead for a value: one larger grows from there.
const ROOM_MAX: usize = 1024 * 1024;

std::thread_local! {
    /// The size of this thread's last large value; 0 after a small one.
    static LAST_LARGE: Cell<usize> = const { Cell::new(0) };
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
    let last = LAST_LARGE.try_with(Cell::get).unwrap_or(0);
    if last == 0 {
        let raw = serde_json::value::to_raw_value(value).map_err(serialise_error)?;
        if raw.get().len() >= LARGE {
            let _ = LAST_LARGE.try_with(|m| m.set(raw.get().len()));
        }
        return Ok(raw);
    }
    // Room for the last large value's size and a little more: a value that grew a little since
    // grows no buffer. (Not for more than `ROOM_MAX`: after a huge value, the next may be
    // small.)
    let room = last.min(ROOM_MAX);
    let mut buf = Vec::with_capacity(room + room / 16 + 256);
    // The fast writer, and `serde_json` for what it leaves (the same text either way).
    let written = writer::write(&mut buf, value).or_else(|_| {
        buf.clear();
        serde_json::to_writer(&mut buf, value).map_err(serialise_error)
    });
    let len = buf.len();
    let _ = LAST_LARGE.try_with(|m| m.set(if len <= SMALL { 0 } else { len.max(LARGE) }));
    written?;
    debug_assert!(core::str::from_utf8(&buf).is_ok());
    // SAFETY: both writers write UTF-8 only: the text of `&str`s, copied whole or cut at
    // ASCII bytes (the escaped ones), and ASCII punctuation, digits and escapes (as
    // `serde_json::to_string` relies on for its own output).
    let text = unsafe { String::from_utf8_unchecked(buf) };
    boxed_verbatim(text)
}

/// Boxes JSON text a writer produced as a [`RawValue`], without copying it or reading it again:
/// serde_json's own `Box<RawValue>` deserialisation takes an owned string as it is when handed
/// one under its raw-value name (the name `Verbatim` writes under; the tests below check that the
/// text is neither changed nor moved, so a change of either in a later serde_json fails them
/// rather than the wire). The string's spare room is given back (a shrink in place).
fn boxed_verbatim(text: String) -> Result<Box<RawValue>, Error> {
    use serde::de::{self, value::MapDeserializer};

    /// A deserializer of one raw value: the map serde_json's raw-value visitor reads.
    struct Owned(String);

    impl<'de> de::Deserializer<'de> for Owned {
        type Error = de::value::Error;

        fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("expected a raw value"))
        }

        fn deserialize_newtype_struct<V: de::Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            if name != writer::RAW_TOKEN {
                return Err(de::Error::custom("expected a raw value"));
            }
            visitor.visit_map(MapDeserializer::new(core::iter::once((
                writer::RAW_TOKEN,
                self.0,
            ))))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
        }
    }

    <Box<RawValue> as serde::Deserialize>::deserialize(Owned(text))
        .map_err(|e| Error::new(ErrorKind::Internal, format!("serialise: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_serde_json_at_every_size() {
        // Small, large (switches to the sized path), larger, huge, small again.
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
    fn boxed_verbatim_neither_changes_nor_moves_the_text() {
        let text = r#"{"a":[1,2.5,"x\"y"],"b":null}"#.to_owned();
        let at = text.as_ptr();
        let raw = boxed_verbatim(text).unwrap();
        assert_eq!(raw.get(), r#"{"a":[1,2.5,"x\"y"],"b":null}"#);
        assert_eq!(raw.get().as_ptr(), at, "copied");
        // Inside another value too, as any `RawValue` is.
        let outer = serde_json::to_string(&[&raw]).unwrap();
        assert_eq!(outer, format!("[{}]", raw.get()));
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
            // The first round runs on the direct path, the second on the sized one.
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
