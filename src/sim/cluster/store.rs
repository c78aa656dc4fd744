//! The objects a [`Cluster`] holds, as Kubernetes JSON, and the shape each kind must have.

use std::fmt;

use serde_json::Value;

use super::Namespaces;
use super::{Cluster, ClusterError};
use crate::gateway_class::ConfigurationPresence;
use crate::lookup;
use crate::read_at::Readable;
use crate::reconcile::StatusPatch;
use crate::wire::tree;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// The objects a [`Cluster`] starts with, as Kubernetes JSON.
///
/// The GatewayClass, the Gateway and the GatewayConfiguration are compact trees
/// ([`tree::Value`]; a `serde_json::Value` converts with `.into()`): a long list held as
/// `serde_json::Value`s costs about 30 times its text, a tree about 4 times.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Objects {
    /// The GatewayClass; `None` when it does not exist.
    pub gateway_class: Option<tree::Value>,
    /// The Gateway.
    pub gateway: tree::Value,
    /// The GatewayConfiguration; `None` when it does not exist.
    pub configuration: Option<tree::Value>,
    /// The LB Deployment; `None` when it does not exist. Stored as written (no defaulting).
    pub deployment: Option<Deployment>,
    /// The LB Deployment template; `None` = [`crate::template::default_template`].
    pub template: Option<Deployment>,
    /// The L34Routes, read: a long list held as JSON values costs about 20× its text.
    pub routes: Vec<L34Route>,
    /// The namespaces' labels (namespace → labels), for `allowedRoutes` selectors; a
    /// namespace not listed has none the controller can see.
    pub namespaces: Namespaces,
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
/// [`Deployment`]s, the other kinds as compact JSON trees. These read and write the
/// latter: `None` (or nothing done) for a Deployment-shaped kind and the routes.
impl Cluster {
    pub(crate) fn stored(&self, kind: Kind) -> Option<&tree::Value> {
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
    pub(super) fn take(&mut self, kind: Kind) -> Option<tree::Value> {
        match kind {
            Kind::GatewayClass => self.gateway_class.take(),
            Kind::Gateway => Some(std::mem::take(&mut self.gateway)),
            Kind::Configuration => self.configuration.take(),
            Kind::Deployment | Kind::Template | Kind::Routes => None,
        }
    }

    /// Stores a JSON object (the Gateway, or one of the optional ones).
    pub(super) fn set(&mut self, kind: Kind, value: tree::Value) {
        match kind {
            Kind::Gateway => self.gateway = value,
            Kind::GatewayClass => self.gateway_class = Some(value),
            Kind::Configuration => self.configuration = Some(value),
            Kind::Deployment | Kind::Template | Kind::Routes => {}
        }
    }
}

impl Cluster {
    /// The GatewayConfiguration `namespace/name`, as a controller's cache reads it (from the
    /// revision the reads lag at, if they do): the stored one when it has that key (a stored one without a namespace or a name matches
    /// any, as a hand-written scenario leaves them out), else none; an object the wire type
    /// cannot read is kept, with the reader's error naming the field path.
    pub(crate) fn read_configuration(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<Result<GatewayConfiguration, String>> {
        let value = self
            .reads()
            .configuration
            .filter(|stored| has_key(stored, namespace, name))?;
        Some(
            typed_at::<GatewayConfiguration>(value).map_err(|(path, why)| match path {
                Some(path) => format!("{path}: {why}"),
                None => why,
            }),
        )
    }

    /// Whether the GatewayConfiguration a class names as its default exists, as the
    /// controller reads it: the stored one when its namespace and name are those the class names, readable or not.
    pub(crate) fn class_configuration(&self, class: &GatewayClass) -> ConfigurationPresence {
        ConfigurationPresence::of_class(&self.settings, class, |namespace, name| {
            self.reads()
                .configuration
                .is_some_and(|stored| has_key(stored, namespace, name))
        })
    }

    /// The namespaces' labels the controller sees.
    pub fn namespace_labels(&self) -> &Namespaces {
        &self.namespaces
    }
}

/// Whether a stored object has the key `namespace/name`; a field it leaves out matches any
/// (as [`lookup::ConfigurationRef::matches`] says).
pub(crate) fn has_key(stored: &tree::Value, namespace: &str, name: &str) -> bool {
    let meta = |field: &str| {
        stored
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(tree::Value::as_str)
    };
    let reference = lookup::ConfigurationRef {
        namespace,
        name,
        from_class: false,
    };
    reference.matches(meta("namespace"), meta("name"))
}

/// A Gateway or GatewayClass created without `status` gets the CRD's default status, as
/// the real API server stores it: Gateway `Accepted` and `Programmed`, GatewayClass
/// `Accepted`, each `Unknown`/`Pending`/`Waiting for controller` at
/// `1970-01-01T00:00:00Z`, without `observedGeneration`. Other kinds, and an object given
/// with a `status`, are left as they are.
pub(crate) fn default_status(kind: Kind, object: &mut tree::Value) {
    let types: &[&str] = match kind {
        Kind::Gateway => &["Accepted", "Programmed"],
        Kind::GatewayClass => &["Accepted"],
        _ => return,
    };
    let Some(object) = object.as_object_mut() else {
        return;
    };
    if object.get("status").is_some_and(|s| !s.is_null()) {
        return;
    }
    let conditions = types
        .iter()
        .map(|type_| {
            serde_json::json!({
                "type": type_,
                "status": "Unknown",
                "reason": "Pending",
                "message": "Waiting for controller",
                "lastTransitionTime": "1970-01-01T00:00:00Z"
            })
        })
        .collect();
    object.insert(
        "status",
        tree::Value::from(serde_json::json!({ "conditions": Value::Array(conditions) })),
    );
}

/// Applies a status patch's `status` to a stored object, as the API server's status
/// subresource does ([`StatusPatch::apply_to`], on a tree).
pub(crate) fn apply_status(patch: &StatusPatch, object: &mut tree::Value) {
    if let Some(status) = patch.body().get("status") {
        crate::merge_patch::apply_to_tree(&mut object["status"], status);
    }
}

/// What a merge patch sets: the patch without its `null`s (removals), recursively, at the
/// patch's own cost. Over an object that reads as its kind, the patched object reads as its
/// kind when this does (serde reads each field on its own); when this does not, only the
/// whole object can say, as what this lacks (a required field beside a patched one) may be
/// in the object.
pub(crate) fn without_nulls(patch: &Value) -> Value {
    match patch {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether the merge `patch` changes `target` (`None`: the key is absent), found at the
/// patch's own cost: the values it replaces are compared, nothing else is read.
pub(crate) fn merge_changes(target: Option<&tree::Value>, patch: &Value) -> bool {
    match (patch, target) {
        (Value::Null, target) => target.is_some(),
        (Value::Object(patch), Some(tree::Value::Object(target))) => patch
            .iter()
            .any(|(key, value)| merge_changes(target.get(key), value)),
        (Value::Object(_), _) => true,
        (value, target) => target.is_none_or(|target| target != value),
    }
}

/// Checks that an object deserializes into its kind's wire type.
pub(crate) fn check(kind: Kind, value: Option<&impl Readable>) -> Result<(), ClusterError> {
    let Some(value) = value else { return Ok(()) };
    match kind {
        Kind::GatewayClass => typed::<GatewayClass>(kind, value).map(drop),
        Kind::Gateway => typed::<Gateway>(kind, value).map(drop),
        Kind::Configuration => typed::<GatewayConfiguration>(kind, value).map(drop),
        // A Deployment is held whole as any JSON object: checking that needs no copy.
        Kind::Deployment | Kind::Template if value.is_json_object() => Ok(()),
        Kind::Deployment | Kind::Template => typed::<Deployment>(kind, value).map(drop),
        Kind::Routes => typed::<Vec<L34Route>>(kind, value).map(drop),
    }
}

pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    kind: Kind,
    value: &impl Readable,
) -> Result<T, ClusterError> {
    if kind != Kind::Routes && !value.is_json_object() {
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

pub(crate) use crate::read_at::typed_at;

/// The object's `metadata`, created when missing; `None` when the object is not an object
/// (the checks keep every stored object an object).
pub(super) fn metadata(object: &mut tree::Value) -> Option<&mut tree::Map> {
    let meta = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert(tree::Value::Null);
    if !meta.is_object() {
        *meta = tree::Value::Object(tree::Map::new());
    }
    meta.as_object_mut()
}

/// A Deployment's `metadata`, created when missing.
pub(super) fn deployment_metadata(deployment: &mut Deployment) -> &mut crate::wire::tree::Map {
    crate::json::object_mut(&mut deployment.object, &["metadata"])
}

#[cfg(test)]
mod tests;
