//! The scenario files of `tests/scenarios/` on a real kube-apiserver (`e2e/run.sh` runs
//! this with `--ignored`): the same files, the same expectations, real verbs. A scenario
//! a real server cannot reproduce is skipped with the reason, never passed. The
//! expectations on stored objects (`deployment`, and revision 5's `listeners` and
//! `gatewayClassFeatures`) are checked on the objects the server holds: the runner reads
//! them through the backend (`Real::read`, a GET as the admin, in the file's names).

mod common;
mod replay {
    pub mod backend;
    pub mod schedules;
    mod sequences;
}

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gateway_reconcile::Settings;
use gateway_reconcile::WriteOutcome;
use gateway_reconcile::sim::cluster::{Kind, Objects, ReconcileReport, RolloutState};
use gateway_reconcile::sim::scenario::{
    Backend, Report, Scenario, StaleReads, StepError, Verb, WriteCounts,
};
use jiff::Timestamp;
use kube::Client;
use replay::backend::Real;
use serde_json::Value;

/// How long one scenario file may take on the real server before it is reported as failed
/// (with the step it was in) and the run goes on with the next file. A file takes a few
/// seconds (each `failWrites` waits for admission to start and to stop applying); 60 s
/// leaves room for a loaded machine and still ends a stuck run.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);
/// [`SCENARIO_TIMEOUT`], or `REPLAY_SCENARIO_TIMEOUT` seconds when set (to see the bound
/// act: a few seconds make the files with `failWrites` run out of time).
fn scenario_timeout() -> Duration {
    std::env::var("REPLAY_SCENARIO_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(SCENARIO_TIMEOUT, Duration::from_secs)
}

/// How long one API request may take (the clients' read timeout), so that no request can
/// hold a scenario: far below [`SCENARIO_TIMEOUT`].
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run under e2e/run.sh"))
}

struct World {
    rt: Arc<tokio::runtime::Runtime>,
    admin: Client,
    controller: Client,
}

fn world() -> World {
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime"),
    );
    // The controller's client without kube's default retry layer, which retries a 429, 503
    // or 504 up to 15 times with a backoff of 5 ms doubling up to 1000 s: a write the
    // scenario makes fail with a 503 was sent 16 times over several minutes (what made the
    // replay hang), where the scenario means one write and the core's own answer to it.
    // The admin's requests keep it (admission never concerns them). Both read with a
    // timeout, so that no request can hold a scenario.
    let configure = |mut config: kube::Config, retry: bool| {
        config.default_retry = retry;
        config.read_timeout = Some(REQUEST_TIMEOUT);
        config.write_timeout = Some(REQUEST_TIMEOUT);
        Client::try_from(config).expect("client")
    };
    let (admin, controller) = rt.block_on(async {
        let admin = configure(kube::Config::infer().await.expect("admin config"), true);
        bind_rbac(&admin).await;
        let kubeconfig = kube::config::Kubeconfig::read_from(env("E2E_CONTROLLER_KUBECONFIG"))
            .expect("controller kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("controller config");
        let controller = configure(config, false);
        await_storage(&controller).await;
        (admin, controller)
    });
    World {
        rt,
        admin,
        controller,
    }
}

