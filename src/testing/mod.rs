//! A test kit for embedders (the `testing` feature, off by default): what a controller built
//! on this crate needs to test its own code around it, on its own state.
//!
//! - [`Store`]: one shared, in-memory cluster: many Gateways over shared classes,
//!   configurations, routes, namespaces and template, each object held once (an edit of a
//!   shared object is seen by every Gateway that uses it), behind the simulated API server
//!   (the [`Cluster`]'s semantics, one clock), with per-request fault injection
//!   ([`Store::fail_next`] with a [`Request`]: the next N requests of one [`Verb`] on one
//!   object fail with a given answer) and an event recorder ([`Store::events`], per
//!   Gateway). Its [`port`](Store::port) ([`StorePort`]) is the
//!   [`Port`](crate::reconcile::Port) of one Gateway for the crate's
//!   [`Driver`](crate::reconcile::Driver); [`StoreLoop`] runs an embedder's [`Reconciler`]
//!   (its port wrapper, its scheduling) on it as a [`ControllerLoop`], its scenario
//!   operations acting on the Gateway it [targets](StoreLoop::target).
//! - The store loop's watch, off by default: [`StoreLoop::with_watch`] with a [`Watch`]
//!   turns every change of the store's objects (a test's edit, a reconcile's writes, a
//!   rollout, a class's status) into a [`WatchEvent`], which the loop maps to the Gateways
//!   it wakes with the core's wake-up map ([`crate::wake`]) and reconciles when it next
//!   runs ([`Op::Advance`], [`StoreLoop::run_due`]); a resync wakes every Gateway every
//!   period; on request it loses or coalesces events, so that a test sees its controller
//!   converge without observing every state. The kit's reads go to the store, so a lost
//!   event loses a wake-up, never a view.
//! - [`ControllerLoop`]: what the kit runs on. It is the scenario runner's
//!   [`Backend`] (create, reconcile, patch, delete, rollout,
//!   fail and mutate writes, restart, read, write counts), whose `reconcile` is the
//!   embedder's own (the crate's [`Driver`](crate::reconcile::Driver) over its port, or
//!   its controller), plus the loop's memory: its write record and when it scheduled its
//!   next reconcile. The simulated [`Cluster`] is one (the crate's own loop), a
//!   [`StoreLoop`] another; an embedder may implement it for its own store, or for a real
//!   API server.
//! - [`strategies`]: proptest strategies for valid GatewayConfigurations (and invalid ones,
//!   tagged with their validation message), Gateways with foreign conditions, observed
//!   Deployments as the API server returns them, write outcomes of every class, and fault
//!   schedules ([`Op`] values: reconciles, edits, write failures, rollouts, clock
//!   advances, restarts, [the Gateway the next ops act on](Op::target)) that
//!   [`apply`](schedule::apply) runs on any [`ControllerLoop`].
//! - [`invariants`]: the truthfulness properties the crate's own model test asserts, as
//!   [`Invariants::check`](invariants::Invariants::check) after each reconcile of a run and
//!   [`converge`](schedule::converge) at its end, failing with a
//!   [`invariants::Violation`] that names the property and the step. One checker serves
//!   every Gateway of a store ([`Invariants::observe`]), on the run's one clock.
//! - [`explore`]: every sequence of up to K operations from an alphabet (the one-Gateway
//!   and two-Gateway models' alphabets are given), breadth first, states told apart by a
//!   fingerprint, the invariants checked at every reconcile and eventually stable
//!   reconciliation from every state reached; the shortest sequence that breaks a
//!   property when one does.
//! - [`sequences`]: desired-state sequences (Acto's method): valid edits of the declared
//!   state, each followed by convergence and the crate's own plan on the final objects
//!   as the oracle (it must ask for nothing).
//! - [`text`]: a stable, human-readable text of a settlement and of a run (the timeline
//!   `simulate` prints), deterministic across runs and platforms, for snapshot tests.
//! - [`Run`]: a schedule applied to a [`ControllerLoop`], checked as it goes, recorded for
//!   rendering.
//!
//! # The clock and the loop's schedule
//!
//! The kit holds the clock and hands it to every call as `now` (and, at the end of an
//! advance, to [`ControllerLoop::advance_to`]: a [`Store`]'s clock is the run's, for every
//! Gateway and the one checker of them all). Between reconciles it checks
//! the loop's scheduling (`requeue-honoured`): after a reconcile at `t` whose
//! [`Requeue`](crate::Requeue) has a [`deadline`](crate::Requeue::deadline) (`t` for
//! `Immediately`, `t + d` for `After(d)`), [`ControllerLoop::next_due`] must be at or before
//! it. [`Op::Advance`] then runs every reconcile that falls due on the way, at its due time,
//! each one checked: a `Degraded` condition due after `degradedAfter` must appear then,
//! without waiting for a change. A loop that maps `After` to "wait for a change" fails. On
//! a loop over several Gateways it runs every Gateway's
//! ([`ControllerLoop::scheduled`]), in the order they fall due.
//!
//! The crate's own model test and its snapshot of a fault schedule use this kit, so it is
//! exercised on every test run. The default build depends on neither proptest nor insta;
//! with `testing`, proptest is a dependency (insta stays the embedder's choice: the
//! rendering is plain text).
//!
//! # A toy controller under the kit
//!
//! An embedder tests its controller's code around the crate (a port wrapper, its own
//! scheduling of the requeue) on the kit's in-memory [`Store`]: a [`StoreLoop`] runs its
//! [`Reconciler`] on the crate's [`Driver`](crate::reconcile::Driver) over the store's
//! [`Port`](crate::reconcile::Port) ([`StorePort`]), and the kit's schedules and
//! invariants run on that loop. The whole of it, with a property test and an insta
//! snapshot, is the `toy_controller` example (`examples/toy_controller.rs`, packaged):
//!
//! ```no_run
#![doc = include_str!("../../examples/toy_controller.rs")]
//! ```
//!
//! A controller with a store of its own implements [`Backend`] for it (five required
//! methods; the faults it cannot inject default to [`StepError::Unsupported`]) and
//! [`ControllerLoop`] for its loop, its reconcile being the same driver over its own port.
//! [`merge_patch`] is the JSON merge patch such a store applies.
//!
//! # A snapshot of the condition output through a fault schedule
//!
//! ```
//! use gateway_reconcile::testing::{Run, strategies::{self, Op, WriteFailure}};
//!
//! let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
//! for op in [Op::Reconcile, Op::rollout_complete(), Op::Reconcile, Op::ConfigurationEdit(3),
//!            Op::fail(10, WriteFailure::Unavailable), Op::Reconcile, Op::Advance(150),
//!            Op::Reconcile] {
//!     run.apply(&op).unwrap();
//! }
//! let text = run.text();
//! assert!(text.contains("Degraded = True/ApplyFailing"));
//! // In an embedder's test: insta::assert_snapshot!(text);
//! ```
//!
//! # A property test of an embedder's loop
//!
//! With the simulated cluster here; with an embedder's own [`ControllerLoop`] (a
//! [`StoreLoop`], as above), `Run::new` takes it instead (a loop of its own leaves out of the
//! schedule the ops it cannot do, e.g. with `prop_filter`).
//!
//! ```
//! use gateway_reconcile::testing::{Run, invariants, strategies};
//! use proptest::prelude::*;
//!
//! proptest! {
//!     #![proptest_config(ProptestConfig::with_cases(4))]
//!     // In a test file, `#[test]` goes here.
//!     fn my_controller_tells_the_truth(ops in strategies::schedule(20)) {
//!         let mut run = Run::new(strategies::cluster().unwrap())?;
//!         for op in &ops {
//!             run.apply(op)?;
//!         }
//!         run.converge()?;
//!     }
//! }
//! # my_controller_tells_the_truth();
//! ```
//!
//! # Many Gateways over shared objects
//!
//! Two Gateways of one class and one GatewayConfiguration: a schedule names the Gateway
//! its ops act on ([`Op::target`]); an edit of the shared configuration is both
//! Gateways'; a fault injected while one is targeted is its Deployment's alone.
//!
//! ```
//! use gateway_reconcile::testing::{Kind, Run, StoreLoop, strategies::{self, Op, WriteFailure}};
//!
//! let mut store = strategies::store().unwrap();
//! store.add(strategies::objects_of("other")).unwrap();
//! let mut run = Run::new(StoreLoop::new(store, ())).unwrap();
//! for op in [Op::Reconcile, Op::target("ns", "other"), Op::Reconcile,
//!            Op::fail(2, WriteFailure::Unavailable), Op::ConfigurationEdit(2), Op::Reconcile,
//!            Op::target("ns", "gw"), Op::Reconcile] {
//!     run.apply(&op).unwrap();
//! }
//! let store = run.controller().store();
//! let replicas = |name| store.read("ns", name, Kind::Deployment).unwrap().unwrap()["spec"]["replicas"].clone();
//! // ConfigurationEdit(2): 3 replicas, enforced.
//! assert_eq!(replicas("gw"), 3, "the edit reached the first Gateway's Deployment");
//! assert_eq!(replicas("other"), 2, "the second's update failed");
//! assert_eq!(run.invariants().gateways(), 2);
//! ```
//!
//! # A watch that loses events
//!
//! With the watch on, edits wake the Gateways that read them, and the loop runs them as
//! the clock advances; lost events are repaired by the resync within one period.
//!
//! ```
//! use std::time::Duration;
//! use gateway_reconcile::testing::{Run, StoreLoop, Watch, WatchKind, strategies::{self, Op}};
//!
//! let watch = Watch::new()
//!     .resync(Duration::from_secs(5))
//!     .drop_every(1)
//!     .only(&[WatchKind::Configuration]);
//! let mut run = Run::new(StoreLoop::new(strategies::store().unwrap(), ()).with_watch(watch)).unwrap();
//! // The watch's first list, then an edit whose event is lost.
//! for op in [Op::Advance(0), Op::rollout_complete(), Op::Advance(1), Op::ConfigurationEdit(2)] {
//!     run.apply(&op).unwrap();
//! }
//! let writes = run.controller().store().write_counts("ns", "gw");
//! run.apply(&Op::Advance(1)).unwrap();
//! assert_eq!(run.controller().store().write_counts("ns", "gw"), writes, "no wake-up");
//! run.apply(&Op::Advance(5)).unwrap();
//! assert!(run.controller().store().write_counts("ns", "gw").deployment_writes > writes.deployment_writes,
//!         "the resync repaired it");
//! assert_eq!(run.controller().watch_stats().unwrap().dropped, 1);
//! ```
//!
//! See also the `embedder_snapshot` and `embedder_proptest` examples, and
//! `shared_configuration` (a property test of two Gateways over a shared configuration).

