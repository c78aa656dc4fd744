//! Unit tests of `validate`.

use super::*;
use serde_json::json;

pub(super) fn gateway() -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "red", "uid": "u1", "generation": 1},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
            "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
    }))
    .unwrap()
}

/// A valid dual-stack configuration with two NADs and vertical scaling.
pub(super) fn configuration() -> GatewayConfiguration {
    serde_json::from_value(json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1",
        "kind": "GatewayConfiguration",
        "metadata": {"name": "conf", "namespace": "red", "generation": 4},
        "spec": {
            "networkAttachments": [
                {"type": "NAD", "nad": {"name": "vlan-100", "namespace": "net", "interface": "ext-vlan"}},
                {"type": "NAD", "description": "internal", "nad": {"name": "internal", "interface": "int"}}
            ],
            "internalSubnets": [
                {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
            ],
            "horizontalScaling": {"replicas": 2, "enforceReplicas": true},
            "verticalScaling": {"containers": [
                {"name": "loadbalancer", "enforceResources": true,
                 "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}, "claims": []}},
                {"name": "router", "resources": {"requests": {"cpu": "100m"}}}
            ]}
        }
    }))
    .unwrap()
}

pub(super) fn template_with(networks: Option<&str>) -> Deployment {
    let mut t = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "lb"},
        "spec": {"template": {
            "metadata": {"labels": {"app": "lb"}},
            "spec": {"containers": [{"name": "loadbalancer"}, {"name": "router"}]}
        }}
    });
    if let Some(n) = networks {
        t["spec"]["template"]["metadata"]["annotations"] = json!({ NETWORKS_ANNOTATION: n });
    }
    serde_json::from_value(t).unwrap()
}

pub(super) fn template() -> Deployment {
    template_with(None)
}

pub(super) fn run(
    gateway: &Gateway,
    configuration: Option<&GatewayConfiguration>,
    template: &Deployment,
) -> Result<Vec<NetworkSelection>, String> {
    validate(&Settings::default(), gateway, configuration, template)
        .map(|v| v.networks)
        .map_err(|e| e.to_string())
}

/// The message for a configuration changed by `edit`.
pub(super) fn message_with(edit: impl FnOnce(&mut GatewayConfiguration)) -> String {
    let mut c = configuration();
    edit(&mut c);
    run(&gateway(), Some(&c), &template()).unwrap_err()
}

pub(super) fn subnets(list: &[(&str, &str)]) -> Vec<InternalSubnet> {
    list.iter()
        .map(|(t, c)| InternalSubnet {
            attachment_type: (*t).into(),
            cidr: (*c).into(),
        })
        .collect()
}

pub(super) fn nad_attachment(name: &str, interface: &str) -> NetworkAttachment {
    serde_json::from_value(json!({"type": "NAD", "nad": {"name": name, "interface": interface}}))
        .unwrap()
}

pub(super) fn sel(namespace: &str, name: &str, interface: &str) -> NetworkSelection {
    NetworkSelection {
        name: name.into(),
        namespace: namespace.into(),
        interface: interface.into(),
    }
}

pub(super) fn template_message(t: serde_json::Value) -> Invalid {
    let t: Deployment = serde_json::from_value(t).unwrap();
    validate(&Settings::default(), &gateway(), Some(&configuration()), &t).unwrap_err()
}

#[test]
fn valid_full_configuration() {
    let c = configuration();
    let t = template_with(Some(
        r#"[{"name":"internal","interface":"int"},{"name":"mgmt","namespace":"ops","interface":"mgmt0"}]"#,
    ));
    let v = validate(&Settings::default(), &gateway(), Some(&c), &t).unwrap();
    assert!(std::ptr::eq(v.configuration, &c));
    assert!(v.ipv4);
    assert!(v.ipv6);
    // The template's "internal" is the configuration's own (same ns/name/interface once
    // its empty namespace is the configuration's): it is listed once, in the
    // configuration's place.
    assert_eq!(
        v.networks,
        vec![
            sel("ops", "mgmt", "mgmt0"),
            sel("net", "vlan-100", "ext-vlan"),
            sel("red", "internal", "int"),
        ]
    );
}

#[test]
fn family_flags_follow_the_subnets() {
    let mut c = configuration();
    c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "192.168.0.0/16")]);
    let v = validate(&Settings::default(), &gateway(), Some(&c), &template()).unwrap();
    assert!(v.ipv4 && !v.ipv6);
    c.spec.internal_subnets = subnets(&[("NAD", "fd00::/64")]);
    let v = validate(&Settings::default(), &gateway(), Some(&c), &template()).unwrap();
    assert!(!v.ipv4 && v.ipv6);
}

