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

use gateway_reconcile::reconcile::{self as port, Labels, ReconcileError, StatusWrite, View};
use gateway_reconcile::{
    DeploymentWrite, InputError, Requeue, StatusPatch, WriteKind, WriteOutcome, events::Event,
    lookup, wire,
};
use kube::api::{Api, DynamicObject};
use kube::runtime::controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use tracing::{debug, info, warn};

use super::{AWAIT_OWN_WRITE, Context, Error, Pending, Stores, lb_labeled};
use crate::backoff;
use crate::cached::{
    self, Deployment as CachedDeployment, Gateway, GatewayClass, GatewayConfiguration,
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
    /// The Gateway's uid, which decides whether an unlabelled Deployment is its own.
    gateway_uid: String,
    /// The caches' state between relists when the reads began.
    view: Option<crate::reflect::View>,
    /// Not now: a read found the caches behind the controller's own write.
    later: Option<Requeue>,
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
            gateway_uid: String::new(),
            view: None,
            later: None,
            verb: "Reconcile",
        }
    }

    fn namespace(&self) -> String {
        self.key.namespace.clone().unwrap_or_default()
    }
}

impl port::Reader for CachePort {
    type Error = Error;
    type Gateway = Arc<Gateway>;
    type Class = Arc<GatewayClass>;
    type Configuration = Arc<GatewayConfiguration>;
    type Deployment = LbDeployment;

    async fn gateway(&mut self) -> Result<View<Arc<Gateway>>, Error> {
        let ctx = self.ctx.clone();
        // No cache is being relisted from here until the reads are done (see `reflect`).
        self.view = Some(ctx.stores.relists.quiet().await);
        // The cached Gateway may be newer than the one this reconcile was started with; a
        // Gateway the cache no longer holds is gone (a reconcile is only ever started for
        // one the cache shows): nothing to do, and no write to a Gateway that is not there
        // (a retry after a failed status write would otherwise act on its last copy).
        let Some(gateway) = ctx.stores.gateways.get(&self.key) else {
            debug!(gateway = %self.key, "gone from the cache: nothing to reconcile");
            return Ok(View::Later(Requeue::AwaitChange));
        };
        let Some(namespace) = gateway.namespace() else {
            return Ok(View::Later(Requeue::AwaitChange));
        };
        debug!(gateway = %self.key.name, %namespace, "reconciling");
        let wire_gateway = match gateway.read() {
            Ok(wire_gateway) => wire_gateway,
            Err(why) => return Err(unreadable_gateway(&ctx, &gateway, why).await),
        };
        self.gateway_uid = wire_gateway.metadata.uid.clone().unwrap_or_default();
        self.gateway_version = gateway.resource_version().unwrap_or_default();
        if Pending::stale(&ctx.pending.statuses, &self.key, &self.gateway_version) {
            debug!(gateway = %self.key.name, %namespace, "waiting for the cache to see our status write");
            return Ok(View::Later(AWAIT_OWN_WRITE));
        }
        Ok(View::Ready(gateway))
    }

