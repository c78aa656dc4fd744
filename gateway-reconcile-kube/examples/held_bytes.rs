//! The heap bytes the controller's watch caches hold for a given set of objects.
//!
//! ```text
//! cargo run --release -p gateway-reconcile-kube --example held_bytes -- DIR
//! ```
//!
//! The controller (`controller::run_with`) keeps seven kube-runtime reflector stores
//! (`reflector::store::<K>()`: each object an `Arc<K>` keyed by its `ObjectRef<K>`), each
//! filled by one watch. `DIR` holds one file per watch, `DIR/<name>.json`, each a
//! Kubernetes List as the API server answers a LIST of that resource, `managedFields`
//! included:
//!
//! | name | LIST | cached as |
//! |---|---|---|
//! | `gatewayclasses` | GatewayClasses | [`cached::GatewayClass`] |
//! | `gatewayconfigurations` | GatewayConfigurations | [`cached::GatewayConfiguration`] |
//! | `l34routes` | L34Routes | [`cached::L34Route`] |
//! | `lb-deployments` | Deployments, `-l app.kubernetes.io/managed-by=gateway-controller.meridio-2.nordix.org` | [`cached::Deployment`] |
//! | `deployment-metadata` | Deployments, metadata only (`PartialObjectMetadataList`) | [`cached::DeploymentMeta`] |
//! | `namespace-metadata` | Namespaces, metadata only (`PartialObjectMetadataList`) | [`cached::NamespaceMeta`] |
//! | `gateways` | Gateways | [`cached::Gateway`] |
//!
//! A missing file is an empty cache (said on stderr). An item of `lb-deployments` without
//! the managed-by label is skipped (said on stderr): the LB watch's label selector would not
//! return it. The other watches select nothing: every Gateway, of any class, is cached. A
//! controller run with a namespace watches the namespaced kinds in that namespace only: the
//! files are then that namespace's LISTs.
//!
//! # What is measured
//!
//! A counting global allocator gives the heap bytes in use (allocated minus freed). For each
//! cache in turn:
//!
//! 1. the bytes in use;
//! 2. the file read, and its items deserialized into the cached type by serde from their
//!    JSON, as kube-client does (the file is read as a `kube::core::ObjectList<K>`, as a LIST
//!    page is; a streaming list's events read each object with the same `Deserialize`).
//!    [`cached::Cached`] drops `managedFields` itself and [`cached::Meta`] (the Deployments'
//!    and Namespaces' metadata) skips them unread;
//! 3. the items applied to the store's writer as the events of a streaming list: `Init`,
//!    one `InitApply` per item, `InitDone` (the writer stores its own clone of each object,
//!    an `Arc<K>`, keyed by its `ObjectRef<K>`). The controller's writer (its crate-private
//!    `reflect` module) applies a watch's first list just so;
//! 4. the text, the list and every event dropped, the store and its writer kept;
//! 5. the bytes in use again: the difference is what that cache holds (the objects, their
//!    keys and the store's hash table).
//!
//! Every store is kept until all seven are measured, so that no later measurement sees an
//! earlier free.
//!
//! It prints one JSON object on stdout:
//!
//! ```text
//! {"caches":[{"name":"gatewayclasses","objects":1,"json_bytes":410,"held_bytes":2004}, ...],
//!  "objects":10,"json_bytes":6769,"held_bytes":18922}
//! ```
//!
//! (`json_bytes`: the size of the file read; 0 for a missing one.)
//!
//! # What is left out
//!
//! Only the seven reflector stores are measured. Not in them, so not counted:
//!
//! - what a store holds empty (its lock and its readiness signal, 200 bytes a store): the
//!   stores are made before the first measurement, so an empty cache holds 0;
//! - the controller's own indexes, kept beside the stores from the same watch events: the
//!   L34Routes by the Gateways they name (`routes_by_gateway`), the Gateways by class, by
//!   GatewayConfiguration, by LB Deployment name and by namespace selector (`gateways_by`),
//!   and the parents each L34Route had at its last event (`RouteParents`);
//! - the rest of the controller's state: kube-runtime's `Controller` (its scheduler and
//!   queue), the own writes awaited (`Pending`), the per-Gateway backoff, the metrics, and
//!   the write records of the core's `reconcile::Driver`;
//! - what a watch holds only while it lists (a LIST page, or a relist's set of keys) or
//!   while it reads one event, and the allocator's own overhead and fragmentation, which a
//!   process's RSS includes.
//!
//! The scale harness (e2e/scale) compares the controller's peak RSS against this: the data
//! it must hold at the least.

