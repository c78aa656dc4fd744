//! The owned-part render ([`render_owned`] + [`complete`], [`drift_owned`]) against the full
//! render done the straightforward way: clone the observed Deployment, put the template's
//! lists in place, run the rules over the owned values and write them back in place, and
//! apply the container rules as first written. The same object, byte for byte, and the same
//! drift, over generated observed Deployments edited in owned and foreign fields alike.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::owned::SKELETON_PATHS;
use super::{
    DOWNWARD_ENV, GATEWAY_NAME_ENV, Leaves, ROUTER_CONTAINER, apply, complete, name_of, render,
    render_owned,
};
use crate::drift::{Enforcement, drift, drift_owned};
use crate::json;
use crate::nad::NetworkSelection;
use crate::settings::Settings;
use crate::sim::defaulting::apply_server_defaults;
use crate::template::default_template;
use crate::validate::Validated;
use crate::wire::{Deployment, Gateway, GatewayConfiguration};

/// The full update render, the straightforward way.
fn reference(
    settings: &Settings,
    gateway: &Gateway,
    validated: &Validated<'_>,
    template: &Deployment,
    observed: &Deployment,
) -> Deployment {
    const OWNED: [&str; 3] = ["initContainers", "containers", "volumes"];
    let mut object = observed.object.clone();
    let pod_path = ["spec", "template", "spec"];
    let template_pod = json::get(&template.object, &pod_path).and_then(Value::as_object);
    let observed_pod = json::get(&observed.object, &pod_path).and_then(Value::as_object);
    let pod_spec = json::object_mut(&mut object, &pod_path);
    for list in OWNED {
        pod_spec.remove(list);
        let Some(mut new) = template_pod.and_then(|t| t.get(list)).cloned() else {
            continue;
        };
        let old = observed_pod
            .and_then(|o| o.get(list))
            .and_then(Value::as_array);
        if let (Some(new), Some(old), true) = (new.as_array_mut(), old, list != "volumes") {
            for container in new.iter_mut().filter_map(Value::as_object_mut) {
                let Some(previous) = name_of(container).and_then(|name| {
                    old.iter()
                        .filter_map(Value::as_object)
                        .find(|c| name_of(c) == Some(name))
                }) else {
                    continue;
                };
                for key in ["resources", "resizePolicy"] {
                    match previous.get(key) {
                        Some(value) => container.insert(key.to_owned(), value.clone()),
                        None => container.remove(key),
                    };
                }
            }
        }
        pod_spec.insert(list.to_owned(), new);
    }
    // Every other field the template sets in its pod spec, whole.
    for (key, value) in template_pod.into_iter().flatten() {
        let computed = ["serviceAccountName", "readinessGates"].contains(&key.as_str());
        if !value.is_null() && !computed && !OWNED.contains(&key.as_str()) {
            pod_spec.insert(key.clone(), value.clone());
        }
    }
    // The rules over the owned values, written back in place.
    let mut leaves = Leaves::of(&observed.object);
    apply(
        settings,
        gateway,
        validated,
        template,
        Some(observed),
        &mut leaves,
    );
    for path in SKELETON_PATHS {
        if let Some((last, parent)) = path.split_last() {
            let parent = parent.iter().try_fold(&mut object, |m, k| {
                m.get_mut(*k).and_then(Value::as_object_mut)
            });
            if let Some(parent) = parent {
                parent.remove(*last);
            }
        }
    }
    leaves.put(&mut object);
    reference_containers(&mut object, gateway, validated);
    Deployment::from_object(object)
}

/// The container rules of an update, in place, as first written.
fn reference_containers(object: &mut Map<String, Value>, gateway: &Gateway, validated: &Validated) {
    let gateway_name = gateway.metadata.name.as_deref().unwrap_or_default();
    let pod_spec = json::object_mut(object, &["spec", "template", "spec"]);
    for list in ["initContainers", "containers"] {
        let Some(entries) = pod_spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in entries.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(env) = container.get_mut("env").and_then(Value::as_array_mut) {
                for entry in env.iter_mut().filter_map(Value::as_object_mut) {
                    if name_of(entry) == Some(GATEWAY_NAME_ENV) {
                        entry.remove("valueFrom");
                        entry.insert("value".into(), Value::from(gateway_name));
                    }
                }
            }
            if list == "containers" && name_of(container) == Some(ROUTER_CONTAINER) {
                let env = container.entry("env").or_insert_with(|| json!([]));
                if !env.is_array() {
                    *env = json!([]);
                }
                let env = env.as_array_mut().unwrap();
                for (variable, field_path) in DOWNWARD_ENV {
                    if !env
                        .iter()
                        .any(|e| e.get("name").and_then(Value::as_str) == Some(variable))
                    {
                        env.push(json!({
                            "name": variable,
                            "valueFrom": { "fieldRef": { "fieldPath": field_path } },
                        }));
                    }
                }
            }
        }
    }
    let Some(scaling) = &validated.configuration.spec.vertical_scaling else {
        return;
    };
    for entry in scaling.containers.iter().filter(|e| e.enforce_resources) {
        for list in ["initContainers", "containers"] {
            let Some(entries) = pod_spec.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for container in entries.iter_mut().filter_map(Value::as_object_mut) {
                if name_of(container) != Some(entry.name.as_str()) {
                    continue;
                }
                let part = |key: &str| {
                    entry
                        .resources
                        .as_ref()
                        .and_then(|r| r.get(key))
                        .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
                };
                let resources = json::object_mut(container, &["resources"]);
                for key in ["requests", "limits"] {
                    match part(key) {
                        Some(v) => resources.insert(key.to_owned(), v.clone()),
                        None => resources.remove(key),
                    };
                }
                if resources.is_empty() {
                    container.remove("resources");
                }
                match entry.resize_policy.as_ref().filter(|p| !p.is_empty()) {
                    Some(p) => container.insert("resizePolicy".into(), Value::Array(p.clone())),
                    None => container.remove("resizePolicy"),
                };
            }
        }
    }
}

