//! Conversions to and from the kube-rs ecosystem's typed objects, behind cargo features
//! that are off by default.
//!
//! | feature | crate | converts |
//! |---|---|---|
//! | `k8s-openapi` | [`k8s-openapi`](https://docs.rs/k8s-openapi) 0.29 (kube 5's) | [`wire::Deployment`] ⇄ `api::apps::v1::Deployment`, [`wire::Condition`] ⇄ `apimachinery::pkg::apis::meta::v1::Condition` |
//! | `gateway-api` | [`gateway-api`](https://docs.rs/gateway-api) 0.22 (itself on k8s-openapi 0.28 and kube 4) | `Gateway` → [`wire::Gateway`], `GatewayClass` → [`wire::GatewayClass`], [`wire::GatewayStatus`] → `GatewayStatus`, conditions back |
//!
//! # Who uses it
//!
//! Embedders whose caches hold typed objects: a kube-rs controller with k8s-openapi's
//! `Deployment`, or one built on the gateway-api crate's `Gateway`. The workspace's own
//! controller (`gateway-reconcile-kube`) uses none of it: it watches the wire types
//! directly (the `kube` feature, `wire::resource`). The `gateway-api`
//! conversions stay on k8s-openapi 0.28 until the gateway-api crate moves to kube 5; they
//! name their own k8s-openapi version and need no other feature.
//!
//! The crate's own types stay the contract: every conversion goes through the Kubernetes
//! wire JSON (serde), so a field means the same thing on both sides, and every fallible
//! conversion fails with [`InputError::Malformed`] naming the
//! object and the field, never with a panic.
//!
//! # What is lossless and what is not
//!
//! - typed `Deployment` → [`wire::Deployment`] keeps every field the typed object holds
//!   (the wire type is the whole JSON object).
//! - [`wire::Deployment`] → typed `Deployment` is **checked**: the wire object may carry
//!   fields that the Kubernetes version compiled into k8s-openapi does not know (a newer
//!   API server, an alpha field). Dropping one would make the controller write the object
//!   back without it, so the conversion fails instead, naming the first such field. The
//!   `gateway-reconcile-kube` controller avoids the question by caching and writing
//!   Deployments as untyped JSON.
//! - Conditions convert field by field. `lastTransitionTime` is a `metav1.Time`, which has
//!   second precision on the wire: a timestamp with a fraction or a non-`Z` offset comes
//!   back as the same second in `YYYY-MM-DDTHH:MM:SSZ`, the form the API server writes. An
//!   empty or unparsable one is an error (the typed field is required).
//! - `gateway-api` → wire keeps everything the crate reads and writes back: all of
//!   `metadata`, `spec.gatewayClassName`, `spec.infrastructure`, and the whole `status`
//!   (`listeners` and the rest ride in [`wire::GatewayStatus::other`]). Spec fields the
//!   crate never reads (`listeners`, `addresses`, `tls`, ...) are not carried: the wire
//!   types are read-only views of a Gateway, which its users own.
//!
//! # Kubernetes version
//!
//! k8s-openapi needs exactly one Kubernetes version feature, chosen by the final binary.
//! This crate enables none (a library must not), so a binary that turns these features on
//! also depends on `k8s-openapi` with, say, `features = ["v1_35"]` (the workspace's
//! `gateway-reconcile-kube` picks `v1_36`). Building this crate alone with these features
//! (its interop tests, `cargo doc`) needs `K8S_OPENAPI_ENABLED_VERSION=1.36` in the
//! environment; the repository's `.cargo/config.toml` sets it for every cargo command run
//! in it.
//!
//! [`wire::Deployment`]: crate::wire::Deployment
//! [`wire::Condition`]: crate::wire::Condition
//! [`wire::Gateway`]: crate::wire::Gateway
//! [`wire::GatewayClass`]: crate::wire::GatewayClass
//! [`wire::GatewayStatus`]: crate::wire::GatewayStatus
//! [`wire::GatewayStatus::other`]: crate::wire::GatewayStatus::other

#[cfg(feature = "gateway-api")]
pub mod gateway_api;
#[cfg(feature = "k8s-openapi")]
pub mod k8s_openapi;

use serde_json::Value;

use crate::InputError;

