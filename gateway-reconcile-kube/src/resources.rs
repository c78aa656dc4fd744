//! Typed `meridio-2.nordix.org/v1alpha1` resources: GatewayConfiguration and L34Route, as
//! the CRDs define them; the Gateway API's Gateway and GatewayClass as the controller reads
//! them; with conversions to the core's wire types.
//!
//! # Times the typed client cannot read
//!
//! The API server accepts a condition's `lastTransitionTime` that is any RFC 3339
//! date-time with a four-digit year, up to `9999-12-31T23:59:59Z` (and offsets such as
//! `9999-12-31T23:59:59-01:00`, past year 9999 in UTC), but k8s-openapi's `Condition`
//! reads it as a jiff `Timestamp`, which ends at `9999-12-30T22:00:00Z`: such an object
//! fails to deserialize, and so does every list and watch page that holds it. With
//! gateway-api's types, whoever may write one Gateway's (or GatewayClass's, or
//! GatewayConfiguration's) status could stop the controller's cache of that kind, for
//! every object. So the statuses are read here without a typed time: [`Gateway`] and
//! [`GatewayClass`] keep gateway-api's spec and hold their status as raw JSON, and the
//! conditions of a GatewayConfiguration are the core's [`wire::Condition`] (the time as
//! written). The core treats such a time as SPEC section 6 says (it counts as now, is
//! kept while the condition does not change, and replaced when it does).
//!
//! The types hold every field of the CRDs (also those the core does not read, such as an
//! L34Route's `backendRefs`), so reading, caching and logging them loses nothing. The
//! conversions go through the Kubernetes wire JSON, as the core's own interop does, so a
//! field means the same on both sides. The CRD manifests are maintained by hand (the
//! schema, defaults and CEL rules of Meridio-2), so no schema is generated here.

use std::borrow::Cow;
use std::collections::BTreeMap;

use gateway_api::apis::standard::gatewayclasses::GatewayClassSpec;
use gateway_api::apis::standard::gateways::GatewaySpec;
use gateway_reconcile::{InputError, wire};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ContainerResizePolicy, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{CustomResource, Resource};
use serde::{Deserialize, Serialize};

/// `GatewayConfiguration.spec`: the LB's network attachments, internal subnets and scaling.
#[derive(CustomResource, Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[kube(
    group = "meridio-2.nordix.org",
    version = "v1alpha1",
    kind = "GatewayConfiguration",
    namespaced,
    status = "GatewayConfigurationStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct GatewayConfigurationSpec {
    /// Secondary networks of the LB Pods.
    #[serde(default)]
    pub network_attachments: Vec<NetworkAttachment>,
    /// Subnets towards the application Pods (one per IP family).
    #[serde(default)]
    pub internal_subnets: Vec<InternalSubnet>,
    /// Replica count of the LB Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizontal_scaling: Option<HorizontalScaling>,
    /// Per-container resources of the LB Pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertical_scaling: Option<VerticalScaling>,
}

/// A network attachment of the LB Pods.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkAttachment {
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Attachment type; only `NAD` is supported.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// The NetworkAttachmentDefinition, for type `NAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nad: Option<Nad>,
}

/// A NetworkAttachmentDefinition reference.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Nad {
    /// Interface name in the Pod.
    #[serde(default)]
    pub interface: String,
    /// NAD name.
    #[serde(default)]
    pub name: String,
    /// NAD namespace.
    #[serde(default)]
    pub namespace: String,
}

/// An internal subnet.
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
    /// Replicas on create, or always when enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Whether `replicas` overrides an autoscaler.
    #[serde(default)]
    pub enforce_replicas: bool,
}

/// `spec.verticalScaling`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerticalScaling {
    /// Per-container settings.
    #[serde(default)]
    pub containers: Vec<VerticalScalingContainer>,
}

/// Resources of one LB container.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerticalScalingContainer {
    /// Container name in the template.
    #[serde(default)]
    pub name: String,
    /// Requests, limits (and claims, which the core refuses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Whether the resources override what is running.
    #[serde(default)]
    pub enforce_resources: bool,
    /// In-place resize policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize_policy: Option<Vec<ContainerResizePolicy>>,
}

/// `GatewayConfiguration.status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayConfigurationStatus {
    /// Conditions (`lastTransitionTime` as written: see the module's documentation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<wire::Condition>,
}

