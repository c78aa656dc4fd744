//! Reconcile cost against the cost of reading its own inputs from JSON, side by side.
//!
//! `cargo bench --bench reconcile`: compare `parse_inputs` with `steady_state` (plan +
//! settle, action None, no status write) and `update_path` (GatewayConfiguration edited,
//! Update planned, settled Applied). Report ratios from one run: the machine is noisy.
//!
//! The `scaling` group runs both paths over templates with 1×, 10× and 100× the containers,
//! env vars and volumes; its throughput is in template elements, so the per-element cost
//! can be compared across sizes.
//!
//! The `input_size` group runs the steady-state reconcile (plan + settle, nothing to
//! write) over inputs grown 1× to 1,000×, through `plan` as a controller calls it:
//! `configuration/Kx` with a GatewayConfiguration of K× the verticalScaling entries (the
//! subnets and network attachments grow only to their CRD bounds, 2 and 10), its
//! throughput in those elements (subnets, attachments and entries); `routes/Kx` with 5·K
//! L34Routes, its throughput in routes. A per-element cost that grows with the size (a
//! pairwise loop in validation or in the addresses) shows between 100× and 1,000×, where
//! the grown input outweighs the rest of the reconcile.
//!
//! The `labels` group runs the update path with 100 to 10,000 template labels the observed
//! Deployment lacks; its throughput is in labels.
//!
//! The `doubling` group doubles one dimension of the input at a time and runs the same
//! work at size N and 2N (issue #45): `listeners`, `routes`, `entries` (each listener's
//! `matchLabels` selector) and `namespaces` (those the routes come from) on
//! `common::admission`'s Gateway, a steady reconcile through `plan`; `steps`, a scenario
//! file of alternating `patch` (one annotation of the GatewayConfiguration, set to a new
//! value) and `reconcile` steps read and run as `gateway-reconcile simulate` does, and
//! `growing_steps`, the same with each patch adding an annotation (the configuration every
//! reconcile reads grows with the steps). A cost linear in the doubled dimension shows as a
//! ratio of 2 (or less, with the fixed cost), a quadratic one as 4: compare the two sizes'
//! times from one run (`cargo bench --bench reconcile -- doubling`). It runs few samples,
//! briefly: the ratios, not the times, are what it is for.

mod common;

use common::{
    Sizes, admission, edited, elements, input_elements, parse, realistic, realistic_with,
    reconcile, scaled_configuration, scaled_routes, scaled_template,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gateway_reconcile::sim::scenario::Scenario;
use gateway_reconcile::{Settings, WriteOutcome};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let steady = realistic();
    let settings = Settings::default();
    assert!(
        reconcile(&settings, &steady, None).status.is_none(),
        "the bench input must be in steady state"
    );
    let edited = edited(realistic());
    let json = common::to_json(&steady);

    let mut group = c.benchmark_group("reconcile");
    group.bench_function("parse_inputs", |b| {
        b.iter(|| black_box(parse(black_box(&json))))
    });
    group.bench_function("steady_state", |b| {
        b.iter(|| black_box(reconcile(&settings, black_box(&steady), None)))
    });
    group.bench_function("update_path", |b| {
        b.iter(|| {
            black_box(reconcile(
                &settings,
                black_box(&edited),
                Some(&WriteOutcome::Applied),
            ))
        })
    });
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let settings = Settings::default();
    let mut group = c.benchmark_group("scaling");
    for k in [1, 10, 100] {
        let template = scaled_template(k);
        group.throughput(Throughput::Elements(elements(&template) as u64));
        let steady = realistic_with(template);
        assert!(
            reconcile(&settings, &steady, None).status.is_none(),
            "the {k}x input must be in steady state"
        );
        let updated = edited(realistic_with(steady.template.clone()));
        group.bench_function(format!("steady_state/{k}x"), |b| {
            b.iter(|| black_box(reconcile(&settings, black_box(&steady), None)))
        });
        group.bench_function(format!("update_path/{k}x"), |b| {
            b.iter(|| {
                black_box(reconcile(
                    &settings,
                    black_box(&updated),
                    Some(&WriteOutcome::Applied),
                ))
            })
        });
    }
    group.finish();
}

fn input_size(c: &mut Criterion) {
    let settings = Settings::default();
    let mut group = c.benchmark_group("input_size");
    for k in [1, 10, 100, 1000] {
        let configuration = scaled_configuration(k);
        let routes = scaled_routes(k);
        for (what, inputs) in [("configuration", &configuration), ("routes", &routes)] {
            assert!(
                reconcile(&settings, inputs, None).status.is_none(),
                "the {k}x {what} input must be in steady state"
            );
        }
        group.throughput(Throughput::Elements(input_elements(&configuration) as u64));
        group.bench_function(format!("configuration/{k}x"), |b| {
            b.iter(|| black_box(reconcile(&settings, black_box(&configuration), None)))
        });
        group.throughput(Throughput::Elements(routes.routes.len() as u64));
        group.bench_function(format!("routes/{k}x"), |b| {
            b.iter(|| black_box(reconcile(&settings, black_box(&routes), None)))
        });
    }
    group.finish();
}

