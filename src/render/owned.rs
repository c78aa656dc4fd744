//! The owned part of an update render, and how it becomes the full Deployment.
//!
//! An update render computes only the values at [`OWNED_PATHS`]; everything else is the
//! observed Deployment's. The owned part holds those values without copying what the rules
//! leave alone: the values at [`SKELETON_PATHS`] as [`Leaves`], borrowed from the observed
//! Deployment until a rule changes one, and the pod spec's lists as the template's, each
//! container with the few fields the rules change laid over it ([`PodList`]). Drift walks
//! this shape in place ([`crate::drift::drift_owned`]); [`complete`] builds the full
//! Deployment only when there is an update to write.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::json::{self, Leaf, Overlay};
use crate::wire::Deployment;

/// The lists of `spec.template.spec` a render takes from the template.
pub(super) const TEMPLATE_LISTS: [&str; 3] = ["initContainers", "containers", "volumes"];

/// The pod spec of a Deployment.
pub(super) const POD_SPEC: [&str; 3] = ["spec", "template", "spec"];

/// The fields of `spec.template.spec` the rules compute; every other field the template sets
/// there is desired as the template's ([`Owned::pod`]).
pub(super) const RULE_POD_FIELDS: [&str; 5] = [
    "initContainers",
    "containers",
    "volumes",
    "serviceAccountName",
    "readinessGates",
];

/// The required pod anti-affinity terms, under the pod spec's `affinity`.
pub(crate) const ANTI_AFFINITY_TERMS: [&str; 2] = [
    "podAntiAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
];

/// Every path (object keys) whose value an update render computes; the rest of the
/// Deployment is the observed one, untouched, but the fields the template sets in
/// `spec.template.spec` ([`Owned`] holds them apart, since which they are depends on the
/// template). The rules read and write nothing else.
///
/// Paths that share a key at a depth are adjacent, so [`complete`] copies the observed
/// Deployment without them in one walk; the pod spec's lists come last, after the values
/// the rules compute.
pub const OWNED_PATHS: [&[&str]; 17] = [
    &["apiVersion"],
    &["kind"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "labels"],
    &["metadata", "annotations"],
    &["metadata", "ownerReferences"],
    &["spec", "selector"],
    &["spec", "replicas"],
    &["spec", "template", "metadata", "labels"],
    &["spec", "template", "metadata", "annotations"],
    &["spec", "template", "spec", "serviceAccountName"],
    &[
        "spec",
        "template",
        "spec",
        "affinity",
        "podAntiAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
    ],
    &["spec", "template", "spec", "readinessGates"],
    &["spec", "template", "spec", "initContainers"],
    &["spec", "template", "spec", "containers"],
    &["spec", "template", "spec", "volumes"],
];

/// How many of [`OWNED_PATHS`] come before the pod spec's lists.
const SKELETON_LEN: usize = OWNED_PATHS.len() - TEMPLATE_LISTS.len();

/// [`OWNED_PATHS`] but the pod spec's lists, which a render takes from the template.
pub(crate) const SKELETON_PATHS: &[&[&str]] = OWNED_PATHS.split_at(SKELETON_LEN).0;

/// The values at [`SKELETON_PATHS`], in that order, by what they hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    ApiVersion,
    Kind,
    Name,
    Namespace,
    Labels,
    Annotations,
    OwnerReferences,
    Selector,
    Replicas,
    PodLabels,
    PodAnnotations,
    ServiceAccountName,
    AntiAffinity,
    ReadinessGates,
}

// One slot per value, so indexing the leaves by slot stays in bounds.
const _: () = assert!(Slot::ReadinessGates as usize + 1 == SKELETON_LEN);

/// The values at [`SKELETON_PATHS`] while the rules render them: each borrowed from the
/// observed Deployment (update) or the template (create) until a rule changes it, so the
/// steady state copies none of them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaves<'a>(pub(super) [Leaf<'a>; SKELETON_LEN]);

impl<'a> Leaves<'a> {
    /// The values of `object` at [`SKELETON_PATHS`], borrowed.
    pub(super) fn of(object: &'a Map<String, Value>) -> Self {
        Leaves(std::array::from_fn(|i| {
            let path = SKELETON_PATHS.get(i)?;
            json::get(object, path).map(Cow::Borrowed)
        }))
    }

