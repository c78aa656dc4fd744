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
