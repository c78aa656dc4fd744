//! Unit tests of `settings`.

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
        r#"{"controllerName":"c.io/x","parametersGroup":"g","parametersKind":"K",
            "deploymentPrefix":"p-","serviceAccount":"sa","conditionDomain":"d.io",
            "podCacheLabel":{"key":"k","value":"v"},"degradedAfter":"90s",
            "generationInProgrammedMessage":false,"resync":"1h"}"#,
    )
    .unwrap();
    assert_eq!(s.controller_name, "c.io/x");
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

/// One invalid value per field, with the exact error, through `validate` and through
/// deserialization.
#[test]
fn every_field_is_validated_with_an_exact_error() {
    let cases: &[(&str, serde_json::Value, &str)] = &[
        (
            "controllerName",
            serde_json::json!("gateway-controller"),
            "settings: controllerName: \"gateway-controller\" is not a domain-prefixed path (a DNS subdomain, '/', then a path; at most 253 characters)",
        ),
        (
            "controllerName",
            serde_json::json!("Example.com/x"),
            "settings: controllerName: \"Example.com/x\" is not a domain-prefixed path (a DNS subdomain, '/', then a path; at most 253 characters)",
        ),
        (
            "parametersGroup",
            serde_json::json!("meridio_2"),
            "settings: parametersGroup: \"meridio_2\" is not a DNS subdomain (lowercase, at most 253 characters)",
        ),
        (
            "parametersKind",
            serde_json::json!("Gateway Configuration"),
            "settings: parametersKind: \"Gateway Configuration\" is not a kind (a letter, then letters, digits or '-', at most 63 characters)",
        ),
        (
            "deploymentPrefix",
            serde_json::json!("-lb"),
            "settings: deploymentPrefix: \"-lb\" is not a DNS-label prefix (lowercase letters, digits and '-', starting with a letter or digit, at most 53 characters)",
        ),
        (
            "deploymentPrefix",
            serde_json::json!("lb."),
            "settings: deploymentPrefix: \"lb.\" is not a DNS-label prefix (lowercase letters, digits and '-', starting with a letter or digit, at most 53 characters)",
        ),
        (
            "serviceAccount",
            serde_json::json!(""),
            "settings: serviceAccount: \"\" is not a DNS subdomain (lowercase, at most 253 characters)",
        ),
        (
            "conditionDomain",
            serde_json::json!("example.com."),
            "settings: conditionDomain: \"example.com.\" is not a DNS subdomain (lowercase, at most 253 characters)",
        ),
        (
            "podCacheLabel",
            serde_json::json!({"key": "a/b/c", "value": "v"}),
            "settings: podCacheLabel.key: \"a/b/c\" is not a label key (an optional DNS subdomain and '/', then a name of at most 63 characters)",
        ),
        (
            "podCacheLabel",
            serde_json::json!({"key": "cache", "value": "-v"}),
            "settings: podCacheLabel.value: \"-v\" is not a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)",
        ),
        (
            "degradedAfter",
            serde_json::json!("8761h"),
            "settings: degradedAfter: must be at most 8760h (got 8761h)",
        ),
        (
            "resync",
            serde_json::json!("0s"),
            "settings: resync: must be at least 1s and at most 8760h (got 0s)",
        ),
        (
            "resync",
            serde_json::json!("999ms"),
            "settings: resync: must be at least 1s and at most 8760h (got 999ms)",
        ),
    ];
    for (field, value, want) in cases {
        let doc = serde_json::json!({ *field: value });
        let e = serde_json::from_value::<Settings>(doc.clone()).unwrap_err();
        assert_eq!(e.to_string(), *want, "{doc}");
        // The same through a Settings built in code.
        let mut raw = serde_json::to_value(Settings::default()).unwrap();
        raw[*field] = value.clone();
        let s = serde_json::from_value::<Unchecked>(raw)
            .unwrap()
            .into_settings();
        assert_eq!(s.validate().unwrap_err().to_string(), *want, "{doc}");
    }
}

#[test]
fn valid_edge_values_are_accepted() {
    for doc in [
        serde_json::json!({"deploymentPrefix": ""}),
        serde_json::json!({"deploymentPrefix": "a".repeat(53)}),
        serde_json::json!({"degradedAfter": "0s"}),
        serde_json::json!({"degradedAfter": "8760h", "resync": "8760h"}),
        serde_json::json!({"resync": "1s"}),
        serde_json::json!({"podCacheLabel": {"key": "example.com/cache", "value": ""}}),
        serde_json::json!({"controllerName": "example.com/a/b~c"}),
    ] {
        let s: Result<Settings, _> = serde_json::from_value(doc.clone());
        assert!(s.is_ok(), "{doc}: {s:?}");
    }
    let e =
        serde_json::from_value::<Settings>(serde_json::json!({"deploymentPrefix": "a".repeat(54)}))
            .unwrap_err();
    assert!(
        e.to_string().starts_with("settings: deploymentPrefix:"),
        "{e}"
    );
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

/// The definition [`is_dns_subdomain`] implements in one pass: labels split at '.'.
fn is_dns_subdomain_by_labels(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// RFC 1123 label: lowercase letters, digits and `-`, alphanumeric at both ends, ≤ 63.
fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            b.len() <= 63
                && (f.is_ascii_lowercase() || f.is_ascii_digit())
                && (l.is_ascii_lowercase() || l.is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        }
        _ => false,
    }
}

#[test]
fn dns_subdomain_table() {
    for (s, want) in [
        ("meridio-2.nordix.org", true),
        ("a", true),
        ("0-a.b9", true),
        ("", false),
        (".a", false),
        ("a.", false),
        ("a..b", false),
        ("-a", false),
        ("a-", false),
        ("a-.b", false),
        ("a.-b", false),
        ("A.b", false),
        ("a_b", false),
    ] {
        assert_eq!(is_dns_subdomain(s), want, "{s:?}");
    }
    let label = "a".repeat(63);
    assert!(is_dns_subdomain(&label));
    assert!(!is_dns_subdomain(&format!("{label}a")));
    let long = [label.as_str(); 4].join(".");
    assert_eq!(long.len(), 255);
    assert!(!is_dns_subdomain(&long));
    assert!(is_dns_subdomain(&long[..253]));
}

proptest::proptest! {
    #[test]
    fn dns_subdomain_agrees_with_the_label_definition(s in "[a-z0-9.\\-A_]{0,70}|([a-z0-9-]{0,64}\\.){0,5}[a-z0-9-]{0,64}") {
        proptest::prop_assert_eq!(is_dns_subdomain(&s), is_dns_subdomain_by_labels(&s));
    }

    #[test]
    fn dns_label_prefix_is_a_label_once_a_character_follows(s in "[a-z0-9\\-A.]{0,64}") {
        proptest::prop_assert_eq!(
            is_dns_label_prefix(&s),
            s.len() <= 53 && (s.is_empty() || is_dns_label(&format!("{s}x")))
        );
    }
}
