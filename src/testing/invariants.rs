//! The truthfulness properties of the crate's own model test, as checks an embedder calls on
//! a run of its own [`ControllerLoop`]: [`Invariants::check`] after every reconcile, and
//! [`converge`](super::schedule::converge) at the end of a schedule.

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use serde_json::Value;

use crate::conditions::{self, ACCEPTED, CONFIGURATION_APPLIED_NAME, DEGRADED_NAME, PROGRAMMED};
use crate::outcome::{FailureClass, WriteOutcome};
use crate::reconcile::{ObjectKey, Plan, Settlement, WriteKind, plan};
use crate::render::{generation_annotation, uid_annotation};
use crate::settings::Settings;
use crate::sim::cluster::{Kind, ReconcileReport};
use crate::sim::scenario::{Backend, StepError};
use crate::snapshot::Snapshot;
use crate::wire::{
    Condition, Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route, ListenerStatus,
};

use super::ControllerLoop;

/// A property that failed, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The reconcile it failed at (1-based, counting the reconciles checked).
    pub step: usize,
    /// Which property: e.g. `no-flapping`, `degraded-after`, `applied-truth`.
    pub property: &'static str,
    /// What was seen.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reconcile {}: {} violated: {}",
            self.step, self.property, self.message
        )
    }
}

/// proptest turns it into a test failure (its `TestCaseError` converts from any error), so
/// `?` works in a `proptest!` body.
impl std::error::Error for Violation {}

/// The invariants, checked reconcile by reconcile on one Gateway's run.
///
/// The properties (the Gateway's conditions before and after each reconcile):
///
/// - `foreign-untouched`: conditions of other types are kept as they were, in place;
/// - `well-formed`: owned conditions carry the Gateway's generation (when written and ours),
///   a valid type and reason, a message of at most 32768 characters, an RFC 3339
///   `lastTransitionTime` that moves only with the status;
/// - `no-flapping`: a transient or conflicting update failure never turns `Programmed` False;
/// - `degraded-after`: `Degraded` is only ever True, only with `Programmed` True;
///   `ApplyFailing` appears no earlier than `degradedAfter` after `ConfigurationApplied`
///   turned False, and is there once `ConfigurationApplied` has been False/`ApplyFailed`
///   that long (with `Programmed` True);
/// - `degraded-steady`: once True, `Degraded` stays True (same `lastTransitionTime`) while
///   the gap lasts;
/// - `applied-truth`: `ConfigurationApplied` is True exactly when the stored Deployment
///   carries the current GatewayConfiguration generation with no drift (a plan made now,
///   with the controller's write record, asks for no write: the drift the record holds
///   back is the API server's own change to the last write), and then never another
///   GatewayConfiguration's uid;
/// - `programmed-names-generation`: a True `Programmed` names the generation the Deployment
///   carries, and is never True without a Deployment;
/// - `no-idle-write`: the status is written only when a condition, an address or a listener's
///   status changed;
/// - `status-patch`: the settlement's status patch, applied as the API server would, gives
///   the settled status;
/// - `deterministic`: planning the same snapshot twice gives the same write and settlement;
/// - `requeue-honoured`: the loop scheduled its next reconcile no later than the
///   reconcile's [`Requeue`](crate::Requeue) asked (its
///   [`deadline`](crate::Requeue::deadline) from the reconcile's time), as
///   [`ControllerLoop::next_due`] reports it.
///
/// [`converge`](super::schedule::converge) adds `converged`: once faults stop and the configuration is valid and ours,
/// the status settles and no write is sent, Deployment or status; and `no-write-loop`: the
/// same while mutating admission still changes every Deployment write (the write record
/// holds the server's change back instead of writing it again).
#[derive(Debug, Clone)]
pub struct Invariants {
    settings: Settings,
    now: Timestamp,
    /// Mutating admission changes every Deployment write (an odd `MutateWrites` last).
    pub(crate) mutating: bool,
    /// What each Gateway's status was after the last reconcile checked (or when first
    /// seen), by namespace and name: one checker serves every Gateway of a store.
    seen: BTreeMap<ObjectKey, Seen>,
    /// Each Gateway's conditions when the checker first saw it.
    first: BTreeMap<ObjectKey, Vec<Condition>>,
    step: usize,
}

