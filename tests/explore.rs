//! The exhaustive exploration of the kit's bounded models (issue #42 item 5): every
//! sequence of a few operations on one Gateway, and on two sharing a GatewayConfiguration,
//! keeps every property at every reconcile and settles from every state reached. Then the
//! explorer's own checks fail on loops that break them.
//!
//! The depths here fit a debug test run; `cargo run --release --example explore --features
//! testing -- one 9` goes as deep as docs/reliability.md reports.
#![cfg(feature = "testing")]

use std::hash::DefaultHasher;

use gateway_reconcile::jiff::Timestamp;
use gateway_reconcile::reconcile::{Requeue, WriteRecord};
use gateway_reconcile::sim::cluster::{Cluster, ClusterError, Kind, Objects, ReconcileReport};
use gateway_reconcile::testing::explore::{self, Bounds, Explorable};
use gateway_reconcile::testing::strategies::Op;
use gateway_reconcile::testing::{
    Backend, ControllerLoop, Reconciler, StepError, StoreLoop, WriteCounts, strategies,
};
use gateway_reconcile::{Settings, reconcile::ObjectKey};
use serde_json::{Value, json};

#[test]
fn every_sequence_of_four_operations_on_one_gateway_keeps_the_properties() {
    let exploration = explore::explore(
        strategies::cluster().unwrap(),
        &explore::one_gateway_ops(),
        Bounds::to_depth(4),
    )
    .unwrap_or_else(|c| panic!("{c}"));
    println!("{exploration:?}");
    assert!(exploration.complete);
    assert_eq!(
        exploration.by_depth.len(),
        5,
        "every depth reached new states"
    );
    // Each state explored tried every operation: the count is the states above the last
    // depth times the alphabet.
    let explored: usize = exploration.by_depth[..4].iter().sum();
    assert_eq!(
        exploration.transitions,
        explored * explore::one_gateway_ops().len()
    );
}

#[test]
fn every_sequence_of_three_operations_on_two_gateways_sharing_a_configuration_keeps_the_properties()
{
    let mut store = strategies::store().unwrap();
    store.add(strategies::objects_of("other")).unwrap();
    let exploration = explore::explore(
        StoreLoop::new(store, ()),
        &explore::two_gateway_ops(),
        Bounds::to_depth(3),
    )
    .unwrap_or_else(|c| panic!("{c}"));
    println!("{exploration:?}");
    assert!(exploration.complete && exploration.states > 100);
}

#[test]
fn the_state_bound_stops_an_exploration_incomplete() {
    let exploration = explore::explore(
        strategies::cluster().unwrap(),
        &explore::one_gateway_ops(),
        Bounds::to_depth(4).with_max_states(50),
    )
    .unwrap();
    assert_eq!(exploration.states, 50);
    assert!(!exploration.complete);
}

/// A loop that waits for a change whatever its reconcile asked (it drops the requeue): the
/// explorer finds the shortest sequence that shows it.
#[derive(Clone)]
struct IgnoresRequeue;

impl Reconciler for IgnoresRequeue {
    fn schedule(&mut self, _: Requeue, _: Timestamp) -> Option<Timestamp> {
        None
    }
}

#[test]
fn the_explorer_finds_a_loop_that_drops_its_requeue() {
    let counterexample = explore::explore(
        StoreLoop::new(strategies::store().unwrap(), IgnoresRequeue),
        &explore::one_gateway_ops()
            .into_iter()
            .filter(|op| !matches!(op, Op::Restart))
            .collect::<Vec<_>>(),
        Bounds::to_depth(4),
    )
    .unwrap_err();
    assert_eq!(
        counterexample.violation.property, "requeue-honoured",
        "{counterexample}"
    );
    // Breadth first, the shortest: a failed write (a conflict asks to look again at once),
    // then the reconcile that meets it. A first reconcile alone passes: its write succeeds
    // and its requeue waits for a change.
    assert_eq!(counterexample.ops.len(), 2, "{counterexample}");
    assert_eq!(counterexample.ops[1], Op::Reconcile, "{counterexample}");
}

/// The simulated cluster behind a writer that edits the Deployment's pod template, an
/// input change the explorer does not know of: before every reconcile (`Always`: the loop
/// writes in every round and never settles), or once right after each reconcile whose
/// write was not of its making (`AfterOwnWrite`: a loop that writes again on its own
/// write's echo, yet settles).
#[derive(Clone)]
struct Redrifting(Cluster, Drift);

#[derive(Clone, Copy, PartialEq)]
enum Drift {
    Always,
    AfterOwnWrite { pending: bool },
}

impl Backend for Redrifting {
    type Error = ClusterError;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.0.create(settings, objects, now)
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<ClusterError>> {
        let drift = match self.1 {
            Drift::Always => true,
            Drift::AfterOwnWrite { pending } => pending,
        };
        if drift && self.0.deployment().is_some() {
            let edit = json!({"spec": {"template": {"spec": {"serviceAccountName": "hacked"}}}});
            Backend::patch(&mut self.0, Kind::Deployment, &edit, now)?;
        }
        let report = Backend::reconcile(&mut self.0, now)?;
        if let Drift::AfterOwnWrite { pending } = &mut self.1 {
            *pending = !drift && report.outcome.is_some();
        }
        Ok(report)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        Backend::patch(&mut self.0, kind, patch, now)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &gateway_reconcile::WriteOutcome,
    ) -> Result<(), StepError<ClusterError>> {
        Backend::fail_writes(&mut self.0, count, outcome)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
        self.0.read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        Backend::write_counts(&self.0)
    }
}

impl ControllerLoop for Redrifting {
    fn settings(&self) -> &Settings {
        ControllerLoop::settings(&self.0)
    }

    fn now(&self) -> Timestamp {
        ControllerLoop::now(&self.0)
    }

    fn write_record(&self) -> Option<WriteRecord> {
        ControllerLoop::write_record(&self.0)
    }

    fn next_due(&self) -> Option<Timestamp> {
        ControllerLoop::next_due(&self.0)
    }
}

impl Explorable for Redrifting {
    fn fingerprint(&self, state: &mut DefaultHasher) {
        Explorable::fingerprint(&self.0, state);
    }

    fn gateways(&self) -> Vec<ObjectKey> {
        self.0.gateways()
    }
}

#[test]
fn the_explorer_finds_a_loop_that_never_settles() {
    let counterexample = explore::explore(
        Redrifting(strategies::cluster().unwrap(), Drift::Always),
        &[Op::Reconcile],
        Bounds::to_depth(2),
    )
    .unwrap_err();
    assert_eq!(
        counterexample.violation.property, "eventually-stable",
        "{counterexample}"
    );
    assert!(
        counterexample
            .violation
            .message
            .contains("still writes after 4 rounds"),
        "{counterexample}"
    );
}

#[test]
fn the_explorer_finds_a_loop_that_writes_again_on_its_own_writes_echo() {
    let counterexample = explore::explore(
        Redrifting(
            strategies::cluster().unwrap(),
            Drift::AfterOwnWrite { pending: false },
        ),
        &[Op::Reconcile],
        Bounds::to_depth(2),
    )
    .unwrap_err();
    assert_eq!(
        counterexample.violation.property, "echo-idle",
        "{counterexample}"
    );
    // The first reconcile creates the Deployment; the one right after it writes again.
    assert_eq!(counterexample.ops, [Op::Reconcile], "{counterexample}");
}
