//! [`wire::Deployment`] ⇄ k8s-openapi's [`Deployment`], and [`wire::Condition`] ⇄
//! k8s-openapi's [`Condition`] (feature `k8s-openapi`).
//!
//! ```
//! # #[cfg(feature = "k8s-openapi")] {
//! use gateway_reconcile::wire;
//! use k8s_openapi::api::apps::v1::Deployment;
//!
//! let typed: Deployment = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "sllbr-gw", "namespace": "red", "generation": 4},
//!     "spec": {"selector": {"matchLabels": {"app": "sllbr-gw"}}, "template": {}}
//! })).unwrap();
//!
//! // The typed object as the crate reads it ...
//! let observed = wire::Deployment::try_from(&typed).unwrap();
//! assert_eq!(observed.generation(), Some(4));
//! // ... and back, checked: nothing the typed struct cannot hold is dropped silently.
//! assert_eq!(Deployment::try_from(&observed).unwrap(), typed);
//! # }
//! ```
//!
//! See the [module above](super) for what is lossless.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Map, Value};

use super::{malformed, read_keeping};
use crate::InputError;
use crate::wire;

/// The JSON form the API server gives a `metav1.Time`.
const TIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%SZ";

/// The name errors give a Deployment: `Deployment "ns/name"`, or `Deployment`.
fn deployment_object(object: &Map<String, Value>) -> String {
    let meta = object.get("metadata").and_then(Value::as_object);
    let field = |key| meta.and_then(|m| m.get(key)).and_then(Value::as_str);
    match field("name") {
        Some(name) => format!(
            "Deployment {:?}",
            format!("{}/{name}", field("namespace").unwrap_or(""))
        ),
        None => "Deployment".to_owned(),
    }
}

impl TryFrom<&Deployment> for wire::Deployment {
    type Error = InputError;

    /// Serializes the typed Deployment (with `apiVersion` and `kind`) into the wire object.
    fn try_from(typed: &Deployment) -> Result<Self, InputError> {
        match serde_json::to_value(typed) {
            Ok(Value::Object(object)) => Ok(wire::Deployment::from_object(object)),
            Ok(_) => Err(malformed(
                "Deployment",
                "did not serialize to a JSON object",
            )),
            Err(e) => Err(malformed("Deployment", e)),
        }
    }
}

impl TryFrom<Deployment> for wire::Deployment {
    type Error = InputError;

    /// See the conversion from `&Deployment`.
    fn try_from(typed: Deployment) -> Result<Self, InputError> {
        wire::Deployment::try_from(&typed)
    }
}

impl TryFrom<&wire::Deployment> for Deployment {
    type Error = InputError;

    /// Deserializes the wire object and checks that the typed Deployment still holds every
    /// non-null value of it; fails with [`InputError::Malformed`] naming the first field
    /// that the typed struct would drop or change.
    ///
    /// A missing `apiVersion`/`kind` is fine (the typed struct knows them); a different one
    /// is an error.
    fn try_from(deployment: &wire::Deployment) -> Result<Self, InputError> {
        let input = deployment.to_json();
        let object = input
            .as_object()
            .map_or_else(|| "Deployment".to_owned(), deployment_object);
        read_keeping(
            &object,
            "k8s-openapi's Deployment (of the Kubernetes version this build selected)",
            &input,
        )
    }
}

impl TryFrom<wire::Deployment> for Deployment {
    type Error = InputError;

    /// See the conversion from `&wire::Deployment`.
    fn try_from(deployment: wire::Deployment) -> Result<Self, InputError> {
        Deployment::try_from(&deployment)
    }
}

/// `lastTransitionTime` as the API server writes it.
fn format_time(time: &Time) -> String {
    k8s_openapi::jiff::fmt::strtime::format(TIME_FORMAT, time.0)
        .unwrap_or_else(|_| time.0.to_string())
}

impl From<&Condition> for wire::Condition {
    /// Field by field; `lastTransitionTime` as `YYYY-MM-DDTHH:MM:SSZ`.
    fn from(condition: &Condition) -> Self {
        wire::Condition {
            type_: condition.type_.clone(),
            status: condition.status.clone(),
            observed_generation: condition.observed_generation,
            last_transition_time: format_time(&condition.last_transition_time),
            reason: condition.reason.clone(),
            message: condition.message.clone(),
        }
    }
}

impl From<Condition> for wire::Condition {
    /// See the conversion from `&Condition`.
    fn from(condition: Condition) -> Self {
        wire::Condition {
            last_transition_time: format_time(&condition.last_transition_time),
            type_: condition.type_,
            status: condition.status,
            observed_generation: condition.observed_generation,
            reason: condition.reason,
            message: condition.message,
        }
    }
}

