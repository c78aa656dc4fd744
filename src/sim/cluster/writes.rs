//! What a write does on the simulated server: Deployment creates and updates (bookkeeping,
//! the `resourceVersion` precondition, defaulting, refusals and injected failures), merge
//! patches, deletes and Gateway status writes.

use serde_json::{Map, Value, json};

use super::store::{check, default_status, deployment_metadata, metadata, typed};
use super::{Cluster, ClusterError, Kind, format_time};
use crate::outcome::WriteOutcome;
use crate::sim::{api_validation, merge_patch};
use crate::wire::{Deployment, tree};

impl Cluster {
    /// Makes the next `count` Deployment writes (create or update) fail with `outcome`,
    /// replacing any failures still pending (`count` 0 clears them). An `Applied` outcome
    /// lets the writes through.
    pub fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.failures = count;
        self.failure = Some(outcome);
    }

    /// Makes mutating admission apply this RFC 7386 merge patch to every Deployment write
    /// (create or update) from now on; `None` stops it. The patch applies to the object the
    /// controller sent, before validation and defaulting, as a webhook's does.
    pub fn mutate_writes(&mut self, patch: Option<Value>) {
        self.mutation = patch;
    }

    /// The merge patch mutating admission applies to Deployment writes, if any.
    pub fn write_mutation(&self) -> Option<&Value> {
        self.mutation.as_ref()
    }

    /// Mutating admission: the object as the admission chain leaves it.
    fn admit(&self, mut object: Deployment) -> Deployment {
        if let Some(patch) = &self.mutation {
            merge_patch::apply_to_object(&mut object.object, patch);
        }
        object
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
            Kind::Template => merge_patch::apply_to_object(&mut self.template.object, patch),
            Kind::Deployment => {
                let before = self.deployment.take();
                let mut after = before.clone().unwrap_or_default();
                merge_patch::apply_to_object(&mut after.object, patch);
                let mut after = self.defaulted(after);
                match &before {
                    None => self.fill_deployment_bookkeeping(&mut after),
                    Some(before) => self.update_deployment_bookkeeping(before, &mut after),
                }
                self.deployment = Some(after);
            }
            // A merge patch that is a list replaces the list; one that is not cannot apply.
            Kind::Routes => self.routes = typed(kind, patch)?,
            Kind::Gateway | Kind::GatewayClass | Kind::Configuration => {
                let mut after = self.stored(kind).cloned().unwrap_or_else(|| json!({}));
                merge_patch::apply(&mut after, patch);
                check(kind, Some(&after))?;
                // Nothing fails from here: the stored object is taken out, not copied, for
                // the bookkeeping, and replaced.
                match self.take(kind) {
                    None => {
                        self.fill_bookkeeping(&mut after);
                        default_status(kind, &mut after);
                    }
                    Some(before) => {
                        let empty = Map::new();
                        let before = before.as_object().unwrap_or(&empty);
                        self.update_bookkeeping(before, &mut after);
                    }
                }
                self.set(kind, after);
            }
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
        let mut after = self.stored(kind).cloned().unwrap_or_else(|| json!({}));
        merge_patch::apply(&mut after, patch);
        if !after.is_object() {
            return Err(ClusterError::Malformed {
                kind,
                why: "must be a JSON object".into(),
            });
        }
        match self.take(kind) {
            None => self.fill_bookkeeping(&mut after),
            Some(before) => {
                let empty = Map::new();
                let before = before.as_object().unwrap_or(&empty);
                self.update_bookkeeping(before, &mut after);
            }
        }
        self.set(kind, after);
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

    pub(super) fn take_failure(&mut self) -> Option<WriteOutcome> {
        if self.failures == 0 {
            return None;
        }
        self.failures -= 1;
        self.failure
            .clone()
            .filter(|f| !matches!(f, WriteOutcome::Applied))
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
        if let Some(failure) = self.take_failure() {
            return failure;
        }
        let desired = self.admit(desired);
        if let Some(refused) = api_validation::refusal(&desired) {
            return refused;
        }
        if stored.is_some() {
            return WriteOutcome::from_parts(
                Some(409),
                "AlreadyExists",
                &format!(
                    "deployments.apps {:?} already exists",
                    desired.name().unwrap_or("")
                ),
            );
        }
        let mut object = desired;
        // The server ignores a status sent with a create.
        object.object.remove("status");
        let meta = deployment_metadata(&mut object);
        for key in ["uid", "resourceVersion", "generation", "creationTimestamp"] {
            meta.remove(key);
        }
        let mut object = self.defaulted(object);
        self.fill_deployment_bookkeeping(&mut object);
        self.deployment = Some(object);
        self.applied_deployment_writes += 1;
        WriteOutcome::Applied
    }

    /// Updates the Deployment; `stored` as for [`Cluster::create_deployment_over`] (read in
    /// place, not copied: it can be large).
    pub(super) fn update_deployment_over(
        &mut self,
        desired: Deployment,
        stored: Option<&Deployment>,
    ) -> WriteOutcome {
        self.deployment_writes += 1;
        if let Some(failure) = self.take_failure() {
            return failure;
        }
        let name = desired.name().unwrap_or("").to_owned();
        let Some(stored) = stored else {
            return WriteOutcome::from_parts(
                Some(404),
                "NotFound",
                &format!("deployments.apps {name:?} not found"),
            );
        };
        fn rv(d: &Deployment) -> Option<&str> {
            d.get(&["metadata", "resourceVersion"])
                .and_then(tree::Value::as_str)
        }
        if rv(&desired) != rv(stored) {
            return WriteOutcome::from_parts(
                Some(409),
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on deployments.apps {name:?}: the object has \
                     been modified; please apply your changes to the latest version and try again"
                ),
            );
        }
        // Admission and validation come after the resourceVersion precondition, as in the
        // real server.
        let desired = self.admit(desired);
        if let Some(refused) = api_validation::refusal(&desired) {
            return refused;
        }
        let mut object = desired;
        // An update of the main resource never changes status.
        match stored.get(&["status"]) {
            Some(status) => object.object.insert("status", status.clone()),
            None => object.object.remove("status"),
        };
        let meta = deployment_metadata(&mut object);
        for key in ["uid", "creationTimestamp"] {
            match stored.get(&["metadata", key]) {
                Some(v) => meta.insert(key, v.clone()),
                None => meta.remove(key),
            };
        }
        let mut object = self.defaulted(object);
        self.update_deployment_bookkeeping(stored, &mut object);
        self.deployment = Some(object);
        self.applied_deployment_writes += 1;
        WriteOutcome::Applied
    }

    /// The Deployment as the server stores it: defaulted, with no spare room left by the
    /// fields defaulting added (it is kept until the next write).
    pub(super) fn defaulted(&self, mut deployment: Deployment) -> Deployment {
        (self.server_defaults)(&mut deployment);
        deployment.object.shrink_to_fit();
        deployment
    }

    pub(super) fn next_revision(&mut self) -> String {
        self.revision += 1;
        self.revision.to_string()
    }

    /// What a created object gets: a uid, a resourceVersion and a creation time.
    fn creation_stamps(&mut self) -> [(&'static str, String); 3] {
        self.uids += 1;
        let uid = format!("00000000-0000-4000-8000-{:012x}", self.uids);
        let rv = self.next_revision();
        [
            ("uid", uid),
            ("resourceVersion", rv),
            ("creationTimestamp", format_time(self.now)),
        ]
    }

    /// Creation bookkeeping: fills what a created object always has.
    pub(super) fn fill_bookkeeping(&mut self, object: &mut Value) {
        let stamps = self.creation_stamps();
        if let Some(meta) = metadata(object) {
            for (key, value) in stamps {
                meta.entry(key).or_insert(Value::String(value));
            }
            meta.entry("generation").or_insert(json!(1));
        }
    }

    /// [`Cluster::fill_bookkeeping`] for a Deployment.
    pub(super) fn fill_deployment_bookkeeping(&mut self, deployment: &mut Deployment) {
        let stamps = self.creation_stamps();
        let meta = deployment_metadata(deployment);
        for (key, value) in stamps {
            meta.entry(key).or_insert(tree::Value::from(value));
        }
        meta.entry("generation").or_insert(tree::Value::from(1));
    }

    /// Update bookkeeping: new resourceVersion; generation bumped when spec changed;
    /// identity fields the client cannot change.
    pub(super) fn update_bookkeeping(&mut self, before: &Map<String, Value>, after: &mut Value) {
        let generation = before
            .get("metadata")
            .and_then(|m| m.get("generation"))
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let changed = before.get("spec") != after.get("spec");
        let rv = self.next_revision();
        if let Some(meta) = metadata(after) {
            meta.insert(
                "generation".into(),
                json!(generation.saturating_add(i64::from(changed))),
            );
            meta.insert("resourceVersion".into(), Value::String(rv));
            for key in ["uid", "creationTimestamp"] {
                if let Some(v) = before.get("metadata").and_then(|m| m.get(key)) {
                    meta.insert(key.into(), v.clone());
                }
            }
        }
    }

    /// [`Cluster::update_bookkeeping`] for a Deployment: as the real API server, its
    /// generation also moves with its annotations (apps/v1 PrepareForUpdate).
    pub(super) fn update_deployment_bookkeeping(
        &mut self,
        before: &Deployment,
        after: &mut Deployment,
    ) {
        let generation = before.generation().unwrap_or(1);
        let changed = before.get(&["spec"]) != after.get(&["spec"])
            || before.get(&["metadata", "annotations"]) != after.get(&["metadata", "annotations"]);
        let rv = self.next_revision();
        let meta = deployment_metadata(after);
        meta.insert(
            "generation",
            tree::Value::from(generation.saturating_add(i64::from(changed))),
        );
        meta.insert("resourceVersion", tree::Value::from(rv));
        for key in ["uid", "creationTimestamp"] {
            if let Some(v) = before.get(&["metadata", key]) {
                meta.insert(key, v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests;
