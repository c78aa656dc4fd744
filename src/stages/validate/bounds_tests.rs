//! Unit tests of `validate`: the CRDs' list bounds, and the Gateway's listeners and
//! `spec.addresses` (SPEC revision 5). The fixtures are the main tests'.

use super::tests::{configuration, gateway, message_with, nad_attachment, run, subnets, template};
use super::*;
use serde_json::json;

// ---- the CRDs' list bounds ----------------------------------------------------------------

#[test]
fn internal_subnets_are_bounded_before_their_items() {
    // At the limit: valid (the realistic configuration has two).
    assert_eq!(
        configuration().spec.internal_subnets.len(),
        MAX_INTERNAL_SUBNETS
    );
    assert!(run(&gateway(), Some(&configuration()), &template()).is_ok());
    // Over it: refused, before the junk item would be.
    let message = message_with(|c| {
        c.spec.internal_subnets = subnets(&[
            ("NAD", "169.254.100.0/24"),
            ("NAD", "fd00:100::/64"),
            ("VLAN", "junk"),
        ]);
    });
    assert_eq!(
        message,
        "GatewayConfiguration spec.internalSubnets: must have at most 2 items (has 3)"
    );
    // The empty list keeps its own message.
    assert_eq!(
        message_with(|c| c.spec.internal_subnets.clear()),
        "GatewayConfiguration must have at least one internalSubnet"
    );
}

#[test]
fn network_attachments_are_bounded_before_their_items() {
    let attachments = |n: usize| -> Vec<NetworkAttachment> {
        (0..n)
            .map(|i| nad_attachment(&format!("n{i}"), &format!("net{i}")))
            .collect()
    };
    let mut c = configuration();
    c.spec.network_attachments = attachments(MAX_NETWORK_ATTACHMENTS);
    let networks = run(&gateway(), Some(&c), &template()).unwrap();
    assert_eq!(networks.len(), MAX_NETWORK_ATTACHMENTS);
    let message = message_with(|c| {
        c.spec.network_attachments = attachments(MAX_NETWORK_ATTACHMENTS + 1);
        // A bad item would be reported if the items came first.
        c.spec.network_attachments[0].type_ = "VLAN".into();
    });
    assert_eq!(
        message,
        "GatewayConfiguration spec.networkAttachments: must have at most 10 items (has 11)"
    );
}

#[test]
fn infrastructure_labels_and_annotations_are_bounded() {
    let entries = |n: usize| -> std::collections::BTreeMap<String, String> {
        (0..n).map(|i| (format!("k{i}"), "v".to_owned())).collect()
    };
    let with = |labels: usize, annotations: usize| {
        let mut gw = gateway();
        let infra = gw.spec.infrastructure.as_mut().unwrap();
        infra.labels = entries(labels);
        infra.annotations = entries(annotations);
        validate(
            &Settings::default(),
            &gw,
            Some(&configuration()),
            &template(),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let limit = MAX_INFRASTRUCTURE_ENTRIES;
    assert_eq!(with(limit, limit), Ok(()));
    assert_eq!(
        with(limit + 1, limit + 1),
        Err("Gateway spec.infrastructure.labels: must have at most 8 entries (has 9)".into())
    );
    assert_eq!(
        with(limit, 100_000),
        Err(
            "Gateway spec.infrastructure.annotations: must have at most 8 entries (has 100000)"
                .into()
        )
    );
    // The bound comes before the keys: a bad key over the bound reports the bound.
    let mut gw = gateway();
    let infra = gw.spec.infrastructure.as_mut().unwrap();
    infra.labels = entries(limit + 1);
    infra.labels.insert("bad key".into(), "v".into());
    assert_eq!(
        validate(
            &Settings::default(),
            &gw,
            Some(&configuration()),
            &template()
        )
        .unwrap_err()
        .to_string(),
        "Gateway spec.infrastructure.labels: must have at most 8 entries (has 10)"
    );
}

/// A valid configuration, then a default route refused with its exact message.
#[test]
fn example_validate() {
    use crate::Settings;
    use crate::validate::validate;
    use crate::wire::{Deployment, Gateway, GatewayConfiguration};
    use serde_json::json;

    let gateway: Gateway = serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "red"},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
            "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
    }))
    .unwrap();
    let mut configuration: GatewayConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "conf", "namespace": "red", "generation": 1},
        "spec": {
            "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
            "networkAttachments": [{"type": "NAD", "nad": {"name": "vlan", "interface": "ext"}}]
        }
    }))
    .unwrap();
    let template: Deployment = serde_json::from_value(json!({
        "spec": {"template": {"spec": {"containers": [{"name": "loadbalancer"}]}}}
    }))
    .unwrap();

    let ok = validate(
        &Settings::default(),
        &gateway,
        Some(&configuration),
        &template,
    )
    .unwrap();
    assert!(ok.ipv4() && !ok.ipv6());
    assert_eq!(ok.networks()[0].namespace, "red");

    configuration.spec.internal_subnets[0].cidr = "::/0".into();
    let err = validate(
        &Settings::default(),
        &gateway,
        Some(&configuration),
        &template,
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
    );
}

