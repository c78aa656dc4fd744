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

/// Settled with the configuration the class may name present.
fn settle(class: &GatewayClass, now: &str) -> ClassSettlement {
    settle_with(class, ConfigurationPresence::Exists, now)
}

fn settle_with(
    class: &GatewayClass,
    configuration: ConfigurationPresence,
    now: &str,
) -> ClassSettlement {
    settle_class(
        &Settings::default(),
        class,
        configuration,
        now.parse().unwrap(),
    )
    .unwrap()
}

fn accepted_of(settled: &ClassSettlement) -> Condition {
    find(settled.conditions.as_deref().unwrap(), ACCEPTED)
        .unwrap()
        .clone()
}

#[test]
fn the_table() {
    let ours_with =
        |parameters: Value| json!({"controllerName": OURS, "parametersRef": parameters});
    let accepted = || {
        Some((
            "True",
            "Accepted",
            format!("GatewayClass accepted by {OURS}"),
        ))
    };
    let refused = |message: &str| Some(("False", "InvalidParameters", message.to_owned()));
    let configuration = json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
        "name": "defaults", "namespace": "infra"});
    use ConfigurationPresence::{Exists, Missing};
    let rows = [
        (json!({"controllerName": OURS}), Missing, accepted()),
        (json!({"controllerName": OURS}), Exists, accepted()),
        (
            ours_with(json!({"group": "g", "kind": "K", "name": "p", "namespace": "infra"})),
            Exists,
            refused(
                r#"unsupported parametersRef: group="g" kind="K" (expected meridio-2.nordix.org/GatewayConfiguration)"#,
            ),
        ),
        (
            ours_with(
                json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                "name": "defaults"}),
            ),
            Exists,
            refused("parametersRef.namespace is required for a GatewayConfiguration"),
        ),
        (
            ours_with(configuration.clone()),
            Missing,
            refused(r#"GatewayConfiguration "infra/defaults" not found"#),
        ),
        (ours_with(configuration), Exists, accepted()),
        (json!({"controllerName": "example.com/other"}), Exists, None),
        (
            json!({"controllerName": "example.com/other", "parametersRef": {"name": "p"}}),
            Missing,
            None,
        ),
    ];
    for (spec, presence, want) in rows {
        let settled = settle_with(&class(spec.clone(), json!([])), presence, NOW);
        match want {
            None => assert_eq!(settled.conditions, None, "{spec}"),
            Some((status, reason, message)) => {
                let c = accepted_of(&settled);
                assert_eq!(
                    (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
                    (status, reason, message.as_str()),
                    "{spec} {presence:?}"
                );
                assert_eq!(c.observed_generation, Some(3));
                assert_eq!(c.last_transition_time, NOW);
            }
        }
    }
}

#[test]
fn the_expected_group_and_kind_come_from_the_settings() {
    let settings = Settings {
        parameters_group: "acme.io".into(),
        parameters_kind: "LbConfig".into(),
        ..Settings::default()
    };
    let class = class(
        json!({"controllerName": OURS, "parametersRef": {"group": "meridio-2.nordix.org",
            "kind": "GatewayConfiguration", "name": "d", "namespace": "infra"}}),
        json!([]),
    );
    let settled = settle_class(
        &settings,
        &class,
        ConfigurationPresence::Exists,
        NOW.parse().unwrap(),
    )
    .unwrap();
    assert_eq!(
        accepted_of(&settled).message,
        r#"unsupported parametersRef: group="meridio-2.nordix.org" kind="GatewayConfiguration" (expected acme.io/LbConfig)"#
    );
}

#[test]
fn a_configuration_that_appears_or_disappears_flips_the_class() {
    let spec = json!({"controllerName": OURS, "parametersRef": {"group": "meridio-2.nordix.org",
        "kind": "GatewayConfiguration", "name": "defaults", "namespace": "infra"}});
    let missing = settle_with(
        &class(spec.clone(), json!([])),
        ConfigurationPresence::Missing,
        NOW,
    )
    .conditions
    .unwrap();
    let found = settle_with(
        &class(spec.clone(), serde_json::to_value(&missing).unwrap()),
        ConfigurationPresence::Exists,
        LATER,
    );
    let c = accepted_of(&found);
    assert_eq!(
        (c.status.as_str(), c.last_transition_time.as_str()),
        ("True", LATER)
    );
    // Settled again with nothing changed: no write.
    let again = settle_with(
        &class(
            spec,
            serde_json::to_value(found.conditions.unwrap()).unwrap(),
        ),
        ConfigurationPresence::Exists,
        LATER,
    );
    assert_eq!(again.conditions, None);
    assert_eq!(
        ConfigurationPresence::from(true),
        ConfigurationPresence::Exists
    );
    assert_eq!(
        ConfigurationPresence::from(false),
        ConfigurationPresence::Missing
    );
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
    let mut settled = class(
        json!({"controllerName": OURS}),
        serde_json::to_value(&written).unwrap(),
    );
    first.status_patch().unwrap().apply_to_class(&mut settled);
    let again = settle(&settled, LATER);
    assert_eq!(again.conditions, None);
    assert_eq!(again.supported_features, None);
    assert_eq!(again.status_patch(), None);
}