    /// The value of a slot.
    pub(super) fn slot(&mut self, slot: Slot) -> &mut Leaf<'a> {
        // In bounds: `Slot` has SKELETON_LEN variants (asserted at compile time).
        &mut self.0[slot as usize]
    }

    /// Each path with its value, where there is one.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'static [&'static str], &Value)> {
        SKELETON_PATHS
            .iter()
            .zip(&self.0)
            .filter_map(|(path, leaf)| Some((*path, leaf.as_deref()?)))
    }

    /// The value at `path` (one of [`SKELETON_PATHS`]).
    pub(crate) fn get(&self, path: &[&str]) -> Option<&Value> {
        let i = SKELETON_PATHS.iter().position(|p| *p == path)?;
        self.0.get(i)?.as_deref()
    }

    /// Moves the values into `object`, making the objects on the way.
    pub(super) fn put(self, object: &mut Map<String, Value>) {
        for (path, leaf) in SKELETON_PATHS.iter().zip(self.0) {
            let (Some((last, parent)), Some(value)) = (path.split_last(), leaf) else {
                continue;
            };
            json::object_mut(object, parent).insert((*last).to_owned(), value.into_owned());
        }
    }
}

/// The owned part of an update render ([`render_owned`](super::render_owned)): the values
/// at [`OWNED_PATHS`], with the pod spec's lists held as the template's, borrowed, plus the
/// fields the rules change in each container.
#[derive(Debug, Clone, PartialEq)]
pub struct Owned<'a> {
    /// Every owned path but the pod spec's lists.
    pub(super) leaves: Leaves<'a>,
    /// The pod spec's lists, in [`TEMPLATE_LISTS`] order.
    pub(super) lists: [PodList<'a>; 3],
    /// The template's pod spec, whose fields but [`RULE_POD_FIELDS`] are each put in place
    /// whole (a field the template does not set stays as observed). Its `affinity` holds
    /// the template's required anti-affinity terms unrendered: the rendered ones are a leaf
    /// ([`ANTI_AFFINITY_TERMS`] under it), put over it.
    pub(super) pod: Option<&'a Map<String, Value>>,
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
    /// The values at the owned paths but the pod spec's lists.
    pub(crate) fn leaves(&self) -> &Leaves<'a> {
        &self.leaves
    }

    /// The pod spec's lists, by name.
    pub(crate) fn lists(&self) -> impl Iterator<Item = (&'static str, &PodList<'a>)> {
        TEMPLATE_LISTS.into_iter().zip(&self.lists)
    }

    /// The template's pod-spec fields an update puts in place, by name: all but
    /// [`RULE_POD_FIELDS`] and those set to `null` (a null sets nothing).
    pub(crate) fn pod_fields(&self) -> impl Iterator<Item = (&'a str, &'a Value)> + use<'a> {
        self.pod
            .into_iter()
            .flatten()
            .filter(|(k, v)| !v.is_null() && !RULE_POD_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
    }
}

/// The full update render from its owned part ([`render_owned`](super::render_owned) over
/// the same `observed`): the observed Deployment with the template's pod-spec fields put in
/// place, and every path of [`OWNED_PATHS`] replaced by the owned part's value, or removed
/// where the owned part has none.
pub fn complete(observed: &Deployment, owned: Owned<'_>) -> Deployment {
    let mut object = clone_except(&observed.object, &OWNED_PATHS, 0);
    let mut fields = owned.pod_fields().peekable();
    if fields.peek().is_some() {
        let pod = json::object_mut(&mut object, &POD_SPEC);
        for (key, value) in fields {
            pod.insert(key.to_owned(), value.clone());
        }
    }
    // After the template's `affinity`: the rendered anti-affinity terms go into it.
    owned.leaves.put(&mut object);
    put_lists(&mut object, owned.lists);
    Deployment::from_object(object)
}