use std::alloc::System;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gateway_reconcile::lookup;
use gateway_reconcile_kube::cached;
use kube::Resource;
use kube::core::ObjectList;
use kube::runtime::reflector::{self, Store, store::Writer};
use kube::runtime::watcher::Event;
use serde::Serialize;
use serde::de::DeserializeOwned;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Heap bytes in use now, on every thread. `stats_alloc` adds a realloc's growth to
/// `bytes_allocated` and its shrinking to `bytes_deallocated`.
fn in_use() -> i64 {
    let stats = GLOBAL.stats();
    stats.bytes_allocated as i64 - stats.bytes_deallocated as i64
}

/// One watch cache: the reflector store and its writer, as the watch keeps them.
struct Cache<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    writer: Writer<K>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Cache<K> {
    fn new() -> Self {
        let (store, writer) = reflector::store::<K>();
        Cache { store, writer }
    }
}

/// The seven caches of `run_with`.
struct Caches {
    gatewayclasses: Cache<cached::GatewayClass>,
    gatewayconfigurations: Cache<cached::GatewayConfiguration>,
    l34routes: Cache<cached::L34Route>,
    lb_deployments: Cache<cached::Deployment>,
    deployment_metadata: Cache<cached::DeploymentMeta>,
    namespace_metadata: Cache<cached::NamespaceMeta>,
    gateways: Cache<cached::Gateway>,
}

impl Caches {
    /// Objects in each store, in the order of `run_with`.
    fn lens(&self) -> [usize; 7] {
        [
            self.gatewayclasses.store.len(),
            self.gatewayconfigurations.store.len(),
            self.l34routes.store.len(),
            self.lb_deployments.store.len(),
            self.deployment_metadata.store.len(),
            self.namespace_metadata.store.len(),
            self.gateways.store.len(),
        ]
    }
}

/// What one cache holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Held {
    name: &'static str,
    objects: u64,
    json_bytes: u64,
    held_bytes: i64,
}

/// Every cache's [`Held`], in the order of `run_with`, and their sums: what is printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Report {
    caches: Vec<Held>,
    objects: u64,
    json_bytes: u64,
    held_bytes: i64,
}

impl Report {
    fn new(caches: Vec<Held>) -> Self {
        Report {
            objects: caches.iter().map(|h| h.objects).sum(),
            json_bytes: caches.iter().map(|h| h.json_bytes).sum(),
            held_bytes: caches.iter().map(|h| h.held_bytes).sum(),
            caches,
        }
    }
}

/// What [`fill`] has to say on stderr, said once the measurement is over.
#[derive(Default)]
struct Notes(Vec<String>);

