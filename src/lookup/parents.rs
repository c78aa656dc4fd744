//! Which Gateway a route names and whether it attaches: a route's `parentRefs` with the
//! Gateway API defaults, and the listeners' `allowedRoutes` (the section "Addresses" of
//! [`crate::reconcile`] states the rules; a change here changes that text).

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use crate::names;
use crate::snapshot::NamespaceLabels;
use crate::wire::{Gateway, L34Route, LabelSelector, Listener, ParentReference};

/// The Gateway API's group: of Gateways, GatewayClasses, and the default of a route's
/// `parentRefs[].group`.
pub const GATEWAY_API_GROUP: &str = "gateway.networking.k8s.io";

/// The route kind this implementation serves, which `allowedRoutes.kinds` must list when
/// it lists any.
pub const ROUTE_KIND: &str = "L34Route";
/// The API group of [`ROUTE_KIND`].
pub const ROUTE_GROUP: &str = "meridio-2.nordix.org";

/// The listener protocols the layer-4 LB carries (SPEC revision 5), in the order messages
/// list them: it forwards their packets and terminates nothing (HTTP, HTTPS and TLS travel
/// as TCP).
pub const SUPPORTED_PROTOCOLS: [&str; 6] = ["HTTP", "HTTPS", "SCTP", "TCP", "TLS", "UDP"];

/// Whether a listener is accepted: its protocol is one of [`SUPPORTED_PROTOCOLS`]. Only an
/// accepted listener admits routes.
///
/// ```
/// use gateway_reconcile::lookup::listener_accepted;
/// use gateway_reconcile::wire::Listener;
/// let tcp = Listener { name: "l".into(), protocol: "TCP".into(), ..Listener::default() };
/// assert!(listener_accepted(&tcp));
/// let quic = Listener { protocol: "example.com/quic".into(), ..tcp };
/// assert!(!listener_accepted(&quic));
/// ```
pub fn listener_accepted(listener: &Listener) -> bool {
    SUPPORTED_PROTOCOLS.contains(&listener.protocol.as_str())
}

/// Whether a listener's `allowedRoutes.kinds` admits L34Routes: absent or empty (the
/// protocol decides, and L34Route is this implementation's kind for every protocol), or
/// listing kind [`ROUTE_KIND`] of group [`ROUTE_GROUP`] (a group left out is
/// [`GATEWAY_API_GROUP`]).
pub fn kinds_admit_routes(listener: &Listener) -> bool {
    let kinds = listener
        .allowed_routes
        .as_ref()
        .map_or(&[][..], |a| a.kinds.as_slice());
    kinds.is_empty() || kinds.iter().any(is_route_kind)
}

/// Whether an `allowedRoutes.kinds` entry names L34Route.
pub(crate) fn is_route_kind(kind: &crate::wire::RouteGroupKind) -> bool {
    kind.kind == ROUTE_KIND && kind.group.as_deref().unwrap_or(GATEWAY_API_GROUP) == ROUTE_GROUP
}

/// The Gateway a route's `parentRef` names, as `(namespace, name)`, with the Gateway API
/// defaults applied (group `gateway.networking.k8s.io`, kind `Gateway`, namespace the
/// route's own); `None` when it names something other than a Gateway. The one definition
/// of route attachment: the Gateway's addresses and a controller's route triggers both use
/// it.
///
/// ```
/// use gateway_reconcile::lookup::parent_gateway;
/// use gateway_reconcile::wire::ParentReference;
/// let parent = ParentReference { name: "gw".into(), ..ParentReference::default() };
/// assert_eq!(parent_gateway(&parent, "ns"), Some(("ns", "gw")));
/// let service = ParentReference { kind: Some("Service".into()), ..parent };
/// assert_eq!(parent_gateway(&service, "ns"), None);
/// ```
pub fn parent_gateway<'a>(
    parent: &'a ParentReference,
    route_namespace: &'a str,
) -> Option<(&'a str, &'a str)> {
    let gateway = parent.group.as_deref().unwrap_or(GATEWAY_API_GROUP) == GATEWAY_API_GROUP
        && parent.kind.as_deref().unwrap_or("Gateway") == "Gateway";
    gateway.then(|| {
        (
            parent.namespace.as_deref().unwrap_or(route_namespace),
            parent.name.as_str(),
        )
    })
}

/// Whether one of the route's `parentRefs` names the Gateway `namespace/gateway` (see
/// [`parent_gateway`]), whether or not a listener admits it: what a controller's route
/// triggers key on (a route that names a Gateway concerns it, attached or not). The CRD's
/// bounds are not looked at here: the addresses skip a route over them.
///
/// ```
/// use gateway_reconcile::lookup::names_gateway;
/// let route: gateway_reconcile::wire::L34Route = serde_json::from_str(r#"{
///   "metadata": {"namespace": "ns"}, "spec": {"parentRefs": [{"name": "gw"}]}
/// }"#).unwrap();
/// assert!(names_gateway(&route, "gw", "ns"));
/// assert!(!names_gateway(&route, "gw", "other"));
/// ```
pub fn names_gateway(route: &L34Route, gateway: &str, namespace: &str) -> bool {
    let route_namespace = route.metadata.namespace.as_deref().unwrap_or("");
    route
        .spec
        .parent_refs
        .iter()
        .filter_map(|parent| parent_gateway(parent, route_namespace))
        .any(|named| named == (namespace, gateway))
}

