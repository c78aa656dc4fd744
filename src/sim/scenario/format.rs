//! The scenario file (see [`crate::sim::scenario`]) as serde reads it, `deny_unknown_fields` on every object of
//! the format, and the checks made when it is read: the objects and every patch must have
//! the shape of their kind, the Gateway its identity, the clock must stay in range.
//! `objects.namespaces` is read typed (namespace → label key → value, `null` absent) and
//! each name, key and value checked as the API server would; an `unreadable` step's patch
//! is applied to the copy the later patches are checked against without the shape check
//! (the one place a value of the wrong type may come from), so a later `patch` that leaves
//! such a value is malformed and one that mends it is not.
//!
//! Each step is read alone from the compact tree the strict reader made of it
//! ([`tree::de::Reader`]), and made a [`Step`] at once: what serde reads of a step is many
//! times the step, and a step held as a `serde_json::Value` dozens of times its text.
//!
//! The identity and shape rules through the steps are `identity`'s, and so are the Gateway
//! CRD's bounds on its lists.
//!
//! serde's errors carry the key path (serde_path_to_error); [`malformed`](super::malformed)
//! turns them into [`ScenarioError`]s naming the step and the key.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use jiff::Timestamp;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use identity::{check_patches, gateway_identity, metadata_kept, shape};
use namespaces::check_namespaces;

use super::api_error::api_error_from_tree;
use super::checks::{ConditionExpect, EventExpect, Expect, ListenerExpect};
use super::malformed::{ScenarioError, from_serde, from_step_serde};
use super::{Scenario, Step, TimeError, Verb, parse_time};
use crate::events::EventType;
use crate::settings::{Settings, parse_duration};
use crate::sim::cluster::store::check;
use crate::sim::cluster::{ClusterError, Kind, Namespaces, Objects, RolloutState, WriteKind};
use crate::sim::scenario::describe::requeue_from_word;
use crate::sim::strict_json::{Lifted, MAX_STEPS};
use crate::wire::{Deployment, L34Route, tree};

const DEFAULT_NOW: &str = "2026-01-01T00:00:00Z";

/// The verbs a step may have, one of them.
const VERBS: [&str; 13] = [
    "advance",
    "catchUp",
    "delete",
    "failWrites",
    "mutateWrites",
    "patch",
    "reconcile",
    "recreate",
    "restart",
    "rollout",
    "snapshot",
    "staleReads",
    "unreadable",
];

/// The whole file but `objects`, which are moved out of the value first ([`ObjectsFile`]):
/// they can be large. The steps are read one by one afterwards, each from its compact tree
/// ([`StepFile`]): here only the list, emptied.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    settings: Option<Obj<Settings>>,
    #[serde(default)]
    now: Option<Time>,
    #[allow(dead_code)]
    steps: Vec<IgnoredAny>,
}

/// `objects`: the keys, checked by serde; the objects themselves are moved out of the value
/// afterwards (no copy: they can be large) and checked by kind. Routes are read typed.
// The fields but `routes` are there for their keys only.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ObjectsFile {
    #[serde(default)]
    gateway_class: Option<IgnoredAny>,
    #[serde(default)]
    gateway: Option<IgnoredAny>,
    #[serde(default)]
    configuration: Option<IgnoredAny>,
    #[serde(default)]
    deployment: Option<IgnoredAny>,
    #[serde(default)]
    template: Option<IgnoredAny>,
    #[serde(default)]
    routes: Option<Vec<L34Route>>,
    /// Namespace → its labels; `null` is absent.
    #[serde(default)]
    namespaces: Option<BTreeMap<String, BTreeMap<String, String>>>,
}

