//! IP networks (`10.0.0.0/8`, `fd00::/64`) for validation and addresses.
//!
//! Parsing is strict, like Go's `netip.ParsePrefix` (which Kubernetes' own CIDR validation
//! follows): `ADDRESS/PREFIX` with no surrounding or inner whitespace, an address that
//! [`std::net::IpAddr`] accepts (dotted-quad IPv4 without leading zeros, or IPv6 without a
//! zone), and a prefix of plain decimal digits without sign or leading zero, at most 32 for
//! IPv4 and 128 for IPv6. Host bits may be set (`10.1.2.3/8` is read); [`Cidr::network`]
//! masks them. The family follows the text: `::ffff:10.0.0.0/104` is IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A CIDR: an address and a prefix length.
///
/// The fields are public; a value built by hand with a prefix longer than its family allows
/// is treated as a host route (the prefix is clamped to 32 or 128) by every method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address as written (host bits may be set).
    pub addr: IpAddr,
    /// The prefix length.
    pub prefix: u8,
}

/// Why a CIDR string is malformed; `Display` is `invalid CIDR "TEXT"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR {0:?}")]
pub struct CidrError(pub String);

impl std::str::FromStr for Cidr {
    type Err = CidrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || CidrError(s.to_owned());
        let (addr, prefix) = s.split_once('/').ok_or_else(err)?;
        let addr: IpAddr = addr.parse().map_err(|_| err())?;
        let prefix = parse_prefix(prefix).ok_or_else(err)?;
        if prefix > max_prefix(&addr) {
            return Err(err());
        }
        Ok(Cidr { addr, prefix })
    }
}

/// Plain decimal digits, no sign, no leading zero, at most three digits (so no overflow).
fn parse_prefix(text: &str) -> Option<u8> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > 3 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes.first() == Some(&b'0') {
        return None;
    }
    text.parse::<u8>().ok()
}

fn max_prefix(addr: &IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// The top `prefix` bits set, of a `width`-bit integer held in a u128.
fn mask(prefix: u8, width: u32) -> u128 {
    let prefix = u32::from(prefix).min(width);
    if prefix == 0 {
        return 0;
    }
    let all = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    // A shift by 128 (a /128) clears everything: checked_shr gives None there.
    all & !all.checked_shr(prefix).unwrap_or(0)
}

/// The fe80::/10 block.
const LINK_LOCAL: Cidr = Cidr {
    addr: IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0)),
    prefix: 10,
};

impl Cidr {
    /// The prefix length, clamped to the family's maximum.
    fn bits(&self) -> u8 {
        self.prefix.min(max_prefix(&self.addr))
    }

    /// The masked network, e.g. `10.1.0.0/16` for `10.1.2.3/16`.
    pub fn network(&self) -> Cidr {
        let prefix = self.bits();
        let addr = match self.addr {
            IpAddr::V4(a) => {
                let m = mask(prefix, 32);
                let masked = u128::from(u32::from(a)) & m;
                // masked fits in 32 bits: it is a 32-bit value ANDed with a mask.
                IpAddr::V4(Ipv4Addr::from(u32::try_from(masked).unwrap_or(0)))
            }
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask(prefix, 128))),
        };
        Cidr { addr, prefix }
    }

    /// True when the two networks share an address: same family, and one contains the
    /// other's network.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        let shorter = self.bits().min(other.bits());
        match (self.addr, other.addr) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                let m = mask(shorter, 32);
                u128::from(u32::from(a)) & m == u128::from(u32::from(b)) & m
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                let m = mask(shorter, 128);
                u128::from(a) & m == u128::from(b) & m
            }
            _ => false,
        }
    }

    /// True for an IPv4 network.
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }

    /// True for an IPv6 network.
    pub fn is_ipv6(&self) -> bool {
        self.addr.is_ipv6()
    }

    /// True for a default route: prefix 0 (`0.0.0.0/0`, `::/0`, or any address `/0`, whose
    /// network is the default route).
    pub fn is_default_route(&self) -> bool {
        self.prefix == 0
    }

    /// True when the network holds IPv6 link-local addresses: it overlaps `fe80::/10`.
    ///
    /// That is every network within `fe80::/10` (`fe80::/64`, `febf::1/128`), and also the
    /// rare wider ones that cover part of it (`fe80::/9`, `fe00::/7`), since those hand out
    /// link-local addresses too. IPv4 (including `169.254.0.0/16`) is never IPv6 link-local.
    pub fn is_ipv6_link_local(&self) -> bool {
        self.is_ipv6() && self.overlaps(&LINK_LOCAL)
    }
}

/// Networks known to be pairwise disjoint, for an overlap check in O(log n) per network
/// instead of a comparison with every earlier one.
///
/// Two networks overlap exactly when one contains the other, so each network is an address
/// range and, the ranges held being disjoint, a new range can only meet the one that starts
/// at or before it (when that one reaches it) and those that start inside it.
#[derive(Debug, Default, Clone)]
pub(crate) struct DisjointNetworks {
    /// By family (IPv4, IPv6), then by first address: (last address, position, network).
    ranges: [std::collections::BTreeMap<u128, (u128, usize, Cidr)>; 2],
}

impl DisjointNetworks {
    /// The family slot and the first and last address of a network.
    fn range(network: &Cidr) -> (usize, u128, u128) {
        let (family, width, bits) = match network.addr {
            IpAddr::V4(a) => (0, 32, u128::from(u32::from(a))),
            IpAddr::V6(a) => (1, 128, u128::from(a)),
        };
        let m = mask(network.bits(), width);
        let all = if width >= 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        let first = bits & m;
        (family, first, first | (all & !m))
    }

    /// Of the networks held that overlap `network`, the one inserted at the lowest position.
    pub(crate) fn first_overlap(&self, network: &Cidr) -> Option<(usize, Cidr)> {
        let (family, first, last) = Self::range(network);
        let ranges = self.ranges.get(family)?;
        // The one starting at or before `first` overlaps when it reaches `first`;
        // every one starting within [first, last] overlaps.
        let before = ranges
            .range(..first)
            .next_back()
            .filter(|(_, (end, _, _))| *end >= first);
        before
            .into_iter()
            .chain(ranges.range(first..=last))
            .map(|(_, (_, position, held))| (*position, *held))
            .min_by_key(|(position, _)| *position)
    }

    /// Holds `network`, found at `position`. The caller has checked it overlaps none held.
    pub(crate) fn insert(&mut self, position: usize, network: Cidr) {
        let (family, first, last) = Self::range(&network);
        if let Some(ranges) = self.ranges.get_mut(family) {
            ranges.insert(first, (last, position, network));
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

#[cfg(test)]
mod tests;
