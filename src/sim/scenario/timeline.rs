//! What `simulate` prints: the timeline of a run, step by step, and the report.

use std::fmt::{self, Write as _};
use std::time::Duration;

use jiff::Timestamp;

use super::checks::Failure;
use super::describe::{
    describe_action, describe_condition_facts, describe_outcome, describe_requeue, describe_status,
};
use crate::outcome::WriteOutcome;
use crate::settings::format_duration;
use crate::sim::cluster::{Kind, ReconcileReport, RolloutState, format_time};

/// What one step did (not a Kubernetes Event: those are in [`ReconcileReport::events`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Effect {
    /// A reconcile ran.
    Reconciled(Box<ReconcileReport>),
    /// The clock moved.
    Advanced(Duration),
    /// Objects were patched.
    Patched(Vec<Kind>),
    /// An object was deleted.
    Deleted(Kind),
    /// Deployment writes were set to fail.
    WritesFailing {
        /// How many.
        count: u32,
        /// With what.
        outcome: WriteOutcome,
    },
    /// The Deployment controller ran.
    RolledOut(RolloutState),
    /// Mutating admission changes Deployment writes with this merge patch (`None`: no
    /// longer).
    WritesMutated(Option<serde_json::Value>),
    /// The controller restarted.
    Restarted,
    /// An object was patched without the type check: the controller reads it as
    /// unreadable.
    MadeUnreadable(Kind),
    /// The objects the API server serves were remembered under this name.
    Snapshotted(String),
    /// The controller's reads lag: answered from this snapshot.
    ReadsLag(super::StaleReads),
    /// The lagging view caught up.
    ReadsCaughtUp,
    /// An object was deleted for good and created again.
    Recreated(Kind),
    /// The step could not run (the failure is in [`Report::failures`]).
    Error(String),
}

/// One timeline entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The step (1-based).
    pub step: usize,
    /// The cluster clock after the step.
    pub time: Timestamp,
    /// The step's note.
    pub note: Option<String>,
    /// What the step did.
    pub effect: Effect,
}

/// The result of running a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The scenario's description.
    pub description: String,
    /// What happened, step by step.
    pub timeline: Vec<Entry>,
    /// Every failed expectation, in step order.
    pub failures: Vec<Failure>,
    /// Deployment write requests sent.
    pub deployment_writes: u64,
    /// Gateway status writes.
    pub status_writes: u64,
    /// Set when the backend could not reproduce a step: the run stopped there.
    pub skipped: Option<Skipped>,
}

/// A scenario the backend could not run to its end (see
/// [`StepError::Skip`](super::StepError::Skip)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The step (1-based; 0: the objects could not be created).
    pub step: usize,
    /// Why the backend cannot reproduce it.
    pub why: String,
}

impl Report {
    /// True when every expectation held, and every step ran: a skipped scenario did not
    /// pass.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.skipped.is_none()
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = format_time(self.time);
        let head = format!("step {:>2}  {time}", self.step);
        match &self.effect {
            Effect::Reconciled(r) => {
                writeln!(f, "{head}  reconcile")?;
                if let Some(note) = &self.note {
                    writeln!(f, "    note: {note}")?;
                }
                writeln!(f, "    action: {}", describe_action(r))?;
                match &r.outcome {
                    Some(o) => writeln!(f, "    write: {}", describe_outcome(o))?,
                    None => writeln!(f, "    write: none")?,
                }
                match r.status_refused {
                    true => writeln!(
                        f,
                        "    status: refused (409: the Gateway changed since it was read)"
                    )?,
                    false => writeln!(f, "    status: {}", describe_status(r.status_written))?,
                }
                for c in &r.conditions {
                    writeln!(f, "      {}: {}", describe_condition_facts(c), c.message)?;
                }
                for e in &r.events {
                    writeln!(f, "    event: {:?} {}: {}", e.type_, e.reason, e.message)?;
                }
                for c in r.class_conditions.iter().filter(|_| r.class_status_written) {
                    writeln!(
                        f,
                        "    gatewayClass status written: {} = {}/{}: {}",
                        c.type_, c.status, c.reason, c.message
                    )?;
                }
                if r.addresses.is_empty() {
                    writeln!(f, "    addresses: none")?;
                } else {
                    writeln!(f, "    addresses: {}", r.addresses.join(", "))?;
                }
                write!(f, "    requeue: {}", describe_requeue(r.requeue))
            }
            other => {
                let what = match other {
                    Effect::Advanced(d) => format!("advance {}", format_duration(*d)),
                    Effect::Patched(kinds) => {
                        let names: Vec<&str> = kinds.iter().map(|k| k.key()).collect();
                        format!("patch {}", names.join(", "))
                    }
                    Effect::Deleted(k) => format!("delete {k}"),
                    Effect::WritesFailing { count, outcome } => match outcome {
                        WriteOutcome::Applied => format!("failWrites {count}: cleared"),
                        o => format!(
                            "failWrites: the next {count} Deployment writes fail with {}",
                            describe_outcome(o)
                        ),
                    },
                    Effect::RolledOut(r) => format!("rollout {}", r.key()),
                    Effect::WritesMutated(Some(patch)) => {
                        format!(
                            "mutateWrites: admission patches every Deployment write with {patch}"
                        )
                    }
                    Effect::WritesMutated(None) => "mutateWrites: stopped".to_owned(),
                    Effect::Restarted => {
                        "restart: the controller forgets its write records".to_owned()
                    }
                    Effect::MadeUnreadable(k) => {
                        format!("unreadable {k}: patched without the type check")
                    }
                    Effect::Snapshotted(name) => {
                        format!("snapshot {name:?}: the served objects remembered")
                    }
                    Effect::ReadsLag(stale) => {
                        let kinds = match &stale.kinds {
                            None => "reads".to_owned(),
                            Some(kinds) => {
                                let keys: Vec<&str> = kinds.iter().map(|k| k.key()).collect();
                                format!("reads of {}", keys.join(", "))
                            }
                        };
                        format!(
                            "staleReads: {kinds} answered from snapshot {:?}",
                            stale.from
                        )
                    }
                    Effect::ReadsCaughtUp => "catchUp: reads see the current objects".to_owned(),
                    Effect::Recreated(k) => format!("recreate {k}: deleted and created again"),
                    Effect::Error(e) => format!("error: {e}"),
                    Effect::Reconciled(_) => String::new(),
                };
                write!(f, "{head}  {what}")?;
                if let Some(note) = &self.note {
                    write!(f, "\n    note: {note}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if !self.description.is_empty() {
            let _ = writeln!(out, "{}\n", self.description);
        }
        for entry in &self.timeline {
            let _ = writeln!(out, "{entry}");
        }
        let _ = writeln!(
            out,
            "\n{} Deployment writes, {} status writes",
            self.deployment_writes, self.status_writes
        );
        if let Some(skipped) = &self.skipped {
            let _ = writeln!(out, "skipped at step {}: {}", skipped.step, skipped.why);
        }
        if self.failures.is_empty() && self.skipped.is_some() {
            let _ = write!(out, "every expectation before the skip held");
        } else if self.failures.is_empty() {
            let _ = write!(out, "every expectation held");
        } else {
            let _ = writeln!(out, "{} failed expectations:", self.failures.len());
            for failure in &self.failures {
                let _ = writeln!(out, "  {failure}");
            }
        }
        f.write_str(out.trim_end())
    }
}

#[cfg(test)]
mod tests;
