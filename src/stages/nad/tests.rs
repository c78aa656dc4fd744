//! Unit tests of `nad`.

use super::*;

fn sel(ns: &str, name: &str, interface: &str) -> NetworkSelection {
    NetworkSelection {
        name: name.into(),
        namespace: ns.into(),
        interface: interface.into(),
    }
}

#[test]
fn json_list_and_shorthand_read_the_same() {
    let json =
        r#"[{"name":"a","namespace":"x","interface":"eth1"},{"name":"b","interface":"eth2"}]"#;
    let short = "x/a@eth1,b@eth2";
    let want = vec![sel("x", "a", "eth1"), sel("d", "b", "eth2")];
    assert_eq!(parse_annotation(json, "d"), want);
    assert_eq!(parse_annotation(short, "d"), want);
}

#[test]
fn malformed_items_are_skipped() {
    assert_eq!(
        parse_annotation("a@eth1, /@x, , x/y/z@e, ok", "d"),
        vec![sel("d", "a", "eth1"), sel("d", "ok", "")]
    );
    assert_eq!(
        parse_annotation(r#"[{"namespace":"x"}, 3, {"name":"n"}]"#, "d"),
        vec![sel("d", "n", "")]
    );
    assert!(parse_annotation("[not json", "d").is_empty());
    assert!(parse_annotation("", "d").is_empty());
}

#[test]
fn merge_keeps_template_first_and_drops_repeats() {
    let template = vec![sel("d", "t", "net0"), sel("d", "c", "net1")];
    let conf = vec![sel("d", "c", "net1"), sel("d", "e", "net2")];
    assert_eq!(
        merge(&template, &conf),
        vec![
            sel("d", "t", "net0"),
            sel("d", "c", "net1"),
            sel("d", "e", "net2")
        ]
    );
}

#[test]
fn same_set_ignores_order_and_form() {
    let list = vec![sel("d", "a", "eth1"), sel("x", "b", "eth2")];
    assert!(same_set("x/b@eth2, a@eth1", "d", &list));
    assert!(!same_set("a@eth1", "d", &list));
    assert!(!same_set("a@eth1,x/b@eth3", "d", &list));
    let text = to_annotation(&list);
    assert_eq!(parse_annotation(&text, "zzz"), list);
}

/// The shorthand form, with and without a namespace.
#[test]
fn example_parse_annotation() {
    use crate::nad::parse_annotation;
    let list = parse_annotation("ns1/a@eth1, b@eth2", "gw-ns");
    assert_eq!(list[0].namespace, "ns1");
    assert_eq!(list[1].namespace, "gw-ns");
    assert_eq!(list[1].interface, "eth2");
}

/// The JSON form, fields in Multus's order.
#[test]
fn example_to_annotation() {
    use crate::nad::{NetworkSelection, to_annotation};
    let s = NetworkSelection {
        name: "a".into(),
        namespace: "ns".into(),
        interface: "eth1".into(),
    };
    assert_eq!(
        to_annotation(&[s]),
        r#"[{"name":"a","namespace":"ns","interface":"eth1"}]"#
    );
}
