//! Inputs shared by the benches: the realistic Gateway in steady state, its edited variant,
//! scaled-up templates, and the plan + settle calls the benches time.

#![allow(dead_code)]

use gateway_reconcile::sim::defaulting::apply_server_defaults;
use gateway_reconcile::wire::tree::Value as Tree;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
use gateway_reconcile::{
    DeploymentWrite, NamespaceLabels, Plan, Settings, Settlement, Snapshot, WriteOutcome, plan,
    template,
};
use serde_json::json;

pub struct Inputs {
    pub class: GatewayClass,
    pub gateway: Gateway,
    pub configuration: GatewayConfiguration,
    pub deployment: Deployment,
    pub template: Deployment,
    pub routes: Vec<L34Route>,
    /// The labels of the routes' namespaces (for listeners that select by them).
    pub namespace_labels: NamespaceLabels,
}

pub struct Json {
    pub class: String,
    pub gateway: String,
    pub configuration: String,
    pub deployment: String,
    pub template: String,
    pub routes: String,
    pub namespace_labels: String,
}

pub fn now() -> jiff::Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

/// The realistic Gateway: default template, two NADs, dual-stack subnets, vertical scaling on
/// both containers, three foreign conditions, five L34Routes, server-defaulted Deployment.
pub fn realistic() -> Inputs {
    realistic_with(template::default_template())
}

