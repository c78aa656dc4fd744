//! JSON read strictly, for scenario files and the command line's inputs: a key given twice
//! in one object is an error naming its key path (serde_json keeps the last one silently),
//! and the line of a key path can be found for error messages.
//!
//! Public for the `gateway-reconcile` command line (a target of its own, which reads its
//! inputs with it); an embedder reading scenario files has `Scenario::from_json`.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::sim::cluster::Namespaces;
use crate::wire::{L34Route, tree};

/// A value reader's visits of the scalars, as `serde_json::Value`s: the same in each of the
/// readers that build values (they differ in lists and objects). Defined before the modules
/// that use it.
macro_rules! value_scalars {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }

        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

/// [`value_scalars`]'s visits as compact [`tree::Value`]s, for the readers that build trees.
macro_rules! tree_scalars {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<tree::Value, E> {
            Ok(tree::Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<tree::Value, E> {
            Ok(tree::Value::from(v))
        }

        fn visit_u64<E>(self, v: u64) -> Result<tree::Value, E> {
            Ok(tree::Value::from(v))
        }

        fn visit_f64<E>(self, v: f64) -> Result<tree::Value, E> {
            Ok(tree::Value::from(v))
        }

        fn visit_str<E>(self, v: &str) -> Result<tree::Value, E> {
            Ok(tree::Value::from(v))
        }

        fn visit_string<E>(self, v: String) -> Result<tree::Value, E> {
            Ok(tree::Value::from(v))
        }

        fn visit_unit<E>(self) -> Result<tree::Value, E> {
            Ok(tree::Value::Null)
        }

        fn visit_none<E>(self) -> Result<tree::Value, E> {
            Ok(tree::Value::Null)
        }
    };
}

mod bounds;
mod lines;

use bounds::Bounded;
pub(crate) use bounds::{CLASS_BOUNDS, GATEWAY_BOUNDS, Over};
pub(crate) use lines::line_of;

/// Why text is not strict JSON: serde_json's message, or a duplicate key with its key path,
/// and where (1-based line and column; 0 when unknown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{why}{}", located(path), position(*.line, *.column))]
pub struct JsonError {
    /// 1-based line (0: unknown).
    pub line: usize,
    /// 1-based column (0: unknown).
    pub column: usize,
    /// What is wrong, e.g. `duplicate key "metadata.name"`.
    pub why: String,
    /// The key path of the value the reader itself refused (a number out of range, a
    /// nesting past its recursion limit), as segments: keys and `[i]` items; empty when
    /// the message names its own place (a duplicate key) or none is known (a syntax error).
    pub path: Vec<String>,
}

/// `"spec.a[0]": ` before the message, when the path is known.
fn located(path: &[String]) -> String {
    match path.is_empty() {
        true => String::new(),
        false => format!("{}: ", quote(&join_path(path))),
    }
}

/// Segments as a dotted key path: `spec.items[2].name`.
pub(crate) fn join_path(path: &[String]) -> String {
    let mut out = String::new();
    for segment in path {
        if !out.is_empty() && !segment.starts_with('[') {
            out.push('.');
        }
        out.push_str(segment);
    }
    out
}

/// What the JSON reader itself refuses in a value it has reached (not the text's syntax):
/// such an error is given the value's key path.
fn refused_value(message: &str) -> bool {
    message.starts_with("recursion limit exceeded") || message.starts_with("number out of range")
}

/// serde_json's own ending, so that messages read as they did before the strict reader.
fn position(line: usize, column: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" at line {line} column {column}")
    }
}

impl JsonError {
    fn new(error: &serde_json::Error, trail: &Trail) -> JsonError {
        let mut path = Vec::new();
        let why = match trail.duplicate {
            true => format!("duplicate key {}", quote(&trail.key_path())),
            false => {
                let why = strip_position(&error.to_string());
                if refused_value(&why) {
                    path = trail.path.iter().rev().cloned().collect();
                }
                why
            }
        };
        JsonError {
            line: error.line(),
            column: error.column(),
            why,
            path,
        }
    }
}

