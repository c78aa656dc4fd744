//! A JSON tree held compactly: the form a [`Deployment`](super::Deployment) is kept in.
//!
//! A Deployment is held whole (every field the crate does not own is written back), and a
//! large one is mostly many small objects: containers, env entries, ports, volume mounts.
//! `serde_json::Value` keeps each object in a B-tree whose every node has room for eleven
//! entries, so a two-key object costs about 650 bytes; read whole, a Deployment costs more
//! than twelve times its JSON text. Here an object is its entries in one vector sorted by
//! key, with no spare room after reading: the same object costs about 110 bytes, and the
//! whole tree about three times its text. An object of more than 128 keys is a B-tree built
//! full from its sorted entries, about as small, where an insert or a remove costs the
//! logarithm of its size ([`Map`]).
//!
//! The API mirrors `serde_json`'s ([`Value`] and [`Map`] with the same method names), keys
//! iterate and serialize in sorted order as `serde_json::Map` does by default, and a tree
//! converts to and from a `serde_json::Value` without loss. A lookup scans an object of up
//! to 16 keys and binary-searches a larger one; an insert into an object of up to 128 keys
//! makes a new allocation of the new length, which is cheap for the small objects of a
//! Kubernetes manifest, and the crate builds objects in one go (reading, `collect`, `extend`
//! and merge patches sort or merge once).
//!
//! ```
//! use gateway_reconcile::wire::tree::Value;
//!
//! let value: Value = serde_json::from_str(r#"{"b": [1, "x"], "a": {"c": null}}"#).unwrap();
//! assert_eq!(value["b"][1].as_str(), Some("x"));
//! assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"a":{"c":null},"b":[1,"x"]}"#);
//! assert_eq!(serde_json::Value::from(value.clone()), serde_json::json!({"a": {"c": null}, "b": [1, "x"]}));
//! ```

use std::fmt;

use compact_str::CompactString;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
pub use serde_json::Number;

mod map;

use map::inserted;
pub use map::{Entry, IntoIter, Iter, IterMut, Map};

/// `serde_json::json!`, as a tree [`Value`].
macro_rules! tree_json {
    ($($json:tt)+) => {
        $crate::wire::tree::Value::from(serde_json::json!($($json)+))
    };
}
pub(crate) use tree_json;

/// A JSON value, as `serde_json::Value` but with objects held compactly ([`Map`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as `serde_json` holds it.
    Number(Number),
    /// A string.
    String(Str),
    /// A list.
    Array(Box<[Value]>),
    /// An object.
    Object(Map),
}

static NULL: Value = Value::Null;

