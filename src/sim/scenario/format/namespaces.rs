//! `objects.namespaces` of a scenario file and `plan --namespaces`'s Namespace List: each
//! namespace's name and labels checked as the API server takes them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::sim::cluster::Namespaces;
use crate::sim::cluster::store::typed_at;
use crate::sim::scenario::malformed::{ScenarioError, type_name};

/// `objects.namespaces`: each key a namespace name (a DNS-1123 label), each label a valid
/// label key and value, as the API server would take them.
pub(super) fn check_namespaces(namespaces: &Namespaces) -> Result<(), ScenarioError> {
    for (namespace, labels) in namespaces {
        let key = format!("objects.namespaces.{namespace}");
        let labels = labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        namespace_error(namespace, labels).map_err(|(label, why)| ScenarioError::InvalidValue {
            step: None,
            key: match label {
                Some(label) => format!("{key}.{label}"),
                None => key.clone(),
            },
            why,
        })?;
    }
    Ok(())
}

/// A namespace's name and labels as the API server takes them; else the label at fault
/// (`None`: the name) and why.
fn namespace_error<'l>(
    namespace: &str,
    labels: impl IntoIterator<Item = (&'l str, &'l str)>,
) -> Result<(), (Option<String>, String)> {
    if namespace.len() > 63
        || namespace.contains('.')
        || crate::names::subdomain_error(namespace).is_some()
    {
        return Err((
            None,
            "is not a namespace name (a DNS-1123 label: at most 63 lowercase letters, \
             digits and '-', starting and ending with a letter or digit)"
                .into(),
        ));
    }
    for (label, value) in labels {
        if let Some(why) = crate::names::key_error(label) {
            return Err((Some(label.to_owned()), format!("invalid key: {why}")));
        }
        if let Some(why) = crate::names::label_value_error(value) {
            return Err((
                Some(label.to_owned()),
                format!("invalid value {}: {why}", crate::read_at::quote(value)),
            ));
        }
    }
    Ok(())
}

/// A Namespace list as `kubectl get namespaces -o json` prints it (`kind` `List` or
/// `NamespaceList`, or a bare array of Namespaces): the labels of each namespace, read as
/// [`Objects::namespaces`](crate::sim::cluster::Objects::namespaces) of a scenario file
/// are, every name and label checked the same way. Other keys of the list and of each item
/// (`apiVersion`, `spec`, `status`) are ignored. On error, the key path
/// (`items[1].metadata.labels.team`) and why.
pub fn namespace_list(value: &Value) -> Result<crate::NamespaceLabels, (String, String)> {
    #[derive(Deserialize)]
    struct List {
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        items: Option<Vec<Item>>,
    }
    #[derive(Deserialize)]
    struct Item {
        #[serde(default)]
        kind: Option<String>,
        metadata: Meta,
    }
    #[derive(Deserialize)]
    struct Meta {
        name: String,
        #[serde(default)]
        labels: Option<BTreeMap<String, String>>,
    }
    let at = |path: Option<String>, why: String| (path.unwrap_or_default(), why);
    let (items, prefix) = match value {
        Value::Array(_) => (
            typed_at::<Vec<Item>>(value).map_err(|(p, why)| at(p, why))?,
            "",
        ),
        Value::Object(_) => {
            let list = typed_at::<List>(value).map_err(|(p, why)| at(p, why))?;
            if let Some(kind) = list.kind.filter(|k| k != "List" && k != "NamespaceList") {
                return Err((
                    "kind".into(),
                    format!(
                        "expected List or NamespaceList, found {}",
                        crate::read_at::quote(&kind)
                    ),
                ));
            }
            (list.items.unwrap_or_default(), "items")
        }
        other => {
            return Err((
                String::new(),
                format!(
                    "expected a NamespaceList object or an array, found {}",
                    type_name(other)
                ),
            ));
        }
    };
    let mut namespaces = crate::NamespaceLabels::new();
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("{prefix}[{i}]");
        if let Some(kind) = item.kind.filter(|k| k != "Namespace") {
            return Err((
                format!("{path}.kind"),
                format!("expected Namespace, found {}", crate::read_at::quote(&kind)),
            ));
        }
        let labels = item.metadata.labels.unwrap_or_default();
        let pairs = labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        namespace_error(&item.metadata.name, pairs).map_err(|(label, why)| match label {
            Some(label) => (format!("{path}.metadata.labels.{label}"), why),
            None => (format!("{path}.metadata.name"), why),
        })?;
        if namespaces.insert(item.metadata.name, labels).is_some() {
            return Err((
                format!("{path}.metadata.name"),
                "names a namespace listed before it".into(),
            ));
        }
    }
    Ok(namespaces)
}