mod changes;
mod controller_loop;
pub mod explore;
pub mod invariants;
pub mod schedule;
pub mod sequences;
mod store;
pub mod strategies;
pub mod text;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Timestamp;

use crate::reconcile::ObjectKey;
use crate::sim::cluster::format_time;
use crate::sim::scenario::{Effect, Entry};
use crate::wire::Condition;
pub use controller_loop::ControllerLoop;

// What an embedder's test names, reachable from here (their home is the simulator's).
pub use crate::sim::cluster::{
    Cluster, ClusterError, ClusterPort, Kind, Objects, ReconcileReport, Request, RolloutState, Verb,
};
pub use crate::sim::merge_patch;
pub use crate::sim::scenario::{Backend, StepError, WriteCounts};
use invariants::{Invariants, Violation};
pub use store::{
    Reconciler, Store, StoreLoop, StorePort, Watch, WatchEvent, WatchKind, WatchStats,
};
use strategies::Op;

/// A schedule run on a [`ControllerLoop`] (the simulated [`Cluster`] unless said otherwise):
/// every reconcile checked by [`Invariants`], every step recorded for [`Run::text`].
#[derive(Debug, Clone)]
pub struct Run<L: ControllerLoop = Cluster> {
    controller: L,
    invariants: Invariants,
    steps: Vec<RunStep>,
    /// The clock when the run started, for [`Run::changes`].
    start: Timestamp,
    /// The Gateway the ops act on (the loop's target).
    target: ObjectKey,
}

