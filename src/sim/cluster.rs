//! A simulated API server: the objects one Gateway's reconcile reads, a clock, and the
//! behaviour of the real server where it matters to the crate.
//!
//! [`Cluster`] holds the GatewayClass, the Gateway, the GatewayConfiguration, the LB
//! Deployment, the template and the L34Routes as JSON, and drives the crate exactly as a
//! controller would: [`Cluster::reconcile`] builds a [`Snapshot`] from the stored objects,
//! calls [`plan`](crate::plan) at the cluster clock, performs the Deployment write the plan
//! asks for, settles with the outcome and writes the status. Embedders can use it to test
//! their own [`Settings`] and templates.
//!
//! What the simulated server does, as the real one does:
//!
//! - every write sets `metadata.resourceVersion` (a counter shared by all objects, like
//!   etcd's revision);
//! - `metadata.generation` goes up by one only when `spec` changed (patches and Deployment
//!   updates); status writes never bump it;
//! - a created object gets `metadata.uid`, `metadata.generation` 1 and
//!   `metadata.creationTimestamp`;
//! - a Deployment create or update is defaulted and normalized with
//!   [`apply_server_defaults`](crate::sim::defaulting::apply_server_defaults) (replaceable
//!   with [`Cluster::with_server_defaults`]); an update keeps the stored `status`, `uid` and
//!   `creationTimestamp`, and fails with 409 `Conflict` when its `resourceVersion` is not the
//!   stored one; a create of an existing Deployment fails with 409 `AlreadyExists`, an update
//!   of a missing one with 404 `NotFound`;
//! - a Deployment create or update the real server would refuse (a negative `replicas` or
//!   quantity, a name or label value out of form) is answered 422 `Invalid` (400 for a
//!   quantity that does not parse), in the server's words
//!   ([`refusal`](crate::sim::api_validation::refusal)); nothing is stored;
//! - [`Cluster::fail_writes`] makes the next Deployment writes fail with a given outcome;
//! - [`Cluster::rollout`] is a crude Deployment controller that writes `status`.
//!
//! Choices where the real server has no counterpart:
//!
//! - Initial objects are stored as written, except that missing bookkeeping fields
//!   (`uid`, `generation`, `resourceVersion`, `creationTimestamp`) are filled in, since a
//!   real server never returns an object without them. A given Deployment is not defaulted.
//! - [`Cluster::patch`] applies to the whole object, `status` included, so that a scenario
//!   can play another writer (another controller's condition, a Deployment status). Patching
//!   an absent object creates it (with creation bookkeeping, and defaulting for a
//!   Deployment). The template is the controller's file, not an API object: patching it
//!   does no bookkeeping. Routes are a list: a merge patch on them replaces the list.
//! - Deleting the Gateway marks it for deletion (`deletionTimestamp` = now), as a Gateway
//!   held by a finalizer would be.
//! - The rollout controller omits zero replica counts from `status`, as the real one does
//!   (`omitempty`), so readers must treat a missing count as 0.

use std::fmt;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::error::InputError;
use crate::outcome::WriteOutcome;
pub use crate::reconcile::WriteKind;
use crate::reconcile::{DeploymentWrite, Plan, Requeue, StatusPatch};
use crate::settings::Settings;
use crate::sim::{api_validation, merge_patch};
use crate::snapshot::Snapshot;
use crate::wire::{
    Condition, Deployment, Gateway, GatewayClass, GatewayConfiguration, GatewayStatus, L34Route,
};

/// The objects a [`Cluster`] starts with, as Kubernetes JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Objects {
    /// The GatewayClass; `None` when it does not exist.
    pub gateway_class: Option<Value>,
    /// The Gateway.
    pub gateway: Value,
    /// The GatewayConfiguration; `None` when it does not exist.
    pub configuration: Option<Value>,
    /// The LB Deployment; `None` when it does not exist. Stored as written (no defaulting).
    pub deployment: Option<Value>,
    /// The LB Deployment template; `None` = [`crate::template::default_template`].
    pub template: Option<Value>,
    /// The L34Routes, read: a long list held as JSON values costs about 20× its text.
    pub routes: Vec<L34Route>,
}

/// One of the objects a [`Cluster`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The GatewayClass.
    GatewayClass,
    /// The Gateway.
    Gateway,
    /// The GatewayConfiguration.
    Configuration,
    /// The LB Deployment.
    Deployment,
    /// The LB Deployment template.
    Template,
    /// The list of L34Routes.
    Routes,
}

impl Kind {
    /// Every kind, in the order the scenario format lists them.
    pub const ALL: [Kind; 6] = [
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::Configuration,
        Kind::Deployment,
        Kind::Template,
        Kind::Routes,
    ];

    /// The key the scenario format uses (`gatewayClass`, `gateway`, `configuration`,
    /// `deployment`, `template`, `routes`).
    pub fn key(self) -> &'static str {
        match self {
            Kind::GatewayClass => "gatewayClass",
            Kind::Gateway => "gateway",
            Kind::Configuration => "configuration",
            Kind::Deployment => "deployment",
            Kind::Template => "template",
            Kind::Routes => "routes",
        }
    }

    /// The kind named by a scenario key.
    pub fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// What the crude Deployment controller does to the Deployment's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollout {
    /// The rollout finished: every replica updated, ready and available.
    Complete,
    /// The new ReplicaSet exists, no Pod of it is ready yet.
    Progressing,
    /// The rollout passed its progress deadline (`ProgressDeadlineExceeded`).
    Stalled,
}

impl Rollout {
    /// The word the scenario format uses (`complete`, `progressing`, `stalled`).
    pub fn key(self) -> &'static str {
        match self {
            Rollout::Complete => "complete",
            Rollout::Progressing => "progressing",
            Rollout::Stalled => "stalled",
        }
    }

    /// The rollout named by a scenario word.
    pub fn from_key(key: &str) -> Option<Rollout> {
        [Rollout::Complete, Rollout::Progressing, Rollout::Stalled]
            .into_iter()
            .find(|r| r.key() == key)
    }
}

