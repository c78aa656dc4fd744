//! Unit tests of `lookup`: which parameters a Gateway uses, and the Gateway of a
//! Deployment.

use serde_json::{Value, json};

use super::*;

const CONFIGURATION: (&str, &str) = ("meridio-2.nordix.org", "GatewayConfiguration");

fn gateway(infrastructure: Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "red"},
        "spec": {"gatewayClassName": "c", "infrastructure": infrastructure}
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

fn deployment(refs: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "sllbr-x", "namespace": "red", "ownerReferences": refs}
    }))
    .unwrap()
}

#[test]
fn the_gateway_of_a_deployment_is_its_controller_reference() {
    let gateway_ref = |controller: bool| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "name": "gw", "uid": "u-1", "controller": controller})
    };
    let owner = OwnerGateway {
        namespace: Some("red"),
        name: "gw",
        uid: "u-1",
    };
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(true)]))),
        Some(owner)
    );
    // Another version of the group is the same Gateway.
    let mut beta = gateway_ref(true);
    beta["apiVersion"] = json!("gateway.networking.k8s.io/v1beta1");
    assert_eq!(deployment_gateway(&deployment(json!([beta]))), Some(owner));
    // Not the controller; another kind or group as the controller; no references.
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(false)]))),
        None
    );
    let replica_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gw",
        "uid": "u-2", "controller": true});
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(false), replica_set]))),
        None
    );
    let other_group = json!({"apiVersion": "example.com/v1", "kind": "Gateway",
        "name": "gw", "uid": "u-3", "controller": true});
    assert_eq!(deployment_gateway(&deployment(json!([other_group]))), None);
    assert_eq!(deployment_gateway(&deployment(json!([]))), None);
    // Never by its name: a Deployment named like an LB Deployment, with no controller.
    assert_eq!(deployment_gateway(&deployment(Value::Null)), None);
}

#[test]
fn the_gateway_name_label_key_is_of_the_gateway_api_group() {
    assert_eq!(
        GATEWAY_NAME_LABEL.split_once('/').map(|(group, _)| group),
        Some(GATEWAY_API_GROUP)
    );
}

#[test]
fn long_names_are_shortened_as_the_contract_says() {
    let settings = Settings::default();
    // 57 characters: the longest that keeps the plain form with the default prefix.
    let fits = "g".repeat(57);
    assert_eq!(deployment_name(&settings, &fits), format!("sllbr-{fits}"));
    // 58: shortened to 48 characters of the name, `-` and the hash.
    let long = format!("{}-x{}", "g".repeat(47), "y".repeat(9));
    assert_eq!(long.len(), 58);
    let hash = crate::names::name_hash(&long);
    // The 48th character is `-`: trimmed.
    assert_eq!(
        deployment_name(&settings, &long),
        format!("sllbr-{}-{hash}", "g".repeat(47))
    );
    // At 253 characters, the name is 63 long; the label keeps 54 characters.
    let longest = format!("{}.{}", "a".repeat(53), "b".repeat(199));
    assert_eq!(longest.len(), 253);
    let hash = crate::names::name_hash(&longest);
    let name = deployment_name(&settings, &longest);
    assert_eq!(name, format!("sllbr-{}-{hash}", "a".repeat(48)));
    assert_eq!(name.len(), 63);
    assert_eq!(
        gateway_name_label(&longest),
        format!("{}-{hash}", "a".repeat(53))
    );
    // A label value of 63 stays; 64 is shortened.
    assert_eq!(gateway_name_label(&"c".repeat(63)), "c".repeat(63));
    let over = format!("{}_{}", "c".repeat(53), "d".repeat(10));
    assert_eq!(
        gateway_name_label(&over),
        format!("{}-{}", "c".repeat(53), crate::names::name_hash(&over))
    );
    // The longest prefix the settings allow keeps one character of the name.
    let widest = Settings {
        deployment_prefix: "p".repeat(53),
        ..Settings::default()
    };
    let name = deployment_name(&widest, &"z".repeat(20));
    assert_eq!(
        name,
        format!(
            "{}z-{}",
            "p".repeat(53),
            crate::names::name_hash(&"z".repeat(20))
        )
    );
    // An empty prefix.
    let bare = Settings {
        deployment_prefix: String::new(),
        ..Settings::default()
    };
    assert_eq!(deployment_name(&bare, &"q".repeat(63)), "q".repeat(63));
    assert_eq!(
        deployment_name(&bare, &"q".repeat(64)),
        format!(
            "{}-{}",
            "q".repeat(54),
            crate::names::name_hash(&"q".repeat(64))
        )
    );
}
