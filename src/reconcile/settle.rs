//! Settling a plan: classify the situation, look up its row in the table, merge the row
//! into the observed conditions, derive the Events, and say when to look again.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::plan::Planned;
use super::settlement::{Requeue, Settlement};
use super::situation::Situation;
use super::table::{Row, Verdict};
use super::write::WriteKind;
use crate::conditions::{self, ACCEPTED, PROGRAMMED, TransitionTime, status};
use crate::events;
use crate::outcome::WriteOutcome;
use crate::wire::GatewayStatus;

/// Backoff bounds for transient failures.
const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);

impl Planned<'_> {
    /// The settlement: the write and its outcome, when one was planned, classified into a
    /// situation whose row the table gives, merged into the observed status.
    pub(super) fn settle(&self, written: Option<(WriteKind, &WriteOutcome)>) -> Settlement {
        let situation = Situation::classify(&self.decision, written);
        let msg = written.map_or("", |(_, outcome)| outcome.message());
        match self.verdict(situation, msg) {
            Verdict::Untouched(requeue) => self.nothing(requeue),
            Verdict::Row(row) => self.finish(row),
        }
    }

    /// `resync`, when set, in place of a "none" requeue.
    pub(super) fn or_resync(&self, requeue: Requeue) -> Requeue {
        match (requeue, self.settings.resync) {
            (Requeue::AwaitChange, Some(every)) => Requeue::After(every),
            _ => requeue,
        }
    }

    /// When Degraded becomes due on transient failures: `degradedAfter` after
    /// ConfigurationApplied turned False (now, when it is not False). `None` is never: the
    /// deadline is past the end of representable time.
    pub(super) fn degraded_due(&self) -> Option<Timestamp> {
        let since = self.applied_false_since.unwrap_or(self.now);
        let after = SignedDuration::try_from(self.settings.degraded_after).ok()?;
        since.checked_add(after).ok()
    }

    /// The time ConfigurationApplied turned False, as Degraded messages print it: as written
    /// when it lies in the future or beyond the supported range (so the message does not
    /// change on every retry), `now` when it is not False yet.
    pub(super) fn since_text(&self) -> String {
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
    pub(super) fn backoff(&self, degraded_due: Option<Timestamp>) -> Duration {
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
            resource_version: None,
        }
    }

    /// Applies the row to the observed conditions; no status when nothing changed.
    fn finish(&self, row: Row<'_>) -> Settlement {
        let Row {
            addresses, requeue, ..
        } = row;
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
                resource_version: None,
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
            resource_version: self.snapshot.gateway.metadata.resource_version.clone(),
        }
    }
}
