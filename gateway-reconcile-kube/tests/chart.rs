//! The Helm chart (`charts/gateway-reconcile-controller`) on a real kube-apiserver
//! (`e2e/run.sh` runs these with `--ignored` on a control plane of their own, with `HELM`
//! naming the pinned helm binary it builds):
//!
//! - `deploy/` is the chart rendered with its default values;
//! - every object the chart renders, cluster-wide and in its one-namespace mode, is accepted
//!   by the API server with `dryRun=All` (and a broken one is not);
//! - with the chart installed and its bindings the only ones naming the controller's user,
//!   the admission policy denies that user's writes to Deployments it does not manage while
//!   other users are unaffected, and the controller binary, run as a process as that user
//!   with the chart's args and ConfigMap files, creates and updates the LB Deployment and
//!   writes the Gateway status with no request refused (no kubelet runs here, so the
//!   chart's own Pods never start).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{
    Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::discovery::{self, Scope};
use kube::{Client, ResourceExt};
use serde::Deserialize;
use serde_json::{Value, json};

const CONTROLLER_USER: &str = "gateway-reconcile-controller";
const CONTROLLER_NAME: &str = "meridio-2.nordix.org/gateway-controller";
const DOMAIN: &str = "meridio-2.nordix.org";
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
const MANAGED_BY: &str = "gateway-controller.meridio-2.nordix.org";
/// The Kubernetes version `helm template` assumes (the chart needs 1.30 or later): the
/// control plane's.
const KUBE_VERSION: &str = "v1.36.3";
const WAIT: Duration = Duration::from_secs(40);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run under e2e/run.sh"))
}

fn helm() -> String {
    std::env::var("HELM").unwrap_or_else(|_| "helm".into())
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn chart_dir() -> PathBuf {
    crate_dir().join("charts/gateway-reconcile-controller")
}

/// A temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("chart-test-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("a YAML document"))
        .filter(|doc| !doc.is_null())
        .collect()
}

/// `helm template` of the chart with `values`, CRDs included.
fn render(release: &str, namespace: &str, values: &Value) -> Vec<Value> {
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

fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn find<'a>(objects: &'a [Value], kind_: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| kind(o) == kind_)
        .unwrap_or_else(|| panic!("the chart renders no {kind_}"))
}

/// The API of `object`'s kind, found by discovery (namespaced when the kind is).
async fn api_for(client: &Client, object: &Value) -> Api<DynamicObject> {
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

/// Server-side apply of `object`, as `helm install` would create it; `dry_run` sends
/// `dryRun=All` (admission and validation run, nothing is stored).
async fn apply(client: &Client, object: &Value, dry_run: bool) -> Result<DynamicObject, String> {
    let api = api_for(client, object).await;
    let mut params = PatchParams::apply("chart-e2e").force();
    if dry_run {
        params = params.dry_run();
    }
    api.patch(name(object), &params, &Patch::Apply(object))
        .await
        .map_err(|e| format!("{} {}: {e}", kind(object), name(object)))
}

async fn delete(client: &Client, object: &Value) {
    let api = api_for(client, object).await;
    match api.delete(name(object), &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => panic!("delete {} {}: {e}", kind(object), name(object)),
    }
}

async fn admin() -> Client {
    Client::try_default().await.expect("admin client")
}

async fn controller_client() -> Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(env("E2E_CONTROLLER_KUBECONFIG"))
        .expect("controller kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("controller config");
    Client::try_from(config).expect("controller client")
}

async fn namespace(admin: &Client, prefix: &str) -> String {
    let ns =
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "generateName": prefix } });
    let api = api_for(admin, &ns).await;
    let ns: DynamicObject = serde_json::from_value(ns).expect("namespace");
    api.create(&PostParams::default(), &ns)
        .await
        .expect("namespace")
        .name_any()
}

