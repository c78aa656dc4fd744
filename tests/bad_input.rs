//! A catalogue of malformed inputs. Each gives the exact typed error, or the documented
//! condition; none panics, and none claims Programmed for a Deployment that does not exist.

mod common;

use common::*;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayConfiguration, from_json};
use gateway_reconcile::{InputError, Settings, Snapshot, WriteOutcome, lookup, plan, template};
use serde_json::json;

fn plan_error(w: &World) -> String {
    let snapshot = Snapshot::new(&w.gateway, &w.template)
        .with_gateway_class(w.class.as_ref())
        .with_configuration(w.configuration.as_ref())
        .with_deployment(w.deployment.as_ref())
        .with_routes(&w.routes);
    match plan(&w.settings, snapshot, at(0)) {
        Ok(_) => panic!("expected an input error"),
        Err(e) => e.to_string(),
    }
}

fn gateway_from(v: serde_json::Value) -> Gateway {
    serde_json::from_value(v).unwrap()
}

/// After one reconcile, the Accepted condition's message.
fn accepted_message(w: &mut World) -> String {
    w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    let c = w.condition("Accepted").expect("Accepted");
    assert_eq!(c.status, "False");
    assert!(
        w.condition("Programmed").is_none_or(|p| p.status != "True"),
        "no Programmed=True for an invalid Gateway"
    );
    c.message.clone()
}

// ---- missing or absurd metadata: typed errors naming the object and field -------------------

#[test]
fn b01_gateway_without_name() {
    let mut w = World::new();
    w.gateway.metadata.name = None;
    assert_eq!(plan_error(&w), "Gateway: metadata.name is required");
}

#[test]
fn b02_gateway_with_empty_name() {
    let mut w = World::new();
    w.gateway.metadata.name = Some(String::new());
    assert_eq!(plan_error(&w), "Gateway \"ns/\": metadata.name is required");
}

#[test]
fn b03_gateway_without_namespace() {
    let mut w = World::new();
    w.gateway.metadata.namespace = None;
    assert_eq!(
        plan_error(&w),
        "Gateway \"gw\": metadata.namespace is required"
    );
}

#[test]
fn b04_gateway_without_uid() {
    let mut w = World::new();
    w.gateway.metadata.uid = None;
    assert_eq!(
        plan_error(&w),
        "Gateway \"ns/gw\": metadata.uid is required"
    );
}

#[test]
fn b05_gateway_without_generation() {
    let mut w = World::new();
    w.gateway.metadata.generation = None;
    assert_eq!(
        plan_error(&w),
        "Gateway \"ns/gw\": metadata.generation is required"
    );
}

#[test]
fn b06_gateway_with_negative_generation() {
    let mut w = World::new();
    w.gateway.metadata.generation = Some(-3);
    assert_eq!(
        plan_error(&w),
        "Gateway \"ns/gw\": metadata.generation must not be negative (got -3)"
    );
}

#[test]
fn b07_configuration_with_negative_generation() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().metadata.generation = Some(-1);
    assert_eq!(
        plan_error(&w),
        "GatewayConfiguration \"ns/conf\": metadata.generation must not be negative (got -1)"
    );
}

#[test]
fn b08_configuration_without_generation() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().metadata.generation = None;
    assert_eq!(
        plan_error(&w),
        "GatewayConfiguration \"ns/conf\": metadata.generation is required"
    );
}

#[test]
fn b09_absurd_generations_are_carried_exactly() {
    let mut w = World::new();
    w.gateway.metadata.generation = Some(i64::MAX);
    w.configuration.as_mut().unwrap().metadata.generation = Some(i64::MAX);
    w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    let d = w.deployment.as_ref().unwrap();
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        Some("9223372036854775807")
    );
    assert_eq!(
        w.condition("Programmed").unwrap().observed_generation,
        Some(i64::MAX)
    );
}

#[test]
fn b10_deployment_in_another_namespace() {
    let mut w = World::healthy();
    w.deployment.as_mut().unwrap().object["metadata"]["namespace"] = "elsewhere".into();
    assert_eq!(
        plan_error(&w),
        "Deployment \"elsewhere/sllbr-gw\" is not the LB Deployment \"ns/sllbr-gw\" of this Gateway"
    );
}

