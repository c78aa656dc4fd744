//! The chart on a real node (`E2E_NODE=real e2e/controlplane.sh run`, as `e2e/run.sh`
//! runs it): containerd and a kubelet run the controller's image, built here from the
//! shipped Dockerfile (`e2e/image.sh`), and the LB Deployments' Pods (a stand-in image for
//! Meridio-2's LB, `e2e/controlplane/cmd/lb-standin`). Skipped, saying why, elsewhere.
//!
//! One story, in the order an operator meets it; each step says what it proves:
//!
//! 1. the install of the kube crate's README, command for command: two controller Pods
//!    start as containers under the chart's securityContext (user 65532, read-only root
//!    filesystem, no capabilities), the kubelet's probes pass, exactly one holds the Lease;
//! 2. a Gateway gets its LB Deployment, whose Pod starts on the node, sets its readiness
//!    gate and becomes Ready; `Programmed` drops "Pods may still be initializing" only once
//!    it is Ready (the time to each is printed);
//! 3. the leader's container killed: the kubelet restarts it, the other replica leads, no
//!    condition of the Gateway turns False meanwhile, and a configuration edit made then
//!    reaches the LB Deployment with one write;
//! 4. `kubectl rollout restart` of the controller: new Pods, a leader again within the
//!    lease bound, the next edit applied;
//! 5. 100 Gateways (the node cordoned: their LB Pods stay Pending): the leader's peak
//!    resident set and its container cgroup's peak memory against the chart's limit;
//! 6. an LB whose router crashes (`helm upgrade` of the template; the LB Deployment given a
//!    short progress deadline and `Recreate`): the real Deployment controller stalls the
//!    rollout (`ProgressDeadlineExceeded`), the Gateway shows `Degraded` with
//!    `RolloutStalled` while `Programmed` stays True, and it clears once the template is
//!    fixed (`helm upgrade --reset-values`);
//! 7. the ServiceAccount token replaced in the leader's projected volume (as the kubelet
//!    rotates it): the process authenticates with the new one within the minute;
//! 8. the node drained (cordoned, every Pod evicted): what the Gateway's status says while
//!    nothing runs, and that all comes back once it is uncordoned.

mod helm;

use std::time::{Duration, Instant};

use helm::*;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const RELEASE: &str = "gateway-reconcile";
const RELEASE_NS: &str = "gateway-reconcile-system";
const CONTROLLER_NAME: &str = "meridio-2.nordix.org/gateway-controller";
const NOTE: &str = "; Pods may still be initializing";
/// How long a new leader may take: the lease (15 s) runs out, then a retry.
const LEASE_WAIT: Duration = Duration::from_secs(60);
const WAIT: Duration = Duration::from_secs(90);

fn real_node() -> bool {
    if std::env::var("E2E_NODE").as_deref() == Ok("real") {
        return true;
    }
    eprintln!(
        "skipped: this test needs the real node (containerd and a kubelet): run it under \
         `E2E_NODE=real e2e/controlplane.sh run`, as e2e/run.sh does"
    );
    false
}

/// Polls `probe` every 250 ms until it gives `Ok`, or panics after `limit` with `what` and
/// its last `Err`.
async fn until<T, F, Fut>(limit: Duration, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let start = Instant::now();
    loop {
        match probe().await {
            Ok(v) => return v,
            Err(last) if start.elapsed() > limit => {
                panic!(
                    "{what}: not reached in {limit:?}; last: {last}\n{}",
                    node_logs()
                )
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// The last lines of the kubelet's log, for a failure message.
fn node_logs() -> String {
    let path = std::path::Path::new(&env("E2E_DIR")).join("node/kubelet.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    format!("---- last lines of {} ----\n{tail}", path.display())
}

/// Host processes of a Pod's containers (the node's PID namespace nests in the host's):
/// those whose memory cgroup is under the Pod's (`pod<uid>`), with their command line.
fn pod_processes(pod: &Value) -> Vec<(u32, String)> {
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let marker = format!("/pod{uid}/");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        if !cgroup
            .lines()
            .any(|l| l.contains(":memory:") && l.contains(&marker))
        {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmdline.trim().to_owned()));
    }
    found
}

/// The controller's process in a Pod (its container's, not the sandbox's).
fn controller_process(pod: &Value) -> Option<u32> {
    pod_processes(pod)
        .into_iter()
        .find(|(_, cmd)| cmd.starts_with("/usr/local/bin/gateway-reconcile-controller"))
        .map(|(pid, _)| pid)
}

/// `Uid:` of /proc/PID/status: real, effective, saved, filesystem.
fn process_uids(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|u| u.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The mount options of the process's root filesystem (its mount namespace's `/`).
fn root_mount_options(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(4) == Some(&"/"))
        .and_then(|f| f.get(5).map(|o| o.to_string()))
        .unwrap_or_default()
}

/// A field of /proc/PID/status in kB (`VmHWM`: the peak resident set), in bytes.
fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}

/// `CapEff:` of /proc/PID/status (hexadecimal).
fn effective_capabilities(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|c| u64::from_str_radix(c.trim(), 16).ok())
        .unwrap_or(u64::MAX)
}

