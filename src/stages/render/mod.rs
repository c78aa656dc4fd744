//! Rendering the desired LB Deployment.
//!
//! [`render`] turns the template (create) or the observed Deployment (update) into the
//! Deployment the controller wants. The Deployment is JSON, and every field the crate does
//! not own is carried through untouched. The rules, and the choices where the spec is
//! silent, are public documentation: the section "The LB Deployment" of
//! [`crate::reconcile`]. A change here changes that text.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::wire::tree::{Map, Value, tree_json as json};

use crate::json::{self, Leaf, LeafObject, Overlay};

pub(crate) mod fields;
mod owned;

use crate::lookup::{GATEWAY_NAME_LABEL, MANAGED_BY, MANAGED_BY_LABEL, gateway_name_label};
// Re-exported: the reconcile and the test kit name them with the rest of the render.
pub(crate) use crate::lookup::{deployment_name, generation_annotation, uid_annotation};
use crate::nad;
use crate::settings::Settings;
use crate::validate::Validated;
use crate::wire::{Deployment, Gateway, GatewayConfigurationSpec, VerticalScalingContainer};
use fields::{ANTI_AFFINITY_TERMS, Field, POD_SPEC, Rule};
use owned::Leaves;
pub(crate) use owned::{Owned, PodList, complete};

/// The label that ties the LB Deployment, its selector and its Pods together.
pub const APP_LABEL: &str = "app";
/// The env variable that receives the Gateway name.
pub const GATEWAY_NAME_ENV: &str = "MERIDIO_GATEWAY_NAME";
/// The container that receives the Pod identity from the downward API.
pub const ROUTER_CONTAINER: &str = "router";
/// Readiness gate set when an internal subnet is IPv4.
pub const IPV4_READINESS_GATE: &str = "meridio-2.nordix.org/ipv4-connectivity";
/// Readiness gate set when an internal subnet is IPv6.
pub const IPV6_READINESS_GATE: &str = "meridio-2.nordix.org/ipv6-connectivity";

/// The env variables the router gets from the downward API: (name, fieldPath).
const DOWNWARD_ENV: [(&str, &str); 3] = [
    ("POD_NAME", "metadata.name"),
    ("POD_NAMESPACE", "metadata.namespace"),
    ("POD_UID", "metadata.uid"),
];

/// Renders the desired Deployment: from the template when `observed` is `None` (create),
/// otherwise from the observed Deployment (update). See the [module docs](self) for the
/// rules.
///
/// The Gateway's name, namespace and uid are expected to be checked by the caller; a
/// missing one renders as the empty string.
pub fn render(
    settings: &Settings,
    gateway: &Gateway,
    validated: &Validated<'_>,
    template: &Deployment,
    observed: Option<&Deployment>,
) -> Deployment {
    let owned = render_owned(settings, gateway, validated, template, observed);
    complete(observed.unwrap_or(template), owned)
}

/// The owned part of [`render`]: only the owned fields ([`Field`]), with exactly the
/// values the whole render gives them (a field the whole render removes is absent), the
/// template's containers and volumes borrowed rather than copied. Every other field of the
/// whole render is a copy of the observed Deployment's (or the template's), and a copy
/// never drifts, so [`crate::drift::drift_owned`] of this part finds the same paths as drift
/// of the whole render, at a fraction of the cost; [`complete`] builds the whole render
/// when there is something to write.
pub(crate) fn render_owned<'a>(
    settings: &Settings,
    gateway: &Gateway,
    validated: &Validated<'_>,
    template: &'a Deployment,
    observed: Option<&'a Deployment>,
) -> Owned<'a> {
    let mut leaves = Leaves::of(&observed.unwrap_or(template).object);
    apply(
        settings,
        gateway,
        validated,
        template,
        observed,
        &mut leaves,
    );
    let lists = render_lists(
        &template.object,
        observed.map(|o| &o.object),
        &validated.configuration.spec,
        gateway_name(gateway),
    );
    let pod = json::get(&template.object, &POD_SPEC).and_then(Value::as_object);
    Owned { leaves, lists, pod }
}

