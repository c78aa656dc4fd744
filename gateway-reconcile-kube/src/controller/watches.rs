//! The watches of a run: one per resource, each filling a cache ([`Stores`]) and passing
//! the objects it touched on to the triggers once the cache shows them ([`once_cached`]).

use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use gateway_reconcile::lookup;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};

use super::context::Config;
use super::indexes::Indexes;
use super::stores::{DEPLOYMENT_METADATA, NAMESPACE_METADATA, Stores};
use crate::cached::{
    self, Cached, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
    GatewayConfiguration, L34Route, NamespaceMeta,
};
use crate::health::Health;
use crate::metrics::Metrics;
use crate::reflect::{self, Relists};
use crate::watch::StreamingLists;

/// The objects a watch touched, each once its cache shows it.
pub(super) type Touched<K> = BoxStream<'static, Result<K, watcher::Error>>;

/// The watches of a run: the caches a reconcile reads, and what each watch touched.
pub(super) struct Watches {
    /// The caches.
    pub(super) stores: Stores,
    /// The Gateways the Gateway watch touched (the controller's own trigger).
    pub(super) gateways: Touched<Gateway>,
    /// What every other watch touched.
    pub(super) triggers: Triggers,
}

/// What the watches of the other kinds touched, for the wake-ups (see `triggers`).
pub(super) struct Triggers {
    pub(super) classes: Touched<GatewayClass>,
    pub(super) configurations: Touched<GatewayConfiguration>,
    pub(super) routes: Touched<L34Route>,
    pub(super) deployments: Touched<CachedDeployment>,
    pub(super) deployment_meta: Touched<DeploymentMeta>,
    pub(super) namespaces: Touched<NamespaceMeta>,
}

impl Watches {
    /// Starts a watch per resource in `config`'s scope, each filling its cache (and the
    /// routes and Gateways filling `indexes` too). Nothing is listed before the streams
    /// are polled.
    pub(super) fn start(
        client: &Client,
        config: &Config,
        caches: &Caches<'_>,
        indexes: &Indexes,
    ) -> Self {
        let ns = config.namespace.as_deref();
        let watch = watcher::Config::default();
        let (classes, class_events) = caches.cached(
            "GatewayClass",
            Api::<GatewayClass>::all(client.clone()),
            watch.clone(),
            Deletions::Pass,
        );
        let (configurations, configuration_events) = caches.cached(
            "GatewayConfiguration",
            scoped::<GatewayConfiguration>(client, ns),
            watch.clone(),
            Deletions::Pass,
        );
        let (routes, route_events) = caches.cached_with(
            "L34Route",
            scoped::<L34Route>(client, ns),
            watch.clone(),
            Deletions::Pass,
            {
                let by_gateway = indexes.routes_by_gateway.clone();
                let by_namespace = indexes.routes_by_namespace.clone();
                move |event| {
                    by_gateway.apply(event);
                    by_namespace.apply(event);
                }
            },
        );

        // The LB Deployments whole; every Deployment by its metadata (see the controller's
        // module docs).
        let (deployments, deployment_events) = caches.cached(
            "Deployment",
            scoped::<CachedDeployment>(client, ns),
            watch.clone().labels(&lb_selector()),
            Deletions::Pass,
        );
        let (deployment_meta, deployment_meta_events) = caches.cached(
            DEPLOYMENT_METADATA,
            scoped::<DeploymentMeta>(client, ns),
            watch.clone(),
            Deletions::Pass,
        );

        // Every Namespace by its metadata: the labels a listener's namespace selector matches
        // (cluster-scoped: RBAC list and watch on namespaces).
        let (namespaces, namespace_events) = caches.cached(
            NAMESPACE_METADATA,
            Api::<NamespaceMeta>::all(client.clone()),
            watch.clone(),
            Deletions::Pass,
        );

        // A deleted Gateway has nothing left to reconcile (its Deployment is garbage).
        let (gateways, gateway_events) = caches.cached_with(
            "Gateway",
            scoped::<Gateway>(client, ns),
            watch,
            Deletions::Drop,
            {
                let index = indexes.gateways.clone();
                move |event| index.apply(event)
            },
        );
        Watches {
            stores: Stores {
                gateways,
                classes,
                configurations,
                routes,
                deployments,
                deployment_meta,
                namespaces,
                routes_by_gateway: indexes.routes_by_gateway.clone(),
                relists: caches.relists.clone(),
            },
            gateways: gateway_events.boxed(),
            triggers: Triggers {
                classes: class_events.boxed(),
                configurations: configuration_events.boxed(),
                routes: route_events.boxed(),
                deployments: deployment_events.boxed(),
                deployment_meta: deployment_meta_events.boxed(),
                namespaces: namespace_events.boxed(),
            },
        }
    }
}

/// `K` in `namespace`, or in every namespace.
fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The label selector of the LB Deployments' watch: the managed-by label the core puts on
/// every LB Deployment.
fn lb_selector() -> String {
    format!("{}={}", lookup::MANAGED_BY_LABEL, lookup::MANAGED_BY)
}

