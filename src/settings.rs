//! Controller settings, with the Meridio-2 defaults.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How the controller is configured. Every field has the Meridio-2 default, so `{}` is a
/// valid settings document.
///
/// ```
/// let s: gateway_reconcile::Settings =
///     serde_json::from_str(r#"{"degradedAfter": "2m"}"#).unwrap();
/// assert_eq!(s.degraded_after, std::time::Duration::from_secs(120));
/// assert_eq!(s.controller_name, "meridio-2.nordix.org/gateway-controller");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    /// The GatewayClass `spec.controllerName` that marks a Gateway as ours.
    pub controller_name: String,
    /// The only accepted `parametersRef.group`.
    pub parameters_group: String,
    /// The only accepted `parametersRef.kind`.
    pub parameters_kind: String,
    /// The LB Deployment is named `deploymentPrefix + gateway name`.
    pub deployment_prefix: String,
    /// The LB Pods' `serviceAccountName`.
    pub service_account: String,
    /// The prefix of the custom condition types and of the generation annotation.
    pub condition_domain: String,
    /// A label put on the LB pod template so that a pod cache can select the LB Pods.
    pub pod_cache_label: Option<Label>,
    /// How long ConfigurationApplied may stay False on transient errors before Degraded.
    #[serde(with = "duration")]
    pub degraded_after: Duration,
    /// Whether the Programmed message names the GatewayConfiguration generation. Off gives
    /// exactly `LB Deployment reconciled`, for tooling that matches the old literal.
    pub generation_in_programmed_message: bool,
    /// Requeue a healthy Gateway after this long (none: rely on watches).
    #[serde(with = "optional_duration")]
    pub resync: Option<Duration>,
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
mod tests {
    use super::*;

    #[test]
    fn empty_document_gives_the_meridio_defaults() {
        let s: Settings = serde_json::from_str("{}").unwrap();
        assert_eq!(s, Settings::default());
        assert_eq!(s.deployment_prefix, "sllbr-");
        assert_eq!(s.service_account, "stateless-load-balancer");
        assert_eq!(s.parameters_kind, "GatewayConfiguration");
        assert_eq!(s.degraded_after, Duration::from_secs(300));
        assert!(s.generation_in_programmed_message);
        assert_eq!(s.resync, None);
        assert_eq!(s.pod_cache_label, None);
    }

    #[test]
    fn every_field_reads_from_camel_case() {
        let s: Settings = serde_json::from_str(
            r#"{"controllerName":"c","parametersGroup":"g","parametersKind":"K",
                "deploymentPrefix":"p-","serviceAccount":"sa","conditionDomain":"d.io",
                "podCacheLabel":{"key":"k","value":"v"},"degradedAfter":"90s",
                "generationInProgrammedMessage":false,"resync":"1h"}"#,
        )
        .unwrap();
        assert_eq!(s.controller_name, "c");
        assert_eq!(s.parameters_group, "g");
        assert_eq!(s.deployment_prefix, "p-");
        assert_eq!(s.condition_domain, "d.io");
        assert_eq!(
            s.pod_cache_label,
            Some(Label {
                key: "k".into(),
                value: "v".into()
            })
        );
        assert_eq!(s.degraded_after, Duration::from_secs(90));
        assert!(!s.generation_in_programmed_message);
        assert_eq!(s.resync, Some(Duration::from_secs(3600)));
    }

    #[test]
    fn settings_round_trip_through_json() {
        let s = Settings {
            resync: Some(Duration::from_millis(1500)),
            ..Settings::default()
        };
        let back: Settings = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn unknown_keys_and_bad_durations_are_errors() {
        let e = serde_json::from_str::<Settings>(r#"{"degradedAftr":"1m"}"#).unwrap_err();
        assert!(e.to_string().contains("degradedAftr"), "{e}");
        let e = serde_json::from_str::<Settings>(r#"{"degradedAfter":"soon"}"#).unwrap_err();
        assert!(e.to_string().contains("invalid duration \"soon\""), "{e}");
    }

    #[test]
    fn durations_parse_like_the_scenario_files_write_them() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("").is_err());
        assert_eq!(
            parse_duration(&format_duration(Duration::from_secs(5400))),
            Ok(Duration::from_secs(5400))
        );
    }
}
