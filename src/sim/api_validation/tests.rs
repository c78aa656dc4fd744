//! Unit tests of `sim::api_validation`.

use super::*;
use crate::wire::tree::tree_json as json;

fn refused(value: Value) -> Option<(u16, String)> {
    let Value::Object(object) = value else {
        panic!("not an object: {value}")
    };
    let d = Deployment::from_object(object);
    refusal(&d).map(|r| match r {
        WriteOutcome::Api(e) => (e.code, e.message),
        other => panic!("not an API error: {other:?}"),
    })
}

fn with_resources(resources: Value) -> Value {
    json!({ "metadata": { "name": "lb" }, "spec": { "template": { "spec": {
        "containers": [{ "name": "a", "resources": resources }] } } } })
}

#[test]
fn a_valid_deployment_passes() {
    let ok = json!({
        "metadata": { "name": "sllbr-gw.example", "labels": { "app": "sllbr-gw", "e": "" } },
        "spec": { "replicas": 0, "selector": { "matchLabels": { "app": "sllbr-gw" } },
                  "template": { "metadata": { "labels": { "app": "A_b.c-1" } }, "spec": {
                      "containers": [{ "name": "a",
                          "resources": { "requests": { "cpu": "0.5", "m": 3 } } }] } } }
    });
    assert_eq!(refused(ok), None);
}

#[test]
fn refusals_in_the_api_server_format() {
    let long = "x".repeat(64);
    let cases = [
        (
            json!({ "metadata": { "name": "lb" }, "spec": { "replicas": -3 } }),
            422,
            r#"Deployment.apps "lb" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0"#.to_owned(),
        ),
        (
            json!({ "metadata": { "name": "Bad_Name" } }),
            422,
            r#"Deployment.apps "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#.to_owned(),
        ),
        (
            json!({ "metadata": { "name": "lb", "labels": { "app": long } } }),
            422,
            format!(r#"Deployment.apps "lb" is invalid: metadata.labels: Invalid value: "{long}": must be no more than 63 characters"#),
        ),
        (
            json!({ "metadata": { "name": "lb" },
                    "spec": { "replicas": -1, "template": { "metadata": { "labels": { "k": "-x" } } } } }),
            422,
            r#"Deployment.apps "lb" is invalid: [spec.template.metadata.labels: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.replicas: Invalid value: -1: must be greater than or equal to 0]"#.to_owned(),
        ),
        (
            with_resources(json!({ "limits": { "memory": "-1Gi" } })),
            422,
            r#"Deployment.apps "lb" is invalid: spec.template.spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0"#.to_owned(),
        ),
        (
            with_resources(json!({ "requests": { "cpu": "lots" } })),
            400,
            format!("Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '{QUANTITY_REGEX}'"),
        ),
    ];
    for (value, code, message) in cases {
        assert_eq!(refused(value), Some((code, message)));
    }
}

#[test]
fn the_name_is_limited_to_253_characters() {
    let name = format!("{}.{}", "a".repeat(63), "b".repeat(200));
    let (_, message) = refused(json!({ "metadata": { "name": name } })).unwrap();
    assert!(
        message.ends_with("must be no more than 253 characters"),
        "{message}"
    );
}
