//! Validation of the Gateway's parameters, first failure wins.
//!
//! The order of the checks and their exact messages are public documentation: the
//! section "Validation" of [`crate::reconcile`]. A change here changes that text.

use std::collections::BTreeSet;

use crate::cidr::{Cidr, CidrError, DisjointNetworks};
use crate::conditions::reason;
use crate::lookup::{
    self, ConfigurationRef, GATEWAY_NAME_LABEL, deployment_name, gateway_name_label,
};
use crate::nad::{self, NETWORKS_ANNOTATION, NetworkSelection};
use crate::names;
use crate::quantity::Quantity;
use crate::settings::Settings;
use crate::snapshot::{Snapshot, UnreadableConfiguration};
use crate::wire::tree;
use crate::wire::{
    Deployment, Gateway, GatewayClass, GatewayConfiguration, InternalSubnet, NetworkAttachment,
    VerticalScaling,
};

/// The only supported attachment type of subnets and network attachments.
const NAD: &str = "NAD";

/// The GatewayConfiguration CRD's `maxItems` of `spec.internalSubnets`.
pub const MAX_INTERNAL_SUBNETS: usize = 2;
/// The GatewayConfiguration CRD's `maxItems` of `spec.networkAttachments`.
pub const MAX_NETWORK_ATTACHMENTS: usize = 10;
/// The Gateway API's `maxProperties` of `spec.infrastructure.labels` and of
/// `spec.infrastructure.annotations`.
pub const MAX_INFRASTRUCTURE_ENTRIES: usize = 8;

/// Namespace of last resort for NAD selections, as Kubernetes itself uses.
const DEFAULT_NAMESPACE: &str = "default";

/// A validated GatewayConfiguration, with what rendering needs from it ([`validate`] makes
/// one).
#[derive(Debug, Clone, PartialEq)]
pub struct Validated<'a> {
    pub(crate) configuration: &'a GatewayConfiguration,
    pub(crate) networks: Vec<NetworkSelection>,
    pub(crate) ipv4: bool,
    pub(crate) ipv6: bool,
}

// The crate reads the fields; the tests read them through these.
#[cfg(test)]
impl Validated<'_> {
    /// The merged network selections: the template's not overridden, then the
    /// GatewayConfiguration's in spec order; namespaces resolved.
    pub fn networks(&self) -> &[NetworkSelection] {
        &self.networks
    }

    /// True when an internal subnet is IPv4.
    pub fn ipv4(&self) -> bool {
        self.ipv4
    }

    /// True when an internal subnet is IPv6.
    pub fn ipv6(&self) -> bool {
        self.ipv6
    }
}