#[test]
fn b11_deployment_with_another_name() {
    let mut w = World::healthy();
    w.deployment.as_mut().unwrap().object["metadata"]["name"] = "sllbr-other".into();
    assert_eq!(
        plan_error(&w),
        "Deployment \"ns/sllbr-other\" is not the LB Deployment \"ns/sllbr-gw\" of this Gateway"
    );
}

#[test]
fn b12_condition_domain_that_makes_invalid_types() {
    let mut w = World::new();
    w.settings.condition_domain = "Meridio 2!".into();
    assert_eq!(
        plan_error(&w),
        "settings: conditionDomain: \"Meridio 2!\" is not a DNS subdomain (lowercase, at most 253 characters)"
    );
}

// ---- wrong types and broken JSON: parse errors that say where --------------------------------

#[test]
fn b13_generation_as_a_string() {
    let e = from_json::<Gateway>("Gateway", r#"{"metadata":{"name":"gw","generation":"1"}}"#)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Gateway: invalid type: string \"1\", expected i64 at line 1 column 41"
    );
}

#[test]
fn b14_generation_as_a_fraction() {
    let e = from_json::<GatewayConfiguration>(
        "GatewayConfiguration",
        r#"{"metadata":{"generation":1.5}}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "GatewayConfiguration: invalid type: floating point `1.5`, expected i64 at line 1 column 29"
    );
}

#[test]
fn b15_deployment_that_is_not_an_object() {
    let e = from_json::<Deployment>("Deployment", "[1, 2]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Deployment: invalid type: sequence, expected a map at line 1 column 0"
    );
}

#[test]
fn b16_truncated_json() {
    let e = from_json::<Gateway>("Gateway", r#"{"metadata": {"name": "gw""#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Gateway: EOF while parsing an object at line 1 column 26"
    );
}

#[test]
fn b17_deep_nesting_is_refused_without_overflowing_the_stack() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = format!(r#"{{"spec": {{"x": {deep}}}}}"#);
    let e = from_json::<Deployment>("Deployment", &text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Deployment: recursion limit exceeded at line 1 column 141"
    );
}

#[test]
fn b18_lone_surrogate_escape() {
    let e = from_json::<Gateway>("Gateway", r#"{"metadata": {"name": "\ud800"}}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Gateway: unexpected end of hex escape at line 1 column 30"
    );
}

#[test]
fn b19_settings_with_a_misspelt_key_or_negative_duration() {
    let e = from_json::<Settings>("settings", r#"{"degradedAftr": "1m"}"#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("settings: unknown field `degradedAftr`, expected one of"),
        "{e}"
    );
    let e = from_json::<Settings>("settings", r#"{"degradedAfter": "-5m"}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "settings: invalid duration \"-5m\": must not be negative at line 1 column 24"
    );
}

#[test]
fn b20_template_that_is_not_json() {
    let e = template::template_from_json("{nope").unwrap_err();
    assert!(matches!(e, InputError::Malformed { .. }));
    assert!(
        e.to_string()
            .starts_with("LB deployment template: invalid JSON: key must be a string"),
        "{e}"
    );
}

// ---- bad parameters: the documented InvalidParameters condition ------------------------------

#[test]
fn b21_invalid_cidr() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().spec.internal_subnets[0].cidr = "10.0.0.300/24".into();
    assert_eq!(accepted_message(&mut w), "invalid CIDR \"10.0.0.300/24\"");
    assert!(w.deployment.is_none());
}

#[test]
fn b22_cidr_with_absurd_prefix() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().spec.internal_subnets[1].cidr =
        "fd00::/99999999999999999999".into();
    assert_eq!(
        accepted_message(&mut w),
        "invalid CIDR \"fd00::/99999999999999999999\""
    );
}