/// Defines `fn $name(&wire::Condition) -> Result<$condition, InputError>`: one condition,
/// field by field, its time as `metav1.Time` reads it (an RFC 3339 timestamp; a fraction
/// of a second or a non-`Z` offset becomes the second in UTC). One definition for the two
/// k8s-openapi versions the features convert to (0.29, and gateway-api's 0.28).
#[cfg(any(feature = "k8s-openapi", feature = "gateway-api"))]
macro_rules! typed_condition {
    ($name:ident, $condition:ident, $time:ty) => {
        fn $name(condition: &$crate::wire::Condition) -> Result<$condition, $crate::InputError> {
            let time: $time = serde_json::from_value(serde_json::Value::String(
                condition.last_transition_time.clone(),
            ))
            .map_err(|_| {
                super::malformed(
                    format!("condition {:?}", condition.type_),
                    format!(
                        "lastTransitionTime is not an RFC 3339 timestamp: {:?}",
                        condition.last_transition_time
                    ),
                )
            })?;
            Ok($condition {
                last_transition_time: time,
                message: condition.message.clone(),
                observed_generation: condition.observed_generation,
                reason: condition.reason.clone(),
                status: condition.status.clone(),
                type_: condition.type_.clone(),
            })
        }
    };
}
#[cfg(any(feature = "k8s-openapi", feature = "gateway-api"))]
use typed_condition;

/// The error for a value that failed to convert on its way between the two types.
fn malformed(object: impl Into<String>, why: impl std::fmt::Display) -> InputError {
    InputError::Malformed {
        object: object.into(),
        why: why.to_string(),
    }
}

/// `input` read as the typed `T`, which must still hold every non-null value of it when
/// written again ([`check_kept`]; `typed` names `T` in the error).
fn read_keeping<T: serde::Serialize + serde::de::DeserializeOwned>(
    object: &str,
    typed: &str,
    input: &Value,
) -> Result<T, InputError> {
    let value: T = serde_json::from_value(input.clone()).map_err(|e| malformed(object, e))?;
    let output = serde_json::to_value(&value).map_err(|e| malformed(object, e))?;
    check_kept(object, typed, input, &output)?;
    Ok(value)
}

/// Checks that `output` (the typed value serialized again) still holds every non-null value
/// of `input` (the JSON it was read from); the error names the first field that was lost.
/// Fields only `output` has are fine: a typed struct writes its `apiVersion` and `kind`, and
/// required fields as empty values.
fn check_kept(object: &str, typed: &str, input: &Value, output: &Value) -> Result<(), InputError> {
    let mut path = String::new();
    match first_loss(input, output, &mut path) {
        None => Ok(()),
        Some(what) => Err(malformed(
            object,
            format!("{path}: {what} by {typed}; converting would lose it"),
        )),
    }
}

/// Where `output` fails to hold a non-null value of `input`: leaves the field's path in
/// `path` and says what is wrong.
fn first_loss(input: &Value, output: &Value, path: &mut String) -> Option<&'static str> {
    match (input, output) {
        (Value::Null, _) => None,
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want.iter().filter(|(_, v)| !v.is_null()) {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                let loss = match have.get(key) {
                    None => Some("field not known"),
                    Some(kept) => first_loss(value, kept, path),
                };
                if loss.is_some() {
                    return loss;
                }
                path.truncate(len);
            }
            None
        }
        (Value::Array(want), Value::Array(have)) => {
            if want.len() != have.len() {
                return Some("list length not kept");
            }
            for (i, (value, kept)) in want.iter().zip(have).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let loss = first_loss(value, kept, path);
                if loss.is_some() {
                    return loss;
                }
                path.truncate(len);
            }
            None
        }
        (want, have) if want == have => None,
        _ => Some("value not kept"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn loss(input: Value, output: Value) -> Option<String> {
        check_kept("X", "T", &input, &output)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn extra_output_fields_and_input_nulls_are_not_losses() {
        let input = json!({"a": {"b": 1, "n": null}, "l": [{"x": "y"}]});
        let output = json!({"kind": "K", "a": {"b": 1, "c": []}, "l": [{"x": "y", "z": 0}]});
        assert_eq!(loss(input, output), None);
    }

    #[test]
    fn a_dropped_or_changed_field_is_named_by_its_path() {
        let input = json!({"spec": {"l": [{"x": 1}, {"x": 2, "new": true}]}});
        let output = json!({"spec": {"l": [{"x": 1}, {"x": 2}]}});
        assert_eq!(
            loss(input, output).as_deref(),
            Some("X: spec.l[1].new: field not known by T; converting would lose it")
        );
        let input = json!({"t": "2026-01-01T00:00:00.5Z"});
        let output = json!({"t": "2026-01-01T00:00:00Z"});
        assert_eq!(
            loss(input, output).as_deref(),
            Some("X: t: value not kept by T; converting would lose it")
        );
        let input = json!({"l": [1, 2]});
        let output = json!({"l": [1]});
        assert!(
            loss(input, output)
                .unwrap()
                .contains("l: list length not kept")
        );
    }
}
