//! Running scenarios on a backend: steps that fail, steps a backend cannot reproduce.

use jiff::Timestamp;
use serde_json::json;

use super::Scenario;

#[test]
fn steps_that_cannot_run_are_failures_and_the_run_goes_on() {
    let doc = json!({
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "template": {}},
        "steps": [{"rollout": "complete"}, {"delete": "configuration"}, {"advance": "1m"}]
    });
    let report = Scenario::from_value(&doc).unwrap().run();
    assert_eq!(report.failures.len(), 2);
    assert_eq!(report.failures[0].step, 1);
    assert_eq!(report.failures[0].what, "rollout");
    assert_eq!(
        report.failures[0].actual,
        "cannot roll out: there is no deployment"
    );
    assert_eq!(report.failures[1].step, 2);
    assert_eq!(report.timeline.len(), 3);
    assert_eq!(
        report.timeline[2].time,
        "2026-01-01T00:01:00Z".parse::<Timestamp>().unwrap()
    );
}

/// The simulated cluster, except that it cannot run the Deployment controller: as a real
/// API server without one.
struct NoRollouts(crate::sim::cluster::Cluster);

impl super::Backend for NoRollouts {
    type Error = crate::sim::cluster::ClusterError;

    fn create(
        &mut self,
        settings: &crate::Settings,
        objects: crate::sim::cluster::Objects,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        self.0.create(settings, objects, now)
    }

    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> Result<crate::sim::cluster::ReconcileReport, super::StepError<Self::Error>> {
        super::Backend::reconcile(&mut self.0, now)
    }

    fn patch(
        &mut self,
        kind: crate::sim::cluster::Kind,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::patch(&mut self.0, kind, patch, now)
    }

    fn delete(
        &mut self,
        kind: crate::sim::cluster::Kind,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::delete(&mut self.0, kind, now)
    }

    fn rollout(
        &mut self,
        _: crate::sim::cluster::RolloutState,
        _: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        Err(super::StepError::Skip("no Deployment controller".into()))
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &crate::WriteOutcome,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::fail_writes(&mut self.0, count, outcome)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&serde_json::Value>,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::mutate_writes(&mut self.0, patch, now)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::restart(&mut self.0, now)
    }

    fn read(
        &self,
        kind: crate::sim::cluster::Kind,
    ) -> Result<Option<serde_json::Value>, super::StepError<Self::Error>> {
        self.0.read(kind)
    }

    fn write_counts(&self) -> super::WriteCounts {
        self.0.write_counts()
    }
}

#[test]
fn a_step_the_backend_cannot_reproduce_skips_the_scenario_and_says_why() {
    let doc = json!({
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "template": {}},
        "steps": [{"advance": "1m"}, {"rollout": "complete"}, {"advance": "1m"}]
    });
    let scenario = Scenario::from_value(&doc).unwrap();
    let report = scenario.run_on(NoRollouts(crate::sim::cluster::Cluster::default()));
    assert!(!report.passed(), "a skipped scenario did not pass");
    assert!(report.failures.is_empty());
    assert_eq!(
        report.skipped,
        Some(super::Skipped {
            step: 2,
            why: "no Deployment controller".into()
        })
    );
    assert_eq!(
        report.timeline.len(),
        1,
        "the run stops at the skipped step"
    );
    let text = report.to_string();
    assert!(
        text.ends_with(
            "skipped at step 2: no Deployment controller\nevery expectation before the skip held"
        ),
        "{text}"
    );
    // The same file on the simulated cluster runs to its end.
    let report = scenario.run();
    assert_eq!(report.timeline.len(), 3);
    assert_eq!(report.skipped, None);
}

#[test]
fn a_backend_runs_at_the_scenario_clock_and_keeps_its_server_defaults() {
    fn marker(d: &mut crate::wire::Deployment) {
        d.object.insert("marker", true.into());
    }
    let doc = json!({
        "now": "2026-03-01T00:00:00Z",
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
                    "template": {}},
        "steps": [{"advance": "90s"}, {"patch": {"deployment": {"metadata": {"name": "d"}}}}]
    });
    let scenario = Scenario::from_value(&doc).unwrap();
    let mut cluster = crate::sim::cluster::Cluster::default().with_server_defaults(marker);
    let report = scenario.run_with(&mut cluster, scenario.objects.clone());
    assert!(report.passed(), "{report}");
    let deployment = cluster.deployment().unwrap();
    assert_eq!(deployment["marker"], true);
    assert_eq!(
        deployment["metadata"]["creationTimestamp"],
        "2026-03-01T00:01:30Z"
    );
}

#[test]
fn a_backend_that_cannot_store_an_unreadable_object_skips_the_scenario() {
    let doc = json!({
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
                    "configuration": {"metadata": {"name": "c", "namespace": "ns"}},
                    "template": {}},
        "steps": [{"unreadable": {"configuration": {"spec": {"internalSubnets": 5}}}}]
    });
    let scenario = Scenario::from_value(&doc).unwrap();
    // NoRollouts does not implement `unreadable`: the trait's default skips.
    let report = scenario.run_on(NoRollouts(crate::sim::cluster::Cluster::default()));
    assert_eq!(
        report.skipped,
        Some(super::Skipped {
            step: 1,
            why: "this backend cannot store an unreadable configuration".into()
        })
    );
    // The simulated cluster stores it, and the timeline says so.
    let report = scenario.run();
    assert!(report.passed(), "{report}");
    assert!(
        report.timeline[0]
            .to_string()
            .ends_with("unreadable configuration: patched without the type check"),
        "{}",
        report.timeline[0]
    );
}

/// A backend with the required methods only (the simulated cluster's): what a store can
/// read and patch, no faults, no Deployment controller, no restart.
struct Required(crate::sim::cluster::Cluster);

