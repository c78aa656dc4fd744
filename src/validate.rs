//! Validation of the Gateway's parameters (SPEC §3 step 3), first failure wins.

use crate::nad::NetworkSelection;
use crate::settings::Settings;
use crate::wire::{Deployment, Gateway, GatewayConfiguration};

/// A validated GatewayConfiguration, with what rendering needs from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated<'a> {
    /// The GatewayConfiguration.
    pub configuration: &'a GatewayConfiguration,
    /// The merged network selections: the template's not overridden, then the
    /// GatewayConfiguration's in spec order; namespaces resolved.
    pub networks: Vec<NetworkSelection>,
    /// True when an internal subnet is IPv4.
    pub ipv4: bool,
    /// True when an internal subnet is IPv6.
    pub ipv6: bool,
}

/// Why the parameters are invalid; `Display` is the exact condition message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Invalid {
    /// No infrastructure or no parametersRef.
    #[error("GatewayConfiguration reference is required")]
    ReferenceRequired,
}

impl Invalid {
    /// True for a template failure (the controller's file may be fixed: back off).
    pub fn is_template(&self) -> bool {
        false
    }
}

/// Validates, stopping at the first failure.
pub fn validate<'a>(
    settings: &Settings,
    gateway: &Gateway,
    configuration: Option<&'a GatewayConfiguration>,
    template: &Deployment,
) -> Result<Validated<'a>, Invalid> {
    let _ = (settings, gateway, configuration, template);
    todo!()
}
