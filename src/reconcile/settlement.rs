//! What one reconcile ends with: the status to write, as a merge patch with its
//! precondition, the Events, and when to look again.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use serde_json::{Map, Value};

use super::record::WriteRecord;
use crate::events::Event;
use crate::wire::{Condition, GatewayAddress, GatewayStatus, ListenerStatus};

/// When to reconcile this Gateway again.
///
/// Not `#[non_exhaustive]` on purpose, like [`Plan`](crate::Plan): a controller handles
/// every variant, so a new one is a compile error in its `match`, never a silent default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// Only on the next watch event.
    AwaitChange,
    /// At once.
    Immediately,
    /// After this long.
    After(Duration),
}

impl Requeue {
    /// The moment to reconcile again, for a reconcile planned at `now`: `now` for
    /// [`Requeue::Immediately`], `now + d` for [`Requeue::After`] (saturating at the end of
    /// representable time, [`Timestamp::MAX`]), and `None` for [`Requeue::AwaitChange`]
    /// (only a watch event brings the Gateway back). Never panics.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gateway_reconcile::Requeue;
    /// use gateway_reconcile::jiff::Timestamp;
    ///
    /// let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    /// let later = Requeue::After(Duration::from_secs(90)).deadline(now);
    /// assert_eq!(later, Some("2026-01-01T00:01:30Z".parse().unwrap()));
    /// assert_eq!(Requeue::Immediately.deadline(now), Some(now));
    /// assert_eq!(Requeue::AwaitChange.deadline(now), None);
    /// assert_eq!(Requeue::After(Duration::MAX).deadline(now), Some(Timestamp::MAX));
    /// ```
    pub fn deadline(self, now: Timestamp) -> Option<Timestamp> {
        match self {
            Requeue::AwaitChange => None,
            Requeue::Immediately => Some(now),
            Requeue::After(after) => Some(
                SignedDuration::try_from(after)
                    .ok()
                    .and_then(|after| now.checked_add(after).ok())
                    .unwrap_or(Timestamp::MAX),
            ),
        }
    }
}

/// What one reconcile ends with.
///
/// [`plan`](crate::plan) and [`PendingWrite::settle`](crate::PendingWrite::settle) make it;
/// a test of the embedder's own status writer or event recorder builds one with
/// [`Settlement::new`] and the `with_*` setters.
#[must_use = "write the status, record the events and requeue as it says"]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Settlement {
    /// The Gateway status to write (the full condition list and the addresses), or `None`
    /// when it equals the observed one.
    pub status: Option<GatewayStatus>,
    /// When to look again.
    pub requeue: Requeue,
    /// Whether [`requeue`](Settlement::requeue) is the resync of a Gateway with nothing
    /// left to do ([`Settings::resync`](crate::Settings::resync) in place of
    /// [`Requeue::AwaitChange`]), not a retry or a deadline: a controller may spread such
    /// requeues out (Gateways that converged together would otherwise all resync in one
    /// instant); every other requeue is meant exactly.
    pub resync: bool,
    /// The Events to record on the Gateway: one per condition transition, none on a retry
    /// that changes nothing; and `AdmissionChanged` when the API server changed the write.
    pub events: Vec<Event>,
    /// What to keep of the write, when it succeeded and the outcome carried the stored
    /// Deployment ([`WriteOutcome::Stored`](crate::WriteOutcome::Stored)): hand it to the
    /// next plan of this Gateway ([`Snapshot::with_write_record`](crate::Snapshot::with_write_record)),
    /// in place of the one kept before. `None` otherwise: keep the one kept before.
    pub write_record: Option<WriteRecord>,
    /// The drift a write record held back: the fields the API server changed in the last
    /// write, left as they are (the plan wrote nothing). Empty otherwise.
    pub held_drift: Vec<String>,
    /// Whether this reconcile owns `status.addresses` (false when the parameters are invalid
    /// or the Gateway is not ours: the addresses are left untouched).
    pub(super) addresses_owned: bool,
    /// Whether this reconcile owns `status.listeners` (false when the Gateway is not ours:
    /// they are left untouched).
    pub(super) listeners_owned: bool,
    /// The observed Gateway's `metadata.resourceVersion`: the status patch's precondition.
    pub(super) resource_version: Option<String>,
}

