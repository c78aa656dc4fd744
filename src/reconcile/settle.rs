//! The condition table of SPEC §6: what the status says after the write, and when to look
//! again.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::plan::{Accepted, Decision, Plan};
use super::{Action, Requeue, Settlement};
use crate::conditions::{
    self, ACCEPTED, Change, PROGRAMMED, TransitionTime, WAITING_FOR_CONTROLLER, Wanted, reason,
    status,
};
use crate::events;
use crate::outcome::{FailureClass, WriteOutcome};
use crate::rollout::Stall;
use crate::wire::{GatewayAddress, GatewayStatus};

/// Backoff bounds for transient failures.
const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);

/// The owned conditions to set, in the order new ones are appended.
struct Row {
    accepted: Change,
    programmed: Change,
    applied: Change,
    degraded: Change,
}

impl<'a> Plan<'a> {
    /// Settles the plan with the outcome of its write. Pass `None` when the plan asked for
    /// no write; a planned write with no outcome is taken as a transport failure.
    pub fn settle(self, outcome: Option<&WriteOutcome>) -> Settlement {
        match &self.decision {
            Decision::Deleted => self.nothing(Requeue::None),
            Decision::Stale => self.nothing(Requeue::Immediately),
            Decision::NotOurs => self.not_ours(),
            Decision::Invalid(invalid) => {
                let message = invalid.to_string();
                let row = Row {
                    accepted: Change::Set(Wanted::new(
                        status::FALSE,
                        reason::INVALID_PARAMETERS,
                        message.clone(),
                    )),
                    programmed: Change::Set(Wanted::new(
                        status::FALSE,
                        reason::INVALID,
                        format!("Gateway not accepted: {message}"),
                    )),
                    applied: Change::Set(Wanted::new(
                        status::FALSE,
                        reason::INVALID_PARAMETERS,
                        message,
                    )),
                    degraded: Change::Remove,
                };
                // A template failure may be fixed by editing the controller's file: back off.
                let requeue = if invalid.is_template() {
                    Requeue::After(self.backoff(None))
                } else {
                    self.or_resync(Requeue::None)
                };
                self.finish(row, None, requeue)
            }
            Decision::Accepted(accepted) => {
                let unreported;
                let outcome = match (&self.action, outcome) {
                    (Action::None, _) => None,
                    (_, Some(outcome)) => Some(outcome),
                    (_, None) => {
                        unreported = WriteOutcome::Transport {
                            message: "no write outcome was reported".to_owned(),
                        };
                        Some(&unreported)
                    }
                };
                let (row, requeue) = self.accepted_row(accepted, outcome);
                self.finish(row, Some(&accepted.addresses), self.or_resync(requeue))
            }
        }
    }

