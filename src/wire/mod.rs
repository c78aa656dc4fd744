//! Kubernetes wire types: the objects exactly as `kubectl get -o json` prints them.
//!
//! These types hold data and nothing else. They read camelCase JSON, ignore fields they do
//! not model on read (except [`Deployment`], which keeps every field so that writing it back
//! loses nothing), and serialize back to valid Kubernetes JSON. Checks of required fields
//! happen when the crate plans (see `plan`), not here, so that a missing field becomes a typed error that
//! names the object and the field instead of a parse failure.

mod configuration;
mod deployment;
mod gateway;
mod meta;
mod route;

pub use configuration::{
    GatewayConfiguration, GatewayConfigurationSpec, HorizontalScaling, InternalSubnet, Nad,
    NetworkAttachment, VerticalScaling, VerticalScalingContainer,
};
pub use deployment::Deployment;
pub use gateway::{
    Gateway, GatewayAddress, GatewayClass, GatewayClassSpec, GatewayInfrastructure, GatewaySpec,
    GatewayStatus, ParametersReference,
};
pub use meta::{Condition, ObjectMeta, OwnerReference};
pub use route::{L34Route, L34RouteSpec, ParentReference};