/// Waits until the controller can list what it reads: right after the CRDs are
/// established, the API server answers 429 `storage is (re)initializing` for a moment,
/// which kube's default retry hid and the controller's client, without it, would report
/// as a write failure the scenario did not ask for.
async fn await_storage(controller: &Client) {
    use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
    let resources = [
        ("gateway.networking.k8s.io", "v1", "Gateway", "gateways"),
        (
            "gateway.networking.k8s.io",
            "v1",
            "GatewayClass",
            "gatewayclasses",
        ),
        (
            "meridio-2.nordix.org",
            "v1alpha1",
            "GatewayConfiguration",
            "gatewayconfigurations",
        ),
        ("meridio-2.nordix.org", "v1alpha1", "L34Route", "l34routes"),
        ("apps", "v1", "Deployment", "deployments"),
    ];
    let start = std::time::Instant::now();
    for (group, version, kind, plural) in resources {
        let ar =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
        let api: Api<DynamicObject> = Api::all_with(controller.clone(), &ar);
        loop {
            match api.list(&ListParams::default().limit(1)).await {
                Ok(_) => break,
                Err(e) if start.elapsed() < SCENARIO_TIMEOUT => {
                    eprintln!("replay: waiting to list {plural}: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => panic!("the controller cannot list {plural}: {e}"),
            }
        }
    }
}

/// Binds `deploy/clusterrole.yaml` to the controller's user.
async fn bind_rbac(admin: &Client) {
    use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
    let role: serde_json::Value =
        serde_yaml_ng::from_str(include_str!("../deploy/clusterrole.yaml")).expect("role");
    // The replay reads with GETs where the controller reads its watch caches.
    let gets = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": { "name": "gateway-reconcile-replay-get" },
        "rules": [
            { "apiGroups": ["gateway.networking.k8s.io"], "resources": ["gateways", "gatewayclasses"], "verbs": ["get"] },
            { "apiGroups": ["meridio-2.nordix.org"], "resources": ["gatewayconfigurations"], "verbs": ["get"] },
            { "apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"] },
            { "apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"] }
        ]
    });
    let binding = |name: &str, role: &serde_json::Value| {
        serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": { "name": name },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": role["metadata"]["name"] },
            "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                           "name": replay::backend::CONTROLLER_USER }]
        })
    };
    let role_binding = binding("gateway-reconcile-controller-replay", &role);
    let gets_binding = binding("gateway-reconcile-replay-get", &gets);
    for (object, kind, plural) in [
        (role, "ClusterRole", "clusterroles"),
        (role_binding, "ClusterRoleBinding", "clusterrolebindings"),
        (gets, "ClusterRole", "clusterroles"),
        (gets_binding, "ClusterRoleBinding", "clusterrolebindings"),
    ] {
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind),
            plural,
        );
        let api: Api<DynamicObject> = Api::all_with(admin.clone(), &ar);
        let object: DynamicObject = serde_json::from_value(object).expect("rbac");
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("RBAC: {e}"),
        }
    }
}

fn scenario_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/scenarios")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The scenario file at `path`, and a real backend that creates its routes as the file
/// writes them.
fn load(world: &World, path: &std::path::Path) -> (Scenario, Real) {
    let text = std::fs::read_to_string(path).expect("scenario");
    let scenario = Scenario::from_json(&text).expect("a well-formed scenario");
    let raw: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let routes = raw["objects"]["routes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let backend = Real::new(
        world.rt.clone(),
        world.admin.clone(),
        world.controller.clone(),
    )
    .with_routes(routes);
    (scenario, backend)
}

/// Every condition message the scenario's expectations give exactly, with the number of
/// `failWrites` steps before the expectation (a failure can only show in the messages
/// expected after it).
fn exact_messages(scenario: &Scenario) -> Vec<(u32, String)> {
    let mut failures = 0;
    let mut messages = Vec::new();
    for step in &scenario.steps {
        match &step.verb {
            Verb::FailWrites { .. } => failures += 1,
            Verb::Reconcile(expect) => messages.extend(
                expect
                    .conditions
                    .iter()
                    .filter_map(|(_, condition)| condition.as_ref()?.message.clone())
                    .map(|message| (failures, message)),
            ),
            _ => {}
        }
    }
    messages
}

/// Every `messageContains` part the scenario's expectations give, with the number of
/// `failWrites` steps before the expectation.
fn message_parts(scenario: &Scenario) -> Vec<(u32, String)> {
    let mut failures = 0;
    let mut parts = Vec::new();
    for step in &scenario.steps {
        match &step.verb {
            Verb::FailWrites { .. } => failures += 1,
            Verb::Reconcile(expect) => parts.extend(
                expect
                    .conditions
                    .iter()
                    .filter_map(|(_, condition)| condition.as_ref())
                    .flat_map(|condition| condition.message_contains.iter().cloned())
                    .map(|part| (failures, part)),
            ),
            _ => {}
        }
    }
    parts
}

/// Scenarios whose real-server run differs from the simulator for a reason recorded in
/// `docs/real-server-differences.md`; any other failure fails the test.
const KNOWN_DIFFERENCES: &[&str] = &[];

/// A backend that keeps, for whoever watches the run, the step its current operation
/// belongs to: the runner calls the backend once per step (a patch step once per object;
/// reads, which a reconcile step may add, are not counted), in the order of the steps.
struct Tracked<B> {
    inner: B,
    /// Each step's verb and how many backend operations it makes (0 for `advance`).
    steps: Vec<(&'static str, usize)>,
    /// The current step (0: the objects) and the operations of it seen so far.
    at: (usize, usize),
    progress: Arc<Mutex<String>>,
    /// The step of every operation but `create` and `read`, in order.
    history: Vec<usize>,
}

/// How many tracked backend operations a step makes: none for `advance`, one per object
/// for `patch`, one otherwise.
fn operations(verb: &Verb) -> usize {
    match verb {
        Verb::Advance(_) => 0,
        Verb::Patch(patches) => patches.len(),
        _ => 1,
    }
}

impl<B> Tracked<B> {
    fn new(inner: B, scenario: &Scenario, progress: Arc<Mutex<String>>) -> Self {
        let steps = scenario
            .steps
            .iter()
            .map(|step| (step.verb.name(), operations(&step.verb)))
            .collect();
        Tracked {
            inner,
            steps,
            at: (0, 0),
            progress,
            history: Vec::new(),
        }
    }

