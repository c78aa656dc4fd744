//! The store's change journal: the one hook every change of the store's objects passes
//! through ([`Store::watched`]), and the [`WatchEvent`]s it records for the loop's watch
//! while the watch is on.
//!
//! The store's objects change in a handful of places (a test's add, patch and delete, a
//! rollout, a Deployment write or status patch through a [`StorePort`](super::StorePort),
//! a GatewayClass's own status settled before a reconcile): each runs inside
//! [`Store::watched`], naming the objects it may change (a [`Scope`]). With the journal off
//! (the default) the hook runs the change and nothing else: no copy, no record, and
//! nothing the store's fingerprint reads. With it on, the hook reads the scope's objects
//! before and after and records one event per object that changed: its kind, key, old and
//! new state, at the store's clock. One hook at the store rather than one in the simulated
//! API server: a delete, a route, a namespace or the template never pass through the
//! server, and the server never knows the key an object is held under.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use super::{Store, key};
use crate::reconcile::ObjectKey;
use crate::sim::cluster::Kind;

/// The kind of an object the kit's watch sees change ([`WatchEvent::kind`]). Ordered as a
/// cluster fills them: a change of several objects at once (a Gateway added with the
/// objects around it) records its events in this order, then by key.
///
/// ```
/// use gateway_reconcile::testing::WatchKind;
///
/// assert!(WatchKind::GatewayClass < WatchKind::Gateway);
/// assert_eq!(WatchKind::Route.to_string(), "L34Route");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WatchKind {
    /// A GatewayClass (its namespace is `""`).
    GatewayClass,
    /// A Gateway.
    Gateway,
    /// A GatewayConfiguration.
    Configuration,
    /// A Deployment.
    Deployment,
    /// An L34Route.
    Route,
    /// A Namespace's labels (its namespace is `""`, its name the namespace's).
    Namespace,
    /// The LB Deployment template (one per store: `""`, `"template"`).
    Template,
}

impl std::fmt::Display for WatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WatchKind::GatewayClass => "GatewayClass",
            WatchKind::Gateway => "Gateway",
            WatchKind::Configuration => "GatewayConfiguration",
            WatchKind::Deployment => "Deployment",
            WatchKind::Route => "L34Route",
            WatchKind::Namespace => "Namespace",
            WatchKind::Template => "template",
        })
    }
}

/// One change of one object of the store, as the kit's watch sees it: its kind and key, its
/// state before and after (`None`: absent; a Namespace's state is its labels), and the
/// store's clock when it changed.
///
/// ```
/// use gateway_reconcile::testing::{Kind, StoreLoop, Watch, WatchKind, strategies};
/// use serde_json::json;
///
/// let mut toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
/// let patch = json!({"spec": {"horizontalScaling": {"replicas": 3}}});
/// toy.store_mut().patch("ns", "gw", Kind::Configuration, &patch).unwrap();
/// let event = toy.store().changes().last().unwrap();
/// assert_eq!((event.kind, event.name.as_str()), (WatchKind::Configuration, "conf"));
/// assert_eq!(event.old.as_ref().unwrap()["spec"]["horizontalScaling"]["replicas"], 2);
/// assert_eq!(event.new.as_ref().unwrap()["spec"]["horizontalScaling"]["replicas"], 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WatchEvent {
    /// The object's kind.
    pub kind: WatchKind,
    /// Its namespace (`""` for a GatewayClass, a Namespace or the template).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its state before the change (`None`: it did not exist).
    pub old: Option<Value>,
    /// Its state after the change (`None`: it was deleted).
    pub new: Option<Value>,
    /// The store's clock when it changed.
    pub time: Timestamp,
}

impl WatchEvent {
    /// The object's kind and key: what coalescing groups events by.
    pub(super) fn object(&self) -> (WatchKind, ObjectKey) {
        (self.kind, key(&self.namespace, &self.name))
    }
}

/// The objects a change may touch, read before and after it by [`Store::watched`].
#[derive(Debug, Clone)]
pub(super) enum Scope {
    /// One object.
    One(WatchKind, ObjectKey),
    /// Every object of one kind (a patch of a Gateway's routes replaces several).
    Every(WatchKind),
    /// Every object (a Gateway added with the objects around it).
    All,
}

const KINDS: [WatchKind; 7] = [
    WatchKind::GatewayClass,
    WatchKind::Gateway,
    WatchKind::Configuration,
    WatchKind::Deployment,
    WatchKind::Route,
    WatchKind::Namespace,
    WatchKind::Template,
];

impl Store {
    /// The one hook every change of the store's objects runs in: `change`, which may
    /// change the objects of `scope` and no other. With the journal on, each of them that
    /// changed is recorded as a [`WatchEvent`]; with it off, `change` runs alone.
    pub(super) fn watched<R>(&mut self, scope: Scope, change: impl FnOnce(&mut Store) -> R) -> R {
        if self.journal.is_none() {
            return change(self);
        }
        let before = self.states(&scope);
        let result = change(self);
        let after = self.states(&scope);
        let time = self.now();
        let mut keys: Vec<&(WatchKind, ObjectKey)> = before.keys().chain(after.keys()).collect();
        keys.sort();
        keys.dedup();
        let events: Vec<WatchEvent> = keys
            .into_iter()
            .filter(|at| before.get(*at) != after.get(*at))
            .map(|(kind, (namespace, name))| WatchEvent {
                kind: *kind,
                namespace: namespace.clone(),
                name: name.clone(),
                old: before.get(&(*kind, key(namespace, name))).cloned(),
                new: after.get(&(*kind, key(namespace, name))).cloned(),
                time,
            })
            .collect();
        if let Some(journal) = &mut self.journal {
            journal.extend(events);
        }
        result
    }

