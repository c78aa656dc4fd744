//! The owned part of a render, and how it becomes the whole Deployment.
//!
//! A render computes only the owned fields ([`Field`]); everything else is the observed
//! Deployment's (update) or the template's (create). The owned part holds those values
//! without copying what the rules leave alone: the values as [`Leaves`], borrowed until a
//! rule changes one, and the pod spec's lists as the template's, each container with the
//! few fields the rules change laid over it ([`PodList`]). Drift walks this shape in place
//! ([`crate::drift::drift_owned`]); [`complete`] builds the whole Deployment only when there
//! is something to write.

use std::borrow::Cow;

use crate::wire::tree::{Map, Value};

use super::fields::{Field, POD_SPEC, is_rule_pod_field};
use crate::json::{self, Leaf, Overlay};
use crate::wire::Deployment;

/// The values of the owned fields while the rules render them, indexed by [`Field`]: each
/// borrowed from the observed Deployment (update) or the template (create) until a rule
/// changes it, so the steady state copies none of them. The template lists' places stay
/// empty ([`Owned::lists`] holds them).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaves<'a>(pub(super) [Leaf<'a>; Field::ALL.len()]);

impl<'a> Leaves<'a> {
    /// The values of `object` at the owned fields but the template lists, borrowed.
    pub(super) fn of(object: &'a Map) -> Self {
        Leaves(Field::ALL.map(|field| {
            if field.is_template_list() {
                return None;
            }
            json::get(object, field.path()).map(Cow::Borrowed)
        }))
    }

    /// The value of a field.
    pub(super) fn slot(&mut self, field: Field) -> &mut Leaf<'a> {
        // In bounds: `Field::ALL` holds every variant at its index (asserted at compile time).
        &mut self.0[field as usize]
    }

    /// Each field with its value, where there is one.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Field, &Value)> {
        Field::ALL
            .into_iter()
            .zip(&self.0)
            .filter_map(|(field, leaf)| Some((field, leaf.as_deref()?)))
    }

    /// The value of a field.
    pub(crate) fn get(&self, field: Field) -> Option<&Value> {
        self.0.get(field as usize)?.as_deref()
    }

    /// Moves the values into `object`, making the objects on the way.
    pub(super) fn put(self, object: &mut Map) {
        for (field, leaf) in Field::ALL.into_iter().zip(self.0) {
            let (Some((last, parent)), Some(value)) = (field.path().split_last(), leaf) else {
                continue;
            };
            json::object_mut(object, parent).insert(*last, value.into_owned());
        }
    }
}

/// The owned part of a render ([`render_owned`](super::render_owned)): the values of the
/// owned fields, with the pod spec's lists held as the template's, borrowed, plus the
/// fields the rules change in each container.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Owned<'a> {
    /// Every owned field but the pod spec's lists.
    pub(super) leaves: Leaves<'a>,
    /// The pod spec's lists, in [`Field::TEMPLATE_LISTS`] order.
    pub(super) lists: [PodList<'a>; 3],
    /// The template's pod spec, whose fields but the rules' are each put in place whole (a
    /// field the template does not set stays as observed). Its `affinity` holds the
    /// template's required anti-affinity terms unrendered: the rendered ones are a leaf
    /// ([`Field::AntiAffinity`]), put over it.
    pub(super) pod: Option<&'a Map>,
}

/// One list of the pod spec as a render takes it from the template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PodList<'a> {
    /// The template has none: the render removes the list.
    Absent,
    /// The template's value as it is (the volumes; a container list that is not a list).
    Template(&'a Value),
    /// The template's containers, each with the fields the rules render.
    Containers(Vec<Overlay<'a>>),
}

impl<'a> Owned<'a> {
    /// The values of the owned fields but the pod spec's lists.
    pub(crate) fn leaves(&self) -> &Leaves<'a> {
        &self.leaves
    }

    /// The pod spec's lists, by field.
    pub(crate) fn lists(&self) -> impl Iterator<Item = (Field, &PodList<'a>)> {
        Field::TEMPLATE_LISTS.into_iter().zip(&self.lists)
    }

    /// The template's pod-spec fields an update puts in place, by name: all but the rules'
    /// and those set to `null` (a null sets nothing).
    pub(crate) fn pod_fields(&self) -> impl Iterator<Item = (&'a str, &'a Value)> + use<'a> {
        self.pod
            .into_iter()
            .flatten()
            .filter(|(k, v)| !v.is_null() && !is_rule_pod_field(k))
    }
}

