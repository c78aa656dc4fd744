//! What the stories on a real API server record and judge: every watch event of a
//! namespace's Gateways and Deployments, ordered by resourceVersion ([`Recorder`]), and the
//! statuses among them that claim what the stored Deployment did not carry
//! ([`false_claims`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::ResourceExt;
use kube::api::{ListParams, WatchEvent, WatchParams};
use serde_json::Value;

use super::{DOMAIN, World, applied, conditions};

/// One watch event: Gateways and Deployments, ordered by resourceVersion (one etcd
/// orders them all). The objects there when the recording starts come first, as listed.
#[derive(Debug, Clone)]
pub struct Seen {
    pub rv: u64,
    pub kind: &'static str,
    pub deleted: bool,
    pub object: Value,
}

/// Watches of the Gateways and Deployments of a namespace, from a list of both.
pub struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
    gap: Arc<Mutex<bool>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Recorder {
    pub async fn start(world: &World) -> Recorder {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let gap: Arc<Mutex<bool>> = Arc::default();
        let mut tasks = Vec::new();
        for kind in ["Gateway", "Deployment"] {
            let api = world.api(kind);
            let list = api
                .list(&ListParams::default())
                .await
                .unwrap_or_else(|e| panic!("list {kind}: {e}"));
            let mut version = list.metadata.resource_version.clone().expect("list rv");
            for object in list.items {
                seen.lock().expect("lock").push(Seen {
                    rv: object
                        .resource_version()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    kind,
                    deleted: false,
                    object: serde_json::to_value(object).expect("json"),
                });
            }
            let (into, gap_into) = (seen.clone(), gap.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    let Ok(events) = api
                        .watch(&WatchParams::default().timeout(60), &version)
                        .await
                    else {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    };
                    let mut events = std::pin::pin!(events);
                    while let Some(event) = events.next().await {
                        let (deleted, object) = match event {
                            Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => (false, o),
                            Ok(WatchEvent::Deleted(o)) => (true, o),
                            Ok(WatchEvent::Bookmark(b)) => {
                                version = b.metadata.resource_version;
                                continue;
                            }
                            Ok(WatchEvent::Error(status)) => {
                                if status.code == 410 {
                                    *gap_into.lock().expect("lock") = true;
                                }
                                break;
                            }
                            Err(_) => break,
                        };
                        let rv = object.resource_version().unwrap_or_default();
                        version = rv.clone();
                        into.lock().expect("lock").push(Seen {
                            rv: rv.parse().expect("a numeric resourceVersion"),
                            kind,
                            deleted,
                            object: serde_json::to_value(object).expect("json"),
                        });
                    }
                }
            }));
        }
        Recorder { seen, gap, tasks }
    }

    /// Every event so far, by resourceVersion; fails if a watch lost events.
    pub fn seen(&self) -> Vec<Seen> {
        assert!(
            !*self.gap.lock().expect("lock"),
            "a watch lost events (410 Gone)"
        );
        let mut seen = self.seen.lock().expect("lock").clone();
        seen.sort_by_key(|s| s.rv);
        seen
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The GatewayConfiguration generation a Deployment carries (its annotation), and the uid.
pub fn carried(d: &Value) -> (Option<i64>, Option<String>) {
    let annotations = &d["metadata"]["annotations"];
    (
        annotations[format!("{DOMAIN}/gatewayconfiguration-generation")]
            .as_str()
            .and_then(|g| g.parse().ok()),
        annotations[format!("{DOMAIN}/gatewayconfiguration-uid")]
            .as_str()
            .map(str::to_owned),
    )
}

/// The generation named after `generation ` in a condition message.
pub fn generation_in(message: &str) -> Option<i64> {
    let rest = message.split("generation ").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Every status Gateway `gateway` held that claims what its stored LB Deployment `lb` did
/// not carry at that moment: `Programmed` True naming another generation, with no
/// Deployment, or with a Deployment another Gateway (uid) controls; `ConfigurationApplied`
/// True naming a generation and uid it does not carry. `uids`: the namespace's
/// GatewayConfigurations by name.
pub fn false_claims(
    history: &[Seen],
    gateway: &str,
    lb: &str,
    uids: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut deployment: Option<&Value> = None;
    let mut last_status = Value::Null;
    for seen in history {
        if seen.kind == "Deployment" {
            if seen.object["metadata"]["name"] == lb {
                deployment = (!seen.deleted).then_some(&seen.object);
            }
            continue;
        }
        if seen.object["metadata"]["name"] != gateway {
            continue;
        }
        let status = &seen.object["status"];
        if seen.deleted || *status == last_status {
            continue;
        }
        last_status = status.clone();
        let c = conditions(&seen.object);
        let (generation, uid) = deployment.map(carried).unwrap_or_default();
        if let Some(p) = c.get("Programmed").filter(|p| p["status"] == "True") {
            let message = p["message"].as_str().unwrap_or_default();
            if deployment.is_none() {
                violations.push(format!(
                    "rv {}: Programmed True with no Deployment: {message}",
                    seen.rv
                ));
            } else if let Some(owner) = controller_uid(deployment)
                && seen.object["metadata"]["uid"]
                    .as_str()
                    .is_some_and(|gateway| gateway != owner)
            {
                violations.push(format!(
                    "rv {}: Programmed True, the Deployment is controlled by Gateway uid {owner}: {message}",
                    seen.rv
                ));
            } else if let Some(n) = generation_in(message)
                && generation != Some(n)
            {
                violations.push(format!(
                    "rv {}: Programmed names generation {n}, the Deployment carries {generation:?}: {message}",
                    seen.rv
                ));
            }
        }
        if let Some(a) = c.get(&applied()).filter(|a| a["status"] == "True") {
            // "GatewayConfiguration NS/NAME generation M is applied to Deployment NS/DEP"
            let message = a["message"].as_str().unwrap_or_default();
            let words: Vec<&str> = message.split(' ').collect();
            let configuration = words
                .get(1)
                .and_then(|w| w.split('/').nth(1))
                .unwrap_or_default();
            let wanted = words.get(3).and_then(|w| w.parse::<i64>().ok());
            let named = words.last().and_then(|w| w.split('/').nth(1));
            if deployment.is_none()
                || named != Some(lb)
                || wanted.is_none()
                || generation != wanted
                || uid.as_ref() != uids.get(configuration)
            {
                violations.push(format!(
                    "rv {}: ConfigurationApplied True, the Deployment carries generation {generation:?} \
                     uid {uid:?} ({configuration}'s uid {:?}): {message}",
                    seen.rv,
                    uids.get(configuration)
                ));
            }
        }
    }
    violations
}

/// The uid of the Gateway that controls Deployment `d` (its controller ownerReference).
pub fn controller_uid(d: Option<&Value>) -> Option<&str> {
    d?["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|o| o["controller"] == true)?["uid"]
        .as_str()
}

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