/// One step: one verb (checked after reading), `expect` on a reconcile, a `note`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StepFile {
    #[serde(default, deserialize_with = "present")]
    reconcile: Option<Option<Obj<Empty>>>,
    #[serde(default)]
    expect: Option<Obj<ExpectFile>>,
    #[serde(default, deserialize_with = "present")]
    advance: Option<DurationText>,
    #[serde(default, deserialize_with = "present")]
    patch: Option<Patches>,
    #[serde(default, deserialize_with = "present")]
    delete: Option<DeleteTarget>,
    #[serde(default, deserialize_with = "present")]
    fail_writes: Option<Obj<FailWritesFile>>,
    #[serde(default, deserialize_with = "present")]
    rollout: Option<RolloutWord>,
    #[serde(default, deserialize_with = "present")]
    mutate_writes: Option<Obj<MutateWritesFile>>,
    #[serde(default, deserialize_with = "present")]
    restart: Option<Obj<Empty>>,
    #[serde(default, deserialize_with = "present")]
    unreadable: Option<Obj<UnreadableFile>>,
    #[serde(default, deserialize_with = "present")]
    snapshot: Option<String>,
    #[serde(default, deserialize_with = "present")]
    stale_reads: Option<Obj<StaleReadsFile>>,
    #[serde(default, deserialize_with = "present")]
    catch_up: Option<Obj<Empty>>,
    #[serde(default, deserialize_with = "present")]
    recreate: Option<Obj<RecreateFile>>,
    #[serde(default)]
    note: Option<String>,
}

/// `staleReads: {"from": "NAME"}`: reads answered from the snapshot `NAME`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StaleReadsFile {
    from: String,
    #[serde(default, deserialize_with = "present")]
    kinds: Option<Vec<LaggingKind>>,
}

/// A kind whose reads can lag: any the API server serves (not the template, the
/// controller's own file).
struct LaggingKind(Kind);

impl<'de> Deserialize<'de> for LaggingKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |name| match Kind::from_key(name) {
            Some(Kind::Template) | None => Err(format!(
                "cannot lag {name:?} (expected gatewayClass, gateway, configuration, \
                 deployment or routes)"
            )),
            Some(kind) => Ok(LaggingKind(kind)),
        })
    }
}

/// `recreate: {"gateway": OBJECT}`: the Gateway deleted for good and created as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecreateFile {
    /// Required (checked after reading); `null` is a value of the wrong type.
    #[serde(default, deserialize_with = "present")]
    gateway: Option<tree::Map>,
}

/// `unreadable: {"configuration": PATCH}`: the merge patch stored without the type check.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UnreadableFile {
    /// Required (checked after reading); `null` is a value of the wrong type.
    #[serde(default, deserialize_with = "present")]
    configuration: Option<tree::Map>,
}

/// `mutateWrites: {"patch": PATCH}`; `{"patch": null}` stops the mutation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MutateWritesFile {
    /// Required: `null` stops (told from a missing key by `present`).
    #[serde(default, deserialize_with = "present")]
    patch: Option<Option<Map<String, Value>>>,
}

/// `reconcile: {}`: nothing to say yet.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectFile {
    #[serde(default, deserialize_with = "present")]
    action: Option<ActionWord>,
    #[serde(default, deserialize_with = "present")]
    status_written: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    conditions: Option<InOrder<Option<Obj<ConditionFile>>>>,
    #[serde(default, deserialize_with = "present")]
    addresses: Option<Vec<String>>,
    /// `Some(None)`: `null`, there must be no Deployment.
    #[serde(default, deserialize_with = "present")]
    deployment: Option<Option<Map<String, Value>>>,
    #[serde(default, deserialize_with = "present")]
    drift: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    events: Option<Vec<Obj<EventFile>>>,
    #[serde(default, deserialize_with = "present")]
    gateway_class: Option<InOrder<Option<Obj<ConditionFile>>>>,
    #[serde(default, deserialize_with = "present")]
    listeners: Option<Vec<Obj<ListenerFile>>>,
    #[serde(default, deserialize_with = "present")]
    gateway_class_features: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    requeue: Option<RequeueWord>,
}

/// One entry of `expect.listeners`: `name` required, the rest optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListenerFile {
    name: String,
    #[serde(default, deserialize_with = "present")]
    supported_kinds: Option<Vec<Obj<RouteKindFile>>>,
    #[serde(default, deserialize_with = "present")]
    attached_routes: Option<i64>,
    #[serde(default, deserialize_with = "present")]
    conditions: Option<InOrder<Option<Obj<ConditionFile>>>>,
}

/// One of `expect.listeners[].supportedKinds`: both keys required (the list is exact).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteKindFile {
    group: String,
    kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EventFile {
    #[serde(default, rename = "type", deserialize_with = "present")]
    type_: Option<EventTypeWord>,
    #[serde(default, deserialize_with = "present")]
    reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    message_contains: Option<Vec<String>>,
}

