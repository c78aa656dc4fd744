//! Reading scenario files: what parses, and what each malformed file is told.

use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::outcome::WriteOutcome;
use crate::reconcile::Requeue;
use crate::sim::cluster::{Kind, RolloutState, WriteKind};
use crate::sim::scenario::{DEMO, Scenario, ScenarioError, Verb};

pub(crate) fn with_steps(steps: Value) -> Value {
    json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "steps": steps})
}

fn error(doc: Value) -> String {
    Scenario::from_value(&doc).unwrap_err().to_string()
}

fn step_error(step: Value) -> String {
    error(with_steps(
        json!([{"advance": "1s"}, {"advance": "1s"}, step]),
    ))
}

#[test]
fn errors_name_the_step_and_the_key() {
    assert_eq!(
        step_error(json!({"reconcile": {}, "expct": {}})),
        r#"step 3: unknown key "expct" in reconcile step"#
    );
    assert_eq!(
        step_error(json!({"reconcil": {}})),
        "step 3: unknown step \"reconcil\" (expected one of reconcile, advance, patch, \
         delete, failWrites, rollout, mutateWrites, restart, unreadable, snapshot, staleReads, catchUp, recreate)"
    );
    assert_eq!(
        step_error(json!({"advance": "1s", "expect": {}})),
        r#"step 3: unknown key "expect" in advance step"#
    );
    assert_eq!(
        step_error(json!({"advance": 90})),
        r#"step 3: "advance" must be a string (found a number)"#
    );
    assert!(
        step_error(json!({"advance": "soon"}))
            .starts_with(r#"step 3: "advance": invalid duration "soon""#)
    );
    assert_eq!(
        step_error(
            json!({"reconcile": {}, "expect": {"conditions": {"Programmed": {"satus": "True"}}}})
        ),
        r#"step 3: unknown key "satus" in expect.conditions.Programmed"#
    );
    assert_eq!(
        step_error(json!({"reconcile": {}, "expect": {"statusWritten": "yes"}})),
        r#"step 3: "expect.statusWritten" must be a boolean (found a string)"#
    );
    assert_eq!(
        step_error(
            json!({"reconcile": {}, "expect": {"conditions": {"Accepted": {"messageContains": [1]}}}})
        ),
        r#"step 3: "expect.conditions.Accepted.messageContains[0]" must be a string (found a number)"#
    );
    assert!(
        step_error(json!({"reconcile": {}, "expect": {"requeue": "later"}}))
            .starts_with(r#"step 3: "expect.requeue": expected none, immediately or a duration"#)
    );
    assert_eq!(
        step_error(json!({"reconcile": {}, "expect": {"action": "Delete"}})),
        r#"step 3: "expect.action": unknown action "Delete" (expected Create, Update or None)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 2}})),
        r#"step 3: missing key "error" in failWrites"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": -1, "error": {}}})),
        r#"step 3: "failWrites.count": must be between 1 and 4294967295 (found -1)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 0, "error": {}}})),
        r#"step 3: "failWrites.count": must be between 1 and 4294967295 (found 0)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 1, "error": {"code": 600}}})),
        r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 600)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 1, "error": {"code": 399}}})),
        r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 399)"#
    );
    assert_eq!(
        step_error(
            json!({"failWrites": {"count": 1, "error": {"code": 500, "status": "Success"}}})
        ),
        r#"step 3: "failWrites.error.status": a Status of Success is not a failed write (give "Applied")"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 1, "error": {"code": 99}}})),
        r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 99)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 1, "error": {"cod": 500}}})),
        r#"step 3: "failWrites.error": unknown key "cod" (expected code, reason, message, or a Kubernetes Status)"#
    );
    assert_eq!(
        step_error(json!({"patch": {"gateways": {}}})),
        r#"step 3: unknown key "gateways" in patch"#
    );
    assert_eq!(
        step_error(json!({"patch": {"routes": {}}})),
        r#"step 3: "patch.routes" must be a list (found an object)"#
    );
    assert!(
        step_error(json!({"delete": "template"}))
            .starts_with(r#"step 3: "delete": cannot delete "template""#)
    );
    assert!(
        step_error(json!({"rollout": "done"}))
            .starts_with(r#"step 3: "rollout": unknown rollout "done""#)
    );
    assert!(step_error(json!({"note": "x"})).starts_with("step 3: no step verb"));
    assert_eq!(
        step_error(json!({"advance": "1s", "rollout": "complete"})),
        r#"step 3: more than one step verb: "advance" and "rollout""#
    );
    assert_eq!(
        step_error(json!("advance")),
        r#"step 3: "step" must be an object (found a string)"#
    );
}

#[test]
fn top_level_errors() {
    assert_eq!(
        error(
            json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "steps": [], "stepz": []})
        ),
        r#"unknown key "stepz" in the scenario"#
    );
    assert_eq!(
        error(json!({"steps": []})),
        r#"missing key "objects" in the scenario"#
    );
    assert_eq!(
        error(json!({"objects": {}, "steps": []})),
        r#"missing key "gateway" in objects"#
    );
    assert_eq!(
        error(
            json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "deploy": {}}, "steps": []})
        ),
        r#"unknown key "deploy" in objects"#
    );
    assert!(
        error(json!({"objects": {"gateway": {"metadata": {"name": 1}}}, "steps": []}))
            == r#""objects.gateway.metadata.name": expected a string, found 1"#
    );
    assert!(
        error(
            json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "settings": {"degradedAftr": "1m"}, "steps": []})
        )
        .contains("degradedAftr")
    );
    assert!(
        error(
            json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "now": "yesterday", "steps": []})
        ) == r#""now": not an RFC 3339 time "yesterday" (expected e.g. 2026-01-01T00:00:00Z)"#
    );
    assert_eq!(
        error(
            json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}})
        ),
        r#"missing key "steps" in the scenario"#
    );
    let e = Scenario::from_json("{\n  \"steps\": [,]\n}").unwrap_err();
    assert!(matches!(e, ScenarioError::Json { line: 2, .. }), "{e}");
}

