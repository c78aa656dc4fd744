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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gateway_reconcile::events::Event;
use gateway_reconcile::reconcile::{
    Configuration, Driver, Gathered, OwnedInputs, Port, ReconcileError, StatusWrite,
};
use gateway_reconcile::sim::cluster::{Cluster, Kind, Objects, ReconcileRecord, RolloutState};
use gateway_reconcile::sim::scenario::{Backend, StepError, WriteCounts};
use gateway_reconcile::{
    DeploymentWrite, FailureClass, Settings, StatusPatch, WriteKind, WriteOutcome, WriteRecord,
    gateway_class, lookup, wire,
};
use gateway_reconcile_kube::cached::{Cached, Kind as CachedKind};
use gateway_reconcile_kube::fresh::FreshPort;
use gateway_reconcile_kube::write;
use jiff::Timestamp;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// The controller's user name, as the audit log shows it.
pub const CONTROLLER_USER: &str = "gateway-reconcile-controller";
/// A label or annotation key the backend uses for its own bookkeeping.
const MARKER: &str = "replay.e2e.example/marker";
/// The name of the webhook serving write failures, as the API server quotes it.
const WEBHOOK_NAME: &str = "deny.replay.e2e.example";
/// The name of the webhook that changes the controller's Deployment writes (`mutateWrites`).
const MUTATING_WEBHOOK_NAME: &str = "mutate.replay.e2e.example";
/// The label the API server gives every namespace, its own name as value.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// The name of the throwaway Deployment the admission probes create with `dryRun`.
const PROBE_NAME: &str = "replay-admission-probe";

type Step<T> = Result<T, StepError<String>>;

fn failed<T>(what: impl std::fmt::Display) -> Step<T> {
    Err(StepError::Failed(what.to_string()))
}

/// How the pending `failWrites` are made.
#[derive(Debug)]
enum Admission {
    /// A ValidatingAdmissionPolicy and its binding (both named this).
    Policy(String),
    /// A ValidatingWebhookConfiguration (named this).
    Webhook(String),
    /// A concurrent update of the Deployment between plan and write.
    Conflict,
}

#[derive(Debug)]
struct Pending {
    remaining: u32,
    admission: Admission,
    /// The failure the scenario asked for.
    outcome: WriteOutcome,
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

    /// The server's namespace for the file's `namespace` (created at first use).
    async fn real_namespace(&mut self, namespace: &str) -> Step<String> {
        if let Some(real) = self.namespaces.get(namespace) {
            return Ok(real.clone());
        }
        let api: Api<DynamicObject> =
            Api::all_with(self.admin.clone(), &ar("v1", "Namespace", "namespaces"));
        let created = api
            .create(
                &PostParams::default(),
                &dynamic(json!({ "apiVersion": "v1", "kind": "Namespace",
                                 "metadata": { "generateName": "replay-" } }))?,
            )
            .await
            .or_else(|e| failed(format!("namespace: {}", api_text(&e))))?;
        let real = created.name_any();
        if self.suffix.is_empty() {
            self.suffix = real.clone();
        }
        self.namespaces.insert(namespace.to_owned(), real.clone());
        Ok(real)
    }

    fn class_on_server(&self, name: &str) -> String {
        format!("{name}.{}", self.suffix)
    }

