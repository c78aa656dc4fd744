//! What a controller needs to find and watch the objects of a reconcile: the LB
//! Deployment's name, labels and annotations, which GatewayConfiguration a Gateway uses,
//! which Gateway a route names and which Gateway a Deployment belongs to.
//!
//! A controller keys its caches and triggers by these, so that a change to a route, a
//! GatewayConfiguration or an LB Deployment wakes the Gateway it concerns:
//!
//! - the LB Deployment of Gateway `NAME` is [`deployment_name`] in the Gateway's namespace
//!   (`deploymentPrefix + NAME`, shortened with a hash past 63 characters),
//!   labelled [`MANAGED_BY_LABEL`]`=`[`MANAGED_BY`] (a label selector for a watch of the
//!   LB Deployments alone) and [`GATEWAY_NAME_LABEL`]`=`[`gateway_name_label`], and
//!   controlled (its controller `ownerReference`) by the Gateway: [`deployment_gateway`]
//!   reads that reference back. A long name is shortened, so nothing maps a Deployment to
//!   its Gateway by its name;
//! - it carries the GatewayConfiguration generation and uid it was written for in
//!   [`generation_annotation`] and [`uid_annotation`];
//! - a Gateway uses the GatewayConfiguration of [`configuration_ref`]: its own
//!   `infrastructure.parametersRef` (in its namespace), else its GatewayClass's
//!   `spec.parametersRef` (in the namespace the class names); a class's own default is
//!   [`class_configuration_ref`]. [`parameters_ref`] and [`is_ours`] are the two steps
//!   behind them, which validation reports one by one;
//! - an L34Route concerns the Gateways its `parentRefs` name: [`parent_gateway`] reads one
//!   parent reference as the crate does, [`names_gateway`] says whether a route names a
//!   given Gateway (a trigger), and [`route_attaches`] whether it also attaches, that is
//!   whether a listener of the Gateway admits it (`allowedRoutes`).
//!
//! ```
//! use gateway_reconcile::{Settings, lookup};
//!
//! let settings = Settings::default();
//! assert_eq!(lookup::deployment_name(&settings, "gw"), "sllbr-gw");
//! assert_eq!(
//!     format!("{}={}", lookup::MANAGED_BY_LABEL, lookup::MANAGED_BY),
//!     "app.kubernetes.io/managed-by=gateway-controller.meridio-2.nordix.org"
//! );
//! ```

use std::fmt;

use crate::settings::Settings;
use crate::wire::{Deployment, Gateway, GatewayClass};

pub use crate::stages::addresses::{names_gateway, parent_gateway, route_attaches};
pub use crate::stages::render::{
    GATEWAY_NAME_LABEL, MANAGED_BY, MANAGED_BY_LABEL, deployment_name, gateway_name_label,
    generation_annotation, uid_annotation,
};

/// The Gateway API's group: of Gateways, GatewayClasses, and the default of a route's
/// `parentRefs[].group`.
pub const GATEWAY_API_GROUP: &str = "gateway.networking.k8s.io";

/// A parameters reference as the crate reads it: a Gateway's own
/// `spec.infrastructure.parametersRef`, or its GatewayClass's `spec.parametersRef`
/// ([`parameters_ref`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParametersRef<'a> {
    /// `group` as written.
    pub group: &'a str,
    /// `kind` as written.
    pub kind: &'a str,
    /// `name` as written.
    pub name: &'a str,
    /// Where the referent lives: the Gateway's namespace for its own reference; the
    /// class's `namespace`, `None` when it names none, for the class's.
    pub namespace: Option<&'a str>,
    /// True when the reference is the GatewayClass's.
    pub from_class: bool,
}

impl<'a> ParametersRef<'a> {
    /// The GatewayConfiguration the reference names, when it names a namespace (a
    /// Gateway's own always does: its own). Whether its group and kind are ours is
    /// [`is_ours`].
    pub fn configuration(&self) -> Option<ConfigurationRef<'a>> {
        Some(ConfigurationRef {
            namespace: self.namespace?,
            name: self.name,
            from_class: self.from_class,
        })
    }
}