    /// Notes an operation of `verb`: the current step's next one, or the next step of
    /// that verb.
    fn enter(&mut self, verb: &str) {
        let (step, seen) = self.at;
        let current = step
            .checked_sub(1)
            .and_then(|i| self.steps.get(i))
            .is_some_and(|(name, calls)| *name == verb && seen < *calls);
        self.at = if current {
            (step, seen + 1)
        } else {
            match self.steps[step.min(self.steps.len())..]
                .iter()
                .position(|(name, calls)| *name == verb && *calls > 0)
            {
                Some(i) => (step + i + 1, 1),
                None => (step, seen),
            }
        };
        self.history.push(self.at.0);
        if let Ok(mut progress) = self.progress.lock() {
            *progress = format!("step {} ({verb})", self.at.0);
        }
    }
}

impl<B: Backend> Backend for Tracked<B> {
    type Error = B::Error;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        if let Ok(mut progress) = self.progress.lock() {
            *progress = "step 0 (objects)".into();
        }
        self.inner.create(settings, objects, now)
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<B::Error>> {
        self.enter("reconcile");
        self.inner.reconcile(now)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter("patch");
        self.inner.patch(kind, patch, now)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter("delete");
        self.inner.delete(kind, now)
    }

    fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter("rollout");
        self.inner.rollout(state, now)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<B::Error>> {
        self.enter("failWrites");
        self.inner.fail_writes(count, outcome)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter("mutateWrites");
        self.inner.mutate_writes(patch, now)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter("restart");
        self.inner.restart(now)
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter("unreadable");
        self.inner.unreadable(kind, patch, now)
    }

    fn snapshot(&mut self, name: &str, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter("snapshot");
        self.inner.snapshot(name, now)
    }

    fn stale_reads(
        &mut self,
        reads: Option<&StaleReads>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter(if reads.is_some() {
            "staleReads"
        } else {
            "catchUp"
        });
        self.inner.stale_reads(reads, now)
    }

    fn recreate(
        &mut self,
        kind: Kind,
        object: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter("recreate");
        self.inner.recreate(kind, object, now)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<B::Error>> {
        self.inner.read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        self.inner.write_counts()
    }
}

/// The step a timed-out scenario is reported in: every operation of every file, run on
/// the simulator, is attributed to its own step (a patch step's objects to that step).
#[test]
fn each_operation_is_attributed_to_its_step() {
    use gateway_reconcile::sim::cluster::Cluster;
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).expect("scenario");
        let scenario = Scenario::from_json(&text).expect("a well-formed scenario");
        let expected: Vec<usize> = scenario
            .steps
            .iter()
            .enumerate()
            .flat_map(|(i, step)| std::iter::repeat_n(i + 1, operations(&step.verb)))
            .collect();
        let progress = Arc::new(Mutex::new(String::new()));
        let mut cluster = Cluster::default();
        let mut tracked = Tracked::new(&mut cluster, &scenario, progress.clone());
        let report = scenario.run_on(&mut tracked);
        assert!(report.passed(), "{}", path.display());
        assert_eq!(tracked.history, expected, "{}", path.display());
        let last = expected.last().copied().unwrap_or(0);
        if last > 0 {
            let shown = progress.lock().map(|p| p.clone()).unwrap_or_default();
            assert!(shown.starts_with(&format!("step {last} (")), "{shown}");
        }
    }
}

/// Runs `scenario` on `backend` in a thread of its own, for at most [`scenario_timeout`]:
/// the report, or where the run was when the time was up. The backend cleans up after
/// itself; on a timeout it is cancelled (its next operation fails at once) and the
/// scenarios' admission objects are removed here.
fn run_bounded(world: &World, scenario: Scenario, backend: Real) -> Result<Report, String> {
    let progress = Arc::new(Mutex::new("before the objects".to_owned()));
    let cancel = backend.cancel_flag();
    let (send, receive) = std::sync::mpsc::channel();
    let watched = progress.clone();
    std::thread::spawn(move || {
        let mut backend = backend;
        let report = scenario.run_on(Tracked::new(&mut backend, &scenario, watched));
        backend.clean_up();
        let _ = send.send(report);
    });
    let timeout = scenario_timeout();
    match receive.recv_timeout(timeout) {
        Ok(report) => Ok(report),
        Err(_) => {
            cancel.store(true, Ordering::Relaxed);
            let cleaned = world.rt.block_on(replay::backend::remove_admission_objects(
                &world.admin,
                "replay-",
            ));
            let at = progress.lock().map(|p| p.clone()).unwrap_or_default();
            Err(format!(
                "no end within {} s: stopped in {at}{}",
                timeout.as_secs(),
                cleaned
                    .err()
                    .map(|e| format!(" (clean-up: {e})"))
                    .unwrap_or_default()
            ))
        }
    }
}

