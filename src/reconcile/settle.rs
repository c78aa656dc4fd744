//! Settling a plan: classify the situation, look up its row in the table, merge the row
//! into the observed conditions, derive the Events, and say when to look again.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::plan::{Accepted, Decision, Planned, ServerChanges};
use super::record::{WriteRecord, fingerprint, paths_fingerprint};
use super::settlement::{Requeue, Settlement};
use super::situation::Situation;
use super::table::{Row, Verdict};
use super::write::WriteKind;
use crate::conditions::{self, ACCEPTED, PROGRAMMED, TransitionTime, event_reason, status};
use crate::drift::{Enforcement, drift_owned};
use crate::events::{self, Event, EventType};
use crate::listeners::{GatewayProgrammed, listener_status};
use crate::outcome::WriteOutcome;
use crate::render::{generation_annotation, render, render_owned, uid_annotation};
use crate::wire::{Deployment, GatewayStatus};

/// Backoff bounds for transient failures.
const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);
/// Backoff bounds for rejections: a rejection can end without any event the controller
/// watches (an admission policy fixed, a quota raised).
const MIN_REJECTION_BACKOFF: Duration = Duration::from_secs(30);
const MAX_REJECTION_BACKOFF: Duration = Duration::from_secs(10 * 60);
/// The most of the drifted paths an `AdmissionChanged` Event names (bytes).
const MAX_CHANGED_PATHS: usize = 1024;

