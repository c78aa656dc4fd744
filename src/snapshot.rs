//! What the controller saw: the objects one reconcile decides from.

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::reconcile::WriteRecord;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The labels of namespaces, by namespace name: what `allowedRoutes` selectors
/// (`from: Selector`) are matched against.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// No namespace's labels.
static NO_NAMESPACE_LABELS: NamespaceLabels = BTreeMap::new();

/// A GatewayConfiguration that exists but does not read into
/// [`GatewayConfiguration`] (a field of another type, e.g. under a newer or hand-edited
/// CRD), with the reader's error.
///
/// A controller hands such an object to the crate rather than dropping it
/// ([`Snapshot::with_unreadable_configuration`]): when it is the one the Gateway uses, the
/// Gateway gets `Accepted=False/InvalidParameters` with the message
/// `GatewayConfiguration "NAME" cannot be read: WHY`, and no requeue (an edit of the object
/// wakes the controller). A Gateway must never sit without a condition because its
/// parameters could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnreadableConfiguration<'a> {
    /// Its `metadata.namespace`.
    pub namespace: &'a str,
    /// Its `metadata.name`.
    pub name: &'a str,
    /// The reader's error, naming the field path (e.g. `spec.horizontalScaling.replicas:
    /// invalid type: string "many", expected i64`).
    pub why: &'a str,
}

/// The objects one reconcile reads, borrowed from the controller's caches.
///
/// ```
/// use gateway_reconcile::{Snapshot, template};
/// use gateway_reconcile::wire::Gateway;
/// let gateway: Gateway = serde_json::from_str(r#"{"metadata":{"name":"gw"}}"#).unwrap();
/// let template = template::default_template();
/// let snapshot = Snapshot::new(&gateway, &template);
/// assert!(snapshot.deployment.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    /// The Gateway's GatewayClass; `None` when it does not exist.
    pub gateway_class: Option<&'a GatewayClass>,
    /// The Gateway.
    pub gateway: &'a Gateway,
    /// The GatewayConfiguration the Gateway uses ([`lookup::configuration_ref`]: its own
    /// `parametersRef`, else its GatewayClass's); `None` when not found (or when it cannot
    /// be read: see `unreadable_configuration`). One of another name or namespace counts as
    /// not found.
    ///
    /// [`lookup::configuration_ref`]: crate::lookup::configuration_ref
    pub configuration: Option<&'a GatewayConfiguration>,
    /// The GatewayConfiguration the Gateway uses when it exists but cannot be read, with
    /// the reader's error; `None` otherwise. When it is the referenced one (same namespace
    /// and name), it is what the Gateway's parameters are, whatever `configuration` holds.
    pub unreadable_configuration: Option<UnreadableConfiguration<'a>>,
    /// The observed LB Deployment; `None` when not found.
    pub deployment: Option<&'a Deployment>,
    /// The LB Deployment template.
    pub template: &'a Deployment,
    /// Every L34Route that may attach to the Gateway (the crate filters by parentRefs and
    /// by the listeners' `allowedRoutes`).
    pub routes: &'a [L34Route],
    /// The labels of the routes' namespaces, for `allowedRoutes` selectors (`from:
    /// Selector`); a namespace missing here is admitted by no selector. Empty by default.
    pub namespace_labels: &'a NamespaceLabels,
    /// The caller's record of its last successful write of this Gateway's LB Deployment
    /// ([`Settlement::write_record`](crate::Settlement::write_record)); `None` when it has
    /// none (it never wrote it, or it restarted).
    pub write_record: Option<WriteRecord>,
}

impl<'a> Snapshot<'a> {
    /// A snapshot with only the Gateway and the template; add the rest with the `with_`
    /// methods.
    pub fn new(gateway: &'a Gateway, template: &'a Deployment) -> Self {
        Snapshot {
            gateway_class: None,
            gateway,
            configuration: None,
            unreadable_configuration: None,
            deployment: None,
            template,
            routes: &[],
            namespace_labels: &NO_NAMESPACE_LABELS,
            write_record: None,
        }
    }

    /// Sets the GatewayClass.
    pub fn with_gateway_class(mut self, class: Option<&'a GatewayClass>) -> Self {
        self.gateway_class = class;
        self
    }

    /// Sets the GatewayConfiguration.
    pub fn with_configuration(mut self, configuration: Option<&'a GatewayConfiguration>) -> Self {
        self.configuration = configuration;
        self
    }

