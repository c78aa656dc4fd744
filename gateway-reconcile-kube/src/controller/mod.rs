//! The controller: watches and caches, the reconcile of one Gateway, and the run loop.
//!
//! # Reads
//!
//! One watch per resource feeds both a cache and the controller's triggers: Gateways (the
//! controller's own cache), GatewayClasses, GatewayConfigurations, L34Routes, the LB
//! Deployments (a watch selected by the managed-by label, whole objects) and every
//! Deployment of the scope by its metadata alone (a metadata-only watch). A reconcile reads
//! only these caches: a steady-state reconcile makes no API request at all. The first
//! reconciles wait until every cache has its initial list (one shared future, see
//! `stores::Stores::ready`), and a list reaches the triggers only once it is in the cache
//! (see `watches::once_cached`). Every cache but the metadata one holds the core's own wire
//! types, read once per watch event ([`crate::cached`]): a reconcile borrows them and converts none, and an
//! object the core's type cannot read is cached alone as unreadable (reported, and an
//! input error of the Gateways that use it) instead of failing the list of its kind.
//!
//! Each cache is written by the crate-private `reflect` module: a relist is applied in
//! place (no second whole copy of the kind), and reconciles wait while one runs. The watches list with
//! paged LISTs, or with streaming lists (`watch` with `sendInitialEvents=true`) when
//! [`Config::streaming_lists`] is set.
//!
//! Triggers, besides a Gateway's own changes:
//!
//! Whom a change wakes is the core's decision (`gateway_reconcile::wake`); the triggers
//! keep the watch wiring, the indexes and the last state the watcher does not hand over:
//!
//! - a GatewayClass: the Gateways of that class;
//! - a GatewayConfiguration: the Gateways whose `parametersRef` names it, and those of the
//!   classes that name it as their default;
//! - a Namespace whose labels changed: the Gateways its routes name, of those that admit
//!   routes by a namespace label selector;
//! - an L34Route: the Gateways its old and its new `parentRefs` name (an edit that moves a
//!   route wakes the Gateway it left, which loses an address);
//! - a Deployment: its controller Gateway, and the Gateway whose LB Deployment name it has.
//!   The second wakes a Gateway stuck on a name collision when the foreign Deployment
//!   changes or goes away: the metadata watch sees every Deployment of the scope (the
//!   label-selected one would hide the colliding ones); it wakes nobody for a Deployment
//!   that carries our managed-by label, which the LB watch reports already.
//!
//! # The LB Deployment of a Gateway
//!
//! The LB Deployments are cached whole as the core's `wire::Deployment` (every field kept,
//! so the update, a replace of the observed object, loses no field newer than k8s-openapi),
//! without `managedFields` (never written back, and the largest part of most objects).
//! Every other Deployment is held by its metadata only: the controller never caches a
//! foreign pod template. A reconcile looks the Gateway's LB name up in the LB cache, then
//! in the metadata cache (`stores::Stores::lb_deployment`):
//!
//! - in the LB cache: that object, whole;
//! - in neither: none (a create);
//! - only in the metadata cache, carrying our managed-by label: the LB watch has not
//!   delivered it yet (or the metadata watch has not yet seen the label go): the reconcile
//!   waits for the watches to agree, as for an own write;
//! - only in the metadata cache, without the label, and its controller ownerReference is
//!   this Gateway (same uid): our own Deployment whose label someone removed. The core
//!   compares and replaces it whole, so that one object is read with a GET for this
//!   reconcile; the replace restores the label, and the LB watch has it again;
//! - only in the metadata cache, not ours: a name collision, which the core reports from
//!   the metadata alone (its ownerReferences: [`cached::deployment_of_meta`](crate::cached::deployment_of_meta)).
//!
//! The metadata watch covers the LB Deployments too (their name, version and label alone), so a
//! Deployment that moves between the two watches (its label removed or restored) is never
//! absent from both: a moment of absence would plan a create.
//!
//! # Operations
//!
//! [`run_with`] adds what an operator runs the controller with: leader election (a standby
//! keeps warm caches and reconciles nothing; see [`crate::leader`]), the caches' readiness
//! and their sync timeout ([`crate::health`]), [`crate::metrics`], and the per-Gateway
//! backoff (`backoff`) that every "at once" requeue and every failed reconcile
//! goes through: the core's "at once" (read from its requeue, which the reconcile keeps
//! next to kube-runtime's `Action`) is never run at round-trip speed.
//!
//! # Writes
//!
//! See [`crate::write`](mod@crate::write) for the Deployment verbs. The Gateway status is a JSON merge patch
//! on `gateways/status` carrying the cached Gateway's `resourceVersion`: a Gateway changed
//! since (say, another client added its own condition) answers 409, and the reconcile runs
//! again at once with the newer object, so the foreign condition is kept. Events are
//! recorded only after the status write succeeded (or when there was none to make).
//!
//! A write's own watch event (its *echo*: the version the write gave) triggers no
//! reconcile: the reconcile that wrote settled with the object the server answered, and the
//! core checks that a reconcile right after writes that succeeded writes nothing (its
//! explorer's `echo-idle`). A reconcile that found the cache behind its own write waits for
//! the echo, which then does trigger it. An event of an object while a write to it is in
//! flight waits for the write's answer (the echo can be read before it): the echo is then
//! dropped, any other version reconciles the Gateway again at once (`own_writes`).
//!
//! # Files
//!
//! - `run`: [`run`](fn@run) and [`run_with`], step by step;
//! - `context`: [`Config`], and what every reconcile shares;
//! - `watches`: the watch streams, each filling a cache; `stores`: the caches, their
//!   readiness and the lookups a reconcile reads; `indexes`: the lookups by computed keys;
//! - `triggers`: whom a change wakes (the wiring around `gateway_reconcile::wake`);
//! - `reconciler`: the reconcile kube-runtime runs, its [`Error`] and error policy; `port`:
//!   the core's port over the caches and the client; `own_writes`: the writes the caches
//!   have not seen yet, and their echoes;
//! - `observed`: what the metrics read at scrape time; `client`: the client the controller
//!   is meant for.

mod client;
mod context;
#[cfg(test)]
mod fixtures;
mod indexes;
mod observed;
mod own_writes;
mod port;
mod reconciler;
mod run;
mod stores;
mod triggers;
mod watches;

pub use client::{
    CLIENT_RETRIES, CLIENT_RETRY_DELAY, ClientOptions, DEFAULT_BURST, DEFAULT_QPS, client,
    client_with,
};
pub use context::Config;
pub use reconciler::Error;
pub use run::{DEFAULT_CACHE_SYNC_TIMEOUT, Operations, RunError, run, run_with};
