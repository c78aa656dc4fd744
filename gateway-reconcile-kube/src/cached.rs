//! The objects the watch caches hold: the core's own wire types, read once per watch event.
//!
//! [`Cached<T>`] is the core's `resource::Watched<T>` (its `kube` feature): what a watch of
//! `T`'s kind deserializes into, the core's wire type (`wire::Gateway`,
//! `wire::GatewayClass`, `wire::GatewayConfiguration`, `wire::L34Route`,
//! `wire::Deployment`) read straight from the event's JSON, with the few metadata fields
//! kube-runtime keys its caches and triggers by beside it. A reconcile borrows the wire
//! objects from the cache: no object is converted, serialized or parsed per reconcile. The
//! core's docs say why it is a wrapper rather than `kube::Resource` on the wire types.
//!
//! # One bad object never blinds the controller
//!
//! kube-runtime's watcher deserializes a whole list page at once: one object that fails to
//! deserialize would fail the page. A [`Cached<T>`] never fails on an object the API server
//! returns: an object the wire type cannot read is cached as `read()`'s error, with its
//! identity, so the page and every other object are kept. The controller reports such an
//! object (a log line, the `unreadable` metric, and an Event on a Gateway) and treats it
//! alone as unreadable. `managedFields` are dropped before the object is read.
//!
//! # Deployments: the LB ones whole, every one by its metadata
//!
//! Only the LB Deployments (the managed-by label the core puts on each) are cached whole,
//! as [`Deployment`]: they are what the controller compares and replaces (whole but for
//! the status the rollout rule does not read). Every Deployment
//! of the watched scope is also cached by its metadata alone, as [`DeploymentMeta`] (a
//! metadata-only watch, `managedFields` skipped unread): a foreign
//! Deployment is needed only to see that it holds a Gateway's LB Deployment name, and its
//! metadata (name, labels, annotations, ownerReferences) is all the core reads of it
//! ([`deployment_of_meta`]). The controller thus never holds a foreign pod template, which
//! may carry secrets in its env. Namespaces are cached by their metadata alone too, as
//! [`NamespaceMeta`] (their labels, for `allowedRoutes` selectors); both are a [`Meta`].

use std::borrow::Cow;
use std::marker::PhantomData;

use gateway_reconcile::{lookup, wire};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::{Deserialize, Deserializer};
use serde_json::Value;

pub use gateway_reconcile::wire::resource::{Kind, Watched as Cached};

/// How many objects [`Cached`] has read on the calling thread: one per watch event; a
/// reconcile reads none.
#[cfg(test)]
pub fn objects_read() -> u64 {
    gateway_reconcile::wire::resource::objects_read()
}

/// A cached Gateway.
pub type Gateway = Cached<wire::Gateway>;
/// A cached GatewayClass.
pub type GatewayClass = Cached<wire::GatewayClass>;
/// A cached GatewayConfiguration.
pub type GatewayConfiguration = Cached<wire::GatewayConfiguration>;
/// A cached L34Route.
pub type L34Route = Cached<wire::L34Route>;
/// A cached LB Deployment: every field kept but `managedFields` and the part of `status` the
/// core's rollout rule does not read (a write leaves the status out anyway).
pub type Deployment = Cached<wire::Deployment>;

/// An object's metadata alone, as a metadata-only watch returns it
/// (`PartialObjectMetadata`), read without its `managedFields`: [`DeploymentMeta`] and
/// [`NamespaceMeta`].
///
/// kube's `PartialObjectMeta<K>` would read them: a metadata-only list still sends them,
/// and in full they are most of an object's metadata (`fieldsV1` mirrors every field each
/// manager set, read as a JSON tree); a page of 500 would hold them all until its last
/// object is cached, and the cache would hold them for good (the `held_bytes` example
/// measured a Namespace's metadata at 3,683 bytes held with them, 1,499 without). This
/// type reads only the fields the controller uses and skips the rest unread; like
/// `PartialObjectMeta`, its [`Resource::metadata_api`] makes `Api<Meta<K>>` ask for
/// metadata only, of `K`'s API.
pub struct Meta<K> {
    /// Name, namespace, uid, `resourceVersion`, generation, labels, annotations,
    /// ownerReferences and deletionTimestamp (what [`Kept`] keeps of them).
    pub metadata: ObjectMeta,
    /// Whether [`Kept`] kept the metadata of an LB Deployment alone: its labels are then
    /// not kept, and this says it had the LB label.
    lb: bool,
    kind: PhantomData<fn() -> K>,
}

