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
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::Value;

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
    /// fought. An answer that is not a Deployment the core can read is `Applied` alone.
    fn from(result: Result<DynamicObject, kube::Error>) -> Self {
        match result {
            Ok(object) => Written {
                resource_version: object.metadata.resource_version.clone(),
                outcome: serde_json::to_vec(&object)
                    .ok()
                    .and_then(|text| serde_json::from_slice::<wire::Deployment>(&text).ok())
                    .map_or(WriteOutcome::Applied, WriteOutcome::Stored),
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
        Ok(body) => Written::from(api.create(&params(), &body).await),
        Err(outcome) => Written::refused(outcome),
    }
}

/// PUTs `desired`, with the observed `resourceVersion` as precondition. Takes it by value,
/// as [`create`] does.
pub async fn replace(api: &Api<DynamicObject>, desired: wire::Deployment) -> Written {
    let name = desired.name().unwrap_or_default().to_owned();
    match body(desired, true) {
        Ok(body) => Written::from(api.replace(&name, &params(), &body).await),
        Err(outcome) => Written::refused(outcome),
    }
}

fn params() -> PostParams {
    PostParams {
        dry_run: false,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    }
}

/// The request body: the desired object without status and managedFields; on create also
/// without the server-set metadata a template could carry.
fn body(desired: wire::Deployment, update: bool) -> Result<DynamicObject, WriteOutcome> {
    let mut object = desired.object;
    object.remove("status");
    if let Some(wire::tree::Value::Object(metadata)) = object.get_mut("metadata") {
        metadata.remove("managedFields");
        if !update {
            for key in ["resourceVersion", "uid", "creationTimestamp", "generation"] {
                metadata.remove(key);
            }
        }
    }
    serde_json::from_value(Value::Object(object.into())).map_err(|e| {
        // The core renders well-formed objects; a body that is not one is refused like
        // an invalid object, never sent.
        WriteOutcome::from_parts(Some(422), "Invalid", &format!("LB Deployment body: {e}"))
    })
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
    match api
        .patch_status(name, &params, &Patch::Merge(patch.body()))
        .await
    {
        Ok(written) => Ok((StatusWrite::Written, written.resource_version())),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok((StatusWrite::Conflict, None)),
        Err(error) => Err(error),
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
        let update =
            serde_json::to_value(body(desired.clone(), true).expect("body")).expect("json");
        assert_eq!(update["metadata"]["resourceVersion"], "5");
        assert_eq!(update["metadata"]["uid"], "u");
        assert!(update.get("status").is_none());
        assert!(update["metadata"].get("managedFields").is_none());
        let create = serde_json::to_value(body(desired, false).expect("body")).expect("json");
        assert!(create["metadata"].get("resourceVersion").is_none());
        assert!(create["metadata"].get("uid").is_none());
        assert_eq!(create["spec"]["replicas"], 1);
    }
}
