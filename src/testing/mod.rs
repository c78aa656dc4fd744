//! A test kit for embedders (the `testing` feature, off by default): what a controller built
//! on this crate needs to test its own code around it, on its own state.
//!
//! - [`ControllerLoop`]: what the kit runs on. It is the scenario runner's
//!   [`Backend`] (create, reconcile, patch, delete, rollout,
//!   fail and mutate writes, restart, read, write counts), whose `reconcile` is the
//!   embedder's own (the crate's [`Driver`](crate::reconcile::Driver) over its port, or
//!   its controller), plus the loop's memory: its write record and when it scheduled its
//!   next reconcile. The simulated [`Cluster`] is one (the crate's own loop); an embedder
//!   implements it for its store, or for a real API server.
//! - [`strategies`]: proptest strategies for valid GatewayConfigurations (and invalid ones,
//!   tagged with their validation message), Gateways with foreign conditions, observed
//!   Deployments as the API server returns them, write outcomes of every class, and fault
//!   schedules ([`Op`] values: reconciles, edits, write failures, rollouts, clock
//!   advances, restarts) that [`apply`](strategies::apply) runs on any [`ControllerLoop`].
//! - [`invariants`]: the truthfulness properties the crate's own model test asserts, as
//!   [`Invariants::check`](invariants::Invariants::check) after each reconcile of a run and
//!   [`converge`](invariants::converge) at its end, failing with a
//!   [`invariants::Violation`] that names the property and the step.
//! - [`text`]: a stable, human-readable text of a settlement and of a run (the timeline
//!   `simulate` prints), deterministic across runs and platforms, for snapshot tests.
//! - [`Run`]: a schedule applied to a [`ControllerLoop`], checked as it goes, recorded for
//!   rendering.
//!
//! # The clock and the loop's schedule
//!
//! The kit holds the clock and hands it to every call as `now`. Between reconciles it checks
//! the loop's scheduling (`requeue-honoured`): after a reconcile at `t` whose
//! [`Requeue`](crate::Requeue) has a [`deadline`](crate::Requeue::deadline) (`t` for
//! `Immediately`, `t + d` for `After(d)`), [`ControllerLoop::next_due`] must be at or before
//! it. [`Op::Advance`] then runs every reconcile that falls due on the way, at its due time,
//! each one checked: a `Degraded` condition due after `degradedAfter` must appear then,
//! without waiting for a change. A loop that maps `After` to "wait for a change" fails.
//!
//! The crate's own model test and its snapshot of a fault schedule use this kit, so it is
//! exercised on every test run. The default build depends on neither proptest nor insta;
//! with `testing`, proptest is a dependency (insta stays the embedder's choice: the
//! rendering is plain text).
//!
//! # An embedder's own loop under the kit
//!
//! A toy controller: its objects in an in-memory store, its reconcile the crate's
//! [`Driver`](crate::reconcile::Driver) over a [`Port`](crate::reconcile::Port) on the
//! store (the loop every controller built on the crate runs), its schedule taken from each
//! reconcile's requeue. The store's
//! plumbing (bookkeeping, injected failures, a crude rollout) is hidden here; the
//! `kit_loop` test holds a complete one.
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//! use gateway_reconcile::events::Event;
//! use gateway_reconcile::jiff::Timestamp;
//! use gateway_reconcile::reconcile::{Driver, Gathered, OwnedInputs, Port, StatusWrite, ready};
//! use gateway_reconcile::testing::{
//!     Backend, ControllerLoop, Kind, Objects, ReconcileRecord, RolloutState, Run, StepError,
//!     WriteCounts, strategies::{self, Op},
//! };
//! use gateway_reconcile::wire::{Deployment, Gateway, GatewayConfiguration};
//! use gateway_reconcile::{
//!     DeploymentWrite, Settings, StatusPatch, WriteKind, WriteOutcome, WriteRecord,
//! };
//! use serde_json::{Value, json};
//!
//! /// The embedder's store: objects as JSON, by kind.
//! #[derive(Default)]
//! struct Store {
//!     objects: BTreeMap<&'static str, Value>,
//!     failures: Option<(u32, WriteOutcome)>,
//!     writes: WriteCounts,
//! #   revision: u64,
//! }
//! # impl Store {
//! #     fn get<T: serde::de::DeserializeOwned>(&self, kind: Kind) -> Option<T> {
//! #         self.objects.get(kind.key()).and_then(|v| serde_json::from_value(v.clone()).ok())
//! #     }
//! #     /// Stores with a new resourceVersion; a spec change bumps the generation.
//! #     fn put(&mut self, kind: Kind, mut object: Value) {
//! #         self.revision += 1;
//! #         if !matches!(kind, Kind::Template | Kind::Routes) {
//! #             let old = self.objects.get(kind.key());
//! #             let generation = old.and_then(|o| o.pointer("/metadata/generation"))
//! #                 .and_then(Value::as_i64).unwrap_or(0);
//! #             let bumped = old.is_none_or(|o| o.get("spec") != object.get("spec"));
//! #             object["metadata"]["generation"] = json!(generation + i64::from(bumped));
//! #             object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
//! #         }
//! #         self.objects.insert(kind.key(), object);
//! #     }
//! #     fn write(&mut self, write: &DeploymentWrite) -> WriteOutcome {
//! #         self.writes.deployment_writes += 1;
//! #         if let Some((count, outcome)) = self.failures.take() {
//! #             self.failures = (count > 1).then(|| (count - 1, outcome.clone()));
//! #             return outcome;
//! #         }
//! #         let (DeploymentWrite::Create(desired) | DeploymentWrite::Update { desired, .. }) = write;
//! #         let mut object = desired.to_json();
//! #         if let Some(status) = self.objects.get("deployment").and_then(|d| d.get("status")) {
//! #             object["status"] = status.clone();
//! #         }
//! #         self.put(Kind::Deployment, object);
//! #         WriteOutcome::Applied
//! #     }
//! # }
//!
//! /// The embedder's port: the I/O of one reconcile on its store. The loop around it is the
//! /// crate's `Driver`: read, plan, write, settle, keep the write record, status patch.
//! struct StorePort<'s>(&'s mut Store);
//!
//! impl Port for StorePort<'_> {
//!     type Inputs = OwnedInputs;
//!     type Error = String;
//!
//!     async fn read(&mut self) -> Result<Gathered<OwnedInputs>, String> {
//!         let store = &*self.0;
//!         let gateway: Gateway = store.get(Kind::Gateway).ok_or("no Gateway")?;
//!         let template: Deployment = store.get(Kind::Template).ok_or("no template")?;
//!         let mut inputs = OwnedInputs::new(gateway, Arc::new(template));
//!         inputs.class = store.get(Kind::GatewayClass);
//!         inputs.configuration = store.get::<GatewayConfiguration>(Kind::Configuration).into();
//!         inputs.deployment = store.get(Kind::Deployment);
//!         inputs.routes = store.get(Kind::Routes).unwrap_or_default();
//!         Ok(Gathered::Inputs(inputs))
//!     }
//!
//!     async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
//!         self.0.write(&write)
//!     }
//!
//!     async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, String> {
//!         let mut gateway = self.0.objects["gateway"].clone();
//!         patch.apply_to(&mut gateway);
//!         self.0.put(Kind::Gateway, gateway);
//!         self.0.writes.status_writes += 1;
//!         Ok(StatusWrite::Written)
//!     }
//!
//!     async fn record(&mut self, _: WriteKind, _: &[Event]) {}
//! }
//!
//! /// The toy controller: its store, its loop (with the loop's memory), its schedule.
//! struct Toy {
//!     store: Store,
//!     driver: Driver,
//!     due: Option<Timestamp>,
//!     settings: Settings,
//!     now: Timestamp,
//! }
//!
//! type Step<T> = Result<T, StepError<String>>;
//!
//! impl Backend for Toy {
//!     type Error = String;
//!
//!     fn reconcile(&mut self, now: Timestamp) -> Step<ReconcileRecord> {
//!         self.now = now;
//!         let reconciled = ready(self.driver.reconcile(&mut StorePort(&mut self.store), now))
//!             .map_err(|e| e.to_string())?
//!             .map_err(|e| e.to_string())?;
//!         // The loop's schedule, as a real loop keeps it.
//!         self.due = reconciled.requeue.deadline(now);
//!         let decided = reconciled.decided.ok_or("nothing read")?;
//!         let after: Gateway = self.store.get(Kind::Gateway).ok_or("no Gateway")?;
//!         Ok(ReconcileRecord::of(now, decided, after.status))
//!     }
//!
//!     fn fail_writes(&mut self, count: u32, outcome: &WriteOutcome) -> Step<()> {
//!         self.store.failures = (count > 0).then(|| (count, outcome.clone()));
//!         Ok(())
//!     }
//!
//!     fn restart(&mut self, _: Timestamp) -> Step<()> {
//!         (self.driver, self.due) = (Driver::new(self.settings.clone()), None);
//!         Ok(())
//!     }
//!
//!     fn read(&self, kind: Kind) -> Step<Option<Value>> {
//!         Ok(self.store.objects.get(kind.key()).cloned())
//!     }
//!
//!     fn write_counts(&self) -> WriteCounts {
//!         self.store.writes
//!     }
//! #
//! #   fn create(&mut self, settings: &Settings, objects: Objects, now: Timestamp) -> Step<()> {
//! #       (self.settings, self.now) = (settings.clone(), now);
//! #       self.driver = Driver::new(settings.clone());
//! #       let template = objects.template.unwrap_or_else(gateway_reconcile::template::default_template);
//! #       for (kind, object) in [
//! #           (Kind::GatewayClass, objects.gateway_class), (Kind::Gateway, Some(objects.gateway)),
//! #           (Kind::Configuration, objects.configuration),
//! #           (Kind::Deployment, objects.deployment.map(Deployment::into_json)),
//! #           (Kind::Template, Some(template.into_json())),
//! #           (Kind::Routes, serde_json::to_value(objects.routes).ok()),
//! #       ] {
//! #           if let Some(object) = object { self.store.put(kind, object); }
//! #       }
//! #       Ok(())
//! #   }
//! #   fn patch(&mut self, kind: Kind, patch: &Value, _: Timestamp) -> Step<()> {
//! #       let mut object = self.store.objects.get(kind.key()).cloned().unwrap_or(json!({}));
//! #       gateway_reconcile::sim::merge_patch::apply(&mut object, patch);
//! #       self.store.put(kind, object);
//! #       Ok(())
//! #   }
//! #   fn delete(&mut self, kind: Kind, _: Timestamp) -> Step<()> {
//! #       self.store.objects.remove(kind.key());
//! #       Ok(())
//! #   }
//! #   fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Step<()> {
//! #       let mut d = self.store.objects.get("deployment").cloned()
//! #           .ok_or_else(|| StepError::Failed("no Deployment".to_owned()))?;
//! #       let replicas = d["spec"]["replicas"].as_i64().unwrap_or(1);
//! #       let ready = if state == RolloutState::Complete { replicas } else { 0 };
//! #       let available = if ready == replicas { "True" } else { "False" };
//! #       d["status"] = json!({"observedGeneration": d["metadata"]["generation"],
//! #           "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready,
//! #           "availableReplicas": ready, "conditions": [{"type": "Available",
//! #           "status": available, "reason": "Rollout", "lastTransitionTime": now.to_string()}]});
//! #       self.store.put(Kind::Deployment, d);
//! #       Ok(())
//! #   }
//! #   fn mutate_writes(&mut self, _: Option<&Value>, _: Timestamp) -> Step<()> {
//! #       Err(StepError::Skip("the toy has no admission".into()))
//! #   }
//! }
//!
//! impl ControllerLoop for Toy {
//!     fn settings(&self) -> &Settings { &self.settings }
//!     fn now(&self) -> Timestamp { self.now }
//!     fn write_record(&self) -> Option<WriteRecord> { self.driver.write_record("ns", "gw") }
//!     fn next_due(&self) -> Option<Timestamp> { self.due }
//! }
//!
//! let mut toy = Toy { store: Store::default(), driver: Driver::default(), due: None,
//!                     settings: Settings::default(), now: Timestamp::UNIX_EPOCH };
//! toy.create(&strategies::settings(), strategies::objects(), strategies::start()).unwrap();
//! let mut run = Run::new(toy).unwrap();
//! for op in [Op::Reconcile, Op::Rollout(0), Op::Reconcile, Op::ConfigurationEdit(3),
//!            Op::Fail(4, 10), Op::Reconcile, Op::Advance(150)] {
//!     run.apply(&op).unwrap();
//! }
//! // The backoff reconciles the toy scheduled ran during the advance, and Degraded came
//! // on time, 120 s after ConfigurationApplied turned False.
//! assert!(run.steps().iter().filter(|s| s.due).count() >= 5);
//! assert!(run.text().contains("Degraded = True/ApplyFailing (observedGeneration 1, since 2026-01-01T00:02:00Z)"));
//! run.converge().unwrap();
//! ```
//!
//! # A snapshot of the condition output through a fault schedule
//!
//! ```
//! use gateway_reconcile::testing::{Run, strategies::{self, Op}};
//!
//! let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
//! for op in [Op::Reconcile, Op::Rollout(0), Op::Reconcile, Op::ConfigurationEdit(3),
//!            Op::Fail(4, 10), Op::Reconcile, Op::Advance(150), Op::Reconcile] {
//!     run.apply(&op).unwrap();
//! }
//! let text = run.text();
//! assert!(text.contains("Degraded = True/ApplyFailing"));
//! // In an embedder's test: insta::assert_snapshot!(text);
//! ```
//!
//! # A property test of an embedder's loop
//!
//! With the simulated cluster here; with an embedder's own [`ControllerLoop`], `Run::new`
//! takes it instead (leave out of the schedule the ops it cannot do, e.g. with
//! `prop_filter`).
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
//! See the `embedder_snapshot` and `embedder_proptest` examples for complete files.

