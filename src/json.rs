//! Small helpers to read and build nested JSON objects without panicking.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The value at `path` (object keys), if every step is an object.
pub(crate) fn get<'a>(object: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (last, init) = path.split_last()?;
    let mut cur = object;
    for key in init {
        cur = cur.get(*key)?.as_object()?;
    }
    cur.get(*last)
}

/// The object at `path`, created (or replacing a non-object) where missing.
pub(crate) fn object_mut<'a>(
    object: &'a mut Map<String, Value>,
    path: &[&str],
) -> &'a mut Map<String, Value> {
    let mut cur = object;
    for key in path {
        let slot = cur
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        cur = match slot {
            Value::Object(map) => map,
            _ => unreachable!("slot was just made an object"),
        };
    }
    cur
}

/// A JSON object of strings as a map; non-string values are skipped.
pub(crate) fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}
