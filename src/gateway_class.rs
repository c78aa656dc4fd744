//! The GatewayClass's own status: its `Accepted` condition, decided from the class alone.
//!
//! A Gateway API implementation sets `Accepted` on the GatewayClasses it owns, so that
//! `kubectl get gatewayclass` shows them accepted. A class needs no Gateway for that, so
//! this is a separate call from [`plan`](crate::plan):
//!
//! | the class | `Accepted` |
//! |---|---|
//! | another controller's (`spec.controllerName` is not ours) | untouched: its owner writes it |
//! | ours, no `spec.parametersRef` | `True`/`Accepted`/`GatewayClass accepted by CONTROLLER_NAME` |
//! | ours, with `spec.parametersRef` | `False`/`InvalidParameters`/`parametersRef on a GatewayClass is not supported by CONTROLLER_NAME: set spec.infrastructure.parametersRef on each Gateway` |
//!
//! This controller takes its parameters per Gateway, never per class: a class that names
//! parameters is not accepted, and its Gateways are reconciled as before (their own
//! parameters decide). A class whose `controllerName` changes away from ours keeps the
//! `Accepted` written for it until its new owner writes its own.
//!
//! The bookkeeping is the Gateway's: `observedGeneration` is the class's generation,
//! `lastTransitionTime` moves only when the status changes, foreign conditions are never
//! touched, an `Accepted` carrying an `observedGeneration` above the class's generation
//! means the snapshot is stale (nothing is written), and nothing is written when nothing
//! changed. The write is a merge patch of the `status` subresource carrying the observed
//! `resourceVersion` ([`StatusPatch`]).
//!
//! ```
//! use gateway_reconcile::gateway_class::settle_class;
//! use gateway_reconcile::wire::GatewayClass;
//! use gateway_reconcile::Settings;
//!
//! let class: GatewayClass = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "meridio", "generation": 1, "resourceVersion": "5"},
//!     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
//! })).unwrap();
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//! let settled = settle_class(&Settings::default(), &class, now).unwrap();
//! let patch = settled.status_patch().unwrap();
//! assert_eq!(patch.resource_version(), Some("5"));
//! let accepted = &patch.body()["status"]["conditions"][0];
//! assert_eq!(accepted["status"], "True");
//! assert_eq!(accepted["message"], "GatewayClass accepted by meridio-2.nordix.org/gateway-controller");
//! ```

use jiff::Timestamp;

use crate::conditions::{
    ACCEPTED, Change, ConditionTypes, Wanted, find, merge_changed, reason, status,
};
use crate::error::InputError;
use crate::reconcile::StatusPatch;
use crate::settings::Settings;
use crate::wire::{Condition, GatewayClass};

/// What to write on a GatewayClass: its conditions, or nothing.
#[must_use = "write the class status when there is one"]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClassSettlement {
    /// The class's whole condition list to write, or `None` when it is not ours, the
    /// snapshot is stale, or nothing changed.
    pub conditions: Option<Vec<Condition>>,
    /// Whether an `Accepted` of ours carries an `observedGeneration` above the class's:
    /// the snapshot is older than our last write; look again at once.
    pub stale: bool,
    resource_version: Option<String>,
}

impl ClassSettlement {
    /// The JSON merge patch for the class's `status` subresource, with the observed
    /// `resourceVersion` as its precondition; `None` when there is nothing to write.
    pub fn status_patch(&self) -> Option<StatusPatch> {
        let conditions = self.conditions.as_ref()?;
        Some(StatusPatch::of_conditions(
            conditions,
            self.resource_version.clone(),
        ))
    }
}

/// Decides the class's `Accepted` (see the [module docs](self)). Fails only on settings
/// the crate cannot work with.
pub fn settle_class(
    settings: &Settings,
    class: &GatewayClass,
    now: Timestamp,
) -> Result<ClassSettlement, InputError> {
    settings.validate()?;
    let mut settled = ClassSettlement {
        conditions: None,
        stale: false,
        resource_version: class.metadata.resource_version.clone(),
    };
    if class.spec.controller_name != settings.controller_name {
        return Ok(settled);
    }
    let generation = class.metadata.generation.unwrap_or(0);
    let observed = &class.status.conditions;
    if find(observed, ACCEPTED)
        .and_then(|c| c.observed_generation)
        .is_some_and(|g| g > generation)
    {
        settled.stale = true;
        return Ok(settled);
    }
    let controller = &settings.controller_name;
    let wanted = match class.spec.parameters_ref {
        Some(_) => Wanted::new(
            status::FALSE,
            reason::INVALID_PARAMETERS,
            format!(
                "parametersRef on a GatewayClass is not supported by {controller}: set spec.infrastructure.parametersRef on each Gateway"
            ),
        ),
        None => Wanted::new(
            status::TRUE,
            reason::ACCEPTED,
            format!("GatewayClass accepted by {controller}"),
        ),
    };
    let types = ConditionTypes::of_valid(settings);
    settled.conditions = merge_changed(
        observed,
        &types,
        &[(ACCEPTED, Change::Set(wanted))],
        generation,
        now,
    );
    Ok(settled)
}

#[cfg(test)]
mod tests;
