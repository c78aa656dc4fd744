//! The kit's shared store ([`Store`]: many Gateways over shared classes, configurations,
//! routes, namespaces and template, behind the simulated API server), its port
//! ([`StorePort`]) and the controller loop an embedder runs on it ([`StoreLoop`]: the
//! crate's [`Driver`] through the embedder's own [`Reconciler`]).
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

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::ControllerLoop;
use crate::events::Event;
use crate::gateway_class::ConfigurationPresence;
use crate::lookup;
use crate::outcome::{FailureClass, WriteOutcome};
use crate::reconcile::{
    DeploymentWrite, Driver, Labels, NotReady, ObjectKey, ReconcileError, Reconciled, Requeue,
    StatusPatch, StatusWrite, View, WriteKind, WriteRecord, ready,
};
use crate::settings::Settings;
use crate::sim::cluster::reconcile::{recorded, settle_class_status};
use crate::sim::cluster::store::{check, default_status, typed, typed_at};
use crate::sim::cluster::{
    ClusterError, Kind, Objects, ReconcileRecord, Request, RolloutState, Server, Verb,
};
use crate::sim::merge_patch;
use crate::sim::scenario::{Backend, StepError, WriteCounts};
use crate::snapshot::NamespaceLabels;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

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
    gateways: BTreeMap<ObjectKey, Value>,
    /// The Gateways in the order they were added.
    order: Vec<ObjectKey>,
    classes: BTreeMap<String, Value>,
    configurations: BTreeMap<ObjectKey, Value>,
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
}

fn key(namespace: &str, name: &str) -> ObjectKey {
    (namespace.to_owned(), name.to_owned())
}