    fn class_in_file<'a>(&self, name: &'a str) -> &'a str {
        name.strip_suffix(&format!(".{}", self.suffix))
            .unwrap_or(name)
    }

    /// The file's object as the server stores it: namespace and class name translated.
    async fn server_form(&mut self, kind: Kind, mut object: Value) -> Step<Value> {
        if kind == Kind::GatewayClass {
            if let Some(name) = str_at(&object, "/metadata/name").map(str::to_owned) {
                object["metadata"]["name"] = json!(self.class_on_server(&name));
            }
            // A class's default configuration lives in a namespace of the file's.
            if let Some(ns) = str_at(&object, "/spec/parametersRef/namespace").map(str::to_owned) {
                object["spec"]["parametersRef"]["namespace"] =
                    json!(self.real_namespace(&ns).await?);
            }
            return Ok(object);
        }
        let ns = str_at(&object, "/metadata/namespace")
            .map(str::to_owned)
            .unwrap_or_else(|| self.gateway_namespace.clone());
        let real = self.real_namespace(&ns).await?;
        object["metadata"]["namespace"] = json!(real);
        // A route's parents in another namespace name it: the server's name, so that the
        // controller's read (which filters routes by the Gateway they name) finds it.
        if kind == Kind::Routes
            && let Some(parents) = object
                .pointer_mut("/spec/parentRefs")
                .and_then(Value::as_array_mut)
        {
            for parent in parents {
                if let Some(ns) = str_at(parent, "/namespace").map(str::to_owned) {
                    parent["namespace"] = json!(self.real_namespace(&ns).await?);
                }
            }
        }
        if kind == Kind::Gateway
            && let Some(class) = str_at(&object, "/spec/gatewayClassName").map(str::to_owned)
        {
            object["spec"]["gatewayClassName"] = json!(self.class_on_server(&class));
        }
        Ok(object)
    }

    /// The file's name of a namespace of the server's.
    fn file_namespace(&self, real: &str) -> Option<String> {
        self.namespaces
            .iter()
            .find(|(_, r)| r.as_str() == real)
            .map(|(file, _)| file.clone())
    }

    /// The server's object as the file names it.
    fn file_form(&self, kind: Kind, mut object: Value) -> Value {
        match kind {
            Kind::GatewayClass => {
                if let Some(name) = str_at(&object, "/metadata/name").map(str::to_owned) {
                    object["metadata"]["name"] = json!(self.class_in_file(&name));
                }
                if let Some(file) = str_at(&object, "/spec/parametersRef/namespace")
                    .and_then(|real| self.file_namespace(real))
                {
                    object["spec"]["parametersRef"]["namespace"] = json!(file);
                }
            }
            _ => {
                if let Some(ns) = str_at(&object, "/metadata/namespace").map(str::to_owned)
                    && let Some((file, _)) = self.namespaces.iter().find(|(_, real)| **real == ns)
                {
                    object["metadata"]["namespace"] = json!(file);
                }
                if let Some(file) = str_at(&object, "/metadata/uid").and_then(|u| self.uids.get(u))
                {
                    object["metadata"]["uid"] = json!(file);
                }
                if kind == Kind::Routes
                    && let Some(parents) = object
                        .pointer_mut("/spec/parentRefs")
                        .and_then(Value::as_array_mut)
                {
                    for parent in parents {
                        if let Some(file) =
                            str_at(parent, "/namespace").and_then(|real| self.file_namespace(real))
                        {
                            parent["namespace"] = json!(file);
                        }
                    }
                }
                if kind == Kind::Gateway {
                    object["metadata"]["uid"] = json!(self.gateway_uid);
                    if let Some(class) =
                        str_at(&object, "/spec/gatewayClassName").map(str::to_owned)
                    {
                        object["spec"]["gatewayClassName"] = json!(self.class_in_file(&class));
                    }
                }
            }
        }
        object
    }

    fn name_of(&self, kind: Kind) -> Step<String> {
        match kind {
            Kind::Gateway => Ok(self.gateway_name.clone()),
            Kind::Deployment => Ok(lookup::deployment_name(&self.settings, &self.gateway_name)),
            Kind::Configuration => Ok(self.configuration_name().unwrap_or_default()),
            Kind::GatewayClass => Ok(self.class_name.clone()),
            Kind::Template | Kind::Routes => failed(format!("{kind} has no name")),
        }
    }

    fn configuration_name(&self) -> Option<String> {
        self.configuration_name.clone()
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
        let gateway = objects.gateway;
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
        self.configuration_name = objects
            .configuration
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
        if let Some(class) = objects.gateway_class.filter(|v| !v.is_null()) {
            if str_at(&class, "/metadata/name") != Some(self.class_name.as_str()) {
                return Err(StepError::Skip(
                    "the GatewayClass is not the Gateway's: the backend names only the Gateway's class".into(),
                ));
            }
            self.create_object(Kind::GatewayClass, class).await?;
        }
        if let Some(conf) = objects.configuration.filter(|v| !v.is_null()) {
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

    /// One reconcile: the GatewayClass's own status first (as the simulator settles it),
    /// then the core's `Driver` over the kube crate's `FreshPort` (the shipped reads and
    /// writes) wrapped in a [`ReplayPort`] that translates names and injects the faults.
    ///
    /// The replay reads fresh where the controller reads its caches: a scenario step
    /// changes the cluster and the next reconcile must decide from that change, which a
    /// watch cache shows only some time later. The caches are the controller stories'
    /// business (`writes.rs`, `recovery.rs`, `caches.rs` and `revision4.rs` run the shipped
    /// controller).
    async fn reconcile_at(&mut self, now: Timestamp) -> Step<ReconcileRecord> {
        let controller = self.controller.clone();
        let Some(gateway_json) = self.get(&controller, Kind::Gateway).await? else {
            return failed("the Gateway is gone");
        };
        let gateway: wire::Gateway = read_as_cached(gateway_json)?;
        self.class_name = gateway.spec.gateway_class_name.clone();
        let class_status_written = match self.get(&controller, Kind::GatewayClass).await? {
            Some(class) => {
                let class: wire::GatewayClass = read_as_cached(class)?;
                self.settle_class(&class, now).await?
            }
            None => false,
        };

        let template: wire::Deployment = serde_json::from_value(self.template.clone())
            .or_else(|e| failed(format!("template: {e}")))?;
        let real_ns = self.namespace().unwrap_or_default().to_owned();
        let inner = FreshPort::new(
            controller,
            self.settings.clone(),
            Arc::new(template),
            &real_ns,
            &self.gateway_name,
        );
        let driver = std::mem::take(&mut self.driver);
        let mut port = ReplayPort {
            real: self,
            inner,
            now,
            error: None,
        };
        let result = driver.reconcile(&mut port, now).await;
        let error = port.error.take();
        self.driver = driver;
        if let Some(error) = error {
            return Err(error);
        }
        let reconciled = match result {
            Ok(reconciled) => reconciled,
            Err(ReconcileError::Input(e)) => return failed(format!("plan: {e}")),
            Err(e) => return failed(e.to_string()),
        };
        let Some(decided) = reconciled.decided else {
            return failed("the reconcile read nothing (the Gateway is gone)");
        };
        if decided.status == StatusWrite::Conflict {
            return failed("the status write met a conflict: no other writer changes the Gateway");
        }
        let admin = self.admin.clone();
        let after = self
            .get(&admin, Kind::Gateway)
            .await?
            .unwrap_or(Value::Null);
        let status: wire::GatewayStatus = after
            .get("status")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .or_else(|e| failed(format!("Gateway status: {e}")))?
            .unwrap_or_default();
        Ok(ReconcileRecord {
            class_conditions: self
                .get(&admin, Kind::GatewayClass)
                .await?
                .and_then(|c| c.pointer("/status/conditions").cloned())
                .map(serde_json::from_value)
                .transpose()
                .or_else(|e| failed(format!("GatewayClass status: {e}")))?
                .unwrap_or_default(),
            class_status_written,
            ..ReconcileRecord::of(now, decided, status)
        })
    }

    /// The server's object, read into the core's type, as the file names it.
    fn file_wire<K: CachedKind + Clone + serde::Serialize>(
        &self,
        kind: Kind,
        object: &K,
    ) -> Step<K> {
        let json = serde_json::to_value(object).or_else(|e| failed(format!("{kind}: {e}")))?;
        read_as_cached(self.file_form(kind, json))
    }

    /// The GatewayClass's own status, settled by the core and written as the controller
    /// writes it (a merge patch of `gatewayclasses/status` with the server's
    /// `resourceVersion`); whether it was written.
    async fn settle_class(&mut self, class: &wire::GatewayClass, now: Timestamp) -> Step<bool> {
        // Whether the configuration the class names as its default exists, as the
        // controller's cache would say (the class is read as the file names it).
        let presence = match lookup::class_configuration_ref(&self.settings, class) {
            None => false,
            Some(named) => match self.namespaces.get(named.namespace) {
                None => false,
                Some(real) => {
                    let api = self.api(&self.controller, Kind::Configuration, Some(real));
                    api.get_opt(named.name)
                        .await
                        .or_else(|e| {
                            failed(format!("GET the class's configuration: {}", api_text(&e)))
                        })?
                        .is_some()
                }
            },
        };
        let settled = gateway_class::settle_class(&self.settings, class, presence.into(), now)
            .or_else(|e| failed(format!("settle the class: {e}")))?;
        let Some(patch) = settled.status_patch() else {
            return Ok(false);
        };
        let name = self.class_on_server(&self.class_name);
        let api = self.api(&self.controller, Kind::GatewayClass, None);
        let params = PatchParams {
            field_manager: Some(write::FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        api.patch_status(&name, &params, &Patch::Merge(patch.body()))
            .await
            .or_else(|e| failed(format!("class status write: {}", api_text(&e))))?;
        Ok(true)
    }

    /// `mutateWrites`: a mutating webhook served on loopback applies `patch` to every
    /// Deployment write of the controller in the Gateway's namespace; `None` removes it.
    /// Waits until the server calls the webhook (or, removed, no longer does).
    async fn mutate(&mut self, patch: Option<&Value>) -> Step<()> {
        let name = format!("{}-mutate", self.admission_name());
        if let Some(webhook) = self.mutation.take() {
            let api: Api<DynamicObject> = Api::all_with(
                self.admin.clone(),
                &admission_ar("MutatingWebhookConfiguration"),
            );
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) | Err(kube::Error::Api(_)) => {}
                Err(e) => return failed(format!("remove the mutating webhook: {e}")),
            }
            crate::common::webhook::until_admission(
                "stop calling the mutating webhook",
                async || Ok(!self.calls_webhook(&webhook).await?),
            )
            .await
            .or_else(failed)?;
        }
        let Some(patch) = patch.cloned() else {
            return Ok(());
        };
        let dir = std::env::var("E2E_DIR").or_else(|_| failed("E2E_DIR is not set"))?;
        let served = crate::common::webhook::mutate(&dir, move |object| {
            let mut changed = object.clone();
            merge(&mut changed, &patch);
            changed
        })
        .await
        .or_else(|e| failed(format!("webhook: {e}")))?;
        let ca_bundle = crate::common::webhook::ca_bundle(&dir).or_else(failed)?;
        let (_, rules, only_controller, selector) = self.admission_scope();
        let hook = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": { "name": name },
            "webhooks": [{ "name": MUTATING_WEBHOOK_NAME, "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": crate::common::webhook::REQUEST_TIMEOUT.as_secs(),
                "reinvocationPolicy": "Never",
                "clientConfig": { "url": served.url, "caBundle": ca_bundle },
                "rules": rules, "matchConditions": only_controller, "namespaceSelector": selector }] });
        self.create_admission(hook).await?;
        crate::common::webhook::until_admission("call the mutating webhook", async || {
            self.calls_webhook(&served).await
        })
        .await
        .or_else(failed)?;
        self.mutation = Some(served);
        Ok(())
    }

    /// Whether a `dryRun` Deployment create of the controller's now reaches `webhook`.
    async fn calls_webhook(
        &self,
        webhook: &crate::common::webhook::Webhook,
    ) -> Result<bool, String> {
        let before = webhook.calls();
        let api = self.api(&self.controller, Kind::Deployment, self.namespace());
        let probe = dynamic(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": PROBE_NAME },
            "spec": { "selector": { "matchLabels": { "app": PROBE_NAME } },
                "template": { "metadata": { "labels": { "app": PROBE_NAME } },
                    "spec": { "containers": [{ "name": "probe", "image": "probe" }] } } }
        }))
        .map_err(|e| e.to_string())?;
        let params = PostParams {
            dry_run: true,
            field_manager: None,
        };
        match api.create(&params, &probe).await {
            Ok(_) => {}
            // Mutating admission runs before validating admission: a probe the pending
            // `failWrites` deny has been through the mutating webhook all the same.
            Err(kube::Error::Api(s)) if self.is_denial(&s.message) => {}
            Err(e) => return Err(format!("admission probe: {}", api_text(&e))),
        }
        Ok(webhook.calls() > before)
    }

    /// Whether `message` is a denial by the scenario's own validating admission.
    fn is_denial(&self, message: &str) -> bool {
        message.contains(WEBHOOK_NAME)
            || message.contains(&format!(
                "ValidatingAdmissionPolicy '{}'",
                self.admission_name()
            ))
    }

    /// Counts a failed write against the pending `failWrites`; removes the admission
    /// object after the last.
    async fn failed_write(&mut self) -> Step<()> {
        let Some(pending) = self.pending.as_mut() else {
            return Ok(());
        };
        pending.remaining = pending.remaining.saturating_sub(1);
        if pending.remaining == 0
            && let Some(pending) = self.pending.take()
        {
            self.remove_admission(pending.admission).await?;
        }
        Ok(())
    }

    /// Removes an admission object and waits until the controller's writes pass again.
    async fn remove_admission(&mut self, admission: Admission) -> Step<()> {
        let delete = |api: Api<DynamicObject>, name: String| async move {
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                Err(e) => failed(format!("remove admission: {}", api_text(&e))),
            }
        };
        match admission {
            Admission::Conflict => return Ok(()),
            Admission::Policy(name) => {
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingAdmissionPolicyBinding"),
                    ),
                    name.clone(),
                )
                .await?;
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingAdmissionPolicy"),
                    ),
                    name,
                )
                .await?;
            }
            Admission::Webhook(name) => {
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingWebhookConfiguration"),
                    ),
                    name,
                )
                .await?;
            }
        }
        // The webhook keeps answering until the API server stops calling it.
        let waited = self.await_admission(false).await;
        self.webhook = None;
        waited
    }

    /// Whether the scenario's admission denies a Deployment write of the controller now:
    /// a `dryRun` create of a throwaway Deployment in the Gateway's namespace, as the
    /// controller (admission runs on dry runs; nothing is stored).
    async fn denied_now(&self) -> Step<bool> {
        let api = self.api(&self.controller, Kind::Deployment, self.namespace());
        let probe = dynamic(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": PROBE_NAME },
            "spec": { "selector": { "matchLabels": { "app": PROBE_NAME } },
                "template": { "metadata": { "labels": { "app": PROBE_NAME } },
                    "spec": { "containers": [{ "name": "probe", "image": "probe" }] } } }
        }))?;
        let params = PostParams {
            dry_run: true,
            field_manager: None,
        };
        match api.create(&params, &probe).await {
            Ok(_) => Ok(false),
            Err(kube::Error::Api(s)) if self.is_denial(&s.message) => Ok(true),
            Err(e) => failed(format!("admission probe: {}", api_text(&e))),
        }
    }

    /// Waits until the scenario's admission denies (`true`) or passes (`false`) the
    /// controller's Deployment writes: a policy or webhook configuration starts and stops
    /// applying some time after it is created or deleted.
    async fn await_admission(&self, denying: bool) -> Step<()> {
        let what = if denying {
            "start denying"
        } else {
            "stop denying"
        };
        crate::common::webhook::until_admission(what, async || {
            let denied = self.denied_now().await.map_err(|e| e.to_string())?;
            Ok(denied == denying)
        })
        .await
        .or_else(failed)
    }

    /// The name of the scenario's admission objects (cluster-scoped).
    fn admission_name(&self) -> String {
        format!("replay-{}", self.namespace().unwrap_or_default())
    }

    /// Skips the scenario when a condition message expected after the current `failWrites`
    /// step holds the failure's text and could not match the real server's message for it
    /// (`real`, which differs: admission prefixes it): an exact `message` holding the text,
    /// or a `messageContains` part holding it that the real message would not contain (see
    /// [`part_matches`]; a part that is the failure's text alone, or starts with it, still
    /// matches and runs).
    fn check_text(&self, outcome: &WriteOutcome, real: &str) -> Step<()> {
        let text = outcome.message();
        if text.is_empty() || real == text {
            return Ok(());
        }
        let after = |list: &'_ [(u32, String)]| -> Vec<String> {
            list.iter()
                .filter(|(after, _)| *after >= self.fail_steps)
                .map(|(_, message)| message.clone())
                .collect()
        };
        if let Some(expected) = after(&self.exact_messages)
            .into_iter()
            .find(|m| m.contains(text))
        {
            return Err(StepError::Skip(format!(
                "the scenario expects the exact condition message {expected:?}, which holds the failure's text; the real server's text differs: {real:?}"
            )));
        }
        match after(&self.message_parts)
            .into_iter()
            .find(|part| !part_matches(part, text, real))
        {
            Some(part) => Err(StepError::Skip(format!(
                "the scenario expects a condition message containing {part:?}, which holds the failure's text with text before it; the real server's text differs ({real:?}), so the message would not contain it"
            ))),
            None => Ok(()),
        }
    }

    /// The message the API server gives for a denial by the scenario's policy.
    fn policy_text(&self, message: &str) -> Step<String> {
        let name = self.admission_name();
        Ok(format!(
            "deployments.apps {:?} is forbidden: ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: {message}",
            self.name_of(Kind::Deployment)?
        ))
    }

    /// The message the API server gives for a 409 `Conflict` of a stale update.
    fn conflict_text(&self) -> Step<String> {
        Ok(format!(
            "Operation cannot be fulfilled on deployments.apps {:?}: the object has been modified; please apply your changes to the latest version and try again",
            self.name_of(Kind::Deployment)?
        ))
    }

    fn webhook_text(message: &str) -> String {
        format!("admission webhook \"{WEBHOOK_NAME}\" denied the request: {message}")
    }

    /// A ValidatingAdmissionPolicy (and binding) denying the controller's Deployment
    /// writes in the Gateway's namespace with 422 `Invalid` and the outcome's message.
    async fn install_policy(&mut self, outcome: &WriteOutcome) -> Step<Admission> {
        let (name, rules, only_controller, selector) = self.admission_scope();
        let policy = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": { "name": name },
            "spec": { "failurePolicy": "Fail", "matchConstraints": { "resourceRules": rules },
                "matchConditions": only_controller,
                "validations": [{ "expression": "false", "message": outcome.message(), "reason": "Invalid" }] } });
        let binding = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": { "name": name },
            "spec": { "policyName": name, "validationActions": ["Deny"],
                "matchResources": { "namespaceSelector": selector } } });
        for object in [policy, binding] {
            self.create_admission(object).await?;
        }
        let admission = Admission::Policy(name);
        self.await_admission(true).await?;
        Ok(admission)
    }

    /// A webhook served on loopback denying the controller's Deployment writes in the
    /// Gateway's namespace with the outcome's code, reason and message
    /// (`failurePolicy: Fail`, so a webhook that cannot be called fails the write too).
    async fn install_webhook(&mut self, outcome: &WriteOutcome) -> Step<Admission> {
        let code = code_of(outcome).unwrap_or(500);
        let (name, rules, only_controller, selector) = self.admission_scope();
        let dir = std::env::var("E2E_DIR").or_else(|_| failed("E2E_DIR is not set"))?;
        let served =
            crate::common::webhook::deny(&dir, code, &outcome_reason(outcome), outcome.message())
                .await
                .or_else(|e| failed(format!("webhook: {e}")))?;
        let ca_bundle = crate::common::webhook::ca_bundle(&dir).or_else(failed)?;
        let hook = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": { "name": name },
            "webhooks": [{ "name": WEBHOOK_NAME, "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": crate::common::webhook::REQUEST_TIMEOUT.as_secs(),
                "clientConfig": { "url": served.url, "caBundle": ca_bundle },
                "rules": rules, "matchConditions": only_controller, "namespaceSelector": selector }] });
        self.webhook = Some(served);
        self.create_admission(hook).await?;
        let admission = Admission::Webhook(name);
        self.await_admission(true).await?;
        Ok(admission)
    }

    /// Creates one admission object (cluster-scoped) as the admin.
    async fn create_admission(&self, object: Value) -> Step<()> {
        let kind = str_at(&object, "/kind").unwrap_or_default().to_owned();
        Api::<DynamicObject>::all_with(self.admin.clone(), &admission_ar(&kind))
            .create(&PostParams::default(), &dynamic(object)?)
            .await
            .map(drop)
            .or_else(|e| failed(format!("{kind}: {}", api_text(&e))))
    }

    /// What the admission objects match: the controller's creates and updates of
    /// Deployments (not their status) in the Gateway's namespace, nothing of the admin's.
    fn admission_scope(&self) -> (String, Value, Value, Value) {
        let real_ns = self.namespace().unwrap_or_default().to_owned();
        (
            self.admission_name(),
            json!([{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"] }]),
            json!([{ "name": "controller", "expression": format!("request.userInfo.username == '{CONTROLLER_USER}'") }]),
            json!({ "matchLabels": { "kubernetes.io/metadata.name": real_ns } }),
        )
    }

    /// Makes the next `count` Deployment writes of the controller fail with `outcome`:
    /// a 422 through a ValidatingAdmissionPolicy; an update's 409 `Conflict` through a
    /// real concurrent update between plan and write (a create's, which no concurrent
    /// update gives, through the webhook); any other code through the webhook.
    async fn fail(&mut self, count: u32, outcome: &WriteOutcome) -> Step<()> {
        self.fail_steps += 1;
        if let Some(pending) = self.pending.take() {
            self.remove_admission(pending.admission).await?;
        }
        let admission = match (outcome.class(), code_of(outcome)) {
            (Some(FailureClass::Conflict), Some(409)) => {
                self.check_text(outcome, &self.conflict_text()?)?;
                Admission::Conflict
            }
            (_, Some(422)) => {
                self.check_text(outcome, &self.policy_text(outcome.message())?)?;
                self.install_policy(outcome).await?
            }
            (_, Some(_)) => {
                self.check_text(outcome, &Self::webhook_text(outcome.message()))?;
                self.install_webhook(outcome).await?
            }
            (_, None) => {
                return Err(StepError::Skip(
                    "a transport error (no HTTP status) cannot come from admission, which always answers with one; and the kube client's own connection errors do not have the scenario's text (Go's `dial tcp ...`)".into(),
                ));
            }
        };
        self.pending = Some(Pending {
            remaining: count,
            admission,
            outcome: outcome.clone(),
        });
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
                gateway,
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

    /// Stops the pending `failWrites`: removes their admission object and waits until the
    /// controller's writes pass again (the end of a fault schedule).
    pub fn stop_failures(&mut self) -> Result<(), String> {
        let rt = self.rt.clone();
        rt.block_on(async {
            match self.pending.take() {
                Some(pending) => self
                    .remove_admission(pending.admission)
                    .await
                    .map_err(|e| e.to_string()),
                None => Ok(()),
            }
        })
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

    /// Removes what the scenario left at cluster scope (namespaces stay: they never finish
    /// deleting here).
    pub fn clean_up(&mut self) {
        let rt = self.rt.clone();
        rt.block_on(async {
            if let Some(pending) = self.pending.take() {
                let _ = self.remove_admission(pending.admission).await;
            }
            // Also what a step that failed half-way left behind.
            let _ = remove_admission_objects(&self.admin, &self.admission_name()).await;
        });
        self.webhook = None;
    }
}

/// Deletes the ValidatingAdmissionPolicies, bindings and webhook configurations whose
/// names start with `prefix` (`replay-`: every scenario's; one scenario's name: its own).
pub async fn remove_admission_objects(admin: &Client, prefix: &str) -> Result<(), String> {
    for kind in [
        "ValidatingAdmissionPolicyBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        let api: Api<DynamicObject> = Api::all_with(admin.clone(), &admission_ar(kind));
        let list = api
            .list(&Default::default())
            .await
            .map_err(|e| format!("{kind}: {}", api_text(&e)))?;
        for object in list {
            let name = object.name_any();
            if name.starts_with(prefix) {
                match api.delete(&name, &DeleteParams::default()).await {
                    Ok(_) | Err(kube::Error::Api(_)) => {}
                    Err(e) => return Err(format!("{kind} {name}: {e}")),
                }
            }
        }
    }
    Ok(())
}

fn admission_ar(kind: &str) -> ApiResource {
    let plural = match kind {
        "ValidatingAdmissionPolicy" => "validatingadmissionpolicies",
        "ValidatingAdmissionPolicyBinding" => "validatingadmissionpolicybindings",
        "MutatingWebhookConfiguration" => "mutatingwebhookconfigurations",
        _ => "validatingwebhookconfigurations",
    };
    ar("admissionregistration.k8s.io/v1", kind, plural)
}

/// Whether an expected `messageContains` part can match on the real server, where the
/// failure's text `text` reaches the condition message as `real` (`text` with a prefix).
/// The core's message holds the failure's text; on the real server it holds `real` in its
/// place, so it contains the part with `real` put in for `text`, and so the part itself
/// only when that contains it (a part without the failure's text is not concerned).
pub fn part_matches(part: &str, text: &str, real: &str) -> bool {
    text.is_empty() || !part.contains(text) || part.replacen(text, real, 1).contains(part)
}

fn code_of(outcome: &WriteOutcome) -> Option<u16> {
    match outcome {
        WriteOutcome::Api(e) => Some(e.code),
        _ => None,
    }
}

fn outcome_reason(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Api(e) => e.reason.clone(),
        _ => String::new(),
    }
}

/// The kube crate's [`FreshPort`] as a scenario runs it: the objects the core sees carry
/// the file's names and uids, the Deployment written carries the server's namespace, and
/// the faults a `failWrites` step asks for that admission cannot make (a concurrent update
/// between the read and the write) are made here.
struct ReplayPort<'r> {
    real: &'r mut Real,
    inner: FreshPort,
    now: Timestamp,
    /// A step error met inside a port method (which answers an outcome, not an error).
    error: Option<StepError<String>>,
}

impl ReplayPort<'_> {
    fn translate(&mut self, inputs: OwnedInputs) -> Step<OwnedInputs> {
        let real = &mut *self.real;
        let mut inputs = inputs;
        inputs.gateway = real.file_wire(Kind::Gateway, &inputs.gateway)?;
        real.class_name = inputs.gateway.spec.gateway_class_name.clone();
        inputs.class = match inputs.class.take() {
            Some(class) => Some(real.file_wire(Kind::GatewayClass, &class)?),
            None => None,
        };
        // The Gateway's own configuration, as the core names it (a class's default lives
        // where the class says, and the backend's configuration steps name the Gateway's).
        if let Some(own) = lookup::configuration_ref(&real.settings, &inputs.gateway, None) {
            real.configuration_name = Some(own.name.to_owned());
        }
        inputs.configuration =
            match std::mem::replace(&mut inputs.configuration, Configuration::Missing) {
                Configuration::Readable(conf) => {
                    Configuration::Readable(real.file_wire(Kind::Configuration, &conf)?)
                }
                Configuration::Unreadable {
                    namespace,
                    name,
                    why,
                } => Configuration::Unreadable {
                    namespace: real.file_namespace(&namespace).unwrap_or(namespace),
                    name,
                    why,
                },
                other => other,
            };
        inputs.deployment = match inputs.deployment.take() {
            Some(deployment) => Some(
                serde_json::from_value(real.file_form(Kind::Deployment, deployment.into_json()))
                    .or_else(|e| failed(format!("Deployment: {e}")))?,
            ),
            None => None,
        };
        inputs.routes = inputs
            .routes
            .iter()
            .map(|route| real.file_wire(Kind::Routes, route))
            .collect::<Step<_>>()?;
        // The namespaces' labels under the file's names; the label the server sets to the
        // namespace's own name carries the file's.
        let labels = std::mem::take(&mut inputs.namespace_labels);
        for (ns, mut labels) in labels {
            let file = real.file_namespace(&ns).unwrap_or(ns);
            if labels.contains_key(NAME_LABEL) {
                labels.insert(NAME_LABEL.to_owned(), file.clone());
            }
            inputs.namespace_labels.insert(file, labels);
        }
        Ok(inputs)
    }

    /// Before the write: a pending conflict is made as `failWrites` asks (a create cannot
    /// conflict: the webhook answers it instead, from now on; an update meets another
    /// writer's change between the read and the write).
    async fn before_write(&mut self, write: &DeploymentWrite) -> Step<()> {
        let real = &mut *self.real;
        let conflict = matches!(
            real.pending.as_ref().map(|p| &p.admission),
            Some(Admission::Conflict)
        );
        if !conflict {
            return Ok(());
        }
        match write {
            DeploymentWrite::Create(_) => {
                let outcome = real.pending.as_ref().map(|p| p.outcome.clone());
                if let Some(outcome) = outcome {
                    real.check_text(&outcome, &Real::webhook_text(outcome.message()))?;
                    let admission = real.install_webhook(&outcome).await?;
                    if let Some(pending) = real.pending.as_mut() {
                        pending.admission = admission;
                    }
                }
            }
            DeploymentWrite::Update { .. } => {
                let real_ns = real.namespace().unwrap_or_default().to_owned();
                let admin = real.api(&real.admin, Kind::Deployment, Some(&real_ns));
                let name = real.name_of(Kind::Deployment)?;
                let marker = json!({ "metadata": { "labels": { MARKER: format!("{}", self.now.as_second()) } } });
                admin
                    .patch(&name, &PatchParams::default(), &Patch::Merge(marker))
                    .await
                    .or_else(|e| failed(format!("concurrent update: {}", api_text(&e))))?;
            }
        }
        Ok(())
    }

    /// After the write: a failure counts against the pending `failWrites`; a stored object
    /// is read back in the file's names.
    async fn after_write(&mut self, outcome: WriteOutcome) -> Step<WriteOutcome> {
        self.real.counts.deployment_writes += 1;
        if outcome.class().is_some() {
            self.real.failed_write().await?;
        }
        match outcome {
            WriteOutcome::Stored(stored) => {
                serde_json::from_value(self.real.file_form(Kind::Deployment, stored.into_json()))
                    .map(WriteOutcome::Stored)
                    .or_else(|e| failed(format!("stored Deployment: {e}")))
            }
            other => Ok(other),
        }
    }
}

impl Port for ReplayPort<'_> {
    type Inputs = OwnedInputs;
    type Error = StepError<String>;

    async fn read(&mut self) -> Step<Gathered<OwnedInputs>> {
        match self.inner.read().await {
            Ok(Gathered::Inputs(inputs)) => Ok(Gathered::Inputs(self.translate(inputs)?)),
            Ok(later) => Ok(later),
            Err(e) => failed(e.to_string()),
        }
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        if let Err(error) = self.before_write(&write).await {
            self.error = Some(error);
        }
        // The core wrote the file's namespace; the server's is another.
        let real_ns = self.inner.namespace().to_owned();
        let on_server = |desired: wire::Deployment| {
            let mut object = desired.object;
            if let Some(wire::tree::Value::Object(meta)) = object.get_mut("metadata") {
                meta.insert("namespace", real_ns.as_str().into());
            }
            wire::Deployment::from_object(object)
        };
        let write = match write {
            DeploymentWrite::Create(desired) => DeploymentWrite::Create(on_server(desired)),
            DeploymentWrite::Update { desired, drift } => DeploymentWrite::Update {
                desired: on_server(desired),
                drift,
            },
        };
        let outcome = self.inner.write(write).await;
        match self.after_write(outcome.clone()).await {
            Ok(outcome) => outcome,
            Err(error) => {
                self.error.get_or_insert(error);
                outcome
            }
        }
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Step<StatusWrite> {
        let written = self
            .inner
            .patch_status(patch)
            .await
            .or_else(|e| failed(format!("status write: {e}")))?;
        if written == StatusWrite::Written {
            self.real.counts.status_writes += 1;
        }
        Ok(written)
    }

    async fn record(&mut self, action: WriteKind, events: &[Event]) {
        self.inner.record(action, events).await;
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

    fn reconcile(&mut self, now: Timestamp) -> Step<ReconcileRecord> {
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

/// An object read as the controller's caches read it (the core's wire type, once).
fn read_as_cached<K: CachedKind + Clone>(json: Value) -> Step<K> {
    match Cached::<K>::from_json(json).read() {
        Ok(object) => Ok(object.clone()),
        Err(why) => failed(why.to_owned()),
    }
}
