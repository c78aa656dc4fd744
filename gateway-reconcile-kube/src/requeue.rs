//! The core's requeue hint as kube-runtime's [`controller::Action`], with converged
//! Gateways' resyncs spread out.

use std::time::Duration;

use gateway_reconcile::Requeue;
use kube::runtime::controller;

/// The reconcile's [`controller::Action`], a resync spread out: when the core says the
/// requeue is a resync (`resync`: [`Reconciled::resync`](gateway_reconcile::reconcile::Reconciled::resync),
/// the settings' period in place of "wait for a change"), its wait gets `fraction` (in
/// `[0, 1)`) of `JITTER` (10 %) more. Gateways that converged together (every one, after a
/// start or a restart) would otherwise all resync in the same instant, every period. Every
/// other requeue is the core's own, kept exact (a backoff is capped at the moment
/// `Degraded` is due, and a rejection's backoff at the resync period, which a comparison
/// of durations could not tell from a resync).
pub fn spread_resync(requeue: Requeue, resync: bool, fraction: f64) -> controller::Action {
    match after(requeue) {
        Some(wait) if resync && !wait.is_zero() => {
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
        let ten_minutes = Requeue::After(Duration::from_secs(600));
        assert_eq!(
            spread_resync(ten_minutes, true, 0.5),
            controller::Action::requeue(Duration::from_secs(630))
        );
        // The same wait as a rejection's backoff (capped at the resync period) is exact.
        assert_eq!(spread_resync(ten_minutes, false, 0.5), action(ten_minutes));
        // A backoff, an immediate requeue and a wait for a change stay the core's.
        for requeue in [
            Requeue::After(Duration::from_secs(30)),
            Requeue::Immediately,
            Requeue::AwaitChange,
        ] {
            assert_eq!(spread_resync(requeue, false, 0.5), action(requeue));
        }
        assert_eq!(
            spread_resync(Requeue::Immediately, true, 0.5),
            action(Requeue::Immediately)
        );
    }
}
