//! Semantic drift between the desired and the observed Deployment.
//!
//! [`drift`] compares by meaning, not by bytes, and returns the paths that differ (empty:
//! no update needed). Its rules, the form of the paths and its cost are public
//! documentation: the section "Drift" of [`crate::reconcile`]. A change here changes that
//! text.

use crate::wire::tree::{Map, Number, Value};

use crate::json::Overlay;
use crate::lookup::{generation_annotation, uid_annotation};
use crate::nad::NETWORKS_ANNOTATION;
use crate::quantity::Quantity;
use crate::render::fields::{ANTI_AFFINITY_TERMS, Compare, ExactKeys, Field, POD_SPEC};
use crate::render::{Owned, PodList};
use crate::settings::Settings;
use crate::wire::{Deployment, GatewayConfiguration};

/// How deep the walk looks for owned fields compared apart: the longest path of one.
const APART_DEPTH: usize = {
    let mut depth = 0;
    let mut i = 0;
    while i < Field::ALL.len() {
        let field = Field::ALL[i];
        if field.compare().is_apart() && field.path().len() > depth {
            depth = field.path().len();
        }
        i += 1;
    }
    depth
};

/// Server-owned `metadata` fields, ignored on both sides.
const SERVER_METADATA: &[&str] = &[
    "resourceVersion",
    "managedFields",
    "creationTimestamp",
    "uid",
    "generation",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Which owned values drift compares exactly: those a GatewayConfiguration enforces on
/// update, and the annotations that name it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Enforcement {
    /// `horizontalScaling.enforceReplicas`.
    pub replicas: bool,
    /// Names of the containers whose resources are enforced.
    pub resources: Vec<String>,
    /// The keys of the generation and uid annotations
    /// ([`crate::lookup::generation_annotation`], [`crate::lookup::uid_annotation`]).
    pub identity_annotations: [String; 2],
}

impl Default for Enforcement {
    /// Nothing enforced; the annotation keys of the default condition domain.
    fn default() -> Self {
        Enforcement::of(&Settings::default(), &GatewayConfiguration::default())
    }
}

impl Enforcement {
    /// What a GatewayConfiguration enforces, with the annotation keys of the settings'
    /// condition domain. The container names are sorted and deduplicated.
    pub fn of(settings: &Settings, configuration: &GatewayConfiguration) -> Self {
        let spec = &configuration.spec;
        let replicas = spec
            .horizontal_scaling
            .as_ref()
            .is_some_and(|h| h.enforce_replicas);
        let mut resources: Vec<String> = spec
            .vertical_scaling
            .iter()
            .flat_map(|v| &v.containers)
            .filter(|c| c.enforce_resources)
            .map(|c| c.name.clone())
            .collect();
        resources.sort();
        resources.dedup();
        Enforcement {
            replicas,
            resources,
            identity_annotations: [generation_annotation(settings), uid_annotation(settings)],
        }
    }
}

/// The drifted field paths (e.g. `spec.template.spec.containers[router].env[POD_UID]`);
/// empty when the observed Deployment is as desired. See the module documentation for the
/// rules. The reconcile compares the owned part alone ([`drift_owned`]); the tests compare
/// it with this generic walk over whole Deployments.
#[cfg(test)]
pub fn drift(
    desired: &Deployment,
    observed: &Deployment,
    enforcement: &Enforcement,
) -> Vec<String> {
    let mut walker = Walker::new();
    let (d, o) = (&desired.object, &observed.object);
    walker.object(d, o);
    walker.owned(&|field| get(d, field.path()), o, enforcement);
    let containers = get(d, Field::Containers.path())
        .and_then(Value::as_array)
        .unwrap_or_default();
    let by_name = ByName::new(containers, enforcement.resources.len());
    walker.enforced_resources(o, enforcement, &|name| {
        Some(by_name.get(name)?.as_object()?.get("resources"))
    });
    walker.into_paths()
}

