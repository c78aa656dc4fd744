//! Which GatewayConfiguration a Gateway or a GatewayClass uses: the parameters reference
//! that applies (the Gateway's own, else its class's), whether it is this controller's,
//! and the configuration it names.

use std::fmt;

use crate::settings::Settings;
use crate::wire::{Gateway, GatewayClass};

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
///     "metadata": {"name": "gw", "namespace": "red"}, "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
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
            // An empty namespace is a missing one: it names no namespace.
            namespace: reference.namespace.as_deref().filter(|ns| !ns.is_empty()),
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

#[cfg(test)]
mod tests;