/// Why the parameters are invalid; `Display` is the exact condition message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Invalid {
    /// Neither the Gateway's `infrastructure.parametersRef` nor its GatewayClass's
    /// `spec.parametersRef` names one.
    #[error("GatewayConfiguration reference is required")]
    ReferenceRequired,
    /// The parametersRef names another group or kind.
    #[error(
        "unsupported parametersRef: group={group:?} kind={kind:?} (expected {expected_group}/{expected_kind})"
    )]
    UnsupportedReference {
        /// `parametersRef.group` as given.
        group: String,
        /// `parametersRef.kind` as given.
        kind: String,
        /// The group the settings accept.
        expected_group: String,
        /// The kind the settings accept.
        expected_kind: String,
    },
    /// The GatewayClass's `spec.parametersRef`, which the Gateway uses, names no
    /// namespace (a GatewayConfiguration is namespaced, a class is not). The message is the
    /// class's own `Accepted` message for it.
    #[error("parametersRef.namespace is required for a GatewayConfiguration")]
    NamespaceRequired,
    /// The referenced GatewayConfiguration was not given (or is another one).
    #[error("GatewayConfiguration {name:?} not found")]
    ConfigurationNotFound {
        /// The configuration as messages name it: `NAME` (the Gateway's own reference), or
        /// `NS/NAME` (the GatewayClass's).
        name: String,
    },
    /// The referenced GatewayConfiguration exists but cannot be read
    /// ([`UnreadableConfiguration`]).
    #[error("GatewayConfiguration {name:?} cannot be read: {why}")]
    ConfigurationUnreadable {
        /// The configuration as messages name it: `NAME`, or `NS/NAME` for the
        /// GatewayClass's.
        name: String,
        /// The reader's error, naming the field path.
        why: String,
    },
    /// `spec.internalSubnets` is empty.
    #[error("GatewayConfiguration must have at least one internalSubnet")]
    NoInternalSubnet,
    /// A subnet whose `attachmentType` is not `NAD`.
    #[error("subnet {cidr}: only NAD attachment type is supported (got {attachment_type:?})")]
    SubnetAttachmentType {
        /// The subnet's `cidr` as written.
        cidr: String,
        /// The `attachmentType` given.
        attachment_type: String,
    },
    /// A subnet CIDR that does not parse.
    #[error(transparent)]
    Cidr(#[from] CidrError),
    /// A subnet CIDR with prefix 0.
    #[error("CIDR {cidr:?}: default route CIDRs (0.0.0.0/0 or ::/0) are not allowed")]
    DefaultRoute {
        /// The CIDR as written.
        cidr: String,
    },
    /// A subnet CIDR holding IPv6 link-local addresses.
    #[error("CIDR {cidr:?}: IPv6 link-local addresses (fe80::/10) are not allowed")]
    Ipv6LinkLocal {
        /// The CIDR as written.
        cidr: String,
    },
    /// Two subnets that share addresses.
    #[error("overlapping internalSubnet CIDRs: {earlier} and {later}")]
    OverlappingSubnets {
        /// The earlier subnet's masked network.
        earlier: Cidr,
        /// The later subnet's masked network.
        later: Cidr,
    },
    /// A network attachment whose `type` is not `NAD`.
    #[error("networkAttachment {index}: only NAD type is supported (got {type_:?})")]
    AttachmentType {
        /// 0-based position in `spec.networkAttachments`.
        index: usize,
        /// The `type` given.
        type_: String,
    },
    /// A `NAD` network attachment without `nad`.
    #[error("networkAttachment {index}: NAD configuration is required when type is NAD")]
    NadRequired {
        /// 0-based position in `spec.networkAttachments`.
        index: usize,
    },
    /// A network attachment with an empty `nad.name`.
    #[error("networkAttachment: NAD name is required")]
    NadNameRequired,
    /// A network attachment with an empty `nad.interface`.
    #[error("networkAttachment: interface name is required")]
    InterfaceRequired,
    /// Two network attachments with the same interface.
    #[error("networkAttachment: duplicate interface name {interface:?}")]
    DuplicateInterface {
        /// The interface name.
        interface: String,
    },
    /// A verticalScaling container that asks for ResourceClaims.
    #[error(
        "verticalScaling container {container:?}: ResourceClaims are not supported (DRA not implemented)"
    )]
    ResourceClaims {
        /// The container name.
        container: String,
    },
    /// Two verticalScaling entries for the same container. (Not in the spec's list: the
    /// CRD keys the list by name; a hand-made snapshot with a repeat would otherwise render
    /// differently on create and on update.)
    #[error("verticalScaling container {container:?}: duplicate entry")]
    DuplicateVerticalScaling {
        /// The container name.
        container: String,
    },
    /// A verticalScaling request or limit that is not a Kubernetes quantity. (Not in the
    /// spec's list: the real CRD types these as quantities, so the API server refuses them;
    /// a hand-made snapshot gets this condition rather than a Deployment the server rejects.)
    #[error("verticalScaling container {container:?}: invalid quantity {value:?} for {field}")]
    Quantity {
        /// The container name.
        container: String,
        /// `requests.cpu`, `limits.memory`, ...
        field: String,
        /// The value as written (cut to 64 characters).
        value: String,
    },
    /// A verticalScaling request or limit below zero, which the API server refuses.
    #[error(
        "verticalScaling container {container:?}: negative quantity {value:?} for {field} (must be greater than or equal to 0)"
    )]
    NegativeQuantity {
        /// The container name.
        container: String,
        /// `requests.cpu`, `limits.memory`, ...
        field: String,
        /// The value as written (cut to 64 characters).
        value: String,
    },
    /// A negative `horizontalScaling.replicas`, which the API server refuses.
    #[error(
        "horizontalScaling.replicas: invalid value {value}: must be greater than or equal to 0"
    )]
    NegativeReplicas {
        /// The replica count.
        value: i64,
    },
    /// A `horizontalScaling.replicas` past a Deployment's `int32`, which the CRD admits and
    /// the API server refuses in the rendered Deployment.
    #[error(
        "horizontalScaling.replicas: invalid value {value}: must be less than or equal to {max}",
        max = i32::MAX
    )]
    ReplicasPastInt32 {
        /// The replica count.
        value: i64,
    },
    /// The Gateway's own name is not one the API server takes (a DNS-1123 subdomain of at
    /// most 253 characters): a hand-written snapshot. Checked whole, before any shortening
    /// could hide a bad character past the part the LB Deployment name keeps.
    #[error("Gateway name {name:?}: {why}")]
    GatewayName {
        /// The name (cut to 300 characters).
        name: String,
        /// Why, in the API server's words.
        why: String,
    },
    /// The LB Deployment name (`deploymentPrefix + Gateway name`, shortened past 63
    /// characters), which is also the value of its `app` label, is not one the API server
    /// takes.
    #[error("LB Deployment name {name:?} (deploymentPrefix + Gateway name): {why}")]
    DeploymentName {
        /// The name (cut to 300 characters).
        name: String,
        /// Why, in the API server's words.
        why: String,
    },
    /// The `gateway.networking.k8s.io/gateway-name` label's value (the Gateway name,
    /// shortened past 63 characters) is not a label value.
    #[error("label {GATEWAY_NAME_LABEL}: invalid value {value:?} (the Gateway name): {why}")]
    GatewayNameLabel {
        /// The value (cut to 300 characters).
        value: String,
        /// Why, in the API server's words.
        why: String,
    },
    /// A label or annotation of the Gateway's `spec.infrastructure` that the LB Deployment
    /// cannot carry.
    #[error("infrastructure.{field}[{key:?}]: {why}")]
    InfrastructureMetadata {
        /// `labels` or `annotations`.
        field: &'static str,
        /// The key (cut to 300 characters).
        key: String,
        /// Why, in the API server's words, naming the value when it is the value.
        why: String,
    },
    /// The template's networks and the GatewayConfiguration's share an interface.
    #[error("duplicate interface name {interface:?} in merged network attachments")]
    MergedDuplicateInterface {
        /// The interface name.
        interface: String,
    },
    /// A list or map longer than the CRD that defines it allows (the API server refuses
    /// such an object; a hand-written snapshot can still carry one).
    #[error("{object} {field}: must have at most {limit} {unit} (has {count})")]
    TooMany {
        /// `Gateway` or `GatewayConfiguration`.
        object: &'static str,
        /// The field's path in the object, e.g. `spec.networkAttachments`.
        field: &'static str,
        /// `items` (a list) or `entries` (a map).
        unit: &'static str,
        /// The CRD's limit.
        limit: usize,
        /// How many the object has.
        count: usize,
    },
    /// The LB Deployment template cannot be rendered from.
    #[error("invalid LB deployment template: {why}")]
    Template {
        /// What is wrong, naming the field (e.g. `spec.template.spec.containers is empty`).
        why: String,
    },
    /// The Gateway has `spec.addresses` (SPEC revision 5): the addresses come from the
    /// routes, and one asked for cannot be honoured. Reason `UnsupportedAddress`.
    #[error("spec.addresses is not supported: the Gateway's addresses come from its L34Routes")]
    UnsupportedAddress,
    /// No listener is accepted (SPEC revision 5): the first listener's protocol, in spec
    /// order, is not one the LB carries. Reason `ListenersNotValid`.
    #[error("no listener is accepted: listener {name:?}: protocol {protocol:?} is not supported")]
    NoListenerAccepted {
        /// The first listener's name (cut to 300 characters).
        name: String,
        /// Its protocol (cut to 300 characters).
        protocol: String,
    },
    /// The Gateway has no listener at all (the CRD refuses it; a hand-written snapshot).
    /// Reason `ListenersNotValid`.
    #[error("no listener is accepted: the Gateway has no listener")]
    NoListener,
}