    /// Sets the GatewayConfiguration that exists but cannot be read (see
    /// [`UnreadableConfiguration`]).
    ///
    /// ```
    /// use gateway_reconcile::{Settings, Snapshot, plan, template};
    /// use gateway_reconcile::UnreadableConfiguration;
    /// use gateway_reconcile::wire::{Gateway, GatewayClass};
    /// use serde_json::json;
    /// let gateway: Gateway = serde_json::from_value(json!({
    ///     "metadata": {"name": "gw", "namespace": "red", "uid": "u-1", "generation": 1},
    ///     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
    ///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
    /// })).unwrap();
    /// let class: GatewayClass = serde_json::from_value(json!({"metadata": {"name": "meridio"},
    ///     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}})).unwrap();
    /// let template = template::default_template();
    /// let unreadable = UnreadableConfiguration {
    ///     namespace: "red", name: "conf",
    ///     why: r#"spec.horizontalScaling.replicas: expected an integer, found "many""#,
    /// };
    /// let snapshot = Snapshot::new(&gateway, &template)
    ///     .with_gateway_class(Some(&class))
    ///     .with_unreadable_configuration(Some(unreadable));
    /// let settings = Settings::default();
    /// let now = "2026-01-01T00:00:00Z".parse().unwrap();
    /// let settled = match plan(&settings, snapshot, now).unwrap() {
    ///     gateway_reconcile::Plan::Settled(settled) => settled,
    ///     gateway_reconcile::Plan::Write(_) => unreachable!(),
    /// };
    /// let status = settled.status.unwrap();
    /// assert_eq!(status.conditions[0].reason, "InvalidParameters");
    /// assert_eq!(
    ///     status.conditions[0].message,
    ///     r#"GatewayConfiguration "conf" cannot be read: spec.horizontalScaling.replicas: expected an integer, found "many""#
    /// );
    /// ```
    pub fn with_unreadable_configuration(
        mut self,
        unreadable: Option<UnreadableConfiguration<'a>>,
    ) -> Self {
        self.unreadable_configuration = unreadable;
        self
    }

    /// Sets the labels of the routes' namespaces, for `allowedRoutes` selectors.
    pub fn with_namespace_labels(mut self, labels: &'a NamespaceLabels) -> Self {
        self.namespace_labels = labels;
        self
    }

