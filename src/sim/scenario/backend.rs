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

use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, ClusterError, Kind, Objects, ReconcileRecord, RolloutState};
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
}

impl<E: fmt::Display> fmt::Display for StepError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Failed(e) => e.fmt(f),
            StepError::Skip(why) => write!(f, "skip this scenario: {why}"),
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
    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<Self::Error>>;

    /// Applies an RFC 7386 merge patch to one object (creating it when absent).
    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>>;

    /// Deletes an object (marks the Gateway for deletion).
    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<Self::Error>>;

    /// Makes the Deployment's status that of a rollout in `state`.
    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>>;

    /// Makes the next `count` Deployment writes fail with `outcome`, replacing failures
    /// still pending.
    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<Self::Error>>;

    /// Makes mutating admission apply `patch` (an RFC 7386 merge patch) to every
    /// Deployment write that succeeds from now on; `None` stops it. No default: a backend
    /// (or a wrapper of one) that cannot says so with [`StepError::Skip`].
    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<Self::Error>>;

    /// Restarts the controller: it forgets what it held in memory (the write records),
    /// the cluster stays.
    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<Self::Error>>;

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

    /// The stored object, as JSON (`None`: it does not exist), for expectations.
    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<Self::Error>>;

    /// The writes made so far.
    fn write_counts(&self) -> WriteCounts;
}

impl Cluster {
    /// The backend's clock is the scenario's: it only moves forward.
    fn catch_up(&mut self, now: Timestamp) {
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

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<ClusterError>> {
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

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
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
            _ => self.stored(kind).cloned(),
        })
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

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileRecord, StepError<B::Error>> {
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

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<B::Error>> {
        (**self).read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        (**self).write_counts()
    }
}
