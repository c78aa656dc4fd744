//! Snapshots of the condition output for the main situations. Each snapshot was read and
//! checked against SPEC §6 before it was accepted.

mod common;

use common::*;
use gateway_reconcile::WriteOutcome;

fn with_foreign(mut w: World) -> World {
    w.gateway.status.conditions.insert(
        0,
        condition(
            "example.com/Inspected",
            "Inspected",
            "left alone",
            "2025-12-31T00:00:00Z",
        ),
    );
    w
}

#[test]
fn healthy() {
    let w = World::healthy();
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn configuration_edit_applied() {
    let mut w = World::healthy();
    w.edit_configuration();
    w.reconcile(at(30), |_| Some(WriteOutcome::Applied));
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn edit_failing_before_degraded_after() {
    let mut w = with_foreign(World::healthy());
    w.edit_configuration();
    w.reconcile(at(60), fail_503);
    w.reconcile(at(120), fail_503);
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn edit_failing_after_degraded_after() {
    let mut w = with_foreign(World::healthy());
    w.edit_configuration();
    w.reconcile(at(60), fail_503);
    w.reconcile(at(360), fail_503);
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn update_rejected() {
    let mut w = World::healthy();
    w.edit_configuration();
    w.reconcile(at(60), |_| {
        api_error(
            422,
            "Invalid",
            "Deployment.apps \"sllbr-gw\" is invalid: spec.replicas: Invalid value: -1",
        )
    });
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn name_collision() {
    let mut w = World::new();
    w.deployment = Some(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "sllbr-gw", "namespace": "ns", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "legacy", "uid": "x", "controller": true}]},
            "spec": {}
        }))
        .unwrap(),
    );
    w.reconcile(at(0), |_| None);
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn invalid_parameters() {
    let mut w = World::healthy();
    w.configuration.as_mut().unwrap().spec.internal_subnets[0].cidr = "0.0.0.0/0".into();
    w.reconcile(at(30), |_| None);
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn ownership_transfer() {
    let mut w = with_foreign(World::healthy());
    w.class = Some(class("example.com/other-controller"));
    w.reconcile(at(30), |_| None);
    insta::assert_json_snapshot!(w.conditions_json());
}

#[test]
fn stalled_rollout() {
    let mut w = World::healthy();
    w.rollout_stalled();
    w.reconcile(at(900), |_| None);
    insta::assert_json_snapshot!(w.conditions_json());
}
