//! The condition vocabulary, and the bookkeeping of `status.conditions`.
//!
//! The crate owns four condition types (`D` is [`Settings::condition_domain`]):
//!
//! | type | polarity | present |
//! |---|---|---|
//! | `Accepted` | positive | always, once the Gateway is ours (within the 8-item limit, by priority) |
//! | `Programmed` | positive | always, once the Gateway is ours (idem) |
//! | `D/ConfigurationApplied` | positive | always, once the Gateway is ours (idem) |
//! | `D/Degraded` | negative | only while True (idem) |
//!
//! [`merge`] applies a set of changes to an observed condition list with apimachinery's
//! `SetStatusCondition` semantics: `lastTransitionTime` moves only when `status` changes,
//! reason, message and `observedGeneration` are updated in place, conditions the crate does
//! not own are never changed, removed or reordered, and new ones are appended.
//! [`merge_changed`] is the same merge that answers `None` when nothing would change; it
//! copies the list only once it meets a change, so a steady-state reconcile copies nothing.

use jiff::Timestamp;

use crate::error::InputError;
use crate::settings::{Settings, is_dns_subdomain, not_a_subdomain};
use crate::wire::Condition;

/// `Accepted`: the Gateway is ours and its parameters are valid.
pub const ACCEPTED: &str = "Accepted";
/// `Programmed`: the LB Deployment exists and is reconciled.
pub const PROGRAMMED: &str = "Programmed";
/// Name part of `D/ConfigurationApplied`: the Deployment carries the current
/// GatewayConfiguration generation.
pub const CONFIGURATION_APPLIED: &str = "ConfigurationApplied";
/// Name part of `D/Degraded`: the LB serves, but not as desired, and will not fix itself soon.
pub const DEGRADED: &str = "Degraded";

/// Condition status values.
pub mod status {
    /// The condition holds.
    pub const TRUE: &str = "True";
    /// The condition does not hold.
    pub const FALSE: &str = "False";
    /// Not known (yet).
    pub const UNKNOWN: &str = "Unknown";
}

/// Every reason the crate writes.
pub mod reason {
    /// `Accepted=True`.
    pub const ACCEPTED: &str = "Accepted";
    /// `Accepted=Unknown` (waiting for a controller); `Programmed`/`ConfigurationApplied`
    /// False while a write is retried at once.
    pub const PENDING: &str = "Pending";
    /// `Accepted`/`ConfigurationApplied` False: the parameters are invalid.
    pub const INVALID_PARAMETERS: &str = "InvalidParameters";
    /// `Programmed=True`.
    pub const PROGRAMMED: &str = "Programmed";
    /// `Programmed=False`: the Gateway cannot be programmed as it is.
    pub const INVALID: &str = "Invalid";
    /// `ConfigurationApplied=True`.
    pub const APPLIED: &str = "Applied";
    /// `ConfigurationApplied=False`: a transient write failure, retried with backoff.
    pub const APPLY_FAILED: &str = "ApplyFailed";
    /// `ConfigurationApplied`/`Degraded`: the API rejected the write for good.
    pub const APPLY_REJECTED: &str = "ApplyRejected";
    /// `Degraded=True`: transient failures have lasted `degradedAfter`.
    pub const APPLY_FAILING: &str = "ApplyFailing";
    /// `Degraded=True`: the Deployment's rollout exceeded its progress deadline.
    pub const ROLLOUT_STALLED: &str = "RolloutStalled";
}

/// The `Accepted=Unknown` message written when the Gateway is handed to another controller.
pub const WAITING_FOR_CONTROLLER: &str = "Waiting for controller";

/// The CRD's limit on `status.conditions`.
pub const MAX_CONDITIONS: usize = 8;
/// The API's limit on a condition message (characters).
pub const MAX_MESSAGE: usize = 32768;