/// [`realistic`] with another LB Deployment template.
pub fn realistic_with(template: Deployment) -> Inputs {
    let class = serde_json::from_value(json!({
        "metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
    }))
    .unwrap();
    let mut gateway: Gateway = serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 3},
        "spec": {"gatewayClassName": "meridio",
            "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
            "infrastructure": {
            "labels": {"team": "net"},
            "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
        "status": {"conditions": [
            {"type": "example.com/A", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "A", "message": "a"},
            {"type": "example.com/B", "status": "False", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "B", "message": "b"},
            {"type": "example.com/C", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "C", "message": "c"}
        ]}
    }))
    .unwrap();
    let configuration: GatewayConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
        "spec": {
            "networkAttachments": [
                {"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}},
                {"type": "NAD", "nad": {"name": "vlan-200", "namespace": "infra", "interface": "net2"}}
            ],
            "internalSubnets": [
                {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
            ],
            "horizontalScaling": {"replicas": 2, "enforceReplicas": true},
            "verticalScaling": {"containers": [
                {"name": "loadbalancer", "enforceResources": true,
                 "resources": {"requests": {"cpu": "0.5", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "1024Mi"}}},
                {"name": "router", "enforceResources": true,
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}
            ]}
        }
    }))
    .unwrap();
    let routes: Vec<L34Route> = (1..=5)
        .map(|i| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("r{i}"), "namespace": "ns"},
                "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": [format!("20.0.0.{i}/32")]}
            }))
            .unwrap()
        })
        .collect();
    let settings = Settings::default();
    // Reach the steady state: create, default, settle the status.
    let (deployment, status) = {
        let snap = Snapshot::new(&gateway, &template)
            .with_gateway_class(Some(&class))
            .with_configuration(Some(&configuration))
            .with_routes(&routes);
        let Plan::Write(p) = plan(&settings, snap, now()).unwrap() else {
            panic!("create expected")
        };
        let DeploymentWrite::Create(mut d) = p.write().clone() else {
            panic!("create expected")
        };
        let s = p.settle(WriteOutcome::Applied);
        apply_server_defaults(&mut d);
        d.object["metadata"]["uid"] = Tree::from("dep-uid");
        d.object["metadata"]["generation"] = Tree::from(1);
        d.object.insert(
            "status",
            Tree::from(json!({"observedGeneration": 1, "replicas": 2,
            "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2})),
        );
        (d, s.status.unwrap())
    };
    gateway.status = status;
    let mut inputs = Inputs {
        class,
        gateway,
        configuration,
        deployment,
        template,
        routes,
        namespace_labels: NamespaceLabels::new(),
    };
    // One more reconcile so the Programmed message reflects the finished rollout.
    let s = settle(&inputs, None);
    if let Some(status) = s {
        inputs.gateway.status = status;
    }
    inputs
}

pub fn settle(
    i: &Inputs,
    outcome: Option<&WriteOutcome>,
) -> Option<gateway_reconcile::wire::GatewayStatus> {
    let settings = Settings::default();
    let snap = Snapshot::new(&i.gateway, &i.template)
        .with_gateway_class(Some(&i.class))
        .with_configuration(Some(&i.configuration))
        .with_deployment(Some(&i.deployment))
        .with_routes(&i.routes)
        .with_namespace_labels(&i.namespace_labels);
    settle_plan(plan(&settings, snap, now()).unwrap(), outcome).status
}

/// Settles a plan: a planned write with `outcome` (`Applied` when `None`), a settled plan as
/// it is.
pub fn settle_plan(p: Plan<'_>, outcome: Option<&WriteOutcome>) -> Settlement {
    match p {
        Plan::Write(pending) => pending.settle(outcome.cloned().unwrap_or(WriteOutcome::Applied)),
        Plan::Settled(s) => s,
    }
}

pub fn to_json(i: &Inputs) -> Json {
    Json {
        class: serde_json::to_string(&i.class).unwrap(),
        gateway: serde_json::to_string(&i.gateway).unwrap(),
        configuration: serde_json::to_string(&i.configuration).unwrap(),
        deployment: serde_json::to_string(&i.deployment).unwrap(),
        template: serde_json::to_string(&i.template).unwrap(),
        routes: serde_json::to_string(&i.routes).unwrap(),
        namespace_labels: serde_json::to_string(&i.namespace_labels).unwrap(),
    }
}

pub fn parse(j: &Json) -> Inputs {
    Inputs {
        class: serde_json::from_str(&j.class).unwrap(),
        gateway: serde_json::from_str(&j.gateway).unwrap(),
        configuration: serde_json::from_str(&j.configuration).unwrap(),
        deployment: serde_json::from_str(&j.deployment).unwrap(),
        template: serde_json::from_str(&j.template).unwrap(),
        routes: serde_json::from_str(&j.routes).unwrap(),
        namespace_labels: serde_json::from_str(&j.namespace_labels).unwrap(),
    }
}

/// The steady-state inputs with the GatewayConfiguration edited (generation 8, 3 replicas):
/// plan asks for an Update.
pub fn edited(mut i: Inputs) -> Inputs {
    i.configuration.metadata.generation = Some(8);
    if let Some(h) = i.configuration.spec.horizontal_scaling.as_mut() {
        h.replicas = Some(3);
    }
    i
}

/// One reconcile: plan, then settle with `outcome`.
pub fn reconcile(settings: &Settings, i: &Inputs, outcome: Option<&WriteOutcome>) -> Settlement {
    let snap = Snapshot::new(&i.gateway, &i.template)
        .with_gateway_class(Some(&i.class))
        .with_configuration(Some(&i.configuration))
        .with_deployment(Some(&i.deployment))
        .with_routes(&i.routes)
        .with_namespace_labels(&i.namespace_labels);
    settle_plan(plan(settings, snap, now()).unwrap(), outcome)
}

/// The default template scaled `k` times: `2k` containers (the two originals and copies
/// named `NAME-i`), `k` env vars on each original container (`MERIDIO_GATEWAY_NAME` and
/// `EXTRA_j`), `2k` volumes (copies named `NAME-i`).
pub fn scaled_template(k: usize) -> Deployment {
    let mut t = template::default_template();
    let spec = &mut t.object["spec"]["template"]["spec"];
    let originals = spec["containers"].as_array().unwrap().to_vec();
    let volumes = spec["volumes"].as_array().unwrap().to_vec();
    let mut containers = Vec::new();
    for i in 0..k {
        for c in &originals {
            let mut c = c.clone();
            if i == 0 {
                let mut env = c["env"].as_array().unwrap().to_vec();
                for j in 1..k {
                    env.push(Tree::from(
                        json!({"name": format!("EXTRA_{j}"), "value": format!("v{j}")}),
                    ));
                }
                c["env"] = Tree::from(env);
            } else {
                c["name"] = Tree::from(format!("{}-{i}", c["name"].as_str().unwrap()));
            }
            containers.push(c);
        }
    }
    let mut all_volumes = Vec::new();
    for i in 0..k {
        for v in &volumes {
            let mut v = v.clone();
            if i > 0 {
                v["name"] = Tree::from(format!("{}-{i}", v["name"].as_str().unwrap()));
            }
            all_volumes.push(v);
        }
    }
    spec["containers"] = Tree::from(containers);
    spec["volumes"] = Tree::from(all_volumes);
    t
}

/// Containers, env vars and volumes a template declares.
pub fn elements(t: &Deployment) -> usize {
    let spec = &t.object["spec"]["template"]["spec"];
    let containers = spec["containers"].as_array().unwrap();
    let env: usize = containers
        .iter()
        .map(|c| c["env"].as_array().map_or(0, <[Tree]>::len))
        .sum();
    containers.len() + env + spec["volumes"].as_array().unwrap().len()
}

/// The GatewayConfiguration CRD's bounds on `spec.internalSubnets` and
/// `spec.networkAttachments` (the `reconcile` docs, section "Validation"): validation
/// refuses more, so the scaled configuration grows them only this far.
const MAX_INTERNAL_SUBNETS: usize = 2;
const MAX_NETWORK_ATTACHMENTS: usize = 10;

/// The realistic inputs with the GatewayConfiguration scaled `k` times, in steady state
/// ([`converged`]): its internal subnets (an IPv4 /24 and an IPv6 /64, disjoint) and its
/// network attachments (distinct interfaces) `2k` each up to the CRD's bound (2 and 10),
/// and `2k` verticalScaling entries (the two originals and copies named `NAME-j`, which
/// name no container).
pub fn scaled_configuration(k: usize) -> Inputs {
    let mut i = realistic();
    let spec = &mut i.configuration.spec;
    spec.internal_subnets = (0..k)
        .take(MAX_INTERNAL_SUBNETS / 2)
        .flat_map(|j| {
            [
                format!("10.{}.{}.0/24", (j >> 8) & 0xff, j & 0xff),
                format!("fd00:{:x}:{:x}::/64", j >> 16, j & 0xffff),
            ]
        })
        .map(|cidr| serde_json::from_value(json!({"attachmentType": "NAD", "cidr": cidr})).unwrap())
        .collect();
    spec.network_attachments = (0..(2 * k).min(MAX_NETWORK_ATTACHMENTS))
        .map(|j| {
            serde_json::from_value(json!({"type": "NAD",
                "nad": {"name": format!("vlan-{j}"), "interface": format!("net{j}")}}))
            .unwrap()
        })
        .collect();
    if let Some(vertical) = spec.vertical_scaling.as_mut() {
        let originals = vertical.containers.clone();
        vertical.containers = (0..k)
            .flat_map(|j| {
                originals.iter().cloned().map(move |mut c| {
                    if j > 0 {
                        c.name = format!("{}-{j}", c.name);
                    }
                    c
                })
            })
            .collect();
    }
    converged(i)
}

/// The realistic inputs with `5k` L34Routes attached to the Gateway (one /32 each), in
/// steady state ([`converged`]).
pub fn scaled_routes(k: usize) -> Inputs {
    let mut i = realistic();
    i.routes = (0..5 * k)
        .map(|j| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("r{j}"), "namespace": "ns"},
                "spec": {"parentRefs": [{"name": "gw"}],
                         "destinationCIDRs": [format!("20.{}.{}.{}/32", j >> 16, (j >> 8) & 0xff, j & 0xff)]}
            }))
            .unwrap()
        })
        .collect();
    converged(i)
}

