//! What the controller runs with ([`Config`]) and what every reconcile shares besides its
//! Gateway ([`Context`]).

use std::sync::Arc;

use gateway_reconcile::reconcile::Driver;
use gateway_reconcile::{Settings, wire};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Client;
use kube::api::ApiResource;
use kube::runtime::events::Reporter;
use kube::runtime::reflector::ObjectRef;

use super::own_writes::Pending;
use super::stores::{Ready, Stores};
use crate::backoff::Backoff;
use crate::cached::Gateway;
use crate::events::Recorder;
use crate::leader::Leadership;
use crate::metrics::Metrics;

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

/// What a reconcile needs besides the Gateway.
pub(super) struct Context {
    /// Every cache has its initial list.
    pub(super) ready: Ready,
    pub(super) pending: Arc<Pending>,
    /// The reconcile loop, with the record of the last successful write of each Gateway's
    /// LB Deployment (in memory only: while it holds, the drift the API server itself made
    /// in that write is not written again; a restarted controller has none and writes
    /// each such Deployment once more).
    pub(super) driver: Driver,
    /// The LB Deployment template (shared with each reconcile's inputs).
    pub(super) template: Arc<wire::Deployment>,
    pub(super) client: Client,
    pub(super) config: Config,
    pub(super) stores: Stores,
    pub(super) recorder: Recorder,
    pub(super) deployment_resource: ApiResource,
    /// Failures in a row by Gateway (see `backoff`).
    pub(super) backoff: Backoff<ObjectRef<Gateway>>,
    pub(super) metrics: Arc<Metrics>,
    /// Whether this process leads: a standby reconciles nothing.
    pub(super) leadership: Leadership,
}

impl Context {
    /// A context over `stores` (ready once `ready` resolves), with no own write pending and
    /// no Gateway backing off.
    pub(super) fn new(
        client: Client,
        config: Config,
        stores: Stores,
        ready: Ready,
        metrics: Arc<Metrics>,
        leadership: Leadership,
    ) -> Self {
        Context {
            ready,
            pending: Arc::default(),
            driver: Driver::new(config.settings.clone()),
            template: Arc::new(config.template.clone()),
            recorder: Recorder::new(client.clone(), config.reporter.clone()),
            client,
            config,
            stores,
            deployment_resource: deployment_resource(),
            backoff: Backoff::default(),
            metrics,
            leadership,
        }
    }
}

/// `apps/v1` Deployment as a dynamic resource.
pub(super) fn deployment_resource() -> ApiResource {
    ApiResource::erase::<Deployment>(&())
}
