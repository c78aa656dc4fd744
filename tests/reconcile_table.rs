//! SPEC §3 decisions and the SPEC §6 condition table, row by row, through plan/settle.

mod common;

use common::*;
use gateway_reconcile::wire::Condition;
use gateway_reconcile::{Requeue, WriteOutcome};
use std::time::Duration;

const ACCEPTED_MSG: &str = "Gateway accepted by meridio-2.nordix.org/gateway-controller";

fn assert_cond(w: &World, type_: &str, status: &str, reason: &str) -> String {
    let c = w
        .condition(type_)
        .unwrap_or_else(|| panic!("{type_} missing: {:#}", w.conditions_json()));
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        (status, reason),
        "{type_}: {}",
        c.message
    );
    assert_eq!(
        c.observed_generation,
        Some(w.gateway.metadata.generation.unwrap()),
        "{type_}"
    );
    c.message.clone()
}

fn applied() -> impl Fn(&gateway_reconcile::DeploymentWrite) -> Option<WriteOutcome> {
    |_| Some(WriteOutcome::Applied)
}

// ---- SPEC §6, row by row --------------------------------------------------------------------

/// What an owned condition must be after the reconcile.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Absent.
    Absent,
    /// Exactly as before the reconcile (status, reason, message, time).
    Unchanged,
    /// This status and reason, with this message, at the Gateway's generation.
    Is(&'static str, &'static str, &'static str),
}

/// One entry of SPEC §6: how to get there, and what the conditions and requeue are then.
struct Entry {
    /// The SPEC row, and the case of it.
    row: &'static str,
    /// The world before the reconcile under test.
    setup: fn() -> World,
    /// The reconcile under test.
    reconcile: fn(&mut World) -> Step,
    /// The Deployment write it plans: `Create`, `Update` or `None`.
    action: &'static str,
    programmed: Want,
    applied: Want,
    degraded: Want,
    requeue: Requeue,
}

const PROGRAMMED_7: &str = "LB Deployment reconciled with GatewayConfiguration generation 7";
const PROGRAMMED_7_INITIALIZING: &str = "LB Deployment reconciled with GatewayConfiguration generation 7; Pods may still be initializing";
const PROGRAMMED_8_INITIALIZING: &str = "LB Deployment reconciled with GatewayConfiguration generation 8; Pods may still be initializing";
const PROGRAMMED_OLD: &str =
    "LB Deployment reconciled with GatewayConfiguration generation 7; generation 8 not applied yet";
const APPLIED_7: &str =
    "GatewayConfiguration ns/conf generation 7 is applied to Deployment ns/sllbr-gw";
const APPLIED_8: &str =
    "GatewayConfiguration ns/conf generation 8 is applied to Deployment ns/sllbr-gw";

fn edited() -> World {
    let mut w = World::healthy();
    w.edit_configuration();
    w
}

/// Edited, and updates failed with 503 at 10 s and 400 s: Degraded is True.
fn degraded_by_failures() -> World {
    let mut w = edited();
    w.reconcile(at(10), fail_503);
    w.reconcile(at(400), fail_503);
    w
}

/// Edited, and an update failed with 503 at 10 s: Degraded is due at 310 s.
fn failed_once_at_10() -> World {
    let mut w = edited();
    w.reconcile(at(10), fail_503);
    w
}

fn no_write(_: &gateway_reconcile::DeploymentWrite) -> Option<WriteOutcome> {
    panic!("no write expected")
}

