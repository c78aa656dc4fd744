//! A JSON object of a tree: its entries sorted by key, each key once, in one of two forms.
//!
//! Nearly every object of a Kubernetes manifest has a few keys, and is read once and rarely
//! changed: it is held as one exact-size slice (a two-key object: one allocation of two
//! 48-byte entries). A slice has no spare room, so an insert makes a new one, which would
//! make an object grown one key at a time (an annotation a patch, by a hostile scenario)
//! cost the square of its size. So an object of more than [`MANY`] entries is held in a
//! B-tree instead: an insert or a remove costs the logarithm of its size, and a B-tree built
//! from sorted entries (as reading builds one) packs its nodes full, about the slice's
//! size. Both forms iterate in key order and compare equal by their entries.

use std::collections::{BTreeMap, btree_map};

use super::{Str, Value};

/// Objects with at most this many entries are scanned, not searched.
const SCAN: usize = 16;

/// Objects with more entries than this are held in a B-tree: the most an insert into the
/// slice form copies is this many entries (6 KiB).
pub(super) const MANY: usize = 128;

/// A JSON object: its entries sorted by key, each key once.
#[derive(Debug, Clone)]
pub struct Map {
    entries: Entries,
}

/// The two forms of an object's entries (see the module's docs).
#[derive(Debug, Clone)]
enum Entries {
    /// At most [`MANY`] entries (or fewer left by removes), sorted, with no spare room.
    Few(Box<[(Str, Value)]>),
    /// More than [`MANY`] entries.
    #[allow(
        clippy::box_collection,
        reason = "a BTreeMap is three words; boxed, the form fits beside the slice's two and a Value stays three"
    )]
    Many(Box<BTreeMap<Str, Value>>),
}

impl Default for Map {
    fn default() -> Map {
        Map {
            entries: Entries::Few(Box::default()),
        }
    }
}

impl PartialEq for Map {
    /// The same entries, whichever form holds them.
    fn eq(&self, other: &Map) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Map {
    /// An empty object.
    pub fn new() -> Map {
        Map::default()
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.entries {
            Entries::Few(few) => few.get(position(few, key)?).map(|(_, v)| v),
            Entries::Many(many) => many.get(key),
        }
    }

    /// The value of `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match &mut self.entries {
            Entries::Few(few) => {
                let i = position(few, key)?;
                few.get_mut(i).map(|(_, v)| v)
            }
            Entries::Many(many) => many.get_mut(key),
        }
    }

    /// Whether the object has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: impl Into<Str>, value: Value) -> Option<Value> {
        let key = key.into();
        self.grow();
        match &mut self.entries {
            Entries::Few(few) => match find(few, &key) {
                Ok(i) => few.get_mut(i).map(|(_, v)| std::mem::replace(v, value)),
                Err(i) => {
                    *few = inserted(std::mem::take(few), i, (key, value));
                    None
                }
            },
            Entries::Many(many) => many.insert(key, value),
        }
    }

    /// Removes `key`; the value it had, if any.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        match &mut self.entries {
            Entries::Few(few) => {
                let i = position(few, key)?;
                let (entries, (_, value)) = removed(std::mem::take(few), i)?;
                *few = entries;
                Some(value)
            }
            Entries::Many(many) => many.remove(key),
        }
    }

    /// The entry of `key`, to read or fill in place.
    pub fn entry(&mut self, key: impl Into<Str>) -> Entry<'_> {
        Entry {
            map: self,
            key: key.into(),
        }
    }

    /// Keeps the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut Value) -> bool) {
        match &mut self.entries {
            Entries::Few(few) => {
                let mut entries = std::mem::take(few).into_vec();
                entries.retain_mut(|(k, v)| keep(k, v));
                *few = super::exact(entries).into_boxed_slice();
            }
            Entries::Many(many) => many.retain(|k, v| keep(k, v)),
        }
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        *self = Map::new();
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match &self.entries {
            Entries::Few(few) => few.len(),
            Entries::Many(many) => many.len(),
        }
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.entries {
            Entries::Few(few) => IterForm::Few(few.iter()),
            Entries::Many(many) => IterForm::Many(many.iter()),
        })
    }

    /// The entries, in key order, with the values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(match &mut self.entries {
            Entries::Few(few) => IterMutForm::Few(few.iter_mut()),
            Entries::Many(many) => IterMutForm::Many(many.iter_mut()),
        })
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.iter().map(|(_, v)| v)
    }

    /// The values, in key order, mutable.
    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.iter_mut().map(|(_, v)| v)
    }

    /// Frees the spare room of the object and of everything in it.
    pub fn shrink_to_fit(&mut self) {
        if let Entries::Few(few) = &mut self.entries {
            for (k, _) in few.iter_mut() {
                k.0.shrink_to_fit();
            }
        }
        for v in self.values_mut() {
            v.shrink_to_fit();
        }
    }

    /// An object of entries sorted by key, each key once.
    fn from_sorted(entries: Vec<(Str, Value)>) -> Map {
        let entries = match entries.len() > MANY {
            true => Entries::Many(Box::new(entries.into_iter().collect())),
            false => Entries::Few(super::exact(entries).into_boxed_slice()),
        };
        Map { entries }
    }

    /// Builds an object from entries in any order; of a key given twice the last one wins
    /// (as `serde_json::Map`).
    pub(super) fn from_unsorted(mut entries: Vec<(Str, Value)>) -> Map {
        // Stable: of equal keys the later stays after the earlier.
        if !entries.is_sorted_by(|(a, _), (b, _)| a < b) {
            entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            // `dedup_by` drops `later` and keeps `earlier`: swap them first, so that the
            // later value is the one kept.
            entries.dedup_by(|later, earlier| {
                let same = later.0 == earlier.0;
                if same {
                    std::mem::swap(later, earlier);
                }
                same
            });
        }
        Map::from_sorted(entries)
    }

    /// The object in a B-tree once an insert would take it past [`MANY`] entries.
    fn grow(&mut self) {
        if let Entries::Few(few) = &mut self.entries
            && few.len() >= MANY
        {
            let many = std::mem::take(few).into_vec().into_iter().collect();
            self.entries = Entries::Many(Box::new(many));
        }
    }
}

