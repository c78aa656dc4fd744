use super::*;
use crate::nad::NetworkSelection;
use crate::settings::Label;
use crate::template::default_template;
use crate::wire::GatewayConfiguration;

fn gateway() -> Gateway {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": "gw", "namespace": "red", "uid": "uid-1", "generation": 4 },
        "spec": {
            "gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}],
            "infrastructure": {
                "labels": { "team": "blue", "app": "hijack",
                            "app.kubernetes.io/part-of": "mine" },
                "annotations": { "note": "from-gateway" },
                "parametersRef": { "group": "meridio-2.nordix.org",
                                   "kind": "GatewayConfiguration", "name": "cfg" }
            }
        }
    }))
    .unwrap()
}

fn configuration(spec: Value) -> GatewayConfiguration {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": "cfg", "namespace": "red", "generation": 7 },
        "spec": spec
    }))
    .unwrap()
}

fn sel(ns: &str, name: &str, interface: &str) -> NetworkSelection {
    NetworkSelection {
        name: name.into(),
        namespace: ns.into(),
        interface: interface.into(),
    }
}

fn validated(cfg: &GatewayConfiguration) -> Validated<'_> {
    Validated {
        configuration: cfg,
        networks: vec![sel("red", "vlan-100", "ext0")],
        ipv4: true,
        ipv6: false,
    }
}

fn render_with(
    cfg: &GatewayConfiguration,
    observed: Option<&Deployment>,
    settings: &Settings,
) -> Deployment {
    render(
        settings,
        &gateway(),
        &validated(cfg),
        &default_template(),
        observed,
    )
}

fn create(cfg: &GatewayConfiguration) -> Deployment {
    render_with(cfg, None, &Settings::default())
}

fn update(cfg: &GatewayConfiguration, observed: &Deployment) -> Deployment {
    render_with(cfg, Some(observed), &Settings::default())
}

fn pod_spec(d: &Deployment) -> &Value {
    &d.object["spec"]["template"]["spec"]
}

fn pod_meta(d: &Deployment) -> &Value {
    &d.object["spec"]["template"]["metadata"]
}

fn container<'a>(d: &'a Deployment, name: &str) -> &'a Value {
    pod_spec(d)["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

fn env_names(c: &Value) -> Vec<&str> {
    c["env"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default()
}

fn env<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no env {name}"))
}

/// An observed Deployment: one the crate rendered earlier, then edited by others.
fn observed(cfg: &GatewayConfiguration, edit: impl FnOnce(&mut Value)) -> Deployment {
    let mut v = Value::Object(create(cfg).object);
    edit(&mut v);
    match v {
        Value::Object(object) => Deployment::from_object(object),
        other => panic!("an edit made the Deployment {other}"),
    }
}

#[test]
fn create_sets_identity_selector_owner_and_service_account() {
    let cfg = configuration(json!({}));
    let d = create(&cfg);
    assert_eq!(d.object["apiVersion"], "apps/v1");
    assert_eq!(d.object["kind"], "Deployment");
    assert_eq!(d.name(), Some("sllbr-gw"));
    assert_eq!(d.namespace(), Some("red"));
    assert_eq!(
        d.object["spec"]["selector"],
        json!({ "matchLabels": { "app": "sllbr-gw" } })
    );
    assert_eq!(
        pod_spec(&d)["serviceAccountName"],
        "stateless-load-balancer"
    );
    assert_eq!(
        d.object["metadata"]["ownerReferences"],
        json!([{
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "name": "gw", "uid": "uid-1", "controller": true, "blockOwnerDeletion": true
        }])
    );
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        Some("7")
    );
}

#[test]
fn settings_name_the_deployment_and_the_generation_annotation() {
    let cfg = configuration(json!({}));
    let settings = Settings {
        deployment_prefix: "lb-".into(),
        condition_domain: "example.org".into(),
        service_account: "sa".into(),
        ..Settings::default()
    };
    let d = render_with(&cfg, None, &settings);
    assert_eq!(d.name(), Some("lb-gw"));
    assert_eq!(d.labels()["app"], "lb-gw");
    assert_eq!(
        d.annotation("example.org/gatewayconfiguration-generation"),
        Some("7")
    );
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        None
    );
    assert_eq!(pod_spec(&d)["serviceAccountName"], "sa");
    // The readiness gate prefix is fixed, not the condition domain.
    assert_eq!(
        pod_spec(&d)["readinessGates"],
        json!([{ "conditionType": "meridio-2.nordix.org/ipv4-connectivity" }])
    );
}