/// An object's `metadata` text field (`""` when it has none).
fn meta<'v>(object: &'v Value, field: &str) -> &'v str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
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
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        )
    }

    /// The routes whose `parentRefs` name the Gateway `namespace/name`.
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
    /// reconcile on the crate's [`Driver`] (`None`: the store holds no such Gateway).
    pub fn port(&mut self, namespace: &str, name: &str) -> Option<StorePort<'_>> {
        self.holds(namespace, name).then(|| StorePort {
            store: self,
            gateway: key(namespace, name),
        })
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
            Kind::Gateway => self.gateways.get(&key(namespace, name)).cloned(),
            Kind::GatewayClass => self
                .class_name(namespace, name)
                .and_then(|class| self.classes.get(&class).cloned()),
            Kind::Configuration => self
                .configuration_key(namespace, name)
                .and_then(|at| self.configurations.get(&at).cloned()),
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
        self.server.roll_out(self.deployments.get_mut(&at), state)
    }

    /// Makes the next `count` Deployment writes (create or update, of any Gateway) fail
    /// with `outcome`, replacing those still pending (`count` 0 clears them); an
    /// `Applied` outcome lets them through. For one verb on one object, [`fail_next`].
    ///
    /// [`fail_next`]: Store::fail_next
    pub fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.server.fail_writes(count, outcome);
    }

    /// Makes the next `count` Deployment writes (create or update) of the Gateway
    /// `namespace/name`'s LB Deployment fail with `outcome`, replacing the blanket failures
    /// still pending ([`Store::fail_writes`], scoped to one Gateway).
    pub fn fail_writes_of(
        &mut self,
        namespace: &str,
        name: &str,
        count: u32,
        outcome: WriteOutcome,
    ) {
        let at = self.deployment_key(namespace, name);
        self.server.fail_writes_of(Some(at), count, outcome);
    }

    /// Per-request fault injection (controller-runtime's interceptor functions): the next
    /// `count` requests matching `request` (one verb on one object) get `outcome`, then
    /// they go through again; other requests are not touched. Replaces the failures still
    /// pending for that request (`count` 0 clears them).
    ///
    /// A failed Deployment create or update is the driver's write outcome. A failed status
    /// patch is a conflict (a 409 `Conflict` outcome: the driver looks again at once) or the
    /// port's error ([`ClusterError::Refused`]), as is a failed read (of the Gateway, its
    /// class, its configuration, its Deployment, or the routes offered for it: a
    /// [`Kind::Routes`] request keyed by the Gateway; the template and the namespaces'
    /// labels are always read). The GatewayClass's own status write is not a request that
    /// fails.
    ///
    /// ```
    /// use gateway_reconcile::reconcile::{Driver, ready};
    /// use gateway_reconcile::testing::{Request, strategies::{self, WriteFailure}};
    ///
    /// let mut store = strategies::store().unwrap();
    /// store.fail_next(Request::create("ns", "sllbr-gw"), 2, WriteFailure::Unavailable.outcome());
    /// let driver = Driver::new(store.settings().clone());
    /// let now = store.now();
    /// let mut outcomes = Vec::new();
    /// for _ in 0..3 {
    ///     let reconciled = ready(driver.reconcile(&mut store.port("ns", "gw").unwrap(), now));
    ///     let outcome = reconciled.unwrap().unwrap().decided.unwrap().outcome.unwrap();
    ///     outcomes.push(outcome.class().is_some());
    /// }
    /// assert_eq!(outcomes, [true, true, false]);
    /// ```
    pub fn fail_next(&mut self, request: Request, count: u32, outcome: WriteOutcome) {
        self.server.fail_next(request, count, outcome);
    }

    /// The injected failures still pending for `request`.
    pub fn pending(&self, request: &Request) -> u32 {
        self.server.pending(request)
    }

    /// Clears every injected failure, blanket and per request.
    pub fn clear_failures(&mut self) {
        self.server.clear_failures();
    }

    /// Mutating admission applies this RFC 7386 merge patch to every Deployment write from
    /// now on (`None` stops it), as
    /// [`Cluster::mutate_writes`](crate::sim::cluster::Cluster::mutate_writes).
    pub fn mutate_writes(&mut self, patch: Option<Value>) {
        self.server.mutate_writes(patch);
    }

    /// The event recorder: the Events recorded through the ports (the driver's
    /// [`Port::record`](crate::reconcile::Port::record)) about the Gateway
    /// `namespace/name`, in order.
    ///
    /// ```
    /// use gateway_reconcile::reconcile::{Driver, ready};
    /// use gateway_reconcile::testing::strategies;
    ///
    /// let mut store = strategies::store().unwrap();
    /// let driver = Driver::new(store.settings().clone());
    /// let now = store.now();
    /// ready(driver.reconcile(&mut store.port("ns", "gw").unwrap(), now)).unwrap().unwrap();
    /// let reasons: Vec<_> = store.events("ns", "gw").map(|e| e.reason.as_str()).collect();
    /// assert!(!reasons.is_empty(), "a first reconcile records its transitions");
    /// assert_eq!(store.events("ns", "other").count(), 0);
    /// ```
    pub fn events<'s>(
        &'s self,
        namespace: &'s str,
        name: &'s str,
    ) -> impl Iterator<Item = &'s Event> {
        self.events
            .iter()
            .filter(move |(about, _)| (about.0.as_str(), about.1.as_str()) == (namespace, name))
            .map(|(_, event)| event)
    }

    /// Every Event recorded, with the Gateway it is about, in order.
    pub fn recorded(&self) -> &[(ObjectKey, Event)] {
        &self.events
    }

    /// Forgets the Events recorded so far (to assert on what comes next).
    pub fn clear_events(&mut self) {
        self.events.clear();
    }

    /// The writes sent for the Gateway `namespace/name`: its Deployment writes (failed or
    /// not) and its status writes.
    pub fn write_counts(&self, namespace: &str, name: &str) -> WriteCounts {
        self.counts
            .get(&key(namespace, name))
            .copied()
            .unwrap_or_default()
    }

    /// One reconcile of the Gateway `namespace/name` at the store's clock, the loop around
    /// the port being `run`'s: the GatewayClass's own status first, then `run`, then the
    /// record of what it did, with the loop's requeue.
    fn reconcile_with<F>(
        &mut self,
        namespace: &str,
        name: &str,
        run: F,
    ) -> Result<(ReconcileRecord, Requeue), ClusterError>
    where
        F: FnOnce(
            StorePort<'_>,
            Timestamp,
        ) -> Result<Result<Reconciled, ReconcileError<ClusterError>>, NotReady>,
    {
        let at = key(namespace, name);
        let stored = self.gateways.get(&at).ok_or(ClusterError::Missing {
            kind: Kind::Gateway,
            operation: "reconcile",
        })?;
        // An unreadable Gateway stops the reconcile before the class is settled.
        let gateway: Gateway = typed(Kind::Gateway, stored)?;
        let class_name = gateway.spec.gateway_class_name;
        let class = self
            .classes
            .get(&class_name)
            .map(|v| typed::<GatewayClass>(Kind::GatewayClass, v))
            .transpose()?;
        let class_part = match (class, self.classes.get_mut(&class_name)) {
            (Some(class), Some(stored)) => {
                let configurations = &self.configurations;
                let presence =
                    ConfigurationPresence::of_class(&self.settings, &class, |namespace, name| {
                        configurations.contains_key(&key(namespace, name))
                    });
                settle_class_status(&self.settings, &mut self.server, stored, &class, presence)?
            }
            _ => (Vec::new(), false),
        };
        let now = self.now();
        self.status_patch_problem = None;
        let result = run(
            StorePort {
                store: self,
                gateway: at.clone(),
            },
            now,
        );
        let problem = self.status_patch_problem.take();
        let stored = self.gateways.get(&at).cloned().unwrap_or_default();
        recorded(now, result, &stored, problem, class_part)
    }
}