/// SPEC §6, one entry per row (a row with several cases has one entry per case), in the
/// SPEC's order.
const SPEC_6: &[Entry] = &[
    // Row "Create or Update Applied, or action None".
    Entry {
        row: "Create Applied",
        setup: World::new,
        reconcile: |w| w.reconcile(at(0), |_| Some(WriteOutcome::Applied)),
        action: "Create",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_7_INITIALIZING),
        applied: Want::Is("True", "Applied", APPLIED_7),
        degraded: Want::Absent,
        requeue: Requeue::AwaitChange,
    },
    Entry {
        row: "Update Applied",
        setup: edited,
        reconcile: |w| w.reconcile(at(10), |_| Some(WriteOutcome::Applied)),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_8_INITIALIZING),
        applied: Want::Is("True", "Applied", APPLIED_8),
        degraded: Want::Absent,
        requeue: Requeue::AwaitChange,
    },
    Entry {
        row: "action None (rollout complete)",
        setup: World::healthy,
        reconcile: |w| w.reconcile(at(2), no_write),
        action: "None",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_7),
        applied: Want::Is("True", "Applied", APPLIED_7),
        degraded: Want::Absent,
        requeue: Requeue::AwaitChange,
    },
    // Row "Create: Conflict, AlreadyExists".
    Entry {
        row: "Create: Conflict",
        setup: World::new,
        reconcile: |w| w.reconcile(at(0), |_| api_error(409, "Conflict", "object changed")),
        action: "Create",
        programmed: Want::Is(
            "False",
            "Pending",
            "LB Deployment ns/sllbr-gw is not created yet: object changed",
        ),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw does not exist: create conflicted, retrying: object changed",
        ),
        degraded: Want::Absent,
        requeue: Requeue::Immediately,
    },
    Entry {
        row: "Create: AlreadyExists",
        setup: World::new,
        reconcile: |w| w.reconcile(at(0), |_| api_error(409, "AlreadyExists", "object exists")),
        action: "Create",
        programmed: Want::Is(
            "False",
            "Pending",
            "LB Deployment ns/sllbr-gw is not created yet: object exists",
        ),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw does not exist: create conflicted, retrying: object exists",
        ),
        degraded: Want::Absent,
        requeue: Requeue::Immediately,
    },
    // Row "Create: Transient, NotFound".
    Entry {
        row: "Create: Transient",
        setup: World::new,
        reconcile: |w| w.reconcile(at(0), fail_503),
        action: "Create",
        programmed: Want::Is(
            "False",
            "Pending",
            "LB Deployment ns/sllbr-gw is not created yet: etcdserver: request timed out",
        ),
        applied: Want::Is(
            "False",
            "ApplyFailed",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw does not exist: create failed: etcdserver: request timed out",
        ),
        degraded: Want::Absent,
        requeue: Requeue::After(Duration::from_secs(1)),
    },
    Entry {
        row: "Create: NotFound",
        setup: World::new,
        reconcile: |w| {
            w.reconcile(at(0), |_| {
                api_error(404, "NotFound", "namespaces \"ns\" not found")
            })
        },
        action: "Create",
        programmed: Want::Is(
            "False",
            "Pending",
            "LB Deployment ns/sllbr-gw is not created yet: namespaces \"ns\" not found",
        ),
        applied: Want::Is(
            "False",
            "ApplyFailed",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw does not exist: create failed (not found): namespaces \"ns\" not found",
        ),
        degraded: Want::Absent,
        requeue: Requeue::After(Duration::from_secs(1)),
    },
    // Row "Create: Rejected".
    Entry {
        row: "Create: Rejected",
        setup: World::new,
        reconcile: |w| {
            w.reconcile(at(0), |_| {
                api_error(422, "Invalid", "spec.replicas: Invalid value: -1")
            })
        },
        action: "Create",
        programmed: Want::Is(
            "False",
            "Invalid",
            "failed to create LB deployment: spec.replicas: Invalid value: -1",
        ),
        applied: Want::Is(
            "False",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw does not exist: create rejected: spec.replicas: Invalid value: -1",
        ),
        degraded: Want::Absent,
        // Rejection backoff: ConfigurationApplied just turned False, so the floor.
        requeue: Requeue::After(Duration::from_secs(30)),
    },
    // Row "Update: Conflict, AlreadyExists".
    Entry {
        row: "Update: Conflict, Degraded True stays unchanged",
        setup: degraded_by_failures,
        reconcile: |w| {
            w.reconcile(at(401), |_| {
                api_error(409, "Conflict", "the object has been modified")
            })
        },
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update conflicted, retrying: the object has been modified",
        ),
        degraded: Want::Unchanged,
        requeue: Requeue::Immediately,
    },
    Entry {
        row: "Update: AlreadyExists, Degraded True stays unchanged",
        setup: degraded_by_failures,
        reconcile: |w| w.reconcile(at(401), |_| api_error(409, "AlreadyExists", "exists")),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update conflicted, retrying: exists",
        ),
        degraded: Want::Unchanged,
        requeue: Requeue::Immediately,
    },
    Entry {
        row: "Update: Conflict, Degraded absent and not due",
        setup: failed_once_at_10,
        reconcile: |w| w.reconcile(at(300), |_| api_error(409, "Conflict", "modified")),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update conflicted, retrying: modified",
        ),
        degraded: Want::Absent,
        requeue: Requeue::Immediately,
    },
    Entry {
        row: "Update: Conflict, Degraded absent and due",
        setup: failed_once_at_10,
        reconcile: |w| w.reconcile(at(310), |_| api_error(409, "Conflict", "modified")),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update conflicted, retrying: modified",
        ),
        degraded: Want::Is(
            "True",
            "ApplyFailing",
            "GatewayConfiguration ns/conf generation 8 not applied since 2026-01-01T00:00:10Z: updates of Deployment ns/sllbr-gw keep failing: modified",
        ),
        requeue: Requeue::Immediately,
    },
    // Row "Update: NotFound".
    Entry {
        row: "Update: NotFound",
        setup: edited,
        reconcile: |w| {
            w.reconcile(at(10), |_| {
                api_error(404, "NotFound", "deployments.apps \"sllbr-gw\" not found")
            })
        },
        action: "Update",
        programmed: Want::Is(
            "False",
            "Pending",
            "LB Deployment ns/sllbr-gw vanished during the update; recreating it",
        ),
        applied: Want::Is(
            "False",
            "Pending",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): the Deployment vanished during the update: deployments.apps \"sllbr-gw\" not found",
        ),
        degraded: Want::Absent,
        requeue: Requeue::Immediately,
    },
    // Row "Update: Transient".
    Entry {
        row: "Update: Transient, first failure",
        setup: edited,
        reconcile: |w| w.reconcile(at(60), fail_503),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "ApplyFailed",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update failed: etcdserver: request timed out",
        ),
        degraded: Want::Absent,
        requeue: Requeue::After(Duration::from_secs(1)),
    },
    Entry {
        row: "Update: Transient, backoff capped by when Degraded is due",
        setup: failed_once_at_10,
        reconcile: |w| w.reconcile(at(250), fail_503),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Unchanged,
        degraded: Want::Absent,
        requeue: Requeue::After(Duration::from_secs(60)),
    },
    Entry {
        row: "Update: Transient, degradedAfter passed",
        setup: failed_once_at_10,
        reconcile: |w| w.reconcile(at(310), fail_503),
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Unchanged,
        degraded: Want::Is(
            "True",
            "ApplyFailing",
            "GatewayConfiguration ns/conf generation 8 not applied since 2026-01-01T00:00:10Z: updates of Deployment ns/sllbr-gw keep failing: etcdserver: request timed out",
        ),
        requeue: Requeue::After(Duration::from_secs(300)),
    },
    // Row "Update: Rejected".
    Entry {
        row: "Update: Rejected",
        setup: edited,
        reconcile: |w| {
            w.reconcile(at(10), |_| {
                api_error(422, "Invalid", "spec.template: Invalid value")
            })
        },
        action: "Update",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_OLD),
        applied: Want::Is(
            "False",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update rejected: spec.template: Invalid value",
        ),
        degraded: Want::Is(
            "True",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 8 not applied since 2026-01-01T00:00:10Z: the API rejected the update of Deployment ns/sllbr-gw: spec.template: Invalid value",
        ),
        requeue: Requeue::After(Duration::from_secs(30)),
    },
    // Row "name collision".
    Entry {
        row: "name collision",
        setup: || {
            let mut w = World::healthy();
            w.deployment.as_mut().unwrap().object["metadata"]["ownerReferences"] = serde_json::json!([
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "other", "uid": "x", "controller": true}
            ]).into();
            w
        },
        reconcile: |w| w.reconcile(at(5), no_write),
        action: "None",
        programmed: Want::Is(
            "False",
            "Invalid",
            "deployment sllbr-gw exists but is not owned by gateway gw (owned by ReplicaSet/other, cannot proceed due to name collision)",
        ),
        applied: Want::Is(
            "False",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 7 is not applied: Deployment ns/sllbr-gw is owned by ReplicaSet/other, not by this Gateway",
        ),
        degraded: Want::Absent,
        requeue: Requeue::AwaitChange,
    },
    // Row "Deployment's Progressing condition has reason ProgressDeadlineExceeded".
    Entry {
        row: "rollout stalled",
        setup: || {
            let mut w = World::healthy();
            w.rollout_stalled();
            w
        },
        reconcile: |w| w.reconcile(at(700), no_write),
        action: "None",
        programmed: Want::Is("True", "Programmed", PROGRAMMED_7_INITIALIZING),
        applied: Want::Is("True", "Applied", APPLIED_7),
        degraded: Want::Is(
            "True",
            "RolloutStalled",
            "rollout of Deployment ns/sllbr-gw stalled since 2026-01-01T00:10:00Z: ReplicaSet \"sllbr-gw-5d4f\" has timed out progressing.",
        ),
        requeue: Requeue::AwaitChange,
    },
    Entry {
        row: "rollout stalled, a rejected update wins",
        setup: || {
            let mut w = World::healthy();
            w.rollout_stalled();
            w.edit_configuration();
            w
        },
        reconcile: |w| w.reconcile(at(700), |_| api_error(422, "Invalid", "bad")),
        action: "Update",
        programmed: Want::Is(
            "True",
            "Programmed",
            "LB Deployment reconciled with GatewayConfiguration generation 7; generation 8 not applied yet; Pods may still be initializing",
        ),
        applied: Want::Is(
            "False",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 8 is not applied to Deployment ns/sllbr-gw (it carries generation 7): update rejected: bad",
        ),
        degraded: Want::Is(
            "True",
            "ApplyRejected",
            "GatewayConfiguration ns/conf generation 8 not applied since 2026-01-01T00:11:40Z: the API rejected the update of Deployment ns/sllbr-gw: bad",
        ),
        requeue: Requeue::After(Duration::from_secs(30)),
    },
];

