//! Unit tests of `names`.

use super::*;

#[test]
fn keys() {
    for ok in [
        "a",
        "app",
        "example.com/owner",
        "a.b/C_d-1",
        &"x".repeat(63),
    ] {
        assert_eq!(key_error(ok), None, "{ok}");
    }
    for bad in [
        "",
        "/a",
        "example.com/",
        "Example.com/a",
        "a/-b",
        "a b",
        &"x".repeat(64),
    ] {
        assert!(key_error(bad).is_some(), "{bad}");
    }
}

#[test]
fn label_values() {
    for ok in ["", "a", "A_b.c-1", &"x".repeat(63)] {
        assert_eq!(label_value_error(ok), None, "{ok}");
    }
    for bad in ["-a", "a-", "a b", "é", &"x".repeat(64)] {
        assert!(label_value_error(bad).is_some(), "{bad}");
    }
}

#[test]
fn subdomains() {
    for ok in ["a", "sllbr-gw", "a.b-c.d1", &"a".repeat(63)] {
        assert_eq!(subdomain_error(ok), None, "{ok}");
    }
    for bad in ["", "A", "a_b", "a..b", ".a", "a-", &"a".repeat(254)] {
        assert!(subdomain_error(bad).is_some(), "{bad}");
    }
}
