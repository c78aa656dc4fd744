//! The Gateway's `status.addresses`, from the L34Routes attached to it.
//!
//! A route holding more `parentRefs` than [`MAX_PARENT_REFS`] or more `destinationCIDRs`
//! than [`MAX_DESTINATION_CIDRS`] (the L34Route CRD's `maxItems`, the same in this
//! project's copy and in Meridio-2's) is one the API server refuses, so it can come only
//! from a hand-written snapshot: it is skipped whole, as an unparsable CIDR is skipped,
//! since a route is not the Gateway's own parameter and must not make the Gateway invalid.
//! Only its list lengths are looked at, so a long list costs nothing. The route's other
//! lists are not read by the crate and so not bounded here (where this project's CRD copy
//! and Meridio-2's differ, it is on those: `sourcePorts` and `destinationPorts` 1,000 items
//! against 20, `byteMatches` 100 against 10; and on the length of one `destinationCIDRs`
//! item, 64 against 50 characters, which the crate does not bound either: an item of any
//! length is parsed or skipped).

use std::collections::BTreeSet;

use crate::cidr::Cidr;
use crate::wire::{GatewayAddress, L34Route, ParentReference};

/// The CRD's limit on `status.addresses`.
pub const MAX_ADDRESSES: usize = 16;
/// The address type the crate writes.
pub const IP_ADDRESS: &str = "IPAddress";
/// The L34Route CRD's limit on `spec.parentRefs`.
pub const MAX_PARENT_REFS: usize = 1;
/// The L34Route CRD's limit on `spec.destinationCIDRs`.
pub const MAX_DESTINATION_CIDRS: usize = 100;
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// Every route whose `parentRefs` names this Gateway (group default
/// `gateway.networking.k8s.io`, kind default `Gateway`, namespace default the route's) gives
/// the IP of each of its `destinationCIDRs`: unique by IP, sorted as strings, at most 16.
/// Unparsable CIDRs are skipped, and so are routes over the CRD's bounds (module docs).
/// Only the 16 smallest addresses are ever held, however many routes there are.
///
/// ```
/// use gateway_reconcile::stages::addresses::addresses;
/// let route: gateway_reconcile::wire::L34Route = serde_json::from_str(r#"{
///   "metadata": {"namespace": "ns"},
///   "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32", "bad"]}
/// }"#).unwrap();
/// let list = addresses("gw", "ns", &[route]);
/// assert_eq!(list[0].value, "20.0.0.1");
/// assert_eq!(list.len(), 1);
/// ```
pub fn addresses(gateway: &str, namespace: &str, routes: &[L34Route]) -> Vec<GatewayAddress> {
    let mut ips = BTreeSet::new();
    for route in routes {
        if route.spec.parent_refs.len() > MAX_PARENT_REFS
            || route.spec.destination_cidrs.len() > MAX_DESTINATION_CIDRS
        {
            continue;
        }
        if names_gateway(route, gateway, namespace) {
            for cidr in &route.spec.destination_cidrs {
                let Ok(cidr) = cidr.parse::<Cidr>() else {
                    continue;
                };
                ips.insert(cidr.addr.to_string());
                // The list keeps the smallest 16: a larger one is never written.
                if ips.len() > MAX_ADDRESSES {
                    ips.pop_last();
                }
            }
        }
    }
    ips.into_iter()
        .map(|value| GatewayAddress {
            type_: Some(IP_ADDRESS.to_owned()),
            value,
        })
        .collect()
}

/// The Gateway a route's `parentRef` names, as `(namespace, name)`, with the Gateway API
/// defaults applied (group `gateway.networking.k8s.io`, kind `Gateway`, namespace the
/// route's own); `None` when it names something other than a Gateway. The one definition
/// of route attachment: [`addresses`] and a controller's route triggers both use it.
///
/// ```
/// use gateway_reconcile::stages::addresses::parent_gateway;
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
    let gateway = parent.group.as_deref().unwrap_or(GATEWAY_GROUP) == GATEWAY_GROUP
        && parent.kind.as_deref().unwrap_or("Gateway") == "Gateway";
    gateway.then(|| {
        (
            parent.namespace.as_deref().unwrap_or(route_namespace),
            parent.name.as_str(),
        )
    })
}

/// Whether one of the route's `parentRefs` names the Gateway `namespace/gateway` (see
/// [`parent_gateway`]). The CRD's bounds are not looked at here: [`addresses`] skips a
/// route over them.
///
/// ```
/// use gateway_reconcile::stages::addresses::names_gateway;
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

#[cfg(test)]
mod tests;