/// [`drift`] of the owned part of a render ([`crate::render::render_owned`]): the same
/// paths as `drift(&complete(observed, owned), observed, enforcement)`, without building
/// that Deployment, the template's containers compared where they are.
pub(crate) fn drift_owned(
    owned: &Owned<'_>,
    observed: &Deployment,
    enforcement: &Enforcement,
) -> Vec<String> {
    let mut walker = Walker::new();
    let (leaves, o) = (owned.leaves(), &observed.object);
    for (field, dv) in leaves.iter() {
        walker.leaf(field.path(), dv, o);
    }
    walker.owned(&|field| leaves.get(field), o, enforcement);
    let observed_pod = object(o, &POD_SPEC);
    // Where the observed object has a non-object on the way to its pod spec, the walk of
    // the owned values (which always include one in the pod spec) reported that, and the
    // full render's lists are below it.
    let comparable = (1..=POD_SPEC.len()).all(|n| {
        POD_SPEC
            .get(..n)
            .and_then(|prefix| get(o, prefix))
            .is_none_or(|v| v.is_null() || v.is_object())
    });
    let mut containers = None;
    for (field, rendered) in owned.lists().filter(|_| comparable) {
        let Some(list) = field.pod_key() else {
            continue;
        };
        let ov = observed_pod.and_then(|p| p.get(list));
        walker.at_path(&POD_SPEC, |w| {
            w.at(Seg::Key(list), |w| match rendered {
                PodList::Absent => {}
                PodList::Template(value) => w.value(value, ov),
                PodList::Containers(rendered) => match ov.filter(|v| !v.is_null()) {
                    None => w.list(rendered, &[]),
                    Some(Value::Array(ol)) => w.list(rendered, ol),
                    Some(_) => w.report(),
                },
            });
        });
        if let (Field::Containers, PodList::Containers(rendered)) = (field, rendered) {
            containers = Some(rendered.as_slice());
        }
    }
    for (key, dv) in owned.pod_fields().filter(|_| comparable) {
        let ov = observed_pod.and_then(|p| p.get(key));
        // The template's affinity holds its anti-affinity terms unrendered; the rendered ones
        // are a leaf, compared above.
        let skip: &[&str] = if key == "affinity" {
            &ANTI_AFFINITY_TERMS
        } else {
            &[]
        };
        walker.at_path(&POD_SPEC, |w| {
            w.at(Seg::Key(key), |w| w.value_except(dv, ov, skip))
        });
    }
    let by_name = ByName::new(containers.unwrap_or_default(), enforcement.resources.len());
    walker.enforced_resources(o, enforcement, &|name| {
        Some(by_name.get(name)?.get("resources"))
    });
    walker.into_paths()
}

/// The desired value of an owned field.
type Desired<'a, 'f> = &'f dyn Fn(Field) -> Option<&'a Value>;

/// The `resources` of the desired container of a name: `None` when there is no such
/// container, `Some(None)` when it has none.
type DesiredResources<'a, 'f> = &'f dyn Fn(&str) -> Option<Option<&'a Value>>;

