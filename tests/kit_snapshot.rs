//! The test kit's rendering of one fault schedule, as an insta snapshot: a rollout, an edit
//! whose updates fail with 503 until `Degraded` appears, a recovery.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::Run;
use gateway_reconcile::testing::strategies::{self, Op};

#[test]
fn a_fault_schedule_renders_as_a_timeline() {
    let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
    let schedule = [
        Op::Reconcile,
        Op::Rollout(0),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::Fail(4, 10),
        Op::Reconcile,
        Op::Advance(60),
        Op::Reconcile,
        Op::Advance(70),
        Op::Reconcile,
        Op::Fail(4, 0),
        Op::Reconcile,
        Op::Rollout(0),
        Op::Reconcile,
        Op::Reconcile,
    ];
    for op in &schedule {
        run.apply(op).unwrap();
    }
    let text = run.render();
    // Deterministic: the same schedule renders the same text.
    let mut again = Run::new(strategies::cluster().unwrap()).unwrap();
    for op in &schedule {
        again.apply(op).unwrap();
    }
    assert_eq!(text, again.render());
    insta::assert_snapshot!(text);
}
