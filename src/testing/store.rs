//! The kit's in-memory store ([`Store`]: several Gateways, each with the objects around it,
//! behind the simulated API server) and the controller loop an embedder runs on it
//! ([`StoreLoop`]: the crate's [`Driver`] through the embedder's own [`Reconciler`]).

use std::collections::BTreeMap;
use std::future::Future;

use jiff::Timestamp;
use serde_json::Value;

use super::ControllerLoop;
use crate::outcome::WriteOutcome;
use crate::reconcile::{Driver, ReconcileError, Reconciled, Requeue, WriteRecord, ready};
use crate::settings::Settings;
use crate::sim::cluster::{
    Cluster, ClusterError, ClusterPort, Kind, Objects, ReconcileRecord, RolloutState,
};
use crate::sim::scenario::{Backend, StepError, WriteCounts};

/// An in-memory store for an embedder's tests: several Gateways, each with its
/// GatewayClass, GatewayConfiguration, L34Routes, template and LB Deployment, behind the
/// simulated API server ([`Cluster`]: resourceVersions and generations, defaulting and
/// refusals of Deployment writes, conflicts, injected write failures, mutating admission,
/// a crude Deployment controller).
///
/// Each Gateway is held with its own copy of the objects around it, as the kit's
/// [`Objects`] give them: an edit of one Gateway's class or configuration is not seen by
/// another's. The Gateways share the store's settings and clock. The first Gateway is the
/// one the scenario operations ([`Backend`]) of a [`StoreLoop`] act on; every Gateway is
/// read and reconciled by its namespace and name.
///
/// [`port`](Store::port) is the [`Port`](crate::reconcile::Port) of one Gateway: the
/// crate's [`Driver`] runs over it, or over an embedder's own port wrapper around it.
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, ready};
/// use gateway_reconcile::testing::{Kind, strategies};
/// use serde_json::json;
///
/// // The kit's Gateway `ns/gw`, and a second one, `ns/other`.
/// let mut store = strategies::store().unwrap();
/// let mut other = strategies::objects();
/// other.gateway["metadata"]["name"] = json!("other");
/// store.add(other).unwrap();
/// assert_eq!(store.gateways().collect::<Vec<_>>(), [("ns", "gw"), ("ns", "other")]);
///
/// // One driver serves every Gateway of the store, keeping a write record for each.
/// let driver = Driver::new(store.settings().clone());
/// let now = store.now();
/// for (namespace, name) in [("ns", "gw"), ("ns", "other")] {
///     let mut port = store.port(namespace, name).unwrap();
///     ready(driver.reconcile(&mut port, now)).unwrap().unwrap();
/// }
/// assert_eq!(driver.records_held(), 2);
/// let deployment = store.read("ns", "other", Kind::Deployment).unwrap().unwrap();
/// assert_eq!(deployment["metadata"]["name"], "sllbr-other");
/// ```
#[derive(Debug, Clone)]
pub struct Store {
    settings: Settings,
    /// The first Gateway: the scenario's.
    first: Cluster,
    /// The others, in the order they were added.
    others: Vec<Cluster>,
}

