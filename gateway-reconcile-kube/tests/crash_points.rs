//! Intermediate states at every write point (Sieve's method), on a real kube-apiserver:
//! `e2e/run.sh` runs them with the fault stories, one at a time. Each story plays one
//! scenario (a Gateway created; its GatewayConfiguration edited; an update rejected by a
//! validating webhook, then accepted once it lets updates through; its GatewayClass
//! pointed at another GatewayConfiguration) with the controller binary behind
//! `e2e-helper crash-proxy`, which forwards its requests as its own user and logs its
//! writes. A first run without a fault learns the scenario's writes (n of them); then,
//! for every k in 1..=n, the scenario runs again in a fresh namespace with the process
//! SIGKILLed right after the k-th write's answer reached it, and once with it killed just
//! before its first write is sent; a new process is started at once.
//!
//! Every run must end in the baseline's final state (the Gateway's conditions, addresses
//! and listeners but for times, the Deployment's labels, annotations, owners and spec);
//! the Deployment must be written (accepted) no more often than in the baseline; and no
//! status the Gateway held at any moment (its watch events, ordered against the
//! Deployment's by resourceVersion) may claim what the stored Deployment did not carry:
//! `Programmed` True naming a generation the Deployment's annotation does not hold, or
//! `ConfigurationApplied` True naming a GatewayConfiguration generation and uid it does
//! not carry.
//!
//! `CRASH_POINTS` bounds the points tried after the baseline (`all` by default; a number
//! takes the before point and the first N after points); `CRASH_POINTS_BEFORE=all` adds a
//! kill before each write, not only the first. Results: `docs/reliability.md`,
//! "Intermediate states (every write point)".

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

mod common;
use common::*;
// The refusing webhook, served on loopback.
use common::webhook as served_webhook;

/// The LB Deployment of Gateway `gw`.
const LB: &str = "sllbr-gw";
/// How long a run waits, once converged, for writes still to come (an Event after a
/// status, a kill at the last point) before it counts them.
const SETTLE: Duration = Duration::from_secs(2);

/// What a story plays.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scenario {
    /// A Gateway created while the controller runs.
    Created,
    /// Its GatewayConfiguration edited (replicas 2 to 3, enforced).
    Edited,
    /// The same edit, the Deployment update refused by a validating webhook (403)
    /// until the webhook lets updates through (the rejection retried at `resync`, 2 s).
    RejectedThenAccepted,
    /// Its GatewayClass's `parametersRef` moved from `conf` to `conf-b` (3 replicas,
    /// enforced): the Gateway names no parameters of its own.
    ClassEdited,
}