/// An object a watch caches.
trait Cacheable:
    Resource<DynamicType = ()> + Clone + std::fmt::Debug + DeserializeOwned + Send + Sync + 'static
{
    /// Why the core cannot read it, when it cannot.
    fn unreadable(&self) -> Option<&str> {
        None
    }
}

impl<K> Cacheable for Cached<K>
where
    K: cached::Kind + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    fn unreadable(&self) -> Option<&str> {
        self.read().err()
    }
}

impl Cacheable for DeploymentMeta {}

impl Cacheable for NamespaceMeta {}

/// What every watch cache of a run shares.
pub(super) struct Caches<'a> {
    health: &'a Arc<Health>,
    metrics: &'a Arc<Metrics>,
    relists: Arc<Relists>,
    /// Initial lists streamed where the server serves them ([`crate::watch`]): what the
    /// watches learnt of the server, shared.
    streaming_lists: Option<Arc<StreamingLists>>,
}

impl<'a> Caches<'a> {
    /// The caches' shared parts: watch errors kept in `health`, unreadable objects counted
    /// in `metrics`, initial lists streamed when `streaming_lists`.
    pub(super) fn new(
        health: &'a Arc<Health>,
        metrics: &'a Arc<Metrics>,
        streaming_lists: bool,
    ) -> Self {
        Caches {
            health,
            metrics,
            relists: Arc::new(Relists::default()),
            streaming_lists: streaming_lists.then(|| Arc::new(StreamingLists::default())),
        }
    }
}

impl Caches<'_> {
    /// A watch of `api` (of `kind`, as the probes name it) filling a new cache: the cache,
    /// and the objects the watch touched, each once the cache shows it (see [`once_cached`]).
    fn cached<K: Cacheable>(
        &self,
        kind: &'static str,
        api: Api<K>,
        watch: watcher::Config,
        deletions: Deletions,
    ) -> (
        Store<K>,
        impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
    ) {
        self.cached_with(kind, api, watch, deletions, |_| {})
    }

    /// [`Caches::cached`], with `index` seeing every watch event before the cache applies
    /// it (so an index is filled when the cache becomes ready).
    fn cached_with<K: Cacheable>(
        &self,
        kind: &'static str,
        api: Api<K>,
        watch: watcher::Config,
        deletions: Deletions,
        index: impl Fn(&watcher::Event<K>) + Send + 'static,
    ) -> (
        Store<K>,
        impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
    ) {
        let (store, writer) = reflector::store::<K>();
        // The watch's errors (a missing CRD, a forbidden list) are kept for the probes and
        // the cache sync timeout's message; the watcher retries with its backoff.
        let health = self.health.clone();
        let metrics = self.metrics.clone();
        let events = reflect::with_init(
            crate::watch::watcher(api, watch, self.streaming_lists.clone()).default_backoff(),
        )
        .inspect(move |event| match event {
            Err(error) => health.watch_error(kind, error),
            Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                if let Some(why) = object.unreadable() {
                    // Cached as unreadable: this object alone is skipped.
                    warn!(kind, object = %ObjectRef::from_obj(object), %why, "unreadable object");
                    metrics.unreadable(kind);
                }
            }
            Ok(_) => {}
        })
        .inspect(move |event| {
            if let Ok(event) = event {
                index(event);
            }
        });
        let events = once_cached(
            reflect::reflect(events, writer, self.relists.clone()),
            store.clone(),
            deletions,
        );
        (store, events)
    }
}

/// The backoff of the Controller's merged triggers: none. Each watch backs off on its own
/// errors (`default_backoff` in [`Caches::cached_with`]); a backoff on the merged stream would stop
/// polling every watch on any one's error, and double across the errors of different
/// watches: after an API server restart each dead watch surfaced one backoff later, and
/// the controller saw an edit only 143 s after the server was back (`tests/faults.rs`).
pub(super) struct NoTriggerBackoff;

impl Iterator for NoTriggerBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl kube::runtime::utils::Backoff for NoTriggerBackoff {
    fn reset(&mut self) {}
}

/// Whether [`once_cached`] passes deleted objects on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deletions {
    /// Deletions are triggers (the mapper wakes the Gateways the object concerned).
    Pass,
    /// Deletions are not (the watch of the reconciled kind itself).
    Drop,
}