#[test]
fn labels_layer_template_then_gateway_then_controller() {
    let cfg = configuration(json!({}));
    let d = create(&cfg);
    for labels in [&d.object["metadata"]["labels"], &pod_meta(&d)["labels"]] {
        assert_eq!(
            labels,
            &json!({
                "app": "sllbr-gw",
                "app.kubernetes.io/component": "stateless-load-balancer",
                "app.kubernetes.io/managed-by": "gateway-controller.meridio-2.nordix.org",
                "app.kubernetes.io/part-of": "mine",
                "gateway.networking.k8s.io/gateway-name": "gw",
                "team": "blue"
            })
        );
    }
    assert_eq!(pod_meta(&d)["annotations"]["note"], "from-gateway");
    assert_eq!(d.annotation("note"), Some("from-gateway"));
}

#[test]
fn update_keeps_foreign_labels_and_annotations_and_rewrites_the_generation() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |v| {
        let m = &mut v["metadata"];
        m["labels"]["foreign"] = json!("kept");
        m["labels"]["team"] = json!("red");
        m["annotations"]["deployment.kubernetes.io/revision"] = json!("4");
        m["annotations"]["meridio-2.nordix.org/gatewayconfiguration-generation"] = json!("2");
        m["resourceVersion"] = json!("991");
        v["spec"]["template"]["metadata"]["labels"]["pod-foreign"] = json!("kept");
        v["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
            json!("2026-01-01T00:00:00Z");
        v["status"] = json!({ "replicas": 2 });
    });
    let d = update(&cfg, &obs);
    assert_eq!(d.labels()["foreign"], "kept");
    assert_eq!(d.labels()["team"], "blue", "the Gateway's label wins");
    assert_eq!(d.annotation("deployment.kubernetes.io/revision"), Some("4"));
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        Some("7")
    );
    assert_eq!(d.object["metadata"]["resourceVersion"], "991");
    assert_eq!(d.object["status"], json!({ "replicas": 2 }));
    assert_eq!(pod_meta(&d)["labels"]["pod-foreign"], "kept");
    assert_eq!(
        pod_meta(&d)["annotations"]["kubectl.kubernetes.io/restartedAt"],
        "2026-01-01T00:00:00Z"
    );
}

#[test]
fn update_puts_every_field_the_template_sets_in_its_pod_spec_in_place() {
    let cfg = configuration(json!({}));
    // Created with the old template, edited by someone, then a new template.
    let obs = observed(&cfg, |v| {
        let spec = &mut v["spec"]["template"]["spec"];
        spec["nodeSelector"] = json!({ "zone": "old" });
        spec["hostNetwork"] = json!(true);
        spec["tolerations"] = json!([{ "key": "x", "operator": "Exists" }]);
        spec["affinity"]["nodeAffinity"] = json!({ "someone": "else" });
    });
    let mut template = default_template();
    let spec = &mut template.object["spec"]["template"]["spec"];
    spec["tolerations"] = json!([{ "key": "lb", "operator": "Exists" }]);
    spec["nodeSelector"] = json!({ "zone": "a" });
    spec["securityContext"] = json!({ "runAsNonRoot": true });
    spec["terminationGracePeriodSeconds"] = json!(5);
    spec["serviceAccountName"] = json!("not-the-setting");
    spec["priorityClassName"] = Value::Null;
    let d = render(
        &Settings::default(),
        &gateway(),
        &validated(&cfg),
        &template,
        Some(&obs),
    );
    let pod = pod_spec(&d);
    assert_eq!(
        pod["tolerations"],
        json!([{ "key": "lb", "operator": "Exists" }])
    );
    assert_eq!(pod["nodeSelector"], json!({ "zone": "a" }));
    assert_eq!(pod["securityContext"], json!({ "runAsNonRoot": true }));
    assert_eq!(pod["terminationGracePeriodSeconds"], 5);
    // Rules still win, and a null sets nothing.
    assert_eq!(pod["serviceAccountName"], "stateless-load-balancer");
    assert!(pod.get("priorityClassName").is_none());
    // A field the template does not set stays as observed.
    assert_eq!(pod["hostNetwork"], true);
    // The template's affinity replaces the observed one whole, its anti-affinity rendered.
    assert!(pod["affinity"].get("nodeAffinity").is_none(), "{pod}");
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]
            ["matchExpressions"][0]["values"],
        json!(["sllbr-gw"])
    );
    // Rendering over its own output changes nothing.
    let again = render(
        &Settings::default(),
        &gateway(),
        &validated(&cfg),
        &template,
        Some(&d),
    );
    assert_eq!(again, d);
}

