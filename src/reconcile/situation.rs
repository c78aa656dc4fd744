//! What one reconcile found and did, classified once: the plan's decision × the write ×
//! the class of its outcome. The table maps each situation to its row.

use super::plan::{Accepted, Decision};
use super::write::WriteKind;
use crate::outcome::{FailureClass, WriteOutcome};
use crate::validate::Invalid;

/// The situation after the write. Every match over it, over [`LbDeployment`] and over the
/// failure classes they carry is exhaustive: a new situation or failure class makes the
/// compiler point at the table.
#[derive(Debug, Clone, Copy)]
pub(super) enum Situation<'p, 'a> {
    /// The Gateway is being deleted: do nothing.
    Deleted,
    /// An owned condition is newer than the snapshot: write nothing, look again at once.
    Stale,
    /// The GatewayClass is missing or another controller's.
    NotOurs,
    /// The parameters (or the template) are invalid.
    Invalid(&'p Invalid),
    /// Accepted: the LB Deployment is managed, and this is what happened to it.
    Accepted(&'p Accepted<'a>, LbDeployment<'p>),
}

/// What happened to the LB Deployment of an accepted Gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LbDeployment<'p> {
    /// Its name is taken by an object this Gateway does not control (`KIND/NAME` of that
    /// object's controller, or `unknown`): nothing was written.
    NameCollision(&'p str),
    /// It is as desired after this reconcile: created, updated, or nothing to write
    /// ([`WriteKind::None`]).
    AsDesired(WriteKind),
    /// It was written (or a write record holds its drift back), but the API server changes
    /// the generation or uid annotation (this key) on write: it cannot say what it carries.
    /// `carried` is the generation it names after this reconcile, if any.
    IdentityChanged {
        /// What was written ([`WriteKind::None`]: nothing, the record holds the drift).
        write: WriteKind,
        /// The annotation key the server changes.
        key: &'p str,
        /// The generation the Deployment's annotation names after this reconcile.
        carried: Option<i64>,
    },
    /// Creating it failed.
    CreateFailed(FailureClass),
    /// Updating it failed.
    UpdateFailed(FailureClass),
}

impl<'p, 'a> Situation<'p, 'a> {
    /// Classifies a decision and, when a write was planned, the write and its outcome;
    /// `identity` is the annotation the API server changed in what it stored (with the
    /// generation the stored or observed object carries), when it changed one.
    pub(super) fn classify(
        decision: &'p Decision<'a>,
        written: Option<(WriteKind, &WriteOutcome)>,
        identity: Option<(&'p str, Option<i64>)>,
    ) -> Situation<'p, 'a> {
        match decision {
            Decision::Deleted => Situation::Deleted,
            Decision::Stale => Situation::Stale,
            Decision::NotOurs => Situation::NotOurs,
            Decision::Invalid(invalid) => Situation::Invalid(invalid),
            Decision::Accepted(a) => {
                let collision = a.observed.as_ref().and_then(|o| o.collision.as_deref());
                let lb = match (collision, written) {
                    // A collision plans no write.
                    (Some(owner), _) => LbDeployment::NameCollision(owner),
                    (None, None) => LbDeployment::AsDesired(WriteKind::None),
                    (None, Some((kind, outcome))) => match (kind, outcome.class()) {
                        // No write was made: nothing failed.
                        (WriteKind::None, _) => LbDeployment::AsDesired(WriteKind::None),
                        (kind, None) => LbDeployment::AsDesired(kind),
                        (WriteKind::Create, Some(class)) => LbDeployment::CreateFailed(class),
                        (WriteKind::Update, Some(class)) => LbDeployment::UpdateFailed(class),
                    },
                };
                let lb = match (lb, identity) {
                    (LbDeployment::AsDesired(write), Some((key, carried))) => {
                        LbDeployment::IdentityChanged {
                            write,
                            key,
                            carried,
                        }
                    }
                    (lb, _) => lb,
                };
                Situation::Accepted(a, lb)
            }
        }
    }
}