#[test]
#[ignore = "needs helm: e2e/run.sh"]
fn deploy_is_the_chart_rendered_with_default_values() {
    let scratch = Scratch::new("deploy");
    let status = Command::new(crate_dir().join("deploy/render.sh"))
        .arg(&scratch.0)
        .env("HELM", helm())
        .status()
        .expect("deploy/render.sh");
    assert!(status.success(), "deploy/render.sh failed");
    let marker = "# Generated by deploy/render.sh from the chart; do not edit.";
    let files = |dir: &Path| -> BTreeSet<PathBuf> {
        let mut out = BTreeSet::new();
        let mut dirs = vec![dir.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if std::fs::read_to_string(&path)
                    .is_ok_and(|t| t.lines().next() == Some(marker))
                {
                    out.insert(path.strip_prefix(dir).expect("prefix").to_path_buf());
                }
            }
        }
        out
    };
    let deploy = crate_dir().join("deploy");
    let rendered = files(&scratch.0);
    assert!(rendered.len() >= 10, "{rendered:?}");
    assert_eq!(
        files(&deploy),
        rendered,
        "deploy/ and the rendering hold different files: run deploy/render.sh"
    );
    for file in &rendered {
        let want = std::fs::read_to_string(scratch.0.join(file)).expect("rendered");
        let have = std::fs::read_to_string(deploy.join(file)).expect("deploy");
        assert!(
            want == have,
            "deploy/{} differs from the chart's rendering: run deploy/render.sh",
            file.display()
        );
    }
}

/// The one-namespace mode with every optional part switched: extra subjects of each kind,
/// no leader election (one replica), no metrics Service, own settings and LB template.
fn one_namespace_values(watch: &str) -> Value {
    json!({
        "watchNamespace": watch,
        "replicas": 1,
        "leaderElection": { "enabled": false },
        "metrics": { "port": 9090, "service": { "enabled": false } },
        "health": { "port": 9091 },
        "rbac": { "extraSubjects": [
            { "kind": "User", "name": CONTROLLER_USER },
            { "kind": "Group", "name": "lb-operators" },
            { "kind": "ServiceAccount", "name": "other", "namespace": watch },
        ] },
        "settings": { "deploymentPrefix": "lb-", "degradedAfter": "2m" },
        "lbTemplate": { "apiVersion": "apps/v1", "kind": "Deployment", "spec": { "template": {
            "spec": { "containers": [{ "name": "loadbalancer", "image": "example.org/lb:1" }] } } } },
    })
}

#[tokio::test]
#[ignore = "needs a control plane and helm: e2e/run.sh"]
async fn every_rendered_object_is_accepted_by_a_dry_run() {
    let admin = admin().await;
    let release_ns = namespace(&admin, "chart-dry-").await;
    let watch_ns = namespace(&admin, "chart-dry-watch-").await;
    let variants = [
        ("default values", json!({})),
        ("one namespace", one_namespace_values(&watch_ns)),
    ];
    for (variant, values) in variants {
        let objects = render("dry", &release_ns, &values);
        let kinds: BTreeSet<&str> = objects.iter().map(kind).collect();
        for expected in [
            "CustomResourceDefinition",
            "ServiceAccount",
            "ConfigMap",
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        ] {
            assert!(kinds.contains(expected), "{variant}: no {expected}");
        }
        let mut refused = Vec::new();
        for object in &objects {
            if let Err(e) = apply(&admin, object, true).await {
                refused.push(e);
            }
        }
        assert!(refused.is_empty(), "{variant}: refused: {refused:#?}");
        eprintln!(
            "{variant}: {} objects accepted with dryRun=All",
            objects.len()
        );
        // Nothing was stored.
        let role = find(&objects, "ClusterRole");
        let roles = api_for(&admin, role).await;
        assert!(
            roles.get_opt(name(role)).await.expect("get").is_none(),
            "{variant}: the dry run stored the ClusterRole"
        );
    }
    // The check can fail: a policy whose CEL does not compile is refused.
    let objects = render("dry", &release_ns, &json!({}));
    let mut policy = find(&objects, "ValidatingAdmissionPolicy").clone();
    policy["spec"]["validations"][0]["expression"] = json!("object.metadata.labels[");
    let refused = apply(&admin, &policy, true)
        .await
        .expect_err("a broken policy is refused");
    assert!(
        refused.contains("422") || refused.contains("Invalid"),
        "{refused}"
    );
}