    /// SPEC §6, row by row, for an accepted Gateway.
    fn accepted_row(&self, a: &Accepted<'_>, outcome: Option<&WriteOutcome>) -> (Row, Requeue) {
        let m = a.wanted;
        let dep = &a.deployment;
        let cfg = format!(
            "{}/{}",
            a.configuration.metadata.namespace.as_deref().unwrap_or(""),
            a.configuration.metadata.name.as_deref().unwrap_or("")
        );
        let carried = a.observed.as_ref().and_then(|o| o.carried);
        let carried_text = carried.map_or_else(|| "unknown".to_owned(), |n| n.to_string());
        let accepted = Change::Set(Wanted::new(
            status::TRUE,
            reason::ACCEPTED,
            format!("Gateway accepted by {}", self.settings.controller_name),
        ));
        let not_applied = |what: String| {
            if a.observed.is_some() {
                format!(
                    "GatewayConfiguration {cfg} generation {m} is not applied to Deployment {dep} (it carries generation {carried_text}): {what}"
                )
            } else {
                format!(
                    "GatewayConfiguration {cfg} generation {m} is not applied: Deployment {dep} does not exist: {what}"
                )
            }
        };
        let since = self.since_text();
        let stall = a.observed.as_ref().and_then(|o| o.rollout.stalled.as_ref());
        let stalled = |stall: Option<&Stall>| match stall {
            Some(s) => Change::Set(Wanted::new(
                status::TRUE,
                reason::ROLLOUT_STALLED,
                format!(
                    "rollout of Deployment {dep} stalled since {}: {}",
                    s.since, s.message
                ),
            )),
            None => Change::Remove,
        };
        let pending =
            |message: String| Change::Set(Wanted::new(status::FALSE, reason::PENDING, message));

        if let Some(owner) = a.observed.as_ref().and_then(|o| o.collision.as_ref()) {
            let name = dep.rsplit('/').next().unwrap_or(dep);
            let gw = self.snapshot.gateway.metadata.name.as_deref().unwrap_or("");
            let row = Row {
                accepted,
                programmed: Change::Set(Wanted::new(
                    status::FALSE,
                    reason::INVALID,
                    format!(
                        "deployment {name} exists but is not owned by gateway {gw} (owned by {owner}, cannot proceed due to name collision)"
                    ),
                )),
                applied: Change::Set(Wanted::new(
                    status::FALSE,
                    reason::APPLY_REJECTED,
                    format!(
                        "GatewayConfiguration {cfg} generation {m} is not applied: Deployment {dep} is owned by {owner}, not by this Gateway"
                    ),
                )),
                degraded: Change::Remove,
            };
            return (row, Requeue::None);
        }

        let degraded_true = conditions::find(
            &self.snapshot.gateway.status.conditions,
            &self.types.degraded,
        )
        .is_some_and(|c| c.status == status::TRUE);
        let creating = matches!(self.action, Action::Create(_));
        let Some(outcome) = outcome.filter(|o| o.class().is_some()) else {
            // Written (or nothing to write): no drift is left.
            let (initializing, stall) = match (&self.action, &a.observed) {
                (Action::Create(_), _) | (_, None) => (true, None),
                (Action::Update { .. }, Some(o)) if o.spec_changes => (true, None),
                (_, Some(o)) => (!o.rollout.complete, o.rollout.stalled.as_ref()),
            };
            let carried_after = match self.action {
                Action::None => carried,
                _ => Some(m),
            };
            if !self.carries_current(a) {
                // Unreachable while the generation annotation is compared as drift; should
                // it not be, the status still tells the truth, and the look again is slow.
                let row = Row {
                    accepted,
                    programmed: self.programmed(carried_after, false, m, initializing),
                    applied: pending(not_applied(
                        "the Deployment does not carry it yet".to_owned(),
                    )),
                    degraded: if degraded_true {
                        Change::Refresh
                    } else {
                        stalled(stall)
                    },
                };
                return (row, Requeue::After(self.backoff(None)));
            }
            let row = Row {
                accepted,
                programmed: self.programmed(carried_after, true, m, initializing),
                applied: Change::Set(Wanted::new(
                    status::TRUE,
                    reason::APPLIED,
                    format!(
                        "GatewayConfiguration {cfg} generation {m} is applied to Deployment {dep}"
                    ),
                )),
                degraded: stalled(stall),
            };
            return (row, Requeue::None);
        };
        let class = outcome.class().unwrap_or(FailureClass::Transient);
        let msg = outcome.message();
        let old_programmed = || {
            self.programmed(
                carried,
                a.observed.as_ref().is_some_and(|o| o.carries(m)),
                m,
                a.observed.as_ref().is_none_or(|o| !o.rollout.complete),
            )
        };
        if creating {
            let (programmed, applied, requeue) = match class {
                FailureClass::Conflict | FailureClass::AlreadyExists => (
                    pending(format!("LB Deployment {dep} is not created yet: {msg}")),
                    pending(not_applied(format!("create conflicted, retrying: {msg}"))),
                    Requeue::Immediately,
                ),
                FailureClass::Rejected => (
                    Change::Set(Wanted::new(
                        status::FALSE,
                        reason::INVALID,
                        format!("failed to create LB deployment: {msg}"),
                    )),
                    Change::Set(Wanted::new(
                        status::FALSE,
                        reason::APPLY_REJECTED,
                        not_applied(format!("create rejected: {msg}")),
                    )),
                    Requeue::None,
                ),
                // A 404 on create (the namespace is going away) is not fixed by retrying
                // at once: it backs off like a transient failure, with its own message.
                FailureClass::NotFound => (
                    pending(format!("LB Deployment {dep} is not created yet: {msg}")),
                    Change::Set(Wanted::new(
                        status::FALSE,
                        reason::APPLY_FAILED,
                        not_applied(format!("create failed (not found): {msg}")),
                    )),
                    Requeue::After(self.backoff(None)),
                ),
                _ => (
                    pending(format!("LB Deployment {dep} is not created yet: {msg}")),
                    Change::Set(Wanted::new(
                        status::FALSE,
                        reason::APPLY_FAILED,
                        not_applied(format!("create failed: {msg}")),
                    )),
                    Requeue::After(self.backoff(None)),
                ),
            };
            let row = Row {
                accepted,
                programmed,
                applied,
                degraded: Change::Remove,
            };
            return (row, requeue);
        }
        // Degraded never flaps while the gap lasts: once True it stays True (its
        // lastTransitionTime with it), the reason following the current cause.
        let degraded_due = self.degraded_due();
        let due = degraded_due.is_some_and(|due| self.now >= due);
        let failing = || {
            Change::Set(Wanted::new(
                status::TRUE,
                reason::APPLY_FAILING,
                format!(
                    "GatewayConfiguration {cfg} generation {m} not applied since {since}: updates of Deployment {dep} keep failing: {msg}"
                ),
            ))
        };
        let (programmed, applied, degraded, requeue) = match class {
            // An Update answered AlreadyExists is an Update Conflict.
            FailureClass::Conflict | FailureClass::AlreadyExists => (
                old_programmed(),
                pending(not_applied(format!("update conflicted, retrying: {msg}"))),
                if degraded_true {
                    // Nothing new is known about the cause: status, reason, message stay.
                    Change::Refresh
                } else if due {
                    failing()
                } else {
                    stalled(stall)
                },
                Requeue::Immediately,
            ),
            FailureClass::NotFound => (
                pending(format!(
                    "LB Deployment {dep} vanished during the update; recreating it"
                )),
                pending(not_applied(format!(
                    "the Deployment vanished during the update: {msg}"
                ))),
                Change::Remove,
                Requeue::Immediately,
            ),
            FailureClass::Rejected => (
                old_programmed(),
                Change::Set(Wanted::new(
                    status::FALSE,
                    reason::APPLY_REJECTED,
                    not_applied(format!("update rejected: {msg}")),
                )),
                Change::Set(Wanted::new(
                    status::TRUE,
                    reason::APPLY_REJECTED,
                    format!(
                        "GatewayConfiguration {cfg} generation {m} not applied since {since}: the API rejected the update of Deployment {dep}: {msg}"
                    ),
                )),
                Requeue::None,
            ),
            _ => {
                let degraded = if due || degraded_true {
                    failing()
                } else {
                    stalled(stall)
                };
                (
                    old_programmed(),
                    Change::Set(Wanted::new(
                        status::FALSE,
                        reason::APPLY_FAILED,
                        not_applied(format!("update failed: {msg}")),
                    )),
                    degraded,
                    Requeue::After(self.backoff(degraded_due)),
                )
            }
        };
        (
            Row {
                accepted,
                programmed,
                applied,
                degraded,
            },
            requeue,
        )
    }