#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn every_scenario_on_the_real_server() {
    let world = world();
    let (mut passed, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    // A file that fails on the simulator fails the test, but is replayed all the same: what
    // the real server says about it (and about every other file) is the news.
    let mut on_simulator = Vec::new();
    for path in scenario_files() {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        eprintln!("replay: {name}");
        let (scenario, backend) = load(&world, &path);
        let simulated = scenario.run();
        if !simulated.passed() {
            on_simulator.push((name.clone(), what_failed(&simulated)));
        }
        let backend = backend
            .with_exact_messages(exact_messages(&scenario))
            .with_message_parts(message_parts(&scenario));
        let report = match run_bounded(&world, scenario, backend) {
            Ok(report) => report,
            Err(timed_out) => {
                failed.push((name, timed_out));
                continue;
            }
        };
        if let Some(skip) = &report.skipped {
            skipped.push((name, format!("step {}: {}", skip.step, skip.why)));
        } else if report.failures.is_empty() {
            passed.push(name);
        } else {
            failed.push((name, what_failed(&report)));
        }
    }
    println!("| scenario | real server |\n|---|---|");
    for name in &passed {
        println!("| {name} | passed |");
    }
    for (name, why) in &skipped {
        println!("| {name} | skipped: {why} |");
    }
    for (name, what) in &failed {
        println!("| {name} | FAILED: {what} |");
    }
    for (name, what) in &on_simulator {
        println!("| {name} | fails on the simulator: {what} |");
    }
    println!(
        "{} scenarios: {} passed, {} skipped, {} failed",
        passed.len() + skipped.len() + failed.len(),
        passed.len(),
        skipped.len(),
        failed.len()
    );
    let unexpected: Vec<_> = failed
        .iter()
        .filter(|(name, _)| !KNOWN_DIFFERENCES.contains(&name.as_str()))
        .collect();
    assert!(
        unexpected.is_empty() && on_simulator.is_empty(),
        "failed on the real server: {unexpected:#?}; failed on the simulator: {on_simulator:#?}"
    );
}

/// A report's failed expectations (or why it was skipped), on one line.
fn what_failed(report: &Report) -> String {
    let mut each: Vec<String> = report
        .failures
        .iter()
        .map(|f| {
            format!(
                "step {} {}: expected {}, found {}",
                f.step, f.what, f.expected, f.actual
            )
        })
        .collect();
    if let Some(skip) = &report.skipped {
        each.push(format!("skipped at step {}: {}", skip.step, skip.why));
    }
    each.join("; ")
}

/// The controller user's writes in `namespace`, from the audit log: (Deployment writes,
/// Gateway status writes), rejected ones included.
fn audited_writes(namespace: &str) -> (usize, usize) {
    // The audit backend writes in blocking mode; a moment covers the file system.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let log = std::fs::read_to_string(env("AUDIT_LOG")).expect("audit log");
    let mut counts = (0, 0);
    for entry in log
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|e| e["user"]["username"] == replay::backend::CONTROLLER_USER)
        .filter(|e| e["objectRef"]["namespace"] == namespace)
        .filter(|e| matches!(e["verb"].as_str(), Some("create" | "update" | "patch")))
    {
        let subresource = entry["objectRef"]["subresource"].as_str().unwrap_or("");
        match (entry["objectRef"]["resource"].as_str(), subresource) {
            (Some("deployments"), "") => counts.0 += 1,
            (Some("gateways"), "status") => counts.1 += 1,
            _ => {}
        }
    }
    counts
}

