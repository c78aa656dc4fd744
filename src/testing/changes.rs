//! The changes-only text of a run ([`Run::changes`](super::Run::changes)): one line per
//! transition, for snapshots a reviewer reads at a glance. Where [`Run::text`](super::Run::text)
//! reprints every condition at every reconcile, this prints what moved: each step that is
//! not a reconcile (the cause), each Deployment write, each condition that appeared,
//! changed (status, reason or message) or went away, and each Event.

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::reconcile::WriteKind;
use crate::sim::cluster::ReconcileReport;
use crate::sim::scenario::describe::describe_outcome;
use crate::wire::Condition;

/// A condition type without its domain (`meridio-2.nordix.org/Degraded` is `Degraded`):
/// the names the crate writes are distinct without it.
fn short(type_: &str) -> &str {
    type_.rsplit('/').next().unwrap_or(type_)
}

fn state(c: &Condition) -> String {
    format!("{}/{}", c.status, c.reason)
}

fn one_line(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The lines one reconcile adds: its write, its condition transitions from `before`, its
/// Events.
pub(super) fn reconcile(
    out: &mut String,
    head: &str,
    before: &[Condition],
    record: &ReconcileReport,
) {
    if record.action != WriteKind::None {
        let outcome = record
            .outcome
            .as_ref()
            .map(describe_outcome)
            .unwrap_or_default();
        let _ = writeln!(out, "{head}  Deployment {}: {outcome}", record.action);
    }
    for now in &record.conditions {
        let was = before.iter().find(|c| c.type_ == now.type_);
        let moved = match was {
            Some(was) if state(was) == state(now) && was.message == now.message => continue,
            // The same status and reason: only the message moved.
            Some(was) if state(was) == state(now) => state(now),
            was => {
                let from = was.map_or_else(|| "none".to_owned(), state);
                format!("{from} -> {}", state(now))
            }
        };
        let _ = writeln!(
            out,
            "{head}  {} {moved}: \"{}\"",
            short(&now.type_),
            one_line(&now.message)
        );
    }
    for gone in before
        .iter()
        .filter(|c| !record.conditions.iter().any(|n| n.type_ == c.type_))
    {
        let _ = writeln!(
            out,
            "{head}  {} {} -> none",
            short(&gone.type_),
            state(gone)
        );
    }
    for e in &record.events {
        let _ = writeln!(out, "{head}  event {:?} {}", e.type_, e.reason);
    }
}

/// `step N  +Ss`: the step's number and its time from the run's start.
pub(super) fn head(step: usize, start: Timestamp, time: Timestamp) -> String {
    let seconds = time.duration_since(start).as_secs();
    format!("step {step:>2}  +{seconds}s")
}
