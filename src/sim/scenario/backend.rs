//! What a scenario needs from the cluster it runs on: the seam between the scenario runner
//! and a backend, the simulated [`Cluster`] here, a real API server elsewhere (the kube crate's end-to-end suite).
//!
//! The runner holds the virtual clock and hands it to every operation as `now`; a backend
//! keeps no clock of its own that the scenario could see. An operation that fails is a step
//! that could not run (a failure of the scenario, the run goes on); one that the backend
//! cannot reproduce ([`StepError::Skip`]) ends the run, and the report says the scenario
//! was skipped and why: never a silent pass.

use std::fmt;

use jiff::Timestamp;
use serde_json::Value;

use super::StaleReads;
use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, ClusterError, Kind, Objects, ReconcileReport, RolloutState};
use crate::wire::Deployment;

/// Why a backend did not do an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepError<E> {
    /// The operation failed: the step fails, the run goes on.
    Failed(E),
    /// The backend cannot reproduce this step (e.g. a write failure a real server cannot be
    /// made to give): the whole scenario is skipped, for this reason.
    Skip(String),
    /// The backend does not do this operation at all (the operation named, e.g. `fail
    /// writes`): what [`Backend`]'s default methods answer. The scenario is skipped, as for
    /// [`StepError::Skip`]; a kit run reports it as a `backend` violation naming the op,
    /// so a schedule leaves out what the loop cannot do.
    Unsupported(&'static str),
}

impl<E: fmt::Display> fmt::Display for StepError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Failed(e) => e.fmt(f),
            StepError::Skip(why) => write!(f, "skip this scenario: {why}"),
            StepError::Unsupported(operation) => {
                write!(f, "skip this scenario: this backend cannot {operation}")
            }
        }
    }
}

impl<E> From<E> for StepError<E> {
    fn from(error: E) -> Self {
        StepError::Failed(error)
    }
}

/// A backend whose errors are text takes a message with `?`
/// (`.ok_or("no Gateway")?`).
impl From<&str> for StepError<String> {
    fn from(error: &str) -> Self {
        StepError::Failed(error.to_owned())
    }
}

/// Writes a backend made, for the report's last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteCounts {
    /// Deployment write requests sent (create or update, failed or not).
    pub deployment_writes: u64,
    /// Gateway status writes.
    pub status_writes: u64,
}

/// A cluster a scenario can run on. Every operation is one scenario step (or the setup
/// before the first); `now` is the scenario's virtual clock.
///
/// Five methods are required: [`create`](Backend::create), [`reconcile`](Backend::reconcile),
/// [`patch`](Backend::patch), [`read`](Backend::read) and
/// [`write_counts`](Backend::write_counts). The others are what a store may not be able to
/// do (delete, play the Deployment controller, inject write failures or mutating admission,
/// restart the controller, store an unreadable object, serve reads from an older revision,
/// recreate the Gateway): by default they answer
/// [`StepError::Unsupported`], and a scenario that needs one is reported skipped, never
/// passed. A wrapper of a backend forwards every method, the defaulted ones too, or it hides
/// what its backend can do.
///
/// An embedder that has no store of its own takes the kit's in-memory one
/// (`testing::Store`, feature `testing`), which does every operation.
///
/// ```
/// use gateway_reconcile::jiff::Timestamp;
/// use gateway_reconcile::sim::scenario::{Backend, StepError, WriteCounts};
/// use gateway_reconcile::sim::cluster::{Kind, Objects, ReconcileReport};
/// use gateway_reconcile::{Settings, WriteOutcome};
/// use serde_json::Value;
///
/// /// A store that can be read and patched, nothing else.
/// struct Minimal;
///
/// impl Backend for Minimal {
///     type Error = String;
///     fn create(&mut self, _: &Settings, _: Objects, _: Timestamp) -> Result<(), StepError<String>> {
///         Ok(())
///     }
///     fn reconcile(&mut self, _: Timestamp) -> Result<ReconcileReport, StepError<String>> {
///         Err("no controller here".into())
///     }
///     fn patch(&mut self, _: Kind, _: &Value, _: Timestamp) -> Result<(), StepError<String>> {
///         Ok(())
///     }
///     fn read(&self, _: Kind) -> Result<Option<Value>, StepError<String>> {
///         Ok(None)
///     }
///     fn write_counts(&self) -> WriteCounts {
///         WriteCounts::default()
///     }
/// }
///
/// let failing = Minimal.fail_writes(1, &WriteOutcome::Applied);
/// assert_eq!(failing, Err(StepError::Unsupported("fail writes")));
/// ```
pub trait Backend {
    /// Why an operation failed.
    type Error: fmt::Display;

