//! The condition table (and the status side of the plan's decisions) as one table: a [`Situation`] maps to a
//! [`Verdict`], the four owned conditions and the requeue. The arms follow the table's rows
//! in order, each named in a comment; the messages are written here and nowhere else.

use super::plan::{Accepted, Observed, Planned};
use super::settlement::Requeue;
use super::situation::{LbDeployment, Situation};
use super::write::WriteKind;
use crate::conditions::{ACCEPTED, Change, WAITING_FOR_CONTROLLER, Wanted, find, reason, status};
use crate::outcome::FailureClass;
use crate::rollout::Stall;
use crate::wire::GatewayAddress;

/// What a settlement does with the status.
// Built and consumed at once, never stored.
#[allow(clippy::large_enum_variant)]
pub(super) enum Verdict<'p> {
    /// Write no status.
    Untouched(Requeue),
    /// Merge this row into the observed conditions.
    Row(Row<'p>),
}

/// One row: what to do with each owned condition (in the order new ones are appended),
/// with the addresses (when this reconcile owns them) and the requeue.
pub(super) struct Row<'p> {
    pub accepted: Change,
    pub programmed: Change,
    pub applied: Change,
    pub degraded: Change,
    /// `status.addresses`, when this reconcile owns them.
    pub addresses: Option<&'p [GatewayAddress]>,
    /// Whether this reconcile owns `status.listeners` (the Gateway is ours).
    pub listeners: bool,
    /// When to look again, `resync` already applied.
    pub requeue: Requeue,
    /// The requeue is the resync of a Gateway with nothing left to do, not a retry.
    pub resync: bool,
}