#[test]
fn b23_invalid_quantity() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().spec.vertical_scaling = Some(
        serde_json::from_value(json!({"containers": [{"name": "router", "resources": {"requests": {"cpu": "1.2.3"}}}]}))
            .unwrap(),
    );
    assert_eq!(
        accepted_message(&mut w),
        "verticalScaling container \"router\": invalid quantity \"1.2.3\" for requests.cpu"
    );
}

#[test]
fn b24_template_without_containers() {
    let mut w = World::new();
    w.template =
        serde_json::from_value(json!({"spec": {"template": {"spec": {"containers": []}}}}))
            .unwrap();
    assert_eq!(
        accepted_message(&mut w),
        "invalid LB deployment template: spec.template.spec.containers is empty"
    );
}

#[test]
fn b25_template_without_pod_template() {
    let mut w = World::new();
    w.template = serde_json::from_value(json!({"kind": "Deployment"})).unwrap();
    assert_eq!(
        accepted_message(&mut w),
        "invalid LB deployment template: spec is missing"
    );
}

#[test]
fn b26_parameters_ref_of_another_kind() {
    let mut w = World::new();
    w.gateway = gateway_from(json!({
        "metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {"group": "", "kind": "ConfigMap", "name": "conf"}}}
    }));
    assert_eq!(
        accepted_message(&mut w),
        "unsupported parametersRef: group=\"\" kind=\"ConfigMap\" (expected meridio-2.nordix.org/GatewayConfiguration)"
    );
}

#[test]
fn b27_enormous_strings_are_truncated_in_messages() {
    let mut w = World::new();
    let huge = "x".repeat(1 << 20);
    w.reconcile(at(0), |_| {
        Some(WriteOutcome::from_parts(Some(422), "Invalid", &huge))
    });
    let p = w.condition("Programmed").unwrap();
    assert_eq!(p.status, "False");
    assert_eq!(p.message.chars().count(), 32768);
    assert!(
        w.gateway
            .status
            .conditions
            .iter()
            .all(|c| c.message.chars().count() <= 32768)
    );
}

#[test]
fn b28_enormous_names_do_not_panic() {
    // Past the API server's 253 characters, the name is refused (issue #45, N1), whatever
    // the shortened names would keep.
    let mut w = World::new();
    let enormous = "g".repeat(100_000);
    w.gateway.metadata.name = Some(enormous);
    let step = w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(step.action, "None");
    let accepted = w.condition("Accepted").unwrap();
    assert_eq!(accepted.reason, "InvalidParameters");
    assert!(
        accepted
            .message
            .ends_with("\": must be no more than 253 characters"),
        "{}",
        accepted.message
    );
    assert!(accepted.message.chars().count() < 400, "the name is cut");
    // Up to 253 it is not a failure (revision 4, section 4 "Names"): the LB Deployment name
    // and the gateway-name label are shortened with a hash.
    let mut w = World::new();
    let long = "g".repeat(253);
    w.gateway.metadata.name = Some(long.clone());
    w.routes = vec![route(&["20.0.0.1/32"])];
    let step = w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(step.action, "Create");
    assert_eq!(w.condition("Accepted").unwrap().reason, "Accepted");
    let deployment = w.deployment.as_ref().unwrap();
    let name = deployment.name().unwrap().to_owned();
    assert_eq!(name, lookup::deployment_name(&w.settings, &long));
    assert_eq!(name.len(), 63);
    assert!(
        name.starts_with(&format!("sllbr-{}-", "g".repeat(48))),
        "{name}"
    );
    let hash = &name[name.len() - 8..];
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let labels = deployment.labels();
    assert_eq!(labels["app"], name);
    assert_eq!(
        labels["gateway.networking.k8s.io/gateway-name"],
        format!("{}-{hash}", "g".repeat(54))
    );
}

