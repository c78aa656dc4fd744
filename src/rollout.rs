//! What the observed Deployment's status says about its rollout, and the part of the status
//! that says it ([`keep_read_status`]): nothing else of the crate reads a Deployment's
//! status.

use crate::wire::tree::{Map, Value};

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

/// The counts of `status` [`rollout`] reads; of `status.conditions` it reads the stalls
/// alone ([`is_stall`]).
const READ_COUNTS: [&str; 4] = [
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "availableReplicas",
];

/// Whether a status condition says the rollout stalled: `Progressing` with reason
/// `ProgressDeadlineExceeded`.
fn is_stall(condition: &Map) -> bool {
    condition.get("type").and_then(Value::as_str) == Some("Progressing")
        && condition.get("reason").and_then(Value::as_str) == Some("ProgressDeadlineExceeded")
}

/// The rollout state of `deployment`.
pub fn rollout(deployment: &Deployment) -> Rollout {
    let int = |path: &[&str]| deployment.get(path).and_then(Value::as_i64);
    let generation = int(&["metadata", "generation"]).unwrap_or(0);
    let [observed, replicas, updated, available] = READ_COUNTS.map(|count| int(&["status", count]));
    let Some(observed) = observed else {
        return Rollout::default();
    };
    if observed < generation {
        return Rollout::default();
    }
    let wanted = int(&["spec", "replicas"]).unwrap_or(1);
    let replicas = replicas.unwrap_or(0);
    let updated = updated.unwrap_or(0);
    let available = available.unwrap_or(0);
    let complete = updated >= wanted && replicas <= updated && available >= updated;
    let stalled = deployment
        .get(&["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .find(|c| is_stall(c))
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

/// Drops from a Deployment's `status` what [`rollout`] does not read: every key but
/// [`READ_COUNTS`] and `conditions`, and every condition but the stalls. [`rollout`] of
/// the result is [`rollout`] of the whole, and nothing else of the crate reads a
/// Deployment's status (a write leaves it out: the main resource ignores it), so a cache
/// of LB Deployments holds them so (`resource::Watched`): a status is about a tenth of an
/// LB Deployment held, most of it two conditions' messages and times. A `status` that is
/// not an object is left as it is.
#[cfg(any(feature = "kube", test))]
pub(crate) fn keep_read_status(object: &mut Map) {
    let Some(Value::Object(status)) = object.get_mut("status") else {
        return;
    };
    status.retain(|key, value| match key {
        "conditions" => {
            if let Value::Array(conditions) = value {
                // Moved, not copied: the stalls are kept as read.
                *conditions = std::mem::take(conditions)
                    .into_vec()
                    .into_iter()
                    .filter(|c| c.as_object().is_some_and(is_stall))
                    .collect();
            }
            value.as_array().is_none_or(|c| !c.is_empty())
        }
        key => READ_COUNTS.contains(&key),
    });
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

    #[test]
    fn keep_read_status_keeps_the_counts_and_the_stalls_alone() {
        let mut d = dep(json!({
            "metadata": {"generation": 2}, "spec": {"replicas": 2},
            "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
                "readyReplicas": 2, "availableReplicas": 2, "collisionCount": 1,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                     "message": "Deployment has minimum availability."},
                    {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                     "message": "timed out", "lastTransitionTime": "2026-01-01T00:10:00Z"},
                    "not a condition"
                ]}
        }));
        let whole = rollout(&d);
        keep_read_status(&mut d.object);
        assert_eq!(rollout(&d), whole);
        assert_eq!(
            d.to_json()["status"],
            json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
                   "availableReplicas": 2,
                   "conditions": [{"type": "Progressing", "status": "False",
                       "reason": "ProgressDeadlineExceeded", "message": "timed out",
                       "lastTransitionTime": "2026-01-01T00:10:00Z"}]})
        );
        // No stall: no conditions key; a status that is not an object stays.
        let mut d = dep(json!({"status": {"replicas": 1, "conditions": [
            {"type": "Progressing", "reason": "NewReplicaSetAvailable"}]}}));
        keep_read_status(&mut d.object);
        assert_eq!(d.to_json()["status"], json!({"replicas": 1}));
        let mut d = dep(json!({"status": "odd", "spec": {"replicas": 1}}));
        keep_read_status(&mut d.object);
        assert_eq!(
            d.to_json(),
            json!({"status": "odd", "spec": {"replicas": 1}})
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn scalar() -> impl Strategy<Value = serde_json::Value> {
            prop_oneof![
                (-1i64..4).prop_map(serde_json::Value::from),
                Just(json!("2")),
                Just(json!(null)),
                Just(json!(1.5)),
            ]
        }

        fn condition() -> impl Strategy<Value = serde_json::Value> {
            (
                prop::sample::select(vec!["Progressing", "Available", "ReplicaFailure"]),
                prop::sample::select(vec![
                    "ProgressDeadlineExceeded",
                    "NewReplicaSetAvailable",
                    "ReplicaSetUpdated",
                ]),
                prop::option::of(prop::sample::select(vec!["m1", "m2"])),
                prop::option::of(prop::sample::select(vec!["t1", "t2"])),
                prop::option::of(prop::sample::select(vec!["u1", "u2"])),
            )
                .prop_map(|(kind, reason, message, transition, update)| {
                    let mut c = json!({"type": kind, "reason": reason, "status": "False"});
                    for (key, value) in [
                        ("message", message),
                        ("lastTransitionTime", transition),
                        ("lastUpdateTime", update),
                    ] {
                        if let Some(value) = value {
                            c[key] = json!(value);
                        }
                    }
                    c
                })
        }

        fn status() -> impl Strategy<Value = serde_json::Value> {
            let key = prop::sample::select(vec![
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "availableReplicas",
                "readyReplicas",
                "unavailableReplicas",
                "collisionCount",
            ]);
            (
                prop::collection::btree_map(key, scalar(), 0..7),
                prop::option::of(prop::collection::vec(condition(), 0..4)),
            )
                .prop_map(|(counts, conditions)| {
                    let mut status: serde_json::Map<String, serde_json::Value> =
                        counts.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    if let Some(conditions) = conditions {
                        status.insert("conditions".into(), json!(conditions));
                    }
                    serde_json::Value::Object(status)
                })
        }

        proptest! {
            /// The rollout of a Deployment held with its read status alone is the rollout of
            /// the whole, and the status kept holds nothing else.
            #[test]
            fn rollout_of_the_kept_status_is_rollout_of_the_whole(
                generation in prop::option::of(0i64..4),
                replicas in prop::option::of(0i64..4),
                status in status(),
            ) {
                let mut object = json!({"metadata": {}, "spec": {}, "status": status});
                if let Some(g) = generation {
                    object["metadata"]["generation"] = json!(g);
                }
                if let Some(r) = replicas {
                    object["spec"]["replicas"] = json!(r);
                }
                let whole = dep(object);
                let mut kept = whole.clone();
                keep_read_status(&mut kept.object);
                prop_assert_eq!(rollout(&kept), rollout(&whole));
                let status = kept.object.get("status").and_then(Value::as_object).unwrap();
                for (key, value) in status.iter() {
                    if key == "conditions" {
                        let conditions = value.as_array().unwrap();
                        prop_assert!(!conditions.is_empty());
                        prop_assert!(conditions.iter().all(|c| is_stall(c.as_object().unwrap())));
                    } else {
                        prop_assert!(READ_COUNTS.contains(&key), "{}", key);
                    }
                }
                prop_assert_eq!(kept.object.get("spec"), whole.object.get("spec"));
                prop_assert_eq!(kept.object.get("metadata"), whole.object.get("metadata"));
            }
        }
    }
}