fn gateway_name(gateway: &Gateway) -> &str {
    gateway.metadata.name.as_deref().unwrap_or_default()
}

/// Applies the rules of the module docs to the owned values: the template's (create) or
/// the observed Deployment's (update). The pod spec's lists are [`render_lists`]'.
fn apply<'a>(
    settings: &Settings,
    gateway: &Gateway,
    validated: &Validated<'_>,
    template: &'a Deployment,
    observed: Option<&Deployment>,
    leaves: &mut Leaves<'a>,
) {
    let gateway_name = gateway_name(gateway);
    let namespace = gateway.metadata.namespace.as_deref().unwrap_or_default();
    let uid = gateway.metadata.uid.as_deref().unwrap_or_default();
    let name = deployment_name(settings, gateway_name);
    let name_label = gateway_name_label(gateway_name);
    let infrastructure = gateway.spec.infrastructure.as_ref();
    let configuration = &validated.configuration.spec;
    let controller_labels = [
        (APP_LABEL, name.as_str()),
        (GATEWAY_NAME_LABEL, &*name_label),
        (MANAGED_BY_LABEL, MANAGED_BY),
    ];

    let creating = observed.is_none();
    let template_meta = (!creating)
        .then(|| json::get(&template.object, &["metadata"]))
        .flatten();
    let template_pod_meta = (!creating)
        .then(|| json::get(&template.object, &["spec", "template", "metadata"]))
        .flatten();

    // Every owned field by its rule (`Field::rule`): a new field or rule is a compile error
    // here until it is rendered.
    for field in Field::ALL {
        let leaf = leaves.slot(field);
        match field.rule() {
            Rule::Fixed(value) => json::set_leaf_str(leaf, value),
            Rule::DeploymentName => json::set_leaf_str(leaf, &name),
            Rule::GatewayNamespace => json::set_leaf_str(leaf, namespace),
            Rule::Labels => {
                let mut labels = LeafObject::open(leaf);
                layer(
                    &mut labels,
                    template_meta,
                    "labels",
                    infrastructure.map(|i| &i.labels),
                );
                set_strings(&mut labels, &controller_labels);
            }
            Rule::Annotations => {
                let mut annotations = LeafObject::open(leaf);
                layer(
                    &mut annotations,
                    template_meta,
                    "annotations",
                    infrastructure.map(|i| &i.annotations),
                );
                let key = generation_annotation(settings);
                match validated.configuration.metadata.generation {
                    Some(generation) => annotations.set_str(&key, &generation.to_string()),
                    None => annotations.remove(&key),
                }
                let key = uid_annotation(settings);
                match validated.configuration.metadata.uid.as_deref() {
                    Some(uid) => annotations.set_str(&key, uid),
                    None => annotations.remove(&key),
                }
                remove_if_empty(annotations);
            }
            Rule::ControllerReference => set_controller_reference(leaf, gateway_name, uid),
            Rule::Selector => json::set_leaf_with(
                leaf,
                |v| is_selector_for(v, &name),
                || json!({ "matchLabels": { APP_LABEL: name.as_str() } }),
            ),
            Rule::Replicas => {
                let Some(scaling) = &configuration.horizontal_scaling else {
                    continue;
                };
                if creating || scaling.enforce_replicas {
                    let replicas = match scaling.replicas {
                        Some(n) => Some(Value::from(n)),
                        // On create the template's count is already in place.
                        None if !creating => {
                            json::get(&template.object, &["spec", "replicas"]).cloned()
                        }
                        None => None,
                    };
                    if let Some(replicas) = replicas.filter(|r| leaf.as_deref() != Some(r)) {
                        *leaf = Some(Cow::Owned(replicas));
                    }
                }
            }
            Rule::PodLabels => {
                let mut labels = LeafObject::open(leaf);
                layer(
                    &mut labels,
                    template_pod_meta,
                    "labels",
                    infrastructure.map(|i| &i.labels),
                );
                if let Some(label) = &settings.pod_cache_label {
                    labels.set_str(&label.key, &label.value);
                }
                set_strings(&mut labels, &controller_labels);
            }
            Rule::PodAnnotations => {
                let mut annotations = LeafObject::open(leaf);
                layer(
                    &mut annotations,
                    template_pod_meta,
                    "annotations",
                    infrastructure.map(|i| &i.annotations),
                );
                set_networks(&mut annotations, validated, observed, namespace);
                remove_if_empty(annotations);
            }
            Rule::ServiceAccount => json::set_leaf_str(leaf, &settings.service_account),
            Rule::AntiAffinity => {
                if !creating {
                    // A template that sets `affinity` replaces the observed one (it is
                    // desired whole), so its required anti-affinity terms are the ones the
                    // rule renders.
                    if let Some(affinity) = template_pod_field(template, "affinity") {
                        let terms = affinity
                            .as_object()
                            .and_then(|a| json::get(a, &ANTI_AFFINITY_TERMS));
                        // The observed terms stay borrowed when they are the template's,
                        // rendered.
                        let rendered = match (terms, leaf.as_deref()) {
                            (Some(t), Some(o)) => terms_render_to(t, o, &name),
                            (None, None) => true,
                            _ => false,
                        };
                        if !rendered {
                            *leaf = terms.map(Cow::Borrowed);
                        }
                    }
                }
                set_anti_affinity(leaf, &name);
            }
            Rule::ReadinessGates => {
                let gates: Vec<&str> = [
                    (validated.ipv4, IPV4_READINESS_GATE),
                    (validated.ipv6, IPV6_READINESS_GATE),
                ]
                .into_iter()
                .filter_map(|(wanted, gate)| wanted.then_some(gate))
                .collect();
                if gates.is_empty() {
                    *leaf = None;
                } else {
                    json::set_leaf_with(
                        leaf,
                        |v| is_gate_list(v, &gates),
                        || {
                            gates
                                .iter()
                                .map(|gate| json!({ "conditionType": gate }))
                                .collect()
                        },
                    );
                }
            }
            // Rendered apart, by `render_lists`: the lists are borrowed from the template.
            Rule::TemplateList => {}
        }
    }
}