impl Settlement {
    /// A settlement with this status and requeue, and nothing else: no events, no write
    /// record, no held drift, `status.addresses` not owned (the status patch leaves them
    /// alone) and no precondition. For tests of what an embedder does with a settlement;
    /// the reconcile's own settlements come from [`plan`](crate::plan).
    ///
    /// ```
    /// use gateway_reconcile::{Requeue, Settlement};
    /// use gateway_reconcile::wire::GatewayStatus;
    ///
    /// let settlement = Settlement::new(Some(GatewayStatus::default()), Requeue::Immediately)
    ///     .with_resource_version("42")
    ///     .with_addresses_owned(true);
    /// let patch = settlement.status_patch().unwrap();
    /// assert_eq!(patch.resource_version(), Some("42"));
    /// assert_eq!(
    ///     patch.body(),
    ///     &serde_json::json!({"metadata": {"resourceVersion": "42"},
    ///                         "status": {"conditions": [], "addresses": null}})
    /// );
    /// ```
    pub fn new(status: Option<GatewayStatus>, requeue: Requeue) -> Self {
        Settlement {
            status,
            requeue,
            resync: false,
            events: Vec::new(),
            write_record: None,
            held_drift: Vec::new(),
            addresses_owned: false,
            listeners_owned: false,
            resource_version: None,
        }
    }

    /// With the observed Gateway's `metadata.resourceVersion`: the status patch's
    /// precondition ([`StatusPatch::resource_version`]).
    pub fn with_resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// Whether this settlement owns `status.addresses`: when true, the status patch
    /// replaces them (`null` for none); when false, it leaves them alone.
    pub fn with_addresses_owned(mut self, owned: bool) -> Self {
        self.addresses_owned = owned;
        self
    }

    /// Whether this settlement owns `status.listeners`: when true, the status patch
    /// replaces them (`null` for none); when false, it leaves them alone.
    pub fn with_listeners_owned(mut self, owned: bool) -> Self {
        self.listeners_owned = owned;
        self
    }

    /// With these Events to record.
    pub fn with_events(mut self, events: Vec<Event>) -> Self {
        self.events = events;
        self
    }

    /// The JSON merge patch (RFC 7386) for the Gateway's status subresource, or `None` when
    /// there is nothing to write. It replaces `status.conditions` whole (always the full
    /// list, never `null`), and `status.addresses` and `status.listeners` when this
    /// reconcile owns them (`null` removes an empty list). See [`StatusPatch`] for the
    /// precondition it carries.
    pub fn status_patch(&self) -> Option<StatusPatch> {
        let status = self.status.as_ref()?;
        let mut fields = Map::new();
        // Built by hand, not through a fallible serialization: the conditions can never
        // become a `null` that would delete every condition, foreign ones included.
        fields.insert(
            "conditions".into(),
            Value::Array(status.conditions.iter().map(condition_value).collect()),
        );
        if self.addresses_owned {
            let addresses = if status.addresses.is_empty() {
                Value::Null
            } else {
                Value::Array(status.addresses.iter().map(address_value).collect())
            };
            fields.insert("addresses".into(), addresses);
        }
        if self.listeners_owned {
            let listeners = if status.listeners.is_empty() {
                Value::Null
            } else {
                Value::Array(status.listeners.iter().map(listener_value).collect())
            };
            fields.insert("listeners".into(), listeners);
        }
        Some(StatusPatch::of_status(
            fields,
            self.resource_version.clone(),
        ))
    }
}

/// The merge patch for the status subresource of a Gateway (or of a GatewayClass,
/// [`ClassSettlement::status_patch`](crate::gateway_class::ClassSettlement::status_patch)).
///
/// Send [`body`](StatusPatch::body) as a JSON merge patch (kube-rs: `Patch::Merge`) to the
/// Gateway's `status` subresource. The list of conditions is replaced whole, so a condition
/// another controller wrote after the snapshot was taken would be lost; the patch prevents
/// that with the observed Gateway's `metadata.resourceVersion` as a precondition: the API
/// server answers 409 Conflict when the Gateway changed meanwhile, and the caller then
/// reconciles again at once with the newer object.
///
/// When the snapshot's Gateway has no `resourceVersion` (a hand-written snapshot), the body
/// has no `metadata` and [`resource_version`](StatusPatch::resource_version) is `None`: the
/// caller must then supply the precondition itself (or accept that a concurrent write to the
/// conditions may be lost).
#[must_use = "send the body as a merge patch to the Gateway status subresource"]
#[derive(Debug, Clone, PartialEq)]
pub struct StatusPatch {
    body: Value,
    resource_version: Option<String>,
}

