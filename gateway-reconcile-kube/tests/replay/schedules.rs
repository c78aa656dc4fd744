//! The test kit's fault schedules (`testing::strategies::Op`) as scenario steps, run on any
//! scenario backend (the real server's or the simulator) with the invariants checked after
//! every reconcile.
//!
//! The ops become steps as follows; what the real server cannot take is mapped to the
//! nearest thing it can, or left out:
//!
//! | op | step |
//! |---|---|
//! | `Reconcile` | `reconcile` (no expectations: the invariants are the checks) |
//! | `GatewayEdit(n)` | `patch` of the Gateway's `infrastructure.labels.edit` |
//! | `ConfigurationEdit(n)` | `patch` of `horizontalScaling` |
//! | `ConfigurationInvalid` / `Fixed` | `patch` of `internalSubnets` (`0.0.0.0/0`: the CRD accepts it, the core refuses it) |
//! | `ClassOther` / `ClassOurs` | left out: `controllerName` is immutable on the real server |
//! | `DeploymentEdit` / `Autoscale(n)` | `patch` of the Deployment (none when there is no Deployment) |
//! | `DeploymentDelete` | `delete` of the Deployment (none when there is no Deployment) |
//! | `Fail(class, n)` | `failWrites` (a transport error, which admission cannot give, becomes a 503 `ServiceUnavailable`: the same failure class) |
//! | `Rollout(r)` | `rollout` (none when there is no Deployment) |
//! | `Advance(s)` | `advance` |
//! | `Restart` | `restart` (the write record is dropped; the server keeps pending admission) |
//! | `MutateWrites(n)` | `mutateWrites` (a readiness gate added by a mutating webhook, or stopped) |
//!
//! The invariants are checked by [`Truth`] rather than `testing::invariants::Invariants`:
//! that one checks a simulated `Cluster`, and an adapter would have to rebuild one from the
//! server's objects. A rebuilt cluster has no write record (a `Cluster` takes none from
//! outside), so under mutating admission its `applied-truth` would count the drift the
//! controller's record holds back as drift left, and fail a run that is right. [`Truth`]
//! checks what a `ReconcileRecord` and the objects read back show.

use std::fmt::Display;

use gateway_reconcile::conditions::{
    self, ACCEPTED, CONFIGURATION_APPLIED_NAME as CONFIGURATION_APPLIED, DEGRADED_NAME as DEGRADED,
    PROGRAMMED,
};
use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, ReconcileRecord, RolloutState};
use gateway_reconcile::sim::scenario::{Backend, Scenario, StepError, WriteCounts};
use gateway_reconcile::testing::strategies::{self, Op};
use gateway_reconcile::wire::{Condition, Gateway};
use gateway_reconcile::{FailureClass, Settings, WriteKind, WriteOutcome};
use jiff::Timestamp;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

/// The internal subnets of a valid GatewayConfiguration (the kit's).
fn valid_subnets() -> Value {
    json!([{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}])
}

/// The `failWrites.error` of the kit's failure class `class`.
fn error_of(class: u8) -> Value {
    // Admission always answers with an HTTP status: a transport error becomes a 503, which
    // the core classes the same (transient).
    let class = if class % 6 == 5 { 4 } else { class };
    match strategies::failure(class) {
        WriteOutcome::Api(e) => json!({"code": e.code, "reason": e.reason, "message": e.message}),
        other => json!({"reason": "", "message": other.message()}),
    }
}