    async fn class(&mut self, name: &str) -> Result<Option<Arc<GatewayClass>>, Error> {
        Ok(self.ctx.stores.classes.get(&ObjectRef::new(name)))
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<GatewayConfiguration>>, Error> {
        Ok(self
            .ctx
            .stores
            .configurations
            .get(&ObjectRef::new(name).within(namespace)))
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<LbDeployment>, Error> {
        let ctx = self.ctx.clone();
        self.lb_name = name.to_owned();
        let found = ctx.stores.lb_deployment(namespace, name, &self.gateway_uid);
        self.deployment_version = found.resource_version();
        if Pending::stale(
            &ctx.pending.deployments,
            &self.key,
            &self.deployment_version,
        ) {
            debug!(gateway = %self.key.name, %namespace, "waiting for the cache to see our Deployment write");
            self.later = Some(AWAIT_OWN_WRITE);
            return Ok(None);
        }
        match found {
            LbRead::Found(deployment) => Ok(Some(deployment)),
            LbRead::Missing => Ok(None),
            LbRead::Lagging(_) => {
                // Both watches will have it alike soon; either's event wakes this Gateway.
                debug!(gateway = %self.key.name, %namespace, deployment = name, "waiting for the LB Deployment watch");
                self.later = Some(AWAIT_OWN_WRITE);
                Ok(None)
            }
            LbRead::Own(_) => {
                // Ours, without our label: read whole, once, for this reconcile.
                let api = Api::<CachedDeployment>::namespaced(ctx.client.clone(), namespace);
                match api.get_opt(name).await {
                    Ok(Some(whole)) => {
                        info!(gateway = %self.key.name, %namespace, deployment = name, "LB Deployment without its managed-by label: read");
                        Ok(Some(LbDeployment::Cached(Arc::new(whole))))
                    }
                    // Deleted since: the watches say so next.
                    Ok(None) => {
                        self.later = Some(AWAIT_OWN_WRITE);
                        Ok(None)
                    }
                    Err(source) => Err(Error::Read { source }),
                }
            }
        }
    }

    async fn routes(&mut self, namespace: &str, name: &str) -> Result<Vec<wire::L34Route>, Error> {
        Ok(self.ctx.stores.routes_naming(namespace, name))
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, Error> {
        Ok(self.ctx.stores.namespace_labels(name))
    }

    fn template(&mut self) -> Arc<wire::Deployment> {
        self.ctx.template.clone()
    }

    async fn reads_done(&mut self) -> Result<View<()>, Error> {
        let relisted = self
            .view
            .is_some_and(|view| !self.ctx.stores.relists.unchanged(view));
        if relisted {
            debug!(gateway = %self.key, "a cache was relisted while read, reading again");
            return Ok(View::Later(Requeue::Immediately));
        }
        Ok(match self.later.take() {
            Some(requeue) => View::Later(requeue),
            None => View::Ready(()),
        })
    }
}

impl port::Port for CachePort {
    type Error = Error;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
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

/// The Deployment of the LB name as the caches hold it: whole from the LB cache (or read,
/// see [`LbRead::Own`]), or a foreign one by its metadata, as the core reads it.
#[derive(Debug)]
pub(super) enum LbDeployment {
    /// Whole.
    Cached(Arc<CachedDeployment>),
    /// Not ours: its metadata only, and its `resourceVersion`.
    Foreign(wire::Deployment, Option<String>),
}

impl port::Held<wire::Deployment> for LbDeployment {
    fn read(&self) -> Result<&wire::Deployment, &str> {
        match self {
            LbDeployment::Cached(cached) => cached.read(),
            LbDeployment::Foreign(foreign, _) => Ok(foreign),
        }
    }
}

/// What the caches hold under a Gateway's LB Deployment name (see the module
/// documentation of the controller).
#[derive(Debug)]
pub(super) enum LbRead {
    /// The LB cache holds it whole, or the metadata cache holds a foreign one.
    Found(LbDeployment),
    /// Neither cache holds one.
    Missing,
    /// The metadata cache holds it with our label: the LB cache has not caught up. Its
    /// `resourceVersion`.
    Lagging(Option<String>),
    /// Ours (its controller is this Gateway) without our label: to be read whole. Its
    /// `resourceVersion`.
    Own(Option<String>),
}

impl LbRead {
    /// The `resourceVersion` of the Deployment of the LB name, in whichever cache has it.
    fn resource_version(&self) -> Option<String> {
        match self {
            LbRead::Found(LbDeployment::Cached(whole)) => whole.resource_version(),
            LbRead::Found(LbDeployment::Foreign(_, version)) => version.clone(),
            LbRead::Missing => None,
            LbRead::Lagging(version) | LbRead::Own(version) => version.clone(),
        }
    }
}

/// The cache lookups behind the port's reads: by kind and key, the cached objects
/// themselves (shared, never converted).
impl Stores {
    /// The Deployment `namespace/name` as the caches hold it, for the Gateway of uid
    /// `gateway_uid`.
    pub(super) fn lb_deployment(&self, namespace: &str, name: &str, gateway_uid: &str) -> LbRead {
        let key = ObjectRef::new(name).within(namespace);
        if let Some(whole) = self.deployments.get(&key) {
            return LbRead::Found(LbDeployment::Cached(whole));
        }
        let Some(meta) = self
            .deployment_meta
            .get(&ObjectRef::new(name).within(namespace))
        else {
            return LbRead::Missing;
        };
        let version = meta.resource_version();
        if lb_labeled(&meta) {
            return LbRead::Lagging(version);
        }
        let observed = cached::deployment_of_meta(&meta);
        // The core's own test of ownership: the controller reference's uid.
        let own = lookup::deployment_gateway(&observed)
            .is_some_and(|owner| !gateway_uid.is_empty() && owner.uid == gateway_uid);
        if own {
            return LbRead::Own(version);
        }
        LbRead::Found(LbDeployment::Foreign(observed, version))
    }

    /// The readable routes the index has under the Gateway `namespace/name` (an unreadable
    /// one was reported when its watch event came).
    pub(super) fn routes_naming(&self, namespace: &str, name: &str) -> Vec<wire::L34Route> {
        self.routes_by_gateway
            .get(&ObjectRef::new(name).within(namespace))
            .iter()
            .filter_map(|key| self.routes.get(key))
            .filter_map(|route| route.read().ok().cloned())
            .collect()
    }

    /// The labels of the namespace `name`.
    pub(super) fn namespace_labels(&self, name: &str) -> Option<Labels> {
        self.namespaces
            .get(&ObjectRef::new(name))
            .map(|meta| meta.metadata.labels.clone().unwrap_or_default())
    }
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
    use gateway_reconcile::reconcile::{Gathered, gather, ready};
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

    /// The cache reads of the controller's port, without its client: what the driver
    /// reads from these caches for one Gateway.
    struct StoresPort<'s> {
        stores: &'s Stores,
        gateway: Arc<Gateway>,
        template: Arc<wire::Deployment>,
    }

    impl gateway_reconcile::reconcile::Reader for StoresPort<'_> {
        type Error = String;
        type Gateway = Arc<Gateway>;
        type Class = Arc<GatewayClass>;
        type Configuration = Arc<GatewayConfiguration>;
        type Deployment = LbDeployment;

        async fn gateway(&mut self) -> Result<View<Arc<Gateway>>, String> {
            Ok(View::Ready(self.gateway.clone()))
        }
        async fn class(&mut self, name: &str) -> Result<Option<Arc<GatewayClass>>, String> {
            Ok(self.stores.classes.get(&ObjectRef::new(name)))
        }
        async fn configuration(
            &mut self,
            namespace: &str,
            name: &str,
        ) -> Result<Option<Arc<GatewayConfiguration>>, String> {
            Ok(self
                .stores
                .configurations
                .get(&ObjectRef::new(name).within(namespace)))
        }
        async fn deployment(
            &mut self,
            namespace: &str,
            name: &str,
        ) -> Result<Option<LbDeployment>, String> {
            let uid = self
                .gateway
                .read()
                .ok()
                .and_then(|g| g.metadata.uid.clone());
            match self
                .stores
                .lb_deployment(namespace, name, uid.as_deref().unwrap_or_default())
            {
                LbRead::Found(found) => Ok(Some(found)),
                LbRead::Missing => Ok(None),
                other => Err(format!("{other:?}")),
            }
        }
        async fn routes(
            &mut self,
            namespace: &str,
            name: &str,
        ) -> Result<Vec<wire::L34Route>, String> {
            Ok(self.stores.routes_naming(namespace, name))
        }
        async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, String> {
            Ok(self.stores.namespace_labels(name))
        }
        fn template(&mut self) -> Arc<wire::Deployment> {
            self.template.clone()
        }
    }

    impl gateway_reconcile::reconcile::Port for StoresPort<'_> {
        type Error = String;
        type Reader = Self;

        fn reader(&mut self) -> &mut Self {
            self
        }

        async fn write(&mut self, _: DeploymentWrite) -> WriteOutcome {
            WriteOutcome::Transport {
                message: "the caches' test port writes nothing".into(),
            }
        }
        async fn patch_status(&mut self, _: StatusPatch) -> Result<StatusWrite, String> {
            Err("the caches' test port writes nothing".into())
        }
        async fn record(&mut self, _: WriteKind, _: &[Event]) {}
    }

    /// What the driver gathers for `gateway` from these caches; the read's error when the
    /// caches alone cannot answer (a Deployment to be read whole, or awaited).
    fn gathered<'s>(
        stores: &'s Stores,
        gateway: Arc<Gateway>,
        template: Arc<wire::Deployment>,
    ) -> Result<Gathered<StoresPort<'s>>, String> {
        let mut port = StoresPort {
            stores,
            gateway,
            template,
        };
        match ready(gather(&Settings::default(), &mut port)).expect("ready") {
            Ok(View::Ready(gathered)) => Ok(gathered),
            Ok(View::Later(requeue)) => Err(format!("later: {requeue:?}")),
            Err(ReconcileError::Read(why)) => Err(why),
            Err(other) => Err(other.to_string()),
        }
    }

    /// What the core settles for `gw` from these caches (`Err`: the reconcile does not
    /// decide from the caches alone, and why).
    fn decided(stores: &Stores, now: jiff::Timestamp) -> Result<Settlement, String> {
        let settings = Settings::default();
        let template = Arc::new(gateway_reconcile::template::default_template());
        let inputs = gathered(stores, Arc::new(our_gateway()), template)?;
        let snapshot = inputs.snapshot().expect("readable inputs");
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
            Err("Own(Some(\"9\"))".to_owned())
        );
        // Labelled, but the LB watch has not delivered it yet.
        let labelled = own(serde_json::json!({lookup::MANAGED_BY_LABEL: lookup::MANAGED_BY}));
        assert_eq!(
            decided(&stores_with(&labelled, false), now),
            Err("Lagging(Some(\"9\"))".to_owned())
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
            let inputs = gathered(&stores, gateway.clone(), template.clone()).expect("gathered");
            let snapshot = inputs.snapshot().expect("readable inputs");
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
        let template = Arc::new(wire::Deployment::default());
        let inputs = gathered(&stores, gateway, template).expect("gathered");
        // Handed to the core as unreadable (its InvalidParameters), with the reader's error.
        let snapshot = inputs.snapshot().expect("the snapshot");
        assert!(snapshot.configuration.is_none());
        let unreadable = snapshot.unreadable_configuration.expect("unreadable");
        assert_eq!((unreadable.namespace, unreadable.name), ("ns", "conf"));
        assert_eq!(
            unreadable.why,
            "spec.networkAttachments: expected a list, found 5"
        );
    }
}
