//! SPEC revision 5, stories on a real kube-apiserver: the listener status at the Gateway
//! CRD's limits, the class's `supportedFeatures`, and a controller upgraded from a version
//! that wrote no listener status.
//! `e2e/run.sh` runs them under the control plane with `--ignored`; their harness (a
//! story's namespace, GatewayClass and in-process controller) is `common::story`.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

mod common;
use common::*;

/// The Gateway CRD's limits: listeners per Gateway, kinds per listener, conditions per
/// listener entry, addresses per Gateway.
const LISTENERS: usize = 64;
const KINDS: usize = 8;
const CONDITIONS: usize = 8;
const ADDRESSES: usize = 16;

/// Waits until `check` holds of Gateway `name`; the Gateway then.
async fn wait_gateway(
    story: &Story,
    name: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let gateway = story.get("Gateway", name).await;
        if check(&gateway) {
            return gateway;
        }
        assert!(
            start.elapsed() < WAIT,
            "Gateway {name} never became {what}: {:#}",
            gateway["status"]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The conditions of a listener entry, by type.
fn entry_conditions(entry: &Value) -> Vec<(String, String, String)> {
    entry["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or_default().to_owned();
            (text("type"), text("status"), text("reason"))
        })
        .collect()
}

/// A Gateway at the CRD's limits — 64 listeners, 8 allowed route kinds each, 5 foreign
/// conditions already on each listener entry (8 with the crate's 3), 16 routes giving 16
/// addresses — is served, and the API server takes its whole status: one entry per
/// listener in spec order, the routes counted on every accepted listener, the
/// unsupported protocol and the other route kinds reported, the foreign conditions kept.
/// The class publishes its supported features.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_gateway_at_the_crds_limits_gets_its_whole_listener_status() {
    let mut story = Story::create(settings()).await;
    story.configuration("conf", 1).await;
    let kinds: Vec<Value> = std::iter::once(json!({"group": DOMAIN, "kind": "L34Route"}))
        .chain((1..KINDS).map(|k| json!({"group": "example.com", "kind": format!("Kind{k}")})))
        .collect();
    let listeners: Vec<Value> = (0..LISTENERS)
        .map(|l| {
            // The last listener's protocol is one the LB does not carry.
            let protocol = if l + 1 == LISTENERS {
                "example.com/quic"
            } else {
                ["TCP", "UDP", "SCTP"][l % 3]
            };
            json!({"name": format!("l{l}"), "port": 1000 + l, "protocol": protocol,
                   "allowedRoutes": {"kinds": kinds}})
        })
        .collect();
    create(
        &story.admin,
        json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": { "name": "gw", "namespace": story.ns },
                "spec": { "gatewayClassName": story.class, "listeners": listeners,
                          "infrastructure": { "parametersRef": {
                              "group": DOMAIN, "kind": "GatewayConfiguration", "name": "conf" } } } }),
    )
    .await;
    // Another controller's conditions on every listener entry, before ours starts.
    let foreign: Vec<Value> = (0..CONDITIONS - 3)
        .map(|c| {
            json!({"type": format!("example.com/Foreign{c}"), "status": "True",
                        "reason": "Foreign", "message": "not ours",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"})
        })
        .collect();
    let entries: Vec<Value> = (0..LISTENERS)
        .map(|l| {
            json!({"name": format!("l{l}"), "supportedKinds": [], "attachedRoutes": 0,
                        "conditions": foreign})
        })
        .collect();
    story
        .api("Gateway")
        .patch_status(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"listeners": entries}})),
        )
        .await
        .expect("the foreign listener conditions");
    for r in 0..ADDRESSES {
        create(
            &story.admin,
            json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
                    "metadata": { "name": format!("r{r}"), "namespace": story.ns },
                    "spec": { "parentRefs": [{ "name": "gw" }],
                              "destinationCIDRs": [format!("20.0.0.{r}/32")],
                              "protocols": ["TCP"], "priority": 1 } }),
        )
        .await;
    }
    story.start().await;
    let gateway = wait_gateway(&story, "gw", "programmed with 16 addresses", |g| {
        healthy(&conditions(g))
            && g["status"]["addresses"]
                .as_array()
                .is_some_and(|a| a.len() == ADDRESSES)
            && g["status"]["listeners"].as_array().is_some_and(|l| {
                l.len() == LISTENERS && l.iter().all(|e| entry_conditions(e).len() == CONDITIONS)
            })
    })
    .await;
    let entries = gateway["status"]["listeners"]
        .as_array()
        .expect("listeners");
    for (l, entry) in entries.iter().enumerate() {
        assert_eq!(entry["name"], format!("l{l}"));
        let c = entry_conditions(entry);
        assert_eq!(
            c[0].0, "example.com/Foreign0",
            "foreign conditions keep their place"
        );
        let ours: Vec<(&str, &str, &str)> = c[5..]
            .iter()
            .map(|(t, s, r)| (t.as_str(), s.as_str(), r.as_str()))
            .collect();
        if l + 1 == LISTENERS {
            assert_eq!(entry["attachedRoutes"], 0);
            assert_eq!(entry["supportedKinds"], json!([]));
            assert_eq!(
                ours,
                [
                    ("Accepted", "False", "UnsupportedProtocol"),
                    ("Programmed", "False", "Invalid"),
                    ("ResolvedRefs", "False", "InvalidRouteKinds"),
                ]
            );
        } else {
            assert_eq!(entry["attachedRoutes"], ADDRESSES);
            assert_eq!(
                entry["supportedKinds"],
                json!([{"group": DOMAIN, "kind": "L34Route"}])
            );
            assert_eq!(
                ours,
                [
                    ("Accepted", "True", "Accepted"),
                    ("Programmed", "True", "Programmed"),
                    ("ResolvedRefs", "False", "InvalidRouteKinds"),
                ]
            );
        }
    }
    // The class's features, sorted, written with its Accepted.
    let classes: Api<DynamicObject> = Api::all_with(
        story.admin.clone(),
        &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
    );
    let class =
        serde_json::to_value(classes.get(&story.class).await.expect("class")).expect("json");
    assert_eq!(
        class["status"]["supportedFeatures"],
        json!([{"name": "Gateway"}, {"name": "GatewayInfrastructurePropagation"}])
    );
    assert!(
        is(&conditions(&class), "Accepted", "True", "Accepted"),
        "{class:#}"
    );
    story.stop().await;
}

