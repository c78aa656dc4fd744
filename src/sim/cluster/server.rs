//! The simulated API server apart from the objects it holds ([`Server`]): its clock, its
//! counters (resourceVersions, uids), the bookkeeping and the write semantics of each
//! request (Deployment creates and updates with their precondition, defaulting, admission
//! and refusals; merge patches; status writes; deletion marks), and the faults injected
//! into it, blanket ([`Server::fail_writes`]) or per request ([`Request`]).
//!
//! Each function takes the stored object and gives the object to store (or the answer of a
//! refused request): where the objects live is the holder's business. A [`Cluster`]
//! holds one Gateway's objects in slots; the kit's shared store holds every Gateway's in
//! maps; both ask the same server, so each fact of the server's behaviour is written once.
//!
//! [`Cluster`]: super::Cluster

use std::fmt;

use jiff::Timestamp;
use serde_json::Value;

use super::store::{
    check, default_status, deployment_metadata, merge_changes, metadata, without_nulls,
};
use super::{ClusterError, Kind, format_time};
use crate::outcome::WriteOutcome;
use crate::sim::{api_validation, merge_patch};
use crate::wire::{Deployment, tree};

/// The verb of a request to the simulated API server, as per-request fault injection names
/// it ([`Request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Verb {
    /// A read of one object (or of the routes offered for a Gateway).
    Get,
    /// A Deployment create (POST).
    Create,
    /// A Deployment update (PUT).
    Update,
    /// A Gateway status patch.
    PatchStatus,
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verb::Get => "get",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::PatchStatus => "patch the status of",
        })
    }
}

/// One kind of request to the simulated API server: a verb on the object of a kind and key
/// (a GatewayClass has no namespace: `""`; [`Kind::Routes`] is the routes offered for the
/// Gateway of that key). Fault injection fails the next requests that match it.
///
/// ```
/// use gateway_reconcile::sim::cluster::{Kind, Request, Verb};
///
/// let request = Request::update("ns", "sllbr-gw");
/// assert_eq!((request.verb, request.kind), (Verb::Update, Kind::Deployment));
/// assert_eq!(request.to_string(), "update deployment ns/sllbr-gw");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// The verb.
    pub verb: Verb,
    /// The kind of the object.
    pub kind: Kind,
    /// Its namespace (`""` for a GatewayClass).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Request {
    /// `verb` on the object of `kind` at `namespace/name`.
    pub fn new(verb: Verb, kind: Kind, namespace: &str, name: &str) -> Self {
        Request {
            verb,
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// A create of the Deployment `namespace/name`.
    pub fn create(namespace: &str, name: &str) -> Self {
        Request::new(Verb::Create, Kind::Deployment, namespace, name)
    }

    /// An update of the Deployment `namespace/name`.
    pub fn update(namespace: &str, name: &str) -> Self {
        Request::new(Verb::Update, Kind::Deployment, namespace, name)
    }

    /// A status patch of the Gateway `namespace/name`.
    pub fn patch_status(namespace: &str, name: &str) -> Self {
        Request::new(Verb::PatchStatus, Kind::Gateway, namespace, name)
    }

    /// A read of the object of `kind` at `namespace/name`.
    pub fn get(kind: Kind, namespace: &str, name: &str) -> Self {
        Request::new(Verb::Get, kind, namespace, name)
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ", self.verb, self.kind)?;
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        f.write_str(&self.name)
    }
}

/// Failures injected into one kind of request: the next `remaining` matching requests get
/// `outcome`.
#[derive(Debug, Clone, PartialEq)]
struct Fault {
    request: Request,
    remaining: u32,
    outcome: WriteOutcome,
}

/// The simulated API server's state apart from the objects: see the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) now: Timestamp,
    revision: u64,
    uids: u64,
    /// Blanket failures of Deployment writes ([`Server::fail_writes`]).
    failures: u32,
    failure: Option<WriteOutcome>,
    /// The Deployment (namespace, name) the blanket failures are for; `None`: any.
    scope: Option<(String, String)>,
    /// Per-request failures, in the order they were asked for (the test kit's; a scenario
    /// injects blanket failures only).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    faults: Vec<Fault>,
    mutation: Option<Value>,
    pub(crate) server_defaults: fn(&mut Deployment),
}

impl Server {
    /// Feeds what decides the server's next answers to `state`, for a state's fingerprint
    /// ([`fingerprint`](super::fingerprint)): its clock and the faults and mutation still
    /// pending; not the counters that name new revisions and uids.
    #[cfg(feature = "testing")]
    pub(crate) fn hash_state(&self, state: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.now.hash(state);
        format!(
            "{} {:?} {:?} {:?} {:?}",
            self.failures, self.failure, self.scope, self.faults, self.mutation
        )
        .hash(state);
    }

