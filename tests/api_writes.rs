//! What the crate makes the controller write, counted through the simulated cluster: never
//! more than the state demands.

use std::time::Duration;

use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, RolloutState};
use gateway_reconcile::{Requeue, Settings, WriteOutcome};
use serde_json::json;

fn cluster() -> Cluster {
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "meridio"},
                                   "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}).into()),
        gateway: json!({
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }).into(),
        configuration: Some(json!({
            "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
            "spec": {
                "networkAttachments": [{"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}}],
                "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                                    {"attachmentType": "NAD", "cidr": "fd00:100::/64"}],
                "horizontalScaling": {"replicas": 2, "enforceReplicas": true},
                "verticalScaling": {"containers": [{"name": "router", "enforceResources": true,
                    "resources": {"requests": {"cpu": "0.5", "memory": "1024Mi"}}}]}
            }
        }).into()),
        deployment: None,
        template: None,
        routes: vec![
            serde_json::from_value(json!({"metadata": {"name": "r", "namespace": "ns"},
                "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}}))
            .unwrap(),
        ],
        namespaces: Default::default(),
    };
    let t0 = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut c = Cluster::new(Settings::default(), t0, objects).unwrap();
    c.reconcile().unwrap();
    c.rollout(RolloutState::Complete).unwrap();
    c.reconcile().unwrap();
    c
}

fn counts(c: &Cluster) -> (u64, u64) {
    (c.deployment_writes(), c.status_writes())
}

#[test]
fn steady_state_writes_nothing_over_100_reconciles() {
    let mut c = cluster();
    let before = counts(&c);
    for _ in 0..100 {
        c.advance(Duration::from_secs(30)).unwrap();
        c.reconcile().unwrap();
    }
    assert_eq!(counts(&c), before);
}

#[test]
fn one_configuration_edit_costs_one_deployment_write_and_one_status_write() {
    let mut c = cluster();
    let (d, s) = counts(&c);
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    for _ in 0..5 {
        c.reconcile().unwrap();
    }
    assert_eq!(counts(&c), (d + 1, s + 1));
}

#[test]
fn twenty_transient_failures_cost_at_most_three_status_writes() {
    let mut c = cluster();
    let (_, s) = counts(&c);
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    c.fail_writes(
        20,
        WriteOutcome::from_parts(
            Some(503),
            "ServiceUnavailable",
            "etcdserver: request timed out",
        ),
    );
    let mut degraded = false;
    for _ in 0..21 {
        let step = c.reconcile().unwrap();
        degraded |= step
            .conditions
            .iter()
            .any(|c| c.type_ == "meridio-2.nordix.org/Degraded");
        match step.requeue {
            Requeue::After(wait) => c.advance(wait).unwrap(),
            Requeue::Immediately | Requeue::AwaitChange => {
                c.advance(Duration::from_secs(1)).unwrap()
            }
        }
    }
    assert!(degraded, "20 backed-off retries outlast degradedAfter");
    let step = c.reconcile().unwrap();
    assert!(
        step.conditions
            .iter()
            .all(|c| c.type_ != "meridio-2.nordix.org/Degraded"),
        "recovered"
    );
    assert!(
        c.status_writes() - s <= 3,
        "{} status writes: first failure, Degraded, recovery",
        c.status_writes() - s
    );
}

#[test]
fn a_rollout_finishing_costs_at_most_one_status_write() {
    let mut c = cluster();
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    c.reconcile().unwrap();
    c.rollout(RolloutState::Progressing).unwrap();
    c.reconcile().unwrap();
    let (d, s) = counts(&c);
    c.rollout(RolloutState::Complete).unwrap();
    for _ in 0..5 {
        c.reconcile().unwrap();
    }
    assert_eq!(c.deployment_writes(), d);
    assert!(c.status_writes() - s <= 1);
}