/// Where `key` is in sorted entries, or where it would go.
fn find(entries: &[(Str, Value)], key: &str) -> Result<usize, usize> {
    entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
}

/// Where `key` is in sorted entries. A small object (most of a manifest's) is scanned for
/// an equal key, which compares lengths first: cheaper than the ordered comparisons of a
/// binary search.
fn position(entries: &[(Str, Value)], key: &str) -> Option<usize> {
    if entries.len() <= SCAN {
        entries.iter().position(|(k, _)| k.as_str() == key)
    } else {
        find(entries, key).ok()
    }
}

/// `entries` with `entry` put at `at`, in a new allocation of the new length.
pub(super) fn inserted<T>(entries: Box<[T]>, at: usize, entry: T) -> Box<[T]> {
    let mut old = entries.into_vec().into_iter();
    let mut new = Vec::with_capacity(old.len() + 1);
    new.extend(old.by_ref().take(at));
    new.push(entry);
    new.extend(old);
    new.into_boxed_slice()
}

/// `entries` without the one at `at` (which is returned), in a new allocation of the new
/// length; `None` when `at` is out of bounds.
fn removed<T>(entries: Box<[T]>, at: usize) -> Option<(Box<[T]>, T)> {
    if at >= entries.len() {
        return None;
    }
    let mut old = entries.into_vec().into_iter();
    let mut new = Vec::with_capacity(old.len() - 1);
    new.extend(old.by_ref().take(at));
    let entry = old.next()?;
    new.extend(old);
    Some((new.into_boxed_slice(), entry))
}

/// One key of a [`Map`], present or not ([`Map::entry`]).
pub struct Entry<'a> {
    map: &'a mut Map,
    key: Str,
}

impl<'a> Entry<'a> {
    /// The value of the key, set to `default` first when absent.
    pub fn or_insert(self, default: Value) -> &'a mut Value {
        self.or_insert_with(|| default)
    }

    /// The value of the key, set to `default()` first when absent.
    pub fn or_insert_with(self, default: impl FnOnce() -> Value) -> &'a mut Value {
        if !self.map.contains_key(&self.key) {
            self.map.grow();
        }
        match &mut self.map.entries {
            Entries::Few(few) => {
                let i = match find(few, &self.key) {
                    Ok(i) => i,
                    Err(i) => {
                        *few = inserted(std::mem::take(few), i, (self.key, default()));
                        i
                    }
                };
                // In bounds: `i` was found or just inserted.
                &mut few[i].1
            }
            Entries::Many(many) => many.entry(self.key).or_insert_with(default),
        }
    }
}

