//! The stages a reconcile runs through, and the rules each one implements.
//!
//! [`plan`](crate::plan) runs them all, in this order, so an embedder calls none of them:
//! they are public for what their docs state (which parameters are `InvalidParameters`
//! and with which message, what the LB Deployment looks like, what counts as drift, how
//! routes become addresses) and for tests, benchmarks and tools that look at one stage
//! alone.
//!
//! 1. [`validate`]: the Gateway's parameters (GatewayConfiguration, template,
//!    infrastructure labels and annotations), first failure wins;
//! 2. [`render`]: the desired LB Deployment, with [`nad`] for the Multus networks
//!    annotation;
//! 3. [`drift`]: the desired against the observed Deployment, by meaning;
//! 4. [`addresses`]: the Gateway's `status.addresses` from its L34Routes.
//!
//! The conditions and requeue that follow are [`reconcile`](crate::reconcile)'s. The
//! names a controller needs to find and watch the objects (the LB Deployment's name and
//! labels, a route's parent Gateway) are gathered in [`lookup`](crate::lookup).

pub mod addresses;
pub mod drift;
pub mod nad;
pub mod render;
pub mod validate;
