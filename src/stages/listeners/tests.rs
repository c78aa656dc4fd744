//! Unit tests of `listeners`: each rule of SPEC revision 5's "Listeners" on its own.

use super::*;
use crate::addresses::attachment;
use crate::snapshot::NamespaceLabels;
use crate::wire::L34Route;
use serde_json::{Value, json};

const NOW: &str = "2026-01-01T00:00:00Z";
const PROGRAMMED_TRUE: GatewayProgrammed<'static> = GatewayProgrammed {
    status: status::TRUE,
    reason: reason::PROGRAMMED,
};

/// The Gateway `ns/gw` (generation 2) with these listeners and this `status.listeners`.
fn gateway(listeners: Value, observed: Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns", "generation": 2},
        "spec": {"gatewayClassName": "meridio", "listeners": listeners},
        "status": {"listeners": observed}
    }))
    .unwrap()
}

fn route(ns: &str, parent: Value) -> L34Route {
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": "r"},
        "spec": {"parentRefs": [parent], "destinationCIDRs": ["20.0.0.1/32"]}
    }))
    .unwrap()
}

fn settle(
    gateway: &Gateway,
    routes: &[L34Route],
    programmed: GatewayProgrammed<'_>,
) -> Option<Vec<ListenerStatus>> {
    listener_status(
        gateway,
        &attachment(gateway, routes, &NamespaceLabels::new()),
        programmed,
        2,
        NOW.parse().unwrap(),
    )
}

/// `type → (status, reason, message)` of an entry's conditions.
fn conditions_of(entry: &ListenerStatus) -> Vec<(&str, &str, &str, &str)> {
    entry
        .conditions
        .iter()
        .map(|c| {
            (
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
            )
        })
        .collect()
}

#[test]
fn an_accepted_listener_supports_l34route_and_counts_its_routes() {
    let gw = gateway(
        json!([{"name": "tcp", "port": 80, "protocol": "TCP"}]),
        json!([]),
    );
    let routes = [
        route("ns", json!({"name": "gw"})),
        route("ns", json!({"name": "gw", "sectionName": "tcp"})),
        // Another listener's section, another Gateway, another namespace (from: Same).
        route("ns", json!({"name": "gw", "sectionName": "udp"})),
        route("ns", json!({"name": "other"})),
        route("blue", json!({"name": "gw", "namespace": "ns"})),
    ];
    let entries = settle(&gw, &routes, PROGRAMMED_TRUE).unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry.name, "tcp");
    assert_eq!(entry.attached_routes, 2);
    assert_eq!(
        entry.supported_kinds,
        [RouteGroupKind {
            group: Some("meridio-2.nordix.org".into()),
            kind: "L34Route".into()
        }]
    );
    assert_eq!(
        conditions_of(entry),
        [
            ("Accepted", "True", "Accepted", "Listener accepted"),
            ("Programmed", "True", "Programmed", "Listener programmed"),
            (
                "ResolvedRefs",
                "True",
                "ResolvedRefs",
                "Listener references resolved"
            ),
        ]
    );
    assert!(
        entry
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(2) && c.last_transition_time == NOW)
    );
}

#[test]
fn an_unsupported_protocol_is_not_accepted_and_admits_no_route() {
    let gw = gateway(
        json!([
            {"name": "quic", "port": 443, "protocol": "example.com/quic"},
            {"name": "udp", "port": 53, "protocol": "UDP"}
        ]),
        json!([]),
    );
    let routes = [route("ns", json!({"name": "gw"}))];
    let entries = settle(&gw, &routes, PROGRAMMED_TRUE).unwrap();
    let quic = &entries[0];
    assert_eq!(quic.attached_routes, 0);
    assert!(quic.supported_kinds.is_empty());
    assert_eq!(
        conditions_of(quic),
        [
            (
                "Accepted",
                "False",
                "UnsupportedProtocol",
                r#"protocol "example.com/quic" is not supported (supported: HTTP, HTTPS, SCTP, TCP, TLS, UDP)"#
            ),
            ("Programmed", "False", "Invalid", "listener not accepted"),
            (
                "ResolvedRefs",
                "True",
                "ResolvedRefs",
                "Listener references resolved"
            ),
        ]
    );
    // The route without sectionName counts on the accepted listener alone.
    assert_eq!(entries[1].attached_routes, 1);
}

