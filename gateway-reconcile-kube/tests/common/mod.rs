//! What the tests on a real control plane share (the stories `writes.rs`, `recovery.rs`,
//! `caches.rs` and `revision4.rs`, and `operability.rs`, `faults.rs`, `crash_points.rs`,
//! `stale_reads.rs`, `unobserved.rs`, `rollouts.rs`, `replay.rs`): the controller's identity, objects by
//! kind, a story's namespace with the controller's RBAC and a GatewayClass, conditions by
//! type; in its modules the audit log (`audit`), the controller binary in a process of its
//! own (`process`), a GET on loopback (`loopback`), the in-process controller's story
//! (`story`), the webhooks served on loopback (`webhook`), the crash proxy (`crash_proxy`),
//! watch histories and their false claims (`history`), a run's final state
//! (`final_state`) and a second API server whose etcd link can be held (`second_server`).
//! Each test crate uses a part of it.
#![allow(dead_code)]

pub mod audit;
pub mod crash_proxy;
pub mod final_state;
pub mod history;
pub mod loopback;
pub mod process;
pub mod second_server;
pub mod story;
pub mod webhook;

// Each test crate uses a part of these (`use common::*`), some none.
#[allow(unused_imports)]
pub use {
    audit::*, crash_proxy::*, final_state::*, history::*, loopback::*, process::*,
    second_server::*, story::*,
};

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// The user the controller runs as (its requests are told apart by it in the audit log).
pub const CONTROLLER_USER: &str = "gateway-reconcile-controller";
/// The controller name our GatewayClasses carry.
pub const CONTROLLER_NAME: &str = "meridio-2.nordix.org/gateway-controller";
/// The domain of the condition types the controller owns.
pub const DOMAIN: &str = "meridio-2.nordix.org";
/// The controller binary, built by cargo for these tests.
pub const BINARY: &str = env!("CARGO_BIN_EXE_gateway-reconcile-controller");
/// How long a story waits for what it expects before it fails.
pub const WAIT: Duration = Duration::from_secs(60);

/// A variable `e2e/run.sh` sets.
pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run under e2e/run.sh"))
}

/// The API resource of `kind` in `api_version`.
pub fn resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let plural = match kind {
        "GatewayClass" => "gatewayclasses".to_owned(),
        "ValidatingAdmissionPolicy" => "validatingadmissionpolicies".to_owned(),
        "ValidatingAdmissionPolicyBinding" => "validatingadmissionpolicybindings".to_owned(),
        other => format!("{}s", other.to_lowercase()),
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural)
}

/// The API of `object`'s kind (namespaced when it has a namespace).
pub fn api_for(client: &Client, object: &Value) -> Api<DynamicObject> {
    let ar = resource(
        object["apiVersion"].as_str().expect("apiVersion"),
        object["kind"].as_str().expect("kind"),
    );
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Creates `object`; it must not exist yet.
pub async fn create(client: &Client, object: Value) -> DynamicObject {
    let api = api_for(client, &object);
    let object: DynamicObject = serde_json::from_value(object).expect("object");
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("create {}: {e}", object.name_any()))
}

/// Creates `object` unless one of its name exists (what every story shares: the
/// controller's ClusterRole and its binding).
pub async fn ensure(client: &Client, object: Value) {
    let api = api_for(client, &object);
    let object: DynamicObject = serde_json::from_value(object).expect("object");
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("create {}: {e}", object.name_any()),
    }
}

/// Deletes `object`.
pub async fn delete(client: &Client, object: &Value) {
    let api = api_for(client, object);
    let name = object["metadata"]["name"].as_str().expect("name");
    api.delete(name, &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("delete {name}: {e}"));
}

/// The controller's `ConfigurationApplied` condition type.
pub fn applied() -> String {
    format!("{DOMAIN}/ConfigurationApplied")
}

/// The controller's `Degraded` condition type.
pub fn degraded() -> String {
    format!("{DOMAIN}/Degraded")
}

