//! Unit tests of `sim::defaulting`.

use super::*;
use crate::wire::tree::tree_json as json;

fn deployment(value: Value) -> Deployment {
    match value {
        Value::Object(object) => Deployment::from_object(object),
        other => panic!("not an object: {other}"),
    }
}

fn defaulted(value: Value) -> Value {
    let mut d = deployment(value);
    apply_server_defaults(&mut d);
    Value::Object(d.object)
}

#[test]
fn fills_deployment_and_pod_defaults() {
    let out = defaulted(json!({
        "metadata": { "name": "lb" },
        "spec": { "template": { "spec": { "containers": [] } } }
    }));
    assert_eq!(
        out,
        json!({
            "metadata": {
                "name": "lb",
                "annotations": { "deployment.kubernetes.io/revision": "1" }
            },
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": { "maxUnavailable": "25%", "maxSurge": "25%" }
                },
                "template": {
                    "metadata": { "creationTimestamp": null },
                    "spec": {
                        "containers": [],
                        "dnsPolicy": "ClusterFirst",
                        "restartPolicy": "Always",
                        "schedulerName": "default-scheduler",
                        "terminationGracePeriodSeconds": 30,
                        "securityContext": {}
                    }
                }
            }
        })
    );
}

#[test]
fn keeps_values_already_set() {
    let input = json!({
        "metadata": { "annotations": { "deployment.kubernetes.io/revision": "7" } },
        "spec": {
            "replicas": 0,
            "revisionHistoryLimit": 2,
            "progressDeadlineSeconds": 60,
            "strategy": { "type": "Recreate" },
            "template": { "spec": {
                "dnsPolicy": "Default",
                "restartPolicy": "Always",
                "schedulerName": "other",
                "terminationGracePeriodSeconds": 5,
                "securityContext": { "runAsNonRoot": true },
                "containers": [{
                    "name": "a", "image": "a:latest",
                    "imagePullPolicy": "Never",
                    "terminationMessagePath": "/tmp/t",
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                    "ports": [{ "containerPort": 53, "protocol": "UDP" }]
                }]
            } }
        }
    });
    let out = defaulted(input.clone());
    for path in [
        "/metadata/annotations/deployment.kubernetes.io~1revision",
        "/spec/replicas",
        "/spec/revisionHistoryLimit",
        "/spec/progressDeadlineSeconds",
        "/spec/strategy",
        "/spec/template/spec/dnsPolicy",
        "/spec/template/spec/schedulerName",
        "/spec/template/spec/terminationGracePeriodSeconds",
        "/spec/template/spec/securityContext",
        "/spec/template/spec/containers/0/imagePullPolicy",
        "/spec/template/spec/containers/0/terminationMessagePath",
        "/spec/template/spec/containers/0/terminationMessagePolicy",
        "/spec/template/spec/containers/0/ports",
    ] {
        assert_eq!(out.pointer(path), input.pointer(path), "{path}");
    }
}