#[test]
fn other_route_kinds_are_named_once_each_in_order() {
    let gw = gateway(
        json!([{"name": "tcp", "port": 80, "protocol": "TCP", "allowedRoutes": {"kinds": [
            {"kind": "HTTPRoute"},
            {"group": "meridio-2.nordix.org", "kind": "L34Route"},
            {"kind": "TCPRoute"},
            {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"},
            {"kind": "L34Route"}
        ]}}]),
        json!([]),
    );
    let entries = settle(&gw, &[route("ns", json!({"name": "gw"}))], PROGRAMMED_TRUE).unwrap();
    let entry = &entries[0];
    // L34Route is listed: supported, and the route attaches.
    assert_eq!(entry.supported_kinds.len(), 1);
    assert_eq!(entry.attached_routes, 1);
    assert_eq!(
        conditions_of(entry)[2],
        (
            "ResolvedRefs",
            "False",
            "InvalidRouteKinds",
            "route kinds not supported: gateway.networking.k8s.io/HTTPRoute, gateway.networking.k8s.io/TCPRoute, gateway.networking.k8s.io/L34Route (supported: meridio-2.nordix.org/L34Route)"
        )
    );
}

#[test]
fn kinds_without_l34route_support_nothing() {
    let gw = gateway(
        json!([{"name": "tcp", "port": 80, "protocol": "TCP",
            "allowedRoutes": {"kinds": [{"kind": "TCPRoute"}]}}]),
        json!([]),
    );
    let entries = settle(&gw, &[route("ns", json!({"name": "gw"}))], PROGRAMMED_TRUE).unwrap();
    assert!(entries[0].supported_kinds.is_empty());
    assert_eq!(entries[0].attached_routes, 0);
    // Accepted all the same: the protocol is supported.
    assert_eq!(conditions_of(&entries[0])[0].1, "True");
}

#[test]
fn programmed_follows_the_gateway() {
    let gw = gateway(
        json!([{"name": "tcp", "port": 80, "protocol": "TCP"}]),
        json!([]),
    );
    let pending = GatewayProgrammed {
        status: status::FALSE,
        reason: reason::PENDING,
    };
    let entries = settle(&gw, &[], pending).unwrap();
    assert_eq!(
        conditions_of(&entries[0])[1],
        ("Programmed", "False", "Pending", "Gateway not programmed")
    );
    // A reason the crate does not write is read as Pending.
    let odd = GatewayProgrammed {
        status: status::FALSE,
        reason: "SomethingElse",
    };
    assert_eq!(
        conditions_of(&settle(&gw, &[], odd).unwrap()[0])[1].2,
        "Pending"
    );
}

#[test]
fn the_steady_state_writes_nothing_and_a_change_keeps_the_transition_times() {
    let listeners = json!([{"name": "tcp", "port": 80, "protocol": "TCP"}]);
    let first = settle(&gateway(listeners.clone(), json!([])), &[], PROGRAMMED_TRUE).unwrap();
    let observed = serde_json::to_value(&first).unwrap();
    // The same inputs: nothing to write.
    assert_eq!(
        settle(
            &gateway(listeners.clone(), observed.clone()),
            &[],
            PROGRAMMED_TRUE
        ),
        None
    );
    // A route attaches later: the count changes, the conditions' times stay.
    let later: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
    let gw = gateway(listeners, observed);
    let routes = [route("ns", json!({"name": "gw"}))];
    let entries = listener_status(
        &gw,
        &attachment(&gw, &routes, &NamespaceLabels::new()),
        PROGRAMMED_TRUE,
        2,
        later,
    )
    .unwrap();
    assert_eq!(entries[0].attached_routes, 1);
    assert!(
        entries[0]
            .conditions
            .iter()
            .all(|c| c.last_transition_time == NOW)
    );
}

#[test]
fn entries_follow_the_spec_and_keep_foreign_conditions() {
    let observed = json!([
        {"name": "gone", "supportedKinds": [], "attachedRoutes": 0, "conditions": []},
        {"name": "tcp", "supportedKinds": [], "attachedRoutes": 0, "conditions": [
            {"type": "example.com/Warm", "status": "True", "reason": "Warm", "message": "",
             "lastTransitionTime": "2025-01-01T00:00:00Z"}
        ]}
    ]);
    let gw = gateway(
        json!([
            {"name": "udp", "port": 53, "protocol": "UDP"},
            {"name": "tcp", "port": 80, "protocol": "TCP"},
            {"name": "tcp", "port": 81, "protocol": "example.com/quic"}
        ]),
        observed,
    );
    let entries = settle(&gw, &[], PROGRAMMED_TRUE).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    // Spec order, the first listener of a name only, the removed listener's entry gone.
    assert_eq!(names, ["udp", "tcp"]);
    let tcp = &entries[1];
    assert_eq!(tcp.conditions[0].type_, "example.com/Warm");
    assert_eq!(tcp.conditions.len(), 4);
    assert_eq!(conditions_of(tcp)[1].1, "True");
}

#[test]
fn the_eight_item_limit_keeps_accepted_then_programmed() {
    let foreign: Vec<Value> = (0..6)
        .map(|i| {
            json!({"type": format!("example.com/F{i}"), "status": "True", "reason": "F",
            "message": "", "lastTransitionTime": NOW})
        })
        .collect();
    let gw = gateway(
        json!([{"name": "tcp", "port": 80, "protocol": "TCP"}]),
        json!([{"name": "tcp", "supportedKinds": [], "attachedRoutes": 0, "conditions": foreign}]),
    );
    let entries = settle(&gw, &[], PROGRAMMED_TRUE).unwrap();
    let types: Vec<&str> = entries[0]
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(types.len(), 8);
    assert_eq!(&types[6..], ["Accepted", "Programmed"]);
}

#[test]
fn at_most_the_crds_listeners_get_an_entry() {
    let listeners: Vec<Value> = (0..MAX_LISTENERS + 3)
        .map(|i| json!({"name": format!("l{i}"), "port": 80, "protocol": "TCP"}))
        .collect();
    let gw = gateway(Value::Array(listeners), json!([]));
    assert_eq!(
        settle(&gw, &[], PROGRAMMED_TRUE).unwrap().len(),
        MAX_LISTENERS
    );
}
