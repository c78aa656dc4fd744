//! The LB Deployment write, and its answer as the core's [`WriteOutcome`]; the Gateway
//! status patch ([`patch_status`]).
//!
//! # The verbs, and why
//!
//! - **Create is a POST.** It fails with 409 `AlreadyExists` when any Deployment of that name
//!   exists, ours or not, so a foreign Deployment that appeared between the read and the
//!   write is never taken over (a server-side apply would merge into it). The core retries
//!   at once; the next reconcile finds the foreign object in the cache and reports the name
//!   collision.
//! - **Update is a PUT (replace) of the whole desired object**, which the core renders from
//!   the observed one and which carries the cached `resourceVersion`. A stale cache is a 409
//!   `Conflict`, which the core retries at once (when the watch has caught up), and a
//!   Deployment deleted and recreated by someone else meanwhile is a 409 too (its uid in the
//!   body no longer matches), never overwritten.
//!
//! A replace writes exactly what the core decided, which keeps the write consistent with
//! the core's drift rules (its `reconcile` docs, section "Drift"), so no write repeats:
//!
//! - a **container, env var, volume or readiness gate** another manager adds is drift (lists
//!   are compared whole); the replace removes it, once per foreign addition. A server-side
//!   apply could not: it leaves fields of other managers in place, so the drift would never
//!   clear and the controller would write on every reconcile.
//! - a **label or annotation** another manager adds is not drift (a field only the observed
//!   object has); the render keeps observed labels and annotations, so the replace keeps it.
//! - `replicas` is kept as observed unless `enforceReplicas` (an autoscaler owns it).
//!
//! The body is the desired object without `status` (the main resource ignores it) and
//! without `managedFields` (absent, the server keeps and updates field ownership).

use gateway_reconcile::reconcile::StatusWrite;
use gateway_reconcile::{StatusPatch, WriteOutcome, wire};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::Request;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The field manager of the controller's writes.
pub const FIELD_MANAGER: &str = "gateway-reconcile-controller";

/// What a write did: the outcome the core settles with, and the `resourceVersion` the
/// server gave the object when the write succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The outcome, for the core.
    pub outcome: WriteOutcome,
    /// The object's new `resourceVersion` (a successful write only).
    pub resource_version: Option<String>,
}

impl Written {
    /// A write that went through carries the stored object the server answered with
    /// ([`WriteOutcome::Stored`]): the core compares it with what it asked for, to see what
    /// admission changed, and returns the write record that keeps that change from being
    /// fought. The answer is read once, straight into the core's type (an answer that is
    /// not a JSON object is an error of the request, as kube's typed answer was).
    fn from(result: Result<wire::Deployment, kube::Error>) -> Self {
        match result {
            Ok(stored) => Written {
                resource_version: stored
                    .get(&["metadata", "resourceVersion"])
                    .and_then(wire::tree::Value::as_str)
                    .map(str::to_owned),
                outcome: WriteOutcome::Stored(stored),
            },
            Err(error) => Written {
                outcome: outcome_from_error(&error),
                resource_version: None,
            },
        }
    }

    fn refused(outcome: WriteOutcome) -> Self {
        Written {
            outcome,
            resource_version: None,
        }
    }
}

/// POSTs `desired`; fails with `AlreadyExists` on any Deployment of that name. Takes it by
/// value: it becomes the request body without a copy.
pub async fn create(api: &Api<DynamicObject>, desired: wire::Deployment) -> Written {
    match body(desired, false) {
        Ok(body) => {
            let request = Request::new(api.resource_url()).create(&params(), body);
            Written::from(send(api, request, "create").await)
        }
        Err(outcome) => Written::refused(outcome),
    }
}

/// PUTs `desired`, with the observed `resourceVersion` as precondition. Takes it by value,
/// as [`create`] does.
pub async fn replace(api: &Api<DynamicObject>, desired: wire::Deployment) -> Written {
    let name = desired.name().unwrap_or_default().to_owned();
    match body(desired, true) {
        Ok(body) => {
            let request = Request::new(api.resource_url()).replace(&name, &params(), body);
            Written::from(send(api, request, "replace").await)
        }
        Err(outcome) => Written::refused(outcome),
    }
}

