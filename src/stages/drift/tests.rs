use super::*;
use crate::sim::defaulting::apply_server_defaults;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const GEN: &str = "meridio-2.nordix.org/gatewayconfiguration-generation";
const ROUTER: &str = "spec.template.spec.containers[router]";

/// A Deployment as the renderer writes it.
fn rendered() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "lb-gw",
            "namespace": "red",
            "labels": { "app": "lb-gw", "gateway.networking.k8s.io/gateway-name": "gw" },
            "annotations": { GEN: "3" },
            "ownerReferences": [{
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "name": "gw", "uid": "u-1", "controller": true, "blockOwnerDeletion": true
            }]
        },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": "lb-gw" } },
            "template": {
                "metadata": {
                    "labels": { "app": "lb-gw" },
                    "annotations": {
                        "k8s.v1.cni.cncf.io/networks":
                            "[{\"name\":\"vlan-100\",\"namespace\":\"red\",\"interface\":\"net1\"}]"
                    }
                },
                "spec": {
                    "serviceAccountName": "lb",
                    "containers": [
                        {
                            "name": "loadbalancer",
                            "image": "registry.example/lb:1.2",
                            "args": ["--verbose", "--port=80"],
                            "env": [{ "name": "MERIDIO_GATEWAY_NAME", "value": "gw" }],
                            "resources": {
                                "requests": { "cpu": "0.5", "memory": "1024Mi" },
                                "limits": { "cpu": "1000m", "memory": "1Gi" }
                            },
                            "ports": [{ "name": "http", "containerPort": 80 }],
                            "volumeMounts": [
                                { "name": "tmp", "mountPath": "/tmp" },
                                { "name": "run", "mountPath": "/run" }
                            ]
                        },
                        {
                            "name": "router",
                            "image": "registry.example/router:latest",
                            "env": [
                                { "name": "MERIDIO_GATEWAY_NAME", "value": "gw" },
                                { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
                                { "name": "POD_NAMESPACE", "valueFrom": { "fieldRef": { "fieldPath": "metadata.namespace" } } },
                                { "name": "POD_UID", "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } }
                            ],
                            "resources": {
                                "requests": { "cpu": "1e3", "memory": "0.5Gi" },
                                "limits": { "cpu": "2", "memory": "1536Mi" }
                            }
                        }
                    ],
                    "volumes": [
                        { "name": "tmp", "emptyDir": { "sizeLimit": "0.5Gi" } },
                        { "name": "run", "emptyDir": {} }
                    ],
                    "readinessGates": [
                        { "conditionType": "meridio-2.nordix.org/ipv4-connectivity" },
                        { "conditionType": "meridio-2.nordix.org/ipv6-connectivity" }
                    ]
                }
            }
        }
    })
}

fn dep(v: Value) -> Deployment {
    serde_json::from_value(v).unwrap()
}

/// What the API server returns after storing `v`: defaulted, with server-owned fields,
/// another controller's label and annotation, and a status.
fn stored(v: &Value) -> Value {
    let mut d = dep(v.clone());
    apply_server_defaults(&mut d);
    let mut o = serde_json::to_value(d).unwrap();
    let meta = o["metadata"].as_object_mut().unwrap();
    meta.insert("uid".into(), json!("d-1"));
    meta.insert("resourceVersion".into(), json!("12345"));
    meta.insert("generation".into(), json!(4));
    meta.insert("creationTimestamp".into(), json!("2026-01-01T00:00:00Z"));
    meta.insert("managedFields".into(), json!([{ "manager": "kubectl" }]));
    o["metadata"]["labels"]["team"] = json!("blue");
    o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!("x");
    o["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
        json!("2026-01-01T00:00:00Z");
    o["status"] = json!({ "replicas": 2, "observedGeneration": 4 });
    o
}

fn all_enforced() -> Enforcement {
    Enforcement {
        replicas: true,
        resources: vec!["loadbalancer".into(), "router".into()],
        ..Enforcement::default()
    }
}

fn drift_of(desired: &Value, observed: &Value, e: &Enforcement) -> Vec<String> {
    drift(&dep(desired.clone()), &dep(observed.clone()), e)
}

/// Drift after changing the stored copy of the rendered Deployment with `change`.
fn changed(change: impl FnOnce(&mut Value)) -> Vec<String> {
    let desired = rendered();
    let mut observed = stored(&desired);
    change(&mut observed);
    drift_of(&desired, &observed, &all_enforced())
}

fn container<'v>(o: &'v mut Value, name: &str) -> &'v mut Value {
    o["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == name)
        .unwrap()
}

fn env<'v>(o: &'v mut Value, name: &str) -> &'v mut Vec<Value> {
    container(o, name)["env"].as_array_mut().unwrap()
}

