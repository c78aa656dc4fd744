//! What wakes a Gateway besides its own changes: the watch wiring around the core's
//! wake-up map (`gateway_reconcile::wake`), and the indexes it reads (routes by the
//! Gateways they name and by namespace, Gateways by the core's keys).
//!
//! The core decides whom a change wakes: the keys a Gateway is found by
//! (`wake::gateway_keys`), and for each watched kind the Gateways a change names and the
//! keys it concerns. What stays here is what a watch needs and the core cannot hold: the
//! indexes, and the last state of a route's parents and a namespace's labels (the watcher
//! hands over only an object's new state).

use gateway_reconcile::reconcile::Labels;
use gateway_reconcile::wake::{self, GatewayRef, WakeKey, Woken};

use super::*;

/// A core Gateway reference as kube-runtime's.
fn object_ref(gateway: &GatewayRef) -> ObjectRef<Gateway> {
    ObjectRef::new(&gateway.name).within(&gateway.namespace)
}

/// The Gateways `woken` names, then those the index has under its keys, each once.
pub(super) fn resolve(gateways: &GatewayIndex, woken: &Woken) -> Vec<ObjectRef<Gateway>> {
    let mut out: Vec<ObjectRef<Gateway>> = woken.gateways.iter().map(object_ref).collect();
    for key in &woken.keys {
        for found in gateways.get(key) {
            if !out.contains(&found) {
                out.push(found);
            }
        }
    }
    out
}

/// The Gateways a Deployment concerns (`wake::deployment_change`): its controller, when that
/// is a Gateway, and the Gateways whose LB Deployment name it has (a name collision), found
/// in the index by that name: never by taking the name apart, since a long Gateway name is
/// shortened with a hash. An unreadable Deployment is read by its metadata.
pub(super) fn gateways_of_deployment(
    gateways: &GatewayIndex,
    deployment: &CachedDeployment,
) -> Vec<ObjectRef<Gateway>> {
    let woken = match deployment.read() {
        Ok(wire) => wake::deployment_change(None, Some(wire)),
        Err(_) => {
            let meta = DeploymentMeta::new(deployment.meta().clone());
            wake::deployment_change(None, Some(&cached::deployment_of_meta(&meta)))
        }
    };
    resolve(gateways, &woken)
}

/// [`gateways_of_deployment`] for a Deployment of the metadata cache.
pub(super) fn gateways_of_meta(
    gateways: &GatewayIndex,
    meta: &DeploymentMeta,
) -> Vec<ObjectRef<Gateway>> {
    let deployment = cached::deployment_of_meta(meta);
    resolve(gateways, &wake::deployment_change(None, Some(&deployment)))
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
    pub(super) keys: Keys<O, K>,
    pub(super) state: Mutex<IndexState<O, K>>,
}

pub(super) struct IndexState<O: Resource, K> {
    pub(super) by_key: HashMap<K, std::collections::HashSet<ObjectRef<O>>>,
    pub(super) by_object: HashMap<ObjectRef<O>, Vec<K>>,
    /// The objects of a list in progress, with their keys.
    pub(super) listing: Option<HashMap<ObjectRef<O>, Vec<K>>>,
}

