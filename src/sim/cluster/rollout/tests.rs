//! Unit tests of the crude Deployment controller.

use std::time::Duration;

use crate::sim::cluster::tests::*;
use crate::sim::cluster::*;

#[test]
fn rollout_writes_status_like_the_deployment_controller() {
    let mut c = cluster(None);
    assert_eq!(
        c.rollout(RolloutState::Complete).unwrap_err().to_string(),
        "cannot roll out: there is no deployment"
    );
    let mut c = cluster(Some(lb("77")));
    c.rollout(RolloutState::Progressing).unwrap();
    let d = c.deployment().unwrap().clone();
    assert_eq!(generation(&d), 4);
    assert_ne!(rv(&d), "77");
    let s = &d["status"];
    assert_eq!(s["observedGeneration"], 4);
    assert_eq!(s["replicas"], 3);
    assert!(
        s.get("updatedReplicas").is_none(),
        "zero counts are omitted"
    );
    assert!(s.get("availableReplicas").is_none());
    assert_eq!(s["conditions"][1]["reason"], "ReplicaSetUpdated");
    assert_eq!(s["conditions"][0]["status"], "False");

    c.advance(Duration::from_secs(60)).unwrap();
    c.rollout(RolloutState::Complete).unwrap();
    let s = c.deployment().unwrap()["status"].clone();
    for key in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(s[key], 3, "{key}");
    }
    assert_eq!(s["conditions"][0]["type"], "Available");
    assert_eq!(s["conditions"][0]["status"], "True");
    assert_eq!(s["conditions"][1]["type"], "Progressing");
    assert_eq!(s["conditions"][1]["status"], "True");
    assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
    assert_eq!(
        s["conditions"][1]["lastTransitionTime"], "2026-01-01T00:00:00Z",
        "Progressing stayed True: its transition time is kept"
    );
    assert_eq!(
        s["conditions"][0]["lastTransitionTime"],
        "2026-01-01T00:01:00Z"
    );

    c.rollout(RolloutState::Stalled).unwrap();
    let s = c.deployment().unwrap()["status"].clone();
    let progressing = &s["conditions"][1];
    assert_eq!(progressing["status"], "False");
    assert_eq!(progressing["reason"], "ProgressDeadlineExceeded");
    let message = progressing["message"].as_str().unwrap();
    assert!(message.starts_with("ReplicaSet \"sllbr-gw-"), "{message}");
    assert!(
        message.ends_with("\" has timed out progressing."),
        "{message}"
    );
    assert_eq!(s["updatedReplicas"], 3);
    assert!(s.get("availableReplicas").is_none());
}

/// The server's status validation, as the replay showed it: more available than total
/// replicas is refused (422, `status.availableReplicas: Invalid value: 4: cannot be greater
/// than status.replicas`); every status the crude controller writes passes it.
#[test]
fn a_status_the_server_refuses_is_refused() {
    use super::refused_status;
    use crate::wire::tree::{Value as Tree, tree_json};
    let status = |v: Tree| match v {
        Tree::Object(map) => map,
        other => panic!("not an object: {other}"),
    };
    assert_eq!(
        refused_status(&status(
            tree_json!({"replicas": 3, "readyReplicas": 4, "availableReplicas": 4})
        ))
        .as_deref(),
        Some("status.readyReplicas: Invalid value: 4: cannot be greater than status.replicas")
    );
    assert_eq!(
        refused_status(&status(
            tree_json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 4})
        ))
        .as_deref(),
        Some("status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas")
    );
    assert_eq!(
        refused_status(&status(tree_json!({"availableReplicas": 1}))).as_deref(),
        Some("status.availableReplicas: Invalid value: 1: cannot be greater than status.replicas"),
        "an absent count is 0"
    );
    assert_eq!(
        refused_status(&status(
            tree_json!({"replicas": 3, "readyReplicas": 1, "availableReplicas": 2})
        ))
        .as_deref(),
        Some("status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas")
    );
    assert_eq!(
        refused_status(&status(tree_json!({"replicas": -1}))).as_deref(),
        Some("status.replicas: Invalid value: -1: must be greater than or equal to 0")
    );
    assert_eq!(
        refused_status(&status(
            tree_json!({"replicas": 3, "availableReplicas": 3, "readyReplicas": 3})
        )),
        None
    );
    let mut c = cluster(Some(lb("77")));
    for state in [
        RolloutState::Progressing,
        RolloutState::Stalled,
        RolloutState::Complete,
    ] {
        c.rollout(state).unwrap();
        let s = status(c.deployment().unwrap().get(&["status"]).unwrap().clone());
        assert_eq!(refused_status(&s), None, "{state:?}");
    }
}