mod controller_loop;
pub mod invariants;
pub mod strategies;
pub mod text;

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::sim::cluster::{Cluster, format_time};
use crate::sim::scenario::{Effect, Entry};
pub use controller_loop::ControllerLoop;

// What an embedder's test names, reachable from here (their home is the simulator's).
pub use crate::sim::cluster::{Kind, Objects, ReconcileRecord, RolloutState};
pub use crate::sim::scenario::{Backend, StepError, WriteCounts};
use invariants::{Invariants, Violation};
use strategies::Op;

/// A schedule run on a [`ControllerLoop`] (the simulated [`Cluster`] unless said otherwise):
/// every reconcile checked by [`Invariants`], every step recorded for [`Run::text`].
#[derive(Debug, Clone)]
pub struct Run<L: ControllerLoop = Cluster> {
    controller: L,
    invariants: Invariants,
    steps: Vec<Step>,
}

/// One step of a [`Run`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Step {
    /// The clock after the step.
    pub time: Timestamp,
    /// What was applied (a reconcile that fell due during an [`Op::Advance`] is an
    /// [`Op::Reconcile`] step of its own, marked `due`, before the advance's step).
    pub op: Op,
    /// The reconcile's record, when the step was a reconcile.
    pub record: Option<ReconcileRecord>,
    /// The reconcile ran because the loop scheduled it (its requeue fell due).
    pub due: bool,
}

