//! Model-based property test: random schedules of edits, faults, rollouts, clock advances and
//! restarts, driven through the simulated cluster. After every reconcile the status must tell
//! the truth about the stored Deployment, and the bookkeeping rules must hold.
//!
//! `cargo test --test model` runs a modest number of cases; set `MODEL_CASES` (e.g.
//! `MODEL_CASES=5000`) for a long run.

use std::time::Duration;

use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, ReconcileRecord, RolloutState};
use gateway_reconcile::wire::{
    Condition, Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route,
};
use gateway_reconcile::{
    DeploymentWrite, FailureClass, Plan, Settings, Settlement, Snapshot, WriteOutcome, plan,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const APPLIED: &str = "meridio-2.nordix.org/ConfigurationApplied";
const DEGRADED: &str = "meridio-2.nordix.org/Degraded";
const GENERATION_KEY: &str = "meridio-2.nordix.org/gatewayconfiguration-generation";
const OURS: &str = "meridio-2.nordix.org/gateway-controller";

#[derive(Debug, Clone)]
enum Op {
    Reconcile,
    GatewayEdit(u8),
    ConfigurationEdit(u8),
    ConfigurationInvalid,
    ConfigurationFixed,
    ClassOther,
    ClassOurs,
    DeploymentEdit,
    DeploymentDelete,
    Autoscale(u8),
    Fail(u8, u32),
    Rollout(u8),
    Advance(u32),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Reconcile),
        1 => any::<u8>().prop_map(Op::GatewayEdit),
        2 => any::<u8>().prop_map(Op::ConfigurationEdit),
        1 => Just(Op::ConfigurationInvalid),
        1 => Just(Op::ConfigurationFixed),
        1 => Just(Op::ClassOther),
        1 => Just(Op::ClassOurs),
        1 => Just(Op::DeploymentEdit),
        1 => Just(Op::DeploymentDelete),
        1 => any::<u8>().prop_map(Op::Autoscale),
        2 => (0u8..6, 1u32..6).prop_map(|(c, n)| Op::Fail(c, n)),
        1 => (0u8..3).prop_map(Op::Rollout),
        2 => (1u32..400).prop_map(Op::Advance),
        1 => Just(Op::Restart),
    ]
}

fn failure(class: u8) -> WriteOutcome {
    match class {
        0 => WriteOutcome::from_parts(Some(409), "Conflict", "the object has been modified"),
        1 => WriteOutcome::from_parts(Some(409), "AlreadyExists", "already exists"),
        2 => WriteOutcome::from_parts(Some(404), "NotFound", "not found"),
        3 => WriteOutcome::from_parts(Some(422), "Invalid", "spec: Invalid value"),
        4 => WriteOutcome::from_parts(
            Some(503),
            "ServiceUnavailable",
            "etcdserver: request timed out",
        ),
        _ => WriteOutcome::from_parts(None, "", "connection refused"),
    }
}

fn objects() -> Objects {
    Objects {
        gateway_class: Some(
            json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": OURS}}),
        ),
        gateway: json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
            "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
            "status": {"conditions": [{"type": "example.com/Foreign", "status": "True", "observedGeneration": 1,
                "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Foreign", "message": "not ours"}]}
        }),
        configuration: Some(json!({
            "metadata": {"name": "conf", "namespace": "ns", "generation": 1},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
                     "horizontalScaling": {"replicas": 2, "enforceReplicas": false}}
        })),
        deployment: None,
        template: None,
        routes: vec![parse(&json!({"metadata": {"name": "r", "namespace": "ns"},
                            "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}}))],
    }
}

fn settings() -> Settings {
    Settings {
        degraded_after: Duration::from_secs(120),
        ..Settings::default()
    }
}

fn find<'a>(conditions: &'a [Condition], t: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == t)
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap()
}