/// The scenario step of `op`, or `None` when it is left out (see the module's table).
pub fn step_of(op: &Op) -> Option<Value> {
    let configuration = |spec: Value| json!({"patch": {"configuration": {"spec": spec}}});
    Some(match op {
        Op::Reconcile => json!({"reconcile": {}}),
        Op::GatewayEdit(n) => json!({"patch": {"gateway": {"spec": {"infrastructure": {
            "labels": {"edit": n.to_string()}}}}}}),
        Op::ConfigurationEdit(n) => configuration(json!({"horizontalScaling": {
            "replicas": 1 + n % 5, "enforceReplicas": n % 2 == 0}})),
        Op::ConfigurationInvalid => configuration(json!({"internalSubnets": [
            {"attachmentType": "NAD", "cidr": "0.0.0.0/0"}]})),
        Op::ConfigurationFixed => configuration(json!({"internalSubnets": valid_subnets()})),
        Op::DeploymentEdit => json!({"patch": {"deployment": {"spec": {"template": {"spec": {
            "serviceAccountName": "hacked"}}}}}}),
        Op::DeploymentDelete => json!({"delete": "deployment"}),
        Op::Autoscale(n) => json!({"patch": {"deployment": {"spec": {"replicas": 1 + n % 7}}}}),
        Op::Fail(_, 0) => return None,
        Op::Fail(class, n) => json!({"failWrites": {"count": n, "error": error_of(*class)}}),
        Op::Rollout(r) => {
            let state = ["complete", "progressing", "stalled"][usize::from(r % 3)];
            json!({ "rollout": state })
        }
        Op::Advance(s) => json!({"advance": format!("{s}s")}),
        Op::Restart => json!({"restart": {}}),
        Op::MutateWrites(n) if n % 2 == 1 => json!({"mutateWrites": {"patch": {"spec": {
            "template": {"spec": {"readinessGates": [{"conditionType": "example.com/injected"}]}}}}}}),
        Op::MutateWrites(_) => json!({"mutateWrites": {"patch": null}}),
        // ClassOther, ClassOurs, and any op added later.
        _ => return None,
    })
}

/// The kit's objects as a scenario file writes them, completed with what the real server's
/// CRDs require and the kit's objects leave out: the Gateway's `listeners`, the
/// GatewayConfiguration's `networkAttachments`, the route's `protocols` and `priority`.
pub fn objects_json() -> Value {
    let Objects {
        gateway_class,
        gateway,
        mut configuration,
        routes,
        ..
    } = strategies::objects();
    let mut gateway = gateway;
    gateway["spec"]["listeners"] = json!([{"name": "all", "port": 4000, "protocol": "TCP"}]);
    if let Some(spec) = configuration.as_mut().and_then(|c| c.get_mut("spec")) {
        spec["networkAttachments"] = json!([{"type": "NAD",
            "nad": {"name": "vlan-100", "namespace": "red", "interface": "ext-vlan0"}}]);
    }
    json!({
        "gatewayClass": gateway_class,
        "gateway": gateway,
        "configuration": configuration,
        "routes": routes.iter().map(|route| {
            let mut route = serde_json::to_value(route).unwrap_or(Value::Null);
            route["spec"]["protocols"] = json!(["TCP"]);
            route["spec"]["priority"] = json!(1);
            route
        }).collect::<Vec<_>>(),
    })
}

/// The scenario of `ops` on the kit's objects and settings; `dropped` lists the steps (by
/// their index among the steps that call the backend, every step but `advance`) to leave
/// out: the ops that were no-ops in a run (an edit of a Deployment that did not exist).
pub fn scenario_json(description: &str, ops: &[Op], dropped: &[usize]) -> Value {
    let mut calls = 0;
    let steps: Vec<Value> = ops
        .iter()
        .filter_map(step_of)
        .filter(|step| {
            if step.get("advance").is_some() {
                return true;
            }
            calls += 1;
            !dropped.contains(&(calls - 1))
        })
        .collect();
    json!({
        "description": description,
        "settings": {"degradedAfter": "2m"},
        "now": "2026-01-01T00:00:00Z",
        "objects": objects_json(),
        "steps": steps,
    })
}

/// The clock at the end of `ops`: the kit's start plus every advance.
fn end_of(ops: &[Op]) -> Timestamp {
    let secs: i64 = ops
        .iter()
        .map(|op| match op {
            Op::Advance(s) => i64::from(*s),
            _ => 0,
        })
        .sum();
    strategies::start()
        .checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap_or_else(|_| strategies::start())
}

/// The invariants of one Gateway's run, checked reconcile by reconcile from what the
/// reconcile recorded and the objects read back after it.
///
/// - `foreign-untouched`: conditions of other types are kept, byte for byte, in place;
/// - `well-formed`: owned conditions carry the Gateway's generation when written, a valid
///   type and reason, a message of at most 32768 characters, an RFC 3339
///   `lastTransitionTime` that moves only with the status;
/// - `no-flapping`: a transient or conflicting update failure never turns `Programmed`
///   False;
/// - `degraded`: `Degraded` is only ever True, and only with `Programmed` True;
/// - `applied-truth`: `ConfigurationApplied` True (of an accepted Gateway of ours) only when
///   the stored Deployment carries the current GatewayConfiguration generation;
/// - `no-write-loop`: a reconcile right after one whose Deployment write went through, with
///   no operation in between, writes no Deployment.
#[derive(Debug, Clone)]
pub struct Truth {
    settings: Settings,
    before: Vec<Condition>,
    /// An operation other than a reconcile since the last reconcile.
    changed: bool,
    /// The last reconcile's Deployment write went through.
    wrote: bool,
    /// Reconciles checked.
    pub step: usize,
}

