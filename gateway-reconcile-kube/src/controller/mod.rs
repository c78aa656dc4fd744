//! The controller: watches and caches, the reconcile of one Gateway, and the run loop.
//!
//! # Reads
//!
//! One watch per resource feeds both a cache and the controller's triggers: Gateways (the
//! controller's own cache), GatewayClasses, GatewayConfigurations, L34Routes, the LB
//! Deployments (a watch selected by the managed-by label, whole objects) and every
//! Deployment of the scope by its metadata alone (a metadata-only watch). A reconcile reads
//! only these caches: a steady-state reconcile makes no API request at all. The first
//! reconciles wait until every cache has its initial list (one shared future, see
//! `Stores::ready`), and a list reaches the triggers only once it is in the cache (see
//! `settled`). Every cache but the metadata one holds the core's own wire types, read once
//! per watch event ([`crate::cached`]): a reconcile borrows them and converts none, and an
//! object the core's type cannot read is cached alone as unreadable (reported, and an
//! input error of the Gateways that use it) instead of failing the list of its kind.
//!
//! Each cache is written by the crate-private `reflect` module: a relist is applied in
//! place (no second whole copy of the kind), and reconciles wait while one runs. The watches list with
//! paged LISTs, or with streaming lists (`watch` with `sendInitialEvents=true`) when
//! [`Config::streaming_lists`] is set.
//!
//! Triggers, besides a Gateway's own changes:
//!
//! - a GatewayClass: the Gateways of that class;
//! - a GatewayConfiguration: the Gateways whose `parametersRef` names it;
//! - an L34Route: the Gateways its old and its new `parentRefs` name (an edit that moves a
//!   route wakes the Gateway it left, which loses an address);
//! - a Deployment: its controller Gateway, and the Gateway whose LB Deployment name it has.
//!   The second wakes a Gateway stuck on a name collision when the foreign Deployment
//!   changes or goes away: the metadata watch sees every Deployment of the scope (the
//!   label-selected one would hide the colliding ones); it wakes nobody for a Deployment
//!   that carries our managed-by label, which the LB watch reports already.
//!
//! # The LB Deployment of a Gateway
//!
//! The LB Deployments are cached whole as the core's `wire::Deployment` (every field kept,
//! so the update, a replace of the observed object, loses no field newer than k8s-openapi),
//! without `managedFields` (never written back, and the largest part of most objects).
//! Every other Deployment is held by its metadata only: the controller never caches a
//! foreign pod template. A reconcile looks the Gateway's LB name up in the LB cache, then
//! in the metadata cache (`Inputs::gather`):
//!
//! - in the LB cache: that object, whole;
//! - in neither: none (a create);
//! - only in the metadata cache, carrying our managed-by label: the LB watch has not
//!   delivered it yet (or the metadata watch has not yet seen the label go): the reconcile
//!   waits for the watches to agree, as for an own write;
//! - only in the metadata cache, without the label, and its controller ownerReference is
//!   this Gateway (same uid): our own Deployment whose label someone removed. The core
//!   compares and replaces it whole, so that one object is read with a GET for this
//!   reconcile; the replace restores the label, and the LB watch has it again;
//! - only in the metadata cache, not ours: a name collision, which the core reports from
//!   the metadata alone (its ownerReferences: [`cached::deployment_of_meta`]).
//!
//! The metadata watch covers the LB Deployments too (a few hundred bytes each), so a
//! Deployment that moves between the two watches (its label removed or restored) is never
//! absent from both: a moment of absence would plan a create.
//!
//! # Operations
//!
//! [`run_with`] adds what an operator runs the controller with: leader election (a standby
//! keeps warm caches and reconciles nothing; see [`crate::leader`]), the caches' readiness
//! and their sync timeout ([`crate::health`]), [`crate::metrics`], and the per-Gateway
//! backoff ([`crate::backoff`]) that every "at once" requeue and every failed reconcile
//! goes through: a requeue of zero from the reconcile means "at once" and is never run at
//! round-trip speed.
//!
//! # Writes
//!
//! See [`crate::write`](mod@crate::write) for the Deployment verbs. The Gateway status is a JSON merge patch
//! on `gateways/status` carrying the cached Gateway's `resourceVersion`: a Gateway changed
//! since (say, another client added its own condition) answers 409, and the reconcile runs
//! again at once with the newer object, so the foreign condition is kept. Events are
//! recorded only after the status write succeeded (or when there was none to make).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, Shared};
use futures::{Future, FutureExt, Stream, StreamExt};
use gateway_reconcile::{InputError, Settings, lookup, wire};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ApiResource};
use kube::runtime::controller::{self, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};

use crate::backoff::{self, Backoff};
use crate::cached::{
    self, Cached, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
    GatewayConfiguration, L34Route,
};
use crate::class_status::ClassStatus;
use crate::health::{Health, Unsynced};
use crate::leader::{Elector, LeaderError, Leadership};
use crate::metrics::{self, Metrics, ReconcileResult, RequeueKind};
use crate::reflect::{self, Relists};
use crate::transport;
use gateway_reconcile::Requeue;
use gateway_reconcile::reconcile::Driver;

mod port;

/// The Gateway API group, the default of a parentRef's `group`.
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// What the controller runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The core's settings.
    pub settings: Settings,
    /// The LB Deployment template.
    pub template: wire::Deployment,
    /// Watch this namespace only (Gateways, GatewayConfigurations, L34Routes,
    /// Deployments); `None` watches the whole cluster. GatewayClasses are cluster-scoped.
    pub namespace: Option<String>,
    /// Who records the Events.
    pub reporter: Reporter,
    /// How many Gateways reconcile at once (0: no limit).
    pub concurrency: u16,
    /// The watches' initial lists as streaming lists (one `watch` with
    /// `sendInitialEvents=true` per watch, the objects streamed one by one) instead of
    /// paged LISTs (500 objects a page); a watch the API server refuses them for falls back
    /// to paged LISTs (see the crate-private `watch` module).
    pub streaming_lists: bool,
}

/// Why a reconcile stopped before it settled. The Deployment write is never one: its
/// failures are outcomes the core settles.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A watch cache's writer is gone (the controller is shutting down).
    #[error("watch cache closed")]
    CacheClosed,
    /// The Gateway status write failed (other than by a conflict, which requeues at once).
    #[error("Gateway status write: {source}")]
    StatusWrite {
        /// The answer.
        #[source]
        source: kube::Error,
        /// The core's requeue for the settlement that was not written: the retry waits at
        /// least this long.
        requeue_after: Option<Duration>,
    },
    /// An object the core cannot work with (no uid, a malformed timestamp, ...).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The GET of an own LB Deployment the LB cache does not hold (its managed-by label
    /// was removed) failed.
    #[error("LB Deployment read: {source}")]
    Read {
        /// The answer.
        #[source]
        source: kube::Error,
    },
}

