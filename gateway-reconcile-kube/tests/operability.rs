//! Operability stories on a real kube-apiserver (`e2e/run.sh` runs them under the control
//! plane with `--ignored`): the controller binary itself, as an operator runs it, in one
//! or two processes. Leader election (a killed leader is replaced within the lease
//! duration plus a retry period; a stopped one writes nothing once resumed), the probes
//! and the cache sync timeout, `/metrics`, and the per-Gateway backoff (a refused status
//! write and a stale Gateway each make a logarithmic number of attempts in two minutes).
//!
//! The processes run as the user `gateway-reconcile-controller` (bound to
//! `deploy/clusterrole.yaml`, plus a Role on Leases in the story's namespace); the audit
//! log tells the two replicas apart by `userAgent`, which carries the leader identity.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

mod common;
use common::*;

/// The stories' lease timings (short, so that the stories are): a standby takes over at
/// most `LEASE + RETRY` after the leader's last renewal.
const LEASE: Duration = Duration::from_secs(6);
const RENEW: Duration = Duration::from_secs(4);
const RETRY: Duration = Duration::from_secs(1);

/// A story's world (see [`World::new`]) with a Role on Leases in its namespace (what the
/// chart's leader-election Role grants) and GatewayConfiguration `conf` (2 replicas).
async fn new_world() -> World {
    let world = World::new("op-").await;
    create(
        &world.admin,
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": { "name": "leases", "namespace": world.ns },
            "rules": [{ "apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                        "verbs": ["get", "create", "update"] }] }),
    )
    .await;
    create(
        &world.admin,
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": "leases", "namespace": world.ns },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "leases" },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": CONTROLLER_USER }] }),
    )
    .await;
    world.configuration("conf", 2).await;
    world
}

impl World {
    /// The Lease's holder.
    async fn holder(&self) -> Option<String> {
        let lease = self.get_opt("Lease", "ha").await?;
        lease["spec"]["holderIdentity"].as_str().map(str::to_owned)
    }

