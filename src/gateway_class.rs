//! The GatewayClass's own status: its `Accepted` condition, decided from the class alone.
//!
//! A Gateway API implementation sets `Accepted` on the GatewayClasses it owns, so that
//! `kubectl get gatewayclass` shows them accepted. A class needs no Gateway for that, so
//! this is a separate call from [`plan`](crate::plan):
//!
//! | the class | `Accepted` |
//! |---|---|
//! | another controller's (`spec.controllerName` is not ours) | untouched: its owner writes it |
//! | ours, no `spec.parametersRef` | `True`/`Accepted`/`GatewayClass accepted by CONTROLLER_NAME` |
//! | ours, `spec.parametersRef` of another group or kind | `False`/`InvalidParameters`/`unsupported parametersRef: group="G" kind="K" (expected meridio-2.nordix.org/GatewayConfiguration)` |
//! | ours, `spec.parametersRef` without `namespace` | `False`/`InvalidParameters`/`parametersRef.namespace is required for a GatewayConfiguration` |
//! | ours, the GatewayConfiguration `NS/NAME` it names does not exist | `False`/`InvalidParameters`/`GatewayConfiguration "NS/NAME" not found` |
//! | ours, the GatewayConfiguration it names exists | `True`/`Accepted`/`GatewayClass accepted by CONTROLLER_NAME` |
//!
//! On a class that is ours, whatever its `Accepted`, `status.supportedFeatures` is the
//! setting [`Settings::supported_features`] as `[{"name": N}]`, sorted by name (GEP-2162:
//! the Gateway API requires it, and its conformance suite reads the features from it); a
//! class that is not ours keeps what it has.
//!
//! A class's `spec.parametersRef` names the **default parameters** of those of its
//! Gateways that name none themselves (GEP-1867): a Gateway's own
//! `infrastructure.parametersRef` replaces the class's whole (no field merge). The
//! configuration's content never flips the class: it is judged on each Gateway that uses
//! it (its merged network attachments depend on the template), so an existing
//! configuration, readable or not, accepts the class. Whether it exists is the caller's
//! input ([`ConfigurationPresence`]): the caller looks up
//! [`lookup::class_configuration_ref`] and settles
//! the class again when that configuration appears or disappears. A class whose
//! `controllerName` changes away from ours keeps the `Accepted` written for it until its new
//! owner writes its own.
//!
//! The bookkeeping is the Gateway's: `observedGeneration` is the class's generation,
//! `lastTransitionTime` moves only when the status changes, foreign conditions are never
//! touched, an `Accepted` carrying an `observedGeneration` above the class's generation
//! means the snapshot is stale (nothing is written), and nothing is written when nothing
//! changed (the conditions and the features alike). The write is a merge patch of the
//! `status` subresource carrying the observed `resourceVersion` ([`StatusPatch`]).
//!
//! ```
//! use gateway_reconcile::gateway_class::{ConfigurationPresence, settle_class};
//! use gateway_reconcile::wire::GatewayClass;
//! use gateway_reconcile::{Settings, lookup};
//!
//! let class: GatewayClass = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "meridio", "generation": 1, "resourceVersion": "5"},
//!     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
//! })).unwrap();
//! let settings = Settings::default();
//! // The class names no configuration: nothing to look up.
//! assert_eq!(lookup::class_configuration_ref(&settings, &class), None);
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//! let settled = settle_class(&settings, &class, ConfigurationPresence::Missing, now).unwrap();
//! let patch = settled.status_patch().unwrap();
//! assert_eq!(patch.resource_version(), Some("5"));
//! let accepted = &patch.body()["status"]["conditions"][0];
//! assert_eq!(accepted["status"], "True");
//! assert_eq!(accepted["message"], "GatewayClass accepted by meridio-2.nordix.org/gateway-controller");
//! ```

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::conditions::{
    ACCEPTED, Change, ConditionTypes, Wanted, find, merge_changed, reason, status,
};
use crate::error::InputError;
use crate::lookup;
use crate::reconcile::StatusPatch;
use crate::reconcile::settlement::condition_value;
use crate::settings::Settings;
use crate::validate::Invalid;
use crate::wire::{Condition, GatewayClass};

/// What to write on a GatewayClass: its conditions and supported features, or nothing.
#[must_use = "write the class status when there is one"]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClassSettlement {
    /// The class's whole condition list to write, or `None` when it is not ours, the
    /// snapshot is stale, or nothing changed.
    pub conditions: Option<Vec<Condition>>,
    /// The names of `status.supportedFeatures` to write (the setting, sorted by name), or
    /// `None` when the class is not ours, the snapshot is stale, or the class carries them
    /// already.
    pub supported_features: Option<Vec<String>>,
    /// Whether an `Accepted` of ours carries an `observedGeneration` above the class's:
    /// the snapshot is older than our last write; look again at once.
    pub stale: bool,
    resource_version: Option<String>,
}

impl ClassSettlement {
    /// The JSON merge patch for the class's `status` subresource, with the observed
    /// `resourceVersion` as its precondition; `None` when there is nothing to write. It
    /// replaces `status.conditions` whole when they changed, and `status.supportedFeatures`
    /// (`[{"name": N}]`) when they changed.
    pub fn status_patch(&self) -> Option<StatusPatch> {
        if self.conditions.is_none() && self.supported_features.is_none() {
            return None;
        }
        let mut fields = Map::new();
        if let Some(conditions) = &self.conditions {
            fields.insert(
                "conditions".into(),
                Value::Array(conditions.iter().map(condition_value).collect()),
            );
        }
        if let Some(features) = &self.supported_features {
            let features = features.iter().map(|name| json!({ "name": name }));
            fields.insert("supportedFeatures".into(), Value::Array(features.collect()));
        }
        Some(StatusPatch::of_status(
            fields,
            self.resource_version.clone(),
        ))
    }
}

