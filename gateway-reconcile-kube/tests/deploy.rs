//! The packaging fits together, without a cluster or helm: the `deploy/` manifests (the
//! chart rendered with its default values, `deploy/render.sh`) reference each other, grant
//! what the controller does, carry valid settings and the built-in LB template; the image's
//! user is the one the manifests and the chart run as; the chart ships the e2e CRDs
//! unchanged; the admission policy names the managed-by label the core renders.
//! `tests/chart.rs` renders the chart itself and proves it on the real API server.

use gateway_reconcile::lookup::{MANAGED_BY, MANAGED_BY_LABEL};
use serde::Deserialize;
use serde_json::Value;

fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("a YAML document"))
        .filter(|doc| !doc.is_null())
        .collect()
}

fn one(text: &str) -> Value {
    let mut docs = documents(text);
    assert_eq!(docs.len(), 1, "one document expected");
    docs.remove(0)
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

const NAMESPACE: &str = include_str!("../deploy/namespace.yaml");
const SERVICE_ACCOUNT: &str = include_str!("../deploy/serviceaccount.yaml");
const CLUSTER_ROLE: &str = include_str!("../deploy/clusterrole.yaml");
const CLUSTER_ROLE_BINDING: &str = include_str!("../deploy/clusterrolebinding.yaml");
const LEADER_ELECTION: &str = include_str!("../deploy/leader-election.yaml");
const CONFIG_MAP: &str = include_str!("../deploy/configmap.yaml");
const DEPLOYMENT: &str = include_str!("../deploy/deployment.yaml");
const SERVICE: &str = include_str!("../deploy/service.yaml");
const POLICY: &str = include_str!("../deploy/validatingadmissionpolicy.yaml");
const DOCKERFILE: &str = include_str!("../Dockerfile");
const CHART_VALUES: &str = include_str!("../charts/gateway-reconcile-controller/values.yaml");

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

/// The value of `--flag=VALUE` among the container's args.
fn arg<'a>(deployment: &'a Value, flag: &str) -> Option<&'a str> {
    container(deployment)["args"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find_map(|a| a.strip_prefix(flag)?.strip_prefix('='))
}

fn port(deployment: &Value, name: &str) -> u64 {
    container(deployment)["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or_else(|| panic!("no port {name}"))
}

#[test]
fn manifests_reference_each_other() {
    let namespace = one(NAMESPACE);
    let account = one(SERVICE_ACCOUNT);
    let role = one(CLUSTER_ROLE);
    let binding = one(CLUSTER_ROLE_BINDING);
    let election = documents(LEADER_ELECTION);
    let (lease_role, lease_binding) = (find(&election, "Role"), find(&election, "RoleBinding"));
    let config = one(CONFIG_MAP);
    let deployment = one(DEPLOYMENT);
    let service = one(SERVICE);

    let ns = &namespace["metadata"]["name"];
    for object in [
        &account,
        &config,
        &deployment,
        &service,
        lease_role,
        lease_binding,
    ] {
        assert_eq!(&object["metadata"]["namespace"], ns, "{}", object["kind"]);
    }
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(
        lease_binding["roleRef"]["name"],
        lease_role["metadata"]["name"]
    );
    for binding in [&binding, lease_binding] {
        assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
        assert_eq!(binding["subjects"][0]["name"], account["metadata"]["name"]);
        assert_eq!(&binding["subjects"][0]["namespace"], ns);
    }
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], account["metadata"]["name"]);
    assert_eq!(
        pod["volumes"][0]["configMap"]["name"],
        config["metadata"]["name"]
    );
    // The files the args name are the ConfigMap's keys, where the volume is mounted.
    let mount = container(&deployment)["volumeMounts"][0]["mountPath"]
        .as_str()
        .expect("mount");
    for (flag, key) in [
        ("--settings", "settings.yaml"),
        ("--template", "template.yaml"),
    ] {
        assert_eq!(
            arg(&deployment, flag),
            Some(format!("{mount}/{key}").as_str())
        );
        assert!(config["data"][key].is_string(), "ConfigMap key {key}");
    }
    // The Service selects the controller's Pods, on the metrics port.
    for (key, value) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(
            &deployment["spec"]["template"]["metadata"]["labels"][key],
            value
        );
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "metrics");
}