fn find<'a>(conditions: &'a [Condition], t: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == t)
}

fn is_true(c: Option<&Condition>) -> bool {
    c.is_some_and(|c| c.status == conditions::status::TRUE)
}

fn ensure(ok: bool, property: &str, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{property}: {}", message()))
    }
}

impl Truth {
    /// Starts a run whose Gateway is `gateway` now.
    pub fn new(settings: Settings, gateway: &Value) -> Result<Truth, String> {
        let gateway: Gateway =
            serde_json::from_value(gateway.clone()).map_err(|e| format!("Gateway: {e}"))?;
        Ok(Truth {
            settings,
            before: gateway.status.conditions,
            changed: true,
            wrote: false,
            step: 0,
        })
    }

    /// Notes an operation between two reconciles.
    pub fn changed(&mut self) {
        self.changed = true;
    }

    /// Checks one reconcile: its record, and the objects read back after it.
    pub fn check(
        &mut self,
        record: &ReconcileRecord,
        gateway: &Value,
        class: Option<&Value>,
        configuration: Option<&Value>,
        deployment: Option<&Value>,
    ) -> Result<(), String> {
        self.step += 1;
        let domain = &self.settings.condition_domain;
        let applied_type = format!("{domain}/{CONFIGURATION_APPLIED}");
        let degraded_type = format!("{domain}/{DEGRADED}");
        let owned = [ACCEPTED, PROGRAMMED, &applied_type, &degraded_type];
        let gateway: Gateway =
            serde_json::from_value(gateway.clone()).map_err(|e| format!("well-formed: {e}"))?;
        let generation = gateway.metadata.generation;
        let after = &gateway.status.conditions;
        let before = &self.before;
        let ours = class.is_some_and(|c| {
            c.pointer("/spec/controllerName").and_then(Value::as_str)
                == Some(self.settings.controller_name.as_str())
        });

        let foreign = |cs: &[Condition]| -> Vec<(usize, Condition)> {
            cs.iter()
                .enumerate()
                .filter(|(_, c)| !owned.contains(&c.type_.as_str()))
                .map(|(i, c)| (i, c.clone()))
                .collect()
        };
        let (foreign_before, foreign_after) = (foreign(before), foreign(after));
        ensure(foreign_before == foreign_after, "foreign-untouched", || {
            format!("foreign conditions were {foreign_before:?}, are {foreign_after:?}")
        })?;

        for c in after.iter().filter(|c| owned.contains(&c.type_.as_str())) {
            if record.status_written && ours {
                ensure(c.observed_generation == generation, "well-formed", || {
                    format!(
                        "{} has observedGeneration {:?}, the Gateway {generation:?}",
                        c.type_, c.observed_generation
                    )
                })?;
            }
            ensure(
                conditions::is_valid_reason(&c.reason),
                "well-formed",
                || format!("{} reason {:?}", c.type_, c.reason),
            )?;
            ensure(conditions::is_valid_type(&c.type_), "well-formed", || {
                format!("type {:?}", c.type_)
            })?;
            ensure(c.message.chars().count() <= 32768, "well-formed", || {
                format!("{} message too long", c.type_)
            })?;
            ensure(
                c.last_transition_time.parse::<Timestamp>().is_ok(),
                "well-formed",
                || {
                    format!(
                        "{} lastTransitionTime {:?}",
                        c.type_, c.last_transition_time
                    )
                },
            )?;
            if let Some(b) = find(before, &c.type_) {
                ensure(
                    b.status != c.status || b.last_transition_time == c.last_transition_time,
                    "well-formed",
                    || format!("{} lastTransitionTime moved without a transition", c.type_),
                )?;
            }
        }

        let programmed = find(after, PROGRAMMED);
        let applied = find(after, &applied_type);
        if is_true(find(before, PROGRAMMED))
            && record.action == WriteKind::Update
            && let Some(class) = record.outcome.as_ref().and_then(WriteOutcome::class)
            && matches!(class, FailureClass::Transient | FailureClass::Conflict)
        {
            ensure(is_true(programmed), "no-flapping", || {
                format!("Programmed turned {programmed:?} on a {class:?} failure")
            })?;
        }

        if let Some(d) = find(after, &degraded_type) {
            ensure(d.status == conditions::status::TRUE, "degraded", || {
                format!("Degraded is {}", d.status)
            })?;
            ensure(is_true(programmed), "degraded", || {
                format!("Degraded without Programmed True: {programmed:?}")
            })?;
        }

        if ours && is_true(find(after, ACCEPTED)) && is_true(applied) {
            let key = gateway_reconcile::lookup::generation_annotation(&self.settings);
            let carried = deployment
                .and_then(|d| d.pointer("/metadata/annotations"))
                .and_then(|a| a.get(&key))
                .and_then(Value::as_str)
                .and_then(|g| g.parse::<i64>().ok());
            let wanted = configuration
                .and_then(|c| c.pointer("/metadata/generation"))
                .and_then(Value::as_i64);
            ensure(
                carried.is_some() && carried == wanted,
                "applied-truth",
                || {
                    format!(
                        "ConfigurationApplied is True, the Deployment carries generation {carried:?}, the GatewayConfiguration is at {wanted:?}"
                    )
                },
            )?;
        }

        let written = record.outcome.is_some();
        ensure(
            !(self.wrote && !self.changed && written),
            "no-write-loop",
            || {
                format!(
                    "the Deployment was written again ({:?}, drift {:?}) with nothing changed since the last write went through",
                    record.action, record.drift
                )
            },
        )?;
        self.wrote = record.outcome.as_ref().is_some_and(|o| o.class().is_none());
        self.changed = false;
        self.before = after.clone();
        Ok(())
    }
}

