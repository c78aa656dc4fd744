//! What the kit runs a schedule on: [`ControllerLoop`], the scenario runner's
//! [`Backend`] (the objects, the faults, the embedder's reconcile) plus what the kit observes
//! of the embedder's loop between reconciles.

use jiff::Timestamp;

use crate::reconcile::{ObjectKey, WriteRecord};
use crate::settings::Settings;
use crate::sim::cluster::Cluster;
use crate::sim::scenario::{Backend, StepError};

/// An embedder's controller loop on its own state, as the kit drives and checks it.
///
/// The cluster side is the scenario runner's [`Backend`]: the kit creates the objects with
/// [`create`](Backend::create), changes them with [`patch`](Backend::patch) and
/// [`delete`](Backend::delete), injects faults with [`fail_writes`](Backend::fail_writes) and
/// [`mutate_writes`](Backend::mutate_writes), plays the Deployment controller with
/// [`rollout`](Backend::rollout), restarts the controller with
/// [`restart`](Backend::restart), reads the objects back with [`read`](Backend::read), and
/// runs the embedder's own reconcile with [`reconcile`](Backend::reconcile) (the crate's
/// [`Driver`](crate::reconcile::Driver) over its port, or its controller), at the `now` it
/// hands over: the kit holds the clock.
///
/// The methods here are the loop's memory, which no object on the server shows:
///
/// - [`write_record`](ControllerLoop::write_record): the record the loop keeps of its last
///   successful Deployment write and hands to
///   [`Snapshot::with_write_record`](crate::Snapshot::with_write_record) (the kit plans with
///   it to tell drift left from the server's own change to that write);
/// - [`next_due`](ControllerLoop::next_due): when the loop will reconcile next with no
///   change to wait for, as it scheduled it from the last reconcile's
///   [`Requeue`](crate::Requeue).
///
/// The scheduling rule the kit checks (`requeue-honoured`): after a reconcile at `t` whose
/// requeue has a [`deadline`](crate::Requeue::deadline) `d` (`t` for `Immediately`, `t + d`
/// for `After(d)`), `next_due` is at or before `d`; `AwaitChange` asks nothing. A loop that
/// maps `After` to "wait for a change" fails it. An [`Op::Advance`](super::strategies::Op)
/// then runs every reconcile that falls due (at its due time) before the clock reaches its
/// end, each one checked.
pub trait ControllerLoop: Backend {
    /// The settings the loop plans with (those [`create`](Backend::create) was given).
    fn settings(&self) -> &Settings;

    /// The loop's clock when the kit starts (later, the kit hands the clock to every call).
    fn now(&self) -> Timestamp;

    /// The write record the loop holds for the Gateway (`None`: none, e.g. after a restart).
    fn write_record(&self) -> Option<WriteRecord>;

    /// When the loop reconciles the Gateway next with no change to wait for (`None`: it
    /// waits for a change).
    fn next_due(&self) -> Option<Timestamp>;

    /// Every Gateway's next reconcile with no change to wait for, by namespace and name, on
    /// a loop over several Gateways (each as [`next_due`](ControllerLoop::next_due) says of
    /// its target): an [`Op::Advance`](super::strategies::Op) runs them all as they fall
    /// due, moving the target to each ([`target`](ControllerLoop::target)). By default
    /// empty: the loop has one Gateway, and `next_due` says all.
    fn scheduled(&self) -> Vec<(ObjectKey, Timestamp)> {
        Vec::new()
    }

    /// The kit's clock moved to `now` with no call on the loop (at the end of an
    /// [`Op::Advance`](super::strategies::Op)): a loop whose store keeps a clock moves it
    /// there, so that the store and the run's checker keep one clock. By default nothing
    /// (the next call hands the loop its `now`).
    fn advance_to(&mut self, now: Timestamp) {
        let _ = now;
    }

    /// Makes the Gateway `namespace/name` the one the scenario operations, the write
    /// record and `next_due` are about ([`Op::Target`](super::strategies::Op::Target)). By
    /// default the loop has one Gateway and cannot ([`StepError::Unsupported`]); a
    /// [`StoreLoop`](super::StoreLoop) can.
    fn target(&mut self, namespace: &str, name: &str) -> Result<(), StepError<Self::Error>> {
        let _ = (namespace, name);
        Err(StepError::Unsupported("target another Gateway"))
    }
}

/// The simulated cluster runs the crate's own loop: its reconcile schedules the requeue's
/// deadline.
impl ControllerLoop for Cluster {
    fn settings(&self) -> &Settings {
        Cluster::settings(self)
    }

    fn now(&self) -> Timestamp {
        Cluster::now(self)
    }

    fn write_record(&self) -> Option<WriteRecord> {
        Cluster::write_record(self)
    }

    fn next_due(&self) -> Option<Timestamp> {
        Cluster::next_due(self)
    }
}

/// A loop lent to the kit, so that the caller can look at it after the run.
impl<L: ControllerLoop + ?Sized> ControllerLoop for &mut L {
    fn settings(&self) -> &Settings {
        (**self).settings()
    }

    fn now(&self) -> Timestamp {
        (**self).now()
    }

    fn write_record(&self) -> Option<WriteRecord> {
        (**self).write_record()
    }

    fn next_due(&self) -> Option<Timestamp> {
        (**self).next_due()
    }

    fn scheduled(&self) -> Vec<(ObjectKey, Timestamp)> {
        (**self).scheduled()
    }

    fn advance_to(&mut self, now: Timestamp) {
        (**self).advance_to(now);
    }

    fn target(&mut self, namespace: &str, name: &str) -> Result<(), StepError<Self::Error>> {
        (**self).target(namespace, name)
    }
}