/// The update path with a template whose labels (metadata and pod template) the observed
/// Deployment lacks: every label is layered in. Throughput is in labels, so a per-label cost
/// that grows with their number (an insert per key into an exact-length object) shows.
fn labels(c: &mut Criterion) {
    let settings = Settings::default();
    let mut group = c.benchmark_group("labels");
    for n in [100, 1_000, 10_000] {
        let mut inputs = realistic();
        let labels: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| (format!("example.com/l{i}"), serde_json::Value::from("v")))
            .collect();
        let labels = gateway_reconcile::wire::tree::Value::from(serde_json::Value::Object(labels));
        inputs.template.object["metadata"]["labels"] = labels.clone();
        inputs.template.object["spec"]["template"]["metadata"]["labels"] = labels;
        group.throughput(Throughput::Elements(2 * n as u64));
        group.bench_function(format!("update_path/{n}"), |b| {
            b.iter(|| {
                black_box(reconcile(
                    &settings,
                    black_box(&inputs),
                    Some(&WriteOutcome::Applied),
                ))
            })
        });
    }
    group.finish();
}

/// Each dimension doubled alone, from these sizes (the other dimensions stay at them):
/// half the CRD's 64 listeners, 500 routes, 32 selector entries, 8 namespaces, 250 steps.
const BASE: Sizes = Sizes {
    listeners: 32,
    routes: 500,
    entries: 32,
    namespaces: 8,
};
const BASE_STEPS: usize = 250;

fn doubling(c: &mut Criterion) {
    let settings = Settings::default();
    let mut group = c.benchmark_group("doubling");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    type Grow = fn(Sizes, usize) -> Sizes;
    let dimensions: [(&str, usize, Grow); 4] = [
        ("listeners", BASE.listeners, |s, n| Sizes {
            listeners: n,
            ..s
        }),
        ("routes", BASE.routes, |s, n| Sizes { routes: n, ..s }),
        ("entries", BASE.entries, |s, n| Sizes { entries: n, ..s }),
        ("namespaces", BASE.namespaces, |s, n| Sizes {
            namespaces: n,
            ..s
        }),
    ];
    for (dimension, base, grow) in dimensions {
        for n in [base, 2 * base] {
            let inputs = admission(grow(BASE, n));
            assert!(
                reconcile(&settings, &inputs, None).status.is_none(),
                "the {dimension} {n} input must be in steady state"
            );
            group.bench_function(format!("{dimension}/{n}"), |b| {
                b.iter(|| black_box(reconcile(&settings, black_box(&inputs), None)))
            });
        }
    }
    for (dimension, growing) in [("steps", false), ("growing_steps", true)] {
        for n in [BASE_STEPS, 2 * BASE_STEPS] {
            let text = steps_scenario(n, growing);
            let report = Scenario::from_json(&text).unwrap().into_report();
            assert!(report.failures.is_empty(), "{:?}", report.failures);
            group.bench_function(format!("{dimension}/{n}"), |b| {
                b.iter(|| {
                    let scenario = Scenario::from_json(black_box(&text)).unwrap();
                    black_box(scenario.into_report())
                })
            });
        }
    }
    group.finish();
}

/// A scenario file of `steps` steps, alternating a one-annotation `patch` of the
/// GatewayConfiguration and a `reconcile` (the first creates the LB Deployment, the others
/// find it in steady state: an annotation is no change of `spec`). Each patch sets the same
/// annotation to a new value, or, `growing`, adds one.
fn steps_scenario(steps: usize, growing: bool) -> String {
    let steps: Vec<serde_json::Value> = (0..steps)
        .map(|i| {
            let key = match growing {
                true => format!("a{i}"),
                false => "a".to_owned(),
            };
            match i % 2 {
                0 => serde_json::json!({"patch": {"configuration":
                    {"metadata": {"annotations": {key: format!("v{i}")}}}}}),
                _ => serde_json::json!({"reconcile": {}}),
            }
        })
        .collect();
    serde_json::json!({
        "objects": {
            "gatewayClass": {"metadata": {"name": "meridio"},
                "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}},
            "gateway": {"metadata": {"name": "gw", "namespace": "red", "uid": "u", "generation": 1},
                "spec": {"gatewayClassName": "meridio",
                    "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}],
                    "infrastructure": {"parametersRef": {"group": "meridio-2.nordix.org",
                        "kind": "GatewayConfiguration", "name": "gwconf"}}}},
            "configuration": {"metadata": {"name": "gwconf", "namespace": "red", "generation": 1},
                "spec": {"networkAttachments": [{"type": "NAD", "nad": {"name": "v",
                    "namespace": "red", "interface": "ext-vlan0"}}],
                    "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}
        },
        "steps": steps
    })
    .to_string()
}

criterion_group!(benches, bench, scaling, input_size, labels, doubling);
criterion_main!(benches);
