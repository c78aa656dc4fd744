//! Unit tests of `lookup::deployment`: the LB Deployment's name and label, and the Gateway
//! of a Deployment.

use serde_json::{Value, json};

use super::*;

fn deployment(refs: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "sllbr-x", "namespace": "red", "ownerReferences": refs}
    }))
    .unwrap()
}

#[test]
fn the_gateway_of_a_deployment_is_its_controller_reference() {
    let gateway_ref = |controller: bool| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "name": "gw", "uid": "u-1", "controller": controller})
    };
    let owner = OwnerGateway {
        namespace: Some("red"),
        name: "gw",
        uid: "u-1",
    };
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(true)]))),
        Some(owner)
    );
    // Another version of the group is the same Gateway.
    let mut beta = gateway_ref(true);
    beta["apiVersion"] = json!("gateway.networking.k8s.io/v1beta1");
    assert_eq!(deployment_gateway(&deployment(json!([beta]))), Some(owner));
    // Not the controller; another kind or group as the controller; no references.
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(false)]))),
        None
    );
    let replica_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gw",
        "uid": "u-2", "controller": true});
    assert_eq!(
        deployment_gateway(&deployment(json!([gateway_ref(false), replica_set]))),
        None
    );
    let other_group = json!({"apiVersion": "example.com/v1", "kind": "Gateway",
        "name": "gw", "uid": "u-3", "controller": true});
    assert_eq!(deployment_gateway(&deployment(json!([other_group]))), None);
    assert_eq!(deployment_gateway(&deployment(json!([]))), None);
    // Never by its name: a Deployment named like an LB Deployment, with no controller.
    assert_eq!(deployment_gateway(&deployment(Value::Null)), None);
}

#[test]
fn the_gateway_name_label_key_is_of_the_gateway_api_group() {
    assert_eq!(
        GATEWAY_NAME_LABEL.split_once('/').map(|(group, _)| group),
        Some(GATEWAY_API_GROUP)
    );
}

#[test]
fn long_names_are_shortened_as_the_contract_says() {
    let settings = Settings::default();
    // 57 characters: the longest that keeps the plain form with the default prefix.
    let fits = "g".repeat(57);
    assert_eq!(deployment_name(&settings, &fits), format!("sllbr-{fits}"));
    // 58: shortened to 48 characters of the name, `-` and the hash.
    let long = format!("{}-x{}", "g".repeat(47), "y".repeat(9));
    assert_eq!(long.len(), 58);
    let hash = name_hash(&long);
    // The 48th character is `-`: trimmed.
    assert_eq!(
        deployment_name(&settings, &long),
        format!("sllbr-{}-{hash}", "g".repeat(47))
    );
    // At 253 characters, the name is 63 long; the label keeps 54 characters.
    let longest = format!("{}.{}", "a".repeat(53), "b".repeat(199));
    assert_eq!(longest.len(), 253);
    let hash = name_hash(&longest);
    let name = deployment_name(&settings, &longest);
    assert_eq!(name, format!("sllbr-{}-{hash}", "a".repeat(48)));
    assert_eq!(name.len(), 63);
    assert_eq!(
        gateway_name_label(&longest),
        format!("{}-{hash}", "a".repeat(53))
    );
    // A label value of 63 stays; 64 is shortened.
    assert_eq!(gateway_name_label(&"c".repeat(63)), "c".repeat(63));
    let over = format!("{}_{}", "c".repeat(53), "d".repeat(10));
    assert_eq!(
        gateway_name_label(&over),
        format!("{}-{}", "c".repeat(53), name_hash(&over))
    );
    // The longest prefix the settings allow keeps one character of the name.
    let widest = Settings {
        deployment_prefix: "p".repeat(53),
        ..Settings::default()
    };
    let name = deployment_name(&widest, &"z".repeat(20));
    assert_eq!(
        name,
        format!("{}z-{}", "p".repeat(53), name_hash(&"z".repeat(20)))
    );
    // An empty prefix.
    let bare = Settings {
        deployment_prefix: String::new(),
        ..Settings::default()
    };
    assert_eq!(deployment_name(&bare, &"q".repeat(63)), "q".repeat(63));
    assert_eq!(
        deployment_name(&bare, &"q".repeat(64)),
        format!("{}-{}", "q".repeat(54), name_hash(&"q".repeat(64)))
    );
}

#[test]
fn fnv1a_32_known_vectors() {
    // The published FNV-1a 32-bit test vectors.
    assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
    assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
    assert_eq!(fnv1a_32(b"foobar"), 0xbf9c_f968);
    assert_eq!(name_hash(""), "811c9dc5");
    assert_eq!(name_hash("a"), "e40c292c");
    // Eight digits, leading zeros kept.
    assert!(
        (0..2000)
            .map(|i| name_hash(&i.to_string()))
            .all(|h| h.len() == 8)
    );
}

#[test]
fn cut_trimmed_cuts_by_characters_and_trims_the_end() {
    assert_eq!(cut_trimmed("abc-.def", 5, &['-', '.']), "abc");
    assert_eq!(cut_trimmed("abc", 10, &['-']), "abc");
    assert_eq!(cut_trimmed("ééé", 2, &[]), "éé");
    assert_eq!(cut_trimmed("a_-b", 3, &['-', '_']), "a");
    assert_eq!(cut_trimmed("---", 3, &['-']), "");
}