/// The template's value of a pod-spec field, unless absent or null (a null sets nothing).
fn template_pod_field<'a>(template: &'a Deployment, key: &str) -> Option<&'a Value> {
    json::get(&template.object, &POD_SPEC)
        .and_then(|p| p.get(key))
        .filter(|v| !v.is_null())
}

/// The pod spec's lists of a render: the template's, each container with the fields the
/// rules render. On update (`observed`), each container keeps the observed `resources` and
/// `resizePolicy` of the container of its name.
fn render_lists<'a>(
    template: &'a Map,
    observed: Option<&'a Map>,
    configuration: &GatewayConfigurationSpec,
    gateway_name: &str,
) -> [PodList<'a>; 3] {
    let template_pod = json::get(template, &POD_SPEC).and_then(Value::as_object);
    let observed_pod = observed
        .and_then(|o| json::get(o, &POD_SPEC))
        .and_then(Value::as_object);
    let creating = observed.is_none();
    // The entry that applies to each container name: the last, as applying them in order
    // would leave it.
    let mut scaling: BTreeMap<&str, &VerticalScalingContainer> = BTreeMap::new();
    for entry in configuration
        .vertical_scaling
        .iter()
        .flat_map(|v| &v.containers)
    {
        if creating || entry.enforce_resources {
            scaling.insert(&entry.name, entry);
        }
    }
    Field::TEMPLATE_LISTS.map(|field| {
        let Some((list, value)) = field
            .pod_key()
            .and_then(|list| Some((list, template_pod?.get(list)?)))
        else {
            return PodList::Absent;
        };
        let Some(containers) = value.as_array().filter(|_| field != Field::Volumes) else {
            return PodList::Template(value);
        };
        // Index the observed containers once: a long list must not cost n².
        let mut previous: BTreeMap<&str, &Map> = BTreeMap::new();
        let observed_list = observed_pod
            .and_then(|o| o.get(list))
            .and_then(Value::as_array);
        for c in observed_list
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
        {
            if let Some(name) = name_of(c) {
                // The first of a repeated name, as a linear search would find.
                previous.entry(name).or_insert(c);
            }
        }
        let router_list = field == Field::Containers;
        let rendered = containers.iter().map(|container| {
            let name = container.as_object().and_then(name_of);
            render_container(
                container,
                router_list,
                name.and_then(|n| previous.get(n).copied()),
                name.and_then(|n| scaling.get(n).copied()),
                gateway_name,
            )
        });
        PodList::Containers(rendered.collect())
    })
}

