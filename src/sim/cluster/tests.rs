//! The simulated API server's unit tests.

use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::store::typed;
use super::*;
use crate::outcome::WriteOutcome;
use crate::wire::Gateway;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn template() -> Value {
    json!({"spec": {"template": {"spec": {"containers": [{"name": "lb", "image": "lb"}]}}}})
}

fn marker_defaults(d: &mut Deployment) {
    let spec = crate::json::object_mut(&mut d.object, &["spec"]);
    spec.entry("revisionHistoryLimit").or_insert(json!(10));
}

fn cluster(deployment: Option<Value>) -> Cluster {
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "c"}, "spec": {"controllerName": "x"}})),
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
                        "spec": {"gatewayClassName": "c"}}),
        configuration: Some(json!({"metadata": {"name": "conf", "namespace": "red",
                                                "generation": 7}, "spec": {}})),
        deployment,
        template: Some(template()),
        routes: vec![],
    };
    Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects)
        .unwrap()
        .with_server_defaults(marker_defaults)
}

fn lb(rv: &str) -> Value {
    json!({"metadata": {"name": "sllbr-gw", "namespace": "red", "resourceVersion": rv,
                        "uid": "d-1", "generation": 4, "creationTimestamp": "2025-12-01T00:00:00Z"},
           "spec": {"replicas": 3, "template": {"spec": {"containers": []}}},
           "status": {"observedGeneration": 4}})
}

