//! The bookkeeping of `status.conditions`, with apimachinery's `SetStatusCondition`
//! semantics: `lastTransitionTime` moves only when `status` changes, reason, message and
//! `observedGeneration` are updated in place, conditions the crate does not own are never
//! changed, removed or reordered, and new ones are appended. [`merge_changed`] answers
//! `None` when nothing would change; it copies the list only once it meets a change, so a
//! steady-state reconcile copies nothing.

use std::borrow::Cow;

use jiff::Timestamp;

use super::{MAX_CONDITIONS, MAX_MESSAGE, TransitionTime, timestamp, transition_time};
use crate::wire::Condition;

/// A condition the crate wants, before bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wanted {
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    /// One of [`reason`].
    pub reason: &'static str,
    /// The message (truncated to [`MAX_MESSAGE`] when written); a literal one is borrowed,
    /// so that a steady reconcile allocates nothing for it.
    pub message: Cow<'static, str>,
}

impl Wanted {
    /// A wanted condition.
    pub(crate) fn new(
        status: &'static str,
        reason: &'static str,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Wanted {
            status,
            reason,
            message: message.into(),
        }
    }
}

/// What to do with one owned condition type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Set it (create or update in place).
    Set(Wanted),
    /// Remove it if present.
    Remove,
    /// Leave it exactly as observed.
    Keep,
    /// Keep status, reason and message, but record the current generation (a condition the
    /// crate still vouches for, e.g. `Degraded` across a conflicting retry).
    Refresh,
}

/// The condition types one list's owner owns, ranked for the 8-item limit: the Gateway's
/// four ([`ConditionTypes`](super::ConditionTypes)), a listener's three
/// ([`ListenerTypes`](super::ListenerTypes)).
pub(crate) trait Owned {
    /// The rank of an owned type (0 is kept first), `None` for a type not owned.
    fn rank(&self, type_: &str) -> Option<usize>;

    /// True for an owned type.
    fn owns(&self, type_: &str) -> bool {
        self.rank(type_).is_some()
    }
}

/// The first condition of this type.
pub(crate) fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Applies `changes` (owned type → change, in the order new ones are appended) to the
/// observed list. `now` is the `lastTransitionTime` of a condition whose status changes.
///
/// A second condition of an owned type (which a list-map API would never return) is dropped;
/// duplicates of foreign types are left alone. A list longer than [`MAX_CONDITIONS`] keeps
/// every foreign condition and as many owned ones as fit, by priority (`Accepted`,
/// `Programmed`, `D/ConfigurationApplied`, `D/Degraded`); a foreign condition is never
/// dropped, even when the foreign ones alone pass the limit.
#[cfg(test)]
pub(crate) fn merge(
    observed: &[Condition],
    types: &impl Owned,
    changes: &[(&str, Change)],
    generation: i64,
    now: &str,
) -> Vec<Condition> {
    merge_lazily(observed, types, changes, generation, &|| now.to_owned())
        .unwrap_or_else(|| observed.to_vec())
}

/// The merge (`merge` in the tests, which apply every change eagerly), or `None` when
/// its result would equal `observed`: the list is only copied once a change is found, and
/// `now` only formatted ([`timestamp`]) when a condition needs it, so the steady state
/// copies and formats nothing.
pub(crate) fn merge_changed(
    observed: &[Condition],
    types: &impl Owned,
    changes: &[(&str, Change)],
    generation: i64,
    now: Timestamp,
) -> Option<Vec<Condition>> {
    merge_lazily(observed, types, changes, generation, &|| timestamp(now))
}

