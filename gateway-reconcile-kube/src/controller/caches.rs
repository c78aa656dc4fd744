//! The watch caches a reconcile reads, their readiness, and the stream of objects each
//! watch touched, passed on to the triggers once the cache shows them.

use super::*;

/// The caches a reconcile reads.
#[derive(Clone)]
pub(super) struct Stores {
    pub(super) gateways: Store<Gateway>,
    pub(super) classes: Store<GatewayClass>,
    pub(super) configurations: Store<GatewayConfiguration>,
    pub(super) routes: Store<L34Route>,
    /// The LB Deployments (our managed-by label), whole.
    pub(super) deployments: Store<CachedDeployment>,
    /// Every Deployment of the scope, by its metadata.
    pub(super) deployment_meta: Store<DeploymentMeta>,
    /// Every Namespace, by its metadata (the labels a namespace selector matches).
    pub(super) namespaces: Store<NamespaceMeta>,
    /// The L34Routes by the Gateways they name.
    pub(super) routes_by_gateway: Arc<RouteIndex>,
    /// The relists in progress (a reconcile reads no cache during one).
    pub(super) relists: Arc<Relists>,
}

impl Stores {
    /// Resolves once every cache has its initial list (`false`: a cache's writer is gone).
    ///
    /// One future, shared by every reconcile: kube-runtime's `Store::wait_until_ready`
    /// keeps a single waker per store (a oneshot receiver), so of several tasks waiting on
    /// one store only the last to poll is woken when it becomes ready; the others would
    /// wait forever, each holding a concurrency slot and its Gateway (whose later triggers
    /// are held behind the stuck reconcile). Here only the shared future waits on the
    /// stores, and [`Shared`] wakes every task waiting on it.
    ///
    /// The caches are waited on together, each marked synced in `health` as it fills (the
    /// readiness probe, and the sync timeout naming the ones that did not).
    pub(super) fn ready(&self, health: Arc<Health>) -> Ready {
        const KINDS: [&str; 7] = [
            "Gateway",
            "GatewayClass",
            "GatewayConfiguration",
            "L34Route",
            "Deployment",
            DEPLOYMENT_METADATA,
            NAMESPACE_METADATA,
        ];
        for kind in KINDS {
            health.expect(kind);
        }
        let stores = self.clone();
        async move {
            let waits = [
                stores.gateways.wait_until_ready().boxed(),
                stores.classes.wait_until_ready().boxed(),
                stores.configurations.wait_until_ready().boxed(),
                stores.routes.wait_until_ready().boxed(),
                stores.deployments.wait_until_ready().boxed(),
                stores.deployment_meta.wait_until_ready().boxed(),
                stores.namespaces.wait_until_ready().boxed(),
            ];
            let filled =
                futures::future::join_all(KINDS.into_iter().zip(waits).map(|(kind, wait)| {
                    let health = health.clone();
                    async move {
                        let filled = wait.await.is_ok();
                        if filled {
                            debug!(kind, "cache ready");
                            health.synced(kind);
                        }
                        filled
                    }
                }))
                .await;
            let all = filled.into_iter().all(|f| f);
            if all {
                debug!("every cache ready: reconciles start");
            }
            all
        }
        .boxed()
        .shared()
    }
}

/// See [`Stores::ready`].
pub(super) type Ready = Shared<BoxFuture<'static, bool>>;

/// The metadata cache of every Deployment, as the probes and metrics name it.
pub(super) const DEPLOYMENT_METADATA: &str = "DeploymentMetadata";

/// The metadata cache of every Namespace, as the probes and metrics name it.
pub(super) const NAMESPACE_METADATA: &str = "NamespaceMetadata";

/// The label selector of the LB Deployments' watch: the managed-by label the core puts on
/// every LB Deployment.
pub(super) fn lb_selector() -> String {
    format!("{}={}", lookup::MANAGED_BY_LABEL, lookup::MANAGED_BY)
}

/// Whether a Deployment's labels select it into the LB watch.
pub(super) fn lb_labeled(meta: &DeploymentMeta) -> bool {
    meta.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(lookup::MANAGED_BY_LABEL))
        .is_some_and(|value| value == lookup::MANAGED_BY)
}

/// An object a watch caches.
pub(super) trait Cacheable:
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
    pub(super) health: &'a Arc<Health>,
    pub(super) metrics: &'a Arc<Metrics>,
    pub(super) relists: Arc<Relists>,
    /// Initial lists streamed where the server serves them ([`crate::watch`]): what the
    /// watches learnt of the server, shared.
    pub(super) streaming_lists: Option<Arc<crate::watch::StreamingLists>>,
}