/// The caches a reconcile reads.
#[derive(Clone)]
struct Stores {
    gateways: Store<Gateway>,
    classes: Store<GatewayClass>,
    configurations: Store<GatewayConfiguration>,
    routes: Store<L34Route>,
    /// The LB Deployments (our managed-by label), whole.
    deployments: Store<CachedDeployment>,
    /// Every Deployment of the scope, by its metadata.
    deployment_meta: Store<DeploymentMeta>,
    /// The L34Routes by the Gateways they name.
    routes_by_gateway: Arc<RouteIndex>,
    /// The relists in progress (a reconcile reads no cache during one).
    relists: Arc<Relists>,
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
    fn ready(&self, health: Arc<Health>) -> Ready {
        const KINDS: [&str; 6] = [
            "Gateway",
            "GatewayClass",
            "GatewayConfiguration",
            "L34Route",
            "Deployment",
            DEPLOYMENT_METADATA,
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
type Ready = Shared<BoxFuture<'static, bool>>;

/// The metadata cache of every Deployment, as the probes and metrics name it.
const DEPLOYMENT_METADATA: &str = "DeploymentMetadata";

/// The label selector of the LB Deployments' watch: the managed-by label the core puts on
/// every LB Deployment.
fn lb_selector() -> String {
    format!("{}={}", lookup::MANAGED_BY_LABEL, lookup::MANAGED_BY)
}

/// Whether a Deployment's labels select it into the LB watch.
fn lb_labeled(meta: &DeploymentMeta) -> bool {
    meta.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(lookup::MANAGED_BY_LABEL))
        .is_some_and(|value| value == lookup::MANAGED_BY)
}

/// Own writes the caches have not seen yet, by Gateway: the `resourceVersion` the object
/// had before the write (`None`: the Deployment did not exist). While a cache still shows
/// that version, it is older than our own write: deciding from it would repeat the write
/// (a 409 at best), so the reconcile waits for the watch event, which triggers it anyway.
/// A write that left the version unchanged (a no-op) is not recorded.
#[derive(Default)]
struct Pending {
    deployments: Mutex<HashMap<ObjectRef<Gateway>, Option<String>>>,
    statuses: Mutex<HashMap<ObjectRef<Gateway>, String>>,
}

impl Pending {
    /// Whether the cache still shows the version from before our write; forgets the write
    /// once it does not.
    fn stale<V: PartialEq>(
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

    fn record<V: PartialEq>(
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

/// The requeue while the cache has not seen an own write: "at once", which the per-Gateway
/// backoff turns into 5 ms, 10 ms, ... (the watch event usually comes first and triggers
/// the reconcile anyway).
const AWAIT_OWN_WRITE: Requeue = Requeue::Immediately;

/// What a reconcile needs besides the Gateway.
struct Context {
    /// Every cache has its initial list.
    ready: Ready,
    pending: Pending,
    /// The reconcile loop, with the record of the last successful write of each Gateway's
    /// LB Deployment (in memory only: while it holds, the drift the API server itself made
    /// in that write is not written again; a restarted controller has none and writes
    /// each such Deployment once more).
    driver: Driver,
    /// The LB Deployment template (shared with each reconcile's inputs).
    template: Arc<wire::Deployment>,
    client: Client,
    config: Config,
    stores: Stores,
    recorder: Recorder,
    deployment_resource: ApiResource,
    /// Failures in a row by Gateway (see [`crate::backoff`]).
    backoff: Backoff<ObjectRef<Gateway>>,
    metrics: Arc<Metrics>,
    /// Whether this process leads: a standby reconciles nothing.
    leadership: Leadership,
}

/// `apps/v1` Deployment as a dynamic resource.
fn deployment_resource() -> ApiResource {
    ApiResource::erase::<Deployment>(&())
}

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

/// How many times the controller's client repeats a request the API server answered with
/// 429, 503 or 504, before the answer reaches the caller (see [`client`]).
pub const CLIENT_RETRIES: u32 = 3;

/// The first wait before such a repeat; each next one doubles (with jitter), so the three
/// take well under a second in all.
pub const CLIENT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// The client [`run`] is meant for: `config` with a short retry budget instead of
/// kube-rs's default one. Call it inside a Tokio runtime (the retry needs a buffer task).
///
/// kube-rs retries a 429, 503 or 504 answer by default up to 15 times, with a backoff
/// doubling from 5 ms, inside the request. A Deployment write the API server keeps
/// refusing with a 503 (an admission webhook that is down, an overloaded server) would
/// reach the core only minutes later, all the while holding the Gateway's reconcile, and
/// the Gateway's status would say nothing: on a real kube-apiserver one such write was
/// sent 16 times over five minutes. Here such an answer is repeated [`CLIENT_RETRIES`]
/// times from [`CLIENT_RETRY_DELAY`] on: a passing blip (a 429 from API Priority and
/// Fairness) is absorbed without a status write, and a lasting failure reaches the core
/// within a second and gets the core's answer: `ApplyFailed`, its own backoff, `Degraded`
/// after `degradedAfter`. A refused list or watch is retried with the watcher's backoff.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let client = gateway_reconcile_kube::controller::client(kube::Config::infer().await?)?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
///
/// This is [`client_with`] with [`ClientOptions::default`]: controller-runtime's rate
/// limit, no write gate, metrics into a registry of its own.
pub fn client(config: kube::Config) -> Result<Client, kube::Error> {
    client_with(config, ClientOptions::default())
}

/// What the controller's client is built with besides the kubeconfig.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Requests a second after the burst (`--qps`; ≤ 0: no limit).
    pub qps: f32,
    /// Requests that may go at once (`--burst`).
    pub burst: u32,
    /// Where the requests are counted.
    pub metrics: Arc<Metrics>,
    /// Writes go out only while this process may write (the leader's write gate).
    pub leadership: Leadership,
    /// The `User-Agent` of every request (the audit log's `userAgent`).
    pub user_agent: Option<String>,
}

/// No client-side rate limit by default (`≤ 0`), as controller-runtime's `GetConfig` since
/// it relies on the API server's priority and fairness (v0.23, Meridio-2's, sets `QPS = -1`
/// when none is given). The older 20 a second paced a start of 1,000 Gateways (3,000
/// writes) to 149 s against 12 s without. `--qps` and `--burst` set one.
pub const DEFAULT_QPS: f32 = 0.0;
/// The burst of a client-side rate limit, when `--qps` sets one (client-go's 20/30 pair).
pub const DEFAULT_BURST: u32 = 30;

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            qps: DEFAULT_QPS,
            burst: DEFAULT_BURST,
            metrics: Arc::default(),
            leadership: Leadership::always(),
            user_agent: None,
        }
    }
}

/// The controller's client: the short retry budget of [`client`], and below it (each
/// repeat passes through them) the layers of [`crate::transport`]: the rate limit, which
/// also honours `Retry-After`, the write gate of `options.leadership`, the request metrics.
pub fn client_with(
    mut config: kube::Config,
    options: ClientOptions,
) -> Result<Client, kube::Error> {
    use kube::client::ClientBuilder;
    use kube::client::retry::RetryPolicy;
    config.default_retry = false;
    if let Some(agent) = &options.user_agent {
        let agent =
            http::HeaderValue::from_str(agent).map_err(|e| kube::Error::Service(Box::new(e)))?;
        config.headers.push((http::header::USER_AGENT, agent));
    }
    let policy = RetryPolicy::new(
        CLIENT_RETRY_DELAY,
        CLIENT_RETRY_DELAY * 8,
        CLIENT_RETRIES,
        // The rate limit below holds the repeats for a `Retry-After` (bounded): the policy
        // itself would wait as long as the server says.
        false,
    )
    .map_err(|e| kube::Error::Service(e.into()))?;
    Ok(ClientBuilder::try_from(config)?
        .with_layer(&transport::RequestMetricsLayer(options.metrics.clone()))
        .with_layer(&transport::WriteGateLayer {
            leadership: options.leadership.clone(),
            metrics: options.metrics.clone(),
        })
        .with_layer(&transport::RateLimitLayer::new(options.qps, options.burst))
        // `Retry` needs a service it can clone; kube's boxed stack is not.
        .with_layer(&tower::buffer::BufferLayer::new(1024))
        .with_layer(&tower::retry::RetryLayer::new(policy))
        .build())
}

/// Runs the controller until `shutdown` completes (then finishes the reconciles in
/// flight and returns), without leader election, probes or a metrics endpoint; a cache
/// that does not sync within [`DEFAULT_CACHE_SYNC_TIMEOUT`] ends it with an error log.
///
/// Give it a client built by [`client`], so that a refused write reaches the core at once.
pub async fn run(
    client: Client,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    if let Err(error) = run_with(client, config, Operations::default(), shutdown).await {
        tracing::error!(%error, "controller stopped");
    }
}

/// controller-runtime's `CacheSyncTimeout` default.
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// What [`run_with`] adds to a run.
pub struct Operations {
    /// Where the metrics go (the same registry as the client's, see [`ClientOptions`]).
    pub metrics: Arc<Metrics>,
    /// The caches' readiness, for the probes.
    pub health: Arc<Health>,
    /// Whether this process leads (the same as the client's write gate).
    pub leadership: Leadership,
    /// The election that opens `leadership` (`None`: leader election off, and
    /// `leadership` must then be [`Leadership::always`]).
    pub elector: Option<Elector>,
    /// How long the caches may take to get their initial lists.
    pub cache_sync_timeout: Duration,
}

impl Default for Operations {
    fn default() -> Self {
        Operations {
            metrics: Arc::default(),
            health: Arc::default(),
            leadership: Leadership::always(),
            elector: None,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
        }
    }
}

/// Why [`run_with`] stopped before a shutdown was asked for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A watch cache did not get its initial list in time (a missing CRD, an RBAC gap).
    #[error("caches not synced within {timeout:?}: {}", list(.unsynced))]
    CacheSync {
        /// The cache sync timeout.
        timeout: Duration,
        /// The caches without their list, with their watches' last errors.
        unsynced: Vec<Unsynced>,
    },
    /// Leadership was lost (reconciling stopped at once).
    #[error(transparent)]
    Leader(#[from] LeaderError),
}

fn list(unsynced: &[Unsynced]) -> String {
    unsynced
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// [`run`] with `operations`: returns `Ok` after `shutdown` (the reconciles in flight
/// finished, the lease given up when held), and an error at once when leadership is lost
/// (the reconciles in flight are dropped; the write gate is already closed) or the caches
/// do not sync in time. The caller exits non-zero on an error, so that the Deployment
/// restarts the process, as controller-runtime's manager does.
pub async fn run_with(
    client: Client,
    config: Config,
    operations: Operations,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), RunError> {
    let Operations {
        metrics,
        health,
        leadership,
        elector,
        cache_sync_timeout,
    } = operations;
    let namespace = config.namespace.clone();
    let ns = namespace.as_deref();
    let watch = watcher::Config::default();
    let caches = Caches {
        health: &health,
        metrics: &metrics,
        relists: Arc::new(Relists::default()),
        streaming_lists: config
            .streaming_lists
            .then(|| Arc::new(crate::watch::StreamingLists::default())),
    };

    let (classes, class_events) = caches.cached(
        "GatewayClass",
        Api::<GatewayClass>::all(client.clone()),
        watch.clone(),
        Deletions::Pass,
    );
    let (configurations, configuration_events) = caches.cached(
        "GatewayConfiguration",
        scoped::<GatewayConfiguration>(&client, ns),
        watch.clone(),
        Deletions::Pass,
    );
    let routes_by_gateway = Arc::new(route_index());
    let (routes, route_events) = caches.cached_with(
        "L34Route",
        scoped::<L34Route>(&client, ns),
        watch.clone(),
        Deletions::Pass,
        {
            let index = routes_by_gateway.clone();
            move |event| index.apply(event)
        },
    );

    // The LB Deployments whole; every Deployment by its metadata (see the module docs).
    let (deployments, deployment_events) = caches.cached(
        "Deployment",
        scoped::<CachedDeployment>(&client, ns),
        watch.clone().labels(&lb_selector()),
        Deletions::Pass,
    );
    let (deployment_meta, deployment_meta_events) = caches.cached(
        DEPLOYMENT_METADATA,
        scoped::<DeploymentMeta>(&client, ns),
        watch.clone(),
        Deletions::Pass,
    );

    // A deleted Gateway has nothing left to reconcile (its Deployment is garbage).
    let gateways_by = Arc::new(gateway_index(&config.settings));
    let (gateways, gateway_events) = caches.cached_with(
        "Gateway",
        scoped::<Gateway>(&client, ns),
        watch,
        Deletions::Drop,
        {
            let index = gateways_by.clone();
            move |event| index.apply(event)
        },
    );
    let controller = Controller::for_stream(gateway_events, gateways.clone())
        .with_config(controller::Config::default().concurrency(config.concurrency))
        .trigger_backoff(NoTriggerBackoff);
    let stores = Stores {
        gateways: gateways.clone(),
        classes,
        configurations,
        routes: routes.clone(),
        deployments,
        deployment_meta,
        routes_by_gateway,
        relists: caches.relists.clone(),
    };
    let ready = stores.ready(health.clone());
    let context = Arc::new(Context {
        ready: ready.clone(),
        pending: Pending::default(),
        driver: Driver::new(config.settings.clone()),
        template: Arc::new(config.template.clone()),
        recorder: Recorder::new(client.clone(), config.reporter.clone()),
        client,
        config: config.clone(),
        stores: stores.clone(),
        deployment_resource: deployment_resource(),
        backoff: Backoff::default(),
        metrics: metrics.clone(),
        leadership: leadership.clone(),
    });
    metrics.observe(Arc::new(Observed {
        stores,
        settings: config.settings.clone(),
        context: Arc::downgrade(&context),
    }));

    let by_class = gateways_by.clone();
    let by_configuration = gateways_by;
    let route_parents = RouteParents::new(routes);
    let prefix = config.settings.deployment_prefix.clone();
    let meta_prefix = prefix.clone();

    let class_status = ClassStatus::spawn(
        context.client.clone(),
        config.settings.clone(),
        leadership.clone(),
    );
    let controller = controller
        .watches_stream(class_events, move |class| {
            class_status.settle(&class);
            by_class.get(&GatewayKey::Class(class.name_any()))
        })
        .watches_stream(configuration_events, move |conf| {
            let namespace = conf.namespace().unwrap_or_default();
            by_configuration.get(&GatewayKey::Configuration(namespace, conf.name_any()))
        })
        .watches_stream(route_events, move |route| route_parents.wake(&route))
        .watches_stream(deployment_events, move |deployment| {
            gateways_of_deployment(&prefix, &deployment)
        })
        .watches_stream(deployment_meta_events, move |meta| {
            // One with our label is the LB watch's to report.
            if lb_labeled(&meta) {
                Vec::new()
            } else {
                gateways_of_meta(&meta_prefix, &meta)
            }
        })
        // A standby's reconciles return at once; winning the lease reconciles everything.
        .reconcile_all_on(leadership.acquired())
        .graceful_shutdown_on(shutdown)
        .run(reconcile_leading, error_policy, context)
        .for_each(|result| async move {
            match result {
                Ok((gateway, action)) => debug!(%gateway, ?action, "reconciled"),
                Err(error) => warn!(%error, "controller"),
            }
        });

    // The caches must fill in time, whether or not this process leads.
    let sync_health = health.clone();
    let synced = async move {
        match tokio::time::timeout(cache_sync_timeout, ready).await {
            Ok(_) => futures::future::pending::<RunError>().await,
            Err(_) => RunError::CacheSync {
                timeout: cache_sync_timeout,
                unsynced: sync_health.unsynced(),
            },
        }
    };
    let mut elector = elector;
    let election = async {
        match elector.as_mut() {
            Some(elector) => RunError::Leader(elector.run().await),
            None => futures::future::pending::<RunError>().await,
        }
    };
    let outcome = tokio::select! {
        () = controller => Ok(()),
        error = election => Err(error),
        error = synced => Err(error),
    };
    if let (Ok(()), Some(elector)) = (&outcome, elector.as_mut()) {
        elector.release().await;
    }
    outcome
}

/// What the metrics read at scrape time (see [`metrics::Observe`]).
struct Observed {
    stores: Stores,
    settings: Settings,
    /// Weak: the registry outlives the run.
    context: std::sync::Weak<Context>,
}

impl metrics::Observe for Observed {
    fn cached_objects(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("Gateway", self.stores.gateways.state().len()),
            ("GatewayClass", self.stores.classes.state().len()),
            (
                "GatewayConfiguration",
                self.stores.configurations.state().len(),
            ),
            ("L34Route", self.stores.routes.state().len()),
            ("Deployment", self.stores.deployments.state().len()),
            (
                DEPLOYMENT_METADATA,
                self.stores.deployment_meta.state().len(),
            ),
        ]
    }

    fn gateways(&self) -> Vec<metrics::GatewayState> {
        let ours: std::collections::HashSet<String> = self
            .stores
            .classes
            .state()
            .iter()
            .filter(|class| {
                class
                    .read()
                    .is_ok_and(|class| class.spec.controller_name == self.settings.controller_name)
            })
            .map(|class| class.name_any())
            .collect();
        let domain = &self.settings.condition_domain;
        self.stores
            .gateways
            .state()
            .iter()
            .filter_map(|cached| Some((cached, cached.read().ok()?)))
            .filter(|(_, gateway)| ours.contains(&gateway.spec.gateway_class_name))
            .map(|(cached, gateway)| metrics::GatewayState {
                namespace: cached.namespace().unwrap_or_default(),
                name: cached.name_any(),
                conditions: gateway
                    .status
                    .conditions
                    .iter()
                    .filter_map(|condition| {
                        metrics::Condition::of_type(&condition.type_, domain)
                            .map(|c| (c, condition.status.clone()))
                    })
                    .collect(),
            })
            .collect()
    }

    fn leader(&self) -> bool {
        self.context
            .upgrade()
            .is_some_and(|context| context.leadership.may_write())
    }

    fn backing_off(&self) -> usize {
        self.context
            .upgrade()
            .map_or(0, |context| context.backoff.len())
    }
}

/// An object a watch caches.
trait Watched:
    Resource<DynamicType = ()> + Clone + std::fmt::Debug + DeserializeOwned + Send + Sync + 'static
{
    /// Why the core cannot read it, when it cannot.
    fn unreadable(&self) -> Option<&str> {
        None
    }
}

impl<K> Watched for Cached<K>
where
    K: cached::Kind + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    fn unreadable(&self) -> Option<&str> {
        self.read().err()
    }
}