#[test]
fn update_puts_the_template_containers_and_volumes_in_place() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |v| {
        let spec = &mut v["spec"]["template"]["spec"];
        spec["containers"][0]["image"] = json!("old:1");
        spec["containers"].push(json!({ "name": "stale", "image": "x" }));
        spec["initContainers"] = json!([{ "name": "init-old", "image": "y" }]);
        spec["volumes"] = json!([{ "name": "stale", "emptyDir": {} }]);
        spec["nodeSelector"] = json!({ "zone": "a" });
    });
    let d = update(&cfg, &obs);
    let template = default_template();
    let names: Vec<&str> = pod_spec(&d)["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["loadbalancer", "router"]);
    assert_eq!(
        container(&d, "loadbalancer")["image"],
        template.object["spec"]["template"]["spec"]["containers"][0]["image"]
    );
    assert!(pod_spec(&d).get("initContainers").is_none());
    assert_eq!(
        pod_spec(&d)["volumes"],
        template.object["spec"]["template"]["spec"]["volumes"]
    );
    assert_eq!(pod_spec(&d)["nodeSelector"], json!({ "zone": "a" }));
}

fn vertical(enforce: bool) -> GatewayConfiguration {
    configuration(json!({
        "verticalScaling": { "containers": [{
            "name": "loadbalancer",
            "enforceResources": enforce,
            "resources": {
                "requests": { "cpu": "300m" },
                "limits": { "memory": "1Gi" },
                "claims": [{ "name": "gpu" }]
            },
            "resizePolicy": [{ "resourceName": "cpu", "restartPolicy": "NotRequired" }]
        }] }
    }))
}

#[test]
fn create_applies_vertical_scaling_without_claims() {
    let d = create(&vertical(false));
    let lb = container(&d, "loadbalancer");
    assert_eq!(
        lb["resources"],
        json!({ "requests": { "cpu": "300m" }, "limits": { "memory": "1Gi" } })
    );
    assert_eq!(
        lb["resizePolicy"],
        json!([{ "resourceName": "cpu", "restartPolicy": "NotRequired" }])
    );
    // Other containers keep the template's.
    assert_eq!(
        container(&d, "router")["resources"],
        default_template().object["spec"]["template"]["spec"]["containers"][1]["resources"]
    );
}

#[test]
fn an_empty_vertical_scaling_entry_clears_on_create() {
    let cfg = configuration(json!({
        "verticalScaling": { "containers": [{ "name": "router", "resources": {} }] }
    }));
    let d = create(&cfg);
    let router = container(&d, "router");
    assert!(router.get("resources").is_none(), "{router}");
    assert!(router.get("resizePolicy").is_none());
    let cfg = configuration(json!({
        "verticalScaling": { "containers": [{ "name": "router",
            "resources": { "requests": { "cpu": "1" } } }] }
    }));
    let router = container(&create(&cfg), "router").clone();
    assert_eq!(router["resources"], json!({ "requests": { "cpu": "1" } }));
}

fn vpa_edited(cfg: &GatewayConfiguration) -> Deployment {
    observed(cfg, |v| {
        let lb = &mut v["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(lb["name"], "loadbalancer");
        lb["resources"] = json!({ "requests": { "cpu": "750m" } });
        lb["resizePolicy"] =
            json!([{ "resourceName": "memory", "restartPolicy": "RestartContainer" }]);
    })
}

#[test]
fn update_keeps_observed_resources_when_not_enforced() {
    let cfg = vertical(false);
    let d = update(&cfg, &vpa_edited(&cfg));
    let lb = container(&d, "loadbalancer");
    assert_eq!(lb["resources"], json!({ "requests": { "cpu": "750m" } }));
    assert_eq!(
        lb["resizePolicy"],
        json!([{ "resourceName": "memory", "restartPolicy": "RestartContainer" }])
    );
}

#[test]
fn update_replaces_observed_resources_when_enforced() {
    let cfg = vertical(true);
    let d = update(&cfg, &vpa_edited(&cfg));
    let lb = container(&d, "loadbalancer");
    assert_eq!(
        lb["resources"],
        json!({ "requests": { "cpu": "300m" }, "limits": { "memory": "1Gi" } })
    );
    assert_eq!(
        lb["resizePolicy"],
        json!([{ "resourceName": "cpu", "restartPolicy": "NotRequired" }])
    );
}

#[test]
fn observed_resources_follow_the_container_name_not_the_position() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |v| {
        let containers = v["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap();
        containers.reverse();
        containers[0]["resources"] = json!({ "limits": { "cpu": "9" } });
        assert_eq!(containers[0]["name"], "router");
        containers[1].as_object_mut().unwrap().remove("resources");
    });
    let d = update(&cfg, &obs);
    assert_eq!(
        container(&d, "router")["resources"],
        json!({ "limits": { "cpu": "9" } })
    );
    assert!(container(&d, "loadbalancer").get("resources").is_none());
}