/// A Gateway's conditions, addresses and listener status as last seen.
#[derive(Debug, Clone)]
struct Seen {
    conditions: Vec<Condition>,
    addresses: Vec<String>,
    listeners: Vec<ListenerStatus>,
}

/// A Gateway's namespace and name.
fn key_of(gateway: &Gateway) -> ObjectKey {
    let part = |p: &Option<String>| p.clone().unwrap_or_default();
    (
        part(&gateway.metadata.namespace),
        part(&gateway.metadata.name),
    )
}

/// The objects a check reads back from the loop, typed.
pub(super) struct Objects {
    pub(super) gateway: Gateway,
    pub(super) class: Option<GatewayClass>,
    pub(super) configuration: Option<GatewayConfiguration>,
    pub(super) deployment: Option<Deployment>,
    pub(super) template: Deployment,
    pub(super) routes: Vec<L34Route>,
}

/// A backend's failure as a violation of `property` at `step`.
pub(super) fn refused<E: fmt::Display>(
    step: usize,
    property: &'static str,
    what: &str,
    e: StepError<E>,
) -> Violation {
    Violation {
        step,
        property,
        message: format!("{what}: {e}"),
    }
}

pub(super) fn read<L: Backend + ?Sized>(
    l: &L,
    kind: Kind,
    step: usize,
) -> Result<Option<Value>, Violation> {
    l.read(kind)
        .map_err(|e| refused(step, "backend", &format!("read the {kind}"), e))
}

pub(super) fn read_typed<L: Backend + ?Sized, T: serde::de::DeserializeOwned>(
    l: &L,
    kind: Kind,
    step: usize,
) -> Result<Option<T>, Violation> {
    read(l, kind, step)?.map(|v| parse(&v, step)).transpose()
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value, step: usize) -> Result<T, Violation> {
    serde_json::from_value(v.clone()).map_err(|e| Violation {
        step,
        property: "well-formed",
        message: format!("a stored object does not parse: {e}"),
    })
}

pub(super) fn find<'a>(conditions: &'a [Condition], t: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == t)
}

fn addresses(gateway: &Gateway) -> Vec<String> {
    gateway
        .status
        .addresses
        .iter()
        .map(|a| a.value.clone())
        .collect()
}

pub(super) fn is_true(c: Option<&Condition>) -> bool {
    c.is_some_and(|c| c.status == conditions::status::TRUE)
}

impl Invariants {
    /// Feeds what the checks remember and compare the next reconcile with to `state` (the
    /// explorer's fingerprint of a state): each Gateway's status as last seen and whether
    /// mutating admission is on; not the count of reconciles checked.
    pub(crate) fn hash_memory(&self, state: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.mutating.hash(state);
        for (key, seen) in &self.seen {
            key.hash(state);
            format!(
                "{:?} {:?} {:?}",
                seen.conditions, seen.addresses, seen.listeners
            )
            .hash(state);
        }
    }

    /// Starts checking a run on `controller` as it is now (its settings and clock).
    pub fn new<L: ControllerLoop + ?Sized>(controller: &L) -> Result<Self, Violation> {
        let gateway: Gateway =
            read_typed(controller, Kind::Gateway, 0)?.ok_or_else(|| Violation {
                step: 0,
                property: "backend",
                message: "there is no Gateway".into(),
            })?;
        let mut invariants = Invariants {
            settings: controller.settings().clone(),
            now: controller.now(),
            mutating: false,
            seen: BTreeMap::new(),
            first: BTreeMap::new(),
            step: 0,
        };
        invariants.start(gateway);
        Ok(invariants)
    }

