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

use super::watch::Watching;
use super::{Scope, Store, StorePort, Watch, WatchKind, WatchStats, key};
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
    /// The watch, when one was asked for ([`StoreLoop::with_watch`]).
    watch: Option<Watching>,
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
        // Only with a watch: a loop without one hashes as it always did.
        if let Some(watching) = &self.watch {
            watching.fingerprint(state);
        }
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
            watch: None,
        }
    }

    /// The loop with the kit's watch on ([`Watch`]): every change of the store's objects
    /// becomes a watch event, which the loop maps to the Gateways it wakes with the core's
    /// wake-up map (`wake`) and reconciles at once when it next runs (an
    /// [`Op::Advance`](crate::testing::strategies::Op::Advance), or [`StoreLoop::run_due`]);
    /// the watch's resync wakes every Gateway every period; its faults lose or coalesce
    /// events. Turning it on is its first list: every Gateway is woken. Off by default: a
    /// loop without it reconciles only when asked or when a requeue falls due.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::testing::{Kind, StoreLoop, Watch, strategies};
    /// use serde_json::json;
    ///
    /// let mut store = strategies::store().unwrap();
    /// store.add(strategies::objects_of("other")).unwrap();
    /// let mut toy = StoreLoop::new(store, ()).with_watch(Watch::new().resync(Duration::from_secs(30)));
    /// let start = toy.store().now();
    /// // The first list woke both Gateways: they run, and their own writes' echoes.
    /// assert!(toy.run_due(start).unwrap().len() >= 2);
    /// assert!(toy.run_due(start).unwrap().is_empty());
    ///
    /// // An edit of the shared configuration wakes both; the next run reconciles them.
    /// let edit = json!({"spec": {"horizontalScaling": {"replicas": 3}}});
    /// toy.store_mut().patch("ns", "gw", Kind::Configuration, &edit).unwrap();
    /// let ran = toy.run_due(start).unwrap();
    /// assert!(ran.iter().any(|(gateway, _)| gateway.1 == "other"));
    /// ```
    pub fn with_watch(mut self, watch: Watch) -> Self {
        self.store.journal(true);
        self.watch = Some(Watching::list(watch, &self.store, WatchStats::default()));
        self
    }

    /// The watch's settings (`None`: no watch).
    ///
    /// ```
    /// use gateway_reconcile::testing::{StoreLoop, Watch, strategies};
    /// let toy = StoreLoop::new(strategies::store().unwrap(), ());
    /// assert!(toy.watch().is_none());
    /// assert_eq!(toy.with_watch(Watch::new()).watch(), Some(&Watch::new()));
    /// ```
    pub fn watch(&self) -> Option<&Watch> {
        self.watch.as_ref().map(Watching::watch)
    }

    /// What the watch did so far (`None`: no watch).
    ///
    /// ```
    /// use gateway_reconcile::testing::{StoreLoop, Watch, strategies};
    /// let mut toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
    /// let now = toy.store().now();
    /// toy.run_due(now).unwrap();
    /// let stats = toy.watch_stats().unwrap();
    /// assert!(stats.events > 0 && stats.events == stats.delivered);
    /// ```
    pub fn watch_stats(&self) -> Option<WatchStats> {
        self.watch.as_ref().map(Watching::stats)
    }

    /// Takes the store's changes into the watch (no watch: nothing to do).
    fn run_watch(&mut self) {
        if let Some(watching) = &mut self.watch {
            let events = self.store.take_changes();
            watching.take(&self.store, events, self.store.now());
        }
    }

    /// When the loop runs the Gateway `at` next: the reconciler's schedule, or the watch's
    /// wake-up or resync (`watch`: the watch as it would be after taking what waits).
    fn next_of(&self, at: &ObjectKey, watch: Option<&Watching>) -> Option<Timestamp> {
        let scheduled = self.due.get(at).copied();
        match (scheduled, watch.and_then(|watching| watching.due(at))) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every reconcile that falls due up to `until` (the store's clock moves there),
    /// each at its due time, earliest first (the earlier key on a tie), the watch's
    /// wake-ups and resync with the reconciler's requeues; then the clock at `until`.
    /// Each Gateway reconciled, with what it did, in order. Fails on a reconcile the store
    /// refuses, or after 10,000 reconciles (a write loop).
    ///
    /// [`Op::Advance`](crate::testing::strategies::Op::Advance) in a [`Run`](crate::testing::Run)
    /// does the same with every reconcile checked; this is for a test that drives the loop
    /// itself.
    ///
    /// ```
    /// use gateway_reconcile::testing::{StoreLoop, Watch, strategies};
    /// let mut toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
    /// let now = toy.store().now();
    /// let ran = toy.run_due(now).unwrap();
    /// assert_eq!(ran[0].0, ("ns".to_owned(), "gw".to_owned()));
    /// ```
    pub fn run_due(
        &mut self,
        until: Timestamp,
    ) -> Result<Vec<(ObjectKey, ReconcileReport)>, ClusterError> {
        let mut ran = Vec::new();
        loop {
            self.run_watch();
            let next = self
                .scheduled()
                .into_iter()
                .filter(|(_, due)| *due <= until)
                .min_by(|(a, x), (b, y)| (x, a).cmp(&(y, b)));
            let Some((gateway, due)) = next else {
                break;
            };
            if ran.len() == RUN_DUE_AT_MOST {
                return Err(ClusterError::Unsupported {
                    kind: Kind::Gateway,
                    operation: "reconcile more than 10,000 times in one run (a write loop)",
                });
            }
            let at = due.max(self.store.now());
            let record = self.reconcile_gateway(&gateway.0, &gateway.1, at)?;
            ran.push((gateway, record));
        }
        self.store.advance_to(until);
        self.run_watch();
        Ok(ran)
    }

    /// When the watch has the Gateway `namespace/name` run next: a wake-up not yet served,
    /// or its resync (`None`: no watch, or nothing pending).
    ///
    /// ```
    /// use gateway_reconcile::testing::{StoreLoop, Watch, strategies};
    /// let toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
    /// assert_eq!(toy.woken("ns", "gw"), Some(toy.store().now()), "the first list");
    /// ```
    pub fn woken(&self, namespace: &str, name: &str) -> Option<Timestamp> {
        let ahead = self.watch.as_ref()?.ahead(&self.store);
        ahead.due(&key(namespace, name))
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
        // What changed before it, delivered first; its own writes, after.
        self.run_watch();
        let (reconciler, driver) = (&mut self.reconciler, &self.driver);
        let (record, requeue) = self.store.reconcile_with(namespace, name, |port, now| {
            ready(reconciler.reconcile(driver, port, now))
        })?;
        let at = key(namespace, name);
        if let Some(watching) = &mut self.watch {
            watching.reconciled(&at, record.time);
        }
        match self.reconciler.schedule(requeue, record.time) {
            Some(due) => self.due.insert(at, due),
            None => self.due.remove(&at),
        };
        self.run_watch();
        Ok(record)
    }

    /// The store at `now`, and the target's namespace and name.
    fn at(&mut self, now: Timestamp) -> (&mut Store, &str, &str) {
        self.store.advance_to(now);
        (&mut self.store, &self.target.0, &self.target.1)
    }

    /// Runs `change` on the store at `now`, then the watch on what it changed.
    fn changing<T>(
        &mut self,
        now: Timestamp,
        change: impl FnOnce(&mut Store, &str, &str) -> Result<T, ClusterError>,
    ) -> Result<T, StepError<ClusterError>> {
        let (store, namespace, name) = self.at(now);
        let done = change(store, namespace, name);
        self.run_watch();
        Ok(done?)
    }

    /// The watch lists again (a restart, a new store): what it held is forgotten, every
    /// Gateway woken; its counts go on.
    fn relist(&mut self) {
        if let Some(watching) = self.watch.take() {
            self.store.journal(true);
            let (watch, stats) = (watching.watch().clone(), watching.stats());
            self.watch = Some(Watching::list(watch, &self.store, stats));
        }
    }
}

/// The most reconciles one [`StoreLoop::run_due`] runs.
const RUN_DUE_AT_MOST: usize = 10_000;

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
        self.relist();
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
        self.changing(now, |store, namespace, name| {
            store.patch(namespace, name, kind, patch)
        })
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.changing(now, |store, namespace, name| {
            store.delete(namespace, name, kind)
        })
    }

    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.changing(now, |store, namespace, name| {
            store.rollout(namespace, name, state)
        })
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
        self.relist();
        Ok(())
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.changing(now, |store, namespace, name| {
            store.patch_unchecked(namespace, name, kind, patch)
        })
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

    /// The reconciler's schedule, or the watch's wake-up or resync when it comes first.
    fn next_due(&self) -> Option<Timestamp> {
        let ahead = self
            .watch
            .as_ref()
            .map(|watching| watching.ahead(&self.store));
        self.next_of(&self.target, ahead.as_ref())
    }

    /// Every Gateway's: an advance runs each Gateway's reconciles as they fall due. With
    /// the watch on, a woken Gateway is due at its wake-up, and every Gateway at its next
    /// resync tick.
    fn scheduled(&self) -> Vec<(ObjectKey, Timestamp)> {
        let Some(watching) = &self.watch else {
            return self
                .due
                .iter()
                .map(|(gateway, due)| (gateway.clone(), *due))
                .collect();
        };
        let ahead = watching.ahead(&self.store);
        let mut gateways: Vec<&ObjectKey> = self.due.keys().chain(&self.store.order).collect();
        gateways.sort();
        gateways.dedup();
        gateways
            .into_iter()
            .filter_map(|gateway| Some((gateway.clone(), self.next_of(gateway, Some(&ahead))?)))
            .collect()
    }

    /// The store's clock: one for every Gateway and the run's checker; the watch releases
    /// what it held until then.
    fn advance_to(&mut self, now: Timestamp) {
        self.store.advance_to(now);
        self.run_watch();
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
        let scope = Scope::One(WatchKind::GatewayClass, key("", &class_name));
        let class_part = self.watched(scope, |store| {
            match (class, store.classes.get_mut(&class_name)) {
                (Some(class), Some(stored)) => {
                    let configurations = &store.configurations;
                    let presence = ConfigurationPresence::of_class(
                        &store.settings,
                        &class,
                        |namespace, name| configurations.contains_key(&key(namespace, name)),
                    );
                    settle_class_status(
                        &store.settings,
                        &mut store.server,
                        stored,
                        &class,
                        presence,
                    )
                }
                _ => Ok((Vec::new(), false)),
            }
        })?;
        let now = self.now();
        self.status_patch_problem = None;
        let result = run(StorePort::new(self, at.clone()), now);
        let problem = self.status_patch_problem.take();
        let stored = self.gateways.get(&at).cloned().unwrap_or_default();
        recorded(now, result, &stored, problem, class_part)
    }
}
