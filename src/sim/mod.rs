//! A simulated API server and scenario runner, to drive the crate as a cluster would.
//!
//! - [`cluster::Cluster`]: the simulated API server for one Gateway and what surrounds it.
//! - [`scenario::Scenario`]: the scenario file format of SPEC §7, its parser and runner.
//! - [`api_validation`]: what the API server refuses in a written Deployment.
//! - [`merge_patch`]: RFC 7386 JSON merge patch, used by both.
//! - [`strict_json`]: scenario JSON without duplicate keys, the line of a key path, and
//!   serde's type errors in plain words.

pub mod api_validation;
pub mod cluster;
pub mod defaulting;
pub mod merge_patch;
pub mod scenario;
pub mod strict_json;
