//! Controller settings, with the Meridio-2 defaults.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::InputError;

/// The smallest `resync`: a shorter one would make a hot loop of a healthy Gateway.
pub(crate) const MIN_RESYNC: Duration = Duration::from_secs(1);
/// The largest `resync` and `degradedAfter`: one year. Longer is the same as never in a
/// controller's life, and a caller that adds it to its clock (`Instant + Duration`) must not
/// overflow.
pub(crate) const MAX_PERIOD: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// How the controller is configured. Every field has the Meridio-2 default (each field says
/// which), so `{}` is a valid settings document, and a document names its fields in
/// camelCase, durations as [`parse_duration`] reads them. Settings are validated
/// ([`Settings::validate`]) when they are deserialized and again by
/// [`plan`](crate::plan), so settings built in code are checked too.
///
/// The defaults, as a settings document:
///
/// ```
/// use gateway_reconcile::Settings;
/// assert_eq!(
///     serde_json::to_value(Settings::default()).unwrap(),
///     serde_json::json!({
///         "controllerName": "meridio-2.nordix.org/gateway-controller",
///         "parametersGroup": "meridio-2.nordix.org",
///         "parametersKind": "GatewayConfiguration",
///         "deploymentPrefix": "sllbr-",
///         "serviceAccount": "stateless-load-balancer",
///         "conditionDomain": "meridio-2.nordix.org",
///         "podCacheLabel": null,
///         "degradedAfter": "5m",
///         "generationInProgrammedMessage": true,
///         "resync": null,
///         "supportedFeatures": ["Gateway", "GatewayInfrastructurePropagation"]
///     })
/// );
/// assert_eq!(serde_json::from_str::<Settings>("{}").unwrap(), Settings::default());
/// ```
///
/// ```
/// let s: gateway_reconcile::Settings =
///     serde_json::from_str(r#"{"degradedAfter": "2m"}"#).unwrap();
/// assert_eq!(s.degraded_after, std::time::Duration::from_secs(120));
/// assert_eq!(s.controller_name, "meridio-2.nordix.org/gateway-controller");
/// let e = serde_json::from_str::<gateway_reconcile::Settings>(r#"{"resync": "0s"}"#);
/// assert!(e.unwrap_err().to_string().starts_with("settings: resync: must be at least 1s"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Unchecked")]
pub struct Settings {
    /// The GatewayClass `spec.controllerName` that marks a Gateway as ours; also the end of
    /// the `Accepted` message (`Gateway accepted by NAME`). A domain-prefixed path (a DNS
    /// subdomain, `/`, then a path; at most 253 characters). Default
    /// `meridio-2.nordix.org/gateway-controller`.
    pub controller_name: String,
    /// The only accepted `parametersRef.group`: a DNS subdomain. Default
    /// `meridio-2.nordix.org`.
    pub parameters_group: String,
    /// The only accepted `parametersRef.kind`: a Gateway API `Kind` (a letter, then
    /// letters, digits or `-`; at most 63 characters). Default `GatewayConfiguration`.
    pub parameters_kind: String,
    /// The LB Deployment is named `deploymentPrefix + gateway name`, shortened with a hash
    /// past 63 characters ([`lookup::deployment_name`](crate::lookup::deployment_name)):
    /// the start of a DNS label (lower-case letters, digits and `-`, not starting with
    /// `-`), at most 53 characters, possibly empty. Default `sllbr-`.
    pub deployment_prefix: String,
    /// The LB Pods' `serviceAccountName`: a DNS subdomain. Default
    /// `stateless-load-balancer`.
    pub service_account: String,
    /// The prefix of the custom condition types (`D/ConfigurationApplied`, `D/Degraded`)
    /// and of the Deployment's generation and uid annotations
    /// (`D/gatewayconfiguration-generation`, `D/gatewayconfiguration-uid`): a DNS
    /// subdomain. Default `meridio-2.nordix.org`.
    pub condition_domain: String,
    /// A label put on the LB pod template so that a pod cache can select the LB Pods: a
    /// valid label key and value. Default none (no label).
    pub pod_cache_label: Option<Label>,
    /// How long ConfigurationApplied may stay False on transient errors before Degraded;
    /// from 0 (at once) to one year (`8760h`). Default 5 minutes (`5m`).
    #[serde(with = "duration")]
    pub degraded_after: Duration,
    /// Whether the Programmed message names the GatewayConfiguration generation. Off gives
    /// exactly `LB Deployment reconciled`, for tooling that matches the old literal.
    /// Default true.
    pub generation_in_programmed_message: bool,
    /// Look again at an accepted or invalid Gateway after this long instead of waiting for
    /// the next event (none: rely on watches); from 1 s to one year (`8760h`). It also
    /// caps the backoff after a rejected write. Default none.
    #[serde(with = "optional_duration")]
    pub resync: Option<Duration>,
    /// The Gateway API features the GatewayClass publishes in `status.supportedFeatures`
    /// (GEP-2162), named as the Gateway API release the project pins spells them (v1.5.1:
    /// a newer conformance suite may rename one). Non-empty names, each once, at most 64
    /// (the GatewayClass CRD's `maxItems`); written sorted by name. Default `Gateway` and
    /// `GatewayInfrastructurePropagation`.
    pub supported_features: Vec<String>,
}