/// Parses JSON text into a [`Value`], refusing duplicate keys.
///
/// ```
/// use gateway_reconcile::sim::strict_json::parse;
/// let e = parse("{\"metadata\": {\"name\": \"a\",\n \"name\": \"b\"}}").unwrap_err();
/// assert_eq!(e.to_string(), r#"duplicate key "metadata.name" at line 2 column 7"#);
/// ```
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut trail = Trail::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict(&mut trail)
        .deserialize(&mut deserializer)
        .and_then(|v| deserializer.end().map(|()| v));
    value.map_err(|e| JsonError::new(&e, &trail))
}

/// Checks JSON text as [`parse`] reads it (a key given twice is an error with its key path,
/// and the same error for text that is not JSON), without building a value: a reader can
/// then deserialize its own type straight from the text, never holding a
/// `serde_json::Value` (about 20 times the text of small objects). Only the keys of the
/// objects being read are held.
///
/// ```
/// use gateway_reconcile::sim::strict_json::{check, parse};
/// let text = "{\"a\": [{\"b\": 1,\n \"b\": 2}]}";
/// assert_eq!(check(text).unwrap_err(), parse(text).unwrap_err());
/// assert!(check("{\"a\": [{\"b\": 1}, {\"b\": 2}]}").is_ok());
/// ```
pub fn check(text: &str) -> Result<(), JsonError> {
    let mut trail = Trail::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let checked = Checked(&mut trail)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    checked.map_err(|e| JsonError::new(&e, &trail))
}

/// The objects [`parse_scenario`] reads out of the scenario's value, each in the form it is
/// held in: the routes typed, the Deployment-shaped objects as compact trees.
#[derive(Debug, Default)]
pub(crate) struct Lifted {
    /// `objects.routes`, when given.
    pub routes: Option<Vec<L34Route>>,
    /// `objects.template`, when given (`null` included).
    pub template: Option<tree::Value>,
    /// `objects.deployment`, when given (`null` included).
    pub deployment: Option<tree::Value>,
    /// `objects.gatewayClass`, when given (`null` included).
    pub gateway_class: Option<tree::Value>,
    /// `objects.gateway`, when given (`null` included).
    pub gateway: Option<tree::Value>,
    /// `objects.configuration`, when given (`null` included).
    pub configuration: Option<tree::Value>,
    /// `objects.namespaces`, when given and not `null`.
    pub namespaces: Option<Namespaces>,
    /// `steps`, when a list: each step a compact tree (a step held as a `serde_json::Value`
    /// costs dozens of times its text: each small object a B-tree node), up to one past
    /// [`MAX_STEPS`]; the list left in the value is empty.
    pub steps: Option<Vec<tree::Value>>,
    /// A list of the Gateway over the bound its CRD sets, found while reading
    /// `objects.gateway` ([`GATEWAY_BOUNDS`]): its key path, length and bound (of several,
    /// the first of the bounds' order, and the first in the text of that bound). The value
    /// holds no item past the bound: the file is refused for it.
    pub gateway_over: Option<Over>,
    /// The first list over its bound in `objects.gatewayClass` ([`CLASS_BOUNDS`]), as
    /// `gateway_over`.
    pub class_over: Option<Over>,
}

/// [`parse`] for a scenario file, with `objects.routes` read straight into L34Routes, and
/// `objects.template`, `objects.deployment` and each step into compact trees, all left out
/// of the value: a long route list held as JSON values costs about 20 times its text, a
/// large Deployment about 13 times (3 as a tree), a small step about 40 times. A wrong
/// value in a route is an error naming its key path. The Gateway's listeners (and each
/// listener's route kinds) are read up to the bound of the Gateway's CRD, the rest only
/// checked to be JSON: a longer list makes the file malformed anyway.
pub(crate) fn parse_scenario(text: &str) -> Result<(Value, Lifted), JsonError> {
    let mut lifted = Lifted::default();
    let mut trail = Trail::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Top {
        lifted: &mut lifted,
        trail: &mut trail,
    }
    .deserialize(&mut deserializer)
    .and_then(|v| deserializer.end().map(|()| v));
    match value {
        Ok(value) => Ok((value, lifted)),
        Err(e) => Err(JsonError::new(&e, &trail)),
    }
}

