//! Checking expectations: what matches, and what each mismatch reports.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Failure, Stored, check_record, subset};
use crate::events::{Event, EventType};
use crate::outcome::WriteOutcome;
use crate::reconcile::Requeue;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, Objects, ReconcileRecord, WriteKind};
use crate::sim::scenario::format::tests::with_steps;
use crate::sim::scenario::{Scenario, Verb};
use crate::wire::Condition;

fn diffs(want: Value, got: Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    subset(&want, &got, "deployment", &mut out);
    out
}

#[test]
fn subset_rules() {
    let got = json!({"metadata": {"name": "d", "annotations": {"a/b": "1"}},
                     "spec": {"replicas": 2, "list": [{"name": "x", "v": 1}, {"name": "y"}]}});
    assert!(diffs(json!({}), got.clone()).is_empty());
    assert!(diffs(json!({"spec": {"list": [{"name": "x"}, {}]}}), got.clone()).is_empty());
    assert!(diffs(json!({"metadata": {"labels": null}}), got.clone()).is_empty());
    let d = diffs(
        json!({"metadata": {"annotations": {"a/b": "2"}}}),
        got.clone(),
    );
    assert_eq!(
        d,
        vec![(
            r#"deployment.metadata.annotations["a/b"]"#.to_owned(),
            r#""2""#.to_owned(),
            r#""1""#.to_owned()
        )]
    );
    let d = diffs(json!({"spec": {"list": [{"name": "x"}]}}), got.clone());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, "deployment.spec.list");
    assert!(d[0].1.starts_with("1 items"), "{d:?}");
    let d = diffs(
        json!({"spec": {"list": [{"name": "x"}, {"name": "z"}]}}),
        got.clone(),
    );
    assert_eq!(d[0].0, "deployment.spec.list[1].name");
    let d = diffs(
        json!({"spec": {"paused": true}, "metadata": {"name": null}}),
        got,
    );
    assert_eq!(
        d[0],
        (
            "deployment.metadata.name".into(),
            "absent".into(),
            r#""d""#.into()
        )
    );
    assert_eq!(
        d[1],
        (
            "deployment.spec.paused".into(),
            "true".into(),
            "absent".into()
        )
    );
}

pub(crate) fn record() -> ReconcileRecord {
    ReconcileRecord {
        time: "2026-01-01T00:00:00Z".parse().unwrap(),
        action: WriteKind::Update,
        drift: vec!["spec.replicas".into()],
        outcome: Some(WriteOutcome::from_parts(
            Some(503),
            "ServiceUnavailable",
            "etcd",
        )),
        status_written: true,
        conditions: vec![Condition {
            type_: "Programmed".into(),
            status: "True".into(),
            observed_generation: Some(1),
            last_transition_time: "2026-01-01T00:00:00Z".into(),
            reason: "Programmed".into(),
            message: "LB Deployment reconciled with GatewayConfiguration generation 7".into(),
        }],
        addresses: vec!["20.0.0.1".into()],
        class_conditions: Vec::new(),
        class_status_written: false,
        requeue: Requeue::After(Duration::from_secs(1)),
        events: vec![Event {
            type_: EventType::Warning,
            reason: "ApplyFailed".into(),
            message: "update failed".into(),
        }],
        status_patch_problem: None,
    }
}

fn test_cluster() -> Cluster {
    let objects = Objects {
        gateway: json!({"metadata": {"name": "gw"}}),
        deployment: Some(
            serde_json::from_value(
                json!({"metadata": {"name": "sllbr-gw"}, "spec": {"replicas": 2}}),
            )
            .unwrap(),
        ),
        template: Some(serde_json::from_value(json!({})).unwrap()),
        ..Objects::default()
    };
    Cluster::new(
        Settings::default(),
        "2026-01-01T00:00:00Z".parse().unwrap(),
        objects,
    )
    .unwrap()
}

fn failures(expect: Value) -> Vec<Failure> {
    let doc = with_steps(json!([{"reconcile": {}, "expect": expect}]));
    let s = Scenario::from_value(&doc).unwrap();
    let Verb::Reconcile(e) = &s.steps[0].verb else {
        panic!()
    };
    let mut out = Vec::new();
    let cluster = test_cluster();
    let deployment = cluster.deployment().map(crate::wire::Deployment::to_json);
    let stored = Stored {
        deployment: deployment.as_ref(),
        ..Stored::default()
    };
    check_record(1, e, &record(), stored, &mut out);
    out
}

#[test]
fn matching_expectations_pass() {
    let ok = failures(json!({
        "action": "Update", "statusWritten": true, "addresses": ["20.0.0.1"],
        "requeue": "1s", "deployment": {"spec": {"replicas": 2}},
        "conditions": {"Degraded": null, "Programmed": {
            "status": "True", "reason": "Programmed",
            "message": "LB Deployment reconciled with GatewayConfiguration generation 7",
            "messageContains": ["generation 7"], "observedGeneration": 1,
            "lastTransitionTime": "2026-01-01T00:00:00.000Z"}}
    }));
    assert!(ok.is_empty(), "{ok:?}");
}

#[test]
fn drift_expectations_name_each_missing_path() {
    assert!(failures(json!({"drift": ["spec.replicas"]})).is_empty());
    let f = failures(json!({"drift": ["spec.replicas", "spec.template.spec.nodeSelector"]}));
    assert_eq!(
        f,
        vec![Failure {
            step: 1,
            what: "drift".into(),
            expected: r#"to contain "spec.template.spec.nodeSelector""#.into(),
            actual: r#"["spec.replicas"]"#.into(),
        }]
    );
}

#[test]
fn each_mismatch_is_one_failure_with_expected_and_actual() {
    let f = failures(json!({
        "action": "None", "statusWritten": false, "addresses": [],
        "requeue": "none", "deployment": {"spec": {"replicas": 3}},
        "conditions": {"Programmed": {"status": "False", "messageContains": ["generation 8"],
                                      "observedGeneration": 2,
                                      "lastTransitionTime": "2026-01-01T00:00:01Z"},
                       "Accepted": {}}
    }));
    let whats: Vec<&str> = f.iter().map(|f| f.what.as_str()).collect();
    assert_eq!(
        whats,
        vec![
            "action",
            "statusWritten",
            "conditions.Accepted",
            "conditions.Programmed.status",
            "conditions.Programmed.message",
            "conditions.Programmed.observedGeneration",
            "conditions.Programmed.lastTransitionTime",
            "addresses",
            "deployment.spec.replicas",
            "requeue",
        ]
    );
    assert_eq!(f[0].expected, "None");
    assert_eq!(f[0].actual, "Update (drift: spec.replicas)");
    assert_eq!(f[9].expected, "await change");
    assert_eq!(f[9].actual, "after 1s");
    assert_eq!(
        f[3].to_string(),
        r#"step 1: conditions.Programmed.status: expected "False", found "True""#
    );
    let f = failures(json!({"deployment": null, "conditions": {"Programmed": null}}));
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].what, "conditions.Programmed");
    assert_eq!(f[0].expected, "absent");
    assert_eq!(f[1].actual, r#"Deployment "sllbr-gw""#);
}
