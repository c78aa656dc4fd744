//! The reconcile loop around `plan` and its settlement, written once ([`Driver`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use jiff::Timestamp;

use super::gather::gather;
use super::plan::{Plan, plan};
#[cfg(test)]
use super::port::Reader;
use super::port::{Port, StatusWrite, View};
use super::record::WriteRecord;
use super::settlement::{Requeue, Settlement};
use super::write::WriteKind;
use crate::error::InputError;
use crate::outcome::WriteOutcome;
use crate::settings::Settings;

/// What one reconcile decided and did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Reconciled {
    /// When to reconcile this Gateway again.
    pub requeue: Requeue,
    /// Whether `requeue` is the resync of a Gateway with nothing left to do
    /// ([`Settlement::resync`]), which a controller may spread out; every other requeue is
    /// meant exactly.
    pub resync: bool,
    /// What the plan decided and the port did; `None` when the port answered
    /// [`View::Later`].
    pub decided: Option<Decided>,
}

/// The decision of a reconcile that planned, and what came of it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Decided {
    /// The Deployment write the plan asked for.
    pub action: WriteKind,
    /// The drifted field paths of an `Update`, or on `None` the drift a write record held
    /// back (empty otherwise).
    pub drift: Vec<String>,
    /// What the port answered for the Deployment write (`None` when there was none).
    pub outcome: Option<WriteOutcome>,
    /// The settlement: the status, Events, requeue and write record.
    pub settlement: Settlement,
    /// What became of the status write.
    pub status: StatusWrite,
}

/// Why a reconcile did not settle.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError<E> {
    /// The core cannot work with the inputs (named in the error); an edit of the object
    /// must come first.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The port could not read the inputs.
    #[error("read: {0}")]
    Read(E),
    /// The status write failed; the Deployment write (if any) was made and settled. Try
    /// again, but not before `requeue` (the settlement's own: a backoff it asked for still
    /// holds).
    #[error("status write: {source}")]
    StatusWrite {
        /// The port's error.
        source: E,
        /// The settlement's requeue.
        requeue: Requeue,
    },
}

