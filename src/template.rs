//! The LB Deployment template: the crate's built-in default, and loading one from JSON.
//!
//! The template is the controller's configuration file for the LB Deployment. Rendering
//! ([the LB Deployment](crate::reconcile#the-lb-deployment)) fills in what depends on the Gateway: the name, labels, selector, owner
//! reference, the `app` anti-affinity values, `MERIDIO_GATEWAY_NAME`, replicas, resources,
//! the networks annotation and the readiness gates. Loading a template here only checks that
//! it is a JSON object; whether it is usable (a pod template with containers) is decided by
//! [validation](crate::reconcile#validation), so that an unusable file becomes a Gateway condition, not a crash.
//!
//! The built-in template has two containers: `loadbalancer` (the stateless load balancer,
//! which needs `NET_ADMIN` for its nfqueue and policy routing) and `router` (the BGP/BFD
//! front end, which needs `NET_ADMIN`, `NET_RAW` and `NET_BIND_SERVICE`). They share two
//! `emptyDir` volumes, a run directory for their sockets and a scratch `/tmp`. Replicas are
//! 2 with a required pod anti-affinity on `kubernetes.io/hostname`, so the two LB Pods never
//! share a node; the anti-affinity `values` and the `MERIDIO_GATEWAY_NAME` values are left
//! empty here for rendering to fill.

use crate::wire::tree::{Value, tree_json as json};

use crate::InputError;
use crate::wire::Deployment;

/// The object named in template errors.
const OBJECT: &str = "LB deployment template";

/// The built-in LB Deployment template.
///
/// ```
/// let template = gateway_reconcile::template::default_template();
/// assert_eq!(template.get(&["kind"]).and_then(|v| v.as_str()), Some("Deployment"));
/// assert_eq!(template.get(&["spec", "replicas"]).and_then(|v| v.as_i64()), Some(2));
/// ```
pub fn default_template() -> Deployment {
    let gateway_name_env = || json!([{ "name": "MERIDIO_GATEWAY_NAME", "value": "" }]);
    let literal = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "labels": {
                "app.kubernetes.io/component": "stateless-load-balancer",
                "app.kubernetes.io/part-of": "meridio-2"
            }
        },
        "spec": {
            "replicas": 2,
            "template": {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/component": "stateless-load-balancer",
                        "app.kubernetes.io/part-of": "meridio-2"
                    }
                },
                "spec": {
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [{
                                "labelSelector": {
                                    "matchExpressions": [{
                                        "key": "app",
                                        "operator": "In",
                                        "values": []
                                    }]
                                },
                                "topologyKey": "kubernetes.io/hostname"
                            }]
                        }
                    },
                    "containers": [
                        {
                            "name": "loadbalancer",
                            "image": "ghcr.io/nordix/meridio-2/stateless-load-balancer:latest",
                            "imagePullPolicy": "IfNotPresent",
                            "env": gateway_name_env(),
                            "resources": {
                                "requests": { "cpu": "100m", "memory": "64Mi" },
                                "limits": { "cpu": "1", "memory": "256Mi" }
                            },
                            "securityContext": {
                                "capabilities": { "add": ["NET_ADMIN"] }
                            },
                            "volumeMounts": [
                                { "name": "run", "mountPath": "/var/run/meridio" },
                                { "name": "tmp", "mountPath": "/tmp" }
                            ]
                        },
                        {
                            "name": "router",
                            "image": "ghcr.io/nordix/meridio-2/router:latest",
                            "imagePullPolicy": "IfNotPresent",
                            "env": gateway_name_env(),
                            "resources": {
                                "requests": { "cpu": "50m", "memory": "32Mi" },
                                "limits": { "cpu": "500m", "memory": "128Mi" }
                            },
                            "securityContext": {
                                "capabilities": {
                                    "add": ["NET_ADMIN", "NET_BIND_SERVICE", "NET_RAW"]
                                }
                            },
                            "volumeMounts": [
                                { "name": "run", "mountPath": "/var/run/meridio" },
                                { "name": "tmp", "mountPath": "/tmp" }
                            ]
                        }
                    ],
                    "terminationGracePeriodSeconds": 30,
                    "volumes": [
                        { "name": "run", "emptyDir": { "medium": "Memory" } },
                        { "name": "tmp", "emptyDir": {} }
                    ]
                }
            }
        }
    });
    match literal {
        Value::Object(object) => Deployment::from_object(object),
        // The literal above is an object; this arm only keeps the function total.
        _ => Deployment::default(),
    }
}