impl Watched for DeploymentMeta {}

/// What every watch cache of a run shares.
struct Caches<'a> {
    health: &'a Arc<Health>,
    metrics: &'a Arc<Metrics>,
    relists: Arc<Relists>,
    /// Initial lists streamed where the server serves them ([`crate::watch`]): what the
    /// watches learnt of the server, shared.
    streaming_lists: Option<Arc<crate::watch::StreamingLists>>,
}

impl Caches<'_> {
    /// A watch of `api` (of `kind`, as the probes name it) filling a new cache: the cache,
    /// and the objects the watch touched, each once the cache shows it (see [`settled`]).
    fn cached<K: Watched>(
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
    fn cached_with<K: Watched>(
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
        let events = settled(
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
struct NoTriggerBackoff;

impl Iterator for NoTriggerBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl kube::runtime::utils::Backoff for NoTriggerBackoff {
    fn reset(&mut self) {}
}

/// Whether [`settled`] passes deleted objects on.
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
fn settled<K>(
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

/// [`reconcile`] as the controller runs it: nothing on a standby, metrics, and every
/// "at once" requeue (a zero delay: the core's `Immediately`, a status conflict, a cache
/// that has not seen an own write) through the Gateway's backoff; a settled reconcile with
/// any other requeue resets it.
async fn reconcile_leading(
    gateway: Arc<Gateway>,
    ctx: Arc<Context>,
) -> Result<controller::Action, Error> {
    if !ctx.leadership.may_write() {
        // A standby writes nothing; winning the lease triggers every Gateway again.
        return Ok(controller::Action::await_change());
    }
    let key = ObjectRef::from_obj(gateway.as_ref());
    let _running = ctx.metrics.reconcile_started();
    let started = Instant::now();
    let result = port::reconcile(gateway, ctx.clone()).await;
    let outcome = match &result {
        Ok(_) => ReconcileResult::Success,
        Err(Error::Input(_)) => ReconcileResult::InputError,
        Err(Error::StatusWrite { .. }) => ReconcileResult::StatusWriteError,
        Err(Error::CacheClosed) => ReconcileResult::CacheClosed,
        Err(Error::Read { .. }) => ReconcileResult::ReadError,
    };
    ctx.metrics.reconciled(outcome, started.elapsed());
    let action = result?;
    if action == controller::Action::requeue(Duration::ZERO) {
        let wait = ctx.backoff.next(&key);
        debug!(gateway = %key, ?wait, failures = ctx.backoff.failures(&key), "at-once requeue, backing off");
        ctx.metrics.requeued(RequeueKind::Backoff);
        return Ok(controller::Action::requeue(wait));
    }
    ctx.backoff.reset(&key);
    if action != controller::Action::await_change() {
        ctx.metrics.requeued(RequeueKind::Scheduled);
    }
    Ok(action)
}

/// A reconcile that did not settle: retried after the Gateway's backoff, but never sooner
/// than the core's own requeue for the settlement it could not write, nor than the API
/// server's `Retry-After`.
fn error_policy(gateway: Arc<Gateway>, error: &Error, ctx: Arc<Context>) -> controller::Action {
    let key = ObjectRef::from_obj(gateway.as_ref());
    let action = match error {
        // The Gateway (or an object it names) must change first.
        Error::Input(_) => controller::Action::await_change(),
        Error::StatusWrite {
            source,
            requeue_after,
        } => controller::Action::requeue(backoff::failed_wait(
            ctx.backoff.next(&key),
            *requeue_after,
            server_retry_after(source),
        )),
        Error::Read { source } => controller::Action::requeue(backoff::failed_wait(
            ctx.backoff.next(&key),
            None,
            server_retry_after(source),
        )),
        Error::CacheClosed => controller::Action::requeue(ctx.backoff.next(&key)),
    };
    warn!(gateway = %key, %error, ?action, failures = ctx.backoff.failures(&key), "reconcile failed");
    if action != controller::Action::await_change() {
        ctx.metrics.requeued(RequeueKind::Error);
    }
    action
}

/// The wait an API answer asks for (`details.retryAfterSeconds`, which the API server
/// sets with its `Retry-After` header).
fn server_retry_after(error: &kube::Error) -> Option<Duration> {
    match error {
        kube::Error::Api(status) => status
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s))),
        _ => None,
    }
}

/// A string field of a JSON object of a cached Deployment.
fn text<'a>(object: &'a wire::tree::Value, key: &str) -> Option<&'a str> {
    object.get(key).and_then(wire::tree::Value::as_str)
}

