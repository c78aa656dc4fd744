//! The owned part of a render against the whole render it completes to: drift of the
//! part ([`drift_owned`]) finds what the generic walk ([`drift`]) finds in the whole
//! Deployment, over generated observed Deployments edited in owned and foreign fields alike.

use crate::wire::tree::{Value, tree_json as json};
use proptest::prelude::*;

use super::{complete, render, render_owned};
use crate::drift::{Enforcement, drift, drift_owned};
use crate::json;
use crate::nad::NetworkSelection;
use crate::settings::Settings;
use crate::sim::defaulting::apply_server_defaults;
use crate::template::default_template;
use crate::validate::Validated;
use crate::wire::{Deployment, Gateway, GatewayConfiguration};

fn gateway() -> Gateway {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": "gw", "namespace": "red", "uid": "uid-1", "generation": 4 },
        "spec": { "gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {
            "labels": { "team": "blue" }, "annotations": { "note": "n" },
            "parametersRef": { "group": "meridio-2.nordix.org",
                               "kind": "GatewayConfiguration", "name": "cfg" } } }
    }))
    .unwrap()
}

fn sel(name: &str, interface: &str) -> NetworkSelection {
    NetworkSelection {
        name: name.into(),
        namespace: "red".into(),
        interface: interface.into(),
    }
}

fn template(variant: u8) -> Deployment {
    let mut t = default_template();
    let spec = &mut t.object["spec"]["template"]["spec"];
    match variant {
        1 => {
            spec["initContainers"] = json!([
                { "name": "init", "image": "i", "env": [{ "name": "MERIDIO_GATEWAY_NAME" }] },
                { "name": "init", "image": "j", "resources": { "limits": { "cpu": "1" } } }
            ])
        }
        2 => {
            spec.as_object_mut().unwrap().remove("volumes");
        }
        3 => {
            spec["tolerations"] = json!([{ "key": "a", "operator": "Exists" }]);
            spec["nodeSelector"] = json!({ "zone": "a" });
            spec["terminationGracePeriodSeconds"] = json!(5);
            spec["securityContext"] = json!({ "runAsNonRoot": true });
            spec["affinity"]["nodeAffinity"] = json!({ "preferredDuringSchedulingIgnoredDuringExecution": [
                { "weight": 1, "preference": { "matchExpressions": [
                    { "key": "zone", "operator": "In", "values": ["a"] }] } }] });
        }
        4 => {
            spec["affinity"] = json!({ "nodeAffinity": {} });
            spec["priorityClassName"] = Value::Null;
            spec["hostNetwork"] = json!(true);
        }
        _ => {}
    }
    t
}

fn configuration(generation: i64, replicas: i32, enforce: (bool, bool)) -> GatewayConfiguration {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": "cfg", "namespace": "red", "generation": generation },
        "spec": {
            "horizontalScaling": { "replicas": replicas, "enforceReplicas": enforce.0 },
            "verticalScaling": { "containers": [
                { "name": "router", "enforceResources": enforce.1,
                  "resources": { "requests": { "cpu": "0.5" }, "limits": { "memory": "1Gi" } } },
                { "name": "init", "enforceResources": enforce.1, "resources": {} }
            ] }
        }
    }))
    .unwrap()
}

