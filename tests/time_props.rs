//! SPEC §6 on time: no input time or duration makes plan or settle fail, the requeue stays
//! within its bounds, and Degraded is never due before `degradedAfter` has passed.

mod common;

use std::time::Duration;

use common::*;
use gateway_reconcile::wire::Condition;
use gateway_reconcile::{FailureClass, Plan, Requeue, Settings, Snapshot, WriteOutcome, plan};
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

const MAX_BACKOFF: Duration = Duration::from_secs(300);
const MIN_REJECTION_BACKOFF: Duration = Duration::from_secs(30);
const MAX_REJECTION_BACKOFF: Duration = Duration::from_secs(600);
const YEAR: u64 = 365 * 24 * 60 * 60;

/// Any representable time, with its ends, the seconds next to them and sub-second parts
/// drawn often.
/// A time as a condition carries it: RFC 3339, UTC, to the second.
fn condition_time(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

fn any_time() -> impl Strategy<Value = Timestamp> {
    let (min, max) = (Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    let near = |lo: i64, hi: i64| {
        (lo..=hi, 0..1_000_000_000i32)
            .prop_filter_map("representable", |(s, n)| Timestamp::new(s, n).ok())
    };
    prop_oneof![
        Just(Timestamp::MIN),
        Just(Timestamp::MAX),
        near(min, min + 400),
        near(max - 400, max),
        near(min, max),
        near(1_700_000_000, 1_900_000_000),
    ]
}

/// A `lastTransitionTime` as a Gateway's status may carry it: near `now` (before or after),
/// at an end of the range, past the supported range, or not a time.
fn transition_text() -> impl Strategy<Value = (Option<i64>, String)> {
    prop_oneof![
        // An offset from now, in seconds (applied when the test knows now).
        (-2 * YEAR as i64..2 * YEAR as i64).prop_map(|d| (Some(d), String::new())),
        any_time().prop_map(|t| (None, condition_time(t))),
        Just((None, "9999-12-31T23:59:59Z".to_owned())),
        Just((None, "9999-12-30T22:00:00Z".to_owned())),
        Just((None, "0001-01-01T00:00:00Z".to_owned())),
        Just((None, "yesterday".to_owned())),
    ]
}

fn outcome() -> impl Strategy<Value = Option<WriteOutcome>> {
    prop_oneof![
        Just(None),
        Just(Some(WriteOutcome::Applied)),
        Just(api_error(409, "Conflict", "modified")),
        Just(api_error(409, "AlreadyExists", "exists")),
        Just(api_error(404, "NotFound", "gone")),
        Just(api_error(422, "Invalid", "bad")),
        Just(api_error(503, "ServiceUnavailable", "down")),
        Just(Some(WriteOutcome::from_parts(None, "", "refused"))),
    ]
}

fn duration_up_to(max: u64) -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::from_secs(max)),
        (0..=max, 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        (0..=600u64).prop_map(Duration::from_secs),
    ]
}

