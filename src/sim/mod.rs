//! A simulated API server and scenario runner, to drive the crate as a cluster would.

pub mod defaulting;
