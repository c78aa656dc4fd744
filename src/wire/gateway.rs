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
    /// `spec.parametersRef`: the class's default parameters, for those of its Gateways
    /// that name none themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<ClassParametersReference>,
}

/// `GatewayClass.spec.parametersRef`: unlike a Gateway's, it names a namespace (a class is
/// cluster-scoped, a GatewayConfiguration is namespaced).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassParametersReference {
    /// API group of the referent.
    #[serde(default)]
    pub group: String,
    /// Kind of the referent.
    #[serde(default)]
    pub kind: String,
    /// Name of the referent.
    #[serde(default)]
    pub name: String,
    /// Namespace of the referent; required for a namespaced kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `GatewayClass.status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassStatus {
    /// `status.conditions`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Every other status field (`supportedFeatures` among them: a class another
    /// controller owns may carry an older form of it), kept as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl GatewayClassStatus {
    /// The names of `status.supportedFeatures` (`[{"name": N}]`), in order; `None` when the
    /// field is absent or not of that form.
    ///
    /// ```
    /// use gateway_reconcile::wire::GatewayClassStatus;
    /// let status: GatewayClassStatus = serde_json::from_value(serde_json::json!({
    ///     "supportedFeatures": [{"name": "Gateway"}]
    /// })).unwrap();
    /// assert_eq!(status.supported_feature_names(), Some(vec!["Gateway"]));
    /// ```
    pub fn supported_feature_names(&self) -> Option<Vec<&str>> {
        self.other
            .get("supportedFeatures")?
            .as_array()?
            .iter()
            .map(|feature| feature.get("name")?.as_str())
            .collect()
    }
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
    /// `spec.listeners`: which routes may attach, and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<Listener>,
    /// `spec.addresses`: addresses asked for the Gateway. Not supported (the addresses
    /// come from the L34Routes): any entry makes the Gateway invalid (`UnsupportedAddress`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<GatewaySpecAddress>,
    /// `spec.infrastructure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GatewayInfrastructure>,
}

/// One of `Gateway.spec.addresses`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpecAddress {
    /// Address type (`IPAddress`, `Hostname`, or a domain-prefixed one).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address; absent asks the implementation to choose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// One of `Gateway.spec.listeners`: the fields the crate reads (its name, its protocol and
/// which routes it admits); `port`, `hostname`, `tls` and the rest are not read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    /// The listener's name, which a route's `parentRefs[].sectionName` names.
    #[serde(default)]
    pub name: String,
    /// The listener's protocol as written (`TCP`, `UDP`, `example.com/quic`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub protocol: String,
    /// Which routes may attach to the listener; absent: routes of the Gateway's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_routes: Option<AllowedRoutes>,
}

/// `listeners[].allowedRoutes`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowedRoutes {
    /// The namespaces whose routes may attach; absent: `from: Same`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<RouteNamespaces>,
    /// The route kinds that may attach; absent or empty: the listener's protocol decides
    /// (for this implementation, L34Route).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<RouteGroupKind>,
}

/// `allowedRoutes.namespaces`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteNamespaces {
    /// `Same` (the default), `All` or `Selector`, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The namespaces' label selector, for `from: Selector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// A `metav1.LabelSelector`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must all be present with these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Requirements that must all hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One of `LabelSelector.matchExpressions`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// The label key.
    #[serde(default)]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`, as written.
    #[serde(default)]
    pub operator: String,
    /// The values of `In` and `NotIn` (empty for `Exists` and `DoesNotExist`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// One of `allowedRoutes.kinds`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteGroupKind {
    /// API group; absent means `gateway.networking.k8s.io`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The route kind.
    #[serde(default)]
    pub kind: String,
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

/// `Gateway.status`: conditions, addresses and listeners; other fields kept as is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// `status.addresses`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<GatewayAddress>,
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `status.listeners`: one entry per listener (SPEC revision 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<ListenerStatus>,
    /// Every other status field, kept as is.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One entry of `Gateway.status.listeners`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    /// The listener's name.
    #[serde(default)]
    pub name: String,
    /// The route kinds that may attach to the listener.
    #[serde(default)]
    pub supported_kinds: Vec<RouteGroupKind>,
    /// How many routes attach to the listener.
    #[serde(default)]
    pub attached_routes: i32,
    /// The listener's conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
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