/// The key path of a duplicate key, collected as the error goes up (no cost while reading).
#[derive(Default)]
struct Trail {
    /// Whether the error being returned is a duplicate key.
    duplicate: bool,
    /// Keys and `[i]` items, innermost first.
    path: Vec<String>,
}

impl Trail {
    /// Records one level of the path of the error going up (only ever on an error: the
    /// message decides whether the path is told).
    fn up<E>(&mut self, segment: impl FnOnce() -> String, error: E) -> E {
        self.path.push(segment());
        error
    }

    fn duplicate<E: de::Error>(&mut self, key: &str) -> E {
        self.duplicate = true;
        self.path.push(key.to_owned());
        E::custom(format_args!("duplicate key {key:?}"))
    }

    /// `spec.items[2].name`.
    fn key_path(&self) -> String {
        let path: Vec<String> = self.path.iter().rev().cloned().collect();
        join_path(&path)
    }
}

/// The scenario's top level: `objects` is read by [`Objects`], the rest by [`Strict`].
struct Top<'r> {
    lifted: &'r mut Lifted,
    trail: &'r mut Trail,
}

/// The scenario's `objects`: `routes`, `template` and `deployment` are read into their slots.
struct Objects<'r> {
    lifted: &'r mut Lifted,
    trail: &'r mut Trail,
}

/// Values other than objects read as [`Strict`] reads them.
macro_rules! like_strict {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
            Strict(self.trail).visit_seq(seq)
        }
    };
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scenario object")
    }

    like_strict!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(self.trail.duplicate(&key));
            }
            let value = match key.as_str() {
                "objects" => map.next_value_seed(Objects {
                    lifted: &mut *self.lifted,
                    trail: &mut *self.trail,
                }),
                "steps" => map.next_value_seed(Steps {
                    trail: &mut *self.trail,
                    steps: &mut self.lifted.steps,
                }),
                _ => map.next_value_seed(Strict(&mut *self.trail)),
            };
            match value {
                Ok(value) => object.insert(key, value),
                Err(e) => return Err(self.trail.up(|| key, e)),
            };
        }
        Ok(Value::Object(object))
    }
}

impl<'de> DeserializeSeed<'de> for Objects<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Objects<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the objects")
    }

    like_strict!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        let mut lifted_seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let lifted = matches!(
                key.as_str(),
                "routes"
                    | "template"
                    | "deployment"
                    | "namespaces"
                    | "gateway"
                    | "gatewayClass"
                    | "configuration"
            );
            if object.contains_key(&key) || (lifted && !lifted_seen.insert(key.clone())) {
                return Err(self.trail.duplicate(&key));
            }
            let slot = match key.as_str() {
                "routes" => {
                    self.lifted.routes = map.next_value_seed(Routes)?;
                    continue;
                }
                "namespaces" => {
                    match map.next_value_seed(NamespacesSeed(&mut *self.trail)) {
                        Ok(namespaces) => self.lifted.namespaces = namespaces,
                        Err(e) => return Err(self.trail.up(|| key, e)),
                    }
                    continue;
                }
                "template" => &mut self.lifted.template,
                "deployment" => &mut self.lifted.deployment,
                "configuration" => &mut self.lifted.configuration,
                "gateway" | "gatewayClass" => {
                    let (bounds, over, slot): (&'static [_], _, _) = match key.as_str() {
                        "gateway" => (
                            &GATEWAY_BOUNDS[..],
                            &mut self.lifted.gateway_over,
                            &mut self.lifted.gateway,
                        ),
                        _ => (
                            &CLASS_BOUNDS[..],
                            &mut self.lifted.class_over,
                            &mut self.lifted.gateway_class,
                        ),
                    };
                    let read = map.next_value_seed(Bounded {
                        trail: &mut *self.trail,
                        at: Vec::new(),
                        path: String::new(),
                        bounds,
                        over,
                    });
                    match read {
                        Ok(value) => *slot = Some(value),
                        Err(e) => return Err(self.trail.up(|| key, e)),
                    };
                    continue;
                }
                _ => {
                    match map.next_value_seed(Strict(&mut *self.trail)) {
                        Ok(value) => object.insert(key, value),
                        Err(e) => return Err(self.trail.up(|| key, e)),
                    };
                    continue;
                }
            };
            match map.next_value_seed(StrictTree(&mut *self.trail)) {
                Ok(value) => *slot = Some(value),
                Err(e) => return Err(self.trail.up(|| key, e)),
            }
        }
        Ok(Value::Object(object))
    }
}

