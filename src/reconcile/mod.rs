//! The reconcile state machine: [`plan`] decides, the caller writes, [`Plan::settle`] reads
//! the outcome and says what status to write and when to look again.

use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use crate::error::InputError;
use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::snapshot::Snapshot;
use crate::wire::{Deployment, GatewayStatus};

/// What to do with the LB Deployment.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// Create this Deployment.
    Create(Deployment),
    /// Replace the observed Deployment with this one; `drift` says which fields differ.
    Update {
        /// The desired Deployment (carries the observed `resourceVersion`).
        desired: Deployment,
        /// The drifted field paths.
        drift: Vec<String>,
    },
    /// Leave the Deployment alone.
    None,
}

/// When to reconcile this Gateway again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// Only on the next watch event.
    None,
    /// At once.
    Immediately,
    /// After this long.
    After(Duration),
}

/// The decision of one reconcile, waiting for the outcome of its write.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    snapshot: Snapshot<'a>,
    action: Action,
}

/// What one reconcile ends with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Settlement {
    /// The Gateway status to write (full condition list and addresses), or `None` when
    /// nothing changed.
    pub status: Option<GatewayStatus>,
    /// When to look again.
    pub requeue: Requeue,
}

/// Decides what to do for one Gateway.
pub fn plan<'a>(
    settings: &'a Settings,
    snapshot: Snapshot<'a>,
    now: Timestamp,
) -> Result<Plan<'a>, InputError> {
    let _ = (settings, now);
    Ok(Plan {
        snapshot,
        action: Action::None,
    })
}

impl<'a> Plan<'a> {
    /// The Deployment action the caller must perform before settling.
    pub fn action(&self) -> &Action {
        &self.action
    }

    /// Settles the plan with the outcome of its write (`None` when it asked for none).
    pub fn settle(self, outcome: Option<&WriteOutcome>) -> Settlement {
        let _ = (outcome, self.snapshot);
        todo!()
    }
}

impl Settlement {
    /// The JSON merge patch for the Gateway's status subresource, or `None`.
    pub fn status_patch(&self) -> Option<Value> {
        todo!()
    }
}
