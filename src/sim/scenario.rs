//! Scenario files (SPEC §7): a simulated cluster, steps that drive it, and expectations on
//! what each reconcile did.
//!
//! A scenario is parsed by hand from JSON so that every error names where it is: the step
//! number (1-based) and the key, e.g. `step 3: unknown key "expct" in reconcile step`, and,
//! from [`Scenario::from_json`], the line (`line 12: step 3: ...`). A key given twice in
//! one object is an error there too.
//! [`Scenario::run`] drives a [`Cluster`] through the steps and returns a [`Report`]: the
//! timeline and every failed expectation.
//!
//! ```
//! use gateway_reconcile::sim::scenario::Scenario;
//! let err = Scenario::from_json(r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}},
//!     "steps": [{"advance": "1m"}, {"reconcile": {}, "expct": {}}]}"#).unwrap_err();
//! assert_eq!(err.to_string(), r#"line 2: step 2: unknown key "expct" in reconcile step"#);
//! ```
//!
//! The format, with the choices made where SPEC §7 is silent:
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
//!   makes the file malformed rather than a step that fails.
//! - `expect.drift`: field paths that must each be in the Update's drift list.
//! - In `expect.deployment`, a `null` inside the object means the key must be absent.
//! - `expect.conditions.T.lastTransitionTime` is compared as a time, so
//!   `2026-01-01T00:00:00Z` matches `2026-01-01T00:00:00.000Z`.

use std::fmt::{self, Write as _};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Map, Value};

use crate::outcome::WriteOutcome;
use crate::reconcile::Requeue;
use crate::settings::{Settings, format_duration, parse_duration};
use crate::sim::cluster::{self, Cluster, Kind, Objects, Rollout, StepRecord, WriteKind};
use crate::wire::L34Route;

/// The built-in demonstration: the stale-Programmed problem and its fix.
pub const DEMO: &str = include_str!("demo.json");

const VERBS: [&str; 6] = [
    "reconcile",
    "advance",
    "patch",
    "delete",
    "failWrites",
    "rollout",
];

const DEFAULT_NOW: &str = "2026-01-01T00:00:00Z";

/// Why a scenario file is malformed. Every message names the step (1-based) and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not JSON.
    #[error("invalid JSON at line {line}, column {column}: {why}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        why: String,
    },
    /// A key the format does not have.
    #[error("{}unknown key {key:?} in {context}", at(*.step))]
    UnknownKey {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key.
        key: String,
        /// Where it was, e.g. `reconcile step` or `expect.conditions.Programmed`.
        context: String,
    },
    /// A required key is missing.
    #[error("{}missing key {key:?} in {context}", at(*.step))]
    MissingKey {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key.
        key: String,
        /// Where it should be.
        context: String,
    },
    /// A value of the wrong JSON type.
    #[error("{}{key:?} must be {expected} (found {found})", at(*.step))]
    WrongType {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key, dotted from the step (or the top level).
        key: String,
        /// What it must be.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A value of the right type that is not valid.
    #[error("{}{key:?}: {why}", at(*.step))]
    InvalidValue {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key, dotted from the step (or the top level).
        key: String,
        /// What is wrong.
        why: String,
    },
    /// A step whose verb is not one of the format's.
    #[error(
        "step {step}: unknown step {verb:?} (expected one of reconcile, advance, patch, \
         delete, failWrites, rollout)"
    )]
    UnknownVerb {
        /// The step.
        step: usize,
        /// The verb found.
        verb: String,
    },
    /// A step with no verb, or with two.
    #[error("step {step}: {why}")]
    BadStep {
        /// The step.
        step: usize,
        /// What is wrong.
        why: String,
    },
    /// Another error, with the line of the file where it is.
    #[error("line {line}: {error}")]
    Located {
        /// 1-based line.
        line: usize,
        /// The error.
        error: Box<ScenarioError>,
    },
}

impl ScenarioError {
    /// The step (1-based) the error is in, if any.
    fn step(&self) -> Option<usize> {
        match self {
            ScenarioError::Json { .. } => None,
            ScenarioError::UnknownKey { step, .. }
            | ScenarioError::MissingKey { step, .. }
            | ScenarioError::WrongType { step, .. }
            | ScenarioError::InvalidValue { step, .. } => *step,
            ScenarioError::UnknownVerb { step, .. } | ScenarioError::BadStep { step, .. } => {
                Some(*step)
            }
            ScenarioError::Located { error, .. } => error.step(),
        }
    }

    /// The key path from the top of the file, as far as the error knows it.
    fn path(&self) -> Vec<String> {
        let mut path = Vec::new();
        if let Some(step) = self.step() {
            path.push("steps".to_owned());
            path.push(format!("[{}]", step - 1));
        }
        let key = match self {
            ScenarioError::UnknownKey { context, key, .. } => {
                // The context names where the key is; a step's context is the step itself.
                let mut k = if context.ends_with(" step") || context == "the scenario" {
                    String::new()
                } else {
                    format!("{context}.")
                };
                k.push_str(key);
                k
            }
            ScenarioError::MissingKey { context, .. } => {
                if context.ends_with(" step") || context == "the scenario" {
                    String::new()
                } else {
                    context.clone()
                }
            }
            ScenarioError::WrongType { key, .. } | ScenarioError::InvalidValue { key, .. } => {
                key.clone()
            }
            _ => String::new(),
        };
        path.extend(key_path(&key));
        path
    }
}

/// `a.b[2].c` as segments `a`, `b`, `[2]`, `c`.
fn key_path(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in key.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                out.push(rest[..i].to_owned());
            }
            rest = &rest[i..];
            while let Some(end) = rest.find(']') {
                out.push(rest[..=end].to_owned());
                rest = &rest[end + 1..];
            }
        } else {
            out.push(rest.to_owned());
        }
    }
    out
}

fn at(step: Option<usize>) -> String {
    step.map(|s| format!("step {s}: ")).unwrap_or_default()
}

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
    /// Merge-patch objects, in the order given.
    Patch(Vec<(Kind, Value)>),
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
    Rollout(Rollout),
}

/// What a reconcile must have done; every field optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expect {
    /// The Deployment action.
    pub action: Option<WriteKind>,
    /// Whether the status was written.
    pub status_written: Option<bool>,
    /// Per condition type: `None` = must be absent.
    pub conditions: Vec<(String, Option<ConditionExpect>)>,
    /// The address values, exact and in order.
    pub addresses: Option<Vec<String>>,
    /// `Some(None)`: no Deployment; `Some(Some(v))`: the stored Deployment contains `v`.
    pub deployment: Option<Option<Value>>,
    /// Field paths that must each be in the Update's drift list.
    pub drift: Option<Vec<String>>,
    /// The requeue hint.
    pub requeue: Option<Requeue>,
}

/// What one condition must hold; every field optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConditionExpect {
    /// `True`, `False` or `Unknown`.
    pub status: Option<String>,
    /// The reason.
    pub reason: Option<String>,
    /// The exact message.
    pub message: Option<String>,
    /// Texts the message must contain.
    pub message_contains: Vec<String>,
    /// The condition's observedGeneration.
    pub observed_generation: Option<i64>,
    /// The condition's lastTransitionTime.
    pub last_transition_time: Option<Timestamp>,
}

/// One failed expectation (or a step that could not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The step (1-based).
    pub step: usize,
    /// What was checked, e.g. `conditions.Programmed.message`.
    pub what: String,
    /// What the scenario expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {}: {}: expected {}, found {}",
            self.step, self.what, self.expected, self.actual
        )
    }
}

/// What happened at one step.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A reconcile ran.
    Reconciled(Box<StepRecord>),
    /// The clock moved.
    Advanced(Duration),
    /// Objects were patched.
    Patched(Vec<Kind>),
    /// An object was deleted.
    Deleted(Kind),
    /// Deployment writes were set to fail.
    WritesFailing {
        /// How many.
        count: u32,
        /// With what.
        outcome: WriteOutcome,
    },
    /// The Deployment controller ran.
    RolledOut(Rollout),
    /// The step could not run (the failure is in [`Report::failures`]).
    Error(String),
}

/// One timeline entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The step (1-based).
    pub step: usize,
    /// The cluster clock after the step.
    pub time: Timestamp,
    /// The step's note.
    pub note: Option<String>,
    /// What happened.
    pub event: Event,
}

