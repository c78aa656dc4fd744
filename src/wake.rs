//! Whom a change wakes: pure functions from a watched object's change (its old and new
//! state) to the Gateways to reconcile, and the GatewayClasses whose own status is settled
//! again.
//!
//! A reconcile of one Gateway reads the Gateway and exactly the objects
//! [`gather`](crate::reconcile::gather) decides: its GatewayClass (by
//! `spec.gatewayClassName`), the GatewayConfiguration it uses
//! ([`lookup::configuration_ref`]: its own `parametersRef`, else its class's default), the
//! Deployment of its LB name ([`lookup::deployment_name`], in its namespace), the L34Routes
//! that name it, and the labels of those routes' namespaces when a listener selects
//! namespaces by label. The functions here are the same rules read backwards: from a
//! changed object to the Gateways whose gather reads it.
//!
//! # Keys, not Gateways
//!
//! A controller with 10,000 Gateways must not scan them all on every event. So the core
//! does not search Gateways: it says under which [`WakeKey`]s a Gateway is found
//! ([`gateway_keys`], computed from the Gateway alone when the embedder's watch sees it) and
//! which keys a change concerns ([`Woken::keys`]). The embedder keeps the index (key to
//! Gateways, updated on every Gateway event) and looks the keys up; the core decides both
//! sides of it, so they cannot drift apart. A change that names its Gateways itself (a
//! route's `parentRefs`, a Deployment's controller `ownerReference`) names them directly
//! ([`Woken::gateways`]).
//!
//! | change of | wakes | function |
//! |---|---|---|
//! | a Gateway | itself (no other Gateway's gather reads it) | [`gateway_change`] |
//! | a GatewayClass | the Gateways under [`WakeKey::Class`] when its presence or `spec` changed; the class's own status | [`class_change`] |
//! | a GatewayConfiguration | the Gateways naming it ([`WakeKey::Configuration`]) and those of the classes naming it as their default ([`WakeKey::Class`]); those classes' own status | [`configuration_change`] |
//! | an L34Route | the Gateways its old and its new `parentRefs` name | [`route_change`] |
//! | a Deployment | the Gateways under [`WakeKey::LbDeployment`] of its name, and its controller Gateway | [`deployment_change`] |
//! | a Namespace's labels | the parents of the routes in that namespace, among the Gateways under [`WakeKey::NamespaceSelector`] | [`namespace_change`] |
//!
//! # What the functions guarantee
//!
//! For every change of one object, and every Gateway of the cluster:
//!
//! - **complete** (exact): if the change alters what the gather of a Gateway reads, the
//!   Gateway is woken: named in [`Woken::gateways`], or indexed under one of
//!   [`Woken::keys`] by [`gateway_keys`] (the Gateway as it is, unchanged by the change:
//!   only the Gateway's own change moves its keys, and that wakes it anyway). Of a
//!   GatewayClass a reconcile reads its presence and its `spec` alone, so a change of its
//!   status or metadata wakes none of its Gateways (their plans cannot differ: the property
//!   tests check that too);
//! - **close** (conservative, by design): a woken Gateway is one that reads the object or
//!   names it. The functions look at the changed object, never at the other objects of the
//!   cluster, so they over-approximate where the decision would need another object: every
//!   Gateway of a class is woken by a change of the class's default configuration, even one
//!   that names a configuration of its own; a Deployment wakes its controller Gateway even
//!   when its name is not that Gateway's LB name; a route edit wakes its parents even when
//!   the edit changed nothing the gather reads. A spurious wake costs one reconcile that
//!   writes nothing; a missed one leaves a Gateway stale until its next resync.
//!
//! The property tests of the crate build a cluster of several Gateways, apply one random
//! change, gather every Gateway before and after, and check both.
//!
//! ```
//! use gateway_reconcile::{Settings, wake};
//! use gateway_reconcile::wake::{GatewayRef, WakeKey};
//! use gateway_reconcile::wire::{Gateway, L34Route};
//!
//! let settings = Settings::default();
//! let gateway: Gateway = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "gw", "namespace": "red"}, "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
//! })).unwrap();
//! // The embedder's index: the Gateway under each of its keys.
//! let keys = wake::gateway_keys(&settings, &gateway);
//! assert!(keys.contains(&WakeKey::Class("c".into())));
//!
//! // A class change wakes the Gateways under its key.
//! let woken = wake::class_change("c", None, None);
//! assert!(woken.keys.iter().any(|key| keys.contains(key)));
//!
//! // A route names its Gateways itself.
//! let route: L34Route = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "r", "namespace": "red"}, "spec": {"parentRefs": [{"name": "gw"}]}
//! })).unwrap();
//! assert_eq!(wake::route_change(None, Some(&route)), [GatewayRef::new("red", "gw")]);
//! ```