super::typed_condition!(typed_condition, Condition, Time);

impl TryFrom<&wire::Condition> for Condition {
    type Error = InputError;

    /// Field by field. Fails when `lastTransitionTime` is not an RFC 3339 timestamp (the
    /// typed field is required); a fraction of a second or a non-`Z` offset is normalised
    /// to the second in UTC, as `metav1.Time` holds it.
    ///
    /// ```
    /// # #[cfg(feature = "k8s-openapi")] {
    /// use gateway_reconcile::wire;
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    ///
    /// let ours = wire::Condition {
    ///     type_: "Programmed".into(),
    ///     status: "True".into(),
    ///     observed_generation: Some(3),
    ///     last_transition_time: "2026-01-01T00:00:00Z".into(),
    ///     reason: "Programmed".into(),
    ///     message: "LB Deployment reconciled".into(),
    /// };
    /// let typed = Condition::try_from(&ours).unwrap();
    /// assert_eq!(wire::Condition::from(&typed), ours);
    ///
    /// let bad = wire::Condition { last_transition_time: String::new(), ..ours };
    /// assert!(Condition::try_from(&bad).is_err());
    /// # }
    /// ```
    fn try_from(condition: &wire::Condition) -> Result<Self, InputError> {
        typed_condition(condition)
    }
}

impl TryFrom<wire::Condition> for Condition {
    type Error = InputError;

    /// See the conversion from `&wire::Condition`.
    fn try_from(condition: wire::Condition) -> Result<Self, InputError> {
        Condition::try_from(&condition)
    }
}

/// Converts a whole condition list (e.g. [`wire::GatewayStatus::conditions`]) to
/// k8s-openapi's type, in order; fails on the first condition that does not convert.
///
/// ```
/// # #[cfg(feature = "k8s-openapi")] {
/// use gateway_reconcile::interop::k8s_openapi::conditions_to_k8s;
/// use gateway_reconcile::wire::Condition;
///
/// let ours = vec![Condition {
///     type_: "Accepted".into(),
///     status: "True".into(),
///     last_transition_time: "2026-01-01T00:00:00Z".into(),
///     ..Condition::default()
/// }];
/// assert_eq!(conditions_to_k8s(&ours).unwrap()[0].type_, "Accepted");
/// # }
/// ```
pub fn conditions_to_k8s(conditions: &[wire::Condition]) -> Result<Vec<Condition>, InputError> {
    conditions.iter().map(Condition::try_from).collect()
}

