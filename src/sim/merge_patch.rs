//! RFC 7386 JSON merge patch, as `kubectl patch --type merge` and the status subresource
//! apply it.

use serde_json::{Map, Value};

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

#[cfg(test)]
mod tests;