/// The result of running a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The scenario's description.
    pub description: String,
    /// What happened, step by step.
    pub timeline: Vec<Entry>,
    /// Every failed expectation, in step order.
    pub failures: Vec<Failure>,
    /// Deployment write requests sent.
    pub deployment_writes: u64,
    /// Gateway status writes.
    pub status_writes: u64,
}

impl Report {
    /// True when every expectation held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl Scenario {
    /// Parses a scenario from JSON text.
    ///
    /// Stricter than [`Scenario::from_value`]: a key given twice in one object is an error,
    /// and every error says the line it is on (as far as it can be placed).
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let (value, routes) = crate::sim::strict_json::parse_scenario(text).map_err(|e| {
            // serde_json ends its message with the position, given apart here.
            let why = e.to_string();
            let why = why
                .rsplit_once(" at line ")
                .map_or(why.as_str(), |(why, _)| why)
                .to_owned();
            ScenarioError::Json {
                line: e.line(),
                column: e.column(),
                why,
            }
        })?;
        Scenario::from_owned(value, routes).map_err(|error| match crate::sim::strict_json::line_of(
            text,
            &error.path(),
        ) {
            Some(line) => ScenarioError::Located {
                line,
                error: Box::new(error),
            },
            None => error,
        })
    }

    /// Parses a scenario from a JSON value.
    pub fn from_value(value: &Value) -> Result<Scenario, ScenarioError> {
        Scenario::from_owned(value.clone(), None)
    }

    /// Parses a scenario, moving the objects out of `value` rather than copying them;
    /// `routes` are the routes already read, when `value` has none.
    fn from_owned(
        mut value: Value,
        routes: Option<Vec<L34Route>>,
    ) -> Result<Scenario, ScenarioError> {
        let top = Ctx { step: None };
        let objects_value = value.as_object_mut().and_then(|m| m.remove("objects"));
        let map = top.object(&value, "scenario")?;
        top.keys(
            map,
            &["description", "settings", "now", "objects", "steps"],
            "the scenario",
        )?;
        let description = match map.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(v) => top.string(v, "description")?.to_owned(),
        };
        let settings = match map.get("settings") {
            None | Some(Value::Null) => Settings::default(),
            Some(v) => {
                top.object(v, "settings")?;
                serde_path_to_error::deserialize(v).map_err(|e| {
                    let path = e.path().to_string();
                    let key = if path == "." {
                        "settings".to_owned()
                    } else {
                        format!("settings.{path}")
                    };
                    let message = e.into_inner().to_string();
                    // A setting's own validation names the field after `settings: `; the
                    // key already says `settings`.
                    let message = message.strip_prefix("settings: ").unwrap_or(&message);
                    top.invalid(&key, crate::sim::strict_json::plain_message(message))
                })?
            }
        };
        let now = match map.get("now") {
            None | Some(Value::Null) => DEFAULT_NOW.parse().map_err(|e| top.invalid("now", e))?,
            Some(v) => top.time(v, "now")?,
        };
        let mut objects = parse_objects(&top, objects_value)?;
        if let Some(routes) = routes {
            objects.routes = routes;
        }
        let steps = top.array(top.required(map, "steps", "the scenario")?, "steps")?;
        let steps: Vec<Step> = steps
            .iter()
            .enumerate()
            .map(|(i, step)| parse_step(i + 1, step))
            .collect::<Result<_, _>>()?;
        check_patches(&objects, &steps)?;
        // The clock must stay in the supported range through every advance.
        let mut clock = now;
        for (i, step) in steps.iter().enumerate() {
            if let Verb::Advance(by) = step.verb {
                clock = jiff::SignedDuration::try_from(by)
                    .ok()
                    .and_then(|by| clock.checked_add(by).ok())
                    .ok_or_else(|| ScenarioError::InvalidValue {
                        step: Some(i + 1),
                        key: "advance".into(),
                        why: format!(
                            "moves the clock past {}, out of the supported range",
                            Timestamp::MAX
                        ),
                    })?;
            }
        }
        Ok(Scenario {
            description,
            settings,
            now,
            objects,
            steps,
        })
    }

    /// Runs the scenario on a fresh [`Cluster`].
    pub fn run(&self) -> Report {
        self.run_with(self.objects.clone())
    }

    /// Runs the scenario on a fresh [`Cluster`], handing it the objects instead of a copy
    /// (for large files).
    pub fn into_report(mut self) -> Report {
        let objects = std::mem::take(&mut self.objects);
        self.run_with(objects)
    }

    fn run_with(&self, objects: Objects) -> Report {
        match Cluster::new(self.settings.clone(), self.now, objects) {
            Ok(cluster) => self.run_on(cluster),
            Err(e) => Report {
                description: self.description.clone(),
                timeline: Vec::new(),
                failures: vec![Failure {
                    step: 0,
                    what: "objects".into(),
                    expected: "a cluster".into(),
                    actual: e.to_string(),
                }],
                deployment_writes: 0,
                status_writes: 0,
            },
        }
    }

    /// Runs the scenario's steps on a given cluster (e.g. one with other server defaults).
    pub fn run_on(&self, mut cluster: Cluster) -> Report {
        let mut timeline = Vec::new();
        let mut failures = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let number = i + 1;
            let event = match &step.verb {
                Verb::Reconcile(expect) => match cluster.reconcile() {
                    Ok(record) => {
                        check_record(number, expect, &record, &cluster, &mut failures);
                        Ok(Event::Reconciled(Box::new(record)))
                    }
                    Err(e) => Err(e),
                },
                Verb::Advance(by) => cluster.advance(*by).map(|()| Event::Advanced(*by)),
                Verb::Patch(patches) => patches
                    .iter()
                    .try_for_each(|(kind, patch)| cluster.patch(*kind, patch))
                    .map(|()| Event::Patched(patches.iter().map(|(k, _)| *k).collect())),
                Verb::Delete(kind) => cluster.delete(*kind).map(|()| Event::Deleted(*kind)),
                Verb::FailWrites { count, outcome } => {
                    cluster.fail_writes(*count, outcome.clone());
                    Ok(Event::WritesFailing {
                        count: *count,
                        outcome: outcome.clone(),
                    })
                }
                Verb::Rollout(r) => cluster.rollout(*r).map(|()| Event::RolledOut(*r)),
            };
            let event = event.unwrap_or_else(|e| {
                failures.push(Failure {
                    step: number,
                    what: verb_name(&step.verb).into(),
                    expected: "the step to run".into(),
                    actual: e.to_string(),
                });
                Event::Error(e.to_string())
            });
            timeline.push(Entry {
                step: number,
                time: cluster.now(),
                note: step.note.clone(),
                event,
            });
        }
        Report {
            description: self.description.clone(),
            timeline,
            failures,
            deployment_writes: cluster.deployment_writes(),
            status_writes: cluster.status_writes(),
        }
    }
}

fn verb_name(verb: &Verb) -> &'static str {
    match verb {
        Verb::Reconcile(_) => "reconcile",
        Verb::Advance(_) => "advance",
        Verb::Patch(_) => "patch",
        Verb::Delete(_) => "delete",
        Verb::FailWrites { .. } => "failWrites",
        Verb::Rollout(_) => "rollout",
    }
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Where parsing is: which step (if any). Keys are passed dotted from there.
#[derive(Clone, Copy)]
struct Ctx {
    step: Option<usize>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl Ctx {
    fn wrong(&self, key: &str, expected: &'static str, v: &Value) -> ScenarioError {
        ScenarioError::WrongType {
            step: self.step,
            key: key.to_owned(),
            expected,
            found: type_name(v),
        }
    }

    fn invalid(&self, key: &str, why: impl fmt::Display) -> ScenarioError {
        ScenarioError::InvalidValue {
            step: self.step,
            key: key.to_owned(),
            why: why.to_string(),
        }
    }

    fn object<'v>(&self, v: &'v Value, key: &str) -> Result<&'v Map<String, Value>, ScenarioError> {
        v.as_object().ok_or_else(|| self.wrong(key, "an object", v))
    }

    fn array<'v>(&self, v: &'v Value, key: &str) -> Result<&'v Vec<Value>, ScenarioError> {
        v.as_array().ok_or_else(|| self.wrong(key, "a list", v))
    }

    fn string<'v>(&self, v: &'v Value, key: &str) -> Result<&'v str, ScenarioError> {
        v.as_str().ok_or_else(|| self.wrong(key, "a string", v))
    }

    fn boolean(&self, v: &Value, key: &str) -> Result<bool, ScenarioError> {
        v.as_bool().ok_or_else(|| self.wrong(key, "a boolean", v))
    }

    fn integer(&self, v: &Value, key: &str) -> Result<i64, ScenarioError> {
        v.as_i64().ok_or_else(|| self.wrong(key, "an integer", v))
    }

    fn duration(&self, v: &Value, key: &str) -> Result<Duration, ScenarioError> {
        parse_duration(self.string(v, key)?).map_err(|e| self.invalid(key, e))
    }

    fn time(&self, v: &Value, key: &str) -> Result<Timestamp, ScenarioError> {
        parse_time(self.string(v, key)?).map_err(|e| self.invalid(key, e))
    }

    fn required<'v>(
        &self,
        map: &'v Map<String, Value>,
        key: &str,
        context: &str,
    ) -> Result<&'v Value, ScenarioError> {
        map.get(key).ok_or_else(|| ScenarioError::MissingKey {
            step: self.step,
            key: key.to_owned(),
            context: context.to_owned(),
        })
    }

    fn keys(
        &self,
        map: &Map<String, Value>,
        allowed: &[&str],
        context: &str,
    ) -> Result<(), ScenarioError> {
        match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(ScenarioError::UnknownKey {
                step: self.step,
                key: key.clone(),
                context: context.to_owned(),
            }),
            None => Ok(()),
        }
    }
}

