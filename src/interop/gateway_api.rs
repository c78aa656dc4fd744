//! gateway-api's [`Gateway`] and [`GatewayClass`] → the crate's [`wire::Gateway`] and
//! [`wire::GatewayClass`], and the status the crate computes back to gateway-api's
//! [`GatewayStatus`] (feature `gateway-api`).
//!
//! The types are those of gateway-api's standard channel
//! (`gateway_api::apis::standard::{gateways, gatewayclasses}`). gateway-api 0.22 is built on
//! k8s-openapi 0.28 (and kube 4), while the `k8s-openapi` feature converts k8s-openapi 0.29's
//! types: this module names its own k8s-openapi 0.28 types, and needs no other feature.
//! Its status conditions are that `Condition`; [`gateway_conditions`] gives exactly the type
//! of `GatewayStatus::conditions`, by the same rules as the `k8s-openapi` feature's
//! conversion (a `lastTransitionTime` must be an RFC 3339 timestamp; a fraction of a second
//! or a non-`Z` offset becomes the second in UTC).
//!
//! ```
//! # #[cfg(feature = "gateway-api")] {
//! use gateway_api::apis::standard::gateways::Gateway;
//! use gateway_reconcile::wire;
//!
//! let typed: Gateway = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
//!     "metadata": {"name": "gw", "namespace": "red", "uid": "u-1", "generation": 2},
//!     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}],
//!              "infrastructure": {"parametersRef": {
//!                  "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
//!                  "name": "conf"}}}
//! })).unwrap();
//! let ours = wire::Gateway::try_from(&typed).unwrap();
//! let infrastructure = ours.spec.infrastructure.as_ref().unwrap();
//! assert_eq!(infrastructure.parameters_ref.as_ref().unwrap().name, "conf");
//! # }
//! ```

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::{Gateway, GatewayStatus};
use k8s_openapi_gateway_api::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{malformed, read_keeping};
use crate::InputError;
use crate::wire;

/// `Kind "ns/name"` (or `Kind "name"` for a cluster-scoped object), as errors name objects.
fn object_name(kind: &str, meta: &ObjectMeta) -> String {
    match (&meta.namespace, &meta.name) {
        (Some(ns), Some(name)) => format!("{kind} {:?}", format!("{ns}/{name}")),
        (None, Some(name)) => format!("{kind} {name:?}"),
        _ => kind.to_owned(),
    }
}

/// One type to another through their JSON.
fn via_json<T: Serialize, U: DeserializeOwned>(object: &str, value: &T) -> Result<U, InputError> {
    let json = serde_json::to_value(value).map_err(|e| malformed(object, e))?;
    serde_json::from_value(json).map_err(|e| malformed(object, e))
}

impl TryFrom<&Gateway> for wire::Gateway {
    type Error = InputError;

    /// Through the Gateway's JSON: all of `metadata` and `status`, and the `spec` fields the
    /// crate reads (`gatewayClassName`, `listeners`, `addresses`, `infrastructure`).
    fn try_from(gateway: &Gateway) -> Result<Self, InputError> {
        via_json(&object_name("Gateway", &gateway.metadata), gateway)
    }
}

impl TryFrom<Gateway> for wire::Gateway {
    type Error = InputError;

    /// See the conversion from `&Gateway`.
    fn try_from(gateway: Gateway) -> Result<Self, InputError> {
        wire::Gateway::try_from(&gateway)
    }
}

impl TryFrom<&GatewayClass> for wire::GatewayClass {
    type Error = InputError;

    /// Through the class's JSON: all of `metadata` and `spec.controllerName`.
    ///
    /// ```
    /// # #[cfg(feature = "gateway-api")] {
    /// use gateway_api::apis::standard::gatewayclasses::{GatewayClass, GatewayClassSpec};
    /// use gateway_reconcile::wire;
    ///
    /// let typed = GatewayClass::new("meridio", GatewayClassSpec {
    ///     controller_name: "meridio-2.nordix.org/gateway-controller".into(),
    ///     ..GatewayClassSpec::default()
    /// });
    /// let ours = wire::GatewayClass::try_from(&typed).unwrap();
    /// assert_eq!(ours.metadata.name.as_deref(), Some("meridio"));
    /// assert_eq!(ours.spec.controller_name, "meridio-2.nordix.org/gateway-controller");
    /// # }
    /// ```
    fn try_from(class: &GatewayClass) -> Result<Self, InputError> {
        via_json(&object_name("GatewayClass", &class.metadata), class)
    }
}