/// The whole render from its owned part ([`render_owned`](super::render_owned) over the
/// same `base`: the observed Deployment, or the template): `base` with the template's
/// pod-spec fields put in place, and every owned field replaced by the owned part's value,
/// or removed where the owned part has none.
pub(crate) fn complete(base: &Deployment, owned: Owned<'_>) -> Deployment {
    let paths = Field::ALL.map(Field::path);
    let mut object = clone_except(&base.object, &paths, 0);
    let mut fields = owned.pod_fields().peekable();
    if fields.peek().is_some() {
        // One merge: a template's pod spec can have many fields.
        json::object_mut(&mut object, &POD_SPEC).extend(fields.map(|(k, v)| (k, v.clone())));
    }
    // After the template's `affinity`: the rendered anti-affinity terms go into it.
    owned.leaves.put(&mut object);
    put_lists(&mut object, owned.lists);
    Deployment::from_object(object)
}

/// Puts the rendered pod spec lists in place (an absent one stays absent).
fn put_lists(object: &mut Map, lists: [PodList<'_>; 3]) {
    for (field, rendered) in Field::TEMPLATE_LISTS.into_iter().zip(lists) {
        let (Some(list), value) = (field.pod_key(), rendered) else {
            continue;
        };
        let value = match value {
            PodList::Absent => continue,
            PodList::Template(value) => value.clone(),
            PodList::Containers(containers) => {
                Value::Array(containers.into_iter().map(Overlay::into_value).collect())
            }
        };
        json::object_mut(object, &POD_SPEC).insert(list, value);
    }
}

/// A deep copy of `map` without the values at `paths` (object keys, their first `depth`
/// keys leading to `map`).
fn clone_except(map: &Map, paths: &[&[&str]], depth: usize) -> Map {
    map.iter()
        .filter_map(|(k, v)| {
            let below: Vec<&[&str]> = paths
                .iter()
                .copied()
                .filter(|p| p.get(depth) == Some(&k))
                .collect();
            if below.iter().any(|p| p.len() == depth + 1) {
                return None;
            }
            let v = match v {
                Value::Object(inner) if !below.is_empty() => {
                    Value::Object(clone_except(inner, &below, depth + 1))
                }
                _ => v.clone(),
            };
            Some((k, v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tree::tree_json as json;

    #[test]
    fn leaves_borrow_the_values_present_and_nothing_else() {
        let object = json!({
            "apiVersion": "apps/v1",
            "metadata": { "name": "n", "uid": "u", "labels": null },
            "spec": { "replicas": 1, "strategy": {}, "template": { "metadata": "x",
                      "spec": { "serviceAccountName": "s", "hostNetwork": true,
                                "containers": [] } } },
            "status": {}
        });
        let leaves = Leaves::of(object.as_object().unwrap());
        let mut rebuilt = Map::new();
        leaves.clone().put(&mut rebuilt);
        assert_eq!(
            Value::Object(rebuilt),
            json!({
                "apiVersion": "apps/v1",
                "metadata": { "name": "n", "labels": null },
                "spec": { "replicas": 1, "template": { "spec": { "serviceAccountName": "s" } } }
            })
        );
        assert!(
            leaves
                .0
                .iter()
                .flatten()
                .all(|l| matches!(l, Cow::Borrowed(_)))
        );
        assert_eq!(leaves.get(Field::Replicas), Some(&json!(1)));
        assert_eq!(leaves.get(Field::Containers), None);
    }

    #[test]
    fn clone_except_leaves_out_exactly_the_paths() {
        let object = json!({
            "a": 1,
            "m": { "x": 1, "y": { "z": 2, "w": 3 } },
            "n": { "x": 4 },
            "s": "not an object"
        });
        let paths: [&[&str]; 4] = [&["m", "y", "z"], &["n"], &["s", "t"], &["m", "q"]];
        let copy = clone_except(object.as_object().unwrap(), &paths, 0);
        assert_eq!(
            Value::Object(copy),
            json!({ "a": 1, "m": { "x": 1, "y": { "w": 3 } }, "s": "not an object" })
        );
    }
}