/// The [`Port`](crate::reconcile::Port) of one Gateway of a kit [`Store`] (from
/// [`Store::port`]): reads answer by kind and key from the shared objects (copies: a write
/// changes the store while the plan still reads them), writes go through the simulated API
/// server (its bookkeeping, injected failures and mutating admission), Events are kept in
/// the store ([`Store::events`]).
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, Reader, View, ready};
/// use gateway_reconcile::testing::strategies;
///
/// let mut store = strategies::store().unwrap();
/// let mut port = store.port("ns", "gw").unwrap();
/// assert_eq!(port.gateway_key(), ("ns", "gw"));
/// // Reads by kind and key, as the driver asks them.
/// assert!(ready(port.class("meridio")).unwrap().unwrap().is_some());
/// assert!(ready(port.deployment("ns", "sllbr-gw")).unwrap().unwrap().is_none());
/// let View::Ready(gateway) = ready(port.gateway()).unwrap().unwrap() else { panic!() };
/// assert_eq!(gateway.spec.gateway_class_name, "meridio");
/// ```
#[derive(Debug)]
pub struct StorePort<'s> {
    store: &'s mut Store,
    gateway: ObjectKey,
}

impl StorePort<'_> {
    /// The Gateway this port serves: its namespace and name.
    pub fn gateway_key(&self) -> (&str, &str) {
        (self.gateway.0.as_str(), self.gateway.1.as_str())
    }

    /// A read's injected failure, if one is pending for it.
    fn get(&mut self, kind: Kind, namespace: &str, name: &str) -> Result<(), ClusterError> {
        match self.store.server.injected(Verb::Get, kind, namespace, name) {
            Some(outcome) => Err(ClusterError::Refused {
                request: Request::get(kind, namespace, name),
                outcome,
            }),
            None => Ok(()),
        }
    }
}

