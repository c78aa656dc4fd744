//! The test kit's fault schedules (`testing::strategies::Op`) run by the kit itself
//! (`testing::Run`: its ops, its invariants after every reconcile, its convergence) on any
//! scenario backend, the real server's or the simulator, made a `testing::ControllerLoop`
//! by [`Looped`]: the loop's memory is the backend's write record, its schedule each
//! reconcile's `Requeue` deadline (`Requeue::deadline`), so the kit's `Advance` runs the
//! reconciles that fall due and checks that they were scheduled (`requeue-honoured`).
//!
//! What the real server needs beyond the kit, and why:
//!
//! - ops it cannot take: `ClassOther` / `ClassOurs` are left out of the schedules
//!   (`controllerName` is immutable on the real server); a transport error, which admission
//!   cannot give, becomes a 503 `ServiceUnavailable` (the same failure class); `Fail(_, 0)`
//!   (and the convergence's stop) removes the pending admission object;
//! - objects the CRDs accept: the kit's objects completed with what they require
//!   ([`objects_json`]);
//! - a step the backend cannot reproduce ([`StepError::Skip`]) makes the schedule a skip,
//!   never a failure or a pass;
//! - a failing schedule written back as a scenario file, from the calls the backend saw
//!   ([`Looped::scenario`]), to replay it on either backend.
//!
//! No invariant of its own: the kit's are a superset of the ones this file used to restate
//! (foreign conditions, well-formed conditions, no flapping, `Degraded` only with
//! `Programmed`, `ConfigurationApplied` naming the carried generation), and where this file
//! checked "no second Deployment write with nothing changed" the kit's `applied-truth`
//! (a plan made with the loop's write record asks for no write exactly when
//! `ConfigurationApplied` is True) and `no-write-loop` at convergence cover it with the
//! write record, which the kit now reads from the backend.

use std::fmt::Display;

