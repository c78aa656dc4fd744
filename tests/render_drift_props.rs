//! Properties of render and drift over generated inputs: a rendered Deployment, once the API
//! server has defaulted it, never shows drift; rendering over its own output changes nothing.

use gateway_reconcile::sim::defaulting::apply_server_defaults;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};
use gateway_reconcile::{DeploymentWrite, Settings, Snapshot, plan, template};
use proptest::prelude::*;
use serde_json::{Value, json};

fn quantity() -> impl Strategy<Value = (String, String)> {
    // The same value in the spelling a user writes and the one the server writes back.
    prop_oneof![
        Just(("0.5".to_owned(), "500m".to_owned())),
        Just(("1024Mi".to_owned(), "1Gi".to_owned())),
        Just(("1e3".to_owned(), "1k".to_owned())),
        (1u32..4000).prop_map(|m| (format!("{m}m"), format!("{m}m"))),
        (1u32..64).prop_map(|g| (format!("{}Mi", g * 1024), format!("{g}Gi"))),
    ]
}

prop_compose! {
    fn resources()(cpu in quantity(), mem in quantity(), limit in proptest::option::of(quantity()))
        -> Value {
        let mut r = json!({"requests": {"cpu": cpu.0, "memory": mem.0}});
        if let Some(l) = limit {
            r["limits"] = json!({"memory": l.0});
        }
        r
    }
}

prop_compose! {
    fn configuration()(
        generation in 1i64..1_000_000,
        nads in proptest::collection::vec(("[a-z]{1,8}", proptest::option::of("[a-z]{1,5}")), 0..4),
        v4 in any::<bool>(), v6 in any::<bool>(),
        replicas in 0i32..10, enforce_replicas in any::<bool>(),
        lb in proptest::option::of((resources(), any::<bool>())),
        router in proptest::option::of((resources(), any::<bool>())),
    ) -> GatewayConfiguration {
        let attachments: Vec<Value> = nads.iter().enumerate().map(|(i, (name, ns))| {
            let mut nad = json!({"name": name, "interface": format!("net{i}")});
            if let Some(ns) = ns { nad["namespace"] = json!(ns); }
            json!({"type": "NAD", "nad": nad})
        }).collect();
        let mut subnets = Vec::new();
        if v4 || !v6 { subnets.push(json!({"attachmentType": "NAD", "cidr": "169.254.100.0/24"})); }
        if v6 { subnets.push(json!({"attachmentType": "NAD", "cidr": "fd00:100::/64"})); }
        let mut containers = Vec::new();
        for (name, entry) in [("loadbalancer", lb), ("router", router)] {
            if let Some((resources, enforce)) = entry {
                containers.push(json!({"name": name, "resources": resources, "enforceResources": enforce}));
            }
        }
        serde_json::from_value(json!({
            "metadata": {"name": "conf", "namespace": "ns", "generation": generation},
            "spec": {
                "networkAttachments": attachments,
                "internalSubnets": subnets,
                "horizontalScaling": {"replicas": replicas, "enforceReplicas": enforce_replicas},
                "verticalScaling": {"containers": containers}
            }
        })).unwrap()
    }
}

prop_compose! {
    fn gateway()(labels in proptest::collection::btree_map("[a-z]{1,6}", "[a-z0-9]{0,6}", 0..4),
                 annotations in proptest::collection::btree_map("[a-z]{1,6}\\.io/[a-z]{1,4}", "[ -~]{0,12}", 0..3))
        -> Gateway {
        serde_json::from_value(json!({
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
            "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {
                "labels": labels, "annotations": annotations,
                "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        })).unwrap()
    }
}

fn class() -> GatewayClass {
    serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}))
        .unwrap()
}

fn now() -> jiff::Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn action(
    gw: &Gateway,
    conf: &GatewayConfiguration,
    template: &Deployment,
    observed: Option<&Deployment>,
) -> Option<DeploymentWrite> {
    let settings = Settings::default();
    let class = class();
    let snapshot = Snapshot::new(gw, template)
        .with_gateway_class(Some(&class))
        .with_configuration(Some(conf))
        .with_deployment(observed);
    plan(&settings, snapshot, now()).unwrap().write().cloned()
}

/// What the API server returns after storing `d`.
fn stored(mut d: Deployment) -> Deployment {
    apply_server_defaults(&mut d);
    d.object["metadata"]["uid"] = "dep-uid".into();
    d.object["metadata"]["resourceVersion"] = "42".into();
    d.object["metadata"]["generation"] = 1.into();
    d.object["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z".into();
    d
}

/// Spell the quantities of the desired configuration the way the server would.
fn respelled(conf: &GatewayConfiguration) -> GatewayConfiguration {
    let text = serde_json::to_string(conf).unwrap();
    let text = text
        .replace("\"0.5\"", "\"500m\"")
        .replace("\"1e3\"", "\"1k\"");
    serde_json::from_str(&text).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_created_and_defaulted_deployment_shows_no_drift(gw in gateway(), conf in configuration()) {
        let template = template::default_template();
        let Some(DeploymentWrite::Create(desired)) = action(&gw, &conf, &template, None) else {
            panic!("create expected");
        };
        // Rendering over the object as rendered (no server in between) finds nothing to do.
        let mut raw = desired.clone();
        raw.object["metadata"]["uid"] = "dep-uid".into();
        let again = action(&gw, &conf, &template, Some(&raw));
        prop_assert!(again.is_none(), "{:?}", again);
        let observed = stored(desired);
        let next = action(&gw, &conf, &template, Some(&observed));
        prop_assert!(next.is_none(), "{:?}", next);
        // Nor when the configuration is spelled the way the server spells quantities.
        let next = action(&gw, &respelled(&conf), &template, Some(&observed));
        prop_assert!(next.is_none(), "{:?}", next);
    }

    #[test]
    fn rendering_over_its_own_output_changes_nothing(gw in gateway(), conf in configuration(), edited in configuration()) {
        let template = template::default_template();
        let Some(DeploymentWrite::Create(desired)) = action(&gw, &conf, &template, None) else {
            panic!("create expected");
        };
        let mut observed = stored(desired);
        // Whatever the edit, one update reaches a fixed point: rendering over the update's
        // result (defaulted by the server) gives the same object and no drift.
        if let Some(DeploymentWrite::Update { desired, .. }) = action(&gw, &edited, &template, Some(&observed)) {
            observed = stored(desired.clone());
            if let Some(DeploymentWrite::Update { desired: again, drift }) = action(&gw, &edited, &template, Some(&observed)) {
                prop_assert!(false, "drift after an update: {:?}\n{}", drift, serde_json::to_string(&again).unwrap());
            }
        }
        let first = action(&gw, &edited, &template, Some(&observed));
        let second = action(&gw, &edited, &template, Some(&observed));
        prop_assert_eq!(first, second);
    }
}
