//! The objects the watch caches hold: the core's own wire types, read once per watch event.
//!
//! [`Cached<T>`] is what a watch of `T`'s kind deserializes into: the core's wire type
//! (`wire::Gateway`, `wire::GatewayClass`, `wire::GatewayConfiguration`, `wire::L34Route`,
//! `wire::Deployment`) read straight from the event's JSON, and beside it the few metadata
//! fields kube-runtime keys its caches and triggers by (name, namespace, uid,
//! `resourceVersion`, generation). A reconcile borrows the wire objects from the cache: no
//! object is converted, serialized or parsed per reconcile.
//!
//! # Why a wrapper, not `kube::Resource` on the wire types
//!
//! `kube::Resource::meta` must return k8s-openapi's `ObjectMeta`, and the core's wire types
//! hold the core's own `wire::ObjectMeta` (so that the core reads objects without
//! k8s-openapi, and keeps every metadata field it does not model). The trait cannot be
//! implemented for them as they are, in the core or here; the wrapper carries the kube
//! identity beside the untouched wire object.
//!
//! # One bad object never blinds the controller
//!
//! kube-runtime's watcher deserializes a whole list page at once: one object that fails to
//! deserialize fails the page, and the cache of that kind never fills. A [`Cached<T>`] never
//! fails on an object the API server returns: the wire type is read on its own, and an
//! object it cannot read is cached as [`Cached::read`]'s error, with its identity, so the
//! page and every other object are kept. The controller reports such an object (a log line,
//! the `unreadable` metric, and an Event on a Gateway) and treats it alone as unreadable.
//!
//! `managedFields` are dropped before the object is read: never written back, and the
//! largest part of most objects.
//!
//! # Deployments: the LB ones whole, every one by its metadata
//!
//! Only the LB Deployments (the managed-by label the core puts on each) are cached whole,
//! as [`Deployment`]: they are what the controller compares and replaces. Every Deployment
//! of the watched scope is also cached by its metadata alone, as [`DeploymentMeta`] (a
//! metadata-only watch, `managedFields` skipped unread): a foreign
//! Deployment is needed only to see that it holds a Gateway's LB Deployment name, and its
//! metadata (name, labels, annotations, ownerReferences) is all the core reads of it
//! ([`deployment_of_meta`]). The controller thus never holds a foreign pod template, which
//! may carry secrets in its env.

use std::borrow::Cow;
use std::cell::Cell;

use gateway_reconcile::wire;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::Resource;
use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

/// A kind the controller watches as the core's wire type `Self`.
pub trait Kind: DeserializeOwned {
    /// `ClusterResourceScope` or `NamespaceResourceScope`.
    type Scope;
    /// The kind, e.g. `Gateway`.
    const KIND: &'static str;
    /// The API group (`""` for core).
    const GROUP: &'static str;
    /// The API version.
    const VERSION: &'static str;
    /// The resource's plural.
    const PLURAL: &'static str;
}

macro_rules! kind {
    ($type:ty, $scope:ty, $kind:literal, $group:literal, $version:literal, $plural:literal) => {
        impl Kind for $type {
            type Scope = $scope;
            const KIND: &'static str = $kind;
            const GROUP: &'static str = $group;
            const VERSION: &'static str = $version;
            const PLURAL: &'static str = $plural;
        }
    };
}

kind!(
    wire::Gateway,
    NamespaceResourceScope,
    "Gateway",
    "gateway.networking.k8s.io",
    "v1",
    "gateways"
);
kind!(
    wire::GatewayClass,
    ClusterResourceScope,
    "GatewayClass",
    "gateway.networking.k8s.io",
    "v1",
    "gatewayclasses"
);
kind!(
    wire::GatewayConfiguration,
    NamespaceResourceScope,
    "GatewayConfiguration",
    "meridio-2.nordix.org",
    "v1alpha1",
    "gatewayconfigurations"
);
kind!(
    wire::L34Route,
    NamespaceResourceScope,
    "L34Route",
    "meridio-2.nordix.org",
    "v1alpha1",
    "l34routes"
);
kind!(
    wire::Deployment,
    NamespaceResourceScope,
    "Deployment",
    "apps",
    "v1",
    "deployments"
);

/// A watched object: the core's wire type `T` read once from the watch event, and the
/// metadata kube-runtime keys it by.
#[derive(Debug, Clone)]
pub struct Cached<T> {
    /// Name, namespace, uid, `resourceVersion` and generation only.
    meta: ObjectMeta,
    /// The wire object, or why `T` cannot read it.
    read: Result<T, String>,
    /// `spec.gatewayClassName` of an object `T` cannot read, when it is a string there.
    unread_class: Option<String>,
}

impl<T> Cached<T> {
    /// The wire object, or why the core's type cannot read it (the error names the field).
    pub fn read(&self) -> Result<&T, &str> {
        self.read.as_ref().map_err(String::as_str)
    }

    /// The `spec.gatewayClassName` of an object the core's type cannot read (so that an
    /// unreadable Gateway of ours is still told apart from a foreign one).
    pub fn unread_class(&self) -> Option<&str> {
        self.unread_class.as_deref()
    }
}