/// What one [`Cluster::reconcile`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The cluster clock the reconcile ran at.
    pub time: Timestamp,
    /// The Deployment action the plan asked for.
    pub action: WriteKind,
    /// The drifted field paths of an `Update` (empty otherwise).
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
    /// When [`Settlement::status_patch`](crate::Settlement::status_patch), applied to the
    /// Gateway as the API server would, does not give the settlement's status: what differs.
    pub status_patch_problem: Option<String>,
}

/// Why a cluster operation could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// An object that does not have the shape of its kind.
    #[error("{kind}: {why}")]
    Malformed {
        /// Which object.
        kind: Kind,
        /// What is wrong.
        why: String,
    },
    /// An operation on an object that does not exist.
    #[error("cannot {operation}: there is no {kind}")]
    Missing {
        /// Which object.
        kind: Kind,
        /// What was asked (`delete`, `roll out`).
        operation: &'static str,
    },
    /// An operation the object does not support.
    #[error("cannot {operation} the {kind}")]
    Unsupported {
        /// Which object.
        kind: Kind,
        /// What was asked.
        operation: &'static str,
    },
    /// The clock would leave the range of timestamps.
    #[error("cannot advance the clock by {0:?}: out of range")]
    Clock(Duration),
    /// The crate refused the snapshot.
    #[error("plan: {0}")]
    Input(#[from] InputError),
}

/// A simulated API server holding one Gateway and the objects around it.
///
/// ```
/// use gateway_reconcile::Settings;
/// use gateway_reconcile::sim::cluster::{Cluster, Objects};
/// use serde_json::json;
///
/// let objects = Objects {
///     gateway: json!({"metadata": {"name": "gw", "namespace": "red"}, "spec": {}}),
///     template: Some(json!({"spec": {"template": {"spec": {"containers": []}}}})),
///     ..Objects::default()
/// };
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
/// let mut cluster = Cluster::new(Settings::default(), now, objects).unwrap();
/// assert_eq!(cluster.gateway()["metadata"]["generation"], 1);
/// cluster
///     .patch(gateway_reconcile::sim::cluster::Kind::Gateway,
///            &json!({"spec": {"gatewayClassName": "meridio"}}))
///     .unwrap();
/// assert_eq!(cluster.gateway()["metadata"]["generation"], 2);
/// ```
#[derive(Debug, Clone)]
pub struct Cluster {
    settings: Settings,
    now: Timestamp,
    gateway_class: Option<Value>,
    gateway: Value,
    configuration: Option<Value>,
    deployment: Option<Value>,
    template: Value,
    routes: Vec<L34Route>,
    revision: u64,
    uids: u64,
    failures: u32,
    failure: Option<WriteOutcome>,
    server_defaults: fn(&mut Deployment),
    deployment_writes: u64,
    applied_deployment_writes: u64,
    status_writes: u64,
}

impl Cluster {
    /// A cluster holding `objects`, its clock at `now`. Fails when an object does not have
    /// the shape of its kind.
    pub fn new(settings: Settings, now: Timestamp, objects: Objects) -> Result<Self, ClusterError> {
        let template = match objects.template {
            Some(t) => t,
            None => serde_json::to_value(crate::template::default_template()).map_err(|e| {
                ClusterError::Malformed {
                    kind: Kind::Template,
                    why: e.to_string(),
                }
            })?,
        };
        let mut cluster = Cluster {
            settings,
            now,
            gateway_class: None,
            gateway: Value::Null,
            configuration: None,
            deployment: None,
            template,
            routes: objects.routes,
            revision: 0,
            uids: 0,
            failures: 0,
            failure: None,
            server_defaults: crate::sim::defaulting::apply_server_defaults,
            deployment_writes: 0,
            applied_deployment_writes: 0,
            status_writes: 0,
        };
        for kind in Kind::ALL {
            let value = match kind {
                Kind::GatewayClass => objects.gateway_class.clone(),
                Kind::Gateway => Some(objects.gateway.clone()),
                Kind::Configuration => objects.configuration.clone(),
                Kind::Deployment => objects.deployment.clone(),
                Kind::Template => {
                    check(kind, Some(&cluster.template))?;
                    continue;
                }
                // Already read.
                Kind::Routes => continue,
            };
            if let Some(mut value) = value.filter(|v| !v.is_null()) {
                check(kind, Some(&value))?;
                cluster.fill_bookkeeping(&mut value);
                cluster.set(kind, value);
            }
        }
        Ok(cluster)
    }

    /// Replaces the API server's Deployment defaulting (used on every Deployment create,
    /// update and patch), e.g. with one that matches another Kubernetes version.
    pub fn with_server_defaults(mut self, defaults: fn(&mut Deployment)) -> Self {
        self.server_defaults = defaults;
        self
    }

    /// The settings reconciles run with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The cluster clock.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Moves the clock forward.
    pub fn advance(&mut self, by: Duration) -> Result<(), ClusterError> {
        let signed = SignedDuration::try_from(by).map_err(|_| ClusterError::Clock(by))?;
        self.now = self
            .now
            .checked_add(signed)
            .map_err(|_| ClusterError::Clock(by))?;
        Ok(())
    }

    /// The stored Gateway.
    pub fn gateway(&self) -> &Value {
        &self.gateway
    }

    /// The stored GatewayClass, if any.
    pub fn gateway_class(&self) -> Option<&Value> {
        self.gateway_class.as_ref()
    }

    /// The stored GatewayConfiguration, if any.
    pub fn configuration(&self) -> Option<&Value> {
        self.configuration.as_ref()
    }

    /// The stored LB Deployment, if any.
    pub fn deployment(&self) -> Option<&Value> {
        self.deployment.as_ref()
    }

    /// The template.
    pub fn template(&self) -> &Value {
        &self.template
    }

    /// The L34Routes.
    pub fn routes(&self) -> &[L34Route] {
        &self.routes
    }

    /// Deployment write requests the controller sent (create or update, failed or not).
    pub fn deployment_writes(&self) -> u64 {
        self.deployment_writes
    }