    /// A server with nothing written yet, its clock at `now`.
    pub(crate) fn new(now: Timestamp) -> Self {
        Server {
            now,
            revision: 0,
            uids: 0,
            failures: 0,
            failure: None,
            scope: None,
            faults: Vec::new(),
            mutation: None,
            server_defaults: crate::sim::defaulting::apply_server_defaults,
        }
    }

    /// Makes the next `count` Deployment writes (create or update) fail with `outcome`,
    /// replacing any blanket failures still pending (`count` 0 clears them). An `Applied`
    /// outcome lets the writes through.
    pub(crate) fn fail_writes(&mut self, count: u32, outcome: WriteOutcome) {
        self.fail_writes_of(None, count, outcome);
    }

    /// [`Server::fail_writes`], for the writes of one Deployment (namespace, name) only
    /// when `scope` names one.
    pub(crate) fn fail_writes_of(
        &mut self,
        scope: Option<(String, String)>,
        count: u32,
        outcome: WriteOutcome,
    ) {
        self.failures = count;
        self.failure = Some(outcome);
        self.scope = scope;
    }

    /// Blanket Deployment write failures still pending.
    pub(crate) fn pending_failures(&self) -> u32 {
        self.failures
    }

    /// Makes the next `count` requests matching `request` fail with `outcome`, replacing
    /// the failures still pending for that request (`count` 0 clears them).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn fail_next(&mut self, request: Request, count: u32, outcome: WriteOutcome) {
        self.faults.retain(|fault| fault.request != request);
        if count > 0 {
            self.faults.push(Fault {
                request,
                remaining: count,
                outcome,
            });
        }
    }

    /// Per-request failures still pending for `request`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn pending(&self, request: &Request) -> u32 {
        self.faults
            .iter()
            .filter(|fault| fault.request == *request)
            .map(|fault| fault.remaining)
            .sum()
    }

    /// Clears every injected failure, blanket and per request.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn clear_failures(&mut self) {
        self.failures = 0;
        self.faults.clear();
    }

    /// The answer injected for this request, if one is pending (it is used up).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn injected(
        &mut self,
        verb: Verb,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Option<WriteOutcome> {
        let at = self.faults.iter().position(|fault| {
            let r = &fault.request;
            r.verb == verb && r.kind == kind && r.namespace == namespace && r.name == name
        })?;
        let fault = self.faults.get_mut(at)?;
        fault.remaining = fault.remaining.saturating_sub(1);
        let outcome = fault.outcome.clone();
        if fault.remaining == 0 {
            self.faults.remove(at);
        }
        Some(outcome).filter(|o| !matches!(o, WriteOutcome::Applied))
    }

    /// Makes mutating admission apply this RFC 7386 merge patch to every Deployment write
    /// (create or update) from now on; `None` stops it.
    pub(crate) fn mutate_writes(&mut self, patch: Option<Value>) {
        self.mutation = patch;
    }

    /// The merge patch mutating admission applies to Deployment writes, if any.
    pub(crate) fn write_mutation(&self) -> Option<&Value> {
        self.mutation.as_ref()
    }

    /// Mutating admission: the object as the admission chain leaves it.
    fn admit(&self, mut object: Deployment) -> Deployment {
        if let Some(patch) = &self.mutation {
            merge_patch::apply_to_object(&mut object.object, patch);
        }
        object
    }

    /// The blanket failure of the next write of `desired`, if one is pending for it (used
    /// up).
    fn take_failure(&mut self, desired: &Deployment) -> Option<WriteOutcome> {
        if self.failures == 0 {
            return None;
        }
        if let Some((namespace, name)) = &self.scope
            && (desired.namespace(), desired.name())
                != (Some(namespace.as_str()), Some(name.as_str()))
        {
            return None;
        }
        self.failures -= 1;
        self.failure
            .clone()
            .filter(|f| !matches!(f, WriteOutcome::Applied))
    }

    /// A Deployment create over `stored` (the one the server holds under the name, if
    /// any): the Deployment to store, or the server's answer when it refuses.
    pub(crate) fn create_deployment(
        &mut self,
        desired: Deployment,
        stored: Option<&Deployment>,
    ) -> Result<Deployment, WriteOutcome> {
        if let Some(failure) = self.take_failure(&desired) {
            return Err(failure);
        }
        let desired = self.admit(desired);
        if let Some(refused) = api_validation::refusal(&desired) {
            return Err(refused);
        }
        if stored.is_some() {
            return Err(WriteOutcome::from_parts(
                Some(409),
                "AlreadyExists",
                &format!(
                    "deployments.apps {:?} already exists",
                    desired.name().unwrap_or("")
                ),
            ));
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
        Ok(object)
    }

    /// A Deployment update over `stored` (read in place, not copied: it can be large): the
    /// Deployment to store, or the server's answer when it refuses.
    pub(crate) fn update_deployment(
        &mut self,
        desired: Deployment,
        stored: Option<&Deployment>,
    ) -> Result<Deployment, WriteOutcome> {
        if let Some(failure) = self.take_failure(&desired) {
            return Err(failure);
        }
        let name = desired.name().unwrap_or("").to_owned();
        let Some(stored) = stored else {
            return Err(WriteOutcome::from_parts(
                Some(404),
                "NotFound",
                &format!("deployments.apps {name:?} not found"),
            ));
        };
        fn rv(d: &Deployment) -> Option<&str> {
            d.get(&["metadata", "resourceVersion"])
                .and_then(tree::Value::as_str)
        }
        if rv(&desired) != rv(stored) {
            return Err(WriteOutcome::from_parts(
                Some(409),
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on deployments.apps {name:?}: the object has \
                     been modified; please apply your changes to the latest version and try again"
                ),
            ));
        }
        // Admission and validation come after the resourceVersion precondition, as in the
        // real server.
        let desired = self.admit(desired);
        if let Some(refused) = api_validation::refusal(&desired) {
            return Err(refused);
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
        Ok(object)
    }

    /// A merge patch of a JSON object of `kind` (not Deployment-shaped) over `before` (none:
    /// the patch creates it), with the bookkeeping: the object to store. `checked`: the
    /// result must read as its kind (else: as a server whose CRD admits more, any object).
    /// Nothing is used up when the result is refused.
    pub(crate) fn patched(
        &mut self,
        kind: Kind,
        before: Option<&tree::Value>,
        patch: &Value,
        checked: bool,
    ) -> Result<tree::Value, ClusterError> {
        let mut after = before
            .cloned()
            .unwrap_or_else(|| tree::Value::Object(tree::Map::new()));
        crate::merge_patch::apply_to_tree(&mut after, patch);
        if checked {
            check(kind, Some(&after))?;
        } else if !after.is_object() {
            return Err(ClusterError::Malformed {
                kind,
                why: "must be a JSON object".into(),
            });
        }
        match before {
            None => {
                self.fill_bookkeeping(&mut after);
                default_status(kind, &mut after);
            }
            Some(before) => {
                let empty = tree::Map::new();
                let before = before.as_object().unwrap_or(&empty);
                self.update_bookkeeping(before, &mut after);
            }
        }
        Ok(after)
    }

    /// [`Server::patched`] of an object patch over a stored object, in place and at the
    /// patch's own cost: the object is neither copied nor read whole when it is known to
    /// read as its kind (`readable`) and what the patch sets reads as it too; otherwise
    /// (and for a patch that is not an object) as [`Server::patched`] does. The object is
    /// left unchanged when the result is refused.
    pub(crate) fn patch_in_place(
        &mut self,
        kind: Kind,
        object: &mut tree::Value,
        patch: &Value,
        checked: bool,
        readable: bool,
    ) -> Result<(), ClusterError> {
        let in_place = object.is_object()
            && patch.is_object()
            && (!checked || (readable && check(kind, Some(&without_nulls(patch))).is_ok()));
        if !in_place {
            *object = self.patched(kind, Some(object), patch, checked)?;
            return Ok(());
        }
        let meta = object.get("metadata");
        let generation = meta
            .and_then(|m| m.get("generation"))
            .and_then(tree::Value::as_i64)
            .unwrap_or(1);
        let kept: Vec<(&str, tree::Value)> = ["uid", "creationTimestamp"]
            .into_iter()
            .filter_map(|key| Some((key, meta?.get(key)?.clone())))
            .collect();
        let changed = patch
            .get("spec")
            .is_some_and(|spec| merge_changes(object.get("spec"), spec));
        crate::merge_patch::apply_to_tree(object, patch);
        let rv = self.next_revision();
        if let Some(meta) = metadata(object) {
            meta.insert(
                "generation",
                tree::Value::from(generation.saturating_add(i64::from(changed))),
            );
            meta.insert("resourceVersion", tree::Value::from(rv));
            for (key, value) in kept {
                meta.insert(key, value);
            }
        }
        Ok(())
    }

    /// A merge patch of a Deployment over `before` (none: the patch creates it), defaulted,
    /// with the bookkeeping: the Deployment to store.
    pub(crate) fn patched_deployment(
        &mut self,
        before: Option<&Deployment>,
        patch: &Value,
    ) -> Deployment {
        let mut after = before.cloned().unwrap_or_default();
        merge_patch::apply_to_object(&mut after.object, patch);
        let mut after = self.defaulted(after);
        match before {
            None => self.fill_deployment_bookkeeping(&mut after),
            Some(before) => self.update_deployment_bookkeeping(before, &mut after),
        }
        after
    }

    /// Marks a Gateway for deletion (`deletionTimestamp`, kept when set), a write.
    pub(crate) fn mark_deleted(&mut self, gateway: &mut tree::Value) {
        let stamp = format_time(self.now);
        let rv = self.next_revision();
        if let Some(meta) = metadata(gateway) {
            meta.entry("deletionTimestamp")
                .or_insert_with(|| tree::Value::from(stamp));
            meta.insert("resourceVersion", tree::Value::from(rv));
        }
    }

    /// A status write already applied to `object` (by the caller's patch): a new
    /// `resourceVersion`, never a new generation.
    pub(crate) fn status_written(&mut self, object: &mut tree::Value, rv: String) {
        if let Some(meta) = object
            .get_mut("metadata")
            .and_then(tree::Value::as_object_mut)
        {
            meta.insert("resourceVersion", tree::Value::from(rv));
        }
    }

    /// The Deployment as the server stores it: defaulted, with no spare room left by the
    /// fields defaulting added (it is kept until the next write).
    pub(crate) fn defaulted(&self, mut deployment: Deployment) -> Deployment {
        (self.server_defaults)(&mut deployment);
        deployment.object.shrink_to_fit();
        deployment
    }

    pub(crate) fn next_revision(&mut self) -> String {
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
    pub(crate) fn fill_bookkeeping(&mut self, object: &mut tree::Value) {
        let stamps = self.creation_stamps();
        if let Some(meta) = metadata(object) {
            for (key, value) in stamps {
                meta.entry(key).or_insert(tree::Value::from(value));
            }
            meta.entry("generation").or_insert(tree::Value::from(1));
            self.seen_revision(meta.get("resourceVersion"));
        }
    }

    /// [`Server::fill_bookkeeping`] for a Deployment.
    pub(crate) fn fill_deployment_bookkeeping(&mut self, deployment: &mut Deployment) {
        let stamps = self.creation_stamps();
        let meta = deployment_metadata(deployment);
        for (key, value) in stamps {
            meta.entry(key).or_insert(tree::Value::from(value));
        }
        meta.entry("generation").or_insert(tree::Value::from(1));
        let given = meta.get("resourceVersion").cloned();
        self.seen_revision(given.as_ref());
    }

    /// A resourceVersion given with an object (a scenario's initial objects keep theirs):
    /// later writes get greater ones, so that no write ever gets a version an object
    /// already had (a stale update must never match the stored object by chance).
    fn seen_revision(&mut self, given: Option<&tree::Value>) {
        if let Some(given) = given
            .and_then(tree::Value::as_str)
            .and_then(|rv| rv.parse().ok())
        {
            self.revision = self.revision.max(given);
        }
    }

    /// Update bookkeeping: new resourceVersion; generation bumped when spec changed;
    /// identity fields the client cannot change.
    fn update_bookkeeping(&mut self, before: &tree::Map, after: &mut tree::Value) {
        let generation = before
            .get("metadata")
            .and_then(|m| m.get("generation"))
            .and_then(tree::Value::as_i64)
            .unwrap_or(1);
        let changed = before.get("spec") != after.get("spec");
        let rv = self.next_revision();
        if let Some(meta) = metadata(after) {
            meta.insert(
                "generation",
                tree::Value::from(generation.saturating_add(i64::from(changed))),
            );
            meta.insert("resourceVersion", tree::Value::from(rv));
            for key in ["uid", "creationTimestamp"] {
                if let Some(v) = before.get("metadata").and_then(|m| m.get(key)) {
                    meta.insert(key, v.clone());
                }
            }
        }
    }

    /// [`Server::update_bookkeeping`] for a Deployment: as the real API server, its
    /// generation also moves with its annotations (apps/v1 PrepareForUpdate).
    fn update_deployment_bookkeeping(&mut self, before: &Deployment, after: &mut Deployment) {
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
