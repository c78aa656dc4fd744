//! A simulated API server and scenario runner, to drive the crate as a cluster would, for
//! this crate's tests and for embedders' own.
//!
//! - [`cluster::Cluster`]: the simulated API server for one Gateway and what surrounds it
//!   (object store, write semantics, the crude Deployment controller, the reconcile driver).
//! - [`scenario::Scenario`]: the scenario file format, its reader and runner,
//!   generic over a [`scenario::Backend`] (the simulated cluster, or a real API server).
//! - [`defaulting`]: the API server's defaulting of a written Deployment.
//! - [`api_validation`]: what the API server refuses in a written Deployment.
//! - [`merge_patch`]: RFC 7386 JSON merge patch.
//! - [`strict_json`]: JSON without duplicate keys (scenario files and the command line's
//!   inputs), and serde's type errors in plain words.

pub mod api_validation;
pub mod cluster;
pub mod defaulting;
/// RFC 7386 JSON merge patch, as `kubectl patch --type merge` and the status subresource
/// apply it (also [`StatusPatch::apply_to`](crate::StatusPatch::apply_to)).
pub mod merge_patch {
    pub use crate::merge_patch::{apply, apply_to_object};
}
pub mod scenario;
pub mod strict_json;