#[test]
fn every_key_parses() {
    let doc = json!({
        "description": "d",
        "settings": {"degradedAfter": "2m"},
        "now": "2026-02-01T10:00:00Z",
        "objects": {
            "gatewayClass": null, "gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
            "configuration": {"metadata": {"name": "c"}}, "deployment": null,
            "template": {"spec": {}}, "routes": [{"spec": {"destinationCIDRs": ["1.2.3.4/32"]}}]
        },
        "steps": [
            {"reconcile": {}, "note": "first", "expect": {
                "action": "Update", "statusWritten": true,
                "conditions": {"Degraded": null, "Accepted": {
                    "status": "True", "reason": "Accepted", "message": "m",
                    "messageContains": ["a", "b"], "observedGeneration": 3,
                    "lastTransitionTime": "2026-02-01T10:00:00Z"}},
                "addresses": ["1.2.3.4"], "deployment": {"spec": {"replicas": 2}},
                "requeue": "90s"}},
            {"reconcile": {}, "expect": {"deployment": null, "requeue": "immediately"}},
            {"reconcile": {}, "expect": {"requeue": "none"}},
            {"advance": "1h30m"},
            {"patch": {"configuration": {"spec": {}}, "routes": []}},
            {"delete": "deployment"},
            {"failWrites": {"count": 3, "error": {"code": 503, "reason": "ServiceUnavailable", "message": "m"}}},
            {"failWrites": {"count": 1, "error": {"message": "connection refused"}}},
            {"rollout": "stalled"}
        ]
    });
    let s = Scenario::from_value(&doc).unwrap();
    assert_eq!(s.description, "d");
    assert_eq!(s.settings.degraded_after, Duration::from_secs(120));
    assert_eq!(s.now, "2026-02-01T10:00:00Z".parse::<Timestamp>().unwrap());
    assert_eq!(s.objects.gateway_class, None);
    assert!(s.objects.configuration.is_some());
    assert_eq!(s.objects.routes.len(), 1);
    assert_eq!(s.steps.len(), 9);
    assert_eq!(s.steps[0].note.as_deref(), Some("first"));
    let Verb::Reconcile(e) = &s.steps[0].verb else {
        panic!("{:?}", s.steps[0])
    };
    assert_eq!(e.action, Some(WriteKind::Update));
    assert_eq!(e.status_written, Some(true));
    assert_eq!(e.conditions.len(), 2);
    let accepted = e.conditions.iter().find(|(t, _)| t == "Accepted").unwrap();
    let c = accepted.1.as_ref().unwrap();
    assert_eq!(c.message_contains, vec!["a", "b"]);
    assert_eq!(c.observed_generation, Some(3));
    assert!(c.last_transition_time.is_some());
    assert!(
        e.conditions
            .iter()
            .any(|(t, c)| t == "Degraded" && c.is_none())
    );
    assert_eq!(e.addresses, Some(vec!["1.2.3.4".to_owned()]));
    assert_eq!(e.deployment, Some(Some(json!({"spec": {"replicas": 2}}))));
    assert_eq!(e.requeue, Some(Requeue::After(Duration::from_secs(90))));
    let Verb::Reconcile(e) = &s.steps[1].verb else {
        panic!()
    };
    assert_eq!(e.deployment, Some(None));
    assert_eq!(e.requeue, Some(Requeue::Immediately));
    assert_eq!(s.steps[3].verb, Verb::Advance(Duration::from_secs(5400)));
    let Verb::Patch(p) = &s.steps[4].verb else {
        panic!()
    };
    let kinds: Vec<Kind> = p.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, vec![Kind::Configuration, Kind::Routes]);
    assert_eq!(s.steps[5].verb, Verb::Delete(Kind::Deployment));
    let Verb::FailWrites { count, outcome } = &s.steps[6].verb else {
        panic!()
    };
    assert_eq!(*count, 3);
    assert_eq!(outcome.class(), Some(crate::FailureClass::Transient));
    assert_eq!(outcome.message(), "m");
    let Verb::FailWrites { outcome, .. } = &s.steps[7].verb else {
        panic!()
    };
    assert!(matches!(outcome, WriteOutcome::Transport { .. }));
    assert_eq!(s.steps[8].verb, Verb::Rollout(RolloutState::Stalled));
}