/// The realistic Gateway at the Gateway CRD's listener bound, with many routes, in steady
/// state ([`converged`]): 64 listeners (TCP, UDP and SCTP; a quarter admitting routes of
/// the Gateway's namespace, half of every namespace, a quarter of the namespaces labelled
/// `team: red`), and 1,000 L34Routes from 10 namespaces (every other one labelled), half of
/// them naming a listener by `sectionName`.
pub fn wide() -> Inputs {
    wide_with(64, 1000)
}

/// [`wide`] with `listeners` listeners and `routes` routes.
pub fn wide_with(listeners: usize, routes: usize) -> Inputs {
    let (listener_count, route_count) = (listeners, routes);
    let mut i = realistic();
    let protocols = ["TCP", "UDP", "SCTP"];
    let listeners: Vec<serde_json::Value> = (0..listener_count)
        .map(|l| {
            let from = match l % 4 {
                0 => json!({"from": "Same"}),
                1 => json!({"from": "Selector", "selector": {"matchLabels": {"team": "red"}}}),
                _ => json!({"from": "All"}),
            };
            json!({"name": format!("l{l}"), "port": 4000 + l, "protocol": protocols[l % 3],
                "allowedRoutes": {"namespaces": from}})
        })
        .collect();
    i.gateway.spec.listeners = serde_json::from_value(json!(listeners)).unwrap();
    let namespaces: Vec<String> = (0..10)
        .map(|n| {
            if n == 0 {
                "ns".to_owned()
            } else {
                format!("ns-{n}")
            }
        })
        .collect();
    i.namespace_labels = namespaces
        .iter()
        .enumerate()
        .map(|(n, ns)| {
            let team = if n % 2 == 0 { "red" } else { "blue" };
            (ns.clone(), [("team".to_owned(), team.to_owned())].into())
        })
        .collect();
    i.routes = (0..route_count)
        .map(|j| {
            let mut parent = json!({"name": "gw", "namespace": "ns"});
            if j % 2 == 1 {
                parent["sectionName"] = json!(format!("l{}", j % listener_count.max(1)));
            }
            serde_json::from_value(json!({
                "metadata": {"name": format!("r{j}"), "namespace": namespaces[j % 10]},
                "spec": {"parentRefs": [parent],
                         "destinationCIDRs": [format!("20.0.{}.{}/32", j >> 8, j & 0xff)]}
            }))
            .unwrap()
        })
        .collect();
    // In the order the Driver hands them to the plan: by namespace and name.
    i.routes.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    converged(i)
}