/// The four condition types for one [`Settings::condition_domain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionTypes {
    /// `D/ConfigurationApplied`.
    pub configuration_applied: String,
    /// `D/Degraded`.
    pub degraded: String,
}

impl ConditionTypes {
    /// The types for these settings; fails when the domain makes an invalid condition type.
    ///
    /// ```
    /// let types = gateway_reconcile::conditions::ConditionTypes::new(&Default::default()).unwrap();
    /// assert_eq!(types.degraded, "meridio-2.nordix.org/Degraded");
    /// ```
    pub fn new(settings: &Settings) -> Result<Self, InputError> {
        let domain = settings.condition_domain.as_str();
        if !is_dns_subdomain(domain) {
            return Err(InputError::InvalidSetting {
                field: "conditionDomain",
                why: not_a_subdomain(domain),
            });
        }
        Ok(ConditionTypes {
            configuration_applied: format!("{domain}/{CONFIGURATION_APPLIED}"),
            degraded: format!("{domain}/{DEGRADED}"),
        })
    }

    /// True for the four types the crate owns.
    pub fn owns(&self, type_: &str) -> bool {
        type_ == ACCEPTED
            || type_ == PROGRAMMED
            || type_ == self.configuration_applied
            || type_ == self.degraded
    }
}

/// A condition the crate wants, before bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    /// One of [`reason`].
    pub reason: &'static str,
    /// The message (truncated to [`MAX_MESSAGE`] when written).
    pub message: String,
}

impl Wanted {
    /// A wanted condition.
    pub fn new(status: &'static str, reason: &'static str, message: impl Into<String>) -> Self {
        Wanted {
            status,
            reason,
            message: message.into(),
        }
    }
}

/// What to do with one owned condition type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
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

/// The first condition of this type.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
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
pub fn merge(
    observed: &[Condition],
    types: &ConditionTypes,
    changes: &[(&str, Change)],
    generation: i64,
    now: &str,
) -> Vec<Condition> {
    merge_lazily(observed, types, changes, generation, &|| now.to_owned())
        .unwrap_or_else(|| observed.to_vec())
}

/// [`merge`], or `None` when its result would equal `observed`: the list is only copied
/// once a change is found, and `now` only formatted ([`timestamp`]) when a condition needs
/// it, so the steady state copies and formats nothing.
///
/// ```
/// use gateway_reconcile::conditions::{
///     Change, ConditionTypes, Wanted, merge_changed, reason, status,
/// };
///
/// let types = ConditionTypes::new(&Default::default()).unwrap();
/// let set = Change::Set(Wanted::new(status::TRUE, reason::ACCEPTED, "Accepted"));
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
/// let written = merge_changed(&[], &types, &[("Accepted", set.clone())], 3, now).unwrap();
/// // The same change over its own result changes nothing.
/// assert_eq!(merge_changed(&written, &types, &[("Accepted", set)], 3, now), None);
/// ```
pub fn merge_changed(
    observed: &[Condition],
    types: &ConditionTypes,
    changes: &[(&str, Change)],
    generation: i64,
    now: Timestamp,
) -> Option<Vec<Condition>> {
    merge_lazily(observed, types, changes, generation, &|| timestamp(now))
}