/// One template container as the rules render it: `MERIDIO_GATEWAY_NAME`, the router's
/// downward-API env (`router_list`: the container is in `containers`), the `resources`
/// and `resizePolicy` of the observed container of its name (`previous`), and those of the
/// vertical scaling entry that applies.
fn render_container<'a>(
    container: &'a Value,
    router_list: bool,
    previous: Option<&'a Map>,
    scaling: Option<&VerticalScalingContainer>,
    gateway_name: &str,
) -> Overlay<'a> {
    let mut overlay = Overlay::of(container);
    let Some(map) = container.as_object() else {
        return overlay;
    };
    let router = router_list && name_of(map) == Some(ROUTER_CONTAINER);
    if let Some(env) = rendered_env(map.get("env"), router, gateway_name) {
        overlay.set("env", Some(Cow::Owned(env)));
    }
    if let Some(previous) = previous {
        for key in ["resources", "resizePolicy"] {
            overlay.set(key, previous.get(key).map(Cow::Borrowed));
        }
    }
    if let Some(entry) = scaling {
        set_resources(&mut overlay, entry);
    }
    overlay
}

/// Layers the template's `key` map (update only: on create `target` already is the
/// template's) and then the Gateway's infrastructure map over `target`.
fn layer(
    target: &mut LeafObject<'_, '_>,
    template_meta: Option<&Value>,
    key: &str,
    infrastructure: Option<&BTreeMap<String, String>>,
) {
    // Each layer is one merge (see `LeafObject::set_all`): labels and annotations can be many.
    if let Some(from_template) = template_meta
        .and_then(|m| m.get(key))
        .and_then(Value::as_object)
    {
        target.set_all(from_template.iter().map(|(k, v)| (k, Cow::Borrowed(v))));
    }
    // Compared as text first: a steady reconcile builds no value.
    let changed: Vec<(&str, &str)> = infrastructure
        .into_iter()
        .flatten()
        .filter(|(k, v)| target.get(k).and_then(Value::as_str) != Some(v.as_str()))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    target.set_all(
        changed
            .into_iter()
            .map(|(k, v)| (k, Cow::Owned(Value::from(v)))),
    );
}

fn set_strings(target: &mut LeafObject<'_, '_>, pairs: &[(&str, &str)]) {
    for (k, v) in pairs {
        target.set_str(k, v);
    }
}

/// Removes an object left empty.
fn remove_if_empty(object: LeafObject<'_, '_>) {
    if object.is_empty() {
        object.clear();
    }
}

/// Puts the controller reference to the Gateway in place of the first controller
/// reference (or appends it), dropping other controller references and duplicates of ours.
fn set_controller_reference(leaf: &mut Leaf<'_>, gateway_name: &str, uid: &str) {
    if references_in_place(leaf.as_deref(), gateway_name, uid) {
        return;
    }
    let refs = leaf.get_or_insert_with(|| Cow::Owned(Value::Array(Box::default())));
    let slot = refs.to_mut();
    let mut refs = match slot.take() {
        Value::Array(refs) => refs.into_vec(),
        _ => Vec::new(),
    };
    let mut placed = false;
    refs.retain_mut(|r| {
        let controller = r.get("controller").and_then(Value::as_bool) == Some(true);
        if !controller {
            return r.get("uid").and_then(Value::as_str) != Some(uid);
        }
        if placed {
            return false;
        }
        placed = true;
        if !is_controller_reference(r, gateway_name, uid) {
            *r = controller_reference(gateway_name, uid);
        }
        true
    });
    if !placed {
        refs.push(controller_reference(gateway_name, uid));
    }
    *slot = Value::from(refs);
}