/// The differences between what `want` says of condition `type_` and what `w` has.
fn check(w: &World, before: Option<&Condition>, type_: &str, want: Want) -> Option<String> {
    let found = w.condition(type_);
    let generation = w.gateway.metadata.generation;
    let ok = match (want, found) {
        (Want::Absent, None) => true,
        (Want::Unchanged, found) => found == before,
        (Want::Is(status, reason, message), Some(c)) => {
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()) == (status, reason, message)
                && c.observed_generation == generation
        }
        (Want::Absent, Some(_)) | (Want::Is(..), None) => false,
    };
    (!ok).then(|| format!("{type_}: want {want:?}, found {found:?} (before: {before:?})"))
}

#[test]
fn spec_6_row_by_row() {
    let mut failures = Vec::new();
    for entry in SPEC_6 {
        let mut w = (entry.setup)();
        let before = w.gateway.status.conditions.clone();
        let before = |t: &str| before.iter().find(|c| c.type_ == t).cloned();
        let step = (entry.reconcile)(&mut w);
        let mut problems: Vec<String> = [
            ("Accepted", Want::Is("True", "Accepted", ACCEPTED_MSG)),
            ("Programmed", entry.programmed),
            (APPLIED, entry.applied),
            (DEGRADED, entry.degraded),
        ]
        .into_iter()
        .filter_map(|(t, want)| check(&w, before(t).as_ref(), t, want))
        .collect();
        if step.action != entry.action {
            problems.push(format!(
                "action: want {}, found {}",
                entry.action, step.action
            ));
        }
        if step.settlement.requeue != entry.requeue {
            problems.push(format!(
                "requeue: want {:?}, found {:?}",
                entry.requeue, step.settlement.requeue
            ));
        }
        if !problems.is_empty() {
            failures.push(format!("{}:\n  {}", entry.row, problems.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

// ---- beyond one reconcile of a row -----------------------------------------------------------

#[test]
fn the_create_backoff_grows_with_the_time_applied_has_been_false() {
    let mut w = World::new();
    w.reconcile(at(0), fail_503);
    let refused = |_: &gateway_reconcile::DeploymentWrite| {
        Some(WriteOutcome::from_parts(None, "", "connection refused"))
    };
    let step = w.reconcile(at(40), refused);
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(40))
    );
    let step = w.reconcile(at(4000), refused);
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(300))
    );
    assert!(
        w.condition(DEGRADED).is_none(),
        "Degraded needs Programmed True"
    );
    // A 404 on create backs off the same way, and a retry of the same failure writes nothing.
    let mut w = World::new();
    let not_found = |_: &gateway_reconcile::DeploymentWrite| {
        api_error(404, "NotFound", "namespaces \"ns\" not found")
    };
    w.reconcile(at(0), not_found);
    let step = w.reconcile(at(45), not_found);
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(45))
    );
    assert!(step.settlement.status.is_none(), "same failure, no write");
}