/// The objects, moved out of the parsed file (no copy: they can be large).
fn parse_objects(top: &Ctx, value: Option<Value>) -> Result<Objects, ScenarioError> {
    let value = value.ok_or_else(|| ScenarioError::MissingKey {
        step: None,
        key: "objects".into(),
        context: "the scenario".into(),
    })?;
    top.object(&value, "objects")?;
    let Value::Object(mut map) = value else {
        return Err(top.wrong("objects", "an object", &Value::Null));
    };
    let allowed: Vec<&str> = Kind::ALL.iter().map(|k| k.key()).collect();
    top.keys(&map, &allowed, "objects")?;
    let mut optional = |kind: Kind| -> Result<Option<Value>, ScenarioError> {
        let key = format!("objects.{kind}");
        match map.remove(kind.key()) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                top.object(&v, &key)?;
                shape(kind, &v)
                    .map_err(|(path, why)| top.invalid(&format!("{key}.{path}"), why))?;
                cluster::check(kind, Some(&v)).map_err(|e| match e {
                    cluster::ClusterError::Malformed { why, .. } => top.invalid(&key, why),
                    other => top.invalid(&key, other),
                })?;
                Ok(Some(v))
            }
        }
    };
    let gateway = optional(Kind::Gateway)?.ok_or_else(|| ScenarioError::MissingKey {
        step: None,
        key: "gateway".into(),
        context: "objects".into(),
    })?;
    gateway_identity(&gateway)
        .map_err(|(path, why)| top.invalid(&format!("objects.gateway.{path}"), why))?;
    let gateway_class = optional(Kind::GatewayClass)?;
    let configuration = optional(Kind::Configuration)?;
    let deployment = optional(Kind::Deployment)?;
    let template = optional(Kind::Template)?;
    let routes = match map.remove("routes") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => {
            top.array(&v, "objects.routes")?;
            cluster::typed_at::<Vec<L34Route>>(&v).map_err(|(path, why)| {
                top.invalid(&format!("objects.routes{}", path.unwrap_or_default()), why)
            })?
        }
    };
    Ok(Objects {
        gateway_class,
        gateway,
        configuration,
        deployment,
        template,
        routes,
    })
}

/// The Gateway fields a scenario cannot do without (SPEC §7): the crate cannot work on a
/// Gateway without them. Returns the missing field.
fn gateway_identity(gateway: &Value) -> Result<(), (String, String)> {
    for field in ["name", "namespace", "uid"] {
        match gateway.pointer(&format!("/metadata/{field}")) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => {
                return Err((
                    format!("metadata.{field}"),
                    "is required (a Gateway always has one)".to_owned(),
                ));
            }
        }
    }
    Ok(())
}

/// The metadata an API object keeps once it has it.
const IDENTITY: [&str; 3] = ["name", "namespace", "uid"];