/// Whether [`set_controller_reference`] would leave `refs` as they are: the first controller
/// reference is ours, there is no other, and no other reference names the Gateway's uid.
fn references_in_place(refs: Option<&Value>, gateway_name: &str, uid: &str) -> bool {
    let Some(refs) = refs.and_then(Value::as_array) else {
        return false;
    };
    let mut controllers = 0;
    refs.iter().all(|r| {
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            controllers += 1;
            controllers == 1 && is_controller_reference(r, gateway_name, uid)
        } else {
            r.get("uid").and_then(Value::as_str) != Some(uid)
        }
    }) && controllers == 1
}

/// The controller reference to the Gateway.
fn controller_reference(gateway_name: &str, uid: &str) -> Value {
    json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "name": gateway_name,
        "uid": uid,
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Whether `r` is exactly [`controller_reference`], without building it.
fn is_controller_reference(r: &Value, gateway_name: &str, uid: &str) -> bool {
    let Some(r) = r.as_object() else {
        return false;
    };
    let text = |key: &str, want: &str| r.get(key).and_then(Value::as_str) == Some(want);
    let yes = |key: &str| r.get(key).and_then(Value::as_bool) == Some(true);
    r.len() == 6
        && text("apiVersion", "gateway.networking.k8s.io/v1")
        && text("kind", "Gateway")
        && text("name", gateway_name)
        && text("uid", uid)
        && yes("controller")
        && yes("blockOwnerDeletion")
}

/// Whether `selector` is exactly `{matchLabels: {app: NAME}}`.
fn is_selector_for(selector: &Value, name: &str) -> bool {
    let Some(selector) = selector.as_object() else {
        return false;
    };
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    selector.len() == 1
        && labels
            .is_some_and(|l| l.len() == 1 && l.get(APP_LABEL).and_then(Value::as_str) == Some(name))
}

/// Whether `list` is exactly the readiness gates `gates`, in order.
fn is_gate_list(list: &Value, gates: &[&str]) -> bool {
    list.as_array().is_some_and(|list| {
        list.len() == gates.len()
            && list.iter().zip(gates).all(|(entry, gate)| {
                entry.as_object().is_some_and(|e| {
                    e.len() == 1 && e.get("conditionType").and_then(Value::as_str) == Some(gate)
                })
            })
    })
}

/// Writes (or removes) the networks annotation; an observed value listing the same set
/// keeps its text.
fn set_networks(
    annotations: &mut LeafObject<'_, '_>,
    validated: &Validated<'_>,
    observed: Option<&Deployment>,
    namespace: &str,
) {
    if validated.networks.is_empty() {
        annotations.remove(nad::NETWORKS_ANNOTATION);
        return;
    }
    let kept = observed
        .and_then(|o| {
            o.get(&[
                "spec",
                "template",
                "metadata",
                "annotations",
                nad::NETWORKS_ANNOTATION,
            ])
        })
        .and_then(Value::as_str);
    let rendered = nad::to_annotation(&validated.networks);
    // The observed text is most often exactly ours: only parse it when it is not.
    let text = match kept {
        Some(text) if text != rendered && nad::same_set(text, namespace, &validated.networks) => {
            text.to_owned()
        }
        _ => rendered,
    };
    annotations.set_str(nad::NETWORKS_ANNOTATION, &text);
}

/// Sets `values: [NAME]` on every `app` expression of the required anti-affinity terms.
fn set_anti_affinity(terms: &mut Leaf<'_>, name: &str) {
    let is_set = |e: &Value| {
        e.get("values")
            .and_then(Value::as_array)
            .is_some_and(|l| matches!(l, [only] if only == name))
    };
    let pending = |terms: &Value| app_expressions(terms).any(|e| !is_set(e));
    if !terms.as_deref().is_some_and(pending) {
        return;
    }
    let Some(terms) = terms
        .as_mut()
        .map(Cow::to_mut)
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for term in terms.iter_mut().filter_map(Value::as_object_mut) {
        let Some(expressions) =
            get_mut(term, &["labelSelector", "matchExpressions"]).and_then(Value::as_array_mut)
        else {
            continue;
        };
        for expression in expressions.iter_mut().filter_map(Value::as_object_mut) {
            if expression.get("key").and_then(Value::as_str) == Some(APP_LABEL) {
                expression.insert("values", json!([name]));
            }
        }
    }
}

/// Whether [`set_anti_affinity`] over the `template` terms gives exactly `observed`.
fn terms_render_to(template: &Value, observed: &Value, name: &str) -> bool {
    match (template, observed) {
        (Value::Array(t), Value::Array(o)) => {
            t.len() == o.len() && t.iter().zip(o).all(|(t, o)| term_renders_to(t, o, name))
        }
        _ => template == observed,
    }
}

/// One term: equal, but the `app` expressions of `labelSelector.matchExpressions`.
fn term_renders_to(template: &Value, observed: &Value, name: &str) -> bool {
    let (Some(t), Some(o)) = (template.as_object(), observed.as_object()) else {
        return template == observed;
    };
    let expressions = |m: &Map| {
        m.get("labelSelector")
            .and_then(Value::as_object)
            .and_then(|s| s.get("matchExpressions"))
            .and_then(Value::as_array)
            .map(|_| ())
    };
    if expressions(t).is_none() {
        return template == observed;
    }
    let same_keys = |a: &Map, b: &Map, except: &str| {
        a.len() == b.len()
            && a.iter()
                .all(|(k, v)| k == except || b.get(k).is_some_and(|w| w == v))
    };
    let (Some(ts), Some(os)) = (
        t.get("labelSelector").and_then(Value::as_object),
        o.get("labelSelector").and_then(Value::as_object),
    ) else {
        return false;
    };
    let (Some(te), Some(oe)) = (
        ts.get("matchExpressions").and_then(Value::as_array),
        os.get("matchExpressions").and_then(Value::as_array),
    ) else {
        return false;
    };
    same_keys(t, o, "labelSelector")
        && same_keys(ts, os, "matchExpressions")
        && te.len() == oe.len()
        && te
            .iter()
            .zip(oe)
            .all(|(t, o)| expression_renders_to(t, o, name))
}

/// One expression: an `app` one gets `values: [NAME]`, any other stays as it is.
fn expression_renders_to(template: &Value, observed: &Value, name: &str) -> bool {
    let Some(t) = template
        .as_object()
        .filter(|t| t.get("key").and_then(Value::as_str) == Some(APP_LABEL))
    else {
        return template == observed;
    };
    let Some(o) = observed.as_object() else {
        return false;
    };
    let values_ok = o
        .get("values")
        .and_then(Value::as_array)
        .is_some_and(|l| matches!(l, [only] if only == name));
    let extra = usize::from(!t.contains_key("values"));
    values_ok
        && o.len() == t.len() + extra
        && t.iter()
            .all(|(k, v)| k == "values" || o.get(k).is_some_and(|w| w == v))
}

/// The `app` expressions of anti-affinity terms.
fn app_expressions(terms: &Value) -> impl Iterator<Item = &Value> {
    terms
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|term| json::get(term.as_object()?, &["labelSelector", "matchExpressions"]))
        .filter_map(Value::as_array)
        .flatten()
        .filter(|e| e.get("key").and_then(Value::as_str) == Some(APP_LABEL))
}

