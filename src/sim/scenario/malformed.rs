//! Why a scenario file is malformed, and where: the step, the key path and (from the text)
//! the line.

use serde_json::Value;

use crate::read_at::quote;

/// Free text of a message (a context naming a key path) cut as [`quote`] cuts values.
fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(crate::read_at::QUOTED_CHARACTERS) {
        None => text.into(),
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()).into(),
    }
}

/// Why a scenario file is malformed. Every message names the step (1-based) and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not JSON.
    #[error("invalid JSON at line {line}, column {column}: {why}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        why: String,
    },
    /// A key the format does not have.
    #[error("{}unknown key {} in {}", at(*.step), quote(key), cut(context))]
    UnknownKey {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key.
        key: String,
        /// Where it was, e.g. `reconcile step` or `expect.conditions.Programmed`.
        context: String,
    },
    /// A required key is missing.
    #[error("{}missing key {} in {}", at(*.step), quote(key), cut(context))]
    MissingKey {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key.
        key: String,
        /// Where it should be.
        context: String,
    },
    /// A value of the wrong JSON type.
    #[error("{}{} must be {expected} (found {found})", at(*.step), quote(key))]
    WrongType {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key, dotted from the step (or the top level).
        key: String,
        /// What it must be.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A value of the right type that is not valid.
    #[error("{}{}: {why}", at(*.step), quote(key))]
    InvalidValue {
        /// The step, when inside one.
        step: Option<usize>,
        /// The key, dotted from the step (or the top level).
        key: String,
        /// What is wrong.
        why: String,
    },
    /// A step whose verb is not one of the format's.
    #[error(
        "step {step}: unknown step {} (expected one of reconcile, advance, patch, \
         delete, failWrites, rollout, mutateWrites, restart, unreadable, snapshot, staleReads, catchUp, recreate)",
        quote(verb)
    )]
    UnknownVerb {
        /// The step.
        step: usize,
        /// The verb found.
        verb: String,
    },
    /// A step with no verb, or with two.
    #[error("step {step}: {why}")]
    BadStep {
        /// The step.
        step: usize,
        /// What is wrong.
        why: String,
    },
    /// Another error, with the line of the file where it is.
    #[error("line {line}: {error}")]
    Located {
        /// 1-based line.
        line: usize,
        /// The error.
        error: Box<ScenarioError>,
    },
}

impl ScenarioError {
    /// The step (1-based) the error is in, if any.
    pub(super) fn step(&self) -> Option<usize> {
        match self {
            ScenarioError::Json { .. } => None,
            ScenarioError::UnknownKey { step, .. }
            | ScenarioError::MissingKey { step, .. }
            | ScenarioError::WrongType { step, .. }
            | ScenarioError::InvalidValue { step, .. } => *step,
            ScenarioError::UnknownVerb { step, .. } | ScenarioError::BadStep { step, .. } => {
                Some(*step)
            }
            ScenarioError::Located { error, .. } => error.step(),
        }
    }

    /// The key path from the top of the file, as far as the error knows it.
    pub(super) fn path(&self) -> Vec<String> {
        let mut path = Vec::new();
        if let Some(step) = self.step() {
            path.push("steps".to_owned());
            path.push(format!("[{}]", step - 1));
        }
        let key = match self {
            ScenarioError::UnknownKey { context, key, .. } => {
                // The context names where the key is; a step's context is the step itself.
                let mut k = if context.ends_with(" step") || context == "the scenario" {
                    String::new()
                } else {
                    format!("{context}.")
                };
                k.push_str(key);
                k
            }
            ScenarioError::MissingKey { context, .. } => {
                if context.ends_with(" step") || context == "the scenario" {
                    String::new()
                } else {
                    context.clone()
                }
            }
            ScenarioError::WrongType { key, .. } | ScenarioError::InvalidValue { key, .. } => {
                key.clone()
            }
            _ => String::new(),
        };
        path.extend(key_path(&key));
        path
    }
}

/// `a.b[2].c` as segments `a`, `b`, `[2]`, `c`.
fn key_path(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in key.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                out.push(rest[..i].to_owned());
            }
            rest = &rest[i..];
            while let Some(end) = rest.find(']') {
                out.push(rest[..=end].to_owned());
                rest = &rest[end + 1..];
            }
        } else {
            out.push(rest.to_owned());
        }
    }
    out
}

fn at(step: Option<usize>) -> String {
    step.map(|s| format!("step {s}: ")).unwrap_or_default()
}

/// How a message names the JSON type of a value.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// [`type_name`] of a compact tree.
pub(crate) fn tree_type_name(v: &crate::wire::tree::Value) -> &'static str {
    use crate::wire::tree::Value as Tree;
    match v {
        Tree::Null => "null",
        Tree::Bool(_) => "a boolean",
        Tree::Number(_) => "a number",
        Tree::String(_) => "a string",
        Tree::Array(_) => "a list",
        Tree::Object(_) => "an object",
    }
}

/// A value as a message quotes it: a string quoted and cut ([`quote`]), a list or an object
/// by its type, anything else as JSON.
pub(crate) fn quoted_tree_value(v: &crate::wire::tree::Value) -> String {
    use crate::wire::tree::Value as Tree;
    match v {
        Tree::String(s) => quote(s),
        Tree::Array(_) | Tree::Object(_) => tree_type_name(v).to_owned(),
        other => other.to_string(),
    }
}

