//! A run's final state, by which runs of one scenario are compared (`crash_points.rs`,
//! `unobserved.rs`): what the controller wrote, without what differs between runs.

use std::collections::BTreeMap;

use kube::ResourceExt;
use kube::api::ListParams;
use serde_json::{Value, json};

use super::World;

/// The namespace's GatewayConfigurations' uids by name.
pub async fn configuration_uids(world: &World) -> BTreeMap<String, String> {
    world
        .api("GatewayConfiguration")
        .list(&ListParams::default())
        .await
        .expect("list GatewayConfigurations")
        .items
        .into_iter()
        .map(|c| (c.name_any(), c.uid().unwrap_or_default()))
        .collect()
}

/// The final state a run is compared by: Gateway `name`'s conditions (but their times),
/// its addresses and listeners (idem), its `deployment`'s labels, annotations, owners and
/// spec; the namespace, the Gateway's and the configurations' uids replaced by
/// placeholders.
pub async fn final_state(world: &World, name: &str, deployment: &str) -> Value {
    let gateway = world.get("Gateway", name).await;
    let deployment = world
        .get_opt("Deployment", deployment)
        .await
        .unwrap_or_default();
    let timeless = |list: &Value| -> Value {
        let mut list: Vec<Value> = list
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let mut c = c.clone();
                if let Some(c) = c.as_object_mut() {
                    c.remove("lastTransitionTime");
                }
                c
            })
            .collect();
        list.sort_by_key(|c| c["type"].to_string());
        json!(list)
    };
    let listeners: Vec<Value> = gateway["status"]["listeners"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let mut l = l.clone();
            l["conditions"] = timeless(&l["conditions"]);
            l
        })
        .collect();
    let state = json!({
        "conditions": timeless(&gateway["status"]["conditions"]),
        "addresses": gateway["status"]["addresses"],
        "listeners": listeners,
        "deployment": {
            "labels": deployment["metadata"]["labels"],
            "annotations": deployment["metadata"]["annotations"],
            "ownerReferences": deployment["metadata"]["ownerReferences"],
            "spec": deployment["spec"],
        },
    });
    let mut text = state.to_string();
    text = text.replace(
        gateway["metadata"]["uid"].as_str().unwrap_or("?"),
        "<gateway-uid>",
    );
    for (name, uid) in configuration_uids(world).await {
        text = text.replace(&uid, &format!("<{name}-uid>"));
    }
    text = text.replace(&world.ns, "<ns>");
    serde_json::from_str(&text).expect("json")
}
