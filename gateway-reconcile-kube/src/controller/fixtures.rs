//! Test fixtures shared by the controller's tests: objects, and a context with empty caches.

use std::sync::Arc;

use gateway_reconcile::Settings;
use kube::Client;
use kube::runtime::events::Reporter;
use kube::runtime::reflector;

use super::context::{Config, Context};
use super::indexes::route_index;
use super::stores::Stores;
use crate::cached::{
    Deployment as CachedDeployment, DeploymentMeta, Gateway, GatewayClass, GatewayConfiguration,
    L34Route, NamespaceMeta,
};
use crate::leader::Leadership;

/// A context around `client`, with empty caches.
pub(super) fn context(client: Client, leadership: Leadership) -> Arc<Context> {
    let (gateways, _) = reflector::store::<Gateway>();
    let (classes, _) = reflector::store::<GatewayClass>();
    let (configurations, _) = reflector::store::<GatewayConfiguration>();
    let (routes, _) = reflector::store::<L34Route>();
    let stores = Stores {
        gateways,
        classes,
        configurations,
        routes,
        deployments: reflector::store::<CachedDeployment>().0,
        deployment_meta: reflector::store::<DeploymentMeta>().0,
        namespaces: reflector::store::<NamespaceMeta>().0,
        routes_by_gateway: Arc::new(route_index()),
        relists: Arc::default(),
    };
    context_with(client, leadership, stores)
}

/// A context around `client` and `stores`.
pub(super) fn context_with(client: Client, leadership: Leadership, stores: Stores) -> Arc<Context> {
    let config = Config {
        settings: Settings::default(),
        template: gateway_reconcile::template::default_template(),
        namespace: None,
        reporter: Reporter {
            controller: "test".into(),
            instance: None,
        },
        concurrency: 1,
        streaming_lists: false,
    };
    let ready = stores.ready(Arc::default());
    Arc::new(Context::new(
        client,
        config,
        stores,
        ready,
        Arc::default(),
        leadership,
    ))
}

/// The Gateway `ns/name` of class `c`, without listeners.
pub(super) fn gateway(name: &str) -> Arc<Gateway> {
    Arc::new(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": { "name": name, "namespace": "ns" },
            "spec": { "gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}] }
        }))
        .expect("a Gateway"),
    )
}

/// The L34Route `ns/name` naming `gateway`.
pub(super) fn named_route(name: &str, gateway: &str) -> L34Route {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": name, "namespace": "ns" },
        "spec": { "parentRefs": [{ "name": gateway }], "destinationCIDRs": [],
                  "protocols": ["TCP"], "priority": 1 }
    }))
    .expect("a route")
}

/// A Deployment by its metadata, from its JSON.
pub(super) fn meta(value: serde_json::Value) -> DeploymentMeta {
    serde_json::from_value(value).expect("metadata")
}

/// The L34Route `ns/r` naming `gateway`.
pub(super) fn route(gateway: &str) -> L34Route {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "L34Route",
        "metadata": { "name": "r", "namespace": "ns" },
        "spec": { "parentRefs": [{ "name": gateway }], "destinationCIDRs": [],
                  "protocols": ["TCP"], "priority": 1 }
    }))
    .expect("a route")
}
