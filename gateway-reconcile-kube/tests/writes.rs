//! The write path and drift, stories on a real kube-apiserver: a Gateway created,
//! accepted, programmed and its LB Deployment rendered; a configuration edit written once;
//! a foreign sidecar, an owned field or the managed-by label undone once, an autoscaler's
//! replicas kept unless enforced; a foreign condition kept across the status write; a
//! mutating admission webhook met with one write per desired object.
//! `e2e/run.sh` runs them under the control plane with `--ignored`; their harness (a
//! story's namespace, GatewayClass and in-process controller) is `common::story`.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

mod common;
use common::*;
// The webhooks the tests serve on loopback (shared with the scenario replay).
use common::webhook as served_webhook;

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn create_accepts_programs_and_renders() {
    let mut story = Story::new(settings()).await;
    story.configuration("conf", 2).await;
    story.gateway("gw", "conf").await;
    let c = story.wait_conditions("gw", "healthy", healthy).await;
    assert_eq!(
        c["Accepted"]["message"],
        format!("Gateway accepted by {CONTROLLER_NAME}")
    );
    let message = c["Programmed"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("LB Deployment reconciled with GatewayConfiguration generation 1"),
        "{message}"
    );
    // The class's own Accepted, written by the controller (`gatewayclasses/status`).
    let classes: Api<DynamicObject> = Api::all_with(
        story.admin.clone(),
        &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
    );
    let start = Instant::now();
    let accepted = loop {
        let class =
            serde_json::to_value(classes.get(&story.class).await.expect("class")).expect("json");
        if let Some(c) = conditions(&class)
            .get("Accepted")
            .filter(|c| c["status"] == "True")
        {
            break c.clone();
        }
        assert!(
            start.elapsed() < WAIT,
            "the class was never accepted: {class:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(accepted["reason"], "Accepted");
    assert_eq!(
        accepted["message"],
        format!("GatewayClass accepted by {CONTROLLER_NAME}")
    );
    assert_eq!(accepted["observedGeneration"], 1);
    let gateway = story.get("Gateway", "gw").await;
    let deployment = story.get("Deployment", "sllbr-gw").await;
    // As rendered: owner, labels, generation annotations, replicas, containers, NADs.
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "Gateway");
    assert_eq!(owner["uid"], gateway["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    assert_eq!(owner["blockOwnerDeletion"], true);
    let labels = &deployment["metadata"]["labels"];
    assert_eq!(labels["app"], "sllbr-gw");
    assert_eq!(labels["gateway.networking.k8s.io/gateway-name"], "gw");
    assert_eq!(
        labels["app.kubernetes.io/managed-by"],
        "gateway-controller.meridio-2.nordix.org"
    );
    let conf = story.get("GatewayConfiguration", "conf").await;
    let annotations = &deployment["metadata"]["annotations"];
    assert_eq!(
        annotations[format!("{DOMAIN}/gatewayconfiguration-generation")],
        "1"
    );
    assert_eq!(
        annotations[format!("{DOMAIN}/gatewayconfiguration-uid")],
        conf["metadata"]["uid"]
    );
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"]["app"],
        "sllbr-gw"
    );
    let pod = &deployment["spec"]["template"];
    let names: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["loadbalancer", "router"]);
    assert_eq!(pod["spec"]["serviceAccountName"], "stateless-load-balancer");
    let networks: Value = serde_json::from_str(
        pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
            .as_str()
            .expect("networks annotation"),
    )
    .expect("JSON list");
    assert_eq!(
        networks,
        json!([{ "name": "vlan", "namespace": story.ns, "interface": "eth1" }])
    );
    assert_eq!(
        pod["spec"]["readinessGates"],
        json!([{ "conditionType": "meridio-2.nordix.org/ipv4-connectivity" }])
    );
    // Exactly one Deployment write, a POST; no GET or LIST from a reconcile.
    let requests = settle_and_collect(&story, 0, Duration::from_secs(2)).await;
    assert_eq!(
        count(&requests, "create", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        0,
        "{requests:#?}"
    );
    assert!(count(&requests, "patch", "gateways", "status") >= 1);
    assert!(
        requests.iter().all(|r| r.verb != "get"),
        "a reconcile read from the API: {requests:#?}"
    );
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn configuration_edit_writes_once_and_names_the_generation() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let before = settle_and_collect(&story, 0, Duration::from_secs(1))
        .await
        .len();
    story
        .patch(
            "GatewayConfiguration",
            "conf",
            json!({ "spec": { "internalSubnets": [
                { "attachmentType": "NAD", "cidr": "169.254.100.0/24" },
                { "attachmentType": "NAD", "cidr": "fd00:100::/64" } ] } }),
        )
        .await;
    let c = story
        .wait_conditions("gw", "generation 2 applied", |c| {
            healthy(c)
                && c["Programmed"]["message"].as_str().is_some_and(|m| {
                    m.starts_with("LB Deployment reconciled with GatewayConfiguration generation 2")
                })
        })
        .await;
    assert!(!c.contains_key(&degraded()));
    let requests = settle_and_collect(&story, before, Duration::from_secs(3)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "create", "deployments", ""),
        0,
        "{requests:#?}"
    );
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(
        deployment["spec"]["template"]["spec"]["readinessGates"],
        json!([{ "conditionType": "meridio-2.nordix.org/ipv4-connectivity" },
               { "conditionType": "meridio-2.nordix.org/ipv6-connectivity" }])
    );
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_foreign_sidecar_is_removed_once_and_foreign_labels_stay() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let before = settle_and_collect(&story, 0, Duration::from_secs(1))
        .await
        .len();
    // Another manager adds a container, an env var, a label and an annotation.
    let deployment = story.get("Deployment", "sllbr-gw").await;
    let mut containers = deployment["spec"]["template"]["spec"]["containers"].clone();
    let list = containers.as_array_mut().expect("containers");
    let mut env = list[0]["env"].as_array().cloned().unwrap_or_default();
    env.push(json!({ "name": "FOREIGN", "value": "1" }));
    list[0]["env"] = Value::Array(env);
    list.push(json!({ "name": "sidecar", "image": "registry.example/sidecar:1" }));
    let edited = story
        .api("Deployment")
        .patch(
            "sllbr-gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({
                "metadata": { "labels": { "team": "blue" }, "annotations": { "example.com/note": "kept" } },
                "spec": { "template": { "spec": { "containers": containers } } } })),
        )
        .await
        .expect("foreign edit");
    let edited_generation = edited.metadata.generation.unwrap_or_default();
    // The controller replaces it once: the sidecar and env var go, label and annotation stay.
    let start = Instant::now();
    let deployment = loop {
        let d = story.get("Deployment", "sllbr-gw").await;
        if d["metadata"]["generation"].as_i64().unwrap_or_default() > edited_generation {
            break d;
        }
        assert!(start.elapsed() < WAIT, "the sidecar was never removed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let names: Vec<&str> = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["loadbalancer", "router"]);
    let env = deployment["spec"]["template"]["spec"]["containers"][0]["env"].to_string();
    assert!(!env.contains("FOREIGN"), "{env}");
    assert_eq!(deployment["metadata"]["labels"]["team"], "blue");
    assert_eq!(
        deployment["metadata"]["annotations"]["example.com/note"],
        "kept"
    );
    // No write loop: exactly one update, then silence.
    let requests = settle_and_collect(&story, before, Duration::from_secs(5)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "patch", "gateways", "status"),
        0,
        "{requests:#?}"
    );
    story.wait_conditions("gw", "healthy", healthy).await;
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn an_owned_field_edit_is_reverted_once() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let before = settle_and_collect(&story, 0, Duration::from_secs(1))
        .await
        .len();
    let original = story.get("Deployment", "sllbr-gw").await;
    let image = original["spec"]["template"]["spec"]["containers"][0]["image"].clone();
    let mut containers = original["spec"]["template"]["spec"]["containers"].clone();
    containers[0]["image"] = json!("registry.example/hijacked:1");
    story
        .patch(
            "Deployment",
            "sllbr-gw",
            json!({ "spec": { "template": { "spec": { "containers": containers } } } }),
        )
        .await;
    let start = Instant::now();
    loop {
        let d = story.get("Deployment", "sllbr-gw").await;
        if d["spec"]["template"]["spec"]["containers"][0]["image"] == image {
            break;
        }
        assert!(start.elapsed() < WAIT, "the image was never reverted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let requests = settle_and_collect(&story, before, Duration::from_secs(4)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    story.stop().await;
}

/// A TCP listener that accepts and never answers: a webhook pointing at it holds the API
/// server's call until the webhook's timeout. Counts the connections it accepted.
async fn silent_listener() -> (
    u16,
    tokio::task::JoinHandle<()>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(socket);
        }
    });
    (port, task, accepted)
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_foreign_condition_written_during_a_reconcile_survives() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    // Hold every Deployment update for 2 s (then let it through), so that the reconcile
    // that follows the edit is still running when the foreign condition is written.
    let (port, listener, accepted) = silent_listener().await;
    let hook = webhook(
        &story,
        &format!("hold-{}", story.ns),
        &format!("https://127.0.0.1:{port}/validate"),
        "Ignore",
    );
    create(&story.admin, hook.clone()).await;
    // In effect once the API server has called the webhook for a dry-run update (held for
    // the webhook's timeout, then let through).
    until_dry_run_update(
        &story,
        "call the webhook for a dry-run update, then let it through",
        |answer| answer.is_ok() && accepted.load(std::sync::atomic::Ordering::SeqCst) > 0,
    )
    .await;
    let before = story.requests().len();
    story.enforce_replicas(3).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let gateway = story.get("Gateway", "gw").await;
    let mut list = gateway["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    list.push(json!({ "type": "example.com/Audited", "status": "True", "reason": "Checked",
                      "message": "written by another client", "lastTransitionTime": "2026-01-01T00:00:00Z",
                      "observedGeneration": gateway["metadata"]["generation"] }));
    story
        .api("Gateway")
        .patch_status(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({
            "metadata": { "resourceVersion": gateway["metadata"]["resourceVersion"] },
            "status": { "conditions": list } })),
        )
        .await
        .expect("foreign condition");
    let c = story
        .wait_conditions("gw", "generation 2 applied", |c| {
            healthy(c)
                && c["Programmed"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("generation 2"))
        })
        .await;
    let foreign = c
        .get("example.com/Audited")
        .unwrap_or_else(|| panic!("the foreign condition was lost: {c:#?}"));
    assert_eq!(foreign["message"], "written by another client");
    let requests = settle_and_collect(&story, before, Duration::from_secs(1)).await;
    // The controller's first status write lost the race (409) and was made again.
    let conflicts = requests
        .iter()
        .filter(|r| r.resource == "gateways" && r.subresource == "status" && r.code == 409)
        .count();
    assert!(conflicts >= 1, "no status conflict happened: {requests:#?}");
    delete(&story.admin, &hook).await;
    listener.abort();
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn an_own_deployment_whose_managed_by_label_is_removed_is_restored() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let before = settle_and_collect(&story, 0, Duration::from_secs(1))
        .await
        .len();
    // Someone removes our label: the Deployment leaves the label-selected watch and only
    // the metadata-only one has it; it is still ours by its controller ownerReference.
    story
        .patch(
            "Deployment",
            "sllbr-gw",
            json!({ "metadata": { "labels": { "app.kubernetes.io/managed-by": null } } }),
        )
        .await;
    let start = Instant::now();
    loop {
        let d = story.get("Deployment", "sllbr-gw").await;
        if d["metadata"]["labels"]["app.kubernetes.io/managed-by"]
            == "gateway-controller.meridio-2.nordix.org"
        {
            break;
        }
        assert!(
            start.elapsed() < WAIT,
            "the label was never restored: {d:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let requests = settle_and_collect(&story, before, Duration::from_secs(4)).await;
    // Read whole once (a GET: the caches hold no foreign or unlabeled pod template), then
    // replaced once; never created again.
    assert_eq!(
        count(&requests, "get", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "create", "deployments", ""),
        0,
        "{requests:#?}"
    );
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(deployment["metadata"]["ownerReferences"][0]["name"], "gw");
    let c = conditions(&story.get("Gateway", "gw").await);
    assert!(healthy(&c), "{c:#?}");
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn an_autoscaler_keeps_replicas_unless_they_are_enforced() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let before = settle_and_collect(&story, 0, Duration::from_secs(1))
        .await
        .len();
    // An autoscaler scales the LB Deployment: not drift, no write.
    story
        .patch(
            "Deployment",
            "sllbr-gw",
            json!({ "spec": { "replicas": 5 } }),
        )
        .await;
    let requests = settle_and_collect(&story, before, Duration::from_secs(3)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        0,
        "{requests:#?}"
    );
    assert_eq!(
        story.get("Deployment", "sllbr-gw").await["spec"]["replicas"],
        5
    );
    // enforceReplicas: the GatewayConfiguration's count wins, with one write.
    let before = story.requests().len();
    story.enforce_replicas(2).await;
    story
        .wait_conditions("gw", "generation 2 applied", |c| {
            healthy(c)
                && c["Programmed"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("generation 2"))
        })
        .await;
    assert_eq!(
        story.get("Deployment", "sllbr-gw").await["spec"]["replicas"],
        2
    );
    let requests = settle_and_collect(&story, before, Duration::from_secs(2)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    story.stop().await;
}

/// What a mirror-registry admission webhook makes of a Deployment: every container image
/// moved to `mirror.example.com` and a toleration added, as air-gapped clusters do.
fn mirrored(object: &Value) -> Value {
    let mut changed = object.clone();
    let spec = &mut changed["spec"]["template"]["spec"];
    if let Some(containers) = spec["containers"].as_array_mut() {
        for container in containers {
            if let Some(image) = container["image"].as_str() {
                let path = image.split_once('/').map_or(image, |(_, rest)| rest);
                container["image"] = json!(format!("mirror.example.com/{path}"));
            }
        }
    }
    let toleration = json!({ "key": "mirror.example.com/injected", "operator": "Exists" });
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    if !tolerations.contains(&toleration) {
        tolerations.push(toleration);
    }
    spec["tolerations"] = Value::Array(tolerations);
    changed
}

/// How many times the controller recorded an Event of `reason` in the story's namespace
/// (an Event repeated is one object with a count).
async fn events_of(story: &Story, reason: &str) -> i64 {
    let events: Api<DynamicObject> = Api::namespaced_with(
        story.admin.clone(),
        &story.ns,
        &resource("events.k8s.io/v1", "Event"),
    );
    let list = events.list(&Default::default()).await.expect("events");
    list.into_iter()
        .map(|e| serde_json::to_value(e).expect("json"))
        .filter(|e| e["reason"] == reason)
        .map(|e| {
            e["series"]["count"]
                .as_i64()
                .or(e["deprecatedCount"].as_i64())
                .unwrap_or(1)
                .max(1)
        })
        .sum()
}

/// Pokes the Gateway `times` times (an annotation: no generation moves), each a reconcile.
async fn poke(story: &Story, times: usize) {
    for i in 0..times {
        story
            .patch(
                "Gateway",
                "gw",
                json!({ "metadata": { "annotations": { "e2e.example/poke": i.to_string() } } }),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn mutating_admission_gets_one_write_per_desired_object_and_one_more_per_restart() {
    let mut story = Story::create(settings()).await;
    let dir = env("E2E_DIR");
    let served = served_webhook::mutate(&dir, mirrored)
        .await
        .expect("mutating webhook");
    let ca_bundle = served_webhook::ca_bundle(&dir).expect("CA");
    let hook = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": { "name": format!("mirror-{}", story.ns) },
        "webhooks": [{ "name": "mirror.e2e.example", "failurePolicy": "Fail", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "timeoutSeconds": 5, "reinvocationPolicy": "Never",
            "clientConfig": { "url": served.url, "caBundle": ca_bundle },
            "rules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"] }],
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": story.ns } } }] });
    create(&story.admin, hook.clone()).await;
    // In effect once a dry-run create in the namespace reaches it.
    let deployments = story.api("Deployment");
    let probe: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "probe" },
        "spec": { "selector": { "matchLabels": { "app": "probe" } },
            "template": { "metadata": { "labels": { "app": "probe" } },
                "spec": { "containers": [{ "name": "probe", "image": "registry.example/probe:1" }] } } } }))
    .expect("probe");
    let dry_run = PostParams {
        dry_run: true,
        field_manager: None,
    };
    served_webhook::until_admission("call the mutating webhook", async || {
        let before = served.calls();
        deployments
            .create(&dry_run, &probe)
            .await
            .map_err(|e| e.to_string())?;
        Ok(served.calls() > before)
    })
    .await
    .expect("webhook in effect");

    story.start().await;
    story.healthy_gateway().await;
    poke(&story, 20).await;
    let requests = settle_and_collect(&story, 0, Duration::from_secs(2)).await;
    let deployment = story.get("Deployment", "sllbr-gw").await;
    let image = deployment["spec"]["template"]["spec"]["containers"][0]["image"].clone();
    assert!(
        image
            .as_str()
            .is_some_and(|i| i.starts_with("mirror.example.com/")),
        "{image}"
    );
    assert_eq!(
        count(&requests, "create", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        0,
        "{requests:#?}"
    );
    assert_eq!(events_of(&story, "AdmissionChanged").await, 1);
    let c = conditions(&story.get("Gateway", "gw").await);
    assert!(healthy(&c) && !c.contains_key(&degraded()), "{c:#?}");

    // An edit: a new desired object, written once.
    let before = requests.len();
    story.enforce_replicas(3).await;
    story
        .wait_conditions("gw", "generation 2 applied", |c| {
            healthy(c)
                && c["Programmed"]["message"].as_str().is_some_and(|m| {
                    m.starts_with("LB Deployment reconciled with GatewayConfiguration generation 2")
                })
        })
        .await;
    poke(&story, 5).await;
    let requests = settle_and_collect(&story, before, Duration::from_secs(2)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(events_of(&story, "AdmissionChanged").await, 2);
    assert_eq!(
        story.get("Deployment", "sllbr-gw").await["spec"]["replicas"],
        3
    );

    // A restart forgets the record: one more write, then none.
    story.stop().await;
    let before = story.requests().len();
    story.start().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    poke(&story, 5).await;
    let requests = settle_and_collect(&story, before, Duration::from_secs(2)).await;
    assert_eq!(
        count(&requests, "update", "deployments", ""),
        1,
        "{requests:#?}"
    );
    assert_eq!(
        count(&requests, "create", "deployments", ""),
        0,
        "{requests:#?}"
    );
    let c = conditions(&story.get("Gateway", "gw").await);
    assert!(healthy(&c) && !c.contains_key(&degraded()), "{c:#?}");
    delete(&story.admin, &hook).await;
    story.stop().await;
}

/// The recorder's series on a real API server: an Event repeated on the same object is
/// created once, then patched with its series alone (`count`, `lastObservedTime`), which
/// the server takes; the note stays the first occurrence's, as kube-runtime's recorder
/// leaves it. A repeat of an Event someone deleted is a new Event.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_repeated_event_is_one_event_with_a_series() {
    use gateway_reconcile_kube::events::Recorder;
    use k8s_openapi::api::core::v1::ObjectReference;
    use kube::runtime::events::{Event, EventType, Reporter};

    let story = Story::create(settings()).await;
    let recorder = Recorder::new(
        story.admin.clone(),
        Reporter {
            controller: "gateway-reconcile-controller".into(),
            instance: Some("e2e".into()),
        },
    );
    let regarding = ObjectReference {
        api_version: Some("gateway.networking.k8s.io/v1".into()),
        kind: Some("Gateway".into()),
        namespace: Some(story.ns.clone()),
        name: Some("gw".into()),
        uid: Some("4d0f3c2e-0000-4000-8000-000000000001".into()),
        ..ObjectReference::default()
    };
    let apply_failed = |note: &str| Event {
        type_: EventType::Warning,
        reason: "ApplyFailed".into(),
        note: Some(note.into()),
        action: "Update".into(),
        secondary: None,
    };
    for note in ["first", "second", "third"] {
        recorder
            .publish(&apply_failed(note), &regarding)
            .await
            .expect("recorded");
    }
    let events: Api<DynamicObject> = Api::namespaced_with(
        story.admin.clone(),
        &story.ns,
        &resource("events.k8s.io/v1", "Event"),
    );
    /// The namespace's `ApplyFailed` Events, as JSON.
    async fn listed(events: &Api<DynamicObject>) -> Vec<Value> {
        events
            .list(&Default::default())
            .await
            .expect("events")
            .into_iter()
            .map(|e| serde_json::to_value(e).expect("json"))
            .filter(|e| e["reason"] == "ApplyFailed")
            .collect()
    }
    let list = listed(&events).await;
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_eq!(list[0]["series"]["count"], 3, "{:#}", list[0]);
    assert!(list[0]["series"]["lastObservedTime"].is_string());
    assert_eq!(list[0]["note"], "first");
    assert_eq!(events_of(&story, "ApplyFailed").await, 3);
    // Deleted, the Event's next repeat is a new Event (the patch finds none: 404).
    let name = list[0]["metadata"]["name"]
        .as_str()
        .expect("named")
        .to_owned();
    events
        .delete(&name, &Default::default())
        .await
        .expect("deleted");
    recorder
        .publish(&apply_failed("fourth"), &regarding)
        .await
        .expect("recorded again");
    let list = listed(&events).await;
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_ne!(list[0]["metadata"]["name"], name.as_str());
    assert_eq!(list[0]["note"], "fourth");
    assert!(list[0].get("series").is_none(), "{:#}", list[0]);
}