impl Invalid {
    /// True for a template failure (the controller's file may be fixed: back off).
    pub fn is_template(&self) -> bool {
        matches!(self, Invalid::Template { .. })
    }

    /// The reason of `Accepted` and `ConfigurationApplied` for this failure:
    /// `UnsupportedAddress` and `ListenersNotValid` for the two of SPEC revision 5,
    /// `InvalidParameters` for every other.
    pub fn reason(&self) -> &'static str {
        match self {
            Invalid::UnsupportedAddress => reason::UNSUPPORTED_ADDRESS,
            Invalid::NoListenerAccepted { .. } | Invalid::NoListener => reason::LISTENERS_NOT_VALID,
            _ => reason::INVALID_PARAMETERS,
        }
    }

    /// [`Invalid::UnsupportedReference`] for a reference that is not ours (a Gateway's or
    /// a GatewayClass's: the message is the same).
    pub(crate) fn unsupported(settings: &Settings, reference: &lookup::ParametersRef<'_>) -> Self {
        Invalid::UnsupportedReference {
            group: reference.group.to_owned(),
            kind: reference.kind.to_owned(),
            expected_group: settings.parameters_group.clone(),
            expected_kind: settings.parameters_kind.clone(),
        }
    }
}

/// Validates a Gateway that names its own parameters, stopping at the first failure (see
/// the module docs for the order): [`validate_snapshot`] of a snapshot holding `gateway`,
/// `configuration` and `template`, without a GatewayClass (so without its default
/// parameters) and without an unreadable configuration. The reconcile validates whole
/// snapshots; the tests use this shorter form.
#[cfg(test)]
pub fn validate<'a>(
    settings: &Settings,
    gateway: &Gateway,
    configuration: Option<&'a GatewayConfiguration>,
    template: &Deployment,
) -> Result<Validated<'a>, Invalid> {
    check(settings, gateway, None, configuration, None, template)
}

