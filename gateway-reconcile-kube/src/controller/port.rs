//! One reconcile of one Gateway: the core's [`Driver`](gateway_reconcile::reconcile::Driver) over the controller's port, which
//! reads the caches and writes with the controller's client.
//!
//! The port decides nothing. Its read waits (answers "later") while a cache has not yet
//! seen the controller's own last write, or a relist is under way, since deciding from an
//! older object would repeat the write; it reads an own LB Deployment whose managed-by
//! label was removed with one GET. Its writes are the shipped verbs
//! ([`crate::write`](mod@crate::write)), the status patch with the cached Gateway's
//! `resourceVersion` as precondition, and the Events.

use std::sync::Arc;

use gateway_reconcile::reconcile::{self as port, Gathered, ReconcileError, StatusWrite};
use gateway_reconcile::{
    DeploymentWrite, InputError, Requeue, Settings, StatusPatch, WriteKind, WriteOutcome,
    events::Event, lookup, wire,
};
use kube::api::{Api, DynamicObject};
use kube::runtime::controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use tracing::{debug, info, warn};

use super::{AWAIT_OWN_WRITE, Context, Error, Pending, Stores, lb_labeled};
use crate::backoff;
use crate::cached::{
    self, Cached, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
    GatewayConfiguration,
};
use crate::events;
use crate::requeue;
use crate::write;

/// One reconcile of one Gateway: the driver over a port made for it.
pub(super) async fn reconcile(
    gateway: Arc<Gateway>,
    ctx: Arc<Context>,
) -> Result<controller::Action, Error> {
    if !ctx.ready.clone().await {
        return Err(Error::CacheClosed);
    }
    let mut port = CachePort::new(ctx.clone(), gateway);
    match ctx
        .driver
        .reconcile(&mut port, jiff::Timestamp::now())
        .await
    {
        Ok(reconciled) => Ok(requeue::spread_resync(
            reconciled.requeue,
            ctx.config.settings.resync,
            backoff::random_fraction(),
        )),
        Err(ReconcileError::Input(error)) => Err(Error::Input(error)),
        Err(ReconcileError::StatusWrite {
            source: Error::StatusWrite { source, .. },
            requeue,
        }) => Err(Error::StatusWrite {
            source,
            requeue_after: requeue::after(requeue),
        }),
        Err(ReconcileError::Read(error) | ReconcileError::StatusWrite { source: error, .. }) => {
            Err(error)
        }
        Err(other) => Err(Error::Input(InputError::Malformed {
            object: "reconcile".into(),
            why: other.to_string(),
        })),
    }
}

/// The controller's [`port::Port`] for one reconcile of one Gateway.
pub(super) struct CachePort {
    ctx: Arc<Context>,
    /// The Gateway this reconcile was started with (the cache may hold a newer one).
    gateway: Arc<Gateway>,
    key: ObjectRef<Gateway>,
    /// The cached Gateway's `resourceVersion` when read.
    gateway_version: String,
    /// The `resourceVersion` of the Deployment of the LB name when read.
    deployment_version: Option<String>,
    /// The LB Deployment's name, for the logs.
    lb_name: String,
    /// The verb of the Deployment write, for the Events' action.
    verb: &'static str,
}

impl CachePort {
    pub(super) fn new(ctx: Arc<Context>, gateway: Arc<Gateway>) -> Self {
        CachePort {
            key: ObjectRef::from_obj(gateway.as_ref()),
            ctx,
            gateway,
            gateway_version: String::new(),
            deployment_version: None,
            lb_name: String::new(),
            verb: "Reconcile",
        }
    }

    fn namespace(&self) -> String {
        self.key.namespace.clone().unwrap_or_default()
    }
}

impl port::Port for CachePort {
    type Inputs = Inputs;
    type Error = Error;