impl super::Backend for Required {
    type Error = crate::sim::cluster::ClusterError;

    fn create(
        &mut self,
        settings: &crate::Settings,
        objects: crate::sim::cluster::Objects,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        self.0.create(settings, objects, now)
    }

    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> Result<crate::sim::cluster::ReconcileReport, super::StepError<Self::Error>> {
        super::Backend::reconcile(&mut self.0, now)
    }

    fn patch(
        &mut self,
        kind: crate::sim::cluster::Kind,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::patch(&mut self.0, kind, patch, now)
    }

    fn read(
        &self,
        kind: crate::sim::cluster::Kind,
    ) -> Result<Option<serde_json::Value>, super::StepError<Self::Error>> {
        self.0.read(kind)
    }

    fn write_counts(&self) -> super::WriteCounts {
        self.0.write_counts()
    }
}

/// Each defaulted operation is unsupported, and a scenario that needs it is skipped, naming
/// it: never passed, never failed.
#[test]
fn an_operation_a_backend_does_not_implement_skips_the_scenario_naming_it() {
    for (step, operation) in [
        (json!({"delete": "configuration"}), "delete"),
        (json!({"rollout": "complete"}), "roll out"),
        (
            json!({"failWrites": {"count": 1, "error": {"code": 503}}}),
            "fail writes",
        ),
        (json!({"mutateWrites": {"patch": null}}), "mutate writes"),
        (json!({"restart": {}}), "restart"),
    ] {
        let doc = json!({
            "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
                        "configuration": {"metadata": {"name": "c", "namespace": "ns"}},
                        "template": {}},
            "steps": [{"reconcile": {}}, step]
        });
        let scenario = Scenario::from_value(&doc).unwrap();
        let report = scenario.run_on(Required(crate::sim::cluster::Cluster::default()));
        assert_eq!(
            report.skipped,
            Some(super::Skipped {
                step: 2,
                why: format!("this backend cannot {operation}")
            }),
            "{report}"
        );
        assert!(report.failures.is_empty(), "{report}");
        // The simulated cluster does every one.
        let report = scenario.run();
        assert_eq!(report.skipped, None, "{report}");
    }
}

/// The simulated cluster, recording which objects the runner reads, and handing out a
/// GatewayClass of its own when given one (as a backend that stores another object would).
struct Reads {
    cluster: crate::sim::cluster::Cluster,
    read: std::cell::RefCell<Vec<crate::sim::cluster::Kind>>,
    class: Option<serde_json::Value>,
}

impl super::Backend for Reads {
    type Error = crate::sim::cluster::ClusterError;

    fn create(
        &mut self,
        settings: &crate::Settings,
        objects: crate::sim::cluster::Objects,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        self.cluster.create(settings, objects, now)
    }

    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> Result<crate::sim::cluster::ReconcileReport, super::StepError<Self::Error>> {
        super::Backend::reconcile(&mut self.cluster, now)
    }

    fn patch(
        &mut self,
        kind: crate::sim::cluster::Kind,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<(), super::StepError<Self::Error>> {
        super::Backend::patch(&mut self.cluster, kind, patch, now)
    }

    fn read(
        &self,
        kind: crate::sim::cluster::Kind,
    ) -> Result<Option<serde_json::Value>, super::StepError<Self::Error>> {
        self.read.borrow_mut().push(kind);
        match (kind, &self.class) {
            (crate::sim::cluster::Kind::GatewayClass, Some(class)) => Ok(Some(class.clone())),
            _ => self.cluster.read(kind),
        }
    }

    fn write_counts(&self) -> super::WriteCounts {
        self.cluster.write_counts()
    }
}

/// A Gateway of our class with one TCP listener, and the class.
fn one_listener(steps: serde_json::Value) -> Scenario {
    Scenario::from_value(&json!({
        "objects": {
            "gatewayClass": {"metadata": {"name": "c"},
                             "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}},
            "gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1},
                        "spec": {"gatewayClassName": "c",
                                 "listeners": [{"name": "tcp", "port": 80, "protocol": "TCP"}]}},
            "template": {}},
        "steps": steps
    }))
    .unwrap()
}

#[test]
fn the_listeners_and_the_class_features_are_read_from_the_backend_only_when_expected() {
    use crate::sim::cluster::{Cluster, Kind};
    let scenario = one_listener(json!([
        {"reconcile": {}},
        {"reconcile": {}, "expect": {"listeners": [{"name": "tcp", "conditions": {"Accepted": {"status": "True"}}}]}},
        {"reconcile": {}, "expect": {"gatewayClassFeatures": ["Gateway", "GatewayInfrastructurePropagation"]}},
        {"reconcile": {}, "expect": {"deployment": null}}
    ]));
    let mut backend = Reads {
        cluster: Cluster::default(),
        read: Default::default(),
        class: None,
    };
    let report = scenario.run_on(&mut backend);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(
        *backend.read.borrow(),
        [Kind::Gateway, Kind::GatewayClass, Kind::Deployment]
    );
    // What the backend stores is what is checked (a real server's objects, say).
    let scenario = one_listener(json!([
        {"reconcile": {}, "expect": {"gatewayClassFeatures": ["Gateway", "GatewayInfrastructurePropagation"]}}
    ]));
    let mut backend = Reads {
        cluster: Cluster::default(),
        read: Default::default(),
        class: Some(json!({"status": {"supportedFeatures": [{"name": "Other"}]}})),
    };
    let report = scenario.run_on(&mut backend);
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(report.failures[0].what, "gatewayClassFeatures");
    assert_eq!(report.failures[0].actual, r#"["Other"]"#);
}