    /// Starts checking the loop's Gateway as it is now too, unless it is checked already:
    /// after the loop's target moved to another Gateway of its store
    /// ([`ControllerLoop::target`]; [`schedule::apply`](super::schedule::apply) calls it
    /// on an [`Op::Target`](super::strategies::Op::Target)). Every Gateway is then checked
    /// against its own last status, on the one clock of the run.
    pub fn observe<L: ControllerLoop + ?Sized>(&mut self, controller: &L) -> Result<(), Violation> {
        let gateway: Gateway =
            read_typed(controller, Kind::Gateway, self.step)?.ok_or_else(|| Violation {
                step: self.step,
                property: "backend",
                message: "there is no Gateway".into(),
            })?;
        if !self.seen.contains_key(&key_of(&gateway)) {
            self.start(gateway);
        }
        Ok(())
    }

    /// Starts checking `gateway` as it is.
    fn start(&mut self, gateway: Gateway) {
        let key = key_of(&gateway);
        self.first
            .insert(key.clone(), gateway.status.conditions.clone());
        self.seen.insert(
            key,
            Seen {
                addresses: addresses(&gateway),
                listeners: gateway.status.listeners,
                conditions: gateway.status.conditions,
            },
        );
    }

    /// The conditions of the Gateway `namespace/name` when the checker first saw it
    /// (`None`: never), as [`Run::changes`](super::Run::changes) starts from them.
    pub fn first_seen(&self, namespace: &str, name: &str) -> Option<&[Condition]> {
        self.first
            .get(&(namespace.to_owned(), name.to_owned()))
            .map(Vec::as_slice)
    }

    /// How many Gateways the checker has seen.
    pub fn gateways(&self) -> usize {
        self.seen.len()
    }

    /// How many reconciles were checked.
    pub fn steps(&self) -> usize {
        self.step
    }

    /// The run's clock: the kit hands it to every call on the loop.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Moves the run's clock to `now` (never backwards), for a test that advances time
    /// itself. One checker serves every Gateway of a store ([`Invariants::observe`]), so a
    /// run over several Gateways has one clock: this one, which the store follows
    /// ([`ControllerLoop::advance_to`] at the end of an advance, and every call's `now`).
    pub fn set_now(&mut self, now: Timestamp) {
        self.now = self.now.max(now);
    }

