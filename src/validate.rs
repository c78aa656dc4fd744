//! Validation of the Gateway's parameters (SPEC §3 step 3), first failure wins.
//!
//! The checks run in this order; the first that fails is the one reported, and its
//! [`Invalid`] `Display` is the exact condition message:
//!
//! 1. the Gateway has `spec.infrastructure.parametersRef`;
//! 2. its `group` and `kind` are `Settings::parameters_group` / `parameters_kind` (exact,
//!    case-sensitive);
//! 3. the GatewayConfiguration exists, and is the one referenced: a configuration whose
//!    `metadata.name` differs from `parametersRef.name`, or whose `metadata.namespace`
//!    differs from the Gateway's (the reference is namespace-local), is reported as not
//!    found, as if the caller had passed none (a caller bug or a stale cache must not make
//!    the Gateway run with someone else's parameters). A missing name or namespace on either
//!    side is not a mismatch;
//! 4. `spec.internalSubnets`: at least one; then each subnet in list order, completely,
//!    before the next: attachment type `NAD`, the CIDR parses ([`crate::cidr`]), is not a
//!    default route, holds no IPv6 link-local address, and does not overlap any earlier
//!    subnet (the first earlier one it overlaps is named). So the reported failure is always
//!    the one of the earliest bad subnet, as in the Meridio-2 controller this models: with
//!    `[10.0.0.0/8, 10.1.0.0/16, junk]` the overlap is reported, not the junk;
//! 5. `spec.networkAttachments`, each in list order, completely, before the next: type `NAD`
//!    (exact), `nad` present, `nad.name` non-empty, `nad.interface` non-empty, interface not
//!    used by an earlier attachment;
//! 6. `spec.verticalScaling.containers`, in list order: no ResourceClaims. A `claims` entry
//!    in `resources` that is anything but `null` or an empty list counts as claims; then
//!    no container named twice (`verticalScaling container "NAME": duplicate entry`), and
//!    every request and limit must be a quantity (additions to the spec's list:
//!    `verticalScaling container "NAME": invalid quantity "X" for requests.cpu`), and none
//!    negative (`verticalScaling container "NAME": negative quantity "-1" for limits.memory
//!    (must be greater than or equal to 0)`); then `horizontalScaling.replicas` not negative
//!    (`horizontalScaling.replicas: invalid value -1: must be greater than or equal to 0`).
//!    These and the checks of steps 8 and 9 refuse render values the API server would refuse
//!    (SPEC §3), so the Gateway says what is wrong rather than carry a write rejection;
//! 7. the merged network selections (the template's pod-template
//!    `k8s.v1.cni.cncf.io/networks` annotation, read with [`crate::nad::parse_annotation`],
//!    merged with the GatewayConfiguration's by [`crate::nad::merge`]): no two entries share
//!    a non-empty interface (an empty interface lets Multus pick a free name, so it cannot
//!    clash). Selections without a namespace get the GatewayConfiguration's namespace, else
//!    the Gateway's, else `default`. A networks annotation that is not a string is ignored;
//! 8. the template is usable: `spec.template.spec.containers` is a non-empty list of
//!    objects, each with a non-empty string `name`, names unique (rendering and drift pair
//!    containers by name). This comes last, as the spec lists it; [`Invalid::is_template`]
//!    tells the caller to back off and retry, since the controller's template file may be
//!    fixed without any object changing. The template's render values are checked here too,
//!    each failure naming the field and the value: `spec.replicas` a non-negative integer;
//!    every request and limit of its containers and init containers a quantity, not negative
//!    (`spec.template.spec.containers[NAME].resources.limits.memory: negative quantity
//!    "-1Gi"`); the label values of `metadata.labels` and `spec.template.metadata.labels` of
//!    the label-value form, at most 63 characters;
//! 9. the LB Deployment name (`deploymentPrefix + Gateway name`), which is also the value of
//!    its `app` label, is a DNS-1123 subdomain of at most 63 characters: `LB Deployment name
//!    "NAME" (deploymentPrefix + Gateway name): must be no more than 63 characters, as the
//!    value of the app label` (or the API server's explanation of the form).
//!
//! Quoted values in messages (`"T"`, `"C"`, `"IF"`, ...) are written with Rust's string
//! escaping, so control characters and quotes cannot break a message.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::cidr::{Cidr, CidrError, DisjointNetworks};
use crate::nad::{self, NETWORKS_ANNOTATION, NetworkSelection};
use crate::names;
use crate::quantity::Quantity;
use crate::render::deployment_name;
use crate::settings::Settings;
use crate::wire::{
    Deployment, Gateway, GatewayConfiguration, InternalSubnet, NetworkAttachment,
    ParametersReference, VerticalScaling,
};

/// The only supported attachment type of subnets and network attachments.
const NAD: &str = "NAD";

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

