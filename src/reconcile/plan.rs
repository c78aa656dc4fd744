//! The decisions of one reconcile (deletion, staleness, ownership, validation, render,
//! drift), in order, up to the Deployment write; and the plan that
//! carries them to the write and its settlement.

use jiff::Timestamp;

use super::record::fingerprint;
use super::settlement::Settlement;
use super::write::{DeploymentWrite, WriteKind};
use crate::addresses::{addresses, attachment};
use crate::conditions::{self, ConditionTypes, ListenerTypes, TransitionTime};
use crate::drift::{Enforcement, drift_owned};
use crate::error::InputError;
use crate::outcome::WriteOutcome;
use crate::render::{
    complete, deployment_name, generation_annotation, render, render_owned, uid_annotation,
};
use crate::rollout::{Rollout, rollout};
use crate::settings::Settings;
use crate::snapshot::{GatewayId, Snapshot};
use crate::validate::{Invalid, Validated, validate_snapshot};
use crate::wire::{Condition, GatewayAddress, GatewayConfiguration};

/// The decision of one reconcile: a Deployment write to perform and settle, or the
/// settlement already.
#[must_use = "perform the write and settle it, or use the settlement"]
#[derive(Debug)]
// Not `#[non_exhaustive]` on purpose: an embedder matches the protocol's states
// exhaustively, so a new state is a compile error in every controller, never a silent arm.
// A plan lives for one reconcile and is moved once or twice: boxing the larger variant would
// cost an allocation per write for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Plan<'a> {
    /// The LB Deployment must be written: perform [`PendingWrite::write`], then
    /// [`PendingWrite::settle`] with its outcome.
    Write(PendingWrite<'a>),
    /// Nothing to write: the settlement is ready.
    Settled(Settlement),
}

impl Plan<'_> {
    /// What the plan does to the Deployment: `Create`, `Update`, or `None` when settled.
    pub fn write_kind(&self) -> WriteKind {
        match self {
            Plan::Write(pending) => pending.write.kind(),
            Plan::Settled(_) => WriteKind::None,
        }
    }

    /// The write to perform, if any.
    pub fn write(&self) -> Option<&DeploymentWrite> {
        match self {
            Plan::Write(pending) => Some(&pending.write),
            Plan::Settled(_) => None,
        }
    }
}

/// A Deployment write waiting to be performed and settled with its outcome.
#[must_use = "perform the write, then settle it with its outcome"]
#[derive(Debug)]
pub struct PendingWrite<'a> {
    planned: Planned<'a>,
    write: DeploymentWrite,
}

impl<'a> PendingWrite<'a> {
    /// The Deployment write to perform.
    pub fn write(&self) -> &DeploymentWrite {
        &self.write
    }

    /// Settles the write with what happened to it: the conditions, Events and requeue of the
    /// crate docs' condition table for that outcome. Takes the plan by value: a
    /// write is settled exactly once.
    pub fn settle(self, outcome: WriteOutcome) -> Settlement {
        self.planned.settle(Some((self.write.kind(), &outcome)))
    }

    /// Takes the write out, to perform it by value, and what settles it.
    ///
    /// A caller that turns the desired Deployment into its request body (or stores it)
    /// takes it here rather than copy it from [`PendingWrite::write`]: a Deployment can be
    /// large, and the copy would double what the reconcile holds.
    ///
    /// ```
    /// # use gateway_reconcile::{DeploymentWrite, PendingWrite, Settlement, WriteOutcome};
    /// fn perform(pending: PendingWrite<'_>) -> Settlement {
    ///     let (write, awaiting) = pending.into_write();
    ///     let outcome = match write {
    ///         // client.create(desired.object), client.replace(desired.object)
    ///         DeploymentWrite::Create(_desired) => WriteOutcome::Applied,
    ///         DeploymentWrite::Update { desired: _, drift: _ } => WriteOutcome::Applied,
    ///     };
    ///     awaiting.settle(outcome)
    /// }
    /// ```
    pub fn into_write(self) -> (DeploymentWrite, AwaitingOutcome<'a>) {
        let kind = self.write.kind();
        (
            self.write,
            AwaitingOutcome {
                planned: self.planned,
                kind,
            },
        )
    }
}

/// A write taken out of its plan ([`PendingWrite::into_write`]), waiting for its outcome.
#[must_use = "settle it with the outcome of the write"]
#[derive(Debug)]
pub struct AwaitingOutcome<'a> {
    pub(super) planned: Planned<'a>,
    pub(super) kind: WriteKind,
}