/// The user's bindings in the cluster, as `KIND NAMESPACE/NAME`.
async fn bindings_naming(admin: &Client, user: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for kind in ["ClusterRoleBinding", "RoleBinding"] {
        let gvk = GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind);
        let (resource, _) = discovery::pinned_kind(admin, &gvk)
            .await
            .expect("discovery");
        // All namespaces for RoleBindings.
        let api = Api::<DynamicObject>::all_with(admin.clone(), &resource);
        for binding in api.list(&ListParams::default()).await.expect("list").items {
            let value = serde_json::to_value(&binding).expect("json");
            let names_user = value["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["kind"] == "User" && s["name"] == user);
            if names_user {
                out.insert(format!(
                    "{kind} {}/{}",
                    binding.namespace().unwrap_or_default(),
                    binding.name_any()
                ));
            }
        }
    }
    out
}

/// A Deployment in `ns` with the given labels and ownerReferences.
fn deployment(ns: &str, name: &str, labels: Value, owners: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": name, "namespace": ns, "labels": labels, "ownerReferences": owners },
        "spec": {
            "selector": { "matchLabels": { "app": name } },
            "template": { "metadata": { "labels": { "app": name } },
                          "spec": { "containers": [{ "name": "c", "image": "example.org/c:1" }] } }
        }
    })
}

fn gateway_owner() -> Value {
    json!([{ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw",
             "uid": "00000000-0000-0000-0000-000000000001", "controller": true }])
}

/// Creates `object` as `client` with a POST (`dry_run`: `dryRun=All`); the API error.
async fn create_as(client: &Client, object: &Value, dry_run: bool) -> Result<(), kube::Error> {
    let api = api_for(client, object).await;
    let object: DynamicObject = serde_json::from_value(object.clone()).expect("object");
    let params = PostParams {
        dry_run,
        ..Default::default()
    };
    api.create(&params, &object).await.map(|_| ())
}

