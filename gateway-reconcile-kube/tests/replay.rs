//! The scenario files of `tests/scenarios/` on a real kube-apiserver (`e2e/run.sh` runs
//! this with `--ignored`): the same files, the same expectations, real verbs. A scenario
//! a real server cannot reproduce is skipped with the reason, never passed.

mod replay {
    pub mod backend;
    pub mod webhook;
}

use std::sync::Arc;

use gateway_reconcile::sim::scenario::{Scenario, Verb};
use kube::Client;
use replay::backend::Real;

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
    let (admin, controller) = rt.block_on(async {
        let admin = Client::try_default().await.expect("admin client");
        bind_rbac(&admin).await;
        let kubeconfig = kube::config::Kubeconfig::read_from(env("E2E_CONTROLLER_KUBECONFIG"))
            .expect("controller kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("controller config");
        (admin, Client::try_from(config).expect("controller client"))
    });
    World {
        rt,
        admin,
        controller,
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
            { "apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"] }
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

/// Every condition message the scenario's expectations give exactly.
fn exact_messages(scenario: &Scenario) -> Vec<String> {
    scenario
        .steps
        .iter()
        .filter_map(|step| match &step.verb {
            Verb::Reconcile(expect) => Some(expect),
            _ => None,
        })
        .flat_map(|expect| expect.conditions.iter())
        .filter_map(|(_, condition)| condition.as_ref()?.message.clone())
        .collect()
}

/// Scenarios whose real-server run differs from the simulator for a reason recorded in
/// `e2e/README.md`; any other failure fails the test.
const KNOWN_DIFFERENCES: &[&str] = &[];

#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn every_scenario_on_the_real_server() {
    let world = world();
    let (mut passed, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for path in scenario_files() {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        eprintln!("replay: {name}");
        let text = std::fs::read_to_string(&path).expect("scenario");
        let scenario = Scenario::from_json(&text).expect("a well-formed scenario");
        assert!(scenario.run().passed(), "{name} fails on the simulator");
        let raw: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let routes = raw["objects"]["routes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut backend = Real::new(
            world.rt.clone(),
            world.admin.clone(),
            world.controller.clone(),
        )
        .with_routes(routes)
        .with_exact_messages(exact_messages(&scenario));
        let report = scenario.run_on(&mut backend);
        backend.clean_up();
        if let Some(skip) = &report.skipped {
            skipped.push((name, format!("step {}: {}", skip.step, skip.why)));
        } else if report.failures.is_empty() {
            passed.push(name);
        } else {
            let what = report
                .failures
                .iter()
                .map(|f| {
                    format!(
                        "step {} {}: expected {}, found {}",
                        f.step, f.what, f.expected, f.actual
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            failed.push((name, what));
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
        unexpected.is_empty(),
        "failed on the real server: {unexpected:#?}"
    );
}
