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
mod tests {
    use super::*;
    use serde_json::json;

    fn route(ns: &str, parents: serde_json::Value, cidrs: &[&str]) -> L34Route {
        serde_json::from_value(json!({
            "metadata": {"namespace": ns, "name": "r"},
            "spec": {"parentRefs": parents, "destinationCIDRs": cidrs}
        }))
        .unwrap()
    }

    fn values(list: &[GatewayAddress]) -> Vec<&str> {
        list.iter().map(|a| a.value.as_str()).collect()
    }

    #[test]
    fn parent_ref_defaults_select_the_gateway() {
        let routes = [
            route("ns", json!([{"name": "gw"}]), &["20.0.0.2/32"]),
            route(
                "other",
                json!([{"name": "gw", "namespace": "ns"}]),
                &["20.0.0.1/32"],
            ),
            route("other", json!([{"name": "gw"}]), &["30.0.0.1/32"]),
            route(
                "ns",
                json!([{"name": "gw", "kind": "Service"}]),
                &["30.0.0.2/32"],
            ),
            route(
                "ns",
                json!([{"name": "gw", "group": "example.com"}]),
                &["30.0.0.3/32"],
            ),
            route("ns", json!([{"name": "gw2"}]), &["30.0.0.4/32"]),
            route(
                "ns",
                json!([{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}]),
                &["2001:db8::1/128"],
            ),
        ];
        let list = addresses("gw", "ns", &routes);
        assert_eq!(values(&list), ["20.0.0.1", "20.0.0.2", "2001:db8::1"]);
        assert!(list.iter().all(|a| a.type_.as_deref() == Some("IPAddress")));
    }

    #[test]
    fn unique_sorted_as_strings_capped_and_bad_cidrs_skipped() {
        let cidrs: Vec<String> = (1..=20).map(|i| format!("10.0.0.{i}/32")).collect();
        let mut cidr_refs: Vec<&str> = cidrs.iter().map(String::as_str).collect();
        cidr_refs.extend(["10.0.0.1/32", "nonsense", "10.0.0.300/32"]);
        let list = addresses(
            "gw",
            "ns",
            &[route("ns", json!([{"name": "gw"}]), &cidr_refs)],
        );
        assert_eq!(list.len(), MAX_ADDRESSES);
        // String order: "10.0.0.1" < "10.0.0.10" < ... < "10.0.0.2".
        assert_eq!(values(&list)[..3], ["10.0.0.1", "10.0.0.10", "10.0.0.11"]);
        assert!(!values(&list).contains(&"nonsense"));
    }
}
