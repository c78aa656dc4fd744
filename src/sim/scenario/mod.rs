//! Scenario files: objects, steps that drive a cluster, and expectations on what
//! each reconcile did.
//!
//! Its parts, one file each: the format (the file as serde reads it, unknown keys refused,
//! and the checks made when it is read), why a file is malformed ([`ScenarioError`], naming
//! the step, the key path and the line), the checks of a reconcile's `expect` ([`Expect`],
//! [`Failure`]), the timeline a run prints ([`Report`], [`Entry`], [`Effect`]), the backend a
//! scenario runs on ([`Backend`], the simulated [`Cluster`] here), and two readers the
//! command line shares: [`parse_time`] and [`api_error_from_value`].
//!
//! ```
//! use gateway_reconcile::sim::scenario::Scenario;
//! let err = Scenario::from_json(r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
//!     "steps": [{"advance": "1m"}, {"reconcile": {}, "expct": {}}]}"#).unwrap_err();
//! assert_eq!(err.to_string(), r#"line 2: step 2: unknown key "expct" in reconcile step"#);
//! ```
//!
//! The format:
//!
//! - Top level: `description` (string), `settings` ([`Settings`] JSON), `now` (RFC 3339,
//!   default `2026-01-01T00:00:00Z`), `objects` (required, with a required `gateway`),
//!   `steps` (required list).
//! - Every step has exactly one verb; any step may also carry a `note` (string), printed in
//!   the timeline.
//! - `patch` takes one or more targets; `routes` takes a list (a merge patch on a list
//!   replaces it), so routes can be added and removed.
//! - `delete` also accepts `gateway` (marks it for deletion, as a finalizer would hold it)
//!   and `routes` (removes every route).
//! - `failWrites` replaces the failures still pending; `count` is 1 or more and `error`
//!   is required; `error` is read by [`api_error_from_value`], as `plan --outcome` is
//!   (a Kubernetes `Status` object is accepted, not one whose `status` is `Success`).
//! - Times are strict RFC 3339 ([`parse_time`]); `now`, and the clock after every
//!   `advance`, must be within the supported range.
//! - The objects and every `patch` are checked when the file is read: a value of the wrong
//!   type (`"objects.configuration.spec.internalSubnets": expected a list, found 5`), or a
//!   Gateway without `metadata.name`, `namespace` or `uid` (also when a patch removes it),
//!   makes the file malformed rather than a step that fails; so do a negative
//!   `metadata.generation` on the Gateway, the configuration or the class (given or
//!   patched), a patch that removes an object's name, namespace or uid, and a patch that
//!   renames the Gateway or moves it to another namespace (the API server refuses both).
//!   A patch is checked by what it sets (its own size), the whole object only when that
//!   finds something to say.
//! - A Gateway over the bounds its CRD sets on its lists (more than 64 `spec.listeners`,
//!   more than 8 `allowedRoutes.kinds` on a listener), given or left by a patch, makes the
//!   file malformed, naming the list and its length: the API server refuses such a Gateway.
//!   The reader keeps no listener past the bound (the rest of the list is only checked to
//!   be JSON). So does a GatewayClass with more than 8 `status.conditions` (its CRD's
//!   `maxItems`); a Gateway's own status conditions are not bounded here: the crate brings
//!   a hand-written list of more than 8 back within them (SPEC section 6).
//! - Each step is held as a compact tree while the file is read, and each `patch` and
//!   `unreadable` patch after ([`Verb::Patch`], [`Verb::Unreadable`]): a small JSON object
//!   held as a `serde_json::Value` costs dozens of times its text.
//! - Errors of the JSON reader itself (a nesting past its recursion limit, a number out of
//!   range) name the step and the key path; a value a message quotes is cut to 200
//!   characters, with its length.
//! - `expect.drift`: field paths that must each be in the Update's drift list, or on a
//!   `None` in the drift a write record holds back.
//! - `mutateWrites: {"patch": PATCH}` applies the merge patch to every Deployment write
//!   that goes through from then on (before validation and defaulting, as a mutating
//!   webhook does); `{"patch": null}` stops it. `restart: {}` drops the controller's
//!   memory (its write records); the cluster is unchanged.
//! - `objects.namespaces` (optional): namespace name → its labels (a DNS-1123 label →
//!   valid label keys and values), what the controller sees of the routes' namespaces for
//!   `allowedRoutes` selectors (`from: Selector`); a namespace not listed has no labels the
//!   controller sees, and no selector admits it. Read straight from the text into a compact
//!   [`Namespaces`](crate::sim::cluster::Namespaces); `plan --namespaces` reads the same
//!   from a Namespace List ([`namespace_list`]).
//! - A Gateway or GatewayClass given without `status` is stored with the CRD's default
//!   status (Gateway `Accepted` and `Programmed`, GatewayClass `Accepted`, each
//!   `Unknown`/`Pending`/`Waiting for controller` at `1970-01-01T00:00:00Z`, no
//!   `observedGeneration`), as the real API server stores it.
//! - A GatewayClass's `spec.parametersRef` resolves to `objects.configuration` when its
//!   `namespace` and `name` are that object's, else to an absent one (not found).
//! - `unreadable: {"configuration": PATCH}` applies the merge patch to the stored
//!   GatewayConfiguration without the type check, as a server whose CRD admits more stores
//!   it; the controller then reads the configuration as unreadable (its Gateway gets
//!   `GatewayConfiguration "NAME" cannot be read: WHY`) until a `patch` makes it readable
//!   again. Only there may a value have the wrong type: a later `patch` that leaves one is
//!   malformed, as everywhere else; but not in the identity the API server keeps:
//!   removing or retyping `metadata`, its `name`, `namespace`, `uid` or `generation` is
//!   malformed. `configuration` is required and is the only key.
//! - `snapshot: "NAME"` remembers the objects the API server serves now;
//!   `staleReads: {"from": "NAME"}` answers the controller's reads from them from then on
//!   (a lagging watch cache; writes go to the current objects, with their preconditions),
//!   until `catchUp: {}`; `"kinds": [KIND, ...]` beside `from` makes only those kinds'
//!   reads lag (`gatewayClass`, `gateway`, `configuration`, `deployment`, `routes`), as
//!   per-kind caches lag apart. Each snapshot is used by exactly one later `staleReads` (it is
//!   kept until then, and no longer); a `staleReads` naming none, a `catchUp` with no
//!   stale reads in place, or a snapshot no `staleReads` uses is malformed.
//! - `recreate: {"gateway": OBJECT}`: the Gateway is deleted for good and created again
//!   as written (checked as `objects.gateway` is), under the same name and namespace,
//!   with a `uid` of its own; what it owned stays (garbage collection is a `delete`).
//! - `expect.events`: each `{type, reason, messageContains}` (every key optional) must be
//!   matched by a distinct Event of the reconcile; other Events are allowed.
//! - `expect.gatewayClass`: the class's conditions after the reconcile, in the form of
//!   `expect.conditions` (the simulated controller settles the class on every reconcile).
//! - `expect.listeners` (revision 5): the Gateway's `status.listeners` after the step, as
//!   many entries in the same order, each `{name, supportedKinds, attachedRoutes,
//!   conditions}` ([`ListenerExpect`]; every key but `name` optional, `supportedKinds`
//!   exact, a list of `{group, kind}`, `conditions` in the form of `expect.conditions`).
//!   `expect.gatewayClassFeatures` (revision 5): the names of the class's
//!   `status.supportedFeatures`, exact and in order (no class, or no field: `[]`). Both are
//!   checked on the stored object, read through [`Backend::read`] for the steps that expect
//!   them (only those).
//! - In `expect.deployment`, a `null` inside the object means the key must be absent.
//! - `expect.conditions.T.lastTransitionTime` is compared as a time, so
//!   `2026-01-01T00:00:00Z` matches `2026-01-01T00:00:00.000Z`.
//! - A key whose value is `null` is absent for `description`, `settings`, `now`, `note`,
//!   `expect`, the optional objects and `routes`; elsewhere `null` is a value of the wrong
//!   type (`expect.deployment: null`: there must be no Deployment).