impl Planned<'_> {
    /// The row of `situation`; `msg` is the failed write's message (empty otherwise).
    pub(super) fn verdict<'p>(&'p self, situation: Situation<'p, '_>, msg: &str) -> Verdict<'p> {
        match situation {
            // Being deleted.
            Situation::Deleted => Verdict::Untouched(Requeue::AwaitChange),
            // An owned condition newer than the snapshot.
            Situation::Stale => Verdict::Untouched(Requeue::Immediately),
            // Not ours. Undo our `Accepted=True` (matched by the message suffix other
            // controllers also match), drop the custom conditions, leave `Programmed` alone.
            Situation::NotOurs => {
                let ours =
                    find(&self.snapshot.gateway.status.conditions, ACCEPTED).is_some_and(|c| {
                        c.status == status::TRUE
                            && c.message.ends_with(self.settings.controller_name.as_str())
                    });
                if !ours {
                    return Verdict::Untouched(Requeue::AwaitChange);
                }
                Verdict::Row(Row {
                    accepted: set(status::UNKNOWN, reason::PENDING, WAITING_FOR_CONTROLLER),
                    programmed: Change::Keep,
                    applied: Change::Remove,
                    degraded: Change::Remove,
                    addresses: None,
                    listeners: false,
                    requeue: Requeue::AwaitChange,
                    resync: false,
                })
            }
            // Invalid parameters.
            Situation::Invalid(invalid) => {
                let message = invalid.to_string();
                Verdict::Row(Row {
                    accepted: set(status::FALSE, invalid.reason(), message.clone()),
                    programmed: set(
                        status::FALSE,
                        reason::INVALID,
                        format!("Gateway not accepted: {message}"),
                    ),
                    applied: set(status::FALSE, invalid.reason(), message),
                    degraded: Change::Remove,
                    addresses: None,
                    listeners: true,
                    // A template failure may be fixed by editing the controller's file.
                    requeue: if invalid.is_template() {
                        Requeue::After(self.backoff(None))
                    } else {
                        self.or_resync(Requeue::AwaitChange)
                    },
                    resync: !invalid.is_template() && self.settings.resync.is_some(),
                })
            }
            Situation::Accepted(a, lb) => Verdict::Row(self.accepted_row(a, lb, msg)),
        }
    }

    /// The condition table, row by row, for an accepted Gateway.
    fn accepted_row<'p>(&self, a: &'p Accepted<'_>, lb: LbDeployment<'_>, msg: &str) -> Row<'p> {
        let m = a.wanted;
        let dep = &a.deployment;
        let cfg = self.configuration_name(a);
        let carried = a.observed.as_ref().and_then(|o| o.carried);
        let accepted = set(
            status::TRUE,
            reason::ACCEPTED,
            format!("Gateway accepted by {}", self.settings.controller_name),
        );
        let not_applied = |what: String| self.not_applied(a, &cfg, what);
        let stall = a.observed.as_ref().and_then(|o| o.rollout.stalled.as_ref());
        let stalled = |stall: Option<&Stall>| match stall {
            Some(s) => set(
                status::TRUE,
                reason::ROLLOUT_STALLED,
                format!(
                    "rollout of Deployment {dep} stalled since {}: {}",
                    s.since, s.message
                ),
            ),
            None => Change::Remove,
        };
        let pending = |message: String| set(status::FALSE, reason::PENDING, message);
        let degraded_true = find(
            &self.snapshot.gateway.status.conditions,
            &self.types.degraded,
        )
        .is_some_and(|c| c.status == status::TRUE);
        // The Programmed of an update that did not go through: the old Deployment serves.
        let old_programmed = || {
            self.programmed(
                carried,
                a.observed.as_ref().is_some_and(|o| o.carries(m)),
                m,
                a.observed.as_ref().is_none_or(|o| !o.rollout.complete),
            )
        };
        let row = |programmed, applied, degraded, requeue| Row {
            accepted,
            programmed,
            applied,
            degraded,
            addresses: Some(&a.addresses),
            listeners: true,
            requeue: self.or_resync(requeue),
            resync: requeue == Requeue::AwaitChange && self.settings.resync.is_some(),
        };

        match lb {
            // Row "Create or Update Applied, or action None", with the stalled-rollout row's
            // Degraded.
            LbDeployment::AsDesired(write) => {
                let rollout = |o: &'p Observed| (!o.rollout.complete, o.rollout.stalled.as_ref());
                // Pods are initializing after a create or an update that starts a rollout;
                // a write renders the current generation and uid.
                let (initializing, stall, carried_after, carries_current) =
                    match (write, &a.observed) {
                        (WriteKind::Create, _) => (true, None, Some(m), true),
                        (WriteKind::Update, Some(o)) if !o.spec_changes => {
                            let (initializing, stall) = rollout(o);
                            (initializing, stall, Some(m), true)
                        }
                        (WriteKind::Update, _) => (true, None, Some(m), true),
                        (WriteKind::None, Some(o)) => {
                            let (initializing, stall) = rollout(o);
                            (initializing, stall, carried, o.carries(m))
                        }
                        (WriteKind::None, None) => (true, None, carried, false),
                    };
                if !carries_current {
                    // Unreachable while the generation annotation is compared as drift;
                    // should it not be, the status still tells the truth, and the look
                    // again is slow.
                    return row(
                        self.programmed(carried_after, false, m, initializing),
                        pending(not_applied(
                            "the Deployment does not carry it yet".to_owned(),
                        )),
                        if degraded_true {
                            Change::Refresh
                        } else {
                            stalled(stall)
                        },
                        Requeue::After(self.backoff(None)),
                    );
                }
                row(
                    self.programmed(carried_after, true, m, initializing),
                    set(
                        status::TRUE,
                        reason::APPLIED,
                        format!(
                            "GatewayConfiguration {cfg} generation {m} is applied to Deployment {dep}"
                        ),
                    ),
                    stalled(stall),
                    Requeue::AwaitChange,
                )
            }
            LbDeployment::CreateFailed(class) => {
                let not_created =
                    || pending(format!("LB Deployment {dep} is not created yet: {msg}"));
                match class {
                    // Row "Create: Conflict, AlreadyExists".
                    FailureClass::Conflict | FailureClass::AlreadyExists => row(
                        not_created(),
                        pending(not_applied(format!("create conflicted, retrying: {msg}"))),
                        Change::Remove,
                        Requeue::Immediately,
                    ),
                    // Row "Create: Transient, NotFound". A 404 on create (the namespace is
                    // going away) is not fixed by retrying at once: it backs off like a
                    // transient failure, with its own message.
                    FailureClass::Transient => row(
                        not_created(),
                        set(
                            status::FALSE,
                            reason::APPLY_FAILED,
                            not_applied(format!("create failed: {msg}")),
                        ),
                        Change::Remove,
                        Requeue::After(self.backoff(None)),
                    ),
                    FailureClass::NotFound => row(
                        not_created(),
                        set(
                            status::FALSE,
                            reason::APPLY_FAILED,
                            not_applied(format!("create failed (not found): {msg}")),
                        ),
                        Change::Remove,
                        Requeue::After(self.backoff(None)),
                    ),
                    // Row "Create: Rejected".
                    FailureClass::Rejected => row(
                        set(
                            status::FALSE,
                            reason::INVALID,
                            format!("failed to create LB deployment: {msg}"),
                        ),
                        set(
                            status::FALSE,
                            reason::APPLY_REJECTED,
                            not_applied(format!("create rejected: {msg}")),
                        ),
                        Change::Remove,
                        Requeue::After(self.rejection_backoff()),
                    ),
                }
            }
            LbDeployment::UpdateFailed(class) => {
                // Degraded never flaps while the gap lasts: once True it stays True (its
                // lastTransitionTime with it), the reason following the current cause.
                let degraded_due = self.degraded_due();
                let due = degraded_due.is_some_and(|due| self.now >= due);
                let since = || self.since_text();
                let failing = || {
                    set(
                        status::TRUE,
                        reason::APPLY_FAILING,
                        format!(
                            "GatewayConfiguration {cfg} generation {m} not applied since {}: updates of Deployment {dep} keep failing: {msg}",
                            since()
                        ),
                    )
                };
                match class {
                    // Row "Update: Conflict, AlreadyExists" (an Update answered
                    // AlreadyExists is an Update Conflict).
                    FailureClass::Conflict | FailureClass::AlreadyExists => row(
                        old_programmed(),
                        pending(not_applied(format!("update conflicted, retrying: {msg}"))),
                        if degraded_true {
                            // Nothing new is known about the cause: status, reason, message
                            // stay.
                            Change::Refresh
                        } else if due {
                            failing()
                        } else {
                            stalled(stall)
                        },
                        Requeue::Immediately,
                    ),
                    // Row "Update: NotFound".
                    FailureClass::NotFound => row(
                        pending(format!(
                            "LB Deployment {dep} vanished during the update; recreating it"
                        )),
                        pending(not_applied(format!(
                            "the Deployment vanished during the update: {msg}"
                        ))),
                        Change::Remove,
                        Requeue::Immediately,
                    ),
                    // Row "Update: Transient".
                    FailureClass::Transient => row(
                        old_programmed(),
                        set(
                            status::FALSE,
                            reason::APPLY_FAILED,
                            not_applied(format!("update failed: {msg}")),
                        ),
                        if due || degraded_true {
                            failing()
                        } else {
                            stalled(stall)
                        },
                        Requeue::After(self.backoff(degraded_due)),
                    ),
                    // Row "Update: Rejected".
                    FailureClass::Rejected => row(
                        old_programmed(),
                        set(
                            status::FALSE,
                            reason::APPLY_REJECTED,
                            not_applied(format!("update rejected: {msg}")),
                        ),
                        set(
                            status::TRUE,
                            reason::APPLY_REJECTED,
                            format!(
                                "GatewayConfiguration {cfg} generation {m} not applied since {}: the API rejected the update of Deployment {dep}: {msg}",
                                since()
                            ),
                        ),
                        Requeue::After(self.rejection_backoff()),
                    ),
                }
            }
            // The API server changes the generation or uid annotation on write.
            // Nothing more is written until the desired object or the Deployment changes
            // (the write record holds the drift back).
            LbDeployment::IdentityChanged {
                write,
                key,
                carried,
            } => {
                let initializing = write != WriteKind::None
                    || a.observed.as_ref().is_none_or(|o| !o.rollout.complete);
                row(
                    self.programmed(carried, false, m, initializing),
                    // Named from what the server stored, so that the write's settlement
                    // and the reconciles after it say the same.
                    set(
                        status::FALSE,
                        reason::APPLY_REJECTED,
                        format!(
                            "GatewayConfiguration {cfg} generation {m} is not applied to Deployment {dep} (it carries generation {}): the API server changes the annotation {key} on write",
                            carried.map_or_else(|| "unknown".to_owned(), |n| n.to_string())
                        ),
                    ),
                    set(
                        status::TRUE,
                        reason::APPLY_REJECTED,
                        format!(
                            "GatewayConfiguration {cfg} generation {m} not applied since {}: the API server changes the annotation {key} on write of Deployment {dep}",
                            self.since_text()
                        ),
                    ),
                    Requeue::AwaitChange,
                )
            }
            // Row "name collision".
            LbDeployment::NameCollision(owner) => {
                let name = dep.rsplit('/').next().unwrap_or(dep);
                let gw = self.snapshot.gateway.metadata.name.as_deref().unwrap_or("");
                row(
                    set(
                        status::FALSE,
                        reason::INVALID,
                        format!(
                            "deployment {name} exists but is not owned by gateway {gw} (owned by {owner}, cannot proceed due to name collision)"
                        ),
                    ),
                    set(
                        status::FALSE,
                        reason::APPLY_REJECTED,
                        format!(
                            "GatewayConfiguration {cfg} generation {m} is not applied: Deployment {dep} is owned by {owner}, not by this Gateway"
                        ),
                    ),
                    Change::Remove,
                    Requeue::AwaitChange,
                )
            }
        }
    }

    /// `namespace/name` of the GatewayConfiguration, as the messages name it.
    fn configuration_name(&self, a: &Accepted<'_>) -> String {
        let meta = &a.configuration.metadata;
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or(""),
            meta.name.as_deref().unwrap_or("")
        )
    }

    /// A `ConfigurationApplied=False` message: what is not applied where, and why.
    fn not_applied(&self, a: &Accepted<'_>, cfg: &str, what: String) -> String {
        let m = a.wanted;
        let dep = &a.deployment;
        match &a.observed {
            Some(o) => {
                let carried = o
                    .carried
                    .map_or_else(|| "unknown".to_owned(), |n| n.to_string());
                format!(
                    "GatewayConfiguration {cfg} generation {m} is not applied to Deployment {dep} (it carries generation {carried}): {what}"
                )
            }
            None => format!(
                "GatewayConfiguration {cfg} generation {m} is not applied: Deployment {dep} does not exist: {what}"
            ),
        }
    }

    /// `Programmed=True`, naming the generation the Deployment carries after this reconcile
    /// (`current`: of the current GatewayConfiguration, and the wanted one).
    fn programmed(
        &self,
        carried: Option<i64>,
        current: bool,
        wanted: i64,
        initializing: bool,
    ) -> Change {
        let mut message = String::from("LB Deployment reconciled");
        if self.settings.generation_in_programmed_message {
            match carried {
                Some(n) => {
                    message.push_str(&format!(" with GatewayConfiguration generation {n}"));
                    if !current {
                        message.push_str(&format!("; generation {wanted} not applied yet"));
                    }
                }
                None => message.push_str(&format!(
                    " with GatewayConfiguration generation unknown; generation {wanted} not applied yet"
                )),
            }
        }
        if initializing {
            message.push_str("; Pods may still be initializing");
        }
        set(status::TRUE, reason::PROGRAMMED, message)
    }
}

/// `Change::Set` of a wanted condition.
fn set(
    status: &'static str,
    reason: &'static str,
    message: impl Into<std::borrow::Cow<'static, str>>,
) -> Change {
    Change::Set(Wanted::new(status, reason, message))
}
