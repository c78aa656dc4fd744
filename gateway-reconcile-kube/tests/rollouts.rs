//! Rollout stories on the full control plane (`E2E_FULL=1`: kube-controller-manager,
//! kube-scheduler and kwok's fake Nodes besides etcd and kube-apiserver; `e2e/run.sh` runs
//! them there with `--ignored`, and each skips with a message anywhere else). Here the LB
//! Deployment's status, ReplicaSets and Pods come from the real Deployment and ReplicaSet
//! controllers, the scheduler and kwok, not from the test; garbage collection and namespace
//! deletion are the real controllers' too.
//!
//! Each story has its own namespace and GatewayClass (see `common::World`) and runs the
//! controller binary in a process of its own (leader election off) as the user
//! `gateway-reconcile-controller`, watching that namespace. Every assertion reads the API
//! server's objects, the watch history of them that the story records (events ordered by
//! resourceVersion: one etcd orders them all), or the audit log.
//!
//! The stories and what each showed are listed in `docs/reliability.md` ("Rollouts on the full
//! control plane").

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::ResourceExt;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, WatchEvent, WatchParams,
};
use serde_json::{Value, json};

mod common;
use common::*;

/// The LB Deployment of Gateway `gw` (the default `deploymentPrefix`).
const LB: &str = "sllbr-gw";
/// The label that makes kwok keep a Pod unready (`e2e/kwok/stages/pod-unready.yaml`).
const UNREADY: &str = "e2e.gateway-reconcile/unready";
/// What `Programmed` appends while the rollout is not complete (SPEC section 6).
const INITIALIZING: &str = "; Pods may still be initializing";
/// How long a rollout on the fake Nodes may take before a story fails (measured: under a
/// second for two or three Pods; the shared machine can be much slower).
const ROLLOUT: Duration = Duration::from_secs(90);
/// How long garbage collection and namespace deletion may take (measured: 0.3 s and 10 s).
const GONE: Duration = Duration::from_secs(120);

/// Whether the full control plane runs; a message when it does not.
fn full_control_plane() -> bool {
    if std::env::var("E2E_FULL").as_deref() == Ok("1") {
        return true;
    }
    eprintln!(
        "skipped: this story needs the full control plane (kube-controller-manager, \
         kube-scheduler, kwok): run it under `E2E_FULL=1 e2e/controlplane.sh run`, as \
         e2e/run.sh does"
    );
    false
}

/// `Programmed`'s message when the Deployment carries generation `n` and its rollout is
/// complete.
fn programmed(n: i64) -> String {
    format!("LB Deployment reconciled with GatewayConfiguration generation {n}")
}

/// The message of condition `type_`, or "".
fn message<'a>(c: &'a BTreeMap<String, Value>, type_: &str) -> &'a str {
    c.get(type_)
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
}

