//! The kit's watch, on request ([`StoreLoop::with_watch`]): the store's changes become
//! watch events, and the loop turns them into wake-ups with the core's wake-up map
//! ([`crate::wake`]) as an embedder's watch does, reconciling each woken Gateway as soon
//! as it runs; a resync wakes every Gateway every period of the store's clock; faults drop
//! or coalesce events on their way to the loop.
//!
//! # From a change to a reconcile
//!
//! Every change of the store's objects is recorded by the store's one hook (`journal`) as
//! a [`WatchEvent`] (old and new state). The loop takes the events whenever it runs (any
//! call on the [`StoreLoop`]) and delivers them through the faults ([`Watch`]); each
//! delivered event is mapped by the function of its kind ([`wake::gateway_change`],
//! [`wake::class_change`], [`wake::configuration_change`], [`wake::route_change`],
//! [`wake::deployment_change`], [`wake::namespace_change`]) to the Gateways it names and
//! the [`WakeKey`]s it concerns, looked up in the loop's index of Gateways by
//! [`wake::gateway_keys`] (updated on each delivered Gateway event, as an embedder's index
//! is). A woken Gateway is due at the event's time: an [`Op::Advance`] runs it at once.
//! The template has no wake-up rule (a controller reads it at start: a change of it is a
//! restart's, which reconciles every Gateway), so a template change wakes every Gateway.
//! The GatewayClasses a change asks to settle ([`wake::Woken::classes`]) are settled at
//! the next reconcile of each of their Gateways, as every reconcile of the store does.
//! The loop's own writes are events too, and wake their Gateway once more: that reconcile
//! writes nothing (the kit has no echo filter; the real controller's is an optimisation).
//!
//! Turning the watch on is the watch's first list: every Gateway is woken.
//! [`Backend::restart`](crate::sim::scenario::Backend::restart) lists again: the events
//! held back are forgotten and every Gateway is woken.
//!
//! # What a lost event means here
//!
//! The kit's reads go to the store: there is no cache between the loop and the store. So a
//! dropped event loses a wake-up, never a view: whichever reconcile comes next for a
//! Gateway (its requeue, another object's event, the resync) reads every object as it is.
//! What the loop remembers of an object it missed is its last delivered state: the next
//! delivered event of that object has it as its old state, as an embedder's memory of a
//! route's parents or a class's spec would (so a route moved twice wakes the Gateway it
//! first left). With no resync and no requeue, a Gateway whose last wake-up was lost stays
//! behind for good, and the resync repairs it within one period.
//!
//! The real controller loses more: its reads go to its caches, which miss the event too,
//! so its resync reconciles from the same stale view and only a relist (a watch ended with
//! 410 Expired, or a restart) repairs it (see `docs/reliability.md`, "Unobserved states
//! (real control plane)"). The kit's resync repairs what the real one cannot; what the two
//! share is that a lost event's wake-up is never replayed: in the kit any later reconcile
//! of the Gateway repairs it, in the real controller only one after a relist.
//!
//! [`StoreLoop`]: super::StoreLoop
//! [`StoreLoop::with_watch`]: super::StoreLoop::with_watch
//! [`Op::Advance`]: crate::testing::strategies::Op::Advance

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::{Store, WatchEvent, WatchKind, key};
use crate::reconcile::{Labels, ObjectKey};
use crate::sim::cluster::Kind;
use crate::sim::cluster::store::typed;
use crate::wake::{self, GatewayRef, WakeKey, Woken};
use crate::wire::{Deployment, Gateway, GatewayClass, L34Route};

/// The settings of the kit's watch ([`StoreLoop::with_watch`](super::StoreLoop::with_watch)):
/// its resync period and the faults on its events. [`Watch::new`] is a faithful watch with
/// no resync.
///
/// - [`resync`](Watch::resync): every Gateway is woken every period of the store's clock
///   (from when the watch was turned on; a Gateway reconciled since the last tick waits for
///   the next one).
/// - [`drop_every`](Watch::drop_every), [`drop_fraction`](Watch::drop_fraction): every
///   k-th event, or a seeded fraction of them, is lost, of the kinds
///   [`only`](Watch::only) names (by default every kind).
/// - [`coalesce`](Watch::coalesce): events are held for a window of the store's clock
///   from the first held one, then only each object's last is delivered, at the window's
///   end.
///
/// ```
/// use std::time::Duration;
/// use gateway_reconcile::testing::{Watch, WatchKind};
///
/// let watch = Watch::new()
///     .resync(Duration::from_secs(5))
///     .drop_fraction(0.5, 7)
///     .only(&[WatchKind::Configuration, WatchKind::Deployment])
///     .coalesce(Duration::from_secs(2));
/// assert_eq!(watch.resync_period(), Some(Duration::from_secs(5)));
/// assert!(watch.perturbed());
/// assert!(!Watch::new().perturbed());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Watch {
    resync: Option<Duration>,
    drops: Drops,
    /// The kinds whose events may be dropped (empty: every kind).
    kinds: Vec<WatchKind>,
    coalesce: Option<Duration>,
}

