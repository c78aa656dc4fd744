//! An env var's value source is compared exactly (SPEC §5), through the simulated cluster:
//! another writer that gives a template variable a `value` or a `valueFrom` of its own is
//! drift, and the update puts the template's source back.

use gateway_reconcile::Settings;
use gateway_reconcile::WriteKind;
use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects};
use gateway_reconcile::template::default_template;
use serde_json::{Value, json};

const ROUTER_ENV: &str = "/spec/template/spec/containers/1/env";

/// A cluster whose template gives the router `LOG_LEVEL` with no value and `NODE` from the
/// downward API, with its Deployment created.
fn created() -> Cluster {
    let mut template = serde_json::to_value(default_template()).unwrap();
    let env = template
        .pointer_mut(ROUTER_ENV)
        .unwrap()
        .as_array_mut()
        .unwrap();
    env.push(json!({ "name": "LOG_LEVEL" }));
    env.push(
        json!({ "name": "NODE", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } }),
    );
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}).into()),
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}).into(),
        configuration: Some(
            json!({"metadata": {"name": "conf", "namespace": "red", "generation": 1},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}).into(),
        ),
        template: Some(serde_json::from_value(template).unwrap()),
        ..Objects::default()
    };
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut cluster = Cluster::new(Settings::default(), now, objects).unwrap();
    assert_eq!(cluster.reconcile().unwrap().action, WriteKind::Create);
    assert_eq!(cluster.reconcile().unwrap().action, WriteKind::None);
    cluster
}

/// Edits the stored router's env entry `name` as another writer would (a merge patch
/// replaces the whole containers list).
fn edit_env(
    cluster: &mut Cluster,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) {
    let mut containers =
        Value::from(&cluster.deployment().unwrap()["spec"]["template"]["spec"]["containers"]);
    let env = containers[1]["env"].as_array_mut().unwrap();
    let entry = env.iter_mut().find(|e| e["name"] == name).unwrap();
    edit(entry.as_object_mut().unwrap());
    let patch = json!({ "spec": { "template": { "spec": { "containers": containers } } } });
    cluster.patch(Kind::Deployment, &patch).unwrap();
}

fn router_env(cluster: &Cluster, name: &str) -> Value {
    let env = cluster
        .deployment()
        .unwrap()
        .to_json()
        .pointer(ROUTER_ENV)
        .unwrap()
        .clone();
    env.as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap()
        .clone()
}

#[test]
fn a_value_where_the_template_sets_none_is_drift_and_is_removed() {
    let mut cluster = created();
    edit_env(&mut cluster, "LOG_LEVEL", |e| {
        e.insert("value".into(), json!("debug"));
    });
    let step = cluster.reconcile().unwrap();
    assert_eq!(step.action, WriteKind::Update);
    assert_eq!(
        step.drift,
        ["spec.template.spec.containers[router].env[LOG_LEVEL].value"]
    );
    assert_eq!(
        router_env(&cluster, "LOG_LEVEL"),
        json!({ "name": "LOG_LEVEL" })
    );
    assert_eq!(cluster.reconcile().unwrap().action, WriteKind::None);
}

#[test]
fn a_value_from_where_the_template_sets_none_is_drift_and_is_removed() {
    let mut cluster = created();
    edit_env(&mut cluster, "LOG_LEVEL", |e| {
        e.insert(
            "valueFrom".into(),
            json!({ "configMapKeyRef": { "name": "cm", "key": "level" } }),
        );
    });
    let step = cluster.reconcile().unwrap();
    assert_eq!(step.action, WriteKind::Update);
    assert_eq!(
        step.drift,
        ["spec.template.spec.containers[router].env[LOG_LEVEL].valueFrom"]
    );
    assert_eq!(
        router_env(&cluster, "LOG_LEVEL"),
        json!({ "name": "LOG_LEVEL" })
    );
}

#[test]
fn a_value_in_place_of_the_templates_value_from_is_drift() {
    let mut cluster = created();
    edit_env(&mut cluster, "NODE", |e| {
        e.remove("valueFrom");
        e.insert("value".into(), json!("node-1"));
    });
    let step = cluster.reconcile().unwrap();
    assert_eq!(step.action, WriteKind::Update);
    assert_eq!(
        step.drift,
        [
            "spec.template.spec.containers[router].env[NODE].value",
            "spec.template.spec.containers[router].env[NODE].valueFrom.fieldRef.fieldPath"
        ]
    );
    assert_eq!(
        router_env(&cluster, "NODE"),
        json!({ "name": "NODE", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName", "apiVersion": "v1" } } })
    );
}
