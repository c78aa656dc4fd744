//! `meridio-2.nordix.org/v1alpha1` GatewayConfiguration.

use serde::{Deserialize, Serialize};

use super::meta::ObjectMeta;
use super::tree;

/// A GatewayConfiguration: the parameters of a Gateway's LB Deployment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayConfiguration {
    /// Object metadata; `generation` is what the Deployment annotation records.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The configuration.
    #[serde(default)]
    pub spec: GatewayConfigurationSpec,
}

/// `GatewayConfiguration.spec`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayConfigurationSpec {
    /// Secondary networks of the LB Pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_attachments: Vec<NetworkAttachment>,
    /// Subnets the LB reaches its targets on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub internal_subnets: Vec<InternalSubnet>,
    /// Replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizontal_scaling: Option<HorizontalScaling>,
    /// Container resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertical_scaling: Option<VerticalScaling>,
}

/// One entry of `spec.networkAttachments`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkAttachment {
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Attachment type; only `NAD` is supported.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// The NetworkAttachmentDefinition, required when `type` is `NAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nad: Option<Nad>,
}

/// A NetworkAttachmentDefinition reference and the interface it gets in the Pod.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nad {
    /// Interface name inside the Pod.
    #[serde(default)]
    pub interface: String,
    /// NAD name.
    #[serde(default)]
    pub name: String,
    /// NAD namespace; empty means the GatewayConfiguration's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// One entry of `spec.internalSubnets`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InternalSubnet {
    /// Attachment type; only `NAD` is supported.
    #[serde(default)]
    pub attachment_type: String,
    /// The subnet, e.g. `169.254.100.0/24`.
    #[serde(default)]
    pub cidr: String,
}

/// `spec.horizontalScaling`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalScaling {
    /// Replica count. Read as `i64`, as the API server stores the CRD's `type: integer`;
    /// validation refuses what a Deployment's `int32` cannot hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// When true the replica count is written on every update; otherwise only on create
    /// (an autoscaler owns it).
    #[serde(default)]
    pub enforce_replicas: bool,
}

/// `spec.verticalScaling`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerticalScaling {
    /// Per-container resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<VerticalScalingContainer>,
}

/// One entry of `spec.verticalScaling.containers`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerticalScalingContainer {
    /// Container name in the LB Pod.
    #[serde(default)]
    pub name: String,
    /// A `core/v1` `ResourceRequirements` (`requests`, `limits`, `claims`), kept as a
    /// compact [`tree`] (a `serde_json::Map` costs about ten times its text for an entry of
    /// this size, and a configuration may hold many).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<tree::Map>,
    /// When true the resources are written on every update; otherwise only on create
    /// (a vertical autoscaler owns them).
    #[serde(default)]
    pub enforce_resources: bool,
    /// A `core/v1` `resizePolicy` list, kept as a compact [`tree`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize_policy: Option<Vec<tree::Value>>,
}