impl StatusPatch {
    /// The patch of these status fields, with the precondition in `metadata`.
    pub(crate) fn of_status(fields: Map<String, Value>, resource_version: Option<String>) -> Self {
        let mut body = Map::new();
        if let Some(version) = &resource_version {
            let mut metadata = Map::new();
            metadata.insert("resourceVersion".into(), Value::String(version.clone()));
            body.insert("metadata".into(), Value::Object(metadata));
        }
        body.insert("status".into(), Value::Object(fields));
        StatusPatch {
            body: Value::Object(body),
            resource_version,
        }
    }

    /// The JSON merge patch body: `{"metadata": {"resourceVersion": RV}, "status": {...}}`,
    /// without `metadata` when the snapshot's Gateway has no `resourceVersion`.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// The body, by value.
    pub fn into_body(self) -> Value {
        self.body
    }

    /// The precondition: the `resourceVersion` of the Gateway the status was computed from.
    pub fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }

    /// Applies the patch's `status` to `object` (the Gateway or GatewayClass as JSON) as the
    /// API server's status subresource does: an RFC 7386 merge of `status` alone. The
    /// precondition is not checked here: an in-memory store compares
    /// [`resource_version`](StatusPatch::resource_version) with its own first.
    ///
    /// ```
    /// use gateway_reconcile::{Requeue, Settlement};
    /// use gateway_reconcile::wire::{GatewayAddress, GatewayStatus};
    /// use serde_json::json;
    ///
    /// let settlement = Settlement::new(Some(GatewayStatus::default()), Requeue::AwaitChange)
    ///     .with_addresses_owned(true);
    /// let mut gateway = json!({"spec": {}, "status": {"addresses": [{"value": "10.0.0.1"}]}});
    /// settlement.status_patch().unwrap().apply_to(&mut gateway);
    /// assert_eq!(gateway, json!({"spec": {}, "status": {"conditions": []}}));
    /// ```
    pub fn apply_to(&self, object: &mut Value) {
        if let Some(status) = self.body.get("status") {
            if !object.is_object() {
                *object = Value::Object(Map::new());
            }
            if let Value::Object(fields) = object {
                crate::merge_patch::apply(fields.entry("status").or_insert(Value::Null), status);
            }
        }
    }
}

/// A condition as serde writes it (`wire::Condition`), field by field.
pub(crate) fn condition_value(c: &Condition) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String(c.type_.clone()));
    m.insert("status".into(), Value::String(c.status.clone()));
    if let Some(g) = c.observed_generation {
        m.insert("observedGeneration".into(), Value::from(g));
    }
    m.insert(
        "lastTransitionTime".into(),
        Value::String(c.last_transition_time.clone()),
    );
    m.insert("reason".into(), Value::String(c.reason.clone()));
    m.insert("message".into(), Value::String(c.message.clone()));
    Value::Object(m)
}

/// A listener entry as serde writes it (`wire::ListenerStatus`), field by field.
fn listener_value(l: &ListenerStatus) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(l.name.clone()));
    let kinds = l.supported_kinds.iter().map(|k| {
        let mut kind = Map::new();
        if let Some(group) = &k.group {
            kind.insert("group".into(), Value::String(group.clone()));
        }
        kind.insert("kind".into(), Value::String(k.kind.clone()));
        Value::Object(kind)
    });
    m.insert("supportedKinds".into(), Value::Array(kinds.collect()));
    m.insert("attachedRoutes".into(), Value::from(l.attached_routes));
    m.insert(
        "conditions".into(),
        Value::Array(l.conditions.iter().map(condition_value).collect()),
    );
    Value::Object(m)
}

/// An address as serde writes it (`wire::GatewayAddress`).
fn address_value(a: &GatewayAddress) -> Value {
    let mut m = Map::new();
    if let Some(t) = &a.type_ {
        m.insert("type".into(), Value::String(t.clone()));
    }
    m.insert("value".into(), Value::String(a.value.clone()));
    Value::Object(m)
}

#[cfg(test)]
mod tests;