/// Plans on the cluster's current state without writing anything: the write it asks for.
fn fresh_write(cluster: &Cluster) -> Option<Option<DeploymentWrite>> {
    let gateway: Gateway = parse(cluster.gateway());
    let class: Option<GatewayClass> = cluster.gateway_class().map(parse);
    let configuration: Option<GatewayConfiguration> = cluster.configuration().map(parse);
    let deployment: Option<Deployment> = cluster.deployment().map(parse);
    let template: Deployment = parse(cluster.template());
    let routes: Vec<L34Route> = cluster.routes().to_vec();
    let settings = cluster.settings().clone();
    let snapshot = Snapshot::new(&gateway, &template)
        .with_gateway_class(class.as_ref())
        .with_configuration(configuration.as_ref())
        .with_deployment(deployment.as_ref())
        .with_routes(&routes);
    let first = plan(&settings, snapshot, cluster.now()).ok()?;
    // Determinism: the same snapshot and time give the same plan and settlement.
    let second = plan(&settings, snapshot, cluster.now()).ok()?;
    assert_eq!(first.write(), second.write(), "plan is deterministic");
    let write = first.write().cloned();
    let settle = |p: Plan<'_>| -> Settlement {
        match p {
            Plan::Write(pending) => pending.settle(WriteOutcome::Applied),
            Plan::Settled(settlement) => settlement,
        }
    };
    assert_eq!(settle(first), settle(second), "settle is deterministic");
    Some(write)
}

struct Checker {
    before: Vec<Condition>,
}

