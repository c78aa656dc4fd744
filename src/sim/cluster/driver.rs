//! One reconcile on the simulated cluster, as a controller runs it: snapshot, `plan`, the
//! Deployment write, `settle`, the status write. The one place in the simulator that calls
//! the crate's decision API.

use jiff::Timestamp;
use serde_json::Value;

use super::store::typed;
use super::{Cluster, ClusterError, Kind};
use crate::outcome::WriteOutcome;
use crate::reconcile::{DeploymentWrite, Plan, Requeue, Settlement, StatusPatch, WriteKind};
use crate::sim::merge_patch;
use crate::snapshot::Snapshot;
use crate::wire::{Condition, Deployment, Gateway, GatewayClass, GatewayStatus, L34Route};

/// What one [`Cluster::reconcile`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconcileRecord {
    /// The cluster clock the reconcile ran at.
    pub time: Timestamp,
    /// The Deployment action the plan asked for.
    pub action: WriteKind,
    /// The drifted field paths of an `Update`, or on `None` the drift a write record held
    /// back (empty otherwise).
    pub drift: Vec<String>,
    /// What happened to the Deployment write (`None` when there was none).
    pub outcome: Option<WriteOutcome>,
    /// Whether the Gateway status was written.
    pub status_written: bool,
    /// The Gateway's conditions after the reconcile.
    pub conditions: Vec<Condition>,
    /// The Gateway's address values after the reconcile.
    pub addresses: Vec<String>,
    /// When the crate asked to look again.
    pub requeue: Requeue,
    /// The Events the settlement asked to record on the Gateway.
    pub events: Vec<crate::events::Event>,
    /// The GatewayClass's conditions after the reconcile (empty when there is no class).
    pub class_conditions: Vec<Condition>,
    /// Whether the GatewayClass's status was written.
    pub class_status_written: bool,
    /// When [`Settlement::status_patch`](crate::Settlement::status_patch), applied to the
    /// Gateway as the API server would, does not give the settlement's status: what differs.
    pub status_patch_problem: Option<String>,
}

impl ReconcileRecord {
    /// The record of a reconcile that ran at `time`: the plan's `action`, the `drift` of its
    /// update (or the settlement's held drift when it wrote nothing), the write's `outcome`,
    /// the `settlement` (written when it holds a status), and the Gateway's `status` as
    /// stored after the status write. The GatewayClass part is empty and no status-patch
    /// problem is recorded: a loop that settles the class, or checks its patch, sets those
    /// with struct update syntax.
    pub fn new(
        time: Timestamp,
        action: WriteKind,
        drift: Vec<String>,
        outcome: Option<WriteOutcome>,
        settlement: &Settlement,
        status: GatewayStatus,
    ) -> Self {
        ReconcileRecord {
            time,
            action,
            drift,
            outcome,
            status_written: settlement.status.is_some(),
            conditions: status.conditions,
            addresses: status.addresses.into_iter().map(|a| a.value).collect(),
            requeue: settlement.requeue,
            events: settlement.events.clone(),
            class_conditions: Vec::new(),
            class_status_written: false,
            status_patch_problem: None,
        }
    }
}

impl Cluster {
    /// One reconcile, as the controller runs it: snapshot, plan at the cluster clock,
    /// Deployment write, settle, status write.
    pub fn reconcile(&mut self) -> Result<ReconcileRecord, ClusterError> {
        // The plan borrows the routes while the writes change the cluster: lend them out.
        let routes = std::mem::take(&mut self.routes);
        let record = self.reconcile_lending(&routes);
        self.routes = routes;
        record
    }

    /// Lends out the template and the stored Deployment too, rather than copy them for the
    /// snapshot: they can be large.
    fn reconcile_lending(&mut self, routes: &[L34Route]) -> Result<ReconcileRecord, ClusterError> {
        let template = std::mem::take(&mut self.template);
        let stored = self.deployment.take();
        let record = self.reconcile_with(routes, &template, stored.as_ref());
        self.template = template;
        // A write that went through stored its Deployment; otherwise the lent one comes back.
        if self.deployment.is_none() {
            self.deployment = stored;
        }
        record
    }