    async fn read(&mut self) -> Result<Gathered<Inputs>, Error> {
        let ctx = self.ctx.clone();
        // No cache is being relisted from here until the inputs are read (see `reflect`).
        let view = ctx.stores.relists.quiet().await;
        // The cached Gateway may be newer than the one this reconcile was started with; a
        // Gateway the cache no longer holds is gone (a reconcile is only ever started for
        // one the cache shows): nothing to do, and no write to a Gateway that is not there
        // (a retry after a failed status write would otherwise act on its last copy).
        let Some(gateway) = ctx.stores.gateways.get(&self.key) else {
            debug!(gateway = %self.key, "gone from the cache: nothing to reconcile");
            return Ok(Gathered::Later(Requeue::AwaitChange));
        };
        let Some(namespace) = gateway.namespace() else {
            return Ok(Gathered::Later(Requeue::AwaitChange));
        };
        let name = gateway.name_any();
        debug!(gateway = %name, %namespace, "reconciling");
        let wire_gateway = match gateway.read() {
            Ok(wire_gateway) => wire_gateway,
            Err(why) => return Err(unreadable_gateway(&ctx, &gateway, why).await),
        };
        self.gateway_version = gateway.resource_version().unwrap_or_default();
        if Pending::stale(&ctx.pending.statuses, &self.key, &self.gateway_version) {
            debug!(gateway = %name, %namespace, "waiting for the cache to see our status write");
            return Ok(Gathered::Later(AWAIT_OWN_WRITE));
        }
        let mut inputs = Inputs::gather(
            &ctx.stores,
            &ctx.config.settings,
            ctx.template.clone(),
            gateway.clone(),
            wire_gateway,
            &namespace,
        );
        if !ctx.stores.relists.unchanged(view) {
            debug!(gateway = %name, %namespace, "a cache was relisted while read, reading again");
            return Ok(Gathered::Later(Requeue::Immediately));
        }
        self.lb_name = lookup::deployment_name(&ctx.config.settings, &name);
        self.deployment_version = inputs.deployment_version();
        if Pending::stale(
            &ctx.pending.deployments,
            &self.key,
            &self.deployment_version,
        ) {
            debug!(gateway = %name, %namespace, "waiting for the cache to see our Deployment write");
            return Ok(Gathered::Later(AWAIT_OWN_WRITE));
        }
        match inputs.unlabeled(wire_gateway) {
            Unlabeled::No => {}
            Unlabeled::Lagging => {
                // Both watches will have it alike soon; either's event wakes this Gateway.
                debug!(gateway = %name, %namespace, deployment = %self.lb_name, "waiting for the LB Deployment watch");
                return Ok(Gathered::Later(AWAIT_OWN_WRITE));
            }
            Unlabeled::Own => {
                // Ours, without our label: read whole, once, for this reconcile.
                let api = Api::<CachedDeployment>::namespaced(ctx.client.clone(), &namespace);
                match api.get_opt(&self.lb_name).await {
                    Ok(Some(whole)) => {
                        info!(gateway = %name, %namespace, deployment = %self.lb_name, "LB Deployment without its managed-by label: read");
                        inputs.deployment = Some(Arc::new(whole));
                    }
                    // Deleted since: the watches say so next.
                    Ok(None) => return Ok(Gathered::Later(AWAIT_OWN_WRITE)),
                    Err(source) => return Err(Error::Read { source }),
                }
            }
        }
        Ok(Gathered::Inputs(inputs))
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let ctx = &self.ctx;
        let namespace = self.namespace();
        let api = Api::<DynamicObject>::namespaced_with(
            ctx.client.clone(),
            &namespace,
            &ctx.deployment_resource,
        );
        let (name, lb_name) = (&self.key.name, &self.lb_name);
        self.verb = write::verb(&write);
        let verb = self.verb;
        // The desired Deployment becomes the request body without a copy.
        let written = match write {
            DeploymentWrite::Create(desired) => {
                let written = write::create(&api, desired).await;
                info!(gateway = %name, %namespace, deployment = %lb_name, outcome = ?written.outcome, "LB Deployment {verb}");
                written
            }
            DeploymentWrite::Update { desired, drift } => {
                let written = write::replace(&api, desired).await;
                info!(gateway = %name, %namespace, deployment = %lb_name, ?drift, outcome = ?written.outcome, "LB Deployment {verb}");
                written
            }
        };
        if written.resource_version.is_some() {
            Pending::record(
                &ctx.pending.deployments,
                self.key.clone(),
                self.deployment_version.clone(),
                &written.resource_version,
            );
        }
        ctx.metrics.deployment_write(verb, &written.outcome);
        written.outcome
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, Error> {
        let (name, namespace) = (&self.key.name, self.namespace());
        let gateways = Api::<Gateway>::namespaced(self.ctx.client.clone(), &namespace);
        match write::patch_status(&gateways, name, &patch).await {
            Ok((StatusWrite::Written, after)) => {
                info!(gateway = %name, %namespace, "status written");
                Pending::record(
                    &self.ctx.pending.statuses,
                    self.key.clone(),
                    self.gateway_version.clone(),
                    &after.unwrap_or_default(),
                );
                Ok(StatusWrite::Written)
            }
            Ok((other, _)) => {
                // A conflict: the Gateway changed since the cache's copy, and the driver
                // decides again with the newer object (the watch delivers it; its event
                // also triggers a reconcile).
                debug!(gateway = %name, %namespace, "status conflict, reconciling again");
                Ok(other)
            }
            Err(source) => Err(Error::StatusWrite {
                source,
                requeue_after: None,
            }),
        }
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        let reference = self.gateway.object_ref(&());
        self.ctx
            .recorder
            .record(&reference, events, self.verb)
            .await;
    }
}

/// What a reconcile reads from the caches besides the Gateway: the cached objects
/// themselves (shared, never converted), and the routes that name the Gateway, cloned into
/// the list the core's snapshot takes.
pub(super) struct Inputs {
    /// The Gateway, as cached (readable: the port checked it).
    gateway: Arc<Gateway>,
    /// The LB Deployment template.
    template: Arc<wire::Deployment>,
    class: Option<Arc<GatewayClass>>,
    configuration: Option<Arc<GatewayConfiguration>>,
    /// The LB Deployment, whole: from the LB cache (or read, see [`Unlabeled::Own`]).
    deployment: Option<Arc<CachedDeployment>>,
    /// A Deployment of the LB name the LB cache does not hold: its metadata.
    deployment_meta: Option<Arc<DeploymentMeta>>,
    /// Such a Deployment when it is not ours, as the core reads it (metadata only).
    foreign: Option<wire::Deployment>,
    routes: Vec<wire::L34Route>,
    /// The labels of the routes' namespaces, when a listener selects by them.
    namespace_labels: gateway_reconcile::NamespaceLabels,
}

/// What a Deployment of the LB name that only the metadata cache holds is (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unlabeled {
    /// There is none (or the LB cache holds it), or it is foreign: nothing to read.
    No,
    /// It carries our label: the LB cache has not caught up.
    Lagging,
    /// Ours (its controller is this Gateway) without our label: to be read whole.
    Own,
}