    /// The settings the run checks against.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(super) fn objects<L: ControllerLoop + ?Sized>(
        &self,
        controller: &L,
    ) -> Result<Objects, Violation> {
        let step = self.step;
        let missing = |what: &str| Violation {
            step,
            property: "backend",
            message: format!("there is no {what}"),
        };
        Ok(Objects {
            gateway: read_typed(controller, Kind::Gateway, step)?
                .ok_or_else(|| missing("Gateway"))?,
            class: read_typed(controller, Kind::GatewayClass, step)?,
            configuration: read_typed(controller, Kind::Configuration, step)?,
            deployment: read_typed(controller, Kind::Deployment, step)?,
            template: read_typed(controller, Kind::Template, step)?
                .ok_or_else(|| missing("template"))?,
            routes: read_typed(controller, Kind::Routes, step)?.unwrap_or_default(),
        })
    }

    pub(super) fn violation(&self, property: &'static str, message: String) -> Violation {
        Violation {
            step: self.step,
            property,
            message,
        }
    }

    pub(super) fn ensure(
        &self,
        ok: bool,
        property: &'static str,
        message: impl FnOnce() -> String,
    ) -> Result<(), Violation> {
        if ok {
            Ok(())
        } else {
            Err(self.violation(property, message()))
        }
    }

    /// Checks the reconcile `record` the loop has just run (at `record.time`), with the
    /// objects read back from it.
    pub fn check<L: ControllerLoop + ?Sized>(
        &mut self,
        controller: &L,
        record: &ReconcileReport,
    ) -> Result<(), Violation> {
        self.step += 1;
        self.set_now(record.time);
        let now = record.time;
        let objects = self.objects(controller)?;
        let settings = &self.settings;
        let domain = &settings.condition_domain;
        let applied_type = format!("{domain}/{CONFIGURATION_APPLIED_NAME}");
        let degraded_type = format!("{domain}/{DEGRADED_NAME}");
        let owned = [
            ACCEPTED,
            PROGRAMMED,
            applied_type.as_str(),
            degraded_type.as_str(),
        ];
        let gateway = &objects.gateway;
        let generation = gateway.metadata.generation;
        let after = &gateway.status.conditions;
        let seen = self.seen.get(&key_of(gateway)).cloned().ok_or_else(|| {
            self.violation(
                "backend",
                format!(
                    "the checker never saw the Gateway {:?} before this reconcile of it \
                     (Invariants::observe)",
                    key_of(gateway)
                ),
            )
        })?;
        let before = &seen.conditions;
        let ours = objects
            .class
            .as_ref()
            .is_some_and(|c| c.spec.controller_name == settings.controller_name);

        // The loop's schedule: no later than the requeue asked.
        if let Some(deadline) = record.requeue.deadline(now) {
            let due = controller.next_due();
            self.ensure(due.is_some_and(|due| due <= deadline), "requeue-honoured", || {
                format!(
                    "the reconcile at {now} asked to look again by {deadline} ({}), and the loop scheduled {}",
                    crate::sim::scenario::describe::describe_requeue(record.requeue),
                    due.map_or("nothing (it waits for a change)".into(), |d| d.to_string())
                )
            })?;
        }

        // No status write when nothing changed (a condition, an address, a listener's
        // status: SPEC revision 5), and the patch gives the settled status.
        let changed = *after != *before
            || addresses(gateway) != seen.addresses
            || gateway.status.listeners != seen.listeners;
        self.ensure(!record.status_written || changed, "no-idle-write", || {
            "the status was written, and neither a condition, an address nor a listener's status changed".into()
        })?;
        if let Some(problem) = &record.status_patch_problem {
            return Err(self.violation("status-patch", problem.clone()));
        }

        // Foreign conditions: the same ones, byte-identical, in the same order.
        let foreign = |cs: &[Condition]| -> Vec<Condition> {
            cs.iter()
                .filter(|c| !owned.contains(&c.type_.as_str()))
                .cloned()
                .collect()
        };
        let (foreign_before, foreign_after) = (foreign(before), foreign(after));
        self.ensure(foreign_before == foreign_after, "foreign-untouched", || {
            format!("foreign conditions were {foreign_before:?}, are {foreign_after:?}")
        })?;
        let positions = |cs: &[Condition]| -> Vec<usize> {
            cs.iter()
                .enumerate()
                .filter(|(_, c)| !owned.contains(&c.type_.as_str()))
                .map(|(i, _)| i)
                .collect()
        };
        self.ensure(
            positions(before) == positions(after),
            "foreign-untouched",
            || "foreign conditions moved".into(),
        )?;

        for c in after.iter().filter(|c| owned.contains(&c.type_.as_str())) {
            if record.status_written && ours {
                self.ensure(c.observed_generation == generation, "well-formed", || {
                    format!(
                        "{} has observedGeneration {:?}, the Gateway {generation:?}",
                        c.type_, c.observed_generation
                    )
                })?;
            }
            self.ensure(
                conditions::is_valid_reason(&c.reason),
                "well-formed",
                || format!("{} reason {:?}", c.type_, c.reason),
            )?;
            self.ensure(conditions::is_valid_type(&c.type_), "well-formed", || {
                format!("type {:?}", c.type_)
            })?;
            self.ensure(c.message.chars().count() <= 32768, "well-formed", || {
                format!("{} message too long", c.type_)
            })?;
            self.ensure(
                c.last_transition_time.parse::<jiff::Timestamp>().is_ok(),
                "well-formed",
                || {
                    format!(
                        "{} lastTransitionTime {:?}",
                        c.type_, c.last_transition_time
                    )
                },
            )?;
            if let Some(b) = find(before, &c.type_) {
                self.ensure(
                    b.status != c.status || b.last_transition_time == c.last_transition_time,
                    "well-formed",
                    || format!("{} lastTransitionTime moved without a transition", c.type_),
                )?;
            }
        }

        let programmed = find(after, PROGRAMMED);
        let applied = find(after, &applied_type);
        let degraded = find(after, &degraded_type);

        // No flapping on a transient or conflicting update failure.
        if is_true(find(before, PROGRAMMED))
            && record.action == WriteKind::Update
            && let Some(class) = record.outcome.as_ref().and_then(WriteOutcome::class)
            && matches!(class, FailureClass::Transient | FailureClass::Conflict)
        {
            self.ensure(is_true(programmed), "no-flapping", || {
                format!("Programmed turned {programmed:?} on a {class:?} failure")
            })?;
        }

        // Degraded on time: ConfigurationApplied False/ApplyFailed (a transient failure) for
        // degradedAfter, with Programmed True, is Degraded.
        if let Some(a) = applied.filter(|a| {
            a.status == conditions::status::FALSE && a.reason == conditions::reason::APPLY_FAILED
        }) {
            let due = a
                .last_transition_time
                .parse::<jiff::Timestamp>()
                .ok()
                .and_then(|s| {
                    jiff::SignedDuration::try_from(settings.degraded_after)
                        .ok()
                        .and_then(|d| s.checked_add(d).ok())
                });
            if ours && is_true(programmed) && due.is_some_and(|due| now >= due) {
                self.ensure(is_true(degraded), "degraded-after", || {
                    format!(
                        "ConfigurationApplied False/ApplyFailed since {}, degradedAfter {:?} passed, and no Degraded",
                        a.last_transition_time, settings.degraded_after
                    )
                })?;
            }
        }

        // Degraded: only True, only with Programmed True, ApplyFailing not before it is due.
        if let Some(d) = degraded {
            self.ensure(
                d.status == conditions::status::TRUE,
                "degraded-after",
                || format!("Degraded is {}", d.status),
            )?;
            self.ensure(is_true(programmed), "degraded-after", || {
                "Degraded without Programmed True".into()
            })?;
            if d.reason == conditions::reason::APPLY_FAILING
                && find(before, &degraded_type).is_none()
            {
                let since =
                    applied.and_then(|a| a.last_transition_time.parse::<jiff::Timestamp>().ok());
                let due = since.and_then(|s| {
                    jiff::SignedDuration::try_from(settings.degraded_after)
                        .ok()
                        .and_then(|d| s.checked_add(d).ok())
                });
                self.ensure(due.is_some_and(|due| now >= due), "degraded-after", || {
                    format!(
                        "ApplyFailing at {} before degradedAfter ({:?}) from ConfigurationApplied's lastTransitionTime {:?}",
                        now,
                        settings.degraded_after,
                        applied.map(|a| a.last_transition_time.as_str())
                    )
                })?;
            }
        }

        // Degraded never flaps while the gap lasts.
        if let Some(b) = find(before, &degraded_type)
            && ours
            && is_true(programmed)
            && !is_true(applied)
        {
            let now = degraded.map(|d| (d.status.as_str(), d.last_transition_time.as_str()));
            self.ensure(
                now == Some((conditions::status::TRUE, b.last_transition_time.as_str())),
                "degraded-steady",
                || {
                    format!(
                        "Degraded flapped: was True since {}, is {now:?}",
                        b.last_transition_time
                    )
                },
            )?;
        }

        // Honesty, for an accepted Gateway of ours.
        if ours && is_true(find(after, ACCEPTED)) {
            let stored = objects.deployment.as_ref();
            let wanted = objects
                .configuration
                .as_ref()
                .and_then(|c| c.metadata.generation);
            let key = generation_annotation(settings);
            let carried = stored
                .and_then(|d| d.annotation(&key))
                .and_then(|g| g.parse::<i64>().ok());
            let collision = programmed.is_some_and(|p| p.message.contains("name collision"));
            if !collision {
                let no_drift = self
                    .fresh_write(&objects, controller.write_record(), now)?
                    .is_none();
                let truth = stored.is_some() && carried == wanted && no_drift;
                self.ensure(applied.map(|c| c.status == conditions::status::TRUE) == Some(truth), "applied-truth", || {
                    format!(
                        "ConfigurationApplied is {:?}, but the Deployment carries generation {carried:?} of {wanted:?} (drift-free: {no_drift})",
                        applied.map(|c| c.status.as_str())
                    )
                })?;
                // The uid: a Deployment applied to another GatewayConfiguration of the same
                // name is not applied (one without the annotation is compared by generation).
                let carried_uid = stored.and_then(|d| d.annotation(&uid_annotation(settings)));
                let wanted_uid = objects
                    .configuration
                    .as_ref()
                    .and_then(|c| c.metadata.uid.as_deref());
                if is_true(applied) {
                    self.ensure(carried_uid.is_none() || carried_uid == wanted_uid, "applied-truth", || {
                        format!("ConfigurationApplied is True, but the Deployment carries uid {carried_uid:?}, not {wanted_uid:?}")
                    })?;
                }
                if let (Some(p), Some(n)) = (programmed.filter(|p| is_true(Some(p))), carried) {
                    let prefix = format!(
                        "LB Deployment reconciled with GatewayConfiguration generation {n}"
                    );
                    self.ensure(
                        p.message.starts_with(&prefix),
                        "programmed-names-generation",
                        || {
                            format!(
                                "Programmed must name the carried generation {n}: {:?}",
                                p.message
                            )
                        },
                    )?;
                }
                if stored.is_none() {
                    self.ensure(!is_true(programmed), "programmed-names-generation", || {
                        "Programmed True without a Deployment".into()
                    })?;
                }
            }
        }
        self.seen.insert(
            key_of(gateway),
            Seen {
                conditions: after.clone(),
                addresses: addresses(gateway),
                listeners: gateway.status.listeners.clone(),
            },
        );
        Ok(())
    }

    /// The Deployment kind a plan made now on the loop's objects and write record asks for
    /// (`None`: no write), planned twice to check determinism.
    fn fresh_write(
        &self,
        objects: &Objects,
        record: Option<crate::reconcile::WriteRecord>,
        now: Timestamp,
    ) -> Result<Option<WriteKind>, Violation> {
        let snapshot = Snapshot::new(&objects.gateway, &objects.template)
            .with_gateway_class(objects.class.as_ref())
            .with_configuration(objects.configuration.as_ref())
            .with_deployment(objects.deployment.as_ref())
            .with_routes(&objects.routes)
            // The drift the controller's write record holds back is not drift left.
            .with_write_record(record);
        let settings = &self.settings;
        let planned = |()| plan(settings, snapshot, now);
        let (Ok(first), Ok(second)) = (planned(()), planned(())) else {
            return Ok(None);
        };
        self.ensure(first.write() == second.write(), "deterministic", || {
            "two plans of one snapshot ask for different writes".into()
        })?;
        let kind = first.write().map(|w| w.kind());
        let settle = |p: Plan<'_>| -> Settlement {
            match p {
                Plan::Write(pending) => pending.settle(WriteOutcome::Applied),
                Plan::Settled(settlement) => settlement,
            }
        };
        self.ensure(settle(first) == settle(second), "deterministic", || {
            "two plans of one snapshot settle differently".into()
        })?;
        Ok(kind)
    }
}
