//! Semantic drift between the desired and the observed Deployment (SPEC §5).
//!
//! The observed Deployment has been through the API server: defaulted (strategy,
//! `terminationMessagePath`, `fieldRef.apiVersion`, ...), normalized (quantities in canonical
//! form) and annotated by other controllers. [`drift`] therefore compares by meaning, not by
//! bytes, and returns the paths that differ (empty: no update needed).
//!
//! # Rules
//!
//! - **Subset.** Every value the desired object sets must be present and equal in the
//!   observed one. A field only the observed object has is not drift (server defaults, other
//!   controllers' labels and annotations).
//! - **Unset and empty.** A desired `null` sets nothing and is never drift. A desired empty
//!   value (`{}`, `[]`, `""`, `false`, `0`, or an object of such values) against an absent or
//!   `null` observed value is not drift: the API server drops empty (`omitempty`) fields.
//! - **Lists** are compared whole. Lists of objects with a merge key are paired by it,
//!   whatever the order: `containers`, `initContainers`, `ephemeralContainers`, `env`,
//!   `volumes`, `ports`, `imagePullSecrets` by `name`; `volumeMounts` by `mountPath`;
//!   `volumeDevices` by `devicePath`; `readinessGates` by `conditionType`;
//!   `ownerReferences` by `uid`. A desired element with no observed partner, and an observed
//!   element with no desired partner, are drift at that element (`env[POD_UID]`); when a key
//!   occurs a different number of times on each side, that key is drift. If any element of
//!   either side lacks a string key (unnamed ports, say) the list is paired by index instead,
//!   as are all other lists: different lengths are drift at the list itself, otherwise
//!   element `i` is compared with element `i` (`args[1]`). So a list without a merge key
//!   (`tolerations`, `args`, `command`, ...) is atomic: compared whole, in order; its
//!   elements are compared by the same rules as any object (a field only the observed
//!   element has, a server default, is not drift).
//! - **Env value source** is compared exactly: in a container's `env` entry, a `value` or
//!   `valueFrom` only the observed entry has is drift (`value` against `valueFrom` is drift
//!   in both directions). An empty `value` is no value (the API server drops it).
//! - **String maps keep empty values**: an entry of `nodeSelector`, `labels`, `annotations`
//!   or `matchLabels` whose desired value is `""` must be present (the API server keeps map
//!   entries; the empty rule above is for struct fields).
//! - **Quantities** (values under `resources.requests` and `resources.limits`, and any
//!   `sizeLimit`) are compared by value with [`Quantity`]: `0.5` == `500m`, `1Gi` == `1024Mi`.
//!   A JSON number counts as its decimal text; a malformed quantity is compared as written.
//!   Requests and limits are compared rounded up to a milli, as the API server stores them
//!   (`100u` == `1m`).
//!   Other numbers are compared by value (`1` == `1.0`).
//! - **Owned fields whose absence matters** are compared exactly, in both directions:
//!   - Deployment annotations whose key ends in `/gatewayconfiguration-generation` or
//!     `/gatewayconfiguration-uid` (the condition domain is not known here; no one else
//!     writes such a key): present on one side only is drift;
//!   - the pod-template annotation `k8s.v1.cni.cncf.io/networks` (compared as text: the
//!     renderer keeps the observed text when it is equal as a set);
//!   - `spec.template.spec.readinessGates`: observed gates the desired object lacks are
//!     drift even when the desired list is absent;
//!   - `spec.selector`: equal, with no extra keys (an empty map equals an absent one);
//!   - `spec.replicas` when [`Enforcement::replicas`], an absent value meaning the server's
//!     default 1; when not enforced, `spec.replicas` is not compared at all (an autoscaler
//!     owns it, and the renderer keeps the observed value);
//!   - `requests` and `limits` of `spec.template.spec.containers` named in
//!     [`Enforcement::resources`]: the same resource names, equal quantities.
//! - **Server-owned** fields are ignored on both sides: top-level `status`, `apiVersion` and
//!   `kind` (typed clients strip the last two), and `metadata.resourceVersion`,
//!   `managedFields`, `creationTimestamp`, `uid`, `generation`, `selfLink`,
//!   `deletionTimestamp`, `deletionGracePeriodSeconds`.
//!
//! # Paths
//!
//! Object keys are joined with `.`; a key containing `.`, `/`, `[` or `]` (or empty) is
//! written in brackets instead (`metadata.annotations[meridio-2.nordix.org/gatewayconfiguration-generation]`,
//! `resources.limits[nvidia.com/gpu]`). A merge-keyed list element is `[key]`
//! (`spec.template.spec.containers[router].env[POD_UID]`), an index-paired one `[i]`. Drift is
//! reported at the deepest meaningful place: the changed scalar (`containers[router].image`),
//! each missing desired leaf when the observed object lacks a whole sub-object, the element
//! for a missing or extra keyed element, the list for an index-paired length mismatch, the
//! object itself for a type mismatch. The result is sorted and deduplicated.
//!
//! # Cost
//!
//! One walk over the desired tree, following the observed one alongside, without cloning;
//! path strings are only built for drifted fields. Keyed lists are paired by sorting
//! `(key, index)` pairs, so long lists cost `O(n log n)`. [`drift_owned`] walks the owned
//! part of an update render where it lies: its values borrowed from the observed Deployment
//! until a rule changes one, its containers the template's with the few fields the rules
//! change laid over them. A steady-state reconcile copies nothing the rules leave alone.

use serde_json::{Map, Number, Value};

use crate::json::Overlay;
use crate::nad::NETWORKS_ANNOTATION;
use crate::quantity::Quantity;
use crate::render::{ANTI_AFFINITY_TERMS, Owned, PodList};
use crate::wire::{Deployment, GatewayConfiguration};

/// Suffixes of the generation and uid annotation keys
/// (`<domain>/gatewayconfiguration-generation`, `<domain>/gatewayconfiguration-uid`).
const IDENTITY_SUFFIXES: [&str; 2] = [
    "/gatewayconfiguration-generation",
    "/gatewayconfiguration-uid",
];

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

/// Which owned values are enforced on update, and so compared exactly.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Enforcement {
    /// `horizontalScaling.enforceReplicas`.
    pub replicas: bool,
    /// Names of the containers whose resources are enforced.
    pub resources: Vec<String>,
}

