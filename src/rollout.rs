//! What the observed Deployment's status says about its rollout.

use crate::wire::tree::Value;

use crate::wire::Deployment;

/// The rollout state of a Deployment, read from its `status`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rollout {
    /// kubectl's rule: `observedGeneration ≥ generation`, `updatedReplicas ≥ replicas`,
    /// `status.replicas ≤ updatedReplicas`, `availableReplicas ≥ updatedReplicas`.
    pub complete: bool,
    /// Set when the Progressing condition has reason `ProgressDeadlineExceeded` (and the
    /// status is current: `observedGeneration ≥ generation`).
    pub stalled: Option<Stall>,
}

/// A stalled rollout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The Progressing condition's message.
    pub message: String,
    /// Its `lastTransitionTime` (or `lastUpdateTime`), as written; `unknown` when absent.
    pub since: String,
}

/// The rollout state of `deployment`.
pub fn rollout(deployment: &Deployment) -> Rollout {
    let int = |path: &[&str]| deployment.get(path).and_then(Value::as_i64);
    let generation = int(&["metadata", "generation"]).unwrap_or(0);
    let Some(observed) = int(&["status", "observedGeneration"]) else {
        return Rollout::default();
    };
    if observed < generation {
        return Rollout::default();
    }
    let wanted = int(&["spec", "replicas"]).unwrap_or(1);
    let replicas = int(&["status", "replicas"]).unwrap_or(0);
    let updated = int(&["status", "updatedReplicas"]).unwrap_or(0);
    let available = int(&["status", "availableReplicas"]).unwrap_or(0);
    let complete = updated >= wanted && replicas <= updated && available >= updated;
    let stalled = deployment
        .get(&["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .find(|c| {
            c.get("type").and_then(Value::as_str) == Some("Progressing")
                && c.get("reason").and_then(Value::as_str) == Some("ProgressDeadlineExceeded")
        })
        .map(|c| {
            let text = |k: &str| c.get(k).and_then(Value::as_str);
            Stall {
                message: text("message").unwrap_or("").to_owned(),
                since: text("lastTransitionTime")
                    .or(text("lastUpdateTime"))
                    .unwrap_or("unknown")
                    .to_owned(),
            }
        });
    Rollout { complete, stalled }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observed_and_available_generation_is_complete() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
          "metadata": {"generation": 2}, "spec": {"replicas": 2},
          "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2}
        })).unwrap();
        assert!(rollout(&d).complete);
    }
    use serde_json::json;

    fn dep(v: serde_json::Value) -> Deployment {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn kubectl_rollout_rule() {
        let base = |status: serde_json::Value| {
            dep(json!({"metadata": {"generation": 3}, "spec": {"replicas": 2}, "status": status}))
        };
        let full = json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2});
        assert!(rollout(&base(full.clone())).complete);
        let cases = [
            json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2}),
            json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 2}),
            json!({"observedGeneration": 3, "replicas": 3, "updatedReplicas": 2, "availableReplicas": 2}),
            json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 1}),
            json!({}),
        ];
        for status in cases {
            assert!(!rollout(&base(status.clone())).complete, "{status}");
        }
        assert!(!rollout(&dep(json!({}))).complete);
    }

    #[test]
    fn progress_deadline_exceeded_is_a_stall_only_when_status_is_current() {
        let cond = json!([{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                           "message": "ReplicaSet \"x\" has timed out progressing.",
                           "lastTransitionTime": "2026-01-01T00:10:00Z"}]);
        let current = dep(
            json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "conditions": cond}}),
        );
        let stall = rollout(&current).stalled.unwrap();
        assert_eq!(stall.since, "2026-01-01T00:10:00Z");
        assert_eq!(stall.message, "ReplicaSet \"x\" has timed out progressing.");
        let old = dep(
            json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1, "conditions": cond}}),
        );
        assert_eq!(rollout(&old).stalled, None);
    }
}