#[test]
fn no_networks_anywhere_gives_an_empty_list() {
    let mut c = configuration();
    c.spec.network_attachments.clear();
    assert_eq!(run(&gateway(), Some(&c), &template()), Ok(vec![]));
}

#[test]
fn reference_is_required() {
    let mut gw = gateway();
    gw.spec.infrastructure.as_mut().unwrap().parameters_ref = None;
    let want = "GatewayConfiguration reference is required";
    assert_eq!(
        run(&gw, Some(&configuration()), &template()).unwrap_err(),
        want
    );
    gw.spec.infrastructure = None;
    assert_eq!(
        run(&gw, Some(&configuration()), &template()).unwrap_err(),
        want
    );
}

#[test]
fn unsupported_reference_names_what_was_given_and_expected() {
    let mut gw = gateway();
    let r = gw
        .spec
        .infrastructure
        .as_mut()
        .unwrap()
        .parameters_ref
        .as_mut()
        .unwrap();
    r.group = "example.com".into();
    r.kind = "ConfigMap".into();
    assert_eq!(
        run(&gw, Some(&configuration()), &template()).unwrap_err(),
        r#"unsupported parametersRef: group="example.com" kind="ConfigMap" (expected meridio-2.nordix.org/GatewayConfiguration)"#
    );
    // Only the kind wrong (and case matters).
    let mut gw = gateway();
    let r = gw.spec.infrastructure.as_mut().unwrap();
    r.parameters_ref.as_mut().unwrap().kind = "gatewayconfiguration".into();
    assert_eq!(
        run(&gw, Some(&configuration()), &template()).unwrap_err(),
        r#"unsupported parametersRef: group="meridio-2.nordix.org" kind="gatewayconfiguration" (expected meridio-2.nordix.org/GatewayConfiguration)"#
    );
}

#[test]
fn expected_group_and_kind_come_from_the_settings() {
    let settings = Settings {
        parameters_group: "acme.io".into(),
        parameters_kind: "LbConfig".into(),
        ..Settings::default()
    };
    let err = validate(&settings, &gateway(), Some(&configuration()), &template())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        r#"unsupported parametersRef: group="meridio-2.nordix.org" kind="GatewayConfiguration" (expected acme.io/LbConfig)"#
    );
    let mut gw = gateway();
    let r = gw.spec.infrastructure.as_mut().unwrap();
    let r = r.parameters_ref.as_mut().unwrap();
    r.group = "acme.io".into();
    r.kind = "LbConfig".into();
    assert!(validate(&settings, &gw, Some(&configuration()), &template()).is_ok());
}

#[test]
fn configuration_not_found() {
    let want = r#"GatewayConfiguration "conf" not found"#;
    assert_eq!(run(&gateway(), None, &template()).unwrap_err(), want);
    let mut other = configuration();
    other.metadata.name = Some("other".into());
    assert_eq!(
        run(&gateway(), Some(&other), &template()).unwrap_err(),
        want
    );
    let mut elsewhere = configuration();
    elsewhere.metadata.namespace = Some("blue".into());
    assert_eq!(
        run(&gateway(), Some(&elsewhere), &template()).unwrap_err(),
        want
    );
}

#[test]
fn configuration_without_name_or_namespace_is_taken_as_the_referenced_one() {
    let mut c = configuration();
    c.metadata.name = None;
    c.metadata.namespace = None;
    // The empty namespace of the second NAD falls back to the Gateway's.
    assert_eq!(
        run(&gateway(), Some(&c), &template()),
        Ok(vec![
            sel("net", "vlan-100", "ext-vlan"),
            sel("red", "internal", "int")
        ])
    );
    let mut gw = gateway();
    gw.metadata.namespace = None;
    let networks = run(&gw, Some(&c), &template()).unwrap();
    assert_eq!(networks[1].namespace, "default");
}

#[test]
fn at_least_one_internal_subnet() {
    assert_eq!(
        message_with(|c| c.spec.internal_subnets.clear()),
        "GatewayConfiguration must have at least one internalSubnet"
    );
}

#[test]
fn subnet_attachment_type_must_be_nad() {
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("VLAN", "10.0.0.0/8")])),
        r#"subnet 10.0.0.0/8: only NAD attachment type is supported (got "VLAN")"#
    );
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("nad", "10.0.0.0/8")])),
        r#"subnet 10.0.0.0/8: only NAD attachment type is supported (got "nad")"#
    );
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("", "fd00::/64")])),
        r#"subnet fd00::/64: only NAD attachment type is supported (got "")"#
    );
}

#[test]
fn invalid_cidr() {
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/")])),
        r#"invalid CIDR "10.0.0.0/""#
    );
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "::/129")])),
        r#"invalid CIDR "::/129""#
    );
}