/// Validates what a reconcile reads, stopping at the first failure (see the module docs
/// for the order): the parameters the Gateway uses (its own, else its GatewayClass's
/// default: `snapshot.gateway_class` is taken as the Gateway's class, which
/// [`plan`](crate::plan) checks is ours before it validates), the GatewayConfiguration
/// (`configuration`, or `unreadable_configuration` when that is the referenced one) and
/// the template.
pub fn validate_snapshot<'a>(
    settings: &Settings,
    snapshot: &Snapshot<'a>,
) -> Result<Validated<'a>, Invalid> {
    check(
        settings,
        snapshot.gateway,
        snapshot.gateway_class,
        snapshot.configuration,
        snapshot.unreadable_configuration,
        snapshot.template,
    )
}

/// The checks of the module docs, in order.
fn check<'a>(
    settings: &Settings,
    gateway: &Gateway,
    class: Option<&GatewayClass>,
    configuration: Option<&'a GatewayConfiguration>,
    unreadable: Option<UnreadableConfiguration<'_>>,
    template: &Deployment,
) -> Result<Validated<'a>, Invalid> {
    let reference = lookup::parameters_ref(gateway, class).ok_or(Invalid::ReferenceRequired)?;
    if !lookup::is_ours(settings, &reference) {
        return Err(Invalid::unsupported(settings, &reference));
    }
    let target = reference
        .configuration()
        .ok_or(Invalid::NamespaceRequired)?;
    if let Some(unreadable) = unreadable.filter(|u| target.matches(Some(u.namespace), Some(u.name)))
    {
        return Err(Invalid::ConfigurationUnreadable {
            name: target.to_string(),
            why: unreadable.why.to_owned(),
        });
    }
    let configuration = configuration
        .filter(|c| target.matches(c.metadata.namespace.as_deref(), c.metadata.name.as_deref()))
        .ok_or_else(|| Invalid::ConfigurationNotFound {
            name: target.to_string(),
        })?;
    let spec = &configuration.spec;
    // Each list's bound is checked before its items (an empty subnet list passes it and is
    // reported by check_subnets as it was).
    at_most(
        CONFIGURATION,
        "spec.internalSubnets",
        "items",
        spec.internal_subnets.len(),
        MAX_INTERNAL_SUBNETS,
    )?;
    let (ipv4, ipv6) = check_subnets(&spec.internal_subnets)?;
    at_most(
        CONFIGURATION,
        "spec.networkAttachments",
        "items",
        spec.network_attachments.len(),
        MAX_NETWORK_ATTACHMENTS,
    )?;
    check_attachments(&spec.network_attachments)?;
    if let Some(vertical) = &spec.vertical_scaling {
        check_vertical_scaling(vertical)?;
    }
    match spec.horizontal_scaling.as_ref().and_then(|h| h.replicas) {
        Some(value) if value < 0 => return Err(Invalid::NegativeReplicas { value }),
        Some(value) if i32::try_from(value).is_err() => {
            return Err(Invalid::ReplicasPastInt32 { value });
        }
        _ => {}
    }
    let networks = merged_networks(&target, configuration, template)?;
    check_template(template).map_err(|why| Invalid::Template { why })?;
    check_names(settings, gateway)?;
    check_infrastructure_metadata(gateway)?;
    check_listeners(gateway)?;
    Ok(Validated {
        configuration,
        networks,
        ipv4,
        ipv6,
    })
}