/// The container's peak memory (`memory.max_usage_in_bytes` of its cgroup, v1).
fn peak_memory(pid: u32) -> Option<u64> {
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = cgroup
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_owned()))?;
    std::fs::read_to_string(format!(
        "/sys/fs/cgroup/memory{path}/memory.max_usage_in_bytes"
    ))
    .ok()?
    .trim()
    .parse()
    .ok()
}

fn pod_ready(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running"
        && pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Seconds from the first container's start to the Pod's Ready condition (the API's times
/// have whole seconds).
fn start_to_ready(pod: &Value) -> Option<i64> {
    let seconds = |v: &Value| {
        v.as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second())
    };
    let started = seconds(&pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])?;
    let ready = seconds(&condition(pod, "Ready")?["lastTransitionTime"])?;
    Some(ready - started)
}

fn restarts(pod: &Value) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["restartCount"].as_i64())
        .sum()
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// The holder of the controller's Lease (the one Lease in the release namespace).
async fn lease_holder(admin: &Client) -> Option<String> {
    list(admin, "coordination.k8s.io/v1", "Lease", RELEASE_NS, "")
        .await
        .iter()
        .find_map(|l| l["spec"]["holderIdentity"].as_str().map(str::to_owned))
}

/// Waits until the Lease's holder is one that `wanted` accepts; the holder.
async fn leader_until(admin: &Client, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    let wanted = &wanted;
    until(LEASE_WAIT, what, || async move {
        match lease_holder(admin).await {
            Some(h) if wanted(&h) => Ok(h),
            other => Err(format!("holder {other:?}")),
        }
    })
    .await
}

async fn controller_pods(admin: &Client, deployment: &Value) -> Vec<Value> {
    list(admin, "v1", "Pod", RELEASE_NS, &selector_of(deployment)).await
}

fn gateway_class(class: &str) -> Value {
    json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
            "metadata": { "name": class }, "spec": { "controllerName": CONTROLLER_NAME } })
}

/// A GatewayConfiguration of one LB replica (one node, and the template's anti-affinity
/// is by hostname) with an internal subnet, so that the LB Pods carry the IPv4
/// connectivity readiness gate their router sets.
fn configuration(ns: &str, name_: &str, replicas: i64, cpu: &str) -> Value {
    json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
            "metadata": { "name": name_, "namespace": ns },
            "spec": {
                "networkAttachments": [{ "type": "NAD", "nad": { "name": "vlan", "namespace": ns, "interface": "eth1" } }],
                "internalSubnets": [{ "attachmentType": "NAD", "cidr": "169.254.100.0/24" }],
                "horizontalScaling": { "replicas": replicas, "enforceReplicas": true },
                "verticalScaling": { "containers": [{ "name": "loadbalancer", "enforceResources": true,
                    "resources": { "requests": { "cpu": cpu, "memory": "16Mi" }, "limits": { "memory": "64Mi" } } }] } } })
}

fn gateway(ns: &str, name_: &str, class: &str, conf: &str) -> Value {
    json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": { "name": name_, "namespace": ns },
            "spec": { "gatewayClassName": class,
                      "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }],
                      "infrastructure": { "parametersRef": {
                          "group": DOMAIN, "kind": "GatewayConfiguration", "name": conf } } } })
}

async fn create(admin: &Client, object: &Value) {
    let api = api_for(admin, object).await;
    let o: kube::api::DynamicObject = serde_json::from_value(object.clone()).expect("object");
    api.create(&PostParams::default(), &o)
        .await
        .unwrap_or_else(|e| panic!("create {} {}: {e}", kind(object), name(object)));
}

async fn merge_patch(admin: &Client, object: &Value, patch: Value) {
    api_for(admin, object)
        .await
        .patch(name(object), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("patch {} {}: {e}", kind(object), name(object)));
}