/// Fills `cache` from `DIR/<name>.json` and measures what it holds; `keep` says whether the
/// watch would return an item.
fn fill<K>(
    cache: &mut Cache<K>,
    dir: &Path,
    name: &'static str,
    keep: impl Fn(&K) -> bool,
    notes: &mut Notes,
) -> io::Result<Held>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + 'static,
{
    // Made before the measurement and dropped after it, so it counts neither way; the
    // notes are made after it.
    let path: PathBuf = dir.join(format!("{name}.json"));
    let mut missing = false;
    let mut skipped = 0;
    let before = in_use();
    let (objects, json_bytes) = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let list: ObjectList<K> = serde_json::from_str(&text).map_err(|error| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {error}", path.display()),
                )
            })?;
            let json_bytes = text.len() as u64;
            drop(text);
            let mut objects = 0;
            cache.writer.apply_watcher_event(&Event::Init);
            for object in list.items {
                if keep(&object) {
                    objects += 1;
                    cache.writer.apply_watcher_event(&Event::InitApply(object));
                } else {
                    skipped += 1;
                }
            }
            cache.writer.apply_watcher_event(&Event::InitDone);
            (objects, json_bytes)
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            missing = true;
            // The watch of a kind without objects lists nothing.
            cache.writer.apply_watcher_event(&Event::Init);
            cache.writer.apply_watcher_event(&Event::InitDone);
            (0, 0)
        }
        Err(error) => {
            return Err(io::Error::new(
                error.kind(),
                format!("{}: {error}", path.display()),
            ));
        }
    };
    let held_bytes = in_use() - before;
    if missing {
        notes
            .0
            .push(format!("{}: missing, an empty cache", path.display()));
    }
    if skipped > 0 {
        notes.0.push(format!(
            "{}: skipped {skipped} of its items, without the label {}={} (the LB watch selects by it)",
            path.display(),
            lookup::MANAGED_BY_LABEL,
            lookup::MANAGED_BY
        ));
    }
    Ok(Held {
        name,
        objects,
        json_bytes,
        held_bytes,
    })
}

/// Every object of the LIST is cached.
fn all<K>(_: &K) -> bool {
    true
}

/// Whether a Deployment carries the label the LB watch selects by (an unreadable one is
/// kept: the server selected it).
fn lb_labeled(deployment: &cached::Deployment) -> bool {
    deployment.read().map_or(true, |d| {
        d.get(&["metadata", "labels", lookup::MANAGED_BY_LABEL])
            .and_then(|value| value.as_str())
            == Some(lookup::MANAGED_BY)
    })
}