impl<'a> Validated<'a> {
    /// The GatewayConfiguration.
    pub fn configuration(&self) -> &'a GatewayConfiguration {
        self.configuration
    }

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
    /// No infrastructure or no parametersRef.
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
    /// The referenced GatewayConfiguration was not given (or is another one).
    #[error("GatewayConfiguration {name:?} not found")]
    ConfigurationNotFound {
        /// `parametersRef.name`.
        name: String,
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
    InvalidCidr(#[from] CidrError),
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
    InvalidQuantity {
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
        value: i32,
    },
    /// The LB Deployment name (`deploymentPrefix + Gateway name`), which is also the value of
    /// its `app` label, is not one the API server takes.
    #[error("LB Deployment name {name:?} (deploymentPrefix + Gateway name): {why}")]
    DeploymentName {
        /// The name (cut to 300 characters).
        name: String,
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
    /// The LB Deployment template cannot be rendered from.
    #[error("invalid LB deployment template: {why}")]
    Template {
        /// What is wrong, naming the field (e.g. `spec.template.spec.containers is empty`).
        why: String,
    },
}

impl Invalid {
    /// True for a template failure (the controller's file may be fixed: back off).
    pub fn is_template(&self) -> bool {
        matches!(self, Invalid::Template { .. })
    }
}

/// Validates, stopping at the first failure (see the module docs for the order).
///
/// ```
/// use gateway_reconcile::Settings;
/// use gateway_reconcile::validate::validate;
/// use gateway_reconcile::wire::{Deployment, Gateway, GatewayConfiguration};
/// use serde_json::json;
///
/// let gateway: Gateway = serde_json::from_value(json!({
///     "metadata": {"name": "gw", "namespace": "red"},
///     "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
/// })).unwrap();
/// let mut configuration: GatewayConfiguration = serde_json::from_value(json!({
///     "metadata": {"name": "conf", "namespace": "red", "generation": 1},
///     "spec": {
///         "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
///         "networkAttachments": [{"type": "NAD", "nad": {"name": "vlan", "interface": "ext"}}]
///     }
/// })).unwrap();
/// let template: Deployment = serde_json::from_value(json!({
///     "spec": {"template": {"spec": {"containers": [{"name": "loadbalancer"}]}}}
/// })).unwrap();
///
/// let ok = validate(&Settings::default(), &gateway, Some(&configuration), &template).unwrap();
/// assert!(ok.ipv4() && !ok.ipv6());
/// assert_eq!(ok.networks()[0].namespace, "red");
///
/// configuration.spec.internal_subnets[0].cidr = "::/0".into();
/// let err = validate(&Settings::default(), &gateway, Some(&configuration), &template);
/// assert_eq!(
///     err.unwrap_err().to_string(),
///     r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
/// );
/// ```
pub fn validate<'a>(
    settings: &Settings,
    gateway: &Gateway,
    configuration: Option<&'a GatewayConfiguration>,
    template: &Deployment,
) -> Result<Validated<'a>, Invalid> {
    let reference = gateway
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref())
        .ok_or(Invalid::ReferenceRequired)?;
    if reference.group != settings.parameters_group || reference.kind != settings.parameters_kind {
        return Err(Invalid::UnsupportedReference {
            group: reference.group.clone(),
            kind: reference.kind.clone(),
            expected_group: settings.parameters_group.clone(),
            expected_kind: settings.parameters_kind.clone(),
        });
    }
    let configuration = configuration
        .filter(|c| is_referenced(c, reference, gateway))
        .ok_or_else(|| Invalid::ConfigurationNotFound {
            name: reference.name.clone(),
        })?;
    let spec = &configuration.spec;
    let (ipv4, ipv6) = check_subnets(&spec.internal_subnets)?;
    check_attachments(&spec.network_attachments)?;
    if let Some(vertical) = &spec.vertical_scaling {
        check_vertical_scaling(vertical)?;
    }
    if let Some(value) = spec
        .horizontal_scaling
        .as_ref()
        .and_then(|h| h.replicas)
        .filter(|r| *r < 0)
    {
        return Err(Invalid::NegativeReplicas { value });
    }
    let networks = merged_networks(gateway, configuration, template)?;
    check_template(template).map_err(|why| Invalid::Template { why })?;
    check_deployment_name(settings, gateway)?;
    check_infrastructure_metadata(gateway)?;
    Ok(Validated {
        configuration,
        networks,
        ipv4,
        ipv6,
    })
}