/// The namespace and name of the Gateway a cluster holds.
fn key(cluster: &Cluster) -> (&str, &str) {
    let text = |field: &str| {
        cluster
            .gateway()
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    (text("namespace"), text("name"))
}

impl Store {
    /// A store holding one Gateway with the objects around it (`objects`), deciding with
    /// `settings`, its clock at `now`. Fails when an object does not have the shape of its
    /// kind.
    pub fn new(settings: Settings, now: Timestamp, objects: Objects) -> Result<Self, ClusterError> {
        let first = Cluster::new(settings.clone(), now, objects)?;
        Ok(Store {
            settings,
            first,
            others: Vec::new(),
        })
    }

    /// Adds another Gateway with the objects around it, at the store's clock. Fails when
    /// an object does not have the shape of its kind, or when the store holds a Gateway of
    /// that namespace and name already.
    pub fn add(&mut self, objects: Objects) -> Result<(), ClusterError> {
        let cluster = Cluster::new(self.settings.clone(), self.now(), objects)?;
        let (namespace, name) = key(&cluster);
        if self.cluster(namespace, name).is_some() {
            return Err(ClusterError::Malformed {
                kind: Kind::Gateway,
                why: format!("the store holds a Gateway {namespace}/{name} already"),
            });
        }
        self.others.push(cluster);
        Ok(())
    }

    /// The settings the Gateways are decided with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The store's clock.
    pub fn now(&self) -> Timestamp {
        self.first().now()
    }

    /// Moves the store's clock forward to `now` (an earlier time leaves it where it is).
    pub fn advance_to(&mut self, now: Timestamp) {
        self.first.catch_up(now);
        for cluster in &mut self.others {
            cluster.catch_up(now);
        }
    }

    /// The namespace and name of each Gateway, in the order they were added.
    pub fn gateways(&self) -> impl Iterator<Item = (&str, &str)> {
        self.clusters().map(key)
    }

    /// The first Gateway's cluster: the one the scenario operations act on.
    pub fn first(&self) -> &Cluster {
        &self.first
    }

    /// The first Gateway's cluster, to change.
    pub fn first_mut(&mut self) -> &mut Cluster {
        &mut self.first
    }

    /// The cluster holding the Gateway `namespace/name` and the objects around it.
    pub fn cluster(&self, namespace: &str, name: &str) -> Option<&Cluster> {
        self.clusters().find(|c| key(c) == (namespace, name))
    }

    /// The cluster holding the Gateway `namespace/name`, to change (patch, delete, roll
    /// out, inject write failures).
    pub fn cluster_mut(&mut self, namespace: &str, name: &str) -> Option<&mut Cluster> {
        std::iter::once(&mut self.first)
            .chain(&mut self.others)
            .find(|c| key(c) == (namespace, name))
    }

    fn clusters(&self) -> impl Iterator<Item = &Cluster> {
        std::iter::once(&self.first).chain(&self.others)
    }

    /// The [`Port`](crate::reconcile::Port) of the Gateway `namespace/name`, for one
    /// reconcile on the crate's [`Driver`] (`None`: the store holds no such Gateway).
    pub fn port(&mut self, namespace: &str, name: &str) -> Option<ClusterPort<'_>> {
        self.cluster_mut(namespace, name).map(Cluster::port)
    }

    /// The object of `kind` around the Gateway `namespace/name`, as JSON (`None`: it does
    /// not exist, or the store holds no such Gateway).
    pub fn read(
        &self,
        namespace: &str,
        name: &str,
        kind: Kind,
    ) -> Result<Option<Value>, ClusterError> {
        match self.cluster(namespace, name) {
            Some(cluster) => cluster.read_json(kind),
            None => Ok(None),
        }
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
/// use gateway_reconcile::testing::{ClusterError, ClusterPort, Reconciler};
///
/// /// Counts its reconciles, then runs the shipped driver.
/// #[derive(Default)]
/// struct Counting(u32);
///
/// impl Reconciler for Counting {
///     async fn reconcile(
///         &mut self,
///         driver: &Driver,
///         mut port: ClusterPort<'_>,
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
        port: ClusterPort<'_>,
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
/// Its scenario operations ([`Backend`]) act on the store's first Gateway:
/// [`create`](Backend::create) replaces the store with one holding the given objects, the
/// faults and edits go to the first Gateway's cluster, [`restart`](Backend::restart) drops
/// the loop's memory (a new driver, nothing scheduled) and keeps the store, and
/// [`reconcile`](Backend::reconcile) runs the reconciler on it. Other Gateways are
/// reconciled with [`reconcile_gateway`](StoreLoop::reconcile_gateway).
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
    due: BTreeMap<(String, String), Timestamp>,
}

impl<R: Reconciler> StoreLoop<R> {
    /// The loop of `reconciler` on `store`, with no memory yet.
    pub fn new(store: Store, reconciler: R) -> Self {
        let driver = Driver::new(store.settings().clone());
        StoreLoop {
            store,
            reconciler,
            driver,
            due: BTreeMap::new(),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, to change (add a Gateway, edit one).
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

    /// When the loop reconciles the Gateway `namespace/name` next with no change to wait
    /// for, as the reconciler scheduled it (`None`: on a change only).
    pub fn due(&self, namespace: &str, name: &str) -> Option<Timestamp> {
        self.due
            .get(&(namespace.to_owned(), name.to_owned()))
            .copied()
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
        let cluster = self
            .store
            .cluster_mut(namespace, name)
            .ok_or(ClusterError::Missing {
                kind: Kind::Gateway,
                operation: "reconcile",
            })?;
        let (record, requeue) =
            cluster.reconcile_with(|port, now| ready(reconciler.reconcile(driver, port, now)))?;
        let key = (namespace.to_owned(), name.to_owned());
        match self.reconciler.schedule(requeue, record.time) {
            Some(due) => self.due.insert(key, due),
            None => self.due.remove(&key),
        };
        Ok(record)
    }

    /// The first Gateway's namespace and name.
    fn first(&self) -> (String, String) {
        let (namespace, name) = key(self.store.first());
        (namespace.to_owned(), name.to_owned())
    }

    /// The first Gateway's cluster at `now`.
    fn first_at(&mut self, now: Timestamp) -> &mut Cluster {
        self.store.advance_to(now);
        self.store.first_mut()
    }
}

/// The scenario operations on the store's first Gateway (see [`StoreLoop`]).
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
        Ok(())
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<ClusterError>> {
        let (namespace, name) = self.first();
        Ok(self.reconcile_gateway(&namespace, &name, now)?)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        Ok(self.first_at(now).patch(kind, patch)?)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        Ok(self.first_at(now).delete(kind)?)
    }

    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        Ok(self.first_at(now).rollout(state)?)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<ClusterError>> {
        self.store.first_mut().fail_writes(count, outcome.clone());
        Ok(())
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        _: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.store.first_mut().mutate_writes(patch.cloned());
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
        Ok(self.first_at(now).patch_unchecked(kind, patch)?)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
        Ok(self.store.first().read_json(kind)?)
    }

    /// The first Gateway's writes.
    fn write_counts(&self) -> WriteCounts {
        let first = self.store.first();
        WriteCounts {
            deployment_writes: first.deployment_writes(),
            status_writes: first.status_writes(),
        }
    }
}

/// The loop's memory of the store's first Gateway.
impl<R: Reconciler> ControllerLoop for StoreLoop<R> {
    fn settings(&self) -> &Settings {
        self.store.settings()
    }

    fn now(&self) -> Timestamp {
        self.store.now()
    }

    fn write_record(&self) -> Option<WriteRecord> {
        let (namespace, name) = key(self.store.first());
        self.driver.write_record(namespace, name)
    }

    fn next_due(&self) -> Option<Timestamp> {
        let (namespace, name) = key(self.store.first());
        self.due(namespace, name)
    }
}
