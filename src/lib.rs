//! gateway-reconcile: the decision logic of a Gateway API controller that runs one
//! load-balancer Deployment per Gateway. (Crate docs are written in full below the modules.)
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod addresses;
pub mod cidr;
pub mod conditions;
pub mod drift;
mod error;
mod json;
pub mod nad;
pub mod outcome;
pub mod quantity;
pub mod reconcile;
pub mod render;
pub mod rollout;
mod settings;
pub mod sim;
mod snapshot;
pub mod template;
pub mod validate;
pub mod wire;

pub use error::InputError;
pub use outcome::{ApiError, FailureClass, WriteOutcome};
pub use reconcile::{Action, Plan, Requeue, Settlement, plan};
pub use settings::{Label, Settings, format_duration, parse_duration};
pub use snapshot::Snapshot;
