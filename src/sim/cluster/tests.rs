//! The simulated API server: initial objects, their shape, the clock; and the fixtures the
//! other parts' tests share.

use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::*;

pub(super) fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}
pub(super) fn template() -> Deployment {
    serde_json::from_value(
        json!({"spec": {"template": {"spec": {"containers": [{"name": "lb", "image": "lb"}]}}}}),
    )
    .unwrap()
}
pub(super) fn marker_defaults(d: &mut Deployment) {
    let spec = crate::json::object_mut(&mut d.object, &["spec"]);
    spec.entry("revisionHistoryLimit").or_insert(10.into());
}
pub(super) fn cluster(deployment: Option<Value>) -> Cluster {
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "c"}, "spec": {"controllerName": "x"}}).into()),
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
                        "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}}).into(),
        configuration: Some(json!({"metadata": {"name": "conf", "namespace": "red",
                                                "generation": 7}, "spec": {}}).into()),
        deployment: deployment.map(|d| serde_json::from_value(d).unwrap()),
        template: Some(template()),
        routes: vec![],
        namespaces: Default::default(),
    };
    Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects)
        .unwrap()
        .with_server_defaults(marker_defaults)
}
pub(super) fn lb(rv: &str) -> Value {
    json!({"metadata": {"name": "sllbr-gw", "namespace": "red", "resourceVersion": rv,
                        "uid": "d-1", "generation": 4, "creationTimestamp": "2025-12-01T00:00:00Z"},
           "spec": {"replicas": 3, "template": {"spec": {"containers": []}}},
           "status": {"observedGeneration": 4}})
}
/// An object's metadata field, from a JSON object or a Deployment.
pub(super) trait Meta {
    fn meta(&self, key: &str) -> Value;
}
impl Meta for Value {
    fn meta(&self, key: &str) -> Value {
        self["metadata"][key].clone()
    }
}
impl Meta for crate::wire::tree::Value {
    fn meta(&self, key: &str) -> Value {
        Value::from(&self["metadata"][key])
    }
}
impl Meta for Deployment {
    fn meta(&self, key: &str) -> Value {
        Value::from(&self["metadata"][key])
    }
}
pub(super) fn rv(v: &impl Meta) -> String {
    v.meta("resourceVersion").as_str().unwrap().to_owned()
}
pub(super) fn generation(v: &impl Meta) -> i64 {
    v.meta("generation").as_i64().unwrap()
}
pub(super) fn desired(name: &str) -> Deployment {
    Deployment::from_object(
        json!({"metadata": {"name": name, "namespace": "red", "uid": "client", "generation": 9,
                            "resourceVersion": "5"},
               "spec": {"replicas": 2}, "status": {"replicas": 100}})
        .as_object()
        .unwrap()
        .clone(),
    )
}
pub(super) fn meridio() -> Cluster {
    let objects = Objects {
        gateway_class: Some(json!({"metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}).into()),
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}).into(),
        configuration: Some(
            json!({"metadata": {"name": "conf", "namespace": "red", "generation": 7},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
                     "horizontalScaling": {"replicas": 2, "enforceReplicas": true}}}).into(),
        ),
        ..Objects::default()
    };
    Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap()
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
    assert_eq!(c.deployment().map(Deployment::to_json), Some(lb("77")));
}