/// A name whose bad characters lie past what the shortened names keep (issue #45, N1) gets
/// the failure a short bad name gets: the whole name is checked.
#[test]
fn b28b_bad_characters_past_the_shortened_part_are_refused() {
    let mut w = World::new();
    w.gateway.metadata.name = Some(format!("{}_UPPER/\u{e9}", "a".repeat(70)));
    let step = w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(step.action, "None");
    let accepted = w.condition("Accepted").unwrap();
    assert_eq!(accepted.reason, "InvalidParameters");
    assert!(
        accepted.message.starts_with(&format!(
            "Gateway name \"{}_UPPER/\u{e9}\": a lowercase RFC 1123 subdomain",
            "a".repeat(70)
        )),
        "{}",
        accepted.message
    );
}

// ---- odd observed state ------------------------------------------------------------------------

#[test]
fn b29_duplicate_owned_condition_types_collapse_to_the_first() {
    let mut w = World::healthy();
    let first = w.condition("Programmed").unwrap().clone();
    let mut dup = first.clone();
    dup.status = "False".into();
    dup.reason = "Invalid".into();
    w.gateway.status.conditions.push(dup);
    w.reconcile(at(5), |_| None);
    let programmed: Vec<_> = w
        .gateway
        .status
        .conditions
        .iter()
        .filter(|c| c.type_ == "Programmed")
        .collect();
    assert_eq!(programmed, [&first]);
}

#[test]
fn b30_invalid_owned_transition_time_is_repaired() {
    let mut w = World::healthy();
    w.edit_configuration();
    let fail =
        |_: &gateway_reconcile::DeploymentWrite| api_error(503, "ServiceUnavailable", "down");
    w.reconcile(at(10), fail);
    let i = w
        .gateway
        .status
        .conditions
        .iter()
        .position(|c| c.type_ == APPLIED)
        .unwrap();
    w.gateway.status.conditions[i].last_transition_time = "yesterday".into();
    w.reconcile(at(20), fail);
    assert_eq!(
        w.condition(APPLIED).unwrap().last_transition_time,
        "2026-01-01T00:00:20Z"
    );
}

#[test]
fn b31_generation_annotation_that_is_not_a_number() {
    let mut w = World::healthy();
    w.deployment.as_mut().unwrap().object["metadata"]["annotations"]["meridio-2.nordix.org/gatewayconfiguration-generation"] =
        "seven".into();
    let step = w.reconcile(at(5), |_| api_error(503, "ServiceUnavailable", "down"));
    assert_eq!(step.action, "Update");
    assert!(
        step.drift
            .iter()
            .any(|p| p.contains("gatewayconfiguration-generation")),
        "{:?}",
        step.drift
    );
    assert_eq!(
        w.condition("Programmed").unwrap().message,
        "LB Deployment reconciled with GatewayConfiguration generation unknown; generation 7 not applied yet"
    );
}