/// A serde error reading the file (its key path from serde_path_to_error) as the error that
/// names the step and the key. `keys_error` gives the error of step N's keys (1-based), when
/// they have one: an error inside a step is first an error of its keys. The format that
/// knows the verbs says it, so that this module knows none.
pub(super) fn from_serde(
    error: &serde_path_to_error::Error<serde_json::Error>,
    keys_error: impl Fn(usize) -> Option<ScenarioError>,
) -> ScenarioError {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = error.path().iter().collect();
    match segments.as_slice() {
        [Segment::Map { key }, Segment::Seq { index }, rest @ ..] if key == "steps" => {
            named(error.inner(), Some(index + 1), rest, keys_error)
        }
        all => named(error.inner(), None, all, keys_error),
    }
}

/// [`from_serde`] for an error reading step `number` (1-based) alone: its key path starts
/// inside the step.
pub(super) fn from_step_serde(
    error: &serde_path_to_error::Error<serde_json::Error>,
    number: usize,
    keys_error: impl Fn(usize) -> Option<ScenarioError>,
) -> ScenarioError {
    let segments: Vec<&serde_path_to_error::Segment> = error.path().iter().collect();
    named(error.inner(), Some(number), &segments, keys_error)
}

/// A serde error at `segments` (from the top of the file, or from inside `step`).
fn named(
    error: &serde_json::Error,
    step: Option<usize>,
    segments: &[&serde_path_to_error::Segment],
    keys_error: impl Fn(usize) -> Option<ScenarioError>,
) -> ScenarioError {
    use serde_path_to_error::Segment;
    let message = error.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(why, _)| why);
    let mut segments = segments;
    // The path of an unknown key ends with the key: the place is where it was found (not
    // in the settings, whose messages name the key as the crate's own reader does).
    if let (Some(field), Some((Segment::Map { key }, before))) =
        (quoted(message, "unknown field `"), segments.split_last())
        && *key == field
        && (step.is_some()
            || !matches!(segments.first(), Some(Segment::Map { key }) if key == "settings"))
    {
        segments = before;
    }
    let mut key = String::new();
    for segment in segments {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: k } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(k);
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    // Inside a step, its keys are read first: a step with a wrong key is told so, whatever
    // its values.
    if let Some(e) = step.and_then(&keys_error) {
        return e;
    }
    let plain = crate::sim::strict_json::plain_message;
    // Settings and routes are the crate's own types: their messages are kept as they say
    // them, after the key path.
    if step.is_none() && key.starts_with("objects.routes") {
        return ScenarioError::InvalidValue {
            step,
            key,
            why: plain(message),
        };
    }
    // A settings object of the wrong type is told as any other; inside it, the crate's.
    let in_settings = key == "settings" || key.starts_with("settings.");
    if step.is_none()
        && in_settings
        && (key != "settings" || !message.starts_with("invalid type: "))
    {
        let message = message.strip_prefix("settings: ").unwrap_or(message);
        return ScenarioError::InvalidValue {
            step,
            key,
            why: plain(message),
        };
    }
    let context = || match (step, key.as_str()) {
        (None, "") => "the scenario".to_owned(),
        // A step's own keys were checked above (`keys_error`).
        (Some(_), "") => "step".to_owned(),
        _ => key.clone(),
    };
    if let Some(field) = quoted(message, "unknown field `") {
        return ScenarioError::UnknownKey {
            step,
            key: field,
            context: context(),
        };
    }
    if let Some(field) = quoted(message, "missing field `") {
        return ScenarioError::MissingKey {
            step,
            key: field,
            context: context(),
        };
    }
    let whole = |key: String| match (step, key.is_empty()) {
        (Some(_), true) => "step".to_owned(),
        (None, true) => "scenario".to_owned(),
        _ => key,
    };
    if let Some((found, expected)) = wrong_type(message) {
        return ScenarioError::WrongType {
            step,
            key: whole(key),
            expected,
            found,
        };
    }
    ScenarioError::InvalidValue {
        step,
        key: whole(key),
        why: plain(message),
    }
}

/// `x` in `unknown field `x`, expected ...`.
fn quoted(message: &str, prefix: &str) -> Option<String> {
    let rest = message.strip_prefix(prefix)?;
    rest.split_once('`').map(|(field, _)| field.to_owned())
}

/// serde's `invalid type: integer `5`, expected a string` as the JSON type found and what
/// was expected, in the words of [`ScenarioError::WrongType`].
fn wrong_type(message: &str) -> Option<(&'static str, &'static str)> {
    let rest = message.strip_prefix("invalid type: ")?;
    let (found, expected) = rest.rsplit_once(", expected ")?;
    let found = match found.split_once(' ').map_or(found, |(kind, _)| kind) {
        "integer" | "floating" => "a number",
        "string" => "a string",
        "boolean" => "a boolean",
        "map" => "an object",
        "sequence" => "a list",
        "null" | "unit" => "null",
        _ => return None,
    };
    let expected = match expected {
        "a string" => "a string",
        "a boolean" => "a boolean",
        "a sequence" => "a list",
        "a map" => "an object",
        e if e.starts_with("struct ") => "an object",
        "i64" | "u64" | "i32" | "u32" => "an integer",
        _ => return None,
    };
    Some((found, expected))
}