    /// Deployment writes that the server applied.
    pub fn applied_deployment_writes(&self) -> u64 {
        self.applied_deployment_writes
    }

    /// Gateway status writes.
    pub fn status_writes(&self) -> u64 {
        self.status_writes
    }

    /// Makes the next `count` Deployment writes (create or update) fail with `outcome`,
    /// replacing any failures still pending (`count` 0 clears them). An `Applied` outcome
    /// lets the writes through.
    pub fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.failures = count;
        self.failure = Some(outcome);
    }

    /// Deployment writes still set to fail.
    pub fn pending_failures(&self) -> u32 {
        self.failures
    }

    /// Applies an RFC 7386 merge patch to one object, with the server's bookkeeping:
    /// `resourceVersion` set, `generation` bumped when `spec` changed, Deployment
    /// defaulted. Patching an absent object creates it. The object is left unchanged when
    /// the result does not have the shape of its kind.
    pub fn patch(&mut self, kind: Kind, patch: &Value) -> Result<(), ClusterError> {
        match kind {
            Kind::Template => {
                let mut template = self.template.clone();
                merge_patch::apply(&mut template, patch);
                check(kind, Some(&template))?;
                self.template = template;
            }
            // A merge patch that is a list replaces the list; one that is not cannot apply.
            Kind::Routes => self.routes = typed(kind, patch)?,
            _ => {
                let before = self.stored(kind).cloned();
                let mut after = before.clone().unwrap_or_else(|| json!({}));
                merge_patch::apply(&mut after, patch);
                check(kind, Some(&after))?;
                if kind == Kind::Deployment {
                    after = self.defaulted(after);
                }
                match &before {
                    None => self.fill_bookkeeping(&mut after),
                    Some(before) => self.update_bookkeeping(kind, before, &mut after),
                }
                self.set(kind, after);
            }
        }
        Ok(())
    }

    /// Deletes the Deployment, the GatewayConfiguration, the GatewayClass or every route;
    /// marks the Gateway for deletion. The template cannot be deleted.
    pub fn delete(&mut self, kind: Kind) -> Result<(), ClusterError> {
        match kind {
            Kind::Template => Err(ClusterError::Unsupported {
                kind,
                operation: "delete",
            }),
            Kind::Routes => {
                self.routes.clear();
                Ok(())
            }
            Kind::Gateway => {
                let stamp = format_time(self.now);
                let rv = self.next_revision();
                if let Some(meta) = metadata(&mut self.gateway) {
                    meta.entry("deletionTimestamp")
                        .or_insert_with(|| Value::String(stamp));
                    meta.insert("resourceVersion".into(), Value::String(rv));
                }
                Ok(())
            }
            Kind::GatewayClass | Kind::Configuration | Kind::Deployment => {
                let slot = match kind {
                    Kind::GatewayClass => &mut self.gateway_class,
                    Kind::Configuration => &mut self.configuration,
                    _ => &mut self.deployment,
                };
                match slot.take() {
                    Some(_) => Ok(()),
                    None => Err(ClusterError::Missing {
                        kind,
                        operation: "delete",
                    }),
                }
            }
        }
    }

    /// Runs the crude Deployment controller once: rewrites the Deployment's `status` (a
    /// status write: `resourceVersion` changes, `generation` does not).
    pub fn rollout(&mut self, rollout: Rollout) -> Result<(), ClusterError> {
        let now = format_time(self.now);
        let rv = self.next_revision();
        let Some(deployment) = self.deployment.as_mut() else {
            return Err(ClusterError::Missing {
                kind: Kind::Deployment,
                operation: "roll out",
            });
        };
        let generation = deployment
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let replicas = deployment
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let name = deployment
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let template = deployment
            .pointer("/spec/template")
            .map(Value::to_string)
            .unwrap_or_default();
        let replica_set = format!("{name}-{}", pod_template_hash(&template));
        let old: Vec<Value> = deployment
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let condition = |type_: &str, status: &str, reason: &str, message: String| {
            let kept = old.iter().find(|c| {
                c.get("type").and_then(Value::as_str) == Some(type_)
                    && c.get("status").and_then(Value::as_str) == Some(status)
            });
            let since = kept
                .and_then(|c| c.get("lastTransitionTime").cloned())
                .unwrap_or_else(|| Value::String(now.clone()));
            json!({
                "type": type_, "status": status, "reason": reason, "message": message,
                "lastUpdateTime": now, "lastTransitionTime": since,
            })
        };
        let available = |yes: bool| {
            if yes {
                condition(
                    "Available",
                    "True",
                    "MinimumReplicasAvailable",
                    "Deployment has minimum availability.".into(),
                )
            } else {
                condition(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    "Deployment does not have minimum availability.".into(),
                )
            }
        };
        let (updated, ready, conditions) = match rollout {
            Rollout::Complete => (
                replicas,
                replicas,
                vec![
                    available(true),
                    condition(
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        format!("ReplicaSet {replica_set:?} has successfully progressed."),
                    ),
                ],
            ),
            Rollout::Progressing => (
                0,
                0,
                vec![
                    available(false),
                    condition(
                        "Progressing",
                        "True",
                        "ReplicaSetUpdated",
                        format!("ReplicaSet {replica_set:?} is progressing."),
                    ),
                ],
            ),
            // The new Pods exist but never became ready: the usual way a rollout stalls.
            Rollout::Stalled => (
                replicas,
                0,
                vec![
                    available(false),
                    condition(
                        "Progressing",
                        "False",
                        "ProgressDeadlineExceeded",
                        format!("ReplicaSet {replica_set:?} has timed out progressing."),
                    ),
                ],
            ),
        };
        let mut status = Map::new();
        status.insert("observedGeneration".into(), json!(generation));
        for (key, count) in [
            ("replicas", replicas),
            ("updatedReplicas", updated),
            ("readyReplicas", ready),
            ("availableReplicas", ready),
            ("unavailableReplicas", replicas - ready),
        ] {
            if count > 0 {
                status.insert(key.into(), json!(count));
            }
        }
        status.insert("conditions".into(), Value::Array(conditions));
        if let Some(object) = deployment.as_object_mut() {
            object.insert("status".into(), Value::Object(status));
        }
        if let Some(meta) = metadata(deployment) {
            meta.insert("resourceVersion".into(), Value::String(rv));
        }
        Ok(())
    }

    /// One reconcile, as the controller runs it: snapshot, plan at the cluster clock,
    /// Deployment write, settle, status write.
    pub fn reconcile(&mut self) -> Result<StepRecord, ClusterError> {
        // The plan borrows the routes while the writes change the cluster: lend them out.
        let routes = std::mem::take(&mut self.routes);
        let record = self.reconcile_with(&routes);
        self.routes = routes;
        record
    }

    fn reconcile_with(&mut self, routes: &[L34Route]) -> Result<StepRecord, ClusterError> {
        let settings = self.settings.clone();
        let gateway: Gateway = typed(Kind::Gateway, &self.gateway)?;
        let gateway_class: Option<GatewayClass> = self
            .gateway_class
            .as_ref()
            .map(|v| typed(Kind::GatewayClass, v))
            .transpose()?;
        let configuration: Option<GatewayConfiguration> = self
            .configuration
            .as_ref()
            .map(|v| typed(Kind::Configuration, v))
            .transpose()?;
        let deployment: Option<Deployment> = self
            .deployment
            .as_ref()
            .map(|v| typed(Kind::Deployment, v))
            .transpose()?;
        let template: Deployment = typed(Kind::Template, &self.template)?;

        let snapshot = Snapshot::new(&gateway, &template)
            .with_gateway_class(gateway_class.as_ref())
            .with_configuration(configuration.as_ref())
            .with_deployment(deployment.as_ref())
            .with_routes(routes);
        let plan = crate::reconcile::plan(&settings, snapshot, self.now)?;
        let action = plan.write_kind();
        let (drift, outcome, settlement) = match plan {
            Plan::Write(pending) => {
                let (drift, outcome) = match pending.write() {
                    DeploymentWrite::Create(desired) => {
                        (Vec::new(), self.create_deployment(desired))
                    }
                    DeploymentWrite::Update { desired, drift } => {
                        (drift.clone(), self.update_deployment(desired))
                    }
                };
                let settlement = pending.settle(outcome.clone());
                (drift, Some(outcome), settlement)
            }
            Plan::Settled(settlement) => (Vec::new(), None, settlement),
        };
        let patch = settlement.status_patch();
        let mut status_patch_problem = None;
        let status_written = match &settlement.status {
            Some(status) => {
                status_patch_problem = self.check_status_patch(status, patch.as_ref());
                self.write_status(status);
                true
            }
            None => {
                if patch.is_some() {
                    status_patch_problem = Some(
                        "status_patch() gives a patch but the settlement has no status".into(),
                    );
                }
                false
            }
        };
        let (conditions, addresses) = match typed::<Gateway>(Kind::Gateway, &self.gateway) {
            Ok(g) => (
                g.status.conditions,
                g.status.addresses.into_iter().map(|a| a.value).collect(),
            ),
            Err(_) => (Vec::new(), Vec::new()),
        };
        Ok(StepRecord {
            time: self.now,
            action,
            drift,
            outcome,
            status_written,
            conditions,
            addresses,
            requeue: settlement.requeue,
            events: settlement.events.clone(),
            status_patch_problem,
        })
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

    fn write_status(&mut self, status: &GatewayStatus) {
        let value = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
        let rv = self.next_revision();
        if let Some(gateway) = self.gateway.as_object_mut() {
            gateway.insert("status".into(), value);
        }
        if let Some(meta) = metadata(&mut self.gateway) {
            meta.insert("resourceVersion".into(), Value::String(rv));
        }
        self.status_writes += 1;
    }

    fn take_failure(&mut self) -> Option<WriteOutcome> {
        if self.failures == 0 {
            return None;
        }
        self.failures -= 1;
        self.failure
            .clone()
            .filter(|f| !matches!(f, WriteOutcome::Applied))
    }

    fn create_deployment(&mut self, desired: &Deployment) -> WriteOutcome {
        self.deployment_writes += 1;
        if let Some(failure) = self.take_failure() {
            return failure;
        }
        if let Some(refused) = api_validation::refusal(desired) {
            return refused;
        }
        if self.deployment.is_some() {
            return WriteOutcome::from_parts(
                Some(409),
                "AlreadyExists",
                &format!(
                    "deployments.apps {:?} already exists",
                    desired.name().unwrap_or("")
                ),
            );
        }
        let mut object = Value::Object(desired.object.clone());
        if let Some(map) = object.as_object_mut() {
            // The server ignores a status sent with a create.
            map.remove("status");
        }
        if let Some(meta) = metadata(&mut object) {
            for key in ["uid", "resourceVersion", "generation", "creationTimestamp"] {
                meta.remove(key);
            }
        }
        let mut object = self.defaulted(object);
        self.fill_bookkeeping(&mut object);
        self.deployment = Some(object);
        self.applied_deployment_writes += 1;
        WriteOutcome::Applied
    }

    fn update_deployment(&mut self, desired: &Deployment) -> WriteOutcome {
        self.deployment_writes += 1;
        if let Some(failure) = self.take_failure() {
            return failure;
        }
        let name = desired.name().unwrap_or("").to_owned();
        let Some(stored) = self.deployment.clone() else {
            return WriteOutcome::from_parts(
                Some(404),
                "NotFound",
                &format!("deployments.apps {name:?} not found"),
            );
        };
        let rv = |v: &Value| {
            v.pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if desired
            .get(&["metadata", "resourceVersion"])
            .and_then(Value::as_str)
            != rv(&stored).as_deref()
        {
            return WriteOutcome::from_parts(
                Some(409),
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on deployments.apps {name:?}: the object has \
                     been modified; please apply your changes to the latest version and try again"
                ),
            );
        }
        // Validation comes after the resourceVersion precondition, as in the real server.
        if let Some(refused) = api_validation::refusal(desired) {
            return refused;
        }
        let mut object = Value::Object(desired.object.clone());
        if let Some(map) = object.as_object_mut() {
            // An update of the main resource never changes status.
            match stored.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
        }
        if let Some(meta) = metadata(&mut object) {
            for key in ["uid", "creationTimestamp"] {
                match stored.pointer(&format!("/metadata/{key}")) {
                    Some(v) => meta.insert(key.into(), v.clone()),
                    None => meta.remove(key),
                };
            }
        }
        let mut object = self.defaulted(object);
        self.update_bookkeeping(Kind::Deployment, &stored, &mut object);
        self.deployment = Some(object);
        self.applied_deployment_writes += 1;
        WriteOutcome::Applied
    }

    fn defaulted(&self, object: Value) -> Value {
        match object {
            Value::Object(map) => {
                let mut deployment = Deployment::from_object(map);
                (self.server_defaults)(&mut deployment);
                Value::Object(deployment.object)
            }
            other => other,
        }
    }

    fn next_revision(&mut self) -> String {
        self.revision += 1;
        self.revision.to_string()
    }

    /// Creation bookkeeping: fills what a created object always has.
    fn fill_bookkeeping(&mut self, object: &mut Value) {
        self.uids += 1;
        let uid = format!("00000000-0000-4000-8000-{:012x}", self.uids);
        let rv = self.next_revision();
        let stamp = format_time(self.now);
        if let Some(meta) = metadata(object) {
            meta.entry("uid").or_insert(Value::String(uid));
            meta.entry("generation").or_insert(json!(1));
            meta.entry("resourceVersion").or_insert(Value::String(rv));
            meta.entry("creationTimestamp")
                .or_insert(Value::String(stamp));
        }
    }

    /// Update bookkeeping: new resourceVersion; generation bumped when spec changed;
    /// identity fields the client cannot change.
    fn update_bookkeeping(&mut self, kind: Kind, before: &Value, after: &mut Value) {
        let generation = before
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        // As the real API server: a Deployment's generation also moves with its annotations
        // (apps/v1 PrepareForUpdate); other objects' with their spec only.
        let annotations = |v: &Value| v.pointer("/metadata/annotations").cloned();
        let changed = before.get("spec") != after.get("spec")
            || (kind == Kind::Deployment && annotations(before) != annotations(after));
        let rv = self.next_revision();
        if let Some(meta) = metadata(after) {
            meta.insert(
                "generation".into(),
                json!(generation.saturating_add(i64::from(changed))),
            );
            meta.insert("resourceVersion".into(), Value::String(rv));
            for key in ["uid", "creationTimestamp"] {
                if let Some(v) = before.pointer(&format!("/metadata/{key}")) {
                    meta.insert(key.into(), v.clone());
                }
            }
        }
    }

    fn stored(&self, kind: Kind) -> Option<&Value> {
        match kind {
            Kind::GatewayClass => self.gateway_class.as_ref(),
            Kind::Gateway => Some(&self.gateway),
            Kind::Configuration => self.configuration.as_ref(),
            Kind::Deployment => self.deployment.as_ref(),
            Kind::Template => Some(&self.template),
            Kind::Routes => None,
        }
    }

    /// Stores an API object (the Gateway, or one of the optional ones).
    fn set(&mut self, kind: Kind, value: Value) {
        match kind {
            Kind::Gateway => self.gateway = value,
            Kind::GatewayClass => self.gateway_class = Some(value),
            Kind::Configuration => self.configuration = Some(value),
            Kind::Deployment => self.deployment = Some(value),
            Kind::Template => self.template = value,
            // Routes are stored read, by `patch`, not here.
            Kind::Routes => {}
        }
    }
}

