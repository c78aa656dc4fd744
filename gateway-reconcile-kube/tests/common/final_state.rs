//! The final state a story's run is compared by (`crash_points.rs`, `stale_reads.rs`).

use serde_json::{Value, json};

use super::{World, configuration_uids};

/// The final state a run is compared by: Gateway `gateway`'s conditions (but their times),
/// its addresses and listeners (idem), its LB Deployment `lb`'s labels, annotations, owners
/// and spec; the namespace, the Gateway's and the configurations' uids replaced by
/// placeholders.
pub async fn final_state(world: &World, gateway: &str, lb: &str) -> Value {
    let gateway = world.get("Gateway", gateway).await;
    let deployment = world.get_opt("Deployment", lb).await.unwrap_or_default();
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