    /// Sets the observed LB Deployment, as the API server returns it: its `status` is what
    /// the crate reads as the rollout.
    ///
    /// # The rollout status the crate reads
    ///
    /// As `kubectl rollout status` does, and nothing else of `status` (not `readyReplicas`,
    /// not the `Available` condition, not the Pods):
    ///
    /// - **Current.** Only a status the Deployment controller has caught up with counts:
    ///   `status.observedGeneration` ≥ `metadata.generation` (an absent generation counts
    ///   as 0). Without `status.observedGeneration`, or with an older one, the rollout is
    ///   progressing and not stalled.
    /// - **Complete** when the current status has `status.updatedReplicas` ≥
    ///   `spec.replicas` (absent: 1), `status.replicas` ≤ `status.updatedReplicas` and
    ///   `status.availableReplicas` ≥ `status.updatedReplicas` (an absent count is 0).
    /// - **Progressing** otherwise: `Programmed` stays True, its message ending with
    ///   `; Pods may still be initializing`. A write the plan makes counts as progressing
    ///   whatever the status says: a create, and an update that changes the `spec` or the
    ///   annotations (it moves `metadata.generation`, so the status is not current until the
    ///   Deployment controller has seen it).
    /// - **Stalled** when the current status has a condition of type `Progressing` with
    ///   reason `ProgressDeadlineExceeded` (its `status` is not looked at):
    ///   `D/Degraded=True/RolloutStalled`, with the message `rollout of Deployment NS/NAME
    ///   stalled since T: MSG` (T the condition's `lastTransitionTime`, else its
    ///   `lastUpdateTime`, else `unknown`, as written; MSG its message), unless a failed
    ///   update of the same reconcile makes `Degraded` `ApplyRejected` or `ApplyFailing`,
    ///   which win. A stall reported for an older generation does not count, so an update
    ///   that goes through starts a new rollout. A stall does not turn `Programmed` False:
    ///   the old Pods still serve.
    ///
    /// ```
    /// use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};
    /// use gateway_reconcile::{Plan, Settings, Snapshot, plan, template};
    /// use serde_json::json;
    ///
    /// let gateway: Gateway = serde_json::from_value(json!({
    ///     "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
    ///     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
    ///         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
    /// })).unwrap();
    /// let class: GatewayClass = serde_json::from_value(json!({
    ///     "metadata": {"name": "meridio"},
    ///     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
    /// })).unwrap();
    /// let conf: GatewayConfiguration = serde_json::from_value(json!({
    ///     "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
    ///     "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
    /// })).unwrap();
    /// let (settings, template) = (Settings::default(), template::default_template());
    /// let now = "2026-01-01T00:00:00Z".parse().unwrap();
    /// let snapshot = Snapshot::new(&gateway, &template)
    ///     .with_gateway_class(Some(&class))
    ///     .with_configuration(Some(&conf));
    /// // The Deployment as created, then as the Deployment controller reports it.
    /// let Plan::Write(pending) = plan(&settings, snapshot, now).unwrap() else { panic!() };
    /// let mut stored = pending.write().desired().to_json();
    /// stored["metadata"]["generation"] = json!(1);
    /// let with_status = |status: serde_json::Value| {
    ///     let mut d = stored.clone();
    ///     d["status"] = status;
    ///     serde_json::from_value::<Deployment>(d).unwrap()
    /// };
    /// let conditions = |deployment: &Deployment| {
    ///     let snapshot = snapshot.with_deployment(Some(deployment));
    ///     let Plan::Settled(s) = plan(&settings, snapshot, now).unwrap() else { panic!() };
    ///     s.status.unwrap().conditions
    /// };
    ///
    /// // Progressing: one of the two replicas (the template's) is not available yet.
    /// let progressing = with_status(json!({"observedGeneration": 1, "replicas": 2,
    ///     "updatedReplicas": 2, "availableReplicas": 1}));
    /// assert_eq!(conditions(&progressing)[1].message,
    ///     "LB Deployment reconciled with GatewayConfiguration generation 7; Pods may still be initializing");
    ///
    /// // Stalled: past the progress deadline.
    /// let stalled = with_status(json!({"observedGeneration": 1, "replicas": 2,
    ///     "updatedReplicas": 2, "availableReplicas": 1, "conditions": [{"type": "Progressing",
    ///     "status": "False", "reason": "ProgressDeadlineExceeded",
    ///     "message": "ReplicaSet \"x\" has timed out progressing.",
    ///     "lastTransitionTime": "2025-12-31T23:50:00Z"}]}));
    /// let degraded = conditions(&stalled).into_iter()
    ///     .find(|c| c.type_ == "meridio-2.nordix.org/Degraded").unwrap();
    /// assert_eq!((degraded.status.as_str(), degraded.reason.as_str()), ("True", "RolloutStalled"));
    /// assert_eq!(degraded.message, "rollout of Deployment ns/sllbr-gw stalled since \
    ///     2025-12-31T23:50:00Z: ReplicaSet \"x\" has timed out progressing.");
    ///
    /// // Complete.
    /// let complete = with_status(json!({"observedGeneration": 1, "replicas": 2,
    ///     "updatedReplicas": 2, "availableReplicas": 2}));
    /// assert_eq!(conditions(&complete)[1].message,
    ///     "LB Deployment reconciled with GatewayConfiguration generation 7");
    /// ```
    pub fn with_deployment(mut self, deployment: Option<&'a Deployment>) -> Self {
        self.deployment = deployment;
        self
    }

    /// Sets the L34Routes.
    pub fn with_routes(mut self, routes: &'a [L34Route]) -> Self {
        self.routes = routes;
        self
    }

    /// Sets the record of the last successful write of the LB Deployment.
    pub fn with_write_record(mut self, record: Option<WriteRecord>) -> Self {
        self.write_record = record;
        self
    }
}

/// The Gateway fields every decision needs, checked once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GatewayId<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub uid: &'a str,
    pub generation: i64,
}

impl<'a> GatewayId<'a> {
    /// Checks the Gateway's identity fields.
    pub(crate) fn of(gateway: &'a Gateway) -> Result<Self, InputError> {
        let meta = &gateway.metadata;
        let object = || match (&meta.namespace, &meta.name) {
            (Some(ns), Some(n)) => format!("Gateway {:?}", format!("{ns}/{n}")),
            (None, Some(n)) => format!("Gateway {n:?}"),
            _ => "Gateway".to_owned(),
        };
        let required = |v: &'a Option<String>, field| match v.as_deref() {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(InputError::MissingField {
                object: object(),
                field,
            }),
        };
        let name = required(&meta.name, "metadata.name")?;
        let namespace = required(&meta.namespace, "metadata.namespace")?;
        let uid = required(&meta.uid, "metadata.uid")?;
        let generation = meta.generation.ok_or_else(|| InputError::MissingField {
            object: object(),
            field: "metadata.generation",
        })?;
        if generation < 0 {
            return Err(InputError::NegativeGeneration {
                object: object(),
                field: "metadata.generation",
                value: generation,
            });
        }
        Ok(GatewayId {
            name,
            namespace,
            uid,
            generation,
        })
    }
}