/// Which events are lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
enum Drops {
    #[default]
    None,
    /// Every k-th event of the dropped kinds (k ≥ 1).
    Every(u32),
    /// Each event of the dropped kinds with this probability, in parts per million, drawn
    /// from the seeded generator.
    Fraction { per_million: u32, seed: u64 },
}

impl Watch {
    /// A watch that delivers every event as it happens, with no resync.
    ///
    /// ```
    /// use gateway_reconcile::testing::Watch;
    /// assert_eq!(Watch::new().resync_period(), None);
    /// ```
    pub fn new() -> Self {
        Watch::default()
    }

    /// Wakes every Gateway every `period` of the store's clock (at least a second: a
    /// shorter one is taken as one second).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::testing::Watch;
    /// let watch = Watch::new().resync(Duration::from_millis(10));
    /// assert_eq!(watch.resync_period(), Some(Duration::from_secs(1)));
    /// ```
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period.max(Duration::from_secs(1)));
        self
    }

    /// The resync period (`None`: no resync).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::testing::Watch;
    /// let every = Duration::from_secs(20);
    /// assert_eq!(Watch::new().resync(every).resync_period(), Some(every));
    /// ```
    pub fn resync_period(&self) -> Option<Duration> {
        self.resync
    }

    /// Loses every `k`-th event (of the kinds [`only`](Watch::only) names): the 1st..k-1st
    /// are delivered, the k-th is not, and so on (`k` 0 drops none, 1 all).
    ///
    /// ```
    /// use gateway_reconcile::testing::Watch;
    /// assert!(Watch::new().drop_every(3).perturbed());
    /// assert!(!Watch::new().drop_every(0).perturbed());
    /// ```
    pub fn drop_every(mut self, k: u32) -> Self {
        self.drops = match k {
            0 => Drops::None,
            k => Drops::Every(k),
        };
        self
    }

    /// Loses each event (of the kinds [`only`](Watch::only) names) with probability
    /// `fraction` (clamped to 0..=1), drawn from a generator seeded with `seed`: the same
    /// seed loses the same events of the same run.
    ///
    /// ```
    /// use gateway_reconcile::testing::Watch;
    /// assert_eq!(Watch::new().drop_fraction(0.25, 1), Watch::new().drop_fraction(0.25, 1));
    /// assert_ne!(Watch::new().drop_fraction(0.25, 1), Watch::new().drop_fraction(0.25, 2));
    /// ```
    pub fn drop_fraction(mut self, fraction: f64, seed: u64) -> Self {
        let fraction = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        // Exact for every fraction a test names; the rounding keeps the value small.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let per_million = (fraction * 1_000_000.0).round() as u32;
        self.drops = Drops::Fraction { per_million, seed };
        self
    }

    /// The drops are of events of these kinds only (empty: every kind, the default).
    ///
    /// ```
    /// use gateway_reconcile::testing::{Watch, WatchKind};
    /// let watch = Watch::new().drop_every(1).only(&[WatchKind::Configuration]);
    /// assert!(watch.perturbed());
    /// ```
    pub fn only(mut self, kinds: &[WatchKind]) -> Self {
        self.kinds = kinds.to_vec();
        self
    }

    /// Holds the events for `window` of the store's clock from the first one held, then
    /// delivers only each object's last, at the window's end (a zero window: the events
    /// that wait when the loop next runs).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::testing::Watch;
    /// assert!(Watch::new().coalesce(Duration::ZERO).perturbed());
    /// ```
    pub fn coalesce(mut self, window: Duration) -> Self {
        self.coalesce = Some(window);
        self
    }

    /// The coalescing window (`None`: events are delivered as they happen).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::testing::Watch;
    /// let window = Duration::from_secs(2);
    /// assert_eq!(Watch::new().coalesce(window).coalesce_window(), Some(window));
    /// ```
    pub fn coalesce_window(&self) -> Option<Duration> {
        self.coalesce
    }

    /// Whether the watch loses or coalesces events.
    ///
    /// ```
    /// use gateway_reconcile::testing::Watch;
    /// assert!(!Watch::new().perturbed());
    /// ```
    pub fn perturbed(&self) -> bool {
        self.drops != Drops::None || self.coalesce.is_some()
    }

    /// Whether an event of `kind` is one the drops may take.
    fn drops_kind(&self, kind: WatchKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }
}

