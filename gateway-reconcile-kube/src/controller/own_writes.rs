//! The memory of the controller's own writes: a cache that has not seen one yet is older
//! than the write, and deciding from it would repeat the write.

use std::collections::HashMap;
use std::sync::Mutex;

use gateway_reconcile::Requeue;
use kube::runtime::reflector::ObjectRef;

use crate::cached::Gateway;

/// Own writes the caches have not seen yet, by Gateway: the `resourceVersion` the object
/// had before the write (`None`: the Deployment did not exist). While a cache still shows
/// that version, it is older than our own write: deciding from it would repeat the write
/// (a 409 at best), so the reconcile waits for the watch event, which triggers it anyway.
/// A write that left the version unchanged (a no-op) is not recorded.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) deployments: Mutex<HashMap<ObjectRef<Gateway>, Option<String>>>,
    pub(super) statuses: Mutex<HashMap<ObjectRef<Gateway>, String>>,
}

impl Pending {
    /// Whether the cache still shows the version from before our write; forgets the write
    /// once it does not.
    pub(super) fn stale<V: PartialEq>(
        map: &Mutex<HashMap<ObjectRef<Gateway>, V>>,
        key: &ObjectRef<Gateway>,
        cached: &V,
    ) -> bool {
        let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(key) {
            Some(before) if before == cached => true,
            Some(_) => {
                map.remove(key);
                false
            }
            None => false,
        }
    }

    pub(super) fn record<V: PartialEq>(
        map: &Mutex<HashMap<ObjectRef<Gateway>, V>>,
        key: ObjectRef<Gateway>,
        before: V,
        after: &V,
    ) {
        if &before != after {
            map.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, before);
        }
    }
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
}
