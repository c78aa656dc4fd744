//! Reconcile cost against the cost of reading its own inputs from JSON, side by side.
//!
//! `cargo bench --bench reconcile`: compare `parse_inputs` with `steady_state` (plan +
//! settle, action None, no status write) and `update_path` (GatewayConfiguration edited,
//! Update planned, settled Applied). Report ratios from one run: the machine is noisy.

use criterion::{Criterion, criterion_group, criterion_main};
use gateway_reconcile::sim::defaulting::apply_server_defaults;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
use gateway_reconcile::{Action, Settings, Snapshot, WriteOutcome, plan, template};
use serde_json::json;
use std::hint::black_box;

struct Inputs {
    class: GatewayClass,
    gateway: Gateway,
    configuration: GatewayConfiguration,
    deployment: Deployment,
    template: Deployment,
    routes: Vec<L34Route>,
}

struct Json {
    class: String,
    gateway: String,
    configuration: String,
    deployment: String,
    template: String,
    routes: String,
}

fn now() -> jiff::Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

/// The realistic Gateway: default template, two NADs, dual-stack subnets, vertical scaling on
/// both containers, three foreign conditions, five L34Routes, server-defaulted Deployment.
fn realistic() -> Inputs {
    let class = serde_json::from_value(json!({
        "metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
    }))
    .unwrap();
    let mut gateway: Gateway = serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 3},
        "spec": {"gatewayClassName": "meridio", "infrastructure": {
            "labels": {"team": "net"},
            "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
        "status": {"conditions": [
            {"type": "example.com/A", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "A", "message": "a"},
            {"type": "example.com/B", "status": "False", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "B", "message": "b"},
            {"type": "example.com/C", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "C", "message": "c"}
        ]}
    }))
    .unwrap();
    let configuration: GatewayConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
        "spec": {
            "networkAttachments": [
                {"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}},
                {"type": "NAD", "nad": {"name": "vlan-200", "namespace": "infra", "interface": "net2"}}
            ],
            "internalSubnets": [
                {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
            ],
            "horizontalScaling": {"replicas": 2, "enforceReplicas": true},
            "verticalScaling": {"containers": [
                {"name": "loadbalancer", "enforceResources": true,
                 "resources": {"requests": {"cpu": "0.5", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "1024Mi"}}},
                {"name": "router", "enforceResources": true,
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}
            ]}
        }
    }))
    .unwrap();
    let routes: Vec<L34Route> = (1..=5)
        .map(|i| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("r{i}"), "namespace": "ns"},
                "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": [format!("20.0.0.{i}/32")]}
            }))
            .unwrap()
        })
        .collect();
    let template = template::default_template();
    let settings = Settings::default();
    // Reach the steady state: create, default, settle the status.
    let (deployment, status) = {
        let snap = Snapshot::new(&gateway, &template)
            .with_gateway_class(Some(&class))
            .with_configuration(Some(&configuration))
            .with_routes(&routes);
        let p = plan(&settings, snap, now()).unwrap();
        let Action::Create(mut d) = p.action().clone() else {
            panic!("create expected")
        };
        let s = p.settle(Some(&WriteOutcome::Applied));
        apply_server_defaults(&mut d);
        d.object["metadata"]["uid"] = json!("dep-uid");
        d.object["metadata"]["generation"] = json!(1);
        d.object.insert(
            "status".into(),
            json!({"observedGeneration": 1, "replicas": 2,
            "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}),
        );
        (d, s.status.unwrap())
    };
    gateway.status = status;
    let mut inputs = Inputs {
        class,
        gateway,
        configuration,
        deployment,
        template,
        routes,
    };
    // One more reconcile so the Programmed message reflects the finished rollout.
    let s = settle(&inputs, None);
    if let Some(status) = s {
        inputs.gateway.status = status;
    }
    inputs
}

fn settle(
    i: &Inputs,
    outcome: Option<&WriteOutcome>,
) -> Option<gateway_reconcile::wire::GatewayStatus> {
    let settings = Settings::default();
    let snap = Snapshot::new(&i.gateway, &i.template)
        .with_gateway_class(Some(&i.class))
        .with_configuration(Some(&i.configuration))
        .with_deployment(Some(&i.deployment))
        .with_routes(&i.routes);
    plan(&settings, snap, now()).unwrap().settle(outcome).status
}

fn to_json(i: &Inputs) -> Json {
    Json {
        class: serde_json::to_string(&i.class).unwrap(),
        gateway: serde_json::to_string(&i.gateway).unwrap(),
        configuration: serde_json::to_string(&i.configuration).unwrap(),
        deployment: serde_json::to_string(&i.deployment).unwrap(),
        template: serde_json::to_string(&i.template).unwrap(),
        routes: serde_json::to_string(&i.routes).unwrap(),
    }
}

fn parse(j: &Json) -> Inputs {
    Inputs {
        class: serde_json::from_str(&j.class).unwrap(),
        gateway: serde_json::from_str(&j.gateway).unwrap(),
        configuration: serde_json::from_str(&j.configuration).unwrap(),
        deployment: serde_json::from_str(&j.deployment).unwrap(),
        template: serde_json::from_str(&j.template).unwrap(),
        routes: serde_json::from_str(&j.routes).unwrap(),
    }
}

fn bench(c: &mut Criterion) {
    let steady = realistic();
    assert!(
        settle(&steady, None).is_none(),
        "the bench input must be in steady state"
    );
    let mut edited = realistic();
    edited.configuration.metadata.generation = Some(8);
    if let Some(h) = edited.configuration.spec.horizontal_scaling.as_mut() {
        h.replicas = Some(3);
    }
    let json = to_json(&steady);
    let settings = Settings::default();

    let mut group = c.benchmark_group("reconcile");
    group.bench_function("parse_inputs", |b| {
        b.iter(|| black_box(parse(black_box(&json))))
    });
    group.bench_function("steady_state", |b| {
        b.iter(|| {
            let i = black_box(&steady);
            let snap = Snapshot::new(&i.gateway, &i.template)
                .with_gateway_class(Some(&i.class))
                .with_configuration(Some(&i.configuration))
                .with_deployment(Some(&i.deployment))
                .with_routes(&i.routes);
            let p = plan(&settings, snap, now()).unwrap();
            black_box(p.settle(None))
        })
    });
    group.bench_function("update_path", |b| {
        b.iter(|| {
            let i = black_box(&edited);
            let snap = Snapshot::new(&i.gateway, &i.template)
                .with_gateway_class(Some(&i.class))
                .with_configuration(Some(&i.configuration))
                .with_deployment(Some(&i.deployment))
                .with_routes(&i.routes);
            let p = plan(&settings, snap, now()).unwrap();
            black_box(p.settle(Some(&WriteOutcome::Applied)))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