/// An Event's `type`: `Normal` or `Warning`.
struct EventTypeWord(EventType);

impl<'de> Deserialize<'de> for EventTypeWord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |word| match word {
            "Normal" => Ok(EventTypeWord(EventType::Normal)),
            "Warning" => Ok(EventTypeWord(EventType::Warning)),
            _ => Err(format!(
                "unknown event type {word:?} (expected Normal or Warning)"
            )),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ConditionFile {
    #[serde(default, deserialize_with = "present")]
    status: Option<String>,
    #[serde(default, deserialize_with = "present")]
    reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    message: Option<String>,
    #[serde(default, deserialize_with = "present")]
    message_contains: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    observed_generation: Option<i64>,
    #[serde(default, deserialize_with = "present")]
    last_transition_time: Option<TimeAsWritten>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailWritesFile {
    count: Count,
    /// Required; `null` is missing too (checked after reading). A compact tree: a
    /// `Status`'s `details` may be long, and is only checked to be JSON.
    #[serde(default)]
    error: Option<tree::Value>,
}

/// A [`Deserialize`](serde::Deserialize) type read only from a JSON object: serde's derive
/// also reads a struct from a list of its fields in order, which a scenario file must not
/// do (`"expect": [true]`).
struct Obj<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Obj)
    }
}

/// A deserializer that hands a struct only maps.
struct MapOnly<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(v)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, MapVisitor(v))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A visitor that takes maps only (anything else is a value of the wrong type).
struct MapVisitor<V>(V);

impl<'de, V: serde::de::Visitor<'de>> serde::de::Visitor<'de> for MapVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(map)
    }
}

/// A field given, `null` included (`null` is then the field's own value, often refused):
/// `#[serde(default)]` alone would read `null` as absent.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A map read in the order of the file, as a list of entries.
struct InOrder<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for InOrder<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
            type Value = InOrder<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<InOrder<T>, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, T>()? {
                    entries.push((key, value));
                }
                Ok(InOrder(entries))
            }
        }
        d.deserialize_map(Entries(PhantomData))
    }
}

/// Reads a string, then makes `T` of it; the error is the value's (`"advance": ...`).
fn from_text<'de, D: Deserializer<'de>, T>(
    d: D,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, D::Error> {
    let text = String::deserialize(d)?;
    read(&text).map_err(|why| {
        // The value quoted whole in the message is cut (a huge value, a huge message).
        let whole = format!("{text:?}");
        match whole.len() > crate::read_at::QUOTED_CHARACTERS {
            true => de::Error::custom(why.replace(&whole, &crate::read_at::quote(&text))),
            false => de::Error::custom(why),
        }
    })
}

/// A strict RFC 3339 time ([`parse_time`]).
struct Time(Timestamp);

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |t| parse_time(t).map(Time).map_err(|e| e.to_string()))
    }
}

/// An expected condition `lastTransitionTime`: a strict RFC 3339 time ([`parse_time`]),
/// kept as written. One past the clock's range is taken too: the API server stores such a
/// time (a four-digit year, up to `9999-12-31T23:59:59Z`), and the crate keeps it as written
/// on a condition it does not change (it counts as now), so a file must be able to expect it.
struct TimeAsWritten(String);

impl<'de> Deserialize<'de> for TimeAsWritten {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |t| match parse_time(t) {
            Ok(_) | Err(TimeError::OutOfRange(_)) => Ok(TimeAsWritten(t.to_owned())),
            Err(e) => Err(e.to_string()),
        })
    }
}

/// `advance`: `500ms`, `90s`, `1h30m`.
struct DurationText(Duration);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |t| parse_duration(t).map(DurationText))
    }
}

struct ActionWord(WriteKind);

impl<'de> Deserialize<'de> for ActionWord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |name| {
            WriteKind::from_name(name)
                .map(ActionWord)
                .ok_or_else(|| format!("unknown action {name:?} (expected Create, Update or None)"))
        })
    }
}

struct RequeueWord(crate::reconcile::Requeue);

impl<'de> Deserialize<'de> for RequeueWord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |word| {
            requeue_from_word(word)
                .map(RequeueWord)
                .map_err(|e| format!("expected none, immediately or a duration: {e}"))
        })
    }
}