/// Reads by key; an object the wire type cannot read is the store's error naming the field
/// path (the configuration: the reader's message, which the Gateway reports); a read with a
/// failure injected for it ([`Store::fail_next`], [`Verb::Get`]) is
/// [`ClusterError::Refused`].
impl crate::reconcile::Reader for StorePort<'_> {
    type Error = ClusterError;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = Result<GatewayConfiguration, String>;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, ClusterError> {
        let (namespace, name) = self.gateway.clone();
        self.get(Kind::Gateway, &namespace, &name)?;
        match self.store.gateways.get(&self.gateway) {
            Some(stored) => typed(Kind::Gateway, stored).map(View::Ready),
            None => Ok(View::Later(Requeue::AwaitChange)),
        }
    }

    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, ClusterError> {
        self.get(Kind::GatewayClass, "", name)?;
        self.store
            .classes
            .get(name)
            .map(|stored| typed(Kind::GatewayClass, stored))
            .transpose()
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Configuration>, ClusterError> {
        self.get(Kind::Configuration, namespace, name)?;
        Ok(self
            .store
            .configurations
            .get(&key(namespace, name))
            .map(|stored| {
                typed_at::<GatewayConfiguration>(stored).map_err(|(path, why)| match path {
                    Some(path) => format!("{path}: {why}"),
                    None => why,
                })
            }))
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, ClusterError> {
        self.get(Kind::Deployment, namespace, name)?;
        Ok(self.store.deployments.get(&key(namespace, name)).cloned())
    }

    /// Every route (the core keeps those that name the Gateway).
    async fn routes(&mut self, namespace: &str, name: &str) -> Result<Vec<L34Route>, ClusterError> {
        self.get(Kind::Routes, namespace, name)?;
        Ok(self.store.routes.values().cloned().collect())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, ClusterError> {
        Ok(self.store.namespaces.get(name).cloned())
    }

    fn template(&mut self) -> Arc<Deployment> {
        self.store.template.clone()
    }
}

impl crate::reconcile::Port for StorePort<'_> {
    type Error = ClusterError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let (verb, desired) = match write {
            DeploymentWrite::Create(desired) => (Verb::Create, desired),
            DeploymentWrite::Update { desired, .. } => (Verb::Update, desired),
        };
        let store = &mut *self.store;
        if let Some(counts) = store.counts.get_mut(&self.gateway) {
            counts.deployment_writes += 1;
        }
        let at = key(
            desired.namespace().unwrap_or(&self.gateway.0),
            desired.name().unwrap_or_default(),
        );
        if let Some(outcome) = store.server.injected(verb, Kind::Deployment, &at.0, &at.1) {
            return outcome;
        }
        let stored = store.deployments.get(&at);
        let written = match verb {
            Verb::Create => store.server.create_deployment(desired, stored),
            _ => store.server.update_deployment(desired, stored),
        };
        match written {
            // The server answers a write it took with the stored object, as a real one does.
            Ok(object) => {
                store.deployments.insert(at, object.clone());
                WriteOutcome::Stored(object)
            }
            Err(refused) => refused,
        }
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, ClusterError> {
        let (namespace, name) = (self.gateway.0.as_str(), self.gateway.1.as_str());
        let store = &mut *self.store;
        if let Some(outcome) =
            store
                .server
                .injected(Verb::PatchStatus, Kind::Gateway, namespace, name)
        {
            return match outcome.class() {
                Some(FailureClass::Conflict) => Ok(StatusWrite::Conflict),
                _ => Err(ClusterError::Refused {
                    request: Request::patch_status(namespace, name),
                    outcome,
                }),
            };
        }
        let Some(gateway) = store.gateways.get_mut(&self.gateway) else {
            // Deleted since it was read.
            return Ok(StatusWrite::Conflict);
        };
        // The precondition must be the stored Gateway's resourceVersion (no write between).
        let held = gateway
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        if patch.resource_version() != held {
            store.status_patch_problem = Some(format!(
                "status_patch() has the precondition {:?}, the Gateway has resourceVersion {held:?}",
                patch.resource_version()
            ));
        }
        patch.apply_to(gateway);
        let rv = store.server.next_revision();
        store.server.status_written(gateway, rv);
        if let Some(counts) = store.counts.get_mut(&self.gateway) {
            counts.status_writes += 1;
        }
        Ok(StatusWrite::Written)
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        let about = self.gateway.clone();
        self.store
            .events
            .extend(events.iter().map(|event| (about.clone(), event.clone())));
    }
}

/// The embedder's part of a [`StoreLoop`]: its code around the crate's [`Driver`] (a port
/// wrapper adding its metrics or tracing, say), and how its loop schedules the next
/// reconcile from a [`Requeue`].
///
/// Both methods have the shipped behaviour by default: `()` is the crate's loop as it is.
///
/// ```
/// use gateway_reconcile::jiff::Timestamp;
/// use gateway_reconcile::reconcile::{Driver, ReconcileError, Reconciled};
/// use gateway_reconcile::testing::{ClusterError, Reconciler, StorePort};
///
/// /// Counts its reconciles, then runs the shipped driver.
/// #[derive(Default)]
/// struct Counting(u32);
///
/// impl Reconciler for Counting {
///     async fn reconcile(
///         &mut self,
///         driver: &Driver,
///         mut port: StorePort<'_>,
///         now: Timestamp,
///     ) -> Result<Reconciled, ReconcileError<ClusterError>> {
///         self.0 += 1;
///         driver.reconcile(&mut port, now).await
///     }
/// }
/// ```
pub trait Reconciler {
    /// One reconcile of the Gateway `port` serves at `now`, on the shipped `driver` (which
    /// holds the loop's write records). By default the driver over the port as it is.
    fn reconcile(
        &mut self,
        driver: &Driver,
        port: StorePort<'_>,
        now: Timestamp,
    ) -> impl Future<Output = Result<Reconciled, ReconcileError<ClusterError>>> {
        async move {
            let mut port = port;
            driver.reconcile(&mut port, now).await
        }
    }

    /// When the loop reconciles the Gateway next after a reconcile at `now` asked for
    /// `requeue` (`None`: on a change only). By default the requeue's
    /// [`deadline`](Requeue::deadline), the rule the kit checks (`requeue-honoured`).
    fn schedule(&mut self, requeue: Requeue, now: Timestamp) -> Option<Timestamp> {
        requeue.deadline(now)
    }
}

/// The crate's loop as it is: the driver over the store's port, each requeue's deadline.
impl Reconciler for () {}

/// A controller loop on the kit's [`Store`]: the embedder's [`Reconciler`] on the crate's
/// [`Driver`], with the loop's memory (the driver's write records, when each Gateway falls
/// due). It is a [`ControllerLoop`], so the kit's schedules ([`Run`](super::Run),
/// [`schedule::apply`](super::schedule::apply)) and invariants run on it.
///
/// Its scenario operations ([`Backend`]) act on its target Gateway: the store's first
/// unless [`target`](StoreLoop::target) (or [`Op::Target`](super::strategies::Op::Target)
/// in a schedule) names another. [`create`](Backend::create) replaces the store with one
/// holding the given objects (its Gateway the target); the edits go to the target's
/// objects, shared ones included (an edit of a shared configuration is every Gateway's);
/// [`fail_writes`](Backend::fail_writes) fails the target's Deployment writes;
/// [`restart`](Backend::restart) drops the loop's memory (a new driver, nothing scheduled)
/// and keeps the store; [`reconcile`](Backend::reconcile) runs the reconciler on the
/// target. Any Gateway is reconciled with [`reconcile_gateway`](StoreLoop::reconcile_gateway).
///
/// ```
/// use gateway_reconcile::testing::{Run, StoreLoop, strategies::{self, Op, WriteFailure}};
///
/// let toy = StoreLoop::new(strategies::store().unwrap(), ());
/// let mut run = Run::new(toy).unwrap();
/// for op in [Op::Reconcile, Op::fail(10, WriteFailure::Unavailable), Op::ConfigurationEdit(2),
///            Op::Reconcile, Op::Advance(150)] {
///     run.apply(&op).unwrap();
/// }
/// // The backoff reconciles it scheduled ran during the advance, each checked.
/// assert!(run.steps().iter().any(|step| step.due));
/// run.converge().unwrap();
/// ```
#[derive(Debug)]
pub struct StoreLoop<R> {
    store: Store,
    reconciler: R,
    driver: Driver,
    due: BTreeMap<ObjectKey, Timestamp>,
    /// The Gateway the scenario operations act on.
    target: ObjectKey,
}

impl<R: Reconciler> StoreLoop<R> {
    /// The loop of `reconciler` on `store`, with no memory yet, its target the store's
    /// first Gateway.
    pub fn new(store: Store, reconciler: R) -> Self {
        let driver = Driver::new(store.settings().clone());
        let target = store.order.first().cloned().unwrap_or_default();
        StoreLoop {
            store,
            reconciler,
            driver,
            due: BTreeMap::new(),
            target,
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, to change (add a Gateway, edit one, inject faults).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The embedder's reconciler.
    pub fn reconciler(&self) -> &R {
        &self.reconciler
    }

    /// The driver: the loop's write records.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// Makes the Gateway `namespace/name` the one the scenario operations act on. Fails
    /// when the store holds no such Gateway.
    pub fn target(&mut self, namespace: &str, name: &str) -> Result<(), ClusterError> {
        if !self.store.holds(namespace, name) {
            return Err(ClusterError::Missing {
                kind: Kind::Gateway,
                operation: "target",
            });
        }
        self.target = key(namespace, name);
        Ok(())
    }

    /// The Gateway the scenario operations act on: its namespace and name.
    pub fn targeted(&self) -> (&str, &str) {
        (self.target.0.as_str(), self.target.1.as_str())
    }

    /// When the loop reconciles the Gateway `namespace/name` next with no change to wait
    /// for, as the reconciler scheduled it (`None`: on a change only).
    pub fn due(&self, namespace: &str, name: &str) -> Option<Timestamp> {
        self.due.get(&key(namespace, name)).copied()
    }

    /// One reconcile of the Gateway `namespace/name` at `now` (the store's clock moves
    /// there): the GatewayClass's own status, then the reconciler on the Gateway's port,
    /// then its schedule. What it did, as the kit records it.
    pub fn reconcile_gateway(
        &mut self,
        namespace: &str,
        name: &str,
        now: Timestamp,
    ) -> Result<ReconcileRecord, ClusterError> {
        self.store.advance_to(now);
        let (reconciler, driver) = (&mut self.reconciler, &self.driver);
        let (record, requeue) = self.store.reconcile_with(namespace, name, |port, now| {
            ready(reconciler.reconcile(driver, port, now))
        })?;
        let at = key(namespace, name);
        match self.reconciler.schedule(requeue, record.time) {
            Some(due) => self.due.insert(at, due),
            None => self.due.remove(&at),
        };
        Ok(record)
    }

    /// The store at `now`, and the target's namespace and name.
    fn at(&mut self, now: Timestamp) -> (&mut Store, &str, &str) {
        self.store.advance_to(now);
        (&mut self.store, &self.target.0, &self.target.1)
    }
}

/// The scenario operations on the loop's target Gateway (see [`StoreLoop`]).
impl<R: Reconciler> Backend for StoreLoop<R> {
    type Error = ClusterError;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.store = Store::new(settings.clone(), now, objects)?;
        self.driver = Driver::new(settings.clone());
        self.due.clear();
        self.target = self.store.order.first().cloned().unwrap_or_default();
        Ok(())
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<ClusterError>> {
        let (namespace, name) = self.target.clone();
        Ok(self.reconcile_gateway(&namespace, &name, now)?)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        let (store, namespace, name) = self.at(now);
        Ok(store.patch(namespace, name, kind, patch)?)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        let (store, namespace, name) = self.at(now);
        Ok(store.delete(namespace, name, kind)?)
    }

    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        let (store, namespace, name) = self.at(now);
        Ok(store.rollout(namespace, name, state)?)
    }

    /// The target's Deployment writes ([`Store::fail_writes_of`]); `count` 0 clears every
    /// injected failure, per request too ([`Store::clear_failures`]): what
    /// [`converge`](super::schedule::converge) and [`Op::stop_failures`] ask.
    ///
    /// [`Op::stop_failures`]: super::strategies::Op::stop_failures
    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<ClusterError>> {
        if count == 0 {
            self.store.clear_failures();
            return Ok(());
        }
        let (namespace, name) = self.target.clone();
        self.store
            .fail_writes_of(&namespace, &name, count, outcome.clone());
        Ok(())
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        _: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.store.mutate_writes(patch.cloned());
        Ok(())
    }

    /// The loop forgets what it held in memory (a new driver, nothing scheduled); the
    /// store stays.
    fn restart(&mut self, _: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.driver = Driver::new(self.store.settings().clone());
        self.due.clear();
        Ok(())
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        let (store, namespace, name) = self.at(now);
        Ok(store.patch_unchecked(namespace, name, kind, patch)?)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
        Ok(self.store.read(&self.target.0, &self.target.1, kind)?)
    }

    /// The target Gateway's writes.
    fn write_counts(&self) -> WriteCounts {
        self.store.write_counts(&self.target.0, &self.target.1)
    }
}

/// The loop's memory of its target Gateway.
impl<R: Reconciler> ControllerLoop for StoreLoop<R> {
    fn settings(&self) -> &Settings {
        self.store.settings()
    }

    fn now(&self) -> Timestamp {
        self.store.now()
    }

    fn write_record(&self) -> Option<WriteRecord> {
        self.driver.write_record(&self.target.0, &self.target.1)
    }

    fn next_due(&self) -> Option<Timestamp> {
        self.due(&self.target.0, &self.target.1)
    }

    /// Every Gateway's: an advance runs each Gateway's reconciles as they fall due.
    fn scheduled(&self) -> Vec<(ObjectKey, Timestamp)> {
        self.due
            .iter()
            .map(|(gateway, due)| (gateway.clone(), *due))
            .collect()
    }

    /// The store's clock: one for every Gateway and the run's checker.
    fn advance_to(&mut self, now: Timestamp) {
        self.store.advance_to(now);
    }

    fn target(&mut self, namespace: &str, name: &str) -> Result<(), StepError<ClusterError>> {
        Ok(StoreLoop::target(self, namespace, name)?)
    }
}