/// API write counts on the real server, from its audit log: after convergence, 10
/// reconciles make no write; one GatewayConfiguration edit makes exactly one Deployment write
/// and one status write; 20 reconciles through a transient failure (an unreachable webhook
/// with `failurePolicy: Fail`, a 500 on every update) make at most 3 status writes.
#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn write_counts_from_the_audit_log() {
    use gateway_reconcile::sim::cluster::{Kind, RolloutState};
    use gateway_reconcile::sim::scenario::Backend;
    use kube::ResourceExt;
    use kube::api::{
        Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
        PatchParams, PostParams,
    };

    let world = world();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scenarios/steady-state.json");
    let (scenario, mut backend) = load(&world, &path);
    let mut now = scenario.now;
    let tick = jiff::SignedDuration::from_secs(30);
    let reconcile = |backend: &mut Real, now: jiff::Timestamp| {
        backend
            .reconcile(now)
            .unwrap_or_else(|e| panic!("reconcile: {e}"))
    };

    backend
        .create(&scenario.settings, scenario.objects.clone(), now)
        .unwrap_or_else(|e| panic!("create: {e}"));
    let namespace = backend
        .namespace()
        .expect("the Gateway's namespace")
        .to_owned();
    // Converge: reconcile, complete the rollout, reconcile until nothing is written.
    reconcile(&mut backend, now);
    backend
        .rollout(RolloutState::Complete, now)
        .unwrap_or_else(|e| panic!("rollout: {e}"));
    for _ in 0..3 {
        now = now.checked_add(tick).expect("time");
        reconcile(&mut backend, now);
    }

    let converged = audited_writes(&namespace);
    for _ in 0..10 {
        now = now.checked_add(tick).expect("time");
        reconcile(&mut backend, now);
    }
    assert_eq!(
        audited_writes(&namespace),
        converged,
        "10 converged reconciles wrote"
    );

    backend
        .patch(
            Kind::Configuration,
            &serde_json::json!({ "spec": { "horizontalScaling": { "replicas": 3 } } }),
            now,
        )
        .unwrap_or_else(|e| panic!("edit: {e}"));
    for _ in 0..5 {
        now = now.checked_add(tick).expect("time");
        reconcile(&mut backend, now);
    }
    let edited = audited_writes(&namespace);
    assert_eq!(
        (edited.0 - converged.0, edited.1 - converged.1),
        (1, 1),
        "one GatewayConfiguration edit: (Deployment writes, status writes)"
    );

    // A transient failure: every update of the LB Deployment answered 500 by admission.
    let hooks: Api<DynamicObject> = Api::all_with(
        world.admin.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
            ),
            "validatingwebhookconfigurations",
        ),
    );
    let hook_name = format!("down-{namespace}");
    let hook: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": { "name": hook_name },
        "webhooks": [{ "name": "down.e2e.example", "failurePolicy": "Fail", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "timeoutSeconds": 2,
            "clientConfig": { "url": "https://127.0.0.1:1/validate" },
            "rules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"],
                        "resources": ["deployments"] }],
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": namespace } } }]
    }))
    .expect("webhook");
    world
        .rt
        .block_on(hooks.create(&PostParams::default(), &hook))
        .expect("webhook created");
    // The webhook applies once a dry-run update of the LB Deployment fails calling it (the
    // admin's requests match it too; a dry run leaves no controller line in the audit log).
    let deployments: Api<DynamicObject> = Api::namespaced_with(
        world.admin.clone(),
        &namespace,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apps", "v1", "Deployment"),
            "deployments",
        ),
    );
    let lb = world
        .rt
        .block_on(deployments.list(&ListParams::default()))
        .expect("Deployments")
        .items;
    let [lb] = lb.as_slice() else {
        panic!("{} Deployments, not the LB's alone", lb.len())
    };
    let label = serde_json::json!({ "metadata": { "labels": { "probe": "1" } } });
    let dry_run = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let mut last = None;
    world
        .rt
        .block_on(common::webhook::until_admission(
            "fail an update calling the unreachable webhook",
            async || {
                let answer = deployments
                    .patch(&lb.name_any(), &dry_run, &Patch::Merge(&label))
                    .await;
                let refused = matches!(&answer, Err(kube::Error::Api(status))
                    if status.message.contains("failed calling webhook \"down.e2e.example\""));
                last = Some(answer.map(|_| "accepted"));
                Ok(refused)
            },
        ))
        .unwrap_or_else(|e| panic!("{e}; last answer: {last:?}"));
    backend
        .patch(
            Kind::Configuration,
            &serde_json::json!({ "spec": { "horizontalScaling": { "replicas": 4 } } }),
            now,
        )
        .unwrap_or_else(|e| panic!("edit: {e}"));
    let mut failed = 0;
    for _ in 0..20 {
        now = now.checked_add(tick).expect("time");
        let record = reconcile(&mut backend, now);
        if record
            .outcome
            .as_ref()
            .is_some_and(|o| o.class() == Some(gateway_reconcile::FailureClass::Transient))
        {
            failed += 1;
        }
    }
    let failing = audited_writes(&namespace);
    world
        .rt
        .block_on(hooks.delete(&hook_name, &DeleteParams::default()))
        .expect("webhook deleted");
    backend.clean_up();
    assert_eq!(failed, 20, "every update failed transiently");
    let status_writes = failing.1 - edited.1;
    assert!(
        (1..=3).contains(&status_writes),
        "20 reconciles through a transient failure made {status_writes} status writes"
    );
}

