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
