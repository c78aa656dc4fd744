//! The kit's shared store: [`Store`], many Gateways over shared classes, configurations,
//! routes, namespaces and template, each object held once by its kind and key, behind the
//! simulated API server.
//!
//! This file holds the store itself: its objects, how a Gateway's objects are found by the
//! keys the core reads them by, and the test's own API on them (add, read, patch, delete,
//! roll out, the clock). Around it, one concept a file:
//!
//! - `port`: [`StorePort`], the [`Port`](crate::reconcile::Port) and
//!   [`Reader`](crate::reconcile::Reader) of one Gateway over the store, what the crate's
//!   [`Driver`](crate::reconcile::Driver) reads and writes through.
//! - `faults`: the faults a test injects into the store's API server: failed requests
//!   ([`Store::fail_next`] with a [`Request`](crate::sim::cluster::Request), the blanket
//!   [`Store::fail_writes`]) and mutating admission ([`Store::mutate_writes`]).
//! - `recorder`: what the ports recorded, per Gateway: the Events ([`Store::events`]) and
//!   the writes sent ([`Store::write_counts`]).
//! - `store_loop`: the controller loop an embedder runs on the store ([`StoreLoop`]: the
//!   crate's [`Driver`](crate::reconcile::Driver) through the embedder's own
//!   [`Reconciler`]), and the store's half of one reconcile.
//! - `journal`: the one hook every change of the store's objects runs in, recording each
//!   change as a [`WatchEvent`] (old and new state) while the loop's watch is on
//!   ([`Store::changes`]); off, it records nothing and costs nothing.
//! - `watch`: the loop's watch, on request ([`StoreLoop::with_watch`] with a [`Watch`]):
//!   the events mapped to wake-ups by the core's wake-up map ([`crate::wake`]) over an
//!   index of Gateways by [`wake::gateway_keys`](crate::wake::gateway_keys), a resync, and
//!   faults that lose or coalesce events; what a lost event means in the kit.
//!
//! # Why a store of its own, and not one [`Cluster`](crate::sim::cluster::Cluster) per
//! Gateway
//!
//! The simulated [`Cluster`](crate::sim::cluster::Cluster) holds one Gateway's objects in
//! slots (one class, one configuration, one Deployment), which is what the scenario files
//! describe and what their runner needs, down to a hand-written object without a namespace
//! matching any key. A shared cluster needs maps instead, keyed by namespace and name, and a
//! Gateway's objects found by the keys the core reads them by
//! ([`lookup::configuration_ref`], [`lookup::deployment_name`]). Rather than give the
//! scenario runner's cluster two ways to find an object, the API server's behaviour was
//! taken out of it into one server (`sim::cluster::server`: the clock, the resourceVersion
//! and uid counters, the bookkeeping, the Deployment write semantics, the crude Deployment
//! controller, mutating admission and every injected fault), which both ask: the cluster
//! with its slots, this store with its maps. Each fact of the server's behaviour is written
//! once; each object is held once, here, so an edit of a shared object is seen by every
//! Gateway that reads it.

mod faults;
mod journal;
mod port;
mod recorder;
mod store_loop;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::events::Event;
use crate::lookup;
use crate::reconcile::ObjectKey;
use crate::settings::Settings;
use crate::sim::cluster::store::{check, default_status, typed};
use crate::sim::cluster::{ClusterError, Kind, Objects, RolloutState, Server};
use crate::sim::merge_patch;
use crate::sim::scenario::WriteCounts;
use crate::snapshot::NamespaceLabels;
use crate::wire::{Deployment, Gateway, GatewayClass, L34Route, tree};
use journal::Scope;
pub use journal::{WatchEvent, WatchKind};
pub use port::StorePort;
pub use store_loop::{Reconciler, StoreLoop};
pub use watch::{Watch, WatchStats};