#[test]
fn replicas_on_create_from_configuration_else_template() {
    let cfg = configuration(json!({ "horizontalScaling": { "replicas": 3 } }));
    assert_eq!(create(&cfg).object["spec"]["replicas"], 3);
    let cfg = configuration(json!({}));
    assert_eq!(create(&cfg).object["spec"]["replicas"], 2);
}

#[test]
fn replicas_kept_on_update_unless_enforced() {
    let scaled = |cfg: &GatewayConfiguration| observed(cfg, |v| v["spec"]["replicas"] = json!(5));
    let cfg = configuration(json!({ "horizontalScaling": { "replicas": 3 } }));
    assert_eq!(update(&cfg, &scaled(&cfg)).object["spec"]["replicas"], 5);
    let cfg =
        configuration(json!({ "horizontalScaling": { "replicas": 3, "enforceReplicas": true } }));
    assert_eq!(update(&cfg, &scaled(&cfg)).object["spec"]["replicas"], 3);
    let cfg = configuration(json!({ "horizontalScaling": { "enforceReplicas": true } }));
    assert_eq!(
        update(&cfg, &scaled(&cfg)).object["spec"]["replicas"],
        2,
        "enforced without a count: the template's"
    );
}

#[test]
fn networks_annotation_written_from_the_validated_list() {
    let cfg = configuration(json!({}));
    let d = create(&cfg);
    assert_eq!(
        pod_meta(&d)["annotations"][nad::NETWORKS_ANNOTATION],
        nad::to_annotation(&[sel("red", "vlan-100", "ext0")])
    );
    assert!(d.annotation(nad::NETWORKS_ANNOTATION).is_none());
}

#[test]
fn networks_annotation_removed_when_the_list_is_empty() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |_| {});
    let mut v = validated(&cfg);
    v.networks.clear();
    let d = render(
        &Settings::default(),
        &gateway(),
        &v,
        &default_template(),
        Some(&obs),
    );
    let annotations = &pod_meta(&d)["annotations"];
    assert!(
        annotations.get(nad::NETWORKS_ANNOTATION).is_none(),
        "{annotations}"
    );
    assert_eq!(annotations["note"], "from-gateway");
}

#[test]
fn networks_annotation_keeps_observed_text_only_when_set_equal() {
    let cfg = configuration(json!({}));
    let with_text = |text: &str| {
        let text = text.to_owned();
        observed(&cfg, move |v| {
            v["spec"]["template"]["metadata"]["annotations"][nad::NETWORKS_ANNOTATION] = json!(text)
        })
    };
    let d = update(&cfg, &with_text("vlan-100@ext0"));
    assert_eq!(
        pod_meta(&d)["annotations"][nad::NETWORKS_ANNOTATION],
        "vlan-100@ext0"
    );
    let d = update(&cfg, &with_text("vlan-100@ext1"));
    assert_eq!(
        pod_meta(&d)["annotations"][nad::NETWORKS_ANNOTATION],
        nad::to_annotation(&[sel("red", "vlan-100", "ext0")])
    );
}

#[test]
fn readiness_gates_follow_the_address_families() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |v| {
        v["spec"]["template"]["spec"]["readinessGates"] =
            json!([{ "conditionType": "someone/else" }]);
    });
    for (ipv4, ipv6, want) in [
        (
            true,
            true,
            Some(json!([
                { "conditionType": "meridio-2.nordix.org/ipv4-connectivity" },
                { "conditionType": "meridio-2.nordix.org/ipv6-connectivity" }
            ])),
        ),
        (
            false,
            true,
            Some(json!([{ "conditionType": "meridio-2.nordix.org/ipv6-connectivity" }])),
        ),
        (false, false, None),
    ] {
        let v = Validated {
            ipv4,
            ipv6,
            ..validated(&cfg)
        };
        let d = render(
            &Settings::default(),
            &gateway(),
            &v,
            &default_template(),
            Some(&obs),
        );
        assert_eq!(pod_spec(&d).get("readinessGates"), want.as_ref());
    }
}