impl Planned<'_> {
    /// The settlement: the write and its outcome, when one was planned, classified into a
    /// situation whose row the table gives, merged into the observed status; with the write
    /// record and the `AdmissionChanged` Event of a write the API server answered.
    pub(super) fn settle(&self, written: Option<(WriteKind, &WriteOutcome)>) -> Settlement {
        let accepted = match &self.decision {
            Decision::Accepted(a) => Some(a),
            _ => None,
        };
        let stored = match written {
            Some((_, WriteOutcome::Stored(stored))) => Some(stored),
            _ => None,
        };
        // What the server made of our write, or the drift a record holds back.
        let changes = match (accepted, stored) {
            (Some(a), Some(stored)) => Some((self.server_changes(a, stored), stored)),
            _ => None,
        };
        // The annotation the server changed, and the generation the Deployment then names.
        let carried = |d: &Deployment| {
            d.annotation(&generation_annotation(self.settings))
                .and_then(|g| g.parse::<i64>().ok())
        };
        let identity: Option<(String, Option<i64>)> = match (&changes, accepted) {
            (Some((c, stored)), _) => c
                .identity_annotation
                .clone()
                .map(|key| (key, carried(stored))),
            (None, Some(a)) => self
                .identity_in(&a.held)
                .map(|key| (key, a.observed.as_ref().and_then(|o| o.carried))),
            _ => None,
        };
        let identity = identity.as_ref().map(|(key, c)| (key.as_str(), *c));
        let situation = Situation::classify(&self.decision, written, identity);
        let msg = written.map_or("", |(_, outcome)| outcome.message());
        let mut settlement = match self.verdict(situation, msg) {
            Verdict::Untouched(requeue) => self.nothing(requeue),
            Verdict::Row(row) => self.finish(row),
        };
        if let Some(a) = accepted {
            settlement.held_drift.clone_from(&a.held);
        }
        if let (Some(a), Some((changes, stored))) = (accepted, changes) {
            settlement.write_record = stored.generation().map(|generation| WriteRecord {
                generation,
                // The plan's own render when it made one (a create): the same arguments.
                fingerprint: a.rendered.unwrap_or_else(|| {
                    fingerprint(&render(
                        self.settings,
                        self.snapshot.gateway,
                        &a.validated,
                        self.snapshot.template,
                        None,
                    ))
                }),
                changed: paths_fingerprint(&changes.paths),
            });
            if !changes.paths.is_empty() {
                settlement.events.push(admission_changed(&changes.paths));
            }
        }
        settlement
    }

    /// The drift between what the crate wants and what the API server stored of its write,
    /// by the drift rules: what admission changed.
    fn server_changes(&self, a: &Accepted<'_>, stored: &Deployment) -> ServerChanges {
        let owned = render_owned(
            self.settings,
            self.snapshot.gateway,
            &a.validated,
            self.snapshot.template,
            Some(stored),
        );
        let enforcement = Enforcement::of(self.settings, a.configuration);
        let paths = drift_owned(&owned, stored, &enforcement);
        ServerChanges {
            identity_annotation: self.identity_in(&paths),
            paths,
        }
    }

    /// The generation or uid annotation key among drifted paths.
    fn identity_in(&self, paths: &[String]) -> Option<String> {
        if paths.is_empty() {
            return None;
        }
        [
            generation_annotation(self.settings),
            uid_annotation(self.settings),
        ]
        .into_iter()
        .find(|key| {
            paths.iter().any(|p| {
                p.strip_prefix("metadata.annotations[")
                    .and_then(|r| r.strip_suffix(']'))
                    == Some(key)
            })
        })
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
        if let Some(due) = degraded_due
            && let Ok(until_due) = Duration::try_from(due.duration_since(self.now))
            && !until_due.is_zero()
        {
            wait = wait.min(until_due);
        }
        wait
    }

    /// Time since ConfigurationApplied turned False, clamped to [30 s, 10 min], and never
    /// past `resync`.
    pub(super) fn rejection_backoff(&self) -> Duration {
        let since = self.applied_false_since.unwrap_or(self.now);
        let elapsed = Duration::try_from(self.now.duration_since(since)).unwrap_or(Duration::ZERO);
        let wait = elapsed.clamp(MIN_REJECTION_BACKOFF, MAX_REJECTION_BACKOFF);
        self.settings.resync.map_or(wait, |every| wait.min(every))
    }

    fn nothing(&self, requeue: Requeue) -> Settlement {
        Settlement::new(None, requeue)
    }

    /// Applies the row to the observed conditions, then settles the listeners (their
    /// `Programmed` follows the Gateway's); no status when nothing changed.
    fn finish(&self, row: Row<'_>) -> Settlement {
        let Row {
            addresses,
            listeners: listeners_owned,
            requeue,
            resync,
            ..
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
        // A listener's Programmed follows the Gateway's, as this reconcile leaves it.
        let listeners = listeners_owned
            .then(|| {
                let after = merged.as_deref().unwrap_or(&observed.conditions);
                let programmed = conditions::find(after, PROGRAMMED).map_or(
                    GatewayProgrammed {
                        status: status::UNKNOWN,
                        reason: conditions::reason::PENDING,
                    },
                    |c| GatewayProgrammed {
                        status: &c.status,
                        reason: &c.reason,
                    },
                );
                listener_status(
                    self.snapshot.gateway,
                    &self.attachment,
                    programmed,
                    self.generation,
                    self.now,
                )
            })
            .flatten();
        let addresses_owned = addresses.is_some();
        let unchanged = merged.is_none()
            && listeners.is_none()
            && addresses.is_none_or(|a| *a == observed.addresses);
        if unchanged {
            let mut settlement = Settlement::new(None, requeue);
            settlement.addresses_owned = addresses_owned;
            settlement.listeners_owned = listeners_owned;
            settlement.resync = resync;
            return settlement;
        }
        let merged = merged.unwrap_or_else(|| observed.conditions.clone());
        let events = events::transitions(&observed.conditions, &merged, &self.types);
        let status = Some(GatewayStatus {
            conditions: merged,
            addresses: addresses.unwrap_or(&observed.addresses).to_vec(),
            listeners: listeners.unwrap_or_else(|| observed.listeners.clone()),
            other: observed.other.clone(),
        });
        let mut settlement = Settlement::new(status, requeue);
        settlement.events = events;
        settlement.addresses_owned = addresses_owned;
        settlement.listeners_owned = listeners_owned;
        settlement.resource_version = self.snapshot.gateway.metadata.resource_version.clone();
        settlement.resync = resync;
        settlement
    }
}

/// The Warning Event of a write the API server changed: `the API server changed the LB
/// Deployment on write: PATHS`, the paths cut to 1 KiB (at a character boundary).
fn admission_changed(paths: &[String]) -> Event {
    let mut text = paths.join(", ");
    if text.len() > MAX_CHANGED_PATHS {
        let mut end = MAX_CHANGED_PATHS;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    Event {
        type_: EventType::Warning,
        reason: event_reason::ADMISSION_CHANGED.to_owned(),
        message: format!("the API server changed the LB Deployment on write: {text}"),
    }
}
