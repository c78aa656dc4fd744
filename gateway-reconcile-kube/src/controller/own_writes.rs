//! The memory of the controller's own writes: a cache that has not seen one yet is older
//! than the write, and deciding from it would repeat the write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use gateway_reconcile::Requeue;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::context::Context;
use super::watches::Touched;
use crate::cached::Gateway;

/// Own writes the caches have not seen yet, by Gateway: the `resourceVersion` the object
/// had before the write (`None`: the Deployment did not exist) and the one the write gave
/// it. While a cache still shows the version from before, it is older than our own write:
/// deciding from it would repeat the write (a 409 at best), so the reconcile waits for the
/// watch event, which triggers it anyway. A write that left the version unchanged (a no-op)
/// or failed is forgotten.
///
/// # The echo
///
/// The watch event of the version our write gave (its *echo*) tells nothing new: the
/// reconcile that wrote settled with the object the API server answered, and the core's
/// `echo-idle` property (checked by its explorer) says a reconcile right after writes that
/// succeeded writes nothing. So the echo triggers no reconcile ([`Pending::seen`]), unless a
/// reconcile is waiting for it (one that found the cache behind). Any other version (another
/// writer's, a later one of ours) triggers as usual. Should a reconcile read the cache just
/// before the echo lands and check it just after, it decides from the older object: its
/// write then carries the older `resourceVersion` (a 409, decided again at once), never a
/// lost update.
///
/// # An echo before the answer
///
/// The watch can deliver the echo before the write's answer has been read (the API server
/// sends both at once, on two streams): the version is not known yet, so the event cannot
/// be told from another writer's. While a write is in flight ([`Pending::begin`]), the
/// events of its object are held back from the trigger; its answer ([`InFlight::finish`])
/// says which was the echo, and any other one makes the reconcile that wrote run again at
/// once. Without this, one Gateway in seven of an edit was reconciled twice on a busy
/// API server (docs/scale.md).
pub(super) struct Pending {
    pub(super) deployments: Writes<Option<String>>,
    pub(super) statuses: Writes<String>,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            deployments: Mutex::new(HashMap::new()),
            statuses: Mutex::new(HashMap::new()),
        }
    }
}

/// One own write: the version before it, the one it gave, and whether a reconcile waits for
/// its echo.
pub(super) struct Own<V> {
    before: V,
    /// The version the write gave; `None` while it is in flight.
    after: Option<V>,
    awaited: bool,
    /// The versions the watch showed while the write was in flight, but `before` (which the
    /// writing reconcile read), held back from the trigger.
    held: Vec<V>,
}

pub(super) type Writes<V> = Mutex<HashMap<ObjectRef<Gateway>, Own<V>>>;

