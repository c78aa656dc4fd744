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

mod common;

use common::{
    edited, elements, input_elements, parse, realistic, realistic_with, reconcile,
    scaled_configuration, scaled_routes, scaled_template,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gateway_reconcile::{Settings, WriteOutcome};
use std::hint::black_box;

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

criterion_group!(benches, bench, scaling, input_size, labels);
criterion_main!(benches);
