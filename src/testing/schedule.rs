//! Fault schedules: the operations a schedule is made of ([`Op`], with the
//! [`WriteFailure`]s it injects), [`apply`], which runs one on a [`ControllerLoop`] and checks
//! every reconcile it runs with the [`Invariants`], and [`converge`], which ends a schedule.
//! The strategies that draw schedules are in [`strategies`](super::strategies).

use serde_json::{Value, json};

use crate::conditions::{self, CONFIGURATION_APPLIED_NAME, DEGRADED_NAME, PROGRAMMED};
use crate::outcome::WriteOutcome;
use crate::reconcile::ObjectKey;
use crate::sim::cluster::{Kind, ReconcileReport, RolloutState};
use crate::sim::scenario::StepError;
use crate::wire::{Gateway, GatewayClass};

use super::ControllerLoop;
use super::invariants::{Invariants, Violation, find, is_true, read, read_typed, refused};

/// One step of a fault schedule, applied to a [`ControllerLoop`] (the simulated
/// [`Cluster`](super::Cluster), or an embedder's own) by [`apply`].
///
/// Edits of an object that does not exist (the GatewayConfiguration, the Deployment) are
/// no-ops, so every schedule runs.
#[derive(Debug, Clone, PartialEq, Eq)]
// Not `#[non_exhaustive]`: an embedder that runs the schedules on its own state handles every
// step, so a new one is a compile error in its match, never a silently skipped arm.
pub enum Op {
    /// One reconcile (the loop's [`reconcile`](super::Backend::reconcile)), as a watch event
    /// triggers it.
    Reconcile,
    /// A Gateway spec edit (an infrastructure label): its generation goes up.
    GatewayEdit(u8),
    /// A valid GatewayConfiguration edit (replicas and `enforceReplicas`).
    ConfigurationEdit(u8),
    /// The GatewayConfiguration made invalid (an internal subnet of `0.0.0.0/0`).
    ConfigurationInvalid,
    /// The GatewayConfiguration made valid again.
    ConfigurationFixed,
    /// The GatewayClass handed to another controller.
    ClassOther,
    /// The GatewayClass handed back to this controller.
    ClassOurs,
    /// Another writer edits the Deployment's pod template (drift).
    DeploymentEdit,
    /// The Deployment deleted.
    DeploymentDelete,
    /// An autoscaler sets the Deployment's replicas to `1 + n % 7`.
    Autoscale(u8),
    /// The next `count` Deployment writes fail with this failure (`count` 0 clears the
    /// failures still pending: [`Op::stop_failures`]).
    Fail(WriteFailure, u32),
    /// The Deployment controller runs and leaves the rollout in this state.
    Rollout(RolloutState),
    /// The clock moves forward by this many seconds; the reconciles the loop scheduled run
    /// when they fall due on the way (every Gateway's, on a loop over several:
    /// [`ControllerLoop::scheduled`]).
    Advance(u32),
    /// The controller restarts: it forgets what it held in memory (its write record and
    /// schedule); what the API server holds carries over (pending write failures and
    /// mutating admission included).
    Restart,
    /// Mutating admission: `true` makes every Deployment write that goes through get an
    /// injected readiness gate (`example.com/injected`, as a webhook would add one); `false`
    /// stops it.
    MutateWrites(bool),
    /// The ops after this one act on the Gateway `namespace/name` of the loop's store
    /// ([`ControllerLoop::target`]): its reconciles, its edits, its Deployment's faults
    /// (edits of objects it shares are every sharer's). Until a schedule's first `Target`,
    /// the ops act on the loop's own target (a [`StoreLoop`](super::StoreLoop)'s first
    /// Gateway). The checker checks each Gateway against its own last status
    /// ([`Invariants::observe`]); the clock is one. [`Op::target`] builds it.
    Target {
        /// The Gateway's namespace.
        namespace: String,
        /// The Gateway's name.
        name: String,
    },
}

/// A Deployment write failure [`Op::Fail`] injects: one of each way a write fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteFailure {
    /// 409 `Conflict`: the object has been modified (a stale `resourceVersion`).
    Conflict,
    /// 409 `AlreadyExists`: a create found the name taken.
    AlreadyExists,
    /// 404 `NotFound`: an update found the object gone.
    NotFound,
    /// 422 `Invalid`: the API server refuses the object (a rejection).
    Invalid,
    /// 503 `ServiceUnavailable` (etcd timed out): transient.
    Unavailable,
    /// No answer (connection refused): transient.
    Transport,
}

