//! The scenario runner's backend on a real API server (SPEC §7 steps, real verbs).
//!
//! Each scenario gets fresh namespaces (one per namespace the file names) and its
//! GatewayClasses a per-scenario suffix: the server assigns what a scenario cannot choose,
//! so the backend translates between the file's names and the server's. The core sees the
//! file's names and uids (namespace, class name, the Gateway's uid, the uid a file gives
//! another object such as its GatewayConfiguration), so that the expectations stay
//! comparable; the server stores its own.
//!
//! The reconcile runs as the controller's user (`E2E_CONTROLLER_KUBECONFIG`): the core's
//! `Driver` at the scenario clock over the kube crate's `FreshPort` (real GETs, the
//! shipped write verbs and status patch), which a `ReplayPort` wraps to translate names
//! and make the faults admission cannot. Everything else (objects, patches, rollouts,
//! admission) is the admin's.
//!
//! Here: the backend's world on the server and the scenario steps it takes
//! ([`Real`], its `Backend` impl); beside it, the translation between the file's names and
//! the server's (`names`), the faults made through admission objects (`admission`) and the
//! reconcile through the kube crate's port (`port`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gateway_reconcile::reconcile::Driver;
use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, ReconcileReport, RolloutState};
use gateway_reconcile::sim::scenario::{Backend, StepError, WriteCounts};
use gateway_reconcile::{Settings, WriteOutcome, WriteRecord, wire};
use jiff::Timestamp;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

mod admission;
mod names;
mod port;

use admission::Pending;
pub use admission::{part_matches, remove_admission_objects};

/// The controller's user name, as the audit log shows it.
pub const CONTROLLER_USER: &str = "gateway-reconcile-controller";
/// A label or annotation key the backend uses for its own bookkeeping.
const MARKER: &str = "replay.e2e.example/marker";
/// The label the API server gives every namespace, its own name as value.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

type Step<T> = Result<T, StepError<String>>;

fn failed<T>(what: impl std::fmt::Display) -> Step<T> {
    Err(StepError::Failed(what.to_string()))
}

/// A scenario's world on the real server.
pub struct Real {
    rt: Arc<tokio::runtime::Runtime>,
    admin: Client,
    controller: Client,
    settings: Settings,
    template: Value,
    /// The file's namespace → the server's.
    namespaces: BTreeMap<String, String>,
    /// Appended to cluster-scoped names (GatewayClasses, admission objects).
    suffix: String,
    gateway_namespace: String,
    gateway_name: String,
    gateway_uid: String,
    class_name: String,
    configuration_name: Option<String>,
    pending: Option<Pending>,
    counts: WriteCounts,
    /// The file's routes as written (the runner's are read into the core's type, which
    /// keeps only what the core reads).
    routes: Option<Vec<Value>>,
    /// Condition messages the scenario expects exactly, each with the number of
    /// `failWrites` steps before it.
    exact_messages: Vec<(u32, String)>,
    /// Condition `messageContains` parts the scenario expects, each with the number of
    /// `failWrites` steps before it.
    message_parts: Vec<(u32, String)>,
    /// The `failWrites` steps so far.
    fail_steps: u32,
    /// The webhook serving the pending failures, if they are a webhook's.
    webhook: Option<crate::common::webhook::Webhook>,
    /// The server's uid → the file's, for objects other than the Gateway whose file gives a
    /// uid (a GatewayConfiguration's uid goes into the Deployment's annotation).
    uids: BTreeMap<String, String>,
    /// Set when the runner gave up on the scenario: every later operation fails at once.
    cancelled: Arc<AtomicBool>,
    /// The controller's loop and its memory: the write record of its last successful
    /// Deployment write (`restart` makes a new one).
    driver: Driver,
    /// The mutating webhook of `mutateWrites`, while one is in effect.
    mutation: Option<crate::common::webhook::Webhook>,
}

