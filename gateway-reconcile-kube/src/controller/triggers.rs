//! What wakes a Gateway besides its own changes: the mappers from a watched object to the
//! Gateways it concerns, and the indexes they read (routes by the Gateways they name,
//! Gateways by class and configuration).

use super::*;

/// The Gateways a Deployment concerns: its controller, when that is a Gateway (the core's
/// reading of the controller ownerReference), and the Gateways whose LB Deployment name it
/// has (a name collision), found in the index by that name: never by taking the name
/// apart, since a long Gateway name is shortened with a hash.
pub(super) fn gateways_of_deployment(
    gateways: &GatewayIndex,
    deployment: &CachedDeployment,
) -> Vec<ObjectRef<Gateway>> {
    let owner = deployment.read().ok().and_then(owner_of);
    gateways_of(gateways, deployment.meta(), owner)
}

/// [`gateways_of_deployment`] for a Deployment of the metadata cache.
pub(super) fn gateways_of_meta(
    gateways: &GatewayIndex,
    meta: &DeploymentMeta,
) -> Vec<ObjectRef<Gateway>> {
    let owner = owner_of(&cached::deployment_of_meta(meta));
    gateways_of(gateways, &meta.metadata, owner)
}

/// The Gateway a Deployment's controller ownerReference names.
fn owner_of(deployment: &wire::Deployment) -> Option<ObjectRef<Gateway>> {
    let owner = lookup::deployment_gateway(deployment)?;
    Some(ObjectRef::new(owner.name).within(owner.namespace?))
}

/// The Deployment's controller Gateway, then the Gateways of its LB name.
fn gateways_of(
    gateways: &GatewayIndex,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    owner: Option<ObjectRef<Gateway>>,
) -> Vec<ObjectRef<Gateway>> {
    let (Some(namespace), Some(name)) = (meta.namespace.as_deref(), meta.name.as_deref()) else {
        return Vec::new();
    };
    let mut out: Vec<ObjectRef<Gateway>> = owner.into_iter().collect();
    let key = GatewayKey::LbDeployment(namespace.to_owned(), name.to_owned());
    for named in gateways.get(&key) {
        if !out.contains(&named) {
            out.push(named);
        }
    }
    out
}

/// A route's parent Gateways, by the core's rules (`addresses::parent_gateway`).
pub(super) fn parents_of(route: &L34Route) -> Vec<ObjectRef<Gateway>> {
    let Ok(wire_route) = route.read() else {
        return Vec::new();
    };
    let own_namespace = route.meta().namespace.as_deref().unwrap_or_default();
    wire_route
        .spec
        .parent_refs
        .iter()
        .filter_map(|parent| lookup::parent_gateway(parent, own_namespace))
        .map(|(namespace, name)| ObjectRef::new(name).within(namespace))
        .collect()
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

/// What a Gateway is looked up by when a GatewayClass or GatewayConfiguration changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum GatewayKey {
    /// `spec.gatewayClassName`.
    Class(String),
    /// The GatewayConfiguration its `parametersRef` names (our kind only): namespace, name.
    Configuration(String, String),
    /// One of its listeners admits routes by a namespace label selector.
    NamespaceSelector,
    /// Its LB Deployment's name: namespace, name.
    LbDeployment(String, String),
}

/// The Gateways by class and by GatewayConfiguration.
pub(super) type GatewayIndex = Index<Gateway, GatewayKey>;

pub(super) fn gateway_index(settings: &Settings) -> GatewayIndex {
    let settings = settings.clone();
    Index::new(move |gateway: &Gateway| {
        let Ok(wire_gateway) = gateway.read() else {
            // Unreadable: found by its class (see `unreadable_gateway`).
            return gateway
                .unread_class()
                .map(|class| GatewayKey::Class(class.to_owned()))
                .into_iter()
                .collect();
        };
        let mut keys = vec![GatewayKey::Class(
            wire_gateway.spec.gateway_class_name.clone(),
        )];
        if let (Some(namespace), Some(name)) = (
            wire_gateway.metadata.namespace.as_deref(),
            wire_gateway.metadata.name.as_deref(),
        ) {
            keys.push(GatewayKey::LbDeployment(
                namespace.to_owned(),
                lookup::deployment_name(&settings, name),
            ));
        }
        // Its own reference only: the Gateways of a class's default are found by class
        // (see `ClassesOfConfiguration`).
        if let Some(own) = lookup::configuration_ref(&settings, wire_gateway, None) {
            keys.push(GatewayKey::Configuration(
                own.namespace.to_owned(),
                own.name.to_owned(),
            ));
        }
        if lookup::uses_namespace_selector(wire_gateway) {
            keys.push(GatewayKey::NamespaceSelector);
        }
        keys
    })
}

/// Maps a GatewayConfiguration event to the GatewayClasses that name it as their default:
/// each is settled again (the configuration's existence is its `Accepted`), and its
/// Gateways are woken (those that name no configuration of their own use it).
pub(super) struct ClassesOfConfiguration {
    pub(super) classes: Store<GatewayClass>,
    pub(super) settings: Settings,
    pub(super) status: crate::class_status::ClassStatus,
    pub(super) gateways: Arc<GatewayIndex>,
}

impl ClassesOfConfiguration {
    pub(super) fn wake(&self, namespace: &str, name: &str) -> Vec<ObjectRef<Gateway>> {
        let mut woken = Vec::new();
        for class in self.classes.state() {
            let Ok(typed) = class.read() else { continue };
            let names_it = lookup::class_configuration_ref(&self.settings, typed)
                .is_some_and(|named| named.matches(Some(namespace), Some(name)));
            if names_it {
                self.status.settle(&class);
                woken.extend(self.gateways.get(&GatewayKey::Class(class.name_any())));
            }
        }
        woken
    }
}

/// Maps an L34Route event to the Gateways of its old and new `parentRefs`: the parents
/// each route had at its last event are remembered (and forgotten once it is deleted).
pub(super) struct RouteParents {
    pub(super) routes: Store<L34Route>,
    pub(super) last: Mutex<HashMap<ObjectRef<L34Route>, Vec<ObjectRef<Gateway>>>>,
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
        let mut parents = parents_of(route);
        // A poisoned lock only means a panic elsewhere; the map is still usable.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        // The reflector has applied the event: a route gone from the cache was deleted.
        let old = if self.routes.get(&key).is_some() {
            last.insert(key, parents.clone())
        } else {
            last.remove(&key)
        };
        for parent in old.into_iter().flatten() {
            if !parents.contains(&parent) {
                parents.push(parent);
            }
        }
        parents
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
        assert_eq!(parents.wake(&route("b")), vec![gw("b"), gw("a")]);
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
        let names = |key: GatewayKey| {
            let mut names: Vec<String> = index.get(&key).into_iter().map(|g| g.name).collect();
            names.sort();
            names
        };
        let class = |c: &str| GatewayKey::Class(c.into());
        let conf = |c: &str| GatewayKey::Configuration("ns".into(), c.into());
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
