//! Fault injection on the store's API server: what a test makes the next requests get.
//!
//! Failed requests, per request ([`Store::fail_next`]: the next N requests of one
//! [`Verb`](crate::sim::cluster::Verb) on one object, controller-runtime's interceptor
//! functions) or blanket on Deployment writes ([`Store::fail_writes`], of one Gateway with
//! [`Store::fail_writes_of`]), the failures still pending, and mutating admission
//! ([`Store::mutate_writes`]). The server holds them and the [`StorePort`](super::StorePort)
//! meets them on its requests; this file is the test's side.

use serde_json::Value;

use super::Store;
use crate::outcome::WriteOutcome;
use crate::sim::cluster::Request;

impl Store {
    /// Makes the next `count` Deployment writes (create or update, of any Gateway) fail
    /// with `outcome`, replacing those still pending (`count` 0 clears them); an
    /// `Applied` outcome lets them through. For one verb on one object, [`fail_next`].
    ///
    /// [`fail_next`]: Store::fail_next
    pub fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.server.fail_writes(count, outcome);
    }

    /// Makes the next `count` Deployment writes (create or update) of the Gateway
    /// `namespace/name`'s LB Deployment fail with `outcome`, replacing the blanket failures
    /// still pending ([`Store::fail_writes`], scoped to one Gateway).
    pub fn fail_writes_of(
        &mut self,
        namespace: &str,
        name: &str,
        count: u32,
        outcome: WriteOutcome,
    ) {
        let at = self.deployment_key(namespace, name);
        self.server.fail_writes_of(Some(at), count, outcome);
    }

    /// Per-request fault injection (controller-runtime's interceptor functions): the next
    /// `count` requests matching `request` (one verb on one object) get `outcome`, then
    /// they go through again; other requests are not touched. Replaces the failures still
    /// pending for that request (`count` 0 clears them).
    ///
    /// A failed Deployment create or update is the driver's write outcome. A failed status
    /// patch is a conflict (a 409 `Conflict` outcome: the driver looks again at once) or the
    /// port's error ([`ClusterError::Refused`]), as is a failed read (of the Gateway, its
    /// class, its configuration, its Deployment, or the routes offered for it: a
    /// [`Kind::Routes`] request keyed by the Gateway; the template and the namespaces'
    /// labels are always read). The GatewayClass's own status write is not a request that
    /// fails.
    ///
    /// [`ClusterError::Refused`]: crate::sim::cluster::ClusterError::Refused
    /// [`Kind::Routes`]: crate::sim::cluster::Kind::Routes
    ///
    /// ```
    /// use gateway_reconcile::reconcile::{Driver, ready};
    /// use gateway_reconcile::testing::{Request, strategies::{self, WriteFailure}};
    ///
    /// let mut store = strategies::store().unwrap();
    /// store.fail_next(Request::create("ns", "sllbr-gw"), 2, WriteFailure::Unavailable.outcome());
    /// let driver = Driver::new(store.settings().clone());
    /// let now = store.now();
    /// let mut outcomes = Vec::new();
    /// for _ in 0..3 {
    ///     let reconciled = ready(driver.reconcile(&mut store.port("ns", "gw").unwrap(), now));
    ///     let outcome = reconciled.unwrap().unwrap().decided.unwrap().outcome.unwrap();
    ///     outcomes.push(outcome.class().is_some());
    /// }
    /// assert_eq!(outcomes, [true, true, false]);
    /// ```
    pub fn fail_next(&mut self, request: Request, count: u32, outcome: WriteOutcome) {
        self.server.fail_next(request, count, outcome);
    }

    /// The injected failures still pending for `request`.
    pub fn pending(&self, request: &Request) -> u32 {
        self.server.pending(request)
    }

    /// Clears every injected failure, blanket and per request.
    pub fn clear_failures(&mut self) {
        self.server.clear_failures();
    }

    /// Mutating admission applies this RFC 7386 merge patch to every Deployment write from
    /// now on (`None` stops it), as
    /// [`Cluster::mutate_writes`](crate::sim::cluster::Cluster::mutate_writes).
    pub fn mutate_writes(&mut self, patch: Option<Value>) {
        self.server.mutate_writes(patch);
    }
}
