//! `meridio-2.nordix.org/v1alpha1` L34Route: the fields that give the Gateway its addresses.

use serde::{Deserialize, Serialize};

use super::meta::ObjectMeta;

/// An L34Route.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L34Route {
    /// Object metadata (the namespace is the default of a parentRef's namespace).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The route's spec (only the fields the crate reads).
    #[serde(default)]
    pub spec: L34RouteSpec,
}

/// `L34Route.spec`: the fields the crate reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L34RouteSpec {
    /// The Gateways this route attaches to.
    #[serde(default)]
    pub parent_refs: Vec<ParentReference>,
    /// Destination CIDRs; the IP of each becomes a Gateway address.
    #[serde(default, rename = "destinationCIDRs")]
    pub destination_cidrs: Vec<String>,
}

/// A Gateway API `ParentReference`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    /// API group; absent means `gateway.networking.k8s.io`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind; absent means `Gateway`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Namespace; absent means the route's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name of the parent.
    #[serde(default)]
    pub name: String,
    /// The listener of the parent Gateway the route attaches to; absent: any listener that
    /// admits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
}
