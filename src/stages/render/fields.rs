//! The fields of the LB Deployment the controller owns: where each one is, and how drift
//! compares it. Render computes exactly these ([`super::render_owned`]), the update path
//! replaces exactly these in the observed Deployment ([`super::complete`]), and drift
//! compares them as declared here.
//!
//! Adding an owned field: a variant, its place in [`Field::ALL`], and its path, comparison
//! and render rule below (the compiler asks for all three); a new kind of rule is a
//! [`Rule`] variant, and the compiler asks render for it too.

/// An owned field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    ApiVersion,
    Kind,
    Name,
    Namespace,
    Labels,
    Annotations,
    OwnerReferences,
    Selector,
    Replicas,
    PodLabels,
    PodAnnotations,
    ServiceAccountName,
    AntiAffinity,
    ReadinessGates,
    InitContainers,
    Containers,
    /// The last variant.
    Volumes,
}

/// How drift compares an owned field, beyond "every desired value is in the observed one".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    /// As any field: the desired value must be present and equal in the observed one.
    Subset,
    /// A map: as any field, and the keys named are compared in both directions (a key only
    /// the observed map has is drift too).
    ExactKeys(ExactKeys),
    /// Equal, with no extra keys on either side; empty equals absent. Left out of the walk
    /// of the other fields.
    Exact,
    /// A list the desired object does not set (or sets empty) must be absent or empty in
    /// the observed one too: its elements are drift.
    Authoritative,
    /// Compared exactly when enforced ([`crate::drift::Enforcement::replicas`]; an absent
    /// value means the server's default 1), not at all otherwise (an autoscaler owns it).
    /// Left out of the walk of the other fields.
    WhenEnforced,
    /// A container list: the requests and limits of the containers whose resources are
    /// enforced are compared exactly (the same names, equal quantities).
    EnforcedResources,
}

/// How render writes an owned field (the rules of the `render` module docs), on the value
/// of the template (create) or of the observed Deployment (update).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// This string.
    Fixed(&'static str),
    /// The LB Deployment name (`deploymentPrefix` + the Gateway name).
    DeploymentName,
    /// The Gateway's namespace.
    GatewayNamespace,
    /// The template's (on update), then the Gateway infrastructure's, then the controller
    /// labels.
    Labels,
    /// The template's (on update), then the Gateway infrastructure's, then the
    /// GatewayConfiguration generation and uid annotations.
    Annotations,
    /// The Gateway as the controller owner.
    ControllerReference,
    /// `matchLabels: {app: NAME}`.
    Selector,
    /// The configured count, when created or enforced.
    Replicas,
    /// As [`Rule::Labels`], with the pod cache label.
    PodLabels,
    /// As [`Rule::Annotations`] for the pod, with the networks annotation.
    PodAnnotations,
    /// The configured service account.
    ServiceAccount,
    /// The required anti-affinity terms, with the Deployment name as `app`.
    AntiAffinity,
    /// One readiness gate per IP family of the internal subnets.
    ReadinessGates,
    /// A list of the pod spec taken from the template, rendered apart (`render_lists`).
    TemplateList,
}

/// Map keys compared in both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExactKeys {
    /// The generation and uid annotations (their keys depend on the condition domain:
    /// [`crate::drift::Enforcement::identity_annotations`]).
    Identity,
    /// The networks annotation.
    Networks,
}

/// The pod spec of a Deployment.
pub(crate) const POD_SPEC: [&str; 3] = ["spec", "template", "spec"];

/// The required pod anti-affinity terms, under the pod spec's `affinity`.
pub(crate) const ANTI_AFFINITY_TERMS: [&str; 2] = [
    "podAntiAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
];

impl Field {
    /// Every owned field, in declaration order.
    pub(crate) const ALL: [Field; 17] = [
        Field::ApiVersion,
        Field::Kind,
        Field::Name,
        Field::Namespace,
        Field::Labels,
        Field::Annotations,
        Field::OwnerReferences,
        Field::Selector,
        Field::Replicas,
        Field::PodLabels,
        Field::PodAnnotations,
        Field::ServiceAccountName,
        Field::AntiAffinity,
        Field::ReadinessGates,
        Field::InitContainers,
        Field::Containers,
        Field::Volumes,
    ];

    /// The lists of the pod spec a render takes from the template.
    pub(crate) const TEMPLATE_LISTS: [Field; 3] =
        [Field::InitContainers, Field::Containers, Field::Volumes];