#[test]
fn b32_deployment_without_controller() {
    let mut w = World::healthy();
    w.deployment.as_mut().unwrap().object["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    let step = w.reconcile(at(5), |_| None);
    assert_eq!(step.action, "None");
    assert!(
        w.condition("Programmed")
            .unwrap()
            .message
            .contains("(owned by unknown, cannot proceed due to name collision)")
    );
}

#[test]
fn b33_eight_foreign_conditions_leave_no_room() {
    let mut w = World::new();
    for i in 0..8 {
        w.gateway
            .status
            .conditions
            .push(condition(&format!("example.com/C{i}"), "R", "", T0));
    }
    let foreign = w.gateway.status.conditions.clone();
    let step = w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(
        w.gateway.status.conditions, foreign,
        "foreign conditions are never dropped"
    );
    // No owned condition fits: only the listener status (revision 5) is written.
    let status = step.settlement.status.expect("the listeners are written");
    assert_eq!(status.conditions, foreign);
    assert_eq!(status.listeners.len(), w.gateway.spec.listeners.len());
    let again = w.reconcile(at(1), |_| None);
    assert!(again.settlement.status.is_none(), "nothing left to write");
}

#[test]
fn b34_deletion_timestamp_that_is_not_a_time_still_means_deleting() {
    let mut w = World::healthy();
    w.gateway.metadata.deletion_timestamp = Some("soon".into());
    let step = w.reconcile(at(5), |_| None);
    assert!(step.settlement.status.is_none());
}

#[test]
fn b35_route_with_garbage_is_skipped() {
    let mut w = World::healthy();
    // The second route has no namespace at all: only a listener admitting every namespace
    // takes it (revision 4, allowedRoutes).
    w.gateway.spec.listeners =
        serde_json::from_value(json!([{"name": "all", "port": 4000, "protocol": "TCP",
                "allowedRoutes": {"namespaces": {"from": "All"}}}]))
        .unwrap();
    w.routes = vec![
        route(&["", "/", "20.0.0.1", "::/", "1.2.3.4/33", "20.0.0.9/32"]),
        serde_json::from_value(
            json!({"metadata": {}, "spec": {"parentRefs": [{"name": "gw", "namespace": "ns"}],
                                                         "destinationCIDRs": ["30.0.0.1/32"]}}),
        )
        .unwrap(),
    ];
    w.reconcile(at(5), |_| None);
    let values: Vec<&str> = w
        .gateway
        .status
        .addresses
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    assert_eq!(values, ["20.0.0.9", "30.0.0.1"]);
}

/// Found by the render_drift fuzz target: two verticalScaling entries for `router`, one
/// enforced and one not, rendered differently on create and on update (endless updates).
#[test]
fn b36_container_named_twice_in_vertical_scaling() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().spec.vertical_scaling = Some(
        serde_json::from_value(json!({"containers": [
            {"name": "router", "enforceResources": true, "resources": {"requests": {"cpu": "77777777777", "memory": "7777777"}}},
            {"name": "router", "enforceResources": false, "resources": {"requests": {"cpu": "7777777777777", "memory": "777777"}}}
        ]}))
        .unwrap(),
    );
    assert_eq!(
        accepted_message(&mut w),
        "verticalScaling container \"router\": duplicate entry"
    );
    assert!(w.deployment.is_none());
}

/// Found by the render_drift fuzz target: a request finer than a nano is stored rounded up by
/// the API server (to a milli, as its defaulting rounds every request and limit); it must not
/// look like drift on every reconcile.
#[test]
fn b37_quantity_finer_than_a_nano() {
    let mut w = World::new();
    w.configuration.as_mut().unwrap().spec.vertical_scaling = Some(
        serde_json::from_value(json!({"containers": [{"name": "router", "enforceResources": true,
            "resources": {"requests": {"cpu": "00000013.158333000000000000000000000000000100000"}}}]}))
        .unwrap(),
    );
    assert_eq!(
        w.reconcile(at(0), |_| Some(WriteOutcome::Applied)).action,
        "Create"
    );
    let stored = &w.deployment.as_ref().unwrap().object["spec"]["template"]["spec"]["containers"];
    assert!(
        stored.to_string().contains("\"13159m\""),
        "the server rounds a request up to a milli"
    );
    assert_eq!(w.reconcile(at(1), |_| panic!("no write")).action, "None");
}

// ---- the command line's `plan` inputs: a key given twice is refused, not the last kept -------

/// Runs `plan` with `args`, each file given as (flag, name, text) written to a directory of
/// this test process; the exit status and the standard error after `plan: `.
fn plan_cli(files: &[(&str, &str, &str)], extra: &[&str]) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!(
        "gateway-reconcile-bad-input-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args: Vec<String> = vec!["plan".into()];
    for (flag, name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        args.push((*flag).into());
        args.push(path.to_str().unwrap().into());
    }
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gateway-reconcile"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The message names the file by its path: keep what follows the file name.
    let message = stderr
        .trim_end()
        .strip_prefix("gateway-reconcile plan: ")
        .unwrap_or(&stderr)
        .replace(&format!("{}/", dir.to_str().unwrap()), "");
    (out.status.code().unwrap_or(-1), message)
}

const GW: &str = r#"{"metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1}}"#;