/// A Gateway's conditions by type.
pub fn conditions(gateway: &Value) -> BTreeMap<String, Value> {
    gateway["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["type"].as_str().unwrap_or_default().to_owned(), c.clone()))
        .collect()
}

/// Whether the condition `type_` has `status` and `reason`.
pub fn is(conditions: &BTreeMap<String, Value>, type_: &str, status: &str, reason: &str) -> bool {
    conditions
        .get(type_)
        .is_some_and(|c| c["status"] == status && c["reason"] == reason)
}

/// Accepted, Programmed and its configuration applied.
pub fn healthy(c: &BTreeMap<String, Value>) -> bool {
    is(c, "Accepted", "True", "Accepted")
        && is(c, "Programmed", "True", "Programmed")
        && is(c, &applied(), "True", "Applied")
}

/// A story's namespace (named from a prefix), its GatewayClass `class-<namespace>`, and
/// `deploy/clusterrole.yaml` bound to the controller's user.
pub struct World {
    /// The admin client of `e2e/run.sh`'s kubeconfig.
    pub admin: Client,
    /// The story's namespace.
    pub ns: String,
    /// The story's GatewayClass, ours.
    pub class: String,
}

impl World {
    /// A new namespace named from `prefix`, and its GatewayClass.
    pub async fn new(prefix: &str) -> World {
        let admin = Client::try_default().await.expect("admin client");
        let role: Value =
            serde_yaml_ng::from_str(include_str!("../../deploy/clusterrole.yaml")).expect("role");
        ensure(&admin, role.clone()).await;
        ensure(
            &admin,
            json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": { "name": "gateway-reconcile-controller-e2e" },
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": role["metadata"]["name"] },
                "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": CONTROLLER_USER }] }),
        )
        .await;
        let ns = create(
            &admin,
            json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "generateName": prefix } }),
        )
        .await
        .name_any();
        let class = format!("class-{ns}");
        create(
            &admin,
            json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                    "metadata": { "name": class }, "spec": { "controllerName": CONTROLLER_NAME } }),
        )
        .await;
        World { admin, ns, class }
    }

    /// The API of `kind` in the story's namespace.
    pub fn api(&self, kind: &str) -> Api<DynamicObject> {
        let api_version = match kind {
            "Gateway" => "gateway.networking.k8s.io/v1",
            "GatewayConfiguration" | "L34Route" => "meridio-2.nordix.org/v1alpha1",
            "Deployment" => "apps/v1",
            "Lease" => "coordination.k8s.io/v1",
            "Event" => "events.k8s.io/v1",
            other => panic!("no API for {other}"),
        };
        Api::namespaced_with(self.admin.clone(), &self.ns, &resource(api_version, kind))
    }

    /// Creates GatewayConfiguration `name`: `replicas`, not enforced, one NAD attachment.
    pub async fn configuration(&self, name: &str, replicas: i64) {
        self.configuration_of(name, replicas, false).await;
    }

    /// Creates GatewayConfiguration `name`: `replicas`, enforced or not, one NAD attachment.
    pub async fn configuration_of(&self, name: &str, replicas: i64, enforced: bool) {
        create(
            &self.admin,
            json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
                    "metadata": { "name": name, "namespace": self.ns },
                    "spec": {
                        "networkAttachments": [{ "type": "NAD", "nad": { "name": "vlan", "namespace": self.ns, "interface": "eth1" } }],
                        "internalSubnets": [{ "attachmentType": "NAD", "cidr": "169.254.100.0/24" }],
                        "horizontalScaling": { "replicas": replicas, "enforceReplicas": enforced } } }),
        )
        .await;
    }

    /// The GatewayClasses, cluster-scoped.
    pub fn classes(&self) -> Api<DynamicObject> {
        Api::all_with(
            self.admin.clone(),
            &resource("gateway.networking.k8s.io/v1", "GatewayClass"),
        )
    }

    /// Points the story's GatewayClass's `parametersRef` at GatewayConfiguration `name`.
    pub async fn point_class_at(&self, name: &str) {
        self.classes()
            .patch(
                &self.class,
                &PatchParams::default(),
                &Patch::Merge(&json!({ "spec": { "parametersRef": {
                    "group": DOMAIN, "kind": "GatewayConfiguration", "name": name, "namespace": self.ns } } })),
            )
            .await
            .expect("patch the GatewayClass");
    }

    /// Creates Gateway `name` of the story's class, on GatewayConfiguration `configuration`.
    pub async fn gateway(&self, name: &str, configuration: &str) {
        create(
            &self.admin,
            json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                    "metadata": { "name": name, "namespace": self.ns },
                    "spec": { "gatewayClassName": self.class,
                              "listeners": [{ "name": "tcp", "port": 80, "protocol": "TCP" }],
                              "infrastructure": { "parametersRef": {
                                  "group": DOMAIN, "kind": "GatewayConfiguration", "name": configuration } } } }),
        )
        .await;
    }

    /// The object; it must exist.
    pub async fn get(&self, kind: &str, name: &str) -> Value {
        self.get_opt(kind, name)
            .await
            .unwrap_or_else(|| panic!("{kind} {name} does not exist"))
    }

    /// The object, if it exists.
    pub async fn get_opt(&self, kind: &str, name: &str) -> Option<Value> {
        let object = self
            .api(kind)
            .get_opt(name)
            .await
            .unwrap_or_else(|e| panic!("get {kind} {name}: {e}"));
        object.map(|o| serde_json::to_value(o).expect("json"))
    }

    /// A merge patch of the object; the object as patched.
    pub async fn patch(&self, kind: &str, name: &str, patch: Value) -> Value {
        let object = self
            .api(kind)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("patch {kind} {name}: {e}"));
        serde_json::to_value(object).expect("json")
    }

    /// Edits GatewayConfiguration `conf` to enforce `replicas`: the usual edit, which the
    /// controller must carry to the LB Deployment with one update.
    pub async fn enforce_replicas(&self, replicas: i64) {
        self.patch(
            "GatewayConfiguration",
            "conf",
            json!({ "spec": { "horizontalScaling": { "replicas": replicas, "enforceReplicas": true } } }),
        )
        .await;
    }

    /// `gateway`'s conditions by type (none while it does not exist).
    pub async fn conditions(&self, gateway: &str) -> BTreeMap<String, Value> {
        conditions(&self.get_opt("Gateway", gateway).await.unwrap_or_default())
    }

    /// Polls the Gateway until `done` holds for its conditions (by type), for at most
    /// [`WAIT`]; the conditions then.
    pub async fn wait_conditions(
        &self,
        gateway: &str,
        what: &str,
        done: impl Fn(&BTreeMap<String, Value>) -> bool,
    ) -> BTreeMap<String, Value> {
        self.wait_conditions_within(gateway, what, done, WAIT).await
    }

    /// [`World::wait_conditions`], for at most `limit`.
    pub async fn wait_conditions_within(
        &self,
        gateway: &str,
        what: &str,
        done: impl Fn(&BTreeMap<String, Value>) -> bool,
        limit: Duration,
    ) -> BTreeMap<String, Value> {
        let start = Instant::now();
        loop {
            let conditions = self.conditions(gateway).await;
            if done(&conditions) {
                return conditions;
            }
            assert!(
                start.elapsed() < limit,
                "Gateway {gateway}: {what} not reached in {limit:?}; conditions: {conditions:#?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}