#[test]
fn two_replicas_elect_a_leader_and_are_probed_on_the_flag_set_ports() {
    let deployment = one(DEPLOYMENT);
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(arg(&deployment, "--leader-elect"), Some("true"));
    // No Recreate: with a leader, a rolling update keeps one controller up.
    assert!(deployment["spec"]["strategy"].is_null());
    let health = port(&deployment, "health");
    let metrics = port(&deployment, "metrics");
    assert_eq!(
        arg(&deployment, "--health-addr"),
        Some(format!("0.0.0.0:{health}").as_str())
    );
    assert_eq!(
        arg(&deployment, "--metrics-addr"),
        Some(format!("0.0.0.0:{metrics}").as_str())
    );
    assert_eq!((health, metrics), (8081, 8080));
    let c = container(&deployment);
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(c[probe]["httpGet"]["path"], path);
        assert_eq!(c[probe]["httpGet"]["port"], "health");
    }
    // Cluster-wide by default: no --namespace.
    assert_eq!(arg(&deployment, "--namespace"), None);
}

#[test]
fn the_config_map_holds_valid_settings_and_the_built_in_template() {
    let config = one(CONFIG_MAP);
    let settings = config["data"]["settings.yaml"].as_str().expect("settings");
    gateway_reconcile_kube::options::settings("settings.yaml", settings).expect("valid settings");
    let template = config["data"]["template.yaml"].as_str().expect("template");
    let template =
        gateway_reconcile_kube::options::template("template.yaml", template).expect("template");
    assert_eq!(
        template,
        gateway_reconcile::template::default_template(),
        "the chart's files/lb-template.yaml differs from the built-in template"
    );
}