#[test]
fn default_routes_are_refused() {
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "0.0.0.0/0")])),
        r#"CIDR "0.0.0.0/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
    );
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "::/0")])),
        r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
    );
    // Host bits do not save a /0; the message quotes the text as written.
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/0")])),
        r#"CIDR "10.0.0.0/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#
    );
}

#[test]
fn ipv6_link_local_is_refused() {
    assert_eq!(
        message_with(|c| c.spec.internal_subnets = subnets(&[("NAD", "fe80::/64")])),
        r#"CIDR "fe80::/64": IPv6 link-local addresses (fe80::/10) are not allowed"#
    );
    assert_eq!(
        message_with(
            |c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "fe80::1/10")])
        ),
        r#"CIDR "fe80::1/10": IPv6 link-local addresses (fe80::/10) are not allowed"#
    );
    // IPv4 link-local is the usual internal subnet: allowed.
    let mut c = configuration();
    c.spec.internal_subnets = subnets(&[("NAD", "169.254.0.0/16")]);
    assert!(run(&gateway(), Some(&c), &template()).is_ok());
}

#[test]
fn overlapping_subnets_name_both_masked_networks() {
    assert_eq!(
        message_with(
            |c| c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8"), ("NAD", "10.1.0.0/16")])
        ),
        "overlapping internalSubnet CIDRs: 10.0.0.0/8 and 10.1.0.0/16"
    );
    // Earlier first, whichever is wider; host bits masked. (Four subnets are over the CRD's
    // bound, which `validate` checks first: the subnet check itself is asked.)
    assert_eq!(
        check_subnets(&subnets(&[
            ("NAD", "fd00::/64"),
            ("NAD", "10.1.2.3/16"),
            ("NAD", "10.200.0.0/16"),
            ("NAD", "10.1.9.9/8"),
        ]))
        .unwrap_err()
        .to_string(),
        "overlapping internalSubnet CIDRs: 10.1.0.0/16 and 10.0.0.0/8"
    );
    assert_eq!(
        message_with(|c| c.spec.internal_subnets =
            subnets(&[("NAD", "fd00:1::5/64"), ("NAD", "fd00:1::/64")])),
        "overlapping internalSubnet CIDRs: fd00:1::/64 and fd00:1::/64"
    );
    // Adjacent networks and different families do not overlap.
    let list = subnets(&[
        ("NAD", "10.0.0.0/16"),
        ("NAD", "10.1.0.0/16"),
        ("NAD", "::ffff:10.0.0.0/104"),
    ]);
    assert!(check_subnets(&list).is_ok());
    let mut c = configuration();
    c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/16"), ("NAD", "10.1.0.0/16")]);
    assert!(run(&gateway(), Some(&c), &template()).is_ok());
}

#[test]
fn attachment_type_must_be_nad() {
    assert_eq!(
        message_with(|c| c.spec.network_attachments[1].type_ = "SR-IOV".into()),
        r#"networkAttachment 1: only NAD type is supported (got "SR-IOV")"#
    );
    assert_eq!(
        message_with(|c| c.spec.network_attachments[0].type_ = String::new()),
        r#"networkAttachment 0: only NAD type is supported (got "")"#
    );
}

#[test]
fn attachment_needs_a_nad() {
    assert_eq!(
        message_with(|c| c.spec.network_attachments[1].nad = None),
        "networkAttachment 1: NAD configuration is required when type is NAD"
    );
}

#[test]
fn attachment_needs_a_nad_name() {
    assert_eq!(
        message_with(|c| c.spec.network_attachments[0] = nad_attachment("", "eth9")),
        "networkAttachment: NAD name is required"
    );
}

#[test]
fn attachment_needs_an_interface() {
    assert_eq!(
        message_with(|c| c.spec.network_attachments[1] = nad_attachment("x", "")),
        "networkAttachment: interface name is required"
    );
}

#[test]
fn attachment_interfaces_are_unique() {
    assert_eq!(
        message_with(|c| c.spec.network_attachments[1] = nad_attachment("other", "ext-vlan")),
        r#"networkAttachment: duplicate interface name "ext-vlan""#
    );
}

#[test]
fn a_container_named_twice_in_vertical_scaling_is_refused() {
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let again = vs.containers[0].clone();
            vs.containers.push(again);
        }),
        r#"verticalScaling container "loadbalancer": duplicate entry"#
    );
}

#[test]
fn requests_and_limits_must_be_quantities() {
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let r = vs.containers[1].resources.as_mut().unwrap();
            r.insert("limits", tree::Value::from(json!({"memory": "lots"})));
        }),
        r#"verticalScaling container "router": invalid quantity "lots" for limits.memory"#
    );
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let r = vs.containers[0].resources.as_mut().unwrap();
            r.insert("requests", tree::Value::from(json!({"cpu": true})));
        }),
        r#"verticalScaling container "loadbalancer": invalid quantity "true" for requests.cpu"#
    );
    // A JSON number is read as its text, as the API server does.
    let mut c = configuration();
    let vs = c.spec.vertical_scaling.as_mut().unwrap();
    let r = vs.containers[0].resources.as_mut().unwrap();
    r.insert("requests", tree::Value::from(json!({"cpu": 1.5})));
    assert_eq!(check_quantities(vs), Ok(()));
}

