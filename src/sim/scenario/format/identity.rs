//! The objects' identity and shape, checked when a scenario file is read and through its
//! `patch`, `recreate` and `unreadable` steps: a Gateway keeps the fields the crate cannot do without,
//! no step removes or retypes an object's identity metadata or renames or moves the
//! Gateway, and every value has the type of its kind (an `unreadable` step excepted, until
//! a `patch` mends it).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::read_at::Readable;
use crate::sim::cluster::store::typed_at;
use crate::sim::cluster::{Kind, Objects};
use crate::sim::scenario::malformed::ScenarioError;
use crate::sim::scenario::{Step, Verb};
use crate::sim::strict_json::{CLASS_BOUNDS, GATEWAY_BOUNDS};
use crate::wire::tree;
use crate::wire::{Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The Gateway fields a scenario cannot do without (name, namespace, uid, generation): the crate cannot work on a
/// Gateway without them. Returns the missing field.
pub(super) fn gateway_identity(gateway: &tree::Value) -> Result<(), (String, String)> {
    for field in ["name", "namespace", "uid"] {
        match gateway.get("metadata").and_then(|m| m.get(field)) {
            Some(tree::Value::String(s)) if !s.is_empty() => {}
            _ => {
                return Err((
                    format!("metadata.{field}"),
                    "is required (a Gateway always has one)".to_owned(),
                ));
            }
        }
    }
    Ok(())
}

/// The lists its CRD bounds, for a Gateway ([`GATEWAY_BOUNDS`]) or a GatewayClass
/// ([`CLASS_BOUNDS`]); none for another kind.
fn bounds_of(kind: Kind) -> &'static [(&'static [&'static str], usize)] {
    match kind {
        Kind::Gateway => &GATEWAY_BOUNDS,
        Kind::GatewayClass => &CLASS_BOUNDS,
        _ => &[],
    }
}

/// The first of an object's lists over the bound its CRD sets ([`GATEWAY_BOUNDS`],
/// [`CLASS_BOUNDS`]: the API server refuses such an object), in the object or in a merge
/// patch of it (a list in a merge patch replaces the object's): its key path and why.
pub(super) fn over_bounds(kind: Kind, patch: &tree::Value) -> Result<(), (String, String)> {
    over(kind, patch, tree::Value::get, |v| v.as_array())
}

fn over<'v, V>(
    kind: Kind,
    value: &'v V,
    get: impl Fn(&'v V, &str) -> Option<&'v V> + Copy,
    items: impl Fn(&'v V) -> Option<&'v [V]> + Copy,
) -> Result<(), (String, String)> {
    /// The lists at `pattern` under `value` (at key path `path`) over `bound`.
    #[allow(clippy::too_many_arguments)]
    fn walk<'v, V>(
        kind: Kind,
        value: &'v V,
        path: String,
        pattern: &[&str],
        bound: usize,
        get: impl Fn(&'v V, &str) -> Option<&'v V> + Copy,
        items: impl Fn(&'v V) -> Option<&'v [V]> + Copy,
    ) -> Result<(), (String, String)> {
        match pattern.split_first() {
            None => match items(value) {
                Some(list) if list.len() > bound => {
                    Err((path, over_bound(kind, bound, list.len())))
                }
                _ => Ok(()),
            },
            Some((&"[]", rest)) => items(value)
                .unwrap_or_default()
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| {
                    walk(kind, item, format!("{path}[{i}]"), rest, bound, get, items)
                }),
            Some((key, rest)) => match get(value, key) {
                Some(inner) => {
                    let path = match path.is_empty() {
                        true => (*key).to_owned(),
                        false => format!("{path}.{key}"),
                    };
                    walk(kind, inner, path, rest, bound, get, items)
                }
                None => Ok(()),
            },
        }
    }
    bounds_of(kind).iter().try_for_each(|(pattern, bound)| {
        walk(kind, value, String::new(), pattern, *bound, get, items)
    })
}

/// Why a list of an object of `kind` is over its bound (`has` items): as the core's
/// validation words a Gateway over the same bound, and why a file cannot have it.
pub(super) fn over_bound(kind: Kind, bound: usize, has: usize) -> String {
    let crd = match kind {
        Kind::GatewayClass => "GatewayClass",
        _ => "Gateway",
    };
    format!(
        "must have at most {bound} items (has {has}): the {crd} CRD's bound, which the API \
         server enforces"
    )
}

/// The metadata an API object keeps once it has it: no patch removes it, no `unreadable`
/// step removes or retypes it (the server fills `generation` again on every update, so a
/// patch that leaves it out loses nothing).
const IDENTITY: [&str; 4] = ["name", "namespace", "uid", "generation"];

/// The identity fields `value` has (not null).
fn identity_fields(value: Option<&tree::Value>) -> Vec<&'static str> {
    let meta = value.and_then(|v| v.get("metadata"));
    IDENTITY
        .into_iter()
        .filter(|f| meta.and_then(|m| m.get(f)).is_some_and(|v| !v.is_null()))
        .collect()
}

/// The object's identity as the API server keeps it: `metadata` an object, `name`,
/// `namespace` and `uid` strings, `generation` an integer not below zero, and none of
/// `had` (the fields it had before a patch) removed. The key path (from the object) and why.
pub(super) fn metadata_kept(had: &[&str], value: &tree::Value) -> Result<(), (String, String)> {
    use crate::sim::scenario::malformed::{quoted_tree_value, tree_type_name as type_name};
    let meta = match value.get("metadata") {
        None | Some(tree::Value::Null) => None,
        Some(tree::Value::Object(meta)) => Some(meta),
        Some(other) => {
            return Err((
                "metadata".to_owned(),
                format!(
                    "must be an object (found {}): the API server keeps the object's name, \
                     namespace, uid and generation in it",
                    type_name(other)
                ),
            ));
        }
    };
    for field in IDENTITY {
        let path = format!("metadata.{field}");
        match meta.and_then(|m| m.get(field)) {
            None | Some(tree::Value::Null) if had.contains(&field) => {
                return Err((
                    path,
                    "cannot be removed (the API server keeps it)".to_owned(),
                ));
            }
            None | Some(tree::Value::Null) => {}
            Some(tree::Value::String(_)) if field != "generation" => {}
            Some(other) if field != "generation" => {
                return Err((
                    path,
                    format!("must be a string (found {})", type_name(other)),
                ));
            }
            Some(generation) => match generation.as_i64() {
                Some(g) if g < 0 => {
                    return Err((path, format!("must not be negative (got {g})")));
                }
                Some(_) => {}
                None => {
                    return Err((
                        path,
                        format!(
                            "must be an integer from 0 to {} (found {})",
                            i64::MAX,
                            quoted_tree_value(generation)
                        ),
                    ));
                }
            },
        }
    }
    Ok(())
}

/// A patch must not rename the Gateway or move it to another namespace: the API server
/// refuses a change of either (it would be another object).
fn gateway_kept(before: Option<&tree::Value>, after: &tree::Value) -> Result<(), (String, String)> {
    for field in ["name", "namespace"] {
        let at = |v: &tree::Value| v.get("metadata").and_then(|m| m.get(field)).cloned();
        if let Some(was) = before.and_then(at)
            && at(after).is_some_and(|now| now != was)
        {
            return Err((
                format!("metadata.{field}"),
                format!(
                    "cannot be changed (the API server refuses to {} an object; \
                     the Gateway is {})",
                    if field == "name" { "rename" } else { "move" },
                    crate::sim::scenario::malformed::quoted_tree_value(&was)
                ),
            ));
        }
    }
    Ok(())
}

/// Every patch applied, in order, to a copy of the objects it touches: a patch that leaves
/// an object the crate cannot read (a value of the wrong type, a Gateway without its name,
/// namespace or uid) makes the file malformed, named by step and key, before anything runs.
pub(super) fn check_patches(objects: &Objects, steps: &[Step]) -> Result<(), ScenarioError> {
    // Copied on the first patch of each kind only: most files patch one or two objects.
    let mut shadow: BTreeMap<&'static str, Option<tree::Value>> = BTreeMap::new();
    // The kinds whose copy may hold a value of the wrong type (left by an `unreadable`
    // step): a patch on them is checked whole until one leaves them readable. Any other
    // is readable, so a patch on it is checked by what it sets alone (its own size, not
    // the object's), and whole only when that finds something to say.
    let mut unchecked: BTreeSet<&'static str> = BTreeSet::new();
    let initial = |kind: Kind| -> Option<tree::Value> {
        match kind {
            Kind::GatewayClass => objects.gateway_class.clone(),
            Kind::Gateway => Some(objects.gateway.clone()),
            Kind::Configuration => objects.configuration.clone(),
            // Copied only when a step patches it.
            Kind::Deployment => objects
                .deployment
                .as_ref()
                .map(|d| tree::Value::Object(d.object.clone())),
            Kind::Template => Some(tree::Value::Object(match &objects.template {
                Some(template) => template.object.clone(),
                None => crate::template::default_template().object,
            })),
            // A patch on the routes replaces them: what they were does not matter.
            Kind::Routes => None,
        }
    };
    for (i, step) in steps.iter().enumerate() {
        let invalid = |key: &str, why: &dyn fmt::Display| ScenarioError::InvalidValue {
            step: Some(i + 1),
            key: key.to_owned(),
            why: why.to_string(),
        };
        match &step.verb {
            Verb::Delete(kind) if !matches!(kind, Kind::Gateway) => {
                let gone = match kind {
                    Kind::Routes => Some(tree::Value::from(Vec::new())),
                    _ => None,
                };
                shadow.insert(kind.key(), gone);
                unchecked.remove(kind.key());
            }
            // A new object under the old one's name: checked as the file's objects are.
            Verb::Recreate(kind, object) => {
                let slot = shadow.entry(kind.key()).or_insert_with(|| initial(*kind));
                let at = |(path, why): (String, String)| {
                    invalid(&format!("recreate.{}.{path}", kind.key()), &why)
                };
                over_bounds(*kind, object).map_err(at)?;
                shape(*kind, object).map_err(at)?;
                metadata_kept(&[], object).map_err(at)?;
                gateway_identity(object).map_err(at)?;
                let meta =
                    |v: &tree::Value, f: &str| v.get("metadata").and_then(|m| m.get(f)).cloned();
                for field in ["name", "namespace"] {
                    let was = slot.as_ref().and_then(|v| meta(v, field));
                    if was != meta(object, field) {
                        return Err(at((
                            format!("metadata.{field}"),
                            format!(
                                "must be the deleted Gateway's ({}): the simulated server \
                                 holds one Gateway",
                                was.map(|w| Value::from(&w).to_string()).unwrap_or_default()
                            ),
                        )));
                    }
                }
                if slot.as_ref().and_then(|v| meta(v, "uid")) == meta(object, "uid") {
                    return Err(at((
                        "metadata.uid".to_owned(),
                        "must differ from the deleted Gateway's (a new object has a new uid)"
                            .to_owned(),
                    )));
                }
                *slot = Some(object.clone());
                unchecked.remove(kind.key());
            }
            // Stored without the type check: the only place a wrong type is allowed.
            Verb::Unreadable(kind, patch) => {
                let slot = shadow.entry(kind.key()).or_insert_with(|| initial(*kind));
                unchecked.insert(kind.key());
                let had = identity_fields(slot.as_ref());
                match slot.as_mut() {
                    None => *slot = Some(patch.clone()),
                    // As JSON, at the patch's own size.
                    Some(target) => crate::merge_patch::apply_to_tree(target, &Value::from(patch)),
                }
                // Any value may be stored, but not in the identity the server keeps.
                if let Some(value) = slot.as_ref() {
                    metadata_kept(&had, value).map_err(|(path, why)| {
                        invalid(&format!("unreadable.{}.{path}", kind.key()), &why)
                    })?;
                }
            }
            Verb::Patch(patches) => {
                for (kind, patch) in patches {
                    // Before the patch is copied: a list it sets replaces the object's.
                    over_bounds(*kind, patch).map_err(|(path, why)| {
                        invalid(&format!("patch.{}.{path}", kind.key()), &why)
                    })?;
                    let tree_patch = patch;
                    // As JSON, at the patch's own size.
                    let patch = &Value::from(patch);
                    let slot = shadow.entry(kind.key()).or_insert_with(|| initial(*kind));
                    let mut had = identity_fields(slot.as_ref());
                    // The server sets the generation again on an update: leaving it out of
                    // a patch loses nothing.
                    had.retain(|f| *f != "generation");
                    // A patch on an absent object (or a list of routes) is the whole
                    // object: checked whole, at the patch's size.
                    let whole =
                        slot.is_none() || *kind == Kind::Routes || unchecked.remove(kind.key());
                    let before_gateway = match kind {
                        Kind::Gateway => slot.as_ref().and_then(|g| g.get("metadata")).map(|m| {
                            let field = |f: &str| m.get(f).cloned().unwrap_or_default();
                            let meta: tree::Map =
                                [("name", field("name")), ("namespace", field("namespace"))]
                                    .into_iter()
                                    .collect();
                            tree::Value::Object(
                                [("metadata", tree::Value::Object(meta))]
                                    .into_iter()
                                    .collect(),
                            )
                        }),
                        _ => None,
                    };
                    match (kind, slot.as_mut()) {
                        (Kind::Routes, _) | (_, None) => *slot = Some(tree_patch.clone()),
                        (_, Some(target)) => crate::merge_patch::apply_to_tree(target, patch),
                    }
                    let Some(value) = slot.as_ref() else { continue };
                    let key = format!("patch.{}", kind.key());
                    let at = |path: String| {
                        if path.starts_with('[') {
                            format!("{key}{path}")
                        } else {
                            format!("{key}.{path}")
                        }
                    };
                    if *kind == Kind::Gateway {
                        gateway_identity(value).map_err(|(path, why)| {
                            invalid(&at(path), &format!("removed by the patch, but {why}"))
                        })?;
                        gateway_kept(before_gateway.as_ref(), value)
                            .map_err(|(path, why)| invalid(&at(path), &why))?;
                    }
                    // The API server never lets an object lose its name, namespace or uid.
                    let present = |field: &str| {
                        value
                            .get("metadata")
                            .and_then(|m| m.get(field))
                            .is_some_and(|f| !f.is_null())
                    };
                    if !matches!(kind, Kind::Template | Kind::Routes)
                        && let Some(field) = had.iter().find(|f| !present(f))
                    {
                        return Err(invalid(
                            &at(format!("metadata.{field}")),
                            &"cannot be removed (the API server keeps it)",
                        ));
                    }
                    let set = (!whole).then(|| crate::sim::cluster::store::without_nulls(patch));
                    let shaped = match set.as_ref().map(|set| shape(*kind, set)) {
                        Some(Ok(())) => Ok(()),
                        // What the patch sets alone may lack what the object has (a
                        // required field beside it): the whole object says.
                        Some(Err(_)) | None => shape(*kind, value),
                    };
                    if let Err((path, why)) = shaped {
                        unchecked.insert(kind.key());
                        return Err(invalid(&at(path), &why));
                    }
                    if !matches!(kind, Kind::Template | Kind::Routes | Kind::Deployment) {
                        metadata_kept(&had, value)
                            .map_err(|(path, why)| invalid(&at(path), &why))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A value of the wrong type inside an object: its key path (from the object) and why.
pub(super) fn shape(kind: Kind, value: &impl Readable) -> Result<(), (String, String)> {
    let found = match kind {
        Kind::GatewayClass => typed_at::<GatewayClass>(value).map(drop),
        Kind::Gateway => typed_at::<Gateway>(value).map(drop),
        Kind::Configuration => typed_at::<GatewayConfiguration>(value).map(drop),
        // A Deployment is any JSON object (kept whole): nothing to read, nothing to copy.
        Kind::Deployment | Kind::Template => Ok(()),
        Kind::Routes => typed_at::<Vec<L34Route>>(value).map(drop),
    };
    match found {
        Ok(()) | Err((None, _)) => Ok(()),
        Err((Some(path), why)) => Err((path, why)),
    }
}