/// The refusal of a write: its code and message.
fn refusal(result: Result<(), kube::Error>, what: &str) -> (u16, String) {
    match result {
        Ok(()) => panic!("{what}: allowed"),
        Err(kube::Error::Api(s)) => (s.code, s.message),
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Waits until the policy denies the controller a foreign Deployment in `ns` (a policy
/// starts applying some time after its binding is created).
async fn until_policy_denies(controller: &Client, ns: &str, policy: &str) {
    let probe = deployment(ns, "probe", json!({}), json!([]));
    let start = Instant::now();
    loop {
        match create_as(controller, &probe, true).await {
            Err(kube::Error::Api(s)) if s.message.contains(policy) => return,
            other => {
                if start.elapsed() > Duration::from_secs(30) {
                    panic!("the policy {policy} does not deny after 30 s: {other:?}");
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The controller's requests in the audit log, in order: (verb, resource, subresource,
/// namespace, code).
fn controller_requests() -> Vec<(String, String, String, String, i64)> {
    let log = std::fs::read_to_string(env("AUDIT_LOG")).expect("audit log");
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["user"]["username"] == CONTROLLER_USER)
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

/// The controller binary running as a process; killed when dropped.
struct Running {
    child: Child,
    log: PathBuf,
}

impl Running {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The flags of the binary's `--help`.
fn binary_flags(binary: &str) -> String {
    let output = Command::new(binary).arg("--help").output().expect("--help");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Starts the controller binary as the controller's user with the rendered Deployment's
/// args, the rendered ConfigMap's files in place of the mount, and the Pod's environment.
fn start_controller(objects: &[Value], release_ns: &str, scratch: &Scratch) -> Running {
    let binary = env!("CARGO_BIN_EXE_gateway-reconcile-controller");
    let pod = &find(objects, "Deployment")["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let mount = container["volumeMounts"][0]["mountPath"]
        .as_str()
        .expect("mount");
    let config = find(objects, "ConfigMap");
    for (key, text) in config["data"].as_object().expect("ConfigMap data") {
        std::fs::write(scratch.path(key), text.as_str().expect("text")).expect("write");
    }
    let help = binary_flags(binary);
    let mut args = Vec::new();
    for arg in container["args"].as_array().expect("args") {
        let arg = arg.as_str().expect("arg");
        let flag = arg.split('=').next().unwrap_or_default();
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}=")),
            "the chart passes {arg}, which the binary does not have"
        );
        let arg = match flag {
            // Only loopback in tests, on a port the system picks.
            "--health-addr" | "--metrics-addr" => format!("{flag}=127.0.0.1:0"),
            _ => arg.replace(mount, &scratch.0.display().to_string()),
        };
        args.push(arg);
    }
    eprintln!("controller args: {args:?}");
    let log = scratch.path("controller.log");
    let out = std::fs::File::create(&log).expect("log file");
    let err = out.try_clone().expect("log file");
    let child = Command::new(binary)
        .arg(format!("--kubeconfig={}", env("E2E_CONTROLLER_KUBECONFIG")))
        .args(&args)
        .env("POD_NAME", "chart-e2e")
        .env("POD_NAMESPACE", release_ns)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("start the controller");
    Running { child, log }
}

fn conditions(gateway: &Value) -> Vec<(String, String, String)> {
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

fn healthy(gateway: &Value) -> bool {
    let c = conditions(gateway);
    let has = |t: &str, r: &str| {
        c.iter()
            .any(|(ty, s, re)| ty == t && s == "True" && re == r)
    };
    has("Accepted", "Accepted")
        && has("Programmed", "Programmed")
        && has(&format!("{DOMAIN}/ConfigurationApplied"), "Applied")
}

async fn get(client: &Client, api_version: &str, kind_: &str, ns: &str, name_: &str) -> Value {
    let probe = json!({ "apiVersion": api_version, "kind": kind_,
                        "metadata": { "name": name_, "namespace": ns } });
    let object = api_for(client, &probe)
        .await
        .get_opt(name_)
        .await
        .expect("get");
    object.map_or(Value::Null, |o| serde_json::to_value(o).expect("json"))
}

/// Polls until `done` holds for the object, or panics with the controller's log.
async fn wait_for(
    admin: &Client,
    (api_version, kind_, ns, name_): (&str, &str, &str, &str),
    what: &str,
    running: &Running,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let object = get(admin, api_version, kind_, ns, name_).await;
        if done(&object) {
            return object;
        }
        if start.elapsed() > WAIT {
            panic!(
                "{kind_} {ns}/{name_}: {what} not reached in {WAIT:?}\nobject: {object:#}\ncontroller log:\n{}",
                running.log()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One install of the chart, cluster-wide (`watch` false) or for one namespace.
async fn chart_rbac_alone(admin: &Client, release: &str, one_namespace: bool) {
    let controller = controller_client().await;
    let release_ns = namespace(admin, "chart-rel-").await;
    let gw_ns = namespace(admin, "chart-gw-").await;
    let mut values =
        json!({ "rbac": { "extraSubjects": [{ "kind": "User", "name": CONTROLLER_USER }] } });
    if one_namespace {
        values["watchNamespace"] = json!(gw_ns);
    }
    let objects = render(release, &release_ns, &values);
    for object in &objects {
        apply(admin, object, false).await.expect("install");
    }
    // The chart's bindings are the only ones that name the controller's user.
    let ours: BTreeSet<String> = objects
        .iter()
        .filter(|o| kind(o).ends_with("RoleBinding"))
        .map(|o| {
            format!(
                "{} {}/{}",
                kind(o),
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                name(o)
            )
        })
        .collect();
    assert_eq!(bindings_naming(admin, CONTROLLER_USER).await, ours);
    eprintln!("{release}: the controller's user has only {ours:?}");

    let policy = name(find(&objects, "ValidatingAdmissionPolicy")).to_owned();
    until_policy_denies(&controller, &gw_ns, &policy).await;

    // (a) Writes the policy denies the controller's user, and why.
    let managed = json!({ MANAGED_BY_LABEL: MANAGED_BY });
    let replica_set_owner = json!([{ "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
        "uid": "00000000-0000-0000-0000-000000000002", "controller": true }]);
    let denied = [
        (
            deployment(&gw_ns, "foreign", json!({}), json!([])),
            "labelled",
        ),
        (
            deployment(&gw_ns, "no-owner", managed.clone(), json!([])),
            "ownerReference is a",
        ),
        (
            deployment(&gw_ns, "not-a-gateway", managed.clone(), replica_set_owner),
            "ownerReference is a",
        ),
        (
            deployment(
                &gw_ns,
                "not-labelled",
                json!({ "app": "x" }),
                gateway_owner(),
            ),
            "labelled",
        ),
    ];
    for (object, why) in &denied {
        let (code, message) = refusal(create_as(&controller, object, false).await, name(object));
        assert_eq!(code, 403, "{message}");
        assert!(
            message.contains(&policy) && message.contains(why),
            "{message}"
        );
    }
    // Another user writes a foreign Deployment as before, here even owned by a Gateway;
    // the controller may neither update it nor take it over by adding its label. (Adding
    // an ownerReference in an update is refused earlier, by the
    // OwnerReferencesPermissionEnforcement plugin: the controller may not delete.)
    let web = deployment(&gw_ns, "web", json!({ "app": "web" }), gateway_owner());
    create_as(admin, &web, false)
        .await
        .expect("the admin is not affected");
    // Read as the admin: the controller may list and watch, not get.
    let stored = api_for(admin, &web)
        .await
        .get("web")
        .await
        .expect("get web");
    let mut stored = serde_json::to_value(stored).expect("json");
    let mut takeover = stored.clone();
    takeover["metadata"]["labels"][MANAGED_BY_LABEL] = json!(MANAGED_BY);
    stored["spec"]["replicas"] = json!(3);
    let deployments = api_for(&controller, &web).await;
    for (update, why) in [(&stored, "labelled"), (&takeover, "take over")] {
        let update: DynamicObject = serde_json::from_value(update.clone()).expect("object");
        let (code, message) = refusal(
            deployments
                .replace("web", &PostParams::default(), &update)
                .await
                .map(|_| ()),
            "update web",
        );
        assert_eq!(code, 403, "{message}");
        assert!(
            message.contains(&policy) && message.contains(why),
            "{message}"
        );
    }
    // Outside the watched namespace: cluster-wide, RBAC allows and the policy denies (the
    // issue's kube-system case); in the one-namespace mode RBAC already denies.
    let elsewhere = deployment("kube-system", "foreign", json!({}), json!([]));
    let (code, message) = refusal(
        create_as(&controller, &elsewhere, true).await,
        "kube-system",
    );
    assert_eq!(code, 403, "{message}");
    if one_namespace {
        assert!(message.contains("cannot create resource"), "{message}");
    } else {
        assert!(message.contains(&policy), "{message}");
    }
    // What the controller writes passes.
    let lb = deployment(&gw_ns, "lb", managed.clone(), gateway_owner());
    create_as(&controller, &lb, true)
        .await
        .expect("a managed Deployment passes the policy");

    // (b) The controller binary, with the chart's RBAC only, does its job.
    let before = controller_requests().len();
    let scratch = Scratch::new(release);
    let running = start_controller(&objects, &release_ns, &scratch);
    let class = format!("class-{gw_ns}");
    for object in [
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": { "name": class }, "spec": { "controllerName": CONTROLLER_NAME } }),
        json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
                "metadata": { "name": "conf", "namespace": gw_ns },
                "spec": {
                    "networkAttachments": [{ "type": "NAD", "nad": { "name": "vlan", "namespace": gw_ns, "interface": "eth1" } }],
                    "internalSubnets": [{ "attachmentType": "NAD", "cidr": "169.254.100.0/24" }],
                    "horizontalScaling": { "replicas": 2, "enforceReplicas": true } } }),
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": { "name": "gw", "namespace": gw_ns },
                "spec": { "gatewayClassName": class,
                          "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }],
                          "infrastructure": { "parametersRef": {
                              "group": DOMAIN, "kind": "GatewayConfiguration", "name": "conf" } } } }),
    ] {
        create_as(admin, &object, false).await.expect("create");
    }
    let gateway = (
        "gateway.networking.k8s.io/v1",
        "Gateway",
        gw_ns.as_str(),
        "gw",
    );
    let lb = ("apps/v1", "Deployment", gw_ns.as_str(), "sllbr-gw");
    wait_for(admin, gateway, "healthy", &running, healthy).await;
    let created = wait_for(admin, lb, "created", &running, |d| !d.is_null()).await;
    assert_eq!(created["metadata"]["labels"][MANAGED_BY_LABEL], MANAGED_BY);
    assert_eq!(created["metadata"]["ownerReferences"][0]["kind"], "Gateway");
    // An edit: the controller replaces its Deployment (the policy's update path).
    let conf = json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
                       "metadata": { "name": "conf", "namespace": gw_ns } });
    api_for(admin, &conf)
        .await
        .patch(
            "conf",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "horizontalScaling": { "replicas": 3 } } })),
        )
        .await
        .expect("edit");
    wait_for(admin, lb, "3 replicas", &running, |d| {
        d["spec"]["replicas"] == 3
    })
    .await;
    wait_for(admin, gateway, "healthy at generation 2", &running, |g| {
        healthy(g)
            && g["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("generation 2"))
                })
    })
    .await;
    drop(running);

    // No request of the controller was refused; it created, replaced, patched the status
    // and recorded Events.
    let requests = controller_requests().split_off(before);
    let refused: Vec<_> = requests
        .iter()
        .filter(|r| r.4 == 401 || r.4 == 403)
        .collect();
    assert!(refused.is_empty(), "refused: {refused:#?}");
    let done = |verb: &str, resource: &str, subresource: &str, code: i64| {
        requests
            .iter()
            .any(|r| r.0 == verb && r.1 == resource && r.2 == subresource && r.4 == code)
    };
    assert!(done("create", "deployments", "", 201), "{requests:#?}");
    assert!(done("update", "deployments", "", 200), "{requests:#?}");
    assert!(done("patch", "gateways", "status", 200), "{requests:#?}");
    assert!(done("create", "events", "", 201), "{requests:#?}");
    eprintln!(
        "{release}: the controller made {} logged requests, none refused",
        requests.len()
    );

    // Uninstall all but the CRDs, so the next install's bindings are again the only ones.
    delete(
        admin,
        &json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                 "metadata": { "name": class } }),
    )
    .await;
    for object in objects.iter().rev() {
        if kind(object) != "CustomResourceDefinition" {
            delete(admin, object).await;
        }
    }
}

#[tokio::test]
#[ignore = "needs a control plane and helm: e2e/run.sh"]
async fn the_chart_rbac_alone_runs_the_controller_and_its_policy_denies_foreign_writes() {
    let admin = admin().await;
    chart_rbac_alone(&admin, "cluster", false).await;
    chart_rbac_alone(&admin, "namespaced", true).await;
}