#[test]
fn negative_requests_limits_and_replicas_are_refused() {
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let r = vs.containers[1].resources.as_mut().unwrap();
            r.insert("requests", tree::Value::from(json!({"cpu": "-0.5"})));
        }),
        r#"verticalScaling container "router": negative quantity "-0.5" for requests.cpu (must be greater than or equal to 0)"#
    );
    assert_eq!(
        message_with(|c| {
            c.spec.horizontal_scaling = Some(crate::wire::HorizontalScaling {
                replicas: Some(-3),
                enforce_replicas: false,
            });
        }),
        "horizontalScaling.replicas: invalid value -3: must be greater than or equal to 0"
    );
    // The CRD's `type: integer` admits more than a Deployment's int32 holds.
    let replicas = |n: i64| {
        move |c: &mut GatewayConfiguration| {
            c.spec.horizontal_scaling = Some(crate::wire::HorizontalScaling {
                replicas: Some(n),
                enforce_replicas: true,
            });
        }
    };
    assert_eq!(
        message_with(replicas(2_147_483_648)),
        "horizontalScaling.replicas: invalid value 2147483648: must be less than or equal to 2147483647"
    );
    let mut c = configuration();
    replicas(i64::from(i32::MAX))(&mut c);
    assert!(run(&gateway(), Some(&c), &template()).is_ok());
    let zero = |c: &mut GatewayConfiguration| {
        c.spec.horizontal_scaling = Some(crate::wire::HorizontalScaling {
            replicas: Some(0),
            enforce_replicas: true,
        });
    };
    let mut c = configuration();
    zero(&mut c);
    assert!(run(&gateway(), Some(&c), &template()).is_ok());
}

