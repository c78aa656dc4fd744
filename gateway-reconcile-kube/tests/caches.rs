//! Caches and scale, stories on a real kube-apiserver: fifty Gateways converging with
//! resyncs that make no request; the watches' initial lists streamed or paged; reconciles
//! waiting together for a cache filled late; a foreign Deployment of the LB name, seen
//! through the metadata-only watch and never taken.
//! `e2e/run.sh` runs them under the control plane with `--ignored`; their harness (a
//! story's namespace, GatewayClass and in-process controller) is `common::story`.

use std::time::{Duration, Instant};

use gateway_reconcile::Settings;
use kube::Client;
use serde_json::{Value, json};

mod common;
use common::*;

/// The request URIs of the controller's reads of `resource` in `namespace`, from the audit
/// log (the API server's own record).
fn controller_read_uris(namespace: &str, resource: &str) -> Vec<(String, String)> {
    controller_requests(namespace)
        .into_iter()
        .filter(|a| a.resource == resource && matches!(a.verb.as_str(), "get" | "list" | "watch"))
        .map(|a| (a.verb, a.uri))
        .collect()
}

/// The managed-by label selector of the LB Deployments' watch, as a URI query has it.
const LB_SELECTOR_QUERY: &str =
    "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dgateway-controller.meridio-2.nordix.org";

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn fifty_gateways_converge_then_resyncs_make_no_request() {
    let resync = Duration::from_secs(2);
    let mut story = Story::new(Settings {
        resync: Some(resync),
        ..settings()
    })
    .await;
    story.configuration("conf", 1).await;
    for i in 0..50 {
        story.gateway(&format!("gw-{i:02}"), "conf").await;
    }
    // Converging is the claim here, not a speed: alone this takes under 3 s. The bound is
    // tight enough to catch the stall once seen in two suite runs out of six (the first
    // Gateways never reconciled: reconciles waiting for the caches were never woken), and
    // the time taken is printed.
    let start = Instant::now();
    for i in 0..50 {
        let left = Duration::from_secs(60).saturating_sub(start.elapsed());
        story
            .wait_conditions_within(&format!("gw-{i:02}"), "healthy", healthy, left)
            .await;
    }
    eprintln!("50 Gateways healthy after {:?}", start.elapsed());
    let settled = settle_and_collect(&story, 0, Duration::from_secs(3)).await;
    assert_eq!(count(&settled, "create", "deployments", ""), 50);
    // Three resync periods (and a margin): no write, no read.
    let quiet =
        settle_and_collect(&story, settled.len(), resync * 3 + Duration::from_secs(1)).await;
    assert!(quiet.is_empty(), "requests in steady state: {quiet:#?}");
    // The log does hold the controller's cluster-scoped requests (its GatewayClass watch),
    // so an empty list of GETs is one.
    let cluster = controller_requests("");
    assert!(
        cluster.iter().any(|r| r.resource == "gatewayclasses"),
        "no cluster-scoped request of the controller in the audit log"
    );
    let cluster_reads: Vec<Audited> = cluster.into_iter().filter(|r| r.verb == "get").collect();
    assert!(cluster_reads.is_empty(), "{cluster_reads:#?}");
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_foreign_deployment_of_the_lb_name_is_never_taken_and_its_removal_wakes_the_gateway() {
    let mut story = Story::create(settings()).await;
    let sent = story.start_recording().await;
    let foreign = json!({ "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": "sllbr-gw", "namespace": story.ns, "labels": { "owner": "someone-else" } },
        "spec": { "replicas": 1, "selector": { "matchLabels": { "app": "other" } },
            "template": { "metadata": { "labels": { "app": "other" } },
                "spec": { "containers": [{ "name": "web", "image": "registry.example/web:1" }] } } } });
    create(&story.admin, foreign.clone()).await;
    story.configuration("conf", 2).await;
    story.gateway("gw", "conf").await;
    let c = story
        .wait_conditions("gw", "name collision", |c| {
            is(c, "Programmed", "False", "Invalid")
        })
        .await;
    let message = c["Programmed"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        "deployment sllbr-gw exists but is not owned by gateway gw (owned by unknown, cannot proceed due to name collision)"
    );
    assert!(is(&c, &applied(), "False", "ApplyRejected"), "{c:#?}");
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(deployment["metadata"]["labels"]["owner"], "someone-else");
    let requests = story.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.resource != "deployments" || !is_write(r)),
        "the controller wrote the foreign Deployment: {requests:#?}"
    );
    // It saw the collision through the metadata-only watch: its only read of every
    // Deployment asked for metadata (`PartialObjectMetadataList`), and its whole-object
    // reads were selected by our managed-by label, which the foreign one lacks; before
    // reporting the collision, it confirmed it with a GET of that one Deployment's metadata
    // (a Deployment cache behind the Gateway's would otherwise report a false one). The
    // audit log shows the server got the selector.
    let reads = sent.to("/deployments");
    assert!(!reads.is_empty());
    let confirming = |uri: &str| {
        uri.split('?')
            .next()
            .unwrap_or(uri)
            .ends_with("/deployments/sllbr-gw")
    };
    for (method, uri, accept) in &reads {
        assert_eq!(method, "GET", "{reads:#?}");
        let metadata_only = accept.contains("as=PartialObjectMetadata");
        assert!(
            metadata_only != uri.contains(LB_SELECTOR_QUERY),
            "a whole-object read of every Deployment, or a metadata read of the LB ones: {reads:#?}"
        );
    }
    assert!(
        reads.iter().any(|(_, uri, accept)| confirming(uri)
            && accept.contains("as=PartialObjectMetadata;")),
        "no GET confirming the collision: {reads:#?}"
    );
    assert!(
        reads
            .iter()
            .any(|(_, uri, accept)| uri.contains("watch=true")
                && accept.contains("as=PartialObjectMetadata")),
        "no metadata-only watch: {reads:#?}"
    );
    let audited = controller_read_uris(&story.ns, "deployments");
    assert!(
        audited
            .iter()
            .any(|(verb, uri)| verb == "list" && uri.contains(LB_SELECTOR_QUERY)),
        "{audited:#?}"
    );
    // The foreign Deployment goes away: the Gateway is woken (no resync is set) and its own
    // LB Deployment created.
    delete(&story.admin, &foreign).await;
    story.wait_conditions("gw", "healthy", healthy).await;
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(deployment["metadata"]["ownerReferences"][0]["name"], "gw");
    story.stop().await;
}