fn lock<V>(map: &Writes<V>) -> std::sync::MutexGuard<'_, HashMap<ObjectRef<Gateway>, Own<V>>> {
    // A poisoned lock only means a panic elsewhere; the map is still usable.
    map.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a watch event of an object is to the trigger ([`Pending::seen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// The echo of our own last write, with no reconcile waiting for it: no reconcile.
    Echo,
    /// Shown while our write is in flight: held back until its answer.
    Held,
    /// A change: it triggers as usual.
    Change,
}

/// What a write's answer said of the events held back while it was in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Finished {
    /// Its echo was among them.
    pub(super) echoed: bool,
    /// Another version was among them: a change the writing reconcile has not seen.
    pub(super) changed: bool,
}

/// A write in flight ([`Pending::begin`]); dropped without an answer (the reconcile's
/// future dropped), it is forgotten, so no later event stays held back.
pub(super) struct InFlight<'a, V: PartialEq + Clone> {
    map: &'a Writes<V>,
    key: ObjectRef<Gateway>,
    answered: bool,
}

impl<V: PartialEq + Clone> InFlight<'_, V> {
    /// The write's answer: `after`, the version it gave (`None`: it failed, or its answer
    /// had none). A write that moved the version is kept until its echo (or a later
    /// version) shows in the cache, unless the echo came already.
    pub(super) fn finish(mut self, after: Option<V>) -> Finished {
        self.answered = true;
        let mut map = lock(self.map);
        let Some(own) = map.get_mut(&self.key).filter(|own| own.after.is_none()) else {
            return Finished::default();
        };
        let held = std::mem::take(&mut own.held);
        match after {
            Some(after) if after != own.before => {
                let echoed = held.contains(&after);
                let changed = held.iter().any(|version| *version != after);
                if echoed {
                    map.remove(&self.key);
                } else {
                    own.after = Some(after);
                }
                Finished { echoed, changed }
            }
            _ => {
                map.remove(&self.key);
                Finished {
                    echoed: false,
                    changed: !held.is_empty(),
                }
            }
        }
    }
}

impl<V: PartialEq + Clone> Drop for InFlight<'_, V> {
    fn drop(&mut self) {
        if !self.answered {
            let mut map = lock(self.map);
            if map.get(&self.key).is_some_and(|own| own.after.is_none()) {
                map.remove(&self.key);
            }
        }
    }
}

impl Pending {
    /// Whether the cache still shows the version from before our write (the reconcile then
    /// waits for the echo, which will trigger it); forgets the write once it does not.
    pub(super) fn stale<V: PartialEq>(
        map: &Writes<V>,
        key: &ObjectRef<Gateway>,
        cached: &V,
    ) -> bool {
        let mut map = lock(map);
        match map.get_mut(key) {
            // Not ours to judge: a write in flight is the running reconcile's own.
            Some(own) if own.after.is_none() => false,
            Some(own) if own.before == *cached => {
                own.awaited = true;
                true
            }
            Some(_) => {
                map.remove(key);
                false
            }
            None => false,
        }
    }

    /// A write of `key`'s object, which the cache showed at `before`, about to be sent: the
    /// object's events are held back until [`InFlight::finish`].
    pub(super) fn begin<V: PartialEq + Clone>(
        map: &Writes<V>,
        key: ObjectRef<Gateway>,
        before: V,
    ) -> InFlight<'_, V> {
        let own = Own {
            before,
            after: None,
            awaited: false,
            held: Vec::new(),
        };
        lock(map).insert(key.clone(), own);
        InFlight {
            map,
            key,
            answered: false,
        }
    }

    /// What a watch event showing `seen` of `key`'s object is to the trigger: the echo of
    /// our own last write with no reconcile waiting for it (the write is then forgotten),
    /// one held back while our write is in flight, or a change.
    pub(super) fn seen<V: PartialEq + Clone>(
        map: &Writes<V>,
        key: &ObjectRef<Gateway>,
        seen: &V,
    ) -> Seen {
        let mut map = lock(map);
        match map.get_mut(key) {
            Some(own) if own.after.is_none() => {
                if *seen != own.before && !own.held.contains(seen) {
                    own.held.push(seen.clone());
                }
                Seen::Held
            }
            Some(own) if own.after.as_ref() == Some(seen) && !own.awaited => {
                map.remove(key);
                Seen::Echo
            }
            _ => Seen::Change,
        }
    }
}

/// The Gateways the Gateway watch touched, but the echoes of our own status writes and the
/// events held back while one is in flight ([`Pending::seen`]), each echo counted.
pub(super) fn without_status_echoes(
    gateways: Touched<Gateway>,
    context: &Arc<Context>,
) -> Touched<Gateway> {
    let context = context.clone();
    gateways
        .filter(move |touched| {
            let seen = touched.as_ref().map_or(Seen::Change, |gateway| {
                let version = gateway.resource_version().unwrap_or_default();
                Pending::seen(
                    &context.pending.statuses,
                    &ObjectRef::from_obj(gateway),
                    &version,
                )
            });
            if seen == Seen::Echo {
                context.metrics.own_write_echo("status");
            }
            std::future::ready(seen == Seen::Change)
        })
        .boxed()
}

/// Takes out of `woken` (the Gateways a Deployment event wakes) the one whose own write the
/// event is the echo of (counted), or whose write is in flight (held back).
pub(super) fn without_deployment_echo(
    mut woken: Vec<ObjectRef<Gateway>>,
    deployment: &impl Resource,
    context: &Context,
) -> Vec<ObjectRef<Gateway>> {
    let version = deployment.resource_version();
    woken.retain(|gateway| {
        let seen = Pending::seen(&context.pending.deployments, gateway, &version);
        if seen == Seen::Echo {
            context.metrics.own_write_echo("deployment");
        }
        seen == Seen::Change
    });
    woken
}

/// The requeue while the cache has not seen an own write: the write's own watch event
/// wakes the Gateway (the Gateway watch for a status write; the LB Deployment watches,
/// through the wake-up map, for a Deployment write), and kube-runtime runs a trigger that
/// comes during a reconcile once it ends, so none is lost; the delay is only a look
/// should the event never come. Polling at once through the backoff instead (5 ms, 10 ms,
/// ...) made several reconciles per Gateway that decided nothing while the API server was
/// busy, and they delayed the watches that would end them (docs/scale.md).
pub(super) const AWAIT_OWN_WRITE: Requeue = Requeue::After(std::time::Duration::from_secs(5));

#[cfg(test)]
mod tests {
    use kube::runtime::reflector::ObjectRef;

    use super::{Finished, Pending, Writes};
    use crate::cached::Gateway;

    /// A write from `before` answered with `after`, no event shown meanwhile.
    fn record<V: PartialEq + Clone>(
        map: &Writes<V>,
        key: ObjectRef<Gateway>,
        before: V,
        after: &V,
    ) {
        let finished = Pending::begin(map, key, before).finish(Some(after.clone()));
        assert_eq!(finished, Finished::default());
    }

    /// Whether an event showing `seen` is an echo (no reconcile).
    fn echo<V: PartialEq + Clone>(map: &Writes<V>, key: &ObjectRef<Gateway>, seen: &V) -> bool {
        Pending::seen(map, key, seen) == super::Seen::Echo
    }

    #[test]
    fn an_own_write_makes_the_cache_stale_until_it_shows_another_version() {
        let pending = Pending::default();
        let key = ObjectRef::<Gateway>::new("gw").within("ns");
        let before = Some("1".to_owned());
        // A no-op write (same version) is not recorded.
        record(&pending.deployments, key.clone(), before.clone(), &before);
        assert!(!Pending::stale(&pending.deployments, &key, &before));
        record(
            &pending.deployments,
            key.clone(),
            before.clone(),
            &Some("2".into()),
        );
        assert!(Pending::stale(&pending.deployments, &key, &before));
        assert!(Pending::stale(&pending.deployments, &key, &before));
        assert!(!Pending::stale(
            &pending.deployments,
            &key,
            &Some("2".into())
        ));
        // Forgotten once seen: the old version is no longer taken for stale.
        assert!(!Pending::stale(&pending.deployments, &key, &before));
        // A create: stale while the cache has no Deployment.
        record(&pending.deployments, key.clone(), None, &Some("3".into()));
        assert!(Pending::stale(&pending.deployments, &key, &None));
        assert!(!Pending::stale(
            &pending.deployments,
            &key,
            &Some("3".into())
        ));
    }

    #[test]
    fn the_echo_of_an_own_write_needs_no_reconcile_unless_one_waits_for_it() {
        let pending = Pending::default();
        let key = ObjectRef::<Gateway>::new("gw").within("ns");
        let (before, after) = ("1".to_owned(), "2".to_owned());
        record(&pending.statuses, key.clone(), before.clone(), &after);
        // Another version is not the echo.
        assert!(!echo(&pending.statuses, &key, &"3".to_owned()));
        assert!(echo(&pending.statuses, &key, &after));
        // Forgotten: the same version again (a relist) triggers as any event.
        assert!(!echo(&pending.statuses, &key, &after));
        assert!(!Pending::stale(&pending.statuses, &key, &before));

        // A reconcile found the cache behind and waits: the echo must wake it.
        record(&pending.statuses, key.clone(), before.clone(), &after);
        assert!(Pending::stale(&pending.statuses, &key, &before));
        assert!(!echo(&pending.statuses, &key, &after));
        // Its next reconcile sees our version and forgets the write.
        assert!(!Pending::stale(&pending.statuses, &key, &after));
        assert!(pending.statuses.lock().unwrap().is_empty());

        // A Deployment created: its echo.
        record(&pending.deployments, key.clone(), None, &Some("5".into()));
        assert!(echo(&pending.deployments, &key, &Some("5".into())));
    }

    #[test]
    fn events_while_a_write_is_in_flight_wait_for_its_answer() {
        use super::Seen;
        let pending = Pending::default();
        let key = ObjectRef::<Gateway>::new("gw").within("ns");
        let map = &pending.statuses;

        // The echo before the answer: held, then known as the echo; nothing to reconcile.
        let write = Pending::begin(map, key.clone(), "1".to_owned());
        assert_eq!(Pending::seen(map, &key, &"1".to_owned()), Seen::Held);
        assert_eq!(Pending::seen(map, &key, &"2".to_owned()), Seen::Held);
        let finished = write.finish(Some("2".to_owned()));
        assert_eq!(
            finished,
            Finished {
                echoed: true,
                changed: false
            }
        );
        assert!(map.lock().unwrap().is_empty(), "the echo came: forgotten");
        assert!(!Pending::stale(map, &key, &"2".to_owned()));

        // Another writer's version before the answer: the writing reconcile runs again.
        let write = Pending::begin(map, key.clone(), "3".to_owned());
        assert_eq!(Pending::seen(map, &key, &"4".to_owned()), Seen::Held);
        let finished = write.finish(Some("5".to_owned()));
        assert_eq!(
            finished,
            Finished {
                echoed: false,
                changed: true
            }
        );
        // Our echo, later, is still known as such.
        assert_eq!(Pending::seen(map, &key, &"5".to_owned()), Seen::Echo);

        // A failed write: a version held meanwhile is a change.
        let write = Pending::begin(map, key.clone(), "5".to_owned());
        assert_eq!(Pending::seen(map, &key, &"6".to_owned()), Seen::Held);
        assert_eq!(
            write.finish(None),
            Finished {
                echoed: false,
                changed: true
            }
        );
        assert_eq!(Pending::seen(map, &key, &"7".to_owned()), Seen::Change);

        // A write whose future is dropped unanswered holds nothing back after it.
        drop(Pending::begin(map, key.clone(), "7".to_owned()));
        assert_eq!(Pending::seen(map, &key, &"8".to_owned()), Seen::Change);
        assert!(!Pending::stale(map, &key, &"7".to_owned()));
    }
}