#[test]
fn the_rejection_backoff_grows_from_30_s_to_10_min_and_a_repeated_rejection_writes_nothing() {
    let rejected = |_: &gateway_reconcile::DeploymentWrite| {
        api_error(403, "Forbidden", "denied by policy deny-lb-updates")
    };
    let mut w = World::healthy();
    w.edit_configuration();
    let first = w.reconcile(at(10), rejected);
    assert_eq!(
        first.settlement.requeue,
        Requeue::After(Duration::from_secs(30))
    );
    assert!(first.settlement.status.is_some());
    // The retry the backoff asks for is rejected the same way: no status write.
    let retry = w.reconcile(at(40), rejected);
    assert_eq!(retry.action, "Update", "a rejected write is tried again");
    assert_eq!(
        retry.settlement.requeue,
        Requeue::After(Duration::from_secs(30))
    );
    assert!(
        retry.settlement.status.is_none(),
        "same rejection, no write"
    );
    let later = w.reconcile(at(10 + 200), rejected);
    assert_eq!(
        later.settlement.requeue,
        Requeue::After(Duration::from_secs(200))
    );
    let much_later = w.reconcile(at(10 + 7200), rejected);
    assert_eq!(
        much_later.settlement.requeue,
        Requeue::After(Duration::from_secs(600))
    );
    assert!(much_later.settlement.status.is_none());
    // The policy is removed: the next retry goes through and Degraded goes.
    w.reconcile(at(10 + 7800), applied());
    assert_cond(&w, APPLIED, "True", "Applied");
    assert!(w.condition(DEGRADED).is_none());
}

#[test]
fn a_collision_with_no_controller_names_unknown() {
    let mut w = World::healthy();
    w.deployment.as_mut().unwrap().object["metadata"]["ownerReferences"] =
        serde_json::json!([]).into();
    w.reconcile(at(6), no_write);
    assert!(
        w.condition("Programmed")
            .unwrap()
            .message
            .contains("(owned by unknown, cannot proceed")
    );
}