use replay::schedules::{self, Tally, Verdict};

/// How long one fault schedule may take on the real server (its convergence included).
const SCHEDULE_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs `work` on a fresh `Real` backend (the kit's routes handed to it) in a thread of its
/// own, for at most [`SCHEDULE_TIMEOUT`]: its answer, or `timed_out` (the admission objects
/// it may have left removed).
fn on_real<T: Send + 'static>(
    world: &World,
    work: impl FnOnce(Real) -> T + Send + 'static,
    timed_out: T,
) -> T {
    let routes = schedules::objects_json()["routes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let backend = Real::new(
        world.rt.clone(),
        world.admin.clone(),
        world.controller.clone(),
    )
    .with_routes(routes);
    let cancel = backend.cancel_flag();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work(backend));
    });
    match receive.recv_timeout(SCHEDULE_TIMEOUT) {
        Ok(done) => done,
        Err(_) => {
            cancel.store(true, Ordering::Relaxed);
            let _ = world.rt.block_on(replay::backend::remove_admission_objects(
                &world.admin,
                "replay-",
            ));
            timed_out
        }
    }
}

/// Runs the kit's schedule `ops` on a fresh `Real` backend ([`on_real`]): the verdict, what
/// it did, and its calls as a scenario file.
fn run_real(
    world: &World,
    ops: &[gateway_reconcile::testing::strategies::Op],
    description: &str,
) -> (Verdict, Tally, Value) {
    let ops = ops.to_vec();
    let description = description.to_owned();
    on_real(
        world,
        move |backend| {
            let (verdict, mut looped) = schedules::run_schedule(backend, &ops);
            looped.inner.clean_up();
            let file = looped.scenario(&description);
            (verdict, looped.tally, file)
        },
        (
            Verdict::Failed(format!("no end within {} s", SCHEDULE_TIMEOUT.as_secs())),
            Tally::default(),
            Value::Null,
        ),
    )
}

/// The first seed of a run: `name`'s value, or the clock's seconds (a new run each time).
fn first_seed(name: &str) -> u64 {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    env_number(name, clock)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The test kit's random fault schedules on the real server, through the replay backend,
/// with the invariants checked after every reconcile and convergence at the end:
/// `REAL_SCHEDULES` schedules (3 by default, as `e2e/run.sh` runs it), from seed
/// `REAL_SCHEDULE_SEED` on (the clock's by default; every seed is printed, and one seed
/// with `REAL_SCHEDULES=1` runs that schedule again). A failing schedule is shrunk with
/// proptest's shrinking (at most `REAL_SHRINK` runs, 48 by default) and its smallest form
/// printed as a scenario file (and written under the target directory).
#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn schedules_on_the_real_server() {
    let world = world();
    let count = env_number("REAL_SCHEDULES", 3);
    let first = first_seed("REAL_SCHEDULE_SEED");
    let budget = usize::try_from(env_number("REAL_SHRINK", 48)).unwrap_or(48);
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    let (mut passed, mut skipped, mut failed) = (0, Vec::new(), Vec::new());
    for seed in first..first.saturating_add(count) {
        let tree = schedules::schedule_tree(seed, schedules::MAX_LEN);
        let ops = {
            use proptest::strategy::ValueTree;
            tree.current()
        };
        let began = std::time::Instant::now();
        let (verdict, done, _) = run_real(&world, &ops, "");
        println!(
            "schedule seed {seed}: {} ops, {} steps, {} reconciles, {} faults, {} failed writes, {:.1} s: {verdict:?}",
            ops.len(),
            done.steps,
            done.reconciles,
            done.faults,
            done.failed_writes,
            began.elapsed().as_secs_f64()
        );
        match verdict {
            Verdict::Passed => {
                passed += 1;
                tally.add(&done);
            }
            Verdict::Skipped(why) => skipped.push((seed, why)),
            Verdict::Failed(why) => {
                let (smallest, why) =
                    schedules::shrink(tree, why, budget, |ops| match run_real(&world, ops, "").0 {
                        Verdict::Failed(why) => Some(why),
                        _ => None,
                    });
                let (_, _, file) = run_real(
                    &world,
                    &smallest,
                    &format!("Fault schedule of seed {seed}, shrunk: {why}"),
                );
                let text = serde_json::to_string_pretty(&file).unwrap_or_default();
                let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join(format!("schedule-{seed}.json"));
                let _ = std::fs::write(&path, &text);
                println!(
                    "schedule seed {seed} FAILED: {why}\nshrunk to {smallest:?} ({}):\n{text}",
                    path.display()
                );
                failed.push((seed, why));
            }
        }
    }
    println!(
        "{count} schedules from seed {first}: {passed} passed, {} skipped, {} failed; in the passed: {} steps, {} reconciles, {} faults injected, {} failed writes survived, {} Deployment writes, {} status writes; {:.0} s",
        skipped.len(),
        failed.len(),
        tally.steps,
        tally.reconciles,
        tally.faults,
        tally.failed_writes,
        tally.writes.deployment_writes,
        tally.writes.status_writes,
        started.elapsed().as_secs_f64()
    );
    for (seed, why) in &skipped {
        println!("skipped seed {seed}: {why}");
    }
    assert!(failed.is_empty(), "failed schedules: {failed:#?}");
    assert!(passed > 0 || count == 0, "no schedule passed: {skipped:#?}");
}