/// Whether the API server serves streaming lists (a watch with `sendInitialEvents=true`),
/// asked as the admin.
async fn serves_streaming_lists(admin: &Client, ns: &str) -> bool {
    let request = http::Request::get(format!(
        "/apis/apps/v1/namespaces/{ns}/deployments?watch=true&sendInitialEvents=true\
         &resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true\
         &timeoutSeconds=1"
    ))
    .body(Vec::new())
    .expect("request");
    match admin.request_text(request).await {
        Ok(text) => !text.contains("sendInitialEvents is forbidden"),
        Err(kube::Error::Api(status)) if status.code == 422 => false,
        Err(error) => panic!("watch-list probe: {error}"),
    }
}

/// With streaming lists on, every watch reads its initial list as a streaming list where
/// the server serves them (no LIST at all), and falls back to paged LISTs where it does
/// not (run under `E2E_APISERVER_ARGS=--feature-gates=WatchList=false` for that case);
/// either way the Gateway becomes healthy and the Deployment watches keep their label
/// selector and metadata-only answers.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn streaming_lists_fill_every_cache_or_fall_back_to_paged_lists() {
    let mut story = Story::create(settings()).await;
    let served = serves_streaming_lists(&story.admin, &story.ns).await;
    let sent = story.start_recording_with(true).await;
    story.healthy_gateway().await;
    let reads = sent.to("/");
    let watch_lists: Vec<_> = reads
        .iter()
        .filter(|(_, uri, _)| uri.contains("watch=true") && uri.contains("sendInitialEvents=true"))
        .collect();
    let lists: Vec<_> = reads
        .iter()
        .filter(|(method, uri, _)| {
            method == "GET"
                && uri.contains("?")
                && !uri.contains("watch=true")
                && !uri.contains("/leases/")
        })
        .collect();
    // One per watch: Gateways, GatewayClasses, GatewayConfigurations, L34Routes, the LB
    // Deployments and every Deployment's metadata.
    for resource in [
        "/gateways?",
        "/gatewayclasses?",
        "/gatewayconfigurations?",
        "/l34routes?",
    ] {
        assert!(
            watch_lists.iter().any(|(_, uri, _)| uri.contains(resource)),
            "{resource}: {reads:#?}"
        );
    }
    let deployments: Vec<_> = watch_lists
        .iter()
        .filter(|(_, uri, _)| uri.contains("/deployments?"))
        .collect();
    assert!(
        deployments
            .iter()
            .any(|(_, uri, _)| uri.contains(LB_SELECTOR_QUERY)),
        "{reads:#?}"
    );
    assert!(
        deployments
            .iter()
            .any(|(_, uri, accept)| !uri.contains(LB_SELECTOR_QUERY)
                && accept.contains("as=PartialObjectMetadata")),
        "{reads:#?}"
    );
    if served {
        assert!(
            lists.is_empty(),
            "a LIST though streaming lists are served: {lists:#?}"
        );
    } else {
        assert!(
            lists.iter().any(|(_, uri, _)| uri.contains("/gateways?"))
                && lists
                    .iter()
                    .any(|(_, uri, _)| uri.contains(LB_SELECTOR_QUERY)),
            "no fallback to paged LISTs: {reads:#?}"
        );
    }
    eprintln!(
        "streaming lists served: {served}; {} streaming lists, {} LISTs",
        watch_lists.len(),
        lists.len()
    );
    story.stop().await;
}

