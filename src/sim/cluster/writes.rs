//! What a write does to the objects one [`Cluster`] holds: Deployment creates and updates,
//! merge patches, deletes. The server's semantics of each (bookkeeping, the
//! `resourceVersion` precondition, defaulting, refusals and injected failures) are its
//! [`Server`](super::server::Server)'s; this file says which slot each write reads and
//! fills.

use serde_json::Value;

use super::store::{check, default_status, typed};
use super::{Cluster, ClusterError, Kind};
use crate::outcome::WriteOutcome;
use crate::sim::merge_patch;
use crate::wire::{Deployment, tree};

impl Cluster {
    /// Makes the next `count` Deployment writes (create or update) fail with `outcome`,
    /// replacing any failures still pending (`count` 0 clears them). An `Applied` outcome
    /// lets the writes through.
    pub fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.server.fail_writes(count, outcome);
    }

    /// Makes mutating admission apply this RFC 7386 merge patch to every Deployment write
    /// (create or update) from now on; `None` stops it. The patch applies to the object the
    /// controller sent, before validation and defaulting, as a webhook's does.
    pub fn mutate_writes(&mut self, patch: Option<Value>) {
        self.server.mutate_writes(patch);
    }

    /// The merge patch mutating admission applies to Deployment writes, if any.
    pub fn write_mutation(&self) -> Option<&Value> {
        self.server.write_mutation()
    }

    /// Deployment writes still set to fail.
    pub fn pending_failures(&self) -> u32 {
        self.server.pending_failures()
    }

    /// Applies an RFC 7386 merge patch to one object, with the server's bookkeeping:
    /// `resourceVersion` set, `generation` bumped when `spec` changed, Deployment
    /// defaulted. Patching an absent object creates it. The object is left unchanged when
    /// the result does not have the shape of its kind.
    pub fn patch(&mut self, kind: Kind, patch: &Value) -> Result<(), ClusterError> {
        // A merge patch that is not an object replaces the object whole with what is not
        // one: a Deployment-shaped object cannot take it.
        if matches!(kind, Kind::Template | Kind::Deployment) && !patch.is_object() {
            return Err(ClusterError::Malformed {
                kind,
                why: "must be a JSON object".into(),
            });
        }
        match kind {
            // Patched in place: an object patch leaves an object.
            Kind::Template => merge_patch::apply_to_object(
                &mut std::sync::Arc::make_mut(&mut self.template).object,
                patch,
            ),
            Kind::Deployment => {
                let before = self.deployment.take();
                let after = self.server.patched_deployment(before.as_ref(), patch);
                self.deployment = Some(after);
            }
            // A merge patch that is a list replaces the list; one that is not cannot apply.
            Kind::Routes => self.routes = typed(kind, patch)?,
            Kind::Gateway | Kind::GatewayClass | Kind::Configuration => {
                self.patch_json(kind, patch, true)?;
            }
        }
        Ok(())
    }

    /// A merge patch of a JSON object (`checked`: the result must read as its kind); the
    /// stored one is lent to the server, not copied, and stays when the result is refused.
    fn patch_json(&mut self, kind: Kind, patch: &Value, checked: bool) -> Result<(), ClusterError> {
        // Only the configuration is ever stored unchecked; any other stored object reads
        // as its kind, so a patch on it is checked, and applied, at the patch's own size.
        let readable = kind != Kind::Configuration || !self.configuration_unchecked;
        let before = self.take(kind);
        let patched = match before {
            Some(mut object) => {
                let patched =
                    self.server
                        .patch_in_place(kind, &mut object, patch, checked, readable);
                // Unchanged when refused.
                self.set(kind, object);
                patched
            }
            None => self
                .server
                .patched(kind, None, patch, checked)
                .map(|after| self.set(kind, after)),
        };
        patched?;
        if kind == Kind::Configuration {
            self.configuration_unchecked = !checked;
        }
        Ok(())
    }

    /// Applies an RFC 7386 merge patch to the GatewayConfiguration without the type check,
    /// with the bookkeeping of [`Cluster::patch`]: as a server whose CRD admits more
    /// (another version, a hand-edited schema) stores it. The controller then reads the
    /// configuration as unreadable, with the reader's error, until a [`Cluster::patch`]
    /// makes it readable again. Patching an absent configuration creates it. Other kinds
    /// are refused ([`ClusterError::Unsupported`]).
    pub fn patch_unchecked(&mut self, kind: Kind, patch: &Value) -> Result<(), ClusterError> {
        if kind != Kind::Configuration {
            return Err(ClusterError::Unsupported {
                kind,
                operation: "store an unreadable",
            });
        }
        self.patch_json(kind, patch, false)
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
                self.server.mark_deleted(&mut self.gateway);
                Ok(())
            }
            Kind::GatewayClass | Kind::Configuration | Kind::Deployment => {
                let existed = match kind {
                    Kind::GatewayClass => self.gateway_class.take().is_some(),
                    Kind::Configuration => self.configuration.take().is_some(),
                    _ => self.deployment.take().is_some(),
                };
                match existed {
                    true => Ok(()),
                    false => Err(ClusterError::Missing {
                        kind,
                        operation: "delete",
                    }),
                }
            }
        }
    }

    /// Deletes the Gateway for good (its finalizers done) and creates `gateway` in its
    /// place, as the API server creates an object: `resourceVersion`, `generation` (1) and
    /// `creationTimestamp` are the server's, a given `status` is ignored (the CRD's default
    /// status is stored), the `uid` is kept as written (the caller gives the new object's).
    /// What the old Gateway owned stays: deleting it is the garbage collector's part.
    pub fn recreate_gateway(&mut self, mut gateway: tree::Value) -> Result<(), ClusterError> {
        check(Kind::Gateway, Some(&gateway))?;
        if let Some(object) = gateway.as_object_mut() {
            object.remove("status");
        }
        if let Some(meta) = gateway
            .get_mut("metadata")
            .and_then(tree::Value::as_object_mut)
        {
            for key in [
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "deletionTimestamp",
            ] {
                meta.remove(key);
            }
        }
        self.server.fill_bookkeeping(&mut gateway);
        default_status(Kind::Gateway, &mut gateway);
        self.gateway = gateway;
        Ok(())
    }

    /// A create, with the stored Deployment lent out (see [`Cluster::lending_deployment`]).
    pub(super) fn create_deployment(&mut self, desired: Deployment) -> WriteOutcome {
        self.lending_deployment(|c, stored| c.create_deployment_over(desired, stored))
    }

    /// An update, with the stored Deployment lent out.
    pub(super) fn update_deployment(&mut self, desired: Deployment) -> WriteOutcome {
        self.lending_deployment(|c, stored| c.update_deployment_over(desired, stored))
    }

    /// Runs a write with the stored Deployment taken out of its slot; the write's result
    /// replaces it, or it comes back.
    fn lending_deployment(
        &mut self,
        write: impl FnOnce(&mut Self, Option<&Deployment>) -> WriteOutcome,
    ) -> WriteOutcome {
        let stored = self.deployment.take();
        let outcome = write(self, stored.as_ref());
        if self.deployment.is_none() {
            self.deployment = stored;
        }
        outcome
    }

    /// Creates the Deployment; `stored` is the one the server holds, taken out of its slot
    /// by the caller (the slot is empty: a create that goes through fills it).
    pub(super) fn create_deployment_over(
        &mut self,
        desired: Deployment,
        stored: Option<&Deployment>,
    ) -> WriteOutcome {
        self.deployment_writes += 1;
        let written = self.server.create_deployment(desired, stored);
        self.stored_write(written)
    }

    /// Updates the Deployment; `stored` as for [`Cluster::create_deployment_over`] (read in
    /// place, not copied: it can be large).
    pub(super) fn update_deployment_over(
        &mut self,
        desired: Deployment,
        stored: Option<&Deployment>,
    ) -> WriteOutcome {
        self.deployment_writes += 1;
        let written = self.server.update_deployment(desired, stored);
        self.stored_write(written)
    }

    /// The server's answer to a Deployment write: what it stores fills the slot.
    fn stored_write(&mut self, written: Result<Deployment, WriteOutcome>) -> WriteOutcome {
        match written {
            Ok(object) => {
                self.deployment = Some(object);
                self.applied_deployment_writes += 1;
                WriteOutcome::Applied
            }
            Err(refused) => refused,
        }
    }

    pub(super) fn next_revision(&mut self) -> String {
        self.server.next_revision()
    }
}

#[cfg(test)]
mod tests;