impl Enforcement {
    /// What a GatewayConfiguration enforces. The container names are sorted and
    /// deduplicated.
    ///
    /// ```
    /// use gateway_reconcile::drift::Enforcement;
    /// use gateway_reconcile::wire::GatewayConfiguration;
    ///
    /// let configuration: GatewayConfiguration = serde_json::from_value(serde_json::json!({
    ///     "spec": {
    ///         "horizontalScaling": { "replicas": 2, "enforceReplicas": true },
    ///         "verticalScaling": { "containers": [
    ///             { "name": "router", "enforceResources": true },
    ///             { "name": "loadbalancer" }
    ///         ] }
    ///     }
    /// })).unwrap();
    /// let enforcement = Enforcement::of(&configuration);
    /// assert!(enforcement.replicas);
    /// assert_eq!(enforcement.resources, ["router"]);
    /// ```
    pub fn of(configuration: &GatewayConfiguration) -> Self {
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
        }
    }
}

/// The drifted field paths (e.g. `spec.template.spec.containers[router].env[POD_UID]`);
/// empty when the observed Deployment is as desired. See the module documentation for the
/// rules.
///
/// ```
/// use gateway_reconcile::drift::{Enforcement, drift};
/// use gateway_reconcile::wire::Deployment;
///
/// let desired: Deployment = serde_json::from_value(serde_json::json!({
///     "spec": { "template": { "spec": { "containers": [
///         { "name": "router", "image": "router:1", "resources": { "limits": { "cpu": "0.5" } } }
///     ] } } }
/// })).unwrap();
/// // Server-defaulted, quantity normalized: no drift.
/// let observed: Deployment = serde_json::from_value(serde_json::json!({
///     "spec": { "revisionHistoryLimit": 10, "template": { "spec": { "containers": [
///         { "name": "router", "image": "router:1", "imagePullPolicy": "IfNotPresent",
///           "resources": { "limits": { "cpu": "500m" } } }
///     ] } } }
/// })).unwrap();
/// assert!(drift(&desired, &observed, &Enforcement::default()).is_empty());
///
/// let mut changed = observed.clone();
/// changed.object["spec"]["template"]["spec"]["containers"][0]["image"] = "router:2".into();
/// assert_eq!(
///     drift(&desired, &changed, &Enforcement::default()),
///     ["spec.template.spec.containers[router].image"]
/// );
/// ```
pub fn drift(
    desired: &Deployment,
    observed: &Deployment,
    enforcement: &Enforcement,
) -> Vec<String> {
    let mut walker = Walker {
        path: Vec::with_capacity(16),
        out: Vec::new(),
    };
    let (d, o) = (&desired.object, &observed.object);
    walker.object(d, o);
    walker.owned(&|path| get(d, path), o, enforcement);
    let containers = get(d, &CONTAINERS)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let by_name = ByName::new(containers, enforcement.resources.len());
    walker.enforced_resources(o, enforcement, &|name| {
        Some(by_name.get(name)?.as_object()?.get("resources"))
    });
    walker.out.sort();
    walker.out.dedup();
    walker.out
}

