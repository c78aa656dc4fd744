//! [`ClusterPort`]: the port a controller's loop reads and writes the simulated cluster
//! through.

use std::sync::Arc;

use super::store::{has_key, typed};
use super::{Cluster, ClusterError, Kind};
use crate::events::Event;
use crate::outcome::WriteOutcome;
use crate::reconcile::{DeploymentWrite, Labels, StatusPatch, StatusWrite, View, WriteKind};
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The [`Port`](crate::reconcile::Port) on a simulated [`Cluster`] (from
/// [`Cluster::port`]): reads copy the stored objects out (a write changes the store while
/// the plan still reads them), writes go through the simulated API server, with its
/// bookkeeping, injected failures and mutating admission; Events are not kept (a
/// reconcile's record holds them).
///
/// The crate's [`Driver`](crate::reconcile::Driver) runs over it as over a controller's
/// port, and so does an embedder's own port wrapper around it:
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, ready};
/// use gateway_reconcile::sim::cluster::{Cluster, Objects};
/// use gateway_reconcile::{Settings, WriteKind};
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
/// let driver = Driver::new(Settings::default());
/// let reconciled = ready(driver.reconcile(&mut cluster.port(), now)).unwrap().unwrap();
/// assert_eq!(reconciled.decided.unwrap().action, WriteKind::Create);
/// assert!(cluster.deployment().is_some());
/// ```
#[derive(Debug)]
pub struct ClusterPort<'c> {
    pub(super) cluster: &'c mut Cluster,
    /// The Gateway the reconcile read already (to settle the class first), handed to the
    /// loop's first read instead of reading the stored one again.
    pub(super) gateway: Option<Gateway>,
}

impl Cluster {
    /// The port a controller's loop reads and writes this cluster through (its clock stays
    /// where it is; the caller hands the driver its `now`).
    pub fn port(&mut self) -> ClusterPort<'_> {
        ClusterPort {
            cluster: self,
            gateway: None,
        }
    }
}

/// The reads answer by key from the objects the cluster holds (one of each kind; an object
/// stored without a namespace or a name, as a hand-written scenario may leave it, matches
/// any); the Gateway or class the wire type cannot read is the cluster's error, naming the
/// field path.
impl crate::reconcile::Reader for ClusterPort<'_> {
    type Error = ClusterError;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = Result<GatewayConfiguration, String>;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, ClusterError> {
        match self.gateway.take() {
            Some(gateway) => Ok(View::Ready(gateway)),
            None => typed(Kind::Gateway, self.cluster.reads().gateway).map(View::Ready),
        }
    }

    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, ClusterError> {
        match self.cluster.reads().gateway_class {
            Some(stored) if has_key(stored, "", name) => {
                typed(Kind::GatewayClass, stored).map(Some)
            }
            _ => Ok(None),
        }
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Configuration>, ClusterError> {
        Ok(self.cluster.read_configuration(namespace, name))
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, ClusterError> {
        let keyed = |d: &&Deployment| {
            d.namespace().is_none_or(|n| n == namespace) && d.name().is_none_or(|n| n == name)
        };
        Ok(self.cluster.reads().deployment.filter(keyed).cloned())
    }

    async fn routes(&mut self, _: &str, _: &str) -> Result<Vec<L34Route>, ClusterError> {
        Ok(self.cluster.reads().routes.to_vec())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, ClusterError> {
        Ok(self.cluster.reads().namespaces.get(name))
    }

    fn template(&mut self) -> Arc<Deployment> {
        Arc::clone(&self.cluster.template)
    }
}

impl crate::reconcile::Port for ClusterPort<'_> {
    type Error = ClusterError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let outcome = match write {
            DeploymentWrite::Create(desired) => self.cluster.create_deployment(desired),
            DeploymentWrite::Update { desired, .. } => self.cluster.update_deployment(desired),
        };
        // The server answers a write it took with the stored object, as a real one does.
        match (&outcome, &self.cluster.deployment) {
            (WriteOutcome::Applied, Some(stored)) => WriteOutcome::Stored(stored.clone()),
            _ => outcome,
        }
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, ClusterError> {
        let rv = |gateway: &crate::wire::tree::Value| {
            gateway
                .pointer("/metadata/resourceVersion")
                .and_then(crate::wire::tree::Value::as_str)
                .map(str::to_owned)
        };
        // The precondition must be the resourceVersion of the Gateway the reconcile read.
        let read = rv(self.cluster.reads().gateway);
        if patch.resource_version() != read.as_deref() {
            self.cluster.status_patch_problem = Some(format!(
                "status_patch() has the precondition {:?}, the Gateway read has resourceVersion {read:?}",
                patch.resource_version()
            ));
        }
        // The server checks it against the stored Gateway, as the real one does: a
        // Gateway written since it was read (a lagging view) refuses the patch.
        let stored = rv(&self.cluster.gateway);
        if patch
            .resource_version()
            .is_some_and(|wanted| Some(wanted) != stored.as_deref())
        {
            return Ok(StatusWrite::Conflict);
        }
        super::store::apply_status(&patch, &mut self.cluster.gateway);
        let rv = self.cluster.next_revision();
        let cluster = &mut *self.cluster;
        cluster.server.status_written(&mut cluster.gateway, rv);
        cluster.status_writes += 1;
        Ok(StatusWrite::Written)
    }

    async fn record(&mut self, _action: WriteKind, _events: &[Event]) {
        // The settlement's Events are in the reconcile's record.
    }
}
