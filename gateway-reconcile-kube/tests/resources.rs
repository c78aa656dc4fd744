//! The typed GatewayConfiguration and L34Route hold every field of their CRDs, and convert
//! to the core's wire types with nothing lost: the wire type read through the typed
//! resource equals the wire type read from the same JSON directly. The Gateway and
//! GatewayClass the controller reads, and every status condition, take the times the API
//! server accepts and k8s-openapi's `Time` cannot hold.

use gateway_reconcile::wire;
use gateway_reconcile_kube::resources::{Gateway, GatewayClass, GatewayConfiguration, L34Route};
use serde_json::{Value, json};

fn configuration() -> Value {
    json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
        "metadata": { "name": "conf", "namespace": "ns", "uid": "u-1", "generation": 4,
                      "resourceVersion": "77", "labels": { "a": "b" } },
        "spec": {
            "networkAttachments": [
                { "description": "vlan 100", "type": "NAD",
                  "nad": { "interface": "eth1", "name": "vlan", "namespace": "ns" } }
            ],
            "internalSubnets": [
                { "attachmentType": "NAD", "cidr": "169.254.100.0/24" },
                { "attachmentType": "NAD", "cidr": "fd00:100::/64" }
            ],
            "horizontalScaling": { "replicas": 3, "enforceReplicas": true },
            "verticalScaling": { "containers": [
                { "name": "router", "enforceResources": true,
                  "resources": { "requests": { "cpu": "500m", "memory": "1Gi" },
                                 "limits": { "memory": "2Gi" },
                                 "claims": [{ "name": "gpu" }] },
                  "resizePolicy": [{ "resourceName": "cpu", "restartPolicy": "NotRequired" }] }
            ] }
        },
        "status": { "conditions": [
            { "type": "Ready", "status": "True", "reason": "Ok", "message": "",
              "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 4 }
        ] }
    })
}

fn route() -> Value {
    json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
        "metadata": { "name": "r", "namespace": "ns", "uid": "u-2" },
        "spec": {
            "parentRefs": [{ "group": "gateway.networking.k8s.io", "kind": "Gateway",
                             "name": "gw", "namespace": "other", "sectionName": "s", "port": 80 }],
            "backendRefs": [{ "group": "", "kind": "Service", "name": "backend", "port": 8080, "weight": 1 }],
            "destinationCIDRs": ["20.0.0.1/32", "2001:db8::1/128"],
            "sourceCIDRs": ["0.0.0.0/0"],
            "sourcePorts": ["any"],
            "destinationPorts": ["80", "443"],
            "protocols": ["TCP", "UDP"],
            "priority": 2,
            "byteMatches": ["tcp[0:2] == 80"]
        },
        "status": { "parents": [] }
    })
}

/// `value` without the keys the serialization of `typed` kept: what is left was lost.
fn lost(input: &Value, output: &Value) -> Vec<String> {
    fn walk(path: String, input: &Value, output: &Value, out: &mut Vec<String>) {
        match (input, output) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in a {
                    match b.get(k) {
                        Some(w) => walk(format!("{path}.{k}"), v, w, out),
                        None => out.push(format!("{path}.{k}")),
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (i, (v, w)) in a.iter().zip(b).enumerate() {
                    walk(format!("{path}[{i}]"), v, w, out);
                }
            }
            (a, b) if a == b => {}
            _ => out.push(path),
        }
    }
    let mut out = Vec::new();
    walk(String::new(), input, output, &mut out);
    out
}

#[test]
fn gateway_configuration_keeps_every_crd_field() {
    let input = configuration();
    let typed: GatewayConfiguration = serde_json::from_value(input.clone()).expect("typed");
    let output = serde_json::to_value(&typed).expect("json");
    assert_eq!(lost(&input, &output), Vec::<String>::new());
    let via_typed = wire::GatewayConfiguration::try_from(&typed).expect("wire");
    let direct: wire::GatewayConfiguration = serde_json::from_value(input).expect("wire");
    assert_eq!(via_typed, direct);
    assert_eq!(via_typed.metadata.generation, Some(4));
    assert_eq!(via_typed.spec.internal_subnets.len(), 2);
}

#[test]
fn l34_route_keeps_every_crd_field() {
    let input = route();
    let typed: L34Route = serde_json::from_value(input.clone()).expect("typed");
    let output = serde_json::to_value(&typed).expect("json");
    assert_eq!(lost(&input, &output), Vec::<String>::new());
    let via_typed = wire::L34Route::try_from(&typed).expect("wire");
    let direct: wire::L34Route = serde_json::from_value(input).expect("wire");
    assert_eq!(via_typed, direct);
    assert_eq!(via_typed.spec.destination_cidrs.len(), 2);
}