/// A Deployment's metadata: every Deployment of the watched scope is cached so, to see
/// that one holds a Gateway's LB Deployment name ([`deployment_of_meta`]). Of an LB
/// Deployment (the managed-by label the core puts on each), which the LB watch caches
/// whole, only its name, namespace and `resourceVersion` are kept, and that it has the
/// label ([`Meta::lb_labeled`]): they say it is there while the LB watch has not caught up
/// (see [`Kept`]).
pub type DeploymentMeta = Meta<k8s_openapi::api::apps::v1::Deployment>;

/// What a metadata cache keeps of an object of kind `K`, once read: by default all
/// [`Meta`] reads.
pub trait Kept {
    /// Drops from `metadata` what the controller never reads of this object; true when
    /// it kept an LB Deployment's name, namespace and version alone.
    fn keep(metadata: &mut ObjectMeta) -> bool {
        let _ = metadata;
        false
    }
}

impl Kept for k8s_openapi::api::core::v1::Namespace {}

/// Whether the object has the label of an LB Deployment (the LB watch's label selector).
pub(crate) fn lb_labeled(metadata: &ObjectMeta) -> bool {
    metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(lookup::MANAGED_BY_LABEL))
        .is_some_and(|value| value == lookup::MANAGED_BY)
}

impl Kept for k8s_openapi::api::apps::v1::Deployment {
    // An LB Deployment's metadata is read for its presence and version alone: the rest is
    // the whole object's, in the LB cache (2.2 KiB a Gateway held twice, docs/scale.md).
    fn keep(metadata: &mut ObjectMeta) -> bool {
        if !lb_labeled(metadata) {
            return false;
        }
        *metadata = ObjectMeta {
            name: metadata.name.take(),
            namespace: metadata.namespace.take(),
            resource_version: metadata.resource_version.take(),
            ..ObjectMeta::default()
        };
        true
    }
}

/// A Namespace's metadata: its labels are what a listener's
/// `allowedRoutes.namespaces.selector` matches.
pub type NamespaceMeta = Meta<k8s_openapi::api::core::v1::Namespace>;

impl<K> Meta<K> {
    /// The metadata of a `K`.
    pub fn new(metadata: ObjectMeta) -> Self {
        Meta {
            metadata,
            lb: false,
            kind: PhantomData,
        }
    }

    /// Whether the object has the label of an LB Deployment (the LB watch's label
    /// selector).
    pub fn lb_labeled(&self) -> bool {
        self.lb || lb_labeled(&self.metadata)
    }
}

// By hand: derived, they would ask `K` for the same traits.
impl<K> std::fmt::Debug for Meta<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meta")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<K> Clone for Meta<K> {
    fn clone(&self) -> Self {
        Meta {
            lb: self.lb,
            ..Meta::new(self.metadata.clone())
        }
    }
}

impl<K> PartialEq for Meta<K> {
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.lb == other.lb
    }
}

impl<'de, K: Kept> Deserialize<'de> for Meta<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
        use std::collections::BTreeMap;

        // Unknown fields (managedFields among them) are skipped without being read.
        #[derive(serde::Deserialize)]
        struct Object {
            #[serde(default)]
            metadata: Metadata,
        }
        #[derive(serde::Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct Metadata {
            name: Option<String>,
            namespace: Option<String>,
            uid: Option<String>,
            resource_version: Option<String>,
            generation: Option<i64>,
            labels: Option<BTreeMap<String, String>>,
            annotations: Option<BTreeMap<String, String>>,
            owner_references: Option<Vec<OwnerReference>>,
            deletion_timestamp: Option<Time>,
        }
        let Object { metadata: m } = Object::deserialize(deserializer)?;
        let mut metadata = ObjectMeta {
            name: m.name,
            namespace: m.namespace,
            uid: m.uid,
            resource_version: m.resource_version,
            generation: m.generation,
            labels: m.labels,
            annotations: m.annotations,
            owner_references: m.owner_references,
            deletion_timestamp: m.deletion_timestamp,
            ..ObjectMeta::default()
        };
        let lb = K::keep(&mut metadata);
        Ok(Meta {
            lb,
            ..Meta::new(metadata)
        })
    }
}