impl WriteFailure {
    /// Every failure, in the order above.
    pub const ALL: [WriteFailure; 6] = [
        WriteFailure::Conflict,
        WriteFailure::AlreadyExists,
        WriteFailure::NotFound,
        WriteFailure::Invalid,
        WriteFailure::Unavailable,
        WriteFailure::Transport,
    ];

    /// The write's outcome as the API server (or the client) gives it.
    ///
    /// ```
    /// use gateway_reconcile::FailureClass;
    /// use gateway_reconcile::testing::strategies::WriteFailure;
    ///
    /// let outcome = WriteFailure::Unavailable.outcome();
    /// assert_eq!(outcome.class(), Some(FailureClass::Transient));
    /// ```
    pub fn outcome(self) -> WriteOutcome {
        match self {
            WriteFailure::Conflict => {
                WriteOutcome::from_parts(Some(409), "Conflict", "the object has been modified")
            }
            WriteFailure::AlreadyExists => {
                WriteOutcome::from_parts(Some(409), "AlreadyExists", "already exists")
            }
            WriteFailure::NotFound => WriteOutcome::from_parts(Some(404), "NotFound", "not found"),
            WriteFailure::Invalid => {
                WriteOutcome::from_parts(Some(422), "Invalid", "spec: Invalid value")
            }
            WriteFailure::Unavailable => WriteOutcome::from_parts(
                Some(503),
                "ServiceUnavailable",
                "etcdserver: request timed out",
            ),
            WriteFailure::Transport => WriteOutcome::from_parts(None, "", "connection refused"),
        }
    }
}

impl Op {
    /// The next `count` Deployment writes fail with `failure`.
    ///
    /// ```
    /// use gateway_reconcile::testing::strategies::{Op, WriteFailure};
    ///
    /// let op = Op::fail(10, WriteFailure::Unavailable);
    /// assert_eq!(op.describe(), "fail 10 writes with 503 ServiceUnavailable: etcdserver: request timed out");
    /// ```
    pub const fn fail(count: u32, failure: WriteFailure) -> Op {
        Op::Fail(failure, count)
    }

    /// The write failures still pending are cleared.
    pub const fn stop_failures() -> Op {
        Op::Fail(WriteFailure::Unavailable, 0)
    }

    /// The Deployment controller completes the rollout.
    pub const fn rollout_complete() -> Op {
        Op::Rollout(RolloutState::Complete)
    }

    /// The clock moves forward by `seconds`.
    pub const fn advance(seconds: u32) -> Op {
        Op::Advance(seconds)
    }