/// The verbs `rules` grant on `group`/`resource`.
fn grants(rules: &Value, group: &str, resource: &str) -> Vec<String> {
    rules
        .as_array()
        .into_iter()
        .flatten()
        .filter(|rule| {
            rule["apiGroups"]
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g == group))
                && rule["resources"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r == resource))
        })
        .flat_map(|rule| rule["verbs"].as_array().cloned().unwrap_or_default())
        .filter_map(|verb| verb.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_roles_grant_what_the_controller_does_and_nothing_more() {
    let role = one(CLUSTER_ROLE);
    let rules = &role["rules"];
    let gw = "gateway.networking.k8s.io";
    let expected: [(&str, &str, &[&str]); 10] = [
        (gw, "gateways", &["list", "watch"]),
        (gw, "gatewayclasses", &["list", "watch"]),
        (gw, "gateways/status", &["patch"]),
        (gw, "gatewayclasses/status", &["patch"]),
        (gw, "gateways/finalizers", &["update"]),
        (
            "meridio-2.nordix.org",
            "gatewayconfigurations",
            &["list", "watch"],
        ),
        ("meridio-2.nordix.org", "l34routes", &["list", "watch"]),
        // `get`: an own LB Deployment whose managed-by label was removed is read whole
        // for that reconcile (the label-selected watch no longer holds it).
        (
            "apps",
            "deployments",
            &["get", "list", "watch", "create", "update"],
        ),
        ("events.k8s.io", "events", &["create", "patch"]),
        // A listener's allowedRoutes namespace selector matches namespaces' labels.
        ("", "namespaces", &["list", "watch"]),
    ];
    for (group, resource, verbs) in expected {
        assert_eq!(grants(rules, group, resource), verbs, "{group}/{resource}");
    }
    // Nothing else: every granted (group, resource) is one of the above.
    for rule in rules.as_array().expect("rules") {
        for group in rule["apiGroups"].as_array().expect("apiGroups") {
            for resource in rule["resources"].as_array().expect("resources") {
                assert!(
                    expected
                        .iter()
                        .any(|(g, r, _)| group == *g && resource == *r),
                    "unexpected grant on {group}/{resource}"
                );
            }
        }
    }
    // Leases only in the release namespace (a Role), for leader election.
    let election = documents(LEADER_ELECTION);
    let lease_role = find(&election, "Role");
    assert_eq!(
        grants(&lease_role["rules"], "coordination.k8s.io", "leases"),
        ["get", "create", "update"]
    );
    assert_eq!(lease_role["rules"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_admission_policy_names_the_service_account_and_the_rendered_label() {
    let docs = documents(POLICY);
    let policy = find(&docs, "ValidatingAdmissionPolicy");
    let binding = find(&docs, "ValidatingAdmissionPolicyBinding");
    assert_eq!(binding["spec"]["policyName"], policy["metadata"]["name"]);
    assert_eq!(
        binding["spec"]["validationActions"],
        serde_json::json!(["Deny"])
    );
    let account = one(SERVICE_ACCOUNT);
    let user = format!(
        "system:serviceaccount:{}:{}",
        account["metadata"]["namespace"]
            .as_str()
            .expect("namespace"),
        account["metadata"]["name"].as_str().expect("name")
    );
    let condition = policy["spec"]["matchConditions"][0]["expression"]
        .as_str()
        .expect("matchCondition");
    assert!(condition.contains(&format!("\"{user}\"")), "{condition}");
    // The label and value the core renders on every LB Deployment.
    let variables = serde_json::to_string(&policy["spec"]["variables"]).expect("json");
    assert!(
        variables.contains(&format!("'{MANAGED_BY_LABEL}'")),
        "{variables}"
    );
    assert!(
        variables.contains(&format!("'{MANAGED_BY}'")),
        "{variables}"
    );
    let rules = &policy["spec"]["matchConstraints"]["resourceRules"][0];
    assert_eq!(rules["resources"], serde_json::json!(["deployments"]));
    assert_eq!(rules["operations"], serde_json::json!(["CREATE", "UPDATE"]));
}

/// The numeric user of the Dockerfile's last stage.
fn image_user(dockerfile: &str) -> u32 {
    let last_stage = dockerfile
        .rsplit_once("\nFROM ")
        .map(|(_, stage)| stage)
        .expect("a multi-stage Dockerfile");
    let user = last_stage
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER in the final stage");
    let uid = user.split(':').next().unwrap_or_default().trim();
    uid.parse()
        .unwrap_or_else(|_| panic!("USER {user}: not numeric"))
}

#[test]
fn the_image_runs_as_the_non_root_user_the_manifests_name() {
    let uid = image_user(DOCKERFILE);
    assert_ne!(uid, 0, "the image runs as root");
    let deployment = one(DEPLOYMENT);
    let pod = &deployment["spec"]["template"]["spec"]["securityContext"];
    assert_eq!(pod["runAsUser"], uid);
    assert_eq!(pod["runAsNonRoot"], true);
    let values = one(CHART_VALUES);
    assert_eq!(values["podSecurityContext"]["runAsUser"], uid);
    // Multi-stage: the final image is built from a stage other than the builder's image,
    // by default (the base images are build arguments) the distroless one.
    let froms = base_images(DOCKERFILE);
    assert!(froms.len() >= 2, "{froms:?}");
    assert!(froms[froms.len() - 1].contains("distroless"), "{froms:?}");
    assert!(froms[0].starts_with("docker.io/library/rust:"), "{froms:?}");
}

/// The images the Dockerfile's stages start from, `${ARG}` read as the argument's default.
fn base_images(dockerfile: &str) -> Vec<String> {
    let args: Vec<(&str, &str)> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("ARG ")?.split_once('='))
        .collect();
    dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("FROM "))
        .map(|from| {
            let image = from.split_whitespace().next().unwrap_or_default();
            match image.strip_prefix("${").and_then(|a| a.strip_suffix('}')) {
                Some(arg) => args
                    .iter()
                    .find(|(name, _)| *name == arg)
                    .map(|(_, default)| default.to_string())
                    .unwrap_or_else(|| panic!("FROM ${{{arg}}}: no ARG {arg}=DEFAULT")),
                None => image.to_string(),
            }
        })
        .collect()
}

#[test]
fn base_images_read_the_arguments_defaults() {
    let file = "ARG B=rust:1\nARG R=distroless\nFROM ${B} AS build\nFROM ${R}\nFROM scratch\n";
    assert_eq!(base_images(file), ["rust:1", "distroless", "scratch"]);
}

#[test]
fn image_user_reads_the_final_stage_only() {
    let file = "FROM rust AS build\nUSER 1000\nFROM distroless\nUSER 65532:65532\n";
    assert_eq!(image_user(file), 65532);
    let root = "FROM rust AS build\nUSER 1000\nFROM distroless\nUSER 0\n";
    assert_eq!(image_user(root), 0);
}

#[test]
fn the_chart_ships_the_crds_the_e2e_server_runs() {
    let pairs = [
        (
            include_str!(
                "../charts/gateway-reconcile-controller/crds/meridio-2.nordix.org_gatewayconfigurations.yaml"
            ),
            include_str!("../../e2e/crds/meridio-2.nordix.org_gatewayconfigurations.yaml"),
        ),
        (
            include_str!(
                "../charts/gateway-reconcile-controller/crds/meridio-2.nordix.org_l34routes.yaml"
            ),
            include_str!("../../e2e/crds/meridio-2.nordix.org_l34routes.yaml"),
        ),
    ];
    for (chart, e2e) in pairs {
        assert_eq!(one(chart), one(e2e));
    }
}