/// One shared, in-memory cluster for an embedder's tests: many Gateways over shared
/// GatewayClasses, GatewayConfigurations, L34Routes, namespaces and template, each object
/// held once, by its kind and key, behind the simulated API server (resourceVersions and
/// generations, defaulting and refusals of Deployment writes, conflicts, injected failures,
/// mutating admission, a crude Deployment controller, one clock).
///
/// An edit of a shared object is seen by every Gateway that uses it: the Gateways of a
/// class see its edits, the Gateways that use one GatewayConfiguration (their own
/// reference, or their class's default) see its edits. The operations on "a Gateway's"
/// object ([`read`](Store::read), [`patch`](Store::patch), [`delete`](Store::delete),
/// [`rollout`](Store::rollout)) find it by the key the core's reconcile reads it by: its
/// class by `spec.gatewayClassName`, its configuration by [`lookup::configuration_ref`],
/// its LB Deployment by [`lookup::deployment_name`] in its namespace, its routes by
/// [`lookup::names_gateway`].
///
/// Faults: [`fail_next`](Store::fail_next) fails the next N requests of one verb on one
/// object with a given answer (controller-runtime's interceptor functions):
/// a Deployment create or update, a Gateway status patch, a read.
/// [`fail_writes`](Store::fail_writes) fails the next N Deployment writes of any Gateway.
///
/// The Events the driver records through a [`port`](Store::port) are kept, per Gateway:
/// [`events`](Store::events).
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, ready};
/// use gateway_reconcile::testing::{Kind, strategies};
/// use serde_json::json;
///
/// // The kit's Gateway `ns/gw`, and a second one, `ns/other`, of the same class and
/// // GatewayConfiguration: the store holds those once.
/// let mut store = strategies::store().unwrap();
/// store.add(strategies::objects_of("other")).unwrap();
/// assert_eq!(store.gateways().collect::<Vec<_>>(), [("ns", "gw"), ("ns", "other")]);
///
/// // One driver serves every Gateway of the store, keeping a write record for each.
/// let driver = Driver::new(store.settings().clone());
/// let now = store.now();
/// for name in ["gw", "other"] {
///     let mut port = store.port("ns", name).unwrap();
///     ready(driver.reconcile(&mut port, now)).unwrap().unwrap();
/// }
/// assert_eq!(driver.records_held(), 2);
/// let deployment = store.read("ns", "other", Kind::Deployment).unwrap().unwrap();
/// assert_eq!(deployment["metadata"]["name"], "sllbr-other");
///
/// // An edit of the shared configuration, through one Gateway, is the other's too.
/// store.patch("ns", "gw", Kind::Configuration, &json!({"spec": {"horizontalScaling": {"replicas": 4}}}))
///     .unwrap();
/// let seen = store.read("ns", "other", Kind::Configuration).unwrap().unwrap();
/// assert_eq!((seen["metadata"]["generation"].as_i64(), seen["spec"]["horizontalScaling"]["replicas"].as_i64()),
///            (Some(2), Some(4)));
/// ```
#[derive(Debug, Clone)]
pub struct Store {
    settings: Settings,
    server: Server,
    gateways: BTreeMap<ObjectKey, tree::Value>,
    /// The Gateways in the order they were added.
    order: Vec<ObjectKey>,
    classes: BTreeMap<String, tree::Value>,
    configurations: BTreeMap<ObjectKey, tree::Value>,
    deployments: BTreeMap<ObjectKey, Deployment>,
    routes: BTreeMap<ObjectKey, L34Route>,
    namespaces: NamespaceLabels,
    template: Arc<Deployment>,
    /// Each Gateway's writes.
    counts: BTreeMap<ObjectKey, WriteCounts>,
    /// The Events recorded, with the Gateway they are about, in order.
    events: Vec<(ObjectKey, Event)>,
    /// What the status patch of the reconcile under way got wrong, if anything.
    status_patch_problem: Option<String>,
    /// The changes recorded for the loop's watch, not yet taken (`None`: no watch, nothing
    /// recorded: see `journal`).
    journal: Option<Vec<WatchEvent>>,
}

impl Store {
    /// Feeds the store's state to `state`, as the simulated cluster's
    /// [`fingerprint`](crate::sim::cluster::fingerprint) does: every object without its
    /// `resourceVersion`s, the server's clock and pending faults; not the write counters or
    /// the Events recorded.
    pub(crate) fn fingerprint(&self, state: &mut impl std::hash::Hasher) {
        use crate::sim::cluster::fingerprint::{hash_map, hash_tree};
        use std::hash::Hash;
        let objects = self.gateways.iter().chain(&self.configurations);
        for ((namespace, name), object) in objects {
            (namespace, name).hash(state);
            hash_tree(object, state);
        }
        for (name, class) in &self.classes {
            name.hash(state);
            hash_tree(class, state);
        }
        for (key, deployment) in &self.deployments {
            key.hash(state);
            hash_map(&deployment.object, state);
        }
        hash_map(&self.template.object, state);
        format!("{:?}{:?}", self.routes, self.namespaces).hash(state);
        self.server.hash_state(state);
        // Only with the watch on: a store without one hashes as it always did.
        if let Some(journal) = &self.journal {
            format!("{journal:?}").hash(state);
        }
    }
}

