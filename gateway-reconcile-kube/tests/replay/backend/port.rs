//! The reconcile of a scenario step: the GatewayClass's own status, then the core's
//! `Driver` over the kube crate's `FreshPort` (the shipped reads, write verbs and status
//! patch), wrapped in a [`ReplayPort`] that translates names and makes the faults
//! admission cannot.

use std::sync::Arc;

use gateway_reconcile::events::Event;
use gateway_reconcile::reconcile::{Labels, Port, Reader, ReconcileError, StatusWrite, View};
use gateway_reconcile::sim::cluster::{Kind, ReconcileReport};
use gateway_reconcile::sim::scenario::StepError;
use gateway_reconcile::{
    DeploymentWrite, StatusPatch, WriteKind, WriteOutcome, gateway_class, lookup, wire,
};
use gateway_reconcile_kube::cached::{Cached, Kind as CachedKind};
use gateway_reconcile_kube::fresh::FreshPort;
use gateway_reconcile_kube::write;
use jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use super::admission::Admission;
use super::{MARKER, NAME_LABEL, Real, Step, api_text, failed};

impl Real {
    /// One reconcile: the GatewayClass's own status first (as the simulator settles it),
    /// then the core's `Driver` over the kube crate's `FreshPort` (the shipped reads and
    /// writes) wrapped in a [`ReplayPort`] that translates names and injects the faults.
    ///
    /// The replay reads fresh where the controller reads its caches: a scenario step
    /// changes the cluster and the next reconcile must decide from that change, which a
    /// watch cache shows only some time later. The caches are the controller stories'
    /// business (`writes.rs`, `recovery.rs`, `caches.rs` and `revision4.rs` run the shipped
    /// controller).
    pub(super) async fn reconcile_at(&mut self, now: Timestamp) -> Step<ReconcileReport> {
        let controller = self.controller.clone();
        let Some(gateway_json) = self.get(&controller, Kind::Gateway).await? else {
            return failed("the Gateway is gone");
        };
        let gateway: wire::Gateway = read_as_cached(gateway_json)?;
        self.class_name = gateway.spec.gateway_class_name.clone();
        let class_status_written = match self.get(&controller, Kind::GatewayClass).await? {
            Some(class) => {
                let class: wire::GatewayClass = read_as_cached(class)?;
                self.settle_class(&class, now).await?
            }
            None => false,
        };

        let template: wire::Deployment = serde_json::from_value(self.template.clone())
            .or_else(|e| failed(format!("template: {e}")))?;
        let real_ns = self.namespace().unwrap_or_default().to_owned();
        let inner = FreshPort::new(controller, Arc::new(template), &real_ns, &self.gateway_name);
        let driver = std::mem::take(&mut self.driver);
        let mut port = ReplayPort {
            real: self,
            inner,
            now,
            error: None,
        };
        let result = driver.reconcile(&mut port, now).await;
        let error = port.error.take();
        self.driver = driver;
        if let Some(error) = error {
            return Err(error);
        }
        let reconciled = match result {
            Ok(reconciled) => reconciled,
            Err(ReconcileError::Input(e)) => return failed(format!("plan: {e}")),
            Err(e) => return failed(e.to_string()),
        };
        let Some(decided) = reconciled.decided else {
            return failed("the reconcile read nothing (the Gateway is gone)");
        };
        if decided.status == StatusWrite::Conflict {
            return failed("the status write met a conflict: no other writer changes the Gateway");
        }
        let admin = self.admin.clone();
        let after = self
            .get(&admin, Kind::Gateway)
            .await?
            .unwrap_or(Value::Null);
        let status: wire::GatewayStatus = after
            .get("status")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .or_else(|e| failed(format!("Gateway status: {e}")))?
            .unwrap_or_default();
        Ok(ReconcileReport {
            class_conditions: self
                .get(&admin, Kind::GatewayClass)
                .await?
                .and_then(|c| c.pointer("/status/conditions").cloned())
                .map(serde_json::from_value)
                .transpose()
                .or_else(|e| failed(format!("GatewayClass status: {e}")))?
                .unwrap_or_default(),
            class_status_written,
            ..ReconcileReport::of(now, decided, status)
        })
    }

    /// The server's object, read into the core's type, as the file names it.
    fn file_wire<K: CachedKind + Clone + serde::Serialize>(
        &self,
        kind: Kind,
        object: &K,
    ) -> Step<K> {
        let json = serde_json::to_value(object).or_else(|e| failed(format!("{kind}: {e}")))?;
        read_as_cached(self.file_form(kind, json))
    }

