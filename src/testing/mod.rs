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

pub mod invariants;
pub mod strategies;
pub mod text;

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::sim::cluster::{Cluster, ReconcileRecord, format_time};
use crate::sim::scenario::{Effect, Entry};
use invariants::{Invariants, Violation};
use strategies::Op;

/// A schedule run on a [`Cluster`]: every reconcile checked by [`Invariants`], every step
/// recorded for [`Run::text`].
#[derive(Debug, Clone)]
pub struct Run {
    cluster: Cluster,
    invariants: Invariants,
    steps: Vec<Step>,
}

/// One step of a [`Run`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Step {
    /// The cluster clock after the step.
    pub time: Timestamp,
    /// What was applied.
    pub op: Op,
    /// The reconcile's record, when the op was [`Op::Reconcile`].
    pub record: Option<ReconcileRecord>,
}

impl Run {
    /// A run starting on `cluster` as it is.
    pub fn new(cluster: Cluster) -> Result<Self, Violation> {
        let invariants = Invariants::new(&cluster)?;
        Ok(Run {
            cluster,
            invariants,
            steps: Vec::new(),
        })
    }

    /// Applies one op ([`strategies::apply`]); a reconcile is checked against the
    /// invariants. An op the cluster refuses is a `cluster` violation.
    pub fn apply(&mut self, op: &Op) -> Result<(), Violation> {
        let record = strategies::apply(&mut self.cluster, op).map_err(|e| Violation {
            step: self.invariants.steps(),
            property: "cluster",
            message: format!("{}: {e}", op.describe()),
        })?;
        if let Some(record) = &record {
            self.invariants.check(&self.cluster, record)?;
        }
        self.steps.push(Step {
            time: self.cluster.now(),
            op: op.clone(),
            record,
        });
        Ok(())
    }

    /// Ends the run with [`invariants::converge`] (its reconciles are checked, not recorded).
    pub fn converge(&mut self) -> Result<(), Violation> {
        invariants::converge(&mut self.cluster, &mut self.invariants)
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The steps of the run, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The reconciles of the run, in order.
    pub fn records(&self) -> impl Iterator<Item = &ReconcileRecord> {
        self.steps.iter().filter_map(|s| s.record.as_ref())
    }

    /// The run as text: each reconcile as the `simulate` command's timeline prints it, each
    /// other step as [`Op::describe`] says, then the write counts. See [`text`].
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            match &step.record {
                Some(record) => {
                    let entry = Entry {
                        step: i + 1,
                        time: step.time,
                        note: None,
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
        let _ = writeln!(
            out,
            "\n{} Deployment writes, {} status writes",
            self.cluster.deployment_writes(),
            self.cluster.status_writes()
        );
        out
    }
}