/// False when the configuration's name or namespace shows it is not the referenced one.
fn is_referenced(
    configuration: &GatewayConfiguration,
    reference: &ParametersReference,
    gateway: &Gateway,
) -> bool {
    let meta = &configuration.metadata;
    let name_ok = meta.name.as_deref().is_none_or(|n| n == reference.name);
    let namespace_ok = match (&meta.namespace, &gateway.metadata.namespace) {
        (Some(c), Some(g)) => c == g,
        _ => true,
    };
    name_ok && namespace_ok
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
    let has_claims = |resources: &Map<String, Value>| match resources.get("claims") {
        None | Some(Value::Null) => false,
        Some(Value::Array(claims)) => !claims.is_empty(),
        // Not a list: malformed, and certainly not "no claims".
        Some(_) => true,
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

/// A request or limit: a quantity (a string, or a JSON number as its text), not negative.
fn quantity(value: &Value) -> QuantityCheck {
    let parsed = match value {
        Value::String(text) => text.parse::<Quantity>().ok(),
        Value::Number(n) => n.to_string().parse::<Quantity>().ok(),
        _ => None,
    };
    match parsed {
        None => QuantityCheck::Malformed,
        Some(q) if q.is_negative() => QuantityCheck::Negative,
        Some(_) => QuantityCheck::Valid,
    }
}

/// The LB Deployment name is a DNS-1123 subdomain and, as the `app` label's value, a label
/// value (at most 63 characters).
fn check_deployment_name(settings: &Settings, gateway: &Gateway) -> Result<(), Invalid> {
    let name = deployment_name(settings, gateway.metadata.name.as_deref().unwrap_or(""));
    let why = match names::label_value_error(&name) {
        Some(why) if name.len() > 63 => Some(format!("{why}, as the value of the app label")),
        _ => names::subdomain_error(&name)
            .or_else(|| names::label_value_error(&name))
            .map(str::to_owned),
    };
    match why {
        Some(why) => Err(Invalid::DeploymentName {
            name: name.chars().take(300).collect(),
            why,
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
        ("labels", &infra.labels),
        ("annotations", &infra.annotations),
    ];
    for (field, map) in maps {
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
            let Some(Value::Object(values)) = resources.get(part) else {
                continue;
            };
            for (resource, value) in values {
                let text = || match value {
                    Value::String(t) => t.chars().take(64).collect(),
                    other => other.to_string().chars().take(64).collect(),
                };
                match quantity(value) {
                    QuantityCheck::Valid => {}
                    QuantityCheck::Malformed => {
                        return Err(Invalid::InvalidQuantity {
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
    gateway: &Gateway,
    configuration: &GatewayConfiguration,
    template: &Deployment,
) -> Result<Vec<NetworkSelection>, Invalid> {
    let namespace = configuration
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(gateway
            .metadata
            .namespace
            .as_deref()
            .filter(|n| !n.is_empty()))
        .unwrap_or(DEFAULT_NAMESPACE);
    let from_template = template
        .get(&[
            "spec",
            "template",
            "metadata",
            "annotations",
            NETWORKS_ANNOTATION,
        ])
        .and_then(Value::as_str)
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
    let merged = nad::merge(&from_template, &from_configuration);
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
        None | Some(Value::Null) => return Err(format!("{CONTAINERS} is missing")),
        Some(Value::Array(list)) => list,
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
            .and_then(Value::as_str)
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
    if let Some(replicas) = template.get(&["spec", "replicas"]) {
        if replicas.as_i64().is_none_or(|r| r < 0) {
            return Err(format!(
                "spec.replicas: invalid value {}: must be an integer greater than or equal to 0",
                cut(&replicas.to_string())
            ));
        }
    }
    for list in ["initContainers", "containers"] {
        let items = template.get(&["spec", "template", "spec", list]);
        for (i, container) in items
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            // Built only for a failure: a long template must not cost a string per container.
            let at = || match container.get("name").and_then(Value::as_str) {
                Some(name) => format!("spec.template.spec.{list}[{}]", cut(name)),
                None => format!("spec.template.spec.{list}[{i}]"),
            };
            for part in ["requests", "limits"] {
                let values = container
                    .get("resources")
                    .and_then(|r| r.get(part))
                    .and_then(Value::as_object);
                for (resource, value) in values.into_iter().flatten() {
                    let what = match quantity(value) {
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
        let labels = template.get(path).and_then(Value::as_object);
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
fn object_field<'m>(
    map: &'m Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'m Map<String, Value>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Err(format!("{path} is missing")),
        Some(Value::Object(inner)) => Ok(inner),
        Some(_) => Err(format!("{path} is not an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gateway() -> Gateway {
        serde_json::from_value(json!({
            "metadata": {"name": "gw", "namespace": "red", "uid": "u1", "generation": 1},
            "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }))
        .unwrap()
    }

    /// A valid dual-stack configuration with two NADs and vertical scaling.
    fn configuration() -> GatewayConfiguration {
        serde_json::from_value(json!({
            "apiVersion": "meridio-2.nordix.org/v1alpha1",
            "kind": "GatewayConfiguration",
            "metadata": {"name": "conf", "namespace": "red", "generation": 4},
            "spec": {
                "networkAttachments": [
                    {"type": "NAD", "nad": {"name": "vlan-100", "namespace": "net", "interface": "ext-vlan"}},
                    {"type": "NAD", "description": "internal", "nad": {"name": "internal", "interface": "int"}}
                ],
                "internalSubnets": [
                    {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                    {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
                ],
                "horizontalScaling": {"replicas": 2, "enforceReplicas": true},
                "verticalScaling": {"containers": [
                    {"name": "loadbalancer", "enforceResources": true,
                     "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}, "claims": []}},
                    {"name": "router", "resources": {"requests": {"cpu": "100m"}}}
                ]}
            }
        }))
        .unwrap()
    }

    fn template_with(networks: Option<&str>) -> Deployment {
        let mut t = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "lb"},
            "spec": {"template": {
                "metadata": {"labels": {"app": "lb"}},
                "spec": {"containers": [{"name": "loadbalancer"}, {"name": "router"}]}
            }}
        });
        if let Some(n) = networks {
            t["spec"]["template"]["metadata"]["annotations"] = json!({ NETWORKS_ANNOTATION: n });
        }
        serde_json::from_value(t).unwrap()
    }

    fn template() -> Deployment {
        template_with(None)
    }

    fn run(
        gateway: &Gateway,
        configuration: Option<&GatewayConfiguration>,
        template: &Deployment,
    ) -> Result<Vec<NetworkSelection>, String> {
        validate(&Settings::default(), gateway, configuration, template)
            .map(|v| v.networks)
            .map_err(|e| e.to_string())
    }

    /// The message for a configuration changed by `edit`.
    fn message_with(edit: impl FnOnce(&mut GatewayConfiguration)) -> String {
        let mut c = configuration();
        edit(&mut c);
        run(&gateway(), Some(&c), &template()).unwrap_err()
    }

    fn subnets(list: &[(&str, &str)]) -> Vec<InternalSubnet> {
        list.iter()
            .map(|(t, c)| InternalSubnet {
                attachment_type: (*t).into(),
                cidr: (*c).into(),
            })
            .collect()
    }

    fn nad_attachment(name: &str, interface: &str) -> NetworkAttachment {
        serde_json::from_value(
            json!({"type": "NAD", "nad": {"name": name, "interface": interface}}),
        )
        .unwrap()
    }

    fn sel(namespace: &str, name: &str, interface: &str) -> NetworkSelection {
        NetworkSelection {
            name: name.into(),
            namespace: namespace.into(),
            interface: interface.into(),
        }
    }

    fn template_message(t: serde_json::Value) -> Invalid {
        let t: Deployment = serde_json::from_value(t).unwrap();
        validate(&Settings::default(), &gateway(), Some(&configuration()), &t).unwrap_err()
    }

    #[test]
    fn valid_full_configuration() {
        let c = configuration();
        let t = template_with(Some(
            r#"[{"name":"internal","interface":"int"},{"name":"mgmt","namespace":"ops","interface":"mgmt0"}]"#,
        ));
        let v = validate(&Settings::default(), &gateway(), Some(&c), &t).unwrap();
        assert!(std::ptr::eq(v.configuration, &c));
        assert!(v.ipv4);
        assert!(v.ipv6);
        // The template's "internal" is the configuration's own (same ns/name/interface once
        // its empty namespace is the configuration's): it is listed once, in the
        // configuration's place.
        assert_eq!(
            v.networks,
            vec![
                sel("ops", "mgmt", "mgmt0"),
                sel("net", "vlan-100", "ext-vlan"),
                sel("red", "internal", "int"),
            ]
        );
    }

    #[test]
    fn family_flags_follow_the_subnets() {
        let mut c = configuration();
        c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "192.168.0.0/16")]);
        let v = validate(&Settings::default(), &gateway(), Some(&c), &template()).unwrap();
        assert!(v.ipv4 && !v.ipv6);
        c.spec.internal_subnets = subnets(&[("NAD", "fd00::/64")]);
        let v = validate(&Settings::default(), &gateway(), Some(&c), &template()).unwrap();
        assert!(!v.ipv4 && v.ipv6);
    }

    #[test]
    fn no_networks_anywhere_gives_an_empty_list() {
        let mut c = configuration();
        c.spec.network_attachments.clear();
        assert_eq!(run(&gateway(), Some(&c), &template()), Ok(vec![]));
    }

    #[test]
    fn reference_is_required() {
        let mut gw = gateway();
        gw.spec.infrastructure.as_mut().unwrap().parameters_ref = None;
        let want = "GatewayConfiguration reference is required";
        assert_eq!(
            run(&gw, Some(&configuration()), &template()).unwrap_err(),
            want
        );
        gw.spec.infrastructure = None;
        assert_eq!(
            run(&gw, Some(&configuration()), &template()).unwrap_err(),
            want
        );
    }

    #[test]
    fn unsupported_reference_names_what_was_given_and_expected() {
        let mut gw = gateway();
        let r = gw
            .spec
            .infrastructure
            .as_mut()
            .unwrap()
            .parameters_ref
            .as_mut()
            .unwrap();
        r.group = "example.com".into();
        r.kind = "ConfigMap".into();
        assert_eq!(
            run(&gw, Some(&configuration()), &template()).unwrap_err(),
            r#"unsupported parametersRef: group="example.com" kind="ConfigMap" (expected meridio-2.nordix.org/GatewayConfiguration)"#
        );
        // Only the kind wrong (and case matters).
        let mut gw = gateway();
        let r = gw.spec.infrastructure.as_mut().unwrap();
        r.parameters_ref.as_mut().unwrap().kind = "gatewayconfiguration".into();
        assert_eq!(
            run(&gw, Some(&configuration()), &template()).unwrap_err(),
            r#"unsupported parametersRef: group="meridio-2.nordix.org" kind="gatewayconfiguration" (expected meridio-2.nordix.org/GatewayConfiguration)"#
        );
    }

    #[test]
    fn expected_group_and_kind_come_from_the_settings() {
        let settings = Settings {
            parameters_group: "acme.io".into(),
            parameters_kind: "LbConfig".into(),
            ..Settings::default()
        };
        let err = validate(&settings, &gateway(), Some(&configuration()), &template())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            r#"unsupported parametersRef: group="meridio-2.nordix.org" kind="GatewayConfiguration" (expected acme.io/LbConfig)"#
        );
        let mut gw = gateway();
        let r = gw.spec.infrastructure.as_mut().unwrap();
        let r = r.parameters_ref.as_mut().unwrap();
        r.group = "acme.io".into();
        r.kind = "LbConfig".into();
        assert!(validate(&settings, &gw, Some(&configuration()), &template()).is_ok());
    }

    #[test]
    fn configuration_not_found() {
        let want = r#"GatewayConfiguration "conf" not found"#;
        assert_eq!(run(&gateway(), None, &template()).unwrap_err(), want);
        let mut other = configuration();
        other.metadata.name = Some("other".into());
        assert_eq!(
            run(&gateway(), Some(&other), &template()).unwrap_err(),
            want
        );
        let mut elsewhere = configuration();
        elsewhere.metadata.namespace = Some("blue".into());
        assert_eq!(
            run(&gateway(), Some(&elsewhere), &template()).unwrap_err(),
            want
        );
    }

    #[test]
    fn configuration_without_name_or_namespace_is_taken_as_the_referenced_one() {
        let mut c = configuration();
        c.metadata.name = None;
        c.metadata.namespace = None;
        // The empty namespace of the second NAD falls back to the Gateway's.
        assert_eq!(
            run(&gateway(), Some(&c), &template()),
            Ok(vec![
                sel("net", "vlan-100", "ext-vlan"),
                sel("red", "internal", "int")
            ])
        );
        let mut gw = gateway();
        gw.metadata.namespace = None;
        let networks = run(&gw, Some(&c), &template()).unwrap();
        assert_eq!(networks[1].namespace, "default");
    }

    #[test]
    fn at_least_one_internal_subnet() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets.clear()),
            "GatewayConfiguration must have at least one internalSubnet"
        );
    }

    #[test]
    fn subnet_attachment_type_must_be_nad() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("VLAN", "10.0.0.0/8")])),
            r#"subnet 10.0.0.0/8: only NAD attachment type is supported (got "VLAN")"#
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("nad", "10.0.0.0/8")])),
            r#"subnet 10.0.0.0/8: only NAD attachment type is supported (got "nad")"#
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("", "fd00::/64")])),
            r#"subnet fd00::/64: only NAD attachment type is supported (got "")"#
        );
    }

    #[test]
    fn invalid_cidr() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/")])),
            r#"invalid CIDR "10.0.0.0/""#
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "::/129")])),
            r#"invalid CIDR "::/129""#
        );
    }

    #[test]
    fn default_routes_are_refused() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "0.0.0.0/0")])),
            r#"CIDR "0.0.0.0/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "::/0")])),
            r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
        );
        // Host bits do not save a /0; the message quotes the text as written.
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/0")])),
            r#"CIDR "10.0.0.0/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
        );
    }

    #[test]
    fn ipv6_link_local_is_refused() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "fe80::/64")])),
            r#"CIDR "fe80::/64": IPv6 link-local addresses (fe80::/10) are not allowed"#
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets =
                subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "fe80::1/10")])),
            r#"CIDR "fe80::1/10": IPv6 link-local addresses (fe80::/10) are not allowed"#
        );
        // IPv4 link-local is the usual internal subnet: allowed.
        let mut c = configuration();
        c.spec.internal_subnets = subnets(&[("NAD", "169.254.0.0/16")]);
        assert!(run(&gateway(), Some(&c), &template()).is_ok());
    }

    #[test]
    fn overlapping_subnets_name_both_masked_networks() {
        assert_eq!(
            message_with(|c| c.spec.internal_subnets =
                subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "10.1.0.0/16")])),
            "overlapping internalSubnet CIDRs: 10.0.0.0/8 and 10.1.0.0/16"
        );
        // Earlier first, whichever is wider; host bits masked.
        assert_eq!(
            message_with(|c| c.spec.internal_subnets = subnets(&[
                ("NAD", "fd00::/64"),
                ("NAD", "10.1.2.3/16"),
                ("NAD", "10.200.0.0/16"),
                ("NAD", "10.1.9.9/8"),
            ])),
            "overlapping internalSubnet CIDRs: 10.1.0.0/16 and 10.0.0.0/8"
        );
        assert_eq!(
            message_with(|c| c.spec.internal_subnets =
                subnets(&[("NAD", "fd00:1::5/64"), ("NAD", "fd00:1::/64")])),
            "overlapping internalSubnet CIDRs: fd00:1::/64 and fd00:1::/64"
        );
        // Adjacent networks and different families do not overlap.
        let mut c = configuration();
        c.spec.internal_subnets = subnets(&[
            ("NAD", "10.0.0.0/16"),
            ("NAD", "10.1.0.0/16"),
            ("NAD", "::ffff:10.0.0.0/104"),
        ]);
        assert!(run(&gateway(), Some(&c), &template()).is_ok());
    }

    #[test]
    fn attachment_type_must_be_nad() {
        assert_eq!(
            message_with(|c| c.spec.network_attachments[1].type_ = "SR-IOV".into()),
            r#"networkAttachment 1: only NAD type is supported (got "SR-IOV")"#
        );
        assert_eq!(
            message_with(|c| c.spec.network_attachments[0].type_ = String::new()),
            r#"networkAttachment 0: only NAD type is supported (got "")"#
        );
    }

    #[test]
    fn attachment_needs_a_nad() {
        assert_eq!(
            message_with(|c| c.spec.network_attachments[1].nad = None),
            "networkAttachment 1: NAD configuration is required when type is NAD"
        );
    }

    #[test]
    fn attachment_needs_a_nad_name() {
        assert_eq!(
            message_with(|c| c.spec.network_attachments[0] = nad_attachment("", "eth9")),
            "networkAttachment: NAD name is required"
        );
    }

    #[test]
    fn attachment_needs_an_interface() {
        assert_eq!(
            message_with(|c| c.spec.network_attachments[1] = nad_attachment("x", "")),
            "networkAttachment: interface name is required"
        );
    }

    #[test]
    fn attachment_interfaces_are_unique() {
        assert_eq!(
            message_with(|c| c.spec.network_attachments[1] = nad_attachment("other", "ext-vlan")),
            r#"networkAttachment: duplicate interface name "ext-vlan""#
        );
    }

    #[test]
    fn a_container_named_twice_in_vertical_scaling_is_refused() {
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let again = vs.containers[0].clone();
                vs.containers.push(again);
            }),
            r#"verticalScaling container "loadbalancer": duplicate entry"#
        );
    }

    #[test]
    fn requests_and_limits_must_be_quantities() {
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let r = vs.containers[1].resources.as_mut().unwrap();
                r.insert("limits".into(), json!({"memory": "lots"}));
            }),
            r#"verticalScaling container "router": invalid quantity "lots" for limits.memory"#
        );
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let r = vs.containers[0].resources.as_mut().unwrap();
                r.insert("requests".into(), json!({"cpu": true}));
            }),
            r#"verticalScaling container "loadbalancer": invalid quantity "true" for requests.cpu"#
        );
        // A JSON number is read as its text, as the API server does.
        let mut c = configuration();
        let vs = c.spec.vertical_scaling.as_mut().unwrap();
        let r = vs.containers[0].resources.as_mut().unwrap();
        r.insert("requests".into(), json!({"cpu": 1.5}));
        assert_eq!(check_quantities(vs), Ok(()));
    }

    #[test]
    fn negative_requests_limits_and_replicas_are_refused() {
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let r = vs.containers[1].resources.as_mut().unwrap();
                r.insert("requests".into(), json!({"cpu": "-0.5"}));
            }),
            r#"verticalScaling container "router": negative quantity "-0.5" for requests.cpu (must be greater than or equal to 0)"#
        );
        assert_eq!(
            message_with(|c| {
                c.spec.horizontal_scaling = Some(crate::wire::HorizontalScaling {
                    replicas: Some(-3),
                    enforce_replicas: false,
                });
            }),
            "horizontalScaling.replicas: invalid value -3: must be greater than or equal to 0"
        );
        let zero = |c: &mut GatewayConfiguration| {
            c.spec.horizontal_scaling = Some(crate::wire::HorizontalScaling {
                replicas: Some(0),
                enforce_replicas: true,
            });
        };
        let mut c = configuration();
        zero(&mut c);
        assert!(run(&gateway(), Some(&c), &template()).is_ok());
    }

    #[test]
    fn the_deployment_name_must_be_one_the_api_server_takes() {
        let with_name = |name: &str| {
            let mut g = gateway();
            g.metadata.name = Some(name.into());
            let mut c = configuration();
            c.metadata.name = Some("conf".into());
            run(&g, Some(&c), &template()).err().map(|e| e.to_string())
        };
        // 6 + 57 = 63 characters: the longest that fits.
        assert_eq!(with_name(&"g".repeat(57)), None);
        assert_eq!(
            with_name(&"g".repeat(58)),
            Some(format!(
                "LB Deployment name \"sllbr-{}\" (deploymentPrefix + Gateway name): must be no more than 63 characters, as the value of the app label",
                "g".repeat(58)
            ))
        );
        let upper = with_name("GW").unwrap();
        assert!(
            upper.starts_with(r#"LB Deployment name "sllbr-GW" (deploymentPrefix + Gateway name): a lowercase RFC 1123 subdomain"#),
            "{upper}"
        );
    }

    #[test]
    fn resource_claims_are_refused() {
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let r = vs.containers[1].resources.as_mut().unwrap();
                r.insert("claims".into(), json!([{"name": "gpu"}]));
            }),
            r#"verticalScaling container "router": ResourceClaims are not supported (DRA not implemented)"#
        );
        // Malformed claims are not "no claims".
        assert_eq!(
            message_with(|c| {
                let vs = c.spec.vertical_scaling.as_mut().unwrap();
                let r = vs.containers[0].resources.as_mut().unwrap();
                r.insert("claims".into(), json!({"name": "gpu"}));
            }),
            r#"verticalScaling container "loadbalancer": ResourceClaims are not supported (DRA not implemented)"#
        );
        // Null or empty claims, or no resources at all, are fine.
        let mut c = configuration();
        let vs = c.spec.vertical_scaling.as_mut().unwrap();
        vs.containers[1]
            .resources
            .as_mut()
            .unwrap()
            .insert("claims".into(), Value::Null);
        vs.containers[0].resources = None;
        assert!(run(&gateway(), Some(&c), &template()).is_ok());
    }

    #[test]
    fn merged_interfaces_are_unique() {
        // A template NAD the configuration does not override, on a configuration interface.
        let t = template_with(Some("net/other@ext-vlan"));
        assert_eq!(
            run(&gateway(), Some(&configuration()), &t).unwrap_err(),
            r#"duplicate interface name "ext-vlan" in merged network attachments"#
        );
        // Two template NADs on one interface (JSON form).
        let mut c = configuration();
        c.spec.network_attachments.clear();
        let t = template_with(Some(
            r#"[{"name":"a","interface":"net1"},{"name":"b","namespace":"x","interface":"net1"}]"#,
        ));
        assert_eq!(
            run(&gateway(), Some(&c), &t).unwrap_err(),
            r#"duplicate interface name "net1" in merged network attachments"#
        );
    }

    #[test]
    fn merged_namespaces_resolve_to_the_configuration() {
        // "internal@int" in the template is the configuration's NAD once its empty namespace
        // is the configuration's: not a duplicate. In another namespace it would be.
        let t = template_with(Some("internal@int, plain"));
        assert_eq!(
            run(&gateway(), Some(&configuration()), &t),
            Ok(vec![
                sel("red", "plain", ""),
                sel("net", "vlan-100", "ext-vlan"),
                sel("red", "internal", "int"),
            ])
        );
        let t = template_with(Some("blue/internal@int"));
        assert_eq!(
            run(&gateway(), Some(&configuration()), &t).unwrap_err(),
            r#"duplicate interface name "int" in merged network attachments"#
        );
        // Empty interfaces never clash (Multus names them).
        let t = template_with(Some("a, b, c@"));
        assert_eq!(
            run(&gateway(), Some(&configuration()), &t).unwrap().len(),
            5
        );
    }

    #[test]
    fn template_failures() {
        let cases = [
            (json!({}), "spec is missing"),
            (json!({"spec": 3}), "spec is not an object"),
            (json!({"spec": {}}), "spec.template is missing"),
            (
                json!({"spec": {"template": null}}),
                "spec.template is missing",
            ),
            (
                json!({"spec": {"template": []}}),
                "spec.template is not an object",
            ),
            (
                json!({"spec": {"template": {}}}),
                "spec.template.spec is missing",
            ),
            (
                json!({"spec": {"template": {"spec": "x"}}}),
                "spec.template.spec is not an object",
            ),
            (
                json!({"spec": {"template": {"spec": {}}}}),
                "spec.template.spec.containers is missing",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": {"name": "a"}}}}}),
                "spec.template.spec.containers is not a list",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": []}}}}),
                "spec.template.spec.containers is empty",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, "b"]}}}}),
                "spec.template.spec.containers[1] is not an object",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
                "spec.template.spec.containers[0] has no name",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": 7}]}}}}),
                "spec.template.spec.containers[0] has no name",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": ""}]}}}}),
                "spec.template.spec.containers[0] has no name",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}}}),
                r#"spec.template.spec.containers has duplicate name "a""#,
            ),
            (
                json!({"spec": {"replicas": -1, "template": {"spec": {"containers": [{"name": "a"}]}}}}),
                "spec.replicas: invalid value -1: must be an integer greater than or equal to 0",
            ),
            (
                json!({"spec": {"replicas": "2", "template": {"spec": {"containers": [{"name": "a"}]}}}}),
                r#"spec.replicas: invalid value "2": must be an integer greater than or equal to 0"#,
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a",
                    "resources": {"limits": {"memory": "-1Gi"}}}]}}}}),
                r#"spec.template.spec.containers[a].resources.limits.memory: negative quantity "-1Gi""#,
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}],
                    "initContainers": [{"resources": {"requests": {"cpu": "fast"}}}]}}}}),
                r#"spec.template.spec.initContainers[0].resources.requests.cpu: invalid quantity "fast""#,
            ),
            (
                json!({"metadata": {"labels": {"tier": "-lb"}},
                       "spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}),
                "metadata.labels[tier]: invalid value \"-lb\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
            (
                json!({"spec": {"template": {"metadata": {"labels": {"tier": "x".repeat(64)}},
                       "spec": {"containers": [{"name": "a"}]}}}}),
                &format!(
                    "spec.template.metadata.labels[tier]: invalid value \"{}\": must be no more than 63 characters",
                    "x".repeat(64)
                ),
            ),
        ];
        for (t, why) in cases {
            let err = template_message(t.clone());
            assert_eq!(
                err.to_string(),
                format!("invalid LB deployment template: {why}"),
                "{t}"
            );
            assert!(err.is_template(), "{t}");
        }
    }

    #[test]
    fn only_template_failures_are_template_failures() {
        let others = [
            Invalid::ReferenceRequired,
            Invalid::NoInternalSubnet,
            Invalid::InvalidCidr(CidrError("x".into())),
            Invalid::MergedDuplicateInterface {
                interface: "a".into(),
            },
        ];
        for e in others {
            assert!(!e.is_template(), "{e}");
        }
        assert!(Invalid::Template { why: "w".into() }.is_template());
    }

    #[test]
    fn earlier_failures_win() {
        // Unsupported reference before not found.
        let mut gw = gateway();
        let r = gw.spec.infrastructure.as_mut().unwrap();
        r.parameters_ref.as_mut().unwrap().group = "x".into();
        assert!(
            run(&gw, None, &template())
                .unwrap_err()
                .starts_with("unsupported parametersRef")
        );
        // Not found before an unusable template.
        assert_eq!(
            run(&gateway(), None, &Deployment::default()).unwrap_err(),
            r#"GatewayConfiguration "conf" not found"#
        );
        // Everything wrong in the configuration and the template: subnets first.
        let mut c = configuration();
        c.spec.internal_subnets = subnets(&[("NAD", "0.0.0.0/0")]);
        c.spec.network_attachments[0].type_ = "X".into();
        let vs = c.spec.vertical_scaling.as_mut().unwrap();
        vs.containers[0]
            .resources
            .as_mut()
            .unwrap()
            .insert("claims".into(), json!([{"name": "c"}]));
        assert!(
            run(&gateway(), Some(&c), &Deployment::default())
                .unwrap_err()
                .starts_with(r#"CIDR "0.0.0.0/0""#)
        );
        // Then attachments, then claims.
        c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8")]);
        assert!(
            run(&gateway(), Some(&c), &Deployment::default())
                .unwrap_err()
                .starts_with("networkAttachment 0:")
        );
        c.spec.network_attachments[0].type_ = "NAD".into();
        assert!(
            run(&gateway(), Some(&c), &Deployment::default())
                .unwrap_err()
                .starts_with("verticalScaling container")
        );
        // Merged duplicates before the template check (a template whose pod spec is bad but
        // whose annotations are readable).
        let broken: Deployment = serde_json::from_value(json!({"spec": {"template": {
            "metadata": {"annotations": {NETWORKS_ANNOTATION: "x@int"}}
        }}}))
        .unwrap();
        assert_eq!(
            run(&gateway(), Some(&configuration()), &broken).unwrap_err(),
            r#"duplicate interface name "int" in merged network attachments"#
        );
    }

    #[test]
    fn subnets_are_checked_one_by_one_in_list_order() {
        let cases: [(&[(&str, &str)], &str); 5] = [
            // An overlap of the second subnet beats junk in the third.
            (
                &[
                    ("NAD", "10.0.0.0/8"),
                    ("NAD", "10.1.0.0/16"),
                    ("NAD", "junk"),
                ],
                "overlapping internalSubnet CIDRs: 10.0.0.0/8 and 10.1.0.0/16",
            ),
            // Junk in the first beats a default route in the second.
            (
                &[("NAD", "junk"), ("NAD", "0.0.0.0/0")],
                r#"invalid CIDR "junk""#,
            ),
            // Within a subnet: type before parse.
            (
                &[("VLAN", "junk")],
                r#"subnet junk: only NAD attachment type is supported (got "VLAN")"#,
            ),
            // A bad type in the second subnet beats an overlap in the third.
            (
                &[
                    ("NAD", "10.0.0.0/8"),
                    ("L2", "10.2.0.0/16"),
                    ("NAD", "10.3.0.0/16"),
                ],
                r#"subnet 10.2.0.0/16: only NAD attachment type is supported (got "L2")"#,
            ),
            // ::/0 is a default route before it is link-local.
            (
                &[("NAD", "::/0")],
                r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#,
            ),
        ];
        for (list, want) in cases {
            assert_eq!(
                message_with(|c| c.spec.internal_subnets = subnets(list)),
                want,
                "{list:?}"
            );
        }
    }

    #[test]
    fn attachments_are_checked_one_by_one_in_list_order() {
        // The first attachment lacks both name and interface: the name is reported.
        assert_eq!(
            message_with(|c| c.spec.network_attachments[0] = nad_attachment("", "")),
            "networkAttachment: NAD name is required"
        );
        // Attachment 1's type beats attachment 2's missing NAD.
        assert_eq!(
            message_with(|c| {
                c.spec.network_attachments[1].type_ = "X".into();
                c.spec.network_attachments.push(NetworkAttachment {
                    type_: "NAD".into(),
                    ..NetworkAttachment::default()
                });
            }),
            r#"networkAttachment 1: only NAD type is supported (got "X")"#
        );
        // A duplicate in attachment 1 beats a missing interface in attachment 2.
        assert_eq!(
            message_with(|c| {
                c.spec.network_attachments[1] = nad_attachment("y", "ext-vlan");
                c.spec.network_attachments.push(nad_attachment("z", ""));
            }),
            r#"networkAttachment: duplicate interface name "ext-vlan""#
        );
    }

    #[test]
    fn nasty_strings_never_panic() {
        let long = "9".repeat(5000);
        let nasty: Vec<String> = [
            "",
            " ",
            "\n",
            "\0",
            "/",
            "//",
            "@",
            "@@",
            ",",
            ",,,",
            "[",
            "[]",
            "[{]",
            "{}",
            "\"",
            "\\",
            "10.0.0.0/",
            "/8",
            "10.0.0.0/08x",
            "::/129",
            "10.0.0.0/99999999999999999999999999",
            " 10.0.0.0/8",
            "fe80::1%eth0/64",
            "é",
            "🦀/🦀@🦀",
            "ns/name@if",
            "a/b/c@d@e",
            long.as_str(),
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([format!("10.0.0.0/{long}"), format!("{long}/{long}")])
        .collect();
        let settings = Settings::default();
        for s in &nasty {
            // As a CIDR: refused with the exact message, whatever the text.
            let mut c = configuration();
            c.spec.internal_subnets = subnets(&[("NAD", s)]);
            let got = validate(&settings, &gateway(), Some(&c), &template());
            assert_eq!(
                got.unwrap_err().to_string(),
                format!("invalid CIDR {s:?}"),
                "{s:?}"
            );
            // As a type: refused, quoting it.
            let mut c = configuration();
            c.spec.internal_subnets[0].attachment_type = s.clone();
            let got = validate(&settings, &gateway(), Some(&c), &template());
            assert!(
                matches!(got, Err(Invalid::SubnetAttachmentType { .. })),
                "{s:?}"
            );
            // As an interface or NAD name: taken as is (non-empty) or refused (empty).
            let mut c = configuration();
            c.spec.network_attachments = vec![nad_attachment(s, s)];
            let got = validate(&settings, &gateway(), Some(&c), &template());
            if s.is_empty() {
                assert_eq!(got.unwrap_err(), Invalid::NadNameRequired);
            } else {
                assert_eq!(got.unwrap().networks, vec![sel("red", s, s)], "{s:?}");
            }
            // As the template's networks annotation: whatever parses, never a panic, and an
            // error only for a merged duplicate.
            let t = template_with(Some(s));
            match validate(&settings, &gateway(), Some(&configuration()), &t) {
                Ok(v) => assert!(v.networks.len() >= 2, "{s:?}"),
                Err(e) => assert!(
                    matches!(e, Invalid::MergedDuplicateInterface { .. }),
                    "{s:?}: {e}"
                ),
            }
            // As parametersRef fields: unsupported, quoting them.
            let mut gw = gateway();
            let r = gw.spec.infrastructure.as_mut().unwrap();
            let r = r.parameters_ref.as_mut().unwrap();
            r.group = s.clone();
            r.kind = s.clone();
            let got = validate(&settings, &gw, Some(&configuration()), &template())
                .unwrap_err()
                .to_string();
            assert_eq!(
                got,
                format!(
                    "unsupported parametersRef: group={s:?} kind={s:?} (expected meridio-2.nordix.org/GatewayConfiguration)"
                )
            );
        }
    }
}

/// The overlap check against the pairwise reference it replaced.
#[cfg(test)]
mod subnet_overlap_props {
    use super::*;
    use proptest::prelude::*;

    /// The pairwise check: each subnet against every earlier one, first match named.
    fn pairwise(subnets: &[InternalSubnet]) -> Result<(bool, bool), Invalid> {
        let mut seen: Vec<Cidr> = Vec::new();
        for subnet in subnets {
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
            if let Some(earlier) = seen.iter().find(|e| e.overlaps(&network)) {
                return Err(Invalid::OverlappingSubnets {
                    earlier: *earlier,
                    later: network,
                });
            }
            seen.push(network);
        }
        Ok((
            seen.iter().any(Cidr::is_ipv4),
            seen.iter().any(Cidr::is_ipv6),
        ))
    }

    /// Small address spaces, so that overlaps (nested, equal, wider later) are common.
    fn cidr() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u8..4, 0u8..4, 1u8..=32).prop_map(|(a, b, p)| format!("10.{a}.{b}.0/{p}")),
            (0u16..4, 0u16..4, 1u8..=128).prop_map(|(a, b, p)| format!("fd00:{a}:{b}::/{p}")),
        ]
    }

    fn subnets(list: Vec<String>) -> Vec<InternalSubnet> {
        list.into_iter()
            .map(|cidr| InternalSubnet {
                attachment_type: NAD.to_owned(),
                cidr,
            })
            .collect()
    }

    proptest! {
        #[test]
        fn same_verdict_as_pairwise(list in proptest::collection::vec(cidr(), 1..40)) {
            let list = subnets(list);
            prop_assert_eq!(check_subnets(&list), pairwise(&list));
        }
    }

    #[test]
    fn the_earliest_earlier_subnet_is_named() {
        // 10.1.0.0/16 and 10.2.0.0/16 are disjoint; 10.0.0.0/8 holds both: the first named.
        let list = subnets(vec![
            "10.2.0.0/16".into(),
            "10.1.0.0/16".into(),
            "10.0.0.0/8".into(),
        ]);
        assert_eq!(
            check_subnets(&list).unwrap_err().to_string(),
            "overlapping internalSubnet CIDRs: 10.2.0.0/16 and 10.0.0.0/8"
        );
    }

    /// 200,000 disjoint subnets then one overlapping the first: about 2·10¹⁰ comparisons
    /// pairwise (minutes), well under a second here even unoptimized.
    #[test]
    fn a_large_list_is_checked_without_comparing_every_pair() {
        let mut list: Vec<String> = (0u32..65_536)
            .map(|i| format!("10.{}.{}.0/24", i >> 8, i & 0xff))
            .collect();
        list.extend((0u32..134_464).map(|i| format!("fd00::{:x}:{:x}:0/112", i >> 16, i & 0xffff)));
        list.push("10.0.0.0/8".into());
        let list = subnets(list);
        assert_eq!(
            check_subnets(&list).unwrap_err().to_string(),
            "overlapping internalSubnet CIDRs: 10.0.0.0/24 and 10.0.0.0/8"
        );
    }
}
