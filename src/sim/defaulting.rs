//! What the API server does to a Deployment it stores: defaulting and quantity normalization.
//!
//! The simulated API server runs [`apply_server_defaults`] on every Deployment it is asked to
//! write, so that what the crate reads back looks like what a real cluster returns: the
//! fields below are added where missing (never overwritten), and quantities are rewritten in
//! canonical form (as apimachinery writes them). `metadata.generation` and `resourceVersion` are
//! left to the simulated cluster, which knows whether `spec` changed.
//!
//! The list is Kubernetes' own for a pod template (`TestWorkloadDefaults` in
//! `pkg/apis/core/v1/defaults_test.go`, from `SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`, `SetDefaults_Volume` and the volume
//! source defaulters; `pkg/apis/apps/v1/defaults.go` for the Deployment), plus what the
//! server's JSON encoding always writes (`resources: {}`, a zero `divisor`):
//!
//! - Deployment: `spec.replicas` 1, `spec.strategy` `RollingUpdate` with `maxUnavailable` and
//!   `maxSurge` 25%, `revisionHistoryLimit` 10, `progressDeadlineSeconds` 600, annotation
//!   `deployment.kubernetes.io/revision` `"1"` (really the Deployment controller's, but it
//!   is there on every Deployment a client reads).
//! - Pod template: `metadata.creationTimestamp: null` (what the server serializes);
//!   `dnsPolicy` `ClusterFirst`, `restartPolicy` `Always`, `schedulerName`
//!   `default-scheduler`, `terminationGracePeriodSeconds` 30, `securityContext` `{}`. Not
//!   `enableServiceLinks` nor host-network `hostPort`s: those are defaulted on Pods only.
//!   The deprecated `serviceAccount` and `serviceAccountName` are made equal, the latter
//!   winning, as the server's conversion does (the one place a written value is
//!   overwritten: removing only `serviceAccountName` brings it back from `serviceAccount`).
//! - Each container, init container and ephemeral container: `terminationMessagePath`
//!   `/dev/termination-log`, `terminationMessagePolicy` `File`, `imagePullPolicy` (`Always`
//!   for tag `latest` or no tag and no digest, else `IfNotPresent`), `resources` `{}`, port
//!   `protocol` `TCP`, `env[].valueFrom.fieldRef.apiVersion` `v1`,
//!   `env[].valueFrom.resourceFieldRef.divisor` `"0"`, probe (`liveness`, `readiness`,
//!   `startup`) timings (`timeoutSeconds` 1, `periodSeconds` 10, `successThreshold` 1,
//!   `failureThreshold` 3), `httpGet` `path` `/` and `scheme` `HTTP` in probes and in
//!   `lifecycle.postStart`/`preStop`, and `resources.requests`/`limits` quantities rounded
//!   up to a milli (`SetDefaults_ResourceList`) in canonical form.
//! - Volumes: one with no source gets `emptyDir: {}`; `emptyDir` keeps `{}` (its `sizeLimit`
//!   canonicalized); `configMap`, `secret`, `downwardAPI` and `projected` get `defaultMode`
//!   420; `downwardAPI` items (also inside `projected` sources) get `fieldRef.apiVersion`
//!   `v1` and `resourceFieldRef.divisor` `"0"`; a projected `serviceAccountToken` gets
//!   `expirationSeconds` 3600; `hostPath` gets `type` `""`; the in-tree `iscsi`
//!   (`iscsiInterface` `default`), `rbd` (`pool` `rbd`, `user` `admin`, `keyring`
//!   `/etc/ceph/keyring`), `azureDisk` (`cachingMode` `ReadWrite`, `fsType` `ext4`, `kind`
//!   `Shared`, `readOnly` false) and `scaleIO` (`fsType` `xfs`, `storageMode`
//!   `ThinProvisioned`) sources get theirs.
//!
//! A quantity that does not parse is left as written (the simulated server refuses such a
//! write before defaulting: [`crate::sim::api_validation`]). Applying the defaults twice
//! changes nothing.
//!
//! Public so that a test outside the simulator can default a Deployment as the server
//! would (the drift property tests, the benchmarks, and an embedder checking that its own
//! template does not drift once stored).

use crate::wire::tree::{Map, Value};

use crate::quantity::Quantity;
use crate::wire::Deployment;

