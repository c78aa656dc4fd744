//! Typed errors for input the crate cannot work with.

/// A snapshot, setting or template that the crate cannot reconcile. The message names the
/// object and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// A field the crate needs is missing (or empty).
    #[error("{object}: {field} is required")]
    MissingField {
        /// The object, e.g. `Gateway "default/gw"`.
        object: String,
        /// The field path, e.g. `metadata.uid`.
        field: &'static str,
    },
    /// A generation below zero.
    #[error("{object}: {field} must not be negative (got {value})")]
    NegativeGeneration {
        /// The object.
        object: String,
        /// The field path.
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// The observed Deployment is not the one this Gateway's LB Deployment would be.
    #[error("Deployment {found:?} is not the LB Deployment {expected:?} of this Gateway")]
    NotTheLbDeployment {
        /// `namespace/name` of the Deployment given.
        found: String,
        /// `namespace/name` the LB Deployment has.
        expected: String,
    },
    /// A setting that would make the crate write invalid objects.
    #[error("settings: {field}: {why}")]
    InvalidSetting {
        /// The setting, camelCase.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// JSON that does not have the shape of the object.
    #[error("{object}: {why}")]
    Malformed {
        /// The object (or file).
        object: String,
        /// What is wrong, with the position when known.
        why: String,
    },
}