/// What the kit's watch did so far ([`StoreLoop::watch_stats`](super::StoreLoop::watch_stats)).
///
/// ```
/// use gateway_reconcile::testing::{StoreLoop, Watch, strategies};
///
/// let toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
/// let stats = toy.watch_stats().unwrap();
/// assert_eq!((stats.events, stats.dropped, stats.coalesced), (0, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WatchStats {
    /// The store's changes the watch took.
    pub events: u64,
    /// The events delivered to the loop's wake-up map.
    pub delivered: u64,
    /// The events lost ([`Watch::drop_every`], [`Watch::drop_fraction`]).
    pub dropped: u64,
    /// The events left out by coalescing (an object's later event delivered instead).
    pub coalesced: u64,
    /// The wake-ups of Gateways the delivered events caused (a Gateway woken again before
    /// it ran counts again).
    pub wake_ups: u64,
    /// The reconciles the resync was the reason for (no event had woken the Gateway).
    pub resyncs: u64,
}

/// The watch's state in a loop: its settings, the index of Gateways by their wake-up keys,
/// what it holds back, whom it woke, and when each Gateway last ran (for the resync).
#[derive(Debug, Clone)]
pub(super) struct Watching {
    watch: Watch,
    /// When the watch was turned on (or listed again): the resync ticks count from here.
    since: Timestamp,
    /// The index: the Gateways under each key ([`wake::gateway_keys`]), as their last
    /// delivered events left them; a change's keys are looked up here, never by a scan.
    index: BTreeMap<WakeKey, BTreeSet<ObjectKey>>,
    /// Each Gateway's keys, to move it in the index when they change.
    keys: BTreeMap<ObjectKey, Vec<WakeKey>>,
    /// Events held by coalescing, oldest first.
    held: Vec<WatchEvent>,
    /// Of an object whose events were lost or coalesced away: its state when the loop last
    /// saw it (the old state of its next delivered event).
    unseen: BTreeMap<(WatchKind, ObjectKey), Option<Value>>,
    /// The Gateways woken and not yet reconciled, each due at its earliest wake-up.
    woken: BTreeMap<ObjectKey, Timestamp>,
    /// When each Gateway was last reconciled.
    reconciled: BTreeMap<ObjectKey, Timestamp>,
    /// Events of the dropped kinds so far ([`Watch::drop_every`]).
    counted: u64,
    /// The generator of [`Watch::drop_fraction`].
    random: u64,
    stats: WatchStats,
}

impl Watching {
    /// The watch's first list of `store`: every Gateway indexed and woken at its clock.
    pub(super) fn list(watch: Watch, store: &Store, stats: WatchStats) -> Self {
        let now = store.now();
        let random = match watch.drops {
            Drops::Fraction { seed, .. } => seed,
            _ => 0,
        };
        let mut watching = Watching {
            watch,
            since: now,
            index: BTreeMap::new(),
            keys: BTreeMap::new(),
            held: Vec::new(),
            unseen: BTreeMap::new(),
            woken: BTreeMap::new(),
            reconciled: BTreeMap::new(),
            counted: 0,
            random,
            stats,
        };
        for (at, gateway) in &store.gateways {
            let keys = typed::<Gateway>(Kind::Gateway, gateway)
                .ok()
                .map(|gateway| wake::gateway_keys(store.settings(), &gateway));
            watching.reindex(at, keys);
            watching.woken.insert(at.clone(), now);
        }
        watching
    }

    /// Files the Gateway `gateway` under `keys` (`None`: gone, or unreadable), out from
    /// under the keys it had.
    fn reindex(&mut self, gateway: &ObjectKey, keys: Option<Vec<WakeKey>>) {
        for old in self.keys.remove(gateway).unwrap_or_default() {
            if let Some(filed) = self.index.get_mut(&old) {
                filed.remove(gateway);
                if filed.is_empty() {
                    self.index.remove(&old);
                }
            }
        }
        if let Some(keys) = keys {
            for new in &keys {
                let filed = self.index.entry(new.clone()).or_default();
                filed.insert(gateway.clone());
            }
            self.keys.insert(gateway.clone(), keys);
        }
    }