/// `L34Route.spec`: which Gateway it attaches to and which traffic it carries.
#[derive(CustomResource, Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[kube(
    group = "meridio-2.nordix.org",
    version = "v1alpha1",
    kind = "L34Route",
    namespaced,
    status = "L34RouteStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct L34RouteSpec {
    /// The Gateways this route attaches to.
    #[serde(default)]
    pub parent_refs: Vec<ParentReference>,
    /// The backends (a distribution group).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backend_refs: Vec<BackendReference>,
    /// Destination CIDRs; the IP of each becomes a Gateway address.
    #[serde(default, rename = "destinationCIDRs")]
    pub destination_cidrs: Vec<String>,
    /// Source CIDRs.
    #[serde(default, rename = "sourceCIDRs", skip_serializing_if = "Vec::is_empty")]
    pub source_cidrs: Vec<String>,
    /// Source ports or port ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_ports: Vec<String>,
    /// Destination ports or port ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destination_ports: Vec<String>,
    /// Protocols (`TCP`, `UDP`, `SCTP`).
    #[serde(default)]
    pub protocols: Vec<String>,
    /// Priority among routes.
    #[serde(default)]
    pub priority: i32,
    /// Byte matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub byte_matches: Vec<String>,
    /// Fields of a newer CRD revision, kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// A Gateway API `ParentReference`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    /// Group, kind, namespace and name: the core's type, whose rules
    /// (`gateway_reconcile::addresses::parent_gateway`) say which Gateway it names.
    #[serde(flatten)]
    pub parent: wire::ParentReference,
    /// Listener name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
    /// Listener port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// A Gateway API `BackendRef`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendReference {
    /// API group (`""` is core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// Weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// `L34Route.status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct L34RouteStatus {
    /// Per-parent status, as written by the route's controller.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";
const GATEWAY_VERSION: &str = "v1";

/// A `gateway.networking.k8s.io/v1` Gateway as the controller reads it: gateway-api's
/// spec, the status as raw JSON (see the module's documentation for why).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Gateway {
    /// Object metadata.
    pub metadata: ObjectMeta,
    /// gateway-api's typed spec.
    pub spec: GatewaySpec,
    /// The status, as the API server holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

/// A `gateway.networking.k8s.io/v1` GatewayClass as the controller reads it:
/// gateway-api's spec, the status as raw JSON (see the module's documentation for why).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayClass {
    /// Object metadata.
    pub metadata: ObjectMeta,
    /// gateway-api's typed spec.
    pub spec: GatewayClassSpec,
    /// The status, as the API server holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

impl Resource for Gateway {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Gateway".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GATEWAY_GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        GATEWAY_VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "gateways".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Resource for GatewayClass {
    type DynamicType = ();
    type Scope = k8s_openapi::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "GatewayClass".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GATEWAY_GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        GATEWAY_VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "gatewayclasses".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The object's JSON.
fn json_of(object: &str, value: &impl Serialize) -> Result<serde_json::Value, InputError> {
    serde_json::to_value(value).map_err(|e| InputError::Malformed {
        object: object.to_owned(),
        why: e.to_string(),
    })
}

/// The object's Kubernetes JSON, `apiVersion` and `kind` included.
fn with_type<K: Resource<DynamicType = ()> + Serialize>(
    object: &K,
) -> Result<serde_json::Value, InputError> {
    let mut json = json_of(&K::kind(&()), object)?;
    if let serde_json::Value::Object(fields) = &mut json {
        fields.insert("apiVersion".into(), K::api_version(&()).into_owned().into());
        fields.insert("kind".into(), K::kind(&()).into_owned().into());
    }
    Ok(json)
}

/// An object's JSON read as the core's wire type `T`.
fn read_as<T: serde::de::DeserializeOwned>(
    object: &str,
    json: serde_json::Value,
) -> Result<T, InputError> {
    serde_json::from_value(json).map_err(|e| InputError::Malformed {
        object: object.to_owned(),
        why: e.to_string(),
    })
}

impl TryFrom<&Gateway> for wire::Gateway {
    type Error = InputError;

    /// Every condition time is kept as written: the core reads it (SPEC section 6).
    fn try_from(value: &Gateway) -> Result<Self, Self::Error> {
        read_as("Gateway", with_type(value)?)
    }
}

impl TryFrom<&GatewayClass> for wire::GatewayClass {
    type Error = InputError;

    fn try_from(value: &GatewayClass) -> Result<Self, Self::Error> {
        read_as("GatewayClass", with_type(value)?)
    }
}

/// `value` through its JSON as the core's wire type `T`.
fn via_json<T: serde::de::DeserializeOwned>(
    object: &str,
    value: &impl Serialize,
) -> Result<T, InputError> {
    read_as(object, json_of(object, value)?)
}

impl TryFrom<&GatewayConfiguration> for wire::GatewayConfiguration {
    type Error = InputError;

    fn try_from(value: &GatewayConfiguration) -> Result<Self, Self::Error> {
        via_json("GatewayConfiguration", value)
    }
}

impl TryFrom<&L34Route> for wire::L34Route {
    type Error = InputError;

    fn try_from(value: &L34Route) -> Result<Self, Self::Error> {
        via_json("L34Route", value)
    }
}
