//! A tiny in-memory world: one Gateway and what it reads, reconciled by the crate's own loop
//! (`reconcile::Driver`) with the world as its port, for table tests.
#![allow(dead_code)]

use gateway_reconcile::events::Event;
use gateway_reconcile::reconcile::{Driver, Labels, Port, Reader, StatusWrite, View, ready};
use gateway_reconcile::sim::defaulting::apply_server_defaults;
use gateway_reconcile::wire::tree::Value as Tree;
use gateway_reconcile::wire::{
    Condition, Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route, ObjectMeta,
};
use gateway_reconcile::{
    DeploymentWrite, Settings, Settlement, StatusPatch, WriteKind, WriteOutcome, template,
};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

pub const T0: &str = "2026-01-01T00:00:00Z";

pub fn at(offset_secs: i64) -> Timestamp {
    let t0: Timestamp = T0.parse().unwrap();
    t0 + jiff::SignedDuration::from_secs(offset_secs)
}

pub fn gateway() -> Gateway {
    serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
        "spec": {
            "gatewayClassName": "meridio",
            "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
            "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}
        }
    }))
    .unwrap()
}

pub fn class(controller: &str) -> GatewayClass {
    serde_json::from_value(
        json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": controller}}),
    )
    .unwrap()
}

pub fn configuration(generation: i64, replicas: i64) -> GatewayConfiguration {
    serde_json::from_value(json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1",
        "kind": "GatewayConfiguration",
        "metadata": {"name": "conf", "namespace": "ns", "generation": generation},
        "spec": {
            "networkAttachments": [{"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}}],
            "internalSubnets": [
                {"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                {"attachmentType": "NAD", "cidr": "fd00:100::/64"}
            ],
            "horizontalScaling": {"replicas": replicas, "enforceReplicas": true}
        }
    }))
    .unwrap()
}

pub fn route(cidrs: &[&str]) -> L34Route {
    serde_json::from_value(json!({
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": cidrs}
    }))
    .unwrap()
}

/// The objects one reconcile reads, and what the API server would do with the writes. A
/// reconcile is the crate's own loop ([`Driver`]) over this world as its port.
pub struct World {
    pub settings: Settings,
    pub gateway: Gateway,
    pub class: Option<GatewayClass>,
    pub configuration: Option<GatewayConfiguration>,
    pub deployment: Option<Deployment>,
    pub template: Deployment,
    pub routes: Vec<L34Route>,
    pub namespaces: BTreeMap<String, Labels>,
    pub status_writes: usize,
    /// The controller: its write records live as long as the process (see [`World::restart`]).
    driver: Option<Driver>,
}

/// What one reconcile did.
pub struct Step {
    pub action: &'static str,
    pub drift: Vec<String>,
    pub settlement: Settlement,
}

impl World {
    pub fn new() -> Self {
        World {
            settings: Settings::default(),
            gateway: gateway(),
            class: Some(class("meridio-2.nordix.org/gateway-controller")),
            configuration: Some(configuration(7, 2)),
            deployment: None,
            template: template::default_template(),
            routes: Vec::new(),
            namespaces: BTreeMap::new(),
            status_writes: 0,
            driver: None,
        }
    }

    /// A world whose Deployment was created and rolled out at generation 7.
    pub fn healthy() -> Self {
        let mut w = World::new();
        w.reconcile(at(0), |_| Some(WriteOutcome::Applied));
        w.rollout_complete();
        w.reconcile(at(1), |_| None);
        w
    }

    /// The controller process restarts: what it kept in memory (the write records) is gone.
    pub fn restart(&mut self) {
        self.driver = None;
    }

    /// The GatewayConfiguration is edited: generation +1, another replica count.
    pub fn edit_configuration(&mut self) {
        let c = self.configuration.as_mut().unwrap();
        let g = c.metadata.generation.unwrap() + 1;
        c.metadata.generation = Some(g);
        let h = c.spec.horizontal_scaling.as_mut().unwrap();
        h.replicas = Some(h.replicas.unwrap() + 1);
    }

    /// One reconcile by the [`Driver`]; `outcome` answers the write the plan asks for (it
    /// must answer one). Settings changed since the last reconcile are a restart with them.
    pub fn reconcile(
        &mut self,
        now: Timestamp,
        outcome: impl Fn(&DeploymentWrite) -> Option<WriteOutcome>,
    ) -> Step {
        let driver = match self.driver.take() {
            Some(driver) if driver.settings() == &self.settings => driver,
            _ => Driver::new(self.settings.clone()),
        };
        let mut port = WorldPort {
            world: self,
            outcome: &outcome,
            write: None,
        };
        let reconciled = ready(driver.reconcile(&mut port, now))
            .expect("an in-memory port is always ready")
            .expect("reconcile");
        let write = port.write.take();
        self.driver = Some(driver);
        let decided = reconciled
            .decided
            .expect("the world's reads are always ready");
        if decided.outcome == Some(WriteOutcome::Applied) {
            match write {
                Some(DeploymentWrite::Create(d)) => self.store(d, true),
                Some(DeploymentWrite::Update { desired, .. }) => self.store(desired, false),
                None => {}
            }
        }
        if decided.status == StatusWrite::Written {
            if let Some(status) = &decided.settlement.status {
                self.gateway.status = status.clone();
            }
            self.status_writes += 1;
        }
        Step {
            action: decided.action.as_str(),
            drift: decided.drift,
            settlement: decided.settlement,
        }
    }

    fn store(&mut self, mut d: Deployment, create: bool) {
        let old_spec = self
            .deployment
            .as_ref()
            .and_then(|o| o.object.get("spec").cloned());
        let old_gen = self
            .deployment
            .as_ref()
            .and_then(|o| o.generation())
            .unwrap_or(0);
        let old_status = self
            .deployment
            .as_ref()
            .and_then(|o| o.object.get("status").cloned());
        apply_server_defaults(&mut d);
        let meta = d
            .object
            .entry("metadata")
            .or_insert(Tree::Object(Default::default()));
        if create {
            meta["uid"] = Tree::from("dep-uid");
            meta["generation"] = Tree::from(1);
        } else {
            let changed = old_spec.as_ref() != d.object.get("spec");
            d.object["metadata"]["generation"] =
                Tree::from(if changed { old_gen + 1 } else { old_gen });
            if let Some(s) = old_status {
                d.object.insert("status", s);
            }
        }
        self.deployment = Some(d);
    }

    pub fn rollout_complete(&mut self) {
        let d = self.deployment.as_mut().unwrap();
        let generation = d.generation().unwrap();
        let replicas = d.object["spec"]["replicas"].clone();
        let replicas = Value::from(&replicas);
        d.object.insert(
            "status",
            Tree::from(json!({
                "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
                "readyReplicas": replicas, "availableReplicas": replicas,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
                ]
            })),
        );
    }

    pub fn rollout_stalled(&mut self) {
        let d = self.deployment.as_mut().unwrap();
        let generation = d.generation().unwrap();
        d.object.insert("status", Tree::from(json!({
            "observedGeneration": generation, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 1,
            "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                            "message": "ReplicaSet \"sllbr-gw-5d4f\" has timed out progressing.",
                            "lastTransitionTime": "2026-01-01T00:10:00Z"}]
        })));
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.gateway
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
    }

    pub fn conditions_json(&self) -> Value {
        serde_json::to_value(&self.gateway.status.conditions).unwrap()
    }
}