use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, ClusterError, Kind, Objects, RolloutState};
use crate::wire::tree;

mod api_error;
mod backend;
mod checks;
pub(crate) mod describe;
mod format;
mod malformed;
mod time;
mod timeline;

pub use api_error::{OutcomeError, api_error_from_value};
pub use format::namespace_list;

use crate::sim::strict_json::Lifted;
pub use backend::{Backend, StepError, WriteCounts};
pub use checks::{ConditionExpect, EventExpect, Expect, Failure, ListenerExpect};
pub use malformed::ScenarioError;
pub use time::{TimeError, parse_time};
pub use timeline::{Effect, Entry, Report, Skipped};

/// The built-in demonstration: the stale-Programmed problem and its fix (the scenario
/// `gateway-reconcile simulate` runs with no file; public for that command line, and as a
/// complete scenario file to start from).
pub const DEMO: &str = include_str!("demo.json");

/// A parsed scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Free text.
    pub description: String,
    /// The controller settings.
    pub settings: Settings,
    /// The starting time of the cluster clock.
    pub now: Timestamp,
    /// The starting objects.
    pub objects: Objects,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step of a scenario, with an optional note.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the step does.
    pub verb: Verb,
    /// Free text shown in the timeline.
    pub note: Option<String>,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Verb {
    /// Run one reconcile and check it.
    Reconcile(Box<Expect>),
    /// Move the clock forward.
    Advance(Duration),
    /// Merge-patch objects, in the order given. Each patch is held as a compact tree (a
    /// small patch as a `serde_json::Value` costs dozens of times its text); the runner
    /// hands the backend each one as a `serde_json::Value` when it applies it.
    Patch(Vec<(Kind, tree::Value)>),
    /// Delete an object.
    Delete(Kind),
    /// Make the next Deployment writes fail.
    FailWrites {
        /// How many.
        count: u32,
        /// With what.
        outcome: WriteOutcome,
    },
    /// Run the crude Deployment controller.
    Rollout(RolloutState),
    /// Mutating admission applies this merge patch to every Deployment write that
    /// succeeds from now on (`None`: stop).
    MutateWrites(Option<Value>),
    /// The controller restarts: it forgets what it held in memory (the write records).
    Restart,
    /// A merge patch stored without the type check (the GatewayConfiguration only): the
    /// controller reads the object as unreadable until a `patch` makes it readable again.
    /// Held as a compact tree, as [`Verb::Patch`]'s are.
    Unreadable(Kind, tree::Value),
    /// Remember the objects the API server serves now under a name, for a later
    /// [`Verb::StaleReads`] (kept until it uses them).
    Snapshot(String),
    /// The controller's reads are answered from a snapshot (a lagging watch cache) while
    /// writes go to the current objects, until [`Verb::CatchUp`].
    StaleReads(StaleReads),
    /// The lagging view catches up: reads see the current objects again.
    CatchUp,
    /// The object (the Gateway only) is deleted for good and created again as written,
    /// with a new uid. Held as a compact tree.
    Recreate(Kind, tree::Value),
}

