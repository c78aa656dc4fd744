//! The test kit's generators say what they claim: valid configurations are accepted, invalid
//! ones are refused with their tagged message, foreign conditions survive a reconcile,
//! observed Deployments are server-defaulted with a rollout status, and write outcomes
//! cover every class.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::invariants::Invariants;
use gateway_reconcile::testing::strategies;
use gateway_reconcile::testing::{Cluster, Kind};
use gateway_reconcile::{FailureClass, WriteOutcome};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::Value;

fn condition<'a>(cluster: &'a Cluster, type_: &str) -> &'a gateway_reconcile::wire::tree::Value {
    cluster.gateway()["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&gateway_reconcile::wire::tree::Value::Null)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn valid_configurations_are_accepted(configuration in strategies::valid_configuration()) {
        let mut objects = strategies::objects();
        objects.configuration = Some(configuration.into());
        let mut cluster = Cluster::new(strategies::settings(), strategies::start(), objects)?;
        let mut check = Invariants::new(&cluster)?;
        let record = cluster.reconcile()?;
        check.check(&cluster, &record)?;
        prop_assert_eq!(&condition(&cluster, "Accepted")["status"], "True");
    }

    #[test]
    fn invalid_configurations_say_why((configuration, message) in strategies::invalid_configuration()) {
        let mut objects = strategies::objects();
        objects.configuration = Some(configuration.into());
        let mut cluster = Cluster::new(strategies::settings(), strategies::start(), objects)?;
        cluster.reconcile()?;
        let accepted = condition(&cluster, "Accepted");
        prop_assert_eq!(&accepted["status"], "False");
        prop_assert_eq!(&accepted["reason"], "InvalidParameters");
        let text = accepted["message"].as_str().unwrap_or_default();
        prop_assert!(text.contains(&message), "{:?} does not contain {:?}", text, message);
    }

    #[test]
    fn foreign_conditions_survive(gateway in strategies::gateway_with_foreign_conditions()) {
        let foreign = gateway["status"]["conditions"].clone();
        let mut objects = strategies::objects();
        objects.gateway = gateway.into();
        let mut cluster = Cluster::new(strategies::settings(), strategies::start(), objects)?;
        let mut check = Invariants::new(&cluster)?;
        let record = cluster.reconcile()?;
        check.check(&cluster, &record)?;
        let after: Vec<Value> = cluster.gateway()["status"]["conditions"]
            .as_array()
            .map(|cs| cs.iter().filter(|c| c["type"].as_str().is_some_and(|t| t.starts_with("example.com/"))).map(Value::from).collect())
            .unwrap_or_default();
        let before: Vec<Value> = foreign.as_array().map(|cs| cs.to_vec()).unwrap_or_default();
        prop_assert_eq!(after, before);
    }

    #[test]
    fn observed_deployments_are_as_the_server_returns_them(deployment in strategies::observed_deployment()) {
        let metadata = &deployment["metadata"];
        prop_assert!(metadata["uid"].is_string());
        prop_assert!(metadata["resourceVersion"].is_string());
        prop_assert!(metadata["creationTimestamp"].is_string());
        // Server-defaulted: the strategy is the API server's, not the template's.
        prop_assert!(deployment["spec"]["strategy"]["type"].is_string());
        prop_assert!(deployment["status"]["observedGeneration"].is_i64());
        // Stored back, it reconciles without a create.
        let mut cluster = strategies::cluster()?;
        cluster.patch(Kind::Deployment, &deployment)?;
        let record = cluster.reconcile()?;
        prop_assert_ne!(record.action.as_str(), "Create");
    }
}

#[test]
fn write_outcomes_cover_every_class() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = strategies::write_outcome();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..500 {
        let outcome = strategy.new_tree(&mut runner).unwrap().current();
        seen.insert(match outcome.class() {
            None if outcome == WriteOutcome::Applied => "applied",
            None => "other",
            Some(FailureClass::Conflict) => "conflict",
            Some(FailureClass::AlreadyExists) => "already-exists",
            Some(FailureClass::NotFound) => "not-found",
            Some(FailureClass::Rejected) => "rejected",
            Some(FailureClass::Transient) => "transient",
            Some(_) => "other",
        });
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [
            "already-exists",
            "applied",
            "conflict",
            "not-found",
            "rejected",
            "transient"
        ]
    );
}