impl<T: Kind> Cached<T> {
    /// Reads one object from its JSON: never fails (see the module documentation).
    pub fn from_json(mut value: Value) -> Self {
        OBJECTS_READ.with(|count| count.set(count.get() + 1));
        let metadata = value.get_mut("metadata").and_then(Value::as_object_mut);
        let mut meta = ObjectMeta::default();
        if let Some(metadata) = metadata {
            metadata.remove("managedFields");
            let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
            meta.name = text("name");
            meta.namespace = text("namespace");
            meta.uid = text("uid");
            meta.resource_version = text("resourceVersion");
            meta.generation = metadata.get("generation").and_then(Value::as_i64);
        }
        let class = value
            .pointer("/spec/gatewayClassName")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let read = serde_json::from_value::<T>(value).map_err(|e| format!("{}: {e}", T::KIND));
        let unread_class = class.filter(|_| read.is_err());
        Cached {
            meta,
            read,
            unread_class,
        }
    }
}

impl<'de, T: Kind> Deserialize<'de> for Cached<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Only what is not JSON at all fails (the watch's own error then).
        Value::deserialize(deserializer).map(Cached::from_json)
    }
}

thread_local! {
    /// Objects read by [`Cached::from_json`] on this thread (a test counts them).
    static OBJECTS_READ: Cell<u64> = const { Cell::new(0) };
}

/// How many objects [`Cached`] has read on the calling thread: one per watch event; a
/// reconcile reads none.
pub fn objects_read() -> u64 {
    OBJECTS_READ.with(Cell::get)
}

impl<T: Kind> Resource for Cached<T> {
    type DynamicType = ();
    type Scope = T::Scope;

    fn kind(_: &()) -> Cow<'_, str> {
        T::KIND.into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        T::GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        T::VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        T::PLURAL.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

/// A cached Gateway.
pub type Gateway = Cached<wire::Gateway>;
/// A cached GatewayClass.
pub type GatewayClass = Cached<wire::GatewayClass>;
/// A cached GatewayConfiguration.
pub type GatewayConfiguration = Cached<wire::GatewayConfiguration>;
/// A cached L34Route.
pub type L34Route = Cached<wire::L34Route>;
/// A cached LB Deployment (every field kept, `managedFields` aside).
pub type Deployment = Cached<wire::Deployment>;

/// A Deployment's metadata, as a metadata-only watch returns it (`PartialObjectMetadata`),
/// read without its `managedFields`.
///
/// kube's `PartialObjectMeta<Deployment>` would read them: a metadata-only list still sends
/// them, and in full they are most of an LB Deployment's metadata (`fieldsV1` mirrors every
/// field each manager set, read as a JSON tree); a page of 500 would hold them all until
/// its last object is cached. This type reads only the fields the controller uses and
/// skips the rest unread; like `PartialObjectMeta`, its [`Resource::metadata_api`] makes
/// `Api<DeploymentMeta>` ask for metadata only.
#[derive(Debug, Clone, PartialEq)]
pub struct DeploymentMeta {
    /// Name, namespace, uid, `resourceVersion`, generation, labels, annotations,
    /// ownerReferences and deletionTimestamp.
    pub metadata: ObjectMeta,
}

impl<'de> Deserialize<'de> for DeploymentMeta {
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
        Ok(DeploymentMeta {
            metadata: ObjectMeta {
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
            },
        })
    }
}

impl Resource for DeploymentMeta {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Deployment".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "apps".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "deployments".into()
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
    use serde_json::json;

    #[test]
    fn an_unreadable_object_keeps_its_identity_and_does_not_fail_the_list() {
        let list: Vec<GatewayConfiguration> = serde_json::from_value(json!([
            {"metadata": {"name": "good", "namespace": "ns", "resourceVersion": "3"},
             "spec": {"networkAttachments": []}},
            {"metadata": {"name": "bad", "namespace": "ns", "resourceVersion": "4"},
             "spec": {"networkAttachments": "not a list"}}
        ]))
        .expect("the list is read");
        assert!(list[0].read().is_ok());
        let error = list[1].read().expect_err("unreadable");
        assert!(
            error.starts_with("GatewayConfiguration: invalid type"),
            "{error}"
        );
        assert_eq!(list[1].meta().name.as_deref(), Some("bad"));
        assert_eq!(list[1].meta().resource_version.as_deref(), Some("4"));
    }

    #[test]
    fn a_condition_time_past_year_9999_is_read_and_kept_as_written() {
        let time = "9999-12-31T23:59:59-01:00";
        let gateway = Gateway::from_json(json!({
            "metadata": {"name": "gw", "namespace": "ns"},
            "spec": {"gatewayClassName": "c"},
            "status": {"conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted",
                                       "message": "", "lastTransitionTime": time}]}
        }));
        let wire = gateway.read().expect("readable");
        assert_eq!(wire.status.conditions[0].last_transition_time, time);
    }

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
    }

    #[test]
    fn managed_fields_are_not_cached() {
        let deployment = Deployment::from_json(json!({
            "metadata": {"name": "d", "namespace": "ns",
                         "managedFields": [{"manager": "kubectl"}]},
            "spec": {"replicas": 1}
        }));
        let wire = deployment.read().expect("a Deployment");
        assert!(wire.get(&["metadata", "managedFields"]).is_none());
        assert_eq!(wire.name(), Some("d"));
    }
}