/// Whether the GatewayConfiguration a GatewayClass names as its default
/// ([`lookup::class_configuration_ref`]) exists: an input of [`settle_class`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigurationPresence {
    /// It exists, readable or not (its content is judged on each Gateway that uses it).
    Exists,
    /// It does not exist; also what to pass when the class names none, or names one of
    /// another kind or without a namespace (the argument is then not looked at).
    Missing,
}

impl ConfigurationPresence {
    /// Whether the GatewayConfiguration `class` names as its default exists: the core
    /// decides which one (our group and kind, with a namespace: `lookup::class_configuration_ref`)
    /// and asks `exists` about that namespace and name only; a class that names none is
    /// [`Missing`](ConfigurationPresence::Missing) without asking.
    ///
    /// ```
    /// use gateway_reconcile::Settings;
    /// use gateway_reconcile::gateway_class::ConfigurationPresence;
    /// use gateway_reconcile::wire::GatewayClass;
    ///
    /// let class: GatewayClass = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "meridio"},
    ///     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
    ///         "parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
    ///             "name": "conf", "namespace": "ns"}}
    /// })).unwrap();
    /// let settings = Settings::default();
    /// let presence = ConfigurationPresence::of_class(&settings, &class, |ns, name| (ns, name) == ("ns", "conf"));
    /// assert_eq!(presence, ConfigurationPresence::Exists);
    /// ```
    pub fn of_class(
        settings: &Settings,
        class: &GatewayClass,
        exists: impl FnOnce(&str, &str) -> bool,
    ) -> Self {
        crate::lookup::class_configuration_ref(settings, class)
            .is_some_and(|named| exists(named.namespace, named.name))
            .into()
    }
}

impl From<bool> for ConfigurationPresence {
    /// `true`: [`ConfigurationPresence::Exists`].
    fn from(exists: bool) -> Self {
        if exists {
            ConfigurationPresence::Exists
        } else {
            ConfigurationPresence::Missing
        }
    }
}

/// Decides the class's `Accepted` (see the [module docs](self)); `configuration` says
/// whether the GatewayConfiguration the class names
/// ([`lookup::class_configuration_ref`]) exists. Fails on settings the crate cannot
/// work with, and on a negative class generation (the API server never returns one).
pub fn settle_class(
    settings: &Settings,
    class: &GatewayClass,
    configuration: ConfigurationPresence,
    now: Timestamp,
) -> Result<ClassSettlement, InputError> {
    settings.validate()?;
    let mut settled = ClassSettlement {
        conditions: None,
        supported_features: None,
        stale: false,
        resource_version: class.metadata.resource_version.clone(),
    };
    if class.spec.controller_name != settings.controller_name {
        return Ok(settled);
    }
    let generation = class.metadata.generation.unwrap_or(0);
    if generation < 0 {
        // The API server never returns one, and refuses an observedGeneration below zero.
        return Err(InputError::NegativeGeneration {
            object: format!(
                "GatewayClass {:?}",
                class.metadata.name.as_deref().unwrap_or("")
            ),
            field: "metadata.generation",
            value: generation,
        });
    }
    let observed = &class.status.conditions;
    if find(observed, ACCEPTED)
        .and_then(|c| c.observed_generation)
        .is_some_and(|g| g > generation)
    {
        settled.stale = true;
        return Ok(settled);
    }
    let controller = &settings.controller_name;
    // The Gateway's messages for the same faults (validation), so that both read alike.
    let refused = |invalid: Invalid| {
        Wanted::new(
            status::FALSE,
            reason::INVALID_PARAMETERS,
            invalid.to_string(),
        )
    };
    let wanted = match lookup::class_parameters_ref(class) {
        Some(reference) if !lookup::is_ours(settings, &reference) => {
            refused(Invalid::unsupported(settings, &reference))
        }
        Some(reference) => match reference.configuration() {
            None => refused(Invalid::NamespaceRequired),
            Some(target) if configuration == ConfigurationPresence::Missing => {
                refused(Invalid::ConfigurationNotFound {
                    name: target.to_string(),
                })
            }
            Some(_) => accepted(controller),
        },
        None => accepted(controller),
    };
    let types = ConditionTypes::of_valid(settings);
    settled.conditions = merge_changed(
        observed,
        &types,
        &[(ACCEPTED, Change::Set(wanted))],
        generation,
        now,
    );
    let mut features: Vec<&str> = settings
        .supported_features
        .iter()
        .map(String::as_str)
        .collect();
    features.sort_unstable();
    if class.status.supported_feature_names().as_deref() != Some(features.as_slice()) {
        settled.supported_features = Some(features.into_iter().map(str::to_owned).collect());
    }
    Ok(settled)
}

/// `True`/`Accepted`/`GatewayClass accepted by CONTROLLER_NAME`.
fn accepted(controller: &str) -> Wanted {
    Wanted::new(
        status::TRUE,
        reason::ACCEPTED,
        format!("GatewayClass accepted by {controller}"),
    )
}

#[cfg(test)]
mod tests;