/// An integer field, 0 when absent (the API server omits zero counts).
fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The Deployment's condition `type_` as `STATUS/REASON`, `-` when absent.
fn condition(d: &Value, type_: &str) -> String {
    d["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .map(|c| {
            format!(
                "{}/{}",
                c["status"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| "-".to_owned())
}

/// kubectl's rollout rule (`kubectl rollout status`), written here from its definition:
/// the status answers the current spec, every wanted replica is updated, no old one is
/// left, and every updated one is available.
fn rollout_complete(d: &Value) -> bool {
    let s = &d["status"];
    s["observedGeneration"].as_i64().is_some()
        && int(&s["observedGeneration"]) >= int(&d["metadata"]["generation"])
        && int(&s["updatedReplicas"]) >= d["spec"]["replicas"].as_i64().unwrap_or(1)
        && int(&s["replicas"]) <= int(&s["updatedReplicas"])
        && int(&s["availableReplicas"]) >= int(&s["updatedReplicas"])
}

/// The GatewayConfiguration generation a Deployment carries (its annotation).
fn carried(d: &Value) -> Option<i64> {
    d["metadata"]["annotations"][format!("{DOMAIN}/gatewayconfiguration-generation")]
        .as_str()
        .and_then(|g| g.parse().ok())
}

/// One line for a Deployment, as `docs/real-server-differences.md` prints the real controller's writes.
fn summary(d: &Value) -> String {
    let s = &d["status"];
    format!(
        "gen={} obs={} spec.replicas={} replicas={} updated={} ready={} available={} \
         Progressing={} Available={}",
        int(&d["metadata"]["generation"]),
        int(&s["observedGeneration"]),
        int(&d["spec"]["replicas"]),
        int(&s["replicas"]),
        int(&s["updatedReplicas"]),
        int(&s["readyReplicas"]),
        int(&s["availableReplicas"]),
        condition(d, "Progressing"),
        condition(d, "Available"),
    )
}

/// Whether a Pod's `Ready` condition is True.
fn pod_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Polls `probe` until it gives a value, for at most `limit`; the failure names `what` and
/// the probe's last answer.
async fn until<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let start = Instant::now();
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) => assert!(
                start.elapsed() < limit,
                "{what}: not reached in {limit:?}; last seen: {last}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One watch event a [`Recorder`] saw.
#[derive(Debug, Clone)]
struct Seen {
    /// The object's resourceVersion in the event (for a deletion: the deletion's).
    rv: u64,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    event: &'static str,
    object: Value,
}

/// A watch of one kind in a story's namespace, from the moment it starts: every event, in
/// order, kept for assertions about what happened before what.
struct Recorder {
    kind: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set when the watch lost events (a 410 Gone): the history has a hole.
    gap: Arc<Mutex<bool>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    async fn start(api: Api<DynamicObject>, kind: &str) -> Recorder {
        let list = api
            .list_metadata(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("list {kind}: {e}"));
        let mut version = list
            .metadata
            .resource_version
            .expect("a list's resourceVersion");
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let gap: Arc<Mutex<bool>> = Arc::default();
        let (into, gap_into, name) = (seen.clone(), gap.clone(), kind.to_owned());
        let task = tokio::spawn(async move {
            loop {
                let events = match api
                    .watch(&WatchParams::default().timeout(60), &version)
                    .await
                {
                    Ok(events) => events,
                    Err(e) => {
                        eprintln!("watch {name}: {e}; again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                };
                let mut events = std::pin::pin!(events);
                while let Some(event) = events.next().await {
                    let (event, object) = match event {
                        Ok(WatchEvent::Added(o)) => ("ADDED", o),
                        Ok(WatchEvent::Modified(o)) => ("MODIFIED", o),
                        Ok(WatchEvent::Deleted(o)) => ("DELETED", o),
                        Ok(WatchEvent::Bookmark(b)) => {
                            version = b.metadata.resource_version;
                            continue;
                        }
                        Ok(WatchEvent::Error(status)) => {
                            eprintln!("watch {name}: {status:?}");
                            if status.code == 410 {
                                *gap_into.lock().expect("lock") = true;
                                if let Ok(list) = api.list_metadata(&ListParams::default()).await
                                    && let Some(v) = list.metadata.resource_version
                                {
                                    version = v;
                                }
                            }
                            break;
                        }
                        Err(e) => {
                            eprintln!("watch {name}: {e}; again");
                            break;
                        }
                    };
                    let rv = object.resource_version().unwrap_or_default();
                    version = rv.clone();
                    into.lock().expect("lock").push(Seen {
                        rv: rv
                            .parse()
                            .unwrap_or_else(|_| panic!("resourceVersion {rv}")),
                        event,
                        object: serde_json::to_value(object).expect("json"),
                    });
                }
            }
        });
        Recorder {
            kind: kind.to_owned(),
            seen,
            gap,
            task,
        }
    }

    /// Every event so far; the story fails if the watch lost any.
    fn seen(&self) -> Vec<Seen> {
        assert!(
            !*self.gap.lock().expect("lock"),
            "the watch of {} lost events (410 Gone): its history has a hole",
            self.kind
        );
        self.seen.lock().expect("lock").clone()
    }

    /// The events of the object `name`.
    fn of(&self, name: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.object["metadata"]["name"] == name)
            .collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A story: its world (namespace, GatewayClass, RBAC) and the controller binary.
struct Story {
    world: World,
    controller: Option<Process>,
    /// Every controller process's log file, for a failing story's output.
    logs: Vec<PathBuf>,
}

impl std::ops::Deref for Story {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl Drop for Story {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for log in &self.logs {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(40)..].join("\n");
                eprintln!(
                    "--- the controller's log {} (last 40 lines):\n{tail}",
                    log.display()
                );
            }
        }
    }
}

impl Story {
    /// A new world named from `prefix`, with the LB Pods' ServiceAccount and no
    /// controller yet.
    async fn new(prefix: &str) -> Story {
        let world = World::new(prefix).await;
        // The Pods run as the `serviceAccount` setting's account (`stateless-load-balancer`
        // by default), which ServiceAccount admission wants to exist: without it the
        // ReplicaSet controller's Pod creates are refused (`error looking up service
        // account`) and the rollout never starts.
        create(
            &world.admin,
            json!({ "apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": { "name": "stateless-load-balancer", "namespace": world.ns } }),
        )
        .await;
        Story {
            world,
            controller: None,
            logs: Vec::new(),
        }
    }

    /// Starts the controller binary as `name`: the built-in LB template (`None`) or the
    /// given one, written to a file in `E2E_DIR` and passed with `--template`.
    fn start(&mut self, name: &str, template: Option<&Value>) {
        let dir = PathBuf::from(env("E2E_DIR"));
        let file = dir.join(format!("{}-{name}-template.json", self.ns));
        let mut flags = vec!["--leader-elect=false".to_owned()];
        if let Some(template) = template {
            std::fs::write(&file, serde_json::to_string_pretty(template).expect("json"))
                .expect("template file");
            flags.extend(["--template".to_owned(), file.display().to_string()]);
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let process = Process::start(&self.world, name, &env("E2E_CONTROLLER_KUBECONFIG"), &flags);
        self.logs
            .push(dir.join(format!("{}-{name}.log", self.world.ns)));
        self.controller = Some(process);
    }

    /// SIGTERM; the controller exits successfully.
    async fn stop(&mut self) {
        if let Some(mut process) = self.controller.take() {
            let status = process.stop().await;
            assert!(status.success(), "{status}: {}", process.log());
        }
    }

    /// The controller process.
    fn controller(&self) -> &Process {
        self.controller.as_ref().expect("a running controller")
    }

    /// The API of `kind` (Deployment, ReplicaSet, Pod, Gateway, ...) in the story's
    /// namespace.
    fn kind(&self, kind: &str) -> Api<DynamicObject> {
        match kind {
            "ReplicaSet" => Api::namespaced_with(
                self.admin.clone(),
                &self.ns,
                &resource("apps/v1", "ReplicaSet"),
            ),
            "Pod" => Api::namespaced_with(self.admin.clone(), &self.ns, &resource("v1", "Pod")),
            other => self.api(other),
        }
    }

    /// Starts recording `kind`'s events in the story's namespace.
    async fn record(&self, kind: &str) -> Recorder {
        Recorder::start(self.kind(kind), kind).await
    }

    /// The objects of `kind` labelled `app=sllbr-gw` (the LB's ReplicaSets and Pods), by
    /// name.
    async fn lb(&self, kind: &str) -> Vec<Value> {
        let mut objects: Vec<Value> = self
            .kind(kind)
            .list(&ListParams::default().labels(&format!("app={LB}")))
            .await
            .unwrap_or_else(|e| panic!("list {kind}: {e}"))
            .items
            .into_iter()
            .map(|o| serde_json::to_value(o).expect("json"))
            .collect();
        objects.sort_by_key(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        });
        objects
    }

    /// The LB Deployment; it must exist.
    async fn deployment(&self) -> Value {
        self.get("Deployment", LB).await
    }

    /// Waits until the LB Deployment carries GatewayConfiguration generation `generation`,
    /// runs `n` Pods, every one Ready, none being deleted, all of its newest ReplicaSet and
    /// on `n` different Nodes (the template's required anti-affinity, which the real
    /// scheduler honours), and its status says its rollout is complete; the Pods.
    async fn settled(&self, n: usize, generation: i64) -> Vec<Value> {
        until(
            &format!(
                "configuration generation {generation} carried, {n} Ready Pods of the newest \
                 ReplicaSet, rollout complete"
            ),
            ROLLOUT,
            || async move {
                let Some(d) = self.get_opt("Deployment", LB).await else {
                    return Err("no LB Deployment yet".to_owned());
                };
                let pods = self.lb("Pod").await;
                let newest = self.lb("ReplicaSet").await.into_iter().max_by_key(|rs| {
                    rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                        .as_str()
                        .and_then(|r| r.parse::<i64>().ok())
                });
                let hash = newest
                    .as_ref()
                    .and_then(|rs| rs["metadata"]["labels"]["pod-template-hash"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                let mut nodes: Vec<&str> = pods
                    .iter()
                    .filter_map(|p| p["spec"]["nodeName"].as_str())
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                let state = format!(
                    "Deployment {} carrying generation {:?}; Pods {:?}",
                    summary(&d),
                    carried(&d),
                    pods.iter()
                        .map(|p| format!(
                            "{} node={} ready={} deleting={} hash={}",
                            p["metadata"]["name"].as_str().unwrap_or_default(),
                            p["spec"]["nodeName"].as_str().unwrap_or("-"),
                            pod_ready(p),
                            p["metadata"]["deletionTimestamp"].is_string(),
                            p["metadata"]["labels"]["pod-template-hash"]
                                .as_str()
                                .unwrap_or_default()
                        ))
                        .collect::<Vec<_>>()
                );
                let done = carried(&d) == Some(generation)
                    && pods.len() == n
                    && nodes.len() == n
                    && pods.iter().all(|p| {
                        pod_ready(p)
                            && !p["metadata"]["deletionTimestamp"].is_string()
                            && p["metadata"]["labels"]["pod-template-hash"] == hash.as_str()
                    })
                    && rollout_complete(&d);
                if done { Ok(pods) } else { Err(state) }
            },
        )
        .await
    }

    /// Waits until the Gateway is healthy and `Programmed` reads exactly `message`.
    async fn programmed(&self, message: &str) -> BTreeMap<String, Value> {
        self.wait_conditions_within(
            "gw",
            &format!("healthy, Programmed \"{message}\""),
            |c| {
                healthy(c)
                    && !c.contains_key(&degraded())
                    && self::message(c, "Programmed") == message
            },
            ROLLOUT,
        )
        .await
    }

    /// The usual start: the controller (built-in template), GatewayConfiguration `conf` (2
    /// replicas, not enforced), Gateway `gw`, its rollout done (2 Ready Pods) and
    /// `Programmed` without the initializing note.
    async fn rolled_out(prefix: &str) -> Story {
        let mut story = Story::new(prefix).await;
        story.start("controller", None);
        story.configuration("conf", 2).await;
        story.gateway("gw", "conf").await;
        story.settled(2, 1).await;
        story.programmed(&programmed(1)).await;
        story
    }

    /// The controller's requests in the story's namespace from audit entry `since` on.
    fn requests_since(&self, since: usize) -> Vec<Audited> {
        let mut requests = controller_requests(&self.ns);
        requests.split_off(since.min(requests.len()))
    }
}

/// The controller's writes of `resource` (`deployments`, `gateways`, ...) and
/// `subresource` among `requests`.
fn writes<'a>(requests: &'a [Audited], resource: &str, subresource: &str) -> Vec<&'a Audited> {
    requests
        .iter()
        .filter(|a| is_write(a) && a.resource == resource && a.subresource == subresource)
        .collect()
}

/// The controller's Deployment writes among `requests` that went through; every other
/// one must have been a 409 Conflict (its cache had not seen the Deployment controller's
/// latest status write yet: retried at once, SPEC section 6), which is reported.
fn deployment_writes(requests: &[Audited]) -> Vec<&Audited> {
    let all = writes(requests, "deployments", "");
    let (through, refused): (Vec<&Audited>, Vec<&Audited>) =
        all.into_iter().partition(|a| a.code < 300);
    assert!(
        refused.iter().all(|a| a.code == 409),
        "a Deployment write refused other than with 409: {refused:#?}"
    );
    if !refused.is_empty() {
        eprintln!(
            "{} Deployment write(s) refused with 409 Conflict and retried",
            refused.len()
        );
    }
    through
}

/// Checks that `Programmed` claimed a finished rollout only after one: the first Gateway
/// state whose `Programmed` reads exactly `programmed(n)` came after a Deployment state
/// (by resourceVersion) that carries generation `n` and is complete by kubectl's rule, and
/// an earlier Gateway state read the same with the initializing note. The Deployment
/// state at that point (the last one written before the Gateway's).
fn claimed_after_the_rollout(gateways: &[Seen], deployments: &[Seen], n: i64) -> Seen {
    let done = programmed(n);
    let initializing = format!("{done}{INITIALIZING}");
    let history = |s: &Seen| {
        let c = conditions(&s.object);
        format!(
            "{} rv={} Programmed={:?}",
            s.event,
            s.rv,
            message(&c, "Programmed")
        )
    };
    let all: Vec<String> = gateways.iter().map(history).collect();
    let claim = gateways
        .iter()
        .find(|s| message(&conditions(&s.object), "Programmed") == done)
        .unwrap_or_else(|| panic!("no Gateway state with Programmed {done:?}: {all:#?}"));
    assert!(
        gateways
            .iter()
            .any(|s| s.rv < claim.rv
                && message(&conditions(&s.object), "Programmed") == initializing),
        "no Gateway state with {initializing:?} before {done:?}: {all:#?}"
    );
    let at = deployments
        .iter()
        .rfind(|s| s.rv < claim.rv)
        .unwrap_or_else(|| panic!("no Deployment state before the Gateway's rv {}", claim.rv))
        .clone();
    let states: Vec<String> = deployments
        .iter()
        .map(|s| format!("rv={} {}", s.rv, summary(&s.object)))
        .collect();
    assert!(
        rollout_complete(&at.object) && carried(&at.object) == Some(n),
        "Programmed said {done:?} at rv {} while the Deployment (rv {}) read {} \
         (carrying generation {:?}); the Deployment's states: {states:#?}",
        claim.rv,
        at.rv,
        summary(&at.object),
        carried(&at.object)
    );
    at
}

/// Story 1: a new Gateway's LB comes up through the real Deployment controller, scheduler
/// and kwok; `Programmed` carries the initializing note until the rollout is complete.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_new_gateway_is_initializing_until_the_real_rollout_completes() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::new("roll-new-").await;
    let gateways = story.record("Gateway").await;
    let deployments = story.record("Deployment").await;
    story.start("controller", None);
    let start = Instant::now();
    story.configuration("conf", 2).await;
    story.gateway("gw", "conf").await;
    let pods = story.settled(2, 1).await;
    let c = story.programmed(&programmed(1)).await;
    eprintln!("rolled out and Programmed in {:?}", start.elapsed());
    assert_eq!(
        message(&c, &applied()),
        format!(
            "GatewayConfiguration {ns}/conf generation 1 is applied to Deployment {ns}/{LB}",
            ns = story.ns
        )
    );
    // The Deployment state the claim followed: what the real controller wrote at the end
    // of the rollout.
    let at = claimed_after_the_rollout(&gateways.seen(), &deployments.seen(), 1);
    let d = &at.object;
    eprintln!(
        "the Deployment when Programmed lost its note: {}",
        summary(d)
    );
    assert_eq!(d["metadata"]["generation"], 1, "{}", summary(d));
    assert_eq!(d["status"]["observedGeneration"], 1, "{}", summary(d));
    for count in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(d["status"][count], 2, "{count}: {}", summary(d));
    }
    assert_eq!(condition(d, "Available"), "True/MinimumReplicasAvailable");
    assert_eq!(condition(d, "Progressing"), "True/NewReplicaSetAvailable");
    // The real controller wrote states before that one that were not complete, and the
    // Gateway said so meanwhile (checked above): the note is about a real rollout.
    let incomplete = deployments
        .of(LB)
        .iter()
        .filter(|s| s.rv < at.rv && !rollout_complete(&s.object))
        .count();
    assert!(incomplete >= 1, "the Deployment was never seen rolling out");
    // One ReplicaSet, controlled by the Deployment; the Pods controlled by it, Running,
    // Ready, one per Node.
    let deployment = story.deployment().await;
    let sets = story.lb("ReplicaSet").await;
    assert_eq!(sets.len(), 1, "{sets:#?}");
    let rs = &sets[0];
    let owner = &rs["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "Deployment");
    assert_eq!(owner["uid"], deployment["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    assert_eq!(rs["status"]["readyReplicas"], 2, "{rs:#}");
    let nodes = env("E2E_NODES");
    for pod in &pods {
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "ReplicaSet");
        assert_eq!(owner["uid"], rs["metadata"]["uid"]);
        assert_eq!(pod["status"]["phase"], "Running");
        let node = pod["spec"]["nodeName"].as_str().expect("scheduled");
        assert!(nodes.split(' ').any(|n| n == node), "{node} not in {nodes}");
    }
    // The controller wrote the Deployment once (its create); the rollout's status changes
    // only moved the Gateway's status.
    let requests = story.requests_since(0);
    let through = deployment_writes(&requests);
    assert_eq!(through.len(), 1, "{through:#?}");
    assert_eq!(through[0].verb, "create");
    story.stop().await;
}

/// Story 2: a GatewayConfiguration edit that changes the pod template rolls out a new
/// ReplicaSet; `ConfigurationApplied` is True for the new generation as soon as the
/// Deployment carries it, `Programmed` names it and keeps the note until the new
/// ReplicaSet's Pods are all available and the old ones gone.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_configuration_edit_rolls_out_a_new_replicaset() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-edit-").await;
    let first = story.lb("ReplicaSet").await;
    assert_eq!(first.len(), 1, "{first:#?}");
    let gateways = story.record("Gateway").await;
    let deployments = story.record("Deployment").await;
    let before = controller_requests(&story.ns).len();
    let start = Instant::now();
    // verticalScaling, enforced: the loadbalancer container's requests change, so does
    // the pod template.
    story
        .patch(
            "GatewayConfiguration",
            "conf",
            json!({ "spec": { "verticalScaling": { "containers": [{
                "name": "loadbalancer", "enforceResources": true,
                "resources": { "requests": { "cpu": "200m", "memory": "96Mi" },
                               "limits": { "cpu": "1", "memory": "256Mi" } } }] } } }),
        )
        .await;
    let pods = story.settled(2, 2).await;
    story.programmed(&programmed(2)).await;
    eprintln!("edit rolled out and Programmed in {:?}", start.elapsed());
    let gateway_states = gateways.seen();
    let at = claimed_after_the_rollout(&gateway_states, &deployments.seen(), 2);
    eprintln!(
        "the Deployment when Programmed lost its note: {}",
        summary(&at.object)
    );
    assert_eq!(
        condition(&at.object, "Progressing"),
        "True/NewReplicaSetAvailable"
    );
    // While the new Pods came up, the configuration was already applied: the Deployment
    // carried generation 2.
    let applied_message = format!(
        "GatewayConfiguration {ns}/conf generation 2 is applied to Deployment {ns}/{LB}",
        ns = story.ns
    );
    assert!(
        gateway_states.iter().any(|s| {
            let c = conditions(&s.object);
            message(&c, "Programmed") == format!("{}{INITIALIZING}", programmed(2))
                && is(&c, &applied(), "True", "Applied")
                && message(&c, &applied()) == applied_message
        }),
        "no Gateway state with generation 2 applied and its Pods initializing: {:#?}",
        gateway_states
            .iter()
            .map(|s| conditions(&s.object))
            .collect::<Vec<_>>()
    );
    // A new ReplicaSet (revision 2) with the new requests runs the Pods; the first one is
    // scaled to 0.
    let sets = story.lb("ReplicaSet").await;
    assert_eq!(sets.len(), 2, "{sets:#?}");
    let old = sets
        .iter()
        .find(|rs| rs["metadata"]["uid"] == first[0]["metadata"]["uid"])
        .expect("the first ReplicaSet is kept (revisionHistoryLimit)");
    let new = sets
        .iter()
        .find(|rs| rs["metadata"]["uid"] != first[0]["metadata"]["uid"])
        .expect("a new ReplicaSet");
    assert_eq!(old["spec"]["replicas"], 0, "{old:#}");
    assert_eq!(
        new["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_eq!(
        new["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"],
        json!({ "cpu": "200m", "memory": "96Mi" })
    );
    for pod in &pods {
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["uid"],
            new["metadata"]["uid"]
        );
    }
    // One Deployment write: the update.
    let requests = story.requests_since(before);
    let through = deployment_writes(&requests);
    assert_eq!(through.len(), 1, "{through:#?}");
    assert_eq!(through[0].verb, "update");
    story.stop().await;
}

/// The built-in LB template with `progressDeadlineSeconds` 10 and the unready label on the
/// pod template set to `unready` (kwok keeps a Pod unready only for `"true"`).
fn stalling_template(unready: &str) -> Value {
    let mut template = gateway_reconcile::template::default_template().to_json();
    template["spec"]["progressDeadlineSeconds"] = json!(10);
    template["spec"]["template"]["metadata"]["labels"][UNREADY] = json!(unready);
    template
}

/// Story 3: a rollout that cannot finish (Pods never Ready, `progressDeadlineSeconds` 10):
/// once the real Deployment controller reports `ProgressDeadlineExceeded`, the Gateway is
/// `Degraded`=True/`RolloutStalled` (and still Programmed); a fixed template rolls out
/// Pods that become Ready, and Degraded goes.
///
/// The fix: the unready label comes from the controller's template, so the controller is
/// restarted with a template whose label reads `"false"`. Patching the Deployment's pod
/// template as another writer would not do: the template's labels win over the observed
/// ones, and the controller would put `"true"` back (SPEC section 4). A template that merely
/// drops the label would not either: a field a new template stops setting stays on
/// existing Deployments (same section), so nothing would change.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_stalled_rollout_is_degraded_until_a_fixed_template_rolls_out() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::new("roll-stall-").await;
    let gateways = story.record("Gateway").await;
    let deployments = story.record("Deployment").await;
    story.start("controller", Some(&stalling_template("true")));
    let start = Instant::now();
    story.configuration("conf", 2).await;
    story.gateway("gw", "conf").await;
    // The real Deployment controller gives up after 10 s.
    let s = &story;
    let stalled = until(
        "Progressing False/ProgressDeadlineExceeded",
        GONE,
        || async move {
            let Some(d) = s.get_opt("Deployment", LB).await else {
                return Err("no LB Deployment yet".to_owned());
            };
            if condition(&d, "Progressing") == "False/ProgressDeadlineExceeded"
                && int(&d["status"]["observedGeneration"]) >= int(&d["metadata"]["generation"])
            {
                Ok(d)
            } else {
                Err(summary(&d))
            }
        },
    )
    .await;
    eprintln!("stalled after {:?}: {}", start.elapsed(), summary(&stalled));
    assert_eq!(stalled["spec"]["progressDeadlineSeconds"], 10);
    assert_eq!(
        stalled["status"]["updatedReplicas"],
        2,
        "{}",
        summary(&stalled)
    );
    assert_eq!(
        int(&stalled["status"]["availableReplicas"]),
        0,
        "{}",
        summary(&stalled)
    );
    assert_eq!(
        condition(&stalled, "Available"),
        "False/MinimumReplicasUnavailable"
    );
    let pods = story.lb("Pod").await;
    assert_eq!(pods.len(), 2, "{pods:#?}");
    for pod in &pods {
        assert_eq!(pod["status"]["phase"], "Running", "{pod:#}");
        assert!(!pod_ready(pod), "{pod:#}");
    }
    // The Gateway: still Programmed (with the note), configuration applied, Degraded.
    let c = story
        .wait_conditions("gw", "Degraded True/RolloutStalled", |c| {
            is(c, &degraded(), "True", "RolloutStalled")
        })
        .await;
    eprintln!("Degraded after {:?}", start.elapsed());
    assert!(is(&c, "Programmed", "True", "Programmed"), "{c:#?}");
    assert_eq!(
        message(&c, "Programmed"),
        format!("{}{INITIALIZING}", programmed(1))
    );
    assert!(is(&c, &applied(), "True", "Applied"), "{c:#?}");
    // Its message says since when and why, in the real controller's words.
    let progressing = stalled["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .expect("Progressing")
        .clone();
    let why = message(&c, &degraded());
    eprintln!("Degraded: {why:?}");
    for part in ["message", "lastTransitionTime"] {
        let said = progressing[part].as_str().expect("a string");
        assert!(
            why.contains(said),
            "Degraded {why:?} does not say {part} {said:?}"
        );
    }
    // Not before the real controller said so.
    let first_stall = deployments
        .of(LB)
        .into_iter()
        .find(|s| condition(&s.object, "Progressing") == "False/ProgressDeadlineExceeded")
        .expect("the stall in the Deployment's history");
    let first_degraded = gateways
        .of("gw")
        .into_iter()
        .find(|s| conditions(&s.object).contains_key(&degraded()))
        .expect("Degraded in the Gateway's history");
    assert!(
        first_degraded.rv > first_stall.rv,
        "Degraded (rv {}) before the stall (rv {})",
        first_degraded.rv,
        first_stall.rv
    );

    // The fix: the controller restarted with the label reading "false".
    story.stop().await;
    let fixed = Instant::now();
    story.start("controller-fixed", Some(&stalling_template("false")));
    let c = story
        .wait_conditions_within(
            "gw",
            "Degraded gone",
            |c| !c.contains_key(&degraded()),
            ROLLOUT,
        )
        .await;
    eprintln!("Degraded gone {:?} after the restart", fixed.elapsed());
    assert!(is(&c, "Programmed", "True", "Programmed"), "{c:#?}");
    // It went with the update (a stall of the previous generation no longer counts), not
    // before it.
    let updated = deployments
        .of(LB)
        .into_iter()
        .find(|s| int(&s.object["metadata"]["generation"]) >= 2)
        .expect("the update in the Deployment's history");
    let cleared = gateways
        .of("gw")
        .into_iter()
        .filter(|s| s.rv > first_degraded.rv)
        .find(|s| !conditions(&s.object).contains_key(&degraded()))
        .expect("Degraded's removal in the Gateway's history");
    assert!(
        cleared.rv > updated.rv,
        "Degraded removed (rv {}) before the update (rv {})",
        cleared.rv,
        updated.rv
    );
    let pods = story.settled(2, 1).await;
    story.programmed(&programmed(1)).await;
    eprintln!(
        "recovered (rolled out, Programmed) {:?} after the restart",
        fixed.elapsed()
    );
    for pod in &pods {
        assert_eq!(pod["metadata"]["labels"][UNREADY], "false", "{pod:#}");
    }
    let d = story.deployment().await;
    assert_eq!(condition(&d, "Progressing"), "True/NewReplicaSetAvailable");
    assert_eq!(
        d["spec"]["template"]["metadata"]["labels"][UNREADY],
        "false"
    );
    // Degraded never came back after it went.
    let back = gateways
        .of("gw")
        .into_iter()
        .filter(|s| s.rv > cleared.rv)
        .any(|s| conditions(&s.object).contains_key(&degraded()));
    assert!(!back, "Degraded came back during the fixed rollout");
    story.stop().await;
}

/// Scales the LB Deployment through its `scale` subresource, as an autoscaler does.
async fn autoscale(story: &Story, replicas: i64) {
    story
        .kind("Deployment")
        .patch_scale(
            LB,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": replicas } })),
        )
        .await
        .unwrap_or_else(|e| panic!("scale {LB} to {replicas}: {e}"));
}

/// Story 4a: `horizontalScaling.replicas` with `enforceReplicas`: the Pods follow the
/// configuration, and an outside scale is reverted with one update, the Pods following
/// back.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn enforced_replicas_are_scaled_by_the_configuration_and_an_outside_scale_reverted() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-enforce-").await;
    story.enforce_replicas(3).await;
    story.settled(3, 2).await;
    story.programmed(&programmed(2)).await;
    assert_eq!(story.deployment().await["spec"]["replicas"], 3);
    // An outside writer scales it to 1.
    let before = controller_requests(&story.ns).len();
    let scaled_at = int(&story.deployment().await["metadata"]["generation"]);
    autoscale(&story, 1).await;
    let s = &story;
    let d = until("replicas 3 again", WAIT, || async move {
        let d = s.deployment().await;
        if d["spec"]["replicas"] == 3 && int(&d["metadata"]["generation"]) > scaled_at + 1 {
            Ok(d)
        } else {
            Err(summary(&d))
        }
    })
    .await;
    eprintln!("reverted: {}", summary(&d));
    story.settled(3, 2).await;
    story.programmed(&programmed(2)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let requests = story.requests_since(before);
    let updates = deployment_writes(&requests);
    assert_eq!(updates.len(), 1, "one revert: {updates:#?}");
    assert_eq!(updates[0].verb, "update");
    // The outside scale is in the audit log, before the revert.
    let scale = audit(&story.ns)
        .into_iter()
        .find(|a| a.user == env("E2E_ADMIN_USER") && a.subresource == "scale")
        .expect("the outside scale in the audit log");
    assert!(scale.at <= updates[0].at, "{scale:?} {:?}", updates[0]);
    story.stop().await;
}

/// Story 4b: without `enforceReplicas` an autoscaler-like writer owns the replicas: its
/// scale stays, the Pods follow it (up and down), the controller writes no Deployment, and
/// `Programmed` follows the rollouts the scale starts.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn an_autoscaler_owns_replicas_unless_enforced_and_the_pods_follow() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-autoscale-").await;
    let gateways = story.record("Gateway").await;
    let deployments = story.record("Deployment").await;
    let before = controller_requests(&story.ns).len();
    for replicas in [3, 1] {
        autoscale(&story, replicas).await;
        story.settled(replicas as usize, 1).await;
        story.programmed(&programmed(1)).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(story.deployment().await["spec"]["replicas"], replicas);
    }
    // Whenever the Gateway said the rollout was done, the Deployment's last state before
    // it (resourceVersion) was complete: during the scale up, 3 wanted and fewer updated
    // and available, it was not.
    let deployment_states = deployments.seen();
    let mut noted = 0;
    for state in gateways.seen() {
        let said = message(&conditions(&state.object), "Programmed").to_owned();
        if said.ends_with(INITIALIZING) {
            noted += 1;
            continue;
        }
        let at = deployment_states.iter().rfind(|d| d.rv < state.rv);
        assert!(
            at.is_some_and(|d| rollout_complete(&d.object)),
            "Programmed {said:?} (rv {}) while the Deployment read {:?}",
            state.rv,
            at.map(|d| summary(&d.object))
        );
    }
    eprintln!("Gateway states with the initializing note during the scales: {noted}");
    let requests = story.requests_since(before);
    assert!(
        writes(&requests, "deployments", "").is_empty(),
        "the controller wrote the Deployment: {requests:#?}"
    );
    story.stop().await;
}

/// The LB's objects, for a check that they are gone: (kind, name) of the Deployment, its
/// ReplicaSets and Pods.
async fn lb_objects(story: &Story) -> Vec<(String, String)> {
    let mut objects = Vec::new();
    if story.get_opt("Deployment", LB).await.is_some() {
        objects.push(("Deployment".to_owned(), LB.to_owned()));
    }
    for kind in ["ReplicaSet", "Pod"] {
        for o in story.lb(kind).await {
            objects.push((
                kind.to_owned(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
    }
    objects
}

/// Checks the ownership chain the garbage collector follows: the Deployment controlled by
/// the Gateway (`blockOwnerDeletion`), the ReplicaSets by the Deployment, the Pods by a
/// ReplicaSet.
async fn owned_chain(story: &Story) {
    let gateway = story.get("Gateway", "gw").await;
    let deployment = story.deployment().await;
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["uid"], gateway["metadata"]["uid"], "{owner:#}");
    assert_eq!(owner["controller"], true, "{owner:#}");
    assert_eq!(owner["blockOwnerDeletion"], true, "{owner:#}");
    for rs in story.lb("ReplicaSet").await {
        assert_eq!(
            rs["metadata"]["ownerReferences"][0]["uid"],
            deployment["metadata"]["uid"]
        );
    }
    for pod in story.lb("Pod").await {
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
            true
        );
    }
}

/// Story 5a: a Gateway deleted (background propagation, the default) while its LB runs:
/// the garbage collector deletes the Deployment through the controller ownerReference,
/// then its ReplicaSets and Pods; the controller recreates nothing.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_deleted_gateway_s_lb_is_garbage_collected_in_the_background() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-gc-").await;
    owned_chain(&story).await;
    let before = controller_requests(&story.ns).len();
    let start = Instant::now();
    story
        .api("Gateway")
        .delete("gw", &DeleteParams::background())
        .await
        .expect("delete the Gateway");
    let s = &story;
    until(
        "the LB's Deployment, ReplicaSets and Pods gone",
        GONE,
        || async move {
            let left = lb_objects(s).await;
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("{left:?}"))
            }
        },
    )
    .await;
    eprintln!("garbage-collected in {:?}", start.elapsed());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(lb_objects(&story).await.is_empty(), "the LB came back");
    // The garbage collector deleted the Deployment; the controller wrote no Deployment.
    let deleted_by: Vec<String> = audit(&story.ns)
        .into_iter()
        .filter(|a| a.verb == "delete" && a.resource == "deployments" && a.name == LB)
        .map(|a| a.user)
        .collect();
    assert!(
        deleted_by
            .iter()
            .any(|u| u.ends_with(":generic-garbage-collector")),
        "{deleted_by:?}"
    );
    let requests = story.requests_since(before);
    assert!(
        writes(&requests, "deployments", "").is_empty(),
        "the controller wrote a Deployment after the Gateway's deletion: {requests:#?}"
    );
    story.stop().await;
}

/// Story 5b: a Gateway deleted with `propagationPolicy: Foreground`: it stays (with its
/// deletionTimestamp and the `foregroundDeletion` finalizer) until the Deployment, its
/// ReplicaSets and Pods are gone, as `blockOwnerDeletion` asks; meanwhile the controller
/// writes nothing (SPEC section 3, step 1).
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_foreground_deletion_keeps_the_gateway_until_its_lb_is_gone() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-fg-").await;
    owned_chain(&story).await;
    let dependents = lb_objects(&story).await;
    let recorders = [
        story.record("Gateway").await,
        story.record("Deployment").await,
        story.record("ReplicaSet").await,
        story.record("Pod").await,
    ];
    let before = controller_requests(&story.ns).len();
    let start = Instant::now();
    story
        .api("Gateway")
        .delete("gw", &DeleteParams::foreground())
        .await
        .expect("delete the Gateway");
    let gateway = story.get("Gateway", "gw").await;
    assert!(
        gateway["metadata"]["deletionTimestamp"].is_string(),
        "{gateway:#}"
    );
    assert_eq!(
        gateway["metadata"]["finalizers"],
        json!(["foregroundDeletion"]),
        "{gateway:#}"
    );
    let s = &story;
    until("the Gateway gone", GONE, || async move {
        match s.get_opt("Gateway", "gw").await {
            None => Ok(()),
            Some(_) => Err(format!("dependents left: {:?}", lb_objects(s).await)),
        }
    })
    .await;
    eprintln!("foreground deletion done in {:?}", start.elapsed());
    assert!(lb_objects(&story).await.is_empty());
    // By resourceVersion: every dependent's deletion came before the Gateway's.
    let deleted = |kind: &str, name: &str| {
        let recorder = recorders.iter().find(|r| r.kind == kind).expect("recorder");
        recorder
            .of(name)
            .into_iter()
            .find(|s| s.event == "DELETED")
            .map(|s| s.rv)
            .unwrap_or_else(|| panic!("{kind} {name}: no deletion seen"))
    };
    let gateway_gone = deleted("Gateway", "gw");
    for (kind, name) in &dependents {
        let rv = deleted(kind, name);
        assert!(
            rv < gateway_gone,
            "{kind} {name} deleted (rv {rv}) after the Gateway (rv {gateway_gone})"
        );
    }
    // The Deployment went in the foreground too (the garbage collector's rule for a
    // dependent with dependents of its own), as the history shows.
    let foreground = recorders[1]
        .of(LB)
        .iter()
        .any(|s| s.object["metadata"]["finalizers"] == json!(["foregroundDeletion"]));
    eprintln!("the Deployment carried the foregroundDeletion finalizer: {foreground}");
    // The controller wrote nothing for a Gateway being deleted.
    let requests = story.requests_since(before);
    let written: Vec<&Audited> = requests.iter().filter(|a| is_write(a)).collect();
    assert!(
        written.is_empty(),
        "the controller wrote during the deletion: {written:#?}"
    );
    story.stop().await;
}

/// Whether process `pid` still runs (not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// Story 5c: the story's namespace deleted while the controller watches it: the namespace
/// controller and the garbage collector remove everything; the controller recreates
/// nothing, does not fail in a loop (its writes in the namespace are counted in the audit
/// log, its error lines in its log) and keeps running.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_deleted_namespace_is_left_alone_by_the_controller() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-ns-").await;
    let gateways = story.record("Gateway").await;
    let before = controller_requests(&story.ns).len();
    let namespaces: Api<DynamicObject> =
        Api::all_with(story.admin.clone(), &resource("v1", "Namespace"));
    let start = Instant::now();
    namespaces
        .delete(&story.ns, &DeleteParams::default())
        .await
        .expect("delete the namespace");
    let (s, api) = (&story, &namespaces);
    until("the namespace gone", GONE, || async move {
        match api.get_opt(&s.ns).await.expect("get namespace") {
            None => Ok(()),
            Some(ns) => Err(format!(
                "{:?}",
                serde_json::to_value(&ns).expect("json")["status"]
            )),
        }
    })
    .await;
    eprintln!("namespace gone in {:?}", start.elapsed());
    // Warnings and errors in the controller's log, and its writes in the namespace: the
    // count must not grow once the namespace is gone.
    let complaints = |log: &str| {
        log.lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .count()
    };
    let complaints_then = complaints(&story.controller().log());
    let writes_then = story
        .requests_since(before)
        .iter()
        .filter(|a| is_write(a))
        .count();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let log = story.controller().log();
    assert!(
        running(story.controller().pid()),
        "the controller exited: {log}"
    );
    assert_eq!(
        complaints(&log),
        complaints_then,
        "the controller keeps failing once the namespace is gone: {log}"
    );
    let requests = story.requests_since(before);
    let written: Vec<&Audited> = requests.iter().filter(|a| is_write(a)).collect();
    eprintln!(
        "the controller's writes in the namespace after its deletion: {:?}",
        written
            .iter()
            .map(|a| format!(
                "{} {}/{} {} -> {}",
                a.verb, a.resource, a.subresource, a.name, a.code
            ))
            .collect::<Vec<_>>()
    );
    let history: Vec<String> = gateways
        .of("gw")
        .iter()
        .map(|s| {
            let c = conditions(&s.object);
            let show = |t: &str| {
                c.get(t).map_or("-".to_owned(), |c| {
                    format!("{}/{} {:?}", c["status"], c["reason"], c["message"])
                })
            };
            format!(
                "{} rv={} Programmed={} Applied={}",
                s.event,
                s.rv,
                show("Programmed"),
                show(&applied())
            )
        })
        .collect();
    eprintln!("the Gateway while its namespace terminated: {history:#?}");
    assert_eq!(
        written.len(),
        writes_then,
        "writes after the namespace was gone: {written:#?}"
    );
    // While it terminated, the Gateway's status followed what the namespace controller
    // deleted, in the order it happened to delete it (measured: the Pods first, so
    // "initializing"; then, in some runs, the Deployment before the Gateway, so one create
    // refused with 403 as the namespace terminates, `ApplyRejected`; then the
    // GatewayConfiguration, `InvalidParameters`). Nothing was created. The refused writes:
    // Events (403, each tried once), and the LB's create at most twice (the rejection,
    // and the one retry the controller's own status write wakes, which writes no status:
    // recovery.rs's rejected-update story allows the same; the next would be 30 s later, by
    // when the Gateway is gone).
    assert!(
        !written
            .iter()
            .any(|a| a.verb == "create" && a.resource != "events" && a.code < 300),
        "the controller created something in the terminating namespace: {written:#?}"
    );
    // Also allowed: one status patch answered 404, the Gateway deleted between the read and
    // the write (a race no reader can close); the controller then finds it gone from its
    // cache and writes nothing more for it.
    let status_gone = written
        .iter()
        .filter(|a| a.subresource == "status" && a.code == 404)
        .count();
    assert!(
        status_gone <= 1,
        "status patches of a gone Gateway: {written:#?}"
    );
    let refused: Vec<&&Audited> = written
        .iter()
        .filter(|a| a.code >= 300 && !(a.subresource == "status" && a.code == 404))
        .collect();
    assert!(
        refused.iter().all(|a| a.verb == "create"
            && (a.resource == "events" || a.resource == "deployments")
            && a.code == 403),
        "a refused write other than an Event's or the LB's create (403): {refused:#?}"
    );
    let mut events: Vec<&str> = refused
        .iter()
        .filter(|a| a.resource == "events")
        .map(|a| a.name.as_str())
        .collect();
    let tried = events.len();
    events.sort_unstable();
    events.dedup();
    assert_eq!(events.len(), tried, "an Event create retried: {refused:#?}");
    let creates = refused
        .iter()
        .filter(|a| a.resource == "deployments")
        .count();
    assert!(
        creates <= 2,
        "the LB's create retried in a loop: {refused:#?}"
    );
    assert!(
        written.len() <= 10,
        "the controller wrote in a loop while the namespace terminated: {written:#?}"
    );
    story.stop().await;
}

