//! Checking expectations: what matches, and what each mismatch reports.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Failure, Stored, check_record, subset};
use crate::events::{Event, EventType};
use crate::outcome::WriteOutcome;
use crate::reconcile::Requeue;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, Objects, ReconcileReport, WriteKind};
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

pub(crate) fn record() -> ReconcileReport {
    ReconcileReport {
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
        status_refused: false,
    }
}

fn test_cluster() -> Cluster {
    let objects = Objects {
        gateway: json!({"metadata": {"name": "gw"}}).into(),
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

// ---- revision 5: the listener entries and the class's supported features --------------------

/// A Gateway whose status holds two listener entries: `tcp` (accepted, 2 routes) and `quic`.
fn gateway_with_listeners() -> Value {
    json!({"metadata": {"name": "gw", "namespace": "red", "generation": 2},
           "status": {"listeners": [
               {"name": "tcp", "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
                "attachedRoutes": 2,
                "conditions": [
                    {"type": "Accepted", "status": "True", "reason": "Accepted",
                     "message": "Listener accepted", "observedGeneration": 2,
                     "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    {"type": "example.com/Probe", "status": "True", "reason": "Fine",
                     "message": "ok", "lastTransitionTime": "2025-12-31T00:00:00Z"}]},
               {"name": "quic", "supportedKinds": [], "attachedRoutes": 0, "conditions": []}]}})
}

/// The failures of `expect` against `gateway` and `class` as stored.
fn stored_failures(expect: Value, gateway: Option<&Value>, class: Option<&Value>) -> Vec<Failure> {
    let doc = with_steps(json!([{"reconcile": {}, "expect": expect}]));
    let s = Scenario::from_value(&doc).unwrap();
    let Verb::Reconcile(e) = &s.steps[0].verb else {
        panic!()
    };
    let mut out = Vec::new();
    let stored = Stored {
        gateway,
        gateway_class: class,
        ..Stored::default()
    };
    check_record(1, e, &record(), stored, &mut out);
    out
}

#[test]
fn listener_entries_that_match_pass() {
    let gateway = gateway_with_listeners();
    let ok = stored_failures(
        json!({"listeners": [
            {"name": "tcp", "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
             "attachedRoutes": 2,
             "conditions": {"Accepted": {"status": "True", "reason": "Accepted",
                                         "message": "Listener accepted", "observedGeneration": 2,
                                         "lastTransitionTime": "2026-01-01T00:00:00.000Z"},
                            "example.com/Probe": {"message": "ok"},
                            "Programmed": null}},
            {"name": "quic", "supportedKinds": [], "attachedRoutes": 0, "conditions": {"Accepted": null}}
        ]}),
        Some(&gateway),
        None,
    );
    assert!(ok.is_empty(), "{ok:?}");
    // Only the names: the rest is not checked.
    let ok = stored_failures(
        json!({"listeners": [{"name": "tcp"}, {"name": "quic"}]}),
        Some(&gateway),
        None,
    );
    assert!(ok.is_empty(), "{ok:?}");
}

#[test]
fn each_listener_mismatch_names_the_entry_and_the_field() {
    let gateway = gateway_with_listeners();
    let f = stored_failures(
        json!({"listeners": [
            {"name": "tcp", "supportedKinds": [], "attachedRoutes": 1,
             "conditions": {"Accepted": {"status": "False", "observedGeneration": 1},
                            "Programmed": {}, "example.com/Probe": null}},
            {"name": "quic", "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
             "conditions": {"ResolvedRefs": {"reason": "ResolvedRefs"}}}
        ]}),
        Some(&gateway),
        None,
    );
    let got: Vec<(&str, &str, &str)> = f
        .iter()
        .map(|f| (f.what.as_str(), f.expected.as_str(), f.actual.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "listeners[0].supportedKinds",
                "[]",
                r#"[{group: "meridio-2.nordix.org", kind: "L34Route"}]"#
            ),
            ("listeners[0].attachedRoutes", "1", "2"),
            (
                "listeners[0].conditions.Accepted.status",
                r#""False""#,
                r#""True""#
            ),
            (
                "listeners[0].conditions.Accepted.observedGeneration",
                "1",
                "2"
            ),
            ("listeners[0].conditions.Programmed", "present", "absent"),
            (
                "listeners[0].conditions.example.com/Probe",
                "absent",
                r#"True/Fine: "ok""#
            ),
            (
                "listeners[1].supportedKinds",
                r#"[{group: "meridio-2.nordix.org", kind: "L34Route"}]"#,
                "[]"
            ),
            ("listeners[1].conditions.ResolvedRefs", "present", "absent"),
        ]
    );
    assert_eq!(
        f[1].to_string(),
        "step 1: listeners[0].attachedRoutes: expected 1, found 2"
    );
}

#[test]
fn listener_entries_of_another_count_or_order_are_one_failure() {
    let gateway = gateway_with_listeners();
    for (want, expected) in [
        (json!([{"name": "tcp"}]), r#"1 entry ["tcp"]"#),
        (
            json!([{"name": "quic"}, {"name": "tcp"}]),
            r#"2 entries ["quic", "tcp"]"#,
        ),
        (json!([]), "0 entries []"),
    ] {
        let f = stored_failures(json!({"listeners": want}), Some(&gateway), None);
        assert_eq!(
            f,
            vec![Failure {
                step: 1,
                what: "listeners".into(),
                expected: expected.into(),
                actual: r#"2 entries ["tcp", "quic"]"#.into(),
            }]
        );
    }
    // A Gateway without status.listeners has none.
    let bare = json!({"metadata": {"name": "gw"}, "status": {"conditions": []}});
    assert!(stored_failures(json!({"listeners": []}), Some(&bare), None).is_empty());
    let f = stored_failures(json!({"listeners": [{"name": "tcp"}]}), Some(&bare), None);
    assert_eq!(f[0].actual, "0 entries []");
    // No Gateway at all, or entries that do not read: said so.
    let f = stored_failures(json!({"listeners": []}), None, None);
    assert_eq!(f[0].actual, "no Gateway");
    let odd = json!({"status": {"listeners": [{"name": "tcp", "attachedRoutes": "two"}]}});
    let f = stored_failures(json!({"listeners": [{"name": "tcp"}]}), Some(&odd), None);
    assert!(
        f[0].actual.starts_with("status.listeners that do not read"),
        "{f:?}"
    );
}

#[test]
fn class_features_are_exact_and_in_order() {
    let class = json!({"metadata": {"name": "meridio"},
                       "status": {"supportedFeatures": [{"name": "Gateway"}, {"name": "GatewayPort8080"}]}});
    let check = |want: Value, class: Option<&Value>| {
        stored_failures(json!({"gatewayClassFeatures": want}), None, class)
    };
    assert!(check(json!(["Gateway", "GatewayPort8080"]), Some(&class)).is_empty());
    let f = check(json!(["GatewayPort8080", "Gateway"]), Some(&class));
    assert_eq!(
        f,
        vec![Failure {
            step: 1,
            what: "gatewayClassFeatures".into(),
            expected: r#"["GatewayPort8080", "Gateway"]"#.into(),
            actual: r#"["Gateway", "GatewayPort8080"]"#.into(),
        }]
    );
    assert_eq!(check(json!(["Gateway"]), Some(&class)).len(), 1);
    // No class, or a class without the field: none.
    assert!(check(json!([]), None).is_empty());
    let bare = json!({"metadata": {"name": "meridio"}, "status": {"conditions": []}});
    assert!(check(json!([]), Some(&bare)).is_empty());
    assert_eq!(check(json!(["Gateway"]), Some(&bare))[0].actual, "[]");
    // Another form than [{"name": N}] is shown as it is.
    let odd = json!({"status": {"supportedFeatures": ["Gateway"]}});
    let f = check(json!(["Gateway"]), Some(&odd));
    assert_eq!(
        f[0].actual,
        r#"status.supportedFeatures not of the form [{"name": N}]: ["Gateway"]"#
    );
}