impl<L: ControllerLoop> Run<L> {
    /// A run starting on `controller` as it is (its objects, settings and clock).
    pub fn new(controller: L) -> Result<Self, Violation> {
        let invariants = Invariants::new(&controller)?;
        Ok(Run {
            controller,
            invariants,
            steps: Vec::new(),
        })
    }

    /// Applies one op ([`strategies::apply`]): every reconcile it runs is checked against
    /// the invariants. An op the loop refuses is a `backend` violation.
    pub fn apply(&mut self, op: &Op) -> Result<(), Violation> {
        let records = strategies::apply(&mut self.controller, &mut self.invariants, op)?;
        let due = matches!(op, Op::Advance(_));
        for record in records {
            self.steps.push(Step {
                time: record.time,
                op: Op::Reconcile,
                record: Some(record),
                due,
            });
        }
        if !matches!(op, Op::Reconcile) {
            self.steps.push(Step {
                time: self.invariants.now(),
                op: op.clone(),
                record: None,
                due: false,
            });
        }
        Ok(())
    }

    /// Ends the run with [`invariants::converge`] (its reconciles are checked, not recorded).
    pub fn converge(&mut self) -> Result<(), Violation> {
        invariants::converge(&mut self.controller, &mut self.invariants)
    }

    /// The controller loop.
    pub fn controller(&self) -> &L {
        &self.controller
    }

    /// The steps of the run, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The reconciles of the run, in order.
    pub fn records(&self) -> impl Iterator<Item = &ReconcileRecord> {
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

impl Run<Cluster> {
    /// The simulated cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.controller
    }
}
