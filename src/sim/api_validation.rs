//! What the API server refuses in a written Deployment, with its messages.
//!
//! The simulated API server runs [`refusal`] on every Deployment the crate creates or
//! updates, before defaulting, and answers as a real one does:
//!
//! - a quantity under `resources.requests`/`limits` (containers and init containers) that
//!   does not parse: `400 BadRequest` (the body cannot be decoded), `Deployment in version
//!   "v1" cannot be handled as a Deployment: quantities must match the regular expression
//!   '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`;
//! - otherwise `422 Invalid`, `Deployment.apps "NAME" is invalid: FIELD: Invalid value:
//!   VALUE: WHY` (several errors listed in brackets, comma separated), for: `metadata.name`
//!   not a DNS-1123 subdomain (at most 253 characters); a label value of `metadata.labels`,
//!   `spec.selector.matchLabels` or `spec.template.metadata.labels` longer than 63
//!   characters or not of the label-value form; a negative `spec.replicas`; a negative
//!   quantity.
//!
//! Scenario `patch` steps are the test author's edits, not the crate's writes: they are not
//! checked.

use crate::wire::tree::{Map, Value};

use crate::names;
use crate::outcome::WriteOutcome;
use crate::quantity::Quantity;
use crate::wire::Deployment;

/// The regular expression apimachinery names when a quantity does not parse.
const QUANTITY_REGEX: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/// The API server's answer to a Deployment it refuses; `None` when it takes it.
///
/// ```
/// use gateway_reconcile::sim::api_validation::refusal;
/// use gateway_reconcile::wire::Deployment;
///
/// let d: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": { "name": "lb" }, "spec": { "replicas": -1 }
/// })).unwrap();
/// let refused = refusal(&d).unwrap();
/// assert_eq!(refused.class(), Some(gateway_reconcile::FailureClass::Rejected));
/// assert_eq!(
///     refused.message(),
///     r#"Deployment.apps "lb" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
/// );
/// ```
pub fn refusal(deployment: &Deployment) -> Option<WriteOutcome> {
    let object = &deployment.object;
    let name = deployment.name().unwrap_or("");
    let pod = crate::json::get(object, &["spec", "template", "spec"]).and_then(Value::as_object);
    let containers = ["initContainers", "containers"]
        .into_iter()
        .filter_map(|list| Some((list, pod?.get(list)?.as_array()?)))
        .flat_map(|(list, items)| items.iter().enumerate().map(move |(i, c)| (list, i, c)));
    let mut errors = Vec::new();
    let mut negative = Vec::new();
    for (list, i, container) in containers {
        for part in ["requests", "limits"] {
            let values = container
                .get("resources")
                .and_then(|r| r.get(part))
                .and_then(Value::as_object);
            for (resource, value) in values.into_iter().flatten() {
                let text = match value {
                    Value::String(s) => s.to_string(),
                    Value::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                match text.parse::<Quantity>() {
                    Err(_) => {
                        return Some(WriteOutcome::from_parts(
                            Some(400),
                            "BadRequest",
                            &format!(
                                "Deployment in version \"v1\" cannot be handled as a Deployment: \
                                 quantities must match the regular expression '{QUANTITY_REGEX}'"
                            ),
                        ));
                    }
                    Ok(q) if q.is_negative() => negative.push(format!(
                        "spec.template.spec.{list}[{i}].resources.{part}[{resource}]: \
                         Invalid value: {text:?}: must be greater than or equal to 0"
                    )),
                    Ok(_) => {}
                }
            }
        }
    }
    if let Some(why) = names::subdomain_error(name) {
        errors.push(format!("metadata.name: Invalid value: {name:?}: {why}"));
    }
    let label_maps = [
        ("metadata.labels", &["metadata", "labels"][..]),
        (
            "spec.selector.matchLabels",
            &["spec", "selector", "matchLabels"],
        ),
        (
            "spec.template.metadata.labels",
            &["spec", "template", "metadata", "labels"],
        ),
    ];
    for (field, path) in label_maps {
        let labels = crate::json::get(object, path).and_then(Value::as_object);
        for value in labels.into_iter().flat_map(Map::values) {
            let text = value.as_str().unwrap_or_default();
            if let Some(why) = names::label_value_error(text) {
                errors.push(format!("{field}: Invalid value: {text:?}: {why}"));
            }
        }
    }
    if let Some(replicas) = object
        .get("spec")
        .and_then(|s| s.get("replicas"))
        .and_then(Value::as_i64)
        .filter(|r| *r < 0)
    {
        errors.push(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    errors.extend(negative);
    let detail = match errors.as_slice() {
        [] => return None,
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    Some(WriteOutcome::from_parts(
        Some(422),
        "Invalid",
        &format!("Deployment.apps {name:?} is invalid: {detail}"),
    ))
}

#[cfg(test)]
mod tests;