/// A class's default parameters that do not exist are named `NS/NAME`.
#[test]
fn example_validate_snapshot() {
    use crate::validate::validate_snapshot;
    use crate::wire::{Gateway, GatewayClass};
    use crate::{Settings, Snapshot, template};
    use serde_json::json;

    let gateway: Gateway = serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "red"}, "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
    }))
    .unwrap();
    let class: GatewayClass = serde_json::from_value(json!({
        "metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller", "parametersRef": {
            "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
            "name": "defaults", "namespace": "infra"}}
    }))
    .unwrap();
    let template = template::default_template();
    let snapshot = Snapshot::new(&gateway, &template).with_gateway_class(Some(&class));
    assert_eq!(
        validate_snapshot(&Settings::default(), &snapshot)
            .unwrap_err()
            .to_string(),
        r#"GatewayConfiguration "infra/defaults" not found"#
    );
}

// ---- SPEC revision 5: the listeners and spec.addresses ---------------------------------------

#[test]
fn the_listeners_are_bounded_then_addresses_then_one_must_be_accepted() {
    let with = |spec: serde_json::Value| {
        let mut g = gateway();
        let extra: Gateway = serde_json::from_value(json!({"spec": spec})).unwrap();
        g.spec.listeners = extra.spec.listeners;
        g.spec.addresses = extra.spec.addresses;
        let mut c = configuration();
        c.metadata.name = Some("conf".into());
        validate(&Settings::default(), &g, Some(&c), &template()).err()
    };
    let tcp = json!({"name": "tcp", "port": 80, "protocol": "TCP"});
    assert_eq!(with(json!({"listeners": [tcp]})), None);
    let nine: Vec<_> = (0..9).map(|k| json!({"kind": format!("K{k}")})).collect();
    let many_kinds = json!({"name": "tcp", "port": 80, "protocol": "TCP",
        "allowedRoutes": {"kinds": nine}});
    assert_eq!(
        with(json!({"listeners": [many_kinds]}))
            .unwrap()
            .to_string(),
        "Gateway spec.listeners[].allowedRoutes.kinds: must have at most 8 items (has 9)"
    );
    let sixty_five: Vec<_> = (0..65)
        .map(|l| json!({"name": format!("l{l}"), "port": 80, "protocol": "TCP"}))
        .collect();
    assert_eq!(
        with(json!({"listeners": sixty_five})).unwrap().to_string(),
        "Gateway spec.listeners: must have at most 64 items (has 65)"
    );
    // spec.addresses before the listeners' protocols.
    let quic = json!({"name": "quic", "port": 443, "protocol": "example.com/quic"});
    let invalid = with(json!({"listeners": [quic], "addresses": [{"value": "10.0.0.1"}]})).unwrap();
    assert_eq!(invalid, Invalid::UnsupportedAddress);
    assert_eq!(invalid.reason(), "UnsupportedAddress");
    let invalid = with(json!({"listeners": [quic, tcp]}));
    assert_eq!(invalid, None, "one accepted listener is enough");
    let invalid = with(json!({"listeners": [quic]})).unwrap();
    assert_eq!(
        invalid.to_string(),
        r#"no listener is accepted: listener "quic": protocol "example.com/quic" is not supported"#
    );
    assert_eq!(invalid.reason(), "ListenersNotValid");
    let none = with(json!({"listeners": []})).unwrap();
    assert_eq!(
        none.to_string(),
        "no listener is accepted: the Gateway has no listener"
    );
    assert_eq!(Invalid::NoInternalSubnet.reason(), "InvalidParameters");
}
