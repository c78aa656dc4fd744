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