/// Fills the seven caches from `dir`, measuring each: the report, the filled caches (to be
/// dropped only once the report is taken), and what to say on stderr.
fn measure(dir: &Path) -> io::Result<(Report, Caches, Notes)> {
    // Every store is made before any measurement (what a store holds empty is left out).
    let mut caches = Caches {
        gatewayclasses: Cache::new(),
        gatewayconfigurations: Cache::new(),
        l34routes: Cache::new(),
        lb_deployments: Cache::new(),
        deployment_metadata: Cache::new(),
        namespace_metadata: Cache::new(),
        gateways: Cache::new(),
    };
    let mut notes = Notes::default();
    let held = vec![
        fill(
            &mut caches.gatewayclasses,
            dir,
            "gatewayclasses",
            all,
            &mut notes,
        )?,
        fill(
            &mut caches.gatewayconfigurations,
            dir,
            "gatewayconfigurations",
            all,
            &mut notes,
        )?,
        fill(&mut caches.l34routes, dir, "l34routes", all, &mut notes)?,
        fill(
            &mut caches.lb_deployments,
            dir,
            "lb-deployments",
            lb_labeled,
            &mut notes,
        )?,
        fill(
            &mut caches.deployment_metadata,
            dir,
            "deployment-metadata",
            all,
            &mut notes,
        )?,
        fill(
            &mut caches.namespace_metadata,
            dir,
            "namespace-metadata",
            all,
            &mut notes,
        )?,
        fill(&mut caches.gateways, dir, "gateways", all, &mut notes)?,
    ];
    // Each object in its store, under its own key (a LIST never has two of one name).
    for (held, stored) in held.iter().zip(caches.lens()) {
        if held.objects != stored as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {} objects, {stored} of them stored: two of one name",
                    held.name, held.objects
                ),
            ));
        }
    }
    Ok((Report::new(held), caches, notes))
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: held_bytes DIR (DIR/<watch>.json: the LIST of each watch)");
        return ExitCode::from(2);
    };
    match measure(Path::new(&dir)) {
        Ok((report, caches, notes)) => {
            for note in &notes.0 {
                eprintln!("held_bytes: {note}");
            }
            match serde_json::to_string(&report) {
                Ok(json) => println!("{json}"),
                Err(error) => {
                    eprintln!("held_bytes: {error}");
                    return ExitCode::FAILURE;
                }
            }
            drop(caches);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("held_bytes: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    //! One test: the global allocator counts every thread's allocations, so the measurements
    //! must not run beside another test.

    use super::*;
    use gateway_reconcile::sim::defaulting::apply_server_defaults;
    use gateway_reconcile::{DeploymentWrite, Plan, Settings, Snapshot, plan, template, wire};
    use serde_json::{Value, json};

    const NAMESPACE: &str = "scale-0";
    const CLASS: &str = "scale";

    fn now() -> gateway_reconcile::jiff::Timestamp {
        "2026-12-05T10:00:00Z".parse().expect("a time")
    }

    /// The `fieldsV1` of a manager that set every field of `value`.
    fn fields_v1(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut fields: serde_json::Map<String, Value> = map
                    .iter()
                    .map(|(key, value)| (format!("f:{key}"), fields_v1(value)))
                    .collect();
                fields.insert(".".into(), json!({}));
                Value::Object(fields)
            }
            Value::Array(items) => Value::Object(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let key = match item.get("name").or_else(|| item.get("type")) {
                            Some(name) => format!("k:{{\"name\":{name}}}"),
                            None => format!("i:{i}"),
                        };
                        (key, fields_v1(item))
                    })
                    .collect(),
            ),
            _ => json!({}),
        }
    }

    /// `object` with the `managedFields` the API server sends: one manager for the
    /// metadata and spec, one for the status subresource.
    fn with_managed_fields(mut object: Value) -> Value {
        let api_version = object["apiVersion"].clone();
        let mut set = json!({"metadata": {}, "spec": object["spec"].clone()});
        for key in ["labels", "annotations", "ownerReferences"] {
            if let Some(value) = object["metadata"].get(key) {
                set["metadata"][key] = value.clone();
            }
        }
        let mut managed = vec![json!({
            "manager": "gateway-reconcile-controller", "operation": "Update",
            "apiVersion": api_version, "time": "2026-12-05T10:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&set)
        })];
        if let Some(status) = object.get("status") {
            managed.push(json!({
                "manager": "kube-controller-manager", "operation": "Update",
                "apiVersion": api_version, "time": "2026-12-05T10:00:01Z",
                "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&json!({"status": status})),
                "subresource": "status"
            }));
        }
        object["metadata"]["managedFields"] = Value::Array(managed);
        object
    }

    fn metadata(name: &str, i: usize) -> Value {
        json!({
            "name": name, "namespace": NAMESPACE,
            "uid": format!("6f1c1a4e-0b7d-4c55-9a52-{i:012}"),
            "resourceVersion": format!("{}", 41_000 + i), "generation": 1,
            "creationTimestamp": "2026-12-05T10:00:00Z"
        })
    }

    /// Gateway `i` with the status the controller settles.
    fn gateway(i: usize) -> Value {
        let condition = |kind: &str, reason: &str| {
            json!({"type": kind, "status": "True", "reason": reason,
                   "message": format!("{kind}: the LB Deployment is ready"),
                   "observedGeneration": 1, "lastTransitionTime": "2026-12-05T10:00:05Z"})
        };
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": metadata(&format!("gw-{i:05}"), i),
            "spec": {
                "gatewayClassName": CLASS,
                "listeners": [
                    {"name": "tcp", "port": 4000, "protocol": "TCP",
                     "allowedRoutes": {"namespaces": {"from": "Same"}}},
                    {"name": "udp", "port": 5000, "protocol": "UDP",
                     "allowedRoutes": {"namespaces": {"from": "Same"}}}
                ],
                "infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
                    "name": "shared"}}
            },
            "status": {
                "conditions": [condition("Accepted", "Accepted"),
                               condition("Programmed", "Programmed"),
                               condition("meridio-2.nordix.org/ConfigurationApplied",
                                         "Applied")],
                "listeners": [
                    {"name": "tcp", "attachedRoutes": 1,
                     "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
                     "conditions": [condition("Accepted", "Accepted")]},
                    {"name": "udp", "attachedRoutes": 0,
                     "supportedKinds": [{"group": "meridio-2.nordix.org", "kind": "L34Route"}],
                     "conditions": [condition("Accepted", "Accepted")]}
                ]
            }
        })
    }

    /// The LB Deployment of Gateway `i`, as the core renders it and the server returns it.
    fn lb_deployment(i: usize) -> Value {
        let class: wire::GatewayClass = serde_json::from_value(json!({
            "metadata": {"name": CLASS},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
        }))
        .expect("a class");
        let configuration: wire::GatewayConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "shared", "namespace": NAMESPACE, "generation": 1},
            "spec": {
                "networkAttachments": [
                    {"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}},
                    {"type": "NAD", "nad": {"name": "vlan-200", "interface": "net2"}}
                ],
                "internalSubnets": [
                    {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                    {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
                ],
                "horizontalScaling": {"replicas": 2}
            }
        }))
        .expect("a GatewayConfiguration");
        let gateway: wire::Gateway = serde_json::from_value(gateway(i)).expect("a Gateway");
        let template = template::default_template();
        let snapshot = Snapshot::new(&gateway, &template)
            .with_gateway_class(Some(&class))
            .with_configuration(Some(&configuration));
        let settings = Settings::default();
        let Plan::Write(pending) = plan(&settings, snapshot, now()).expect("a plan") else {
            panic!("a create is planned")
        };
        let DeploymentWrite::Create(mut deployment) = pending.write().clone() else {
            panic!("a create is planned")
        };
        apply_server_defaults(&mut deployment);
        let mut object = serde_json::to_value(&deployment).expect("JSON");
        let name = object["metadata"]["name"].clone();
        let mut meta = metadata(name.as_str().expect("a name"), 1000 + i);
        for key in ["labels", "annotations", "ownerReferences"] {
            if let Some(value) = object["metadata"].get(key) {
                meta[key] = value.clone();
            }
        }
        object["metadata"] = meta;
        object["status"] = json!({
            "observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
            "readyReplicas": 2, "availableReplicas": 2,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability.",
                 "lastUpdateTime": "2026-12-05T10:00:04Z",
                 "lastTransitionTime": "2026-12-05T10:00:04Z"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                 "message": "ReplicaSet has successfully progressed.",
                 "lastUpdateTime": "2026-12-05T10:00:04Z",
                 "lastTransitionTime": "2026-12-05T10:00:01Z"}
            ]
        });
        object
    }

    /// A Deployment's metadata, as a metadata-only LIST returns it.
    fn partial(object: &Value) -> Value {
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
               "metadata": object["metadata"].clone()})
    }

    fn namespace() -> Value {
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
               "metadata": {"name": NAMESPACE, "uid": "0b0e", "resourceVersion": "12",
                            "labels": {"kubernetes.io/metadata.name": NAMESPACE},
                            "creationTimestamp": "2026-12-05T09:59:00Z"}})
    }

    fn class() -> Value {
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
            "metadata": {"name": CLASS, "uid": "c1a5", "resourceVersion": "40999",
                         "generation": 1},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"},
            "status": {"conditions": [{"type": "Accepted", "status": "True",
                "reason": "Accepted", "message": "", "observedGeneration": 1,
                "lastTransitionTime": "2026-12-05T10:00:00Z"}]}
        })
    }

    /// A test directory: `gatewayconfigurations` missing, `l34routes` an empty list, and
    /// `gateways` Gateways (each with its LB Deployment, two of them in the LB cache).
    fn write_dir(dir: &Path, gateways: usize, managed_fields: bool) {
        write_dir_with(dir, gateways, managed_fields, true);
    }

    /// [`write_dir`], the LB Deployments with their status or without.
    fn write_dir_with(dir: &Path, gateways: usize, managed_fields: bool, status: bool) {
        let managed = |mut object: Value| {
            if !status && let Some(object) = object.as_object_mut() {
                object.remove("status");
            }
            if managed_fields {
                with_managed_fields(object)
            } else {
                object
            }
        };
        let deployments: Vec<Value> = (0..gateways * 2 / 3)
            .map(|i| managed(lb_deployment(i)))
            .collect();
        // One foreign Deployment: in the metadata cache only.
        let mut foreign = managed(lb_deployment(9999));
        foreign["metadata"]["name"] = json!("foreign");
        let lists = [
            ("gatewayclasses", "GatewayClassList", vec![managed(class())]),
            ("l34routes", "L34RouteList", vec![]),
            ("lb-deployments", "DeploymentList", deployments.clone()),
            (
                "deployment-metadata",
                "PartialObjectMetadataList",
                deployments.iter().chain([&foreign]).map(partial).collect(),
            ),
            (
                "namespace-metadata",
                "PartialObjectMetadataList",
                vec![managed(namespace())],
            ),
            (
                "gateways",
                "GatewayList",
                (0..gateways).map(|i| managed(gateway(i))).collect(),
            ),
        ];
        std::fs::create_dir_all(dir).expect("a test directory");
        for (name, kind, items) in lists {
            let list = json!({"apiVersion": "v1", "kind": kind,
                              "metadata": {"resourceVersion": "50000"}, "items": items});
            std::fs::write(dir.join(format!("{name}.json")), list.to_string()).expect("written");
        }
    }

    fn run(dir: &Path) -> Report {
        let (report, caches, _) = measure(dir).expect("measured");
        drop(caches);
        report
    }

    fn cache<'a>(report: &'a Report, name: &str) -> &'a Held {
        report
            .caches
            .iter()
            .find(|held| held.name == name)
            .unwrap_or_else(|| panic!("no cache {name}"))
    }

    fn ratio(a: i64, b: i64) -> f64 {
        a as f64 / b as f64
    }

    #[test]
    fn the_caches_hold_their_objects_without_managed_fields() {
        let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
        let root = std::env::temp_dir().join(format!("held-bytes-test-{}", std::process::id()));
        let (base, twice, bare) = (root.join("base"), root.join("twice"), root.join("bare"));
        write_dir(&base, 3, true);
        write_dir(&twice, 6, true);
        write_dir(&bare, 3, false);
        let (base_report, twice_report, bare_report) = (run(&base), run(&twice), run(&bare));
        let routes_file = std::fs::metadata(base.join("l34routes.json")).map(|m| m.len());
        std::fs::remove_dir_all(&root).expect("removed");

        // Objects counted; held bytes for each non-empty cache and none for an empty one.
        let counts: Vec<(&str, u64)> = base_report
            .caches
            .iter()
            .map(|h| (h.name, h.objects))
            .collect();
        assert_eq!(
            counts,
            [
                ("gatewayclasses", 1),
                ("gatewayconfigurations", 0),
                ("l34routes", 0),
                ("lb-deployments", 2),
                ("deployment-metadata", 3),
                ("namespace-metadata", 1),
                ("gateways", 3)
            ]
        );
        for held in &base_report.caches {
            if held.objects > 0 {
                assert!(held.held_bytes > 0, "{held:?}");
                assert!(held.json_bytes > 0, "{held:?}");
            } else {
                assert_eq!(held.held_bytes, 0, "an empty cache holds nothing: {held:?}");
            }
        }
        assert_eq!(cache(&base_report, "gatewayconfigurations").json_bytes, 0);
        assert_eq!(
            Ok(cache(&base_report, "l34routes").json_bytes),
            routes_file.map_err(|e| e.kind())
        );
        assert_eq!(base_report.objects, 10);
        assert_eq!(
            base_report.held_bytes,
            base_report.caches.iter().map(|h| h.held_bytes).sum::<i64>()
        );
        let printed: Value = serde_json::to_value(&base_report).expect("JSON");
        assert_eq!(printed["caches"][6]["name"], "gateways");
        assert_eq!(printed["caches"][6]["objects"], 3);
        assert_eq!(printed["objects"], 10);

        // Twice the objects, about twice the bytes.
        for name in ["gateways", "lb-deployments"] {
            let (one, two) = (cache(&base_report, name), cache(&twice_report, name));
            assert_eq!(two.objects, 2 * one.objects, "{one:?} {two:?}");
            let r = ratio(two.held_bytes, one.held_bytes);
            assert!((1.5..=2.5).contains(&r), "{name}: {r} ({one:?}, {two:?})");
        }

        // managedFields are sent (most of each object's JSON) but not held.
        for name in ["gateways", "lb-deployments", "deployment-metadata"] {
            let (with, without) = (cache(&base_report, name), cache(&bare_report, name));
            assert!(
                with.json_bytes as f64 > 1.5 * without.json_bytes as f64,
                "{name}: big managedFields ({with:?}, {without:?})"
            );
            let r = ratio(with.held_bytes, without.held_bytes);
            assert!(
                (0.98..=1.02).contains(&r),
                "{name}: managedFields held ({with:?}, {without:?})"
            );
        }
        // A Namespace's are smaller, and not held either.
        let (with, without) = (
            cache(&base_report, "namespace-metadata"),
            cache(&bare_report, "namespace-metadata"),
        );
        assert!(with.json_bytes > without.json_bytes, "{with:?} {without:?}");
        let r = ratio(with.held_bytes, without.held_bytes);
        assert!(
            (0.98..=1.02).contains(&r),
            "namespace-metadata: managedFields held ({with:?}, {without:?})"
        );
    }

    /// The allocator counts every thread's allocations: one measuring test at a time.
    static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A Gateway holds of its metadata what the core's type names: its `creationTimestamp`
    /// costs nothing held (it cost a `serde_json` map node, about 600 bytes, before).
    #[test]
    fn a_gateway_is_held_without_the_metadata_nothing_reads() {
        let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
        let root = std::env::temp_dir().join(format!("held-meta-test-{}", std::process::id()));
        let (with, without) = (root.join("with"), root.join("without"));
        write_dir(&with, 30, false);
        write_dir(&without, 30, false);
        let path = without.join("gateways.json");
        let mut list: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
        for item in list["items"].as_array_mut().expect("items") {
            item["metadata"]
                .as_object_mut()
                .expect("metadata")
                .remove("creationTimestamp");
        }
        std::fs::write(&path, list.to_string()).expect("written");
        let (with, without) = (run(&with), run(&without));
        std::fs::remove_dir_all(&root).expect("removed");
        let (a, b) = (cache(&with, "gateways"), cache(&without, "gateways"));
        assert_eq!((a.objects, b.objects), (30, 30));
        assert!(a.json_bytes > b.json_bytes + 30 * 30, "{a:?} {b:?}");
        assert_eq!(a.held_bytes, b.held_bytes, "{a:?} {b:?}");
    }

    /// Of an LB Deployment's status, the cache holds what the rollout rule reads: four
    /// counts, not the two conditions a running Deployment carries (500 bytes of JSON).
    #[test]
    fn an_lb_deployment_is_held_with_its_read_status_alone() {
        let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
        let root = std::env::temp_dir().join(format!("held-status-test-{}", std::process::id()));
        let (with, without) = (root.join("with"), root.join("without"));
        write_dir_with(&with, 30, false, true);
        write_dir_with(&without, 30, false, false);
        let (with, without) = (run(&with), run(&without));
        std::fs::remove_dir_all(&root).expect("removed");
        let (a, b) = (
            cache(&with, "lb-deployments"),
            cache(&without, "lb-deployments"),
        );
        assert_eq!((a.objects, b.objects), (20, 20));
        assert!(a.json_bytes > b.json_bytes + 20 * 500, "{a:?} {b:?}");
        let per_object = (a.held_bytes - b.held_bytes) / 20;
        assert!(
            (100..=300).contains(&per_object),
            "{per_object}: {a:?} {b:?}"
        );
    }
}