/// The reconcile loop around [`plan`] and its settlement, written once: read one Gateway's
/// inputs, plan, perform the Deployment write, settle with what the server answered, keep
/// the write record, write the status with its precondition, record the Events, say when to
/// look again.
///
/// The loop does no I/O itself: a [`Port`] does it. The controller's port reads its caches
/// and writes with its client; the simulator's port reads and writes its simulated store;
/// an embedder's test port an in-memory map. Every one of them runs this [`Driver`], so a
/// test that drives a port tests the loop the controller ships.
///
/// The driver stays pure: no clock (`now` comes in), no executor (the port's methods may be
/// `async`; a port whose futures are always ready can be driven with [`ready`]), no
/// global state. It keeps the last [`WriteRecord`] of each Gateway, in memory, as the
/// contract asks of a controller.
///
/// ```
/// use std::sync::Arc;
/// use gateway_reconcile::reconcile::{Driver, Labels, Port, Reader, StatusWrite, View, ready};
/// use gateway_reconcile::events::Event;
/// use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
/// use gateway_reconcile::{
///     DeploymentWrite, Requeue, Settings, StatusPatch, WriteKind, WriteOutcome, template,
/// };
/// use serde_json::json;
///
/// // A toy store: one Gateway, its class and configuration, and the LB Deployment.
/// struct Store {
///     gateway: Gateway,
///     class: GatewayClass,
///     configuration: GatewayConfiguration,
///     deployment: Option<Deployment>,
///     template: Arc<Deployment>,
///     events: Vec<String>,
/// }
///
/// // Reads answer by key (here: copies of the stored objects); the driver decides which
/// // objects to ask for.
/// impl Reader for Store {
///     type Error = String;
///     type Gateway = Gateway;
///     type Class = GatewayClass;
///     type Configuration = GatewayConfiguration;
///     type Deployment = Deployment;
///
///     async fn gateway(&mut self) -> Result<View<Gateway>, String> {
///         Ok(View::Ready(self.gateway.clone()))
///     }
///     async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, String> {
///         Ok(Some(self.class.clone()).filter(|c| c.metadata.name.as_deref() == Some(name)))
///     }
///     async fn configuration(&mut self, _ns: &str, name: &str)
///         -> Result<Option<GatewayConfiguration>, String> {
///         let found = self.configuration.metadata.name.as_deref() == Some(name);
///         Ok(Some(self.configuration.clone()).filter(|_| found))
///     }
///     async fn deployment(&mut self, _ns: &str, name: &str) -> Result<Option<Deployment>, String> {
///         Ok(self.deployment.clone().filter(|d| d.name() == Some(name)))
///     }
///     async fn routes(&mut self, _ns: &str, _name: &str) -> Result<Vec<L34Route>, String> {
///         Ok(Vec::new())
///     }
///     async fn namespace_labels(&mut self, _name: &str) -> Result<Option<Labels>, String> {
///         Ok(None)
///     }
///     fn template(&mut self) -> Arc<Deployment> {
///         self.template.clone()
///     }
///
/// }
///
/// impl Port for Store {
///     type Error = String;
///     type Reader = Self;
///
///     fn reader(&mut self) -> &mut Self {
///         self
///     }
///
///     async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
///         // A real port sends the desired object and hands back what the server stored
///         // (here: the object with its generation).
///         let mut stored = write.into_desired().into_json();
///         stored["metadata"]["generation"] = json!(1);
///         let stored: Deployment = serde_json::from_value(stored).unwrap();
///         self.deployment = Some(stored.clone());
///         WriteOutcome::Stored(stored)
///     }
///
///     async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, String> {
///         // A real port sends `patch.body()` as a merge patch of `gateways/status`.
///         let mut gateway = serde_json::to_value(&self.gateway).map_err(|e| e.to_string())?;
///         patch.apply_to(&mut gateway);
///         self.gateway = serde_json::from_value(gateway).map_err(|e| e.to_string())?;
///         Ok(StatusWrite::Written)
///     }
///
///     async fn record(&mut self, _action: WriteKind, events: &[Event]) {
///         self.events.extend(events.iter().map(|e| e.reason.clone()));
///     }
/// }
///
/// let mut store = Store {
///     gateway: serde_json::from_value(json!({
///         "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
///         "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
///             "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
///     })).unwrap(),
///     class: serde_json::from_value(json!({
///         "metadata": {"name": "meridio"},
///         "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
///     })).unwrap(),
///     configuration: serde_json::from_value(json!({
///         "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
///         "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
///     })).unwrap(),
///     deployment: None,
///     template: Arc::new(template::default_template()),
///     events: Vec::new(),
/// };
/// let driver = Driver::new(Settings::default());
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
///
/// // The first reconcile creates the LB Deployment and writes the status.
/// let first = ready(driver.reconcile(&mut store, now)).unwrap().unwrap();
/// assert_eq!(first.requeue, Requeue::AwaitChange);
/// let decided = first.decided.unwrap();
/// assert_eq!(decided.action, WriteKind::Create);
/// assert_eq!(decided.status, StatusWrite::Written);
/// assert!(store.deployment.is_some());
/// assert!(store.events.iter().any(|reason| reason == "Applied"));
///
/// // The second has nothing to do: no write, no status write.
/// let second = ready(driver.reconcile(&mut store, now)).unwrap().unwrap();
/// let decided = second.decided.unwrap();
/// assert_eq!(decided.action, WriteKind::None);
/// assert_eq!(decided.status, StatusWrite::Unchanged);
/// ```
///
///
/// [`Driver::reconcile`] runs one reconcile of one Gateway through a [`Port`]. The driver
/// holds the [`Settings`] and the last write record of each Gateway; one driver serves
/// every Gateway of a controller, from concurrent reconciles (of different Gateways) too.
#[derive(Debug, Default)]
pub struct Driver {
    settings: Settings,
    records: Mutex<HashMap<GatewayKey, WriteRecord>>,
}

/// A copy holds the same settings and write records (a simulated controller's state is
/// copied with its cluster).
impl Clone for Driver {
    fn clone(&self) -> Self {
        Driver {
            settings: self.settings.clone(),
            records: Mutex::new(self.records().clone()),
        }
    }
}

/// A Gateway's namespace and name: the key of its write record.
type GatewayKey = (String, String);

