//! Rendering the desired LB Deployment (SPEC §4).

use crate::settings::Settings;
use crate::validate::Validated;
use crate::wire::{Deployment, Gateway};

/// The LB Deployment's name: `deploymentPrefix + gateway name`.
pub fn deployment_name(settings: &Settings, gateway_name: &str) -> String {
    format!("{}{gateway_name}", settings.deployment_prefix)
}

/// The Deployment annotation key that records the GatewayConfiguration generation.
pub fn generation_annotation(settings: &Settings) -> String {
    format!(
        "{}/gatewayconfiguration-generation",
        settings.condition_domain
    )
}

/// Renders the desired Deployment: from the template when `observed` is `None` (create),
/// otherwise from the observed Deployment (update).
pub fn render(
    settings: &Settings,
    gateway: &Gateway,
    validated: &Validated<'_>,
    template: &Deployment,
    observed: Option<&Deployment>,
) -> Deployment {
    let _ = (settings, gateway, validated, template, observed);
    todo!()
}
