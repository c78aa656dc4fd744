//! A run of the controller, step by step: the watches and their caches, the wake-ups,
//! leadership and the caches' sync timeout around kube-runtime's `Controller`.

use std::sync::Arc;
use std::time::Duration;

use futures::Future;
use kube::Client;
use kube::runtime::controller::{self, Controller};

use super::context::{Config, Context};
use super::indexes::Indexes;
use super::observed::Observed;
use super::own_writes;
use super::reconciler;
use super::stores::Ready;
use super::triggers;
use super::watches::{Caches, NoTriggerBackoff, Watches};
use crate::class_status::ClassStatus;
use crate::health::{Health, Unsynced};
use crate::leader::{Elector, LeaderError, Leadership};
use crate::metrics::Metrics;

/// Runs the controller until `shutdown` completes (then finishes the reconciles in
/// flight and returns), without leader election, probes or a metrics endpoint; a cache
/// that does not sync within [`DEFAULT_CACHE_SYNC_TIMEOUT`] ends it with an error log.
///
/// Give it a client built by [`client`](super::client()), so that a refused write reaches
/// the core at once.
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
    /// Where the metrics go (the same registry as the client's, see
    /// [`ClientOptions`](super::ClientOptions)).
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
        mut elector,
        cache_sync_timeout,
    } = operations;
    let settings = config.settings.clone();
    let concurrency = config.concurrency;

    // The caches and their watch streams; the indexes fill with them.
    let indexes = Indexes::new(&settings);
    let caches = Caches::new(&health, &metrics, config.streaming_lists);
    let Watches {
        stores,
        gateways,
        triggers,
    } = Watches::start(&client, &config, &caches, &indexes);
    let ready = stores.ready(health.clone());
    let context = Arc::new(Context::new(
        client,
        config,
        stores.clone(),
        ready.clone(),
        metrics.clone(),
        leadership.clone(),
    ));
    metrics.observe(Arc::new(Observed::new(
        stores.clone(),
        settings.clone(),
        &context,
    )));

    // Whom each change wakes: the Gateways' own changes (not the echo of our own status
    // write), and the wake-ups of every other watch (a GatewayClass also has its own status
    // settled).
    let gateways = own_writes::without_status_echoes(gateways, &context);
    let controller = Controller::for_stream(gateways, stores.gateways.clone())
        .with_config(controller::Config::default().concurrency(concurrency))
        .trigger_backoff(NoTriggerBackoff);
    let class_status = ClassStatus::spawn(
        context.client.clone(),
        settings.clone(),
        leadership.clone(),
        stores.configurations.clone(),
        ready.clone(),
    );
    let controller = triggers::wake_ups(
        controller,
        triggers,
        &stores,
        &indexes,
        &settings,
        class_status,
        &context,
    );

    // The controller run, until a shutdown, a lost leadership or caches that never sync.
    let outcome = tokio::select! {
        () = reconciler::run(controller, &leadership, shutdown, context) => Ok(()),
        error = election(elector.as_mut()) => Err(error),
        error = cache_sync(ready, cache_sync_timeout, health) => Err(error),
    };
    if let (Ok(()), Some(elector)) = (&outcome, elector.as_mut()) {
        elector.release().await;
    }
    outcome
}

/// Leadership: the election's end (leadership lost); never, without an election.
async fn election(elector: Option<&mut Elector>) -> RunError {
    match elector {
        Some(elector) => RunError::Leader(elector.run().await),
        None => futures::future::pending::<RunError>().await,
    }
}

/// The caches must fill in time, whether or not this process leads: the caches not
/// synced once `timeout` passed; never, once they are.
async fn cache_sync(ready: Ready, timeout: Duration, health: Arc<Health>) -> RunError {
    match tokio::time::timeout(timeout, ready).await {
        Ok(_) => futures::future::pending::<RunError>().await,
        Err(_) => RunError::CacheSync {
            timeout,
            unsynced: health.unsynced(),
        },
    }
}
