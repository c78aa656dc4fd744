//! Semantic drift between the desired and the observed Deployment (SPEC §5).

use crate::wire::{Deployment, GatewayConfiguration};

/// Which owned values are enforced on update, and so compared exactly.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Enforcement {
    /// `horizontalScaling.enforceReplicas`.
    pub replicas: bool,
    /// Names of the containers whose resources are enforced.
    pub resources: Vec<String>,
}

impl Enforcement {
    /// What a GatewayConfiguration enforces.
    pub fn of(configuration: &GatewayConfiguration) -> Self {
        let _ = configuration;
        todo!()
    }
}

/// The drifted field paths (e.g. `spec.template.spec.containers[router].env[POD_UID]`);
/// empty when the observed Deployment is as desired.
pub fn drift(
    desired: &Deployment,
    observed: &Deployment,
    enforcement: &Enforcement,
) -> Vec<String> {
    let _ = (desired, observed, enforcement);
    todo!()
}