/// The sizes of [`admission`]'s inputs, each a dimension the `doubling` group of
/// `benches/reconcile.rs` doubles and the instruction guard grows.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Listeners of the Gateway (the CRD admits at most 64).
    pub listeners: usize,
    /// L34Routes attached to it.
    pub routes: usize,
    /// `matchLabels` entries of each listener's namespace selector.
    pub entries: usize,
    /// Namespaces the routes come from.
    pub namespaces: usize,
}

/// The realistic Gateway with `sizes.listeners` TCP listeners, each admitting routes from
/// the namespaces its `matchLabels` selector of `sizes.entries` entries selects, and
/// `sizes.routes` L34Routes spread over `sizes.namespaces` namespaces, each namespace
/// labelled with every entry (every listener admits every route, and a selector is read
/// whole), none naming a listener by `sectionName`; in the order the Driver hands them, in
/// steady state ([`converged`]). Route admission reads every listener's selector for each
/// namespace; it read it for each route when it was decided per route (issue #45 H1).
pub fn admission(sizes: Sizes) -> Inputs {
    let mut i = realistic();
    let selector: serde_json::Map<String, serde_json::Value> = (0..sizes.entries)
        .map(|e| (format!("example.com/k{e}"), json!("v")))
        .collect();
    let listeners: Vec<serde_json::Value> = (0..sizes.listeners)
        .map(|l| {
            json!({"name": format!("l{l}"), "port": 4000 + l, "protocol": "TCP",
                "allowedRoutes": {"namespaces": {"from": "Selector",
                    "selector": {"matchLabels": selector}}}})
        })
        .collect();
    i.gateway.spec.listeners = serde_json::from_value(json!(listeners)).unwrap();
    let labels: std::collections::BTreeMap<String, String> = selector
        .keys()
        .map(|k| (k.clone(), "v".to_owned()))
        .collect();
    let namespaces: Vec<String> = (0..sizes.namespaces).map(|n| format!("team-{n}")).collect();
    i.namespace_labels = namespaces
        .iter()
        .map(|ns| (ns.clone(), labels.clone()))
        .collect();
    i.routes = (0..sizes.routes)
        .map(|j| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("r{j}"), "namespace": namespaces[j % namespaces.len()]},
                "spec": {"parentRefs": [{"name": "gw", "namespace": "ns"}],
                         "destinationCIDRs": [format!("20.{}.{}.{}/32", j >> 16, (j >> 8) & 0xff, j & 0xff)]}
            }))
            .unwrap()
        })
        .collect();
    i.routes.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    converged(i)
}

/// `inputs` after the reconciles they call for: each Update the plan asks for is taken as
/// stored (the desired Deployment keeps the observed status, so its rollout stays
/// complete) and each status patch as written, until a reconcile writes nothing. Panics if
/// that takes more than four rounds.
pub fn converged(mut i: Inputs) -> Inputs {
    let settings = Settings::default();
    for _ in 0..4 {
        let snap = Snapshot::new(&i.gateway, &i.template)
            .with_gateway_class(Some(&i.class))
            .with_configuration(Some(&i.configuration))
            .with_deployment(Some(&i.deployment))
            .with_routes(&i.routes)
            .with_namespace_labels(&i.namespace_labels);
        let (deployment, settlement) = match plan(&settings, snap, now()).unwrap() {
            Plan::Write(pending) => {
                let desired = match pending.write() {
                    DeploymentWrite::Update { desired, .. } => desired.clone(),
                    DeploymentWrite::Create(_) => panic!("the LB Deployment exists"),
                };
                (Some(desired), pending.settle(WriteOutcome::Applied))
            }
            Plan::Settled(s) => (None, s),
        };
        if deployment.is_none() && settlement.status.is_none() {
            return i;
        }
        if let Some(d) = deployment {
            i.deployment = d;
        }
        if let Some(status) = settlement.status {
            i.gateway.status = status;
        }
    }
    panic!("the inputs do not reach a steady state")
}

/// Subnets, attachments and verticalScaling entries of the GatewayConfiguration
/// ([`scaled_configuration`]).
pub fn input_elements(i: &Inputs) -> usize {
    let spec = &i.configuration.spec;
    spec.internal_subnets.len()
        + spec.network_attachments.len()
        + spec
            .vertical_scaling
            .as_ref()
            .map_or(0, |v| v.containers.len())
}