#[test]
fn b38_plan_refuses_a_duplicate_key_naming_file_key_path_and_line() {
    let cases: [(&str, &str, &str, &str); 7] = [
        (
            "--gateway",
            "gw-dup.json",
            "{\"metadata\": {\"name\": \"gw\", \"namespace\": \"ns\", \"uid\": \"u\",\n \"name\": \"other\"}}",
            r#"--gateway gw-dup.json: duplicate key "metadata.name" at line 2 column 7"#,
        ),
        (
            "--gateway-class",
            "class-dup.json",
            "{\"spec\": {\"controllerName\": \"a\"},\n\"spec\": {}}",
            r#"--gateway-class class-dup.json: duplicate key "spec" at line 2 column 6"#,
        ),
        (
            "--configuration",
            "conf-dup.json",
            "{\"spec\": {\"internalSubnets\": [{\"cidr\": \"10.0.0.0/24\",\n  \"cidr\": \"10.0.1.0/24\"}]}}",
            r#"--configuration conf-dup.json: duplicate key "spec.internalSubnets[0].cidr" at line 2 column 8"#,
        ),
        (
            "--deployment",
            "dep-dup.json",
            "{\"spec\": {\"replicas\": 1,\n \"replicas\": 2}}",
            r#"--deployment dep-dup.json: duplicate key "spec.replicas" at line 2 column 11"#,
        ),
        (
            "--template",
            "tpl-dup.json",
            "{\"kind\": \"Deployment\", \"kind\": \"Deployment\"}",
            r#"--template tpl-dup.json: duplicate key "kind" at line 1 column 29"#,
        ),
        (
            "--routes",
            "routes-dup.json",
            "{\"items\": [{\"spec\": {}},\n {\"metadata\": {\"name\": \"a\", \"name\": \"b\"}}]}",
            r#"--routes routes-dup.json: duplicate key "items[1].metadata.name" at line 2 column 34"#,
        ),
        (
            "--settings",
            "settings-dup.json",
            "{\"resync\": \"1m\",\n\n \"resync\": \"2m\"}",
            r#"--settings settings-dup.json: duplicate key "resync" at line 3 column 9"#,
        ),
    ];
    for (flag, name, text, want) in cases {
        let mut files = vec![(flag, name, text)];
        if flag != "--gateway" {
            files.push(("--gateway", "gw-ok.json", GW));
        }
        let (code, message) = plan_cli(&files, &["--now", "2026-01-01T00:00:00Z"]);
        assert_eq!((code, message.as_str()), (2, want), "{flag}");
    }
}