/// The same schedules on the simulator, through the same conversion and checks: every
/// one passes (so a real-server failure is a difference, not a bad schedule), and they
/// inject faults of every kind.
#[test]
fn kit_schedules_pass_on_the_simulator() {
    use gateway_reconcile::sim::cluster::Cluster;
    let mut tally = Tally::default();
    for seed in 0..64 {
        let ops = {
            use proptest::strategy::ValueTree;
            schedules::schedule_tree(seed, schedules::MAX_LEN).current()
        };
        let (verdict, looped) = schedules::run_schedule(Cluster::default(), &ops);
        assert_eq!(verdict, Verdict::Passed, "seed {seed}: {ops:?}");
        tally.add(&looped.tally);
    }
    assert!(tally.faults > 64 && tally.failed_writes > 16, "{tally:?}");
}

/// A schedule's calls, written as a scenario file (what a failing schedule prints), replay
/// on the simulator to the same objects and writes: the reconciles that fell due during an
/// advance are in the file, at their times.
#[test]
fn a_schedule_replays_from_its_scenario_file() {
    use gateway_reconcile::sim::cluster::Cluster;
    use gateway_reconcile::testing::Run;
    use gateway_reconcile::testing::strategies::{self, Op};
    use proptest::strategy::ValueTree;
    let seed = (0..64)
        .find(|seed| {
            let ops = schedules::schedule_tree(*seed, schedules::MAX_LEN).current();
            ops.iter().any(|op| matches!(op, Op::Fail(..)))
                && ops.iter().any(|op| matches!(op, Op::Advance(..)))
        })
        .expect("a schedule with write failures and advances");
    let ops = schedules::schedule_tree(seed, schedules::MAX_LEN).current();
    let mut looped = schedules::Looped::new(Cluster::default());
    looped
        .create(
            &strategies::settings(),
            schedules::objects().expect("objects"),
            strategies::start(),
        )
        .expect("create");
    let mut run = Run::new(&mut looped).expect("run");
    for op in schedules::runnable(&ops) {
        run.apply(&op).expect("the schedule passes");
    }
    let due = run.steps().iter().filter(|s| s.due).count();
    assert!(due > 0, "seed {seed}: no reconcile fell due");
    drop(run);
    let file = looped.scenario("replayed");
    let scenario = Scenario::from_value(&file).expect("a scenario");
    let mut replayed = Cluster::default();
    let report = scenario.run_on(&mut replayed);
    assert!(
        report.failures.is_empty() && report.skipped.is_none(),
        "{report:?}"
    );
    let ran = &looped.inner;
    assert_eq!(replayed.gateway(), ran.gateway(), "seed {seed}");
    assert_eq!(replayed.deployment(), ran.deployment(), "seed {seed}");
    assert_eq!(
        Backend::write_counts(&replayed),
        Backend::write_counts(ran),
        "seed {seed}"
    );
}

/// The shrinking the real-server run uses finds the smallest failing schedule: here,
/// "fails" when the schedule restarts the controller, and the smallest such is one restart.
#[test]
fn a_failing_schedule_shrinks_to_its_cause() {
    use gateway_reconcile::testing::strategies::Op;
    use proptest::strategy::ValueTree;
    let seed = (0..1000)
        .find(|seed| {
            let ops = schedules::schedule_tree(*seed, schedules::MAX_LEN).current();
            ops.len() > 10 && ops.contains(&Op::Restart)
        })
        .expect("a long schedule with a restart");
    let tree = schedules::schedule_tree(seed, schedules::MAX_LEN);
    let (smallest, why) = schedules::shrink(tree, "restart".into(), 500, |ops| {
        ops.contains(&Op::Restart)
            .then(|| format!("{} ops", ops.len()))
    });
    assert_eq!(smallest, vec![Op::Restart], "seed {seed}: {why}");
}

