//! A property test over two Gateways sharing their class's GatewayConfiguration: after each
//! edit of it in any sequence (the kit's valid configurations), reconciling both brings both
//! LB Deployments to the current generation, and both Gateways say so.
//!
//!     cargo run --example shared_configuration --features testing
use gateway_reconcile::conditions::{ConditionKind::ConfigurationApplied, ConditionTypes};
use gateway_reconcile::reconcile::{Driver, InMemory, ready};
use gateway_reconcile::testing::strategies;
use gateway_reconcile::{Settings, lookup, template};
use proptest::test_runner::{Config, TestRunner};
use proptest::{collection::vec, prelude::*};
use serde_json::{from_value, json};

fn main() {
    let settings = Settings::default();
    let (types, annotation) = (
        ConditionTypes::new(&settings).unwrap(),
        lookup::generation_annotation(&settings),
    );
    let mut objects = InMemory::new(template::default_template());
    let reference = json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf", "namespace": "ns"});
    objects.insert_class(from_value(json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": strategies::OURS, "parametersRef": reference}})).unwrap());
    for name in ["a", "b"] {
        objects.insert_gateway(from_value(json!({"metadata": {"name": name, "namespace": "ns", "uid": name, "generation": 1}, "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}})).unwrap());
    }
    // No regression file for an example (a test in a crate gets one next to its source).
    TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    })
    .run(&vec(strategies::valid_configuration(), 1..6), |edits| {
        let (driver, mut store) = (Driver::new(settings.clone()), objects.clone());
        for (generation, mut edit) in (1..).zip(edits) {
            edit["metadata"]["generation"] = json!(generation);
            store.insert_configuration(from_value(edit).unwrap());
            for name in ["a", "b"] {
                store.reconciling("ns", name);
                ready(driver.reconcile(&mut store, "2026-01-01T00:00:00Z".parse().unwrap()))
                    .unwrap()
                    .unwrap();
                let deployment = &store.deployments[&("ns".into(), format!("sllbr-{name}"))];
                prop_assert_eq!(
                    deployment.annotation(&annotation).map(str::to_owned),
                    Some(generation.to_string())
                );
                let conditions = &store.gateways[&("ns".into(), name.into())]
                    .status
                    .conditions;
                prop_assert_eq!(
                    types
                        .find(conditions, ConfigurationApplied)
                        .map(|c| c.status.as_str()),
                    Some("True")
                );
            }
        }
        Ok(())
    })
    .unwrap();
    println!("every sequence of shared configuration edits reached both Gateways");
}
