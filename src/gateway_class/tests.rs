//! The class table, row by row, and its bookkeeping.

use serde_json::{Value, json};

use super::*;

const OURS: &str = "meridio-2.nordix.org/gateway-controller";
const NOW: &str = "2026-01-01T00:00:00Z";
const LATER: &str = "2026-01-01T01:00:00Z";

fn class(spec: Value, conditions: Value) -> GatewayClass {
    serde_json::from_value(json!({
        "metadata": {"name": "meridio", "generation": 3, "resourceVersion": "17"},
        "spec": spec,
        "status": {"conditions": conditions}
    }))
    .unwrap()
}

fn settle(class: &GatewayClass, now: &str) -> ClassSettlement {
    settle_class(&Settings::default(), class, now.parse().unwrap()).unwrap()
}

fn accepted(settled: &ClassSettlement) -> Condition {
    find(settled.conditions.as_deref().unwrap(), ACCEPTED)
        .unwrap()
        .clone()
}

#[test]
fn the_table() {
    let rows = [
        (
            json!({"controllerName": OURS}),
            Some((
                "True",
                "Accepted",
                format!("GatewayClass accepted by {OURS}"),
            )),
        ),
        (
            json!({"controllerName": OURS, "parametersRef": {"group": "g", "kind": "K", "name": "p"}}),
            Some((
                "False",
                "InvalidParameters",
                format!(
                    "parametersRef on a GatewayClass is not supported by {OURS}: set spec.infrastructure.parametersRef on each Gateway"
                ),
            )),
        ),
        (json!({"controllerName": "example.com/other"}), None),
    ];
    for (spec, want) in rows {
        let settled = settle(&class(spec.clone(), json!([])), NOW);
        match want {
            None => assert_eq!(settled.conditions, None, "{spec}"),
            Some((status, reason, message)) => {
                let c = accepted(&settled);
                assert_eq!(
                    (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
                    (status, reason, message.as_str()),
                    "{spec}"
                );
                assert_eq!(c.observed_generation, Some(3));
                assert_eq!(c.last_transition_time, NOW);
            }
        }
    }
}

#[test]
fn nothing_is_written_when_nothing_changed_and_foreign_conditions_stay() {
    let foreign = json!({"type": "Other", "status": "True", "reason": "R", "message": "m",
        "lastTransitionTime": "2025-01-01T00:00:00Z"});
    let first = settle(
        &class(json!({"controllerName": OURS}), json!([foreign])),
        NOW,
    );
    let written = first.conditions.clone().unwrap();
    assert_eq!(written.len(), 2);
    assert_eq!(
        written[0].type_, "Other",
        "the foreign condition keeps its place"
    );
    let again = settle(
        &class(
            json!({"controllerName": OURS}),
            serde_json::to_value(&written).unwrap(),
        ),
        LATER,
    );
    assert_eq!(again.conditions, None);
    assert_eq!(again.status_patch(), None);
}

#[test]
fn the_transition_time_moves_only_with_the_status() {
    let ours = json!({"controllerName": OURS});
    let with_parameters = json!({"controllerName": OURS, "parametersRef": {"name": "p"}});
    let accepted_true = settle(&class(ours.clone(), json!([])), NOW)
        .conditions
        .unwrap();
    let rejected = settle(
        &class(
            with_parameters.clone(),
            serde_json::to_value(&accepted_true).unwrap(),
        ),
        LATER,
    );
    let c = accepted(&rejected);
    assert_eq!(
        (c.status.as_str(), c.last_transition_time.as_str()),
        ("False", LATER)
    );
    // A generation bump alone refreshes observedGeneration, not the time.
    let mut bumped = class(ours, serde_json::to_value(&accepted_true).unwrap());
    bumped.metadata.generation = Some(4);
    let c = accepted(&settle(&bumped, LATER));
    assert_eq!(
        (c.observed_generation, c.last_transition_time.as_str()),
        (Some(4), NOW)
    );
}

#[test]
fn a_stale_class_writes_nothing() {
    let newer = json!([{"type": "Accepted", "status": "True", "reason": "Accepted",
        "message": format!("GatewayClass accepted by {OURS}"), "observedGeneration": 4,
        "lastTransitionTime": NOW}]);
    let settled = settle(
        &class(json!({"controllerName": OURS, "parametersRef": {}}), newer),
        LATER,
    );
    assert!(settled.stale);
    assert_eq!(settled.conditions, None);
}

#[test]
fn a_class_handed_to_another_controller_keeps_what_we_wrote() {
    let ours = settle(&class(json!({"controllerName": OURS}), json!([])), NOW)
        .conditions
        .unwrap();
    let moved = class(
        json!({"controllerName": "example.com/other"}),
        serde_json::to_value(&ours).unwrap(),
    );
    assert_eq!(settle(&moved, LATER).conditions, None);
}

#[test]
fn the_patch_carries_the_precondition_and_every_condition() {
    let settled = settle(&class(json!({"controllerName": OURS}), json!([])), NOW);
    let patch = settled.status_patch().unwrap();
    assert_eq!(patch.resource_version(), Some("17"));
    assert_eq!(patch.body()["metadata"]["resourceVersion"], "17");
    assert_eq!(patch.body()["status"]["conditions"][0]["type"], "Accepted");
    assert_eq!(
        patch.body()["status"]["conditions"][0]["observedGeneration"],
        3
    );
}

#[test]
fn invalid_settings_are_an_error() {
    let settings = Settings {
        condition_domain: "not a domain".into(),
        ..Settings::default()
    };
    let class = class(json!({"controllerName": OURS}), json!([]));
    assert!(settle_class(&settings, &class, NOW.parse().unwrap()).is_err());
}
