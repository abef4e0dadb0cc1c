//! A compact JSON writer with the output of `serde_json::to_writer`, whose strings are
//! escaped eight bytes at a time: `serde_json` looks each byte of a string up in a table, so
//! a 64 KiB text result costs more to escape than to parse. It serves the scratch path of
//! [`to_raw`](super::to_raw), the one large values take.
//!
//! Anything it does not write the way `serde_json` would (a map key other than a string, a
//! char, a unit variant or an integer up to 64 bits) is an error, and the caller serialises
//! with `serde_json` instead: the writer is a fast path, never a second dialect.

use serde::ser::{self, Serialize};

/// The name `serde_json` gives the one-field struct a `RawValue` serialises as.
pub(super) const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Why the writer stopped (the caller falls back to `serde_json`).
#[derive(Debug)]
pub(crate) struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Unsupported(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, Unsupported> {
    Err(Unsupported(what.to_owned()))
}

/// Appends `value` as compact JSON to `out`.
pub(crate) fn write<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), Unsupported> {
    value.serialize(&mut Writer { out })
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

use mcp_proto::jsonrpc::write_json_str as write_str;

fn write_display(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    use std::io::Write;
    let _ = write!(out, "{v}");
}

/// A float as `serde_json` writes it (its own formatting; `null` when not finite).
fn write_float<T: Serialize>(out: &mut Vec<u8>, v: T) -> Result<(), Unsupported> {
    serde_json::to_writer(&mut *out, &v).map_err(|e| Unsupported(e.to_string()))
}

impl<'a, 'b> ser::Serializer for &'a mut Writer<'b> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Compound<'a, 'b>;
    type SerializeTupleStruct = Compound<'a, 'b>;
    type SerializeTupleVariant = Compound<'a, 'b>;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Compound<'a, 'b>;
    type SerializeStructVariant = Compound<'a, 'b>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Unsupported> {
        write_display(self.out, v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Unsupported> {
        write_float(self.out, v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Unsupported> {
        write_float(self.out, v)
    }
    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unsupported> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Unsupported> {
        self.out.push(b'[');
        Ok(Compound::new(self, b"]"))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'b>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'b>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Unsupported> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound::new(self, b"]}"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Unsupported> {
        self.out.push(b'{');
        Ok(Compound::new(self, b"}"))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Unsupported> {
        if name == RAW_TOKEN {
            let mut c = Compound::new(self, b"");
            c.raw = true;
            return Ok(c);
        }
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Unsupported> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound::new(self, b"}}"))
    }
}

/// An array, object or variant being written.
struct Compound<'a, 'b> {
    w: &'a mut Writer<'b>,
    first: bool,
    close: &'static [u8],
    /// A `RawValue`: its one field is written as it is.
    raw: bool,
}

impl<'a, 'b> Compound<'a, 'b> {
    fn new(w: &'a mut Writer<'b>, close: &'static [u8]) -> Self {
        Compound {
            w,
            first: true,
            close,
            raw: false,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.w.out.push(b',');
        }
        self.first = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.comma();
        value.serialize(&mut *self.w)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Unsupported> {
        if self.raw {
            return value.serialize(RawText { out: self.w.out });
        }
        self.comma();
        write_str(self.w.out, key);
        self.w.out.push(b':');
        value.serialize(&mut *self.w)
    }

    fn finish(self) -> Result<(), Unsupported> {
        self.w.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        self.comma();
        key.serialize(MapKey { out: self.w.out })?;
        self.w.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

/// Writes a map key: a string, or an integer in quotes (as `serde_json` does).
struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

impl MapKey<'_> {
    fn quoted(self, v: impl std::fmt::Display) -> Result<(), Unsupported> {
        self.out.push(b'"');
        write_display(self.out, v);
        self.out.push(b'"');
        Ok(())
    }
}

/// The serializer methods of a writer that accepts only what its `accept` methods name.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<(), Unsupported> {
            unsupported(stringify!($method))
        })*
    };
}

/// The compound types a key or a raw value cannot be.
macro_rules! no_compounds {
    () => {
        type SerializeSeq = ser::Impossible<(), Unsupported>;
        type SerializeTuple = ser::Impossible<(), Unsupported>;
        type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
        type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
        type SerializeMap = ser::Impossible<(), Unsupported>;
        type SerializeStruct = ser::Impossible<(), Unsupported>;
        type SerializeStructVariant = ser::Impossible<(), Unsupported>;
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsupported> {
            unsupported("key: option")
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<(), Unsupported> {
            unsupported("key: newtype variant")
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
            unsupported("key: seq")
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
            unsupported("key: tuple")
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Unsupported> {
            unsupported("key: tuple struct")
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Unsupported> {
            unsupported("key: tuple variant")
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
            unsupported("key: map")
        }
        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, Unsupported> {
            unsupported("key: struct")
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Unsupported> {
            unsupported("key: struct variant")
        }
    };
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Unsupported;
    no_compounds!();
    refuse!(
        serialize_bool(bool),
        serialize_i128(i128),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unsupported> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unsupported> {
        self.quoted(v)
    }
}

/// Writes the text of a `RawValue` as it is.
struct RawText<'a> {
    out: &'a mut Vec<u8>,
}

impl ser::Serializer for RawText<'_> {
    type Ok = ();
    type Error = Unsupported;
    no_compounds!();
    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), Unsupported> {
        unsupported("raw: unit variant")
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsupported> {
        unsupported("raw: newtype")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same<T: Serialize + ?Sized>(value: &T) {
        let mut out = Vec::new();
        write(&mut out, value).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(value).unwrap()
        );
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every = String::new();
        for c in (0u32..0x80).filter_map(char::from_u32) {
            every.push(c);
        }
        every.push_str("é€😀\u{7f}");
        same(&every);
        // Every position within an eight-byte word, with and without neighbours.
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '!', '#', '[', ']'] {
            for at in 0..24 {
                let mut s: String = "abcdefghijklmnopqrstuvwx".into();
                s.replace_range(at..=at, special.encode_utf8(&mut [0; 4]));
                same(&s);
            }
        }
        same(&"x".repeat(65_536));
        same(&"\"".repeat(1000));
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        same(&json!({
            "a": [1, -2, 3.5, 1e300, null, true, false, "s", {"k": []}, {}],
            "b": {"nested": {"deep": [[], [[]], {"x": u64::MAX}]}},
            "empty": "",
        }));
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, String),
            Struct { a_b: i32 },
        }
        #[derive(serde::Serialize)]
        struct S<'a> {
            e: Vec<E>,
            #[serde(skip_serializing_if = "Option::is_none")]
            none: Option<u8>,
            some: Option<&'a str>,
            bytes: &'a [u8],
            unit: (),
            c: char,
            f: f32,
            nan: f64,
            t: (u8, i128),
            keys: std::collections::BTreeMap<i64, bool>,
            raw: Box<serde_json::value::RawValue>,
        }
        same(&S {
            e: vec![
                E::Unit,
                E::New(1),
                E::Tuple(2, "t".into()),
                E::Struct { a_b: -3 },
            ],
            none: None,
            some: Some("x\ty"),
            bytes: b"ab",
            unit: (),
            c: '"',
            f: 0.1,
            nan: f64::NAN,
            t: (7, -1),
            keys: [(-1, true), (2, false)].into_iter().collect(),
            raw: serde_json::value::RawValue::from_string(r#"{"pre": [1, 2]}"#.into()).unwrap(),
        });
    }

    #[test]
    fn what_it_cannot_write_as_serde_json_does_is_refused() {
        let mut seq_keys = std::collections::BTreeMap::new();
        seq_keys.insert(vec![1u8], 1u8);
        assert!(
            write(&mut Vec::new(), &seq_keys).is_err(),
            "a sequence as a key"
        );
    }
}
