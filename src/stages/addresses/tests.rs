//! Unit tests of `addresses`.

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

/// The Gateway `ns/gw` with these listeners.
fn gateway_with(listeners: serde_json::Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns"},
        "spec": {"gatewayClassName": "meridio", "listeners": listeners}
    }))
    .unwrap()
}

/// `ns/gw` with one listener that admits routes of every namespace: the tests of the
/// parentRef rules, the bounds and the list.
fn open_gateway() -> Gateway {
    gateway_with(json!([{"name": "all", "port": 4000, "protocol": "TCP",
        "allowedRoutes": {"namespaces": {"from": "All"}}}]))
}

/// The addresses of `gateway` from `routes`, the attachment decided as a reconcile does.
fn addresses_of(
    gateway: &Gateway,
    routes: &[L34Route],
    namespaces: &NamespaceLabels,
) -> Vec<GatewayAddress> {
    addresses(routes, &attachment(gateway, routes, namespaces))
}

/// The addresses of `ns/gw` (admitting every namespace) from `routes`.
fn of(routes: &[L34Route]) -> Vec<GatewayAddress> {
    addresses_of(&open_gateway(), routes, &NamespaceLabels::new())
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
    let list = of(&routes);
    assert_eq!(values(&list), ["20.0.0.1", "20.0.0.2", "2001:db8::1"]);
    assert!(list.iter().all(|a| a.type_.as_deref() == Some("IPAddress")));
}

#[test]
fn unique_sorted_as_strings_capped_and_bad_cidrs_skipped() {
    let cidrs: Vec<String> = (1..=20).map(|i| format!("10.0.0.{i}/32")).collect();
    let mut cidr_refs: Vec<&str> = cidrs.iter().map(String::as_str).collect();
    cidr_refs.extend(["10.0.0.1/32", "nonsense", "10.0.0.300/32"]);
    let list = of(&[route("ns", json!([{"name": "gw"}]), &cidr_refs)]);
    assert_eq!(list.len(), MAX_ADDRESSES);
    // String order: "10.0.0.1" < "10.0.0.10" < ... < "10.0.0.2".
    assert_eq!(values(&list)[..3], ["10.0.0.1", "10.0.0.10", "10.0.0.11"]);
    assert!(!values(&list).contains(&"nonsense"));
}

#[test]
fn a_route_over_a_crd_bound_is_skipped_whole() {
    let at_limit: Vec<String> = (0..MAX_DESTINATION_CIDRS)
        .map(|i| format!("20.0.{}.{}/32", i / 256, i % 256))
        .collect();
    let at_limit: Vec<&str> = at_limit.iter().map(String::as_str).collect();
    let mut over = at_limit.clone();
    over.push("30.0.0.1/32");
    let one_parent = json!([{"name": "gw"}]);
    // 100 CIDRs: read (the 16 smallest are kept).
    let list = of(&[route("ns", one_parent.clone(), &at_limit)]);
    assert_eq!(list.len(), MAX_ADDRESSES);
    assert_eq!(list[0].value, "20.0.0.0");
    // 101 CIDRs: the route is skipped, the others still count.
    let routes = [
        route("ns", one_parent.clone(), &over),
        route("ns", one_parent, &["40.0.0.1/32"]),
    ];
    assert_eq!(values(&of(&routes)), ["40.0.0.1"]);
    // Two parentRefs (the CRD allows one), even if one names the Gateway: skipped.
    let two_parents = json!([{"name": "gw"}, {"name": "other"}]);
    let routes = [route("ns", two_parents, &["40.0.0.2/32"])];
    assert!(of(&routes).is_empty());
}

#[test]
fn many_routes_keep_the_smallest_addresses() {
    // Added largest first: the set keeps the 16 smallest, as the sorted list's head.
    let routes: Vec<L34Route> = (0..1000u32)
        .rev()
        .map(|i| {
            let cidr = format!("20.0.{}.{}/32", i / 256, i % 256);
            route("ns", json!([{"name": "gw"}]), &[cidr.as_str()])
        })
        .collect();
    let list = of(&routes);
    let mut expected: Vec<String> = (0..1000u32)
        .map(|i| format!("20.0.{}.{}", i / 256, i % 256))
        .collect();
    expected.sort();
    expected.truncate(MAX_ADDRESSES);
    assert_eq!(values(&list), expected);
}

#[test]
fn a_gateway_without_listeners_has_no_addresses() {
    let gateway = gateway_with(json!([]));
    let r = route("ns", json!([{"name": "gw"}]), &["20.0.0.1/32"]);
    assert!(addresses_of(&gateway, &[r], &NamespaceLabels::new()).is_empty());
}

#[test]
fn routes_of_another_namespace_never_push_the_owners_addresses_out() {
    // 20 routes of another namespace with smaller addresses, refused by `from: Same`.
    let mut routes: Vec<L34Route> = (0..20u32)
        .map(|i| {
            let cidr = format!("10.0.0.{i}/32");
            route(
                "blue",
                json!([{"name": "gw", "namespace": "ns"}]),
                &[cidr.as_str()],
            )
        })
        .collect();
    routes.push(route("ns", json!([{"name": "gw"}]), &["20.0.0.1/32"]));
    let gateway = gateway_with(json!([{"name": "l", "port": 4000, "protocol": "TCP"}]));
    assert_eq!(
        values(&addresses_of(&gateway, &routes, &NamespaceLabels::new())),
        ["20.0.0.1"]
    );
    // Admitted, they would.
    assert_eq!(of(&routes).len(), MAX_ADDRESSES);
    assert!(!values(&of(&routes)).contains(&"20.0.0.1"));
}

/// An attached route gives the IP of each parsable CIDR; `bad` is skipped.
#[test]
fn example_addresses_of_a_route() {
    use crate::NamespaceLabels;
    use crate::wire::{Gateway, L34Route};
    let gateway: Gateway = serde_json::from_str(
        r#"{
      "metadata": {"name": "gw", "namespace": "ns"},
      "spec": {"listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}]}
    }"#,
    )
    .unwrap();
    let route: L34Route = serde_json::from_str(
        r#"{
      "metadata": {"namespace": "ns"},
      "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32", "bad"]}
    }"#,
    )
    .unwrap();
    let list = addresses_of(&gateway, &[route], &NamespaceLabels::new());
    assert_eq!(list[0].value, "20.0.0.1");
    assert_eq!(list.len(), 1);
}

/// The hand-written IPv4 text is `Display`'s, for every octet width.
#[test]
fn ip_text_is_displays() {
    let mut text = String::new();
    for addr in [
        "0.0.0.0",
        "9.10.99.100",
        "255.255.255.255",
        "10.0.1.200",
        "::1",
        "fd00:100::7",
        "::ffff:1.2.3.4",
    ] {
        let ip: IpAddr = addr.parse().unwrap();
        text.clear();
        write_ip(&mut text, ip);
        assert_eq!(text, ip.to_string());
    }
    for octet in 0..=255u8 {
        let ip = IpAddr::from([octet, octet, 0, 255]);
        text.clear();
        write_ip(&mut text, ip);
        assert_eq!(text, ip.to_string());
    }
}