/// The Gateway CRD's `maxItems` of a listener's `allowedRoutes.kinds`.
pub const MAX_ROUTE_KINDS: usize = 8;

/// SPEC revision 5's two failures, after the CRD's bounds on the listeners: no
/// `spec.addresses`, and at least one accepted listener.
fn check_listeners(gateway: &Gateway) -> Result<(), Invalid> {
    let listeners = &gateway.spec.listeners;
    at_most(
        GATEWAY,
        "spec.listeners",
        "items",
        listeners.len(),
        lookup::MAX_LISTENERS,
    )?;
    for listener in listeners {
        let kinds = listener
            .allowed_routes
            .as_ref()
            .map_or(0, |a| a.kinds.len());
        at_most(
            GATEWAY,
            "spec.listeners[].allowedRoutes.kinds",
            "items",
            kinds,
            MAX_ROUTE_KINDS,
        )?;
    }
    if !gateway.spec.addresses.is_empty() {
        return Err(Invalid::UnsupportedAddress);
    }
    match listeners.first() {
        None => Err(Invalid::NoListener),
        Some(_) if listeners.iter().any(lookup::listener_accepted) => Ok(()),
        Some(first) => Err(Invalid::NoListenerAccepted {
            name: first.name.chars().take(300).collect(),
            protocol: first.protocol.chars().take(300).collect(),
        }),
    }
}

/// The object kinds that messages name.
const CONFIGURATION: &str = "GatewayConfiguration";
const GATEWAY: &str = "Gateway";

/// A list or map of `count` elements within the CRD's `limit`.
fn at_most(
    object: &'static str,
    field: &'static str,
    unit: &'static str,
    count: usize,
    limit: usize,
) -> Result<(), Invalid> {
    if count > limit {
        return Err(Invalid::TooMany {
            object,
            field,
            unit,
            limit,
            count,
        });
    }
    Ok(())
}

/// Each subnet fully, in order; returns whether any is IPv4 and any is IPv6.
fn check_subnets(subnets: &[InternalSubnet]) -> Result<(bool, bool), Invalid> {
    if subnets.is_empty() {
        return Err(Invalid::NoInternalSubnet);
    }
    // Disjoint until the first overlap, which ends the check: O(log n) per subnet.
    let mut seen = DisjointNetworks::default();
    let (mut any_v4, mut any_v6) = (false, false);
    for (position, subnet) in subnets.iter().enumerate() {
        if subnet.attachment_type != NAD {
            return Err(Invalid::SubnetAttachmentType {
                cidr: subnet.cidr.clone(),
                attachment_type: subnet.attachment_type.clone(),
            });
        }
        let cidr: Cidr = subnet.cidr.parse()?;
        if cidr.is_default_route() {
            return Err(Invalid::DefaultRoute {
                cidr: subnet.cidr.clone(),
            });
        }
        if cidr.is_ipv6_link_local() {
            return Err(Invalid::Ipv6LinkLocal {
                cidr: subnet.cidr.clone(),
            });
        }
        let network = cidr.network();
        if let Some((_, earlier)) = seen.first_overlap(&network) {
            return Err(Invalid::OverlappingSubnets {
                earlier,
                later: network,
            });
        }
        any_v4 |= network.is_ipv4();
        any_v6 |= network.is_ipv6();
        seen.insert(position, network);
    }
    Ok((any_v4, any_v6))
}