#[test]
fn fills_container_defaults_and_canonicalizes_quantities() {
    let out = defaulted(json!({ "spec": { "template": { "spec": {
        "initContainers": [{ "name": "init", "image": "init" }],
        "containers": [{
            "name": "router",
            "image": "registry:5000/router:v1",
            "ports": [{ "name": "bgp", "containerPort": 179 }],
            "env": [
                { "name": "A", "value": "x" },
                { "name": "POD_UID", "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } }
            ],
            "resources": {
                "requests": { "cpu": "0.5", "memory": "1024Mi", "x": "1e3", "n": 2, "bad": "lots" },
                "limits": { "memory": "1536Mi", "cpu": "2000m" }
            },
            "readinessProbe": { "httpGet": { "path": "/", "port": 80 } }
        }],
        "volumes": [
            { "name": "tmp", "emptyDir": {} },
            { "name": "sized", "emptyDir": { "sizeLimit": "0.5Gi" } },
            { "name": "cm", "configMap": { "name": "cm" } }
        ]
    } } } }));
    let pod = &out["spec"]["template"]["spec"];
    let init = &pod["initContainers"][0];
    assert_eq!(init["imagePullPolicy"], "Always");
    assert_eq!(init["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(init["resources"], json!({}));
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(c["env"][0], json!({ "name": "A", "value": "x" }));
    assert_eq!(
        c["env"][1]["valueFrom"]["fieldRef"],
        json!({ "fieldPath": "metadata.uid", "apiVersion": "v1" })
    );
    assert_eq!(
        c["resources"],
        json!({
            "requests": { "cpu": "500m", "memory": "1Gi", "x": "1k", "n": "2", "bad": "lots" },
            "limits": { "memory": "1536Mi", "cpu": "2" }
        })
    );
    assert_eq!(
        c["readinessProbe"],
        json!({
            "httpGet": { "path": "/", "port": 80, "scheme": "HTTP" },
            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3
        })
    );
    assert_eq!(pod["volumes"][0], json!({ "name": "tmp", "emptyDir": {} }));
    assert_eq!(pod["volumes"][1]["emptyDir"]["sizeLimit"], "512Mi");
    assert_eq!(pod["volumes"][2]["configMap"]["defaultMode"], 420);
}

#[test]
fn fills_the_rest_of_the_workload_defaults() {
    let out = defaulted(json!({ "spec": { "template": { "spec": {
        "ephemeralContainers": [{ "name": "debug", "image": "busybox:1" }],
        "containers": [{
            "name": "c", "image": "c:1",
            "env": [{ "name": "MEM", "valueFrom": { "resourceFieldRef": { "resource": "limits.memory" } } }],
            "livenessProbe": { "httpGet": { "port": 80 } },
            "lifecycle": { "preStop": { "httpGet": { "port": 80 } }, "postStart": { "exec": {} } }
        }],
        "volumes": [
            { "name": "bare" },
            { "name": "host", "hostPath": { "path": "/x" } },
            { "name": "secret", "secret": { "secretName": "s" } },
            { "name": "down", "downwardAPI": { "items": [
                { "path": "p", "fieldRef": { "fieldPath": "metadata.name" } },
                { "path": "q", "resourceFieldRef": { "resource": "limits.cpu" } }
            ] } },
            { "name": "proj", "projected": { "sources": [
                { "serviceAccountToken": { "path": "t" } },
                { "downwardAPI": { "items": [{ "path": "p", "fieldRef": { "fieldPath": "metadata.uid" } }] } }
            ] } },
            { "name": "rbd", "rbd": { "monitors": ["m"], "image": "i" } },
            { "name": "iscsi", "iscsi": { "targetPortal": "t", "iqn": "q", "lun": 0 } },
            { "name": "disk", "azureDisk": { "diskName": "d", "diskURI": "u" } },
            { "name": "sio", "scaleIO": { "gateway": "g", "system": "s", "secretRef": {} } }
        ]
    } } } }));
    let pod = &out["spec"]["template"]["spec"];
    let debug = &pod["ephemeralContainers"][0];
    assert_eq!(debug["terminationMessagePolicy"], "File");
    assert_eq!(debug["imagePullPolicy"], "IfNotPresent");
    let c = &pod["containers"][0];
    assert_eq!(c["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"], "0");
    assert_eq!(
        c["livenessProbe"]["httpGet"],
        json!({ "port": 80, "path": "/", "scheme": "HTTP" })
    );
    assert_eq!(
        c["lifecycle"],
        json!({ "preStop": { "httpGet": { "port": 80, "path": "/", "scheme": "HTTP" } },
                "postStart": { "exec": {} } })
    );
    let volumes = pod["volumes"].as_array().unwrap();
    let v = |name: &str| volumes.iter().find(|v| v["name"] == name).unwrap();
    assert_eq!(v("bare"), &json!({ "name": "bare", "emptyDir": {} }));
    assert_eq!(v("host")["hostPath"], json!({ "path": "/x", "type": "" }));
    assert_eq!(v("secret")["secret"]["defaultMode"], 420);
    assert_eq!(v("down")["downwardAPI"]["defaultMode"], 420);
    assert_eq!(
        v("down")["downwardAPI"]["items"],
        json!([
            { "path": "p", "fieldRef": { "fieldPath": "metadata.name", "apiVersion": "v1" } },
            { "path": "q", "resourceFieldRef": { "resource": "limits.cpu", "divisor": "0" } }
        ])
    );
    let projected = &v("proj")["projected"];
    assert_eq!(projected["defaultMode"], 420);
    assert_eq!(
        projected["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
    assert_eq!(
        projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
        "v1"
    );
    assert_eq!(v("rbd")["rbd"]["pool"], "rbd");
    assert_eq!(v("rbd")["rbd"]["user"], "admin");
    assert_eq!(v("rbd")["rbd"]["keyring"], "/etc/ceph/keyring");
    assert_eq!(v("iscsi")["iscsi"]["iscsiInterface"], "default");
    assert_eq!(
        v("disk")["azureDisk"],
        json!({ "diskName": "d", "diskURI": "u", "cachingMode": "ReadWrite",
                "fsType": "ext4", "kind": "Shared", "readOnly": false })
    );
    assert_eq!(v("sio")["scaleIO"]["storageMode"], "ThinProvisioned");
    assert_eq!(v("sio")["scaleIO"]["fsType"], "xfs");
    // Not defaulted in a pod template.
    assert!(pod.get("enableServiceLinks").is_none());
    let twice = defaulted(out.clone());
    assert_eq!(twice, out);
}

#[test]
fn image_pull_policy_follows_the_tag() {
    let table = [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry:5000/nginx", "Always"),
        ("registry:5000/nginx:1.27", "IfNotPresent"),
        ("registry:5000/team/nginx:latest", "Always"),
        ("nginx@sha256:abcd", "IfNotPresent"),
        ("nginx:latest@sha256:abcd", "Always"),
        ("", "Always"),
    ];
    for (image, want) in table {
        assert_eq!(pull_policy(image), want, "{image}");
    }
}

#[test]
fn is_idempotent_and_survives_odd_shapes() {
    let odd = json!({
        "metadata": "not an object",
        "spec": { "template": { "spec": {
            "containers": [1, null, { "name": "c", "resources": "nope", "env": [3] }],
            "volumes": "x"
        } } }
    });
    let once = defaulted(odd);
    let twice = defaulted(once.clone());
    assert_eq!(once, twice);
    assert_eq!(
        once["spec"]["template"]["spec"]["containers"][2]["resources"],
        json!({})
    );
    assert_eq!(
        once["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
}

/// The server's conversion keeps the deprecated `serviceAccount` equal to
/// `serviceAccountName` (the latter winning, the former filling in when the latter is
/// missing or empty): the replay showed a write without `serviceAccountName` read back
/// with it.
#[test]
fn service_account_and_its_deprecated_alias_are_made_equal() {
    let pod = |spec: Value| {
        let out = defaulted(json!({ "spec": { "template": { "spec": spec } } }));
        let spec = &out["spec"]["template"]["spec"];
        (
            spec.get("serviceAccountName")
                .and_then(Value::as_str)
                .map(str::to_owned),
            spec.get("serviceAccount")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    };
    let both = |name: &str| (Some(name.to_owned()), Some(name.to_owned()));
    assert_eq!(pod(json!({ "serviceAccountName": "a" })), both("a"));
    assert_eq!(
        pod(json!({ "serviceAccount": "a" })),
        both("a"),
        "only the name removed"
    );
    assert_eq!(
        pod(json!({ "serviceAccount": "a", "serviceAccountName": "" })),
        both("a")
    );
    assert_eq!(
        pod(json!({ "serviceAccount": "old", "serviceAccountName": "new" })),
        both("new")
    );
    assert_eq!(pod(json!({})), (None, None));
}