#[test]
fn the_demo_parses() {
    let demo = Scenario::from_json(DEMO).unwrap();
    assert!(demo.description.contains("stale-Programmed"));
    assert!(demo.steps.len() > 10);
}

#[test]
fn an_object_of_the_format_is_never_read_from_a_list() {
    // serde's derive reads a struct from a list of its fields too; the format does not.
    for (steps, want) in [
        (
            json!([["x"]]),
            r#"step 1: "step" must be an object (found a list)"#,
        ),
        (
            json!([{"reconcile": {}, "expect": [true]}]),
            r#"step 1: "expect" must be an object (found a list)"#,
        ),
        (
            json!([{"reconcile": []}]),
            r#"step 1: "reconcile" must be an object (found a list)"#,
        ),
        (
            json!([{"failWrites": [1, {}]}]),
            r#"step 1: "failWrites" must be an object (found a list)"#,
        ),
        (
            json!([{"reconcile": {}, "expect": {"conditions": {"A": ["True"]}}}]),
            r#"step 1: "expect.conditions.A" must be an object (found a list)"#,
        ),
    ] {
        assert_eq!(error(with_steps(steps)), want);
    }
    let mut doc = with_steps(json!([]));
    doc["settings"] = json!([]);
    assert_eq!(error(doc), r#""settings" must be an object (found a list)"#);
    assert_eq!(
        error(json!(["d"])),
        r#""scenario" must be an object (found a list)"#
    );
}

#[test]
fn null_is_absent_only_where_the_format_says_so() {
    let s = Scenario::from_value(&json!({
        "description": null, "settings": null, "now": null,
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
                    "configuration": null, "routes": null},
        "steps": [{"reconcile": null, "expect": null, "note": null}]
    }))
    .unwrap();
    assert_eq!(s.steps[0].verb, Verb::Reconcile(Box::default()));
    assert_eq!(
        step_error(json!({"reconcile": {}, "expect": {"action": null}})),
        r#"step 3: "expect.action" must be a string (found null)"#
    );
    assert_eq!(
        step_error(json!({"advance": null})),
        r#"step 3: "advance" must be a string (found null)"#
    );
    assert_eq!(
        step_error(json!({"failWrites": {"count": 1, "error": null}})),
        r#"step 3: missing key "error" in failWrites"#
    );
}

#[test]
fn a_step_s_keys_are_checked_before_its_values() {
    assert_eq!(
        step_error(json!({"advance": 90, "zzz": 1})),
        r#"step 3: unknown key "zzz" in advance step"#
    );
    assert_eq!(
        step_error(json!({"advance": 90, "rollout": 5})),
        r#"step 3: more than one step verb: "advance" and "rollout""#
    );
    assert_eq!(
        step_error(json!({"rollout": 5, "expect": {"action": 1}})),
        r#"step 3: unknown key "expect" in rollout step"#
    );
    // An earlier step's values still come first.
    assert_eq!(
        error(with_steps(json!([{"advance": 90}, {"advanc": "1s"}]))),
        r#"step 1: "advance" must be a string (found a number)"#
    );
}

// ---- revision 4: objects.namespaces and the unreadable step --------------------------------

/// A file whose objects hold `namespaces` and a GatewayConfiguration, with `steps`.
fn with_namespaces(namespaces: Value, steps: Value) -> Value {
    json!({"objects": {
        "gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
        "configuration": {"metadata": {"name": "c", "namespace": "ns"},
                          "spec": {"horizontalScaling": {"replicas": 2}}},
        "namespaces": namespaces},
      "steps": steps})
}

