//! A port that reads one Gateway's objects fresh from the API server (GETs and a LIST)
//! instead of from watch caches, and writes with the controller's own verbs.
//!
//! The controller reads its caches ([`crate::controller`]); this port is for a caller that
//! has none and must see every change at once: a one-shot reconcile, or a test that
//! changes the cluster between two reconciles and wants the next one to decide from what
//! it just wrote (the real-server replay of the scenario files does). Its writes are the
//! controller's: [`write::create`] and [`write::replace`] for the LB Deployment,
//! [`write::patch_status`] for the status, [`events::Recorder`] for the Events (when given
//! a recorder).
//!
//! ```no_run
//! # async fn run(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use gateway_reconcile::Settings;
//! use gateway_reconcile::reconcile::Driver;
//! use gateway_reconcile_kube::fresh::FreshPort;
//!
//! let settings = Settings::default();
//! let template = std::sync::Arc::new(gateway_reconcile::template::default_template());
//! let driver = Driver::new(settings.clone());
//! let mut port = FreshPort::new(client, settings, template, "default", "my-gateway");
//! let reconciled = driver.reconcile(&mut port, jiff::Timestamp::now()).await?;
//! println!("look again: {:?}", reconciled.requeue);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use gateway_reconcile::reconcile::{Configuration, Gathered, OwnedInputs, Port, StatusWrite};
use gateway_reconcile::{
    DeploymentWrite, InputError, Requeue, Settings, StatusPatch, WriteKind, WriteOutcome,
    events::Event, lookup, wire,
};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::{Client, Resource};

use crate::cached::{self, Cached};
use crate::{events, write};

/// Why a fresh read or a status write failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FreshError {
    /// A request failed.
    #[error("{what}: {source}")]
    Api {
        /// Which request.
        what: String,
        /// The answer.
        #[source]
        source: kube::Error,
    },
    /// An object the core's types cannot read.
    #[error(transparent)]
    Input(#[from] InputError),
}

/// The [`Port`] of one Gateway, reading fresh (see the module docs).
pub struct FreshPort {
    client: Client,
    settings: Settings,
    template: Arc<wire::Deployment>,
    namespace: String,
    name: String,
    recorder: Option<events::Recorder>,
    /// The verb of this reconcile's Deployment write, for the Events' action.
    verb: &'static str,
}

impl FreshPort {
    /// The port of Gateway `namespace/name`, deciding with `settings` and `template`;
    /// it records no Event until [`with_recorder`](FreshPort::with_recorder).
    pub fn new(
        client: Client,
        settings: Settings,
        template: Arc<wire::Deployment>,
        namespace: &str,
        name: &str,
    ) -> Self {
        FreshPort {
            client,
            settings,
            template,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            recorder: None,
            verb: "Reconcile",
        }
    }

    /// Records the settlements' Events with `recorder`.
    pub fn with_recorder(mut self, recorder: events::Recorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The Gateway's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    async fn get<K>(
        &self,
        api: Api<Cached<K>>,
        name: &str,
        what: &str,
    ) -> Result<Option<K>, FreshError>
    where
        K: cached::Kind + Clone,
        Cached<K>: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let found = api.get_opt(name).await.map_err(|source| FreshError::Api {
            what: format!("GET {what} {name:?}"),
            source,
        })?;
        found.map(|object| read(&object)).transpose()
    }
}

/// A cached object's wire type, or the input error naming it.
fn read<K: cached::Kind + Clone>(object: &Cached<K>) -> Result<K, FreshError>
where
    Cached<K>: Resource,
{
    object.read().cloned().map_err(|why| {
        FreshError::Input(InputError::Malformed {
            object: format!(
                "{}/{}",
                object.meta().namespace.as_deref().unwrap_or_default(),
                object.meta().name.as_deref().unwrap_or_default()
            ),
            why: why.to_owned(),
        })
    })
}

impl Port for FreshPort {
    type Inputs = OwnedInputs;
    type Error = FreshError;

