//! SPEC revision 4, stories on a real kube-apiserver: a Gateway named with 253
//! characters, tenants' routes admitted by a listener's `allowedRoutes`, and a
//! GatewayClass's default GatewayConfiguration.
//! `e2e/run.sh` runs them under the control plane with `--ignored`; their harness (a
//! story's namespace, GatewayClass and in-process controller) is `common::story`.

use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

mod common;
use common::*;

/// A Gateway name of 253 characters (the Gateway API's limit) is provisioned under the
/// shortened LB Deployment name (SPEC section 4, "Names"), and its Events are recorded
/// although kube-runtime's Event name (`NAME.HEX`) would pass 253 characters: the API
/// server names them from the name's start.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_gateway_named_with_253_characters_is_provisioned_and_its_events_recorded() {
    let mut story = Story::new(settings()).await;
    story.configuration("conf", 2).await;
    let name = format!("{}-{}", "long".repeat(40), "x".repeat(92));
    assert_eq!(name.len(), 253);
    story.gateway(&name, "conf").await;
    story.wait_conditions(&name, "healthy", healthy).await;
    let lb_name = gateway_reconcile::lookup::deployment_name(&story.settings, &name);
    assert!(lb_name.len() <= 63, "{lb_name}");
    let deployment = story.get("Deployment", &lb_name).await;
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["name"], name.as_str());
    let label = deployment["metadata"]["labels"]["gateway.networking.k8s.io/gateway-name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        label,
        gateway_reconcile::lookup::gateway_name_label(&name).as_ref()
    );
    assert!(label.len() <= 63, "{label}");
    // The first reconcile's Normal Applied Event, regarding the Gateway by its full name.
    let events: Api<DynamicObject> = Api::namespaced_with(
        story.admin.clone(),
        &story.ns,
        &resource("events.k8s.io/v1", "Event"),
    );
    let start = Instant::now();
    let recorded = loop {
        let list = events.list(&Default::default()).await.expect("events");
        let found: Vec<Value> = list
            .into_iter()
            .map(|e| serde_json::to_value(e).expect("json"))
            .filter(|e| e["regarding"]["name"] == name.as_str())
            .collect();
        if !found.is_empty() {
            break found;
        }
        assert!(
            start.elapsed() < WAIT,
            "no Event was recorded for the 253-character Gateway"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        recorded.iter().any(|e| e["reason"] == "Applied"),
        "{recorded:#?}"
    );
    for event in &recorded {
        let event_name = event["metadata"]["name"].as_str().unwrap_or_default();
        assert!(event_name.len() <= 253, "{event_name}");
        assert!(event_name.starts_with("longlong"), "{event_name}");
    }
    story.stop().await;
}

/// Waits until Gateway `gw`'s `status.addresses` are `want` (in order); the addresses then.
async fn wait_addresses(story: &Story, gateway: &str, want: &[&str]) {
    let start = Instant::now();
    loop {
        let object = story.get("Gateway", gateway).await;
        let got: Vec<String> = object["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["value"].as_str().map(str::to_owned))
            .collect();
        if got == want {
            return;
        }
        assert!(
            start.elapsed() < WAIT,
            "addresses of {gateway}: {got:?}, waiting for {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Two tenants' namespaces (SPEC revision 4, routes attach only where a listener admits
/// them), with the controller watching the whole cluster under its own RBAC: a route in
/// another namespace that names the owner's Gateway gives it no address by default
/// (`from: Same`), one by a namespace selector that matches its namespace's labels, and
/// none again once its namespace is relabelled (the namespaces' metadata watch wakes the
/// Gateway). The story's controller has a controller name of its own, so that watching
/// every namespace it reconciles only this story's Gateway.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_tenants_routes_attach_only_where_a_listener_admits_their_namespace() {
    let mut settings = settings();
    let mut story = Story::create(settings.clone()).await;
    settings.controller_name = format!("example.com/tenants-{}", story.ns);
    story.settings = settings.clone();
    story.cluster_wide = true;
    let class = format!("tenants-{}", story.ns);
    create(
        &story.admin,
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": { "name": class }, "spec": { "controllerName": settings.controller_name } }),
    )
    .await;
    let tenant = create(
        &story.admin,
        json!({ "apiVersion": "v1", "kind": "Namespace",
                "metadata": { "generateName": "e2e-tenant-", "labels": { "team": "blue" } } }),
    )
    .await
    .name_any();
    story.configuration("conf", 1).await;
    create(
        &story.admin,
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": { "name": "gw", "namespace": story.ns },
                "spec": { "gatewayClassName": class,
                          "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }],
                          "infrastructure": { "parametersRef": {
                              "group": DOMAIN, "kind": "GatewayConfiguration", "name": "conf" } } } }),
    )
    .await;
    let route = |namespace: &str, cidr: &str| {
        json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
                "metadata": { "name": "r", "namespace": namespace },
                "spec": { "parentRefs": [{ "name": "gw", "namespace": story.ns }],
                          "destinationCIDRs": [cidr], "protocols": ["TCP"], "priority": 1 } })
    };
    create(&story.admin, route(&story.ns, "20.0.0.1/32")).await;
    create(&story.admin, route(&tenant, "30.0.0.1/32")).await;
    story.start().await;
    story.wait_conditions("gw", "healthy", healthy).await;
    // The default, Same: the tenant's route names the Gateway and is not admitted.
    wait_addresses(&story, "gw", &["20.0.0.1"]).await;
    // A listener admitting the namespaces labelled team=blue: the tenant's.
    story
        .patch(
            "Gateway",
            "gw",
            json!({ "spec": { "listeners": [
                { "name": "tcp", "port": 80, "protocol": "TCP" },
                { "name": "shared", "port": 81, "protocol": "TCP", "allowedRoutes": {
                    "namespaces": { "from": "Selector", "selector": { "matchLabels": { "team": "blue" } } } } }
            ] } }),
        )
        .await;
    wait_addresses(&story, "gw", &["20.0.0.1", "30.0.0.1"]).await;
    // The tenant's namespace relabelled: no Gateway change, the namespace watch wakes it.
    let namespaces: Api<DynamicObject> =
        Api::all_with(story.admin.clone(), &resource("v1", "Namespace"));
    namespaces
        .patch(
            &tenant,
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "team": "red" } } })),
        )
        .await
        .expect("relabel the tenant's namespace");
    wait_addresses(&story, "gw", &["20.0.0.1"]).await;
    story.stop().await;
}