    /// The GatewayClass's own status, settled by the core and written as the controller
    /// writes it (a merge patch of `gatewayclasses/status` with the server's
    /// `resourceVersion`); whether it was written.
    async fn settle_class(&mut self, class: &wire::GatewayClass, now: Timestamp) -> Step<bool> {
        // Whether the configuration the class names as its default exists, as the
        // controller's cache would say (the class is read as the file names it).
        let presence = match lookup::class_configuration_ref(&self.settings, class) {
            None => false,
            Some(named) => match self.namespaces.get(named.namespace) {
                None => false,
                Some(real) => {
                    let api = self.api(&self.controller, Kind::Configuration, Some(real));
                    api.get_opt(named.name)
                        .await
                        .or_else(|e| {
                            failed(format!("GET the class's configuration: {}", api_text(&e)))
                        })?
                        .is_some()
                }
            },
        };
        let settled = gateway_class::settle_class(&self.settings, class, presence.into(), now)
            .or_else(|e| failed(format!("settle the class: {e}")))?;
        let Some(patch) = settled.status_patch() else {
            return Ok(false);
        };
        let name = self.class_on_server(&self.class_name);
        let api = self.api(&self.controller, Kind::GatewayClass, None);
        let params = PatchParams {
            field_manager: Some(write::FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        api.patch_status(&name, &params, &Patch::Merge(patch.body()))
            .await
            .or_else(|e| failed(format!("class status write: {}", api_text(&e))))?;
        Ok(true)
    }
}

/// The kube crate's [`FreshPort`] as a scenario runs it: the objects the core sees carry
/// the file's names and uids, the Deployment written carries the server's namespace, and
/// the faults a `failWrites` step asks for that admission cannot make (a concurrent update
/// between the read and the write) are made here.
struct ReplayPort<'r> {
    real: &'r mut Real,
    inner: FreshPort,
    now: Timestamp,
    /// A step error met inside a port method (which answers an outcome, not an error).
    error: Option<StepError<String>>,
}

impl ReplayPort<'_> {
    /// The server's namespace of a file's namespace (`None`: the scenario made none).
    fn real_ns(&self, file: &str) -> Option<String> {
        self.real.namespaces.get(file).cloned()
    }

    /// An object the inner port read, in the file's names (an unreadable one as read).
    fn file_held<K: CachedKind + Clone + serde::Serialize>(
        &self,
        kind: Kind,
        held: Option<Cached<K>>,
    ) -> Step<Option<Result<K, String>>> {
        held.map(|held| match held.read() {
            Ok(object) => self.real.file_wire(kind, object).map(Ok),
            Err(why) => Ok(Err(why.to_owned())),
        })
        .transpose()
    }

    /// The inner port's read error, as a step's.
    fn inner<T>(result: Result<T, gateway_reconcile_kube::fresh::FreshError>) -> Step<T> {
        result.or_else(|e| failed(e.to_string()))
    }

    /// Before the write: a pending conflict is made as `failWrites` asks (a create cannot
    /// conflict: the webhook answers it instead, from now on; an update meets another
    /// writer's change between the read and the write).
    async fn before_write(&mut self, write: &DeploymentWrite) -> Step<()> {
        let real = &mut *self.real;
        let conflict = matches!(
            real.pending.as_ref().map(|p| &p.admission),
            Some(Admission::Conflict)
        );
        if !conflict {
            return Ok(());
        }
        match write {
            DeploymentWrite::Create(_) => {
                let outcome = real.pending.as_ref().map(|p| p.outcome.clone());
                if let Some(outcome) = outcome {
                    real.check_text(&outcome, &Real::webhook_text(outcome.message()))?;
                    let admission = real.install_webhook(&outcome).await?;
                    if let Some(pending) = real.pending.as_mut() {
                        pending.admission = admission;
                    }
                }
            }
            DeploymentWrite::Update { .. } => {
                let real_ns = real.namespace().unwrap_or_default().to_owned();
                let admin = real.api(&real.admin, Kind::Deployment, Some(&real_ns));
                let name = real.name_of(Kind::Deployment)?;
                let marker = json!({ "metadata": { "labels": { MARKER: format!("{}", self.now.as_second()) } } });
                admin
                    .patch(&name, &PatchParams::default(), &Patch::Merge(marker))
                    .await
                    .or_else(|e| failed(format!("concurrent update: {}", api_text(&e))))?;
            }
        }
        Ok(())
    }

    /// After the write: a failure counts against the pending `failWrites`; a stored object
    /// is read back in the file's names.
    async fn after_write(&mut self, outcome: WriteOutcome) -> Step<WriteOutcome> {
        self.real.counts.deployment_writes += 1;
        if outcome.class().is_some() {
            self.real.failed_write().await?;
        }
        match outcome {
            WriteOutcome::Stored(stored) => {
                serde_json::from_value(self.real.file_form(Kind::Deployment, stored.into_json()))
                    .map(WriteOutcome::Stored)
                    .or_else(|e| failed(format!("stored Deployment: {e}")))
            }
            other => Ok(other),
        }
    }
}

