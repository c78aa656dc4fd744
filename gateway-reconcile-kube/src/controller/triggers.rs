//! What wakes a Gateway besides its own changes: the watch wiring around the core's
//! wake-up map (`gateway_reconcile::wake`), over the indexes of [`super::indexes`].
//!
//! The core decides whom a change wakes: the keys a Gateway is found by
//! (`wake::gateway_keys`), and for each watched kind the Gateways a change names and the
//! keys it concerns. What stays here is what a watch needs and the core cannot hold: the
//! last state of a route's parents and a namespace's labels (the watcher hands over only
//! an object's new state); the indexes are `indexes`'.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gateway_reconcile::Settings;
use gateway_reconcile::reconcile::Labels;
use gateway_reconcile::wake::{self, GatewayRef, WakeKey, Woken};
use kube::runtime::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use super::context::Context;
use super::indexes::{GatewayIndex, Indexes, RoutesByNamespace, object_ref};
use super::own_writes;
use super::stores::{Stores, lb_labeled};
use super::watches::Triggers;
use crate::cached::{
    self, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass, L34Route,
    NamespaceMeta,
};
use crate::class_status::ClassStatus;

/// `controller` woken by every watch but the Gateways' own: whom each change wakes is the
/// core's (`gateway_reconcile::wake`); this wires the watches to it.
pub(super) fn wake_ups(
    controller: Controller<Gateway>,
    triggers: Triggers,
    stores: &Stores,
    indexes: &Indexes,
    settings: &Settings,
    class_status: ClassStatus,
    context: &Arc<Context>,
) -> Controller<Gateway> {
    let context = context.clone();
    let by_class = indexes.gateways.clone();
    let namespace_labels = NamespaceLabelsSeen::new(
        stores.namespaces.clone(),
        stores.routes.clone(),
        indexes.routes_by_namespace.clone(),
        indexes.gateways.clone(),
    );
    let route_parents = RouteParents::new(stores.routes.clone());
    let classes_seen = ClassesSeen::new(stores.classes.clone());
    let by_lb_name = indexes.gateways.clone();
    let meta_by_lb_name = indexes.gateways.clone();
    let configuration_classes = ClassesOfConfiguration {
        classes: stores.classes.clone(),
        settings: settings.clone(),
        status: class_status.clone(),
        gateways: by_class.clone(),
    };
    controller
        .watches_stream(triggers.classes, move |class| {
            // The class's own status, and its Gateways when what they read of it changed
            // (not on the echo of our own status patch).
            class_status.settle(&class);
            resolve(&by_class, &classes_seen.change(&class))
        })
        .watches_stream(triggers.configurations, move |conf| {
            // The Gateways that name it, and those of the classes that name it as their
            // default (the classes are settled again: its existence is their Accepted).
            configuration_classes.wake(&conf.namespace().unwrap_or_default(), &conf.name_any())
        })
        .watches_stream(triggers.routes, move |route| route_parents.wake(&route))
        // A namespace's labels decide only for Gateways that admit routes by a selector,
        // and only for those its routes name.
        .watches_stream(triggers.namespaces, move |namespace| {
            namespace_labels.wake(&namespace)
        })
        .watches_stream(triggers.deployments, move |deployment| {
            // Not the Gateway whose own write this is the echo of.
            let woken = gateways_of_deployment(&by_lb_name, &deployment);
            own_writes::without_deployment_echo(woken, &deployment, &context)
        })
        .watches_stream(triggers.deployment_meta, move |meta| {
            // One with our label is the LB watch's to report.
            if lb_labeled(&meta) {
                Vec::new()
            } else {
                gateways_of_meta(&meta_by_lb_name, &meta)
            }
        })
}