#[test]
fn b39_plan_outcome_refuses_a_duplicate_key() {
    let (code, message) = plan_cli(
        &[
            ("--gateway", "gw-ok-outcome.json", GW),
            (
                "--outcome",
                "outcome-dup.json",
                "{\"code\": 503,\n \"code\": 409}",
            ),
        ],
        &[],
    );
    assert_eq!(
        (code, message.as_str()),
        (
            2,
            r#"--outcome outcome-dup.json: duplicate key "code" at line 2 column 7"#
        )
    );
    let (code, message) = plan_cli(
        &[("--gateway", "gw-ok-outcome.json", GW)],
        &["--outcome", r#"{"reason": "a", "reason": "b"}"#],
    );
    assert_eq!(
        (code, message.as_str()),
        (
            2,
            r#"--outcome inline JSON: duplicate key "reason" at line 1 column 24"#
        )
    );
}

// ---- lists over the bounds of their CRDs ------------------------------------------------------

/// Each bounded list of the parameters: at its bound the Gateway is programmed, one over it
/// gives `InvalidParameters` naming the field and the limit, and nothing is created.
#[test]
fn b40_parameter_lists_over_their_crd_bounds() {
    use gateway_reconcile::wire::{InternalSubnet, NetworkAttachment};
    // The CRDs' bounds, as the `reconcile` docs state them (section "Validation").
    const MAX_INTERNAL_SUBNETS: usize = 2;
    const MAX_NETWORK_ATTACHMENTS: usize = 10;
    const MAX_INFRASTRUCTURE_ENTRIES: usize = 8;
    type Edit = fn(&mut World, usize);
    let subnets: Edit = |w, n| {
        w.configuration.as_mut().unwrap().spec.internal_subnets = (0..n)
            .map(|i| InternalSubnet {
                attachment_type: "NAD".into(),
                cidr: format!("10.{i}.0.0/16"),
            })
            .collect();
    };
    let attachments: Edit = |w, n| {
        w.configuration.as_mut().unwrap().spec.network_attachments = (0..n)
            .map(|i| -> NetworkAttachment {
                serde_json::from_value(
                    json!({"type": "NAD", "nad": {"name": format!("n{i}"), "interface": format!("net{i}")}}),
                )
                .unwrap()
            })
            .collect();
    };
    let labels: Edit = |w, n| {
        let infra = w.gateway.spec.infrastructure.as_mut().unwrap();
        infra.labels = (0..n).map(|i| (format!("l{i}"), "v".into())).collect();
    };
    let annotations: Edit = |w, n| {
        let infra = w.gateway.spec.infrastructure.as_mut().unwrap();
        infra.annotations = (0..n).map(|i| (format!("a{i}"), "v".into())).collect();
    };
    let cases: [(Edit, usize, &str); 4] = [
        (
            subnets,
            MAX_INTERNAL_SUBNETS,
            "GatewayConfiguration spec.internalSubnets: must have at most 2 items (has 3)",
        ),
        (
            attachments,
            MAX_NETWORK_ATTACHMENTS,
            "GatewayConfiguration spec.networkAttachments: must have at most 10 items (has 11)",
        ),
        (
            labels,
            MAX_INFRASTRUCTURE_ENTRIES,
            "Gateway spec.infrastructure.labels: must have at most 8 entries (has 9)",
        ),
        (
            annotations,
            MAX_INFRASTRUCTURE_ENTRIES,
            "Gateway spec.infrastructure.annotations: must have at most 8 entries (has 9)",
        ),
    ];
    for (edit, limit, want) in cases {
        let mut w = World::new();
        edit(&mut w, limit);
        w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
        let programmed = w.condition("Programmed").expect("Programmed");
        assert_eq!(programmed.status, "True", "at the bound: {want}");
        assert!(w.deployment.is_some(), "at the bound: {want}");

        let mut w = World::new();
        edit(&mut w, limit + 1);
        assert_eq!(accepted_message(&mut w), want);
        let c = w.condition("Accepted").unwrap();
        assert_eq!(c.reason, "InvalidParameters");
        assert!(w.deployment.is_none(), "{want}");
    }
}

/// A route over its CRD's bounds is skipped like an unparsable CIDR; the Gateway stays
/// programmed with the other routes' addresses.
#[test]
fn b41_route_lists_over_their_crd_bounds_are_skipped() {
    let mut w = World::healthy();
    let hundred: Vec<String> = (0..100).map(|i| format!("20.0.0.{i}/32")).collect();
    let hundred: Vec<&str> = hundred.iter().map(String::as_str).collect();
    let mut over = hundred.clone();
    over.push("20.0.1.0/32");
    let mut two_parents = route(&["40.0.0.1/32"]);
    two_parents
        .spec
        .parent_refs
        .push(two_parents.spec.parent_refs[0].clone());
    w.routes = vec![route(&over), two_parents, route(&["30.0.0.1/32"])];
    w.reconcile(at(5), |_| None);
    let values: Vec<&str> = w
        .gateway
        .status
        .addresses
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    assert_eq!(values, ["30.0.0.1"]);
    assert_eq!(w.condition("Programmed").unwrap().status, "True");
    // At the bound the route counts: its 16 smallest addresses (as strings).
    w.routes = vec![route(&hundred)];
    w.reconcile(at(6), |_| None);
    assert_eq!(w.gateway.status.addresses.len(), 16);
    assert_eq!(w.gateway.status.addresses[0].value, "20.0.0.0");
}

// ---- issue #45: the revision-4 surface --------------------------------------------------------

/// W1: a class `parametersRef` with an empty namespace names no namespace: the class is
/// refused and so is a Gateway that uses it, never a configuration of any namespace.
#[test]
fn b42_an_empty_class_reference_namespace_is_a_missing_one() {
    let mut w = World::new();
    w.gateway.spec.infrastructure = None;
    w.class = Some(
        serde_json::from_value(json!({
            "metadata": {"name": "meridio", "generation": 1},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                    "name": "conf", "namespace": ""}}
        }))
        .unwrap(),
    );
    let step = w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(step.action, "None");
    let accepted = w.condition("Accepted").unwrap();
    assert_eq!(
        (accepted.reason.as_str(), accepted.message.as_str()),
        (
            "InvalidParameters",
            "parametersRef.namespace is required for a GatewayConfiguration"
        )
    );
    let class = w.class.clone().unwrap();
    assert_eq!(
        lookup::class_configuration_ref(&w.settings, &class),
        None,
        "no configuration is looked up for the class"
    );
    let settled = gateway_reconcile::gateway_class::settle_class(
        &w.settings,
        &class,
        gateway_reconcile::gateway_class::ConfigurationPresence::Exists,
        at(0),
    )
    .unwrap();
    let class_accepted = &settled.conditions.unwrap()[0];
    assert_eq!(class_accepted.status, "False");
    assert_eq!(
        class_accepted.message,
        "parametersRef.namespace is required for a GatewayConfiguration"
    );
}