/// Where the controller is killed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    /// Right after the answer to its k-th write reached it.
    After(usize),
    /// Just before its k-th write is sent (the write never reaches the API server).
    Before(usize),
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Point::After(k) => write!(f, "after write {k}"),
            Point::Before(k) => write!(f, "before write {k}"),
        }
    }
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Created => "Gateway created",
            Scenario::Edited => "configuration edited",
            Scenario::RejectedThenAccepted => "update rejected, then accepted",
            Scenario::ClassEdited => "GatewayClass edited",
        }
    }

    /// The controller's flags besides `--leader-elect=false`: a 2 s resync where a
    /// rejection must be tried again soon after its cause is gone.
    fn flags(self, world: &World) -> Vec<String> {
        if self != Scenario::RejectedThenAccepted {
            return Vec::new();
        }
        let file = PathBuf::from(env("E2E_DIR")).join(format!("{}-settings.yaml", world.ns));
        std::fs::write(&file, "resync: 2s\n").expect("settings file");
        vec!["--settings".to_owned(), file.to_string_lossy().into_owned()]
    }

    /// The objects before the controller under test starts; where the scenario starts
    /// from a settled Gateway, a controller process (direct, not killed) settles it first.
    /// The refusing webhook, in force, where the scenario has one.
    async fn setup(self, world: &World, flags: &[&str]) -> Option<Refusal> {
        world.configuration("conf", 2).await;
        match self {
            Scenario::Created => return None,
            Scenario::Edited | Scenario::RejectedThenAccepted => {
                world.gateway("gw", "conf").await;
            }
            Scenario::ClassEdited => {
                world.configuration_of("conf-b", 3, true).await;
                world.point_class_at("conf").await;
                create(
                    &world.admin,
                    json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                        "metadata": { "name": "gw", "namespace": world.ns },
                        "spec": { "gatewayClassName": world.class,
                                  "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }] } }),
                )
                .await;
            }
        }
        let mut setup = Process::start(world, "setup", &env("E2E_CONTROLLER_KUBECONFIG"), flags);
        self.settled(world, 1, "conf", 2).await;
        // The class's status too, or the process under test would write it: a write the
        // scenario does not make.
        class_accepted(world).await;
        let status = setup.stop().await;
        assert!(status.success(), "{status}: {}", setup.log());
        if self != Scenario::RejectedThenAccepted {
            return None;
        }
        let refusal = Refusal::start(world).await;
        until_dry_run(world, true).await;
        Some(refusal)
    }

    /// What the scenario does while the controller under test runs.
    async fn act(self, world: &World, refusal: Option<&Refusal>) {
        match self {
            Scenario::Created => world.gateway("gw", "conf").await,
            Scenario::Edited => world.enforce_replicas(3).await,
            Scenario::RejectedThenAccepted => {
                world.enforce_replicas(3).await;
                world
                    .wait_conditions("gw", "ApplyRejected", |c| {
                        is(c, &applied(), "False", "ApplyRejected")
                    })
                    .await;
                // At once (a flag): the refused updates do not depend on how long admission
                // takes to follow a deleted policy.
                let refusal = refusal.expect("the refusing webhook");
                refusal.refusing.store(false, Ordering::SeqCst);
                until_dry_run(world, false).await;
            }
            Scenario::ClassEdited => world.point_class_at("conf-b").await,
        }
    }

    /// Waits until the scenario's end: the Gateway healthy, not Degraded, every condition
    /// for its generation, `configuration`'s generation applied, the Deployment's replicas.
    async fn settled(self, world: &World, generation: i64, configuration: &str, replicas: i64) {
        let wanted = format!(
            "GatewayConfiguration {}/{configuration} generation {generation} is applied",
            world.ns
        );
        let start = Instant::now();
        loop {
            let gateway = world.get_opt("Gateway", "gw").await.unwrap_or_default();
            let c = conditions(&gateway);
            let current = c
                .values()
                .filter(|c| c["type"] != "Degraded")
                .all(|c| c["observedGeneration"] == gateway["metadata"]["generation"]);
            let deployment = world.get_opt("Deployment", LB).await.unwrap_or_default();
            if healthy(&c)
                && !c.contains_key(&degraded())
                && current
                && c[&applied()]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&wanted))
                && deployment["spec"]["replicas"] == replicas
            {
                return;
            }
            assert!(
                start.elapsed() < WAIT,
                "{}: not settled in {WAIT:?}: {c:#?}\nreplicas {}",
                self.name(),
                deployment["spec"]["replicas"]
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// [`Scenario::settled`] at the scenario's end.
    async fn done(self, world: &World) {
        match self {
            Scenario::Created => self.settled(world, 1, "conf", 2).await,
            Scenario::Edited | Scenario::RejectedThenAccepted => {
                self.settled(world, 2, "conf", 3).await
            }
            Scenario::ClassEdited => self.settled(world, 1, "conf-b", 3).await,
        }
    }
}

/// Waits until the world's GatewayClass is Accepted for its generation, with its features.
async fn class_accepted(world: &World) {
    let classes = Api::<DynamicObject>::all_with(
        world.admin.clone(),
        &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
    );
    let start = Instant::now();
    loop {
        let class = serde_json::to_value(classes.get(&world.class).await.expect("the class"))
            .expect("json");
        let c = conditions(&class);
        if c.get("Accepted").is_some_and(|a| {
            a["status"] == "True" && a["observedGeneration"] == class["metadata"]["generation"]
        }) && class["status"]["supportedFeatures"].is_array()
        {
            return;
        }
        assert!(
            start.elapsed() < WAIT,
            "the class is not accepted: {class:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A validating webhook served on loopback that refuses (403) every Deployment update in
/// the world's namespace while `refusing` holds, and its configuration.
struct Refusal {
    refusing: Arc<AtomicBool>,
    /// Serves while held.
    _webhook: served_webhook::Webhook,
    configuration: Value,
}

impl Refusal {
    async fn start(world: &World) -> Refusal {
        let refusing = Arc::new(AtomicBool::new(true));
        let dir = env("E2E_DIR");
        let flag = refusing.clone();
        let webhook = served_webhook::hold(&dir, move |_| {
            let refused = flag.load(Ordering::SeqCst);
            (
                refused.then(|| "e2e: updates refused".to_owned()),
                Duration::ZERO,
            )
        })
        .await
        .expect("webhook");
        let configuration = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": { "name": format!("refuse-{}", world.ns) },
            "webhooks": [{ "name": "refuse.e2e.example", "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
                "clientConfig": { "url": webhook.url, "caBundle": served_webhook::ca_bundle(&dir).expect("CA") },
                "rules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments"] }],
                "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": world.ns } } }] });
        create(&world.admin, configuration.clone()).await;
        Refusal {
            refusing,
            _webhook: webhook,
            configuration,
        }
    }

    async fn delete(self, world: &World) {
        delete(&world.admin, &self.configuration).await;
    }
}