/// What the schedules did, summed over runs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Steps run (every op that became a step, no-ops included, and the convergence's).
    pub steps: u64,
    /// Reconciles checked (the convergence's included).
    pub reconciles: u64,
    /// Faults injected: `failWrites`, restarts, mutating admission switched on, the
    /// Deployment deleted or edited by another writer (when there was one).
    pub faults: u64,
    /// Deployment writes that failed (each one a fault met).
    pub failed_writes: u64,
    /// Deployment and status writes sent.
    pub writes: WriteCounts,
}

impl Tally {
    /// Adds `other` to this tally.
    pub fn add(&mut self, other: &Tally) {
        self.steps += other.steps;
        self.reconciles += other.reconciles;
        self.faults += other.faults;
        self.failed_writes += other.failed_writes;
        self.writes.deployment_writes += other.writes.deployment_writes;
        self.writes.status_writes += other.writes.status_writes;
    }
}

/// Ends the faults a backend injects (the pending write failures).
pub trait Faults {
    /// Stops every pending write failure.
    fn stop_faults(&mut self) -> Result<(), String>;
}

impl Faults for Cluster {
    fn stop_faults(&mut self) -> Result<(), String> {
        self.fail_writes(0, WriteOutcome::Applied);
        Ok(())
    }
}

impl Faults for super::backend::Real {
    fn stop_faults(&mut self) -> Result<(), String> {
        self.stop_failures()
    }
}

/// A backend that runs a schedule: edits of a Deployment that does not exist are no-ops
/// (as in the kit), and every reconcile is checked by [`Truth`]; the first violation ends
/// the run (as a skip of the runner, with the violation kept here).
pub struct Checked<B> {
    /// The backend.
    pub inner: B,
    truth: Option<Truth>,
    settings: Settings,
    /// Backend calls so far (every step but `advance` makes one).
    calls: usize,
    /// The calls that were no-ops.
    pub noops: Vec<usize>,
    /// The first invariant violated.
    pub violation: Option<String>,
    /// What the run did.
    pub tally: Tally,
}

impl<B: Backend> Checked<B> {
    /// Wraps `inner`.
    pub fn new(inner: B) -> Self {
        Checked {
            inner,
            truth: None,
            settings: Settings::default(),
            calls: 0,
            noops: Vec::new(),
            violation: None,
            tally: Tally::default(),
        }
    }

