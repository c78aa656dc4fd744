//! The objects a [`Cluster`] holds, as Kubernetes JSON, and the shape each kind must have.

use std::fmt;

use serde_json::{Map, Value};

use super::{Cluster, ClusterError};
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The objects a [`Cluster`] starts with, as Kubernetes JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Objects {
    /// The GatewayClass; `None` when it does not exist.
    pub gateway_class: Option<Value>,
    /// The Gateway.
    pub gateway: Value,
    /// The GatewayConfiguration; `None` when it does not exist.
    pub configuration: Option<Value>,
    /// The LB Deployment; `None` when it does not exist. Stored as written (no defaulting).
    pub deployment: Option<Deployment>,
    /// The LB Deployment template; `None` = [`crate::template::default_template`].
    pub template: Option<Deployment>,
    /// The L34Routes, read: a long list held as JSON values costs about 20× its text.
    pub routes: Vec<L34Route>,
}

/// One of the objects a [`Cluster`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The GatewayClass.
    GatewayClass,
    /// The Gateway.
    Gateway,
    /// The GatewayConfiguration.
    Configuration,
    /// The LB Deployment.
    Deployment,
    /// The LB Deployment template.
    Template,
    /// The list of L34Routes.
    Routes,
}

impl Kind {
    /// Every kind, in the order the scenario format lists them.
    pub const ALL: [Kind; 6] = [
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::Configuration,
        Kind::Deployment,
        Kind::Template,
        Kind::Routes,
    ];

    /// The key the scenario format uses (`gatewayClass`, `gateway`, `configuration`,
    /// `deployment`, `template`, `routes`).
    pub fn key(self) -> &'static str {
        match self {
            Kind::GatewayClass => "gatewayClass",
            Kind::Gateway => "gateway",
            Kind::Configuration => "configuration",
            Kind::Deployment => "deployment",
            Kind::Template => "template",
            Kind::Routes => "routes",
        }
    }

    /// The kind named by a scenario key.
    pub fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// The Deployment-shaped objects (the LB Deployment and the template) are held as
/// [`Deployment`]s, compactly; the other kinds as JSON values. These read and write the
/// latter: `None` (or nothing done) for a Deployment-shaped kind and the routes.
impl Cluster {
    pub(crate) fn stored(&self, kind: Kind) -> Option<&Value> {
        match kind {
            Kind::GatewayClass => self.gateway_class.as_ref(),
            Kind::Gateway => Some(&self.gateway),
            Kind::Configuration => self.configuration.as_ref(),
            Kind::Deployment | Kind::Template | Kind::Routes => None,
        }
    }

    /// Takes a JSON object out of its slot (the Gateway's is left `null` until [`set`]
    /// fills it again).
    ///
    /// [`set`]: Cluster::set
    pub(super) fn take(&mut self, kind: Kind) -> Option<Value> {
        match kind {
            Kind::GatewayClass => self.gateway_class.take(),
            Kind::Gateway => Some(std::mem::take(&mut self.gateway)),
            Kind::Configuration => self.configuration.take(),
            Kind::Deployment | Kind::Template | Kind::Routes => None,
        }
    }

    /// Stores a JSON object (the Gateway, or one of the optional ones).
    pub(super) fn set(&mut self, kind: Kind, value: Value) {
        match kind {
            Kind::Gateway => self.gateway = value,
            Kind::GatewayClass => self.gateway_class = Some(value),
            Kind::Configuration => self.configuration = Some(value),
            Kind::Deployment | Kind::Template | Kind::Routes => {}
        }
    }
}

/// Checks that an object deserializes into its kind's wire type.
pub(crate) fn check(kind: Kind, value: Option<&Value>) -> Result<(), ClusterError> {
    let Some(value) = value else { return Ok(()) };
    match kind {
        Kind::GatewayClass => typed::<GatewayClass>(kind, value).map(drop),
        Kind::Gateway => typed::<Gateway>(kind, value).map(drop),
        Kind::Configuration => typed::<GatewayConfiguration>(kind, value).map(drop),
        // A Deployment is held whole as any JSON object: checking that needs no copy.
        Kind::Deployment | Kind::Template if value.is_object() => Ok(()),
        Kind::Deployment | Kind::Template => typed::<Deployment>(kind, value).map(drop),
        Kind::Routes => typed::<Vec<L34Route>>(kind, value).map(drop),
    }
}

pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    kind: Kind,
    value: &Value,
) -> Result<T, ClusterError> {
    if kind != Kind::Routes && !value.is_object() {
        return Err(ClusterError::Malformed {
            kind,
            why: "must be a JSON object".into(),
        });
    }
    typed_at(value).map_err(|(path, why)| ClusterError::Malformed {
        kind,
        why: match path {
            Some(path) => format!("{path}: {why}"),
            None => why,
        },
    })
}

/// Reads `value` in place (no copy of a large object); on error, the key path of the wrong
/// value (`spec.internalSubnets[0].cidr`) and what is wrong with it.
pub(crate) fn typed_at<T: serde::de::DeserializeOwned>(
    value: &Value,
) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let why = crate::sim::strict_json::plain_message(&e.into_inner().to_string());
        ((path != ".").then_some(path), why)
    })
}

/// The object's `metadata`, created when missing; `None` when the object is not an object
/// (the checks keep every stored object an object).
pub(super) fn metadata(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let meta = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert(Value::Null);
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut()
}

/// A Deployment's `metadata`, created when missing.
pub(super) fn deployment_metadata(deployment: &mut Deployment) -> &mut crate::wire::tree::Map {
    crate::json::object_mut(&mut deployment.object, &["metadata"])
}

#[cfg(test)]
mod tests;
