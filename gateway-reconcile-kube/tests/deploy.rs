//! The `deploy/` manifests fit together: the binding names the role and the service
//! account the Deployment runs as, all in one namespace, and the settings the Deployment
//! mounts are valid settings.

use serde::Deserialize;
use serde_json::Value;

fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("a YAML document"))
        .collect()
}

#[test]
fn manifests_reference_each_other() {
    let namespace = &documents(include_str!("../deploy/namespace.yaml"))[0];
    let account = &documents(include_str!("../deploy/serviceaccount.yaml"))[0];
    let role = &documents(include_str!("../deploy/clusterrole.yaml"))[0];
    let binding = &documents(include_str!("../deploy/clusterrolebinding.yaml"))[0];
    let docs = documents(include_str!("../deploy/deployment.yaml"));
    let deployment = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("Deployment");
    let config = docs
        .iter()
        .find(|d| d["kind"] == "ConfigMap")
        .expect("ConfigMap");

    let ns = &namespace["metadata"]["name"];
    assert_eq!(&account["metadata"]["namespace"], ns);
    assert_eq!(&deployment["metadata"]["namespace"], ns);
    assert_eq!(&config["metadata"]["namespace"], ns);
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["name"], account["metadata"]["name"]);
    assert_eq!(&binding["subjects"][0]["namespace"], ns);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], account["metadata"]["name"]);
    assert_eq!(
        pod["volumes"][0]["configMap"]["name"],
        config["metadata"]["name"]
    );
    // One replica: there is no leader election.
    assert_eq!(deployment["spec"]["replicas"], 1);

    let settings = config["data"]["settings.yaml"].as_str().expect("settings");
    gateway_reconcile_kube::options::settings("settings.yaml", settings).expect("valid settings");
}

#[test]
fn the_role_grants_the_status_and_finalizer_subresources() {
    let role = &documents(include_str!("../deploy/clusterrole.yaml"))[0];
    let grants = |resource: &str| -> Vec<String> {
        role["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|rule| {
                rule["resources"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r == resource))
            })
            .flat_map(|rule| rule["verbs"].as_array().cloned().unwrap_or_default())
            .filter_map(|verb| verb.as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(grants("gateways/status"), ["patch"]);
    assert_eq!(grants("gateways/finalizers"), ["update"]);
    assert_eq!(grants("deployments"), ["list", "watch", "create", "update"]);
    assert_eq!(grants("gateways"), ["list", "watch"]);
}
