//! [`StorePort`]: the [`Port`](crate::reconcile::Port) and
//! [`Reader`](crate::reconcile::Reader) of one Gateway over the shared [`Store`], what the
//! crate's [`Driver`](crate::reconcile::Driver) reads and writes through.
//!
//! Reads answer from the store's maps by kind and key, unless a failure is injected for
//! them; Deployment writes and the Gateway's status patch go through the simulated API
//! server (its bookkeeping, injected failures, mutating admission) into the store; Events
//! and write counts go to the store's recorder.

use std::sync::Arc;

use super::{Scope, Store, WatchKind, key};
use crate::events::Event;
use crate::outcome::{FailureClass, WriteOutcome};
use crate::reconcile::{
    DeploymentWrite, Labels, ObjectKey, Requeue, StatusPatch, StatusWrite, View, WriteKind,
};
use crate::sim::cluster::store::{typed, typed_at};
use crate::sim::cluster::{ClusterError, Kind, Request, Verb};
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The [`Port`](crate::reconcile::Port) of one Gateway of a kit [`Store`] (from
/// [`Store::port`]): reads answer by kind and key from the shared objects (copies: a write
/// changes the store while the plan still reads them), writes go through the simulated API
/// server (its bookkeeping, injected failures and mutating admission), Events are kept in
/// the store ([`Store::events`]).
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, Reader, View, ready};
/// use gateway_reconcile::testing::strategies;
///
/// let mut store = strategies::store().unwrap();
/// let mut port = store.port("ns", "gw").unwrap();
/// assert_eq!(port.gateway_key(), ("ns", "gw"));
/// // Reads by kind and key, as the driver asks them.
/// assert!(ready(port.class("meridio")).unwrap().unwrap().is_some());
/// assert!(ready(port.deployment("ns", "sllbr-gw")).unwrap().unwrap().is_none());
/// let View::Ready(gateway) = ready(port.gateway()).unwrap().unwrap() else { panic!() };
/// assert_eq!(gateway.spec.gateway_class_name, "meridio");
/// ```
#[derive(Debug)]
pub struct StorePort<'s> {
    store: &'s mut Store,
    gateway: ObjectKey,
}

impl<'s> StorePort<'s> {
    /// The port of the Gateway `gateway` of `store` (which holds it).
    pub(super) fn new(store: &'s mut Store, gateway: ObjectKey) -> Self {
        StorePort { store, gateway }
    }

    /// The Gateway this port serves: its namespace and name.
    pub fn gateway_key(&self) -> (&str, &str) {
        (self.gateway.0.as_str(), self.gateway.1.as_str())
    }

    /// A read's injected failure, if one is pending for it.
    fn get(&mut self, kind: Kind, namespace: &str, name: &str) -> Result<(), ClusterError> {
        match self.store.server.injected(Verb::Get, kind, namespace, name) {
            Some(outcome) => Err(ClusterError::Refused {
                request: Request::get(kind, namespace, name),
                outcome,
            }),
            None => Ok(()),
        }
    }
}

