//! The caches a reconcile reads ([`Stores`]), their readiness, and the lookups by kind and
//! key behind the port's reads: the cached objects themselves (shared, never converted).

use std::sync::Arc;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use gateway_reconcile::reconcile::{Held, Labels};
use gateway_reconcile::{lookup, wire};
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use tracing::debug;

use super::indexes::RouteIndex;
use crate::cached::{
    self, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
    GatewayConfiguration, L34Route, NamespaceMeta,
};
use crate::health::Health;
use crate::reflect::Relists;

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

/// Whether a Deployment's labels select it into the LB watch.
pub(super) fn lb_labeled(meta: &DeploymentMeta) -> bool {
    meta.lb_labeled()
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

impl Held<wire::Deployment> for LbDeployment {
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
    pub(super) fn resource_version(&self) -> Option<String> {
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

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use futures::FutureExt;
    use gateway_reconcile::events::Event;
    use gateway_reconcile::reconcile::{
        Gathered, Labels, ReconcileError, StatusWrite, View, gather, ready,
    };
    use gateway_reconcile::{
        DeploymentWrite, Plan, Settings, Settlement, StatusPatch, WriteKind, WriteOutcome, lookup,
        wire,
    };
    use kube::ResourceExt;
    use kube::runtime::reflector::{self, ObjectRef};
    use kube::runtime::watcher;

    use super::{LbDeployment, LbRead, Ready, Stores};
    use crate::cached::{
        self, Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass,
        GatewayConfiguration, L34Route, NamespaceMeta,
    };
    use crate::controller::fixtures::meta;
    use crate::controller::indexes::route_index;
    use crate::health::Health;

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

    /// Stores with one Gateway `gw` (uid `gw-uid`) of our class and its configuration,
    /// and `deployment` in the LB cache (`whole`) or by its metadata only.
    pub(in crate::controller) fn stores_with(
        deployment: &serde_json::Value,
        whole: bool,
    ) -> Stores {
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
        let (gateways, mut gateway_writer) = reflector::store::<Gateway>();
        gateway_writer.apply_watcher_event(&watcher::Event::Apply(our_gateway()));
        Stores {
            gateways,
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

    pub(in crate::controller) fn our_gateway() -> Gateway {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1,
                         "resourceVersion": "1"},
            "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }))
        .expect("a Gateway")
    }

    /// A foreign Deployment of the LB name, whole (pod template and all).
    pub(in crate::controller) fn foreign_deployment(
        labels: serde_json::Value,
    ) -> serde_json::Value {
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
                "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
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
                "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
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
