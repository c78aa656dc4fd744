//! `metav1` types shared by every object: `ObjectMeta`, `OwnerReference`, `Condition`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `metav1.ObjectMeta`: the fields the crate reads, and every other field kept as is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `metadata.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `metadata.uid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `metadata.generation`: bumped by the API server when `spec` changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// `metadata.resourceVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `metadata.deletionTimestamp` (RFC 3339), set when the object is being deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// `metadata.labels`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// `metadata.ownerReferences`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<OwnerReference>,
    /// Every other metadata field (`creationTimestamp`, `managedFields`, ...), kept as is
    /// (a watched object, `resource::Watched` with feature `kube`, holds none of them).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ObjectMeta {
    /// The metadata keys this type names; every other key goes to [`ObjectMeta::other`].
    #[cfg(feature = "kube")]
    pub(crate) const NAMED_KEYS: [&'static str; 9] = [
        "name",
        "namespace",
        "uid",
        "generation",
        "resourceVersion",
        "deletionTimestamp",
        "labels",
        "annotations",
        "ownerReferences",
    ];
}

/// `metav1.OwnerReference`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// API version of the owner, e.g. `gateway.networking.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the owner, e.g. `Gateway`.
    #[serde(default)]
    pub kind: String,
    /// Name of the owner.
    #[serde(default)]
    pub name: String,
    /// UID of the owner.
    #[serde(default)]
    pub uid: String,
    /// True for the managing controller (at most one per object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// True when the owner cannot be deleted before this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// `metav1.Condition`, as it appears in `status.conditions`.
///
/// `status` and `lastTransitionTime` are kept as strings so that a foreign condition with an
/// odd value survives untouched; the crate parses the ones it owns and reports a typed error
/// for a malformed owned timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type, e.g. `Programmed` or `meridio-2.nordix.org/Degraded`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When `status` last changed (RFC 3339).
    #[serde(default)]
    pub last_transition_time: String,
    /// A CamelCase reason.
    #[serde(default)]
    pub reason: String,
    /// A human-readable message.
    #[serde(default)]
    pub message: String,
}

#[cfg(all(test, feature = "kube"))]
mod tests {
    use super::*;

    /// The keys a watched object keeps are the keys the type names: every field set, none
    /// in `other`, serializes to exactly them.
    #[test]
    fn the_named_keys_are_the_fields_of_the_type() {
        let meta = ObjectMeta {
            name: Some("n".into()),
            namespace: Some("ns".into()),
            uid: Some("u".into()),
            generation: Some(1),
            resource_version: Some("2".into()),
            deletion_timestamp: Some("2026-12-07T10:00:00Z".into()),
            labels: [("k".to_owned(), "v".to_owned())].into(),
            annotations: [("a".to_owned(), "b".to_owned())].into(),
            owner_references: vec![OwnerReference::default()],
            other: Map::new(),
        };
        let json = serde_json::to_value(&meta).expect("JSON");
        let mut keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut named = ObjectMeta::NAMED_KEYS.to_vec();
        keys.sort_unstable();
        named.sort_unstable();
        assert_eq!(keys, named);
    }
}
