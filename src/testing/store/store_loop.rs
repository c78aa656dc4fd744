//! The controller loop an embedder runs on the shared [`Store`]: [`StoreLoop`], the
//! embedder's [`Reconciler`] (its code around the crate's [`Driver`], its scheduling of the
//! requeue) with the loop's memory, as a [`ControllerLoop`] the kit's schedules and
//! invariants run on.
//!
//! Also the store's half of one reconcile (`Store::reconcile_with`): the GatewayClass's own
//! status settled first, then the loop's run on the Gateway's [`StorePort`], then the
//! record of what it did. Only the loop reconciles, so it lives with the loop.

use std::collections::BTreeMap;
use std::future::Future;

use jiff::Timestamp;
use serde_json::Value;

use super::{Store, StorePort, key};
use crate::gateway_class::ConfigurationPresence;
use crate::outcome::WriteOutcome;
use crate::reconcile::{
    Driver, NotReady, ObjectKey, ReconcileError, Reconciled, Requeue, WriteRecord, ready,
};
use crate::settings::Settings;
use crate::sim::cluster::reconcile::{recorded, settle_class_status};
use crate::sim::cluster::store::typed;
use crate::sim::cluster::{ClusterError, Kind, Objects, ReconcileReport, RolloutState};
use crate::sim::scenario::{Backend, StepError, WriteCounts};
use crate::testing::ControllerLoop;
use crate::wire::{Gateway, GatewayClass};

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
/// due). It is a [`ControllerLoop`], so the kit's schedules ([`Run`](crate::testing::Run),
/// [`schedule::apply`](crate::testing::schedule::apply)) and invariants run on it.
///
/// Its scenario operations ([`Backend`]) act on its target Gateway: the store's first
/// unless [`target`](StoreLoop::target) (or [`Op::Target`](crate::testing::strategies::Op::Target)
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
#[derive(Debug, Clone)]
pub struct StoreLoop<R> {
    store: Store,
    reconciler: R,
    driver: Driver,
    due: BTreeMap<ObjectKey, Timestamp>,
    /// The Gateway the scenario operations act on.
    target: ObjectKey,
}

impl<R> StoreLoop<R> {
    /// Feeds the loop's state to `state`: the store's, the write records, the schedule and
    /// the target (the explorer's fingerprint).
    pub(crate) fn fingerprint(&self, state: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.store.fingerprint(state);
        self.driver.hash_records(state);
        self.due.hash(state);
        self.target.hash(state);
    }
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
    ) -> Result<ReconcileReport, ClusterError> {
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

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<ClusterError>> {
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
    /// [`converge`](crate::testing::schedule::converge) and [`Op::stop_failures`] ask.
    ///
    /// [`Op::stop_failures`]: crate::testing::strategies::Op::stop_failures
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

impl Store {
    /// One reconcile of the Gateway `namespace/name` at the store's clock, the loop around
    /// the port being `run`'s: the GatewayClass's own status first, then `run`, then the
    /// record of what it did, with the loop's requeue.
    fn reconcile_with<F>(
        &mut self,
        namespace: &str,
        name: &str,
        run: F,
    ) -> Result<(ReconcileReport, Requeue), ClusterError>
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
        let result = run(StorePort::new(self, at.clone()), now);
        let problem = self.status_patch_problem.take();
        let stored = self.gateways.get(&at).cloned().unwrap_or_default();
        recorded(now, result, &stored, problem, class_part)
    }
}
