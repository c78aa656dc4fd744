//! One reconcile on the simulated cluster, as a controller runs it: the core's
//! [`Driver`](crate::reconcile::Driver) over the cluster's port ([`ClusterPort`]), the
//! GatewayClass's own status before it, and the record of what it did
//! ([`ReconcileReport`]).

use jiff::Timestamp;

use super::port::ClusterPort;
use super::server::Server;
use super::store::typed;
use super::{Cluster, ClusterError, Kind};

use crate::outcome::WriteOutcome;
use crate::reconcile::{
    Decided, NotReady, ReconcileError, Reconciled, Requeue, Settlement, StatusWrite, WriteKind,
    ready,
};
use crate::wire::{Condition, Gateway, GatewayClass, GatewayStatus};

/// What one [`Cluster::reconcile`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconcileReport {
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
    /// Whether the server refused the Gateway status patch (409: the Gateway was written
    /// since it was read, e.g. through a lagging cache): nothing was written.
    pub status_refused: bool,
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

impl ReconcileReport {
    /// The record of what a [`Driver`](crate::reconcile::Driver) reconcile at `time`
    /// decided, with the Gateway's `status` as stored after it ([`ReconcileReport::new`]
    /// from the decision's parts). A status patch the server refused (409: the Gateway was
    /// written since it was read) was not written, and its Events were not recorded.
    pub fn of(time: Timestamp, decided: Decided, status: GatewayStatus) -> Self {
        let refused = decided.status == StatusWrite::Conflict;
        let mut record = ReconcileReport::new(
            time,
            decided.action,
            decided.drift,
            decided.outcome,
            &decided.settlement,
            status,
        );
        if refused {
            record.status_written = false;
            record.status_refused = true;
            record.events.clear();
        }
        record
    }

    /// The Gateway's condition of type `name` after the reconcile, the type with or
    /// without its domain (`Programmed`, `ConfigurationApplied`); `None` when the Gateway
    /// has no such condition.
    ///
    /// ```
    /// use gateway_reconcile::Settings;
    /// use gateway_reconcile::sim::cluster::{Cluster, Objects};
    /// use serde_json::json;
    ///
    /// let objects = Objects {
    ///     gateway_class: Some(json!({"metadata": {"name": "meridio"},
    ///         "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}).into()),
    ///     gateway: json!({"metadata": {"name": "gw", "namespace": "ns"},
    ///         "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
    ///             "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}).into(),
    ///     configuration: Some(json!({"metadata": {"name": "conf", "namespace": "ns"},
    ///         "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}).into()),
    ///     ..Objects::default()
    /// };
    /// let now = "2026-01-01T00:00:00Z".parse().unwrap();
    /// let mut cluster = Cluster::new(Settings::default(), now, objects).unwrap();
    /// let record = cluster.reconcile().unwrap();
    /// let applied = record.condition("ConfigurationApplied").unwrap();
    /// assert_eq!(applied.status, "True");
    /// assert_eq!(record.condition("meridio-2.nordix.org/ConfigurationApplied"), Some(applied));
    /// assert_eq!(record.condition("Unheard"), None);
    /// ```
    pub fn condition(&self, name: &str) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| c.type_ == name || c.type_.rsplit_once('/').is_some_and(|(_, t)| t == name))
    }

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
        ReconcileReport {
            time,
            action,
            drift,
            // A write that went through shows as `Applied`: the stored object it carried is
            // the server's business.
            outcome: outcome.map(|o| match o {
                WriteOutcome::Stored(_) => WriteOutcome::Applied,
                other => other,
            }),
            status_written: settlement.status.is_some(),
            conditions: status.conditions,
            addresses: status.addresses.into_iter().map(|a| a.value).collect(),
            requeue: settlement.requeue,
            events: settlement.events.clone(),
            class_conditions: Vec::new(),
            class_status_written: false,
            status_patch_problem: None,
            status_refused: false,
        }
    }
}

impl Cluster {
    /// One reconcile, as the controller runs it: the core's
    /// [`Driver`](crate::reconcile::Driver) over this cluster
    /// (read, plan at the cluster clock, Deployment write, settle, status write), after the
    /// GatewayClass's own status.
    pub fn reconcile(&mut self) -> Result<ReconcileReport, ClusterError> {
        // The driver is the controller's memory; the port borrows the rest of the cluster.
        let driver = std::mem::take(&mut self.driver);
        let result = self.reconcile_with(|mut port, now| ready(driver.reconcile(&mut port, now)));
        self.driver = driver;
        let (record, requeue) = result?;
        self.due = requeue.deadline(record.time);
        Ok(record)
    }

