//! The core's requeue hint as kube-runtime's [`controller::Action`], with converged
//! Gateways' resyncs spread out.

use std::time::Duration;

use gateway_reconcile::Requeue;
use kube::runtime::controller;

/// The reconcile's [`controller::Action`], a resync spread out: a requeue after exactly
/// `resync` (the core's "nothing to do, look again after `resync`") gets `fraction` (in
/// `[0, 1)`) of `JITTER` (10 %) more. Gateways that converged
/// together (every one, after a start or a restart) would otherwise all resync in the same
/// instant, every period. Every other requeue is the core's own, kept exact (a backoff is
/// capped at the moment `Degraded` is due).
pub fn spread_resync(
    requeue: Requeue,
    resync: Option<Duration>,
    fraction: f64,
) -> controller::Action {
    match (after(requeue), resync) {
        (Some(wait), Some(resync)) if wait == resync && !wait.is_zero() => {
            controller::Action::requeue(crate::backoff::jittered(wait, fraction))
        }
        _ => action(requeue),
    }
}

/// The core's requeue hint as kube-runtime's [`controller::Action`].
pub fn action(requeue: Requeue) -> controller::Action {
    match requeue {
        Requeue::Immediately => controller::Action::requeue(Duration::ZERO),
        Requeue::After(after) => controller::Action::requeue(after),
        Requeue::AwaitChange => controller::Action::await_change(),
    }
}

/// The core's requeue hint as a delay: `Some(ZERO)` at once, `None` on the next change.
pub fn after(requeue: Requeue) -> Option<Duration> {
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
            action(Requeue::Immediately),
            controller::Action::requeue(Duration::ZERO)
        );
        assert_eq!(
            action(Requeue::After(Duration::from_secs(7))),
            controller::Action::requeue(Duration::from_secs(7))
        );
        assert_eq!(
            action(Requeue::AwaitChange),
            controller::Action::await_change()
        );
        assert_eq!(after(Requeue::Immediately), Some(Duration::ZERO));
        assert_eq!(
            after(Requeue::After(Duration::from_secs(300))),
            Some(Duration::from_secs(300))
        );
        assert_eq!(after(Requeue::AwaitChange), None);
    }

    #[test]
    fn only_a_resync_is_spread() {
        let resync = Some(Duration::from_secs(600));
        let spread = spread_resync(Requeue::After(Duration::from_secs(600)), resync, 0.5);
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
            assert_eq!(spread_resync(requeue, resync, 0.5), action(requeue));
        }
        // No resync configured: nothing is one.
        let after = Requeue::After(Duration::from_secs(600));
        assert_eq!(spread_resync(after, None, 0.5), action(after));
    }
}