/// Every patch applied, in order, to a copy of the objects it touches: a patch that leaves
/// an object the crate cannot read (a value of the wrong type, a Gateway without its name,
/// namespace or uid) makes the file malformed, named by step and key, before anything runs.
fn check_patches(objects: &Objects, steps: &[Step]) -> Result<(), ScenarioError> {
    use std::collections::BTreeMap;
    // Copied on the first patch of each kind only: most files patch one or two objects.
    let mut shadow: BTreeMap<&'static str, Option<Value>> = BTreeMap::new();
    let initial = |kind: Kind| -> Option<Value> {
        match kind {
            Kind::GatewayClass => objects.gateway_class.clone(),
            Kind::Gateway => Some(objects.gateway.clone()),
            Kind::Configuration => objects.configuration.clone(),
            Kind::Deployment => objects.deployment.clone(),
            Kind::Template => Some(
                objects
                    .template
                    .clone()
                    .unwrap_or_else(|| crate::template::default_template().object.into()),
            ),
            // A patch on the routes replaces them: what they were does not matter.
            Kind::Routes => None,
        }
    };
    for (i, step) in steps.iter().enumerate() {
        let ctx = Ctx { step: Some(i + 1) };
        match &step.verb {
            Verb::Delete(kind) if !matches!(kind, Kind::Gateway) => {
                let gone = match kind {
                    Kind::Routes => Some(Value::Array(Vec::new())),
                    _ => None,
                };
                shadow.insert(kind.key(), gone);
            }
            Verb::Patch(patches) => {
                for (kind, patch) in patches {
                    let slot = shadow.entry(kind.key()).or_insert_with(|| initial(*kind));
                    let identity = |v: Option<&Value>, field: &str| {
                        v.and_then(|v| v.pointer(&format!("/metadata/{field}")))
                            .is_some_and(|f| !f.is_null())
                    };
                    let had: Vec<&str> = IDENTITY
                        .into_iter()
                        .filter(|f| identity(slot.as_ref(), f))
                        .collect();
                    match (kind, slot.as_mut()) {
                        (Kind::Routes, _) | (_, None) => *slot = Some(patch.clone()),
                        (_, Some(target)) => crate::sim::merge_patch::apply(target, patch),
                    }
                    let Some(value) = slot.as_ref() else { continue };
                    let key = format!("patch.{}", kind.key());
                    let at = |path: String| {
                        if path.starts_with('[') {
                            format!("{key}{path}")
                        } else {
                            format!("{key}.{path}")
                        }
                    };
                    if *kind == Kind::Gateway {
                        gateway_identity(value).map_err(|(path, why)| {
                            ctx.invalid(&at(path), format!("removed by the patch, but {why}"))
                        })?;
                    }
                    // The API server never lets an object lose its name, namespace or uid.
                    if !matches!(kind, Kind::Template | Kind::Routes)
                        && let Some(field) = had.iter().find(|f| !identity(Some(value), f))
                    {
                        return Err(ctx.invalid(
                            &at(format!("metadata.{field}")),
                            "cannot be removed (the API server keeps it)",
                        ));
                    }
                    shape(*kind, value).map_err(|(path, why)| ctx.invalid(&at(path), why))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A value of the wrong type inside an object: its key path (from the object) and why.
fn shape(kind: Kind, value: &Value) -> Result<(), (String, String)> {
    use crate::wire::{Gateway, GatewayClass, GatewayConfiguration};
    let found = match kind {
        Kind::GatewayClass => cluster::typed_at::<GatewayClass>(value).map(drop),
        Kind::Gateway => cluster::typed_at::<Gateway>(value).map(drop),
        Kind::Configuration => cluster::typed_at::<GatewayConfiguration>(value).map(drop),
        // A Deployment is any JSON object (kept whole): nothing to read, nothing to copy.
        Kind::Deployment | Kind::Template => Ok(()),
        Kind::Routes => cluster::typed_at::<Vec<L34Route>>(value).map(drop),
    };
    match found {
        Ok(()) | Err((None, _)) => Ok(()),
        Err((Some(path), why)) => Err((path, why)),
    }
}

fn parse_step(number: usize, value: &Value) -> Result<Step, ScenarioError> {
    let ctx = Ctx { step: Some(number) };
    let map = ctx.object(value, "step")?;
    let mut verbs = map
        .keys()
        .filter(|k| k.as_str() != "note" && k.as_str() != "expect");
    let verb = match (verbs.next(), verbs.next()) {
        (None, _) => {
            return Err(ScenarioError::BadStep {
                step: number,
                why: "no step verb (expected one of reconcile, advance, patch, delete, \
                      failWrites, rollout)"
                    .into(),
            });
        }
        (Some(v), None) if !VERBS.contains(&v.as_str()) => {
            return Err(ScenarioError::UnknownVerb {
                step: number,
                verb: v.clone(),
            });
        }
        (Some(v), None) => v.as_str(),
        (Some(a), Some(b)) => {
            // A known verb next to an unknown key: the key is the mistake.
            let (known, other) = match (VERBS.contains(&a.as_str()), VERBS.contains(&b.as_str())) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                (true, true) => {
                    return Err(ScenarioError::BadStep {
                        step: number,
                        why: format!("more than one step verb: {a:?} and {b:?}"),
                    });
                }
                (false, false) => {
                    return Err(ScenarioError::UnknownVerb {
                        step: number,
                        verb: a.clone(),
                    });
                }
            };
            return Err(ScenarioError::UnknownKey {
                step: Some(number),
                key: other.clone(),
                context: format!("{known} step"),
            });
        }
    };
    let context = format!("{verb} step");
    let allowed: &[&str] = if verb == "reconcile" {
        &["reconcile", "expect", "note"]
    } else {
        &[verb, "note"]
    };
    ctx.keys(map, allowed, &context)?;
    let note = match map.get("note") {
        None | Some(Value::Null) => None,
        Some(v) => Some(ctx.string(v, "note")?.to_owned()),
    };
    let body = map.get(verb).unwrap_or(&Value::Null);
    let verb = match verb {
        "reconcile" => {
            match body {
                Value::Null => {}
                v => ctx.keys(ctx.object(v, "reconcile")?, &[], "reconcile")?,
            }
            let expect = match map.get("expect") {
                None | Some(Value::Null) => Expect::default(),
                Some(v) => parse_expect(&ctx, v)?,
            };
            Verb::Reconcile(Box::new(expect))
        }
        "advance" => Verb::Advance(ctx.duration(body, "advance")?),
        "patch" => {
            let targets = ctx.object(body, "patch")?;
            if targets.is_empty() {
                return Err(ctx.invalid("patch", "names no object to patch"));
            }
            let mut patches = Vec::new();
            for (key, patch) in targets {
                let kind = Kind::from_key(key).ok_or_else(|| ScenarioError::UnknownKey {
                    step: Some(number),
                    key: key.clone(),
                    context: "patch".into(),
                })?;
                let path = format!("patch.{key}");
                match kind {
                    Kind::Routes => drop(ctx.array(patch, &path)?),
                    _ => drop(ctx.object(patch, &path)?),
                }
                patches.push((kind, patch.clone()));
            }
            Verb::Patch(patches)
        }
        "delete" => {
            let name = ctx.string(body, "delete")?;
            match Kind::from_key(name) {
                Some(Kind::Template) | None => {
                    return Err(ctx.invalid(
                        "delete",
                        format!(
                            "cannot delete {name:?} (expected deployment, configuration, \
                             gatewayClass, gateway or routes)"
                        ),
                    ));
                }
                Some(kind) => Verb::Delete(kind),
            }
        }
        "failWrites" => {
            let spec = ctx.object(body, "failWrites")?;
            ctx.keys(spec, &["count", "error"], "failWrites")?;
            let count = ctx.integer(
                ctx.required(spec, "count", "failWrites")?,
                "failWrites.count",
            )?;
            let count = u32::try_from(count)
                .ok()
                .filter(|c| *c >= 1)
                .ok_or_else(|| {
                    ctx.invalid(
                        "failWrites.count",
                        format!("must be between 1 and {} (found {count})", u32::MAX),
                    )
                })?;
            let outcome = match spec.get("error") {
                None | Some(Value::Null) => {
                    return Err(ScenarioError::MissingKey {
                        step: Some(number),
                        key: "error".into(),
                        context: "failWrites".into(),
                    });
                }
                Some(v) => parse_error(&ctx, v)?,
            };
            Verb::FailWrites { count, outcome }
        }
        _ => {
            let word = ctx.string(body, "rollout")?;
            Verb::Rollout(Rollout::from_key(word).ok_or_else(|| {
                ctx.invalid(
                    "rollout",
                    format!("unknown rollout {word:?} (expected complete, progressing or stalled)"),
                )
            })?)
        }
    };
    Ok(Step { verb, note })
}

fn parse_error(ctx: &Ctx, value: &Value) -> Result<WriteOutcome, ScenarioError> {
    api_error_from_value(value).map_err(|e| match e.key {
        Some(key) => ctx.invalid(&format!("failWrites.error.{key}"), e.why),
        None => ctx.invalid("failWrites.error", e.why),
    })
}

/// Why a JSON value is not an API error ([`api_error_from_value`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{why}", key.as_deref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct OutcomeError {
    /// The key at fault, when one is.
    pub key: Option<String>,
    /// What is wrong.
    pub why: String,
}

/// The keys of a Kubernetes `Status` object besides `code`, `reason` and `message`.
const STATUS_KEYS: [&str; 5] = ["kind", "apiVersion", "metadata", "status", "details"];

/// A failed write as JSON, the one reading the scenario files' `failWrites.error` and the
/// command line's `--outcome` share (SPEC §2): `{code, reason, message}`, each optional
/// (no `code`: a transport error), or a whole Kubernetes `Status` object. Refused: unknown
/// keys, a `code` outside 400–599, a `Status` whose `status` is `Success`, and values of
/// the wrong type.
///
/// ```
/// use gateway_reconcile::sim::scenario::api_error_from_value;
/// use serde_json::json;
/// let e = api_error_from_value(&json!({"code": 200})).unwrap_err();
/// assert_eq!(e.to_string(), "code: must be an HTTP error code, 400 to 599 (found 200)");
/// ```
pub fn api_error_from_value(value: &Value) -> Result<WriteOutcome, OutcomeError> {
    let fail = |key: Option<&str>, why: String| OutcomeError {
        key: key.map(str::to_owned),
        why,
    };
    let map = value.as_object().ok_or_else(|| {
        fail(
            None,
            format!(
                "must be an object {{code, reason, message}} (found {})",
                type_name(value)
            ),
        )
    })?;
    if let Some(key) = map.keys().find(|k| {
        !["code", "reason", "message"].contains(&k.as_str()) && !STATUS_KEYS.contains(&k.as_str())
    }) {
        return Err(fail(
            None,
            format!("unknown key {key:?} (expected code, reason, message, or a Kubernetes Status)"),
        ));
    }
    match map.get("status") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "Failure" => {}
        Some(Value::String(s)) if s == "Success" => {
            return Err(fail(
                Some("status"),
                "a Status of Success is not a failed write (give \"Applied\")".into(),
            ));
        }
        Some(other) => {
            return Err(fail(
                Some("status"),
                format!("must be \"Failure\" (found {})", compact(other)),
            ));
        }
    }
    let code = match map.get("code") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (400..=599).contains(c))
                .ok_or_else(|| {
                    fail(
                        Some("code"),
                        format!(
                            "must be an HTTP error code, 400 to 599 (found {})",
                            compact(v)
                        ),
                    )
                })?,
        ),
    };
    let text = |key: &str| -> Result<String, OutcomeError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(fail(
                Some(key),
                format!("must be a string (found {})", type_name(v)),
            )),
        }
    };
    Ok(WriteOutcome::from_parts(
        code,
        &text("reason")?,
        &text("message")?,
    ))
}

/// Why a time is refused by [`parse_time`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// Not of the form `2026-01-01T00:00:00Z` (fraction and offset optional forms allowed).
    #[error("not an RFC 3339 time {0:?} (expected e.g. 2026-01-01T00:00:00Z)")]
    Syntax(String),
    /// A valid RFC 3339 time the crate's clock cannot hold.
    #[error("{0:?} is out of the supported range ({min} to {max})", min = Timestamp::MIN, max = Timestamp::MAX)]
    OutOfRange(String),
}