impl Driver {
    /// A driver deciding with these settings, holding no write record yet (a controller
    /// that starts, or restarts).
    pub fn new(settings: Settings) -> Self {
        Driver {
            settings,
            records: Mutex::new(HashMap::new()),
        }
    }

    /// The settings the driver decides with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The write record kept for a Gateway.
    pub fn write_record(&self, namespace: &str, name: &str) -> Option<WriteRecord> {
        self.records()
            .get(&(namespace.to_owned(), name.to_owned()))
            .copied()
    }

    /// Forgets the write record of a Gateway (deleted: a Gateway made again under its
    /// name starts without one). The driver forgets it by itself when it reads a Gateway
    /// being deleted; a controller calls this when its watch reports a deletion.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.records()
            .remove(&(namespace.to_owned(), name.to_owned()));
    }

    /// How many write records the driver holds.
    pub fn records_held(&self) -> usize {
        self.records().len()
    }

    /// Feeds every write record, in key order, to `state` (the test kit's state
    /// fingerprint).
    #[cfg(feature = "testing")]
    pub(crate) fn hash_records(&self, state: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        let records = self.records();
        let mut sorted: Vec<_> = records.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.hash(state);
    }

    // A record map is always whole (no update spans a panic), so a poisoned lock is
    // still good to read.
    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<GatewayKey, WriteRecord>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One reconcile of the port's Gateway at `now`: read what it decides from
    /// ([`gather`](super::gather)), plan, write, settle, keep the write record, write the
    /// status, record the Events.
    pub async fn reconcile<P: Port>(
        &self,
        port: &mut P,
        now: Timestamp,
    ) -> Result<Reconciled, ReconcileError<P::Error>> {
        let gathered = match gather(&self.settings, port.reader()).await? {
            View::Ready(gathered) => gathered,
            View::Later(requeue) => {
                return Ok(Reconciled {
                    requeue,
                    resync: false,
                    decided: None,
                });
            }
        };
        let snapshot = gathered.snapshot()?;
        let meta = &snapshot.gateway.metadata;
        let key: GatewayKey = (
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        );
        if meta.deletion_timestamp.is_some() {
            self.records().remove(&key);
        }
        let record = self.records().get(&key).copied();
        let planned = plan(&self.settings, snapshot.with_write_record(record), now)?;
        let action = planned.write_kind();
        let (drift, outcome, settlement) = match planned {
            Plan::Write(pending) => {
                // The desired Deployment goes to the port by value: it becomes the request
                // body (or the stored object) without a copy.
                let (write, awaiting) = pending.into_write();
                let drift = write.drift().to_vec();
                let outcome = port.write(write).await;
                let settlement = awaiting.settle_by_ref(&outcome);
                (drift, Some(outcome), settlement)
            }
            Plan::Settled(settlement) => (settlement.held_drift.clone(), None, settlement),
        };
        if let Some(record) = settlement.write_record {
            self.records().insert(key, record);
        }
        let status = match settlement.status_patch() {
            None => StatusWrite::Unchanged,
            Some(patch) => match port.patch_status(patch).await {
                Ok(written) => written,
                Err(source) => {
                    return Err(ReconcileError::StatusWrite {
                        source,
                        requeue: settlement.requeue,
                    });
                }
            },
        };
        let (requeue, resync) = match status {
            // Decide again with the newer Gateway; its Events would describe a status
            // that was not written.
            StatusWrite::Conflict => (Requeue::Immediately, false),
            StatusWrite::Unchanged | StatusWrite::Written => {
                if !settlement.events.is_empty() {
                    port.record(action, &settlement.events).await;
                }
                (settlement.requeue, settlement.resync)
            }
        };
        Ok(Reconciled {
            requeue,
            resync,
            decided: Some(Decided {
                action,
                drift,
                outcome,
                settlement,
                status,
            }),
        })
    }
}

/// Why [`ready`] could not finish a future.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the port's future was not ready: a port driven with `ready` must answer at once")]
pub struct NotReady;

/// Runs a future whose every await is ready at once (a [`Driver::reconcile`] over an
/// in-memory [`Port`]) to its end, without an executor; [`NotReady`] when it would have
/// to wait.
pub fn ready<F: Future>(future: F) -> Result<F::Output, NotReady> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Ok(output),
        Poll::Pending => Err(NotReady),
    }
}

#[cfg(test)]
mod tests;