impl Checker {
    fn check(&mut self, cluster: &Cluster, step: &ReconcileRecord) -> Result<(), TestCaseError> {
        let gateway: Gateway = parse(cluster.gateway());
        let generation = gateway.metadata.generation.unwrap();
        let after = &gateway.status.conditions;
        let ours = cluster
            .gateway_class()
            .is_some_and(|c| c["spec"]["controllerName"] == OURS);

        // Bookkeeping.
        prop_assert!(after.len() <= 8);
        prop_assert_eq!(
            &after[0].type_,
            "example.com/Foreign",
            "foreign condition in place"
        );
        prop_assert_eq!(
            &after[0],
            &self.before[0],
            "foreign condition byte-identical"
        );
        for c in after {
            let owned = ["Accepted", "Programmed", APPLIED, DEGRADED].contains(&c.type_.as_str());
            if !owned {
                continue;
            }
            // Not ours: Programmed is left as it was (SPEC §3 step 2).
            if step.status_written && ours {
                prop_assert_eq!(
                    c.observed_generation,
                    Some(generation),
                    "{} observedGeneration",
                    &c.type_
                );
            }
            prop_assert!(
                gateway_reconcile::conditions::is_valid_reason(&c.reason),
                "{}",
                &c.reason
            );
            prop_assert!(gateway_reconcile::conditions::is_valid_type(&c.type_));
            prop_assert!(c.message.chars().count() <= 32768);
            prop_assert!(c.last_transition_time.parse::<jiff::Timestamp>().is_ok());
            if let Some(b) = find(&self.before, &c.type_) {
                if b.status == c.status {
                    prop_assert_eq!(
                        &b.last_transition_time,
                        &c.last_transition_time,
                        "{} ltt moved",
                        &c.type_
                    );
                }
            }
        }
        let programmed = find(after, "Programmed");
        let applied = find(after, APPLIED);
        let degraded = find(after, DEGRADED);

        // No flapping: a transient or conflicting update never turns Programmed False.
        let was_programmed = find(&self.before, "Programmed").is_some_and(|c| c.status == "True");
        if was_programmed && step.action.as_str() == "Update" {
            if let Some(class) = step.outcome.as_ref().and_then(WriteOutcome::class) {
                if matches!(class, FailureClass::Transient | FailureClass::Conflict) {
                    prop_assert_eq!(
                        programmed.map(|c| c.status.as_str()),
                        Some("True"),
                        "flapped on {:?}",
                        class
                    );
                }
            }
        }

        // Degraded: only while True, only with Programmed True; ApplyFailing not too early.
        if let Some(d) = degraded {
            prop_assert_eq!(&d.status, "True");
            prop_assert_eq!(programmed.map(|c| c.status.as_str()), Some("True"));
            // Raised by transient failures; once True it may take this reason at any time.
            if d.reason == "ApplyFailing" && find(&self.before, DEGRADED).is_none() {
                let since: jiff::Timestamp = applied.unwrap().last_transition_time.parse().unwrap();
                let due = since + jiff::SignedDuration::from_secs(120);
                prop_assert!(cluster.now() >= due, "ApplyFailing before degradedAfter");
            }
        }

        // Degraded never flaps while the gap lasts: True before, it stays True (same
        // lastTransitionTime) until ConfigurationApplied is True or Programmed turns False.
        let degraded_before = find(&self.before, DEGRADED);
        let programmed_true = programmed.is_some_and(|c| c.status == "True");
        let applied_true = applied.is_some_and(|c| c.status == "True");
        if let (Some(b), true) = (degraded_before, ours && programmed_true && !applied_true) {
            prop_assert_eq!(
                degraded.map(|d| (d.status.as_str(), d.last_transition_time.as_str())),
                Some(("True", b.last_transition_time.as_str())),
                "Degraded flapped"
            );
        }

        // Honesty, for an accepted Gateway whose Deployment is ours.
        let accepted = find(after, "Accepted").is_some_and(|c| c.status == "True");
        if ours && accepted {
            let stored = cluster.deployment();
            let wanted = cluster
                .configuration()
                .and_then(|c| c["metadata"]["generation"].as_i64());
            let carried = stored
                .and_then(|d| d["metadata"]["annotations"][GENERATION_KEY].as_str())
                .and_then(|g| g.parse::<i64>().ok());
            let collision = programmed.is_some_and(|p| p.message.contains("name collision"));
            if !collision {
                let no_drift = matches!(fresh_write(cluster), Some(None));
                let truth = stored.is_some() && carried == wanted && no_drift;
                prop_assert_eq!(
                    applied.map(|c| c.status == "True"),
                    Some(truth),
                    "ConfigurationApplied must be True exactly when the Deployment carries generation {:?} with no drift (carries {:?}, drift-free {})",
                    wanted,
                    carried,
                    no_drift
                );
                if let (Some(p), Some(n)) = (programmed.filter(|p| p.status == "True"), carried) {
                    prop_assert!(
                        p.message.starts_with(&format!(
                            "LB Deployment reconciled with GatewayConfiguration generation {n}"
                        )),
                        "Programmed must name the carried generation {}: {}",
                        n,
                        &p.message
                    );
                }
                if stored.is_none() {
                    prop_assert_ne!(
                        programmed.map(|c| c.status.as_str()),
                        Some("True"),
                        "Programmed without a Deployment"
                    );
                }
            }
        }
        self.before = after.clone();
        Ok(())
    }
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let t0: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut cluster = Cluster::new(settings(), t0, objects()).unwrap();
    let mut checker = Checker {
        before: parse::<Gateway>(cluster.gateway()).status.conditions,
    };
    for op in ops {
        match op {
            Op::Reconcile => {
                let step = cluster.reconcile().unwrap();
                checker.check(&cluster, &step)?;
            }
            Op::GatewayEdit(n) => cluster
                .patch(
                    Kind::Gateway,
                    &json!({"spec": {"infrastructure": {"labels": {"edit": n.to_string()}}}}),
                )
                .unwrap(),
            Op::ConfigurationEdit(n) => {
                if cluster.configuration().is_some() {
                    cluster
                        .patch(Kind::Configuration, &json!({"spec": {"horizontalScaling": {"replicas": 1 + n % 5, "enforceReplicas": n % 2 == 0}}}))
                        .unwrap();
                }
            }
            Op::ConfigurationInvalid => {
                if cluster.configuration().is_some() {
                    cluster
                        .patch(Kind::Configuration, &json!({"spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "0.0.0.0/0"}]}}))
                        .unwrap();
                }
            }
            Op::ConfigurationFixed => {
                if cluster.configuration().is_some() {
                    cluster
                        .patch(Kind::Configuration, &json!({"spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}))
                        .unwrap();
                }
            }
            Op::ClassOther => cluster
                .patch(
                    Kind::GatewayClass,
                    &json!({"spec": {"controllerName": "example.com/other"}}),
                )
                .unwrap(),
            Op::ClassOurs => cluster
                .patch(
                    Kind::GatewayClass,
                    &json!({"spec": {"controllerName": OURS}}),
                )
                .unwrap(),
            Op::DeploymentEdit => {
                if cluster.deployment().is_some() {
                    cluster
                        .patch(Kind::Deployment, &json!({"spec": {"template": {"spec": {"serviceAccountName": "hacked"}}}}))
                        .unwrap();
                }
            }
            Op::DeploymentDelete => {
                if cluster.deployment().is_some() {
                    cluster.delete(Kind::Deployment).unwrap();
                }
            }
            Op::Autoscale(n) => {
                if cluster.deployment().is_some() {
                    cluster
                        .patch(Kind::Deployment, &json!({"spec": {"replicas": 1 + n % 7}}))
                        .unwrap();
                }
            }
            Op::Fail(class, count) => cluster.fail_writes(*count, failure(*class)),
            Op::Rollout(r) => {
                if cluster.deployment().is_some() {
                    let r = [
                        RolloutState::Complete,
                        RolloutState::Progressing,
                        RolloutState::Stalled,
                    ][*r as usize];
                    cluster.rollout(r).unwrap();
                }
            }
            Op::Advance(secs) => cluster
                .advance(Duration::from_secs(u64::from(*secs)))
                .unwrap(),
            // The crate keeps no state, so a restarted controller is one that plans on the
            // same snapshot later: rebuild the cluster from its own objects, so nothing but
            // what the API server holds carries over.
            Op::Restart => {
                let objects = Objects {
                    gateway_class: cluster.gateway_class().cloned(),
                    gateway: cluster.gateway().clone(),
                    configuration: cluster.configuration().cloned(),
                    deployment: cluster.deployment().cloned(),
                    template: Some(cluster.template().clone()),
                    routes: cluster.routes().to_vec(),
                };
                // Injected faults are not objects: they do not survive the rebuild.
                cluster = Cluster::new(settings(), cluster.now(), objects).unwrap();
            }
        }
    }
    // Convergence: faults stop, the configuration is valid and ours.
    cluster.fail_writes(0, WriteOutcome::Applied);
    cluster
        .patch(
            Kind::GatewayClass,
            &json!({"spec": {"controllerName": OURS}}),
        )
        .unwrap();
    if cluster.configuration().is_some() {
        cluster
            .patch(Kind::Configuration, &json!({"spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}))
            .unwrap();
    }
    for _ in 0..3 {
        let step = cluster.reconcile().unwrap();
        checker.check(&cluster, &step)?;
    }
    if cluster.configuration().is_none() {
        return Ok(());
    }
    cluster.rollout(RolloutState::Complete).unwrap();
    let step = cluster.reconcile().unwrap();
    checker.check(&cluster, &step)?;
    let conditions = parse::<Gateway>(cluster.gateway()).status.conditions;
    prop_assert_eq!(
        find(&conditions, APPLIED).map(|c| c.status.as_str()),
        Some("True")
    );
    prop_assert_eq!(
        find(&conditions, "Programmed").map(|c| c.status.as_str()),
        Some("True")
    );
    prop_assert!(find(&conditions, DEGRADED).is_none());
    let (deployment_writes, status_writes) = (cluster.deployment_writes(), cluster.status_writes());
    for _ in 0..3 {
        let step = cluster.reconcile().unwrap();
        checker.check(&cluster, &step)?;
    }
    prop_assert_eq!(
        cluster.deployment_writes(),
        deployment_writes,
        "converged: no Deployment writes"
    );
    prop_assert_eq!(
        cluster.status_writes(),
        status_writes,
        "converged: no status writes"
    );
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
    fn the_status_tells_the_truth_under_any_schedule(ops in proptest::collection::vec(op(), 1..60)) {
        run(&ops)?;
    }
}