impl TryFrom<GatewayClass> for wire::GatewayClass {
    type Error = InputError;

    /// See the conversion from `&GatewayClass`.
    fn try_from(class: GatewayClass) -> Result<Self, InputError> {
        wire::GatewayClass::try_from(&class)
    }
}

impl TryFrom<&wire::GatewayStatus> for GatewayStatus {
    type Error = InputError;

    /// The whole status: `conditions` by [`gateway_conditions`], `addresses` and every
    /// other field (`listeners`, `attachedListenerSets`) through JSON, checked like the
    /// Deployment conversion: a status field gateway-api's type does not know is an error,
    /// not a silent drop. An empty list becomes `None` (the wire type does not tell an empty
    /// list from an absent one, and neither does the API).
    fn try_from(status: &wire::GatewayStatus) -> Result<Self, InputError> {
        const OBJECT: &str = "Gateway status";
        let mut input = serde_json::to_value(status).map_err(|e| malformed(OBJECT, e))?;
        if let Value::Object(fields) = &mut input {
            fields.remove("conditions");
        }
        let mut typed: GatewayStatus = read_keeping(OBJECT, "gateway-api's GatewayStatus", &input)?;
        typed.conditions = gateway_conditions(&status.conditions)?;
        Ok(typed)
    }
}

impl TryFrom<wire::GatewayStatus> for GatewayStatus {
    type Error = InputError;

    /// See the conversion from `&wire::GatewayStatus`.
    fn try_from(status: wire::GatewayStatus) -> Result<Self, InputError> {
        GatewayStatus::try_from(&status)
    }
}

/// The crate's condition list as `GatewayStatus::conditions` holds it: `None` when empty.
///
/// ```
/// # #[cfg(feature = "gateway-api")] {
/// use gateway_reconcile::interop::gateway_api::gateway_conditions;
/// use gateway_reconcile::wire::Condition;
///
/// assert_eq!(gateway_conditions(&[]).unwrap(), None);
/// let accepted = Condition {
///     type_: "Accepted".into(),
///     status: "True".into(),
///     last_transition_time: "2026-01-01T00:00:00Z".into(),
///     reason: "Accepted".into(),
///     ..Condition::default()
/// };
/// let typed = gateway_conditions(&[accepted]).unwrap().unwrap();
/// assert_eq!(typed[0].reason, "Accepted");
/// # }
/// ```
pub fn gateway_conditions(
    conditions: &[wire::Condition],
) -> Result<Option<Vec<Condition>>, InputError> {
    if conditions.is_empty() {
        return Ok(None);
    }
    conditions
        .iter()
        .map(typed_condition)
        .collect::<Result<_, _>>()
        .map(Some)
}

