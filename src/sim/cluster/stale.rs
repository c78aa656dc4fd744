//! Reads from an older revision: the simulated API server answers the controller's reads
//! as a lagging watch cache, or a second API server whose cache is behind, would, while
//! its writes go to the current objects and are checked there.
//!
//! A test marks a revision ([`Cluster::snapshot`]: a copy of the objects the server serves,
//! kept under a name), lets the cluster move on, then makes the reads lag
//! ([`Cluster::stale_reads`]: every read of a reconcile, the Gateway, its class, the
//! GatewayConfiguration, the Deployment, the routes and the namespaces' labels, is
//! answered from that copy; or the reads of some kinds only, as per-kind caches lag apart)
//! until the view catches up ([`Cluster::catch_up_reads`]). The template is the
//! controller's own file, not an API object: it is always current.
//!
//! Nothing here bypasses the server's checks: a Deployment update carries the
//! `resourceVersion` it read and is refused 409 `Conflict` when the stored object is newer,
//! a create of a name that exists is 409 `AlreadyExists`, and a status patch whose
//! `resourceVersion` precondition is not the stored object's is refused 409 (the Gateway's
//! through the port, the GatewayClass's where the reconcile settles it).
//!
//! History is kept only while needed: a copy per named snapshot, from the step that takes
//! it until the stale reads that use it end; none otherwise.

use super::{Cluster, ClusterError, Kind, Namespaces};
use crate::wire::{Deployment, L34Route, tree};

/// The objects the API server serves reads from, as of one revision.
#[derive(Debug, Clone)]
struct Revision {
    gateway_class: Option<tree::Value>,
    gateway: tree::Value,
    configuration: Option<tree::Value>,
    deployment: Option<Deployment>,
    routes: Vec<L34Route>,
    namespaces: Namespaces,
}

/// The revisions a [`Cluster`] keeps for lagging reads: none by default.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lag {
    /// Revisions remembered by name, until stale reads start from them.
    snapshots: Vec<(String, Revision)>,
    /// The revision reads are answered from, while the view lags, and the kinds that lag
    /// (`None`: all of them).
    reads: Option<(Revision, Option<Vec<Kind>>)>,
}

/// What the controller's reads see: the current objects, or those of the revision the
/// view lags at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads<'a> {
    pub(crate) gateway_class: Option<&'a tree::Value>,
    pub(crate) gateway: &'a tree::Value,
    pub(crate) configuration: Option<&'a tree::Value>,
    pub(crate) deployment: Option<&'a Deployment>,
    pub(crate) routes: &'a [L34Route],
    pub(crate) namespaces: &'a Namespaces,
}

impl Cluster {
    /// What the controller's reads are answered from.
    pub(crate) fn reads(&self) -> Reads<'_> {
        let current = Reads {
            gateway_class: self.gateway_class.as_ref(),
            gateway: &self.gateway,
            configuration: self.configuration.as_ref(),
            deployment: self.deployment.as_ref(),
            routes: &self.routes,
            namespaces: &self.namespaces,
        };
        let Some((r, kinds)) = &self.lag.reads else {
            return current;
        };
        let lags = |kind: Kind| kinds.as_ref().is_none_or(|kinds| kinds.contains(&kind));
        Reads {
            gateway_class: match lags(Kind::GatewayClass) {
                true => r.gateway_class.as_ref(),
                false => current.gateway_class,
            },
            gateway: match lags(Kind::Gateway) {
                true => &r.gateway,
                false => current.gateway,
            },
            configuration: match lags(Kind::Configuration) {
                true => r.configuration.as_ref(),
                false => current.configuration,
            },
            deployment: match lags(Kind::Deployment) {
                true => r.deployment.as_ref(),
                false => current.deployment,
            },
            // The namespaces' labels are read for the routes: they lag with them.
            routes: match lags(Kind::Routes) {
                true => &r.routes,
                false => current.routes,
            },
            namespaces: match lags(Kind::Routes) {
                true => &r.namespaces,
                false => current.namespaces,
            },
        }
    }

    /// Remembers the objects the API server serves now (the template aside: it is the
    /// controller's file) under `name`, for [`Cluster::stale_reads`]; a snapshot of the same
    /// name not yet used is replaced. The copy is kept until stale reads start from it.
    pub fn snapshot(&mut self, name: &str) {
        let revision = Revision {
            gateway_class: self.gateway_class.clone(),
            gateway: self.gateway.clone(),
            configuration: self.configuration.clone(),
            deployment: self.deployment.clone(),
            routes: self.routes.clone(),
            namespaces: self.namespaces.clone(),
        };
        self.lag.snapshots.retain(|(taken, _)| taken != name);
        self.lag.snapshots.push((name.to_owned(), revision));
    }

    /// From now on the controller's reads are answered from the snapshot `name` (used up:
    /// it is moved, not copied), as a watch cache that lags at that revision answers them;
    /// writes still go to the current objects. `kinds` (`None`: all) are the kinds whose
    /// reads lag, as a controller's per-kind caches (one watch each) lag apart; the
    /// namespaces' labels lag with [`Kind::Routes`]; the template never does. Replaces a
    /// lagging view already in place. [`ClusterError::NoSnapshot`] when no snapshot of
    /// that name is held.
    pub fn stale_reads(&mut self, name: &str, kinds: Option<&[Kind]>) -> Result<(), ClusterError> {
        let at = self
            .lag
            .snapshots
            .iter()
            .position(|(taken, _)| taken == name)
            .ok_or_else(|| ClusterError::NoSnapshot(name.to_owned()))?;
        let (_, revision) = self.lag.snapshots.remove(at);
        self.lag.reads = Some((revision, kinds.map(<[Kind]>::to_vec)));
        Ok(())
    }

    /// The view catches up: reads are answered from the current objects again, and the
    /// lagging revision is dropped.
    pub fn catch_up_reads(&mut self) {
        self.lag.reads = None;
    }

    /// Whether the controller's reads lag ([`Cluster::stale_reads`]).
    pub fn reads_lag(&self) -> bool {
        self.lag.reads.is_some()
    }
}

#[cfg(test)]
mod tests;