fn key(namespace: &str, name: &str) -> ObjectKey {
    (namespace.to_owned(), name.to_owned())
}

/// An object's `metadata` text field (`""` when it has none).
fn meta<'v>(object: &'v tree::Value, field: &str) -> &'v str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(tree::Value::as_str)
        .unwrap_or("")
}

/// A merge patch onto an object created with only its key.
fn seeded(namespace: &str, name: &str, patch: &Value) -> Value {
    let mut object = match namespace {
        "" => json!({"metadata": {"name": name}}),
        _ => json!({"metadata": {"namespace": namespace, "name": name}}),
    };
    merge_patch::apply(&mut object, patch);
    object
}

impl Store {
    /// A store holding one Gateway with the objects around it (`objects`; its template is
    /// the store's, shared by every Gateway), deciding with `settings`, its clock at
    /// `now`. Fails when an object does not have the shape of its kind.
    pub fn new(settings: Settings, now: Timestamp, objects: Objects) -> Result<Self, ClusterError> {
        let template = objects
            .template
            .clone()
            .unwrap_or_else(crate::template::default_template);
        let mut store = Store {
            settings,
            server: Server::new(now),
            gateways: BTreeMap::new(),
            order: Vec::new(),
            classes: BTreeMap::new(),
            configurations: BTreeMap::new(),
            deployments: BTreeMap::new(),
            routes: BTreeMap::new(),
            namespaces: NamespaceLabels::new(),
            template: Arc::new(template),
            counts: BTreeMap::new(),
            events: Vec::new(),
            status_patch_problem: None,
            journal: None,
        };
        store.add(objects)?;
        Ok(store)
    }

    /// Adds another Gateway with the objects around it, at the store's clock. An object the
    /// store holds already (the same kind and key: a shared class, configuration, route,
    /// namespace) is kept as it is, not replaced; the template is the store's. Fails, adding
    /// nothing, when an object does not have the shape of its kind, or when the store holds
    /// a Gateway of that namespace and name already.
    pub fn add(&mut self, objects: Objects) -> Result<(), ClusterError> {
        self.watched(Scope::All, |store| store.add_unwatched(objects))
    }

    /// [`Store::add`], inside the watch's hook.
    fn add_unwatched(&mut self, objects: Objects) -> Result<(), ClusterError> {
        let Objects {
            gateway_class,
            gateway,
            configuration,
            deployment,
            template: _,
            routes,
            namespaces,
        } = objects;
        let (gateway_class, configuration) = (
            gateway_class.filter(|v| !v.is_null()),
            configuration.filter(|v| !v.is_null()),
        );
        check(Kind::GatewayClass, gateway_class.as_ref())?;
        check(Kind::Gateway, Some(&gateway))?;
        check(Kind::Configuration, configuration.as_ref())?;
        let at = key(meta(&gateway, "namespace"), meta(&gateway, "name"));
        if self.gateways.contains_key(&at) {
            return Err(ClusterError::Malformed {
                kind: Kind::Gateway,
                why: format!("the store holds a Gateway {}/{} already", at.0, at.1),
            });
        }
        // In the order a cluster fills them: class, Gateway, configuration, Deployment.
        if let Some(mut class) = gateway_class {
            let name = meta(&class, "name").to_owned();
            if !self.classes.contains_key(&name) {
                self.server.fill_bookkeeping(&mut class);
                default_status(Kind::GatewayClass, &mut class);
                self.classes.insert(name, class);
            }
        }
        let mut gateway = gateway;
        self.server.fill_bookkeeping(&mut gateway);
        default_status(Kind::Gateway, &mut gateway);
        self.gateways.insert(at.clone(), gateway);
        self.order.push(at.clone());
        self.counts.insert(at.clone(), WriteCounts::default());
        if let Some(mut configuration) = configuration {
            let namespace = match meta(&configuration, "namespace") {
                "" => at.0.as_str(),
                namespace => namespace,
            };
            let held = key(namespace, meta(&configuration, "name"));
            if !self.configurations.contains_key(&held) {
                self.server.fill_bookkeeping(&mut configuration);
                self.configurations.insert(held, configuration);
            }
        }
        if let Some(mut deployment) = deployment {
            let held = key(
                deployment.namespace().unwrap_or(&at.0),
                deployment
                    .name()
                    .unwrap_or(&self.deployment_key(&at.0, &at.1).1),
            );
            if !self.deployments.contains_key(&held) {
                self.server.fill_deployment_bookkeeping(&mut deployment);
                self.deployments.insert(held, deployment);
            }
        }
        for route in routes {
            let part = |p: &Option<String>| p.clone().unwrap_or_default();
            let held = (part(&route.metadata.namespace), part(&route.metadata.name));
            self.routes.entry(held).or_insert(route);
        }
        for (namespace, labels) in namespaces {
            self.namespaces.entry(namespace).or_insert(labels);
        }
        Ok(())
    }

