//! Reading a value into a wire type with the key path of what is wrong
//! (`spec.horizontalScaling.replicas: expected an integer, found "many"`): the simulator's
//! store and scenario files, and the `kube` feature's watched objects, report an object
//! the wire type cannot read in the same words.

use serde_json::Value;

/// Reads `value` in place (no copy of a large object); on error, the key path of the wrong
/// value (`spec.internalSubnets[0].cidr`) and what is wrong with it.
#[cfg(feature = "sim")]
pub(crate) fn typed_at<T: serde::de::DeserializeOwned>(
    value: &Value,
) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(value).map_err(split)
}

/// [`typed_at`] on a value taken by value: its strings move into the result.
#[cfg(feature = "kube")]
pub(crate) fn typed_owned<T: serde::de::DeserializeOwned>(
    value: Value,
) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(value).map_err(split)
}

/// The error's key path (none at the root) and its message as a person reads it.
fn split(e: serde_path_to_error::Error<serde_json::Error>) -> (Option<String>, String) {
    let path = e.path().to_string();
    let why = plain_message(&e.into_inner().to_string());
    ((path != ".").then_some(path), why)
}

/// serde's `invalid type: integer `5`, expected a sequence` as a person reads it:
/// `expected a list, found 5`; other messages unchanged.
pub fn plain_message(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_owned();
    };
    let Some((found, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_owned();
    };
    // serde quotes the value found: integer `5`, string "x", map, sequence, boolean `true`.
    let found = match found.split_once(' ') {
        Some((_, value)) => value.trim_matches('`').to_owned(),
        None => match found {
            "map" => "an object".to_owned(),
            "sequence" => "a list".to_owned(),
            "null" | "unit value" => "null".to_owned(),
            other => other.to_owned(),
        },
    };
    let expected = match expected {
        "a sequence" => "a list",
        "a map" => "an object",
        "a string" => "a string",
        e if e.starts_with("struct ") || e.starts_with("a map") => "an object",
        e if e.starts_with("i64")
            || e.starts_with("u64")
            || e.starts_with("i32")
            || e.starts_with("u32") =>
        {
            "an integer"
        }
        e => e,
    };
    format!("expected {expected}, found {found}")
}
