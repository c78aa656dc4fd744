//! The wake-up map (`wake`) against the gather: a small cluster of several Gateways over
//! shared GatewayClasses, GatewayConfigurations (their own references and their classes'
//! defaults), L34Routes (some of another namespace than their Gateway), labelled namespaces
//! and Deployments; one random change (a create, an edit or a delete of one object); every
//! Gateway gathered before and after (`reconcile::gather`, through a reader over the
//! cluster), and the woken Gateways found by brute force: named by the change, or indexed
//! under one of its keys by `wake::gateway_keys`.
//!
//! What is checked, for every kind:
//!
//! - complete (exact, every kind): a Gateway whose gathered objects changed is woken;
//! - for a GatewayClass and an L34Route, the other direction too: a woken Gateway is one
//!   whose gathered objects changed, when the change altered the object (an event that
//!   alters nothing, a resync, still wakes the Gateways that read the object);
//! - for a namespace's labels, exact both ways: a woken Gateway is one whose gathered
//!   objects changed, and labels that did not change wake nobody;
//! - for a GatewayConfiguration (conservative): a woken Gateway names it with its own
//!   reference, or its class names it as the default; no Gateway of another class or
//!   configuration is woken (a Gateway of that class with a configuration of its own is,
//!   needlessly: the map looks at the changed object only);
//! - for a Deployment (conservative): a woken Gateway has the Deployment's name as its LB
//!   name, or is named by its controller ownerReference;
//! - for a Gateway: only itself is woken, and no other Gateway's gathered objects change.

use std::collections::BTreeMap;

use gateway_reconcile::WriteOutcome;
use gateway_reconcile::reconcile::{InMemory, Labels, Plan, View, gather, plan, ready};
use gateway_reconcile::wake::{self, GatewayRef, WakeKey, Woken};
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
use gateway_reconcile::{Settings, lookup};
use proptest::prelude::*;
use serde_json::{Value, json};

/// `(namespace, name)`.
type Key = (String, String);

const NAMESPACES: [&str; 4] = ["red", "blue", "green", "infra"];
const CLASSES: [&str; 3] = ["c1", "c2", "c3"];
const CONFIGURATIONS: [&str; 2] = ["x", "y"];

/// The Gateway names: short ones and one past what a Deployment name can hold (its LB name
/// is shortened with a hash).
fn gateway_names() -> [String; 3] {
    ["a".to_owned(), "b".to_owned(), "g".repeat(70)]
}

/// The Deployment names: the LB names of the Gateway names, and a foreign one.
fn deployment_names() -> Vec<String> {
    let settings = Settings::default();
    let mut names: Vec<String> = gateway_names()
        .iter()
        .map(|name| lookup::deployment_name(&settings, name))
        .collect();
    names.push("web".to_owned());
    names
}

/// The cluster: every object by its key, in the core's in-memory store (its reads by key
/// are those a cache answers).
type World = InMemory;

/// One change: the object's key and its new state (`None`: deleted, or still absent).
#[derive(Debug, Clone)]
enum Change {
    Gateway(Key, Option<Gateway>),
    Class(String, Option<GatewayClass>),
    Configuration(Key, Option<GatewayConfiguration>),
    Route(Key, Option<L34Route>),
    Namespace(String, Option<Labels>),
    Deployment(Key, Option<Deployment>),
}

fn read<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a wire object")
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>) -> impl Strategy<Value = T> {
    proptest::sample::select(items)
}

fn namespace() -> impl Strategy<Value = String> {
    pick(NAMESPACES.iter().map(|n| n.to_string()).collect())
}

/// Our parameters reference, another kind's, or none.
fn parameters_ref(with_namespace: bool) -> impl Strategy<Value = Option<Value>> {
    let ns = proptest::option::of(namespace());
    (0u8..4, pick(CONFIGURATIONS.to_vec()), ns).prop_map(move |(kind, name, namespace)| {
        let mut reference = match kind {
            0 => return None,
            1 => json!({"group": "example.com", "kind": "Other", "name": name}),
            _ => json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": name}),
        };
        if let (true, Some(namespace)) = (with_namespace, namespace) {
            reference["namespace"] = json!(namespace);
        }
        Some(reference)
    })
}

