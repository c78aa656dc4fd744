//! The per-Gateway backoff: every "at once" requeue (the core's `Requeue::Immediately`, a
//! 409 on the status write, a cache that has not seen an own write yet) and every failed
//! reconcile waits here, so no Gateway can make the controller loop at round-trip speed.
//!
//! controller-runtime's default item limiter is the anchor: 5 ms doubling to 1000 s per
//! object, forgotten once the object reconciles cleanly. Jitter is added here, never in the
//! core (which stays deterministic): up to 10 % on top of the delay, as client-go's
//! `wait.Jitter(d, 0.1)` does, so Gateways that failed together do not retry together.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;
use std::time::Duration;

/// The first delay (controller-runtime's `5 * time.Millisecond`).
pub const BASE: Duration = Duration::from_millis(5);

/// The longest delay before jitter (controller-runtime's `1000 * time.Second`).
pub const MAX: Duration = Duration::from_secs(1000);

/// The largest jitter, as a fraction of the delay.
pub const JITTER: f64 = 0.1;

/// The delay after `failures` earlier failures in a row: `base * 2^failures`, at most `max`.
pub fn delay(base: Duration, max: Duration, failures: u32) -> Duration {
    let factor = 1u32.checked_shl(failures.min(31)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(max)
}

/// `delay` with `fraction` (in `[0, 1)`) of [`JITTER`] added.
pub fn jittered(delay: Duration, fraction: f64) -> Duration {
    delay + delay.mul_f64(JITTER * fraction.clamp(0.0, 1.0))
}

/// A number in `[0, 1)` from the standard library's randomly keyed hasher (seeded by the
/// operating system): good enough to spread retries, and no dependency.
pub fn random_fraction() -> f64 {
    let bits = std::collections::hash_map::RandomState::new().hash_one(std::time::Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait after a failed reconcile: the object's backoff, but never shorter than the
/// core's own requeue (a failing status write must not turn the core's 5-minute backoff
/// into a fast loop) nor than the server's `Retry-After`.
pub fn failed_wait(
    backoff: Duration,
    core: Option<Duration>,
    retry_after: Option<Duration>,
) -> Duration {
    backoff
        .max(core.unwrap_or_default())
        .max(retry_after.unwrap_or_default())
}

/// Failures in a row, by object.
#[derive(Debug)]
pub struct Backoff<K> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<K, u32>>,
}

impl<K: Hash + Eq + Clone> Default for Backoff<K> {
    fn default() -> Self {
        Backoff::new(BASE, MAX)
    }
}

impl<K: Hash + Eq + Clone> Backoff<K> {
    /// A backoff from `base` doubling to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// The wait before `key` is tried again (with jitter), counting one more failure.
    pub fn next(&self, key: &K) -> Duration {
        self.next_with(key, random_fraction())
    }

    /// [`Backoff::next`] with the jitter's `fraction` given.
    pub fn next_with(&self, key: &K, fraction: f64) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let count = failures.entry(key.clone()).or_insert(0);
        let wait = jittered(delay(self.base, self.max, *count), fraction);
        *count = count.saturating_add(1);
        wait
    }

    /// `key` reconciled cleanly: its next failure starts again from the base delay.
    pub fn reset(&self, key: &K) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// Failures in a row of `key`.
    pub fn failures(&self, key: &K) -> u32 {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
            .unwrap_or(0)
    }

    /// How many objects are backing off.
    pub fn len(&self) -> usize {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_5ms_to_1000s() {
        assert_eq!(delay(BASE, MAX, 0), Duration::from_millis(5));
        assert_eq!(delay(BASE, MAX, 1), Duration::from_millis(10));
        assert_eq!(delay(BASE, MAX, 10), Duration::from_millis(5120));
        // 5 ms * 2^17 = 655 s; 2^18 would be 1311 s: capped.
        assert_eq!(delay(BASE, MAX, 17), Duration::from_millis(655_360));
        assert_eq!(delay(BASE, MAX, 18), MAX);
        assert_eq!(delay(BASE, MAX, u32::MAX), MAX);
    }

    #[test]
    fn failures_grow_the_wait_and_a_success_resets_it() {
        let backoff = Backoff::<&str>::default();
        let waits: Vec<Duration> = (0..4).map(|_| backoff.next_with(&"a", 0.0)).collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40].map(Duration::from_millis).to_vec(),
            "doubling per failure"
        );
        // Another object has its own count.
        assert_eq!(backoff.next_with(&"b", 0.0), Duration::from_millis(5));
        assert_eq!(backoff.failures(&"a"), 4);
        assert_eq!(backoff.len(), 2);
        backoff.reset(&"a");
        assert_eq!(backoff.next_with(&"a", 0.0), Duration::from_millis(5));
    }

    #[test]
    fn jitter_adds_at_most_a_tenth() {
        let d = Duration::from_secs(10);
        assert_eq!(jittered(d, 0.0), d);
        assert_eq!(jittered(d, 0.5), Duration::from_millis(10_500));
        assert!(jittered(d, 0.999_999) < Duration::from_secs(11));
        assert_eq!(jittered(d, 7.0), Duration::from_secs(11), "clamped");
        for _ in 0..100 {
            let f = random_fraction();
            assert!((0.0..1.0).contains(&f), "{f}");
        }
        // Not a constant.
        let draws: std::collections::HashSet<u64> =
            (0..20).map(|_| random_fraction().to_bits()).collect();
        assert!(draws.len() > 1);
    }

    #[test]
    fn two_minutes_of_failures_take_a_logarithmic_number_of_tries() {
        let backoff = Backoff::<&str>::default();
        let (mut elapsed, mut tries) = (Duration::ZERO, 0);
        while elapsed < Duration::from_secs(120) {
            elapsed += backoff.next(&"gw");
            tries += 1;
        }
        // log2(120 s / 5 ms) = 14.6: 15 tries, whatever the jitter.
        assert!((14..=16).contains(&tries), "{tries}");
    }

    #[test]
    fn a_failed_wait_keeps_the_cores_requeue_and_the_servers_retry_after() {
        let short = Duration::from_millis(5);
        let core = Duration::from_secs(300);
        assert_eq!(failed_wait(short, Some(core), None), core);
        assert_eq!(failed_wait(short, None, None), short);
        assert_eq!(
            failed_wait(short, Some(Duration::ZERO), Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(failed_wait(MAX, Some(core), None), MAX);
    }
}
