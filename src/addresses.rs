//! The Gateway's `status.addresses`, from the L34Routes attached to it (SPEC §3 step 5).

use std::collections::BTreeSet;

use crate::cidr::Cidr;
use crate::wire::{GatewayAddress, L34Route};

/// The CRD's limit on `status.addresses`.
pub const MAX_ADDRESSES: usize = 16;
/// The address type the crate writes.
pub const IP_ADDRESS: &str = "IPAddress";
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// Every route whose `parentRefs` names this Gateway (group default
/// `gateway.networking.k8s.io`, kind default `Gateway`, namespace default the route's) gives
/// the IP of each of its `destinationCIDRs`: unique by IP, sorted as strings, at most 16.
/// Unparsable CIDRs are skipped.
///
/// ```
/// use gateway_reconcile::addresses::addresses;
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
        let route_ns = route.metadata.namespace.as_deref().unwrap_or("");
        let attached = route.spec.parent_refs.iter().any(|p| {
            p.group.as_deref().unwrap_or(GATEWAY_GROUP) == GATEWAY_GROUP
                && p.kind.as_deref().unwrap_or("Gateway") == "Gateway"
                && p.namespace.as_deref().unwrap_or(route_ns) == namespace
                && p.name == gateway
        });
        if attached {
            ips.extend(
                route
                    .spec
                    .destination_cidrs
                    .iter()
                    .filter_map(|c| c.parse::<Cidr>().ok())
                    .map(|c| c.addr.to_string()),
            );
        }
    }
    ips.into_iter()
        .take(MAX_ADDRESSES)
        .map(|value| GatewayAddress {
            type_: Some(IP_ADDRESS.to_owned()),
            value,
        })
        .collect()
}

#[cfg(test)]
mod tests;