/// Reads a template from JSON text (a `kubectl get -o json`-style Deployment).
///
/// Only the shape is checked (a JSON object); usability is decided by
/// [validation](crate::reconcile#validation).
///
/// ```
/// use gateway_reconcile::template::template_from_json;
/// let t = template_from_json(r#"{"kind":"Deployment","spec":{}}"#).unwrap();
/// assert_eq!(t.get(&["kind"]).and_then(|v| v.as_str()), Some("Deployment"));
/// let e = template_from_json("[]").unwrap_err();
/// assert_eq!(e.to_string(), "LB deployment template: expected a JSON object, got an array");
/// ```
pub fn template_from_json(text: &str) -> Result<Deployment, InputError> {
    let malformed = |why: String| InputError::Malformed {
        object: OBJECT.to_owned(),
        why,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(Deployment::from_object(object)),
        Ok(other) => Err(malformed(format!(
            "expected a JSON object, got {}",
            kind_of(&other)
        ))),
        Err(e) => Err(malformed(format!("invalid JSON: {e}"))),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn containers(t: &Deployment) -> &[Value] {
        t.get(&["spec", "template", "spec", "containers"])
            .and_then(Value::as_array)
            .unwrap()
    }

    fn container<'a>(t: &'a Deployment, name: &str) -> &'a Value {
        containers(t)
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no container {name}"))
    }

    #[test]
    fn default_template_is_an_apps_v1_deployment_with_two_containers() {
        let t = default_template();
        assert_eq!(t.object["apiVersion"], "apps/v1");
        assert_eq!(t.object["kind"], "Deployment");
        assert_eq!(t.object["spec"]["replicas"], 2);
        let names: Vec<&str> = containers(&t)
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["loadbalancer", "router"]);
        assert!(
            container(&t, "loadbalancer")["image"]
                .as_str()
                .unwrap()
                .contains("stateless-load-balancer")
        );
        assert!(
            container(&t, "router")["image"]
                .as_str()
                .unwrap()
                .contains("router")
        );
    }

    #[test]
    fn default_template_leaves_the_gateway_name_empty_in_every_container() {
        let t = default_template();
        for c in containers(&t) {
            let env = c["env"].as_array().unwrap();
            let e = env
                .iter()
                .find(|e| e["name"] == "MERIDIO_GATEWAY_NAME")
                .unwrap_or_else(|| panic!("{} lacks MERIDIO_GATEWAY_NAME", c["name"]));
            assert_eq!(e["value"], "");
        }
    }

    #[test]
    fn default_template_has_required_anti_affinity_on_app() {
        let t = default_template();
        let terms = &t.object["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
        let term = &terms.as_array().unwrap()[0];
        assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
        let expr = &term["labelSelector"]["matchExpressions"][0];
        assert_eq!(expr["key"], "app");
        assert_eq!(expr["operator"], "In");
        assert_eq!(expr["values"], json!([]));
    }

    #[test]
    fn default_template_mounts_only_its_own_empty_dir_volumes() {
        let t = default_template();
        let volumes = t.object["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = volumes.iter().filter_map(|v| v["name"].as_str()).collect();
        assert!(volumes.iter().all(|v| v["emptyDir"].is_object()));
        for c in containers(&t) {
            let mounts = c["volumeMounts"].as_array().unwrap();
            assert!(!mounts.is_empty());
            for m in mounts {
                assert!(names.contains(&m["name"].as_str().unwrap()), "{m}");
            }
            let caps = &c["securityContext"]["capabilities"]["add"];
            assert!(caps.as_array().unwrap().contains(&json!("NET_ADMIN")));
            assert!(c["resources"]["requests"].is_object());
        }
    }

    #[test]
    fn template_from_json_reads_an_object_and_keeps_every_field() {
        let t = template_from_json(r#"{"kind":"Deployment","x":{"y":[1,2]}}"#).unwrap();
        assert_eq!(t.object["x"]["y"], json!([1, 2]));
        let back = template_from_json(&serde_json::to_string(&default_template()).unwrap());
        assert_eq!(back.unwrap(), default_template());
    }

    #[test]
    fn template_from_json_rejects_non_objects_and_bad_json() {
        for (text, got) in [
            ("null", "null"),
            ("3", "a number"),
            (r#""x""#, "a string"),
            ("[1]", "an array"),
            ("true", "a boolean"),
        ] {
            let e = template_from_json(text).unwrap_err();
            assert_eq!(
                e,
                InputError::Malformed {
                    object: OBJECT.into(),
                    why: format!("expected a JSON object, got {got}")
                }
            );
        }
        let e = template_from_json("{\"kind\": ").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("LB deployment template: invalid JSON: "),
            "{text}"
        );
        assert!(text.contains("line 1"), "{text}");
    }
}