/// The iterator traits of an iterator over either form of a [`Map`]'s entries: each call
/// goes to the form's own iterator, and `|k, v| item` makes the item of an entry.
macro_rules! either_form {
    ($name:ident $(<$lt:lifetime>)?, $form:ident, $item:ty, |$k:ident, $v:ident| $make:expr) => {
        impl$(<$lt>)? Iterator for $name$(<$lt>)? {
            type Item = $item;

            fn next(&mut self) -> Option<$item> {
                match &mut self.0 {
                    $form::Few(it) => it.next().map(|($k, $v)| $make),
                    $form::Many(it) => it.next().map(|($k, $v)| $make),
                }
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                match &self.0 {
                    $form::Few(it) => it.size_hint(),
                    $form::Many(it) => it.size_hint(),
                }
            }
        }

        impl$(<$lt>)? DoubleEndedIterator for $name$(<$lt>)? {
            fn next_back(&mut self) -> Option<$item> {
                match &mut self.0 {
                    $form::Few(it) => it.next_back().map(|($k, $v)| $make),
                    $form::Many(it) => it.next_back().map(|($k, $v)| $make),
                }
            }
        }

        impl$(<$lt>)? ExactSizeIterator for $name$(<$lt>)? {}

        impl$(<$lt>)? std::iter::FusedIterator for $name$(<$lt>)? {}
    };
}

/// The entries of a [`Map`], in key order ([`Map::iter`]).
#[derive(Clone)]
pub struct Iter<'a>(IterForm<'a>);

#[derive(Clone)]
enum IterForm<'a> {
    Few(std::slice::Iter<'a, (Str, Value)>),
    Many(btree_map::Iter<'a, Str, Value>),
}

either_form!(Iter<'a>, IterForm, (&'a str, &'a Value), |k, v| (
    k.as_str(),
    v
));

/// The entries of a [`Map`], in key order, with the values mutable ([`Map::iter_mut`]).
pub struct IterMut<'a>(IterMutForm<'a>);

enum IterMutForm<'a> {
    Few(std::slice::IterMut<'a, (Str, Value)>),
    Many(btree_map::IterMut<'a, Str, Value>),
}

either_form!(
    IterMut<'a>,
    IterMutForm,
    (&'a str, &'a mut Value),
    |k, v| (k.as_str(), v)
);

/// The entries of a [`Map`] taken by value, in key order ([`Map::into_iter`]).
pub struct IntoIter(IntoIterForm);

enum IntoIterForm {
    Few(std::vec::IntoIter<(Str, Value)>),
    Many(btree_map::IntoIter<Str, Value>),
}

either_form!(IntoIter, IntoIterForm, (Str, Value), |k, v| (k, v));

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a str, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a str, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl IntoIterator for Map {
    type Item = (Str, Value);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter(match self.entries {
            Entries::Few(few) => IntoIterForm::Few(few.into_vec().into_iter()),
            Entries::Many(many) => IntoIterForm::Many(many.into_iter()),
        })
    }
}

impl<K: Into<Str>> Extend<(K, Value)> for Map {
    /// Sets every key given (of a key given twice, the last value): into a small object in
    /// one merge (an [`insert`](Map::insert) per key would copy it each time), into a large
    /// one key by key.
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        let new = Map::from_iter(iter);
        if new.is_empty() {
            return;
        }
        if let Entries::Many(many) = &mut self.entries {
            many.extend(new);
            return;
        }
        let mut old = std::mem::take(self).into_iter().peekable();
        let mut merged = Vec::with_capacity(old.len() + new.len());
        for (key, value) in new {
            while let Some(entry) = old.next_if(|(k, _)| *k < key) {
                merged.push(entry);
            }
            old.next_if(|(k, _)| *k == key);
            merged.push((key, value));
        }
        merged.extend(old);
        *self = Map::from_sorted(merged);
    }
}

impl<K: Into<Str>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Map {
        Map::from_unsorted(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}
