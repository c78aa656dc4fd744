//! The whole decision logic of a Gateway API controller that runs one load-balancer (LB)
//! Deployment per Gateway, modelled on the Meridio-2 gateway controller
//! (API group `meridio-2.nordix.org`).
//!
//! The crate is pure: no Kubernetes client, no I/O, no clock, no randomness. A controller
//! hands it snapshots of the objects it watches and the time; it answers with the Deployment
//! to create or update (or to leave alone, with the fields that drifted), the Gateway status
//! to write (or nothing), and when to look again.
//!
//! # The pipeline
//!
//! [`wire`] (Kubernetes objects) → [`validate`] → [`render`] → [`drift`] →
//! [`conditions`] → [`reconcile`] ([`plan`], then [`Plan::settle`]). Beside it, [`sim`] is a
//! simulated API server and scenario runner that drives the same pipeline as a cluster would.
//!
//! # The four conditions
//!
//! | type | says | reasons |
//! |---|---|---|
//! | `Accepted` | the Gateway is ours and its parameters are valid | `Accepted`, `InvalidParameters`, `Pending` (handed to another controller) |
//! | `Programmed` | the LB Deployment exists and serves | `Programmed`, `Pending`, `Invalid` |
//! | `D/ConfigurationApplied` | the Deployment carries the current GatewayConfiguration generation | `Applied`, `Pending`, `ApplyFailed`, `ApplyRejected`, `InvalidParameters` |
//! | `D/Degraded` | serving, but not as desired, and it will not fix itself soon; present only while True | `ApplyFailing`, `ApplyRejected`, `RolloutStalled` |
//!
//! `D` is [`Settings::condition_domain`] (`meridio-2.nordix.org`).
//!
//! # Generation currency
//!
//! Editing only a GatewayConfiguration does not bump the Gateway's `metadata.generation`, so
//! the Gateway's `observedGeneration` cannot tell whether the edit reached the LB. The crate
//! writes the GatewayConfiguration's generation into the Deployment annotation
//! `D/gatewayconfiguration-generation` and reads it back on every reconcile: the
//! `Programmed` message names the generation the running Deployment carries
//! (`LB Deployment reconciled with GatewayConfiguration generation 7; generation 8 not
//! applied yet`), and `ConfigurationApplied` is True only when it is the current one. The
//! annotation lives on the Deployment, which the controller owns, never on the Gateway, which
//! its users own; so a restarted controller reads the same truth.
//!
//! A transient write failure never turns `Programmed` False: the old Deployment still serves.
//! `ConfigurationApplied` turns False at once, and `Degraded=True/ApplyFailing` appears when
//! it has been False for [`Settings::degraded_after`] (measured from its
//! `lastTransitionTime`, so the answer does not depend on process memory). A rejected update
//! is `Degraded=True/ApplyRejected` at once; a rollout past its progress deadline is
//! `Degraded=True/RolloutStalled`.
//!
//! # Events and requeue
//!
//! [`Settlement::events`] lists the Kubernetes Events to record, one per condition transition
//! and none on a retry that changes nothing (see [`events`]). [`Settlement::requeue`] says
//! when to look again: at once after a conflict, a vanished Deployment or a stale snapshot;
//! after a backoff (the time `ConfigurationApplied` has been False, clamped to 1 s–5 min, and
//! never past the moment `Degraded` becomes due) after a transient failure; otherwise only on
//! the next event, or after [`Settings::resync`].
//!
//! # Choices where the contract is silent
//!
//! - A write the plan asked for with no outcome reported counts as a transport failure.
//! - A 404 on create (the namespace is going away) backs off like a transient failure.
//! - `Programmed` names generation `unknown` when the Deployment has no readable generation
//!   annotation.
//! - `Degraded` keeps its status, reason and message across a conflicting retry, and records
//!   the current Gateway generation.
//! - Two more validation failures than the contract lists, for input the real CRD refuses:
//!   a container named twice in `verticalScaling`, and a request or limit that is not a
//!   quantity.
//! - Quantities finer than a nano are held rounded up to a nano, as the API server stores
//!   them, so they are not drift.
//! - Scenario files and the command line (the `sim` module and the binary, not the
//!   library's decisions): a UTF-8 byte-order mark is refused, not skipped; times must use
//!   an upper-case `T` and `Z` and have seconds (Kubernetes writes them so); the supported
//!   time range is jiff's (years -9999 to 9999); `failWrites.error` may be a whole
//!   Kubernetes `Status` object, as `plan --outcome` may; each input is capped at 64 MiB
//!   unless `--max-input-bytes` says otherwise, and `-` (standard input) may stand for one
//!   input only.
//!
//! # Cargo features
//!
//! Off by default: `yaml` (YAML input for the `gateway-reconcile` command line only),
//! `k8s-openapi` (conversions with k8s-openapi 0.28's `Deployment` and
//! `Condition`) and `gateway-api` (conversions from gateway-api 0.22's `Gateway` and
//! `GatewayClass`, and condition lists back). The library enables no Kubernetes version of
//! k8s-openapi; the final binary does.
//!
//! # Example
//!
//! See [`reconcile`] for a whole reconcile loop, and `examples/controller.rs` for a kube-rs
//! controller.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod addresses;
pub mod cidr;
pub mod conditions;
pub mod drift;
mod error;
pub mod events;
#[cfg(any(feature = "k8s-openapi", feature = "gateway-api"))]
pub mod interop;
mod json;
pub mod nad;
pub mod outcome;
pub mod quantity;
pub mod reconcile;
pub mod render;
pub mod rollout;
mod settings;
pub mod sim;
mod snapshot;
pub mod template;
pub mod validate;
pub mod wire;

pub use error::InputError;
pub use outcome::{ApiError, FailureClass, WriteOutcome};
pub use reconcile::{Action, ActionKind, Plan, Requeue, Settlement, plan};
pub use settings::{Label, Settings, format_duration, parse_duration};
pub use snapshot::Snapshot;