#[test]
fn a_stalled_rollout_that_completes_is_no_longer_degraded() {
    let mut w = World::healthy();
    w.rollout_stalled();
    w.reconcile(at(700), no_write);
    assert_cond(&w, DEGRADED, "True", "RolloutStalled");
    w.rollout_complete();
    let step = w.reconcile(at(800), no_write);
    assert!(w.condition(DEGRADED).is_none());
    assert!(step.settlement.status.is_some());
}

#[test]
fn the_steady_state_writes_no_status() {
    let mut w = World::healthy();
    let step = w.reconcile(at(2), no_write);
    assert!(step.settlement.status.is_none());
    assert!(step.settlement.status_patch().is_none());
}

#[test]
fn resync_is_the_requeue_of_a_healthy_gateway() {
    let mut w = World::healthy();
    w.settings.resync = Some(Duration::from_secs(600));
    let step = w.reconcile(at(2), |_| None);
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(600))
    );
    // Said to be a resync: a controller may spread it out.
    assert!(step.settlement.resync);
}

#[test]
fn update_transient_then_degraded_then_recovery() {
    let mut w = World::healthy();
    w.edit_configuration();
    let fail = fail_503;
    let step = w.reconcile(at(60), fail);
    let programmed = "LB Deployment reconciled with GatewayConfiguration generation 7; generation 8 not applied yet";
    assert_eq!(
        assert_cond(&w, "Programmed", "True", "Programmed"),
        programmed
    );
    let m = assert_cond(&w, APPLIED, "False", "ApplyFailed");
    for fact in [
        "ns/conf",
        "generation 8",
        "generation 7",
        "ns/sllbr-gw",
        "etcdserver: request timed out",
    ] {
        assert!(m.contains(fact), "{fact} in {m}");
    }
    assert_eq!(
        w.condition(APPLIED).unwrap().last_transition_time,
        "2026-01-01T00:01:00Z"
    );
    assert!(w.condition(DEGRADED).is_none());
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(1))
    );

    // 4 minutes later: backoff capped by when Degraded becomes due (60 s + 300 s).
    let step = w.reconcile(at(300), fail);
    assert!(w.condition(DEGRADED).is_none());
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(60))
    );
    assert!(
        step.settlement.status.is_none(),
        "a retry of the same failure writes nothing"
    );

    let step = w.reconcile(at(360), fail);
    let d = assert_cond(&w, DEGRADED, "True", "ApplyFailing");
    assert!(
        d.contains("2026-01-01T00:01:00Z") && d.contains("etcdserver"),
        "{d}"
    );
    assert_eq!(
        assert_cond(&w, "Programmed", "True", "Programmed"),
        programmed
    );
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(300))
    );

    let step = w.reconcile(at(900), applied());
    assert_eq!(step.action, "Update");
    assert_cond(&w, APPLIED, "True", "Applied");
    assert!(assert_cond(&w, "Programmed", "True", "Programmed").contains("generation 8"));
    assert!(w.condition(DEGRADED).is_none());
    assert_eq!(
        w.condition("Programmed").unwrap().last_transition_time,
        "2026-01-01T00:00:00Z"
    );
}

#[test]
fn generation_can_be_left_out_of_the_programmed_message() {
    let mut w = World::new();
    w.settings.generation_in_programmed_message = false;
    w.reconcile(at(0), applied());
    w.rollout_complete();
    w.reconcile(at(1), |_| None);
    assert_eq!(
        assert_cond(&w, "Programmed", "True", "Programmed"),
        "LB Deployment reconciled"
    );
}

#[test]
fn update_already_exists_is_an_update_conflict() {
    let mut conflict = World::healthy();
    let mut exists = World::healthy();
    for w in [&mut conflict, &mut exists] {
        w.edit_configuration();
        w.reconcile(at(10), fail_503);
        w.reconcile(at(400), fail_503);
        assert!(w.condition(DEGRADED).is_some());
    }
    let a = conflict.reconcile(at(401), |_| api_error(409, "Conflict", "m"));
    let b = exists.reconcile(at(401), |_| api_error(409, "AlreadyExists", "m"));
    assert_eq!(a.settlement, b.settlement);
    assert_eq!(b.settlement.requeue, Requeue::Immediately);
    assert_cond(&exists, "Programmed", "True", "Programmed");
    assert_cond(&exists, APPLIED, "False", "Pending");
}

