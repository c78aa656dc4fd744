//! Unit tests of `cidr`.

use super::*;

fn c(s: &str) -> Cidr {
    s.parse().unwrap()
}

#[test]
fn parses_ipv4_and_ipv6() {
    let v4 = c("10.1.2.3/16");
    assert_eq!(v4.addr, IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)));
    assert_eq!(v4.prefix, 16);
    assert!(v4.is_ipv4() && !v4.is_ipv6());
    let v6 = c("fd00:1::5/64");
    assert_eq!(v6.addr, "fd00:1::5".parse::<IpAddr>().unwrap());
    assert_eq!(v6.prefix, 64);
    assert!(v6.is_ipv6() && !v6.is_ipv4());
    assert_eq!(c("0.0.0.0/0").prefix, 0);
    assert_eq!(c("1.2.3.4/32").prefix, 32);
    assert_eq!(c("::/0").prefix, 0);
    assert_eq!(c("::1/128").prefix, 128);
    assert!(c("::ffff:10.0.0.0/104").is_ipv6());
}

#[test]
fn rejects_malformed_text_without_panicking() {
    let long = "9".repeat(10_000);
    let huge = format!("10.0.0.0/{long}");
    let nasty = [
        "",
        "/",
        "/8",
        "10.0.0.0",
        "10.0.0.0/",
        "10.0.0.0/08",
        "10.0.0.0/08x",
        "10.0.0.0/8x",
        "10.0.0.0/+8",
        "10.0.0.0/-1",
        "10.0.0.0/33",
        "10.0.0.0/256",
        "10.0.0.0/4294967296",
        "10.0.0.0/18446744073709551617",
        huge.as_str(),
        "10.0.0.0/8/8",
        " 10.0.0.0/8",
        "10.0.0.0/8 ",
        "10.0.0.0 /8",
        "10.0.0.0/ 8",
        "10.0.0.0/8\n",
        "\t",
        "010.0.0.0/8",
        "10.0.0/8",
        "10.0.0.0.0/8",
        "256.0.0.0/8",
        "::/129",
        "::/1280",
        "fe80::1%eth0/64",
        "[::1]/128",
        ":::/64",
        "fd00::g/64",
        "10.0.0.0/８",
        "١٠.0.0.0/8",
        "10.0.0.0/٨",
        "é/é",
        "\0/\0",
    ];
    for text in nasty {
        let got = text.parse::<Cidr>();
        assert_eq!(got, Err(CidrError(text.to_owned())), "{text:?}");
    }
}

#[test]
fn error_message_quotes_the_text() {
    let e = "10.0.0.0/".parse::<Cidr>().unwrap_err();
    assert_eq!(e.to_string(), r#"invalid CIDR "10.0.0.0/""#);
    let e = "a\"b".parse::<Cidr>().unwrap_err();
    assert_eq!(e.to_string(), r#"invalid CIDR "a\"b""#);
}

#[test]
fn network_masks_host_bits() {
    assert_eq!(c("10.1.2.3/16").network(), c("10.1.0.0/16"));
    assert_eq!(c("10.1.2.3/0").network(), c("0.0.0.0/0"));
    assert_eq!(c("10.1.2.3/32").network(), c("10.1.2.3/32"));
    assert_eq!(c("10.1.2.255/25").network(), c("10.1.2.128/25"));
    assert_eq!(c("fd00:1:2:3::9/48").network(), c("fd00:1:2::/48"));
    assert_eq!(c("ffff::1/0").network(), c("::/0"));
    assert_eq!(c("::1/128").network(), c("::1/128"));
    assert_eq!(c("fe80::ffff/10").network(), c("fe80::/10"));
}

#[test]
fn out_of_range_prefix_built_by_hand_is_a_host_route() {
    let v4 = Cidr {
        addr: IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)),
        prefix: 200,
    };
    assert_eq!(v4.network(), c("10.1.2.3/32"));
    assert!(v4.overlaps(&c("10.0.0.0/8")));
    assert!(!v4.overlaps(&c("10.1.2.4/32")));
    let v6 = Cidr {
        addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
        prefix: 255,
    };
    assert_eq!(v6.network(), c("::1/128"));
    assert!(!v6.is_ipv6_link_local());
}

#[test]
fn display_prints_address_and_prefix() {
    assert_eq!(c("10.1.2.3/16").to_string(), "10.1.2.3/16");
    assert_eq!(c("10.1.2.3/16").network().to_string(), "10.1.0.0/16");
    assert_eq!(c("FD00:0::1/64").to_string(), "fd00::1/64");
}

#[test]
fn overlaps_when_one_contains_the_other() {
    assert!(c("10.0.0.0/8").overlaps(&c("10.1.0.0/16")));
    assert!(c("10.1.0.0/16").overlaps(&c("10.0.0.0/8")));
    assert!(c("10.1.2.3/16").overlaps(&c("10.1.200.0/24")));
    assert!(c("10.0.0.0/8").overlaps(&c("10.0.0.0/8")));
    assert!(!c("10.0.0.0/16").overlaps(&c("10.1.0.0/16")));
    assert!(!c("192.168.0.0/24").overlaps(&c("192.168.1.0/24")));
    assert!(c("fd00::/8").overlaps(&c("fd00:1::/64")));
    assert!(!c("fd00:1::/64").overlaps(&c("fd00:2::/64")));
    // Different families never overlap, even when the bits agree.
    assert!(!c("0.0.0.0/0").overlaps(&c("::/0")));
    assert!(!c("10.0.0.0/8").overlaps(&c("::ffff:10.0.0.0/104")));
}

#[test]
fn default_route_is_prefix_zero() {
    assert!(c("0.0.0.0/0").is_default_route());
    assert!(c("::/0").is_default_route());
    assert!(c("10.0.0.0/0").is_default_route());
    assert!(!c("0.0.0.0/1").is_default_route());
    assert!(!c("::/1").is_default_route());
    assert!(!c("10.0.0.0/8").is_default_route());
}

#[test]
fn ipv6_link_local_is_fe80_slash_10() {
    assert!(c("fe80::/10").is_ipv6_link_local());
    assert!(c("fe80::/64").is_ipv6_link_local());
    assert!(c("fe80::1/128").is_ipv6_link_local());
    assert!(c("febf:ffff::/32").is_ipv6_link_local());
    assert!(c("fe80::/9").is_ipv6_link_local());
    assert!(c("fe00::/7").is_ipv6_link_local());
    assert!(!c("fec0::/10").is_ipv6_link_local());
    assert!(!c("fe7f::/16").is_ipv6_link_local());
    assert!(!c("fd00::/8").is_ipv6_link_local());
    assert!(!c("::1/128").is_ipv6_link_local());
    assert!(!c("169.254.0.0/16").is_ipv6_link_local());
    assert!(!c("254.128.0.0/10").is_ipv6_link_local());
}

#[test]
fn host_bits_are_masked_and_overlaps_and_errors_are_read() {
    let c: Cidr = "10.1.2.3/16".parse().unwrap();
    assert_eq!(c.network().to_string(), "10.1.0.0/16");
    assert!(c.overlaps(&"10.0.0.0/8".parse().unwrap()));
    assert_eq!(
        "10.0.0.0/33".parse::<Cidr>().unwrap_err().to_string(),
        r#"invalid CIDR "10.0.0.0/33""#
    );
}