impl Value {
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The object, mutably, if this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The list, if this is one.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(list) => Some(list),
            _ => None,
        }
    }

    /// The list, mutably, if this is one.
    pub fn as_array_mut(&mut self) -> Option<&mut [Value]> {
        match self {
            Value::Array(list) => Some(list),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The number as an `i64`, if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The number as a `u64`, if it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The number as an `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Whether this is a list.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// The value of an object's key (`None` when this is not an object or it is absent).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.get(key)
    }

    /// The value of an object's key, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?.get_mut(key)
    }

    /// The value at a JSON Pointer (RFC 6901), as `serde_json::Value::pointer`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/')
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .try_fold(self, |target, token| match target {
                Value::Object(map) => map.get(&token),
                Value::Array(list) => token.parse::<usize>().ok().and_then(|i| list.get(i)),
                _ => None,
            })
    }

    /// The value at a JSON Pointer, mutably, as `serde_json::Value::pointer_mut`.
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/')
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .try_fold(self, |target, token| match target {
                Value::Object(map) => map.get_mut(&token),
                Value::Array(list) => token.parse::<usize>().ok().and_then(|i| list.get_mut(i)),
                _ => None,
            })
    }

    /// Appends `item` to a list (in an allocation of the new length); `false`, and nothing
    /// done, when this is not a list.
    pub fn push(&mut self, item: Value) -> bool {
        let Value::Array(list) = self else {
            return false;
        };
        let at = list.len();
        *list = inserted(std::mem::take(list), at, item);
        true
    }

    /// Takes the value out, leaving `null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// Frees the spare room of every string, list and object in the tree.
    pub fn shrink_to_fit(&mut self) {
        match self {
            Value::String(s) => s.0.shrink_to_fit(),
            Value::Array(list) => list.iter_mut().for_each(Value::shrink_to_fit),
            Value::Object(map) => map.shrink_to_fit(),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

impl std::ops::Index<&str> for Value {
    type Output = Value;

    /// The value of an object's key; `null` when absent or not an object (as `serde_json`).
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::IndexMut<&str> for Value {
    /// The value of an object's key, `null` inserted first when absent. Unlike
    /// `serde_json`'s, it never panics: a value that is not an object becomes an empty one.
    fn index_mut(&mut self, key: &str) -> &mut Value {
        if !self.is_object() {
            *self = Value::Object(Map::new());
        }
        match self {
            Value::Object(map) => &mut map[key],
            _ => unreachable!("the value was just made an object"),
        }
    }
}

impl std::ops::Index<&str> for Map {
    type Output = Value;

    /// The value of `key`; `null` when absent (`serde_json::Map` panics there).
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::IndexMut<&str> for Map {
    /// The value of `key`, `null` inserted first when absent.
    fn index_mut(&mut self, key: &str) -> &mut Value {
        self.entry(key).or_insert(Value::Null)
    }
}

impl std::ops::Index<usize> for Value {
    type Output = Value;

    /// A list's element; `null` when absent or not a list (as `serde_json`).
    fn index(&self, index: usize) -> &Value {
        self.as_array().and_then(|l| l.get(index)).unwrap_or(&NULL)
    }
}

// For the crate's tests only: it panics (out of bounds, not a list), as `serde_json`'s does.
#[cfg(test)]
impl std::ops::IndexMut<usize> for Value {
    /// A list's element, as `serde_json`'s and `Vec`'s indexing.
    fn index_mut(&mut self, index: usize) -> &mut Value {
        match self {
            Value::Array(list) => &mut list[index],
            _ => panic!("cannot index a JSON value that is not a list by a number"),
        }
    }
}

impl fmt::Display for Value {
    /// Compact JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// A string of a tree: held inline when it is at most 24 bytes long, as most keys and
/// values of a manifest are (`name`, `image`, `IfNotPresent`), so that those cost no
/// allocation of their own. Reads as a `str`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Str(CompactString);

impl Str {
    /// The string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::ops::Deref for Str {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(CompactString::from(s))
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<String> for Str {
    /// Inline when short; a long string keeps its buffer, without spare room.
    fn from(mut s: String) -> Str {
        s.shrink_to_fit();
        Str(CompactString::from(s))
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.0.into_string()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Str, D::Error> {
        deserializer.deserialize_str(StrVisitor)
    }
}

struct StrVisitor;

impl Visitor<'_> for StrVisitor {
    type Value = Str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E>(self, s: &str) -> Result<Str, E> {
        Ok(Str::from(s))
    }

    fn visit_string<E>(self, s: String) -> Result<Str, E> {
        Ok(Str::from(s))
    }
}

/// `list` in an allocation of its length. A new one, not the old one shrunk in place: a
/// shrink leaves a small hole behind every object read, which the next (larger) growing
/// buffer cannot use, while a whole freed buffer is the next one's.
pub(crate) fn exact<T>(list: Vec<T>) -> Vec<T> {
    if list.capacity() == list.len() {
        return list;
    }
    let mut exact = Vec::with_capacity(list.len());
    exact.extend(list);
    exact
}

impl FromIterator<Value> for Value {
    /// A list of the values.
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Value {
        Value::from(iter.into_iter().collect::<Vec<Value>>())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(Str::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Str::from(s))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n.into())
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Number(n.into())
    }
}

impl From<f64> for Value {
    /// As `serde_json`: a float JSON cannot hold (NaN, infinite) is `null`.
    fn from(n: f64) -> Value {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(n.into())
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Object(map)
    }
}

impl From<Vec<Value>> for Value {
    fn from(list: Vec<Value>) -> Value {
        Value::Array(exact(list).into_boxed_slice())
    }
}

impl From<serde_json::Value> for Value {
    /// Moves the strings over; the objects are sorted already (`serde_json::Map` keeps its
    /// keys in order).
    fn from(value: serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n),
            serde_json::Value::String(s) => Value::String(Str::from(s)),
            serde_json::Value::Array(list) => {
                Value::Array(list.into_iter().map(Value::from).collect())
            }
            serde_json::Value::Object(map) => Value::Object(Map::from(map)),
        }
    }
}

impl From<&serde_json::Value> for Value {
    fn from(value: &serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(Str::from(s.as_str())),
            serde_json::Value::Array(list) => list.iter().map(Value::from).collect(),
            serde_json::Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (Str::from(k.as_str()), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<serde_json::Map<String, serde_json::Value>> for Map {
    fn from(map: serde_json::Map<String, serde_json::Value>) -> Map {
        map.into_iter().map(|(k, v)| (k, Value::from(v))).collect()
    }
}

impl From<Value> for serde_json::Value {
    fn from(value: Value) -> serde_json::Value {
        match value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(b),
            Value::Number(n) => serde_json::Value::Number(n),
            Value::String(s) => serde_json::Value::String(s.into()),
            Value::Array(list) => {
                serde_json::Value::Array(list.into_iter().map(Into::into).collect())
            }
            Value::Object(map) => serde_json::Value::Object(map.into()),
        }
    }
}

impl From<&Value> for serde_json::Value {
    fn from(value: &Value) -> serde_json::Value {
        match value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.as_str().to_owned()),
            Value::Array(list) => serde_json::Value::Array(list.iter().map(Into::into).collect()),
            Value::Object(map) => serde_json::Value::Object(map.into()),
        }
    }
}

impl From<Map> for serde_json::Map<String, serde_json::Value> {
    fn from(map: Map) -> serde_json::Map<String, serde_json::Value> {
        map.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
    }
}

impl From<&Map> for serde_json::Map<String, serde_json::Value> {
    fn from(map: &Map) -> serde_json::Map<String, serde_json::Value> {
        map.iter().map(|(k, v)| (k.to_owned(), v.into())).collect()
    }
}

impl PartialEq<serde_json::Value> for Value {
    fn eq(&self, other: &serde_json::Value) -> bool {
        match (self, other) {
            (Value::Null, serde_json::Value::Null) => true,
            (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
            (Value::Number(a), serde_json::Value::Number(b)) => a == b,
            (Value::String(a), serde_json::Value::String(b)) => a.as_str() == b,
            (Value::Array(a), serde_json::Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            // By key: a `serde_json::Map` keeps insertion order when a crate of the build
            // enables serde_json's `preserve_order`.
            (Value::Object(a), serde_json::Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

impl PartialEq<Value> for serde_json::Value {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<i64> for Value {
    fn eq(&self, other: &i64) -> bool {
        self.as_i64() == Some(*other)
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => n.serialize(serializer),
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(list) => list.serialize(serializer),
            Value::Object(map) => map.serialize(serializer),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            out.serialize_entry(k, v)?;
        }
        out.end()
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Map {
    /// Reads an object only (as `serde_json::Map`: anything else is "expected a map").
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Map, D::Error> {
        deserializer.deserialize_map(MapVisitor)
    }
}

/// Reads an object only.
struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = Map;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Map, A::Error> {
        read_map(access)
    }
}

/// An object's entries, sorted, without spare room.
fn read_map<'de, A: MapAccess<'de>>(mut access: A) -> Result<Map, A::Error> {
    let mut entries: Vec<(Str, Value)> =
        Vec::with_capacity(access.size_hint().unwrap_or(0).min(4096));
    while let Some((k, v)) = access.next_entry::<Str, Value>()? {
        entries.push((k, v));
    }
    Ok(Map::from_unsorted(entries))
}

/// Reads any JSON value, leaving no spare room in what it builds.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::from(s))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(Str::from(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element()? {
            list.push(v);
        }
        Ok(Value::from(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Value, A::Error> {
        read_map(access).map(Value::Object)
    }
}

/// Reads any JSON value as [`Value`] does, but the value at `path` (a key path from the
/// root, each step an object's key) is skipped unread: nothing is built of it. A watched
/// object's `metadata.managedFields`, which the crate never reads, is the use.
#[cfg(feature = "kube")]
#[derive(Clone, Copy)]
pub(crate) struct Skipping(pub(crate) &'static [&'static str]);

#[cfg(feature = "kube")]
impl<'de> serde::de::DeserializeSeed<'de> for Skipping {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

#[cfg(feature = "kube")]
impl<'de> Visitor<'de> for Skipping {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ValueVisitor.expecting(f)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        ValueVisitor.visit_unit()
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        ValueVisitor.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Value, E> {
        ValueVisitor.visit_bool(b)
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Value, E> {
        ValueVisitor.visit_i64(n)
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Value, E> {
        ValueVisitor.visit_u64(n)
    }

    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Value, E> {
        ValueVisitor.visit_f64(n)
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Value, E> {
        ValueVisitor.visit_str(s)
    }

    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Value, E> {
        ValueVisitor.visit_string(s)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        ValueVisitor.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let Some((first, rest)) = self.0.split_first() else {
            return read_map(access).map(Value::Object);
        };
        let mut entries: Vec<(Str, Value)> =
            Vec::with_capacity(access.size_hint().unwrap_or(0).min(4096));
        while let Some(key) = access.next_key::<Str>()? {
            if key.as_str() != *first {
                entries.push((key, access.next_value()?));
            } else if rest.is_empty() {
                access.next_value::<serde::de::IgnoredAny>()?;
            } else {
                entries.push((key, access.next_value_seed(Skipping(rest))?));
            }
        }
        Ok(Value::Object(Map::from_unsorted(entries)))
    }
}

#[cfg(any(feature = "sim", feature = "kube"))]
pub(crate) mod de;

#[cfg(test)]
mod tests;