fn rv(v: &Value) -> String {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

fn generation(v: &Value) -> i64 {
    v.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap()
}

#[test]
fn initial_objects_get_missing_bookkeeping_and_keep_the_rest() {
    let c = cluster(Some(lb("77")));
    let gw = c.gateway();
    assert_eq!(gw["metadata"]["uid"], "u-1", "a given uid is kept");
    assert_eq!(gw["metadata"]["generation"], 1);
    assert_eq!(gw["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
    assert!(gw["metadata"]["resourceVersion"].is_string());
    let class_uid = c.gateway_class().unwrap()["metadata"]["uid"].clone();
    assert!(
        class_uid
            .as_str()
            .unwrap()
            .starts_with("00000000-0000-4000-8000-")
    );
    assert_eq!(c.configuration().unwrap()["metadata"]["generation"], 7);
    // The Deployment is stored as written: no defaulting, its own resourceVersion.
    assert_eq!(c.deployment(), Some(&lb("77")));
}

#[test]
fn malformed_initial_objects_are_errors_naming_the_object() {
    let objects = Objects {
        gateway: json!({"metadata": {"name": 5}}),
        template: Some(template()),
        ..Objects::default()
    };
    let e = Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap_err();
    assert!(
        matches!(
            e,
            ClusterError::Malformed {
                kind: Kind::Gateway,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().starts_with("gateway: "), "{e}");
    // Routes are held read; a patch that is not a route list is refused.
    let mut c = cluster(None);
    let e = c.patch(Kind::Routes, &json!(["not a route"])).unwrap_err();
    assert!(
        matches!(
            e,
            ClusterError::Malformed {
                kind: Kind::Routes,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn patch_bumps_generation_only_when_spec_changes() {
    let mut c = cluster(None);
    let rv0 = rv(c.gateway());
    c.patch(Kind::Gateway, &json!({"metadata": {"labels": {"a": "b"}}}))
        .unwrap();
    assert_eq!(generation(c.gateway()), 1);
    let rv1 = rv(c.gateway());
    assert_ne!(rv0, rv1, "every write sets a new resourceVersion");
    c.patch(
        Kind::Gateway,
        &json!({"status": {"addresses": [{"value": "1.2.3.4"}]}}),
    )
    .unwrap();
    assert_eq!(generation(c.gateway()), 1, "status is not spec");
    c.patch(
        Kind::Gateway,
        &json!({"spec": {"gatewayClassName": "other"}}),
    )
    .unwrap();
    assert_eq!(generation(c.gateway()), 2);
    c.patch(
        Kind::Gateway,
        &json!({"spec": {"gatewayClassName": "other"}}),
    )
    .unwrap();
    assert_eq!(
        generation(c.gateway()),
        2,
        "a no-op spec patch bumps nothing"
    );
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    assert_eq!(generation(c.configuration().unwrap()), 8);
    // A client cannot set generation or uid.
    c.patch(
        Kind::Gateway,
        &json!({"metadata": {"generation": 40, "uid": "x"}}),
    )
    .unwrap();
    assert_eq!(generation(c.gateway()), 2);
    assert_eq!(c.gateway()["metadata"]["uid"], "u-1");
}

#[test]
fn patching_an_absent_object_creates_it_and_a_bad_patch_changes_nothing() {
    let mut c = cluster(None);
    c.delete(Kind::Configuration).unwrap();
    assert!(c.configuration().is_none());
    c.patch(
        Kind::Configuration,
        &json!({"metadata": {"name": "conf", "namespace": "red"}, "spec": {}}),
    )
    .unwrap();
    let conf = c.configuration().unwrap();
    assert_eq!(generation(conf), 1);
    assert!(conf["metadata"]["uid"].is_string());
    // Deleted and recreated: a new uid, unless the patch writes one (kept as written,
    // with its generation).
    let first_uid = conf["metadata"]["uid"].clone();
    c.delete(Kind::Configuration).unwrap();
    c.patch(
        Kind::Configuration,
        &json!({"metadata": {"name": "conf", "namespace": "red"}, "spec": {}}),
    )
    .unwrap();
    assert_ne!(c.configuration().unwrap()["metadata"]["uid"], first_uid);
    c.delete(Kind::Configuration).unwrap();
    c.patch(
        Kind::Configuration,
        &json!({"metadata": {"name": "conf", "namespace": "red", "uid": "u-9", "generation": 7},
                "spec": {}}),
    )
    .unwrap();
    let conf = c.configuration().unwrap();
    assert_eq!(
        (generation(conf), &conf["metadata"]["uid"]),
        (7, &json!("u-9"))
    );
    let before = c.gateway().clone();
    let e = c
        .patch(Kind::Gateway, &json!({"spec": {"gatewayClassName": 5}}))
        .unwrap_err();
    assert!(matches!(
        e,
        ClusterError::Malformed {
            kind: Kind::Gateway,
            ..
        }
    ));
    assert_eq!(c.gateway(), &before);
}

#[test]
fn deployment_patches_are_defaulted_and_templates_get_no_bookkeeping() {
    let mut c = cluster(Some(lb("77")));
    c.patch(Kind::Deployment, &json!({"spec": {"replicas": 5}}))
        .unwrap();
    let d = c.deployment().unwrap();
    assert_eq!(
        d["spec"]["revisionHistoryLimit"], 10,
        "server defaults applied"
    );
    assert_eq!(generation(d), 5);
    assert_eq!(d["status"]["observedGeneration"], 4, "status kept");
    c.patch(Kind::Template, &json!({"metadata": {"labels": {"x": "y"}}}))
        .unwrap();
    assert_eq!(c.template()["metadata"], json!({"labels": {"x": "y"}}));
}

#[test]
fn routes_patch_replaces_the_list() {
    let mut c = cluster(None);
    let route = json!({"metadata": {"namespace": "red"},
                       "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}});
    c.patch(Kind::Routes, &json!([route.clone(), route.clone()]))
        .unwrap();
    assert_eq!(c.routes().len(), 2);
    c.patch(Kind::Routes, &json!([])).unwrap();
    assert!(c.routes().is_empty());
    assert!(c.patch(Kind::Routes, &json!({"a": 1})).is_err());
    c.patch(Kind::Routes, &json!([route])).unwrap();
    c.delete(Kind::Routes).unwrap();
    assert!(c.routes().is_empty());
}

#[test]
fn delete_rules() {
    let mut c = cluster(Some(lb("1")));
    c.delete(Kind::Deployment).unwrap();
    assert!(c.deployment().is_none());
    let e = c.delete(Kind::Deployment).unwrap_err();
    assert_eq!(e.to_string(), "cannot delete: there is no deployment");
    assert!(matches!(
        c.delete(Kind::Template),
        Err(ClusterError::Unsupported { .. })
    ));
    c.advance(Duration::from_secs(90)).unwrap();
    c.delete(Kind::Gateway).unwrap();
    assert_eq!(
        c.gateway()["metadata"]["deletionTimestamp"],
        "2026-01-01T00:01:30Z"
    );
    c.delete(Kind::GatewayClass).unwrap();
    assert!(c.gateway_class().is_none());
}

#[test]
fn advance_moves_the_clock() {
    let mut c = cluster(None);
    c.advance(Duration::from_millis(1500)).unwrap();
    assert_eq!(c.now(), t("2026-01-01T00:00:01.5Z"));
    assert_eq!(format_time(c.now()), "2026-01-01T00:00:01Z");
    assert!(c.advance(Duration::from_secs(u64::MAX)).is_err());
    assert_eq!(
        c.now(),
        t("2026-01-01T00:00:01.5Z"),
        "a failed advance changes nothing"
    );
}

fn desired(name: &str) -> Deployment {
    Deployment::from_object(
        json!({"metadata": {"name": name, "namespace": "red", "uid": "client", "generation": 9,
                            "resourceVersion": "5"},
               "spec": {"replicas": 2}, "status": {"replicas": 100}})
        .as_object()
        .unwrap()
        .clone(),
    )
}

#[test]
fn create_sets_server_fields_and_failures_come_first() {
    let mut c = cluster(None);
    let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
    c.fail_writes(2, e503.clone());
    assert_eq!(c.create_deployment(&desired("sllbr-gw")), e503);
    assert_eq!(c.create_deployment(&desired("sllbr-gw")), e503);
    assert!(c.deployment().is_none());
    assert_eq!(c.pending_failures(), 0);
    assert_eq!(
        c.create_deployment(&desired("sllbr-gw")),
        WriteOutcome::Applied
    );
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 1);
    assert_ne!(d["metadata"]["uid"], "client");
    assert_ne!(rv(&d), "5");
    assert_eq!(d["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
    assert!(d.get("status").is_none(), "status of a create is ignored");
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    let again = c.create_deployment(&desired("sllbr-gw"));
    assert_eq!(again.class(), Some(crate::FailureClass::AlreadyExists));
    assert_eq!(c.deployment_writes(), 4);
    assert_eq!(c.applied_deployment_writes(), 1);
}

#[test]
fn update_honours_resource_version_and_keeps_status() {
    let mut c = cluster(Some(lb("77")));
    let stale = desired("sllbr-gw");
    let conflict = c.update_deployment(&stale);
    assert_eq!(conflict.class(), Some(crate::FailureClass::Conflict));
    assert!(conflict.message().contains("the object has been modified"));
    assert_eq!(c.deployment(), Some(&lb("77")));

    let mut same_spec = Deployment::from_object(lb("77").as_object().unwrap().clone());
    same_spec.object.remove("status");
    // Defaulting adds revisionHistoryLimit: spec differs from the undefaulted original.
    assert_eq!(c.update_deployment(&same_spec), WriteOutcome::Applied);
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 5);
    assert_eq!(d["status"], json!({"observedGeneration": 4}));
    assert_eq!(d["metadata"]["uid"], "d-1");
    assert_eq!(d["metadata"]["creationTimestamp"], "2025-12-01T00:00:00Z");

    let mut again = Deployment::from_object(d.as_object().unwrap().clone());
    again
        .object
        .insert("status".into(), json!({"observedGeneration": 99}));
    assert_eq!(c.update_deployment(&again), WriteOutcome::Applied);
    let d2 = c.deployment().unwrap();
    assert_eq!(generation(d2), 5, "same spec: no generation bump");
    assert_ne!(rv(d2), rv(&d));
    assert_eq!(
        d2["status"]["observedGeneration"], 4,
        "update never writes status"
    );

    c.delete(Kind::Deployment).unwrap();
    let gone = c.update_deployment(&again);
    assert_eq!(gone.class(), Some(crate::FailureClass::NotFound));
}

#[test]
fn clearing_failures_and_applied_outcomes_let_writes_through() {
    let mut c = cluster(None);
    c.fail_writes(3, WriteOutcome::from_parts(None, "", "connection refused"));
    c.fail_writes(0, WriteOutcome::Applied);
    assert_eq!(c.create_deployment(&desired("d")), WriteOutcome::Applied);
    let mut c = cluster(None);
    c.fail_writes(1, WriteOutcome::Applied);
    assert_eq!(c.create_deployment(&desired("d")), WriteOutcome::Applied);
}

#[test]
fn rollout_writes_status_like_the_deployment_controller() {
    let mut c = cluster(None);
    assert_eq!(
        c.rollout(RolloutState::Complete).unwrap_err().to_string(),
        "cannot roll out: there is no deployment"
    );
    let mut c = cluster(Some(lb("77")));
    c.rollout(RolloutState::Progressing).unwrap();
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 4);
    assert_ne!(rv(&d), "77");
    let s = &d["status"];
    assert_eq!(s["observedGeneration"], 4);
    assert_eq!(s["replicas"], 3);
    assert!(
        s.get("updatedReplicas").is_none(),
        "zero counts are omitted"
    );
    assert!(s.get("availableReplicas").is_none());
    assert_eq!(s["conditions"][1]["reason"], "ReplicaSetUpdated");
    assert_eq!(s["conditions"][0]["status"], "False");

    c.advance(Duration::from_secs(60)).unwrap();
    c.rollout(RolloutState::Complete).unwrap();
    let s = c.deployment().unwrap()["status"].clone();
    for key in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(s[key], 3, "{key}");
    }
    assert_eq!(s["conditions"][0]["type"], "Available");
    assert_eq!(s["conditions"][0]["status"], "True");
    assert_eq!(s["conditions"][1]["type"], "Progressing");
    assert_eq!(s["conditions"][1]["status"], "True");
    assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
    assert_eq!(
        s["conditions"][1]["lastTransitionTime"], "2026-01-01T00:00:00Z",
        "Progressing stayed True: its transition time is kept"
    );
    assert_eq!(
        s["conditions"][0]["lastTransitionTime"],
        "2026-01-01T00:01:00Z"
    );

    c.rollout(RolloutState::Stalled).unwrap();
    let s = c.deployment().unwrap()["status"].clone();
    let progressing = &s["conditions"][1];
    assert_eq!(progressing["status"], "False");
    assert_eq!(progressing["reason"], "ProgressDeadlineExceeded");
    let message = progressing["message"].as_str().unwrap();
    assert!(message.starts_with("ReplicaSet \"sllbr-gw-"), "{message}");
    assert!(
        message.ends_with("\" has timed out progressing."),
        "{message}"
    );
    assert_eq!(s["updatedReplicas"], 3);
    assert!(s.get("availableReplicas").is_none());
}

fn meridio() -> Cluster {
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}})),
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
            "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}),
        configuration: Some(
            json!({"metadata": {"name": "conf", "namespace": "red", "generation": 7},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
                     "horizontalScaling": {"replicas": 2, "enforceReplicas": true}}}),
        ),
        ..Objects::default()
    };
    Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap()
}

#[test]
fn reconcile_writes_once_then_settles_with_no_writes() {
    let mut c = meridio();
    let first = c.reconcile().unwrap();
    assert_eq!(first.action, ActionKind::Create);
    assert_eq!(first.outcome, Some(WriteOutcome::Applied));
    assert!(first.status_written);
    assert_eq!(first.status_patch_problem, None);
    assert_eq!(c.deployment().unwrap()["metadata"]["generation"], 1);
    c.rollout(RolloutState::Complete).unwrap();
    assert!(
        c.reconcile().unwrap().status_written,
        "the initializing note goes"
    );
    for _ in 0..20 {
        c.advance(Duration::from_secs(60)).unwrap();
        let r = c.reconcile().unwrap();
        assert_eq!((r.action, r.status_written), (ActionKind::None, false));
    }
    assert_eq!(c.deployment_writes(), 1);
    assert_eq!(c.applied_deployment_writes(), 1);
    assert_eq!(c.status_writes(), 2);
    let gw = typed::<Gateway>(Kind::Gateway, c.gateway()).unwrap();
    assert_eq!(gw.status.conditions.len(), 3);
}

#[test]
fn failed_writes_are_counted_and_leave_the_deployment_alone() {
    let mut c = meridio();
    c.reconcile().unwrap();
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    let before = c.deployment().cloned();
    let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
    c.fail_writes(2, e503.clone());
    for _ in 0..2 {
        let r = c.reconcile().unwrap();
        assert_eq!(r.action, ActionKind::Update);
        assert_eq!(r.outcome.as_ref(), Some(&e503));
        assert!(!r.drift.is_empty());
    }
    assert_eq!(c.deployment().cloned(), before);
    let r = c.reconcile().unwrap();
    assert_eq!(r.outcome, Some(WriteOutcome::Applied));
    assert_eq!(c.deployment().unwrap()["spec"]["replicas"], 3);
    assert_eq!(c.deployment_writes(), 4);
    assert_eq!(c.applied_deployment_writes(), 2);
}

#[test]
fn kinds_and_rollouts_round_trip_their_keys() {
    for kind in Kind::ALL {
        assert_eq!(Kind::from_key(kind.key()), Some(kind));
    }
    assert_eq!(Kind::from_key("Gateway"), None);
    for r in [
        RolloutState::Complete,
        RolloutState::Progressing,
        RolloutState::Stalled,
    ] {
        assert_eq!(RolloutState::from_key(r.key()), Some(r));
    }
    for a in [ActionKind::Create, ActionKind::Update, ActionKind::None] {
        assert_eq!(ActionKind::from_name(a.as_str()), Some(a));
    }
}
