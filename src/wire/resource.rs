//! `kube::Resource` for the crate's wire types (feature `kube`), so that a kube-rs
//! controller watches and caches them directly: a [`Watched<T>`] is what a watch of `T`'s
//! kind deserializes into, and what its reflector stores and its reconcile borrows.
//!
//! ```
//! use gateway_reconcile::wire::resource::Watched;
//! use gateway_reconcile::wire;
//! use kube_core::Resource;
//!
//! // What a watch event carries: the JSON of one object.
//! let watched: Watched<wire::Gateway> = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
//!     "metadata": {"name": "gw", "namespace": "red", "uid": "u-1", "generation": 2,
//!                  "managedFields": [{"manager": "kubectl"}]},
//!     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
//! })).unwrap();
//! assert_eq!(Watched::<wire::Gateway>::plural(&()), "gateways");
//! assert_eq!(watched.meta().name.as_deref(), Some("gw"));
//! let gateway: &wire::Gateway = watched.read().unwrap(); // what `Snapshot` borrows
//! assert_eq!(gateway.spec.gateway_class_name, "meridio");
//! ```
//!
//! With kube-rs, `Api::<Watched<wire::Gateway>>::all(client)` lists and watches Gateways
//! as the crate reads them, and `kube::runtime::reflector` caches them.
//!
//! # Why a wrapper, not `Resource` on the wire types themselves
//!
//! [`Resource::meta`] must return k8s-openapi's `ObjectMeta`, and the wire types hold the
//! crate's own [`wire::ObjectMeta`] (so that the crate reads objects without k8s-openapi,
//! and keeps every metadata field it does not model). The wrapper carries the few fields
//! kube-runtime keys caches and triggers by (name, namespace, uid, `resourceVersion`,
//! generation) beside the untouched wire object.
//!
//! # One bad object never fails a list
//!
//! A watcher deserializes a whole list page at once: one object that fails to deserialize
//! fails the page, and the cache of that kind never fills. A [`Watched<T>`] never fails on
//! an object the API server returns: the wire type is read on its own, and an object it
//! cannot read is kept as [`Watched::read`]'s error (naming the field), with its identity,
//! so the page and every other object are kept. (kube-core's `DeserializeGuard` does the
//! same for a typed object; here the object's identity and its `spec.gatewayClassName` are
//! kept too, so that an unreadable Gateway of a controller's class is told apart from a
//! foreign one.)
//!
//! `metadata.managedFields` is dropped before the object is read (skipped unread when a
//! watch event's text is read, nothing built of it): the crate never reads or writes it
//! back, and it is the largest part of most objects. Of a Deployment's `status`, only
//! what the rollout rule reads is kept (its counts, and a `Progressing` condition past its
//! deadline): nothing else of the crate reads it, and a write leaves it out. Every other
//! kind, read into its typed wire object and never written back, holds of `metadata` only
//! the keys [`wire::ObjectMeta`] names (name, namespace, uid, generation,
//! `resourceVersion`, `deletionTimestamp`, labels, annotations, `ownerReferences`): its
//! `other` is empty, where `creationTimestamp` alone would cost a `serde_json` map node of
//! about 600 bytes on each Gateway, route and configuration.

use std::borrow::Cow;

use kube_core::{ClusterResourceScope, NamespaceResourceScope, ObjectMeta, Resource};
use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

use crate::wire::{self, tree};

/// A kind the crate reads as the wire type `Self`, with what `kube::Resource` needs to
/// name its API.
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

    /// Reads the object from its compact tree, which [`Watched`] read the event's JSON into:
    /// by default a typed read of the tree (`managedFields` already dropped), the error
    /// naming the key path of what is wrong; a kind held as a tree takes it whole.
    ///
    /// The typed read holds of `metadata` only the keys [`wire::ObjectMeta`] names: a
    /// watched object is read, never written back, and nothing reads the others (the
    /// `creationTimestamp` every object has would cost a `serde_json` map node of about
    /// 600 bytes in [`wire::ObjectMeta::other`], for each Gateway, route and configuration).
    #[doc(hidden)]
    fn from_tree(mut value: tree::Value) -> Result<Self, (Option<String>, String)> {
        keep_named_metadata(&mut value);
        crate::read_at::typed_tree(&value)
    }
}