/// The merge, with `now` (the condition timestamp) asked for only when it is written.
fn merge_lazily(
    observed: &[Condition],
    types: &dyn Owned,
    changes: &[(&str, Change)],
    generation: i64,
    now: &dyn Fn() -> String,
) -> Option<Vec<Condition>> {
    let mut out = without_owned_duplicates(observed, types);
    for (type_, change) in changes {
        let current = out.as_deref().unwrap_or(observed);
        let pos = current.iter().position(|c| c.type_ == *type_);
        if is_noop(change, pos.and_then(|i| current.get(i)), generation) {
            continue;
        }
        let out = out.get_or_insert_with(|| observed.to_vec());
        match (change, pos.filter(|i| *i < out.len())) {
            (Change::Keep, _) | (Change::Remove, None) | (Change::Refresh, None) => {}
            (Change::Refresh, Some(i)) => out[i].observed_generation = Some(generation),
            (Change::Remove, Some(i)) => {
                out.remove(i);
            }
            (Change::Set(w), Some(i)) => {
                let c = &mut out[i];
                // A transition time the API would refuse (only a hand-made snapshot has
                // one) is repaired rather than written back; one out of the supported range
                // is valid to the API and kept as written.
                if c.status != w.status || is_invalid_time(&c.last_transition_time) {
                    c.status = w.status.to_owned();
                    c.last_transition_time = now();
                }
                c.reason = w.reason.to_owned();
                c.message = truncate(&w.message);
                c.observed_generation = Some(generation);
            }
            (Change::Set(w), None) => {
                out.push(Condition {
                    type_: (*type_).to_owned(),
                    status: w.status.to_owned(),
                    observed_generation: Some(generation),
                    last_transition_time: now(),
                    reason: w.reason.to_owned(),
                    message: truncate(&w.message),
                });
            }
        }
    }
    // A list over the limit (after appending, or as a hand-written snapshot gave it) is
    // brought back within it, even when no change was asked for.
    if out.as_deref().unwrap_or(observed).len() > MAX_CONDITIONS {
        within_limit(out.get_or_insert_with(|| observed.to_vec()), types);
    }
    let out = out?;
    (out != observed).then_some(out)
}

/// Keeps every foreign condition and as many owned ones as fit [`MAX_CONDITIONS`], by
/// rank (the Gateway's: `Accepted`, `Programmed` (both required by the Gateway API),
/// `D/ConfigurationApplied`, `D/Degraded`; a listener's: `Accepted`, `Programmed`,
/// `ResolvedRefs`). An owned condition that loses its place is removed, whether it was
/// observed or just appended; the order of the others does not change.
fn within_limit(list: &mut Vec<Condition>, types: &dyn Owned) {
    let foreign = list.iter().filter(|c| !types.owns(&c.type_)).count();
    let room = MAX_CONDITIONS.saturating_sub(foreign);
    // At most one condition of each owned type is left here: the ranks are few.
    let mut kept: Vec<usize> = list.iter().filter_map(|c| types.rank(&c.type_)).collect();
    kept.sort_unstable();
    kept.dedup();
    kept.truncate(room);
    list.retain(|c| types.rank(&c.type_).is_none_or(|rank| kept.contains(&rank)));
}

/// `observed` without the second and later conditions of an owned type, or `None` when it
/// has none.
fn without_owned_duplicates(observed: &[Condition], types: &dyn Owned) -> Option<Vec<Condition>> {
    // At most four owned types: `seen` stays short, however long the list.
    let mut seen: Vec<&str> = Vec::with_capacity(4);
    let duplicated = observed.iter().filter(|c| types.owns(&c.type_)).any(|c| {
        let again = seen.contains(&c.type_.as_str());
        seen.push(&c.type_);
        again
    });
    if !duplicated {
        return None;
    }
    let mut seen_owned: Vec<&str> = Vec::with_capacity(4);
    let mut out = Vec::with_capacity(observed.len());
    for c in observed {
        if types.owns(&c.type_) {
            if seen_owned.contains(&c.type_.as_str()) {
                continue;
            }
            seen_owned.push(&c.type_);
        }
        out.push(c.clone());
    }
    Some(out)
}

/// True when `change` leaves `current` (the condition of its type, if any) as it is.
fn is_noop(change: &Change, current: Option<&Condition>, generation: i64) -> bool {
    match (change, current) {
        (Change::Keep, _) | (Change::Remove | Change::Refresh, None) => true,
        (Change::Set(_), None) | (Change::Remove, Some(_)) => false,
        (Change::Refresh, Some(c)) => c.observed_generation == Some(generation),
        (Change::Set(w), Some(c)) => {
            c.status == w.status
                && c.reason == w.reason
                && c.message == cut(&w.message)
                && c.observed_generation == Some(generation)
                && !is_invalid_time(&c.last_transition_time)
        }
    }
}

/// True when an owned condition was computed from a newer Gateway than the snapshot.
pub(crate) fn is_stale(observed: &[Condition], types: &impl Owned, generation: i64) -> bool {
    observed
        .iter()
        .any(|c| types.owns(&c.type_) && c.observed_generation.is_some_and(|g| g > generation))
}

fn is_invalid_time(text: &str) -> bool {
    transition_time(text) == TransitionTime::Invalid
}

/// A message cut to the API's limit, on a character boundary.
pub(crate) fn truncate(message: &str) -> String {
    cut(message).to_owned()
}

/// The part of `message` that [`truncate`] keeps.
fn cut(message: &str) -> &str {
    match message.char_indices().nth(MAX_MESSAGE) {
        Some((at, _)) => message.get(..at).unwrap_or(message),
        None => message,
    }
}

#[cfg(test)]
mod tests;
