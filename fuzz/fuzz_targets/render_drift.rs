//! Structured inputs through render → simulated server defaulting → drift: a Deployment the
//! crate rendered and the server then defaulted must never show drift.
#![no_main]

use arbitrary::Arbitrary;
use gateway_reconcile::sim::defaulting::apply_server_defaults;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};
use gateway_reconcile::{DeploymentWrite, Settings, Snapshot, plan, template};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

#[derive(Debug, Arbitrary)]
struct Input {
    gateway_name: String,
    labels: Vec<(String, String)>,
    annotations: Vec<(String, String)>,
    attachments: Vec<(String, Option<String>, String)>,
    subnets: Vec<(u8, u8, u8, u8, u8)>,
    v6: bool,
    replicas: Option<i32>,
    enforce_replicas: bool,
    resources: Vec<(bool, String, String, bool)>,
    generation: i64,
    extra_env: Vec<(String, String)>,
}

fn build(input: &Input) -> Option<(Gateway, GatewayConfiguration, Deployment)> {
    let attachments: Vec<Value> = input
        .attachments
        .iter()
        .take(4)
        .map(|(name, ns, interface)| {
            json!({"type": "NAD", "nad": {"name": name, "namespace": ns.clone().unwrap_or_default(), "interface": interface}})
        })
        .collect();
    // Within the CRD's bound of 2 (with the IPv6 one below): more is InvalidParameters,
    // which would end the case before render and drift.
    let mut subnets: Vec<Value> = input
        .subnets
        .iter()
        .take(if input.v6 { 1 } else { 2 })
        .map(|(a, b, c, d, p)| json!({"attachmentType": "NAD", "cidr": format!("{a}.{b}.{c}.{d}/{}", p % 33)}))
        .collect();
    if input.v6 {
        subnets.push(json!({"attachmentType": "NAD", "cidr": "fd00:100::/64"}));
    }
    let containers: Vec<Value> = input
        .resources
        .iter()
        .take(2)
        .map(|(router, cpu, memory, enforce)| {
            json!({"name": if *router { "router" } else { "loadbalancer" }, "enforceResources": enforce,
                   "resources": {"requests": {"cpu": cpu, "memory": memory}}})
        })
        .collect();
    let gateway: Gateway = serde_json::from_value(json!({
        "metadata": {"name": input.gateway_name, "namespace": "ns", "uid": "uid", "generation": 1},
        "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {
            "labels": input.labels.iter().take(4).cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "annotations": input.annotations.iter().take(4).cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
    }))
    .ok()?;
    let configuration: GatewayConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "conf", "namespace": "ns", "generation": input.generation},
        "spec": {"networkAttachments": attachments, "internalSubnets": subnets,
                 "horizontalScaling": {"replicas": input.replicas, "enforceReplicas": input.enforce_replicas},
                 "verticalScaling": {"containers": containers}}
    }))
    .ok()?;
    let mut template = template::default_template();
    if let Some(env) = template.object.get_mut("spec")
        .and_then(|s| s.pointer_mut("/template/spec/containers/0/env"))
    {
        for (name, value) in input.extra_env.iter().take(4) {
            env.push(json!({"name": name, "value": value}).into());
        }
    }
    Some((gateway, configuration, template))
}

fuzz_target!(|input: Input| {
    let Some((gateway, configuration, template)) = build(&input) else { return };
    let class: GatewayClass = serde_json::from_value(
        json!({"metadata": {"name": "c"}, "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}),
    )
    .unwrap();
    let settings = Settings::default();
    let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let snapshot = Snapshot::new(&gateway, &template)
        .with_gateway_class(Some(&class))
        .with_configuration(Some(&configuration));
    let Ok(first) = plan(&settings, snapshot, now) else { return };
    let Some(DeploymentWrite::Create(stored)) = first.write() else { return };
    let mut stored = stored.clone();
    apply_server_defaults(&mut stored);
    stored.object["metadata"]["uid"] = "dep-uid".into();
    let snapshot = snapshot.with_deployment(Some(&stored));
    let second = plan(&settings, snapshot, now).expect("the created Deployment is ours");
    if let Some(DeploymentWrite::Update { drift, .. }) = second.write() {
        // Duplicate env names in the template make keyed pairing ambiguous; the server would
        // reject such a template, so only names that are unique count.
        let mut names: Vec<&str> = input.extra_env.iter().take(4).map(|(n, _)| n.as_str()).collect();
        names.push("MERIDIO_GATEWAY_NAME");
        names.sort_unstable();
        let unique = names.windows(2).all(|w| w[0] != w[1]);
        assert!(!unique, "rendered then defaulted Deployment drifted: {drift:?}");
    }
});