fn gateway() -> Gateway {
    serde_json::from_value(json!({
        "metadata": { "name": "gw", "namespace": "red", "uid": "uid-1", "generation": 4 },
        "spec": { "gatewayClassName": "meridio", "infrastructure": {
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
    serde_json::from_value(json!({
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

fn containers(v: &mut Value) -> Option<&mut Vec<Value>> {
    v.pointer_mut("/spec/template/spec/containers")?
        .as_array_mut()
}

fn edited(mut v: Value, edits: &[Edit]) -> Deployment {
    for e in edits {
        match e {
            Edit::Set(path, value) => {
                let (last, parent) = path.split_last().unwrap();
                if let Value::Object(root) = &mut v {
                    json::object_mut(root, parent).insert((*last).to_owned(), value.clone());
                }
            }
            Edit::Remove(path) => {
                let (last, parent) = path.split_last().unwrap();
                let pointer: String = parent.iter().map(|p| format!("/{p}")).collect();
                if let Some(Value::Object(m)) = v.pointer_mut(&pointer) {
                    m.remove(*last);
                }
            }
            Edit::ReverseContainers => {
                if let Some(c) = containers(&mut v) {
                    c.reverse();
                }
            }
            Edit::ContainerField(i, field, value) => {
                if let Some(Value::Object(c)) = containers(&mut v).and_then(|c| c.get_mut(*i)) {
                    c.insert((*field).to_owned(), value.clone());
                }
            }
            Edit::DropEnv(i) => {
                if let Some(Value::Array(env)) = containers(&mut v)
                    .and_then(|c| c.get_mut(*i))
                    .and_then(|c| c.get_mut("env"))
                {
                    env.pop();
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
    fn the_owned_part_renders_and_drifts_like_the_full_render(
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
        let full = reference(&settings, &gateway, &validated, &template, &observed);
        let owned = render_owned(&settings, &gateway, &validated, &template, &observed);
        let enforcement = Enforcement::of(&cfg);
        prop_assert_eq!(
            drift_owned(&owned, &observed, &enforcement),
            drift(&full, &observed, &enforcement)
        );
        prop_assert_eq!(
            serde_json::to_string(&complete(&observed, owned)).unwrap(),
            serde_json::to_string(&full).unwrap()
        );
    }
}

#[test]
fn the_owned_part_leaves_out_what_only_the_observed_object_has() {
    let settings = Settings::default();
    let (gateway, template) = (gateway(), default_template());
    let cfg = configuration(1, 2, (true, true));
    let validated = Validated {
        configuration: &cfg,
        networks: vec![sel("vlan-100", "ext0")],
        ipv4: true,
        ipv6: false,
    };
    let mut observed = render(&settings, &gateway, &validated, &template, None);
    apply_server_defaults(&mut observed);
    observed
        .object
        .insert("status".into(), json!({ "replicas": 2 }));
    let owned = render_owned(&settings, &gateway, &validated, &template, &observed);
    let mut skeleton = Map::new();
    owned.leaves.clone().put(&mut skeleton);
    let keys = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&skeleton), ["apiVersion", "kind", "metadata", "spec"]);
    let spec = skeleton["spec"].as_object().unwrap();
    assert_eq!(keys(spec), ["replicas", "selector", "template"]);
    assert!(observed.object["spec"].get("strategy").is_some());
    assert!(drift_owned(&owned, &observed, &Enforcement::of(&cfg)).is_empty());
}

#[test]
fn a_steady_state_update_render_copies_no_owned_value() {
    // The template sets `affinity`: its anti-affinity terms, rendered, are the observed ones,
    // which stay borrowed.
    let settings = Settings::default();
    let (gateway, template) = (gateway(), template(3));
    let cfg = configuration(1, 2, (true, true));
    let validated = Validated {
        configuration: &cfg,
        networks: vec![sel("vlan-100", "ext0")],
        ipv4: true,
        ipv6: false,
    };
    let mut observed = render(&settings, &gateway, &validated, &template, None);
    apply_server_defaults(&mut observed);
    let owned = render_owned(&settings, &gateway, &validated, &template, &observed);
    assert!(drift_owned(&owned, &observed, &Enforcement::of(&cfg)).is_empty());
    let copied: Vec<_> = SKELETON_PATHS
        .iter()
        .zip(&owned.leaves.0)
        .filter(|(_, leaf)| matches!(leaf, Some(std::borrow::Cow::Owned(_))))
        .map(|(path, _)| path.join("."))
        .collect();
    assert!(copied.is_empty(), "copied: {copied:?}");
    // Another value in a term (not an `app` one) is the template's again.
    let mut edited = observed.clone();
    let terms = "/spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution";
    edited.object["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        [0]["topologyKey"] = json!("zone");
    let owned = render_owned(&settings, &gateway, &validated, &template, &edited);
    assert_eq!(
        drift_owned(&owned, &edited, &Enforcement::of(&cfg)),
        [
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"
        ]
    );
    let full = complete(&edited, owned);
    assert_eq!(
        Value::Object(full.object).pointer(terms),
        Value::Object(observed.object.clone()).pointer(terms)
    );
}