/// Drops the `metadata` keys [`wire::ObjectMeta`] does not name (see [`Kind::from_tree`]).
fn keep_named_metadata(value: &mut tree::Value) {
    if let Some(metadata) = value
        .get_mut("metadata")
        .and_then(tree::Value::as_object_mut)
    {
        metadata.retain(|key, _| wire::ObjectMeta::NAMED_KEYS.contains(&key));
    }
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
impl Kind for wire::Deployment {
    type Scope = NamespaceResourceScope;
    const KIND: &'static str = "Deployment";
    const GROUP: &'static str = "apps";
    const VERSION: &'static str = "v1";
    const PLURAL: &'static str = "deployments";

    /// A Deployment is held as the tree itself: an object is taken whole, never copied,
    /// but for the part of its `status` nothing reads (`rollout::keep_read_status`).
    fn from_tree(value: tree::Value) -> Result<Self, (Option<String>, String)> {
        match value {
            tree::Value::Object(mut object) => {
                crate::rollout::keep_read_status(&mut object);
                Ok(wire::Deployment { object })
            }
            other => crate::read_at::typed_tree(&other),
        }
    }
}

/// A watched object: the wire type `T` read once from the watch event, and the metadata
/// kube-runtime keys it by.
#[derive(Debug, Clone)]
pub struct Watched<T> {
    /// Name, namespace, uid, `resourceVersion` and generation only.
    meta: ObjectMeta,
    /// The wire object, or why `T` cannot read it.
    read: Result<T, String>,
    /// `spec.gatewayClassName` of an object `T` cannot read, when it is a string there.
    unread_class: Option<String>,
}

impl<T> Watched<T> {
    /// The wire object, or why the crate's type cannot read it (the error names the kind
    /// and the field).
    pub fn read(&self) -> Result<&T, &str> {
        self.read.as_ref().map_err(String::as_str)
    }

    /// The `spec.gatewayClassName` of an object the crate's type cannot read (so that an
    /// unreadable Gateway of a controller's class is told apart from a foreign one).
    pub fn unread_class(&self) -> Option<&str> {
        self.unread_class.as_deref()
    }
}

/// A port over a cache of watched objects lends them to the driver as they are held.
impl<T> crate::reconcile::Held<T> for Watched<T> {
    fn read(&self) -> Result<&T, &str> {
        Watched::read(self)
    }
}

impl<T: Kind> Watched<T> {
    /// Reads one object from its JSON: never fails (see the module documentation).
    ///
    /// ```
    /// use gateway_reconcile::wire::resource::Watched;
    /// use gateway_reconcile::wire;
    ///
    /// let bad = Watched::<wire::GatewayConfiguration>::from_json(serde_json::json!({
    ///     "metadata": {"name": "conf", "namespace": "red"},
    ///     "spec": {"networkAttachments": "not a list"}
    /// }));
    /// assert_eq!(
    ///     bad.read().unwrap_err(),
    ///     "GatewayConfiguration: spec.networkAttachments: expected a list, found \"not a list\""
    /// );
    /// ```
    pub fn from_json(value: Value) -> Self {
        Self::from_tree(tree::Value::from(value))
    }

    /// [`Watched::from_json`] on the crate's compact tree, which a watch event's JSON is
    /// read into: never into a `serde_json::Value`, whose every object is a B-tree node
    /// with room for eleven entries (see [`tree`]).
    fn from_tree(mut value: tree::Value) -> Self {
        #[cfg(feature = "testing")]
        OBJECTS_READ.with(|count| count.set(count.get() + 1));
        let mut meta = ObjectMeta::default();
        if let Some(metadata) = value
            .get_mut("metadata")
            .and_then(tree::Value::as_object_mut)
        {
            metadata.remove("managedFields");
            let text = |key: &str| {
                metadata
                    .get(key)
                    .and_then(tree::Value::as_str)
                    .map(str::to_owned)
            };
            meta.name = text("name");
            meta.namespace = text("namespace");
            meta.uid = text("uid");
            meta.resource_version = text("resourceVersion");
            meta.generation = metadata.get("generation").and_then(tree::Value::as_i64);
        }
        let class = value
            .get("spec")
            .and_then(|spec| spec.get("gatewayClassName"))
            .and_then(tree::Value::as_str)
            .map(str::to_owned);
        // The error names the key path, in the simulator's words: an unreadable
        // GatewayConfiguration's `InvalidParameters` message quotes it.
        let read = T::from_tree(value).map_err(|(path, why)| match path {
            Some(path) => format!("{}: {path}: {why}", T::KIND),
            None => format!("{}: {why}", T::KIND),
        });
        let unread_class = class.filter(|_| read.is_err());
        Watched {
            meta,
            read,
            unread_class,
        }
    }
}

#[cfg(feature = "testing")]
thread_local! {
    /// Objects read by [`Watched::from_json`] on this thread.
    static OBJECTS_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many objects [`Watched::from_json`] (and so a watch) has read on the calling thread
/// (feature `testing`): a controller's test proves with it that each watch event is read
/// once and a reconcile reads none.
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub fn objects_read() -> u64 {
    OBJECTS_READ.with(std::cell::Cell::get)
}

/// A watched object read into a tree, its `metadata.managedFields` skipped.
const MANAGED_FIELDS_SKIPPED: tree::Skipping = tree::Skipping(&["metadata", "managedFields"]);

impl<'de, T: Kind> Deserialize<'de> for Watched<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Only what is not JSON at all fails (the watch's own error then). The managed
        // fields, which nothing reads, are skipped unread: on an LB Deployment they are
        // about a third of the JSON.
        serde::de::DeserializeSeed::deserialize(MANAGED_FIELDS_SKIPPED, deserializer)
            .map(Watched::from_tree)
    }
}

impl<T: Kind> Resource for Watched<T> {
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

#[cfg(test)]
mod tests {
    use kube_core::{ApiResource, ResourceExt};
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unreadable_object_keeps_its_identity_and_does_not_fail_the_list() {
        let list: Vec<Watched<wire::GatewayConfiguration>> = serde_json::from_value(json!([
            {"metadata": {"name": "good", "namespace": "ns", "resourceVersion": "3"},
             "spec": {"networkAttachments": []}},
            {"metadata": {"name": "bad", "namespace": "ns", "resourceVersion": "4"},
             "spec": {"networkAttachments": "not a list"}}
        ]))
        .expect("the list is read");
        assert!(list[0].read().is_ok());
        let error = list[1].read().expect_err("unreadable");
        assert_eq!(
            error,
            "GatewayConfiguration: spec.networkAttachments: expected a list, found \"not a list\""
        );
        assert_eq!(list[1].name_any(), "bad");
        assert_eq!(list[1].resource_version().as_deref(), Some("4"));
    }

    /// A watched object of a typed kind holds of its metadata what the crate reads; a
    /// Deployment, which is written back, holds its metadata whole.
    #[test]
    fn a_watched_object_holds_the_metadata_its_type_names() {
        let metadata = json!({
            "name": "gw", "namespace": "ns", "uid": "u-1", "generation": 2,
            "resourceVersion": "9", "deletionTimestamp": "2026-12-07T10:00:00Z",
            "labels": {"k": "v"}, "annotations": {"a": "b"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "p"}],
            "creationTimestamp": "2026-12-07T09:00:00Z", "finalizers": ["f"],
            "generateName": "g-", "managedFields": [{"manager": "m"}]
        });
        let gateway = Watched::<wire::Gateway>::from_json(json!({
            "metadata": metadata,
            "spec": {"gatewayClassName": "c", "listeners": []}
        }));
        let read = &gateway.read().expect("readable").metadata;
        assert!(read.other.is_empty(), "{:?}", read.other);
        let mut named: Value = serde_json::to_value(read).expect("JSON");
        let mut expected = metadata.clone();
        for key in [
            "creationTimestamp",
            "finalizers",
            "generateName",
            "managedFields",
        ] {
            expected.as_object_mut().expect("object").remove(key);
        }
        assert_eq!(named, expected, "every key the type names is kept");
        let route = Watched::<wire::L34Route>::from_json(json!({"metadata": metadata}));
        named = serde_json::to_value(&route.read().expect("readable").metadata).expect("JSON");
        assert_eq!(named, expected);
        let deployment = Watched::<wire::Deployment>::from_json(json!({"metadata": metadata}));
        let whole = &deployment.read().expect("readable").object["metadata"];
        for key in ["creationTimestamp", "finalizers", "generateName"] {
            assert!(whole.get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn an_unreadable_gateway_keeps_its_class() {
        let gateway = Watched::<wire::Gateway>::from_json(json!({
            "metadata": {"name": "gw", "namespace": "ns"},
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": 5}
        }));
        assert!(gateway.read().is_err());
        assert_eq!(gateway.unread_class(), Some("meridio"));
        let readable = Watched::<wire::Gateway>::from_json(json!({
            "metadata": {"name": "gw", "namespace": "ns"},
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
        }));
        assert_eq!(readable.unread_class(), None);
    }

    #[test]
    fn a_condition_time_past_year_9999_is_read_and_kept_as_written() {
        let time = "9999-12-31T23:59:59-01:00";
        let gateway = Watched::<wire::Gateway>::from_json(json!({
            "metadata": {"name": "gw", "namespace": "ns"},
            "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]},
            "status": {"conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted",
                                       "message": "", "lastTransitionTime": time}]}
        }));
        let wire = gateway.read().expect("readable");
        assert_eq!(wire.status.conditions[0].last_transition_time, time);
    }

    #[cfg(feature = "testing")]
    #[test]
    fn each_object_read_is_counted() {
        let before = objects_read();
        let _: Vec<Watched<wire::L34Route>> = serde_json::from_value(
            json!([{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]),
        )
        .expect("two routes");
        assert_eq!(objects_read() - before, 2);
    }

    #[test]
    fn managed_fields_are_not_kept() {
        let deployment = Watched::<wire::Deployment>::from_json(json!({
            "metadata": {"name": "d", "namespace": "ns", "uid": "u", "generation": 4,
                         "managedFields": [{"manager": "kubectl"}]},
            "spec": {"replicas": 1}
        }));
        let wire = deployment.read().expect("a Deployment");
        assert!(wire.get(&["metadata", "managedFields"]).is_none());
        assert_eq!(wire.name(), Some("d"));
        assert_eq!(deployment.meta().uid.as_deref(), Some("u"));
        assert_eq!(deployment.meta().generation, Some(4));
    }

    /// A watch event's object (read from its text) skips `metadata.managedFields` unread
    /// and keeps every other key, a `managedFields` elsewhere included, as the JSON has it.
    #[test]
    fn a_watched_objects_managed_fields_are_skipped_and_nothing_else() {
        let text = r#"{"managedFields": 1, "metadata": {"name": "d", "namespace": "ns",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "labels": {"managedFields": "kept"}},
            "spec": {"replicas": 2, "managedFields": [true, null, 1.5]}}"#;
        // The read itself leaves them out (`from_tree` would remove them too).
        let mut reader = serde_json::Deserializer::from_str(text);
        let skipped = serde::de::DeserializeSeed::deserialize(MANAGED_FIELDS_SKIPPED, &mut reader)
            .expect("a tree");
        assert!(
            skipped
                .get("metadata")
                .and_then(|m| m.get("managedFields"))
                .is_none()
        );
        assert_eq!(
            skipped.get("managedFields").and_then(tree::Value::as_i64),
            Some(1)
        );
        let watched: Watched<wire::Deployment> = serde_json::from_str(text).expect("read");
        let wire = watched.read().expect("a Deployment");
        let mut expected: Value = serde_json::from_str(text).expect("JSON");
        expected["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("managedFields");
        assert_eq!(serde_json::to_value(wire).expect("JSON"), expected);
        // Not an object where the path goes: read as it is, as from a JSON value.
        let text = r#"{"metadata": ["managedFields"], "spec": {"replicas": 1}}"#;
        let odd: Watched<wire::Deployment> = serde_json::from_str(text).expect("read");
        let from_value =
            Watched::<wire::Deployment>::from_json(serde_json::from_str(text).expect("JSON"));
        let json = |w: &Watched<wire::Deployment>| {
            w.read()
                .map(|d| serde_json::to_value(d).expect("JSON"))
                .map_err(str::to_owned)
        };
        assert_eq!(json(&odd), json(&from_value));
        assert_eq!(
            json(&odd).expect("read")["metadata"],
            json!(["managedFields"])
        );
    }

    /// The API paths kube-rs builds from the trait: a wrong group, version or plural
    /// would make every request of a controller 404.
    #[test]
    fn each_kind_names_its_api() {
        fn path<K: Resource<DynamicType = ()>>(namespace: Option<&str>) -> String {
            K::url_path(&(), namespace)
        }
        assert_eq!(
            path::<Watched<wire::Gateway>>(Some("red")),
            "/apis/gateway.networking.k8s.io/v1/namespaces/red/gateways"
        );
        assert_eq!(
            path::<Watched<wire::GatewayClass>>(None),
            "/apis/gateway.networking.k8s.io/v1/gatewayclasses"
        );
        assert_eq!(
            path::<Watched<wire::GatewayConfiguration>>(Some("red")),
            "/apis/meridio-2.nordix.org/v1alpha1/namespaces/red/gatewayconfigurations"
        );
        assert_eq!(
            path::<Watched<wire::L34Route>>(Some("red")),
            "/apis/meridio-2.nordix.org/v1alpha1/namespaces/red/l34routes"
        );
        assert_eq!(
            path::<Watched<wire::Deployment>>(Some("red")),
            "/apis/apps/v1/namespaces/red/deployments"
        );
        let resource = ApiResource::erase::<Watched<wire::Deployment>>(&());
        assert_eq!(resource.api_version, "apps/v1");
        assert_eq!(resource.kind, "Deployment");
    }

    /// A watch event's object is read through the crate's compact tree, never through a
    /// `serde_json::Value`: the same object, identity, class and error (key path and words)
    /// as the reading of a `serde_json::Value` had, whatever the JSON.
    #[test]
    fn an_object_read_through_the_tree_reads_as_through_a_json_value() {
        use std::fmt::Debug;

        /// The reading of a `serde_json::Value` this crate had before the tree.
        fn by_value<T: Kind>(mut value: Value) -> (ObjectMeta, Result<T, String>, Option<String>) {
            let mut meta = ObjectMeta::default();
            if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
                let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
                meta.name = text("name");
                meta.namespace = text("namespace");
                meta.uid = text("uid");
                meta.resource_version = text("resourceVersion");
                meta.generation = metadata.get("generation").and_then(Value::as_i64);
            }
            // Of a typed object's metadata, the keys its type names alone (as the tree's
            // reading).
            if T::KIND != "Deployment"
                && let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut)
            {
                metadata.retain(|key, _| wire::ObjectMeta::NAMED_KEYS.contains(&key.as_str()));
            }
            // Of a Deployment's status, what the rollout reads alone (as the tree's reading).
            if T::KIND == "Deployment"
                && let Value::Object(object) = &mut value
            {
                let mut tree = tree::Map::from(std::mem::take(object));
                crate::rollout::keep_read_status(&mut tree);
                *object = tree.into();
            }
            let class = value
                .pointer("/spec/gatewayClassName")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let read = serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
                let path = e.path().to_string();
                let why = crate::read_at::plain_message(&e.into_inner().to_string());
                match path.as_str() {
                    "." => format!("{}: {why}", T::KIND),
                    _ => format!("{}: {path}: {why}", T::KIND),
                }
            });
            let class = class.filter(|_| read.is_err());
            (meta, read, class)
        }

        fn same<T: Kind + PartialEq + Debug>(text: &str) {
            let watched: Watched<T> = serde_json::from_str(text).expect("JSON");
            let value: Value = serde_json::from_str(text).expect("JSON");
            let (meta, read, class) = by_value::<T>(value);
            assert_eq!(watched.meta, meta, "{text}");
            assert_eq!(watched.read, read, "{text}");
            assert_eq!(watched.unread_class, class, "{text}");
        }

        let meta = r#""metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7",
            "generation": 3, "labels": {"k": "v"}, "annotations": {"x": "y"},
            "creationTimestamp": "2026-12-07T10:00:00Z",
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "p", "controller": true}],
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {".": {}}}}]}"#;
        let metas = [
            meta.to_owned(),
            r#""metadata": {"name": 5, "generation": 2.0}"#.to_owned(),
            r#""metadata": {"name": "a", "generation": "2", "labels": {"k": 5}}"#.to_owned(),
            r#""metadata": {"name": "a", "name": "b", "uid": null}"#.to_owned(),
            r#""metadata": []"#.to_owned(),
            r#""metadata": null"#.to_owned(),
        ];
        let roots = ["[]", "null", "5", r#""x""#, "{}"];
        let gateways = [
            r#""spec": {"gatewayClassName": "c", "listeners": [{"name": "l", "port": 80, "protocol": "TCP"}]},
               "status": {"conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted",
               "message": "m", "lastTransitionTime": "2026-12-07T10:00:00Z", "observedGeneration": 3}],
               "listeners": [{"name": "l", "attachedRoutes": 1, "supportedKinds": [], "conditions": []}]}"#,
            r#""spec": {"gatewayClassName": "c", "listeners": "x"}"#,
            r#""spec": {"gatewayClassName": "c", "listeners": [{"name": "l", "port": "80", "protocol": "TCP"}]}"#,
            r#""spec": {"gatewayClassName": "c", "listeners": [{"name": "l", "port": 80.5, "protocol": "TCP"}]}"#,
            r#""spec": {"gatewayClassName": "c", "listeners": [{"name": "l", "port": 70000, "protocol": "TCP"}]}"#,
            r#""spec": {"gatewayClassName": 5, "listeners": [{"name": "l", "port": -1, "protocol": "TCP"}]}"#,
            r#""spec": {"gatewayClassName": "c", "listeners": [null], "infrastructure": 5}"#,
            r#""spec": [1, 2]"#,
            r#""spec": {"gatewayClassName": "c", "listeners": [{"name": "l", "port": 80, "protocol": "TCP",
               "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"a": "b"},
               "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}}}],
               "addresses": [{"type": "IPAddress", "value": "10.0.0.1"}]}"#,
        ];
        let configurations = [
            r#""spec": {"networkAttachments": "not a list"}"#,
            r#""spec": {"networkAttachments": [{"name": "n", "namespace": "ns", "interface": "eth1"}],
               "horizontalScaling": {"replicas": "many"}}"#,
            r#""spec": {"horizontalScaling": {"replicas": 2, "enforceReplicas": true},
               "internalSubnets": [{"cidr": "169.254.100.0/24"}]}"#,
        ];
        let routes = [
            r#""spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["10.0.0.1/32"],
               "protocols": ["TCP"], "destinationPorts": ["80"], "priority": 1}"#,
            r#""spec": {"parentRefs": {"name": "gw"}}"#,
            r#""spec": {"parentRefs": [{"name": 5}], "priority": "high"}"#,
        ];
        let classes = [
            r#""spec": {"controllerName": "example.com/c", "parametersRef": {"group": "g", "kind": "K", "name": "n"}}"#,
            r#""spec": {"controllerName": ["x"]}"#,
        ];
        let deployments = [
            r#""spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i", "env": []}]}}},
               "status": {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]}"#,
            r#""spec": null, "status": 1.5"#,
        ];
        let objects = |specs: &[&str]| -> Vec<String> {
            let mut out: Vec<String> = roots.iter().map(|r| (*r).to_owned()).collect();
            for metadata in &metas {
                for spec in specs {
                    out.push(format!(
                        r#"{{"apiVersion": "v1", "kind": "K", {metadata}, {spec}}}"#
                    ));
                }
            }
            out
        };
        for text in objects(&gateways) {
            same::<wire::Gateway>(&text);
        }
        for text in objects(&configurations) {
            same::<wire::GatewayConfiguration>(&text);
        }
        for text in objects(&routes) {
            same::<wire::L34Route>(&text);
        }
        for text in objects(&classes) {
            same::<wire::GatewayClass>(&text);
        }
        for text in objects(&deployments) {
            same::<wire::Deployment>(&text);
        }
    }
}