#[test]
fn the_deployment_name_must_be_one_the_api_server_takes() {
    let with_name = |name: &str| {
        let mut g = gateway();
        g.metadata.name = Some(name.into());
        let mut c = configuration();
        c.metadata.name = Some("conf".into());
        run(&g, Some(&c), &template()).err().map(|e| e.to_string())
    };
    // A long name is not a failure (revision 4): it is shortened, up to the Gateway API's
    // 253 characters.
    assert_eq!(with_name(&"g".repeat(57)), None);
    assert_eq!(with_name(&"g".repeat(58)), None);
    assert_eq!(
        with_name(&format!("{}.{}", "g".repeat(126), "h".repeat(126))),
        None
    );
    // The Gateway's own name is checked first, whole.
    let upper = with_name("GW").unwrap();
    assert!(
        upper.starts_with(r#"Gateway name "GW": a lowercase RFC 1123 subdomain"#),
        "{upper}"
    );
    assert_eq!(
        with_name(&"g".repeat(254)).unwrap(),
        format!(
            "Gateway name {:?}: must be no more than 253 characters",
            "g".repeat(254)
        )
    );

    // A name the API server refuses, anywhere in it, fails on the name itself (the LB
    // Deployment name and the gateway-name label derived from a valid one are valid).
    assert!(
        with_name("-gw")
            .unwrap()
            .starts_with(r#"Gateway name "-gw": a lowercase RFC 1123 subdomain"#)
    );
    assert!(
        with_name(&format!("{}_UPPER", "a".repeat(70)))
            .unwrap()
            .starts_with("Gateway name \"aaaa")
    );
}

// ---- the GatewayClass's default parameters and the unreadable configuration --------------

fn class_with(parameters: serde_json::Value) -> GatewayClass {
    serde_json::from_value(json!({
        "metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                 "parametersRef": parameters}
    }))
    .unwrap()
}

fn defaults_in(namespace: &str) -> GatewayConfiguration {
    let mut c = configuration();
    c.metadata.name = Some("defaults".into());
    c.metadata.namespace = Some(namespace.into());
    c
}

/// `gateway()` without its own reference.
fn gateway_without_reference() -> Gateway {
    let mut gw = gateway();
    gw.spec.infrastructure = None;
    gw
}

fn with_snapshot(
    gw: &Gateway,
    class: Option<&GatewayClass>,
    configuration: Option<&GatewayConfiguration>,
    unreadable: Option<UnreadableConfiguration<'_>>,
) -> Result<Vec<NetworkSelection>, String> {
    let template = template();
    let snapshot = Snapshot::new(gw, &template)
        .with_gateway_class(class)
        .with_configuration(configuration)
        .with_unreadable_configuration(unreadable);
    validate_snapshot(&Settings::default(), &snapshot)
        .map(|v| v.networks)
        .map_err(|e| e.to_string())
}

#[test]
fn the_class_reference_is_the_default_in_its_own_namespace() {
    let class = class_with(json!({"group": "meridio-2.nordix.org",
        "kind": "GatewayConfiguration", "name": "defaults", "namespace": "infra"}));
    let gw = gateway_without_reference();
    let found = with_snapshot(&gw, Some(&class), Some(&defaults_in("infra")), None).unwrap();
    // An unnamespaced NAD is the configuration's namespace: the class's, not the Gateway's.
    assert!(
        found.contains(&sel("infra", "internal", "int")),
        "{found:?}"
    );
    // The same name in the Gateway's namespace is another object: not found, named NS/NAME.
    assert_eq!(
        with_snapshot(&gw, Some(&class), Some(&defaults_in("red")), None),
        Err(r#"GatewayConfiguration "infra/defaults" not found"#.into())
    );
    assert_eq!(
        with_snapshot(&gw, Some(&class), None, None),
        Err(r#"GatewayConfiguration "infra/defaults" not found"#.into())
    );
    // The Gateway's own reference wins, whole, in the Gateway's namespace.
    let mut own = configuration();
    own.metadata.namespace = Some("red".into());
    assert!(with_snapshot(&gateway(), Some(&class), Some(&own), None).is_ok());
    assert_eq!(
        with_snapshot(&gateway(), Some(&class), Some(&defaults_in("infra")), None),
        Err(r#"GatewayConfiguration "conf" not found"#.into())
    );
    // Neither names one.
    let bare: GatewayClass = serde_json::from_value(json!({"metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}))
    .unwrap();
    assert_eq!(
        with_snapshot(&gw, Some(&bare), Some(&configuration()), None),
        Err("GatewayConfiguration reference is required".into())
    );
}

#[test]
fn the_class_reference_is_checked_as_the_gateways_and_needs_a_namespace() {
    let gw = gateway_without_reference();
    let foreign = class_with(json!({"group": "", "kind": "ConfigMap", "name": "p",
        "namespace": "infra"}));
    assert_eq!(
        with_snapshot(&gw, Some(&foreign), Some(&defaults_in("infra")), None),
        Err(r#"unsupported parametersRef: group="" kind="ConfigMap" (expected meridio-2.nordix.org/GatewayConfiguration)"#.into())
    );
    let unplaced = class_with(json!({"group": "meridio-2.nordix.org",
        "kind": "GatewayConfiguration", "name": "defaults"}));
    assert_eq!(
        with_snapshot(&gw, Some(&unplaced), Some(&defaults_in("infra")), None),
        Err("parametersRef.namespace is required for a GatewayConfiguration".into())
    );
}

#[test]
fn an_unreadable_configuration_is_reported_with_the_readers_error() {
    let why = r#"spec.horizontalScaling.replicas: invalid type: string "many", expected i64"#;
    let unreadable = |namespace, name| {
        Some(UnreadableConfiguration {
            namespace,
            name,
            why,
        })
    };
    assert_eq!(
        with_snapshot(&gateway(), None, None, unreadable("red", "conf")),
        Err(format!(
            r#"GatewayConfiguration "conf" cannot be read: {why}"#
        ))
    );
    // It is the configuration's state whatever readable copy is also given.
    assert_eq!(
        with_snapshot(
            &gateway(),
            None,
            Some(&configuration()),
            unreadable("red", "conf")
        ),
        Err(format!(
            r#"GatewayConfiguration "conf" cannot be read: {why}"#
        ))
    );
    // Another object's unreadability is not this Gateway's.
    assert!(
        with_snapshot(
            &gateway(),
            None,
            Some(&configuration()),
            unreadable("red", "x")
        )
        .is_ok()
    );
    assert_eq!(
        with_snapshot(&gateway(), None, None, unreadable("blue", "conf")),
        Err(r#"GatewayConfiguration "conf" not found"#.into())
    );
    // A class-provided one is named NS/NAME.
    let class = class_with(json!({"group": "meridio-2.nordix.org",
        "kind": "GatewayConfiguration", "name": "defaults", "namespace": "infra"}));
    assert_eq!(
        with_snapshot(
            &gateway_without_reference(),
            Some(&class),
            None,
            unreadable("infra", "defaults")
        ),
        Err(format!(
            r#"GatewayConfiguration "infra/defaults" cannot be read: {why}"#
        ))
    );
    // The reference comes first.
    let mut gw = gateway();
    gw.spec.infrastructure = None;
    assert_eq!(
        with_snapshot(&gw, None, None, unreadable("red", "conf")),
        Err("GatewayConfiguration reference is required".into())
    );
}

#[test]
fn resource_claims_are_refused() {
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let r = vs.containers[1].resources.as_mut().unwrap();
            r.insert("claims", tree::Value::from(json!([{"name": "gpu"}])));
        }),
        r#"verticalScaling container "router": ResourceClaims are not supported (DRA not implemented)"#
    );
    // Malformed claims are not "no claims".
    assert_eq!(
        message_with(|c| {
            let vs = c.spec.vertical_scaling.as_mut().unwrap();
            let r = vs.containers[0].resources.as_mut().unwrap();
            r.insert("claims", tree::Value::from(json!({"name": "gpu"})));
        }),
        r#"verticalScaling container "loadbalancer": ResourceClaims are not supported (DRA not implemented)"#
    );
    // Null or empty claims, or no resources at all, are fine.
    let mut c = configuration();
    let vs = c.spec.vertical_scaling.as_mut().unwrap();
    vs.containers[1]
        .resources
        .as_mut()
        .unwrap()
        .insert("claims", tree::Value::Null);
    vs.containers[0].resources = None;
    assert!(run(&gateway(), Some(&c), &template()).is_ok());
}

#[test]
fn merged_interfaces_are_unique() {
    // A template NAD the configuration does not override, on a configuration interface.
    let t = template_with(Some("net/other@ext-vlan"));
    assert_eq!(
        run(&gateway(), Some(&configuration()), &t).unwrap_err(),
        r#"duplicate interface name "ext-vlan" in merged network attachments"#
    );
    // Two template NADs on one interface (JSON form).
    let mut c = configuration();
    c.spec.network_attachments.clear();
    let t = template_with(Some(
        r#"[{"name":"a","interface":"net1"},{"name":"b","namespace":"x","interface":"net1"}]"#,
    ));
    assert_eq!(
        run(&gateway(), Some(&c), &t).unwrap_err(),
        r#"duplicate interface name "net1" in merged network attachments"#
    );
}

#[test]
fn merged_namespaces_resolve_to_the_configuration() {
    // "internal@int" in the template is the configuration's NAD once its empty namespace
    // is the configuration's: not a duplicate. In another namespace it would be.
    let t = template_with(Some("internal@int, plain"));
    assert_eq!(
        run(&gateway(), Some(&configuration()), &t),
        Ok(vec![
            sel("red", "plain", ""),
            sel("net", "vlan-100", "ext-vlan"),
            sel("red", "internal", "int"),
        ])
    );
    let t = template_with(Some("blue/internal@int"));
    assert_eq!(
        run(&gateway(), Some(&configuration()), &t).unwrap_err(),
        r#"duplicate interface name "int" in merged network attachments"#
    );
    // Empty interfaces never clash (Multus names them).
    let t = template_with(Some("a, b, c@"));
    assert_eq!(
        run(&gateway(), Some(&configuration()), &t).unwrap().len(),
        5
    );
}

#[test]
fn template_failures() {
    let cases = [
        (json!({}), "spec is missing"),
        (json!({"spec": 3}), "spec is not an object"),
        (json!({"spec": {}}), "spec.template is missing"),
        (
            json!({"spec": {"template": null}}),
            "spec.template is missing",
        ),
        (
            json!({"spec": {"template": []}}),
            "spec.template is not an object",
        ),
        (
            json!({"spec": {"template": {}}}),
            "spec.template.spec is missing",
        ),
        (
            json!({"spec": {"template": {"spec": "x"}}}),
            "spec.template.spec is not an object",
        ),
        (
            json!({"spec": {"template": {"spec": {}}}}),
            "spec.template.spec.containers is missing",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": {"name": "a"}}}}}),
            "spec.template.spec.containers is not a list",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": []}}}}),
            "spec.template.spec.containers is empty",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, "b"]}}}}),
            "spec.template.spec.containers[1] is not an object",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
            "spec.template.spec.containers[0] has no name",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": 7}]}}}}),
            "spec.template.spec.containers[0] has no name",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": ""}]}}}}),
            "spec.template.spec.containers[0] has no name",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}}}),
            r#"spec.template.spec.containers has duplicate name "a""#,
        ),
        (
            json!({"spec": {"replicas": -1, "template": {"spec": {"containers": [{"name": "a"}]}}}}),
            "spec.replicas: invalid value -1: must be an integer greater than or equal to 0",
        ),
        (
            json!({"spec": {"replicas": "2", "template": {"spec": {"containers": [{"name": "a"}]}}}}),
            r#"spec.replicas: invalid value "2": must be an integer greater than or equal to 0"#,
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a",
                "resources": {"limits": {"memory": "-1Gi"}}}]}}}}),
            r#"spec.template.spec.containers[a].resources.limits.memory: negative quantity "-1Gi""#,
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}],
                "initContainers": [{"resources": {"requests": {"cpu": "fast"}}}]}}}}),
            r#"spec.template.spec.initContainers[0].resources.requests.cpu: invalid quantity "fast""#,
        ),
        (
            json!({"metadata": {"labels": {"tier": "-lb"}},
                   "spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}),
            "metadata.labels[tier]: invalid value \"-lb\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            json!({"spec": {"template": {"metadata": {"labels": {"tier": "x".repeat(64)}},
                   "spec": {"containers": [{"name": "a"}]}}}}),
            &format!(
                "spec.template.metadata.labels[tier]: invalid value \"{}\": must be no more than 63 characters",
                "x".repeat(64)
            ),
        ),
    ];
    for (t, why) in cases {
        let err = template_message(t.clone());
        assert_eq!(
            err.to_string(),
            format!("invalid LB deployment template: {why}"),
            "{t}"
        );
        assert!(err.is_template(), "{t}");
    }
}