/// A `staleReads` step: the snapshot the reads are answered from, and which kinds lag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleReads {
    /// The snapshot's name (taken by an earlier [`Verb::Snapshot`]).
    pub from: String,
    /// The kinds whose reads lag (`None`: all of them; the namespaces' labels lag with
    /// [`Kind::Routes`]), as a controller's per-kind caches lag apart.
    pub kinds: Option<Vec<Kind>>,
}

/// What the JSON reader refused, with the step and the key path when it knows them
/// (`step 2: "patch.configuration.spec": recursion limit exceeded`).
fn json_why(e: &crate::sim::strict_json::JsonError) -> String {
    use crate::sim::strict_json::{join_path, quote};
    let (step, rest) = match e.path.as_slice() {
        [steps, index, rest @ ..] if steps == "steps" => {
            let number = index
                .strip_prefix('[')
                .and_then(|i| i.strip_suffix(']'))
                .and_then(|i| i.parse::<usize>().ok());
            match number {
                Some(i) => (format!("step {}: ", i + 1), rest),
                None => (String::new(), e.path.as_slice()),
            }
        }
        all => (String::new(), all),
    };
    match rest.is_empty() {
        true => format!("{step}{}", e.why),
        false => format!("{step}{}: {}", quote(&join_path(rest)), e.why),
    }
}