struct RolloutWord(RolloutState);

impl<'de> Deserialize<'de> for RolloutWord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |word| {
            RolloutState::from_key(word)
                .map(RolloutWord)
                .ok_or_else(|| {
                    format!("unknown rollout {word:?} (expected complete, progressing or stalled)")
                })
        })
    }
}

struct DeleteTarget(Kind);

impl<'de> Deserialize<'de> for DeleteTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_text(d, |name| match Kind::from_key(name) {
            Some(Kind::Template) | None => Err(format!(
                "cannot delete {name:?} (expected deployment, configuration, gatewayClass, \
                 gateway or routes)"
            )),
            Some(kind) => Ok(DeleteTarget(kind)),
        })
    }
}

/// `failWrites.count`: 1 or more.
struct Count(u32);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let count = i64::deserialize(d)?;
        u32::try_from(count)
            .ok()
            .filter(|c| *c >= 1)
            .map(Count)
            .ok_or_else(|| {
                de::Error::custom(format_args!(
                    "must be between 1 and {} (found {count})",
                    u32::MAX
                ))
            })
    }
}

/// `patch`: object keys to merge patches, in the order given, each a compact tree. Routes
/// take a list (a merge patch on a list replaces it), the others an object.
struct Patches(Vec<(Kind, tree::Value)>);

impl<'de> Deserialize<'de> for Patches {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Targets;
        impl<'de> Visitor<'de> for Targets {
            type Value = Patches;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Patches, A::Error> {
                let mut patches = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let Some(kind) = Kind::from_key(&key) else {
                        return Err(de::Error::unknown_field(&key, KINDS));
                    };
                    let patch = match kind {
                        Kind::Routes => tree::Value::from(map.next_value::<Vec<tree::Value>>()?),
                        _ => tree::Value::Object(map.next_value::<tree::Map>()?),
                    };
                    patches.push((kind, patch));
                }
                Ok(Patches(patches))
            }
        }
        d.deserialize_map(Targets)
    }
}

const KINDS: &[&str] = &[
    "gatewayClass",
    "gateway",
    "configuration",
    "deployment",
    "template",
    "routes",
];

/// Reads a scenario from its JSON value; `lifted` holds the objects already read out of it
/// (the strict reader reads the routes typed and the Deployment-shaped objects as trees,
/// straight from the text).
pub(super) fn read(mut value: Value, mut lifted: Lifted) -> Result<Scenario, ScenarioError> {
    let Some(map) = value.as_object_mut() else {
        return Err(ScenarioError::WrongType {
            step: None,
            key: "scenario".into(),
            expected: "an object",
            found: super::malformed::type_name(&value),
        });
    };
    let objects = map.remove("objects");
    // Each step a compact tree: read so by the strict reader; from a value, converted.
    let steps: Vec<tree::Value> = match (lifted.steps.take(), map.get_mut("steps")) {
        (Some(steps), _) => steps,
        (None, Some(Value::Array(steps))) => std::mem::take(steps)
            .into_iter()
            .map(tree::Value::from)
            .collect(),
        // Not a list: `File` says so.
        (None, _) => Vec::new(),
    };
    // Bounded before anything is built per step (the strict reader keeps one step past it).
    if steps.len() > MAX_STEPS {
        return Err(ScenarioError::InvalidValue {
            step: None,
            key: "steps".into(),
            why: format!("more than {MAX_STEPS} steps, the most a scenario file may have"),
        });
    }
    let file: File =
        serde_path_to_error::deserialize(value).map_err(|e| from_serde(&e, |_| None))?;
    // Each step read from its tree (dropped then) and made a step at once (what serde reads
    // of a step is many times the step). A step serde reads but the format refuses (no
    // verb, two) is told after every step is read and the objects are: the first one.
    let mut read_steps = Vec::with_capacity(steps.len());
    let mut refused = None;
    for (i, tree) in steps.into_iter().enumerate() {
        let (step, keys) = read_step(i + 1, &tree)?;
        drop(tree);
        match into_step(i + 1, step, &keys) {
            Ok(step) => read_steps.push(step),
            Err(e) => {
                refused.get_or_insert(e);
            }
        }
    }
    let now = match file.now {
        Some(Time(now)) => now,
        None => DEFAULT_NOW
            .parse()
            .map_err(|e| ScenarioError::InvalidValue {
                step: None,
                key: "now".into(),
                why: format!("{e}"),
            })?,
    };
    let objects = read_objects(objects, lifted)?;
    if let Some(refused) = refused {
        return Err(refused);
    }
    let steps = read_steps;
    check_patches(&objects, &steps)?;
    check_revisions(&steps)?;
    check_clock(now, &steps)?;
    Ok(Scenario {
        description: file.description.unwrap_or_default(),
        settings: file.settings.map(|s| s.0).unwrap_or_default(),
        now,
        objects,
        steps,
    })
}

