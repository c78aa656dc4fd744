//! The test kit's rendering of one fault schedule, as an insta snapshot: a rollout, an edit
//! whose updates fail with 503 until `Degraded` appears, a recovery.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};
use gateway_reconcile::testing::{Run, schedule};

#[test]
fn a_fault_schedule_renders_as_a_timeline() {
    let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
    let schedule = [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::fail(10, WriteFailure::Unavailable),
        Op::Reconcile,
        Op::Advance(60),
        Op::Reconcile,
        Op::Advance(70),
        Op::Reconcile,
        Op::stop_failures(),
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::Reconcile,
    ];
    for op in &schedule {
        run.apply(op).unwrap();
    }
    let text = run.text();
    // Deterministic: the same schedule renders the same text.
    let mut again = Run::new(strategies::cluster().unwrap()).unwrap();
    for op in &schedule {
        again.apply(op).unwrap();
    }
    assert_eq!(text, again.text());
    insta::assert_snapshot!(text);
}

/// One settlement, rendered: an update of a drifted Deployment that hits a conflict.
#[test]
fn a_settlement_renders_with_its_action_and_drift() {
    use gateway_reconcile::testing::text;
    use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};
    use gateway_reconcile::{Plan, Snapshot, plan};

    let mut cluster = strategies::cluster().unwrap();
    let mut check = gateway_reconcile::testing::invariants::Invariants::new(&cluster).unwrap();
    for op in [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::DeploymentEdit,
    ] {
        schedule::apply(&mut cluster, &mut check, &op).unwrap();
    }
    let gateway: Gateway = serde_json::from_value(cluster.gateway().into()).unwrap();
    let class: GatewayClass =
        serde_json::from_value(cluster.gateway_class().unwrap().into()).unwrap();
    let configuration: GatewayConfiguration =
        serde_json::from_value(cluster.configuration().unwrap().into()).unwrap();
    let deployment: &Deployment = cluster.deployment().unwrap();
    let template: &Deployment = cluster.template();
    let snapshot = Snapshot::new(&gateway, template)
        .with_gateway_class(Some(&class))
        .with_configuration(Some(&configuration))
        .with_deployment(Some(deployment))
        .with_routes(cluster.routes());
    let Plan::Write(pending) = plan(cluster.settings(), snapshot, cluster.now()).unwrap() else {
        panic!("a drifted Deployment is written");
    };
    let (write, awaiting) = pending.into_write();
    let settlement = awaiting.settle(strategies::WriteFailure::Conflict.outcome());
    insta::assert_snapshot!(text::settlement(write.kind(), write.drift(), &settlement));
}