#[test]
fn supported_features_are_the_setting_sorted_and_written_once() {
    let settings = Settings {
        supported_features: vec!["GatewayPort8080".into(), "Gateway".into()],
        ..Settings::default()
    };
    let at = NOW.parse().unwrap();
    let ours = class(json!({"controllerName": OURS}), json!([]));
    let first = settle_class(&settings, &ours, ConfigurationPresence::Exists, at).unwrap();
    assert_eq!(
        first.supported_features.as_deref(),
        Some(&["Gateway".to_owned(), "GatewayPort8080".to_owned()][..])
    );
    let patch = first.status_patch().unwrap();
    assert_eq!(
        patch.body()["status"]["supportedFeatures"],
        json!([{"name": "Gateway"}, {"name": "GatewayPort8080"}])
    );
    // Written: the next settlement writes neither the features nor the conditions.
    let mut written = ours.clone();
    patch.apply_to_class(&mut written);
    let again = settle_class(&settings, &written, ConfigurationPresence::Exists, at).unwrap();
    assert_eq!(again.status_patch(), None);
    // Features only, when only they differ (here: the setting changed).
    let fewer = Settings {
        supported_features: vec!["Gateway".into()],
        ..settings.clone()
    };
    let changed = settle_class(&fewer, &written, ConfigurationPresence::Exists, at).unwrap();
    assert_eq!(changed.conditions, None);
    assert_eq!(
        changed.status_patch().unwrap().body()["status"],
        json!({"supportedFeatures": [{"name": "Gateway"}]})
    );
}

#[test]
fn a_class_not_ours_or_stale_keeps_its_features() {
    let theirs = class(json!({"controllerName": "example.com/other"}), json!([]));
    assert_eq!(settle(&theirs, NOW).supported_features, None);
    let newer = json!([{"type": "Accepted", "status": "True", "reason": "Accepted",
        "message": "", "observedGeneration": 9, "lastTransitionTime": NOW}]);
    let stale = settle(&class(json!({"controllerName": OURS}), newer), NOW);
    assert!(stale.stale);
    assert_eq!(stale.status_patch(), None);
    // An older form of the field (plain strings) is replaced.
    let mut old_form = class(json!({"controllerName": OURS}), json!([]));
    old_form
        .status
        .other
        .insert("supportedFeatures".into(), json!(["Gateway"]));
    assert_eq!(old_form.status.supported_feature_names(), None);
    assert!(settle(&old_form, NOW).supported_features.is_some());
}

/// Applies a class status patch to a typed class, as the API server's status subresource
/// would.
trait ApplyToClass {
    fn apply_to_class(&self, class: &mut GatewayClass);
}

impl ApplyToClass for StatusPatch {
    fn apply_to_class(&self, class: &mut GatewayClass) {
        let mut value = serde_json::to_value(&*class).unwrap();
        self.apply_to(&mut value);
        *class = serde_json::from_value(value).unwrap();
    }
}

#[test]
fn the_transition_time_moves_only_with_the_status() {
    let ours = json!({"controllerName": OURS});
    let with_parameters = json!({"controllerName": OURS, "parametersRef": {"name": "p"}});
    // (A reference of another group and kind: refused.)
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
    let c = accepted_of(&rejected);
    assert_eq!(
        (c.status.as_str(), c.last_transition_time.as_str()),
        ("False", LATER)
    );
    // A generation bump alone refreshes observedGeneration, not the time.
    let mut bumped = class(ours, serde_json::to_value(&accepted_true).unwrap());
    bumped.metadata.generation = Some(4);
    let c = accepted_of(&settle(&bumped, LATER));
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
    assert!(
        settle_class(
            &settings,
            &class,
            ConfigurationPresence::Missing,
            NOW.parse().unwrap()
        )
        .is_err()
    );
}