/// Waits until a dry-run update of the LB Deployment is refused by the webhook (`refused`)
/// or accepted: admission takes a moment to follow a webhook configuration's creation.
async fn until_dry_run(world: &World, refused: bool) {
    let dry_run = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let label = json!({ "metadata": { "labels": { "probe": "1" } } });
    let start = Instant::now();
    loop {
        let answer = world
            .api("Deployment")
            .patch(LB, &dry_run, &Patch::Merge(&label))
            .await;
        let is_refused = matches!(&answer, Err(kube::Error::Api(s))
            if s.message.contains("e2e: updates refused"));
        if is_refused == refused {
            return;
        }
        assert!(
            start.elapsed() < WAIT,
            "the webhook's refusal={refused} not in force: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What one run showed.
struct Run {
    writes: Vec<Write>,
    killed: bool,
    state: Value,
    false_claims: Vec<String>,
}

impl Run {
    fn deployment_writes(&self) -> usize {
        self.writes
            .iter()
            .filter(|w| w.deployment() && w.accepted())
            .count()
    }
}

/// The controller processes of a run: the first, and the one started once it was killed.
struct Processes {
    first: Process,
    second: Option<Process>,
}

/// Plays `scenario` once in a fresh namespace, through the proxy, killing the controller
/// at `point` and starting another at once.
async fn run(scenario: Scenario, point: Option<Point>) -> Run {
    let world = World::new("crash-").await;
    // Names the run a failing wait belongs to.
    eprintln!(
        "{} {}: namespace {}",
        scenario.name(),
        point.map_or("baseline".to_owned(), |p| p.to_string()),
        world.ns
    );
    let flags = scenario.flags(&world);
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.push("--leader-elect=false");
    let refusal = scenario.setup(&world, &flags).await;

    let recorder = Recorder::start(&world).await;
    let dir = PathBuf::from(env("E2E_DIR"));
    let pid_file = dir.join(format!("{}.pid", world.ns));
    let kill = point.map(|point| match point {
        Point::After(k) => (k, "after"),
        Point::Before(k) => (k, "before"),
    });
    let proxy = Proxy::start(
        kill,
        &pid_file,
        &dir.join(format!("{}-proxy.log", world.ns)),
        None,
    );
    let kubeconfig = kubeconfig_through(
        &env("E2E_CONTROLLER_KUBECONFIG"),
        proxy.port,
        &dir.join(format!("{}-proxy.kubeconfig", world.ns)),
    );
    let mut first = Process::start(&world, "first", &kubeconfig, &flags);
    std::fs::write(&pid_file, first.pid().to_string()).expect("pid file");
    // Ready before the scenario acts (it writes nothing before its caches are filled, so
    // no point is passed meanwhile), as the baseline's writes were learnt. Where the class's
    // status is the first write (a Gateway created), it follows the filled caches at once:
    // a kill at it may come before `/readyz` is seen, and the restarter carries on.
    if let Some(status) = first.ready_or_exited(WAIT).await {
        assert!(
            proxy.killed(Duration::from_secs(5)).await,
            "first exited ({status}) before it was ready, not killed; its log:\n{}",
            first.log()
        );
    }
    let processes = Arc::new(Mutex::new(Processes {
        first,
        second: None,
    }));

    // A new process as soon as the first is gone (as a Pod's container is restarted).
    let restarter = {
        let processes = processes.clone();
        let world = World {
            admin: world.admin.clone(),
            ns: world.ns.clone(),
            class: world.class.clone(),
        };
        let (kubeconfig, flags): (String, Vec<String>) = (
            kubeconfig.clone(),
            flags.iter().map(|f| (*f).to_owned()).collect(),
        );
        tokio::spawn(async move {
            loop {
                {
                    let mut p = processes.lock().expect("lock");
                    if p.second.is_none() && p.first.try_exited().is_some() {
                        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                        p.second = Some(Process::start(&world, "second", &kubeconfig, &flags));
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    scenario.act(&world, refusal.as_ref()).await;
    scenario.done(&world).await;
    tokio::time::sleep(SETTLE).await;
    if !proxy.writes().1 {
        restarter.abort();
    }
    // Killed: the restarter ends once it has started the second process.
    tokio::time::timeout(WAIT, restarter)
        .await
        .map_or_else(|_| panic!("no second process after the kill"), |_| ());
    let mut p = Arc::try_unwrap(processes)
        .ok()
        .expect("the restarter has ended")
        .into_inner()
        .expect("lock");
    if let Some(second) = &mut p.second {
        // The second process has had its chance to act on everything.
        second.ready(WAIT).await;
        scenario.done(&world).await;
        tokio::time::sleep(SETTLE).await;
    }
    let (writes, killed) = proxy.writes();
    let state = final_state(&world, "gw", LB).await;
    let false_claims = false_claims(
        &recorder.seen(),
        "gw",
        LB,
        &configuration_uids(&world).await,
    );
    drop(recorder);
    let running = p.second.as_mut().unwrap_or(&mut p.first);
    let status = running.stop().await;
    assert!(status.success(), "{status}: {}", running.log());
    drop(proxy);
    if let Some(refusal) = refusal {
        refusal.delete(&world).await;
    }
    // Another run's controller would judge this class (its parameters in a namespace it
    // does not watch) and write its status: the class goes with the run.
    Api::<DynamicObject>::all_with(
        world.admin.clone(),
        &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
    )
    .delete(&world.class, &Default::default())
    .await
    .expect("delete the GatewayClass");
    Run {
        writes,
        killed,
        state,
        false_claims,
    }
}

/// The top-level keys where two final states differ, with both values.
fn differences(baseline: &Value, run: &Value) -> String {
    let empty = serde_json::Map::new();
    let (a, b) = (
        baseline.as_object().unwrap_or(&empty),
        run.as_object().unwrap_or(&empty),
    );
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: baseline {} run {}", a[k.as_str()], b[k.as_str()]))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The points after the baseline's `n` writes: before the first, then after each
/// (`limit`, from `CRASH_POINTS`, keeps the first N after points); with `every_before`
/// (`CRASH_POINTS_BEFORE=all`), also before each later one.
fn points(n: usize, limit: Option<usize>, every_before: bool) -> Vec<Point> {
    let after = n.min(limit.unwrap_or(n));
    let before = if every_before { after.max(1) } else { 1 };
    (1..=before)
        .map(Point::Before)
        .chain((1..=after).map(Point::After))
        .collect()
}

/// The points of `n` writes as the environment asks (see [`points`]).
fn points_from_env(n: usize) -> Vec<Point> {
    let limit = match std::env::var("CRASH_POINTS").as_deref() {
        Ok("all") | Err(_) => None,
        Ok(text) => Some(text.parse().expect("CRASH_POINTS: all or a number")),
    };
    let every_before = std::env::var("CRASH_POINTS_BEFORE").as_deref() == Ok("all");
    points(n, limit, every_before)
}

/// The baseline, then a run killed at every point; fails with every violation found.
async fn every_point(scenario: Scenario) {
    let started = Instant::now();
    let baseline = run(scenario, None).await;
    let n = baseline.writes.len();
    eprintln!("{}: the baseline's {n} writes:", scenario.name());
    for (k, write) in baseline.writes.iter().enumerate() {
        eprintln!("  {}. {write}", k + 1);
    }
    let mut violations: Vec<String> = baseline
        .false_claims
        .iter()
        .map(|c| format!("baseline: {c}"))
        .collect();
    assert!(n > 0, "{}: the baseline wrote nothing", scenario.name());
    let points = points_from_env(n);
    let mut unreached = Vec::new();
    for &point in &points {
        let mut run = run(scenario, Some(point)).await;
        if !run.killed {
            // The writes are not quite the same from run to run (a retry more or less):
            // one more try to reach the point.
            run = self::run(scenario, Some(point)).await;
        }
        let writes: Vec<String> = run.writes.iter().map(ToString::to_string).collect();
        eprintln!("{} {point}: {}", scenario.name(), writes.join(", "));
        if !run.killed {
            unreached.push(point);
        }
        if run.state != baseline.state {
            violations.push(format!(
                "{point}: another final state: {}",
                differences(&baseline.state, &run.state)
            ));
        }
        if run.deployment_writes() > baseline.deployment_writes() {
            violations.push(format!(
                "{point}: the Deployment written {} times (the baseline: {}): {writes:?}",
                run.deployment_writes(),
                baseline.deployment_writes()
            ));
        }
        violations.extend(run.false_claims.iter().map(|c| format!("{point}: {c}")));
    }
    // The row of docs/reliability.md's table.
    eprintln!(
        "| {} | {n} | {} ({} not reached) | {} | {:.0} s |",
        scenario.name(),
        points.len(),
        unreached.len(),
        violations.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        violations.is_empty(),
        "{}: {} violations:\n{}",
        scenario.name(),
        violations.len(),
        violations.join("\n")
    );
    // A point past the run's writes proves nothing: the runs must repeat the baseline.
    assert!(
        unreached.is_empty(),
        "{}: points never reached (the run wrote less than the baseline): {unreached:?}",
        scenario.name()
    );
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_gateway_created_converges_from_a_kill_at_every_write() {
    every_point(Scenario::Created).await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_configuration_edit_converges_from_a_kill_at_every_write() {
    every_point(Scenario::Edited).await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_rejected_then_accepted_update_converges_from_a_kill_at_every_write() {
    every_point(Scenario::RejectedThenAccepted).await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_class_edit_converges_from_a_kill_at_every_write() {
    every_point(Scenario::ClassEdited).await;
}

// The checks themselves, without a control plane: a story that cannot fail proves nothing.

/// A Deployment event carrying `generation` of GatewayConfiguration uid `uid`.
fn deployment_seen(rv: u64, generation: i64, uid: &str) -> Seen {
    Seen {
        rv,
        kind: "Deployment",
        deleted: false,
        object: json!({ "metadata": { "name": LB, "annotations": {
            format!("{DOMAIN}/gatewayconfiguration-generation"): generation.to_string(),
            format!("{DOMAIN}/gatewayconfiguration-uid"): uid } } }),
    }
}

/// A Gateway event whose status claims `programmed` and `applied` (generation, of
/// GatewayConfiguration `conf`).
fn gateway_seen(rv: u64, programmed: i64, applied_generation: i64, conf: &str) -> Seen {
    Seen {
        rv,
        kind: "Gateway",
        deleted: false,
        object: json!({ "metadata": { "name": "gw" }, "status": { "conditions": [
            { "type": "Programmed", "status": "True", "reason": "Programmed",
              "message": format!("LB Deployment reconciled with GatewayConfiguration generation {programmed}") },
            { "type": applied(), "status": "True", "reason": "Applied",
              "message": format!("GatewayConfiguration ns/{conf} generation {applied_generation} is applied to Deployment ns/{LB}") },
        ] } }),
    }
}

#[test]
fn a_status_ahead_of_the_stored_deployment_is_a_false_claim() {
    let uids = BTreeMap::from([
        ("conf".to_owned(), "u1".to_owned()),
        ("conf-b".to_owned(), "u2".to_owned()),
    ]);
    // Truthful: the Deployment first, then the status that names what it carries.
    let truthful = [deployment_seen(10, 2, "u1"), gateway_seen(11, 2, 2, "conf")];
    assert!(false_claims(&truthful, "gw", LB, &uids).is_empty());
    // The two watches deliver in any order; by resourceVersion the Deployment (11) came
    // before the status (12) that describes it.
    let early = [
        deployment_seen(10, 1, "u1"),
        gateway_seen(12, 2, 2, "conf"),
        deployment_seen(11, 2, "u1"),
    ];
    let mut sorted = early.to_vec();
    sorted.sort_by_key(|s| s.rv);
    assert!(false_claims(&sorted, "gw", LB, &uids).is_empty());
    let ahead = [deployment_seen(10, 1, "u1"), gateway_seen(11, 2, 2, "conf")];
    assert_eq!(false_claims(&ahead, "gw", LB, &uids).len(), 2, "{ahead:?}");
    // The same generation of another GatewayConfiguration: told by the uid.
    let other = [
        deployment_seen(10, 1, "u1"),
        gateway_seen(11, 1, 1, "conf-b"),
    ];
    let found = false_claims(&other, "gw", LB, &uids);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("ConfigurationApplied"), "{found:?}");
    // Programmed with a Deployment another Gateway (an earlier one of the name) controls.
    let mut owned = deployment_seen(10, 1, "u1");
    owned.object["metadata"]["ownerReferences"] = json!([{ "uid": "g-old", "controller": true }]);
    let mut gateway = gateway_seen(11, 1, 1, "conf");
    gateway.object["metadata"]["uid"] = json!("g-new");
    let found = false_claims(&[owned.clone(), gateway.clone()], "gw", LB, &uids);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("controlled by"), "{found:?}");
    gateway.object["metadata"]["uid"] = json!("g-old");
    assert!(false_claims(&[owned, gateway], "gw", LB, &uids).is_empty());
    // Another Gateway's status is not this one's.
    let mut other_gateway = gateway_seen(11, 2, 2, "conf");
    other_gateway.object["metadata"]["name"] = json!("gw-other");
    assert!(
        false_claims(
            &[deployment_seen(10, 1, "u1"), other_gateway],
            "gw",
            LB,
            &uids
        )
        .is_empty()
    );
    // Programmed with no Deployment at all.
    let none = [gateway_seen(11, 1, 1, "conf")];
    assert_eq!(false_claims(&none, "gw", LB, &uids).len(), 2);
}

#[test]
fn the_points_are_before_the_first_write_and_after_each() {
    use Point::{After, Before};
    assert_eq!(
        points(3, None, false),
        [Before(1), After(1), After(2), After(3)]
    );
    assert_eq!(points(3, Some(1), false), [Before(1), After(1)]);
    assert_eq!(
        points(2, None, true),
        [Before(1), Before(2), After(1), After(2)]
    );
}