/// W2: a selector Kubernetes refuses selects nothing, whatever the namespace's labels.
#[test]
fn b43_a_selector_kubernetes_refuses_admits_nothing() {
    let refused = [
        json!({"matchExpressions": [{"key": "bad key!", "operator": "DoesNotExist"}]}),
        json!({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["not a label value!"]}]}),
        json!({"matchLabels": {"team": "v".repeat(64)}}),
        json!({"matchLabels": {"Team/": "red"}}),
        json!({"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["red"]}]}),
    ];
    for selector in refused {
        let mut w = World::new();
        w.gateway.spec.listeners = serde_json::from_value(json!([{"name": "all", "port": 4000,
            "protocol": "TCP", "allowedRoutes": {"namespaces": {"from": "Selector",
                "selector": selector}}}]))
        .unwrap();
        let mut tenant = route(&["30.0.0.1/32"]);
        tenant.metadata.namespace = Some("tenant".into());
        tenant.spec.parent_refs[0].namespace = Some("ns".into());
        w.routes = vec![tenant.clone()];
        w.namespaces
            .insert("tenant".into(), [("team".into(), "blue".into())].into());
        w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
        assert!(
            w.gateway.status.addresses.is_empty(),
            "{selector}: {:?}",
            w.gateway.status.addresses
        );
        assert_eq!(
            w.gateway.status.listeners[0].attached_routes, 0,
            "{selector}"
        );
        assert!(!lookup::route_attaches(&tenant, &w.gateway, &w.namespaces));
    }
    // The same shape with valid keys and values admits the namespace.
    let mut w = World::new();
    w.gateway.spec.listeners = serde_json::from_value(json!([{"name": "all", "port": 4000,
        "protocol": "TCP", "allowedRoutes": {"namespaces": {"from": "Selector",
            "selector": {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["red"]}]}}}}]))
    .unwrap();
    let mut tenant = route(&["30.0.0.1/32"]);
    tenant.metadata.namespace = Some("tenant".into());
    tenant.spec.parent_refs[0].namespace = Some("ns".into());
    w.routes = vec![tenant];
    w.namespaces
        .insert("tenant".into(), [("team".into(), "blue".into())].into());
    w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
    assert_eq!(w.gateway.status.addresses.len(), 1);
}

/// E1 (the class part): a negative class generation is an input error naming the field,
/// never an `observedGeneration: -1` the API server would refuse.
#[test]
fn b44_a_negative_class_generation_is_refused() {
    let class: gateway_reconcile::wire::GatewayClass = serde_json::from_value(json!({
        "metadata": {"name": "meridio", "generation": -1},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
    }))
    .unwrap();
    let error = gateway_reconcile::gateway_class::settle_class(
        &Settings::default(),
        &class,
        gateway_reconcile::gateway_class::ConfigurationPresence::Missing,
        at(0),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"GatewayClass "meridio": metadata.generation must not be negative (got -1)"#
    );
}
