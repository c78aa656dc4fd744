//! Every call into the core crate: plan, the write it asks for, settle, the status patch
//! and the requeue hint. Nothing else in this crate names the core's decision API, so a
//! change of that API is a change of this module only.

use std::time::Duration;

use gateway_reconcile::{
    Action, InputError, Requeue, Settings, Snapshot, WriteOutcome, events::Event, plan, wire,
};
use kube::runtime::controller;
use serde_json::Value;

/// The Deployment write the core asks for.
#[derive(Debug, Clone, Copy)]
pub enum DeploymentWrite<'a> {
    /// Create this Deployment (POST).
    Create(&'a wire::Deployment),
    /// Replace the observed Deployment with this one (PUT); `drift` lists the fields that
    /// differ, for the log.
    Update {
        /// The whole desired object, carrying the observed `resourceVersion`.
        desired: &'a wire::Deployment,
        /// The drifted field paths.
        drift: &'a [String],
    },
}

impl DeploymentWrite<'_> {
    /// `Create` or `Update`, for logs and Event actions.
    pub fn verb(&self) -> &'static str {
        match self {
            DeploymentWrite::Create(_) => "Create",
            DeploymentWrite::Update { .. } => "Update",
        }
    }
}

/// A decision for one Gateway: at most one Deployment write, then a settlement.
#[derive(Debug)]
pub struct Decision<'a> {
    plan: gateway_reconcile::Plan<'a>,
}

/// What a reconcile ends with, once the write (if any) has been made.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The merge patch for `gateways/status` (with the `resourceVersion` precondition), or
    /// `None` when the status is already right.
    pub status_patch: Option<Value>,
    /// When to reconcile again.
    pub requeue: controller::Action,
    /// The Events to record once the status write succeeded.
    pub events: Vec<Event>,
}

/// Plans a reconcile from cached objects.
pub fn decide<'a>(
    settings: &'a Settings,
    snapshot: Snapshot<'a>,
    now: jiff::Timestamp,
) -> Result<Decision<'a>, InputError> {
    Ok(Decision {
        plan: plan(settings, snapshot, now)?,
    })
}

impl<'a> Decision<'a> {
    /// The Deployment write to make, if any.
    pub fn write(&self) -> Option<DeploymentWrite<'_>> {
        match self.plan.action() {
            Action::Create(desired) => Some(DeploymentWrite::Create(desired)),
            Action::Update { desired, drift } => Some(DeploymentWrite::Update { desired, drift }),
            _ => None,
        }
    }

    /// Settles with the outcome of the write (`None` when [`Decision::write`] asked for
    /// none). `resource_version` is the cached Gateway's: the status patch only applies to
    /// that object (409 Conflict otherwise), so a condition another client wrote since is
    /// never overwritten.
    pub fn settle(self, outcome: Option<WriteOutcome>, resource_version: Option<&str>) -> Settled {
        let settlement = self.plan.settle(outcome.as_ref());
        let status_patch = settlement
            .status_patch()
            .map(|patch| with_precondition(patch, resource_version));
        Settled {
            status_patch,
            requeue: requeue(settlement.requeue),
            events: settlement.events,
        }
    }
}

/// `patch` with `metadata.resourceVersion` set: a merge patch carrying a resourceVersion
/// is applied only to that version of the object.
pub fn with_precondition(mut patch: Value, resource_version: Option<&str>) -> Value {
    if let (Some(version), Value::Object(body)) = (resource_version, &mut patch) {
        body.insert(
            "metadata".into(),
            serde_json::json!({ "resourceVersion": version }),
        );
    }
    patch
}

/// The core's requeue hint as kube-runtime's [`controller::Action`].
pub fn requeue(requeue: Requeue) -> controller::Action {
    match requeue {
        Requeue::Immediately => controller::Action::requeue(Duration::ZERO),
        Requeue::After(after) => controller::Action::requeue(after),
        // `Requeue` may grow; anything else waits for the next watch event.
        _ => controller::Action::await_change(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requeue_hints_map_to_actions() {
        assert_eq!(
            requeue(Requeue::Immediately),
            controller::Action::requeue(Duration::ZERO)
        );
        assert_eq!(
            requeue(Requeue::After(Duration::from_secs(7))),
            controller::Action::requeue(Duration::from_secs(7))
        );
        assert_eq!(requeue(Requeue::None), controller::Action::await_change());
    }

    #[test]
    fn status_patch_carries_the_resource_version() {
        let patch = serde_json::json!({ "status": { "conditions": [] } });
        assert_eq!(
            with_precondition(patch.clone(), Some("42")),
            serde_json::json!({ "metadata": { "resourceVersion": "42" }, "status": { "conditions": [] } })
        );
        assert_eq!(with_precondition(patch.clone(), None), patch);
    }
}