/// `{name: VARIABLE, valueFrom: {fieldRef: {fieldPath: PATH}}}`, built as a tree directly:
/// every reconcile of the router renders these, and `json!` would build each twice.
fn downward_env(variable: &str, field_path: &str) -> Value {
    let object = |key: &str, value: Value| Value::Object(Map::from_iter([(key, value)]));
    Value::Object(Map::from_iter([
        ("name", Value::from(variable)),
        (
            "valueFrom",
            object("fieldRef", object("fieldPath", Value::from(field_path))),
        ),
    ]))
}

/// A container's `env` as the rules render it: every `MERIDIO_GATEWAY_NAME` entry with
/// the Gateway's name, and for the router the downward-API variables it lacks; `None` when
/// that is `env` as it is.
fn rendered_env(env: Option<&Value>, router: bool, gateway_name: &str) -> Option<Value> {
    let mut rendered = match env {
        Some(Value::Array(list)) => list.to_vec(),
        _ if router => Vec::new(),
        _ => return None,
    };
    for entry in rendered.iter_mut().filter_map(Value::as_object_mut) {
        if name_of(entry) == Some(GATEWAY_NAME_ENV) {
            entry.remove("valueFrom");
            json::set_str(entry, "value", gateway_name);
        }
    }
    if router {
        for (variable, field_path) in DOWNWARD_ENV {
            let present = rendered
                .iter()
                .any(|e| e.get("name").and_then(Value::as_str) == Some(variable));
            if !present {
                rendered.push(downward_env(variable, field_path));
            }
        }
    }
    let rendered = Value::from(rendered);
    (env != Some(&rendered)).then_some(rendered)
}

