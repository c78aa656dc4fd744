//! The metrics adapter: what the metrics endpoint reads of the caches and the context at
//! scrape time.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use gateway_reconcile::Settings;
use kube::ResourceExt;

use super::context::Context;
use super::stores::{DEPLOYMENT_METADATA, NAMESPACE_METADATA, Stores};
use crate::metrics;

/// What the metrics read at scrape time (see [`metrics::Observe`]).
pub(super) struct Observed {
    stores: Stores,
    settings: Settings,
    /// Weak: the registry outlives the run.
    context: Weak<Context>,
}

impl Observed {
    /// The caches of a run and its `context`, held weakly.
    pub(super) fn new(stores: Stores, settings: Settings, context: &Arc<Context>) -> Self {
        Observed {
            stores,
            settings,
            context: Arc::downgrade(context),
        }
    }
}

impl metrics::Observe for Observed {
    fn cached_objects(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("Gateway", self.stores.gateways.state().len()),
            ("GatewayClass", self.stores.classes.state().len()),
            (
                "GatewayConfiguration",
                self.stores.configurations.state().len(),
            ),
            ("L34Route", self.stores.routes.state().len()),
            ("Deployment", self.stores.deployments.state().len()),
            (
                DEPLOYMENT_METADATA,
                self.stores.deployment_meta.state().len(),
            ),
            (NAMESPACE_METADATA, self.stores.namespaces.state().len()),
        ]
    }

    fn gateways(&self) -> Vec<metrics::GatewayState> {
        let ours: HashSet<String> = self
            .stores
            .classes
            .state()
            .iter()
            .filter(|class| {
                class
                    .read()
                    .is_ok_and(|class| class.spec.controller_name == self.settings.controller_name)
            })
            .map(|class| class.name_any())
            .collect();
        let domain = &self.settings.condition_domain;
        self.stores
            .gateways
            .state()
            .iter()
            .filter_map(|cached| Some((cached, cached.read().ok()?)))
            .filter(|(_, gateway)| ours.contains(&gateway.spec.gateway_class_name))
            .map(|(cached, gateway)| metrics::GatewayState {
                namespace: cached.namespace().unwrap_or_default(),
                name: cached.name_any(),
                conditions: gateway
                    .status
                    .conditions
                    .iter()
                    .filter_map(|condition| {
                        metrics::Condition::of_type(&condition.type_, domain)
                            .map(|c| (c, condition.status.clone()))
                    })
                    .collect(),
            })
            .collect()
    }

    fn leader(&self) -> bool {
        self.context
            .upgrade()
            .is_some_and(|context| context.leadership.may_write())
    }

    fn backing_off(&self) -> usize {
        self.context
            .upgrade()
            .map_or(0, |context| context.backoff.len())
    }
}
