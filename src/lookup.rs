//! What a controller needs to find and watch the objects of a reconcile: the LB
//! Deployment's name, labels and annotations, which GatewayConfiguration a Gateway uses,
//! which Gateway a route names and which Gateway a Deployment belongs to.
//!
//! A controller keys its caches and triggers by these, so that a change to a route, a
//! GatewayConfiguration or an LB Deployment wakes the Gateway it concerns:
//!
//! - the LB Deployment of Gateway `NAME` is [`deployment_name`] in the Gateway's namespace
//!   (`deploymentPrefix + NAME`, shortened with a hash past 63 characters),
//!   labelled [`MANAGED_BY_LABEL`]`=`[`MANAGED_BY`] (a label selector for a watch of the
//!   LB Deployments alone) and [`GATEWAY_NAME_LABEL`]`=`[`gateway_name_label`], and
//!   controlled (its controller `ownerReference`) by the Gateway: [`deployment_gateway`]
//!   reads that reference back. A long name is shortened, so nothing maps a Deployment to
//!   its Gateway by its name;
//! - it carries the GatewayConfiguration generation and uid it was written for in
//!   [`generation_annotation`] and [`uid_annotation`];
//! - a Gateway uses the GatewayConfiguration of [`configuration_ref`]: its own
//!   `infrastructure.parametersRef` (in its namespace), else its GatewayClass's
//!   `spec.parametersRef` (in the namespace the class names); a class's own default is
//!   [`class_configuration_ref`]. [`parameters_ref`] and [`is_ours`] are the two steps
//!   behind them, which validation reports one by one;
//! - an L34Route concerns the Gateways its `parentRefs` name: [`parent_gateway`] reads one
//!   parent reference as the crate does, [`names_gateway`] says whether a route names a
//!   given Gateway (a trigger), and [`route_attaches`] whether it also attaches, that is
//!   whether an accepted listener of the Gateway admits it (`allowedRoutes`): a listener
//!   is accepted when its protocol is one the LB carries ([`listener_accepted`]).
//!
//! ```
//! use gateway_reconcile::{Settings, lookup};
//!
//! let settings = Settings::default();
//! assert_eq!(lookup::deployment_name(&settings, "gw"), "sllbr-gw");
//! assert_eq!(
//!     format!("{}={}", lookup::MANAGED_BY_LABEL, lookup::MANAGED_BY),
//!     "app.kubernetes.io/managed-by=gateway-controller.meridio-2.nordix.org"
//! );
//! ```
//!
//! Its parts, one file each: the LB Deployment (`deployment`), which GatewayConfiguration
//! a Gateway uses (`configuration`) and which Gateway a route names (`parents`). The
//! stages of a reconcile take these facts from here.

mod configuration;
mod deployment;
mod parents;

pub use configuration::{
    ConfigurationRef, ParametersRef, class_configuration_ref, class_parameters_ref,
    configuration_ref, is_ours, parameters_ref,
};
pub use deployment::{
    GATEWAY_NAME_LABEL, MANAGED_BY, MANAGED_BY_LABEL, OwnerGateway, deployment_gateway,
    deployment_name, gateway_name_label, generation_annotation, uid_annotation,
};
pub(crate) use parents::{Admission, MAX_LISTENERS, is_route_kind};
pub use parents::{
    GATEWAY_API_GROUP, ROUTE_GROUP, ROUTE_KIND, SUPPORTED_PROTOCOLS, kinds_admit_routes,
    listener_accepted, names_gateway, parent_gateway, route_attaches, uses_namespace_selector,
};