/// Step `number` (1-based) read from its tree, with its keys (for messages that depend on
/// the verb beside them): an error inside the step is first an error of its keys.
fn read_step(number: usize, step: &tree::Value) -> Result<(StepFile, Vec<String>), ScenarioError> {
    let keys: Option<Vec<String>> = step
        .as_object()
        .map(|m| m.keys().map(str::to_owned).collect());
    let read = serde_path_to_error::deserialize(tree::de::Reader(step));
    match read {
        Ok(Obj(file)) => Ok((file, keys.unwrap_or_default())),
        Err(e) => Err(from_step_serde(&e, number, |number| {
            step_verb(number, keys.as_deref()?).err()
        })),
    }
}

/// A step's verb from its keys alone, checked before its values (as a person reads it): no
/// verb, an unknown verb, two verbs, or a key the verb does not take (`expect` beside
/// anything but `reconcile`) is the error to report, whatever the values.
fn step_verb(number: usize, keys: &[String]) -> Result<&'static str, ScenarioError> {
    let known = |k: &str| VERBS.into_iter().find(|v| *v == k);
    let mut verbs = keys.iter().filter(|k| *k != "note" && *k != "expect");
    let verb = match (verbs.next(), verbs.next()) {
        (None, _) => {
            return Err(ScenarioError::BadStep {
                step: number,
                why: "no step verb (expected one of reconcile, advance, patch, delete, \
                      failWrites, rollout, mutateWrites, restart, unreadable, snapshot, staleReads, catchUp, recreate)"
                    .into(),
            });
        }
        (Some(v), None) => known(v).ok_or_else(|| ScenarioError::UnknownVerb {
            step: number,
            verb: v.clone(),
        })?,
        (Some(a), Some(b)) => {
            // A known verb next to an unknown key: the key is the mistake.
            let (verb, other) = match (known(a), known(b)) {
                (Some(verb), None) => (verb, b),
                (None, Some(verb)) => (verb, a),
                (Some(_), Some(_)) => {
                    return Err(ScenarioError::BadStep {
                        step: number,
                        why: format!("more than one step verb: {a:?} and {b:?}"),
                    });
                }
                (None, None) => {
                    return Err(ScenarioError::UnknownVerb {
                        step: number,
                        verb: a.clone(),
                    });
                }
            };
            return Err(ScenarioError::UnknownKey {
                step: Some(number),
                key: other.clone(),
                context: format!("{verb} step"),
            });
        }
    };
    let takes = |k: &str| k == verb || k == "note" || (verb == "reconcile" && k == "expect");
    match keys.iter().find(|k| !takes(k)) {
        Some(key) => Err(ScenarioError::UnknownKey {
            step: Some(number),
            key: key.clone(),
            context: format!("{verb} step"),
        }),
        None => Ok(verb),
    }
}

