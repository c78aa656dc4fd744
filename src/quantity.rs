//! Kubernetes resource quantities (`500m`, `1Gi`, `1e3`), compared by value.

/// A parsed quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {}

/// Why a quantity string is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {0:?}")]
pub struct QuantityError(pub String);

impl std::str::FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let _ = s;
        todo!()
    }
}

impl Quantity {
    /// The canonical form the API server writes (`0.5` → `500m`, `1024Mi` → `1Gi`).
    pub fn canonical(&self) -> String {
        todo!()
    }
}