/// One step of a [`Run`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunStep {
    /// The clock after the step.
    pub time: Timestamp,
    /// What was applied (a reconcile that fell due during an [`Op::Advance`] is an
    /// [`Op::Reconcile`] step of its own, marked `due`, before the advance's step).
    pub op: Op,
    /// The reconcile's record, when the step was a reconcile.
    pub record: Option<ReconcileReport>,
    /// The reconcile ran because the loop scheduled it (its requeue fell due).
    pub due: bool,
    /// The Gateway the step acted on (the loop's target then: see [`Op::Target`]), by
    /// namespace and name.
    pub gateway: ObjectKey,
}

/// The namespace and name of the loop's Gateway (empty when it cannot be read).
fn gateway_of<L: ControllerLoop + ?Sized>(controller: &L) -> ObjectKey {
    let gateway: Option<crate::wire::Gateway> = controller
        .read(Kind::Gateway)
        .ok()
        .flatten()
        .and_then(|gateway| serde_json::from_value(gateway).ok());
    let part = |p: Option<String>| p.unwrap_or_default();
    gateway.map_or_else(Default::default, |gateway| {
        (
            part(gateway.metadata.namespace),
            part(gateway.metadata.name),
        )
    })
}

impl<L: ControllerLoop> Run<L> {
    /// A run starting on `controller` as it is (its objects, settings and clock).
    pub fn new(controller: L) -> Result<Self, Violation> {
        let invariants = Invariants::new(&controller)?;
        Ok(Run {
            start: invariants.now(),
            target: gateway_of(&controller),
            controller,
            invariants,
            steps: Vec::new(),
        })
    }