/// Each read asks the inner port by the server's key and answers in the file's names.
impl Reader for ReplayPort<'_> {
    type Error = StepError<String>;
    type Gateway = wire::Gateway;
    type Class = Result<wire::GatewayClass, String>;
    type Configuration = Result<wire::GatewayConfiguration, String>;
    type Deployment = wire::Deployment;

    async fn gateway(&mut self) -> Step<View<wire::Gateway>> {
        let gateway = match Self::inner(self.inner.gateway().await)? {
            View::Ready(gateway) => gateway,
            View::Later(requeue) => return Ok(View::Later(requeue)),
        };
        let gateway = match gateway.read() {
            Ok(gateway) => self.real.file_wire(Kind::Gateway, gateway)?,
            Err(why) => return failed(format!("Gateway: {why}")),
        };
        self.real.class_name = gateway.spec.gateway_class_name.clone();
        Ok(View::Ready(gateway))
    }

    async fn class(&mut self, name: &str) -> Step<Option<Self::Class>> {
        let on_server = self.real.class_on_server(name);
        let held = Self::inner(self.inner.class(&on_server).await)?;
        self.file_held(Kind::GatewayClass, held)
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Step<Option<Self::Configuration>> {
        // The backend's configuration steps name the one the driver reads.
        self.real.configuration_name = Some(name.to_owned());
        let Some(real_ns) = self.real_ns(namespace) else {
            return Ok(None);
        };
        let held = Self::inner(self.inner.configuration(&real_ns, name).await)?;
        self.file_held(Kind::Configuration, held)
    }

    async fn deployment(&mut self, namespace: &str, name: &str) -> Step<Option<wire::Deployment>> {
        let Some(real_ns) = self.real_ns(namespace) else {
            return Ok(None);
        };
        match Self::inner(self.inner.deployment(&real_ns, name).await)? {
            None => Ok(None),
            Some(held) => {
                let json = match held.read() {
                    Ok(deployment) => deployment.to_json(),
                    Err(why) => return failed(format!("Deployment: {why}")),
                };
                serde_json::from_value(self.real.file_form(Kind::Deployment, json))
                    .map(Some)
                    .or_else(|e| failed(format!("Deployment: {e}")))
            }
        }
    }

    async fn routes(&mut self, namespace: &str, name: &str) -> Step<Vec<wire::L34Route>> {
        let real_ns = self.real_ns(namespace).unwrap_or_default();
        let routes = Self::inner(self.inner.routes(&real_ns, name).await)?;
        routes
            .iter()
            .map(|route| self.real.file_wire(Kind::Routes, route))
            .collect()
    }

    async fn namespace_labels(&mut self, name: &str) -> Step<Option<Labels>> {
        let Some(real_ns) = self.real_ns(name) else {
            return Ok(None);
        };
        let labels = Self::inner(self.inner.namespace_labels(&real_ns).await)?;
        // The label the server sets to the namespace's own name carries the file's.
        Ok(labels.map(|mut labels| {
            if labels.contains_key(NAME_LABEL) {
                labels.insert(NAME_LABEL.to_owned(), name.to_owned());
            }
            labels
        }))
    }

    fn template(&mut self) -> Arc<wire::Deployment> {
        self.inner.template()
    }
}

impl Port for ReplayPort<'_> {
    type Error = StepError<String>;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        if let Err(error) = self.before_write(&write).await {
            self.error = Some(error);
        }
        // The core wrote the file's namespace; the server's is another.
        let real_ns = self.inner.namespace().to_owned();
        let on_server = |desired: wire::Deployment| {
            let mut object = desired.object;
            if let Some(wire::tree::Value::Object(meta)) = object.get_mut("metadata") {
                meta.insert("namespace", real_ns.as_str().into());
            }
            wire::Deployment::from_object(object)
        };
        let write = match write {
            DeploymentWrite::Create(desired) => DeploymentWrite::Create(on_server(desired)),
            DeploymentWrite::Update { desired, drift } => DeploymentWrite::Update {
                desired: on_server(desired),
                drift,
            },
        };
        let outcome = self.inner.write(write).await;
        match self.after_write(outcome.clone()).await {
            Ok(outcome) => outcome,
            Err(error) => {
                self.error.get_or_insert(error);
                outcome
            }
        }
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Step<StatusWrite> {
        let written = self
            .inner
            .patch_status(patch)
            .await
            .or_else(|e| failed(format!("status write: {e}")))?;
        if written == StatusWrite::Written {
            self.real.counts.status_writes += 1;
        }
        Ok(written)
    }

    async fn record(&mut self, action: WriteKind, events: &[Event]) {
        self.inner.record(action, events).await;
    }
}

/// An object read as the controller's caches read it (the core's wire type, once).
fn read_as_cached<K: CachedKind + Clone>(json: Value) -> Step<K> {
    match Cached::<K>::from_json(json).read() {
        Ok(object) => Ok(object.clone()),
        Err(why) => failed(why.to_owned()),
    }
}