/// Checks that an object deserializes into its kind's wire type.
pub(crate) fn check(kind: Kind, value: Option<&Value>) -> Result<(), ClusterError> {
    let Some(value) = value else { return Ok(()) };
    match kind {
        Kind::GatewayClass => typed::<GatewayClass>(kind, value).map(drop),
        Kind::Gateway => typed::<Gateway>(kind, value).map(drop),
        Kind::Configuration => typed::<GatewayConfiguration>(kind, value).map(drop),
        // A Deployment is held whole as any JSON object: checking that needs no copy.
        Kind::Deployment | Kind::Template if value.is_object() => Ok(()),
        Kind::Deployment | Kind::Template => typed::<Deployment>(kind, value).map(drop),
        Kind::Routes => typed::<Vec<L34Route>>(kind, value).map(drop),
    }
}

fn typed<T: serde::de::DeserializeOwned>(kind: Kind, value: &Value) -> Result<T, ClusterError> {
    if kind != Kind::Routes && !value.is_object() {
        return Err(ClusterError::Malformed {
            kind,
            why: "must be a JSON object".into(),
        });
    }
    typed_at(value).map_err(|(path, why)| ClusterError::Malformed {
        kind,
        why: match path {
            Some(path) => format!("{path}: {why}"),
            None => why,
        },
    })
}