/// Puts the rendered pod spec lists in place (an absent one stays absent).
pub(super) fn put_lists(object: &mut Map<String, Value>, lists: [PodList<'_>; 3]) {
    for (list, rendered) in TEMPLATE_LISTS.into_iter().zip(lists) {
        let value = match rendered {
            PodList::Absent => continue,
            PodList::Template(value) => value.clone(),
            PodList::Containers(containers) => {
                Value::Array(containers.into_iter().map(Overlay::into_value).collect())
            }
        };
        json::object_mut(object, &POD_SPEC).insert(list.to_owned(), value);
    }
}

/// A deep copy of `map` without the values at `paths` (object keys, their first `depth`
/// keys leading to `map`), in one walk.
pub(super) fn clone_except(
    map: &Map<String, Value>,
    paths: &[&[&str]],
    depth: usize,
) -> Map<String, Value> {
    map.iter()
        .filter_map(|(k, v)| {
            let group = group_of(paths, depth, k);
            if ends_here(group, depth) {
                return None;
            }
            let v = match v {
                Value::Object(inner) if !group.is_empty() => {
                    Value::Object(clone_except(inner, group, depth + 1))
                }
                _ => v.clone(),
            };
            Some((k.clone(), v))
        })
        .collect()
}

/// `paths` grouped by their key at `depth`, in order: paths that share a key at a depth
/// are adjacent in [`OWNED_PATHS`], so each group is a slice. Paths no longer than
/// `depth` are skipped.
fn groups<'p>(
    paths: &'p [&'p [&'p str]],
    depth: usize,
) -> impl Iterator<Item = (&'p str, &'p [&'p [&'p str]])> {
    let mut rest = paths;
    std::iter::from_fn(move || {
        loop {
            let first = rest.first()?;
            let key = first.get(depth);
            let n = rest.iter().take_while(|p| p.get(depth) == key).count();
            let (group, tail) = rest.split_at(n.clamp(1, rest.len()));
            rest = tail;
            if let Some(key) = key {
                return Some((*key, group));
            }
        }
    })
}

/// The group of `paths` whose key at `depth` is `key` (empty if none).
fn group_of<'p>(paths: &'p [&'p [&'p str]], depth: usize, key: &str) -> &'p [&'p [&'p str]] {
    groups(paths, depth)
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, group)| group)
}

/// Whether one of `group` ends at `depth`: the whole value there is at a path.
fn ends_here(group: &[&[&str]], depth: usize) -> bool {
    group.iter().any(|p| p.len() == depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owned_paths_are_grouped_with_the_template_lists_last() {
        // clone_except skips a group of paths that share a key at some depth only when they
        // are adjacent.
        for depth in 0..6 {
            let keys: Vec<Option<&[&str]>> = OWNED_PATHS
                .iter()
                .map(|p| p.get(..=depth).filter(|_| p.len() > depth))
                .collect();
            for (i, key) in keys.iter().enumerate() {
                let Some(key) = key else { continue };
                let later = keys
                    .iter()
                    .skip(i + 1)
                    .position(|k| k.as_ref() != Some(key));
                let again = later.is_some_and(|gap| {
                    keys.iter()
                        .skip(i + 1 + gap)
                        .any(|k| k.as_ref() == Some(key))
                });
                assert!(!again, "{key:?} is split at depth {depth}");
            }
        }
        let lists: Vec<Vec<&str>> = TEMPLATE_LISTS
            .iter()
            .map(|list| POD_SPEC.iter().copied().chain([*list]).collect())
            .collect();
        assert_eq!(OWNED_PATHS[SKELETON_PATHS.len()..], lists);
    }

    #[test]
    fn leaves_borrow_the_values_present_and_nothing_else() {
        let object = json!({
            "apiVersion": "apps/v1",
            "metadata": { "name": "n", "uid": "u", "labels": null },
            "spec": { "replicas": 1, "strategy": {}, "template": { "metadata": "x",
                      "spec": { "serviceAccountName": "s", "hostNetwork": true } } },
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
        assert_eq!(leaves.get(&["spec", "replicas"]), Some(&json!(1)));
    }

    #[test]
    fn slots_name_the_skeleton_paths_in_order() {
        let empty = Map::new();
        let mut leaves = Leaves::of(&empty);
        let named = [
            (Slot::ApiVersion, &["apiVersion"][..]),
            (Slot::Labels, &["metadata", "labels"]),
            (Slot::Selector, &["spec", "selector"]),
            (
                Slot::PodAnnotations,
                &["spec", "template", "metadata", "annotations"],
            ),
            (
                Slot::ReadinessGates,
                &["spec", "template", "spec", "readinessGates"],
            ),
        ];
        for (slot, path) in named {
            *leaves.slot(slot) = Some(Cow::Owned(json!(path.join("."))));
            assert_eq!(leaves.get(path), Some(&json!(path.join("."))), "{slot:?}");
        }
        assert_eq!(Slot::ReadinessGates as usize + 1, SKELETON_LEN);
    }
}
