//! What the tests of the Helm chart share (`chart.rs` on the full control plane with kwok's
//! Nodes, `real_node.rs` on a real node): helm and the chart, a scratch directory, objects
//! by kind found by discovery, Deployments rolled out.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams};
use kube::discovery::{self, Scope};
use kube::{Client, ResourceExt};
use serde::Deserialize;
use serde_json::{Value, json};

/// The Kubernetes version `helm template` assumes (the chart needs 1.30 or later): the
/// control plane's.
/// The GatewayConfiguration's group, and the prefix of the controller's own condition.
pub const DOMAIN: &str = "meridio-2.nordix.org";

pub const KUBE_VERSION: &str = "v1.36.3";

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run under e2e/run.sh"))
}

pub fn helm() -> String {
    std::env::var("HELM").unwrap_or_else(|_| "helm".into())
}

pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart_dir() -> PathBuf {
    crate_dir().join("charts/gateway-reconcile-controller")
}

/// A temporary directory, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("chart-test-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("a YAML document"))
        .filter(|doc| !doc.is_null())
        .collect()
}

/// `helm template` of the chart with `values`, CRDs included.
pub fn render(release: &str, namespace: &str, values: &Value) -> Vec<Value> {
    let scratch = Scratch::new("values");
    let file = scratch.path("values.json");
    std::fs::write(&file, values.to_string()).expect("values file");
    let output = Command::new(helm())
        .arg("template")
        .arg(release)
        .arg(chart_dir())
        .args(["--namespace", namespace, "--kube-version", KUBE_VERSION])
        .arg("--include-crds")
        .arg("-f")
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (set HELM, or run e2e/run.sh)", helm()));
    assert!(
        output.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    documents(&String::from_utf8(output.stdout).expect("UTF-8"))
}

pub fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

pub fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

pub fn find<'a>(objects: &'a [Value], kind_: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| kind(o) == kind_)
        .unwrap_or_else(|| panic!("the chart renders no {kind_}"))
}

/// The API of `object`'s kind, found by discovery (namespaced when the kind is).
pub async fn api_for(client: &Client, object: &Value) -> Api<DynamicObject> {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind(object));
    let (resource, capabilities) = discovery::pinned_kind(client, &gvk)
        .await
        .unwrap_or_else(|e| panic!("discovery of {api_version} {}: {e}", kind(object)));
    match capabilities.scope {
        Scope::Namespaced => {
            let ns = object["metadata"]["namespace"].as_str().unwrap_or_else(|| {
                panic!(
                    "{} {}: rendered without a namespace",
                    kind(object),
                    name(object)
                )
            });
            Api::namespaced_with(client.clone(), ns, &resource)
        }
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    }
}

pub async fn delete(client: &Client, object: &Value) {
    let api = api_for(client, object).await;
    match api.delete(name(object), &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => panic!("delete {} {}: {e}", kind(object), name(object)),
    }
}

pub async fn admin() -> Client {
    Client::try_default().await.expect("admin client")
}

pub async fn namespace(admin: &Client, prefix: &str) -> String {
    let ns =
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "generateName": prefix } });
    let api = api_for(admin, &ns).await;
    let ns: DynamicObject = serde_json::from_value(ns).expect("namespace");
    api.create(&PostParams::default(), &ns)
        .await
        .expect("namespace")
        .name_any()
}

pub async fn get(client: &Client, api_version: &str, kind_: &str, ns: &str, name_: &str) -> Value {
    let probe = json!({ "apiVersion": api_version, "kind": kind_,
                        "metadata": { "name": name_, "namespace": ns } });
    let object = api_for(client, &probe)
        .await
        .get_opt(name_)
        .await
        .expect("get");
    object.map_or(Value::Null, |o| serde_json::to_value(o).expect("json"))
}

/// How long the fake Nodes may take to run a Deployment's Pods before the test fails
/// (measured: about a second; the shared machine can be much slower).
pub const ROLLOUT: Duration = Duration::from_secs(90);