#[test]
fn a_field_of_a_newer_route_revision_is_kept() {
    let mut input = route();
    input["spec"]["futureField"] = json!({ "x": 1 });
    let typed: L34Route = serde_json::from_value(input.clone()).expect("typed");
    let output = serde_json::to_value(&typed).expect("json");
    assert_eq!(lost(&input, &output), Vec::<String>::new());
}

/// Accepted by the API server (RFC 3339, four-digit year), past jiff's last `Timestamp`.
const PAST_9999: &str = "9999-12-31T23:59:59Z";

fn gateway() -> Value {
    json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": { "name": "gw", "namespace": "ns", "uid": "u-3", "generation": 2,
                      "resourceVersion": "9" },
        "spec": { "gatewayClassName": "meridio",
                  "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }],
                  "infrastructure": { "parametersRef": {
                      "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf" } } },
        "status": {
            "addresses": [{ "type": "IPAddress", "value": "20.0.0.1" }],
            "conditions": [
                { "type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
                  "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 2 },
                { "type": "meridio-2.nordix.org/ConfigurationApplied", "status": "False",
                  "reason": "ApplyFailed", "message": "by hand",
                  "lastTransitionTime": PAST_9999, "observedGeneration": 2 }
            ],
            "listeners": [{ "name": "tcp", "attachedRoutes": 0, "supportedKinds": [],
                "conditions": [{ "type": "Programmed", "status": "True", "reason": "Programmed",
                                 "message": "", "lastTransitionTime": PAST_9999 }] }]
        }
    })
}

#[test]
fn a_gateway_whose_status_time_is_past_year_9999_is_read_and_its_time_kept() {
    let input = gateway();
    // gateway-api's type cannot read it: this is why the controller does not use it.
    let error =
        serde_json::from_value::<gateway_api::apis::standard::gateways::Gateway>(input.clone())
            .expect_err("gateway-api's Gateway reads times as jiff Timestamps");
    assert!(error.to_string().contains("overflowed"), "{error}");

    let typed: Gateway = serde_json::from_value(input.clone()).expect("read");
    assert_eq!(typed.spec.gateway_class_name, "meridio");
    let output = serde_json::to_value(&typed).expect("json");
    let mut without_type = input.clone();
    for key in ["apiVersion", "kind"] {
        without_type.as_object_mut().map(|o| o.remove(key));
    }
    assert_eq!(lost(&without_type, &output), Vec::<String>::new());
    let via_typed = wire::Gateway::try_from(&typed).expect("wire");
    let direct: wire::Gateway = serde_json::from_value(input).expect("wire");
    assert_eq!(via_typed, direct);
    assert_eq!(
        via_typed.status.conditions[1].last_transition_time,
        PAST_9999
    );
    assert_eq!(
        via_typed
            .spec
            .infrastructure
            .and_then(|i| i.parameters_ref)
            .map(|p| p.name),
        Some("conf".to_owned())
    );
}

#[test]
fn a_gateway_class_and_a_configuration_whose_status_time_is_past_year_9999_are_read() {
    let class = json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
        "metadata": { "name": "meridio", "uid": "u-4" },
        "spec": { "controllerName": "meridio-2.nordix.org/gateway-controller" },
        "status": { "conditions": [{ "type": "Accepted", "status": "True", "reason": "Accepted",
            "message": "", "lastTransitionTime": PAST_9999 }] }
    });
    let typed: GatewayClass = serde_json::from_value(class.clone()).expect("class");
    let via_typed = wire::GatewayClass::try_from(&typed).expect("wire");
    let direct: wire::GatewayClass = serde_json::from_value(class).expect("wire");
    assert_eq!(via_typed, direct);
    assert_eq!(
        via_typed.spec.controller_name,
        "meridio-2.nordix.org/gateway-controller"
    );

    let mut input = configuration();
    input["status"]["conditions"][0]["lastTransitionTime"] = json!(PAST_9999);
    let typed: GatewayConfiguration = serde_json::from_value(input.clone()).expect("typed");
    let output = serde_json::to_value(&typed).expect("json");
    assert_eq!(lost(&input, &output), Vec::<String>::new());
    let status = typed.status.expect("status");
    assert_eq!(status.conditions[0].last_transition_time, PAST_9999);
}