/// The Gateways a Deployment concerns: its controller, when that is a Gateway, and the
/// Gateway whose LB Deployment name it has (a name collision).
fn gateways_of_deployment(prefix: &str, deployment: &CachedDeployment) -> Vec<ObjectRef<Gateway>> {
    let owners = deployment
        .read()
        .ok()
        .and_then(|d| d.get(&["metadata", "ownerReferences"]))
        .and_then(wire::tree::Value::as_array);
    let controllers = owners
        .into_iter()
        .flatten()
        .filter(|o| o.get("controller").and_then(wire::tree::Value::as_bool) == Some(true))
        .filter_map(|o| Some((text(o, "apiVersion")?, text(o, "kind")?, text(o, "name")?)));
    gateways_of(prefix, deployment.meta(), controllers)
}

/// [`gateways_of_deployment`] for a Deployment of the metadata cache.
fn gateways_of_meta(prefix: &str, meta: &DeploymentMeta) -> Vec<ObjectRef<Gateway>> {
    let controllers = meta
        .metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|o| o.controller == Some(true))
        .map(|o| (o.api_version.as_str(), o.kind.as_str(), o.name.as_str()));
    gateways_of(prefix, &meta.metadata, controllers)
}

/// The Gateways of a Deployment's controller references (`apiVersion`, `kind`, `name`)
/// and of its name.
fn gateways_of<'a>(
    prefix: &str,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    controllers: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> Vec<ObjectRef<Gateway>> {
    let Some(namespace) = meta.namespace.as_deref() else {
        return Vec::new();
    };
    let mut out: Vec<ObjectRef<Gateway>> = controllers
        .filter(|(api_version, kind, _)| {
            *kind == "Gateway" && api_version.split('/').next() == Some(GATEWAY_GROUP)
        })
        .map(|(_, _, name)| ObjectRef::new(name).within(namespace))
        .collect();
    let name = meta.name.as_deref().unwrap_or_default();
    if let Some(gateway) = name.strip_prefix(prefix).filter(|g| !g.is_empty()) {
        let named = ObjectRef::new(gateway).within(namespace);
        if !out.contains(&named) {
            out.push(named);
        }
    }
    out
}

