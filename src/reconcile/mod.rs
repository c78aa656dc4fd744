//! The reconcile state machine: [`plan`] decides, the caller writes, [`Plan::settle`] reads
//! the outcome and says what status to write and when to look again.
//!
//! Like a sans-I/O protocol state machine, nothing here talks to the API server or reads a
//! clock: the caller passes the objects it saw and the time, performs the one write the plan
//! asks for, and hands back what happened.
//!
//! ```
//! use gateway_reconcile::{Action, Requeue, Settings, Snapshot, WriteOutcome, plan, template};
//! use gateway_reconcile::wire::{Gateway, GatewayClass, GatewayConfiguration};
//!
//! let gateway: Gateway = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
//!     "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
//!         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
//! })).unwrap();
//! let class: GatewayClass = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "meridio"},
//!     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
//! })).unwrap();
//! let conf: GatewayConfiguration = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
//!     "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
//! })).unwrap();
//! let template = template::default_template();
//! let settings = Settings::default();
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//!
//! // One reconcile: plan, perform the write it asks for, settle with what happened.
//! let snapshot = Snapshot::new(&gateway, &template)
//!     .with_gateway_class(Some(&class))
//!     .with_configuration(Some(&conf));
//! let plan = plan(&settings, snapshot, now).unwrap();
//! let outcome = match plan.action() {
//!     Action::Create(_desired) => Some(WriteOutcome::Applied), // client.create(desired)
//!     Action::Update { .. } => Some(WriteOutcome::Applied),    // client.replace(desired)
//!     _ => None,                                               // nothing to write
//! };
//! let settlement = plan.settle(outcome.as_ref());
//! if let Some(patch) = settlement.status_patch() {
//!     // client.patch_status(name, &Patch::Merge(patch))
//!     assert_eq!(patch["status"]["conditions"][1]["type"], "Programmed");
//! }
//! assert_eq!(settlement.requeue, Requeue::None);
//! ```

mod plan;
mod settle;

use std::time::Duration;

use serde_json::Value;

use crate::events::Event;
use crate::wire::{Deployment, GatewayStatus};

pub use plan::{Plan, plan};

/// What to do with the LB Deployment.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// Create this Deployment.
    Create(Deployment),
    /// Replace the observed Deployment with this one; `drift` says which fields differ.
    Update {
        /// The desired Deployment (it carries the observed `resourceVersion`).
        desired: Deployment,
        /// The drifted field paths, e.g. `spec.template.spec.containers[router].image`.
        drift: Vec<String>,
    },
    /// Leave the Deployment alone.
    None,
}

impl Action {
    /// Which of the three it is.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Create(_) => ActionKind::Create,
            Action::Update { .. } => ActionKind::Update,
            Action::None => ActionKind::None,
        }
    }
}

/// The kind of an [`Action`], spelled `Create`, `Update` or `None` (as scenario files and
/// the timeline write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// [`Action::Create`].
    Create,
    /// [`Action::Update`].
    Update,
    /// [`Action::None`].
    None,
}

impl ActionKind {
    /// `Create`, `Update` or `None`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Create => "Create",
            ActionKind::Update => "Update",
            ActionKind::None => "None",
        }
    }

    /// The kind named by `Create`, `Update` or `None`.
    pub fn from_name(name: &str) -> Option<ActionKind> {
        [ActionKind::Create, ActionKind::Update, ActionKind::None]
            .into_iter()
            .find(|a| a.as_str() == name)
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

/// What one reconcile ends with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Settlement {
    /// The Gateway status to write (full condition list and addresses), or `None` when it
    /// equals the observed one.
    pub status: Option<GatewayStatus>,
    /// When to look again.
    pub requeue: Requeue,
    /// The Events to record on the Gateway: one per condition transition, none on a retry
    /// that changes nothing.
    pub events: Vec<Event>,
    /// Whether this reconcile owns `status.addresses` (false when the parameters are invalid
    /// or the Gateway is not ours: the addresses are left untouched).
    addresses_owned: bool,
}

impl Settlement {
    /// The JSON merge patch (RFC 7386) for the Gateway's status subresource, or `None` when
    /// there is nothing to write. It replaces `status.conditions` whole, and
    /// `status.addresses` when this reconcile owns them (`null` removes an empty list).
    pub fn status_patch(&self) -> Option<Value> {
        let status = self.status.as_ref()?;
        let mut body = serde_json::Map::new();
        body.insert(
            "conditions".into(),
            serde_json::to_value(&status.conditions).unwrap_or(Value::Null),
        );
        if self.addresses_owned {
            let addresses = if status.addresses.is_empty() {
                Value::Null
            } else {
                serde_json::to_value(&status.addresses).unwrap_or(Value::Null)
            };
            body.insert("addresses".into(), addresses);
        }
        let mut patch = serde_json::Map::new();
        patch.insert("status".into(), Value::Object(body));
        Some(Value::Object(patch))
    }
}
