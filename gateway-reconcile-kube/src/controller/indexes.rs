//! The indexes the triggers and the reconcile look objects up in instead of scanning a
//! cache: the L34Routes by the Gateways they name and by namespace, the Gateways by the
//! core's wake-up keys (`wake::gateway_keys`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use gateway_reconcile::Settings;
use gateway_reconcile::wake::{self, GatewayRef, WakeKey};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

use crate::cached::{Gateway, L34Route};

/// The indexes of a run, each filled by its watch before the cache applies an event.
pub(super) struct Indexes {
    /// The L34Routes by the Gateways they name (read by the reconcile too).
    pub(super) routes_by_gateway: Arc<RouteIndex>,
    /// The L34Routes by their namespace.
    pub(super) routes_by_namespace: Arc<RoutesByNamespace>,
    /// The Gateways by the core's keys.
    pub(super) gateways: Arc<GatewayIndex>,
}

impl Indexes {
    /// Empty indexes, the Gateways keyed with `settings`.
    pub(super) fn new(settings: &Settings) -> Self {
        Indexes {
            routes_by_gateway: Arc::new(route_index()),
            routes_by_namespace: Arc::new(routes_by_namespace()),
            gateways: Arc::new(gateway_index(settings)),
        }
    }
}

/// A core Gateway reference as kube-runtime's.
pub(super) fn object_ref(gateway: &GatewayRef) -> ObjectRef<Gateway> {
    ObjectRef::new(&gateway.name).within(&gateway.namespace)
}

/// A route's parent Gateways, by the core's rules (`wake::route_parents`); none for an
/// unreadable route.
pub(super) fn parents_of(route: &L34Route) -> Vec<ObjectRef<Gateway>> {
    match route.read() {
        Ok(wire) => wake::route_parents(wire).iter().map(object_ref).collect(),
        Err(_) => Vec::new(),
    }
}

/// Watched objects by keys computed from them (an L34Route by the Gateways it names, a
/// Gateway by its class and its GatewayConfiguration), kept from the watch's events before
/// the cache applies them, as the reflector keeps its cache (a relist replaces the whole
/// index at its end): a lookup instead of a scan of every object of the kind.
pub(super) struct Index<O: Resource, K> {
    keys: Keys<O, K>,
    state: Mutex<IndexState<O, K>>,
}

struct IndexState<O: Resource, K> {
    by_key: HashMap<K, HashSet<ObjectRef<O>>>,
    by_object: HashMap<ObjectRef<O>, Vec<K>>,
    /// The objects of a list in progress, with their keys.
    listing: Option<HashMap<ObjectRef<O>, Vec<K>>>,
}