/// A route's parent Gateways, by the core's rules (`addresses::parent_gateway`).
fn parents_of(route: &L34Route) -> Vec<ObjectRef<Gateway>> {
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
struct Index<O: Resource, K> {
    keys: Keys<O, K>,
    state: Mutex<IndexState<O, K>>,
}

struct IndexState<O: Resource, K> {
    by_key: HashMap<K, std::collections::HashSet<ObjectRef<O>>>,
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
    fn new(keys: impl Fn(&O) -> Vec<K> + Send + Sync + 'static) -> Self {
        Index {
            keys: Box::new(keys),
            state: Mutex::new(IndexState {
                by_key: HashMap::new(),
                by_object: HashMap::new(),
                listing: None,
            }),
        }
    }

    fn apply(&self, event: &watcher::Event<O>) {
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
    fn get(&self, key: &K) -> Vec<ObjectRef<O>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .by_key
            .get(key)
            .map(|objects| objects.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// How an [`Index`] computes an object's keys.
type Keys<O, K> = Box<dyn Fn(&O) -> Vec<K> + Send + Sync>;

/// The L34Routes by the Gateways they name.
type RouteIndex = Index<L34Route, ObjectRef<Gateway>>;

/// A route index: by [`parents_of`].
fn route_index() -> RouteIndex {
    Index::new(parents_of)
}

/// What a Gateway is looked up by when a GatewayClass or GatewayConfiguration changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum GatewayKey {
    /// `spec.gatewayClassName`.
    Class(String),
    /// The GatewayConfiguration its `parametersRef` names (our kind only): namespace, name.
    Configuration(String, String),
}

/// The Gateways by class and by GatewayConfiguration.
type GatewayIndex = Index<Gateway, GatewayKey>;

fn gateway_index(settings: &Settings) -> GatewayIndex {
    let (group, kind) = (
        settings.parameters_group.clone(),
        settings.parameters_kind.clone(),
    );
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
        let parameters = wire_gateway
            .spec
            .infrastructure
            .as_ref()
            .and_then(|i| i.parameters_ref.as_ref());
        if let (Some(p), Some(namespace)) = (parameters, gateway.namespace())
            && p.group == group
            && p.kind == kind
        {
            keys.push(GatewayKey::Configuration(namespace, p.name.clone()));
        }
        keys
    })
}

/// Maps an L34Route event to the Gateways of its old and new `parentRefs`: the parents
/// each route had at its last event are remembered (and forgotten once it is deleted).
struct RouteParents {
    routes: Store<L34Route>,
    last: Mutex<HashMap<ObjectRef<L34Route>, Vec<ObjectRef<Gateway>>>>,
}

impl RouteParents {
    fn new(routes: Store<L34Route>) -> Self {
        Self {
            routes,
            last: Mutex::new(HashMap::new()),
        }
    }

    fn wake(&self, route: &L34Route) -> Vec<ObjectRef<Gateway>> {
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
mod tests {
    use gateway_reconcile::reconcile::Inputs as CoreInputs;
    use gateway_reconcile::{Plan, Settlement};
    use kube::api::DynamicObject;

    use super::port::{Inputs, Unlabeled};
    use super::*;

    #[test]
    fn a_cached_deployment_is_the_whole_wire_object() {
        let json = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "sllbr-gw", "namespace": "red", "resourceVersion": "7"},
            "spec": {"replicas": 2, "futureField": {"kept": true}},
            "status": {"observedGeneration": 1}
        });
        let cached: CachedDeployment = serde_json::from_value(json.clone()).expect("object");
        let wire = cached.read().expect("wire");
        assert_eq!(wire.to_json(), json);
        assert_eq!(wire.name(), Some("sllbr-gw"));
        assert_eq!(cached.resource_version().as_deref(), Some("7"));
    }

    /// A plain-HTTP server on loopback that answers every request with `code` and counts
    /// the requests: a stand-in API server for the client's retry budget.
    async fn answering(code: u16) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        answering_with(code, "").await
    }

    /// [`answering`], with `headers` (each ending in CRLF) added to every answer.
    async fn answering_with(
        code: u16,
        headers: &'static str,
    ) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    // A GET has no body: each read that ends its headers is one request.
                    let mut seen = Vec::new();
                    while let Ok(n) = socket.read(&mut buffer).await {
                        if n == 0 {
                            return;
                        }
                        seen.extend_from_slice(&buffer[..n]);
                        while let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                            seen.drain(..at + 4);
                            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            let body = format!(
                                r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","message":"down","reason":"ServiceUnavailable","code":{code}}}"#
                            );
                            let answer = format!(
                                "HTTP/1.1 {code} Unavailable\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if socket.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, requests)
    }

    #[tokio::test]
    async fn the_client_repeats_a_503_three_times_then_answers() {
        let (url, requests) = answering(503).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        let answer = api.get("sllbr-gw").await;
        let took = started.elapsed();
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 503),
            "{answer:?}"
        );
        assert_eq!(
            requests.load(std::sync::atomic::Ordering::SeqCst),
            1 + CLIENT_RETRIES as usize
        );
        // The budget's waits add up to well under a second (kube-rs's default: minutes);
        // the bound leaves room for a loaded machine.
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[tokio::test]
    async fn the_client_does_not_repeat_other_failures() {
        let (url, requests) = answering(500).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let answer = api.get("sllbr-gw").await;
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 500),
            "{answer:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    fn options(leadership: Leadership, metrics: Arc<Metrics>) -> ClientOptions {
        ClientOptions {
            metrics,
            leadership,
            ..ClientOptions::default()
        }
    }

    #[tokio::test]
    async fn a_write_without_the_lease_is_never_sent_and_reads_still_are() {
        let (url, requests) = answering(404).await;
        let metrics = Arc::new(Metrics::new());
        let client = client_with(
            kube::Config::new(url.parse().expect("url")),
            options(Leadership::candidate(), metrics.clone()),
        )
        .expect("client");
        let api: Api<DynamicObject> = Api::namespaced_with(client, "red", &deployment_resource());
        let body: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "sllbr-gw" }
        }))
        .expect("a Deployment");
        let refused = api.create(&Default::default(), &body).await;
        assert!(
            matches!(&refused, Err(kube::Error::Service(e)) if e.to_string().contains("does not hold the leader lease")),
            "{refused:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 0);
        let read = api.get("sllbr-gw").await;
        assert!(
            matches!(&read, Err(kube::Error::Api(s)) if s.code == 404),
            "{read:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
        let text = metrics.encode();
        assert!(
            text.contains("gateway_reconcile_leader_write_refusals_total 1"),
            "{text}"
        );
        assert!(
            text.contains(r#"gateway_reconcile_api_requests_total{verb="get",resource="deployments",code="404"} 1"#),
            "{text}"
        );
    }

    #[tokio::test]
    async fn the_client_waits_the_servers_retry_after_between_repeats() {
        let (url, requests) = answering_with(429, "Retry-After: 1\r\n").await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        let answer = api.get("sllbr-gw").await;
        let took = started.elapsed();
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 429),
            "{answer:?}"
        );
        assert_eq!(
            requests.load(std::sync::atomic::Ordering::SeqCst),
            1 + CLIENT_RETRIES as usize
        );
        // Three repeats, each held a second (without it: well under a second in all).
        assert!(took >= Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn the_client_paces_requests_past_its_burst() {
        let (url, requests) = answering(404).await;
        let client = client_with(
            kube::Config::new(url.parse().expect("url")),
            ClientOptions {
                qps: 10.0,
                burst: 2,
                ..ClientOptions::default()
            },
        )
        .expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        for _ in 0..6 {
            let _ = api.get("sllbr-gw").await;
        }
        let took = started.elapsed();
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 6);
        // Two at once, then one every 100 ms.
        assert!(took >= Duration::from_millis(390), "{took:?}");
    }

    /// A context around `client`, with empty caches.
    fn context(client: Client, leadership: Leadership) -> Arc<Context> {
        let (gateways, _) = reflector::store::<Gateway>();
        let (classes, _) = reflector::store::<GatewayClass>();
        let (configurations, _) = reflector::store::<GatewayConfiguration>();
        let (routes, _) = reflector::store::<L34Route>();
        let stores = Stores {
            gateways,
            classes,
            configurations,
            routes,
            deployments: reflector::store::<CachedDeployment>().0,
            deployment_meta: reflector::store::<DeploymentMeta>().0,
            routes_by_gateway: Arc::new(route_index()),
            relists: Arc::default(),
        };
        let reporter = Reporter {
            controller: "test".into(),
            instance: None,
        };
        Arc::new(Context {
            ready: stores.ready(Arc::default()),
            pending: Pending::default(),
            driver: Driver::new(Settings::default()),
            template: Arc::new(gateway_reconcile::template::default_template()),
            recorder: Recorder::new(client.clone(), reporter.clone()),
            client,
            config: Config {
                settings: Settings::default(),
                template: gateway_reconcile::template::default_template(),
                namespace: None,
                reporter,
                concurrency: 1,
                streaming_lists: false,
            },
            stores,
            deployment_resource: deployment_resource(),
            backoff: Backoff::default(),
            metrics: Arc::default(),
            leadership,
        })
    }

    fn gateway(name: &str) -> Arc<Gateway> {
        Arc::new(
            serde_json::from_value(serde_json::json!({
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": { "name": name, "namespace": "ns" },
                "spec": { "gatewayClassName": "c", "listeners": [] }
            }))
            .expect("a Gateway"),
        )
    }

    /// The delay of a requeue action (kube-runtime keeps it private: read from `Debug`).
    fn requeue_of(action: &controller::Action) -> Option<Duration> {
        let text = format!("{action:?}");
        let inner = text.split("Some(").nth(1)?.split(')').next()?;
        for (suffix, scale) in [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)] {
            if let Some(number) = inner.strip_suffix(suffix) {
                return Some(Duration::from_secs_f64(number.parse::<f64>().ok()? * scale));
            }
        }
        None
    }

    fn status_error(code: u16, retry_after_seconds: u32) -> kube::Error {
        let mut status = kube::core::Status::failure("refused", "Forbidden");
        status.code = code;
        status.details =
            serde_json::from_value(serde_json::json!({ "retryAfterSeconds": retry_after_seconds }))
                .ok();
        kube::Error::Api(status.boxed())
    }

    #[tokio::test]
    async fn a_failed_status_write_backs_off_but_keeps_the_cores_requeue() {
        let client = client(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("url"),
        ))
        .expect("client");
        let ctx = context(client, Leadership::always());
        let gw = gateway("gw");
        let failed = |requeue_after, retry_after| Error::StatusWrite {
            source: status_error(403, retry_after),
            requeue_after,
        };
        // The core said 5 minutes: the retry is not sooner (before: 5 s).
        assert_eq!(
            error_policy(
                gw.clone(),
                &failed(Some(Duration::from_secs(300)), 0),
                ctx.clone()
            ),
            controller::Action::requeue(Duration::from_secs(300))
        );
        // The core said "on the next change": the backoff alone, from 5 ms, doubling.
        let waits: Vec<controller::Action> = (0..3)
            .map(|_| error_policy(gw.clone(), &failed(None, 0), ctx.clone()))
            .collect();
        // 0-10 % of jitter on top of the doubling delay.
        let within = |action: &controller::Action, ms: u64| {
            requeue_of(action).is_some_and(|d| {
                d >= Duration::from_millis(ms) && d <= Duration::from_millis(ms).mul_f64(1.1)
            })
        };
        assert!(within(&waits[0], 10), "{waits:?}"); // the second failure of gw
        assert!(within(&waits[1], 20), "{waits:?}");
        assert!(within(&waits[2], 40), "{waits:?}");
        // The server's Retry-After wins over a shorter backoff.
        assert_eq!(
            error_policy(gateway("other"), &failed(None, 7), ctx.clone()),
            controller::Action::requeue(Duration::from_secs(7))
        );
        // An object the core cannot read waits for a change.
        let input = Error::Input(InputError::Malformed {
            object: "Gateway".into(),
            why: "no uid".into(),
        });
        assert_eq!(
            error_policy(gw, &input, ctx),
            controller::Action::await_change()
        );
    }

    #[tokio::test]
    async fn a_standby_reconciles_nothing() {
        let (url, requests) = answering(404).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let ctx = context(client, Leadership::candidate());
        let action = reconcile_leading(gateway("gw"), ctx.clone())
            .await
            .expect("no error");
        assert_eq!(action, controller::Action::await_change());
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert!(
            !ctx.metrics
                .encode()
                .contains("gateway_reconcile_reconciles_total{")
        );
    }

    fn deployment(value: serde_json::Value) -> CachedDeployment {
        serde_json::from_value(value).expect("a Deployment")
    }

    #[test]
    fn a_deployment_wakes_its_controller_and_the_gateway_of_its_name() {
        let owned = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "sllbr-a", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "a", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(
            gateways_of_deployment("sllbr-", &owned),
            vec![ObjectRef::<Gateway>::new("a").within("ns")]
        );
        let foreign = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "sllbr-b", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(
            gateways_of_deployment("sllbr-", &foreign),
            vec![ObjectRef::<Gateway>::new("b").within("ns")]
        );
        let other = deployment(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web", "namespace": "ns" }
        }));
        assert!(gateways_of_deployment("sllbr-", &other).is_empty());
    }

    fn meta(value: serde_json::Value) -> DeploymentMeta {
        serde_json::from_value(value).expect("metadata")
    }

    #[test]
    fn a_deployment_by_its_metadata_wakes_the_same_gateways() {
        let owned = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "sllbr-a", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");
        assert_eq!(gateways_of_meta("sllbr-", &owned), vec![gw("x"), gw("a")]);
        let foreign = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "sllbr-b", "namespace": "ns", "ownerReferences": [
                { "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u", "controller": true }
            ] }
        }));
        assert_eq!(gateways_of_meta("sllbr-", &foreign), vec![gw("b")]);
        let other = meta(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": { "name": "web", "namespace": "ns" }
        }));
        assert!(gateways_of_meta("sllbr-", &other).is_empty());
    }

    /// Stores with one Gateway `gw` (uid `gw-uid`) of our class and its configuration,
    /// and `deployment` in the LB cache (`whole`) or by its metadata only.
    fn stores_with(deployment: &serde_json::Value, whole: bool) -> Stores {
        let settings = Settings::default();
        let (classes, mut class_writer) = reflector::store::<GatewayClass>();
        class_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "c"}, "spec": {"controllerName": settings.controller_name}
            }))
            .expect("a class"),
        ));
        let (configurations, mut configuration_writer) = reflector::store::<GatewayConfiguration>();
        configuration_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "conf", "namespace": "ns", "uid": "conf-uid", "generation": 1},
                "spec": {
                    "networkAttachments": [{ "type": "NAD", "nad": { "name": "vlan", "namespace": "ns", "interface": "eth1" } }],
                    "internalSubnets": [{ "attachmentType": "NAD", "cidr": "169.254.100.0/24" }],
                    "horizontalScaling": { "replicas": 2, "enforceReplicas": false } }
            }))
            .expect("a configuration"),
        ));
        let (deployments, mut deployment_writer) = reflector::store::<CachedDeployment>();
        let (deployment_meta, mut meta_writer) = reflector::store::<DeploymentMeta>();
        // The metadata cache has every Deployment; the LB cache the labelled ones.
        let mut metadata = deployment.clone();
        if let Some(object) = metadata.as_object_mut() {
            object.retain(|key, _| key == "metadata");
        }
        metadata["apiVersion"] = "meta.k8s.io/v1".into();
        metadata["kind"] = "PartialObjectMetadata".into();
        meta_writer.apply_watcher_event(&watcher::Event::Apply(meta(metadata)));
        if whole {
            deployment_writer.apply_watcher_event(&watcher::Event::Apply(
                serde_json::from_value(deployment.clone()).expect("a Deployment"),
            ));
        }
        Stores {
            gateways: reflector::store::<Gateway>().0,
            classes,
            configurations,
            routes: reflector::store::<L34Route>().0,
            deployments,
            deployment_meta,
            routes_by_gateway: Arc::new(route_index()),
            relists: Arc::default(),
        }
    }

    fn our_gateway() -> Gateway {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1,
                         "resourceVersion": "1"},
            "spec": {"gatewayClassName": "c", "listeners": [], "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }))
        .expect("a Gateway")
    }

    /// A foreign Deployment of the LB name, whole (pod template and all).
    fn foreign_deployment(labels: serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "sllbr-gw", "namespace": "ns", "uid": "d-uid",
                         "resourceVersion": "9", "generation": 4, "labels": labels,
                         "annotations": {"note": "theirs"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "x", "uid": "rs-uid", "controller": true}]},
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "other"}},
                     "template": {"metadata": {"labels": {"app": "other"}},
                                  "spec": {"containers": [{"name": "web", "image": "web:1",
                                      "env": [{"name": "TOKEN", "value": "secret"}]}]}}},
            "status": {"observedGeneration": 4, "replicas": 5, "readyReplicas": 5}
        })
    }

    /// What the core settles for `gw` from these caches (`None`: the reconcile does not
    /// decide from the caches alone).
    fn decided(stores: &Stores, now: jiff::Timestamp) -> Result<Settlement, Unlabeled> {
        let settings = Settings::default();
        let gateway = Arc::new(our_gateway());
        let wire_gateway = gateway.read().expect("readable");
        let template = Arc::new(gateway_reconcile::template::default_template());
        let mut inputs = Inputs::gather(
            stores,
            &settings,
            template,
            gateway.clone(),
            wire_gateway,
            "ns",
        );
        match inputs.unlabeled(wire_gateway) {
            Unlabeled::No => {}
            other => return Err(other),
        }
        let snapshot = CoreInputs::snapshot(&inputs).expect("readable inputs");
        match gateway_reconcile::plan(&settings, snapshot, now).expect("a plan") {
            Plan::Settled(settlement) => Ok(settlement),
            Plan::Write(_) => panic!("a write planned over a foreign Deployment"),
        }
    }

    /// A foreign Deployment of the LB name seen by its metadata alone gives the core's
    /// decision it gives whole: the name collision, same status, Events and requeue.
    #[test]
    fn a_foreign_deployment_by_its_metadata_is_the_same_collision_as_whole() {
        let now = jiff::Timestamp::now();
        // Foreign, but carrying our label: the LB cache holds it whole.
        let labelled = foreign_deployment(serde_json::json!({
            lookup::MANAGED_BY_LABEL: lookup::MANAGED_BY
        }));
        let whole = decided(&stores_with(&labelled, true), now).expect("decided");
        // Foreign without our label: the metadata cache alone has it.
        let unlabelled = foreign_deployment(serde_json::json!({"owner": "someone-else"}));
        let by_metadata = decided(&stores_with(&unlabelled, false), now).expect("decided");
        let patch = by_metadata.status_patch().expect("a status").into_body();
        assert!(
            patch
                .to_string()
                .contains("owned by ReplicaSet/x, cannot proceed due to name collision"),
            "{patch}"
        );
        assert_eq!(by_metadata, whole);
        // And the metadata carries no pod template.
        let stores = stores_with(&unlabelled, false);
        let cached = stores
            .deployment_meta
            .get(&ObjectRef::new("sllbr-gw").within("ns"))
            .expect("cached");
        let json = serde_json::to_string(&cached.metadata).expect("json");
        assert!(
            !json.contains("secret") && !json.contains("containers"),
            "{json}"
        );
    }

    #[test]
    fn an_own_deployment_without_our_label_is_read_and_a_labelled_one_awaited() {
        let now = jiff::Timestamp::now();
        let own = |labels: serde_json::Value| {
            let mut deployment = foreign_deployment(labels);
            deployment["metadata"]["ownerReferences"] = serde_json::json!([
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw",
                 "uid": "gw-uid", "controller": true}
            ]);
            deployment
        };
        // Our label removed: in the metadata cache only, ours by its controller reference.
        let unlabelled = own(serde_json::json!({"app": "sllbr-gw"}));
        assert_eq!(
            decided(&stores_with(&unlabelled, false), now),
            Err(Unlabeled::Own)
        );
        // Labelled, but the LB watch has not delivered it yet.
        let labelled = own(serde_json::json!({lookup::MANAGED_BY_LABEL: lookup::MANAGED_BY}));
        assert_eq!(
            decided(&stores_with(&labelled, false), now),
            Err(Unlabeled::Lagging)
        );
        // An orphan of a former Gateway of the same name (another uid) is foreign.
        let mut orphan = own(serde_json::json!({"app": "sllbr-gw"}));
        orphan["metadata"]["ownerReferences"][0]["uid"] = "old-uid".into();
        let settled = decided(&stores_with(&orphan, false), now).expect("decided");
        let patch = settled
            .status_patch()
            .expect("a status")
            .into_body()
            .to_string();
        assert!(patch.contains("owned by Gateway/gw"), "{patch}");
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

    fn route(gateway: &str) -> L34Route {
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

    fn named_route(name: &str, gateway: &str) -> L34Route {
        serde_json::from_value(serde_json::json!({
            "metadata": { "name": name, "namespace": "ns" },
            "spec": { "parentRefs": [{ "name": gateway }], "destinationCIDRs": [],
                      "protocols": ["TCP"], "priority": 1 }
        }))
        .expect("a route")
    }

    /// Runs watch events through the reflector and [`settled`], and for each object passed
    /// on: its name, and whether the cache already showed that version of it.
    async fn settle_events(
        events: Vec<watcher::Event<L34Route>>,
        store: &Store<L34Route>,
        writer: reflector::store::Writer<L34Route>,
    ) -> Vec<(String, bool)> {
        let events = futures::stream::iter(events.into_iter().map(Ok));
        let events = reflect::reflect(events, writer, Arc::default());
        settled(events, store.clone(), Deletions::Pass)
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
        let woken: Vec<Vec<ObjectRef<Gateway>>> = settled(events, store, Deletions::Pass)
            .map(|route| parents.wake(&route.expect("no error")))
            .collect()
            .await;
        let gw = |name: &str| ObjectRef::<Gateway>::new(name).within("ns");
        assert_eq!(woken, vec![vec![gw("a")], vec![gw("b"), gw("a")]]);
    }

    /// A reconcile's inputs are the cached objects themselves: each object was read once,
    /// when its watch event came, and a reconcile reads (parses, converts) none.
    #[test]
    fn a_reconcile_borrows_the_cached_objects_and_reads_none() {
        let settings = Settings::default();
        let (gateways, mut gateway_writer) = reflector::store::<Gateway>();
        let (classes, mut class_writer) = reflector::store::<GatewayClass>();
        let (configurations, mut configuration_writer) = reflector::store::<GatewayConfiguration>();
        let (routes, mut route_writer) = reflector::store::<L34Route>();
        let (deployments, mut deployment_writer) = reflector::store::<CachedDeployment>();
        let before_events = cached::objects_read();
        gateway_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1,
                             "resourceVersion": "1"},
                "spec": {"gatewayClassName": "c", "infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                    "name": "conf"}}}
            }))
            .expect("a Gateway"),
        ));
        class_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "c"}, "spec": {"controllerName": settings.controller_name}
            }))
            .expect("a class"),
        ));
        configuration_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "conf", "namespace": "ns"}, "spec": {}
            }))
            .expect("a configuration"),
        ));
        let routes_by_gateway = Arc::new(route_index());
        for (route, parent) in [("mine", "gw"), ("other", "gw2")] {
            let event = watcher::Event::Apply(
                serde_json::from_value(serde_json::json!({
                    "metadata": {"name": route, "namespace": "ns"},
                    "spec": {"parentRefs": [{"name": parent}], "destinationCIDRs": ["20.0.0.1/32"]}
                }))
                .expect("a route"),
            );
            routes_by_gateway.apply(&event);
            route_writer.apply_watcher_event(&event);
        }
        deployment_writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "sllbr-gw", "namespace": "ns", "resourceVersion": "5"}
            }))
            .expect("a Deployment"),
        ));
        // One read per watch event.
        assert_eq!(cached::objects_read() - before_events, 6);
        let stores = Stores {
            gateways,
            classes,
            configurations,
            routes,
            deployments,
            deployment_meta: reflector::store::<DeploymentMeta>().0,
            routes_by_gateway,
            relists: Arc::default(),
        };
        let template = Arc::new(wire::Deployment::default());
        let gateway = stores
            .gateways
            .get(&ObjectRef::new("gw").within("ns"))
            .expect("cached");
        let before = cached::objects_read();
        for _ in 0..3 {
            let wire_gateway = gateway.read().expect("readable");
            let inputs = Inputs::gather(
                &stores,
                &settings,
                template.clone(),
                gateway.clone(),
                wire_gateway,
                "ns",
            );
            let snapshot = CoreInputs::snapshot(&inputs).expect("readable inputs");
            let cached_class = stores.classes.get(&ObjectRef::new("c")).expect("class");
            let cached_conf = stores
                .configurations
                .get(&ObjectRef::new("conf").within("ns"))
                .expect("configuration");
            let cached_deployment = stores
                .deployments
                .get(&ObjectRef::new("sllbr-gw").within("ns"))
                .expect("Deployment");
            assert!(std::ptr::eq(snapshot.gateway, wire_gateway));
            assert!(std::ptr::eq(
                snapshot.gateway_class.expect("class"),
                cached_class.read().expect("readable")
            ));
            assert!(std::ptr::eq(
                snapshot.configuration.expect("configuration"),
                cached_conf.read().expect("readable")
            ));
            assert!(std::ptr::eq(
                snapshot.deployment.expect("Deployment"),
                cached_deployment.read().expect("readable")
            ));
            // Only the route naming the Gateway, by the core's rule.
            assert_eq!(snapshot.routes.len(), 1);
            assert_eq!(snapshot.routes[0].metadata.name.as_deref(), Some("mine"));
        }
        assert_eq!(cached::objects_read(), before, "a reconcile read an object");
    }

    #[test]
    fn an_unreadable_cached_configuration_is_its_gateways_input_error_alone() {
        let settings = Settings::default();
        let (configurations, mut writer) = reflector::store::<GatewayConfiguration>();
        writer.apply_watcher_event(&watcher::Event::Apply(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "conf", "namespace": "ns"},
                "spec": {"networkAttachments": 5}
            }))
            .expect("cached though unreadable"),
        ));
        let stores = Stores {
            gateways: reflector::store::<Gateway>().0,
            classes: reflector::store::<GatewayClass>().0,
            configurations,
            routes: reflector::store::<L34Route>().0,
            deployments: reflector::store::<CachedDeployment>().0,
            deployment_meta: reflector::store::<DeploymentMeta>().0,
            routes_by_gateway: Arc::new(route_index()),
            relists: Arc::default(),
        };
        let gateway: Arc<Gateway> = Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "gw", "namespace": "ns"},
                "spec": {"gatewayClassName": "c", "infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
            }))
            .expect("a Gateway"),
        );
        let wire_gateway = gateway.read().expect("readable");
        let template = Arc::new(wire::Deployment::default());
        let inputs = Inputs::gather(
            &stores,
            &settings,
            template,
            gateway.clone(),
            wire_gateway,
            "ns",
        );
        let error = CoreInputs::snapshot(&inputs).expect_err("unreadable configuration");
        assert!(error.to_string().contains("conf"), "{error}");
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
        let stores = Stores {
            gateways,
            classes,
            configurations,
            routes,
            deployments,
            deployment_meta,
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
                "L34Route"
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