/// The most steps a scenario file may have: a longer `steps` list is refused when the file
/// is read (as malformed, naming `steps` and this limit), and the strict reader keeps no
/// more than one step past it (the rest is only checked to be JSON), so that a file of
/// hundreds of thousands of steps costs no more than one of this many to refuse. (Each step
/// held costs several times its text: a compact tree, then a step and a timeline entry.)
pub(crate) const MAX_STEPS: usize = 10_000;

/// The scenario's `steps`: a list is read into compact trees (each step checked as
/// [`Strict`] checks it), up to one item past [`MAX_STEPS`], and left out of the value (an
/// empty list stands for it); anything else is read as [`Strict`] reads it.
struct Steps<'t> {
    trail: &'t mut Trail,
    steps: &'t mut Option<Vec<tree::Value>>,
}

impl<'de> DeserializeSeed<'de> for Steps<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Steps<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the steps")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Strict(self.trail).visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Strict(self.trail).visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Strict(self.trail).visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Strict(self.trail).visit_f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Strict(self.trail).visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Strict(self.trail).visit_string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Strict(self.trail).visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Strict(self.trail).visit_none()
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Strict(self.trail).visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while list.len() <= MAX_STEPS {
            match seq.next_element_seed(StrictTree(&mut *self.trail)) {
                Ok(Some(item)) => list.push(item),
                Ok(None) => break,
                Err(e) => {
                    let index = list.len();
                    return Err(self.trail.up(|| format!("[{index}]"), e));
                }
            }
        }
        if list.len() > MAX_STEPS {
            // Over the bound: the file is refused for it; the rest is only read through.
            while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        }
        list.shrink_to_fit();
        *self.steps = Some(list);
        Ok(Value::Array(Vec::new()))
    }
}

/// `objects.routes`: null or a list of L34Routes, read in place.
struct Routes;

impl<'de> DeserializeSeed<'de> for Routes {
    type Value = Option<Vec<L34Route>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        let mut track = serde_path_to_error::Track::new();
        let read = <Option<Vec<L34Route>>>::deserialize(serde_path_to_error::Deserializer::new(
            deserializer,
            &mut track,
        ));
        read.map_err(|e| {
            let path = track.path().to_string();
            let path = if path == "." { String::new() } else { path };
            de::Error::custom(format_args!(
                "\"objects.routes{path}\": {}",
                plain_message(&strip_position(&e.to_string()))
            ))
        })
    }
}

/// `objects.namespaces`: null, or namespace → (label key → value), read straight into the
/// compact [`Namespaces`] (a map of maps held as JSON values costs about 30 times its
/// text). A name or a key given twice is a duplicate key; a value of the wrong type is an
/// error naming its key path, in the words of the scenario reader.
struct NamespacesSeed<'t>(&'t mut Trail);

/// Entries in the order read, each key once: a key out of order is looked up in the keys
/// read so far (a set made then), so that keys in order cost no lookup.
struct Ordered<V> {
    entries: Vec<(String, V)>,
    seen: Option<BTreeSet<String>>,
}

impl<V> Ordered<V> {
    fn new() -> Self {
        Ordered {
            entries: Vec::new(),
            seen: None,
        }
    }

