//! Unit tests of `sim::merge_patch`.

use super::*;
use serde_json::json;

fn patched(target: Value, patch: Value) -> Value {
    let mut target = target;
    apply(&mut target, &patch);
    target
}

#[test]
fn rfc_7386_appendix_a_examples() {
    // Every row of RFC 7386 Appendix A: original, patch, result.
    let cases = [
        (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
        (json!({"a":"b"}), json!({"a":null}), json!({})),
        (
            json!({"a":"b","b":"c"}),
            json!({"a":null}),
            json!({"b":"c"}),
        ),
        (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
        (
            json!({"a":{"b":"c"}}),
            json!({"a":{"b":"d","c":null}}),
            json!({"a":{"b":"d"}}),
        ),
        (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a":"b"}), json!(["c"]), json!(["c"])),
        (json!({"a":"foo"}), json!(null), json!(null)),
        (json!({"a":"foo"}), json!("bar"), json!("bar")),
        (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
        (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
        (
            json!({}),
            json!({"a":{"bb":{"ccc":null}}}),
            json!({"a":{"bb":{}}}),
        ),
    ];
    for (i, (target, patch, want)) in cases.into_iter().enumerate() {
        assert_eq!(patched(target, patch), want, "appendix A example {}", i + 1);
    }
}

#[test]
fn rfc_7386_section_3_example() {
    let target = json!({
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged"
    });
    let patch = json!({
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": null},
        "tags": ["example"]
    });
    let want = json!({
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890"
    });
    assert_eq!(patched(target, patch), want);
}

#[test]
fn null_for_a_missing_key_is_a_no_op() {
    assert_eq!(
        patched(json!({"a": 1}), json!({"b": null})),
        json!({"a": 1})
    );
}

#[test]
fn a_patch_applied_to_a_tree_object_is_the_same_as_to_json() {
    let cases = [
        (json!({"a":"b","b":"c"}), json!({"a":null})),
        (json!({"a":{"b":"c"}}), json!({"a":{"b":"d","c":null}})),
        (json!({"a":[{"b":"c"}]}), json!({"a":[1]})),
        (json!({"e":null}), json!({"a":1})),
        (json!({}), json!({"a":{"bb":{"ccc":null}}})),
        (json!({"a":"x"}), json!({"a":{"b":{"c":1}}})),
    ];
    for (target, patch) in cases {
        let mut tree = tree::Value::from(&target);
        if let tree::Value::Object(map) = &mut tree {
            apply_to_object(map, &patch);
        }
        assert_eq!(
            tree,
            patched(target.clone(), patch.clone()),
            "{target} + {patch}"
        );
    }
    // Not an object: nothing changes (the caller refuses it).
    let mut map = tree::Map::new();
    map.insert("a", tree::Value::from(1));
    apply_to_object(&mut map, &json!(["c"]));
    assert_eq!(tree::Value::Object(map), json!({"a": 1}));
}

#[test]
fn a_patch_of_many_keys_onto_a_large_object_is_one_merge() {
    // 20,000 keys onto 20,000: quadratic (an insert per key) would be 4·10⁸ moves.
    let target: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("k{i:05}"), json!(i)))
        .collect();
    let patch: serde_json::Map<String, Value> = (10_000..30_000)
        .map(|i| {
            (
                format!("k{i:05}"),
                if i % 2 == 0 { Value::Null } else { json!("p") },
            )
        })
        .collect();
    let (target, patch) = (Value::Object(target), Value::Object(patch));
    let mut tree = tree::Value::from(&target);
    if let tree::Value::Object(map) = &mut tree {
        apply_to_object(map, &patch);
    }
    assert_eq!(tree, patched(target, patch));
}

#[test]
fn a_patch_is_the_same_applied_key_by_key_or_merged() {
    // Each size pair takes one of the two paths (key by key: few keys, or few beside a
    // large object; a merge otherwise), on both forms of a tree object (more than 128 keys:
    // a B-tree). Every third key of the patch removes, every third nests.
    for target_keys in [0, 5, 50, 97, 200, 1000] {
        for patch_keys in [1, 9, 30, 200] {
            let target: serde_json::Map<String, Value> = (0..target_keys)
                .map(|i| (format!("k{:04}", i * 3), json!({"n": i, "m": "x"})))
                .collect();
            let patch: serde_json::Map<String, Value> = (0..patch_keys)
                .map(|i| {
                    let value = match i % 3 {
                        0 => Value::Null,
                        1 => json!({"n": null, "o": i}),
                        _ => json!(i),
                    };
                    (format!("k{:04}", i * 2), value)
                })
                .collect();
            let (target, patch) = (Value::Object(target), Value::Object(patch));
            let mut tree = tree::Value::from(&target);
            if let tree::Value::Object(map) = &mut tree {
                apply_to_object(map, &patch);
            }
            assert_eq!(
                tree,
                patched(target, patch),
                "{patch_keys} keys onto {target_keys}"
            );
        }
    }
}