use std::fmt;

use crate::lookup;
use crate::reconcile::Labels;
use crate::settings::Settings;
use crate::wire::{Deployment, Gateway, GatewayClass, L34Route};

/// What an index finds a Gateway by ([`gateway_keys`]), and what a change asks to look up
/// ([`Woken::keys`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WakeKey {
    /// Its `spec.gatewayClassName`: a change of the class, or of the GatewayConfiguration
    /// the class names as its default.
    Class(String),
    /// The GatewayConfiguration its own `infrastructure.parametersRef` names (of our group
    /// and kind; in the Gateway's namespace). The Gateways that use their class's default
    /// are found by [`WakeKey::Class`].
    Configuration {
        /// The configuration's namespace.
        namespace: String,
        /// The configuration's name.
        name: String,
    },
    /// A listener admits routes by a namespace label selector: a namespace's labels may
    /// decide which routes attach ([`namespace_change`]).
    NamespaceSelector,
    /// Its LB Deployment's name ([`lookup::deployment_name`]) in its namespace: a
    /// Deployment of that name concerns it, whoever owns it (its own, or a foreign one in
    /// the way). Never the other way round: a long Gateway name is shortened with a hash,
    /// so a Deployment's name is not taken apart.
    LbDeployment {
        /// The Gateway's namespace.
        namespace: String,
        /// The LB Deployment's name.
        name: String,
    },
}

/// A Gateway by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GatewayRef {
    /// The Gateway's namespace.
    pub namespace: String,
    /// The Gateway's name.
    pub name: String,
}

impl GatewayRef {
    /// The Gateway `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        GatewayRef {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The Gateway's own reference (an empty namespace or name when it has none, as the
    /// gather reads it).
    pub fn of(gateway: &Gateway) -> Self {
        GatewayRef::new(
            gateway.metadata.namespace.as_deref().unwrap_or_default(),
            gateway.metadata.name.as_deref().unwrap_or_default(),
        )
    }
}

impl fmt::Display for GatewayRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Whom a change wakes: the Gateways it names, the keys to look up in the embedder's index
/// of Gateways ([`gateway_keys`]), and the GatewayClasses whose own status is settled again
/// ([`settle_class`](crate::gateway_class::settle_class)). Each list is sorted and holds
/// no duplicate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Woken {
    /// The Gateways the change names itself.
    pub gateways: Vec<GatewayRef>,
    /// Every Gateway indexed under one of these keys is woken.
    pub keys: Vec<WakeKey>,
    /// The GatewayClasses whose own status may change.
    pub classes: Vec<String>,
}

impl Woken {
    /// Nothing is woken.
    pub fn is_empty(&self) -> bool {
        self.gateways.is_empty() && self.keys.is_empty() && self.classes.is_empty()
    }

    /// Whether a Gateway `gateway`, indexed under `keys` ([`gateway_keys`]), is woken: named,
    /// or under one of the keys. An index answers the same without a scan; this is the
    /// rule it implements.
    pub fn wakes(&self, gateway: &GatewayRef, keys: &[WakeKey]) -> bool {
        self.gateways.contains(gateway) || self.keys.iter().any(|key| keys.contains(key))
    }
}

