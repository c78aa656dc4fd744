//! How the timeline and the failed expectations word a reconcile: its action, write
//! outcome, status write, conditions and requeue.

use crate::outcome::WriteOutcome;
use crate::reconcile::Requeue;
use crate::sim::cluster::ReconcileReport;
use crate::wire::Condition;

/// `Applied`, `503 ServiceUnavailable: etcdserver: request timed out`, or
/// `transport error: MSG`.
pub fn describe_outcome(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Applied | WriteOutcome::Stored(_) => "Applied".into(),
        WriteOutcome::Api(e) => format!("{} {}: {}", e.code, e.reason, e.message),
        WriteOutcome::Transport { message } => format!("transport error: {message}"),
    }
}

/// The Deployment action of a reconcile, with the drifted paths of an update:
/// `Update (drift: spec.replicas)`.
pub(super) fn describe_action(record: &ReconcileReport) -> String {
    if record.drift.is_empty() {
        record.action.to_string()
    } else {
        format!("{} (drift: {})", record.action, record.drift.join(", "))
    }
}

/// `TYPE = STATUS/REASON (observedGeneration N, since T)`: a condition's facts but its
/// message, worded as both text renderers (this timeline and `testing::text`) write them.
pub(crate) fn describe_condition_facts(c: &Condition) -> String {
    match c.observed_generation {
        Some(g) => format!(
            "{} = {}/{} (observedGeneration {g}, since {})",
            c.type_, c.status, c.reason, c.last_transition_time
        ),
        None => format!(
            "{} = {}/{} (since {})",
            c.type_, c.status, c.reason, c.last_transition_time
        ),
    }
}

/// `written` when the reconcile writes the Gateway status, `unchanged` when it equals the
/// observed one (the settlement has no status).
pub(crate) fn describe_status(written: bool) -> &'static str {
    if written { "written" } else { "unchanged" }
}

/// `STATUS/REASON: "MESSAGE"`: a condition as a failed expectation shows it.
pub(super) fn describe_condition(c: &Condition) -> String {
    format!("{}/{}: {:?}", c.status, c.reason, c.message)
}

/// `await change` (only the next watch event), `immediately` or `after 90s`.
pub fn describe_requeue(requeue: Requeue) -> String {
    match requeue {
        Requeue::AwaitChange => "await change".into(),
        Requeue::Immediately => "immediately".into(),
        Requeue::After(d) => format!("after {}", crate::settings::format_duration(d)),
    }
}

/// The requeue a scenario's `expect.requeue` names: `await change` (or `none`, its older
/// word), `immediately` or a duration.
pub(crate) fn requeue_from_word(word: &str) -> Result<Requeue, String> {
    match word {
        "await change" | "none" => Ok(Requeue::AwaitChange),
        "immediately" => Ok(Requeue::Immediately),
        _ => crate::settings::parse_duration(word).map(Requeue::After),
    }
}