impl AwaitingOutcome<'_> {
    /// What the write was: [`WriteKind::Create`] or [`WriteKind::Update`].
    pub fn kind(&self) -> WriteKind {
        self.kind
    }

    /// Settles the write with what happened to it, as [`PendingWrite::settle`] does.
    pub fn settle(self, outcome: WriteOutcome) -> Settlement {
        self.settle_by_ref(&outcome)
    }

    /// [`AwaitingOutcome::settle`] with an outcome the caller keeps (the driver returns
    /// it): settling reads it, and a stored Deployment is not copied for it.
    pub(super) fn settle_by_ref(self, outcome: &WriteOutcome) -> Settlement {
        self.planned.settle(Some((self.kind, outcome)))
    }
}

/// The decision of one reconcile, and what settling it needs.
#[derive(Debug)]
pub(super) struct Planned<'a> {
    pub(super) settings: &'a Settings,
    pub(super) types: ConditionTypes,
    pub(super) snapshot: Snapshot<'a>,
    pub(super) generation: i64,
    pub(super) now: Timestamp,
    /// When ConfigurationApplied turned False, if it is False in the snapshot (never after
    /// `now`).
    pub(super) applied_false_since: Option<Timestamp>,
    /// Which listeners each route attaches through ([`attachment`]), once the Gateway is
    /// ours (empty before): the addresses and the listener status both read it.
    pub(super) attachment: Vec<u64>,
    pub(super) decision: Decision<'a>,
}

/// What the snapshot says about the Gateway, before any write.
#[derive(Debug)]
pub(super) enum Decision<'a> {
    /// Being deleted: do nothing.
    Deleted,
    /// An owned condition is newer than the snapshot: write nothing, look again at once.
    Stale,
    /// The GatewayClass is missing or another controller's.
    NotOurs,
    /// The parameters are invalid.
    Invalid(Invalid),
    /// Accepted: the Deployment is (to be) managed.
    Accepted(Accepted<'a>),
}

/// Everything settle needs about an accepted Gateway.
#[derive(Debug)]
pub(super) struct Accepted<'a> {
    pub configuration: &'a GatewayConfiguration,
    /// The validated parameters: settling a write the API server answered renders again.
    pub validated: Validated<'a>,
    /// The drift a write record holds back (the API server's own changes to our last
    /// write); empty otherwise.
    pub held: Vec<String>,
    /// The current GatewayConfiguration generation.
    pub wanted: i64,
    /// `namespace/name` of the LB Deployment.
    pub deployment: String,
    pub addresses: Vec<GatewayAddress>,
    /// The observed Deployment, when there is one.
    pub observed: Option<Observed>,
    /// The fingerprint of the full render (no observed object), when the plan made one: a
    /// create's desired Deployment. Settling the write's record needs it, and the render
    /// is the reconcile's costliest step.
    pub rendered: Option<u64>,
}

/// What the observed Deployment carries.
#[derive(Debug)]
pub(super) struct Observed {
    /// The GatewayConfiguration generation of its annotation (`None`: absent or not a number).
    pub carried: Option<i64>,
    /// Whether its uid annotation names the current GatewayConfiguration: true when either
    /// side has no uid (a Deployment written before the annotation existed is compared by
    /// generation alone).
    pub same_configuration: bool,
    pub rollout: Rollout,
    /// Whether it carries a uid annotation at all.
    pub carried_uid: bool,
    /// `KIND/NAME` (or `unknown`) of its controller when that is not this Gateway.
    pub collision: Option<String>,
    /// Whether the planned update bumps the Deployment's `metadata.generation` (its `spec`
    /// or its annotations change, as apps/v1 counts them), so that the rollout status is
    /// stale until the Deployment controller observes the new generation.
    pub spec_changes: bool,
}

/// The drift the API server made in a write it took, from what the crate can see of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ServerChanges {
    /// The drifted paths.
    pub paths: Vec<String>,
    /// The generation or uid annotation key, when the server changed or removed one: the
    /// Deployment then cannot say what it carries.
    pub identity_annotation: Option<String>,
}