fn ar(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn resource_of(kind: Kind) -> ApiResource {
    match kind {
        Kind::GatewayClass => ar(
            "gateway.networking.k8s.io/v1",
            "GatewayClass",
            "gatewayclasses",
        ),
        Kind::Gateway => ar("gateway.networking.k8s.io/v1", "Gateway", "gateways"),
        Kind::Configuration => ar(
            "meridio-2.nordix.org/v1alpha1",
            "GatewayConfiguration",
            "gatewayconfigurations",
        ),
        Kind::Routes => ar("meridio-2.nordix.org/v1alpha1", "L34Route", "l34routes"),
        Kind::Deployment | Kind::Template => ar("apps/v1", "Deployment", "deployments"),
    }
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// An API error's text, as a skip or failure reason gives it.
fn api_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        other => other.to_string(),
    }
}

/// The object as a create request takes it: no server-set metadata, no status.
fn for_create(mut object: Value) -> (Value, Option<Value>) {
    let status = object.as_object_mut().and_then(|o| o.remove("status"));
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "deletionTimestamp",
        ] {
            meta.remove(key);
        }
    }
    (object, status)
}

fn dynamic(value: Value) -> Step<DynamicObject> {
    serde_json::from_value(value).or_else(|e| failed(format!("object: {e}")))
}

fn to_json(object: &DynamicObject) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    value
}

impl Real {
    /// A backend for one scenario; `admin` and `controller` are the two users' clients.
    pub fn new(rt: Arc<tokio::runtime::Runtime>, admin: Client, controller: Client) -> Real {
        Real {
            rt,
            admin,
            controller,
            settings: Settings::default(),
            template: Value::Null,
            namespaces: BTreeMap::new(),
            suffix: String::new(),
            gateway_namespace: String::new(),
            gateway_name: String::new(),
            gateway_uid: String::new(),
            class_name: String::new(),
            configuration_name: None,
            pending: None,
            counts: WriteCounts::default(),
            routes: None,
            exact_messages: Vec::new(),
            message_parts: Vec::new(),
            fail_steps: 0,
            webhook: None,
            uids: BTreeMap::new(),
            cancelled: Arc::new(AtomicBool::new(false)),
            driver: Driver::default(),
            mutation: None,
        }
    }