/// The merge, with `now` (the condition timestamp) asked for only when it is written.
fn merge_lazily(
    observed: &[Condition],
    types: &ConditionTypes,
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
/// priority: `Accepted`, `Programmed` (both required by the Gateway API),
/// `D/ConfigurationApplied`, `D/Degraded`. An owned condition that loses its place is removed,
/// whether it was observed or just appended; the order of the others does not change.
fn within_limit(list: &mut Vec<Condition>, types: &ConditionTypes) {
    let foreign = list.iter().filter(|c| !types.owns(&c.type_)).count();
    let room = MAX_CONDITIONS.saturating_sub(foreign);
    let priority = [
        ACCEPTED,
        PROGRAMMED,
        types.configuration_applied.as_str(),
        types.degraded.as_str(),
    ];
    let mut kept = [false; 4];
    let mut placed = 0;
    for (i, type_) in priority.iter().enumerate() {
        if placed < room && list.iter().any(|c| c.type_ == *type_) {
            kept[i] = true;
            placed += 1;
        }
    }
    list.retain(|c| {
        priority
            .iter()
            .position(|t| *t == c.type_)
            .is_none_or(|i| kept.get(i).copied().unwrap_or(false))
    });
}

/// `observed` without the second and later conditions of an owned type, or `None` when it
/// has none.
fn without_owned_duplicates(
    observed: &[Condition],
    types: &ConditionTypes,
) -> Option<Vec<Condition>> {
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
pub fn is_stale(observed: &[Condition], types: &ConditionTypes, generation: i64) -> bool {
    observed
        .iter()
        .any(|c| types.owns(&c.type_) && c.observed_generation.is_some_and(|g| g > generation))
}

/// What a condition's `lastTransitionTime` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransitionTime {
    /// A time within the supported range.
    At(Timestamp),
    /// An RFC 3339 time the API server accepts but [`Timestamp`] cannot hold (after
    /// 9999-12-30T22:00:00Z): it counts as now, and is kept as written.
    OutOfRange,
    /// Not a time at all (only a hand-written snapshot has one): it counts as now, and is
    /// repaired when the condition is next written.
    Invalid,
}

/// Reads a condition's `lastTransitionTime`.
///
/// ```
/// use gateway_reconcile::conditions::{TransitionTime, transition_time};
/// assert!(matches!(transition_time("2026-01-01T00:00:00Z"), TransitionTime::At(_)));
/// assert_eq!(transition_time("9999-12-31T23:59:59Z"), TransitionTime::OutOfRange);
/// assert_eq!(transition_time("yesterday"), TransitionTime::Invalid);
/// ```
pub fn transition_time(text: &str) -> TransitionTime {
    if let Ok(t) = text.parse::<Timestamp>() {
        return TransitionTime::At(t);
    }
    // A date, a time and an offset that only fail as a timestamp are out of its range.
    match jiff::fmt::temporal::Pieces::parse(text) {
        Ok(p)
            if p.time().is_some() && p.offset().is_some() && p.time_zone_annotation().is_none() =>
        {
            TransitionTime::OutOfRange
        }
        _ => TransitionTime::Invalid,
    }
}

fn is_invalid_time(text: &str) -> bool {
    transition_time(text) == TransitionTime::Invalid
}

/// `now` as a condition timestamp: RFC 3339, UTC, second precision.
pub fn timestamp(now: Timestamp) -> String {
    Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// A message cut to the API's limit, on a character boundary.
pub fn truncate(message: &str) -> String {
    cut(message).to_owned()
}

/// The part of `message` that [`truncate`] keeps.
fn cut(message: &str) -> &str {
    match message.char_indices().nth(MAX_MESSAGE) {
        Some((at, _)) => message.get(..at).unwrap_or(message),
        None => message,
    }
}

/// True when `reason` passes the API's pattern `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
pub fn is_valid_reason(reason: &str) -> bool {
    let b = reason.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    b.len() <= 1024
        && first.is_ascii_alphabetic()
        && (b.len() == 1 || last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// True when `type_` is a valid condition type: a qualified name (optional DNS-subdomain
/// prefix and `/`, then a name of at most 63 characters), at most 316 characters.
pub fn is_valid_type(type_: &str) -> bool {
    if type_.len() > 316 {
        return false;
    }
    let (prefix, name) = match type_.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, type_),
    };
    prefix.is_none_or(is_dns_subdomain) && is_qualified_name_part(name)
}

fn is_qualified_name_part(name: &str) -> bool {
    let b = name.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    b.len() <= 63
        && first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types() -> ConditionTypes {
        ConditionTypes::new(&Settings::default()).unwrap()
    }

    fn cond(type_: &str, status: &str, ltt: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            observed_generation: Some(1),
            last_transition_time: ltt.into(),
            reason: "R".into(),
            message: "m".into(),
        }
    }

    const T0: &str = "2026-01-01T00:00:00Z";
    const T1: &str = "2026-01-01T00:05:00Z";

    #[test]
    fn transition_time_moves_only_with_status() {
        let observed = vec![cond(PROGRAMMED, "True", T0)];
        let same = merge(
            &observed,
            &types(),
            &[(
                PROGRAMMED,
                Change::Set(Wanted::new("True", "Programmed", "new")),
            )],
            2,
            T1,
        );
        assert_eq!(same[0].last_transition_time, T0);
        assert_eq!(same[0].message, "new");
        assert_eq!(same[0].reason, "Programmed");
        assert_eq!(same[0].observed_generation, Some(2));
        let flipped = merge(
            &observed,
            &types(),
            &[(
                PROGRAMMED,
                Change::Set(Wanted::new("False", "Invalid", "x")),
            )],
            2,
            T1,
        );
        assert_eq!(flipped[0].last_transition_time, T1);
    }

    #[test]
    fn foreign_conditions_stay_in_place_and_new_ones_are_appended() {
        let observed = vec![
            cond("Foo", "True", T0),
            cond(ACCEPTED, "True", T0),
            cond("Bar", "False", T0),
        ];
        let t = types();
        let out = merge(
            &observed,
            &t,
            &[
                (ACCEPTED, Change::Set(Wanted::new("True", "Accepted", "a"))),
                (
                    PROGRAMMED,
                    Change::Set(Wanted::new("True", "Programmed", "p")),
                ),
                (&t.degraded, Change::Remove),
            ],
            1,
            T1,
        );
        let order: Vec<&str> = out.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(order, ["Foo", ACCEPTED, "Bar", PROGRAMMED]);
        assert_eq!(out[0], observed[0]);
        assert_eq!(out[2], observed[2]);
        assert_eq!(out[3].last_transition_time, T1);
    }

    #[test]
    fn keep_and_remove() {
        let t = types();
        let observed = vec![
            cond(&t.degraded, "True", T0),
            cond(&t.configuration_applied, "False", T0),
        ];
        let kept = merge(&observed, &t, &[(&t.degraded, Change::Keep)], 5, T1);
        assert_eq!(kept, observed);
        let removed = merge(&observed, &t, &[(&t.degraded, Change::Remove)], 5, T1);
        assert_eq!(removed, vec![observed[1].clone()]);
    }

    #[test]
    fn duplicate_owned_types_collapse_to_the_first() {
        let observed = vec![
            cond(PROGRAMMED, "True", T0),
            cond("X", "True", T0),
            cond(PROGRAMMED, "False", T1),
        ];
        let out = merge(&observed, &types(), &[], 1, T1);
        assert_eq!(out, vec![observed[0].clone(), observed[1].clone()]);
        let dup_foreign = vec![cond("X", "True", T0), cond("X", "False", T0)];
        assert_eq!(merge(&dup_foreign, &types(), &[], 1, T1), dup_foreign);
    }

    #[test]
    fn eight_item_limit_drops_custom_conditions_never_foreign() {
        let t = types();
        let observed: Vec<Condition> = (0..6).map(|i| cond(&format!("F{i}"), "True", T0)).collect();
        let out = merge(
            &observed,
            &t,
            &[
                (ACCEPTED, Change::Set(Wanted::new("True", "Accepted", "a"))),
                (
                    PROGRAMMED,
                    Change::Set(Wanted::new("True", "Programmed", "p")),
                ),
                (
                    &t.configuration_applied,
                    Change::Set(Wanted::new("True", "Applied", "c")),
                ),
                (
                    &t.degraded,
                    Change::Set(Wanted::new("True", "RolloutStalled", "d")),
                ),
            ],
            1,
            T1,
        );
        assert_eq!(out.len(), 8);
        assert!(out[..6].iter().zip(&observed).all(|(a, b)| a == b));
        assert_eq!(out[6].type_, ACCEPTED);
        assert_eq!(out[7].type_, PROGRAMMED);
    }

    fn all_four(t: &ConditionTypes) -> Vec<(&str, Change)> {
        vec![
            (ACCEPTED, Change::Set(Wanted::new("True", "Accepted", "a"))),
            (
                PROGRAMMED,
                Change::Set(Wanted::new("True", "Programmed", "p")),
            ),
            (
                t.configuration_applied.as_str(),
                Change::Set(Wanted::new("True", "Applied", "c")),
            ),
            (t.degraded.as_str(), Change::Remove),
        ]
    }

    fn foreign(n: usize) -> Vec<Condition> {
        (0..n).map(|i| cond(&format!("F{i}"), "True", T0)).collect()
    }

    fn types_of(list: &[Condition]) -> Vec<&str> {
        list.iter().map(|c| c.type_.as_str()).collect()
    }

    #[test]
    fn a_leftover_custom_condition_gives_way_to_programmed() {
        // 6 foreign conditions and a ConfigurationApplied left from an earlier reconcile: the
        // two places left go to Accepted and Programmed, ConfigurationApplied is removed.
        let t = types();
        let mut observed = foreign(6);
        observed.push(cond(&t.configuration_applied, "True", T0));
        let out = merge(&observed, &t, &all_four(&t), 1, T1);
        assert_eq!(
            types_of(&out),
            ["F0", "F1", "F2", "F3", "F4", "F5", ACCEPTED, PROGRAMMED]
        );
        assert!(out[..6].iter().zip(&observed).all(|(a, b)| a == b));
    }

    #[test]
    fn owned_conditions_keep_their_place_by_priority() {
        let t = types();
        // 5 foreign, then Degraded and ConfigurationApplied observed: 3 places for 4 owned.
        let mut observed = foreign(5);
        observed.push(cond(&t.degraded, "True", T0));
        observed.push(cond(&t.configuration_applied, "False", T0));
        let mut changes = all_four(&t);
        changes[3].1 = Change::Set(Wanted::new("True", "ApplyFailing", "d"));
        let out = merge(&observed, &t, &changes, 1, T1);
        assert_eq!(
            types_of(&out),
            [
                "F0",
                "F1",
                "F2",
                "F3",
                "F4",
                t.configuration_applied.as_str(),
                ACCEPTED,
                PROGRAMMED
            ]
        );
    }

    #[test]
    fn a_snapshot_over_the_limit_is_written_back_within_it() {
        let t = types();
        // Hand-written: 7 foreign and three owned, nothing to change otherwise.
        let mut observed = foreign(4);
        observed.insert(1, cond(PROGRAMMED, "True", T0));
        observed.push(cond(&t.configuration_applied, "True", T0));
        observed.extend(foreign(3).into_iter().map(|mut c| {
            c.type_ = format!("G{}", c.type_);
            c
        }));
        observed.push(cond(ACCEPTED, "True", T0));
        assert_eq!(observed.len(), 10);
        let out = merge_changed(&observed, &t, &[], 1, T1.parse().unwrap()).unwrap();
        // One place left: Accepted keeps it, wherever it stood.
        assert_eq!(
            types_of(&out),
            ["F0", "F1", "F2", "F3", "GF0", "GF1", "GF2", ACCEPTED]
        );
        // Foreign ones alone over the limit: every owned one goes, no foreign one.
        let mut observed = foreign(9);
        observed.push(cond(ACCEPTED, "True", T0));
        let out = merge(&observed, &t, &all_four(&t), 1, T1);
        assert_eq!(out, foreign(9));
        // ... and with nothing owned there is nothing to write.
        assert_eq!(
            merge_changed(&foreign(9), &t, &all_four(&t), 1, T1.parse().unwrap()),
            None
        );
    }

    #[test]
    fn out_of_range_transition_times_are_kept_invalid_ones_repaired() {
        let t = types();
        let set = [(
            PROGRAMMED,
            Change::Set(Wanted::new("True", "Programmed", "p")),
        )];
        let far = cond(PROGRAMMED, "True", "9999-12-31T23:59:59Z");
        let out = merge(std::slice::from_ref(&far), &t, &set, 1, T1);
        assert_eq!(out[0].last_transition_time, "9999-12-31T23:59:59Z");
        let bad = cond(PROGRAMMED, "True", "not a time");
        let out = merge(&[bad], &t, &set, 1, T1);
        assert_eq!(out[0].last_transition_time, T1);
    }

    #[test]
    fn stale_snapshot_is_detected_on_owned_conditions_only() {
        let t = types();
        let mut c = cond(PROGRAMMED, "True", T0);
        c.observed_generation = Some(3);
        assert!(is_stale(std::slice::from_ref(&c), &t, 2));
        assert!(!is_stale(std::slice::from_ref(&c), &t, 3));
        c.type_ = "Foreign".into();
        assert!(!is_stale(&[c], &t, 2));
    }

    #[test]
    fn messages_are_truncated_on_a_char_boundary() {
        let long = "é".repeat(MAX_MESSAGE + 10);
        let cut = truncate(&long);
        assert_eq!(cut.chars().count(), MAX_MESSAGE);
        assert_eq!(truncate("short"), "short");
    }

    #[test]
    fn timestamps_have_second_precision() {
        let now: Timestamp = "2026-01-01T00:00:01.987Z".parse().unwrap();
        assert_eq!(timestamp(now), "2026-01-01T00:00:01Z");
    }

    #[test]
    fn api_validation_rules() {
        for r in [
            reason::ACCEPTED,
            reason::PENDING,
            reason::INVALID_PARAMETERS,
            reason::PROGRAMMED,
            reason::INVALID,
            reason::APPLIED,
            reason::APPLY_FAILED,
            reason::APPLY_REJECTED,
            reason::APPLY_FAILING,
            reason::ROLLOUT_STALLED,
        ] {
            assert!(is_valid_reason(r), "{r}");
        }
        for bad in ["", "1abc", "a-b", "ab,", "a b"] {
            assert!(!is_valid_reason(bad), "{bad}");
        }
        let t = types();
        for ok in [ACCEPTED, PROGRAMMED, &t.configuration_applied, &t.degraded] {
            assert!(is_valid_type(ok), "{ok}");
        }
        for bad in ["", "Bad Type", "UPPER.io/X", "a/", "/x"] {
            assert!(!is_valid_type(bad), "{bad}");
        }
        let bad_domain = Settings {
            condition_domain: "Not A Domain".into(),
            ..Settings::default()
        };
        assert_eq!(
            ConditionTypes::new(&bad_domain).unwrap_err().to_string(),
            "settings: conditionDomain: \"Not A Domain\" is not a DNS subdomain (lowercase, at most 253 characters)"
        );
    }
}

/// The lazy [`merge_changed`] against the eager merge it replaced (copy everything, apply
/// every change), kept here as the reference.
#[cfg(test)]
mod lazy_merge_tests {
    use super::*;
    use proptest::prelude::*;

    fn eager(
        observed: &[Condition],
        types: &ConditionTypes,
        changes: &[(&str, Change)],
        generation: i64,
        now: &str,
    ) -> Vec<Condition> {
        let mut seen_owned: Vec<&str> = Vec::new();
        let mut out: Vec<Condition> = Vec::new();
        for c in observed {
            if types.owns(&c.type_) {
                if seen_owned.contains(&c.type_.as_str()) {
                    continue;
                }
                seen_owned.push(&c.type_);
            }
            out.push(c.clone());
        }
        for (type_, change) in changes {
            let pos = out.iter().position(|c| c.type_ == *type_);
            match (change, pos) {
                (Change::Keep, _) | (Change::Remove, None) | (Change::Refresh, None) => {}
                (Change::Refresh, Some(i)) => out[i].observed_generation = Some(generation),
                (Change::Remove, Some(i)) => {
                    out.remove(i);
                }
                (Change::Set(w), Some(i)) => {
                    let c = &mut out[i];
                    if c.status != w.status || is_invalid_time(&c.last_transition_time) {
                        c.status = w.status.to_owned();
                        c.last_transition_time = now.to_owned();
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
                        last_transition_time: now.to_owned(),
                        reason: w.reason.to_owned(),
                        message: truncate(&w.message),
                    });
                }
            }
        }
        // Over the limit: foreign ones stay, owned ones fill what room is left by priority.
        if out.len() > MAX_CONDITIONS {
            let foreign = out.iter().filter(|c| !types.owns(&c.type_)).count();
            let mut room = MAX_CONDITIONS.saturating_sub(foreign);
            let mut keep: Vec<String> = Vec::new();
            for type_ in [
                ACCEPTED,
                PROGRAMMED,
                types.configuration_applied.as_str(),
                types.degraded.as_str(),
            ] {
                if room > 0 && out.iter().any(|c| c.type_ == type_) {
                    keep.push(type_.to_owned());
                    room -= 1;
                }
            }
            out.retain(|c| !types.owns(&c.type_) || keep.contains(&c.type_));
        }
        out
    }

    const TYPES: [&str; 6] = [
        ACCEPTED,
        PROGRAMMED,
        "meridio-2.nordix.org/ConfigurationApplied",
        "meridio-2.nordix.org/Degraded",
        "example.com/A",
        "example.com/B",
    ];
    const STATUSES: [&str; 3] = [status::TRUE, status::FALSE, status::UNKNOWN];
    const REASONS: [&str; 3] = [reason::ACCEPTED, reason::PENDING, reason::APPLY_FAILED];
    const MESSAGES: [&str; 2] = ["a", "b"];
    const TIMES: [&str; 3] = ["2025-01-01T00:00:00Z", "not a time", "9999-12-31T23:59:59Z"];

    fn condition() -> impl Strategy<Value = Condition> {
        (
            0..6usize,
            0..3usize,
            0..3usize,
            0..2usize,
            0..3usize,
            0..4i64,
        )
            .prop_map(|(t, s, r, m, l, g)| Condition {
                type_: TYPES[t].to_owned(),
                status: STATUSES[s].to_owned(),
                observed_generation: (g > 0).then_some(g),
                last_transition_time: TIMES[l].to_owned(),
                reason: REASONS[r].to_owned(),
                message: MESSAGES[m].to_owned(),
            })
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            Just(Change::Keep),
            Just(Change::Remove),
            Just(Change::Refresh),
            (0..3usize, 0..3usize, 0..2usize).prop_map(|(s, r, m)| Change::Set(Wanted::new(
                STATUSES[s],
                REASONS[r],
                MESSAGES[m]
            ))),
        ]
    }

    proptest! {
        #[test]
        fn lazy_merge_equals_the_eager_merge(
            observed in proptest::collection::vec(condition(), 0..12),
            changes in proptest::collection::vec((0..4usize, change()), 0..5),
            generation in 1..4i64,
        ) {
            let types = ConditionTypes::new(&Settings::default()).unwrap();
            let changes: Vec<(&str, Change)> =
                changes.into_iter().map(|(t, c)| (TYPES[t], c)).collect();
            let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
            let expected = eager(&observed, &types, &changes, generation, &timestamp(now));
            let lazy = merge_changed(&observed, &types, &changes, generation, now);
            prop_assert_eq!(lazy.is_none(), expected == observed);
            prop_assert_eq!(lazy.unwrap_or_else(|| observed.clone()), expected);
        }
    }
}