/// Decides what to do for one Gateway, in this order: a Gateway being deleted gets nothing;
/// an owned condition with an `observedGeneration` newer than the Gateway's means a stale
/// snapshot (nothing written, look again at once), and so does a Deployment of this
/// Gateway that carries a newer generation of the same GatewayConfiguration (same uid)
/// than the one read; a Gateway whose GatewayClass is missing
/// or names another controller is not ours (its `Accepted=True` of this controller becomes
/// `Accepted=Unknown/Pending`, the domain conditions go, the rest is left alone); then the
/// parameters are validated ([validation](crate::reconcile#validation)), the Deployment
/// rendered ([the LB Deployment](crate::reconcile#the-lb-deployment)) and compared by
/// meaning with the observed one ([drift](crate::reconcile#drift)), and the addresses
/// computed ([addresses](crate::reconcile#addresses)). A plan with nothing
/// to write comes settled. Errors are inputs the crate cannot work with; invalid parameters
/// are not errors but the `InvalidParameters` conditions.
pub fn plan<'a>(
    settings: &'a Settings,
    snapshot: Snapshot<'a>,
    now: Timestamp,
) -> Result<Plan<'a>, InputError> {
    settings.validate()?;
    let types = ConditionTypes::of_valid(settings);
    let gateway = snapshot.gateway;
    let id = GatewayId::of(gateway)?;
    let conditions = &gateway.status.conditions;
    let mut plan = Planned {
        settings,
        snapshot,
        generation: id.generation,
        now,
        applied_false_since: None,
        attachment: Vec::new(),
        decision: Decision::Deleted,
        types,
    };
    if gateway.metadata.deletion_timestamp.is_some() {
        return Ok(plan.settled());
    }
    plan.applied_false_since = applied_false_since(conditions, &plan.types, now);
    let listeners_stale = gateway
        .status
        .listeners
        .iter()
        .any(|entry| conditions::is_stale(&entry.conditions, &ListenerTypes, id.generation));
    if conditions::is_stale(conditions, &plan.types, id.generation) || listeners_stale {
        plan.decision = Decision::Stale;
        return Ok(plan.settled());
    }
    let ours = snapshot.gateway_class.is_some_and(|class| {
        class.spec.controller_name == settings.controller_name
            && class
                .metadata
                .name
                .as_deref()
                .is_none_or(|n| n == gateway.spec.gateway_class_name)
    });
    if !ours {
        plan.decision = Decision::NotOurs;
        return Ok(plan.settled());
    }
    plan.attachment = attachment(gateway, snapshot.routes, snapshot.namespace_labels);
    let validated = match validate_snapshot(settings, &snapshot) {
        Ok(v) => v,
        Err(invalid) => {
            plan.decision = Decision::Invalid(invalid);
            return Ok(plan.settled());
        }
    };
    let configuration = validated.configuration;
    let wanted = configuration_generation(configuration)?;
    let name = deployment_name(settings, id.name);
    let deployment = format!("{}/{name}", id.namespace);
    let mut accepted = Accepted {
        configuration,
        validated,
        held: Vec::new(),
        wanted,
        addresses: addresses(snapshot.routes, &plan.attachment),
        deployment,
        observed: None,
        rendered: None,
    };
    let validated = &accepted.validated;
    let mut write = None;
    let mut rendered = None;
    match snapshot.deployment {
        None => {
            let desired = render(settings, gateway, validated, snapshot.template, None);
            rendered = Some(fingerprint(&desired));
            write = Some(DeploymentWrite::Create(desired));
        }
        Some(observed) => {
            check_identity(observed, &accepted.deployment, &name, id.namespace)?;
            let carried_uid = observed.annotation(&uid_annotation(settings));
            let mut seen = Observed {
                carried: observed
                    .annotation(&generation_annotation(settings))
                    .and_then(|g| g.parse().ok()),
                same_configuration: match (carried_uid, configuration.metadata.uid.as_deref()) {
                    (Some(carried), Some(current)) => carried == current,
                    _ => true,
                },
                carried_uid: carried_uid.is_some(),
                rollout: rollout(observed),
                collision: None,
                spec_changes: false,
            };
            match observed.controller_owner() {
                Some(_)
                    if observed.controlled_by(id.uid) && seen.ahead_of(configuration, wanted) =>
                {
                    // A generation of this very GatewayConfiguration newer than the one read:
                    // the read is stale (a cache behind). Writing would roll the Deployment
                    // back, and the status would name an old generation.
                    plan.decision = Decision::Stale;
                    return Ok(plan.settled());
                }
                Some(_) if observed.controlled_by(id.uid) => {
                    // Drift of the owned part equals drift of the full render; the full
                    // object is only built when there is an update to write.
                    let owned = render_owned(
                        settings,
                        gateway,
                        validated,
                        snapshot.template,
                        Some(observed),
                    );
                    let enforcement = Enforcement::of(settings, configuration);
                    let paths = drift_owned(&owned, observed, &enforcement);
                    let held = !paths.is_empty()
                        && snapshot.write_record.is_some_and(|record| {
                            let desired = || {
                                fingerprint(&render(
                                    settings,
                                    gateway,
                                    validated,
                                    snapshot.template,
                                    None,
                                ))
                            };
                            record.holds(observed.generation(), desired, &paths)
                        });
                    if held {
                        // The API server's own doing at our last write: not fought.
                        accepted.held = paths;
                    } else if !paths.is_empty() {
                        seen.spec_changes = paths.iter().any(|p| {
                            p.starts_with("spec") || p.starts_with("metadata.annotations")
                        });
                        write = Some(DeploymentWrite::Update {
                            desired: complete(observed, owned),
                            drift: paths,
                        });
                    }
                }
                Some((kind, owner, _)) => seen.collision = Some(format!("{kind}/{owner}")),
                None => seen.collision = Some("unknown".to_owned()),
            }
            accepted.observed = Some(seen);
        }
    }
    accepted.rendered = rendered;
    plan.decision = Decision::Accepted(accepted);
    Ok(match write {
        Some(write) => Plan::Write(PendingWrite {
            planned: plan,
            write,
        }),
        None => plan.settled(),
    })
}

