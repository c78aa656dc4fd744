//! A property test of two Gateways sharing a GatewayConfiguration in the kit's store: after
//! each edit of it (the kit's valid configurations, with new replicas: a new generation),
//! reconciling both brings both to the current generation, every invariant checked.
//!
//!     cargo run --example shared_configuration --features testing
use gateway_reconcile::testing::Kind::Configuration;
use gateway_reconcile::testing::{StoreLoop, invariants::Invariants, strategies};
use proptest::test_runner::{Config, FileFailurePersistence::Off, TestRunner};
use proptest::{collection::vec, prelude::*};
use serde_json::json;

fn main() {
    let mut store = strategies::store().unwrap();
    store.add(strategies::objects_of("other")).unwrap();
    let config = Config::with_failure_persistence(Off); // No regression file for an example.
    let edits = vec(strategies::valid_configuration(), 1..6);
    TestRunner::new(config)
        .run(&edits, |edits| {
            let mut toy = StoreLoop::new(store.clone(), ());
            let mut check = Invariants::new(&toy)?;
            toy.target("ns", "other")?;
            check.observe(&toy)?;
            for (generation, mut edit) in (2..).zip(edits) {
                edit["spec"]["horizontalScaling"]["replicas"] = json!(10 + generation);
                toy.store_mut().patch("ns", "gw", Configuration, &edit)?;
                let want = format!("ns/conf generation {generation} is applied");
                for name in ["gw", "other"] {
                    toy.target("ns", name)?;
                    let record = toy.reconcile_gateway("ns", name, check.now())?;
                    check.check(&toy, &record)?;
                    let applied = record.condition("ConfigurationApplied").map(|c| &c.message);
                    prop_assert!(applied.is_some_and(|m| m.contains(&want)), "{applied:?}");
                }
            }
            Ok(())
        })
        .unwrap();
    println!("every sequence of shared configuration edits reached both Gateways");
}