/// The GatewayClass CRD's `maxItems` of `status.supportedFeatures`.
pub const MAX_SUPPORTED_FEATURES: usize = 64;

/// [`Settings`] as read, before validation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Unchecked {
    controller_name: String,
    parameters_group: String,
    parameters_kind: String,
    deployment_prefix: String,
    service_account: String,
    condition_domain: String,
    pod_cache_label: Option<Label>,
    #[serde(with = "duration")]
    degraded_after: Duration,
    generation_in_programmed_message: bool,
    #[serde(with = "optional_duration")]
    resync: Option<Duration>,
    supported_features: Vec<String>,
}

impl Default for Unchecked {
    fn default() -> Self {
        let d = Settings::default();
        Unchecked {
            controller_name: d.controller_name,
            parameters_group: d.parameters_group,
            parameters_kind: d.parameters_kind,
            deployment_prefix: d.deployment_prefix,
            service_account: d.service_account,
            condition_domain: d.condition_domain,
            pod_cache_label: d.pod_cache_label,
            degraded_after: d.degraded_after,
            generation_in_programmed_message: d.generation_in_programmed_message,
            resync: d.resync,
            supported_features: d.supported_features,
        }
    }
}

impl Unchecked {
    fn into_settings(self) -> Settings {
        Settings {
            controller_name: self.controller_name,
            parameters_group: self.parameters_group,
            parameters_kind: self.parameters_kind,
            deployment_prefix: self.deployment_prefix,
            service_account: self.service_account,
            condition_domain: self.condition_domain,
            pod_cache_label: self.pod_cache_label,
            degraded_after: self.degraded_after,
            generation_in_programmed_message: self.generation_in_programmed_message,
            resync: self.resync,
            supported_features: self.supported_features,
        }
    }
}

impl TryFrom<Unchecked> for Settings {
    type Error = InputError;

    fn try_from(unchecked: Unchecked) -> Result<Self, InputError> {
        let settings = unchecked.into_settings();
        settings.validate()?;
        Ok(settings)
    }
}

impl Settings {
    /// Checks every field against its bounds (see each field): the first invalid one, in declaration order, is the
    /// error, naming the field (camelCase) and saying what is wrong.
    ///
    /// ```
    /// let mut s = gateway_reconcile::Settings::default();
    /// assert_eq!(s.validate(), Ok(()));
    /// s.service_account = "Not_A_Name".into();
    /// assert_eq!(
    ///     s.validate().unwrap_err().to_string(),
    ///     "settings: serviceAccount: \"Not_A_Name\" is not a DNS subdomain (lowercase, at most 253 characters)"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), InputError> {
        let invalid =
            |field: &'static str, why: String| Err(InputError::InvalidSetting { field, why });
        if !is_controller_name(&self.controller_name) {
            return invalid(
                "controllerName",
                format!(
                    "{:?} is not a domain-prefixed path (a DNS subdomain, '/', then a path; at most 253 characters)",
                    self.controller_name
                ),
            );
        }
        for (field, value) in [
            ("parametersGroup", &self.parameters_group),
            ("serviceAccount", &self.service_account),
            ("conditionDomain", &self.condition_domain),
        ] {
            if !is_dns_subdomain(value) {
                return invalid(field, not_a_subdomain(value));
            }
        }
        if !is_kind(&self.parameters_kind) {
            return invalid(
                "parametersKind",
                format!(
                    "{:?} is not a kind (a letter, then letters, digits or '-', at most 63 characters)",
                    self.parameters_kind
                ),
            );
        }
        if !is_dns_label_prefix(&self.deployment_prefix) {
            return invalid(
                "deploymentPrefix",
                format!(
                    "{:?} is not a DNS-label prefix (lowercase letters, digits and '-', starting with a letter or digit, at most 53 characters)",
                    self.deployment_prefix
                ),
            );
        }
        if let Some(label) = &self.pod_cache_label {
            if !is_label_key(&label.key) {
                return invalid(
                    "podCacheLabel.key",
                    format!(
                        "{:?} is not a label key (an optional DNS subdomain and '/', then a name of at most 63 characters)",
                        label.key
                    ),
                );
            }
            if !is_label_value(&label.value) {
                return invalid(
                    "podCacheLabel.value",
                    format!(
                        "{:?} is not a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)",
                        label.value
                    ),
                );
            }
        }
        if self.degraded_after > MAX_PERIOD {
            return invalid(
                "degradedAfter",
                format!(
                    "must be at most {} (got {})",
                    format_duration(MAX_PERIOD),
                    format_duration(self.degraded_after)
                ),
            );
        }
        if let Some(resync) = self.resync
            && !(MIN_RESYNC..=MAX_PERIOD).contains(&resync)
        {
            return invalid(
                "resync",
                format!(
                    "must be at least {} and at most {} (got {})",
                    format_duration(MIN_RESYNC),
                    format_duration(MAX_PERIOD),
                    format_duration(resync)
                ),
            );
        }
        if self.supported_features.len() > MAX_SUPPORTED_FEATURES {
            return invalid(
                "supportedFeatures",
                format!(
                    "must have at most {MAX_SUPPORTED_FEATURES} names (got {})",
                    self.supported_features.len()
                ),
            );
        }
        for (i, name) in self.supported_features.iter().enumerate() {
            if name.is_empty() {
                return invalid("supportedFeatures", format!("name {i} is empty"));
            }
            if self.supported_features[..i].contains(name) {
                return invalid(
                    "supportedFeatures",
                    format!("{:?} is named twice", cut(name)),
                );
            }
        }
        Ok(())
    }
}