    /// `Programmed=True`, naming the generation the Deployment carries after this reconcile
    /// (`current`: of the current GatewayConfiguration, and the wanted one).
    fn programmed(
        &self,
        carried: Option<i64>,
        current: bool,
        wanted: i64,
        initializing: bool,
    ) -> Change {
        let mut message = String::from("LB Deployment reconciled");
        if self.settings.generation_in_programmed_message {
            match carried {
                Some(n) => {
                    message.push_str(&format!(" with GatewayConfiguration generation {n}"));
                    if !current {
                        message.push_str(&format!("; generation {wanted} not applied yet"));
                    }
                }
                None => message.push_str(&format!(
                    " with GatewayConfiguration generation unknown; generation {wanted} not applied yet"
                )),
            }
        }
        if initializing {
            message.push_str("; Pods may still be initializing");
        }
        Change::Set(Wanted::new(status::TRUE, reason::PROGRAMMED, message))
    }

    /// Ownership moved away: undo our `Accepted=True` (matched by the message suffix other
    /// controllers also match), drop the custom conditions, leave `Programmed` alone.
    fn not_ours(&self) -> Settlement {
        let conditions = &self.snapshot.gateway.status.conditions;
        let ours = conditions::find(conditions, ACCEPTED).is_some_and(|c| {
            c.status == status::TRUE && c.message.ends_with(self.settings.controller_name.as_str())
        });
        if !ours {
            return self.nothing(Requeue::None);
        }
        let row = Row {
            accepted: Change::Set(Wanted::new(
                status::UNKNOWN,
                reason::PENDING,
                WAITING_FOR_CONTROLLER,
            )),
            programmed: Change::Keep,
            applied: Change::Remove,
            degraded: Change::Remove,
        };
        self.finish(row, None, Requeue::None)
    }