    /// The settings.
    pub(super) fn watch(&self) -> &Watch {
        &self.watch
    }

    /// What the watch did so far.
    pub(super) fn stats(&self) -> WatchStats {
        self.stats
    }

    /// Feeds the state that decides the watch's next wake-ups to `state` (the explorer's
    /// fingerprint of a loop with a watch).
    pub(super) fn fingerprint(&self, state: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.watch.hash(state);
        self.since.hash(state);
        format!("{:?}{:?}{:?}", self.keys, self.held, self.unseen).hash(state);
        self.woken.hash(state);
        self.reconciled.hash(state);
        (self.counted, self.random).hash(state);
    }

    /// Takes `events` (the store's changes since the loop last ran) at `now`: each is
    /// delivered at once, or held by coalescing, the held ones released once their window
    /// has passed.
    pub(super) fn take(&mut self, store: &Store, events: Vec<WatchEvent>, now: Timestamp) {
        self.stats.events += events.len() as u64;
        if self.watch.coalesce.is_none() {
            for event in events {
                let at = event.time;
                self.deliver(store, event, at);
            }
            return;
        }
        self.held.extend(events);
        if let Some(release) = self.release_time()
            && release <= now
        {
            self.release(store, release);
        }
    }

    /// When the events held by coalescing are released (`None`: none held).
    fn release_time(&self) -> Option<Timestamp> {
        let first = self.held.first()?.time;
        let window = self.watch.coalesce.unwrap_or_default();
        let window = SignedDuration::try_from(window).unwrap_or(SignedDuration::MAX);
        Some(first.checked_add(window).unwrap_or(Timestamp::MAX))
    }

    /// Delivers each held object's last event at `at`; its earlier ones are coalesced away.
    fn release(&mut self, store: &Store, at: Timestamp) {
        let held = std::mem::take(&mut self.held);
        let last: BTreeMap<(WatchKind, ObjectKey), usize> = held
            .iter()
            .enumerate()
            .map(|(i, event)| (event.object(), i))
            .collect();
        for (i, event) in held.into_iter().enumerate() {
            if last.get(&event.object()) == Some(&i) {
                self.deliver(store, event, at);
            } else {
                self.stats.coalesced += 1;
                self.unseen.entry(event.object()).or_insert(event.old);
            }
        }
    }

    /// One event through the drops, then through the wake-up map: the Gateways it wakes
    /// are due at `at`.
    fn deliver(&mut self, store: &Store, mut event: WatchEvent, at: Timestamp) {
        if self.dropped(event.kind) {
            self.stats.dropped += 1;
            self.unseen.entry(event.object()).or_insert(event.old);
            return;
        }
        self.stats.delivered += 1;
        let old = match self.unseen.remove(&event.object()) {
            Some(seen) => seen,
            None => event.old.take(),
        };
        for gateway in self.wakes(store, &event, old.as_ref()) {
            self.stats.wake_ups += 1;
            let due = self.woken.entry(gateway).or_insert(at);
            *due = (*due).min(at);
        }
    }

    /// Whether the next event of `kind` is lost.
    fn dropped(&mut self, kind: WatchKind) -> bool {
        if !self.watch.drops_kind(kind) {
            return false;
        }
        match self.watch.drops {
            Drops::None => false,
            Drops::Every(k) => {
                self.counted += 1;
                self.counted.is_multiple_of(u64::from(k))
            }
            Drops::Fraction { per_million, .. } => {
                self.counted += 1;
                self.next_random() % 1_000_000 < u64::from(per_million)
            }
        }
    }

