//! A failed write as JSON: `failWrites.error` in scenario files and `plan --outcome` on the
//! command line read it alike.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::checks::compact;
use super::malformed::type_name;
use crate::outcome::WriteOutcome;
use crate::wire::tree;

/// Why a JSON value is not an API error ([`api_error_from_value`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{why}", key.as_deref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct OutcomeError {
    /// The key at fault, when one is.
    pub key: Option<String>,
    /// What is wrong.
    pub why: String,
}

/// The keys the reader takes: `{code, reason, message}`, or a Kubernetes `Status` object.
// The `Status` fields besides `status` are there for their keys only.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ApiErrorFile {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    reason: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    status: Option<Value>,
    // The rest of a `Status`, whatever their values.
    #[serde(default)]
    kind: IgnoredAny,
    #[serde(default)]
    api_version: IgnoredAny,
    #[serde(default)]
    metadata: IgnoredAny,
    #[serde(default)]
    details: IgnoredAny,
}

/// A failed write as JSON, the one reader (serde, unknown keys refused) the scenario files'
/// `failWrites.error` and the command line's `--outcome` share: `{code, reason, message}`, each optional
/// (no `code`: a transport error), or a whole Kubernetes `Status` object. Refused: unknown
/// keys, a `code` outside 400–599, a `Status` whose `status` is `Success`, and values of
/// the wrong type.
///
/// ```
/// use gateway_reconcile::sim::scenario::api_error_from_value;
/// use serde_json::json;
/// let e = api_error_from_value(&json!({"code": 200})).unwrap_err();
/// assert_eq!(e.to_string(), "code: must be an HTTP error code, 400 to 599 (found 200)");
/// ```
pub fn api_error_from_value(value: &Value) -> Result<WriteOutcome, OutcomeError> {
    if !value.is_object() {
        return Err(not_an_object(type_name(value)));
    }
    from_file(ApiErrorFile::deserialize(value))
}

/// [`api_error_from_value`] of a compact tree (a scenario step's `failWrites.error`), read
/// straight from it: a `Status`'s `details` (a list of causes may be long) is only checked
/// to be JSON, never copied.
pub(crate) fn api_error_from_tree(value: &tree::Value) -> Result<WriteOutcome, OutcomeError> {
    let found = match value {
        tree::Value::Object(_) => {
            return from_file(ApiErrorFile::deserialize(tree::de::Reader(value)));
        }
        tree::Value::Null => "null",
        tree::Value::Bool(_) => "a boolean",
        tree::Value::Number(_) => "a number",
        tree::Value::String(_) => "a string",
        tree::Value::Array(_) => "a list",
    };
    Err(not_an_object(found))
}

/// The error for a value that is not an object (`found`: its type, as messages name it).
fn not_an_object(found: &str) -> OutcomeError {
    OutcomeError {
        key: None,
        why: format!("must be an object {{code, reason, message}} (found {found})"),
    }
}

/// The outcome serde's read of an object gives (`read`), checked.
fn from_file(read: Result<ApiErrorFile, serde_json::Error>) -> Result<WriteOutcome, OutcomeError> {
    let fail = |key: Option<&str>, why: String| OutcomeError {
        key: key.map(str::to_owned),
        why,
    };
    let file = read.map_err(|e| {
        let e = e.to_string();
        match e
            .strip_prefix("unknown field `")
            .and_then(|k| k.split_once('`'))
        {
            Some((key, _)) => fail(
                None,
                format!(
                    "unknown key {} (expected code, reason, message, or a Kubernetes Status)",
                    crate::read_at::quote(key)
                ),
            ),
            None => fail(None, e),
        }
    })?;
    match &file.status {
        None => {}
        Some(Value::String(s)) if s == "Failure" => {}
        Some(Value::String(s)) if s == "Success" => {
            return Err(fail(
                Some("status"),
                "a Status of Success is not a failed write (give \"Applied\")".into(),
            ));
        }
        Some(other) => {
            return Err(fail(
                Some("status"),
                format!("must be \"Failure\" (found {})", compact(other)),
            ));
        }
    }
    let code = match &file.code {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (400..=599).contains(c))
                .ok_or_else(|| {
                    fail(
                        Some("code"),
                        format!(
                            "must be an HTTP error code, 400 to 599 (found {})",
                            compact(v)
                        ),
                    )
                })?,
        ),
    };
    let text = |key: &str, value: &Option<Value>| -> Result<String, OutcomeError> {
        match value {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(fail(
                Some(key),
                format!("must be a string (found {})", type_name(v)),
            )),
        }
    };
    Ok(WriteOutcome::from_parts(
        code,
        &text("reason", &file.reason)?,
        &text("message", &file.message)?,
    ))
}