/// [`drift`] of the owned part of an update render ([`crate::render::render_owned`]): the
/// same paths as `drift(&complete(observed, owned), observed, enforcement)`, without
/// building that Deployment, the template's containers compared where they are.
///
/// ```
/// use gateway_reconcile::drift::{drift_owned, Enforcement};
/// use gateway_reconcile::render::{render, render_owned};
/// use gateway_reconcile::template::default_template;
/// use gateway_reconcile::validate::Validated;
/// use gateway_reconcile::wire::{Gateway, GatewayConfiguration};
/// use gateway_reconcile::Settings;
///
/// let gateway: Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw", "namespace": "red", "uid": "u-1"}
/// })).unwrap();
/// let cfg: GatewayConfiguration =
///     serde_json::from_str(r#"{"metadata":{"name":"c","generation":3}}"#).unwrap();
/// let validated = Validated { configuration: &cfg, networks: vec![], ipv4: true, ipv6: false };
/// let (settings, template) = (Settings::default(), default_template());
/// let mut observed = render(&settings, &gateway, &validated, &template, None);
/// observed.object["spec"]["template"]["spec"]["containers"][0]["image"] = "other:1".into();
///
/// let owned = render_owned(&settings, &gateway, &validated, &template, &observed);
/// assert_eq!(
///     drift_owned(&owned, &observed, &Enforcement::of(&cfg)),
///     ["spec.template.spec.containers[loadbalancer].image"]
/// );
/// ```
pub fn drift_owned(
    owned: &Owned<'_>,
    observed: &Deployment,
    enforcement: &Enforcement,
) -> Vec<String> {
    let mut walker = Walker {
        path: Vec::with_capacity(16),
        out: Vec::new(),
    };
    let (leaves, o) = (owned.leaves(), &observed.object);
    for (path, dv) in leaves.iter() {
        walker.leaf(path, dv, o);
    }
    walker.owned(&|path| leaves.get(path), o, enforcement);
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
    for (list, rendered) in owned.lists().filter(|_| comparable) {
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
        if let ("containers", PodList::Containers(rendered)) = (list, rendered) {
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
    walker.out.sort();
    walker.out.dedup();
    walker.out
}

/// The pod spec of a Deployment.
const POD_SPEC: [&str; 3] = ["spec", "template", "spec"];

/// The containers of a Deployment.
const CONTAINERS: [&str; 4] = ["spec", "template", "spec", "containers"];

/// The desired value at a path (object keys).
type Desired<'a, 'f> = &'f dyn Fn(&[&str]) -> Option<&'a Value>;

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
    fn report(&mut self) {
        self.out.push(format_path(&self.path));
    }

    fn at(&mut self, seg: Seg<'a>, f: impl FnOnce(&mut Self)) {
        self.path.push(seg);
        f(self);
        self.path.pop();
    }

    /// Whether `key` of the object at the current path is skipped by the generic walk:
    /// server-owned, or an owned field compared in [`Walker::owned`].
    fn skipped(&self, key: &str) -> bool {
        match self.path.as_slice() {
            [] => matches!(key, "status" | "apiVersion" | "kind"),
            [Seg::Key("metadata")] => SERVER_METADATA.contains(&key),
            [Seg::Key("spec")] => matches!(key, "replicas" | "selector"),
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

    fn object(&mut self, dm: &'a Map<String, Value>, om: &'a Map<String, Value>) {
        if self.in_env_entry() {
            // The value source is compared exactly: a `value` or `valueFrom` only the
            // observed entry has is drift (the other way round, the walk below finds it).
            for key in ["value", "valueFrom"] {
                let set = |m: &Map<String, Value>| m.get(key).is_some_and(|v| !is_empty(v));
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
    fn leaf(&mut self, path: &'a [&'a str], dv: &'a Value, o: &'a Map<String, Value>) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let depth = self.path.len();
        let mut parent = Some(o);
        for key in parents {
            self.path.push(Seg::Key(key));
            match parent.and_then(|m| m.get(*key)).filter(|v| !v.is_null()) {
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
                w.value(dv, parent.and_then(|m| m.get(*last)))
            });
        }
        self.path.truncate(depth);
    }

    fn scalar_equal(&self, d: &Value, o: &Value) -> bool {
        // Equal as written is equal by every rule below; only a difference needs them.
        if d == o {
            return true;
        }
        if self.in_quantity_position() {
            if let (Some(a), Some(b)) = (quantity(d), quantity(o)) {
                return if self.in_resource_list() {
                    a.rounded_up_to_milli() == b.rounded_up_to_milli()
                } else {
                    a == b
                };
            }
        }
        match (d, o) {
            (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
            _ => d == o,
        }
    }

    fn list<D: Elem<'a>>(&mut self, dl: &'a [D], ol: &'a [Value]) {
        let keyed = self
            .merge_key()
            .and_then(|field| Some((keys(dl, field)?, keys(ol, field)?)));
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

    /// The exact comparisons of owned fields whose absence matters, but the enforced
    /// resources.
    fn owned(
        &mut self,
        d: Desired<'a, '_>,
        o: &'a Map<String, Value>,
        enforcement: &'a Enforcement,
    ) {
        let d_object = |path: &[&str]| d(path).and_then(Value::as_object);
        // Generation and uid annotations: observed but not desired (the other way round,
        // and a changed value, the generic walk reports).
        let d_ann = d_object(&["metadata", "annotations"]);
        if let Some(o_ann) = object(o, &["metadata", "annotations"]) {
            for (k, v) in o_ann {
                let identity = IDENTITY_SUFFIXES.iter().any(|s| k.ends_with(s));
                if identity && !v.is_null() && !has(d_ann, k) {
                    self.at_path(&["metadata", "annotations", k.as_str()], Self::report);
                }
            }
        }

        let d_ann = d_object(&["spec", "template", "metadata", "annotations"]);
        let o_ann = object(o, &["spec", "template", "metadata", "annotations"]);
        if has(o_ann, NETWORKS_ANNOTATION) && !has(d_ann, NETWORKS_ANNOTATION) {
            let path = [
                "spec",
                "template",
                "metadata",
                "annotations",
                NETWORKS_ANNOTATION,
            ];
            self.at_path(&path, Self::report);
        }

        let gates = ["spec", "template", "spec", "readinessGates"];
        if let Some(Value::Array(ol)) = get(o, &gates) {
            if d(&gates).is_none_or(is_empty) {
                self.at_path(&gates, |w| w.list::<Value>(&[], ol));
            }
        }

        self.at_path(&["spec", "selector"], |w| {
            w.exact(d(&["spec", "selector"]), get(o, &["spec", "selector"]));
        });

        if enforcement.replicas {
            let one = Value::from(1);
            let dr = d(&["spec", "replicas"])
                .filter(|v| !v.is_null())
                .unwrap_or(&one);
            let or = get(o, &["spec", "replicas"])
                .filter(|v| !v.is_null())
                .unwrap_or(&one);
            let equal = match (dr, or) {
                (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
                _ => dr == or,
            };
            if !equal {
                self.at_path(&["spec", "replicas"], Self::report);
            }
        }
    }

    /// The exact comparison of the enforced containers' requests and limits.
    fn enforced_resources(
        &mut self,
        o: &'a Map<String, Value>,
        enforcement: &'a Enforcement,
        desired_resources: DesiredResources<'a, '_>,
    ) {
        let containers = CONTAINERS;
        let oc = get(o, &containers)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
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
                self.at_path(&containers, |w| {
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
    fn exact_quantities(
        &mut self,
        d: Option<&'a Map<String, Value>>,
        o: Option<&'a Map<String, Value>>,
    ) {
        let present = |m: Option<&'a Map<String, Value>>| {
            m.into_iter().flatten().filter(|(_, v)| !v.is_null())
        };
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

fn get<'a>(map: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    crate::json::get(map, path)
}

fn object<'a>(map: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Map<String, Value>> {
    get(map, path)?.as_object()
}

fn has(map: Option<&Map<String, Value>>, key: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::defaulting::apply_server_defaults;
    use proptest::prelude::*;
    use serde_json::json;

    const GEN: &str = "meridio-2.nordix.org/gatewayconfiguration-generation";
    const ROUTER: &str = "spec.template.spec.containers[router]";

    /// A Deployment as the renderer writes it.
    fn rendered() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "lb-gw",
                "namespace": "red",
                "labels": { "app": "lb-gw", "gateway.networking.k8s.io/gateway-name": "gw" },
                "annotations": { GEN: "3" },
                "ownerReferences": [{
                    "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                    "name": "gw", "uid": "u-1", "controller": true, "blockOwnerDeletion": true
                }]
            },
            "spec": {
                "replicas": 2,
                "selector": { "matchLabels": { "app": "lb-gw" } },
                "template": {
                    "metadata": {
                        "labels": { "app": "lb-gw" },
                        "annotations": {
                            "k8s.v1.cni.cncf.io/networks":
                                "[{\"name\":\"vlan-100\",\"namespace\":\"red\",\"interface\":\"net1\"}]"
                        }
                    },
                    "spec": {
                        "serviceAccountName": "lb",
                        "containers": [
                            {
                                "name": "loadbalancer",
                                "image": "registry.example/lb:1.2",
                                "args": ["--verbose", "--port=80"],
                                "env": [{ "name": "MERIDIO_GATEWAY_NAME", "value": "gw" }],
                                "resources": {
                                    "requests": { "cpu": "0.5", "memory": "1024Mi" },
                                    "limits": { "cpu": "1000m", "memory": "1Gi" }
                                },
                                "ports": [{ "name": "http", "containerPort": 80 }],
                                "volumeMounts": [
                                    { "name": "tmp", "mountPath": "/tmp" },
                                    { "name": "run", "mountPath": "/run" }
                                ]
                            },
                            {
                                "name": "router",
                                "image": "registry.example/router:latest",
                                "env": [
                                    { "name": "MERIDIO_GATEWAY_NAME", "value": "gw" },
                                    { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
                                    { "name": "POD_NAMESPACE", "valueFrom": { "fieldRef": { "fieldPath": "metadata.namespace" } } },
                                    { "name": "POD_UID", "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } }
                                ],
                                "resources": {
                                    "requests": { "cpu": "1e3", "memory": "0.5Gi" },
                                    "limits": { "cpu": "2", "memory": "1536Mi" }
                                }
                            }
                        ],
                        "volumes": [
                            { "name": "tmp", "emptyDir": { "sizeLimit": "0.5Gi" } },
                            { "name": "run", "emptyDir": {} }
                        ],
                        "readinessGates": [
                            { "conditionType": "meridio-2.nordix.org/ipv4-connectivity" },
                            { "conditionType": "meridio-2.nordix.org/ipv6-connectivity" }
                        ]
                    }
                }
            }
        })
    }

    fn dep(v: Value) -> Deployment {
        serde_json::from_value(v).unwrap()
    }

    /// What the API server returns after storing `v`: defaulted, with server-owned fields,
    /// another controller's label and annotation, and a status.
    fn stored(v: &Value) -> Value {
        let mut d = dep(v.clone());
        apply_server_defaults(&mut d);
        let mut o = serde_json::to_value(d).unwrap();
        let meta = o["metadata"].as_object_mut().unwrap();
        meta.insert("uid".into(), json!("d-1"));
        meta.insert("resourceVersion".into(), json!("12345"));
        meta.insert("generation".into(), json!(4));
        meta.insert("creationTimestamp".into(), json!("2026-01-01T00:00:00Z"));
        meta.insert("managedFields".into(), json!([{ "manager": "kubectl" }]));
        o["metadata"]["labels"]["team"] = json!("blue");
        o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!("x");
        o["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
            json!("2026-01-01T00:00:00Z");
        o["status"] = json!({ "replicas": 2, "observedGeneration": 4 });
        o
    }

    fn all_enforced() -> Enforcement {
        Enforcement {
            replicas: true,
            resources: vec!["loadbalancer".into(), "router".into()],
        }
    }

    fn drift_of(desired: &Value, observed: &Value, e: &Enforcement) -> Vec<String> {
        drift(&dep(desired.clone()), &dep(observed.clone()), e)
    }

    /// Drift after changing the stored copy of the rendered Deployment with `change`.
    fn changed(change: impl FnOnce(&mut Value)) -> Vec<String> {
        let desired = rendered();
        let mut observed = stored(&desired);
        change(&mut observed);
        drift_of(&desired, &observed, &all_enforced())
    }

    fn container<'v>(o: &'v mut Value, name: &str) -> &'v mut Value {
        o["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|c| c["name"] == name)
            .unwrap()
    }

    fn env<'v>(o: &'v mut Value, name: &str) -> &'v mut Vec<Value> {
        container(o, name)["env"].as_array_mut().unwrap()
    }

    #[test]
    fn rendered_then_defaulted_is_not_drift() {
        let desired = rendered();
        let observed = stored(&desired);
        // The defaulting really changed things, quantities included.
        assert_ne!(desired, observed);
        let lb = &observed["spec"]["template"]["spec"]["containers"][0]["resources"];
        assert_eq!(lb["requests"], json!({ "cpu": "500m", "memory": "1Gi" }));
        assert_eq!(lb["limits"]["cpu"], "1");
        let router = &observed["spec"]["template"]["spec"]["containers"][1]["resources"];
        assert_eq!(
            router["requests"],
            json!({ "cpu": "1k", "memory": "512Mi" })
        );
        for e in [Enforcement::default(), all_enforced()] {
            assert_eq!(drift_of(&desired, &observed, &e), Vec::<String>::new());
            assert_eq!(drift_of(&desired, &desired, &e), Vec::<String>::new());
        }
    }

    #[test]
    fn other_quantity_spellings_and_reordering_are_not_drift() {
        let desired = rendered();
        let mut observed = stored(&desired);
        let lb = container(&mut observed, "loadbalancer");
        lb["resources"]["requests"]["cpu"] = json!("0.500");
        lb["resources"]["requests"]["memory"] = json!("1073741824");
        let router = container(&mut observed, "router");
        router["resources"]["requests"]["cpu"] = json!("1k");
        router["resources"]["limits"]["cpu"] = json!(2);
        // Keyed lists pair by key, whatever the order.
        env(&mut observed, "router").reverse();
        observed["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .reverse();
        assert_eq!(
            drift_of(&desired, &observed, &all_enforced()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn image_change() {
        let d = changed(|o| container(o, "router")["image"] = json!("registry.example/router:2"));
        assert_eq!(d, [format!("{ROUTER}.image")]);
    }

    #[test]
    fn env_value_change() {
        let d = changed(|o| env(o, "loadbalancer")[0]["value"] = json!("other"));
        assert_eq!(
            d,
            ["spec.template.spec.containers[loadbalancer].env[MERIDIO_GATEWAY_NAME].value"]
        );
    }

    #[test]
    fn env_value_source_is_compared_exactly() {
        let lb = "spec.template.spec.containers[loadbalancer].env[MERIDIO_GATEWAY_NAME]";
        // value against valueFrom: drift.
        let d = changed(|o| {
            let entry = env(o, "loadbalancer")[0].as_object_mut().unwrap();
            entry.remove("value");
            entry.insert(
                "valueFrom".into(),
                json!({ "fieldRef": { "fieldPath": "metadata.name" } }),
            );
        });
        assert_eq!(d, [format!("{lb}.value"), format!("{lb}.valueFrom")]);
        // valueFrom against value: drift, though the desired valueFrom is there in full.
        let d = changed(|o| {
            let entry = env(o, "router")
                .iter_mut()
                .find(|e| e["name"] == "POD_UID")
                .unwrap();
            entry["value"] = json!("fixed");
        });
        assert_eq!(d, [format!("{ROUTER}.env[POD_UID].value")]);
        // An empty value is no value: the API server drops it.
        let mut desired = rendered();
        desired["spec"]["template"]["spec"]["containers"][1]["env"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "name": "EMPTY", "value": "" }));
        let mut observed = stored(&desired);
        let env = observed["spec"]["template"]["spec"]["containers"][1]["env"]
            .as_array_mut()
            .unwrap();
        env.last_mut()
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("value");
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
    }

    #[test]
    fn every_pod_template_server_default_is_not_drift() {
        let mut desired = rendered();
        let pod = &mut desired["spec"]["template"]["spec"];
        pod["ephemeralContainers"] = json!([{ "name": "debug", "image": "busybox" }]);
        pod["tolerations"] = json!([{ "key": "k", "operator": "Exists" }]);
        pod["volumes"] = json!([
            { "name": "bare" },
            { "name": "host", "hostPath": { "path": "/x" } },
            { "name": "down", "downwardAPI": { "items": [
                { "path": "q", "resourceFieldRef": { "resource": "limits.cpu" } }] } },
            { "name": "proj", "projected": { "sources": [
                { "serviceAccountToken": { "path": "t" } }] } },
            { "name": "rbd", "rbd": { "monitors": ["m"], "image": "i" } }
        ]);
        let router = &mut pod["containers"][1];
        router["ports"] = json!([{ "containerPort": 179 }]);
        router["livenessProbe"] = json!({ "httpGet": { "port": 80 } });
        router["lifecycle"] = json!({ "preStop": { "httpGet": { "port": 80 } } });
        router["env"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "name": "MEM", "valueFrom": { "resourceFieldRef": { "resource": "limits.memory" } } }));
        let observed = stored(&desired);
        assert_ne!(
            observed["spec"]["template"]["spec"],
            desired["spec"]["template"]["spec"]
        );
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    }

    #[test]
    fn requests_finer_than_a_milli_match_what_the_server_stores() {
        let mut desired = rendered();
        let router = &mut desired["spec"]["template"]["spec"]["containers"][1];
        router["resources"] =
            json!({ "requests": { "cpu": "100u" }, "limits": { "cpu": "1500u" } });
        desired["spec"]["template"]["spec"]["volumes"] =
            json!([{ "name": "v", "emptyDir": { "sizeLimit": "1500u" } }]);
        let observed = stored(&desired);
        let router = &observed["spec"]["template"]["spec"]["containers"][1];
        assert_eq!(router["resources"]["requests"]["cpu"], "1m");
        assert_eq!(router["resources"]["limits"]["cpu"], "2m");
        // Enforced (exact) or not, the rounded value is the desired one.
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        // A sizeLimit is not a resource list: not rounded, and a real change stays drift.
        let mut changed = observed.clone();
        changed["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = json!("2m");
        assert_eq!(
            drift_of(&desired, &changed, &Enforcement::default()),
            ["spec.template.spec.volumes[v].emptyDir.sizeLimit"]
        );
        let mut changed = observed.clone();
        changed["spec"]["template"]["spec"]["containers"][1]["resources"]["requests"]["cpu"] =
            json!("2m");
        assert_eq!(
            drift_of(&desired, &changed, &Enforcement::default()),
            [format!("{ROUTER}.resources.requests.cpu")]
        );
    }

    #[test]
    fn string_map_entries_with_empty_values_are_desired() {
        let mut desired = rendered();
        desired["spec"]["template"]["spec"]["nodeSelector"] = json!({ "role/lb": "" });
        let observed = stored(&desired);
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        let mut without = observed.clone();
        without["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("nodeSelector");
        assert_eq!(
            drift_of(&desired, &without, &Enforcement::default()),
            ["spec.template.spec.nodeSelector[role/lb]"]
        );
    }

    #[test]
    fn lists_without_a_merge_key_are_compared_whole_in_order() {
        let tolerations = json!([
            { "key": "a", "operator": "Exists" },
            { "key": "b", "operator": "Equal", "value": "x" }
        ]);
        let mut desired = rendered();
        desired["spec"]["template"]["spec"]["tolerations"] = tolerations.clone();
        let observed = stored(&desired);
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        let path = "spec.template.spec.tolerations";
        let mut reordered = observed.clone();
        reordered[path.split('.').next().unwrap()]["template"]["spec"]["tolerations"] =
            json!([tolerations[1], tolerations[0]]);
        let d = drift_of(&desired, &reordered, &Enforcement::default());
        assert!(
            !d.is_empty() && d.iter().all(|p| p.starts_with(path)),
            "{d:?}"
        );
        let mut shorter = observed.clone();
        shorter["spec"]["template"]["spec"]["tolerations"] = json!([tolerations[0]]);
        assert_eq!(
            drift_of(&desired, &shorter, &Enforcement::default()),
            [path]
        );
    }

    #[test]
    fn env_removed_names_the_element() {
        let d = changed(|o| env(o, "router").retain(|e| e["name"] != "POD_UID"));
        assert_eq!(d, [format!("{ROUTER}.env[POD_UID]")]);
    }

    #[test]
    fn downward_api_field_change() {
        let d = changed(|o| {
            env(o, "router")[3]["valueFrom"]["fieldRef"]["fieldPath"] = json!("metadata.name");
        });
        assert_eq!(
            d,
            [format!(
                "{ROUTER}.env[POD_UID].valueFrom.fieldRef.fieldPath"
            )]
        );
    }

    #[test]
    fn container_added_names_it() {
        let d = changed(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array_mut()
                .unwrap()
                .push(json!({ "name": "debug", "image": "busybox" }));
        });
        assert_eq!(d, ["spec.template.spec.containers[debug]"]);
    }

    #[test]
    fn container_removed_names_it() {
        let d = changed(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array_mut()
                .unwrap()
                .retain(|c| c["name"] != "loadbalancer");
        });
        assert_eq!(d, ["spec.template.spec.containers[loadbalancer]"]);
    }

    #[test]
    fn networks_annotation_removed_or_changed() {
        let path = "spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]";
        let removed = changed(|o| {
            o["spec"]["template"]["metadata"]["annotations"]
                .as_object_mut()
                .unwrap()
                .remove(NETWORKS_ANNOTATION);
        });
        assert_eq!(removed, [path]);
        let edited = changed(|o| {
            o["spec"]["template"]["metadata"]["annotations"][NETWORKS_ANNOTATION] = json!("[]");
        });
        assert_eq!(edited, [path]);
    }

    #[test]
    fn networks_annotation_only_observed_is_drift() {
        let mut desired = rendered();
        desired["spec"]["template"]["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(NETWORKS_ANNOTATION);
        let observed = stored(&rendered());
        assert_eq!(
            drift_of(&desired, &observed, &Enforcement::default()),
            ["spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]"]
        );
    }

    #[test]
    fn readiness_gate_removed() {
        let d = changed(|o| {
            o["spec"]["template"]["spec"]["readinessGates"]
                .as_array_mut()
                .unwrap()
                .remove(1);
        });
        assert_eq!(
            d,
            ["spec.template.spec.readinessGates[meridio-2.nordix.org/ipv6-connectivity]"]
        );
    }

    #[test]
    fn readiness_gates_observed_but_not_desired() {
        let observed = stored(&rendered());
        let want = [
            "spec.template.spec.readinessGates[meridio-2.nordix.org/ipv4-connectivity]",
            "spec.template.spec.readinessGates[meridio-2.nordix.org/ipv6-connectivity]",
        ];
        let mut absent = rendered();
        absent["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("readinessGates");
        assert_eq!(drift_of(&absent, &observed, &Enforcement::default()), want);
        let mut empty = rendered();
        empty["spec"]["template"]["spec"]["readinessGates"] = json!([]);
        assert_eq!(drift_of(&empty, &observed, &Enforcement::default()), want);
        // Neither side has gates: fine.
        let bare = stored(&absent);
        assert!(drift_of(&absent, &bare, &Enforcement::default()).is_empty());
    }

    #[test]
    fn enforced_replicas_changed() {
        let d = changed(|o| o["spec"]["replicas"] = json!(5));
        assert_eq!(d, ["spec.replicas"]);
    }

    #[test]
    fn enforced_replicas_absent_means_one() {
        let mut desired = rendered();
        desired["spec"].as_object_mut().unwrap().remove("replicas");
        let observed = stored(&desired);
        assert_eq!(observed["spec"]["replicas"], 1);
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
        let mut scaled = observed.clone();
        scaled["spec"]["replicas"] = json!(3);
        assert_eq!(
            drift_of(&desired, &scaled, &all_enforced()),
            ["spec.replicas"]
        );
    }

    #[test]
    fn autoscaled_replicas_are_not_drift() {
        let mut observed = stored(&rendered());
        observed["spec"]["replicas"] = json!(7);
        // The renderer keeps the observed value when replicas are not enforced...
        let mut desired = rendered();
        desired["spec"]["replicas"] = json!(7);
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        // ...and even a stale desired value is not compared then.
        assert!(drift_of(&rendered(), &observed, &Enforcement::default()).is_empty());
        // Enforced, the same difference is drift.
        let enforced = Enforcement {
            replicas: true,
            resources: vec![],
        };
        assert_eq!(
            drift_of(&rendered(), &observed, &enforced),
            ["spec.replicas"]
        );
    }

    #[test]
    fn enforced_resources_cleared() {
        // The configuration cleared the router's resources; the cluster still has them.
        let mut desired = rendered();
        container(&mut desired, "router")["resources"] = json!({});
        let observed = stored(&rendered());
        let want = [
            format!("{ROUTER}.resources.limits.cpu"),
            format!("{ROUTER}.resources.limits.memory"),
            format!("{ROUTER}.resources.requests.cpu"),
            format!("{ROUTER}.resources.requests.memory"),
        ];
        assert_eq!(drift_of(&desired, &observed, &all_enforced()), want);
        // Not enforced: the extra observed resources belong to someone else.
        let lb_only = Enforcement {
            replicas: true,
            resources: vec!["loadbalancer".into()],
        };
        assert!(drift_of(&desired, &observed, &lb_only).is_empty());
    }

    #[test]
    fn many_enforced_containers_are_found_through_the_index() {
        // More enforced names than INDEX_FROM: the lookups go through ByName's index, and
        // find the same containers a scan would (the first of a name).
        let mut desired = rendered();
        let list = desired["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap();
        let router = list[1].clone();
        for i in 0..(2 * INDEX_FROM) {
            let mut c = router.clone();
            c["name"] = json!(format!("extra-{i}"));
            list.push(c);
        }
        let mut observed = stored(&desired);
        container(&mut observed, "extra-7")["resources"]["requests"]["cpu"] = json!("999m");
        let names = (0..(2 * INDEX_FROM))
            .map(|i| format!("extra-{i}"))
            .chain(["router".to_owned(), "missing".to_owned()]);
        let e = Enforcement {
            replicas: true,
            resources: names.collect(),
        };
        assert!(e.resources.len() >= INDEX_FROM);
        assert_eq!(
            drift_of(&desired, &observed, &e),
            ["spec.template.spec.containers[extra-7].resources.requests.cpu"]
        );
    }

    #[test]
    fn enforced_resources_extra_and_changed() {
        let d = changed(|o| {
            let r = &mut container(o, "router")["resources"];
            r["limits"]["nvidia.com/gpu"] = json!("1");
            r["requests"]["cpu"] = json!("999m");
        });
        assert_eq!(
            d,
            [
                format!("{ROUTER}.resources.limits[nvidia.com/gpu]"),
                format!("{ROUTER}.resources.requests.cpu"),
            ]
        );
    }

    #[test]
    fn unenforced_resources_compare_as_subset() {
        let desired = rendered();
        let mut observed = stored(&desired);
        container(&mut observed, "router")["resources"]["limits"]["ephemeral-storage"] =
            json!("1Gi");
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        container(&mut observed, "router")["resources"]["limits"]["cpu"] = json!("3");
        assert_eq!(
            drift_of(&desired, &observed, &Enforcement::default()),
            [format!("{ROUTER}.resources.limits.cpu")]
        );
    }

    #[test]
    fn generation_annotation_changed_or_removed() {
        let path = format!("metadata.annotations[{GEN}]");
        let changed_value = changed(|o| o["metadata"]["annotations"][GEN] = json!("2"));
        assert_eq!(changed_value, std::slice::from_ref(&path));
        let removed = changed(|o| {
            o["metadata"]["annotations"]
                .as_object_mut()
                .unwrap()
                .remove(GEN);
        });
        assert_eq!(removed, [path]);
    }

    #[test]
    fn uid_annotation_is_compared_exactly() {
        let key = "meridio-2.nordix.org/gatewayconfiguration-uid";
        let path = format!("metadata.annotations[{key}]");
        let mut desired = rendered();
        desired["metadata"]["annotations"][key] = json!("uid-new");
        let observed = stored(&desired);
        assert!(drift_of(&desired, &observed, &Enforcement::default()).is_empty());
        let mut old = observed.clone();
        old["metadata"]["annotations"][key] = json!("uid-old");
        assert_eq!(
            drift_of(&desired, &old, &Enforcement::default()),
            std::slice::from_ref(&path)
        );
        // Missing on the Deployment (written before the annotation existed): drift.
        let mut missing = observed.clone();
        missing["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(key);
        assert_eq!(
            drift_of(&desired, &missing, &Enforcement::default()),
            std::slice::from_ref(&path)
        );
        // Only on the Deployment (a configuration without uid): drift too.
        let plain = rendered();
        assert_eq!(drift_of(&plain, &observed, &Enforcement::default()), [path]);
    }

    #[test]
    fn generation_annotation_only_observed_is_drift() {
        // Whatever the domain: a key ending in the suffix is owned.
        let other = "example.com/gatewayconfiguration-generation";
        let desired = rendered();
        let mut observed = stored(&desired);
        observed["metadata"]["annotations"][other] = json!("3");
        assert_eq!(
            drift_of(&desired, &observed, &Enforcement::default()),
            [format!("metadata.annotations[{other}]")]
        );
    }

    #[test]
    fn selector_is_exact() {
        let changed_label = changed(|o| o["spec"]["selector"]["matchLabels"]["app"] = json!("x"));
        assert_eq!(changed_label, ["spec.selector.matchLabels.app"]);
        let extra = changed(|o| o["spec"]["selector"]["matchLabels"]["tier"] = json!("lb"));
        assert_eq!(extra, ["spec.selector.matchLabels.tier"]);
        let expressions = changed(|o| {
            o["spec"]["selector"]["matchExpressions"] =
                json!([{ "key": "a", "operator": "Exists" }]);
        });
        assert_eq!(expressions, ["spec.selector.matchExpressions"]);
    }

    #[test]
    fn foreign_labels_and_annotations_are_not_drift() {
        let desired = rendered();
        let mut observed = stored(&desired);
        observed["metadata"]["labels"]["x/y"] = json!("z");
        observed["spec"]["template"]["metadata"]["labels"]["extra"] = json!("1");
        observed["spec"]["template"]["metadata"]["annotations"]["foo"] = json!("bar");
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    }

    #[test]
    fn server_owned_fields_are_ignored_on_both_sides() {
        let mut desired = rendered();
        desired["metadata"]["resourceVersion"] = json!("1");
        desired["metadata"]["uid"] = json!("old");
        desired["status"] = json!({ "replicas": 9 });
        let mut observed = stored(&rendered());
        observed.as_object_mut().unwrap().remove("apiVersion");
        observed.as_object_mut().unwrap().remove("kind");
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
    }

    #[test]
    fn empty_desired_values_match_dropped_fields() {
        let mut desired = rendered();
        let lb = container(&mut desired, "loadbalancer");
        lb["command"] = json!([]);
        lb["securityContext"] = json!({ "capabilities": {} });
        lb["workingDir"] = json!("");
        lb["stdin"] = json!(false);
        lb["livenessProbe"] = Value::Null;
        let observed = stored(&rendered());
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
        // A non-empty value the server never had is drift, at the leaf.
        let lb = container(&mut desired, "loadbalancer");
        lb["securityContext"] = json!({ "capabilities": { "add": ["NET_ADMIN"] } });
        assert_eq!(
            drift_of(&desired, &observed, &all_enforced()),
            ["spec.template.spec.containers[loadbalancer].securityContext.capabilities.add"]
        );
    }

    #[test]
    fn index_lists_and_keyed_fallback() {
        let args = changed(|o| container(o, "loadbalancer")["args"][1] = json!("--port=81"));
        assert_eq!(
            args,
            ["spec.template.spec.containers[loadbalancer].args[1]"]
        );
        let shorter = changed(|o| {
            container(o, "loadbalancer")["args"]
                .as_array_mut()
                .unwrap()
                .pop();
        });
        assert_eq!(
            shorter,
            ["spec.template.spec.containers[loadbalancer].args"]
        );
        // A port without a name: the ports list is paired by index.
        let unnamed = changed(|o| {
            container(o, "loadbalancer")["ports"]
                .as_array_mut()
                .unwrap()
                .push(json!({ "containerPort": 81 }));
        });
        assert_eq!(
            unnamed,
            ["spec.template.spec.containers[loadbalancer].ports"]
        );
        let mount = changed(|o| {
            container(o, "loadbalancer")["volumeMounts"][1]["readOnly"] = json!(true);
            container(o, "loadbalancer")["volumeMounts"][0]["name"] = json!("other");
        });
        assert_eq!(
            mount,
            ["spec.template.spec.containers[loadbalancer].volumeMounts[/tmp].name"]
        );
    }

    #[test]
    fn duplicate_keys_and_volume_quantities() {
        let dup = changed(|o| {
            let e = env(o, "router");
            let copy = e[3].clone();
            e.push(copy);
        });
        assert_eq!(dup, [format!("{ROUTER}.env[POD_UID]")]);
        let size = changed(|o| {
            o["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = json!("1Gi");
        });
        assert_eq!(size, ["spec.template.spec.volumes[tmp].emptyDir.sizeLimit"]);
    }

    #[test]
    fn type_mismatch_and_malformed_quantities() {
        let d = changed(|o| container(o, "router")["env"] = json!("oops"));
        assert_eq!(d, [format!("{ROUTER}.env")]);
        let mut desired = rendered();
        container(&mut desired, "router")["resources"]["limits"]["cpu"] = json!("lots");
        let mut observed = stored(&desired);
        assert_eq!(
            container(&mut observed, "router")["resources"]["limits"]["cpu"],
            "lots"
        );
        assert!(drift_of(&desired, &observed, &all_enforced()).is_empty());
        container(&mut observed, "router")["resources"]["limits"]["cpu"] = json!("Lots");
        assert_eq!(
            drift_of(&desired, &observed, &all_enforced()),
            [format!("{ROUTER}.resources.limits.cpu")]
        );
    }

    #[test]
    fn several_drifts_are_sorted_and_unique() {
        let d = changed(|o| {
            o["spec"]["replicas"] = json!(1);
            container(o, "router")["image"] = json!("x");
            o["metadata"]["annotations"][GEN] = json!("9");
            container(o, "router")["resources"]["limits"]["cpu"] = json!("5");
        });
        assert_eq!(
            d,
            [
                format!("metadata.annotations[{GEN}]"),
                "spec.replicas".to_owned(),
                format!("{ROUTER}.image"),
                format!("{ROUTER}.resources.limits.cpu"),
            ]
        );
    }

    #[test]
    fn enforcement_of_configuration() {
        let configuration: GatewayConfiguration = serde_json::from_value(json!({
            "spec": { "verticalScaling": { "containers": [
                { "name": "router", "enforceResources": true },
                { "name": "loadbalancer", "enforceResources": false },
                { "name": "a", "enforceResources": true },
                { "name": "router", "enforceResources": true }
            ] } }
        }))
        .unwrap();
        assert_eq!(
            Enforcement::of(&configuration),
            Enforcement {
                replicas: false,
                resources: vec!["a".into(), "router".into()]
            }
        );
        assert_eq!(
            Enforcement::of(&GatewayConfiguration::default()),
            Enforcement::default()
        );
    }

    #[test]
    fn odd_shapes_do_not_panic() {
        let desired = rendered();
        let odd = json!({
            "metadata": "x",
            "spec": { "replicas": "two", "selector": [], "template": { "spec": {
                "containers": [1, null, { "name": 7 }],
                "readinessGates": "none"
            } } }
        });
        let d = drift_of(&desired, &odd, &all_enforced());
        assert!(d.contains(&"metadata".to_owned()), "{d:?}");
        assert!(d.contains(&"spec.replicas".to_owned()), "{d:?}");
        assert!(d.contains(&"spec.selector".to_owned()), "{d:?}");
        assert!(
            d.contains(&"spec.template.spec.containers".to_owned()),
            "{d:?}"
        );
        // The other way round: type mismatches, and owned fields only observed has.
        let d = drift_of(&odd, &desired, &Enforcement::default());
        assert_eq!(
            d,
            [
                "metadata",
                &format!("metadata.annotations[{GEN}]"),
                "spec.selector",
                "spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]",
                "spec.template.spec.containers",
                "spec.template.spec.readinessGates",
            ]
        );
        assert!(drift_of(&json!({}), &json!({}), &all_enforced()).is_empty());
    }

    #[test]
    fn path_format() {
        let path = [
            Seg::Key("metadata"),
            Seg::Key("annotations"),
            Seg::Key("a.b/c"),
        ];
        assert_eq!(format_path(&path), "metadata.annotations[a.b/c]");
        let path = [Seg::Key("x"), Seg::Elem("n"), Seg::Index(3), Seg::Key("y")];
        assert_eq!(format_path(&path), "x[n][3].y");
        assert_eq!(format_path(&[Seg::Key(""), Seg::Key("z")]), "[].z");
    }

    fn quantity_text() -> impl Strategy<Value = String> {
        (
            1u32..5000,
            prop::sample::select(vec!["", "m", "k", "M", "Ki", "Mi", "Gi", "e3", "e-3"]),
            any::<bool>(),
        )
            .prop_map(|(n, suffix, fraction)| {
                if fraction && !suffix.starts_with('e') {
                    format!("{}.{}{suffix}", n / 10, n % 10)
                } else {
                    format!("{n}{suffix}")
                }
            })
    }

    fn container_strategy(name: String) -> impl Strategy<Value = Value> {
        let env_entry = (0usize..6, any::<bool>()).prop_map(|(i, downward)| {
            let name = format!("VAR_{i}");
            if downward {
                json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } })
            } else {
                json!({ "name": name, "value": format!("v{i}") })
            }
        });
        (
            prop::sample::select(vec!["img", "img:latest", "img:1.0", "r:5000/img@sha256:ab"]),
            prop::collection::vec(env_entry, 0..5),
            prop::option::of(quantity_text()),
            prop::option::of(quantity_text()),
            prop::option::of(0u16..3),
        )
            .prop_map(move |(image, env, cpu, memory, port)| {
                let mut env = env;
                env.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
                env.dedup_by(|a, b| a["name"] == b["name"]);
                let mut c = json!({ "name": name.clone(), "image": image, "env": env });
                let mut requests = Map::new();
                if let Some(cpu) = cpu {
                    requests.insert("cpu".into(), json!(cpu));
                }
                if let Some(memory) = memory {
                    requests.insert("memory".into(), json!(memory));
                }
                c["resources"] = json!({ "requests": requests.clone(), "limits": requests });
                if let Some(p) = port {
                    c["ports"] = json!([{ "name": format!("p{p}"), "containerPort": 8000 + p }]);
                }
                c
            })
    }

    fn deployment_strategy() -> impl Strategy<Value = Value> {
        (
            container_strategy("loadbalancer".into()),
            prop::option::of(container_strategy("router".into())),
            prop::option::of(0i64..5),
            any::<bool>(),
        )
            .prop_map(|(lb, router, replicas, gates)| {
                let mut containers = vec![lb];
                containers.extend(router);
                let mut d = json!({
                    "metadata": { "name": "lb", "annotations": { GEN: "1" } },
                    "spec": {
                        "selector": { "matchLabels": { "app": "lb" } },
                        "template": {
                            "metadata": { "labels": { "app": "lb" } },
                            "spec": { "containers": containers }
                        }
                    }
                });
                if let Some(r) = replicas {
                    d["spec"]["replicas"] = json!(r);
                }
                if gates {
                    d["spec"]["template"]["spec"]["readinessGates"] =
                        json!([{ "conditionType": "x/ipv4" }]);
                }
                d
            })
    }

    /// Any JSON, with keys that reach the walk's special places (merge-keyed lists,
    /// quantities, the owned fields).
    fn any_json() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "metadata",
            "annotations",
            "spec",
            "template",
            "containers",
            "env",
            "name",
            "resources",
            "requests",
            "limits",
            "cpu",
            "readinessGates",
            "conditionType",
            "selector",
            "replicas",
            "ownerReferences",
            "uid",
            "status",
            "value",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..3).prop_map(Value::from),
            Just(json!(1.0)),
            prop::sample::select(vec!["", "a", "0.5", "500m", "1Gi", "x/y"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(key.clone().prop_map(str::to_owned), inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A copy never drifts: what lets the owned part leave out what it copies.
        #[test]
        fn a_value_never_drifts_from_itself(
            root in prop::collection::btree_map(
                prop::sample::select(vec!["metadata", "spec", "status", "kind"]).prop_map(str::to_owned),
                any_json(),
                0..4,
            ),
        ) {
            let d = Deployment::from_object(root.into_iter().collect());
            for e in [Enforcement::default(), all_enforced()] {
                prop_assert_eq!(drift(&d, &d, &e), Vec::<String>::new());
            }
        }

        #[test]
        fn defaulted_rendering_is_never_drift(d in deployment_strategy()) {
            let desired = dep(d);
            let mut observed = desired.clone();
            apply_server_defaults(&mut observed);
            for e in [Enforcement::default(), all_enforced()] {
                prop_assert_eq!(drift(&desired, &desired, &e), Vec::<String>::new());
                prop_assert_eq!(drift(&desired, &observed, &e), Vec::<String>::new());
            }
        }
    }
}
