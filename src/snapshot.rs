//! What the controller saw: the objects one reconcile decides from.

use crate::error::InputError;
use crate::reconcile::WriteRecord;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The objects one reconcile reads, borrowed from the controller's caches.
///
/// ```
/// use gateway_reconcile::{Snapshot, template};
/// use gateway_reconcile::wire::Gateway;
/// let gateway: Gateway = serde_json::from_str(r#"{"metadata":{"name":"gw"}}"#).unwrap();
/// let template = template::default_template();
/// let snapshot = Snapshot::new(&gateway, &template);
/// assert!(snapshot.deployment.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    /// The Gateway's GatewayClass; `None` when it does not exist.
    pub gateway_class: Option<&'a GatewayClass>,
    /// The Gateway.
    pub gateway: &'a Gateway,
    /// The GatewayConfiguration named by `parametersRef`; `None` when not found.
    pub configuration: Option<&'a GatewayConfiguration>,
    /// The observed LB Deployment; `None` when not found.
    pub deployment: Option<&'a Deployment>,
    /// The LB Deployment template.
    pub template: &'a Deployment,
    /// Every L34Route that may attach to the Gateway (the crate filters by parentRefs).
    pub routes: &'a [L34Route],
    /// The caller's record of its last successful write of this Gateway's LB Deployment
    /// ([`Settlement::write_record`](crate::Settlement::write_record)); `None` when it has
    /// none (it never wrote it, or it restarted).
    pub write_record: Option<WriteRecord>,
}

impl<'a> Snapshot<'a> {
    /// A snapshot with only the Gateway and the template; add the rest with the `with_`
    /// methods.
    pub fn new(gateway: &'a Gateway, template: &'a Deployment) -> Self {
        Snapshot {
            gateway_class: None,
            gateway,
            configuration: None,
            deployment: None,
            template,
            routes: &[],
            write_record: None,
        }
    }

    /// Sets the GatewayClass.
    pub fn with_gateway_class(mut self, class: Option<&'a GatewayClass>) -> Self {
        self.gateway_class = class;
        self
    }

    /// Sets the GatewayConfiguration.
    pub fn with_configuration(mut self, configuration: Option<&'a GatewayConfiguration>) -> Self {
        self.configuration = configuration;
        self
    }

    /// Sets the observed LB Deployment.
    pub fn with_deployment(mut self, deployment: Option<&'a Deployment>) -> Self {
        self.deployment = deployment;
        self
    }

    /// Sets the L34Routes.
    pub fn with_routes(mut self, routes: &'a [L34Route]) -> Self {
        self.routes = routes;
        self
    }

    /// Sets the record of the last successful write of the LB Deployment.
    pub fn with_write_record(mut self, record: Option<WriteRecord>) -> Self {
        self.write_record = record;
        self
    }
}

/// The Gateway fields every decision needs, checked once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GatewayId<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub uid: &'a str,
    pub generation: i64,
}

impl<'a> GatewayId<'a> {
    /// Checks the Gateway's identity fields.
    pub(crate) fn of(gateway: &'a Gateway) -> Result<Self, InputError> {
        let meta = &gateway.metadata;
        let object = || match (&meta.namespace, &meta.name) {
            (Some(ns), Some(n)) => format!("Gateway {:?}", format!("{ns}/{n}")),
            (None, Some(n)) => format!("Gateway {n:?}"),
            _ => "Gateway".to_owned(),
        };
        let required = |v: &'a Option<String>, field| match v.as_deref() {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(InputError::MissingField {
                object: object(),
                field,
            }),
        };
        let name = required(&meta.name, "metadata.name")?;
        let namespace = required(&meta.namespace, "metadata.namespace")?;
        let uid = required(&meta.uid, "metadata.uid")?;
        let generation = meta.generation.ok_or_else(|| InputError::MissingField {
            object: object(),
            field: "metadata.generation",
        })?;
        if generation < 0 {
            return Err(InputError::NegativeGeneration {
                object: object(),
                field: "metadata.generation",
                value: generation,
            });
        }
        Ok(GatewayId {
            name,
            namespace,
            uid,
            generation,
        })
    }
}