/// The keys under which an index finds `gateway`: its class, its LB Deployment's name, the
/// GatewayConfiguration its own reference names (if ours), and
/// [`WakeKey::NamespaceSelector`] when a listener selects namespaces by label. Sorted,
/// without duplicates. Computed from the Gateway alone: an index updates them on the
/// Gateway's own events.
///
/// ```
/// use gateway_reconcile::{Settings, wake::{self, WakeKey}};
/// let gateway: gateway_reconcile::wire::Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw", "namespace": "red"},
///     "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
/// })).unwrap();
/// assert_eq!(wake::gateway_keys(&Settings::default(), &gateway), [
///     WakeKey::Class("c".into()),
///     WakeKey::Configuration { namespace: "red".into(), name: "conf".into() },
///     WakeKey::LbDeployment { namespace: "red".into(), name: "sllbr-gw".into() },
/// ]);
/// ```
pub fn gateway_keys(settings: &Settings, gateway: &Gateway) -> Vec<WakeKey> {
    let me = GatewayRef::of(gateway);
    let mut keys = vec![
        WakeKey::Class(gateway.spec.gateway_class_name.clone()),
        WakeKey::LbDeployment {
            name: lookup::deployment_name(settings, &me.name),
            namespace: me.namespace,
        },
    ];
    // Its own reference only: the Gateways of a class's default are found by class.
    if let Some(own) = lookup::configuration_ref(settings, gateway, None) {
        keys.push(WakeKey::Configuration {
            namespace: own.namespace.to_owned(),
            name: own.name.to_owned(),
        });
    }
    if lookup::uses_namespace_selector(gateway) {
        keys.push(WakeKey::NamespaceSelector);
    }
    sorted(keys)
}

/// The Gateways a change of a Gateway wakes: itself, old and new (the same Gateway: a
/// Gateway's namespace and name do not change). No other Gateway's gather reads it.
pub fn gateway_change(old: Option<&Gateway>, new: Option<&Gateway>) -> Vec<GatewayRef> {
    sorted(old.into_iter().chain(new).map(GatewayRef::of).collect())
}

/// The Gateways a route's `parentRefs` name ([`lookup::parent_gateway`]: group and kind
/// default to the Gateway's, namespace to the route's), sorted, without duplicates: what
/// an index of routes by Gateway keys a route by.
pub fn route_parents(route: &L34Route) -> Vec<GatewayRef> {
    let own_namespace = route.metadata.namespace.as_deref().unwrap_or_default();
    sorted(
        route
            .spec
            .parent_refs
            .iter()
            .filter_map(|parent| lookup::parent_gateway(parent, own_namespace))
            .map(|(namespace, name)| GatewayRef::new(namespace, name))
            .collect(),
    )
}

/// The Gateways a route's change wakes: those its old and its new `parentRefs` name
/// ([`route_parents`]), sorted, without duplicates. A route moved to another Gateway wakes
/// the one it left (which loses its addresses); a created route has no old state, a
/// deleted one no new.
///
/// ```
/// use gateway_reconcile::wake::{self, GatewayRef};
/// use gateway_reconcile::wire::L34Route;
/// let route = |gateway: &str| -> L34Route {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": "r", "namespace": "blue"},
///         "spec": {"parentRefs": [{"name": gateway, "namespace": "red"}]}
///     })).unwrap()
/// };
/// let (old, new) = (route("a"), route("b"));
/// assert_eq!(
///     wake::route_change(Some(&old), Some(&new)),
///     [GatewayRef::new("red", "a"), GatewayRef::new("red", "b")]
/// );
/// assert_eq!(wake::route_change(Some(&old), None), [GatewayRef::new("red", "a")]);
/// ```
pub fn route_change(old: Option<&L34Route>, new: Option<&L34Route>) -> Vec<GatewayRef> {
    sorted(old.into_iter().chain(new).flat_map(route_parents).collect())
}

