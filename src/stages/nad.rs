//! The Multus networks annotation (`k8s.v1.cni.cncf.io/networks`): parse, merge, write.
//!
//! The forms the annotation takes and the order of the merged selections are public
//! documentation: the section "The LB Deployment" of [`crate::reconcile`].

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The pod-template annotation that lists the secondary networks.
pub const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";

/// One network selection: a NetworkAttachmentDefinition and the interface it gets.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NetworkSelection {
    /// NAD name.
    pub name: String,
    /// NAD namespace (never empty once resolved).
    pub namespace: String,
    /// Interface name in the Pod (may be empty when the annotation names none).
    pub interface: String,
}

/// Parses an annotation value; `default_namespace` fills selections that name none.
/// Malformed items (shorthand with an empty name, JSON entries without a string `name`) are
/// skipped; text that is neither a JSON list nor shorthand yields what could be read.
pub fn parse_annotation(text: &str, default_namespace: &str) -> Vec<NetworkSelection> {
    let trimmed = text.trim();
    if trimmed.starts_with('[') {
        let Ok(Value::Array(items)) = serde_json::from_str::<Value>(trimmed) else {
            return Vec::new();
        };
        return items
            .iter()
            .filter_map(|item| {
                let item = item.as_object()?;
                let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
                let name = field("name");
                if name.is_empty() {
                    return None;
                }
                Some(selection(
                    name,
                    field("namespace"),
                    field("interface"),
                    default_namespace,
                ))
            })
            .collect();
    }
    trimmed
        .split(',')
        .filter_map(|item| {
            let item = item.trim();
            let (path, interface) = match item.split_once('@') {
                Some((p, i)) => (p, i),
                None => (item, ""),
            };
            let (namespace, name) = match path.split_once('/') {
                Some((ns, n)) => (ns, n),
                None => ("", path),
            };
            if name.is_empty() || name.contains('/') || interface.contains('@') {
                return None;
            }
            Some(selection(name, namespace, interface, default_namespace))
        })
        .collect()
}

fn selection(name: &str, namespace: &str, interface: &str, default_ns: &str) -> NetworkSelection {
    NetworkSelection {
        name: name.to_owned(),
        namespace: if namespace.is_empty() {
            default_ns
        } else {
            namespace
        }
        .to_owned(),
        interface: interface.to_owned(),
    }
}

/// The template's selections not repeated (same namespace, name and interface) by the
/// GatewayConfiguration, then the GatewayConfiguration's in order (validation uses
/// [`merge_owned`]).
#[cfg(test)]
pub fn merge(
    template: &[NetworkSelection],
    configuration: &[NetworkSelection],
) -> Vec<NetworkSelection> {
    merge_owned(template, configuration.to_vec())
}

/// [`merge`], taking the GatewayConfiguration's selections by value (moved, not copied).
pub(crate) fn merge_owned(
    template: &[NetworkSelection],
    configuration: Vec<NetworkSelection>,
) -> Vec<NetworkSelection> {
    let overridden: BTreeSet<&NetworkSelection> = configuration.iter().collect();
    let mut merged: Vec<NetworkSelection> = template
        .iter()
        .filter(|s| !overridden.contains(s))
        .cloned()
        .collect();
    merged.extend(configuration);
    merged
}

/// The annotation value: a JSON list of `{"name","namespace","interface"}`.
pub fn to_annotation(list: &[NetworkSelection]) -> String {
    /// The wire form, fields in the order Multus documents them.
    #[derive(Serialize)]
    struct Item<'a> {
        name: &'a str,
        namespace: &'a str,
        #[serde(skip_serializing_if = "str::is_empty")]
        interface: &'a str,
    }
    let items: Vec<Item<'_>> = list
        .iter()
        .map(|s| Item {
            name: &s.name,
            namespace: &s.namespace,
            interface: &s.interface,
        })
        .collect();
    // Serializing plain strings cannot fail.
    serde_json::to_string(&items).unwrap_or_default()
}

/// True when `text` lists the same selections as `list`, in any order.
pub fn same_set(text: &str, default_namespace: &str, list: &[NetworkSelection]) -> bool {
    let parsed: BTreeSet<NetworkSelection> = parse_annotation(text, default_namespace)
        .into_iter()
        .collect();
    let wanted: BTreeSet<&NetworkSelection> = list.iter().collect();
    parsed.len() == wanted.len() && parsed.iter().all(|s| wanted.contains(s))
}

#[cfg(test)]
mod tests;
