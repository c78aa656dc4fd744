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
//! let mut port = FreshPort::new(client, template, "default", "my-gateway");
//! let reconciled = driver.reconcile(&mut port, jiff::Timestamp::now()).await?;
//! println!("look again: {:?}", reconciled.requeue);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use gateway_reconcile::reconcile::{Labels, Port, Reader, StatusWrite, View};
use gateway_reconcile::{
    DeploymentWrite, InputError, Requeue, StatusPatch, WriteKind, WriteOutcome, events::Event, wire,
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
    template: Arc<wire::Deployment>,
    namespace: String,
    name: String,
    recorder: Option<events::Recorder>,
    /// The verb of this reconcile's Deployment write, for the Events' action.
    verb: &'static str,
}

impl FreshPort {
    /// The port of Gateway `namespace/name`, with `template`; it records no Event until
    /// [`with_recorder`](FreshPort::with_recorder). (The driver holds the settings: which
    /// objects the port reads is the driver's decision.)
    pub fn new(
        client: Client,
        template: Arc<wire::Deployment>,
        namespace: &str,
        name: &str,
    ) -> Self {
        FreshPort {
            client,
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

    /// GET one object; `None` when it does not exist. It is kept as read, readable or not
    /// (the driver says what an unreadable one means).
    async fn get<K>(
        &self,
        api: Api<Cached<K>>,
        name: &str,
        what: &str,
    ) -> Result<Option<Cached<K>>, FreshError>
    where
        Cached<K>: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        api.get_opt(name).await.map_err(|source| FreshError::Api {
            what: format!("GET {what} {name:?}"),
            source,
        })
    }
}

/// The reads GET each object by its key, and LIST the routes (of every namespace: any may
/// name the Gateway).
impl Reader for FreshPort {
    type Error = FreshError;
    type Gateway = Cached<wire::Gateway>;
    type Class = Cached<wire::GatewayClass>;
    type Configuration = Cached<wire::GatewayConfiguration>;
    type Deployment = Cached<wire::Deployment>;

    async fn gateway(&mut self) -> Result<View<Self::Gateway>, FreshError> {
        let api = Api::namespaced(self.client.clone(), &self.namespace);
        Ok(match self.get(api, &self.name, "Gateway").await? {
            Some(gateway) => View::Ready(gateway),
            // Gone: nothing to reconcile.
            None => View::Later(Requeue::AwaitChange),
        })
    }

    async fn class(&mut self, name: &str) -> Result<Option<Self::Class>, FreshError> {
        let api = Api::all(self.client.clone());
        self.get(api, name, "GatewayClass").await
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Configuration>, FreshError> {
        let api = Api::namespaced(self.client.clone(), namespace);
        self.get(api, name, "GatewayConfiguration").await
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Deployment>, FreshError> {
        let api = Api::namespaced(self.client.clone(), namespace);
        self.get(api, name, "Deployment").await
    }

    async fn routes(&mut self, _: &str, _: &str) -> Result<Vec<wire::L34Route>, FreshError> {
        let routes = Api::<cached::L34Route>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(|source| FreshError::Api {
                what: "LIST L34Routes".into(),
                source,
            })?;
        Ok(routes
            .items
            .iter()
            .filter_map(|route| route.read().ok().cloned())
            .collect())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, FreshError> {
        let namespaces = Api::<k8s_openapi::api::core::v1::Namespace>::all(self.client.clone());
        let found = namespaces
            .get_metadata_opt(name)
            .await
            .map_err(|source| FreshError::Api {
                what: format!("GET Namespace {name:?}"),
                source,
            })?;
        Ok(found.map(|found| found.metadata.labels.unwrap_or_default()))
    }

    fn template(&mut self) -> Arc<wire::Deployment> {
        self.template.clone()
    }
}

impl Port for FreshPort {
    type Error = FreshError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
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