/// Story 5d: the GatewayClass deleted, then created again: the Gateway goes to the not-ours
/// path (`Accepted` Unknown/Pending, the custom conditions removed, `Programmed` left as it
/// was, the LB untouched), then comes back (Accepted, configuration applied) without a
/// Deployment write.
#[tokio::test]
#[ignore = "needs the full control plane: E2E_FULL=1 e2e/controlplane.sh run (e2e/run.sh)"]
async fn a_gateway_class_deleted_and_recreated_leaves_and_takes_back_its_gateway() {
    if !full_control_plane() {
        return;
    }
    let mut story = Story::rolled_out("roll-class-").await;
    let programmed_before = story.conditions("gw").await["Programmed"].clone();
    let deployment = story.deployment().await;
    let before = controller_requests(&story.ns).len();
    let class = json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                        "metadata": { "name": story.class },
                        "spec": { "controllerName": CONTROLLER_NAME } });
    delete(&story.admin, &class).await;
    let c = story
        .wait_conditions("gw", "the not-ours path", |c| {
            is(c, "Accepted", "Unknown", "Pending")
                && !c.contains_key(&applied())
                && !c.contains_key(&degraded())
        })
        .await;
    assert_eq!(message(&c, "Accepted"), "Waiting for controller");
    assert_eq!(
        c["Programmed"], programmed_before,
        "Programmed must be left as it was"
    );
    let pods = story.settled(2, 1).await;
    assert_eq!(pods.len(), 2);
    let d = story.deployment().await;
    assert_eq!(d["metadata"]["uid"], deployment["metadata"]["uid"]);
    assert_eq!(
        d["metadata"]["generation"],
        deployment["metadata"]["generation"]
    );
    // Back: the class created again.
    create(&story.admin, class).await;
    let c = story.programmed(&programmed(1)).await;
    assert_eq!(
        message(&c, "Accepted"),
        format!("Gateway accepted by {CONTROLLER_NAME}")
    );
    let d = story.deployment().await;
    assert_eq!(d["metadata"]["uid"], deployment["metadata"]["uid"]);
    assert_eq!(
        d["metadata"]["generation"],
        deployment["metadata"]["generation"]
    );
    let requests = story.requests_since(before);
    assert!(
        writes(&requests, "deployments", "").is_empty(),
        "the controller wrote the Deployment: {requests:#?}"
    );
    assert!(
        writes(&requests, "gateways", "status").len() >= 2,
        "the two status writes (not ours, ours again): {requests:#?}"
    );
    story.stop().await;
}
