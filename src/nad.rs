//! The Multus networks annotation (`k8s.v1.cni.cncf.io/networks`): parse, merge, write.

/// The pod-template annotation that lists the secondary networks.
pub const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";

/// One network selection: a NetworkAttachmentDefinition and the interface it gets.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NetworkSelection {
    /// NAD name.
    pub name: String,
    /// NAD namespace (never empty once resolved).
    pub namespace: String,
    /// Interface name in the Pod.
    pub interface: String,
}