/// The LB Pods' ServiceAccount (the `serviceAccount` setting's default), and what their
/// router needs to set its readiness gates: read its Pod, patch its status (Meridio-2's
/// own chart grants its LB the same).
async fn lb_account(admin: &Client, ns: &str) {
    let sa = "stateless-load-balancer";
    create(
        admin,
        &json!({ "apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": { "name": sa, "namespace": ns } }),
    )
    .await;
    create(
        admin,
        &json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": { "name": "lb-readiness-gates", "namespace": ns },
        "rules": [{ "apiGroups": [""], "resources": ["pods"], "verbs": ["get"] },
                  { "apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"] }] }),
    )
    .await;
    create(admin, &json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": { "name": "lb-readiness-gates", "namespace": ns },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "lb-readiness-gates" },
        "subjects": [{ "kind": "ServiceAccount", "name": sa, "namespace": ns }] })).await;
}

#[tokio::test]
#[ignore = "needs the real node: E2E_NODE=real e2e/controlplane.sh run (e2e/run.sh)"]
async fn the_chart_on_a_real_node() {
    if !real_node() {
        return;
    }
    let admin = admin().await;
    let scratch = Scratch::new("real-node");
    let objects = render(RELEASE, RELEASE_NS, &json!({}));
    let deployment_name = name(find(&objects, "Deployment")).to_owned();

    // (1) The README's install, command for command (the image is on the node under the
    // chart's default name, so no image value is needed).
    let started = Instant::now();
    let chart = chart_dir();
    helm_run(
        &scratch,
        &[
            "install",
            RELEASE,
            chart.to_str().expect("path"),
            "--namespace",
            RELEASE_NS,
            "--create-namespace",
        ],
    );
    let pods = rolled_out(&admin, RELEASE_NS, &deployment_name, 2, &node_logs).await;
    eprintln!(
        "{:.1?}: the controller's two Pods Running and Ready (the kubelet's probes); container start -> Ready: {:?}",
        started.elapsed(),
        pods.iter().map(start_to_ready).collect::<Vec<_>>()
    );
    for pod in &pods {
        let pid = controller_process(pod).unwrap_or_else(|| {
            panic!(
                "no controller process in Pod {}: {:?}",
                name(pod),
                pod_processes(pod)
            )
        });
        assert_eq!(
            process_uids(pid),
            [65532; 4],
            "Pod {}: the process's uids",
            name(pod)
        );
        let options = root_mount_options(pid);
        assert!(
            options.split(',').any(|o| o == "ro"),
            "Pod {}: root filesystem mounted {options}",
            name(pod)
        );
        assert_eq!(
            effective_capabilities(pid),
            0,
            "Pod {}: effective capabilities",
            name(pod)
        );
    }
    let names: Vec<String> = pods.iter().map(|p| name(p).to_owned()).collect();
    let leader = leader_until(&admin, "one of the two Pods holds the Lease", |h| {
        names.iter().any(|n| h.starts_with(n.as_str()))
    })
    .await;
    eprintln!("{:.1?}: the Lease held by {leader}", started.elapsed());

    // (2) A Gateway and its LB Pod on the node.
    let gw_ns = namespace(&admin, "real-node-").await;
    lb_account(&admin, &gw_ns).await;
    let class = "real-node";
    create(&admin, &gateway_class(class)).await;
    create(&admin, &configuration(&gw_ns, "conf", 1, "10m")).await;
    let created = Instant::now();
    create(&admin, &gateway(&gw_ns, "gw", class, "conf")).await;
    let lb_name = "sllbr-gw";
    let (mut saw_note, mut lb_ready_at) = (false, None);
    let programmed_at = loop {
        // The Gateway first, then the Pods: a complete `Programmed` read before Pods that
        // are Ready proves they were Ready when it was written (they only become so once).
        let gw = gateway_of(&admin, &gw_ns).await;
        let message = condition(&gw, "Programmed")
            .filter(|c| c["status"] == "True")
            .and_then(|c| c["message"].as_str())
            .map(str::to_owned);
        let lb = get(&admin, "apps/v1", "Deployment", &gw_ns, lb_name).await;
        let lb_pods = if lb.is_null() {
            Vec::new()
        } else {
            list(&admin, "v1", "Pod", &gw_ns, &selector_of(&lb)).await
        };
        let all_ready = !lb_pods.is_empty() && lb_pods.iter().all(pod_ready);
        if all_ready && lb_ready_at.is_none() {
            lb_ready_at = Some(created.elapsed());
        }
        match &message {
            Some(m) if m.ends_with(NOTE) => saw_note = true,
            Some(m) => {
                assert!(
                    all_ready,
                    "Programmed says {m:?} while the LB Pods are not all Ready: {lb_pods:#?}"
                );
                break created.elapsed();
            }
            None => {}
        }
        assert!(
            created.elapsed() < WAIT,
            "the Gateway is not Programmed without the note in {WAIT:?}: {gw:#}\nLB Pods: {lb_pods:#?}\n{}",
            node_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let lb_pods = rolled_out(&admin, &gw_ns, lb_name, 1, &node_logs).await;
    let gates = &lb_pods[0]["spec"]["readinessGates"];
    assert_eq!(
        gates,
        &json!([{ "conditionType": "meridio-2.nordix.org/ipv4-connectivity" }])
    );
    assert_eq!(
        condition(&lb_pods[0], "meridio-2.nordix.org/ipv4-connectivity").map(|c| &c["status"]),
        Some(&json!("True")),
        "the router did not set its readiness gate"
    );
    eprintln!(
        "Gateway created -> its LB Pod Ready {:.1?}, -> Programmed without the note {programmed_at:.1?} (the note seen before: {saw_note})",
        lb_ready_at.unwrap_or_default()
    );

    // (3) The leader's container killed. From here to the end of the rollout restart, the
    // Gateway's conditions are watched: none may turn False.
    let turned_false = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let watcher = {
        let (admin, gw_ns, turned_false) = (admin.clone(), gw_ns.clone(), turned_false.clone());
        tokio::spawn(async move {
            loop {
                let gw = gateway_of(&admin, &gw_ns).await;
                for c in gw["status"]["conditions"].as_array().into_iter().flatten() {
                    let mut seen = turned_false.lock().expect("lock");
                    if c["status"] == "False" && !seen.contains(c) {
                        seen.push(c.clone());
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let controller = get(
        &admin,
        "apps/v1",
        "Deployment",
        RELEASE_NS,
        &deployment_name,
    )
    .await;
    let pods = controller_pods(&admin, &controller).await;
    let leader_pod = pods
        .iter()
        .find(|p| leader.starts_with(name(p)))
        .expect("the leader's Pod")
        .clone();
    let pid = controller_process(&leader_pod).expect("the leader's process");
    let before_restarts = restarts(&leader_pod);
    let killed = Instant::now();
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    let new_leader = leader_until(&admin, "the other replica leads", |h| h != leader).await;
    eprintln!(
        "the leader's container killed -> {new_leader} leads after {:.1?}",
        killed.elapsed()
    );
    let leader_name = name(&leader_pod).to_owned();
    until(WAIT, "the kubelet restarts the killed container", || {
        let admin = admin.clone();
        let leader_name = leader_name.clone();
        async move {
            let pod = get(&admin, "v1", "Pod", RELEASE_NS, &leader_name).await;
            if restarts(&pod) > before_restarts && pod_ready(&pod) {
                Ok(())
            } else {
                Err(format!(
                    "restarts {}, ready {}",
                    restarts(&pod),
                    pod_ready(&pod)
                ))
            }
        }
    })
    .await;
    let sa_user = format!(
        "system:serviceaccount:{RELEASE_NS}:{}",
        name(find(&objects, "ServiceAccount"))
    );
    edit_and_count_writes(&admin, &gw_ns, &sa_user, "20m", 2).await;

    // (4) `kubectl rollout restart`: the Pod template's restartedAt annotation.
    let restarted = Instant::now();
    merge_patch(&admin, &controller, json!({ "spec": { "template": { "metadata": { "annotations": {
        "kubectl.kubernetes.io/restartedAt": format!("{:?}", std::time::SystemTime::now()) } } } } })).await;
    let pods = rolled_out(&admin, RELEASE_NS, &deployment_name, 2, &node_logs).await;
    let names: Vec<String> = pods.iter().map(|p| name(p).to_owned()).collect();
    assert!(
        !names.contains(&leader_name),
        "the rollout kept Pod {leader_name}"
    );
    let leader = leader_until(&admin, "a new Pod leads", |h| {
        names.iter().any(|n| h.starts_with(n.as_str()))
    })
    .await;
    eprintln!(
        "rollout restart -> new Pods Ready and {leader} leads after {:.1?}",
        restarted.elapsed()
    );
    edit_and_count_writes(&admin, &gw_ns, &sa_user, "30m", 3).await;
    watcher.abort();
    let turned_false = turned_false.lock().expect("lock").clone();
    assert!(
        turned_false.is_empty(),
        "conditions turned False during the handovers: {turned_false:#?}"
    );

    // (5) 100 Gateways, the leader's memory. The node cordoned meanwhile: their LB
    // Deployments are created, their Pods stay Pending (one node does not run 100 LBs).
    let node =
        json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": env("E2E_NODES") } });
    merge_patch(&admin, &node, json!({ "spec": { "unschedulable": true } })).await;
    let many_ns = namespace(&admin, "real-node-many-").await;
    create(&admin, &configuration(&many_ns, "conf", 1, "10m")).await;
    for i in 0..100 {
        create(
            &admin,
            &gateway(&many_ns, &format!("gw-{i}"), class, "conf"),
        )
        .await;
    }
    let counted = Instant::now();
    until(WAIT, "100 Gateways Programmed", || {
        let admin = admin.clone();
        let many_ns = many_ns.clone();
        async move {
            let gws = list(
                &admin,
                "gateway.networking.k8s.io/v1",
                "Gateway",
                &many_ns,
                "",
            )
            .await;
            let done = gws.iter().filter(|g| healthy(g)).count();
            if done == 100 {
                Ok(())
            } else {
                Err(format!("{done} healthy"))
            }
        }
    })
    .await;
    let pods = controller_pods(&admin, &controller).await;
    let leader_pod = pods
        .iter()
        .find(|p| leader.starts_with(name(p)))
        .expect("the leader's Pod");
    let pid = controller_process(leader_pod).expect("the leader's process");
    let peak = peak_memory(pid).expect("the leader's memory cgroup");
    let hwm = status_bytes(pid, "VmHWM").expect("the leader's peak resident set");
    let limit = 384 * 1024 * 1024;
    let mib = |b: u64| b as f64 / 1048576.0;
    eprintln!(
        "101 Gateways healthy after {:.1?}; the leader's container: cgroup peak {:.1} MiB, process peak resident set {:.1} MiB (limit 384 MiB)",
        counted.elapsed(),
        mib(peak),
        mib(hwm)
    );
    assert!(
        hwm < limit,
        "peak resident set {hwm} over the chart's limit"
    );
    assert!(peak < limit, "peak memory {peak} over the chart's limit");
    delete(
        &admin,
        &json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": many_ns } }),
    )
    .await;
    merge_patch(&admin, &node, json!({ "spec": { "unschedulable": false } })).await;

    // (6) An LB that crashes.
    crash_and_recover(&admin, &scratch, &gw_ns, lb_name).await;

    // (7) The token replaced (before the drain takes the leader away).
    token_reread(&admin, &deployment_name).await;

    // (8) The node drained.
    drain_and_return(&admin, &node, &deployment_name, &gw_ns, lb_name).await;
}

/// Edits the Gateway's configuration (the LB container's CPU request) and waits until the
/// Gateway says generation `generation` is applied; the controller's ServiceAccount made
/// exactly one write to the LB Deployment for it.
async fn edit_and_count_writes(
    admin: &Client,
    ns: &str,
    sa_user: &str,
    cpu: &str,
    generation: i64,
) {
    let before = requests_of(sa_user).len();
    let conf = configuration(ns, "conf", 1, cpu);
    merge_patch(admin, &conf, json!({ "spec": conf["spec"] })).await;
    let applied = format!("{DOMAIN}/ConfigurationApplied");
    let edited = Instant::now();
    let ns_owned = ns.to_owned();
    until(WAIT, &format!("generation {generation} applied"), || {
        let admin = admin.clone();
        let ns = ns_owned.clone();
        let applied = applied.clone();
        async move {
            let gw = gateway_of(&admin, &ns).await;
            let programmed = condition(&gw, "Programmed").cloned().unwrap_or_default();
            let carried = format!(
                "LB Deployment reconciled with GatewayConfiguration generation {generation}"
            );
            let carries = programmed["message"]
                .as_str()
                .and_then(|m| m.strip_prefix(carried.as_str()))
                .is_some_and(|rest| rest.is_empty() || rest == NOTE);
            let is_applied = condition(&gw, &applied).is_some_and(|c| c["status"] == "True");
            if carries && is_applied {
                Ok(())
            } else {
                Err(format!("{:#}", gw["status"]["conditions"]))
            }
        }
    })
    .await;
    // Writes are logged when answered: give the log a moment.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes: Vec<_> = requests_of(sa_user)
        .split_off(before)
        .into_iter()
        .filter(|r| r.1 == "deployments" && r.3 == ns && (r.0 == "update" || r.0 == "patch"))
        .collect();
    assert_eq!(
        writes.len(),
        1,
        "writes to the LB Deployment for one edit: {writes:#?}"
    );
    eprintln!(
        "configuration edit -> generation {generation} applied after {:.1?}, one Deployment write",
        edited.elapsed()
    );
}

/// `helm upgrade` with an LB template whose load balancer crashes (the stand-in image told
/// to exit), the LB Deployment given a short progress deadline and the `Recreate`
/// strategy: the LB rollout stalls, the Gateway says `Degraded`/`RolloutStalled` and stays
/// `Programmed` (SPEC section 6); then `helm upgrade --reset-values` back to the chart's
/// template: the rollout completes, `Degraded` goes.
async fn crash_and_recover(admin: &Client, scratch: &Scratch, ns: &str, lb: &str) {
    let text = std::fs::read_to_string(chart_dir().join("files/lb-template.yaml"))
        .expect("the chart's LB template");
    let mut crashing: Value = serde_yaml_ng::from_str(&text).expect("the LB template");
    // The router crashes: it never sets the readiness gate, so the Pod is never Ready. (A
    // crashing load balancer container is Ready for an instant each time it starts; once
    // the Deployment controller has seen the rollout complete it never reports a stall:
    // docs/real-server-differences.md, "The real node".)
    crashing["spec"]["template"]["spec"]["containers"][1]["image"] =
        json!("ghcr.io/nordix/meridio-2/router:crash");
    let chart = chart_dir();
    let upgrade = |lb_template: Option<&Value>| {
        let mut args = vec![
            "upgrade",
            RELEASE,
            chart.to_str().expect("path"),
            "--namespace",
            RELEASE_NS,
        ];
        let values = scratch.path("lb-values.json");
        match lb_template {
            Some(t) => {
                std::fs::write(&values, json!({ "lbTemplate": t }).to_string()).expect("values");
                args.extend(["-f", values.to_str().expect("path")]);
            }
            None => args.push("--reset-values"),
        }
        helm_run(scratch, &args);
    };
    // The rollout's settings are the LB Deployment's own, not the controller's (it carries
    // what it does not own): a short progress deadline, and `Recreate`. On one node a new
    // LB Pod cannot start beside the old one (the template's required anti-affinity by
    // hostname), and with a rolling update of `maxUnavailable` 1 for 1 replica the
    // Deployment controller counts a rollout of crashing Pods complete: it never stalls
    // (docs/real-server-differences.md, "The real node").
    let deployment = get(admin, "apps/v1", "Deployment", ns, lb).await;
    merge_patch(
        admin,
        &deployment,
        json!({ "spec": { "progressDeadlineSeconds": 15,
        "strategy": { "type": "Recreate", "rollingUpdate": null } } }),
    )
    .await;
    let crashed = Instant::now();
    upgrade(Some(&crashing));
    let degraded = format!("{DOMAIN}/Degraded");
    let gw = until(Duration::from_secs(180), "Degraded/RolloutStalled", || {
        let (admin, degraded) = (admin.clone(), degraded.clone());
        let (ns, lb) = (ns.to_owned(), lb.to_owned());
        async move {
            let gw = gateway_of(&admin, &ns).await;
            match condition(&gw, &degraded) {
                Some(c) if c["status"] == "True" && c["reason"] == "RolloutStalled" => Ok(gw),
                _ => Err(format!(
                    "Gateway: {:#}\nLB Deployment: {}",
                    gw["status"]["conditions"],
                    rollout_summary(&admin, &ns, &lb).await
                )),
            }
        }
    })
    .await;
    let deployment = get(admin, "apps/v1", "Deployment", ns, lb).await;
    assert_eq!(
        condition(&deployment, "Progressing").map(|c| &c["reason"]),
        Some(&json!("ProgressDeadlineExceeded")),
        "{:#}",
        deployment["status"]
    );
    assert_eq!(
        condition(&gw, "Programmed").map(|c| &c["status"]),
        Some(&json!("True")),
        "Programmed with a stalled rollout: {:#}",
        gw["status"]["conditions"]
    );
    // The new Pod's router exited 1 (its last state, or its state between restarts).
    let pods = list(admin, "v1", "Pod", ns, &selector_of(&deployment)).await;
    let exited_1 = |p: &Value| {
        p["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["name"] == "router")
            .any(|c| {
                c["lastState"]["terminated"]["exitCode"] == 1
                    || c["state"]["terminated"]["exitCode"] == 1
            })
    };
    assert!(
        pods.iter().any(|p| exited_1(p) && !pod_ready(p)),
        "no crashing LB Pod: {}",
        rollout_summary(admin, ns, lb).await
    );
    eprintln!(
        "crashing LB template -> Degraded/RolloutStalled after {:.1?}",
        crashed.elapsed()
    );
    let fixed = Instant::now();
    upgrade(None);
    until(Duration::from_secs(180), "Degraded cleared", || {
        settled(admin, ns)
    })
    .await;
    eprintln!(
        "template fixed -> Degraded cleared, rollout complete after {:.1?}",
        fixed.elapsed()
    );
}

/// Whether the Gateway `gw` in `ns` has settled: healthy, its rollout complete (no
/// initializing note), not `Degraded`; else its conditions.
async fn settled(admin: &Client, ns: &str) -> Result<(), String> {
    let gw = gateway_of(admin, ns).await;
    let programmed = condition(&gw, "Programmed")
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default();
    let degraded = condition(&gw, &format!("{DOMAIN}/Degraded")).is_some();
    if healthy(&gw) && !programmed.ends_with(NOTE) && !degraded {
        Ok(())
    } else {
        Err(format!("{:#}", gw["status"]["conditions"]))
    }
}

/// The story's Gateway, `gw` in `ns`.
async fn gateway_of(admin: &Client, ns: &str) -> Value {
    get(admin, "gateway.networking.k8s.io/v1", "Gateway", ns, "gw").await
}

/// A Deployment's template images, progress deadline, status and Pods, for a failure message.
async fn rollout_summary(admin: &Client, ns: &str, name_: &str) -> String {
    let d = get(admin, "apps/v1", "Deployment", ns, name_).await;
    let pods = if d.is_null() {
        Vec::new()
    } else {
        list(admin, "v1", "Pod", ns, &selector_of(&d)).await
    };
    let pods: Vec<Value> = pods
        .iter()
        .map(|p| {
            json!({ "name": p["metadata"]["name"], "phase": p["status"]["phase"],
                         "restarts": restarts(p), "ready": pod_ready(p),
                         "images": p["spec"]["containers"].as_array().into_iter().flatten()
                             .map(|c| c["image"].clone()).collect::<Vec<_>>() })
        })
        .collect();
    let images: Vec<Value> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["image"].clone())
        .collect();
    format!(
        "images {images:?}, progressDeadlineSeconds {}, generation {}, status {:#}\nPods: {pods:#?}",
        d["spec"]["progressDeadlineSeconds"], d["metadata"]["generation"], d["status"]
    )
}

/// Drains the one node as `kubectl drain` does (cordon, then the Eviction API for every Pod
/// of the release and of the Gateway's namespace), reports what the Gateway's status says
/// while nothing runs, then uncordons it: the controller leads again, the LB Pod is Ready and
/// the Gateway is healthy without the note.
async fn drain_and_return(admin: &Client, node: &Value, controller: &str, ns: &str, lb: &str) {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::EvictParams;
    let drained = Instant::now();
    merge_patch(admin, node, json!({ "spec": { "unschedulable": true } })).await;
    for namespace in [RELEASE_NS, ns] {
        let pods = Api::<Pod>::namespaced(admin.clone(), namespace);
        for pod in pods.list(&Default::default()).await.expect("pods").items {
            let pod_name = pod.metadata.name.unwrap_or_default();
            pods.evict(&pod_name, &EvictParams::default())
                .await
                .unwrap_or_else(|e| panic!("evict {namespace}/{pod_name}: {e}"));
        }
    }
    until(WAIT, "no Pod of the release or the Gateway runs", || {
        let (admin, ns) = (admin.clone(), ns.to_owned());
        async move {
            let mut running = Vec::new();
            for namespace in [RELEASE_NS, ns.as_str()] {
                for p in list(&admin, "v1", "Pod", namespace, "").await {
                    if p["status"]["phase"] == "Running" {
                        running.push(name(&p).to_owned());
                    }
                }
            }
            if running.is_empty() {
                Ok(())
            } else {
                Err(format!("running: {running:?}"))
            }
        }
    })
    .await;
    let gw = gateway_of(admin, ns).await;
    let said: Vec<String> = gw["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{}={} ({})", c["type"], c["status"], c["message"]))
        .collect();
    eprintln!(
        "node drained after {:.1?}: no controller runs, the Gateway still says {said:?}",
        drained.elapsed()
    );
    let returned = Instant::now();
    merge_patch(admin, node, json!({ "spec": { "unschedulable": false } })).await;
    rolled_out(admin, RELEASE_NS, controller, 2, &node_logs).await;
    rolled_out(admin, ns, lb, 1, &node_logs).await;
    until(WAIT, "the Gateway healthy again, without the note", || {
        settled(admin, ns)
    })
    .await;
    eprintln!(
        "node uncordoned -> the controller and the LB Pod Ready, the Gateway healthy after {:.1?}",
        returned.elapsed()
    );
}

/// The claims of a JWT (its middle part, base64url without padding), as JSON.
fn jwt_claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap_or_default();
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut bytes = Vec::new();
    for c in payload.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => continue,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            bytes.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// The ServiceAccount token the controller's process sees (its mount namespace, from the
/// host).
fn process_token(pid: u32) -> String {
    std::fs::read_to_string(format!(
        "/proc/{pid}/root/var/run/secrets/kubernetes.io/serviceaccount/token"
    ))
    .unwrap_or_default()
}

/// The kubelet rotates a projected token by writing the new one into the Pod's volume, at
/// 80% of the old one's life: at least 48 minutes here, since the API server issues at
/// least an hour. The story does what the kubelet does, sooner: it writes a new token of
/// the same account, bound to the leader's Pod (the TokenRequest API), into the volume (in
/// the node's mount namespace), and waits until the audit log shows the leader's writes
/// authenticated by that token (its `jti`, the credential id the API server records).
async fn token_reread(admin: &Client, deployment_name: &str) {
    use k8s_openapi::api::authentication::v1::BoundObjectReference;
    let controller = get(admin, "apps/v1", "Deployment", RELEASE_NS, deployment_name).await;
    let pods = controller_pods(admin, &controller).await;
    let names: Vec<String> = pods.iter().map(|p| name(p).to_owned()).collect();
    let leader = leader_until(admin, "a Pod leads", |h| {
        names.iter().any(|n| h.starts_with(n.as_str()))
    })
    .await;
    let pod = pods
        .iter()
        .find(|p| leader.starts_with(name(p)))
        .expect("the leader's Pod");
    let account = pod["spec"]["serviceAccountName"]
        .as_str()
        .unwrap_or_default();
    let bound = BoundObjectReference {
        kind: Some("Pod".into()),
        api_version: Some("v1".into()),
        name: Some(name(pod).to_owned()),
        uid: pod["metadata"]["uid"].as_str().map(str::to_owned),
    };
    let token = service_account_token(admin, RELEASE_NS, account, Some(bound)).await;
    let jti = jwt_claims(&token)["jti"]
        .as_str()
        .expect("a jti claim")
        .to_owned();
    // The projected volume, as the kubelet mounted it (in the node's mount namespace).
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let volume = pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|v| {
            let n = v["name"].as_str()?;
            n.starts_with("kube-api-access-").then(|| n.to_owned())
        })
        .expect("the kube-api-access volume");
    let file = format!(
        "{}/node/kubelet/pods/{uid}/volumes/kubernetes.io~projected/{volume}/token",
        env("E2E_DIR")
    );
    let node_pid = env("E2E_NODE_PID");
    let mut write = std::process::Command::new("nsenter")
        .args([
            &format!("--mount=/proc/{node_pid}/ns/mnt"),
            "--",
            "sh",
            "-c",
        ])
        .arg("cat > \"$0.new\" && mv \"$0.new\" \"$(readlink -f \"$0\")\"")
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("nsenter");
    std::io::Write::write_all(&mut write.stdin.take().expect("stdin"), token.as_bytes())
        .expect("write the token");
    assert!(
        write.wait().expect("nsenter").success(),
        "cannot replace {file}"
    );
    let replaced = Instant::now();
    let pid = controller_process(pod).expect("the leader's process");
    assert_eq!(
        process_token(pid),
        token,
        "the process does not see the new token"
    );
    let credential = format!("JTI={jti}");
    until(
        Duration::from_secs(90),
        "the leader authenticated by the new token",
        || {
            let credential = credential.clone();
            async move {
                let log = std::fs::read_to_string(env("AUDIT_LOG")).unwrap_or_default();
                let used = log.lines().any(|line| {
                    line.contains(&credential)
                        && serde_json::from_str::<Value>(line).is_ok_and(|e| {
                            e["user"]["extra"]["authentication.kubernetes.io/credential-id"]
                                .as_array()
                                .is_some_and(|ids| ids.iter().any(|i| i == credential.as_str()))
                        })
                });
                if used {
                    Ok(())
                } else {
                    Err(format!("no request with {credential}"))
                }
            }
        },
    )
    .await;
    eprintln!(
        "the token replaced in the leader's volume -> its requests carry it after {:.1?}",
        replaced.elapsed()
    );
}