#[test]
fn namespaces_and_unreadable_parse() {
    let s = Scenario::from_value(&with_namespaces(
        json!({"blue": {"team": "blue", "example.com/tier": ""}, "bare": {}}),
        json!([
            {"unreadable": {"configuration": {"spec": {"horizontalScaling": {"replicas": "many"}}}},
             "note": "a string where an integer belongs: allowed here"},
            {"patch": {"configuration": {"spec": {"horizontalScaling": {"replicas": 3}}}}}
        ]),
    ))
    .unwrap();
    assert_eq!(s.objects.namespaces.len(), 2);
    assert_eq!(s.objects.namespaces.get("blue").unwrap()["team"], "blue");
    assert_eq!(
        s.steps[0].verb,
        Verb::Unreadable(
            Kind::Configuration,
            crate::wire::tree::Value::from(
                json!({"spec": {"horizontalScaling": {"replicas": "many"}}})
            )
        )
    );
    assert_eq!(s.steps[0].verb.name(), "unreadable");
    // Null is absent.
    let s = Scenario::from_value(&with_namespaces(Value::Null, json!([]))).unwrap();
    assert!(s.objects.namespaces.is_empty());
}

#[test]
fn namespaces_of_the_wrong_shape_are_malformed() {
    let namespaces_error = |namespaces: Value| error(with_namespaces(namespaces, json!([])));
    assert_eq!(
        namespaces_error(json!(["blue"])),
        r#""objects.namespaces" must be an object (found a list)"#
    );
    assert_eq!(
        namespaces_error(json!({"blue": ["team"]})),
        r#""objects.namespaces.blue" must be an object (found a list)"#
    );
    assert_eq!(
        namespaces_error(json!({"blue": {"team": 1}})),
        r#""objects.namespaces.blue.team" must be a string (found a number)"#
    );
    assert!(
        namespaces_error(json!({"Blue": {}}))
            .starts_with(r#""objects.namespaces.Blue": is not a namespace name"#),
        "{}",
        namespaces_error(json!({"Blue": {}}))
    );
    assert!(namespaces_error(json!({"a.b": {}})).contains("is not a namespace name"));
    assert!(namespaces_error(json!({"x".repeat(64): {}})).contains("is not a namespace name"));
    assert!(
        namespaces_error(json!({"blue": {"bad key": "v"}}))
            .starts_with(r#""objects.namespaces.blue.bad key": invalid key: "#)
    );
    assert!(
        namespaces_error(json!({"blue": {"team": "-x"}}))
            .starts_with(r#""objects.namespaces.blue.team": invalid value "-x": "#)
    );
}

#[test]
fn the_unreadable_step_is_checked_like_the_others() {
    let unreadable_error = |step: Value| {
        error(with_namespaces(
            Value::Null,
            json!([{"advance": "1s"}, step]),
        ))
    };
    assert_eq!(
        unreadable_error(json!({"unreadable": {}})),
        r#"step 2: missing key "configuration" in unreadable"#
    );
    assert_eq!(
        unreadable_error(json!({"unreadable": {"gateway": {}}})),
        r#"step 2: unknown key "gateway" in unreadable"#
    );
    assert_eq!(
        unreadable_error(json!({"unreadable": {"configuration": "x"}})),
        r#"step 2: "unreadable.configuration" must be an object (found a string)"#
    );
    assert_eq!(
        unreadable_error(json!({"unreadable": {"configuration": null}})),
        r#"step 2: "unreadable.configuration" must be an object (found null)"#
    );
    assert_eq!(
        unreadable_error(json!({"unreadable": []})),
        r#"step 2: "unreadable" must be an object (found a list)"#
    );
    assert_eq!(
        unreadable_error(json!({"unreadable": {"configuration": {}}, "expect": {}})),
        r#"step 2: unknown key "expect" in unreadable step"#
    );
    // Only the unreadable step may leave a value of the wrong type: a later patch that
    // keeps it is malformed, one that mends it is not.
    let doc = |later: Value| {
        with_namespaces(
            Value::Null,
            json!([
                {"unreadable": {"configuration": {"spec": {"horizontalScaling": {"replicas": "many"}}}}},
                {"patch": {"configuration": later}}
            ]),
        )
    };
    assert_eq!(
        error(doc(json!({"metadata": {"labels": {"a": "b"}}}))),
        r#"step 2: "patch.configuration.spec.horizontalScaling.replicas": expected an integer, found "many""#
    );
    assert!(
        Scenario::from_value(&doc(
            json!({"spec": {"horizontalScaling": {"replicas": 3}}})
        ))
        .is_ok()
    );
    // A patch of the wrong type is still malformed.
    assert!(
        error(with_namespaces(
            Value::Null,
            json!([{"patch": {"configuration": {"spec": {"horizontalScaling": {"replicas": "many"}}}}}])
        ))
        .starts_with(r#"step 1: "patch.configuration.spec.horizontalScaling.replicas""#)
    );
}

// ---- revision 5: expect.listeners and expect.gatewayClassFeatures ---------------------------

#[test]
fn listeners_and_class_features_parse() {
    let s = Scenario::from_value(&with_steps(json!([{"reconcile": {}, "expect": {
        "listeners": [
            {"name": "tcp", "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
             "attachedRoutes": 2,
             "conditions": {"ResolvedRefs": null, "Accepted": {"status": "True", "observedGeneration": 1}}},
            {"name": "quic", "supportedKinds": []},
            {"name": "bare"}
        ],
        "gatewayClassFeatures": ["Gateway", "GatewayPort8080"]
    }}])))
    .unwrap();
    let Verb::Reconcile(e) = &s.steps[0].verb else {
        panic!("{:?}", s.steps[0])
    };
    let listeners = e.listeners.as_ref().unwrap();
    let names: Vec<&str> = listeners.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["tcp", "quic", "bare"]);
    assert_eq!(
        listeners[0].supported_kinds,
        Some(vec![(
            "meridio-2.nordix.org".to_owned(),
            "L34Route".to_owned()
        )])
    );
    assert_eq!(listeners[0].attached_routes, Some(2));
    // `null` kept as "must be absent".
    let mut types: Vec<(&str, bool)> = listeners[0]
        .conditions
        .iter()
        .map(|(t, c)| (t.as_str(), c.is_some()))
        .collect();
    types.sort_unstable();
    assert_eq!(types, [("Accepted", true), ("ResolvedRefs", false)]);
    let accepted = listeners[0]
        .conditions
        .iter()
        .find_map(|(t, c)| c.as_ref().filter(|_| t == "Accepted"))
        .unwrap();
    assert_eq!(accepted.status.as_deref(), Some("True"));
    assert_eq!(accepted.observed_generation, Some(1));
    assert_eq!(listeners[1].supported_kinds, Some(Vec::new()));
    assert_eq!(listeners[1].attached_routes, None);
    assert_eq!(listeners[2].supported_kinds, None);
    assert!(listeners[2].conditions.is_empty());
    assert_eq!(
        e.gateway_class_features,
        Some(vec!["Gateway".to_owned(), "GatewayPort8080".to_owned()])
    );
    // Absent keys check nothing; an empty list is an expectation.
    let s = Scenario::from_value(&with_steps(json!([
        {"reconcile": {}, "expect": {}},
        {"reconcile": {}, "expect": {"listeners": [], "gatewayClassFeatures": []}}
    ])))
    .unwrap();
    let (Verb::Reconcile(none), Verb::Reconcile(empty)) = (&s.steps[0].verb, &s.steps[1].verb)
    else {
        panic!()
    };
    assert_eq!(
        (&none.listeners, &none.gateway_class_features),
        (&None, &None)
    );
    assert_eq!(empty.listeners, Some(Vec::new()));
    assert_eq!(empty.gateway_class_features, Some(Vec::new()));
}

#[test]
fn malformed_listeners_and_class_features_name_the_step_and_the_key_path() {
    let expect = |expect: Value| step_error(json!({"reconcile": {}, "expect": expect}));
    for (expect_value, want) in [
        (
            json!({"listener": []}),
            r#"step 3: unknown key "listener" in expect"#,
        ),
        (
            json!({"listeners": {"name": "tcp"}}),
            r#"step 3: "expect.listeners" must be a list (found an object)"#,
        ),
        (
            json!({"listeners": [["tcp"]]}),
            r#"step 3: "expect.listeners[0]" must be an object (found a list)"#,
        ),
        (
            json!({"listeners": [{"name": "a"}, {"attachedRoutes": 1}]}),
            r#"step 3: missing key "name" in expect.listeners[1]"#,
        ),
        (
            json!({"listeners": [{"name": "a", "attachedRoute": 1}]}),
            r#"step 3: unknown key "attachedRoute" in expect.listeners[0]"#,
        ),
        (
            json!({"listeners": [{"name": 5}]}),
            r#"step 3: "expect.listeners[0].name" must be a string (found a number)"#,
        ),
        (
            json!({"listeners": [{"name": "a", "attachedRoutes": "one"}]}),
            r#"step 3: "expect.listeners[0].attachedRoutes" must be an integer (found a string)"#,
        ),
        (
            json!({"listeners": [{"name": "a", "attachedRoutes": null}]}),
            r#"step 3: "expect.listeners[0].attachedRoutes" must be an integer (found null)"#,
        ),
        (
            json!({"listeners": [{"name": "a", "supportedKinds": [{"kind": "L34Route"}]}]}),
            r#"step 3: missing key "group" in expect.listeners[0].supportedKinds[0]"#,
        ),
        (
            json!({"listeners": [{"name": "a", "supportedKinds": [{"group": "g", "kind": "K", "version": "v1"}]}]}),
            r#"step 3: unknown key "version" in expect.listeners[0].supportedKinds[0]"#,
        ),
        (
            json!({"listeners": [{"name": "a", "supportedKinds": ["L34Route"]}]}),
            r#"step 3: "expect.listeners[0].supportedKinds[0]" must be an object (found a string)"#,
        ),
        (
            json!({"listeners": [{"name": "a", "conditions": {"Accepted": {"satus": "True"}}}]}),
            r#"step 3: unknown key "satus" in expect.listeners[0].conditions.Accepted"#,
        ),
        (
            json!({"listeners": [{"name": "a", "conditions": {"Accepted": {"observedGeneration": "1"}}}]}),
            r#"step 3: "expect.listeners[0].conditions.Accepted.observedGeneration" must be an integer (found a string)"#,
        ),
        (
            json!({"listeners": [{"name": "a", "conditions": ["Accepted"]}]}),
            r#"step 3: "expect.listeners[0].conditions" must be an object (found a list)"#,
        ),
        (
            json!({"gatewayClassFeatures": "Gateway"}),
            r#"step 3: "expect.gatewayClassFeatures" must be a list (found a string)"#,
        ),
        (
            json!({"gatewayClassFeatures": ["Gateway", {"name": "GatewayPort8080"}]}),
            r#"step 3: "expect.gatewayClassFeatures[1]" must be a string (found an object)"#,
        ),
        (
            json!({"gatewayClassFeatures": null}),
            r#"step 3: "expect.gatewayClassFeatures" must be a list (found null)"#,
        ),
    ] {
        assert_eq!(expect(expect_value.clone()), want, "{expect_value}");
    }
    // A bad time inside a listener's condition is told as in `conditions`.
    assert!(
        expect(json!({"listeners": [{"name": "a", "conditions": {"Accepted": {"lastTransitionTime": "noon"}}}]}))
            .starts_with(r#"step 3: "expect.listeners[0].conditions.Accepted.lastTransitionTime": not an RFC 3339 time"#)
    );
}

#[test]
fn a_duplicate_key_in_listeners_is_malformed_with_its_line_and_key_path() {
    let text = r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
 "steps": [{"advance": "1s"}, {"reconcile": {}, "expect": {"listeners": [
   {"name": "a"},
   {"name": "b", "attachedRoutes": 1,
    "attachedRoutes": 2}]}}]}"#;
    assert_eq!(
        Scenario::from_json(text).unwrap_err().to_string(),
        r#"invalid JSON at line 5, column 20: duplicate key "steps[1].expect.listeners[1].attachedRoutes""#
    );
    let text = r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
 "steps": [{"reconcile": {}, "expect": {"gatewayClassFeatures": [],
   "gatewayClassFeatures": ["Gateway"]}}]}"#;
    assert_eq!(
        Scenario::from_json(text).unwrap_err().to_string(),
        r#"invalid JSON at line 3, column 25: duplicate key "steps[0].expect.gatewayClassFeatures""#
    );
    // A wrong type is placed on its line, as every other key.
    let text = r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
 "steps": [{"reconcile": {}, "expect": {"listeners": [
   {"name": "a",
    "attachedRoutes": "two"}]}}]}"#;
    assert_eq!(
        Scenario::from_json(text).unwrap_err().to_string(),
        r#"line 4: step 1: "expect.listeners[0].attachedRoutes" must be an integer (found a string)"#
    );
}

/// The Gateway CRD bounds its listeners (64) and each listener's route kinds (8): the API
/// server refuses a Gateway over them, so a file with one is malformed, whether given or
/// patched, read from text or from a value; the reader keeps no listener past the bound.
#[test]
fn a_gateway_over_its_crd_bounds_is_malformed() {
    let listener = |i: usize, kinds: usize| {
        let kinds: Vec<Value> = (0..kinds)
            .map(|k| json!({"kind": format!("K{k}")}))
            .collect();
        json!({"name": format!("l{i}"), "port": 80, "protocol": "TCP",
            "allowedRoutes": {"kinds": kinds}})
    };
    let gateway = |listeners: Vec<Value>| {
        json!({"metadata": {"name": "gw", "namespace": "ns", "uid": "u"},
            "spec": {"listeners": listeners}})
    };
    let file =
        |gateway: Value, steps: Value| json!({"objects": {"gateway": gateway}, "steps": steps});
    let both = |doc: Value| {
        let from_value = error(doc.clone());
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let from_text = Scenario::from_json(&text).unwrap_err().to_string();
        (from_value, from_text)
    };
    // At the bounds: read.
    let at = gateway((0..64).map(|i| listener(i, 8)).collect());
    let s = Scenario::from_value(&file(at.clone(), json!([]))).unwrap();
    assert_eq!(
        s.objects.gateway["spec"]["listeners"]
            .as_array()
            .unwrap()
            .len(),
        64
    );
    let text = file(at.clone(), json!([])).to_string();
    assert_eq!(Scenario::from_json(&text).unwrap().objects, s.objects);
    // One listener over.
    let why = "must have at most 64 items (has 65): the Gateway CRD's bound, which the API \
               server enforces";
    let (from_value, from_text) = both(file(
        gateway((0..65).map(|i| listener(i, 0)).collect()),
        json!([]),
    ));
    assert_eq!(
        from_value,
        format!(r#""objects.gateway.spec.listeners": {why}"#)
    );
    assert_eq!(
        from_text,
        format!(r#"line 10: "objects.gateway.spec.listeners": {why}"#)
    );
    // One kind over, on the third listener: its key path.
    let mut listeners: Vec<Value> = (0..3).map(|i| listener(i, 1)).collect();
    listeners[2] = listener(2, 9);
    let (from_value, from_text) = both(file(gateway(listeners), json!([])));
    let why = "must have at most 8 items (has 9): the Gateway CRD's bound, which the API server \
               enforces";
    let key = r#""objects.gateway.spec.listeners[2].allowedRoutes.kinds""#;
    assert_eq!(from_value, format!("{key}: {why}"));
    assert!(from_text.ends_with(&format!("{key}: {why}")), "{from_text}");
    // A patch that leaves the Gateway over a bound (a list in a merge patch replaces it).
    let over: Vec<Value> = (0..65).map(|i| listener(i, 0)).collect();
    let steps = json!([{"advance": "1s"}, {"patch": {"gateway": {"spec": {"listeners": over}}}}]);
    let (from_value, from_text) = both(file(gateway(vec![listener(0, 0)]), steps));
    let why = "must have at most 64 items (has 65): the Gateway CRD's bound, which the API \
               server enforces";
    assert_eq!(
        from_value,
        format!(r#"step 2: "patch.gateway.spec.listeners": {why}"#)
    );
    assert!(from_text.ends_with(&from_value), "{from_text}");
    // Over both bounds: the listeners are told, from the text as from a value.
    let mut listeners: Vec<Value> = (0..70).map(|i| listener(i, 0)).collect();
    listeners[2] = listener(2, 9);
    let (from_value, from_text) = both(file(gateway(listeners), json!([])));
    assert!(
        from_value.starts_with(
            r#""objects.gateway.spec.listeners": must have at most 64 items (has 70)"#
        )
    );
    assert!(from_text.ends_with(&from_value), "{from_text}");
    // Far over: the same, at the reader's cost of 64 listeners.
    let (from_value, from_text) = both(file(
        gateway((0..5000).map(|i| listener(i, 0)).collect()),
        json!([]),
    ));
    assert!(
        from_value.ends_with("(has 5000): the Gateway CRD's bound, which the API server enforces")
    );
    assert!(from_text.ends_with(&from_value), "{from_text}");
}

/// The GatewayClass CRD bounds its `status.conditions` at 8: a file whose class has more,
/// given or left by a patch, is malformed, read from text or from a value; at 8 it is read.
/// The reader keeps no condition past the 8th.
#[test]
fn a_class_over_its_crd_bound_is_malformed() {
    let condition = |i: usize| {
        json!({"type": format!("Foreign{i}"), "status": "True", "reason": "Other",
            "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    let class = |conditions: usize| {
        json!({"metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"},
            "status": {"conditions": (0..conditions).map(condition).collect::<Vec<_>>()}})
    };
    let file = |class: Value, steps: Value| {
        json!({"objects": {"gatewayClass": class,
            "gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
            "steps": steps})
    };
    let both = |doc: Value| {
        let from_value = error(doc.clone());
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let from_text = Scenario::from_json(&text).unwrap_err().to_string();
        (from_value, from_text)
    };
    // At the bound: read, alike from the text and from a value.
    let s = Scenario::from_value(&file(class(8), json!([]))).unwrap();
    let conditions = &s.objects.gateway_class.as_ref().unwrap()["status"]["conditions"];
    assert_eq!(conditions.as_array().unwrap().len(), 8);
    let text = file(class(8), json!([])).to_string();
    assert_eq!(Scenario::from_json(&text).unwrap().objects, s.objects);
    // One over, and far over.
    let why = |has: usize| {
        format!(
            "must have at most 8 items (has {has}): the GatewayClass CRD's bound, which the \
             API server enforces"
        )
    };
    for has in [9, 5000] {
        let (from_value, from_text) = both(file(class(has), json!([])));
        let want = format!(r#""objects.gatewayClass.status.conditions": {}"#, why(has));
        assert_eq!(from_value, want);
        assert!(from_text.ends_with(&want), "{from_text}");
        assert!(from_text.starts_with("line "), "{from_text}");
    }
    // A patch that leaves the class over it (a list in a merge patch replaces the class's).
    let over: Vec<Value> = (0..9).map(condition).collect();
    let steps = json!([{"advance": "1s"},
        {"patch": {"gatewayClass": {"status": {"conditions": over}}}}]);
    let (from_value, from_text) = both(file(class(1), steps));
    assert_eq!(
        from_value,
        format!(
            r#"step 2: "patch.gatewayClass.status.conditions": {}"#,
            why(9)
        )
    );
    assert!(from_text.ends_with(&from_value), "{from_text}");
}

#[test]
fn stale_read_steps_parse() {
    let gateway = json!({"metadata": {"name": "gw", "namespace": "ns", "uid": "u2"}});
    let doc = with_steps(json!([
        {"snapshot": "before"},
        {"staleReads": {"from": "before", "kinds": ["configuration", "routes"]}},
        {"catchUp": {}},
        {"snapshot": "before"},
        {"recreate": {"gateway": gateway.clone()}},
        {"staleReads": {"from": "before"}},
    ]));
    let s = Scenario::from_value(&doc).unwrap();
    let verbs: Vec<&Verb> = s.steps.iter().map(|step| &step.verb).collect();
    assert_eq!(verbs[0], &Verb::Snapshot("before".into()));
    assert_eq!(
        verbs[1],
        &Verb::StaleReads(crate::sim::scenario::StaleReads {
            from: "before".into(),
            kinds: Some(vec![Kind::Configuration, Kind::Routes]),
        })
    );
    assert_eq!(verbs[2], &Verb::CatchUp);
    assert_eq!(verbs[4], &Verb::Recreate(Kind::Gateway, gateway.into()));
    assert!(
        matches!(verbs[5], Verb::StaleReads(s) if s.kinds.is_none()),
        "{verbs:?}"
    );
}

#[test]
fn stale_read_steps_out_of_order_are_malformed() {
    let steps = |steps: Value| error(with_steps(steps));
    assert_eq!(
        steps(json!([{"staleReads": {"from": "x"}}])),
        "step 1: \"staleReads.from\": no snapshot \"x\" to read from (a snapshot step must take \
         it before, and each is used once)"
    );
    assert_eq!(
        steps(
            json!([{"snapshot": "x"}, {"staleReads": {"from": "x"}}, {"staleReads": {"from": "x"}}])
        ),
        "step 3: \"staleReads.from\": no snapshot \"x\" to read from (a snapshot step must take \
         it before, and each is used once)"
    );
    assert_eq!(
        steps(json!([{"catchUp": {}}])),
        "step 1: \"catchUp\": the reads do not lag here (no staleReads before it)"
    );
    assert_eq!(
        steps(json!([{"advance": "1s"}, {"snapshot": "x"}, {"reconcile": {}}])),
        "step 2: \"snapshot\": \"x\" is never read from (no later staleReads names it)"
    );
    assert_eq!(
        steps(json!([{"snapshot": "x"}, {"snapshot": "x"}, {"staleReads": {"from": "x"}}])),
        "step 2: \"snapshot\": \"x\" is taken already (step 1) and not used yet"
    );
    assert_eq!(
        steps(json!([{"snapshot": ""}])),
        "step 1: \"snapshot\": must name the snapshot"
    );
    let kinds = |kinds: Value| {
        steps(json!([{"snapshot": "x"}, {"staleReads": {"from": "x", "kinds": kinds}}]))
    };
    assert!(kinds(json!(["template"])).contains("cannot lag \"template\""));
    assert!(kinds(json!([])).contains("must name one kind or more, each once"));
    assert!(kinds(json!(["gateway", "gateway"])).contains("must name one kind or more, each once"));
    assert_eq!(
        steps(json!([{"staleReads": {"form": "x"}}])),
        "step 1: unknown key \"form\" in staleReads"
    );
}

#[test]
fn a_recreated_gateway_is_checked_like_the_file_s() {
    let recreate = |metadata: Value| {
        error(with_steps(
            json!([{"recreate": {"gateway": {"metadata": metadata}}}]),
        ))
    };
    assert_eq!(
        recreate(json!({"name": "gw", "namespace": "ns", "uid": "u"})),
        "step 1: \"recreate.gateway.metadata.uid\": must differ from the deleted Gateway's (a \
         new object has a new uid)"
    );
    assert_eq!(
        recreate(json!({"name": "other", "namespace": "ns", "uid": "u2"})),
        "step 1: \"recreate.gateway.metadata.name\": must be the deleted Gateway's (\"gw\"): \
         the simulated server holds one Gateway"
    );
    assert_eq!(
        recreate(json!({"name": "gw", "namespace": "ns"})),
        "step 1: \"recreate.gateway.metadata.uid\": is required (a Gateway always has one)"
    );
    assert_eq!(
        error(with_steps(json!([{"recreate": {}}]))),
        "step 1: missing key \"gateway\" in recreate"
    );
    // Later patches are checked against the recreated Gateway.
    let doc = with_steps(json!([
        {"recreate": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u2"},
                                  "spec": {"listeners": []}}}},
        {"patch": {"gateway": {"spec": {"listeners": 5}}}},
    ]));
    assert!(error(doc).starts_with("step 2: \"patch.gateway.spec.listeners\""));
}
