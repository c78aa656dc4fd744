//! The controller's port: what the core's [`Driver`](gateway_reconcile::reconcile::Driver)
//! runs one reconcile of one Gateway through (see `reconciler`), reading the caches and
//! writing with the controller's client.
//!
//! The port decides nothing. Its read waits (answers "later") while a cache has not yet
//! seen the controller's own last write, or a relist is under way, since deciding from an
//! older object would repeat the write; it reads an own LB Deployment whose managed-by
//! label was removed with one GET, and confirms a name collision the core's gather asks
//! about with one GET of the Deployment's metadata. Its writes are the shipped verbs
//! ([`crate::write`](mod@crate::write)), the status patch with the cached Gateway's
//! `resourceVersion` as precondition, and the Events.

use std::sync::Arc;

use gateway_reconcile::reconcile::{self as port, Labels, StatusWrite, View};
use gateway_reconcile::{
    DeploymentWrite, InputError, Requeue, StatusPatch, WriteKind, WriteOutcome, events::Event, wire,
};
use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use tracing::{debug, info, warn};

use super::context::Context;
use super::own_writes::{AWAIT_OWN_WRITE, Finished, Pending};
use super::stores::{LbDeployment, LbRead};
use crate::cached::{Deployment as CachedDeployment, Gateway, GatewayClass, GatewayConfiguration};
use crate::events;
use crate::write;

/// Why the port could not read or write. The driver hands it back inside its
/// `ReconcileError`, which becomes the reconcile's [`Error`](super::reconciler::Error) once.
#[derive(Debug, thiserror::Error)]
pub(super) enum PortError {
    /// An API request failed: the GET of an own LB Deployment the LB cache does not hold,
    /// the GET confirming a name collision, or the status patch (other than by a conflict,
    /// which is an answer).
    #[error(transparent)]
    Request(kube::Error),
    /// The cached Gateway is one the core's type cannot read.
    #[error(transparent)]
    Unreadable(InputError),
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
    /// An event of a written object came while the write was in flight and was not its
    /// echo: held back from the trigger (`own_writes`), so this Gateway is reconciled
    /// again at once.
    changed_meanwhile: bool,
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
            changed_meanwhile: false,
        }
    }

    /// Whether an event held back during one of its writes was not that write's echo.
    pub(super) fn changed_meanwhile(&self) -> bool {
        self.changed_meanwhile
    }

    /// Counts an echo that came before its write's answer; notes a change that came with it.
    fn finished(&mut self, finished: Finished, kind: &'static str) {
        if finished.echoed {
            self.ctx.metrics.own_write_echo(kind);
        }
        self.changed_meanwhile |= finished.changed;
    }

    fn namespace(&self) -> String {
        self.key.namespace.clone().unwrap_or_default()
    }
}

impl port::Reader for CachePort {
    type Error = PortError;
    type Gateway = Arc<Gateway>;
    type Class = Arc<GatewayClass>;
    type Configuration = Arc<GatewayConfiguration>;
    type Deployment = LbDeployment;