impl Scenario {
    /// Parses a scenario from JSON text.
    ///
    /// Stricter than [`Scenario::from_value`]: a key given twice in one object is an error,
    /// and every error says the line it is on (as far as it can be placed).
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let (value, lifted) =
            crate::sim::strict_json::parse_scenario(text).map_err(|e| ScenarioError::Json {
                line: e.line,
                column: e.column,
                why: json_why(&e),
            })?;
        format::read(value, lifted).map_err(|error| {
            match crate::sim::strict_json::line_of(text, &error.path()) {
                Some(line) => ScenarioError::Located {
                    line,
                    error: Box::new(error),
                },
                None => error,
            }
        })
    }

    /// Parses a scenario from a JSON value.
    pub fn from_value(value: &Value) -> Result<Scenario, ScenarioError> {
        format::read(value.clone(), Lifted::default())
    }

    /// Runs the scenario on a fresh simulated [`Cluster`].
    pub fn run(&self) -> Report {
        self.run_with(&mut Cluster::default(), self.objects.clone())
    }

    /// Runs the scenario on a fresh simulated [`Cluster`], handing it the objects instead of
    /// a copy (for large files).
    pub fn into_report(mut self) -> Report {
        let objects = std::mem::take(&mut self.objects);
        self.run_with(&mut Cluster::default(), objects)
    }

    /// Runs the scenario on `backend` (e.g. a [`Cluster`] with other server defaults, or a
    /// real API server): creates the objects, then runs the steps.
    pub fn run_on<B: Backend>(&self, mut backend: B) -> Report {
        self.run_with(&mut backend, self.objects.clone())
    }

    fn run_with<B: Backend>(&self, backend: &mut B, objects: Objects) -> Report {
        let mut report = Report {
            description: self.description.clone(),
            timeline: Vec::new(),
            failures: Vec::new(),
            deployment_writes: 0,
            status_writes: 0,
            skipped: None,
        };
        match backend
            .create(&self.settings, objects, self.now)
            .map_err(to_text)
        {
            Ok(()) => self.run_steps(backend, &mut report),
            Err(StepError::Failed(e)) => report.failures.push(Failure {
                step: 0,
                what: "objects".into(),
                expected: "a cluster".into(),
                actual: e,
            }),
            Err(skipped) => {
                report.skipped = Some(Skipped {
                    step: 0,
                    why: skip_reason(skipped),
                });
            }
        }
        let counts = backend.write_counts();
        report.deployment_writes = counts.deployment_writes;
        report.status_writes = counts.status_writes;
        report
    }

    fn run_steps<B: Backend>(&self, backend: &mut B, report: &mut Report) {
        let mut now = self.now;
        for (i, step) in self.steps.iter().enumerate() {
            let number = i + 1;
            let effect = match &step.verb {
                Verb::Reconcile(expect) => backend
                    .reconcile(now)
                    .and_then(|record| {
                        // Read only when checked: a copy of what can be a large object.
                        let read = |kind: Kind, checked: bool| match checked {
                            true => backend.read(kind),
                            false => Ok(None),
                        };
                        let deployment = read(Kind::Deployment, expect.deployment.is_some())?;
                        let gateway = read(Kind::Gateway, expect.listeners.is_some())?;
                        let gateway_class =
                            read(Kind::GatewayClass, expect.gateway_class_features.is_some())?;
                        let stored = checks::Stored {
                            deployment: deployment.as_ref(),
                            gateway: gateway.as_ref(),
                            gateway_class: gateway_class.as_ref(),
                        };
                        checks::check_record(number, expect, &record, stored, &mut report.failures);
                        Ok(Effect::Reconciled(Box::new(record)))
                    })
                    .map_err(to_text),
                Verb::Advance(by) => match advanced(now, *by) {
                    Some(later) => {
                        now = later;
                        Ok(Effect::Advanced(*by))
                    }
                    None => Err(StepError::Failed(ClusterError::Clock(*by).to_string())),
                },
                Verb::Patch(patches) => patches
                    .iter()
                    .try_for_each(|(kind, patch)| backend.patch(*kind, &Value::from(patch), now))
                    .map(|()| Effect::Patched(patches.iter().map(|(k, _)| *k).collect()))
                    .map_err(to_text),
                Verb::Delete(kind) => backend
                    .delete(*kind, now)
                    .map(|()| Effect::Deleted(*kind))
                    .map_err(to_text),
                Verb::FailWrites { count, outcome } => backend
                    .fail_writes(*count, outcome)
                    .map(|()| Effect::WritesFailing {
                        count: *count,
                        outcome: outcome.clone(),
                    })
                    .map_err(to_text),
                Verb::Rollout(r) => backend
                    .rollout(*r, now)
                    .map(|()| Effect::RolledOut(*r))
                    .map_err(to_text),
                Verb::MutateWrites(patch) => backend
                    .mutate_writes(patch.as_ref(), now)
                    .map(|()| Effect::WritesMutated(patch.clone()))
                    .map_err(to_text),
                Verb::Restart => backend
                    .restart(now)
                    .map(|()| Effect::Restarted)
                    .map_err(to_text),
                Verb::Unreadable(kind, patch) => backend
                    .unreadable(*kind, &Value::from(patch), now)
                    .map(|()| Effect::MadeUnreadable(*kind))
                    .map_err(to_text),
                Verb::Snapshot(name) => backend
                    .snapshot(name, now)
                    .map(|()| Effect::Snapshotted(name.clone()))
                    .map_err(to_text),
                Verb::StaleReads(stale) => backend
                    .stale_reads(Some(stale), now)
                    .map(|()| Effect::ReadsLag(stale.clone()))
                    .map_err(to_text),
                Verb::CatchUp => backend
                    .stale_reads(None, now)
                    .map(|()| Effect::ReadsCaughtUp)
                    .map_err(to_text),
                Verb::Recreate(kind, object) => backend
                    .recreate(*kind, &Value::from(object), now)
                    .map(|()| Effect::Recreated(*kind))
                    .map_err(to_text),
            };
            let effect = match effect {
                Ok(effect) => effect,
                Err(StepError::Failed(e)) => {
                    report.failures.push(Failure {
                        step: number,
                        what: step.verb.name().into(),
                        expected: "the step to run".into(),
                        actual: e.clone(),
                    });
                    Effect::Error(e)
                }
                Err(skipped) => {
                    report.skipped = Some(Skipped {
                        step: number,
                        why: skip_reason(skipped),
                    });
                    return;
                }
            };
            report.timeline.push(Entry {
                step: number,
                time: now,
                note: step.note.clone(),
                effect,
            });
        }
    }
}

