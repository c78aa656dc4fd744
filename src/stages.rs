//! The stages a reconcile runs through; crate-private.
//!
//! [`plan`](crate::plan) runs them all, in this order, so an embedder calls none of them:
//!
//! 1. [`validate`]: the Gateway's parameters (GatewayConfiguration, template,
//!    infrastructure labels and annotations), first failure wins;
//! 2. [`render`]: the desired LB Deployment, with [`nad`] for the Multus networks
//!    annotation;
//! 3. [`drift`]: the desired against the observed Deployment, by meaning;
//! 4. [`addresses`]: the Gateway's `status.addresses` from its L34Routes;
//! 5. [`listeners`]: the Gateway's `status.listeners`, once the conditions are settled.
//!
//! The rules each one implements are stated once, in the public docs of
//! [`reconcile`](crate::reconcile) ("The rules a plan applies"), so that an embedder reads
//! them where it calls [`plan`](crate::plan). The facts they share with a controller that
//! finds and watches the objects (the LB Deployment's name, labels and annotations, a
//! route's parent Gateway and whether it attaches) are defined in
//! [`lookup`](crate::lookup), which they import. Nothing else is public: the CRD bounds
//! validation enforces are the CRDs' own (a webhook or a schema takes them from the CRDs),
//! and the rest is reached through `plan`.

pub mod addresses;
pub mod drift;
pub mod listeners;
pub mod nad;
pub mod render;
pub mod validate;