    /// The flag that cancels this backend: once set, every operation fails at once (the
    /// runner sets it when the scenario ran out of time).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancelled.clone()
    }

    fn check_cancelled(&self) -> Step<()> {
        if self.cancelled.load(Ordering::Relaxed) {
            return failed("cancelled: the scenario ran out of time");
        }
        Ok(())
    }

    /// The file's `objects.routes` as written, created instead of the runner's copies.
    pub fn with_routes(mut self, routes: Vec<Value>) -> Real {
        self.routes = Some(routes);
        self
    }

    /// The condition messages the scenario's expectations name exactly, each with the
    /// number of `failWrites` steps before it: a write failure whose message is in one
    /// expected after it, and whose message on the real server differs (admission prefixes
    /// it), cannot be reproduced.
    pub fn with_exact_messages(mut self, messages: Vec<(u32, String)>) -> Real {
        self.exact_messages = messages;
        self
    }

    /// The condition `messageContains` parts the scenario's expectations give, each with
    /// the number of `failWrites` steps before it: a part that holds a write failure's
    /// message with text around it, expected after it, cannot match the real server's
    /// message when admission prefixes the failure's text.
    pub fn with_message_parts(mut self, parts: Vec<(u32, String)>) -> Real {
        self.message_parts = parts;
        self
    }

    /// The server's namespace of the Gateway.
    pub fn namespace(&self) -> Option<&str> {
        self.namespaces
            .get(&self.gateway_namespace)
            .map(String::as_str)
    }

    fn api(&self, client: &Client, kind: Kind, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = resource_of(kind);
        match (kind, namespace) {
            (Kind::GatewayClass, _) | (_, None) => Api::all_with(client.clone(), &ar),
            (_, Some(ns)) => Api::namespaced_with(client.clone(), ns, &ar),
        }
    }

    /// GET one object from the server (as the file names it), with `client`.
    async fn get(&self, client: &Client, kind: Kind) -> Step<Option<Value>> {
        let name = self.name_of(kind)?;
        if name.is_empty() {
            return Ok(None);
        }
        let name = if kind == Kind::GatewayClass {
            self.class_on_server(&name)
        } else {
            name
        };
        let api = self.api(client, kind, self.namespace());
        match api.get_opt(&name).await {
            Ok(found) => Ok(found.map(|o| self.file_form(kind, to_json(&o)))),
            Err(e) => failed(format!("GET {kind}: {}", api_text(&e))),
        }
    }

    /// Creates `object`, with its `metadata.generation` reached by spec changes (the server
    /// starts every object at 1), then its status.
    async fn create_object(&mut self, kind: Kind, object: Value) -> Step<()> {
        let generation = object
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1)
            .max(1);
        let file_uid = str_at(&object, "/metadata/uid").map(str::to_owned);
        let mut object = self.server_form(kind, object).await?;
        let resource = resource_of(kind);
        for (key, value) in [
            ("apiVersion", resource.api_version),
            ("kind", resource.kind),
        ] {
            if object.get(key).is_none() {
                object[key] = json!(value);
            }
        }
        if str_at(&object, "/metadata/name").is_none()
            && let Ok(name) = self.name_of(kind)
        {
            object["metadata"]["name"] = json!(name);
        }
        let (object, status) = for_create(object);
        let api = self.api(&self.admin, kind, str_at(&object, "/metadata/namespace"));
        let bumps = generation_bumps(generation).map_err(StepError::Skip)?;
        let first = if bumps > 0 {
            marked(kind, &object, 0)
        } else {
            object.clone()
        };
        let mut stored = match api.create(&PostParams::default(), &dynamic(first)?).await {
            Ok(o) => o,
            Err(e) => {
                return Err(StepError::Skip(format!(
                    "the real server refuses the scenario's {kind}: {}",
                    api_text(&e)
                )));
            }
        };
        let name = stored.name_any();
        if let (Some(file), Some(server), false) = (file_uid, stored.uid(), kind == Kind::Gateway) {
            self.uids.insert(server, file);
        }
        for i in 1..=bumps {
            let mut next = if i == bumps {
                object.clone()
            } else {
                marked(kind, &object, i)
            };
            next["metadata"]["resourceVersion"] = json!(stored.resource_version());
            stored = api
                .replace(&name, &PostParams::default(), &dynamic(next)?)
                .await
                .map_err(|e| {
                    StepError::Skip(format!(
                        "cannot reach {kind} generation {generation}: {}",
                        api_text(&e)
                    ))
                })?;
        }
        if let Some(status) = status {
            api.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .map_err(|e| {
                StepError::Skip(format!(
                    "the real server refuses the scenario's {kind} status: {}",
                    api_text(&e)
                ))
            })?;
        }
        Ok(())
    }
}

/// The most spec updates a file's `metadata.generation` may take to reach (each one is a
/// request; a few hundred take seconds).
pub const MAX_GENERATION_BUMPS: i64 = 200;

/// How many spec updates reach `generation` from the 1 the server starts every object at;
/// why not, when that is more than [`MAX_GENERATION_BUMPS`].
pub fn generation_bumps(generation: i64) -> Result<u32, String> {
    let bumps = generation.max(1) - 1;
    match u32::try_from(bumps) {
        Ok(n) if bumps <= MAX_GENERATION_BUMPS => Ok(n),
        _ => Err(format!(
            "metadata.generation {generation} cannot be reached: the real server starts every object at generation 1 and raises it by one per spec update, and {bumps} updates are more than the {MAX_GENERATION_BUMPS} the replay makes"
        )),
    }
}