/// A `messageContains` part holding the failure's text runs on the real server when the
/// prefixed message still contains it, and is skipped when it cannot.
#[test]
fn message_parts_that_cannot_match_are_found() {
    use replay::backend::part_matches;
    let text = "etcdserver: request timed out";
    let real = "admission webhook \"deny.replay.e2e.example\" denied the request: etcdserver: request timed out";
    assert!(part_matches(text, text, real), "the text alone");
    assert!(
        part_matches("request timed out", text, real),
        "a part of the text"
    );
    assert!(
        part_matches("etcdserver: request timed out; retrying", text, real),
        "text after it"
    );
    assert!(
        part_matches("update refused", text, real),
        "not the failure's"
    );
    assert!(
        !part_matches("update failed: etcdserver: request timed out", text, real),
        "text before it"
    );
    // The check mirrors the core's message: the simulator's contains the part, the real
    // server's (the text replaced by the prefixed one) does not.
    let simulated = format!("LB Deployment update failed: {text}");
    let on_server = simulated.replace(text, real);
    assert!(simulated.contains("update failed: etcdserver"));
    assert!(!on_server.contains("update failed: etcdserver"));
}

/// A generation the server can reach by spec updates is reached; one beyond
/// `MAX_GENERATION_BUMPS` updates is a skip with its reason, never a silent generation 1.
#[test]
fn unreachable_generations_skip() {
    use replay::backend::{MAX_GENERATION_BUMPS, generation_bumps};
    assert_eq!(generation_bumps(1), Ok(0));
    assert_eq!(generation_bumps(0), Ok(0));
    assert_eq!(generation_bumps(7), Ok(6));
    assert_eq!(generation_bumps(MAX_GENERATION_BUMPS + 1), Ok(200));
    for generation in [
        MAX_GENERATION_BUMPS + 2,
        1_000_000,
        i64::from(u32::MAX) + 2,
        i64::MAX,
    ] {
        let why = generation_bumps(generation).unwrap_err();
        assert!(why.contains("cannot be reached"), "{why}");
    }
}

/// On the real server, a file whose GatewayConfiguration is at generation 1,000,000 is
/// skipped at once with the reason, where the replay used to try to reach it.
#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn a_generation_out_of_reach_skips_on_the_real_server() {
    let world = world();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scenarios/steady-state.json");
    let mut raw: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("file")).expect("JSON");
    raw["objects"]["configuration"]["metadata"]["generation"] = serde_json::json!(1_000_000);
    let scenario = Scenario::from_value(&raw).expect("a scenario");
    let (_, backend) = load(&world, &path);
    let started = std::time::Instant::now();
    let report = run_bounded(&world, scenario, backend).expect("an end");
    let skipped = report.skipped.expect("skipped");
    assert_eq!(skipped.step, 0);
    assert!(
        skipped.why.contains("generation 1000000 cannot be reached"),
        "{}",
        skipped.why
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// The real server refuses a Deployment status with more available than total replicas,
/// with the words the simulated status writes use (`sim::cluster`'s `refused_status`), and
/// stores the statuses the simulated rollouts write.
#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn the_server_refuses_more_available_than_total_replicas() {
    use kube::ResourceExt;
    use kube::api::{
        Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    };
    let world = world();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scenarios/steady-state.json");
    let (scenario, mut backend) = load(&world, &path);
    backend
        .create(&scenario.settings, scenario.objects.clone(), scenario.now)
        .unwrap_or_else(|e| panic!("create: {e}"));
    backend
        .reconcile(scenario.now)
        .unwrap_or_else(|e| panic!("reconcile: {e}"));
    for state in [
        RolloutState::Progressing,
        RolloutState::Stalled,
        RolloutState::Complete,
    ] {
        backend
            .rollout(state, scenario.now)
            .unwrap_or_else(|e| panic!("the simulated {state:?} status is refused: {e}"));
    }
    let namespace = backend.namespace().expect("namespace").to_owned();
    let deployments: Api<DynamicObject> = Api::namespaced_with(
        world.admin.clone(),
        &namespace,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apps", "v1", "Deployment"),
            "deployments",
        ),
    );
    let name = world
        .rt
        .block_on(deployments.list(&ListParams::default()))
        .expect("Deployments")
        .items
        .first()
        .expect("the LB Deployment")
        .name_any();
    let status =
        serde_json::json!({"status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 4}});
    let answer = world.rt.block_on(deployments.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(&status),
    ));
    backend.clean_up();
    match answer {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert!(
                s.message.contains(
                    "status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas"
                ),
                "{}",
                s.message
            );
            println!("the real server: {}", s.message);
        }
        other => panic!("the status was not refused: {other:?}"),
    }
}