impl Inputs {
    /// Looks the Gateway's objects up in the caches.
    pub(super) fn gather(
        stores: &Stores,
        settings: &Settings,
        template: Arc<wire::Deployment>,
        cached: Arc<Gateway>,
        gateway: &wire::Gateway,
        namespace: &str,
    ) -> Inputs {
        let name = gateway.metadata.name.as_deref().unwrap_or_default();
        let class = stores
            .classes
            .get(&ObjectRef::new(&gateway.spec.gateway_class_name));
        // The one it uses: its own reference, else its class's (our kind only; the core
        // reports any other reference). An unreadable class names none here, and is the
        // Gateway's input error in the snapshot.
        let used = lookup::configuration_ref(
            settings,
            gateway,
            class.as_deref().and_then(|c| c.read().ok()),
        );
        let configuration = used.and_then(|used| {
            stores
                .configurations
                .get(&ObjectRef::new(used.name).within(used.namespace))
        });
        let lb_name = lookup::deployment_name(settings, name);
        let deployment = stores
            .deployments
            .get(&ObjectRef::new(&lb_name).within(namespace));
        let deployment_meta = match deployment {
            Some(_) => None,
            None => stores
                .deployment_meta
                .get(&ObjectRef::new(&lb_name).within(namespace)),
        };
        // Only the routes that name this Gateway (an unreadable one was reported when its
        // watch event came).
        let mut routes: Vec<wire::L34Route> = stores
            .routes_by_gateway
            .get(&ObjectRef::new(name).within(namespace))
            .iter()
            .filter_map(|key| stores.routes.get(key))
            .filter_map(|route| route.read().ok().cloned())
            .filter(|route| lookup::names_gateway(route, name, namespace))
            .collect();
        // In the cache's order of names, whatever the index's.
        routes.sort_by(|a, b| {
            let key = |r: &wire::L34Route| (r.metadata.namespace.clone(), r.metadata.name.clone());
            key(a).cmp(&key(b))
        });
        // The routes' namespaces' labels, only for a listener that selects by them.
        let mut namespace_labels = gateway_reconcile::NamespaceLabels::new();
        if lookup::uses_namespace_selector(gateway) {
            for route in &routes {
                let Some(ns) = route.metadata.namespace.as_deref() else {
                    continue;
                };
                if let Some(meta) = stores.namespaces.get(&ObjectRef::new(ns)) {
                    namespace_labels.insert(
                        ns.to_owned(),
                        meta.metadata.labels.clone().unwrap_or_default(),
                    );
                }
            }
        }
        Inputs {
            gateway: cached,
            namespace_labels,
            template,
            class,
            configuration,
            deployment,
            deployment_meta,
            foreign: None,
            routes,
        }
    }