    /// Creates the scenario's objects (the file's `objects`) before the first step; the
    /// crate decides with `settings`.
    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>>;

    /// Runs one reconcile at `now` and reports what it did: the Deployment write asked for,
    /// its drift and outcome, the Gateway status and the Events.
    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<Self::Error>>;

    /// Applies an RFC 7386 merge patch to one object (creating it when absent).
    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>>;

    /// Deletes an object (marks the Gateway for deletion). By default the backend cannot
    /// ([`StepError::Unsupported`]).
    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<Self::Error>> {
        let _ = (kind, now);
        Err(StepError::Unsupported("delete"))
    }

    /// Makes the Deployment's status that of a rollout in `state` (the Deployment
    /// controller's part). By default the backend cannot ([`StepError::Unsupported`]).
    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (state, now);
        Err(StepError::Unsupported("roll out"))
    }

    /// Makes the next `count` Deployment writes fail with `outcome`, replacing failures
    /// still pending (`count` 0 stops them). By default the backend cannot inject failures
    /// ([`StepError::Unsupported`]).
    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (count, outcome);
        Err(StepError::Unsupported("fail writes"))
    }

    /// Makes mutating admission apply `patch` (an RFC 7386 merge patch) to every
    /// Deployment write that succeeds from now on; `None` stops it. By default the backend
    /// has no admission to make do it ([`StepError::Unsupported`]).
    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (patch, now);
        Err(StepError::Unsupported("mutate writes"))
    }

    /// Restarts the controller: it forgets what it held in memory (the write records and
    /// its scheduled requeue), the cluster stays. By default the backend cannot
    /// ([`StepError::Unsupported`]): only it knows where its loop keeps its memory (the
    /// kit's `testing::StoreLoop` drops its driver and schedule).
    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<Self::Error>> {
        let _ = now;
        Err(StepError::Unsupported("restart"))
    }

    /// Applies an RFC 7386 merge patch to one object (the GatewayConfiguration) without the
    /// type check, as a server whose CRD admits more stores it: the controller then reads
    /// it as unreadable. By default the backend cannot ([`StepError::Skip`]): a real server
    /// needs a CRD variant that admits the value.
    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (patch, now);
        Err(StepError::Skip(format!(
            "this backend cannot store an unreadable {kind}"
        )))
    }

    /// Remembers the objects the API server serves now under `name`, for
    /// [`stale_reads`](Backend::stale_reads). By default the backend cannot
    /// ([`StepError::Skip`]): a real server's watch cache cannot be held back on demand.
    fn snapshot(&mut self, name: &str, now: Timestamp) -> Result<(), StepError<Self::Error>> {
        let _ = (name, now);
        Err(StepError::Skip(
            "this backend cannot serve reads from an older revision".into(),
        ))
    }

    /// `Some(reads)`: the controller's reads (of `reads.kinds`, or all) are answered from
    /// the snapshot `reads.from` from now on, while writes go to the current objects and
    /// are checked there; `None`: the view catches up. By default the backend cannot
    /// ([`StepError::Skip`]).
    fn stale_reads(
        &mut self,
        reads: Option<&StaleReads>,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (reads, now);
        Err(StepError::Skip(
            "this backend cannot serve reads from an older revision".into(),
        ))
    }

    /// Deletes the object (the Gateway) for good and creates `object` in its place. By
    /// default the backend cannot ([`StepError::Unsupported`]).
    fn recreate(
        &mut self,
        kind: Kind,
        object: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>> {
        let _ = (kind, object, now);
        Err(StepError::Unsupported("recreate"))
    }

    /// The stored object, as JSON (`None`: it does not exist), for expectations.
    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<Self::Error>>;

    /// The writes made so far.
    fn write_counts(&self) -> WriteCounts;
}