/// A GatewayClass's `parametersRef` is the default GatewayConfiguration of the Gateways
/// that name none (SPEC revision 4): such a Gateway is provisioned from it, and the
/// controller watches it for the class: deleting it turns both the class's `Accepted` and
/// the Gateway to `InvalidParameters` ... `not found` (no event of the Gateway or the class
/// itself), creating it again brings both back.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_class_default_configuration_is_used_watched_and_reported() {
    let mut story = Story::create(settings()).await;
    let class = format!("defaults-{}", story.ns);
    story.configuration("defaults", 1).await;
    create(
        &story.admin,
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": { "name": class },
                "spec": { "controllerName": CONTROLLER_NAME, "parametersRef": {
                    "group": DOMAIN, "kind": "GatewayConfiguration", "name": "defaults",
                    "namespace": story.ns } } }),
    )
    .await;
    create(
        &story.admin,
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": { "name": "gw", "namespace": story.ns },
                "spec": { "gatewayClassName": class,
                          "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }] } }),
    )
    .await;
    story.start().await;
    let c = story.wait_conditions("gw", "healthy", healthy).await;
    assert!(
        c[&applied()]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("{}/defaults", story.ns))),
        "{c:#?}"
    );
    let classes: Api<DynamicObject> = Api::all_with(
        story.admin.clone(),
        &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
    );
    let class_accepted = |status: &'static str, reason: &'static str| {
        let classes = classes.clone();
        let class = class.clone();
        async move {
            let start = Instant::now();
            loop {
                let object =
                    serde_json::to_value(classes.get(&class).await.expect("class")).expect("json");
                let c = conditions(&object);
                if is(&c, "Accepted", status, reason) {
                    return c["Accepted"].clone();
                }
                assert!(
                    start.elapsed() < WAIT,
                    "the class never became Accepted {status}/{reason}: {object:#}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    class_accepted("True", "Accepted").await;
    // The default deleted: the class and its Gateway say so, from the configuration's event.
    story
        .api("GatewayConfiguration")
        .delete("defaults", &Default::default())
        .await
        .expect("delete the default");
    let missing = format!("GatewayConfiguration \"{}/defaults\" not found", story.ns);
    let accepted = class_accepted("False", "InvalidParameters").await;
    assert_eq!(accepted["message"], missing.as_str());
    let c = story
        .wait_conditions("gw", "InvalidParameters", |c| {
            is(c, "Accepted", "False", "InvalidParameters")
        })
        .await;
    assert_eq!(c["Accepted"]["message"], missing.as_str());
    // Created again: both come back.
    story.configuration("defaults", 1).await;
    class_accepted("True", "Accepted").await;
    story.wait_conditions("gw", "healthy", healthy).await;
    story.stop().await;
}