    /// The `resourceVersion` of the Deployment of the LB name, in whichever cache has it.
    fn deployment_version(&self) -> Option<String> {
        match (&self.deployment, &self.deployment_meta) {
            (Some(whole), _) => whole.resource_version(),
            (None, Some(meta)) => meta.resource_version(),
            (None, None) => None,
        }
    }

    /// What the Deployment only the metadata cache has is; a foreign one is kept as the
    /// core reads it, from its metadata.
    pub(super) fn unlabeled(&mut self, gateway: &wire::Gateway) -> Unlabeled {
        let (None, Some(meta)) = (&self.deployment, &self.deployment_meta) else {
            return Unlabeled::No;
        };
        if lb_labeled(meta) {
            return Unlabeled::Lagging;
        }
        let observed = cached::deployment_of_meta(meta);
        // The core's own test of ownership: the controller reference's uid.
        let own = match (
            lookup::deployment_gateway(&observed),
            gateway.metadata.uid.as_deref(),
        ) {
            (Some(owner), Some(uid)) => !uid.is_empty() && owner.uid == uid,
            _ => false,
        };
        if own {
            return Unlabeled::Own;
        }
        self.foreign = Some(observed);
        Unlabeled::No
    }
}

impl port::Inputs for Inputs {
    /// The core's snapshot, borrowing the cached objects; an unreadable class,
    /// configuration or Deployment is this Gateway's input error.
    fn snapshot(&self) -> Result<gateway_reconcile::Snapshot<'_>, InputError> {
        let gateway =
            read_cached(Some(self.gateway.as_ref()))?.ok_or_else(|| InputError::Malformed {
                object: ObjectRef::from_obj(self.gateway.as_ref()).to_string(),
                why: "no Gateway".into(),
            })?;
        // A configuration the core's type cannot read is handed over as such: the Gateway
        // is told so (InvalidParameters), never left without a condition.
        let (configuration, unreadable) = match self.configuration.as_deref() {
            None => (None, None),
            Some(cached) => match cached.read() {
                Ok(configuration) => (Some(configuration), None),
                Err(why) => {
                    // The reader's error names the kind, which the message names already.
                    let why = why.strip_prefix("GatewayConfiguration: ").unwrap_or(why);
                    let meta = cached.meta();
                    let unreadable = gateway_reconcile::UnreadableConfiguration {
                        namespace: meta.namespace.as_deref().unwrap_or_default(),
                        name: meta.name.as_deref().unwrap_or_default(),
                        why,
                    };
                    (None, Some(unreadable))
                }
            },
        };
        Ok(gateway_reconcile::Snapshot::new(gateway, &self.template)
            .with_gateway_class(read_cached(self.class.as_deref())?)
            .with_configuration(configuration)
            .with_unreadable_configuration(unreadable)
            .with_deployment(match &self.foreign {
                Some(foreign) => Some(foreign),
                None => read_cached(self.deployment.as_deref())?,
            })
            .with_routes(&self.routes)
            .with_namespace_labels(&self.namespace_labels))
    }
}

/// A cached object's wire type, or why it cannot be read (naming the object).
fn read_cached<K: cached::Kind>(cached: Option<&Cached<K>>) -> Result<Option<&K>, InputError> {
    cached
        .map(|object| {
            object.read().map_err(|why| InputError::Malformed {
                object: ObjectRef::from_obj(object).to_string(),
                why: why.to_owned(),
            })
        })
        .transpose()
}

/// A Gateway the core's type cannot read: a Warning Event on it when its class is ours,
/// and the error (logged, counted, and waited on until the Gateway changes).
async fn unreadable_gateway(ctx: &Context, gateway: &Gateway, why: &str) -> Error {
    let ours = gateway.unread_class().is_some_and(|class| {
        ctx.stores
            .classes
            .get(&ObjectRef::new(class))
            .is_some_and(|class| {
                class.read().is_ok_and(|class| {
                    class.spec.controller_name == ctx.config.settings.controller_name
                })
            })
    });
    if ours {
        let event = kube::runtime::events::Event {
            type_: kube::runtime::events::EventType::Warning,
            reason: "Unreadable".into(),
            note: Some(events::truncate(why, events::MAX_NOTE_BYTES).to_owned()),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(error) = ctx.recorder.publish(&event, &gateway.object_ref(&())).await {
            warn!(gateway = %ObjectRef::from_obj(gateway), %error, "Event not recorded");
        }
    }
    Error::Input(InputError::Malformed {
        object: ObjectRef::from_obj(gateway).to_string(),
        why: why.to_owned(),
    })
}