    /// The states of the objects of `scope` that exist, as JSON, by kind and key.
    fn states(&self, scope: &Scope) -> BTreeMap<(WatchKind, ObjectKey), Value> {
        let mut states = BTreeMap::new();
        match scope {
            Scope::One(kind, at) => {
                if let Some(state) = self.state(*kind, at) {
                    states.insert((*kind, at.clone()), state);
                }
            }
            Scope::Every(kind) => self.states_of(*kind, &mut states),
            Scope::All => {
                for kind in KINDS {
                    self.states_of(kind, &mut states);
                }
            }
        }
        states
    }

    /// Every object of `kind`, into `states`.
    fn states_of(&self, kind: WatchKind, states: &mut BTreeMap<(WatchKind, ObjectKey), Value>) {
        let keys: Vec<ObjectKey> = match kind {
            WatchKind::GatewayClass => self.classes.keys().map(|name| key("", name)).collect(),
            WatchKind::Gateway => self.gateways.keys().cloned().collect(),
            WatchKind::Configuration => self.configurations.keys().cloned().collect(),
            WatchKind::Deployment => self.deployments.keys().cloned().collect(),
            WatchKind::Route => self.routes.keys().cloned().collect(),
            WatchKind::Namespace => self.namespaces.keys().map(|name| key("", name)).collect(),
            WatchKind::Template => vec![template_key()],
        };
        for at in keys {
            if let Some(state) = self.state(kind, &at) {
                states.insert((kind, at), state);
            }
        }
    }

    /// One object's state as JSON (`None`: absent).
    fn state(&self, kind: WatchKind, at: &ObjectKey) -> Option<Value> {
        match kind {
            WatchKind::GatewayClass => self.classes.get(&at.1).map(Value::from),
            WatchKind::Gateway => self.gateways.get(at).map(Value::from),
            WatchKind::Configuration => self.configurations.get(at).map(Value::from),
            WatchKind::Deployment => self.deployments.get(at).map(|d| d.to_json()),
            WatchKind::Route => self
                .routes
                .get(at)
                .and_then(|route| serde_json::to_value(route).ok()),
            WatchKind::Namespace => self
                .namespaces
                .get(&at.1)
                .and_then(|labels| serde_json::to_value(labels).ok()),
            WatchKind::Template => Some(self.template.to_json()),
        }
    }

    /// The objects the test API's operation on the Gateway `namespace/name`'s object of
    /// `kind` may change (see [`Store::patch`], [`Store::delete`]).
    pub(super) fn scope_of(&self, namespace: &str, name: &str, kind: Kind) -> Scope {
        match kind {
            Kind::Gateway => Scope::One(WatchKind::Gateway, key(namespace, name)),
            Kind::GatewayClass => Scope::One(
                WatchKind::GatewayClass,
                key("", &self.class_name(namespace, name).unwrap_or_default()),
            ),
            Kind::Configuration => match self.configuration_key(namespace, name) {
                Some(at) => Scope::One(WatchKind::Configuration, at),
                None => Scope::Every(WatchKind::Configuration),
            },
            Kind::Deployment => {
                Scope::One(WatchKind::Deployment, self.deployment_key(namespace, name))
            }
            Kind::Template => Scope::One(WatchKind::Template, template_key()),
            Kind::Routes => Scope::Every(WatchKind::Route),
        }
    }

    /// Turns the change journal on (`true`, an empty one) or off (`false`, dropping what
    /// it held). The loop's watch turns it on ([`StoreLoop::with_watch`]).
    ///
    /// [`StoreLoop::with_watch`]: super::StoreLoop::with_watch
    pub(super) fn journal(&mut self, on: bool) {
        self.journal = on.then(Vec::new);
    }

    /// The changes recorded and not yet taken by the loop's watch, oldest first: empty
    /// unless the watch is on ([`StoreLoop::with_watch`](super::StoreLoop::with_watch)).
    /// The loop takes them when it next runs (any call on the loop); a change made through
    /// [`StoreLoop::store_mut`](super::StoreLoop::store_mut) waits here until then.
    ///
    /// ```
    /// use gateway_reconcile::testing::{Kind, StoreLoop, Watch, strategies};
    /// use serde_json::json;
    ///
    /// let mut toy = StoreLoop::new(strategies::store().unwrap(), ());
    /// let label = json!({"spec": {"infrastructure": {"labels": {"a": "b"}}}});
    /// toy.store_mut().patch("ns", "gw", Kind::Gateway, &label).unwrap();
    /// assert!(toy.store().changes().is_empty(), "no watch, no journal");
    /// let mut toy = toy.with_watch(Watch::new());
    /// toy.store_mut().patch("ns", "gw", Kind::Gateway, &label).unwrap();
    /// assert_eq!(toy.store().changes().len(), 1);
    /// ```
    pub fn changes(&self) -> &[WatchEvent] {
        self.journal.as_deref().unwrap_or_default()
    }

    /// Takes the changes recorded so far (the loop's watch, as it runs).
    pub(super) fn take_changes(&mut self) -> Vec<WatchEvent> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// The template's key: one per store.
fn template_key() -> ObjectKey {
    key("", "template")
}