fn owned(type_: &str, status: &str, ltt: &str) -> Condition {
    let mut c = condition(type_, "R", "m", ltt);
    c.status = status.into();
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn time_never_fails_and_requeue_and_degraded_keep_their_bounds(
        now in any_time(),
        (offset, written) in transition_text(),
        applied_false in any::<bool>(),
        degraded_before in any::<bool>(),
        degraded_after in duration_up_to(YEAR),
        resync in proptest::option::of(duration_up_to(YEAR)),
        update in any::<bool>(),
        outcome in outcome(),
    ) {
        let mut w = World::healthy();
        if update {
            w.edit_configuration();
        }
        let ltt = match offset {
            Some(d) => now
                .checked_add(SignedDuration::from_secs(d))
                .map_or_else(|_| "9999-12-31T23:59:59Z".to_owned(), condition_time),
            None => written,
        };
        let mut conditions = w.gateway.status.conditions.clone();
        conditions.retain(|c| c.type_ != APPLIED && c.type_ != DEGRADED);
        let status = if applied_false { "False" } else { "True" };
        conditions.push(owned(APPLIED, status, &ltt));
        if degraded_before {
            conditions.push(owned(DEGRADED, "True", &ltt));
        }
        w.gateway.status.conditions = conditions;
        w.settings = Settings {
            degraded_after,
            resync: resync.filter(|r| *r >= Duration::from_secs(1)),
            ..Settings::default()
        };

        let planned = || {
            let snapshot = Snapshot::new(&w.gateway, &w.template)
                .with_gateway_class(w.class.as_ref())
                .with_configuration(w.configuration.as_ref())
                .with_deployment(w.deployment.as_ref());
            plan(&w.settings, snapshot, now).expect("valid settings plan")
        };
        // `None`: only a plan with nothing to write is settled.
        let outcome_class = outcome.as_ref().and_then(WriteOutcome::class);
        let settlement = match (planned(), outcome) {
            (Plan::Write(pending), Some(outcome)) => {
                // Taking the write out and settling what awaits its outcome is the same
                // settlement as settling the pending write.
                let Plan::Write(again) = planned() else {
                    return Err(TestCaseError::fail("a second plan of one snapshot differs"));
                };
                let kind = pending.write().kind();
                let expected = pending.write().clone();
                let (write, awaiting) = again.into_write();
                prop_assert_eq!(&write, &expected);
                prop_assert_eq!(awaiting.kind(), kind);
                let taken = awaiting.settle(outcome.clone());
                // With the API server's answer of what it stored (a write record, maybe an
                // `AdmissionChanged` Event), the write taken out settles as the pending one.
                let mut stored = expected.desired().to_json();
                stored["metadata"]["generation"] = 3.into();
                stored["metadata"]["labels"]["admission"] = "added".into();
                let stored = serde_json::from_value(stored)
                    .map_err(|e| TestCaseError::fail(format!("stored Deployment: {e}")))?;
                let stored = WriteOutcome::Stored(stored);
                let (Plan::Write(third), Plan::Write(fourth)) = (planned(), planned()) else {
                    return Err(TestCaseError::fail("a later plan of one snapshot differs"));
                };
                let (_, awaiting) = third.into_write();
                prop_assert_eq!(awaiting.settle(stored.clone()), fourth.settle(stored));
                let settlement = pending.settle(outcome);
                prop_assert_eq!(&taken, &settlement);
                settlement
            }
            (Plan::Settled(settlement), _) => settlement,
            _ => return Ok(()),
        };

        // The requeue: a backoff of at most 5 minutes (capped, and never past the moment
        // Degraded is due), a rejection backoff of 30 s to 10 minutes (capped by resync),
        // or the resync period.
        if let Requeue::After(d) = settlement.requeue {
            prop_assert!(!d.is_zero(), "a zero wait is a hot loop");
            let rejected = outcome_class == Some(FailureClass::Rejected);
            let rejection = rejected
                && d <= MAX_REJECTION_BACKOFF
                && w.settings.resync.is_none_or(|r| d <= r)
                && (d >= MIN_REJECTION_BACKOFF || Some(d) == w.settings.resync);
            prop_assert!(
                d <= MAX_BACKOFF || Some(d) == w.settings.resync || rejection,
                "{d:?}"
            );
        }

        // Degraded raised by a transient or conflicting failure only once ConfigurationApplied
        // has been False for degradedAfter (a time in the future or out of range is now).
        let after = settlement
            .status
            .as_ref()
            .map_or(&w.gateway.status.conditions, |s| &s.conditions);
        let raised = after
            .iter()
            .find(|c| c.type_ == DEGRADED)
            .is_some_and(|c| c.reason == "ApplyFailing")
            && !degraded_before;
        if raised {
            // A time out of range or not a time counts as now.
            let since = match ltt.parse::<Timestamp>() {
                Ok(t) if applied_false => t.min(now),
                _ => now,
            };
            let elapsed = now.duration_since(since);
            let after = SignedDuration::try_from(degraded_after).unwrap();
            prop_assert!(elapsed >= after, "raised after {elapsed:?} < {after:?}");
        }

        // Every transition time written is the observed text or a valid time of second
        // precision.
        for c in after {
            let kept = w.gateway.status.conditions.iter().any(|o| {
                o.type_ == c.type_ && o.last_transition_time == c.last_transition_time
            });
            if !kept {
                let t: Timestamp = c.last_transition_time.parse().expect("a valid time");
                prop_assert_eq!(t.subsec_nanosecond(), 0);
            }
        }
        let _ = settlement.status_patch();
    }

    /// Settings out of bounds are a typed error from plan, never a panic or a hot loop.
    #[test]
    fn out_of_bounds_periods_are_errors(
        now in any_time(),
        degraded_after in prop_oneof![
            Just(Duration::MAX),
            (YEAR + 1..u64::MAX).prop_map(Duration::from_secs),
        ],
        resync in prop_oneof![
            Just(Duration::ZERO),
            (0..1_000_000_000u32).prop_map(|n| Duration::new(0, n)),
            Just(Duration::MAX),
        ],
    ) {
        let w = World::healthy();
        for settings in [
            Settings { degraded_after, ..Settings::default() },
            Settings { resync: Some(resync), ..Settings::default() },
        ] {
            let snapshot = Snapshot::new(&w.gateway, &w.template)
                .with_gateway_class(w.class.as_ref())
                .with_configuration(w.configuration.as_ref())
                .with_deployment(w.deployment.as_ref());
            let e = plan(&settings, snapshot, now).unwrap_err().to_string();
            prop_assert!(
                e.starts_with("settings: degradedAfter: ") || e.starts_with("settings: resync: "),
                "{e}"
            );
        }
    }

}

/// The panic of the issue, at the end of the range: a ConfigurationApplied False at the last
/// representable second, a failing update, and Degraded five minutes away (never).
#[test]
fn a_transient_failure_at_the_end_of_time_is_never_degraded() {
    let mut w = World::healthy();
    w.edit_configuration();
    let end: Timestamp = "9999-12-30T22:00:00Z".parse().unwrap();
    w.gateway
        .status
        .conditions
        .retain(|c| c.type_ != APPLIED && c.type_ != DEGRADED);
    w.gateway
        .status
        .conditions
        .push(owned(APPLIED, "False", "9999-12-30T22:00:00Z"));
    let step = w.reconcile(end, fail_503);
    assert!(w.condition(DEGRADED).is_none());
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(1))
    );
    assert_eq!(
        w.condition(APPLIED).unwrap().last_transition_time,
        "9999-12-30T22:00:00Z"
    );
    // A time past the supported range counts as now and is kept as written.
    let mut w = World::healthy();
    w.edit_configuration();
    w.gateway
        .status
        .conditions
        .retain(|c| c.type_ != APPLIED && c.type_ != DEGRADED);
    w.gateway
        .status
        .conditions
        .push(owned(APPLIED, "False", "9999-12-31T23:59:59Z"));
    let step = w.reconcile(at(0), |_| {
        api_error(422, "Invalid", "spec.template: Invalid value")
    });
    assert_eq!(
        w.condition(APPLIED).unwrap().last_transition_time,
        "9999-12-31T23:59:59Z"
    );
    let d = w
        .condition(DEGRADED)
        .expect("a rejection is Degraded at once");
    assert!(
        d.message.contains("since 9999-12-31T23:59:59Z"),
        "{}",
        d.message
    );
    // The rejection backoff's floor: the time since it turned False counts as zero.
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(30))
    );
}
