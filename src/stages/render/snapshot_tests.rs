//! Snapshots of the rendered LB Deployment: the create path, and the update path over a
//! server-defaulted Deployment that others have edited.

use crate::Settings;
use crate::nad::NetworkSelection;
use crate::render::render;
use crate::template::default_template;
use crate::validate::validate;
use crate::wire::{Deployment, Gateway, GatewayConfiguration};
use serde_json::json;

fn gateway() -> Gateway {
    serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {
            "name": "sllb-a", "namespace": "red", "uid": "0c9a7e1e-5b7d-4c38-9a43-2f1f0d6f1a01",
            "generation": 2
        },
        "spec": {
            "gatewayClassName": "meridio-2", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}],
            "infrastructure": {
                "labels": { "team": "red-team" },
                "annotations": { "example.com/owner": "networking" },
                "parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                    "name": "sllb-a-config"
                }
            }
        }
    }))
    .unwrap()
}

fn configuration() -> GatewayConfiguration {
    serde_json::from_value(json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1",
        "kind": "GatewayConfiguration",
        "metadata": { "name": "sllb-a-config", "namespace": "red", "generation": 5,
                      "uid": "6b1f3c2e-0000-4000-8000-00000000c0f1" },
        "spec": {
            "networkAttachments": [
                { "type": "NAD", "nad": { "name": "vlan-100", "interface": "ext0" } },
                { "type": "NAD", "nad": { "name": "vlan-200", "namespace": "net", "interface": "ext1" } }
            ],
            "internalSubnets": [
                { "attachmentType": "NAD", "cidr": "169.254.100.0/24" },
                { "attachmentType": "NAD", "cidr": "fd00:100::/64" }
            ],
            "horizontalScaling": { "replicas": 3 },
            "verticalScaling": { "containers": [
                { "name": "router", "enforceResources": true,
                  "resources": { "requests": { "cpu": "0.2", "memory": "64Mi" },
                                 "limits": { "memory": "256Mi" } } },
                { "name": "loadbalancer",
                  "resources": { "requests": { "cpu": "500m" } },
                  "resizePolicy": [{ "resourceName": "cpu", "restartPolicy": "NotRequired" }] }
            ] }
        }
    }))
    .unwrap()
}

fn networks() -> Vec<NetworkSelection> {
    let sel = |ns: &str, name: &str, interface: &str| NetworkSelection {
        name: name.into(),
        namespace: ns.into(),
        interface: interface.into(),
    };
    vec![
        sel("red", "vlan-100", "ext0"),
        sel("net", "vlan-200", "ext1"),
    ]
}

/// The LB Deployment as the API server returns it some time after an earlier version of the
/// controller wrote it: server defaults everywhere, an HPA-set replica count, a VPA-set
/// loadbalancer request, an older image, a foreign label and annotation, the generation of
/// an older GatewayConfiguration, the networks annotation in shorthand, and a status.
fn observed() -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "sllbr-sllb-a",
            "namespace": "red",
            "uid": "6f1d2c3b-0000-4000-8000-00000000beef",
            "resourceVersion": "48213",
            "generation": 4,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "app": "sllbr-sllb-a",
                "app.kubernetes.io/managed-by": "gateway-controller.meridio-2.nordix.org",
                "gateway.networking.k8s.io/gateway-name": "sllb-a",
                "argocd.argoproj.io/instance": "red-lb"
            },
            "annotations": {
                "deployment.kubernetes.io/revision": "4",
                "meridio-2.nordix.org/gatewayconfiguration-generation": "3"
            },
            "ownerReferences": [{
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "name": "sllb-a", "uid": "0c9a7e1e-5b7d-4c38-9a43-2f1f0d6f1a01",
                "controller": true, "blockOwnerDeletion": true
            }]
        },
        "spec": {
            "replicas": 4,
            "selector": { "matchLabels": { "app": "sllbr-sllb-a" } },
            "progressDeadlineSeconds": 600,
            "revisionHistoryLimit": 10,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": { "maxSurge": "25%", "maxUnavailable": "25%" }
            },
            "template": {
                "metadata": {
                    "creationTimestamp": null,
                    "labels": {
                        "app": "sllbr-sllb-a",
                        "app.kubernetes.io/managed-by": "gateway-controller.meridio-2.nordix.org",
                        "gateway.networking.k8s.io/gateway-name": "sllb-a"
                    },
                    "annotations": {
                        "k8s.v1.cni.cncf.io/networks": "net/vlan-200@ext1, vlan-100@ext0",
                        "kubectl.kubernetes.io/restartedAt": "2026-01-02T10:00:00Z"
                    }
                },
                "spec": {
                    "containers": [
                        {
                            "name": "loadbalancer",
                            "image": "ghcr.io/nordix/meridio-2/stateless-load-balancer:v0.1.0",
                            "imagePullPolicy": "IfNotPresent",
                            "env": [{ "name": "MERIDIO_GATEWAY_NAME", "value": "sllb-a" }],
                            "resources": { "requests": { "cpu": "750m", "memory": "64Mi" } },
                            "securityContext": { "capabilities": { "add": ["NET_ADMIN"] } },
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"
                        },
                        {
                            "name": "router",
                            "image": "ghcr.io/nordix/meridio-2/router:v0.1.0",
                            "imagePullPolicy": "IfNotPresent",
                            "env": [
                                { "name": "MERIDIO_GATEWAY_NAME", "value": "sllb-a" },
                                { "name": "POD_NAME", "valueFrom": { "fieldRef": {
                                    "apiVersion": "v1", "fieldPath": "metadata.name" } } }
                            ],
                            "resources": { "requests": { "cpu": "100m" } },
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"
                        }
                    ],
                    "dnsPolicy": "ClusterFirst",
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "serviceAccount": "stateless-load-balancer",
                    "serviceAccountName": "stateless-load-balancer",
                    "terminationGracePeriodSeconds": 30,
                    "readinessGates": [
                        { "conditionType": "meridio-2.nordix.org/ipv4-connectivity" }
                    ]
                }
            }
        },
        "status": {
            "observedGeneration": 4,
            "replicas": 4,
            "updatedReplicas": 4,
            "readyReplicas": 4,
            "availableReplicas": 4,
            "conditions": [{
                "type": "Available", "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastTransitionTime": "2026-01-01T00:01:00Z",
                "lastUpdateTime": "2026-01-01T00:01:00Z"
            }]
        }
    }))
    .unwrap()
}

fn rendered(observed: Option<&Deployment>) -> Deployment {
    let (cfg, gateway, template) = (configuration(), gateway(), default_template());
    let settings = Settings::default();
    let validated = validate(&settings, &gateway, Some(&cfg), &template).unwrap();
    assert_eq!(validated.networks(), networks());
    assert!(validated.ipv4() && validated.ipv6());
    render(&settings, &gateway, &validated, &template, observed)
}

#[test]
fn create() {
    insta::assert_json_snapshot!("create", rendered(None));
}

#[test]
fn update_over_a_server_defaulted_deployment() {
    let observed = observed();
    let desired = rendered(Some(&observed));
    insta::assert_json_snapshot!("update", desired);
    // The rendered update is itself a fixed point.
    assert_eq!(rendered(Some(&desired)), desired);
}