fn check_attachments(attachments: &[NetworkAttachment]) -> Result<(), Invalid> {
    let mut interfaces = BTreeSet::new();
    for (index, attachment) in attachments.iter().enumerate() {
        if attachment.type_ != NAD {
            return Err(Invalid::AttachmentType {
                index,
                type_: attachment.type_.clone(),
            });
        }
        let nad = attachment
            .nad
            .as_ref()
            .ok_or(Invalid::NadRequired { index })?;
        if nad.name.is_empty() {
            return Err(Invalid::NadNameRequired);
        }
        if nad.interface.is_empty() {
            return Err(Invalid::InterfaceRequired);
        }
        if !interfaces.insert(nad.interface.as_str()) {
            return Err(Invalid::DuplicateInterface {
                interface: nad.interface.clone(),
            });
        }
    }
    Ok(())
}

fn check_vertical_scaling(vertical: &VerticalScaling) -> Result<(), Invalid> {
    let has_claims = |resources: &tree::Map| match resources.get("claims") {
        None | Some(tree::Value::Null) => false,
        // Not a list: malformed, and certainly not "no claims".
        Some(claims) => claims.as_array().is_none_or(|claims| !claims.is_empty()),
    };
    match vertical
        .containers
        .iter()
        .find(|c| c.resources.as_ref().is_some_and(has_claims))
    {
        Some(container) => Err(Invalid::ResourceClaims {
            container: container.name.clone(),
        }),
        None => {
            let mut seen = std::collections::BTreeSet::new();
            if let Some(dup) = vertical
                .containers
                .iter()
                .find(|c| !seen.insert(c.name.as_str()))
            {
                return Err(Invalid::DuplicateVerticalScaling {
                    container: dup.name.clone(),
                });
            }
            check_quantities(vertical)
        }
    }
}

/// What the API server makes of a request or limit.
enum QuantityCheck {
    Valid,
    Malformed,
    Negative,
}

/// A request or limit (of a verticalScaling entry or of the template): a quantity (a
/// string, or a JSON number as its text), not negative.
fn tree_quantity(value: &tree::Value) -> QuantityCheck {
    quantity_of(value.as_str(), value.as_number())
}

fn quantity_of(text: Option<&str>, number: Option<&serde_json::Number>) -> QuantityCheck {
    let parsed = match (text, number) {
        (Some(text), _) => text.parse::<Quantity>().ok(),
        (None, Some(n)) => n.to_string().parse::<Quantity>().ok(),
        (None, None) => None,
    };
    match parsed {
        None => QuantityCheck::Malformed,
        Some(q) if q.is_negative() => QuantityCheck::Negative,
        Some(_) => QuantityCheck::Valid,
    }
}

/// The LB Deployment name is a DNS-1123 subdomain and, as the `app` label's value, a label
/// value; the `gateway-name` label's value is a label value. Both are within 63 characters
/// whatever the Gateway name's length (shortened with a hash), the settings keeping the
/// prefix within 53.
fn check_names(settings: &Settings, gateway: &Gateway) -> Result<(), Invalid> {
    let gateway_name = gateway.metadata.name.as_deref().unwrap_or("");
    // An empty name (a hand-written snapshot) is left to the LB Deployment name's check.
    if let Some(why) = Some(gateway_name)
        .filter(|name| !name.is_empty())
        .and_then(names::subdomain_error)
    {
        return Err(Invalid::GatewayName {
            name: gateway_name.chars().take(300).collect(),
            why: why.to_owned(),
        });
    }
    let name = deployment_name(settings, gateway_name);
    if let Some(why) = names::subdomain_error(&name).or_else(|| names::label_value_error(&name)) {
        return Err(Invalid::DeploymentName {
            name: name.chars().take(300).collect(),
            why: why.to_owned(),
        });
    }
    let label = gateway_name_label(gateway_name);
    match names::label_value_error(&label) {
        Some(why) => Err(Invalid::GatewayNameLabel {
            value: label.chars().take(300).collect(),
            why: why.to_owned(),
        }),
        None => Ok(()),
    }
}

