//! The LB Deployment template: the crate's built-in default, and loading one from JSON.

use crate::wire::Deployment;

/// The built-in LB Deployment template.
pub fn default_template() -> Deployment {
    todo!()
}
