//! RFC 7386 JSON merge patch, as `kubectl patch --type merge` and the status subresource
//! apply it.

use serde_json::{Map, Value};

#[cfg(feature = "sim")]
use crate::wire::tree;

/// Applies the merge `patch` to `target` in place (RFC 7386 §2).
///
/// An object patch merges key by key (`null` removes a key); any other patch value
/// (including an array) replaces the target whole.
///
/// ```
/// use gateway_reconcile::sim::merge_patch::apply;
/// use serde_json::json;
/// let mut doc = json!({"spec": {"replicas": 2, "paused": true}});
/// apply(&mut doc, &json!({"spec": {"replicas": 3, "paused": null}}));
/// assert_eq!(doc, json!({"spec": {"replicas": 3}}));
/// ```
pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                apply(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// The most keys of a patch object [`apply_to_object`] applies one at a time whatever the
/// object's size.
#[cfg(feature = "sim")]
const FEW_KEYS: usize = 8;

/// [`apply`] to an object held as a [`tree::Map`] (a Deployment's), with an object patch.
/// A patch that is not an object would replace the object whole: it changes nothing here,
/// and the caller refuses it.
#[cfg(feature = "sim")]
pub fn apply_to_object(target: &mut tree::Map, patch: &Value) {
    let Value::Object(patch) = patch else {
        return;
    };
    // A patch of a few keys, or of few beside a large object, is applied key by key: a
    // merge copies the whole object, so an object grown one key per patch (an annotation
    // each) would cost the square of its size. A key costs the logarithm of a large
    // object's size (a B-tree, `tree::Map`), or a copy of a small one (at most 128 keys).
    if patch.len() <= FEW_KEYS || patch.len().saturating_mul(8) < target.len() {
        for (key, value) in patch {
            match value.is_null() {
                true => drop(target.remove(key)),
                false => apply_to_tree(
                    target.entry(key.as_str()).or_insert(tree::Value::Null),
                    value,
                ),
            }
        }
        return;
    }
    // One merge of two sorted lists, not an insert per key: an insert moves the entries
    // after it, and a patch of many keys onto a large object would be quadratic.
    let mut changes: Vec<(&str, &Value)> = patch.iter().map(|(k, v)| (k.as_str(), v)).collect();
    // Sorted already, unless another crate of the build enabled serde_json's
    // `preserve_order`.
    changes.sort_by(|a, b| a.0.cmp(b.0));
    let mut old = std::mem::take(target).into_iter().peekable();
    let mut merged: Vec<(tree::Str, tree::Value)> = Vec::with_capacity(old.len() + changes.len());
    for (key, value) in changes {
        while let Some(entry) = old.next_if(|(k, _)| k.as_str() < key) {
            merged.push(entry);
        }
        let existing = old.next_if(|(k, _)| k.as_str() == key);
        if value.is_null() {
            continue;
        }
        let (key, mut target) = existing.unwrap_or_else(|| (key.into(), tree::Value::Null));
        apply_to_tree(&mut target, value);
        merged.push((key, target));
    }
    merged.extend(old);
    *target = merged.into_iter().collect();
}

/// [`apply`] to a value held as a [`tree::Value`] (an object the simulated cluster holds).
#[cfg(feature = "sim")]
pub(crate) fn apply_to_tree(target: &mut tree::Value, patch: &Value) {
    if !patch.is_object() {
        *target = tree::Value::from(patch);
        return;
    }
    if !target.is_object() {
        *target = tree::Value::Object(tree::Map::new());
    }
    if let tree::Value::Object(target) = target {
        apply_to_object(target, patch);
    }
}

// The tests exercise the simulator's tree patch too.
#[cfg(all(test, feature = "sim"))]
mod tests;