/// Sends a request `api`'s client, as kube's `Api` method `verb` does (the same request,
/// the same errors), and reads the answer as `T`.
pub(crate) async fn send<K: Clone, T: DeserializeOwned>(
    api: &Api<K>,
    request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    verb: &'static str,
) -> Result<T, kube::Error> {
    let mut request = request.map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert(verb);
    kube::Client::from(api.clone()).request::<T>(request).await
}

fn params() -> PostParams {
    PostParams {
        dry_run: false,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    }
}

/// The request body: the desired object without status and managedFields; on create also
/// without the server-set metadata a template could carry. Its `metadata` is written as
/// the API types read it (k8s-openapi's `ObjectMeta`), every other field as the core
/// rendered it: the JSON kube's `DynamicObject` made of it, without going through one (a
/// `DynamicObject` reads and writes its flattened fields through serde's buffered
/// content, most of a write's CPU).
fn body(desired: wire::Deployment, update: bool) -> Result<Vec<u8>, WriteOutcome> {
    // The core renders well-formed objects; a body that is not one is refused like an
    // invalid object, never sent.
    let invalid = |why: &dyn std::fmt::Display| {
        WriteOutcome::from_parts(Some(422), "Invalid", &format!("LB Deployment body: {why}"))
    };
    let mut object = desired.object;
    object.remove("status");
    let Some(metadata) = object.get_mut("metadata") else {
        return Err(invalid(&"missing field `metadata`"));
    };
    if let wire::tree::Value::Object(metadata) = metadata {
        metadata.remove("managedFields");
        if !update {
            for key in ["resourceVersion", "uid", "creationTimestamp", "generation"] {
                metadata.remove(key);
            }
        }
    }
    let read: ObjectMeta = serde_json::to_value(&*metadata)
        .and_then(serde_json::from_value)
        .map_err(|e| invalid(&e))?;
    *metadata = serde_json::to_value(&read)
        .map(wire::tree::Value::from)
        .map_err(|e| invalid(&e))?;
    serde_json::to_vec(&object).map_err(|e| invalid(&e))
}

/// Sends the core's Gateway status patch to `gateways/status` as a JSON merge patch (its
/// body carries the observed `resourceVersion`: a Gateway changed since answers 409).
/// Answers [`StatusWrite::Written`] with the Gateway's new `resourceVersion`, or
/// [`StatusWrite::Conflict`] on a 409 (decide again with the newer Gateway); any other
/// error is the caller's.
pub async fn patch_status(
    api: &Api<crate::cached::Gateway>,
    name: &str,
    patch: &StatusPatch,
) -> Result<(StatusWrite, Option<String>), kube::Error> {
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    let request = Request::new(api.resource_url()).patch_subresource(
        "status",
        name,
        &params,
        &Patch::Merge(patch.body()),
    );
    // The answer is read for its `resourceVersion` alone (the Gateway itself comes with
    // its watch event).
    match send::<_, Versioned>(api, request, "patch_status").await {
        Ok(written) => Ok((StatusWrite::Written, written.resource_version)),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok((StatusWrite::Conflict, None)),
        Err(error) => Err(error),
    }
}

/// An object's `metadata.resourceVersion`, read from its JSON while every other field is
/// skipped unread. Any JSON reads (an object without one, or not an object, has none), as
/// the whole Gateway it replaces did.
#[derive(Debug, Default, PartialEq)]
struct Versioned {
    resource_version: Option<String>,
}

impl<'de> Deserialize<'de> for Versioned {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Field(&["metadata", "resourceVersion"]))
    }
}

