//! `apps/v1` Deployment, kept whole as JSON.
//!
//! The crate owns a handful of fields of the LB Deployment and must write back every other
//! one untouched (probes, security contexts, fields of newer Kubernetes versions), so the
//! Deployment is held as a JSON object rather than a struct that would drop what it does not
//! model. Accessors read the few fields the logic needs.
//!
//! The object is a [`tree::Map`](crate::wire::tree::Map), not a `serde_json::Map`: a
//! Deployment can be large, and is mostly small objects, which a `serde_json::Value` holds at
//! about five times the memory (see [`tree`](crate::wire::tree)). It converts to and from
//! `serde_json` without loss, and (de)serializes as the same JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::json;
use crate::wire::tree::{Map, Value};

/// A Deployment as the API server returns it (or as the crate wants it written).
///
/// ```
/// use gateway_reconcile::wire::Deployment;
/// use serde_json::json;
///
/// let json = json!({"metadata": {"name": "lb", "generation": 3}, "spec": {"replicas": 2}});
/// let deployment: Deployment = serde_json::from_value(json.clone()).unwrap();
/// assert_eq!(deployment.name(), Some("lb"));
/// assert_eq!(deployment.get(&["spec", "replicas"]).and_then(|v| v.as_i64()), Some(2));
/// assert_eq!(deployment.to_json(), json);
/// assert_eq!(Deployment::from_object(json.as_object().unwrap().clone()), deployment);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Deployment {
    /// The whole object.
    pub object: Map,
}

impl Deployment {
    /// Wraps a JSON object: a [`tree::Map`](crate::wire::tree::Map), or a `serde_json::Map`
    /// (converted, its strings moved).
    pub fn from_object(object: impl Into<Map>) -> Self {
        Deployment {
            object: object.into(),
        }
    }

    /// The object as a `serde_json::Value` (a copy).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object((&self.object).into())
    }

    /// The object as a `serde_json::Value`, its strings moved.
    pub fn into_json(self) -> serde_json::Value {
        serde_json::Value::Object(self.object.into())
    }

    /// `metadata.name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.str_at(&["metadata", "name"])
    }

    /// `metadata.namespace`, if it is a string.
    pub fn namespace(&self) -> Option<&str> {
        self.str_at(&["metadata", "namespace"])
    }

    /// `metadata.generation`, if it is an integer.
    pub fn generation(&self) -> Option<i64> {
        json::get(&self.object, &["metadata", "generation"]).and_then(Value::as_i64)
    }

    /// One `metadata.annotations` entry.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        json::get(&self.object, &["metadata", "annotations", key]).and_then(Value::as_str)
    }

    /// `metadata.labels` as a map (non-string values skipped).
    pub fn labels(&self) -> BTreeMap<String, String> {
        json::string_map(json::get(&self.object, &["metadata", "labels"]))
    }

    /// The controller owner reference (`controller: true`) as `(kind, name, uid)`.
    pub fn controller_owner(&self) -> Option<(&str, &str, &str)> {
        let refs = json::get(&self.object, &["metadata", "ownerReferences"])?.as_array()?;
        refs.iter().find_map(|r| {
            let r = r.as_object()?;
            if r.get("controller").and_then(Value::as_bool) != Some(true) {
                return None;
            }
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            Some((s("kind"), s("name"), s("uid")))
        })
    }

    /// Whether the object of uid `uid` controls this Deployment: its controller owner
    /// reference carries that uid. Ownership is decided so, never by name (SPEC section 3,
    /// step 6): anything else under the LB Deployment's name is a name collision.
    ///
    /// ```
    /// use gateway_reconcile::wire::Deployment;
    /// let d: Deployment = serde_json::from_value(serde_json::json!({"metadata": {
    ///     "ownerReferences": [{"kind": "Gateway", "name": "gw", "uid": "u1", "controller": true}]}}))
    ///     .unwrap();
    /// assert!(d.controlled_by("u1"));
    /// assert!(!d.controlled_by("u2"));
    /// ```
    pub fn controlled_by(&self, uid: &str) -> bool {
        self.controller_owner()
            .is_some_and(|(_, _, owner)| owner == uid)
    }

    /// The first of `metadata`, `metadata.name` and `metadata.namespace` present with a
    /// type the API server never gives it (`null` counts as absent): its key path and what is
    /// wrong, e.g. `("metadata.name", "expected a string, found 5")`. Such an object is no
    /// Deployment the API server returned, and the crate would otherwise read it as one
    /// without a name (a name collision, or nothing to compare): a reader of untrusted input
    /// (the command line) refuses it as malformed.
    ///
    /// ```
    /// use gateway_reconcile::wire::Deployment;
    /// let d: Deployment = serde_json::from_str(r#"{"metadata": {"name": ["lb"]}}"#).unwrap();
    /// assert_eq!(
    ///     d.metadata_type_error(),
    ///     Some(("metadata.name", "expected a string, found a list".to_owned()))
    /// );
    /// ```
    pub fn metadata_type_error(&self) -> Option<(&'static str, String)> {
        let found = |value: &Value| match value {
            Value::Array(_) => "a list".to_owned(),
            Value::Object(_) => "an object".to_owned(),
            other => other.to_string(),
        };
        let metadata = match self.object.get("metadata") {
            None | Some(Value::Null) => return None,
            Some(Value::Object(metadata)) => metadata,
            Some(other) => {
                return Some((
                    "metadata",
                    format!("expected an object, found {}", found(other)),
                ));
            }
        };
        [
            ("metadata.name", "name"),
            ("metadata.namespace", "namespace"),
        ]
        .into_iter()
        .find_map(|(path, key)| match metadata.get(key) {
            None | Some(Value::Null | Value::String(_)) => None,
            Some(other) => Some((path, format!("expected a string, found {}", found(other)))),
        })
    }

    /// The value at a path of object keys, if every step is an object.
    pub fn get(&self, path: &[&str]) -> Option<&Value> {
        json::get(&self.object, path)
    }

    fn str_at(&self, path: &[&str]) -> Option<&str> {
        json::get(&self.object, path).and_then(Value::as_str)
    }
}

impl std::ops::Index<&str> for Deployment {
    type Output = Value;

    /// The value of a top-level key; `null` when absent (`deployment["spec"]["replicas"]`).
    fn index(&self, key: &str) -> &Value {
        &self.object[key]
    }
}