    /// Replaces the API server's Deployment defaulting (used on every Deployment create,
    /// update and patch), as
    /// [`Cluster::with_server_defaults`](crate::sim::cluster::Cluster::with_server_defaults).
    pub fn with_server_defaults(mut self, defaults: fn(&mut Deployment)) -> Self {
        self.server.server_defaults = defaults;
        self
    }

    /// The settings the Gateways are decided with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The store's clock: one for every Gateway, and for the checkers of a run on it.
    pub fn now(&self) -> Timestamp {
        self.server.now
    }

    /// Moves the store's clock forward to `now` (an earlier time leaves it where it is).
    pub fn advance_to(&mut self, now: Timestamp) {
        self.server.now = self.server.now.max(now);
    }

    /// The namespace and name of each Gateway, in the order they were added.
    pub fn gateways(&self) -> impl Iterator<Item = (&str, &str)> {
        self.order
            .iter()
            .map(|(ns, name)| (ns.as_str(), name.as_str()))
    }

    /// Whether the store holds the Gateway `namespace/name`.
    pub fn holds(&self, namespace: &str, name: &str) -> bool {
        self.gateways.contains_key(&key(namespace, name))
    }

    /// The key of the GatewayConfiguration the Gateway `namespace/name` uses, as the core
    /// reads it ([`lookup::configuration_ref`]: its own reference, else its class's
    /// default); `None` when it names none of ours, or there is no such Gateway.
    pub fn configuration_key(&self, namespace: &str, name: &str) -> Option<ObjectKey> {
        let gateway: Gateway =
            typed(Kind::Gateway, self.gateways.get(&key(namespace, name))?).ok()?;
        let class: Option<GatewayClass> = self
            .classes
            .get(&gateway.spec.gateway_class_name)
            .and_then(|class| typed(Kind::GatewayClass, class).ok());
        lookup::configuration_ref(&self.settings, &gateway, class.as_ref())
            .map(|used| key(used.namespace, used.name))
    }

    /// The key of the LB Deployment of the Gateway `namespace/name`
    /// ([`lookup::deployment_name`], in its namespace).
    pub fn deployment_key(&self, namespace: &str, name: &str) -> ObjectKey {
        key(namespace, &lookup::deployment_name(&self.settings, name))
    }

    /// The name of the class the Gateway names (`None`: no such Gateway).
    fn class_name(&self, namespace: &str, name: &str) -> Option<String> {
        let gateway = self.gateways.get(&key(namespace, name))?;
        Some(
            gateway
                .pointer("/spec/gatewayClassName")
                .and_then(tree::Value::as_str)
                .unwrap_or("")
                .to_owned(),
        )
    }

