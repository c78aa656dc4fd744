//! `gateway.networking.k8s.io/v1` GatewayClass and Gateway.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::meta::{Condition, ObjectMeta};

/// A GatewayClass: which controller owns the Gateways of this class.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClass {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The class's spec.
    #[serde(default)]
    pub spec: GatewayClassSpec,
    /// The class's status.
    #[serde(default)]
    pub status: GatewayClassStatus,
}

/// `GatewayClass.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassSpec {
    /// The controller that manages Gateways of this class.
    #[serde(default)]
    pub controller_name: String,
    /// `spec.parametersRef`, as written: only its presence matters to the crate (this
    /// controller takes parameters per Gateway, never per class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<Value>,
}

/// `GatewayClass.status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassStatus {
    /// `status.conditions`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Every other status field, kept as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A Gateway.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gateway {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The Gateway's spec (only the fields the crate reads).
    #[serde(default)]
    pub spec: GatewaySpec,
    /// The Gateway's status.
    #[serde(default)]
    pub status: GatewayStatus,
}

/// `Gateway.spec`: the fields the crate reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// Name of the GatewayClass.
    #[serde(default)]
    pub gateway_class_name: String,
    /// `spec.infrastructure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GatewayInfrastructure>,
}

/// `Gateway.spec.infrastructure`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfrastructure {
    /// Labels to put on the generated resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to put on the generated resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// The implementation-specific parameters (a GatewayConfiguration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<ParametersReference>,
}

/// `Gateway.spec.infrastructure.parametersRef`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParametersReference {
    /// API group of the referent.
    #[serde(default)]
    pub group: String,
    /// Kind of the referent.
    #[serde(default)]
    pub kind: String,
    /// Name of the referent, in the Gateway's namespace.
    #[serde(default)]
    pub name: String,
}

/// `Gateway.status`: conditions and addresses; other fields (listeners, ...) kept as is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// `status.addresses`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<GatewayAddress>,
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Every other status field (`listeners`, ...), kept as is.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One entry of `Gateway.status.addresses`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayAddress {
    /// Address type; the crate writes `IPAddress`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address.
    pub value: String,
}
