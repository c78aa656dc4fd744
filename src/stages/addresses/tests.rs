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

/// The addresses of `ns/gw` (admitting every namespace) from `routes`.
fn of(routes: &[L34Route]) -> Vec<GatewayAddress> {
    addresses(&open_gateway(), routes, &NamespaceLabels::new())
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
fn names_gateway_applies_the_parent_ref_defaults() {
    let named =
        |ns: &str, parents: serde_json::Value| names_gateway(&route(ns, parents, &[]), "gw", "ns");
    assert!(named("ns", json!([{"name": "gw"}])));
    assert!(named("other", json!([{"name": "gw", "namespace": "ns"}])));
    assert!(named(
        "ns",
        json!([{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}])
    ));
    assert!(named("ns", json!([{"name": "x"}, {"name": "gw"}])));
    assert!(!named("other", json!([{"name": "gw"}])));
    assert!(!named("ns", json!([{"name": "gw", "kind": "Service"}])));
    assert!(!named(
        "ns",
        json!([{"name": "gw", "group": "example.com"}])
    ));
    assert!(!named("ns", json!([{"name": "gw2"}])));
    assert!(!named("ns", json!([])));
    let parent = ParentReference {
        namespace: Some("far".into()),
        name: "gw".into(),
        ..ParentReference::default()
    };
    assert_eq!(parent_gateway(&parent, "ns"), Some(("far", "gw")));
}

// ---- allowedRoutes ------------------------------------------------------------------------

/// The namespaces of the tests of `from: Selector`.
fn labels() -> NamespaceLabels {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>()
    };
    [
        ("ns", map(&[("team", "red")])),
        ("blue", map(&[("team", "blue"), ("env", "prod")])),
        ("green", map(&[("team", "green")])),
        ("bare", map(&[])),
    ]
    .into_iter()
    .map(|(ns, labels)| (ns.to_owned(), labels))
    .collect()
}

/// Which of the routes of namespaces `ns`, `blue`, `green`, `bare` and `unlisted` (each
/// naming `ns/gw`) attach to `ns/gw` with these listeners.
fn admitted(listeners: serde_json::Value) -> Vec<String> {
    let gateway = gateway_with(listeners);
    let labels = labels();
    ["ns", "blue", "green", "bare", "unlisted"]
        .into_iter()
        .filter(|ns| {
            let r = route(ns, json!([{"name": "gw", "namespace": "ns"}]), &[]);
            route_attaches(&r, &gateway, &labels)
        })
        .map(str::to_owned)
        .collect()
}

fn listener(allowed_routes: serde_json::Value) -> serde_json::Value {
    json!([{"name": "l", "port": 4000, "protocol": "TCP", "allowedRoutes": allowed_routes}])
}

#[test]
fn same_namespace_is_the_default() {
    let plain = json!([{"name": "l", "port": 4000, "protocol": "TCP"}]);
    assert_eq!(admitted(plain), ["ns"]);
    assert_eq!(admitted(listener(json!({}))), ["ns"]);
    assert_eq!(admitted(listener(json!({"namespaces": {}}))), ["ns"]);
    assert_eq!(
        admitted(listener(json!({"namespaces": {"from": "Same"}}))),
        ["ns"]
    );
}

#[test]
fn all_admits_every_namespace() {
    assert_eq!(
        admitted(listener(json!({"namespaces": {"from": "All"}}))),
        ["ns", "blue", "green", "bare", "unlisted"]
    );
}

#[test]
fn an_unknown_from_admits_nothing() {
    assert!(admitted(listener(json!({"namespaces": {"from": "Everywhere"}}))).is_empty());
}

