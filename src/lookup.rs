//! What a controller needs to find and watch the objects of a reconcile: the LB
//! Deployment's name, labels and annotations, and which Gateway a route names.
//!
//! A controller keys its caches and triggers by these, so that a change to a route, a
//! GatewayConfiguration or an LB Deployment wakes the Gateway it concerns:
//!
//! - the LB Deployment of Gateway `NAME` is [`deployment_name`] in the Gateway's namespace,
//!   labelled [`MANAGED_BY_LABEL`]`=`[`MANAGED_BY`] (a label selector for a watch of the
//!   LB Deployments alone) and [`GATEWAY_NAME_LABEL`]`=NAME`, and controlled (its
//!   controller `ownerReference`) by the Gateway;
//! - it carries the GatewayConfiguration generation and uid it was written for in
//!   [`generation_annotation`] and [`uid_annotation`];
//! - an L34Route concerns the Gateways its `parentRefs` name: [`parent_gateway`] reads one
//!   parent reference as the crate does, [`names_gateway`] says whether a route names a
//!   given Gateway.
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

pub use crate::stages::addresses::{names_gateway, parent_gateway};
pub use crate::stages::render::{
    GATEWAY_NAME_LABEL, MANAGED_BY, MANAGED_BY_LABEL, deployment_name, generation_annotation,
    uid_annotation,
};
