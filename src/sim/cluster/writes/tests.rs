//! Unit tests of write semantics: patches, deletes, Deployment creates and updates, injected
//! failures.

use std::time::Duration;

use serde_json::json;

use crate::outcome::WriteOutcome;
use crate::sim::cluster::tests::*;
use crate::sim::cluster::*;

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
        &json!({"spec": {"gatewayClassName": "other", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}}),
    )
    .unwrap();
    assert_eq!(generation(c.gateway()), 2);
    c.patch(
        Kind::Gateway,
        &json!({"spec": {"gatewayClassName": "other", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}}),
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
        (generation(conf), conf["metadata"]["uid"].as_str()),
        (7, Some("u-9"))
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
fn create_sets_server_fields_and_failures_come_first() {
    let mut c = cluster(None);
    let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
    c.fail_writes(2, e503.clone());
    assert_eq!(c.create_deployment(desired("sllbr-gw")), e503);
    assert_eq!(c.create_deployment(desired("sllbr-gw")), e503);
    assert!(c.deployment().is_none());
    assert_eq!(c.pending_failures(), 0);
    assert_eq!(
        c.create_deployment(desired("sllbr-gw")),
        WriteOutcome::Applied
    );
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 1);
    assert_ne!(d["metadata"]["uid"], "client");
    assert_ne!(rv(&d), "5");
    assert_eq!(d["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
    assert!(
        d.get(&["status"]).is_none(),
        "status of a create is ignored"
    );
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    let again = c.create_deployment(desired("sllbr-gw"));
    assert_eq!(again.class(), Some(crate::FailureClass::AlreadyExists));
    assert_eq!(c.deployment_writes(), 4);
    assert_eq!(c.applied_deployment_writes(), 1);
}

#[test]
fn update_honours_resource_version_and_keeps_status() {
    let mut c = cluster(Some(lb("77")));
    let stale = desired("sllbr-gw");
    let conflict = c.update_deployment(stale);
    assert_eq!(conflict.class(), Some(crate::FailureClass::Conflict));
    assert!(conflict.message().contains("the object has been modified"));
    assert_eq!(c.deployment().map(Deployment::to_json), Some(lb("77")));

    let mut same_spec = Deployment::from_object(lb("77").as_object().unwrap().clone());
    same_spec.object.remove("status");
    // Defaulting adds revisionHistoryLimit: spec differs from the undefaulted original.
    assert_eq!(c.update_deployment(same_spec), WriteOutcome::Applied);
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 5);
    assert_eq!(d["status"], json!({"observedGeneration": 4}));
    assert_eq!(d["metadata"]["uid"], "d-1");
    assert_eq!(d["metadata"]["creationTimestamp"], "2025-12-01T00:00:00Z");

    let mut again = d.clone();
    again
        .object
        .insert("status", json!({"observedGeneration": 99}).into());
    assert_eq!(c.update_deployment(again.clone()), WriteOutcome::Applied);
    let d2 = c.deployment().unwrap();
    assert_eq!(generation(d2), 5, "same spec: no generation bump");
    assert_ne!(rv(d2), rv(&d));
    assert_eq!(
        d2["status"]["observedGeneration"], 4,
        "update never writes status"
    );

    c.delete(Kind::Deployment).unwrap();
    let gone = c.update_deployment(again);
    assert_eq!(gone.class(), Some(crate::FailureClass::NotFound));
}

#[test]
fn clearing_failures_and_applied_outcomes_let_writes_through() {
    let mut c = cluster(None);
    c.fail_writes(3, WriteOutcome::from_parts(None, "", "connection refused"));
    c.fail_writes(0, WriteOutcome::Applied);
    assert_eq!(c.create_deployment(desired("d")), WriteOutcome::Applied);
    let mut c = cluster(None);
    c.fail_writes(1, WriteOutcome::Applied);
    assert_eq!(c.create_deployment(desired("d")), WriteOutcome::Applied);
}
