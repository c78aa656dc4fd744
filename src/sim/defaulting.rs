//! What the API server does to a Deployment it stores: defaulting and quantity normalization.

use crate::wire::Deployment;

/// Applies typical API-server defaulting and normalization to a written Deployment.
pub fn apply_server_defaults(deployment: &mut Deployment) {
    let _ = deployment;
    todo!("defaulting")
}
