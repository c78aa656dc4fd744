//! A test kit for embedders (the `testing` feature, off by default): what a controller built
//! on this crate needs to test its own code around it.
//!
//! - [`strategies`]: proptest strategies for valid GatewayConfigurations (and invalid ones,
//!   tagged with their validation message), Gateways with foreign conditions, observed
//!   Deployments as the API server returns them, write outcomes of every class, and fault
//!   schedules ([`Op`] values: reconciles, edits, write failures, rollouts, clock
//!   advances, restarts) that run through the simulated cluster.
//! - [`invariants`]: the truthfulness properties the crate's own model test asserts, as
//!   [`Invariants::check`](invariants::Invariants::check) after each reconcile of a run and
//!   [`converge`](invariants::converge) at its end, failing with a
//!   [`invariants::Violation`] that names the property and the step.
//! - [`text`]: a stable, human-readable text of a settlement and of a run (the timeline
//!   `simulate` prints), deterministic across runs and platforms, for snapshot tests.
//! - [`Run`]: a schedule applied to a [`Cluster`], checked as it goes, recorded for
//!   rendering.
//!
//! The crate's own model test and its snapshot of a fault schedule use this kit, so it is
//! exercised on every test run. The default build depends on neither proptest nor insta;
//! with `testing`, proptest is a dependency (insta stays the embedder's choice: the
//! rendering is plain text).
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
//! # A property test of an embedder's wrapper
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

use crate::sim::cluster::{Cluster, ReconcileRecord, format_time};
use crate::sim::scenario::{Effect, Entry};
pub use controller_loop::ControllerLoop;
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