#[test]
fn router_gets_downward_env_once_and_gateway_name_everywhere() {
    let cfg = configuration(json!({}));
    let d = create(&cfg);
    let router = container(&d, "router");
    assert_eq!(
        env_names(router),
        [
            "MERIDIO_GATEWAY_NAME",
            "POD_NAME",
            "POD_NAMESPACE",
            "POD_UID"
        ]
    );
    assert_eq!(
        env(router, "POD_UID"),
        &json!({ "name": "POD_UID", "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } })
    );
    assert_eq!(
        env(router, "POD_NAMESPACE")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.namespace"
    );
    let lb = container(&d, "loadbalancer");
    assert_eq!(env_names(lb), ["MERIDIO_GATEWAY_NAME"]);
    for c in [lb, router] {
        assert_eq!(env(c, "MERIDIO_GATEWAY_NAME")["value"], "gw");
    }
    let again = update(&cfg, &d);
    assert_eq!(env_names(container(&again, "router")), env_names(router));
}

#[test]
fn existing_router_env_is_not_duplicated_or_replaced() {
    let cfg = configuration(json!({}));
    let mut template = default_template();
    let spec = &mut template.object["spec"]["template"]["spec"];
    spec["containers"][1]["env"] = json!([
        { "name": "POD_NAME", "value": "fixed" },
        { "name": "MERIDIO_GATEWAY_NAME", "valueFrom": { "fieldRef": { "fieldPath": "x" } } }
    ]);
    spec["initContainers"] = json!([{
        "name": "router", "image": "i",
        "env": [{ "name": "MERIDIO_GATEWAY_NAME", "value": "" }]
    }]);
    let d = render(
        &Settings::default(),
        &gateway(),
        &validated(&cfg),
        &template,
        None,
    );
    let router = container(&d, "router");
    assert_eq!(
        env_names(router),
        [
            "POD_NAME",
            "MERIDIO_GATEWAY_NAME",
            "POD_NAMESPACE",
            "POD_UID"
        ]
    );
    assert_eq!(env(router, "POD_NAME")["value"], "fixed");
    assert_eq!(
        env(router, "MERIDIO_GATEWAY_NAME"),
        &json!({ "name": "MERIDIO_GATEWAY_NAME", "value": "gw" })
    );
    let init = &pod_spec(&d)["initContainers"][0];
    assert_eq!(
        init["env"],
        json!([{ "name": "MERIDIO_GATEWAY_NAME", "value": "gw" }])
    );
}

#[test]
fn required_anti_affinity_app_values_name_the_deployment() {
    let cfg = configuration(json!({}));
    let mut template = default_template();
    let anti = &mut template.object["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"];
    anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchExpressions"]
        .push(json!({ "key": "tier", "operator": "In", "values": ["lb"] }));
    let preferred = json!([{ "weight": 1, "podAffinityTerm": {
        "labelSelector": { "matchExpressions": [{ "key": "app", "operator": "In", "values": [] }] },
        "topologyKey": "zone" } }]);
    anti["preferredDuringSchedulingIgnoredDuringExecution"] = preferred.clone();
    let d = render(
        &Settings::default(),
        &gateway(),
        &validated(&cfg),
        &template,
        None,
    );
    let anti = &pod_spec(&d)["affinity"]["podAntiAffinity"];
    assert_eq!(
        anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchExpressions"],
        json!([
            { "key": "app", "operator": "In", "values": ["sllbr-gw"] },
            { "key": "tier", "operator": "In", "values": ["lb"] }
        ])
    );
    assert_eq!(
        anti["preferredDuringSchedulingIgnoredDuringExecution"],
        preferred
    );
}

#[test]
fn pod_cache_label_goes_on_the_pod_template_only_and_never_breaks_the_selector() {
    let cfg = configuration(json!({}));
    let settings = Settings {
        pod_cache_label: Some(Label {
            key: "meridio-2.nordix.org/cache".into(),
            value: "lb".into(),
        }),
        ..Settings::default()
    };
    let d = render_with(&cfg, None, &settings);
    assert_eq!(pod_meta(&d)["labels"]["meridio-2.nordix.org/cache"], "lb");
    assert!(!d.labels().contains_key("meridio-2.nordix.org/cache"));
    let settings = Settings {
        pod_cache_label: Some(Label {
            key: "app".into(),
            value: "other".into(),
        }),
        ..Settings::default()
    };
    let d = render_with(&cfg, None, &settings);
    assert_eq!(pod_meta(&d)["labels"]["app"], "sllbr-gw");
}

#[test]
fn controller_reference_is_replaced_and_others_kept() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |v| {
        v["metadata"]["ownerReferences"] = json!([
            { "apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "u-cm" },
            { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
              "name": "gw", "uid": "old-uid", "controller": true },
            { "apiVersion": "x/v1", "kind": "Other", "name": "o", "uid": "u-o", "controller": true },
            { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
              "name": "gw", "uid": "uid-1" }
        ]);
    });
    let d = update(&cfg, &obs);
    assert_eq!(
        d.object["metadata"]["ownerReferences"],
        json!([
            { "apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "u-cm" },
            { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
              "name": "gw", "uid": "uid-1", "controller": true, "blockOwnerDeletion": true }
        ])
    );
}

#[test]
fn missing_generation_removes_the_annotation() {
    let cfg = configuration(json!({}));
    let obs = observed(&cfg, |_| {});
    let mut bare = cfg.clone();
    bare.metadata.generation = None;
    let d = update(&bare, &obs);
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        None
    );
}

#[test]
fn output_is_deterministic() {
    let cfg = vertical(true);
    let obs = vpa_edited(&cfg);
    let a = serde_json::to_string(&update(&cfg, &obs)).unwrap();
    let b = serde_json::to_string(&update(&cfg, &obs.clone())).unwrap();
    assert_eq!(a, b);
    let a = serde_json::to_string(&create(&cfg)).unwrap();
    let b = serde_json::to_string(&create(&cfg.clone())).unwrap();
    assert_eq!(a, b);
}

#[test]
fn rendering_over_its_own_output_changes_nothing() {
    for cfg in [
        configuration(json!({ "horizontalScaling": { "replicas": 3 } })),
        vertical(false),
        vertical(true),
    ] {
        let first = create(&cfg);
        let second = update(&cfg, &first);
        assert_eq!(second, first);
        let edited = vpa_edited(&cfg);
        let once = update(&cfg, &edited);
        assert_eq!(update(&cfg, &once), once);
    }
}

#[test]
fn an_edited_template_affinity_term_is_drift_and_is_restored() {
    let cfg = configuration(json!({}));
    let created = create(&cfg);
    let mut edited = created.clone();
    edited.object["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        [0]["topologyKey"] = json!("zone");
    let desired = update(&cfg, &edited);
    let enforcement = crate::drift::Enforcement::of(&Settings::default(), &cfg);
    let want = [
        "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
    ];
    assert_eq!(crate::drift::drift(&desired, &edited, &enforcement), want);
    assert_eq!(
        pod_spec(&desired)["affinity"],
        pod_spec(&created)["affinity"]
    );
    // The owned part finds the same, and builds the same whole render.
    let (settings, template) = (Settings::default(), default_template());
    let owned = render_owned(
        &settings,
        &gateway(),
        &validated(&cfg),
        &template,
        Some(&edited),
    );
    assert_eq!(
        crate::drift::drift_owned(&owned, &edited, &enforcement),
        want
    );
    assert_eq!(complete(&edited, owned), desired);
}

/// A create render, and rendering over its own output changes nothing.
#[test]
fn example_render() {
    use crate::Settings;
    use crate::render::render;
    use crate::template::default_template;
    use crate::validate::validate;
    use crate::wire::{Gateway, GatewayConfiguration};

    let gateway: Gateway = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
            "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "c"}}}
    }))
    .unwrap();
    let cfg: GatewayConfiguration = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "c", "namespace": "red", "generation": 3},
        "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
    }))
    .unwrap();
    let (settings, template) = (Settings::default(), default_template());
    let validated = validate(&settings, &gateway, Some(&cfg), &template).unwrap();
    let d = render(&settings, &gateway, &validated, &template, None);
    assert_eq!(d.name(), Some("sllbr-gw"));
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        Some("3")
    );
    assert_eq!(d.controller_owner(), Some(("Gateway", "gw", "u-1")));
    // Rendering over its own output changes nothing.
    assert_eq!(
        render(&settings, &gateway, &validated, &template, Some(&d)),
        d
    );
}