pub const APPLIED: &str = gateway_reconcile::conditions::DEFAULT_CONFIGURATION_APPLIED;
pub const DEGRADED: &str = gateway_reconcile::conditions::DEFAULT_DEGRADED;

pub fn api_error(code: u16, reason: &str, message: &str) -> Option<WriteOutcome> {
    Some(WriteOutcome::from_parts(Some(code), reason, message))
}

/// A condition as another writer (or an earlier reconcile) left it, at generation 1.
pub fn condition(
    type_: &str,
    reason: &str,
    message: &str,
    last_transition_time: &str,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: "True".into(),
        observed_generation: Some(1),
        last_transition_time: last_transition_time.into(),
        reason: reason.into(),
        message: message.into(),
    }
}

/// Every write fails with the same 503, as in the seed problem.
pub fn fail_503(_: &DeploymentWrite) -> Option<WriteOutcome> {
    api_error(503, "ServiceUnavailable", "etcdserver: request timed out")
}

/// The world as the Driver's port: reads by key, the write answered by the test.
struct WorldPort<'w, F> {
    world: &'w mut World,
    outcome: &'w F,
    /// The write the Driver asked for, applied to the world once it is answered.
    write: Option<DeploymentWrite>,
}

fn named(meta: &ObjectMeta, namespace: Option<&str>, name: &str) -> bool {
    meta.name.as_deref() == Some(name)
        && (namespace.is_none() || meta.namespace.as_deref() == namespace)
}

impl<F: Fn(&DeploymentWrite) -> Option<WriteOutcome>> Reader for WorldPort<'_, F> {
    type Error = Infallible;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = GatewayConfiguration;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, Infallible> {
        Ok(View::Ready(self.world.gateway.clone()))
    }
    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, Infallible> {
        let class = self.world.class.as_ref();
        Ok(class.filter(|c| named(&c.metadata, None, name)).cloned())
    }
    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<GatewayConfiguration>, Infallible> {
        let configuration = self.world.configuration.as_ref();
        Ok(configuration
            .filter(|c| named(&c.metadata, Some(namespace), name))
            .cloned())
    }
    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, Infallible> {
        let deployment = self.world.deployment.as_ref();
        Ok(deployment
            .filter(|d| d.namespace() == Some(namespace) && d.name() == Some(name))
            .cloned())
    }
    async fn routes(&mut self, _namespace: &str, _name: &str) -> Result<Vec<L34Route>, Infallible> {
        Ok(self.world.routes.clone())
    }
    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, Infallible> {
        Ok(self.world.namespaces.get(name).cloned())
    }
    fn template(&mut self) -> Arc<Deployment> {
        Arc::new(self.world.template.clone())
    }
}

impl<F: Fn(&DeploymentWrite) -> Option<WriteOutcome>> Port for WorldPort<'_, F> {
    type Error = Infallible;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }
    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let outcome = (self.outcome)(&write).expect("the plan asks for a write: give its outcome");
        self.write = Some(write);
        outcome
    }
    async fn patch_status(&mut self, _patch: StatusPatch) -> Result<StatusWrite, Infallible> {
        Ok(StatusWrite::Written)
    }
    async fn record(&mut self, _action: WriteKind, _events: &[Event]) {}
}
