//! proptest strategies: configurations (valid, and invalid with their message), Gateways with
//! foreign conditions, observed Deployments, write outcomes of every class, and fault
//! schedules of [`Op`]s that [`apply`] runs on any [`ControllerLoop`] (the simulated
//! cluster, or the embedder's own).

use std::time::Duration;

use jiff::Timestamp;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, ClusterError, Kind, Objects, ReconcileRecord, RolloutState};
use crate::sim::scenario::{Backend, StepError};
use crate::wire::{Deployment, L34Route};

use super::invariants::{Invariants, Violation};
use super::{ControllerLoop, Store};

/// The GatewayClass `controllerName` of [`Settings::default`]: the Gateway is ours.
pub const OURS: &str = "meridio-2.nordix.org/gateway-controller";

/// The `type` of the foreign condition [`objects`] puts on the Gateway.
pub const FOREIGN: &str = "example.com/Foreign";

/// One step of a fault schedule, applied to a [`ControllerLoop`] (the simulated
/// [`Cluster`], or an embedder's own) by [`apply`].
///
/// Edits of an object that does not exist (the GatewayConfiguration, the Deployment) are
/// no-ops, so every schedule runs.
#[derive(Debug, Clone, PartialEq, Eq)]
// Not `#[non_exhaustive]`: an embedder that runs the schedules on its own state handles every
// step, so a new one is a compile error in its match, never a silently skipped arm.
pub enum Op {
    /// One reconcile (the loop's [`reconcile`](Backend::reconcile)), as a watch event
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
    /// when they fall due on the way.
    Advance(u32),
    /// The controller restarts: it forgets what it held in memory (its write record and
    /// schedule); what the API server holds carries over (pending write failures and
    /// mutating admission included).
    Restart,
    /// Mutating admission: `true` makes every Deployment write that goes through get an
    /// injected readiness gate (as a webhook would add one, see [`mutation`]); `false`
    /// stops it.
    MutateWrites(bool),
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
                crate::sim::scenario::describe_outcome(&failure.outcome())
            ),
            Op::Rollout(state) => format!("rollout {}", state.key()),
            Op::Advance(s) => format!("advance {s}s"),
            Op::Restart => "controller restart".into(),
            Op::MutateWrites(false) => "mutating admission stopped".into(),
            Op::MutateWrites(true) => "mutating admission injects a readiness gate".into(),
        }
    }
}

/// Any [`Op`], reconciles the most frequent.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Reconcile),
        1 => any::<u8>().prop_map(Op::GatewayEdit),
        2 => any::<u8>().prop_map(Op::ConfigurationEdit),
        1 => Just(Op::ConfigurationInvalid),
        1 => Just(Op::ConfigurationFixed),
        1 => Just(Op::ClassOther),
        1 => Just(Op::ClassOurs),
        1 => Just(Op::DeploymentEdit),
        1 => Just(Op::DeploymentDelete),
        1 => any::<u8>().prop_map(Op::Autoscale),
        2 => (write_failure(), 1u32..6).prop_map(|(f, n)| Op::Fail(f, n)),
        1 => rollout_state().prop_map(Op::Rollout),
        2 => (1u32..400).prop_map(Op::Advance),
        1 => Just(Op::Restart),
        1 => any::<bool>().prop_map(Op::MutateWrites),
    ]
}

/// A fault schedule: 1 to `max_len` [`Op`]s (at least 1).
pub fn schedule(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..max_len.max(2))
}

/// A write outcome of any class: applied, conflict, gone, rejected, transient (API error or
/// transport error).
pub fn write_outcome() -> impl Strategy<Value = WriteOutcome> {
    prop_oneof![
        Just(WriteOutcome::Applied),
        write_failure().prop_map(WriteFailure::outcome)
    ]
}

/// Any [`WriteFailure`].
pub fn write_failure() -> impl Strategy<Value = WriteFailure> {
    proptest::sample::select(&WriteFailure::ALL[..])
}

/// Any [`RolloutState`].
pub fn rollout_state() -> impl Strategy<Value = RolloutState> {
    prop_oneof![
        Just(RolloutState::Complete),
        Just(RolloutState::Progressing),
        Just(RolloutState::Stalled)
    ]
}