/// A strict RFC 3339 time: `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or
/// `±HH:MM`. Refused: a missing seconds field, a signed or six-digit year, a bracketed zone
/// annotation, a lowercase `t`/`z` or a space for `T`. A valid time the clock cannot hold
/// is [`TimeError::OutOfRange`].
///
/// ```
/// use gateway_reconcile::sim::scenario::parse_time;
/// assert!(parse_time("2026-01-01T00:00:00.5+02:00").is_ok());
/// assert!(parse_time("2026-01-01T00:00Z").is_err());
/// assert!(parse_time("2026-01-01T00:00:00Z[UTC]").is_err());
/// ```
pub fn parse_time(text: &str) -> Result<Timestamp, TimeError> {
    let syntax = || TimeError::Syntax(text.chars().take(64).collect());
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let shape = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !shape {
        return Err(syntax());
    }
    let mut i = 19;
    if at(i, b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(syntax());
        }
    }
    let zone = b.get(i..).unwrap_or_default();
    let zone_ok = zone == b"Z"
        || (zone.len() == 6
            && matches!(zone.first(), Some(b'+' | b'-'))
            && zone
                .get(1..3)
                .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && zone.get(3) == Some(&b':')
            && zone
                .get(4..6)
                .is_some_and(|d| d.iter().all(u8::is_ascii_digit)));
    if !zone_ok {
        return Err(syntax());
    }
    match text.parse::<Timestamp>() {
        Ok(t) => Ok(t),
        // The shape is right: if the date and time of day are valid, only the range is not.
        Err(_) => match text.get(..19).map(str::parse::<jiff::civil::DateTime>) {
            Some(Ok(_)) => Err(TimeError::OutOfRange(text.to_owned())),
            _ => Err(syntax()),
        },
    }
}

fn parse_expect(ctx: &Ctx, value: &Value) -> Result<Expect, ScenarioError> {
    let map = ctx.object(value, "expect")?;
    ctx.keys(
        map,
        &[
            "action",
            "statusWritten",
            "conditions",
            "addresses",
            "deployment",
            "drift",
            "requeue",
        ],
        "expect",
    )?;
    let mut expect = Expect::default();
    if let Some(v) = map.get("action") {
        let name = ctx.string(v, "expect.action")?;
        expect.action = Some(WriteKind::from_name(name).ok_or_else(|| {
            ctx.invalid(
                "expect.action",
                format!("unknown action {name:?} (expected Create, Update or None)"),
            )
        })?);
    }
    if let Some(v) = map.get("statusWritten") {
        expect.status_written = Some(ctx.boolean(v, "expect.statusWritten")?);
    }
    if let Some(v) = map.get("conditions") {
        for (type_, c) in ctx.object(v, "expect.conditions")? {
            let key = format!("expect.conditions.{type_}");
            let c = match c {
                Value::Null => None,
                c => Some(parse_condition(ctx, c, &key)?),
            };
            expect.conditions.push((type_.clone(), c));
        }
    }
    if let Some(v) = map.get("addresses") {
        let list = ctx.array(v, "expect.addresses")?;
        expect.addresses = Some(
            list.iter()
                .enumerate()
                .map(|(i, a)| Ok(ctx.string(a, &format!("expect.addresses[{i}]"))?.to_owned()))
                .collect::<Result<_, ScenarioError>>()?,
        );
    }
    if let Some(v) = map.get("deployment") {
        expect.deployment = Some(match v {
            Value::Null => None,
            v => Some(Value::Object(ctx.object(v, "expect.deployment")?.clone())),
        });
    }
    if let Some(v) = map.get("drift") {
        let list = ctx.array(v, "expect.drift")?;
        expect.drift = Some(
            list.iter()
                .enumerate()
                .map(|(i, a)| Ok(ctx.string(a, &format!("expect.drift[{i}]"))?.to_owned()))
                .collect::<Result<_, ScenarioError>>()?,
        );
    }
    if let Some(v) = map.get("requeue") {
        let word = ctx.string(v, "expect.requeue")?;
        expect.requeue = Some(match word {
            "none" => Requeue::AwaitChange,
            "immediately" => Requeue::Immediately,
            _ => Requeue::After(parse_duration(word).map_err(|e| {
                ctx.invalid(
                    "expect.requeue",
                    format!("expected none, immediately or a duration: {e}"),
                )
            })?),
        });
    }
    Ok(expect)
}

fn parse_condition(ctx: &Ctx, value: &Value, key: &str) -> Result<ConditionExpect, ScenarioError> {
    let map = ctx.object(value, key)?;
    ctx.keys(
        map,
        &[
            "status",
            "reason",
            "message",
            "messageContains",
            "observedGeneration",
            "lastTransitionTime",
        ],
        key,
    )?;
    let text = |field: &str| -> Result<Option<String>, ScenarioError> {
        map.get(field)
            .map(|v| Ok(ctx.string(v, &format!("{key}.{field}"))?.to_owned()))
            .transpose()
    };
    let mut c = ConditionExpect {
        status: text("status")?,
        reason: text("reason")?,
        message: text("message")?,
        ..ConditionExpect::default()
    };
    if let Some(v) = map.get("messageContains") {
        let path = format!("{key}.messageContains");
        for (i, item) in ctx.array(v, &path)?.iter().enumerate() {
            c.message_contains
                .push(ctx.string(item, &format!("{path}[{i}]"))?.to_owned());
        }
    }
    if let Some(v) = map.get("observedGeneration") {
        c.observed_generation = Some(ctx.integer(v, &format!("{key}.observedGeneration"))?);
    }
    if let Some(v) = map.get("lastTransitionTime") {
        c.last_transition_time = Some(ctx.time(v, &format!("{key}.lastTransitionTime"))?);
    }
    Ok(c)
}

// ---------------------------------------------------------------------------------------
// Checking

fn check_record(
    step: usize,
    expect: &Expect,
    record: &StepRecord,
    cluster: &Cluster,
    failures: &mut Vec<Failure>,
) {
    let mut fail = |what: String, expected: String, actual: String| {
        failures.push(Failure {
            step,
            what,
            expected,
            actual,
        });
    };
    if let Some(problem) = &record.status_patch_problem {
        fail(
            "status patch".into(),
            "status_patch() to give the settlement's status".into(),
            problem.clone(),
        );
    }
    if let Some(action) = expect.action
        && action != record.action
    {
        fail("action".into(), action.to_string(), describe_action(record));
    }
    if let Some(written) = expect.status_written
        && written != record.status_written
    {
        fail(
            "statusWritten".into(),
            written.to_string(),
            record.status_written.to_string(),
        );
    }
    for (type_, want) in &expect.conditions {
        let found = record.conditions.iter().find(|c| &c.type_ == type_);
        let what = |field: &str| format!("conditions.{type_}{field}");
        match (want, found) {
            (None, None) => {}
            (None, Some(c)) => fail(what(""), "absent".into(), describe_condition(c)),
            (Some(_), None) => fail(what(""), "present".into(), "absent".into()),
            (Some(want), Some(c)) => {
                let mut field = |name: &str, want: &Option<String>, got: &str| {
                    if let Some(w) = want
                        && w != got
                    {
                        fail(
                            what(&format!(".{name}")),
                            format!("{w:?}"),
                            format!("{got:?}"),
                        );
                    }
                };
                field("status", &want.status, &c.status);
                field("reason", &want.reason, &c.reason);
                field("message", &want.message, &c.message);
                for part in &want.message_contains {
                    if !c.message.contains(part.as_str()) {
                        fail(
                            what(".message"),
                            format!("to contain {part:?}"),
                            format!("{:?}", c.message),
                        );
                    }
                }
                if let Some(g) = want.observed_generation
                    && Some(g) != c.observed_generation
                {
                    fail(
                        what(".observedGeneration"),
                        g.to_string(),
                        c.observed_generation
                            .map_or_else(|| "none".into(), |g| g.to_string()),
                    );
                }
                if let Some(t) = want.last_transition_time {
                    let got: Option<Timestamp> = c.last_transition_time.parse().ok();
                    if got != Some(t) {
                        fail(
                            what(".lastTransitionTime"),
                            cluster::format_time(t),
                            format!("{:?}", c.last_transition_time),
                        );
                    }
                }
            }
        }
    }
    if let Some(want) = &expect.addresses
        && want != &record.addresses
    {
        fail(
            "addresses".into(),
            format!("{want:?}"),
            format!("{:?}", record.addresses),
        );
    }
    match (&expect.deployment, cluster.deployment()) {
        (None, _) | (Some(None), None) => {}
        (Some(None), Some(d)) => fail(
            "deployment".into(),
            "no Deployment".into(),
            format!(
                "Deployment {:?}",
                d.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
        ),
        (Some(Some(_)), None) => fail("deployment".into(), "a Deployment".into(), "none".into()),
        (Some(Some(want)), Some(got)) => {
            let mut diffs = Vec::new();
            subset(want, got, "deployment", &mut diffs);
            for (path, expected, actual) in diffs {
                fail(path, expected, actual);
            }
        }
    }
    if let Some(want) = &expect.drift {
        for path in want.iter().filter(|p| !record.drift.contains(p)) {
            fail(
                "drift".into(),
                format!("to contain {path:?}"),
                format!("{:?}", record.drift),
            );
        }
    }
    if let Some(want) = expect.requeue
        && want != record.requeue
    {
        fail(
            "requeue".into(),
            describe_requeue(want),
            describe_requeue(record.requeue),
        );
    }
}

/// Appends every place where `actual` does not contain `expected`: objects are subsets
/// (`null` = key absent), lists have the same length and match element by element.
fn subset(expected: &Value, actual: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, w) in want {
                let sub = format!("{path}{}", key_segment(key));
                match (w, got.get(key)) {
                    (Value::Null, None | Some(Value::Null)) => {}
                    (Value::Null, Some(g)) => out.push((sub, "absent".into(), compact(g))),
                    (w, None) => out.push((sub, compact(w), "absent".into())),
                    (w, Some(g)) => subset(w, g, &sub, out),
                }
            }
        }
        (Value::Array(want), Value::Array(got)) if want.len() != got.len() => out.push((
            path.to_owned(),
            format!("{} items: {}", want.len(), compact(expected)),
            format!("{} items: {}", got.len(), compact(actual)),
        )),
        (Value::Array(want), Value::Array(got)) => {
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                subset(w, g, &format!("{path}[{i}]"), out);
            }
        }
        (w, g) if w == g => {}
        (w, g) => out.push((path.to_owned(), compact(w), compact(g))),
    }
}

