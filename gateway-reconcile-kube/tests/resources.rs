//! The typed GatewayConfiguration and L34Route hold every field of their CRDs, and convert
//! to the core's wire types with nothing lost: the wire type read through the typed
//! resource equals the wire type read from the same JSON directly.

use gateway_reconcile::wire;
use gateway_reconcile_kube::resources::{GatewayConfiguration, L34Route};
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