#[test]
fn degraded_stays_true_from_rejection_to_transient_failure_to_conflict() {
    let mut w = World::healthy();
    w.edit_configuration();
    w.reconcile(at(10), |_| api_error(422, "Invalid", "spec: Invalid value"));
    let rejected = assert_cond(&w, DEGRADED, "True", "ApplyRejected");
    assert!(
        rejected.contains("since 2026-01-01T00:00:10Z"),
        "{rejected}"
    );
    let since = w.condition(DEGRADED).unwrap().last_transition_time.clone();
    // A transient failure 5 s later, long before degradedAfter: still True, the new cause.
    let step = w.reconcile(at(15), fail_503);
    assert_eq!(
        assert_cond(&w, DEGRADED, "True", "ApplyFailing"),
        "GatewayConfiguration ns/conf generation 8 not applied since 2026-01-01T00:00:10Z: updates of Deployment ns/sllbr-gw keep failing: etcdserver: request timed out"
    );
    assert_eq!(w.condition(DEGRADED).unwrap().last_transition_time, since);
    assert!(
        step.settlement
            .events
            .iter()
            .all(|e| e.reason != "Recovered" && e.reason != "Degraded"),
        "no Degraded transition: {:?}",
        step.settlement.events
    );
    // A conflicting retry changes nothing about it.
    let before = w.condition(DEGRADED).cloned();
    w.reconcile(at(16), |_| api_error(409, "Conflict", "modified"));
    assert_eq!(w.condition(DEGRADED).cloned(), before);
    // Applied: it goes.
    w.reconcile(at(17), applied());
    assert!(w.condition(DEGRADED).is_none());
}

#[test]
fn resync_replaces_every_none_requeue_of_an_accepted_or_invalid_gateway() {
    let resync = Requeue::After(Duration::from_secs(600));
    let with_resync = |mut w: World| {
        w.settings.resync = Some(Duration::from_secs(600));
        w
    };
    // A rejection backs off from 30 s; resync caps that backoff, it does not replace it.
    let mut w = with_resync(World::new());
    let step = w.reconcile(at(0), |_| api_error(422, "Invalid", "bad"));
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(30)),
        "rejected create"
    );
    let mut w = with_resync(World::healthy());
    w.settings.resync = Some(Duration::from_secs(10));
    w.edit_configuration();
    let step = w.reconcile(at(5), |_| api_error(422, "Invalid", "bad"));
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(10)),
        "rejected update, resync below the floor"
    );
    // The same wait as the resync, but a backoff: not said to be a resync.
    assert!(!step.settlement.resync, "a capped backoff is no resync");
    // Name collision.
    let mut w = with_resync(World::healthy());
    w.deployment.as_mut().unwrap().object["metadata"]["ownerReferences"] =
        serde_json::json!([]).into();
    let step = w.reconcile(at(5), |_| None);
    assert_eq!(step.settlement.requeue, resync, "collision");
    assert!(step.settlement.resync, "collision");
    // Invalid parameters.
    let mut w = with_resync(World::new());
    w.configuration = None;
    let step = w.reconcile(at(5), |_| None);
    assert_eq!(step.settlement.requeue, resync, "invalid");
    // Not ours, and being deleted: no resync.
    let mut w = with_resync(World::healthy());
    w.class = None;
    let step = w.reconcile(at(5), |_| None);
    assert_eq!(step.settlement.requeue, Requeue::AwaitChange, "not ours");
    let mut w = with_resync(World::healthy());
    w.gateway.metadata.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
    let step = w.reconcile(at(5), |_| None);
    assert_eq!(step.settlement.requeue, Requeue::AwaitChange, "deleted");
}