#[test]
fn only_template_failures_are_template_failures() {
    let others = [
        Invalid::ReferenceRequired,
        Invalid::NoInternalSubnet,
        Invalid::Cidr(CidrError("x".into())),
        Invalid::MergedDuplicateInterface {
            interface: "a".into(),
        },
    ];
    for e in others {
        assert!(!e.is_template(), "{e}");
    }
    assert!(Invalid::Template { why: "w".into() }.is_template());
}

#[test]
fn earlier_failures_win() {
    // Unsupported reference before not found.
    let mut gw = gateway();
    let r = gw.spec.infrastructure.as_mut().unwrap();
    r.parameters_ref.as_mut().unwrap().group = "x".into();
    assert!(
        run(&gw, None, &template())
            .unwrap_err()
            .starts_with("unsupported parametersRef")
    );
    // Not found before an unusable template.
    assert_eq!(
        run(&gateway(), None, &Deployment::default()).unwrap_err(),
        r#"GatewayConfiguration "conf" not found"#
    );
    // Everything wrong in the configuration and the template: subnets first.
    let mut c = configuration();
    c.spec.internal_subnets = subnets(&[("NAD", "0.0.0.0/0")]);
    c.spec.network_attachments[0].type_ = "X".into();
    let vs = c.spec.vertical_scaling.as_mut().unwrap();
    vs.containers[0]
        .resources
        .as_mut()
        .unwrap()
        .insert("claims", tree::Value::from(json!([{"name": "c"}])));
    assert!(
        run(&gateway(), Some(&c), &Deployment::default())
            .unwrap_err()
            .starts_with(r#"CIDR "0.0.0.0/0""#)
    );
    // Then attachments, then claims.
    c.spec.internal_subnets = subnets(&[("NAD", "10.0.0.0/8")]);
    assert!(
        run(&gateway(), Some(&c), &Deployment::default())
            .unwrap_err()
            .starts_with("networkAttachment 0:")
    );
    c.spec.network_attachments[0].type_ = "NAD".into();
    assert!(
        run(&gateway(), Some(&c), &Deployment::default())
            .unwrap_err()
            .starts_with("verticalScaling container")
    );
    // Merged duplicates before the template check (a template whose pod spec is bad but
    // whose annotations are readable).
    let broken: Deployment = serde_json::from_value(json!({"spec": {"template": {
        "metadata": {"annotations": {NETWORKS_ANNOTATION: "x@int"}}
    }}}))
    .unwrap();
    assert_eq!(
        run(&gateway(), Some(&configuration()), &broken).unwrap_err(),
        r#"duplicate interface name "int" in merged network attachments"#
    );
}

#[test]
fn subnets_are_checked_one_by_one_in_list_order() {
    let cases: [(&[(&str, &str)], &str); 5] = [
        // An overlap of the second subnet beats junk in the third.
        (
            &[
                ("NAD", "10.0.0.0/8"),
                ("NAD", "10.1.0.0/16"),
                ("NAD", "junk"),
            ],
            "overlapping internalSubnet CIDRs: 10.0.0.0/8 and 10.1.0.0/16",
        ),
        // Junk in the first beats a default route in the second.
        (
            &[("NAD", "junk"), ("NAD", "0.0.0.0/0")],
            r#"invalid CIDR "junk""#,
        ),
        // Within a subnet: type before parse.
        (
            &[("VLAN", "junk")],
            r#"subnet junk: only NAD attachment type is supported (got "VLAN")"#,
        ),
        // A bad type in the second subnet beats an overlap in the third.
        (
            &[
                ("NAD", "10.0.0.0/8"),
                ("L2", "10.2.0.0/16"),
                ("NAD", "10.3.0.0/16"),
            ],
            r#"subnet 10.2.0.0/16: only NAD attachment type is supported (got "L2")"#,
        ),
        // ::/0 is a default route before it is link-local.
        (
            &[("NAD", "::/0")],
            r#"CIDR "::/0": default route CIDRs (0.0.0.0/0 or ::/0) are not allowed"#,
        ),
    ];
    for (list, want) in cases {
        // A list over the CRD's bound is refused whole by `validate`: its order is the
        // subnet check's own.
        let got = match list.len() <= MAX_INTERNAL_SUBNETS {
            true => message_with(|c| c.spec.internal_subnets = subnets(list)),
            false => check_subnets(&subnets(list)).unwrap_err().to_string(),
        };
        assert_eq!(got, want, "{list:?}");
    }
}

#[test]
fn attachments_are_checked_one_by_one_in_list_order() {
    // The first attachment lacks both name and interface: the name is reported.
    assert_eq!(
        message_with(|c| c.spec.network_attachments[0] = nad_attachment("", "")),
        "networkAttachment: NAD name is required"
    );
    // Attachment 1's type beats attachment 2's missing NAD.
    assert_eq!(
        message_with(|c| {
            c.spec.network_attachments[1].type_ = "X".into();
            c.spec.network_attachments.push(NetworkAttachment {
                type_: "NAD".into(),
                ..NetworkAttachment::default()
            });
        }),
        r#"networkAttachment 1: only NAD type is supported (got "X")"#
    );
    // A duplicate in attachment 1 beats a missing interface in attachment 2.
    assert_eq!(
        message_with(|c| {
            c.spec.network_attachments[1] = nad_attachment("y", "ext-vlan");
            c.spec.network_attachments.push(nad_attachment("z", ""));
        }),
        r#"networkAttachment: duplicate interface name "ext-vlan""#
    );
}

#[test]
fn nasty_strings_never_panic() {
    let long = "9".repeat(5000);
    let nasty: Vec<String> = [
        "",
        " ",
        "\n",
        "\0",
        "/",
        "//",
        "@",
        "@@",
        ",",
        ",,,",
        "[",
        "[]",
        "[{]",
        "{}",
        "\"",
        "\\",
        "10.0.0.0/",
        "/8",
        "10.0.0.0/08x",
        "::/129",
        "10.0.0.0/99999999999999999999999999",
        " 10.0.0.0/8",
        "fe80::1%eth0/64",
        "é",
        "🦀/🦀@🦀",
        "ns/name@if",
        "a/b/c@d@e",
        long.as_str(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([format!("10.0.0.0/{long}"), format!("{long}/{long}")])
    .collect();
    let settings = Settings::default();
    for s in &nasty {
        // As a CIDR: refused with the exact message, whatever the text.
        let mut c = configuration();
        c.spec.internal_subnets = subnets(&[("NAD", s)]);
        let got = validate(&settings, &gateway(), Some(&c), &template());
        assert_eq!(
            got.unwrap_err().to_string(),
            format!("invalid CIDR {s:?}"),
            "{s:?}"
        );
        // As a type: refused, quoting it.
        let mut c = configuration();
        c.spec.internal_subnets[0].attachment_type = s.clone();
        let got = validate(&settings, &gateway(), Some(&c), &template());
        assert!(
            matches!(got, Err(Invalid::SubnetAttachmentType { .. })),
            "{s:?}"
        );
        // As an interface or NAD name: taken as is (non-empty) or refused (empty).
        let mut c = configuration();
        c.spec.network_attachments = vec![nad_attachment(s, s)];
        let got = validate(&settings, &gateway(), Some(&c), &template());
        if s.is_empty() {
            assert_eq!(got.unwrap_err(), Invalid::NadNameRequired);
        } else {
            assert_eq!(got.unwrap().networks, vec![sel("red", s, s)], "{s:?}");
        }
        // As the template's networks annotation: whatever parses, never a panic, and an
        // error only for a merged duplicate.
        let t = template_with(Some(s));
        match validate(&settings, &gateway(), Some(&configuration()), &t) {
            Ok(v) => assert!(v.networks.len() >= 2, "{s:?}"),
            Err(e) => assert!(
                matches!(e, Invalid::MergedDuplicateInterface { .. }),
                "{s:?}: {e}"
            ),
        }
        // As parametersRef fields: unsupported, quoting them.
        let mut gw = gateway();
        let r = gw.spec.infrastructure.as_mut().unwrap();
        let r = r.parameters_ref.as_mut().unwrap();
        r.group = s.clone();
        r.kind = s.clone();
        let got = validate(&settings, &gw, Some(&configuration()), &template())
            .unwrap_err()
            .to_string();
        assert_eq!(
            got,
            format!(
                "unsupported parametersRef: group={s:?} kind={s:?} (expected meridio-2.nordix.org/GatewayConfiguration)"
            )
        );
    }
}