/// Converts k8s-openapi conditions to the crate's, in order.
pub fn conditions_from_k8s(conditions: &[Condition]) -> Vec<wire::Condition> {
    conditions.iter().map(wire::Condition::from).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::template::default_template;

    /// The LB Deployment as `kubectl get -o json` prints it after the API server defaulted
    /// it and the Deployment controller rolled it out.
    fn observed_json() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "annotations": {
                    "deployment.kubernetes.io/revision": "3",
                    "meridio-2.nordix.org/gatewayconfiguration-generation": "7"
                },
                "creationTimestamp": "2026-01-01T10:00:00Z",
                "generation": 4,
                "labels": {
                    "app": "sllbr-gw",
                    "app.kubernetes.io/managed-by": "gateway-controller.meridio-2.nordix.org",
                    "gateway.networking.k8s.io/gateway-name": "gw"
                },
                "managedFields": [
                    {
                        "apiVersion": "apps/v1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:metadata": {"f:annotations": {
                            ".": {},
                            "f:meridio-2.nordix.org/gatewayconfiguration-generation": {}
                        }}, "f:spec": {"f:replicas": {}}},
                        "manager": "gateway-controller.meridio-2.nordix.org",
                        "operation": "Apply",
                        "time": "2026-01-01T10:05:00Z"
                    },
                    {
                        "apiVersion": "apps/v1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:status": {"f:availableReplicas": {}}},
                        "manager": "kube-controller-manager",
                        "operation": "Update",
                        "subresource": "status",
                        "time": "2026-01-01T10:06:00Z"
                    }
                ],
                "name": "sllbr-gw",
                "namespace": "red",
                "ownerReferences": [{
                    "apiVersion": "gateway.networking.k8s.io/v1",
                    "blockOwnerDeletion": true,
                    "controller": true,
                    "kind": "Gateway",
                    "name": "gw",
                    "uid": "0b5e7c1a-4d1e-4c55-9f53-2d9b9e0c1a11"
                }],
                "resourceVersion": "48211",
                "uid": "6f1d2c3b-aaaa-4bbb-8ccc-123456789abc"
            },
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": 2,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app": "sllbr-gw"}},
                "strategy": {
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                    "type": "RollingUpdate"
                },
                "template": {
                    "metadata": {
                        "annotations": {
                            "k8s.v1.cni.cncf.io/networks":
                                "[{\"name\":\"vlan-100\",\"namespace\":\"red\",\"interface\":\"ext\"}]"
                        },
                        "creationTimestamp": null,
                        "labels": {"app": "sllbr-gw"}
                    },
                    "spec": {
                        "affinity": {"podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [{
                                "labelSelector": {"matchExpressions": [
                                    {"key": "app", "operator": "In", "values": ["sllbr-gw"]}
                                ]},
                                "topologyKey": "kubernetes.io/hostname"
                            }]
                        }},
                        "containers": [{
                            "env": [
                                {"name": "MERIDIO_GATEWAY_NAME", "value": "gw"},
                                {"name": "POD_UID", "valueFrom": {"fieldRef": {
                                    "apiVersion": "v1", "fieldPath": "metadata.uid"}}}
                            ],
                            "image": "ghcr.io/nordix/meridio-2/router:latest",
                            "imagePullPolicy": "IfNotPresent",
                            "name": "router",
                            "ports": [{"containerPort": 179, "name": "bgp", "protocol": "TCP"}],
                            "readinessProbe": {
                                "failureThreshold": 3, "periodSeconds": 10, "successThreshold": 1,
                                "tcpSocket": {"port": "bgp"}, "timeoutSeconds": 1
                            },
                            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                            "resources": {
                                "limits": {"cpu": "1", "memory": "256Mi"},
                                "requests": {"cpu": "500m", "memory": "64Mi"}
                            },
                            "securityContext": {"capabilities": {
                                "add": ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"]}},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "volumeMounts": [{"mountPath": "/var/run/meridio", "name": "run"}]
                        }],
                        "dnsPolicy": "ClusterFirst",
                        "readinessGates": [
                            {"conditionType": "meridio-2.nordix.org/ipv4-connectivity"}
                        ],
                        "restartPolicy": "Always",
                        "schedulerName": "default-scheduler",
                        "securityContext": {},
                        "serviceAccount": "stateless-load-balancer",
                        "serviceAccountName": "stateless-load-balancer",
                        "terminationGracePeriodSeconds": 30,
                        "volumes": [{"emptyDir": {"sizeLimit": "16Mi"}, "name": "run"}]
                    }
                }
            },
            "status": {
                "availableReplicas": 2,
                "conditions": [
                    {
                        "lastTransitionTime": "2026-01-01T10:00:05Z",
                        "lastUpdateTime": "2026-01-01T10:00:05Z",
                        "message": "Deployment has minimum availability.",
                        "reason": "MinimumReplicasAvailable",
                        "status": "True",
                        "type": "Available"
                    },
                    {
                        "lastTransitionTime": "2026-01-01T10:00:00Z",
                        "lastUpdateTime": "2026-01-01T10:06:00Z",
                        "message": "ReplicaSet \"sllbr-gw-5d9c7f\" has successfully progressed.",
                        "reason": "NewReplicaSetAvailable",
                        "status": "True",
                        "type": "Progressing"
                    }
                ],
                "observedGeneration": 4,
                "readyReplicas": 2,
                "replicas": 2,
                "updatedReplicas": 2
            }
        })
    }

    /// The JSON without its `null`s (what "absent" means in Kubernetes JSON).
    fn without_nulls(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), without_nulls(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
            other => other.clone(),
        }
    }

    fn wire_of(value: Value) -> wire::Deployment {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_server_defaulted_deployment_round_trips_exactly() {
        let observed = wire_of(observed_json());
        let typed = Deployment::try_from(&observed).unwrap();
        // The typed side holds what the crate reads ...
        assert_eq!(typed.metadata.generation, Some(4));
        let status = typed.status.as_ref().unwrap();
        assert_eq!(status.observed_generation, Some(4));
        assert_eq!(status.conditions.as_ref().unwrap().len(), 2);
        assert_eq!(typed.metadata.managed_fields.as_ref().unwrap().len(), 2);
        // ... and back on the wire side nothing is lost or added.
        let back = wire::Deployment::try_from(typed).unwrap();
        assert_eq!(back.to_json(), without_nulls(&observed_json()));
        assert_eq!(
            back.annotation("meridio-2.nordix.org/gatewayconfiguration-generation"),
            Some("7")
        );
        assert_eq!(
            back.controller_owner(),
            Some(("Gateway", "gw", "0b5e7c1a-4d1e-4c55-9f53-2d9b9e0c1a11"))
        );
    }

    #[test]
    fn the_default_template_fits_the_typed_deployment() {
        let template = default_template();
        let typed = Deployment::try_from(&template).unwrap();
        let back = wire::Deployment::try_from(&typed).unwrap();
        assert_eq!(
            back.get(&["spec", "template"]),
            template.get(&["spec", "template"])
        );
    }

    #[test]
    fn a_field_the_typed_struct_does_not_know_is_an_error_naming_it() {
        let mut json = observed_json();
        json["spec"]["template"]["spec"]["containers"][0]["futureField"] = json!({"a": 1});
        let err = Deployment::try_from(wire_of(json)).unwrap_err();
        match &err {
            InputError::Malformed { object, why } => {
                assert_eq!(object, "Deployment \"red/sllbr-gw\"");
                assert!(
                    why.starts_with(
                        "spec.template.spec.containers[0].futureField: field not known"
                    ),
                    "{why}"
                );
            }
            other => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn a_sub_second_managed_fields_time_is_a_loss_not_a_silent_change() {
        let mut json = observed_json();
        json["metadata"]["managedFields"][0]["time"] = json!("2026-01-01T10:05:00.250Z");
        let err = Deployment::try_from(wire_of(json)).unwrap_err();
        assert!(
            err.to_string()
                .contains("metadata.managedFields[0].time: value not kept"),
            "{err}"
        );
    }

    #[test]
    fn wrong_kind_or_shape_is_malformed() {
        let mut json = observed_json();
        json["kind"] = json!("StatefulSet");
        let err = Deployment::try_from(wire_of(json)).unwrap_err();
        assert!(matches!(err, InputError::Malformed { .. }), "{err:?}");
        assert!(err.to_string().contains("StatefulSet"), "{err}");

        let mut json = observed_json();
        json["spec"]["replicas"] = json!("two");
        let err = Deployment::try_from(wire_of(json)).unwrap_err();
        assert!(
            err.to_string().starts_with("Deployment \"red/sllbr-gw\": "),
            "{err}"
        );
    }

    #[test]
    fn a_wire_object_without_api_version_and_kind_converts() {
        let mut json = observed_json();
        let object = json.as_object_mut().unwrap();
        object.remove("apiVersion");
        object.remove("kind");
        let typed = Deployment::try_from(wire_of(json)).unwrap();
        let back = wire::Deployment::try_from(typed).unwrap();
        assert_eq!(
            back.get(&["kind"]).and_then(|v| v.as_str()),
            Some("Deployment")
        );
    }

    fn condition(time: &str) -> wire::Condition {
        wire::Condition {
            type_: "meridio-2.nordix.org/ConfigurationApplied".into(),
            status: "False".into(),
            observed_generation: Some(9),
            last_transition_time: time.into(),
            reason: "ApplyFailed".into(),
            message: "LB Deployment update failed: etcdserver: request timed out".into(),
        }
    }

    #[test]
    fn conditions_round_trip_field_by_field() {
        let ours = condition("2026-03-04T05:06:07Z");
        let typed = Condition::try_from(&ours).unwrap();
        assert_eq!(typed.type_, ours.type_);
        assert_eq!(typed.observed_generation, Some(9));
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            serde_json::to_value(&ours).unwrap()
        );
        assert_eq!(wire::Condition::from(typed.clone()), ours);
        assert_eq!(
            conditions_from_k8s(&conditions_to_k8s(std::slice::from_ref(&ours)).unwrap()),
            vec![ours]
        );
    }

    #[test]
    fn a_condition_time_is_normalised_to_the_utc_second() {
        let typed = Condition::try_from(condition("2026-03-04T07:06:07.9+02:00")).unwrap();
        assert_eq!(
            wire::Condition::from(&typed).last_transition_time,
            "2026-03-04T05:06:07Z"
        );
    }

    #[test]
    fn a_condition_without_a_valid_time_is_malformed() {
        for bad in ["", "yesterday", "2026-03-04 05:06:07"] {
            let err = Condition::try_from(condition(bad)).unwrap_err();
            assert_eq!(
                err,
                InputError::Malformed {
                    object: "condition \"meridio-2.nordix.org/ConfigurationApplied\"".into(),
                    why: format!("lastTransitionTime is not an RFC 3339 timestamp: {bad:?}"),
                }
            );
        }
        let list = [condition("2026-03-04T05:06:07Z"), condition("")];
        assert!(conditions_to_k8s(&list).is_err());
    }
}