/// Applies typical API-server defaulting and normalization to a written Deployment.
///
/// ```
/// use gateway_reconcile::sim::defaulting::apply_server_defaults;
/// use gateway_reconcile::wire::Deployment;
///
/// let mut d: Deployment = serde_json::from_value(serde_json::json!({
///     "spec": { "template": { "spec": { "containers": [
///         { "name": "lb", "image": "lb:1.0", "resources": { "limits": { "cpu": "0.5" } } }
///     ] } } }
/// })).unwrap();
/// apply_server_defaults(&mut d);
/// assert_eq!(d["spec"]["revisionHistoryLimit"].as_i64(), Some(10));
/// let container = &d.get(&["spec", "template", "spec", "containers"]).unwrap()[0];
/// assert_eq!(container["imagePullPolicy"], "IfNotPresent");
/// assert_eq!(container["resources"]["limits"]["cpu"], "500m");
/// ```
pub fn apply_server_defaults(deployment: &mut Deployment) {
    let root = &mut deployment.object;
    let metadata = object_at(root, "metadata");
    let annotations = object_at(metadata, "annotations");
    default(
        annotations,
        "deployment.kubernetes.io/revision",
        Value::from("1"),
    );

    let spec = object_at(root, "spec");
    default(spec, "replicas", Value::from(1));
    default(spec, "revisionHistoryLimit", Value::from(10));
    default(spec, "progressDeadlineSeconds", Value::from(600));
    strategy(object_at(spec, "strategy"));

    let template = object_at(spec, "template");
    default(
        object_at(template, "metadata"),
        "creationTimestamp",
        Value::Null,
    );
    let pod = object_at(template, "spec");
    default(pod, "dnsPolicy", Value::from("ClusterFirst"));
    default(pod, "restartPolicy", Value::from("Always"));
    default(pod, "schedulerName", Value::from("default-scheduler"));
    default(pod, "terminationGracePeriodSeconds", Value::from(30));
    default(pod, "securityContext", Value::Object(Map::new()));
    service_account(pod);
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(Value::Array(containers)) = pod.get_mut(list) {
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                container(c);
            }
        }
    }
    if let Some(Value::Array(volumes)) = pod.get_mut("volumes") {
        for v in volumes.iter_mut().filter_map(Value::as_object_mut) {
            volume(v);
        }
    }
}

/// The deprecated `serviceAccount` is an alias of `serviceAccountName`: the server takes the
/// name from `serviceAccountName`, or from `serviceAccount` when that one is empty or
/// absent, and writes it back into both (its `v1` pod spec conversion). So a write that
/// removes only `serviceAccountName` gets it back from `serviceAccount`, and a write that
/// sets only `serviceAccountName` is read back with `serviceAccount` too.
fn service_account(pod: &mut Map) {
    let name = ["serviceAccountName", "serviceAccount"]
        .into_iter()
        .find_map(|key| {
            pod.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .map(str::to_owned);
    if let Some(name) = name {
        pod.insert("serviceAccountName", Value::from(name.as_str()));
        pod.insert("serviceAccount", Value::from(name.as_str()));
    }
}

/// The object under `key`, created (or replacing a non-object) where missing.
fn object_at<'a>(map: &'a mut Map, key: &str) -> &'a mut Map {
    crate::json::object_mut(map, &[key])
}

/// Sets `key` when it is absent or null.
fn default(map: &mut Map, key: &str, value: Value) {
    match map.get_mut(key) {
        Some(v) if !v.is_null() => {}
        Some(v) => *v = value,
        None => {
            map.insert(key, value);
        }
    }
}

fn strategy(strategy: &mut Map) {
    default(strategy, "type", Value::from("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let rolling = object_at(strategy, "rollingUpdate");
        default(rolling, "maxUnavailable", Value::from("25%"));
        default(rolling, "maxSurge", Value::from("25%"));
    }
}

fn container(c: &mut Map) {
    default(
        c,
        "terminationMessagePath",
        Value::from("/dev/termination-log"),
    );
    default(c, "terminationMessagePolicy", Value::from("File"));
    let policy = pull_policy(c.get("image").and_then(Value::as_str).unwrap_or(""));
    default(c, "imagePullPolicy", Value::from(policy));
    let resources = object_at(c, "resources");
    for key in ["requests", "limits"] {
        if let Some(Value::Object(list)) = resources.get_mut(key) {
            for value in list.values_mut() {
                canonicalize_resource(value);
            }
        }
    }
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default(p, "protocol", Value::from("TCP"));
        }
    }
    if let Some(Value::Array(env)) = c.get_mut("env") {
        for e in env.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::Object(from)) = e.get_mut("valueFrom") {
                field_refs(from);
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(p)) = c.get_mut(probe) {
            default(p, "timeoutSeconds", Value::from(1));
            default(p, "periodSeconds", Value::from(10));
            default(p, "successThreshold", Value::from(1));
            default(p, "failureThreshold", Value::from(3));
            http_get(p);
        }
    }
    if let Some(Value::Object(lifecycle)) = c.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(Value::Object(h)) = lifecycle.get_mut(hook) {
                http_get(h);
            }
        }
    }
}