/// The GatewayConfiguration a Gateway or a GatewayClass uses ([`configuration_ref`],
/// [`class_configuration_ref`]).
///
/// Its `Display` is the name as condition messages write it: `NAME` for a Gateway's own
/// configuration (in the Gateway's namespace), `NS/NAME` for one the GatewayClass
/// provides (its namespace may differ from the Gateway's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigurationRef<'a> {
    /// The configuration's namespace (empty when the Gateway has none: a hand-written
    /// snapshot).
    pub namespace: &'a str,
    /// The configuration's name.
    pub name: &'a str,
    /// True when the GatewayClass provides it (the Gateway names none itself).
    pub from_class: bool,
}

impl ConfigurationRef<'_> {
    /// Whether a GatewayConfiguration with this `metadata.namespace` and `metadata.name`
    /// is the referenced one. A configuration without a name or a namespace (a hand-written
    /// snapshot) is not a mismatch, nor is any namespace for the reference of a Gateway
    /// without one.
    pub fn matches(&self, namespace: Option<&str>, name: Option<&str>) -> bool {
        let namespace_ok =
            self.namespace.is_empty() || namespace.is_none_or(|n| n == self.namespace);
        namespace_ok && name.is_none_or(|n| n == self.name)
    }
}

impl fmt::Display for ConfigurationRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.from_class {
            write!(f, "{}/{}", self.namespace, self.name)
        } else {
            f.write_str(self.name)
        }
    }
}

/// The parameters reference that applies to `gateway`: its own
/// `spec.infrastructure.parametersRef` when it names one (the whole reference, no field
/// merge with the class's), else the `spec.parametersRef` of `class` (the Gateway's
/// GatewayClass: its default parameters, GEP-1867); `None` when neither names one.
///
/// ```
/// use gateway_reconcile::lookup;
/// use gateway_reconcile::wire::{Gateway, GatewayClass};
/// let gateway: Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw", "namespace": "red"}, "spec": {"gatewayClassName": "c"}
/// })).unwrap();
/// let class: GatewayClass = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "c"}, "spec": {"parametersRef": {
///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
///         "name": "defaults", "namespace": "infra"}}
/// })).unwrap();
/// let reference = lookup::parameters_ref(&gateway, Some(&class)).unwrap();
/// assert!(reference.from_class);
/// assert_eq!(reference.configuration().unwrap().to_string(), "infra/defaults");
/// ```
pub fn parameters_ref<'a>(
    gateway: &'a Gateway,
    class: Option<&'a GatewayClass>,
) -> Option<ParametersRef<'a>> {
    let own = gateway
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref());
    match own {
        Some(own) => Some(ParametersRef {
            group: &own.group,
            kind: &own.kind,
            name: &own.name,
            namespace: Some(gateway.metadata.namespace.as_deref().unwrap_or("")),
            from_class: false,
        }),
        None => class.and_then(class_parameters_ref),
    }
}

/// Whether a listener of the Gateway admits routes by a namespace label selector
/// (`allowedRoutes.namespaces.from: Selector`): only then does the plan need the labels of
/// the routes' namespaces ([`Snapshot::with_namespace_labels`](crate::Snapshot::with_namespace_labels)).
///
/// ```
/// use gateway_reconcile::{lookup, wire::Gateway};
/// let gateway: Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw"},
///     "spec": {"listeners": [{"name": "l", "allowedRoutes": {"namespaces": {"from": "Selector"}}}]}
/// })).unwrap();
/// assert!(lookup::uses_namespace_selector(&gateway));
/// ```
pub fn uses_namespace_selector(gateway: &Gateway) -> bool {
    gateway.spec.listeners.iter().any(|listener| {
        listener
            .allowed_routes
            .as_ref()
            .and_then(|a| a.namespaces.as_ref())
            .and_then(|n| n.from.as_deref())
            == Some("Selector")
    })
}

/// The GatewayClass's own `spec.parametersRef`, if any.
pub fn class_parameters_ref(class: &GatewayClass) -> Option<ParametersRef<'_>> {
    class
        .spec
        .parameters_ref
        .as_ref()
        .map(|reference| ParametersRef {
            group: &reference.group,
            kind: &reference.kind,
            name: &reference.name,
            namespace: reference.namespace.as_deref(),
            from_class: true,
        })
}

