//! A simulated API server: the objects one Gateway's reconcile reads, a clock, and the
//! behaviour of the real server where it matters to the crate.
//!
//! Its parts, one file each: the object store ([`Objects`], [`Kind`] and the shape each
//! kind must have), the server apart from its objects (`server.rs`: the clock, the
//! resourceVersion and uid counters, bookkeeping, conflicts, defaulting, refusals,
//! mutating admission and injected failures, blanket or per [`Request`], for Deployment
//! writes, patches, deletes and status writes; each function takes the stored object and
//! gives the one to store, so the kit's shared store, which holds many Gateways' objects in
//! maps, asks the same server), which slot each write reads and fills (`writes.rs`), the
//! rollout (the crude Deployment controller, [`RolloutState`]), the port and the reconcile
//! ([`Cluster::reconcile`], [`ReconcileReport`]).
//!
//! [`Cluster`] holds the GatewayClass, the Gateway, the GatewayConfiguration, the LB
//! Deployment, the template and the L34Routes (the first three as compact JSON trees,
//! [`tree::Value`]), and drives the crate exactly as a
//! controller would: [`Cluster::reconcile`] builds a [`Snapshot`](crate::Snapshot) from the stored objects,
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
//!   `metadata.creationTimestamp`; a Gateway or GatewayClass created without `status` gets
//!   the CRD's default status (Gateway `Accepted` and `Programmed`, GatewayClass `Accepted`,
//!   each `Unknown`/`Pending`/`Waiting for controller` at `1970-01-01T00:00:00Z`, no
//!   `observedGeneration`);
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
//! - [`Cluster::rollout`] is a crude Deployment controller that writes `status`;
//! - [`Cluster::stale_reads`] answers the controller's reads from an older revision
//!   ([`Cluster::snapshot`]), as a lagging watch cache does, while writes go to the current
//!   objects with their preconditions (`stale.rs`);
//! - a GatewayConfiguration stored with a value its type cannot hold
//!   ([`Cluster::patch_unchecked`], as a server whose CRD admits more stores it) is read by
//!   the controller as unreadable, with the reader's error naming the field, until a
//!   [`Cluster::patch`] makes it readable again;
//! - a GatewayClass's `spec.parametersRef` names the stored GatewayConfiguration when its
//!   namespace and name are that object's, else an absent one;
//! - the namespaces' labels ([`Objects::namespaces`]) are what the controller sees of the
//!   routes' namespaces, for `allowedRoutes` selectors.
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

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::error::InputError;
use crate::outcome::WriteOutcome;
use crate::reconcile::{Driver, WriteRecord};
use crate::settings::Settings;
use crate::wire::{Deployment, L34Route, tree};

#[cfg(feature = "testing")]
pub(crate) mod fingerprint;
mod namespaces;
mod port;
pub(crate) mod reconcile;
mod rollout;
pub(crate) mod server;
mod stale;
pub(crate) mod store;
mod writes;

pub use crate::reconcile::WriteKind;
pub use namespaces::Namespaces;
pub use port::ClusterPort;
pub use reconcile::ReconcileReport;
pub use rollout::RolloutState;
pub(crate) use server::Server;
pub use server::{Request, Verb};
pub use store::{Kind, Objects};
use store::{check, default_status};

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
    /// The API server answered a request with an error: a fault injected for it (the
    /// kit's per-request fault injection).
    #[error("{request}: {}", .outcome.message())]
    Refused {
        /// The request.
        request: Request,
        /// The server's answer.
        outcome: WriteOutcome,
    },
    /// Stale reads from a snapshot that is not held (never taken, or used up).
    #[error("no snapshot {0:?} to read from")]
    NoSnapshot(String),
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
///     gateway: json!({"metadata": {"name": "gw", "namespace": "red"}, "spec": {}}).into(),
///     template: Some(serde_json::from_value(
///         json!({"spec": {"template": {"spec": {"containers": []}}}}),
///     ).unwrap()),
///     ..Objects::default()
/// };
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
/// let mut cluster = Cluster::new(Settings::default(), now, objects).unwrap();
/// assert_eq!(cluster.gateway()["metadata"]["generation"], 1);
/// cluster
///     .patch(gateway_reconcile::sim::cluster::Kind::Gateway,
///            &json!({"spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}}))
///     .unwrap();
/// assert_eq!(cluster.gateway()["metadata"]["generation"], 2);
/// ```
#[derive(Debug, Clone)]
pub struct Cluster {
    settings: Settings,
    /// The API server apart from the objects: clock, counters, injected faults.
    server: Server,
    gateway_class: Option<tree::Value>,
    gateway: tree::Value,
    configuration: Option<tree::Value>,
    deployment: Option<Deployment>,
    /// Shared with each reconcile's snapshot (no copy per reconcile); copied only when a
    /// patch changes it while a snapshot still holds it.
    template: std::sync::Arc<Deployment>,
    routes: Vec<L34Route>,
    namespaces: Namespaces,
    /// Whether the configuration was last stored without the type check
    /// ([`Cluster::patch_unchecked`]): it may not read as its kind.
    configuration_unchecked: bool,
    deployment_writes: u64,
    applied_deployment_writes: u64,
    status_writes: u64,
    class_status_writes: u64,
    /// The controller's loop, with its memory: the write record of its last successful
    /// write.
    driver: Driver,
    /// The controller's schedule: when the last reconcile's requeue falls due.
    due: Option<Timestamp>,
    /// What the status patch of the reconcile under way got wrong, if anything (see
    /// [`ReconcileReport::status_patch_problem`]).
    status_patch_problem: Option<String>,
    /// The revisions kept for lagging reads (none unless a test asks).
    lag: stale::Lag,
}