/// A controller upgraded from a version that wrote no listener status (the status as it
/// left it: conditions and addresses, no `listeners`) writes each Gateway's status once —
/// the listeners appear — and no Deployment.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn an_upgraded_controller_writes_the_listeners_once_and_no_deployment() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let listed = |g: &Value| {
        g["status"]["listeners"]
            .as_array()
            .is_some_and(|l| l.len() == 1)
    };
    wait_gateway(&story, "gw", "listed", listed).await;
    story.stop().await;
    // The status as the previous version left it.
    story
        .api("Gateway")
        .patch_status(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"listeners": null}})),
        )
        .await
        .expect("remove the listener status");
    let before = story.requests().len();
    story.start().await;
    let gateway = wait_gateway(&story, "gw", "listed again", listed).await;
    assert_eq!(gateway["status"]["listeners"][0]["attachedRoutes"], 0);
    let since = settle_and_collect(&story, before, Duration::from_secs(3)).await;
    let writes: Vec<&Audited> = since.iter().filter(|a| is_write(a)).collect();
    assert_eq!(
        count(&since, "patch", "gateways", "status"),
        1,
        "{writes:#?}"
    );
    assert_eq!(
        writes
            .iter()
            .filter(|a| a.resource == "deployments")
            .count(),
        0,
        "{writes:#?}"
    );
    story.stop().await;
}