    async fn gateway(&mut self) -> Result<View<Arc<Gateway>>, PortError> {
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

    async fn class(&mut self, name: &str) -> Result<Option<Arc<GatewayClass>>, PortError> {
        Ok(self.ctx.stores.classes.get(&ObjectRef::new(name)))
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<GatewayConfiguration>>, PortError> {
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
    ) -> Result<Option<LbDeployment>, PortError> {
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
                    Err(source) => Err(PortError::Request(source)),
                }
            }
        }
    }

    async fn routes(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<wire::L34Route>, PortError> {
        Ok(self.ctx.stores.routes_naming(namespace, name))
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, PortError> {
        Ok(self.ctx.stores.namespace_labels(name))
    }

    fn template(&mut self) -> Arc<wire::Deployment> {
        self.ctx.template.clone()
    }

    /// One consistent GET of the Deployment's metadata: the cached `resourceVersion` means
    /// the cache is current, and the collision stands; another, or none, means the
    /// Deployment watches are behind, and the reconcile waits for them (their event wakes
    /// it). A real collision costs this one GET per reconcile.
    async fn confirm_collision(
        &mut self,
        namespace: &str,
        name: &str,
        _: &LbDeployment,
    ) -> Result<View<()>, PortError> {
        let api = Api::<CachedDeployment>::namespaced(self.ctx.client.clone(), namespace);
        let stored = api
            .get_metadata_opt(name)
            .await
            .map_err(PortError::Request)?
            .and_then(|meta| meta.resource_version());
        if stored.is_some() && stored == self.deployment_version {
            return Ok(View::Ready(()));
        }
        debug!(gateway = %self.key.name, %namespace, deployment = name, cached = ?self.deployment_version, ?stored, "a name collision the Deployment caches are behind on: waiting for them");
        Ok(View::Later(AWAIT_OWN_WRITE))
    }

    async fn reads_done(&mut self) -> Result<View<()>, PortError> {
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
    type Error = PortError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let ctx = self.ctx.clone();
        let namespace = self.namespace();
        let api = Api::<DynamicObject>::namespaced_with(
            ctx.client.clone(),
            &namespace,
            &ctx.deployment_resource,
        );
        let (name, lb_name) = (&self.key.name, &self.lb_name);
        self.verb = write::verb(&write);
        let verb = self.verb;
        let in_flight = Pending::begin(
            &ctx.pending.deployments,
            self.key.clone(),
            self.deployment_version.clone(),
        );
        // The desired Deployment becomes the request body without a copy.
        let written = match write {
            DeploymentWrite::Create(desired) => {
                let written = write::create(&api, desired).await;
                info!(gateway = %name, %namespace, deployment = %lb_name, outcome = %logged(&written.outcome), "LB Deployment {verb}");
                written
            }
            DeploymentWrite::Update { desired, drift } => {
                let written = write::replace(&api, desired).await;
                info!(gateway = %name, %namespace, deployment = %lb_name, ?drift, outcome = %logged(&written.outcome), "LB Deployment {verb}");
                written
            }
        };
        let finished = in_flight.finish(written.resource_version.clone().map(Some));
        self.finished(finished, "deployment");
        ctx.metrics.deployment_write(verb, &written.outcome);
        written.outcome
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, PortError> {
        let ctx = self.ctx.clone();
        let (name, namespace) = (self.key.name.clone(), self.namespace());
        let gateways = Api::<Gateway>::namespaced(ctx.client.clone(), &namespace);
        let in_flight = Pending::begin(
            &ctx.pending.statuses,
            self.key.clone(),
            self.gateway_version.clone(),
        );
        let patched = write::patch_status(&gateways, &name, &patch).await;
        let after = match &patched {
            Ok((StatusWrite::Written, after)) => Some(after.clone().unwrap_or_default()),
            _ => None,
        };
        self.finished(in_flight.finish(after), "status");
        match patched {
            Ok((StatusWrite::Written, _)) => {
                info!(gateway = %name, %namespace, "status written");
                Ok(StatusWrite::Written)
            }
            Ok((other, _)) => {
                // A conflict: the Gateway changed since the cache's copy, and the driver
                // decides again with the newer object (the watch delivers it; its event
                // also triggers a reconcile).
                debug!(gateway = %name, %namespace, "status conflict, reconciling again");
                Ok(other)
            }
            Err(source) => Err(PortError::Request(source)),
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

/// A write's outcome as the log says it: the stored Deployment by its generation and
/// `resourceVersion` (the object itself is kilobytes), an error by its code, reason and
/// message.
fn logged(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Applied => "applied".to_owned(),
        WriteOutcome::Stored(stored) => format!(
            "stored (generation {}, resourceVersion {})",
            stored
                .generation()
                .map_or("none".to_owned(), |g| g.to_string()),
            stored.object["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("none")
        ),
        WriteOutcome::Api(error) => {
            format!("{} {}: {}", error.code, error.reason, error.message)
        }
        WriteOutcome::Transport { message } => format!("no answer: {message}"),
        // A newer core's outcome: its message.
        other => other.message().to_owned(),
    }
}

/// A Gateway the core's type cannot read: a Warning Event on it when its class is ours,
/// and the error (logged, counted, and waited on until the Gateway changes).
async fn unreadable_gateway(ctx: &Context, gateway: &Gateway, why: &str) -> PortError {
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
    PortError::Unreadable(InputError::Malformed {
        object: ObjectRef::from_obj(gateway).to_string(),
        why: why.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use gateway_reconcile::reconcile::{Reader, View, gather};
    use gateway_reconcile::{Plan, Requeue, Settings, lookup};
    use serde_json::json;

    use super::CachePort;
    use crate::controller::client::client;
    use crate::controller::client::tests::{answering, serving};
    use crate::controller::fixtures::{context, context_with, gateway};
    use crate::controller::own_writes::AWAIT_OWN_WRITE;
    use crate::controller::stores::tests::{foreign_deployment, our_gateway, stores_with};
    use crate::leader::Leadership;

    /// A write's outcome is logged by what it is, never as the whole stored Deployment.
    #[test]
    fn an_outcome_is_logged_short() {
        use gateway_reconcile::WriteOutcome;
        let stored: gateway_reconcile::wire::Deployment = serde_json::from_value(
            serde_json::json!({"metadata": {"name": "d", "generation": 3, "resourceVersion": "42"},
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}),
        )
        .expect("a Deployment");
        assert_eq!(
            super::logged(&WriteOutcome::Stored(stored)),
            "stored (generation 3, resourceVersion 42)"
        );
        assert_eq!(super::logged(&WriteOutcome::Applied), "applied");
        assert_eq!(
            super::logged(&WriteOutcome::from_parts(Some(409), "Conflict", "stale")),
            "409 Conflict: stale"
        );
    }

    /// A retry of a Gateway deleted meanwhile (the cache no longer holds it) acts on
    /// nothing: no request, and no reconcile until a change.
    #[tokio::test]
    async fn a_gateway_gone_from_the_cache_is_not_reconciled() {
        let (url, requests) = answering(404).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let ctx = context(client, Leadership::always());
        let mut port = CachePort::new(ctx, gateway("gw"));
        let read = Reader::gateway(&mut port).await.expect("read");
        assert!(matches!(read, View::Later(Requeue::AwaitChange)));
        assert_eq!(requests.load(Ordering::SeqCst), 0);
    }

    /// A name collision is confirmed with one GET of the Deployment's metadata before the
    /// core reports it: the cached `resourceVersion` decides from the cache; another, or
    /// none, waits for the Deployment watches (a Gateway created again, whose former LB
    /// Deployment's deletion they have not delivered yet). An own Deployment costs no GET.
    #[tokio::test]
    async fn a_name_collision_is_confirmed_before_the_core_reports_it() {
        let settings = Settings::default();
        // The LB Deployment of a former Gateway `gw` (another uid), cached at "9": whole
        // (our label) or by its metadata (without it).
        let former = |labels: serde_json::Value, uid: &str| {
            let mut deployment = foreign_deployment(labels);
            deployment["metadata"]["ownerReferences"] = json!([
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw",
                 "uid": uid, "controller": true}
            ]);
            deployment
        };
        let labelled = json!({lookup::MANAGED_BY_LABEL: lookup::MANAGED_BY});
        let unlabelled = json!({"app": "sllbr-gw"});
        let stored = |rv: &str| {
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                   "metadata": {"name": "sllbr-gw", "namespace": "ns", "resourceVersion": rv}})
            .to_string()
        };
        let gone = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "reason": "NotFound", "code": 404})
        .to_string();
        let cases = [
            (
                "whole, current",
                &labelled,
                "old-uid",
                200,
                stored("9"),
                Some(true),
                1,
            ),
            (
                "by metadata, current",
                &unlabelled,
                "old-uid",
                200,
                stored("9"),
                Some(true),
                1,
            ),
            (
                "whole, behind",
                &labelled,
                "old-uid",
                200,
                stored("12"),
                None,
                1,
            ),
            (
                "by metadata, gone",
                &unlabelled,
                "old-uid",
                404,
                gone.clone(),
                None,
                1,
            ),
            ("own", &labelled, "gw-uid", 404, gone, Some(false), 0),
        ];
        for (case, labels, owner, code, body, collision, gets) in cases {
            let (url, requests) = serving(code, "", body).await;
            let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
            let whole = labels == &labelled;
            let stores = stores_with(&former(labels.clone(), owner), whole);
            let ctx = context_with(client, Leadership::always(), stores);
            let mut port = CachePort::new(ctx, Arc::new(our_gateway()));
            let gathered = gather(&settings, &mut port).await.expect(case);
            assert_eq!(requests.load(Ordering::SeqCst), gets, "{case}");
            let gathered = match (gathered, collision) {
                (View::Ready(gathered), Some(_)) => gathered,
                (View::Later(requeue), None) => {
                    assert_eq!(requeue, AWAIT_OWN_WRITE, "{case}");
                    continue;
                }
                (other, _) => panic!("{case}: {:?}", matches!(other, View::Ready(_))),
            };
            let snapshot = gathered.snapshot().expect(case);
            let plan = gateway_reconcile::plan(&settings, snapshot, jiff::Timestamp::now());
            let status = match plan.expect(case) {
                Plan::Settled(settled) => settled.status_patch().map(|p| p.into_body().to_string()),
                Plan::Write(_) => None,
            };
            let says = status.as_deref().is_some_and(|s| {
                s.contains("owned by Gateway/gw, cannot proceed due to name collision")
            });
            assert_eq!(Some(says), collision, "{case}: {status:?}");
        }
    }
}