/// Runs helm with the admin's kubeconfig (KUBECONFIG), its own directories in `scratch`.
pub fn helm_run(scratch: &Scratch, args: &[&str]) -> String {
    let output = Command::new(helm())
        .args(args)
        .env("HELM_CACHE_HOME", scratch.path("helm-cache"))
        .env("HELM_CONFIG_HOME", scratch.path("helm-config"))
        .env("HELM_DATA_HOME", scratch.path("helm-data"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (set HELM, or run e2e/run.sh)", helm()));
    assert!(
        output.status.success(),
        "helm {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The objects of a kind in `ns` matching `selector` (a label selector).
pub async fn list(
    client: &Client,
    api_version: &str,
    kind_: &str,
    ns: &str,
    selector: &str,
) -> Vec<Value> {
    let probe =
        json!({ "apiVersion": api_version, "kind": kind_, "metadata": { "namespace": ns } });
    api_for(client, &probe)
        .await
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap_or_else(|e| panic!("list {kind_} in {ns}: {e}"))
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).expect("json"))
        .collect()
}

/// The label selector of a Deployment's `spec.selector.matchLabels`.
pub fn selector_of(deployment: &Value) -> String {
    deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels")
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn condition_true(object: &Value, type_: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

/// Waits until Deployment `ns/name` has `replicas` Pods, all updated, Ready and available
/// at its current generation, each Running and Ready on one of the Nodes (E2E_NODES): the
/// real Deployment and ReplicaSet controllers, kube-scheduler and kwok or the real node at
/// work. The Pods.
pub async fn rolled_out(
    admin: &Client,
    ns: &str,
    name_: &str,
    replicas: i64,
    log: &dyn Fn() -> String,
) -> Vec<Value> {
    let nodes: BTreeSet<String> = env("E2E_NODES").split(' ').map(str::to_owned).collect();
    let start = Instant::now();
    loop {
        let deployment = get(admin, "apps/v1", "Deployment", ns, name_).await;
        let status = &deployment["status"];
        let counts_done = !deployment.is_null()
            && status["observedGeneration"] == deployment["metadata"]["generation"]
            && [
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
            ]
            .iter()
            .all(|c| status[c].as_i64() == Some(replicas));
        let pods = if deployment.is_null() {
            Vec::new()
        } else {
            list(admin, "v1", "Pod", ns, &selector_of(&deployment)).await
        };
        let pods_done = pods.len() as i64 == replicas
            && pods.iter().all(|p| {
                p["status"]["phase"] == "Running"
                    && condition_true(p, "Ready")
                    && p["spec"]["nodeName"]
                        .as_str()
                        .is_some_and(|n| nodes.contains(n))
            });
        if counts_done && pods_done {
            return pods;
        }
        if start.elapsed() > ROLLOUT {
            let pods: Vec<_> = pods
                .iter()
                .map(|p| json!({ "name": p["metadata"]["name"], "node": p["spec"]["nodeName"],
                                 "phase": p["status"]["phase"], "conditions": p["status"]["conditions"] }))
                .collect();
            panic!(
                "Deployment {ns}/{name_}: {replicas} Pods not Running and Ready on the Nodes \
                 {nodes:?} in {ROLLOUT:?}\nstatus: {status:#}\nPods: {pods:#?}\n\
                 (kube-controller-manager.log, kube-scheduler.log, and kwok.log or node/kubelet.log, are in E2E_DIR)\n{}",
                log()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

// The GET on loopback the stories of `common` use (this crate does not include `common`).
#[path = "../common/loopback.rs"]
mod loopback;
// The chart's stories use it, the real node's not.
#[allow(unused_imports)]
pub use loopback::http_status;

/// The requests of `user` in the audit log, in order: (verb, resource, subresource,
/// namespace, code).
pub fn requests_of(user: &str) -> Vec<(String, String, String, String, i64)> {
    let log = std::fs::read_to_string(env("AUDIT_LOG")).expect("audit log");
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["user"]["username"] == user)
        .map(|e| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&e["verb"]),
                text(&e["objectRef"]["resource"]),
                text(&e["objectRef"]["subresource"]),
                text(&e["objectRef"]["namespace"]),
                e["responseStatus"]["code"].as_i64().unwrap_or_default(),
            )
        })
        .collect()
}

/// The Gateway's conditions as (type, status, reason).
pub fn conditions(gateway: &Value) -> Vec<(String, String, String)> {
    gateway["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("type"), text("status"), text("reason"))
        })
        .collect()
}

/// Accepted, Programmed and ConfigurationApplied True with their positive reasons.
pub fn healthy(gateway: &Value) -> bool {
    let c = conditions(gateway);
    let has = |t: &str, r: &str| {
        c.iter()
            .any(|(ty, s, re)| ty == t && s == "True" && re == r)
    };
    has("Accepted", "Accepted")
        && has("Programmed", "Programmed")
        && has(&format!("{DOMAIN}/ConfigurationApplied"), "Applied")
}

/// A token of ServiceAccount `ns/account` from the TokenRequest API, valid an hour, bound
/// to `bound` when given (a Pod, as the kubelet binds the tokens it projects).
pub async fn service_account_token(
    client: &Client,
    ns: &str,
    account: &str,
    bound: Option<k8s_openapi::api::authentication::v1::BoundObjectReference>,
) -> String {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::ServiceAccount;
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            bound_object_ref: bound,
            ..Default::default()
        }),
        ..Default::default()
    };
    Api::<ServiceAccount>::namespaced(client.clone(), ns)
        .create_token_request(account, &PostParams::default(), &request)
        .await
        .expect("TokenRequest")
        .status
        .expect("TokenRequest status")
        .token
        .expect("a token")
}
