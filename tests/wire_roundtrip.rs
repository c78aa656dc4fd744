//! The wire types read real `kubectl get -o json` output and write it back losing nothing
//! the crate reads or writes back.

use gateway_reconcile::wire::{Deployment, Gateway, GatewayConfiguration, L34Route};
use serde_json::{Value, json};

/// A Deployment as the API server returns it: managedFields, server defaults, status.
fn server_deployment() -> Value {
    json!({
      "apiVersion": "apps/v1",
      "kind": "Deployment",
      "metadata": {
        "annotations": {
          "deployment.kubernetes.io/revision": "3",
          "meridio-2.nordix.org/gatewayconfiguration-generation": "7"
        },
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "generation": 3,
        "labels": {"app": "sllbr-gw"},
        "managedFields": [{
          "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
          "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:replicas": {}}},
          "manager": "gateway-controller", "operation": "Apply", "time": "2026-01-01T00:00:00Z"
        }],
        "name": "sllbr-gw",
        "namespace": "ns",
        "ownerReferences": [{"apiVersion": "gateway.networking.k8s.io/v1", "blockOwnerDeletion": true,
                             "controller": true, "kind": "Gateway", "name": "gw", "uid": "gw-uid"}],
        "resourceVersion": "123456",
        "uid": "8d2c3f4e-0000-4000-8000-000000000001"
      },
      "spec": {
        "progressDeadlineSeconds": 600,
        "replicas": 2,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "sllbr-gw"}},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
        "template": {
          "metadata": {"creationTimestamp": null, "labels": {"app": "sllbr-gw"}},
          "spec": {
            "containers": [{
              "image": "ghcr.io/nordix/meridio-2/router:v1.2.3",
              "imagePullPolicy": "IfNotPresent",
              "livenessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
              "name": "router",
              "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "500m"}},
              "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}, "privileged": false},
              "terminationMessagePath": "/dev/termination-log",
              "terminationMessagePolicy": "File",
              "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]
            }],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {"sysctls": [{"name": "net.ipv4.ip_forward", "value": "1"}]},
            "serviceAccount": "stateless-load-balancer",
            "serviceAccountName": "stateless-load-balancer",
            "terminationGracePeriodSeconds": 30,
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]
          }
        }
      },
      "status": {
        "availableReplicas": 2,
        "conditions": [
          {"lastTransitionTime": "2026-01-01T00:00:10Z", "lastUpdateTime": "2026-01-01T00:00:10Z",
           "message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable",
           "status": "True", "type": "Available"},
          {"lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:10Z",
           "message": "ReplicaSet \"sllbr-gw-5d4f\" has successfully progressed.", "reason": "NewReplicaSetAvailable",
           "status": "True", "type": "Progressing"}
        ],
        "observedGeneration": 3,
        "readyReplicas": 2,
        "replicas": 2,
        "updatedReplicas": 2
      }
    })
}

#[test]
fn a_server_deployment_round_trips_whole() {
    let wire = server_deployment();
    let d: Deployment = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(d.name(), Some("sllbr-gw"));
    assert_eq!(d.namespace(), Some("ns"));
    assert_eq!(d.generation(), Some(3));
    assert_eq!(
        d.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
        Some("7")
    );
    assert_eq!(d.controller_owner(), Some(("Gateway", "gw", "gw-uid")));
    assert_eq!(serde_json::to_value(&d).unwrap(), wire);
    // And through text, as a client would send it.
    let text = serde_json::to_string(&d).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), wire);
}

#[test]
fn a_gateway_reads_what_the_crate_needs_and_keeps_its_status() {
    let wire = json!({
      "apiVersion": "gateway.networking.k8s.io/v1",
      "kind": "Gateway",
      "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 4,
                   "resourceVersion": "99", "creationTimestamp": "2026-01-01T00:00:00Z",
                   "annotations": {"a": "b"}, "labels": {"l": "v"}},
      "spec": {
        "gatewayClassName": "meridio",
        "infrastructure": {"labels": {"team": "net"}, "annotations": {"x/y": "z"},
          "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}},
        "listeners": [{"name": "any", "port": 5000, "protocol": "TCP"}]
      },
      "status": {
        "addresses": [{"type": "IPAddress", "value": "20.0.0.1"}],
        "conditions": [{"type": "Accepted", "status": "True", "observedGeneration": 4,
                        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Accepted",
                        "message": "Gateway accepted by meridio-2.nordix.org/gateway-controller"}],
        "listeners": [{"name": "any", "attachedRoutes": 0, "conditions": [], "supportedKinds": []}]
      }
    });
    let gw: Gateway = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(gw.metadata.generation, Some(4));
    let infra = gw.spec.infrastructure.as_ref().unwrap();
    assert_eq!(
        infra.parameters_ref.as_ref().unwrap().kind,
        "GatewayConfiguration"
    );
    assert_eq!(infra.labels["team"], "net");
    // The status (which the crate writes back) is kept whole, foreign fields included.
    assert_eq!(serde_json::to_value(&gw.status).unwrap(), wire["status"]);
    // Metadata, too.
    assert_eq!(
        serde_json::to_value(&gw.metadata).unwrap(),
        wire["metadata"]
    );
}

#[test]
fn configuration_and_route_read_from_crd_json() {
    let conf: GatewayConfiguration = serde_json::from_value(json!({
      "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
      "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
      "spec": {
        "networkAttachments": [{"description": "ext", "type": "NAD",
                                "nad": {"interface": "net1", "name": "vlan-100", "namespace": "infra"}}],
        "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
        "horizontalScaling": {"replicas": 3, "enforceReplicas": true},
        "verticalScaling": {"containers": [{"name": "router", "enforceResources": true,
          "resources": {"requests": {"cpu": "100m"}},
          "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]}]},
        "somethingNewer": {"ignored": true}
      }
    }))
    .unwrap();
    assert_eq!(
        conf.spec.network_attachments[0]
            .nad
            .as_ref()
            .unwrap()
            .namespace,
        "infra"
    );
    assert_eq!(
        conf.spec.horizontal_scaling.as_ref().unwrap().replicas,
        Some(3)
    );
    assert!(conf.spec.vertical_scaling.as_ref().unwrap().containers[0].enforce_resources);
    let route: L34Route = serde_json::from_value(json!({
      "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
      "metadata": {"name": "r", "namespace": "ns"},
      "spec": {"parentRefs": [{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}],
               "destinationCIDRs": ["20.0.0.1/32"], "priority": 1, "protocols": ["TCP"]}
    }))
    .unwrap();
    assert_eq!(route.spec.destination_cidrs, ["20.0.0.1/32"]);
    assert_eq!(route.spec.parent_refs[0].kind.as_deref(), Some("Gateway"));
}