use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, ReconcileReport, RolloutState};
use gateway_reconcile::sim::scenario::{Backend, StepError, WriteCounts};
use gateway_reconcile::testing::invariants::Invariants;
use gateway_reconcile::testing::sequences::{self, Edit, SequenceReport};
use gateway_reconcile::testing::strategies::{self, Op};
use gateway_reconcile::testing::{ControllerLoop, Run};
use gateway_reconcile::wire::tree;
use gateway_reconcile::{Settings, WriteOutcome, WriteRecord};
use jiff::Timestamp;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

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
    gateway["spec"]["listeners"] = json!([{"name": "all", "port": 4000, "protocol": "TCP"}]).into();
    if let Some(spec) = configuration.as_mut().and_then(|c| c.get_mut("spec")) {
        spec["networkAttachments"] = json!([{"type": "NAD",
            "nad": {"name": "vlan-100", "namespace": "red", "interface": "ext-vlan0"}}])
        .into();
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

/// The `failWrites.error` of a scenario step failing writes with `outcome`.
fn error_of(outcome: &WriteOutcome) -> Value {
    match outcome {
        WriteOutcome::Api(e) => json!({"code": e.code, "reason": e.reason, "message": e.message}),
        other => json!({"reason": "", "message": other.message()}),
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

/// What [`Looped`] needs from the backend beyond the scenario operations.
pub trait Server: Backend {
    /// Stops every pending write failure.
    fn stop_faults(&mut self) -> Result<(), String>;
    /// The controller's memory: the write record of its last successful Deployment write.
    fn write_record(&self) -> Option<WriteRecord>;
}

impl Server for Cluster {
    fn stop_faults(&mut self) -> Result<(), String> {
        self.fail_writes(0, WriteOutcome::Applied);
        Ok(())
    }

    fn write_record(&self) -> Option<WriteRecord> {
        Cluster::write_record(self)
    }
}

impl Server for super::backend::Real {
    fn stop_faults(&mut self) -> Result<(), String> {
        self.stop_failures()
    }

    fn write_record(&self) -> Option<WriteRecord> {
        super::backend::Real::write_record(self)
    }
}

/// A scenario backend as the kit's controller loop: it schedules the next reconcile at each
/// reconcile's requeue deadline, counts what the run did, and logs every call as a
/// scenario step.
pub struct Looped<B> {
    /// The backend.
    pub inner: B,
    settings: Settings,
    now: Timestamp,
    due: Option<Timestamp>,
    /// The scenario steps of the calls so far (an `advance` before a call at a later time).
    log: Vec<Value>,
    logged_at: Timestamp,
    /// How many logged steps the schedule's ops made (the convergence's follow).
    schedule_steps: Option<usize>,
    /// Why the backend could not run a step, when it could not.
    pub skipped: Option<String>,
    /// What the run did.
    pub tally: Tally,
}

impl<B: Server> Looped<B>
where
    B::Error: Display,
{
    /// Wraps `inner`.
    pub fn new(inner: B) -> Self {
        Looped {
            inner,
            settings: Settings::default(),
            now: strategies::start(),
            due: None,
            log: Vec::new(),
            logged_at: strategies::start(),
            schedule_steps: None,
            skipped: None,
            tally: Tally::default(),
        }
    }

    /// Logs `step` at `now`; counts it.
    fn enter(&mut self, now: Timestamp, step: Value) {
        self.now = self.now.max(now);
        if now > self.logged_at {
            let secs = now.duration_since(self.logged_at).as_secs();
            self.log.push(json!({ "advance": format!("{secs}s") }));
            self.logged_at = now;
        }
        self.log.push(step);
        self.tally.steps += 1;
    }

    /// Notes a skip, passes the result on.
    fn seen<T>(
        &mut self,
        result: Result<T, StepError<B::Error>>,
    ) -> Result<T, StepError<B::Error>> {
        if let Err(StepError::Skip(why)) = &result {
            self.skipped.get_or_insert_with(|| why.clone());
        }
        result
    }

    /// The schedule's calls (not the convergence's: a scenario cannot stop pending write
    /// failures) as a scenario file on the kit's objects and settings.
    pub fn scenario(&self, description: &str) -> Value {
        let steps = &self.log[..self.schedule_steps.unwrap_or(self.log.len())];
        json!({
            "description": description,
            "settings": {"degradedAfter": "2m"},
            "now": "2026-01-01T00:00:00Z",
            "objects": objects_json(),
            "steps": steps,
        })
    }
}

impl<B: Server> Backend for Looped<B>
where
    B::Error: Display,
{
    type Error = B::Error;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.settings = settings.clone();
        self.now = now;
        self.logged_at = now;
        let done = self.inner.create(settings, objects, now);
        self.seen(done)
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<B::Error>> {
        self.enter(now, json!({"reconcile": {}}));
        self.tally.reconciles += 1;
        let done = self.inner.reconcile(now);
        let record = self.seen(done)?;
        if record.outcome.as_ref().is_some_and(|o| o.class().is_some()) {
            self.tally.failed_writes += 1;
        }
        self.due = record.requeue.deadline(now);
        Ok(record)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter(now, json!({"patch": {kind.key(): patch}}));
        // Another writer's edit of the Deployment is a fault.
        self.tally.faults += u64::from(kind == Kind::Deployment);
        let done = self.inner.patch(kind, patch, now);
        self.seen(done)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter(now, json!({"delete": kind.key()}));
        self.tally.faults += 1;
        let done = self.inner.delete(kind, now);
        self.seen(done)
    }

    fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter(now, json!({"rollout": state.key()}));
        let done = self.inner.rollout(state, now);
        self.seen(done)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<B::Error>> {
        // Admission always answers with an HTTP status: a transport error becomes a 503,
        // which the core classes the same (transient).
        let outcome = match outcome {
            WriteOutcome::Transport { .. } => strategies::WriteFailure::Unavailable.outcome(),
            other => other.clone(),
        };
        if count == 0 {
            // Not logged: a scenario file cannot stop pending write failures.
            self.tally.steps += 1;
            return self
                .inner
                .stop_faults()
                .map_err(|why| StepError::Skip(format!("cannot stop the write failures: {why}")));
        }
        let now = self.now;
        self.enter(
            now,
            json!({"failWrites": {"count": count, "error": error_of(&outcome)}}),
        );
        self.tally.faults += 1;
        let done = self.inner.fail_writes(count, &outcome);
        self.seen(done)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        self.enter(now, json!({"mutateWrites": {"patch": patch}}));
        self.tally.faults += u64::from(patch.is_some());
        let done = self.inner.mutate_writes(patch, now);
        self.seen(done)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<B::Error>> {
        self.enter(now, json!({"restart": {}}));
        self.tally.faults += 1;
        self.due = None;
        let done = self.inner.restart(now);
        self.seen(done)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<B::Error>> {
        self.inner.read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        self.inner.write_counts()
    }
}

impl<B: Server> ControllerLoop for Looped<B>
where
    B::Error: Display,
{
    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn now(&self) -> Timestamp {
        self.now
    }

    fn write_record(&self) -> Option<WriteRecord> {
        self.inner.write_record()
    }

    fn next_due(&self) -> Option<Timestamp> {
        self.due
    }
}

/// The kit's objects, completed for the real server's CRDs ([`objects_json`]).
pub fn objects() -> Result<Objects, String> {
    let file = objects_json();
    let take = |key: &str| Some(file[key].clone().into()).filter(|v: &tree::Value| !v.is_null());
    Ok(Objects {
        gateway_class: take("gatewayClass"),
        gateway: file["gateway"].clone().into(),
        configuration: take("configuration"),
        deployment: None,
        template: None,
        routes: serde_json::from_value(file["routes"].clone())
            .map_err(|e| format!("routes: {e}"))?,
        namespaces: Default::default(),
    })
}

/// The ops of `ops` the real server can take (see the module's docs).
pub fn runnable(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .filter(|op| !matches!(op, Op::ClassOther | Op::ClassOurs))
        .cloned()
        .collect()
}

/// Runs `ops` (those the server can take) with the kit on `backend` (fresh: the kit's
/// objects are created), then the kit's convergence: the verdict, and the loop (what the
/// run did, its calls as a scenario).
pub fn run_schedule<B: Server>(backend: B, ops: &[Op]) -> (Verdict, Looped<B>)
where
    B::Error: Display,
{
    let mut looped = Looped::new(backend);
    let verdict = match run_kit(&mut looped, ops) {
        Ok(()) => Verdict::Passed,
        Err(why) => match &looped.skipped {
            Some(skip) => Verdict::Skipped(skip.clone()),
            None => Verdict::Failed(why),
        },
    };
    looped.tally.writes = looped.inner.write_counts();
    (verdict, looped)
}

fn run_kit<B: Server>(looped: &mut Looped<B>, ops: &[Op]) -> Result<(), String>
where
    B::Error: Display,
{
    let objects = objects()?;
    looped
        .create(&strategies::settings(), objects, strategies::start())
        .map_err(|e| format!("create: {e}"))?;
    let mut run = Run::new(&mut *looped).map_err(|v| v.to_string())?;
    let done = runnable(ops).iter().try_for_each(|op| run.apply(op));
    drop(run);
    looped.schedule_steps = Some(looped.log.len());
    done.map_err(|v| v.to_string())?;
    Run::new(&mut *looped)
        .and_then(|mut run| run.converge())
        .map_err(|v| v.to_string())
}

/// Runs the desired-state sequence `edits` with the kit (`testing::sequences`: each edit,
/// then convergence and the crate's plan on the final objects as the oracle) on `backend`
/// (fresh: the kit's objects are created): the verdict, the loop, and what the sequence did
/// when it passed.
pub fn run_sequence<B: Server>(
    backend: B,
    edits: &[Edit],
) -> (Verdict, Looped<B>, Option<SequenceReport>)
where
    B::Error: Display,
{
    let mut looped = Looped::new(backend);
    let ran = objects().and_then(|objects| {
        looped
            .create(&strategies::settings(), objects, strategies::start())
            .map_err(|e| format!("create: {e}"))?;
        let mut invariants = Invariants::new(&looped).map_err(|v| v.to_string())?;
        sequences::run_sequence(&mut looped, &mut invariants, edits).map_err(|v| v.to_string())
    });
    let verdict = match (&ran, &looped.skipped) {
        (Ok(_), _) => Verdict::Passed,
        (Err(_), Some(skip)) => Verdict::Skipped(skip.clone()),
        (Err(why), None) => Verdict::Failed(why.clone()),
    };
    looped.tally.writes = looped.inner.write_counts();
    (verdict, looped, ran.ok())
}

/// The desired-state sequence of `seed`: `len` edits drawn from the kit's
/// `sequences::sequence` strategy with a ChaCha generator seeded from it.
pub fn sequence_of(seed: u64, len: usize) -> Vec<Edit> {
    let mut runner = seeded_runner(seed);
    match sequences::sequence(len).new_tree(&mut runner) {
        Ok(tree) => tree.current(),
        Err(e) => panic!("the kit's sequence strategy refused seed {seed}: {e}"),
    }
}

/// A proptest runner whose generator is ChaCha seeded from `seed`: the same draws on every
/// machine.
fn seeded_runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    TestRunner::new_with_rng(Config::default(), rng)
}

/// The schedule of `seed`: the kit's `schedule(max_len)` strategy drawn with a ChaCha
/// generator seeded from it (the same seed gives the same schedule on every machine), as
/// a tree proptest can shrink.
pub fn schedule_tree(seed: u64, max_len: usize) -> impl ValueTree<Value = Vec<Op>> {
    let mut runner = seeded_runner(seed);
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