/// An element of a desired list: a JSON value, or a rendered container compared where the
/// template holds it.
trait Elem<'a> {
    /// The string at `field` of the element, if it is an object that has one.
    fn key(&'a self, field: &str) -> Option<&'a str>;
    /// Compares the element with the observed one (`None`: absent).
    fn compare(&'a self, walker: &mut Walker<'a>, observed: Option<&'a Value>);
}

impl<'a> Elem<'a> for Value {
    fn key(&'a self, field: &str) -> Option<&'a str> {
        self.as_object()?.get(field)?.as_str()
    }

    fn compare(&'a self, walker: &mut Walker<'a>, observed: Option<&'a Value>) {
        walker.value(self, observed);
    }
}

impl<'a> Elem<'a> for Overlay<'a> {
    fn key(&'a self, field: &str) -> Option<&'a str> {
        self.get(field)?.as_str()
    }

    /// As [`Walker::value`] compares the object the overlay stands for.
    fn compare(&'a self, walker: &mut Walker<'a>, observed: Option<&'a Value>) {
        if !self.base.is_object() {
            return walker.value(self.base, observed);
        }
        match observed.filter(|v| !v.is_null()) {
            None => {
                for (k, dv) in self.entries() {
                    walker.at(Seg::Key(k), |w| w.value(dv, None));
                }
            }
            Some(Value::Object(om)) => {
                for (k, dv) in self.entries() {
                    if !walker.skipped(k) {
                        walker.at(Seg::Key(k), |w| w.value(dv, om.get(k)));
                    }
                }
            }
            Some(_) => walker.report(),
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    /// An object key.
    Key(&'a str),
    /// A list element paired by merge key.
    Elem(&'a str),
    /// A list element paired by index.
    Index(usize),
}

struct Walker<'a> {
    path: Vec<Seg<'a>>,
    out: Vec<String>,
}

impl<'a> Walker<'a> {
    fn new() -> Self {
        Walker {
            path: Vec::with_capacity(16),
            out: Vec::new(),
        }
    }

    /// The drifted paths, sorted, each once.
    fn into_paths(mut self) -> Vec<String> {
        self.out.sort();
        self.out.dedup();
        self.out
    }

    fn report(&mut self) {
        self.out.push(format_path(&self.path));
    }

    fn at(&mut self, seg: Seg<'a>, f: impl FnOnce(&mut Self)) {
        self.path.push(seg);
        f(self);
        self.path.pop();
    }

    /// Whether `key` of the object at the current path is skipped by the generic walk:
    /// server-owned, or an owned field compared apart in [`Walker::owned`].
    fn skipped(&self, key: &str) -> bool {
        match self.path.as_slice() {
            [] if matches!(key, "status" | "apiVersion" | "kind") => true,
            [Seg::Key("metadata")] if SERVER_METADATA.contains(&key) => true,
            path if path.len() < APART_DEPTH => Field::ALL.iter().any(|f| {
                f.compare().is_apart()
                    && f.path().split_last().is_some_and(|(last, parents)| {
                        *last == key
                            && parents.len() == path.len()
                            && parents
                                .iter()
                                .zip(path)
                                .all(|(p, seg)| matches!(seg, Seg::Key(k) if k == p))
                    })
            }),
            _ => false,
        }
    }

    /// Whether the current path is an entry of a string map, whose empty values the API
    /// server keeps (`nodeSelector: {role: ""}`): only struct fields are dropped when empty.
    fn in_string_map(&self) -> bool {
        matches!(
            self.path.as_slice(),
            [
                ..,
                Seg::Key("nodeSelector" | "labels" | "annotations" | "matchLabels"),
                Seg::Key(_)
            ]
        )
    }

    /// Whether the current path is an element of a container's `env`.
    fn in_env_entry(&self) -> bool {
        matches!(
            self.path.as_slice(),
            [
                ..,
                Seg::Key("containers" | "initContainers" | "ephemeralContainers"),
                Seg::Elem(_) | Seg::Index(_),
                Seg::Key("env"),
                Seg::Elem(_) | Seg::Index(_)
            ]
        )
    }

    /// Whether the current path is an entry of `resources.requests` or `limits`, which the
    /// API server stores rounded up to a milli.
    fn in_resource_list(&self) -> bool {
        matches!(
            self.path.as_slice(),
            [
                ..,
                Seg::Key("resources"),
                Seg::Key("requests" | "limits"),
                Seg::Key(_)
            ]
        )
    }

    fn in_quantity_position(&self) -> bool {
        matches!(
            self.path.as_slice(),
            [.., Seg::Key("sizeLimit")]
                | [
                    ..,
                    Seg::Key("resources"),
                    Seg::Key("requests" | "limits"),
                    Seg::Key(_)
                ]
        )
    }

    fn merge_key(&self) -> Option<&'static str> {
        match self.path.last()? {
            Seg::Key(
                "containers"
                | "initContainers"
                | "ephemeralContainers"
                | "env"
                | "volumes"
                | "ports"
                | "imagePullSecrets",
            ) => Some("name"),
            Seg::Key("volumeMounts") => Some("mountPath"),
            Seg::Key("volumeDevices") => Some("devicePath"),
            Seg::Key("readinessGates") => Some("conditionType"),
            Seg::Key("ownerReferences") => Some("uid"),
            _ => None,
        }
    }

    /// Compares a desired value with the observed one (`None`: absent or null).
    fn value(&mut self, d: &'a Value, o: Option<&'a Value>) {
        let o = o.filter(|v| !v.is_null());
        match (d, o) {
            (Value::Null, _) => {}
            (Value::Object(dm), None) => {
                for (k, dv) in dm {
                    self.at(Seg::Key(k), |w| w.value(dv, None));
                }
            }
            (Value::Object(dm), Some(Value::Object(om))) => self.object(dm, om),
            (Value::Array(dl), None) => self.list(dl, &[]),
            (Value::Array(dl), Some(Value::Array(ol))) => self.list(dl, ol),
            (_, None) => {
                if !is_empty(d) || self.in_string_map() {
                    self.report();
                }
            }
            (_, Some(o)) => {
                if !self.scalar_equal(d, o) {
                    self.report();
                }
            }
        }
    }

    /// [`Walker::value`], but the value at `skip` (object keys below `d`) is left out; an
    /// empty `skip` compares the whole value.
    fn value_except(&mut self, d: &'a Value, o: Option<&'a Value>, skip: &'a [&'a str]) {
        let Some((first, rest)) = skip.split_first() else {
            return self.value(d, o);
        };
        let below = |w: &mut Self, k: &str, dv: &'a Value, ov: Option<&'a Value>| {
            if k != *first {
                w.value(dv, ov);
            } else if !rest.is_empty() {
                w.value_except(dv, ov, rest);
            }
        };
        match (d, o.filter(|v| !v.is_null())) {
            (Value::Object(dm), None) => {
                for (k, dv) in dm {
                    self.at(Seg::Key(k), |w| below(w, k, dv, None));
                }
            }
            (Value::Object(dm), Some(Value::Object(om))) => {
                for (k, dv) in dm {
                    if !self.skipped(k) {
                        self.at(Seg::Key(k), |w| below(w, k, dv, om.get(k)));
                    }
                }
            }
            _ => self.value(d, o),
        }
    }

    fn object(&mut self, dm: &'a Map, om: &'a Map) {
        if self.in_env_entry() {
            // The value source is compared exactly: a `value` or `valueFrom` only the
            // observed entry has is drift (the other way round, the walk below finds it).
            for key in ["value", "valueFrom"] {
                let set = |m: &Map| m.get(key).is_some_and(|v| !is_empty(v));
                if set(om) && !set(dm) {
                    self.at(Seg::Key(key), Self::report);
                }
            }
        }
        for (k, dv) in dm {
            if self.skipped(k) {
                continue;
            }
            self.at(Seg::Key(k), |w| w.value(dv, om.get(k)));
        }
    }

    /// Compares the desired value `dv` at `path` (object keys from the root) with the
    /// observed object, as the walk of a desired object made of such values finds it: a
    /// non-object on the way in the observed one is drift there, and a key the walk skips
    /// is skipped where the observed parent is an object.
    fn leaf(&mut self, path: &'a [&'a str], dv: &'a Value, o: &'a Map) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let depth = self.path.len();
        let mut parent = Some(o);
        for key in parents {
            self.path.push(Seg::Key(key));
            match parent.and_then(|m| m.get(key)).filter(|v| !v.is_null()) {
                None => parent = None,
                Some(Value::Object(m)) => parent = Some(m),
                Some(_) => {
                    self.report();
                    self.path.truncate(depth);
                    return;
                }
            }
        }
        if parent.is_none() || !self.skipped(last) {
            self.at(Seg::Key(last), |w| {
                w.value(dv, parent.and_then(|m| m.get(last)))
            });
        }
        self.path.truncate(depth);
    }

    fn scalar_equal(&self, d: &Value, o: &Value) -> bool {
        // Equal as written is equal by every rule below; only a difference needs them.
        if d == o {
            return true;
        }
        if self.in_quantity_position()
            && let (Some(a), Some(b)) = (quantity(d), quantity(o))
        {
            return if self.in_resource_list() {
                a.rounded_up_to_milli() == b.rounded_up_to_milli()
            } else {
                a == b
            };
        }
        match (d, o) {
            (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
            _ => d == o,
        }
    }

    fn list<D: Elem<'a>>(&mut self, dl: &'a [D], ol: &'a [Value]) {
        let field = self.merge_key();
        if let Some(field) = field.filter(|f| aligned(dl, ol, f)) {
            // The usual steady state: the live list is the desired one written back, in its
            // order. Pairing by position is then what pairing by key would give, and needs
            // no sorted copies of the keys.
            for (dv, ov) in dl.iter().zip(ol) {
                if let Some(key) = dv.key(field) {
                    self.at(Seg::Elem(key), |w| dv.compare(w, Some(ov)));
                }
            }
            return;
        }
        let keyed = field.and_then(|field| Some((keys(dl, field)?, keys(ol, field)?)));
        if let Some((dk, ok)) = keyed {
            self.keyed(dl, ol, &dk, &ok);
            return;
        }
        if dl.len() != ol.len() {
            self.report();
            return;
        }
        for (i, (dv, ov)) in dl.iter().zip(ol).enumerate() {
            self.at(Seg::Index(i), |w| dv.compare(w, Some(ov)));
        }
    }

    /// Pairs two key-sorted lists of `(key, index)` group by group.
    fn keyed<D: Elem<'a>>(
        &mut self,
        dl: &'a [D],
        ol: &'a [Value],
        dk: &[(&'a str, usize)],
        ok: &[(&'a str, usize)],
    ) {
        let (mut i, mut j) = (0, 0);
        loop {
            let (dkey, okey) = (dk.get(i).map(|e| e.0), ok.get(j).map(|e| e.0));
            let key = match (dkey, okey) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
            };
            let dn = dk
                .get(i..)
                .unwrap_or_default()
                .iter()
                .take_while(|e| e.0 == key)
                .count();
            let on = ok
                .get(j..)
                .unwrap_or_default()
                .iter()
                .take_while(|e| e.0 == key)
                .count();
            if dn != on {
                self.at(Seg::Elem(key), Self::report);
            } else {
                for n in 0..dn {
                    let dv = dk.get(i + n).and_then(|e| dl.get(e.1));
                    let ov = ok.get(j + n).and_then(|e| ol.get(e.1));
                    if let Some(dv) = dv {
                        self.at(Seg::Elem(key), |w| dv.compare(w, ov));
                    }
                }
            }
            i += dn;
            j += on;
        }
    }

    /// The owned fields compared apart, as [`Field::compare`] declares, but the enforced
    /// resources.
    fn owned(&mut self, d: Desired<'a, '_>, o: &'a Map, enforcement: &'a Enforcement) {
        for field in Field::ALL {
            let path = field.path();
            match field.compare() {
                Compare::Subset | Compare::EnforcedResources => {}
                Compare::ExactKeys(keys) => {
                    let keys: &[&str] = match keys {
                        ExactKeys::Identity => &[
                            enforcement.identity_annotations[0].as_str(),
                            enforcement.identity_annotations[1].as_str(),
                        ],
                        ExactKeys::Networks => &[NETWORKS_ANNOTATION],
                    };
                    // Observed but not desired (the other way round, and a changed value,
                    // the generic walk reports).
                    let (dm, om) = (d(field).and_then(Value::as_object), object(o, path));
                    for key in keys {
                        if has(om, key) && !has(dm, key) {
                            self.at_path(path, |w| w.at(Seg::Key(key), Self::report));
                        }
                    }
                }
                Compare::Exact => self.at_path(path, |w| w.exact(d(field), get(o, path))),
                Compare::Authoritative => {
                    if let Some(Value::Array(ol)) = get(o, path)
                        && d(field).is_none_or(is_empty)
                    {
                        self.at_path(path, |w| w.list::<Value>(&[], ol));
                    }
                }
                Compare::WhenEnforced if enforcement.replicas => {
                    let one = Value::from(1);
                    let dr = d(field).filter(|v| !v.is_null()).unwrap_or(&one);
                    let or = get(o, path).filter(|v| !v.is_null()).unwrap_or(&one);
                    let equal = match (dr, or) {
                        (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
                        _ => dr == or,
                    };
                    if !equal {
                        self.at_path(path, Self::report);
                    }
                }
                Compare::WhenEnforced => {}
            }
        }
    }

    /// The exact comparison of the enforced containers' requests and limits.
    fn enforced_resources(
        &mut self,
        o: &'a Map,
        enforcement: &'a Enforcement,
        desired_resources: DesiredResources<'a, '_>,
    ) {
        let containers = Field::Containers.path();
        let oc = get(o, containers)
            .and_then(Value::as_array)
            .unwrap_or_default();
        let observed = ByName::new(oc, enforcement.resources.len());
        for name in &enforcement.resources {
            let oc = observed.get(name).and_then(Value::as_object);
            // A container missing on either side is reported by the generic walk.
            let (Some(resources), Some(oc)) = (desired_resources(name), oc) else {
                continue;
            };
            for field in ["requests", "limits"] {
                let dq = resources
                    .and_then(|r| r.get(field))
                    .and_then(Value::as_object);
                let oq = object(oc, &["resources", field]);
                self.at_path(containers, |w| {
                    w.at(Seg::Elem(name.as_str()), |w| {
                        w.at_path(&["resources", field], |w| w.exact_quantities(dq, oq));
                    });
                });
            }
        }
    }

    fn at_path(&mut self, keys: &[&'a str], f: impl FnOnce(&mut Self)) {
        let depth = self.path.len();
        self.path.extend(keys.iter().map(|k| Seg::Key(k)));
        f(self);
        self.path.truncate(depth);
    }

    /// Exact comparison: extra and missing keys are drift too; empty equals absent.
    fn exact(&mut self, d: Option<&'a Value>, o: Option<&'a Value>) {
        let d = d.filter(|v| !is_empty(v));
        let o = o.filter(|v| !is_empty(v));
        match (d, o) {
            (None, None) => {}
            (Some(Value::Object(dm)), Some(Value::Object(om))) => {
                for (k, dv) in dm {
                    self.at(Seg::Key(k), |w| w.exact(Some(dv), om.get(k)));
                }
                for (k, ov) in om {
                    if !dm.contains_key(k) {
                        self.at(Seg::Key(k), |w| w.exact(None, Some(ov)));
                    }
                }
            }
            (Some(Value::Array(dl)), Some(Value::Array(ol))) if dl.len() == ol.len() => {
                for (i, (dv, ov)) in dl.iter().zip(ol).enumerate() {
                    self.at(Seg::Index(i), |w| w.exact(Some(dv), Some(ov)));
                }
            }
            (Some(Value::Number(a)), Some(Value::Number(b))) if numbers_equal(a, b) => {}
            (Some(a), Some(b)) if a == b => {}
            _ => self.report(),
        }
    }

    /// Exact comparison of two quantity maps: the same names, equal values.
    fn exact_quantities(&mut self, d: Option<&'a Map>, o: Option<&'a Map>) {
        let present = |m: Option<&'a Map>| m.into_iter().flatten().filter(|(_, v)| !v.is_null());
        for (k, dv) in present(d) {
            match o.and_then(|o| o.get(k)).filter(|v| !v.is_null()) {
                Some(ov) if self.scalar_equal_quantity(dv, ov) => {}
                _ => self.at(Seg::Key(k), Self::report),
            }
        }
        for (k, _) in present(o) {
            if !has(d, k) {
                self.at(Seg::Key(k), Self::report);
            }
        }
    }

    fn scalar_equal_quantity(&self, d: &Value, o: &Value) -> bool {
        if d == o {
            return true;
        }
        match (quantity(d), quantity(o)) {
            (Some(a), Some(b)) => a.rounded_up_to_milli() == b.rounded_up_to_milli(),
            _ => d == o,
        }
    }
}

/// A quantity from its JSON text (a string, or a number's decimal text).
fn quantity(v: &Value) -> Option<Quantity> {
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
}

fn numbers_equal(a: &Number, b: &Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// What the API server drops as an `omitempty` zero value.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.values().all(is_empty),
    }
}

/// Whether two keyed lists have the same keys at the same positions, every element keyed:
/// then pairing by position is the pairing [`Walker::keyed`] would make (within a group of
/// equal keys it pairs by position too).
fn aligned<'a, D: Elem<'a>>(dl: &'a [D], ol: &'a [Value], field: &str) -> bool {
    dl.len() == ol.len()
        && dl
            .iter()
            .zip(ol)
            .all(|(d, o)| d.key(field).is_some_and(|a| o.key(field) == Some(a)))
}

/// `(key, index)` of every element, sorted; `None` if an element has no string key.
fn keys<'a, D: Elem<'a>>(list: &'a [D], field: &str) -> Option<Vec<(&'a str, usize)>> {
    let mut keys = list
        .iter()
        .enumerate()
        .map(|(i, v)| Some((v.key(field)?, i)))
        .collect::<Option<Vec<_>>>()?;
    keys.sort_unstable();
    Some(keys)
}

fn get<'a>(map: &'a Map, path: &[&str]) -> Option<&'a Value> {
    crate::json::get(map, path)
}

fn object<'a>(map: &'a Map, path: &[&str]) -> Option<&'a Map> {
    get(map, path)?.as_object()
}