    /// Whether `key` was read already.
    fn repeats(&mut self, key: &str) -> bool {
        let in_order = self
            .entries
            .last()
            .is_none_or(|(last, _)| last.as_str() < key);
        if in_order && self.seen.is_none() {
            return false;
        }
        let entries = &self.entries;
        let seen = self
            .seen
            .get_or_insert_with(|| entries.iter().map(|(k, _)| k.clone()).collect());
        !seen.insert(key.to_owned())
    }

    /// The entries sorted by key.
    fn sorted(mut self) -> Vec<(String, V)> {
        if self.seen.is_some() {
            self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        self.entries.shrink_to_fit();
        self.entries
    }
}

/// `"KEY" must be an object (found a list)`, as the scenario reader words it.
fn wrong_type<E: de::Error>(key: &str, expected: &str, found: &str) -> E {
    E::custom(format_args!(
        "{} must be {expected} (found {found})",
        quote(key)
    ))
}

/// The values a visitor refuses, in the scenario reader's words; `$key(&self)` names the
/// value's key path.
macro_rules! refuse_scalars_and_lists {
    ($key:expr, $expected:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(wrong_type(&$key(&self), $expected, "a boolean"))
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(wrong_type(&$key(&self), $expected, "a number"))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(wrong_type(&$key(&self), $expected, "a number"))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(wrong_type(&$key(&self), $expected, "a number"))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(wrong_type(&$key(&self), $expected, "a list"))
        }
    };
}

impl<'de> DeserializeSeed<'de> for NamespacesSeed<'_> {
    type Value = Option<Namespaces>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NamespacesSeed<'_> {
    type Value = Option<Namespaces>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the namespaces")
    }

    refuse_scalars_and_lists!(|_: &Self| "objects.namespaces".to_owned(), "an object");

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(wrong_type("objects.namespaces", "an object", "a string"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut namespaces = Ordered::new();
        while let Some(name) = map.next_key::<String>()? {
            if namespaces.repeats(&name) {
                return Err(self.0.duplicate(&name));
            }
            let read = map.next_value_seed(LabelsSeed {
                trail: &mut *self.0,
                namespace: &name,
            });
            match read {
                Ok(labels) => namespaces.entries.push((name, labels)),
                Err(e) => return Err(self.0.up(|| name, e)),
            }
        }
        Ok(Some(Namespaces::from_sorted(namespaces.sorted())))
    }
}

/// One namespace's labels.
struct LabelsSeed<'t, 'n> {
    trail: &'t mut Trail,
    namespace: &'n str,
}

impl LabelsSeed<'_, '_> {
    fn key(&self) -> String {
        format!("objects.namespaces.{}", self.namespace)
    }
}

impl<'de> DeserializeSeed<'de> for LabelsSeed<'_, '_> {
    type Value = Vec<(String, String)>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LabelsSeed<'_, '_> {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a namespace's labels")
    }

    refuse_scalars_and_lists!(LabelsSeed::key, "an object");

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(wrong_type(&self.key(), "an object", "a string"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(wrong_type(&self.key(), "an object", "null"))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(wrong_type(&self.key(), "an object", "null"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let prefix = self.key();
        let mut labels = Ordered::new();
        while let Some(label) = map.next_key::<String>()? {
            if labels.repeats(&label) {
                return Err(self.trail.duplicate(&label));
            }
            let read = map.next_value_seed(TextSeed(&|| format!("{prefix}.{label}")));
            match read {
                Ok(value) => labels.entries.push((label, value)),
                Err(e) => return Err(self.trail.up(|| label, e)),
            }
        }
        Ok(labels.sorted())
    }
}

/// A string, or the scenario reader's wrong-type error naming the key path `.0()`.
struct TextSeed<'k>(&'k dyn Fn() -> String);

impl<'de> DeserializeSeed<'de> for TextSeed<'_> {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TextSeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    refuse_scalars_and_lists!(|s: &Self| (s.0)(), "a string");

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(wrong_type(&(self.0)(), "a string", "null"))
    }

    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Err(wrong_type(&(self.0)(), "a string", "null"))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(wrong_type(&(self.0)(), "a string", "an object"))
    }
}

