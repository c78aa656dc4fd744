//! Which Gateway a route names and whether it attaches: a route's `parentRefs` with the
//! Gateway API defaults, and the listeners' `allowedRoutes` (the section "Addresses" of
//! [`crate::reconcile`] states the rules; a change here changes that text).

use std::collections::BTreeMap;

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
/// Gateway ([`parent_gateway`]) and a listener admits the route (the listener the
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
/// `gateway_namespace` (its `allowedRoutes`: the module docs).
fn admits(
    listener: &Listener,
    route_namespace: &str,
    gateway_namespace: &str,
    namespaces: &NamespaceLabels,
) -> bool {
    let allowed = listener.allowed_routes.as_ref();
    let from = allowed.and_then(|a| a.namespaces.as_ref());
    let namespace_admitted = match from.and_then(|f| f.from.as_deref()).unwrap_or("") {
        "" | "Same" => route_namespace == gateway_namespace,
        "All" => true,
        "Selector" => from
            .and_then(|f| f.selector.as_ref())
            .zip(namespaces.get(route_namespace))
            .is_some_and(|(selector, labels)| selects(selector, labels)),
        _ => false,
    };
    let kinds = allowed.map_or(&[][..], |a| a.kinds.as_slice());
    namespace_admitted
        && (kinds.is_empty()
            || kinds.iter().any(|k| {
                k.kind == ROUTE_KIND
                    && k.group.as_deref().unwrap_or(GATEWAY_API_GROUP) == ROUTE_GROUP
            }))
}

/// Whether a label selector selects these labels, as Kubernetes matches a
/// `metav1.LabelSelector`: every `matchLabels` entry and every `matchExpressions`
/// requirement holds; a requirement Kubernetes refuses (an unknown operator, `In` or
/// `NotIn` without values, `Exists` or `DoesNotExist` with values) makes the selector
/// select nothing.
fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    selector
        .match_labels
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value))
        && selector.match_expressions.iter().all(|requirement| {
            let value = labels.get(&requirement.key);
            let values = &requirement.values;
            match requirement.operator.as_str() {
                "In" => !values.is_empty() && value.is_some_and(|v| values.contains(v)),
                "NotIn" => !values.is_empty() && value.is_none_or(|v| !values.contains(v)),
                "Exists" => values.is_empty() && value.is_some(),
                "DoesNotExist" => values.is_empty() && value.is_none(),
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