impl Observed {
    /// Whether the Deployment carries generation `wanted` of the current
    /// GatewayConfiguration: the number alone is not enough after a delete and recreate.
    pub fn carries(&self, wanted: i64) -> bool {
        self.same_configuration && self.carried == Some(wanted)
    }

    /// Whether the Deployment carries a generation of `configuration` (the same uid, on
    /// both sides) above `wanted`, the generation read: generations never go down, so the
    /// read is older than what was applied. Without a uid on either side a recreated
    /// GatewayConfiguration (generation 1 again) cannot be told from a stale read: no.
    fn ahead_of(&self, configuration: &GatewayConfiguration, wanted: i64) -> bool {
        self.carried_uid
            && configuration.metadata.uid.is_some()
            && self.same_configuration
            && self.carried.is_some_and(|carried| carried > wanted)
    }
}

impl Planned<'_> {
    /// The plan of a reconcile with nothing to write, settled at once.
    fn settled(self) -> Plan<'static> {
        Plan::Settled(self.settle(None))
    }
}

/// When ConfigurationApplied turned False, if it is False in the snapshot. Time never runs
/// backwards here: a `lastTransitionTime` in the future, beyond the supported range, or not a
/// time at all (the API server would never return one) counts as `now`.
fn applied_false_since(
    conditions: &[Condition],
    types: &ConditionTypes,
    now: Timestamp,
) -> Option<Timestamp> {
    conditions::find(conditions, &types.configuration_applied)
        .filter(|c| c.status == conditions::status::FALSE)
        .map(
            |c| match conditions::transition_time(&c.last_transition_time) {
                TransitionTime::At(t) => t.min(now),
                _ => now,
            },
        )
}

fn configuration_generation(configuration: &GatewayConfiguration) -> Result<i64, InputError> {
    let meta = &configuration.metadata;
    // Named only on the error path: the usual reconcile builds no string here.
    let object = || {
        format!(
            "GatewayConfiguration {:?}",
            format!(
                "{}/{}",
                meta.namespace.as_deref().unwrap_or(""),
                meta.name.as_deref().unwrap_or("")
            )
        )
    };
    match meta.generation {
        None => Err(InputError::MissingField {
            object: object(),
            field: "metadata.generation",
        }),
        Some(g) if g < 0 => Err(InputError::NegativeGeneration {
            object: object(),
            field: "metadata.generation",
            value: g,
        }),
        Some(g) => Ok(g),
    }
}

/// The observed Deployment must be the one this Gateway's LB Deployment would be; a
/// missing name or namespace (a hand-written snapshot) is taken as that one.
fn check_identity(
    observed: &crate::wire::Deployment,
    expected: &str,
    name: &str,
    namespace: &str,
) -> Result<(), InputError> {
    let found_name = observed.name().unwrap_or(name);
    let found_namespace = observed.namespace().unwrap_or(namespace);
    if found_name == name && found_namespace == namespace {
        Ok(())
    } else {
        Err(InputError::NotTheLbDeployment {
            found: format!("{found_namespace}/{found_name}"),
            expected: expected.to_owned(),
        })
    }
}