/// Reads `value` in place (no copy of a large object); on error, the key path of the wrong
/// value (`spec.internalSubnets[0].cidr`) and what is wrong with it.
pub(crate) fn typed_at<T: serde::de::DeserializeOwned>(
    value: &Value,
) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let why = crate::sim::strict_json::plain_message(&e.into_inner().to_string());
        ((path != ".").then_some(path), why)
    })
}

/// The object's `metadata`, created when missing; `None` when the object is not an object
/// (the checks keep every stored object an object).
fn metadata(object: &mut Value) -> Option<&mut Map<String, Value>> {
    object
        .as_object_mut()
        .map(|map| crate::json::object_mut(map, &["metadata"]))
}

/// RFC 3339 UTC with second precision, as Kubernetes writes timestamps.
pub fn format_time(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A short, stable hash of the pod template, standing in for `pod-template-hash`.
fn pod_template_hash(template: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in template.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:09x}", hash & 0xf_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn template() -> Value {
        json!({"spec": {"template": {"spec": {"containers": [{"name": "lb", "image": "lb"}]}}}})
    }

    fn marker_defaults(d: &mut Deployment) {
        let spec = crate::json::object_mut(&mut d.object, &["spec"]);
        spec.entry("revisionHistoryLimit").or_insert(json!(10));
    }

    fn cluster(deployment: Option<Value>) -> Cluster {
        let objects = Objects {
            gateway_class: Some(
                json!({"metadata": {"name": "c"}, "spec": {"controllerName": "x"}}),
            ),
            gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
                            "spec": {"gatewayClassName": "c"}}),
            configuration: Some(json!({"metadata": {"name": "conf", "namespace": "red",
                                                    "generation": 7}, "spec": {}})),
            deployment,
            template: Some(template()),
            routes: vec![],
        };
        Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects)
            .unwrap()
            .with_server_defaults(marker_defaults)
    }

    fn lb(rv: &str) -> Value {
        json!({"metadata": {"name": "sllbr-gw", "namespace": "red", "resourceVersion": rv,
                            "uid": "d-1", "generation": 4, "creationTimestamp": "2025-12-01T00:00:00Z"},
               "spec": {"replicas": 3, "template": {"spec": {"containers": []}}},
               "status": {"observedGeneration": 4}})
    }

    fn rv(v: &Value) -> String {
        v.pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }

    fn generation(v: &Value) -> i64 {
        v.pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap()
    }

    #[test]
    fn initial_objects_get_missing_bookkeeping_and_keep_the_rest() {
        let c = cluster(Some(lb("77")));
        let gw = c.gateway();
        assert_eq!(gw["metadata"]["uid"], "u-1", "a given uid is kept");
        assert_eq!(gw["metadata"]["generation"], 1);
        assert_eq!(gw["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
        assert!(gw["metadata"]["resourceVersion"].is_string());
        let class_uid = c.gateway_class().unwrap()["metadata"]["uid"].clone();
        assert!(
            class_uid
                .as_str()
                .unwrap()
                .starts_with("00000000-0000-4000-8000-")
        );
        assert_eq!(c.configuration().unwrap()["metadata"]["generation"], 7);
        // The Deployment is stored as written: no defaulting, its own resourceVersion.
        assert_eq!(c.deployment(), Some(&lb("77")));
    }

    #[test]
    fn malformed_initial_objects_are_errors_naming_the_object() {
        let objects = Objects {
            gateway: json!({"metadata": {"name": 5}}),
            template: Some(template()),
            ..Objects::default()
        };
        let e = Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap_err();
        assert!(
            matches!(
                e,
                ClusterError::Malformed {
                    kind: Kind::Gateway,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with("gateway: "), "{e}");
        // Routes are held read; a patch that is not a route list is refused.
        let mut c = cluster(None);
        let e = c.patch(Kind::Routes, &json!(["not a route"])).unwrap_err();
        assert!(
            matches!(
                e,
                ClusterError::Malformed {
                    kind: Kind::Routes,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn patch_bumps_generation_only_when_spec_changes() {
        let mut c = cluster(None);
        let rv0 = rv(c.gateway());
        c.patch(Kind::Gateway, &json!({"metadata": {"labels": {"a": "b"}}}))
            .unwrap();
        assert_eq!(generation(c.gateway()), 1);
        let rv1 = rv(c.gateway());
        assert_ne!(rv0, rv1, "every write sets a new resourceVersion");
        c.patch(
            Kind::Gateway,
            &json!({"status": {"addresses": [{"value": "1.2.3.4"}]}}),
        )
        .unwrap();
        assert_eq!(generation(c.gateway()), 1, "status is not spec");
        c.patch(
            Kind::Gateway,
            &json!({"spec": {"gatewayClassName": "other"}}),
        )
        .unwrap();
        assert_eq!(generation(c.gateway()), 2);
        c.patch(
            Kind::Gateway,
            &json!({"spec": {"gatewayClassName": "other"}}),
        )
        .unwrap();
        assert_eq!(
            generation(c.gateway()),
            2,
            "a no-op spec patch bumps nothing"
        );
        c.patch(
            Kind::Configuration,
            &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
        )
        .unwrap();
        assert_eq!(generation(c.configuration().unwrap()), 8);
        // A client cannot set generation or uid.
        c.patch(
            Kind::Gateway,
            &json!({"metadata": {"generation": 40, "uid": "x"}}),
        )
        .unwrap();
        assert_eq!(generation(c.gateway()), 2);
        assert_eq!(c.gateway()["metadata"]["uid"], "u-1");
    }

    #[test]
    fn patching_an_absent_object_creates_it_and_a_bad_patch_changes_nothing() {
        let mut c = cluster(None);
        c.delete(Kind::Configuration).unwrap();
        assert!(c.configuration().is_none());
        c.patch(
            Kind::Configuration,
            &json!({"metadata": {"name": "conf", "namespace": "red"}, "spec": {}}),
        )
        .unwrap();
        let conf = c.configuration().unwrap();
        assert_eq!(generation(conf), 1);
        assert!(conf["metadata"]["uid"].is_string());
        // Deleted and recreated: a new uid, unless the patch writes one (kept as written,
        // with its generation).
        let first_uid = conf["metadata"]["uid"].clone();
        c.delete(Kind::Configuration).unwrap();
        c.patch(
            Kind::Configuration,
            &json!({"metadata": {"name": "conf", "namespace": "red"}, "spec": {}}),
        )
        .unwrap();
        assert_ne!(c.configuration().unwrap()["metadata"]["uid"], first_uid);
        c.delete(Kind::Configuration).unwrap();
        c.patch(
            Kind::Configuration,
            &json!({"metadata": {"name": "conf", "namespace": "red", "uid": "u-9", "generation": 7},
                    "spec": {}}),
        )
        .unwrap();
        let conf = c.configuration().unwrap();
        assert_eq!(
            (generation(conf), &conf["metadata"]["uid"]),
            (7, &json!("u-9"))
        );
        let before = c.gateway().clone();
        let e = c
            .patch(Kind::Gateway, &json!({"spec": {"gatewayClassName": 5}}))
            .unwrap_err();
        assert!(matches!(
            e,
            ClusterError::Malformed {
                kind: Kind::Gateway,
                ..
            }
        ));
        assert_eq!(c.gateway(), &before);
    }

    #[test]
    fn deployment_patches_are_defaulted_and_templates_get_no_bookkeeping() {
        let mut c = cluster(Some(lb("77")));
        c.patch(Kind::Deployment, &json!({"spec": {"replicas": 5}}))
            .unwrap();
        let d = c.deployment().unwrap();
        assert_eq!(
            d["spec"]["revisionHistoryLimit"], 10,
            "server defaults applied"
        );
        assert_eq!(generation(d), 5);
        assert_eq!(d["status"]["observedGeneration"], 4, "status kept");
        c.patch(Kind::Template, &json!({"metadata": {"labels": {"x": "y"}}}))
            .unwrap();
        assert_eq!(c.template()["metadata"], json!({"labels": {"x": "y"}}));
    }

    #[test]
    fn routes_patch_replaces_the_list() {
        let mut c = cluster(None);
        let route = json!({"metadata": {"namespace": "red"},
                           "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}});
        c.patch(Kind::Routes, &json!([route.clone(), route.clone()]))
            .unwrap();
        assert_eq!(c.routes().len(), 2);
        c.patch(Kind::Routes, &json!([])).unwrap();
        assert!(c.routes().is_empty());
        assert!(c.patch(Kind::Routes, &json!({"a": 1})).is_err());
        c.patch(Kind::Routes, &json!([route])).unwrap();
        c.delete(Kind::Routes).unwrap();
        assert!(c.routes().is_empty());
    }

    #[test]
    fn delete_rules() {
        let mut c = cluster(Some(lb("1")));
        c.delete(Kind::Deployment).unwrap();
        assert!(c.deployment().is_none());
        let e = c.delete(Kind::Deployment).unwrap_err();
        assert_eq!(e.to_string(), "cannot delete: there is no deployment");
        assert!(matches!(
            c.delete(Kind::Template),
            Err(ClusterError::Unsupported { .. })
        ));
        c.advance(Duration::from_secs(90)).unwrap();
        c.delete(Kind::Gateway).unwrap();
        assert_eq!(
            c.gateway()["metadata"]["deletionTimestamp"],
            "2026-01-01T00:01:30Z"
        );
        c.delete(Kind::GatewayClass).unwrap();
        assert!(c.gateway_class().is_none());
    }

    #[test]
    fn advance_moves_the_clock() {
        let mut c = cluster(None);
        c.advance(Duration::from_millis(1500)).unwrap();
        assert_eq!(c.now(), t("2026-01-01T00:00:01.5Z"));
        assert_eq!(format_time(c.now()), "2026-01-01T00:00:01Z");
        assert!(c.advance(Duration::from_secs(u64::MAX)).is_err());
        assert_eq!(
            c.now(),
            t("2026-01-01T00:00:01.5Z"),
            "a failed advance changes nothing"
        );
    }

    fn desired(name: &str) -> Deployment {
        Deployment::from_object(
            json!({"metadata": {"name": name, "namespace": "red", "uid": "client", "generation": 9,
                                "resourceVersion": "5"},
                   "spec": {"replicas": 2}, "status": {"replicas": 100}})
            .as_object()
            .unwrap()
            .clone(),
        )
    }

    #[test]
    fn create_sets_server_fields_and_failures_come_first() {
        let mut c = cluster(None);
        let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
        c.fail_writes(2, e503.clone());
        assert_eq!(c.create_deployment(&desired("sllbr-gw")), e503);
        assert_eq!(c.create_deployment(&desired("sllbr-gw")), e503);
        assert!(c.deployment().is_none());
        assert_eq!(c.pending_failures(), 0);
        assert_eq!(
            c.create_deployment(&desired("sllbr-gw")),
            WriteOutcome::Applied
        );
        let d = c.deployment().unwrap().clone();
        assert_eq!(generation(&d), 1);
        assert_ne!(d["metadata"]["uid"], "client");
        assert_ne!(rv(&d), "5");
        assert_eq!(d["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
        assert!(d.get("status").is_none(), "status of a create is ignored");
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        let again = c.create_deployment(&desired("sllbr-gw"));
        assert_eq!(again.class(), Some(crate::FailureClass::AlreadyExists));
        assert_eq!(c.deployment_writes(), 4);
        assert_eq!(c.applied_deployment_writes(), 1);
    }

    #[test]
    fn update_honours_resource_version_and_keeps_status() {
        let mut c = cluster(Some(lb("77")));
        let stale = desired("sllbr-gw");
        let conflict = c.update_deployment(&stale);
        assert_eq!(conflict.class(), Some(crate::FailureClass::Conflict));
        assert!(conflict.message().contains("the object has been modified"));
        assert_eq!(c.deployment(), Some(&lb("77")));

        let mut same_spec = Deployment::from_object(lb("77").as_object().unwrap().clone());
        same_spec.object.remove("status");
        // Defaulting adds revisionHistoryLimit: spec differs from the undefaulted original.
        assert_eq!(c.update_deployment(&same_spec), WriteOutcome::Applied);
        let d = c.deployment().unwrap().clone();
        assert_eq!(generation(&d), 5);
        assert_eq!(d["status"], json!({"observedGeneration": 4}));
        assert_eq!(d["metadata"]["uid"], "d-1");
        assert_eq!(d["metadata"]["creationTimestamp"], "2025-12-01T00:00:00Z");

        let mut again = Deployment::from_object(d.as_object().unwrap().clone());
        again
            .object
            .insert("status".into(), json!({"observedGeneration": 99}));
        assert_eq!(c.update_deployment(&again), WriteOutcome::Applied);
        let d2 = c.deployment().unwrap();
        assert_eq!(generation(d2), 5, "same spec: no generation bump");
        assert_ne!(rv(d2), rv(&d));
        assert_eq!(
            d2["status"]["observedGeneration"], 4,
            "update never writes status"
        );

        c.delete(Kind::Deployment).unwrap();
        let gone = c.update_deployment(&again);
        assert_eq!(gone.class(), Some(crate::FailureClass::NotFound));
    }

    #[test]
    fn clearing_failures_and_applied_outcomes_let_writes_through() {
        let mut c = cluster(None);
        c.fail_writes(3, WriteOutcome::from_parts(None, "", "connection refused"));
        c.fail_writes(0, WriteOutcome::Applied);
        assert_eq!(c.create_deployment(&desired("d")), WriteOutcome::Applied);
        let mut c = cluster(None);
        c.fail_writes(1, WriteOutcome::Applied);
        assert_eq!(c.create_deployment(&desired("d")), WriteOutcome::Applied);
    }

    #[test]
    fn rollout_writes_status_like_the_deployment_controller() {
        let mut c = cluster(None);
        assert_eq!(
            c.rollout(Rollout::Complete).unwrap_err().to_string(),
            "cannot roll out: there is no deployment"
        );
        let mut c = cluster(Some(lb("77")));
        c.rollout(Rollout::Progressing).unwrap();
        let d = c.deployment().unwrap().clone();
        assert_eq!(generation(&d), 4);
        assert_ne!(rv(&d), "77");
        let s = &d["status"];
        assert_eq!(s["observedGeneration"], 4);
        assert_eq!(s["replicas"], 3);
        assert!(
            s.get("updatedReplicas").is_none(),
            "zero counts are omitted"
        );
        assert!(s.get("availableReplicas").is_none());
        assert_eq!(s["conditions"][1]["reason"], "ReplicaSetUpdated");
        assert_eq!(s["conditions"][0]["status"], "False");

        c.advance(Duration::from_secs(60)).unwrap();
        c.rollout(Rollout::Complete).unwrap();
        let s = c.deployment().unwrap()["status"].clone();
        for key in [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
        ] {
            assert_eq!(s[key], 3, "{key}");
        }
        assert_eq!(s["conditions"][0]["type"], "Available");
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][1]["type"], "Progressing");
        assert_eq!(s["conditions"][1]["status"], "True");
        assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
        assert_eq!(
            s["conditions"][1]["lastTransitionTime"], "2026-01-01T00:00:00Z",
            "Progressing stayed True: its transition time is kept"
        );
        assert_eq!(
            s["conditions"][0]["lastTransitionTime"],
            "2026-01-01T00:01:00Z"
        );

        c.rollout(Rollout::Stalled).unwrap();
        let s = c.deployment().unwrap()["status"].clone();
        let progressing = &s["conditions"][1];
        assert_eq!(progressing["status"], "False");
        assert_eq!(progressing["reason"], "ProgressDeadlineExceeded");
        let message = progressing["message"].as_str().unwrap();
        assert!(message.starts_with("ReplicaSet \"sllbr-gw-"), "{message}");
        assert!(
            message.ends_with("\" has timed out progressing."),
            "{message}"
        );
        assert_eq!(s["updatedReplicas"], 3);
        assert!(s.get("availableReplicas").is_none());
    }

    fn meridio() -> Cluster {
        let objects = Objects {
            gateway_class: Some(json!({"metadata": {"name": "meridio"},
                "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}})),
            gateway: json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u-1"},
                "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}),
            configuration: Some(
                json!({"metadata": {"name": "conf", "namespace": "red", "generation": 7},
                "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
                         "horizontalScaling": {"replicas": 2, "enforceReplicas": true}}}),
            ),
            ..Objects::default()
        };
        Cluster::new(Settings::default(), t("2026-01-01T00:00:00Z"), objects).unwrap()
    }

    #[test]
    fn reconcile_writes_once_then_settles_with_no_writes() {
        let mut c = meridio();
        let first = c.reconcile().unwrap();
        assert_eq!(first.action, WriteKind::Create);
        assert_eq!(first.outcome, Some(WriteOutcome::Applied));
        assert!(first.status_written);
        assert_eq!(first.status_patch_problem, None);
        assert_eq!(c.deployment().unwrap()["metadata"]["generation"], 1);
        c.rollout(Rollout::Complete).unwrap();
        assert!(
            c.reconcile().unwrap().status_written,
            "the initializing note goes"
        );
        for _ in 0..20 {
            c.advance(Duration::from_secs(60)).unwrap();
            let r = c.reconcile().unwrap();
            assert_eq!((r.action, r.status_written), (WriteKind::None, false));
        }
        assert_eq!(c.deployment_writes(), 1);
        assert_eq!(c.applied_deployment_writes(), 1);
        assert_eq!(c.status_writes(), 2);
        let gw = typed::<Gateway>(Kind::Gateway, c.gateway()).unwrap();
        assert_eq!(gw.status.conditions.len(), 3);
    }

    #[test]
    fn failed_writes_are_counted_and_leave_the_deployment_alone() {
        let mut c = meridio();
        c.reconcile().unwrap();
        c.patch(
            Kind::Configuration,
            &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
        )
        .unwrap();
        let before = c.deployment().cloned();
        let e503 = WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "etcd");
        c.fail_writes(2, e503.clone());
        for _ in 0..2 {
            let r = c.reconcile().unwrap();
            assert_eq!(r.action, WriteKind::Update);
            assert_eq!(r.outcome.as_ref(), Some(&e503));
            assert!(!r.drift.is_empty());
        }
        assert_eq!(c.deployment().cloned(), before);
        let r = c.reconcile().unwrap();
        assert_eq!(r.outcome, Some(WriteOutcome::Applied));
        assert_eq!(c.deployment().unwrap()["spec"]["replicas"], 3);
        assert_eq!(c.deployment_writes(), 4);
        assert_eq!(c.applied_deployment_writes(), 2);
    }

    #[test]
    fn kinds_and_rollouts_round_trip_their_keys() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_key(kind.key()), Some(kind));
        }
        assert_eq!(Kind::from_key("Gateway"), None);
        for r in [Rollout::Complete, Rollout::Progressing, Rollout::Stalled] {
            assert_eq!(Rollout::from_key(r.key()), Some(r));
        }
        for a in [WriteKind::Create, WriteKind::Update, WriteKind::None] {
            assert_eq!(WriteKind::from_name(a.as_str()), Some(a));
        }
    }
}
