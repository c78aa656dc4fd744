//! Desired-state sequences (issue #42 item 4, Acto's method) on the simulator: random
//! sequences of ten valid edits of the declared state, each followed by convergence and the
//! oracle (a plan on the final objects asks for nothing), every reconcile checked. The same
//! sequences run on the real server in `gateway-reconcile-kube/tests/replay.rs`.
//!
//! `SEQUENCE_CASES` sets how many (200 by default); proptest keeps the seed of a failing
//! one in `tests/sequences.proptest-regressions`.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::invariants::Invariants;
use gateway_reconcile::testing::sequences;
use gateway_reconcile::testing::{StoreLoop, strategies};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("SEQUENCE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_sequence_of_ten_edits_converges_to_what_the_crate_plans(edits in sequences::sequence(10)) {
        let mut cluster = strategies::cluster()?;
        let mut invariants = Invariants::new(&cluster)?;
        let report = sequences::run_sequence(&mut cluster, &mut invariants, &edits)?;
        prop_assert_eq!(report.edits, 10);
    }

    #[test]
    fn the_same_on_the_kits_store(edits in sequences::sequence(10)) {
        let mut store = StoreLoop::new(strategies::store()?, ());
        let mut invariants = Invariants::new(&store)?;
        sequences::run_sequence(&mut store, &mut invariants, &edits)?;
    }
}

/// The first finding of the sequences: a route removed from a Gateway the crate does not
/// accept (it names no configuration) changes only its listener's `attachedRoutes`, and the
/// status write that says so was called idle by the kit's `no-idle-write`, written before
/// the listener status existed (SPEC revision 5). The check now counts the listeners.
#[test]
fn a_route_removed_from_a_refused_gateway_rewrites_its_listener_status_only() {
    use gateway_reconcile::testing::sequences::Edit;
    let mut cluster = strategies::cluster().unwrap();
    let mut invariants = Invariants::new(&cluster).unwrap();
    sequences::run_sequence(
        &mut cluster,
        &mut invariants,
        &[Edit::ParametersRef(false), Edit::Routes(0)],
    )
    .unwrap_or_else(|v| panic!("{v}"));
    let listeners = &cluster.gateway()["status"]["listeners"];
    assert_eq!(listeners[0]["attachedRoutes"], 0, "{listeners}");
}