    /// Where it is: object keys from the Deployment's root.
    pub(crate) const fn path(self) -> &'static [&'static str] {
        match self {
            Field::ApiVersion => &["apiVersion"],
            Field::Kind => &["kind"],
            Field::Name => &["metadata", "name"],
            Field::Namespace => &["metadata", "namespace"],
            Field::Labels => &["metadata", "labels"],
            Field::Annotations => &["metadata", "annotations"],
            Field::OwnerReferences => &["metadata", "ownerReferences"],
            Field::Selector => &["spec", "selector"],
            Field::Replicas => &["spec", "replicas"],
            Field::PodLabels => &["spec", "template", "metadata", "labels"],
            Field::PodAnnotations => &["spec", "template", "metadata", "annotations"],
            Field::ServiceAccountName => &["spec", "template", "spec", "serviceAccountName"],
            Field::AntiAffinity => &[
                "spec",
                "template",
                "spec",
                "affinity",
                ANTI_AFFINITY_TERMS[0],
                ANTI_AFFINITY_TERMS[1],
            ],
            Field::ReadinessGates => &["spec", "template", "spec", "readinessGates"],
            Field::InitContainers => &["spec", "template", "spec", "initContainers"],
            Field::Containers => &["spec", "template", "spec", "containers"],
            Field::Volumes => &["spec", "template", "spec", "volumes"],
        }
    }

    /// How drift compares it.
    pub(crate) const fn compare(self) -> Compare {
        match self {
            Field::Annotations => Compare::ExactKeys(ExactKeys::Identity),
            Field::PodAnnotations => Compare::ExactKeys(ExactKeys::Networks),
            Field::Selector => Compare::Exact,
            Field::Replicas => Compare::WhenEnforced,
            Field::ReadinessGates => Compare::Authoritative,
            Field::Containers => Compare::EnforcedResources,
            Field::ApiVersion
            | Field::Kind
            | Field::Name
            | Field::Namespace
            | Field::Labels
            | Field::OwnerReferences
            | Field::PodLabels
            | Field::ServiceAccountName
            | Field::AntiAffinity
            | Field::InitContainers
            | Field::Volumes => Compare::Subset,
        }
    }

    /// How render writes it.
    pub(crate) const fn rule(self) -> Rule {
        match self {
            Field::ApiVersion => Rule::Fixed("apps/v1"),
            Field::Kind => Rule::Fixed("Deployment"),
            Field::Name => Rule::DeploymentName,
            Field::Namespace => Rule::GatewayNamespace,
            Field::Labels => Rule::Labels,
            Field::Annotations => Rule::Annotations,
            Field::OwnerReferences => Rule::ControllerReference,
            Field::Selector => Rule::Selector,
            Field::Replicas => Rule::Replicas,
            Field::PodLabels => Rule::PodLabels,
            Field::PodAnnotations => Rule::PodAnnotations,
            Field::ServiceAccountName => Rule::ServiceAccount,
            Field::AntiAffinity => Rule::AntiAffinity,
            Field::ReadinessGates => Rule::ReadinessGates,
            Field::InitContainers | Field::Containers | Field::Volumes => Rule::TemplateList,
        }
    }

    /// Whether it is a list of the pod spec a render takes from the template.
    pub(crate) const fn is_template_list(self) -> bool {
        matches!(self.rule(), Rule::TemplateList)
    }

    /// Its key in the pod spec, for a field directly in it.
    pub(crate) fn pod_key(self) -> Option<&'static str> {
        match self.path() {
            [a, b, c, key] if [*a, *b, *c] == POD_SPEC => Some(key),
            _ => None,
        }
    }
}

// `Field::ALL` lists every variant at its own index, so a field indexes an array of
// `Field::ALL.len()` in bounds.
const _: () = {
    let mut i = 0;
    while i < Field::ALL.len() {
        assert!(Field::ALL[i] as usize == i);
        i += 1;
    }
    assert!(Field::Volumes as usize + 1 == Field::ALL.len());
};

impl Compare {
    /// Whether drift compares the field apart, leaving it out of the walk of the others.
    pub(crate) const fn is_apart(self) -> bool {
        matches!(self, Compare::Exact | Compare::WhenEnforced)
    }
}

/// Whether the pod-spec field `key` is one the rules compute, so that the template's value
/// of it is not put in place whole.
pub(crate) fn is_rule_pod_field(key: &str) -> bool {
    Field::ALL.iter().any(|f| f.pod_key() == Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_pod_fields_are_the_owned_ones_in_the_pod_spec() {
        for key in [
            "initContainers",
            "containers",
            "volumes",
            "serviceAccountName",
            "readinessGates",
        ] {
            assert!(is_rule_pod_field(key), "{key}");
        }
        // The anti-affinity terms are below `affinity`, which the template may set whole.
        for key in ["affinity", "tolerations", "nodeSelector"] {
            assert!(!is_rule_pod_field(key), "{key}");
        }
    }

    #[test]
    fn paths_are_distinct_and_the_template_lists_are_in_the_pod_spec() {
        for (i, a) in Field::ALL.iter().enumerate() {
            for b in Field::ALL.iter().skip(i + 1) {
                assert_ne!(a.path(), b.path());
            }
            assert_eq!(
                a.is_template_list(),
                Field::TEMPLATE_LISTS.contains(a),
                "{a:?}"
            );
        }
        for list in Field::TEMPLATE_LISTS {
            assert!(list.pod_key().is_some(), "{list:?}");
        }
    }
}