prop_compose! {
    fn gateway(key: Key)(
        class in pick(CLASSES.to_vec()),
        own in parameters_ref(false),
        selecting in any::<bool>(),
        team in pick(vec!["a", "b"]),
    ) -> Gateway {
        let from = if selecting {
            json!({"from": "Selector", "selector": {"matchLabels": {"team": team}}})
        } else {
            json!({"from": "All"})
        };
        let mut spec = json!({
            "gatewayClassName": class,
            "listeners": [{"name": "l", "port": 4000, "protocol": "TCP",
                           "allowedRoutes": {"namespaces": from}}],
        });
        if let Some(own) = own {
            spec["infrastructure"] = json!({"parametersRef": own});
        }
        read(json!({"metadata": {"namespace": key.0, "name": key.1}, "spec": spec}))
    }
}

prop_compose! {
    // Its spec (ours or not, a default configuration or none) and what a Gateway does not
    // read of it (its status, a label) vary apart.
    fn class(name: String)(
        reference in parameters_ref(true),
        ours in proptest::bool::weighted(0.8),
        version in 0u8..3,
        accepted in proptest::option::of(any::<bool>()),
        label in proptest::option::of(pick(vec!["a", "b"])),
    ) -> GatewayClass {
        let controller = if ours { "meridio-2.nordix.org/gateway-controller" } else { "example.com/other" };
        let mut spec = json!({"controllerName": controller});
        if let Some(reference) = reference {
            spec["parametersRef"] = reference;
        }
        let mut metadata = json!({"name": name, "generation": version});
        if let Some(label) = label {
            metadata["labels"] = json!({"tier": label});
        }
        let mut class = json!({"metadata": metadata, "spec": spec});
        if let Some(accepted) = accepted {
            class["status"] = json!({"conditions": [{
                "type": "Accepted", "status": if accepted { "True" } else { "False" },
                "reason": if accepted { "Accepted" } else { "InvalidParameters" }, "message": "",
                "observedGeneration": version, "lastTransitionTime": "2026-01-01T00:00:00Z"
            }]});
        }
        read(class)
    }
}

prop_compose! {
    fn configuration(key: Key)(replicas in 0i32..3) -> GatewayConfiguration {
        read(json!({
            "metadata": {"namespace": key.0, "name": key.1},
            "spec": {"horizontalScaling": {"replicas": replicas}}
        }))
    }
}

prop_compose! {
    fn parent_ref()(
        name in pick(gateway_names().to_vec()),
        namespace in proptest::option::of(namespace()),
        service in proptest::bool::weighted(0.1),
    ) -> Value {
        let mut parent = json!({"name": name});
        if let Some(namespace) = namespace {
            parent["namespace"] = json!(namespace);
        }
        if service {
            parent["kind"] = json!("Service");
            parent["group"] = json!("");
        }
        parent
    }
}

prop_compose! {
    fn route(key: Key)(parents in proptest::collection::vec(parent_ref(), 0..3), priority in 1i32..3) -> L34Route {
        read(json!({
            "metadata": {"namespace": key.0, "name": key.1},
            "spec": {"parentRefs": parents, "destinationCIDRs": ["20.0.0.1/32"],
                     "protocols": ["TCP"], "priority": priority}
        }))
    }
}

fn labels() -> impl Strategy<Value = Labels> {
    pick(vec!["a", "b"]).prop_map(|team| Labels::from([("team".to_owned(), team.to_owned())]))
}

prop_compose! {
    fn deployment(key: Key)(
        owner in proptest::option::of(pick(gateway_names().to_vec())),
        replicas in 0i32..3,
    ) -> Deployment {
        let mut metadata = json!({"namespace": key.0, "name": key.1});
        if let Some(owner) = owner {
            metadata["ownerReferences"] = json!([{
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "name": owner, "uid": "u", "controller": true}]);
        }
        read(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
                    "spec": {"replicas": replicas}}))
    }
}

fn key_in(names: Vec<String>) -> impl Strategy<Value = Key> {
    (namespace(), pick(names))
}

fn gateway_key() -> impl Strategy<Value = Key> {
    // Gateways in two namespaces, so that routes of the others are cross-namespace.
    (
        pick(vec!["red".to_owned(), "blue".to_owned()]),
        pick(gateway_names().to_vec()),
    )
}

fn route_names() -> Vec<String> {
    ["r1", "r2", "r3", "r4", "r5", "r6"]
        .map(String::from)
        .to_vec()
}