    /// The ops after this one act on the Gateway `namespace/name` ([`Op::Target`]).
    ///
    /// ```
    /// use gateway_reconcile::testing::strategies::Op;
    ///
    /// assert_eq!(Op::target("ns", "b").describe(), "target the Gateway ns/b");
    /// ```
    pub fn target(namespace: &str, name: &str) -> Op {
        Op::Target {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// A short stable description, e.g. `fail 3 writes with 503 ServiceUnavailable`.
    pub fn describe(&self) -> String {
        match self {
            Op::Reconcile => "reconcile".into(),
            Op::GatewayEdit(n) => format!("Gateway edit (label edit={n})"),
            Op::ConfigurationEdit(n) => format!(
                "GatewayConfiguration edit (replicas {}, enforceReplicas {})",
                1 + n % 5,
                n % 2 == 0
            ),
            Op::ConfigurationInvalid => "GatewayConfiguration made invalid".into(),
            Op::ConfigurationFixed => "GatewayConfiguration fixed".into(),
            Op::ClassOther => "GatewayClass handed to another controller".into(),
            Op::ClassOurs => "GatewayClass handed back".into(),
            Op::DeploymentEdit => "Deployment edited by another writer".into(),
            Op::DeploymentDelete => "Deployment deleted".into(),
            Op::Autoscale(n) => format!("autoscaler sets replicas {}", 1 + n % 7),
            Op::Fail(_, 0) => "write failures cleared".into(),
            Op::Fail(failure, n) => format!(
                "fail {n} writes with {}",
                crate::sim::scenario::describe::describe_outcome(&failure.outcome())
            ),
            Op::Rollout(state) => format!("rollout {}", state.key()),
            Op::Advance(s) => format!("advance {s}s"),
            Op::Restart => "controller restart".into(),
            Op::MutateWrites(false) => "mutating admission stopped".into(),
            Op::MutateWrites(true) => "mutating admission injects a readiness gate".into(),
            Op::Target { namespace, name } => format!("target the Gateway {namespace}/{name}"),
        }
    }
}

/// At most this many reconciles fall due within one [`Op::Advance`]: more is a loop that
/// keeps asking to be run again at once.
const MAX_DUE_PER_ADVANCE: usize = 1000;

/// Applies one [`Op`] to the controller loop at the run's clock ([`Invariants::now`]), and
/// checks every reconcile it runs: the records of those reconciles, in order. A
/// [`Op::Reconcile`] runs one; an [`Op::Advance`] runs every reconcile the loop scheduled
/// ([`ControllerLoop::next_due`]) that falls due before the clock reaches its end, each at
/// its due time; the other ops run none. An op the loop refuses is a `backend` violation
/// (a [`StepError::Skip`] too: filter out of the schedule what the loop cannot do).
///
/// On a loop over several Gateways ([`ControllerLoop::scheduled`]), an advance runs every
/// Gateway's reconciles as they fall due, in the order they do, moving the loop's target to
/// each (then back); each is checked against that Gateway's own last status.
pub fn apply<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    op: &Op,
) -> Result<Vec<ReconcileReport>, Violation> {
    Ok(apply_keyed(controller, invariants, op)?
        .into_iter()
        .map(|(_, record)| record)
        .collect())
}

/// [`apply`], each record with the Gateway it is of when the advance moved the loop's
/// target to another (`None`: the target's).
pub(super) fn apply_keyed<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    op: &Op,
) -> Result<Vec<(Option<ObjectKey>, ReconcileReport)>, Violation> {
    let now = invariants.now();
    let refused = |invariants: &Invariants, e: StepError<L::Error>| {
        super::invariants::refused(invariants.steps(), "backend", &op.describe(), e)
    };
    let has_deployment = controller
        .read(Kind::Deployment)
        .map_err(|e| refused(invariants, e))?
        .is_some();
    let patch_configuration =
        |controller: &mut L, spec: Value| match controller.read(Kind::Configuration)? {
            Some(_) => controller.patch(Kind::Configuration, &json!({ "spec": spec }), now),
            None => Ok(()),
        };
    let done = match op {
        Op::Reconcile => {
            let record = controller
                .reconcile(now)
                .map_err(|e| refused(invariants, e))?;
            invariants.check(controller, &record)?;
            return Ok(vec![(None, record)]);
        }
        Op::Advance(secs) => return advance(controller, invariants, *secs),
        Op::GatewayEdit(n) => controller.patch(
            Kind::Gateway,
            &json!({"spec": {"infrastructure": {"labels": {"edit": n.to_string()}}}}),
            now,
        ),
        Op::ConfigurationEdit(n) => patch_configuration(
            controller,
            json!({"horizontalScaling": {"replicas": 1 + n % 5, "enforceReplicas": n % 2 == 0}}),
        ),
        Op::ConfigurationInvalid => patch_configuration(
            controller,
            json!({"internalSubnets": [{"attachmentType": "NAD", "cidr": "0.0.0.0/0"}]}),
        ),
        Op::ConfigurationFixed => patch_configuration(
            controller,
            json!({"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}),
        ),
        Op::ClassOther => controller.patch(
            Kind::GatewayClass,
            &json!({"spec": {"controllerName": "example.com/other"}}),
            now,
        ),
        Op::ClassOurs => {
            let ours = invariants.settings().controller_name.clone();
            controller.patch(
                Kind::GatewayClass,
                &json!({"spec": {"controllerName": ours}}),
                now,
            )
        }
        Op::DeploymentEdit if has_deployment => controller.patch(
            Kind::Deployment,
            &json!({"spec": {"template": {"spec": {"serviceAccountName": "hacked"}}}}),
            now,
        ),
        Op::DeploymentDelete if has_deployment => controller.delete(Kind::Deployment, now),
        Op::Autoscale(n) if has_deployment => controller.patch(
            Kind::Deployment,
            &json!({"spec": {"replicas": 1 + n % 7}}),
            now,
        ),
        Op::Rollout(state) if has_deployment => controller.rollout(*state, now),
        Op::DeploymentEdit | Op::DeploymentDelete | Op::Autoscale(_) | Op::Rollout(_) => Ok(()),
        Op::Fail(failure, count) => controller.fail_writes(*count, &failure.outcome()),
        Op::Restart => controller.restart(now),
        Op::MutateWrites(on) => {
            invariants.mutating = *on;
            controller.mutate_writes(on.then(mutation).as_ref(), now)
        }
        Op::Target { namespace, name } => {
            controller
                .target(namespace, name)
                .map_err(|e| refused(invariants, e))?;
            invariants.observe(controller)?;
            Ok(())
        }
    };
    done.map_err(|e| refused(invariants, e))?;
    Ok(Vec::new())
}

/// The merge patch mutating admission applies while [`Op::MutateWrites`]`(true)` holds: a
/// readiness gate, as a webhook would add one.
fn mutation() -> Value {
    json!({"spec": {"template": {"spec": {"readinessGates": [
        {"conditionType": "example.com/injected"}
    ]}}}})
}

/// [`Op::Advance`]: the reconciles that fall due on the way, each at its due time (one
/// already due runs at once), then the clock at the end. On a loop over several Gateways
/// ([`ControllerLoop::scheduled`]), every Gateway's, in the order they fall due (the
/// earlier key first on a tie), the target moved to each and back at the end.
fn advance<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    secs: u32,
) -> Result<Vec<(Option<ObjectKey>, ReconcileReport)>, Violation> {
    let start = invariants.now();
    let end = start
        .checked_add(jiff::SignedDuration::from_secs(i64::from(secs)))
        .map_err(|e| Violation {
            step: invariants.steps(),
            property: "backend",
            message: format!("advance {secs}s from {start}: {e}"),
        })?;
    let mut records = Vec::new();
    // The loop's target when the advance started, once it moves to another Gateway.
    let mut home: Option<ObjectKey> = None;
    let mut current: Option<ObjectKey> = None;
    loop {
        let scheduled = controller.scheduled();
        let next = if scheduled.is_empty() {
            controller.next_due().map(|due| (None, due))
        } else {
            scheduled
                .into_iter()
                .min_by(|(a, x), (b, y)| (x, a).cmp(&(y, b)))
                .map(|(gateway, due)| (Some(gateway), due))
        };
        let Some((gateway, due)) = next.filter(|(_, due)| *due <= end) else {
            break;
        };
        if records.len() == MAX_DUE_PER_ADVANCE {
            return Err(Violation {
                step: invariants.steps(),
                property: "requeue-honoured",
                message: format!(
                    "more than {MAX_DUE_PER_ADVANCE} reconciles fell due between {start} and {end}"
                ),
            });
        }
        if let Some(gateway) = &gateway
            && current.as_ref() != Some(gateway)
        {
            if home.is_none() {
                home = Some(target_of(controller, invariants)?);
            }
            retarget(controller, invariants, gateway)?;
            current = Some(gateway.clone());
        }
        let at = due.max(invariants.now());
        invariants.set_now(at);
        let record = controller.reconcile(at).map_err(|e| {
            super::invariants::refused(invariants.steps(), "backend", "reconcile when due", e)
        })?;
        invariants.check(controller, &record)?;
        records.push((gateway, record));
    }
    if let Some(home) = home
        && current.as_ref() != Some(&home)
    {
        retarget(controller, invariants, &home)?;
    }
    invariants.set_now(end);
    controller.advance_to(end);
    // The target's own records are the target's (`None`).
    let home_key = match &current {
        Some(_) => Some(target_of(controller, invariants)?),
        None => None,
    };
    Ok(records
        .into_iter()
        .map(|(gateway, record)| (gateway.filter(|g| Some(g) != home_key.as_ref()), record))
        .collect())
}

/// The namespace and name of the loop's target Gateway.
fn target_of<L: ControllerLoop + ?Sized>(
    controller: &L,
    invariants: &Invariants,
) -> Result<ObjectKey, Violation> {
    let gateway: Gateway =
        read_typed(controller, Kind::Gateway, invariants.steps())?.unwrap_or_default();
    let part = |p: Option<String>| p.unwrap_or_default();
    Ok((
        part(gateway.metadata.namespace),
        part(gateway.metadata.name),
    ))
}

/// Moves the loop's target to `gateway`, the checker starting on it when it never saw it.
fn retarget<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    gateway: &ObjectKey,
) -> Result<(), Violation> {
    controller.target(&gateway.0, &gateway.1).map_err(|e| {
        refused(
            invariants.steps(),
            "backend",
            "target a Gateway that fell due",
            e,
        )
    })?;
    invariants.observe(controller)
}