    /// The routes whose `parentRefs` name the Gateway `namespace/name`: what a test means
    /// by "the Gateway's routes" when it reads, patches or deletes them. The store's API
    /// addresses objects by the Gateway that uses them, through the core's own lookups
    /// (this, [`Store::configuration_key`], [`Store::deployment_key`]), so that it names
    /// the objects the core reads; its port answers reads by key and by scan and leaves
    /// every choice to the Driver's gather.
    fn routes_of<'s>(
        &'s self,
        namespace: &'s str,
        name: &'s str,
    ) -> impl Iterator<Item = &'s L34Route> {
        self.routes
            .values()
            .filter(move |route| lookup::names_gateway(route, name, namespace))
    }

    /// The [`Port`](crate::reconcile::Port) of the Gateway `namespace/name`, for one
    /// reconcile on the crate's [`Driver`](crate::reconcile::Driver) (`None`: the store
    /// holds no such Gateway).
    pub fn port(&mut self, namespace: &str, name: &str) -> Option<StorePort<'_>> {
        self.holds(namespace, name)
            .then(|| StorePort::new(self, key(namespace, name)))
    }

    /// The Gateway `namespace/name`'s object of `kind`, as JSON: the Gateway, its class,
    /// the configuration it uses, its LB Deployment, the template, the list of routes that
    /// name it (`None`: the object does not exist, or the store holds no such Gateway).
    pub fn read(
        &self,
        namespace: &str,
        name: &str,
        kind: Kind,
    ) -> Result<Option<Value>, ClusterError> {
        if !self.holds(namespace, name) {
            return Ok(None);
        }
        Ok(match kind {
            Kind::Gateway => self.gateways.get(&key(namespace, name)).map(Value::from),
            Kind::GatewayClass => self
                .class_name(namespace, name)
                .and_then(|class| self.classes.get(&class).map(Value::from)),
            Kind::Configuration => self
                .configuration_key(namespace, name)
                .and_then(|at| self.configurations.get(&at).map(Value::from)),
            Kind::Deployment => self
                .deployments
                .get(&self.deployment_key(namespace, name))
                .map(Deployment::to_json),
            Kind::Template => Some(self.template.to_json()),
            Kind::Routes => Some(
                serde_json::to_value(self.routes_of(namespace, name).collect::<Vec<_>>()).map_err(
                    |e| ClusterError::Malformed {
                        kind,
                        why: e.to_string(),
                    },
                )?,
            ),
        })
    }

    /// Applies an RFC 7386 merge patch to the Gateway `namespace/name`'s object of `kind`
    /// (as [`read`](Store::read) finds it), with the server's bookkeeping (as
    /// [`Cluster::patch`](crate::sim::cluster::Cluster::patch)); a shared object's edit is
    /// every Gateway's. Patching an absent class, configuration or Deployment creates it
    /// under the key the Gateway reads it by; the routes' patch is the list of routes that
    /// replaces those naming the Gateway. Fails, changing nothing, when the result does not
    /// have the shape of its kind, when the Gateway names no configuration of ours (for
    /// [`Kind::Configuration`]), or when there is no such Gateway.
    pub fn patch(
        &mut self,
        namespace: &str,
        name: &str,
        kind: Kind,
        patch: &Value,
    ) -> Result<(), ClusterError> {
        self.patch_checked(namespace, name, kind, patch, true)
    }

    /// [`Store::patch`] of the configuration without the type check, as a server whose CRD
    /// admits more stores it (see
    /// [`Cluster::patch_unchecked`](crate::sim::cluster::Cluster::patch_unchecked)): the
    /// Gateways that use it read it as unreadable. Other kinds are refused.
    pub fn patch_unchecked(
        &mut self,
        namespace: &str,
        name: &str,
        kind: Kind,
        patch: &Value,
    ) -> Result<(), ClusterError> {
        if kind != Kind::Configuration {
            return Err(ClusterError::Unsupported {
                kind,
                operation: "store an unreadable",
            });
        }
        self.patch_checked(namespace, name, kind, patch, false)
    }

    fn patch_checked(
        &mut self,
        namespace: &str,
        name: &str,
        kind: Kind,
        patch: &Value,
        checked: bool,
    ) -> Result<(), ClusterError> {
        let scope = self.scope_of(namespace, name, kind);
        self.watched(scope, |store| {
            store.patch_unwatched(namespace, name, kind, patch, checked)
        })
    }

    /// [`Store::patch_checked`], inside the watch's hook.
    fn patch_unwatched(
        &mut self,
        namespace: &str,
        name: &str,
        kind: Kind,
        patch: &Value,
        checked: bool,
    ) -> Result<(), ClusterError> {
        let missing = |operation| ClusterError::Missing { kind, operation };
        if !self.holds(namespace, name) {
            return Err(ClusterError::Missing {
                kind: Kind::Gateway,
                operation: "patch",
            });
        }
        if matches!(kind, Kind::Template | Kind::Deployment) && !patch.is_object() {
            return Err(ClusterError::Malformed {
                kind,
                why: "must be a JSON object".into(),
            });
        }
        match kind {
            Kind::Template => {
                merge_patch::apply_to_object(&mut Arc::make_mut(&mut self.template).object, patch);
            }
            Kind::Deployment => {
                let at = self.deployment_key(namespace, name);
                let before = self.deployments.remove(&at);
                let after = self.server.patched_deployment(before.as_ref(), patch);
                self.deployments.insert(at, after);
            }
            Kind::Routes => {
                let routes: Vec<L34Route> = typed(kind, patch)?;
                self.routes
                    .retain(|_, route| !lookup::names_gateway(route, name, namespace));
                for route in routes {
                    let part = |p: &Option<String>| p.clone().unwrap_or_default();
                    let held = (part(&route.metadata.namespace), part(&route.metadata.name));
                    self.routes.insert(held, route);
                }
            }
            Kind::Gateway => {
                let at = key(namespace, name);
                let server = &mut self.server;
                let Some(stored) = self.gateways.get_mut(&at) else {
                    return Err(missing("patch"));
                };
                *stored = server.patched(kind, Some(stored), patch, checked)?;
            }
            Kind::GatewayClass => {
                let class = self.class_name(namespace, name).unwrap_or_default();
                let server = &mut self.server;
                let after = match self.classes.get(&class) {
                    Some(before) => server.patched(kind, Some(before), patch, checked)?,
                    None => server.patched(kind, None, &seeded("", &class, patch), checked)?,
                };
                self.classes.insert(class, after);
            }
            Kind::Configuration => {
                let at = self
                    .configuration_key(namespace, name)
                    .ok_or_else(|| missing("patch"))?;
                let server = &mut self.server;
                let after = match self.configurations.get(&at) {
                    Some(before) => server.patched(kind, Some(before), patch, checked)?,
                    None => server.patched(kind, None, &seeded(&at.0, &at.1, patch), checked)?,
                };
                self.configurations.insert(at, after);
            }
        }
        Ok(())
    }

    /// Deletes the Gateway `namespace/name`'s class, configuration, Deployment or routes
    /// (for every Gateway that shares them); marks the Gateway for deletion. The template
    /// cannot be deleted.
    pub fn delete(&mut self, namespace: &str, name: &str, kind: Kind) -> Result<(), ClusterError> {
        let scope = self.scope_of(namespace, name, kind);
        self.watched(scope, |store| store.delete_unwatched(namespace, name, kind))
    }

    /// [`Store::delete`], inside the watch's hook.
    fn delete_unwatched(
        &mut self,
        namespace: &str,
        name: &str,
        kind: Kind,
    ) -> Result<(), ClusterError> {
        let missing = ClusterError::Missing {
            kind,
            operation: "delete",
        };
        if !self.holds(namespace, name) {
            return Err(missing);
        }
        let existed = match kind {
            Kind::Template => {
                return Err(ClusterError::Unsupported {
                    kind,
                    operation: "delete",
                });
            }
            Kind::Routes => {
                self.routes
                    .retain(|_, route| !lookup::names_gateway(route, name, namespace));
                true
            }
            Kind::Gateway => match self.gateways.get_mut(&key(namespace, name)) {
                Some(gateway) => {
                    self.server.mark_deleted(gateway);
                    true
                }
                None => false,
            },
            Kind::GatewayClass => self
                .class_name(namespace, name)
                .and_then(|class| self.classes.remove(&class))
                .is_some(),
            Kind::Configuration => self
                .configuration_key(namespace, name)
                .and_then(|at| self.configurations.remove(&at))
                .is_some(),
            Kind::Deployment => {
                let at = self.deployment_key(namespace, name);
                self.deployments.remove(&at).is_some()
            }
        };
        if existed { Ok(()) } else { Err(missing) }
    }

    /// The crude Deployment controller, once, on the Gateway `namespace/name`'s LB
    /// Deployment (as [`Cluster::rollout`](crate::sim::cluster::Cluster::rollout)).
    pub fn rollout(
        &mut self,
        namespace: &str,
        name: &str,
        state: RolloutState,
    ) -> Result<(), ClusterError> {
        let at = self.deployment_key(namespace, name);
        self.watched(Scope::One(WatchKind::Deployment, at.clone()), |store| {
            store.server.roll_out(store.deployments.get_mut(&at), state)
        })
    }
}