/// The Gateway's infrastructure labels and annotations go onto the LB Deployment and its
/// pods: keys must be valid keys, label values valid label values. (The Gateway API CRD
/// refuses such a Gateway too; a hand-written snapshot can still carry one.)
fn check_infrastructure_metadata(gateway: &Gateway) -> Result<(), Invalid> {
    let Some(infra) = gateway.spec.infrastructure.as_ref() else {
        return Ok(());
    };
    let cut = |s: &str| s.chars().take(300).collect::<String>();
    let maps = [
        ("labels", "spec.infrastructure.labels", &infra.labels),
        (
            "annotations",
            "spec.infrastructure.annotations",
            &infra.annotations,
        ),
    ];
    for (field, path, map) in maps {
        at_most(
            GATEWAY,
            path,
            "entries",
            map.len(),
            MAX_INFRASTRUCTURE_ENTRIES,
        )?;
        for (key, value) in map {
            let why = match names::key_error(key) {
                Some(why) => Some(format!("invalid key: {why}")),
                None if field == "labels" => names::label_value_error(value)
                    .map(|why| format!("invalid value {:?}: {why}", cut(value))),
                None => None,
            };
            if let Some(why) = why {
                return Err(Invalid::InfrastructureMetadata {
                    field,
                    key: cut(key),
                    why,
                });
            }
        }
    }
    Ok(())
}