/// Ends a schedule: stops the injected write failures, hands the class back and fixes the
/// configuration (mutating admission stays: the write record must hold its change back),
/// then reconciles (checking each) until the status must have converged:
/// `ConfigurationApplied` and `Programmed` True, no `Degraded`, then no more writes.
///
/// It needs only the [`Backend`](crate::sim::scenario::Backend)'s required methods. A
/// backend that cannot inject write failures (`fail_writes` unsupported) has none to stop.
/// One that cannot play the Deployment controller (`rollout` unsupported) leaves the
/// rollout to its own; the Deployment's status is then whatever that controller wrote, so
/// `converge` checks only what the loop decides alone: no `Degraded` of a write failure,
/// and no more writes.
pub fn converge<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
) -> Result<(), Violation> {
    let failed = |invariants: &Invariants, what: &str, e: StepError<L::Error>| {
        refused(invariants.steps(), "converged", what, e)
    };
    match controller.fail_writes(0, &WriteOutcome::Applied) {
        Ok(()) | Err(StepError::Unsupported(_)) => {}
        Err(e) => return Err(failed(invariants, "stop the write failures", e)),
    }
    let ours = read_typed::<L, GatewayClass>(controller, Kind::GatewayClass, invariants.steps())?
        .is_none_or(|c| c.spec.controller_name == invariants.settings().controller_name);
    if !ours {
        apply(controller, invariants, &Op::ClassOurs)?;
    }
    apply(controller, invariants, &Op::ConfigurationFixed)?;
    let reconcile = |controller: &mut L, invariants: &mut Invariants| -> Result<(), Violation> {
        let record = controller
            .reconcile(invariants.now())
            .map_err(|e| failed(invariants, "reconcile", e))?;
        invariants.check(controller, &record)
    };
    for _ in 0..3 {
        reconcile(controller, invariants)?;
    }
    if read(controller, Kind::Configuration, invariants.steps())?.is_none() {
        return Ok(());
    }
    let rolled_out = match controller.rollout(RolloutState::Complete, invariants.now()) {
        Ok(()) => true,
        Err(StepError::Unsupported(_)) => false,
        Err(e) => return Err(failed(invariants, "roll out", e)),
    };
    reconcile(controller, invariants)?;
    let gateway: Gateway =
        read_typed(controller, Kind::Gateway, invariants.steps())?.unwrap_or_default();
    let conditions = &gateway.status.conditions;
    let domain = &invariants.settings().condition_domain;
    let applied = find(
        conditions,
        &format!("{domain}/{CONFIGURATION_APPLIED_NAME}"),
    );
    let degraded = find(conditions, &format!("{domain}/{DEGRADED_NAME}"));
    let converged = if rolled_out {
        is_true(applied) && is_true(find(conditions, PROGRAMMED)) && degraded.is_none()
    } else {
        // The rollout is another controller's: only a write failure's Degraded is ours.
        degraded.is_none_or(|d| d.reason != conditions::reason::APPLY_FAILING)
    };
    invariants.ensure(converged, "converged", || {
        format!("the status did not converge: {conditions:?}")
    })?;
    let writes = controller.write_counts();
    for _ in 0..3 {
        reconcile(controller, invariants)?;
    }
    let now = controller.write_counts();
    let property = if invariants.mutating {
        "no-write-loop"
    } else {
        "converged"
    };
    invariants.ensure(writes == now, property, || {
        format!(
            "converged, yet {} Deployment and {} status writes were sent",
            now.deployment_writes
                .saturating_sub(writes.deployment_writes),
            now.status_writes.saturating_sub(writes.status_writes)
        )
    })
}
