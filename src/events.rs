//! Kubernetes Events a controller should record: one per condition transition, never one per
//! retry.
//!
//! An event is derived from the change of an owned condition's `status` between the observed
//! and the new condition list, so a retry that changes nothing emits nothing, and a restarted
//! controller does not repeat the events of the transitions it already wrote.
//!
//! | transition | event |
//! |---|---|
//! | `D/ConfigurationApplied` turns False | Warning, the condition's reason (`ApplyFailed`, `ApplyRejected`, `Pending`, `InvalidParameters`) |
//! | `D/ConfigurationApplied` turns True | Normal `Applied` |
//! | `D/Degraded` appears | Warning `Degraded` |
//! | `D/Degraded` goes away | Normal `Recovered` |
//! | `Programmed` turns False | Warning, the condition's reason (`Pending`, `Invalid`) |
//! | `Accepted` turns False | Warning `InvalidParameters` |

use serde::{Deserialize, Serialize};

use crate::conditions::{self, ACCEPTED, ConditionTypes, PROGRAMMED, status};
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
pub fn transitions(
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
        (None, Some(c)) => events.push(event(EventType::Warning, "Degraded", &c.message)),
        (Some(c), None) => events.push(event(
            EventType::Normal,
            "Recovered",
            &format!("no longer degraded ({})", c.reason),
        )),
        _ => {}
    }
    events
}