#[test]
fn malformed_initial_objects_are_errors_naming_the_object() {
    let objects = Objects {
        gateway: json!({"metadata": {"name": 5}}).into(),
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

#[test]
fn a_gateway_or_class_without_status_gets_the_crds_default_status() {
    let c = meridio();
    let pending = |type_: &str| {
        json!({"type": type_, "status": "Unknown", "reason": "Pending",
               "message": "Waiting for controller", "lastTransitionTime": "1970-01-01T00:00:00Z"})
    };
    assert_eq!(
        c.gateway()["status"],
        json!({"conditions": [pending("Accepted"), pending("Programmed")]})
    );
    assert_eq!(
        c.gateway_class().unwrap()["status"],
        json!({"conditions": [pending("Accepted")]})
    );
    // No observedGeneration: the default is no controller's.
    assert!(c.gateway()["status"]["conditions"][0]["observedGeneration"].is_null());
    // Other kinds get none.
    assert!(c.configuration().unwrap().get("status").is_none());
    // An object given with a status keeps it as written.
    let objects = Objects {
        gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
                        "status": {"conditions": []}})
        .into(),
        template: Some(template()),
        ..Objects::default()
    };
    let c = Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap();
    assert_eq!(c.gateway()["status"], json!({"conditions": []}));
    // A class created by a patch gets it too.
    let mut c = meridio();
    c.delete(Kind::GatewayClass).unwrap();
    c.patch(
        Kind::GatewayClass,
        &json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": "x/y"}}),
    )
    .unwrap();
    assert_eq!(
        c.gateway_class().unwrap()["status"],
        json!({"conditions": [pending("Accepted")]})
    );
}

#[test]
fn an_unreadable_configuration_is_stored_and_read_as_unreadable_until_mended() {
    let mut c = meridio();
    let before = generation(c.configuration().unwrap());
    let wrong = json!({"spec": {"horizontalScaling": {"replicas": "many"}}});
    // The type-checked patch refuses it and changes nothing.
    assert!(c.patch(Kind::Configuration, &wrong).is_err());
    c.patch_unchecked(Kind::Configuration, &wrong).unwrap();
    assert_eq!(generation(c.configuration().unwrap()), before + 1);
    // The configuration the Gateway names: `conf` in its namespace, `red`.
    match c.read_configuration("red", "conf") {
        Some(Err(why)) => {
            assert!(
                why.starts_with("spec.horizontalScaling.replicas: "),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    let record = c.reconcile().unwrap();
    let accepted = record
        .conditions
        .iter()
        .find(|c| c.type_ == "Accepted")
        .unwrap();
    assert_eq!(accepted.reason, "InvalidParameters");
    assert!(
        accepted.message.starts_with(
            r#"GatewayConfiguration "conf" cannot be read: spec.horizontalScaling.replicas: "#
        ),
        "{}",
        accepted.message
    );
    assert_eq!(record.action, WriteKind::None);
    // A patch that makes it readable again.
    c.patch(
        Kind::Configuration,
        &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
    )
    .unwrap();
    assert!(matches!(c.read_configuration("red", "conf"), Some(Ok(_))));
    // Another key is not read at all.
    assert_eq!(c.read_configuration("red", "other"), None);
    assert_eq!(c.read_configuration("blue", "conf"), None);
    assert_eq!(c.reconcile().unwrap().action, WriteKind::Create);
    // Only the configuration can be stored so.
    assert!(matches!(
        c.patch_unchecked(Kind::Gateway, &json!({})),
        Err(ClusterError::Unsupported { .. })
    ));
}

#[test]
fn a_class_default_resolves_to_the_stored_configuration_by_namespace_and_name() {
    use crate::gateway_class::ConfigurationPresence;
    let c = meridio();
    let class = |namespace: &str, name: &str| -> crate::wire::GatewayClass {
        serde_json::from_value(json!({"metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                     "parametersRef": {"group": "meridio-2.nordix.org",
                         "kind": "GatewayConfiguration", "name": name, "namespace": namespace}}}))
        .unwrap()
    };
    assert_eq!(
        c.class_configuration(&class("red", "conf")),
        ConfigurationPresence::Exists
    );
    assert_eq!(
        c.class_configuration(&class("blue", "conf")),
        ConfigurationPresence::Missing
    );
    assert_eq!(
        c.class_configuration(&class("red", "other")),
        ConfigurationPresence::Missing
    );
    let mut c = c;
    c.delete(Kind::Configuration).unwrap();
    assert_eq!(
        c.class_configuration(&class("red", "conf")),
        ConfigurationPresence::Missing
    );
}
