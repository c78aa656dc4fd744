//! Unit tests of a reconcile on the simulated cluster.

use std::time::Duration;

use serde_json::json;

use crate::outcome::WriteOutcome;
use crate::sim::cluster::store::typed;
use crate::sim::cluster::tests::*;
use crate::sim::cluster::*;
use crate::wire::Gateway;

#[test]
fn reconcile_writes_once_then_settles_with_no_writes() {
    let mut c = meridio();
    let first = c.reconcile().unwrap();
    assert_eq!(first.action, WriteKind::Create);
    assert_eq!(first.outcome, Some(WriteOutcome::Applied));
    assert!(first.status_written);
    assert_eq!(first.status_patch_problem, None);
    assert_eq!(c.deployment().unwrap()["metadata"]["generation"], 1);
    c.rollout(RolloutState::Complete).unwrap();
    assert!(
        c.reconcile().unwrap().status_written,
        "the initializing note goes"
    );
    for _ in 0..20 {
        c.advance(Duration::from_secs(60)).unwrap();
        let r = c.reconcile().unwrap();
        assert_eq!((r.action, r.status_written), (WriteKind::None, false));
    }
    assert_eq!(c.deployment_writes(), 1);
    assert_eq!(c.applied_deployment_writes(), 1);
    assert_eq!(c.status_writes(), 2);
    let gw = typed::<Gateway>(Kind::Gateway, c.gateway()).unwrap();
    assert_eq!(gw.status.conditions.len(), 3);
}

#[test]
fn failed_writes_are_counted_and_leave_the_deployment_alone() {
    let mut c = meridio();
    c.reconcile().unwrap();
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    let before = c.deployment().cloned();
    let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
    c.fail_writes(2, e503.clone());
    for _ in 0..2 {
        let r = c.reconcile().unwrap();
        assert_eq!(r.action, WriteKind::Update);
        assert_eq!(r.outcome.as_ref(), Some(&e503));
        assert!(!r.drift.is_empty());
    }
    assert_eq!(c.deployment().cloned(), before);
    let r = c.reconcile().unwrap();
    assert_eq!(r.outcome, Some(WriteOutcome::Applied));
    assert_eq!(c.deployment().unwrap()["spec"]["replicas"], 3);
    assert_eq!(c.deployment_writes(), 4);
    assert_eq!(c.applied_deployment_writes(), 2);
}

#[test]
fn a_deployment_of_another_name_is_not_read_as_the_lb_deployment() {
    // The driver asks for the Deployment of the LB name: one of another name is not it.
    let mut c = meridio();
    c.patch(
        Kind::Deployment,
        &json!({"metadata": {"name": "not-the-lb", "namespace": "red"}, "spec": {"replicas": 1}}),
    )
    .unwrap();
    let template = c.template().clone();
    let record = c.reconcile().unwrap();
    assert_eq!(record.action, WriteKind::Create);
    assert_eq!(c.template(), &template);
}

#[test]
fn a_reconcile_gives_the_template_back_and_keeps_the_deployment_it_wrote() {
    let mut c = meridio();
    let template = c.template().clone();
    assert_eq!(c.reconcile().unwrap().outcome, Some(WriteOutcome::Applied));
    assert_eq!(c.template(), &template);
    let written = c.deployment().cloned().unwrap();
    assert_eq!(written["metadata"]["name"], "sllbr-gw");
    // Steady state: the stored Deployment is lent to the plan and comes back unchanged.
    let r = c.reconcile().unwrap();
    assert_eq!(r.action, WriteKind::None);
    assert_eq!(c.deployment(), Some(&written));
    assert_eq!(c.template(), &template);
}