    async fn read(&mut self) -> Result<Gathered<OwnedInputs>, FreshError> {
        let client = &self.client;
        let ns = self.namespace.as_str();
        let Some(gateway) = self
            .get(
                Api::<cached::Gateway>::namespaced(client.clone(), ns),
                &self.name,
                "Gateway",
            )
            .await?
        else {
            // Gone: nothing to reconcile.
            return Ok(Gathered::Later(Requeue::AwaitChange));
        };
        let class = self
            .get(
                Api::<cached::GatewayClass>::all(client.clone()),
                &gateway.spec.gateway_class_name,
                "GatewayClass",
            )
            .await?;
        // The one it uses: its own reference, else its class's (our kind only; the core
        // reports any other reference); read as it is, readable or not.
        let used = lookup::configuration_ref(&self.settings, &gateway, class.as_ref());
        let configuration = match used {
            None => Configuration::Missing,
            Some(used) => {
                let api =
                    Api::<cached::GatewayConfiguration>::namespaced(client.clone(), used.namespace);
                let found = api
                    .get_opt(used.name)
                    .await
                    .map_err(|source| FreshError::Api {
                        what: format!("GET GatewayConfiguration {used}"),
                        source,
                    })?;
                match found {
                    None => Configuration::Missing,
                    Some(cached) => match cached.read() {
                        Ok(configuration) => Configuration::Readable(configuration.clone()),
                        Err(why) => Configuration::Unreadable {
                            namespace: used.namespace.to_owned(),
                            name: used.name.to_owned(),
                            // The kind is in the message already.
                            why: why
                                .strip_prefix("GatewayConfiguration: ")
                                .unwrap_or(why)
                                .to_owned(),
                        },
                    },
                }
            }
        };
        let lb_name = lookup::deployment_name(&self.settings, &self.name);
        let deployment = self
            .get(
                Api::<cached::Deployment>::namespaced(client.clone(), ns),
                &lb_name,
                "Deployment",
            )
            .await?;
        // Routes of any namespace may name the Gateway.
        let routes = Api::<cached::L34Route>::all(client.clone())
            .list(&ListParams::default())
            .await
            .map_err(|source| FreshError::Api {
                what: "LIST L34Routes".into(),
                source,
            })?;
        let mut routes: Vec<wire::L34Route> = routes
            .items
            .iter()
            .filter_map(|route| route.read().ok())
            .filter(|route| lookup::names_gateway(route, &self.name, ns))
            .cloned()
            .collect();
        routes.sort_by(|a, b| {
            let key = |r: &wire::L34Route| (r.metadata.namespace.clone(), r.metadata.name.clone());
            key(a).cmp(&key(b))
        });
        // The routes' namespaces' labels, only for a listener that selects by them.
        let mut namespace_labels = gateway_reconcile::NamespaceLabels::new();
        if lookup::uses_namespace_selector(&gateway) {
            let namespaces = Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone());
            for route in &routes {
                let Some(ns) = route.metadata.namespace.as_deref() else {
                    continue;
                };
                if namespace_labels.contains_key(ns) {
                    continue;
                }
                let found =
                    namespaces
                        .get_metadata_opt(ns)
                        .await
                        .map_err(|source| FreshError::Api {
                            what: format!("GET Namespace {ns:?}"),
                            source,
                        })?;
                if let Some(found) = found {
                    namespace_labels
                        .insert(ns.to_owned(), found.metadata.labels.unwrap_or_default());
                }
            }
        }
        let mut inputs = OwnedInputs::new(gateway, self.template.clone());
        inputs.namespace_labels = namespace_labels;
        inputs.class = class;
        inputs.configuration = configuration;
        inputs.deployment = deployment;
        inputs.routes = routes;
        Ok(Gathered::Inputs(inputs))
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        let api = Api::<DynamicObject>::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
        );
        self.verb = write::verb(&write);
        match write {
            DeploymentWrite::Create(desired) => write::create(&api, desired).await.outcome,
            DeploymentWrite::Update { desired, .. } => write::replace(&api, desired).await.outcome,
        }
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, FreshError> {
        let api = Api::<cached::Gateway>::namespaced(self.client.clone(), &self.namespace);
        write::patch_status(&api, &self.name, &patch)
            .await
            .map(|(written, _)| written)
            .map_err(|source| FreshError::Api {
                what: "PATCH Gateway status".into(),
                source,
            })
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        if let Some(recorder) = &self.recorder {
            let reference = k8s_openapi::api::core::v1::ObjectReference {
                api_version: Some("gateway.networking.k8s.io/v1".into()),
                kind: Some("Gateway".into()),
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..Default::default()
            };
            recorder.record(&reference, events, self.verb).await;
        }
    }
}
