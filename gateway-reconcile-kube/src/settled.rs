//! What a reconcile ends with once the core settled it ([`Settled`]), and the core's
//! requeue hint as kube-runtime's [`controller::Action`].

use std::time::Duration;

use gateway_reconcile::{Requeue, Settlement, WriteRecord, events::Event};
use kube::runtime::controller;
use serde_json::Value;

/// What a reconcile ends with, once the write (if any) has been made.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The merge patch for `gateways/status`, or `None` when the status is already right.
    /// It carries the cached Gateway's `resourceVersion` (the core puts it there): the patch
    /// only applies to that object (409 Conflict otherwise), so a condition another client
    /// wrote since is never overwritten.
    pub status_patch: Option<Value>,
    /// When to reconcile again.
    pub requeue: controller::Action,
    /// The same as a delay (`Some(ZERO)`: at once, `None`: on the next change), which a
    /// failed status write keeps as the least wait before the retry.
    pub requeue_after: Option<Duration>,
    /// The Events to record once the status write succeeded.
    pub events: Vec<Event>,
    /// The record of a write that went through, to keep for the Gateway's next plan.
    pub write_record: Option<WriteRecord>,
}

impl From<Settlement> for Settled {
    fn from(settlement: Settlement) -> Self {
        Settled {
            status_patch: settlement.status_patch().map(|patch| patch.into_body()),
            requeue: requeue(settlement.requeue),
            requeue_after: requeue_after(settlement.requeue),
            events: settlement.events,
            write_record: settlement.write_record,
        }
    }
}

/// The reconcile's [`controller::Action`], a resync spread out: a requeue after exactly
/// `resync` (the core's "nothing to do, look again after `resync`") gets `fraction` (in
/// `[0, 1)`) of [`JITTER`](crate::backoff::JITTER) (10 %) more. Gateways that converged
/// together (every one, after a start or a restart) would otherwise all resync in the same
/// instant, every period. Every other requeue is the core's own, kept exact (a backoff is
/// capped at the moment `Degraded` is due).
pub fn spread_resync(
    settled: &Settled,
    resync: Option<Duration>,
    fraction: f64,
) -> controller::Action {
    match (settled.requeue_after, resync) {
        (Some(after), Some(resync)) if after == resync && !after.is_zero() => {
            controller::Action::requeue(crate::backoff::jittered(after, fraction))
        }
        _ => settled.requeue.clone(),
    }
}

/// The core's requeue hint as kube-runtime's [`controller::Action`].
pub fn requeue(requeue: Requeue) -> controller::Action {
    match requeue {
        Requeue::Immediately => controller::Action::requeue(Duration::ZERO),
        Requeue::After(after) => controller::Action::requeue(after),
        Requeue::AwaitChange => controller::Action::await_change(),
    }
}

/// The core's requeue hint as a delay: `Some(ZERO)` at once, `None` on the next change.
pub fn requeue_after(requeue: Requeue) -> Option<Duration> {
    match requeue {
        Requeue::Immediately => Some(Duration::ZERO),
        Requeue::After(after) => Some(after),
        Requeue::AwaitChange => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requeue_hints_map_to_actions() {
        assert_eq!(
            requeue(Requeue::Immediately),
            controller::Action::requeue(Duration::ZERO)
        );
        assert_eq!(
            requeue(Requeue::After(Duration::from_secs(7))),
            controller::Action::requeue(Duration::from_secs(7))
        );
        assert_eq!(
            requeue(Requeue::AwaitChange),
            controller::Action::await_change()
        );
        assert_eq!(requeue_after(Requeue::Immediately), Some(Duration::ZERO));
        assert_eq!(
            requeue_after(Requeue::After(Duration::from_secs(300))),
            Some(Duration::from_secs(300))
        );
        assert_eq!(requeue_after(Requeue::AwaitChange), None);
    }

    #[test]
    fn only_a_resync_is_spread() {
        let settled = |requeue| Settled::from(Settlement::new(None, requeue));
        let resync = Some(Duration::from_secs(600));
        let spread = spread_resync(
            &settled(Requeue::After(Duration::from_secs(600))),
            resync,
            0.5,
        );
        assert_eq!(
            spread,
            controller::Action::requeue(Duration::from_secs(630))
        );
        // A backoff, an immediate requeue and a wait for a change stay the core's.
        for requeue in [
            Requeue::After(Duration::from_secs(30)),
            Requeue::Immediately,
            Requeue::AwaitChange,
        ] {
            assert_eq!(
                spread_resync(&settled(requeue), resync, 0.5),
                settled(requeue).requeue
            );
        }
        // No resync configured: nothing is one.
        let after = settled(Requeue::After(Duration::from_secs(600)));
        assert_eq!(spread_resync(&after, None, 0.5), after.requeue);
    }
}
