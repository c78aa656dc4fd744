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