fn into_step(number: usize, file: StepFile, keys: &[String]) -> Result<Step, ScenarioError> {
    let verb = step_verb(number, keys)?;
    let invalid = |key: &str, why: String| ScenarioError::InvalidValue {
        step: Some(number),
        key: key.into(),
        why,
    };
    let verb = if let Some(DurationText(by)) = file.advance {
        Verb::Advance(by)
    } else if let Some(Patches(patches)) = file.patch {
        if patches.is_empty() {
            return Err(invalid("patch", "names no object to patch".into()));
        }
        Verb::Patch(patches)
    } else if let Some(DeleteTarget(kind)) = file.delete {
        Verb::Delete(kind)
    } else if let Some(Obj(fail)) = file.fail_writes {
        let Some(error) = fail.error else {
            return Err(ScenarioError::MissingKey {
                step: Some(number),
                key: "error".into(),
                context: "failWrites".into(),
            });
        };
        let outcome = api_error_from_tree(&error).map_err(|e| match e.key {
            Some(key) => invalid(&format!("failWrites.error.{key}"), e.why),
            None => invalid("failWrites.error", e.why),
        })?;
        Verb::FailWrites {
            count: fail.count.0,
            outcome,
        }
    } else if let Some(RolloutWord(state)) = file.rollout {
        Verb::Rollout(state)
    } else if let Some(Obj(mutate)) = file.mutate_writes {
        let Some(patch) = mutate.patch else {
            return Err(ScenarioError::MissingKey {
                step: Some(number),
                key: "patch".into(),
                context: "mutateWrites".into(),
            });
        };
        Verb::MutateWrites(patch.map(Value::Object))
    } else if file.restart.is_some() {
        Verb::Restart
    } else if let Some(Obj(unreadable)) = file.unreadable {
        let Some(patch) = unreadable.configuration else {
            return Err(ScenarioError::MissingKey {
                step: Some(number),
                key: "configuration".into(),
                context: "unreadable".into(),
            });
        };
        Verb::Unreadable(Kind::Configuration, tree::Value::Object(patch))
    } else if let Some(name) = file.snapshot {
        if name.is_empty() {
            return Err(invalid("snapshot", "must name the snapshot".into()));
        }
        Verb::Snapshot(name)
    } else if let Some(Obj(stale)) = file.stale_reads {
        let kinds: Option<Vec<Kind>> = stale
            .kinds
            .map(|kinds| kinds.into_iter().map(|k| k.0).collect());
        if let Some(kinds) = &kinds {
            let distinct: std::collections::BTreeSet<&str> =
                kinds.iter().map(|k| k.key()).collect();
            if kinds.is_empty() || distinct.len() != kinds.len() {
                return Err(invalid(
                    "staleReads.kinds",
                    "must name one kind or more, each once (leave it out: every kind)".into(),
                ));
            }
        }
        Verb::StaleReads(super::StaleReads {
            from: stale.from,
            kinds,
        })
    } else if file.catch_up.is_some() {
        Verb::CatchUp
    } else if let Some(Obj(recreate)) = file.recreate {
        let Some(object) = recreate.gateway else {
            return Err(ScenarioError::MissingKey {
                step: Some(number),
                key: "gateway".into(),
                context: "recreate".into(),
            });
        };
        Verb::Recreate(Kind::Gateway, tree::Value::Object(object))
    } else if file.reconcile.is_some() {
        Verb::Reconcile(Box::new(
            file.expect.map(|e| into_expect(e.0)).unwrap_or_default(),
        ))
    } else {
        // `given` named a verb: one of the fields above is set.
        return Err(ScenarioError::BadStep {
            step: number,
            why: format!("cannot read step verb {verb:?}"),
        });
    };
    Ok(Step {
        verb,
        note: file.note,
    })
}

fn into_expect(file: ExpectFile) -> Expect {
    let conditions = |c: Option<InOrder<Option<Obj<ConditionFile>>>>| {
        c.map(|c| {
            c.0.into_iter()
                .map(|(type_, c)| (type_, c.map(|c| into_condition(c.0))))
                .collect()
        })
    };
    Expect {
        action: file.action.map(|a| a.0),
        status_written: file.status_written,
        conditions: conditions(file.conditions).unwrap_or_default(),
        gateway_class: conditions(file.gateway_class),
        events: file.events.map(|events| {
            events
                .into_iter()
                .map(|Obj(e)| EventExpect {
                    type_: e.type_.map(|t| t.0),
                    reason: e.reason,
                    message_contains: e.message_contains.unwrap_or_default(),
                })
                .collect()
        }),
        addresses: file.addresses,
        listeners: file.listeners.map(|listeners| {
            listeners
                .into_iter()
                .map(|Obj(l)| ListenerExpect {
                    name: l.name,
                    supported_kinds: l
                        .supported_kinds
                        .map(|kinds| kinds.into_iter().map(|Obj(k)| (k.group, k.kind)).collect()),
                    attached_routes: l.attached_routes,
                    conditions: conditions(l.conditions).unwrap_or_default(),
                })
                .collect()
        }),
        gateway_class_features: file.gateway_class_features,
        deployment: file.deployment.map(|d| d.map(Value::Object)),
        drift: file.drift,
        requeue: file.requeue.map(|r| r.0),
    }
}