/// The objects a watch touched, for the triggers, each passed on once the cache shows it.
///
/// kube-runtime's `touched_objects` passes a (re)list's objects on as they arrive, but the
/// cache is complete only at the list's end (`InitDone`): a reconcile triggered by a listed
/// object could read the cache from before the list (a Gateway created meanwhile is
/// missing, a moved route still names its old parent, a route looks deleted), and nothing
/// triggers it again. Here a list's objects are held until its end, by key only (the
/// objects themselves are in the cache), then passed on one by one as the cache has them.
/// An object deleted while the watch was down is simply absent from the relist: no event,
/// nobody woken; [`reflect::reflect`] passes those on as deletions at the relist's end
/// (with [`Deletions::Pass`], as deletions are).
fn once_cached<K>(
    events: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    store: Store<K>,
    deletions: Deletions,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    use futures::future::Either;
    // While a list is in progress: the keys of its objects.
    let mut listing: Option<Vec<ObjectRef<K>>> = None;
    events.flat_map(move |event| {
        let one = |out: Option<Result<K, watcher::Error>>| Either::Left(futures::stream::iter(out));
        match event {
            Err(error) => one(Some(Err(error))),
            Ok(watcher::Event::Apply(object)) => one(Some(Ok(object))),
            Ok(watcher::Event::Delete(object)) => match deletions {
                Deletions::Pass => one(Some(Ok(object))),
                Deletions::Drop => one(None),
            },
            Ok(watcher::Event::Init) => {
                listing = Some(Vec::new());
                one(None)
            }
            Ok(watcher::Event::InitApply(object)) => match &mut listing {
                Some(listed) => {
                    listed.push(reflect::key(&object));
                    one(None)
                }
                None => one(Some(Ok(object))),
            },
            Ok(watcher::Event::InitDone) => {
                let listed = listing.take().unwrap_or_default();
                let kind = std::any::type_name::<K>().rsplit("::").next();
                debug!(kind, listed = listed.len(), "watch listed");
                // A copy of one object at a time, as the triggers take them.
                let store = store.clone();
                Either::Right(futures::stream::iter(listed).filter_map(move |key| {
                    futures::future::ready(store.get(&key).map(|o| Ok(o.as_ref().clone())))
                }))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::StreamExt;
    use kube::ResourceExt;
    use kube::runtime::reflector::{self, ObjectRef, Store};
    use kube::runtime::watcher;

    use super::{Deletions, once_cached};
    use crate::cached::{Gateway, L34Route};
    use crate::controller::fixtures::{named_route, route};
    use crate::controller::triggers::RouteParents;
    use crate::reflect;

    /// Runs watch events through the reflector and [`once_cached`], and for each object passed
    /// on: its name, and whether the cache already showed that version of it.
    async fn settle_events(
        events: Vec<watcher::Event<L34Route>>,
        store: &Store<L34Route>,
        writer: reflector::store::Writer<L34Route>,
    ) -> Vec<(String, bool)> {
        let events = futures::stream::iter(events.into_iter().map(Ok));
        let events = reflect::reflect(events, writer, Arc::default());
        once_cached(events, store.clone(), Deletions::Pass)
            .map(|route| {
                let route = route.expect("no error");
                let cached = store.get(&ObjectRef::from_obj(&route));
                let parents = |r: &L34Route| r.read().map(|r| r.spec.parent_refs.clone()).ok();
                let shown = cached.is_some_and(|c| parents(&c) == parents(&route));
                (route.name_any(), shown)
            })
            .collect()
            .await
    }

    #[tokio::test]
    async fn a_relist_passes_its_objects_on_once_cached_and_the_ones_it_lost() {
        let (store, writer) = reflector::store::<L34Route>();
        let passed = settle_events(
            vec![
                watcher::Event::Init,
                watcher::Event::InitApply(named_route("kept", "a")),
                watcher::Event::InitApply(named_route("lost", "a")),
                watcher::Event::InitDone,
                // The watch restarts: `kept` moved to b and `lost` was deleted meanwhile.
                watcher::Event::Init,
                watcher::Event::InitApply(named_route("kept", "b")),
                watcher::Event::InitDone,
                watcher::Event::Apply(named_route("kept", "c")),
            ],
            &store,
            writer,
        )
        .await;
        assert_eq!(
            passed,
            vec![
                ("kept".to_owned(), true),
                ("lost".to_owned(), true),
                // Passed on as a deletion at the relist's end: gone from the cache.
                ("lost".to_owned(), false),
                ("kept".to_owned(), true),
                ("kept".to_owned(), true),
            ]
        );
    }

    #[tokio::test]
    async fn a_route_listed_at_start_then_moved_wakes_its_old_gateway() {
        let (store, writer) = reflector::store::<L34Route>();
        let parents = RouteParents::new(store.clone());
        let events = futures::stream::iter(
            [
                watcher::Event::Init,
                watcher::Event::InitApply(route("a")),
                watcher::Event::InitDone,
                watcher::Event::Apply(route("b")),
            ]
            .map(Ok),
        );
        let events = reflect::reflect(events, writer, Arc::default());
        let woken: Vec<Vec<ObjectRef<Gateway>>> = once_cached(events, store, Deletions::Pass)
            .map(|route| parents.wake(&route.expect("no error")))
            .collect()
            .await;
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");
        assert_eq!(woken, vec![vec![gw("a")], vec![gw("a"), gw("b")]]);
    }
}