/// Whether the route is attached to the Gateway: one of its `parentRefs` names the
/// Gateway ([`parent_gateway`]) and an accepted listener admits the route (the listener the
/// parentRef's `sectionName` names, or any listener when it names none; see
/// [Addresses](crate::reconcile#addresses) for `allowedRoutes`). `namespaces` holds the
/// labels of the routes' namespaces. The CRD's bounds are not looked at here: the
/// addresses skip a route over them.
///
/// ```
/// use gateway_reconcile::NamespaceLabels;
/// use gateway_reconcile::lookup::route_attaches;
/// use gateway_reconcile::wire::{Gateway, L34Route};
/// let gateway: Gateway = serde_json::from_str(r#"{
///   "metadata": {"name": "gw", "namespace": "red"},
///   "spec": {"listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}]}
/// }"#).unwrap();
/// let route: L34Route = serde_json::from_str(r#"{
///   "metadata": {"namespace": "blue"},
///   "spec": {"parentRefs": [{"name": "gw", "namespace": "red"}]}
/// }"#).unwrap();
/// // `from: Same` by default: a route of another namespace is not admitted.
/// assert!(!route_attaches(&route, &gateway, &NamespaceLabels::new()));
/// ```
pub fn route_attaches(route: &L34Route, gateway: &Gateway, namespaces: &NamespaceLabels) -> bool {
    let name = gateway.metadata.name.as_deref().unwrap_or("");
    let namespace = gateway.metadata.namespace.as_deref().unwrap_or("");
    let route_namespace = route.metadata.namespace.as_deref().unwrap_or("");
    let listeners = &gateway.spec.listeners;
    route.spec.parent_refs.iter().any(|parent| {
        parent_gateway(parent, route_namespace) == Some((namespace, name))
            && listeners
                .iter()
                .filter(|l| parent.section_name.as_deref().is_none_or(|s| s == l.name))
                .any(|l| admits(l, route_namespace, namespace, namespaces))
    })
}

/// Whether `listener` admits an L34Route of `route_namespace` on a Gateway of
/// `gateway_namespace`: it is accepted ([`listener_accepted`]), its `allowedRoutes.kinds`
/// admit L34Route, and its `allowedRoutes.namespaces` the route's namespace (the module
/// docs).
fn admits(
    listener: &Listener,
    route_namespace: &str,
    gateway_namespace: &str,
    namespaces: &NamespaceLabels,
) -> bool {
    open(listener) && namespace_admitted(listener, route_namespace, gateway_namespace, namespaces)
}

/// Whether a listener takes L34Routes at all: it is accepted and its kinds admit them.
fn open(listener: &Listener) -> bool {
    listener_accepted(listener) && kinds_admit_routes(listener)
}

/// Whether a listener's `allowedRoutes.namespaces` admit `route_namespace`.
fn namespace_admitted(
    listener: &Listener,
    route_namespace: &str,
    gateway_namespace: &str,
    namespaces: &NamespaceLabels,
) -> bool {
    let from = listener
        .allowed_routes
        .as_ref()
        .and_then(|a| a.namespaces.as_ref());
    match from.and_then(|f| f.from.as_deref()).unwrap_or("") {
        "" | "Same" => route_namespace == gateway_namespace,
        "All" => true,
        "Selector" => from
            .and_then(|f| f.selector.as_ref())
            .zip(namespaces.get(route_namespace))
            .is_some_and(|(selector, labels)| selects(selector, labels)),
        _ => false,
    }
}

/// The Gateway CRD's `maxItems` of `spec.listeners` (and of `status.listeners`).
pub(crate) const MAX_LISTENERS: usize = 64;