fn into_condition(file: ConditionFile) -> ConditionExpect {
    ConditionExpect {
        status: file.status,
        reason: file.reason,
        message: file.message,
        message_contains: file.message_contains.unwrap_or_default(),
        observed_generation: file.observed_generation,
        last_transition_time: file.last_transition_time.map(|t| t.0),
    }
}

/// The objects, moved out of the file's value (no copy: they can be large), with those
/// the strict reader read already.
fn read_objects(value: Option<Value>, lifted: Lifted) -> Result<Objects, ScenarioError> {
    let value = value.ok_or_else(|| ScenarioError::MissingKey {
        step: None,
        key: "objects".into(),
        context: "the scenario".into(),
    })?;
    // Built by hand: `json!` would serialize `value`, a copy of every object.
    let mut wrapped = Value::Object(Map::from_iter([("objects".to_owned(), value)]));
    let file: Wrapped =
        serde_path_to_error::deserialize(&wrapped).map_err(|e| from_serde(&e, |_| None))?;
    let routes = file.objects.0.routes;
    // Read compactly from the text by the strict reader; from a value, converted.
    let namespaces = match lifted.namespaces {
        Some(namespaces) => namespaces,
        None => file
            .objects
            .0
            .namespaces
            .map(Namespaces::from)
            .unwrap_or_default(),
    };
    check_namespaces(&namespaces)?;
    let mut map = match wrapped.get_mut("objects").map(Value::take) {
        Some(Value::Object(map)) => map,
        // Obj<ObjectsFile> read it as an object.
        _ => Map::new(),
    };
    // The class, the Gateway and the configuration as compact trees: read so by the strict
    // reader; from a value, converted.
    let mut object = |kind: Kind, read: Option<tree::Value>| {
        read.or_else(|| map.remove(kind.key()).map(tree::Value::from))
            .filter(|v| !v.is_null())
    };
    let gateway_class = object(Kind::GatewayClass, lifted.gateway_class);
    let gateway = object(Kind::Gateway, lifted.gateway);
    let configuration = object(Kind::Configuration, lifted.configuration);
    // A list over the Gateway's or the class's CRD bounds: found while reading (no item
    // past the bound was kept), or, from a value, here.
    for (kind, over, read) in [
        (Kind::Gateway, lifted.gateway_over, &gateway),
        (Kind::GatewayClass, lifted.class_over, &gateway_class),
    ] {
        let found = match (over, read) {
            (Some((_, path, has, bound)), _) => {
                Some((path, identity::over_bound(kind, bound, has)))
            }
            (None, Some(read)) => identity::over_bounds(kind, read).err(),
            (None, None) => None,
        };
        if let Some((path, why)) = found {
            return Err(ScenarioError::InvalidValue {
                step: None,
                key: format!("objects.{kind}.{path}"),
                why,
            });
        }
    }
    let mut take = |kind: Kind| map.remove(kind.key()).filter(|v| !v.is_null());
    // A Deployment-shaped object: any JSON object, held as a tree.
    let deployment = |kind: Kind, read: Option<tree::Value>, value: Option<Value>| {
        let value = match (read, value) {
            (Some(read), _) => read,
            (None, Some(value)) => tree::Value::from(value),
            (None, None) => return Ok(None),
        };
        match value {
            tree::Value::Null => Ok(None),
            tree::Value::Object(object) => Ok(Some(Deployment::from_object(object))),
            other => Err(ScenarioError::WrongType {
                step: None,
                key: format!("objects.{kind}"),
                expected: "an object",
                found: super::malformed::type_name(&serde_json::Value::from(other)),
            }),
        }
    };
    let optional =
        |kind: Kind, value: Option<tree::Value>| -> Result<Option<tree::Value>, ScenarioError> {
            let key = format!("objects.{kind}");
            let invalid = |key: String, why: String| ScenarioError::InvalidValue {
                step: None,
                key,
                why,
            };
            match value {
                None => Ok(None),
                Some(v) if !v.is_object() => Err(ScenarioError::WrongType {
                    step: None,
                    key,
                    expected: "an object",
                    found: super::malformed::tree_type_name(&v),
                }),
                Some(v) => {
                    shape(kind, &v).map_err(|(path, why)| invalid(format!("{key}.{path}"), why))?;
                    check(kind, Some(&v)).map_err(|e| match e {
                        ClusterError::Malformed { why, .. } => invalid(key.clone(), why),
                        other => invalid(key.clone(), other.to_string()),
                    })?;
                    metadata_kept(&[], &v)
                        .map_err(|(path, why)| invalid(format!("{key}.{path}"), why))?;
                    Ok(Some(v))
                }
            }
        };
    let gateway = optional(Kind::Gateway, gateway)?.ok_or_else(|| ScenarioError::MissingKey {
        step: None,
        key: "gateway".into(),
        context: "objects".into(),
    })?;
    gateway_identity(&gateway).map_err(|(path, why)| ScenarioError::InvalidValue {
        step: None,
        key: format!("objects.gateway.{path}"),
        why,
    })?;
    Ok(Objects {
        gateway_class: optional(Kind::GatewayClass, gateway_class)?,
        gateway,
        configuration: optional(Kind::Configuration, configuration)?,
        deployment: deployment(Kind::Deployment, lifted.deployment, take(Kind::Deployment))?,
        template: deployment(Kind::Template, lifted.template, take(Kind::Template))?,
        routes: lifted.routes.or(routes).unwrap_or_default(),
        namespaces,
    })
}