/// A name as an error message quotes it: at most 64 characters.
fn cut(name: &str) -> &str {
    name.char_indices()
        .nth(64)
        .map_or(name, |(at, _)| &name[..at])
}

pub(crate) fn not_a_subdomain(value: &str) -> String {
    format!("{value:?} is not a DNS subdomain (lowercase, at most 253 characters)")
}

/// Gateway API's `GatewayController`: a DNS subdomain, `/`, and a path.
fn is_controller_name(s: &str) -> bool {
    let Some((domain, path)) = s.split_once('/') else {
        return false;
    };
    s.len() <= 253
        && is_dns_subdomain(domain)
        && !path.is_empty()
        && path
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&c))
}

/// RFC 1123 subdomain, as Kubernetes checks object names.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    // One pass over the bytes (every reconcile checks the settings' domains): a label is
    // alphanumeric at both ends, so a '.' or '-' must follow an alphanumeric byte and a
    // '.' or the end must not follow a '-'.
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 253 {
        return false;
    }
    let mut label = 0usize;
    let mut prev = b'.';
    for &c in b {
        match c {
            b'.' if label == 0 || prev == b'-' => return false,
            b'.' => label = 0,
            b'-' if label == 0 => return false,
            b'a'..=b'z' | b'0'..=b'9' | b'-' => {
                label += 1;
                if label > 63 {
                    return false;
                }
            }
            _ => return false,
        }
        prev = c;
    }
    label > 0 && prev != b'-'
}

/// The most characters of `deploymentPrefix`: a shortened LB Deployment name (63
/// characters, the last 9 a `-` and a hash) keeps at least one character of the Gateway
/// name.
pub(crate) const MAX_DEPLOYMENT_PREFIX: usize = 53;

/// The start of a DNS label: empty, or alphanumeric first, then letters, digits and `-`,
/// at most [`MAX_DEPLOYMENT_PREFIX`] characters.
fn is_dns_label_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() <= MAX_DEPLOYMENT_PREFIX
        && b.first()
            .is_none_or(|f| f.is_ascii_lowercase() || f.is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Gateway API's `Kind`: `^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`, ≤ 63.
fn is_kind(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            b.len() <= 63
                && f.is_ascii_alphabetic()
                && l.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        }
        _ => false,
    }
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a qualified name.
fn is_label_key(s: &str) -> bool {
    crate::names::key_error(s).is_none()
}

/// A label value: empty, or ≤ 63 characters of letters, digits, `-`, `_`, `.`,
/// alphanumeric at both ends.
fn is_label_value(s: &str) -> bool {
    crate::names::label_value_error(s).is_none()
}

/// A label key and value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// Label key.
    pub key: String,
    /// Label value.
    pub value: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            controller_name: "meridio-2.nordix.org/gateway-controller".into(),
            parameters_group: "meridio-2.nordix.org".into(),
            parameters_kind: "GatewayConfiguration".into(),
            deployment_prefix: "sllbr-".into(),
            service_account: "stateless-load-balancer".into(),
            condition_domain: "meridio-2.nordix.org".into(),
            pod_cache_label: None,
            degraded_after: Duration::from_secs(5 * 60),
            generation_in_programmed_message: true,
            resync: None,
            supported_features: vec!["Gateway".into(), "GatewayInfrastructurePropagation".into()],
        }
    }
}

/// Parses a duration like `500ms`, `90s`, `5m`, `1h30m` (or ISO 8601 `PT5M`).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(gateway_reconcile::parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
/// assert!(gateway_reconcile::parse_duration("-5s").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let signed: jiff::SignedDuration = text
        .trim()
        .parse()
        .map_err(|e| format!("invalid duration {text:?}: {e}"))?;
    Duration::try_from(signed)
        .map_err(|_| format!("invalid duration {text:?}: must not be negative"))
}

/// Formats a duration the way [`parse_duration`] reads it (`5m`, `1h 30m`, `500ms`).
pub fn format_duration(duration: Duration) -> String {
    match jiff::SignedDuration::try_from(duration) {
        Ok(d) => format!("{d:#}"),
        Err(_) => format!("{}s", duration.as_secs()),
    }
}

mod duration {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

mod optional_duration {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => parse_duration(&text)
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests;