fn configuration_names() -> Vec<String> {
    CONFIGURATIONS.map(String::from).to_vec()
}

fn world() -> impl Strategy<Value = World> {
    let gateways = proptest::collection::vec(
        gateway_key().prop_flat_map(|k| (Just(k.clone()), gateway(k))),
        1..6,
    );
    let classes = proptest::collection::vec(
        pick(CLASSES.map(String::from).to_vec()).prop_flat_map(|n| (Just(n.clone()), class(n))),
        0..4,
    );
    let configurations = proptest::collection::vec(
        key_in(configuration_names()).prop_flat_map(|k| (Just(k.clone()), configuration(k))),
        0..6,
    );
    let routes = proptest::collection::vec(
        key_in(route_names()).prop_flat_map(|k| (Just(k.clone()), route(k))),
        0..10,
    );
    let namespaces = proptest::collection::vec((namespace(), labels()), 0..4);
    let deployments = proptest::collection::vec(
        key_in(deployment_names()).prop_flat_map(|k| (Just(k.clone()), deployment(k))),
        0..5,
    );
    (
        gateways,
        classes,
        configurations,
        routes,
        namespaces,
        deployments,
    )
        .prop_map(
            |(gateways, classes, configurations, routes, namespaces, deployments)| {
                let mut world = InMemory::new(Deployment::default());
                world.gateways = gateways.into_iter().collect();
                world.classes = classes.into_iter().collect();
                world.configurations = configurations.into_iter().collect();
                world.routes = routes.into_iter().collect();
                world.namespaces = namespaces.into_iter().collect();
                world.deployments = deployments.into_iter().collect();
                world
            },
        )
}

fn change() -> impl Strategy<Value = Change> {
    // About one in four is a delete (or leaves an absent object absent).
    const KEEP: f64 = 0.75;
    prop_oneof![
        gateway_key().prop_flat_map(|k| {
            proptest::option::weighted(KEEP, gateway(k.clone()))
                .prop_map(move |g| Change::Gateway(k.clone(), g))
        }),
        pick(CLASSES.map(String::from).to_vec()).prop_flat_map(|n| {
            proptest::option::weighted(KEEP, class(n.clone()))
                .prop_map(move |c| Change::Class(n.clone(), c))
        }),
        key_in(configuration_names()).prop_flat_map(|k| {
            proptest::option::weighted(KEEP, configuration(k.clone()))
                .prop_map(move |c| Change::Configuration(k.clone(), c))
        }),
        key_in(route_names()).prop_flat_map(|k| {
            proptest::option::weighted(KEEP, route(k.clone()))
                .prop_map(move |r| Change::Route(k.clone(), r))
        }),
        (namespace(), proptest::option::weighted(KEEP, labels()))
            .prop_map(|(n, l)| Change::Namespace(n, l)),
        key_in(deployment_names()).prop_flat_map(|k| {
            proptest::option::weighted(KEEP, deployment(k.clone()))
                .prop_map(move |d| Change::Deployment(k.clone(), d))
        }),
    ]
}