/// The settings of the kit's runs: the defaults with `degradedAfter` 120 s.
pub fn settings() -> Settings {
    Settings {
        degraded_after: Duration::from_secs(120),
        ..Settings::default()
    }
}

/// The start of the kit's runs: 2026-01-01T00:00:00Z.
pub fn start() -> Timestamp {
    Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The objects of the kit's runs: a Gateway `ns/gw` of our class with one listener and one
/// foreign condition ([`FOREIGN`]), a valid GatewayConfiguration `conf` (2 replicas), no
/// Deployment, the built-in template and one L34Route of the Gateway's namespace.
pub fn objects() -> Objects {
    Objects {
        gateway_class: Some(
            json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": OURS}}),
        ),
        gateway: json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
            "spec": {"gatewayClassName": "meridio",
                "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
                "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
            "status": {"conditions": [{"type": FOREIGN, "status": "True", "observedGeneration": 1,
                "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Foreign", "message": "not ours"}]}
        }),
        configuration: Some(configuration_object(&json!({
            "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
            "horizontalScaling": {"replicas": 2, "enforceReplicas": false}
        }))),
        deployment: None,
        template: None,
        routes: serde_json::from_value::<L34Route>(json!({
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}
        }))
        .into_iter()
        .collect(),
        namespaces: Default::default(),
    }
}

fn configuration_object(spec: &Value) -> Value {
    json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
        "metadata": {"name": "conf", "namespace": "ns", "generation": 1},
        "spec": spec
    })
}

/// A cluster holding [`objects`] with [`settings`], its clock at [`start`].
pub fn cluster() -> Result<Cluster, ClusterError> {
    Cluster::new(settings(), start(), objects())
}

/// The kit's in-memory store holding [`objects`] with [`settings`], its clock at [`start`]:
/// the Gateway `ns/gw` first (add others with [`Store::add`]).
pub fn store() -> Result<Store, ClusterError> {
    Store::new(settings(), start(), objects())
}

/// At most this many reconciles fall due within one [`Op::Advance`]: more is a loop that
/// keeps asking to be run again at once.
pub const MAX_DUE_PER_ADVANCE: usize = 1000;

/// Applies one [`Op`] to the controller loop at the run's clock ([`Invariants::now`]), and
/// checks every reconcile it runs: the records of those reconciles, in order. A
/// [`Op::Reconcile`] runs one; an [`Op::Advance`] runs every reconcile the loop scheduled
/// ([`ControllerLoop::next_due`]) that falls due before the clock reaches its end, each at
/// its due time; the other ops run none. An op the loop refuses is a `backend` violation
/// (a [`StepError::Skip`] too: filter out of the schedule what the loop cannot do).
pub fn apply<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    op: &Op,
) -> Result<Vec<ReconcileRecord>, Violation> {
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
            return Ok(vec![record]);
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
    };
    done.map_err(|e| refused(invariants, e))?;
    Ok(Vec::new())
}

/// The merge patch mutating admission applies while [`Op::MutateWrites`]`(true)` holds: a
/// readiness gate, as a webhook would add one.
pub fn mutation() -> Value {
    json!({"spec": {"template": {"spec": {"readinessGates": [
        {"conditionType": "example.com/injected"}
    ]}}}})
}

/// [`Op::Advance`]: the reconciles that fall due on the way, each at its due time (one
/// already due runs at once), then the clock at the end.
fn advance<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    secs: u32,
) -> Result<Vec<ReconcileRecord>, Violation> {
    let start = invariants.now();
    let end = start
        .checked_add(jiff::SignedDuration::from_secs(i64::from(secs)))
        .map_err(|e| Violation {
            step: invariants.steps(),
            property: "backend",
            message: format!("advance {secs}s from {start}: {e}"),
        })?;
    let mut records = Vec::new();
    while let Some(due) = controller.next_due().filter(|due| *due <= end) {
        if records.len() == MAX_DUE_PER_ADVANCE {
            return Err(Violation {
                step: invariants.steps(),
                property: "requeue-honoured",
                message: format!(
                    "more than {MAX_DUE_PER_ADVANCE} reconciles fell due between {start} and {end}"
                ),
            });
        }
        let at = due.max(invariants.now());
        invariants.set_now(at);
        let record = controller.reconcile(at).map_err(|e| {
            super::invariants::refused(invariants.steps(), "backend", "reconcile when due", e)
        })?;
        invariants.check(controller, &record)?;
        records.push(record);
    }
    invariants.set_now(end);
    Ok(records)
}

