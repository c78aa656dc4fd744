//! A state's fingerprint, for the test kit's exhaustive explorer
//! ([`testing::explore`](crate::testing::explore)): a hash of everything that decides what
//! the simulated cluster and the controller's loop do next, and of nothing that only counts.
//!
//! Left out: the `resourceVersion`s (every write makes a new one, so no state would ever be
//! seen twice; in the simulator the controller always reads the current one, so which
//! number it is never changes a decision), the write counters, and the counters the server
//! names new objects with (a renaming, not a change of behaviour).

use std::hash::{Hash, Hasher};

use super::Cluster;
use crate::wire::tree;

impl Cluster {
    /// Feeds the state's fingerprint to `state` (see the [module docs](self)).
    pub(crate) fn fingerprint(&self, state: &mut impl Hasher) {
        for object in [
            self.gateway_class.as_ref(),
            Some(&self.gateway),
            self.configuration.as_ref(),
        ] {
            hash_object(object, state);
        }
        hash_deployments(self.deployment.as_ref(), &self.template, state);
        format!("{:?}{:?}", self.routes, self.namespaces).hash(state);
        self.configuration_unchecked.hash(state);
        self.server.hash_state(state);
        self.driver.hash_records(state);
        self.due.hash(state);
        // The revisions kept for lagging reads (none unless a test takes a snapshot).
        format!("{:?}", self.lag).hash(state);
    }
}

/// An object, or its absence, without its `resourceVersion`s.
pub(crate) fn hash_object(object: Option<&tree::Value>, state: &mut impl Hasher) {
    match object {
        None => 0u8.hash(state),
        Some(value) => {
            1u8.hash(state);
            hash_tree(value, state);
        }
    }
}

/// The LB Deployment (or its absence) and the template, without `resourceVersion`s.
pub(crate) fn hash_deployments(
    deployment: Option<&crate::wire::Deployment>,
    template: &crate::wire::Deployment,
    state: &mut impl Hasher,
) {
    match deployment {
        None => 0u8.hash(state),
        Some(deployment) => {
            1u8.hash(state);
            hash_map(&deployment.object, state);
        }
    }
    hash_map(&template.object, state);
}

/// A tree, every `resourceVersion` key left out. Each value is tagged with its kind, and
/// each list and object with its length, so that no two different trees feed the same
/// sequence.
pub(crate) fn hash_tree(value: &tree::Value, state: &mut impl Hasher) {
    match value {
        tree::Value::Null => 0u8.hash(state),
        tree::Value::Bool(b) => (1u8, *b).hash(state),
        tree::Value::Number(n) => (2u8, n.to_string()).hash(state),
        tree::Value::String(s) => (3u8, s.as_str()).hash(state),
        tree::Value::Array(list) => {
            (4u8, list.len()).hash(state);
            for item in list.iter() {
                hash_tree(item, state);
            }
        }
        tree::Value::Object(map) => hash_map(map, state),
    }
}

/// An object of a tree, as [`hash_tree`] hashes one.
pub(crate) fn hash_map(map: &tree::Map, state: &mut impl Hasher) {
    let kept = || map.iter().filter(|(k, _)| *k != "resourceVersion");
    (5u8, kept().count()).hash(state);
    for (key, item) in kept() {
        key.hash(state);
        hash_tree(item, state);
    }
}
