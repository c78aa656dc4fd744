//! Lagging reads: answered from the snapshot, writes checked against the current objects.

use serde_json::json;

use super::super::Kind;
use super::super::tests::{Meta, cluster, lb};
use crate::outcome::FailureClass;
use crate::reconcile::Reader;
use crate::reconcile::ready;

#[test]
fn reads_lag_at_the_snapshot_and_writes_meet_the_current_objects() {
    let mut c = cluster(Some(lb("5")));
    c.snapshot("before");
    c.patch(Kind::Deployment, &json!({"spec": {"replicas": 5}}))
        .unwrap();
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"internalSubnets": []}}),
    )
    .unwrap();
    let current_rv = c.deployment().unwrap().meta("resourceVersion");
    c.stale_reads("before", None).unwrap();
    assert!(c.reads_lag());
    // Used up: the snapshot is moved into the lagging view, not kept twice.
    assert!(c.stale_reads("before", None).is_err());
    let mut port = c.port();
    let read = ready(port.deployment("red", "sllbr-gw"))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(read.meta("resourceVersion"), json!("5"));
    let conf = ready(port.configuration("red", "conf"))
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(conf.metadata.generation, Some(7));
    // An update carrying the resourceVersion it read is refused: the stored one is newer.
    let refused = c.update_deployment(read);
    assert_eq!(refused.class(), Some(FailureClass::Conflict));
    assert_eq!(c.deployment().unwrap().meta("resourceVersion"), current_rv);
    assert_eq!(
        c.deployment().unwrap().get(&["spec", "replicas"]).cloned(),
        Some(5.into())
    );
    // A create of the name that exists is refused too.
    let mut fresh = c.deployment().unwrap().clone();
    fresh.object.remove("metadata");
    crate::json::object_mut(&mut fresh.object, &["metadata"]).insert("name", "sllbr-gw".into());
    assert_eq!(
        c.create_deployment(fresh).class(),
        Some(FailureClass::AlreadyExists)
    );
    c.catch_up_reads();
    assert!(!c.reads_lag());
    let read = ready(c.port().deployment("red", "sllbr-gw"))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(read.meta("resourceVersion"), current_rv);
}

#[test]
fn a_status_patch_from_a_lagging_view_is_refused() {
    let mut c = cluster(None);
    c.snapshot("before");
    c.patch(Kind::Gateway, &json!({"metadata": {"labels": {"a": "b"}}}))
        .unwrap();
    let stored = c.gateway().clone();
    c.stale_reads("before", None).unwrap();
    // A patch carrying the precondition of the Gateway read, as the driver sends it.
    let read: crate::wire::Gateway =
        crate::sim::cluster::store::typed(Kind::Gateway, c.reads().gateway).unwrap();
    let rv = read.metadata.resource_version.clone();
    let patch = crate::reconcile::StatusPatch::of_status(
        serde_json::Map::from_iter([("addresses".to_owned(), json!([]))]),
        rv,
    );
    let written = ready(crate::reconcile::Port::patch_status(&mut c.port(), patch))
        .unwrap()
        .unwrap();
    assert_eq!(written, crate::reconcile::StatusWrite::Conflict);
    assert_eq!(c.gateway(), &stored);
    assert_eq!(c.status_writes(), 0);
}

#[test]
fn the_gateway_recreated_has_a_new_identity_and_the_default_status() {
    let mut c = cluster(None);
    let old_rv = c.gateway().meta("resourceVersion");
    c.recreate_gateway(
        json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-2", "generation": 9,
                            "resourceVersion": "1"},
               "spec": {"gatewayClassName": "c", "listeners": []},
               "status": {"conditions": []}})
        .into(),
    )
    .unwrap();
    let gw = c.gateway();
    assert_eq!(gw.meta("uid"), json!("u-2"));
    assert_eq!(gw.meta("generation"), json!(1));
    assert_ne!(gw.meta("resourceVersion"), old_rv);
    assert_ne!(gw.meta("resourceVersion"), json!("1"));
    assert_eq!(
        serde_json::Value::from(&gw["status"]["conditions"][0]["reason"]),
        json!("Pending")
    );
}