super::typed_condition!(typed_condition, Condition, Time);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A Gateway as a cluster holds it: infrastructure with a parametersRef, two listeners,
    /// and a status written by this controller (conditions, addresses) and by others
    /// (listener status).
    fn gateway_json() -> Value {
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "creationTimestamp": "2026-01-01T09:00:00Z",
                "finalizers": ["example.com/cleanup"],
                "generation": 3,
                "labels": {"team": "red"},
                "managedFields": [{
                    "apiVersion": "gateway.networking.k8s.io/v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:conditions": {}}},
                    "manager": "gateway-controller.meridio-2.nordix.org",
                    "operation": "Update",
                    "subresource": "status",
                    "time": "2026-01-01T09:01:00Z"
                }],
                "name": "gw",
                "namespace": "red",
                "resourceVersion": "52110",
                "uid": "0b5e7c1a-4d1e-4c55-9f53-2d9b9e0c1a11"
            },
            "spec": {
                "gatewayClassName": "meridio",
                "infrastructure": {
                    "annotations": {"example.com/cost-centre": "42"},
                    "labels": {"example.com/tier": "edge"},
                    "parametersRef": {
                        "group": "meridio-2.nordix.org",
                        "kind": "GatewayConfiguration",
                        "name": "conf"
                    }
                },
                "listeners": [
                    {"allowedRoutes": {"namespaces": {"from": "Same"}},
                     "name": "tcp", "port": 5000, "protocol": "TCP"},
                    {"name": "udp", "port": 5001, "protocol": "UDP"}
                ]
            },
            "status": {
                "addresses": [
                    {"type": "IPAddress", "value": "20.0.0.1"},
                    {"type": "IPAddress", "value": "2000::1"}
                ],
                "conditions": [
                    {"lastTransitionTime": "2026-01-01T09:00:10Z",
                     "message": "Gateway accepted by meridio-2.nordix.org/gateway-controller",
                     "observedGeneration": 3, "reason": "Accepted", "status": "True",
                     "type": "Accepted"},
                    {"lastTransitionTime": "2026-01-01T09:00:40Z",
                     "message": "LB Deployment reconciled with GatewayConfiguration generation 7",
                     "observedGeneration": 3, "reason": "Programmed", "status": "True",
                     "type": "Programmed"},
                    {"lastTransitionTime": "2026-01-01T09:00:40Z",
                     "message": "GatewayConfiguration generation 7 applied",
                     "observedGeneration": 3, "reason": "Applied", "status": "True",
                     "type": "meridio-2.nordix.org/ConfigurationApplied"}
                ],
                "listeners": [{
                    "attachedRoutes": 1,
                    "conditions": [{"lastTransitionTime": "2026-01-01T09:00:10Z",
                                    "message": "", "observedGeneration": 3,
                                    "reason": "Accepted", "status": "True", "type": "Accepted"}],
                    "name": "tcp",
                    "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}]
                }]
            }
        })
    }

    fn typed_gateway() -> Gateway {
        serde_json::from_value(gateway_json()).unwrap()
    }

    #[test]
    fn a_full_gateway_keeps_everything_the_crate_reads() {
        let typed = typed_gateway();
        let ours = wire::Gateway::try_from(&typed).unwrap();

        let meta = &ours.metadata;
        assert_eq!(meta.name.as_deref(), Some("gw"));
        assert_eq!(meta.namespace.as_deref(), Some("red"));
        assert_eq!(
            meta.uid.as_deref(),
            Some("0b5e7c1a-4d1e-4c55-9f53-2d9b9e0c1a11")
        );
        assert_eq!(meta.generation, Some(3));
        assert_eq!(meta.deletion_timestamp, None);
        // All of metadata survives, including what the crate does not model.
        assert_eq!(
            serde_json::to_value(meta).unwrap(),
            gateway_json()["metadata"]
        );

        assert_eq!(ours.spec.gateway_class_name, "meridio");
        let infrastructure = ours.spec.infrastructure.as_ref().unwrap();
        assert_eq!(infrastructure.labels["example.com/tier"], "edge");
        assert_eq!(infrastructure.annotations["example.com/cost-centre"], "42");
        let parameters = infrastructure.parameters_ref.as_ref().unwrap();
        assert_eq!(
            (
                parameters.group.as_str(),
                parameters.kind.as_str(),
                parameters.name.as_str()
            ),
            ("meridio-2.nordix.org", "GatewayConfiguration", "conf")
        );
        assert_eq!(
            serde_json::to_value(infrastructure).unwrap(),
            gateway_json()["spec"]["infrastructure"]
        );

        // The whole status survives on the wire side ...
        assert_eq!(
            serde_json::to_value(&ours.status).unwrap(),
            gateway_json()["status"]
        );
        assert_eq!(ours.status.addresses[1].value, "2000::1");
        assert_eq!(ours.status.conditions[1].type_, "Programmed");
        // ... and converts back to gateway-api's type unchanged.
        let back = GatewayStatus::try_from(&ours.status).unwrap();
        assert_eq!(Some(back), typed.status);
    }

    #[test]
    fn a_deleted_gateway_carries_its_deletion_timestamp() {
        let mut json = gateway_json();
        json["metadata"]["deletionTimestamp"] = json!("2026-01-02T00:00:00Z");
        let typed: Gateway = serde_json::from_value(json).unwrap();
        let ours = wire::Gateway::try_from(typed).unwrap();
        assert_eq!(
            ours.metadata.deletion_timestamp.as_deref(),
            Some("2026-01-02T00:00:00Z")
        );
    }

    #[test]
    fn a_gateway_class_converts() {
        let typed: GatewayClass = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GatewayClass",
            "metadata": {"name": "meridio", "generation": 1, "uid": "c-1"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                     "description": "Meridio-2 stateless load balancers"},
            "status": {"conditions": [{"lastTransitionTime": "2026-01-01T08:00:00Z",
                "message": "", "reason": "Accepted", "status": "True", "type": "Accepted"}]}
        }))
        .unwrap();
        let ours = wire::GatewayClass::try_from(typed).unwrap();
        assert_eq!(ours.metadata.name.as_deref(), Some("meridio"));
        assert_eq!(ours.metadata.uid.as_deref(), Some("c-1"));
        assert_eq!(
            ours.spec.controller_name,
            "meridio-2.nordix.org/gateway-controller"
        );
    }

    #[test]
    fn the_status_the_crate_writes_converts_to_gateway_api() {
        // What a settlement holds: new conditions, new addresses, the others' listener
        // status kept.
        let mut status = wire::Gateway::try_from(&typed_gateway()).unwrap().status;
        status.conditions[1] = wire::Condition {
            type_: "Programmed".into(),
            status: "True".into(),
            observed_generation: Some(3),
            last_transition_time: "2026-01-01T09:00:40Z".into(),
            reason: "Programmed".into(),
            message: "LB Deployment reconciled with GatewayConfiguration generation 7; \
                      generation 8 not applied yet"
                .into(),
        };
        status.addresses.truncate(1);
        let typed = GatewayStatus::try_from(status.clone()).unwrap();
        let conditions = typed.conditions.as_ref().unwrap();
        assert_eq!(conditions.len(), 3);
        assert_eq!(conditions[1].message, status.conditions[1].message);
        assert_eq!(typed.addresses.as_ref().unwrap().len(), 1);
        assert_eq!(typed.listeners.as_ref().unwrap()[0].attached_routes, 1);
        assert_eq!(
            gateway_conditions(&status.conditions).unwrap().as_ref(),
            Some(conditions)
        );
    }

    #[test]
    fn empty_lists_become_none() {
        let typed = GatewayStatus::try_from(wire::GatewayStatus::default()).unwrap();
        assert_eq!(typed, GatewayStatus::default());
    }

    #[test]
    fn a_status_field_gateway_api_does_not_know_is_an_error() {
        let mut status = wire::GatewayStatus::default();
        status.other.insert("futureField".into(), json!(1));
        let err = GatewayStatus::try_from(&status).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Gateway status: futureField: field not known by gateway-api's GatewayStatus; \
             converting would lose it"
        );
    }

    #[test]
    fn a_bad_condition_time_in_the_status_is_malformed() {
        let mut status = wire::GatewayStatus::default();
        status.conditions.push(wire::Condition {
            type_: "Accepted".into(),
            status: "True".into(),
            ..wire::Condition::default()
        });
        let err = GatewayStatus::try_from(&status).unwrap_err();
        assert!(matches!(err, InputError::Malformed { .. }), "{err:?}");
    }

    #[test]
    fn a_reconcile_from_typed_objects_round_trips_its_writes() {
        use crate::{DeploymentWrite, Plan, Settings, Snapshot, WriteOutcome, plan, template};

        let mut json = gateway_json();
        json["status"] = json!({});
        let gateway =
            wire::Gateway::try_from(&serde_json::from_value::<Gateway>(json).unwrap()).unwrap();
        let class: GatewayClass = serde_json::from_value(json!({
            "metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
        }))
        .unwrap();
        let class = wire::GatewayClass::try_from(&class).unwrap();
        let conf: wire::GatewayConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "conf", "namespace": "red", "generation": 7},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
        }))
        .unwrap();
        let template = template::default_template();
        let settings = Settings::default();
        let snapshot = Snapshot::new(&gateway, &template)
            .with_gateway_class(Some(&class))
            .with_configuration(Some(&conf));
        let plan = plan(&settings, snapshot, "2026-01-01T09:00:00Z".parse().unwrap()).unwrap();

        let Plan::Write(pending) = plan else {
            panic!("expected a write, got {plan:?}");
        };
        let DeploymentWrite::Create(desired) = pending.write() else {
            panic!("expected a create, got {:?}", pending.write());
        };
        assert_eq!(desired.name(), Some("sllbr-gw"));
        // With the `k8s-openapi` feature too, the Deployment the crate wants written fits
        // k8s-openapi's type without loss.
        #[cfg(feature = "k8s-openapi")]
        {
            use k8s_openapi::api::apps::v1::Deployment;
            let typed = Deployment::try_from(desired).unwrap();
            assert_eq!(typed.metadata.name.as_deref(), Some("sllbr-gw"));
            assert_eq!(&wire::Deployment::try_from(&typed).unwrap(), desired);
        }

        // The status it wants written converts to gateway-api's type.
        let settlement = pending.settle(WriteOutcome::Applied);
        let status = settlement.status.as_ref().unwrap();
        let typed = GatewayStatus::try_from(status).unwrap();
        let types: Vec<_> = typed
            .conditions
            .unwrap()
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect();
        assert!(
            types.contains(&("Accepted".to_owned(), "True".to_owned())),
            "{types:?}"
        );
        assert_eq!(types.len(), status.conditions.len());
    }
}
