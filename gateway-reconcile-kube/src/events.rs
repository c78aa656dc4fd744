//! The core's Events, recorded on the Gateway through kube-runtime's events recorder
//! (`events.k8s.io/v1`).

use gateway_reconcile::events::{Event, EventType};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{self, Recorder};
use tracing::warn;

/// The longest note the Events API takes (1 KiB).
pub const MAX_NOTE_BYTES: usize = 1024;

/// The core's `event` as kube-runtime's, with `action` set (the Deployment verb of this
/// reconcile, or `Reconcile`) and the note cut to [`MAX_NOTE_BYTES`] on a char boundary.
pub fn to_runtime(event: &Event, action: &str) -> events::Event {
    events::Event {
        type_: match event.type_ {
            EventType::Normal => events::EventType::Normal,
            EventType::Warning => events::EventType::Warning,
        },
        reason: event.reason.clone(),
        note: Some(truncate(&event.message, MAX_NOTE_BYTES).to_owned()),
        action: action.to_owned(),
        secondary: None,
    }
}

/// Records the core's `events` on the object `reference` names, with `action` (the
/// Deployment verb of this reconcile, or `Reconcile`). An Event is informational: one the
/// API refuses is logged, and the rest are still recorded.
pub async fn record(
    recorder: &Recorder,
    reference: &ObjectReference,
    events: &[Event],
    action: &str,
) {
    for event in events {
        let event = to_runtime(event, action);
        if let Err(error) = recorder.publish(&event, reference).await {
            warn!(object = ?reference.name, reason = %event.reason, %error, "Event not recorded");
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_whole_chars() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 3), "abc");
        // "é" is two bytes: cutting inside it keeps the char before.
        assert_eq!(truncate("aé", 2), "a");
        let long = "ü".repeat(1000);
        let cut = truncate(&long, MAX_NOTE_BYTES);
        assert_eq!(cut.len(), 1024);
        assert_eq!(truncate(&format!("x{long}"), MAX_NOTE_BYTES).len(), 1023);
    }

    #[test]
    fn events_carry_action_type_and_note() {
        let event = Event {
            type_: EventType::Warning,
            reason: "ApplyFailed".into(),
            message: "m".repeat(2000),
        };
        let out = to_runtime(&event, "Update");
        assert_eq!(out.type_, events::EventType::Warning);
        assert_eq!(out.reason, "ApplyFailed");
        assert_eq!(out.action, "Update");
        assert_eq!(out.note.as_deref().map(str::len), Some(1024));
    }
}