impl<O, K> IndexState<O, K>
where
    O: Resource<DynamicType = ()>,
    K: Eq + std::hash::Hash + Clone,
{
    fn remove(&mut self, object: &ObjectRef<O>) {
        for key in self.by_object.remove(object).into_iter().flatten() {
            if let Some(objects) = self.by_key.get_mut(&key) {
                objects.remove(object);
                if objects.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }

    fn insert(&mut self, object: ObjectRef<O>, keys: Vec<K>) {
        self.remove(&object);
        for key in &keys {
            self.by_key
                .entry(key.clone())
                .or_default()
                .insert(object.clone());
        }
        self.by_object.insert(object, keys);
    }
}

impl<O, K> Index<O, K>
where
    O: Resource<DynamicType = ()>,
    K: Eq + std::hash::Hash + Clone,
{
    pub(super) fn new(keys: impl Fn(&O) -> Vec<K> + Send + Sync + 'static) -> Self {
        Index {
            keys: Box::new(keys),
            state: Mutex::new(IndexState {
                by_key: HashMap::new(),
                by_object: HashMap::new(),
                listing: None,
            }),
        }
    }

    pub(super) fn apply(&self, event: &watcher::Event<O>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            watcher::Event::Apply(object) => {
                state.insert(ObjectRef::from_obj(object), (self.keys)(object));
            }
            watcher::Event::Delete(object) => state.remove(&ObjectRef::from_obj(object)),
            watcher::Event::Init => state.listing = Some(HashMap::new()),
            watcher::Event::InitApply(object) => {
                let keys = (self.keys)(object);
                if let Some(listing) = &mut state.listing {
                    listing.insert(ObjectRef::from_obj(object), keys);
                }
            }
            watcher::Event::InitDone => {
                if let Some(listing) = state.listing.take() {
                    state.by_key.clear();
                    state.by_object.clear();
                    for (object, keys) in listing {
                        state.insert(object, keys);
                    }
                }
            }
        }
    }

    /// Whether `object` is indexed under `key`.
    pub(super) fn has(&self, object: &ObjectRef<O>, key: &K) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .by_object
            .get(object)
            .is_some_and(|keys| keys.contains(key))
    }

    /// The objects with this key.
    pub(super) fn get(&self, key: &K) -> Vec<ObjectRef<O>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .by_key
            .get(key)
            .map(|objects| objects.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// How an [`Index`] computes an object's keys.
pub(super) type Keys<O, K> = Box<dyn Fn(&O) -> Vec<K> + Send + Sync>;

/// The L34Routes by the Gateways they name.
pub(super) type RouteIndex = Index<L34Route, ObjectRef<Gateway>>;

/// A route index: by [`parents_of`].
pub(super) fn route_index() -> RouteIndex {
    Index::new(parents_of)
}

/// The L34Routes by their namespace: the routes a namespace's label change concerns
/// (`wake::namespace_change`), without a scan of every route.
pub(super) type RoutesByNamespace = Index<L34Route, String>;

/// A route index by namespace.
pub(super) fn routes_by_namespace() -> RoutesByNamespace {
    Index::new(|route: &L34Route| route.namespace().into_iter().collect())
}

/// The Gateways by the core's keys (`wake::gateway_keys`).
pub(super) type GatewayIndex = Index<Gateway, WakeKey>;

/// A Gateway index: by [`wake::gateway_keys`].
pub(super) fn gateway_index(settings: &Settings) -> GatewayIndex {
    let settings = settings.clone();
    Index::new(move |gateway: &Gateway| match gateway.read() {
        Ok(wire) => wake::gateway_keys(&settings, wire),
        // Unreadable: found by its class (see `unreadable_gateway`).
        Err(_) => gateway
            .unread_class()
            .map(|class| WakeKey::Class(class.to_owned()))
            .into_iter()
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use gateway_reconcile::Settings;
    use gateway_reconcile::wake::WakeKey;
    use kube::runtime::reflector::ObjectRef;
    use kube::runtime::watcher;

    use super::{gateway_index, parents_of, route_index};
    use crate::cached::{Gateway, L34Route};
    use crate::controller::fixtures::named_route;

    #[test]
    fn route_parents_default_group_kind_and_namespace() {
        let route: L34Route = serde_json::from_value(serde_json::json!({
            "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
            "metadata": { "name": "r", "namespace": "ns" },
            "spec": { "parentRefs": [
                { "name": "a" },
                { "name": "b", "namespace": "other" },
                { "name": "c", "kind": "Service", "group": "" }
            ], "destinationCIDRs": [], "protocols": ["TCP"], "priority": 1 }
        }))
        .expect("a route");
        assert_eq!(
            parents_of(&route),
            vec![
                ObjectRef::<Gateway>::new("a").within("ns"),
                ObjectRef::<Gateway>::new("b").within("other")
            ]
        );
    }

    #[test]
    fn the_route_index_follows_moves_deletions_and_relists() {
        let index = route_index();
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");
        let names = |gateway: &str| {
            let mut names: Vec<String> = index
                .get(&gw(gateway))
                .into_iter()
                .map(|r| r.name)
                .collect();
            names.sort();
            names
        };
        index.apply(&watcher::Event::Apply(named_route("r1", "a")));
        index.apply(&watcher::Event::Apply(named_route("r2", "a")));
        assert_eq!(names("a"), ["r1", "r2"]);
        // Moved: gone from its old Gateway.
        index.apply(&watcher::Event::Apply(named_route("r2", "b")));
        assert_eq!(names("a"), ["r1"]);
        assert_eq!(names("b"), ["r2"]);
        index.apply(&watcher::Event::Delete(named_route("r1", "a")));
        assert!(names("a").is_empty());
        // A relist replaces the whole index at its end: r2, deleted meanwhile, is gone.
        index.apply(&watcher::Event::Init);
        index.apply(&watcher::Event::InitApply(named_route("r3", "a")));
        assert_eq!(names("b"), ["r2"]);
        index.apply(&watcher::Event::InitDone);
        assert_eq!(names("a"), ["r3"]);
        assert!(names("b").is_empty());
    }

    #[test]
    fn the_gateway_index_finds_gateways_by_class_and_configuration() {
        let index = gateway_index(&Settings::default());
        let gateway = |name: &str, class: &str, conf: &str| -> Gateway {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"gatewayClassName": class, "infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": conf}}}
            }))
            .expect("a Gateway")
        };
        let names = |key: WakeKey| {
            let mut names: Vec<String> = index.get(&key).into_iter().map(|g| g.name).collect();
            names.sort();
            names
        };
        let class = |c: &str| WakeKey::Class(c.into());
        let conf = |c: &str| WakeKey::Configuration {
            namespace: "ns".into(),
            name: c.into(),
        };
        index.apply(&watcher::Event::Apply(gateway("a", "c1", "x")));
        index.apply(&watcher::Event::Apply(gateway("b", "c1", "y")));
        assert_eq!(names(class("c1")), ["a", "b"]);
        assert_eq!(names(conf("x")), ["a"]);
        index.apply(&watcher::Event::Apply(gateway("b", "c2", "x")));
        assert_eq!(names(class("c1")), ["a"]);
        assert_eq!(names(conf("x")), ["a", "b"]);
        assert!(names(conf("y")).is_empty());
        index.apply(&watcher::Event::Delete(gateway("a", "c1", "x")));
        assert!(names(class("c1")).is_empty());
        assert_eq!(names(conf("x")), ["b"]);
    }
}
