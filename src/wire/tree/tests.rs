use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;

use super::{Map, Value};

/// Any JSON value, with keys drawn from a small set so that objects share and repeat keys.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (-1e9f64..1e9).prop_map(serde_json::Value::from),
        "[a-z~/é]{0,6}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::vec(("[a-e]{1,2}", inner), 0..6)
                .prop_map(|entries| { serde_json::Value::Object(entries.into_iter().collect()) }),
        ]
    })
}

/// A key of the maps below, from a number.
fn key_of(n: i64) -> String {
    ["a", "b", "c", "d", "e", "f", "g"][n.rem_euclid(7) as usize].to_owned()
}

proptest! {
    /// A tree is the same JSON as serde_json's: converted either way, read from the same
    /// text, and written to the same text.
    #[test]
    fn a_tree_is_the_same_json_as_serde_json(value in any_json()) {
        let tree = Value::from(value.clone());
        prop_assert_eq!(&tree, &value);
        prop_assert_eq!(serde_json::Value::from(tree.clone()), value.clone());
        prop_assert_eq!(serde_json::Value::from(&tree), value.clone());
        prop_assert_eq!(Value::from(&value), tree.clone());
        let text = serde_json::to_string(&value).unwrap();
        prop_assert_eq!(serde_json::to_string(&tree).unwrap(), text.clone());
        // Compared with serde_json's own reading: a float read back from text may differ in
        // its last bit from the one written (serde_json without `float_roundtrip`).
        let read: Value = serde_json::from_str(&text).unwrap();
        let json_read: serde_json::Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&read, &json_read);
        prop_assert_eq!(tree.to_string(), text);
    }

    /// Map operations agree with a BTreeMap's, on a small object and on one whose inserts
    /// and removes take it past [`MANY`](super::map::MANY) entries and back (each form).
    #[test]
    fn a_map_behaves_as_a_sorted_map(
        base in prop_oneof![Just(0), Just(super::map::MANY - 3)],
        ops in prop::collection::vec((0..4u8, "[a-f]", any::<i64>()), 0..64),
    ) {
        // The base keys sort among the ops' ("b0", "c1"...), not all before or after them.
        let base: Vec<(String, i64)> =
            (0..base).map(|i| (format!("{}{i}", key_of(i as i64)), i as i64)).collect();
        let mut map: Map = base.iter().map(|(k, n)| (k.as_str(), Value::from(*n))).collect();
        let mut model: BTreeMap<String, i64> = base.into_iter().collect();
        for (op, key, n) in ops {
            match op {
                0 => prop_assert_eq!(
                    map.insert(key.clone(), Value::from(n)).and_then(|v| v.as_i64()),
                    model.insert(key, n)
                ),
                1 => prop_assert_eq!(
                    map.remove(&key).and_then(|v| v.as_i64()),
                    model.remove(&key)
                ),
                2 => {
                    let got = map.entry(key.clone()).or_insert(Value::from(n)).as_i64();
                    prop_assert_eq!(got, Some(*model.entry(key).or_insert(n)));
                }
                _ => {
                    map.retain(|k, _| k != key);
                    model.retain(|k, _| *k != key);
                }
            }
            prop_assert_eq!(map.len(), model.len());
            let mut extended = map.clone();
            let mut extended_model = model.clone();
            let more = [(key_of(n), n), (key_of(n.wrapping_add(1)), -n), (key_of(n), n / 2)];
            extended.extend(more.iter().map(|(k, v)| (k.as_str(), Value::from(*v))));
            extended_model.extend(more.iter().map(|(k, v)| (k.clone(), *v)));
            prop_assert_eq!(
                extended.iter().map(|(k, v)| (k.to_owned(), v.as_i64())).collect::<Vec<_>>(),
                extended_model.iter().map(|(k, v)| (k.clone(), Some(*v))).collect::<Vec<_>>()
            );
            let keys: Vec<&str> = map.keys().collect();
            prop_assert_eq!(keys, model.keys().collect::<Vec<_>>());
            prop_assert_eq!(map.keys().next_back(), model.keys().next_back().map(String::as_str));
            prop_assert_eq!(&map, &model.iter().map(|(k, n)| (k.as_str(), Value::from(*n))).collect::<Map>());
            prop_assert_eq!(
                map.clone().into_iter().map(|(k, v)| (k.to_string(), v.as_i64())).collect::<Vec<_>>(),
                model.iter().map(|(k, v)| (k.clone(), Some(*v))).collect::<Vec<_>>()
            );
            for (k, n) in &model {
                prop_assert_eq!(map.get(k).and_then(Value::as_i64), Some(*n));
                prop_assert!(map.contains_key(k));
            }
        }
    }
}

