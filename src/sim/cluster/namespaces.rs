//! [`Namespaces`]: the namespaces' labels a [`Cluster`](super::Cluster) holds, compactly.

use std::collections::BTreeMap;

use crate::reconcile::Labels;
use crate::snapshot::NamespaceLabels;

/// The namespaces' labels (namespace → labels), for `allowedRoutes` selectors; a namespace
/// not listed has none the controller can see.
///
/// Held as sorted lists, not as maps: a map of maps costs about 500 bytes a namespace
/// whatever its labels (a tree node of its own), where a namespace with one label is a
/// few dozen bytes of text. The controller asks for one namespace at a time
/// ([`Namespaces::get`]), by key.
///
/// ```
/// use gateway_reconcile::sim::cluster::Namespaces;
/// let namespaces: Namespaces = [
///     ("tenant".to_owned(), [("team".to_owned(), "blue".to_owned())].into()),
///     ("other".to_owned(), Default::default()),
/// ]
/// .into_iter()
/// .collect();
/// assert_eq!(namespaces.len(), 2);
/// assert_eq!(namespaces.get("tenant").unwrap()["team"], "blue");
/// assert!(namespaces.get("other").unwrap().is_empty());
/// assert_eq!(namespaces.get("absent"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Namespaces {
    /// Sorted by name, each name once; each namespace's labels sorted by key, each once.
    entries: Vec<(String, Vec<(String, String)>)>,
}

impl Namespaces {
    /// No namespace.
    pub fn new() -> Self {
        Namespaces::default()
    }

    /// How many namespaces.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The labels of namespace `name` (`None`: not listed), as the controller reads them.
    pub fn get(&self, name: &str) -> Option<Labels> {
        self.labels(name)
            .map(|labels| labels.iter().cloned().collect())
    }

    /// The labels of namespace `name`, sorted by key, without a copy.
    pub fn labels(&self, name: &str) -> Option<&[(String, String)]> {
        let at = self
            .entries
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        self.entries.get(at).map(|(_, labels)| labels.as_slice())
    }

    /// Each namespace and its labels, sorted by name.
    pub fn iter(&self) -> std::slice::Iter<'_, (String, Vec<(String, String)>)> {
        self.entries.iter()
    }

    /// From entries sorted by name, each name once, their labels sorted by key, each key
    /// once (the strict reader's, which refuses a name or a key given twice).
    pub(crate) fn from_sorted(entries: Vec<(String, Vec<(String, String)>)>) -> Self {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Namespaces { entries }
    }

    /// As a map of maps (what [`Snapshot::with_namespace_labels`](crate::Snapshot) takes).
    pub fn to_map(&self) -> NamespaceLabels {
        self.entries
            .iter()
            .map(|(name, labels)| (name.clone(), labels.iter().cloned().collect()))
            .collect()
    }
}

/// Later entries of a name replace earlier ones, as a map's `insert` does.
impl FromIterator<(String, Labels)> for Namespaces {
    fn from_iter<I: IntoIterator<Item = (String, Labels)>>(iter: I) -> Self {
        let map: BTreeMap<String, Labels> = iter.into_iter().collect();
        Namespaces::from(map)
    }
}

impl From<NamespaceLabels> for Namespaces {
    fn from(map: NamespaceLabels) -> Self {
        Namespaces {
            entries: map
                .into_iter()
                .map(|(name, labels)| (name, labels.into_iter().collect()))
                .collect(),
        }
    }
}

impl IntoIterator for Namespaces {
    type Item = (String, Labels);
    type IntoIter = std::iter::Map<
        std::vec::IntoIter<(String, Vec<(String, String)>)>,
        fn((String, Vec<(String, String)>)) -> (String, Labels),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries
            .into_iter()
            .map(|(name, labels)| (name, labels.into_iter().collect()))
    }
}

impl<'a> IntoIterator for &'a Namespaces {
    type Item = &'a (String, Vec<(String, String)>);
    type IntoIter = std::slice::Iter<'a, (String, Vec<(String, String)>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}