#[test]
fn selector_matches_the_handed_labels() {
    let selector = |s: serde_json::Value| {
        admitted(listener(
            json!({"namespaces": {"from": "Selector", "selector": s}}),
        ))
    };
    assert_eq!(selector(json!({"matchLabels": {"team": "blue"}})), ["blue"]);
    assert_eq!(
        selector(json!({"matchExpressions": [
            {"key": "team", "operator": "In", "values": ["blue", "green"]}]})),
        ["blue", "green"]
    );
    // NotIn also matches a namespace without the label; an unlisted one is never selected.
    assert_eq!(
        selector(json!({"matchExpressions": [
            {"key": "team", "operator": "NotIn", "values": ["blue"]}]})),
        ["ns", "green", "bare"]
    );
    assert_eq!(
        selector(json!({"matchExpressions": [{"key": "env", "operator": "Exists"}]})),
        ["blue"]
    );
    assert_eq!(
        selector(json!({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]})),
        ["bare"]
    );
    // Every requirement must hold.
    assert_eq!(
        selector(json!({"matchLabels": {"team": "blue"},
            "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]})),
        Vec::<String>::new()
    );
    // The empty selector: every namespace whose labels are handed.
    assert_eq!(selector(json!({})), ["ns", "blue", "green", "bare"]);
    // No selector, or one Kubernetes refuses: nothing.
    assert!(admitted(listener(json!({"namespaces": {"from": "Selector"}}))).is_empty());
    for invalid in [
        json!({"matchExpressions": [{"key": "team", "operator": "In", "values": []}]}),
        json!({"matchExpressions": [{"key": "team", "operator": "NotIn"}]}),
        json!({"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["x"]}]}),
        json!({"matchExpressions": [{"key": "team", "operator": "DoesNotExist", "values": ["x"]}]}),
        json!({"matchExpressions": [{"key": "team", "operator": "Gt", "values": ["1"]}]}),
    ] {
        assert!(selector(invalid.clone()).is_empty(), "{invalid}");
    }
}

#[test]
fn kinds_must_list_l34route_of_its_group_when_they_list_any() {
    let with_kinds = |kinds: serde_json::Value| {
        admitted(listener(
            json!({"namespaces": {"from": "Same"}, "kinds": kinds}),
        ))
    };
    assert_eq!(with_kinds(json!([])), ["ns"]);
    assert_eq!(
        with_kinds(json!([{"group": "meridio-2.nordix.org", "kind": "L34Route"}])),
        ["ns"]
    );
    assert_eq!(
        with_kinds(json!([{"kind": "TCPRoute"},
            {"group": "meridio-2.nordix.org", "kind": "L34Route"}])),
        ["ns"]
    );
    // The group defaults to gateway.networking.k8s.io: not ours.
    assert!(with_kinds(json!([{"kind": "L34Route"}])).is_empty());
    assert!(with_kinds(json!([{"group": "meridio-2.nordix.org", "kind": "L3Route"}])).is_empty());
}

#[test]
fn section_name_picks_the_listener() {
    let gateway = gateway_with(json!([
        {"name": "mine", "port": 4000, "protocol": "TCP"},
        {"name": "shared", "port": 4001, "protocol": "TCP",
         "allowedRoutes": {"namespaces": {"from": "All"}}}
    ]));
    let attaches = |ns: &str, section: Option<&str>| {
        let mut parent = json!({"name": "gw", "namespace": "ns"});
        if let Some(section) = section {
            parent["sectionName"] = json!(section);
        }
        route_attaches(&route(ns, json!([parent]), &[]), &gateway, &labels())
    };
    // No sectionName: any listener that admits it.
    assert!(attaches("ns", None));
    assert!(attaches("blue", None));
    assert!(attaches("blue", Some("shared")));
    assert!(!attaches("blue", Some("mine")));
    assert!(attaches("ns", Some("mine")));
    // No listener of that name: not attached.
    assert!(!attaches("ns", Some("missing")));
}

#[test]
fn a_gateway_without_listeners_admits_nothing() {
    let gateway = gateway_with(json!([]));
    let r = route("ns", json!([{"name": "gw"}]), &["20.0.0.1/32"]);
    assert!(!route_attaches(&r, &gateway, &labels()));
    assert!(addresses(&gateway, &[r], &labels()).is_empty());
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
        values(&addresses(&gateway, &routes, &labels())),
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
    use crate::addresses::addresses;
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
    let list = addresses(&gateway, &[route], &NamespaceLabels::new());
    assert_eq!(list[0].value, "20.0.0.1");
    assert_eq!(list.len(), 1);
}