#[test]
fn a_key_given_twice_keeps_the_last_as_serde_json_does() {
    let text = r#"{"b": 1, "a": 2, "b": 3, "a": 4, "c": 5}"#;
    let tree: Value = serde_json::from_str(text).unwrap();
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(tree, json);
    assert_eq!(tree["b"], 3);
    assert_eq!(tree["a"], 4);
    let collected: Map = [
        ("x".to_owned(), Value::from(1)),
        ("x".to_owned(), Value::from(2)),
    ]
    .into_iter()
    .collect();
    assert_eq!(collected.len(), 1);
    assert_eq!(collected.get("x"), Some(&Value::from(2)));
}

#[test]
fn push_appends_to_a_list_only() {
    let mut list = Value::from(vec![Value::from(1)]);
    assert!(list.push(Value::from("two")));
    assert_eq!(list, serde_json::json!([1, "two"]));
    let mut object = Value::Object(Map::new());
    assert!(!object.push(Value::from(3)));
    assert_eq!(object, serde_json::json!({}));
}

#[test]
fn index_pointer_and_accessors_read_as_serde_json() {
    let json = json!({"a": {"b/c": [10, {"~d": "x"}]}, "t": true, "f": 1.5, "n": null, "s": "v"});
    let tree = Value::from(json.clone());
    for pointer in [
        "",
        "/a",
        "/a/b~1c",
        "/a/b~1c/0",
        "/a/b~1c/1/~0d",
        "/a/missing",
        "/t/x",
        "x",
    ] {
        assert_eq!(
            tree.pointer(pointer).map(serde_json::Value::from),
            json.pointer(pointer).cloned(),
            "{pointer}"
        );
    }
    assert_eq!(tree["a"]["b/c"][0].as_i64(), Some(10));
    assert_eq!(tree["a"]["b/c"][9], Value::Null);
    assert_eq!(tree["t"].as_bool(), Some(true));
    assert_eq!(tree["f"].as_f64(), Some(1.5));
    assert!(tree["n"].is_null() && tree["s"].is_string() && tree["f"].is_number());
    assert_eq!(tree["s"], "v");
    assert_eq!(tree["f"].as_number(), json["f"].as_number());
    assert_eq!(tree["s"].as_number(), None);
    // Floats as serde_json holds them: one JSON cannot hold is null.
    assert_eq!(Value::from(1.5), json!(1.5));
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(Value::from(f64::INFINITY), Value::Null);
}

#[test]
fn a_map_is_not_read_from_a_list() {
    let e = serde_json::from_str::<Map>("[1]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid type: sequence, expected a map at line 1 column 0"
    );
    let e = serde_json::from_value::<Map>(serde_json::json!("x")).unwrap_err();
    assert_eq!(e.to_string(), r#"invalid type: string "x", expected a map"#);
}

#[test]
fn a_value_is_three_words_and_a_short_string_is_inline() {
    // The reason for this type: a two-key object is one allocation of two 48-byte entries
    // (serde_json: a 632-byte B-tree node, and one allocation per string).
    assert_eq!(std::mem::size_of::<Value>(), 24);
    assert_eq!(std::mem::size_of::<(super::Str, Value)>(), 48);
    let short = Value::from("registry.example/lb:1.0");
    let Value::String(s) = &short else {
        panic!("a string")
    };
    assert!(!s.0.is_heap_allocated());
    let long = Value::from("registry.example/a/much/longer/image:1.0");
    let Value::String(s) = &long else {
        panic!("a string")
    };
    assert!(s.0.is_heap_allocated());
}