/// Every request and limit must be a quantity (a string, or a JSON number as its text).
fn check_quantities(vertical: &VerticalScaling) -> Result<(), Invalid> {
    for container in &vertical.containers {
        let Some(resources) = &container.resources else {
            continue;
        };
        for part in ["requests", "limits"] {
            let Some(values) = resources.get(part).and_then(tree::Value::as_object) else {
                continue;
            };
            for (resource, value) in values {
                let text = || match value.as_str() {
                    Some(t) => t.chars().take(64).collect(),
                    None => value.to_string().chars().take(64).collect(),
                };
                match tree_quantity(value) {
                    QuantityCheck::Valid => {}
                    QuantityCheck::Malformed => {
                        return Err(Invalid::Quantity {
                            container: container.name.clone(),
                            field: format!("{part}.{resource}"),
                            value: text(),
                        });
                    }
                    QuantityCheck::Negative => {
                        return Err(Invalid::NegativeQuantity {
                            container: container.name.clone(),
                            field: format!("{part}.{resource}"),
                            value: text(),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// The template's selections merged with the configuration's; no shared interface.
fn merged_networks(
    target: &ConfigurationRef<'_>,
    configuration: &GatewayConfiguration,
    template: &Deployment,
) -> Result<Vec<NetworkSelection>, Invalid> {
    let namespace = configuration
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(Some(target.namespace).filter(|n| !n.is_empty()))
        .unwrap_or(DEFAULT_NAMESPACE);
    let from_template = template
        .get(&[
            "spec",
            "template",
            "metadata",
            "annotations",
            NETWORKS_ANNOTATION,
        ])
        .and_then(tree::Value::as_str)
        .map(|text| nad::parse_annotation(text, namespace))
        .unwrap_or_default();
    // check_attachments has passed: every attachment is a NAD with a name and an interface.
    let from_configuration: Vec<NetworkSelection> = configuration
        .spec
        .network_attachments
        .iter()
        .filter_map(|a| a.nad.as_ref())
        .map(|n| NetworkSelection {
            name: n.name.clone(),
            namespace: if n.namespace.is_empty() {
                namespace.to_owned()
            } else {
                n.namespace.clone()
            },
            interface: n.interface.clone(),
        })
        .collect();
    let merged = nad::merge_owned(&from_template, from_configuration);
    let mut interfaces = BTreeSet::new();
    if let Some(dup) = merged
        .iter()
        .filter(|s| !s.interface.is_empty())
        .find(|s| !interfaces.insert(s.interface.as_str()))
    {
        return Err(Invalid::MergedDuplicateInterface {
            interface: dup.interface.clone(),
        });
    }
    Ok(merged)
}

/// Why the template cannot be rendered from, naming the field.
fn check_template(template: &Deployment) -> Result<(), String> {
    let spec = object_field(&template.object, "spec", "spec")?;
    let pod = object_field(spec, "template", "spec.template")?;
    let pod_spec = object_field(pod, "spec", "spec.template.spec")?;
    const CONTAINERS: &str = "spec.template.spec.containers";
    let containers = match pod_spec.get("containers") {
        None | Some(tree::Value::Null) => return Err(format!("{CONTAINERS} is missing")),
        Some(tree::Value::Array(list)) => list,
        Some(_) => return Err(format!("{CONTAINERS} is not a list")),
    };
    if containers.is_empty() {
        return Err(format!("{CONTAINERS} is empty"));
    }
    let mut names = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        let container = container
            .as_object()
            .ok_or_else(|| format!("{CONTAINERS}[{i}] is not an object"))?;
        let name = container
            .get("name")
            .and_then(tree::Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("{CONTAINERS}[{i}] has no name"))?;
        if !names.insert(name) {
            return Err(format!("{CONTAINERS} has duplicate name {name:?}"));
        }
    }
    check_template_values(template)
}

/// The values of the template the API server would refuse in the rendered Deployment: a
/// negative `spec.replicas`, a request or limit of a container or init container that is not
/// a quantity or is negative, a label value out of form.
fn check_template_values(template: &Deployment) -> Result<(), String> {
    if let Some(replicas) = template.get(&["spec", "replicas"])
        && replicas.as_i64().is_none_or(|r| r < 0)
    {
        return Err(format!(
            "spec.replicas: invalid value {}: must be an integer greater than or equal to 0",
            cut(&replicas.to_string())
        ));
    }
    for list in ["initContainers", "containers"] {
        let items = template.get(&["spec", "template", "spec", list]);
        for (i, container) in items
            .and_then(tree::Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            // Built only for a failure: a long template must not cost a string per container.
            let at = || match container.get("name").and_then(tree::Value::as_str) {
                Some(name) => format!("spec.template.spec.{list}[{}]", cut(name)),
                None => format!("spec.template.spec.{list}[{i}]"),
            };
            for part in ["requests", "limits"] {
                let values = container
                    .get("resources")
                    .and_then(|r| r.get(part))
                    .and_then(tree::Value::as_object);
                for (resource, value) in values.into_iter().flatten() {
                    let what = match tree_quantity(value) {
                        QuantityCheck::Valid => continue,
                        QuantityCheck::Malformed => "invalid quantity",
                        QuantityCheck::Negative => "negative quantity",
                    };
                    let text = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    return Err(format!(
                        "{}.resources.{part}.{}: {what} {:?}",
                        at(),
                        cut(resource),
                        cut(&text)
                    ));
                }
            }
        }
    }
    for (field, path) in [
        ("metadata.labels", &["metadata", "labels"][..]),
        (
            "spec.template.metadata.labels",
            &["spec", "template", "metadata", "labels"],
        ),
    ] {
        let labels = template.get(path).and_then(tree::Value::as_object);
        for (key, value) in labels.into_iter().flatten() {
            let text = value.as_str().unwrap_or_default();
            if let Some(why) = names::label_value_error(text) {
                return Err(format!(
                    "{field}[{}]: invalid value {:?}: {why}",
                    cut(key),
                    cut(text)
                ));
            }
        }
    }
    Ok(())
}

/// A value cut to 64 characters for a message.
fn cut(text: &str) -> String {
    text.chars().take(64).collect()
}

/// The object under `key`, or why not (`PATH is missing` / `PATH is not an object`).
fn object_field<'m>(map: &'m tree::Map, key: &str, path: &str) -> Result<&'m tree::Map, String> {
    match map.get(key) {
        None | Some(tree::Value::Null) => Err(format!("{path} is missing")),
        Some(tree::Value::Object(inner)) => Ok(inner),
        Some(_) => Err(format!("{path} is not an object")),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bounds_tests;

#[cfg(test)]
mod subnet_overlap_props;