/// A valid GatewayConfiguration object (`ns/conf`, generation 1): one or two internal
/// subnets (IPv4, and maybe IPv6), 0 to 9 replicas, `enforceReplicas` either way.
pub fn valid_configuration() -> impl Strategy<Value = Value> {
    (1u8..=254, any::<bool>(), 0i64..10, any::<bool>()).prop_map(
        |(octet, v6, replicas, enforce)| {
            let mut subnets =
                vec![json!({"attachmentType": "NAD", "cidr": format!("169.254.{octet}.0/24")})];
            if v6 {
                subnets
                    .push(json!({"attachmentType": "NAD", "cidr": format!("fd00:{octet:x}::/64")}));
            }
            configuration_object(&json!({
                "internalSubnets": subnets,
                "horizontalScaling": {"replicas": replicas, "enforceReplicas": enforce}
            }))
        },
    )
}

/// An invalid GatewayConfiguration object, tagged with the validation message it must
/// produce (the `Accepted=False/InvalidParameters` message contains it).
pub fn invalid_configuration() -> impl Strategy<Value = (Value, String)> {
    prop_oneof![
        prop_oneof![Just("0.0.0.0/0"), Just("::/0")].prop_map(|cidr| (
            configuration_object(&json!({"internalSubnets": subnets(&[cidr.to_owned()])})),
            format!("CIDR {cidr:?}: default route CIDRs (0.0.0.0/0 or ::/0) are not allowed")
        )),
        (1u8..=254, 17u8..=24).prop_map(|(octet, prefix)| {
            let (wide, narrow) = (
                format!("10.{octet}.0.0/16"),
                format!("10.{octet}.0.0/{prefix}"),
            );
            (
                configuration_object(
                    &json!({"internalSubnets": subnets(&[wide.clone(), narrow.clone()])}),
                ),
                format!("overlapping internalSubnet CIDRs: {wide} and {narrow}"),
            )
        }),
        (1i64..1000).prop_map(|n| (
            configuration_object(&json!({
                "internalSubnets": subnets(&["169.254.100.0/24".to_owned()]),
                "horizontalScaling": {"replicas": -n}
            })),
            format!(
                "horizontalScaling.replicas: invalid value {}: must be greater than or equal to 0",
                -n
            )
        )),
    ]
}

fn subnets(cidrs: &[String]) -> Value {
    cidrs
        .iter()
        .map(|cidr| json!({"attachmentType": "NAD", "cidr": cidr}))
        .collect()
}

/// A Gateway object of our class (`ns/gw`, generation 1 to 5) carrying 0 to 3 foreign
/// conditions (types `example.com/ForeignN`), as another controller left them.
pub fn gateway_with_foreign_conditions() -> impl Strategy<Value = Value> {
    (1i64..6, 0usize..4, any::<bool>()).prop_map(|(generation, n, status)| {
        let conditions: Vec<Value> = (0..n)
            .map(|i| {
                json!({"type": format!("example.com/Foreign{i}"),
                       "status": if status { "True" } else { "False" },
                       "observedGeneration": 1, "lastTransitionTime": "2025-01-01T00:00:00Z",
                       "reason": "Foreign", "message": format!("not ours {i}")})
            })
            .collect();
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": generation},
            "spec": {"gatewayClassName": "meridio",
                "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
                "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
            "status": {"conditions": conditions}
        })
    })
}

/// An observed LB Deployment as the API server returns it: created by a reconcile of
/// [`objects`] with a [`valid_configuration`], server-defaulted, with bookkeeping, and with
/// the status of a rollout state (complete, progressing or stalled). A case the cluster
/// cannot run is filtered out.
pub fn observed_deployment() -> impl Strategy<Value = Value> {
    (valid_configuration(), rollout_state()).prop_filter_map(
        "the cluster created a Deployment",
        |(configuration, rollout)| {
            let mut objects = objects();
            objects.configuration = Some(configuration);
            let mut cluster = Cluster::new(settings(), start(), objects).ok()?;
            cluster.reconcile().ok()?;
            cluster.rollout(rollout).ok()?;
            cluster.deployment().map(Deployment::to_json)
        },
    )
}