/// serde_json's message without its ` at line L column C` ending.
fn strip_position(message: &str) -> String {
    message
        .rsplit_once(" at line ")
        .map_or(message, |(why, _)| why)
        .to_owned()
}

/// A [`Value`] seed that refuses duplicate keys.
struct Strict<'t>(&'t mut Trail);

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    value_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            match seq.next_element_seed(Strict(&mut *self.0)) {
                Ok(Some(item)) => list.push(item),
                Ok(None) => break,
                Err(e) => {
                    let index = list.len();
                    return Err(self.0.up(|| format!("[{index}]"), e));
                }
            }
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(self.0.duplicate(&key));
            }
            match map.next_value_seed(Strict(&mut *self.0)) {
                Ok(value) => object.insert(key, value),
                Err(e) => return Err(self.0.up(|| key, e)),
            };
        }
        Ok(Value::Object(object))
    }
}

/// [`Strict`] without the value: only the keys of each object, while it is read.
struct Checked<'t>(&'t mut Trail);

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            match seq.next_element_seed(Checked(&mut *self.0)) {
                Ok(Some(())) => index += 1,
                Ok(None) => return Ok(()),
                Err(e) => return Err(self.0.up(|| format!("[{index}]"), e)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(self.0.duplicate(&key));
            }
            if let Err(e) = map.next_value_seed(Checked(&mut *self.0)) {
                return Err(self.0.up(|| key, e));
            }
            keys.insert(key);
        }
        Ok(())
    }
}

/// [`Strict`] for a compact [`tree::Value`]: a Deployment-shaped object, read without ever
/// being a `serde_json::Value`.
struct StrictTree<'t>(&'t mut Trail);

/// Objects with more keys than this find a duplicate through a set, not by scanning.
const SCAN_KEYS: usize = 16;

/// The keys of an object being read into a tree, to find one given twice: the entries read
/// so far are scanned while few, then a set takes over (an ordered one: a hashed one would
/// seed itself from the operating system).
#[derive(Default)]
struct Keys(Option<BTreeSet<String>>);

impl Keys {
    /// Whether `key` is among the keys of `entries` (those read before it), noting it.
    fn repeated<V>(&mut self, entries: &[(String, V)], key: &str) -> bool {
        match &mut self.0 {
            Some(seen) => !seen.insert(key.to_owned()),
            None if entries.iter().any(|(k, _)| k == key) => true,
            None => {
                if entries.len() >= SCAN_KEYS {
                    let mut seen: BTreeSet<String> =
                        entries.iter().map(|(k, _)| k.clone()).collect();
                    seen.insert(key.to_owned());
                    self.0 = Some(seen);
                }
                false
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictTree<'_> {
    type Value = tree::Value;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<tree::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictTree<'_> {
    type Value = tree::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    tree_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<tree::Value, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            match seq.next_element_seed(StrictTree(&mut *self.0)) {
                Ok(Some(item)) => list.push(item),
                Ok(None) => break,
                Err(e) => {
                    let index = list.len();
                    return Err(self.0.up(|| format!("[{index}]"), e));
                }
            }
        }
        Ok(tree::Value::from(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<tree::Value, A::Error> {
        let mut entries: Vec<(String, tree::Value)> = Vec::new();
        let mut keys = Keys::default();
        while let Some(mut key) = map.next_key::<String>()? {
            if keys.repeated(&entries, &key) {
                return Err(self.0.duplicate(&key));
            }
            match map.next_value_seed(StrictTree(&mut *self.0)) {
                Ok(value) => {
                    key.shrink_to_fit();
                    entries.push((key, value));
                }
                Err(e) => return Err(self.0.up(|| key, e)),
            }
        }
        Ok(tree::Value::Object(entries.into_iter().collect()))
    }
}

pub use crate::read_at::{plain_message, quote};