/// One edit of the observed object, by someone else or by a newer spec.
#[derive(Debug, Clone)]
enum Edit {
    Set(Vec<&'static str>, Value),
    Remove(Vec<&'static str>),
    ReverseContainers,
    ContainerField(usize, &'static str, Value),
    DropEnv(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let values = prop_oneof![
        Just(json!("x")),
        Just(json!(3)),
        Just(Value::Null),
        Just(json!({})),
        Just(json!([])),
        Just(json!({ "k": "v" })),
        Just(json!([{ "conditionType": "someone/else" }])),
        Just(json!([{ "name": "extra", "image": "e" }])),
        Just(json!({ "requests": { "cpu": "500m" }, "limits": { "memory": "1024Mi" } })),
    ];
    let paths = prop_oneof![
        Just(vec!["metadata"]),
        Just(vec!["metadata", "labels"]),
        Just(vec!["metadata", "labels", "app"]),
        Just(vec!["metadata", "labels", "foreign"]),
        Just(vec!["metadata", "annotations"]),
        Just(vec![
            "metadata",
            "annotations",
            "meridio-2.nordix.org/gatewayconfiguration-generation"
        ]),
        Just(vec!["metadata", "ownerReferences"]),
        Just(vec!["metadata", "resourceVersion"]),
        Just(vec!["spec"]),
        Just(vec!["spec", "replicas"]),
        Just(vec!["spec", "selector"]),
        Just(vec!["spec", "strategy"]),
        Just(vec!["spec", "template"]),
        Just(vec!["spec", "template", "metadata"]),
        Just(vec!["spec", "template", "metadata", "labels", "app"]),
        Just(vec![
            "spec",
            "template",
            "metadata",
            "annotations",
            "k8s.v1.cni.cncf.io/networks"
        ]),
        Just(vec!["spec", "template", "spec"]),
        Just(vec!["spec", "template", "spec", "affinity"]),
        Just(vec![
            "spec",
            "template",
            "spec",
            "affinity",
            "podAntiAffinity"
        ]),
        Just(vec!["spec", "template", "spec", "containers"]),
        Just(vec!["spec", "template", "spec", "initContainers"]),
        Just(vec!["spec", "template", "spec", "volumes"]),
        Just(vec!["spec", "template", "spec", "readinessGates"]),
        Just(vec!["spec", "template", "spec", "serviceAccountName"]),
        Just(vec!["spec", "template", "spec", "dnsPolicy"]),
        Just(vec!["spec", "template", "spec", "tolerations"]),
        Just(vec!["spec", "template", "spec", "nodeSelector"]),
        Just(vec!["spec", "template", "spec", "securityContext"]),
        Just(vec![
            "spec",
            "template",
            "spec",
            "affinity",
            "podAntiAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]),
        Just(vec!["status"]),
    ];
    let fields = prop_oneof![
        Just("image"),
        Just("resources"),
        Just("resizePolicy"),
        Just("name"),
        Just("env"),
    ];
    prop_oneof![
        4 => (paths.clone(), values.clone()).prop_map(|(p, v)| Edit::Set(p, v)),
        2 => paths.prop_map(Edit::Remove),
        1 => Just(Edit::ReverseContainers),
        3 => (0usize..3, fields, values).prop_map(|(i, f, v)| Edit::ContainerField(i, f, v)),
        1 => (0usize..3).prop_map(Edit::DropEnv),
    ]
}

fn containers(v: &mut Value) -> Option<&mut [Value]> {
    v.pointer_mut("/spec/template/spec/containers")?
        .as_array_mut()
}

fn edited(mut v: Value, edits: &[Edit]) -> Deployment {
    for e in edits {
        match e {
            Edit::Set(path, value) => {
                let (last, parent) = path.split_last().unwrap();
                if let Value::Object(root) = &mut v {
                    json::object_mut(root, parent).insert(*last, value.clone());
                }
            }
            Edit::Remove(path) => {
                let (last, parent) = path.split_last().unwrap();
                let pointer: String = parent.iter().map(|p| format!("/{p}")).collect();
                if let Some(Value::Object(m)) = v.pointer_mut(&pointer) {
                    m.remove(last);
                }
            }
            Edit::ReverseContainers => {
                if let Some(c) = containers(&mut v) {
                    c.reverse();
                }
            }
            Edit::ContainerField(i, field, value) => {
                if let Some(Value::Object(c)) = containers(&mut v).and_then(|c| c.get_mut(*i)) {
                    c.insert(*field, value.clone());
                }
            }
            Edit::DropEnv(i) => {
                if let Some(env @ Value::Array(_)) = containers(&mut v)
                    .and_then(|c| c.get_mut(*i))
                    .and_then(|c| c.get_mut("env"))
                {
                    let mut list = env.as_array().unwrap_or_default().to_vec();
                    list.pop();
                    *env = Value::from(list);
                }
            }
        }
    }
    let Value::Object(object) = v else {
        panic!("the observed object stays an object")
    };
    Deployment::from_object(object)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn drift_of_the_owned_part_is_drift_of_the_whole_render(
        variant in 0u8..5,
        created_variant in 0u8..5,
        created_with in (1i64..4, 1i32..4, any::<(bool, bool)>()),
        now in (1i64..4, 1i32..4, any::<(bool, bool)>()),
        networks in 0usize..3,
        families in any::<(bool, bool)>(),
        edits in proptest::collection::vec(edit(), 0..5),
    ) {
        let settings = Settings::default();
        let (gateway, template) = (gateway(), template(variant));
        let nads = [sel("vlan-100", "ext0"), sel("vlan-200", "ext1")];
        let validated_for = |cfg| Validated {
            configuration: cfg,
            networks: nads.get(..networks).unwrap_or_default().to_vec(),
            ipv4: families.0,
            ipv6: families.1,
        };
        let first = configuration(created_with.0, created_with.1, created_with.2);
        // Created from this template or an older one: a new template reaches it on update.
        let created_from = self::template(created_variant);
        let mut stored = render(&settings, &gateway, &validated_for(&first), &created_from, None);
        apply_server_defaults(&mut stored);
        let observed = edited(Value::Object(stored.object), &edits);

        let cfg = configuration(now.0, now.1, now.2);
        let validated = validated_for(&cfg);
        let owned = render_owned(&settings, &gateway, &validated, &template, Some(&observed));
        let enforcement = Enforcement::of(&settings, &cfg);
        let fast = drift_owned(&owned, &observed, &enforcement);
        let whole = complete(&observed, owned);
        prop_assert_eq!(fast, drift(&whole, &observed, &enforcement));
    }
}
