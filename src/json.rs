//! Small helpers to read and build nested JSON objects without panicking, and to build
//! them over borrowed input without copying what stays as it is ([`Overlay`], [`Leaf`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::wire::tree::{Map, Value};

/// The value at `path` (object keys), if every step is an object.
pub(crate) fn get<'a>(object: &'a Map, path: &[&str]) -> Option<&'a Value> {
    let (last, init) = path.split_last()?;
    let mut cur = object;
    for key in init {
        cur = cur.get(key)?.as_object()?;
    }
    cur.get(last)
}

/// The object at `path`, created (or replacing a non-object) where missing.
pub(crate) fn object_mut<'a>(object: &'a mut Map, path: &[&str]) -> &'a mut Map {
    let mut cur = object;
    for key in path {
        // Look up before inserting: `entry` would allocate the key even when it exists.
        if !matches!(cur.get(key), Some(Value::Object(_))) {
            cur.insert(*key, Value::Object(Map::new()));
        }
        cur = match cur.get_mut(key) {
            Some(Value::Object(map)) => map,
            _ => unreachable!("an object was just put at the key"),
        };
    }
    cur
}

/// `value` as an object, made an empty one first if it is not.
pub(crate) fn make_object(value: &mut Value) -> &mut Map {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(map) => map,
        _ => unreachable!("the value was just made an object"),
    }
}

/// Sets `map[key]` to `value`, reusing the key where there is one (no allocation for it).
pub(crate) fn put(map: &mut Map, key: &str, value: Value) {
    match map.get_mut(key) {
        Some(slot) => *slot = value,
        None => {
            map.insert(key, value);
        }
    }
}

/// Sets `map[key]` to the string `value`, built only when the map does not hold it already.
pub(crate) fn set_str(map: &mut Map, key: &str, value: &str) {
    match map.get_mut(key) {
        Some(Value::String(s)) if s == value => {}
        Some(slot) => *slot = Value::from(value),
        None => {
            map.insert(key, Value::from(value));
        }
    }
}

/// A JSON object of strings as a map; non-string values are skipped.
pub(crate) fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.to_owned(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON value given as a borrowed `base` with some keys replaced (`Some`) or removed
/// (`None`): what a render changes in a template container, without copying the rest.
/// `fields` only apply when `base` is an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Overlay<'a> {
    pub base: &'a Value,
    pub fields: Vec<(&'static str, Option<Cow<'a, Value>>)>,
}

impl<'a> Overlay<'a> {
    /// `base`, unchanged.
    pub fn of(base: &'a Value) -> Self {
        Overlay {
            base,
            fields: Vec::new(),
        }
    }

    /// The value at `key` of the object it stands for.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self.fields.iter().find(|(k, _)| *k == key) {
            Some((_, value)) => value.as_deref(),
            None => self.base.as_object()?.get(key),
        }
    }

    /// Replaces (`Some`) or removes (`None`) `key`.
    pub fn set(&mut self, key: &'static str, value: Option<Cow<'a, Value>>) {
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some(field) => field.1 = value,
            None => self.fields.push((key, value)),
        }
    }

    /// The entries of the object it stands for: the base's not replaced, then the
    /// replaced ones (nothing when `base` is not an object).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        let replaced = |key: &str| self.fields.iter().any(|(k, _)| *k == key);
        let base = self
            .base
            .as_object()
            .into_iter()
            .flatten()
            .filter(move |(k, _)| !replaced(k));
        let fields = self.base.is_object().then_some(&self.fields);
        let fields = fields
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((*k, v.as_deref()?)));
        base.chain(fields)
    }

    /// The value it stands for. Only the base's fields that stay are copied.
    pub fn into_value(self) -> Value {
        let Some(base) = self.base.as_object() else {
            return self.base.clone();
        };
        let replaced = |key: &str| self.fields.iter().any(|(k, _)| *k == key);
        let mut map: Map = base
            .iter()
            .filter(|(k, _)| !replaced(k))
            .map(|(k, v)| (k, v.clone()))
            .collect();
        for (key, field) in self.fields {
            if let Some(value) = field {
                map.insert(key, value.into_owned());
            }
        }
        Value::Object(map)
    }
}

/// The value at one path while a render writes it: borrowed from its input until a write
/// changes it; `None` where there is none.
pub(crate) type Leaf<'a> = Option<Cow<'a, Value>>;

/// Sets a leaf to the value `make` builds, unless it holds an equal one (`equal`).
pub(crate) fn set_leaf_with(
    leaf: &mut Leaf<'_>,
    equal: impl FnOnce(&Value) -> bool,
    make: impl FnOnce() -> Value,
) {
    if !leaf.as_deref().is_some_and(equal) {
        *leaf = Some(Cow::Owned(make()));
    }
}

/// [`set_leaf_with`] for a string.
pub(crate) fn set_leaf_str(leaf: &mut Leaf<'_>, value: &str) {
    set_leaf_with(leaf, |v| v.as_str() == Some(value), || Value::from(value));
}

/// Writes into a [`Leaf`] that holds an object: a write that changes nothing leaves a
/// borrowed leaf borrowed (and copies nothing).
pub(crate) struct LeafObject<'l, 'a>(&'l mut Leaf<'a>);

impl<'l, 'a> LeafObject<'l, 'a> {
    /// The leaf as an object: an absent one, or one that is not an object, becomes empty
    /// (as [`object_mut`] makes it).
    pub fn open(leaf: &'l mut Leaf<'a>) -> Self {
        if !leaf.as_deref().is_some_and(Value::is_object) {
            *leaf = Some(Cow::Owned(Value::Object(Map::new())));
        }
        LeafObject(leaf)
    }

    /// The value at `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_deref()?.get(key)
    }

    /// Whether the object has no key.
    pub fn is_empty(&self) -> bool {
        self.0
            .as_deref()
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    }

    /// [`set_with`].
    pub fn set_with(
        &mut self,
        key: &str,
        equal: impl FnOnce(&Value) -> bool,
        make: impl FnOnce() -> Value,
    ) {
        if !self.get(key).is_some_and(equal) {
            put(self.map(), key, make());
        }
    }

    /// [`LeafObject::set_with`] for a string.
    pub fn set_str(&mut self, key: &str, value: &str) {
        self.set_with(key, |v| v.as_str() == Some(value), || Value::from(value));
    }

    /// Sets every `(key, value)` of `pairs` whose value differs, in one merge: a
    /// [`LeafObject::set_with`] per key would insert into the object's exact-length
    /// allocation once per key, quadratic in the number of keys. Of a key given twice, the
    /// last value wins.
    pub fn set_all<'p>(&mut self, pairs: impl IntoIterator<Item = (&'p str, Cow<'p, Value>)>) {
        let changed: Vec<(&str, Value)> = pairs
            .into_iter()
            .filter(|(k, v)| self.get(k) != Some(v.as_ref()))
            .map(|(k, v)| (k, v.into_owned()))
            .collect();
        if !changed.is_empty() {
            self.map().extend(changed);
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        if self.get(key).is_some() {
            self.map().remove(key);
        }
    }

    /// Removes the leaf.
    pub fn clear(self) {
        *self.0 = None;
    }

    /// The object, owned from here on.
    fn map(&mut self) -> &mut Map {
        let leaf = self
            .0
            .get_or_insert_with(|| Cow::Owned(Value::Object(Map::new())));
        make_object(leaf.to_mut())
    }
}