/// `objects` under its own key, so that serde's key paths start with `objects`.
#[derive(Deserialize)]
struct Wrapped {
    objects: Obj<ObjectsFile>,
}
/// Each `staleReads` names a snapshot an earlier step took and no earlier `staleReads`
/// used, each snapshot is used by one (a copy kept for nothing is a mistake, a memory cost
/// too), and a `catchUp` ends stale reads in place.
fn check_revisions(steps: &[Step]) -> Result<(), ScenarioError> {
    // Pending snapshots: name → the step that took it.
    let mut pending: BTreeMap<&str, usize> = BTreeMap::new();
    let mut lagging = false;
    for (i, step) in steps.iter().enumerate() {
        let invalid = |key: &str, why: String| ScenarioError::InvalidValue {
            step: Some(i + 1),
            key: key.into(),
            why,
        };
        match &step.verb {
            Verb::Snapshot(name) => {
                if let Some(taken) = pending.insert(name, i + 1) {
                    return Err(invalid(
                        "snapshot",
                        format!("{name:?} is taken already (step {taken}) and not used yet"),
                    ));
                }
            }
            Verb::StaleReads(stale) => {
                let from = &stale.from;
                if pending.remove(from.as_str()).is_none() {
                    return Err(invalid(
                        "staleReads.from",
                        format!(
                            "no snapshot {from:?} to read from (a snapshot step must take it \
                             before, and each is used once)"
                        ),
                    ));
                }
                lagging = true;
            }
            Verb::CatchUp if !lagging => {
                return Err(invalid(
                    "catchUp",
                    "the reads do not lag here (no staleReads before it)".into(),
                ));
            }
            Verb::CatchUp => lagging = false,
            _ => {}
        }
    }
    match pending.into_iter().min_by_key(|(_, step)| *step) {
        Some((name, step)) => Err(ScenarioError::InvalidValue {
            step: Some(step),
            key: "snapshot".into(),
            why: format!("{name:?} is never read from (no later staleReads names it)"),
        }),
        None => Ok(()),
    }
}

/// The clock must stay in the supported range through every `advance`.
fn check_clock(now: Timestamp, steps: &[Step]) -> Result<(), ScenarioError> {
    let mut clock = now;
    for (i, step) in steps.iter().enumerate() {
        if let Verb::Advance(by) = step.verb {
            clock = jiff::SignedDuration::try_from(by)
                .ok()
                .and_then(|by| clock.checked_add(by).ok())
                .ok_or_else(|| ScenarioError::InvalidValue {
                    step: Some(i + 1),
                    key: "advance".into(),
                    why: format!(
                        "moves the clock past {}, out of the supported range",
                        Timestamp::MAX
                    ),
                })?;
        }
    }
    Ok(())
}

mod identity;
mod namespaces;

pub use namespaces::namespace_list;

#[cfg(test)]
pub(crate) mod tests;