/// A visitor finding the string at a path of keys in any JSON value; `None` elsewhere.
struct Field(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for Field {
    type Value = Versioned;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Versioned, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Field {
    type Value = Versioned;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Versioned, A::Error> {
        let mut found = Versioned::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.0.split_first() {
                Some((first, rest)) if *first == key => {
                    found = map.next_value_seed(Field(rest))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }

    fn visit_str<E>(self, value: &str) -> Result<Versioned, E> {
        Ok(Versioned {
            resource_version: self.0.is_empty().then(|| value.to_owned()),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Versioned, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Versioned::default())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Versioned, E> {
        Ok(Versioned::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Versioned, E> {
        Ok(Versioned::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Versioned, E> {
        Ok(Versioned::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Versioned, E> {
        Ok(Versioned::default())
    }

    fn visit_unit<E>(self) -> Result<Versioned, E> {
        Ok(Versioned::default())
    }
}

/// The answer to a write, as the core classifies it.
pub fn outcome(result: Result<(), kube::Error>) -> WriteOutcome {
    match result {
        Ok(()) => WriteOutcome::Applied,
        Err(error) => outcome_from_error(&error),
    }
}

/// A [`kube::Error`] as a [`WriteOutcome`]: an API `Status` by its code, reason and
/// message; anything else (connection, TLS, timeout, a body that did not parse) as a
/// transport error with no code, which the core treats as transient.
pub fn outcome_from_error(error: &kube::Error) -> WriteOutcome {
    match error {
        kube::Error::Api(status) => {
            // A code outside 400-599 (0 when the server sent none) is not an HTTP error
            // the core can classify: a transport-level failure.
            let code = Some(status.code).filter(|code| (400..=599).contains(code));
            WriteOutcome::from_parts(code, &status.reason, &status.message)
        }
        other => WriteOutcome::from_parts(None, "", &other.to_string()),
    }
}

/// `Create` or `Update`, for logs, metrics and Event actions.
pub fn verb(write: &gateway_reconcile::DeploymentWrite) -> &'static str {
    match write {
        gateway_reconcile::DeploymentWrite::Create(_) => "Create",
        gateway_reconcile::DeploymentWrite::Update { .. } => "Update",
    }
}

#[cfg(test)]
mod tests {
    use gateway_reconcile::FailureClass;
    use kube::core::Status;
    use serde_json::Value;

    use super::*;

    fn api_error(code: u16, reason: &str) -> kube::Error {
        let mut status = Status::failure("the message", reason);
        status.code = code;
        kube::Error::Api(status.boxed())
    }

    #[test]
    fn api_errors_keep_code_reason_and_message() {
        let outcome = super::outcome(Err(api_error(409, "Conflict")));
        assert_eq!(outcome.class(), Some(FailureClass::Conflict));
        assert_eq!(outcome.message(), "the message");
        let cases = [
            (409, "AlreadyExists", FailureClass::AlreadyExists),
            (404, "NotFound", FailureClass::NotFound),
            (422, "Invalid", FailureClass::Rejected),
            (500, "InternalError", FailureClass::Transient),
        ];
        for (code, reason, class) in cases {
            assert_eq!(
                outcome_from_error(&api_error(code, reason)).class(),
                Some(class)
            );
        }
    }

    #[test]
    fn other_errors_are_transport_errors() {
        let outcome = outcome_from_error(&api_error(0, ""));
        assert!(
            matches!(outcome, WriteOutcome::Transport { .. }),
            "{outcome:?}"
        );
        let outcome = outcome_from_error(&kube::Error::LinesCodecMaxLineLengthExceeded);
        assert_eq!(outcome.class(), Some(FailureClass::Transient));
        assert_eq!(super::outcome(Ok(())), WriteOutcome::Applied);
    }

    #[test]
    fn bodies_leave_out_status_and_managed_fields() {
        let desired = wire::Deployment::from_object(
            serde_json::json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": { "name": "d", "namespace": "ns", "resourceVersion": "5", "uid": "u",
                              "managedFields": [{ "manager": "x" }] },
                "spec": { "replicas": 1 }, "status": { "replicas": 1 }
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        );
        let json = |body: Vec<u8>| serde_json::from_slice::<Value>(&body).expect("json");
        let update = json(body(desired.clone(), true).expect("body"));
        assert_eq!(update["metadata"]["resourceVersion"], "5");
        assert_eq!(update["metadata"]["uid"], "u");
        assert!(update.get("status").is_none());
        assert!(update["metadata"].get("managedFields").is_none());
        let create = json(body(desired, false).expect("body"));
        assert!(create["metadata"].get("resourceVersion").is_none());
        assert!(create["metadata"].get("uid").is_none());
        assert_eq!(create["spec"]["replicas"], 1);
    }

    /// The body is the JSON kube's `DynamicObject` made of the same object (as the write
    /// sent before it was serialized straight from the core's tree): the metadata as the
    /// API types read it, every other field as rendered; a metadata the API types cannot
    /// read is refused unsent, as it was.
    #[test]
    fn a_body_is_the_json_a_dynamic_object_made() {
        let object = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "lb-gw", "namespace": "ns", "resourceVersion": "7", "uid": "u",
                          "creationTimestamp": "2026-12-07T10:00:00Z", "generation": 2,
                          "labels": { "app": "lb", "x": "" }, "annotations": { "a": "b" },
                          "ownerReferences": [{ "apiVersion": "gateway.networking.k8s.io/v1",
                              "kind": "Gateway", "name": "gw", "uid": "g", "controller": true,
                              "blockOwnerDeletion": true }],
                          "finalizers": [], "managedFields": [{ "manager": "x" }] },
            "spec": { "replicas": 2, "selector": { "matchLabels": { "app": "lb" } },
                      "template": { "metadata": { "labels": { "app": "lb" }, "creationTimestamp": null },
                                    "spec": { "containers": [{ "name": "c", "image": "i",
                                        "resources": { "limits": { "cpu": "1.5" } },
                                        "ports": [{ "containerPort": 80 }], "env": [] }] } },
                      "strategy": { "rollingUpdate": { "maxSurge": "25%", "maxUnavailable": 0 } },
                      "unknownField": { "k": [1, 2.5, null, true] } },
            "status": { "replicas": 2 }
        });
        let desired =
            || wire::Deployment::from_object(object.as_object().cloned().unwrap_or_default());
        for update in [false, true] {
            // What the write sent before: the same object read as a `DynamicObject`.
            let mut expected = serde_json::to_value(desired()).expect("json");
            let map = expected.as_object_mut().expect("an object");
            map.remove("status");
            let metadata = map["metadata"].as_object_mut().expect("metadata");
            metadata.remove("managedFields");
            if !update {
                for key in ["resourceVersion", "uid", "creationTimestamp", "generation"] {
                    metadata.remove(key);
                }
            }
            let dynamic: DynamicObject = serde_json::from_value(expected).expect("a DynamicObject");
            let expected = serde_json::to_value(&dynamic).expect("json");
            let sent: Value =
                serde_json::from_slice(&body(desired(), update).expect("body")).expect("json");
            assert_eq!(sent, expected, "update: {update}");
        }
        let mut bad = object.clone();
        bad["metadata"]["labels"] = serde_json::json!({ "app": 5 });
        let refused = body(
            wire::Deployment::from_object(bad.as_object().cloned().unwrap_or_default()),
            true,
        )
        .expect_err("refused");
        assert_eq!(refused.class(), Some(FailureClass::Rejected), "{refused:?}");
        let mut none = object;
        none.as_object_mut().map(|o| o.remove("metadata"));
        assert!(
            body(
                wire::Deployment::from_object(none.as_object().cloned().unwrap_or_default()),
                false
            )
            .is_err()
        );
    }

    /// A write's answer is read for the stored object's `resourceVersion`, whatever else
    /// it holds, and any JSON reads.
    #[test]
    fn a_status_answer_is_read_for_its_version_alone() {
        let read = |json: &str| serde_json::from_str::<Versioned>(json).expect("read");
        assert_eq!(
            read(r#"{"apiVersion": "v1", "metadata": {"name": "gw", "managedFields": [{"a": {"b": 1}}],
                "resourceVersion": "42", "labels": {"resourceVersion": "no"}},
                "status": {"metadata": {"resourceVersion": "no"}}}"#)
            .resource_version
            .as_deref(),
            Some("42")
        );
        for other in [
            r#"{"metadata": {"resourceVersion": 5}}"#,
            r#"{"metadata": [1]}"#,
            "[]",
            "null",
            "3",
            r#""x""#,
            r#"{"resourceVersion": "1"}"#,
        ] {
            assert_eq!(read(other), Versioned::default(), "{other}");
        }
        assert!(serde_json::from_str::<Versioned>("{").is_err());
    }
}