    /// The next number of the seeded generator (SplitMix64: small, and its whole state is
    /// one number the fingerprint can hash).
    fn next_random(&mut self) -> u64 {
        self.random = self.random.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.random;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The Gateways of `store` a delivered `event` wakes, its old state being `old` (what
    /// the loop last saw), by the core's wake-up map and the index; a Gateway event
    /// updates the index first (its keys as the event leaves them).
    fn wakes(&mut self, store: &Store, event: &WatchEvent, old: Option<&Value>) -> Vec<ObjectKey> {
        fn read<T: serde::de::DeserializeOwned>(state: Option<&Value>) -> Option<T> {
            state.and_then(|state| serde_json::from_value(state.clone()).ok())
        }
        let settings = store.settings();
        let new = event.new.as_ref();
        let woken = match event.kind {
            WatchKind::Gateway => {
                let (old, new) = (read::<Gateway>(old), read::<Gateway>(new));
                let at = key(&event.namespace, &event.name);
                let keys = new.as_ref().map(|new| wake::gateway_keys(settings, new));
                self.reindex(&at, keys);
                Woken {
                    gateways: wake::gateway_change(old.as_ref(), new.as_ref()),
                    ..Woken::default()
                }
            }
            WatchKind::GatewayClass => wake::class_change(
                &event.name,
                read::<GatewayClass>(old).as_ref(),
                read::<GatewayClass>(new).as_ref(),
            ),
            WatchKind::Configuration => {
                let classes: Vec<GatewayClass> = store
                    .classes
                    .values()
                    .filter_map(|class| typed(Kind::GatewayClass, class).ok())
                    .collect();
                wake::configuration_change(settings, &event.namespace, &event.name, &classes)
            }
            WatchKind::Route => Woken {
                gateways: wake::route_change(
                    read::<L34Route>(old).as_ref(),
                    read::<L34Route>(new).as_ref(),
                ),
                ..Woken::default()
            },
            WatchKind::Deployment => wake::deployment_change(
                read::<Deployment>(old).as_ref(),
                read::<Deployment>(new).as_ref(),
            ),
            WatchKind::Namespace => {
                let parents = wake::namespace_change(
                    &event.name,
                    read::<Labels>(old).as_ref(),
                    read::<Labels>(new).as_ref(),
                    store.routes.values(),
                );
                // Only those that read namespaces' labels.
                let selecting = |gateway: &GatewayRef| {
                    self.index
                        .get(&WakeKey::NamespaceSelector)
                        .is_some_and(|filed| {
                            filed.contains(&key(&gateway.namespace, &gateway.name))
                        })
                };
                Woken {
                    gateways: parents.into_iter().filter(selecting).collect(),
                    ..Woken::default()
                }
            }
            // No wake-up rule: a controller reads its template at start.
            WatchKind::Template => {
                return store.order.clone();
            }
        };
        let named = woken
            .gateways
            .iter()
            .map(|gateway| key(&gateway.namespace, &gateway.name));
        let found = woken
            .keys
            .iter()
            .filter_map(|k| self.index.get(k))
            .flatten()
            .cloned();
        let mut gateways: Vec<ObjectKey> = named
            .chain(found)
            .filter(|gateway| store.gateways.contains_key(gateway))
            .collect();
        gateways.sort();
        gateways.dedup();
        gateways
    }

    /// The Gateway `gateway` ran at `at`: its wake-up is used (one due by then), and the
    /// resync counts from here.
    pub(super) fn reconciled(&mut self, gateway: &ObjectKey, at: Timestamp) {
        let woken = self.woken.get(gateway).is_some_and(|due| *due <= at);
        if woken {
            self.woken.remove(gateway);
        } else if self.resync_due(gateway).is_some_and(|due| due <= at) {
            self.stats.resyncs += 1;
        }
        self.reconciled.insert(gateway.clone(), at);
    }

    /// The resync's next tick for `gateway`: the first after its last reconcile (or after
    /// the watch's list, when it has not run since).
    fn resync_due(&self, gateway: &ObjectKey) -> Option<Timestamp> {
        let period = SignedDuration::try_from(self.watch.resync?).ok()?;
        let last = self.reconciled.get(gateway).copied().unwrap_or(self.since);
        let elapsed = last.duration_since(self.since).as_nanos().max(0);
        let period_nanos = period.as_nanos().max(1);
        let ticks = elapsed / period_nanos + 1;
        let next = ticks.saturating_mul(period_nanos);
        let whole = i64::try_from(next / 1_000_000_000).ok()?;
        let part = i32::try_from(next % 1_000_000_000).ok()?;
        self.since
            .checked_add(SignedDuration::new(whole, part))
            .ok()
    }

    /// When the watch has `gateway` run next: its wake-up, or the resync's next tick.
    pub(super) fn due(&self, gateway: &ObjectKey) -> Option<Timestamp> {
        let woken = self.woken.get(gateway).copied();
        match (woken, self.resync_due(gateway)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The watch's next wake-ups, without taking anything: what it would make due if it
    /// took the store's changes waiting now and released what it holds when its window
    /// ends (the loop's schedule is read without running it).
    pub(super) fn ahead(&self, store: &Store) -> Self {
        let mut ahead = self.clone();
        ahead.take(store, store.changes().to_vec(), store.now());
        if let Some(release) = ahead.release_time() {
            ahead.release(store, release);
        }
        ahead
    }
}
