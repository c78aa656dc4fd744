//! The Gateway's `status.addresses`, from the L34Routes attached to it.
//!
//! Which routes are skipped (over their CRD's bounds) is public documentation: the section
//! "Addresses" of [`crate::reconcile`]. A change here changes that text. Which routes
//! attach (`parentRefs`, `allowedRoutes`) is [`lookup`](crate::lookup)'s, with the
//! controller's route triggers.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::cidr::Cidr;
use crate::lookup::Admission;
use crate::snapshot::NamespaceLabels;
use crate::wire::{Gateway, GatewayAddress, L34Route};

/// The CRD's limit on `status.addresses`.
pub const MAX_ADDRESSES: usize = 16;
/// The address type the crate writes.
pub const IP_ADDRESS: &str = "IPAddress";
/// The L34Route CRD's limit on `spec.parentRefs`.
pub const MAX_PARENT_REFS: usize = 1;
/// The L34Route CRD's limit on `spec.destinationCIDRs`.
pub const MAX_DESTINATION_CIDRS: usize = 100;

/// Which listeners each route attaches through, decided once per reconcile: bit `i` stands
/// for `gateway.spec.listeners[i]` (the first 64: validation admits no more), 0 for a route
/// that attaches nowhere (no listener admits it, or it is over its CRD's bounds: module
/// docs). The addresses and the listener status both read it. `namespaces` holds the labels
/// of the routes' namespaces, for `allowedRoutes` selectors.
pub(crate) fn attachment(
    gateway: &Gateway,
    routes: &[L34Route],
    namespaces: &NamespaceLabels,
) -> Vec<u64> {
    let mut admission = Admission::new(gateway, namespaces);
    routes
        .iter()
        .map(|route| {
            if within_bounds(route) {
                admission.attached(route)
            } else {
                0
            }
        })
        .collect()
}

/// Every route attached to the Gateway (its [`attachment`] not 0: a `parentRef` names the
/// Gateway and a listener admits the route, [`route_attaches`](crate::lookup::route_attaches)'s
/// rule) gives the IP of each of its `destinationCIDRs`: unique by IP, sorted as strings,
/// at most 16. Unparsable CIDRs are skipped. Only the 16 smallest addresses are ever held,
/// however many routes there are.
pub fn addresses(routes: &[L34Route], attachment: &[u64]) -> Vec<GatewayAddress> {
    let mut ips: BTreeSet<String> = BTreeSet::new();
    let mut text = String::with_capacity(39);
    for (route, bits) in routes.iter().zip(attachment) {
        if *bits != 0 {
            for cidr in &route.spec.destination_cidrs {
                let Ok(cidr) = cidr.parse::<Cidr>() else {
                    continue;
                };
                text.clear();
                write_ip(&mut text, cidr.addr);
                // The list keeps the smallest 16: a larger one is never written, nor copied.
                let full = ips.len() >= MAX_ADDRESSES;
                if full && ips.last().is_some_and(|last| text >= *last) {
                    continue;
                }
                if !ips.contains(text.as_str()) {
                    ips.insert(text.clone());
                    if ips.len() > MAX_ADDRESSES {
                        ips.pop_last();
                    }
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

/// `addr` as `Display` writes it: IPv4 in dotted decimal by hand (most routes' addresses;
/// the formatter costs more than the rest of the route), IPv6 through the formatter.
fn write_ip(out: &mut String, addr: IpAddr) {
    match addr {
        IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                if octet >= 100 {
                    out.push(char::from(b'0' + octet / 100));
                }
                if octet >= 10 {
                    out.push(char::from(b'0' + octet / 10 % 10));
                }
                out.push(char::from(b'0' + octet % 10));
            }
        }
        IpAddr::V6(v6) => {
            use std::fmt::Write;
            // Writing to a String cannot fail.
            let _ = write!(out, "{v6}");
        }
    }
}

/// Whether a route is within its CRD's bounds on `parentRefs` and `destinationCIDRs`: a
/// route over them (which the API server refuses; a hand-written snapshot) attaches
/// nowhere.
pub(crate) fn within_bounds(route: &L34Route) -> bool {
    route.spec.parent_refs.len() <= MAX_PARENT_REFS
        && route.spec.destination_cidrs.len() <= MAX_DESTINATION_CIDRS
}

#[cfg(test)]
mod tests;
