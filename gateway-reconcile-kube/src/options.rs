//! The binary's files: settings and the LB Deployment template, JSON or YAML.

use gateway_reconcile::{InputError, Settings, template, wire};
use serde_json::Value;

/// Why a file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OptionsError {
    /// The file could not be parsed.
    #[error("{file}: {why}")]
    Parse {
        /// Which file.
        file: String,
        /// What was wrong.
        why: String,
    },
    /// The core refused the content (an invalid setting, an unusable template).
    #[error("{file}: {source}")]
    Invalid {
        /// Which file.
        file: String,
        /// The core's error, naming the field.
        source: InputError,
    },
}

/// YAML (a superset of JSON) as a JSON value.
fn parse(file: &str, text: &str) -> Result<Value, OptionsError> {
    serde_yaml_ng::from_str::<Value>(text).map_err(|e| OptionsError::Parse {
        file: file.to_owned(),
        why: e.to_string(),
    })
}

/// Settings from the text of `file` (JSON or YAML, the core's camelCase keys, every one
/// optional); validated.
pub fn settings(file: &str, text: &str) -> Result<Settings, OptionsError> {
    let value = parse(file, text)?;
    // The core's Settings validate themselves when deserialized.
    serde_json::from_value(value).map_err(|e| OptionsError::Parse {
        file: file.to_owned(),
        why: e.to_string(),
    })
}

/// The LB Deployment template from the text of `file` (JSON or YAML).
pub fn template(file: &str, text: &str) -> Result<wire::Deployment, OptionsError> {
    let value = parse(file, text)?;
    template::template_from_json(&value.to_string()).map_err(|source| OptionsError::Invalid {
        file: file.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_yaml_and_refuse_bad_values() {
        let s = settings("s.yaml", "resync: 30s\ndeploymentPrefix: lb-\n").expect("valid");
        assert_eq!(s.resync, Some(std::time::Duration::from_secs(30)));
        assert_eq!(s.deployment_prefix, "lb-");
        let e = settings("s.yaml", "resync: 10ms\n").expect_err("below 1 s");
        assert!(e.to_string().starts_with("s.yaml: "), "{e}");
        assert!(e.to_string().contains("resync"), "{e}");
        assert!(settings("s.yaml", "bogus: 1\n").is_err());
    }

    #[test]
    fn template_reads_json_and_yaml_alike() {
        let json = template("t.json", r#"{"kind":"Deployment","spec":{}}"#).expect("json");
        let yaml = template("t.yaml", "kind: Deployment\nspec: {}\n").expect("yaml");
        assert_eq!(json, yaml);
        assert!(template("t.yaml", "- a\n").is_err());
    }
}