/// Whom a Deployment's change wakes: the Gateways whose LB Deployment name it has
/// ([`WakeKey::LbDeployment`]: its own, or one a foreign Deployment collides with), and its
/// controller Gateway ([`lookup::deployment_gateway`]), old and new. The name is looked up,
/// never taken apart (a long Gateway name is shortened with a hash). A Deployment without a
/// name has no key.
///
/// ```
/// use gateway_reconcile::wake::{self, GatewayRef, WakeKey};
/// use gateway_reconcile::wire::Deployment;
/// let deployment: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "sllbr-gw", "namespace": "red", "ownerReferences": [{
///         "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
///         "name": "gw", "uid": "u-1", "controller": true}]}
/// })).unwrap();
/// let woken = wake::deployment_change(None, Some(&deployment));
/// assert_eq!(woken.gateways, [GatewayRef::new("red", "gw")]);
/// assert_eq!(woken.keys, [WakeKey::LbDeployment { namespace: "red".into(), name: "sllbr-gw".into() }]);
/// ```
pub fn deployment_change(old: Option<&Deployment>, new: Option<&Deployment>) -> Woken {
    let mut woken = Woken::default();
    for deployment in old.into_iter().chain(new) {
        let namespace = deployment.namespace().unwrap_or_default();
        if let Some(name) = deployment.name() {
            woken.keys.push(WakeKey::LbDeployment {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            });
        }
        if let Some(owner) = lookup::deployment_gateway(deployment) {
            let namespace = owner.namespace.unwrap_or_default();
            woken.gateways.push(GatewayRef::new(namespace, owner.name));
        }
    }
    woken.normalized()
}

/// Whom a change of the GatewayClass `name` wakes, from its state before (`old`) and after
/// (`new`); `None` is a class that is absent or does not read into the wire type.
///
/// The class's own status is settled again on every change ([`Woken::classes`]). Its
/// Gateways ([`WakeKey::Class`]) are woken unless the change leaves alone all a Gateway's
/// reconcile reads of the class: that it is there and reads, and its `spec` (the
/// `controllerName` that makes it ours, the `parametersRef` of its default configuration).
/// So the controller's own status patch of the class (its `Accepted`, its
/// `supportedFeatures`), a label or an annotation wakes no Gateway: at 10,000 Gateways of
/// one class, the class's status patch would otherwise cost 10,000 reconciles that decide
/// nothing. Two `None`s wake the Gateways (nothing tells what changed).
///
/// ```
/// use gateway_reconcile::wake::{self, WakeKey};
/// use gateway_reconcile::wire::GatewayClass;
/// let class: GatewayClass = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "c"}, "spec": {"controllerName": "example.com/gateway"}
/// })).unwrap();
/// let mut accepted = class.clone();
/// accepted.metadata.resource_version = Some("7".into());
/// accepted.status.conditions.push(serde_json::from_value(serde_json::json!({
///     "type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
///     "lastTransitionTime": "2026-01-01T00:00:00Z"
/// })).unwrap());
///
/// // Its status changed: the class is settled again, no Gateway is woken.
/// let woken = wake::class_change("c", Some(&class), Some(&accepted));
/// assert!(woken.keys.is_empty());
/// assert_eq!(woken.classes, ["c"]);
///
/// // Created, deleted or its spec edited: its Gateways too.
/// let woken = wake::class_change("c", None, Some(&class));
/// assert_eq!(woken.keys, [WakeKey::Class("c".into())]);
/// ```
pub fn class_change(name: &str, old: Option<&GatewayClass>, new: Option<&GatewayClass>) -> Woken {
    let read_alike = match (old, new) {
        (Some(old), Some(new)) => old.spec == new.spec && old.metadata.name == new.metadata.name,
        _ => false,
    };
    Woken {
        gateways: Vec::new(),
        keys: if read_alike {
            Vec::new()
        } else {
            vec![WakeKey::Class(name.to_owned())]
        },
        classes: vec![name.to_owned()],
    }
}

