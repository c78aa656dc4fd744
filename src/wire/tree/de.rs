//! A [`Value`] read as serde reads a `&serde_json::Value`: a typed read straight from the
//! compact tree, never through a `serde_json::Value` (which costs about three times the
//! tree for small objects). The scenario reader holds its steps as trees and reads each one
//! with this, in the same words as it would read them from `serde_json` (the messages of a
//! value of the wrong type are the visitors' own, so they read alike).
//!
//! The differences from `&serde_json::Value`: an object's keys are read as strings only
//! (not parsed as numbers or booleans for a map keyed by them), and a number is read as
//! `serde_json` reads it.

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde_json::Error;

use super::{Map, Value};

/// A tree read by serde (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Reader<'de>(pub &'de Value);

impl Value {
    /// How a serde message names this value's type.
    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (None, Some(i), _) => Unexpected::Signed(i),
                (None, None, Some(f)) => Unexpected::Float(f),
                (None, None, None) => Unexpected::Other("number"),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        }
    }
}

/// A list's items to a visitor; all of them must be read.
fn visit_list<'de, V: Visitor<'de>>(list: &'de [Value], visitor: V) -> Result<V::Value, Error> {
    let mut items = Items(list.iter());
    let read = visitor.visit_seq(&mut items)?;
    match items.0.len() {
        0 => Ok(read),
        _ => Err(de::Error::invalid_length(
            list.len(),
            &"fewer elements in array",
        )),
    }
}

/// An object's entries to a visitor; all of them must be read.
fn visit_object<'de, V: Visitor<'de>>(map: &'de Map, visitor: V) -> Result<V::Value, Error> {
    let mut entries = Entries {
        entries: map.iter(),
        value: None,
    };
    let read = visitor.visit_map(&mut entries)?;
    match entries.entries.len() {
        0 => Ok(read),
        _ => Err(de::Error::invalid_length(
            map.len(),
            &"fewer elements in map",
        )),
    }
}

impl<'de> de::Deserializer<'de> for Reader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => n.deserialize_any(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(list) => visit_list(list, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(variant) => visitor.visit_enum(Variant {
                name: variant,
                value: None,
            }),
            Value::Object(map) => match (map.len(), map.iter().next()) {
                (1, Some((name, value))) => visitor.visit_enum(Variant {
                    name,
                    value: Some(value),
                }),
                _ => Err(de::Error::invalid_value(
                    Unexpected::Map,
                    &"map with a single key",
                )),
            },
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// A list's items, in order.
struct Items<'de>(std::slice::Iter<'de, Value>);

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|item| seed.deserialize(Reader(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// An object's entries, in key order.
struct Entries<'de> {
    entries: super::Iter<'de>,
    value: Option<&'de Value>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Reader(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An enum: its variant's name, and the value beside it (`None` for a bare string).
struct Variant<'de> {
    name: &'de str,
    value: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let name = BorrowedStrDeserializer::<Error>::new(self.name);
        seed.deserialize(name).map(|v| (v, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            Some(value) => serde::Deserialize::deserialize(Reader(value)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(value) => seed.deserialize(Reader(value)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(Value::Array(list)) if list.is_empty() => visitor.visit_unit(),
            Some(Value::Array(list)) => visit_list(list, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(Value::Object(map)) => visit_object(map, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::Reader;
    use crate::wire::tree::Value;

    /// Reads `T` from a tree and from the `serde_json::Value` it converts from: the same
    /// value, or the same message.
    fn both<T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(
        json: serde_json::Value,
    ) -> Result<T, String> {
        let tree = Value::from(&json);
        let from_tree = T::deserialize(Reader(&tree)).map_err(|e| e.to_string());
        let from_json = T::deserialize(&json).map_err(|e| e.to_string());
        assert_eq!(from_tree, from_json, "{json}");
        from_tree
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Step {
        name: String,
        #[serde(default)]
        count: Option<u32>,
        #[serde(default)]
        items: Vec<i64>,
        #[serde(default)]
        kind: Option<Kind>,
        #[serde(default)]
        any: Option<serde_json::Value>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Kind {
        Plain,
        Wrapped(String),
        Pair(u8, u8),
        Named { x: bool },
    }

    #[test]
    fn a_tree_reads_as_its_json_does() {
        let read = both::<Step>(json!({"name": "a", "count": 3, "items": [1, -2],
            "kind": {"Named": {"x": true}}, "any": {"b": [null, 1.5, "c"]}}));
        assert_eq!(read.unwrap().items, [1, -2]);
        for kind in [
            json!("Plain"),
            json!({"Wrapped": "w"}),
            json!({"Pair": [1, 2]}),
            json!({"Pair": 5}),
            json!({"Plain": null}),
            json!(7),
            json!({"Plain": null, "Wrapped": "w"}),
            json!("Nothing"),
        ] {
            let _ = both::<Step>(json!({"name": "a", "kind": kind}));
        }
        for wrong in [
            json!({"name": 5}),
            json!({"name": "a", "count": -1}),
            json!({"name": "a", "count": 1.5}),
            json!({"name": "a", "items": {"x": 1}}),
            json!({"name": "a", "other": 1}),
            json!({"count": 1}),
            json!([1, 2]),
            json!(null),
            json!({"name": "a", "items": [18446744073709551615u64]}),
        ] {
            assert!(both::<Step>(wrong).is_err());
        }
        assert!(both::<(u8, u8)>(json!([1, 2, 3])).is_err());
        assert_eq!(both::<Option<bool>>(json!(null)), Ok(None));
    }
}