#[test]
fn rendered_then_defaulted_is_not_drift() {
    let desired = rendered();
    let observed = stored(&desired);
    // The defaulting really changed things, quantities included.
    assert_ne!(desired, observed);
    let lb = &observed["spec"]["template"]["spec"]["containers"][0]["resources"];
    assert_eq!(lb["requests"], json!({ "cpu": "500m", "memory": "1Gi" }));
    assert_eq!(lb["limits"]["cpu"], "1");
    let router = &observed["spec"]["template"]["spec"]["containers"][1]["resources"];
    assert_eq!(
        router["requests"],
        json!({ "cpu": "1k", "memory": "512Mi" })
    );
    for e in [Enforcement::default(), all_enforced()] {
        assert_eq!(drift_of(&desired, &observed, &e), Vec::<String>::new());
        assert_eq!(drift_of(&desired, &desired, &e), Vec::<String>::new());
    }
}

#[test]
fn other_quantity_spellings_and_reordering_are_not_drift() {
    let desired = rendered();
    let mut observed = stored(&desired);
    let lb = container(&mut observed, "loadbalancer");
    lb["resources"]["requests"]["cpu"] = json!("0.500");
    lb["resources"]["requests"]["memory"] = json!("1073741824");
    let router = container(&mut observed, "router");
    router["resources"]["requests"]["cpu"] = json!("1k");
    router["resources"]["limits"]["cpu"] = json!(2);
    // Keyed lists pair by key, whatever the order.
    env(&mut observed, "router").reverse();
    observed["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .reverse();
    assert_eq!(
        drift_of(&desired, &observed, &all_enforced()),
        Vec::<String>::new()
    );
}

#[test]
fn image_change() {
    let d = changed(|o| container(o, "router")["image"] = json!("registry.example/router:2"));
    assert_eq!(d, [format!("{ROUTER}.image")]);
}

#[test]
fn env_value_change() {
    let d = changed(|o| env(o, "loadbalancer")[0]["value"] = json!("other"));
    assert_eq!(
        d,
        ["spec.template.spec.containers[loadbalancer].env[MERIDIO_GATEWAY_NAME].value"]
    );
}

#[test]
fn env_value_source_is_compared_exactly() {
    let lb = "spec.template.spec.containers[loadbalancer].env[MERIDIO_GATEWAY_NAME]";
    // value against valueFrom: drift.
    let d = changed(|o| {
        let entry = env(o, "loadbalancer")[0].as_object_mut().unwrap();
        entry.remove("value");
        entry.insert(
            "valueFrom".into(),
            json!({ "fieldRef": { "fieldPath": "metadata.name" } }),
        );
    });
    assert_eq!(d, [format!("{lb}.value"), format!("{lb}.valueFrom")]);
    // valueFrom against value: drift, though the desired valueFrom is there in full.
    let d = changed(|o| {
        let entry = env(o, "router")
            .iter_mut()
            .find(|e| e["name"] == "POD_UID")
            .unwrap();
        entry["value"] = json!("fixed");
    });
    assert_eq!(d, [format!("{ROUTER}.env[POD_UID].value")]);
    // An empty value is no value: the API server drops it.
    let mut desired = rendered();
    desired["spec"]["template"]["spec"]["containers"][1]["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "name": "EMPTY", "value": "" }));
    let mut observed = stored(&desired);
    let env = observed["spec"]["template"]["spec"]["containers"][1]["env"]
        .as_array_mut()
        .unwrap();
    env.last_mut()
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("value");
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
}

#[test]
fn every_pod_template_server_default_is_not_drift() {
    let mut desired = rendered();
    let pod = &mut desired["spec"]["template"]["spec"];
    pod["ephemeralContainers"] = json!([{ "name": "debug", "image": "busybox" }]);
    pod["tolerations"] = json!([{ "key": "k", "operator": "Exists" }]);
    pod["volumes"] = json!([
        { "name": "bare" },
        { "name": "host", "hostPath": { "path": "/x" } },
        { "name": "down", "downwardAPI": { "items": [
            { "path": "q", "resourceFieldRef": { "resource": "limits.cpu" } }] } },
        { "name": "proj", "projected": { "sources": [
            { "serviceAccountToken": { "path": "t" } }] } },
        { "name": "rbd", "rbd": { "monitors": ["m"], "image": "i" } }
    ]);
    let router = &mut pod["containers"][1];
    router["ports"] = json!([{ "containerPort": 179 }]);
    router["livenessProbe"] = json!({ "httpGet": { "port": 80 } });
    router["lifecycle"] = json!({ "preStop": { "httpGet": { "port": 80 } } });
    router["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "name": "MEM", "valueFrom": { "resourceFieldRef": { "resource": "limits.memory" } } }));
    let observed = stored(&desired);
    assert_ne!(
        observed["spec"]["template"]["spec"],
        desired["spec"]["template"]["spec"]
    );
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
}

#[test]
fn requests_finer_than_a_milli_match_what_the_server_stores() {
    let mut desired = rendered();
    let router = &mut desired["spec"]["template"]["spec"]["containers"][1];
    router["resources"] = json!({ "requests": { "cpu": "100u" }, "limits": { "cpu": "1500u" } });
    desired["spec"]["template"]["spec"]["volumes"] =
        json!([{ "name": "v", "emptyDir": { "sizeLimit": "1500u" } }]);
    let observed = stored(&desired);
    let router = &observed["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(router["resources"]["requests"]["cpu"], "1m");
    assert_eq!(router["resources"]["limits"]["cpu"], "2m");
    // Enforced (exact) or not, the rounded value is the desired one.
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    // A sizeLimit is not a resource list: not rounded, and a real change stays drift.
    let mut changed = observed.clone();
    changed["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = json!("2m");
    assert_eq!(
        drift_of(&desired, &changed, &Enforcement::default()),
        ["spec.template.spec.volumes[v].emptyDir.sizeLimit"]
    );
    let mut changed = observed.clone();
    changed["spec"]["template"]["spec"]["containers"][1]["resources"]["requests"]["cpu"] =
        json!("2m");
    assert_eq!(
        drift_of(&desired, &changed, &Enforcement::default()),
        [format!("{ROUTER}.resources.requests.cpu")]
    );
}

#[test]
fn string_map_entries_with_empty_values_are_desired() {
    let mut desired = rendered();
    desired["spec"]["template"]["spec"]["nodeSelector"] = json!({ "role/lb": "" });
    let observed = stored(&desired);
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    let mut without = observed.clone();
    without["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("nodeSelector");
    assert_eq!(
        drift_of(&desired, &without, &Enforcement::default()),
        ["spec.template.spec.nodeSelector[role/lb]"]
    );
}

#[test]
fn lists_without_a_merge_key_are_compared_whole_in_order() {
    let tolerations = json!([
        { "key": "a", "operator": "Exists" },
        { "key": "b", "operator": "Equal", "value": "x" }
    ]);
    let mut desired = rendered();
    desired["spec"]["template"]["spec"]["tolerations"] = tolerations.clone();
    let observed = stored(&desired);
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    let path = "spec.template.spec.tolerations";
    let mut reordered = observed.clone();
    reordered[path.split('.').next().unwrap()]["template"]["spec"]["tolerations"] =
        json!([tolerations[1], tolerations[0]]);
    let d = drift_of(&desired, &reordered, &Enforcement::default());
    assert!(
        !d.is_empty() && d.iter().all(|p| p.starts_with(path)),
        "{d:?}"
    );
    let mut shorter = observed.clone();
    shorter["spec"]["template"]["spec"]["tolerations"] = json!([tolerations[0]]);
    assert_eq!(
        drift_of(&desired, &shorter, &Enforcement::default()),
        [path]
    );
}

#[test]
fn env_removed_names_the_element() {
    let d = changed(|o| env(o, "router").retain(|e| e["name"] != "POD_UID"));
    assert_eq!(d, [format!("{ROUTER}.env[POD_UID]")]);
}

#[test]
fn downward_api_field_change() {
    let d = changed(|o| {
        env(o, "router")[3]["valueFrom"]["fieldRef"]["fieldPath"] = json!("metadata.name");
    });
    assert_eq!(
        d,
        [format!(
            "{ROUTER}.env[POD_UID].valueFrom.fieldRef.fieldPath"
        )]
    );
}

#[test]
fn container_added_names_it() {
    let d = changed(|o| {
        o["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "name": "debug", "image": "busybox" }));
    });
    assert_eq!(d, ["spec.template.spec.containers[debug]"]);
}

#[test]
fn container_removed_names_it() {
    let d = changed(|o| {
        o["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["name"] != "loadbalancer");
    });
    assert_eq!(d, ["spec.template.spec.containers[loadbalancer]"]);
}

#[test]
fn networks_annotation_removed_or_changed() {
    let path = "spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]";
    let removed = changed(|o| {
        o["spec"]["template"]["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(NETWORKS_ANNOTATION);
    });
    assert_eq!(removed, [path]);
    let edited = changed(|o| {
        o["spec"]["template"]["metadata"]["annotations"][NETWORKS_ANNOTATION] = json!("[]");
    });
    assert_eq!(edited, [path]);
}

#[test]
fn networks_annotation_only_observed_is_drift() {
    let mut desired = rendered();
    desired["spec"]["template"]["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(NETWORKS_ANNOTATION);
    let observed = stored(&rendered());
    assert_eq!(
        drift_of(&desired, &observed, &Enforcement::default()),
        ["spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]"]
    );
}

#[test]
fn readiness_gate_removed() {
    let d = changed(|o| {
        o["spec"]["template"]["spec"]["readinessGates"]
            .as_array_mut()
            .unwrap()
            .remove(1);
    });
    assert_eq!(
        d,
        ["spec.template.spec.readinessGates[meridio-2.nordix.org/ipv6-connectivity]"]
    );
}

#[test]
fn readiness_gates_observed_but_not_desired() {
    let observed = stored(&rendered());
    let want = [
        "spec.template.spec.readinessGates[meridio-2.nordix.org/ipv4-connectivity]",
        "spec.template.spec.readinessGates[meridio-2.nordix.org/ipv6-connectivity]",
    ];
    let mut absent = rendered();
    absent["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("readinessGates");
    assert_eq!(drift_of(&absent, &observed, &Enforcement::default()), want);
    let mut empty = rendered();
    empty["spec"]["template"]["spec"]["readinessGates"] = json!([]);
    assert_eq!(drift_of(&empty, &observed, &Enforcement::default()), want);
    // Neither side has gates: fine.
    let bare = stored(&absent);
    assert!(drift_of(&absent, &bare, &Enforcement::default()).is_empty());
}

#[test]
fn enforced_replicas_changed() {
    let d = changed(|o| o["spec"]["replicas"] = json!(5));
    assert_eq!(d, ["spec.replicas"]);
}

#[test]
fn enforced_replicas_absent_means_one() {
    let mut desired = rendered();
    desired["spec"].as_object_mut().unwrap().remove("replicas");
    let observed = stored(&desired);
    assert_eq!(observed["spec"]["replicas"], 1);
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    let mut scaled = observed.clone();
    scaled["spec"]["replicas"] = json!(3);
    assert_eq!(
        drift_of(&desired, &scaled, &all_enforced()),
        ["spec.replicas"]
    );
}

#[test]
fn autoscaled_replicas_are_not_drift() {
    let mut observed = stored(&rendered());
    observed["spec"]["replicas"] = json!(7);
    // The renderer keeps the observed value when replicas are not enforced...
    let mut desired = rendered();
    desired["spec"]["replicas"] = json!(7);
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    // ...and even a stale desired value is not compared then.
    assert!(drift_of(&rendered(), &observed, &Enforcement::default()).is_empty());
    // Enforced, the same difference is drift.
    let enforced = Enforcement {
        replicas: true,
        ..Enforcement::default()
    };
    assert_eq!(
        drift_of(&rendered(), &observed, &enforced),
        ["spec.replicas"]
    );
}

#[test]
fn enforced_resources_cleared() {
    // The configuration cleared the router's resources; the cluster still has them.
    let mut desired = rendered();
    container(&mut desired, "router")["resources"] = json!({});
    let observed = stored(&rendered());
    let want = [
        format!("{ROUTER}.resources.limits.cpu"),
        format!("{ROUTER}.resources.limits.memory"),
        format!("{ROUTER}.resources.requests.cpu"),
        format!("{ROUTER}.resources.requests.memory"),
    ];
    assert_eq!(drift_of(&desired, &observed, &all_enforced()), want);
    // Not enforced: the extra observed resources belong to someone else.
    let lb_only = Enforcement {
        replicas: true,
        resources: vec!["loadbalancer".into()],
        ..Enforcement::default()
    };
    assert!(drift_of(&desired, &observed, &lb_only).is_empty());
}

#[test]
fn many_enforced_containers_are_found_through_the_index() {
    // More enforced names than INDEX_FROM: the lookups go through ByName's index, and
    // find the same containers a scan would (the first of a name).
    let mut desired = rendered();
    let list = desired["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap();
    let router = list[1].clone();
    for i in 0..(2 * INDEX_FROM) {
        let mut c = router.clone();
        c["name"] = json!(format!("extra-{i}"));
        list.push(c);
    }
    let mut observed = stored(&desired);
    container(&mut observed, "extra-7")["resources"]["requests"]["cpu"] = json!("999m");
    let names = (0..(2 * INDEX_FROM))
        .map(|i| format!("extra-{i}"))
        .chain(["router".to_owned(), "missing".to_owned()]);
    let e = Enforcement {
        replicas: true,
        resources: names.collect(),
        ..Enforcement::default()
    };
    assert!(e.resources.len() >= INDEX_FROM);
    assert_eq!(
        drift_of(&desired, &observed, &e),
        ["spec.template.spec.containers[extra-7].resources.requests.cpu"]
    );
}

#[test]
fn enforced_resources_extra_and_changed() {
    let d = changed(|o| {
        let r = &mut container(o, "router")["resources"];
        r["limits"]["nvidia.com/gpu"] = json!("1");
        r["requests"]["cpu"] = json!("999m");
    });
    assert_eq!(
        d,
        [
            format!("{ROUTER}.resources.limits[nvidia.com/gpu]"),
            format!("{ROUTER}.resources.requests.cpu"),
        ]
    );
}

#[test]
fn unenforced_resources_compare_as_subset() {
    let desired = rendered();
    let mut observed = stored(&desired);
    container(&mut observed, "router")["resources"]["limits"]["ephemeral-storage"] = json!("1Gi");
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    container(&mut observed, "router")["resources"]["limits"]["cpu"] = json!("3");
    assert_eq!(
        drift_of(&desired, &observed, &Enforcement::default()),
        [format!("{ROUTER}.resources.limits.cpu")]
    );
}

#[test]
fn generation_annotation_changed_or_removed() {
    let path = format!("metadata.annotations[{GEN}]");
    let changed_value = changed(|o| o["metadata"]["annotations"][GEN] = json!("2"));
    assert_eq!(changed_value, std::slice::from_ref(&path));
    let removed = changed(|o| {
        o["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(GEN);
    });
    assert_eq!(removed, [path]);
}

#[test]
fn uid_annotation_is_compared_exactly() {
    let key = "meridio-2.nordix.org/gatewayconfiguration-uid";
    let path = format!("metadata.annotations[{key}]");
    let mut desired = rendered();
    desired["metadata"]["annotations"][key] = json!("uid-new");
    let observed = stored(&desired);
    assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    let mut old = observed.clone();
    old["metadata"]["annotations"][key] = json!("uid-old");
    assert_eq!(
        drift_of(&desired, &old, &Enforcement::default()),
        std::slice::from_ref(&path)
    );
    // Missing on the Deployment (written before the annotation existed): drift.
    let mut missing = observed.clone();
    missing["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(key);
    assert_eq!(
        drift_of(&desired, &missing, &Enforcement::default()),
        std::slice::from_ref(&path)
    );
    // Only on the Deployment (a configuration without uid): drift too.
    let plain = rendered();
    assert_eq!(drift_of(&plain, &observed, &Enforcement::default()), [path]);
}

#[test]
fn generation_annotation_only_observed_is_drift() {
    // The keys of the settings' condition domain are owned; another domain's are not.
    let other = "example.com/gatewayconfiguration-generation";
    let mut desired = rendered();
    desired["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(GEN);
    let mut observed = stored(&desired);
    observed["metadata"]["annotations"][other] = json!("3");
    observed["metadata"]["annotations"][GEN] = json!("3");
    assert_eq!(
        drift_of(&desired, &observed, &Enforcement::default()),
        [format!("metadata.annotations[{GEN}]")]
    );
    let settings = Settings {
        condition_domain: "example.com".into(),
        ..Settings::default()
    };
    let e = Enforcement::of(&settings, &GatewayConfiguration::default());
    assert_eq!(
        drift_of(&desired, &observed, &e),
        [format!("metadata.annotations[{other}]")]
    );
}

#[test]
fn selector_is_exact() {
    let changed_label = changed(|o| o["spec"]["selector"]["matchLabels"]["app"] = json!("x"));
    assert_eq!(changed_label, ["spec.selector.matchLabels.app"]);
    let extra = changed(|o| o["spec"]["selector"]["matchLabels"]["tier"] = json!("lb"));
    assert_eq!(extra, ["spec.selector.matchLabels.tier"]);
    let expressions = changed(|o| {
        o["spec"]["selector"]["matchExpressions"] = json!([{ "key": "a", "operator": "Exists" }]);
    });
    assert_eq!(expressions, ["spec.selector.matchExpressions"]);
}

#[test]
fn foreign_labels_and_annotations_are_not_drift() {
    let desired = rendered();
    let mut observed = stored(&desired);
    observed["metadata"]["labels"]["x/y"] = json!("z");
    observed["spec"]["template"]["metadata"]["labels"]["extra"] = json!("1");
    observed["spec"]["template"]["metadata"]["annotations"]["foo"] = json!("bar");
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
}

#[test]
fn server_owned_fields_are_ignored_on_both_sides() {
    let mut desired = rendered();
    desired["metadata"]["resourceVersion"] = json!("1");
    desired["metadata"]["uid"] = json!("old");
    desired["status"] = json!({ "replicas": 9 });
    let mut observed = stored(&rendered());
    observed.as_object_mut().unwrap().remove("apiVersion");
    observed.as_object_mut().unwrap().remove("kind");
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
}

#[test]
fn empty_desired_values_match_dropped_fields() {
    let mut desired = rendered();
    let lb = container(&mut desired, "loadbalancer");
    lb["command"] = json!([]);
    lb["securityContext"] = json!({ "capabilities": {} });
    lb["workingDir"] = json!("");
    lb["stdin"] = json!(false);
    lb["livenessProbe"] = Value::Null;
    let observed = stored(&rendered());
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    // A non-empty value the server never had is drift, at the leaf.
    let lb = container(&mut desired, "loadbalancer");
    lb["securityContext"] = json!({ "capabilities": { "add": ["NET_ADMIN"] } });
    assert_eq!(
        drift_of(&desired, &observed, &all_enforced()),
        ["spec.template.spec.containers[loadbalancer].securityContext.capabilities.add"]
    );
}

#[test]
fn index_lists_and_keyed_fallback() {
    let args = changed(|o| container(o, "loadbalancer")["args"][1] = json!("--port=81"));
    assert_eq!(
        args,
        ["spec.template.spec.containers[loadbalancer].args[1]"]
    );
    let shorter = changed(|o| {
        container(o, "loadbalancer")["args"]
            .as_array_mut()
            .unwrap()
            .pop();
    });
    assert_eq!(
        shorter,
        ["spec.template.spec.containers[loadbalancer].args"]
    );
    // A port without a name: the ports list is paired by index.
    let unnamed = changed(|o| {
        container(o, "loadbalancer")["ports"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "containerPort": 81 }));
    });
    assert_eq!(
        unnamed,
        ["spec.template.spec.containers[loadbalancer].ports"]
    );
    let mount = changed(|o| {
        container(o, "loadbalancer")["volumeMounts"][1]["readOnly"] = json!(true);
        container(o, "loadbalancer")["volumeMounts"][0]["name"] = json!("other");
    });
    assert_eq!(
        mount,
        ["spec.template.spec.containers[loadbalancer].volumeMounts[/tmp].name"]
    );
}

#[test]
fn duplicate_keys_and_volume_quantities() {
    let dup = changed(|o| {
        let e = env(o, "router");
        let copy = e[3].clone();
        e.push(copy);
    });
    assert_eq!(dup, [format!("{ROUTER}.env[POD_UID]")]);
    let size = changed(|o| {
        o["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = json!("1Gi");
    });
    assert_eq!(size, ["spec.template.spec.volumes[tmp].emptyDir.sizeLimit"]);
}

#[test]
fn type_mismatch_and_malformed_quantities() {
    let d = changed(|o| container(o, "router")["env"] = json!("oops"));
    assert_eq!(d, [format!("{ROUTER}.env")]);
    let mut desired = rendered();
    container(&mut desired, "router")["resources"]["limits"]["cpu"] = json!("lots");
    let mut observed = stored(&desired);
    assert_eq!(
        container(&mut observed, "router")["resources"]["limits"]["cpu"],
        "lots"
    );
    assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    container(&mut observed, "router")["resources"]["limits"]["cpu"] = json!("Lots");
    assert_eq!(
        drift_of(&desired, &observed, &all_enforced()),
        [format!("{ROUTER}.resources.limits.cpu")]
    );
}

#[test]
fn several_drifts_are_sorted_and_unique() {
    let d = changed(|o| {
        o["spec"]["replicas"] = json!(1);
        container(o, "router")["image"] = json!("x");
        o["metadata"]["annotations"][GEN] = json!("9");
        container(o, "router")["resources"]["limits"]["cpu"] = json!("5");
    });
    assert_eq!(
        d,
        [
            format!("metadata.annotations[{GEN}]"),
            "spec.replicas".to_owned(),
            format!("{ROUTER}.image"),
            format!("{ROUTER}.resources.limits.cpu"),
        ]
    );
}

#[test]
fn enforcement_of_configuration() {
    let configuration: GatewayConfiguration = serde_json::from_value(json!({
        "spec": { "verticalScaling": { "containers": [
            { "name": "router", "enforceResources": true },
            { "name": "loadbalancer", "enforceResources": false },
            { "name": "a", "enforceResources": true },
            { "name": "router", "enforceResources": true }
        ] } }
    }))
    .unwrap();
    let settings = Settings::default();
    assert_eq!(
        Enforcement::of(&settings, &configuration),
        Enforcement {
            replicas: false,
            resources: vec!["a".into(), "router".into()],
            identity_annotations: [
                GEN.to_owned(),
                "meridio-2.nordix.org/gatewayconfiguration-uid".to_owned()
            ],
        }
    );
    assert_eq!(
        Enforcement::of(&settings, &GatewayConfiguration::default()),
        Enforcement::default()
    );
}

#[test]
fn odd_shapes_do_not_panic() {
    let desired = rendered();
    let odd = json!({
        "metadata": "x",
        "spec": { "replicas": "two", "selector": [], "template": { "spec": {
            "containers": [1, null, { "name": 7 }],
            "readinessGates": "none"
        } } }
    });
    let d = drift_of(&desired, &odd, &all_enforced());
    assert!(d.contains(&"metadata".to_owned()), "{d:?}");
    assert!(d.contains(&"spec.replicas".to_owned()), "{d:?}");
    assert!(d.contains(&"spec.selector".to_owned()), "{d:?}");
    assert!(
        d.contains(&"spec.template.spec.containers".to_owned()),
        "{d:?}"
    );
    // The other way round: type mismatches, and owned fields only observed has.
    let d = drift_of(&odd, &desired, &Enforcement::default());
    assert_eq!(
        d,
        [
            "metadata",
            &format!("metadata.annotations[{GEN}]"),
            "spec.selector",
            "spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]",
            "spec.template.spec.containers",
            "spec.template.spec.readinessGates",
        ]
    );
    assert!(drift_of(&json!({}), &json!({}), &all_enforced()).is_empty());
}

#[test]
fn path_format() {
    let path = [
        Seg::Key("metadata"),
        Seg::Key("annotations"),
        Seg::Key("a.b/c"),
    ];
    assert_eq!(format_path(&path), "metadata.annotations[a.b/c]");
    let path = [Seg::Key("x"), Seg::Elem("n"), Seg::Index(3), Seg::Key("y")];
    assert_eq!(format_path(&path), "x[n][3].y");
    assert_eq!(format_path(&[Seg::Key(""), Seg::Key("z")]), "[].z");
}

fn quantity_text() -> impl Strategy<Value = String> {
    (
        1u32..5000,
        prop::sample::select(vec!["", "m", "k", "M", "Ki", "Mi", "Gi", "e3", "e-3"]),
        any::<bool>(),
    )
        .prop_map(|(n, suffix, fraction)| {
            if fraction && !suffix.starts_with('e') {
                format!("{}.{}{suffix}", n / 10, n % 10)
            } else {
                format!("{n}{suffix}")
            }
        })
}

fn container_strategy(name: String) -> impl Strategy<Value = Value> {
    let env_entry = (0usize..6, any::<bool>()).prop_map(|(i, downward)| {
        let name = format!("VAR_{i}");
        if downward {
            json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } })
        } else {
            json!({ "name": name, "value": format!("v{i}") })
        }
    });
    (
        prop::sample::select(vec!["img", "img:latest", "img:1.0", "r:5000/img@sha256:ab"]),
        prop::collection::vec(env_entry, 0..5),
        prop::option::of(quantity_text()),
        prop::option::of(quantity_text()),
        prop::option::of(0u16..3),
    )
        .prop_map(move |(image, env, cpu, memory, port)| {
            let mut env = env;
            env.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            env.dedup_by(|a, b| a["name"] == b["name"]);
            let mut c = json!({ "name": name.clone(), "image": image, "env": env });
            let mut requests = Map::new();
            if let Some(cpu) = cpu {
                requests.insert("cpu".into(), json!(cpu));
            }
            if let Some(memory) = memory {
                requests.insert("memory".into(), json!(memory));
            }
            c["resources"] = json!({ "requests": requests.clone(), "limits": requests });
            if let Some(p) = port {
                c["ports"] = json!([{ "name": format!("p{p}"), "containerPort": 8000 + p }]);
            }
            c
        })
}

fn deployment_strategy() -> impl Strategy<Value = Value> {
    (
        container_strategy("loadbalancer".into()),
        prop::option::of(container_strategy("router".into())),
        prop::option::of(0i64..5),
        any::<bool>(),
    )
        .prop_map(|(lb, router, replicas, gates)| {
            let mut containers = vec![lb];
            containers.extend(router);
            let mut d = json!({
                "metadata": { "name": "lb", "annotations": { GEN: "1" } },
                "spec": {
                    "selector": { "matchLabels": { "app": "lb" } },
                    "template": {
                        "metadata": { "labels": { "app": "lb" } },
                        "spec": { "containers": containers }
                    }
                }
            });
            if let Some(r) = replicas {
                d["spec"]["replicas"] = json!(r);
            }
            if gates {
                d["spec"]["template"]["spec"]["readinessGates"] =
                    json!([{ "conditionType": "x/ipv4" }]);
            }
            d
        })
}

/// Any JSON, with keys that reach the walk's special places (merge-keyed lists,
/// quantities, the owned fields).
fn any_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "metadata",
        "annotations",
        "spec",
        "template",
        "containers",
        "env",
        "name",
        "resources",
        "requests",
        "limits",
        "cpu",
        "readinessGates",
        "conditionType",
        "selector",
        "replicas",
        "ownerReferences",
        "uid",
        "status",
        "value",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        Just(json!(1.0)),
        prop::sample::select(vec!["", "a", "0.5", "500m", "1Gi", "x/y"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.clone().prop_map(str::to_owned), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// A copy never drifts: a field the render copies from the observed Deployment is never
    /// an update.
    #[test]
    fn a_value_never_drifts_from_itself(
        root in prop::collection::btree_map(
            prop::sample::select(vec!["metadata", "spec", "status", "kind"]).prop_map(str::to_owned),
            any_json(),
            0..4,
        ),
    ) {
        let d = Deployment::from_object(root.into_iter().collect::<Map<String, Value>>());
        for e in [Enforcement::default(), all_enforced()] {
            prop_assert_eq!(drift(&d, &d, &e), Vec::<String>::new());
        }
    }

    #[test]
    fn defaulted_rendering_is_never_drift(d in deployment_strategy()) {
        let desired = dep(d);
        let mut observed = desired.clone();
        apply_server_defaults(&mut observed);
        for e in [Enforcement::default(), all_enforced()] {
            prop_assert_eq!(drift(&desired, &desired, &e), Vec::<String>::new());
            prop_assert_eq!(drift(&desired, &observed, &e), Vec::<String>::new());
        }
    }
}

proptest! {
    /// Keyed lists already in the same order are paired by position, others by sorting
    /// their keys: reversing the observed containers and each one's env (names unique)
    /// takes the sorted path, and must find the same drift as the positional one.
    #[test]
    fn aligned_keyed_lists_drift_as_sorted_ones_do(
        images in prop::collection::vec(prop::sample::select(vec!["a:1", "a:2"]), 1..5),
        values in prop::collection::vec(prop::sample::select(vec!["x", "y"]), 0..4),
        observed_images in prop::collection::vec(prop::sample::select(vec!["a:1", "a:2"]), 1..5),
        observed_values in prop::collection::vec(prop::sample::select(vec!["x", "y"]), 0..4),
    ) {
        let containers = |images: &[&str], values: &[&str]| -> Vec<Value> {
            images
                .iter()
                .enumerate()
                .map(|(i, image)| {
                    let env: Vec<Value> = values
                        .iter()
                        .enumerate()
                        .map(|(j, v)| json!({ "name": format!("E{j}"), "value": v }))
                        .collect();
                    json!({ "name": format!("c{i}"), "image": image, "env": env })
                })
                .collect()
        };
        let deployment = |containers: Vec<Value>| {
            json!({ "spec": { "template": { "spec": { "containers": containers } } } })
        };
        let desired = deployment(containers(&images, &values));
        let observed = containers(&observed_images, &observed_values);
        let mut reversed = observed.clone();
        reversed.reverse();
        for c in &mut reversed {
            c["env"].as_array_mut().unwrap().reverse();
        }
        for e in [Enforcement::default(), all_enforced()] {
            let in_order = drift_of(&desired, &deployment(observed.clone()), &e);
            let out_of_order = drift_of(&desired, &deployment(reversed.clone()), &e);
            prop_assert_eq!(&in_order, &out_of_order);
            if images == observed_images && values == observed_values {
                prop_assert_eq!(in_order, Vec::<String>::new());
            }
        }
    }
}

/// `Enforcement::of` reads `enforceReplicas` and the containers with `enforceResources`.
#[test]
fn example_enforcement_of_a_configuration() {
    use crate::Settings;
    use crate::drift::Enforcement;
    use crate::wire::GatewayConfiguration;

    let configuration: GatewayConfiguration = serde_json::from_value(serde_json::json!({
        "spec": {
            "horizontalScaling": { "replicas": 2, "enforceReplicas": true },
            "verticalScaling": { "containers": [
                { "name": "router", "enforceResources": true },
                { "name": "loadbalancer" }
            ] }
        }
    }))
    .unwrap();
    let enforcement = Enforcement::of(&Settings::default(), &configuration);
    assert!(enforcement.replicas);
    assert_eq!(enforcement.resources, ["router"]);
}

/// A server default and a quantity in another form are no drift; a changed image is.
#[test]
fn example_drift_by_meaning() {
    use crate::drift::{Enforcement, drift};
    use crate::wire::Deployment;

    let desired: Deployment = serde_json::from_value(serde_json::json!({
        "spec": { "template": { "spec": { "containers": [
            { "name": "router", "image": "router:1", "resources": { "limits": { "cpu": "0.5" } } }
        ] } } }
    }))
    .unwrap();
    // Server-defaulted, quantity normalized: no drift.
    let observed: Deployment = serde_json::from_value(serde_json::json!({
        "spec": { "revisionHistoryLimit": 10, "template": { "spec": { "containers": [
            { "name": "router", "image": "router:1", "imagePullPolicy": "IfNotPresent",
              "resources": { "limits": { "cpu": "500m" } } }
        ] } } }
    }))
    .unwrap();
    assert!(drift(&desired, &observed, &Enforcement::default()).is_empty());

    let mut json = observed.to_json();
    json["spec"]["template"]["spec"]["containers"][0]["image"] = "router:2".into();
    let changed: Deployment = serde_json::from_value(json).unwrap();
    assert_eq!(
        drift(&desired, &changed, &Enforcement::default()),
        ["spec.template.spec.containers[router].image"]
    );
}