impl Cluster {
    /// The stored object of `kind` as JSON (`None`: it does not exist).
    pub(crate) fn read_json(&self, kind: Kind) -> Result<Option<Value>, ClusterError> {
        Ok(match kind {
            Kind::Routes => {
                Some(
                    serde_json::to_value(self.routes()).map_err(|e| ClusterError::Malformed {
                        kind,
                        why: e.to_string(),
                    })?,
                )
            }
            // Held as a tree: read out as JSON (a copy, made only when a check asks).
            Kind::Deployment => self.deployment().map(Deployment::to_json),
            Kind::Template => Some(self.template().to_json()),
            _ => self.stored(kind).map(Value::from),
        })
    }

    /// The backend's clock is the scenario's: it only moves forward.
    pub(crate) fn catch_up(&mut self, now: Timestamp) {
        if now > self.now() {
            self.set_clock(now);
        }
    }
}

/// The simulated cluster. `create` replaces what it holds and keeps its server defaults.
impl Backend for Cluster {
    type Error = ClusterError;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        let defaults = self.server_defaults();
        *self = Cluster::new(settings.clone(), now, objects)?.with_server_defaults(defaults);
        Ok(())
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<ClusterError>> {
        self.catch_up(now);
        Ok(Cluster::reconcile(self)?)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        Ok(Cluster::patch(self, kind, patch)?)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        Ok(Cluster::delete(self, kind)?)
    }

    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        Ok(Cluster::rollout(self, state)?)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<ClusterError>> {
        Cluster::fail_writes(self, count, outcome.clone());
        Ok(())
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        _: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        Cluster::mutate_writes(self, patch.cloned());
        Ok(())
    }

    fn restart(&mut self, _: Timestamp) -> Result<(), StepError<ClusterError>> {
        Cluster::restart(self);
        Ok(())
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        Ok(Cluster::patch_unchecked(self, kind, patch)?)
    }

    fn snapshot(&mut self, name: &str, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        Cluster::snapshot(self, name);
        Ok(())
    }

    fn stale_reads(
        &mut self,
        reads: Option<&StaleReads>,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        match reads {
            Some(reads) => Ok(Cluster::stale_reads(
                self,
                &reads.from,
                reads.kinds.as_deref(),
            )?),
            None => {
                Cluster::catch_up_reads(self);
                Ok(())
            }
        }
    }

    fn recreate(
        &mut self,
        kind: Kind,
        object: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.catch_up(now);
        match kind {
            Kind::Gateway => Ok(Cluster::recreate_gateway(self, object.into())?),
            _ => Err(StepError::Unsupported("recreate")),
        }
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
        Ok(self.read_json(kind)?)
    }

    fn write_counts(&self) -> WriteCounts {
        WriteCounts {
            deployment_writes: self.deployment_writes(),
            status_writes: self.status_writes(),
        }
    }
}

/// A backend lent to the runner, so that the caller can look at it after the run.
impl<B: Backend + ?Sized> Backend for &mut B {
    type Error = B::Error;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).create(settings, objects, now)
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<B::Error>> {
        (**self).reconcile(now)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).patch(kind, patch, now)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<B::Error>> {
        (**self).delete(kind, now)
    }

    fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Result<(), StepError<B::Error>> {
        (**self).rollout(state, now)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<B::Error>> {
        (**self).fail_writes(count, outcome)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).mutate_writes(patch, now)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<B::Error>> {
        (**self).restart(now)
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).unreadable(kind, patch, now)
    }

    fn snapshot(&mut self, name: &str, now: Timestamp) -> Result<(), StepError<B::Error>> {
        (**self).snapshot(name, now)
    }

    fn stale_reads(
        &mut self,
        reads: Option<&StaleReads>,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).stale_reads(reads, now)
    }

    fn recreate(
        &mut self,
        kind: Kind,
        object: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<B::Error>> {
        (**self).recreate(kind, object, now)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<B::Error>> {
        (**self).read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        (**self).write_counts()
    }
}