/// The clock `by` later, if it stays in range (the reader checks every `advance`).
fn advanced(now: Timestamp, by: Duration) -> Option<Timestamp> {
    jiff::SignedDuration::try_from(by)
        .ok()
        .and_then(|by| now.checked_add(by).ok())
}

/// A backend's error as the text a [`Failure`] shows.
fn to_text<E: std::fmt::Display>(error: StepError<E>) -> StepError<String> {
    match error {
        StepError::Failed(e) => StepError::Failed(e.to_string()),
        StepError::Skip(why) => StepError::Skip(why),
        StepError::Unsupported(operation) => StepError::Unsupported(operation),
    }
}

/// Why a scenario is skipped: the backend's reason, or the operation it does not do.
fn skip_reason(error: StepError<String>) -> String {
    match error {
        StepError::Skip(why) => why,
        StepError::Unsupported(operation) => format!("this backend cannot {operation}"),
        StepError::Failed(e) => e,
    }
}

impl Verb {
    /// The verb's key in the file (`reconcile`, `advance`, `patch`, `delete`, `failWrites`,
    /// `rollout`, `mutateWrites`, `restart`, `unreadable`, `snapshot`, `staleReads`,
    /// `catchUp`, `recreate`).
    pub fn name(&self) -> &'static str {
        match self {
            Verb::Reconcile(_) => "reconcile",
            Verb::Advance(_) => "advance",
            Verb::Patch(_) => "patch",
            Verb::Delete(_) => "delete",
            Verb::FailWrites { .. } => "failWrites",
            Verb::Rollout(_) => "rollout",
            Verb::MutateWrites(_) => "mutateWrites",
            Verb::Restart => "restart",
            Verb::Unreadable(..) => "unreadable",
            Verb::Snapshot(_) => "snapshot",
            Verb::StaleReads(_) => "staleReads",
            Verb::CatchUp => "catchUp",
            Verb::Recreate(..) => "recreate",
        }
    }
}

#[cfg(test)]
mod tests;