/// The Gateways `woken` names, then those the index has under its keys, each once.
fn resolve(gateways: &GatewayIndex, woken: &Woken) -> Vec<ObjectRef<Gateway>> {
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
fn gateways_of_deployment(
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
fn gateways_of_meta(gateways: &GatewayIndex, meta: &DeploymentMeta) -> Vec<ObjectRef<Gateway>> {
    let deployment = cached::deployment_of_meta(meta);
    resolve(gateways, &wake::deployment_change(None, Some(&deployment)))
}

/// Maps a GatewayConfiguration event to the Gateways `wake::configuration_change` names:
/// those whose own reference names it, and those of the GatewayClasses that name it as their
/// default. Each such class is settled again (the configuration's existence is its
/// `Accepted`).
struct ClassesOfConfiguration {
    classes: Store<GatewayClass>,
    settings: Settings,
    status: ClassStatus,
    gateways: Arc<GatewayIndex>,
}

impl ClassesOfConfiguration {
    fn wake(&self, namespace: &str, name: &str) -> Vec<ObjectRef<Gateway>> {
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

/// The class each GatewayClass event left in the cache, for `wake::class_change`, which
/// compares it with the one before (the watcher hands over the new class only). Classes
/// are few: each is kept as the `Arc` the cache holds.
struct ClassesSeen {
    classes: Store<GatewayClass>,
    last: Mutex<HashMap<String, Arc<GatewayClass>>>,
}

impl ClassesSeen {
    fn new(classes: Store<GatewayClass>) -> Self {
        Self {
            classes,
            last: Mutex::new(HashMap::new()),
        }
    }

    fn change(&self, class: &GatewayClass) -> Woken {
        let name = class.name_any();
        // The reflector has applied the event: a class gone from the cache was deleted.
        let new = self.classes.get(&ObjectRef::new(&name));
        let old = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            match &new {
                Some(new) => last.insert(name.clone(), new.clone()),
                None => last.remove(&name),
            }
        };
        let (old, new) = (old.as_deref(), new.as_deref());
        wake::class_change(
            &name,
            old.and_then(|c| c.read().ok()),
            new.and_then(|c| c.read().ok()),
        )
    }
}

/// Maps an L34Route event to the Gateways of its old and new `parentRefs`
/// (`wake::route_change`). The watcher hands over the new route only: the parents each
/// route had at its last event are remembered in its stead (and forgotten once it is
/// deleted), which is all `route_change` reads of the old route.
pub(super) struct RouteParents {
    routes: Store<L34Route>,
    last: Mutex<HashMap<ObjectRef<L34Route>, Vec<GatewayRef>>>,
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
struct NamespaceLabelsSeen {
    namespaces: Store<NamespaceMeta>,
    routes: Store<L34Route>,
    routes_by_namespace: Arc<RoutesByNamespace>,
    gateways: Arc<GatewayIndex>,
    last: Mutex<HashMap<String, Labels>>,
}

impl NamespaceLabelsSeen {
    fn new(
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

    fn wake(&self, namespace: &NamespaceMeta) -> Vec<ObjectRef<Gateway>> {
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
mod tests {
    use std::sync::Arc;

    use gateway_reconcile::Settings;
    use kube::runtime::reflector::{self, ObjectRef};
    use kube::runtime::watcher;

    use super::{
        ClassesSeen, NamespaceLabelsSeen, RouteParents, gateways_of_deployment, gateways_of_meta,
    };
    use crate::cached::{
        Deployment as CachedDeployment, Gateway, GatewayClass, L34Route, NamespaceMeta,
    };
    use crate::controller::fixtures::{gateway, meta, named_route, route};
    use crate::controller::indexes::{GatewayIndex, gateway_index, routes_by_namespace};

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
    fn a_class_wakes_its_gateways_when_created_edited_or_deleted_not_on_its_status() {
        use gateway_reconcile::wake::WakeKey;

        let class = |parameters: Option<&str>, accepted: Option<&str>| -> GatewayClass {
            let mut value = serde_json::json!({
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": {"name": "c", "resourceVersion": "1"},
                "spec": {"controllerName": "example.com/gateway"}
            });
            if let Some(name) = parameters {
                value["spec"]["parametersRef"] = serde_json::json!({
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                    "name": name, "namespace": "infra"});
            }
            if let Some(status) = accepted {
                value["status"] = serde_json::json!({"conditions": [{"type": "Accepted",
                    "status": status, "reason": "Accepted", "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
            }
            serde_json::from_value(value).expect("a class")
        };
        let (store, mut writer) = reflector::store::<GatewayClass>();
        let seen = ClassesSeen::new(store);
        let wakes = |woken: gateway_reconcile::wake::Woken| {
            assert_eq!(woken.classes, ["c"]);
            woken.keys == [WakeKey::Class("c".into())]
        };
        let mut apply = |class: GatewayClass| {
            writer.apply_watcher_event(&watcher::Event::Apply(class.clone()));
            class
        };

        let created = apply(class(None, None));
        assert!(wakes(seen.change(&created)), "created");
        // Our own status patch, and its repetition (a relist): nobody.
        let accepted = apply(class(None, Some("True")));
        assert!(!wakes(seen.change(&accepted)), "status");
        assert!(!wakes(seen.change(&accepted)), "relist");
        let edited = apply(class(Some("defaults"), Some("True")));
        assert!(wakes(seen.change(&edited)), "spec edited");
        writer.apply_watcher_event(&watcher::Event::Delete(edited.clone()));
        assert!(wakes(seen.change(&edited)), "deleted");
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
}