/// Which listeners a route attaches through, for one reconcile of one Gateway: bit `i` of
/// [`Admission::attached`] stands for `listeners[i]` (at most 64 of them, the CRD's bound).
/// A listener's decision is three independent facts, each made once and kept: whether it
/// takes L34Routes at all (its protocol and kinds), which `sectionName` selects it (its
/// name), and whether it admits a namespace (once per namespace, the last one asked kept
/// at hand: the routes come ordered by namespace). A Gateway's N routes cost one decision
/// per listener and namespace, not one per route, so N routes from a few namespaces, under
/// 64 listeners and large selectors, stay linear in N.
pub(crate) struct Admission<'a> {
    gateway_namespace: &'a str,
    gateway_name: &'a str,
    listeners: Vec<&'a Listener>,
    labels: &'a NamespaceLabels,
    /// The listeners that take L34Routes at all.
    open: u64,
    /// The listeners of each name, sorted by name.
    by_name: Vec<(&'a str, u64)>,
    /// The open listeners that admit each namespace asked about.
    by_namespace: BTreeMap<&'a str, u64>,
    /// The last namespace asked about, and its listeners.
    last: Option<(&'a str, u64)>,
}

impl<'a> Admission<'a> {
    /// The admission of routes to `gateway` through its listeners (the first 64 are looked
    /// at), with the labels of the routes' namespaces.
    pub(crate) fn new(gateway: &'a Gateway, labels: &'a NamespaceLabels) -> Self {
        let listeners: Vec<&Listener> = gateway.spec.listeners.iter().take(MAX_LISTENERS).collect();
        let mut open_bits = 0;
        let mut by_name: Vec<(&str, u64)> = Vec::with_capacity(listeners.len());
        for (i, listener) in listeners.iter().enumerate() {
            if open(listener) {
                open_bits |= 1 << i;
            }
            by_name.push((listener.name.as_str(), 1 << i));
        }
        by_name.sort_unstable_by(|a, b| a.0.cmp(b.0));
        // Listeners of one name (a hand-written Gateway) share an entry.
        by_name.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 |= later.1;
            }
            same
        });
        Admission {
            gateway_namespace: gateway.metadata.namespace.as_deref().unwrap_or(""),
            gateway_name: gateway.metadata.name.as_deref().unwrap_or(""),
            listeners,
            labels,
            open: open_bits,
            by_name,
            by_namespace: BTreeMap::new(),
            last: None,
        }
    }

    /// The listeners `route` attaches through, as bits (0: it does not attach): for each
    /// of its `parentRefs` naming the Gateway, the listeners of its `sectionName` (all when
    /// it names none) that admit it.
    pub(crate) fn attached(&mut self, route: &'a L34Route) -> u64 {
        let route_namespace = route.metadata.namespace.as_deref().unwrap_or("");
        let mut bits = 0;
        for parent in &route.spec.parent_refs {
            if parent_gateway(parent, route_namespace)
                != Some((self.gateway_namespace, self.gateway_name))
            {
                continue;
            }
            let named = match parent.section_name.as_deref() {
                None => u64::MAX,
                Some(section) => self
                    .by_name
                    .binary_search_by(|(name, _)| (*name).cmp(section))
                    .map_or(0, |at| self.by_name[at].1),
            };
            if named & self.open != 0 {
                bits |= named & self.namespace(route_namespace);
            }
        }
        bits
    }

    /// The open listeners that admit routes of `namespace`.
    fn namespace(&mut self, namespace: &'a str) -> u64 {
        if let Some((last, bits)) = self.last
            && last == namespace
        {
            return bits;
        }
        let bits = match self.by_namespace.entry(namespace) {
            Entry::Occupied(known) => *known.get(),
            Entry::Vacant(slot) => {
                let mut decided = 0u64;
                for (i, listener) in self.listeners.iter().enumerate() {
                    if self.open & (1 << i) != 0
                        && namespace_admitted(
                            listener,
                            namespace,
                            self.gateway_namespace,
                            self.labels,
                        )
                    {
                        decided |= 1 << i;
                    }
                }
                *slot.insert(decided)
            }
        };
        self.last = Some((namespace, bits));
        bits
    }
}

/// Whether a label selector selects these labels, as Kubernetes matches a
/// `metav1.LabelSelector`: every `matchLabels` entry and every `matchExpressions`
/// requirement holds. A selector Kubernetes refuses (`LabelSelectorAsSelector`'s checks: a
/// key that is not a label key, a value that is not a label value, an unknown operator,
/// `In` or `NotIn` without values, `Exists` or `DoesNotExist` with values) selects
/// nothing.
fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    is_valid_selector(selector)
        && selector
            .match_labels
            .iter()
            .all(|(key, value)| labels.get(key) == Some(value))
        && selector.match_expressions.iter().all(|requirement| {
            let value = labels.get(&requirement.key);
            let values = &requirement.values;
            match requirement.operator.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                _ => value.is_none(),
            }
        })
}

/// Whether Kubernetes takes the selector: its keys label keys, its values label values,
/// its operators known with the values they need.
fn is_valid_selector(selector: &LabelSelector) -> bool {
    let key = |k: &str| names::key_error(k).is_none();
    let value = |v: &str| names::label_value_error(v).is_none();
    selector
        .match_labels
        .iter()
        .all(|(k, v)| key(k) && value(v))
        && selector.match_expressions.iter().all(|requirement| {
            let values = &requirement.values;
            key(&requirement.key)
                && match requirement.operator.as_str() {
                    "In" | "NotIn" => !values.is_empty() && values.iter().all(|v| value(v)),
                    "Exists" | "DoesNotExist" => values.is_empty(),
                    _ => false,
                }
        })
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
#[cfg(test)]
mod tests;
