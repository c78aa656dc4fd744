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
/// is not recorded.
///
/// # The echo
///
/// The watch event of the version our write gave (its *echo*) tells nothing new: the
/// reconcile that wrote settled with the object the API server answered, and the core's
/// `echo-idle` property (checked by its explorer) says a reconcile right after writes that
/// succeeded writes nothing. So the echo triggers no reconcile ([`Pending::echo`]), unless a
/// reconcile is waiting for it (one that found the cache behind). Any other version (another
/// writer's, a later one of ours) triggers as usual. Should a reconcile read the cache just
/// before the echo lands and check it just after, it decides from the older object: its
/// write then carries the older `resourceVersion` (a 409, decided again at once), never a
/// lost update.
pub(super) struct Pending {
    pub(super) deployments: Mutex<HashMap<ObjectRef<Gateway>, Own<Option<String>>>>,
    pub(super) statuses: Mutex<HashMap<ObjectRef<Gateway>, Own<String>>>,
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
    after: V,
    awaited: bool,
}

type Writes<V> = Mutex<HashMap<ObjectRef<Gateway>, Own<V>>>;

fn lock<V>(map: &Writes<V>) -> std::sync::MutexGuard<'_, HashMap<ObjectRef<Gateway>, Own<V>>> {
    // A poisoned lock only means a panic elsewhere; the map is still usable.
    map.lock().unwrap_or_else(|e| e.into_inner())
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

    /// Records a write that moved the object from `before` to `after`.
    pub(super) fn record<V: PartialEq + Clone>(
        map: &Writes<V>,
        key: ObjectRef<Gateway>,
        before: V,
        after: &V,
    ) {
        if &before != after {
            let own = Own {
                before,
                after: after.clone(),
                awaited: false,
            };
            lock(map).insert(key, own);
        }
    }

    /// Whether a watch event showing `seen` is the echo of our own last write to `key`'s
    /// object, with no reconcile waiting for it: it then needs none, and the write is
    /// forgotten.
    pub(super) fn echo<V: PartialEq>(map: &Writes<V>, key: &ObjectRef<Gateway>, seen: &V) -> bool {
        let mut map = lock(map);
        match map.get(key) {
            Some(own) if own.after == *seen && !own.awaited => {
                map.remove(key);
                true
            }
            _ => false,
        }
    }
}

/// The Gateways the Gateway watch touched, but the echoes of our own status writes
/// ([`Pending::echo`]), each counted.
pub(super) fn without_status_echoes(
    gateways: Touched<Gateway>,
    context: &Arc<Context>,
) -> Touched<Gateway> {
    let context = context.clone();
    gateways
        .filter(move |touched| {
            let echo = touched.as_ref().is_ok_and(|gateway| {
                let version = gateway.resource_version().unwrap_or_default();
                Pending::echo(
                    &context.pending.statuses,
                    &ObjectRef::from_obj(gateway),
                    &version,
                )
            });
            if echo {
                context.metrics.own_write_echo("status");
            }
            std::future::ready(!echo)
        })
        .boxed()
}

/// Takes out of `woken` (the Gateways a Deployment event wakes) the one whose own write the
/// event is the echo of, counted.
pub(super) fn without_deployment_echo(
    mut woken: Vec<ObjectRef<Gateway>>,
    deployment: &impl Resource,
    context: &Context,
) -> Vec<ObjectRef<Gateway>> {
    let version = deployment.resource_version();
    woken.retain(|gateway| {
        let echo = Pending::echo(&context.pending.deployments, gateway, &version);
        if echo {
            context.metrics.own_write_echo("deployment");
        }
        !echo
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

    use super::Pending;
    use crate::cached::Gateway;

    #[test]
    fn an_own_write_makes_the_cache_stale_until_it_shows_another_version() {
        let pending = Pending::default();
        let key = ObjectRef::<Gateway>::new("gw").within("ns");
        let before = Some("1".to_owned());
        // A no-op write (same version) is not recorded.
        Pending::record(&pending.deployments, key.clone(), before.clone(), &before);
        assert!(!Pending::stale(&pending.deployments, &key, &before));
        Pending::record(
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
        Pending::record(&pending.deployments, key.clone(), None, &Some("3".into()));
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
        Pending::record(&pending.statuses, key.clone(), before.clone(), &after);
        // Another version is not the echo.
        assert!(!Pending::echo(&pending.statuses, &key, &"3".to_owned()));
        assert!(Pending::echo(&pending.statuses, &key, &after));
        // Forgotten: the same version again (a relist) triggers as any event.
        assert!(!Pending::echo(&pending.statuses, &key, &after));
        assert!(!Pending::stale(&pending.statuses, &key, &before));

        // A reconcile found the cache behind and waits: the echo must wake it.
        Pending::record(&pending.statuses, key.clone(), before.clone(), &after);
        assert!(Pending::stale(&pending.statuses, &key, &before));
        assert!(!Pending::echo(&pending.statuses, &key, &after));
        // Its next reconcile sees our version and forgets the write.
        assert!(!Pending::stale(&pending.statuses, &key, &after));
        assert!(pending.statuses.lock().unwrap().is_empty());

        // A Deployment created: its echo.
        Pending::record(&pending.deployments, key.clone(), None, &Some("5".into()));
        assert!(Pending::echo(&pending.deployments, &key, &Some("5".into())));
    }
}
