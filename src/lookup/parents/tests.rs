//! Unit tests of `lookup::parents`: which Gateway a route names, and `allowedRoutes`.

use super::*;
use serde_json::json;

fn route(ns: &str, parents: serde_json::Value, cidrs: &[&str]) -> L34Route {
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": "r"},
        "spec": {"parentRefs": parents, "destinationCIDRs": cidrs}
    }))
    .unwrap()
}

/// The Gateway `ns/gw` with these listeners.
fn gateway_with(listeners: serde_json::Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns"},
        "spec": {"gatewayClassName": "meridio", "listeners": listeners}
    }))
    .unwrap()
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
}

/// The admission kept per (namespace, sectionName) answers what each listener decides for
/// each route on its own, route after route (the kept decision reused), and agrees with
/// `route_attaches`.
#[test]
fn the_kept_admission_is_each_listeners_own_decision() {
    let gateway = gateway_with(json!([
        {"name": "same", "port": 1, "protocol": "TCP"},
        {"name": "all", "port": 2, "protocol": "UDP", "allowedRoutes": {"namespaces": {"from": "All"}}},
        {"name": "red", "port": 3, "protocol": "SCTP", "allowedRoutes": {"namespaces": {
            "from": "Selector", "selector": {"matchLabels": {"team": "red"}}}}},
        {"name": "quic", "port": 4, "protocol": "example.com/quic",
            "allowedRoutes": {"namespaces": {"from": "All"}}},
        {"name": "http", "port": 5, "protocol": "HTTP", "allowedRoutes": {
            "namespaces": {"from": "All"}, "kinds": [{"kind": "HTTPRoute"}]}}
    ]));
    let mut labels = NamespaceLabels::new();
    labels.insert("pink".into(), [("team".into(), "red".into())].into());
    let mut routes = Vec::new();
    for ns in ["ns", "pink", "blue"] {
        for section in [
            None,
            Some("same"),
            Some("all"),
            Some("red"),
            Some("quic"),
            Some("none"),
        ] {
            let mut parent = json!({"name": "gw", "namespace": "ns"});
            if let Some(section) = section {
                parent["sectionName"] = json!(section);
            }
            // Twice each: the second answer is the kept one.
            routes.push(route(ns, json!([parent.clone()]), &[]));
            routes.push(route(ns, json!([parent]), &[]));
        }
        routes.push(route(
            ns,
            json!([{"name": "other", "namespace": "ns"}]),
            &[],
        ));
    }
    let listeners: Vec<&Listener> = gateway.spec.listeners.iter().collect();
    let mut admission = Admission::new(&gateway, &labels);
    for r in &routes {
        let route_ns = r.metadata.namespace.as_deref().unwrap();
        let mut expected = 0u64;
        for parent in &r.spec.parent_refs {
            if parent_gateway(parent, route_ns) != Some(("ns", "gw")) {
                continue;
            }
            for (i, l) in listeners.iter().enumerate() {
                let section = parent.section_name.as_deref();
                if section.is_none_or(|s| s == l.name) && admits(l, route_ns, "ns", &labels) {
                    expected |= 1 << i;
                }
            }
        }
        let bits = admission.attached(r);
        assert_eq!(bits, expected, "{route_ns} {:?}", r.spec.parent_refs);
        assert_eq!(bits != 0, route_attaches(r, &gateway, &labels));
    }
    // Spot checks of the rules themselves: `same` admits its own namespace only, `red` the
    // selected one, `quic` (unsupported protocol) and `http` (no L34Route kind) nothing.
    let only = |ns: &str, section: &str| {
        let parent = json!([{"name": "gw", "namespace": "ns", "sectionName": section}]);
        Admission::new(&gateway, &labels).attached(&route(ns, parent, &[]))
    };
    assert_eq!(only("ns", "same"), 0b1);
    assert_eq!(only("blue", "same"), 0);
    assert_eq!(only("pink", "red"), 0b100);
    assert_eq!(only("blue", "red"), 0);
    assert_eq!(only("ns", "quic"), 0);
    assert_eq!(only("ns", "http"), 0);
}
