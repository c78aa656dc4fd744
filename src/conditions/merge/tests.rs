use super::*;
use crate::conditions::{ACCEPTED, ConditionTypes, PROGRAMMED};
use crate::conditions::{reason, status};
use crate::settings::Settings;

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

/// The lazy [`merge_changed`] against the eager merge it replaced (copy everything, apply
/// every change), kept here as the reference.
mod lazy {
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

#[test]
fn the_same_change_over_its_own_result_changes_nothing() {
    let types = ConditionTypes::new(&Settings::default()).unwrap();
    let set = Change::Set(Wanted::new(status::TRUE, reason::ACCEPTED, "Accepted"));
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let written = merge_changed(&[], &types, &[(ACCEPTED, set.clone())], 3, now).unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(
        merge_changed(&written, &types, &[(ACCEPTED, set)], 3, now),
        None
    );
}
