//! The reconcile state machine: [`plan`] decides, the caller writes, [`PendingWrite::settle`]
//! reads the outcome and says what status to write and when to look again.
//!
//! Like a sans-I/O protocol state machine, nothing here talks to the API server or reads a
//! clock: the caller passes the objects it saw and the time, performs the one write the plan
//! asks for, and hands back what happened. The types carry the protocol: a [`Plan`] either
//! needs a write ([`Plan::Write`], settled by value with that write's outcome, exactly once)
//! or is settled already ([`Plan::Settled`]). A caller that sends the desired Deployment by
//! value takes the write out with [`PendingWrite::into_write`] and settles the
//! [`AwaitingOutcome`] it returns instead: a Deployment can be large, and it is not copied.
//! A caller that must change the objects the snapshot borrows while the write is in flight
//! (one mutable store) [`detach`](AwaitingOutcome::detach)es it first: a [`Detached`]
//! borrows nothing.
//!
//! ```
//! use gateway_reconcile::{
//!     DeploymentWrite, Plan, Requeue, Settings, Snapshot, WriteOutcome, plan, template,
//! };
//! use gateway_reconcile::wire::{Gateway, GatewayClass, GatewayConfiguration};
//!
//! let gateway: Gateway = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
//!     "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
//!         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
//! })).unwrap();
//! let class: GatewayClass = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "meridio"},
//!     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
//! })).unwrap();
//! let conf: GatewayConfiguration = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
//!     "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
//! })).unwrap();
//! let template = template::default_template();
//! let settings = Settings::default();
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//!
//! // One reconcile: plan, perform the write it asks for, settle with what happened.
//! let snapshot = Snapshot::new(&gateway, &template)
//!     .with_gateway_class(Some(&class))
//!     .with_configuration(Some(&conf));
//! let settlement = match plan(&settings, snapshot, now).unwrap() {
//!     Plan::Write(pending) => {
//!         let outcome = match pending.write() {
//!             DeploymentWrite::Create(_desired) => WriteOutcome::Applied, // client.create(desired)
//!             DeploymentWrite::Update { .. } => WriteOutcome::Applied,    // client.replace(desired)
//!         };
//!         pending.settle(outcome)
//!     }
//!     Plan::Settled(settlement) => settlement, // nothing to write
//! };
//! if let Some(patch) = settlement.status_patch() {
//!     // client.patch_status(name, &PatchParams::default(), &Patch::Merge(patch.body()))
//!     assert_eq!(patch.body()["status"]["conditions"][1]["type"], "Programmed");
//! }
//! assert_eq!(settlement.requeue, Requeue::AwaitChange);
//! ```
//!
//! A pending write is settled once; a second settle does not compile:
//!
//! ```compile_fail,E0382
//! use gateway_reconcile::{PendingWrite, Settlement, WriteOutcome};
//!
//! fn settle_twice(pending: PendingWrite<'_>) -> (Settlement, Settlement) {
//!     let first = pending.settle(WriteOutcome::Applied);
//!     let second = pending.settle(WriteOutcome::Applied); // use of moved value
//!     (first, second)
//! }
//! ```
//!
//! # Modules
//!
//! `plan` makes the decisions up to the Deployment write; `situation` classifies
//! what happened (decision × write × outcome class); `table` maps a situation to its row of
//! the condition table (the crate docs state its rules); `settle` merges the row into the observed conditions, with events and requeue.

mod detached;
mod driver;
mod plan;
mod record;
mod settle;
mod settlement;
mod situation;
mod table;
mod write;

pub use detached::Detached;
pub use driver::{
    Configuration, Decided, Driver, Gathered, Inputs, NotReady, OwnedInputs, Port, ReconcileError,
    Reconciled, StatusWrite, ready,
};
pub use plan::{AwaitingOutcome, PendingWrite, Plan, plan};
pub use record::WriteRecord;
pub use settlement::{Requeue, Settlement, StatusPatch};
pub use write::{DeploymentWrite, WriteKind};