    /// Applies one op ([`schedule::apply`]): every reconcile it runs is checked against
    /// the invariants. An op the loop refuses is a `backend` violation.
    pub fn apply(&mut self, op: &Op) -> Result<(), Violation> {
        let records = schedule::apply_keyed(&mut self.controller, &mut self.invariants, op)?;
        let due = matches!(op, Op::Advance(_));
        for (gateway, record) in records {
            self.steps.push(RunStep {
                time: record.time,
                op: Op::Reconcile,
                record: Some(record),
                due,
                gateway: gateway.unwrap_or_else(|| self.target.clone()),
            });
        }
        if let Op::Target { namespace, name } = op {
            self.target = (namespace.clone(), name.clone());
        }
        if !matches!(op, Op::Reconcile) {
            self.steps.push(RunStep {
                time: self.invariants.now(),
                op: op.clone(),
                record: None,
                due: false,
                gateway: self.target.clone(),
            });
        }
        Ok(())
    }

    /// Ends the run with [`schedule::converge`] (its reconciles are checked, not recorded).
    pub fn converge(&mut self) -> Result<(), Violation> {
        schedule::converge(&mut self.controller, &mut self.invariants)
    }

    /// The controller loop.
    pub fn controller(&self) -> &L {
        &self.controller
    }

    /// The run's checker: its clock ([`Invariants::now`]) is the run's, and it checks each
    /// Gateway of the loop's store the run reconciled against its own last status.
    pub fn invariants(&self) -> &Invariants {
        &self.invariants
    }

    /// The steps of the run, in order.
    pub fn steps(&self) -> &[RunStep] {
        &self.steps
    }

    /// The reconciles of the run, in order.
    pub fn records(&self) -> impl Iterator<Item = &ReconcileReport> {
        self.steps.iter().filter_map(|s| s.record.as_ref())
    }

    /// The run as text: each reconcile as the `simulate` command's timeline prints it (one
    /// that fell due noted `requeue due`), each other step as [`Op::describe`] says, then
    /// the write counts. See [`text`].
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            match &step.record {
                Some(record) => {
                    let entry = Entry {
                        step: i + 1,
                        time: step.time,
                        note: step.due.then(|| "requeue due".to_owned()),
                        effect: Effect::Reconciled(Box::new(record.clone())),
                    };
                    out.push_str(&text::timeline(std::slice::from_ref(&entry)));
                }
                None => {
                    let _ = writeln!(
                        out,
                        "step {:>2}  {}  {}",
                        i + 1,
                        format_time(step.time),
                        step.op.describe()
                    );
                }
            }
        }
        let writes = self.controller.write_counts();
        let _ = writeln!(
            out,
            "\n{} Deployment writes, {} status writes",
            writes.deployment_writes, writes.status_writes
        );
        out
    }
}

impl<L: ControllerLoop> Run<L> {
    /// The run as its changes, one line per transition: each step that is not a reconcile
    /// (as [`Op::describe`] says), and for each reconcile its Deployment write with the
    /// outcome, each condition that appeared, changed or went away (the type without its
    /// domain, `status/reason`, the message), and each Event. A reconcile that changed
    /// nothing adds no line; one the loop ran because its requeue fell due is marked `due`.
    /// Times count from the run's start. Each Gateway's conditions are compared with its own
    /// last ones (a schedule over several, with [`Op::Target`]).
    ///
    /// ```
    /// use gateway_reconcile::testing::{Run, strategies::{self, Op}};
    ///
    /// let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
    /// for op in [Op::Reconcile, Op::rollout_complete(), Op::Reconcile, Op::Reconcile] {
    ///     run.apply(&op).unwrap();
    /// }
    /// let changes = run.changes();
    /// assert!(changes.contains("step  1  +0s  Deployment Create: Applied\n"));
    /// assert!(changes.contains("step  2  +0s  rollout complete\n"));
    /// // The last reconcile changed nothing: no line of step 4.
    /// assert!(!changes.contains("step  4"));
    /// ```
    pub fn changes(&self) -> String {
        let start = self.start;
        let mut out = String::new();
        // Each Gateway's conditions before its next reconcile: first as the checker saw it.
        let mut befores: BTreeMap<&ObjectKey, &[Condition]> = BTreeMap::new();
        for (i, step) in self.steps.iter().enumerate() {
            let mut head = changes::head(i + 1, start, step.time);
            if step.due {
                head.push_str("  due");
            }
            match &step.record {
                Some(record) => {
                    let (namespace, name) = &step.gateway;
                    let before = match befores.get(&step.gateway) {
                        Some(before) => before,
                        None => self
                            .invariants
                            .first_seen(namespace, name)
                            .unwrap_or_default(),
                    };
                    changes::reconcile(&mut out, &head, before, record);
                    befores.insert(&step.gateway, &record.conditions);
                }
                None => {
                    let _ = writeln!(out, "{head}  {}", step.op.describe());
                }
            }
        }
        out
    }
}

impl Run<Cluster> {
    /// The simulated cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.controller
    }
}