    /// Counts a step; whether the Deployment exists, when `needs_deployment`.
    fn enter(&mut self, needs_deployment: bool) -> Result<bool, StepError<B::Error>> {
        self.calls += 1;
        self.tally.steps += 1;
        if let Some(truth) = self.truth.as_mut() {
            truth.changed();
        }
        if needs_deployment && self.inner.read(Kind::Deployment)?.is_none() {
            self.noops.push(self.calls - 1);
            return Ok(false);
        }
        Ok(true)
    }
}

impl<B: Backend> Backend for Checked<B> {
    type Error = B::Error;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.settings = settings.clone();
        self.inner.create(settings, objects, now)?;
        let gateway = self.inner.read(Kind::Gateway)?.unwrap_or(Value::Null);
        match Truth::new(settings.clone(), &gateway) {
            Ok(truth) => self.truth = Some(truth),
            Err(why) => {
                self.violation = Some(why.clone());
                return Err(StepError::Skip(format!("invariant violated: {why}")));
            }
        }
        Ok(())
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<B::Error>> {
        self.calls += 1;
        self.tally.steps += 1;
        self.tally.reconciles += 1;
        let record = self.inner.reconcile(now)?;
        if record.outcome.as_ref().is_some_and(|o| o.class().is_some()) {
            self.tally.failed_writes += 1;
        }
        let read = |kind| self.inner.read(kind);
        let (gateway, class, configuration, deployment) = (
            read(Kind::Gateway)?.unwrap_or(Value::Null),
            read(Kind::GatewayClass)?,
            read(Kind::Configuration)?,
            read(Kind::Deployment)?,
        );
        let checked = match self.truth.as_mut() {
            Some(truth) => truth
                .check(
                    &record,
                    &gateway,
                    class.as_ref(),
                    configuration.as_ref(),
                    deployment.as_ref(),
                )
                .map_err(|why| format!("reconcile {} ({}): {why}", truth.step, record.time)),
            None => Err("no objects".into()),
        };
        match checked {
            Ok(()) => Ok(record),
            Err(why) => {
                self.violation = Some(why.clone());
                Err(StepError::Skip(format!("invariant violated: {why}")))
            }
        }
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        match self.enter(kind == Kind::Deployment)? {
            true => {
                // Another writer's edit of the Deployment is a fault; an edit of ours is not.
                self.tally.faults += u64::from(kind == Kind::Deployment);
                self.inner.patch(kind, patch, now)
            }
            false => Ok(()),
        }
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<B::Error>> {
        match self.enter(kind == Kind::Deployment)? {
            true => {
                self.tally.faults += 1;
                self.inner.delete(kind, now)
            }
            false => Ok(()),
        }
    }

    fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Result<(), StepError<B::Error>> {
        match self.enter(true)? {
            true => self.inner.rollout(state, now),
            false => Ok(()),
        }
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<B::Error>> {
        self.tally.faults += 1;
        self.enter(false)?;
        self.inner.fail_writes(count, outcome)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        if patch.is_some() {
            self.tally.faults += 1;
        }
        self.enter(false)?;
        self.inner.mutate_writes(patch, now)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.tally.faults += 1;
        self.enter(false)?;
        self.inner.restart(now)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<B::Error>> {
        self.inner.read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        self.inner.write_counts()
    }
}

/// How a schedule ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every invariant held, and the Gateway converged once the faults stopped.
    Passed,
    /// The backend could not run a step (the reason).
    Skipped(String),
    /// An invariant failed, or a step failed (what).
    Failed(String),
}

/// Ends a schedule: the write failures stop and the configuration is made valid (mutating
/// admission stays: the write record must hold its change back), then the Gateway must
/// converge: `ConfigurationApplied` and `Programmed` True and no `Degraded` after a complete
/// rollout, then three reconciles with no write at all.
pub fn converge<B: Backend + Faults>(checked: &mut Checked<B>, end: Timestamp) -> Result<(), String>
where
    B::Error: Display,
{
    let text = |e: StepError<B::Error>| e.to_string();
    let tick = |now: Timestamp| {
        now.checked_add(jiff::SignedDuration::from_secs(30))
            .unwrap_or(now)
    };
    let mut now = end;
    checked.inner.stop_faults()?;
    checked
        .patch(
            Kind::Configuration,
            &json!({"spec": {"internalSubnets": valid_subnets()}}),
            now,
        )
        .map_err(text)?;
    for _ in 0..3 {
        now = tick(now);
        checked.reconcile(now).map_err(text)?;
    }
    checked.rollout(RolloutState::Complete, now).map_err(text)?;
    now = tick(now);
    checked.reconcile(now).map_err(text)?;
    let gateway: Gateway = serde_json::from_value(
        checked
            .inner
            .read(Kind::Gateway)
            .map_err(text)?
            .unwrap_or(Value::Null),
    )
    .map_err(|e| format!("Gateway: {e}"))?;
    let conditions = &gateway.status.conditions;
    let domain = &checked.settings.condition_domain;
    ensure(
        is_true(find(
            conditions,
            &format!("{domain}/{CONFIGURATION_APPLIED}"),
        )) && is_true(find(conditions, PROGRAMMED))
            && find(conditions, &format!("{domain}/{DEGRADED}")).is_none(),
        "converged",
        || format!("the status did not converge: {conditions:?}"),
    )?;
    let before = checked.inner.write_counts();
    for _ in 0..3 {
        now = tick(now);
        checked.reconcile(now).map_err(text)?;
    }
    let after = checked.inner.write_counts();
    ensure(before == after, "converged", || {
        format!("converged, yet writes went on: {before:?} then {after:?}")
    })
}

/// Runs `ops` on `backend` (fresh: the kit's objects are created), checking every
/// reconcile, then [`converge`]: the verdict, and what the run did.
pub fn run_schedule<B: Backend + Faults>(backend: B, ops: &[Op]) -> (Verdict, Checked<B>)
where
    B::Error: Display,
{
    let mut checked = Checked::new(backend);
    let scenario = match Scenario::from_value(&scenario_json("", ops, &[])) {
        Ok(s) => s,
        Err(e) => return (Verdict::Failed(format!("not a scenario: {e}")), checked),
    };
    let report = scenario.run_on(&mut checked);
    let verdict = if let Some(v) = &checked.violation {
        Verdict::Failed(v.clone())
    } else if let Some(f) = report.failures.first() {
        Verdict::Failed(format!(
            "step {} {}: expected {}, found {}",
            f.step, f.what, f.expected, f.actual
        ))
    } else if let Some(skip) = report.skipped {
        Verdict::Skipped(format!("step {}: {}", skip.step, skip.why))
    } else {
        match converge(&mut checked, end_of(ops)) {
            Ok(()) => Verdict::Passed,
            Err(why) => Verdict::Failed(checked.violation.clone().unwrap_or(why)),
        }
    };
    checked.tally.writes = checked.inner.write_counts();
    (verdict, checked)
}

/// The schedule of `seed`: the kit's `schedule(max_len)` strategy drawn with a ChaCha
/// generator seeded from it (the same seed gives the same schedule on every machine), as
/// a tree proptest can shrink.
pub fn schedule_tree(seed: u64, max_len: usize) -> impl ValueTree<Value = Vec<Op>> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    match strategies::schedule(max_len).new_tree(&mut runner) {
        Ok(tree) => tree,
        Err(e) => panic!("the kit's schedule strategy refused seed {seed}: {e}"),
    }
}

/// Shrinks a failing schedule with proptest's own shrinking (`simplify` while it still
/// fails, `complicate` when a simpler one passes), for at most `budget` runs: the smallest
/// schedule that still failed, and its failure.
pub fn shrink(
    mut tree: impl ValueTree<Value = Vec<Op>>,
    failure: String,
    budget: usize,
    mut fails: impl FnMut(&[Op]) -> Option<String>,
) -> (Vec<Op>, String) {
    let mut smallest = (tree.current(), failure);
    if !tree.simplify() {
        return smallest;
    }
    for _ in 0..budget {
        let current = tree.current();
        let advanced = match fails(&current) {
            Some(why) => {
                smallest = (current, why);
                tree.simplify()
            }
            None => tree.complicate(),
        };
        if !advanced {
            break;
        }
    }
    smallest
}

/// How long the kit's schedules may be, in ops (each step on the real server is a few
/// requests; a `failWrites` waits for admission to start and stop applying).
pub const MAX_LEN: usize = 40;