/// Reads by key; an object the wire type cannot read is the store's error naming the field
/// path (the configuration: the reader's message, which the Gateway reports); a read with a
/// failure injected for it ([`Store::fail_next`], [`Verb::Get`]) is
/// [`ClusterError::Refused`].
impl crate::reconcile::Reader for StorePort<'_> {
    type Error = ClusterError;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = Result<GatewayConfiguration, String>;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, ClusterError> {
        let (namespace, name) = self.gateway.clone();
        self.get(Kind::Gateway, &namespace, &name)?;
        match self.store.gateways.get(&self.gateway) {
            Some(stored) => typed(Kind::Gateway, stored).map(View::Ready),
            None => Ok(View::Later(Requeue::AwaitChange)),
        }
    }

    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, ClusterError> {
        self.get(Kind::GatewayClass, "", name)?;
        self.store
            .classes
            .get(name)
            .map(|stored| typed(Kind::GatewayClass, stored))
            .transpose()
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Configuration>, ClusterError> {
        self.get(Kind::Configuration, namespace, name)?;
        Ok(self
            .store
            .configurations
            .get(&key(namespace, name))
            .map(|stored| {
                typed_at::<GatewayConfiguration>(stored).map_err(|(path, why)| match path {
                    Some(path) => format!("{path}: {why}"),
                    None => why,
                })
            }))
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, ClusterError> {
        self.get(Kind::Deployment, namespace, name)?;
        Ok(self.store.deployments.get(&key(namespace, name)).cloned())
    }

    /// Every route (the core keeps those that name the Gateway).
    async fn routes(&mut self, namespace: &str, name: &str) -> Result<Vec<L34Route>, ClusterError> {
        self.get(Kind::Routes, namespace, name)?;
        Ok(self.store.routes.values().cloned().collect())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, ClusterError> {
        Ok(self.store.namespaces.get(name).cloned())
    }

    fn template(&mut self) -> Arc<Deployment> {
        self.store.template.clone()
    }
}

impl crate::reconcile::Port for StorePort<'_> {
    type Error = ClusterError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let (verb, desired) = match write {
            DeploymentWrite::Create(desired) => (Verb::Create, desired),
            DeploymentWrite::Update { desired, .. } => (Verb::Update, desired),
        };
        if let Some(counts) = self.store.counts.get_mut(&self.gateway) {
            counts.deployment_writes += 1;
        }
        let at = key(
            desired.namespace().unwrap_or(&self.gateway.0),
            desired.name().unwrap_or_default(),
        );
        let scope = Scope::One(WatchKind::Deployment, at.clone());
        self.store.watched(scope, |store| {
            if let Some(outcome) = store.server.injected(verb, Kind::Deployment, &at.0, &at.1) {
                return outcome;
            }
            let stored = store.deployments.get(&at);
            let written = match verb {
                Verb::Create => store.server.create_deployment(desired, stored),
                _ => store.server.update_deployment(desired, stored),
            };
            match written {
                // The server answers a write it took with the stored object, as a real one
                // does.
                Ok(object) => {
                    store.deployments.insert(at, object.clone());
                    WriteOutcome::Stored(object)
                }
                Err(refused) => refused,
            }
        })
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, ClusterError> {
        let at = self.gateway.clone();
        let scope = Scope::One(WatchKind::Gateway, at.clone());
        self.store
            .watched(scope, |store| Self::patch_status_of(store, &at, &patch))
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        let about = self.gateway.clone();
        self.store
            .events
            .extend(events.iter().map(|event| (about.clone(), event.clone())));
    }
}

impl StorePort<'_> {
    /// The status patch of the Gateway `at`, inside the watch's hook.
    fn patch_status_of(
        store: &mut Store,
        at: &ObjectKey,
        patch: &StatusPatch,
    ) -> Result<StatusWrite, ClusterError> {
        let (namespace, name) = (at.0.as_str(), at.1.as_str());
        if let Some(outcome) =
            store
                .server
                .injected(Verb::PatchStatus, Kind::Gateway, namespace, name)
        {
            return match outcome.class() {
                Some(FailureClass::Conflict) => Ok(StatusWrite::Conflict),
                _ => Err(ClusterError::Refused {
                    request: Request::patch_status(namespace, name),
                    outcome,
                }),
            };
        }
        let Some(gateway) = store.gateways.get_mut(at) else {
            // Deleted since it was read.
            return Ok(StatusWrite::Conflict);
        };
        // The precondition must be the stored Gateway's resourceVersion (no write between).
        let held = gateway
            .pointer("/metadata/resourceVersion")
            .and_then(crate::wire::tree::Value::as_str);
        if patch.resource_version() != held {
            store.status_patch_problem = Some(format!(
                "status_patch() has the precondition {:?}, the Gateway has resourceVersion {held:?}",
                patch.resource_version()
            ));
        }
        crate::sim::cluster::store::apply_status(patch, gateway);
        let rv = store.server.next_revision();
        store.server.status_written(gateway, rv);
        if let Some(counts) = store.counts.get_mut(at) {
            counts.status_writes += 1;
        }
        Ok(StatusWrite::Written)
    }
}