/// Whether a parameters reference names this controller's parameters: group
/// [`Settings::parameters_group`] and kind [`Settings::parameters_kind`] (exact,
/// case-sensitive; `meridio-2.nordix.org/GatewayConfiguration` by default).
pub fn is_ours(settings: &Settings, reference: &ParametersRef<'_>) -> bool {
    reference.group == settings.parameters_group && reference.kind == settings.parameters_kind
}

/// Which GatewayConfiguration `gateway` uses: the one [`parameters_ref`] names, when it
/// [`is_ours`] and names a namespace; `None` otherwise (no reference, another kind, a class
/// reference without a namespace: the Gateway is then invalid, and validation says why).
/// `class` is the Gateway's GatewayClass.
///
/// ```
/// use gateway_reconcile::{Settings, lookup};
/// use gateway_reconcile::wire::Gateway;
/// let gateway: Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw", "namespace": "red"},
///     "spec": {"infrastructure": {"parametersRef": {
///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
/// })).unwrap();
/// let used = lookup::configuration_ref(&Settings::default(), &gateway, None).unwrap();
/// assert_eq!((used.namespace, used.name, used.from_class), ("red", "conf", false));
/// ```
pub fn configuration_ref<'a>(
    settings: &Settings,
    gateway: &'a Gateway,
    class: Option<&'a GatewayClass>,
) -> Option<ConfigurationRef<'a>> {
    parameters_ref(gateway, class)
        .filter(|reference| is_ours(settings, reference))
        .and_then(|reference| reference.configuration())
}

/// The GatewayConfiguration a GatewayClass names as the default of its Gateways, when its
/// `spec.parametersRef` [`is_ours`] and names a namespace. A controller settles the class's
/// own status with whether it exists
/// ([`settle_class`](crate::gateway_class::settle_class)).
pub fn class_configuration_ref<'a>(
    settings: &Settings,
    class: &'a GatewayClass,
) -> Option<ConfigurationRef<'a>> {
    class_parameters_ref(class)
        .filter(|reference| is_ours(settings, reference))
        .and_then(|reference| reference.configuration())
}

/// The Gateway a Deployment's controller `ownerReference` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerGateway<'a> {
    /// The Deployment's namespace (an owner is always in its dependent's namespace);
    /// `None` when the Deployment has none.
    pub namespace: Option<&'a str>,
    /// The Gateway's name.
    pub name: &'a str,
    /// The Gateway's uid, which decides ownership: a Gateway deleted and recreated under
    /// the same name does not own the old one's Deployment.
    pub uid: &'a str,
}

/// The Gateway of a Deployment: its controller `ownerReference` (`controller: true`) when
/// that names a Gateway (`apiVersion` of group [`GATEWAY_API_GROUP`], kind `Gateway`);
/// `None` otherwise. Never from the Deployment's name, which is shortened for a long
/// Gateway name ([`deployment_name`]) and may meet another Gateway's.
///
/// ```
/// use gateway_reconcile::lookup;
/// use gateway_reconcile::wire::Deployment;
/// let deployment: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "sllbr-gw", "namespace": "red", "ownerReferences": [{
///         "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
///         "name": "gw", "uid": "u-1", "controller": true}]}
/// })).unwrap();
/// let owner = lookup::deployment_gateway(&deployment).unwrap();
/// assert_eq!((owner.namespace, owner.name, owner.uid), (Some("red"), "gw", "u-1"));
/// ```
pub fn deployment_gateway(deployment: &Deployment) -> Option<OwnerGateway<'_>> {
    let refs = deployment
        .get(&["metadata", "ownerReferences"])?
        .as_array()?;
    let controller = refs.iter().find_map(|r| {
        let r = r.as_object()?;
        (r.get("controller").and_then(|c| c.as_bool()) == Some(true)).then_some(r)
    })?;
    let text = |key: &str| controller.get(key).and_then(|v| v.as_str());
    let group = text("apiVersion")?.split_once('/').map(|(group, _)| group);
    if group != Some(GATEWAY_API_GROUP) || text("kind") != Some("Gateway") {
        return None;
    }
    Some(OwnerGateway {
        namespace: deployment.namespace(),
        name: text("name").unwrap_or(""),
        uid: text("uid").unwrap_or(""),
    })
}

#[cfg(test)]
mod tests;
