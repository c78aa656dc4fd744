//! The Deployment write a plan asks for, and its kind as scenario files name it.

use crate::wire::Deployment;

/// The write of the LB Deployment that a [`PendingWrite`](super::PendingWrite) asks for.
#[derive(Debug, Clone, PartialEq)]
// Not `#[non_exhaustive]`: a controller must perform every kind of write, so a new one must
// fail to compile in its match, not fall into a wildcard arm.
pub enum DeploymentWrite {
    /// Create this Deployment.
    Create(Deployment),
    /// Replace the observed Deployment with this one; `drift` says which fields differ.
    Update {
        /// The desired Deployment (it carries the observed `resourceVersion`).
        desired: Deployment,
        /// The drifted field paths, e.g. `spec.template.spec.containers[router].image`.
        drift: Vec<String>,
    },
}

impl DeploymentWrite {
    /// The Deployment to write: the one to create, or the desired one to replace the
    /// observed with.
    pub fn desired(&self) -> &Deployment {
        match self {
            DeploymentWrite::Create(desired) | DeploymentWrite::Update { desired, .. } => desired,
        }
    }

    /// The Deployment to write, by value: the request body of the create or the replace.
    pub fn into_desired(self) -> Deployment {
        match self {
            DeploymentWrite::Create(desired) | DeploymentWrite::Update { desired, .. } => desired,
        }
    }

    /// The drifted field paths of an update; empty for a create.
    pub fn drift(&self) -> &[String] {
        match self {
            DeploymentWrite::Create(_) => &[],
            DeploymentWrite::Update { drift, .. } => drift,
        }
    }

    /// [`WriteKind::Create`] or [`WriteKind::Update`].
    pub fn kind(&self) -> WriteKind {
        match self {
            DeploymentWrite::Create(_) => WriteKind::Create,
            DeploymentWrite::Update { .. } => WriteKind::Update,
        }
    }
}

/// What a reconcile did to the LB Deployment, spelled `Create`, `Update` or `None` (as
/// scenario files and the timeline write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteKind {
    /// [`DeploymentWrite::Create`].
    Create,
    /// [`DeploymentWrite::Update`].
    Update,
    /// No write: the plan was settled at once.
    None,
}

impl WriteKind {
    /// `Create`, `Update` or `None`.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteKind::Create => "Create",
            WriteKind::Update => "Update",
            WriteKind::None => "None",
        }
    }

    /// The kind named by `Create`, `Update` or `None`.
    pub fn from_name(name: &str) -> Option<WriteKind> {
        [WriteKind::Create, WriteKind::Update, WriteKind::None]
            .into_iter()
            .find(|a| a.as_str() == name)
    }
}

impl std::fmt::Display for WriteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