    async fn wait_holder(&self, prefix: &str, limit: Duration) -> Duration {
        let start = Instant::now();
        loop {
            if self.holder().await.is_some_and(|h| h.starts_with(prefix)) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < limit,
                "{prefix} does not hold the lease after {limit:?} (holder: {:?})",
                self.holder().await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Starts the controller binary as `name` (its Pod name: the identity's prefix) in
/// `world`'s namespace, with `kubeconfig`, the stories' lease timings and `extra` flags.
fn replica(world: &World, name: &str, kubeconfig: &str, extra: &[&str]) -> Process {
    let lease = |d: Duration| format!("{}ms", d.as_millis());
    let timings = [
        ("--leader-elect-lease-duration", lease(LEASE)),
        ("--leader-elect-renew-deadline", lease(RENEW)),
        ("--leader-elect-retry-period", lease(RETRY)),
    ];
    let mut flags = vec![
        "--leader-election-namespace",
        &world.ns,
        "--leader-election-id",
        "ha",
    ];
    for (flag, value) in &timings {
        flags.extend([*flag, value.as_str()]);
    }
    flags.extend(extra);
    Process::start(world, name, kubeconfig, &flags)
}

/// Polls `addr` `path` until it answers `code`; the body.
async fn wait_http(addr: SocketAddr, path: &str, code: u16, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        let answer = http_get(addr, path);
        if let Some((c, body)) = &answer
            && *c == code
        {
            return body.clone();
        }
        assert!(
            start.elapsed() < limit,
            "{path} on {addr} did not answer {code} in {limit:?}: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The value of the sample `line` (name and labels as printed) in a metrics text.
fn sample(text: &str, line: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(line)?.strip_prefix(' ')?.parse().ok())
}

/// The requests of the process whose identity starts with `name`.
fn by(requests: &[Audited], name: &str) -> Vec<Audited> {
    let marker = format!("({name}_");
    requests
        .iter()
        .filter(|a| a.agent.contains(&marker))
        .cloned()
        .collect()
}

/// No Event recorded twice (same Gateway, reason and note) by two instances.
async fn no_duplicate_events(world: &World) -> usize {
    let events = world
        .api("Event")
        .list(&Default::default())
        .await
        .expect("events");
    let mut seen: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for event in &events.items {
        let e = serde_json::to_value(event).expect("json");
        let key = (
            e["regarding"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            e["reason"].as_str().unwrap_or_default().to_owned(),
            e["note"].as_str().unwrap_or_default().to_owned(),
        );
        seen.entry(key).or_default().insert(
            e["reportingInstance"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    for (key, instances) in &seen {
        assert_eq!(instances.len(), 1, "{key:?} recorded by {instances:?}");
    }
    events.items.len()
}

/// Starts replica `a`, waits until it holds the Lease, then starts `b` (so the leader is
/// known), and waits until Gateway `gw-1` is healthy.
async fn two_replicas(world: &World) -> (Process, Process) {
    let kubeconfig = env("E2E_CONTROLLER_KUBECONFIG");
    let a = replica(world, "ha-a", &kubeconfig, &[]);
    world.wait_holder("ha-a_", WAIT).await;
    let b = replica(world, "ha-b", &kubeconfig, &[]);
    world.gateway("gw-1", "conf").await;
    world.wait_conditions("gw-1", "healthy", healthy).await;
    // The standby is ready (warm caches) and reports itself as such.
    wait_http(b.health, "/readyz", 200, WAIT).await;
    let metrics = wait_http(b.metrics, "/metrics", 200, WAIT).await;
    assert_eq!(
        sample(&metrics, "gateway_reconcile_leader"),
        Some(0.0),
        "{metrics}"
    );
    let metrics = wait_http(a.metrics, "/metrics", 200, WAIT).await;
    assert_eq!(
        sample(&metrics, "gateway_reconcile_leader"),
        Some(1.0),
        "{metrics}"
    );
    (a, b)
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_killed_leader_is_replaced_within_the_lease_duration_and_a_retry_period() {
    let world = new_world().await;
    let (mut a, mut b) = two_replicas(&world).await;
    // The standby wrote nothing, not even to the Lease.
    let before_kill = audit(&world.ns);
    let standby_writes: Vec<_> = by(&before_kill, "ha-b")
        .into_iter()
        .filter(is_write)
        .collect();
    assert!(standby_writes.is_empty(), "{standby_writes:#?}");
    assert!(
        !by(&before_kill, "ha-a").is_empty(),
        "the audit log tells the replicas apart"
    );

    a.signal("-KILL");
    let took = world.wait_holder("ha-b_", WAIT).await;
    eprintln!("SIGKILL of the leader: the standby holds the lease {took:?} later");
    // Within lease duration + retry period, and a little for a loaded machine.
    assert!(
        took <= LEASE + RETRY + Duration::from_millis(500),
        "took over after {took:?}"
    );
    // The new leader reconciles: a new Gateway becomes healthy.
    world.gateway("gw-2", "conf").await;
    world.wait_conditions("gw-2", "healthy", healthy).await;
    let events = no_duplicate_events(&world).await;
    assert!(events > 0);
    assert!(b.stop().await.success(), "{}", b.log());
    assert!(!a.exited(Duration::from_secs(5)).await.success());
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_stopped_leader_writes_nothing_once_resumed_and_exits() {
    let world = new_world().await;
    let (mut a, mut b) = two_replicas(&world).await;

    a.signal("-STOP");
    let stopped = Instant::now();
    // Work the leader would do: the configuration now enforces 3 replicas.
    world
        .api("GatewayConfiguration")
        .patch(
            "conf",
            &PatchParams::default(),
            &Patch::Merge(&json!({ "spec": { "horizontalScaling": { "replicas": 3, "enforceReplicas": true } } })),
        )
        .await
        .expect("patch");
    let took = world.wait_holder("ha-b_", WAIT).await;
    eprintln!("SIGSTOP of the leader: the standby holds the lease {took:?} later");
    // The new leader carries the edit.
    let start = Instant::now();
    while world
        .get_opt("Deployment", "sllbr-gw-1")
        .await
        .is_none_or(|d| d["spec"]["replicas"] != 3)
    {
        assert!(
            start.elapsed() < WAIT,
            "the new leader did not update the Deployment"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    world.wait_conditions("gw-1", "healthy", healthy).await;
    // Stopped well past its lease, then resumed.
    tokio::time::sleep((LEASE + RETRY).saturating_sub(stopped.elapsed())).await;
    a.signal("-CONT");
    let status = a.exited(Duration::from_secs(20)).await;
    assert!(!status.success(), "{}", a.log());
    assert!(a.log().contains("leader election lost"), "{}", a.log());

    let requests = audit(&world.ns);
    let first_new = by(&requests, "ha-b")
        .into_iter()
        .filter(is_write)
        .map(|w| w.at)
        .min()
        .expect("the new leader wrote");
    let late: Vec<_> = by(&requests, "ha-a")
        .into_iter()
        .filter(|w| is_write(w) && w.at >= first_new)
        .collect();
    assert!(
        late.is_empty(),
        "the old leader wrote after the new one: {late:#?}"
    );
    no_duplicate_events(&world).await;
    assert!(b.stop().await.success(), "{}", b.log());
}

/// An impersonating copy of the admin kubeconfig: the binary runs as `user`.
fn kubeconfig_as(user: &str, dir: &str) -> String {
    let mut config: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(env("KUBECONFIG")).expect("kubeconfig"))
            .expect("yaml");
    for entry in config["users"].as_array_mut().into_iter().flatten() {
        entry["user"]["as"] = json!(user);
    }
    let path = format!("{dir}/kubeconfig-{user}");
    std::fs::write(&path, serde_yaml_ng::to_string(&config).expect("yaml")).expect("write");
    path
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_cache_that_cannot_sync_stops_the_process_naming_the_resource() {
    let world = new_world().await;
    let user = format!("op-no-routes-{}", world.ns);
    let mut role: Value =
        serde_yaml_ng::from_str(include_str!("../deploy/clusterrole.yaml")).expect("role");
    role["metadata"]["name"] = json!(user);
    if let Some(rules) = role["rules"].as_array_mut() {
        for rule in rules {
            if let Some(resources) = rule["resources"].as_array_mut() {
                resources.retain(|r| r != "l34routes");
            }
        }
    }
    create(&world.admin, role).await;
    create(
        &world.admin,
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": { "name": user },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user }] }),
    )
    .await;
    let kubeconfig = kubeconfig_as(&user, &env("E2E_DIR"));
    let started = Instant::now();
    let mut p = replica(
        &world,
        "no-routes",
        &kubeconfig,
        // Long enough that the other caches sync on a loaded machine too.
        &["--leader-elect=false", "--cache-sync-timeout", "15s"],
    );
    wait_http(p.health, "/healthz", 200, WAIT).await;
    let waiting = wait_http(p.health, "/readyz", 503, WAIT).await;
    assert!(waiting.contains("L34Route"), "{waiting}");
    let status = p.exited(Duration::from_secs(40)).await;
    let took = started.elapsed();
    let log = p.log();
    assert!(!status.success(), "{log}");
    assert!(took >= Duration::from_secs(15), "{took:?}");
    let last = log
        .lines()
        .find(|l| l.contains("caches not synced"))
        .unwrap_or_default();
    assert!(
        last.contains("caches not synced within 15s: L34Route (last watch error:")
            && last.contains("forbidden"),
        "{log}"
    );
    assert!(
        !last.contains("Gateway ("),
        "only the unsynced cache is named: {last}"
    );
    eprintln!("exit after {took:?}: {last}");
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn ready_after_sync_and_metrics_count_the_gateways() {
    let world = new_world().await;
    let mut p = replica(
        &world,
        "single",
        &env("E2E_CONTROLLER_KUBECONFIG"),
        &["--leader-elect=false"],
    );
    wait_http(p.health, "/readyz", 200, WAIT).await;
    world.gateway("gw-1", "conf").await;
    world.gateway("gw-2", "conf").await;
    world.wait_conditions("gw-1", "healthy", healthy).await;
    world.wait_conditions("gw-2", "healthy", healthy).await;
    let text = wait_http(p.metrics, "/metrics", 200, WAIT).await;
    let ns = &world.ns;
    for (line, value) in [
        (r#"gateway_reconcile_gateways{condition="Programmed",status="True"}"#.to_owned(), 2.0),
        (r#"gateway_reconcile_gateways{condition="ConfigurationApplied",status="True"}"#.to_owned(), 2.0),
        (r#"gateway_reconcile_gateways{condition="Degraded",status="True"}"#.to_owned(), 0.0),
        (format!(r#"gateway_reconcile_gateway_condition{{namespace="{ns}",gateway="gw-1",condition="ConfigurationApplied",status="True"}}"#), 1.0),
        (r#"gateway_reconcile_cached_objects{kind="Gateway"}"#.to_owned(), 2.0),
        (r#"gateway_reconcile_deployment_writes_total{verb="create",outcome="applied"}"#.to_owned(), 2.0),
        (r#"gateway_reconcile_api_requests_total{verb="create",resource="deployments",code="201"}"#.to_owned(), 2.0),
        ("gateway_reconcile_leader".to_owned(), 1.0),
    ] {
        assert_eq!(sample(&text, &line), Some(value), "{line} in\n{text}");
    }
    assert!(
        sample(
            &text,
            r#"gateway_reconcile_status_writes_total{result="written"}"#
        ) >= Some(2.0),
        "{text}"
    );
    // A Gateway that goes leaves the metrics.
    world
        .api("Gateway")
        .delete("gw-2", &Default::default())
        .await
        .expect("delete");
    let start = Instant::now();
    loop {
        let text = wait_http(p.metrics, "/metrics", 200, WAIT).await;
        if !text.contains(r#"gateway="gw-2""#) {
            assert_eq!(
                sample(
                    &text,
                    r#"gateway_reconcile_gateways{condition="Programmed",status="True"}"#
                ),
                Some(1.0)
            );
            break;
        }
        assert!(start.elapsed() < WAIT, "gw-2 stays in the metrics");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(p.stop().await.success(), "{}", p.log());
}

/// How long the backoff stories watch.
const WATCH: Duration = Duration::from_secs(120);

/// The gaps between successive instants.
fn gaps(times: &[jiff::Timestamp]) -> Vec<Duration> {
    times
        .windows(2)
        .map(|w| Duration::try_from(w[1].duration_since(w[0])).unwrap_or_default())
        .collect()
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_status_write_refused_for_two_minutes_is_tried_a_logarithmic_number_of_times() {
    let world = new_world().await;
    // Every status write to a Gateway of the namespace is refused.
    let name = format!("refuse-status-{}", world.ns);
    create(
        &world.admin,
        json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": { "name": name },
            "spec": { "failurePolicy": "Fail",
                "matchConstraints": { "resourceRules": [{ "apiGroups": ["gateway.networking.k8s.io"],
                    "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["gateways/status"] }] },
                "validations": [{ "expression": "false", "message": "e2e: status refused", "reason": "Forbidden" }] } }),
    )
    .await;
    create(
        &world.admin,
        json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": { "name": name },
            "spec": { "policyName": name, "validationActions": ["Deny"],
                "matchResources": { "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": world.ns } } } } }),
    )
    .await;
    // Until the policy is in force (a dry-run status write of a probe Gateway is refused).
    world.gateway("probe", "conf").await;
    let start = Instant::now();
    loop {
        let refused = world
            .api("Gateway")
            .patch_status(
                "probe",
                &PatchParams {
                    dry_run: true,
                    ..Default::default()
                },
                &Patch::Merge(&json!({ "status": { "addresses": [{ "value": "10.0.0.1" }] } })),
            )
            .await
            .is_err();
        if refused {
            break;
        }
        assert!(start.elapsed() < WAIT, "the policy never came into force");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    world
        .api("Gateway")
        .delete("probe", &Default::default())
        .await
        .expect("delete");

    let mut p = replica(
        &world,
        "refused",
        &env("E2E_CONTROLLER_KUBECONFIG"),
        &["--leader-elect=false"],
    );
    wait_http(p.health, "/readyz", 200, WAIT).await;
    world.gateway("gw", "conf").await;
    tokio::time::sleep(WATCH).await;
    let text = wait_http(p.metrics, "/metrics", 200, WAIT).await;
    assert!(p.stop().await.success(), "{}", p.log());

    let tries: Vec<jiff::Timestamp> = audit(&world.ns)
        .into_iter()
        .filter(|a| {
            a.user == CONTROLLER_USER
                && a.verb == "patch"
                && a.subresource == "status"
                && a.name == "gw"
        })
        .map(|a| {
            assert_ne!(a.code / 100, 2, "the status write went through");
            a.at
        })
        .collect();
    let gaps = gaps(&tries);
    eprintln!(
        "{} refused status writes in {WATCH:?}; gaps {gaps:?}",
        tries.len()
    );
    // 5 ms doubling: log2(120 s / 5 ms) = 14.6, so about 15 (each try is sent once: the
    // client repeats only 429, 503, 504). A 5-second retry would make 24, a zero one
    // thousands.
    assert!(
        (10..=18).contains(&tries.len()),
        "{} tries: {gaps:?}",
        tries.len()
    );
    let last = gaps.last().copied().unwrap_or_default();
    assert!(
        last >= Duration::from_secs(15),
        "the last gap is {last:?}: {gaps:?}"
    );
    assert_eq!(
        sample(
            &text,
            r#"gateway_reconcile_status_writes_total{result="failed"}"#
        ),
        Some(tries.len() as f64),
        "{text}"
    );
    assert_eq!(
        sample(&text, "gateway_reconcile_backoff_gateways"),
        Some(1.0),
        "{text}"
    );
    // The Deployment was created once and left alone.
    let deployment_writes = audit(&world.ns)
        .into_iter()
        .filter(|a| a.user == CONTROLLER_USER && a.resource == "deployments" && is_write(a))
        .count();
    assert_eq!(deployment_writes, 1);
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_gateway_with_a_future_observed_generation_is_retried_a_logarithmic_number_of_times() {
    let world = new_world().await;
    world.gateway("gw", "conf").await;
    // Owned conditions written for generation 5 of a Gateway at generation 1: the cache
    // looks stale to the core, which asks to look again at once and writes nothing.
    let now = jiff::Timestamp::now().to_string();
    let condition = |type_: &str, reason: &str| {
        json!({ "type": type_, "status": "True", "reason": reason, "message": "from the future",
                "observedGeneration": 5, "lastTransitionTime": now })
    };
    world
        .api("Gateway")
        .patch_status(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": { "conditions": [
                condition("Accepted", "Accepted"),
                condition("Programmed", "Programmed"),
                condition(&format!("{DOMAIN}/ConfigurationApplied"), "Applied"),
            ] } })),
        )
        .await
        .expect("status");

    let mut p = replica(
        &world,
        "stale",
        &env("E2E_CONTROLLER_KUBECONFIG"),
        &["--leader-elect=false"],
    );
    wait_http(p.health, "/readyz", 200, WAIT).await;
    tokio::time::sleep(WATCH).await;
    let text = wait_http(p.metrics, "/metrics", 200, WAIT).await;
    assert!(p.stop().await.success(), "{}", p.log());

    let reconciles = sample(
        &text,
        r#"gateway_reconcile_reconciles_total{result="success"}"#,
    )
    .unwrap_or_default();
    let backoffs =
        sample(&text, r#"gateway_reconcile_requeues_total{kind="backoff"}"#).unwrap_or_default();
    eprintln!("stale Gateway: {reconciles} reconciles in {WATCH:?}");
    // Each reconcile asks for "at once": 5 ms doubling gives about 15 in two minutes.
    assert!(
        (10.0..=18.0).contains(&reconciles),
        "{reconciles} reconciles\n{text}"
    );
    assert_eq!(backoffs, reconciles, "{text}");
    // And it made no request at all: no write, no read beyond the watches.
    let requests: Vec<_> = audit(&world.ns)
        .into_iter()
        .filter(|a| a.user == CONTROLLER_USER && a.verb != "list" && a.verb != "watch")
        .collect();
    assert!(requests.is_empty(), "{requests:#?}");
    assert!(world.get_opt("Deployment", "sllbr-gw").await.is_none());
}
