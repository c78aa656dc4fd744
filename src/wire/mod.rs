//! Kubernetes wire types: the objects exactly as `kubectl get -o json` prints them.
//!
//! These types hold data and nothing else. They read camelCase JSON, ignore fields they do
//! not model on read (except [`Deployment`], which keeps every field so that writing it back
//! loses nothing), and serialize back to valid Kubernetes JSON. Checks of required fields
//! happen when the crate plans (see `plan`), not here, so that a missing field becomes a typed error that
//! names the object and the field instead of a parse failure.
//!
//! A [`Deployment`] is held as a [`tree`]: JSON whose objects are sorted entries in one
//! allocation and whose short strings are inline, since a large Deployment is mostly small
//! objects and a `serde_json::Value` costs about five times as much for them.

mod configuration;
mod deployment;
mod gateway;
mod meta;
#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
pub mod resource;
mod route;
pub mod tree;

pub use configuration::{
    GatewayConfiguration, GatewayConfigurationSpec, HorizontalScaling, InternalSubnet, Nad,
    NetworkAttachment, VerticalScaling, VerticalScalingContainer,
};
pub use deployment::Deployment;
pub use gateway::{
    AllowedRoutes, ClassParametersReference, Gateway, GatewayAddress, GatewayClass,
    GatewayClassSpec, GatewayClassStatus, GatewayInfrastructure, GatewaySpec, GatewaySpecAddress,
    GatewayStatus, LabelSelector, LabelSelectorRequirement, Listener, ListenerStatus,
    ParametersReference, RouteGroupKind, RouteNamespaces,
};
pub use meta::{Condition, ObjectMeta, OwnerReference};
pub use route::{L34Route, L34RouteSpec, ParentReference};

/// Reads one object from JSON text; the error names the object and says where the text is
/// wrong (line and column).
///
/// ```
/// use gateway_reconcile::wire::{Gateway, from_json};
/// let e = from_json::<Gateway>("Gateway", r#"{"metadata": {"generation": "7"}}"#).unwrap_err();
/// assert_eq!(e.to_string(), r#"Gateway: invalid type: string "7", expected i64 at line 1 column 31"#);
/// ```
pub fn from_json<T: serde::de::DeserializeOwned>(
    object: &str,
    text: &str,
) -> Result<T, crate::InputError> {
    serde_json::from_str(text).map_err(|e| crate::InputError::Malformed {
        object: object.to_owned(),
        why: e.to_string(),
    })
}
