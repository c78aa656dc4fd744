//! The CRDs' list bounds, enforced while a scenario file is read: a list over its bound
//! (`maxItems`) makes the file malformed, and the reader keeps no item past the bound, so
//! that a hostile list costs no memory.

use std::fmt;

use crate::wire::tree::{self, Value};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::{Keys, StrictTree, Trail};

/// The Gateway's lists that its CRD bounds (`maxItems`), as key paths from the Gateway
/// (`[]`: each item of a list), each with its bound: at most 64 listeners, at most 8 route
/// kinds a listener. The API server refuses a Gateway over them, so a scenario file with
/// one is malformed; the reader keeps no item past the bound.
pub(crate) const GATEWAY_BOUNDS: [(&[&str], usize); 2] = [
    (&["spec", "listeners"], crate::lookup::MAX_LISTENERS),
    (
        &["spec", "listeners", "[]", "allowedRoutes", "kinds"],
        crate::stages::validate::MAX_ROUTE_KINDS,
    ),
];

/// The GatewayClass's lists that its CRD bounds: at most 8 `status.conditions` (the
/// Gateway API's `maxItems`, [`MAX_CONDITIONS`](crate::conditions::MAX_CONDITIONS)). The
/// API server refuses a class over it, so a scenario file with one is malformed; the reader
/// keeps no condition past the 8th.
pub(crate) const CLASS_BOUNDS: [(&[&str], usize); 1] =
    [(&["status", "conditions"], crate::conditions::MAX_CONDITIONS)];

/// A list over its bound: which of the bounds (its index in them), the list's key path, its
/// length and the bound.
pub(crate) type Over = (usize, String, usize, usize);

/// [`StrictTree`] with bounds on lists at some key paths ([`GATEWAY_BOUNDS`]): a list at such a
/// path keeps its first items up to the bound and only checks the rest to be JSON,
/// recording a list over its bound in `over` (the first of the bounds' order, so that a
/// Gateway over several is told as the checks of a value tell it).
pub(super) struct Bounded<'t, 'o> {
    pub(super) trail: &'t mut Trail,
    /// Where the reader is, as the bounds name it (`[]` for a list's item).
    pub(super) at: Vec<&'static str>,
    /// Where the reader is, as a key path (`spec.listeners[3]`).
    pub(super) path: String,
    pub(super) bounds: &'static [(&'static [&'static str], usize)],
    pub(super) over: &'o mut Option<Over>,
}

impl Bounded<'_, '_> {
    /// The segment of a bounded path one step past `at` that `next` matches (`None`: no
    /// bounded path goes there).
    fn step(&self, next: impl Fn(&str) -> bool) -> Option<&'static str> {
        self.bounds.iter().find_map(|(path, _)| {
            let segment = path.get(self.at.len())?;
            (path.starts_with(&self.at) && next(segment)).then_some(*segment)
        })
    }

    /// The bound of the list at `at` and its index in the bounds, if one is bounded there.
    fn bound(&self) -> Option<(usize, usize)> {
        self.bounds
            .iter()
            .enumerate()
            .find_map(|(i, (path, bound))| (*path == self.at.as_slice()).then_some((i, *bound)))
    }

    /// The reader one step further: `segment` as the bounds name it, `path` as a key path.
    fn deeper<'u>(&'u mut self, segment: &'static str, path: String) -> Bounded<'u, 'u> {
        let mut at = self.at.clone();
        at.push(segment);
        Bounded {
            trail: &mut *self.trail,
            at,
            path,
            bounds: self.bounds,
            over: &mut *self.over,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_, '_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    tree_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let (which, bound) = self.bound().unwrap_or((usize::MAX, usize::MAX));
        let into_items = self.step(|segment| segment == "[]").is_some();
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(bound).min(4096));
        while list.len() < bound {
            let index = list.len();
            let read = match into_items {
                true => {
                    let path = format!("{}[{index}]", self.path);
                    seq.next_element_seed(self.deeper("[]", path))
                }
                false => seq.next_element_seed(StrictTree(&mut *self.trail)),
            };
            match read {
                Ok(Some(item)) => list.push(item),
                Ok(None) => return Ok(Value::from(list)),
                Err(e) => return Err(self.trail.up(|| format!("[{index}]"), e)),
            }
        }
        // At the bound: what follows is counted, not kept.
        let mut count = list.len();
        while seq.next_element::<de::IgnoredAny>()?.is_some() {
            count += 1;
        }
        if count > bound && self.over.as_ref().is_none_or(|(first, ..)| which < *first) {
            *self.over = Some((which, self.path, count, bound));
        }
        Ok(Value::from(list))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut keys = Keys::default();
        while let Some(mut key) = map.next_key::<String>()? {
            if keys.repeated(&entries, &key) {
                return Err(self.trail.duplicate(&key));
            }
            let read = match self.step(|segment| segment == key) {
                Some(segment) => {
                    let path = match self.path.is_empty() {
                        true => key.clone(),
                        false => format!("{}.{key}", self.path),
                    };
                    map.next_value_seed(self.deeper(segment, path))
                }
                None => map.next_value_seed(StrictTree(&mut *self.trail)),
            };
            match read {
                Ok(value) => {
                    key.shrink_to_fit();
                    entries.push((key, value));
                }
                Err(e) => return Err(self.trail.up(|| key, e)),
            };
        }
        Ok(Value::Object(entries.into_iter().collect::<tree::Map>()))
    }
}
