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
//! `once_cached`). Every cache but the metadata one holds the core's own wire types, read once
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
//! Whom a change wakes is the core's decision (`gateway_reconcile::wake`); the triggers
//! keep the watch wiring, the indexes and the last state the watcher does not hand over:
//!
//! - a GatewayClass: the Gateways of that class;
//! - a GatewayConfiguration: the Gateways whose `parametersRef` names it, and those of the
//!   classes that name it as their default;
//! - a Namespace whose labels changed: the Gateways its routes name, of those that admit
//!   routes by a namespace label selector;
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
//! backoff (`backoff`) that every "at once" requeue and every failed reconcile
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
use gateway_reconcile::{InputError, Settings, lookup, wake, wire};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ApiResource};
use kube::runtime::controller::{self, Controller};
use kube::runtime::events::Reporter;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};

use crate::backoff::{self, Backoff};
use crate::cached::{
    self, Cached, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
    GatewayConfiguration, L34Route, NamespaceMeta,
};
use crate::class_status::ClassStatus;
use crate::health::{Health, Unsynced};
use crate::leader::{Elector, LeaderError, Leadership};
use crate::metrics::{self, Metrics, ReconcileResult, RequeueKind};
use crate::reflect::{self, Relists};
use crate::transport;
use gateway_reconcile::Requeue;
use gateway_reconcile::reconcile::Driver;

mod caches;
mod client;
mod observed;
mod own_writes;
mod port;
mod triggers;

use caches::*;
pub use client::{
    CLIENT_RETRIES, CLIENT_RETRY_DELAY, ClientOptions, DEFAULT_BURST, DEFAULT_QPS, client,
    client_with,
};
use observed::*;
use own_writes::*;
use triggers::*;

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
    recorder: crate::events::Recorder,
    deployment_resource: ApiResource,
    /// Failures in a row by Gateway (see `backoff`).
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
    let routes_by_ns = Arc::new(routes_by_namespace());
    let (routes, route_events) = caches.cached_with(
        "L34Route",
        scoped::<L34Route>(&client, ns),
        watch.clone(),
        Deletions::Pass,
        {
            let (by_gateway, by_namespace) = (routes_by_gateway.clone(), routes_by_ns.clone());
            move |event| {
                by_gateway.apply(event);
                by_namespace.apply(event);
            }
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

    // Every Namespace by its metadata: the labels a listener's namespace selector matches
    // (cluster-scoped: RBAC list and watch on namespaces).
    let (namespaces, namespace_events) = caches.cached(
        NAMESPACE_METADATA,
        Api::<NamespaceMeta>::all(client.clone()),
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
        namespaces,
        routes_by_gateway,
        relists: caches.relists.clone(),
    };
    let ready = stores.ready(health.clone());
    let context = Arc::new(Context {
        ready: ready.clone(),
        pending: Pending::default(),
        driver: Driver::new(config.settings.clone()),
        template: Arc::new(config.template.clone()),
        recorder: crate::events::Recorder::new(client.clone(), config.reporter.clone()),
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
    let namespace_labels = NamespaceLabelsSeen::new(
        context.stores.namespaces.clone(),
        routes.clone(),
        routes_by_ns,
        gateways_by.clone(),
    );
    let route_parents = RouteParents::new(routes);
    let by_lb_name = gateways_by.clone();
    let meta_by_lb_name = gateways_by.clone();

    let class_status = ClassStatus::spawn(
        context.client.clone(),
        config.settings.clone(),
        leadership.clone(),
        context.stores.configurations.clone(),
        ready.clone(),
    );
    let configuration_classes = ClassesOfConfiguration {
        classes: context.stores.classes.clone(),
        settings: config.settings.clone(),
        status: class_status.clone(),
        gateways: by_class.clone(),
    };
    // Whom each change wakes is the core's (`gateway_reconcile::wake`); the triggers wire
    // the watches to it.
    let controller = controller
        .watches_stream(class_events, move |class| {
            // The class's own status, and its Gateways.
            class_status.settle(&class);
            resolve(&by_class, &wake::class_change(&class.name_any()))
        })
        .watches_stream(configuration_events, move |conf| {
            // The Gateways that name it, and those of the classes that name it as their
            // default (the classes are settled again: its existence is their Accepted).
            configuration_classes.wake(&conf.namespace().unwrap_or_default(), &conf.name_any())
        })
        .watches_stream(route_events, move |route| route_parents.wake(&route))
        // A namespace's labels decide only for Gateways that admit routes by a selector,
        // and only for those its routes name.
        .watches_stream(namespace_events, move |namespace| {
            namespace_labels.wake(&namespace)
        })
        .watches_stream(deployment_events, move |deployment| {
            gateways_of_deployment(&by_lb_name, &deployment)
        })
        .watches_stream(deployment_meta_events, move |meta| {
            // One with our label is the LB watch's to report.
            if lb_labeled(&meta) {
                Vec::new()
            } else {
                gateways_of_meta(&meta_by_lb_name, &meta)
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

#[cfg(test)]
mod tests {
    use super::client::tests::answering;
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
            namespaces: reflector::store::<NamespaceMeta>().0,
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
            recorder: crate::events::Recorder::new(client.clone(), reporter.clone()),
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

    pub(super) fn gateway(name: &str) -> Arc<Gateway> {
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

    /// A retry of a Gateway deleted meanwhile (the cache no longer holds it) acts on
    /// nothing: no request, and no reconcile until a change.
    #[tokio::test]
    async fn a_gateway_gone_from_the_cache_is_not_reconciled() {
        let (url, requests) = answering(404).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let ctx = context(client, Leadership::always());
        let mut port = super::port::CachePort::new(ctx, gateway("gw"));
        let read = gateway_reconcile::reconcile::Reader::gateway(&mut port)
            .await
            .expect("read");
        assert!(matches!(
            read,
            gateway_reconcile::reconcile::View::Later(Requeue::AwaitChange)
        ));
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 0);
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

    pub(super) fn named_route(name: &str, gateway: &str) -> L34Route {
        serde_json::from_value(serde_json::json!({
            "metadata": { "name": name, "namespace": "ns" },
            "spec": { "parentRefs": [{ "name": gateway }], "destinationCIDRs": [],
                      "protocols": ["TCP"], "priority": 1 }
        }))
        .expect("a route")
    }
}