/// The gather of the Gateway `key`, given to `then` (`None`: no such Gateway).
fn with_gathered<T>(
    settings: &Settings,
    world: &World,
    key: &Key,
    then: impl FnOnce(Option<gateway_reconcile::Snapshot<'_>>) -> T,
) -> T {
    let mut reader = world.clone();
    reader.reconciling(&key.0, &key.1);
    let view = ready(gather(settings, &mut reader))
        .expect("an in-memory reader is always ready")
        .expect("the cluster's objects read");
    match view {
        View::Ready(gathered) => then(Some(gathered.snapshot().expect("a snapshot"))),
        View::Later(_) => then(None),
    }
}

/// What the gather of the Gateway `key` read, as JSON (`null`: no such Gateway).
fn gathered(settings: &Settings, world: &World, key: &Key) -> Value {
    with_gathered(settings, world, key, |snapshot| {
        let Some(snapshot) = snapshot else {
            return Value::Null;
        };
        json!({
            "gateway": snapshot.gateway,
            // What a reconcile reads of its class (`wake::class_change`); that it reads
            // nothing else is checked on the plans (`decided`).
            "class": snapshot.gateway_class.map(|class| json!({"name": class.metadata.name, "spec": class.spec})),
            "configuration": snapshot.configuration,
            "deployment": snapshot.deployment,
            "routes": snapshot.routes,
            "namespaceLabels": snapshot.namespace_labels,
        })
    })
}

/// What the Gateway `key`'s reconcile decides, as text: its Deployment write and its
/// settlement (the write taken as applied); empty for no such Gateway.
fn decided(settings: &Settings, world: &World, key: &Key) -> String {
    with_gathered(settings, world, key, |snapshot| {
        let Some(snapshot) = snapshot else {
            return String::new();
        };
        let now = "2026-06-01T00:00:00Z".parse().expect("a time");
        match plan(settings, snapshot, now) {
            Ok(Plan::Settled(settlement)) => format!("{settlement:?}"),
            Ok(Plan::Write(pending)) => {
                let write = format!("{:?}", pending.write());
                format!("{write} {:?}", pending.settle(WriteOutcome::Applied))
            }
            Err(error) => format!("{error}"),
        }
    })
}

/// Applies the change; answers whom the map wakes and whether the object changed at all.
fn apply(
    settings: &Settings,
    world: &mut World,
    change: &Change,
) -> (Woken, Vec<GatewayRef>, bool) {
    fn set<K: Ord, V: Clone + PartialEq>(
        map: &mut BTreeMap<K, V>,
        key: K,
        new: Option<&V>,
    ) -> (Option<V>, bool) {
        let old = match new {
            Some(new) => map.insert(key, new.clone()),
            None => map.remove(&key),
        };
        let changed = old.as_ref() != new;
        (old, changed)
    }
    let nobody = Woken::default();
    match change {
        Change::Gateway(key, new) => {
            let (old, changed) = set(&mut world.gateways, key.clone(), new.as_ref());
            (
                nobody,
                wake::gateway_change(old.as_ref(), new.as_ref()),
                changed,
            )
        }
        Change::Class(name, new) => {
            let (old, changed) = set(&mut world.classes, name.clone(), new.as_ref());
            (
                wake::class_change(name, old.as_ref(), new.as_ref()),
                Vec::new(),
                changed,
            )
        }
        Change::Configuration(key, new) => {
            let (_, changed) = set(&mut world.configurations, key.clone(), new.as_ref());
            let woken =
                wake::configuration_change(settings, &key.0, &key.1, world.classes.values());
            (woken, Vec::new(), changed)
        }
        Change::Route(key, new) => {
            let (old, changed) = set(&mut world.routes, key.clone(), new.as_ref());
            (
                nobody,
                wake::route_change(old.as_ref(), new.as_ref()),
                changed,
            )
        }
        Change::Namespace(name, new) => {
            let (old, changed) = set(&mut world.namespaces, name.clone(), new.as_ref());
            // The candidates, kept when indexed under the selector key.
            let candidates =
                wake::namespace_change(name, old.as_ref(), new.as_ref(), world.routes.values());
            let woken = candidates
                .into_iter()
                .filter(|candidate| {
                    world.gateways.values().any(|gateway| {
                        GatewayRef::of(gateway) == *candidate
                            && wake::gateway_keys(settings, gateway)
                                .contains(&WakeKey::NamespaceSelector)
                    })
                })
                .collect();
            (nobody, woken, changed)
        }
        Change::Deployment(key, new) => {
            let (old, changed) = set(&mut world.deployments, key.clone(), new.as_ref());
            (
                wake::deployment_change(old.as_ref(), new.as_ref()),
                Vec::new(),
                changed,
            )
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_change_wakes_every_gateway_whose_gather_it_alters(world in world(), change in change()) {
        let settings = Settings::default();
        let mut after = world.clone();
        let (woken, named, object_changed) = apply(&settings, &mut after, &change);

        // Every Gateway key of either side (a Gateway change adds or removes one).
        let mut keys: Vec<&Key> = world.gateways.keys().chain(after.gateways.keys()).collect();
        keys.sort();
        keys.dedup();
        let mut altered = 0;
        for key in keys {
            let before = gathered(&settings, &world, key);
            let now = gathered(&settings, &after, key);
            let me = GatewayRef::new(&key.0, &key.1);
            // Brute force: the index the embedder keeps, over the Gateways as they are.
            let is_woken = named.contains(&me)
                || after.gateways.get(key).or(world.gateways.get(key)).is_some_and(|gateway| {
                    woken.wakes(&me, &wake::gateway_keys(&settings, gateway))
                });
            let changed = before != now;
            altered += usize::from(changed);
            prop_assert!(
                !changed || is_woken,
                "{me} changed but was not woken by {change:?}: {woken:?} {named:?}"
            );
            if !is_woken {
                // Not woken: its reconcile would decide just what it did (for a class, this
                // is what lets its status and metadata wake nobody).
                prop_assert_eq!(
                    decided(&settings, &world, key),
                    decided(&settings, &after, key),
                    "{} not woken by {:?} but its plan changed", me, change
                );
                continue;
            }
            let gateway = after.gateways.get(key).or(world.gateways.get(key)).expect("a Gateway");
            match &change {
                // Exact: a woken Gateway is one whose gather changed; labels that did not
                // change wake nobody.
                Change::Namespace(..) => prop_assert!(
                    changed,
                    "{me} woken by {change:?} but nothing it reads changed"
                ),
                // Exact: a class wakes its Gateways only when what they read of it
                // changed, or when it is absent before and after.
                Change::Class(name, new) => prop_assert!(
                    changed || (new.is_none() && !world.classes.contains_key(name)),
                    "{me} woken by {change:?} but nothing it reads changed"
                ),
                // Exact for a change that alters the object (any event of a route wakes
                // the Gateways that read it, a resync's too).
                Change::Route(..) => prop_assert!(
                    changed || !object_changed,
                    "{me} woken by {change:?} but nothing it reads changed"
                ),
                Change::Gateway(changed_key, _) => prop_assert_eq!(changed_key, key),
                Change::Configuration((namespace, name), _) => {
                    let own = lookup::configuration_ref(&settings, gateway, None)
                        .is_some_and(|own| (own.namespace, own.name) == (namespace.as_str(), name.as_str()));
                    let by_class = after.classes.get(&gateway.spec.gateway_class_name)
                        .and_then(|class| lookup::class_configuration_ref(&settings, class))
                        .is_some_and(|default| (default.namespace, default.name) == (namespace.as_str(), name.as_str()));
                    prop_assert!(own || by_class, "{me} woken by {change:?} neither names it nor has a class that does");
                }
                Change::Deployment((namespace, name), new) => {
                    let lb = me.namespace == *namespace
                        && lookup::deployment_name(&settings, &me.name) == *name;
                    let owners: Vec<GatewayRef> = new.iter().chain(world.deployments.get(&(namespace.clone(), name.clone())))
                        .filter_map(lookup::deployment_gateway)
                        .map(|owner| GatewayRef::new(owner.namespace.unwrap_or_default(), owner.name))
                        .collect();
                    prop_assert!(lb || owners.contains(&me), "{me} woken by {change:?} neither by its LB name nor as its owner");
                }
            }
        }
        // A change of nothing alters nothing.
        prop_assert!(object_changed || altered == 0, "{change:?} changed nothing yet altered a gather");
    }
}

/// The strategies above reach the property: changes of every kind alter some Gateway's
/// gather (a property over changes that alter nothing would check nothing).
#[test]
fn the_generated_changes_alter_gathers_of_every_kind() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let settings = Settings::default();
    let mut runner = TestRunner::deterministic();
    let mut altered_by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..3000 {
        let world = world().new_tree(&mut runner).expect("a world").current();
        let change = change().new_tree(&mut runner).expect("a change").current();
        let mut after = world.clone();
        apply(&settings, &mut after, &change);
        let kind = match &change {
            Change::Gateway(..) => "Gateway",
            Change::Class(..) => "GatewayClass",
            Change::Configuration(..) => "GatewayConfiguration",
            Change::Route(..) => "L34Route",
            Change::Namespace(..) => "Namespace",
            Change::Deployment(..) => "Deployment",
        };
        let altered = world
            .gateways
            .keys()
            .any(|key| gathered(&settings, &world, key) != gathered(&settings, &after, key));
        if altered {
            *altered_by_kind.entry(kind).or_default() += 1;
        }
    }
    for kind in [
        "Gateway",
        "GatewayClass",
        "GatewayConfiguration",
        "L34Route",
        "Namespace",
        "Deployment",
    ] {
        assert!(
            altered_by_kind.get(kind).copied().unwrap_or(0) >= 10,
            "too few {kind} changes alter a gather: {altered_by_kind:?}"
        );
    }
}