impl Cluster {
    /// A cluster holding `objects`, its clock at `now`. Fails when an object does not have
    /// the shape of its kind.
    pub fn new(settings: Settings, now: Timestamp, objects: Objects) -> Result<Self, ClusterError> {
        let template = objects
            .template
            .unwrap_or_else(crate::template::default_template)
            .into();
        let mut cluster = Cluster {
            settings,
            server: Server::new(now),
            gateway_class: None,
            gateway: tree::Value::Null,
            configuration: None,
            deployment: None,
            template,
            routes: objects.routes,
            namespaces: objects.namespaces,
            configuration_unchecked: false,
            deployment_writes: 0,
            applied_deployment_writes: 0,
            status_writes: 0,
            class_status_writes: 0,
            driver: Driver::default(),
            due: None,
            status_patch_problem: None,
            lag: stale::Lag::default(),
        };
        cluster.driver = Driver::new(cluster.settings.clone());
        // Moved in, not copied: they can be large.
        let json = [
            (Kind::GatewayClass, objects.gateway_class),
            (Kind::Gateway, Some(objects.gateway)),
            (Kind::Configuration, objects.configuration),
        ];
        for (kind, value) in json {
            if let Some(mut value) = value.filter(|v| !v.is_null()) {
                check(kind, Some(&value))?;
                cluster.server.fill_bookkeeping(&mut value);
                default_status(kind, &mut value);
                cluster.set(kind, value);
            }
        }
        if let Some(mut deployment) = objects.deployment {
            cluster.server.fill_deployment_bookkeeping(&mut deployment);
            cluster.deployment = Some(deployment);
        }
        Ok(cluster)
    }

    /// Replaces the API server's Deployment defaulting (used on every Deployment create,
    /// update and patch), e.g. with one that matches another Kubernetes version.
    pub fn with_server_defaults(mut self, defaults: fn(&mut Deployment)) -> Self {
        self.server.server_defaults = defaults;
        self
    }

    /// The API server's Deployment defaulting in use.
    pub fn server_defaults(&self) -> fn(&mut Deployment) {
        self.server.server_defaults
    }

    /// Sets the clock (the scenario runner's virtual clock; it only moves forward).
    pub(crate) fn set_clock(&mut self, now: Timestamp) {
        self.server.now = now;
    }

    /// The settings reconciles run with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The cluster clock.
    pub fn now(&self) -> Timestamp {
        self.server.now
    }

    /// Moves the clock forward.
    pub fn advance(&mut self, by: Duration) -> Result<(), ClusterError> {
        let signed = SignedDuration::try_from(by).map_err(|_| ClusterError::Clock(by))?;
        self.server.now = self
            .server
            .now
            .checked_add(signed)
            .map_err(|_| ClusterError::Clock(by))?;
        Ok(())
    }

    /// The stored Gateway (`serde_json::Value::from` makes a `serde_json::Value` of it).
    pub fn gateway(&self) -> &tree::Value {
        &self.gateway
    }

    /// The stored GatewayClass, if any.
    pub fn gateway_class(&self) -> Option<&tree::Value> {
        self.gateway_class.as_ref()
    }

    /// The stored GatewayConfiguration, if any.
    pub fn configuration(&self) -> Option<&tree::Value> {
        self.configuration.as_ref()
    }

    /// The stored LB Deployment, if any.
    pub fn deployment(&self) -> Option<&Deployment> {
        self.deployment.as_ref()
    }

    /// The template.
    pub fn template(&self) -> &Deployment {
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

    /// GatewayClass status writes.
    pub fn class_status_writes(&self) -> u64 {
        self.class_status_writes
    }

    /// The write record the simulated controller keeps for the Gateway (its memory of its
    /// last successful Deployment write), if any.
    pub fn write_record(&self) -> Option<WriteRecord> {
        let gateway = self.gateway.get("metadata");
        let text = |key| {
            gateway
                .and_then(|m| m.get(key))
                .and_then(tree::Value::as_str)
                .unwrap_or("")
        };
        self.driver.write_record(text("namespace"), text("name"))
    }

    /// When the simulated controller reconciles next with no change to wait for: the
    /// deadline of the last reconcile's [`Requeue`](crate::Requeue) (`None`: it waits for a
    /// change).
    pub fn next_due(&self) -> Option<Timestamp> {
        self.due
    }

    /// The controller restarts: it forgets what it held in memory (the write record and its
    /// scheduled requeue); what is in the cluster stays.
    pub fn restart(&mut self) {
        self.driver = Driver::new(self.settings.clone());
        self.due = None;
    }
}

/// An empty cluster (no Gateway yet) with the default settings, the built-in template and
/// the clock at the Unix epoch: a [`Backend`](crate::sim::scenario::Backend) for a
/// scenario to create its objects in.
impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            settings: Settings::default(),
            server: Server::new(Timestamp::UNIX_EPOCH),
            gateway_class: None,
            gateway: tree::Value::Null,
            configuration: None,
            deployment: None,
            template: crate::template::default_template().into(),
            routes: Vec::new(),
            namespaces: Namespaces::new(),
            configuration_unchecked: false,
            deployment_writes: 0,
            applied_deployment_writes: 0,
            status_writes: 0,
            class_status_writes: 0,
            driver: Driver::default(),
            due: None,
            status_patch_problem: None,
            lag: stale::Lag::default(),
        }
    }
}

/// RFC 3339 UTC with second precision, as Kubernetes writes timestamps.
pub fn format_time(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
pub(crate) mod tests;