fn key_segment(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

fn compact(v: &Value) -> String {
    const MAX: usize = 400;
    let text = v.to_string();
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

// ---------------------------------------------------------------------------------------
// Printing

/// `none`, `immediately` or `after 90s`.
pub fn describe_requeue(requeue: Requeue) -> String {
    match requeue {
        Requeue::AwaitChange => "none".into(),
        Requeue::Immediately => "immediately".into(),
        Requeue::After(d) => format!("after {}", format_duration(d)),
    }
}

/// `Applied`, `503 ServiceUnavailable: etcdserver: request timed out`, or
/// `transport error: MSG`.
pub fn describe_outcome(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Applied => "Applied".into(),
        WriteOutcome::Api(e) => format!("{} {}: {}", e.code, e.reason, e.message),
        WriteOutcome::Transport { message } => format!("transport error: {message}"),
    }
}

fn describe_action(record: &StepRecord) -> String {
    if record.drift.is_empty() {
        record.action.to_string()
    } else {
        format!("{} (drift: {})", record.action, record.drift.join(", "))
    }
}

fn describe_condition(c: &crate::wire::Condition) -> String {
    format!("{}/{}: {:?}", c.status, c.reason, c.message)
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = cluster::format_time(self.time);
        let head = format!("step {:>2}  {time}", self.step);
        match &self.event {
            Event::Reconciled(r) => {
                writeln!(f, "{head}  reconcile")?;
                if let Some(note) = &self.note {
                    writeln!(f, "    note: {note}")?;
                }
                writeln!(f, "    action: {}", describe_action(r))?;
                match &r.outcome {
                    Some(o) => writeln!(f, "    write: {}", describe_outcome(o))?,
                    None => writeln!(f, "    write: none")?,
                }
                writeln!(
                    f,
                    "    status: {}",
                    if r.status_written {
                        "written"
                    } else {
                        "not written"
                    }
                )?;
                for c in &r.conditions {
                    let generation = c
                        .observed_generation
                        .map(|g| format!(" (generation {g}, since {})", c.last_transition_time))
                        .unwrap_or_default();
                    writeln!(
                        f,
                        "      {} = {}/{}{generation}: {}",
                        c.type_, c.status, c.reason, c.message
                    )?;
                }
                for e in &r.events {
                    writeln!(f, "    event: {:?} {}: {}", e.type_, e.reason, e.message)?;
                }
                if r.addresses.is_empty() {
                    writeln!(f, "    addresses: none")?;
                } else {
                    writeln!(f, "    addresses: {}", r.addresses.join(", "))?;
                }
                write!(f, "    requeue: {}", describe_requeue(r.requeue))
            }
            other => {
                let what = match other {
                    Event::Advanced(d) => format!("advance {}", format_duration(*d)),
                    Event::Patched(kinds) => {
                        let names: Vec<&str> = kinds.iter().map(|k| k.key()).collect();
                        format!("patch {}", names.join(", "))
                    }
                    Event::Deleted(k) => format!("delete {k}"),
                    Event::WritesFailing { count, outcome } => match outcome {
                        WriteOutcome::Applied => format!("failWrites {count}: cleared"),
                        o => format!(
                            "failWrites: the next {count} Deployment writes fail with {}",
                            describe_outcome(o)
                        ),
                    },
                    Event::RolledOut(r) => format!("rollout {}", r.key()),
                    Event::Error(e) => format!("error: {e}"),
                    Event::Reconciled(_) => String::new(),
                };
                write!(f, "{head}  {what}")?;
                if let Some(note) = &self.note {
                    write!(f, "\n    note: {note}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if !self.description.is_empty() {
            let _ = writeln!(out, "{}\n", self.description);
        }
        for entry in &self.timeline {
            let _ = writeln!(out, "{entry}");
        }
        let _ = writeln!(
            out,
            "\n{} Deployment writes, {} status writes",
            self.deployment_writes, self.status_writes
        );
        if self.failures.is_empty() {
            let _ = write!(out, "every expectation held");
        } else {
            let _ = writeln!(out, "{} failed expectations:", self.failures.len());
            for failure in &self.failures {
                let _ = writeln!(out, "  {failure}");
            }
        }
        f.write_str(out.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Condition;
    use serde_json::json;

    fn with_steps(steps: Value) -> Value {
        json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "steps": steps})
    }

    fn error(doc: Value) -> String {
        Scenario::from_value(&doc).unwrap_err().to_string()
    }

    fn step_error(step: Value) -> String {
        error(with_steps(
            json!([{"advance": "1s"}, {"advance": "1s"}, step]),
        ))
    }

    #[test]
    fn errors_name_the_step_and_the_key() {
        assert_eq!(
            step_error(json!({"reconcile": {}, "expct": {}})),
            r#"step 3: unknown key "expct" in reconcile step"#
        );
        assert_eq!(
            step_error(json!({"reconcil": {}})),
            "step 3: unknown step \"reconcil\" (expected one of reconcile, advance, patch, \
             delete, failWrites, rollout)"
        );
        assert_eq!(
            step_error(json!({"advance": "1s", "expect": {}})),
            r#"step 3: unknown key "expect" in advance step"#
        );
        assert_eq!(
            step_error(json!({"advance": 90})),
            r#"step 3: "advance" must be a string (found a number)"#
        );
        assert!(
            step_error(json!({"advance": "soon"}))
                .starts_with(r#"step 3: "advance": invalid duration "soon""#)
        );
        assert_eq!(
            step_error(
                json!({"reconcile": {}, "expect": {"conditions": {"Programmed": {"satus": "True"}}}})
            ),
            r#"step 3: unknown key "satus" in expect.conditions.Programmed"#
        );
        assert_eq!(
            step_error(json!({"reconcile": {}, "expect": {"statusWritten": "yes"}})),
            r#"step 3: "expect.statusWritten" must be a boolean (found a string)"#
        );
        assert_eq!(
            step_error(
                json!({"reconcile": {}, "expect": {"conditions": {"Accepted": {"messageContains": [1]}}}})
            ),
            r#"step 3: "expect.conditions.Accepted.messageContains[0]" must be a string (found a number)"#
        );
        assert!(
            step_error(json!({"reconcile": {}, "expect": {"requeue": "later"}})).starts_with(
                r#"step 3: "expect.requeue": expected none, immediately or a duration"#
            )
        );
        assert_eq!(
            step_error(json!({"reconcile": {}, "expect": {"action": "Delete"}})),
            r#"step 3: "expect.action": unknown action "Delete" (expected Create, Update or None)"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 2}})),
            r#"step 3: missing key "error" in failWrites"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": -1, "error": {}}})),
            r#"step 3: "failWrites.count": must be between 1 and 4294967295 (found -1)"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 0, "error": {}}})),
            r#"step 3: "failWrites.count": must be between 1 and 4294967295 (found 0)"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 1, "error": {"code": 600}}})),
            r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 600)"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 1, "error": {"code": 399}}})),
            r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 399)"#
        );
        assert_eq!(
            step_error(
                json!({"failWrites": {"count": 1, "error": {"code": 500, "status": "Success"}}})
            ),
            r#"step 3: "failWrites.error.status": a Status of Success is not a failed write (give "Applied")"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 1, "error": {"code": 99}}})),
            r#"step 3: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 99)"#
        );
        assert_eq!(
            step_error(json!({"failWrites": {"count": 1, "error": {"cod": 500}}})),
            r#"step 3: "failWrites.error": unknown key "cod" (expected code, reason, message, or a Kubernetes Status)"#
        );
        assert_eq!(
            step_error(json!({"patch": {"gateways": {}}})),
            r#"step 3: unknown key "gateways" in patch"#
        );
        assert_eq!(
            step_error(json!({"patch": {"routes": {}}})),
            r#"step 3: "patch.routes" must be a list (found an object)"#
        );
        assert!(
            step_error(json!({"delete": "template"}))
                .starts_with(r#"step 3: "delete": cannot delete "template""#)
        );
        assert!(
            step_error(json!({"rollout": "done"}))
                .starts_with(r#"step 3: "rollout": unknown rollout "done""#)
        );
        assert!(step_error(json!({"note": "x"})).starts_with("step 3: no step verb"));
        assert_eq!(
            step_error(json!({"advance": "1s", "rollout": "complete"})),
            r#"step 3: more than one step verb: "advance" and "rollout""#
        );
        assert_eq!(
            step_error(json!("advance")),
            r#"step 3: "step" must be an object (found a string)"#
        );
    }

    #[test]
    fn top_level_errors() {
        assert_eq!(
            error(
                json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "steps": [], "stepz": []})
            ),
            r#"unknown key "stepz" in the scenario"#
        );
        assert_eq!(
            error(json!({"steps": []})),
            r#"missing key "objects" in the scenario"#
        );
        assert_eq!(
            error(json!({"objects": {}, "steps": []})),
            r#"missing key "gateway" in objects"#
        );
        assert_eq!(
            error(
                json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "deploy": {}}, "steps": []})
            ),
            r#"unknown key "deploy" in objects"#
        );
        assert!(
            error(json!({"objects": {"gateway": {"metadata": {"name": 1}}}, "steps": []}))
                == r#""objects.gateway.metadata.name": expected a string, found 1"#
        );
        assert!(
            error(
                json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "settings": {"degradedAftr": "1m"}, "steps": []})
            )
            .contains("degradedAftr")
        );
        assert!(
            error(
                json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "now": "yesterday", "steps": []})
            ) == r#""now": not an RFC 3339 time "yesterday" (expected e.g. 2026-01-01T00:00:00Z)"#
        );
        assert_eq!(
            error(
                json!({"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}})
            ),
            r#"missing key "steps" in the scenario"#
        );
        let e = Scenario::from_json("{\n  \"steps\": [,]\n}").unwrap_err();
        assert!(matches!(e, ScenarioError::Json { line: 2, .. }), "{e}");
    }

    #[test]
    fn every_key_parses() {
        let doc = json!({
            "description": "d",
            "settings": {"degradedAfter": "2m"},
            "now": "2026-02-01T10:00:00Z",
            "objects": {
                "gatewayClass": null, "gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}},
                "configuration": {"metadata": {"name": "c"}}, "deployment": null,
                "template": {"spec": {}}, "routes": [{"spec": {"destinationCIDRs": ["1.2.3.4/32"]}}]
            },
            "steps": [
                {"reconcile": {}, "note": "first", "expect": {
                    "action": "Update", "statusWritten": true,
                    "conditions": {"Degraded": null, "Accepted": {
                        "status": "True", "reason": "Accepted", "message": "m",
                        "messageContains": ["a", "b"], "observedGeneration": 3,
                        "lastTransitionTime": "2026-02-01T10:00:00Z"}},
                    "addresses": ["1.2.3.4"], "deployment": {"spec": {"replicas": 2}},
                    "requeue": "90s"}},
                {"reconcile": {}, "expect": {"deployment": null, "requeue": "immediately"}},
                {"reconcile": {}, "expect": {"requeue": "none"}},
                {"advance": "1h30m"},
                {"patch": {"configuration": {"spec": {}}, "routes": []}},
                {"delete": "deployment"},
                {"failWrites": {"count": 3, "error": {"code": 503, "reason": "ServiceUnavailable", "message": "m"}}},
                {"failWrites": {"count": 1, "error": {"message": "connection refused"}}},
                {"rollout": "stalled"}
            ]
        });
        let s = Scenario::from_value(&doc).unwrap();
        assert_eq!(s.description, "d");
        assert_eq!(s.settings.degraded_after, Duration::from_secs(120));
        assert_eq!(s.now, "2026-02-01T10:00:00Z".parse::<Timestamp>().unwrap());
        assert_eq!(s.objects.gateway_class, None);
        assert!(s.objects.configuration.is_some());
        assert_eq!(s.objects.routes.len(), 1);
        assert_eq!(s.steps.len(), 9);
        assert_eq!(s.steps[0].note.as_deref(), Some("first"));
        let Verb::Reconcile(e) = &s.steps[0].verb else {
            panic!("{:?}", s.steps[0])
        };
        assert_eq!(e.action, Some(WriteKind::Update));
        assert_eq!(e.status_written, Some(true));
        assert_eq!(e.conditions.len(), 2);
        let accepted = e.conditions.iter().find(|(t, _)| t == "Accepted").unwrap();
        let c = accepted.1.as_ref().unwrap();
        assert_eq!(c.message_contains, vec!["a", "b"]);
        assert_eq!(c.observed_generation, Some(3));
        assert!(c.last_transition_time.is_some());
        assert!(
            e.conditions
                .iter()
                .any(|(t, c)| t == "Degraded" && c.is_none())
        );
        assert_eq!(e.addresses, Some(vec!["1.2.3.4".to_owned()]));
        assert_eq!(e.deployment, Some(Some(json!({"spec": {"replicas": 2}}))));
        assert_eq!(e.requeue, Some(Requeue::After(Duration::from_secs(90))));
        let Verb::Reconcile(e) = &s.steps[1].verb else {
            panic!()
        };
        assert_eq!(e.deployment, Some(None));
        assert_eq!(e.requeue, Some(Requeue::Immediately));
        assert_eq!(s.steps[3].verb, Verb::Advance(Duration::from_secs(5400)));
        let Verb::Patch(p) = &s.steps[4].verb else {
            panic!()
        };
        let kinds: Vec<Kind> = p.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![Kind::Configuration, Kind::Routes]);
        assert_eq!(s.steps[5].verb, Verb::Delete(Kind::Deployment));
        let Verb::FailWrites { count, outcome } = &s.steps[6].verb else {
            panic!()
        };
        assert_eq!(*count, 3);
        assert_eq!(outcome.class(), Some(crate::FailureClass::Transient));
        assert_eq!(outcome.message(), "m");
        let Verb::FailWrites { outcome, .. } = &s.steps[7].verb else {
            panic!()
        };
        assert!(matches!(outcome, WriteOutcome::Transport { .. }));
        assert_eq!(s.steps[8].verb, Verb::Rollout(Rollout::Stalled));
    }

    #[test]
    fn the_demo_parses() {
        let demo = Scenario::from_json(DEMO).unwrap();
        assert!(demo.description.contains("stale-Programmed"));
        assert!(demo.steps.len() > 10);
    }

    fn diffs(want: Value, got: Value) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        subset(&want, &got, "deployment", &mut out);
        out
    }

    #[test]
    fn subset_rules() {
        let got = json!({"metadata": {"name": "d", "annotations": {"a/b": "1"}},
                         "spec": {"replicas": 2, "list": [{"name": "x", "v": 1}, {"name": "y"}]}});
        assert!(diffs(json!({}), got.clone()).is_empty());
        assert!(diffs(json!({"spec": {"list": [{"name": "x"}, {}]}}), got.clone()).is_empty());
        assert!(diffs(json!({"metadata": {"labels": null}}), got.clone()).is_empty());
        let d = diffs(
            json!({"metadata": {"annotations": {"a/b": "2"}}}),
            got.clone(),
        );
        assert_eq!(
            d,
            vec![(
                r#"deployment.metadata.annotations["a/b"]"#.to_owned(),
                r#""2""#.to_owned(),
                r#""1""#.to_owned()
            )]
        );
        let d = diffs(json!({"spec": {"list": [{"name": "x"}]}}), got.clone());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0, "deployment.spec.list");
        assert!(d[0].1.starts_with("1 items"), "{d:?}");
        let d = diffs(
            json!({"spec": {"list": [{"name": "x"}, {"name": "z"}]}}),
            got.clone(),
        );
        assert_eq!(d[0].0, "deployment.spec.list[1].name");
        let d = diffs(
            json!({"spec": {"paused": true}, "metadata": {"name": null}}),
            got,
        );
        assert_eq!(
            d[0],
            (
                "deployment.metadata.name".into(),
                "absent".into(),
                r#""d""#.into()
            )
        );
        assert_eq!(
            d[1],
            (
                "deployment.spec.paused".into(),
                "true".into(),
                "absent".into()
            )
        );
    }

    fn record() -> StepRecord {
        StepRecord {
            time: "2026-01-01T00:00:00Z".parse().unwrap(),
            action: WriteKind::Update,
            drift: vec!["spec.replicas".into()],
            outcome: Some(WriteOutcome::from_parts(
                Some(503),
                "ServiceUnavailable",
                "etcd",
            )),
            status_written: true,
            conditions: vec![Condition {
                type_: "Programmed".into(),
                status: "True".into(),
                observed_generation: Some(1),
                last_transition_time: "2026-01-01T00:00:00Z".into(),
                reason: "Programmed".into(),
                message: "LB Deployment reconciled with GatewayConfiguration generation 7".into(),
            }],
            addresses: vec!["20.0.0.1".into()],
            requeue: Requeue::After(Duration::from_secs(1)),
            events: vec![crate::events::Event {
                type_: crate::events::EventType::Warning,
                reason: "ApplyFailed".into(),
                message: "update failed".into(),
            }],
            status_patch_problem: None,
        }
    }

    fn test_cluster() -> Cluster {
        let objects = Objects {
            gateway: json!({"metadata": {"name": "gw"}}),
            deployment: Some(json!({"metadata": {"name": "sllbr-gw"}, "spec": {"replicas": 2}})),
            template: Some(json!({})),
            ..Objects::default()
        };
        Cluster::new(
            Settings::default(),
            "2026-01-01T00:00:00Z".parse().unwrap(),
            objects,
        )
        .unwrap()
    }

    fn failures(expect: Value) -> Vec<Failure> {
        let doc = with_steps(json!([{"reconcile": {}, "expect": expect}]));
        let s = Scenario::from_value(&doc).unwrap();
        let Verb::Reconcile(e) = &s.steps[0].verb else {
            panic!()
        };
        let mut out = Vec::new();
        check_record(1, e, &record(), &test_cluster(), &mut out);
        out
    }

    #[test]
    fn matching_expectations_pass() {
        let ok = failures(json!({
            "action": "Update", "statusWritten": true, "addresses": ["20.0.0.1"],
            "requeue": "1s", "deployment": {"spec": {"replicas": 2}},
            "conditions": {"Degraded": null, "Programmed": {
                "status": "True", "reason": "Programmed",
                "message": "LB Deployment reconciled with GatewayConfiguration generation 7",
                "messageContains": ["generation 7"], "observedGeneration": 1,
                "lastTransitionTime": "2026-01-01T00:00:00.000Z"}}
        }));
        assert!(ok.is_empty(), "{ok:?}");
    }

    #[test]
    fn drift_expectations_name_each_missing_path() {
        assert!(failures(json!({"drift": ["spec.replicas"]})).is_empty());
        let f = failures(json!({"drift": ["spec.replicas", "spec.template.spec.nodeSelector"]}));
        assert_eq!(
            f,
            vec![Failure {
                step: 1,
                what: "drift".into(),
                expected: r#"to contain "spec.template.spec.nodeSelector""#.into(),
                actual: r#"["spec.replicas"]"#.into(),
            }]
        );
    }

    #[test]
    fn each_mismatch_is_one_failure_with_expected_and_actual() {
        let f = failures(json!({
            "action": "None", "statusWritten": false, "addresses": [],
            "requeue": "none", "deployment": {"spec": {"replicas": 3}},
            "conditions": {"Programmed": {"status": "False", "messageContains": ["generation 8"],
                                          "observedGeneration": 2,
                                          "lastTransitionTime": "2026-01-01T00:00:01Z"},
                           "Accepted": {}}
        }));
        let whats: Vec<&str> = f.iter().map(|f| f.what.as_str()).collect();
        assert_eq!(
            whats,
            vec![
                "action",
                "statusWritten",
                "conditions.Accepted",
                "conditions.Programmed.status",
                "conditions.Programmed.message",
                "conditions.Programmed.observedGeneration",
                "conditions.Programmed.lastTransitionTime",
                "addresses",
                "deployment.spec.replicas",
                "requeue",
            ]
        );
        assert_eq!(f[0].expected, "None");
        assert_eq!(f[0].actual, "Update (drift: spec.replicas)");
        assert_eq!(f[9].expected, "none");
        assert_eq!(f[9].actual, "after 1s");
        assert_eq!(
            f[3].to_string(),
            r#"step 1: conditions.Programmed.status: expected "False", found "True""#
        );
        let f = failures(json!({"deployment": null, "conditions": {"Programmed": null}}));
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].what, "conditions.Programmed");
        assert_eq!(f[0].expected, "absent");
        assert_eq!(f[1].actual, r#"Deployment "sllbr-gw""#);
    }

    #[test]
    fn timeline_text_shows_action_write_status_conditions_and_requeue() {
        let entry = Entry {
            step: 7,
            time: "2026-01-01T00:01:00Z".parse().unwrap(),
            note: Some("why".into()),
            event: Event::Reconciled(Box::new(record())),
        };
        let text = entry.to_string();
        for line in [
            "step  7  2026-01-01T00:01:00Z  reconcile",
            "note: why",
            "action: Update (drift: spec.replicas)",
            "write: 503 ServiceUnavailable: etcd",
            "status: written",
            "Programmed = True/Programmed (generation 1, since 2026-01-01T00:00:00Z): LB Deployment",
            "addresses: 20.0.0.1",
            "event: Warning ApplyFailed: update failed",
            "requeue: after 1s",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        let report = Report {
            description: "demo".into(),
            timeline: vec![entry],
            failures: vec![Failure {
                step: 7,
                what: "action".into(),
                expected: "None".into(),
                actual: "Update".into(),
            }],
            deployment_writes: 1,
            status_writes: 1,
        };
        assert!(!report.passed());
        let text = report.to_string();
        assert!(text.starts_with("demo\n"), "{text}");
        assert!(
            text.contains("1 Deployment writes, 1 status writes"),
            "{text}"
        );
        assert!(
            text.ends_with("step 7: action: expected None, found Update"),
            "{text}"
        );
    }

    #[test]
    fn steps_that_cannot_run_are_failures_and_the_run_goes_on() {
        let doc = json!({
            "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "template": {}},
            "steps": [{"rollout": "complete"}, {"delete": "configuration"}, {"advance": "1m"}]
        });
        let report = Scenario::from_value(&doc).unwrap().run();
        assert_eq!(report.failures.len(), 2);
        assert_eq!(report.failures[0].step, 1);
        assert_eq!(report.failures[0].what, "rollout");
        assert_eq!(
            report.failures[0].actual,
            "cannot roll out: there is no deployment"
        );
        assert_eq!(report.failures[1].step, 2);
        assert_eq!(report.timeline.len(), 3);
        assert_eq!(
            report.timeline[2].time,
            "2026-01-01T00:01:00Z".parse::<Timestamp>().unwrap()
        );
    }
}