impl<K: Resource<DynamicType = ()>> Resource for Meta<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    // The API of the whole object.
    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
    fn metadata_api() -> bool {
        true
    }
}

/// A Deployment as the core reads it, built from its metadata alone: `apiVersion`, `kind`
/// and `metadata`, no `spec` and no `status`. Enough for the core to see that a Deployment
/// holding a Gateway's LB name is not that Gateway's (its controller ownerReference); not
/// for an own Deployment, which the core compares and replaces whole.
pub fn deployment_of_meta(meta: &DeploymentMeta) -> wire::Deployment {
    let mut object = serde_json::Map::new();
    object.insert("apiVersion".into(), Value::from("apps/v1"));
    object.insert("kind".into(), Value::from("Deployment"));
    object.insert(
        "metadata".into(),
        serde_json::to_value(&meta.metadata).unwrap_or_default(),
    );
    wire::Deployment::from_object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployments_metadata_is_read_without_managed_fields() {
        let meta: DeploymentMeta = serde_json::from_value(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": {"name": "d", "namespace": "ns", "uid": "u", "resourceVersion": "3",
                         "generation": 2, "labels": {"a": "b"}, "annotations": {"c": "d"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "x", "uid": "y", "controller": true}],
                         "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]}
        }))
        .expect("metadata");
        assert_eq!(meta.metadata.managed_fields, None);
        assert_eq!(meta.metadata.name.as_deref(), Some("d"));
        assert_eq!(meta.metadata.generation, Some(2));
        let wire = deployment_of_meta(&meta);
        assert_eq!(wire.controller_owner(), Some(("ReplicaSet", "x", "y")));
        assert_eq!(wire.labels().get("a").map(String::as_str), Some("b"));
        assert_eq!(wire.annotation("c"), Some("d"));
        assert!(wire.get(&["metadata", "managedFields"]).is_none());
        assert!(<DeploymentMeta as Resource>::metadata_api());
        assert_eq!(<DeploymentMeta as Resource>::plural(&()), "deployments");
        assert_eq!(<DeploymentMeta as Resource>::group(&()), "apps");
    }

    #[test]
    fn an_lb_deployments_metadata_keeps_its_name_version_and_label_alone() {
        let meta: DeploymentMeta = serde_json::from_value(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": {"name": "lb-gw", "namespace": "ns", "uid": "u", "resourceVersion": "3",
                         "generation": 2,
                         "labels": {lookup::MANAGED_BY_LABEL: lookup::MANAGED_BY, "app": "lb-gw"},
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "gateway.networking.k8s.io/v1",
                                              "kind": "Gateway", "name": "gw", "uid": "g",
                                              "controller": true}]}
        }))
        .expect("metadata");
        assert_eq!(
            serde_json::to_value(&meta.metadata).expect("json"),
            serde_json::json!({"name": "lb-gw", "namespace": "ns", "resourceVersion": "3"})
        );
        assert!(meta.lb_labeled());
        // Another value of the label is not ours: kept whole.
        let foreign: DeploymentMeta = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "uid": "u",
                         "labels": {lookup::MANAGED_BY_LABEL: "helm"}}
        }))
        .expect("metadata");
        assert_eq!(foreign.metadata.uid.as_deref(), Some("u"));
        assert!(!foreign.lb_labeled());
    }

    #[test]
    fn a_namespaces_metadata_is_read_without_managed_fields() {
        let meta: NamespaceMeta = serde_json::from_value(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": {"name": "team-a", "uid": "u", "resourceVersion": "9",
                         "labels": {"kubernetes.io/metadata.name": "team-a", "tier": "edge"},
                         "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:metadata": {}}}]}
        }))
        .expect("metadata");
        assert_eq!(meta.metadata.managed_fields, None);
        assert_eq!(
            meta.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("tier"))
                .map(String::as_str),
            Some("edge")
        );
        assert_eq!(<NamespaceMeta as Resource>::plural(&()), "namespaces");
        assert_eq!(<NamespaceMeta as Resource>::api_version(&()), "v1");
        assert!(<NamespaceMeta as Resource>::metadata_api());
    }
}