/// Binds a ClusterRole to `user` (the role created first when given as an object).
async fn bind_role(admin: &Client, role: &Value, user: &str) -> Value {
    if role["rules"].is_array() {
        create(admin, role.clone()).await;
    }
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": { "name": format!("{}-{user}", role["metadata"]["name"].as_str().unwrap_or_default()) },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": role["metadata"]["name"] },
        "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }]
    });
    create(admin, binding.clone()).await;
    binding
}

/// The stall once seen in the fifty-Gateway story, staged: the controller's Deployment
/// cache cannot fill (its user may not list Deployments yet) while its Gateway cache is
/// ready, so as many reconciles as the concurrency allows (4) wait for it at once; then
/// the permission is granted. Every Gateway must converge: before the fix, kube-runtime
/// woke only the last of the waiting reconciles and the other three waited forever.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn reconciles_waiting_together_for_a_cache_filled_late_all_go_on() {
    let mut story = Story::create(settings()).await;
    let user = format!("e2e-late-{}", story.ns);
    let full: Value =
        serde_yaml_ng::from_str(include_str!("../deploy/clusterrole.yaml")).expect("role");
    let mut without_deployments = full.clone();
    without_deployments["metadata"]["name"] = json!(format!("no-deployments-{}", story.ns));
    if let Some(rules) = without_deployments["rules"].as_array_mut() {
        rules.retain(|rule| !rule["resources"].to_string().contains("deployments"));
    }
    bind_role(&story.admin, &without_deployments, &user).await;
    story.configuration("conf", 1).await;
    let gateways = ["gw-0", "gw-1", "gw-2", "gw-3", "gw-4"];
    for gateway in gateways {
        story.gateway(gateway, "conf").await;
    }
    story.start_as(&user).await;
    // Long enough for the Gateway cache to fill and four reconciles to start waiting (the
    // Deployment list is refused meanwhile, and retried with backoff).
    tokio::time::sleep(Duration::from_secs(3)).await;
    for gateway in gateways {
        let c = conditions(&story.get("Gateway", gateway).await);
        assert!(
            !c.contains_key(&applied()),
            "{gateway} reconciled without its Deployment cache: {c:#?}"
        );
    }
    // The full role (the file's name is bound once per control plane to the controller's
    // own user: bind the existing role to this one too).
    let start = Instant::now();
    let binding = bind_role(
        &story.admin,
        &json!({ "metadata": full["metadata"] }),
        &user,
    )
    .await;
    for gateway in gateways {
        story.wait_conditions(gateway, "healthy", healthy).await;
    }
    eprintln!("5 Gateways healthy {:?} after the grant", start.elapsed());
    story.stop().await;
    delete(&story.admin, &binding).await;
}