impl Caches<'_> {
    /// A watch of `api` (of `kind`, as the probes name it) filling a new cache: the cache,
    /// and the objects the watch touched, each once the cache shows it (see [`once_cached`]).
    pub(super) fn cached<K: Cacheable>(
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
    pub(super) fn cached_with<K: Cacheable>(
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
/// errors (`default_backoff` in [`cached`]); a backoff on the merged stream would stop
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
pub(super) enum Deletions {
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
pub(super) fn once_cached<K>(
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
    use super::super::tests::named_route;
    use super::super::triggers::tests::route;
    use super::*;

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

    /// A waker that records whether it was woken.
    struct Flag(std::sync::atomic::AtomicBool);

    impl futures::task::ArcWake for Flag {
        fn wake_by_ref(flag: &Arc<Self>) {
            flag.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn every_reconcile_waiting_for_the_caches_is_woken_when_they_are_ready() {
        use std::task::{Context as TaskContext, Poll};

        let (gateways, mut gateway_writer) = reflector::store::<Gateway>();
        let (classes, mut class_writer) = reflector::store::<GatewayClass>();
        let (configurations, mut configuration_writer) = reflector::store::<GatewayConfiguration>();
        let (routes, mut route_writer) = reflector::store::<L34Route>();
        let (deployments, mut deployment_writer) = reflector::store::<CachedDeployment>();
        let (deployment_meta, mut meta_writer) = reflector::store::<DeploymentMeta>();
        let (namespaces, mut namespace_writer) = reflector::store::<NamespaceMeta>();
        let stores = Stores {
            gateways,
            classes,
            configurations,
            routes,
            deployments,
            deployment_meta,
            namespaces,
            routes_by_gateway: Arc::new(route_index()),
            relists: Arc::default(),
        };
        // The Gateway cache is ready first (kube-runtime holds every reconcile until then).
        gateway_writer.apply_watcher_event(&watcher::Event::Init);
        gateway_writer.apply_watcher_event(&watcher::Event::InitDone);

        // Four reconciles (four tasks, four wakers) wait for the other caches.
        let health = Arc::new(Health::default());
        let ready = stores.ready(health.clone());
        let mut waiting: Vec<(Arc<Flag>, Ready)> = (0..4)
            .map(|_| (Arc::new(Flag(false.into())), ready.clone()))
            .collect();
        for (flag, wait) in &mut waiting {
            let waker = futures::task::waker(flag.clone());
            assert_eq!(
                wait.poll_unpin(&mut TaskContext::from_waker(&waker)),
                Poll::Pending
            );
        }

        // Which caches are missing is known while waiting (the sync timeout names them).
        let unsynced: Vec<&str> = health.unsynced().iter().map(|u| u.kind).collect();
        assert_eq!(
            unsynced,
            [
                "Deployment",
                "DeploymentMetadata",
                "GatewayClass",
                "GatewayConfiguration",
                "L34Route",
                "NamespaceMetadata"
            ]
        );
        class_writer.apply_watcher_event(&watcher::Event::Init);
        class_writer.apply_watcher_event(&watcher::Event::InitDone);
        configuration_writer.apply_watcher_event(&watcher::Event::Init);
        configuration_writer.apply_watcher_event(&watcher::Event::InitDone);
        route_writer.apply_watcher_event(&watcher::Event::Init);
        route_writer.apply_watcher_event(&watcher::Event::InitDone);
        deployment_writer.apply_watcher_event(&watcher::Event::Init);
        deployment_writer.apply_watcher_event(&watcher::Event::InitDone);
        meta_writer.apply_watcher_event(&watcher::Event::Init);
        meta_writer.apply_watcher_event(&watcher::Event::InitDone);
        namespace_writer.apply_watcher_event(&watcher::Event::Init);
        namespace_writer.apply_watcher_event(&watcher::Event::InitDone);

        // Every waiting task is woken (a task never woken would wait forever), and ready.
        for (i, (flag, wait)) in waiting.iter_mut().enumerate() {
            let woken = flag.0.load(std::sync::atomic::Ordering::SeqCst);
            let waker = futures::task::waker(flag.clone());
            let poll = wait.poll_unpin(&mut TaskContext::from_waker(&waker));
            assert!(woken, "waiting reconcile {i} was never woken");
            assert_eq!(poll, Poll::Ready(true), "waiting reconcile {i}");
        }
        assert!(health.ready(), "{:?}", health.unsynced());
    }
}
