//! The overlap check against the pairwise reference it replaced.

use super::*;
use proptest::prelude::*;

/// The pairwise check: each subnet against every earlier one, first match named.
fn pairwise(subnets: &[InternalSubnet]) -> Result<(bool, bool), Invalid> {
    let mut seen: Vec<Cidr> = Vec::new();
    for subnet in subnets {
        let cidr: Cidr = subnet.cidr.parse()?;
        if cidr.is_default_route() {
            return Err(Invalid::DefaultRoute {
                cidr: subnet.cidr.clone(),
            });
        }
        if cidr.is_ipv6_link_local() {
            return Err(Invalid::Ipv6LinkLocal {
                cidr: subnet.cidr.clone(),
            });
        }
        let network = cidr.network();
        if let Some(earlier) = seen.iter().find(|e| e.overlaps(&network)) {
            return Err(Invalid::OverlappingSubnets {
                earlier: *earlier,
                later: network,
            });
        }
        seen.push(network);
    }
    Ok((
        seen.iter().any(Cidr::is_ipv4),
        seen.iter().any(Cidr::is_ipv6),
    ))
}

/// Small address spaces, so that overlaps (nested, equal, wider later) are common.
fn cidr() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..4, 0u8..4, 1u8..=32).prop_map(|(a, b, p)| format!("10.{a}.{b}.0/{p}")),
        (0u16..4, 0u16..4, 1u8..=128).prop_map(|(a, b, p)| format!("fd00:{a}:{b}::/{p}")),
    ]
}

fn subnets(list: Vec<String>) -> Vec<InternalSubnet> {
    list.into_iter()
        .map(|cidr| InternalSubnet {
            attachment_type: NAD.to_owned(),
            cidr,
        })
        .collect()
}

proptest! {
    #[test]
    fn same_verdict_as_pairwise(list in proptest::collection::vec(cidr(), 1..40)) {
        let list = subnets(list);
        prop_assert_eq!(check_subnets(&list), pairwise(&list));
    }
}

#[test]
fn the_earliest_earlier_subnet_is_named() {
    // 10.1.0.0/16 and 10.2.0.0/16 are disjoint; 10.0.0.0/8 holds both: the first named.
    let list = subnets(vec![
        "10.2.0.0/16".into(),
        "10.1.0.0/16".into(),
        "10.0.0.0/8".into(),
    ]);
    assert_eq!(
        check_subnets(&list).unwrap_err().to_string(),
        "overlapping internalSubnet CIDRs: 10.2.0.0/16 and 10.0.0.0/8"
    );
}

/// 200,000 disjoint subnets then one overlapping the first: about 2·10¹⁰ comparisons
/// pairwise (minutes), well under a second here even unoptimized.
#[test]
fn a_large_list_is_checked_without_comparing_every_pair() {
    let mut list: Vec<String> = (0u32..65_536)
        .map(|i| format!("10.{}.{}.0/24", i >> 8, i & 0xff))
        .collect();
    list.extend((0u32..134_464).map(|i| format!("fd00::{:x}:{:x}:0/112", i >> 16, i & 0xffff)));
    list.push("10.0.0.0/8".into());
    let list = subnets(list);
    assert_eq!(
        check_subnets(&list).unwrap_err().to_string(),
        "overlapping internalSubnet CIDRs: 10.0.0.0/24 and 10.0.0.0/8"
    );
}