    /// Whether the Deployment carries the current GatewayConfiguration (generation and uid)
    /// after this reconcile's successful write, or with nothing to write. The one place
    /// that decides it, for ConfigurationApplied.
    fn carries_current(&self, a: &Accepted<'_>) -> bool {
        match self.action {
            // A write renders the current generation and uid.
            Action::Create(_) | Action::Update { .. } => true,
            _ => a.observed.as_ref().is_some_and(|o| o.carries(a.wanted)),
        }
    }

    /// `resync`, when set, in place of a "none" requeue.
    fn or_resync(&self, requeue: Requeue) -> Requeue {
        match (requeue, self.settings.resync) {
            (Requeue::None, Some(every)) => Requeue::After(every),
            _ => requeue,
        }
    }

    /// When Degraded becomes due on transient failures: `degradedAfter` after
    /// ConfigurationApplied turned False (now, when it is not False). `None` is never: the
    /// deadline is past the end of representable time.
    fn degraded_due(&self) -> Option<Timestamp> {
        let since = self.applied_false_since.unwrap_or(self.now);
        let after = SignedDuration::try_from(self.settings.degraded_after).ok()?;
        since.checked_add(after).ok()
    }

    /// The time ConfigurationApplied turned False, as Degraded messages print it: as written
    /// when it lies in the future or beyond the supported range (so the message does not
    /// change on every retry), `now` when it is not False yet.
    fn since_text(&self) -> String {
        let written = conditions::find(
            &self.snapshot.gateway.status.conditions,
            &self.types.configuration_applied,
        )
        .filter(|c| c.status == status::FALSE)
        .map(|c| (c, conditions::transition_time(&c.last_transition_time)));
        match written {
            Some((_, TransitionTime::At(t))) if t <= self.now => conditions::timestamp(t),
            Some((c, TransitionTime::At(_) | TransitionTime::OutOfRange)) => {
                c.last_transition_time.clone()
            }
            _ => conditions::timestamp(self.now),
        }
    }

    /// Time since ConfigurationApplied turned False, clamped to [1 s, 5 min], and never past
    /// the moment Degraded becomes due.
    fn backoff(&self, degraded_due: Option<Timestamp>) -> Duration {
        let since = self.applied_false_since.unwrap_or(self.now);
        let elapsed = Duration::try_from(self.now.duration_since(since)).unwrap_or(Duration::ZERO);
        let mut wait = elapsed.clamp(MIN_BACKOFF, MAX_BACKOFF);
        if let Some(due) = degraded_due {
            if let Ok(until_due) = Duration::try_from(due.duration_since(self.now)) {
                if !until_due.is_zero() {
                    wait = wait.min(until_due);
                }
            }
        }
        wait
    }

    fn nothing(&self, requeue: Requeue) -> Settlement {
        Settlement {
            status: None,
            requeue,
            events: Vec::new(),
            addresses_owned: false,
        }
    }

    /// Applies the row to the observed conditions; no status when nothing changed.
    fn finish(
        &self,
        row: Row,
        addresses: Option<&[GatewayAddress]>,
        requeue: Requeue,
    ) -> Settlement {
        let observed = &self.snapshot.gateway.status;
        let changes = [
            (ACCEPTED, row.accepted),
            (PROGRAMMED, row.programmed),
            (self.types.configuration_applied.as_str(), row.applied),
            (self.types.degraded.as_str(), row.degraded),
        ];
        let merged = conditions::merge_changed(
            &observed.conditions,
            &self.types,
            &changes,
            self.generation,
            self.now,
        );
        let addresses_owned = addresses.is_some();
        let unchanged = merged.is_none() && addresses.is_none_or(|a| *a == observed.addresses);
        if unchanged {
            return Settlement {
                status: None,
                requeue,
                events: Vec::new(),
                addresses_owned,
            };
        }
        let merged = merged.unwrap_or_else(|| observed.conditions.clone());
        let events = events::transitions(&observed.conditions, &merged, &self.types);
        let status = Some(GatewayStatus {
            conditions: merged,
            addresses: addresses.unwrap_or(&observed.addresses).to_vec(),
            other: observed.other.clone(),
        });
        Settlement {
            status,
            requeue,
            events,
            addresses_owned,
        }
    }
}
