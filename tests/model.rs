//! Model-based property test: random schedules of edits, faults, rollouts, clock advances and
//! restarts, driven through the simulated cluster. After every reconcile the status must tell
//! the truth about the stored Deployment, and the bookkeeping rules must hold.
//!
//! The schedules, the ops and the invariants are the test kit's (`testing` feature:
//! `gateway_reconcile::testing`), the same ones embedders use, so the kit cannot rot.
//!
//! `cargo test --features testing --test model` runs a modest number of cases; set
//! `MODEL_CASES` (e.g. `MODEL_CASES=5000`) for a long run.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};
use gateway_reconcile::testing::{Run, invariants, schedule};
use proptest::prelude::*;

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut run = Run::new(strategies::cluster()?)?;
    for op in ops {
        run.apply(op)?;
    }
    run.converge()?;
    Ok(())
}

fn cases() -> u32 {
    std::env::var("MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_status_tells_the_truth_under_any_schedule(ops in strategies::schedule(60)) {
        run(&ops)?;
    }
}

/// The checks can fail: a status that turned Programmed False on a 503 is caught.
#[test]
fn a_flapping_status_is_a_violation() {
    use gateway_reconcile::sim::cluster::Kind;
    use serde_json::json;

    let mut cluster = strategies::cluster().unwrap();
    let mut check = invariants::Invariants::new(&cluster).unwrap();
    for op in [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::ConfigurationEdit(3),
        Op::fail(1, WriteFailure::Unavailable),
    ] {
        schedule::apply(&mut cluster, &mut check, &op).unwrap();
    }
    let record = cluster.reconcile().unwrap();
    // Another writer (a buggy wrapper) turns Programmed False after the failed update.
    let mut conditions = serde_json::Value::from(&cluster.gateway()["status"]["conditions"]);
    for c in conditions.as_array_mut().unwrap() {
        if c["type"] == "Programmed" {
            c["status"] = json!("False");
            c["lastTransitionTime"] = json!("2026-01-01T00:00:00Z");
        }
    }
    cluster
        .patch(
            Kind::Gateway,
            &json!({"status": {"conditions": conditions}}),
        )
        .unwrap();
    let violation = check.check(&cluster, &record).unwrap_err();
    assert_eq!(violation.property, "no-flapping", "{violation}");
    assert_eq!(violation.step, 3);
}

/// A foreign condition rewritten by the wrapper is caught.
#[test]
fn a_touched_foreign_condition_is_a_violation() {
    use gateway_reconcile::sim::cluster::Kind;
    use serde_json::json;

    let mut cluster = strategies::cluster().unwrap();
    let mut check = invariants::Invariants::new(&cluster).unwrap();
    let record = cluster.reconcile().unwrap();
    let mut conditions = serde_json::Value::from(&cluster.gateway()["status"]["conditions"]);
    conditions[0]["message"] = json!("rewritten");
    cluster
        .patch(
            Kind::Gateway,
            &json!({"status": {"conditions": conditions}}),
        )
        .unwrap();
    let violation = check.check(&cluster, &record).unwrap_err();
    assert_eq!(violation.property, "foreign-untouched", "{violation}");
}

/// A Degraded condition that is due but missing (a wrapper that drops it) is caught.
#[test]
fn a_missing_degraded_is_a_violation() {
    use gateway_reconcile::sim::cluster::Kind;
    use serde_json::{Value, json};

    let mut cluster = strategies::cluster().unwrap();
    let mut check = invariants::Invariants::new(&cluster).unwrap();
    let schedule = [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::fail(10, WriteFailure::Unavailable),
        Op::Reconcile,
        Op::Advance(130),
    ];
    for op in &schedule {
        schedule::apply(&mut cluster, &mut check, op).unwrap();
    }
    let mut record = cluster.reconcile().unwrap();
    // The wrapper dropped the status write: the stored conditions stay as they were.
    record.status_written = false;
    let kept: Vec<Value> = cluster.gateway()["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] != "meridio-2.nordix.org/Degraded")
        .map(Value::from)
        .collect();
    assert_eq!(kept.len(), 4, "Degraded was there to drop");
    cluster
        .patch(Kind::Gateway, &json!({"status": {"conditions": kept}}))
        .unwrap();
    let violation = check.check(&cluster, &record).unwrap_err();
    assert_eq!(violation.property, "degraded-after", "{violation}");
}
