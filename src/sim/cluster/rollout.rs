//! The crude Deployment controller: a Deployment's `status` as a rollout completes,
//! progresses or stalls.

use super::server::Server;
use super::store::deployment_metadata;
use super::{Cluster, ClusterError, Kind, format_time};
use crate::wire::Deployment;
use crate::wire::tree::{Map, Value, tree_json as json};

/// What the crude Deployment controller does to the Deployment's status (a scenario's
/// `rollout` step). Not `rollout::Rollout`, the crate's reading of a Deployment's
/// rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutState {
    /// The rollout finished: every replica updated, ready and available.
    Complete,
    /// The new ReplicaSet exists, no Pod of it is ready yet.
    Progressing,
    /// The rollout passed its progress deadline (`ProgressDeadlineExceeded`).
    Stalled,
}

impl RolloutState {
    /// The word the scenario format uses (`complete`, `progressing`, `stalled`).
    pub fn key(self) -> &'static str {
        match self {
            RolloutState::Complete => "complete",
            RolloutState::Progressing => "progressing",
            RolloutState::Stalled => "stalled",
        }
    }

    /// The rollout named by a scenario word.
    pub fn from_key(key: &str) -> Option<RolloutState> {
        [
            RolloutState::Complete,
            RolloutState::Progressing,
            RolloutState::Stalled,
        ]
        .into_iter()
        .find(|r| r.key() == key)
    }
}

impl Cluster {
    /// Runs the crude Deployment controller once: rewrites the Deployment's `status` (a
    /// status write: `resourceVersion` changes, `generation` does not).
    pub fn rollout(&mut self, rollout: RolloutState) -> Result<(), ClusterError> {
        self.server.roll_out(self.deployment.as_mut(), rollout)
    }
}

impl Server {
    /// The crude Deployment controller's status write to `deployment` (none: there is no
    /// Deployment to roll out, an error).
    pub(crate) fn roll_out(
        &mut self,
        deployment: Option<&mut Deployment>,
        rollout: RolloutState,
    ) -> Result<(), ClusterError> {
        let now = format_time(self.now);
        let rv = self.next_revision();
        let Some(deployment) = deployment else {
            return Err(ClusterError::Missing {
                kind: Kind::Deployment,
                operation: "roll out",
            });
        };
        let generation = deployment
            .get(&["metadata", "generation"])
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let replicas = deployment
            .get(&["spec", "replicas"])
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let name = deployment.name().unwrap_or("");
        let template = deployment
            .get(&["spec", "template"])
            .map(Value::to_string)
            .unwrap_or_default();
        let replica_set = format!("{name}-{}", pod_template_hash(&template));
        let old: Vec<Value> = deployment
            .get(&["status", "conditions"])
            .and_then(Value::as_array)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let condition = |type_: &str, status: &str, reason: &str, message: String| {
            let kept = old.iter().find(|c| {
                c.get("type").and_then(Value::as_str) == Some(type_)
                    && c.get("status").and_then(Value::as_str) == Some(status)
            });
            let since = kept
                .and_then(|c| c.get("lastTransitionTime").cloned())
                .unwrap_or_else(|| Value::from(now.as_str()));
            json!({
                "type": type_, "status": status, "reason": reason, "message": message,
                "lastUpdateTime": now, "lastTransitionTime": since,
            })
        };
        let available = |yes: bool| {
            if yes {
                condition(
                    "Available",
                    "True",
                    "MinimumReplicasAvailable",
                    "Deployment has minimum availability.".into(),
                )
            } else {
                condition(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    "Deployment does not have minimum availability.".into(),
                )
            }
        };
        let (updated, ready, conditions) = match rollout {
            RolloutState::Complete => (
                replicas,
                replicas,
                vec![
                    available(true),
                    condition(
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        format!("ReplicaSet {replica_set:?} has successfully progressed."),
                    ),
                ],
            ),
            RolloutState::Progressing => (
                0,
                0,
                vec![
                    available(false),
                    condition(
                        "Progressing",
                        "True",
                        "ReplicaSetUpdated",
                        format!("ReplicaSet {replica_set:?} is progressing."),
                    ),
                ],
            ),
            // The new Pods exist but never became ready: the usual way a rollout stalls.
            RolloutState::Stalled => (
                replicas,
                0,
                vec![
                    available(false),
                    condition(
                        "Progressing",
                        "False",
                        "ProgressDeadlineExceeded",
                        format!("ReplicaSet {replica_set:?} has timed out progressing."),
                    ),
                ],
            ),
        };
        let mut status = Map::new();
        status.insert("observedGeneration", json!(generation));
        for (key, count) in [
            ("replicas", replicas),
            ("updatedReplicas", updated),
            ("readyReplicas", ready),
            ("availableReplicas", ready),
            ("unavailableReplicas", replicas - ready),
        ] {
            if count > 0 {
                status.insert(key, json!(count));
            }
        }
        status.insert("conditions", Value::from(conditions));
        if let Some(why) = refused_status(&status) {
            return Err(ClusterError::Malformed {
                kind: Kind::Deployment,
                why,
            });
        }
        deployment.object.insert("status", Value::Object(status));
        deployment_metadata(deployment).insert("resourceVersion", Value::from(rv));
        Ok(())
    }
}

/// Why the API server refuses a Deployment `status` (its status validation: counts not
/// negative, none of `updatedReplicas`, `readyReplicas`, `availableReplicas` above
/// `replicas`, `availableReplicas` not above `readyReplicas`), in the server's words; `None`
/// when it stores it. An absent count is 0. The simulated status writes go through it, so
/// a status the real server would refuse is refused here too.
pub(crate) fn refused_status(status: &Map) -> Option<String> {
    let count = |key: &str| status.get(key).and_then(Value::as_i64).unwrap_or(0);
    let replicas = count("replicas");
    for key in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ] {
        if count(key) < 0 {
            return Some(format!(
                "status.{key}: Invalid value: {}: must be greater than or equal to 0",
                count(key)
            ));
        }
    }
    for key in ["updatedReplicas", "readyReplicas", "availableReplicas"] {
        if count(key) > replicas {
            return Some(format!(
                "status.{key}: Invalid value: {}: cannot be greater than status.replicas",
                count(key)
            ));
        }
    }
    let (available, ready) = (count("availableReplicas"), count("readyReplicas"));
    (available > ready).then(|| {
        format!("status.availableReplicas: Invalid value: {available}: cannot be greater than readyReplicas")
    })
}

/// A short, stable hash of the pod template, standing in for `pod-template-hash`.
fn pod_template_hash(template: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in template.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:09x}", hash & 0xf_ffff_ffff)
}

#[cfg(test)]
mod tests;
