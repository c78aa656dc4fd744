//! [`InMemory`]: objects held in maps, read by kind and key and written as given: a port
//! over an in-memory store (a test's fake client, a toy controller), or the read side of
//! one's own. Many Gateways share its classes, configurations, routes, namespaces and
//! template, as they share a cluster's: an edit of a shared object is seen by every
//! Gateway that reads it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::port::{Labels, Port, Reader, StatusWrite, View};
use super::settlement::{Requeue, StatusPatch};
use super::write::{DeploymentWrite, WriteKind};
use crate::events::Event;
use crate::outcome::WriteOutcome;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// A namespaced object's key: namespace, name.
pub type ObjectKey = (String, String);

fn key(namespace: &str, name: &str) -> ObjectKey {
    (namespace.to_owned(), name.to_owned())
}

/// Objects in memory, and the Gateway a reconcile is of ([`InMemory::reconciling`]): a
/// [`Reader`] whose reads never fail and are always ready, and a [`Port`] whose writes apply
/// to the maps and whose Events are kept ([`InMemory::events`]), to assert on. It stores
/// what it is given: no resourceVersion, generation or defaulting (for an API server's
/// behaviour, the `testing` feature's `Store`). A port of one's own calls
/// [`store_write`](InMemory::store_write) and [`store_status`](InMemory::store_status).
///
/// ```
/// use gateway_reconcile::reconcile::{InMemory, Reader, View, ready};
/// use gateway_reconcile::template;
/// use serde_json::{from_value, json};
///
/// let mut objects = InMemory::new(template::default_template());
/// objects.insert_gateway(from_value(json!({
///     "metadata": {"name": "gw", "namespace": "ns"}, "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}
/// })).unwrap());
/// objects.reconciling("ns", "gw");
/// let View::Ready(gateway) = ready(objects.gateway()).unwrap().unwrap() else { panic!() };
/// assert_eq!(gateway.spec.gateway_class_name, "meridio");
/// // No such class: the reader says so, the core decides what that means.
/// assert!(ready(objects.class("meridio")).unwrap().unwrap().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct InMemory {
    /// The Gateways, by namespace and name.
    pub gateways: BTreeMap<ObjectKey, Gateway>,
    /// The GatewayClasses, by name.
    pub classes: BTreeMap<String, GatewayClass>,
    /// The GatewayConfigurations, by namespace and name.
    pub configurations: BTreeMap<ObjectKey, GatewayConfiguration>,
    /// The Deployments, by namespace and name.
    pub deployments: BTreeMap<ObjectKey, Deployment>,
    /// The L34Routes, by namespace and name.
    pub routes: BTreeMap<ObjectKey, L34Route>,
    /// The namespaces' labels, by namespace name.
    pub namespaces: BTreeMap<String, Labels>,
    /// The LB Deployment template.
    pub template: Arc<Deployment>,
    /// The Gateway the next reconcile is of.
    pub reconciling: ObjectKey,
    /// The Events recorded, with the Gateway they are about, in order.
    pub events: Vec<(ObjectKey, Event)>,
}

/// The key of an object's metadata (empty parts where it has none).
fn key_of(meta: &crate::wire::ObjectMeta) -> ObjectKey {
    let part = |p: &Option<String>| p.clone().unwrap_or_default();
    (part(&meta.namespace), part(&meta.name))
}

impl InMemory {
    /// No objects but the template.
    pub fn new(template: Deployment) -> Self {
        InMemory {
            gateways: BTreeMap::new(),
            classes: BTreeMap::new(),
            configurations: BTreeMap::new(),
            deployments: BTreeMap::new(),
            routes: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            template: Arc::new(template),
            reconciling: ObjectKey::default(),
            events: Vec::new(),
        }
    }

    /// Makes the Gateway `namespace/name` the one the next reconcile is of.
    pub fn reconciling(&mut self, namespace: &str, name: &str) -> &mut Self {
        self.reconciling = key(namespace, name);
        self
    }

    /// Stores a Gateway under its namespace and name.
    pub fn insert_gateway(&mut self, gateway: Gateway) -> &mut Self {
        self.gateways.insert(key_of(&gateway.metadata), gateway);
        self
    }

    /// Stores a GatewayClass under its name.
    pub fn insert_class(&mut self, class: GatewayClass) -> &mut Self {
        let (_, name) = key_of(&class.metadata);
        self.classes.insert(name, class);
        self
    }

    /// Stores a GatewayConfiguration under its namespace and name.
    pub fn insert_configuration(&mut self, configuration: GatewayConfiguration) -> &mut Self {
        self.configurations
            .insert(key_of(&configuration.metadata), configuration);
        self
    }

    /// Stores an L34Route under its namespace and name.
    pub fn insert_route(&mut self, route: L34Route) -> &mut Self {
        self.routes.insert(key_of(&route.metadata), route);
        self
    }

    /// Stores the Deployment a write asked for under its namespace and name, as given, and
    /// answers that it was applied.
    pub fn store_write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let desired = write.into_desired();
        let at = key(
            desired.namespace().unwrap_or_default(),
            desired.name().unwrap_or_default(),
        );
        self.deployments.insert(at, desired);
        WriteOutcome::Applied
    }

    /// Applies a status patch to the Gateway being reconciled, as the API server applies a
    /// merge patch. A patch of a Gateway that is not there is a conflict (it was deleted).
    pub fn store_status(&mut self, patch: &StatusPatch) -> Result<StatusWrite, serde_json::Error> {
        let Some(gateway) = self.gateways.get_mut(&self.reconciling) else {
            return Ok(StatusWrite::Conflict);
        };
        let mut object = serde_json::to_value(&*gateway)?;
        patch.apply_to(&mut object);
        *gateway = serde_json::from_value(object)?;
        Ok(StatusWrite::Written)
    }
}

/// Reads are copies of the stored objects; a Gateway that is not there waits for a change.
impl Reader for InMemory {
    /// Only [`InMemory::store_status`] fails (a Gateway that no longer parses once patched);
    /// the reads never do. The error type is shared so that a port can pass both on.
    type Error = serde_json::Error;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = GatewayConfiguration;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, Self::Error> {
        Ok(match self.gateways.get(&self.reconciling) {
            Some(gateway) => View::Ready(gateway.clone()),
            None => View::Later(Requeue::AwaitChange),
        })
    }

    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, Self::Error> {
        Ok(self.classes.get(name).cloned())
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<GatewayConfiguration>, Self::Error> {
        Ok(self.configurations.get(&key(namespace, name)).cloned())
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, Self::Error> {
        Ok(self.deployments.get(&key(namespace, name)).cloned())
    }

    /// Every route: the gather keeps those that name the Gateway.
    async fn routes(
        &mut self,
        _namespace: &str,
        _name: &str,
    ) -> Result<Vec<L34Route>, Self::Error> {
        Ok(self.routes.values().cloned().collect())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, Self::Error> {
        Ok(self.namespaces.get(name).cloned())
    }

    fn template(&mut self) -> Arc<Deployment> {
        self.template.clone()
    }
}

/// The writes applied to the maps ([`InMemory::store_write`], [`InMemory::store_status`]);
/// the Events kept in [`InMemory::events`].
impl Port for InMemory {
    type Error = serde_json::Error;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        self.store_write(write)
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, Self::Error> {
        self.store_status(&patch)
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        let about = self.reconciling.clone();
        self.events
            .extend(events.iter().map(|event| (about.clone(), event.clone())));
    }
}