/// Sets a container's `resources.requests`, `resources.limits` and `resizePolicy` from a
/// vertical scaling entry: an empty or missing one removes the key, and `resources` goes
/// when nothing is left in it.
fn set_resources(container: &mut Overlay<'_>, entry: &VerticalScalingContainer) {
    let part = |key: &str| {
        entry
            .resources
            .as_ref()
            .and_then(|r| r.get(key))
            .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
    };
    let wanted = [("requests", part("requests")), ("limits", part("limits"))];
    let current = container.get("resources").and_then(Value::as_object);
    let unchanged = current
        .is_some_and(|r| !r.is_empty() && wanted.iter().all(|(key, want)| same(r.get(key), *want)));
    if !unchanged {
        let mut resources = current.cloned().unwrap_or_default();
        for (key, want) in wanted {
            match want {
                Some(v) => json::put(&mut resources, key, v.clone()),
                None => drop(resources.remove(key)),
            }
        }
        let resources = (!resources.is_empty()).then_some(Cow::Owned(Value::Object(resources)));
        container.set("resources", resources);
    }
    match entry.resize_policy.as_ref().filter(|p| !p.is_empty()) {
        Some(policy) => {
            let current = container.get("resizePolicy").and_then(Value::as_array);
            let unchanged = current.is_some_and(|c| {
                c.len() == policy.len() && c.iter().zip(policy).all(|(c, p)| c == p)
            });
            if !unchanged {
                let policy = policy.iter().cloned().collect();
                container.set("resizePolicy", Some(Cow::Owned(policy)));
            }
        }
        None => container.set("resizePolicy", None),
    }
}

/// Whether a Deployment's value is the configuration's (both absent, or equal).
fn same(value: Option<&Value>, wanted: Option<&Value>) -> bool {
    match (value, wanted) {
        (Some(value), Some(wanted)) => value == wanted,
        (None, None) => true,
        _ => false,
    }
}

fn name_of(object: &Map) -> Option<&str> {
    object.get("name").and_then(Value::as_str)
}

/// The value at `path` (object keys), mutably, if every step is an object.
fn get_mut<'a>(object: &'a mut Map, path: &[&str]) -> Option<&'a mut Value> {
    let (last, init) = path.split_last()?;
    let mut cur = object;
    for key in init {
        cur = cur.get_mut(key)?.as_object_mut()?;
    }
    cur.get_mut(last)
}

// Checks render against the simulated server's defaulting.
#[cfg(all(test, feature = "sim"))]
mod owned_part_props;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