    fn reconcile_with(
        &mut self,
        routes: &[L34Route],
        template: &Deployment,
        deployment: Option<&Deployment>,
    ) -> Result<ReconcileRecord, ClusterError> {
        let settings = self.settings.clone();
        let gateway: Gateway = typed(Kind::Gateway, &self.gateway)?;
        let gateway_class: Option<GatewayClass> = self
            .gateway_class
            .as_ref()
            .map(|v| typed(Kind::GatewayClass, v))
            .transpose()?;
        // The one the Gateway uses, readable or not: an unreadable one is handed to the crate
        // with the reader's error.
        let used = crate::lookup::configuration_ref(&settings, &gateway, gateway_class.as_ref());
        let configuration = self.read_configuration(used);
        let namespaces = self.namespace_labels().clone();

        let (class_conditions, class_status_written) = self.settle_class(gateway_class.as_ref())?;
        let snapshot = Snapshot::new(&gateway, template)
            .with_gateway_class(gateway_class.as_ref())
            .with_configuration(configuration.readable())
            .with_unreadable_configuration(configuration.unreadable())
            .with_deployment(deployment)
            .with_routes(routes)
            .with_namespace_labels(&namespaces)
            .with_write_record(self.record);
        let plan = crate::reconcile::plan(&settings, snapshot, self.now)?;
        let action = plan.write_kind();
        let (drift, outcome, settlement) = match plan {
            Plan::Write(pending) => {
                // The desired Deployment goes to the server by value, as a request body
                // would: the server stores it rather than a copy.
                let (write, awaiting) = pending.into_write();
                let (drift, outcome) = match write {
                    DeploymentWrite::Create(desired) => {
                        (Vec::new(), self.create_deployment_over(desired, deployment))
                    }
                    DeploymentWrite::Update { desired, drift } => {
                        (drift, self.update_deployment_over(desired, deployment))
                    }
                };
                // The server answers a write it took with the stored object, as a real
                // one does; the controller hands it to the settlement.
                let answered = match (&outcome, &self.deployment) {
                    (WriteOutcome::Applied, Some(stored)) => WriteOutcome::Stored(stored.clone()),
                    _ => outcome.clone(),
                };
                let settlement = awaiting.settle(answered);
                (drift, Some(outcome), settlement)
            }
            Plan::Settled(settlement) => (settlement.held_drift.clone(), None, settlement),
        };
        if let Some(record) = settlement.write_record {
            self.record = Some(record);
        }
        self.due = settlement.requeue.deadline(self.now);
        let patch = settlement.status_patch();
        let mut status_patch_problem = None;
        match &settlement.status {
            Some(status) => {
                status_patch_problem = self.check_status_patch(status, patch.as_ref());
                self.write_status(status);
            }
            None => {
                if patch.is_some() {
                    status_patch_problem = Some(
                        "status_patch() gives a patch but the settlement has no status".into(),
                    );
                }
            }
        }
        // The status as stored (an unreadable one records no conditions or addresses).
        let status = typed::<Gateway>(Kind::Gateway, &self.gateway)
            .map(|g| g.status)
            .unwrap_or_default();
        Ok(ReconcileRecord {
            class_conditions,
            class_status_written,
            status_patch_problem,
            ..ReconcileRecord::new(self.now, action, drift, outcome, &settlement, status)
        })
    }

    /// The GatewayClass's own status, settled and written as the controller does on each
    /// reconcile; its conditions after, and whether they were written.
    fn settle_class(
        &mut self,
        class: Option<&GatewayClass>,
    ) -> Result<(Vec<Condition>, bool), ClusterError> {
        let Some(class) = class else {
            return Ok((Vec::new(), false));
        };
        let presence = self.class_configuration(class);
        let settled =
            crate::gateway_class::settle_class(&self.settings, class, presence, self.now)?;
        let Some(patch) = settled.status_patch() else {
            return Ok((class.status.conditions.clone(), false));
        };
        let rv = self.next_revision();
        if let Some(stored) = self.gateway_class.as_mut() {
            merge_patch::apply(
                stored,
                &serde_json::json!({"status": patch.body()["status"]}),
            );
            if let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("resourceVersion".into(), Value::String(rv));
            }
        }
        self.class_status_writes += 1;
        Ok((settled.conditions.unwrap_or_default(), true))
    }

    fn check_status_patch(
        &self,
        status: &GatewayStatus,
        patch: Option<&StatusPatch>,
    ) -> Option<String> {
        let Some(patch) = patch else {
            return Some("status_patch() gives no patch but the settlement has a status".into());
        };
        // The precondition must be the stored Gateway's resourceVersion (no write between).
        let stored = self.gateway.pointer("/metadata/resourceVersion");
        if patch.resource_version() != stored.and_then(Value::as_str) {
            return Some(format!(
                "status_patch() has the precondition {:?}, the Gateway has resourceVersion {stored:?}",
                patch.resource_version()
            ));
        }
        let mut patched = self.gateway.clone();
        merge_patch::apply(&mut patched, patch.body());
        let got = patched.get("status").cloned().unwrap_or(Value::Null);
        match serde_json::from_value::<GatewayStatus>(got.clone()) {
            Ok(got) if &got == status => None,
            _ => Some(format!(
                "status_patch() applied to the Gateway gives status {got}, the settlement says {}",
                serde_json::to_value(status).unwrap_or_default()
            )),
        }
    }
}

/// `await change` (only the next watch event), `immediately` or `after 90s`.
pub fn describe_requeue(requeue: Requeue) -> String {
    match requeue {
        Requeue::AwaitChange => "await change".into(),
        Requeue::Immediately => "immediately".into(),
        Requeue::After(d) => format!("after {}", crate::settings::format_duration(d)),
    }
}

/// The requeue a scenario's `expect.requeue` names: `await change` (or `none`, its older
/// word), `immediately` or a duration.
pub(crate) fn requeue_from_word(word: &str) -> Result<Requeue, String> {
    match word {
        "await change" | "none" => Ok(Requeue::AwaitChange),
        "immediately" => Ok(Requeue::Immediately),
        _ => crate::settings::parse_duration(word).map(Requeue::After),
    }
}

#[cfg(test)]
mod tests;