/// `httpGet` of a probe or a lifecycle hook: `path` `/`, `scheme` `HTTP`.
fn http_get(handler: &mut Map) {
    if let Some(Value::Object(http)) = handler.get_mut("httpGet") {
        default(http, "path", Value::from("/"));
        default(http, "scheme", Value::from("HTTP"));
    }
}

/// `fieldRef.apiVersion` `v1` and `resourceFieldRef.divisor` `"0"` (a zero quantity, which
/// the server's encoding writes) of an env source or a downward API item.
fn field_refs(holder: &mut Map) {
    if let Some(Value::Object(field_ref)) = holder.get_mut("fieldRef") {
        default(field_ref, "apiVersion", Value::from("v1"));
    }
    if let Some(Value::Object(resource_ref)) = holder.get_mut("resourceFieldRef") {
        default(resource_ref, "divisor", Value::from("0"));
    }
}

/// The downward API items of a `downwardAPI` volume or projection.
fn downward_items(source: &mut Map) {
    if let Some(Value::Array(items)) = source.get_mut("items") {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            field_refs(item);
        }
    }
}

/// Kubernetes' rule: `Always` when the tag is `latest`, or when there is neither a tag nor
/// a digest (the tag then defaults to `latest`).
fn pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    // A `:` after the last `/` starts the tag; one before it is a registry port.
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.rsplit_once(':').map(|(_, tag)| tag);
    match tag {
        Some("latest") => "Always",
        None if !digest => "Always",
        _ => "IfNotPresent",
    }
}

/// The keys of a volume that are not its source.
const VOLUME_NON_SOURCE: [&str; 1] = ["name"];

/// Defaults of the in-tree volume sources: (source, field, value).
const SOURCE_DEFAULTS: [(&str, &str, &str); 10] = [
    ("iscsi", "iscsiInterface", "default"),
    ("rbd", "pool", "rbd"),
    ("rbd", "user", "admin"),
    ("rbd", "keyring", "/etc/ceph/keyring"),
    ("azureDisk", "cachingMode", "ReadWrite"),
    ("azureDisk", "fsType", "ext4"),
    ("azureDisk", "kind", "Shared"),
    ("scaleIO", "fsType", "xfs"),
    ("scaleIO", "storageMode", "ThinProvisioned"),
    ("hostPath", "type", ""),
];

fn volume(v: &mut Map) {
    let has_source = v
        .iter()
        .any(|(k, value)| !VOLUME_NON_SOURCE.contains(&k) && !value.is_null());
    if !has_source {
        v.insert("emptyDir", Value::Object(Map::new()));
    }
    for (source, field, value) in SOURCE_DEFAULTS {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            default(s, field, Value::from(value));
        }
    }
    if let Some(Value::Object(disk)) = v.get_mut("azureDisk") {
        default(disk, "readOnly", Value::from(false));
    }
    for source in ["downwardAPI", "projected"] {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            default(s, "defaultMode", Value::from(420));
        }
    }
    if let Some(Value::Object(downward)) = v.get_mut("downwardAPI") {
        downward_items(downward);
    }
    let sources = v
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut);
    for source in sources
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if let Some(Value::Object(downward)) = source.get_mut("downwardAPI") {
            downward_items(downward);
        }
        if let Some(Value::Object(token)) = source.get_mut("serviceAccountToken") {
            default(token, "expirationSeconds", Value::from(3600));
        }
    }
    if let Some(size) = v
        .get_mut("emptyDir")
        .and_then(Value::as_object_mut)
        .and_then(|e| e.get_mut("sizeLimit"))
    {
        canonicalize(size);
    }
    for source in ["configMap", "secret"] {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            default(s, "defaultMode", Value::from(420));
        }
    }
}

/// Rewrites a request or limit rounded up to a milli (`SetDefaults_ResourceList`), in
/// canonical form; malformed ones stay.
fn canonicalize_resource(value: &mut Value) {
    let parsed = match value {
        Value::String(s) => s.parse::<Quantity>().ok(),
        Value::Number(n) => n.to_string().parse::<Quantity>().ok(),
        _ => None,
    };
    if let Some(q) = parsed {
        *value = Value::from(q.rounded_up_to_milli().canonical());
    }
}

/// Rewrites a quantity (string or JSON number) in canonical form; malformed ones stay.
fn canonicalize(value: &mut Value) {
    let parsed = match value {
        Value::String(s) => s.parse::<Quantity>().ok(),
        Value::Number(n) => n.to_string().parse::<Quantity>().ok(),
        _ => None,
    };
    if let Some(q) = parsed {
        *value = Value::from(q.canonical());
    }
}

#[cfg(test)]
mod tests;