fn has(map: Option<&Map>, key: &str) -> bool {
    map.and_then(|m| m.get(key)).is_some_and(|v| !v.is_null())
}

/// The element of a list of objects whose `name` is `name`.
/// From how many lookups [`ByName`] builds an index rather than scanning.
const INDEX_FROM: usize = 16;

/// List elements found by `name` (the first of a name): a scan while lookups are few (no
/// allocation in the usual reconcile), an index once they are many, so that many enforced
/// containers against many containers is not quadratic.
struct ByName<'a, T> {
    items: &'a [T],
    index: Option<std::collections::BTreeMap<&'a str, &'a T>>,
}

impl<'a, T: Elem<'a>> ByName<'a, T> {
    fn new(items: &'a [T], lookups: usize) -> Self {
        let index = (lookups >= INDEX_FROM).then(|| {
            let mut index = std::collections::BTreeMap::new();
            for item in items {
                if let Some(name) = item.key("name") {
                    index.entry(name).or_insert(item);
                }
            }
            index
        });
        ByName { items, index }
    }

    fn get(&self, name: &str) -> Option<&'a T> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.items.iter().find(|c| c.key("name") == Some(name)),
        }
    }
}

fn format_path(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if k.is_empty() || k.contains(['.', '/', '[', ']']) => {
                s.push('[');
                s.push_str(k);
                s.push(']');
            }
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Elem(k) => {
                s.push('[');
                s.push_str(k);
                s.push(']');
            }
            Seg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

// Checks drift against the simulated server's defaulting.
#[cfg(all(test, feature = "sim"))]
mod tests;
