//! Kubernetes Events a controller should record: one per condition transition, never one per
//! retry.
//!
//! An event is derived from the change of an owned condition's `status` between the observed
//! and the new condition list, so a retry that changes nothing emits nothing, and a restarted
//! controller does not repeat the events of the transitions it already wrote.
//!
//! | transition | event |
//! |---|---|
//! | `D/ConfigurationApplied` turns False | Warning, the condition's reason ([`APPLY_FAILED`], [`APPLY_REJECTED`], [`PENDING`], [`INVALID_PARAMETERS`]) |
//! | `D/ConfigurationApplied` turns True | Normal [`APPLIED`] |
//! | `D/Degraded` appears | Warning [`event_reason::DEGRADED`] |
//! | `D/Degraded` goes away | Normal [`event_reason::RECOVERED`] |
//! | `Programmed` turns False | Warning, the condition's reason ([`PENDING`], [`INVALID`]) |
//! | `Accepted` turns False | Warning [`INVALID_PARAMETERS`] |
//! | the API server changed the Deployment inside the crate's own write | Warning [`event_reason::ADMISSION_CHANGED`], `the API server changed the LB Deployment on write: PATHS` (one per write) |
//!
//! The reasons are the constants of [`conditions`](crate::conditions::reason).
//!
//! [`APPLY_FAILED`]: crate::conditions::reason::APPLY_FAILED
//! [`APPLY_REJECTED`]: crate::conditions::reason::APPLY_REJECTED
//! [`PENDING`]: crate::conditions::reason::PENDING
//! [`INVALID_PARAMETERS`]: crate::conditions::reason::INVALID_PARAMETERS
//! [`APPLIED`]: crate::conditions::reason::APPLIED
//! [`INVALID`]: crate::conditions::reason::INVALID
//! [`event_reason::DEGRADED`]: crate::conditions::event_reason::DEGRADED
//! [`event_reason::RECOVERED`]: crate::conditions::event_reason::RECOVERED
//! [`event_reason::ADMISSION_CHANGED`]: crate::conditions::event_reason::ADMISSION_CHANGED

use serde::{Deserialize, Serialize};

use crate::conditions::{self, ACCEPTED, ConditionTypes, PROGRAMMED, event_reason, status};
use crate::wire::Condition;

/// The type of a Kubernetes Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// Something went as it should.
    Normal,
    /// Something needs attention.
    Warning,
}

/// An Event to record on the Gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Normal or Warning.
    #[serde(rename = "type")]
    pub type_: EventType,
    /// A CamelCase reason.
    pub reason: String,
    /// The message (the condition's).
    pub message: String,
}

/// The events of the transitions from `before` to `after`, in a fixed order.
pub(crate) fn transitions(
    before: &[Condition],
    after: &[Condition],
    types: &ConditionTypes,
) -> Vec<Event> {
    let mut events = Vec::new();
    let pair = |t: &str| (conditions::find(before, t), conditions::find(after, t));
    let turned = |t: &str, to: &str| -> Option<&Condition> {
        let (b, a) = pair(t);
        a.filter(|a| a.status == to && b.is_none_or(|b| b.status != to))
    };
    let event = |type_, reason: &str, message: &str| Event {
        type_,
        reason: reason.to_owned(),
        message: message.to_owned(),
    };
    if let Some(c) = turned(ACCEPTED, status::FALSE) {
        events.push(event(EventType::Warning, &c.reason, &c.message));
    }
    if let Some(c) = turned(PROGRAMMED, status::FALSE) {
        events.push(event(EventType::Warning, &c.reason, &c.message));
    }
    let applied = types.configuration_applied.as_str();
    if let Some(c) = turned(applied, status::FALSE) {
        events.push(event(EventType::Warning, &c.reason, &c.message));
    }
    if let Some(c) = turned(applied, status::TRUE) {
        events.push(event(
            EventType::Normal,
            conditions::reason::APPLIED,
            &c.message,
        ));
    }
    match pair(&types.degraded) {
        (None, Some(c)) => events.push(event(
            EventType::Warning,
            event_reason::DEGRADED,
            &c.message,
        )),
        (Some(c), None) => events.push(event(
            EventType::Normal,
            event_reason::RECOVERED,
            &format!("no longer degraded ({})", c.reason),
        )),
        _ => {}
    }
    events
}
