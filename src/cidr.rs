//! IP networks (`10.0.0.0/8`, `fd00::/64`) for validation and addresses.

use std::net::IpAddr;

/// A CIDR: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address as written (host bits may be set).
    pub addr: IpAddr,
    /// The prefix length.
    pub prefix: u8,
}

/// Why a CIDR string is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR {0:?}")]
pub struct CidrError(pub String);

impl std::str::FromStr for Cidr {
    type Err = CidrError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let _ = s;
        todo!()
    }
}

impl Cidr {
    /// The masked network, e.g. `10.1.0.0/16` for `10.1.2.3/16`.
    pub fn network(&self) -> Cidr {
        todo!()
    }
    /// True when the two networks share an address.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        let _ = other;
        todo!()
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}