/// Whom a change of the GatewayConfiguration `namespace/name` wakes: the Gateways whose own
/// reference names it ([`WakeKey::Configuration`]), and, of `classes` (every GatewayClass
/// the embedder holds: there are few), each class that names it as its default
/// ([`lookup::class_configuration_ref`]): its Gateways ([`WakeKey::Class`]) and its own
/// status (the configuration's existence is its `Accepted`).
///
/// ```
/// use gateway_reconcile::{Settings, wake::{self, WakeKey}};
/// use gateway_reconcile::wire::GatewayClass;
/// let class: GatewayClass = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "c"}, "spec": {"parametersRef": {
///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
///         "name": "defaults", "namespace": "infra"}}
/// })).unwrap();
/// let woken = wake::configuration_change(&Settings::default(), "infra", "defaults", [&class]);
/// assert_eq!(woken.keys, [
///     WakeKey::Class("c".into()),
///     WakeKey::Configuration { namespace: "infra".into(), name: "defaults".into() },
/// ]);
/// assert_eq!(woken.classes, ["c"]);
/// ```
pub fn configuration_change<'a>(
    settings: &Settings,
    namespace: &str,
    name: &str,
    classes: impl IntoIterator<Item = &'a GatewayClass>,
) -> Woken {
    let mut woken = Woken {
        keys: vec![WakeKey::Configuration {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }],
        ..Woken::default()
    };
    for class in classes {
        let names_it = lookup::class_configuration_ref(settings, class)
            .is_some_and(|named| named.namespace == namespace && named.name == name);
        if names_it {
            let class_name = class.metadata.name.clone().unwrap_or_default();
            woken.keys.push(WakeKey::Class(class_name.clone()));
            woken.classes.push(class_name);
        }
    }
    woken.normalized()
}

/// Whom a change of the labels of the namespace `namespace` wakes: nobody when the labels
/// did not change (`None`: no such namespace, before its creation or after its deletion);
/// otherwise the Gateways that `routes` in that namespace name ([`route_parents`]). Of
/// those, wake only the ones indexed under [`WakeKey::NamespaceSelector`]: a Gateway reads
/// a namespace's labels only when a listener selects namespaces by label, and only for the
/// namespaces of the routes that name it.
///
/// `routes` are the routes the embedder holds in that namespace (an index of routes by
/// namespace answers it without a scan); a route of another namespace is skipped.
///
/// ```
/// use gateway_reconcile::reconcile::Labels;
/// use gateway_reconcile::wake::{self, GatewayRef};
/// use gateway_reconcile::wire::L34Route;
/// let route: L34Route = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "r", "namespace": "blue"},
///     "spec": {"parentRefs": [{"name": "gw", "namespace": "red"}]}
/// })).unwrap();
/// let old = Labels::from([("team".to_owned(), "a".to_owned())]);
/// let new = Labels::from([("team".to_owned(), "b".to_owned())]);
/// assert_eq!(
///     wake::namespace_change("blue", Some(&old), Some(&new), [&route]),
///     [GatewayRef::new("red", "gw")]
/// );
/// assert!(wake::namespace_change("blue", Some(&old), Some(&old), [&route]).is_empty());
/// ```
pub fn namespace_change<'a>(
    namespace: &str,
    old_labels: Option<&Labels>,
    new_labels: Option<&Labels>,
    routes: impl IntoIterator<Item = &'a L34Route>,
) -> Vec<GatewayRef> {
    if old_labels == new_labels {
        return Vec::new();
    }
    sorted(
        routes
            .into_iter()
            .filter(|route| route.metadata.namespace.as_deref().unwrap_or_default() == namespace)
            .flat_map(route_parents)
            .collect(),
    )
}

impl Woken {
    fn normalized(self) -> Self {
        Woken {
            gateways: sorted(self.gateways),
            keys: sorted(self.keys),
            classes: sorted(self.classes),
        }
    }
}

fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items.dedup();
    items
}
