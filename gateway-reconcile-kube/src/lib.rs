//! The kube-rs half of `gateway-reconcile`: a production Gateway controller.
//!
//! The core crate (`gateway_reconcile`) decides; this crate does the I/O with the API
//! server, once and tested on a real one:
//!
//! - [`controller`]: watches and caches (a reconcile reads nothing from the API server),
//!   the reconcile, the status write with a `resourceVersion` precondition, Events, and the
//!   client it is meant for ([`controller::client`], a short retry budget);
//! - [`write`](mod@write): the LB Deployment write (POST to create, PUT to update) and its answer as
//!   the core's `WriteOutcome`, with why these verbs;
//! - `requeue`: the core's requeue hint as kube-runtime's `Action`;
//! - `class_status`: the GatewayClass's own `Accepted`, which the core decides and this
//!   writes to `gatewayclasses/status`;
//! - [`events`]: the core's Events as kube-runtime Events;
//! - [`cached`]: what the watch caches hold: the core's own wire types, read once per
//!   watch event, an object they cannot read cached (and reported) alone;
//! - [`options`]: loading the settings and template files of the binary;
//! - operations: [`leader`] (leader election on a Lease, the write gate), [`health`] (the
//!   caches' readiness), [`metrics`], `backoff` (per-Gateway retries), `transport`
//!   (the client's rate limit, write gate and request metrics), [`serve`] (the probe and
//!   metrics endpoints).
//!
//! The binary `gateway-reconcile-controller` runs [`controller::run`]; the crate README
//! says how to run it against a cluster and which RBAC it needs (`deploy/`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod backoff;
pub mod cached;
mod class_status;
pub mod controller;
pub mod events;
pub mod fresh;
pub mod health;
pub mod leader;
pub mod metrics;
pub mod options;
mod reflect;
mod requeue;
pub mod serve;
mod transport;
mod watch;
pub mod write;