    /// One reconcile at the cluster clock, the loop around the port being `run`'s (the
    /// crate's driver over the [`ClusterPort`], or an embedder's own port wrapper around
    /// it): the GatewayClass's own status first, then `run`, then the record of what it
    /// did, with the loop's requeue.
    pub(crate) fn reconcile_with<F>(
        &mut self,
        run: F,
    ) -> Result<(ReconcileReport, Requeue), ClusterError>
    where
        F: FnOnce(
            ClusterPort<'_>,
            Timestamp,
        ) -> Result<Result<Reconciled, ReconcileError<ClusterError>>, NotReady>,
    {
        // An unreadable Gateway stops the reconcile before the class is settled.
        // Read as the controller reads (from the revision a lagging view is at).
        let reads = self.reads();
        let gateway = typed::<Gateway>(Kind::Gateway, reads.gateway)?;
        let class = reads
            .gateway_class
            .map(|v| typed::<GatewayClass>(Kind::GatewayClass, v))
            .transpose()?;
        let (class_conditions, class_status_written) = self.settle_class(class.as_ref())?;

        let now = self.now();
        self.status_patch_problem = None;
        // The Gateway read above is the loop's first read (settling the class changed no
        // Gateway): it is read once, not twice.
        let port = ClusterPort {
            cluster: self,
            gateway: Some(gateway),
        };
        let result = run(port, now);
        let problem = self.status_patch_problem.take();
        recorded(
            now,
            result,
            &self.gateway,
            problem,
            (class_conditions, class_status_written),
        )
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
        let Some(stored) = self.gateway_class.as_mut() else {
            return Ok((Vec::new(), false));
        };
        let settled =
            settle_class_status(&self.settings, &mut self.server, stored, class, presence)?;
        if settled.1 {
            self.class_status_writes += 1;
        }
        Ok(settled)
    }
}

/// The GatewayClass's own status, settled and, when it changed, written to `stored` (the
/// class as the server holds it) as the controller does on each reconcile; its conditions
/// after, and whether they were written.
pub(crate) fn settle_class_status(
    settings: &crate::settings::Settings,
    server: &mut Server,
    stored: &mut crate::wire::tree::Value,
    class: &GatewayClass,
    presence: crate::gateway_class::ConfigurationPresence,
) -> Result<(Vec<Condition>, bool), ClusterError> {
    let settled = crate::gateway_class::settle_class(settings, class, presence, server.now)?;
    let Some(patch) = settled.status_patch() else {
        return Ok((class.status.conditions.clone(), false));
    };
    // The patch's resourceVersion precondition is the class read; the server refuses it
    // (409) when the stored class has been written since (a lagging view read it).
    let stored_rv = stored
        .pointer("/metadata/resourceVersion")
        .and_then(crate::wire::tree::Value::as_str);
    if patch
        .resource_version()
        .is_some_and(|wanted| Some(wanted) != stored_rv)
    {
        return Ok((stored_conditions(stored), false));
    }
    let rv = server.next_revision();
    super::store::apply_status(&patch, stored);
    server.status_written(stored, rv);
    // A patch of the features alone leaves the conditions as they were.
    let conditions = settled
        .conditions
        .unwrap_or_else(|| class.status.conditions.clone());
    Ok((conditions, true))
}

/// The conditions of a stored class's status (none when it cannot be read).
fn stored_conditions(stored: &crate::wire::tree::Value) -> Vec<Condition> {
    stored
        .get("status")
        .and_then(|status| crate::read_at::typed_at::<crate::wire::GatewayClassStatus>(status).ok())
        .map(|status| status.conditions)
        .unwrap_or_default()
}

/// The record of a reconcile run at `now` (`result`: the loop's answer), with the Gateway
/// as stored after it, what its status patch got wrong (`problem`) and the class's part;
/// with the loop's requeue. A loop's failure is the cluster's error.
pub(crate) fn recorded(
    now: Timestamp,
    result: Result<Result<Reconciled, ReconcileError<ClusterError>>, NotReady>,
    gateway: &crate::wire::tree::Value,
    problem: Option<String>,
    (class_conditions, class_status_written): (Vec<Condition>, bool),
) -> Result<(ReconcileReport, Requeue), ClusterError> {
    let reconciled = match result {
        Ok(Ok(reconciled)) => reconciled,
        Ok(Err(ReconcileError::Input(error))) => return Err(ClusterError::Input(error)),
        Ok(Err(
            ReconcileError::Read(error) | ReconcileError::StatusWrite { source: error, .. },
        )) => {
            return Err(error);
        }
        Err(_) => {
            return Err(ClusterError::Unsupported {
                kind: Kind::Gateway,
                operation: "reconcile",
            });
        }
    };
    let Some(decided) = reconciled.decided else {
        // This port always hands its inputs over.
        return Err(ClusterError::Unsupported {
            kind: Kind::Gateway,
            operation: "reconcile",
        });
    };
    // The status as stored (an unreadable one records no conditions or addresses).
    // Its status alone is read, not the whole Gateway again.
    let status = match gateway.get("status") {
        Some(status) if !status.is_null() => {
            crate::read_at::typed_at::<GatewayStatus>(status).unwrap_or_default()
        }
        _ => GatewayStatus::default(),
    };
    // A patch the server refused (409: the Gateway was written since it was read) wrote
    // nothing: the stored status is not the settlement's, and is not to be.
    let refused = decided.status == StatusWrite::Conflict;
    let status_patch_problem = problem.or_else(|| match &decided.settlement.status {
        Some(wanted) if *wanted != status && !refused => Some(format!(
            "status_patch() applied to the Gateway gives status {}, the settlement says {}",
            serde_json::to_value(&status).unwrap_or_default(),
            serde_json::to_value(wanted).unwrap_or_default()
        )),
        _ => None,
    });
    let record = ReconcileReport {
        class_conditions,
        class_status_written,
        status_patch_problem,
        ..ReconcileReport::of(now, decided, status)
    };
    Ok((record, reconciled.requeue))
}

#[cfg(test)]
mod tests;
