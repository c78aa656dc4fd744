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

#[cfg(test)]
mod tests {
    use gateway_reconcile::reconcile::Inputs as CoreInputs;
    use gateway_reconcile::{Plan, Settlement};
    use kube::runtime::reflector;
    use kube::runtime::watcher;

    use super::super::triggers::tests::meta;
    use super::super::*;
    use super::*;

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
            namespaces: reflector::store::<NamespaceMeta>().0,
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
            namespaces: reflector::store::<NamespaceMeta>().0,
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
    fn an_unreadable_cached_configuration_is_handed_to_the_core_as_such() {
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
            namespaces: reflector::store::<NamespaceMeta>().0,
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
        // Handed to the core as unreadable (its InvalidParameters), with the reader's error.
        let snapshot = CoreInputs::snapshot(&inputs).expect("the snapshot");
        assert!(snapshot.configuration.is_none());
        let unreadable = snapshot.unreadable_configuration.expect("unreadable");
        assert_eq!((unreadable.namespace, unreadable.name), ("ns", "conf"));
        assert_eq!(
            unreadable.why,
            "spec.networkAttachments: expected a list, found 5"
        );
    }
}