#[test]
fn plan_refuses_invalid_settings_naming_the_field() {
    let w = World::new();
    let snapshot = gateway_reconcile::Snapshot::new(&w.gateway, &w.template);
    let settings = gateway_reconcile::Settings {
        resync: Some(Duration::ZERO),
        ..gateway_reconcile::Settings::default()
    };
    let e = gateway_reconcile::plan(&settings, snapshot, at(0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "settings: resync: must be at least 1s and at most 8760h (got 0s)"
    );
    assert!(matches!(
        e,
        gateway_reconcile::InputError::InvalidSetting {
            field: "resync",
            ..
        }
    ));
}

// ---- SPEC §3 decisions ---------------------------------------------------------------------

#[test]
fn deleted_gateway_does_nothing() {
    let mut w = World::healthy();
    w.gateway.metadata.deletion_timestamp = Some("2026-01-01T01:00:00Z".into());
    w.edit_configuration();
    let step = w.reconcile(at(10), |_| panic!("no write"));
    assert_eq!(step.action, "None");
    assert!(step.settlement.status.is_none());
    assert_eq!(step.settlement.requeue, Requeue::AwaitChange);
}

#[test]
fn ownership_transfer_resets_accepted_and_back() {
    let mut w = World::healthy();
    let programmed = w.condition("Programmed").cloned();
    w.class = Some(class("example.com/other-controller"));
    let step = w.reconcile(at(10), |_| panic!("no write"));
    assert_eq!(step.action, "None");
    let a = w.condition("Accepted").unwrap();
    assert_eq!(
        (a.status.as_str(), a.reason.as_str(), a.message.as_str()),
        ("Unknown", "Pending", "Waiting for controller")
    );
    assert_eq!(
        w.condition("Programmed").cloned(),
        programmed,
        "Programmed left as is"
    );
    assert!(w.condition(APPLIED).is_none() && w.condition(DEGRADED).is_none());
    // Not ours and not accepted by us: nothing to write.
    assert!(w.reconcile(at(11), |_| None).settlement.status.is_none());
    // Back to us.
    w.class = Some(class("meridio-2.nordix.org/gateway-controller"));
    w.reconcile(at(12), |_| None);
    assert_eq!(
        assert_cond(&w, "Accepted", "True", "Accepted"),
        ACCEPTED_MSG
    );
    assert_cond(&w, APPLIED, "True", "Applied");
}

#[test]
fn missing_gateway_class_is_not_ours() {
    let mut w = World::healthy();
    w.class = None;
    w.reconcile(at(10), |_| None);
    assert_eq!(w.condition("Accepted").unwrap().status, "Unknown");
}

#[test]
fn accepted_by_another_controller_is_left_alone() {
    let mut w = World::new();
    w.class = Some(class("example.com/other"));
    w.gateway.status.conditions.push(condition(
        "Accepted",
        "Accepted",
        "Gateway accepted by example.com/other",
        T0,
    ));
    let step = w.reconcile(at(1), |_| None);
    assert!(step.settlement.status.is_none());
}

#[test]
fn invalid_parameters_leave_addresses_and_the_deployment_alone() {
    let mut w = World::healthy();
    w.routes = vec![route(&["20.0.0.1/32"])];
    w.reconcile(at(2), |_| None);
    let addresses = w.gateway.status.addresses.clone();
    assert_eq!(addresses.len(), 1);
    w.configuration
        .as_mut()
        .unwrap()
        .spec
        .internal_subnets
        .clear();
    w.routes.clear();
    let step = w.reconcile(at(3), |_| panic!("no write"));
    assert_eq!(step.action, "None");
    let msg = "GatewayConfiguration must have at least one internalSubnet";
    assert_eq!(
        assert_cond(&w, "Accepted", "False", "InvalidParameters"),
        msg
    );
    assert_eq!(
        assert_cond(&w, "Programmed", "False", "Invalid"),
        format!("Gateway not accepted: {msg}")
    );
    assert_eq!(assert_cond(&w, APPLIED, "False", "InvalidParameters"), msg);
    assert!(w.condition(DEGRADED).is_none());
    assert_eq!(w.gateway.status.addresses, addresses, "addresses untouched");
    assert_eq!(step.settlement.requeue, Requeue::AwaitChange);
    let patch = step.settlement.status_patch().unwrap().into_body();
    assert!(patch["status"].get("addresses").is_none(), "{patch}");
}

#[test]
fn configuration_not_found_and_template_failure() {
    let mut w = World::new();
    w.configuration = None;
    w.reconcile(at(0), |_| None);
    assert_eq!(
        assert_cond(&w, "Accepted", "False", "InvalidParameters"),
        "GatewayConfiguration \"conf\" not found"
    );
    let mut w = World::new();
    w.template = serde_json::from_value(serde_json::json!({"spec": {}})).unwrap();
    let step = w.reconcile(at(0), |_| panic!("no write"));
    assert!(
        assert_cond(&w, "Accepted", "False", "InvalidParameters")
            .starts_with("invalid LB deployment template: ")
    );
    assert_eq!(
        step.settlement.requeue,
        Requeue::After(Duration::from_secs(1)),
        "template failures back off"
    );
}

#[test]
fn addresses_follow_the_routes() {
    let mut w = World::healthy();
    w.routes = vec![
        route(&["20.0.0.2/32", "2001:db8::1/128"]),
        route(&["20.0.0.1/32", "bad"]),
    ];
    let step = w.reconcile(at(2), |_| None);
    let values: Vec<&str> = w
        .gateway
        .status
        .addresses
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    assert_eq!(values, ["20.0.0.1", "20.0.0.2", "2001:db8::1"]);
    assert_eq!(
        step.settlement.status_patch().unwrap().into_body()["status"]["addresses"][0]["type"],
        "IPAddress"
    );
    w.routes.clear();
    let step = w.reconcile(at(3), |_| None);
    assert!(w.gateway.status.addresses.is_empty());
    assert!(
        step.settlement.status_patch().unwrap().into_body()["status"]["addresses"].is_null(),
        "null removes the list"
    );
}

#[test]
fn stale_snapshot_writes_nothing_and_requeues_at_once() {
    let mut w = World::healthy();
    w.gateway.status.conditions[0].observed_generation = Some(5);
    let step = w.reconcile(at(2), |_| panic!("no write"));
    assert!(step.settlement.status.is_none());
    assert_eq!(step.settlement.requeue, Requeue::Immediately);
}

// ---- bookkeeping ---------------------------------------------------------------------------

#[test]
fn a_restarted_controller_reaches_the_same_conditions() {
    let mut w = World::healthy();
    w.edit_configuration();
    let fail = fail_503;
    w.reconcile(at(60), fail);
    // A fresh process sees the same snapshot later: Degraded is computed from the
    // snapshot's lastTransitionTime, not from memory.
    let mut restarted = World::healthy();
    restarted.restart();
    restarted.gateway = w.gateway.clone();
    restarted.configuration = w.configuration.clone();
    restarted.deployment = w.deployment.clone();
    restarted.reconcile(at(400), fail);
    w.reconcile(at(400), fail);
    assert_eq!(restarted.gateway.status, w.gateway.status);
    assert_eq!(
        restarted.condition(DEGRADED).unwrap().reason,
        "ApplyFailing"
    );
}

#[test]
fn foreign_conditions_are_untouched() {
    let mut w = World::new();
    let mut foreign = condition("example.com/Foo", "Bar", "foreign", "2020-01-01T00:00:00Z");
    foreign.observed_generation = Some(99);
    w.gateway.status.conditions.push(foreign.clone());
    w.reconcile(at(0), applied());
    assert_eq!(w.gateway.status.conditions[0], foreign);
    let types: Vec<&str> = w
        .gateway
        .status
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(
        types,
        ["example.com/Foo", "Accepted", "Programmed", APPLIED]
    );
}

#[test]
fn the_seed_problem() {
    // GatewayConfiguration edited from generation 7 to 8; every update fails with 503 for 10
    // minutes; then the update goes through.
    let mut w = World::healthy();
    w.edit_configuration();
    w.status_writes = 0;
    let mut t = 10;
    let mut degraded_at = None;
    while t < 610 {
        let step = w.reconcile(at(t), |_| {
            api_error(503, "ServiceUnavailable", "etcdserver: request timed out")
        });
        assert_eq!(
            w.condition("Programmed").unwrap().status,
            "True",
            "Programmed never turns False"
        );
        assert!(
            w.condition("Programmed")
                .unwrap()
                .message
                .contains("generation 7; generation 8 not applied yet")
        );
        assert_cond(&w, APPLIED, "False", "ApplyFailed");
        if w.condition(DEGRADED).is_some() && degraded_at.is_none() {
            degraded_at = Some(t);
        }
        let Requeue::After(wait) = step.settlement.requeue else {
            panic!("backoff expected")
        };
        t += wait.as_secs() as i64;
    }
    assert_eq!(
        degraded_at,
        Some(310),
        "Degraded exactly degradedAfter after the first failure"
    );
    assert_eq!(
        w.status_writes, 2,
        "first failure and Degraded, nothing per retry"
    );
    w.reconcile(at(t), applied());
    assert!(assert_cond(&w, APPLIED, "True", "Applied").contains("generation 8"));
    assert!(
        w.condition("Programmed")
            .unwrap()
            .message
            .starts_with("LB Deployment reconciled with GatewayConfiguration generation 8")
    );
    assert!(w.condition(DEGRADED).is_none());
}

// ---- events ----------------------------------------------------------------------------------

#[test]
fn events_are_one_per_transition_never_one_per_retry() {
    use gateway_reconcile::events::EventType::{Normal, Warning};
    let kinds = |step: &Step| -> Vec<(gateway_reconcile::events::EventType, String)> {
        step.settlement
            .events
            .iter()
            .map(|e| (e.type_, e.reason.clone()))
            .collect()
    };
    let mut w = World::new();
    let created = w.reconcile(at(0), applied());
    assert_eq!(kinds(&created), [(Normal, "Applied".to_owned())]);
    w.rollout_complete();
    w.edit_configuration();
    let fail = fail_503;
    let first = w.reconcile(at(60), fail);
    assert_eq!(kinds(&first), [(Warning, "ApplyFailed".to_owned())]);
    assert!(first.settlement.events[0].message.contains("etcdserver"));
    for t in [61, 120, 200] {
        assert!(
            w.reconcile(at(t), fail).settlement.events.is_empty(),
            "retry at {t}"
        );
    }
    let degraded = w.reconcile(at(360), fail);
    assert_eq!(kinds(&degraded), [(Warning, "Degraded".to_owned())]);
    assert!(w.reconcile(at(400), fail).settlement.events.is_empty());
    let recovered = w.reconcile(at(500), applied());
    assert_eq!(
        kinds(&recovered),
        [
            (Normal, "Applied".to_owned()),
            (Normal, "Recovered".to_owned())
        ]
    );
    assert!(w.reconcile(at(501), applied()).settlement.events.is_empty());
}