impl<O, K> IndexState<O, K>
where
    O: Resource<DynamicType = ()>,
    K: Eq + std::hash::Hash + Clone,
{
    pub(super) fn remove(&mut self, object: &ObjectRef<O>) {
        for key in self.by_object.remove(object).into_iter().flatten() {
            if let Some(objects) = self.by_key.get_mut(&key) {
                objects.remove(object);
                if objects.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }

    pub(super) fn insert(&mut self, object: ObjectRef<O>, keys: Vec<K>) {
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

/// Maps a GatewayConfiguration event to the Gateways `wake::configuration_change` names:
/// those whose own reference names it, and those of the GatewayClasses that name it as their
/// default. Each such class is settled again (the configuration's existence is its
/// `Accepted`).
pub(super) struct ClassesOfConfiguration {
    pub(super) classes: Store<GatewayClass>,
    pub(super) settings: Settings,
    pub(super) status: crate::class_status::ClassStatus,
    pub(super) gateways: Arc<GatewayIndex>,
}

impl ClassesOfConfiguration {
    pub(super) fn wake(&self, namespace: &str, name: &str) -> Vec<ObjectRef<Gateway>> {
        // Every class: there are few.
        let classes = self.classes.state();
        let readable = classes.iter().filter_map(|class| class.read().ok());
        let woken = wake::configuration_change(&self.settings, namespace, name, readable);
        for class in &classes {
            if woken.classes.contains(&class.name_any()) {
                self.status.settle(class);
            }
        }
        resolve(&self.gateways, &woken)
    }
}

/// Maps an L34Route event to the Gateways of its old and new `parentRefs`
/// (`wake::route_change`). The watcher hands over the new route only: the parents each
/// route had at its last event are remembered in its stead (and forgotten once it is
/// deleted), which is all `route_change` reads of the old route.
pub(super) struct RouteParents {
    pub(super) routes: Store<L34Route>,
    pub(super) last: Mutex<HashMap<ObjectRef<L34Route>, Vec<GatewayRef>>>,
}

impl RouteParents {
    pub(super) fn new(routes: Store<L34Route>) -> Self {
        Self {
            routes,
            last: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn wake(&self, route: &L34Route) -> Vec<ObjectRef<Gateway>> {
        let key = ObjectRef::from_obj(route);
        let new = route.read().ok();
        let parents = wake::route_change(None, new);
        // A poisoned lock only means a panic elsewhere; the map is still usable.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        // The reflector has applied the event: a route gone from the cache was deleted.
        let old = if self.routes.get(&key).is_some() {
            last.insert(key, parents.clone())
        } else {
            last.remove(&key)
        };
        let mut woken = parents;
        woken.extend(old.into_iter().flatten());
        woken.sort();
        woken.dedup();
        woken.iter().map(object_ref).collect()
    }
}

/// Maps a Namespace event to the Gateways `wake::namespace_change` names: none when its
/// labels did not change (a relist, an annotation edit); otherwise the parents of the
/// routes in that namespace, of which only the Gateways indexed under
/// `WakeKey::NamespaceSelector` read the labels. The labels each namespace had at its last
/// event are remembered (the watcher hands over the new ones only): a copy of every
/// namespace's labels, few and small, against a wake of every selecting Gateway per event.
pub(super) struct NamespaceLabelsSeen {
    pub(super) namespaces: Store<NamespaceMeta>,
    pub(super) routes: Store<L34Route>,
    pub(super) routes_by_namespace: Arc<RoutesByNamespace>,
    pub(super) gateways: Arc<GatewayIndex>,
    pub(super) last: Mutex<HashMap<String, Labels>>,
}

impl NamespaceLabelsSeen {
    pub(super) fn new(
        namespaces: Store<NamespaceMeta>,
        routes: Store<L34Route>,
        routes_by_namespace: Arc<RoutesByNamespace>,
        gateways: Arc<GatewayIndex>,
    ) -> Self {
        Self {
            namespaces,
            routes,
            routes_by_namespace,
            gateways,
            last: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn wake(&self, namespace: &NamespaceMeta) -> Vec<ObjectRef<Gateway>> {
        let name = namespace.name_any();
        // The reflector has applied the event: a namespace gone from the cache was deleted.
        let exists = self.namespaces.get(&ObjectRef::new(&name)).is_some();
        let new = exists.then(|| namespace.metadata.labels.clone().unwrap_or_default());
        let old = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            match &new {
                Some(labels) => last.insert(name.clone(), labels.clone()),
                None => last.remove(&name),
            }
        };
        if old == new {
            return Vec::new();
        }
        let routes: Vec<Arc<L34Route>> = self
            .routes_by_namespace
            .get(&name)
            .iter()
            .filter_map(|key| self.routes.get(key))
            .collect();
        let readable = routes.iter().filter_map(|route| route.read().ok());
        wake::namespace_change(&name, old.as_ref(), new.as_ref(), readable)
            .iter()
            .map(object_ref)
            .filter(|gateway| self.gateways.has(gateway, &WakeKey::NamespaceSelector))
            .collect()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::{gateway, named_route};
    use super::*;

    fn deployment(value: serde_json::Value) -> CachedDeployment {
        serde_json::from_value(value).expect("a Deployment")
    }

    /// The index of Gateways `a`, `b` and `x` in `ns`.
    fn index_of_abx() -> GatewayIndex {
        let index = gateway_index(&Settings::default());
        for name in ["a", "b", "x"] {
            index.apply(&watcher::Event::Apply(gateway(name).as_ref().clone()));
        }
        index
    }

    #[test]
    fn a_deployment_wakes_its_controller_and_the_gateway_of_its_name() {
        let index = index_of_abx();
        let owned = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "sllbr-a", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "a", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(
            gateways_of_deployment(&index, &owned),
            vec![ObjectRef::<Gateway>::new("a").within("ns")]
        );
        let foreign = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "sllbr-b", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(
            gateways_of_deployment(&index, &foreign),
            vec![ObjectRef::<Gateway>::new("b").within("ns")]
        );
        let other = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web", "namespace": "ns" }
        }));
        assert!(gateways_of_deployment(&index, &other).is_empty());
    }

    pub(in crate::controller) fn meta(value: serde_json::Value) -> DeploymentMeta {
        serde_json::from_value(value).expect("metadata")
    }

    #[test]
    fn a_deployment_by_its_metadata_wakes_the_same_gateways() {
        let index = index_of_abx();
        let owned = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "sllbr-a", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");
        assert_eq!(gateways_of_meta(&index, &owned), vec![gw("x"), gw("a")]);
        let foreign = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "sllbr-b", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(gateways_of_meta(&index, &foreign), vec![gw("b")]);
        let other = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "web", "namespace": "ns" }
        }));
        assert!(gateways_of_meta(&index, &other).is_empty());
    }

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

    pub(in crate::controller) fn route(gateway: &str) -> L34Route {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
            "metadata": { "name": "r", "namespace": "ns" },
            "spec": { "parentRefs": [{ "name": gateway }], "destinationCIDRs": [],
                      "protocols": ["TCP"], "priority": 1 }
        }))
        .expect("a route")
    }

    #[test]
    fn a_moved_route_wakes_its_old_and_new_gateways_and_a_deleted_one_its_last() {
        let (store, mut writer) = reflector::store::<L34Route>();
        let parents = RouteParents::new(store);
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");

        writer.apply_watcher_event(&watcher::Event::Apply(route("a")));
        assert_eq!(parents.wake(&route("a")), vec![gw("a")]);
        writer.apply_watcher_event(&watcher::Event::Apply(route("b")));
        assert_eq!(parents.wake(&route("b")), vec![gw("a"), gw("b")]);
        // Once moved, the old parent is forgotten.
        writer.apply_watcher_event(&watcher::Event::Apply(route("b")));
        assert_eq!(parents.wake(&route("b")), vec![gw("b")]);
        writer.apply_watcher_event(&watcher::Event::Delete(route("b")));
        assert_eq!(parents.wake(&route("b")), vec![gw("b")]);
        assert!(parents.last.lock().map(|m| m.is_empty()).unwrap_or(false));
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
    fn a_namespace_wakes_the_selecting_gateways_its_routes_name_when_its_labels_change() {
        let gateways = Arc::new(gateway_index(&Settings::default()));
        let gateway = |name: &str, from: &str| -> Gateway {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"gatewayClassName": "c", "listeners": [{"name": "l",
                    "allowedRoutes": {"namespaces": {"from": from}}}]}
            }))
            .expect("a Gateway")
        };
        // `a` and `b` select namespaces by label, `x` admits all; no route names `b`.
        for (name, from) in [("a", "Selector"), ("b", "Selector"), ("x", "All")] {
            gateways.apply(&watcher::Event::Apply(gateway(name, from)));
        }
        let (routes, mut route_writer) = reflector::store::<L34Route>();
        let by_namespace = Arc::new(routes_by_namespace());
        for event in [
            watcher::Event::Apply(named_route("r1", "a")),
            watcher::Event::Apply(named_route("r2", "x")),
        ] {
            by_namespace.apply(&event);
            route_writer.apply_watcher_event(&event);
        }
        let (namespaces, mut namespace_writer) = reflector::store::<NamespaceMeta>();
        let seen = NamespaceLabelsSeen::new(namespaces, routes, by_namespace, gateways);
        let namespace = |team: &str| -> NamespaceMeta {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "ns", "labels": {"team": team}}
            }))
            .expect("a namespace")
        };
        let mut event = |event: watcher::Event<NamespaceMeta>| {
            namespace_writer.apply_watcher_event(&event);
            let (watcher::Event::Apply(object) | watcher::Event::Delete(object)) = event else {
                unreachable!("an apply or a delete")
            };
            seen.wake(&object)
        };
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");

        // First seen: the labels are new.
        assert_eq!(
            event(watcher::Event::Apply(namespace("red"))),
            vec![gw("a")]
        );
        // The same labels again (a relist, an annotation edit): nobody.
        assert!(event(watcher::Event::Apply(namespace("red"))).is_empty());
        assert_eq!(
            event(watcher::Event::Apply(namespace("blue"))),
            vec![gw("a")]
        );
        // Deleted: no labels any more.
        assert_eq!(
            event(watcher::Event::Delete(namespace("blue"))),
            vec![gw("a")]
        );
        assert!(seen.last.lock().map(|m| m.is_empty()).unwrap_or(false));
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