/// `object` with a spec change numbered `i`, for a generation bump.
fn marked(kind: Kind, object: &Value, i: u32) -> Value {
    let mut object = object.clone();
    let mark = json!(format!("m{i}"));
    match kind {
        Kind::Gateway => {
            object["spec"]["infrastructure"]["labels"][MARKER] = mark;
        }
        Kind::Configuration => {
            let replicas = object
                .pointer("/spec/horizontalScaling/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            object["spec"]["horizontalScaling"]["replicas"] =
                json!(replicas + 1 + i64::from(i % 2));
        }
        Kind::GatewayClass => object["spec"]["description"] = mark,
        // A Deployment's generation also goes up on an annotation change.
        _ => object["metadata"]["annotations"][MARKER] = mark,
    }
    object
}

impl Real {
    async fn create_all(&mut self, settings: &Settings, objects: Objects) -> Step<()> {
        self.settings = settings.clone();
        self.driver = Driver::new(settings.clone());
        self.template = objects
            .template
            .unwrap_or_else(gateway_reconcile::template::default_template)
            .into_json();
        // As JSON: the real API server is written JSON.
        let gateway = Value::from(objects.gateway);
        let (gateway_class, configuration) = (
            objects.gateway_class.map(Value::from),
            objects.configuration.map(Value::from),
        );
        self.gateway_namespace = str_at(&gateway, "/metadata/namespace")
            .unwrap_or_default()
            .into();
        self.gateway_name = str_at(&gateway, "/metadata/name")
            .unwrap_or_default()
            .into();
        self.gateway_uid = str_at(&gateway, "/metadata/uid").unwrap_or_default().into();
        self.class_name = str_at(&gateway, "/spec/gatewayClassName")
            .unwrap_or_default()
            .into();
        self.configuration_name = configuration
            .as_ref()
            .and_then(|c| str_at(c, "/metadata/name"))
            .or_else(|| str_at(&gateway, "/spec/infrastructure/parametersRef/name"))
            .map(str::to_owned);
        self.real_namespace(&self.gateway_namespace.clone()).await?;
        // The file's namespaces with their labels (a listener's selector matches them).
        for (ns, labels) in &objects.namespaces {
            let real = self.real_namespace(ns).await?;
            let api: Api<DynamicObject> =
                Api::all_with(self.admin.clone(), &ar("v1", "Namespace", "namespaces"));
            let labels: serde_json::Map<String, Value> = labels
                .iter()
                .filter(|(key, _)| key.as_str() != NAME_LABEL)
                .map(|(key, value)| (key.clone(), json!(value)))
                .collect();
            api.patch(
                &real,
                &PatchParams::default(),
                &Patch::Merge(json!({ "metadata": { "labels": labels } })),
            )
            .await
            .or_else(|e| failed(format!("namespace labels: {}", api_text(&e))))?;
        }
        if let Some(class) = gateway_class.filter(|v| !v.is_null()) {
            if str_at(&class, "/metadata/name") != Some(self.class_name.as_str()) {
                return Err(StepError::Skip(
                    "the GatewayClass is not the Gateway's: the backend names only the Gateway's class".into(),
                ));
            }
            self.create_object(Kind::GatewayClass, class).await?;
        }
        if let Some(conf) = configuration.filter(|v| !v.is_null()) {
            self.create_object(Kind::Configuration, conf).await?;
        }
        self.create_object(Kind::Gateway, gateway).await?;
        if let Some(deployment) = objects.deployment.map(wire::Deployment::into_json) {
            if str_at(&deployment, "/metadata/name")
                != Some(self.name_of(Kind::Deployment)?.as_str())
            {
                return Err(StepError::Skip(
                    "the Deployment does not have the LB Deployment's name".into(),
                ));
            }
            self.create_object(Kind::Deployment, deployment).await?;
        }
        let routes = match self.routes.take() {
            Some(raw) => raw,
            None => objects
                .routes
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()
                .or_else(failed)?,
        };
        for route in routes {
            self.create_object(Kind::Routes, route).await?;
        }
        Ok(())
    }

    async fn patch_one(&mut self, kind: Kind, patch: &Value) -> Step<()> {
        match kind {
            Kind::Template => {
                merge(&mut self.template, patch);
                return Ok(());
            }
            Kind::Routes => {
                // A merge patch on a list replaces it.
                self.delete_one(Kind::Routes).await?;
                for route in patch.as_array().cloned().unwrap_or_default() {
                    self.create_object(Kind::Routes, route).await?;
                }
                return Ok(());
            }
            _ => {}
        }
        let admin = self.admin.clone();
        let Some(current) = self.get(&admin, kind).await? else {
            let mut object = json!({});
            merge(&mut object, patch);
            if kind == Kind::Configuration
                && let Some(name) = str_at(&object, "/metadata/name")
            {
                self.configuration_name = Some(name.to_owned());
            }
            return self.create_object(kind, object).await;
        };
        let name = self.name_of(kind)?;
        let real_name = if kind == Kind::GatewayClass {
            self.class_on_server(&name)
        } else {
            name
        };
        let mut after = current;
        merge(&mut after, patch);
        let after = self.server_form(kind, after).await?;
        let mut body = patch.clone();
        let status = body.as_object_mut().and_then(|o| o.remove("status"));
        // The translated names (namespace, class) stay the server's.
        if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("namespace");
            meta.remove("uid");
            if kind == Kind::GatewayClass {
                meta.remove("name");
            }
        }
        if kind == Kind::Gateway && body.pointer("/spec/gatewayClassName").is_some() {
            body["spec"]["gatewayClassName"] = after["spec"]["gatewayClassName"].clone();
            self.class_name = str_at(patch, "/spec/gatewayClassName")
                .unwrap_or_default()
                .to_owned();
        }
        let api = self.api(&admin, kind, self.namespace());
        if body.as_object().is_some_and(|o| !o.is_empty()) {
            api.patch(&real_name, &PatchParams::default(), &Patch::Merge(&body))
                .await
                .map_err(|e| {
                    StepError::Skip(format!(
                        "the real server refuses the patch of the {kind}: {}",
                        api_text(&e)
                    ))
                })?;
        }
        if let Some(status) = status {
            api.patch_status(
                &real_name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .map_err(|e| {
                StepError::Skip(format!(
                    "the real server refuses the patch of the {kind} status: {}",
                    api_text(&e)
                ))
            })?;
        }
        Ok(())
    }

    async fn delete_one(&mut self, kind: Kind) -> Step<()> {
        let admin = self.admin.clone();
        let real_ns = self.namespace().unwrap_or_default().to_owned();
        match kind {
            Kind::Template => return failed("cannot delete the template"),
            Kind::Routes => {
                // The routes of every namespace of the scenario (a file may put routes in
                // several).
                let namespaces: Vec<String> = self.namespaces.values().cloned().collect();
                for real in namespaces {
                    let api = self.api(&admin, Kind::Routes, Some(&real));
                    api.delete_collection(&DeleteParams::default(), &Default::default())
                        .await
                        .or_else(|e| failed(api_text(&e)))?;
                }
                return Ok(());
            }
            Kind::Gateway => {
                // Held by a finalizer, as a controller's would hold it.
                let api = self.api(&admin, kind, Some(&real_ns));
                api.patch(
                    &self.gateway_name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({ "metadata": { "finalizers": [MARKER] } })),
                )
                .await
                .or_else(|e| failed(api_text(&e)))?;
            }
            _ => {}
        }
        let name = self.name_of(kind)?;
        let real_name = if kind == Kind::GatewayClass {
            self.class_on_server(&name)
        } else {
            name
        };
        let api = self.api(&admin, kind, Some(&real_ns));
        match api.delete(&real_name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(e) => failed(format!("delete {kind}: {}", api_text(&e))),
        }
    }

    async fn rollout_at(&mut self, state: RolloutState, now: Timestamp) -> Step<()> {
        let admin = self.admin.clone();
        let Some(deployment) = self.get(&admin, Kind::Deployment).await? else {
            return failed("cannot roll out: there is no deployment");
        };
        let gateway = self
            .get(&admin, Kind::Gateway)
            .await?
            .unwrap_or(Value::Null);
        // The simulator's crude Deployment controller computes the status; the server
        // stores it through the status subresource.
        let mut cluster = Cluster::new(
            self.settings.clone(),
            now,
            Objects {
                gateway: gateway.into(),
                deployment: Some(serde_json::from_value(deployment).or_else(failed)?),
                ..Objects::default()
            },
        )
        .or_else(failed)?;
        cluster.rollout(state).or_else(failed)?;
        let status = cluster
            .deployment()
            .and_then(|d| d.get(&["status"]))
            .map(Value::from)
            .unwrap_or(Value::Null);
        let api = self.api(&admin, Kind::Deployment, self.namespace());
        api.patch_status(
            &self.name_of(Kind::Deployment)?,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .or_else(|e| failed(format!("rollout: {}", api_text(&e))))?;
        Ok(())
    }

    /// The controller's memory: the write record of its last successful Deployment write.
    pub fn write_record(&self) -> Option<WriteRecord> {
        let namespace = self
            .namespaces
            .iter()
            .find(|(_, real)| Some(real.as_str()) == self.namespace())
            .map(|(file, _)| file.as_str())
            .unwrap_or_default();
        self.driver.write_record(namespace, &self.gateway_name)
    }

    /// The L34Routes of every namespace of the scenario, as the file names them.
    async fn list_routes(&self, client: &Client) -> Step<Vec<Value>> {
        let mut routes = Vec::new();
        for real in self.namespaces.values() {
            let api = self.api(client, Kind::Routes, Some(real));
            let list = api
                .list(&Default::default())
                .await
                .or_else(|e| failed(api_text(&e)))?;
            routes.extend(
                list.iter()
                    .map(|route| self.file_form(Kind::Routes, to_json(route))),
            );
        }
        Ok(routes)
    }
}

fn merge(target: &mut Value, patch: &Value) {
    gateway_reconcile::sim::merge_patch::apply(target, patch);
}

impl Backend for Real {
    type Error = String;

    fn create(&mut self, settings: &Settings, objects: Objects, _now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.create_all(settings, objects))
    }

    fn reconcile(&mut self, now: Timestamp) -> Step<ReconcileReport> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.reconcile_at(now))
    }

    fn patch(&mut self, kind: Kind, patch: &Value, _now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.patch_one(kind, patch))
    }

    fn delete(&mut self, kind: Kind, _now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.delete_one(kind))
    }

    fn rollout(&mut self, state: RolloutState, now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.rollout_at(state, now))
    }

    fn fail_writes(&mut self, count: u32, outcome: &WriteOutcome) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.fail(count, outcome))
    }

    fn mutate_writes(&mut self, patch: Option<&Value>, _now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        let rt = self.rt.clone();
        rt.block_on(self.mutate(patch))
    }

    /// A new controller client with no records: the write records are forgotten.
    fn restart(&mut self, _now: Timestamp) -> Step<()> {
        self.check_cancelled()?;
        self.driver = Driver::new(self.settings.clone());
        Ok(())
    }

    fn read(&self, kind: Kind) -> Step<Option<Value>> {
        self.check_cancelled()?;
        match kind {
            Kind::Template => Ok(Some(self.template.clone())),
            Kind::Routes => Ok(Some(Value::Array(
                self.rt.block_on(self.list_routes(&self.admin))?,
            ))),
            _ => self.rt.block_on(self.get(&self.admin, kind)),
        }
    }

    fn write_counts(&self) -> WriteCounts {
        self.counts
    }
}
