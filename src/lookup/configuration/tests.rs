//! Unit tests of `lookup::configuration`: which parameters a Gateway uses.

use serde_json::{Value, json};

use super::*;

const CONFIGURATION: (&str, &str) = ("meridio-2.nordix.org", "GatewayConfiguration");

fn gateway(infrastructure: Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "red"},
        "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": infrastructure}
    }))
    .unwrap()
}

fn class(parameters: Value) -> GatewayClass {
    serde_json::from_value(json!({
        "metadata": {"name": "c"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                 "parametersRef": parameters}
    }))
    .unwrap()
}

fn own(name: &str) -> Value {
    json!({"parametersRef": {"group": CONFIGURATION.0, "kind": CONFIGURATION.1, "name": name}})
}

fn class_ref(namespace: Option<&str>, name: &str) -> Value {
    let mut r = json!({"group": CONFIGURATION.0, "kind": CONFIGURATION.1, "name": name});
    if let Some(namespace) = namespace {
        r["namespace"] = json!(namespace);
    }
    r
}

#[test]
fn the_gateways_own_reference_wins_in_its_namespace() {
    let settings = Settings::default();
    let class = class(class_ref(Some("infra"), "defaults"));
    let gw = gateway(own("mine"));
    let used = configuration_ref(&settings, &gw, Some(&class)).unwrap();
    assert_eq!(
        used,
        ConfigurationRef {
            namespace: "red",
            name: "mine",
            from_class: false
        }
    );
    assert_eq!(used.to_string(), "mine");
}

#[test]
fn the_class_reference_is_the_default_in_the_namespace_it_names() {
    let settings = Settings::default();
    let class = class(class_ref(Some("infra"), "defaults"));
    for gw in [gateway(json!({"labels": {"a": "b"}})), gateway(Value::Null)] {
        let used = configuration_ref(&settings, &gw, Some(&class)).unwrap();
        assert_eq!(
            (used.namespace, used.name, used.from_class),
            ("infra", "defaults", true)
        );
        assert_eq!(used.to_string(), "infra/defaults");
    }
    // No class, or a class without a reference: none.
    assert_eq!(
        configuration_ref(&settings, &gateway(Value::Null), None),
        None
    );
    let bare: GatewayClass =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": {}})).unwrap();
    assert_eq!(parameters_ref(&gateway(Value::Null), Some(&bare)), None);
}

#[test]
fn a_reference_of_another_kind_or_without_namespace_names_no_configuration() {
    let settings = Settings::default();
    let foreign = class(json!({"group": "", "kind": "ConfigMap", "name": "p", "namespace": "x"}));
    let gw = gateway(Value::Null);
    let reference = parameters_ref(&gw, Some(&foreign)).unwrap();
    assert!(!is_ours(&settings, &reference));
    assert_eq!(configuration_ref(&settings, &gw, Some(&foreign)), None);
    assert_eq!(class_configuration_ref(&settings, &foreign), None);

    let unplaced = class(class_ref(None, "defaults"));
    let reference = parameters_ref(&gw, Some(&unplaced)).unwrap();
    assert!(is_ours(&settings, &reference));
    assert_eq!(reference.configuration(), None);
    assert_eq!(configuration_ref(&settings, &gw, Some(&unplaced)), None);

    // Group and kind are compared exactly, against the settings.
    let lower = gateway(json!({"parametersRef": {"group": CONFIGURATION.0,
        "kind": "gatewayconfiguration", "name": "c"}}));
    assert_eq!(configuration_ref(&settings, &lower, None), None);
    let acme = Settings {
        parameters_group: "acme.io".into(),
        parameters_kind: "LbConfig".into(),
        ..Settings::default()
    };
    let theirs = gateway(
        json!({"parametersRef": {"group": "acme.io", "kind": "LbConfig",
        "name": "c"}}),
    );
    assert!(configuration_ref(&acme, &theirs, None).is_some());
    assert_eq!(configuration_ref(&settings, &theirs, None), None);
}

#[test]
fn the_class_configuration() {
    let settings = Settings::default();
    let class = class(class_ref(Some("infra"), "defaults"));
    assert_eq!(
        class_configuration_ref(&settings, &class),
        Some(ConfigurationRef {
            namespace: "infra",
            name: "defaults",
            from_class: true
        })
    );
}

#[test]
fn a_configuration_matches_by_namespace_and_name() {
    let target = ConfigurationRef {
        namespace: "infra",
        name: "defaults",
        from_class: true,
    };
    assert!(target.matches(Some("infra"), Some("defaults")));
    assert!(!target.matches(Some("red"), Some("defaults")));
    assert!(!target.matches(Some("infra"), Some("other")));
    // A hand-written object without them is not a mismatch.
    assert!(target.matches(None, None));
    // The reference of a Gateway without a namespace matches any namespace.
    let unplaced = ConfigurationRef {
        namespace: "",
        ..target
    };
    assert!(unplaced.matches(Some("red"), Some("defaults")));
}
